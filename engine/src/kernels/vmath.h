/* SPDX-License-Identifier: Apache-2.0 */
/* f32 vector maths: exp, tanh and logistic over arrays, in SIMD.
 *
 * Each function evaluates in f32 (vmath_body.h has the maths), within
 * 2 ulp of the exact value (exp within 1): checked against libm's double
 * functions on every f32 operand.  The result of an element depends on
 * its value only: every ISA variant and the array's tail, which runs
 * through a padded vector, do the same IEEE operations in the same order,
 * so a program gives the same bits on any x86-64 machine, fused or not.
 * NaN operands give the operand quieted, payload kept; exp of large
 * operands is inf and of very negative ones 0 or a denormal rounded once;
 * tanh of +-inf is +-1 and of +-0 is +-0; logistic never overflows
 * (exp(-|x|) inside).
 *
 * The ISA is picked at run time (AVX-512F, AVX2 with FMA, else the
 * portable variant: SSE2 on x86-64); the build needs no -march.  The
 * portable variant emulates each FMA exactly in double, at some 50 ns an
 * element (against 0.2 with AVX-512F): the price of the same bits on CPUs
 * without FMA.  d and x may be the same array. */
#ifndef SHLO_VMATH_H
#define SHLO_VMATH_H

#include <stdbool.h>
#include <stdint.h>

void shlo__vexp_f32(float *d, const float *x, int64_t n);
void shlo__vtanh_f32(float *d, const float *x, int64_t n);
void shlo__vlogistic_f32(float *d, const float *x, int64_t n);

/* Softmax rows (the fused rows kernel of kernels/fuse_softmax.c), rows
 * of cols floats, row-major.
 *
 * shlo__vsoftmax_div_f32 sets d[r][c] = e[r][c] / s[r] (an f32
 * divide), written past the caches when stream (the caller fences,
 * stream_store.h); it may overwrite e.
 *
 * shlo__vsoftmax_exp_f32 sets e[r][c] = exp(y[r][c] - m[r]) (f32
 * subtract, then exp as above) and, when it returns true, adds each row
 * of e to sum[r] in the reduce kernel's schedule (sum_tree.h); when it
 * returns false it left sum as it was and the caller folds e.  m_is_max: m[r] is the maximum of row r of y (NaN where the row
 * holds one), so every y - m is <= 0 or NaN, which spares the
 * exponential two checks (same bits).  next (or NULL): rows of the same
 * shape asked for from memory meanwhile.  dv (or NULL): another block's
 * divide, done as shlo__vsoftmax_div_f32(dv->d, dv->e, dv->s, dv->rows,
 * cols, dv->stream) would, beside these exponentials; its buffers may
 * not overlap e, sum, y or m. */
typedef struct shlo_vsoftmax_div {
  float *d;
  float *e;
  const float *s;
  int64_t rows;
  bool stream;
} shlo_vsoftmax_div;

/* mx (or NULL): the row maxima of another block, rows of cols floats at
 * x, taken beside the exponentials (the loads hidden under their FMAs),
 * no more rows than the exponentials': for each r < rows, hi[r] = the largest element of row r and odd[r] =
 * false where the row holds no NaN and its largest is not zero (then
 * every order of comparisons finds the same bits); odd[r] = true
 * otherwise, and hi[r] means nothing: the caller folds that row itself.
 * Its buffers may not overlap e, sum, y, m or dv's. */
typedef struct shlo_vsoftmax_max {
  const float *x;
  float *hi;
  bool *odd;
  int64_t rows;
} shlo_vsoftmax_max;

bool shlo__vsoftmax_exp_f32(float *e, float *sum, const float *y,
                            const float *m, int64_t rows, int64_t cols,
                            bool m_is_max, const float *next,
                            const shlo_vsoftmax_div *dv,
                            const shlo_vsoftmax_max *mx);
void shlo__vsoftmax_div_f32(float *d, float *e, const float *s, int64_t rows,
                            int64_t cols, bool stream);

/* The ISA the functions above use: "avx512f", "avx2" or "portable", the best
 * this machine has unless shlo__vmath_use_isa chose another.  The f32
 * maximum and minimum row folds (reduce_body.c) and the f32 GEMM by panels
 * (gemm_panels.c, AVX-512F only) follow it too. */
const char *shlo__vmath_isa(void);
/* Use the variant `isa` (one of the names above) from now on, process-wide;
 * false, changing nothing, when this machine cannot run it.  For tests,
 * which check every variant the machine has. */
bool shlo__vmath_use_isa(const char *isa);

#endif
