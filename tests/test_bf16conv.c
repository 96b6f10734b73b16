/* SPDX-License-Identifier: Apache-2.0 */
/* The fast bf16 conversions (core/bf16conv.h and floatfmt's bf16 fast
 * paths) against floatfmt's descriptor-driven reference encoder and
 * decoder: every bf16 pattern, and f32 inputs covering every bf16 pattern
 * with each rounding class of the dropped half (zero, one ulp, just below,
 * at and just above the tie, all ones) plus random ones; the array
 * functions at every tail length; doubles around bf16's normal range
 * edges; and the convert and dot_general kernels that use them, on values
 * whose expected bits are worked out by hand in the comments. */
#include <math.h>
#include <stdbool.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/bf16conv.h"
#include "core/floatfmt.h"
#include "harness.h"
#include "bits.h"

#define RUN_OK(...) \
  assert_int_equal(harness_run(PROG(__VA_ARGS__), 0), SHLO_OK)

/* The reference's bf16 for the f32 pattern x: widen to double, round. */
static uint16_t ref_from_f32(uint32_t x) {
  return shlo__bf16_from_double_ref((double)f32_of(x));
}

/* The reference's f32 pattern for bf16 h: decode to double, narrow. */
static uint32_t ref_to_f32(uint16_t h) {
  return bits32((float)shlo__bf16_to_double_ref(h));
}

/* xorshift64: a fixed sequence, so a failure reproduces. */
static uint64_t rng_next(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

/* Dropped low halves that decide each rounding case. */
static const uint16_t k_lows[] = {0x0000, 0x0001, 0x7FFF, 0x8000,
                                  0x8001, 0xFFFF, 0x4000, 0xC000};
#define N_LOWS (sizeof k_lows / sizeof k_lows[0])
#define N_RANDOM_LOWS 4
#define LOWS_PER_HIGH (N_LOWS + N_RANDOM_LOWS)
#define N_CASES (65536 * LOWS_PER_HIGH)

/* Every high half with every class of low half (and a few random ones):
 * inf, NaNs of both signs with payload only in the low half (signalling
 * and quiet), subnormals, overflow from the largest finite values. */
static uint32_t *make_cases(void) {
  uint32_t *x = malloc(N_CASES * sizeof *x);
  assert_non_null(x);
  uint64_t s = 0x9E3779B97F4A7C15ull;
  size_t k = 0;
  for (uint32_t hi = 0; hi < 65536; hi++) {
    for (size_t j = 0; j < N_LOWS; j++) x[k++] = hi << 16 | k_lows[j];
    for (int j = 0; j < N_RANDOM_LOWS; j++)
      x[k++] = hi << 16 | (uint16_t)rng_next(&s);
  }
  assert_int_equal(k, N_CASES);
  return x;
}

static void test_scalar_from_f32_matches_reference(void **state) {
  (void)state;
  uint32_t *x = make_cases();
  for (size_t i = 0; i < N_CASES; i++) {
    const uint16_t want = ref_from_f32(x[i]);
    if (shlo__bf16_from_f32_bits(x[i]) != want)
      fail_msg("f32 0x%08x: got 0x%04x, want 0x%04x", (unsigned)x[i],
               (unsigned)shlo__bf16_from_f32_bits(x[i]), (unsigned)want);
  }
  free(x);
}

static void test_array_from_f32_matches_reference(void **state) {
  (void)state;
  uint32_t *x = make_cases();
  uint16_t *got = malloc(N_CASES * sizeof *got);
  assert_non_null(got);
  shlo__bf16_from_f32_n(got, (const float *)(const void *)x, N_CASES);
  for (size_t i = 0; i < N_CASES; i++)
    if (got[i] != ref_from_f32(x[i]))
      fail_msg("%s, f32 0x%08x: got 0x%04x, want 0x%04x",
               shlo__bf16conv_isa(), (unsigned)x[i], (unsigned)got[i],
               (unsigned)ref_from_f32(x[i]));
  free(got);
  free(x);
}

static void test_every_bf16_to_f32(void **state) {
  (void)state;
  uint16_t *h = malloc(65536 * sizeof *h);
  float *got = malloc(65536 * sizeof *got);
  assert_non_null(h);
  assert_non_null(got);
  for (uint32_t i = 0; i < 65536; i++) h[i] = (uint16_t)i;
  shlo__bf16_to_f32_n(got, h, 65536);
  for (uint32_t i = 0; i < 65536; i++) {
    const uint32_t want = ref_to_f32((uint16_t)i);
    assert_int_equal(shlo__bf16_to_f32_bits((uint16_t)i), want);
    assert_int_equal(bits32(got[i]), want);
    /* the double decoder too, NaN payloads included */
    assert_int_equal(bits64(shlo__bf16_to_double((uint16_t)i)),
                     bits64(shlo__bf16_to_double_ref((uint16_t)i)));
  }
  free(got);
  free(h);
}

/* f16: every pattern back to f32, and the f32 cases (each 16-bit high
 * half with every class of low half) forward, against floatfmt. */
static void test_f16_arrays_match_reference(void **state) {
  (void)state;
  uint16_t *h = malloc(65536 * sizeof *h);
  float *wide = malloc(65536 * sizeof *wide);
  assert_non_null(h);
  assert_non_null(wide);
  for (uint32_t i = 0; i < 65536; i++) h[i] = (uint16_t)i;
  shlo__f16_to_f32_n(wide, h, 65536);
  for (uint32_t i = 0; i < 65536; i++)
    if (bits32(wide[i]) != bits32((float)shlo__f16_to_double((uint16_t)i)))
      fail_msg("f16 0x%04x: got 0x%08x", (unsigned)i, (unsigned)bits32(wide[i]));
  free(wide);
  free(h);
  uint32_t *x = make_cases();
  uint16_t *got = malloc(N_CASES * sizeof *got);
  assert_non_null(got);
  shlo__f16_from_f32_n(got, (const float *)(const void *)x, N_CASES);
  for (size_t i = 0; i < N_CASES; i++) {
    const uint16_t want = shlo__f16_from_double((double)f32_of(x[i]));
    if (got[i] != want)
      fail_msg("f32 0x%08x: got f16 0x%04x, want 0x%04x", (unsigned)x[i],
               (unsigned)got[i], (unsigned)want);
  }
  free(got);
  free(x);
}

/* Each length 0..40 from an odd offset: the vector body, the masked tail,
 * and nothing written outside [0, n) (guards around the output). */
static void test_array_tails_and_bounds(void **state) {
  (void)state;
  enum { MAX = 40, GUARD = 8 };
  float src[MAX + 1];
  uint16_t h[MAX + 1];
  for (int i = 0; i <= MAX; i++) {
    src[i] = (float)(i * 1.00390625 - 7.5); /* needs rounding */
    h[i] = (uint16_t)(0x3F80 + 3 * i);
  }
  for (int n = 0; n <= MAX; n++) {
    uint16_t out16[MAX + 2 * GUARD];
    float out32[MAX + 2 * GUARD];
    memset(out16, 0xA5, sizeof out16);
    memset(out32, 0xA5, sizeof out32);
    shlo__bf16_from_f32_n(out16 + GUARD, src + 1, n);
    shlo__bf16_to_f32_n(out32 + GUARD, h + 1, n);
    uint16_t f16[MAX + 2 * GUARD];
    float w16[MAX + 2 * GUARD];
    memset(f16, 0xA5, sizeof f16);
    memset(w16, 0xA5, sizeof w16);
    shlo__f16_from_f32_n(f16 + GUARD, src + 1, n);
    shlo__f16_to_f32_n(w16 + GUARD, h + 1, n);
    for (int i = 0; i < MAX + 2 * GUARD; i++) {
      const bool inside = i >= GUARD && i < GUARD + n;
      if (inside) {
        assert_int_equal(out16[i], ref_from_f32(bits32(src[1 + i - GUARD])));
        assert_int_equal(bits32(out32[i]), ref_to_f32(h[1 + i - GUARD]));
        assert_int_equal(f16[i],
                         shlo__f16_from_double(src[1 + i - GUARD]));
        assert_int_equal(bits32(w16[i]),
                         bits32((float)shlo__f16_to_double(h[1 + i - GUARD])));
      } else {
        assert_int_equal(out16[i], 0xA5A5);
        assert_int_equal(bits32(out32[i]), 0xA5A5A5A5u);
        assert_int_equal(f16[i], 0xA5A5);
        assert_int_equal(bits32(w16[i]), 0xA5A5A5A5u);
      }
    }
  }
}

/* shlo__bf16_from_double's fast range [2^-126, 2^128) and its edges. */
static void test_from_double_matches_reference(void **state) {
  (void)state;
  static const uint64_t edges[] = {
      0x3810000000000000ull, /* 2^-126, bf16's smallest normal */
      0x380FFFFFFFFFFFFFull, /* just below it: subnormal path */
      0x380FF00000000000ull, /* rounds up to 2^-126 from below */
      0x47EFE00000000000ull, /* bf16's largest finite */
      0x47EFEFFFFFFFFFFFull, /* just under the tie: stays finite */
      0x47EFF00000000000ull, /* the tie: to even, i.e. inf */
      0x47F0000000000000ull, /* 2^128: inf */
      0x3FF0100000000000ull, /* 1 + 2^-8: tie, stays 1 (even) */
      0x3FF0300000000000ull, /* 1 + 3 * 2^-8: tie, up to even */
      0x3FF0100000000001ull, /* just above a tie */
      0x3FF00FFFFFFFFFFFull, /* just below a tie */
      0x0000000000000001ull, /* f64 subnormal */
      0x7FF0000000000000ull, 0x7FF8000000000000ull, 0x7FF4000000000001ull,
      0x0000000000000000ull,
  };
  for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++)
    for (int neg = 0; neg < 2; neg++) {
      const double v = from64(edges[i] | (neg ? 1ull << 63 : 0));
      assert_int_equal(shlo__bf16_from_double(v),
                       shlo__bf16_from_double_ref(v));
    }
  uint64_t s = 12345;
  for (int i = 0; i < 2000000; i++) {
    /* exponents spread over bf16's range and beyond, any fraction */
    const uint64_t r = rng_next(&s);
    const uint64_t e = 1023 - 160 + (r >> 54) % 330;
    const double v = from64((r & (1ull << 63)) | e << 52 | (r & 0xFFFFFFFFFFFFFull));
    if (shlo__bf16_from_double(v) != shlo__bf16_from_double_ref(v))
      fail_msg("double 0x%016llx: got 0x%04x, want 0x%04x",
               (unsigned long long)bits64(v),
               (unsigned)shlo__bf16_from_double(v),
               (unsigned)shlo__bf16_from_double_ref(v));
  }
}

/* f32 -> bf16 through the convert kernel: 19 elements (a 16-lane body and
 * a 3-lane tail), results as i16 patterns. */
static void test_convert_kernel_f32_to_bf16(void **state) {
  (void)state;
  RUN_OK("  %0 = stablehlo.constant dense<["
         /* ties to even (down, up), just above a tie */
         "0x3F808000, 0x3F818000, 0x3F808001, "
         /* f32 max and -max overflow to +-inf */
         "0x7F7FFFFF, 0xFF7FFFFF, "
         /* NaNs: payload only below bf16 (made quiet), -qNaN, sNaN */
         "0x7F800001, 0xFFC12345, 0x7FA00000, "
         /* subnormal ties (down, up), -largest subnormal rounds to normal */
         "0x00008000, 0x00018000, 0x807FFFFF, "
         /* -0, inf, carry into the exponent, -pi, tiny, carry to 1.0 */
         "0x80000000, 0x7F800000, 0x3FFFFFFF, 0xC0490FDB, 0x00000001, "
         "0x3F7FFFFF, 0x47000000, 0x3F80FFFF]> : tensor<19xf32>\n"
         "  %1 = stablehlo.convert %0 : (tensor<19xf32>) -> tensor<19xbf16>\n"
         "  %2 = stablehlo.bitcast_convert %1 : (tensor<19xbf16>) -> "
         "tensor<19xi16>\n"
         "  check.expect_eq_const %2, dense<[16256, 16258, 16257, 32640, -128, "
         "32704, -63, 32736, 0, 2, -32640, -32768, 32640, 16384, -16311, 0, "
         "16256, 18176, 16257]> : tensor<19xi16>\n");
}

/* bf16 -> f32 through the convert kernel: signalling NaNs come out quiet
 * with their payload, subnormals exact; 17 elements. */
static void test_convert_kernel_bf16_to_f32(void **state) {
  (void)state;
  RUN_OK("  %0 = stablehlo.constant dense<[32641, -127, 1, -32767, 16256, "
         "32709, 32640, 16384, 16385, 16386, 16387, 16388, 16389, 16390, "
         "16391, 16392, 16393]> : tensor<17xi16>\n"
         "  %1 = stablehlo.bitcast_convert %0 : (tensor<17xi16>) -> "
         "tensor<17xbf16>\n"
         "  %2 = stablehlo.convert %1 : (tensor<17xbf16>) -> tensor<17xf32>\n"
         "  %3 = stablehlo.bitcast_convert %2 : (tensor<17xf32>) -> "
         "tensor<17xi32>\n"
         "  check.expect_eq_const %3, dense<[2143354880, -4128768, 65536, "
         "-2147418112, 1065353216, 2143617024, 2139095040, 1073741824, "
         "1073807360, 1073872896, 1073938432, 1074003968, 1074069504, "
         "1074135040, 1074200576, 1074266112, 1074331648]> : "
         "tensor<17xi32>\n");
}

/* bf16 x bf16 -> f32 dot_general, lhs contracted on its first dimension
 * (a strided gather) and rhs contiguous: sums of exact products; then f16
 * operands, and f32 <-> f16 converts. */
static void test_dot_general_bf16_f32(void **state) {
  (void)state;
  RUN_OK("  %a = stablehlo.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, "
         "6.0]]> : tensor<3x2xbf16>\n"
         "  %b = stablehlo.constant dense<[[1.0, 0.5], [2.0, 0.25], [3.0, "
         "0.125]]> : tensor<3x2xbf16>\n"
         "  %c = stablehlo.dot_general %a, %b, contracting_dims = [0] x [0] "
         ": (tensor<3x2xbf16>, tensor<3x2xbf16>) -> tensor<2x2xf32>\n"
         "  check.expect_eq_const %c, dense<[[22.0, 1.875], [28.0, 2.75]]> : "
         "tensor<2x2xf32>\n"
         "  %d = stablehlo.dot_general %b, %a, contracting_dims = [1] x [1] "
         ": (tensor<3x2xbf16>, tensor<3x2xbf16>) -> tensor<3x3xf32>\n"
         "  check.expect_eq_const %d, dense<[[2.0, 5.0, 8.0], [2.5, 7.0, "
         "11.5], [3.25, 9.5, 15.75]]> : tensor<3x3xf32>\n"
         /* f16 operands, contiguous: the f16 array widening */
         "  %e = stablehlo.constant dense<[[1.0, 2.0, 3.0]]> : "
         "tensor<1x3xf16>\n"
         "  %f = stablehlo.constant dense<[[0.5], [0.25], [0.125]]> : "
         "tensor<3x1xf16>\n"
         "  %g = stablehlo.dot_general %e, %f, contracting_dims = [1] x [0] "
         ": (tensor<1x3xf16>, tensor<3x1xf16>) -> tensor<1x1xf32>\n"
         "  check.expect_eq_const %g, dense<[[1.375]]> : tensor<1x1xf32>\n"
         "  %h = stablehlo.convert %e : (tensor<1x3xf16>) -> tensor<1x3xf32>\n"
         "  check.expect_eq_const %h, dense<[[1.0, 2.0, 3.0]]> : "
         "tensor<1x3xf32>\n"
         "  %i = stablehlo.constant dense<[65520.0, 1.0009765625, "
         "1.00048828125]> : tensor<3xf32>\n"
         "  %j = stablehlo.convert %i : (tensor<3xf32>) -> tensor<3xf16>\n"
         "  %k = stablehlo.bitcast_convert %j : (tensor<3xf16>) -> "
         "tensor<3xi16>\n"
         /* 65520 overflows to inf; 1 + 2^-10 exact; 1 + 2^-11 ties to 1 */
         "  check.expect_eq_const %k, dense<[31744, 15361, 15360]> : "
         "tensor<3xi16>\n");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_scalar_from_f32_matches_reference),
      cmocka_unit_test(test_array_from_f32_matches_reference),
      cmocka_unit_test(test_every_bf16_to_f32),
      cmocka_unit_test(test_f16_arrays_match_reference),
      cmocka_unit_test(test_array_tails_and_bounds),
      cmocka_unit_test(test_from_double_matches_reference),
      cmocka_unit_test(test_convert_kernel_f32_to_bf16),
      cmocka_unit_test(test_convert_kernel_bf16_to_f32),
      cmocka_unit_test(test_dot_general_bf16_f32),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
