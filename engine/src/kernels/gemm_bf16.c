/* SPDX-License-Identifier: Apache-2.0 */
/* bf16 GEMM on VDPBF16PS (see gemm_bf16.h for what it computes and why).
 *
 * The height of a block of rows is a compile-time constant in each
 * instance of block() (always inlined into a switch), so that its
 * accumulators stay in registers. */
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "core/alloc.h"
#include "kernels/gemm_bf16.h"
#include "kernels/vmath.h"
#include "runtime/pool.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && \
    __GNUC__ >= 10
#include <immintrin.h>

#define GB_VECS 4    /* vectors of 16 columns per panel */
#define GB_PANEL 64  /* columns per panel: GB_VECS * 16 */
#define GB_ROWS 6    /* most rows of c per block */
/* The blocks: a's block of GB_MC rows by GB_KC pairs is 288 KiB and a
 * panel's slice of b at most 384 KiB, so both stay in Zen 4's 1 MiB L2
 * while the block's rows pass over the panels.  Measured inside the
 * transformer layer (one thread, mins of 10 interleaved runs): 1536 x 48
 * took its k = 3072 product in 9.97 ms, 768 x 96 in 10.70 (a second
 * slice of k reads and writes c once more), the unblocked loop in 10.20;
 * the k = 768 products ran alike under all three. */
#ifndef GB_KC
#define GB_KC 1536   /* pairs of k per slice */
#endif
#ifndef GB_MC
#define GB_MC 48     /* rows of c per block (a multiple of GB_ROWS) */
#endif

/* the guard's range of |x|'s bf16 pattern: [2^-50, 2^64) */
#define GB_LOW (77u << 7)
#define GB_SPAN ((191u - 77u) << 7)

#define GB_TARGET \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16")))
#define GB_INLINE GB_TARGET __attribute__((always_inline)) static inline

/* The lanes (bf16 halves) of x outside the guard's range: nonzero with
 * |x| below 2^-50 or at least 2^64. */
GB_INLINE __mmask32 outside_guard(__m512i x) {
  __m512i mag = _mm512_and_si512(x, _mm512_set1_epi16(0x7fff));
  __m512i off = _mm512_sub_epi16(mag, _mm512_set1_epi16((short)GB_LOW));
  return _mm512_cmpge_epu16_mask(off, _mm512_set1_epi16((short)GB_SPAN)) &
         _mm512_test_epi16_mask(mag, mag);
}

/* a's rows [0, m) into ap, kq = (k + 1) / 2 dwords a row: dword q holds
 * element 2q in its upper half (the one VDPBF16PS adds first) and 2q + 1
 * (0 past k) in its lower.  Whether any element is outside the guard. */
GB_TARGET static bool pack_a(int64_t m, int64_t k, const uint16_t *a,
                             int64_t lda, uint32_t *ap) {
  int64_t kq = (k + 1) / 2;
  __mmask32 bad = 0;
  for (int64_t r = 0; r < m; r++) {
    const uint16_t *row = a + r * lda;
    uint32_t *dst = ap + r * kq;
    for (int64_t j = 0; j < k; j += 32) {
      int64_t cnt = k - j < 32 ? k - j : 32;
      __mmask32 in = cnt == 32 ? ~(__mmask32)0 : ((__mmask32)1 << cnt) - 1;
      __m512i x = _mm512_maskz_loadu_epi16(in, row + j);
      bad |= outside_guard(x);
      int64_t words = (cnt + 1) / 2;
      __mmask16 out =
          words == 16 ? (__mmask16)0xffff : (__mmask16)((1u << words) - 1);
      _mm512_mask_storeu_epi32(dst + j / 2, out, _mm512_rol_epi32(x, 16));
    }
  }
  return bad != 0;
}

/* x[i] holds row i of a 16 x 16 matrix of dwords; afterwards x[j] holds
 * its column j.  Three rounds of shuffles (dwords within 128-bit lanes,
 * then quadwords, then the lanes themselves), 64 in all: the packing of
 * transposed operands did this with 16-lane gathers and scatters, which
 * cost about as much as a small product's multiply (attention's
 * 64 x 128 x 128 ran at 306 GFLOP/s transposed, 441 plain). */
GB_INLINE void transpose16(__m512i x[16]) {
  __m512i t[16], u[16];
#pragma GCC unroll 8
  for (int i = 0; i < 8; i++) {
    t[2 * i] = _mm512_unpacklo_epi32(x[2 * i], x[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_epi32(x[2 * i], x[2 * i + 1]);
  }
  /* u[4i + c], lane L: column 4L + c of rows 4i .. 4i + 3 */
#pragma GCC unroll 4
  for (int i = 0; i < 4; i++) {
    u[4 * i] = _mm512_unpacklo_epi64(t[4 * i], t[4 * i + 2]);
    u[4 * i + 1] = _mm512_unpackhi_epi64(t[4 * i], t[4 * i + 2]);
    u[4 * i + 2] = _mm512_unpacklo_epi64(t[4 * i + 1], t[4 * i + 3]);
    u[4 * i + 3] = _mm512_unpackhi_epi64(t[4 * i + 1], t[4 * i + 3]);
  }
  /* column 4L + c: lane L of u[c], u[4 + c], u[8 + c], u[12 + c] */
#pragma GCC unroll 4
  for (int c = 0; c < 4; c++) {
    __m512i t0 = _mm512_shuffle_i32x4(u[c], u[4 + c], _MM_SHUFFLE(1, 0, 1, 0));
    __m512i t1 = _mm512_shuffle_i32x4(u[c], u[4 + c], _MM_SHUFFLE(3, 2, 3, 2));
    __m512i t2 =
        _mm512_shuffle_i32x4(u[8 + c], u[12 + c], _MM_SHUFFLE(1, 0, 1, 0));
    __m512i t3 =
        _mm512_shuffle_i32x4(u[8 + c], u[12 + c], _MM_SHUFFLE(3, 2, 3, 2));
    x[c] = _mm512_shuffle_i32x4(t0, t2, _MM_SHUFFLE(2, 0, 2, 0));
    x[4 + c] = _mm512_shuffle_i32x4(t0, t2, _MM_SHUFFLE(3, 1, 3, 1));
    x[8 + c] = _mm512_shuffle_i32x4(t1, t3, _MM_SHUFFLE(2, 0, 2, 0));
    x[12 + c] = _mm512_shuffle_i32x4(t1, t3, _MM_SHUFFLE(3, 1, 3, 1));
  }
}

/* pack_a's work for a stored transposed (k x m, rows lda apart): for 16
 * rows of c and 16 pairs at a time, the pairs of a's rows 2q and 2q + 1
 * side by side (16 rows of c in a vector), then transposed into 16 rows
 * of ap. */
GB_TARGET static bool pack_a_t(int64_t m, int64_t k, const uint16_t *a,
                               int64_t lda, uint32_t *ap) {
  int64_t kq = (k + 1) / 2;
  __mmask32 bad = 0;
  for (int64_t r = 0; r < m; r += 16) {
    int64_t rows = m - r < 16 ? m - r : 16;
    __mmask16 in = (__mmask16)((1u << rows) - 1);
    for (int64_t q0 = 0; q0 < kq; q0 += 16) {
      int64_t pairs = kq - q0 < 16 ? kq - q0 : 16;
      __m512i x[16];
      for (int64_t t = 0; t < 16; t++) {
        int64_t q = q0 + t;
        if (t >= pairs) {
          x[t] = _mm512_setzero_si512();
          continue;
        }
        const uint16_t *even = a + 2 * q * lda + r;
        __m512i hi = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(in, even));
        __m512i lo = _mm512_setzero_si512();
        if (2 * q + 1 < k)
          lo = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(in, even + lda));
        x[t] = _mm512_or_si512(_mm512_slli_epi32(hi, 16), lo);
        bad |= outside_guard(x[t]);
      }
      transpose16(x);
      __mmask16 out = (__mmask16)((1u << pairs) - 1);
      for (int64_t i = 0; i < rows; i++)
        _mm512_mask_storeu_epi32(ap + (r + i) * kq + q0, out, x[i]);
    }
  }
  return bad != 0;
}

/* The panel of b's columns [0, width) (b points at column 0) into p:
 * kq rows of GB_PANEL dwords, dword (q, j) holding b[2q][j] in its upper
 * half and b[2q + 1][j] (0 past k) in its lower; columns past width are
 * 0.  Whether any element is outside the guard. */
GB_TARGET static bool pack_b(int64_t k, const uint16_t *b, int64_t ldb,
                             int64_t width, const __mmask16 *mask,
                             uint32_t *p) {
  __mmask32 bad = 0;
  for (int64_t q = 0; 2 * q < k; q++) {
    const uint16_t *even = b + 2 * q * ldb;
    bool odd = 2 * q + 1 < k;
#pragma GCC unroll 4
    for (int v = 0; v < GB_VECS; v++) {
      __m512i hi = _mm512_cvtepu16_epi32(
          _mm256_maskz_loadu_epi16(mask[v], even + 16 * v));
      __m512i lo = odd ? _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(
                             mask[v], even + ldb + 16 * v))
                       : _mm512_setzero_si512();
      __m512i w = _mm512_or_si512(_mm512_slli_epi32(hi, 16), lo);
      bad |= outside_guard(w);
      _mm512_store_si512(p + (q * GB_VECS + v) * 16, w);
    }
  }
  (void)width;
  return bad != 0;
}

/* pack_b's work for b stored transposed (n x k, rows ldb apart): the
 * pair (2q, 2q + 1) of a column is one dword of its row, its halves
 * swapped; 16 columns by 16 pairs are loaded as rows (masked to k, so an
 * odd k's last dword holds 0 past the row's end) and transposed. */
GB_TARGET static bool pack_b_t(int64_t k, const uint16_t *b, int64_t ldb,
                               int64_t width, uint32_t *p) {
  __mmask32 bad = 0;
  int64_t kq = (k + 1) / 2;
  for (int v = 0; v < GB_VECS; v++) {
    const uint16_t *col = b + 16 * v * ldb;
    int64_t cols = width - 16 * v;
    for (int64_t q0 = 0; q0 < kq; q0 += 16) {
      int64_t left = k - 2 * q0;
      __mmask32 in = left >= 32 ? ~(__mmask32)0 : ((__mmask32)1 << left) - 1;
      __m512i x[16];
      for (int64_t j = 0; j < 16; j++)
        x[j] = j < cols ? _mm512_maskz_loadu_epi16(in, col + j * ldb + 2 * q0)
                        : _mm512_setzero_si512();
      transpose16(x);
      int64_t pairs = kq - q0 < 16 ? kq - q0 : 16;
      for (int64_t t = 0; t < pairs; t++) {
        __m512i w = _mm512_rol_epi32(x[t], 16);
        bad |= outside_guard(w);
        _mm512_store_si512(p + ((q0 + t) * GB_VECS + v) * 16, w);
      }
    }
  }
  return bad != 0;
}

/* Rows [0, R) of a panel of c over kc pairs: the packed a (rows lda
 * dwords apart) against panel slice p.  The first slice of k starts each
 * sum from +0; a later one from the f32 partial sum the slice before it
 * stored in c, so the sums run in the same k order with the same
 * roundings, whatever the split.  Stored under mask. */
GB_INLINE void block(int R, int64_t kc, int64_t lda, const uint32_t *ap,
                     const uint32_t *p, float *c, int64_t ldc,
                     const __mmask16 *mask, bool first) {
  __m512 acc[GB_ROWS][GB_VECS];
#pragma GCC unroll 6
  for (int r = 0; r < R; r++)
#pragma GCC unroll 4
    for (int v = 0; v < GB_VECS; v++)
      acc[r][v] = first ? _mm512_setzero_ps()
                        : _mm512_maskz_loadu_ps(mask[v], c + r * ldc + 16 * v);
  for (int64_t q = 0; q < kc; q++) {
    __m512bh bv[GB_VECS];
#pragma GCC unroll 4
    for (int v = 0; v < GB_VECS; v++)
      bv[v] = (__m512bh)_mm512_load_si512(p + (q * GB_VECS + v) * 16);
#pragma GCC unroll 6
    for (int r = 0; r < R; r++) {
      __m512bh ar = (__m512bh)_mm512_set1_epi32((int)ap[r * lda + q]);
#pragma GCC unroll 4
      for (int v = 0; v < GB_VECS; v++)
        acc[r][v] = _mm512_dpbf16_ps(acc[r][v], ar, bv[v]);
    }
  }
#pragma GCC unroll 6
  for (int r = 0; r < R; r++)
#pragma GCC unroll 4
    for (int v = 0; v < GB_VECS; v++)
      _mm512_mask_storeu_ps(c + r * ldc + 16 * v, mask[v], acc[r][v]);
}

#define GB_BLOCK(R)                                                        \
  case R:                                                                  \
    block(R, kc, lda, ap + i * lda, p, c + i * ldc, ldc, mask, first);     \
    break;

/* All m rows of one panel slice of c, in blocks of 6 and then at most
 * one each of 4, 2 and 1. */
GB_TARGET static void panel_rows(int64_t m, int64_t kc, int64_t lda,
                                 const uint32_t *ap, const uint32_t *p,
                                 float *c, int64_t ldc, const __mmask16 *mask,
                                 bool first) {
  for (int64_t i = 0; i < m;) {
    int64_t left = m - i;
    int R = left >= 6 ? 6 : left >= 4 ? 4 : left >= 2 ? 2 : 1;
    switch (R) { GB_BLOCK(6) GB_BLOCK(4) GB_BLOCK(2) GB_BLOCK(1) }
    i += R;
  }
}

static void panel_masks(int64_t width, __mmask16 *mask) {
  for (int v = 0; v < GB_VECS; v++) {
    int64_t cols = width - 16 * v;
    mask[v] = cols >= 16  ? (__mmask16)0xffff
              : cols <= 0 ? 0
                          : (__mmask16)((1u << cols) - 1);
  }
}

/* One lane-wise VDPBF16PS against the model of gemm_bf16.h, on pairs
 * drawn so that each of the other plausible orders (the even product
 * first, the two products summed first, one rounding) gives other bits in
 * some lanes: whether this CPU adds as the model says. */
GB_TARGET static bool instruction_matches_model(void) {
  uint32_t seed = 12345;
  for (int round = 0; round < 16; round++) {
    uint32_t aw[16], bw[16];
    float s[16], got[16];
    for (int l = 0; l < 16; l++) {
      uint16_t h[5];
      for (int e = 0; e < 5; e++) { /* normal, exponents 2^-7 .. 2^7 */
        seed = seed * 1664525u + 1013904223u;
        h[e] = (uint16_t)(((seed >> 31) << 15) | ((120 + (seed >> 8) % 15) << 7) |
                          ((seed >> 16) & 127));
      }
      aw[l] = (uint32_t)h[0] << 16 | h[1];
      bw[l] = (uint32_t)h[2] << 16 | h[3];
      uint32_t sb = (uint32_t)h[4] << 16;
      memcpy(&s[l], &sb, 4);
    }
    __m512 r = _mm512_dpbf16_ps(_mm512_loadu_ps(s),
                                (__m512bh)_mm512_loadu_si512(aw),
                                (__m512bh)_mm512_loadu_si512(bw));
    _mm512_storeu_ps(got, r);
    for (int l = 0; l < 16; l++) {
      uint32_t x[4] = {aw[l] & 0xffff0000u, aw[l] << 16, bw[l] & 0xffff0000u,
                       bw[l] << 16};
      float f[4];
      memcpy(f, x, sizeof f);
      volatile float odd = f[0] * f[2], even = f[1] * f[3];
      volatile float t = s[l] + odd;
      float want = t + even;
      if (memcmp(&want, &got[l], 4)) return false;
    }
  }
  return true;
}

GB_TARGET static bool in_guard(const uint16_t *x, int64_t n) {
  __mmask32 bad = 0;
  for (int64_t i = 0; i < n; i += 32) {
    __mmask32 in = n - i >= 32 ? ~(__mmask32)0 : ((__mmask32)1 << (n - i)) - 1;
    bad |= outside_guard(_mm512_maskz_loadu_epi16(in, x + i));
  }
  return bad == 0;
}

bool shlo__gemm_bf16_in_guard(const uint16_t *x, int64_t n) {
  return shlo__gemm_bf16_available() && in_guard(x, n);
}

/* 1 usable, 0 not; -1 not yet known */
static atomic_int gb_cpu_ok = -1;

static bool cpu_ok(void) {
  int v = atomic_load_explicit(&gb_cpu_ok, memory_order_relaxed);
  if (v < 0) {
    __builtin_cpu_init();
    v = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl") &&
        __builtin_cpu_supports("avx512bf16") && instruction_matches_model();
    atomic_store_explicit(&gb_cpu_ok, v, memory_order_relaxed);
  }
  return v == 1;
}

bool shlo__gemm_bf16_available(void) {
  return cpu_ok() && !strcmp(shlo__vmath_isa(), "avx512f");
}

/* The blocks of the loops over k and m (see gemm_bf16.h): kc pairs of k
 * and mc rows of c at a time; tests shrink them to reach every edge. */
static int64_t gb_kc = GB_KC, gb_mc = GB_MC;

/* Every panel of op(b)'s n columns into bp, panel after panel, kq * 64
 * dwords each.  Whether any element is outside the guard. */
GB_TARGET static bool pack_b_all(bool tb, int64_t n, int64_t k,
                                 const uint16_t *b, int64_t ldb,
                                 uint32_t *bp) {
  int64_t kq = (k + 1) / 2;
  for (int64_t j = 0; j < n; j += GB_PANEL) {
    int64_t width = n - j < GB_PANEL ? n - j : GB_PANEL;
    __mmask16 mask[GB_VECS];
    panel_masks(width, mask);
    uint32_t *p = bp + j / GB_PANEL * kq * GB_PANEL;
    if (tb ? pack_b_t(k, b + j * ldb, ldb, width, p)
           : pack_b(k, b + j, ldb, width, mask, p))
      return true;
  }
  return false;
}

/* Rows [i0, i0 + mc) and pairs [q0, q0 + kc) of op(a) into ap, kc dwords
 * a row (pack_a's layout on the slice).  Whether any element is outside
 * the guard. */
GB_TARGET static bool pack_a_block(bool ta, int64_t k, const uint16_t *a,
                                   int64_t lda, int64_t i0, int64_t mc,
                                   int64_t q0, int64_t kc, uint32_t *ap) {
  int64_t cnt = k - 2 * q0 < 2 * kc ? k - 2 * q0 : 2 * kc;
  return ta ? pack_a_t(mc, cnt, a + 2 * q0 * lda + i0, lda, ap)
            : pack_a(mc, cnt, a + i0 * lda + 2 * q0, lda, ap);
}

/* c = op(a) op(b) with b packed in bp: slices of kc pairs of k, and
 * within each, blocks of mc rows of op(a), each packed into ap (a buffer
 * of gb_mc * gb_kc dwords that stays in L2) just before every panel's
 * slice of b passes by it.  Whether any element of a is outside the
 * guard (c then partly written). */
GB_TARGET static bool multiply_blocks(bool ta, int64_t m, int64_t n,
                                      int64_t k, const uint16_t *a,
                                      int64_t lda, const uint32_t *bp,
                                      uint32_t *ap, float *c, int64_t ldc) {
  int64_t kq = (k + 1) / 2;
  for (int64_t q0 = 0; q0 < kq; q0 += gb_kc) {
    int64_t kc = kq - q0 < gb_kc ? kq - q0 : gb_kc;
    for (int64_t i0 = 0; i0 < m; i0 += gb_mc) {
      int64_t mc = m - i0 < gb_mc ? m - i0 : gb_mc;
      if (pack_a_block(ta, k, a, lda, i0, mc, q0, kc, ap)) return true;
      for (int64_t j = 0; j < n; j += GB_PANEL) {
        int64_t width = n - j < GB_PANEL ? n - j : GB_PANEL;
        __mmask16 mask[GB_VECS];
        panel_masks(width, mask);
        const uint32_t *p = bp + (j / GB_PANEL * kq + q0) * GB_PANEL;
        panel_rows(mc, kc, kc, ap, p, c + i0 * ldc + j, ldc, mask, q0 == 0);
      }
    }
  }
  return false;
}

void shlo__gemm_bf16_set_blocking(int64_t kc, int64_t mc) {
  gb_kc = kc > 0 ? kc : GB_KC;
  gb_mc = mc > 0 ? mc : GB_MC;
}

/* One product's operands and its packed b, shared by the threads that
 * pack b's panels and multiply blocks of c's rows or panels. */
typedef struct gb_job {
  bool ta, tb;
  int64_t m, n, k, lda, ldb, ldc;
  const uint16_t *a, *b;
  float *c;
  uint32_t *bp; /* every panel of op(b), kq * GB_PANEL dwords each */
  atomic_int declined, nomem;
} gb_job;

/* Panels [lo, hi) of b into j->bp. */
static void gb_pack(void *ctx, int64_t lo, int64_t hi) {
  gb_job *j = ctx;
  int64_t kq = (j->k + 1) / 2;
  int64_t n = hi * GB_PANEL < j->n ? hi * GB_PANEL : j->n;
  const uint16_t *b = j->b + (j->tb ? lo * GB_PANEL * j->ldb : lo * GB_PANEL);
  if (pack_b_all(j->tb, n - lo * GB_PANEL, j->k, b, j->ldb,
                 j->bp + lo * kq * GB_PANEL))
    atomic_store_explicit(&j->declined, 1, memory_order_relaxed);
}

/* Rows [i0, i1) and columns [j0, j1) (j0 a panel's first) of c from the
 * packed b, with a block of a of its own. */
static void gb_multiply(gb_job *j, int64_t i0, int64_t i1, int64_t j0,
                        int64_t j1) {
  if (atomic_load_explicit(&j->declined, memory_order_relaxed)) return;
  int64_t kq = (j->k + 1) / 2, m = i1 - i0;
  int64_t kc = kq < gb_kc ? kq : gb_kc, mc = m < gb_mc ? m : gb_mc;
  uint32_t *ap = shlo__aligned_alloc(sizeof(uint32_t) * (size_t)(mc * kc));
  if (!ap) {
    atomic_store_explicit(&j->nomem, 1, memory_order_relaxed);
    return;
  }
  const uint16_t *a = j->a + (j->ta ? i0 : i0 * j->lda);
  if (multiply_blocks(j->ta, m, j1 - j0, j->k, a, j->lda,
                      j->bp + j0 / GB_PANEL * kq * GB_PANEL, ap,
                      j->c + i0 * j->ldc + j0, j->ldc))
    atomic_store_explicit(&j->declined, 1, memory_order_relaxed);
  shlo__aligned_free(ap);
}

static void gb_rows(void *ctx, int64_t lo, int64_t hi) {
  gb_job *j = ctx;
  gb_multiply(j, lo, hi, 0, j->n);
}

static void gb_panels(void *ctx, int64_t lo, int64_t hi) {
  gb_job *j = ctx;
  gb_multiply(j, 0, j->m, lo * GB_PANEL,
              hi * GB_PANEL < j->n ? hi * GB_PANEL : j->n);
}

/* Multiply-adds worth a split (linalg_common.c's threshold). */
#define GB_SPLIT_MIN ((int64_t)1 << 18)

/* The product on `threads` threads (1: the calling one alone).  b's
 * panels are packed once, split over the threads; then each thread takes
 * whole blocks of rows of c (each packing only its own rows of a), or,
 * where there are too few rows for a block each, whole panels.  Each
 * element's sum is computed by one thread, in the same order. */
static int gb_run(bool ta, bool tb, int64_t m, int64_t n, int64_t k,
                  const uint16_t *a, int64_t lda, const uint16_t *b,
                  int64_t ldb, float *c, int64_t ldc, int threads) {
  if (!shlo__gemm_bf16_available()) return 0;
  if (m <= 0 || n <= 0) return 1;
  if (k <= 0) {
    for (int64_t i = 0; i < m; i++) memset(c + i * ldc, 0, sizeof(float) * (size_t)n);
    return 1;
  }
  int64_t kq = (k + 1) / 2;
  int64_t panels = (n + GB_PANEL - 1) / GB_PANEL;
  gb_job j = {.ta = ta, .tb = tb, .m = m, .n = n, .k = k, .lda = lda,
              .ldb = ldb, .ldc = ldc, .a = a, .b = b, .c = c};
  atomic_init(&j.declined, 0);
  atomic_init(&j.nomem, 0);
  j.bp = shlo__aligned_alloc(sizeof(uint32_t) *
                             (size_t)(panels * kq * GB_PANEL));
  if (!j.bp) return -1;
  if (threads <= 1) {
    gb_pack(&j, 0, panels);
    gb_rows(&j, 0, m);
  } else {
    shlo__parallel_for(panels, (panels + threads - 1) / threads, gb_pack, &j);
    if (m >= threads * (gb_mc / 2)) {
      /* rows by 6, one share per thread */
      int64_t share = (m + threads - 1) / threads;
      int64_t grain = (share + GB_ROWS - 1) / GB_ROWS * GB_ROWS;
      shlo__parallel_for(m, grain, gb_rows, &j);
    } else {
      shlo__parallel_for(panels, (panels + threads - 1) / threads, gb_panels,
                         &j);
    }
  }
  shlo__aligned_free(j.bp);
  if (atomic_load(&j.nomem)) return -1;
  return atomic_load(&j.declined) ? 0 : 1;
}

int shlo__gemm_bf16_serial(bool ta, bool tb, int64_t m, int64_t n,
                           int64_t k, const uint16_t *a, int64_t lda,
                           const uint16_t *b, int64_t ldb, float *c,
                           int64_t ldc) {
  return gb_run(ta, tb, m, n, k, a, lda, b, ldb, c, ldc, 1);
}

int shlo__gemm_bf16(bool ta, bool tb, int64_t m, int64_t n, int64_t k,
                    const uint16_t *a, int64_t lda, const uint16_t *b,
                    int64_t ldb, float *c, int64_t ldc) {
  int threads = shlo__pool_threads();
  if (m * n * k < GB_SPLIT_MIN) threads = 1;
  return gb_run(ta, tb, m, n, k, a, lda, b, ldb, c, ldc, threads);
}

#else /* no AVX512_BF16 kernel on this compiler or architecture */

bool shlo__gemm_bf16_available(void) { return false; }

bool shlo__gemm_bf16_in_guard(const uint16_t *x, int64_t n) {
  (void)x, (void)n;
  return false;
}

int shlo__gemm_bf16_serial(bool ta, bool tb, int64_t m, int64_t n,
                           int64_t k, const uint16_t *a, int64_t lda,
                           const uint16_t *b, int64_t ldb, float *c,
                           int64_t ldc) {
  (void)ta, (void)tb, (void)m, (void)n, (void)k, (void)a, (void)lda, (void)b, (void)ldb, (void)c,
      (void)ldc;
  return 0;
}
void shlo__gemm_bf16_set_blocking(int64_t kc, int64_t mc) {
  (void)kc, (void)mc;
}

int shlo__gemm_bf16(bool ta, bool tb, int64_t m, int64_t n, int64_t k,
                    const uint16_t *a, int64_t lda, const uint16_t *b,
                    int64_t ldb, float *c, int64_t ldc) {
  return shlo__gemm_bf16_serial(ta, tb, m, n, k, a, lda, b, ldb, c, ldc);
}
#endif
