/* Splitting a test file into cases at lines `// -----`, as MLIR's
 * -split-input-file does. */
#ifndef SHLO_CASES_H
#define SHLO_CASES_H

#include <stdbool.h>
#include <stddef.h>

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
