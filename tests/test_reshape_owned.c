/* SPDX-License-Identifier: Apache-2.0 */
/* stablehlo.reshape of an operand that dies at the reshape and that
 * nothing else holds takes the new shape in place of a copy
 * (kernels/shape.c): the results are those of the copy, and an operand
 * still in use afterwards, a caller's argument or a constant keeps its
 * own shape and bytes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "shlo/engine.h"
#include "shlo/ir.h"
#include "shlo/tensor.h"

/* Runs text's @main on the one argument; returns its results. */
static shlo_value **run(const char *text, shlo_value *arg, int want) {
  shlo_module *m = NULL;
  shlo_executable *e = NULL;
  shlo_diag d;
  if (shlo_load(text, strlen(text), "r.mlir", NULL, &m, &e, &d))
    fail_msg("load: %s", d.message);
  shlo_value **res = NULL;
  int n = 0;
  if (shlo_execute(e, NULL, &arg, 1, &res, &n, &d))
    fail_msg("execute: %s", d.message);
  assert_int_equal(n, want);
  shlo_executable_free(e);
  shlo_module_free(m);
  return res;
}

static void assert_shape(const shlo_value *v, int rank, const int64_t *dims) {
  assert_int_equal(shlo_tensor_rank(v), rank);
  for (int i = 0; i < rank; i++)
    assert_int_equal(shlo_tensor_dims(v)[i], dims[i]);
}

static shlo_value *arg_2x6(void) {
  int64_t dims[2] = {2, 6};
  shlo_value *v = shlo_tensor_new(SHLO_F32, 2, dims);
  assert_non_null(v);
  float *x = shlo_tensor_data(v);
  for (int i = 0; i < 12; i++) x[i] = (float)i;
  return v;
}

/* x + 1 dies at the reshape (taken in place); x itself, the caller's,
 * is reshaped too (copied), and so is x * 2, which the add after the
 * reshape still reads. */
static void reshape_in_place_or_copied(void **state) {
  (void)state;
  const char *text =
      "func.func @main(%x: tensor<2x6xf32>) -> (tensor<3x4xf32>, "
      "tensor<12xf32>, tensor<4x3xf32>, tensor<2x6xf32>) {\n"
      "  %one = stablehlo.constant dense<1.0> : tensor<2x6xf32>\n"
      "  %a = stablehlo.add %x, %one : tensor<2x6xf32>\n"
      "  %ra = stablehlo.reshape %a : (tensor<2x6xf32>) -> tensor<3x4xf32>\n"
      "  %rx = stablehlo.reshape %x : (tensor<2x6xf32>) -> tensor<12xf32>\n"
      "  %b = stablehlo.multiply %x, %one : tensor<2x6xf32>\n"
      "  %two = stablehlo.add %b, %b : tensor<2x6xf32>\n"
      "  %rb = stablehlo.reshape %two : (tensor<2x6xf32>) -> tensor<4x3xf32>\n"
      "  %c = stablehlo.add %two, %one : tensor<2x6xf32>\n"
      "  return %ra, %rx, %rb, %c : tensor<3x4xf32>, tensor<12xf32>, "
      "tensor<4x3xf32>, tensor<2x6xf32>\n"
      "}\n";
  shlo_value *x = arg_2x6();
  shlo_value **r = run(text, x, 4);
  static const int64_t d34[] = {3, 4}, d12[] = {12}, d43[] = {4, 3},
                       d26[] = {2, 6};
  assert_shape(r[0], 2, d34);
  assert_shape(r[1], 1, d12);
  assert_shape(r[2], 2, d43);
  assert_shape(r[3], 2, d26);
  assert_shape(x, 2, d26);
  const float *ra = shlo_tensor_data(r[0]), *rx = shlo_tensor_data(r[1]),
              *rb = shlo_tensor_data(r[2]), *c = shlo_tensor_data(r[3]),
              *xs = shlo_tensor_data(x);
  for (int i = 0; i < 12; i++) {
    assert_true(ra[i] == (float)i + 1);
    assert_true(rx[i] == (float)i);
    assert_true(rb[i] == 2.0f * (float)i);
    assert_true(c[i] == 2.0f * (float)i + 1);
    assert_true(xs[i] == (float)i);
  }
  for (int i = 0; i < 4; i++) shlo_value_unref(r[i]);
  free(r);
  shlo_value_unref(x);
}

/* A constant reshaped twice: the module's literal is held by the module,
 * never taken, so the second reshape sees the first's bytes and shape. */
static void constants_are_never_taken(void **state) {
  (void)state;
  const char *text =
      "func.func @main(%x: tensor<2x6xf32>) -> (tensor<3x4xf32>, "
      "tensor<6x2xf32>) {\n"
      "  %k = stablehlo.constant dense<[[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], "
      "[7.0, 8.0, 9.0, 10.0, 11.0, 12.0]]> : tensor<2x6xf32>\n"
      "  %r1 = stablehlo.reshape %k : (tensor<2x6xf32>) -> tensor<3x4xf32>\n"
      "  %r2 = stablehlo.reshape %k : (tensor<2x6xf32>) -> tensor<6x2xf32>\n"
      "  return %r1, %r2 : tensor<3x4xf32>, tensor<6x2xf32>\n"
      "}\n";
  shlo_value *x = arg_2x6();
  for (int round = 0; round < 2; round++) {
    shlo_value **r = run(text, x, 2);
    static const int64_t d34[] = {3, 4}, d62[] = {6, 2};
    assert_shape(r[0], 2, d34);
    assert_shape(r[1], 2, d62);
    for (int i = 0; i < 12; i++) {
      assert_true(((const float *)shlo_tensor_data(r[0]))[i] == (float)i + 1);
      assert_true(((const float *)shlo_tensor_data(r[1]))[i] == (float)i + 1);
    }
    shlo_value_unref(r[0]);
    shlo_value_unref(r[1]);
    free(r);
  }
  shlo_value_unref(x);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(reshape_in_place_or_copied),
      cmocka_unit_test(constants_are_never_taken),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
