/* SPDX-License-Identifier: Apache-2.0 */
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

/* reduce_window over an input of type in_type (numel elements) with the
 * given attributes, once with a native add body (the rows path) and once
 * with add-then-add-0 (the generic path); the two must be equal. */
static void rows_match_the_generic_body(const char *in_type, long numel,
                                        const char *attrs,
                                        const char *out_type) {
  char text[4096];
  snprintf(text, sizeof text,
           "func.func @main() {\n"
           "  %%i = stablehlo.iota dim = 0 : tensor<%ldxi32>\n"
           "  %%k = stablehlo.constant dense<7919> : tensor<%ldxi32>\n"
           "  %%m = stablehlo.multiply %%i, %%k : tensor<%ldxi32>\n"
           "  %%x = stablehlo.reshape %%m : (tensor<%ldxi32>) -> %s\n"
           "  %%init = stablehlo.constant dense<-5> : tensor<i32>\n"
           "  %%a = \"stablehlo.reduce_window\"(%%x, %%init) ({\n"
           "  ^bb0(%%p: tensor<i32>, %%q: tensor<i32>):\n"
           "    %%r = stablehlo.add %%p, %%q : tensor<i32>\n"
           "    stablehlo.return %%r : tensor<i32>\n"
           "  }) {%s} : (%s, tensor<i32>) -> %s\n"
           "  %%b = \"stablehlo.reduce_window\"(%%x, %%init) ({\n"
           "  ^bb0(%%p: tensor<i32>, %%q: tensor<i32>):\n"
           "    %%t = stablehlo.add %%p, %%q : tensor<i32>\n"
           "    %%z = stablehlo.constant dense<0> : tensor<i32>\n"
           "    %%r = stablehlo.add %%t, %%z : tensor<i32>\n"
           "    stablehlo.return %%r : tensor<i32>\n"
           "  }) {%s} : (%s, tensor<i32>) -> %s\n"
           "  check.expect_eq %%a, %%b : %s\n"
           "  func.return\n}\n",
           numel, numel, numel, numel, in_type, attrs, in_type, out_type,
           attrs, in_type, out_type, out_type);
  assert_int_equal(harness_run(text, false), SHLO_OK);
}

static void padded_strided_windows(void **state) {
  (void)state;
  rows_match_the_generic_body("tensor<2x5x6x4xi32>", 240, WINDOW_ATTRS(""),
                              "tensor<2x3x3x4xi32>");
}

static void dilated_windows(void **state) {
  (void)state;
  rows_match_the_generic_body(
      "tensor<2x5x6x4xi32>", 240,
      WINDOW_ATTRS(", window_dilations = array<i64: 1, 2, 2, 1>, "
                   "base_dilations = array<i64: 1, 1, 2, 1>"),
      "tensor<2x2x5x4xi32>");
}

/* A result larger than L2 is folded in scratch and streamed out; with
 * rows of 4 KB a segment is 4 pixels and the pool's chunks end inside a
 * row of pixels.  Padding on both sides of that row. */
static void streamed_result_in_short_segments(void **state) {
  (void)state;
  rows_match_the_generic_body(
      "tensor<1x2x1039x1024xi32>", 2L * 1039 * 1024,
      "window_dimensions = array<i64: 1, 2, 3, 1>, "
      "window_strides = array<i64: 1, 2, 2, 1>, "
      "padding = dense<[[0, 0], [0, 0], [2, 1], [0, 0]]> : tensor<4x2xi64>",
      "tensor<1x1x520x1024xi32>");
}

/* Pixels wider than a segment: one pixel at a time. */
static void pixels_wider_than_a_segment(void **state) {
  (void)state;
  rows_match_the_generic_body(
      "tensor<1x3x5x4100xi32>", 3L * 5 * 4100,
      "window_dimensions = array<i64: 1, 2, 2, 1>, "
      "window_strides = array<i64: 1, 1, 2, 1>, "
      "padding = dense<[[0, 0], [1, 0], [1, 0], [0, 0]]> : tensor<4x2xi64>",
      "tensor<1x3x3x4100xi32>");
}

/* Rank 2: the window runs along the first dimension only, partly in
 * padding at both ends, dilated. */
static void rank_two_rows(void **state) {
  (void)state;
  rows_match_the_generic_body(
      "tensor<9x6xi32>", 54,
      "window_dimensions = array<i64: 3, 1>, "
      "window_strides = array<i64: 2, 1>, "
      "window_dilations = array<i64: 2, 1>, "
      "padding = dense<[[3, 2], [0, 0]]> : tensor<2x2xi64>",
      "tensor<5x6xi32>");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(padded_strided_windows),
      cmocka_unit_test(dilated_windows),
      cmocka_unit_test(streamed_result_in_short_segments),
      cmocka_unit_test(pixels_wider_than_a_segment),
      cmocka_unit_test(rank_two_rows),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
