/* SPDX-License-Identifier: Apache-2.0 */
/* Views (core/tensor_view.h): a dynamic_slice of whole rows points into
 * its operand instead of copying it.  Its elements are right for every
 * start (clamped ones too), a result handed to the caller is a copy of
 * its own (writing it leaves the argument as it was), a kernel that
 * changes an operand in place (scatter) never gets a view, a value put
 * on an outfeed or returned by a grid's process is a copy too, and views are
 * refused where kernels could not read them as tensors of their own. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/tensor_view.h"
#include "shlo/engine.h"
#include "shlo/grid.h"
#include "shlo/ir.h"
#include "shlo/tensor.h"

#define PLANES 8
#define ROWS 32
#define COLS 1024 /* a plane: 128 KiB of f32, past SHLO_VIEW_MIN_BYTES */
#define PLANE (ROWS * COLS)

/* %x: PLANES planes, element k = k * 0.25 - 1000 (exact in f32). */
static shlo_value *planes(void) {
  int64_t dims[3] = {PLANES, ROWS, COLS};
  shlo_value *v = shlo_tensor_new(SHLO_F32, 3, dims);
  assert_non_null(v);
  float *x = shlo_tensor_data(v);
  for (int64_t k = 0; k < (int64_t)PLANES * PLANE; k++)
    x[k] = (float)k * 0.25f - 1000.0f;
  return v;
}

static shlo_value *index_value(int32_t i) {
  shlo_value *v = shlo_tensor_new(SHLO_SI32, 0, NULL);
  assert_non_null(v);
  *(int32_t *)shlo_tensor_data(v) = i;
  return v;
}

/* Runs text's @main on (%x, %i); returns its n results. */
static shlo_value **run(const char *text, shlo_value *x, int32_t i, int n) {
  shlo_module *m = NULL;
  shlo_executable *e = NULL;
  shlo_diag d;
  if (shlo_load(text, strlen(text), "view.mlir", NULL, &m, &e, &d))
    fail_msg("load: %s", d.message);
  shlo_value *args[2] = {x, index_value(i)};
  shlo_value **res = NULL;
  int got = 0;
  if (shlo_execute(e, NULL, args, 2, &res, &got, &d))
    fail_msg("execute: %s", d.message);
  assert_int_equal(got, n);
  shlo_value_unref(args[1]);
  shlo_executable_free(e);
  shlo_module_free(m);
  return res;
}

static void free_results(shlo_value **res, int n) {
  for (int k = 0; k < n; k++) shlo_value_unref(res[k]);
  free(res);
}

#define HEAD                                                              \
  "func.func @main(%x: tensor<8x32x1024xf32>, %i: tensor<i32>) -> "
#define SLICE_ROWS                                                        \
  "  %z = stablehlo.constant dense<0> : tensor<i32>\n"                    \
  "  %s = stablehlo.dynamic_slice %x, %i, %z, %z, sizes = [1, 32, 1024] " \
  ": (tensor<8x32x1024xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> "  \
  "tensor<1x32x1024xf32>\n"                                               \
  "  %r = stablehlo.reshape %s : (tensor<1x32x1024xf32>) -> "             \
  "tensor<32x1024xf32>\n"

/* Plane `want` of planes(), times k. */
static void assert_plane(const shlo_value *v, int want, float k) {
  assert_int_equal(shlo_tensor_numel(v), PLANE);
  const float *y = shlo_tensor_data_const(v);
  for (int64_t j = 0; j < PLANE; j++) {
    float x = (float)((int64_t)want * PLANE + j) * 0.25f - 1000.0f;
    if (y[j] != x * k)
      fail_msg("element %lld: %g, want %g", (long long)j, y[j], x * k);
  }
}

/* The slice returned and read by a multiply: plane i, the start clamped
 * to [0, 7]; the result is no view, and writing it leaves %x alone. */
static void whole_rows_read_in_place_results_copied(void **state) {
  (void)state;
  const char *text =
      HEAD "(tensor<32x1024xf32>, tensor<32x1024xf32>) {\n" SLICE_ROWS
      "  %k = stablehlo.constant dense<2.0> : tensor<32x1024xf32>\n"
      "  %m = stablehlo.multiply %r, %k : tensor<32x1024xf32>\n"
      "  func.return %r, %m : tensor<32x1024xf32>, tensor<32x1024xf32>\n}\n";
  const int32_t starts[] = {3, 0, 7, 100, -5};
  const int want[] = {3, 0, 7, 7, 0};
  for (int t = 0; t < 5; t++) {
    shlo_value *x = planes();
    shlo_value **res = run(text, x, starts[t], 2);
    assert_plane(res[0], want[t], 1.0f);
    assert_plane(res[1], want[t], 2.0f);
    assert_false(shlo__value_is_view(res[0]));
    float *y = shlo_tensor_data(res[0]);
    for (int64_t j = 0; j < PLANE; j++) y[j] = -1.0f;
    const float *xs = shlo_tensor_data_const(x);
    for (int64_t j = 0; j < PLANE; j++)
      assert_true(xs[(int64_t)want[t] * PLANE + j] ==
                  (float)((int64_t)want[t] * PLANE + j) * 0.25f - 1000.0f);
    free_results(res, 2);
    shlo_value_unref(x);
  }
}

/* A scatter into the slice, which dies there and which nothing else
 * holds: a tensor of its own would be changed in place, a view must not
 * be (it would write %x, the caller's).  Row 0 gets 1000 added. */
static void scatter_never_writes_into_a_view(void **state) {
  (void)state;
  const char *text =
      HEAD "(tensor<32x1024xf32>) {\n" SLICE_ROWS
      "  %idx = stablehlo.constant dense<[[0]]> : tensor<1x1xi32>\n"
      "  %u = stablehlo.constant dense<1000.0> : tensor<1x1024xf32>\n"
      "  %t = \"stablehlo.scatter\"(%r, %idx, %u) ({\n"
      "    ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
      "      %c = stablehlo.add %a, %b : tensor<f32>\n"
      "      stablehlo.return %c : tensor<f32>\n"
      "  }) {scatter_dimension_numbers = #stablehlo.scatter<"
      "update_window_dims = [1], inserted_window_dims = [0], "
      "scatter_dims_to_operand_dims = [0], index_vector_dim = 1>} : "
      "(tensor<32x1024xf32>, tensor<1x1xi32>, tensor<1x1024xf32>) -> "
      "tensor<32x1024xf32>\n"
      "  func.return %t : tensor<32x1024xf32>\n}\n";
  shlo_value *x = planes();
  shlo_value **res = run(text, x, 2, 1);
  const float *y = shlo_tensor_data_const(res[0]);
  const float *xs = shlo_tensor_data_const(x);
  for (int64_t j = 0; j < PLANE; j++) {
    float was = (float)(2 * PLANE + j) * 0.25f - 1000.0f;
    assert_true(xs[2 * PLANE + j] == was);
    assert_true(y[j] == (j < COLS ? was + 1000.0f : was));
  }
  free_results(res, 1);
  shlo_value_unref(x);
}

/* The slice put on the outfeed and returned, on a grid of one process:
 * what the reader pops and what the grid returns are copies of their
 * own, with the slice's elements (a caller may write either). */
static void outfeed_and_grid_results_are_copies(void **state) {
  (void)state;
  const char *text =
      HEAD "tensor<32x1024xf32> {\n" SLICE_ROWS
      "  %t0 = \"stablehlo.after_all\"() : () -> !stablehlo.token\n"
      "  %t1 = \"stablehlo.outfeed\"(%r, %t0) : (tensor<32x1024xf32>, "
      "!stablehlo.token) -> !stablehlo.token\n"
      "  func.return %r : tensor<32x1024xf32>\n}\n";
  shlo_module *m = NULL;
  shlo_executable *e = NULL;
  shlo_diag d;
  if (shlo_load(text, strlen(text), "view.mlir", NULL, &m, &e, &d))
    fail_msg("load: %s", d.message);
  shlo_value *x = planes();
  shlo_value *args[2] = {x, index_value(4)};
  shlo_feed *out = shlo_feed_new();
  assert_non_null(out);
  shlo_grid_opts g = {.num_replicas = 1, .num_partitions = 1,
                      .outfeed = &out, .exec = {.timeout_s = 10}};
  shlo_value **res = NULL;
  int n = 0;
  if (shlo_execute_grid(e, &g, args, 2, &res, &n, &d))
    fail_msg("execute: %s", d.message);
  assert_int_equal(n, 1);
  assert_false(shlo__value_is_view(res[0]));
  assert_plane(res[0], 4, 1.0f);
  shlo_value *v = NULL;
  assert_int_equal(shlo_feed_pop(out, 5.0, &v), SHLO_OK);
  assert_false(shlo__value_is_view(v));
  assert_plane(v, 4, 1.0f);
  shlo_value_unref(v);
  free_results(res, n);
  shlo_feed_free(out);
  shlo_value_unref(args[1]);
  shlo_value_unref(x);
  shlo_executable_free(e);
  shlo_module_free(m);
}

/* What shlo__tensor_view refuses, and a view of a view: it keeps the
 * first owner alive (read after both others are gone: ASan and valgrind
 * see a use after free otherwise). */
static void views_refused_or_kept_alive(void **state) {
  (void)state;
  shlo_value *x = planes();
  int64_t plane[2] = {ROWS, COLS}, small[1] = {1024}, odd[1] = {16385};
  assert_null(shlo__tensor_view(x, 0, SHLO_F32, 1, small)); /* 4 KiB */
  assert_null(shlo__tensor_view(x, 4, SHLO_F32, 2, plane)); /* unaligned */
  assert_null(shlo__tensor_view(x, 0, SHLO_F32, 1, odd));   /* 65540 B */
  assert_null(shlo__tensor_view(x, (size_t)7 * PLANE * 4 + 64, SHLO_F32, 2,
                                plane)); /* past the end */
  shlo_value *a = shlo__tensor_view(x, (size_t)PLANE * 4, SHLO_F32, 2, plane);
  assert_non_null(a);
  assert_true(shlo__value_is_view(a));
  int64_t half[2] = {ROWS / 2, COLS};
  shlo_value *b = shlo__tensor_view(a, (size_t)PLANE * 2, SHLO_F32, 2, half);
  assert_non_null(b);
  shlo_value_unref(a);
  shlo_value_unref(x);
  const float *y = shlo_tensor_data_const(b);
  for (int64_t j = 0; j < PLANE / 2; j++)
    assert_true(y[j] == (float)(PLANE + PLANE / 2 + j) * 0.25f - 1000.0f);
  shlo_value *own = b;
  assert_int_equal(shlo__value_settle(&own), SHLO_OK);
  assert_false(shlo__value_is_view(own));
  assert_true(((const float *)shlo_tensor_data_const(own))[0] ==
              (float)(PLANE + PLANE / 2) * 0.25f - 1000.0f);
  shlo_value_unref(own);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(whole_rows_read_in_place_results_copied),
      cmocka_unit_test(scatter_never_writes_into_a_view),
      cmocka_unit_test(outfeed_and_grid_results_are_copies),
      cmocka_unit_test(views_refused_or_kept_alive),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
