/* SPDX-License-Identifier: Apache-2.0 */
/* Test harness: text -> module -> executable -> execution. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/value.h"
#include "harness.h"
#include "shlo/context.h"

shlo_status harness_run(const char *text, bool quiet) {
  shlo_module *m = NULL;
  shlo_executable *e = NULL;
  shlo_value **res = NULL;
  int n_res = 0;
  shlo_diag d;
  shlo_diag_clear(&d);
  shlo_status st = shlo_load(text, strlen(text), "test.mlir", NULL, &m, &e,
                             &d);
  if (st == SHLO_OK) st = shlo_execute(e, NULL, NULL, 0, &res, &n_res, &d);
  if (st != SHLO_OK && !quiet) {
    char buf[SHLO_DIAG_MAX + 256];
    shlo_diag_format(&d, buf, sizeof buf);
    print_message("%s: %s\n", shlo_status_name(st), buf);
  }
  for (int i = 0; i < n_res; i++) shlo_value_unref(res[i]);
  free(res);
  shlo_executable_free(e);
  shlo_module_free(m);
  return st;
}

char *harness_explain(const shlo_executable *e) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  assert_non_null(f);
  shlo_executable_explain(e, f);
  fclose(f);
  return buf;
}

harness_result harness_run_fused(const char *text, bool fuse,
                                 shlo_value *const *args, int n_args) {
  harness_result r = {0};
  shlo_module *m;
  shlo_executable *e;
  shlo_diag d;
  if (shlo_parse_module(text, strlen(text), "f.mlir", &m, &d))
    fail_msg("parse: %s\n%s", d.message, text);
  shlo_compile_opts o = {.no_fusion = !fuse};
  if (shlo_compile(m, &o, &e, &d)) fail_msg("compile: %s", d.message);
  r.plan = harness_explain(e);
  if (shlo_execute(e, NULL, args, n_args, &r.v, &r.n, &d))
    fail_msg("execute: %s", d.message);
  shlo_executable_free(e);
  shlo_module_free(m);
  return r;
}

void harness_result_free(harness_result *r) {
  for (int i = 0; i < r->n; i++) shlo_value_unref(r->v[i]);
  free(r->v);
  free(r->plan);
}

/* A context of `threads`.  It outlives the values run in it: their
 * buffers go back to its cache when released. */
static shlo_context *pool_of(int threads) {
  shlo_context_options o;
  shlo_context_options_init(&o);
  o.threads = threads;
  shlo_context *ctx = NULL;
  assert_int_equal(shlo_context_create(&o, &ctx), SHLO_OK);
  return ctx;
}

/* Run text's @main in ctx; its one result. */
static shlo_value *run_in(const char *text, shlo_context *ctx) {
  shlo_module *m = NULL;
  shlo_executable *e = NULL;
  shlo_value **r = NULL;
  int nr = 0;
  shlo_diag d;
  shlo_compile_opts co = {.context = ctx};
  if (shlo_parse_module(text, strlen(text), "pools.mlir", &m, &d))
    fail_msg("parse: %s\n%s", d.message, text);
  if (shlo_compile(m, &co, &e, &d)) fail_msg("compile: %s", d.message);
  if (shlo_execute(e, NULL, NULL, 0, &r, &nr, &d))
    fail_msg("execute: %s", d.message);
  assert_int_equal(nr, 1);
  shlo_value *v = r[0];
  free(r);
  shlo_executable_free(e);
  shlo_module_free(m);
  return v;
}

/* Where two f32 results first differ, printed before the test fails. */
static void print_first_difference(const shlo_value *one, const shlo_value *v,
                                   int threads) {
  if (one->elem != SHLO_F32) return;
  const float *a = one->data, *b = v->data;
  for (int64_t i = 0; i < one->numel; i++)
    if (memcmp(&a[i], &b[i], sizeof a[i]) != 0) {
      print_message("%d threads, element %lld: %a, one thread %a\n", threads,
                    (long long)i, (double)b[i], (double)a[i]);
      return;
    }
}

void harness_same_on_pools(const char *text) {
  shlo_context *one_ctx = pool_of(1);
  shlo_value *one = run_in(text, one_ctx);
  for (int t = 2; t <= 3; t++) {
    shlo_context *ctx = pool_of(t);
    shlo_value *v = run_in(text, ctx);
    assert_int_equal(v->nbytes, one->nbytes);
    if (memcmp(v->data, one->data, one->nbytes) != 0) {
      print_first_difference(one, v, t);
      fail();
    }
    shlo_value_unref(v);
    shlo_context_destroy(ctx);
  }
  shlo_value_unref(one);
  shlo_context_destroy(one_ctx);
}

void harness_appendf(char *buf, size_t cap, const char *fmt, ...) {
  size_t len = strlen(buf);
  if (len + 1 >= cap) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf + len, cap - len, fmt, ap);
  va_end(ap);
}

void harness_operand(char *buf, size_t cap, const char *name, const char *fn,
                     long n, const char *shape, const char *step) {
  harness_appendf(buf, cap,
                  "  %%%s_i = stablehlo.iota dim = 0 : tensor<%ldxf32>\n"
                  "  %%%s_s = stablehlo.constant dense<%s> : tensor<%ldxf32>\n"
                  "  %%%s_m = stablehlo.multiply %%%s_i, %%%s_s : "
                  "tensor<%ldxf32>\n"
                  "  %%%s_f = stablehlo.%s %%%s_m : tensor<%ldxf32>\n"
                  "  %%%s = stablehlo.reshape %%%s_f : (tensor<%ldxf32>) -> "
                  "tensor<%sxf32>\n",
                  name, n, name, step, n, name, name, name, n, name, fn, name,
                  n, name, name, n, shape);
}

/* A region reduce over dimension 1 of %in (tensor<P x n x f32>) into
 * %out, with a body that the native matcher does not take (an add, then
 * two negations): the region path, one element at a time in order. */
static void fold_in_order(char *t, size_t cap, const char *in, long P, long n,
                          const char *init, const char *out) {
  harness_appendf(
      t, cap,
      "  %%%s = \"stablehlo.reduce\"(%%%s, %%%s) ({\n"
      "    ^bb0(%%%s_ya: tensor<f32>, %%%s_yb: tensor<f32>):\n"
      "      %%%s_ys = stablehlo.add %%%s_ya, %%%s_yb : tensor<f32>\n"
      "      %%%s_yn = stablehlo.negate %%%s_ys : tensor<f32>\n"
      "      %%%s_yo = stablehlo.negate %%%s_yn : tensor<f32>\n"
      "      stablehlo.return %%%s_yo : tensor<f32>\n"
      "  }) {dimensions = array<i64: 1>} : (tensor<%ldx%ldxf32>, tensor<f32>)"
      " -> tensor<%ldxf32>\n",
      out, in, init, out, out, out, out, out, out, out, out, out, out, P, n,
      P);
}

void harness_tree_sum(char *t, size_t cap, const char *in, long P, long N,
                      long L, const char *init, const char *out) {
  long runs = N / L, k = L / 16, b = 16 * k, tail = L - b;
  if (k == 0) {
    fold_in_order(t, cap, in, P, N, init, out);
    return;
  }
  harness_appendf(t, cap,
                  "  %%%s_r = stablehlo.reshape %%%s : (tensor<%ldx%ldxf32>) "
                  "-> tensor<%ldx%ldx%ldxf32>\n"
                  "  %%%s_b = stablehlo.slice %%%s_r [0:%ld, 0:%ld, 0:%ld] : "
                  "(tensor<%ldx%ldx%ldxf32>) -> tensor<%ldx%ldx%ldxf32>\n"
                  "  %%%s_l16 = stablehlo.reshape %%%s_b : "
                  "(tensor<%ldx%ldx%ldxf32>) -> tensor<%ldx%ldx%ldx16xf32>\n",
                  out, in, P, N, P, runs, L, out, out, P, runs, b, P, runs, L,
                  P, runs, b, out, out, P, runs, b, P, runs, k);
  /* the tree, a level at a time: element 2i + element 2i + 1 */
  for (int w = 16; w > 1; w /= 2)
    harness_appendf(
        t, cap,
        "  %%%s_e%d = stablehlo.slice %%%s_l%d [0:%ld, 0:%ld, 0:%ld, 0:%d:2] "
        ": (tensor<%ldx%ldx%ldx%dxf32>) -> tensor<%ldx%ldx%ldx%dxf32>\n"
        "  %%%s_o%d = stablehlo.slice %%%s_l%d [0:%ld, 0:%ld, 0:%ld, 1:%d:2] "
        ": (tensor<%ldx%ldx%ldx%dxf32>) -> tensor<%ldx%ldx%ldx%dxf32>\n"
        "  %%%s_l%d = stablehlo.add %%%s_e%d, %%%s_o%d : "
        "tensor<%ldx%ldx%ldx%dxf32>\n",
        out, w, out, w, P, runs, k, w, P, runs, k, w, P, runs, k, w / 2, out,
        w, out, w, P, runs, k, w, P, runs, k, w, P, runs, k, w / 2, out, w / 2,
        out, w, out, w, P, runs, k, w / 2);
  harness_appendf(t, cap,
                  "  %%%s_s = stablehlo.reshape %%%s_l1 : "
                  "(tensor<%ldx%ldx%ldx1xf32>) -> tensor<%ldx%ldx%ldxf32>\n",
                  out, out, P, runs, k, P, runs, k);
  const char *per_run = "s";
  if (tail > 0) {
    harness_appendf(
        t, cap,
        "  %%%s_t = stablehlo.slice %%%s_r [0:%ld, 0:%ld, %ld:%ld] : "
        "(tensor<%ldx%ldx%ldxf32>) -> tensor<%ldx%ldx%ldxf32>\n"
        "  %%%s_c = stablehlo.concatenate %%%s_s, %%%s_t, dim = 2 : "
        "(tensor<%ldx%ldx%ldxf32>, tensor<%ldx%ldx%ldxf32>) -> "
        "tensor<%ldx%ldx%ldxf32>\n",
        out, out, P, runs, b, L, P, runs, L, P, runs, tail, out, out, out, P,
        runs, k, P, runs, tail, P, runs, k + tail);
    per_run = "c";
  }
  long n = runs * (k + tail);
  harness_appendf(t, cap,
                  "  %%%s_f = stablehlo.reshape %%%s_%s : "
                  "(tensor<%ldx%ldx%ldxf32>) -> tensor<%ldx%ldxf32>\n",
                  out, out, per_run, P, runs, k + tail, P, n);
  char f[128];
  snprintf(f, sizeof f, "%s_f", out);
  fold_in_order(t, cap, f, P, n, init, out);
}
