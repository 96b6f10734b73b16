/* The f32 vector maths (kernels/vmath.h) against the scalar definitions the
 * engine uses elsewhere, (float)libm(double): every ISA variant this
 * machine can run, on random operands and on the edge values (NaN with
 * payloads, +-inf, +-0, denormals, the ends of exp's range), at every
 * length (the tails run scalar). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kernels/vmath.h"

static float ref_exp(float x) { return (float)exp((double)x); }
static float ref_tanh(float x) { return (float)tanh((double)x); }
static float ref_logistic(float x) {
  return 1.0f / (1.0f + (float)exp(-(double)x));
}

static float from_bits(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static const uint32_t edges[] = {
    0x00000000, 0x80000000, 0x7f800000, 0xff800000, /* +-0, +-inf */
    0x7fc00000, 0xffc00001, 0x7f800001, 0x7fa00000, /* NaNs, signalling */
    0x00000001, 0x807fffff, 0x00400000, 0x00800000, /* denormals, min normal */
    0x7f7fffff, 0xff7fffff, 0x3f800000, 0xbf800000, /* +-max, +-1 */
};

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

/* d[0..n) must be ref(x[i]) bit for bit. */
static void expect_ref(const float *d, const float *x, int n,
                       float (*ref)(float), const char *name) {
  for (int i = 0; i < n; i++) {
    float r = ref(x[i]);
    if (memcmp(&r, &d[i], 4))
      print_error("%s %s(%a) = %a, want %a\n", shlo__vmath_isa(), name, x[i],
                  d[i], r);
    assert_memory_equal(&r, &d[i], 4);
  }
}

static void check(vec_fn fn, float (*ref)(float), const char *name) {
  float *x = malloc(N * sizeof *x), *d = malloc(N * sizeof *d);
  assert_non_null(x);
  assert_non_null(d);
  fill(x, 7);
  for (int len = 0; len <= 19; len++) { /* every tail length, from 0 */
    fn(d, x, len);
    expect_ref(d, x, len, ref, name);
  }
  fn(d, x, N);
  expect_ref(d, x, N, ref, name);
  memcpy(d, x, N * sizeof *d); /* in place */
  fn(d, d, N);
  expect_ref(d, x, N, ref, name);
  free(x);
  free(d);
}

static void every_isa_matches_the_scalar_definitions(void **state) {
  (void)state;
  static const char *const isas[] = {"avx512f", "avx2", "sse2", "scalar"};
  int ran = 0;
  for (size_t k = 0; k < sizeof isas / sizeof *isas; k++) {
    if (!shlo__vmath_use_isa(isas[k])) continue;
    assert_string_equal(shlo__vmath_isa(), isas[k]);
    ran++;
    check(shlo__vexp_f32, ref_exp, "exp");
    check(shlo__vtanh_f32, ref_tanh, "tanh");
    check(shlo__vlogistic_f32, ref_logistic, "logistic");
  }
  assert_true(ran >= 1);
}

static void an_unknown_isa_is_refused(void **state) {
  (void)state;
  const char *before = shlo__vmath_isa();
  assert_false(shlo__vmath_use_isa("mmx"));
  assert_string_equal(shlo__vmath_isa(), before);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_isa_matches_the_scalar_definitions),
      cmocka_unit_test(an_unknown_isa_is_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
