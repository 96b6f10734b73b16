/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests for the shape and data-movement ops (engine/src/kernels/shape.c):
 * broadcast_in_dim, concatenate, dynamic_slice, dynamic_update_slice,
 * get_dimension_size, iota, pad, reshape, reverse, slice, transpose.
 *
 * Each test parses a small program whose checks (check.expect_eq_const)
 * state the expected values, compiles it and runs it; SHLO_OK means every
 * check held. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "harness.h"

static shlo_status harness_run_loud(const char *text) {
  return harness_run(text, false);
}

#include "shlo/engine.h"


#define RUN_OK(text) assert_int_equal(harness_run_loud(text), SHLO_OK)

/* ---- transpose ---- */

static void test_transpose_rank3(void **state) {
  (void)state;
  RUN_OK("func.func @main() {\n"
         "  %0 = stablehlo.iota dim = 0 : tensor<24xi32>\n"
         "  %1 = stablehlo.reshape %0 : (tensor<24xi32>) -> tensor<2x3x4xi32>\n"
         "  %2 = \"stablehlo.transpose\"(%1) {permutation = array<i64: 2, 0, 1>}"
         " : (tensor<2x3x4xi32>) -> tensor<4x2x3xi32>\n"
         "  %3 = stablehlo.reshape %2 : (tensor<4x2x3xi32>) -> tensor<24xi32>\n"
         "  check.expect_eq_const %3, dense<[0, 4, 8, 12, 16, 20, 1, 5, 9, 13, "
         "17, 21, 2, 6, 10, 14, 18, 22, 3, 7, 11, 15, 19, 23]> : tensor<24xi32>\n"
         "  func.return\n"
         "}\n");
}

static void test_transpose_rank4(void **state) {
  (void)state;
  RUN_OK("func.func @main() {\n"
         "  %0 = stablehlo.iota dim = 0 : tensor<120xf64>\n"
         "  %1 = stablehlo.reshape %0 : (tensor<120xf64>) -> tensor<2x3x4x5xf64>\n"
         "  %2 = stablehlo.transpose %1, dims = [3, 1, 0, 2]"
         " : (tensor<2x3x4x5xf64>) -> tensor<5x3x2x4xf64>\n"
         "  %3 = stablehlo.reshape %2 : (tensor<5x3x2x4xf64>) -> tensor<120xf64>\n"
         "  check.expect_eq_const %3, dense<[0.0, 5.0, 10.0, 15.0, 60.0, 65.0, "
         "70.0, 75.0, 20.0, 25.0, 30.0, 35.0, 80.0, 85.0, 90.0, 95.0, 40.0, "
         "45.0, 50.0, 55.0, 100.0, 105.0, 110.0, 115.0, 1.0, 6.0, 11.0, 16.0, "
         "61.0, 66.0, 71.0, 76.0, 21.0, 26.0, 31.0, 36.0, 81.0, 86.0, 91.0, "
         "96.0, 41.0, 46.0, 51.0, 56.0, 101.0, 106.0, 111.0, 116.0, 2.0, 7.0, "
         "12.0, 17.0, 62.0, 67.0, 72.0, 77.0, 22.0, 27.0, 32.0, 37.0, 82.0, "
         "87.0, 92.0, 97.0, 42.0, 47.0, 52.0, 57.0, 102.0, 107.0, 112.0, "
         "117.0, 3.0, 8.0, 13.0, 18.0, 63.0, 68.0, 73.0, 78.0, 23.0, 28.0, "
         "33.0, 38.0, 83.0, 88.0, 93.0, 98.0, 43.0, 48.0, 53.0, 58.0, 103.0, "
         "108.0, 113.0, 118.0, 4.0, 9.0, 14.0, 19.0, 64.0, 69.0, 74.0, 79.0, "
         "24.0, 29.0, 34.0, 39.0, 84.0, 89.0, 94.0, 99.0, 44.0, 49.0, 54.0, "
         "59.0, 104.0, 109.0, 114.0, 119.0]> : tensor<120xf64>\n"
         "  func.return\n"
         "}\n");
}

/* ---- broadcast_in_dim ---- */

static void test_broadcast_size1(void **state) {
  (void)state;
  RUN_OK("func.func @main() {\n"
         "  %0 = stablehlo.constant dense<[[1.0, 2.0, 3.0]]> : tensor<1x3xf32>\n"
         "  %1 = stablehlo.broadcast_in_dim %0, dims = [1, 2]"
         " : (tensor<1x3xf32>) -> tensor<2x2x3xf32>\n"
         "  check.expect_eq_const %1, dense<[[[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]],"
         " [[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]]]> : tensor<2x2x3xf32>\n"
         "  %2 = stablehlo.constant dense<[[1], [2]]> : tensor<2x1xi8>\n"
         "  %3 = \"stablehlo.broadcast_in_dim\"(%2) "
         "{broadcast_dimensions = array<i64: 1, 0>}"
         " : (tensor<2x1xi8>) -> tensor<3x2xi8>\n"
         "  check.expect_eq_const %3, dense<[[1, 2], [1, 2], [1, 2]]>"
         " : tensor<3x2xi8>\n"
         "  func.return\n"
         "}\n");
}

static void test_broadcast_scalar(void **state) {
  (void)state;
  RUN_OK("func.func @main() {\n"
         "  %0 = stablehlo.constant dense<(1.0, -2.0)> : tensor<complex<f32>>\n"
         "  %1 = stablehlo.broadcast_in_dim %0, dims = []"
         " : (tensor<complex<f32>>) -> tensor<2x3xcomplex<f32>>\n"
         "  check.expect_eq_const %1, dense<[[(1.0, -2.0), (1.0, -2.0), "
         "(1.0, -2.0)], [(1.0, -2.0), (1.0, -2.0), (1.0, -2.0)]]>"
         " : tensor<2x3xcomplex<f32>>\n"
         "  %2 = stablehlo.constant dense<7> : tensor<i64>\n"
         "  %3 = stablehlo.broadcast_in_dim %2, dims = []"
         " : (tensor<i64>) -> tensor<i64>\n"
         "  check.expect_eq_const %3, dense<7> : tensor<i64>\n"
         "  func.return\n"
         "}\n");
}

/* ---- pad ---- */

static void test_pad_negative_interior(void **state) {
  (void)state;
  RUN_OK("func.func @main() {\n"
         "  %0 = stablehlo.constant dense<[1, 2, 3]> : tensor<3xi32>\n"
         "  %pv = stablehlo.constant dense<0> : tensor<i32>\n"
         /* 1 0 2 0 3, cut one at the front, two zeros added at the end */
         "  %1 = stablehlo.pad %0, %pv, low = [-1], high = [2], interior = [1]"
         " : (tensor<3xi32>, tensor<i32>) -> tensor<6xi32>\n"
         "  check.expect_eq_const %1, dense<[0, 2, 0, 3, 0, 0]>"
         " : tensor<6xi32>\n"
         /* negative on both sides, removing real elements */
         "  %2 = \"stablehlo.pad\"(%0, %pv) {edge_padding_low = array<i64: -2>,"
         " edge_padding_high = array<i64: -1>, interior_padding = array<i64: 0>}"
         " : (tensor<3xi32>, tensor<i32>) -> tensor<0xi32>\n"
         "  check.expect_eq_const %2, dense<> : tensor<0xi32>\n"
         "  func.return\n"
         "}\n");
}

static void test_pad_2d(void **state) {
  (void)state;
  RUN_OK("func.func @main() {\n"
         "  %operand = stablehlo.constant dense<[[0, 0, 0, 0],\n"
         "                                       [0, 1, 2, 0],\n"
         "                                       [0, 3, 4, 0],\n"
         "                                       [0, 5, 6, 0],\n"
         "                                       [0, 0, 0, 0]]> : tensor<5x4xi64>\n"
         "  %padding_value = stablehlo.constant dense<-1> : tensor<i64>\n"
         "  %result = stablehlo.pad %operand, %padding_value, low = [1, -1],"
         " high = [1, -1], interior = [0, 1]\n"
         "    : (tensor<5x4xi64>, tensor<i64>) -> tensor<7x5xi64>\n"
         "  check.expect_eq_const %result, dense<[[-1, -1, -1, -1, -1], "
         "[-1, 0, -1, 0, -1], [-1, 1, -1, 2, -1], [-1, 3, -1, 4, -1], "
         "[-1, 5, -1, 6, -1], [-1, 0, -1, 0, -1], [-1, -1, -1, -1, -1]]>"
         " : tensor<7x5xi64>\n"
         /* interior padding on the last dimension of a 2-D f16 tensor */
         "  %a = stablehlo.constant dense<[[1.0, 2.0], [3.0, 4.0]]>"
         " : tensor<2x2xf16>\n"
         "  %z = stablehlo.constant dense<0.5> : tensor<f16>\n"
         "  %b = stablehlo.pad %a, %z, low = [0, 1], high = [1, 0],"
         " interior = [1, 2] : (tensor<2x2xf16>, tensor<f16>) -> tensor<4x5xf16>\n"
         "  check.expect_eq_const %b, dense<[[0.5, 1.0, 0.5, 0.5, 2.0],"
         " [0.5, 0.5, 0.5, 0.5, 0.5], [0.5, 3.0, 0.5, 0.5, 4.0],"
         " [0.5, 0.5, 0.5, 0.5, 0.5]]> : tensor<4x5xf16>\n"
         "  func.return\n"
         "}\n");
}

/* ---- dynamic_slice / dynamic_update_slice ---- */

static void test_dynamic_slice_clamped(void **state) {
  (void)state;
  RUN_OK("func.func @main() {\n"
         "  %0 = stablehlo.constant dense<[[0, 1, 2], [3, 4, 5], [6, 7, 8]]>"
         " : tensor<3x3xi32>\n"
         "  %big = stablehlo.constant dense<100> : tensor<i64>\n"
         "  %neg = stablehlo.constant dense<-5> : tensor<i64>\n"
         "  %one = stablehlo.constant dense<1> : tensor<ui8>\n"
         /* start (100, -5) clamps to (1, 0) */
         "  %1 = \"stablehlo.dynamic_slice\"(%0, %big, %neg)"
         " {slice_sizes = array<i64: 2, 2>}"
         " : (tensor<3x3xi32>, tensor<i64>, tensor<i64>) -> tensor<2x2xi32>\n"
         "  check.expect_eq_const %1, dense<[[3, 4], [6, 7]]> : tensor<2x2xi32>\n"
         "  %2 = stablehlo.dynamic_slice %0, %one, %one, sizes = [1, 2]"
         " : (tensor<3x3xi32>, tensor<ui8>, tensor<ui8>) -> tensor<1x2xi32>\n"
         "  check.expect_eq_const %2, dense<[[4, 5]]> : tensor<1x2xi32>\n"
         "  func.return\n"
         "}\n");
}

static void test_dynamic_update_slice_clamped(void **state) {
  (void)state;
  RUN_OK("func.func @main() {\n"
         "  %0 = stablehlo.constant dense<[[0, 1, 2], [3, 4, 5], [6, 7, 8]]>"
         " : tensor<3x3xi32>\n"
         "  %u = stablehlo.constant dense<[[-1, -2], [-3, -4]]>"
         " : tensor<2x2xi32>\n"
         "  %big = stablehlo.constant dense<7> : tensor<i64>\n"
         "  %neg = stablehlo.constant dense<-1> : tensor<i64>\n"
         /* start (7, -1) clamps to (1, 0) */
         "  %1 = stablehlo.dynamic_update_slice %0, %u, %big, %neg"
         " : (tensor<3x3xi32>, tensor<2x2xi32>, tensor<i64>, tensor<i64>)"
         " -> tensor<3x3xi32>\n"
         "  check.expect_eq_const %1, dense<[[0, 1, 2], [-1, -2, 5], [-3, -4, 8]]>"
         " : tensor<3x3xi32>\n"
         "  func.return\n"
         "}\n");
}

/* ---- slice, reverse, concatenate ---- */

static void test_slice_reverse_concat(void **state) {
  (void)state;
  RUN_OK("func.func @main() {\n"
         "  %0 = stablehlo.iota dim = 0 : tensor<12xi16>\n"
         "  %1 = stablehlo.reshape %0 : (tensor<12xi16>) -> tensor<3x4xi16>\n"
         "  %2 = \"stablehlo.slice\"(%1) {start_indices = array<i64: 0, 1>,"
         " limit_indices = array<i64: 3, 4>, strides = array<i64: 2, 2>}"
         " : (tensor<3x4xi16>) -> tensor<2x2xi16>\n"
         "  check.expect_eq_const %2, dense<[[1, 3], [9, 11]]> : tensor<2x2xi16>\n"
         "  %3 = stablehlo.slice %1 [1:3, 0:4]"
         " : (tensor<3x4xi16>) -> tensor<2x4xi16>\n"
         "  check.expect_eq_const %3, dense<[[4, 5, 6, 7], [8, 9, 10, 11]]>"
         " : tensor<2x4xi16>\n"
         "  %4 = stablehlo.reverse %1, dims = [0, 1]"
         " : tensor<3x4xi16>\n"
         "  check.expect_eq_const %4, dense<[[11, 10, 9, 8], [7, 6, 5, 4],"
         " [3, 2, 1, 0]]> : tensor<3x4xi16>\n"
         "  %5 = stablehlo.concatenate %2, %3, %2, dim = 1"
         " : (tensor<2x2xi16>, tensor<2x4xi16>, tensor<2x2xi16>)"
         " -> tensor<2x8xi16>\n"
         "  check.expect_eq_const %5, dense<[[1, 3, 4, 5, 6, 7, 1, 3],"
         " [9, 11, 8, 9, 10, 11, 9, 11]]> : tensor<2x8xi16>\n"
         "  func.return\n"
         "}\n");
}

/* ---- empty tensors ---- */

static void test_empty(void **state) {
  (void)state;
  RUN_OK("func.func @main() {\n"
         "  %0 = stablehlo.constant dense<[[1.0, 2.0, 3.0]]> : tensor<1x3xf32>\n"
         "  %e = stablehlo.slice %0 [0:0, 0:3]"
         " : (tensor<1x3xf32>) -> tensor<0x3xf32>\n"
         "  check.expect_eq_const %e, dense<> : tensor<0x3xf32>\n"
         "  %t = stablehlo.transpose %e, dims = [1, 0]"
         " : (tensor<0x3xf32>) -> tensor<3x0xf32>\n"
         "  check.expect_eq_const %t, dense<> : tensor<3x0xf32>\n"
         "  %r = stablehlo.reverse %t, dims = [0, 1] : tensor<3x0xf32>\n"
         "  check.expect_eq_const %r, dense<> : tensor<3x0xf32>\n"
         "  %c = stablehlo.concatenate %e, %0, %e, dim = 0"
         " : (tensor<0x3xf32>, tensor<1x3xf32>, tensor<0x3xf32>)"
         " -> tensor<1x3xf32>\n"
         "  check.expect_eq_const %c, dense<[[1.0, 2.0, 3.0]]> : tensor<1x3xf32>\n"
         "  %pv = stablehlo.constant dense<9.0> : tensor<f32>\n"
         "  %p = stablehlo.pad %e, %pv, low = [1, 0], high = [1, 0],"
         " interior = [3, 0] : (tensor<0x3xf32>, tensor<f32>) -> tensor<2x3xf32>\n"
         "  check.expect_eq_const %p, dense<9.0> : tensor<2x3xf32>\n"
         "  %b = stablehlo.broadcast_in_dim %pv, dims = []"
         " : (tensor<f32>) -> tensor<4x0xf32>\n"
         "  check.expect_eq_const %b, dense<> : tensor<4x0xf32>\n"
         "  %i = stablehlo.iota dim = 1 : tensor<0x5xi32>\n"
         "  check.expect_eq_const %i, dense<> : tensor<0x5xi32>\n"
         "  %rs = stablehlo.reshape %e : (tensor<0x3xf32>) -> tensor<3x0x2xf32>\n"
         "  check.expect_eq_const %rs, dense<> : tensor<3x0x2xf32>\n"
         "  %z = stablehlo.constant dense<0> : tensor<i32>\n"
         "  %ds = stablehlo.dynamic_slice %0, %z, %z, sizes = [1, 0]"
         " : (tensor<1x3xf32>, tensor<i32>, tensor<i32>) -> tensor<1x0xf32>\n"
         "  check.expect_eq_const %ds, dense<> : tensor<1x0xf32>\n"
         "  %du = stablehlo.dynamic_update_slice %0, %e, %z, %z"
         " : (tensor<1x3xf32>, tensor<0x3xf32>, tensor<i32>, tensor<i32>)"
         " -> tensor<1x3xf32>\n"
         "  check.expect_eq_const %du, dense<[[1.0, 2.0, 3.0]]> : tensor<1x3xf32>\n"
         "  %n = stablehlo.get_dimension_size %e, dim = 0"
         " : (tensor<0x3xf32>) -> tensor<i32>\n"
         "  check.expect_eq_const %n, dense<0> : tensor<i32>\n"
         "  func.return\n"
         "}\n");
}

/* ---- rank 0 ---- */

static void test_rank0(void **state) {
  (void)state;
  RUN_OK("func.func @main() {\n"
         "  %0 = stablehlo.constant dense<[5.5]> : tensor<1xf64>\n"
         "  %s = stablehlo.reshape %0 : (tensor<1xf64>) -> tensor<f64>\n"
         "  check.expect_eq_const %s, dense<5.5> : tensor<f64>\n"
         "  %t = stablehlo.transpose %s, dims = [] : (tensor<f64>) -> tensor<f64>\n"
         "  check.expect_eq_const %t, dense<5.5> : tensor<f64>\n"
         "  %r = stablehlo.reverse %s, dims = [] : tensor<f64>\n"
         "  check.expect_eq_const %r, dense<5.5> : tensor<f64>\n"
         "  %sl = \"stablehlo.slice\"(%s) {start_indices = array<i64>,"
         " limit_indices = array<i64>, strides = array<i64>}"
         " : (tensor<f64>) -> tensor<f64>\n"
         "  check.expect_eq_const %sl, dense<5.5> : tensor<f64>\n"
         "  %pv = stablehlo.constant dense<0.0> : tensor<f64>\n"
         "  %p = stablehlo.pad %s, %pv, low = [], high = [], interior = []"
         " : (tensor<f64>, tensor<f64>) -> tensor<f64>\n"
         "  check.expect_eq_const %p, dense<5.5> : tensor<f64>\n"
         "  %ds = \"stablehlo.dynamic_slice\"(%s) {slice_sizes = array<i64>}"
         " : (tensor<f64>) -> tensor<f64>\n"
         "  check.expect_eq_const %ds, dense<5.5> : tensor<f64>\n"
         "  %v = stablehlo.reshape %s : (tensor<f64>) -> tensor<1x1xf64>\n"
         "  check.expect_eq_const %v, dense<[[5.5]]> : tensor<1x1xf64>\n"
         "  func.return\n"
         "}\n");
}

/* ---- iota and get_dimension_size ---- */

static void test_iota_types(void **state) {
  (void)state;
  RUN_OK("func.func @main() {\n"
         "  %0 = stablehlo.iota dim = 1 : tensor<2x3xf32>\n"
         "  check.expect_eq_const %0, dense<[[0.0, 1.0, 2.0], [0.0, 1.0, 2.0]]>"
         " : tensor<2x3xf32>\n"
         "  %1 = stablehlo.iota dim = 0 : tensor<2x2xcomplex<f64>>\n"
         "  check.expect_eq_const %1, dense<[[(0.0, 0.0), (0.0, 0.0)],"
         " [(1.0, 0.0), (1.0, 0.0)]]> : tensor<2x2xcomplex<f64>>\n"
         /* i4 wraps: 8 -> -8, 9 -> -7 */
         "  %2 = stablehlo.iota dim = 0 : tensor<10xi4>\n"
         "  check.expect_eq_const %2, dense<[0, 1, 2, 3, 4, 5, 6, 7, -8, -7]>"
         " : tensor<10xi4>\n"
         "  %3 = stablehlo.iota dim = 0 : tensor<3xbf16>\n"
         "  check.expect_eq_const %3, dense<[0.0, 1.0, 2.0]> : tensor<3xbf16>\n"
         "  %4 = stablehlo.get_dimension_size %0, dim = 1"
         " : (tensor<2x3xf32>) -> tensor<i32>\n"
         "  check.expect_eq_const %4, dense<3> : tensor<i32>\n"
         "  func.return\n"
         "}\n");
}

/* ---- negative: a wrong expectation fails the check ---- */

static void test_wrong_expectation(void **state) {
  (void)state;
  assert_int_equal(
      harness_run_loud("func.func @main() {\n"
               "  %0 = stablehlo.constant dense<[[1, 2], [3, 4]]>"
               " : tensor<2x2xi32>\n"
               "  %1 = stablehlo.transpose %0, dims = [1, 0]"
               " : (tensor<2x2xi32>) -> tensor<2x2xi32>\n"
               "  check.expect_eq_const %1, dense<[[1, 2], [3, 4]]>"
               " : tensor<2x2xi32>\n"
               "  func.return\n"
               "}\n"),
      SHLO_ECHECK);
}

/* ---- a bad attribute is refused before anything runs ---- */

/* Parse and compile text; the status of the first stage that fails, with
 * its diagnostic in d. */
static shlo_status compile_diag(const char *text, shlo_diag *d) {
  shlo_module *m = NULL;
  shlo_executable *e = NULL;
  shlo_diag_clear(d);
  shlo_status st = shlo_parse_module(text, strlen(text), "test.mlir", &m, d);
  if (st == SHLO_OK) st = shlo_compile(m, NULL, &e, d);
  shlo_executable_free(e);
  shlo_module_free(m);
  return st;
}

/* transpose C2: the verifier (which shlo_compile runs first) reports a
 * permutation with a repeated dimension. */
static void test_bad_permutation(void **state) {
  (void)state;
  shlo_diag d;
  assert_int_equal(
      compile_diag("func.func @main() {\n"
                   "  %0 = stablehlo.constant dense<[[1, 2], [3, 4]]>"
                   " : tensor<2x2xi32>\n"
                   "  %1 = \"stablehlo.transpose\"(%0)"
                   " {permutation = array<i64: 1, 1>}"
                   " : (tensor<2x2xi32>) -> tensor<2x2xi32>\n"
                   "  func.return\n"
                   "}\n",
                   &d),
      SHLO_EVERIFY);
  assert_non_null(strstr(d.message, "stablehlo.transpose (C2)"));
  assert_non_null(strstr(d.message, "is not a permutation"));
}

/* Broadcasts large enough to be filled span by span, and split over the
 * pool (4 MB): a scalar, and a 3-element row whose 12-byte blocks do not
 * divide the span.  Expected values from iota alone. */
static void test_broadcast_large(void **state) {
  (void)state;
  RUN_OK("func.func @main() {\n"
         "  %x = stablehlo.constant dense<3.5> : tensor<f32>\n"
         "  %b = stablehlo.broadcast_in_dim %x, dims = [] : (tensor<f32>) -> "
         "tensor<1024x1024xf32>\n"
         "  check.expect_eq_const %b, dense<3.5> : tensor<1024x1024xf32>\n"
         "  %row = stablehlo.constant dense<[1, 2, 3]> : tensor<3xi32>\n"
         "  %r = stablehlo.broadcast_in_dim %row, dims = [1] : "
         "(tensor<3xi32>) -> tensor<200001x3xi32>\n"
         "  %c = stablehlo.iota dim = 1 : tensor<200001x3xi32>\n"
         "  %one = stablehlo.constant dense<1> : tensor<200001x3xi32>\n"
         "  %want = stablehlo.add %c, %one : tensor<200001x3xi32>\n"
         "  check.expect_eq %r, %want : tensor<200001x3xi32>\n"
         "  func.return\n"
         "}\n");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_transpose_rank3),
      cmocka_unit_test(test_transpose_rank4),
      cmocka_unit_test(test_broadcast_size1),
      cmocka_unit_test(test_broadcast_scalar),
      cmocka_unit_test(test_pad_negative_interior),
      cmocka_unit_test(test_pad_2d),
      cmocka_unit_test(test_dynamic_slice_clamped),
      cmocka_unit_test(test_dynamic_update_slice_clamped),
      cmocka_unit_test(test_slice_reverse_concat),
      cmocka_unit_test(test_empty),
      cmocka_unit_test(test_rank0),
      cmocka_unit_test(test_iota_types),
      cmocka_unit_test(test_wrong_expectation),
      cmocka_unit_test(test_bad_permutation),
      cmocka_unit_test(test_broadcast_large),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
