/* SPDX-License-Identifier: Apache-2.0 */
/* shlo verify: parse and verify the cases of .mlir files.
 *
 *   shlo verify PATH...                      a case passes when it verifies
 *                                            clean; every diagnostic printed
 *   shlo verify --expect-diagnostics PATH... MLIR's -verify-diagnostics: a
 *       case with `// expected-error@+N {{...}}` (`@-N`, or none for the same
 *       line) passes when an error is reported on each annotated line and on
 *       no other line (message text is not compared); a case without
 *       annotations passes when it verifies clean.
 *
 * A parse error counts as an error on its line.  A case using dynamic or
 * bounded shapes, which the verifier does not support, is a SKIP naming the
 * reason.  Closing line: `P passed, F failed, S skipped`. */
#define _GNU_SOURCE /* memmem */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cases.h"
#include "cli.h"
#include "shlo/ir.h"
#include "shlo/verify.h"

typedef struct vrun {
  const char *file;
  bool expect;
  bool quiet;
  int pass, fail, skip;
} vrun;

/* Lines that an `expected-error` annotation in text points at. */
static int expected_lines(const char *text, size_t len, int **out) {
  int n = 0, cap = 0;
  int *v = NULL;
  int line = 1;
  const char *p = text, *end = text + len;
  while (p < end) {
    const char *eol = memchr(p, '\n', (size_t)(end - p));
    if (!eol) eol = end;
    const char *a = p;
    while ((a = memmem(a, (size_t)(eol - a), "expected-error", 14))) {
      a += 14;
      int target = line;
      if (a + 3 <= eol && !strncmp(a, "-re", 3)) a += 3;
      while (a < eol && *a == ' ') a++;
      if (a < eol && *a == '@') {
        char *e;
        long off = strtol(a + 1, &e, 10);
        if (e > a + 1) target = line + (int)off;
        else if (!strncmp(a + 1, "above", 5)) target = line - 1;
        else if (!strncmp(a + 1, "below", 5)) target = line + 1;
      }
      if (n == cap) {
        cap = cap ? cap * 2 : 4;
        int *w = realloc(v, (size_t)cap * sizeof *w);
        if (!w) break;
        v = w;
      }
      v[n++] = target;
    }
    line++;
    p = eol + 1;
  }
  *out = v;
  return n;
}

static void print_diag(const shlo_diag *d) {
  char buf[SHLO_DIAG_MAX + 256];
  shlo_diag_format(d, buf, sizeof buf);
  if (d->code == SHLO_EUNSUPPORTED) {
    /* "error:" would mislead for what is only not supported. */
    char *e = strstr(buf, ": error: ");
    if (e) memcpy(e, ": unsupp: ", 9);
  }
  printf("  %s\n", buf);
}

static int verify_case(void *ctx, const test_case *c) {
  vrun *vr = ctx;
  shlo_diag_list dl;
  shlo_diag_list_init(&dl);
  shlo_module *m = NULL;
  shlo_diag pd;
  shlo_diag_clear(&pd);
  shlo_status st = shlo_parse_module(c->text, c->len, vr->file, &m, &pd);
  if (st) {
    st = SHLO_EVERIFY; /* a parse error counts as an error on its line */
    if (!dl.cap) {
      dl.v = malloc(sizeof *dl.v);
      if (dl.v) {
        dl.v[0] = pd;
        dl.n = dl.cap = 1;
      }
    }
  } else {
    st = shlo_verify_module(m, NULL, &dl);
  }
  int *want = NULL;
  int n_want = vr->expect ? expected_lines(c->text, c->len, &want) : 0;
  char why[512] = "";
  char kind = 'P';
  bool has_unsupported = false;
  const char *unsupp_msg = NULL;
  for (int i = 0; i < dl.n; i++)
    if (dl.v[i].code == SHLO_EUNSUPPORTED) {
      has_unsupported = true;
      if (!unsupp_msg) unsupp_msg = dl.v[i].message;
    }
  if (has_unsupported) {
    kind = 'S';
    snprintf(why, sizeof why, "%s", unsupp_msg);
  } else if (st == SHLO_ENOMEM) {
    kind = 'F';
    snprintf(why, sizeof why, "out of memory");
  } else if (!n_want) {
    if (st) {
      kind = 'F';
      snprintf(why, sizeof why, "%d error(s)", dl.n);
    }
  } else {
    /* Every annotated line has an error; no error is on another line. */
    for (int i = 0; i < n_want && kind == 'P'; i++) {
      bool seen = false;
      for (int j = 0; j < dl.n && !seen; j++)
        seen = dl.v[j].code != SHLO_EUNSUPPORTED && dl.v[j].line == want[i];
      if (!seen) {
        kind = 'F';
        snprintf(why, sizeof why, "expected an error on line %d", want[i]);
      }
    }
    for (int j = 0; j < dl.n && kind == 'P'; j++) {
      bool wanted = false;
      for (int i = 0; i < n_want && !wanted; i++)
        wanted = dl.v[j].line == want[i];
      if (!wanted) {
        kind = 'F';
        snprintf(why, sizeof why, "unexpected error on line %d",
                 dl.v[j].line);
      }
    }
  }
  if (kind == 'P') {
    vr->pass++;
    if (!vr->quiet) printf("PASS %s:%d\n", vr->file, c->index);
  } else {
    if (kind == 'S') vr->skip++;
    else vr->fail++;
    printf("%s %s:%d (line %d): %s\n", kind == 'S' ? "SKIP" : "FAIL",
           vr->file, c->index, c->first_line, why);
  }
  if (!vr->quiet || kind == 'F')
    for (int i = 0; i < dl.n; i++) print_diag(&dl.v[i]);
  fflush(stdout);
  free(want);
  shlo_diag_list_free(&dl);
  shlo_module_free(m);
  return 0;
}

int cli_verify(int argc, char **argv) {
  vrun vr = {0};
  file_list files = {0};
  int rc = 0;
  for (int i = 0; i < argc && !rc; i++) {
    if (!strcmp(argv[i], "--expect-diagnostics")) {
      vr.expect = true;
    } else if (!strcmp(argv[i], "--quiet") || !strcmp(argv[i], "-q")) {
      vr.quiet = true;
    } else if (argv[i][0] == '-') {
      fprintf(stderr, "shlo verify: unknown option '%s'\n", argv[i]);
      rc = 2;
    } else if (cases_collect_files(argv[i], &files)) {
      rc = 2;
    }
  }
  if (!rc && files.n == 0) {
    fprintf(stderr,
            "usage: shlo verify [--expect-diagnostics] [--quiet] PATH...\n");
    rc = 2;
  }
  for (size_t i = 0; i < files.n && !rc; i++) {
    size_t len;
    char *text = cli_read_file(files.v[i], &len);
    if (!text) {
      printf("FAIL %s:1: cannot read the file\n", files.v[i]);
      vr.fail++;
      continue;
    }
    vr.file = files.v[i];
    if (cases_split(text, len, verify_case, &vr) < 0) {
      printf("FAIL %s:1: out of memory\n", files.v[i]);
      vr.fail++;
    }
    free(text);
  }
  cases_free_files(&files);
  if (rc) return rc;
  printf("%d passed, %d failed, %d skipped\n", vr.pass, vr.fail, vr.skip);
  return vr.fail ? 1 : 0;
}
