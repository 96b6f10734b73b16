/* SPDX-License-Identifier: Apache-2.0 */
/* Values outlive the module and executable that made them (shlo/tensor.h):
 * a value owns everything it points at, quantization parameters included.
 *
 * Each test makes values, frees the module and its executable first, and
 * only then reads the values.  Before values owned their `quant`, reading
 * one after the module was gone was a heap-use-after-free; the suite runs
 * this file under ASan (test_value_ownership_asan) and valgrind so any
 * borrowed pointer shows up as an error, not as a lucky read. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "shlo/engine.h"
#include "shlo/ir.h"
#include "shlo/tensor.h"

/* Parse, compile and run `text`'s @main; free module and executable; hand
 * back the results (owned). */
static shlo_value **run_then_free_module(const char *text, int *n) {
  shlo_diag diag = {0};
  shlo_module *m = NULL;
  shlo_executable *e = NULL;
  shlo_value **res = NULL;
  assert_int_equal(shlo_parse_module(text, strlen(text), "own.mlir", &m, &diag),
                   SHLO_OK);
  assert_int_equal(shlo_compile(m, NULL, &e, &diag), SHLO_OK);
  shlo_status st = shlo_execute(e, NULL, NULL, 0, &res, n, &diag);
  if (st != SHLO_OK) fail_msg("%s", diag.message);
  shlo_executable_free(e);
  shlo_module_free(m);
  return res;
}

static void free_results(shlo_value **res, int n) {
  for (int i = 0; i < n; i++) shlo_value_unref(res[i]);
  free(res);
}

/* Per-axis parameters {0.1:-30, 0.5:-20}: 4.0 / 0.1 - 30 = 10 and
 * 15.0 / 0.5 - 20 = 10 (spec, uniform_quantize). */
#define QTYPE "tensor<2x!quant.uniform<i8:f32:0, {0.1:-30,0.5:-20}>>"

static void check_per_axis_params(const shlo_value *v) {
  const shlo_quant *q = shlo_tensor_quant(v);
  assert_non_null(q);
  assert_int_equal(q->n, 2);
  assert_true(q->per_axis);
  assert_int_equal(q->axis, 0);
  assert_true(q->scales[0] > 0.0999 && q->scales[0] < 0.1001);
  assert_true(q->scales[1] == 0.5);
  assert_int_equal(q->zero_points[0], -30);
  assert_int_equal(q->zero_points[1], -20);
}

static void quantize_result_outlives_module(void **state) {
  (void)state;
  int n = 0;
  shlo_value **res = run_then_free_module(
      "func.func @main() -> " QTYPE " {\n"
      "  %x = stablehlo.constant dense<[4.0, 15.0]> : tensor<2xf32>\n"
      "  %q = stablehlo.uniform_quantize %x : (tensor<2xf32>) -> " QTYPE "\n"
      "  return %q : " QTYPE "\n"
      "}\n",
      &n);
  assert_int_equal(n, 1);
  check_per_axis_params(res[0]);
  assert_int_equal(((const int8_t *)shlo_tensor_data_const(res[0]))[0], 10);
  assert_int_equal(((const int8_t *)shlo_tensor_data_const(res[0]))[1], 10);
  char *text = shlo_value_to_string(res[0]);
  assert_non_null(text);
  assert_non_null(strstr(text, "!quant.uniform<i8:f32:0, {"));
  free(text);
  /* A clone shares the parameters and keeps them after the original. */
  shlo_value *c = shlo_tensor_clone(res[0]);
  assert_non_null(c);
  free_results(res, n);
  check_per_axis_params(c);
  shlo_value_unref(c);
}

/* Every kernel path that hands a quantized result on: bitcast_convert
 * into a quantized type, a reshape of one, a while loop carrying one,
 * a constant of a quantized type. */
static void derived_quantized_values_outlive_module(void **state) {
  (void)state;
  int n = 0;
  shlo_value **res = run_then_free_module(
      "func.func @main() -> (" QTYPE ", tensor<1x2x!quant.uniform<i8:f32:1, "
      "{0.1:-30,0.5:-20}>>, " QTYPE ", tensor<!quant.uniform<i8:f32, "
      "0.25:3>>) {\n"
      "  %i = stablehlo.constant dense<[1, 2]> : tensor<2xi8>\n"
      "  %b = stablehlo.bitcast_convert %i : (tensor<2xi8>) -> " QTYPE "\n"
      "  %r = stablehlo.reshape %b : (" QTYPE ") -> tensor<1x2x!quant.uniform"
      "<i8:f32:1, {0.1:-30,0.5:-20}>>\n"
      "  %c = stablehlo.constant dense<0> : tensor<i32>\n"
      "  %w:2 = stablehlo.while(%it = %c, %v = %b) : tensor<i32>, " QTYPE "\n"
      "   cond {\n"
      "    %k = stablehlo.constant dense<3> : tensor<i32>\n"
      "    %p = stablehlo.compare LT, %it, %k : (tensor<i32>, tensor<i32>) -> "
      "tensor<i1>\n"
      "    stablehlo.return %p : tensor<i1>\n"
      "  } do {\n"
      "    %one = stablehlo.constant dense<1> : tensor<i32>\n"
      "    %nx = stablehlo.add %it, %one : tensor<i32>\n"
      "    stablehlo.return %nx, %v : tensor<i32>, " QTYPE "\n"
      "  }\n"
      "  %s = stablehlo.constant dense<7> : tensor<!quant.uniform<i8:f32, "
      "0.25:3>>\n"
      "  return %b, %r, %w#1, %s : " QTYPE ", tensor<1x2x!quant.uniform<i8:f32:"
      "1, {0.1:-30,0.5:-20}>>, " QTYPE ", tensor<!quant.uniform<i8:f32, "
      "0.25:3>>\n"
      "}\n",
      &n);
  assert_int_equal(n, 4);
  check_per_axis_params(res[0]);
  assert_non_null(shlo_tensor_quant(res[1]));
  assert_int_equal(shlo_tensor_quant(res[1])->axis, 1);
  assert_int_equal(shlo_tensor_quant(res[1])->zero_points[1], -20);
  check_per_axis_params(res[2]);
  assert_int_equal(((const int8_t *)shlo_tensor_data_const(res[2]))[1], 2);
  assert_non_null(shlo_tensor_quant(res[3]));
  assert_false(shlo_tensor_quant(res[3])->per_axis);
  assert_true(shlo_tensor_quant(res[3])->scales[0] == 0.25);
  assert_int_equal(shlo_tensor_quant(res[3])->zero_points[0], 3);
  assert_int_equal(((const int8_t *)shlo_tensor_data_const(res[3]))[0], 7);
  for (int i = 0; i < n; i++) {
    char *text = shlo_value_to_string(res[i]);
    assert_non_null(text);
    assert_non_null(strstr(text, "!quant.uniform<i8:f32"));
    free(text);
  }
  free_results(res, n);
}

/* shlo_parse_values frees its arena before returning: the quantized
 * values it returns must own their parameters. */
static void parsed_quantized_values_own_params(void **state) {
  (void)state;
  const char *text =
      "[dense<[1, 2]> : tensor<2x!quant.uniform<i8:f32, 0.5:-1>>]";
  shlo_value **vals = NULL;
  int n = 0;
  shlo_diag diag = {0};
  assert_int_equal(shlo_parse_values(text, strlen(text), &vals, &n,
                                     &diag),
                   SHLO_OK);
  assert_int_equal(n, 1);
  assert_non_null(shlo_tensor_quant(vals[0]));
  assert_true(shlo_tensor_quant(vals[0])->scales[0] == 0.5);
  assert_int_equal(shlo_tensor_quant(vals[0])->zero_points[0], -1);
  free_results(vals, n);
}

/* shlo_tensor_set_quant copies: the caller's parameters may go at once. */
static void set_quant_copies_the_parameters(void **state) {
  (void)state;
  int64_t dims[1] = {3};
  shlo_value *v = shlo_tensor_new(SHLO_SI8, 1, dims);
  assert_non_null(v);
  shlo_quant *q = calloc(1, sizeof *q);
  double *scales = malloc(3 * sizeof *scales);
  int64_t *zps = malloc(3 * sizeof *zps);
  assert_true(q && scales && zps);
  for (int i = 0; i < 3; i++) {
    scales[i] = 0.5 * (i + 1);
    zps[i] = -i;
  }
  *q = (shlo_quant){.storage = SHLO_SI8, .expressed = SHLO_F32,
                    .storage_min = -128, .storage_max = 127, .axis = 0,
                    .per_axis = true, .n = 3, .scales = scales,
                    .zero_points = zps};
  assert_int_equal(shlo_tensor_set_quant(v, q), SHLO_OK);
  free(scales);
  free(zps);
  free(q);
  assert_non_null(shlo_tensor_quant(v));
  assert_true(shlo_tensor_quant(v)->scales[2] == 1.5);
  assert_int_equal(shlo_tensor_quant(v)->zero_points[2], -2);
  /* Setting again replaces (and releases) the old copy; NULL clears. */
  assert_int_equal(shlo_tensor_set_quant(v, NULL), SHLO_OK);
  assert_null(shlo_tensor_quant(v));
  shlo_value_unref(v);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(quantize_result_outlives_module),
      cmocka_unit_test(derived_quantized_values_outlive_module),
      cmocka_unit_test(parsed_quantized_values_own_params),
      cmocka_unit_test(set_quant_copies_the_parameters),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
