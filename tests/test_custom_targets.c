/* SPDX-License-Identifier: Apache-2.0 */
/* custom_call targets that stand for ops (engine/src/kernels/
 * custom_targets.c, compile/refine_custom.c): JAX's shape_assertion in a
 * static program (holds: the program runs; fails: SHLO_EINPUT with JAX's
 * message filled in, nothing returned), stablehlo.dynamic_top_k and
 * stablehlo.dynamic_rng_bit_generator refined at call time (the same
 * values as the static ops), stablehlo.dynamic_reduce_window (a cumsum),
 * stablehlo.dynamic_approx_top_k (CPU's exact top k),
 * sharding annotations as identities, and a
 * shard-shape change refused by name. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "shlo/engine.h"

/* Run text on args; the status, the results in *res (n of them), the
 * diagnostic in msg. */
static shlo_status run(const char *text, shlo_value **args, int n_args,
                       shlo_value ***res, int *n, char *msg, size_t cap) {
  shlo_module *m = NULL;
  shlo_executable *e = NULL;
  shlo_diag d;
  shlo_diag_clear(&d);
  *res = NULL;
  *n = 0;
  shlo_status st = shlo_parse_module(text, strlen(text), "t.mlir", &m, &d);
  if (!st)
    st = shlo_compile(m, NULL, &e, &d);
  if (!st)
    st = shlo_execute(e, NULL, args, n_args, res, n, &d);
  msg[0] = 0;
  if (st)
    shlo_diag_format(&d, msg, cap);
  shlo_executable_free(e);
  shlo_module_free(m);
  return st;
}

static void free_all(shlo_value **res, int n, shlo_value **args, int n_args) {
  for (int i = 0; i < n; i++)
    shlo_value_unref(res[i]);
  free(res);
  for (int i = 0; i < n_args; i++)
    shlo_value_unref(args[i]);
}

static shlo_value *scalar_i32(int32_t x) {
  shlo_value *v = shlo_tensor_new(SHLO_SI32, 0, NULL);
  assert_non_null(v);
  shlo_tensor_set_i64(v, 0, x);
  return v;
}

static const char ASSERTION[] =
    "func.func @main(%b: tensor<i32>) -> tensor<i32> {\n"
    "  %c = stablehlo.constant dense<3> : tensor<i32>\n"
    "  %p = stablehlo.compare GE, %b, %c, SIGNED : (tensor<i32>, "
    "tensor<i32>) -> tensor<i1>\n"
    "  stablehlo.custom_call @shape_assertion(%p, %b, %c) {error_message = "
    "\"Expected 'b' = {0} >= {1}; {7} and {x} stay\", has_side_effect = "
    "true} : (tensor<i1>, tensor<i32>, tensor<i32>) -> ()\n"
    "  %r = stablehlo.multiply %b, %b : tensor<i32>\n"
    "  return %r : tensor<i32>\n}\n";

static void test_shape_assertion_holds(void **state) {
  (void)state;
  shlo_value *args[1] = {scalar_i32(4)};
  shlo_value **res;
  int n;
  char msg[1024];
  assert_int_equal(run(ASSERTION, args, 1, &res, &n, msg, sizeof msg), SHLO_OK);
  assert_int_equal(n, 1);
  assert_int_equal(shlo_tensor_get_i64(res[0], 0), 16);
  free_all(res, n, args, 1);
}

static void test_shape_assertion_fails(void **state) {
  (void)state;
  shlo_value *args[1] = {scalar_i32(2)};
  shlo_value **res;
  int n;
  char msg[1024];
  assert_int_equal(run(ASSERTION, args, 1, &res, &n, msg, sizeof msg),
                   SHLO_EINPUT);
  assert_int_equal(n, 0);
  /* {0}, {1} filled in; an index past the operands and a non-number kept */
  assert_non_null(strstr(msg, "Expected 'b' = 2 >= 3; {7} and {x} stay"));
  free_all(res, n, args, 1);
}

static void test_dynamic_top_k(void **state) {
  (void)state;
  const char *text =
      "func.func @main(%a: tensor<2x?xf32>) -> (tensor<2x?xf32>, "
      "tensor<2x?xi32>) {\n"
      "  %d = stablehlo.get_dimension_size %a, dim = 1 : (tensor<2x?xf32>) "
      "-> tensor<i32>\n"
      "  %one = stablehlo.constant dense<1> : tensor<i32>\n"
      "  %k = stablehlo.subtract %d, %one : tensor<i32>\n"
      "  %0:2 = stablehlo.custom_call @stablehlo.dynamic_top_k(%a, %k) : "
      "(tensor<2x?xf32>, tensor<i32>) -> (tensor<2x?xf32>, tensor<2x?xi32>)\n"
      "  return %0#0, %0#1 : tensor<2x?xf32>, tensor<2x?xi32>\n}\n";
  int64_t dims[2] = {2, 4};
  shlo_value *a = shlo_tensor_new(SHLO_F32, 2, dims);
  assert_non_null(a);
  const float in[8] = {3, 9, 1, 7, -1, -5, 0, 2};
  memcpy(shlo_tensor_data(a), in, sizeof in);
  shlo_value *args[1] = {a};
  shlo_value **res;
  int n;
  char msg[1024];
  shlo_status st = run(text, args, 1, &res, &n, msg, sizeof msg);
  if (st)
    print_message("%s\n", msg);
  assert_int_equal(st, SHLO_OK);
  assert_int_equal(n, 2);
  assert_int_equal(shlo_tensor_dims(res[0])[1], 3);
  const float want_v[6] = {9, 7, 3, 2, 0, -1};
  const int32_t want_i[6] = {1, 3, 0, 3, 2, 0};
  for (int i = 0; i < 6; i++) {
    assert_true(shlo_tensor_get_f64(res[0], i) == want_v[i]);
    assert_int_equal(shlo_tensor_get_i64(res[1], i), want_i[i]);
  }
  free_all(res, n, args, 1);
}

static void test_dynamic_rng_bit_generator(void **state) {
  (void)state;
  const char *dyn =
      "func.func @main(%a: tensor<?x3xf32>) -> (tensor<2xui64>, "
      "tensor<?x3xui32>) {\n"
      "  %s = stablehlo.constant dense<[1, 2]> : tensor<2xui64>\n"
      "  %d = stablehlo.get_dimension_size %a, dim = 0 : (tensor<?x3xf32>) "
      "-> tensor<i32>\n"
      "  %d64 = stablehlo.convert %d : (tensor<i32>) -> tensor<i64>\n"
      "  %d1 = stablehlo.reshape %d64 : (tensor<i64>) -> tensor<1xi64>\n"
      "  %c3 = stablehlo.constant dense<3> : tensor<1xi64>\n"
      "  %sh = stablehlo.concatenate %d1, %c3, dim = 0 : (tensor<1xi64>, "
      "tensor<1xi64>) -> tensor<2xi64>\n"
      "  %0:2 = stablehlo.custom_call "
      "@stablehlo.dynamic_rng_bit_generator(%s, %sh) {ATTRS} : "
      "(tensor<2xui64>, tensor<2xi64>) -> (tensor<2xui64>, "
      "tensor<?x3xui32>)\n"
      "  return %0#0, %0#1 : tensor<2xui64>, tensor<?x3xui32>\n}\n";
  const char *fixed =
      "func.func @main() -> (tensor<2xui64>, tensor<2x3xui32>) {\n"
      "  %s = stablehlo.constant dense<[1, 2]> : tensor<2xui64>\n"
      "  %0:2 = \"stablehlo.rng_bit_generator\"(%s) {rng_algorithm = "
      "#stablehlo<rng_algorithm THREE_FRY>} : (tensor<2xui64>) -> "
      "(tensor<2xui64>, tensor<2x3xui32>)\n"
      "  return %0#0, %0#1 : tensor<2xui64>, tensor<2x3xui32>\n}\n";
  /* the algorithm as JAX's exports give it, on the call itself, and in
   * mhlo.attributes */
  static const char *const where[2] = {
      "api_version = 2 : i32, rng_algorithm = #stablehlo<rng_algorithm "
      "THREE_FRY>",
      "mhlo.attributes = {rng_algorithm = #stablehlo<rng_algorithm "
      "THREE_FRY>}"};
  int64_t dims[2] = {2, 3};
  shlo_value *args[1] = {shlo_tensor_new(SHLO_F32, 2, dims)};
  assert_non_null(args[0]);
  for (int w = 0; w < 2; w++) {
    /* the text with ATTRS replaced */
    char text[4096];
    const char *at = strstr(dyn, "ATTRS");
    assert_non_null(at);
    snprintf(text, sizeof text, "%.*s%s%s", (int)(at - dyn), dyn, where[w],
             at + 5);
    shlo_value **got, **want;
    int n_got, n_want;
    char msg[1024];
    shlo_status st = run(text, args, 1, &got, &n_got, msg, sizeof msg);
    if (st)
      print_message("%s\n", msg);
    assert_int_equal(st, SHLO_OK);
    assert_int_equal(run(fixed, NULL, 0, &want, &n_want, msg, sizeof msg),
                     SHLO_OK);
    assert_int_equal(n_got, 2);
    for (int k = 0; k < 2; k++) {
      assert_int_equal(shlo_tensor_nbytes(got[k]), shlo_tensor_nbytes(want[k]));
      assert_memory_equal(shlo_tensor_data_const(got[k]),
                          shlo_tensor_data_const(want[k]),
                          shlo_tensor_nbytes(want[k]));
    }
    free_all(got, n_got, NULL, 0);
    free_all(want, n_want, NULL, 0);
  }
  shlo_value_unref(args[0]);
}

/* cumsum along dimension 0 of a ?x2 input, as JAX exports it: a window
 * of the dimension's size, padded in front by size - 1, computed from the
 * argument's shape; the body is a function of the module. */
static void test_dynamic_reduce_window(void **state) {
  (void)state;
  const char *cumsum =
      "func.func @main(%a: tensor<?x2xf32>) -> tensor<?x2xf32> {\n"
      "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %d = stablehlo.get_dimension_size %a, dim = 0 : (tensor<?x2xf32>) "
      "-> tensor<i32>\n"
      "  %d64 = stablehlo.convert %d : (tensor<i32>) -> tensor<i64>\n"
      "  %d1 = stablehlo.reshape %d64 : (tensor<i64>) -> tensor<1xi64>\n"
      "  %one = stablehlo.constant dense<1> : tensor<1xi64>\n"
      "  %zero = stablehlo.constant dense<0> : tensor<1xi64>\n"
      "  %dm1 = stablehlo.subtract %d1, %one : tensor<1xi64>\n"
      "  %win = stablehlo.concatenate %d1, %one, dim = 0 : (tensor<1xi64>, "
      "tensor<1xi64>) -> tensor<2xi64>\n"
      "  %ones = stablehlo.constant dense<1> : tensor<2xi64>\n"
      "  %p0 = stablehlo.concatenate %dm1, %zero, dim = 0 : (tensor<1xi64>, "
      "tensor<1xi64>) -> tensor<2xi64>\n"
      "  %p1 = stablehlo.constant dense<0> : tensor<2xi64>\n"
      "  %p0r = stablehlo.reshape %p0 : (tensor<2xi64>) -> tensor<1x2xi64>\n"
      "  %p1r = stablehlo.reshape %p1 : (tensor<2xi64>) -> tensor<1x2xi64>\n"
      "  %pad = stablehlo.concatenate %p0r, %p1r, dim = 0 : (tensor<1x2xi64>, "
      "tensor<1x2xi64>) -> tensor<2x2xi64>\n"
      "  %0 = stablehlo.custom_call @stablehlo.dynamic_reduce_window(%a, %z, "
      "%win, %ones, %ones, %ones, %pad) {called_computations = [@add]} : "
      "(tensor<?x2xf32>, tensor<f32>, tensor<2xi64>, tensor<2xi64>, "
      "tensor<2xi64>, tensor<2xi64>, tensor<2x2xi64>) -> tensor<?x2xf32>\n"
      "  return %0 : tensor<?x2xf32>\n}\n"
      "func.func private @add(%x: tensor<f32>, %y: tensor<f32>) -> "
      "tensor<f32> {\n"
      "  %0 = stablehlo.add %x, %y : tensor<f32>\n"
      "  return %0 : tensor<f32>\n}\n";
  int64_t dims[2] = {4, 2};
  shlo_value *a = shlo_tensor_new(SHLO_F32, 2, dims);
  assert_non_null(a);
  for (int i = 0; i < 8; i++)
    shlo_tensor_set_f64(a, i, i + 1);
  shlo_value *args[1] = {a};
  shlo_value **res;
  int n;
  char msg[1024];
  shlo_status st = run(cumsum, args, 1, &res, &n, msg, sizeof msg);
  if (st)
    print_message("%s\n", msg);
  assert_int_equal(st, SHLO_OK);
  /* columns 1 3 5 7 and 2 4 6 8, summed down */
  const double want[8] = {1, 2, 4, 6, 9, 12, 16, 20};
  for (int i = 0; i < 8; i++)
    assert_true(shlo_tensor_get_f64(res[0], i) == want[i]);
  free_all(res, n, args, 1);
}

/* approx_max_k of a 2x? input with k = size - 2, values and their iota
 * indices, as JAX exports it: the exact top k on CPU, ties by index */
static void test_dynamic_approx_top_k(void **state) {
  (void)state;
  const char *text =
      "func.func @main(%a: tensor<2x?xf32>) -> (tensor<2x?xf32>, "
      "tensor<2x?xi32>) {\n"
      "  %d = stablehlo.get_dimension_size %a, dim = 1 : (tensor<2x?xf32>) -> "
      "tensor<i32>\n"
      "  %two = stablehlo.constant dense<2> : tensor<i32>\n"
      "  %k = stablehlo.subtract %d, %two : tensor<i32>\n"
      "  %two1 = stablehlo.constant dense<2> : tensor<1xi32>\n"
      "  %d1 = stablehlo.reshape %d : (tensor<i32>) -> tensor<1xi32>\n"
      "  %shape = stablehlo.concatenate %two1, %d1, dim = 0 : (tensor<1xi32>, "
      "tensor<1xi32>) -> tensor<2xi32>\n"
      "  %iota = stablehlo.dynamic_iota %shape, dim = 1 : (tensor<2xi32>) -> "
      "tensor<2x?xi32>\n"
      "  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"
      "  %m1 = stablehlo.constant dense<-1> : tensor<i32>\n"
      "  %0:2 = stablehlo.custom_call @stablehlo.dynamic_approx_top_k(%a, "
      "%iota, %ninf, %m1, %k) {called_computations = [@top_k_gt], "
      "mhlo.backend_config = {aggregate_to_topk = true, recall_target = 0.95 : "
      "f32, reduction_dim = 1 : i64, reduction_input_size_override = -1 : "
      "i64}} : (tensor<2x?xf32>, tensor<2x?xi32>, tensor<f32>, tensor<i32>, "
      "tensor<i32>) -> (tensor<2x?xf32>, tensor<2x?xi32>)\n"
      "  return %0#0, %0#1 : tensor<2x?xf32>, tensor<2x?xi32>\n"
      "}\n"
      "func.func private @top_k_gt(%a: tensor<f32>, %b: tensor<f32>, %c: "
      "tensor<i32>, %d: tensor<i32>) -> tensor<i1> {\n"
      "  %0 = stablehlo.compare GT, %a, %b, TOTALORDER : (tensor<f32>, "
      "tensor<f32>) -> tensor<i1>\n"
      "  return %0 : tensor<i1>\n"
      "}\n"
      "";
  int64_t dims[2] = {2, 5};
  shlo_value *a = shlo_tensor_new(SHLO_F32, 2, dims);
  assert_non_null(a);
  const float in[10] = {3, 9, 1, 7, 9, -1, -5, 0, 2, 2};
  memcpy(shlo_tensor_data(a), in, sizeof in);
  shlo_value *args[1] = {a};
  shlo_value **res;
  int n;
  char msg[1024];
  shlo_status st = run(text, args, 1, &res, &n, msg, sizeof msg);
  if (st)
    print_message("%s\n", msg);
  assert_int_equal(st, SHLO_OK);
  assert_int_equal(n, 2);
  assert_int_equal(shlo_tensor_dims(res[0])[1], 3);
  const float want_v[6] = {9, 9, 7, 2, 2, 0};
  const int32_t want_i[6] = {1, 4, 3, 3, 4, 2};
  for (int i = 0; i < 6; i++) {
    assert_true(shlo_tensor_get_f64(res[0], i) == want_v[i]);
    assert_int_equal(shlo_tensor_get_i64(res[1], i), want_i[i]);
  }
  free_all(res, n, args, 1);
}

static void test_sharding_identities(void **state) {
  (void)state;
  const char *text =
      "func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
      "  %0 = stablehlo.custom_call @Sharding(%a) {mhlo.sharding = "
      "\"{replicated}\"} : (tensor<2xf32>) -> tensor<2xf32>\n"
      "  %1 = stablehlo.custom_call @SPMDFullToShardShape(%0) : "
      "(tensor<2xf32>) -> tensor<2xf32>\n"
      "  %2 = stablehlo.add %1, %1 : tensor<2xf32>\n"
      "  %3 = stablehlo.custom_call @SPMDShardToFullShape(%2) : "
      "(tensor<2xf32>) -> tensor<2xf32>\n"
      "  return %3 : tensor<2xf32>\n}\n";
  int64_t dims[1] = {2};
  shlo_value *a = shlo_tensor_new(SHLO_F32, 1, dims);
  assert_non_null(a);
  shlo_tensor_set_f64(a, 0, 1.5);
  shlo_tensor_set_f64(a, 1, -4);
  shlo_value *args[1] = {a};
  shlo_value **res;
  int n;
  char msg[1024];
  assert_int_equal(run(text, args, 1, &res, &n, msg, sizeof msg), SHLO_OK);
  assert_true(shlo_tensor_get_f64(res[0], 0) == 3.0);
  assert_true(shlo_tensor_get_f64(res[0], 1) == -8.0);
  free_all(res, n, args, 1);
  /* a shard of another shape needs the partitioning: refused */
  const char *shard =
      "func.func @main(%a: tensor<4xf32>) -> tensor<2xf32> {\n"
      "  %0 = stablehlo.custom_call @SPMDFullToShardShape(%a) : "
      "(tensor<4xf32>) -> tensor<2xf32>\n"
      "  return %0 : tensor<2xf32>\n}\n";
  dims[0] = 4;
  shlo_value *b[1] = {shlo_tensor_new(SHLO_F32, 1, dims)};
  assert_int_equal(run(shard, b, 1, &res, &n, msg, sizeof msg),
                   SHLO_EUNSUPPORTED);
  assert_non_null(strstr(msg, "SPMDFullToShardShape changes the shape"));
  free_all(res, n, b, 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_shape_assertion_holds),
      cmocka_unit_test(test_shape_assertion_fails),
      cmocka_unit_test(test_dynamic_top_k),
      cmocka_unit_test(test_dynamic_rng_bit_generator),
      cmocka_unit_test(test_dynamic_reduce_window),
      cmocka_unit_test(test_dynamic_approx_top_k),
      cmocka_unit_test(test_sharding_identities),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
