/* SPDX-License-Identifier: Apache-2.0 */
/* bf16 x bf16 -> f32 GEMM on AVX512_BF16 (VDPBF16PS): c = op(a) op(b),
 * row-major, op(a) m x k, op(b) k x n, c m x n (rows ldc apart), written,
 * never read; a and b hold bf16 bit patterns.  As in cblas: ta / tb, the
 * operand is stored transposed (a k x m, b n x k); lda and ldb are the
 * strides of the stored rows.
 *
 * What it computes.  Each element of c is the sum over k, in k order,
 * starting from +0, of the exact products a[i][kk] * b[kk][j], every
 * addition rounded to f32 (round to nearest even): the order of the
 * engine's own f32 loops (gemm_panels.c's chain of fused multiply-adds,
 * the plain loops of small products), so where the widened path runs
 * those, the bits are the same.  OpenBLAS, which the widened path calls
 * for other shapes, sums in its own order; this kernel then differs from
 * it only in the order of the f32 sums (the spec leaves dot_general's
 * summation order and DEFAULT precision to the implementation).
 *
 * Why that holds.  A product of two bf16 has at most 16 significant bits
 * and is exact in f32 unless it leaves f32's range.  VDPBF16PS does, per
 * f32 lane, acc = (acc + a[2j+1] * b[2j+1]) + a[2j] * b[2j], each add
 * rounded once (Intel's pseudo-code; test_gemm_bf16 pins it on the CPU
 * that runs it, and a check at first use turns the kernel off on a CPU
 * that does otherwise).  Packing puts element 2q of k in the odd half of
 * each pair and 2q+1 in the even half, so the instruction adds them in k
 * order.  An odd k ends with a 0 x 0 pair: adding +0 changes no sum (a
 * sum from +0 is never -0 under round to nearest even).
 *
 * The guard.  VDPBF16PS treats subnormal inputs and outputs as zero (DAZ,
 * FTZ), and a product past f32's range would round where an exact one
 * would not.  So while packing, every operand element is checked: the
 * kernel declines (returns 0) if any nonzero one has a magnitude below
 * 2^-50 (biased exponent < 77) or at least 2^64 (exponent >= 191; inf and
 * NaN included), and the caller runs the widened f32 path for the whole
 * call.  With every nonzero input in [2^-50, 2^64): a bf16 of exponent
 * e >= -50 is an integer times 2^(e-7), a multiple of 2^-57, so every
 * product is a multiple of 2^-114 and below 2^128 (exact: 16 bits).  A
 * sum of two multiples of 2^-114 is one too; rounded to f32 it stays one,
 * since below 2^-91 (2^23 units) it is exact and above, f32's ulp is a
 * multiple of 2^-114.  So every partial sum is 0 or at least 2^-114 in
 * magnitude, never subnormal (f32's smallest normal is 2^-126): nothing is
 * flushed, and each step is the exact IEEE f32 add.
 *
 * Taken where the CPU has AVX-512F, BW, VL and BF16 and the engine runs
 * AVX-512F (shlo__vmath_isa; tests turn it off with shlo__vmath_use_isa).
 *
 * Blocking: every panel of 64 columns of op(b) is packed first, into
 * pairs of rows (k / 2 rows of 64 dwords; a transposed b by 16 x 16
 * transposes in registers).  Then, for each slice of k (1536 pairs) and
 * each block of 48 rows of op(a), the block's slice is packed into pairs
 * along k (a transposed a by the same transposes) into a buffer that
 * stays in L2, and every panel passes by it in blocks of 6 rows of c, 24
 * accumulators in registers, as gemm_panels.c's f32 kernel does.  A
 * slice after the first starts from the f32 partial sums the one before
 * it stored in c, so the sums and their roundings are those of one pass
 * over k.  a is packed block by block as it is used (before, all of it
 * first, written to memory and read back once per panel); inside the
 * transformer layer that gains little on one thread (the products' time
 * is the multiply, ~90% of the instruction's rate in a loop, and packing
 * b's cold weights); the gain is on two threads, where b is now packed
 * once. */
#ifndef SHLO_GEMM_BF16_H
#define SHLO_GEMM_BF16_H

#include <stdbool.h>
#include <stdint.h>

/* Whether the kernels here run on this CPU now (see above). */
bool shlo__gemm_bf16_available(void);

/* Whether the kernels run here and take all n bf16 patterns at x (none
 * outside the guard): a caller that checked its operands so knows that
 * the kernels will not decline them. */
bool shlo__gemm_bf16_in_guard(const uint16_t *x, int64_t n);

/* The product on the calling thread.  1: done; 0: declined (an input
 * outside the guard's range, or the kernel not available), c partly
 * written; -1: out of memory for the packed copies. */
int shlo__gemm_bf16_serial(bool ta, bool tb, int64_t m, int64_t n,
                           int64_t k, const uint16_t *a, int64_t lda,
                           const uint16_t *b, int64_t ldb, float *c,
                           int64_t ldc);

/* The same over the engine's pool: b's panels packed once, shared out,
 * then blocks of c's rows (or, with few rows, panels) per thread, each
 * packing its own rows of a (the same bits: each element's sum is
 * computed by one thread). */
int shlo__gemm_bf16(bool ta, bool tb, int64_t m, int64_t n, int64_t k,
                    const uint16_t *a, int64_t lda, const uint16_t *b,
                    int64_t ldb, float *c, int64_t ldc);

/* Tests only: the loops' blocks, kc pairs of k and mc rows of c (at
 * least 1 each; 0 restores the defaults).  Not thread-safe: set it while
 * no product runs.  Any blocking gives the same bits. */
void shlo__gemm_bf16_set_blocking(int64_t kc, int64_t mc);

#endif
