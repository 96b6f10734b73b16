/* SPDX-License-Identifier: Apache-2.0 */
/* reduce_window over NHWC-style windows (one element of the last
 * dimension) folds whole rows; it must agree exactly with the same window
 * run through a non-native body (add, then add 0), with padding (where the
 * init value is added once per padded position), strides and dilation.
 * f32 maximum and minimum (pooling: each vector folded in a register on
 * AVX-512) against max-then-add -0.0, over NaNs of two payloads and
 * signs, both zeros and ties, rows of 37 and 48 floats, on every vmath
 * ISA this machine runs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "harness.h"
#include "kernels/vmath.h"

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

/* The f32 pooling input, x of in_type (numel elements): floor(5 sin(0.7
 * i)) (ties, +0 among them) where i mod 11 > 3, else NaN (payload 1),
 * -NaN (payload 2), +0 and -0 by turn. */
static void pool_input(char *buf, size_t cap, long numel,
                       const char *in_type) {
  snprintf(buf, cap,
      "  %%i = stablehlo.iota dim = 0 : tensor<%ldxi32>\n"
      "  %%f = stablehlo.convert %%i : (tensor<%ldxi32>) -> tensor<%ldxf32>\n"
      "  %%s7 = stablehlo.constant dense<0.7> : tensor<%ldxf32>\n"
      "  %%fa = stablehlo.multiply %%f, %%s7 : tensor<%ldxf32>\n"
      "  %%sn = stablehlo.sine %%fa : tensor<%ldxf32>\n"
      "  %%c5 = stablehlo.constant dense<5.0> : tensor<%ldxf32>\n"
      "  %%s5 = stablehlo.multiply %%sn, %%c5 : tensor<%ldxf32>\n"
      "  %%v = stablehlo.floor %%s5 : tensor<%ldxf32>\n"
      "  %%e = stablehlo.constant dense<11> : tensor<%ldxi32>\n"
      "  %%c = stablehlo.remainder %%i, %%e : tensor<%ldxi32>\n"
      "  %%n0 = stablehlo.constant dense<0x7FC00001> : tensor<%ldxf32>\n"
      "  %%n1 = stablehlo.constant dense<0xFFC00002> : tensor<%ldxf32>\n"
      "  %%zp = stablehlo.constant dense<0.0> : tensor<%ldxf32>\n"
      "  %%zn = stablehlo.constant dense<-0.0> : tensor<%ldxf32>\n"
      "  %%k0 = stablehlo.constant dense<0> : tensor<%ldxi32>\n"
      "  %%k1 = stablehlo.constant dense<1> : tensor<%ldxi32>\n"
      "  %%k2 = stablehlo.constant dense<2> : tensor<%ldxi32>\n"
      "  %%k3 = stablehlo.constant dense<3> : tensor<%ldxi32>\n"
      "  %%b0 = stablehlo.compare EQ, %%c, %%k0 : (tensor<%ldxi32>, "
      "tensor<%ldxi32>) -> tensor<%ldxi1>\n"
      "  %%b1 = stablehlo.compare EQ, %%c, %%k1 : (tensor<%ldxi32>, "
      "tensor<%ldxi32>) -> tensor<%ldxi1>\n"
      "  %%b2 = stablehlo.compare EQ, %%c, %%k2 : (tensor<%ldxi32>, "
      "tensor<%ldxi32>) -> tensor<%ldxi1>\n"
      "  %%b3 = stablehlo.compare EQ, %%c, %%k3 : (tensor<%ldxi32>, "
      "tensor<%ldxi32>) -> tensor<%ldxi1>\n"
      "  %%w3 = stablehlo.select %%b3, %%zn, %%v : tensor<%ldxi1>, "
      "tensor<%ldxf32>\n"
      "  %%w2 = stablehlo.select %%b2, %%zp, %%w3 : tensor<%ldxi1>, "
      "tensor<%ldxf32>\n"
      "  %%w1 = stablehlo.select %%b1, %%n1, %%w2 : tensor<%ldxi1>, "
      "tensor<%ldxf32>\n"
      "  %%w0 = stablehlo.select %%b0, %%n0, %%w1 : tensor<%ldxi1>, "
      "tensor<%ldxf32>\n"
      "  %%x = stablehlo.reshape %%w0 : (tensor<%ldxf32>) -> %s\n",
      numel, numel, numel, numel, numel, numel, numel, numel, numel, numel,
      numel, numel, numel, numel, numel, numel, numel, numel, numel, numel,
      numel, numel, numel, numel, numel, numel, numel, numel, numel, numel,
      numel, numel, numel, numel, numel, numel, numel, numel, numel, numel, in_type);
}

/* The pooling (op "maximum" or "minimum", init -inf or +inf) with its
 * native body and with op then add -0.0 (the generic path, the same
 * bits for quiet NaNs): equal bytes. */
static void pool_matches_the_generic_body(const char *op, const char *init,
                                          const char *in_type, long numel,
                                          const char *out_type) {
  char text[8192];
  pool_input(text, sizeof text, numel, in_type);
  harness_appendf(text, sizeof text,
      "  %%init = stablehlo.constant dense<%s> : tensor<f32>\n"
      "  %%a = \"stablehlo.reduce_window\"(%%x, %%init) ({\n"
      "  ^bb0(%%p: tensor<f32>, %%q: tensor<f32>):\n"
      "    %%r = stablehlo.%s %%p, %%q : tensor<f32>\n"
      "    stablehlo.return %%r : tensor<f32>\n"
      "  }) {" WINDOW_ATTRS("") "} : (%s, tensor<f32>) -> %s\n"
      "  %%b = \"stablehlo.reduce_window\"(%%x, %%init) ({\n"
      "  ^bb0(%%p: tensor<f32>, %%q: tensor<f32>):\n"
      "    %%t = stablehlo.%s %%p, %%q : tensor<f32>\n"
      "    %%z = stablehlo.constant dense<-0.0> : tensor<f32>\n"
      "    %%r = stablehlo.add %%t, %%z : tensor<f32>\n"
      "    stablehlo.return %%r : tensor<f32>\n"
      "  }) {" WINDOW_ATTRS("") "} : (%s, tensor<f32>) -> %s\n"
      "  check.expect_eq %%a, %%b : %s\n"
      "  func.return\n}\n",
      init, op, in_type, out_type, op, in_type, out_type, out_type);
  char prog[8400];
  snprintf(prog, sizeof prog, "func.func @main() {\n%s", text);
  assert_int_equal(harness_run(prog, false), SHLO_OK);
}

static void pools_of_each_isa(void) {
  pool_matches_the_generic_body("maximum", "0xFF800000",
                                "tensor<2x9x10x37xf32>", 2L * 9 * 10 * 37,
                                "tensor<2x5x5x37xf32>");
  pool_matches_the_generic_body("minimum", "0x7F800000",
                                "tensor<3x7x8x48xf32>", 3L * 7 * 8 * 48,
                                "tensor<3x4x4x48xf32>");
}

static void f32_pools_fold_in_registers(void **state) {
  (void)state;
  static const char *isas[] = {"avx512f", "avx2", "portable"};
  const char *was = shlo__vmath_isa();
  for (size_t i = 0; i < sizeof isas / sizeof isas[0]; i++)
    if (shlo__vmath_use_isa(isas[i])) pools_of_each_isa();
  assert_true(shlo__vmath_use_isa(was));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(padded_strided_windows),
      cmocka_unit_test(dilated_windows),
      cmocka_unit_test(streamed_result_in_short_segments),
      cmocka_unit_test(pixels_wider_than_a_segment),
      cmocka_unit_test(rank_two_rows),
      cmocka_unit_test(f32_pools_fold_in_registers),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
