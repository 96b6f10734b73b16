/* SPDX-License-Identifier: Apache-2.0 */
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

/* Give v (a tensor of more than 256 bytes whose data nothing has seen
 * yet, from the call above) the buffer data instead of its own: data
 * comes from aligned_alloc, 64-byte aligned and at least v->nbytes
 * rounded up to 64 long, and is v's to free from now on.  For a decoder
 * that filled a buffer before it knew the tensor (the server's base64
 * read as the body arrives).  The padding past the last element is
 * zeroed.  False (nothing changed) for a small tensor. */
bool shlo__tensor_adopt(shlo_value *v, void *data);

#endif
