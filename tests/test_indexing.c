/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests for gather, dynamic_gather and scatter (engine/src/kernels/indexing.c).
 *
 * Each test parses a small program whose checks (check.expect_eq_const)
 * state the expected values, compiles it and runs it; SHLO_OK means every
 * check held.  The expected values were computed with a separate,
 * spec-literal reference (one loop over the result or the updates, as the
 * spec's formulas read).  Cases: clamped gather starts, index_vector_dim at
 * the end, in the middle and implicit, batching dims, empty indices, every
 * element size, out-of-bounds scatter windows, native update computations
 * per element type, bodies that go through the compiled region (with a
 * captured value), variadic scatter, an operand updated in place when it
 * dies at the scatter (and copied when it is also the updates), a
 * scatter split over the pool by where it lands (the bytes of one
 * thread), and a wrong expectation. */
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


#define RUN_OK(text) assert_int_equal(harness_run(text, false), SHLO_OK)
#define RUN_STATUS(text, st) assert_int_equal(harness_run(text, true), st)

/* ---- gather ---- */

/* Starts below 0 and past dim - slice_size clamp into range; the index
 * vector is the last dim; offset dims trailing (memcpy rows). */
static void test_gather_clamp(void **state) {
  (void)state;
  RUN_OK("func.func @main() {\n"
         "  %i = stablehlo.iota dim = 0 : tensor<20xi32>\n"
         "  %op = stablehlo.reshape %i : (tensor<20xi32>) -> tensor<5x4xi32>\n"
         "  %idx = stablehlo.constant dense<[[-3, 0], [4, 3], [2, 2], "
         "[100, -100], [3, 1]]> : tensor<5x2xi32>\n"
         "  %r = \"stablehlo.gather\"(%op, %idx) {\n"
         "    dimension_numbers = #stablehlo.gather<offset_dims = [1, 2], "
         "start_index_map = [0, 1], index_vector_dim = 1>,\n"
         "    slice_sizes = array<i64: 2, 3>, indices_are_sorted = false\n"
         "  } : (tensor<5x4xi32>, tensor<5x2xi32>) -> tensor<5x2x3xi32>\n"
         "  check.expect_eq_const %r, dense<[[[0, 1, 2], [4, 5, 6]], "
         "[[13, 14, 15], [17, 18, 19]], [[9, 10, 11], [13, 14, 15]], "
         "[[12, 13, 14], [16, 17, 18]], [[13, 14, 15], [17, 18, 19]]]>"
         " : tensor<5x2x3xi32>\n"
         "  func.return\n"
         "}\n");
}

/* index_vector_dim in the middle of the indices; result dims alternate
 * batch / offset, so no run is contiguous. */
static void test_gather_ivd_middle(void **state) {
  (void)state;
  RUN_OK("func.func @main() {\n"
         "  %i = stablehlo.iota dim = 0 : tensor<120xi32>\n"
         "  %op = stablehlo.reshape %i : (tensor<120xi32>) -> tensor<4x5x6xi32>\n"
         "  %idx = stablehlo.constant dense<[[[0, 2, 3], [0, 1, 5]], "
         "[[1, 9, 0], [4, -1, 2]]]> : tensor<2x2x3xi64>\n"
         "  %r = \"stablehlo.gather\"(%op, %idx) {\n"
         "    dimension_numbers = #stablehlo.gather<offset_dims = [1, 3], "
         "collapsed_slice_dims = [0], start_index_map = [0, 2], "
         "index_vector_dim = 1>,\n"
         "    slice_sizes = array<i64: 1, 3, 2>\n"
         "  } : (tensor<4x5x6xi32>, tensor<2x2x3xi64>) -> tensor<2x3x3x2xi32>\n"
         "  check.expect_eq_const %r, dense<[[[[0, 1], [61, 62], [94, 95]], "
         "[[6, 7], [67, 68], [100, 101]], [[12, 13], [73, 74], [106, 107]]], "
         "[[[34, 35], [90, 91], [2, 3]], [[40, 41], [96, 97], [8, 9]], "
         "[[46, 47], [102, 103], [14, 15]]]]> : tensor<2x3x3x2xi32>\n"
         "  func.return\n"
         "}\n");
}

/* Batching dims with an implicit index vector (index_vector_dim = rank)
 * and unsigned 8-bit indices (200 clamps to the last column). */
static void test_gather_batching_implicit(void **state) {
  (void)state;
  RUN_OK("func.func @main() {\n"
         "  %i = stablehlo.iota dim = 0 : tensor<15xi16>\n"
         "  %op = stablehlo.reshape %i : (tensor<15xi16>) -> tensor<3x5xi16>\n"
         "  %idx = stablehlo.constant dense<[[0, 4], [1, 200], [3, 2]]>"
         " : tensor<3x2xui8>\n"
         "  %r = \"stablehlo.gather\"(%op, %idx) {\n"
         "    dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [1], "
         "operand_batching_dims = [0], start_indices_batching_dims = [0], "
         "start_index_map = [1], index_vector_dim = 2>,\n"
         "    slice_sizes = array<i64: 1, 1>\n"
         "  } : (tensor<3x5xi16>, tensor<3x2xui8>) -> tensor<3x2xi16>\n"
         "  check.expect_eq_const %r, dense<[[0, 4], [6, 9], [13, 12]]>"
         " : tensor<3x2xi16>\n"
         "  func.return\n"
         "}\n");
}

/* Element sizes 16 (complex<f64>) and 2 (f16), one element per slice. */
static void test_gather_elem_sizes(void **state) {
  (void)state;
  RUN_OK("func.func @main() {\n"
         "  %op = stablehlo.constant dense<[(1.0, 2.0), (3.0, 4.0), "
         "(5.0, 6.0)]> : tensor<3xcomplex<f64>>\n"
         "  %idx = stablehlo.constant dense<[[2], [0], [2], [-7]]>"
         " : tensor<4x1xi64>\n"
         "  %r = \"stablehlo.gather\"(%op, %idx) {\n"
         "    dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0], "
         "start_index_map = [0], index_vector_dim = 1>,\n"
         "    slice_sizes = array<i64: 1>\n"
         "  } : (tensor<3xcomplex<f64>>, tensor<4x1xi64>)"
         " -> tensor<4xcomplex<f64>>\n"
         "  check.expect_eq_const %r, dense<[(5.0, 6.0), (1.0, 2.0), "
         "(5.0, 6.0), (1.0, 2.0)]> : tensor<4xcomplex<f64>>\n"
         "  %h = stablehlo.constant dense<[[0.5, 1.5], [2.5, 3.5]]>"
         " : tensor<2x2xf16>\n"
         "  %hi = stablehlo.constant dense<[1, 0, 1]> : tensor<3xi32>\n"
         "  %hr = \"stablehlo.gather\"(%h, %hi) {\n"
         "    dimension_numbers = #stablehlo.gather<offset_dims = [0], "
         "collapsed_slice_dims = [1], start_index_map = [1], "
         "index_vector_dim = 1>,\n"
         "    slice_sizes = array<i64: 2, 1>\n"
         "  } : (tensor<2x2xf16>, tensor<3xi32>) -> tensor<2x3xf16>\n"
         "  check.expect_eq_const %hr, dense<[[1.5, 0.5, 1.5], "
         "[3.5, 2.5, 3.5]]> : tensor<2x3xf16>\n"
         "  func.return\n"
         "}\n");
}

static void test_gather_empty_indices(void **state) {
  (void)state;
  RUN_OK("func.func @main() {\n"
         "  %op = stablehlo.constant dense<1.0> : tensor<4x3xf32>\n"
         "  %idx = stablehlo.constant dense<> : tensor<0x1xi32>\n"
         "  %r = \"stablehlo.gather\"(%op, %idx) {\n"
         "    dimension_numbers = #stablehlo.gather<offset_dims = [1], "
         "collapsed_slice_dims = [0], start_index_map = [0], "
         "index_vector_dim = 1>,\n"
         "    slice_sizes = array<i64: 1, 3>\n"
         "  } : (tensor<4x3xf32>, tensor<0x1xi32>) -> tensor<0x3xf32>\n"
         "  check.expect_eq_const %r, dense<> : tensor<0x3xf32>\n"
         "  func.return\n"
         "}\n");
}

/* dynamic_gather: slice sizes as an i32 operand; a size that disagrees
 * with the result type is a runtime error.  (A format: %s = the sizes,
 * computed rather than a constant, which the verifier would check.) */
static const char *dyn_gather_prog =
    "func.func @main() {\n"
    "  %%i = stablehlo.iota dim = 0 : tensor<20xi32>\n"
    "  %%op = stablehlo.reshape %%i : (tensor<20xi32>) -> tensor<5x4xi32>\n"
    "  %%idx = stablehlo.constant dense<[[-3, 0], [4, 3]]> : tensor<2x2xi32>\n"
    "  %%ss0 = stablehlo.constant dense<[%s]> : tensor<2xi32>\n"
    "  %%ss = stablehlo.maximum %%ss0, %%ss0 : tensor<2xi32>\n"
    "  %%r = \"stablehlo.dynamic_gather\"(%%op, %%idx, %%ss) {\n"
    "    dimension_numbers = #stablehlo.gather<offset_dims = [1, 2], "
    "start_index_map = [0, 1], index_vector_dim = 1>\n"
    "  } : (tensor<5x4xi32>, tensor<2x2xi32>, tensor<2xi32>)"
    " -> tensor<2x2x3xi32>\n"
    "  check.expect_eq_const %%r, dense<[[[0, 1, 2], [4, 5, 6]], "
    "[[13, 14, 15], [17, 18, 19]]]> : tensor<2x2x3xi32>\n"
    "  func.return\n"
    "}\n";

static void test_dynamic_gather(void **state) {
  (void)state;
  char buf[2048];
  snprintf(buf, sizeof buf, dyn_gather_prog, "2, 3");
  RUN_OK(buf);
  snprintf(buf, sizeof buf, dyn_gather_prog, "2, 2");
  RUN_STATUS(buf, SHLO_ERUNTIME);
}

/* ---- scatter ---- */

/* 2x2 windows at starts partly and wholly outside a 4x4 input: elements
 * outside are skipped, those inside are updated (spec: result_index in
 * bounds); [4, 0], [0, -2] and [-2, -2] change nothing. */
static void test_scatter_out_of_bounds(void **state) {
  (void)state;
  RUN_OK("func.func @main() {\n"
         "  %i = stablehlo.iota dim = 0 : tensor<16xi32>\n"
         "  %in = stablehlo.reshape %i : (tensor<16xi32>) -> tensor<4x4xi32>\n"
         "  %idx = stablehlo.constant dense<[[-1, 0], [3, 3], [1, 1], [4, 0], "
         "[0, -2], [-2, -2]]> : tensor<6x2xi32>\n"
         "  %u = stablehlo.constant dense<[[[100, 101], [102, 103]], "
         "[[200, 201], [202, 203]], [[300, 301], [302, 303]], "
         "[[400, 401], [402, 403]], [[500, 501], [502, 503]], "
         "[[600, 601], [602, 603]]]> : tensor<6x2x2xi32>\n"
         "  %r = \"stablehlo.scatter\"(%in, %idx, %u) ({\n"
         "    ^bb0(%a: tensor<i32>, %b: tensor<i32>):\n"
         "      %s = stablehlo.add %a, %b : tensor<i32>\n"
         "      stablehlo.return %s : tensor<i32>\n"
         "  }) {\n"
         "    scatter_dimension_numbers = #stablehlo.scatter<"
         "update_window_dims = [1, 2], scatter_dims_to_operand_dims = [0, 1], "
         "index_vector_dim = 1>,\n"
         "    indices_are_sorted = false, unique_indices = false\n"
         "  } : (tensor<4x4xi32>, tensor<6x2xi32>, tensor<6x2x2xi32>)"
         " -> tensor<4x4xi32>\n"
         "  check.expect_eq_const %r, dense<[[102, 104, 2, 3], "
         "[4, 305, 307, 7], [8, 311, 313, 11], [12, 13, 14, 215]]>"
         " : tensor<4x4xi32>\n"
         "  check.expect_eq_const %in, dense<[[0, 1, 2, 3], [4, 5, 6, 7], "
         "[8, 9, 10, 11], [12, 13, 14, 15]]> : tensor<4x4xi32>\n"
         "  func.return\n"
         "}\n");
}

/* An operand that dies at the scatter is updated in place (the tensor of
 * zeros a segment sum starts from); one that is also the updates is
 * copied first, so every update reads the rows as they were. */
static void test_scatter_into_a_dying_operand(void **state) {
  (void)state;
  const char *dn =
      "    scatter_dimension_numbers = #stablehlo.scatter<"
      "update_window_dims = [1], inserted_window_dims = [0], "
      "scatter_dims_to_operand_dims = [0], index_vector_dim = 1>\n"
      "  } : (tensor<4x3xf32>, tensor<3x1xi32>, tensor<3x3xf32>)"
      " -> tensor<4x3xf32>\n";
  const char *dn3 =
      "    scatter_dimension_numbers = #stablehlo.scatter<"
      "update_window_dims = [1], inserted_window_dims = [0], "
      "scatter_dims_to_operand_dims = [0], index_vector_dim = 1>\n"
      "  } : (tensor<3x3xf32>, tensor<3x1xi32>, tensor<3x3xf32>)"
      " -> tensor<3x3xf32>\n";
  char text[4096];
  snprintf(text, sizeof text,
           "func.func @main() {\n"
           "  %%z = stablehlo.constant dense<0.0> : tensor<f32>\n"
           "  %%zb = stablehlo.broadcast_in_dim %%z, dims = [] : "
           "(tensor<f32>) -> tensor<4x3xf32>\n"
           "  %%idx = stablehlo.constant dense<[[1], [3], [1]]> : "
           "tensor<3x1xi32>\n"
           "  %%u = stablehlo.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, "
           "6.0], [7.0, 8.0, 9.0]]> : tensor<3x3xf32>\n"
           "  %%r = \"stablehlo.scatter\"(%%zb, %%idx, %%u) ({\n"
           "    ^bb0(%%a: tensor<f32>, %%b: tensor<f32>):\n"
           "      %%s = stablehlo.add %%a, %%b : tensor<f32>\n"
           "      stablehlo.return %%s : tensor<f32>\n"
           "  }) {\n%s"
           "  check.expect_eq_const %%r, dense<[[0.0, 0.0, 0.0], [8.0, 10.0, "
           "12.0], [0.0, 0.0, 0.0], [4.0, 5.0, 6.0]]> : tensor<4x3xf32>\n"
           "  %%w = stablehlo.add %%u, %%u : tensor<3x3xf32>\n"
           "  %%idx2 = stablehlo.constant dense<[[2], [0], [1]]> : "
           "tensor<3x1xi32>\n"
           "  %%r2 = \"stablehlo.scatter\"(%%w, %%idx2, %%w) ({\n"
           "    ^bb0(%%a: tensor<f32>, %%b: tensor<f32>):\n"
           "      %%s = stablehlo.add %%a, %%b : tensor<f32>\n"
           "      stablehlo.return %%s : tensor<f32>\n"
           "  }) {\n%s"
           "  check.expect_eq_const %%r2, dense<[[10.0, 14.0, 18.0], [22.0, "
           "26.0, 30.0], [16.0, 20.0, 24.0]]> : tensor<3x3xf32>\n"
           "  func.return\n"
           "}\n",
           dn, dn3);
  RUN_OK(text);
}

/* Batching dims, index_vector_dim in the middle, a window dim between
 * the update scatter dims. */
static void test_scatter_batching(void **state) {
  (void)state;
  RUN_OK("func.func @main() {\n"
         "  %i = stablehlo.iota dim = 0 : tensor<24xf32>\n"
         "  %in = stablehlo.reshape %i : (tensor<24xf32>) -> tensor<2x3x4xf32>\n"
         "  %idx = stablehlo.constant dense<[[[0, 1, 3]], [[2, 2, 0]]]>"
         " : tensor<2x1x3xi32>\n"
         "  %j = stablehlo.iota dim = 0 : tensor<18xf32>\n"
         "  %one = stablehlo.constant dense<1.0> : tensor<18xf32>\n"
         "  %j1 = stablehlo.add %j, %one : tensor<18xf32>\n"
         "  %u = stablehlo.reshape %j1 : (tensor<18xf32>) -> tensor<2x3x3xf32>\n"
         "  %r = \"stablehlo.scatter\"(%in, %idx, %u) ({\n"
         "    ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
         "      %s = stablehlo.add %a, %b : tensor<f32>\n"
         "      stablehlo.return %s : tensor<f32>\n"
         "  }) {\n"
         "    scatter_dimension_numbers = #stablehlo.scatter<"
         "update_window_dims = [1], inserted_window_dims = [2], "
         "input_batching_dims = [0], scatter_indices_batching_dims = [0], "
         "scatter_dims_to_operand_dims = [2], index_vector_dim = 1>\n"
         "  } : (tensor<2x3x4xf32>, tensor<2x1x3xi32>, tensor<2x3x3xf32>)"
         " -> tensor<2x3x4xf32>\n"
         "  check.expect_eq_const %r, dense<[[[1.0, 3.0, 2.0, 6.0], "
         "[8.0, 10.0, 6.0, 13.0], [15.0, 17.0, 10.0, 20.0]], "
         "[[24.0, 13.0, 35.0, 15.0], [31.0, 17.0, 45.0, 19.0], "
         "[38.0, 21.0, 55.0, 23.0]]]> : tensor<2x3x4xf32>\n"
         "  func.return\n"
         "}\n");
}

/* A body that is not one known op (a * c + u, with c captured from the
 * enclosing function) runs through the compiled region; duplicates
 * apply in order. */
static void test_scatter_region_body(void **state) {
  (void)state;
  RUN_OK("func.func @main() {\n"
         "  %in = stablehlo.constant dense<[[1, 2], [3, 4], [5, 6]]>"
         " : tensor<3x2xi64>\n"
         "  %idx = stablehlo.constant dense<[[1], [1], [0]]> : tensor<3x1xi32>\n"
         "  %u = stablehlo.constant dense<[[10, 20], [30, 40], [50, 60]]>"
         " : tensor<3x2xi64>\n"
         "  %c = stablehlo.constant dense<2> : tensor<i64>\n"
         "  %r = \"stablehlo.scatter\"(%in, %idx, %u) ({\n"
         "    ^bb0(%a: tensor<i64>, %b: tensor<i64>):\n"
         "      %m = stablehlo.multiply %a, %c : tensor<i64>\n"
         "      %s = stablehlo.add %m, %b : tensor<i64>\n"
         "      stablehlo.return %s : tensor<i64>\n"
         "  }) {\n"
         "    scatter_dimension_numbers = #stablehlo.scatter<"
         "update_window_dims = [1], inserted_window_dims = [0], "
         "scatter_dims_to_operand_dims = [0], index_vector_dim = 1>\n"
         "  } : (tensor<3x2xi64>, tensor<3x1xi32>, tensor<3x2xi64>)"
         " -> tensor<3x2xi64>\n"
         "  check.expect_eq_const %r, dense<[[52, 64], [62, 96], [5, 6]]>"
         " : tensor<3x2xi64>\n"
         "  func.return\n"
         "}\n");
}

/* The native add and a region body computing the same (a - (-u)) agree
 * on a larger scatter with many duplicate and out-of-range indices. */
static void test_scatter_native_matches_region(void **state) {
  (void)state;
  RUN_OK("func.func @main() {\n"
         "  %i = stablehlo.iota dim = 0 : tensor<64xi32>\n"
         "  %in = stablehlo.reshape %i : (tensor<64xi32>) -> tensor<8x8xi32>\n"
         "  %k = stablehlo.iota dim = 0 : tensor<40xi32>\n"
         "  %seven = stablehlo.constant dense<7> : tensor<40xi32>\n"
         "  %k7 = stablehlo.multiply %k, %seven : tensor<40xi32>\n"
         "  %eleven = stablehlo.constant dense<11> : tensor<40xi32>\n"
         "  %km = stablehlo.remainder %k7, %eleven : tensor<40xi32>\n"
         "  %three = stablehlo.constant dense<3> : tensor<40xi32>\n"
         "  %ks = stablehlo.subtract %km, %three : tensor<40xi32>\n"
         "  %idx = stablehlo.reshape %ks : (tensor<40xi32>) -> tensor<20x2xi32>\n"
         "  %j = stablehlo.iota dim = 0 : tensor<180xi32>\n"
         "  %u = stablehlo.reshape %j : (tensor<180xi32>) -> tensor<20x3x3xi32>\n"
         "  %r1 = \"stablehlo.scatter\"(%in, %idx, %u) ({\n"
         "    ^bb0(%a: tensor<i32>, %b: tensor<i32>):\n"
         "      %s = stablehlo.add %b, %a : tensor<i32>\n"
         "      stablehlo.return %s : tensor<i32>\n"
         "  }) {\n"
         "    scatter_dimension_numbers = #stablehlo.scatter<"
         "update_window_dims = [1, 2], scatter_dims_to_operand_dims = [0, 1], "
         "index_vector_dim = 1>\n"
         "  } : (tensor<8x8xi32>, tensor<20x2xi32>, tensor<20x3x3xi32>)"
         " -> tensor<8x8xi32>\n"
         "  %r2 = \"stablehlo.scatter\"(%in, %idx, %u) ({\n"
         "    ^bb0(%a: tensor<i32>, %b: tensor<i32>):\n"
         "      %n = stablehlo.negate %b : tensor<i32>\n"
         "      %s = stablehlo.subtract %a, %n : tensor<i32>\n"
         "      stablehlo.return %s : tensor<i32>\n"
         "  }) {\n"
         "    scatter_dimension_numbers = #stablehlo.scatter<"
         "update_window_dims = [1, 2], scatter_dims_to_operand_dims = [0, 1], "
         "index_vector_dim = 1>\n"
         "  } : (tensor<8x8xi32>, tensor<20x2xi32>, tensor<20x3x3xi32>)"
         " -> tensor<8x8xi32>\n"
         "  check.expect_eq %r1, %r2 : tensor<8x8xi32>\n"
         "  func.return\n"
         "}\n");
}

/* Two inputs of different element types, a body that is not one op. */
static void test_scatter_variadic(void **state) {
  (void)state;
  RUN_OK("func.func @main() {\n"
         "  %a = stablehlo.constant dense<[1, 2, 3]> : tensor<3xi32>\n"
         "  %b = stablehlo.constant dense<[1.5, -2.0, 0.5]> : tensor<3xf32>\n"
         "  %idx = stablehlo.constant dense<[[0], [2], [0]]> : tensor<3x1xi32>\n"
         "  %ua = stablehlo.constant dense<[10, 20, 30]> : tensor<3xi32>\n"
         "  %ub = stablehlo.constant dense<[1.0, -3.0, 7.0]> : tensor<3xf32>\n"
         "  %r:2 = \"stablehlo.scatter\"(%a, %b, %idx, %ua, %ub) ({\n"
         "    ^bb0(%x: tensor<i32>, %y: tensor<f32>, %p: tensor<i32>,"
         " %q: tensor<f32>):\n"
         "      %s = stablehlo.add %x, %p : tensor<i32>\n"
         "      %m = stablehlo.maximum %y, %q : tensor<f32>\n"
         "      stablehlo.return %s, %m : tensor<i32>, tensor<f32>\n"
         "  }) {\n"
         "    scatter_dimension_numbers = #stablehlo.scatter<"
         "inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], "
         "index_vector_dim = 1>\n"
         "  } : (tensor<3xi32>, tensor<3xf32>, tensor<3x1xi32>, tensor<3xi32>,"
         " tensor<3xf32>) -> (tensor<3xi32>, tensor<3xf32>)\n"
         "  check.expect_eq_const %r#0, dense<[41, 2, 23]> : tensor<3xi32>\n"
         "  check.expect_eq_const %r#1, dense<[7.0, -2.0, 0.5]> : tensor<3xf32>\n"
         "  %t:2 = \"stablehlo.scatter\"(%a, %b, %idx, %ua, %ub) ({\n"
         "    ^bb0(%x: tensor<i32>, %y: tensor<f32>, %p: tensor<i32>,"
         " %q: tensor<f32>):\n"
         "      stablehlo.return %p, %q : tensor<i32>, tensor<f32>\n"
         "  }) {\n"
         "    scatter_dimension_numbers = #stablehlo.scatter<"
         "inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], "
         "index_vector_dim = 1>\n"
         "  } : (tensor<3xi32>, tensor<3xf32>, tensor<3x1xi32>, tensor<3xi32>,"
         " tensor<3xf32>) -> (tensor<3xi32>, tensor<3xf32>)\n"
         "  check.expect_eq_const %t#0, dense<[30, 2, 20]> : tensor<3xi32>\n"
         "  check.expect_eq_const %t#1, dense<[7.0, -2.0, -3.0]>"
         " : tensor<3xf32>\n"
         "  func.return\n"
         "}\n");
}

/* One 1-D scatter of four updates to four distinct places, body `op`, on
 * element type `ty`; checks the result against `expect`. */
static shlo_status scatter1d(const char *ty, const char *op, const char *in,
                             const char *upd, const char *expect) {
  char buf[4096];
  snprintf(buf, sizeof buf,
           "func.func @main() {\n"
           "  %%in = stablehlo.constant dense<%s> : tensor<4x%s>\n"
           "  %%idx = stablehlo.constant dense<[[0], [1], [2], [3]]>"
           " : tensor<4x1xui16>\n"
           "  %%u = stablehlo.constant dense<%s> : tensor<4x%s>\n"
           "  %%r = \"stablehlo.scatter\"(%%in, %%idx, %%u) ({\n"
           "    ^bb0(%%a: tensor<%s>, %%b: tensor<%s>):\n"
           "      %%s = %s %%a, %%b : tensor<%s>\n"
           "      stablehlo.return %%s : tensor<%s>\n"
           "  }) {\n"
           "    scatter_dimension_numbers = #stablehlo.scatter<"
           "inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], "
           "index_vector_dim = 1>\n"
           "  } : (tensor<4x%s>, tensor<4x1xui16>, tensor<4x%s>)"
           " -> tensor<4x%s>\n"
           "  check.expect_eq_const %%r, dense<%s> : tensor<4x%s>\n"
           "  func.return\n"
           "}\n",
           in, ty, upd, ty, ty, ty, op, ty, ty, ty, ty, ty, expect, ty);
  return harness_run(buf, false);
}

#define S1D(ty, op, in, upd, expect) \
  assert_int_equal(scatter1d(ty, op, in, upd, expect), SHLO_OK)

/* Native update computations: integers wrap at their width (sub-byte
 * types included), i1 add is or, narrow floats round once, maximum
 * propagates NaN, complex multiply. */
static void test_scatter_native_types(void **state) {
  (void)state;
  S1D("i4", "stablehlo.add", "[7, -8, 1, 0]", "[1, -1, 5, 0]",
      "[-8, 7, 6, 0]");
  S1D("ui2", "stablehlo.multiply", "[3, 2, 1, 0]", "[3, 2, 3, 1]",
      "[1, 0, 3, 0]");
  S1D("ui8", "stablehlo.multiply", "[200, 3, 255, 16]", "[2, 5, 255, 16]",
      "[144, 15, 1, 0]");
  S1D("i8", "stablehlo.add", "[127, -128, 5, 0]", "[1, -1, -6, 0]",
      "[-128, 127, -1, 0]");
  S1D("i16", "stablehlo.or", "[1, 2, 4, -32768]", "[2, 2, 8, 1]",
      "[3, 2, 12, -32767]");
  S1D("ui16", "stablehlo.and", "[65535, 12, 10, 0]", "[255, 10, 5, 9]",
      "[255, 8, 0, 0]");
  S1D("i32", "stablehlo.minimum", "[5, -5, 0, 7]", "[3, -9, 0, 8]",
      "[3, -9, 0, 7]");
  S1D("ui32", "stablehlo.maximum", "[4294967295, 1, 0, 7]", "[0, 2, 0, 8]",
      "[4294967295, 2, 0, 8]");
  S1D("i64", "stablehlo.xor", "[5, -1, 0, 6]", "[3, 1, 0, 6]",
      "[6, -2, 0, 0]");
  S1D("ui64", "stablehlo.add", "[18446744073709551615, 1, 0, 2]",
      "[1, 2, 0, 3]", "[0, 3, 0, 5]");
  S1D("i1", "stablehlo.add", "[false, true, false, true]",
      "[false, false, true, true]", "[false, true, true, true]");
  S1D("i1", "stablehlo.multiply", "[false, true, false, true]",
      "[false, false, true, true]", "[false, false, false, true]");
  S1D("bf16", "stablehlo.add", "[1.0, 1.0, -2.0, 3.0]",
      "[0.0078125, 0.00390625, 0.5, 0.0]", "[1.0078125, 1.0, -1.5, 3.0]");
  S1D("f16", "stablehlo.multiply", "[3.0, 65504.0, -0.5, 2.0]",
      "[0.5, 2.0, 0.5, 0.0]", "[1.5, 0x7C00, -0.25, 0.0]");
  S1D("f8E4M3FN", "stablehlo.add", "[1.0, 1.0, 2.0, -1.0]",
      "[0.125, 0.0625, 0.5, 1.0]", "[1.125, 1.0, 2.5, 0.0]");
  S1D("f32", "stablehlo.maximum", "[1.0, 0x7FC00000, -1.0, 0.0]",
      "[2.0, 1.0, 0x7FC00000, -0.0]", "[2.0, 0x7FC00000, 0x7FC00000, 0.0]");
  S1D("f64", "stablehlo.minimum", "[1.0, -3.5, 0.0, 9.0]",
      "[2.0, -4.5, -0.0, 9.0]", "[1.0, -4.5, -0.0, 9.0]");
  S1D("complex<f32>", "stablehlo.multiply",
      "[(1.0, 2.0), (0.0, 1.0), (2.0, 0.0), (1.0, 1.0)]",
      "[(3.0, 4.0), (0.0, 1.0), (0.5, 0.0), (1.0, -1.0)]",
      "[(-5.0, 10.0), (-1.0, 0.0), (1.0, 0.0), (2.0, 0.0)]");
  S1D("complex<f64>", "stablehlo.add", "[(1.0, 2.0), (0.0, 1.0), "
      "(2.0, 0.0), (1.0, 1.0)]", "[(3.0, 4.0), (0.0, 1.0), (0.5, 0.0), "
      "(1.0, -1.0)]", "[(4.0, 6.0), (0.0, 2.0), (2.5, 0.0), (2.0, 0.0)]");
  /* Not native (subtract): through the region. */
  S1D("f32", "stablehlo.subtract", "[1.0, 2.0, 3.0, 4.0]",
      "[0.5, 0.5, 0.5, 0.5]", "[0.5, 1.5, 2.5, 3.5]");
}

/* Replace body with trailing windows: rows copied whole; later duplicates
 * win. */
static void test_scatter_replace_rows(void **state) {
  (void)state;
  RUN_OK("func.func @main() {\n"
         "  %in = stablehlo.constant dense<0.0> : tensor<4x3xf64>\n"
         "  %idx = stablehlo.constant dense<[3, 1, 3]> : tensor<3xi64>\n"
         "  %u = stablehlo.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], "
         "[7.0, 8.0, 9.0]]> : tensor<3x3xf64>\n"
         "  %r = \"stablehlo.scatter\"(%in, %idx, %u) ({\n"
         "    ^bb0(%a: tensor<f64>, %b: tensor<f64>):\n"
         "      stablehlo.return %b : tensor<f64>\n"
         "  }) {\n"
         "    scatter_dimension_numbers = #stablehlo.scatter<"
         "update_window_dims = [1], inserted_window_dims = [0], "
         "scatter_dims_to_operand_dims = [0], index_vector_dim = 1>\n"
         "  } : (tensor<4x3xf64>, tensor<3xi64>, tensor<3x3xf64>)"
         " -> tensor<4x3xf64>\n"
         "  check.expect_eq_const %r, dense<[[0.0, 0.0, 0.0], "
         "[4.0, 5.0, 6.0], [0.0, 0.0, 0.0], [7.0, 8.0, 9.0]]>"
         " : tensor<4x3xf64>\n"
         "  func.return\n"
         "}\n");
}

static void test_scatter_empty_indices(void **state) {
  (void)state;
  RUN_OK("func.func @main() {\n"
         "  %in = stablehlo.constant dense<[[1.0, 2.0], [3.0, 4.0], "
         "[5.0, 6.0]]> : tensor<3x2xf32>\n"
         "  %idx = stablehlo.constant dense<> : tensor<0x1xi32>\n"
         "  %u = stablehlo.constant dense<> : tensor<0x2xf32>\n"
         "  %r = \"stablehlo.scatter\"(%in, %idx, %u) ({\n"
         "    ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
         "      %s = stablehlo.add %a, %b : tensor<f32>\n"
         "      stablehlo.return %s : tensor<f32>\n"
         "  }) {\n"
         "    scatter_dimension_numbers = #stablehlo.scatter<"
         "update_window_dims = [1], inserted_window_dims = [0], "
         "scatter_dims_to_operand_dims = [0], index_vector_dim = 1>\n"
         "  } : (tensor<3x2xf32>, tensor<0x1xi32>, tensor<0x2xf32>)"
         " -> tensor<3x2xf32>\n"
         "  check.expect_eq_const %r, dense<[[1.0, 2.0], [3.0, 4.0], "
         "[5.0, 6.0]]> : tensor<3x2xf32>\n"
         "  func.return\n"
         "}\n");
}

/* ---- negative ---- */

static void test_wrong_expectation(void **state) {
  (void)state;
  RUN_STATUS("func.func @main() {\n"
             "  %op = stablehlo.constant dense<[10, 20, 30]> : tensor<3xi32>\n"
             "  %idx = stablehlo.constant dense<[[2], [0]]> : tensor<2x1xi32>\n"
             "  %r = \"stablehlo.gather\"(%op, %idx) {\n"
             "    dimension_numbers = #stablehlo.gather<"
             "collapsed_slice_dims = [0], start_index_map = [0], "
             "index_vector_dim = 1>,\n"
             "    slice_sizes = array<i64: 1>\n"
             "  } : (tensor<3xi32>, tensor<2x1xi32>) -> tensor<2xi32>\n"
             "  check.expect_eq_const %r, dense<[30, 20]> : tensor<2xi32>\n"
             "  func.return\n"
             "}\n",
             SHLO_ECHECK);
}

/* Bad dimension numbers are refused at compile time, not run. */
static void test_bad_dimension_numbers(void **state) {
  (void)state;
  RUN_STATUS("func.func @main() {\n"
             "  %op = stablehlo.constant dense<[10, 20, 30]> : tensor<3xi32>\n"
             "  %idx = stablehlo.constant dense<[[2], [0]]> : tensor<2x1xi32>\n"
             "  %r = \"stablehlo.gather\"(%op, %idx) {\n"
             "    dimension_numbers = #stablehlo.gather<"
             "collapsed_slice_dims = [0], start_index_map = [3], "
             "index_vector_dim = 1>,\n"
             "    slice_sizes = array<i64: 1>\n"
             "  } : (tensor<3xi32>, tensor<2x1xi32>) -> tensor<2xi32>\n"
             "  func.return\n"
             "}\n",
             SHLO_EVERIFY);
}

/* Point updates (every operand dim inserted) whose index is exactly the
 * dimension's size change nothing: a start one past the end is out of
 * bounds like any other (here it would land on the next row). */
static void test_scatter_point_just_past_the_end(void **state) {
  (void)state;
  RUN_OK("func.func @main() {\n"
         "  %i = stablehlo.iota dim = 0 : tensor<9xi32>\n"
         "  %in = stablehlo.reshape %i : (tensor<9xi32>) -> tensor<3x3xi32>\n"
         "  %idx = stablehlo.constant dense<[[0, 3], [1, 1], [1, 3]]> : "
         "tensor<3x2xi32>\n"
         "  %u = stablehlo.constant dense<[100, 200, 300]> : tensor<3xi32>\n"
         "  %r = \"stablehlo.scatter\"(%in, %idx, %u) ({\n"
         "    ^bb0(%a: tensor<i32>, %b: tensor<i32>):\n"
         "      %s = stablehlo.add %a, %b : tensor<i32>\n"
         "      stablehlo.return %s : tensor<i32>\n"
         "  }) {\n"
         "    scatter_dimension_numbers = #stablehlo.scatter<"
         "inserted_window_dims = [0, 1], scatter_dims_to_operand_dims = "
         "[0, 1], index_vector_dim = 1>,\n"
         "    indices_are_sorted = false, unique_indices = false\n"
         "  } : (tensor<3x3xi32>, tensor<3x2xi32>, tensor<3xi32>)"
         " -> tensor<3x3xi32>\n"
         "  check.expect_eq_const %r, dense<[[0, 1, 2], [3, 204, 5], "
         "[6, 7, 8]]> : tensor<3x3xi32>\n"
         "  func.return\n"
         "}\n");
}

/* ---- large walks (split over the pool, prefetched, row vectors) ---- */

/* A gather of 8192 rows of 64 from a 4096 x 64 operand: large enough to
 * be split over the pool's threads.  The rows are picked in a scrambled
 * order (2731 * k mod 4096) and the expected values come from elementwise
 * ops alone: row r of the operand holds r * 64 + column. */
static void test_gather_large_rows(void **state) {
  (void)state;
  RUN_OK("func.func @main() {\n"
         "  %i = stablehlo.iota dim = 0 : tensor<262144xi32>\n"
         "  %op = stablehlo.reshape %i : (tensor<262144xi32>) -> "
         "tensor<4096x64xi32>\n"
         "  %k = stablehlo.iota dim = 0 : tensor<8192xi32>\n"
         "  %m = stablehlo.constant dense<2731> : tensor<8192xi32>\n"
         "  %n = stablehlo.constant dense<4096> : tensor<8192xi32>\n"
         "  %km = stablehlo.multiply %k, %m : tensor<8192xi32>\n"
         "  %rows = stablehlo.remainder %km, %n : tensor<8192xi32>\n"
         "  %idx = stablehlo.reshape %rows : (tensor<8192xi32>) -> "
         "tensor<8192x1xi32>\n"
         "  %r = \"stablehlo.gather\"(%op, %idx) {\n"
         "    dimension_numbers = #stablehlo.gather<offset_dims = [1], "
         "collapsed_slice_dims = [0], start_index_map = [0], "
         "index_vector_dim = 1>,\n"
         "    slice_sizes = array<i64: 1, 64>, indices_are_sorted = false\n"
         "  } : (tensor<4096x64xi32>, tensor<8192x1xi32>) -> "
         "tensor<8192x64xi32>\n"
         "  %b = stablehlo.broadcast_in_dim %rows, dims = [0] : "
         "(tensor<8192xi32>) -> tensor<8192x64xi32>\n"
         "  %w = stablehlo.constant dense<64> : tensor<8192x64xi32>\n"
         "  %bw = stablehlo.multiply %b, %w : tensor<8192x64xi32>\n"
         "  %col = stablehlo.iota dim = 1 : tensor<8192x64xi32>\n"
         "  %want = stablehlo.add %bw, %col : tensor<8192x64xi32>\n"
         "  check.expect_eq %r, %want : tensor<8192x64xi32>\n"
         "  func.return\n"
         "}\n");
}

/* f32 scatter of whole rows (the vector row loops) with duplicate
 * indices: 4096 rows of 37 into 1000 (row k mod 1000), so rows below 96
 * are hit five times and the rest four.  add sums exact integers; max
 * sees a NaN (kept), -0 against +0 (+0) and -inf (never wins).  Expected
 * values from elementwise ops on the row number alone. */
static void test_scatter_rows_with_duplicates(void **state) {
  (void)state;
  RUN_OK("func.func @main() {\n"
         "  %k = stablehlo.iota dim = 0 : tensor<4096xi32>\n"
         "  %n = stablehlo.constant dense<1000> : tensor<4096xi32>\n"
         "  %rows = stablehlo.remainder %k, %n : tensor<4096xi32>\n"
         "  %idx = stablehlo.reshape %rows : (tensor<4096xi32>) -> "
         "tensor<4096x1xi32>\n"
         "  %ci = stablehlo.iota dim = 1 : tensor<4096x37xi32>\n"
         "  %u = stablehlo.convert %ci : (tensor<4096x37xi32>) -> "
         "tensor<4096x37xf32>\n"
         "  %z = stablehlo.constant dense<0.0> : tensor<1000x37xf32>\n"
         "  %s = \"stablehlo.scatter\"(%z, %idx, %u) ({\n"
         "    ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
         "      %t = stablehlo.add %a, %b : tensor<f32>\n"
         "      stablehlo.return %t : tensor<f32>\n"
         "  }) {scatter_dimension_numbers = #stablehlo.scatter<"
         "update_window_dims = [1], inserted_window_dims = [0], "
         "scatter_dims_to_operand_dims = [0], index_vector_dim = 1>} : "
         "(tensor<1000x37xf32>, tensor<4096x1xi32>, tensor<4096x37xf32>) -> "
         "tensor<1000x37xf32>\n"
         "  %r = stablehlo.iota dim = 0 : tensor<1000x37xi32>\n"
         "  %c = stablehlo.iota dim = 1 : tensor<1000x37xi32>\n"
         "  %lim = stablehlo.constant dense<96> : tensor<1000x37xi32>\n"
         "  %low = stablehlo.compare LT, %r, %lim : (tensor<1000x37xi32>, "
         "tensor<1000x37xi32>) -> tensor<1000x37xi1>\n"
         "  %five = stablehlo.constant dense<5> : tensor<1000x37xi32>\n"
         "  %four = stablehlo.constant dense<4> : tensor<1000x37xi32>\n"
         "  %hits = stablehlo.select %low, %five, %four : "
         "tensor<1000x37xi1>, tensor<1000x37xi32>\n"
         "  %sum = stablehlo.multiply %hits, %c : tensor<1000x37xi32>\n"
         "  %want = stablehlo.convert %sum : (tensor<1000x37xi32>) -> "
         "tensor<1000x37xf32>\n"
         "  check.expect_eq %s, %want : tensor<1000x37xf32>\n"
         "  %ops = stablehlo.constant dense<[[0x7FC00000, -0.0, 1.0, -1.0, "
         "0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, "
         "0.0, 0.0]]> : tensor<1x19xf32>\n"
         "  %upd = stablehlo.constant dense<[[[1.0, 0.0, 0xFF800000, 2.0, "
         "-0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, "
         "12.0, 13.0, 14.0]], [[2.0, 0.0, 5.0, -3.0, 0.0, 0.0, 0.0, 0.0, "
         "0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 15.0]]]> : "
         "tensor<2x1x19xf32>\n"
         "  %zi = stablehlo.constant dense<0> : tensor<2x1xi32>\n"
         "  %mx = \"stablehlo.scatter\"(%ops, %zi, %upd) ({\n"
         "    ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
         "      %t = stablehlo.maximum %a, %b : tensor<f32>\n"
         "      stablehlo.return %t : tensor<f32>\n"
         "  }) {scatter_dimension_numbers = #stablehlo.scatter<"
         "update_window_dims = [1, 2], inserted_window_dims = [], "
         "scatter_dims_to_operand_dims = [0], index_vector_dim = 1>} : "
         "(tensor<1x19xf32>, tensor<2x1xi32>, tensor<2x1x19xf32>) -> "
         "tensor<1x19xf32>\n"
         "  check.expect_eq_const %mx, dense<[[0x7FC00000, 0.0, 5.0, 2.0, "
         "0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, "
         "12.0, 13.0, 15.0]]> : tensor<1x19xf32>\n"
         "  func.return\n"
         "}\n");
}

/* A scatter of rows split over the pool by the rows it lands in
 * (indexing.c, scatter_all): 8192 positions of 16 floats into 1000 rows,
 * picked as (2731 k mod 1100) - 50, so that rows repeat up to nine times
 * and some positions land below 0 or past the end (skipped).  The
 * updates are sin(k + c) * e^(3 (k mod 7)): magnitudes 1 to 1e8 whose
 * sums depend on their order, and with the update itself as the body
 * the last position wins.  Pools of 2 and 3 threads (split) give one
 * thread's bytes (in position order, one pass). */
static void scatter_program(char *buf, size_t cap, const char *body) {
  snprintf(buf, cap,
      "func.func @main() -> tensor<1000x16xf32> {\n"
      "  %%k = stablehlo.iota dim = 0 : tensor<8192xi32>\n"
      "  %%m = stablehlo.constant dense<2731> : tensor<8192xi32>\n"
      "  %%n = stablehlo.constant dense<1100> : tensor<8192xi32>\n"
      "  %%o = stablehlo.constant dense<50> : tensor<8192xi32>\n"
      "  %%km = stablehlo.multiply %%k, %%m : tensor<8192xi32>\n"
      "  %%kr = stablehlo.remainder %%km, %%n : tensor<8192xi32>\n"
      "  %%rows = stablehlo.subtract %%kr, %%o : tensor<8192xi32>\n"
      "  %%idx = stablehlo.reshape %%rows : (tensor<8192xi32>) -> "
      "tensor<8192x1xi32>\n"
      "  %%r = stablehlo.iota dim = 0 : tensor<8192x16xf32>\n"
      "  %%c = stablehlo.iota dim = 1 : tensor<8192x16xf32>\n"
      "  %%rc = stablehlo.add %%r, %%c : tensor<8192x16xf32>\n"
      "  %%sn = stablehlo.sine %%rc : tensor<8192x16xf32>\n"
      "  %%ki = stablehlo.iota dim = 0 : tensor<8192x16xi32>\n"
      "  %%sv = stablehlo.constant dense<7> : tensor<8192x16xi32>\n"
      "  %%k7 = stablehlo.remainder %%ki, %%sv : tensor<8192x16xi32>\n"
      "  %%kf = stablehlo.convert %%k7 : (tensor<8192x16xi32>) -> "
      "tensor<8192x16xf32>\n"
      "  %%th = stablehlo.constant dense<3.0> : tensor<8192x16xf32>\n"
      "  %%ex = stablehlo.multiply %%kf, %%th : tensor<8192x16xf32>\n"
      "  %%mg = stablehlo.exponential %%ex : tensor<8192x16xf32>\n"
      "  %%u = stablehlo.multiply %%sn, %%mg : tensor<8192x16xf32>\n"
      "  %%z = stablehlo.constant dense<0.5> : tensor<1000x16xf32>\n"
      "  %%s = \"stablehlo.scatter\"(%%z, %%idx, %%u) ({\n"
      "    ^bb0(%%a: tensor<f32>, %%b: tensor<f32>):\n"
      "%s"
      "  }) {scatter_dimension_numbers = #stablehlo.scatter<"
      "update_window_dims = [1], inserted_window_dims = [0], "
      "scatter_dims_to_operand_dims = [0], index_vector_dim = 1>} : "
      "(tensor<1000x16xf32>, tensor<8192x1xi32>, tensor<8192x16xf32>) -> "
      "tensor<1000x16xf32>\n"
      "  func.return %%s : tensor<1000x16xf32>\n"
      "}\n",
      body);
}

static void test_scatter_split_keeps_position_order(void **state) {
  (void)state;
  char text[4096];
  scatter_program(text, sizeof text,
                  "      %t = stablehlo.add %a, %b : tensor<f32>\n"
                  "      stablehlo.return %t : tensor<f32>\n");
  harness_same_on_pools(text);
  scatter_program(text, sizeof text, "      stablehlo.return %b : tensor<f32>\n");
  harness_same_on_pools(text);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_gather_clamp),
      cmocka_unit_test(test_scatter_into_a_dying_operand),
      cmocka_unit_test(test_gather_ivd_middle),
      cmocka_unit_test(test_gather_batching_implicit),
      cmocka_unit_test(test_gather_elem_sizes),
      cmocka_unit_test(test_gather_empty_indices),
      cmocka_unit_test(test_dynamic_gather),
      cmocka_unit_test(test_scatter_out_of_bounds),
      cmocka_unit_test(test_scatter_point_just_past_the_end),
      cmocka_unit_test(test_scatter_batching),
      cmocka_unit_test(test_scatter_region_body),
      cmocka_unit_test(test_scatter_native_matches_region),
      cmocka_unit_test(test_scatter_variadic),
      cmocka_unit_test(test_scatter_native_types),
      cmocka_unit_test(test_scatter_replace_rows),
      cmocka_unit_test(test_scatter_empty_indices),
      cmocka_unit_test(test_wrong_expectation),
      cmocka_unit_test(test_bad_dimension_numbers),
      cmocka_unit_test(test_gather_large_rows),
      cmocka_unit_test(test_scatter_rows_with_duplicates),
      cmocka_unit_test(test_scatter_split_keeps_position_order),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
