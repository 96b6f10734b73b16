/* SPDX-License-Identifier: Apache-2.0 */
/* Views: tensors whose elements are a contiguous part of another's.
 *
 * A dynamic_slice of whole rows (a scan's step reading its slice of the
 * stacked inputs) need not copy them: its result can point into its
 * operand's buffer, keeping the operand alive.  Nothing may write a view's
 * elements, which are its owner's: shlo__exec_take_input never hands one
 * to a kernel to change in place, and a view leaves the engine (a result
 * of an execution, a value put on a feed) only as a copy
 * (shlo__value_settle), since a caller may write what it is given. */
#ifndef SHLO_TENSOR_VIEW_H
#define SHLO_TENSOR_VIEW_H

#include <stdbool.h>
#include <stddef.h>

#include "shlo/tensor.h"

/* Views are made of at least this many bytes: below it a copy is cheap,
 * and a small view would keep a large owner alive for little. */
#define SHLO_VIEW_MIN_BYTES ((size_t)64 << 10)

/* A tensor of elem and dims whose data starts `offset` bytes into `of`'s
 * (a view of a view is one of the first owner), holding a reference to
 * its owner; NULL when one cannot be made: out of memory, a quantized
 * operand, fewer than SHLO_VIEW_MIN_BYTES, a size or start in the owner's
 * buffer that is not a multiple of 64 bytes (kernels count on aligned
 * data and on nothing past the end), or bytes past the owner's. */
shlo_value *shlo__tensor_view(shlo_value *of, size_t offset,
                              shlo_elem_type elem, int rank,
                              const int64_t *dims);

bool shlo__value_is_view(const shlo_value *v);

/* Replace *v, if a view, by a copy of its own (releasing the view), and
 * so every view among a tuple's elements; SHLO_ENOMEM leaves *v as it
 * was. */
shlo_status shlo__value_settle(shlo_value **v);

#endif
