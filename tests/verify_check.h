/* SPDX-License-Identifier: Apache-2.0 */
/* What the verifier's constraint tests check a program for (included by
 * test_verify_constraints.c and test_verify_spec_ops.c, after cmocka.h):
 * that it verifies, or that it is rejected at a line:column with
 * "<op> (<label>)" naming the spec's constraint. */
#ifndef SHLO_TEST_VERIFY_CHECK_H
#define SHLO_TEST_VERIFY_CHECK_H

#include <stdio.h>
#include <string.h>

#include "shlo/ir.h"
#include "shlo/verify.h"

/* The first diagnostic of verifying text (which must parse), formatted. */
static shlo_status first_diag(const char *text, char *buf, size_t cap) {
  shlo_module *m = NULL;
  shlo_diag d;
  shlo_diag_clear(&d);
  buf[0] = 0;
  if (shlo_parse_module(text, strlen(text), "t.mlir", &m, &d)) {
    shlo_diag_format(&d, buf, cap);
    fprintf(stderr, "parse failed: %s\n%s", buf, text);
    fail();
  }
  shlo_status st = shlo_verify_module_first(m, NULL, &d);
  if (st) shlo_diag_format(&d, buf, cap);
  shlo_module_free(m);
  return st;
}

/* text must fail verification at `at` (line:column of the op) with
 * "<op> (<label>)". */
static void rejects_at(const char *at, const char *op, const char *label,
                       const char *text) {
  char buf[SHLO_DIAG_MAX + 256], want[128];
  shlo_status st = first_diag(text, buf, sizeof buf);
  snprintf(want, sizeof want, "t.mlir:%s: error: %s (%s)", at, op, label);
  if (st != SHLO_EVERIFY || !strstr(buf, want)) {
    fprintf(stderr, "wanted %s\ngot (status %d): %s\nfor:\n%s", want, st, buf,
            text);
    fail();
  }
}

/* text must verify. */
static void accepts(const char *text) {
  char buf[SHLO_DIAG_MAX + 256];
  if (first_diag(text, buf, sizeof buf) != SHLO_OK) {
    fprintf(stderr, "rejected: %s\nfor:\n%s", buf, text);
    fail();
  }
}

#endif
