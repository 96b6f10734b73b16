/* SPDX-License-Identifier: Apache-2.0 */
/* Integer GEMM for quantized dot_general (see qgemm.h for when and why).
 *
 * Layout.  a is packed once per call into bytes ua = a + c0, with c0 = 128
 * for signed storage (a u8 then) and 0 for unsigned, each row padded with
 * zeros to kp, a multiple of 4.  w is packed per block of QG_NB columns,
 * on the thread that uses it, while the block is in cache: for each group
 * g of 4 rows, QG_NB columns of 4 bytes (w[4g..4g+3][j]), zeros past k and
 * past n.  That is VPDPBUSD's operand layout (it adds four u8 x s8
 * products into each 32-bit lane), and every variant reads it.
 *
 * Sums.  D[i][j] = sum_k ua[i][k] * w[k][j], and then
 *   S[i][j] = D - (c0 + za) colsum_j - zw_j rowsum_i + k za zw_j
 * with colsum_j = sum_k w[k][j] and rowsum_i = sum_k a[i][k], all in
 * wrapping 32-bit arithmetic: exact modulo 2^32, so exact when |S| < 2^31,
 * which the compiler's bound guarantees. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/floatfmt.h"
#include "core/tensor_uninit.h"
#include "core/value.h"
#include "kernels/kernel.h"
#include "kernels/qgemm.h"
#include "runtime/pool.h"

#define QG_NB 64            /* columns per packed block of w */
#define QG_GB (QG_NB * 4)   /* bytes per group of 4 rows in a block */
#define QG_MR 6             /* most rows of c per register block */
#define QG_PACK_BLOCKS 4    /* most blocks packed in one pass over w */
#define QG_PACK_BYTES ((int64_t)1 << 20) /* most bytes packed at once */
#define QG_PREFETCH 32      /* rows of w ahead while packing */
#define QG_SPLIT_MIN ((int64_t)1 << 20) /* multiply-adds worth a split */

/* Pack the nblk blocks of w's columns from j0 (see above), block i into
 * bp + i * bstride, and their column sums into colsum (QG_NB entries per
 * block, zero past n).  Several blocks at once read longer runs of each
 * row: every row of w is in another page, and one cache line per page
 * visit left the packing bound by the latency of the misses. */
typedef void (*qg_pack_fn)(const int8_t *w, int64_t k, int64_t n,
                           int64_t j0, int nblk, int64_t bstride,
                           uint8_t *bp, int32_t *colsum);
/* tile[r * QG_NB + j] = D over rows [0, rows) of ua (row stride kp) and
 * the packed block bp, rows <= QG_MR; wrapping sums. */
typedef void (*qg_tile_fn)(int rows, const uint8_t *ua, int64_t kp,
                           const uint8_t *bp, int32_t *tile);
/* c[r * ldc + j] = clamp(cmin, tile[r * QG_NB + j] + corr[j] - zw[j] *
 * rowsum[r], cmax) for r < rows, j < cols, in wrapping 32-bit arithmetic;
 * corr and zw hold QG_NB entries. */
typedef struct qg_out {
  const uint32_t *corr;
  const int32_t *zw;
  const uint32_t *rowsum;
  int32_t cmin, cmax;
  int32_t *c;
  int64_t ldc;
} qg_out;
typedef void (*qg_store_fn)(const qg_out *o, int rows, int cols,
                            const int32_t *tile);

static void store_portable(const qg_out *o, int rows, int cols,
                           const int32_t *tile) {
  for (int r = 0; r < rows; r++) {
    uint32_t rs = o->rowsum[r];
    int32_t *crow = o->c + r * o->ldc;
    for (int j = 0; j < cols; j++) {
      uint32_t s = (uint32_t)tile[r * QG_NB + j] + o->corr[j] -
                   (uint32_t)o->zw[j] * rs;
      int32_t v = (int32_t)s;
      crow[j] = v < o->cmin ? o->cmin : v > o->cmax ? o->cmax : v;
    }
  }
}

/* ---- portable variant: the reference the others must equal ---- */

static void pack1_portable(const int8_t *w, int64_t k, int64_t n, int64_t j0,
                           uint8_t *bp, int32_t *colsum) {
  int64_t cols = n - j0 < QG_NB ? n - j0 : QG_NB;
  memset(colsum, 0, QG_NB * sizeof *colsum);
  for (int64_t g = 0; 4 * g < k; g++)
    for (int64_t c = 0; c < QG_NB; c++)
      for (int t = 0; t < 4; t++) {
        int64_t kk = 4 * g + t;
        int8_t v = kk < k && c < cols ? w[kk * n + j0 + c] : 0;
        bp[g * QG_GB + c * 4 + t] = (uint8_t)v;
        colsum[c] += v;
      }
}

static void pack_portable(const int8_t *w, int64_t k, int64_t n, int64_t j0,
                          int nblk, int64_t bstride, uint8_t *bp,
                          int32_t *colsum) {
  for (int i = 0; i < nblk; i++)
    pack1_portable(w, k, n, j0 + i * QG_NB, bp + i * bstride, colsum + i * QG_NB);
}

static void tile_portable(int rows, const uint8_t *ua, int64_t kp,
                          const uint8_t *bp, int32_t *tile) {
  for (int r = 0; r < rows; r++)
    for (int c = 0; c < QG_NB; c++) {
      uint32_t s = 0;
      for (int64_t kk = 0; kk < kp; kk++)
        s += (uint32_t)(ua[r * kp + kk] *
                        (int8_t)bp[(kk / 4) * QG_GB + c * 4 + kk % 4]);
      tile[r * QG_NB + c] = (int32_t)s;
    }
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define QG_T512 __attribute__((target("avx512f,avx512bw")))
#define QG_TVNNI __attribute__((target("avx512f,avx512bw,avx512vnni")))
#define QG_T256 __attribute__((target("avx2")))
#define QG_INLINE __attribute__((always_inline)) static inline

/* 4 bytes of a row of ua as one 32-bit lane value. */
static inline int32_t ua_quad(const uint8_t *p) {
  int32_t x;
  memcpy(&x, p, sizeof x);
  return x;
}

/* ---- AVX-512 (BW): pack, and D by VPDPBUSD or its emulation ---- */

QG_T512 static void store_avx512(const qg_out *o, int rows, int cols,
                                 const int32_t *tile) {
  const __m512i lo = _mm512_set1_epi32(o->cmin), hi = _mm512_set1_epi32(o->cmax);
  for (int q = 0; q < 4 && 16 * q < cols; q++) {
    int left = cols - 16 * q;
    __mmask16 mask = left >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << left) - 1);
    __m512i corr = _mm512_loadu_si512((const void *)(o->corr + 16 * q));
    __m512i zw = _mm512_loadu_si512((const void *)(o->zw + 16 * q));
    for (int r = 0; r < rows; r++) {
      __m512i d = _mm512_loadu_si512((const void *)(tile + r * QG_NB + 16 * q));
      __m512i rs = _mm512_set1_epi32((int32_t)o->rowsum[r]);
      d = _mm512_sub_epi32(_mm512_add_epi32(d, corr), _mm512_mullo_epi32(zw, rs));
      d = _mm512_min_epi32(_mm512_max_epi32(d, lo), hi);
      _mm512_mask_storeu_epi32(o->c + r * o->ldc + 16 * q, mask, d);
    }
  }
}

QG_T512 static void pack_avx512(const int8_t *w, int64_t k, int64_t n,
                                int64_t j0, int nblk, int64_t bstride,
                                uint8_t *bp, int32_t *colsum) {
  const __m512i ones8 = _mm512_set1_epi8(1), ones16 = _mm512_set1_epi16(1);
  __mmask64 mask[QG_PACK_BLOCKS];
  for (int i = 0; i < nblk; i++) {
    int64_t cols = n - j0 - i * QG_NB < QG_NB ? n - j0 - i * QG_NB : QG_NB;
    mask[i] = cols == 64 ? ~(__mmask64)0 : ((__mmask64)1 << cols) - 1;
    memset(colsum + i * QG_NB, 0, QG_NB * sizeof *colsum);
  }
  for (int64_t g = 0; 4 * g < k; g++) {
    for (int i = 0; i < nblk; i++) {
      const int8_t *wb = w + j0 + i * QG_NB;
      __m512i r[4];
#pragma GCC unroll 4
      for (int t = 0; t < 4; t++) {
        int64_t kk = 4 * g + t;
        if (kk + QG_PREFETCH < k)
          _mm_prefetch((const char *)(wb + (kk + QG_PREFETCH) * n), _MM_HINT_T0);
        r[t] = kk < k ? _mm512_maskz_loadu_epi8(mask[i], wb + kk * n)
                      : _mm512_setzero_si512();
      }
      /* byte interleave of the 4 rows: in each 128-bit lane L, u_q holds
       * columns 16L + 4q .. 16L + 4q + 3, 4 bytes each */
      __m512i t0 = _mm512_unpacklo_epi8(r[0], r[1]);
      __m512i t1 = _mm512_unpackhi_epi8(r[0], r[1]);
      __m512i t2 = _mm512_unpacklo_epi8(r[2], r[3]);
      __m512i t3 = _mm512_unpackhi_epi8(r[2], r[3]);
      __m512i u0 = _mm512_unpacklo_epi16(t0, t2);
      __m512i u1 = _mm512_unpackhi_epi16(t0, t2);
      __m512i u2 = _mm512_unpacklo_epi16(t1, t3);
      __m512i u3 = _mm512_unpackhi_epi16(t1, t3);
      /* transpose the 4 x 4 lanes: out_q = columns 16q .. 16q + 15 */
      __m512i v0 = _mm512_shuffle_i32x4(u0, u1, 0x44);
      __m512i v1 = _mm512_shuffle_i32x4(u2, u3, 0x44);
      __m512i v2 = _mm512_shuffle_i32x4(u0, u1, 0xEE);
      __m512i v3 = _mm512_shuffle_i32x4(u2, u3, 0xEE);
      __m512i out[4] = {_mm512_shuffle_i32x4(v0, v1, 0x88),
                        _mm512_shuffle_i32x4(v0, v1, 0xDD),
                        _mm512_shuffle_i32x4(v2, v3, 0x88),
                        _mm512_shuffle_i32x4(v2, v3, 0xDD)};
      uint8_t *dst = bp + i * bstride + g * QG_GB;
      int32_t *cs = colsum + i * QG_NB;
#pragma GCC unroll 4
      for (int q = 0; q < 4; q++) {
        _mm512_store_si512((void *)(dst + 64 * q), out[q]);
        /* 1 * w summed by pairs (at most 2 * 128: no saturation), then
         * pairs of pairs into the column's lane */
        __m512i part = _mm512_madd_epi16(_mm512_maddubs_epi16(ones8, out[q]), ones16);
        __m512i sum = _mm512_loadu_si512((const void *)(cs + 16 * q));
        _mm512_storeu_si512((void *)(cs + 16 * q), _mm512_add_epi32(sum, part));
      }
    }
  }
}

QG_INLINE QG_TVNNI void tile_vnni_r(const int R, const uint8_t *ua, int64_t kp,
                                    const uint8_t *bp, int32_t *tile) {
  __m512i acc[QG_MR][4];
  #pragma GCC unroll 8
  for (int r = 0; r < R; r++)
    #pragma GCC unroll 8
    for (int q = 0; q < 4; q++) acc[r][q] = _mm512_setzero_si512();
  for (int64_t g = 0; g < kp / 4; g++) {
    const uint8_t *b = bp + g * QG_GB;
    __m512i b0 = _mm512_load_si512((const void *)b);
    __m512i b1 = _mm512_load_si512((const void *)(b + 64));
    __m512i b2 = _mm512_load_si512((const void *)(b + 128));
    __m512i b3 = _mm512_load_si512((const void *)(b + 192));
    #pragma GCC unroll 8
    for (int r = 0; r < R; r++) {
      __m512i av = _mm512_set1_epi32(ua_quad(ua + r * kp + 4 * g));
      acc[r][0] = _mm512_dpbusd_epi32(acc[r][0], av, b0);
      acc[r][1] = _mm512_dpbusd_epi32(acc[r][1], av, b1);
      acc[r][2] = _mm512_dpbusd_epi32(acc[r][2], av, b2);
      acc[r][3] = _mm512_dpbusd_epi32(acc[r][3], av, b3);
    }
  }
  #pragma GCC unroll 8
  for (int r = 0; r < R; r++)
    #pragma GCC unroll 8
    for (int q = 0; q < 4; q++)
      _mm512_storeu_si512((void *)(tile + r * QG_NB + 16 * q), acc[r][q]);
}

QG_TVNNI static void tile_vnni(int rows, const uint8_t *ua, int64_t kp,
                               const uint8_t *bp, int32_t *tile) {
  switch (rows) {
  case 1: tile_vnni_r(1, ua, kp, bp, tile); break;
  case 2: tile_vnni_r(2, ua, kp, bp, tile); break;
  case 3: tile_vnni_r(3, ua, kp, bp, tile); break;
  case 4: tile_vnni_r(4, ua, kp, bp, tile); break;
  case 5: tile_vnni_r(5, ua, kp, bp, tile); break;
  default: tile_vnni_r(6, ua, kp, bp, tile); break;
  }
}

/* VPDPBUSD without VNNI: split each 32-bit lane's bytes into the even
 * (0, 2) and odd (1, 3) ones as 16-bit values, ua zero-extended and w
 * sign-extended; two VPMADDWD give the four products' sum exactly (each
 * pair at most 2 * 255 * 128). */
QG_INLINE QG_T512 void tile_bw_r(const int R, const uint8_t *ua, int64_t kp,
                                 const uint8_t *bp, int32_t *tile) {
  const __m512i lo8 = _mm512_set1_epi16(0x00FF);
  __m512i acc[4][4];
  #pragma GCC unroll 8
  for (int r = 0; r < R; r++)
    #pragma GCC unroll 8
    for (int q = 0; q < 4; q++) acc[r][q] = _mm512_setzero_si512();
  for (int64_t g = 0; g < kp / 4; g++) {
    const uint8_t *b = bp + g * QG_GB;
    __m512i we[4], wo[4];
    #pragma GCC unroll 8
    for (int q = 0; q < 4; q++) {
      __m512i bq = _mm512_load_si512((const void *)(b + 64 * q));
      we[q] = _mm512_srai_epi16(_mm512_slli_epi16(bq, 8), 8);
      wo[q] = _mm512_srai_epi16(bq, 8);
    }
    #pragma GCC unroll 8
    for (int r = 0; r < R; r++) {
      __m512i av = _mm512_set1_epi32(ua_quad(ua + r * kp + 4 * g));
      __m512i ae = _mm512_and_si512(av, lo8), ao = _mm512_srli_epi16(av, 8);
      #pragma GCC unroll 8
      for (int q = 0; q < 4; q++)
        acc[r][q] = _mm512_add_epi32(
            acc[r][q], _mm512_add_epi32(_mm512_madd_epi16(ae, we[q]),
                                        _mm512_madd_epi16(ao, wo[q])));
    }
  }
  #pragma GCC unroll 8
  for (int r = 0; r < R; r++)
    #pragma GCC unroll 8
    for (int q = 0; q < 4; q++)
      _mm512_storeu_si512((void *)(tile + r * QG_NB + 16 * q), acc[r][q]);
}

QG_T512 static void tile_bw(int rows, const uint8_t *ua, int64_t kp,
                            const uint8_t *bp, int32_t *tile) {
  while (rows > 0) {
    int now = rows > 4 ? 4 : rows;
    switch (now) {
    case 1: tile_bw_r(1, ua, kp, bp, tile); break;
    case 2: tile_bw_r(2, ua, kp, bp, tile); break;
    case 3: tile_bw_r(3, ua, kp, bp, tile); break;
    default: tile_bw_r(4, ua, kp, bp, tile); break;
    }
    rows -= now;
    ua += now * kp;
    tile += now * QG_NB;
  }
}

/* ---- AVX2: the same pack by 32-column halves, the same emulation ---- */

QG_T256 static void pack1_avx2(const int8_t *w, int64_t k, int64_t n,
                               int64_t j0, uint8_t *bp, int32_t *colsum) {
  int64_t cols = n - j0 < QG_NB ? n - j0 : QG_NB;
  const __m256i ones8 = _mm256_set1_epi8(1), ones16 = _mm256_set1_epi16(1);
  __m256i sum[8];
  for (int q = 0; q < 8; q++) sum[q] = _mm256_setzero_si256();
  uint8_t row[4][QG_NB]; /* a tail block's rows, zero past n */
  for (int64_t g = 0; 4 * g < k; g++) {
    const uint8_t *src[4];
    for (int t = 0; t < 4; t++) {
      int64_t kk = 4 * g + t;
      if (kk < k && cols == QG_NB) {
        src[t] = (const uint8_t *)(w + kk * n + j0);
      } else {
        memset(row[t], 0, QG_NB);
        if (kk < k) memcpy(row[t], w + kk * n + j0, (size_t)cols);
        src[t] = row[t];
      }
    }
    for (int h = 0; h < 2; h++) {
      __m256i r[4];
#pragma GCC unroll 4
      for (int t = 0; t < 4; t++)
        r[t] = _mm256_loadu_si256((const __m256i *)(src[t] + 32 * h));
      __m256i t0 = _mm256_unpacklo_epi8(r[0], r[1]);
      __m256i t1 = _mm256_unpackhi_epi8(r[0], r[1]);
      __m256i t2 = _mm256_unpacklo_epi8(r[2], r[3]);
      __m256i t3 = _mm256_unpackhi_epi8(r[2], r[3]);
      __m256i u0 = _mm256_unpacklo_epi16(t0, t2);
      __m256i u1 = _mm256_unpackhi_epi16(t0, t2);
      __m256i u2 = _mm256_unpacklo_epi16(t1, t3);
      __m256i u3 = _mm256_unpackhi_epi16(t1, t3);
      __m256i out[4] = {_mm256_permute2x128_si256(u0, u1, 0x20),
                        _mm256_permute2x128_si256(u2, u3, 0x20),
                        _mm256_permute2x128_si256(u0, u1, 0x31),
                        _mm256_permute2x128_si256(u2, u3, 0x31)};
#pragma GCC unroll 4
      for (int p = 0; p < 4; p++) {
        _mm256_store_si256((__m256i *)(bp + g * QG_GB + 128 * h + 32 * p), out[p]);
        sum[4 * h + p] = _mm256_add_epi32(
            sum[4 * h + p],
            _mm256_madd_epi16(_mm256_maddubs_epi16(ones8, out[p]), ones16));
      }
    }
  }
  for (int q = 0; q < 8; q++) _mm256_storeu_si256((__m256i *)(colsum + 8 * q), sum[q]);
}

QG_T256 static void pack_avx2(const int8_t *w, int64_t k, int64_t n,
                              int64_t j0, int nblk, int64_t bstride,
                              uint8_t *bp, int32_t *colsum) {
  for (int i = 0; i < nblk; i++)
    pack1_avx2(w, k, n, j0 + i * QG_NB, bp + i * bstride, colsum + i * QG_NB);
}

/* Rows [0, R) over the 16 columns at byte offset 64 * quarter of each
 * group. */
QG_INLINE QG_T256 void tile_avx2_r(const int R, const uint8_t *ua, int64_t kp,
                                   const uint8_t *bp, int quarter,
                                   int32_t *tile) {
  const __m256i lo8 = _mm256_set1_epi16(0x00FF);
  __m256i acc[4][2];
  #pragma GCC unroll 8
  for (int r = 0; r < R; r++)
    acc[r][0] = acc[r][1] = _mm256_setzero_si256();
  for (int64_t g = 0; g < kp / 4; g++) {
    const uint8_t *b = bp + g * QG_GB + 64 * quarter;
    __m256i we[2], wo[2];
    #pragma GCC unroll 8
    for (int v = 0; v < 2; v++) {
      __m256i bv = _mm256_load_si256((const __m256i *)(b + 32 * v));
      we[v] = _mm256_srai_epi16(_mm256_slli_epi16(bv, 8), 8);
      wo[v] = _mm256_srai_epi16(bv, 8);
    }
    #pragma GCC unroll 8
    for (int r = 0; r < R; r++) {
      __m256i av = _mm256_set1_epi32(ua_quad(ua + r * kp + 4 * g));
      __m256i ae = _mm256_and_si256(av, lo8), ao = _mm256_srli_epi16(av, 8);
      #pragma GCC unroll 8
      for (int v = 0; v < 2; v++)
        acc[r][v] = _mm256_add_epi32(
            acc[r][v], _mm256_add_epi32(_mm256_madd_epi16(ae, we[v]),
                                        _mm256_madd_epi16(ao, wo[v])));
    }
  }
  #pragma GCC unroll 8
  for (int r = 0; r < R; r++)
    #pragma GCC unroll 8
    for (int v = 0; v < 2; v++)
      _mm256_storeu_si256((__m256i *)(tile + r * QG_NB + 16 * quarter + 8 * v),
                          acc[r][v]);
}

QG_T256 static void tile_avx2(int rows, const uint8_t *ua, int64_t kp,
                              const uint8_t *bp, int32_t *tile) {
  while (rows > 0) {
    int now = rows > 4 ? 4 : rows;
    for (int quarter = 0; quarter < 4; quarter++) switch (now) {
      case 1: tile_avx2_r(1, ua, kp, bp, quarter, tile); break;
      case 2: tile_avx2_r(2, ua, kp, bp, quarter, tile); break;
      case 3: tile_avx2_r(3, ua, kp, bp, quarter, tile); break;
      default: tile_avx2_r(4, ua, kp, bp, quarter, tile); break;
      }
    rows -= now;
    ua += now * kp;
    tile += now * QG_NB;
  }
}
#endif

/* ---- choice of variant ---- */

typedef struct qg_variant {
  const char *isa;
  qg_pack_fn pack;
  qg_tile_fn tile;
  qg_store_fn store;
} qg_variant;

static const qg_variant qg_variants[] = {
#if defined(__x86_64__) && defined(__GNUC__)
    {"avx512vnni", pack_avx512, tile_vnni, store_avx512},
    {"avx512bw", pack_avx512, tile_bw, store_avx512},
    {"avx2", pack_avx2, tile_avx2, store_portable},
#endif
    {"portable", pack_portable, tile_portable, store_portable},
};
enum { QG_N_VARIANTS = sizeof qg_variants / sizeof qg_variants[0] };

static bool qg_can_run(const qg_variant *v) {
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  bool bw = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw");
  if (!strcmp(v->isa, "avx512vnni")) return bw && __builtin_cpu_supports("avx512vnni");
  if (!strcmp(v->isa, "avx512bw")) return bw;
  if (!strcmp(v->isa, "avx2")) return __builtin_cpu_supports("avx2");
#endif
  return !strcmp(v->isa, "portable");
}

static _Atomic(const qg_variant *) qg_chosen;

static const qg_variant *qg_now(void) {
  const qg_variant *v = atomic_load_explicit(&qg_chosen, memory_order_acquire);
  if (v) return v;
  for (int i = 0; i < QG_N_VARIANTS; i++)
    if (qg_can_run(&qg_variants[i])) {
      v = &qg_variants[i];
      break;
    }
  atomic_store_explicit(&qg_chosen, v, memory_order_release);
  return v;
}

const char *shlo__qgemm_isa(void) { return qg_now()->isa; }

bool shlo__qgemm_use_isa(const char *isa) {
  for (int i = 0; i < QG_N_VARIANTS; i++)
    if (!strcmp(qg_variants[i].isa, isa)) {
      if (!qg_can_run(&qg_variants[i])) return false;
      atomic_store_explicit(&qg_chosen, &qg_variants[i], memory_order_release);
      return true;
    }
  return false;
}

/* ---- the GEMM ---- */

typedef struct qg_job {
  const shlo__qgemm *g;
  const qg_variant *v;
  const uint8_t *ua;      /* m x kp */
  const uint32_t *rowsum; /* m */
  int64_t kp;
  uint32_t c0;            /* 128 for signed a, else 0 */
  atomic_bool nomem;
} qg_job;

/* Blocks [lo, hi) of QG_NB columns, all rows. */
static void qg_blocks(void *ctx, int64_t lo, int64_t hi) {
  qg_job *j = ctx;
  const shlo__qgemm *g = j->g;
  int64_t bstride = (j->kp / 4) * QG_GB;
  int nblk_max = hi - lo < QG_PACK_BLOCKS ? (int)(hi - lo) : QG_PACK_BLOCKS;
  /* a long k packs fewer blocks at once: a thread's buffer stays near
   * QG_PACK_BYTES (one block is the least) */
  while (nblk_max > 1 && nblk_max * bstride > QG_PACK_BYTES) nblk_max--;
  uint8_t *bp = shlo__aligned_alloc((size_t)(nblk_max * bstride));
  if (!bp) {
    atomic_store(&j->nomem, true);
    return;
  }
  _Alignas(64) int32_t tile[QG_MR * QG_NB];
  int32_t colsum[QG_PACK_BLOCKS * QG_NB], zw[QG_NB];
  uint32_t corr[QG_NB];
  const uint32_t zak = (uint32_t)g->za * (uint32_t)g->k;
  for (int64_t b0 = lo; b0 < hi; b0 += nblk_max) {
    int nblk = hi - b0 < nblk_max ? (int)(hi - b0) : nblk_max;
    j->v->pack(g->w, g->k, g->n, b0 * QG_NB, nblk, bstride, bp, colsum);
    for (int i = 0; i < nblk; i++) {
      int64_t j0 = (b0 + i) * QG_NB;
      int cols = (int)(g->n - j0 < QG_NB ? g->n - j0 : QG_NB);
      for (int c = 0; c < QG_NB; c++) {
        zw[c] = c < cols ? g->zw[j0 + c] : 0;
        corr[c] = zak * (uint32_t)zw[c] -
                  (j->c0 + (uint32_t)g->za) * (uint32_t)colsum[i * QG_NB + c];
      }
      for (int64_t i0 = 0; i0 < g->m; i0 += QG_MR) {
        int rows = (int)(g->m - i0 < QG_MR ? g->m - i0 : QG_MR);
        j->v->tile(rows, j->ua + i0 * j->kp, j->kp, bp + i * bstride, tile);
        qg_out o = {corr, zw, j->rowsum + i0, g->cmin, g->cmax,
                    g->c + i0 * g->n + j0, g->n};
        j->v->store(&o, rows, cols, tile);
      }
    }
  }
  shlo__aligned_free(bp);
}

/* ua and the row sums of a (see the top of the file). */
static void qg_pack_a(const shlo__qgemm *g, int64_t kp, uint32_t c0,
                      uint8_t *ua, uint32_t *rowsum) {
  for (int64_t i = 0; i < g->m; i++) {
    uint8_t *dst = ua + i * kp;
    uint32_t s = 0;
    if (g->a_unsigned) {
      const uint8_t *src = (const uint8_t *)g->a + i * g->k;
      for (int64_t kk = 0; kk < g->k; kk++) {
        dst[kk] = src[kk];
        s += src[kk];
      }
    } else {
      const int8_t *src = (const int8_t *)g->a + i * g->k;
      for (int64_t kk = 0; kk < g->k; kk++) {
        dst[kk] = (uint8_t)(src[kk] + (int32_t)c0);
        s += (uint32_t)(int32_t)src[kk];
      }
    }
    memset(dst + g->k, 0, (size_t)(kp - g->k));
    rowsum[i] = s;
  }
}

bool shlo__qgemm_run(const shlo__qgemm *g) {
  if (g->m == 0 || g->n == 0) return true;
  if (g->k == 0) { /* empty sums: 0, clamped as any other */
    int32_t zero = 0 < g->cmin ? g->cmin : 0 > g->cmax ? g->cmax : 0;
    for (int64_t i = 0; i < g->m * g->n; i++) g->c[i] = zero;
    return true;
  }
  int64_t kp = (g->k + 3) / 4 * 4;
  uint8_t *ua = shlo__aligned_alloc((size_t)(g->m * kp));
  uint32_t *rowsum = shlo__malloc((size_t)g->m * sizeof *rowsum);
  if (!ua || !rowsum) {
    shlo__aligned_free(ua);
    shlo__free(rowsum);
    return false;
  }
  qg_job j = {.g = g, .v = qg_now(), .ua = ua, .rowsum = rowsum, .kp = kp,
              .c0 = g->a_unsigned ? 0 : 128};
  atomic_init(&j.nomem, false);
  qg_pack_a(g, kp, j.c0, ua, rowsum);
  int64_t blocks = (g->n + QG_NB - 1) / QG_NB;
  int threads = shlo__pool_threads();
  if (threads > 1 && blocks > 1 && g->m * g->n * g->k >= QG_SPLIT_MIN)
    shlo__parallel_for(blocks, (blocks + threads - 1) / threads, qg_blocks, &j);
  else
    qg_blocks(&j, 0, blocks);
  shlo__aligned_free(ua);
  shlo__free(rowsum);
  return !atomic_load(&j.nomem);
}

/* ---- quantized dot_general through the integer GEMM ---- */

typedef struct qg_params {
  int64_t m, n, k;
  bool a_unsigned;
  int32_t za;
  int32_t *zw;          /* n */
  int32_t cmin, cmax;
  shlo_elem_type storage; /* the result's */
  const shlo_quant *quant; /* the result's, borrowed from the module */
} qg_params;

static void qg_params_free(void *p_) {
  qg_params *p = p_;
  if (!p) return;
  shlo__free(p->zw);
  shlo__free(p);
}

static shlo_status k_qgemm(const shlo_step *s, shlo_value *const *in,
                           shlo_value **out, shlo_exec *ex) {
  const qg_params *p = s->params;
  const shlo_value *a = in[0], *w = in[1];
  if (a->kind != SHLO_TYPE_TENSOR || w->kind != SHLO_TYPE_TENSOR ||
      a->numel != p->m * p->k || w->numel != p->k * p->n ||
      shlo_elem_size(a->elem) != 1 || shlo_elem_size(w->elem) != 1)
    return shlo__exec_fail(ex, s, SHLO_ERUNTIME,
                           "operand does not have the compiled shape");
  int64_t dims[2] = {p->m, p->n};
  shlo_value *r = shlo__tensor_new_uninit(p->storage, 2, dims);
  if (!r) return shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory");
  size_t es = shlo_elem_size(p->storage);
  int32_t *c = es == 4 ? r->data
                       : shlo__malloc((size_t)(p->m * p->n) * sizeof *c);
  shlo__qgemm g = {.m = p->m, .n = p->n, .k = p->k, .a = a->data,
                   .a_unsigned = p->a_unsigned, .za = p->za, .w = w->data,
                   .zw = p->zw, .cmin = p->cmin, .cmax = p->cmax, .c = c};
  bool ok = c && shlo__qgemm_run(&g) &&
            shlo_tensor_set_quant(r, p->quant) == SHLO_OK;
  if (ok && es != 4) { /* clamped to the storage range: narrowing is exact */
    for (int64_t i = 0; i < p->m * p->n; i++) {
      if (es == 1) ((int8_t *)r->data)[i] = (int8_t)c[i];
      else ((int16_t *)r->data)[i] = (int16_t)c[i];
    }
  }
  if (es != 4) shlo__free(c);
  if (!ok) {
    shlo_value_unref(r);
    return shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory");
  }
  out[0] = r;
  return SHLO_OK;
}

/* v rounded to the float type t, as quant.c reads scales. */
static double qg_round(shlo_elem_type t, double v) {
  uint8_t buf[16];
  shlo__float_store(t, v, buf);
  return shlo__float_load(t, buf);
}

/* Scale and zero point of q at index j along its axis (any j when per
 * tensor); the scale rounded to the expressed type. */
static double qg_scale(const shlo_quant *q, int64_t j) {
  return qg_round(q->expressed, q->scales[q->per_axis ? j : 0]);
}
static int64_t qg_zp(const shlo_quant *q, int64_t j) {
  return q->zero_points[q->per_axis ? j : 0];
}

/* Whether q is per tensor, or per axis along dimension `axis` of n. */
static bool qg_axis_ok(const shlo_quant *q, int axis, int64_t n) {
  if (q->n < 1 || !q->scales || !q->zero_points) return false;
  return q->per_axis ? q->axis == axis && q->n == n : q->n == 1;
}

/* The storage's stored range as this kernel reads it (a byte, signed or
 * not): every value a tensor may hold, whatever its storage_min/max. */
static bool qg_byte_storage(shlo_elem_type t, bool *is_unsigned) {
  switch (t) {
  case SHLO_SI2: case SHLO_SI4: case SHLO_SI8: *is_unsigned = false; return true;
  case SHLO_UI2: case SHLO_UI4: case SHLO_UI8: *is_unsigned = true; return true;
  default: return false;
  }
}

/* Largest |x - z| over the byte range. */
static int64_t qg_span(bool is_unsigned, int64_t z) {
  int64_t lo = is_unsigned ? 0 : -128, hi = is_unsigned ? 255 : 127;
  int64_t d1 = z - lo, d2 = hi - z;
  if (d1 < 0) d1 = -d1;
  if (d2 < 0) d2 = -d2;
  return d1 > d2 ? d1 : d2;
}

/* lhs [M,K] contracting 1 with rhs [K,N] contracting 0, no batch. */
static bool qg_dims_ok(const shlo_op *op) {
  if (op->code == SHLO_OP_DOT) return true;
  const shlo_attr *dn = shlo_op_attr(op, "dot_dimension_numbers");
  if (!dn) return false;
  int64_t v[SHLO_MAX_RANK];
  const char *batch[2] = {"lhs_batching_dimensions", "rhs_batching_dimensions"};
  for (int i = 0; i < 2; i++) {
    const shlo_attr *f = shlo_attr_field(dn, batch[i]);
    if (f && shlo_attr_i64s(f, v, SHLO_MAX_RANK) != 0) return false;
  }
  const shlo_attr *lc = shlo_attr_field(dn, "lhs_contracting_dimensions");
  const shlo_attr *rc = shlo_attr_field(dn, "rhs_contracting_dimensions");
  if (!lc || shlo_attr_i64s(lc, v, SHLO_MAX_RANK) != 1 || v[0] != 1) return false;
  if (!rc || shlo_attr_i64s(rc, v, SHLO_MAX_RANK) != 1 || v[0] != 0) return false;
  return true;
}

/* The types of op when it qualifies (see qgemm.h), else false. */
static bool qg_types(shlo_compiler *cc, const shlo_op *op,
                     const shlo_type **lt, const shlo_type **rt,
                     const shlo_type **ot) {
  if (op->n_operands != 2 || op->n_results != 1 || !qg_dims_ok(op)) return false;
  *lt = shlo__cc_operand_type(cc, op, 0);
  *rt = shlo__cc_operand_type(cc, op, 1);
  *ot = shlo__cc_result_type(cc, op, 0);
  const shlo_type *t[3] = {*lt, *rt, *ot};
  for (int i = 0; i < 3; i++)
    if (!t[i] || t[i]->kind != SHLO_TYPE_TENSOR || !t[i]->quant ||
        t[i]->rank != 2 || !shlo_type_is_static(t[i]) ||
        t[i]->quant->expressed != (*ot)->quant->expressed ||
        !shlo_elem_is_float(t[i]->quant->expressed))
      return false;
  return (*lt)->dims[1] == (*rt)->dims[0] && (*ot)->dims[0] == (*lt)->dims[0] &&
         (*ot)->dims[1] == (*rt)->dims[1];
}

/* The result's storage, when its clamp fits 32 bits and its values are
 * stored in 1, 2 or 4 signed bytes. */
static bool qg_result_storage(const shlo_quant *q) {
  switch (q->storage) {
  case SHLO_SI2: case SHLO_SI4: case SHLO_SI8: case SHLO_SI16: case SHLO_SI32:
    return q->storage_min >= INT32_MIN && q->storage_max <= INT32_MAX &&
           q->storage_min <= q->storage_max;
  default: return false;
  }
}

/* Fill p's per-column zero points when every column's result scale is
 * lhs_scale * rhs_scale[j] with zero point 0 and the sums fit the bound;
 * false otherwise. */
static bool qg_columns(const shlo_quant *lq, const shlo_quant *rq,
                       const shlo_quant *oq, qg_params *p) {
  bool w_unsigned;
  if (!qg_byte_storage(lq->storage, &p->a_unsigned) ||
      !qg_byte_storage(rq->storage, &w_unsigned) || w_unsigned)
    return false;
  double sa = qg_scale(lq, 0);
  int64_t za = qg_zp(lq, 0);
  if (!(sa > 0) || za < -(1 << 20) || za > (1 << 20)) return false;
  p->za = (int32_t)za;
  int64_t wspan = 0;
  for (int64_t j = 0; j < p->n; j++) {
    double sw = qg_scale(rq, j), so = qg_scale(oq, j);
    int64_t zw = qg_zp(rq, j);
    /* sa and sw have at most 53 bits: the double product is exact
     * unless it leaves double's range, which isfinite/> 0 exclude */
    double prod = sa * sw;
    if (!(sw > 0) || !(prod > 0) || prod != so || prod > 1e300 ||
        qg_zp(oq, j) != 0 || zw < -(1 << 20) || zw > (1 << 20))
      return false;
    p->zw[j] = (int32_t)zw;
    int64_t span = qg_span(false, zw);
    if (span > wspan) wspan = span;
  }
  unsigned __int128 bound = (unsigned __int128)(uint64_t)p->k *
                            (uint64_t)qg_span(p->a_unsigned, za) * (uint64_t)wspan;
  return bound < ((unsigned __int128)1 << 31);
}

bool shlo__qgemm_compile(shlo_compiler *cc, const shlo_op *op,
                         shlo_step *step, shlo_status *st) {
  *st = SHLO_OK;
  if (op->code != SHLO_OP_DOT_GENERAL && op->code != SHLO_OP_DOT) return false;
  const shlo_type *lt, *rt, *ot;
  if (!qg_types(cc, op, &lt, &rt, &ot)) return false;
  const shlo_quant *lq = lt->quant, *rq = rt->quant, *oq = ot->quant;
  int64_t m = lt->dims[0], k = lt->dims[1], n = rt->dims[1];
  if (!qg_axis_ok(lq, 0, -1) || !qg_axis_ok(rq, 1, n) || !qg_axis_ok(oq, 1, n) ||
      !qg_result_storage(oq))
    return false;
  qg_params *p = shlo__calloc(1, sizeof *p);
  if (!p || !(p->zw = shlo__malloc((size_t)(n > 0 ? n : 1) * sizeof *p->zw))) {
    qg_params_free(p);
    *st = shlo__cc_fail(cc, op, SHLO_ENOMEM, "out of memory");
    return true;
  }
  p->m = m;
  p->n = n;
  p->k = k;
  if (!qg_columns(lq, rq, oq, p)) {
    qg_params_free(p);
    return false;
  }
  p->cmin = (int32_t)oq->storage_min;
  p->cmax = (int32_t)oq->storage_max;
  p->storage = oq->storage;
  p->quant = oq;
  /* --explain and --profile say which path the dot took */
  size_t len = strlen(op->name) + sizeof " [integer]";
  char *label = shlo__malloc(len); /* the plan's: core/alloc.h */
  if (!label) {
    qg_params_free(p);
    *st = shlo__cc_fail(cc, op, SHLO_ENOMEM, "out of memory");
    return true;
  }
  snprintf(label, len, "%s [integer]", op->name);
  shlo__free(step->label);
  step->label = label;
  if (step->free_params) step->free_params(step->params);
  step->params = p;
  step->free_params = qg_params_free;
  step->fn = k_qgemm;
  memset(&step->loop, 0, sizeof step->loop);
  return true;
}
