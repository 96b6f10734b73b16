/* SPDX-License-Identifier: Apache-2.0 */
/* One fuzz input through the artifact reader: shared by the bounded suite
 * test (test_artifact_fuzz.c) and the libFuzzer target
 * (tests/fuzz/fuzz_artifact.c).  Whatever the bytes, the reader must
 * return a status with a message, never crash, hang or leak; what reads
 * must also verify/compile to a status, and written again by the artifact
 * writer read back to the same module. */
#ifndef SHLO_ARTIFACT_FUZZ_H
#define SHLO_ARTIFACT_FUZZ_H

#include <stddef.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "shlo/artifact.h"
#include "shlo/engine.h"

/* The writer on what the reader accepted: m written again (at the version
 * the input names, else the newest) must read back to the same printed
 * module, or be refused with a message.  0: the same or refused; -2: it
 * read back different, -3: refused without a message. */
static inline int artifact_fuzz_rewrite(const shlo_module *m,
                                        const shlo_artifact_info *info) {
  const char *target = info->version[0] ? info->version : NULL;
  void *bytes = NULL;
  size_t n = 0;
  shlo_diag d;
  shlo_diag_clear(&d);
  shlo_status st = shlo_write_artifact(m, target, &bytes, &n, &d);
  if (st != SHLO_OK && target && st == SHLO_EUNSUPPORTED &&
      strstr(d.message, "shlo writes")) /* a version it does not write */
    st = shlo_write_artifact(m, NULL, &bytes, &n, &d);
  if (st != SHLO_OK) return bytes == NULL && d.message[0] ? 0 : -3;
  shlo_module *back = NULL;
  int rc = -2;
  if (shlo_read_artifact(bytes, n, "rewritten", &back, NULL, &d) == SHLO_OK) {
    char *a = shlo_module_print(m), *b = shlo_module_print(back);
    rc = a && b && !strcmp(a, b) ? 0 : -2;
    free(a);
    free(b);
    shlo_module_free(back);
  }
  free(bytes);
  return rc;
}

/* Returns 1 if the input read as a module (and rewrote to the same), 0 if
 * refused, -1 if refused without a message (a harness failure), -2 or -3
 * if the writer failed on it (artifact_fuzz_rewrite). */
static inline int artifact_fuzz_one(const uint8_t *data, size_t len) {
  shlo_module *m = NULL;
  shlo_diag d;
  shlo_diag_clear(&d);
  shlo_artifact_info info;
  shlo_status st = shlo_read_artifact(data, len, "fuzz", &m, &info, &d);
  if (st != SHLO_OK) return m == NULL && d.message[0] ? 0 : -1;
  int rw = artifact_fuzz_rewrite(m, &info);
  if (rw < 0) {
    shlo_module_free(m);
    return rw;
  }
  shlo_executable *e = NULL;
  shlo_diag cd;
  if (shlo_compile(m, NULL, &e, &cd) == SHLO_OK) shlo_executable_free(e);
  shlo_module_free(m);
  return 1;
}

#endif
