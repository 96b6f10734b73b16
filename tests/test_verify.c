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
               "t.mlir:2:8:", "(C4)", "tensor<i1>");
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
  expect_error("func.func @main(%a: tensor<3x9xf32>) {\n"
               "  %0 = stablehlo.fft %a, type = RFFT, length = [9, 9] : "
               "(tensor<3x9xf32>) -> tensor<3x5xcomplex<f32>>\n"
               "  func.return\n}\n",
               "t.mlir:2:8:", "(C4)", "stablehlo.fft");
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
  /* Dynamic shapes are reported as unsupported, not as errors. */
  shlo_status st;
  verify_text("func.func @main(%a: tensor<?xf32>) {\n  func.return\n}\n", &st);
  assert_int_equal(st, SHLO_EUNSUPPORTED);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_elementwise), cmocka_unit_test(test_shape),
      cmocka_unit_test(test_reduce),      cmocka_unit_test(test_indexing),
      cmocka_unit_test(test_linalg),      cmocka_unit_test(test_collective),
      cmocka_unit_test(test_misc),        cmocka_unit_test(test_module),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
