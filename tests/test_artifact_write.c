/* The artifact writer (shlo_write_artifact) against the corpus:
 *   - every case of interpret/ and jax/, serialized at the newest version
 *     and at 1.0.0 (where its ops exist there), reads back to the module
 *     its text parses to (canonical printed forms, artifact_canon.h);
 *   - an op or attribute missing at the target is refused, named;
 *   - every artifact of vhlo/, read and written again at its own version,
 *     reads back to the same module.
 * With SHLO_ARTIFACT_OUT=DIR in the environment the newest-version
 * artifacts are also written there, one per case, for `shlo test`
 * (test_artifact_roundtrip.sh). */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../client/cases.h"
#include "artifact_canon.h"
#include "shlo/artifact.h"
#include "shlo/engine.h"

typedef struct tally {
  const char *file;
  const char *out_dir;
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

static void save(const tally *t, int index, const void *bytes, size_t len) {
  const char *base = strrchr(t->file, '/');
  base = base ? base + 1 : t->file;
  char path[2048];
  snprintf(path, sizeof path, "%s/%.*s.%03d.mlir.bc", t->out_dir,
           (int)(strlen(base) - 5), base, index);
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(bytes, 1, len, f), len);
  assert_int_equal(fclose(f), 0);
}

static int one_case(void *ctx, const test_case *c) {
  tally *t = ctx;
  char what[1200];
  snprintf(what, sizeof what, "%s case %d", t->file, c->index);
  char err[SHLO_DIAG_MAX + 256];
  char *want = canonical(c->text, c->len, what, err, sizeof err);
  if (!want) return 0; /* not a module: shlo test reports it as such */
  shlo_module *m = NULL;
  shlo_diag d;
  assert_int_equal(shlo_parse_module(c->text, c->len, what, &m, &d), SHLO_OK);
  t->cases++;
  void *bytes = NULL;
  size_t len = 0;
  int now = round_trip(m, NULL, want, what, t->out_dir ? &bytes : NULL, &len);
  if (now == 1) {
    t->same_now++;
    if (t->out_dir) save(t, c->index, bytes, len);
  } else {
    t->failures++;
  }
  free(bytes);
  int old = round_trip(m, "1.0.0", want, what, NULL, NULL);
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
  const char *dirs[] = {SHLO_CONFORMANCE_DIR "/interpret",
                        SHLO_CONFORMANCE_DIR "/jax"};
  for (int k = 0; k < 2; k++) {
    file_list files = {0};
    assert_int_equal(cases_collect_files(dirs[k], &files), 0);
    for (size_t i = 0; i < files.n; i++) {
      size_t len;
      shlo_diag d;
      char *text = shlo_read_file(files.v[i], &len, &d);
      assert_non_null(text);
      t.file = files.v[i];
      assert_int_equal(cases_split(text, len, one_case, &t), 0);
      free(text);
    }
    cases_free_files(&files);
  }
  print_message("  %d cases: %d read back the same at %s; at 1.0.0 %d the "
                "same, %d use ops 1.0.0 lacks; %d failures\n", t.cases,
                t.same_now, SHLO_ARTIFACT_MAX_VERSION, t.same_old,
                t.absent_old, t.failures);
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
  expect_refused("func.func @main() {\n  func.return\n}\n", "0.9.0",
                 "shlo writes 1.0.0 through");
  expect_refused("func.func @main() {\n  func.return\n}\n", "1.99.0",
                 "shlo writes 1.0.0 through");
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
      cmocka_unit_test(test_vhlo_artifacts_rewrite),
      cmocka_unit_test(test_corpus_round_trips),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
