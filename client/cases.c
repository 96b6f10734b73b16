/* SPDX-License-Identifier: Apache-2.0 */
/* Test-file splitting shared by shlo test, shlo verify and the tests. */
#define _GNU_SOURCE /* memmem */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>

#include "cases.h"
#include "frontend/module.h" /* module_with_args copies a module */

/* A separator holds "// -----" after nothing but spaces and comment
 * slashes: "// // -----" (a commented-out separator in the corpus) still
 * splits, as MLIR's -split-input-file does. */
bool cases_is_separator(const char *line, const char *end) {
  static const char sep[] = "// -----";
  while (line < end && (*line == ' ' || *line == '\t')) line++;
  while ((size_t)(end - line) >= sizeof sep - 1) {
    if (!memcmp(line, sep, sizeof sep - 1)) return true;
    if (line[0] != '/' || line[1] != '/') return false;
    line += 2;
    while (line < end && *line == ' ') line++;
  }
  return false;
}

static int emit(const char *start, const char *stop, int first_line, int index,
                int (*fn)(void *, const test_case *), void *ctx) {
  size_t body = (size_t)(stop - start);
  size_t pad = (size_t)(first_line - 1);
  char *buf = malloc(pad + body + 1);
  if (!buf) return -1;
  memset(buf, '\n', pad);
  memcpy(buf + pad, start, body);
  buf[pad + body] = 0;
  test_case c = {buf, pad + body, index, first_line};
  int rc = fn(ctx, &c);
  free(buf);
  return rc;
}

int cases_split(const char *text, size_t len,
                int (*fn)(void *ctx, const test_case *c), void *ctx) {
  const char *end = text + len, *start = text, *p = text;
  int line = 1, first = 1, index = 0;
  /* A portable artifact (MLIR bytecode) is one module: its bytes are not
   * lines, and may hold anything, a separator too. */
  if (len >= 4 && !memcmp(text, "ML\xefR", 4))
    return emit(text, end, 1, 1, fn, ctx);
  while (p < end) {
    const char *eol = memchr(p, '\n', (size_t)(end - p));
    const char *stop = eol ? eol : end;
    if (cases_is_separator(p, stop)) {
      int rc = emit(start, p, first, ++index, fn, ctx);
      if (rc) return rc;
      start = eol ? eol + 1 : end;
      first = line + 1;
    }
    p = eol ? eol + 1 : end;
    line++;
  }
  return emit(start, end, first, ++index, fn, ctx);
}

/* A line "// RUN: ..." (spaces allowed before and between). */
static bool is_run_line(const char *line, const char *end) {
  while (line < end && (*line == ' ' || *line == '\t')) line++;
  if (end - line < 2 || memcmp(line, "//", 2)) return false;
  line += 2;
  while (line < end && *line == ' ') line++;
  return end - line >= 4 && !memcmp(line, "RUN:", 4);
}

char *cases_run_line_args(const char *text, size_t len) {
  static const char key[] = "--args=\"";
  if (len >= 4 && !memcmp(text, "ML\xefR", 4)) return NULL;
  const char *end = text + len;
  for (const char *p = text; p < end;) {
    const char *eol = memchr(p, '\n', (size_t)(end - p));
    const char *stop = eol ? eol : end;
    const char *at = is_run_line(p, stop)
                         ? memmem(p, (size_t)(stop - p), key, sizeof key - 1)
                         : NULL;
    if (at) {
      const char *v = at + sizeof key - 1;
      const char *q = memchr(v, '"', (size_t)(stop - v));
      if (q) return strndup(v, (size_t)(q - v));
    }
    p = eol ? eol + 1 : end;
  }
  return NULL;
}

const char *cases_module_args(const shlo_module *m) {
  const shlo_attr *d = m ? shlo_module_attrs(m) : NULL;
  for (int i = 0; d && d->kind == SHLO_ATTR_STRUCT && i < d->n; i++)
    if (!strcmp(d->fields[i].name, CASES_TEST_ARGS_ATTR))
      return d->fields[i].value->kind == SHLO_ATTR_STRING
                 ? d->fields[i].value->str
                 : NULL;
  return NULL;
}

int cases_module_with_args(const shlo_module *m, const char *args,
                           module_with_args *out) {
  memset(out, 0, sizeof *out);
  const shlo_attr *d = shlo_module_attrs(m);
  int n = d && d->kind == SHLO_ATTR_STRUCT ? d->n : 0;
  out->m = malloc(sizeof *out->m);
  out->fields = malloc(sizeof *out->fields * ((size_t)n + 1));
  if (!out->m || !out->fields) {
    cases_module_with_args_free(out);
    return -1;
  }
  *out->m = *m;
  int k = 0;
  for (int i = 0; i < n; i++)
    if (strcmp(d->fields[i].name, CASES_TEST_ARGS_ATTR))
      out->fields[k++] = d->fields[i];
  out->value = (shlo_attr){.kind = SHLO_ATTR_STRING, .str = args};
  out->fields[k++] = (shlo_named_attr){CASES_TEST_ARGS_ATTR, &out->value};
  out->dict = (shlo_attr){.kind = SHLO_ATTR_STRUCT, .n = k,
                          .fields = out->fields};
  out->m->attrs = &out->dict;
  return 0;
}

void cases_module_with_args_free(module_with_args *w) {
  free(w->m);
  free(w->fields);
  w->m = NULL;
  w->fields = NULL;
}

static int push_file(file_list *l, const char *path) {
  if (l->n == l->cap) {
    size_t cap = l->cap ? l->cap * 2 : 64;
    char **w = realloc(l->v, cap * sizeof *w);
    if (!w) return -1;
    l->v = w;
    l->cap = cap;
  }
  l->v[l->n] = strdup(path);
  return l->v[l->n++] ? 0 : -1;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), k = strlen(suffix);
  return n >= k && !strcmp(s + n - k, suffix);
}

/* PATH itself if a file, else every *.mlir, *.mlir.bc (portable
 * artifact) and *.json (a JAX export's case, jaxcase.h) below it
 * (sorted). */
int cases_collect_files(const char *path, file_list *out) {
  struct stat st;
  if (stat(path, &st) != 0) {
    fprintf(stderr, "shlo: cannot access %s: %s\n", path, strerror(errno));
    return -1;
  }
  if (!S_ISDIR(st.st_mode)) return push_file(out, path);
  DIR *d = opendir(path);
  if (!d) {
    fprintf(stderr, "shlo: cannot open %s\n", path);
    return -1;
  }
  file_list here = {0};
  struct dirent *e;
  int rc = 0;
  while ((e = readdir(d)) && !rc) {
    if (e->d_name[0] == '.') continue;
    char sub[4096];
    snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
    struct stat s2;
    if (stat(sub, &s2) != 0) continue;
    if (S_ISDIR(s2.st_mode) || ends_with(e->d_name, ".mlir") ||
        ends_with(e->d_name, ".mlir.bc") || ends_with(e->d_name, ".json"))
      rc = push_file(&here, sub);
  }
  closedir(d);
  qsort(here.v, here.n, sizeof *here.v, cmp_str);
  for (size_t i = 0; i < here.n; i++) {
    if (!rc) rc = cases_collect_files(here.v[i], out);
    free(here.v[i]);
  }
  free(here.v);
  return rc;
}

void cases_free_files(file_list *l) {
  for (size_t i = 0; i < l->n; i++) free(l->v[i]);
  free(l->v);
  l->v = NULL;
  l->n = l->cap = 0;
}
