/* SPDX-License-Identifier: Apache-2.0 */
/* Time the three stages that turn program text into an executable --
 * parse, verify, compile -- for each file named, and print one line per
 * file: ops, then milliseconds per stage.  bench/compile_bench.sh feeds it
 * generated chains of adds to show how compile time grows with op count. */
#include <stdio.h>
#include <stdlib.h>

#include "shlo/engine.h"
#include "shlo/verify.h"

static double ms_since(int64_t t0) {
  return (double)(shlo_monotonic_ns() - t0) / 1e6;
}

static int64_t count_ops(const shlo_block *b) {
  int64_t n = 0;
  for (int i = 0; b && i < b->n_ops; i++) {
    n++;
    for (int r = 0; r < b->ops[i]->n_regions; r++)
      n += count_ops(b->ops[i]->regions[r]);
  }
  return n;
}

static int bench_file(const char *path) {
  shlo_diag d;
  shlo_diag_clear(&d);
  size_t len;
  char *text = shlo_read_file(path, &len, &d);
  if (!text) {
    fprintf(stderr, "%s\n", d.message);
    return 1;
  }
  shlo_module *m = NULL;
  shlo_executable *e = NULL;
  int64_t t0 = shlo_monotonic_ns();
  shlo_status st = shlo_parse_module(text, len, path, &m, &d);
  double parse_ms = ms_since(t0), verify_ms = 0, compile_ms = 0;
  if (!st) {
    t0 = shlo_monotonic_ns();
    st = shlo_verify_module_first(m, NULL, &d);
    verify_ms = ms_since(t0);
  }
  if (!st) {
    shlo_compile_opts o = {.verified = true};
    t0 = shlo_monotonic_ns();
    st = shlo_compile(m, &o, &e, &d);
    compile_ms = ms_since(t0);
  }
  if (st) {
    fprintf(stderr, "%s:%d:%d: %s\n", path, d.line, d.col, d.message);
  } else {
    int64_t ops = 0;
    for (int i = 0; i < shlo_module_num_funcs(m); i++)
      ops += count_ops(shlo_module_func(m, i)->body);
    printf("%10lld ops %10.1f MB  parse %9.1f ms  verify %9.1f ms  "
           "compile %9.1f ms  total %9.1f ms\n", (long long)ops,
           (double)len / 1e6, parse_ms, verify_ms, compile_ms,
           parse_ms + verify_ms + compile_ms);
  }
  shlo_executable_free(e);
  shlo_module_free(m);
  free(text);
  return st ? 1 : 0;
}

int main(int argc, char **argv) {
  int rc = 0;
  for (int i = 1; i < argc; i++) rc |= bench_file(argv[i]);
  return rc;
}
