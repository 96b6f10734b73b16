/* SPDX-License-Identifier: Apache-2.0 */
/* Array conversions between f32 and bf16 (see bf16conv.h): an AVX-512F
 * loop compiled for that ISA alone (the binary has no -march) and chosen
 * at run time, and the scalar loop it must match bit for bit.
 *
 * The AVX-512 loop does the scalar function's integer steps on 16 lanes;
 * the tail uses masked loads and stores, so it never reads or writes past
 * the arrays.  AVX512_BF16's VCVTNEPS2BF16 is not used: it flushes
 * subnormal inputs to zero, which the exact conversion does not.
 *
 * f16 uses the hardware's VCVTPS2PH (nearest-even, exceptions off) and
 * VCVTPH2PS, which round and widen as floatfmt does (test_bf16conv checks
 * every f16 pattern and a wide sample of f32 inputs); f32 subnormals give
 * a signed zero in f16 whatever MXCSR.DAZ says.  The scalar loops are
 * floatfmt's own functions. */
#include "core/bf16conv.h"

#include "core/floatfmt.h"

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#define BF16_HAVE_AVX512 1
#include <immintrin.h>
#else
#define BF16_HAVE_AVX512 0
#endif

/* ---- scalar -------------------------------------------------------------- */

static void from_f32_scalar(uint16_t *dst, const float *src, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    uint32_t x;
    memcpy(&x, &src[i], sizeof x);
    dst[i] = shlo__bf16_from_f32_bits(x);
  }
}

static void to_f32_scalar(float *dst, const uint16_t *src, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    const uint32_t x = shlo__bf16_to_f32_bits(src[i]);
    memcpy(&dst[i], &x, sizeof x);
  }
}

/* ---- AVX-512F ------------------------------------------------------------ */

#if BF16_HAVE_AVX512
#define BF16_AVX512 __attribute__((target("avx512f")))

/* 16 f32 patterns -> 16 bf16 patterns in the low halves of the lanes. */
BF16_AVX512 static inline __m512i from_f32_16(__m512i x) {
  const __m512i one = _mm512_set1_epi32(1);
  const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(x, 16), one);
  const __m512i bias = _mm512_add_epi32(_mm512_set1_epi32(0x7FFF), lsb);
  const __m512i rounded = _mm512_srli_epi32(_mm512_add_epi32(x, bias), 16);
  const __m512i abs = _mm512_and_si512(x, _mm512_set1_epi32(SHLO__F32_ABS));
  const __mmask16 nan =
      _mm512_cmpgt_epu32_mask(abs, _mm512_set1_epi32(SHLO__F32_INF));
  const __m512i quiet =
      _mm512_or_si512(_mm512_srli_epi32(x, 16), _mm512_set1_epi32(0x40));
  return _mm512_mask_blend_epi32(nan, rounded, quiet);
}

BF16_AVX512 static void from_f32_avx512(uint16_t *dst, const float *src,
                                        int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512i x = _mm512_loadu_si512((const void *)(src + i));
    _mm256_storeu_si256((__m256i *)(dst + i),
                        _mm512_cvtepi32_epi16(from_f32_16(x)));
  }
  if (i < n) {
    const __mmask16 m = (__mmask16)((1u << (n - i)) - 1);
    const __m512i x = _mm512_maskz_loadu_epi32(m, src + i);
    _mm512_mask_cvtepi32_storeu_epi16(dst + i, m, from_f32_16(x));
  }
}

/* 16 bf16 patterns (zero-extended to 32 bits) -> 16 f32 patterns. */
BF16_AVX512 static inline __m512i to_f32_16(__m512i h) {
  const __m512i x = _mm512_slli_epi32(h, 16);
  const __m512i abs = _mm512_and_si512(x, _mm512_set1_epi32(SHLO__F32_ABS));
  const __mmask16 nan =
      _mm512_cmpgt_epu32_mask(abs, _mm512_set1_epi32(SHLO__F32_INF));
  return _mm512_mask_or_epi32(x, nan, x, _mm512_set1_epi32(0x00400000));
}

BF16_AVX512 static void to_f32_avx512(float *dst, const uint16_t *src,
                                      int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256i h = _mm256_loadu_si256((const __m256i *)(src + i));
    _mm512_storeu_si512((void *)(dst + i),
                        to_f32_16(_mm512_cvtepu16_epi32(h)));
  }
  if (i < n) {
    /* 16-bit masked loads need AVX512BW: widen through a zeroed copy. */
    uint16_t tail[16] = {0};
    memcpy(tail, src + i, (size_t)(n - i) * sizeof *tail);
    const __m256i h = _mm256_loadu_si256((const __m256i *)tail);
    const __mmask16 m = (__mmask16)((1u << (n - i)) - 1);
    _mm512_mask_storeu_epi32(dst + i, m, to_f32_16(_mm512_cvtepu16_epi32(h)));
  }
}

/* f16: 16 lanes per instruction; the tail through zeroed copies (16-bit
 * masked loads and stores need AVX512BW). */
BF16_AVX512 static void f16_from_f32_avx512(uint16_t *dst, const float *src,
                                            int64_t n) {
  const int rnd = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm256_storeu_si256((__m256i *)(dst + i),
                        _mm512_cvtps_ph(_mm512_loadu_ps(src + i), rnd));
  if (i < n) {
    const __mmask16 m = (__mmask16)((1u << (n - i)) - 1);
    uint16_t tail[16];
    _mm256_storeu_si256((__m256i *)tail,
                        _mm512_cvtps_ph(_mm512_maskz_loadu_ps(m, src + i), rnd));
    memcpy(dst + i, tail, (size_t)(n - i) * sizeof *tail);
  }
}

BF16_AVX512 static void f16_to_f32_avx512(float *dst, const uint16_t *src,
                                          int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_ps(dst + i, _mm512_cvtph_ps(_mm256_loadu_si256(
                                  (const __m256i *)(src + i))));
  if (i < n) {
    uint16_t tail[16] = {0};
    memcpy(tail, src + i, (size_t)(n - i) * sizeof *tail);
    const __mmask16 m = (__mmask16)((1u << (n - i)) - 1);
    _mm512_mask_storeu_ps(dst + i, m,
                          _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)tail)));
  }
}
#endif

static void f16_from_f32_scalar(uint16_t *dst, const float *src, int64_t n) {
  for (int64_t i = 0; i < n; i++) dst[i] = shlo__f16_from_double(src[i]);
}

static void f16_to_f32_scalar(float *dst, const uint16_t *src, int64_t n) {
  for (int64_t i = 0; i < n; i++) dst[i] = (float)shlo__f16_to_double(src[i]);
}

/* ---- dispatch ------------------------------------------------------------ */

/* Whether the AVX-512 loops may run here; the answer never changes, so a
 * race on first use only computes it twice. */
static bool use_avx512(void) {
#if BF16_HAVE_AVX512
  static int cached = -1;
  int v = __atomic_load_n(&cached, __ATOMIC_RELAXED);
  if (v < 0) {
    __builtin_cpu_init();
    v = __builtin_cpu_supports("avx512f") ? 1 : 0;
    __atomic_store_n(&cached, v, __ATOMIC_RELAXED);
  }
  return v == 1;
#else
  return false;
#endif
}

void shlo__bf16_from_f32_n(uint16_t *dst, const float *src, int64_t n) {
  if (n <= 0) return;
#if BF16_HAVE_AVX512
  if (use_avx512()) {
    from_f32_avx512(dst, src, n);
    return;
  }
#endif
  from_f32_scalar(dst, src, n);
}

void shlo__bf16_to_f32_n(float *dst, const uint16_t *src, int64_t n) {
  if (n <= 0) return;
#if BF16_HAVE_AVX512
  if (use_avx512()) {
    to_f32_avx512(dst, src, n);
    return;
  }
#endif
  to_f32_scalar(dst, src, n);
}

void shlo__f16_from_f32_n(uint16_t *dst, const float *src, int64_t n) {
  if (n <= 0) return;
#if BF16_HAVE_AVX512
  if (use_avx512()) {
    f16_from_f32_avx512(dst, src, n);
    return;
  }
#endif
  f16_from_f32_scalar(dst, src, n);
}

void shlo__f16_to_f32_n(float *dst, const uint16_t *src, int64_t n) {
  if (n <= 0) return;
#if BF16_HAVE_AVX512
  if (use_avx512()) {
    f16_to_f32_avx512(dst, src, n);
    return;
  }
#endif
  f16_to_f32_scalar(dst, src, n);
}

const char *shlo__bf16conv_isa(void) {
  return use_avx512() ? "avx512f" : "scalar";
}
