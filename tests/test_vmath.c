/* SPDX-License-Identifier: Apache-2.0 */
/* The f32 vector maths (kernels/vmath.h): every ISA variant this machine
 * can run gives the portable variant's bits, at every length (the tails)
 * and in place; every result is within 2 ulp (exp: 1) of libm's double
 * function rounded to f32, on random operands, a sweep of bit patterns
 * and the edge values (NaN with payloads, +-inf, +-0, denormals, the ends
 * of exp's range); NaNs come back quieted with their payload. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kernels/vmath.h"
#include "vmath_test.h"

static float ref_exp(float x) { return (float)exp((double)x); }
static float ref_tanh(float x) { return (float)tanh((double)x); }
static float ref_logistic(float x) {
  return (float)(1.0 / (1.0 + exp(-(double)x)));
}

#define N 4099 /* not a multiple of any vector width */

static void fill(float *x, unsigned seed) {
  srand(seed);
  for (int i = 0; i < N; i++) {
    switch (i % 4) {
    case 0: x[i] = from_bits(edges[(i / 4) % 16]); break;
    case 1: x[i] = ((float)rand() / RAND_MAX - 0.5f) * 40; break;
    case 2: x[i] = ((float)rand() / RAND_MAX - 0.5f) * 220; break; /* exp's ends */
    default: x[i] = from_bits((uint32_t)rand() * 2654435761u); break;
    }
  }
  x[7] = 88.72283f;   /* largest f32 whose exp is finite */
  x[11] = 88.72284f;  /* smallest whose exp overflows */
  x[13] = -103.9721f; /* exp near the denormal floor */
  x[17] = 1e-30f;     /* tanh x = x */
}

typedef void (*vec_fn)(float *, const float *, int64_t);

typedef struct fn_case {
  const char *name;
  vec_fn fn;
  float (*ref)(float);
  int64_t max_ulp;
} fn_case;

static const fn_case cases[] = {
    {"exp", shlo__vexp_f32, ref_exp, 1},
    {"tanh", shlo__vtanh_f32, ref_tanh, 2},
    {"logistic", shlo__vlogistic_f32, ref_logistic, 2},
};

/* position on the line of floats: adjacent floats differ by 1, -0 = +0 */
static int64_t ordinal(float f) {
  int32_t i;
  memcpy(&i, &f, 4);
  return i < 0 ? -(int64_t)(i & 0x7fffffff) : i;
}

/* d[0..n) within c's ulp bound of the reference; a NaN operand gives
 * itself quieted (x + x keeps the payload). */
static void expect_close(const fn_case *c, const float *d, const float *x,
                         int n) {
  for (int i = 0; i < n; i++) {
    if (x[i] != x[i]) {
      float q = x[i] + x[i];
      if (memcmp(&q, &d[i], 4))
        print_error("%s(%a) = %a, want the quiet NaN %a\n", c->name, x[i],
                    d[i], q);
      assert_memory_equal(&q, &d[i], 4);
      continue;
    }
    float r = c->ref(x[i]);
    int64_t ulp = llabs(ordinal(r) - ordinal(d[i]));
    if (ulp > c->max_ulp || d[i] != d[i])
      print_error("%s %s(%a) = %a, want %a (%lld ulp)\n", shlo__vmath_isa(),
                  c->name, x[i], d[i], r, (long long)ulp);
    assert_false(d[i] != d[i]);
    assert_true(ulp <= c->max_ulp);
  }
}

static void every_variant_gives_the_portable_bits(void **state) {
  (void)state;
  static const char *const isas[] = {"avx512f", "avx2"};
  float *x = malloc(N * sizeof *x), *want = malloc(N * sizeof *want),
        *d = malloc(N * sizeof *d);
  assert_non_null(x);
  assert_non_null(want);
  assert_non_null(d);
  fill(x, 7);
  const char *best = shlo__vmath_isa();
  for (size_t f = 0; f < sizeof cases / sizeof *cases; f++) {
    assert_true(shlo__vmath_use_isa("portable"));
    cases[f].fn(want, x, N);
    expect_close(&cases[f], want, x, N);
    for (size_t k = 0; k < sizeof isas / sizeof *isas; k++) {
      if (!shlo__vmath_use_isa(isas[k])) continue;
      for (int len = 0; len <= 37; len++) { /* every tail length, from 0 */
        memset(d, 0, (size_t)len * sizeof *d);
        cases[f].fn(d, x + 3, len);
        assert_memory_equal(d, want + 3, (size_t)len * sizeof *d);
      }
      cases[f].fn(d, x, N);
      assert_memory_equal(d, want, N * sizeof *d);
      memcpy(d, x, N * sizeof *d); /* in place */
      cases[f].fn(d, d, N);
      assert_memory_equal(d, want, N * sizeof *d);
    }
  }
  assert_true(shlo__vmath_use_isa(best));
  free(x);
  free(want);
  free(d);
}

/* 2^20 operands spread over all bit patterns, in the best variant */
static void a_sweep_of_every_exponent_stays_within_bounds(void **state) {
  (void)state;
  enum { STEP = 4096, B = 1 << 12 };
  float x[B], d[B];
  for (size_t f = 0; f < sizeof cases / sizeof *cases; f++)
    for (uint64_t u = 0; u < (1ull << 32); u += (uint64_t)B * STEP) {
      for (int i = 0; i < B; i++)
        x[i] = from_bits((uint32_t)(u + (uint64_t)i * STEP + 1234));
      cases[f].fn(d, x, B);
      expect_close(&cases[f], d, x, B);
    }
}

/* Every 61st f32 (a prime step: every low-bit pattern comes up) where
 * the polynomials work: exp over [-104, 89] (its clamp), tanh and the
 * logistic over [-10, 10] and [-104, 104] (both are within an ulp of
 * +-1, 0 or 1 beyond), in the best variant: 37 M, 36 M and 37 M
 * operands.  Every f32 was checked once (exp within 1 ulp, tanh within
 * 2, kernels/vmath_body.h); this keeps most of that check in the suite. */
static void a_dense_sweep_of_the_working_ranges_stays_within_bounds(
    void **state) {
  (void)state;
  enum { STEP = 61, B = 1 << 12 };
  static const float hi[] = {89.0f, 10.0f, 104.0f}, lo[] = {-104.0f, -10.0f, -104.0f};
  float x[B], d[B];
  for (size_t f = 0; f < sizeof cases / sizeof *cases; f++) {
    /* the positive side from +0 up, then the negative one from -0 down */
    for (int neg = 0; neg < 2; neg++) {
      uint32_t sign = neg ? 0x80000000u : 0, end = 0;
      memcpy(&end, neg ? &lo[f] : &hi[f], 4);
      end &= 0x7fffffffu;
      for (uint64_t u = 0; u <= end;) {
        int n = 0;
        for (; n < B && u <= end; n++, u += STEP)
          x[n] = from_bits(sign | (uint32_t)u);
        cases[f].fn(d, x, n);
        expect_close(&cases[f], d, x, n);
      }
    }
  }
}

static void the_special_values_are_exact(void **state) {
  (void)state;
  const float inf = INFINITY;
  const float x[] = {-inf, inf, 0.0f, -0.0f, 1e-30f, -1e-30f, 100.0f, -200.0f};
  float e[8], t[8], l[8];
  shlo__vexp_f32(e, x, 8);
  shlo__vtanh_f32(t, x, 8);
  shlo__vlogistic_f32(l, x, 8);
  const float want_e[] = {0.0f, inf, 1.0f, 1.0f, 1.0f, 1.0f, inf, 0.0f};
  const float want_t[] = {-1.0f, 1.0f, 0.0f, -0.0f, 1e-30f, -1e-30f, 1.0f, -1.0f};
  const float want_l[] = {0.0f, 1.0f, 0.5f, 0.5f, 0.5f, 0.5f, 1.0f, 0.0f};
  assert_memory_equal(e, want_e, sizeof e);
  assert_memory_equal(t, want_t, sizeof t);
  assert_memory_equal(l, want_l, sizeof l);
}

static void an_unknown_isa_is_refused(void **state) {
  (void)state;
  const char *before = shlo__vmath_isa();
  assert_false(shlo__vmath_use_isa("mmx"));
  assert_string_equal(shlo__vmath_isa(), before);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_variant_gives_the_portable_bits),
      cmocka_unit_test(a_sweep_of_every_exponent_stays_within_bounds),
      cmocka_unit_test(a_dense_sweep_of_the_working_ranges_stays_within_bounds),
      cmocka_unit_test(the_special_values_are_exact),
      cmocka_unit_test(an_unknown_isa_is_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
