/* SPDX-License-Identifier: Apache-2.0 */
/* The f32 channels-last convolution of a small window (conv_nhwc.h,
 * shlo__conv_nhwc_small: window x in-features <= SHLO_CONV_SMALL_K), summed
 * without a GEMM: cnn's first layer, 3x3x3 into 32 out-features.
 *
 * Each output position sums its window's products into its out-features,
 * in window order then in-feature order (padding multiplied as a 0 like
 * any value: 0 x inf is NaN, as in the GEMM), several positions at once
 * so that their sums are independent chains of multiply-adds.  Along the
 * innermost spatial dimension, the positions whose windows lie wholly
 * inside the lhs go in groups read at fixed offsets from the group's first
 * value; a whole row that touches the padding goes the same way from a
 * padded copy of the values it reads; the rest (the edges of partial
 * rows, and rows too short for a group) are queued and summed in groups
 * too, through a pointer per window position (to zeros on the padding). */
#ifndef SHLO_CONV_SMALL_H
#define SHLO_CONV_SMALL_H

#include <stdbool.h>
#include <stdint.h>

#include "kernels/conv_nhwc.h"

#define SHLO_CONV_SMALL_K 32    /* most window values (window x in-features) */
#define SHLO_CONV_SMALL_CO 256  /* most out-features */

/* One call's operands and the window's shape, set once per call. */
typedef struct shlo__conv_small {
  const shlo__conv_nhwc *g;
  const float *lhs, *kernel;
  float *out;
  int64_t pad_lo[SHLO_CONV_NHWC_MAX_SP];
  int64_t k, windows; /* window values, window positions */
  /* per window value v: its lhs offset from the window's first value */
  int64_t rel[SHLO_CONV_SMALL_K];
  /* per window position w: its (dilated) index along each dimension */
  int64_t kq[SHLO_CONV_SMALL_K][SHLO_CONV_NHWC_MAX_SP];
  int64_t reach[SHLO_CONV_NHWC_MAX_SP]; /* the window's span - 1 */
  /* the output indices along the innermost dimension whose window lies
   * inside the lhs along it: [x_lo, x_hi) */
  int64_t x_lo, x_hi;
  /* A whole row of positions whose windows touch the padding is summed
   * from a copy of the lhs values it reads, padding written as zeros
   * (the same products in the same order as through pointers to zeros,
   * at the cost of positions inside): pad_span[i] values along each
   * dimension (the window's span; along the innermost, the whole row's),
   * pad_floats in all, 0 where the copy would not fit
   * SHLO_CONV_SMALL_PAD; pad_rel[v]: window value v's offset in it. */
  int64_t pad_span[SHLO_CONV_NHWC_MAX_SP];
  int64_t pad_floats;
  int64_t pad_rel[SHLO_CONV_SMALL_K];
  /* The epilogue taken on the sums in registers before they are stored
   * (the caller's, where it is no more than these): bias (out-feature
   * floats, or NULL) added, then relu, the larger of each and +0 (a NaN
   * kept).  init sets none. */
  const float *bias;
  bool relu;
} shlo__conv_small;

/* Most floats in a row's padded copy, which lives on the stack (8 KiB;
 * ImageNet's rows, 224 wide with 3 in-features, fit). */
#define SHLO_CONV_SMALL_PAD 2048

/* Tests: whether rows touching the padding use the padded copy (true, the
 * default) or the pointers per window position; returns the old value. */
bool shlo__conv_small_use_pad_copy(bool on);

/* s set up for g (shlo__conv_nhwc_small(g) true) on these operands, pad as
 * in shlo__conv_nhwc_run. */
void shlo__conv_small_init(shlo__conv_small *s, const shlo__conv_nhwc *g,
                           const float *lhs, const float *kernel,
                           const int64_t *pad, float *out);

/* Output positions r0 .. r0 + rows - 1 (in the result's order) written. */
void shlo__conv_small_rows(const shlo__conv_small *s, int64_t r0,
                           int64_t rows);

#endif
