/* One fuzz input through the artifact reader: shared by the bounded suite
 * test (test_artifact_fuzz.c) and the libFuzzer target
 * (tests/fuzz/fuzz_artifact.c).  Whatever the bytes, the reader must
 * return a status with a message, never crash, hang or leak; what reads
 * must also verify/compile to a status. */
#ifndef SHLO_ARTIFACT_FUZZ_H
#define SHLO_ARTIFACT_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "shlo/artifact.h"
#include "shlo/engine.h"

/* Returns 1 if the input read as a module, 0 if refused, -1 if refused
 * without a message (a harness failure). */
static inline int artifact_fuzz_one(const uint8_t *data, size_t len) {
  shlo_module *m = NULL;
  shlo_diag d;
  shlo_diag_clear(&d);
  shlo_status st = shlo_read_artifact(data, len, "fuzz", &m, NULL, &d);
  if (st != SHLO_OK) return m == NULL && d.message[0] ? 0 : -1;
  shlo_executable *e = NULL;
  shlo_diag cd;
  if (shlo_compile(m, NULL, &e, &cd) == SHLO_OK) shlo_executable_free(e);
  shlo_module_free(m);
  return 1;
}

#endif
