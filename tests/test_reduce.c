/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests for reduce, map (engine/src/kernels/reduce.c), reduce_window,
 * select_and_scatter (engine/src/kernels/reduce_window.c), sort (engine/src/kernels/sort.c)
 * and their shared body machinery (engine/src/kernels/reduce_body.c).
 *
 * Each test runs a small program whose check.* ops state the expected
 * values; SHLO_OK means every check held.  Bodies that are one known op run
 * natively; the same computation written as a longer body runs through the
 * region path, and tests check that both give the same bits.  Edge cases:
 * empty operands, rank 0, degenerate windows, padding, dilations, integer
 * wrap, NaN ordering under TOTALORDER, stable sort with ties. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "shlo/engine.h"
#include "harness.h"
#include "vmath_test.h"

/* Parse, compile and run `text`; the status of the first stage that fails
 * (its diagnostic printed unless quiet), or SHLO_OK. */
static shlo_status run_text_q(const char *text, int quiet) {
  shlo_module *m = NULL;
  shlo_executable *e = NULL;
  shlo_value **res = NULL;
  int n_res = 0;
  shlo_diag d;
  char buf[SHLO_DIAG_MAX + 256];
  shlo_diag_clear(&d);
  shlo_status st = shlo_parse_module(text, strlen(text), "test.mlir", &m, &d);
  if (st == SHLO_OK) st = shlo_compile(m, NULL, &e, &d);
  if (st == SHLO_OK) st = shlo_execute(e, NULL, NULL, 0, &res, &n_res, &d);
  if (st != SHLO_OK && !quiet) {
    shlo_diag_format(&d, buf, sizeof buf);
    print_message("%s: %s\n", shlo_status_name(st), buf);
  }
  for (int i = 0; i < n_res; i++) shlo_value_unref(res[i]);
  free(res);
  if (e) shlo_executable_free(e);
  if (m) shlo_module_free(m);
  return st;
}

#define PROG(...) "func.func @main() {\n" __VA_ARGS__ "  func.return\n}\n"
#define RUN_OK(...) assert_int_equal(run_text_q(PROG(__VA_ARGS__), 0), SHLO_OK)

/* Region bodies over tensor<T>; S makes the value names unique. */
#define BODY(OP, T, S)                                                  \
  "    ^bb0(%a" S ": tensor<" T ">, %b" S ": tensor<" T ">):\n"          \
  "      %r" S " = stablehlo." OP " %a" S ", %b" S " : tensor<" T ">\n"  \
  "      stablehlo.return %r" S " : tensor<" T ">\n"
/* The same op as a body the native matcher does not take: a no-op
 * detour through two negations (exact for floats and signed ints). */
#define SLOW_BODY(OP, T, S)                                             \
  "    ^bb0(%a" S ": tensor<" T ">, %b" S ": tensor<" T ">):\n"          \
  "      %r" S " = stablehlo." OP " %a" S ", %b" S " : tensor<" T ">\n"  \
  "      %n" S " = stablehlo.negate %r" S " : tensor<" T ">\n"           \
  "      %m" S " = stablehlo.negate %n" S " : tensor<" T ">\n"           \
  "      stablehlo.return %m" S " : tensor<" T ">\n"
/* Comparator on the first of N operands' argument pairs. */
#define CMP_BODY2(DIR, T, T2, CT, S)                                    \
  "    ^bb0(%a" S ": tensor<" T ">, %b" S ": tensor<" T ">, %c" S        \
  ": tensor<" T2 ">, %d" S ": tensor<" T2 ">):\n"                       \
  "      %p" S " = stablehlo.compare " DIR ", %a" S ", %b" S CT " : (tensor<" T \
  ">, tensor<" T ">) -> tensor<i1>\n"                                   \
  "      stablehlo.return %p" S " : tensor<i1>\n"
#define CMP_BODY(DIR, T, CT, S)                                         \
  "    ^bb0(%a" S ": tensor<" T ">, %b" S ": tensor<" T ">):\n"          \
  "      %p" S " = stablehlo.compare " DIR ", %a" S ", %b" S CT " : (tensor<" T \
  ">, tensor<" T ">) -> tensor<i1>\n"                                   \
  "      stablehlo.return %p" S " : tensor<i1>\n"

/* ---- the harness itself ---- */

static void test_wrong_expectation_fails(void **state) {
  (void)state;
  assert_int_equal(
      run_text_q(
          PROG("  %x = stablehlo.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi32>\n"
               "  %z = stablehlo.constant dense<0> : tensor<i32>\n"
               "  %r = \"stablehlo.reduce\"(%x, %z) ({\n" BODY("add", "i32", "1")
               "  }) {dimensions = array<i64: 1>} : (tensor<2x3xi32>, tensor<i32>) -> tensor<2xi32>\n"
               "  check.expect_eq_const %r, dense<[6, 16]> : tensor<2xi32>\n"),
          1),
      SHLO_ECHECK);
  /* a comparator that does not return i1 is rejected at compile time */
  shlo_status st = run_text_q(
      PROG("  %x = stablehlo.constant dense<[3, 1, 2]> : tensor<3xi32>\n"
           "  %r = \"stablehlo.sort\"(%x) ({\n" BODY("add", "i32", "1")
           "  }) {dimension = 0 : i64} : (tensor<3xi32>) -> tensor<3xi32>\n"),
      1);
  assert_true(st == SHLO_EVERIFY || st == SHLO_EUNSUPPORTED);
}

/* ---- reduce ---- */

static void test_reduce_dims(void **state) {
  (void)state;
  RUN_OK("  %x = stablehlo.constant dense<[[[1, 2], [3, 4], [5, 6]], [[7, 8], [9, 10], [11, 12]]]> : tensor<2x3x2xi32>\n"
         "  %z = stablehlo.constant dense<0> : tensor<i32>\n"
         /* last dim reduced (row folds) */
         "  %a = \"stablehlo.reduce\"(%x, %z) ({\n" BODY("add", "i32", "1")
         "  }) {dimensions = array<i64: 2>} : (tensor<2x3x2xi32>, tensor<i32>) -> tensor<2x3xi32>\n"
         "  check.expect_eq_const %a, dense<[[3, 7, 11], [15, 19, 23]]> : tensor<2x3xi32>\n"
         /* first dim reduced (row accumulation) */
         "  %b = \"stablehlo.reduce\"(%x, %z) ({\n" BODY("add", "i32", "2")
         "  }) {dimensions = array<i64: 0>} : (tensor<2x3x2xi32>, tensor<i32>) -> tensor<3x2xi32>\n"
         "  check.expect_eq_const %b, dense<[[8, 10], [12, 14], [16, 18]]> : tensor<3x2xi32>\n"
         /* middle dim, and all dims, pretty form */
         "  %c = stablehlo.reduce(%x init: %z) applies stablehlo.maximum across dimensions = [1] : (tensor<2x3x2xi32>, tensor<i32>) -> tensor<2x2xi32>\n"
         "  check.expect_eq_const %c, dense<[[5, 6], [11, 12]]> : tensor<2x2xi32>\n"
         "  %d = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [0, 1, 2] : (tensor<2x3x2xi32>, tensor<i32>) -> tensor<i32>\n"
         "  check.expect_eq_const %d, dense<78> : tensor<i32>\n"
         /* no dims: body(init, x) per element */
         "  %o = stablehlo.constant dense<100> : tensor<i32>\n"
         "  %e = stablehlo.reduce(%x init: %o) applies stablehlo.add across dimensions = [] : (tensor<2x3x2xi32>, tensor<i32>) -> tensor<2x3x2xi32>\n"
         "  check.expect_eq_const %e, dense<[[[101, 102], [103, 104], [105, 106]], [[107, 108], [109, 110], [111, 112]]]> : tensor<2x3x2xi32>\n");
}

static void test_reduce_rank0_and_empty(void **state) {
  (void)state;
  RUN_OK("  %s = stablehlo.constant dense<5> : tensor<i64>\n"
         "  %i = stablehlo.constant dense<7> : tensor<i64>\n"
         "  %a = stablehlo.reduce(%s init: %i) applies stablehlo.multiply across dimensions = [] : (tensor<i64>, tensor<i64>) -> tensor<i64>\n"
         "  check.expect_eq_const %a, dense<35> : tensor<i64>\n"
         "  %a2 = \"stablehlo.reduce\"(%s, %i) ({\n" SLOW_BODY("multiply", "i64", "1")
         "  }) {dimensions = array<i64>} : (tensor<i64>, tensor<i64>) -> tensor<i64>\n"
         "  check.expect_eq_const %a2, dense<35> : tensor<i64>\n"
         /* reducing an empty dimension gives the init value */
         "  %e = stablehlo.constant dense<> : tensor<3x0xf32>\n"
         "  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"
         "  %b = stablehlo.reduce(%e init: %ninf) applies stablehlo.maximum across dimensions = [1] : (tensor<3x0xf32>, tensor<f32>) -> tensor<3xf32>\n"
         "  check.expect_eq_const %b, dense<0xFF800000> : tensor<3xf32>\n"
         "  %b2 = \"stablehlo.reduce\"(%e, %ninf) ({\n" SLOW_BODY("maximum", "f32", "2")
         "  }) {dimensions = array<i64: 1>} : (tensor<3x0xf32>, tensor<f32>) -> tensor<3xf32>\n"
         "  check.expect_eq_const %b2, dense<0xFF800000> : tensor<3xf32>\n"
         /* an empty result */
         "  %c = stablehlo.reduce(%e init: %ninf) applies stablehlo.maximum across dimensions = [0] : (tensor<3x0xf32>, tensor<f32>) -> tensor<0xf32>\n"
         "  check.expect_eq_const %c, dense<> : tensor<0xf32>\n");
}

static void test_reduce_int_wrap_and_bool(void **state) {
  (void)state;
  RUN_OK("  %x = stablehlo.constant dense<[100, 100, 100]> : tensor<3xi8>\n"
         "  %z = stablehlo.constant dense<0> : tensor<i8>\n"
         "  %a = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [0] : (tensor<3xi8>, tensor<i8>) -> tensor<i8>\n"
         "  check.expect_eq_const %a, dense<44> : tensor<i8>\n"
         "  %y = stablehlo.constant dense<[7, 7]> : tensor<2xi4>\n"
         "  %z4 = stablehlo.constant dense<0> : tensor<i4>\n"
         "  %b = stablehlo.reduce(%y init: %z4) applies stablehlo.add across dimensions = [0] : (tensor<2xi4>, tensor<i4>) -> tensor<i4>\n"
         "  check.expect_eq_const %b, dense<-2> : tensor<i4>\n"
         "  %u = stablehlo.constant dense<[200, 100]> : tensor<2xui8>\n"
         "  %zu = stablehlo.constant dense<0> : tensor<ui8>\n"
         "  %c = stablehlo.reduce(%u init: %zu) applies stablehlo.add across dimensions = [0] : (tensor<2xui8>, tensor<ui8>) -> tensor<ui8>\n"
         "  check.expect_eq_const %c, dense<44> : tensor<ui8>\n"
         "  %p = stablehlo.constant dense<[[true, false], [false, false]]> : tensor<2x2xi1>\n"
         "  %f = stablehlo.constant dense<false> : tensor<i1>\n"
         "  %t = stablehlo.constant dense<true> : tensor<i1>\n"
         "  %d = stablehlo.reduce(%p init: %f) applies stablehlo.add across dimensions = [1] : (tensor<2x2xi1>, tensor<i1>) -> tensor<2xi1>\n"
         "  check.expect_eq_const %d, dense<[true, false]> : tensor<2xi1>\n"
         "  %e = stablehlo.reduce(%p init: %t) applies stablehlo.and across dimensions = [0] : (tensor<2x2xi1>, tensor<i1>) -> tensor<2xi1>\n"
         "  check.expect_eq_const %e, dense<[false, false]> : tensor<2xi1>\n"
         "  %g = stablehlo.reduce(%p init: %f) applies stablehlo.xor across dimensions = [0, 1] : (tensor<2x2xi1>, tensor<i1>) -> tensor<i1>\n"
         "  check.expect_eq_const %g, dense<true> : tensor<i1>\n");
}

/* Float sums depend on the order; on rows shorter than a block of 16
 * (where f32 sums' tree begins, sum_tree.h) the native loop must fold in
 * the region path's order (and a sequential reference's). */
static void test_reduce_native_matches_generic(void **state) {
  (void)state;
  RUN_OK("  %x = stablehlo.constant dense<[[1.0e8, 0.1, -1.0e8, 0.3], [0.1, 0.2, 0.3, 1.0e-8], [3.0, 1.0e20, -1.0e20, 1.5]]> : tensor<3x4xf32>\n"
         "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
         "  %a = \"stablehlo.reduce\"(%x, %z) ({\n" BODY("add", "f32", "1")
         "  }) {dimensions = array<i64: 1>} : (tensor<3x4xf32>, tensor<f32>) -> tensor<3xf32>\n"
         "  %b = \"stablehlo.reduce\"(%x, %z) ({\n" SLOW_BODY("add", "f32", "2")
         "  }) {dimensions = array<i64: 1>} : (tensor<3x4xf32>, tensor<f32>) -> tensor<3xf32>\n"
         "  check.expect_eq %a, %b : tensor<3xf32>\n"
         /* sequential: ((0 + 1e8) + 0.1) - 1e8 + 0.3 in f32 */
         "  check.expect_eq_const %a, dense<[0.3, 0.6, 1.5]> : tensor<3xf32>\n"
         "  %c = \"stablehlo.reduce\"(%x, %z) ({\n" BODY("add", "f32", "3")
         "  }) {dimensions = array<i64: 0>} : (tensor<3x4xf32>, tensor<f32>) -> tensor<4xf32>\n"
         "  %d = \"stablehlo.reduce\"(%x, %z) ({\n" SLOW_BODY("add", "f32", "4")
         "  }) {dimensions = array<i64: 0>} : (tensor<3x4xf32>, tensor<f32>) -> tensor<4xf32>\n"
         "  check.expect_eq %c, %d : tensor<4xf32>\n"
         /* NaN propagates through maximum; -0 < +0 */
         "  %n = stablehlo.constant dense<[[1.0, 0x7FC00000, 2.0], [-0.0, 0.0, -0.0]]> : tensor<2x3xf32>\n"
         "  %m = stablehlo.constant dense<-0.0> : tensor<f32>\n"
         "  %e = stablehlo.reduce(%n init: %m) applies stablehlo.maximum across dimensions = [1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>\n"
         "  %e2 = stablehlo.bitcast_convert %e : (tensor<2xf32>) -> tensor<2xi32>\n"
         "  check.expect_eq_const %e2, dense<[2143289344, 0]> : tensor<2xi32>\n"
         /* bf16 sums round after every step */
         "  %h = stablehlo.constant dense<[256.0, 1.0, 1.0, 1.0, 1.0]> : tensor<5xbf16>\n"
         "  %hz = stablehlo.constant dense<0.0> : tensor<bf16>\n"
         "  %f = stablehlo.reduce(%h init: %hz) applies stablehlo.add across dimensions = [0] : (tensor<5xbf16>, tensor<bf16>) -> tensor<bf16>\n"
         "  check.expect_eq_const %f, dense<256.0> : tensor<bf16>\n"
         "  %f2 = \"stablehlo.reduce\"(%h, %hz) ({\n" SLOW_BODY("add", "bf16", "5")
         "  }) {dimensions = array<i64: 0>} : (tensor<5xbf16>, tensor<bf16>) -> tensor<bf16>\n"
         "  check.expect_eq %f, %f2 : tensor<bf16>\n");
}

static void test_reduce_variadic_argmax(void **state) {
  (void)state;
  RUN_OK("  %v = stablehlo.constant dense<[[3.0, 9.0, 9.0, 1.0], [0x7FC00000, 2.0, 5.0, 5.0]]> : tensor<2x4xf32>\n"
         "  %i = stablehlo.iota dim = 1 : tensor<2x4xi32>\n"
         "  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"
         "  %zero = stablehlo.constant dense<0> : tensor<i32>\n"
         "  %r:2 = stablehlo.reduce(%v init: %ninf), (%i init: %zero) across dimensions = [1] : (tensor<2x4xf32>, tensor<2x4xi32>, tensor<f32>, tensor<i32>) -> (tensor<2xf32>, tensor<2xi32>)\n"
         "   reducer(%a1: tensor<f32>, %b1: tensor<f32>) (%a2: tensor<i32>, %b2: tensor<i32>)  {\n"
         "    %gt = stablehlo.compare  GT, %a1, %b1,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
         "    %nan = stablehlo.compare  NE, %a1, %a1,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
         "    %pick = stablehlo.or %gt, %nan : tensor<i1>\n"
         "    %eq = stablehlo.compare  EQ, %a1, %b1,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
         "    %lt = stablehlo.compare  LT, %a2, %b2,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
         "    %tie = stablehlo.and %eq, %lt : tensor<i1>\n"
         "    %pi = stablehlo.or %pick, %tie : tensor<i1>\n"
         "    %rv = stablehlo.select %pick, %a1, %b1 : tensor<i1>, tensor<f32>\n"
         "    %ri = stablehlo.select %pi, %a2, %b2 : tensor<i1>, tensor<i32>\n"
         "    stablehlo.return %rv, %ri : tensor<f32>, tensor<i32>\n"
         "  }\n"
         "  check.expect_eq_const %r#0, dense<[9.0, 0x7FC00000]> : tensor<2xf32>\n"
         "  check.expect_eq_const %r#1, dense<[1, 0]> : tensor<2xi32>\n");
}

/* ---- reduce_window ---- */

static void test_reduce_window_spec_example(void **state) {
  (void)state;
  RUN_OK("  %x = stablehlo.constant dense<[[1, 2], [3, 4], [5, 6]]> : tensor<3x2xi64>\n"
         "  %z = stablehlo.constant dense<0> : tensor<i64>\n"
         "  %a = \"stablehlo.reduce_window\"(%x, %z) ({\n" BODY("add", "i64", "1")
         "  }) {window_dimensions = array<i64: 2, 1>, window_strides = array<i64: 4, 1>,\n"
         "      base_dilations = array<i64: 2, 1>, window_dilations = array<i64: 3, 1>,\n"
         "      padding = dense<[[2, 1], [0, 0]]> : tensor<2x2xi64>}\n"
         "     : (tensor<3x2xi64>, tensor<i64>) -> tensor<2x2xi64>\n"
         "  check.expect_eq_const %a, dense<[[0, 0], [3, 4]]> : tensor<2x2xi64>\n"
         "  %b = \"stablehlo.reduce_window\"(%x, %z) ({\n" SLOW_BODY("add", "i64", "2")
         "  }) {window_dimensions = array<i64: 2, 1>, window_strides = array<i64: 4, 1>,\n"
         "      base_dilations = array<i64: 2, 1>, window_dilations = array<i64: 3, 1>,\n"
         "      padding = dense<[[2, 1], [0, 0]]> : tensor<2x2xi64>}\n"
         "     : (tensor<3x2xi64>, tensor<i64>) -> tensor<2x2xi64>\n"
         "  check.expect_eq_const %b, dense<[[0, 0], [3, 4]]> : tensor<2x2xi64>\n");
}

static void test_reduce_window_degenerate(void **state) {
  (void)state;
  RUN_OK("  %x = stablehlo.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi32>\n"
         "  %z = stablehlo.constant dense<0> : tensor<i32>\n"
         "  %one = stablehlo.constant dense<1> : tensor<i32>\n"
         /* window 1: body(init, x) per element */
         "  %a = \"stablehlo.reduce_window\"(%x, %one) ({\n" BODY("add", "i32", "1")
         "  }) {window_dimensions = array<i64: 1, 1>} : (tensor<2x3xi32>, tensor<i32>) -> tensor<2x3xi32>\n"
         "  check.expect_eq_const %a, dense<[[2, 3, 4], [5, 6, 7]]> : tensor<2x3xi32>\n"
         /* stride larger than the dimension: one window */
         "  %b = \"stablehlo.reduce_window\"(%x, %z) ({\n" BODY("add", "i32", "2")
         "  }) {window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 5, 7>} : (tensor<2x3xi32>, tensor<i32>) -> tensor<1x1xi32>\n"
         "  check.expect_eq_const %b, dense<[[12]]> : tensor<1x1xi32>\n"
         /* windows entirely in padding fold the init value (1 + 1) */
         "  %c = \"stablehlo.reduce_window\"(%x, %one) ({\n" BODY("add", "i32", "3")
         "  }) {window_dimensions = array<i64: 1, 1>, padding = dense<[[1, 0], [0, 1]]> : tensor<2x2xi64>} : (tensor<2x3xi32>, tensor<i32>) -> tensor<3x4xi32>\n"
         "  check.expect_eq_const %c, dense<[[2, 2, 2, 2], [2, 3, 4, 2], [5, 6, 7, 2]]> : tensor<3x4xi32>\n"
         "  %c2 = \"stablehlo.reduce_window\"(%x, %one) ({\n" SLOW_BODY("add", "i32", "4")
         "  }) {window_dimensions = array<i64: 1, 1>, padding = dense<[[1, 0], [0, 1]]> : tensor<2x2xi64>} : (tensor<2x3xi32>, tensor<i32>) -> tensor<3x4xi32>\n"
         "  check.expect_eq %c, %c2 : tensor<3x4xi32>\n"
         /* negative padding crops */
         "  %d = \"stablehlo.reduce_window\"(%x, %z) ({\n" BODY("maximum", "i32", "5")
         "  }) {window_dimensions = array<i64: 1, 2>, padding = dense<[[0, -1], [-1, 0]]> : tensor<2x2xi64>} : (tensor<2x3xi32>, tensor<i32>) -> tensor<1x1xi32>\n"
         "  check.expect_eq_const %d, dense<[[3]]> : tensor<1x1xi32>\n"
         /* window larger than the padded input: empty result */
         "  %e = \"stablehlo.reduce_window\"(%x, %z) ({\n" BODY("add", "i32", "6")
         "  }) {window_dimensions = array<i64: 3, 1>} : (tensor<2x3xi32>, tensor<i32>) -> tensor<0x3xi32>\n"
         "  check.expect_eq_const %e, dense<> : tensor<0x3xi32>\n"
         /* empty input, padding only */
         "  %ee = stablehlo.constant dense<> : tensor<0xi32>\n"
         "  %f = \"stablehlo.reduce_window\"(%ee, %one) ({\n" BODY("add", "i32", "7")
         "  }) {window_dimensions = array<i64: 2>, padding = dense<[[1, 2]]> : tensor<1x2xi64>} : (tensor<0xi32>, tensor<i32>) -> tensor<2xi32>\n"
         "  check.expect_eq_const %f, dense<[3, 3]> : tensor<2xi32>\n"
         /* rank 0 */
         "  %s = stablehlo.constant dense<4> : tensor<i32>\n"
         "  %g = \"stablehlo.reduce_window\"(%s, %one) ({\n" BODY("add", "i32", "8")
         "  }) {window_dimensions = array<i64>} : (tensor<i32>, tensor<i32>) -> tensor<i32>\n"
         "  check.expect_eq_const %g, dense<5> : tensor<i32>\n");
}

static void test_reduce_window_cumulative(void **state) {
  (void)state;
  /* cumsum/cummax as JAX writes them, native and region bodies */
  RUN_OK("  %x = stablehlo.constant dense<[[0.1, 5.0], [0.2, -1.0], [0.3, 7.0], [1.0e8, 2.0]]> : tensor<4x2xf32>\n"
         "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
         "  %a = \"stablehlo.reduce_window\"(%x, %z) ({\n" BODY("add", "f32", "1")
         "  }) {window_dimensions = array<i64: 4, 1>, padding = dense<[[3, 0], [0, 0]]> : tensor<2x2xi64>} : (tensor<4x2xf32>, tensor<f32>) -> tensor<4x2xf32>\n"
         "  %b = \"stablehlo.reduce_window\"(%x, %z) ({\n" SLOW_BODY("add", "f32", "2")
         "  }) {window_dimensions = array<i64: 4, 1>, padding = dense<[[3, 0], [0, 0]]> : tensor<2x2xi64>} : (tensor<4x2xf32>, tensor<f32>) -> tensor<4x2xf32>\n"
         "  check.expect_eq %a, %b : tensor<4x2xf32>\n"
         "  check.expect_almost_eq_const %a, dense<[[0.1, 5.0], [0.3, 4.0], [0.6, 11.0], [1.0e8, 13.0]]> : tensor<4x2xf32>\n"
         "  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"
         "  %c = \"stablehlo.reduce_window\"(%x, %ninf) ({\n" BODY("maximum", "f32", "3")
         "  }) {window_dimensions = array<i64: 1, 4>, window_dilations = array<i64: 1, 1>, padding = dense<[[0, 0], [3, 0]]> : tensor<2x2xi64>} : (tensor<4x2xf32>, tensor<f32>) -> tensor<4x2xf32>\n"
         "  check.expect_eq_const %c, dense<[[0.1, 5.0], [0.2, 0.2], [0.3, 7.0], [1.0e8, 1.0e8]]> : tensor<4x2xf32>\n"
         /* window dilation on the last dim */
         "  %y = stablehlo.constant dense<[1, 2, 3, 4, 5]> : tensor<5xi32>\n"
         "  %iz = stablehlo.constant dense<0> : tensor<i32>\n"
         "  %d = \"stablehlo.reduce_window\"(%y, %iz) ({\n" BODY("add", "i32", "4")
         "  }) {window_dimensions = array<i64: 2>, window_dilations = array<i64: 2>} : (tensor<5xi32>, tensor<i32>) -> tensor<3xi32>\n"
         "  check.expect_eq_const %d, dense<[4, 6, 8]> : tensor<3xi32>\n"
         /* base dilation on the last dim: holes hold init (here 10) */
         "  %t = stablehlo.constant dense<10> : tensor<i32>\n"
         "  %e = \"stablehlo.reduce_window\"(%y, %t) ({\n" BODY("add", "i32", "5")
         "  }) {window_dimensions = array<i64: 2>, base_dilations = array<i64: 2>} : (tensor<5xi32>, tensor<i32>) -> tensor<8xi32>\n"
         "  %e2 = \"stablehlo.reduce_window\"(%y, %t) ({\n" SLOW_BODY("add", "i32", "6")
         "  }) {window_dimensions = array<i64: 2>, base_dilations = array<i64: 2>} : (tensor<5xi32>, tensor<i32>) -> tensor<8xi32>\n"
         "  check.expect_eq_const %e, dense<[21, 22, 22, 23, 23, 24, 24, 25]> : tensor<8xi32>\n"
         "  check.expect_eq %e, %e2 : tensor<8xi32>\n");
}

static void test_reduce_window_variadic(void **state) {
  (void)state;
  /* max with its index over windows of 2, a two-result body */
  RUN_OK("  %v = stablehlo.constant dense<[1, 4, 4, 2]> : tensor<4xi32>\n"
         "  %i = stablehlo.iota dim = 0 : tensor<4xi32>\n"
         "  %m = stablehlo.constant dense<-100> : tensor<i32>\n"
         "  %z = stablehlo.constant dense<-1> : tensor<i32>\n"
         "  %r:2 = \"stablehlo.reduce_window\"(%v, %i, %m, %z) ({\n"
         "    ^bb0(%a1: tensor<i32>, %a2: tensor<i32>, %b1: tensor<i32>, %b2: tensor<i32>):\n"
         "      %gt = stablehlo.compare GT, %b1, %a1 : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
         "      %rv = stablehlo.select %gt, %b1, %a1 : tensor<i1>, tensor<i32>\n"
         "      %ri = stablehlo.select %gt, %b2, %a2 : tensor<i1>, tensor<i32>\n"
         "      stablehlo.return %rv, %ri : tensor<i32>, tensor<i32>\n"
         "  }) {window_dimensions = array<i64: 2>} : (tensor<4xi32>, tensor<4xi32>, tensor<i32>, tensor<i32>) -> (tensor<3xi32>, tensor<3xi32>)\n"
         "  check.expect_eq_const %r#0, dense<[4, 4, 4]> : tensor<3xi32>\n"
         "  check.expect_eq_const %r#1, dense<[1, 1, 2]> : tensor<3xi32>\n");
}

/* ---- select_and_scatter ---- */

static void test_select_and_scatter(void **state) {
  (void)state;
  RUN_OK("  %o = stablehlo.constant dense<[[1, 5], [2, 5], [3, 6], [4, 4]]> : tensor<4x2xi64>\n"
         "  %s = stablehlo.constant dense<[[5, 6], [7, 8]]> : tensor<2x2xi64>\n"
         "  %z = stablehlo.constant dense<0> : tensor<i64>\n"
         "  %a = \"stablehlo.select_and_scatter\"(%o, %s, %z) ({\n" CMP_BODY("GE", "i64", "", "1")
         "  }, {\n" BODY("add", "i64", "2")
         "  }) {window_dimensions = array<i64: 3, 1>, window_strides = array<i64: 2, 1>,\n"
         "      padding = dense<[[0, 1], [0, 0]]> : tensor<2x2xi64>}\n"
         "     : (tensor<4x2xi64>, tensor<2x2xi64>, tensor<i64>) -> tensor<4x2xi64>\n"
         "  check.expect_eq_const %a, dense<[[0, 0], [0, 0], [5, 14], [7, 0]]> : tensor<4x2xi64>\n"
         /* the same with region bodies */
         "  %b = \"stablehlo.select_and_scatter\"(%o, %s, %z) ({\n"
         "    ^bb0(%a3: tensor<i64>, %b3: tensor<i64>):\n"
         "      %p3 = stablehlo.compare LT, %a3, %b3 : (tensor<i64>, tensor<i64>) -> tensor<i1>\n"
         "      %q3 = stablehlo.not %p3 : tensor<i1>\n"
         "      stablehlo.return %q3 : tensor<i1>\n"
         "  }, {\n" SLOW_BODY("add", "i64", "4")
         "  }) {window_dimensions = array<i64: 3, 1>, window_strides = array<i64: 2, 1>,\n"
         "      padding = dense<[[0, 1], [0, 0]]> : tensor<2x2xi64>}\n"
         "     : (tensor<4x2xi64>, tensor<2x2xi64>, tensor<i64>) -> tensor<4x2xi64>\n"
         "  check.expect_eq %a, %b : tensor<4x2xi64>\n"
         /* ties: GE keeps the first of equal elements, GT takes the last */
         "  %t = stablehlo.constant dense<[3.0, 3.0, 3.0]> : tensor<3xf32>\n"
         "  %ts = stablehlo.constant dense<[1.0]> : tensor<1xf32>\n"
         "  %tz = stablehlo.constant dense<0.0> : tensor<f32>\n"
         "  %c = \"stablehlo.select_and_scatter\"(%t, %ts, %tz) ({\n" CMP_BODY("GE", "f32", "", "5")
         "  }, {\n" BODY("add", "f32", "6")
         "  }) {window_dimensions = array<i64: 3>} : (tensor<3xf32>, tensor<1xf32>, tensor<f32>) -> tensor<3xf32>\n"
         "  check.expect_eq_const %c, dense<[1.0, 0.0, 0.0]> : tensor<3xf32>\n"
         "  %d = \"stablehlo.select_and_scatter\"(%t, %ts, %tz) ({\n" CMP_BODY("GT", "f32", "", "7")
         "  }, {\n" BODY("add", "f32", "8")
         "  }) {window_dimensions = array<i64: 3>} : (tensor<3xf32>, tensor<1xf32>, tensor<f32>) -> tensor<3xf32>\n"
         "  check.expect_eq_const %d, dense<[0.0, 0.0, 1.0]> : tensor<3xf32>\n"
         /* empty source leaves init everywhere */
         "  %es = stablehlo.constant dense<> : tensor<0xf32>\n"
         "  %e = \"stablehlo.select_and_scatter\"(%t, %es, %tz) ({\n" CMP_BODY("GE", "f32", "", "9")
         "  }, {\n" BODY("add", "f32", "10")
         "  }) {window_dimensions = array<i64: 4>} : (tensor<3xf32>, tensor<0xf32>, tensor<f32>) -> tensor<3xf32>\n"
         "  check.expect_eq_const %e, dense<0.0> : tensor<3xf32>\n");
}

/* ---- map ---- */

static void test_map(void **state) {
  (void)state;
  RUN_OK("  %x = stablehlo.constant dense<[[0, 1], [2, 3]]> : tensor<2x2xi64>\n"
         "  %y = stablehlo.constant dense<[[4, 5], [6, 7]]> : tensor<2x2xi64>\n"
         "  %a = \"stablehlo.map\"(%x, %y) ({\n" BODY("multiply", "i64", "1")
         "  }) {dimensions = array<i64: 0, 1>} : (tensor<2x2xi64>, tensor<2x2xi64>) -> tensor<2x2xi64>\n"
         "  check.expect_eq_const %a, dense<[[0, 5], [12, 21]]> : tensor<2x2xi64>\n"
         "  %b = \"stablehlo.map\"(%x, %y) ({\n" SLOW_BODY("multiply", "i64", "2")
         "  }) {dimensions = array<i64: 0, 1>} : (tensor<2x2xi64>, tensor<2x2xi64>) -> tensor<2x2xi64>\n"
         "  check.expect_eq %a, %b : tensor<2x2xi64>\n"
         /* one input, a body using a captured constant, converting type */
         "  %k = stablehlo.constant dense<0.5> : tensor<f32>\n"
         "  %c = \"stablehlo.map\"(%x) ({\n"
         "    ^bb0(%a3: tensor<i64>):\n"
         "      %f3 = stablehlo.convert %a3 : (tensor<i64>) -> tensor<f32>\n"
         "      %g3 = stablehlo.multiply %f3, %k : tensor<f32>\n"
         "      stablehlo.return %g3 : tensor<f32>\n"
         "  }) {dimensions = array<i64: 0, 1>} : (tensor<2x2xi64>) -> tensor<2x2xf32>\n"
         "  check.expect_eq_const %c, dense<[[0.0, 0.5], [1.0, 1.5]]> : tensor<2x2xf32>\n"
         /* rank 0 and empty */
         "  %s = stablehlo.constant dense<3> : tensor<i64>\n"
         "  %d = \"stablehlo.map\"(%s, %s) ({\n" BODY("add", "i64", "4")
         "  }) {dimensions = array<i64>} : (tensor<i64>, tensor<i64>) -> tensor<i64>\n"
         "  check.expect_eq_const %d, dense<6> : tensor<i64>\n"
         "  %e = stablehlo.constant dense<> : tensor<0x2xi64>\n"
         "  %f = \"stablehlo.map\"(%e, %e) ({\n" SLOW_BODY("add", "i64", "5")
         "  }) {dimensions = array<i64: 0, 1>} : (tensor<0x2xi64>, tensor<0x2xi64>) -> tensor<0x2xi64>\n"
         "  check.expect_eq_const %f, dense<> : tensor<0x2xi64>\n");
}

/* ---- sort ---- */

/* A slow comparator: the same compare, then a no-op and, which the native
 * matcher does not take, so the region runs per comparison (merge sort). */
#define SLOW_CMP_BODY2(DIR, T, T2, CT, S)                               \
  "    ^bb0(%a" S ": tensor<" T ">, %b" S ": tensor<" T ">, %c" S        \
  ": tensor<" T2 ">, %d" S ": tensor<" T2 ">):\n"                       \
  "      %p" S " = stablehlo.compare " DIR ", %a" S ", %b" S CT " : (tensor<" T \
  ">, tensor<" T ">) -> tensor<i1>\n"                                   \
  "      %q" S " = stablehlo.and %p" S ", %p" S " : tensor<i1>\n"        \
  "      stablehlo.return %q" S " : tensor<i1>\n"

/* Slices long enough for the radix sort (>= 512): keys with many ties,
 * carried indices, both directions, i32 and TOTALORDER f32 with NaNs of
 * both signs, infinities and signed zeros; the native order must be the
 * comparator region's, index for index. */
static void test_long_sorts_match_the_region(void **state) {
  (void)state;
  RUN_OK("  %i = stablehlo.iota dim = 1 : tensor<2x1000xi32>\n"
         "  %m = stablehlo.constant dense<7919> : tensor<2x1000xi32>\n"
         "  %r = stablehlo.constant dense<37> : tensor<2x1000xi32>\n"
         "  %h = stablehlo.constant dense<18> : tensor<2x1000xi32>\n"
         "  %im = stablehlo.multiply %i, %m : tensor<2x1000xi32>\n"
         "  %ir = stablehlo.remainder %im, %r : tensor<2x1000xi32>\n"
         "  %k = stablehlo.subtract %ir, %h : tensor<2x1000xi32>\n"
         "  %f0 = stablehlo.convert %k : (tensor<2x1000xi32>) -> tensor<2x1000xf32>\n"
         "  %q = stablehlo.constant dense<0.25> : tensor<2x1000xf32>\n"
         "  %f1 = stablehlo.multiply %f0, %q : tensor<2x1000xf32>\n"
         /* the values -4.5 and 4.5 become NaNs of either sign, 0 sometimes -0 */
         "  %c45 = stablehlo.constant dense<4.5> : tensor<2x1000xf32>\n"
         "  %cn45 = stablehlo.constant dense<-4.5> : tensor<2x1000xf32>\n"
         "  %c1 = stablehlo.constant dense<1.0> : tensor<2x1000xf32>\n"
         "  %pnan = stablehlo.constant dense<0x7FC00001> : tensor<2x1000xf32>\n"
         "  %nnan = stablehlo.constant dense<0xFFC00000> : tensor<2x1000xf32>\n"
         "  %pinf = stablehlo.constant dense<0x7F800000> : tensor<2x1000xf32>\n"
         "  %nz = stablehlo.constant dense<-0.0> : tensor<2x1000xf32>\n"
         "  %e1 = stablehlo.compare EQ, %f1, %c45 : (tensor<2x1000xf32>, tensor<2x1000xf32>) -> tensor<2x1000xi1>\n"
         "  %e2 = stablehlo.compare EQ, %f1, %cn45 : (tensor<2x1000xf32>, tensor<2x1000xf32>) -> tensor<2x1000xi1>\n"
         "  %e3 = stablehlo.compare EQ, %f1, %c1 : (tensor<2x1000xf32>, tensor<2x1000xf32>) -> tensor<2x1000xi1>\n"
         "  %g1 = stablehlo.select %e1, %pnan, %f1 : tensor<2x1000xi1>, tensor<2x1000xf32>\n"
         "  %g2 = stablehlo.select %e2, %nnan, %g1 : tensor<2x1000xi1>, tensor<2x1000xf32>\n"
         "  %g3 = stablehlo.select %e3, %pinf, %g2 : tensor<2x1000xi1>, tensor<2x1000xf32>\n"
         "  %zero = stablehlo.constant dense<0.0> : tensor<2x1000xf32>\n"
         "  %e4 = stablehlo.compare EQ, %g3, %zero : (tensor<2x1000xf32>, tensor<2x1000xf32>) -> tensor<2x1000xi1>\n"
         "  %odd = stablehlo.remainder %i, %h : tensor<2x1000xi32>\n"
         "  %zi = stablehlo.constant dense<0> : tensor<2x1000xi32>\n"
         "  %e5 = stablehlo.compare GT, %odd, %zi : (tensor<2x1000xi32>, tensor<2x1000xi32>) -> tensor<2x1000xi1>\n"
         "  %e6 = stablehlo.and %e4, %e5 : tensor<2x1000xi1>\n"
         "  %f = stablehlo.select %e6, %nz, %g3 : tensor<2x1000xi1>, tensor<2x1000xf32>\n"
         "  %a1, %a2 = \"stablehlo.sort\"(%k, %i) ({\n" CMP_BODY2("LT", "i32", "i32", "", "1")
         "  }) {dimension = 1 : i64, is_stable = true} : (tensor<2x1000xi32>, tensor<2x1000xi32>) -> (tensor<2x1000xi32>, tensor<2x1000xi32>)\n"
         "  %b1, %b2 = \"stablehlo.sort\"(%k, %i) ({\n" SLOW_CMP_BODY2("LT", "i32", "i32", "", "2")
         "  }) {dimension = 1 : i64, is_stable = true} : (tensor<2x1000xi32>, tensor<2x1000xi32>) -> (tensor<2x1000xi32>, tensor<2x1000xi32>)\n"
         "  check.expect_eq %a2, %b2 : tensor<2x1000xi32>\n"
         "  %c1s, %c2 = \"stablehlo.sort\"(%k, %i) ({\n" CMP_BODY2("GT", "i32", "i32", "", "3")
         "  }) {dimension = 1 : i64} : (tensor<2x1000xi32>, tensor<2x1000xi32>) -> (tensor<2x1000xi32>, tensor<2x1000xi32>)\n"
         "  %d1, %d2 = \"stablehlo.sort\"(%k, %i) ({\n" SLOW_CMP_BODY2("GT", "i32", "i32", "", "4")
         "  }) {dimension = 1 : i64} : (tensor<2x1000xi32>, tensor<2x1000xi32>) -> (tensor<2x1000xi32>, tensor<2x1000xi32>)\n"
         "  check.expect_eq %c2, %d2 : tensor<2x1000xi32>\n"
         "  %s1, %s2 = \"stablehlo.sort\"(%f, %i) ({\n" CMP_BODY2("LT", "f32", "i32", ", TOTALORDER", "5")
         "  }) {dimension = 1 : i64} : (tensor<2x1000xf32>, tensor<2x1000xi32>) -> (tensor<2x1000xf32>, tensor<2x1000xi32>)\n"
         "  %t1, %t2 = \"stablehlo.sort\"(%f, %i) ({\n" SLOW_CMP_BODY2("LT", "f32", "i32", ", TOTALORDER", "6")
         "  }) {dimension = 1 : i64} : (tensor<2x1000xf32>, tensor<2x1000xi32>) -> (tensor<2x1000xf32>, tensor<2x1000xi32>)\n"
         "  check.expect_eq %s2, %t2 : tensor<2x1000xi32>\n"
         "  %u1, %u2 = \"stablehlo.sort\"(%f, %i) ({\n" CMP_BODY2("GT", "f32", "i32", ", TOTALORDER", "7")
         "  }) {dimension = 1 : i64} : (tensor<2x1000xf32>, tensor<2x1000xi32>) -> (tensor<2x1000xf32>, tensor<2x1000xi32>)\n"
         "  %v1, %v2 = \"stablehlo.sort\"(%f, %i) ({\n" SLOW_CMP_BODY2("GT", "f32", "i32", ", TOTALORDER", "8")
         "  }) {dimension = 1 : i64} : (tensor<2x1000xf32>, tensor<2x1000xi32>) -> (tensor<2x1000xf32>, tensor<2x1000xi32>)\n"
         "  check.expect_eq %u2, %v2 : tensor<2x1000xi32>\n");
}

/* Rows long enough for the lane folds and the side-by-side row folds
 * (9 rows: groups of 4, 2 and one): native products and f64 sums are the
 * region's sequential ones bit for bit (f32 sums have a schedule of their
 * own: test_f32_row_sums_follow_their_tree), and a NaN row keeps its
 * first NaN through maximum. */
static void test_long_rows_fold_like_the_region(void **state) {
  (void)state;
  RUN_OK("  %i = stablehlo.iota dim = 0 : tensor<9x301xf32>\n"
         "  %j = stablehlo.iota dim = 1 : tensor<9x301xf32>\n"
         "  %ij = stablehlo.multiply %i, %j : tensor<9x301xf32>\n"
         "  %s = stablehlo.sine %ij : tensor<9x301xf32>\n"
         "  %big = stablehlo.constant dense<1.0e4> : tensor<9x301xf32>\n"
         "  %x = stablehlo.multiply %s, %big : tensor<9x301xf32>\n"
         "  %tiny = stablehlo.constant dense<1.0e-3> : tensor<9x301xf32>\n"
         "  %one = stablehlo.constant dense<1.0> : tensor<9x301xf32>\n"
         "  %st = stablehlo.multiply %s, %tiny : tensor<9x301xf32>\n"
         "  %y = stablehlo.add %one, %st : tensor<9x301xf32>\n"
         "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
         "  %o = stablehlo.constant dense<1.0> : tensor<f32>\n"
         "  %c = \"stablehlo.reduce\"(%y, %o) ({\n" BODY("multiply", "f32", "3")
         "  }) {dimensions = array<i64: 1>} : (tensor<9x301xf32>, tensor<f32>) -> tensor<9xf32>\n"
         "  %d = \"stablehlo.reduce\"(%y, %o) ({\n" SLOW_BODY("multiply", "f32", "4")
         "  }) {dimensions = array<i64: 1>} : (tensor<9x301xf32>, tensor<f32>) -> tensor<9xf32>\n"
         "  check.expect_eq %c, %d : tensor<9xf32>\n"
         "  %x64 = stablehlo.convert %x : (tensor<9x301xf32>) -> tensor<9x301xf64>\n"
         "  %z64 = stablehlo.constant dense<0.0> : tensor<f64>\n"
         "  %e = \"stablehlo.reduce\"(%x64, %z64) ({\n" BODY("add", "f64", "5")
         "  }) {dimensions = array<i64: 1>} : (tensor<9x301xf64>, tensor<f64>) -> tensor<9xf64>\n"
         "  %f = \"stablehlo.reduce\"(%x64, %z64) ({\n" SLOW_BODY("add", "f64", "6")
         "  }) {dimensions = array<i64: 1>} : (tensor<9x301xf64>, tensor<f64>) -> tensor<9xf64>\n"
         "  check.expect_eq %e, %f : tensor<9xf64>\n"
         /* row 2 (i*j = 2j) gets NaNs at j = 100 (payload 1) and 200 */
         "  %c200 = stablehlo.constant dense<200.0> : tensor<9x301xf32>\n"
         "  %c400 = stablehlo.constant dense<400.0> : tensor<9x301xf32>\n"
         "  %n1 = stablehlo.constant dense<0x7FC00001> : tensor<9x301xf32>\n"
         "  %n2 = stablehlo.constant dense<0x7FC00002> : tensor<9x301xf32>\n"
         "  %p1 = stablehlo.compare EQ, %ij, %c200 : (tensor<9x301xf32>, tensor<9x301xf32>) -> tensor<9x301xi1>\n"
         "  %p2 = stablehlo.compare EQ, %ij, %c400 : (tensor<9x301xf32>, tensor<9x301xf32>) -> tensor<9x301xi1>\n"
         "  %w1 = stablehlo.select %p1, %n1, %x : tensor<9x301xi1>, tensor<9x301xf32>\n"
         "  %w = stablehlo.select %p2, %n2, %w1 : tensor<9x301xi1>, tensor<9x301xf32>\n"
         "  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"
         "  %g = \"stablehlo.reduce\"(%w, %ninf) ({\n" BODY("maximum", "f32", "7")
         "  }) {dimensions = array<i64: 1>} : (tensor<9x301xf32>, tensor<f32>) -> tensor<9xf32>\n"
         "  %h = \"stablehlo.reduce\"(%w, %ninf) ({\n" SLOW_BODY("maximum", "f32", "8")
         "  }) {dimensions = array<i64: 1>} : (tensor<9x301xf32>, tensor<f32>) -> tensor<9xf32>\n"
         "  %gb = stablehlo.bitcast_convert %g : (tensor<9xf32>) -> tensor<9xi32>\n"
         "  %hb = stablehlo.bitcast_convert %h : (tensor<9xf32>) -> tensor<9xi32>\n"
         "  check.expect_eq %gb, %hb : tensor<9xi32>\n");
}

/* The lane folds of f32 maximum and minimum (rows of 301: whole blocks of
 * 64 and a tail) against the region path, bit for bit: rows of negative
 * values only, rows of signed zeros (+0 must win a maximum and -0 a
 * minimum, whichever comes first: the lanes' compare keeps the first, so
 * a zero result goes back to the sequential fold), and rows with a
 * negative NaN among the blocks, which the minimum must return with its
 * payload, or a NaN in the tail. */
#define LANE_FOLD(OP, X, INIT, S)                                            \
  "  %f" S " = \"stablehlo.reduce\"(" X ", " INIT ") ({\n"                       \
  BODY(OP, "f32", "f" S)                                                     \
  "  }) {dimensions = array<i64: 1>} : (tensor<9x301xf32>, tensor<f32>) -> "  \
  "tensor<9xf32>\n"                                                          \
  "  %g" S " = \"stablehlo.reduce\"(" X ", " INIT ") ({\n"                       \
  SLOW_BODY(OP, "f32", "g" S)                                                \
  "  }) {dimensions = array<i64: 1>} : (tensor<9x301xf32>, tensor<f32>) -> "  \
  "tensor<9xf32>\n"                                                          \
  "  %fb" S " = stablehlo.bitcast_convert %f" S " : (tensor<9xf32>) -> "     \
  "tensor<9xi32>\n"                                                          \
  "  %gb" S " = stablehlo.bitcast_convert %g" S " : (tensor<9xf32>) -> "     \
  "tensor<9xi32>\n"                                                          \
  "  check.expect_eq %fb" S ", %gb" S " : tensor<9xi32>\n"
static void lane_max_min_cases(void *ctx) {
  (void)ctx;
  RUN_OK("  %i = stablehlo.iota dim = 0 : tensor<9x301xf32>\n"
         "  %j = stablehlo.iota dim = 1 : tensor<9x301xf32>\n"
         "  %ij = stablehlo.multiply %i, %j : tensor<9x301xf32>\n"
         "  %s = stablehlo.sine %ij : tensor<9x301xf32>\n"
         "  %as = stablehlo.abs %s : tensor<9x301xf32>\n"
         "  %neg = stablehlo.negate %as : tensor<9x301xf32>\n"
         "  %zero = stablehlo.constant dense<0.0> : tensor<9x301xf32>\n"
         "  %sz = stablehlo.multiply %s, %zero : tensor<9x301xf32>\n"
         "  %c77 = stablehlo.constant dense<77.0> : tensor<9x301xf32>\n"
         "  %p = stablehlo.compare EQ, %j, %c77 : (tensor<9x301xf32>, "
         "tensor<9x301xf32>) -> tensor<9x301xi1>\n"
         "  %nn = stablehlo.constant dense<0xFFC00003> : tensor<9x301xf32>\n"
         "  %w = stablehlo.select %p, %nn, %s : tensor<9x301xi1>, "
         "tensor<9x301xf32>\n"
         "  %c300 = stablehlo.constant dense<300.0> : tensor<9x301xf32>\n"
         "  %t = stablehlo.compare EQ, %j, %c300 : (tensor<9x301xf32>, "
         "tensor<9x301xf32>) -> tensor<9x301xi1>\n"
         "  %pn = stablehlo.constant dense<0x7FC00005> : tensor<9x301xf32>\n"
         "  %wt = stablehlo.select %t, %pn, %s : tensor<9x301xi1>, "
         "tensor<9x301xf32>\n"
         "  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"
         "  %pinf = stablehlo.constant dense<0x7F800000> : tensor<f32>\n"
         LANE_FOLD("maximum", "%neg", "%ninf", "1")
         LANE_FOLD("minimum", "%neg", "%pinf", "2")
         LANE_FOLD("maximum", "%sz", "%ninf", "3")
         LANE_FOLD("minimum", "%sz", "%pinf", "4")
         LANE_FOLD("minimum", "%w", "%pinf", "5")
         LANE_FOLD("maximum", "%w", "%ninf", "6")
         LANE_FOLD("maximum", "%wt", "%ninf", "7")
         LANE_FOLD("minimum", "%wt", "%pinf", "8"));
}

/* with each loop this CPU can run: MAXPS/MINPS of AVX-512 and of AVX2, and
 * the generic one (vmath's portable variant) */
static void test_lane_max_min_order_signs(void **state) {
  (void)state;
  assert_true(each_vmath_variant(lane_max_min_cases, NULL) >= 1);
}

/* f32 sums %f<S> of RxC rows %x<S> from init I: values of many
 * magnitudes (the order shows in the last bits), a row of -0.0 (row 3)
 * and a row with +inf and -inf (row 5, a NaN).  rows_sum_check compares
 * them bit for bit with their schedule written out (harness_tree_sum). */
#define ROWS_SUM_DATA(R, C, I, S)                                             \
  "  %i" S " = stablehlo.iota dim = 0 : tensor<" R "x" C "xf32>\n"            \
  "  %j" S " = stablehlo.iota dim = 1 : tensor<" R "x" C "xf32>\n"            \
  "  %k" S " = stablehlo.constant dense<0.37> : tensor<" R "x" C "xf32>\n"    \
  "  %ij" S " = stablehlo.multiply %i" S ", %j" S " : tensor<" R "x" C "xf32>\n" \
  "  %a" S " = stablehlo.multiply %ij" S ", %k" S " : tensor<" R "x" C "xf32>\n" \
  "  %s" S " = stablehlo.sine %a" S " : tensor<" R "x" C "xf32>\n"            \
  "  %e" S " = stablehlo.exponential %s" S " : tensor<" R "x" C "xf32>\n"     \
  "  %m" S " = stablehlo.power %e" S ", %e" S " : tensor<" R "x" C "xf32>\n"  \
  "  %x0" S " = stablehlo.multiply %s" S ", %m" S " : tensor<" R "x" C "xf32>\n" \
  "  %c3" S " = stablehlo.constant dense<3.0> : tensor<" R "x" C "xf32>\n"    \
  "  %c5" S " = stablehlo.constant dense<5.0> : tensor<" R "x" C "xf32>\n"    \
  "  %c7" S " = stablehlo.constant dense<7.0> : tensor<" R "x" C "xf32>\n"    \
  "  %nz" S " = stablehlo.constant dense<-0.0> : tensor<" R "x" C "xf32>\n"   \
  "  %pi" S " = stablehlo.constant dense<0x7F800000> : tensor<" R "x" C "xf32>\n" \
  "  %ni" S " = stablehlo.constant dense<0xFF800000> : tensor<" R "x" C "xf32>\n" \
  "  %r3" S " = stablehlo.compare EQ, %i" S ", %c3" S " : (tensor<" R "x" C      \
  "xf32>, tensor<" R "x" C "xf32>) -> tensor<" R "x" C "xi1>\n"               \
  "  %r5" S " = stablehlo.compare EQ, %i" S ", %c5" S " : (tensor<" R "x" C      \
  "xf32>, tensor<" R "x" C "xf32>) -> tensor<" R "x" C "xi1>\n"               \
  "  %j7" S " = stablehlo.compare EQ, %j" S ", %c7" S " : (tensor<" R "x" C      \
  "xf32>, tensor<" R "x" C "xf32>) -> tensor<" R "x" C "xi1>\n"               \
  "  %j5" S " = stablehlo.compare EQ, %j" S ", %c5" S " : (tensor<" R "x" C      \
  "xf32>, tensor<" R "x" C "xf32>) -> tensor<" R "x" C "xi1>\n"               \
  "  %p7" S " = stablehlo.and %r5" S ", %j7" S " : tensor<" R "x" C "xi1>\n"   \
  "  %p5" S " = stablehlo.and %r5" S ", %j5" S " : tensor<" R "x" C "xi1>\n"   \
  "  %x1" S " = stablehlo.select %r3" S ", %nz" S ", %x0" S " : tensor<" R "x" C \
  "xi1>, tensor<" R "x" C "xf32>\n"                                           \
  "  %x2" S " = stablehlo.select %p7" S ", %pi" S ", %x1" S " : tensor<" R "x" C \
  "xi1>, tensor<" R "x" C "xf32>\n"                                           \
  "  %x" S " = stablehlo.select %p5" S ", %ni" S ", %x2" S " : tensor<" R "x" C  \
  "xi1>, tensor<" R "x" C "xf32>\n"                                           \
  "  %z" S " = stablehlo.constant dense<" I "> : tensor<f32>\n"                \
  "  %f" S " = \"stablehlo.reduce\"(%x" S ", %z" S ") ({\n"                     \
  BODY("add", "f32", "f" S)                                                     \
  "  }) {dimensions = array<i64: 1>} : (tensor<" R "x" C "xf32>, tensor<f32>) " \
  "-> tensor<" R "xf32>\n"

/* The cases: rows, columns, init, name. */
#define ROWS_SUM_CASES(X)                                                   \
  X(37, 301, "0.0", a) X(37, 301, "-0.0", b) X(16, 16, "-0.0", c)           \
  X(20, 15, "1.5", d) X(3, 600, "0.0", e) X(15, 48, "0.0", f)
#define ROWS_SUM_DATA_OF(R, C, I, S) ROWS_SUM_DATA(#R, #C, I, #S)

static void rows_sum_check(char *t, size_t cap, long R, long C,
                           const char *S) {
  char x[16], z[16], g[16];
  snprintf(x, sizeof x, "x%s", S);
  snprintf(z, sizeof z, "z%s", S);
  snprintf(g, sizeof g, "g%s", S);
  harness_tree_sum(t, cap, x, R, C, C, z, g);
  harness_appendf(t, cap,
                  "  %%fb%s = stablehlo.bitcast_convert %%f%s : "
                  "(tensor<%ldxf32>) -> tensor<%ldxi32>\n"
                  "  %%gb%s = stablehlo.bitcast_convert %%g%s : "
                  "(tensor<%ldxf32>) -> tensor<%ldxi32>\n"
                  "  check.expect_eq %%fb%s, %%gb%s : tensor<%ldxi32>\n",
                  S, S, R, R, S, S, R, R, S, S, R);
}

/* f32 row sums in their schedule (sum_tree.h), 16 rows at a time and
 * one at a time: two whole groups of 16 rows and 5 more, rows of 18
 * blocks and 13 more elements; exactly one block; rows too short for a
 * block; rows of 600 (two vector spans of 16 blocks, 5 blocks, 8 more);
 * 15 rows of 3 blocks (each row alone, the scalar tree); from +0 and
 * -0. */
static void test_f32_row_sums_follow_their_tree(void **state) {
  (void)state;
  enum { CAP = 65536 };
  char *t = calloc(CAP, 1);
  assert_non_null(t);
  harness_appendf(t, CAP, "%s",
                  "func.func @main() {\n" ROWS_SUM_CASES(ROWS_SUM_DATA_OF));
#define ROWS_SUM_CHECK_OF(R, C, I, S) rows_sum_check(t, CAP, R, C, #S);
  ROWS_SUM_CASES(ROWS_SUM_CHECK_OF)
#undef ROWS_SUM_CHECK_OF
  harness_appendf(t, CAP, "  func.return\n}\n");
  assert_true(strlen(t) + 1 < CAP);
  assert_int_equal(run_text_q(t, 0), SHLO_OK);
  free(t);
}

static void test_sort_spec_example(void **state) {
  (void)state;
  RUN_OK("  %x = stablehlo.constant dense<[[1, 2, 3], [3, 2, 1]]> : tensor<2x3xi64>\n"
         "  %y = stablehlo.constant dense<[[3, 2, 1], [1, 2, 3]]> : tensor<2x3xi64>\n"
         "  %r:2 = \"stablehlo.sort\"(%x, %y) ({\n" CMP_BODY2("GT", "i64", "i64", "", "1")
         "  }) {dimension = 0 : i64, is_stable = true} : (tensor<2x3xi64>, tensor<2x3xi64>) -> (tensor<2x3xi64>, tensor<2x3xi64>)\n"
         "  check.expect_eq_const %r#0, dense<[[3, 2, 3], [1, 2, 1]]> : tensor<2x3xi64>\n"
         "  check.expect_eq_const %r#1, dense<[[1, 2, 1], [3, 2, 3]]> : tensor<2x3xi64>\n"
         /* negative dimension, ascending along the rows */
         "  %s = \"stablehlo.sort\"(%x) ({\n" CMP_BODY("LT", "i64", "", "2")
         "  }) {dimension = -1 : i64} : (tensor<2x3xi64>) -> tensor<2x3xi64>\n"
         "  check.expect_eq_const %s, dense<[[1, 2, 3], [1, 2, 3]]> : tensor<2x3xi64>\n");
}

static void test_sort_stable_ties(void **state) {
  (void)state;
  /* 40 keys with many ties (more than one insertion run), values = index */
  RUN_OK("  %k = stablehlo.constant dense<[3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3]> : tensor<40xi32>\n"
         "  %i = stablehlo.iota dim = 0 : tensor<40xi32>\n"
         "  %r:2 = \"stablehlo.sort\"(%k, %i) ({\n" CMP_BODY2("LT", "i32", "i32", "", "1")
         "  }) {dimension = 0 : i64, is_stable = true} : (tensor<40xi32>, tensor<40xi32>) -> (tensor<40xi32>, tensor<40xi32>)\n"
         "  check.expect_eq_const %r#0, dense<[1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3]> : tensor<40xi32>\n"
         "  check.expect_eq_const %r#1, dense<[1, 4, 7, 10, 13, 16, 19, 22, 25, 28, 31, 34, 37, 2, 5, 8, 11, 14, 17, 20, 23, 26, 29, 32, 35, 38, 0, 3, 6, 9, 12, 15, 18, 21, 24, 27, 30, 33, 36, 39]> : tensor<40xi32>\n"
         /* descending keeps ties in order too */
         "  %d:2 = \"stablehlo.sort\"(%k, %i) ({\n" CMP_BODY2("GT", "i32", "i32", "", "2")
         "  }) {dimension = 0 : i64, is_stable = true} : (tensor<40xi32>, tensor<40xi32>) -> (tensor<40xi32>, tensor<40xi32>)\n"
         "  %d1 = \"stablehlo.slice\"(%d#1) {start_indices = array<i64: 0>, limit_indices = array<i64: 5>, strides = array<i64: 1>} : (tensor<40xi32>) -> tensor<5xi32>\n"
         "  check.expect_eq_const %d1, dense<[0, 3, 6, 9, 12]> : tensor<5xi32>\n"
         /* the region path (comparator with an extra no-op) agrees */
         "  %g:2 = \"stablehlo.sort\"(%k, %i) ({\n"
         "    ^bb0(%a3: tensor<i32>, %b3: tensor<i32>, %c3: tensor<i32>, %d3: tensor<i32>):\n"
         "      %p3 = stablehlo.compare GE, %a3, %b3 : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
         "      %q3 = stablehlo.not %p3 : tensor<i1>\n"
         "      stablehlo.return %q3 : tensor<i1>\n"
         "  }) {dimension = 0 : i64, is_stable = true} : (tensor<40xi32>, tensor<40xi32>) -> (tensor<40xi32>, tensor<40xi32>)\n"
         "  check.expect_eq %g#0, %r#0 : tensor<40xi32>\n"
         "  check.expect_eq %g#1, %r#1 : tensor<40xi32>\n");
}

static void test_sort_nan_total_order(void **state) {
  (void)state;
  /* -NaN < -Inf < -1 < -0 < +0 < 1 < +Inf < +NaN */
  RUN_OK("  %x = stablehlo.constant dense<[0x7FC00000, 1.0, 0.0, 0xFF800000, -0.0, 0xFFC00000, 0x7F800000, -1.0]> : tensor<8xf32>\n"
         "  %a = \"stablehlo.sort\"(%x) ({\n" CMP_BODY("LT", "f32", ", TOTALORDER", "1")
         "  }) {dimension = 0 : i64} : (tensor<8xf32>) -> tensor<8xf32>\n"
         "  %ab = stablehlo.bitcast_convert %a : (tensor<8xf32>) -> tensor<8xi32>\n"
         "  check.expect_eq_const %ab, dense<[-4194304, -8388608, -1082130432, -2147483648, 0, 1065353216, 2139095040, 2143289344]> : tensor<8xi32>\n"
         /* descending */
         "  %b = \"stablehlo.sort\"(%x) ({\n" CMP_BODY("GT", "f32", ", TOTALORDER", "2")
         "  }) {dimension = 0 : i64} : (tensor<8xf32>) -> tensor<8xf32>\n"
         "  %bb = stablehlo.bitcast_convert %b : (tensor<8xf32>) -> tensor<8xi32>\n"
         "  check.expect_eq_const %bb, dense<[2143289344, 2139095040, 1065353216, 0, -2147483648, -1082130432, -8388608, -4194304]> : tensor<8xi32>\n"
         /* f64 and bf16 */
         "  %y = stablehlo.constant dense<[0x7FF8000000000000, 2.0, 0xFFF8000000000000, -2.0]> : tensor<4xf64>\n"
         "  %c = \"stablehlo.sort\"(%y) ({\n" CMP_BODY("LT", "f64", ", TOTALORDER", "3")
         "  }) {dimension = 0 : i64} : (tensor<4xf64>) -> tensor<4xf64>\n"
         "  %cb = stablehlo.bitcast_convert %c : (tensor<4xf64>) -> tensor<4xi64>\n"
         "  check.expect_eq_const %cb, dense<[-2251799813685248, -4611686018427387904, 4611686018427387904, 9221120237041090560]> : tensor<4xi64>\n"
         "  %h = stablehlo.constant dense<[0x7FC0, 1.0, 0xFFC0, -1.0, 0.5]> : tensor<5xbf16>\n"
         "  %d = \"stablehlo.sort\"(%h) ({\n" CMP_BODY("LT", "bf16", ", TOTALORDER", "4")
         "  }) {dimension = 0 : i64} : (tensor<5xbf16>) -> tensor<5xbf16>\n"
         "  %db = stablehlo.bitcast_convert %d : (tensor<5xbf16>) -> tensor<5xi16>\n"
         "  check.expect_eq_const %db, dense<[-64, -16512, 16128, 16256, 32704]> : tensor<5xi16>\n");
}

static void test_sort_unsigned_empty_rank(void **state) {
  (void)state;
  RUN_OK("  %x = stablehlo.constant dense<[[200, 3], [1, 255]]> : tensor<2x2xui8>\n"
         "  %a = \"stablehlo.sort\"(%x) ({\n" CMP_BODY("LT", "ui8", "", "1")
         "  }) {dimension = 1 : i64} : (tensor<2x2xui8>) -> tensor<2x2xui8>\n"
         "  check.expect_eq_const %a, dense<[[3, 200], [1, 255]]> : tensor<2x2xui8>\n"
         "  %e = stablehlo.constant dense<> : tensor<3x0xf32>\n"
         "  %b = \"stablehlo.sort\"(%e) ({\n" CMP_BODY("LT", "f32", "", "2")
         "  }) {dimension = 1 : i64} : (tensor<3x0xf32>) -> tensor<3x0xf32>\n"
         "  check.expect_eq_const %b, dense<> : tensor<3x0xf32>\n"
         /* sorting along a dimension of size 1 is the identity */
         "  %y = stablehlo.constant dense<[[5, 4, 3]]> : tensor<1x3xi32>\n"
         "  %c = \"stablehlo.sort\"(%y) ({\n" CMP_BODY("LT", "i32", "", "3")
         "  }) {dimension = 0 : i64} : (tensor<1x3xi32>) -> tensor<1x3xi32>\n"
         "  check.expect_eq_const %c, dense<[[5, 4, 3]]> : tensor<1x3xi32>\n");
}

/* maximum and minimum over i1 are or and and (true > false): a row of one
 * true tells them apart from each other. */
static void test_reduce_bool_max_min(void **state) {
  (void)state;
  RUN_OK("  %p = stablehlo.constant dense<[[true, false], [false, false], "
         "[true, true]]> : tensor<3x2xi1>\n"
         "  %f = stablehlo.constant dense<false> : tensor<i1>\n"
         "  %t = stablehlo.constant dense<true> : tensor<i1>\n"
         "  %x = stablehlo.reduce(%p init: %f) applies stablehlo.maximum across dimensions = [1] : (tensor<3x2xi1>, tensor<i1>) -> tensor<3xi1>\n"
         "  check.expect_eq_const %x, dense<[true, false, true]> : tensor<3xi1>\n"
         "  %n = stablehlo.reduce(%p init: %t) applies stablehlo.minimum across dimensions = [1] : (tensor<3x2xi1>, tensor<i1>) -> tensor<3xi1>\n"
         "  check.expect_eq_const %n, dense<[false, false, true]> : tensor<3xi1>\n");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_wrong_expectation_fails),
      cmocka_unit_test(test_reduce_dims),
      cmocka_unit_test(test_reduce_rank0_and_empty),
      cmocka_unit_test(test_reduce_int_wrap_and_bool),
      cmocka_unit_test(test_reduce_bool_max_min),
      cmocka_unit_test(test_reduce_native_matches_generic),
      cmocka_unit_test(test_reduce_variadic_argmax),
      cmocka_unit_test(test_reduce_window_spec_example),
      cmocka_unit_test(test_reduce_window_degenerate),
      cmocka_unit_test(test_reduce_window_cumulative),
      cmocka_unit_test(test_reduce_window_variadic),
      cmocka_unit_test(test_select_and_scatter),
      cmocka_unit_test(test_map),
      cmocka_unit_test(test_sort_spec_example),
      cmocka_unit_test(test_sort_stable_ties),
      cmocka_unit_test(test_sort_nan_total_order),
      cmocka_unit_test(test_long_sorts_match_the_region),
      cmocka_unit_test(test_long_rows_fold_like_the_region),
      cmocka_unit_test(test_lane_max_min_order_signs),
      cmocka_unit_test(test_f32_row_sums_follow_their_tree),
      cmocka_unit_test(test_sort_unsigned_empty_rank),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
