/* SPDX-License-Identifier: Apache-2.0 */
/* A scatter into a broadcast of one element that nothing else reads
 * (kernels/fuse_fill.c): the scatter fills its result from the element
 * itself, range by range beside its updates where it splits by its first
 * dimension, whole before them elsewhere.  Against the same program op by
 * op (the broadcast a step of its own), byte for byte, and on pools of 2
 * and 3 threads against one: rows added into 0.5 in an order their sums
 * depend on, with positions that land outside; a split along the second
 * dimension; a body that is no single op (the compiled region); no
 * updates at all; i32 elements; and a broadcast that is also returned,
 * which keeps its step. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/value.h"
#include "harness.h"
#include "shlo/engine.h"

#define TEXT_CAP 8192
#define FILLED "stablehlo.scatter [from one element]"

/* Positions (2731 k mod (rows + 100)) - 50 of k < n, as %idx
 * (tensor<n x 1 x i32>): rows repeat, and some land below 0 or past the
 * end. */
static void positions(char *buf, size_t cap, int n, int rows) {
  harness_appendf(buf, cap,
      "  %%k = stablehlo.iota dim = 0 : tensor<%dxi32>\n"
      "  %%m = stablehlo.constant dense<2731> : tensor<%dxi32>\n"
      "  %%w = stablehlo.constant dense<%d> : tensor<%dxi32>\n"
      "  %%o = stablehlo.constant dense<50> : tensor<%dxi32>\n"
      "  %%km = stablehlo.multiply %%k, %%m : tensor<%dxi32>\n"
      "  %%kr = stablehlo.remainder %%km, %%w : tensor<%dxi32>\n"
      "  %%rows = stablehlo.subtract %%kr, %%o : tensor<%dxi32>\n"
      "  %%idx = stablehlo.reshape %%rows : (tensor<%dxi32>) -> "
      "tensor<%dx1xi32>\n",
      n, n, rows + 100, n, n, n, n, n, n, n);
}

/* Updates %u of type tensor<shape x f32> (count elements): sin(i) times
 * e^(3 (i mod 7)), magnitudes 1 to 1e8. */
static void updates(char *buf, size_t cap, long count, const char *shape) {
  harness_appendf(buf, cap,
      "  %%ui = stablehlo.iota dim = 0 : tensor<%ldxf32>\n"
      "  %%us = stablehlo.sine %%ui : tensor<%ldxf32>\n"
      "  %%uk = stablehlo.iota dim = 0 : tensor<%ldxi32>\n"
      "  %%u7 = stablehlo.constant dense<7> : tensor<%ldxi32>\n"
      "  %%um = stablehlo.remainder %%uk, %%u7 : tensor<%ldxi32>\n"
      "  %%uf = stablehlo.convert %%um : (tensor<%ldxi32>) -> "
      "tensor<%ldxf32>\n"
      "  %%u3 = stablehlo.constant dense<3.0> : tensor<%ldxf32>\n"
      "  %%ue = stablehlo.multiply %%uf, %%u3 : tensor<%ldxf32>\n"
      "  %%ux = stablehlo.exponential %%ue : tensor<%ldxf32>\n"
      "  %%uv = stablehlo.multiply %%us, %%ux : tensor<%ldxf32>\n"
      "  %%u = stablehlo.reshape %%uv : (tensor<%ldxf32>) -> tensor<%sxf32>\n",
      count, count, count, count, count, count, count, count, count, count, count, count,
      shape);
}

/* The body: an add, or (region) an add then a multiply by 1 (no single
 * op: the compiled region, the same values). */
static const char *body(bool region) {
  return region ? "      %t = stablehlo.add %a, %b : tensor<f32>\n"
                  "      %one = stablehlo.constant dense<1.0> : tensor<f32>\n"
                  "      %r = stablehlo.multiply %t, %one : tensor<f32>\n"
                  "      stablehlo.return %r : tensor<f32>\n"
                : "      %r = stablehlo.add %a, %b : tensor<f32>\n"
                  "      stablehlo.return %r : tensor<f32>\n";
}

/* n rows of 16 added into a rows x 16 broadcast of 0.5 (along the first
 * dimension); with also_returned, the broadcast is a second result. */
static void rows_program(char *buf, size_t cap, int n, int rows, bool region,
                         bool also_returned) {
  buf[0] = 0;
  harness_appendf(buf, cap, "func.func @main() -> (tensor<%dx16xf32>%s) {\n",
                  rows, also_returned ? ", tensor<1x1xf32>" : "");
  positions(buf, cap, n, rows);
  char shape[32];
  snprintf(shape, sizeof shape, "%dx16", n);
  updates(buf, cap, (long)n * 16, shape);
  harness_appendf(buf, cap,
      "  %%h = stablehlo.constant dense<0.5> : tensor<f32>\n"
      "  %%z = stablehlo.broadcast_in_dim %%h, dims = [] : (tensor<f32>) -> "
      "tensor<%dx16xf32>\n"
      "  %%s = \"stablehlo.scatter\"(%%z, %%idx, %%u) ({\n"
      "    ^bb0(%%a: tensor<f32>, %%b: tensor<f32>):\n%s"
      "  }) {scatter_dimension_numbers = #stablehlo.scatter<"
      "update_window_dims = [1], inserted_window_dims = [0], "
      "scatter_dims_to_operand_dims = [0], index_vector_dim = 1>} : "
      "(tensor<%dx16xf32>, tensor<%dx1xi32>, tensor<%dx16xf32>) -> "
      "tensor<%dx16xf32>\n",
      rows, body(region), rows, n, n, rows);
  if (also_returned)
    harness_appendf(buf, cap,
        "  %%c = stablehlo.slice %%z [0:1, 0:1] : (tensor<%dx16xf32>) -> "
        "tensor<1x1xf32>\n"
        "  func.return %%s, %%c : tensor<%dx16xf32>, tensor<1x1xf32>\n}\n",
        rows, rows);
  else
    harness_appendf(buf, cap, "  func.return %%s : tensor<%dx16xf32>\n}\n",
                    rows);
}

/* Fused and op by op, byte for byte; the scatter fills its own result
 * exactly when `fills`. */
static void same_bits(const char *text, bool fills) {
  harness_result a = harness_run_fused(text, true, NULL, 0);
  harness_result b = harness_run_fused(text, false, NULL, 0);
  if ((strstr(a.plan, FILLED) != NULL) != fills) {
    fprintf(stderr, "%s\n%s\n", text, a.plan);
    fail_msg("the broadcast %s", fills ? "kept its step" : "was taken in");
  }
  assert_null(strstr(b.plan, FILLED));
  assert_int_equal(a.n, b.n);
  for (int i = 0; i < a.n; i++) {
    assert_int_equal(a.v[i]->nbytes, b.v[i]->nbytes);
    assert_memory_equal(a.v[i]->data, b.v[i]->data, a.v[i]->nbytes);
  }
  harness_result_free(&a);
  harness_result_free(&b);
}

/* 8192 rows into 1000 (split by ranges of rows, each filled first), and
 * into 100000 (6.4 MB: ranges of the fill's size, most rows never
 * updated), with a native body and a compiled one. */
static void rows_filled_range_by_range(void **state) {
  (void)state;
  char *text = malloc(TEXT_CAP);
  assert_non_null(text);
  static const int rows[] = {1000, 100000};
  for (int i = 0; i < 2; i++)
    for (int region = 0; region < 2; region++) {
      rows_program(text, TEXT_CAP, 8192, rows[i], region, false);
      same_bits(text, true);
      harness_same_on_pools(text);
    }
  free(text);
}

/* The split along the second dimension (columns of 8 x 6000 picked by
 * one index, a window of 8 rows): the result filled whole first. */
static void columns_filled_before(void **state) {
  (void)state;
  char *text = malloc(TEXT_CAP);
  assert_non_null(text);
  text[0] = 0;
  harness_appendf(text, TEXT_CAP,
                  "func.func @main() -> tensor<8x6000xf32> {\n");
  positions(text, TEXT_CAP, 9000, 6000);
  updates(text, TEXT_CAP, 8L * 9000, "8x9000");
  harness_appendf(text, TEXT_CAP,
      "  %%h = stablehlo.constant dense<0.5> : tensor<f32>\n"
      "  %%z = stablehlo.broadcast_in_dim %%h, dims = [] : (tensor<f32>) -> "
      "tensor<8x6000xf32>\n"
      "  %%s = \"stablehlo.scatter\"(%%z, %%idx, %%u) ({\n"
      "    ^bb0(%%a: tensor<f32>, %%b: tensor<f32>):\n%s"
      "  }) {scatter_dimension_numbers = #stablehlo.scatter<"
      "update_window_dims = [0], inserted_window_dims = [1], "
      "scatter_dims_to_operand_dims = [1], index_vector_dim = 1>} : "
      "(tensor<8x6000xf32>, tensor<9000x1xi32>, tensor<8x9000xf32>) -> "
      "tensor<8x6000xf32>\n"
      "  func.return %%s : tensor<8x6000xf32>\n}\n",
      body(false));
  same_bits(text, true);
  harness_same_on_pools(text);
  free(text);
}

/* No updates: the result is the broadcast alone; i32 elements from a
 * run-time scalar (7 * 3); a broadcast also returned keeps its step. */
static void edges(void **state) {
  (void)state;
  static const char empty[] =
      "func.func @main() -> tensor<300x16xf32> {\n"
      "  %h = stablehlo.constant dense<-2.5> : tensor<f32>\n"
      "  %z = stablehlo.broadcast_in_dim %h, dims = [] : (tensor<f32>) -> "
      "tensor<300x16xf32>\n"
      "  %idx = stablehlo.constant dense<0> : tensor<0x1xi32>\n"
      "  %u = stablehlo.constant dense<0.0> : tensor<0x16xf32>\n"
      "  %s = \"stablehlo.scatter\"(%z, %idx, %u) ({\n"
      "    ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
      "      %r = stablehlo.add %a, %b : tensor<f32>\n"
      "      stablehlo.return %r : tensor<f32>\n"
      "  }) {scatter_dimension_numbers = #stablehlo.scatter<"
      "update_window_dims = [1], inserted_window_dims = [0], "
      "scatter_dims_to_operand_dims = [0], index_vector_dim = 1>} : "
      "(tensor<300x16xf32>, tensor<0x1xi32>, tensor<0x16xf32>) -> "
      "tensor<300x16xf32>\n"
      "  func.return %s : tensor<300x16xf32>\n}\n";
  same_bits(empty, true);
  char *text = malloc(TEXT_CAP);
  assert_non_null(text);
  text[0] = 0;
  harness_appendf(text, TEXT_CAP,
                  "func.func @main() -> tensor<5000x16xi32> {\n");
  positions(text, TEXT_CAP, 8192, 5000);
  harness_appendf(text, TEXT_CAP,
      "  %%ui = stablehlo.iota dim = 0 : tensor<8192x16xi32>\n"
      "  %%h7 = stablehlo.constant dense<7> : tensor<i32>\n"
      "  %%h3 = stablehlo.constant dense<3> : tensor<i32>\n"
      "  %%h = stablehlo.multiply %%h7, %%h3 : tensor<i32>\n"
      "  %%z = stablehlo.broadcast_in_dim %%h, dims = [] : (tensor<i32>) -> "
      "tensor<5000x16xi32>\n"
      "  %%s = \"stablehlo.scatter\"(%%z, %%idx, %%ui) ({\n"
      "    ^bb0(%%a: tensor<i32>, %%b: tensor<i32>):\n"
      "      %%r = stablehlo.add %%a, %%b : tensor<i32>\n"
      "      stablehlo.return %%r : tensor<i32>\n"
      "  }) {scatter_dimension_numbers = #stablehlo.scatter<"
      "update_window_dims = [1], inserted_window_dims = [0], "
      "scatter_dims_to_operand_dims = [0], index_vector_dim = 1>} : "
      "(tensor<5000x16xi32>, tensor<8192x1xi32>, tensor<8192x16xi32>) -> "
      "tensor<5000x16xi32>\n"
      "  func.return %%s : tensor<5000x16xi32>\n}\n");
  same_bits(text, true);
  harness_same_on_pools(text);
  rows_program(text, TEXT_CAP, 8192, 1000, false, true);
  same_bits(text, false);
  free(text);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(rows_filled_range_by_range),
      cmocka_unit_test(columns_filled_before),
      cmocka_unit_test(edges),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
