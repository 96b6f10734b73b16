/* SPDX-License-Identifier: Apache-2.0 */
/* stablehlo.reduce's native walk split across the pool by result
 * elements (reduce_split.c). */
#ifndef SHLO_REDUCE_SPLIT_H
#define SHLO_REDUCE_SPLIT_H

#include <stdint.h>

#include "kernels/reduce_int.h"

/* Fold the dense input src (dims[0..rank)) into dst, which holds the init
 * value in every result element; out_str[d] is input dimension d's stride
 * in the result, 0 where it is reduced.  Every result element gets its
 * inputs in ascending order of the reduced indices, as one thread walking
 * the input row by row would give them.  0 when done; -1 when the
 * execution had to stop (dst partly folded); 1 when the result is one
 * element (nothing to split: the caller walks it). */
int shlo__reduce_split(int rank, const int64_t *dims, const int64_t *out_str,
                       const shlo_rb_native *b, const void *src, void *dst,
                       shlo_exec *ex);

#endif
