/* SPDX-License-Identifier: Apache-2.0 */
/* The artifact writer (shlo_write_artifact) against the corpus:
 *   - every case of interpret/ and jax/, serialized at the newest version
 *     and at 1.0.0 (where its ops exist there), reads back to the module
 *     its text parses to (canonical printed forms, artifact_canon.h), with
 *     the inputs of its file's RUN line, if any, as the module attribute
 *     shlo.test_args on both sides (cases.h);
 *   - an op or attribute missing at the target is refused, named;
 *   - every artifact of vhlo/, read and written again at its own version,
 *     reads back to the same module.
 * With SHLO_ARTIFACT_OUT=DIR in the environment the artifacts are also
 * written there, one per case, for `shlo test` (test_artifact_roundtrip.sh):
 * DIR/VERSION/PATH.NNN.mlir.bc for case NNN of the corpus file PATH.mlir
 * (interpret/chlo/mulhi.mlir: interpret/chlo/mulhi.NNN.mlir.bc), VERSION
 * the newest and 1.0.0. */
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "../client/cases.h"
#include "artifact_canon.h"
#include "shlo/artifact.h"
#include "shlo/engine.h"

typedef struct tally {
  const char *file;
  const char *args; /* the inputs of the file's RUN line, or NULL */
  const char *out_dir; /* SHLO_ARTIFACT_OUT, or NULL */
  int cases, same_now, same_old, absent_old, failures;
} tally;

/* Serialize m at target; compare what it reads back to with want.
 * 1: same; 0: refused as not existing at target; -1: failure. */
static int round_trip(const shlo_module *m, const char *target,
                      const char *want, const char *what, void **bytes_out,
                      size_t *len_out) {
  void *bytes = NULL;
  size_t len = 0;
  shlo_diag d;
  shlo_diag_clear(&d);
  shlo_status st = shlo_write_artifact(m, target, &bytes, &len, &d);
  if (st != SHLO_OK) {
    bool absent = target && st == SHLO_EUNSUPPORTED &&
                  strstr(d.message, "does not exist");
    if (!absent || getenv("SHLO_ARTIFACT_VERBOSE")) print_message("  %s at %s: not written: %s\n", what,
                               target ? target : "newest", d.message);
    return absent ? 0 : -1;
  }
  char err[SHLO_DIAG_MAX + 256];
  char *got = canonical(bytes, len, what, err, sizeof err);
  int rc = 1;
  if (!got) {
    print_message("  %s at %s: does not read back: %s\n", what,
                  target ? target : "newest", err);
    rc = -1;
  } else if (strcmp(got, want)) {
    const char *a = want, *b = got;
    while (*a && *a == *b) a++, b++;
    while (a > want && a[-1] != '\n') a--, b--;
    print_message("  %s at %s: differs:\n    text:     %.700s\n"
                  "    artifact: %.700s\n", what, target ? target : "newest",
                  a, b);
    rc = -1;
  }
  free(got);
  if (bytes_out && rc == 1) {
    *bytes_out = bytes;
    *len_out = len;
  } else {
    free(bytes);
  }
  return rc;
}

/* Make every folder of path up to its last '/'. */
static void make_parents(char *path) {
  for (char *p = strchr(path + 1, '/'); p; p = strchr(p + 1, '/')) {
    *p = 0;
    assert_true(mkdir(path, 0777) == 0 || errno == EEXIST);
    *p = '/';
  }
}

/* OUT/VERSION/CORPUS/SUB/NAME.NNN.mlir.bc for case NNN of the corpus file
 * CORPUS/SUB/NAME.mlir. */
static void save(const tally *t, const char *version, int index,
                 const void *bytes, size_t len) {
  const char *rel = t->file + strlen(SHLO_CONFORMANCE_DIR "/");
  char path[4096];
  snprintf(path, sizeof path, "%s/%s/%.*s.%03d.mlir.bc", t->out_dir, version,
           (int)(strlen(rel) - 5), rel, index);
  make_parents(path);
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(bytes, 1, len, f), len);
  assert_int_equal(fclose(f), 0);
}

/* m, or a view of m whose attributes hold the file's inputs (in *with,
 * which cases_module_with_args_free frees either way). */
static shlo_module *carrying(const tally *t, shlo_module *m,
                             module_with_args *with) {
  memset(with, 0, sizeof *with);
  if (!t->args) return m;
  assert_int_equal(cases_module_with_args(m, t->args, with), 0);
  return with->m;
}

/* The case's text parsed, with its file's inputs as the module attribute
 * when it has some: what its artifact must read back to (canonical). */
static char *want_of(const tally *t, const test_case *c, const char *what) {
  shlo_module *m = NULL;
  shlo_diag d;
  if (shlo_parse_module(c->text, c->len, what, &m, &d)) return NULL;
  module_with_args with;
  char *want = canonical_module(carrying(t, m, &with));
  assert_non_null(want);
  cases_module_with_args_free(&with);
  shlo_module_free(m);
  return want;
}

/* Serialize m (plus the file's inputs) at target and compare; keep the
 * artifact under SHLO_ARTIFACT_OUT when it reads back the same. */
static int one_target(tally *t, const test_case *c, shlo_module *m,
                      const char *target, const char *want,
                      const char *what) {
  module_with_args with;
  void *bytes = NULL;
  size_t len = 0;
  int rc = round_trip(carrying(t, m, &with), target, want, what,
                      t->out_dir ? &bytes : NULL, &len);
  if (rc == 1 && t->out_dir)
    save(t, target ? target : SHLO_ARTIFACT_MAX_VERSION, c->index, bytes,
         len);
  free(bytes);
  cases_module_with_args_free(&with);
  return rc;
}

static int one_case(void *ctx, const test_case *c) {
  tally *t = ctx;
  char what[1200];
  snprintf(what, sizeof what, "%s case %d", t->file, c->index);
  char *want = want_of(t, c, what);
  if (!want) return 0; /* not a module: shlo test reports it as such */
  shlo_module *m = NULL;
  shlo_diag d;
  assert_int_equal(shlo_parse_module(c->text, c->len, what, &m, &d), SHLO_OK);
  t->cases++;
  if (one_target(t, c, m, NULL, want, what) == 1) t->same_now++;
  else t->failures++;
  int old = one_target(t, c, m, "1.0.0", want, what);
  if (old == 1) t->same_old++;
  else if (old == 0) t->absent_old++;
  else t->failures++;
  shlo_module_free(m);
  free(want);
  return 0;
}

static void test_corpus_round_trips(void **state) {
  (void)state;
  tally t = {0};
  t.out_dir = getenv("SHLO_ARTIFACT_OUT");
  const char *corpora[] = {"interpret", "jax"};
  int with_args = 0;
  for (int k = 0; k < 2; k++) {
    file_list files = {0};
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/%s", SHLO_CONFORMANCE_DIR, corpora[k]);
    assert_int_equal(cases_collect_files(dir, &files), 0);
    for (size_t i = 0; i < files.n; i++) {
      size_t len;
      shlo_diag d;
      char *text = shlo_read_file(files.v[i], &len, &d);
      assert_non_null(text);
      t.file = files.v[i];
      char *args = cases_run_line_args(text, len);
      t.args = args;
      with_args += args != NULL;
      assert_int_equal(cases_split(text, len, one_case, &t), 0);
      free(args);
      free(text);
    }
    cases_free_files(&files);
  }
  print_message("  %d cases: %d read back the same at %s; at 1.0.0 %d the "
                "same, %d use ops 1.0.0 lacks; %d failures; %d file(s) give "
                "inputs in a RUN line\n", t.cases, t.same_now,
                SHLO_ARTIFACT_MAX_VERSION, t.same_old, t.absent_old,
                t.failures, with_args);
  assert_true(with_args >= 1); /* interpret/api_input_arguments.mlir */
  assert_true(t.cases > 600);
  assert_int_equal(t.failures, 0);
  assert_int_equal(t.same_now, t.cases);
  assert_int_equal(t.same_old + t.absent_old, t.cases);
}

static shlo_module *parse(const char *text) {
  shlo_module *m = NULL;
  shlo_diag d;
  assert_int_equal(shlo_parse_module(text, strlen(text), "t", &m, &d),
                   SHLO_OK);
  return m;
}

static void expect_refused(const char *text, const char *target,
                           const char *needle) {
  shlo_module *m = parse(text);
  void *bytes = NULL;
  size_t len = 0;
  shlo_diag d;
  assert_int_equal(shlo_write_artifact(m, target, &bytes, &len, &d),
                   SHLO_EUNSUPPORTED);
  assert_null(bytes);
  print_message("  refused: %s\n", d.message);
  assert_non_null(strstr(d.message, needle));
  shlo_module_free(m);
}

static void test_refusals_name_op_and_version(void **state) {
  (void)state;
  expect_refused("func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
                 "  %0 = stablehlo.tan %a : tensor<2xf32>\n"
                 "  func.return %0 : tensor<2xf32>\n}\n",
                 "1.0.0", "stablehlo.tan does not exist at StableHLO 1.0.0 "
                 "(vhlo.tan_v1 is from 1.4.0)");
  expect_refused(
      "func.func @main(%a: tensor<2x3x4xf32>, %i: tensor<2x1xi64>) -> "
      "tensor<2x4xf32> {\n"
      "  %0 = \"stablehlo.gather\"(%a, %i) {dimension_numbers = "
      "#stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [1], "
      "operand_batching_dims = [0], start_indices_batching_dims = [0], "
      "start_index_map = [1], index_vector_dim = 1>, slice_sizes = "
      "array<i64: 1, 1, 4>} : (tensor<2x3x4xf32>, tensor<2x1xi64>) -> "
      "tensor<2x4xf32>\n"
      "  func.return %0 : tensor<2x4xf32>\n}\n",
      "1.0.0", "attribute operand_batching_dims does not exist in "
               "vhlo.gather_v1");
  /* An op whose VHLO form has no attributes (found by fuzzing: the
   * attribute used to be dropped, so the module read back differed). */
  expect_refused("func.func @main(%a: tensor<2xi1>) -> tensor<2xi1> {\n"
                 "  %0 = \"stablehlo.not\"(%a) {scatter_dimension = 0 : i64} "
                 ": (tensor<2xi1>) -> tensor<2xi1>\n"
                 "  func.return %0 : tensor<2xi1>\n}\n",
                 NULL, "attribute scatter_dimension does not exist in "
                       "vhlo.not_v1");
  expect_refused("func.func @main() {\n  func.return\n}\n", "0.9.0",
                 "shlo writes 1.0.0 through");
  expect_refused("func.func @main() {\n  func.return\n}\n", "1.99.0",
                 "shlo writes 1.0.0 through");
}

/* A RUN line's inputs go into the artifact as shlo.test_args and come
 * back out of it; --args elsewhere than in a RUN line is no input. */
static void test_inputs_travel_as_attribute(void **state) {
  (void)state;
  const char *text =
      "// a comment that says --args=\"[nothing]\"\n"
      "// RUN: stablehlo-translate %s --interpret "
      "--args=\"[dense<1> : tensor<2xi32>]\" | FileCheck %s\n"
      "// RUN: not stablehlo-translate --args=\"not_array\"\n"
      "func.func @main(%a: tensor<2xi32>) -> tensor<2xi32> {\n"
      "  func.return %a : tensor<2xi32>\n}\n";
  char *args = cases_run_line_args(text, strlen(text));
  assert_non_null(args);
  assert_string_equal(args, "[dense<1> : tensor<2xi32>]");
  shlo_module *m = parse(text);
  assert_null(cases_module_args(m));
  module_with_args with;
  assert_int_equal(cases_module_with_args(m, args, &with), 0);
  assert_string_equal(cases_module_args(with.m), args);
  void *bytes = NULL;
  size_t len = 0;
  shlo_diag d;
  assert_int_equal(shlo_write_artifact(with.m, "1.0.0", &bytes, &len, &d),
                   SHLO_OK);
  cases_module_with_args_free(&with);
  assert_null(cases_run_line_args(bytes, len)); /* bytes are no lines */
  shlo_module *back = NULL;
  assert_int_equal(shlo_read_artifact(bytes, len, "t.bc", &back, NULL, &d),
                   SHLO_OK);
  assert_non_null(cases_module_args(back));
  assert_string_equal(cases_module_args(back), args);
  shlo_module_free(back);
  free(bytes);
  shlo_module_free(m);
  free(args);
  const char *none = "// RUN: stablehlo-translate --interpret %s\n";
  assert_null(cases_run_line_args(none, strlen(none)));
}

static bool ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), k = strlen(suffix);
  return n >= k && !strcmp(s + n - k, suffix);
}

static void test_vhlo_artifacts_rewrite(void **state) {
  (void)state;
  const char *dir = SHLO_CONFORMANCE_DIR "/vhlo";
  DIR *dp = opendir(dir);
  assert_non_null(dp);
  struct dirent *e;
  int total = 0, same = 0, below = 0;
  while ((e = readdir(dp))) {
    if (!ends_with(e->d_name, ".mlir.bc") || !strncmp(e->d_name, "invalid_", 8))
      continue;
    char path[1024], err[SHLO_DIAG_MAX + 256];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    size_t len;
    shlo_diag d;
    char *bytes = shlo_read_file(path, &len, &d);
    assert_non_null(bytes);
    shlo_module *m = NULL;
    shlo_artifact_info info;
    assert_int_equal(shlo_read_artifact(bytes, len, path, &m, &info, &d),
                     SHLO_OK);
    char *want = canonical(bytes, len, path, err, sizeof err);
    assert_non_null(want);
    total++;
    /* at the artifact's own version when shlo writes it, else the
     * oldest it writes */
    const char *target = info.version;
    bool old = strcmp(info.version, SHLO_ARTIFACT_MIN_WRITE_VERSION) < 0 &&
               info.version[0] == '0';
    if (old) {
      target = SHLO_ARTIFACT_MIN_WRITE_VERSION;
      below++;
    }
    if (round_trip(m, target, want, path, NULL, NULL) == 1) same++;
    free(want);
    shlo_module_free(m);
    free(bytes);
  }
  closedir(dp);
  print_message("  %d of %d vhlo/ artifacts re-serialized read back the same "
                "(%d from before 1.0.0 written at 1.0.0)\n", same, total,
                below);
  assert_int_equal(total, 27);
  assert_int_equal(same, total);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_refusals_name_op_and_version),
      cmocka_unit_test(test_inputs_travel_as_attribute),
      cmocka_unit_test(test_vhlo_artifacts_rewrite),
      cmocka_unit_test(test_corpus_round_trips),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
