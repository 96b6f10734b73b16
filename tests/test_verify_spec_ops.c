/* SPDX-License-Identifier: Apache-2.0 */
/* One negative case per numbered constraint of concatenate, dynamic_slice,
 * dynamic_update_slice, iota, get_tuple_element, pad, slice, reverse,
 * transpose, compare, clamp, complex, real, imag, sort, map, tuple,
 * optimization_barrier, reduce_precision, popcnt, cholesky,
 * batch_norm_inference, batch_norm_training, rng, while, case,
 * uniform_quantize, uniform_dequantize, abs and 36 elementwise ops (and
 * tensor.cast's compatibility rule, from MLIR's verifier), each written from the spec's statement of the constraint
 * (docs/spec.md, "Constraints"), and a positive case per op: a program
 * that breaks exactly one constraint must be rejected with that
 * constraint's label at the op's line:column (2:8).  The cases the
 * conformance corpus's verifier suites do not reach are marked "not in the
 * corpus". */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "verify_check.h"

/* func @main(params) -> ret whose body is `%0 = op` and its return. */
static const char *prog(const char *params, const char *op, const char *ret) {
  static char buf[2048];
  snprintf(buf, sizeof buf,
           "func.func @main(%s) -> %s {\n  %%0 = %s\n  func.return %%0 : %s\n}\n",
           params, ret, op, ret);
  return buf;
}

static void rejects(const char *op, const char *label, const char *text) {
  rejects_at("2:8", op, label, text);
}


/* ---- concatenate: inputs 3x2 and 1x2 along 0 give 4x2 ---- */

#define CAT_PARAMS "%a: tensor<3x2xf32>, %b: tensor<1x2xf32>"
#define CAT(b_type, dim, res)                                            \
  "\"stablehlo.concatenate\"(%a, %b) {dimension = " dim " : i64} : "     \
  "(tensor<3x2xf32>, " b_type ") -> " res

static void test_concatenate(void **state) {
  (void)state;
  const char *op = "stablehlo.concatenate";
  accepts(prog(CAT_PARAMS, CAT("tensor<1x2xf32>", "0", "tensor<4x2xf32>"),
               "tensor<4x2xf32>"));
  /* C1 same(element_type(inputs...)) -- not in the corpus */
  rejects(op, "C1", prog("%a: tensor<3x2xf32>, %b: tensor<1x2xi32>",
                         CAT("tensor<1x2xi32>", "0", "tensor<4x2xf32>"),
                         "tensor<4x2xf32>"));
  /* C2 same shapes except at dimension */
  rejects(op, "C2", prog("%a: tensor<3x2xf32>, %b: tensor<1x3xf32>",
                         CAT("tensor<1x3xf32>", "0", "tensor<4x2xf32>"),
                         "tensor<4x2xf32>"));
  /* C3 0 < size(inputs) */
  rejects(op, "C3", prog("", "\"stablehlo.concatenate\"() {dimension = 0 : "
                         "i64} : () -> tensor<0xf32>", "tensor<0xf32>"));
  /* C4 0 <= dimension < rank(inputs[0]) */
  rejects(op, "C4", prog(CAT_PARAMS, CAT("tensor<1x2xf32>", "2",
                                         "tensor<4x2xf32>"),
                         "tensor<4x2xf32>"));
  /* C5 element_type(result) = element_type(inputs[0]) -- not in the
   * corpus */
  rejects(op, "C5", prog(CAT_PARAMS, CAT("tensor<1x2xf32>", "0",
                                         "tensor<4x2xf64>"),
                         "tensor<4x2xf64>"));
  /* C6 the result's shape: sizes at dimension summed */
  rejects(op, "C6", prog(CAT_PARAMS, CAT("tensor<1x2xf32>", "0",
                                         "tensor<5x2xf32>"),
                         "tensor<5x2xf32>"));
}

/* ---- dynamic_slice: 3x4 operand, two i64 indices, sizes [2, 2] ---- */

#define DS_PARAMS(j) "%x: tensor<3x4xf32>, %i: tensor<i64>, %j: " j
#define DS(j, sizes, res)                                                 \
  "\"stablehlo.dynamic_slice\"(%x, %i, %j) {slice_sizes = array<i64: "    \
  sizes ">} : (tensor<3x4xf32>, tensor<i64>, " j ") -> " res

static void test_dynamic_slice(void **state) {
  (void)state;
  const char *op = "stablehlo.dynamic_slice";
  accepts(prog(DS_PARAMS("tensor<i64>"),
               DS("tensor<i64>", "2, 2", "tensor<2x2xf32>"),
               "tensor<2x2xf32>"));
  /* C1 element_type(operand) = element_type(result) -- not in the corpus */
  rejects(op, "C1", prog(DS_PARAMS("tensor<i64>"),
                         DS("tensor<i64>", "2, 2", "tensor<2x2xf64>"),
                         "tensor<2x2xf64>"));
  /* C2 size(start_indices) = size(slice_sizes) = rank(operand) */
  rejects(op, "C2", prog(DS_PARAMS("tensor<i64>"),
                         DS("tensor<i64>", "2", "tensor<2xf32>"),
                         "tensor<2xf32>"));
  /* C3 same(type(start_indices...)) */
  rejects(op, "C3", prog(DS_PARAMS("tensor<i32>"),
                         DS("tensor<i32>", "2, 2", "tensor<2x2xf32>"),
                         "tensor<2x2xf32>"));
  /* C4 0 <= slice_sizes <= shape(operand) */
  rejects(op, "C4", prog(DS_PARAMS("tensor<i64>"),
                         DS("tensor<i64>", "4, 2", "tensor<4x2xf32>"),
                         "tensor<4x2xf32>"));
  /* C5 shape(result) = slice_sizes */
  rejects(op, "C5", prog(DS_PARAMS("tensor<i64>"),
                         DS("tensor<i64>", "2, 2", "tensor<2x3xf32>"),
                         "tensor<2x3xf32>"));
}

/* ---- dynamic_update_slice: 3x4 operand, 2x2 update, two i64 indices ---- */

#define DUS_PARAMS(u, j) \
  "%x: tensor<3x4xf32>, %u: " u ", %i: tensor<i64>, %j: " j
#define DUS(u, j, res)                                                       \
  "\"stablehlo.dynamic_update_slice\"(%x, %u, %i, %j) : (tensor<3x4xf32>, " \
  u ", tensor<i64>, " j ") -> " res

static void test_dynamic_update_slice(void **state) {
  (void)state;
  const char *op = "stablehlo.dynamic_update_slice";
  accepts(prog(DUS_PARAMS("tensor<2x2xf32>", "tensor<i64>"),
               DUS("tensor<2x2xf32>", "tensor<i64>", "tensor<3x4xf32>"),
               "tensor<3x4xf32>"));
  /* C1 type(operand) = type(result) */
  rejects(op, "C1", prog(DUS_PARAMS("tensor<2x2xf32>", "tensor<i64>"),
                         DUS("tensor<2x2xf32>", "tensor<i64>",
                             "tensor<3x5xf32>"), "tensor<3x5xf32>"));
  /* C2 element_type(update) = element_type(operand) -- not in the corpus */
  rejects(op, "C2", prog(DUS_PARAMS("tensor<2x2xf64>", "tensor<i64>"),
                         DUS("tensor<2x2xf64>", "tensor<i64>",
                             "tensor<3x4xf32>"), "tensor<3x4xf32>"));
  /* C3 rank(update) = rank(operand) */
  rejects(op, "C3", prog(DUS_PARAMS("tensor<2xf32>", "tensor<i64>"),
                         DUS("tensor<2xf32>", "tensor<i64>",
                             "tensor<3x4xf32>"), "tensor<3x4xf32>"));
  /* C4 size(start_indices) = rank(operand) */
  rejects(op, "C4", prog("%x: tensor<3x4xf32>, %u: tensor<2x2xf32>, "
                         "%i: tensor<i64>",
                         "\"stablehlo.dynamic_update_slice\"(%x, %u, %i) : "
                         "(tensor<3x4xf32>, tensor<2x2xf32>, tensor<i64>) -> "
                         "tensor<3x4xf32>", "tensor<3x4xf32>"));
  /* C5 same(type(start_indices...)) */
  rejects(op, "C5", prog(DUS_PARAMS("tensor<2x2xf32>", "tensor<i32>"),
                         DUS("tensor<2x2xf32>", "tensor<i32>",
                             "tensor<3x4xf32>"), "tensor<3x4xf32>"));
  /* C6 0 <= shape(update) <= shape(operand) */
  rejects(op, "C6", prog(DUS_PARAMS("tensor<4x2xf32>", "tensor<i64>"),
                         DUS("tensor<4x2xf32>", "tensor<i64>",
                             "tensor<3x4xf32>"), "tensor<3x4xf32>"));
}

/* ---- iota and get_tuple_element ---- */

static void test_iota(void **state) {
  (void)state;
  accepts(prog("", "\"stablehlo.iota\"() {iota_dimension = 1 : i64} : () -> "
               "tensor<3x4xf32>", "tensor<3x4xf32>"));
  /* C1 0 <= iota_dimension < rank(output) */
  rejects("stablehlo.iota", "C1",
          prog("", "\"stablehlo.iota\"() {iota_dimension = 2 : i64} : () -> "
               "tensor<3x4xf32>", "tensor<3x4xf32>"));
}

#define GTE_PARAMS "%t: tuple<tensor<2xf32>, tensor<i32>>"
#define GTE(index, res)                                                     \
  "\"stablehlo.get_tuple_element\"(%t) {index = " index " : i32} : "       \
  "(tuple<tensor<2xf32>, tensor<i32>>) -> " res

static void test_get_tuple_element(void **state) {
  (void)state;
  const char *op = "stablehlo.get_tuple_element";
  accepts(prog(GTE_PARAMS, GTE("1", "tensor<i32>"), "tensor<i32>"));
  /* C1 0 <= index < size(operand) */
  rejects(op, "C1", prog(GTE_PARAMS, GTE("2", "tensor<i32>"), "tensor<i32>"));
  /* C2 type(result) = tuple_element_types(operand)[index] -- not in the
   * corpus */
  rejects(op, "C2", prog(GTE_PARAMS, GTE("1", "tensor<f32>"), "tensor<f32>"));
}

/* ---- pad: 2x3 by low [1, 0], high [0, 1], interior [0, 1] gives 3x6 ---- */

#define PAD_PARAMS(p) "%x: tensor<2x3xf32>, %p: " p
#define PAD(p, lo, hi, in, res)                                             \
  "\"stablehlo.pad\"(%x, %p) {edge_padding_low = array<i64: " lo ">, "     \
  "edge_padding_high = array<i64: " hi ">, interior_padding = array<i64: " \
  in ">} : (tensor<2x3xf32>, " p ") -> " res

static void test_pad(void **state) {
  (void)state;
  const char *op = "stablehlo.pad";
  accepts(prog(PAD_PARAMS("tensor<f32>"),
               PAD("tensor<f32>", "1, 0", "0, 1", "0, 1", "tensor<3x6xf32>"),
               "tensor<3x6xf32>"));
  /* a negative low padding shrinks: allowed while sizes stay >= 0 */
  accepts(prog(PAD_PARAMS("tensor<f32>"),
               PAD("tensor<f32>", "-1, 0", "0, 0", "0, 0", "tensor<1x3xf32>"),
               "tensor<1x3xf32>"));
  /* C1 element types of operand, padding_value and result agree -- not in
   * the corpus */
  rejects(op, "C1", prog(PAD_PARAMS("tensor<f64>"),
                         PAD("tensor<f64>", "1, 0", "0, 1", "0, 1",
                             "tensor<3x6xf32>"), "tensor<3x6xf32>"));
  /* C2 size(edge_padding_low) = size(edge_padding_high) =
   * size(interior_padding) = rank(operand) */
  rejects(op, "C2", prog(PAD_PARAMS("tensor<f32>"),
                         PAD("tensor<f32>", "1, 0", "0, 1", "0",
                             "tensor<3x6xf32>"), "tensor<3x6xf32>"));
  /* C3 0 <= interior_padding */
  rejects(op, "C3", prog(PAD_PARAMS("tensor<f32>"),
                         PAD("tensor<f32>", "1, 0", "0, 1", "0, -1",
                             "tensor<3x6xf32>"), "tensor<3x6xf32>"));
  /* C4 the result's shape */
  rejects(op, "C4", prog(PAD_PARAMS("tensor<f32>"),
                         PAD("tensor<f32>", "1, 0", "0, 1", "0, 1",
                             "tensor<3x5xf32>"), "tensor<3x5xf32>"));
}

/* ---- slice: 4x6 from [1, 0] to [3, 6] by [1, 2] gives 2x3 ---- */

#define SLICE(start, limit, strides, res)                                 \
  "\"stablehlo.slice\"(%x) {start_indices = array<i64: " start ">, "     \
  "limit_indices = array<i64: " limit ">, strides = array<i64: " strides \
  ">} : (tensor<4x6xf32>) -> " res

static void test_slice(void **state) {
  (void)state;
  const char *op = "stablehlo.slice", *x = "%x: tensor<4x6xf32>";
  accepts(prog(x, SLICE("1, 0", "3, 6", "1, 2", "tensor<2x3xf32>"),
               "tensor<2x3xf32>"));
  /* C1 element_type(operand) = element_type(result) -- not in the corpus */
  rejects(op, "C1", prog(x, SLICE("1, 0", "3, 6", "1, 2", "tensor<2x3xf64>"),
                         "tensor<2x3xf64>"));
  /* C2 size(start_indices) = size(limit_indices) = size(strides) =
   * rank(operand) */
  rejects(op, "C2", prog(x, SLICE("1, 0", "3, 6", "1", "tensor<2x3xf32>"),
                         "tensor<2x3xf32>"));
  /* C3 0 <= start_indices <= limit_indices <= shape(operand) */
  rejects(op, "C3", prog(x, SLICE("1, 0", "3, 7", "1, 2", "tensor<2x4xf32>"),
                         "tensor<2x4xf32>"));
  rejects(op, "C3", prog(x, SLICE("3, 0", "1, 6", "1, 2", "tensor<0x3xf32>"),
                         "tensor<0x3xf32>"));
  /* C4 0 < strides */
  rejects(op, "C4", prog(x, SLICE("1, 0", "3, 6", "1, 0", "tensor<2x3xf32>"),
                         "tensor<2x3xf32>"));
  /* C5 shape(result) = ceil((limit - start) / strides) -- not in the
   * corpus */
  rejects(op, "C5", prog(x, SLICE("1, 0", "3, 6", "1, 2", "tensor<2x4xf32>"),
                         "tensor<2x4xf32>"));
}

/* ---- reverse and transpose of a 2x3 tensor ---- */

static void test_reverse(void **state) {
  (void)state;
  const char *op = "stablehlo.reverse", *x = "%x: tensor<2x3xf32>";
#define REV(dims, res)                                                   \
  "\"stablehlo.reverse\"(%x) {dimensions = array<i64: " dims ">} : "    \
  "(tensor<2x3xf32>) -> " res
  accepts(prog(x, REV("1", "tensor<2x3xf32>"), "tensor<2x3xf32>"));
  /* C1 type(operand) = type(result) -- not in the corpus */
  rejects(op, "C1", prog(x, REV("1", "tensor<3x2xf32>"), "tensor<3x2xf32>"));
  /* C2 is_unique(dimensions) */
  rejects(op, "C2", prog(x, REV("1, 1", "tensor<2x3xf32>"),
                         "tensor<2x3xf32>"));
  /* C3 0 <= dimensions < rank(result) */
  rejects(op, "C3", prog(x, REV("2", "tensor<2x3xf32>"), "tensor<2x3xf32>"));
#undef REV
}

static void test_transpose(void **state) {
  (void)state;
  const char *op = "stablehlo.transpose", *x = "%x: tensor<2x3xf32>";
#define TR(perm, res)                                                    \
  "\"stablehlo.transpose\"(%x) {permutation = array<i64: " perm ">} : " \
  "(tensor<2x3xf32>) -> " res
  accepts(prog(x, TR("1, 0", "tensor<3x2xf32>"), "tensor<3x2xf32>"));
  /* C1 element_type(result) = element_type(operand) */
  rejects(op, "C1", prog(x, TR("1, 0", "tensor<3x2xf64>"), "tensor<3x2xf64>"));
  /* C2 permutation is a permutation of range(rank(operand)) */
  rejects(op, "C2", prog(x, TR("0, 0", "tensor<2x2xf32>"), "tensor<2x2xf32>"));
  /* C3 shape(result) = dim(operand, permutation...) */
  rejects(op, "C3", prog(x, TR("1, 0", "tensor<2x3xf32>"), "tensor<2x3xf32>"));
#undef TR
}

/* ---- compare of two tensor<3xf32> ---- */

#define CMP(b_type, attrs, res)                                            \
  "\"stablehlo.compare\"(%a, %b) {comparison_direction = "                \
  "#stablehlo<comparison_direction LT>" attrs "} : (tensor<3xf32>, " b_type \
  ") -> " res

static void test_compare(void **state) {
  (void)state;
  const char *op = "stablehlo.compare";
  const char *ab = "%a: tensor<3xf32>, %b: tensor<3xf32>";
  accepts(prog(ab, CMP("tensor<3xf32>", "", "tensor<3xi1>"), "tensor<3xi1>"));
  accepts(prog(ab, CMP("tensor<3xf32>", ", compare_type = "
                       "#stablehlo<comparison_type TOTALORDER>",
                       "tensor<3xi1>"), "tensor<3xi1>"));
  /* C1 baseline_element_type(lhs) = baseline_element_type(rhs) -- not in
   * the corpus */
  rejects(op, "C1", prog("%a: tensor<3xf32>, %b: tensor<3xf64>",
                         CMP("tensor<3xf64>", "", "tensor<3xi1>"),
                         "tensor<3xi1>"));
  /* C2 shape(lhs) = shape(rhs) = shape(result) -- not in the corpus */
  rejects(op, "C2", prog(ab, CMP("tensor<3xf32>", "", "tensor<2xi1>"),
                         "tensor<2xi1>"));
  /* C3 compare_type fits the element type: FLOAT or TOTALORDER for
   * floats, SIGNED for signed integers, UNSIGNED for unsigned and i1 --
   * not in the corpus */
  rejects(op, "C3", prog(ab, CMP("tensor<3xf32>", ", compare_type = "
                                 "#stablehlo<comparison_type SIGNED>",
                                 "tensor<3xi1>"), "tensor<3xi1>"));
  const char *ints = "\"stablehlo.compare\"(%%a, %%b) {comparison_direction = "
                     "#stablehlo<comparison_direction LT>, compare_type = "
                     "#stablehlo<comparison_type %s>} : (tensor<3x%s>, "
                     "tensor<3x%s>) -> tensor<3xi1>";
  char text[512], params[128];
  snprintf(text, sizeof text, ints, "UNSIGNED", "i32", "i32");
  snprintf(params, sizeof params, "%%a: tensor<3xi32>, %%b: tensor<3xi32>");
  rejects(op, "C3", prog(params, text, "tensor<3xi1>"));
  snprintf(text, sizeof text, ints, "UNSIGNED", "i1", "i1");
  snprintf(params, sizeof params, "%%a: tensor<3xi1>, %%b: tensor<3xi1>");
  accepts(prog(params, text, "tensor<3xi1>"));
}

/* ---- clamp of tensor<3xf32> between two scalars ---- */

static void test_clamp(void **state) {
  (void)state;
  const char *op = "stablehlo.clamp";
  char params[256], text[512];
#define CLAMP(lo, hi, res)                                                  \
  snprintf(params, sizeof params, "%%lo: %s, %%x: tensor<3xf32>, %%hi: %s", \
           lo, hi);                                                         \
  snprintf(text, sizeof text, "\"stablehlo.clamp\"(%%lo, %%x, %%hi) : "     \
           "(%s, tensor<3xf32>, %s) -> %s", lo, hi, res)
  CLAMP("tensor<f32>", "tensor<3xf32>", "tensor<3xf32>");
  accepts(prog(params, text, "tensor<3xf32>"));
  /* C1 rank(min) = 0 or shape(min) = shape(operand) */
  CLAMP("tensor<2xf32>", "tensor<f32>", "tensor<3xf32>");
  rejects(op, "C1", prog(params, text, "tensor<3xf32>"));
  /* C2 rank(max) = 0 or shape(max) = shape(operand) */
  CLAMP("tensor<f32>", "tensor<2xf32>", "tensor<3xf32>");
  rejects(op, "C2", prog(params, text, "tensor<3xf32>"));
  /* C3 min, operand and max share the element type -- not in the corpus */
  CLAMP("tensor<f64>", "tensor<f32>", "tensor<3xf32>");
  rejects(op, "C3", prog(params, text, "tensor<3xf32>"));
  /* C4 baseline_type(operand) = baseline_type(result) */
  CLAMP("tensor<f32>", "tensor<f32>", "tensor<4xf32>");
  rejects(op, "C4", prog(params, text, "tensor<4xf32>"));
#undef CLAMP
}

/* ---- complex, real, imag ---- */

static void test_complex_parts(void **state) {
  (void)state;
  const char *ab = "%a: tensor<2xf32>, %b: tensor<2xf32>";
#define CPLX(b_type, res)                                                  \
  "\"stablehlo.complex\"(%a, %b) : (tensor<2xf32>, " b_type ") -> " res
  accepts(prog(ab, CPLX("tensor<2xf32>", "tensor<2xcomplex<f32>>"),
               "tensor<2xcomplex<f32>>"));
  /* complex C1 type(lhs) = type(rhs) -- not in the corpus */
  rejects("stablehlo.complex", "C1",
          prog("%a: tensor<2xf32>, %b: tensor<2xf64>",
               CPLX("tensor<2xf64>", "tensor<2xcomplex<f32>>"),
               "tensor<2xcomplex<f32>>"));
  /* complex C2 shape(result) = shape(lhs) -- not in the corpus */
  rejects("stablehlo.complex", "C2",
          prog(ab, CPLX("tensor<2xf32>", "tensor<3xcomplex<f32>>"),
               "tensor<3xcomplex<f32>>"));
  /* complex C3 element_type(result) = complex<element_type(lhs)> -- not
   * in the corpus */
  rejects("stablehlo.complex", "C3",
          prog(ab, CPLX("tensor<2xf32>", "tensor<2xcomplex<f64>>"),
               "tensor<2xcomplex<f64>>"));
#undef CPLX
  const char *z = "%z: tensor<2xcomplex<f32>>";
  const char *parts[] = {"stablehlo.real", "stablehlo.imag"};
  for (int i = 0; i < 2; i++) {
    char text[256];
    snprintf(text, sizeof text, "\"%s\"(%%z) : (tensor<2xcomplex<f32>>) -> "
             "tensor<2xf32>", parts[i]);
    accepts(prog(z, text, "tensor<2xf32>"));
    /* C1 shape(result) = shape(operand) -- not in the corpus */
    snprintf(text, sizeof text, "\"%s\"(%%z) : (tensor<2xcomplex<f32>>) -> "
             "tensor<3xf32>", parts[i]);
    rejects(parts[i], "C1", prog(z, text, "tensor<3xf32>"));
    /* C2 element_type(result) is the complex's part type */
    snprintf(text, sizeof text, "\"%s\"(%%z) : (tensor<2xcomplex<f32>>) -> "
             "tensor<2xf64>", parts[i]);
    rejects(parts[i], "C2", prog(z, text, "tensor<2xf64>"));
  }
}

/* ---- sort and map, with their regions ---- */

static const char *sort_text(const char *in, const char *arg, int dim,
                             const char *res) {
  static char buf[1024];
  snprintf(buf, sizeof buf,
           "func.func @main(%%x: %s) -> %s {\n"
           "  %%0 = \"stablehlo.sort\"(%%x) ({\n"
           "  ^bb0(%%a: %s, %%b: %s):\n"
           "    %%c = \"stablehlo.compare\"(%%a, %%b) {comparison_direction = "
           "#stablehlo<comparison_direction LT>} : (%s, %s) -> tensor<i1>\n"
           "    \"stablehlo.return\"(%%c) : (tensor<i1>) -> ()\n"
           "  }) {dimension = %d : i64} : (%s) -> %s\n"
           "  func.return %%0 : %s\n}\n",
           in, res, arg, arg, arg, arg, dim, in, res, res);
  return buf;
}

static void test_sort(void **state) {
  (void)state;
  const char *op = "stablehlo.sort";
  accepts(sort_text("tensor<4xf32>", "tensor<f32>", 0, "tensor<4xf32>"));
  accepts(sort_text("tensor<4xf32>", "tensor<f32>", -1, "tensor<4xf32>"));
  /* C1 0 < size(inputs) -- not in the corpus */
  rejects_at("2:3", op, "C1",
             "func.func @main() {\n"
             "  \"stablehlo.sort\"() ({\n"
             "    %c = stablehlo.constant dense<true> : tensor<i1>\n"
             "    \"stablehlo.return\"(%c) : (tensor<i1>) -> ()\n"
             "  }) {dimension = 0 : i64} : () -> ()\n"
             "  func.return\n}\n");
  /* C2 type(inputs...) = type(results...) -- not in the corpus */
  rejects(op, "C2", sort_text("tensor<4xf32>", "tensor<f32>", 0,
                              "tensor<4xf64>"));
  /* C3 same(shape(inputs...) + shape(results...)) -- not in the corpus
   * (two results: the op starts at 2:10) */
  rejects_at("2:10", op, "C3",
          "func.func @main(%x: tensor<4xf32>, %y: tensor<3xf32>) -> "
          "tensor<4xf32> {\n"
          "  %0:2 = \"stablehlo.sort\"(%x, %y) ({\n"
          "  ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<f32>, "
          "%d: tensor<f32>):\n"
          "    %l = \"stablehlo.compare\"(%a, %b) {comparison_direction = "
          "#stablehlo<comparison_direction LT>} : (tensor<f32>, tensor<f32>) "
          "-> tensor<i1>\n"
          "    \"stablehlo.return\"(%l) : (tensor<i1>) -> ()\n"
          "  }) {dimension = 0 : i64} : (tensor<4xf32>, tensor<3xf32>) -> "
          "(tensor<4xf32>, tensor<3xf32>)\n"
          "  func.return %0#0 : tensor<4xf32>\n}\n");
  /* C4 -R <= dimension < R */
  rejects(op, "C4", sort_text("tensor<4xf32>", "tensor<f32>", 1,
                              "tensor<4xf32>"));
  /* C5 comparator: (tensor<E>, tensor<E>) -> tensor<i1> -- not in the
   * corpus */
  rejects(op, "C5", sort_text("tensor<4xf32>", "tensor<f64>", 0,
                              "tensor<4xf32>"));
}

static const char *map_text(const char *b_type, const char *res) {
  static char buf[1024];
  snprintf(buf, sizeof buf,
           "func.func @main(%%a: tensor<4xf32>, %%b: %s) -> %s {\n"
           "  %%0 = \"stablehlo.map\"(%%a, %%b) ({\n"
           "  ^bb0(%%x: tensor<f32>, %%y: tensor<f32>):\n"
           "    %%s = \"stablehlo.add\"(%%x, %%y) : (tensor<f32>, tensor<f32>) "
           "-> tensor<f32>\n"
           "    \"stablehlo.return\"(%%s) : (tensor<f32>) -> ()\n"
           "  }) {dimensions = array<i64: 0>} : (tensor<4xf32>, %s) -> %s\n"
           "  func.return %%0 : %s\n}\n",
           b_type, res, b_type, res, res);
  return buf;
}

static void test_map(void **state) {
  (void)state;
  accepts(map_text("tensor<4xf32>", "tensor<4xf32>"));
  /* C1 shape(inputs...) = shape(result) -- not in the corpus */
  rejects("stablehlo.map", "C1", map_text("tensor<4xf32>", "tensor<3xf32>"));
  rejects("stablehlo.map", "C1", map_text("tensor<3xf32>", "tensor<4xf32>"));
  /* C2 0 < size(inputs) -- not in the corpus */
  rejects("stablehlo.map", "C2",
          prog("", "\"stablehlo.map\"() ({\n"
               "    %c = stablehlo.constant dense<1.0> : tensor<f32>\n"
               "    \"stablehlo.return\"(%c) : (tensor<f32>) -> ()\n"
               "  }) {dimensions = array<i64>} : () -> tensor<f32>",
               "tensor<f32>"));
}

/* ---- tuple, optimization_barrier, reduce_precision, popcnt ---- */

static void test_same_type_ops(void **state) {
  (void)state;
  const char *ab = "%a: tensor<f32>, %b: tensor<i32>";
  accepts(prog(ab, "\"stablehlo.tuple\"(%a, %b) : (tensor<f32>, tensor<i32>) "
               "-> tuple<tensor<f32>, tensor<i32>>",
               "tuple<tensor<f32>, tensor<i32>>"));
  /* tuple C1 result is tuple<type(val)...> -- not in the corpus */
  rejects("stablehlo.tuple", "C1",
          prog(ab, "\"stablehlo.tuple\"(%a, %b) : (tensor<f32>, tensor<i32>) "
               "-> tuple<tensor<f32>, tensor<f32>>",
               "tuple<tensor<f32>, tensor<f32>>"));
  const char *a = "%a: tensor<f32>";
  accepts(prog(a, "\"stablehlo.optimization_barrier\"(%a) : (tensor<f32>) -> "
               "tensor<f32>", "tensor<f32>"));
  /* optimization_barrier C1 type(operand...) = type(result...) -- not in
   * the corpus */
  rejects("stablehlo.optimization_barrier", "C1",
          prog(a, "\"stablehlo.optimization_barrier\"(%a) : (tensor<f32>) -> "
               "tensor<i32>", "tensor<i32>"));
  const char *x = "%x: tensor<3xf32>";
#define RP(e, m, res)                                                       \
  "\"stablehlo.reduce_precision\"(%x) {exponent_bits = " e " : i32, "      \
  "mantissa_bits = " m " : i32} : (tensor<3xf32>) -> " res
  accepts(prog(x, RP("5", "10", "tensor<3xf32>"), "tensor<3xf32>"));
  /* reduce_precision C1 baseline_type(operand) = baseline_type(output) --
   * not in the corpus */
  rejects("stablehlo.reduce_precision", "C1",
          prog(x, RP("5", "10", "tensor<3xf64>"), "tensor<3xf64>"));
  /* C2 1 <= exponent_bits */
  rejects("stablehlo.reduce_precision", "C2",
          prog(x, RP("0", "10", "tensor<3xf32>"), "tensor<3xf32>"));
  /* C3 0 <= mantissa_bits */
  rejects("stablehlo.reduce_precision", "C3",
          prog(x, RP("5", "-1", "tensor<3xf32>"), "tensor<3xf32>"));
#undef RP
  const char *i = "%x: tensor<3xi32>";
  accepts(prog(i, "\"stablehlo.popcnt\"(%x) : (tensor<3xi32>) -> "
               "tensor<3xi32>", "tensor<3xi32>"));
  /* popcnt C1 type(operand) = type(result) -- not in the corpus */
  rejects("stablehlo.popcnt", "C1",
          prog(i, "\"stablehlo.popcnt\"(%x) : (tensor<3xi32>) -> "
               "tensor<3xi64>", "tensor<3xi64>"));
}

/* ---- cholesky, abs, uniform_quantize, uniform_dequantize ---- */

static void test_unary_typed(void **state) {
  (void)state;
  const char *a = "%a: tensor<3x3xf32>";
#define CHOL(in, res)                                                       \
  "\"stablehlo.cholesky\"(%a) {lower = true} : (" in ") -> " res
  accepts(prog(a, CHOL("tensor<3x3xf32>", "tensor<3x3xf32>"),
               "tensor<3x3xf32>"));
  /* cholesky C1 baseline_type(a) = baseline_type(result) -- not in the
   * corpus */
  rejects("stablehlo.cholesky", "C1",
          prog(a, CHOL("tensor<3x3xf32>", "tensor<3x3xf64>"),
               "tensor<3x3xf64>"));
  /* C2 2 <= rank(a) */
  rejects("stablehlo.cholesky", "C2",
          prog("%a: tensor<3xf32>", CHOL("tensor<3xf32>", "tensor<3xf32>"),
               "tensor<3xf32>"));
  /* C3 dim(a, -2) = dim(a, -1) */
  rejects("stablehlo.cholesky", "C3",
          prog("%a: tensor<3x2xf32>", CHOL("tensor<3x2xf32>",
                                            "tensor<3x2xf32>"),
               "tensor<3x2xf32>"));
#undef CHOL
  const char *x = "%x: tensor<3xf32>";
  accepts(prog(x, "\"stablehlo.abs\"(%x) : (tensor<3xf32>) -> tensor<3xf32>",
               "tensor<3xf32>"));
  accepts(prog("%x: tensor<3xcomplex<f32>>",
               "\"stablehlo.abs\"(%x) : (tensor<3xcomplex<f32>>) -> "
               "tensor<3xf32>", "tensor<3xf32>"));
  /* abs C1 shape(result) = shape(operand) -- not in the corpus */
  rejects("stablehlo.abs", "C1",
          prog(x, "\"stablehlo.abs\"(%x) : (tensor<3xf32>) -> tensor<2xf32>",
               "tensor<2xf32>"));
  /* abs C2 the result's element type: the complex's part type, else the
   * operand's */
  rejects("stablehlo.abs", "C2",
          prog("%x: tensor<3xcomplex<f32>>",
               "\"stablehlo.abs\"(%x) : (tensor<3xcomplex<f32>>) -> "
               "tensor<3xcomplex<f32>>", "tensor<3xcomplex<f32>>"));
  const char *q = "tensor<2x!quant.uniform<i8:f32, 5.000000e-01>>";
  char text[512], params[256];
  snprintf(text, sizeof text, "\"stablehlo.uniform_quantize\"(%%x) : "
           "(tensor<2xf32>) -> %s", q);
  accepts(prog("%x: tensor<2xf32>", text, q));
  /* uniform_quantize C1 shape(operand) = shape(result) -- not in the
   * corpus */
  snprintf(text, sizeof text, "\"stablehlo.uniform_quantize\"(%%x) : "
           "(tensor<3xf32>) -> %s", q);
  rejects("stablehlo.uniform_quantize", "C1",
          prog("%x: tensor<3xf32>", text, q));
  /* C2 expressed_type(result) = element_type(operand) for a float
   * operand */
  snprintf(text, sizeof text, "\"stablehlo.uniform_quantize\"(%%x) : "
           "(tensor<2xf64>) -> %s", q);
  rejects("stablehlo.uniform_quantize", "C2",
          prog("%x: tensor<2xf64>", text, q));
  snprintf(params, sizeof params, "%%q: %s", q);
  snprintf(text, sizeof text, "\"stablehlo.uniform_dequantize\"(%%q) : "
           "(%s) -> tensor<2xf32>", q);
  accepts(prog(params, text, "tensor<2xf32>"));
  /* uniform_dequantize C1 shape(operand) = shape(result) -- not in the
   * corpus */
  snprintf(text, sizeof text, "\"stablehlo.uniform_dequantize\"(%%q) : "
           "(%s) -> tensor<3xf32>", q);
  rejects("stablehlo.uniform_dequantize", "C1",
          prog(params, text, "tensor<3xf32>"));
  /* C2 element_type(result) = expressed_type(operand) -- not in the
   * corpus */
  snprintf(text, sizeof text, "\"stablehlo.uniform_dequantize\"(%%q) : "
           "(%s) -> tensor<2xf64>", q);
  rejects("stablehlo.uniform_dequantize", "C2",
          prog(params, text, "tensor<2xf64>"));
}

/* ---- batch_norm_inference and batch_norm_training on 2x3, feature 1 ---- */

static const char *bni_text(int feature, const char *scale,
                            const char *offset, const char *mean,
                            const char *var, const char *res) {
  static char buf[1024];
  snprintf(buf, sizeof buf,
           "func.func @main(%%x: tensor<2x3xf32>, %%s: %s, %%o: %s, %%m: %s, "
           "%%v: %s) -> %s {\n"
           "  %%0 = \"stablehlo.batch_norm_inference\"(%%x, %%s, %%o, %%m, %%v) "
           "{epsilon = 1.0e-05 : f32, feature_index = %d : i64} : "
           "(tensor<2x3xf32>, %s, %s, %s, %s) -> %s\n"
           "  func.return %%0 : %s\n}\n",
           scale, offset, mean, var, res, feature, scale, offset, mean, var,
           res, res);
  return buf;
}

static const char *bnt_text(int feature, const char *scale,
                            const char *offset, const char *out,
                            const char *mean, const char *var) {
  static char buf[1024];
  snprintf(buf, sizeof buf,
           "func.func @main(%%x: tensor<2x3xf32>, %%s: %s, %%o: %s) -> %s {\n"
           "  %%0:3 = \"stablehlo.batch_norm_training\"(%%x, %%s, %%o) "
           "{epsilon = 1.0e-05 : f32, feature_index = %d : i64} : "
           "(tensor<2x3xf32>, %s, %s) -> (%s, %s, %s)\n"
           "  func.return %%0#0 : %s\n}\n",
           scale, offset, out, feature, scale, offset, out, mean, var, out);
  return buf;
}

static void test_batch_norm(void **state) {
  (void)state;
  const char *v3 = "tensor<3xf32>", *v2 = "tensor<2xf32>";
  const char *d3 = "tensor<3xf64>", *x = "tensor<2x3xf32>";
  const char *op = "stablehlo.batch_norm_inference";
  accepts(bni_text(1, v3, v3, v3, v3, x));
  /* C1 0 <= feature_index < rank(operand) */
  rejects(op, "C1", bni_text(2, v3, v3, v3, v3, x));
  /* C2 one baseline element type for all -- not in the corpus */
  rejects(op, "C2", bni_text(1, d3, v3, v3, v3, x));
  /* C3..C6 size(scale|offset|mean|variance) = dim(operand, feature_index)
   * -- C4, C5, C6 not in the corpus */
  rejects(op, "C3", bni_text(1, v2, v3, v3, v3, x));
  rejects(op, "C4", bni_text(1, v3, v2, v3, v3, x));
  rejects(op, "C5", bni_text(1, v3, v3, v2, v3, x));
  rejects(op, "C6", bni_text(1, v3, v3, v3, v2, x));
  /* C7 baseline_type(operand) = baseline_type(result) -- not in the
   * corpus */
  rejects(op, "C7", bni_text(1, v3, v3, v3, v3, "tensor<3x2xf32>"));
  op = "stablehlo.batch_norm_training";
  accepts(bnt_text(1, v3, v3, x, v3, v3));
  rejects_at("2:10", op, "C1", bnt_text(2, v3, v3, x, v3, v3));
  /* C2 one baseline element type -- not in the corpus */
  rejects_at("2:10", op, "C2", bnt_text(1, d3, v3, x, v3, v3));
  /* C3..C6 sizes of scale, offset, batch_mean, batch_var -- C4..C6 not in
   * the corpus */
  rejects_at("2:10", op, "C3", bnt_text(1, v2, v3, x, v3, v3));
  rejects_at("2:10", op, "C4", bnt_text(1, v3, v2, x, v3, v3));
  rejects_at("2:10", op, "C5", bnt_text(1, v3, v3, x, v2, v3));
  rejects_at("2:10", op, "C6", bnt_text(1, v3, v3, x, v3, v2));
  /* C7 baseline_type(output) = baseline_type(operand) -- not in the
   * corpus */
  rejects_at("2:10", op, "C7", bnt_text(1, v3, v3, "tensor<3x2xf32>", v3,
                                        v3));
}

/* ---- rng, while, case ---- */

static const char *rng_text(const char *a, const char *dist,
                            const char *shape, const char *res) {
  static char buf[1024];
  snprintf(buf, sizeof buf,
           "func.func @main(%%a: %s, %%b: tensor<f32>) -> %s {\n"
           "  %%s = stablehlo.constant dense<[%s]> : tensor<2xi64>\n"
           "  %%0 = \"stablehlo.rng\"(%%a, %%b, %%s) {rng_distribution = "
           "#stablehlo<rng_distribution %s>} : (%s, tensor<f32>, "
           "tensor<2xi64>) -> %s\n"
           "  func.return %%0 : %s\n}\n",
           a, res, shape, dist, a, res, res);
  return buf;
}

static const char *while_text(const char *cond_arg, const char *body_ret,
                              const char *res) {
  static char buf[1024];
  snprintf(buf, sizeof buf,
           "func.func @main(%%x: tensor<i64>) -> %s {\n"
           "  %%0 = \"stablehlo.while\"(%%x) ({\n"
           "  ^bb0(%%a: %s):\n"
           "    %%c = stablehlo.constant dense<true> : tensor<i1>\n"
           "    \"stablehlo.return\"(%%c) : (tensor<i1>) -> ()\n"
           "  }, {\n"
           "  ^bb0(%%a: tensor<i64>):\n"
           "    %%r = stablehlo.convert %%a : (tensor<i64>) -> %s\n"
           "    \"stablehlo.return\"(%%r) : (%s) -> ()\n"
           "  }) : (tensor<i64>) -> %s\n"
           "  func.return %%0 : %s\n}\n",
           res, cond_arg, body_ret, body_ret, res, res);
  return buf;
}

static const char *case_text(int n_branches, const char *second,
                             const char *res) {
  static char buf[1024];
  const char *branch2 = n_branches > 1 ? ", {\n"
                                         "    \"stablehlo.return\"(%y) : "
                                         "(%s) -> ()\n  }" : "";
  char b2[256];
  snprintf(b2, sizeof b2, branch2, second);
  snprintf(buf, sizeof buf,
           "func.func @main(%%i: tensor<i32>, %%x: tensor<f32>, %%y: %s) -> "
           "%s {\n"
           "  %%0 = \"stablehlo.case\"(%%i) ({\n"
           "    \"stablehlo.return\"(%%x) : (tensor<f32>) -> ()\n"
           "  }%s) : (tensor<i32>) -> %s\n"
           "  func.return %%0 : %s\n}\n",
           second, res, b2, res, res);
  return buf;
}

static void test_control(void **state) {
  (void)state;
  const char *f = "tensor<f32>";
  accepts(rng_text(f, "UNIFORM", "3, 4", "tensor<3x4xf32>"));
  /* rng C1 element_type(a) = element_type(b) = element_type(result) --
   * not in the corpus */
  rejects_at("3:8", "stablehlo.rng", "C1",
             rng_text("tensor<f64>", "UNIFORM", "3, 4", "tensor<3x4xf32>"));
  /* C2 NORMAL needs floats -- not in the corpus */
  accepts(rng_text(f, "NORMAL", "3, 4", "tensor<3x4xf32>"));
  rejects_at("3:8", "stablehlo.rng", "C2",
             "func.func @main(%a: tensor<i32>, %b: tensor<i32>) -> "
             "tensor<3x4xi32> {\n"
             "  %s = stablehlo.constant dense<[3, 4]> : tensor<2xi64>\n"
             "  %0 = \"stablehlo.rng\"(%a, %b, %s) {rng_distribution = "
             "#stablehlo<rng_distribution NORMAL>} : (tensor<i32>, "
             "tensor<i32>, tensor<2xi64>) -> tensor<3x4xi32>\n"
             "  func.return %0 : tensor<3x4xi32>\n}\n");
  /* C3 shape(result) = shape */
  rejects_at("3:8", "stablehlo.rng", "C3",
             rng_text(f, "UNIFORM", "3, 5", "tensor<3x4xf32>"));
  const char *i64 = "tensor<i64>";
  accepts(while_text(i64, i64, i64));
  /* while C1 cond takes the operands' types -- not in the corpus */
  rejects("stablehlo.while", "C1", while_text("tensor<i32>", i64, i64));
  /* C2 body maps the operands' types to themselves -- not in the corpus */
  rejects("stablehlo.while", "C2", while_text(i64, "tensor<i32>", i64));
  /* C3 type(results...) = type(operand...) -- not in the corpus */
  rejects("stablehlo.while", "C3", while_text(i64, i64, "tensor<i32>"));
  accepts(case_text(2, f, f));
  /* case C3 same(output_types(branches...)) */
  rejects("stablehlo.case", "C3", case_text(2, "tensor<f64>", f));
  /* C4 type(results...) = output_types(branches[0]) */
  rejects("stablehlo.case", "C4", case_text(1, f, "tensor<f64>"));
}

/* ---- elementwise ops: C1, the operands' and the result's types agree
 * (shape(operand) = shape(result) for convert and is_finite) -- C1 of
 * every op here but add and is_finite is in no corpus case ---- */

static void test_elementwise_c1(void **state) {
  (void)state;
  static const struct {
    const char *op, *type; /* an element type the op takes */
  } unary[] = {
      {"negate", "f32"}, {"sign", "f32"}, {"sqrt", "f32"}, {"rsqrt", "f32"},
      {"cbrt", "f32"}, {"exponential", "f32"},
      {"exponential_minus_one", "f32"}, {"log", "f32"},
      {"log_plus_one", "f32"}, {"logistic", "f32"}, {"sine", "f32"},
      {"cosine", "f32"}, {"tanh", "f32"}, {"floor", "f32"}, {"ceil", "f32"},
      {"round_nearest_afz", "f32"}, {"round_nearest_even", "f32"},
      {"not", "i32"}, {"count_leading_zeros", "i32"},
  }, binary[] = {
      {"add", "f32"}, {"subtract", "f32"}, {"multiply", "f32"},
      {"divide", "f32"}, {"remainder", "f32"}, {"power", "f32"},
      {"maximum", "f32"}, {"minimum", "f32"}, {"atan2", "f32"},
      {"and", "i32"}, {"or", "i32"}, {"xor", "i32"}, {"shift_left", "i32"},
      {"shift_right_arithmetic", "i32"}, {"shift_right_logical", "i32"},
  };
  char op[64], params[128], text[512], res[64];
  for (size_t i = 0; i < sizeof unary / sizeof unary[0]; i++) {
    const char *t = unary[i].type;
    snprintf(op, sizeof op, "stablehlo.%s", unary[i].op);
    snprintf(params, sizeof params, "%%x: tensor<3x%s>", t);
    snprintf(res, sizeof res, "tensor<3x%s>", t);
    snprintf(text, sizeof text, "\"%s\"(%%x) : (tensor<3x%s>) -> %s", op, t,
             res);
    accepts(prog(params, text, res));
    snprintf(res, sizeof res, "tensor<2x%s>", t);
    snprintf(text, sizeof text, "\"%s\"(%%x) : (tensor<3x%s>) -> %s", op, t,
             res);
    rejects(op, "C1", prog(params, text, res));
  }
  for (size_t i = 0; i < sizeof binary / sizeof binary[0]; i++) {
    const char *t = binary[i].type, *other = t[0] == 'f' ? "f64" : "i64";
    snprintf(op, sizeof op, "stablehlo.%s", binary[i].op);
    snprintf(res, sizeof res, "tensor<3x%s>", t);
    snprintf(params, sizeof params, "%%a: tensor<3x%s>, %%b: tensor<3x%s>", t,
             t);
    snprintf(text, sizeof text, "\"%s\"(%%a, %%b) : (tensor<3x%s>, "
             "tensor<3x%s>) -> %s", op, t, t, res);
    accepts(prog(params, text, res));
    /* rhs of another element type */
    snprintf(params, sizeof params, "%%a: tensor<3x%s>, %%b: tensor<3x%s>", t,
             other);
    snprintf(text, sizeof text, "\"%s\"(%%a, %%b) : (tensor<3x%s>, "
             "tensor<3x%s>) -> %s", op, t, other, res);
    rejects(op, "C1", prog(params, text, res));
  }
  /* convert and is_finite: C1 shape(operand) = shape(result) */
  accepts(prog("%x: tensor<3xf32>", "\"stablehlo.convert\"(%x) : "
               "(tensor<3xf32>) -> tensor<3xi32>", "tensor<3xi32>"));
  rejects("stablehlo.convert", "C1",
          prog("%x: tensor<3xf32>", "\"stablehlo.convert\"(%x) : "
               "(tensor<3xf32>) -> tensor<2xi32>", "tensor<2xi32>"));
  accepts(prog("%x: tensor<3xf32>", "\"stablehlo.is_finite\"(%x) : "
               "(tensor<3xf32>) -> tensor<3xi1>", "tensor<3xi1>"));
  rejects("stablehlo.is_finite", "C1",
          prog("%x: tensor<3xf32>", "\"stablehlo.is_finite\"(%x) : "
               "(tensor<3xf32>) -> tensor<2xi1>", "tensor<2xi1>"));
}

/* ---- tensor.cast (MLIR's tensor dialect): compatible types only ---- */

static void test_tensor_cast(void **state) {
  (void)state;
  accepts(prog("%x: tensor<3xf32>", "tensor.cast %x : tensor<3xf32> to "
               "tensor<?xf32>", "tensor<?xf32>"));
  accepts(prog("%x: tensor<?xf32>", "\"tensor.cast\"(%x) : (tensor<?xf32>) "
               "-> tensor<3xf32>", "tensor<3xf32>"));
  char buf[SHLO_DIAG_MAX + 256];
  const char *bad[] = {
      prog("%x: tensor<3xf32>", "tensor.cast %x : tensor<3xf32> to "
           "tensor<4xf32>", "tensor<4xf32>"),
      prog("%x: tensor<3xf32>", "tensor.cast %x : tensor<3xf32> to "
           "tensor<3xf64>", "tensor<3xf64>"),
      prog("%x: tensor<3xf32>", "tensor.cast %x : tensor<3xf32> to "
           "tensor<3x1xf32>", "tensor<3x1xf32>"),
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char text[2048];
    snprintf(text, sizeof text, "%s", bad[i]); /* prog's buffer is reused */
    if (first_diag(text, buf, sizeof buf) != SHLO_EVERIFY ||
        !strstr(buf, "t.mlir:2:8: error: tensor.cast: operand type") ||
        !strstr(buf, "cast incompatible")) {
      fprintf(stderr, "tensor.cast accepted or misreported: %s\n%s", buf,
              text);
      fail();
    }
  }
}

/* ---- collectives, dot_general, rng_bit_generator ---- */

#define RG2 "replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>"
/* a reduction body, inside snprintf formats (hence %%) */
#define ADD_BODY                                                            \
  "({\n  ^bb0(%%a: tensor<f32>, %%b: tensor<f32>):\n"                       \
  "    %%s = \"stablehlo.add\"(%%a, %%b) : (tensor<f32>, tensor<f32>) -> "   \
  "tensor<f32>\n    \"stablehlo.return\"(%%s) : (tensor<f32>) -> ()\n  }) "

static void test_collectives(void **state) {
  (void)state;
  char text[1024];
  const char *op = "stablehlo.all_gather";
#define AG(dim, groups, in, res)                                            \
  snprintf(text, sizeof text, "\"stablehlo.all_gather\"(%%x) "             \
           "{all_gather_dim = %s : i64, replica_groups = %s} : (%s) -> %s", \
           dim, groups, in, res)
  AG("1", "dense<[[0, 1]]> : tensor<1x2xi64>", "tensor<2x2xf32>",
     "tensor<2x4xf32>");
  accepts(prog("%x: tensor<2x2xf32>", text, "tensor<2x4xf32>"));
  /* C1 0 <= all_gather_dim < rank(operand) */
  AG("2", "dense<[[0, 1]]> : tensor<1x2xi64>", "tensor<2x2xf32>",
     "tensor<2x4xf32>");
  rejects(op, "C1", prog("%x: tensor<2x2xf32>", text, "tensor<2x4xf32>"));
  /* C2 is_unique(replica_groups) */
  AG("1", "dense<[[0, 0]]> : tensor<1x2xi64>", "tensor<2x2xf32>",
     "tensor<2x4xf32>");
  rejects(op, "C2", prog("%x: tensor<2x2xf32>", text, "tensor<2x4xf32>"));
  /* C6 the result: all_gather_dim grown by the group size */
  AG("1", "dense<[[0, 1]]> : tensor<1x2xi64>", "tensor<2x2xf32>",
     "tensor<2x3xf32>");
  rejects(op, "C6", prog("%x: tensor<2x2xf32>", text, "tensor<2x3xf32>"));
#undef AG
  op = "stablehlo.all_reduce";
#define AR(res)                                                             \
  snprintf(text, sizeof text, "\"stablehlo.all_reduce\"(%%x) " ADD_BODY    \
           "{" RG2 "} : (tensor<4xf32>) -> %s", res)
  AR("tensor<4xf32>");
  accepts(prog("%x: tensor<4xf32>", text, "tensor<4xf32>"));
  /* C6 shape(result) = shape(operand) -- not in the corpus */
  AR("tensor<3xf32>");
  rejects(op, "C6", prog("%x: tensor<4xf32>", text, "tensor<3xf32>"));
  /* C7 element_type(result) = E -- not in the corpus */
  AR("tensor<4xf64>");
  rejects(op, "C7", prog("%x: tensor<4xf32>", text, "tensor<4xf64>"));
#undef AR
  op = "stablehlo.all_to_all";
#define A2A(sd, cd, sc, groups, in, res)                                    \
  snprintf(text, sizeof text, "\"stablehlo.all_to_all\"(%%x) "             \
           "{split_dimension = %s : i64, concat_dimension = %s : i64, "     \
           "split_count = %s : i64, replica_groups = %s} : (%s) -> %s",     \
           sd, cd, sc, groups, in, res)
  const char *g2 = "dense<[[0, 1]]> : tensor<1x2xi64>";
  A2A("0", "1", "2", g2, "tensor<4x2xf32>", "tensor<2x4xf32>");
  accepts(prog("%x: tensor<4x2xf32>", text, "tensor<2x4xf32>"));
  A2A("2", "1", "2", g2, "tensor<4x2xf32>", "tensor<2x4xf32>");
  rejects(op, "C1", prog("%x: tensor<4x2xf32>", text, "tensor<2x4xf32>"));
  A2A("0", "1", "2", g2, "tensor<3x2xf32>", "tensor<2x4xf32>");
  rejects(op, "C2", prog("%x: tensor<3x2xf32>", text, "tensor<2x4xf32>"));
  A2A("0", "2", "2", g2, "tensor<4x2xf32>", "tensor<2x4xf32>");
  rejects(op, "C3", prog("%x: tensor<4x2xf32>", text, "tensor<2x4xf32>"));
  A2A("0", "1", "0", g2, "tensor<4x2xf32>", "tensor<2x4xf32>");
  rejects(op, "C4", prog("%x: tensor<4x2xf32>", text, "tensor<2x4xf32>"));
  /* C5 is_unique(replica_groups) */
  A2A("0", "1", "2", "dense<[[0, 0]]> : tensor<1x2xi64>", "tensor<4x2xf32>",
      "tensor<2x4xf32>");
  rejects(op, "C5", prog("%x: tensor<4x2xf32>", text, "tensor<2x4xf32>"));
  /* C8 dim(replica_groups, 1) = split_count */
  A2A("0", "1", "2", "dense<[[0, 1, 2]]> : tensor<1x3xi64>",
      "tensor<4x2xf32>", "tensor<2x4xf32>");
  rejects(op, "C8", prog("%x: tensor<4x2xf32>", text, "tensor<2x4xf32>"));
  /* C9 the result's type */
  A2A("0", "1", "2", g2, "tensor<4x2xf32>", "tensor<4x2xf32>");
  rejects(op, "C9", prog("%x: tensor<4x2xf32>", text, "tensor<4x2xf32>"));
#undef A2A
  /* collective_broadcast C3 type(result) = type(operand) -- not in the
   * corpus */
  snprintf(text, sizeof text, "\"stablehlo.collective_broadcast\"(%%x) {"
           RG2 "} : (tensor<2xf32>) -> tensor<2xf32>");
  accepts(prog("%x: tensor<2xf32>", text, "tensor<2xf32>"));
  snprintf(text, sizeof text, "\"stablehlo.collective_broadcast\"(%%x) {"
           RG2 "} : (tensor<2xf32>) -> tensor<3xf32>");
  rejects("stablehlo.collective_broadcast", "C3",
          prog("%x: tensor<2xf32>", text, "tensor<3xf32>"));
  op = "stablehlo.collective_permute";
#define CP(pairs, res)                                                      \
  snprintf(text, sizeof text, "\"stablehlo.collective_permute\"(%%x) "     \
           "{source_target_pairs = %s} : (tensor<2xf32>) -> %s", pairs, res)
  CP("dense<[[0, 1], [1, 0]]> : tensor<2x2xi64>", "tensor<2xf32>");
  accepts(prog("%x: tensor<2xf32>", text, "tensor<2xf32>"));
  CP("dense<[[0, 1, 2]]> : tensor<1x3xi64>", "tensor<2xf32>");
  rejects(op, "C1", prog("%x: tensor<2xf32>", text, "tensor<2xf32>"));
  CP("dense<[[0, 1], [0, 2]]> : tensor<2x2xi64>", "tensor<2xf32>");
  rejects(op, "C2", prog("%x: tensor<2xf32>", text, "tensor<2xf32>"));
  CP("dense<[[0, 1], [2, 1]]> : tensor<2x2xi64>", "tensor<2xf32>");
  rejects(op, "C3", prog("%x: tensor<2xf32>", text, "tensor<2xf32>"));
  /* C5 type(result) = type(operand) -- not in the corpus */
  CP("dense<[[0, 1], [1, 0]]> : tensor<2x2xi64>", "tensor<3xf32>");
  rejects(op, "C5", prog("%x: tensor<2xf32>", text, "tensor<3xf32>"));
#undef CP
  op = "stablehlo.reduce_scatter";
#define RS(dim, groups, in, res)                                            \
  snprintf(text, sizeof text, "\"stablehlo.reduce_scatter\"(%%x) "         \
           ADD_BODY "{scatter_dimension = %s : i64, replica_groups = %s} : " \
           "(%s) -> %s", dim, groups, in, res)
  RS("0", g2, "tensor<4xf32>", "tensor<2xf32>");
  accepts(prog("%x: tensor<4xf32>", text, "tensor<2xf32>"));
  RS("0", g2, "tensor<3xf32>", "tensor<2xf32>");
  rejects(op, "C1", prog("%x: tensor<3xf32>", text, "tensor<2xf32>"));
  RS("1", g2, "tensor<4xf32>", "tensor<2xf32>");
  rejects(op, "C2", prog("%x: tensor<4xf32>", text, "tensor<2xf32>"));
  /* C3 is_unique(replica_groups) */
  RS("0", "dense<[[0, 0]]> : tensor<1x2xi64>", "tensor<4xf32>",
     "tensor<2xf32>");
  rejects(op, "C3", prog("%x: tensor<4xf32>", text, "tensor<2xf32>"));
  /* C8 the result's shape but at scatter_dimension */
  RS("0", g2, "tensor<4x2xf32>", "tensor<2x3xf32>");
  rejects(op, "C8", prog("%x: tensor<4x2xf32>", text, "tensor<2x3xf32>"));
  /* C9 element_type(result) = E */
  RS("0", g2, "tensor<4xf32>", "tensor<2xf64>");
  rejects(op, "C9", prog("%x: tensor<4xf32>", text, "tensor<2xf64>"));
#undef RS
}

static void test_dot_general_and_rng_bits(void **state) {
  (void)state;
  const char *op = "stablehlo.dot_general";
  char text[1024];
#define DG(b_type, res)                                                     \
  snprintf(text, sizeof text, "\"stablehlo.dot_general\"(%%a, %%b) "       \
           "{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_"       \
           "dimensions = [1], rhs_contracting_dimensions = [0]>} : "        \
           "(tensor<2x3xf32>, %s) -> %s", b_type, res)
  DG("tensor<3x4xf32>", "tensor<2x4xf32>");
  accepts(prog("%a: tensor<2x3xf32>, %b: tensor<3x4xf32>", text,
               "tensor<2x4xf32>"));
  /* C12 shape(result): batching, then lhs's and rhs's free dimensions --
   * not in the corpus */
  DG("tensor<3x4xf32>", "tensor<2x5xf32>");
  rejects(op, "C12", prog("%a: tensor<2x3xf32>, %b: tensor<3x4xf32>", text,
                          "tensor<2x5xf32>"));
  /* C13 (element_type(lhs) = element_type(rhs)) is not tested: StableHLO's
   * verifier accepts mixed element types, and so does this one. */
#undef DG
  op = "stablehlo.rng_bit_generator";
#define RBG(alg, in, out_state)                                             \
  snprintf(text, sizeof text,                                              \
           "func.func @main(%%s: %s) -> tensor<4xui32> {\n"                \
           "  %%0:2 = \"stablehlo.rng_bit_generator\"(%%s) {rng_algorithm = " \
           "#stablehlo<rng_algorithm %s>} : (%s) -> (%s, tensor<4xui32>)\n" \
           "  func.return %%0#1 : tensor<4xui32>\n}\n", in, alg, in,        \
           out_state)
  RBG("THREE_FRY", "tensor<2xui64>", "tensor<2xui64>");
  accepts(text);
  /* C1 type(initial_state) = type(output_state) */
  RBG("THREE_FRY", "tensor<2xui64>", "tensor<3xui64>");
  rejects_at("2:10", op, "C1", text);
  /* C2 size(initial_state): 2 for THREE_FRY, 2 or 3 for PHILOX -- not in
   * the corpus */
  RBG("THREE_FRY", "tensor<3xui64>", "tensor<3xui64>");
  rejects_at("2:10", op, "C2", text);
  RBG("PHILOX", "tensor<3xui64>", "tensor<3xui64>");
  accepts(text);
  RBG("PHILOX", "tensor<4xui64>", "tensor<4xui64>");
  rejects_at("2:10", op, "C2", text);
#undef RBG
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_concatenate),
      cmocka_unit_test(test_dynamic_slice),
      cmocka_unit_test(test_dynamic_update_slice),
      cmocka_unit_test(test_iota),
      cmocka_unit_test(test_get_tuple_element),
      cmocka_unit_test(test_pad),
      cmocka_unit_test(test_slice),
      cmocka_unit_test(test_reverse),
      cmocka_unit_test(test_transpose),
      cmocka_unit_test(test_compare),
      cmocka_unit_test(test_clamp),
      cmocka_unit_test(test_complex_parts),
      cmocka_unit_test(test_sort),
      cmocka_unit_test(test_map),
      cmocka_unit_test(test_same_type_ops),
      cmocka_unit_test(test_unary_typed),
      cmocka_unit_test(test_batch_norm),
      cmocka_unit_test(test_control),
      cmocka_unit_test(test_elementwise_c1),
      cmocka_unit_test(test_tensor_cast),
      cmocka_unit_test(test_collectives),
      cmocka_unit_test(test_dot_general_and_rng_bits),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
