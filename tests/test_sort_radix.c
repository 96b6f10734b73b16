/* SPDX-License-Identifier: Apache-2.0 */
/* stablehlo.sort on slices long enough for the radix paths (32-bit key
 * words: bare keys decoded back, keys carrying the element's bits, keys
 * carrying an index; parts on the pool), checked against a stable
 * insertion sort by the comparator's definition written here in C:
 * NaNs of both signs and several payloads, -0 and +0, infinities, many
 * duplicates; jnp.sort's keyed comparator and plain compares (f32
 * TOTALORDER, si32, ui32, LT and GT); several operands; is_stable true
 * and false (false: sorted keys and the same multiset of rows); rank 3
 * along each dimension. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/value.h"
#include "shlo/context.h"
#include "shlo/engine.h"

/* How the reference orders one operand's bits. */
typedef enum {
  REF_JNP,     /* jnp.sort: -0 -> +0, NaN -> 0x7FC00000, then TOTALORDER */
  REF_F32T,    /* f32 TOTALORDER on the bits themselves */
  REF_S32,
  REF_U32,
} ref_kind;

/* A key in int64 whose < is the comparator's LT. */
static int64_t ref_key(ref_kind k, uint32_t bits) {
  if (k == REF_S32) return (int32_t)bits;
  if (k == REF_U32) return bits;
  if (k == REF_JNP) {
    float f;
    memcpy(&f, &bits, 4);
    if (f == 0.0f) bits = 0;
    if (isnan(f)) bits = 0x7FC00000u;
  }
  int32_t b = (int32_t)bits;
  return b < 0 ? (int64_t)(b ^ INT32_MAX) : b;
}

/* a before b under the comparator (LT, or GT when `desc`). */
static bool ref_before(ref_kind k, bool desc, uint32_t a, uint32_t b) {
  int64_t x = ref_key(k, a), y = ref_key(k, b);
  return desc ? x > y : x < y;
}

static uint64_t rng = 99;
static uint32_t rnd(void) {
  rng = rng * 6364136223846793005ull + 1442695040888963407ull;
  return (uint32_t)(rng >> 33);
}

/* f32 bits: specials one time in `special_every` (0: never), else one of
 * a few hundred finite values, so equal keys are common. */
static uint32_t f32_value(int special_every) {
  static const uint32_t special[] = {0x00000000u, 0x80000000u, 0x7FC00000u,
                                     0xFFC00001u, 0x7F800001u, 0x7FFFFFFFu,
                                     0x7F800000u, 0xFF800000u, 0x00000001u,
                                     0x80000001u, 0xFFFFFFFFu};
  uint32_t r = rnd();
  if (special_every && r % (uint32_t)special_every == 0)
    return special[(r >> 8) % (sizeof special / sizeof *special)];
  float f = (float)((int)(r >> 8) % 300 - 150) * 0.25f;
  if (f == 0.0f) f = 0.5f; /* zeros only as specials */
  uint32_t b;
  memcpy(&b, &f, 4);
  return b;
}

/* jnp.sort's comparator on %a, %b (its first operand pair). */
static const char *const jnp_region =
    "    %cz = stablehlo.constant dense<0.0> : tensor<f32>\n"
    "    %e1 = stablehlo.compare EQ, %a, %cz, FLOAT : (tensor<f32>, "
    "tensor<f32>) -> tensor<i1>\n"
    "    %s1 = stablehlo.select %e1, %cz, %a : tensor<i1>, tensor<f32>\n"
    "    %n1 = stablehlo.compare NE, %a, %a, FLOAT : (tensor<f32>, "
    "tensor<f32>) -> tensor<i1>\n"
    "    %cn = stablehlo.constant dense<0x7FC00000> : tensor<f32>\n"
    "    %k1 = stablehlo.select %n1, %cn, %s1 : tensor<i1>, tensor<f32>\n"
    "    %e2 = stablehlo.compare EQ, %b, %cz, FLOAT : (tensor<f32>, "
    "tensor<f32>) -> tensor<i1>\n"
    "    %s2 = stablehlo.select %e2, %cz, %b : tensor<i1>, tensor<f32>\n"
    "    %n2 = stablehlo.compare NE, %b, %b, FLOAT : (tensor<f32>, "
    "tensor<f32>) -> tensor<i1>\n"
    "    %k2 = stablehlo.select %n2, %cn, %s2 : tensor<i1>, tensor<f32>\n"
    "    %lt = stablehlo.compare LT, %k1, %k2, TOTALORDER : (tensor<f32>, "
    "tensor<f32>) -> tensor<i1>\n"
    "    stablehlo.return %lt : tensor<i1>\n";

/* One sort to check: operand 0 is the key operand (f32, si32 or ui32 by
 * kind), operands 1.. are i32 payloads. */
typedef struct sort_case {
  ref_kind kind;
  bool desc;          /* plain compares: GT instead of LT */
  bool stable;
  int n_ops;          /* 1..3 */
  int rank;
  int64_t dims[3];
  int dim;
  int special_every;  /* f32 data: how often a special value */
} sort_case;

static const char *elem_name(const sort_case *c, int k) {
  if (k > 0 || c->kind == REF_S32) return "i32";
  return c->kind == REF_U32 ? "ui32" : "f32";
}

/* The program: @main(%x0, %x1, ...) returns the sort of its arguments. */
static char *program_text(const sort_case *c) {
  char shape[64] = "";
  for (int d = 0; d < c->rank; d++) {
    size_t len = strlen(shape);
    snprintf(shape + len, sizeof shape - len, "%lldx", (long long)c->dims[d]);
  }
  char *text = NULL;
  size_t size = 0;
  FILE *f = open_memstream(&text, &size);
  assert_non_null(f);
  fprintf(f, "func.func @main(");
  for (int k = 0; k < c->n_ops; k++)
    fprintf(f, "%s%%x%d: tensor<%s%s>", k ? ", " : "", k, shape,
            elem_name(c, k));
  fprintf(f, ") -> (");
  for (int k = 0; k < c->n_ops; k++)
    fprintf(f, "%stensor<%s%s>", k ? ", " : "", shape, elem_name(c, k));
  fprintf(f, ") {\n  %%r:%d = \"stablehlo.sort\"(", c->n_ops);
  for (int k = 0; k < c->n_ops; k++) fprintf(f, "%s%%x%d", k ? ", " : "", k);
  fprintf(f, ") ({\n  ^bb0(%%a: tensor<%s>, %%b: tensor<%s>",
          elem_name(c, 0), elem_name(c, 0));
  for (int k = 1; k < c->n_ops; k++)
    fprintf(f, ", %%p%d: tensor<i32>, %%q%d: tensor<i32>", k, k);
  fprintf(f, "):\n");
  if (c->kind == REF_JNP) {
    fputs(jnp_region, f);
  } else {
    const char *type = c->kind == REF_F32T ? "TOTALORDER"
                       : c->kind == REF_S32 ? "SIGNED" : "UNSIGNED";
    fprintf(f,
            "    %%lt = stablehlo.compare %s, %%a, %%b, %s : (tensor<%s>, "
            "tensor<%s>) -> tensor<i1>\n    stablehlo.return %%lt : "
            "tensor<i1>\n",
            c->desc ? "GT" : "LT", type, elem_name(c, 0), elem_name(c, 0));
  }
  fprintf(f, "  }) {dimension = %d : i64, is_stable = %s} : (", c->dim,
          c->stable ? "true" : "false");
  for (int k = 0; k < c->n_ops; k++)
    fprintf(f, "%stensor<%s%s>", k ? ", " : "", shape, elem_name(c, k));
  fprintf(f, ") -> (");
  for (int k = 0; k < c->n_ops; k++)
    fprintf(f, "%stensor<%s%s>", k ? ", " : "", shape, elem_name(c, k));
  fprintf(f, ")\n  func.return ");
  for (int k = 0; k < c->n_ops; k++) fprintf(f, "%s%%r#%d", k ? ", " : "", k);
  fprintf(f, " : ");
  for (int k = 0; k < c->n_ops; k++)
    fprintf(f, "%stensor<%s%s>", k ? ", " : "", shape, elem_name(c, k));
  fprintf(f, "\n}\n");
  assert_int_equal(fclose(f), 0);
  return text;
}

/* order[0..len) = the stable order of the slice keys[i * step]: a
 * top-down merge sort that takes from the right half only when its
 * element is strictly before the left's. */
static void merge_sort(const sort_case *c, const uint32_t *keys,
                       int64_t step, int64_t *a, int64_t *tmp, int64_t n) {
  if (n < 2) return;
  int64_t h = n / 2;
  merge_sort(c, keys, step, a, tmp, h);
  merge_sort(c, keys, step, a + h, tmp, n - h);
  int64_t i = 0, j = h, k = 0;
  while (i < h && j < n)
    tmp[k++] = ref_before(c->kind, c->desc, keys[a[j] * step],
                          keys[a[i] * step])
                   ? a[j++]
                   : a[i++];
  while (i < h) tmp[k++] = a[i++];
  while (j < n) tmp[k++] = a[j++];
  memcpy(a, tmp, (size_t)n * sizeof *a);
}

static void ref_order(const sort_case *c, const uint32_t *keys, int64_t step,
                      int64_t len, int64_t *order) {
  int64_t *tmp = malloc((size_t)len * sizeof *tmp);
  assert_non_null(tmp);
  for (int64_t i = 0; i < len; i++) order[i] = i;
  merge_sort(c, keys, step, order, tmp, len);
  free(tmp);
}

/* Rows (one element of every operand) compared bit by bit, for the
 * multiset check of unstable sorts. */
typedef struct row {
  uint32_t v[3];
} row;
static int row_cmp(const void *x, const void *y) {
  return memcmp(x, y, sizeof(row));
}

/* Checks one slice of an unstable sort: the keys are the stable order's
 * keys (the comparator's order is right), and the rows are the input's
 * rows (nothing lost, nothing made up, operands kept together). */
static void check_unstable_slice(const sort_case *c, uint32_t *const *in,
                                 uint32_t *const *out, const int64_t *order,
                                 int64_t base, int64_t step, int64_t len) {
  row *a = malloc((size_t)len * sizeof *a), *b = malloc((size_t)len * sizeof *b);
  assert_true(a && b);
  memset(a, 0, (size_t)len * sizeof *a);
  memset(b, 0, (size_t)len * sizeof *b);
  for (int64_t i = 0; i < len; i++) {
    uint32_t want = in[0][base + order[i] * step];
    uint32_t got = out[0][base + i * step];
    assert_true(ref_key(c->kind, want) == ref_key(c->kind, got));
    for (int k = 0; k < c->n_ops; k++) {
      a[i].v[k] = in[k][base + i * step];
      b[i].v[k] = out[k][base + i * step];
    }
  }
  qsort(a, (size_t)len, sizeof *a, row_cmp);
  qsort(b, (size_t)len, sizeof *b, row_cmp);
  assert_memory_equal(a, b, (size_t)len * sizeof *a);
  free(a);
  free(b);
}

/* Every result against the reference, slice by slice. */
static void check_results(const sort_case *c, uint32_t *const *in,
                          uint32_t *const *out, int64_t n) {
  int64_t len = c->dims[c->dim], step = 1;
  for (int d = c->dim + 1; d < c->rank; d++) step *= c->dims[d];
  int64_t *order = malloc((size_t)len * sizeof *order);
  assert_non_null(order);
  for (int64_t base = 0; base < n; base++) {
    if ((base / step) % len) continue; /* not the start of a slice */
    ref_order(c, in[0] + base, step, len, order);
    if (!c->stable) {
      check_unstable_slice(c, in, out, order, base, step, len);
      continue;
    }
    for (int k = 0; k < c->n_ops; k++)
      for (int64_t i = 0; i < len; i++)
        if (out[k][base + i * step] != in[k][base + order[i] * step])
          fail_msg("operand %d, slice at %lld, position %lld: got 0x%08x, "
                   "want 0x%08x", k, (long long)base, (long long)i,
                   out[k][base + i * step], in[k][base + order[i] * step]);
  }
  free(order);
}

static void run_case(const sort_case *c) {
  char *text = program_text(c);
  shlo_module *m = NULL;
  shlo_executable *e = NULL;
  shlo_diag d;
  shlo_diag_clear(&d);
  shlo_status st = shlo_load(text, strlen(text), "sort.mlir", NULL, &m, &e, &d);
  if (st) {
    char buf[SHLO_DIAG_MAX + 256];
    shlo_diag_format(&d, buf, sizeof buf);
    fail_msg("%s\n%s", buf, text);
  }
  shlo_value *args[3];
  uint32_t *in[3];
  int64_t n = 1;
  for (int i = 0; i < c->rank; i++) n *= c->dims[i];
  for (int k = 0; k < c->n_ops; k++) {
    shlo_elem_type et = k > 0 || c->kind == REF_S32 ? SHLO_SI32
                        : c->kind == REF_U32       ? SHLO_UI32
                                                   : SHLO_F32;
    args[k] = shlo_tensor_new(et, c->rank, c->dims);
    assert_non_null(args[k]);
    in[k] = args[k]->data;
    for (int64_t i = 0; i < n; i++) {
      if (k > 0) in[k][i] = k == 1 ? (uint32_t)i : rnd();
      else if (c->kind == REF_JNP || c->kind == REF_F32T)
        in[k][i] = f32_value(c->special_every);
      else /* few distinct values, both signs, the extremes */
        in[k][i] = rnd() % 7 == 0 ? (rnd() % 2 ? 0x80000000u : 0x7FFFFFFFu)
                                  : (rnd() % 400) * 0x00A00001u;
    }
  }
  shlo_value **res = NULL;
  int n_res = 0;
  st = shlo_execute(e, NULL, args, c->n_ops, &res, &n_res, &d);
  assert_int_equal(st, SHLO_OK);
  assert_int_equal(n_res, c->n_ops);
  uint32_t *out[3];
  for (int k = 0; k < c->n_ops; k++) out[k] = res[k]->data;
  check_results(c, in, out, n);
  for (int k = 0; k < n_res; k++) shlo_value_unref(res[k]);
  free(res);
  for (int k = 0; k < c->n_ops; k++) shlo_value_unref(args[k]);
  shlo_executable_free(e);
  shlo_module_free(m);
  free(text);
}

/* One f32 operand, jnp.sort's comparator: with specials its keys differ
 * from its bits (-0, NaN payloads) and each key word carries the bits;
 * without, the keys are the bits and the sorted words are the result. */
static void jnp_sort_one_operand(void **state) {
  (void)state;
  sort_case c = {REF_JNP, false, true, 1, 1, {5000}, 0, 5};
  run_case(&c);
  c.special_every = 0;
  run_case(&c);
  c.dims[0] = 300000; /* key making and passes in parts on the pool */
  run_case(&c);
  c.special_every = 3;
  run_case(&c);
}

/* Plain compares: the keys are the bits, LT and GT. */
static void plain_compares_both_directions(void **state) {
  (void)state;
  const ref_kind kinds[] = {REF_F32T, REF_S32, REF_U32};
  for (int i = 0; i < 3; i++)
    for (int desc = 0; desc < 2; desc++) {
      sort_case c = {kinds[i], desc, true, 1, 1, {3000}, 0, 4};
      run_case(&c);
      c.dims[0] = 270000;
      run_case(&c);
    }
}

/* Payload operands follow the key operand's order (the index path). */
static void several_operands_stay_together(void **state) {
  (void)state;
  sort_case c = {REF_JNP, false, true, 3, 1, {4000}, 0, 4};
  run_case(&c);
  c.kind = REF_S32;
  c.desc = true;
  run_case(&c);
  c.kind = REF_JNP;
  c.desc = false;
  c.n_ops = 2;
  c.dims[0] = 280000;
  run_case(&c);
}

static void unstable_sorts_sort(void **state) {
  (void)state;
  sort_case c = {REF_JNP, false, false, 2, 1, {4000}, 0, 3};
  run_case(&c);
  c.n_ops = 1;
  run_case(&c);
  c.kind = REF_U32;
  run_case(&c);
}

/* Rank 3, the long dimension in each place: strided slices along 0 and
 * 1, contiguous along 2. */
static void rank3_along_each_dimension(void **state) {
  (void)state;
  for (int dim = 0; dim < 3; dim++) {
    sort_case c = {REF_JNP, false, true, 2, 3, {3, 2, 2}, dim, 4};
    c.dims[dim] = 700;
    run_case(&c);
    c.n_ops = 1;
    run_case(&c);
    c.kind = REF_F32T;
    c.desc = true;
    run_case(&c);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(jnp_sort_one_operand),
      cmocka_unit_test(plain_compares_both_directions),
      cmocka_unit_test(several_operands_stay_together),
      cmocka_unit_test(unstable_sorts_sort),
      cmocka_unit_test(rank3_along_each_dimension),
  };
  /* parts on the pool on any machine: 4 threads, before the default
   * context's first use */
  shlo_context_options o;
  shlo_context_options_init(&o);
  o.threads = 4;
  if (shlo_default_context_configure(&o) != SHLO_OK) return 1;
  return cmocka_run_group_tests(tests, NULL, NULL);
}
