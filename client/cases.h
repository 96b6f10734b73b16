/* SPDX-License-Identifier: Apache-2.0 */
/* Splitting a test file into cases at lines `// -----`, as MLIR's
 * -split-input-file does. */
#ifndef SHLO_CASES_H
#define SHLO_CASES_H

#include <stdbool.h>
#include <stddef.h>

#include "shlo/ir.h"

/* One case: its text padded with leading newlines, so line numbers in
 * diagnostics are those of the whole file.  index counts from 1. */
typedef struct test_case {
  const char *text;
  size_t len;
  int index;
  int first_line;
} test_case;

/* Calls fn(ctx, case) for each case in order; stops early and returns
 * fn's value when it is nonzero.  Returns -1 when out of memory. */
int cases_split(const char *text, size_t len,
                int (*fn)(void *ctx, const test_case *c), void *ctx);

/* Whether a line (without its newline) separates cases. */
bool cases_is_separator(const char *line, const char *end);

/* ---- a program's test inputs ----
 * A text gives them in a RUN line, `--args="[...]"`, as for the reference
 * interpreter.  A portable artifact has no comments, so shlo writes them
 * into it as the module attribute CASES_TEST_ARGS_ATTR, a discardable
 * string attribute (unknown to StableHLO, ignored by other readers), and
 * shlo test takes a case's inputs from the RUN line, else from there. */
#define CASES_TEST_ARGS_ATTR "shlo.test_args"

/* The `--args="..."` of the first RUN line that has one (malloc'd), or
 * NULL: none, out of memory, or bytes that are an artifact. */
char *cases_run_line_args(const char *text, size_t len);

/* m's CASES_TEST_ARGS_ATTR string, or NULL. */
const char *cases_module_args(const shlo_module *m);

/* A shallow copy of a module whose attribute dictionary also holds
 * CASES_TEST_ARGS_ATTR = args (in place of one it has), for writing an
 * artifact that carries its text's inputs.  The module must outlive it. */
typedef struct module_with_args {
  shlo_module *m; /* the copy (malloc'd) */
  shlo_attr dict, value;
  shlo_named_attr *fields;
} module_with_args;

/* Fills *out from m and args (args is not copied).  0, or -1 when out of
 * memory.  Free with cases_module_with_args_free. */
int cases_module_with_args(const shlo_module *m, const char *args,
                           module_with_args *out);
void cases_module_with_args_free(module_with_args *w);

/* A growable list of file paths (each malloc'd). */
typedef struct file_list {
  char **v;
  size_t n, cap;
} file_list;

/* Append PATH if it is a file, else every *.mlir below it, sorted by name.
 * Returns 0, or -1 after a message on stderr. */
int cases_collect_files(const char *path, file_list *out);
void cases_free_files(file_list *l);

#endif
