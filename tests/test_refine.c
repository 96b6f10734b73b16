/* SPDX-License-Identifier: Apache-2.0 */
/* Shape refinement at call time (engine/src/compile/refine*.c): programs
 * with dynamic shapes, written for this test in the style of JAX's
 * shape-polymorphic exports, run with several concrete argument shapes
 * each.  Results are hand-computed; shlo_executable_refinements counts the
 * compiles, one per argument-shape signature. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/value.h"
#include "shlo/engine.h"

typedef struct loaded {
  shlo_module *m;
  shlo_executable *e;
} loaded;

static loaded load(const char *text) {
  loaded l;
  shlo_diag d;
  shlo_diag_clear(&d);
  if (shlo_load(text, strlen(text), "t.mlir", NULL, &l.m, &l.e, &d)) {
    char buf[SHLO_DIAG_MAX + 256];
    shlo_diag_format(&d, buf, sizeof buf);
    fprintf(stderr, "load failed: %s\n", buf);
    fail();
  }
  return l;
}

static void unload(loaded l) {
  shlo_executable_free(l.e);
  shlo_module_free(l.m);
}

static shlo_value **values(const char *text, int *n) {
  shlo_value **v = NULL;
  shlo_diag d;
  shlo_diag_clear(&d);
  assert_int_equal(shlo_parse_values(text, strlen(text), &v, n, &d), SHLO_OK);
  return v;
}

static void free_values(shlo_value **v, int n) {
  for (int i = 0; i < n; i++) shlo_value_unref(v[i]);
  free(v);
}

/* Run l on args; the status, and on success the results compared with
 * `want` (a value list); the diagnostic's text goes to msg (may be NULL). */
static shlo_status run(loaded l, const char *args, const char *want,
                       char *msg, size_t cap) {
  int na, nr = 0, nw = 0;
  shlo_value **a = values(args, &na), **r = NULL;
  shlo_diag d;
  shlo_diag_clear(&d);
  shlo_status st = shlo_execute(l.e, NULL, a, na, &r, &nr, &d);
  if (msg) shlo_diag_format(&d, msg, cap);
  if (!st && want) {
    shlo_value **w = values(want, &nw);
    assert_int_equal(nr, nw);
    for (int i = 0; i < nr; i++) {
      assert_int_equal(r[i]->elem, w[i]->elem);
      assert_int_equal(r[i]->rank, w[i]->rank);
      for (int k = 0; k < r[i]->rank; k++)
        assert_int_equal(r[i]->dims[k], w[i]->dims[k]);
      assert_int_equal(r[i]->nbytes, w[i]->nbytes);
      assert_memory_equal(r[i]->data, w[i]->data, r[i]->nbytes);
    }
    free_values(w, nw);
  }
  free_values(r, nr);
  free_values(a, na);
  return st;
}

static const char *const ELEMENTWISE =
    "func.func @main(%a: tensor<?x2xi32>, %b: tensor<?x2xi32>) -> "
    "tensor<?x2xi32> {\n"
    "  %0 = stablehlo.add %a, %b : tensor<?x2xi32>\n"
    "  %1 = stablehlo.multiply %0, %a : tensor<?x2xi32>\n"
    "  func.return %1 : tensor<?x2xi32>\n}\n";

static void elementwise_refines_per_shape(void **state) {
  (void)state;
  loaded l = load(ELEMENTWISE);
  assert_int_equal(shlo_executable_refinements(l.e), 0);
  /* (a + b) * a */
  assert_int_equal(run(l, "[dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>, "
                          "dense<[[1, 1], [2, 2]]> : tensor<2x2xi32>]",
                       "[dense<[[2, 6], [15, 24]]> : tensor<2x2xi32>]", NULL,
                       0),
                   SHLO_OK);
  assert_int_equal(shlo_executable_refinements(l.e), 1);
  assert_int_equal(run(l, "[dense<[[5, -1]]> : tensor<1x2xi32>, "
                          "dense<[[1, 3]]> : tensor<1x2xi32>]",
                       "[dense<[[30, -2]]> : tensor<1x2xi32>]", NULL, 0),
                   SHLO_OK);
  assert_int_equal(shlo_executable_refinements(l.e), 2);
  /* The first shape again: its plan is reused, no compile. */
  assert_int_equal(run(l, "[dense<[[0, 1], [1, 0]]> : tensor<2x2xi32>, "
                          "dense<[[7, 7], [7, 7]]> : tensor<2x2xi32>]",
                       "[dense<[[0, 8], [8, 0]]> : tensor<2x2xi32>]", NULL,
                       0),
                   SHLO_OK);
  assert_int_equal(shlo_executable_refinements(l.e), 2);
  /* An empty batch is a shape like any other. */
  assert_int_equal(run(l, "[dense<> : tensor<0x2xi32>, "
                          "dense<> : tensor<0x2xi32>]",
                       "[dense<> : tensor<0x2xi32>]", NULL, 0),
                   SHLO_OK);
  assert_int_equal(shlo_executable_refinements(l.e), 3);
  unload(l);
}

static void shapes_that_do_not_refine_are_input_errors(void **state) {
  (void)state;
  loaded l = load(ELEMENTWISE);
  char msg[SHLO_DIAG_MAX + 256];
  /* Both are ?x2, but add needs the same batch on both sides. */
  assert_int_equal(run(l, "[dense<[[1, 2]]> : tensor<1x2xi32>, "
                          "dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>]",
                       NULL, msg, sizeof msg),
                   SHLO_EINPUT);
  assert_non_null(strstr(msg, "t.mlir:2:8"));
  assert_non_null(strstr(msg, "do not refine"));
  /* The static dimension must match. */
  assert_int_equal(run(l, "[dense<[[1, 2, 3]]> : tensor<1x3xi32>, "
                          "dense<[[1, 2, 3]]> : tensor<1x3xi32>]",
                       NULL, msg, sizeof msg),
                   SHLO_EINPUT);
  assert_non_null(strstr(msg, "argument 0 of @main must be tensor<?x2xi32>"));
  /* So must the element type and the rank. */
  assert_int_equal(run(l, "[dense<[[1.0, 2.0]]> : tensor<1x2xf32>, "
                          "dense<[[1, 2]]> : tensor<1x2xi32>]",
                       NULL, msg, sizeof msg),
                   SHLO_EINPUT);
  assert_int_equal(run(l, "[dense<[1, 2]> : tensor<2xi32>, "
                          "dense<[1, 2]> : tensor<2xi32>]",
                       NULL, msg, sizeof msg),
                   SHLO_EINPUT);
  /* A shape computed from the argument that disagrees with a broadcast
   * operand: caught on the refined copy (folding it must not read past
   * the operand). */
  loaded b = load(
      "func.func @main(%x: tensor<?xi64>) -> tensor<?xi64> {\n"
      "  %n = stablehlo.get_dimension_size %x, dim = 0 : (tensor<?xi64>) -> "
      "tensor<i32>\n"
      "  %s = stablehlo.reshape %n : (tensor<i32>) -> tensor<1xi32>\n"
      "  %c = stablehlo.constant dense<[1, 2, 3]> : tensor<3xi64>\n"
      "  %r = stablehlo.dynamic_broadcast_in_dim %c, %s, dims = [0] : "
      "(tensor<3xi64>, tensor<1xi32>) -> tensor<?xi64>\n"
      "  func.return %r : tensor<?xi64>\n}\n");
  assert_int_equal(run(b, "[dense<[9, 9, 9]> : tensor<3xi64>]",
                       "[dense<[1, 2, 3]> : tensor<3xi64>]", NULL, 0),
                   SHLO_OK);
  assert_int_equal(run(b, "[dense<[9, 9, 9, 9, 9]> : tensor<5xi64>]", NULL,
                       msg, sizeof msg),
                   SHLO_EINPUT);
  assert_non_null(strstr(msg, "t.mlir:5:8"));
  unload(b);
  /* Failures compile nothing that is kept; a good call still works. */
  assert_int_equal(run(l, "[dense<[[1, 2]]> : tensor<1x2xi32>, "
                          "dense<[[1, 2]]> : tensor<1x2xi32>]",
                       "[dense<[[2, 8]]> : tensor<1x2xi32>]", NULL, 0),
                   SHLO_OK);
  unload(l);
}

/* A JAX-style export: the batch size b comes from get_dimension_size, is
 * asserted >= 1, passed to a private function as a scalar, and rebuilt
 * into a shape for dynamic_broadcast_in_dim. */
static const char *const MATMUL =
    "module @jit_f attributes {jax.uses_shape_polymorphism = true} {\n"
    "  func.func public @main(%x: tensor<?x3xf32>, %w: tensor<3x2xf32>) -> "
    "tensor<?x2xf32> {\n"
    "    %0 = stablehlo.get_dimension_size %x, dim = 0 : (tensor<?x3xf32>) "
    "-> tensor<i32>\n"
    "    %b = stablehlo.convert %0 : (tensor<i32>) -> tensor<i64>\n"
    "    %one = stablehlo.constant dense<1> : tensor<i64>\n"
    "    %ok = stablehlo.compare GE, %b, %one, SIGNED : (tensor<i64>, "
    "tensor<i64>) -> tensor<i1>\n"
    "    stablehlo.custom_call @shape_assertion(%ok, %b) {error_message = "
    "\"Expected value >= 1 for dimension variable 'b', got {0}\", "
    "has_side_effect = true} : (tensor<i1>, tensor<i64>) -> ()\n"
    "    %r = call @inner(%b, %x, %w) : (tensor<i64>, tensor<?x3xf32>, "
    "tensor<3x2xf32>) -> tensor<?x2xf32>\n"
    "    return %r : tensor<?x2xf32>\n"
    "  }\n"
    "  func.func private @inner(%b: tensor<i64>, %x: tensor<?x3xf32>, "
    "%w: tensor<3x2xf32>) -> tensor<?x2xf32> {\n"
    "    %0 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : "
    "(tensor<?x3xf32>, tensor<3x2xf32>) -> tensor<?x2xf32>\n"
    "    %1 = stablehlo.reshape %b : (tensor<i64>) -> tensor<1xi64>\n"
    "    %two = stablehlo.constant dense<2> : tensor<1xi64>\n"
    "    %s = stablehlo.concatenate %1, %two, dim = 0 : (tensor<1xi64>, "
    "tensor<1xi64>) -> tensor<2xi64>\n"
    "    %c = stablehlo.constant dense<0.5> : tensor<f32>\n"
    "    %2 = stablehlo.dynamic_broadcast_in_dim %c, %s, dims = [] : "
    "(tensor<f32>, tensor<2xi64>) -> tensor<?x2xf32>\n"
    "    %3 = stablehlo.add %0, %2 : tensor<?x2xf32>\n"
    "    return %3 : tensor<?x2xf32>\n"
    "  }\n"
    "}\n";

static void matmul_with_symbolic_batch(void **state) {
  (void)state;
  loaded l = load(MATMUL);
  const char *w = "dense<[[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]> : "
                  "tensor<3x2xf32>]";
  char args[512];
  /* Rows [x0 + x2, x1 + x2] + 0.5. */
  snprintf(args, sizeof args, "[dense<[[1.0, 2.0, 3.0]]> : tensor<1x3xf32>, "
           "%s", w);
  assert_int_equal(run(l, args, "[dense<[[4.5, 5.5]]> : tensor<1x2xf32>]",
                       NULL, 0),
                   SHLO_OK);
  snprintf(args, sizeof args, "[dense<[[1.0, 2.0, 3.0], [0.0, 0.0, 0.0], "
           "[-1.0, 4.0, 2.0]]> : tensor<3x3xf32>, %s", w);
  assert_int_equal(run(l, args, "[dense<[[4.5, 5.5], [0.5, 0.5], "
                                "[1.5, 6.5]]> : tensor<3x2xf32>]",
                       NULL, 0),
                   SHLO_OK);
  assert_int_equal(shlo_executable_refinements(l.e), 2);
  /* b = 0 fails the assertion: an input error with its message, {0}
   * replaced by b's value. */
  char msg[SHLO_DIAG_MAX + 256];
  snprintf(args, sizeof args, "[dense<> : tensor<0x3xf32>, %s", w);
  assert_int_equal(run(l, args, NULL, msg, sizeof msg), SHLO_EINPUT);
  assert_non_null(strstr(msg, "t.mlir:7:5"));
  assert_non_null(
      strstr(msg, "Expected value >= 1 for dimension variable 'b', got 0"));
  unload(l);
}

/* Reshape and broadcast of symbolic dims: x is n x m; its flattening has
 * n * m elements (computed from both sizes), and a row vector broadcast
 * to n x m is added to it. */
static const char *const RESHAPE_BROADCAST =
    "func.func @main(%x: tensor<?x?xi32>, %v: tensor<?xi32>) -> "
    "(tensor<?xi32>, tensor<?x?xi32>) {\n"
    "  %n = stablehlo.get_dimension_size %x, dim = 0 : (tensor<?x?xi32>) -> "
    "tensor<i32>\n"
    "  %m = stablehlo.get_dimension_size %x, dim = 1 : (tensor<?x?xi32>) -> "
    "tensor<i32>\n"
    "  %nm = stablehlo.multiply %n, %m : tensor<i32>\n"
    "  %s1 = stablehlo.reshape %nm : (tensor<i32>) -> tensor<1xi32>\n"
    "  %flat = stablehlo.dynamic_reshape %x, %s1 : (tensor<?x?xi32>, "
    "tensor<1xi32>) -> tensor<?xi32>\n"
    "  %n1 = stablehlo.reshape %n : (tensor<i32>) -> tensor<1xi32>\n"
    "  %m1 = stablehlo.reshape %m : (tensor<i32>) -> tensor<1xi32>\n"
    "  %s2 = stablehlo.concatenate %n1, %m1, dim = 0 : (tensor<1xi32>, "
    "tensor<1xi32>) -> tensor<2xi32>\n"
    "  %b = stablehlo.dynamic_broadcast_in_dim %v, %s2, dims = [1] : "
    "(tensor<?xi32>, tensor<2xi32>) -> tensor<?x?xi32>\n"
    "  %sum = stablehlo.add %x, %b : tensor<?x?xi32>\n"
    "  func.return %flat, %sum : tensor<?xi32>, tensor<?x?xi32>\n}\n";

static void reshape_and_broadcast_of_symbolic_dims(void **state) {
  (void)state;
  loaded l = load(RESHAPE_BROADCAST);
  assert_int_equal(run(l, "[dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi32>, "
                          "dense<[10, 20, 30]> : tensor<3xi32>]",
                       "[dense<[1, 2, 3, 4, 5, 6]> : tensor<6xi32>, "
                       "dense<[[11, 22, 33], [14, 25, 36]]> : "
                       "tensor<2x3xi32>]",
                       NULL, 0),
                   SHLO_OK);
  assert_int_equal(run(l, "[dense<[[7], [8], [9]]> : tensor<3x1xi32>, "
                          "dense<[100]> : tensor<1xi32>]",
                       "[dense<[7, 8, 9]> : tensor<3xi32>, "
                       "dense<[[107], [108], [109]]> : tensor<3x1xi32>]",
                       NULL, 0),
                   SHLO_OK);
  /* v's size must be x's second dimension: broadcast_in_dim's C5 on the
   * refined shapes. */
  char msg[SHLO_DIAG_MAX + 256];
  assert_int_equal(run(l, "[dense<[[1, 2, 3]]> : tensor<1x3xi32>, "
                          "dense<[1, 2]> : tensor<2xi32>]",
                       NULL, msg, sizeof msg),
                   SHLO_EINPUT);
  assert_non_null(strstr(msg, "dynamic_broadcast_in_dim"));
  assert_int_equal(shlo_executable_refinements(l.e), 3);
  unload(l);
}

/* dynamic_iota, dynamic_pad and real_dynamic_slice with shape operands
 * computed from the argument's size n. */
static void dynamic_shape_ops(void **state) {
  (void)state;
  loaded l = load(
      "func.func @main(%x: tensor<?xi64>) -> (tensor<?xi64>, tensor<?xi64>, "
      "tensor<?xi64>) {\n"
      "  %n = stablehlo.get_dimension_size %x, dim = 0 : (tensor<?xi64>) -> "
      "tensor<i32>\n"
      "  %n64 = stablehlo.convert %n : (tensor<i32>) -> tensor<i64>\n"
      "  %s = stablehlo.reshape %n64 : (tensor<i64>) -> tensor<1xi64>\n"
      "  %i = stablehlo.dynamic_iota %s, dim = 0 : (tensor<1xi64>) -> "
      "tensor<?xi64>\n"
      "  %z = stablehlo.constant dense<0> : tensor<i64>\n"
      "  %one = stablehlo.constant dense<[1]> : tensor<1xi64>\n"
      "  %zero = stablehlo.constant dense<[0]> : tensor<1xi64>\n"
      "  %p = stablehlo.dynamic_pad %x, %z, %one, %s, %zero : "
      "(tensor<?xi64>, tensor<i64>, tensor<1xi64>, tensor<1xi64>, "
      "tensor<1xi64>) -> tensor<?xi64>\n"
      "  %two = stablehlo.constant dense<[2]> : tensor<1xi64>\n"
      "  %r = stablehlo.real_dynamic_slice %x, %one, %s, %two : "
      "(tensor<?xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> "
      "tensor<?xi64>\n"
      "  func.return %i, %p, %r : tensor<?xi64>, tensor<?xi64>, "
      "tensor<?xi64>\n}\n");
  /* n = 4: iota 0..3; pad 1 low and n high; elements 1 and 3. */
  assert_int_equal(run(l, "[dense<[5, 6, 7, 8]> : tensor<4xi64>]",
                       "[dense<[0, 1, 2, 3]> : tensor<4xi64>, "
                       "dense<[0, 5, 6, 7, 8, 0, 0, 0, 0]> : tensor<9xi64>, "
                       "dense<[6, 8]> : tensor<2xi64>]",
                       NULL, 0),
                   SHLO_OK);
  assert_int_equal(run(l, "[dense<[9, 3]> : tensor<2xi64>]",
                       "[dense<[0, 1]> : tensor<2xi64>, "
                       "dense<[0, 9, 3, 0, 0]> : tensor<5xi64>, "
                       "dense<[3]> : tensor<1xi64>]",
                       NULL, 0),
                   SHLO_OK);
  unload(l);
}

/* dynamic_gather with folded slice sizes and dynamic_conv with folded
 * padding, on operands of dynamic size. */
static void dynamic_gather_and_conv(void **state) {
  (void)state;
  loaded l = load(
      "func.func @main(%x: tensor<?x2xi32>, %l: tensor<1x?x1xf32>) -> "
      "(tensor<?x?xi32>, tensor<1x?x1xf32>) {\n"
      "  %idx = stablehlo.constant dense<[[1]]> : tensor<1x1xi64>\n"
      "  %ss = stablehlo.constant dense<[1, 2]> : tensor<2xi64>\n"
      "  %g = \"stablehlo.dynamic_gather\"(%x, %idx, %ss) {dimension_numbers "
      "= #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], "
      "start_index_map = [0], index_vector_dim = 1>} : (tensor<?x2xi32>, "
      "tensor<1x1xi64>, tensor<2xi64>) -> tensor<?x?xi32>\n"
      "  %k = stablehlo.constant dense<[[[1.0]], [[1.0]]]> : "
      "tensor<2x1x1xf32>\n"
      "  %p = stablehlo.constant dense<[[0, 1]]> : tensor<1x2xi64>\n"
      "  %c = \"stablehlo.dynamic_conv\"(%l, %k, %p) {dimension_numbers = "
      "#stablehlo.conv<[b, 0, f]x[0, i, o]->[b, 0, f]>, window_strides = "
      "array<i64: 1>, feature_group_count = 1 : i64, batch_group_count = 1 "
      ": i64} : (tensor<1x?x1xf32>, tensor<2x1x1xf32>, tensor<1x2xi64>) -> "
      "tensor<1x?x1xf32>\n"
      "  func.return %g, %c : tensor<?x?xi32>, tensor<1x?x1xf32>\n}\n");
  /* Row 1 of x; sums of neighbours with one zero padded on the right. */
  assert_int_equal(run(l, "[dense<[[1, 2], [3, 4], [5, 6]]> : "
                          "tensor<3x2xi32>, dense<[[[1.0], [2.0], [3.0], "
                          "[4.0]]]> : tensor<1x4x1xf32>]",
                       "[dense<[[3, 4]]> : tensor<1x2xi32>, "
                       "dense<[[[3.0], [5.0], [7.0], [4.0]]]> : "
                       "tensor<1x4x1xf32>]",
                       NULL, 0),
                   SHLO_OK);
  assert_int_equal(run(l, "[dense<[[7, 8], [9, 10]]> : tensor<2x2xi32>, "
                          "dense<[[[1.0], [-1.0]]]> : tensor<1x2x1xf32>]",
                       "[dense<[[9, 10]]> : tensor<1x2xi32>, "
                       "dense<[[[0.0], [-1.0]]]> : tensor<1x2x1xf32>]",
                       NULL, 0),
                   SHLO_OK);
  unload(l);
}

/* A composite's decomposition and a while loop carrying a dynamic
 * tensor are refined with the shapes they are given. */
static void composites_and_loops(void **state) {
  (void)state;
  loaded l = load(
      "func.func @main(%x: tensor<?xi32>) -> tensor<?xi32> {\n"
      "  %d = stablehlo.composite \"my.double\" %x {decomposition = @dbl} : "
      "(tensor<?xi32>) -> tensor<?xi32>\n"
      "  %c0 = stablehlo.constant dense<0> : tensor<i32>\n"
      "  %r:2 = stablehlo.while(%i = %c0, %v = %d) : tensor<i32>, "
      "tensor<?xi32>\n"
      "  cond {\n"
      "    %three = stablehlo.constant dense<3> : tensor<i32>\n"
      "    %lt = stablehlo.compare LT, %i, %three : (tensor<i32>, "
      "tensor<i32>) -> tensor<i1>\n"
      "    stablehlo.return %lt : tensor<i1>\n"
      "  } do {\n"
      "    %one = stablehlo.constant dense<1> : tensor<i32>\n"
      "    %j = stablehlo.add %i, %one : tensor<i32>\n"
      "    %w = stablehlo.add %v, %x : tensor<?xi32>\n"
      "    stablehlo.return %j, %w : tensor<i32>, tensor<?xi32>\n"
      "  }\n"
      "  func.return %r#1 : tensor<?xi32>\n}\n"
      "func.func private @dbl(%x: tensor<?xi32>) -> tensor<?xi32> {\n"
      "  %0 = stablehlo.add %x, %x : tensor<?xi32>\n"
      "  func.return %0 : tensor<?xi32>\n}\n");
  /* 2x plus 3 more x: 5x. */
  assert_int_equal(run(l, "[dense<[1, -2, 3]> : tensor<3xi32>]",
                       "[dense<[5, -10, 15]> : tensor<3xi32>]", NULL, 0),
                   SHLO_OK);
  assert_int_equal(run(l, "[dense<[7]> : tensor<1xi32>]",
                       "[dense<[35]> : tensor<1xi32>]", NULL, 0),
                   SHLO_OK);
  unload(l);
}

/* A bounded dimension takes any size up to its bound. */
static void bounded_dimension(void **state) {
  (void)state;
  loaded l = load(
      "func.func @main(%x: tensor<?xi32, #stablehlo.bounds<3>>) -> "
      "tensor<?xi32, #stablehlo.bounds<3>> {\n"
      "  %0 = stablehlo.negate %x : tensor<?xi32, #stablehlo.bounds<3>>\n"
      "  func.return %0 : tensor<?xi32, #stablehlo.bounds<3>>\n}\n");
  assert_int_equal(run(l, "[dense<[1, -2, 3]> : tensor<3xi32>]",
                       "[dense<[-1, 2, -3]> : tensor<3xi32>]", NULL, 0),
                   SHLO_OK);
  char msg[SHLO_DIAG_MAX + 256];
  assert_int_equal(run(l, "[dense<[1, 2, 3, 4]> : tensor<4xi32>]", NULL, msg,
                       sizeof msg),
                   SHLO_EINPUT);
  assert_non_null(strstr(msg, "bound"));
  unload(l);
}

/* A static module never refines. */
static void static_module_has_one_plan(void **state) {
  (void)state;
  loaded l = load("func.func @main(%a: tensor<2xi32>) -> tensor<2xi32> {\n"
                  "  func.return %a : tensor<2xi32>\n}\n");
  assert_int_equal(run(l, "[dense<[1, 2]> : tensor<2xi32>]",
                       "[dense<[1, 2]> : tensor<2xi32>]", NULL, 0),
                   SHLO_OK);
  assert_int_equal(shlo_executable_refinements(l.e), 0);
  unload(l);
}

/* The rules whose attributes the programs above keep trivial, with
 * values that tell a wrong rule apart (each result shape feeds the
 * refined module's verification, so a wrong size is an error): interior
 * and negative edge padding, a slice stride that does not divide,
 * concatenation and reduction along dimension 1, a non-identity
 * permutation, batched dot_general, and a convolution with strides,
 * padding and both dilations. */
static void refine_rules_with_nontrivial_attributes(void **state) {
  (void)state;
  loaded a = load(
      "func.func @main(%x: tensor<?xi32>) -> (tensor<?xi32>, tensor<?xi32>, "
      "tensor<?xi32>) {\n"
      "  %z = stablehlo.constant dense<0> : tensor<i32>\n"
      "  %p = stablehlo.pad %x, %z, low = [-1], high = [2], interior = [2] "
      ": (tensor<?xi32>, tensor<i32>) -> tensor<?xi32>\n"
      "  %s = stablehlo.slice %x [0:3:2] : (tensor<?xi32>) -> "
      "tensor<?xi32>\n"
      "  %lo = stablehlo.constant dense<[0]> : tensor<1xi64>\n"
      "  %hi = stablehlo.constant dense<[1]> : tensor<1xi64>\n"
      "  %in = stablehlo.constant dense<[1]> : tensor<1xi64>\n"
      "  %d = stablehlo.dynamic_pad %x, %z, %lo, %hi, %in : (tensor<?xi32>, "
      "tensor<i32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> "
      "tensor<?xi32>\n"
      "  func.return %p, %s, %d : tensor<?xi32>, tensor<?xi32>, "
      "tensor<?xi32>\n}\n");
  /* pad: -1 + 2 + n + 2 (n - 1); slice: ceil(3 / 2); dynamic_pad:
   * 0 + 1 + n + (n - 1). */
  assert_int_equal(run(a, "[dense<[1, 2, 3]> : tensor<3xi32>]",
                       "[dense<[0, 0, 2, 0, 0, 3, 0, 0]> : tensor<8xi32>, "
                       "dense<[1, 3]> : tensor<2xi32>, "
                       "dense<[1, 0, 2, 0, 3, 0]> : tensor<6xi32>]",
                       NULL, 0),
                   SHLO_OK);
  assert_int_equal(run(a, "[dense<[4, 5, 6, 7]> : tensor<4xi32>]",
                       "[dense<[0, 0, 5, 0, 0, 6, 0, 0, 7, 0, 0]> : "
                       "tensor<11xi32>, dense<[4, 6]> : tensor<2xi32>, "
                       "dense<[4, 0, 5, 0, 6, 0, 7, 0]> : tensor<8xi32>]",
                       NULL, 0),
                   SHLO_OK);
  unload(a);

  loaded b = load(
      "func.func @main(%m: tensor<?x3xi32>) -> (tensor<?x?xi32>, "
      "tensor<3x?xi32>, tensor<?xi32>) {\n"
      "  %c = stablehlo.concatenate %m, %m, %m, dim = 1 : (tensor<?x3xi32>, "
      "tensor<?x3xi32>, tensor<?x3xi32>) -> tensor<?x?xi32>\n"
      "  %t = stablehlo.transpose %m, dims = [1, 0] : (tensor<?x3xi32>) -> "
      "tensor<3x?xi32>\n"
      "  %z = stablehlo.constant dense<0> : tensor<i32>\n"
      "  %r = stablehlo.reduce(%m init: %z) applies stablehlo.add across "
      "dimensions = [1] : (tensor<?x3xi32>, tensor<i32>) -> tensor<?xi32>\n"
      "  func.return %c, %t, %r : tensor<?x?xi32>, tensor<3x?xi32>, "
      "tensor<?xi32>\n}\n");
  assert_int_equal(run(b, "[dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi32>]",
                       "[dense<[[1, 2, 3, 1, 2, 3, 1, 2, 3], "
                       "[4, 5, 6, 4, 5, 6, 4, 5, 6]]> : tensor<2x9xi32>, "
                       "dense<[[1, 4], [2, 5], [3, 6]]> : tensor<3x2xi32>, "
                       "dense<[6, 15]> : tensor<2xi32>]",
                       NULL, 0),
                   SHLO_OK);
  unload(b);

  loaded c = load(
      "func.func @main(%y: tensor<?x2x3xi32>, %w: tensor<?x3x1xi32>, "
      "%l: tensor<1x?x1xf32>) -> (tensor<?x?x?xi32>, tensor<1x?x1xf32>) {\n"
      "  %d = stablehlo.dot_general %y, %w, batching_dims = [0] x [0], "
      "contracting_dims = [2] x [1] : (tensor<?x2x3xi32>, "
      "tensor<?x3x1xi32>) -> tensor<?x?x?xi32>\n"
      "  %k = stablehlo.constant dense<1.0> : tensor<2x1x1xf32>\n"
      "  %c = \"stablehlo.convolution\"(%l, %k) {dimension_numbers = "
      "#stablehlo.conv<[b, 0, f]x[0, i, o]->[b, 0, f]>, window_strides = "
      "array<i64: 2>, padding = dense<[[1, 0]]> : tensor<1x2xi64>, "
      "lhs_dilation = array<i64: 2>, rhs_dilation = array<i64: 3>, "
      "feature_group_count = 1 : i64, batch_group_count = 1 : i64} : "
      "(tensor<1x?x1xf32>, tensor<2x1x1xf32>) -> tensor<1x?x1xf32>\n"
      "  func.return %d, %c : tensor<?x?x?xi32>, tensor<1x?x1xf32>\n}\n");
  /* conv: x dilated to 9, padded to 10, window 4, stride 2: 4 outputs,
   * output i = x[i + 1]. */
  assert_int_equal(run(c, "[dense<[[[1, 2, 3], [4, 5, 6]], [[0, 1, 0], "
                          "[1, 1, 1]]]> : tensor<2x2x3xi32>, "
                          "dense<[[[1], [0], [2]], [[3], [4], [5]]]> : "
                          "tensor<2x3x1xi32>, "
                          "dense<[[[1.0], [2.0], [3.0], [4.0], [5.0]]]> : "
                          "tensor<1x5x1xf32>]",
                       "[dense<[[[7], [16]], [[4], [12]]]> : "
                       "tensor<2x2x1xi32>, "
                       "dense<[[[2.0], [3.0], [4.0], [5.0]]]> : "
                       "tensor<1x4x1xf32>]",
                       NULL, 0),
                   SHLO_OK);
  unload(c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(elementwise_refines_per_shape),
      cmocka_unit_test(shapes_that_do_not_refine_are_input_errors),
      cmocka_unit_test(matmul_with_symbolic_batch),
      cmocka_unit_test(reshape_and_broadcast_of_symbolic_dims),
      cmocka_unit_test(dynamic_shape_ops),
      cmocka_unit_test(dynamic_gather_and_conv),
      cmocka_unit_test(composites_and_loops),
      cmocka_unit_test(bounded_dimension),
      cmocka_unit_test(static_module_has_one_plan),
      cmocka_unit_test(refine_rules_with_nontrivial_attributes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
