/* SPDX-License-Identifier: Apache-2.0 */
/* Test harness: text -> module -> executable -> execution. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "harness.h"

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
