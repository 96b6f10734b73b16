/* SPDX-License-Identifier: Apache-2.0 */
/* Sorts whose comparator is compare(f(a), f(b)) for one pure function f,
 * as jnp.sort and jnp.argsort emit for floats: the keyed path must give
 * exactly what the comparator says, bit for bit and stably. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "harness.h"

/* jnp.sort's comparator: -0 -> 0 and every NaN -> one NaN, then LT in
 * TOTALORDER. */
#define JAX_FLOAT_LESS(A, B)                                                 \
  "    %cz = stablehlo.constant dense<0.0> : tensor<f32>\n"                  \
  "    %e1 = stablehlo.compare EQ, " A ", %cz, FLOAT : (tensor<f32>, "       \
  "tensor<f32>) -> tensor<i1>\n"                                             \
  "    %s1 = stablehlo.select %e1, %cz, " A " : tensor<i1>, tensor<f32>\n"   \
  "    %n1 = stablehlo.compare NE, " A ", " A ", FLOAT : (tensor<f32>, "     \
  "tensor<f32>) -> tensor<i1>\n"                                             \
  "    %cn = stablehlo.constant dense<0x7FC00000> : tensor<f32>\n"           \
  "    %k1 = stablehlo.select %n1, %cn, %s1 : tensor<i1>, tensor<f32>\n"     \
  "    %cz2 = stablehlo.constant dense<0.0> : tensor<f32>\n"                 \
  "    %e2 = stablehlo.compare EQ, " B ", %cz2, FLOAT : (tensor<f32>, "      \
  "tensor<f32>) -> tensor<i1>\n"                                             \
  "    %s2 = stablehlo.select %e2, %cz2, " B " : tensor<i1>, tensor<f32>\n"  \
  "    %n2 = stablehlo.compare NE, " B ", " B ", FLOAT : (tensor<f32>, "     \
  "tensor<f32>) -> tensor<i1>\n"                                             \
  "    %cn2 = stablehlo.constant dense<0x7FC00000> : tensor<f32>\n"          \
  "    %k2 = stablehlo.select %n2, %cn2, %s2 : tensor<i1>, tensor<f32>\n"    \
  "    %lt = stablehlo.compare LT, %k1, %k2, TOTALORDER : (tensor<f32>, "    \
  "tensor<f32>) -> tensor<i1>\n"                                             \
  "    stablehlo.return %lt : tensor<i1>\n"

/* 3, NaN, -0, 1, -inf, +0, -NaN, 2 */
#define INPUT                                                                \
  "  %x = stablehlo.constant dense<[3.0, 0x7FC00000, -0.0, 1.0, 0xFF800000, " \
  "0.0, 0xFFC00001, 2.0]> : tensor<8xf32>\n"

static void jnp_sort_orders_zeros_stably_and_nans_last(void **state) {
  (void)state;
  assert_int_equal(
      harness_run(PROG(
          INPUT
          "  %r = \"stablehlo.sort\"(%x) ({\n"
          "  ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
          JAX_FLOAT_LESS("%a", "%b")
          "  }) {dimension = 0 : i64, is_stable = true} : (tensor<8xf32>) -> "
          "tensor<8xf32>\n"
          "  %bits = stablehlo.bitcast_convert %r : (tensor<8xf32>) -> "
          "tensor<8xi32>\n"
          /* -inf, -0 (first zero), +0, 1, 2, 3, NaN, -NaN (input order) */
          "  check.expect_eq_const %bits, dense<[-8388608, -2147483648, 0, "
          "1065353216, 1073741824, 1077936128, 2143289344, -4194303]> : "
          "tensor<8xi32>\n"),
          false),
      SHLO_OK);
}

static void jnp_argsort_carries_indices(void **state) {
  (void)state;
  assert_int_equal(
      harness_run(PROG(
          INPUT
          "  %i = stablehlo.iota dim = 0 : tensor<8xi32>\n"
          "  %r:2 = \"stablehlo.sort\"(%x, %i) ({\n"
          "  ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, "
          "%d: tensor<i32>):\n"
          JAX_FLOAT_LESS("%a", "%b")
          "  }) {dimension = 0 : i64, is_stable = true} : (tensor<8xf32>, "
          "tensor<8xi32>) -> (tensor<8xf32>, tensor<8xi32>)\n"
          "  check.expect_eq_const %r#1, dense<[4, 2, 5, 3, 7, 0, 1, 6]> : "
          "tensor<8xi32>\n"),
          false),
      SHLO_OK);
}

/* -b > -a, the key on the right: a before b when a > b, descending. */
static void swapped_arguments_sort_descending(void **state) {
  (void)state;
  assert_int_equal(
      harness_run(PROG(
          "  %x = stablehlo.constant dense<[5, -3, 9, 0, 9, -7]> : "
          "tensor<6xi32>\n"
          "  %r = \"stablehlo.sort\"(%x) ({\n"
          "  ^bb0(%a: tensor<i32>, %b: tensor<i32>):\n"
          "    %na = stablehlo.negate %a : tensor<i32>\n"
          "    %nb = stablehlo.negate %b : tensor<i32>\n"
          "    %lt = stablehlo.compare GT, %nb, %na, SIGNED : (tensor<i32>, "
          "tensor<i32>) -> tensor<i1>\n"
          "    stablehlo.return %lt : tensor<i1>\n"
          "  }) {dimension = 0 : i64} : (tensor<6xi32>) -> tensor<6xi32>\n"
          "  check.expect_eq_const %r, dense<[9, 9, 5, 0, -3, -7]> : "
          "tensor<6xi32>\n"),
          false),
      SHLO_OK);
}

/* Different functions on the two sides (a < b + 0): not a key, so the
 * comparator runs per comparison, and still sorts. */
static void asymmetric_comparators_run_as_written(void **state) {
  (void)state;
  assert_int_equal(
      harness_run(PROG(
          "  %x = stablehlo.constant dense<[2, 1, 3, -4, 1]> : tensor<5xi32>\n"
          "  %r = \"stablehlo.sort\"(%x) ({\n"
          "  ^bb0(%a: tensor<i32>, %b: tensor<i32>):\n"
          "    %zero = stablehlo.constant dense<0> : tensor<i32>\n"
          "    %b0 = stablehlo.add %b, %zero : tensor<i32>\n"
          "    %lt = stablehlo.compare LT, %a, %b0, SIGNED : (tensor<i32>, "
          "tensor<i32>) -> tensor<i1>\n"
          "    stablehlo.return %lt : tensor<i1>\n"
          "  }) {dimension = 0 : i64, is_stable = true} : (tensor<5xi32>) -> "
          "tensor<5xi32>\n"
          "  check.expect_eq_const %r, dense<[-4, 1, 1, 2, 3]> : "
          "tensor<5xi32>\n"),
          false),
      SHLO_OK);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(jnp_sort_orders_zeros_stably_and_nans_last),
      cmocka_unit_test(jnp_argsort_carries_indices),
      cmocka_unit_test(swapped_arguments_sort_descending),
      cmocka_unit_test(asymmetric_comparators_run_as_written),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
