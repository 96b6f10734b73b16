/* SPDX-License-Identifier: Apache-2.0 */
/* A scatter whose positions each pick one slab of rows by one index (an
 * embedding's gradient), into a broadcast of one element: the result
 * against one computed here, element by element in position order, from
 * the same indices and updates passed as arguments.  It covers the paths
 * kernels/indexing.c takes for such a scatter:
 * - each window one contiguous run (scatter_runs), with an add and with
 *   a body that returns its update (the last position wins);
 * - a window of two dims of extent > 1 (the general walk);
 * - the split into ranges of rows that the result's rows fill evenly
 *   (4096, 8192) and that leave a last range short (3000, 1000);
 * - i32 indices (read directly) and i64 ones (through the loader);
 * - fills whose bytes are all one value (zeros; i32 0x01010101: memset)
 *   and whose bytes differ (0.5, -0.0: doubling copies).
 * Indices repeat, and some lie below 0 or past the end (those positions
 * are skipped).  Updates are small integers, so every sum is exact in
 * any order: what is checked is where each update lands. */
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

#define TEXT_CAP 4096

typedef struct scatter_case {
  int64_t rows;      /* of the result */
  int64_t a, b;      /* a row holds a x b elements (a == 1: rank 2) */
  int64_t n;         /* positions */
  bool i64;          /* index type */
  bool ints;         /* i32 elements, else f32 */
  bool replace;      /* body returns the update, else adds */
  const char *fill;  /* the broadcast element, as a literal */
  double fill_value;
} scatter_case;

/* Position k's index: repeating, some below 0 and some past the end. */
static int64_t index_of(const scatter_case *c, int64_t k) {
  return (2731 * k) % (c->rows + 100) - 50;
}

/* Element j of position k's update: -8 .. 8. */
static int update_of(int64_t k, int64_t j) { return (int)((k * 7 + j) % 17) - 8; }

static void shape_of(const scatter_case *c, int64_t lead, char *buf,
                     size_t cap) {
  if (c->a == 1) snprintf(buf, cap, "%ldx%ld", (long)lead, (long)c->b);
  else snprintf(buf, cap, "%ldx%ldx%ld", (long)lead, (long)c->a, (long)c->b);
}

static void program(const scatter_case *c, char *text) {
  const char *et = c->ints ? "i32" : "f32", *it = c->i64 ? "i64" : "i32";
  char rs[64], us[64];
  shape_of(c, c->rows, rs, sizeof rs);
  shape_of(c, c->n, us, sizeof us);
  text[0] = 0;
  harness_appendf(text, TEXT_CAP,
      "func.func @main(%%idx: tensor<%ldx1x%s>, %%u: tensor<%sx%s>) -> "
      "tensor<%sx%s> {\n"
      "  %%h = stablehlo.constant dense<%s> : tensor<%s>\n"
      "  %%z = stablehlo.broadcast_in_dim %%h, dims = [] : (tensor<%s>) -> "
      "tensor<%sx%s>\n"
      "  %%s = \"stablehlo.scatter\"(%%z, %%idx, %%u) ({\n"
      "    ^bb0(%%p: tensor<%s>, %%q: tensor<%s>):\n",
      (long)c->n, it, us, et, rs, et, c->fill, et, et, rs, et, et, et);
  if (c->replace)
    harness_appendf(text, TEXT_CAP, "      stablehlo.return %%q : tensor<%s>\n",
                    et);
  else
    harness_appendf(text, TEXT_CAP,
                    "      %%r = stablehlo.add %%p, %%q : tensor<%s>\n"
                    "      stablehlo.return %%r : tensor<%s>\n", et, et);
  harness_appendf(text, TEXT_CAP,
      "  }) {scatter_dimension_numbers = #stablehlo.scatter<"
      "update_window_dims = [%s], inserted_window_dims = [0], "
      "scatter_dims_to_operand_dims = [0], index_vector_dim = 1>} : "
      "(tensor<%sx%s>, tensor<%ldx1x%s>, tensor<%sx%s>) -> tensor<%sx%s>\n"
      "  func.return %%s : tensor<%sx%s>\n}\n",
      c->a == 1 ? "1" : "1, 2", rs, et, (long)c->n, it, us, et, rs, et, rs,
      et);
}

/* The arguments: indices and updates. */
static void arguments(const scatter_case *c, shlo_value **args) {
  int64_t idims[2] = {c->n, 1};
  int64_t udims[3] = {c->n, c->a == 1 ? c->b : c->a, c->b};
  args[0] = shlo_tensor_new(c->i64 ? SHLO_SI64 : SHLO_SI32, 2, idims);
  args[1] = shlo_tensor_new(c->ints ? SHLO_SI32 : SHLO_F32,
                            c->a == 1 ? 2 : 3, udims);
  assert_non_null(args[0]);
  assert_non_null(args[1]);
  int64_t w = c->a * c->b;
  for (int64_t k = 0; k < c->n; k++) {
    if (c->i64) ((int64_t *)args[0]->data)[k] = index_of(c, k);
    else ((int32_t *)args[0]->data)[k] = (int32_t)index_of(c, k);
    for (int64_t j = 0; j < w; j++) {
      if (c->ints) ((int32_t *)args[1]->data)[k * w + j] = update_of(k, j);
      else ((float *)args[1]->data)[k * w + j] = (float)update_of(k, j);
    }
  }
}

/* Element e of the result, position by position in order. */
static double expected(const scatter_case *c, int64_t e) {
  int64_t w = c->a * c->b, row = e / w, j = e % w;
  double v = c->fill_value;
  for (int64_t k = 0; k < c->n; k++)
    if (index_of(c, k) == row)
      v = c->replace ? update_of(k, j) : v + update_of(k, j);
  return v;
}

static void check_case(const scatter_case *c) {
  char *text = malloc(TEXT_CAP);
  assert_non_null(text);
  program(c, text);
  shlo_value *args[2];
  arguments(c, args);
  /* the expected result, from a table of each row's positions */
  int64_t w = c->a * c->b, total = c->rows * w;
  double *want = malloc((size_t)total * sizeof *want);
  assert_non_null(want);
  for (int64_t e = 0; e < total; e++) want[e] = c->fill_value;
  for (int64_t k = 0; k < c->n; k++) {
    int64_t r = index_of(c, k);
    if (r < 0 || r >= c->rows) continue;
    for (int64_t j = 0; j < w; j++)
      want[r * w + j] = c->replace ? update_of(k, j)
                                   : want[r * w + j] + update_of(k, j);
  }
  /* (the table against the definition, on a few elements) */
  for (int64_t e = 0; e < total; e += total / 7 + 1)
    assert_true(want[e] == expected(c, e));
  for (int fuse = 0; fuse < 2; fuse++) {
    harness_result h = harness_run_fused(text, fuse, args, 2);
    assert_int_equal(h.n, 1);
    assert_int_equal(h.v[0]->numel, total);
    for (int64_t e = 0; e < total; e++) {
      /* (not one ?: expression: that would make the i32 a float) */
      double got = ((const float *)h.v[0]->data)[e];
      if (c->ints) got = ((const int32_t *)h.v[0]->data)[e];
      if (got != want[e])
        fail_msg("%s, element %ld (row %ld): %.17g, expected %.17g",
                 fuse ? "fused" : "op by op", (long)e, (long)(e / w), got,
                 want[e]);
    }
    if (!c->ints && c->fill_value == 0 && c->fill[0] == '-') {
      /* an untouched element keeps the fill's sign */
      int64_t untouched = -1;
      for (int64_t r = 0; r < c->rows && untouched < 0; r++) {
        bool hit = false;
        for (int64_t k = 0; k < c->n && !hit; k++) hit = index_of(c, k) == r;
        if (!hit) untouched = r * w;
      }
      assert_true(untouched >= 0);
      uint32_t bits;
      memcpy(&bits, (const float *)h.v[0]->data + untouched, sizeof bits);
      assert_int_equal(bits, 0x80000000u);
    }
    harness_result_free(&h);
  }
  shlo_value_unref(args[0]);
  shlo_value_unref(args[1]);
  free(want);
  free(text);
}

/* Rows of 16 f32, each window one run: 4096 and 8192 rows, and 3000;
 * zeros, 0.5 and -0.0; an add, and a replace. */
static void runs_of_rows(void **state) {
  (void)state;
  static const scatter_case cases[] = {
      {4096, 1, 16, 5000, false, false, false, "0.0", 0.0},
      {3000, 1, 16, 5000, false, false, false, "0.5", 0.5},
      {8192, 1, 16, 5000, false, false, false, "-0.0", 0.0},
      {4096, 1, 16, 5000, false, false, true, "0.0", 0.0},
      {3000, 1, 16, 5000, false, false, true, "0.5", 0.5},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) check_case(&cases[i]);
}

/* i64 indices (the loader), i32 elements over a fill whose bytes are all
 * 0x01, and slabs of 4 x 8 (two window dims: the general walk). */
static void other_forms(void **state) {
  (void)state;
  static const scatter_case cases[] = {
      {4096, 1, 16, 5000, true, false, false, "0.0", 0.0},
      {3000, 1, 16, 5000, true, false, true, "0.5", 0.5},
      {4096, 1, 16, 5000, false, true, false, "16843009", 16843009.0},
      {1024, 4, 8, 2500, false, false, false, "0.0", 0.0},
      {1000, 4, 8, 2500, true, false, true, "0.5", 0.5},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) check_case(&cases[i]);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(runs_of_rows),
      cmocka_unit_test(other_forms),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
