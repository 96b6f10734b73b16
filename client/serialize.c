/* SPDX-License-Identifier: Apache-2.0 */
/* `shlo serialize`: a StableHLO text (or artifact) written as a portable
 * artifact for a chosen StableHLO version (shlo/artifact.h).  The inputs a
 * text's RUN line gives (`--args="..."`) go along as the module attribute
 * shlo.test_args (cases.h), so that `shlo test` runs the artifact as it
 * runs the text; --no-test-args leaves them out. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cases.h"
#include "cli.h"
#include "shlo/artifact.h"
#include "shlo/engine.h"
#include "shlo/verify.h"

static int usage(FILE *to, int rc) {
  fprintf(to,
          "usage: shlo serialize [--target VERSION] [--no-test-args] IN.mlir "
          "-o OUT.mlir.bc\n"
          "  VERSION: %s through %s (default: the newest)\n"
          "  The inputs of IN's RUN line (--args=\"[...]\"), if it has one, "
          "go into\n  the artifact as the module attribute "
          CASES_TEST_ARGS_ATTR ", where `shlo test`\n  finds them; "
          "--no-test-args leaves them out.\n",
          SHLO_ARTIFACT_MIN_WRITE_VERSION, SHLO_ARTIFACT_MAX_VERSION);
  return rc;
}

static int write_file(const char *path, const void *bytes, size_t len) {
  FILE *f = fopen(path, "wb");
  if (!f) {
    perror(path);
    return 1;
  }
  bool ok = fwrite(bytes, 1, len, f) == len;
  ok = fclose(f) == 0 && ok;
  if (!ok) {
    perror(path);
    remove(path);
  }
  return ok ? 0 : 1;
}

/* m (with args as its CASES_TEST_ARGS_ATTR when not NULL) to out. */
static int write_artifact(const char *in, const char *out,
                          const shlo_module *m, const char *target,
                          const char *args) {
  module_with_args with;
  if (args && cases_module_with_args(m, args, &with)) {
    fprintf(stderr, "%s: error: out of memory\n", in);
    return 1;
  }
  void *bytes = NULL;
  size_t n = 0;
  shlo_diag d;
  shlo_diag_clear(&d);
  int rc = 1;
  if (shlo_write_artifact(args ? with.m : m, target, &bytes, &n, &d))
    fprintf(stderr, "%s: error: %s\n", in, d.message);
  else
    rc = write_file(out, bytes, n);
  free(bytes);
  if (args) cases_module_with_args_free(&with);
  return rc;
}

int cli_serialize(int argc, char **argv) {
  const char *in = NULL, *out = NULL, *target = NULL;
  bool test_args = true;
  for (int i = 0; i < argc; i++) {
    if (!strcmp(argv[i], "--target") && i + 1 < argc) target = argv[++i];
    else if (!strcmp(argv[i], "--no-test-args")) test_args = false;
    else if (!strcmp(argv[i], "-o") && i + 1 < argc) out = argv[++i];
    else if (argv[i][0] != '-' && !in) in = argv[i];
    else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
      return usage(stdout, 0);
    else return usage(stderr, 2);
  }
  if (!in || !out) return usage(stderr, 2);
  size_t len;
  char *text = cli_read_file(in, &len);
  if (!text) return 1;
  shlo_module *m = NULL;
  shlo_diag d;
  shlo_diag_clear(&d);
  int rc = 1;
  if (shlo_parse_module(text, len, in, &m, &d)) {
    cli_print_diag(&d);
  } else if (shlo_verify_module_first(m, NULL, &d) == SHLO_EVERIFY) {
    /* An artifact is a promise to other tools: write only what verifies
     * (a module the verifier cannot judge, e.g. dynamic shapes, goes). */
    cli_print_diag(&d);
    shlo_module_free(m);
  } else {
    shlo_diag_clear(&d);
    char *args = test_args ? cases_run_line_args(text, len) : NULL;
    rc = write_artifact(in, out, m, target, args);
    free(args);
    shlo_module_free(m);
  }
  free(text);
  return rc;
}
