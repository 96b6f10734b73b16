/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target: the portable-artifact (MLIR bytecode) reader, then the
 * verifier and compiler on whatever it accepts, bounded as the server
 * bounds a program; and the writer's round trip on a module that
 * verifies (what `shlo serialize` writes): writing it at the newest
 * version and reading that back must give the same printed module, or
 * the writer and reader disagree (a finding). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shlo/artifact.h"
#include "shlo/engine.h"
#include "shlo/verify.h"

/* True when m verifies (then it is compiled too). */
static bool compile_bounded(shlo_module *m) {
  shlo_compile_limits lim = {.max_ops = 20000,
                             .deadline_ns = shlo_monotonic_ns() + 2000000000};
  shlo_diag d;
  shlo_diag_clear(&d);
  shlo_verify_opts vo = {.limits = &lim};
  if (shlo_verify_module_first(m, &vo, &d) || !shlo_module_num_funcs(m)) return false;
  shlo_compile_opts co = {.verified = true, .limits = &lim};
  shlo_executable *e = NULL;
  if (shlo_compile(m, &co, &e, &d) == SHLO_OK) shlo_executable_free(e);
  return true;
}

/* Write m and read it back: the two must print alike. */
static void check_round_trip(const shlo_module *m) {
  void *bytes = NULL;
  size_t len = 0;
  shlo_diag d;
  shlo_diag_clear(&d);
  if (shlo_write_artifact(m, NULL, &bytes, &len, &d) != SHLO_OK) return;
  shlo_module *back = NULL;
  if (shlo_read_artifact(bytes, len, "fuzz-rewrite", &back, NULL, &d)) {
    fprintf(stderr, "the reader refuses what the writer wrote: %s\n",
            d.message);
    __builtin_trap();
  }
  char *a = shlo_module_print(m), *b = shlo_module_print(back);
  if (a && b && strcmp(a, b) != 0) {
    fprintf(stderr, "written:\n%s\nread back:\n%s\n", a, b);
    __builtin_trap();
  }
  free(a);
  free(b);
  shlo_module_free(back);
  free(bytes);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  shlo_module *m = NULL;
  shlo_diag d;
  shlo_diag_clear(&d);
  if (shlo_read_artifact(data, size, "fuzz", &m, NULL, &d)) return 0;
  if (compile_bounded(m)) check_round_trip(m);
  shlo_module_free(m);
  return 0;
}
