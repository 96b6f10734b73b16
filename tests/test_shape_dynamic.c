/* SPDX-License-Identifier: Apache-2.0 */
/* dynamic_pad, real_dynamic_slice and the legacy broadcast: sizes read
 * from operands at run time, checked against the static result type. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "harness.h"

static void dynamic_pad_pads_with_negative_and_interior(void **state) {
  (void)state;
  assert_int_equal(
      harness_run(PROG(
          "  %x = stablehlo.constant dense<[[1, 2, 3], [4, 5, 6]]> : "
          "tensor<2x3xi32>\n"
          "  %v = stablehlo.constant dense<0> : tensor<i32>\n"
          "  %lo = stablehlo.constant dense<[1, -1]> : tensor<2xi64>\n"
          "  %hi = stablehlo.constant dense<[0, 1]> : tensor<2xi64>\n"
          "  %in = stablehlo.constant dense<[1, 0]> : tensor<2xi64>\n"
          "  %r = stablehlo.dynamic_pad %x, %v, %lo, %hi, %in : "
          "(tensor<2x3xi32>, tensor<i32>, tensor<2xi64>, tensor<2xi64>, "
          "tensor<2xi64>) -> tensor<4x3xi32>\n"
          "  check.expect_eq_const %r, dense<[[0, 0, 0], [2, 3, 0], "
          "[0, 0, 0], [5, 6, 0]]> : tensor<4x3xi32>\n"),
          false),
      SHLO_OK);
}

static void dynamic_pad_disagreeing_with_its_type_fails(void **state) {
  (void)state;
  assert_int_equal(
      harness_run(PROG(
          "  %x = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>\n"
          "  %v = stablehlo.constant dense<0.0> : tensor<f32>\n"
          "  %z = stablehlo.constant dense<[0]> : tensor<1xi32>\n"
          /* Computed, not a constant, so that only the run time sees it
           * (the verifier rejects constant paddings that disagree). */
          "  %lo3 = stablehlo.constant dense<[3]> : tensor<1xi32>\n"
          "  %lo = stablehlo.add %lo3, %z : tensor<1xi32>\n"
          "  %r = stablehlo.dynamic_pad %x, %v, %lo, %z, %z : "
          "(tensor<2xf32>, tensor<f32>, tensor<1xi32>, tensor<1xi32>, "
          "tensor<1xi32>) -> tensor<4xf32>\n"),
          true),
      SHLO_ERUNTIME);
}

static void real_dynamic_slice_strides(void **state) {
  (void)state;
  assert_int_equal(
      harness_run(PROG(
          "  %x = stablehlo.iota dim = 0 : tensor<10xi32>\n"
          "  %s = stablehlo.constant dense<[1]> : tensor<1xi64>\n"
          "  %l = stablehlo.constant dense<[8]> : tensor<1xi64>\n"
          "  %t = stablehlo.constant dense<[3]> : tensor<1xi64>\n"
          "  %r = \"stablehlo.real_dynamic_slice\"(%x, %s, %l, %t) : "
          "(tensor<10xi32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> "
          "tensor<3xi32>\n"
          "  check.expect_eq_const %r, dense<[1, 4, 7]> : tensor<3xi32>\n"),
          false),
      SHLO_OK);
}

static void legacy_broadcast_prepends_dimensions(void **state) {
  (void)state;
  assert_int_equal(
      harness_run(PROG(
          "  %x = stablehlo.constant dense<[1, 2]> : tensor<2xi8>\n"
          "  %r = stablehlo.broadcast %x, sizes = [2, 1] : (tensor<2xi8>) -> "
          "tensor<2x1x2xi8>\n"
          "  check.expect_eq_const %r, dense<[[[1, 2]], [[1, 2]]]> : "
          "tensor<2x1x2xi8>\n"
          "  %e = stablehlo.broadcast %x, sizes = [0] : (tensor<2xi8>) -> "
          "tensor<0x2xi8>\n"),
          false),
      SHLO_OK);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(dynamic_pad_pads_with_negative_and_interior),
      cmocka_unit_test(dynamic_pad_disagreeing_with_its_type_fails),
      cmocka_unit_test(real_dynamic_slice_strides),
      cmocka_unit_test(legacy_broadcast_prepends_dimensions),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
