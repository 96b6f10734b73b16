/* SPDX-License-Identifier: Apache-2.0 */
/* Shared by the unit tests: run a whole program text through the engine. */
#ifndef SHLO_TEST_HARNESS_H
#define SHLO_TEST_HARNESS_H

#include <stdbool.h>

#include "shlo/engine.h"

/* Parse, compile and run the entry function of `text` (no arguments).
 * Returns the status of the first stage that fails, or SHLO_OK; prints its
 * diagnostic unless quiet.  Frees everything it made. */
shlo_status harness_run(const char *text, bool quiet);

/* What --explain prints for e (malloc'd; the caller frees it). */
char *harness_explain(const shlo_executable *e);

/* A program: @main with the given body lines. */
#define PROG(...) "func.func @main() {\n" __VA_ARGS__ "  func.return\n}\n"

#endif
