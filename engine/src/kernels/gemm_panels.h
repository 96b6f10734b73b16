/* SPDX-License-Identifier: Apache-2.0 */
/* f32 GEMM by panels of columns, for the shapes where OpenBLAS spends
 * much of its time packing: c = op(a) * op(b), row-major, op(a) m x k and
 * op(b) k x n (ta / tb: the operand is stored transposed; lda and ldb are
 * the strides of the stored rows), c m x n (ldc), written, never read.
 *
 * For each panel of 64 columns of c (32 where n <= 32), the panel of
 * op(b) is copied into a contiguous buffer once: b's rows are ldb apart,
 * and a power-of-two stride such as 4 KiB maps them all to a few cache
 * sets.  The first panel's copy is made by its first block of rows as it
 * sums; each later one's (b untransposed) by the blocks of the panel
 * before, a row every few steps over k, so that its loads from memory
 * never come all at once.  Blocks of 6 rows of c (12 in 32-column
 * panels) run over k with their 24 accumulators in AVX-512 registers,
 * reading the copy.
 * Each element of c is one fused multiply-add after another over k in
 * order, from zero: the result is exactly that of a scalar fmaf loop.
 *
 * Taken where the engine runs AVX-512F (shlo__vmath_isa), n >= 24 and
 * 1 <= k <= 4096 (the copy stays within a core's L2), any m; anything
 * else returns false having done nothing, and the caller calls BLAS.
 * op(a) is read once per panel; m was held to 1024 (or n to 128) until
 * the panels ran at 98% of OpenBLAS's best rate.  Now, on 1 and 2
 * threads, they beat or tie OpenBLAS on every larger shape measured
 * (m x n x k, one run on the machine of issue #37): 2048 x 3072 x 768
 * by 6-12%, 4096 x 4096 x 1024 and 8192 x 512 x 512 by 4-9%, 16384 x
 * 256 x 64 by 5%, 3200 x 2048 x 512 by 1-4%, 2048 x 1024 x 512 and
 * 2048 x 768 x 768 tied on two threads and 2-4% on one.
 *
 * Measured against OpenBLAS's SkylakeX core, it is the engine's products
 * that gain: mlp, attention and cnn ran 15-35% faster with it than
 * without.  Alone on one thread the picture is mixed and moves with the
 * machine: it won on 256 x 64 x 256, 256 x 256 x 64 with b transposed and
 * 2000 x 32 x 27 in every sitting, and lost on 455 x 64 x 288 and
 * 4096 x 32 x 288 (within the range) in the last one, as on 2048 x 1024 x
 * 512 (beyond it). */
#ifndef SHLO_GEMM_PANELS_H
#define SHLO_GEMM_PANELS_H

#include <stdbool.h>
#include <stdint.h>

bool shlo__sgemm_panels(bool ta, bool tb, int64_t m, int64_t n, int64_t k,
                        const float *a, int64_t lda, const float *b,
                        int64_t ldb, float *c, int64_t ldc);

/* Whether the functions here take an m x k by k x n product (the bounds
 * above, on this CPU). */
bool shlo__sgemm_panels_takes(int64_t m, int64_t n, int64_t k);

/* The same product, b untransposed, where op(a)'s rows are gathered from
 * runs of floats: k = runs * run, and row r, column w * run + e of op(a)
 * is rows[r * runs + w][e].  A convolution's windows without an im2col
 * copy: a run is one window position's in-features, and a position on
 * the padding points at zeros.  The result is the one the strided form
 * gives for the copied matrix, bit for bit. */
bool shlo__sgemm_panels_gathered(int64_t m, int64_t n, int64_t runs,
                                 int64_t run, const float *const *rows,
                                 const float *b, int64_t ldb, float *c,
                                 int64_t ldc);

/* What is applied to each element of c in registers, before it is
 * stored, in this order: when scaled, the product times scale (a folded
 * batch norm's factor); bias[j] added to column j (bias NULL: nothing
 * added); when res is set, element (i, j) of the residual (res + i * ldres
 * + j, rows aligned with c's) added, as res + x when res_first (the
 * operands in the order the program writes them), else x + res; then,
 * when relu, the maximum with +0 as StableHLO's maximum gives it (a NaN
 * kept, +0 for either zero).  Bit for bit the multiply, add and maximum
 * steps a program writes after the product (as in kernels/vchain.h, save
 * the payload of a NaN where both operands of an add are NaNs). */
typedef struct shlo__gemm_epi {
  const float *bias; /* n floats */
  bool relu;
  bool scaled;
  float scale;
  const float *res; /* rows of n floats, ldres apart, or NULL */
  int64_t ldres;
  bool res_first;
  /* c's values stored past the caches (non-temporal stores, whole aligned
   * lines only; the rest as usual): for a c far larger than the caches
   * that nothing reads soon.  The same bits either way, and no part of
   * the epilogue's values: shlo__gemm_epi_any and shlo__gemm_epi_apply
   * ignore it */
  bool stream;
} shlo__gemm_epi;

/* Whether epi does anything to the values. */
bool shlo__gemm_epi_any(const shlo__gemm_epi *epi);

/* shlo__sgemm_panels_gathered, then epi (NULL: none) on every element. */
bool shlo__sgemm_panels_gathered_epi(int64_t m, int64_t n, int64_t runs,
                                     int64_t run, const float *const *rows,
                                     const float *b, int64_t ldb, float *c,
                                     int64_t ldc, const shlo__gemm_epi *epi);

/* shlo__sgemm_panels, then epi (NULL: none) on every element. */
bool shlo__sgemm_panels_epi(bool ta, bool tb, int64_t m, int64_t n,
                            int64_t k, const float *a, int64_t lda,
                            const float *b, int64_t ldb, float *c,
                            int64_t ldc, const shlo__gemm_epi *epi);

/* epi on rows x n of c (rows ldc apart), in memory: for the products the
 * panels do not take. */
void shlo__gemm_epi_apply(const shlo__gemm_epi *epi, int64_t rows, int64_t n,
                          float *c, int64_t ldc);

/* One panel of c already laid out as the panels copy it: k rows of 64
 * floats (panel), of which the first width (1..64) are op(b)'s columns
 * and the rest zeros; c's columns [0, width) of rows [0, m) are written,
 * each element the same fmaf chain as above (gemm_prepacked.h packs b so
 * once for many products), then epi (NULL: none; its bias and residual
 * from the panel's first column) in registers.  false, having done
 * nothing, where the engine does not run AVX-512F. */
bool shlo__sgemm_panels_packed(bool ta, int64_t m, int64_t k, const float *a,
                               int64_t lda, const float *panel, int64_t width,
                               const shlo__gemm_epi *epi, float *c,
                               int64_t ldc);

#endif
