/* SPDX-License-Identifier: Apache-2.0 */
/* One case per numbered constraint of convolution, reduce, reduce_window,
 * scatter and select_and_scatter, written from the spec's statement of
 * each (docs/spec.md): a program that breaks exactly that constraint must
 * be rejected with the constraint's label, at the op's line:column.  Each
 * op has a valid base program; a case replaces one piece of it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "verify_check.h"

/* Every base puts a single-result op at 2:8 (`  %0 = ...`); ops with two
 * results (`  %0:2 = ...`) start at 2:10. */
static void rejects(const char *op, const char *label, const char *text) {
  rejects_at(strstr(text, "%0:2") ? "2:10" : "2:8", op, label, text);
}


/* ---- convolution ----
 * Base: lhs [b, 0, f] = 2x4x2, rhs [0, i, o] = 2x2x2, result 2x3x2. */

typedef struct conv_case {
  const char *lhs, *rhs, *res, *dims, *attrs;
} conv_case;

static char *conv_text(conv_case c) {
  static char buf[2048];
  const char *lhs = c.lhs ? c.lhs : "tensor<2x4x2xf32>";
  const char *rhs = c.rhs ? c.rhs : "tensor<2x2x2xf32>";
  const char *res = c.res ? c.res : "tensor<2x3x2xf32>";
  snprintf(buf, sizeof buf,
           "func.func @main(%%l: %s, %%r: %s) -> %s {\n"
           "  %%0 = \"stablehlo.convolution\"(%%l, %%r) {dimension_numbers = "
           "%s%s%s} : (%s, %s) -> %s\n"
           "  func.return %%0 : %s\n}\n",
           lhs, rhs, res,
           c.dims ? c.dims : "#stablehlo.conv<[b, 0, f]x[0, i, o]->[b, 0, f]>",
           c.attrs && strstr(c.attrs, "group_count")
               ? ""
               : ", feature_group_count = 1 : i64, batch_group_count = 1 : i64",
           c.attrs ? c.attrs : "", lhs, rhs, res, res);
  return buf;
}

#define CONV_REJECTS(label, ...) \
  rejects("stablehlo.convolution", label, conv_text((conv_case){__VA_ARGS__}))

/* Raw dimension numbers with the given spatial lists. */
#define RAW(in_b, in_f, in_s, k_i, k_o, k_s, o_b, o_f, o_s)                    \
  "#stablehlo.conv<raw input_batch_dimension = " #in_b                         \
  ", input_feature_dimension = " #in_f ", input_spatial_dimensions = " in_s    \
  ", kernel_input_feature_dimension = " #k_i                                   \
  ", kernel_output_feature_dimension = " #k_o                                  \
  ", kernel_spatial_dimensions = " k_s ", output_batch_dimension = " #o_b      \
  ", output_feature_dimension = " #o_f ", output_spatial_dimensions = " o_s ">"

static void convolution_constraints(void **state) {
  (void)state;
  accepts(conv_text((conv_case){0}));
  accepts(conv_text((conv_case){.dims = RAW(0, 2, "[1]", 1, 2, "[0]", 0, 2,
                                            "[1]")}));
  /* C1 rank(lhs) = rank(rhs) = N. */
  CONV_REJECTS("C1", .rhs = "tensor<2x2xf32>");
  /* C2 size(window_strides) = N - 2; C3 0 < window_strides. */
  CONV_REJECTS("C2", .attrs = ", window_strides = array<i64: 1, 1>");
  CONV_REJECTS("C3", .attrs = ", window_strides = array<i64: 0>");
  /* C4 shape(padding) = [N - 2, 2]. */
  CONV_REJECTS("C4", .attrs = ", padding = dense<[[0, 0, 0]]> : "
                              "tensor<1x3xi64>");
  /* C5/C6 lhs_dilation: N - 2 entries, positive. */
  CONV_REJECTS("C5", .attrs = ", lhs_dilation = array<i64: 1, 1>");
  CONV_REJECTS("C6", .attrs = ", lhs_dilation = array<i64: 0>");
  /* C7/C8 rhs_dilation: N - 2 entries, positive. */
  CONV_REJECTS("C7", .attrs = ", rhs_dilation = array<i64: 1, 1>");
  CONV_REJECTS("C8", .attrs = ", rhs_dilation = array<i64: -1>");
  /* C9 size(window_reversal) = N - 2. */
  CONV_REJECTS("C9", .attrs = ", window_reversal = array<i1: false, true>");
  /* C10 dim(lhs, input_batch_dimension) % batch_group_count = 0 (the
   * kernel's output features, 3, divide by 3: only C10 fails). */
  rejects("stablehlo.convolution", "C10",
          "func.func @main(%l: tensor<2x4x2xf32>, %r: tensor<2x2x3xf32>) -> "
          "tensor<1x3x3xf32> {\n"
          "  %0 = \"stablehlo.convolution\"(%l, %r) {dimension_numbers = "
          "#stablehlo.conv<[b, 0, f]x[0, i, o]->[b, 0, f]>, "
          "feature_group_count = 1 : i64, batch_group_count = 3 : i64} : "
          "(tensor<2x4x2xf32>, tensor<2x2x3xf32>) -> tensor<1x3x3xf32>\n"
          "  func.return %0 : tensor<1x3x3xf32>\n}\n");
  /* C11 dim(lhs, input_feature_dimension) % feature_group_count = 0. */
  rejects("stablehlo.convolution", "C11",
          "func.func @main(%l: tensor<2x4x3xf32>, %r: tensor<2x1x2xf32>) -> "
          "tensor<2x3x2xf32> {\n"
          "  %0 = \"stablehlo.convolution\"(%l, %r) {dimension_numbers = "
          "#stablehlo.conv<[b, 0, f]x[0, i, o]->[b, 0, f]>, "
          "feature_group_count = 2 : i64, batch_group_count = 1 : i64} : "
          "(tensor<2x4x3xf32>, tensor<2x1x2xf32>) -> tensor<2x3x2xf32>\n"
          "  func.return %0 : tensor<2x3x2xf32>\n}\n");
  /* C12 size(input_spatial_dimensions) = N - 2. */
  CONV_REJECTS("C12", .dims = RAW(0, 2, "[1, 1]", 1, 2, "[0]", 0, 2, "[1]"));
  /* C13 input dimensions unique and within [0, N). */
  CONV_REJECTS("C13", .dims = RAW(0, 0, "[1]", 1, 2, "[0]", 0, 2, "[1]"));
  CONV_REJECTS("C13", .dims = RAW(0, 3, "[1]", 1, 2, "[0]", 0, 2, "[1]"));
  /* C14 dim(rhs, kernel_input_feature_dimension) =
   * dim(lhs, input_feature_dimension) / feature_group_count. */
  CONV_REJECTS("C14", .rhs = "tensor<2x1x2xf32>");
  /* C15 kernel output features % batch_group_count = 0. */
  rejects("stablehlo.convolution", "C15",
          "func.func @main(%l: tensor<2x4x2xf32>, %r: tensor<2x2x3xf32>) -> "
          "tensor<1x3x3xf32> {\n"
          "  %0 = \"stablehlo.convolution\"(%l, %r) {dimension_numbers = "
          "#stablehlo.conv<[b, 0, f]x[0, i, o]->[b, 0, f]>, "
          "feature_group_count = 1 : i64, batch_group_count = 2 : i64} : "
          "(tensor<2x4x2xf32>, tensor<2x2x3xf32>) -> tensor<1x3x3xf32>\n"
          "  func.return %0 : tensor<1x3x3xf32>\n}\n");
  /* C16 kernel output features % feature_group_count = 0. */
  rejects("stablehlo.convolution", "C16",
          "func.func @main(%l: tensor<2x4x2xf32>, %r: tensor<2x1x3xf32>) -> "
          "tensor<2x3x3xf32> {\n"
          "  %0 = \"stablehlo.convolution\"(%l, %r) {dimension_numbers = "
          "#stablehlo.conv<[b, 0, f]x[0, i, o]->[b, 0, f]>, "
          "feature_group_count = 2 : i64, batch_group_count = 1 : i64} : "
          "(tensor<2x4x2xf32>, tensor<2x1x3xf32>) -> tensor<2x3x3xf32>\n"
          "  func.return %0 : tensor<2x3x3xf32>\n}\n");
  /* C17 size(kernel_spatial_dimensions) = N - 2. */
  CONV_REJECTS("C17", .dims = RAW(0, 2, "[1]", 1, 2, "[]", 0, 2, "[1]"));
  CONV_REJECTS("C17", .dims = RAW(0, 2, "[1]", 1, 2, "[0, 0]", 0, 2, "[1]"));
  /* C18 kernel dimensions unique and within [0, N). */
  CONV_REJECTS("C18", .dims = RAW(0, 2, "[1]", 1, 1, "[0]", 0, 2, "[1]"));
  /* C19 size(output_spatial_dimensions) = N - 2. */
  CONV_REJECTS("C19", .dims = RAW(0, 2, "[1]", 1, 2, "[0]", 0, 2, "[]"));
  /* C20 output dimensions unique and within [0, N). */
  CONV_REJECTS("C20", .dims = RAW(0, 2, "[1]", 1, 2, "[0]", 0, 2, "[5]"));
  /* C21 0 < feature_group_count; C22 0 < batch_group_count. */
  CONV_REJECTS("C21", .attrs = ", feature_group_count = 0 : i64");
  CONV_REJECTS("C22", .attrs = ", batch_group_count = 0 : i64");
  /* C23 feature_group_count = 1 or batch_group_count = 1. */
  rejects("stablehlo.convolution", "C23",
          "func.func @main(%l: tensor<2x4x2xf32>, %r: tensor<2x1x2xf32>) -> "
          "tensor<1x3x2xf32> {\n"
          "  %0 = \"stablehlo.convolution\"(%l, %r) {dimension_numbers = "
          "#stablehlo.conv<[b, 0, f]x[0, i, o]->[b, 0, f]>, "
          "feature_group_count = 2 : i64, batch_group_count = 2 : i64} : "
          "(tensor<2x4x2xf32>, tensor<2x1x2xf32>) -> tensor<1x3x2xf32>\n"
          "  func.return %0 : tensor<1x3x2xf32>\n}\n");
  /* C24 size(precision_config) = 2.  StableHLO's own verifier (and the
   * conformance corpus) accept fewer, so only more is refused. */
  CONV_REJECTS("C24", .attrs = ", precision_config = "
                               "[#stablehlo<precision DEFAULT>, "
                               "#stablehlo<precision HIGH>, "
                               "#stablehlo<precision DEFAULT>]");
  /* C25 the result's batch, feature and spatial sizes. */
  CONV_REJECTS("C25", .res = "tensor<2x4x2xf32>");
  CONV_REJECTS("C25", .res = "tensor<2x3x1xf32>");
  /* C26 rank(result) = N. */
  CONV_REJECTS("C26", .res = "tensor<2x3xf32>");
  /* C27 unquantized: element_type(lhs) = element_type(rhs). */
  CONV_REJECTS("C27", .rhs = "tensor<2x2x2xf64>");
}

/* Quantized convolution (C28-C34): per-tensor i8 operands, an i32
 * result; a case changes one type. */
#define QL "tensor<2x4x2x!quant.uniform<i8:f32, 5.000000e-01>>"
#define QR "tensor<2x2x2x!quant.uniform<i8:f32, 5.000000e-01>>"
#define QO "tensor<2x3x2x!quant.uniform<i32:f32, 2.500000e-01>>"

static void convolution_quantized_constraints(void **state) {
  (void)state;
  accepts(conv_text((conv_case){.lhs = QL, .rhs = QR, .res = QO}));
  /* C28 is_quantized(lhs) = is_quantized(result) and is_quantized(rhs). */
  CONV_REJECTS("C28", .lhs = QL, .rhs = "tensor<2x2x2xf32>", .res = QO);
  /* C29 a per-axis rhs is quantized along kernel_output_feature_dimension
   * (2 here). */
  CONV_REJECTS("C29", .lhs = QL,
               .rhs = "tensor<2x2x2x!quant.uniform<i8:f32:0, "
                      "{5.000000e-01, 5.000000e-01}>>",
               .res = QO);
  /* C30 a per-axis result is quantized along output_feature_dimension. */
  CONV_REJECTS("C30", .lhs = QL,
               .rhs = "tensor<2x2x2x!quant.uniform<i8:f32:2, "
                      "{5.000000e-01, 5.000000e-01}>>",
               .res = "tensor<2x3x2x!quant.uniform<i32:f32:0, "
                      "{2.500000e-01, 2.500000e-01}>>");
  /* C31 storage_type(lhs) = storage_type(rhs). */
  CONV_REJECTS("C31", .lhs = QL,
               .rhs = "tensor<2x2x2x!quant.uniform<i16:f32, 5.000000e-01>>",
               .res = QO);
  /* C32 expressed types of lhs, rhs and result agree. */
  CONV_REJECTS("C32", .lhs = QL, .rhs = QR,
               .res = "tensor<2x3x2x!quant.uniform<i32:f16, 2.500000e-01>>");
  /* C33 a per-tensor rhs gives a per-tensor result. */
  CONV_REJECTS("C33", .lhs = QL, .rhs = QR,
               .res = "tensor<2x3x2x!quant.uniform<i32:f32:2, "
                      "{2.500000e-01, 2.500000e-01}>>");
  /* C34 hybrid (float lhs): element_type(lhs) = expressed_type(rhs) =
   * element_type(result). */
  CONV_REJECTS("C34", .lhs = "tensor<2x4x2xf32>",
               .rhs = "tensor<2x2x2x!quant.uniform<i8:f16, 5.000000e-01>>",
               .res = "tensor<2x3x2xf32>");
}

/* ---- reduce ----
 * Base: sum of a 2x3 f32 along dimension 1. */

typedef struct reduce_case {
  const char *in, *init, *res, *dims, *body_t, *body_res;
} reduce_case;

static char *reduce_text(reduce_case c) {
  static char buf[2048];
  const char *in = c.in ? c.in : "tensor<2x3xf32>";
  const char *init = c.init ? c.init : "tensor<f32>";
  const char *res = c.res ? c.res : "tensor<2xf32>";
  const char *bt = c.body_t ? c.body_t : "tensor<f32>";
  const char *br = c.body_res ? c.body_res : bt;
  snprintf(buf, sizeof buf,
           "func.func @main(%%a: %s, %%i: %s) -> %s {\n"
           "  %%0 = \"stablehlo.reduce\"(%%a, %%i) ({\n"
           "  ^bb0(%%x: %s, %%y: %s):\n"
           "    %%s = \"stablehlo.add\"(%%x, %%y) : (%s, %s) -> %s\n"
           "    stablehlo.return %%s : %s\n"
           "  }) {dimensions = array<i64: %s>} : (%s, %s) -> %s\n"
           "  func.return %%0 : %s\n}\n",
           in, init, res, bt, bt, bt, bt, br, br, c.dims ? c.dims : "1", in,
           init, res, res);
  return buf;
}

#define REDUCE_REJECTS(label, ...) \
  rejects("stablehlo.reduce", label, reduce_text((reduce_case){__VA_ARGS__}))

static void reduce_constraints(void **state) {
  (void)state;
  accepts(reduce_text((reduce_case){0}));
  /* C1 same(shape(inputs...)). */
  rejects("stablehlo.reduce", "C1",
          "func.func @main(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>, "
          "%i: tensor<f32>) -> (tensor<2xf32>, tensor<2xf32>) {\n"
          "  %0:2 = \"stablehlo.reduce\"(%a, %b, %i, %i) ({\n"
          "  ^bb0(%x: tensor<f32>, %y: tensor<f32>, %z: tensor<f32>, "
          "%w: tensor<f32>):\n"
          "    stablehlo.return %x, %y : tensor<f32>, tensor<f32>\n"
          "  }) {dimensions = array<i64: 1>} : (tensor<2x3xf32>, "
          "tensor<3x2xf32>, tensor<f32>, tensor<f32>) -> (tensor<2xf32>, "
          "tensor<2xf32>)\n"
          "  func.return %0#0, %0#1 : tensor<2xf32>, tensor<2xf32>\n}\n");
  /* C2 element_type(inputs...) = element_type(init_values...). */
  REDUCE_REJECTS("C2", .init = "tensor<f64>");
  /* C3 0 < size(inputs) = size(init_values) = size(results) = N. */
  rejects("stablehlo.reduce", "C3",
          "func.func @main(%a: tensor<2x3xf32>, %i: tensor<f32>) -> "
          "tensor<2xf32> {\n"
          "  %0 = \"stablehlo.reduce\"(%a, %i, %i) ({\n"
          "  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
          "    stablehlo.return %x : tensor<f32>\n"
          "  }) {dimensions = array<i64: 1>} : (tensor<2x3xf32>, "
          "tensor<f32>, tensor<f32>) -> tensor<2xf32>\n"
          "  func.return %0 : tensor<2xf32>\n}\n");
  /* C4 0 <= dimensions < rank(inputs[0]). */
  REDUCE_REJECTS("C4", .dims = "2");
  REDUCE_REJECTS("C4", .dims = "-1");
  /* C5 is_unique(dimensions). */
  REDUCE_REJECTS("C5", .dims = "1, 1", .res = "tensor<2xf32>");
  /* C6 body has type (tensor<E>, tensor<E>) -> tensor<E> with inputs'
   * element type promotable to E. */
  REDUCE_REJECTS("C6", .init = "tensor<f32>", .body_t = "tensor<2xf32>");
  REDUCE_REJECTS("C6", .in = "tensor<2x3xf32>", .init = "tensor<f32>",
                 .body_t = "tensor<i32>");
  /* C7 shape(results...) = shape(inputs...) without dimensions. */
  REDUCE_REJECTS("C7", .res = "tensor<3xf32>");
  /* C8 element_type(results[i]) = Ei. */
  REDUCE_REJECTS("C8", .res = "tensor<2xf64>");
}

/* ---- reduce_window ----
 * Base: 2x2 windows summed over a 4x6 f32, result 3x5. */

typedef struct rw_case {
  const char *init, *res, *attrs, *body_t;
} rw_case;

static char *rw_text(rw_case c) {
  static char buf[2048];
  const char *init = c.init ? c.init : "tensor<f32>";
  const char *res = c.res ? c.res : "tensor<3x5xf32>";
  const char *bt = c.body_t ? c.body_t : "tensor<f32>";
  snprintf(buf, sizeof buf,
           "func.func @main(%%a: tensor<4x6xf32>, %%i: %s) -> %s {\n"
           "  %%0 = \"stablehlo.reduce_window\"(%%a, %%i) ({\n"
           "  ^bb0(%%x: %s, %%y: %s):\n"
           "    %%s = \"stablehlo.add\"(%%x, %%y) : (%s, %s) -> %s\n"
           "    stablehlo.return %%s : %s\n"
           "  }) {window_dimensions = array<i64: %s} : (tensor<4x6xf32>, %s) "
           "-> %s\n"
           "  func.return %%0 : %s\n}\n",
           init, res, bt, bt, bt, bt, bt, bt,
           c.attrs ? c.attrs : "2, 2>", init, res, res);
  return buf;
}

#define RW_REJECTS(label, ...) \
  rejects("stablehlo.reduce_window", label, rw_text((rw_case){__VA_ARGS__}))

/* Two inputs: a and b, their init values, results r0 and r1. */
static char *rw2_text(const char *b, const char *r0, const char *r1) {
  static char buf[2048];
  snprintf(buf, sizeof buf,
           "func.func @main(%%a: tensor<4x6xf32>, %%b: %s, %%i: tensor<f32>) "
           "{\n"
           "  %%0:2 = \"stablehlo.reduce_window\"(%%a, %%b, %%i, %%i) ({\n"
           "  ^bb0(%%x: tensor<f32>, %%y: tensor<f32>, %%z: tensor<f32>, "
           "%%w: tensor<f32>):\n"
           "    stablehlo.return %%x, %%y : tensor<f32>, tensor<f32>\n"
           "  }) {window_dimensions = array<i64: 2, 2>} : (tensor<4x6xf32>, "
           "%s, tensor<f32>, tensor<f32>) -> (%s, %s)\n"
           "  func.return\n}\n",
           b, b, r0, r1);
  return buf;
}

static void reduce_window_constraints(void **state) {
  (void)state;
  accepts(rw_text((rw_case){0}));
  /* C15 with sizes a hostile client wrote: (4 - 1) * 2^62 does not fit in
   * 64 bits; refused, never computed with a wrapped (undefined) product. */
  RW_REJECTS("C15", .attrs = "2, 2>, base_dilations = array<i64: "
                             "4611686018427387904, 1>");
  accepts(rw2_text("tensor<4x6xf32>", "tensor<3x5xf32>", "tensor<3x5xf32>"));
  /* C1 0 < size(inputs) = size(init_values) = size(results) = N. */
  rejects("stablehlo.reduce_window", "C1",
          "func.func @main(%a: tensor<4x6xf32>, %i: tensor<f32>) {\n"
          "  %0 = \"stablehlo.reduce_window\"(%a, %i, %i) ({\n"
          "  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
          "    stablehlo.return %x : tensor<f32>\n"
          "  }) {window_dimensions = array<i64: 2, 2>} : (tensor<4x6xf32>, "
          "tensor<f32>, tensor<f32>) -> tensor<3x5xf32>\n"
          "  func.return\n}\n");
  /* C2 same(shape(inputs...)). */
  rejects("stablehlo.reduce_window", "C2",
          rw2_text("tensor<6x4xf32>", "tensor<3x5xf32>", "tensor<3x5xf32>"));
  /* C3 element_type(inputs...) = element_type(init_values...). */
  RW_REJECTS("C3", .init = "tensor<f64>");
  /* C4/C5 window_dimensions: rank entries, positive. */
  RW_REJECTS("C4", .attrs = "2>");
  RW_REJECTS("C5", .attrs = "0, 2>", .res = "tensor<5x5xf32>");
  /* C6/C7 window_strides. */
  RW_REJECTS("C6", .attrs = "2, 2>, window_strides = array<i64: 1>");
  RW_REJECTS("C7", .attrs = "2, 2>, window_strides = array<i64: 1, 0>");
  /* C8/C9 base_dilations. */
  RW_REJECTS("C8", .attrs = "2, 2>, base_dilations = array<i64: 1>");
  RW_REJECTS("C9", .attrs = "2, 2>, base_dilations = array<i64: 0, 1>");
  /* C10/C11 window_dilations. */
  RW_REJECTS("C10", .attrs = "2, 2>, window_dilations = array<i64: 1>");
  RW_REJECTS("C11", .attrs = "2, 2>, window_dilations = array<i64: 1, -1>");
  /* C12 shape(padding) = [rank(inputs[0]), 2]. */
  RW_REJECTS("C12", .attrs = "2, 2>, padding = dense<[[0, 0]]> : "
                             "tensor<1x2xi64>");
  /* C13 body: (tensor<E>, tensor<E>) -> tensor<E>, inputs promotable. */
  RW_REJECTS("C13", .init = "tensor<f32>", .body_t = "tensor<1xf32>");
  /* C14 same(shape(results...)). */
  rejects("stablehlo.reduce_window", "C14",
          rw2_text("tensor<4x6xf32>", "tensor<3x5xf32>", "tensor<5x3xf32>"));
  /* C15 shape(results[0]) = num_windows. */
  RW_REJECTS("C15", .res = "tensor<4x6xf32>");
  /* C16 element_type(results[i]) = Ei. */
  RW_REJECTS("C16", .res = "tensor<3x5xf64>");
}

/* ---- select_and_scatter ----
 * Base: operand 4x4 f32, 2x2 windows with stride 2, source 2x2. */

typedef struct sas_case {
  const char *src, *init, *res, *attrs, *sel_t, *sel_res, *sc_t;
} sas_case;

static char *sas_text(sas_case c) {
  static char buf[3072];
  const char *src = c.src ? c.src : "tensor<2x2xf32>";
  const char *init = c.init ? c.init : "tensor<f32>";
  const char *res = c.res ? c.res : "tensor<4x4xf32>";
  const char *st = c.sel_t ? c.sel_t : "tensor<f32>";
  const char *sr = c.sel_res ? c.sel_res : "tensor<i1>";
  const char *ct = c.sc_t ? c.sc_t : "tensor<f32>";
  snprintf(buf, sizeof buf,
           "func.func @main(%%a: tensor<4x4xf32>, %%s: %s, %%i: %s) -> %s {\n"
           "  %%0 = \"stablehlo.select_and_scatter\"(%%a, %%s, %%i) ({\n"
           "  ^bb0(%%x: %s, %%y: %s):\n"
           "    %%c = \"stablehlo.compare\"(%%x, %%y) {comparison_direction = "
           "#stablehlo<comparison_direction GE>} : (%s, %s) -> %s\n"
           "    stablehlo.return %%c : %s\n"
           "  }, {\n"
           "  ^bb0(%%x: %s, %%y: %s):\n"
           "    %%t = \"stablehlo.add\"(%%x, %%y) : (%s, %s) -> %s\n"
           "    stablehlo.return %%t : %s\n"
           "  }) {%s} : (tensor<4x4xf32>, %s, %s) -> %s\n"
           "  func.return %%0 : %s\n}\n",
           src, init, res, st, st, st, st, sr, sr, ct, ct, ct, ct, ct, ct,
           c.attrs ? c.attrs
                   : "window_dimensions = array<i64: 2, 2>, window_strides = "
                     "array<i64: 2, 2>",
           src, init, res, res);
  return buf;
}

#define SAS_REJECTS(label, ...)                \
  rejects("stablehlo.select_and_scatter", label, \
          sas_text((sas_case){__VA_ARGS__}))

static void select_and_scatter_constraints(void **state) {
  (void)state;
  accepts(sas_text((sas_case){0}));
  /* C1 element_type(operand) = element_type(source). */
  SAS_REJECTS("C1", .src = "tensor<2x2xf64>", .sc_t = "tensor<f64>");
  /* C2 shape(source) = num_windows. */
  SAS_REJECTS("C2", .src = "tensor<3x3xf32>");
  /* C3 element_type(init_value) = element_type(operand). */
  SAS_REJECTS("C3", .init = "tensor<f64>");
  /* C4/C5 window_dimensions: rank(operand) entries, positive. */
  SAS_REJECTS("C4", .attrs = "window_dimensions = array<i64: 2>");
  SAS_REJECTS("C5", .attrs = "window_dimensions = array<i64: 2, 0>");
  /* C6/C7 window_strides. */
  SAS_REJECTS("C6", .attrs = "window_dimensions = array<i64: 2, 2>, "
                             "window_strides = array<i64: 2>");
  SAS_REJECTS("C7", .attrs = "window_dimensions = array<i64: 2, 2>, "
                             "window_strides = array<i64: 0, 2>");
  /* C8 shape(padding) = [rank(operand), 2]. */
  SAS_REJECTS("C8", .attrs = "window_dimensions = array<i64: 2, 2>, "
                             "window_strides = array<i64: 2, 2>, padding = "
                             "dense<0> : tensor<2x3xi64>");
  /* C9 select: (tensor<E>, tensor<E>) -> tensor<i1>. */
  SAS_REJECTS("C9", .sel_t = "tensor<f64>");
  SAS_REJECTS("C9", .sel_t = "tensor<1xf32>", .sel_res = "tensor<1xi1>");
  /* C10 scatter: (tensor<E>, tensor<E>) -> tensor<E>, operand's element
   * type promotable to E. */
  SAS_REJECTS("C10", .sc_t = "tensor<2xf32>");
  /* C11 shape(operand) = shape(result). */
  SAS_REJECTS("C11", .res = "tensor<4x2xf32>");
  /* C12 element_type(result) = E. */
  SAS_REJECTS("C12", .res = "tensor<4x4xf64>");
}

/* ---- scatter ----
 * Base: rows of a 4x3 input replaced at 2 indices; the batching base has
 * a leading batch dimension of 2 on the input and the indices. */

typedef struct scatter_case {
  const char *in, *idx, *upd, *res, *dims, *body_t;
} scatter_case;

static char *scatter_text(scatter_case c) {
  static char buf[3072];
  const char *in = c.in ? c.in : "tensor<4x3xf32>";
  const char *idx = c.idx ? c.idx : "tensor<2x1xi64>";
  const char *upd = c.upd ? c.upd : "tensor<2x3xf32>";
  const char *res = c.res ? c.res : in;
  const char *bt = c.body_t ? c.body_t : "tensor<f32>";
  snprintf(buf, sizeof buf,
           "func.func @main(%%a: %s, %%i: %s, %%u: %s) -> %s {\n"
           "  %%0 = \"stablehlo.scatter\"(%%a, %%i, %%u) ({\n"
           "  ^bb0(%%x: %s, %%y: %s):\n"
           "    stablehlo.return %%y : %s\n"
           "  }) {scatter_dimension_numbers = #stablehlo.scatter<%s>} : "
           "(%s, %s, %s) -> %s\n"
           "  func.return %%0 : %s\n}\n",
           in, idx, upd, res, bt, bt, bt,
           c.dims ? c.dims
                  : "update_window_dims = [1], inserted_window_dims = [0], "
                    "scatter_dims_to_operand_dims = [0], index_vector_dim = 1",
           in, idx, upd, res, res);
  return buf;
}

#define SCATTER_REJECTS(label, ...) \
  rejects("stablehlo.scatter", label, scatter_text((scatter_case){__VA_ARGS__}))

/* One batching dimension: input 2x4x3, indices 2x1, updates 2x3. */
#define BATCH1(in_bat, idx_bat, ivd)                                          \
  .in = "tensor<2x4x3xf32>", .idx = "tensor<2x1xi64>",                        \
  .dims = "update_window_dims = [1], inserted_window_dims = [1], "            \
          "input_batching_dims = " in_bat ", scatter_indices_batching_dims = " \
          idx_bat ", scatter_dims_to_operand_dims = [1], index_vector_dim = " ivd

/* Two batching dimensions: input 2x2x4x3, indices 2x2x1, updates 2x2x3. */
#define BATCH2(in_bat, idx_bat)                                               \
  .in = "tensor<2x2x4x3xf32>", .idx = "tensor<2x2x1xi64>",                    \
  .upd = "tensor<2x2x3xf32>",                                                 \
  .dims = "update_window_dims = [2], inserted_window_dims = [2], "            \
          "input_batching_dims = " in_bat ", scatter_indices_batching_dims = " \
          idx_bat ", scatter_dims_to_operand_dims = [2], index_vector_dim = 2"

/* Two inputs and two updates of the given types. */
static char *scatter2_text(const char *in2, const char *upd2) {
  static char buf[3072];
  snprintf(buf, sizeof buf,
           "func.func @main(%%a: tensor<4x3xf32>, %%b: %s, %%i: "
           "tensor<2x1xi64>, %%u: tensor<2x3xf32>, %%v: %s) {\n"
           "  %%0:2 = \"stablehlo.scatter\"(%%a, %%b, %%i, %%u, %%v) ({\n"
           "  ^bb0(%%x: tensor<f32>, %%y: tensor<f32>, %%z: tensor<f32>, "
           "%%w: tensor<f32>):\n"
           "    stablehlo.return %%z, %%w : tensor<f32>, tensor<f32>\n"
           "  }) {scatter_dimension_numbers = #stablehlo.scatter<"
           "update_window_dims = [1], inserted_window_dims = [0], "
           "scatter_dims_to_operand_dims = [0], index_vector_dim = 1>} : "
           "(tensor<4x3xf32>, %s, tensor<2x1xi64>, tensor<2x3xf32>, %s) -> "
           "(tensor<4x3xf32>, %s)\n"
           "  func.return\n}\n",
           in2, upd2, in2, upd2, in2);
  return buf;
}

static void scatter_constraints(void **state) {
  (void)state;
  accepts(scatter_text((scatter_case){0}));
  accepts(scatter_text((scatter_case){BATCH1("[0]", "[0]", "1")}));
  accepts(scatter_text((scatter_case){BATCH2("[0, 1]", "[0, 1]")}));
  accepts(scatter2_text("tensor<4x3xf32>", "tensor<2x3xf32>"));
  /* C1 same(shape(inputs...)). */
  rejects("stablehlo.scatter", "C1",
          scatter2_text("tensor<3x4xf32>", "tensor<2x3xf32>"));
  /* C2 rank(inputs[0]) = size(update_window_dims) +
   * size(inserted_window_dims) + size(input_batching_dims). */
  SCATTER_REJECTS("C2", .dims = "update_window_dims = [1], "
                                "scatter_dims_to_operand_dims = [0], "
                                "index_vector_dim = 1");
  /* C3 same(shape(updates...)). */
  rejects("stablehlo.scatter", "C3",
          scatter2_text("tensor<4x3xf32>", "tensor<3x2xf32>"));
  /* C4 shape(updates[0]): scatter dims of scatter_indices, window sizes
   * within the input's. */
  SCATTER_REJECTS("C4", .upd = "tensor<2x4xf32>");
  SCATTER_REJECTS("C4", .upd = "tensor<3x3xf32>");
  /* C5 0 < size(inputs) = size(updates) = N. */
  rejects("stablehlo.scatter", "C5",
          "func.func @main(%a: tensor<4x3xf32>, %i: tensor<2x1xi64>, "
          "%u: tensor<2x3xf32>) {\n"
          "  %0 = \"stablehlo.scatter\"(%a, %i, %u, %u) ({\n"
          "  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
          "    stablehlo.return %y : tensor<f32>\n"
          "  }) {scatter_dimension_numbers = #stablehlo.scatter<"
          "update_window_dims = [1], inserted_window_dims = [0], "
          "scatter_dims_to_operand_dims = [0], index_vector_dim = 1>} : "
          "(tensor<4x3xf32>, tensor<2x1xi64>, tensor<2x3xf32>, "
          "tensor<2x3xf32>) -> tensor<4x3xf32>\n"
          "  func.return\n}\n");
  /* C6 element_type(updates...) = element_type(inputs...). */
  SCATTER_REJECTS("C6", .upd = "tensor<2x3xf64>");
  /* C7 update_window_dims unique and sorted. */
  SCATTER_REJECTS("C7", .upd = "tensor<2x3x3xf32>",
                  .in = "tensor<4x3x3xf32>",
                  .dims = "update_window_dims = [2, 1], "
                          "inserted_window_dims = [0], "
                          "scatter_dims_to_operand_dims = [0], "
                          "index_vector_dim = 1");
  /* C8 0 <= update_window_dims < rank(updates[0]). */
  SCATTER_REJECTS("C8", .dims = "update_window_dims = [2], "
                                "inserted_window_dims = [0], "
                                "scatter_dims_to_operand_dims = [0], "
                                "index_vector_dim = 1");
  /* C9 is_unique(inserted_window_dims ++ input_batching_dims). */
  SCATTER_REJECTS("C9", .in = "tensor<2x4x3xf32>",
                  .dims = "update_window_dims = [1], "
                          "inserted_window_dims = [0], "
                          "input_batching_dims = [0], "
                          "scatter_indices_batching_dims = [0], "
                          "scatter_dims_to_operand_dims = [1], "
                          "index_vector_dim = 1");
  /* C10 is_sorted(inserted_window_dims). */
  SCATTER_REJECTS("C10", .in = "tensor<4x3x2xf32>",
                  .dims = "update_window_dims = [1], "
                          "inserted_window_dims = [2, 0], "
                          "scatter_dims_to_operand_dims = [0], "
                          "index_vector_dim = 1");
  /* C11 0 <= inserted_window_dims < rank(inputs[0]). */
  SCATTER_REJECTS("C11", .dims = "update_window_dims = [1], "
                                 "inserted_window_dims = [5], "
                                 "scatter_dims_to_operand_dims = [0], "
                                 "index_vector_dim = 1");
  /* C12 is_sorted(input_batching_dims). */
  SCATTER_REJECTS("C12", BATCH2("[1, 0]", "[0, 1]"));
  /* C13 0 <= input_batching_dims < rank(inputs[0]). */
  SCATTER_REJECTS("C13", BATCH1("[7]", "[0]", "1"));
  /* C14 is_unique(scatter_indices_batching_dims). */
  SCATTER_REJECTS("C14", BATCH2("[0, 1]", "[0, 0]"));
  /* C15 0 <= scatter_indices_batching_dims < rank(scatter_indices). */
  SCATTER_REJECTS("C15", BATCH1("[0]", "[5]", "1"));
  /* C16 index_vector_dim not in scatter_indices_batching_dims. */
  SCATTER_REJECTS("C16", BATCH1("[0]", "[1]", "1"));
  /* C17 size(input_batching_dims) = size(scatter_indices_batching_dims). */
  SCATTER_REJECTS("C17", .in = "tensor<2x4x3xf32>",
                  .dims = "update_window_dims = [1], "
                          "inserted_window_dims = [1], "
                          "input_batching_dims = [0], "
                          "scatter_dims_to_operand_dims = [1], "
                          "index_vector_dim = 1");
  /* C18 the batching dimensions' sizes agree. */
  SCATTER_REJECTS("C18", .in = "tensor<3x4x3xf32>",
                  .idx = "tensor<2x1xi64>",
                  .dims = "update_window_dims = [1], "
                          "inserted_window_dims = [1], "
                          "input_batching_dims = [0], "
                          "scatter_indices_batching_dims = [0], "
                          "scatter_dims_to_operand_dims = [1], "
                          "index_vector_dim = 1");
  /* C19 size(scatter_dims_to_operand_dims) = dim(scatter_indices,
   * index_vector_dim) (1 when index_vector_dim = rank). */
  SCATTER_REJECTS("C19", .dims = "update_window_dims = [1], "
                                 "inserted_window_dims = [0], "
                                 "scatter_dims_to_operand_dims = [0, 1], "
                                 "index_vector_dim = 1");
  /* C20 is_unique(scatter_dims_to_operand_dims ++ input_batching_dims). */
  SCATTER_REJECTS("C20", .idx = "tensor<2x2xi64>",
                  .dims = "update_window_dims = [1], "
                          "inserted_window_dims = [0], "
                          "scatter_dims_to_operand_dims = [0, 0], "
                          "index_vector_dim = 1");
  /* C21 0 <= scatter_dims_to_operand_dims < rank(inputs[0]). */
  SCATTER_REJECTS("C21", .dims = "update_window_dims = [1], "
                                 "inserted_window_dims = [0], "
                                 "scatter_dims_to_operand_dims = [5], "
                                 "index_vector_dim = 1");
  /* C22 0 <= index_vector_dim <= rank(scatter_indices). */
  SCATTER_REJECTS("C22", .dims = "update_window_dims = [1], "
                                 "inserted_window_dims = [0], "
                                 "scatter_dims_to_operand_dims = [0], "
                                 "index_vector_dim = 3");
  /* C23 update_computation: (tensor<E>, tensor<E>) -> tensor<E>. */
  SCATTER_REJECTS("C23", .body_t = "tensor<2xf32>");
  /* C24 shape(inputs...) = shape(results...). */
  SCATTER_REJECTS("C24", .res = "tensor<3x4xf32>");
  /* C25 element_type(results[i]) = Ei. */
  SCATTER_REJECTS("C25", .res = "tensor<4x3xf64>");
}

/* slice C3 at its bounds (limit = size and start = limit are valid; one
 * more is not) and reshape C2 (element counts). */
#define SLICE_TEXT(s, l, res)                                               \
  "func.func @main(%a: tensor<4xf32>) -> " res " {\n"                       \
  "  %0 = \"stablehlo.slice\"(%a) {start_indices = array<i64: " s ">, "     \
  "limit_indices = array<i64: " l ">, strides = array<i64: 1>} : "          \
  "(tensor<4xf32>) -> " res "\n"                                            \
  "  func.return %0 : " res "\n}\n"

static void slice_and_reshape_constraints(void **state) {
  (void)state;
  accepts(SLICE_TEXT("0", "4", "tensor<4xf32>"));
  accepts(SLICE_TEXT("2", "2", "tensor<0xf32>"));
  rejects("stablehlo.slice", "C3", SLICE_TEXT("0", "5", "tensor<5xf32>"));
  rejects("stablehlo.slice", "C3", SLICE_TEXT("3", "2", "tensor<0xf32>"));
  accepts("func.func @main(%a: tensor<2x3xf32>) -> tensor<6xf32> {\n"
          "  %0 = stablehlo.reshape %a : (tensor<2x3xf32>) -> tensor<6xf32>\n"
          "  func.return %0 : tensor<6xf32>\n}\n");
  rejects("stablehlo.reshape", "C2",
          "func.func @main(%a: tensor<2x3xf32>) -> tensor<7xf32> {\n"
          "  %0 = stablehlo.reshape %a : (tensor<2x3xf32>) -> tensor<7xf32>\n"
          "  func.return %0 : tensor<7xf32>\n}\n");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(convolution_constraints),
      cmocka_unit_test(convolution_quantized_constraints),
      cmocka_unit_test(reduce_constraints),
      cmocka_unit_test(reduce_window_constraints),
      cmocka_unit_test(select_and_scatter_constraints),
      cmocka_unit_test(scatter_constraints),
      cmocka_unit_test(slice_and_reshape_constraints),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
