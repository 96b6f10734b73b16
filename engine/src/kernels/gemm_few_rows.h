/* f32 GEMM for products with few rows, where OpenBLAS spends much of its
 * time packing: c = a * b, all row-major and untransposed, a m x k (row
 * stride lda), b k x n (ldb), c m x n (ldc), c written, never read.
 *
 * The kernel walks c in panels of 64 columns.  The first block of rows
 * copies the panel of b into a contiguous buffer as it goes (b's rows are
 * ldb apart, and a power-of-two stride such as 4 KiB maps them all to a
 * few cache sets), and every later block reads the copy.  Each element of
 * c is one fused multiply-add after another over k in order, from zero:
 * the result is exactly that of a scalar fmaf loop.
 *
 * Used where AVX-512F is usable, m <= 128, 48 <= n and 1 <= k <= 4096
 * (the copy stays within a core's L2); anything else returns false having
 * done nothing, and the caller calls BLAS. */
#ifndef SHLO_GEMM_FEW_ROWS_H
#define SHLO_GEMM_FEW_ROWS_H

#include <stdbool.h>
#include <stdint.h>

bool shlo__sgemm_few_rows(int64_t m, int64_t n, int64_t k, const float *a,
                          int64_t lda, const float *b, int64_t ldb, float *c,
                          int64_t ldc);

#endif
