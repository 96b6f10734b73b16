/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target: the MLIR text parser, then the verifier and the
 * compiler on whatever parses -- the path every program a client sends
 * takes before anything runs.  Bounded like the server bounds it (an op
 * count and a deadline), so a slow input is a finding only when a bound
 * does not hold. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "shlo/engine.h"
#include "shlo/verify.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  shlo_compile_limits lim = {.max_ops = 20000,
                             .deadline_ns = shlo_monotonic_ns() + 2000000000};
  shlo_module *m = NULL;
  shlo_diag d;
  shlo_diag_clear(&d);
  if (shlo_parse_module_limited((const char *)data, size, "fuzz", &lim, &m,
                                &d))
    return 0;
  shlo_verify_opts vo = {.limits = &lim};
  shlo_status st = shlo_verify_module_first(m, &vo, &d);
  if (!st && shlo_module_num_funcs(m)) {
    shlo_compile_opts co = {.verified = true, .limits = &lim};
    shlo_executable *e = NULL;
    if (shlo_compile(m, &co, &e, &d) == SHLO_OK) shlo_executable_free(e);
  }
  char *printed = st ? NULL : shlo_module_print(m);
  free(printed);
  shlo_module_free(m);
  return 0;
}
