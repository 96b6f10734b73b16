/* SPDX-License-Identifier: Apache-2.0 */
/* GEMM against op(b) packed once (engine/src/kernels/gemm_prepacked.c)
 * and the while loops that use it (kernels/pack_scope.c):
 * - the kernel gives, bit for bit, what shlo__sgemm_panels gives and the
 *   scalar fmaf chain over k in order from zero, on every row block
 *   height, panel tail, m = 1, odd k, either operand transposed, with NaN
 *   and infinities among the inputs; on a variant without AVX-512F it
 *   declines;
 * - a while that carries its weights unchanged (packed once, reused by
 *   every iteration) gives the bytes of the same loop reading the weights
 *   from outside (never packed), and of the fmaf chains written out here;
 * - a while whose body changes its weights every iteration, and a while
 *   nested in one that does, see each iteration's weights: no stale pack;
 *   a while nested in one that carries the same weights unchanged gives
 *   the same bytes too (it reuses the outer loop's pack).
 * Every ISA variant this machine has is checked. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kernels/gemm_panels.h"
#include "kernels/gemm_prepacked.h"
#include "kernels/vmath.h"
#include "shlo/engine.h"
#include "shlo/ir.h"
#include "shlo/tensor.h"

static bool panels_run(void) { return !strcmp(shlo__vmath_isa(), "avx512f"); }

static void fill(float *x, int64_t n, uint32_t seed) {
  for (int64_t i = 0; i < n; i++) {
    seed = seed * 1664525u + 1013904223u;
    x[i] = (float)(seed >> 8) / (float)(1 << 24) - 0.5f;
  }
}

/* ---- the kernel ---- */

/* op(a) m x k and op(b) k x n, each stored with spare elements per row,
 * c with spare columns that must stay as they were. */
static void check_kernel(bool ta, bool tb, int64_t m, int64_t n, int64_t k,
                         bool odd_values) {
  int64_t a_rows = ta ? k : m, a_cols = ta ? m : k;
  int64_t b_rows = tb ? n : k, b_cols = tb ? k : n;
  int64_t lda = a_cols + 3, ldb = b_cols + 5, ldc = n + 2;
  float *a = malloc(sizeof(float) * (size_t)(a_rows * lda));
  float *b = malloc(sizeof(float) * (size_t)(b_rows * ldb));
  float *c = malloc(sizeof(float) * (size_t)(m * ldc));
  float *d = malloc(sizeof(float) * (size_t)(m * ldc));
  assert_true(a && b && c && d);
  fill(a, a_rows * lda, (uint32_t)(m * 11 + k));
  fill(b, b_rows * ldb, (uint32_t)(n * 17 + k));
  if (odd_values) { /* a NaN, infinities and -0 in both operands */
    static const float odd[] = {NAN, INFINITY, -INFINITY, -0.0f};
    for (int i = 0; i < 4; i++) {
      a[(i * 7) % (a_rows * lda)] = odd[i];
      b[(i * 13 + 1) % (b_rows * ldb)] = odd[3 - i];
    }
  }
  for (int64_t i = 0; i < m * ldc; i++) c[i] = d[i] = -77.0f;
  shlo__sgemm_packed *pb = shlo__sgemm_pack(tb, k, n, b, ldb);
  if (!panels_run()) {
    assert_null(pb);
    assert_false(shlo__sgemm_prepacked(ta, m, a, lda, pb, c, ldc));
    assert_false(
        shlo__sgemm_panels_packed(ta, m, k, a, lda, b, n < 64 ? n : 64, NULL,
                                  c, ldc));
    for (int64_t i = 0; i < m * ldc; i++) assert_true(c[i] == -77.0f);
    goto done;
  }
  assert_non_null(pb);
  assert_true(shlo__sgemm_prepacked(ta, m, a, lda, pb, c, ldc));
  assert_true(shlo__sgemm_panels(ta, tb, m, n, k, a, lda, b, ldb, d, ldc));
  /* the panels' bytes, NaNs' payloads included, and the padding kept */
  if (memcmp(c, d, sizeof(float) * (size_t)(m * ldc)))
    fail_msg("ta=%d tb=%d m=%lld n=%lld k=%lld: differs from the panels", ta,
             tb, (long long)m, (long long)n, (long long)k);
  if (!odd_values)
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < n; j++) {
        float want = 0;
        for (int64_t kk = 0; kk < k; kk++)
          want = fmaf(ta ? a[kk * lda + i] : a[i * lda + kk],
                      tb ? b[j * ldb + kk] : b[kk * ldb + j], want);
        if (memcmp(&c[i * ldc + j], &want, sizeof want))
          fail_msg("ta=%d tb=%d m=%lld n=%lld k=%lld: c[%lld][%lld] = %a, "
                   "want %a", ta, tb, (long long)m, (long long)n,
                   (long long)k, (long long)i, (long long)j, c[i * ldc + j],
                   want);
      }
done:
  shlo__sgemm_packed_free(pb);
  free(a);
  free(b);
  free(c);
  free(d);
}

static void kernel_shapes(void) {
  static const int64_t ms[] = {1, 2, 5, 6, 7, 13, 32};
  static const int64_t ns[] = {24, 63, 64, 65, 130};
  static const int64_t ks[] = {1, 3, 17, 129};
  for (int t = 0; t < 4; t++)
    for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++)
      for (size_t j = 0; j < sizeof ns / sizeof ns[0]; j++)
        for (size_t l = 0; l < sizeof ks / sizeof ks[0]; l++)
          check_kernel(t & 1, t & 2, ms[i], ns[j], ks[l], false);
  /* sizes the pool splits (the lstm's step, smaller), and odd values */
  check_kernel(false, false, 32, 1024, 512, false);
  check_kernel(false, true, 9, 300, 257, false);
  check_kernel(false, false, 7, 130, 33, true);
  check_kernel(true, true, 1, 65, 5, true);
}

/* ---- while loops through the engine ---- */

enum weights {
  CARRIED,  /* a loop value the body returns unchanged: packed */
  CAPTURED, /* read from outside the loop: never packed */
  HALVED,   /* a loop value the body halves every iteration */
  NESTED,   /* halved by an outer loop, carried unchanged by an inner one */
  KEPT      /* carried unchanged by an outer loop and by an inner one */
};

#define STEPS 4 /* iterations (of the outer loop where nested) */
#define INNER 2 /* iterations of the inner loop */

/* The loop h = dot(h, w) + x over m x n activations and n x n weights
 * (tb: w is used transposed), STEPS times; w as `how` says. */
static char *loop_program(enum weights how, bool tb, int64_t m, int64_t n) {
  char h[64], w[64], dims[64];
  snprintf(h, sizeof h, "tensor<%lldx%lldxf32>", (long long)m, (long long)n);
  snprintf(w, sizeof w, "tensor<%lldx%lldxf32>", (long long)n, (long long)n);
  snprintf(dims, sizeof dims, "contracting_dims = [1] x [%d]", tb ? 1 : 0);
  const char *cond =
      "    cond {\n"
      "      %%lim = stablehlo.constant dense<%d> : tensor<i32>\n"
      "      %%p = stablehlo.compare LT, %%%s, %%lim, SIGNED : "
      "(tensor<i32>, tensor<i32>) -> tensor<i1>\n"
      "      stablehlo.return %%p : tensor<i1>\n"
      "    }";
  char cond_outer[512], cond_inner[512];
  snprintf(cond_outer, sizeof cond_outer, cond, STEPS, "i");
  snprintf(cond_inner, sizeof cond_inner, cond, INNER, "j");
  char *text = malloc(8192);
  assert_non_null(text);
  const char *wv = how == CAPTURED ? "%w" : "%ww";
  char step[1024];
  snprintf(step, sizeof step,
           "      %%d = stablehlo.dot_general %%%s, %s, %s : (%s, %s) -> %s\n"
           "      %%h2 = stablehlo.add %%d, %%x : %s\n",
           how >= NESTED ? "hh" : "h", how >= NESTED ? "%www" : wv, dims, h,
           w, h, h);
  char body[4096];
  if (how >= NESTED)
    snprintf(body, sizeof body,
             "      %%half = stablehlo.constant dense<%s> : %s\n"
             "      %%wh = stablehlo.multiply %%ww, %%half : %s\n"
             "      %%z = stablehlo.constant dense<0> : tensor<i32>\n"
             "      %%in:3 = stablehlo.while(%%j = %%z, %%hh = %%h, "
             "%%www = %%%s) : tensor<i32>, %s, %s\n%s do {\n"
             "      %%onej = stablehlo.constant dense<1> : tensor<i32>\n"
             "      %%j2 = stablehlo.add %%j, %%onej : tensor<i32>\n%s"
             "      stablehlo.return %%j2, %%h2, %%www : tensor<i32>, %s, %s\n"
             "    }\n"
             "      %%ho = stablehlo.add %%in#1, %%x : %s\n"
             "      %%w2 = stablehlo.add %%wh, %%wh : %s\n",
             how == KEPT ? "1.0" : "0.5", w, w, how == KEPT ? "ww" : "wh", h,
             w, cond_inner, step, h, w, h, w);
  else
    snprintf(body, sizeof body, "%s%s", step,
             how == HALVED
                 ? "      %half = stablehlo.constant dense<0.5> : "
                 : "");
  if (how == HALVED) {
    size_t len = strlen(body);
    snprintf(body + len, sizeof body - len,
             "%s\n      %%w2 = stablehlo.multiply %%ww, %%half : %s\n", w, w);
  }
  /* the nested body adds x once more after its inner loop, and doubles
   * the halved weights back (exact): the next outer iteration halves
   * them again, so the inner loops all see w / 2 but as new values */
  const char *wret = how == CAPTURED               ? "%w"
                     : how == CARRIED || how == KEPT ? "%ww"
                                                     : "%w2";
  snprintf(text, 8192,
           "func.func @main(%%h0: %s, %%w: %s, %%x: %s) -> %s {\n"
           "  %%c0 = stablehlo.constant dense<0> : tensor<i32>\n"
           "  %%r:3 = stablehlo.while(%%i = %%c0, %%h = %%h0, %%ww = %%w) : "
           "tensor<i32>, %s, %s\n%s do {\n"
           "      %%one = stablehlo.constant dense<1> : tensor<i32>\n"
           "      %%i2 = stablehlo.add %%i, %%one : tensor<i32>\n%s"
           "      stablehlo.return %%i2, %%%s, %s : tensor<i32>, %s, %s\n"
           "    }\n"
           "  return %%r#1 : %s\n"
           "}\n",
           h, w, h, h, h, w, cond_outer, body, how >= NESTED ? "ho" : "h2",
           wret, h, w, h);
  return text;
}

/* h = op(h) w + x written out: the fmaf chain of each element, then the
 * add. */
static void ref_step(float *h, const float *w, const float *x, bool tb,
                     int64_t m, int64_t n) {
  float *next = malloc(sizeof(float) * (size_t)(m * n));
  assert_non_null(next);
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      float acc = 0;
      for (int64_t kk = 0; kk < n; kk++)
        acc = fmaf(h[i * n + kk], tb ? w[j * n + kk] : w[kk * n + j], acc);
      next[i * n + j] = acc + x[i * n + j];
    }
  memcpy(h, next, sizeof(float) * (size_t)(m * n));
  free(next);
}

/* What loop_program computes, here. */
static void ref_loop(enum weights how, bool tb, int64_t m, int64_t n,
                     const float *h0, const float *w0, const float *x,
                     float *h) {
  float *w = malloc(sizeof(float) * (size_t)(n * n));
  assert_non_null(w);
  memcpy(h, h0, sizeof(float) * (size_t)(m * n));
  memcpy(w, w0, sizeof(float) * (size_t)(n * n));
  for (int s = 0; s < STEPS; s++) {
    if (how >= NESTED) {
      if (how == NESTED)
        for (int64_t i = 0; i < n * n; i++) w[i] *= 0.5f;
      for (int t = 0; t < INNER; t++) ref_step(h, w, x, tb, m, n);
      for (int64_t i = 0; i < m * n; i++) h[i] += x[i];
      if (how == NESTED)
        for (int64_t i = 0; i < n * n; i++) w[i] += w[i];
    } else {
      ref_step(h, w, x, tb, m, n);
      if (how == HALVED)
        for (int64_t i = 0; i < n * n; i++) w[i] *= 0.5f;
    }
  }
  free(w);
}

static shlo_value *matrix(int64_t rows, int64_t cols, uint32_t seed) {
  int64_t dims[2] = {rows, cols};
  shlo_value *v = shlo_tensor_new(SHLO_F32, 2, dims);
  assert_non_null(v);
  fill(shlo_tensor_data(v), rows * cols, seed);
  return v;
}

/* Runs loop_program on args; returns its result's floats (malloc'd). */
static float *run_loop(enum weights how, bool tb, int64_t m, int64_t n,
                       shlo_value *const *args) {
  char *text = loop_program(how, tb, m, n);
  shlo_module *mod = NULL;
  shlo_executable *e = NULL;
  shlo_diag d;
  if (shlo_load(text, strlen(text), "loop.mlir", NULL, &mod, &e, &d))
    fail_msg("load: %s\n%s", d.message, text);
  shlo_value **res = NULL;
  int n_res = 0;
  if (shlo_execute(e, NULL, args, 3, &res, &n_res, &d))
    fail_msg("execute: %s", d.message);
  assert_int_equal(n_res, 1);
  float *out = malloc(sizeof(float) * (size_t)(m * n));
  assert_non_null(out);
  memcpy(out, shlo_tensor_data(res[0]), sizeof(float) * (size_t)(m * n));
  shlo_value_unref(res[0]);
  free(res);
  shlo_executable_free(e);
  shlo_module_free(mod);
  free(text);
  return out;
}

static void check_loops(bool tb, int64_t m, int64_t n) {
  shlo_value *args[3] = {matrix(m, n, (uint32_t)m), matrix(n, n, 7),
                         matrix(m, n, 99)};
  /* weights scaled so that STEPS products stay far from overflow */
  float *w = shlo_tensor_data(args[1]);
  for (int64_t i = 0; i < n * n; i++) w[i] *= 0.25f;
  float *carried = run_loop(CARRIED, tb, m, n, args);
  float *captured = run_loop(CAPTURED, tb, m, n, args);
  float *halved = run_loop(HALVED, tb, m, n, args);
  float *nested = run_loop(NESTED, tb, m, n, args);
  float *kept = run_loop(KEPT, tb, m, n, args);
  size_t bytes = sizeof(float) * (size_t)(m * n);
  assert_memory_equal(carried, captured, bytes);
  /* the weights passed in are the caller's, untouched */
  float *w0 = malloc(sizeof(float) * (size_t)(n * n));
  assert_non_null(w0);
  fill(w0, n * n, 7);
  for (int64_t i = 0; i < n * n; i++) w0[i] *= 0.25f;
  assert_memory_equal(w, w0, sizeof(float) * (size_t)(n * n));
  if (panels_run()) { /* the products are the panels' fmaf chains */
    const float *h0 = shlo_tensor_data(args[0]), *x = shlo_tensor_data(args[2]);
    float *want = malloc(bytes);
    assert_non_null(want);
    static const enum weights hows[] = {CARRIED, HALVED, NESTED, KEPT};
    float *got[] = {carried, halved, nested, kept};
    for (int i = 0; i < 4; i++) {
      ref_loop(hows[i], tb, m, n, h0, w0, x, want);
      if (memcmp(got[i], want, bytes))
        fail_msg("loop %d tb=%d m=%lld n=%lld: differs from fmaf", hows[i],
                 tb, (long long)m, (long long)n);
    }
    free(want);
  }
  free(w0);
  free(carried);
  free(captured);
  free(halved);
  free(nested);
  free(kept);
  for (int i = 0; i < 3; i++) shlo_value_unref(args[i]);
}

static void loop_shapes(void) {
  /* one thread's product (odd k, a 1-column tail panel), one the pool
   * splits by columns, one row */
  for (int tb = 0; tb < 2; tb++) {
    check_loops(tb, 5, 129);
    check_loops(tb, 20, 129);
    check_loops(tb, 1, 200);
  }
}

/* ---- every variant ---- */

static void every_isa(void (*check)(void)) {
  static const char *const isas[] = {"avx512f", "avx2", "portable"};
  const char *was = shlo__vmath_isa();
  for (size_t i = 0; i < sizeof isas / sizeof isas[0]; i++) {
    if (!shlo__vmath_use_isa(isas[i])) continue;
    check();
  }
  assert_true(shlo__vmath_use_isa(was));
}

static void prepacked_is_the_panels_product(void **state) {
  (void)state;
  every_isa(kernel_shapes);
}

static void loops_reuse_packs_and_never_stale_ones(void **state) {
  (void)state;
  every_isa(loop_shapes);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(prepacked_is_the_panels_product),
      cmocka_unit_test(loops_reuse_packs_and_never_stale_ones),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
