/* SPDX-License-Identifier: Apache-2.0 */
/* Elementwise math at the edges JAX's programs reach (issue #32, item 6):
 *  - chlo.cosh and chlo.sinh in f32 near the overflow threshold
 *    (|x| ~ 88.7 .. 89.4, where e^x alone overflows f32 but cosh does not),
 *    alone and inside a fused chain;
 *  - complex exponential where a part is infinite or NaN, in complex64 and
 *    complex128: an imaginary part of inf or NaN gives NaN in both parts
 *    (StableHLO's tests of exponential expect that, not C's Annex G);
 *  - check.expect_close's ULP difference: the same non-finite value is 0
 *    apart, a non-finite mismatch is 2^64 - 1 apart (so that
 *    max_ulp_difference = min_ulp_difference = 18446744073709551615 asks
 *    for one), +0 and -0 are one point.
 * The references are worked out here: cosh and sinh from e^x / 2 (e^-x is
 * below f32's precision there), computed in double by exp(x - ln 2). */
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "shlo/engine.h"

/* Compile and run text (no arguments); its status, the results in *r. */
static shlo_status run_text(const char *text, shlo_value ***r, int *nr) {
  shlo_module *m = NULL;
  shlo_executable *e = NULL;
  shlo_diag d;
  shlo_diag_clear(&d);
  *r = NULL;
  *nr = 0;
  shlo_status st = shlo_load(text, strlen(text), "edges.mlir", NULL, &m, &e, &d);
  if (st == SHLO_OK) st = shlo_execute(e, NULL, NULL, 0, r, nr, &d);
  if (st != SHLO_OK) { /* the reason (also where the test expects one) */
    char buf[1024];
    shlo_diag_format(&d, buf, sizeof buf);
    print_message("%s\n", buf);
  }
  shlo_executable_free(e);
  shlo_module_free(m);
  return st;
}

static void free_results(shlo_value **r, int nr) {
  for (int i = 0; i < nr; i++) shlo_value_unref(r[i]);
  free(r);
}

/* ULP distance of two finite floats, +0 and -0 one point. */
static int64_t ulps_f32(float a, float b) {
  int32_t ia, ib;
  memcpy(&ia, &a, 4);
  memcpy(&ib, &b, 4);
  int64_t oa = ia < 0 ? -(int64_t)(ia & 0x7fffffff) : ia;
  int64_t ob = ib < 0 ? -(int64_t)(ib & 0x7fffffff) : ib;
  return oa > ob ? oa - ob : ob - oa;
}

/* ==== cosh / sinh in f32 ==== */

static const float LARGE_X[] = {88.5f, 88.75f, 89.0f, 89.375f, -89.25f,
                                89.4159f, -89.0f};
enum { N_LARGE = sizeof LARGE_X / sizeof LARGE_X[0] };

static float half_exp(float x) { /* e^|x| / 2, rounded once to f32 */
  return (float)exp(fabs((double)x) - log(2.0));
}

/* fused: each goes on into a multiply by one, so that the two are one
 * fused chain rather than steps of their own */
static void check_cosh_sinh(bool fused) {
  char text[2048], xs[256] = "";
  for (int i = 0; i < N_LARGE; i++)
    snprintf(xs + strlen(xs), sizeof xs - strlen(xs), "%s%.9e",
             i ? ", " : "", (double)LARGE_X[i]);
  const char *t = "tensor<7xf32>";
  snprintf(text, sizeof text,
           "func.func @main() -> (%s, %s) {\n"
           "  %%x = stablehlo.constant dense<[%s]> : %s\n"
           "  %%one = stablehlo.constant dense<1.0> : %s\n"
           "  %%c0 = chlo.cosh %%x : %s -> %s\n"
           "  %%s0 = chlo.sinh %%x : %s -> %s\n"
           "  %%c1 = stablehlo.multiply %%c0, %%one : %s\n"
           "  %%s1 = stablehlo.multiply %%s0, %%one : %s\n"
           "  return %%c%d, %%s%d : %s, %s\n}\n",
           t, t, xs, t, t, t, t, t, t, t, t, fused, fused, t, t);
  shlo_value **r;
  int nr;
  assert_int_equal(run_text(text, &r, &nr), SHLO_OK);
  assert_int_equal(nr, 2);
  const float *c = shlo_tensor_data(r[0]), *s = shlo_tensor_data(r[1]);
  for (int i = 0; i < N_LARGE; i++) {
    float want = half_exp(LARGE_X[i]);
    assert_true(isfinite(want) && isfinite(c[i]) && isfinite(s[i]));
    if (ulps_f32(c[i], want) > 1 || ulps_f32(fabsf(s[i]), want) > 1) {
      fprintf(stderr, "x = %.9g: cosh %.9g sinh %.9g, want %.9g\n",
              (double)LARGE_X[i], (double)c[i], (double)s[i], (double)want);
      fail();
    }
    assert_true(c[i] > 0);
    assert_true(signbit(s[i]) == signbit(LARGE_X[i]));
  }
  free_results(r, nr);
}

static void cosh_sinh_f32_large(void **state) {
  (void)state;
  check_cosh_sinh(false);
  check_cosh_sinh(true);
}

static void cosh_sinh_f32_overflow(void **state) {
  (void)state;
  /* past ln(2 FLT_MAX) ~ 89.416 the answer is inf, with the sign */
  const char *text =
      "func.func @main() -> (tensor<3xf32>, tensor<3xf32>) {\n"
      "  %x = stablehlo.constant dense<[89.5, -89.5, 0x7F800000]> : "
      "tensor<3xf32>\n"
      "  %c = chlo.cosh %x : tensor<3xf32> -> tensor<3xf32>\n"
      "  %s = chlo.sinh %x : tensor<3xf32> -> tensor<3xf32>\n"
      "  return %c, %s : tensor<3xf32>, tensor<3xf32>\n}\n";
  shlo_value **r;
  int nr;
  assert_int_equal(run_text(text, &r, &nr), SHLO_OK);
  const float *c = shlo_tensor_data(r[0]), *s = shlo_tensor_data(r[1]);
  for (int i = 0; i < 3; i++) {
    assert_true(isinf(c[i]) && c[i] > 0);
    assert_true(isinf(s[i]));
    assert_true((s[i] < 0) == (i == 1));
  }
  free_results(r, nr);
}

/* ==== complex exponential ==== */

typedef struct cexp_case {
  const char *in; /* as a complex literal element */
  /* what each part must be: 'n' NaN, 'i' +inf, 'I' -inf, 'z' zero (either
   * sign), 'e' e^1 to a few ulps, '0' +0 exactly */
  char re, im;
} cexp_case;

static const cexp_case CEXP[] = {
    {"(0xFF800000, 0x7F800000)", 'n', 'n'}, /* -inf + i inf */
    {"(0x7F800000, 0x7F800000)", 'n', 'n'}, /* +inf + i inf */
    {"(1.5, 0x7F800000)", 'n', 'n'},
    {"(0.0, 0xFF800000)", 'n', 'n'},
    {"(0x7F800000, 0xFF800000)", 'n', 'n'},
    {"(2.0, 0x7FC00000)", 'n', 'n'},        /* NaN imaginary part */
    {"(0xFF800000, 0x7FC00000)", 'n', 'n'},
    {"(0x7F800000, 0.0)", 'i', '0'},        /* +inf + 0i: inf, not NaN */
    {"(0x7F800000, 1.5)", 'i', 'i'},        /* cos 1.5, sin 1.5 > 0 */
    {"(0x7F800000, -1.5)", 'i', 'I'},
    {"(0xFF800000, 1.5)", 'z', 'z'},
    {"(0xFF800000, -3.0)", 'z', 'z'},
    {"(3.0e38, 0.0)", 'i', '0'},            /* e^x overflows, im stays 0 */
    {"(1.0, 0.0)", 'e', '0'},
};
enum { N_CEXP = sizeof CEXP / sizeof CEXP[0] };

static bool part_ok(double v, char want, double ulp) {
  switch (want) {
  case 'n': return isnan(v);
  case 'i': return isinf(v) && v > 0;
  case 'I': return isinf(v) && v < 0;
  case 'z': return v == 0;
  case '0': return v == 0 && !signbit(v);
  default: return fabs(v - M_E) <= 2 * ulp * M_E;
  }
}

static void check_cexp(const char *part, bool wide) {
  char text[2048], xs[1024] = "";
  for (int i = 0; i < N_CEXP; i++) {
    const char *in = CEXP[i].in;
    char lit[64];
    /* f64 literals of the f32 hex specials: the same values */
    snprintf(lit, sizeof lit, "%s", in);
    if (wide) {
      static const char *const from[] = {"0xFF800000", "0x7F800000",
                                         "0x7FC00000"};
      static const char *const to[] = {"0xFFF0000000000000",
                                       "0x7FF0000000000000",
                                       "0x7FF8000000000000"};
      char out[64] = "";
      for (const char *p = in; *p;) {
        int k = -1;
        for (int j = 0; j < 3; j++)
          if (!strncmp(p, from[j], 10)) k = j;
        if (k >= 0) {
          strncat(out, to[k], sizeof out - strlen(out) - 1);
          p += 10;
        } else {
          strncat(out, p, 1);
          p++;
        }
      }
      snprintf(lit, sizeof lit, "%s", out);
    }
    snprintf(xs + strlen(xs), sizeof xs - strlen(xs), "%s%s", i ? ", " : "",
             lit);
  }
  snprintf(text, sizeof text,
           "func.func @main() -> tensor<%dxcomplex<%s>> {\n"
           "  %%x = stablehlo.constant dense<[%s]> : tensor<%dxcomplex<%s>>\n"
           "  %%y = stablehlo.exponential %%x : tensor<%dxcomplex<%s>>\n"
           "  return %%y : tensor<%dxcomplex<%s>>\n}\n",
           N_CEXP, part, xs, N_CEXP, part, N_CEXP, part, N_CEXP, part);
  shlo_value **r;
  int nr;
  if (run_text(text, &r, &nr) != SHLO_OK) {
    fprintf(stderr, "%s", text);
    fail();
  }
  double ulp = wide ? 0x1p-52 : 0x1p-23;
  for (int i = 0; i < N_CEXP; i++) {
    double re, im;
    if (wide) {
      re = ((const double *)shlo_tensor_data(r[0]))[2 * i];
      im = ((const double *)shlo_tensor_data(r[0]))[2 * i + 1];
    } else {
      re = ((const float *)shlo_tensor_data(r[0]))[2 * i];
      im = ((const float *)shlo_tensor_data(r[0]))[2 * i + 1];
    }
    if (!part_ok(re, CEXP[i].re, ulp) || !part_ok(im, CEXP[i].im, ulp)) {
      fprintf(stderr, "exp%s: exp %s = (%g, %g), want (%c, %c)\n", part,
              CEXP[i].in, re, im, CEXP[i].re, CEXP[i].im);
      fail();
    }
  }
  free_results(r, nr);
}

static void complex_exp_at_infinities(void **state) {
  (void)state;
  check_cexp("f32", false);
  check_cexp("f64", true);
}

/* ==== check.expect_close's ULP difference ==== */

static shlo_status expect_close(const char *a, const char *b, const char *ty,
                                const char *bounds) {
  char text[1024];
  snprintf(text, sizeof text,
           "func.func @main() {\n"
           "  %%a = stablehlo.constant dense<%s> : %s\n"
           "  %%b = stablehlo.constant dense<%s> : %s\n"
           "  check.expect_close %%a, %%b, %s : %s, %s\n"
           "  func.return\n}\n",
           a, ty, b, ty, bounds, ty, ty);
  shlo_value **r;
  int nr;
  shlo_status st = run_text(text, &r, &nr);
  free_results(r, nr);
  return st;
}

#define NONFINITE_MISMATCH                                                     \
  "max_ulp_difference = 18446744073709551615, "                                \
  "min_ulp_difference = 18446744073709551615"

static void ulp_difference(void **state) {
  (void)state;
  const char *f4 = "tensor<4xf32>", *d4 = "tensor<4xf64>";
  /* a non-finite value against a different one: 2^64 - 1 apart */
  assert_int_equal(
      expect_close("[0x7F800000, 0x7F800000, 0x7F800000, 0x7F800000]",
                   "[0xFF800000, 0x7FC00000, 0.0, 0x7F7FFFFF]", f4,
                   NONFINITE_MISMATCH),
      SHLO_OK);
  assert_int_equal(
      expect_close("[0x7FF0000000000000, 0x7FF0000000000000, "
                   "0x7FF8000000000000, 1.0]",
                   "[0xFFF0000000000000, 2.0, 0x7FF0000000000000, "
                   "0x7FF8000000000000]",
                   d4, NONFINITE_MISMATCH),
      SHLO_OK);
  /* ... which no smaller bound accepts */
  assert_int_equal(expect_close("[0x7F800000, 1.0, 1.0, 1.0]",
                                "[0x7F7FFFFF, 1.0, 1.0, 1.0]", f4,
                                "max_ulp_difference = 3"),
                   SHLO_ECHECK);
  /* the same non-finite values are 0 apart: a bound that asks for a
   * mismatch refuses them */
  assert_int_equal(
      expect_close("[0x7F800000, 0xFF800000, 0x7FC00000, 0x7FC00000]",
                   "[0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000]", f4,
                   "max_ulp_difference = 0, min_ulp_difference = 0"),
      SHLO_OK);
  assert_int_equal(expect_close("[0x7F800000, 0x7F800000, 0x7F800000, "
                                "0x7F800000]",
                                "[0x7F800000, 0xFF800000, 0xFF800000, "
                                "0xFF800000]",
                                f4, NONFINITE_MISMATCH),
                   SHLO_ECHECK);
  /* finite: -0 and +0 are one point; exactly 5 apart across zero */
  assert_int_equal(expect_close("[0x80000001, 0.0, 0x80000000, 1.0]",
                                "[0x00000004, 0x00000005, 0x00000005, "
                                "0x3F800005]",
                                f4,
                                "max_ulp_difference = 5, "
                                "min_ulp_difference = 5"),
                   SHLO_OK);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(cosh_sinh_f32_large),
      cmocka_unit_test(cosh_sinh_f32_overflow),
      cmocka_unit_test(complex_exp_at_infinities),
      cmocka_unit_test(ulp_difference),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
