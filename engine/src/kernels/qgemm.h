/* SPDX-License-Identifier: Apache-2.0 */
/* Integer GEMM for quantized dot_general (qgemm.c).
 *
 * The spec defines a quantized dot_general as dequantize the operands,
 * multiply in real arithmetic, quantize to the result type.  When the
 * result's scale is exactly lhs_scale * rhs_scale (per output column) and
 * its zero point is 0, that quantization is, exactly,
 *   c[i][j] = clamp(smin, sum_k (a[i][k] - za) * (w[k][j] - zw[j]), smax)
 * an integer sum: the real product lhs_scale * rhs_scale * S divided by
 * the result scale is S itself, already an integer, so the rounding to
 * nearest is the identity.  This is the value shlo returns there; the
 * float path (dequantize -> f32 dot -> quantize) agrees with it except
 * where its own f32 roundings show (sums past 2^24, or scales whose
 * products with the storage are not exact in f32), where it is the one
 * that is off.  Every other case (other scales, nonzero result zero
 * points, float operands, storage wider than 8 bits, shapes other than
 * [M,K] x [K,N]) keeps the float path.
 *
 * The sum is taken in 32-bit wrapping arithmetic, which gives S exactly
 * when |S| < 2^31: the compiler takes this path only when
 * K * max|a - za| * max|w - zw| < 2^31 over the storage types' whole
 * ranges.  Integer sums are exact in any order, so every ISA variant
 * (AVX512-VNNI, AVX-512BW, AVX2, portable) gives the same bytes. */
#ifndef SHLO_QGEMM_H
#define SHLO_QGEMM_H

#include <stdbool.h>
#include <stdint.h>

#include "compile/compiler.h"

/* One integer GEMM: c (m x n, row stride n) from a (m x k, row stride k;
 * bytes read as uint8 when a_unsigned, else int8) and w (k x n, row
 * stride n, int8).  Zero points: za for a, zw[j] (n of them) for w's
 * columns.  The caller checked the bound above. */
typedef struct shlo__qgemm {
  int64_t m, n, k;
  const void *a;
  bool a_unsigned;
  int32_t za;
  const int8_t *w;
  const int32_t *zw;
  int32_t cmin, cmax; /* the result's storage range */
  int32_t *c;
} shlo__qgemm;

/* Compute g; false when out of memory (c then undefined).  Splits the
 * columns over the calling context's pool. */
bool shlo__qgemm_run(const shlo__qgemm *g);

/* The variant in use: "avx512vnni", "avx512bw", "avx2" or "portable",
 * the best this machine has unless shlo__qgemm_use_isa chose another. */
const char *shlo__qgemm_isa(void);
/* Use variant `isa` from now on, process-wide; false (nothing changed)
 * when this machine cannot run it.  For tests. */
bool shlo__qgemm_use_isa(const char *isa);

/* For a quantized dot_general or dot: when the integer sum above is its
 * answer, make `step` run it and return true (*st: SHLO_OK, or the
 * compile error set through cc); else false, step untouched. */
bool shlo__qgemm_compile(shlo_compiler *cc, const shlo_op *op,
                         shlo_step *step, shlo_status *st);

#endif
