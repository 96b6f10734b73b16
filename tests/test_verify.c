/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests for the verifier (engine/src/verify*.c): one test per op
 * family feeds deliberately wrong programs and asserts that the diagnostic
 * names the op, the spec's constraint label and the op's line:col; and that
 * right programs verify clean. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "shlo/ir.h"
#include "shlo/verify.h"

/* Verifies text; returns the formatted first diagnostic (static buffer),
 * or "" when the module is clean. */
static const char *verify_text(const char *text, shlo_status *st) {
  static char buf[SHLO_DIAG_MAX + 256];
  shlo_module *m = NULL;
  shlo_diag d;
  shlo_diag_clear(&d);
  buf[0] = 0;
  shlo_status ps = shlo_parse_module(text, strlen(text), "t.mlir", &m, &d);
  if (ps) {
    shlo_diag_format(&d, buf, sizeof buf);
    fprintf(stderr, "parse failed: %s\n", buf);
    fail();
  }
  shlo_diag_list l;
  shlo_diag_list_init(&l);
  *st = shlo_verify_module(m, NULL, &l);
  if (l.n) shlo_diag_format(&l.v[0], buf, sizeof buf);
  shlo_diag_list_free(&l);
  shlo_module_free(m);
  return buf;
}

/* The program must fail verification with a message containing each of
 * the given fragments. */
static void expect_error(const char *text, const char *where,
                         const char *label, const char *fragment) {
  shlo_status st;
  const char *msg = verify_text(text, &st);
  if (st != SHLO_EVERIFY || !strstr(msg, where) || !strstr(msg, label) ||
      (fragment && !strstr(msg, fragment))) {
    fprintf(stderr, "got status %d, message: %s\nwanted %s %s %s\n", st, msg,
            where, label, fragment ? fragment : "");
    fail();
  }
}

/* The program must be rejected by the parser (as MLIR rejects it while
 * parsing) with a message at `where` containing fragment. */
static void expect_parse_error(const char *text, const char *where,
                               const char *fragment) {
  char buf[SHLO_DIAG_MAX + 256];
  shlo_module *m = NULL;
  shlo_diag d;
  shlo_diag_clear(&d);
  shlo_status ps = shlo_parse_module(text, strlen(text), "t.mlir", &m, &d);
  shlo_diag_format(&d, buf, sizeof buf);
  shlo_module_free(m);
  if (!ps || !strstr(buf, where) || !strstr(buf, fragment)) {
    fprintf(stderr, "got status %d, message: %s\nwanted %s %s\n", ps, buf,
            where, fragment);
    fail();
  }
}

static void expect_clean(const char *text) {
  shlo_status st;
  const char *msg = verify_text(text, &st);
  if (st != SHLO_OK) {
    fprintf(stderr, "unexpected: %s\n", msg);
    fail();
  }
}

static void test_elementwise(void **state) {
  (void)state;
  expect_error("func.func @main(%a: tensor<2xf32>, %b: tensor<3xf32>) {\n"
               "  %0 = stablehlo.add %a, %a : (tensor<2xf32>, tensor<2xf32>)"
               " -> tensor<3xf32>\n"
               "  func.return\n}\n",
               "t.mlir:2:8: error: stablehlo.add", "(C1)", "tensor<3xf32>");
  expect_error("func.func @main(%a: tensor<4xf32>) {\n"
               "  %0 = \"stablehlo.or\"(%a, %a) : (tensor<4xf32>, "
               "tensor<4xf32>) -> tensor<4xf32>\n  func.return\n}\n",
               "t.mlir:2:8: error: stablehlo.or", "(I1)", "tensor<4xf32>");
  expect_error("func.func @main(%a: tensor<2xf64>) {\n"
               "  %0 = \"stablehlo.bitcast_convert\"(%a) : (tensor<2xf64>) -> "
               "tensor<3xi64>\n  func.return\n}\n",
               "t.mlir:2:8:", "(C1)", "stablehlo.bitcast_convert");
  expect_error("func.func @main(%a: tensor<1x!quant.uniform<i8:f32, "
               "1.0:17>>) {\n"
               "  %0 = \"stablehlo.add\"(%a, %a) : (tensor<1x!quant.uniform<"
               "i8:f32, 1.0:17>>, tensor<1x!quant.uniform<i8:f32, 1.0:17>>) "
               "-> tensor<1x!quant.uniform<i8:bf16, 1.0:17>>\n"
               "  func.return\n}\n",
               "t.mlir:2:8:", "(C4)", "expressed");
  expect_clean("func.func @main(%a: tensor<2xcomplex<f32>>) -> tensor<2xf32> "
               "{\n  %0 = stablehlo.abs %a : (tensor<2xcomplex<f32>>) -> "
               "tensor<2xf32>\n  func.return %0 : tensor<2xf32>\n}\n");
}

static void test_shape(void **state) {
  (void)state;
  expect_error("func.func @main(%a: tensor<2x3xf32>) {\n"
               "  %0 = \"stablehlo.transpose\"(%a) {permutation = "
               "array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<2x3xf32>\n"
               "  func.return\n}\n",
               "t.mlir:2:8: error: stablehlo.transpose", "(C3)",
               "tensor<2x3xf32>");
  expect_error("func.func @main(%a: tensor<4xf32>) {\n"
               "  %0 = \"stablehlo.slice\"(%a) {start_indices = array<i64: 3>,"
               " limit_indices = array<i64: 2>, strides = array<i64: 1>} : "
               "(tensor<4xf32>) -> tensor<0xf32>\n  func.return\n}\n",
               "t.mlir:2:8:", "(C3)", "stablehlo.slice");
  expect_error("func.func @main(%a: tensor<2xf32>) {\n"
               "  %0 = stablehlo.broadcast_in_dim %a, dims = [1] : "
               "(tensor<2xf32>) -> tensor<2x3xf32>\n  func.return\n}\n",
               "t.mlir:2:8:", "(C5)", "stablehlo.broadcast_in_dim");
}

static void test_reduce(void **state) {
  (void)state;
  expect_error("func.func @main(%a: tensor<4x6xf32>, %i: tensor<f32>) {\n"
               "  %0 = stablehlo.reduce(%a init: %i) applies stablehlo.add "
               "across dimensions = [1] : (tensor<4x6xf32>, tensor<f32>) -> "
               "tensor<6xf32>\n  func.return\n}\n",
               "t.mlir:2:8: error: stablehlo.reduce", "(C7)", "tensor<6xf32>");
  expect_error("func.func @main(%a: tensor<4xf32>) {\n"
               "  %0 = \"stablehlo.sort\"(%a) ({\n"
               "  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
               "    \"stablehlo.return\"(%x) : (tensor<f32>) -> ()\n"
               "  }) {dimension = 0 : i64} : (tensor<4xf32>) -> tensor<4xf32>\n"
               "  func.return\n}\n",
               "t.mlir:2:8:", "(C5)", "tensor<i1>"); /* the spec's C5 */
}

static void test_indexing(void **state) {
  (void)state;
  expect_error(
      "func.func @main(%a: tensor<2x3x2xi32>, %i: tensor<2x2xi64>) {\n"
      "  %0 = \"stablehlo.gather\"(%a, %i) {dimension_numbers = "
      "#stablehlo.gather<offset_dims = [2, 1], collapsed_slice_dims = [0], "
      "start_index_map = [1, 0], index_vector_dim = 1>, slice_sizes = "
      "array<i64: 1, 2, 2>} : (tensor<2x3x2xi32>, tensor<2x2xi64>) -> "
      "tensor<2x2x2xi32>\n  func.return\n}\n",
      "t.mlir:2:8: error: stablehlo.gather", "(C4)", "sorted");
}

static void test_linalg(void **state) {
  (void)state;
  expect_error("func.func @main(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) {\n"
               "  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x "
               "[0] : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>\n"
               "  func.return\n}\n",
               "t.mlir:2:8: error: stablehlo.dot_general", "(C10)",
               "lhs contracting dimension 1 has size 3 but rhs contracting "
               "dimension 0 has size 4");
  expect_error("func.func @main(%a: tensor<2x2xi32>) {\n"
               "  %0 = \"stablehlo.dot\"(%a, %a) {precision_config = [\"FOO\", "
               "#stablehlo<precision HIGHEST>]} : (tensor<2x2xi32>, "
               "tensor<2x2xi32>) -> tensor<2x2xi32>\n  func.return\n}\n",
               "t.mlir:2:8: error: stablehlo.dot", "(C3)", "\"FOO\"");
  expect_error("func.func @main(%a: tensor<4x4xf32>) {\n"
               "  %0 = \"stablehlo.triangular_solve\"(%a, %a) {left_side = "
               "true, lower = true, transpose_a = #stablehlo<transpose "
               "TRANSPOSE_INVALID>, unit_diagonal = true} : (tensor<4x4xf32>, "
               "tensor<4x4xf32>) -> tensor<4x4xf32>\n  func.return\n}\n",
               "t.mlir:2:8: error: stablehlo.triangular_solve", "(transpose_a)",
               "TRANSPOSE_INVALID");
  expect_error("func.func @main(%a: tensor<3x9xf32>) {\n"
               "  %0 = stablehlo.fft %a, type = RFFT, length = [9, 9] : "
               "(tensor<3x9xf32>) -> tensor<3x5xcomplex<f32>>\n"
               "  func.return\n}\n",
               "t.mlir:2:8:", "(C4)", "stablehlo.fft");
}

/* Quantized dot_general / convolution (dot_general C14-C20, convolution
 * C28-C34), per-axis reshape/transpose and broadcasts, quantized types. */
static void test_quantized(void **state) {
  (void)state;
#define Q8(s) "!quant.uniform<i8:f32, " s ">"
  expect_error("func.func @main(%a: tensor<2x3xf32>, %b: tensor<3x4x" Q8("1.0:0")
               ">) {\n  %0 = stablehlo.dot_general %a, %b, contracting_dims = "
               "[1] x [0] : (tensor<2x3xf32>, tensor<3x4x" Q8("1.0:0") ">) -> "
               "tensor<2x4x" Q8("1.0:0") ">\n  func.return\n}\n",
               "t.mlir:2:8: error: stablehlo.dot_general", "(C14)",
               "must be quantized");
  expect_error("func.func @main(%a: tensor<2x3xf32>, %b: tensor<3x4x" Q8("1.0:3")
               ">) {\n  %0 = stablehlo.dot_general %a, %b, contracting_dims = "
               "[1] x [0] : (tensor<2x3xf32>, tensor<3x4x" Q8("1.0:3") ">) -> "
               "tensor<2x4xf32>\n  func.return\n}\n",
               "t.mlir:2:8: error: stablehlo.dot_general", "(C15)",
               "zero points 0");
  expect_error("func.func @main(%a: tensor<2x3x" Q8("1.0:1") ">, %b: "
               "tensor<3x2x!quant.uniform<i8:f32:0, {1.0:0, 1.0:0, 1.0:0}>>) "
               "{\n  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1]"
               " x [0] : (tensor<2x3x" Q8("1.0:1") ">, tensor<3x2x!quant."
               "uniform<i8:f32:0, {1.0:0, 1.0:0, 1.0:0}>>) -> tensor<2x2x"
               Q8("1.0:1") ">\n  func.return\n}\n",
               "t.mlir:2:8: error: stablehlo.dot_general", "(C16)",
               "quantization dimension 0");
  expect_error("func.func @main(%a: tensor<2x3x!quant.uniform<i16:f32, 1.0:1>>"
               ", %b: tensor<3x4x" Q8("1.0:0") ">) {\n  %0 = stablehlo."
               "dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<2x3"
               "x!quant.uniform<i16:f32, 1.0:1>>, tensor<3x4x" Q8("1.0:0")
               ">) -> tensor<2x4x" Q8("1.0:1") ">\n  func.return\n}\n",
               "t.mlir:2:8: error: stablehlo.dot_general", "(C17)",
               "storage type");
  expect_error("func.func @main(%a: tensor<2x3xf16>, %b: tensor<3x4x" Q8("1.0:0")
               ">) {\n  %0 = stablehlo.dot_general %a, %b, contracting_dims = "
               "[1] x [0] : (tensor<2x3xf16>, tensor<3x4x" Q8("1.0:0") ">) -> "
               "tensor<2x4xf16>\n  func.return\n}\n",
               "t.mlir:2:8: error: stablehlo.dot_general", "(C20)",
               "expressed type");
  expect_error("func.func @main(%a: tensor<1x4x4x1x" Q8("4.0:10") ">, %b: "
               "tensor<3x3x1x1x!quant.uniform<i8:f32:3, {5.0:20}>>) {\n"
               "  %0 = stablehlo.convolution(%a, %b) dim_numbers = [b, 0, 1, f]"
               "x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[1, 1], [1, 1]]}"
               " {batch_group_count = 1 : i64, feature_group_count = 1 : i64} :"
               " (tensor<1x4x4x1x" Q8("4.0:10") ">, tensor<3x3x1x1x!quant."
               "uniform<i8:f32:3, {5.0:20}>>) -> tensor<1x4x4x1x!quant.uniform"
               "<i8:f32:0, {3.0:6}>>\n  func.return\n}\n",
               "t.mlir:2:8: error: stablehlo.convolution", "(C30)",
               "output_feature_dimension 3");
  expect_error("func.func @main(%a: tensor<1x4x4x1x" Q8("4.0:10") ">, %b: "
               "tensor<3x3x1x1x" Q8("5.0:20") ">) {\n"
               "  %0 = stablehlo.convolution(%a, %b) dim_numbers = [b, 0, 1, f]"
               "x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[1, 1], [1, 1]]}"
               " {batch_group_count = 1 : i64, feature_group_count = 1 : i64} :"
               " (tensor<1x4x4x1x" Q8("4.0:10") ">, tensor<3x3x1x1x"
               Q8("5.0:20") ">) -> tensor<1x4x4x1x!quant.uniform<i8:f32:3, "
               "{3.0:6}>>\n  func.return\n}\n",
               "t.mlir:2:8: error: stablehlo.convolution", "(C33)",
               "per-tensor");
  expect_error("func.func @main(%a: tensor<1x2x2x!quant.uniform<i8:f32:0, "
               "{0.1:-30}>>) {\n  %0 = \"stablehlo.transpose\"(%a) "
               "{permutation = array<i64: 0, 2, 1>} : (tensor<1x2x2x!quant."
               "uniform<i8:f32:0, {0.1:-30}>>) -> tensor<1x2x2x!quant.uniform"
               "<i8:f32:0, {0.2:-30}>>\n  func.return\n}\n",
               "t.mlir:2:8: error: stablehlo.transpose", "(C1)",
               "scales and zero points");
  expect_error("func.func @main(%a: tensor<1x2x1x!quant.uniform<i8:f32:2, "
               "{0.1:-30}>>, %s: tensor<4xi64>) {\n  %0 = \"stablehlo."
               "dynamic_broadcast_in_dim\"(%a, %s) {broadcast_dimensions = "
               "array<i64: 0, 1, 3>} : (tensor<1x2x1x!quant.uniform<i8:f32:2, "
               "{0.1:-30}>>, tensor<4xi64>) -> tensor<1x2x3x2x!quant.uniform<"
               "i8:f32:3, {0.1:-30, 0.1:-20}>>\n  func.return\n}\n",
               "t.mlir:2:8: error: stablehlo.dynamic_broadcast_in_dim", "(C6)",
               "zero point #1 (-20)");
  expect_error("func.func @main(%a: tensor<4x!quant.uniform<si8:f32, 1.0>>) "
               "{\n  %0 = \"stablehlo.uniform_dequantize\"(%a) : (tensor<4x!"
               "quant.uniform<si8:f32, 1.0>>) -> tensor<4xf32>\n"
               "  func.return\n}\n",
               "t.mlir:2:8:", "(C1)", "storage type si8 must be a signless");
  expect_parse_error("func.func @main(%a: tensor<2x!quant.uniform<i4:f16, "
                     "1.0e+05>>) {\n  func.return\n}\n",
                     "t.mlir:1:", "out of expressed type range");
  expect_parse_error("func.func @main(%a: tensor<2x!quant.uniform<i8:f32:-1, "
                     "{0.1:-30, 0.1:-30}>>) {\n  func.return\n}\n",
                     "t.mlir:1:", "illegal quantized dimension: -1");
#undef Q8
}

/* Attributes MLIR rejects while parsing: repeated or unknown fields of
 * #stablehlo.dot/gather/scatter, dot algorithms, unknown stablehlo types. */
static void test_parse_time(void **state) {
  (void)state;
  expect_parse_error("module attributes {\n  x = #stablehlo.dot<\n"
                     "    rhs_batching_dimensions = [1],\n"
                     "    rhs_batching_dimensions = [3]>} {}\n",
                     "t.mlir:4:5:", "duplicated `rhs_batching_dimensions`");
  expect_parse_error("module attributes {\n  x = #stablehlo.dot<foo = [0]>"
                     "} {}\n", "t.mlir:2:", "expected one of");
  expect_parse_error("func.func private @f() -> !stablehlo.foobar\n",
                     "t.mlir:1:", "unknown stablehlo type: foobar");
  const char *dg =
      "func.func @main(%%a: tensor<2x2x2xi64>) {\n"
      "  %%0 = \"stablehlo.dot_general\"(%%a, %%a) <{\n"
      "    dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = "
      "[0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], "
      "rhs_contracting_dimensions = [1]>,\n"
      "    algorithm = #stablehlo.dot_algorithm<lhs_precision_type = %s, "
      "rhs_precision_type = tf32, accumulation_type = f32, "
      "lhs_component_count = %d, rhs_component_count = 1, "
      "num_primitive_operations = 1, allow_imprecise_accumulation = false>\n"
      "  }> : (tensor<2x2x2xi64>, tensor<2x2x2xi64>) -> tensor<2x2x2xi64>\n"
      "  func.return\n}\n";
  char text[2048];
  snprintf(text, sizeof text, dg, "tf32", 0);
  expect_parse_error(text, "t.mlir:4:17:", "lhs component count must be "
                     "positive");
  snprintf(text, sizeof text, dg, "i8", 1);
  expect_parse_error(text, "t.mlir:4:17:", "not known to be supported");
  snprintf(text, sizeof text, dg, "tf32", 1);
  expect_clean(text);
}

static void test_collective(void **state) {
  (void)state;
  expect_error("func.func @main(%a: tensor<10xf32>) {\n"
               "  %0 = \"stablehlo.all_reduce\"(%a) ({\n"
               "  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
               "    %m = stablehlo.maximum %x, %y : tensor<f32>\n"
               "    \"stablehlo.return\"(%m) : (tensor<f32>) -> ()\n"
               "  }) {replica_groups = dense<[[0, 1, 1, 3]]> : "
               "tensor<1x4xi64>} : (tensor<10xf32>) -> tensor<10xf32>\n"
               "  func.return\n}\n",
               "t.mlir:2:8: error: stablehlo.all_reduce", "(C1)",
               "replica id #1 seen more than once");
  expect_error("func.func @main(%a: tensor<4x16xf32>) {\n"
               "  %0 = \"stablehlo.reduce_scatter\"(%a) ({\n"
               "  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
               "    %m = stablehlo.add %x, %y : tensor<f32>\n"
               "    \"stablehlo.return\"(%m) : (tensor<f32>) -> ()\n"
               "  }) {replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>,"
               " scatter_dimension = 1 : i64, use_global_device_ids} : "
               "(tensor<4x16xf32>) -> tensor<4x4xf32>\n  func.return\n}\n",
               "t.mlir:2:8: error: stablehlo.reduce_scatter", "(C6)",
               "channel_id must be positive");
  expect_error("func.func @main(%a: tensor<4x16xf32>) {\n"
               "  %0 = \"stablehlo.all_to_all\"(%a) {split_dimension = 1 : i64,"
               " concat_dimension = 0 : i64, split_count = 4 : i64, "
               "replica_groups = dense<0> : tensor<0x2xi64>} : "
               "(tensor<4x16xf32>) -> tensor<16x4xf32>\n  func.return\n}\n",
               "t.mlir:2:8: error: stablehlo.all_to_all", "(C8)", /* spec */
               "group size of replica_groups must be 4");
}

static void test_misc(void **state) {
  (void)state;
  expect_error("func.func @f(%x: tensor<f64>) -> tensor<f64> {\n"
               "  func.return %x : tensor<f64>\n}\n"
               "func.func @main(%a: tensor<f32>) {\n"
               "  %0 = func.call @f(%a) : (tensor<f32>) -> tensor<f64>\n"
               "  func.return\n}\n",
               "t.mlir:5:8: error: func.call", "operand #0", "tensor<f32>");
  expect_error("func.func @main(%a: tensor<f32>) -> tensor<i32> {\n"
               "  func.return %a : tensor<f32>\n}\n",
               "t.mlir:2:3: error: func.return", "result #0", "tensor<i32>");
  const char *cc =
      "func.func @main(%%a: tuple<tensor<1x1xf32>, tensor<2x3xf32>>) {\n"
      "  %%0 = \"stablehlo.custom_call\"(%%a) {call_target_name = \"foo\", "
      "output_operand_aliases = [#stablehlo.output_operand_alias<"
      "output_tuple_indices = [%d], operand_index = %d, "
      "operand_tuple_indices = [%d]>]} : (tuple<tensor<1x1xf32>, "
      "tensor<2x3xf32>>) -> tuple<tensor<%s>>\n  func.return\n}\n";
  char text[1024];
  snprintf(text, sizeof text, cc, 0, 1, 1, "2x3xf32");
  expect_error(text, "t.mlir:2:8: error: stablehlo.custom_call",
               "(output_operand_aliases)", "operand_index 1");
  snprintf(text, sizeof text, cc, 1, 0, 1, "2x3xf32");
  expect_error(text, "t.mlir:2:8:", "(output_operand_aliases)",
               "output_tuple_indices [1]");
  snprintf(text, sizeof text, cc, 0, 0, 2, "2x3xf32");
  expect_error(text, "t.mlir:2:8:", "(output_operand_aliases)",
               "operand_tuple_indices [2]");
  snprintf(text, sizeof text, cc, 0, 0, 1, "20x30xf32");
  expect_error(text, "t.mlir:2:8:", "(output_operand_aliases)",
               "tensor<20x30xf32>");
  snprintf(text, sizeof text, cc, 0, 0, 1, "2x3xf32");
  expect_clean(text);
  expect_error("func.func @main() {\n  \"stablehlo.custom_call\"() "
               "{api_version = 4 : i32, backend_config = \"bar=42\", "
               "call_target_name = \"foo\"} : () -> ()\n  func.return\n}\n",
               "t.mlir:2:3: error: stablehlo.custom_call", "(backend_config)",
               "must be a dictionary");
  expect_error("func.func @main() {\n  \"stablehlo.custom_call\"() "
               "{api_version = 3 : i32, backend_config = {bar = 42 : i32}, "
               "call_target_name = \"foo\"} : () -> ()\n  func.return\n}\n",
               "t.mlir:2:3:", "(backend_config)", "must be a string");
  expect_error("func.func @main(%a: tensor<4xf64>, %v: tensor<f64>) {\n"
               "  %p = stablehlo.constant dense<1> : tensor<1xi32>\n"
               "  %0 = stablehlo.dynamic_pad %a, %v, %p, %p, %p : "
               "(tensor<4xf64>, tensor<f64>, tensor<1xi32>, tensor<1xi32>, "
               "tensor<1xi32>) -> tensor<4xf64>\n  func.return\n}\n",
               "t.mlir:3:8: error: stablehlo.dynamic_pad", "(C4)", "[9]");
  expect_error("func.func @main(%a: tensor<4xf64>, %v: tensor<f64>, "
               "%l: tensor<1xi32>) {\n"
               "  %p = stablehlo.constant dense<-1> : tensor<1xi32>\n"
               "  %0 = stablehlo.dynamic_pad %a, %v, %l, %l, %p : "
               "(tensor<4xf64>, tensor<f64>, tensor<1xi32>, tensor<1xi32>, "
               "tensor<1xi32>) -> tensor<4xf64>\n  func.return\n}\n",
               "t.mlir:3:8: error: stablehlo.dynamic_pad", "(C3)",
               "non-negative");
  expect_error("func.func @main(%a: tensor<2x4x9xi32>, %i: tensor<1x5x2xi32>,"
               " %s: tensor<3xi32>) {\n"
               "  %0 = \"stablehlo.dynamic_gather\"(%a, %i, %s) "
               "{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = "
               "[0, 1], index_vector_dim = 2, offset_dims = [2], "
               "start_index_map = [0, 1]>} : (tensor<2x4x9xi32>, "
               "tensor<1x5x2xi32>, tensor<3xi32>) -> tensor<3xi32>\n"
               "  func.return\n}\n",
               "t.mlir:2:8: error: stablehlo.dynamic_gather", "(C22)",
               "[1, 5, -1]");
  const char *sds =
      "func.func @main(%%a: tensor<1x128x512xf32>) {\n"
      "  %%z = stablehlo.constant dense<512> : tensor<%si32>\n"
      "  %%0 = \"stablehlo.set_dimension_size\"(%%a, %%z) {dimension = %d : "
      "i64} : (tensor<1x128x512xf32>, tensor<%si32>) -> "
      "tensor<1x128x512xf32>\n  func.return\n}\n";
  snprintf(text, sizeof text, sds, "1x", 2, "1x");
  expect_error(text, "t.mlir:3:8: error: stablehlo.set_dimension_size",
               "(size)", "rank-0");
  snprintf(text, sizeof text, sds, "", -1, "");
  expect_error(text, "t.mlir:3:8:", "(dimension)", "non-negative");
  snprintf(text, sizeof text, sds, "", 3, "");
  expect_error(text, "t.mlir:3:8:", "(dimension)", "[0, 3)");
  snprintf(text, sizeof text, sds, "", 2, "");
  expect_clean(text);
}

static void test_module(void **state) {
  (void)state;
  /* With require_entry, a module without @main or a single function. */
  const char *text = "func.func @f() {\n  func.return\n}\n"
                     "func.func @g() {\n  func.return\n}\n";
  shlo_module *m = NULL;
  shlo_diag d;
  assert_int_equal(shlo_parse_module(text, strlen(text), "t.mlir", &m, &d),
                   SHLO_OK);
  shlo_verify_opts o = {.require_entry = true};
  assert_int_equal(shlo_verify_module_first(m, &o, &d), SHLO_EVERIFY);
  assert_non_null(strstr(d.message, "no entry function"));
  assert_int_equal(shlo_verify_module(m, NULL, NULL), SHLO_OK);
  shlo_module_free(m);
  /* Dynamic shapes are verified, not set aside as unsupported. */
  shlo_status st;
  verify_text("func.func @main(%a: tensor<?xf32>) {\n  func.return\n}\n", &st);
  assert_int_equal(st, SHLO_OK);
}

/* Dynamic, bounded and unranked types: `?` is compatible with any size
 * (within its bound), so what would be a mismatch between static sizes is
 * fine, and a mismatch between known sizes still is not. */
static void test_dynamic(void **state) {
  (void)state;
  expect_clean("func.func @main(%a: tensor<?x4xf32>, %b: tensor<3x?xf32>) "
            "-> tensor<3x4xf32> {\n"
            "  %0 = stablehlo.add %a, %b : (tensor<?x4xf32>, tensor<3x?xf32>) "
            "-> tensor<3x4xf32>\n"
            "  func.return %0 : tensor<3x4xf32>\n}\n");
  expect_error("func.func @main(%a: tensor<?x4xf32>) -> tensor<3x5xf32> {\n"
               "  %0 = stablehlo.abs %a : (tensor<?x4xf32>) -> "
               "tensor<3x5xf32>\n"
               "  func.return %0 : tensor<3x5xf32>\n}\n",
               "t.mlir:2:8: error: stablehlo.abs", "(C1)", NULL);
  /* A static size above the bound of a bounded dimension. */
  expect_error("func.func @main(%a: tensor<?xf32, #stablehlo.bounds<4>>) "
               "-> tensor<5xf32> {\n"
               "  %0 = stablehlo.abs %a : (tensor<?xf32, #stablehlo.bounds<4>>)"
               " -> tensor<5xf32>\n"
               "  func.return %0 : tensor<5xf32>\n}\n",
               "t.mlir:2:8: error: stablehlo.abs", "(C1)", NULL);
  expect_clean("func.func @main(%a: tensor<?xf32, #stablehlo.bounds<4>>) "
            "-> tensor<3xf32> {\n"
            "  %0 = stablehlo.abs %a : (tensor<?xf32, #stablehlo.bounds<4>>)"
            " -> tensor<3xf32>\n"
            "  func.return %0 : tensor<3xf32>\n}\n");
  /* broadcast_in_dim's result must be static; its operand need not be. */
  expect_error("func.func @main(%a: tensor<3xf32>) -> tensor<?x3xf32> {\n"
               "  %0 = stablehlo.broadcast_in_dim %a, dims = [1] : "
               "(tensor<3xf32>) -> tensor<?x3xf32>\n"
               "  func.return %0 : tensor<?x3xf32>\n}\n",
               "t.mlir:2:8: error: stablehlo.broadcast_in_dim",
               "statically shaped", NULL);
  /* A constant shape operand is a static size. */
  expect_error("func.func @main(%a: tensor<2x5xf32>) -> tensor<?x?xf32> {\n"
               "  %s = stablehlo.constant dense<[3, 4]> : tensor<2xi64>\n"
               "  %0 = stablehlo.dynamic_reshape %a, %s : (tensor<2x5xf32>, "
               "tensor<2xi64>) -> tensor<?x?xf32>\n"
               "  func.return %0 : tensor<?x?xf32>\n}\n",
               "t.mlir:3:8: error: stablehlo.dynamic_reshape", "(C2)", "12");
  expect_clean("func.func @main(%a: tensor<*xf32>) -> tensor<*xf32> {\n"
            "  %0 = stablehlo.abs %a : (tensor<*xf32>) -> tensor<*xf32>\n"
            "  func.return %0 : tensor<*xf32>\n}\n");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_elementwise), cmocka_unit_test(test_shape),
      cmocka_unit_test(test_reduce),      cmocka_unit_test(test_indexing),
      cmocka_unit_test(test_linalg),      cmocka_unit_test(test_collective),
      cmocka_unit_test(test_misc),        cmocka_unit_test(test_module),
      cmocka_unit_test(test_quantized),   cmocka_unit_test(test_parse_time),
      cmocka_unit_test(test_dynamic),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
