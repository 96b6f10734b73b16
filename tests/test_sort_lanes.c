/* SPDX-License-Identifier: Apache-2.0 */
/* Keyed sorts (compare(f(a), f(b)), jnp.sort's comparator) on slices long
 * enough that the key program runs over blocks of lanes and the order
 * comes from the radix sort: the result must be what a plain stable sort
 * by the comparator's own definition gives, computed here in C, bit for
 * bit, with -0, every NaN, infinities and many equal keys. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "harness.h"

/* jnp.sort's key: -0 -> +0, every NaN -> 0x7FC00000, then TOTALORDER. */
static int64_t ref_key(uint32_t bits) {
  float f;
  memcpy(&f, &bits, 4);
  if (f == 0.0f) bits = 0;
  if (isnan(f)) bits = 0x7FC00000u;
  int32_t b = (int32_t)bits;
  return b < 0 ? (int64_t)(b ^ INT32_MAX) : b;
}

/* Inputs mixing special values with a few hundred distinct finite ones,
 * so equal keys are common (stability shows). */
static uint32_t test_value(uint64_t *state) {
  static const uint32_t special[] = {0x00000000u, 0x80000000u, 0x7FC00000u,
                                     0xFFC00001u, 0x7F800001u, 0x7F800000u,
                                     0xFF800000u, 0x00000001u, 0x80000001u};
  *state = *state * 6364136223846793005ull + 1442695040888963407ull;
  uint32_t r = (uint32_t)(*state >> 33);
  if (r % 8 == 0) return special[(r >> 3) % 9];
  float f = (float)((int)(r >> 3) % 300 - 150) * 0.25f;
  uint32_t b;
  memcpy(&b, &f, 4);
  return b;
}

/* order[0..n) = stable sort of indices i (stride `step` in bits[]) by
 * ref_key; an insertion sort, slow and plainly right. */
static void ref_order(const uint32_t *bits, int64_t step, int64_t n,
                      int64_t *order) {
  for (int64_t i = 0; i < n; i++) {
    int64_t j = i;
    while (j > 0 && ref_key(bits[i * step]) < ref_key(bits[order[j - 1] * step])) {
      order[j] = order[j - 1];
      j--;
    }
    order[j] = i;
  }
}

static void put_list(FILE *f, const uint32_t *v, int64_t n, bool as_int) {
  fputc('[', f);
  for (int64_t i = 0; i < n; i++)
    fprintf(f, as_int ? "%s%d" : "%s%u", i ? ", " : "", (int32_t)v[i]);
  fputc(']', f);
}

/* rows x cols f32 values sorted along `dim` together with an iota along
 * it, the values operand first or second; checks the values (as bits)
 * and the carried indices against ref_order. */
static void check_sort(int64_t rows, int64_t cols, int dim, bool key_second) {
  int64_t n = rows * cols;
  uint32_t *bits = malloc((size_t)n * 4), *want = malloc((size_t)n * 4);
  uint32_t *want_idx = malloc((size_t)n * 4);
  int64_t len = dim == 0 ? rows : cols, slices = n / len;
  int64_t *order = malloc((size_t)len * sizeof *order);
  assert_non_null(bits);
  assert_non_null(want);
  assert_non_null(want_idx);
  assert_non_null(order);
  uint64_t state = 12345;
  for (int64_t i = 0; i < n; i++) bits[i] = test_value(&state);
  int64_t step = dim == 0 ? cols : 1;
  for (int64_t s = 0; s < slices; s++) {
    int64_t base = dim == 0 ? s : s * cols;
    ref_order(bits + base, step, len, order);
    for (int64_t i = 0; i < len; i++) {
      want[base + i * step] = bits[base + order[i] * step];
      want_idx[base + i * step] = (uint32_t)order[i];
    }
  }
  char *text = NULL;
  size_t size = 0;
  FILE *f = open_memstream(&text, &size);
  assert_non_null(f);
  char shape[64];
  snprintf(shape, sizeof shape, "%lldx%lld", (long long)rows, (long long)cols);
  const char *xa = key_second ? "%c" : "%a", *xb = key_second ? "%d" : "%b";
  fprintf(f, "func.func @main() {\n  %%bits = stablehlo.constant dense<");
  put_list(f, bits, n, true);
  fprintf(f, "> : tensor<%sxi32>\n", shape);
  fprintf(f,
          "  %%x = stablehlo.bitcast_convert %%bits : (tensor<%sxi32>) -> "
          "tensor<%sxf32>\n"
          "  %%i = stablehlo.iota dim = %d : tensor<%sxi32>\n",
          shape, shape, dim, shape);
  fprintf(f, "  %%r:2 = \"stablehlo.sort\"(%s) ({\n",
          key_second ? "%i, %x" : "%x, %i");
  fprintf(f, "  ^bb0(%%a: tensor<%s>, %%b: tensor<%s>, %%c: tensor<%s>, "
             "%%d: tensor<%s>):\n",
          key_second ? "i32" : "f32", key_second ? "i32" : "f32",
          key_second ? "f32" : "i32", key_second ? "f32" : "i32");
  fprintf(f,
          "    %%cz = stablehlo.constant dense<0.0> : tensor<f32>\n"
          "    %%e1 = stablehlo.compare EQ, %s, %%cz, FLOAT : (tensor<f32>, "
          "tensor<f32>) -> tensor<i1>\n"
          "    %%s1 = stablehlo.select %%e1, %%cz, %s : tensor<i1>, "
          "tensor<f32>\n"
          "    %%n1 = stablehlo.compare NE, %s, %s, FLOAT : (tensor<f32>, "
          "tensor<f32>) -> tensor<i1>\n"
          "    %%cn = stablehlo.constant dense<0x7FC00000> : tensor<f32>\n"
          "    %%k1 = stablehlo.select %%n1, %%cn, %%s1 : tensor<i1>, "
          "tensor<f32>\n"
          "    %%e2 = stablehlo.compare EQ, %s, %%cz, FLOAT : (tensor<f32>, "
          "tensor<f32>) -> tensor<i1>\n"
          "    %%s2 = stablehlo.select %%e2, %%cz, %s : tensor<i1>, "
          "tensor<f32>\n"
          "    %%n2 = stablehlo.compare NE, %s, %s, FLOAT : (tensor<f32>, "
          "tensor<f32>) -> tensor<i1>\n"
          "    %%k2 = stablehlo.select %%n2, %%cn, %%s2 : tensor<i1>, "
          "tensor<f32>\n"
          "    %%lt = stablehlo.compare LT, %%k1, %%k2, TOTALORDER : "
          "(tensor<f32>, tensor<f32>) -> tensor<i1>\n"
          "    stablehlo.return %%lt : tensor<i1>\n",
          xa, xa, xa, xa, xb, xb, xb, xb);
  fprintf(f,
          "  }) {dimension = %d : i64, is_stable = true} : (tensor<%sx%s>, "
          "tensor<%sx%s>) -> (tensor<%sx%s>, tensor<%sx%s>)\n",
          dim, shape, key_second ? "i32" : "f32", shape,
          key_second ? "f32" : "i32", shape, key_second ? "i32" : "f32",
          shape, key_second ? "f32" : "i32");
  const char *rv = key_second ? "%r#1" : "%r#0", *ri = key_second ? "%r#0" : "%r#1";
  fprintf(f,
          "  %%rb = stablehlo.bitcast_convert %s : (tensor<%sxf32>) -> "
          "tensor<%sxi32>\n  check.expect_eq_const %%rb, dense<",
          rv, shape, shape);
  put_list(f, want, n, true);
  fprintf(f, "> : tensor<%sxi32>\n  check.expect_eq_const %s, dense<", shape,
          ri);
  put_list(f, want_idx, n, true);
  fprintf(f, "> : tensor<%sxi32>\n  func.return\n}\n", shape);
  assert_int_equal(fclose(f), 0);
  assert_int_equal(harness_run(text, false), SHLO_OK);
  free(text);
  free(order);
  free(want_idx);
  free(want);
  free(bits);
}

/* 1000 elements: four blocks of lanes, the last one partial. */
static void long_slice_sorts_like_the_comparator(void **state) {
  (void)state;
  check_sort(1, 1000, 1, false);
}

static void key_in_the_second_operand(void **state) {
  (void)state;
  check_sort(1, 777, 1, true);
}

/* Along dimension 0 of 600x3: strided slices, gathered into lanes. */
static void strided_slices_sort_each_column(void **state) {
  (void)state;
  check_sort(600, 3, 0, false);
}

/* Many short slices: the merge sort below the radix threshold. */
static void short_slices_take_the_merge_sort(void **state) {
  (void)state;
  check_sort(40, 300, 1, true);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(long_slice_sorts_like_the_comparator),
      cmocka_unit_test(key_in_the_second_operand),
      cmocka_unit_test(strided_slices_sort_each_column),
      cmocka_unit_test(short_slices_take_the_merge_sort),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
