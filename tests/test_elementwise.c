/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests for the elementwise ops (engine/src/kernels/elementwise.c) and
 * convert / bitcast_convert (engine/src/kernels/convert.c).
 *
 * Each test runs a small program whose check.* ops state the expected
 * values; SHLO_OK means every check held.  Bit-exact results (signed
 * zeros, rounding of narrow floats) are checked by bitcasting to integers,
 * since float checks compare values.  Edge cases: integer overflow and
 * sub-byte wrapping, division by zero and INT_MIN / -1, shifts by >= the
 * width, NaN / infinities / signed zero, empty and rank-0 tensors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "harness.h"

#include "shlo/engine.h"


/* A program: @main with the given body lines. */
#define RUN_OK(...) assert_int_equal(harness_run(PROG(__VA_ARGS__), 0), SHLO_OK)

/* ---- the harness itself ---- */

static void test_wrong_expectation_fails(void **state) {
  (void)state;
  assert_int_equal(
      harness_run(PROG("  %0 = stablehlo.constant dense<[1, 2]> : tensor<2xi32>\n"
                      "  %1 = stablehlo.add %0, %0 : tensor<2xi32>\n"
                      "  check.expect_eq_const %1, dense<[2, 5]> : tensor<2xi32>\n"),
                 1),
      SHLO_ECHECK);
  /* 0.1f * 0.1f is 0.0100000007f, one ulp above 0.01f: caught */
  assert_int_equal(
      harness_run(PROG("  %0 = stablehlo.constant dense<0.1> : tensor<f32>\n"
                      "  %1 = stablehlo.multiply %0, %0 : tensor<f32>\n"
                      "  check.expect_eq_const %1, dense<0.01> : tensor<f32>\n"),
                 1),
      SHLO_ECHECK);
}

static void test_unsupported_type_fails_to_compile(void **state) {
  (void)state;
  shlo_status st = harness_run(
      PROG("  %0 = stablehlo.constant dense<[1.0]> : tensor<1xf32>\n"
           "  %1 = stablehlo.shift_left %0, %0 : tensor<1xf32>\n"),
      1);
  assert_true(st == SHLO_EUNSUPPORTED || st == SHLO_EVERIFY);
  st = harness_run(PROG("  %0 = stablehlo.constant dense<[1]> : tensor<1xi32>\n"
                       "  %1 = stablehlo.sine %0 : tensor<1xi32>\n"),
                  1);
  assert_true(st == SHLO_EUNSUPPORTED || st == SHLO_EVERIFY);
}

/* ---- integers ---- */

static void test_int_wrap(void **state) {
  (void)state;
  RUN_OK("  %0 = stablehlo.constant dense<[127, -128, 100]> : tensor<3xi8>\n"
         "  %1 = stablehlo.constant dense<[1, -1, 100]> : tensor<3xi8>\n"
         "  %2 = stablehlo.add %0, %1 : tensor<3xi8>\n"
         "  check.expect_eq_const %2, dense<[-128, 127, -56]> : tensor<3xi8>\n"
         "  %3 = stablehlo.multiply %0, %0 : tensor<3xi8>\n"
         "  check.expect_eq_const %3, dense<[1, 0, 16]> : tensor<3xi8>\n"
         "  %4 = stablehlo.negate %0 : tensor<3xi8>\n"
         "  check.expect_eq_const %4, dense<[-127, -128, -100]> : tensor<3xi8>\n"
         "  %5 = stablehlo.abs %1 : tensor<3xi8>\n"
         "  check.expect_eq_const %5, dense<[1, 1, 100]> : tensor<3xi8>\n"
         "  %6 = stablehlo.constant dense<[255, 0]> : tensor<2xui8>\n"
         "  %7 = stablehlo.constant dense<[1, 1]> : tensor<2xui8>\n"
         "  %8 = stablehlo.add %6, %7 : tensor<2xui8>\n"
         "  check.expect_eq_const %8, dense<[0, 1]> : tensor<2xui8>\n"
         "  %9 = stablehlo.subtract %7, %6 : tensor<2xui8>\n"
         "  check.expect_eq_const %9, dense<[2, 1]> : tensor<2xui8>\n"
         "  %10 = stablehlo.constant dense<[65535]> : tensor<1xui16>\n"
         "  %11 = stablehlo.multiply %10, %10 : tensor<1xui16>\n"
         "  check.expect_eq_const %11, dense<[1]> : tensor<1xui16>\n"
         "  %12 = stablehlo.constant dense<-9223372036854775808> : tensor<i64>\n"
         "  %13 = stablehlo.abs %12 : tensor<i64>\n"
         "  check.expect_eq_const %13, dense<-9223372036854775808> : tensor<i64>\n");
}

static void test_subbyte_wrap(void **state) {
  (void)state;
  RUN_OK("  %0 = stablehlo.constant dense<[7, -8, 5, -1]> : tensor<4xi4>\n"
         "  %1 = stablehlo.constant dense<[1, -1, 5, -1]> : tensor<4xi4>\n"
         "  %2 = stablehlo.add %0, %1 : tensor<4xi4>\n"
         "  check.expect_eq_const %2, dense<[-8, 7, -6, -2]> : tensor<4xi4>\n"
         "  %3 = stablehlo.multiply %0, %1 : tensor<4xi4>\n"
         "  check.expect_eq_const %3, dense<[7, -8, -7, 1]> : tensor<4xi4>\n"
         "  %4 = stablehlo.not %0 : tensor<4xi4>\n"
         "  check.expect_eq_const %4, dense<[-8, 7, -6, 0]> : tensor<4xi4>\n"
         "  %5 = stablehlo.constant dense<[15, 3]> : tensor<2xui4>\n"
         "  %6 = stablehlo.constant dense<[1, 15]> : tensor<2xui4>\n"
         "  %7 = stablehlo.add %5, %6 : tensor<2xui4>\n"
         "  check.expect_eq_const %7, dense<[0, 2]> : tensor<2xui4>\n"
         "  %8 = stablehlo.not %5 : tensor<2xui4>\n"
         "  check.expect_eq_const %8, dense<[0, 12]> : tensor<2xui4>\n"
         "  %9 = stablehlo.constant dense<[1, -2]> : tensor<2xi2>\n"
         "  %10 = stablehlo.add %9, %9 : tensor<2xi2>\n"
         "  check.expect_eq_const %10, dense<[-2, 0]> : tensor<2xi2>\n"
         "  %11 = stablehlo.constant dense<[3]> : tensor<1xui2>\n"
         "  %12 = stablehlo.multiply %11, %11 : tensor<1xui2>\n"
         "  check.expect_eq_const %12, dense<[1]> : tensor<1xui2>\n");
}

static void test_int_divide_edges(void **state) {
  (void)state;
  RUN_OK("  %0 = stablehlo.constant dense<[7, -7, 5, -2147483648, 3, -2147483648]> : tensor<6xi32>\n"
         "  %1 = stablehlo.constant dense<[2, 2, 0, -1, -1, 0]> : tensor<6xi32>\n"
         "  %2 = stablehlo.divide %0, %1 : tensor<6xi32>\n"
         "  check.expect_eq_const %2, dense<[3, -3, -1, -2147483648, -3, -1]> : tensor<6xi32>\n"
         "  %3 = stablehlo.remainder %0, %1 : tensor<6xi32>\n"
         "  check.expect_eq_const %3, dense<[1, -1, 5, 0, 0, -2147483648]> : tensor<6xi32>\n"
         "  %4 = stablehlo.constant dense<[5, 7]> : tensor<2xui32>\n"
         "  %5 = stablehlo.constant dense<[0, 2]> : tensor<2xui32>\n"
         "  %6 = stablehlo.divide %4, %5 : tensor<2xui32>\n"
         "  check.expect_eq_const %6, dense<[4294967295, 3]> : tensor<2xui32>\n"
         "  %7 = stablehlo.remainder %4, %5 : tensor<2xui32>\n"
         "  check.expect_eq_const %7, dense<[5, 1]> : tensor<2xui32>\n"
         "  %8 = stablehlo.constant dense<[-8, 7]> : tensor<2xi4>\n"
         "  %9 = stablehlo.constant dense<[-1, 0]> : tensor<2xi4>\n"
         "  %10 = stablehlo.divide %8, %9 : tensor<2xi4>\n"
         "  check.expect_eq_const %10, dense<[-8, -1]> : tensor<2xi4>\n"
         "  %11 = stablehlo.constant dense<[9]> : tensor<1xui4>\n"
         "  %12 = stablehlo.constant dense<[0]> : tensor<1xui4>\n"
         "  %13 = stablehlo.divide %11, %12 : tensor<1xui4>\n"
         "  check.expect_eq_const %13, dense<[15]> : tensor<1xui4>\n"
         "  %14 = stablehlo.constant dense<-9223372036854775808> : tensor<i64>\n"
         "  %15 = stablehlo.constant dense<-1> : tensor<i64>\n"
         "  %16 = stablehlo.divide %14, %15 : tensor<i64>\n"
         "  check.expect_eq_const %16, dense<-9223372036854775808> : tensor<i64>\n");
}

static void test_shifts(void **state) {
  (void)state;
  RUN_OK("  %0 = stablehlo.constant dense<[1, 1, 1, 1, 3]> : tensor<5xi8>\n"
         "  %1 = stablehlo.constant dense<[7, 8, 100, -1, 1]> : tensor<5xi8>\n"
         "  %2 = stablehlo.shift_left %0, %1 : tensor<5xi8>\n"
         "  check.expect_eq_const %2, dense<[-128, 0, 0, 0, 6]> : tensor<5xi8>\n"
         "  %3 = stablehlo.constant dense<[-128, -128, 64, -1, 64]> : tensor<5xi8>\n"
         "  %4 = stablehlo.shift_right_arithmetic %3, %1 : tensor<5xi8>\n"
         "  check.expect_eq_const %4, dense<[-1, -1, 0, -1, 32]> : tensor<5xi8>\n"
         "  %5 = stablehlo.shift_right_logical %3, %1 : tensor<5xi8>\n"
         "  check.expect_eq_const %5, dense<[1, 0, 0, 0, 32]> : tensor<5xi8>\n"
         "  %6 = stablehlo.constant dense<[-1, -8]> : tensor<2xi4>\n"
         "  %7 = stablehlo.constant dense<[1, 4]> : tensor<2xi4>\n"
         "  %8 = stablehlo.shift_right_logical %6, %7 : tensor<2xi4>\n"
         "  check.expect_eq_const %8, dense<[7, 0]> : tensor<2xi4>\n"
         "  %9 = stablehlo.shift_left %6, %7 : tensor<2xi4>\n"
         "  check.expect_eq_const %9, dense<[-2, 0]> : tensor<2xi4>\n"
         "  %10 = stablehlo.constant dense<[8, 8]> : tensor<2xui4>\n"
         "  %11 = stablehlo.constant dense<[1, 9]> : tensor<2xui4>\n"
         "  %12 = stablehlo.shift_right_arithmetic %10, %11 : tensor<2xui4>\n"
         "  check.expect_eq_const %12, dense<[12, 15]> : tensor<2xui4>\n"
         "  %13 = stablehlo.constant dense<[1]> : tensor<1xui64>\n"
         "  %14 = stablehlo.constant dense<[63]> : tensor<1xui64>\n"
         "  %15 = stablehlo.shift_left %13, %14 : tensor<1xui64>\n"
         "  check.expect_eq_const %15, dense<[9223372036854775808]> : tensor<1xui64>\n"
         /* amounts whose value mod 64 is small must still give 0 / sign */
         "  %16 = stablehlo.constant dense<[1, -8, -8]> : tensor<3xi64>\n"
         "  %17 = stablehlo.constant dense<[64, 64, 65]> : tensor<3xi64>\n"
         "  %18 = stablehlo.shift_left %16, %17 : tensor<3xi64>\n"
         "  check.expect_eq_const %18, dense<0> : tensor<3xi64>\n"
         "  %19 = stablehlo.shift_right_arithmetic %16, %17 : tensor<3xi64>\n"
         "  check.expect_eq_const %19, dense<[0, -1, -1]> : tensor<3xi64>\n"
         "  %20 = stablehlo.shift_right_logical %16, %17 : tensor<3xi64>\n"
         "  check.expect_eq_const %20, dense<0> : tensor<3xi64>\n"
         "  %21 = stablehlo.constant dense<[1, 64]> : tensor<2xi8>\n"
         "  %22 = stablehlo.shift_left %21, %21 : tensor<2xi8>\n"
         "  check.expect_eq_const %22, dense<[2, 0]> : tensor<2xi8>\n");
}

static void test_bit_counts(void **state) {
  (void)state;
  RUN_OK("  %0 = stablehlo.constant dense<[-1, 1, 0, -8]> : tensor<4xi4>\n"
         "  %1 = stablehlo.popcnt %0 : tensor<4xi4>\n"
         "  check.expect_eq_const %1, dense<[4, 1, 0, 1]> : tensor<4xi4>\n"
         "  %2 = stablehlo.count_leading_zeros %0 : tensor<4xi4>\n"
         "  check.expect_eq_const %2, dense<[0, 3, 4, 0]> : tensor<4xi4>\n"
         "  %3 = stablehlo.constant dense<[0, 1, 255, 16]> : tensor<4xui8>\n"
         "  %4 = stablehlo.count_leading_zeros %3 : tensor<4xui8>\n"
         "  check.expect_eq_const %4, dense<[8, 7, 0, 3]> : tensor<4xui8>\n"
         "  %5 = stablehlo.constant dense<[-1, 0]> : tensor<2xi32>\n"
         "  %6 = stablehlo.popcnt %5 : tensor<2xi32>\n"
         "  check.expect_eq_const %6, dense<[32, 0]> : tensor<2xi32>\n");
}

static void test_int_power(void **state) {
  (void)state;
  RUN_OK("  %0 = stablehlo.constant dense<[2, 2, -1, -1, 1, 3, 0, 0]> : tensor<8xi32>\n"
         "  %1 = stablehlo.constant dense<[10, -1, -3, -4, -5, 0, 0, 3]> : tensor<8xi32>\n"
         "  %2 = stablehlo.power %0, %1 : tensor<8xi32>\n"
         "  check.expect_eq_const %2, dense<[1024, 0, -1, 1, 1, 1, 1, 0]> : tensor<8xi32>\n"
         "  %3 = stablehlo.constant dense<[2, 3]> : tensor<2xi8>\n"
         "  %4 = stablehlo.constant dense<[7, 5]> : tensor<2xi8>\n"
         "  %5 = stablehlo.power %3, %4 : tensor<2xi8>\n"
         "  check.expect_eq_const %5, dense<[-128, -13]> : tensor<2xi8>\n"
         "  %6 = stablehlo.constant dense<[2]> : tensor<1xui8>\n"
         "  %7 = stablehlo.constant dense<[200]> : tensor<1xui8>\n"
         "  %8 = stablehlo.power %6, %7 : tensor<1xui8>\n"
         "  check.expect_eq_const %8, dense<[0]> : tensor<1xui8>\n");
}

static void test_int_minmax_sign_compare(void **state) {
  (void)state;
  RUN_OK("  %0 = stablehlo.constant dense<[-5, 0, 7]> : tensor<3xi16>\n"
         "  %1 = stablehlo.constant dense<[3, 0, -7]> : tensor<3xi16>\n"
         "  %2 = stablehlo.maximum %0, %1 : tensor<3xi16>\n"
         "  check.expect_eq_const %2, dense<[3, 0, 7]> : tensor<3xi16>\n"
         "  %3 = stablehlo.minimum %0, %1 : tensor<3xi16>\n"
         "  check.expect_eq_const %3, dense<[-5, 0, -7]> : tensor<3xi16>\n"
         "  %4 = stablehlo.sign %0 : tensor<3xi16>\n"
         "  check.expect_eq_const %4, dense<[-1, 0, 1]> : tensor<3xi16>\n"
         "  %5 = stablehlo.compare LT, %0, %1, SIGNED : (tensor<3xi16>, tensor<3xi16>) -> tensor<3xi1>\n"
         "  check.expect_eq_const %5, dense<[true, false, false]> : tensor<3xi1>\n"
         "  %6 = stablehlo.constant dense<[200, 1]> : tensor<2xui8>\n"
         "  %7 = stablehlo.constant dense<[100, 2]> : tensor<2xui8>\n"
         "  %8 = stablehlo.compare GT, %6, %7, UNSIGNED : (tensor<2xui8>, tensor<2xui8>) -> tensor<2xi1>\n"
         "  check.expect_eq_const %8, dense<[true, false]> : tensor<2xi1>\n"
         "  %9 = stablehlo.maximum %6, %7 : tensor<2xui8>\n"
         "  check.expect_eq_const %9, dense<[200, 2]> : tensor<2xui8>\n"
         "  %10 = stablehlo.and %6, %7 : tensor<2xui8>\n"
         "  check.expect_eq_const %10, dense<[64, 0]> : tensor<2xui8>\n"
         "  %11 = stablehlo.xor %6, %7 : tensor<2xui8>\n"
         "  check.expect_eq_const %11, dense<[172, 3]> : tensor<2xui8>\n");
}

static void test_bool_ops(void **state) {
  (void)state;
  RUN_OK("  %0 = stablehlo.constant dense<[false, false, true, true]> : tensor<4xi1>\n"
         "  %1 = stablehlo.constant dense<[false, true, false, true]> : tensor<4xi1>\n"
         "  %2 = stablehlo.add %0, %1 : tensor<4xi1>\n"
         "  check.expect_eq_const %2, dense<[false, true, true, true]> : tensor<4xi1>\n"
         "  %3 = stablehlo.multiply %0, %1 : tensor<4xi1>\n"
         "  check.expect_eq_const %3, dense<[false, false, false, true]> : tensor<4xi1>\n"
         "  %4 = stablehlo.xor %0, %1 : tensor<4xi1>\n"
         "  check.expect_eq_const %4, dense<[false, true, true, false]> : tensor<4xi1>\n"
         "  %5 = stablehlo.not %0 : tensor<4xi1>\n"
         "  check.expect_eq_const %5, dense<[true, true, false, false]> : tensor<4xi1>\n"
         "  %6 = stablehlo.maximum %0, %1 : tensor<4xi1>\n"
         "  check.expect_eq_const %6, dense<[false, true, true, true]> : tensor<4xi1>\n"
         "  %7 = stablehlo.minimum %0, %1 : tensor<4xi1>\n"
         "  check.expect_eq_const %7, dense<[false, false, false, true]> : tensor<4xi1>\n"
         "  %8 = stablehlo.compare GT, %0, %1 : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>\n"
         "  check.expect_eq_const %8, dense<[false, false, true, false]> : tensor<4xi1>\n");
}

/* ---- floats ---- */

static void test_float_special_values(void **state) {
  (void)state;
  RUN_OK("  %0 = stablehlo.constant dense<[1.0, -1.0, 0.0, 0x7F800000]> : tensor<4xf32>\n"
         "  %1 = stablehlo.constant dense<[0.0, 0.0, 0.0, 0x7F800000]> : tensor<4xf32>\n"
         "  %2 = stablehlo.divide %0, %1 : tensor<4xf32>\n"
         "  check.expect_eq_const %2, dense<[0x7F800000, 0xFF800000, 0x7FC00000, 0x7FC00000]> : tensor<4xf32>\n"
         "  %3 = stablehlo.subtract %0, %0 : tensor<4xf32>\n"
         "  check.expect_eq_const %3, dense<[0.0, 0.0, 0.0, 0x7FC00000]> : tensor<4xf32>\n"
         "  %4 = stablehlo.is_finite %2 : (tensor<4xf32>) -> tensor<4xi1>\n"
         "  check.expect_eq_const %4, dense<[false, false, false, false]> : tensor<4xi1>\n"
         "  %5 = stablehlo.is_finite %0 : (tensor<4xf32>) -> tensor<4xi1>\n"
         "  check.expect_eq_const %5, dense<[true, true, true, false]> : tensor<4xi1>\n"
         "  %6 = stablehlo.compare NE, %2, %2, FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>\n"
         "  check.expect_eq_const %6, dense<[false, false, true, true]> : tensor<4xi1>\n");
}

static void test_float_minmax_nan_and_zero(void **state) {
  (void)state;
  RUN_OK("  %0 = stablehlo.constant dense<[0x7FC00000, 1.0, -0.0, 0.0]> : tensor<4xf32>\n"
         "  %1 = stablehlo.constant dense<[1.0, 0x7FC00000, 0.0, -0.0]> : tensor<4xf32>\n"
         "  %2 = stablehlo.maximum %0, %1 : tensor<4xf32>\n"
         "  %3 = stablehlo.bitcast_convert %2 : (tensor<4xf32>) -> tensor<4xi32>\n"
         "  check.expect_eq_const %3, dense<[2143289344, 2143289344, 0, 0]> : tensor<4xi32>\n"
         "  %4 = stablehlo.minimum %0, %1 : tensor<4xf32>\n"
         "  %5 = stablehlo.bitcast_convert %4 : (tensor<4xf32>) -> tensor<4xi32>\n"
         "  check.expect_eq_const %5, dense<[2143289344, 2143289344, -2147483648, -2147483648]> : tensor<4xi32>\n");
}

static void test_float_sign_and_negate_zero(void **state) {
  (void)state;
  RUN_OK("  %0 = stablehlo.constant dense<[-0.0, 0.0, -5.0, 5.0, 0x7FF8000000000000]> : tensor<5xf64>\n"
         "  %1 = stablehlo.sign %0 : tensor<5xf64>\n"
         "  %2 = stablehlo.bitcast_convert %1 : (tensor<5xf64>) -> tensor<5xi64>\n"
         "  check.expect_eq_const %2, dense<[-9223372036854775808, 0, -4616189618054758400, 4607182418800017408, 9221120237041090560]> : tensor<5xi64>\n"
         "  %3 = stablehlo.negate %0 : tensor<5xf64>\n"
         "  %4 = stablehlo.bitcast_convert %3 : (tensor<5xf64>) -> tensor<5xi64>\n"
         "  check.expect_eq_const %4, dense<[0, -9223372036854775808, 4617315517961601024, -4606056518893174784, -2251799813685248]> : tensor<5xi64>\n"
         "  %5 = stablehlo.abs %0 : tensor<5xf64>\n"
         "  check.expect_eq_const %5, dense<[0.0, 0.0, 5.0, 5.0, 0x7FF8000000000000]> : tensor<5xf64>\n");
}

static void test_float_rounding_ops(void **state) {
  (void)state;
  RUN_OK("  %0 = stablehlo.constant dense<[0.5, 1.5, 2.5, -0.5, -2.5, 0.4]> : tensor<6xf16>\n"
         "  %1 = stablehlo.round_nearest_even %0 : tensor<6xf16>\n"
         "  check.expect_eq_const %1, dense<[0.0, 2.0, 2.0, -0.0, -2.0, 0.0]> : tensor<6xf16>\n"
         "  %2 = stablehlo.round_nearest_afz %0 : tensor<6xf16>\n"
         "  check.expect_eq_const %2, dense<[1.0, 2.0, 3.0, -1.0, -3.0, 0.0]> : tensor<6xf16>\n"
         "  %3 = stablehlo.floor %0 : tensor<6xf16>\n"
         "  check.expect_eq_const %3, dense<[0.0, 1.0, 2.0, -1.0, -3.0, 0.0]> : tensor<6xf16>\n"
         "  %4 = stablehlo.ceil %0 : tensor<6xf16>\n"
         "  check.expect_eq_const %4, dense<[1.0, 2.0, 3.0, -0.0, -2.0, 1.0]> : tensor<6xf16>\n"
         "  %5 = stablehlo.round_nearest_even %0 : tensor<6xf16>\n"
         "  %6 = stablehlo.bitcast_convert %5 : (tensor<6xf16>) -> tensor<6xi16>\n"
         "  check.expect_eq_const %6, dense<[0, 16384, 16384, -32768, -16384, 0]> : tensor<6xi16>\n");
}

static void test_float_math(void **state) {
  (void)state;
  RUN_OK("  %0 = stablehlo.constant dense<[0.0, 1.0, -1.0, 4.0]> : tensor<4xf32>\n"
         "  %1 = stablehlo.exponential %0 : tensor<4xf32>\n"
         "  check.expect_almost_eq_const %1, dense<[1.0, 2.71828175, 0.36787945, 54.5981483]> : tensor<4xf32>\n"
         "  %2 = stablehlo.logistic %0 : tensor<4xf32>\n"
         "  check.expect_almost_eq_const %2, dense<[0.5, 0.731058597, 0.268941432, 0.982013762]> : tensor<4xf32>\n"
         "  %3 = stablehlo.sqrt %0 : tensor<4xf32>\n"
         "  check.expect_almost_eq_const %3, dense<[0.0, 1.0, 0x7FC00000, 2.0]> : tensor<4xf32>\n"
         "  %4 = stablehlo.rsqrt %0 : tensor<4xf32>\n"
         "  check.expect_almost_eq_const %4, dense<[0x7F800000, 1.0, 0x7FC00000, 0.5]> : tensor<4xf32>\n"
         "  %5 = stablehlo.log %0 : tensor<4xf32>\n"
         "  check.expect_almost_eq_const %5, dense<[0xFF800000, 0.0, 0x7FC00000, 1.38629436]> : tensor<4xf32>\n"
         "  %6 = stablehlo.cbrt %0 : tensor<4xf32>\n"
         "  check.expect_almost_eq_const %6, dense<[0.0, 1.0, -1.0, 1.58740105]> : tensor<4xf32>\n"
         "  %7 = stablehlo.tanh %0 : tensor<4xf32>\n"
         "  check.expect_almost_eq_const %7, dense<[0.0, 0.761594176, -0.761594176, 0.999329329]> : tensor<4xf32>\n"
         "  %8 = stablehlo.atan2 %0, %0 : tensor<4xf32>\n"
         "  check.expect_almost_eq_const %8, dense<[0.0, 0.785398185, -2.3561945, 0.785398185]> : tensor<4xf32>\n"
         "  %9 = stablehlo.power %0, %0 : tensor<4xf32>\n"
         "  check.expect_almost_eq_const %9, dense<[1.0, 1.0, -1.0, 256.0]> : tensor<4xf32>\n"
         "  %10 = stablehlo.remainder %0, %0 : tensor<4xf32>\n"
         "  check.expect_almost_eq_const %10, dense<[0x7FC00000, 0.0, -0.0, 0.0]> : tensor<4xf32>\n");
}

static void test_narrow_float_arith(void **state) {
  (void)state;
  /* bf16: 1 + 2^-8 is a tie between 1 and 1 + 2^-7: rounds to even */
  RUN_OK("  %0 = stablehlo.constant dense<[1.0, 1.0, 3.0e38]> : tensor<3xbf16>\n"
         "  %1 = stablehlo.constant dense<[0.00390625, 0.01171875, 3.0e38]> : tensor<3xbf16>\n"
         "  %2 = stablehlo.add %0, %1 : tensor<3xbf16>\n"
         "  %3 = stablehlo.bitcast_convert %2 : (tensor<3xbf16>) -> tensor<3xi16>\n"
         "  check.expect_eq_const %3, dense<[16256, 16258, 32640]> : tensor<3xi16>\n"
         "  %4 = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf8E4M3FN>\n"
         "  %5 = stablehlo.constant dense<[0.0625, 0.25]> : tensor<2xf8E4M3FN>\n"
         "  %6 = stablehlo.add %4, %5 : tensor<2xf8E4M3FN>\n"
         "  check.expect_eq_const %6, dense<[1.0, 2.25]> : tensor<2xf8E4M3FN>\n"
         "  %7 = stablehlo.constant dense<[1.5, -2.0]> : tensor<2xf8E5M2>\n"
         "  %8 = stablehlo.multiply %7, %7 : tensor<2xf8E5M2>\n"
         "  check.expect_eq_const %8, dense<[2.0, 4.0]> : tensor<2xf8E5M2>\n"
         "  %9 = stablehlo.maximum %7, %8 : tensor<2xf8E5M2>\n"
         "  check.expect_eq_const %9, dense<[2.0, 4.0]> : tensor<2xf8E5M2>\n");
}

static void test_compare_total_order(void **state) {
  (void)state;
  /* -NaN, -Inf, -0, +0, 1, +NaN against +0 and against themselves */
  RUN_OK("  %0 = stablehlo.constant dense<[0xFFC00000, 0xFF800000, -0.0, 0.0, 1.0, 0x7FC00000]> : tensor<6xf32>\n"
         "  %1 = stablehlo.constant dense<0.0> : tensor<6xf32>\n"
         "  %2 = stablehlo.compare LT, %0, %1, TOTALORDER : (tensor<6xf32>, tensor<6xf32>) -> tensor<6xi1>\n"
         "  check.expect_eq_const %2, dense<[true, true, true, false, false, false]> : tensor<6xi1>\n"
         "  %3 = stablehlo.compare EQ, %0, %0, TOTALORDER : (tensor<6xf32>, tensor<6xf32>) -> tensor<6xi1>\n"
         "  check.expect_eq_const %3, dense<true> : tensor<6xi1>\n"
         "  %4 = stablehlo.compare EQ, %0, %0, FLOAT : (tensor<6xf32>, tensor<6xf32>) -> tensor<6xi1>\n"
         "  check.expect_eq_const %4, dense<[false, true, true, true, true, false]> : tensor<6xi1>\n"
         "  %5 = stablehlo.compare GE, %0, %1, FLOAT : (tensor<6xf32>, tensor<6xf32>) -> tensor<6xi1>\n"
         "  check.expect_eq_const %5, dense<[false, false, true, true, true, false]> : tensor<6xi1>\n"
         "  %6 = stablehlo.constant dense<[0xFFF8000000000000, -0.0]> : tensor<2xf64>\n"
         "  %7 = stablehlo.constant dense<[0xFFF0000000000000, 0.0]> : tensor<2xf64>\n"
         "  %8 = stablehlo.compare LT, %6, %7, TOTALORDER : (tensor<2xf64>, tensor<2xf64>) -> tensor<2xi1>\n"
         "  check.expect_eq_const %8, dense<[true, true]> : tensor<2xi1>\n");
}

static void test_reduce_precision(void **state) {
  (void)state;
  RUN_OK("  %0 = stablehlo.constant dense<[65504.0, 65520.0, 1.0e-8, 1.00048828125, 0x7FC00000]> : tensor<5xf32>\n"
         "  %1 = stablehlo.reduce_precision %0, format = e5m10 : tensor<5xf32>\n"
         "  check.expect_eq_const %1, dense<[65504.0, 0x7F800000, 0.0, 1.0, 0x7FC00000]> : tensor<5xf32>\n"
         "  %2 = stablehlo.reduce_precision %0, format = e8m0 : tensor<5xf32>\n"
         "  check.expect_eq_const %2, dense<[65536.0, 65536.0, 0x32000000, 1.0, 0x7F800000]> : tensor<5xf32>\n");
}

/* ---- complex ---- */

static void test_complex_ops(void **state) {
  (void)state;
  RUN_OK("  %0 = stablehlo.constant dense<[(1.0, 2.0), (3.0, 4.0)]> : tensor<2xcomplex<f32>>\n"
         "  %1 = stablehlo.constant dense<[(3.0, 4.0), (0.0, 1.0)]> : tensor<2xcomplex<f32>>\n"
         "  %2 = stablehlo.multiply %0, %1 : tensor<2xcomplex<f32>>\n"
         "  check.expect_eq_const %2, dense<[(-5.0, 10.0), (-4.0, 3.0)]> : tensor<2xcomplex<f32>>\n"
         "  %3 = stablehlo.abs %0 : (tensor<2xcomplex<f32>>) -> tensor<2xf32>\n"
         "  check.expect_almost_eq_const %3, dense<[2.23606801, 5.0]> : tensor<2xf32>\n"
         "  %4 = stablehlo.real %0 : (tensor<2xcomplex<f32>>) -> tensor<2xf32>\n"
         "  %5 = stablehlo.imag %0 : (tensor<2xcomplex<f32>>) -> tensor<2xf32>\n"
         "  %6 = stablehlo.complex %5, %4 : tensor<2xcomplex<f32>>\n"
         "  check.expect_eq_const %6, dense<[(2.0, 1.0), (4.0, 3.0)]> : tensor<2xcomplex<f32>>\n"
         "  %7 = stablehlo.compare EQ, %0, %6 : (tensor<2xcomplex<f32>>, tensor<2xcomplex<f32>>) -> tensor<2xi1>\n"
         "  check.expect_eq_const %7, dense<[false, false]> : tensor<2xi1>\n"
         "  %8 = stablehlo.divide %2, %1 : tensor<2xcomplex<f32>>\n"
         "  check.expect_almost_eq_const %8, dense<[(1.0, 2.0), (3.0, 4.0)]> : tensor<2xcomplex<f32>>\n"
         "  %9 = stablehlo.constant dense<[(-4.0, 0.0)]> : tensor<1xcomplex<f64>>\n"
         "  %10 = stablehlo.sqrt %9 : tensor<1xcomplex<f64>>\n"
         "  check.expect_almost_eq_const %10, dense<[(0.0, 2.0)]> : tensor<1xcomplex<f64>>\n"
         "  %11 = stablehlo.exponential %9 : tensor<1xcomplex<f64>>\n"
         "  check.expect_almost_eq_const %11, dense<[(0.018315638888734179, 0.0)]> : tensor<1xcomplex<f64>>\n");
}

/* ---- select, clamp, shapes ---- */

static void test_select_clamp(void **state) {
  (void)state;
  RUN_OK("  %0 = stablehlo.constant dense<true> : tensor<i1>\n"
         "  %1 = stablehlo.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi64>\n"
         "  %2 = stablehlo.constant dense<[[5, 6], [7, 8]]> : tensor<2x2xi64>\n"
         "  %3 = stablehlo.select %0, %1, %2 : (tensor<i1>, tensor<2x2xi64>, tensor<2x2xi64>) -> tensor<2x2xi64>\n"
         "  check.expect_eq_const %3, dense<[[1, 2], [3, 4]]> : tensor<2x2xi64>\n"
         "  %4 = stablehlo.constant dense<[[true, false], [false, true]]> : tensor<2x2xi1>\n"
         "  %5 = stablehlo.select %4, %1, %2 : (tensor<2x2xi1>, tensor<2x2xi64>, tensor<2x2xi64>) -> tensor<2x2xi64>\n"
         "  check.expect_eq_const %5, dense<[[1, 6], [7, 4]]> : tensor<2x2xi64>\n"
         "  %6 = stablehlo.constant dense<[(1.0, 1.0), (2.0, 2.0)]> : tensor<2xcomplex<f64>>\n"
         "  %7 = stablehlo.constant dense<[(3.0, 3.0), (4.0, 4.0)]> : tensor<2xcomplex<f64>>\n"
         "  %8 = stablehlo.constant dense<[false, true]> : tensor<2xi1>\n"
         "  %9 = stablehlo.select %8, %6, %7 : (tensor<2xi1>, tensor<2xcomplex<f64>>, tensor<2xcomplex<f64>>) -> tensor<2xcomplex<f64>>\n"
         "  check.expect_eq_const %9, dense<[(3.0, 3.0), (2.0, 2.0)]> : tensor<2xcomplex<f64>>\n"
         "  %10 = stablehlo.constant dense<-1.0> : tensor<f32>\n"
         "  %11 = stablehlo.constant dense<1.0> : tensor<f32>\n"
         "  %12 = stablehlo.constant dense<[-5.0, 0.5, 5.0, 0x7FC00000]> : tensor<4xf32>\n"
         "  %13 = stablehlo.clamp %10, %12, %11 : (tensor<f32>, tensor<4xf32>, tensor<f32>) -> tensor<4xf32>\n"
         "  check.expect_eq_const %13, dense<[-1.0, 0.5, 1.0, 0x7FC00000]> : tensor<4xf32>\n"
         "  %14 = stablehlo.constant dense<[0, 10, 20]> : tensor<3xui8>\n"
         "  %15 = stablehlo.constant dense<[5, 5, 5]> : tensor<3xui8>\n"
         "  %16 = stablehlo.constant dense<15> : tensor<ui8>\n"
         "  %17 = stablehlo.clamp %15, %14, %16 : (tensor<3xui8>, tensor<3xui8>, tensor<ui8>) -> tensor<3xui8>\n"
         "  check.expect_eq_const %17, dense<[5, 10, 15]> : tensor<3xui8>\n");
}

static void test_empty_and_scalar(void **state) {
  (void)state;
  RUN_OK("  %0 = stablehlo.constant dense<> : tensor<0xf32>\n"
         "  %1 = stablehlo.add %0, %0 : tensor<0xf32>\n"
         "  check.expect_eq_const %1, dense<> : tensor<0xf32>\n"
         "  %2 = stablehlo.constant dense<> : tensor<2x0xi8>\n"
         "  %3 = stablehlo.negate %2 : tensor<2x0xi8>\n"
         "  %4 = stablehlo.convert %3 : (tensor<2x0xi8>) -> tensor<2x0xf64>\n"
         "  check.expect_eq_const %4, dense<> : tensor<2x0xf64>\n"
         "  %5 = stablehlo.constant dense<> : tensor<0xi1>\n"
         "  %6 = stablehlo.select %5, %0, %0 : (tensor<0xi1>, tensor<0xf32>, tensor<0xf32>) -> tensor<0xf32>\n"
         "  check.expect_eq_const %6, dense<> : tensor<0xf32>\n"
         "  %7 = stablehlo.constant dense<6> : tensor<i32>\n"
         "  %8 = stablehlo.multiply %7, %7 : tensor<i32>\n"
         "  check.expect_eq_const %8, dense<36> : tensor<i32>\n"
         "  %9 = stablehlo.compare GE, %8, %7 : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
         "  check.expect_eq_const %9, dense<true> : tensor<i1>\n");
}

static void test_large_tensor(void **state) {
  (void)state;
  /* 2*i - i == i over 100000 elements; (i*i) mod 2^32 kept in ui32 */
  RUN_OK("  %0 = \"stablehlo.iota\"() {iota_dimension = 0 : i64} : () -> tensor<100000xi32>\n"
         "  %1 = stablehlo.add %0, %0 : tensor<100000xi32>\n"
         "  %2 = stablehlo.subtract %1, %0 : tensor<100000xi32>\n"
         "  %3 = stablehlo.compare EQ, %2, %0 : (tensor<100000xi32>, tensor<100000xi32>) -> tensor<100000xi1>\n"
         "  %4 = stablehlo.constant dense<true> : tensor<100000xi1>\n"
         "  check.expect_eq %3, %4 : tensor<100000xi1>\n"
         "  %5 = stablehlo.convert %0 : (tensor<100000xi32>) -> tensor<100000xf64>\n"
         "  %6 = stablehlo.multiply %5, %5 : tensor<100000xf64>\n"
         "  %7 = stablehlo.sqrt %6 : tensor<100000xf64>\n"
         "  check.expect_eq %7, %5 : tensor<100000xf64>\n");
}

/* ---- convert ---- */

static void test_convert_float_to_int(void **state) {
  (void)state;
  RUN_OK("  %0 = stablehlo.constant dense<[300.0, -300.0, 0x7FC00000, 1.9, -1.9, 0x7F800000]> : tensor<6xf32>\n"
         "  %1 = stablehlo.convert %0 : (tensor<6xf32>) -> tensor<6xi8>\n"
         "  check.expect_eq_const %1, dense<[127, -128, 0, 1, -1, 127]> : tensor<6xi8>\n"
         "  %2 = stablehlo.convert %0 : (tensor<6xf32>) -> tensor<6xui8>\n"
         "  check.expect_eq_const %2, dense<[255, 0, 0, 1, 0, 255]> : tensor<6xui8>\n"
         "  %3 = stablehlo.convert %0 : (tensor<6xf32>) -> tensor<6xi4>\n"
         "  check.expect_eq_const %3, dense<[7, -8, 0, 1, -1, 7]> : tensor<6xi4>\n"
         "  %4 = stablehlo.convert %0 : (tensor<6xf32>) -> tensor<6xi1>\n"
         "  check.expect_eq_const %4, dense<true> : tensor<6xi1>\n"
         "  %5 = stablehlo.constant dense<[1.0e19, -1.0e19]> : tensor<2xf64>\n"
         "  %6 = stablehlo.convert %5 : (tensor<2xf64>) -> tensor<2xi64>\n"
         "  check.expect_eq_const %6, dense<[9223372036854775807, -9223372036854775808]> : tensor<2xi64>\n"
         "  %7 = stablehlo.convert %5 : (tensor<2xf64>) -> tensor<2xui64>\n"
         "  check.expect_eq_const %7, dense<[10000000000000000000, 0]> : tensor<2xui64>\n");
}

static void test_convert_int_to_int(void **state) {
  (void)state;
  RUN_OK("  %0 = stablehlo.constant dense<[7, 8, -9, 15, 256]> : tensor<5xi32>\n"
         "  %1 = stablehlo.convert %0 : (tensor<5xi32>) -> tensor<5xi4>\n"
         "  check.expect_eq_const %1, dense<[7, -8, 7, -1, 0]> : tensor<5xi4>\n"
         "  %2 = stablehlo.convert %0 : (tensor<5xi32>) -> tensor<5xui4>\n"
         "  check.expect_eq_const %2, dense<[7, 8, 7, 15, 0]> : tensor<5xui4>\n"
         "  %3 = stablehlo.convert %0 : (tensor<5xi32>) -> tensor<5xi1>\n"
         "  check.expect_eq_const %3, dense<true> : tensor<5xi1>\n"
         "  %4 = stablehlo.constant dense<[-1, -128]> : tensor<2xi8>\n"
         "  %5 = stablehlo.convert %4 : (tensor<2xi8>) -> tensor<2xui64>\n"
         "  check.expect_eq_const %5, dense<[18446744073709551615, 18446744073709551488]> : tensor<2xui64>\n"
         "  %6 = stablehlo.constant dense<[255, 128]> : tensor<2xui8>\n"
         "  %7 = stablehlo.convert %6 : (tensor<2xui8>) -> tensor<2xi8>\n"
         "  check.expect_eq_const %7, dense<[-1, -128]> : tensor<2xi8>\n"
         "  %8 = stablehlo.convert %6 : (tensor<2xui8>) -> tensor<2xi16>\n"
         "  check.expect_eq_const %8, dense<[255, 128]> : tensor<2xi16>\n"
         "  %9 = stablehlo.constant dense<[true, false]> : tensor<2xi1>\n"
         "  %10 = stablehlo.convert %9 : (tensor<2xi1>) -> tensor<2xi32>\n"
         "  check.expect_eq_const %10, dense<[1, 0]> : tensor<2xi32>\n");
}

static void test_convert_to_float(void **state) {
  (void)state;
  RUN_OK(/* 2^53 + 1 to f32 rounds to 2^53; 2^55 + 2^47 + 1 to bf16 must round
            up, not to the tie that rounding through double would give */
         "  %0 = stablehlo.constant dense<[9007199254740993, -3]> : tensor<2xi64>\n"
         "  %1 = stablehlo.convert %0 : (tensor<2xi64>) -> tensor<2xf32>\n"
         "  check.expect_eq_const %1, dense<[9007199254740992.0, -3.0]> : tensor<2xf32>\n"
         "  %2 = stablehlo.constant dense<[36169534507319297]> : tensor<1xui64>\n"
         "  %3 = stablehlo.convert %2 : (tensor<1xui64>) -> tensor<1xbf16>\n"
         "  %4 = stablehlo.bitcast_convert %3 : (tensor<1xbf16>) -> tensor<1xi16>\n"
         "  check.expect_eq_const %4, dense<[23297]> : tensor<1xi16>\n"
         "  %5 = stablehlo.constant dense<[1.00390625, 1.01171875, -0.0]> : tensor<3xf64>\n"
         "  %6 = stablehlo.convert %5 : (tensor<3xf64>) -> tensor<3xbf16>\n"
         "  %7 = stablehlo.bitcast_convert %6 : (tensor<3xbf16>) -> tensor<3xi16>\n"
         "  check.expect_eq_const %7, dense<[16256, 16258, -32768]> : tensor<3xi16>\n"
         "  %8 = stablehlo.convert %6 : (tensor<3xbf16>) -> tensor<3xf32>\n"
         "  check.expect_eq_const %8, dense<[1.0, 1.015625, -0.0]> : tensor<3xf32>\n"
         "  %9 = stablehlo.constant dense<[(1.5, 2.5)]> : tensor<1xcomplex<f64>>\n"
         "  %10 = stablehlo.convert %9 : (tensor<1xcomplex<f64>>) -> tensor<1xf32>\n"
         "  check.expect_eq_const %10, dense<[1.5]> : tensor<1xf32>\n"
         "  %11 = stablehlo.convert %9 : (tensor<1xcomplex<f64>>) -> tensor<1xcomplex<f32>>\n"
         "  check.expect_eq_const %11, dense<[(1.5, 2.5)]> : tensor<1xcomplex<f32>>\n"
         "  %12 = stablehlo.constant dense<[-7, 100]> : tensor<2xi8>\n"
         "  %13 = stablehlo.convert %12 : (tensor<2xi8>) -> tensor<2xcomplex<f64>>\n"
         "  check.expect_eq_const %13, dense<[(-7.0, 0.0), (100.0, 0.0)]> : tensor<2xcomplex<f64>>\n");
}

/* ---- bitcast_convert ---- */

static void test_bitcast(void **state) {
  (void)state;
  RUN_OK("  %0 = stablehlo.constant dense<[1.0, -2.0]> : tensor<2xf32>\n"
         "  %1 = stablehlo.bitcast_convert %0 : (tensor<2xf32>) -> tensor<2xi32>\n"
         "  check.expect_eq_const %1, dense<[1065353216, -1073741824]> : tensor<2xi32>\n"
         "  %2 = stablehlo.bitcast_convert %1 : (tensor<2xi32>) -> tensor<2x4xui8>\n"
         "  check.expect_eq_const %2, dense<[[0, 0, 128, 63], [0, 0, 0, 192]]> : tensor<2x4xui8>\n"
         "  %3 = stablehlo.bitcast_convert %2 : (tensor<2x4xui8>) -> tensor<2xf32>\n"
         "  check.expect_eq_const %3, dense<[1.0, -2.0]> : tensor<2xf32>\n"
         "  %4 = stablehlo.constant dense<[33, -1]> : tensor<2xi8>\n"
         "  %5 = stablehlo.bitcast_convert %4 : (tensor<2xi8>) -> tensor<2x2xi4>\n"
         "  check.expect_eq_const %5, dense<[[1, 2], [-1, -1]]> : tensor<2x2xi4>\n"
         "  %6 = stablehlo.bitcast_convert %5 : (tensor<2x2xi4>) -> tensor<2x2xui4>\n"
         "  check.expect_eq_const %6, dense<[[1, 2], [15, 15]]> : tensor<2x2xui4>\n"
         "  %7 = stablehlo.bitcast_convert %6 : (tensor<2x2xui4>) -> tensor<2xui8>\n"
         "  check.expect_eq_const %7, dense<[33, 255]> : tensor<2xui8>\n"
         "  %8 = stablehlo.constant dense<[true, false, true, false, false, false, false, true]> : tensor<8xi1>\n"
         "  %9 = stablehlo.bitcast_convert %8 : (tensor<8xi1>) -> tensor<ui8>\n"
         "  check.expect_eq_const %9, dense<133> : tensor<ui8>\n"
         "  %10 = stablehlo.bitcast_convert %9 : (tensor<ui8>) -> tensor<4xui2>\n"
         "  check.expect_eq_const %10, dense<[1, 1, 0, 2]> : tensor<4xui2>\n"
         "  %11 = stablehlo.constant dense<(1.0, -1.0)> : tensor<complex<f64>>\n"
         "  %12 = stablehlo.bitcast_convert %11 : (tensor<complex<f64>>) -> tensor<2xcomplex<f32>>\n"
         "  %13 = stablehlo.bitcast_convert %12 : (tensor<2xcomplex<f32>>) -> tensor<complex<f64>>\n"
         "  check.expect_eq_const %13, dense<(1.0, -1.0)> : tensor<complex<f64>>\n");
  /* Complex to real is outside the spec (bitcast_convert C2). */
  assert_int_equal(
      harness_run(PROG("  %0 = stablehlo.constant dense<(1.0, -1.0)> : tensor<complex<f64>>\n"
                       "  %1 = stablehlo.bitcast_convert %0 : (tensor<complex<f64>>) -> tensor<2xi64>\n"),
                  true),
      SHLO_EVERIFY);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_wrong_expectation_fails),
      cmocka_unit_test(test_unsupported_type_fails_to_compile),
      cmocka_unit_test(test_int_wrap),
      cmocka_unit_test(test_subbyte_wrap),
      cmocka_unit_test(test_int_divide_edges),
      cmocka_unit_test(test_shifts),
      cmocka_unit_test(test_bit_counts),
      cmocka_unit_test(test_int_power),
      cmocka_unit_test(test_int_minmax_sign_compare),
      cmocka_unit_test(test_bool_ops),
      cmocka_unit_test(test_float_special_values),
      cmocka_unit_test(test_float_minmax_nan_and_zero),
      cmocka_unit_test(test_float_sign_and_negate_zero),
      cmocka_unit_test(test_float_rounding_ops),
      cmocka_unit_test(test_float_math),
      cmocka_unit_test(test_narrow_float_arith),
      cmocka_unit_test(test_compare_total_order),
      cmocka_unit_test(test_reduce_precision),
      cmocka_unit_test(test_complex_ops),
      cmocka_unit_test(test_select_clamp),
      cmocka_unit_test(test_empty_and_scalar),
      cmocka_unit_test(test_large_tensor),
      cmocka_unit_test(test_convert_float_to_int),
      cmocka_unit_test(test_convert_int_to_int),
      cmocka_unit_test(test_convert_to_float),
      cmocka_unit_test(test_bitcast),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
