/* SPDX-License-Identifier: Apache-2.0 */
/* Every op of StableHLO's and CHLO's op definitions runs.
 *
 * The table names each op that stablehlo/dialect/StablehloOps.td and
 * ChloOps.td of openxla/stablehlo declare (the stored versions at commits
 * 0016ba1d and 418d7b72 of StablehloOps.td, 05fa4348 and 9530f107 of
 * ChloOps.td; the revision pinned in ../shared/conformance/SOURCE_REVISION
 * was not available) and the ops the pinned revision has besides (its
 * op list shows in the corpus's vhlo/stablehlo_legalize_to_vhlo.1_20_0
 * .mlir: atan, tan, composite, collective_broadcast, async_start,
 * async_done ...), with one small
 * program each whose check ops
 * state results worked out by hand.  CHLO's broadcasting ops have rows
 * with and without broadcast_dimensions; their expected values are
 * numpy's broadcasting (trailing alignment) or the explicit mapping.  A few
 * rows expect a refusal (from the compiler or the run): the helpers that
 * no StableHLO program can run, results whose static type does not hold
 * what the op computes,
 * and broadcasts that do not fit.  The grid ops whose single-process run
 * needs feeds or peers (infeed, outfeed, send, recv) are parsed, verified
 * and compiled here; test_grid runs them.
 *
 * A simple row gives the op, its generic attributes, operand literals and
 * the expected result; test_every_op builds
 *   %a0 = stablehlo.constant <lit0> ...
 *   %r = "<op>"(%a0, ...) {<attrs>} : (<types>) -> <result type>
 *   check.expect_(almost_)eq_const %r, <expected>
 * A full row gives the program text itself. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ops/ops.h"
#include "shlo/engine.h"

typedef enum { RUN, COMPILE, REFUSE } want;

typedef struct row {
  const char *op;
  want w;
  const char *attrs;     /* simple rows: generic attributes, or "" */
  const char *lit[3];    /* operand literals `dense<...> : tensor<...>` */
  const char *expect;    /* expected result literal; NULL: full program */
  bool almost;           /* compare with check.expect_almost_eq_const */
  const char *program;   /* full rows */
  const char *err;       /* REFUSE: a piece of the error */
} row;

#define S(op, attrs, a, b, c, exp) {op, RUN, attrs, {a, b, c}, exp, false, 0, 0}
#define A(op, attrs, a, b, c, exp) {op, RUN, attrs, {a, b, c}, exp, true, 0, 0}
#define F(op, text) {op, RUN, 0, {0, 0, 0}, 0, false, text, 0}
#define C(op, text) {op, COMPILE, 0, {0, 0, 0}, 0, false, text, 0}
#define X(op, text, err) {op, REFUSE, 0, {0, 0, 0}, 0, false, text, err}
#define P(...) "func.func @main() {\n" __VA_ARGS__ "  func.return\n}\n"

#define F22 "dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>"
#define F23 "dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>"
#define I22 "dense<[[1, 5], [7, 2]]> : tensor<2x2xi32>"
#define Z2 "dense<[0.0, 0.0]> : tensor<2xf32>"
#define ONE2 "dense<[1.0, 1.0]> : tensor<2xf32>"
#define PI2_6 "1.6449340668482264"

/* chlo.minimum_broadcast_shapes of two constant shapes (a: na extents, b: nb)
 * checked against the expected shapes x (nx extents) and y (ny). */
#define MBS2(a, na, b, nb, x, nx, y, ny)                                      \
  P("  %a = stablehlo.constant dense<" a "> : tensor<" na "xindex>\n"         \
    "  %b = stablehlo.constant dense<" b "> : tensor<" nb "xindex>\n"         \
    "  %r:2 = \"chlo.minimum_broadcast_shapes\"(%a, %b) : (tensor<" na       \
    "xindex>, tensor<" nb "xindex>) -> (tensor<" nx "xindex>, tensor<" ny    \
    "xindex>)\n"                                                              \
    "  check.expect_eq_const %r#0, dense<" x "> : tensor<" nx "xindex>\n"     \
    "  check.expect_eq_const %r#1, dense<" y "> : tensor<" ny "xindex>\n")

static const row rows[] = {
    /* ---- StableHLO: elementwise ---- */
    S("stablehlo.abs", "", "dense<[-2, 3]> : tensor<2xi32>", 0, 0,
      "dense<[2, 3]> : tensor<2xi32>"),
    S("stablehlo.add", "", F22, F22, 0,
      "dense<[[2.0, 4.0], [6.0, 8.0]]> : tensor<2x2xf32>"),
    S("stablehlo.and", "", I22, "dense<3> : tensor<2x2xi32>", 0,
      "dense<[[1, 1], [3, 2]]> : tensor<2x2xi32>"),
    A("stablehlo.atan2", "", ONE2, ONE2, 0,
      "dense<[0.78539816, 0.78539816]> : tensor<2xf32>"),
    S("stablehlo.bitcast_convert", "", "dense<[1.0]> : tensor<1xf32>", 0, 0,
      "dense<[1065353216]> : tensor<1xi32>"),
    S("stablehlo.cbrt", "", "dense<[8.0, -27.0]> : tensor<2xf32>", 0, 0,
      "dense<[2.0, -3.0]> : tensor<2xf32>"),
    S("stablehlo.ceil", "", "dense<[1.5, -1.5]> : tensor<2xf32>", 0, 0,
      "dense<[2.0, -1.0]> : tensor<2xf32>"),
    S("stablehlo.clamp", "", "dense<0> : tensor<i32>",
      "dense<[-5, 5, 15]> : tensor<3xi32>", "dense<10> : tensor<i32>",
      "dense<[0, 5, 10]> : tensor<3xi32>"),
    S("stablehlo.count_leading_zeros", "", "dense<[1, 0]> : tensor<2xi32>",
      0, 0, "dense<[31, 32]> : tensor<2xi32>"),
    S("stablehlo.compare",
      "{comparison_direction = #stablehlo<comparison_direction LT>}",
      "dense<[1, 5]> : tensor<2xi32>", "dense<[3, 3]> : tensor<2xi32>", 0,
      "dense<[true, false]> : tensor<2xi1>"),
    S("stablehlo.complex", "", ONE2, "dense<[2.0, 3.0]> : tensor<2xf32>", 0,
      "dense<[(1.0, 2.0), (1.0, 3.0)]> : tensor<2xcomplex<f32>>"),
    S("stablehlo.convert", "", "dense<[1.75, -2.5]> : tensor<2xf32>", 0, 0,
      "dense<[1, -2]> : tensor<2xi32>"),
    S("stablehlo.cosine", "", Z2, 0, 0, "dense<[1.0, 1.0]> : tensor<2xf32>"),
    S("stablehlo.divide", "", "dense<[7, -7]> : tensor<2xi32>",
      "dense<[2, 2]> : tensor<2xi32>", 0, "dense<[3, -3]> : tensor<2xi32>"),
    S("stablehlo.exponential", "", Z2, 0, 0, ONE2),
    S("stablehlo.exponential_minus_one", "", Z2, 0, 0, Z2),
    S("stablehlo.floor", "", "dense<[1.5, -1.5]> : tensor<2xf32>", 0, 0,
      "dense<[1.0, -2.0]> : tensor<2xf32>"),
    S("stablehlo.imag", "", "dense<[(1.0, 2.0)]> : tensor<1xcomplex<f32>>", 0,
      0, "dense<[2.0]> : tensor<1xf32>"),
    S("stablehlo.is_finite", "",
      "dense<[1.0, 0x7F800000, 0x7FC00000]> : tensor<3xf32>", 0, 0,
      "dense<[true, false, false]> : tensor<3xi1>"),
    S("stablehlo.log", "", ONE2, 0, 0, Z2),
    S("stablehlo.log_plus_one", "", Z2, 0, 0, Z2),
    S("stablehlo.logistic", "", Z2, 0, 0, "dense<[0.5, 0.5]> : tensor<2xf32>"),
    S("stablehlo.maximum", "", I22, "dense<4> : tensor<2x2xi32>", 0,
      "dense<[[4, 5], [7, 4]]> : tensor<2x2xi32>"),
    S("stablehlo.minimum", "", I22, "dense<4> : tensor<2x2xi32>", 0,
      "dense<[[1, 4], [4, 2]]> : tensor<2x2xi32>"),
    S("stablehlo.multiply", "", F22, F22, 0,
      "dense<[[1.0, 4.0], [9.0, 16.0]]> : tensor<2x2xf32>"),
    S("stablehlo.negate", "", "dense<[1, -2]> : tensor<2xi32>", 0, 0,
      "dense<[-1, 2]> : tensor<2xi32>"),
    S("stablehlo.not", "", "dense<[true, false]> : tensor<2xi1>", 0, 0,
      "dense<[false, true]> : tensor<2xi1>"),
    S("stablehlo.or", "", "dense<[1, 2]> : tensor<2xi32>",
      "dense<[4, 2]> : tensor<2xi32>", 0, "dense<[5, 2]> : tensor<2xi32>"),
    S("stablehlo.popcnt", "", "dense<[7, 0]> : tensor<2xi32>", 0, 0,
      "dense<[3, 0]> : tensor<2xi32>"),
    S("stablehlo.power", "", "dense<[2.0, 3.0]> : tensor<2xf32>",
      "dense<[3.0, 2.0]> : tensor<2xf32>", 0,
      "dense<[8.0, 9.0]> : tensor<2xf32>"),
    S("stablehlo.real", "", "dense<[(1.0, 2.0)]> : tensor<1xcomplex<f32>>", 0,
      0, "dense<[1.0]> : tensor<1xf32>"),
    S("stablehlo.reduce_precision", "{exponent_bits = 5 : i32, "
      "mantissa_bits = 2 : i32}", "dense<[1.1, 1.25]> : tensor<2xf32>", 0, 0,
      "dense<[1.0, 1.25]> : tensor<2xf32>"),
    S("stablehlo.remainder", "", "dense<[7, -7]> : tensor<2xi32>",
      "dense<[3, 3]> : tensor<2xi32>", 0, "dense<[1, -1]> : tensor<2xi32>"),
    S("stablehlo.round_nearest_afz", "", "dense<[2.5, -0.5]> : tensor<2xf32>",
      0, 0, "dense<[3.0, -1.0]> : tensor<2xf32>"),
    S("stablehlo.round_nearest_even", "",
      "dense<[2.5, -0.5]> : tensor<2xf32>", 0, 0,
      "dense<[2.0, -0.0]> : tensor<2xf32>"),
    S("stablehlo.rsqrt", "", "dense<[4.0, 0.25]> : tensor<2xf32>", 0, 0,
      "dense<[0.5, 2.0]> : tensor<2xf32>"),
    S("stablehlo.select", "", "dense<[true, false]> : tensor<2xi1>", ONE2, Z2,
      "dense<[1.0, 0.0]> : tensor<2xf32>"),
    S("stablehlo.shift_left", "", "dense<[1, 3]> : tensor<2xi32>",
      "dense<[4, 1]> : tensor<2xi32>", 0, "dense<[16, 6]> : tensor<2xi32>"),
    S("stablehlo.shift_right_arithmetic", "", "dense<[-8, 8]> : tensor<2xi32>",
      "dense<[1, 2]> : tensor<2xi32>", 0, "dense<[-4, 2]> : tensor<2xi32>"),
    S("stablehlo.shift_right_logical", "", "dense<[-8, 8]> : tensor<2xi32>",
      "dense<[28, 2]> : tensor<2xi32>", 0, "dense<[15, 2]> : tensor<2xi32>"),
    S("stablehlo.sign", "", "dense<[-3.0, 0.0, 2.0]> : tensor<3xf32>", 0, 0,
      "dense<[-1.0, 0.0, 1.0]> : tensor<3xf32>"),
    S("stablehlo.sine", "", Z2, 0, 0, Z2),
    S("stablehlo.sqrt", "", "dense<[4.0, 9.0]> : tensor<2xf32>", 0, 0,
      "dense<[2.0, 3.0]> : tensor<2xf32>"),
    S("stablehlo.subtract", "", F22, "dense<1.0> : tensor<2x2xf32>", 0,
      "dense<[[0.0, 1.0], [2.0, 3.0]]> : tensor<2x2xf32>"),
    S("stablehlo.tan", "", Z2, 0, 0, Z2),
    A("stablehlo.atan", "", "dense<[1.0, -1.0]> : tensor<2xf32>", 0, 0,
      "dense<[0.78539816, -0.78539816]> : tensor<2xf32>"),
    S("stablehlo.tanh", "", Z2, 0, 0, Z2),
    S("stablehlo.xor", "", "dense<[true, true]> : tensor<2xi1>",
      "dense<[true, false]> : tensor<2xi1>", 0,
      "dense<[false, true]> : tensor<2xi1>"),
    /* ---- StableHLO: shapes and data movement ---- */
    S("stablehlo.broadcast", "{broadcast_sizes = array<i64: 2>}",
      "dense<[1, 2]> : tensor<2xi32>", 0, 0,
      "dense<[[1, 2], [1, 2]]> : tensor<2x2xi32>"),
    S("stablehlo.broadcast_in_dim", "{broadcast_dimensions = array<i64: 0>}",
      "dense<[1, 2]> : tensor<2xi32>", 0, 0,
      "dense<[[1, 1], [2, 2]]> : tensor<2x2xi32>"),
    S("stablehlo.concatenate", "{dimension = 0 : i64}",
      "dense<[1, 2]> : tensor<2xi32>", "dense<[3]> : tensor<1xi32>", 0,
      "dense<[1, 2, 3]> : tensor<3xi32>"),
    S("stablehlo.dynamic_slice", "{slice_sizes = array<i64: 2>}",
      "dense<[1, 2, 3, 4]> : tensor<4xi32>", "dense<1> : tensor<i64>", 0,
      "dense<[2, 3]> : tensor<2xi32>"),
    S("stablehlo.dynamic_update_slice", "", "dense<[1, 2, 3, 4]> : tensor<4xi32>",
      "dense<[9, 9]> : tensor<2xi32>", "dense<3> : tensor<i64>",
      "dense<[1, 2, 9, 9]> : tensor<4xi32>"),
    S("stablehlo.get_dimension_size", "{dimension = 1 : i64}", F23, 0, 0,
      "dense<3> : tensor<i32>"),
    S("stablehlo.pad", "{edge_padding_low = array<i64: 1>, edge_padding_high "
      "= array<i64: 0>, interior_padding = array<i64: 1>}",
      "dense<[1, 2]> : tensor<2xi32>", "dense<0> : tensor<i32>", 0,
      "dense<[0, 1, 0, 2]> : tensor<4xi32>"),
    S("stablehlo.reshape", "", "dense<[1, 2, 3, 4]> : tensor<4xi32>", 0, 0,
      "dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>"),
    S("stablehlo.reverse", "{dimensions = array<i64: 0>}",
      "dense<[1, 2, 3]> : tensor<3xi32>", 0, 0,
      "dense<[3, 2, 1]> : tensor<3xi32>"),
    S("stablehlo.slice", "{start_indices = array<i64: 1>, limit_indices = "
      "array<i64: 4>, strides = array<i64: 2>}",
      "dense<[0, 1, 2, 3]> : tensor<4xi32>", 0, 0,
      "dense<[1, 3]> : tensor<2xi32>"),
    S("stablehlo.transpose", "{permutation = array<i64: 1, 0>}", F23, 0, 0,
      "dense<[[1.0, 4.0], [2.0, 5.0], [3.0, 6.0]]> : tensor<3x2xf32>"),
    S("stablehlo.torch_index_select", "{dim = 1 : i64, batch_dims = 0 : i64}",
      F23, "dense<[2, 0]> : tensor<2xi32>", 0,
      "dense<[[3.0, 1.0], [6.0, 4.0]]> : tensor<2x2xf32>"),
    /* batch_dims = 1: row b picks with its own indices */
    S("stablehlo.torch_index_select", "{dim = 1 : i64, batch_dims = 1 : i64}",
      F23, "dense<[[1], [2]]> : tensor<2x1xi32>", 0,
      "dense<[[2.0], [6.0]]> : tensor<2x1xf32>"),
    S("stablehlo.set_dimension_size", "{dimension = 0 : i64}",
      "dense<[1, 2]> : tensor<2xi32>", "dense<2> : tensor<i32>", 0,
      "dense<[1, 2]> : tensor<2xi32>"),
    S("stablehlo.dynamic_broadcast_in_dim",
      "{broadcast_dimensions = array<i64: 1>}",
      "dense<[1, 2]> : tensor<2xi32>", "dense<[2, 2]> : tensor<2xi64>", 0,
      "dense<[[1, 2], [1, 2]]> : tensor<2x2xi32>"),
    S("stablehlo.dynamic_iota", "{iota_dimension = 0 : i64}",
      "dense<[3]> : tensor<1xi64>", 0, 0, "dense<[0, 1, 2]> : tensor<3xi32>"),
    F("stablehlo.dynamic_pad",
      P("  %x = stablehlo.constant dense<[1, 2]> : tensor<2xi32>\n"
        "  %z = stablehlo.constant dense<0> : tensor<i32>\n"
        "  %l = stablehlo.constant dense<[1]> : tensor<1xi64>\n"
        "  %h = stablehlo.constant dense<[0]> : tensor<1xi64>\n"
        "  %r = stablehlo.dynamic_pad %x, %z, %l, %h, %l : (tensor<2xi32>, "
        "tensor<i32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> "
        "tensor<4xi32>\n"
        "  check.expect_eq_const %r, dense<[0, 1, 0, 2]> : tensor<4xi32>\n")),
    S("stablehlo.dynamic_reshape", "", "dense<[1, 2, 3, 4]> : tensor<4xi32>",
      "dense<[2, 2]> : tensor<2xi64>", 0,
      "dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>"),
    S("stablehlo.iota", "{iota_dimension = 0 : i64}", 0, 0, 0,
      "dense<[0, 1, 2]> : tensor<3xi32>"),
    S("stablehlo.constant", "{value = dense<[1, 2]> : tensor<2xi32>}", 0, 0, 0,
      "dense<[1, 2]> : tensor<2xi32>"),
    /* ---- StableHLO: linear algebra ---- */
    S("stablehlo.dot", "", F22, F22, 0,
      "dense<[[7.0, 10.0], [15.0, 22.0]]> : tensor<2x2xf32>"),
    S("stablehlo.dot_general", "{dot_dimension_numbers = #stablehlo.dot<"
      "lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}",
      F22, F22, 0, "dense<[[7.0, 10.0], [15.0, 22.0]]> : tensor<2x2xf32>"),
    S("stablehlo.einsum", "{einsum_config = \"ab,bc->ac\"}", F22, F22, 0,
      "dense<[[7.0, 10.0], [15.0, 22.0]]> : tensor<2x2xf32>"),
    /* the trace through a repeated letter; an i8 x i8 -> i16 sum */
    S("stablehlo.unary_einsum", "{einsum_config = \"aa->\"}", F22, 0, 0,
      "dense<5.0> : tensor<f32>"),
    S("stablehlo.unary_einsum", "{einsum_config = \"ab->b\"}", F22, 0, 0,
      "dense<[4.0, 6.0]> : tensor<2xf32>"),
    S("stablehlo.einsum", "{einsum_config = \"a,a->\"}",
      "dense<[100, 100]> : tensor<2xi8>", "dense<[100, 100]> : tensor<2xi8>",
      0, "dense<20000> : tensor<i16>"),
    S("stablehlo.cholesky", "{lower = true}",
      "dense<[[4.0, 2.0], [2.0, 5.0]]> : tensor<2x2xf32>", 0, 0,
      "dense<[[2.0, 0.0], [1.0, 2.0]]> : tensor<2x2xf32>"),
    S("stablehlo.triangular_solve", "{left_side = true, lower = true, "
      "unit_diagonal = false, transpose_a = #stablehlo<transpose "
      "NO_TRANSPOSE>}", "dense<[[2.0, 0.0], [1.0, 2.0]]> : tensor<2x2xf32>",
      "dense<[[2.0], [3.0]]> : tensor<2x1xf32>", 0,
      "dense<[[1.0], [1.0]]> : tensor<2x1xf32>"),
    A("stablehlo.fft", "{fft_type = #stablehlo<fft_type FFT>, fft_length = "
      "array<i64: 2>}", "dense<[(1.0, 0.0), (2.0, 0.0)]> : "
      "tensor<2xcomplex<f32>>", 0, 0,
      "dense<[(3.0, 0.0), (-1.0, 0.0)]> : tensor<2xcomplex<f32>>"),
    S("stablehlo.convolution", "{dimension_numbers = #stablehlo.conv<[b, 0, "
      "f]x[0, i, o]->[b, 0, f]>, feature_group_count = 1 : i64, "
      "batch_group_count = 1 : i64}", "dense<[[[1.0], [2.0], [3.0]]]> : "
      "tensor<1x3x1xf32>", "dense<[[[1.0]], [[1.0]]]> : tensor<2x1x1xf32>", 0,
      "dense<[[[3.0], [5.0]]]> : tensor<1x2x1xf32>"),
    S("stablehlo.dynamic_conv", "{dimension_numbers = #stablehlo.conv<[b, 0, "
      "f]x[0, i, o]->[b, 0, f]>, feature_group_count = 1 : i64, "
      "batch_group_count = 1 : i64}", "dense<[[[1.0], [2.0], [3.0]]]> : "
      "tensor<1x3x1xf32>", "dense<[[[1.0]], [[1.0]]]> : tensor<2x1x1xf32>",
      "dense<[[1, 0]]> : tensor<1x2xi64>",
      "dense<[[[1.0], [3.0], [5.0]]]> : tensor<1x3x1xf32>"),
    S("stablehlo.gather", "{dimension_numbers = #stablehlo.gather<offset_dims "
      "= [], collapsed_slice_dims = [0], start_index_map = [0], "
      "index_vector_dim = 1>, slice_sizes = array<i64: 1>}",
      "dense<[10, 20, 30]> : tensor<3xi32>", "dense<[[2], [0]]> : "
      "tensor<2x1xi64>", 0, "dense<[30, 10]> : tensor<2xi32>"),
    S("stablehlo.dynamic_gather", "{dimension_numbers = #stablehlo.gather<"
      "offset_dims = [], collapsed_slice_dims = [0], start_index_map = [0], "
      "index_vector_dim = 1>}", "dense<[10, 20, 30]> : tensor<3xi32>",
      "dense<[[2], [0]]> : tensor<2x1xi64>", "dense<[1]> : tensor<1xi64>",
      "dense<[30, 10]> : tensor<2xi32>"),
    /* ---- StableHLO: regions, tuples, tokens, grids ---- */
    F("stablehlo.real_dynamic_slice",
      P("  %x = stablehlo.constant dense<[0, 1, 2, 3]> : tensor<4xi32>\n"
        "  %s = stablehlo.constant dense<[1]> : tensor<1xi64>\n"
        "  %l = stablehlo.constant dense<[4]> : tensor<1xi64>\n"
        "  %t = stablehlo.constant dense<[2]> : tensor<1xi64>\n"
        "  %r = stablehlo.real_dynamic_slice %x, %s, %l, %t : (tensor<4xi32>, "
        "tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2xi32>\n"
        "  check.expect_eq_const %r, dense<[1, 3]> : tensor<2xi32>\n")),
    F("stablehlo.reduce",
      P("  %x = stablehlo.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>\n"
        "  %z = stablehlo.constant dense<0> : tensor<i32>\n"
        "  %r = stablehlo.reduce(%x init: %z) applies stablehlo.add across "
        "dimensions = [1] : (tensor<2x2xi32>, tensor<i32>) -> tensor<2xi32>\n"
        "  check.expect_eq_const %r, dense<[3, 7]> : tensor<2xi32>\n")),
    F("stablehlo.reduce_window",
      P("  %x = stablehlo.constant dense<[1, 2, 3, 4]> : tensor<4xi32>\n"
        "  %z = stablehlo.constant dense<0> : tensor<i32>\n"
        "  %r = \"stablehlo.reduce_window\"(%x, %z) ({\n"
        "  ^bb0(%a: tensor<i32>, %b: tensor<i32>):\n"
        "    %s = stablehlo.add %a, %b : tensor<i32>\n"
        "    stablehlo.return %s : tensor<i32>\n"
        "  }) {window_dimensions = array<i64: 2>} : (tensor<4xi32>, "
        "tensor<i32>) -> tensor<3xi32>\n"
        "  check.expect_eq_const %r, dense<[3, 5, 7]> : tensor<3xi32>\n")),
    F("stablehlo.map",
      P("  %x = stablehlo.constant dense<[1, 2]> : tensor<2xi32>\n"
        "  %r = \"stablehlo.map\"(%x, %x) ({\n"
        "  ^bb0(%a: tensor<i32>, %b: tensor<i32>):\n"
        "    %s = stablehlo.multiply %a, %b : tensor<i32>\n"
        "    stablehlo.return %s : tensor<i32>\n"
        "  }) {dimensions = array<i64: 0>} : (tensor<2xi32>, tensor<2xi32>) "
        "-> tensor<2xi32>\n"
        "  check.expect_eq_const %r, dense<[1, 4]> : tensor<2xi32>\n")),
    F("stablehlo.sort",
      P("  %x = stablehlo.constant dense<[3, 1, 2]> : tensor<3xi32>\n"
        "  %r = \"stablehlo.sort\"(%x) ({\n"
        "  ^bb0(%a: tensor<i32>, %b: tensor<i32>):\n"
        "    %c = stablehlo.compare LT, %a, %b : (tensor<i32>, tensor<i32>) "
        "-> tensor<i1>\n"
        "    stablehlo.return %c : tensor<i1>\n"
        "  }) {dimension = 0 : i64} : (tensor<3xi32>) -> tensor<3xi32>\n"
        "  check.expect_eq_const %r, dense<[1, 2, 3]> : tensor<3xi32>\n")),
    F("stablehlo.scatter",
      P("  %x = stablehlo.constant dense<[1, 2, 3]> : tensor<3xi32>\n"
        "  %i = stablehlo.constant dense<[[1]]> : tensor<1x1xi64>\n"
        "  %u = stablehlo.constant dense<[10]> : tensor<1xi32>\n"
        "  %r = \"stablehlo.scatter\"(%x, %i, %u) ({\n"
        "  ^bb0(%a: tensor<i32>, %b: tensor<i32>):\n"
        "    %s = stablehlo.add %a, %b : tensor<i32>\n"
        "    stablehlo.return %s : tensor<i32>\n"
        "  }) {scatter_dimension_numbers = #stablehlo.scatter<"
        "inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], "
        "index_vector_dim = 1>} : (tensor<3xi32>, tensor<1x1xi64>, "
        "tensor<1xi32>) -> tensor<3xi32>\n"
        "  check.expect_eq_const %r, dense<[1, 12, 3]> : tensor<3xi32>\n")),
    F("stablehlo.select_and_scatter",
      P("  %x = stablehlo.constant dense<[1, 5, 3, 2]> : tensor<4xi32>\n"
        "  %s = stablehlo.constant dense<[10, 20]> : tensor<2xi32>\n"
        "  %z = stablehlo.constant dense<0> : tensor<i32>\n"
        "  %r = \"stablehlo.select_and_scatter\"(%x, %s, %z) ({\n"
        "  ^bb0(%a: tensor<i32>, %b: tensor<i32>):\n"
        "    %c = stablehlo.compare GE, %a, %b : (tensor<i32>, tensor<i32>) "
        "-> tensor<i1>\n"
        "    stablehlo.return %c : tensor<i1>\n"
        "  }, {\n"
        "  ^bb0(%a: tensor<i32>, %b: tensor<i32>):\n"
        "    %t = stablehlo.add %a, %b : tensor<i32>\n"
        "    stablehlo.return %t : tensor<i32>\n"
        "  }) {window_dimensions = array<i64: 2>, window_strides = "
        "array<i64: 2>} : (tensor<4xi32>, tensor<2xi32>, tensor<i32>) -> "
        "tensor<4xi32>\n"
        "  check.expect_eq_const %r, dense<[0, 10, 20, 0]> : tensor<4xi32>\n")),
    F("stablehlo.if",
      P("  %p = stablehlo.constant dense<true> : tensor<i1>\n"
        "  %r = \"stablehlo.if\"(%p) ({\n"
        "    %a = stablehlo.constant dense<1> : tensor<i32>\n"
        "    stablehlo.return %a : tensor<i32>\n"
        "  }, {\n"
        "    %b = stablehlo.constant dense<2> : tensor<i32>\n"
        "    stablehlo.return %b : tensor<i32>\n"
        "  }) : (tensor<i1>) -> tensor<i32>\n"
        "  check.expect_eq_const %r, dense<1> : tensor<i32>\n")),
    F("stablehlo.case",
      P("  %i = stablehlo.constant dense<1> : tensor<i32>\n"
        "  %r = \"stablehlo.case\"(%i) ({\n"
        "    %a = stablehlo.constant dense<10> : tensor<i32>\n"
        "    stablehlo.return %a : tensor<i32>\n"
        "  }, {\n"
        "    %b = stablehlo.constant dense<20> : tensor<i32>\n"
        "    stablehlo.return %b : tensor<i32>\n"
        "  }) : (tensor<i32>) -> tensor<i32>\n"
        "  check.expect_eq_const %r, dense<20> : tensor<i32>\n")),
    F("stablehlo.while",
      P("  %z = stablehlo.constant dense<0> : tensor<i32>\n"
        "  %r = stablehlo.while(%i = %z) : tensor<i32>\n"
        "  cond {\n"
        "    %t = stablehlo.constant dense<5> : tensor<i32>\n"
        "    %c = stablehlo.compare LT, %i, %t : (tensor<i32>, tensor<i32>) -> "
        "tensor<i1>\n"
        "    stablehlo.return %c : tensor<i1>\n"
        "  } do {\n"
        "    %o = stablehlo.constant dense<2> : tensor<i32>\n"
        "    %n = stablehlo.add %i, %o : tensor<i32>\n"
        "    stablehlo.return %n : tensor<i32>\n"
        "  }\n"
        "  check.expect_eq_const %r, dense<6> : tensor<i32>\n")),
    F("stablehlo.return",
      P("  %p = stablehlo.constant dense<false> : tensor<i1>\n"
        "  %r = \"stablehlo.if\"(%p) ({\n"
        "    %a = stablehlo.constant dense<1> : tensor<i32>\n"
        "    \"stablehlo.return\"(%a) : (tensor<i32>) -> ()\n"
        "  }, {\n"
        "    %b = stablehlo.constant dense<2> : tensor<i32>\n"
        "    \"stablehlo.return\"(%b) : (tensor<i32>) -> ()\n"
        "  }) : (tensor<i1>) -> tensor<i32>\n"
        "  check.expect_eq_const %r, dense<2> : tensor<i32>\n")),
    F("stablehlo.async_start",
      P("  %x = stablehlo.constant dense<[1.5, -2.0]> : tensor<2xf32>\n"
        "  %k = stablehlo.constant dense<7> : tensor<i32>\n"
        "  %f = \"stablehlo.async_start\"(%x) ({\n"
        "    ^bb0(%a: tensor<2xf32>):\n"
        "    %s = stablehlo.add %a, %a : tensor<2xf32>\n"
        "    \"stablehlo.return\"(%s, %k) : (tensor<2xf32>, tensor<i32>) -> ()\n"
        "  }) : (tensor<2xf32>) -> !stablehlo.future<tensor<2xf32>, "
        "tensor<i32>>\n"
        "  %r:2 = \"stablehlo.async_done\"(%f) : (!stablehlo.future<"
        "tensor<2xf32>, tensor<i32>>) -> (tensor<2xf32>, tensor<i32>)\n"
        "  check.expect_eq_const %r#0, dense<[3.0, -4.0]> : tensor<2xf32>\n"
        "  check.expect_eq_const %r#1, dense<7> : tensor<i32>\n")),
    F("stablehlo.async_done",
      P("  %x = stablehlo.constant dense<5> : tensor<i64>\n"
        "  %f = \"stablehlo.async_start\"(%x) ({\n"
        "    ^bb0(%a: tensor<i64>):\n"
        "    %s = stablehlo.multiply %a, %a : tensor<i64>\n"
        "    \"stablehlo.return\"(%s) : (tensor<i64>) -> ()\n"
        "  }) : (tensor<i64>) -> !stablehlo.future<tensor<i64>>\n"
        "  %r = \"stablehlo.async_done\"(%f) : (!stablehlo.future<"
        "tensor<i64>>) -> tensor<i64>\n"
        "  check.expect_eq_const %r, dense<25> : tensor<i64>\n")),
    X("stablehlo.async_done",
      P("  %x = stablehlo.constant dense<5> : tensor<i64>\n"
        "  %f = \"stablehlo.async_start\"(%x) ({\n"
        "    ^bb0(%a: tensor<i64>):\n"
        "    \"stablehlo.return\"(%a) : (tensor<i64>) -> ()\n"
        "  }) : (tensor<i64>) -> !stablehlo.future<tensor<i64>>\n"
        "  %r = \"stablehlo.async_done\"(%f) : (!stablehlo.future<"
        "tensor<i64>>) -> tensor<i32>\n"),
      "results must be the operand future's types"),
    F("stablehlo.tuple",
      P("  %a = stablehlo.constant dense<3> : tensor<i32>\n"
        "  %t = stablehlo.tuple %a, %a : tuple<tensor<i32>, tensor<i32>>\n"
        "  %r = stablehlo.get_tuple_element %t[1] : (tuple<tensor<i32>, "
        "tensor<i32>>) -> tensor<i32>\n"
        "  check.expect_eq_const %r, dense<3> : tensor<i32>\n")),
    F("stablehlo.get_tuple_element",
      P("  %a = stablehlo.constant dense<3> : tensor<i32>\n"
        "  %b = stablehlo.constant dense<4> : tensor<i32>\n"
        "  %t = stablehlo.tuple %a, %b : tuple<tensor<i32>, tensor<i32>>\n"
        "  %r = stablehlo.get_tuple_element %t[1] : (tuple<tensor<i32>, "
        "tensor<i32>>) -> tensor<i32>\n"
        "  check.expect_eq_const %r, dense<4> : tensor<i32>\n")),
    F("stablehlo.optimization_barrier",
      P("  %a = stablehlo.constant dense<3> : tensor<i32>\n"
        "  %r = stablehlo.optimization_barrier %a : tensor<i32>\n"
        "  check.expect_eq_const %r, dense<3> : tensor<i32>\n")),
    F("stablehlo.after_all",
      P("  %t = stablehlo.create_token : !stablehlo.token\n"
        "  %r = stablehlo.after_all %t, %t : !stablehlo.token\n")),
    F("stablehlo.create_token",
      P("  %t = stablehlo.create_token : !stablehlo.token\n"
        "  %u = \"stablehlo.create_token\"() : () -> !stablehlo.token\n"
        "  %r = stablehlo.after_all %t, %u : !stablehlo.token\n")),
    F("stablehlo.trace",
      P("  %a = stablehlo.constant dense<3> : tensor<i32>\n"
        "  stablehlo.trace %a, \"in test code\" : tensor<i32>\n")),
    F("stablehlo.custom_call",
      P("  %a = stablehlo.constant dense<3> : tensor<i32>\n"
        "  stablehlo.custom_call @check.expect_eq(%a, %a) : (tensor<i32>, "
        "tensor<i32>) -> ()\n")),
    F("stablehlo.composite",
      P("  %a = stablehlo.constant dense<3> : tensor<i32>\n"
        "  %r = stablehlo.composite \"my.double\" %a {decomposition = "
        "@double} : (tensor<i32>) -> tensor<i32>\n"
        "  check.expect_eq_const %r, dense<6> : tensor<i32>\n")
      "func.func private @double(%x: tensor<i32>) -> tensor<i32> {\n"
      "  %y = stablehlo.add %x, %x : tensor<i32>\n"
      "  return %y : tensor<i32>\n}\n"),
    F("stablehlo.replica_id",
      P("  %r = stablehlo.replica_id : tensor<ui32>\n"
        "  check.expect_eq_const %r, dense<0> : tensor<ui32>\n")),
    F("stablehlo.partition_id",
      P("  %r = stablehlo.partition_id : tensor<ui32>\n"
        "  check.expect_eq_const %r, dense<0> : tensor<ui32>\n")),
    F("stablehlo.all_gather",
      P("  %a = stablehlo.constant dense<[1, 2]> : tensor<2xi32>\n"
        "  %r = \"stablehlo.all_gather\"(%a) {all_gather_dim = 0 : i64, "
        "replica_groups = dense<[[0]]> : tensor<1x1xi64>} : (tensor<2xi32>) "
        "-> tensor<2xi32>\n"
        "  check.expect_eq_const %r, dense<[1, 2]> : tensor<2xi32>\n")),
    F("stablehlo.all_reduce",
      P("  %a = stablehlo.constant dense<[1, 2]> : tensor<2xi32>\n"
        "  %r = \"stablehlo.all_reduce\"(%a) ({\n"
        "  ^bb0(%x: tensor<i32>, %y: tensor<i32>):\n"
        "    %s = stablehlo.add %x, %y : tensor<i32>\n"
        "    stablehlo.return %s : tensor<i32>\n"
        "  }) {replica_groups = dense<[[0]]> : tensor<1x1xi64>} : "
        "(tensor<2xi32>) -> tensor<2xi32>\n"
        "  check.expect_eq_const %r, dense<[1, 2]> : tensor<2xi32>\n")),
    F("stablehlo.reduce_scatter",
      P("  %a = stablehlo.constant dense<[1, 2]> : tensor<2xi32>\n"
        "  %r = \"stablehlo.reduce_scatter\"(%a) ({\n"
        "  ^bb0(%x: tensor<i32>, %y: tensor<i32>):\n"
        "    %s = stablehlo.add %x, %y : tensor<i32>\n"
        "    stablehlo.return %s : tensor<i32>\n"
        "  }) {scatter_dimension = 0 : i64, replica_groups = dense<[[0]]> : "
        "tensor<1x1xi64>} : (tensor<2xi32>) -> tensor<2xi32>\n"
        "  check.expect_eq_const %r, dense<[1, 2]> : tensor<2xi32>\n")),
    F("stablehlo.all_to_all",
      P("  %a = stablehlo.constant dense<[1, 2]> : tensor<2xi32>\n"
        "  %r = \"stablehlo.all_to_all\"(%a) {split_dimension = 0 : i64, "
        "concat_dimension = 0 : i64, split_count = 1 : i64, replica_groups = "
        "dense<[[0]]> : tensor<1x1xi64>} : (tensor<2xi32>) -> tensor<2xi32>\n"
        "  check.expect_eq_const %r, dense<[1, 2]> : tensor<2xi32>\n")),
    F("stablehlo.collective_permute",
      P("  %a = stablehlo.constant dense<[1, 2]> : tensor<2xi32>\n"
        "  %r = \"stablehlo.collective_permute\"(%a) {source_target_pairs = "
        "dense<[[0, 0]]> : tensor<1x2xi64>} : (tensor<2xi32>) -> "
        "tensor<2xi32>\n"
        "  check.expect_eq_const %r, dense<[1, 2]> : tensor<2xi32>\n")),
    F("stablehlo.collective_broadcast",
      P("  %a = stablehlo.constant dense<[1, 2]> : tensor<2xi32>\n"
        "  %r = \"stablehlo.collective_broadcast\"(%a) {replica_groups = "
        "dense<[[0]]> : tensor<1x1xi64>} : (tensor<2xi32>) -> tensor<2xi32>\n"
        "  check.expect_eq_const %r, dense<[1, 2]> : tensor<2xi32>\n")),
    F("stablehlo.cross-replica-sum",
      P("  %a = stablehlo.constant dense<[1.5, 2.0]> : tensor<2xf32>\n"
        "  %r = \"stablehlo.cross-replica-sum\"(%a) {replica_groups = "
        "dense<[[0]]> : tensor<1x1xi64>} : (tensor<2xf32>) -> tensor<2xf32>\n"
        "  check.expect_eq_const %r, dense<[1.5, 2.0]> : tensor<2xf32>\n")),
    C("stablehlo.infeed",
      P("  %t = stablehlo.create_token : !stablehlo.token\n"
        "  %r:2 = \"stablehlo.infeed\"(%t) : (!stablehlo.token) -> "
        "(tensor<2xi32>, !stablehlo.token)\n")),
    C("stablehlo.outfeed",
      P("  %t = stablehlo.create_token : !stablehlo.token\n"
        "  %a = stablehlo.constant dense<[1, 2]> : tensor<2xi32>\n"
        "  %r = \"stablehlo.outfeed\"(%a, %t) : (tensor<2xi32>, "
        "!stablehlo.token) -> !stablehlo.token\n")),
    C("stablehlo.send",
      P("  %t = stablehlo.create_token : !stablehlo.token\n"
        "  %a = stablehlo.constant dense<[1, 2]> : tensor<2xi32>\n"
        "  %r = \"stablehlo.send\"(%a, %t) {channel_handle = "
        "#stablehlo.channel_handle<handle = 1, type = 1>} : (tensor<2xi32>, "
        "!stablehlo.token) -> !stablehlo.token\n")),
    C("stablehlo.recv",
      P("  %t = stablehlo.create_token : !stablehlo.token\n"
        "  %r:2 = \"stablehlo.recv\"(%t) {channel_handle = "
        "#stablehlo.channel_handle<handle = 1, type = 1>} : "
        "(!stablehlo.token) -> (tensor<2xi32>, !stablehlo.token)\n")),
    F("stablehlo.batch_norm_inference",
      P("  %x = stablehlo.constant dense<[[1.0], [3.0]]> : tensor<2x1xf32>\n"
        "  %o = stablehlo.constant dense<[1.0]> : tensor<1xf32>\n"
        "  %m = stablehlo.constant dense<[2.0]> : tensor<1xf32>\n"
        "  %r = \"stablehlo.batch_norm_inference\"(%x, %o, %o, %m, %o) "
        "{epsilon = 0.0 : f32, feature_index = 1 : i64} : (tensor<2x1xf32>, "
        "tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>) -> "
        "tensor<2x1xf32>\n"
        "  check.expect_almost_eq_const %r, dense<[[0.0], [2.0]]> : "
        "tensor<2x1xf32>\n")),
    F("stablehlo.batch_norm_training",
      P("  %x = stablehlo.constant dense<[[1.0], [3.0]]> : tensor<2x1xf32>\n"
        "  %s = stablehlo.constant dense<[1.0]> : tensor<1xf32>\n"
        "  %z = stablehlo.constant dense<[0.0]> : tensor<1xf32>\n"
        "  %r:3 = \"stablehlo.batch_norm_training\"(%x, %s, %z) {epsilon = "
        "0.0 : f32, feature_index = 1 : i64} : (tensor<2x1xf32>, "
        "tensor<1xf32>, tensor<1xf32>) -> (tensor<2x1xf32>, tensor<1xf32>, "
        "tensor<1xf32>)\n"
        "  check.expect_almost_eq_const %r#0, dense<[[-1.0], [1.0]]> : "
        "tensor<2x1xf32>\n"
        "  check.expect_almost_eq_const %r#1, dense<[2.0]> : tensor<1xf32>\n"
        "  check.expect_almost_eq_const %r#2, dense<[1.0]> : tensor<1xf32>\n")),
    F("stablehlo.batch_norm_grad",
      P("  %x = stablehlo.constant dense<[[1.0], [3.0]]> : tensor<2x1xf32>\n"
        "  %s = stablehlo.constant dense<[1.0]> : tensor<1xf32>\n"
        "  %m = stablehlo.constant dense<[2.0]> : tensor<1xf32>\n"
        "  %g = stablehlo.constant dense<[[1.0], [1.0]]> : tensor<2x1xf32>\n"
        "  %r:3 = \"stablehlo.batch_norm_grad\"(%x, %s, %m, %s, %g) "
        "{epsilon = 0.0 : f32, feature_index = 1 : i64} : (tensor<2x1xf32>, "
        "tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<2x1xf32>) -> "
        "(tensor<2x1xf32>, tensor<1xf32>, tensor<1xf32>)\n"
        /* normalized x = [-1, 1]; grad_scale = sum(g * xn) = 0, grad_offset
         * = sum(g) = 2, grad_operand = (g - mean(g) - xn mean(g xn)) = 0 */
        "  check.expect_almost_eq_const %r#0, dense<[[0.0], [0.0]]> : "
        "tensor<2x1xf32>\n"
        "  check.expect_almost_eq_const %r#1, dense<[0.0]> : tensor<1xf32>\n"
        "  check.expect_almost_eq_const %r#2, dense<[2.0]> : tensor<1xf32>\n")),
    F("stablehlo.rng",
      P("  %a = stablehlo.constant dense<0.0> : tensor<f32>\n"
        "  %b = stablehlo.constant dense<1.0> : tensor<f32>\n"
        "  %sh = stablehlo.constant dense<[100]> : tensor<1xi64>\n"
        "  %r = stablehlo.rng %a, %b, %sh, distribution = UNIFORM : "
        "(tensor<f32>, tensor<f32>, tensor<1xi64>) -> tensor<100xf32>\n"
        /* every draw in [0, 1): min >= 0 and max < 1 */
        "  %lo = stablehlo.constant dense<0x7F800000> : tensor<f32>\n"
        "  %mn = stablehlo.reduce(%r init: %lo) applies stablehlo.minimum "
        "across dimensions = [0] : (tensor<100xf32>, tensor<f32>) -> "
        "tensor<f32>\n"
        "  %ok = stablehlo.compare GE, %mn, %a : (tensor<f32>, tensor<f32>) "
        "-> tensor<i1>\n"
        "  check.expect_eq_const %ok, dense<true> : tensor<i1>\n")),
    F("stablehlo.rng_bit_generator",
      P("  %s = stablehlo.constant dense<[1, 2]> : tensor<2xui64>\n"
        "  %ns, %o = stablehlo.rng_bit_generator %s, algorithm = THREE_FRY : "
        "(tensor<2xui64>) -> (tensor<2xui64>, tensor<2xui64>)\n"
        "  check.expect_eq_const %ns, dense<[1, 4]> : tensor<2xui64>\n")),
    F("stablehlo.uniform_quantize",
      P("  %x = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>\n"
        "  %q = stablehlo.uniform_quantize %x : (tensor<2xf32>) -> "
        "tensor<2x!quant.uniform<i8:f32, 0.5>>\n"
        "  %r = stablehlo.bitcast_convert %q : "
        "(tensor<2x!quant.uniform<i8:f32, 0.5>>) -> tensor<2xi8>\n"
        "  check.expect_eq_const %r, dense<[2, 4]> : tensor<2xi8>\n")),
    F("stablehlo.uniform_dequantize",
      P("  %x = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>\n"
        "  %q = stablehlo.uniform_quantize %x : (tensor<2xf32>) -> "
        "tensor<2x!quant.uniform<i8:f32, 0.5>>\n"
        "  %r = stablehlo.uniform_dequantize %q : "
        "(tensor<2x!quant.uniform<i8:f32, 0.5>>) -> tensor<2xf32>\n"
        "  check.expect_eq_const %r, dense<[1.0, 2.0]> : tensor<2xf32>\n")),
    X("stablehlo.compute_reshape_shape",
      "func.func @main(%n: index, %s: tensor<2xi32>) -> tensor<2xi32> {\n"
      "  %r = stablehlo.compute_reshape_shape %n, %s : (index, tensor<2xi32>)"
      " -> tensor<2xi32>\n  return %r : tensor<2xi32>\n}\n", "is not run"),
    X("stablehlo.cstr_reshapable",
      "func.func @main(%n: index, %s: tensor<2xi32>) -> !shape.witness {\n"
      "  %r = stablehlo.cstr_reshapable %n, %s : (index, tensor<2xi32>) -> "
      "!shape.witness\n  return %r : !shape.witness\n}\n",
      "dynamic result shapes are not supported"),

    /* ---- CHLO: elementwise functions ---- */
    S("chlo.acos", "", ONE2, 0, 0, Z2),
    S("chlo.acosh", "", ONE2, 0, 0, Z2),
    S("chlo.asin", "", Z2, 0, 0, Z2),
    A("chlo.asin_acos_kernel", "", "dense<[(0.5, 0.0)]> : "
      "tensor<1xcomplex<f64>>", 0, 0, /* asin(0.5) = atan2(0.5, w) = pi/6 */
      "dense<[(0.8660254037844386, 0.0)]> : tensor<1xcomplex<f64>>"),
    S("chlo.asinh", "", Z2, 0, 0, Z2),
    S("chlo.atan", "", Z2, 0, 0, Z2),
    S("chlo.atanh", "", Z2, 0, 0, Z2),
    S("chlo.bessel_i1e", "", Z2, 0, 0, Z2),
    S("chlo.conj", "", "dense<[(1.0, 2.0)]> : tensor<1xcomplex<f32>>", 0, 0,
      "dense<[(1.0, -2.0)]> : tensor<1xcomplex<f32>>"),
    S("chlo.cosh", "", Z2, 0, 0, ONE2),
    A("chlo.digamma", "", ONE2, 0, 0, /* -Euler's gamma */
      "dense<[-0.5772156649, -0.5772156649]> : tensor<2xf32>"),
    S("chlo.erf", "", Z2, 0, 0, Z2),
    S("chlo.erf_inv", "", Z2, 0, 0, Z2),
    S("chlo.erfc", "", Z2, 0, 0, ONE2),
    S("chlo.is_inf", "", "dense<[0xFF800000, 1.0]> : tensor<2xf32>", 0, 0,
      "dense<[true, false]> : tensor<2xi1>"),
    S("chlo.is_neg_inf", "", "dense<[0xFF800000, 0x7F800000]> : "
      "tensor<2xf32>", 0, 0, "dense<[true, false]> : tensor<2xi1>"),
    S("chlo.is_pos_inf", "", "dense<[0xFF800000, 0x7F800000]> : "
      "tensor<2xf32>", 0, 0, "dense<[false, true]> : tensor<2xi1>"),
    A("chlo.lgamma", "", "dense<[1.0, 3.0]> : tensor<2xf32>", 0, 0,
      "dense<[0.0, 0.6931471806]> : tensor<2xf32>"), /* ln 2! */
    S("chlo.mulhi", "", "dense<[65536]> : tensor<1xi32>",
      "dense<[131072]> : tensor<1xi32>", 0, "dense<[2]> : tensor<1xi32>"),
    S("chlo.next_after", "", "dense<[1.0, 0.0]> : tensor<2xf32>", ONE2, 0,
      "dense<[1.0, 0x1]> : tensor<2xf32>"),
    A("chlo.polygamma", "", ONE2, "dense<[1.0, 2.0]> : tensor<2xf32>", 0,
      "dense<[" PI2_6 ", 0.6449340668]> : tensor<2xf32>"),
    S("chlo.sinh", "", Z2, 0, 0, Z2),
    S("chlo.tan", "", Z2, 0, 0, Z2),
    S("chlo.square", "", "dense<[-3.0, 0.5]> : tensor<2xf32>", 0, 0,
      "dense<[9.0, 0.25]> : tensor<2xf32>"),
    S("chlo.square", "", "dense<[(1.0, 2.0)]> : tensor<1xcomplex<f32>>", 0, 0,
      "dense<[(-3.0, 4.0)]> : tensor<1xcomplex<f32>>"),
    A("chlo.zeta", "", "dense<[2.0, 2.0]> : tensor<2xf32>",
      "dense<[1.0, 2.0]> : tensor<2xf32>", 0,
      "dense<[" PI2_6 ", 0.6449340668]> : tensor<2xf32>"),
    S("chlo.igamma", "", ONE2, Z2, 0, Z2),
    S("chlo.igammac", "", ONE2, Z2, 0, ONE2),
    S("chlo.constant", "{value = dense<[1.5, 2.0]> : tensor<2xf32>}", 0, 0, 0,
      "dense<[1.5, 2.0]> : tensor<2xf32>"),
    F("chlo.constant",
      P("  %c = chlo.constant dense<[1, 2]> : tensor<2xi32>\n"
        "  check.expect_eq_const %c, dense<[1, 2]> : tensor<2xi32>\n")),
    S("chlo.constant_like", "{value = 2.5 : f32}", F22, 0, 0,
      "dense<2.5> : tensor<2x2xf32>"),
    S("chlo.constant_like", "{value = 7 : i32}", I22, 0, 0,
      "dense<7> : tensor<2x2xi32>"),
    F("chlo.top_k",
      P("  %x = stablehlo.constant dense<[1.0, 4.0, 2.0, 3.0]> : "
        "tensor<4xf32>\n"
        "  %v, %i = chlo.top_k(%x, k = 2) : tensor<4xf32> -> (tensor<2xf32>, "
        "tensor<2xi32>)\n"
        "  check.expect_eq_const %v, dense<[4.0, 3.0]> : tensor<2xf32>\n"
        "  check.expect_eq_const %i, dense<[1, 3]> : tensor<2xi32>\n")),
    /* Worked by hand from ChloOps.td's rule: drop all-1 dimensions, merge
     * adjacent dimensions with the same broadcasting set, from the minor
     * end; shapes that do not broadcast come back as they are. */
    F("chlo.minimum_broadcast_shapes", MBS2("[1, 2]", "2", "[1, 2]", "2",
                                            "[2]", "1", "[2]", "1")),
    F("chlo.minimum_broadcast_shapes", MBS2("[2, 3]", "2", "[3]", "1",
                                            "[2, 3]", "2", "[3]", "1")),
    F("chlo.minimum_broadcast_shapes", MBS2("[2, 3]", "2", "[2, 3]", "2",
                                            "[6]", "1", "[6]", "1")),
    F("chlo.minimum_broadcast_shapes", MBS2("[4, 1, 3]", "3", "[1, 5, 3]",
                                            "3", "[4, 1, 3]", "3", "[5, 3]",
                                            "2")),
    F("chlo.minimum_broadcast_shapes", MBS2("[2]", "1", "[3]", "1", "[2]",
                                            "1", "[3]", "1")),
    F("chlo.minimum_broadcast_shapes",
      P("  %a = stablehlo.constant dense<[2, 3, 4]> : tensor<3xindex>\n"
        "  %b = stablehlo.constant dense<[3, 4]> : tensor<2xindex>\n"
        "  %c = stablehlo.constant dense<[1]> : tensor<1xindex>\n"
        "  %r:3 = \"chlo.minimum_broadcast_shapes\"(%a, %b, %c) : "
        "(tensor<3xindex>, tensor<2xindex>, tensor<1xindex>) -> "
        "(tensor<2xindex>, tensor<1xindex>, tensor<0xindex>)\n"
        "  check.expect_eq_const %r#0, dense<[2, 12]> : tensor<2xindex>\n"
        "  check.expect_eq_const %r#1, dense<[12]> : tensor<1xindex>\n"
        "  check.expect_eq_const %r#2, dense<> : tensor<0xindex>\n")),
    X("chlo.minimum_broadcast_shapes",
      P("  %a = stablehlo.constant dense<[1, 2]> : tensor<2xindex>\n"
        "  %r:2 = \"chlo.minimum_broadcast_shapes\"(%a, %a) : "
        "(tensor<2xindex>, tensor<2xindex>) -> (tensor<2xindex>, "
        "tensor<2xindex>)\n"),
      "has 1 extents but its static type holds 2"),
    X("chlo.minimum_broadcast_shapes",
      P("  %a = stablehlo.constant dense<[1, 2]> : tensor<2xindex>\n"
        "  %r = \"chlo.minimum_broadcast_shapes\"(%a, %a) : "
        "(tensor<2xindex>, tensor<2xindex>) -> tensor<1xindex>\n"),
      "number of operand shapes (2) does not match number of result shapes "
      "(1)"),
    X("chlo.minimum_broadcast_shapes",
      P("  %a = stablehlo.constant dense<[1, 2]> : tensor<2xindex>\n"
        "  %r = \"chlo.minimum_broadcast_shapes\"(%a) : "
        "(tensor<2xindex>) -> tensor<1xindex>\n"),
      "should be >= 2"),
    X("chlo.minimum_broadcast_shapes",
      P("  %a = stablehlo.constant dense<[1, 2]> : tensor<2xi64>\n"
        "  %r:2 = \"chlo.minimum_broadcast_shapes\"(%a, %a) : "
        "(tensor<2xi64>, tensor<2xi64>) -> (tensor<1xindex>, "
        "tensor<1xindex>)\n"),
      "must be a 1-D tensor of index"),

    /* ---- CHLO: broadcasting ops, numpy's trailing alignment ---- */
    S("chlo.broadcast_add", "", F23, "dense<[10.0, 20.0, 30.0]> : "
      "tensor<3xf32>", 0, "dense<[[11.0, 22.0, 33.0], [14.0, 25.0, 36.0]]> : "
      "tensor<2x3xf32>"),
    S("chlo.broadcast_subtract", "", "dense<[[10], [20]]> : tensor<2x1xi32>",
      "dense<[1, 2, 3]> : tensor<3xi32>", 0,
      "dense<[[9, 8, 7], [19, 18, 17]]> : tensor<2x3xi32>"),
    S("chlo.broadcast_multiply", "", "dense<[3.0]> : tensor<1xf32>", F22, 0,
      "dense<[[3.0, 6.0], [9.0, 12.0]]> : tensor<2x2xf32>"),
    S("chlo.broadcast_divide", "", "dense<[[2.0, 4.0], [6.0, 8.0]]> : "
      "tensor<2x2xf32>", "dense<[2.0, 4.0]> : tensor<2xf32>", 0,
      "dense<[[1.0, 1.0], [3.0, 2.0]]> : tensor<2x2xf32>"),
    S("chlo.broadcast_maximum", "", I22, "dense<[3, 4]> : tensor<2xi32>", 0,
      "dense<[[3, 5], [7, 4]]> : tensor<2x2xi32>"),
    S("chlo.broadcast_minimum", "", I22, "dense<[3, 4]> : tensor<2xi32>", 0,
      "dense<[[1, 4], [3, 2]]> : tensor<2x2xi32>"),
    S("chlo.broadcast_power", "", "dense<[[2.0], [3.0]]> : tensor<2x1xf32>",
      "dense<[2.0, 3.0]> : tensor<2xf32>", 0,
      "dense<[[4.0, 8.0], [9.0, 27.0]]> : tensor<2x2xf32>"),
    S("chlo.broadcast_remainder", "", "dense<[[7, 8], [9, 10]]> : "
      "tensor<2x2xi32>", "dense<[3]> : tensor<1xi32>", 0,
      "dense<[[1, 2], [0, 1]]> : tensor<2x2xi32>"),
    A("chlo.broadcast_atan2", "", "dense<[1.0, -1.0]> : tensor<2xf32>",
      "dense<1.0> : tensor<f32>", 0,
      "dense<[0.78539816, -0.78539816]> : tensor<2xf32>"),
    S("chlo.broadcast_shift_left", "", "dense<[1, 2]> : tensor<2xi32>",
      "dense<[[1], [2]]> : tensor<2x1xi32>", 0,
      "dense<[[2, 4], [4, 8]]> : tensor<2x2xi32>"),
    S("chlo.broadcast_shift_right_arithmetic", "",
      "dense<[-8, 8]> : tensor<2xi32>", "dense<2> : tensor<i32>", 0,
      "dense<[-2, 2]> : tensor<2xi32>"),
    S("chlo.broadcast_shift_right_logical", "", "dense<[-8]> : tensor<1xi32>",
      "dense<[28, 1]> : tensor<2xi32>", 0,
      "dense<[15, 2147483644]> : tensor<2xi32>"),
    S("chlo.broadcast_and", "", "dense<[[true], [false]]> : tensor<2x1xi1>",
      "dense<[true, false]> : tensor<2xi1>", 0,
      "dense<[[true, false], [false, false]]> : tensor<2x2xi1>"),
    S("chlo.broadcast_or", "", "dense<[1, 2]> : tensor<2xi32>",
      "dense<[[4], [8]]> : tensor<2x1xi32>", 0,
      "dense<[[5, 6], [9, 10]]> : tensor<2x2xi32>"),
    S("chlo.broadcast_xor", "", "dense<[true, false]> : tensor<2xi1>",
      "dense<true> : tensor<i1>", 0, "dense<[false, true]> : tensor<2xi1>"),
    S("chlo.broadcast_compare",
      "{comparison_direction = #chlo<comparison_direction LT>}",
      "dense<[[1.0], [5.0]]> : tensor<2x1xf32>",
      "dense<[2.0, 4.0, 6.0]> : tensor<3xf32>", 0,
      "dense<[[true, true, true], [false, false, true]]> : tensor<2x3xi1>"),
    S("chlo.broadcast_select", "", "dense<[[true], [false]]> : tensor<2x1xi1>",
      "dense<[1, 2, 3]> : tensor<3xi32>", "dense<7> : tensor<i32>",
      "dense<[[1, 2, 3], [7, 7, 7]]> : tensor<2x3xi32>"),
    S("chlo.broadcast_complex", "", "dense<[1.0, 2.0]> : tensor<2xf32>",
      "dense<3.0> : tensor<f32>", 0,
      "dense<[(1.0, 3.0), (2.0, 3.0)]> : tensor<2xcomplex<f32>>"),
    A("chlo.broadcast_polygamma", "", "dense<1.0> : tensor<f32>",
      "dense<[1.0, 2.0]> : tensor<2xf32>", 0,
      "dense<[" PI2_6 ", 0.6449340668]> : tensor<2xf32>"),
    A("chlo.broadcast_zeta", "", "dense<2.0> : tensor<f32>",
      "dense<[1.0, 2.0]> : tensor<2xf32>", 0,
      "dense<[" PI2_6 ", 0.6449340668]> : tensor<2xf32>"),
    S("chlo.broadcast_next_after", "", "dense<[1.0, 0.0]> : tensor<2xf32>",
      "dense<2.0> : tensor<f32>", 0,
      "dense<[0x3F800001, 0x1]> : tensor<2xf32>"),
    /* ---- with broadcast_dimensions: the lower-rank operand's dims map
     * to the listed result dims ---- */
    S("chlo.broadcast_add", "{broadcast_dimensions = array<i64: 0>}", F23,
      "dense<[100.0, 200.0]> : tensor<2xf32>", 0,
      "dense<[[101.0, 102.0, 103.0], [204.0, 205.0, 206.0]]> : "
      "tensor<2x3xf32>"),
    S("chlo.broadcast_divide", "{broadcast_dimensions = array<i64: 0>}",
      "dense<[[2.0, 4.0], [6.0, 8.0]]> : tensor<2x2xf32>",
      "dense<[2.0, 4.0]> : tensor<2xf32>", 0,
      "dense<[[1.0, 2.0], [1.5, 2.0]]> : tensor<2x2xf32>"),
    S("chlo.broadcast_subtract", "{broadcast_dimensions = array<i64: 0, 2>}",
      "dense<[[[1, 2], [3, 4]], [[5, 6], [7, 8]]]> : tensor<2x2x2xi32>",
      "dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>", 0,
      "dense<[[[0, 0], [2, 2]], [[2, 2], [4, 4]]]> : tensor<2x2x2xi32>"),
    /* the lower-rank operand may come first */
    S("chlo.broadcast_multiply", "{broadcast_dimensions = dense<1> : "
      "tensor<1xi64>}", "dense<[1.0, 10.0]> : tensor<2xf32>", F22, 0,
      "dense<[[1.0, 20.0], [3.0, 40.0]]> : tensor<2x2xf32>"),
    /* equal ranks: CHLO ignores broadcast_dimensions, size 1 repeats */
    S("chlo.broadcast_add", "{broadcast_dimensions = array<i64: 0, 1>}",
      "dense<[[1.0, 2.0]]> : tensor<1x2xf32>", "dense<[[10.0], [20.0]]> : "
      "tensor<2x1xf32>", 0,
      "dense<[[11.0, 12.0], [21.0, 22.0]]> : tensor<2x2xf32>"),
    /* ---- refusals ---- */
    X("chlo.broadcast_add",
      P("  %a = stablehlo.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>\n"
        "  %b = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>\n"
        "  %r = chlo.broadcast_add %a, %b : (tensor<3xf32>, tensor<2xf32>) "
        "-> tensor<3xf32>\n"), "does not broadcast"),
    X("chlo.broadcast_add",
      P("  %a = stablehlo.constant dense<[[1.0, 2.0]]> : tensor<1x2xf32>\n"
        "  %b = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>\n"
        "  %r = chlo.broadcast_add %a, %b {broadcast_dimensions = array<i64: "
        "2>} : (tensor<1x2xf32>, tensor<2xf32>) -> tensor<1x2xf32>\n"),
      "broadcast_dimensions must be increasing"),
    X("chlo.broadcast_add",
      P("  %a = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>\n"
        "  %r = chlo.broadcast_add %a, %a : (tensor<2xf32>, tensor<2xf32>) -> "
        "tensor<3xf32>\n"), "the broadcast of the operands"),
};

/* The type part of a literal "dense<...> : tensor<...>". */
static const char *lit_type(const char *lit) {
  const char *t = strstr(lit, "> : ");
  return t ? t + 4 : lit;
}

static void simple_program(const row *r, char *out, size_t cap) {
  size_t at = 0;
  at += (size_t)snprintf(out + at, cap - at, "func.func @main() {\n");
  int n = 0;
  for (; n < 3 && r->lit[n]; n++)
    at += (size_t)snprintf(out + at, cap - at,
                           "  %%a%d = stablehlo.constant %s\n", n, r->lit[n]);
  at += (size_t)snprintf(out + at, cap - at, "  %%r = \"%s\"(", r->op);
  for (int k = 0; k < n; k++)
    at += (size_t)snprintf(out + at, cap - at, "%s%%a%d", k ? ", " : "", k);
  at += (size_t)snprintf(out + at, cap - at, ") %s : (", r->attrs);
  for (int k = 0; k < n; k++)
    at += (size_t)snprintf(out + at, cap - at, "%s%s", k ? ", " : "",
                           lit_type(r->lit[k]));
  at += (size_t)snprintf(out + at, cap - at,
                         ") -> %s\n  check.expect_%seq_const %%r, %s\n"
                         "  func.return\n}\n", lit_type(r->expect),
                         r->almost ? "almost_" : "", r->expect);
  assert_true(at < cap);
}

/* The status of parsing, compiling (and, for RUN rows, running) text;
 * the diagnostic in d. */
static shlo_status run(const char *text, bool execute, shlo_diag *d) {
  shlo_module *m = NULL;
  shlo_executable *e = NULL;
  shlo_value **res = NULL;
  int n = 0;
  shlo_diag_clear(d);
  shlo_status st = shlo_parse_module(text, strlen(text), "ops.mlir", &m, d);
  if (st == SHLO_OK) st = shlo_compile(m, NULL, &e, d);
  if (st == SHLO_OK && execute)
    st = shlo_execute(e, NULL, NULL, 0, &res, &n, d);
  for (int i = 0; i < n; i++) shlo_value_unref(res[i]);
  free(res);
  if (e) shlo_executable_free(e);
  if (m) shlo_module_free(m);
  return st;
}

static void test_every_op(void **state) {
  (void)state;
  int failed = 0;
  static char text[16384];
  for (size_t k = 0; k < sizeof rows / sizeof *rows; k++) {
    const row *r = &rows[k];
    if (r->program) snprintf(text, sizeof text, "%s", r->program);
    else simple_program(r, text, sizeof text);
    shlo_diag d;
    shlo_status st = run(text, r->w != COMPILE, &d);
    bool ok = r->w == REFUSE ? st != SHLO_OK && strstr(d.message, r->err)
                             : st == SHLO_OK;
    if (!ok) {
      print_message("row %zu %s: %s: %s\n%s", k, r->op, shlo_status_name(st),
                    d.message, text);
      failed++;
    }
  }
  assert_int_equal(failed, 0);
}

/* Every op the table names is a row of the op table, and every op of the
 * op table in the StableHLO and CHLO dialects has a row here (but those
 * tested on their own: chlo.ragged_dot, chlo.scan, collective_reduce). */
static void test_table_is_complete(void **state) {
  (void)state;
  for (size_t k = 0; k < sizeof rows / sizeof *rows; k++)
    if (!shlo__op_lookup(rows[k].op, strlen(rows[k].op))) {
      print_message("%s has no row in ops.h\n", rows[k].op);
      fail();
    }
  for (int c = 1; c < SHLO_OP_COUNT; c++) {
    const char *name = shlo__op_name((shlo_opcode)c);
    if (strncmp(name, "stablehlo.", 10) && strncmp(name, "chlo.", 5))
      continue;
    if (!strcmp(name, "chlo.ragged_dot") || !strcmp(name, "chlo.scan") ||
        !strcmp(name, "stablehlo.collective_reduce"))
      continue;
    bool found = false;
    for (size_t k = 0; k < sizeof rows / sizeof *rows && !found; k++)
      found = !strcmp(rows[k].op, name);
    if (!found) print_message("no program for %s\n", name);
    assert_true(found);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_op),
      cmocka_unit_test(test_table_is_complete),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
