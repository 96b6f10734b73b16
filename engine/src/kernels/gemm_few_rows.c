/* f32 GEMM for few rows (see gemm_few_rows.h).
 *
 * A block of up to 6 rows of c by one 64-column panel keeps its 24
 * accumulators in AVX-512 registers; each step over k loads the panel's
 * four vectors of b and broadcasts one element of a per row.  The block
 * height is a compile-time constant in each instance of block() (always
 * inlined into a switch), so the accumulators stay in registers. */
#include <stdlib.h>

#include "kernels/gemm_few_rows.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define FR_ROWS 6     /* rows of c per block */
#define FR_VECS 4     /* vectors of 16 columns per panel */
#define FR_PANEL 64   /* columns per panel: FR_VECS * 16 */
#define FR_PREFETCH 8 /* rows of b ahead while copying */

#define FR_TARGET __attribute__((target("avx512f")))
#define FR_INLINE FR_TARGET __attribute__((always_inline)) static inline

/* Rows [0, R) of c's panel at c.  With copy, b is read (masked to the
 * panel's columns) and stored into p; else p, which holds the copy, is
 * read. */
FR_INLINE void block(int R, bool copy, int64_t k, const float *a, int64_t lda,
                     const float *b, int64_t ldb, float *p, float *c,
                     int64_t ldc, const __mmask16 *mask) {
  __m512 acc[FR_ROWS][FR_VECS];
#pragma GCC unroll 6
  for (int r = 0; r < R; r++)
#pragma GCC unroll 4
    for (int v = 0; v < FR_VECS; v++) acc[r][v] = _mm512_setzero_ps();
  for (int64_t kk = 0; kk < k; kk++) {
    __m512 bv[FR_VECS];
    float *pk = p + kk * FR_PANEL;
    if (copy) {
      const float *bk = b + kk * ldb;
      /* the next rows are in other pages: no hardware prefetch reaches
       * them */
      if (kk + FR_PREFETCH < k)
#pragma GCC unroll 4
        for (int v = 0; v < FR_VECS; v++)
          if (mask[v])
            _mm_prefetch((const char *)(bk + FR_PREFETCH * ldb + 16 * v),
                         _MM_HINT_T0);
#pragma GCC unroll 4
      for (int v = 0; v < FR_VECS; v++) {
        bv[v] = _mm512_maskz_loadu_ps(mask[v], bk + 16 * v);
        _mm512_store_ps(pk + 16 * v, bv[v]);
      }
    } else {
#pragma GCC unroll 4
      for (int v = 0; v < FR_VECS; v++) bv[v] = _mm512_load_ps(pk + 16 * v);
    }
#pragma GCC unroll 6
    for (int r = 0; r < R; r++) {
      __m512 ar = _mm512_set1_ps(a[r * lda + kk]);
#pragma GCC unroll 4
      for (int v = 0; v < FR_VECS; v++)
        acc[r][v] = _mm512_fmadd_ps(ar, bv[v], acc[r][v]);
    }
  }
#pragma GCC unroll 6
  for (int r = 0; r < R; r++)
#pragma GCC unroll 4
    for (int v = 0; v < FR_VECS; v++)
      _mm512_mask_storeu_ps(c + r * ldc + 16 * v, mask[v], acc[r][v]);
}

/* A block of the panel's first rows copies the panel; the others read. */
#define FR_BLOCK(R)                                                        \
  case R:                                                                  \
    if (copy) block(R, true, k, ai, lda, b, ldb, p, ci, ldc, mask);        \
    else block(R, false, k, ai, lda, b, ldb, p, ci, ldc, mask);            \
    break;

FR_TARGET static void panel(int64_t m, int64_t k, const float *a, int64_t lda,
                            const float *b, int64_t ldb, float *p, float *c,
                            int64_t ldc, int64_t width) {
  __mmask16 mask[FR_VECS];
  for (int v = 0; v < FR_VECS; v++) {
    int64_t cols = width - 16 * v;
    mask[v] = cols >= 16 ? 0xffff : cols <= 0 ? 0 : (__mmask16)((1u << cols) - 1);
  }
  for (int64_t i = 0; i < m; i += FR_ROWS) {
    int R = m - i < FR_ROWS ? (int)(m - i) : FR_ROWS;
    bool copy = i == 0;
    const float *ai = a + i * lda;
    float *ci = c + i * ldc;
    switch (R) {
      FR_BLOCK(6)
      FR_BLOCK(5)
      FR_BLOCK(4)
      FR_BLOCK(3)
      FR_BLOCK(2)
      FR_BLOCK(1)
    }
  }
}

static bool avx512f_usable(void) {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f");
}

bool shlo__sgemm_few_rows(int64_t m, int64_t n, int64_t k, const float *a,
                          int64_t lda, const float *b, int64_t ldb, float *c,
                          int64_t ldc) {
  if (m < 1 || m > 128 || n < 48 || k < 1 || k > 4096 || !avx512f_usable())
    return false;
  float *p = aligned_alloc(64, (size_t)k * FR_PANEL * sizeof(float));
  if (!p) return false;
  for (int64_t j = 0; j < n; j += FR_PANEL) {
    int64_t width = n - j < FR_PANEL ? n - j : FR_PANEL;
    panel(m, k, a, lda, b + j, ldb, p, c + j, ldc, width);
  }
  free(p);
  return true;
}

#else /* no AVX-512 kernel on this compiler or architecture */

bool shlo__sgemm_few_rows(int64_t m, int64_t n, int64_t k, const float *a,
                          int64_t lda, const float *b, int64_t ldb, float *c,
                          int64_t ldc) {
  (void)m, (void)n, (void)k, (void)a, (void)lda, (void)b, (void)ldb, (void)c,
      (void)ldc;
  return false;
}
#endif
