/* SPDX-License-Identifier: Apache-2.0 */
/* The convolution fast path for channels-last layouts (conv.c chooses it at
 * compile time): lhs [batch][spatial...][feature], kernel
 * [spatial...][in-feature][out-feature], result [batch][spatial...][feature],
 * spatial dimensions in order, one group, no lhs dilation, no window
 * reversal, and lhs, kernel and result all of one OpenBLAS element type
 * (f32, f64, complex64, complex128).
 *
 * Then the kernel tensor already is the [window x in-feature][out-feature]
 * row-major matrix and the result the [batch x positions][out-feature] one,
 * so the only work besides the GEMM is the im2col rows: per window position
 * one contiguous run of in-features (or zeros on padding).  Where the f32
 * GEMM by panels (gemm_panels.h) takes the blocks, those runs are not
 * copied: the GEMM reads them through a pointer per window position.  A
 * 1x1 window with stride 1 and no padding multiplies the lhs itself.
 *
 * Setting the environment variable SHLO_CONV_GENERAL (any value) when a
 * program is compiled makes its convolutions take the general path, so
 * tests can compare the two. */
#ifndef SHLO_CONV_NHWC_H
#define SHLO_CONV_NHWC_H

#include <stdbool.h>
#include <stdint.h>

#include "kernels/gemm_panels.h"
#include "kernels/linalg_int.h"

#define SHLO_CONV_NHWC_MAX_SP (SHLO_MAX_RANK - 2)

typedef struct shlo__conv_nhwc {
  shlo__la_dom dom; /* LA_F32, LA_F64, LA_C64 or LA_C128 */
  int ns;           /* spatial dimensions */
  int64_t n, ci, co; /* batch, in-features, out-features */
  int64_t in_sp[SHLO_CONV_NHWC_MAX_SP], k_sp[SHLO_CONV_NHWC_MAX_SP],
      o_sp[SHLO_CONV_NHWC_MAX_SP];
  int64_t stride[SHLO_CONV_NHWC_MAX_SP], rhs_dil[SHLO_CONV_NHWC_MAX_SP];
} shlo__conv_nhwc;

/* Whether shlo__conv_nhwc_run computes g without a GEMM: f32 with a window
 * of few values (window x in-features <= 32, cnn's first layer of 3x3x3)
 * and at most 256 out-features, where OpenBLAS spends more on packing such
 * a thin matrix and on the im2col rows than on the multiply-adds.  Each
 * output position then sums its window's products straight into its
 * out-features, padding included (0 x inf is NaN, as in the GEMM). */
bool shlo__conv_nhwc_small(const shlo__conv_nhwc *g);

/* Told that elements [lo, hi) of out are final. */
typedef void (*shlo__conv_done)(void *ctx, int64_t lo, int64_t hi);

/* out = the convolution of lhs by kernel for padding pad (lo0, hi0, lo1,
 * hi1, ...; any sign), every buffer in g->dom's layout.  Every element of
 * out is written; when done is not NULL, done(ctx, lo, hi) is called for
 * each block of rows of out as soon as it is final, on the thread that
 * wrote it (while it is in that core's cache).  Returns false when out
 * of memory for its scratch (out then holds garbage). */
bool shlo__conv_nhwc_run(const shlo__conv_nhwc *g, const void *lhs,
                         const void *kernel, const int64_t *pad, void *out,
                         shlo__conv_done done, void *ctx);

/* The same, f32 only, with epi (gemm_panels.h) applied to every element
 * of out before its block is final: in the GEMM by panels' registers
 * where it takes the blocks, else over each block while it is in cache.
 * Returns false, having done nothing, for another element type. */
bool shlo__conv_nhwc_run_epi(const shlo__conv_nhwc *g, const void *lhs,
                             const void *kernel, const int64_t *pad, void *out,
                             const shlo__gemm_epi *epi, shlo__conv_done done,
                             void *ctx);

#endif
