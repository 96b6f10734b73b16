/* Tensors for kernels that write every element.
 *
 * shlo_tensor_new (public) zeroes the data, which for a large result is a
 * whole extra pass over memory; a kernel that overwrites every element
 * takes its result from here instead.  Only the data is left as it was
 * (the padding past the last element is zeroed): a kernel that may leave
 * an element unwritten must use shlo_tensor_new. */
#ifndef SHLO_TENSOR_UNINIT_H
#define SHLO_TENSOR_UNINIT_H

#include "shlo/tensor.h"

/* shlo_tensor_new without zeroing the elements. */
shlo_value *shlo__tensor_new_uninit(shlo_elem_type elem, int rank,
                                    const int64_t *dims);

#endif
