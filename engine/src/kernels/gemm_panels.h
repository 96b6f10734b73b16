/* f32 GEMM by panels of 64 columns, for the shapes where OpenBLAS spends
 * much of its time packing: c = op(a) * op(b), row-major, op(a) m x k and
 * op(b) k x n (ta / tb: the operand is stored transposed; lda and ldb are
 * the strides of the stored rows), c m x n (ldc), written, never read.
 *
 * For each panel of 64 columns of c, the panel of op(b) is copied into a
 * contiguous buffer once: b's rows are ldb apart, and a power-of-two
 * stride such as 4 KiB maps them all to a few cache sets.  Blocks of 6
 * rows of c then run over k with their 24 accumulators in AVX-512
 * registers, reading the copy.  Each element of c is one fused
 * multiply-add after another over k in order, from zero: the result is
 * exactly that of a scalar fmaf loop.
 *
 * Taken where AVX-512F is usable, n >= 48, 1 <= k <= 4096 (the copy
 * stays within a core's L2) and m <= 1024 or n <= 128 (op(a), read once
 * per panel, is read at most twice); anything else returns false having
 * done nothing, and the caller calls BLAS.  On this project's machines it
 * beat OpenBLAS's SkylakeX core by 10-40% on every shape in that range
 * that was measured, and lost beyond it. */
#ifndef SHLO_GEMM_PANELS_H
#define SHLO_GEMM_PANELS_H

#include <stdbool.h>
#include <stdint.h>

bool shlo__sgemm_panels(bool ta, bool tb, int64_t m, int64_t n, int64_t k,
                        const float *a, int64_t lda, const float *b,
                        int64_t ldb, float *c, int64_t ldc);

#endif
