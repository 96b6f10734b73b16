/* SPDX-License-Identifier: Apache-2.0 */
/* f32 GEMM by panels of columns (see gemm_panels.h).
 *
 * The height of a block of rows is a compile-time constant in each
 * instance of block() (always inlined into a switch), so that its
 * accumulators stay in registers. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "kernels/float_minmax.h"
#include "kernels/gemm_panels.h"
#include "kernels/transpose16.h"
#include "kernels/vmath.h"

bool shlo__gemm_epi_any(const shlo__gemm_epi *epi) {
  return epi && (epi->bias || epi->relu || epi->scaled || epi->res);
}

/* shlo__gemm_epi_apply one element at a time */
static void epi_apply_scalar(const shlo__gemm_epi *epi, int64_t rows,
                             int64_t n, float *c, int64_t ldc) {
  const float *res = epi->res;
  for (int64_t r = 0; r < rows; r++, c += ldc) {
    if (epi->scaled)
      for (int64_t j = 0; j < n; j++) c[j] *= epi->scale;
    if (epi->bias)
      for (int64_t j = 0; j < n; j++) c[j] += epi->bias[j];
    if (res) {
      if (epi->res_first)
        for (int64_t j = 0; j < n; j++) c[j] = res[j] + c[j];
      else
        for (int64_t j = 0; j < n; j++) c[j] = c[j] + res[j];
      res += epi->ldres;
    }
    if (epi->relu)
      for (int64_t j = 0; j < n; j++) c[j] = shlo_fmaxf(c[j], 0.0f);
  }
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define GP_VECS 4     /* most vectors of 16 columns per panel */
#define GP_PANEL 64   /* most columns per panel: GP_VECS * 16 */
#define GP_ROWS 12    /* most rows of c per block */
#define GP_PREFETCH 8 /* rows of b ahead while copying */
#define GP_EVERY 8 /* iterations over k for each row of the next panel */
#define GP_AHEAD 4 /* rows of the next panel fetched before copied */
#define GP_SPREAD_K 128 /* k up to which blocks fetch c's lines in turn */

#define GP_TARGET __attribute__((target("avx512f")))
/* x, opaque to the compiler: a product it cannot contract with the add
 * after it into one FMA (GNU C contracts by default; the program's
 * multiply and add round twice) */
#define GP_ROUNDED(x) __asm__("" : "+v"(x))
#define GP_INLINE GP_TARGET __attribute__((always_inline)) static inline

/* op(a): element (r, kk) is a[r * ars + kk * aks], or, gathered (rows
 * not NULL), rows[r * runs + kk / run][kk % run].  With it, the panel's
 * epilogue (shlo__gemm_epi): bias from the panel's first column. */
typedef struct gp_a {
  const float *a;
  int64_t ars, aks;
  const float *const *rows;
  int64_t runs, run;
  const float *bias;
  bool relu;
  /* the rest of the epilogue: res from the panel's first column and the
   * block's first row */
  bool scaled, res_first;
  float scale;
  const float *res;
  int64_t ldres;
  bool stream; /* c by non-temporal stores where it can (gemm_panels.h) */
  int64_t after; /* rows of c after the block's, in this call */
  /* the next panel's op(b) (untransposed, ldb apart; NULL: none), the
   * copy it goes to (next_p, laid out as p), its lanes, and the rows
   * [next_lo, next_hi) of it this block copies while it sums (see
   * next_share) */
  const float *next_b;
  float *next_p;
  __mmask16 next_mask[GP_VECS];
  int64_t next_lo, next_hi;
} gp_a;

/* Row `row` of the next panel's copy, from b into its place in next_p,
 * the row GP_AHEAD further on fetched meanwhile: rows of b ldb apart
 * share few cache sets, so only a few may be in flight. */
GP_INLINE void next_row(int V, const gp_a *a, int64_t ldb, int64_t row,
                        int64_t k) {
  const float *src = a->next_b + row * ldb;
  if (row + GP_AHEAD < k)
#pragma GCC unroll 4
    for (int v = 0; v < V; v++)
      if (a->next_mask[v])
        _mm_prefetch((const char *)(src + GP_AHEAD * ldb + 16 * v),
                     _MM_HINT_T0);
#pragma GCC unroll 4
  for (int v = 0; v < V; v++)
    _mm512_store_ps(a->next_p + row * 16 * V + 16 * v,
                    _mm512_maskz_loadu_ps(a->next_mask[v], src + 16 * v));
}

/* Row kk of the panel of op(b) into bv.  With copy, it is read from b
 * (untransposed, masked to the panel's columns) and stored into p as it
 * is used; else p holds the panel already. */
GP_INLINE void panel_row(int V, bool copy, int64_t kk, int64_t k,
                         const float *b, int64_t ldb, float *p,
                         const __mmask16 *mask, __m512 *bv) {
  float *pk = p + kk * 16 * V; /* the copy's rows are V vectors */
  if (copy) {
    const float *bk = b + kk * ldb;
    /* the next rows are in other pages: no hardware prefetch reaches
     * them */
    if (kk + GP_PREFETCH < k)
#pragma GCC unroll 4
      for (int v = 0; v < V; v++)
        if (mask[v])
          _mm_prefetch((const char *)(bk + GP_PREFETCH * ldb + 16 * v),
                       _MM_HINT_T0);
#pragma GCC unroll 4
    for (int v = 0; v < V; v++) {
      bv[v] = _mm512_maskz_loadu_ps(mask[v], bk + 16 * v);
      _mm512_store_ps(pk + 16 * v, bv[v]);
    }
  } else {
#pragma GCC unroll 4
    for (int v = 0; v < V; v++) bv[v] = _mm512_loadu_ps(pk + 16 * v);
  }
}

/* At iteration kk of a block's loop over k, line kk of the block's c (R
 * rows of V vectors) fetched for the stores at its end, and at kk 0 the
 * lines a loop shorter than R * V never reaches.  Where k is short, the
 * R * V fetches all at the block's start, queued ahead of the loop's own
 * loads, made attention's Q K^T (256 x 256 x 64) 4% slower on one
 * thread; where it is long, the test in the loop cost 1.5%. */
GP_INLINE void c_line_ahead(int R, int V, const gp_a *a, int64_t kk,
                            int64_t k, float *c, int64_t ldc,
                            const __mmask16 *mask) {
  if (a->stream) return; /* c goes past the caches */
  if (kk < R * V && mask[kk % V])
    _mm_prefetch((const char *)(c + kk / V * ldc + 16 * (kk % V)),
                 _MM_HINT_T0);
  if (kk == 0)
    for (int64_t l = k; l < R * V; l++)
      if (mask[l % V])
        _mm_prefetch((const char *)(c + l / V * ldc + 16 * (l % V)),
                     _MM_HINT_T0);
}

/* Rows [0, R) of the panel (V vectors wide) of c at c; copy as for
 * panel_row; gathered when a.rows is set (a parameter of its own, so that
 * each form is compiled alone and keeps its registers). */
GP_INLINE void block(int R, int V, bool copy, bool gathered, bool spread,
                     int64_t k, gp_a a,
                     const float *b, int64_t ldb, float *p, float *c,
                     int64_t ldc, const __mmask16 *mask) {
  __m512 acc[GP_ROWS][GP_VECS], bv[GP_VECS];
  /* the lines the block's end reads (the residual) and writes (c),
   * fetched while the sums run: rows a whole row of c apart, a panel's
   * width of each, which the hardware prefetchers do not foresee.  On the
   * bottleneck's 64 -> 256 layer with its residual, one thread: 6.4 ms
   * without, 4.2 with.  spread (a constant): c's lines go one per
   * iteration of the loop over k instead (c_line_ahead) */
#pragma GCC unroll 12
  for (int r = 0; r < R; r++)
#pragma GCC unroll 4
    for (int v = 0; v < V; v++) {
      if (a.res && mask[v])
        _mm_prefetch((const char *)(a.res + r * a.ldres + 16 * v),
                     _MM_HINT_T0);
      if (!spread && !a.stream && mask[v])
        _mm_prefetch((const char *)(c + r * ldc + 16 * v), _MM_HINT_T0);
    }
#pragma GCC unroll 12
  for (int r = 0; r < R; r++)
#pragma GCC unroll 4
    for (int v = 0; v < V; v++) acc[r][v] = _mm512_setzero_ps();
  if (!gathered) {
    /* this block's share of the next panel's copy, a row every
     * GP_EVERY iterations */
    int64_t row = a.next_lo, rows_end = a.next_b ? a.next_hi : 0;
    for (int64_t kk = 0; kk < k; kk++) {
      if (!(kk & (GP_EVERY - 1)) && row < rows_end)
        next_row(V, &a, ldb, row++, k);
      if (spread) c_line_ahead(R, V, &a, kk, k, c, ldc, mask);
      panel_row(V, copy, kk, k, b, ldb, p, mask, bv);
      const float *ak = a.a + kk * a.aks;
#pragma GCC unroll 12
      for (int r = 0; r < R; r++) {
        __m512 ar = _mm512_set1_ps(ak[r * a.ars]);
#pragma GCC unroll 4
        for (int v = 0; v < V; v++)
          acc[r][v] = _mm512_fmadd_ps(ar, bv[v], acc[r][v]);
      }
    }
    /* a share of more rows than the loop had turns for (few blocks) */
    while (row < rows_end) next_row(V, &a, ldb, row++, k);
  } else {
    for (int64_t w = 0, kk = 0; w < a.runs; w++) {
      const float *run[GP_ROWS];
#pragma GCC unroll 12
      for (int r = 0; r < R; r++) run[r] = a.rows[r * a.runs + w];
      /* the next block's runs, a line of each every 16 floats, fetched
       * while this block sums: rows of a 1x1 window's input are k floats
       * apart, and six such streams outrun the hardware prefetchers (the
       * bottleneck's 256 -> 64 layer, one thread: 3.55 ms without, 3.13
       * with, OpenBLAS 3.38) */
      const float *next[GP_ROWS] = {0};
      int ahead = a.after < R ? (int)a.after : R;
      for (int r = 0; r < ahead; r++) next[r] = a.rows[(R + r) * a.runs + w];
      for (int64_t e = 0; e < a.run; e++, kk++) {
        if (!(e & 15))
          for (int r = 0; r < ahead; r++)
            _mm_prefetch((const char *)(next[r] + e), _MM_HINT_T0);
        panel_row(V, copy, kk, k, b, ldb, p, mask, bv);
#pragma GCC unroll 12
        for (int r = 0; r < R; r++) {
          __m512 ar = _mm512_set1_ps(run[r][e]);
#pragma GCC unroll 4
          for (int v = 0; v < V; v++)
            acc[r][v] = _mm512_fmadd_ps(ar, bv[v], acc[r][v]);
        }
      }
    }
  }
  /* the epilogue after the sums, once per block: the loop over k keeps
   * its registers */
  if (a.scaled) {
    const __m512 scale = _mm512_set1_ps(a.scale);
#pragma GCC unroll 12
    for (int r = 0; r < R; r++)
#pragma GCC unroll 4
      for (int v = 0; v < V; v++) {
        acc[r][v] = _mm512_mul_ps(acc[r][v], scale);
        GP_ROUNDED(acc[r][v]);
      }
  }
  if (a.bias) {
    __m512 bias[GP_VECS];
#pragma GCC unroll 4
    for (int v = 0; v < V; v++)
      bias[v] = _mm512_maskz_loadu_ps(mask[v], a.bias + 16 * v);
#pragma GCC unroll 12
    for (int r = 0; r < R; r++)
#pragma GCC unroll 4
      for (int v = 0; v < V; v++) acc[r][v] = _mm512_add_ps(acc[r][v], bias[v]);
  }
  if (a.res) {
#pragma GCC unroll 12
    for (int r = 0; r < R; r++)
#pragma GCC unroll 4
      for (int v = 0; v < V; v++) {
        __m512 x = _mm512_maskz_loadu_ps(mask[v], a.res + r * a.ldres + 16 * v);
        acc[r][v] = a.res_first ? _mm512_add_ps(x, acc[r][v])
                                : _mm512_add_ps(acc[r][v], x);
      }
  }
  if (a.relu) {
    /* max_ps gives its second operand, +0, for a NaN and for either zero:
     * the NaN is put back */
    const __m512 zero = _mm512_setzero_ps();
#pragma GCC unroll 12
    for (int r = 0; r < R; r++)
#pragma GCC unroll 4
      for (int v = 0; v < V; v++) {
        __mmask16 nan = _mm512_cmp_ps_mask(acc[r][v], acc[r][v], _CMP_UNORD_Q);
        acc[r][v] = _mm512_mask_mov_ps(_mm512_max_ps(acc[r][v], zero), nan,
                                       acc[r][v]);
      }
  }
#pragma GCC unroll 12
  for (int r = 0; r < R; r++)
#pragma GCC unroll 4
    for (int v = 0; v < V; v++) {
      float *cv = c + r * ldc + 16 * v;
      /* a whole, aligned line: past the caches, not read for ownership */
      if (a.stream && mask[v] == 0xffff && !((uintptr_t)cv & 63))
        _mm512_stream_ps(cv, acc[r][v]);
      else
        _mm512_mask_storeu_ps(cv, mask[v], acc[r][v]);
    }
}

/* Blocks of R rows of a panel V vectors wide: 24 accumulators in the
 * widest blocks (of 32 registers), fewer in those for the last rows. */
#define GP_BLOCK(R, V)                                                    \
  case (V) * 100 + (R):                                                   \
    if (copy)                                                             \
      block(R, V, true, false, false, k, ai, b, ldb, p, ci, ldc, mask);   \
    else                                                                  \
      block(R, V, false, false, false, k, ai, b, ldb, p, ci, ldc, mask);  \
    break;
/* the same for k <= GP_SPREAD_K, c's lines fetched in turn; no copy */
#define GP_BLOCK_S(R, V)                                                  \
  case (V) * 100 + (R):                                                   \
    block(R, V, false, false, true, k, ai, b, ldb, p, ci, ldc, mask);     \
    break;
/* the same for gathered rows */
#define GP_BLOCK_G(R, V)                                                  \
  case (V) * 100 + (R):                                                   \
    block(R, V, copy, true, false, k, ai, b, ldb, p, ci, ldc, mask);      \
    break;

/* The height of the next block with `left` rows to go: the largest, 6 in
 * panels of 4 vectors and 12 in those of 2, then at most one of each
 * smaller height. */
static int block_height(int vecs, int64_t left) {
  int top = vecs == 2 ? 12 : 6;
  if (left >= top) return top;
  if (vecs == 2 && left >= 8) return 8;
  return left >= 4 ? 4 : left >= 2 ? 2 : 1;
}

/* The share of the next panel's k rows that the block of R rows at row i
 * copies: the blocks from row `first` on (after the block that copies
 * this panel, if one does) share them in proportion to their own rows,
 * the last ending at k.  Spread so, the copy's loads from memory are a
 * few at a time over the whole panel; done by the next panel's first
 * block, they came all at once, and that block waited on them.  On
 * linear_f32's 64 x 4096 x 1024, one thread, minimum of 80 calls: 2.06-
 * 2.26 ms before, 1.94 after, as fast as with b packed ahead (1.89-1.96)
 * or held in L1 (1.91).  A line at a time every iteration instead of a
 * row every GP_EVERY was no faster than before: the loop's instructions,
 * not memory, then bound it. */
static inline void next_share(gp_a *ai, int64_t m, int64_t k, int64_t i,
                              int R, int first) {
  if (!ai->next_b || i < first || m <= first) {
    ai->next_lo = ai->next_hi = 0;
    return;
  }
  int64_t rest = m - first;
  ai->next_lo = k * (i - first) / rest;
  ai->next_hi = k * (i + R - first) / rest;
}

/* The rows of c in blocks, the first of which copies an untransposed
 * panel: one function per panel width (VECS vectors) and form of op(a),
 * each holding only its own blocks' code; sharing one function, the
 * strided blocks of 2000 x 32 x 27 ran 8-20% slower. */
#define GP_PANEL_ROWS(NAME, VECS, ...)                                      \
  GP_TARGET static void NAME(bool copy_b, int64_t m, int64_t k, gp_a a,     \
                             const float *b, int64_t ldb, float *p,        \
                             float *c, int64_t ldc,                        \
                             const __mmask16 *mask) {                      \
    for (int64_t i = 0; i < m;) {                                           \
      int R = block_height(VECS, m - i);                                    \
      bool copy = copy_b && i == 0; /* (GP_BLOCK_S: never) */               \
      (void)copy;                                                           \
      gp_a ai = a;                                                          \
      if (a.rows) ai.rows = a.rows + i * a.runs;                            \
      else ai.a = a.a + i * a.ars;                                          \
      if (a.res) ai.res = a.res + i * a.ldres;                              \
      ai.after = m - i - R;                                                 \
      next_share(&ai, m, k, i, R, copy_b ? block_height(VECS, m) : 0);      \
      float *ci = c + i * ldc;                                              \
      switch ((VECS) * 100 + R) { __VA_ARGS__ }                             \
      i += R;                                                               \
    }                                                                       \
  }
GP_PANEL_ROWS(rows4, 4,
              GP_BLOCK(6, 4) GP_BLOCK(4, 4) GP_BLOCK(2, 4) GP_BLOCK(1, 4))
GP_PANEL_ROWS(rows2, 2,
              GP_BLOCK(12, 2) GP_BLOCK(8, 2) GP_BLOCK(4, 2) GP_BLOCK(2, 2)
                  GP_BLOCK(1, 2))
/* (functions of their own: the long loops' code stays as it was; beside
 * these in one function, 512 x 512 x 512 and 1024 x 768 x 768 ran 0.5-1%
 * slower) */
GP_PANEL_ROWS(short_rows4, 4,
              GP_BLOCK_S(6, 4) GP_BLOCK_S(4, 4) GP_BLOCK_S(2, 4)
                  GP_BLOCK_S(1, 4))
GP_PANEL_ROWS(short_rows2, 2,
              GP_BLOCK_S(12, 2) GP_BLOCK_S(8, 2) GP_BLOCK_S(4, 2)
                  GP_BLOCK_S(2, 2) GP_BLOCK_S(1, 2))
GP_PANEL_ROWS(gathered_rows4, 4,
              GP_BLOCK_G(6, 4) GP_BLOCK_G(4, 4) GP_BLOCK_G(2, 4)
                  GP_BLOCK_G(1, 4))
GP_PANEL_ROWS(gathered_rows2, 2,
              GP_BLOCK_G(12, 2) GP_BLOCK_G(8, 2) GP_BLOCK_G(4, 2)
                  GP_BLOCK_G(2, 2) GP_BLOCK_G(1, 2))

/* The copy of a transposed panel: op(b)'s column j is stored row j of b,
 * k contiguous floats, and becomes column j of the copy's rows of
 * 16 * vecs floats; the columns past width are zeros.  Tiles of 16 rows
 * of b by 16 of k are loaded (masked: nothing past width or k is read)
 * and transposed in registers (transpose16.h).  Gathering each vector of
 * the copy instead, 16 loads from 16 rows, made the copy of attention's
 * Q K^T (256 x 256 x 64) 3-4 times as long on Zen 5. */
GP_TARGET static void transposed_panel(int vecs, int64_t k, const float *b,
                                       int64_t ldb, float *p, int64_t width) {
  int64_t row = 16 * vecs;
  for (int v = 0; v < vecs; v++) {
    int64_t rows = width - 16 * v; /* rows of b in this vector's tile */
    if (rows > 16) rows = 16;
    for (int64_t kk = 0; kk < k; kk += 16) {
      int64_t cols = k - kk < 16 ? k - kk : 16;
      __mmask16 in = (__mmask16)((1u << cols) - 1);
      shlo_v16f t[16];
#pragma GCC unroll 16
      for (int i = 0; i < 16; i++)
        t[i] = i < rows ? (shlo_v16f)_mm512_maskz_loadu_ps(
                              in, b + (16 * v + i) * ldb + kk)
                        : (shlo_v16f)_mm512_setzero_ps();
      SHLO_TRANSPOSE16(t);
#pragma GCC unroll 16
      for (int e = 0; e < 16; e++) /* unrolled: t stays in registers */
        if (e < cols)
          _mm512_store_ps(p + (kk + e) * row + 16 * v, (__m512)t[e]);
    }
  }
}

/* The lanes of each vector of a panel width columns wide that hold
 * columns: whole vectors, then a tail, then none. */
GP_TARGET static void panel_masks(int64_t width, __mmask16 *mask) {
  for (int v = 0; v < GP_VECS; v++) {
    int64_t cols = width - 16 * v;
    mask[v] = cols >= 16  ? 0xffff
              : cols <= 0 ? 0
                          : (__mmask16)((1u << cols) - 1);
  }
}

/* The panel of `width` columns (at most 16 * vecs) whose op(b) starts at b
 * (column 0 of the panel) and whose c starts at c.  Unless p holds the
 * copy already (filled: the panel before made it), an untransposed b is
 * copied by the first block of rows; a transposed one first, column by
 * column. */
GP_TARGET static void panel(int vecs, bool tb, int64_t m, int64_t k, gp_a a,
                            const float *b, int64_t ldb, float *p, float *c,
                            int64_t ldc, int64_t width, bool filled) {
  __mmask16 mask[GP_VECS];
  panel_masks(width, mask);
  if (tb) transposed_panel(vecs, k, b, ldb, p, width);
  /* an untransposed b whose rows are exactly the panel's already is the
   * copy: read in place */
  bool copy_b = !tb && !filled;
  if (copy_b && width == 16 * vecs && ldb == width) {
    copy_b = false;
    p = (float *)b;
  }
  if (a.rows)
    (vecs == 2 ? gathered_rows2 : gathered_rows4)(copy_b, m, k, a, b, ldb, p, c,
                                                  ldc, mask);
  else if (!copy_b && k <= GP_SPREAD_K)
    (vecs == 2 ? short_rows2 : short_rows4)(false, m, k, a, b, ldb, p, c, ldc,
                                            mask);
  else
    (vecs == 2 ? rows2 : rows4)(copy_b, m, k, a, b, ldb, p, c, ldc, mask);
}

/* The epilogue of block() over rows of c in memory, 16 columns at a time
 * (the scalar form's shlo_fmaxf does not vectorise: cnn's first layer
 * took 0.2 ms more with it). */
GP_TARGET static void epi_apply_avx512(const shlo__gemm_epi *epi,
                                       int64_t rows, int64_t n, float *c,
                                       int64_t ldc) {
  const __m512 zero = _mm512_setzero_ps();
  for (int64_t r = 0; r < rows; r++, c += ldc)
    for (int64_t j = 0; j < n; j += 16) {
      __mmask16 m = n - j >= 16 ? 0xffff : (__mmask16)((1u << (n - j)) - 1);
      __m512 x = _mm512_maskz_loadu_ps(m, c + j);
      if (epi->scaled) {
        x = _mm512_mul_ps(x, _mm512_set1_ps(epi->scale));
        GP_ROUNDED(x);
      }
      if (epi->bias)
        x = _mm512_add_ps(x, _mm512_maskz_loadu_ps(m, epi->bias + j));
      if (epi->res) {
        __m512 y = _mm512_maskz_loadu_ps(m, epi->res + r * epi->ldres + j);
        x = epi->res_first ? _mm512_add_ps(y, x) : _mm512_add_ps(x, y);
      }
      if (epi->relu) {
        __mmask16 nan = _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
        x = _mm512_mask_mov_ps(_mm512_max_ps(x, zero), nan, x);
      }
      _mm512_mask_storeu_ps(c + j, m, x);
    }
}

void shlo__gemm_epi_apply(const shlo__gemm_epi *epi, int64_t rows, int64_t n,
                          float *c, int64_t ldc) {
  if (!shlo__gemm_epi_any(epi)) return;
  if (!strcmp(shlo__vmath_isa(), "avx512f"))
    epi_apply_avx512(epi, rows, n, c, ldc);
  else
    epi_apply_scalar(epi, rows, n, c, ldc);
}

bool shlo__sgemm_panels_takes(int64_t m, int64_t n, int64_t k) {
  /* the engine's ISA choice, vmath's (made once, then an atomic load) */
  return m >= 1 && n >= 24 && k >= 1 && k <= 4096 &&
         !strcmp(shlo__vmath_isa(), "avx512f");
}

/* c = op(a) * op(b) over its panels. */
static bool panels(gp_a op_a, bool tb, int64_t m, int64_t n, int64_t k,
                   const float *b, int64_t ldb, float *c, int64_t ldc) {
  if (!shlo__sgemm_panels_takes(m, n, k)) return false;
  /* two copies where a panel follows another from an untransposed b: the
   * panel's, and the next one's, made meanwhile */
  size_t copy = (size_t)k * GP_PANEL;
  int copies = !tb && !op_a.rows && n > GP_PANEL ? 2 : 1;
  float *p = shlo__aligned_alloc(copies * copy * sizeof(float));
  if (!p) return false;
  float *cur = p, *next = p + copy;
  bool filled = false; /* cur holds the panel's copy */
  /* panels of 32 columns where c has no more: twice the rows per block */
  int vecs = n <= 32 ? 2 : 4;
  for (int64_t j = 0; j < n; j += 16 * vecs) {
    int64_t width = n - j < 16 * vecs ? n - j : 16 * vecs;
    gp_a pa = op_a;
    if (pa.bias) pa.bias += j;
    if (pa.res) pa.res += j;
    /* the next panel copied by this one's blocks (those after the first
     * where it copies its own: next_share), if there are any */
    int64_t after = j + 16 * vecs;
    bool ahead = copies == 2 && after < n &&
                 m > (filled ? 0 : block_height(vecs, m));
    if (ahead) {
      pa.next_b = b + after;
      pa.next_p = next;
      panel_masks(n - after < 16 * vecs ? n - after : 16 * vecs, pa.next_mask);
    }
    panel(vecs, tb, m, k, pa, tb ? b + j * ldb : b + j, ldb, cur, c + j, ldc,
          width, filled);
    if (ahead) {
      float *t = cur;
      cur = next, next = t;
    }
    filled = ahead;
  }
  shlo__aligned_free(p);
  /* the streamed stores ordered before whatever tells another thread c
   * is done */
  if (op_a.stream) _mm_sfence();
  return true;
}

/* epi's parts (NULL: none) into op_a, where the blocks apply them */
static void with_epi(gp_a *op_a, const shlo__gemm_epi *epi) {
  if (!epi) return;
  op_a->bias = epi->bias;
  op_a->relu = epi->relu;
  op_a->scaled = epi->scaled;
  op_a->scale = epi->scale;
  op_a->res = epi->res;
  op_a->ldres = epi->ldres;
  op_a->res_first = epi->res_first;
  op_a->stream = epi->stream;
}

bool shlo__sgemm_panels(bool ta, bool tb, int64_t m, int64_t n, int64_t k,
                        const float *a, int64_t lda, const float *b,
                        int64_t ldb, float *c, int64_t ldc) {
  return shlo__sgemm_panels_epi(ta, tb, m, n, k, a, lda, b, ldb, c, ldc,
                                NULL);
}

bool shlo__sgemm_panels_epi(bool ta, bool tb, int64_t m, int64_t n,
                            int64_t k, const float *a, int64_t lda,
                            const float *b, int64_t ldb, float *c,
                            int64_t ldc, const shlo__gemm_epi *epi) {
  gp_a op_a = {.a = a, .ars = ta ? 1 : lda, .aks = ta ? lda : 1};
  with_epi(&op_a, epi);
  return panels(op_a, tb, m, n, k, b, ldb, c, ldc);
}

bool shlo__sgemm_panels_gathered(int64_t m, int64_t n, int64_t runs,
                                 int64_t run, const float *const *rows,
                                 const float *b, int64_t ldb, float *c,
                                 int64_t ldc) {
  return shlo__sgemm_panels_gathered_epi(m, n, runs, run, rows, b, ldb, c,
                                         ldc, NULL);
}

bool shlo__sgemm_panels_gathered_epi(int64_t m, int64_t n, int64_t runs,
                                     int64_t run, const float *const *rows,
                                     const float *b, int64_t ldb, float *c,
                                     int64_t ldc, const shlo__gemm_epi *epi) {
  gp_a op_a = {.rows = rows, .runs = runs, .run = run};
  with_epi(&op_a, epi);
  return runs >= 1 && run >= 1 && runs <= INT64_MAX / run &&
         panels(op_a, false, m, n, runs * run, b, ldb, c, ldc);
}


/* shlo__sgemm_panels_packed's blocks: the panel is read in place, never
 * copied (copy_b false), and its masked-off columns are never stored. */
GP_TARGET static void packed_panel(bool ta, int64_t m, int64_t k,
                                   const float *a, int64_t lda,
                                   const float *panel, int64_t width,
                                   const shlo__gemm_epi *epi, float *c,
                                   int64_t ldc) {
  __mmask16 mask[GP_VECS];
  panel_masks(width, mask);
  gp_a op_a = {.a = a, .ars = ta ? 1 : lda, .aks = ta ? lda : 1};
  with_epi(&op_a, epi);
  rows4(false, m, k, op_a, panel, GP_PANEL, (float *)panel, c, ldc, mask);
  if (op_a.stream) _mm_sfence();
}

bool shlo__sgemm_panels_packed(bool ta, int64_t m, int64_t k, const float *a,
                               int64_t lda, const float *panel, int64_t width,
                               const shlo__gemm_epi *epi, float *c,
                               int64_t ldc) {
  if (m < 1 || k < 1 || width < 1 || width > GP_PANEL ||
      strcmp(shlo__vmath_isa(), "avx512f"))
    return false;
  packed_panel(ta, m, k, a, lda, panel, width, epi, c, ldc);
  return true;
}

#else /* no AVX-512 kernel on this compiler or architecture */

void shlo__gemm_epi_apply(const shlo__gemm_epi *epi, int64_t rows, int64_t n,
                          float *c, int64_t ldc) {
  if (epi) epi_apply_scalar(epi, rows, n, c, ldc);
}

bool shlo__sgemm_panels_takes(int64_t m, int64_t n, int64_t k) {
  (void)m, (void)n, (void)k;
  return false;
}

bool shlo__sgemm_panels(bool ta, bool tb, int64_t m, int64_t n, int64_t k,
                        const float *a, int64_t lda, const float *b,
                        int64_t ldb, float *c, int64_t ldc) {
  (void)ta, (void)tb, (void)m, (void)n, (void)k, (void)a, (void)lda, (void)b,
      (void)ldb, (void)c, (void)ldc;
  return false;
}

bool shlo__sgemm_panels_gathered(int64_t m, int64_t n, int64_t runs,
                                 int64_t run, const float *const *rows,
                                 const float *b, int64_t ldb, float *c,
                                 int64_t ldc) {
  (void)m, (void)n, (void)runs, (void)run, (void)rows, (void)b, (void)ldb,
      (void)c, (void)ldc;
  return false;
}

bool shlo__sgemm_panels_epi(bool ta, bool tb, int64_t m, int64_t n,
                            int64_t k, const float *a, int64_t lda,
                            const float *b, int64_t ldb, float *c,
                            int64_t ldc, const shlo__gemm_epi *epi) {
  (void)epi;
  return shlo__sgemm_panels(ta, tb, m, n, k, a, lda, b, ldb, c, ldc);
}

bool shlo__sgemm_panels_gathered_epi(int64_t m, int64_t n, int64_t runs,
                                     int64_t run, const float *const *rows,
                                     const float *b, int64_t ldb, float *c,
                                     int64_t ldc, const shlo__gemm_epi *epi) {
  (void)epi;
  return shlo__sgemm_panels_gathered(m, n, runs, run, rows, b, ldb, c, ldc);
}

bool shlo__sgemm_panels_packed(bool ta, int64_t m, int64_t k, const float *a,
                               int64_t lda, const float *panel, int64_t width,
                               const shlo__gemm_epi *epi, float *c,
                               int64_t ldc) {
  (void)ta, (void)m, (void)k, (void)a, (void)lda, (void)panel, (void)width,
      (void)epi, (void)c, (void)ldc;
  return false;
}
#endif
