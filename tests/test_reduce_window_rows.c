/* reduce_window over NHWC-style windows (one element of the last
 * dimension) folds whole rows; it must agree exactly with the same window
 * run through a non-native body (add, then add 0), with padding (where the
 * init value is added once per padded position), strides and dilation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "harness.h"

#define WINDOW_ATTRS(EXTRA)                                                  \
  "window_dimensions = array<i64: 1, 3, 2, 1>, "                             \
  "window_strides = array<i64: 1, 2, 2, 1>, "                                \
  "padding = dense<[[0, 0], [1, 1], [0, 1], [0, 0]]> : tensor<4x2xi64>" EXTRA

static void rows_match_the_generic_body(const char *extra_attrs,
                                        const char *out_type) {
  char text[4096];
  snprintf(text, sizeof text,
           "func.func @main() {\n"
           "  %%i = stablehlo.iota dim = 0 : tensor<240xi32>\n"
           "  %%k = stablehlo.constant dense<7919> : tensor<240xi32>\n"
           "  %%m = stablehlo.multiply %%i, %%k : tensor<240xi32>\n"
           "  %%x = stablehlo.reshape %%m : (tensor<240xi32>) -> "
           "tensor<2x5x6x4xi32>\n"
           "  %%init = stablehlo.constant dense<-5> : tensor<i32>\n"
           "  %%a = \"stablehlo.reduce_window\"(%%x, %%init) ({\n"
           "  ^bb0(%%p: tensor<i32>, %%q: tensor<i32>):\n"
           "    %%r = stablehlo.add %%p, %%q : tensor<i32>\n"
           "    stablehlo.return %%r : tensor<i32>\n"
           "  }) {%s} : (tensor<2x5x6x4xi32>, tensor<i32>) -> %s\n"
           "  %%b = \"stablehlo.reduce_window\"(%%x, %%init) ({\n"
           "  ^bb0(%%p: tensor<i32>, %%q: tensor<i32>):\n"
           "    %%t = stablehlo.add %%p, %%q : tensor<i32>\n"
           "    %%z = stablehlo.constant dense<0> : tensor<i32>\n"
           "    %%r = stablehlo.add %%t, %%z : tensor<i32>\n"
           "    stablehlo.return %%r : tensor<i32>\n"
           "  }) {%s} : (tensor<2x5x6x4xi32>, tensor<i32>) -> %s\n"
           "  check.expect_eq %%a, %%b : %s\n"
           "  func.return\n}\n",
           extra_attrs, out_type, extra_attrs, out_type, out_type);
  assert_int_equal(harness_run(text, false), SHLO_OK);
}

static void padded_strided_windows(void **state) {
  (void)state;
  rows_match_the_generic_body(WINDOW_ATTRS(""), "tensor<2x3x3x4xi32>");
}

static void dilated_windows(void **state) {
  (void)state;
  rows_match_the_generic_body(
      WINDOW_ATTRS(", window_dilations = array<i64: 1, 2, 2, 1>, "
                   "base_dilations = array<i64: 1, 1, 2, 1>"),
      "tensor<2x2x5x4xi32>");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(padded_strided_windows),
      cmocka_unit_test(dilated_windows),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
