/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests for random numbers (engine/src/kernels/rng.c), uniform quantization
 * and quantized ops (engine/src/kernels/quant.c) and the CHLO ops
 * (engine/src/kernels/chlo.c).
 *
 * Each test runs a small program whose check.* ops state the expected
 * values; SHLO_OK means every check held.  Known vectors: the spec's
 * rng_bit_generator example, Random123's known-answer tests for
 * Threefry-2x32-20 and Philox-4x32-10.  Edge cases: saturation at
 * storage_min/max, per-axis parameters, quantized ops with regions,
 * special functions at 0, negative arguments, infinities and NaN, top_k
 * ties and NaN, and a wrong expectation that must fail with SHLO_ECHECK. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/value.h"
#include "shlo/engine.h"

/* Parse, compile and run `text`; the status of the first stage that fails
 * (its diagnostic printed unless quiet), or SHLO_OK.  With res != NULL the
 * results are handed to the caller (free each, then the array). */
static shlo_status run_text_r(const char *text, int quiet, shlo_value ***res,
                              int *n_res) {
  shlo_module *m = NULL;
  shlo_executable *e = NULL;
  shlo_value **r = NULL;
  int n = 0;
  shlo_diag d;
  char buf[SHLO_DIAG_MAX + 256];
  shlo_diag_clear(&d);
  shlo_status st = shlo_parse_module(text, strlen(text), "test.mlir", &m, &d);
  if (st == SHLO_OK) st = shlo_compile(m, NULL, &e, &d);
  if (st == SHLO_OK) st = shlo_execute(e, NULL, NULL, 0, &r, &n, &d);
  if (st != SHLO_OK && !quiet) {
    shlo_diag_format(&d, buf, sizeof buf);
    print_message("%s: %s\n", shlo_status_name(st), buf);
  }
  if (res && st == SHLO_OK) {
    *res = r;
    *n_res = n;
  } else {
    for (int i = 0; i < n; i++) shlo_value_unref(r[i]);
    free(r);
  }
  if (e) shlo_executable_free(e);
  if (m) shlo_module_free(m);
  return st;
}

static shlo_status run_text_q(const char *text, int quiet) {
  return run_text_r(text, quiet, NULL, NULL);
}

#define PROG(...) "func.func @main() {\n" __VA_ARGS__ "  func.return\n}\n"
#define RUN_OK(...) assert_int_equal(run_text_q(PROG(__VA_ARGS__), 0), SHLO_OK)

#define Q8 "!quant.uniform<i8:f32, 0.5:-10>"

/* ---- quantization ---- */

static void test_quant_round_trip_per_tensor(void **state) {
  (void)state;
  /* 1.0 / 0.5 - 10 = -8; 2.25 / 0.5 = 4.5 rounds to even 4 -> -6;
   * 2.75 / 0.5 = 5.5 -> 6 -> -4 */
  RUN_OK("  %x = stablehlo.constant dense<[1.0, 2.25, 2.75, -3.0]> : tensor<4xf32>\n"
         "  %q = stablehlo.uniform_quantize %x : (tensor<4xf32>) -> tensor<4x" Q8 ">\n"
         "  %b = stablehlo.bitcast_convert %q : (tensor<4x" Q8 ">) -> tensor<4xi8>\n"
         "  check.expect_eq_const %b, dense<[-8, -6, -4, -16]> : tensor<4xi8>\n"
         "  %d = stablehlo.uniform_dequantize %q : (tensor<4x" Q8 ">) -> tensor<4xf32>\n"
         "  check.expect_almost_eq_const %d, dense<[1.0, 2.0, 3.0, -3.0]> : tensor<4xf32>\n");
}

static void test_quant_per_axis(void **state) {
  (void)state;
  RUN_OK("  %x = stablehlo.constant dense<[[4.0, 15.0], [1.0, 2.0]]> : tensor<2x2xf32>\n"
         "  %q = stablehlo.uniform_quantize %x : (tensor<2x2xf32>) -> "
         "tensor<2x2x!quant.uniform<i8:f32:1, {0.1:-30,0.5:-20}>>\n"
         "  %b = stablehlo.bitcast_convert %q : (tensor<2x2x!quant.uniform<i8:f32:1, "
         "{0.1:-30,0.5:-20}>>) -> tensor<2x2xi8>\n"
         "  check.expect_eq_const %b, dense<[[10, 10], [-20, -16]]> : tensor<2x2xi8>\n"
         "  %d = stablehlo.uniform_dequantize %q : (tensor<2x2x!quant.uniform<i8:f32:1, "
         "{0.1:-30,0.5:-20}>>) -> tensor<2x2xf32>\n"
         "  check.expect_almost_eq_const %d, dense<[[4.0, 15.0], [1.0, 2.0]]> : tensor<2x2xf32>\n");
  /* requantize per-axis -> per-axis (the interpreter's example) */
  RUN_OK("  %o = stablehlo.constant dense<[10, 10]> : tensor<2xi8>\n"
         "  %q = stablehlo.bitcast_convert %o : (tensor<2xi8>) -> "
         "tensor<2x!quant.uniform<i8:f32:0, {0.1:-30,0.5:-20}>>\n"
         "  %r = stablehlo.uniform_quantize %q : (tensor<2x!quant.uniform<i8:f32:0, "
         "{0.1:-30,0.5:-20}>>) -> tensor<2x!quant.uniform<i8:f32:0, {0.1:-20,0.2:-30}>>\n"
         "  %b = stablehlo.bitcast_convert %r : (tensor<2x!quant.uniform<i8:f32:0, "
         "{0.1:-20,0.2:-30}>>) -> tensor<2xi8>\n"
         "  check.expect_eq_const %b, dense<[20, 45]> : tensor<2xi8>\n");
}

static void test_quant_saturation(void **state) {
  (void)state;
  RUN_OK("  %x = stablehlo.constant dense<[100.0, -100.0, 0x7FC00000, 1.0e30]> : tensor<4xf32>\n"
         "  %q = stablehlo.uniform_quantize %x : (tensor<4xf32>) -> "
         "tensor<4x!quant.uniform<i8:f32, 0.1>>\n"
         "  %b = stablehlo.bitcast_convert %q : (tensor<4x!quant.uniform<i8:f32, 0.1>>) "
         "-> tensor<4xi8>\n"
         "  check.expect_eq_const %b, dense<[127, -128, 0, 127]> : tensor<4xi8>\n");
  /* a narrowed storage range */
  RUN_OK("  %x = stablehlo.constant dense<[100.0, -100.0, 5.0]> : tensor<3xf32>\n"
         "  %q = stablehlo.uniform_quantize %x : (tensor<3xf32>) -> "
         "tensor<3x!quant.uniform<i8<-100:100>:f32, 0.1>>\n"
         "  %b = stablehlo.bitcast_convert %q : (tensor<3x!quant.uniform<i8<-100:100>:f32, "
         "0.1>>) -> tensor<3xi8>\n"
         "  check.expect_eq_const %b, dense<[100, -100, 50]> : tensor<3xi8>\n");
}

static void test_quantized_add_and_reduce(void **state) {
  (void)state;
  /* dequantize -> add -> quantize, operands of different scales */
  RUN_OK("  %a = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>\n"
         "  %b = stablehlo.constant dense<[3.0, 4.0]> : tensor<2xf32>\n"
         "  %qa = stablehlo.uniform_quantize %a : (tensor<2xf32>) -> "
         "tensor<2x!quant.uniform<i8:f32, 0.1:-30>>\n"
         "  %qb = stablehlo.uniform_quantize %b : (tensor<2xf32>) -> "
         "tensor<2x!quant.uniform<i8:f32, 0.5:-20>>\n"
         "  %s = stablehlo.add %qa, %qb : (tensor<2x!quant.uniform<i8:f32, 0.1:-30>>, "
         "tensor<2x!quant.uniform<i8:f32, 0.5:-20>>) -> tensor<2x!quant.uniform<i8:f32, 0.5:-20>>\n"
         "  %r = stablehlo.bitcast_convert %s : (tensor<2x!quant.uniform<i8:f32, 0.5:-20>>) "
         "-> tensor<2xi8>\n"
         "  check.expect_eq_const %r, dense<[-12, -8]> : tensor<2xi8>\n");
  /* a quantized reduce: its body runs in float too */
  RUN_OK("  %x = stablehlo.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>\n"
         "  %q = stablehlo.uniform_quantize %x : (tensor<4xf32>) -> "
         "tensor<4x!quant.uniform<i8:f32, 0.5>>\n"
         "  %z = stablehlo.constant dense<0> : tensor<i8>\n"
         "  %zq = stablehlo.bitcast_convert %z : (tensor<i8>) -> "
         "tensor<!quant.uniform<i8:f32, 0.5>>\n"
         "  %r = \"stablehlo.reduce\"(%q, %zq) ({\n"
         "  ^bb0(%u: tensor<!quant.uniform<i8:f32, 0.5>>, %v: tensor<!quant.uniform<i8:f32, 0.5>>):\n"
         "    %w = stablehlo.add %u, %v : tensor<!quant.uniform<i8:f32, 0.5>>\n"
         "    stablehlo.return %w : tensor<!quant.uniform<i8:f32, 0.5>>\n"
         "  }) {dimensions = array<i64: 0>} : (tensor<4x!quant.uniform<i8:f32, 0.5>>, "
         "tensor<!quant.uniform<i8:f32, 0.5>>) -> tensor<!quant.uniform<i8:f32, 0.5>>\n"
         "  %b = stablehlo.bitcast_convert %r : (tensor<!quant.uniform<i8:f32, 0.5>>) -> tensor<i8>\n"
         "  check.expect_eq_const %b, dense<20> : tensor<i8>\n");
  /* data movement keeps the storage as it is */
  RUN_OK("  %x = stablehlo.constant dense<[1, 2, 3, 4]> : tensor<4xi8>\n"
         "  %q = stablehlo.bitcast_convert %x : (tensor<4xi8>) -> tensor<4x" Q8 ">\n"
         "  %r = stablehlo.reshape %q : (tensor<4x" Q8 ">) -> tensor<2x2x" Q8 ">\n"
         "  %t = stablehlo.transpose %r, dims = [1, 0] : (tensor<2x2x" Q8 ">) -> tensor<2x2x" Q8 ">\n"
         "  %b = stablehlo.bitcast_convert %t : (tensor<2x2x" Q8 ">) -> tensor<2x2xi8>\n"
         "  check.expect_eq_const %b, dense<[[1, 3], [2, 4]]> : tensor<2x2xi8>\n");
}

/* ---- rng_bit_generator ---- */

static void test_rng_bit_generator_vectors(void **state) {
  (void)state;
  /* the spec's example */
  RUN_OK("  %s = stablehlo.constant dense<[1, 2]> : tensor<2xui64>\n"
         "  %ns, %o = stablehlo.rng_bit_generator %s, algorithm = THREE_FRY : "
         "(tensor<2xui64>) -> (tensor<2xui64>, tensor<2x2xui64>)\n"
         "  check.expect_eq_const %ns, dense<[1, 6]> : tensor<2xui64>\n"
         "  check.expect_eq_const %o, dense<[[9236835810183407956, 16087790271692313299], "
         "[18212823393184779219, 2658481902456610144]]> : tensor<2x2xui64>\n");
  /* Random123 threefry2x32_20: ctr (243f6a88, 85a308d3), key (13198a2e,
   * 03707344) -> (c4923a9c, 483df7a0) */
  RUN_OK("  %s = stablehlo.constant dense<[247824715720788526, 9629550131187509896]> : tensor<2xui64>\n"
         "  %ns, %o = stablehlo.rng_bit_generator %s, algorithm = THREE_FRY : "
         "(tensor<2xui64>) -> (tensor<2xui64>, tensor<ui64>)\n"
         "  check.expect_eq_const %ns, dense<[247824715720788526, 9629550131187509897]> : tensor<2xui64>\n"
         "  check.expect_eq_const %o, dense<5205589014174907036> : tensor<ui64>\n");
  /* Random123 philox4x32_10, u64[3] state [key, counter lo, counter hi] */
  RUN_OK("  %s = stablehlo.constant dense<[2999170649027065890, 9629550131187509896, "
         "247824715720788526]> : tensor<3xui64>\n"
         "  %ns, %o = stablehlo.rng_bit_generator %s, algorithm = PHILOX : "
         "(tensor<3xui64>) -> (tensor<3xui64>, tensor<4xui32>)\n"
         "  check.expect_eq_const %ns, dense<[2999170649027065890, 9629550131187509897, "
         "247824715720788526]> : tensor<3xui64>\n"
         "  check.expect_eq_const %o, dense<[3513581065, 2499661035, 1342301216, 605187745]> "
         ": tensor<4xui32>\n");
  /* u64[2] state: the counter's high half is the key; DEFAULT = PHILOX */
  RUN_OK("  %s = stablehlo.constant dense<[0, 0]> : tensor<2xui64>\n"
         "  %ns, %o = stablehlo.rng_bit_generator %s, algorithm = DEFAULT : "
         "(tensor<2xui64>) -> (tensor<2xui64>, tensor<4xui32>)\n"
         "  check.expect_eq_const %ns, dense<[0, 1]> : tensor<2xui64>\n"
         "  check.expect_eq_const %o, dense<[1713891541, 3781805453, 3159862348, 2600524760]> "
         ": tensor<4xui32>\n");
  /* 32-bit THREE_FRY outputs pair words along the split dimension:
   * a 2-element u32 output is the two words of one block */
  RUN_OK("  %s = stablehlo.constant dense<[247824715720788526, 9629550131187509896]> : tensor<2xui64>\n"
         "  %ns, %o = stablehlo.rng_bit_generator %s, algorithm = THREE_FRY : "
         "(tensor<2xui64>) -> (tensor<2xui64>, tensor<2xui32>)\n"
         "  check.expect_eq_const %ns, dense<[247824715720788526, 9629550131187509897]> : tensor<2xui64>\n"
         "  check.expect_eq_const %o, dense<[3297917596, 1212020640]> : tensor<2xui32>\n");
  /* Interoperability: a state of another integer type with the
   * algorithm's bit width is the little-endian concatenation of its
   * elements (struct.pack('<2Q', ...) unpacked as '<4i' gives the words
   * below), so it draws what the equal ui64 state draws. */
  RUN_OK("  %s = stablehlo.constant dense<[320440878, 57701188, 608135816, "
         "-2052912941]> : tensor<4xi32>\n"
         "  %ns, %o = stablehlo.rng_bit_generator %s, algorithm = THREE_FRY : "
         "(tensor<4xi32>) -> (tensor<4xi32>, tensor<ui64>)\n"
         "  check.expect_eq_const %ns, dense<[320440878, 57701188, 608135817, "
         "-2052912941]> : tensor<4xi32>\n"
         "  check.expect_eq_const %o, dense<5205589014174907036> : tensor<ui64>\n");
  RUN_OK("  %s = stablehlo.constant dense<[2752067618, 698298832, 608135816, "
         "2242054355, 320440878, 57701188]> : tensor<6xui32>\n"
         "  %ns, %o = stablehlo.rng_bit_generator %s, algorithm = PHILOX : "
         "(tensor<6xui32>) -> (tensor<6xui32>, tensor<4xui32>)\n"
         "  check.expect_eq_const %ns, dense<[2752067618, 698298832, 608135817, "
         "2242054355, 320440878, 57701188]> : tensor<6xui32>\n"
         "  check.expect_eq_const %o, dense<[3513581065, 2499661035, 1342301216, 605187745]> "
         ": tensor<4xui32>\n");
  /* a bad state size is refused by the verifier (C2), before compiling */
  shlo_module *m = NULL;
  shlo_executable *e = NULL;
  shlo_diag d;
  const char *bad =
      PROG("  %s = stablehlo.constant dense<[1, 2, 3]> : tensor<3xui64>\n"
           "  %ns, %o = stablehlo.rng_bit_generator %s, algorithm = THREE_FRY : "
           "(tensor<3xui64>) -> (tensor<3xui64>, tensor<2xui32>)\n");
  shlo_diag_clear(&d);
  assert_int_equal(shlo_parse_module(bad, strlen(bad), "test.mlir", &m, &d),
                   SHLO_OK);
  assert_int_equal(shlo_compile(m, NULL, &e, &d), SHLO_EVERIFY);
  assert_null(e);
  assert_non_null(strstr(d.message, "stablehlo.rng_bit_generator (C2)"));
  assert_non_null(strstr(d.message, "has 192 bits; THREE_FRY needs 128"));
  shlo_module_free(m);
  /* 96 bits of i32 are no PHILOX state */
  const char *bad32 =
      PROG("  %s = stablehlo.constant dense<[1, 2, 3]> : tensor<3xi32>\n"
           "  %ns, %o = stablehlo.rng_bit_generator %s, algorithm = PHILOX : "
           "(tensor<3xi32>) -> (tensor<3xi32>, tensor<2xui32>)\n");
  m = NULL;
  shlo_diag_clear(&d);
  assert_int_equal(shlo_parse_module(bad32, strlen(bad32), "test.mlir", &m, &d),
                   SHLO_OK);
  assert_int_equal(shlo_compile(m, NULL, &e, &d), SHLO_EVERIFY);
  assert_non_null(strstr(d.message, "has 96 bits; PHILOX needs 128 or 192"));
  shlo_module_free(m);
}

static void test_rng_ranges(void **state) {
  (void)state;
  shlo_value **res = NULL;
  int n = 0;
  const char *text =
      "func.func @main() -> (tensor<1000xi32>, tensor<1000xf32>, tensor<1000xf64>) {\n"
      "  %a = stablehlo.constant dense<-3> : tensor<i32>\n"
      "  %b = stablehlo.constant dense<5> : tensor<i32>\n"
      "  %sh = stablehlo.constant dense<[1000]> : tensor<1xi64>\n"
      "  %i = stablehlo.rng %a, %b, %sh, distribution = UNIFORM : "
      "(tensor<i32>, tensor<i32>, tensor<1xi64>) -> tensor<1000xi32>\n"
      "  %fa = stablehlo.constant dense<1.0> : tensor<f32>\n"
      "  %fb = stablehlo.constant dense<2.0> : tensor<f32>\n"
      "  %f = stablehlo.rng %fa, %fb, %sh, distribution = UNIFORM : "
      "(tensor<f32>, tensor<f32>, tensor<1xi64>) -> tensor<1000xf32>\n"
      "  %m = stablehlo.constant dense<10.0> : tensor<f64>\n"
      "  %sd = stablehlo.constant dense<2.0> : tensor<f64>\n"
      "  %g = stablehlo.rng %m, %sd, %sh, distribution = NORMAL : "
      "(tensor<f64>, tensor<f64>, tensor<1xi64>) -> tensor<1000xf64>\n"
      "  func.return %i, %f, %g : tensor<1000xi32>, tensor<1000xf32>, tensor<1000xf64>\n"
      "}\n";
  assert_int_equal(run_text_r(text, 0, &res, &n), SHLO_OK);
  assert_int_equal(n, 3);
  int seen[8] = {0};
  double sum = 0, sq = 0;
  for (int k = 0; k < 1000; k++) {
    int32_t v = ((int32_t *)res[0]->data)[k];
    assert_true(v >= -3 && v < 5);
    seen[v + 3] = 1;
    float f = ((float *)res[1]->data)[k];
    assert_true(f >= 1.0f && f < 2.0f);
    double g = ((double *)res[2]->data)[k];
    sum += g;
    sq += g * g;
  }
  for (int k = 0; k < 8; k++) assert_true(seen[k]);
  double mean = sum / 1000, var = sq / 1000 - mean * mean;
  assert_true(mean > 9.5 && mean < 10.5);
  assert_true(var > 3.0 && var < 5.0);
  for (int i = 0; i < n; i++) shlo_value_unref(res[i]);
  free(res);
}

/* ---- CHLO ---- */

static void test_chlo_edge_values(void **state) {
  (void)state;
  RUN_OK("  %x = stablehlo.constant dense<[0.0, 1.0, 2.0, -1.0]> : tensor<4xf64>\n"
         "  %a = chlo.asin %x : tensor<4xf64> -> tensor<4xf64>\n"
         "  check.expect_almost_eq_const %a, dense<[0.0, 1.5707963267948966, 0x7FF8000000000000, "
         "-1.5707963267948966]> : tensor<4xf64>\n"
         "  %c = chlo.acos %x : tensor<4xf64> -> tensor<4xf64>\n"
         "  check.expect_almost_eq_const %c, dense<[1.5707963267948966, 0.0, 0x7FF8000000000000, "
         "3.141592653589793]> : tensor<4xf64>\n"
         "  %l = chlo.lgamma %x : tensor<4xf64> -> tensor<4xf64>\n"
         "  check.expect_almost_eq_const %l, dense<[0x7FF0000000000000, 0.0, 0.0, "
         "0x7FF0000000000000]> : tensor<4xf64>\n"
         "  %d = chlo.digamma %x : tensor<4xf64> -> tensor<4xf64>\n"
         "  check.expect_almost_eq_const %d, dense<[0x7FF8000000000000, -0.5772156649015329, "
         "0.42278433509846713, 0x7FF8000000000000]> : tensor<4xf64>\n"
         "  %b = chlo.bessel_i1e %x : tensor<4xf64> -> tensor<4xf64>\n"
         "  check.expect_almost_eq_const %b, dense<[0.0, 0.20791041534970842, "
         "0.21526928924893765, -0.20791041534970842]> : tensor<4xf64>\n");
  RUN_OK("  %x = stablehlo.constant dense<[0x7F800000, 0xFF800000, 0x7FC00000, -0.0]> : tensor<4xf32>\n"
         "  %c = chlo.cosh %x : tensor<4xf32> -> tensor<4xf32>\n"
         "  check.expect_almost_eq_const %c, dense<[0x7F800000, 0x7F800000, 0x7FC00000, 1.0]> "
         ": tensor<4xf32>\n"
         "  %s = chlo.sinh %x : tensor<4xf32> -> tensor<4xf32>\n"
         "  %sb = stablehlo.bitcast_convert %s : (tensor<4xf32>) -> tensor<4xi32>\n"
         "  check.expect_eq_const %sb, dense<[2139095040, -8388608, 2143289344, -2147483648]> "
         ": tensor<4xi32>\n"
         "  %t = chlo.atan %x : tensor<4xf32> -> tensor<4xf32>\n"
         "  check.expect_almost_eq_const %t, dense<[1.57079637, -1.57079637, 0x7FC00000, 0.0]> "
         ": tensor<4xf32>\n"
         "  %i = chlo.is_inf %x : tensor<4xf32> -> tensor<4xi1>\n"
         "  check.expect_eq_const %i, dense<[true, true, false, false]> : tensor<4xi1>\n"
         "  %p = chlo.is_pos_inf %x : tensor<4xf32> -> tensor<4xi1>\n"
         "  check.expect_eq_const %p, dense<[true, false, false, false]> : tensor<4xi1>\n"
         "  %n = chlo.is_neg_inf %x : tensor<4xf32> -> tensor<4xi1>\n"
         "  check.expect_eq_const %n, dense<[false, true, false, false]> : tensor<4xi1>\n"
         "  %e = chlo.erf %x : tensor<4xf32> -> tensor<4xf32>\n"
         "  check.expect_almost_eq_const %e, dense<[1.0, -1.0, 0x7FC00000, 0.0]> : tensor<4xf32>\n"
         "  %ec = chlo.erfc %x : tensor<4xf32> -> tensor<4xf32>\n"
         "  check.expect_almost_eq_const %ec, dense<[0.0, 2.0, 0x7FC00000, 1.0]> : tensor<4xf32>\n");
  RUN_OK("  %x = stablehlo.constant dense<[0.0, 1.0, -1.0, 0.5, 2.0]> : tensor<5xf64>\n"
         "  %e = chlo.erf_inv %x : tensor<5xf64> -> tensor<5xf64>\n"
         "  check.expect_almost_eq_const %e, dense<[0.0, 0x7FF0000000000000, 0xFFF0000000000000, "
         "0.47693627620446982, 0x7FF8000000000000]> : tensor<5xf64>\n"
         "  %y = chlo.erf %e : tensor<5xf64> -> tensor<5xf64>\n"
         "  check.expect_almost_eq_const %y, dense<[0.0, 1.0, -1.0, 0.5, 0x7FF8000000000000]> : tensor<5xf64>\n");
  /* narrow floats round once from double: asin(0.5) = 0.5234375 in f16 */
  RUN_OK("  %x = stablehlo.constant dense<[0.5, 1.0]> : tensor<2xf16>\n"
         "  %a = chlo.asin %x : tensor<2xf16> -> tensor<2xf16>\n"
         "  %b = stablehlo.bitcast_convert %a : (tensor<2xf16>) -> tensor<2xi16>\n"
         "  check.expect_eq_const %b, dense<[14384, 15944]> : tensor<2xi16>\n");
}

static void test_chlo_binary(void **state) {
  (void)state;
  RUN_OK("  %a = stablehlo.constant dense<[1.0, 1.0, 2.0, 0.0]> : tensor<4xf64>\n"
         "  %x = stablehlo.constant dense<[1.0, 0.0, 0x7FF0000000000000, 1.0]> : tensor<4xf64>\n"
         "  %p = chlo.igamma %a, %x : tensor<4xf64>, tensor<4xf64> -> tensor<4xf64>\n"
         "  check.expect_almost_eq_const %p, dense<[0.6321205588285577, 0.0, 1.0, "
         "0x7FF8000000000000]> : tensor<4xf64>\n"
         "  %q = chlo.igammac %a, %x : tensor<4xf64>, tensor<4xf64> -> tensor<4xf64>\n"
         "  check.expect_almost_eq_const %q, dense<[0.36787944117144233, 1.0, 0.0, "
         "0x7FF8000000000000]> : tensor<4xf64>\n");
  RUN_OK("  %s = stablehlo.constant dense<[2.0, 1.0, 0.5]> : tensor<3xf64>\n"
         "  %q = stablehlo.constant dense<[1.0, 1.0, 1.0]> : tensor<3xf64>\n"
         "  %z = chlo.zeta %s, %q : tensor<3xf64>, tensor<3xf64> -> tensor<3xf64>\n"
         "  check.expect_almost_eq_const %z, dense<[1.6449340668482264, 0x7FF0000000000000, "
         "0x7FF8000000000000]> : tensor<3xf64>\n"
         "  %n = stablehlo.constant dense<[1.0, 0.0, 1.5]> : tensor<3xf64>\n"
         "  %g = chlo.polygamma %n, %q : tensor<3xf64>, tensor<3xf64> -> tensor<3xf64>\n"
         "  check.expect_almost_eq_const %g, dense<[1.6449340668482264, -0.5772156649015329, "
         "0x7FF8000000000000]> : tensor<3xf64>\n");
  /* next_after: smallest subnormal from 0, one ulp from 1, NaN stays */
  RUN_OK("  %x = stablehlo.constant dense<[0.0, 1.0, 1.0, 0x7FC00000]> : tensor<4xf32>\n"
         "  %y = stablehlo.constant dense<[1.0, 2.0, 0.0, 1.0]> : tensor<4xf32>\n"
         "  %n = chlo.next_after %x, %y : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>\n"
         "  %b = stablehlo.bitcast_convert %n : (tensor<4xf32>) -> tensor<4xi32>\n"
         "  check.expect_eq_const %b, dense<[1, 1065353217, 1065353215, 2143289344]> : tensor<4xi32>\n"
         "  %hx = stablehlo.constant dense<[1.0, 0.0]> : tensor<2xbf16>\n"
         "  %hy = stablehlo.constant dense<[2.0, -1.0]> : tensor<2xbf16>\n"
         "  %hn = chlo.next_after %hx, %hy : tensor<2xbf16>, tensor<2xbf16> -> tensor<2xbf16>\n"
         "  %hb = stablehlo.bitcast_convert %hn : (tensor<2xbf16>) -> tensor<2xui16>\n"
         "  check.expect_eq_const %hb, dense<[16257, 32769]> : tensor<2xui16>\n");
  RUN_OK("  %a = stablehlo.constant dense<[-1, 65536, -2147483648]> : tensor<3xi32>\n"
         "  %b = stablehlo.constant dense<[-1, 65536, 2]> : tensor<3xi32>\n"
         "  %m = chlo.mulhi %a, %b : tensor<3xi32>, tensor<3xi32> -> tensor<3xi32>\n"
         "  check.expect_eq_const %m, dense<[0, 1, -1]> : tensor<3xi32>\n");
  RUN_OK("  %c = stablehlo.constant dense<[(1.0, 2.0), (-3.0, -0.5)]> : tensor<2xcomplex<f32>>\n"
         "  %j = chlo.conj %c : tensor<2xcomplex<f32>> -> tensor<2xcomplex<f32>>\n"
         "  check.expect_eq_const %j, dense<[(1.0, -2.0), (-3.0, 0.5)]> : tensor<2xcomplex<f32>>\n");
}

/* asin_acos_kernel(x + iy) = sqrt(a^2 - x^2) + i acosh(a) with
 * a = (|z + 1| + |z - 1|) / 2, worked by hand:
 *   0.5: a = (1.5 + 0.5) / 2 = 1, w = sqrt(0.75) = 0.8660254037844386;
 *   i:   a = sqrt(2), w = sqrt(2) + i ln(1 + sqrt(2))
 *        = 1.4142135623730951 + 0.881373587019543i;
 *   2:   a = (3 + 1) / 2 = 2, w = 0 + i acosh(2) = 1.3169578969248166i;
 *   3+4i: a = (4 sqrt(2) + sqrt(20)) / 2 = 5.06449510224598,
 *        w = sqrt(a^2 - 9) + i acosh(a) = 4.080332172835138 + 2.305509031243477i,
 *        and atan2(3, Re w) = 0.6339838656391767 = Re asin(3 + 4i). */
static void test_chlo_asin_acos_kernel(void **state) {
  (void)state;
  RUN_OK("  %z = stablehlo.constant dense<[(0.5, 0.0), (0.0, 1.0), (2.0, 0.0), "
         "(3.0, 4.0)]> : tensor<4xcomplex<f64>>\n"
         "  %w = chlo.asin_acos_kernel %z : tensor<4xcomplex<f64>> -> "
         "tensor<4xcomplex<f64>>\n"
         "  check.expect_almost_eq_const %w, dense<[(0.8660254037844386, 0.0), "
         "(1.4142135623730951, 0.881373587019543), (0.0, 1.3169578969248166), "
         "(4.080332172835138, 2.305509031243477)]> : tensor<4xcomplex<f64>>\n"
         "  %re = stablehlo.real %w : (tensor<4xcomplex<f64>>) -> tensor<4xf64>\n"
         "  %x = stablehlo.constant dense<[0.5, 0.0, 2.0, 3.0]> : tensor<4xf64>\n"
         "  %t = stablehlo.atan2 %x, %re : tensor<4xf64>\n"
         "  check.expect_almost_eq_const %t, dense<[0.5235987755982989, 0.0, "
         "1.5707963267948966, 0.6339838656391767]> : tensor<4xf64>\n");
  /* Real operands are refused: the op is defined on complex numbers. */
  assert_int_equal(
      run_text_q(PROG("  %x = stablehlo.constant dense<0.5> : tensor<f32>\n"
                      "  %w = chlo.asin_acos_kernel %x : tensor<f32> -> "
                      "tensor<f32>\n"),
                 1),
      SHLO_EUNSUPPORTED);
}

static void test_chlo_top_k(void **state) {
  (void)state;
  /* ties: lower index first */
  RUN_OK("  %x = stablehlo.constant dense<[[3, 1, 3, 2, 3], [0, -1, 5, 5, -7]]> : tensor<2x5xi32>\n"
         "  %v, %i = chlo.top_k(%x, k = 3) : tensor<2x5xi32> -> (tensor<2x3xi32>, tensor<2x3xi32>)\n"
         "  check.expect_eq_const %v, dense<[[3, 3, 3], [5, 5, 0]]> : tensor<2x3xi32>\n"
         "  check.expect_eq_const %i, dense<[[0, 2, 4], [2, 3, 0]]> : tensor<2x3xi32>\n");
  /* floats: NaN sorts above +inf */
  RUN_OK("  %x = stablehlo.constant dense<[1.0, 0x7FC00000, 0x7F800000, -2.0]> : tensor<4xf32>\n"
         "  %v, %i = chlo.top_k(%x, k = 3) : tensor<4xf32> -> (tensor<3xf32>, tensor<3xi32>)\n"
         "  check.expect_eq_const %v, dense<[0x7FC00000, 0x7F800000, 1.0]> : tensor<3xf32>\n"
         "  check.expect_eq_const %i, dense<[1, 2, 0]> : tensor<3xi32>\n");
  /* unsigned values above INT_MAX */
  RUN_OK("  %x = stablehlo.constant dense<[1, 4294967295, 2147483648]> : tensor<3xui32>\n"
         "  %v, %i = chlo.top_k(%x, k = 2) : tensor<3xui32> -> (tensor<2xui32>, tensor<2xi32>)\n"
         "  check.expect_eq_const %v, dense<[4294967295, 2147483648]> : tensor<2xui32>\n"
         "  check.expect_eq_const %i, dense<[1, 2]> : tensor<2xi32>\n");
  /* i1: true above false, ties lower index first */
  RUN_OK("  %x = stablehlo.constant dense<[[false, true, false, true], "
         "[false, false, false, true]]> : tensor<2x4xi1>\n"
         "  %v, %i = chlo.top_k(%x, k = 3) : tensor<2x4xi1> -> "
         "(tensor<2x3xi1>, tensor<2x3xi32>)\n"
         "  check.expect_eq_const %v, dense<[[true, true, false], "
         "[true, false, false]]> : tensor<2x3xi1>\n"
         "  check.expect_eq_const %i, dense<[[1, 3, 0], [3, 0, 1]]> : "
         "tensor<2x3xi32>\n");
}

static void test_chlo_scan_and_ragged_dot(void **state) {
  (void)state;
  RUN_OK("  %x = stablehlo.constant dense<[1, 2, 3, 4]> : tensor<4xi32>\n"
         "  %z = stablehlo.constant dense<0> : tensor<i32>\n"
         "  %r:2 = chlo.scan(%x) inits(%z) dimension=0 {\n"
         "  ^bb0(%a: tensor<i32>, %c: tensor<i32>):\n"
         "    %s = stablehlo.add %a, %c : tensor<i32>\n"
         "    stablehlo.return %s, %s : tensor<i32>, tensor<i32>\n"
         "  } : (tensor<4xi32>, tensor<i32>) -> (tensor<4xi32>, tensor<i32>)\n"
         "  check.expect_eq_const %r#0, dense<[1, 3, 6, 10]> : tensor<4xi32>\n"
         "  check.expect_eq_const %r#1, dense<10> : tensor<i32>\n");
  /* ragged contracting dimension: one result per group */
  RUN_OK("  %l = stablehlo.constant dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]> : tensor<2x4xf32>\n"
         "  %r = stablehlo.constant dense<[[1.0], [1.0], [1.0], [1.0]]> : tensor<4x1xf32>\n"
         "  %g = stablehlo.constant dense<[1, 3]> : tensor<2xi64>\n"
         "  %o = \"chlo.ragged_dot\"(%l, %r, %g) {ragged_dot_dimension_numbers = #chlo.ragged_dot<"
         "lhs_batching_dimensions = [], rhs_batching_dimensions = [], "
         "lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0], "
         "lhs_ragged_dimensions = [1], rhs_group_dimensions = []>} : "
         "(tensor<2x4xf32>, tensor<4x1xf32>, tensor<2xi64>) -> tensor<2x2x1xf32>\n"
         "  check.expect_almost_eq_const %o, dense<[[[1.0], [5.0]], [[9.0], [21.0]]]> : tensor<2x2x1xf32>\n");
  /* ragged rows: rows of group j use rhs[j]; rows past the groups are 0 */
  RUN_OK("  %l = stablehlo.constant dense<[[1.0], [2.0], [3.0]]> : tensor<3x1xf32>\n"
         "  %r = stablehlo.constant dense<[[[10.0]], [[100.0]]]> : tensor<2x1x1xf32>\n"
         "  %g = stablehlo.constant dense<[1, 1]> : tensor<2xi64>\n"
         "  %o = \"chlo.ragged_dot\"(%l, %r, %g) {ragged_dot_dimension_numbers = #chlo.ragged_dot<"
         "lhs_batching_dimensions = [], rhs_batching_dimensions = [], "
         "lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1], "
         "lhs_ragged_dimensions = [0], rhs_group_dimensions = [0]>} : "
         "(tensor<3x1xf32>, tensor<2x1x1xf32>, tensor<2xi64>) -> tensor<3x1xf32>\n"
         "  check.expect_almost_eq_const %o, dense<[[10.0], [200.0], [0.0]]> : tensor<3x1xf32>\n");
}

static void test_wrong_expectation_fails(void **state) {
  (void)state;
  assert_int_equal(
      run_text_q(PROG("  %x = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>\n"
                      "  %q = stablehlo.uniform_quantize %x : (tensor<2xf32>) -> tensor<2x" Q8 ">\n"
                      "  %b = stablehlo.bitcast_convert %q : (tensor<2x" Q8 ">) -> tensor<2xi8>\n"
                      "  check.expect_eq_const %b, dense<[-8, -5]> : tensor<2xi8>\n"),
                 1),
      SHLO_ECHECK);
  assert_int_equal(
      run_text_q(PROG("  %x = stablehlo.constant dense<[1.0]> : tensor<1xf64>\n"
                      "  %l = chlo.lgamma %x : tensor<1xf64> -> tensor<1xf64>\n"
                      "  check.expect_almost_eq_const %l, dense<[0.5]> : tensor<1xf64>\n"),
                 1),
      SHLO_ECHECK);
  assert_int_equal(
      run_text_q(PROG("  %s = stablehlo.constant dense<[1, 2]> : tensor<2xui64>\n"
                      "  %ns, %o = stablehlo.rng_bit_generator %s, algorithm = THREE_FRY : "
                      "(tensor<2xui64>) -> (tensor<2xui64>, tensor<ui64>)\n"
                      "  check.expect_eq_const %ns, dense<[1, 2]> : tensor<2xui64>\n"),
                 1),
      SHLO_ECHECK);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_quant_round_trip_per_tensor),
      cmocka_unit_test(test_quant_per_axis),
      cmocka_unit_test(test_quant_saturation),
      cmocka_unit_test(test_quantized_add_and_reduce),
      cmocka_unit_test(test_rng_bit_generator_vectors),
      cmocka_unit_test(test_rng_ranges),
      cmocka_unit_test(test_chlo_edge_values),
      cmocka_unit_test(test_chlo_binary),
      cmocka_unit_test(test_chlo_asin_acos_kernel),
      cmocka_unit_test(test_chlo_top_k),
      cmocka_unit_test(test_chlo_scan_and_ragged_dot),
      cmocka_unit_test(test_wrong_expectation_fails),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
