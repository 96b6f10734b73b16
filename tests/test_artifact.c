/* SPDX-License-Identifier: Apache-2.0 */
/* Portable artifacts (shlo/artifact.h) against the corpus's vhlo/ folder:
 *   - every X.mlir.bc reads to the same module as parsing X.mlir, compared
 *     by the printed generic form once both are canonical (attribute
 *     dictionaries and #stablehlo.x<...> fields sorted by name, as MLIR
 *     holds them: their order in a text carries no meaning);
 *   - invalid_vhlo_future.mlir.bc is refused naming the op and versions;
 *   - vhlo_emit_version_api.1_1_0.mlir.bc reports StableHLO 1.1.0;
 *   - truncated artifacts are refused with a byte offset and a section. */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "shlo/artifact.h"
#include "shlo/engine.h"
#include "artifact_canon.h"

#define VHLO_DIR SHLO_CONFORMANCE_DIR "/vhlo"

static char *read_all(const char *path, size_t *len) {
  shlo_diag d;
  return shlo_read_file(path, len, &d);
}

/* First differing line of two texts, for the failure message. */
static void first_difference(const char *a, const char *b) {
  int line = 1;
  const char *la = a, *lb = b;
  while (*a && *a == *b) {
    if (*a == '\n') {
      line++;
      la = a + 1;
      lb = b + 1;
    }
    a++;
    b++;
  }
  const char *ea = strchr(la, '\n'), *eb = strchr(lb, '\n');
  print_message("    line %d differs:\n      text:     %.*s\n"
                "      artifact: %.*s\n",
                line, (int)(ea ? ea - la : 300), la, (int)(eb ? eb - lb : 300),
                lb);
}

static bool ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), k = strlen(suffix);
  return n >= k && !strcmp(s + n - k, suffix);
}

static void test_artifacts_match_text(void **state) {
  (void)state;
  DIR *dir = opendir(VHLO_DIR);
  assert_non_null(dir);
  int pairs = 0, matched = 0;
  struct dirent *e;
  while ((e = readdir(dir))) {
    if (!ends_with(e->d_name, ".mlir.bc") ||
        !strncmp(e->d_name, "invalid_", 8))
      continue;
    char bc[1024], txt[1024], err[SHLO_DIAG_MAX + 256];
    snprintf(bc, sizeof bc, "%s/%s", VHLO_DIR, e->d_name);
    snprintf(txt, sizeof txt, "%.*s", (int)strlen(bc) - 3, bc);
    size_t nb, nt;
    char *b = read_all(bc, &nb), *t = read_all(txt, &nt);
    assert_non_null(b);
    assert_non_null(t);
    pairs++;
    char *pt = canonical(t, nt, txt, err, sizeof err);
    if (!pt) print_message("  %s: text does not parse: %s\n", e->d_name, err);
    char *pb = canonical(b, nb, bc, err, sizeof err);
    if (!pb) print_message("  %s: artifact does not read: %s\n", e->d_name, err);
    if (pt && pb && !strcmp(pt, pb)) {
      matched++;
    } else if (pt && pb) {
      print_message("  %s: artifact and text differ\n", e->d_name);
      first_difference(pt, pb);
    }
    free(pt);
    free(pb);
    free(b);
    free(t);
  }
  closedir(dir);
  print_message("  %d of %d artifacts read to the module of their text\n",
                matched, pairs);
  assert_int_equal(pairs, 27);
  assert_int_equal(matched, pairs);
}

static void test_future_op_refused(void **state) {
  (void)state;
  size_t n;
  char *b = read_all(VHLO_DIR "/invalid_vhlo_future.mlir.bc", &n);
  assert_non_null(b);
  shlo_module *m = NULL;
  shlo_diag d;
  shlo_diag_clear(&d);
  assert_int_not_equal(shlo_read_artifact(b, n, "future", &m, NULL, &d),
                       SHLO_OK);
  assert_null(m);
  print_message("  %s\n", d.message);
  assert_non_null(strstr(d.message, "vhlo.constant_v99"));
  assert_non_null(strstr(d.message, "needs StableHLO 2.0.0"));
  assert_non_null(strstr(d.message, "reads up to " SHLO_ARTIFACT_MAX_VERSION));
  free(b);
}

static void test_version_reported(void **state) {
  (void)state;
  size_t n;
  char *b = read_all(VHLO_DIR "/vhlo_emit_version_api.1_1_0.mlir.bc", &n);
  assert_non_null(b);
  shlo_module *m = NULL;
  shlo_artifact_info info;
  shlo_diag d;
  assert_int_equal(shlo_read_artifact(b, n, "v", &m, &info, &d), SHLO_OK);
  assert_string_equal(info.version, "1.1.0");
  assert_string_equal(info.producer, "StableHLO_v1.1.0");
  assert_string_equal(shlo_module_stablehlo_version(m), "1.1.0");
  assert_string_equal(shlo_module_producer(m), "StableHLO_v1.1.0");
  shlo_module_free(m);
  free(b);
}

/* Every prefix of an artifact is refused (never read as a smaller module),
 * with the byte offset and the section in the message. */
static void test_truncation_refused(void **state) {
  (void)state;
  size_t n;
  char *b = read_all(VHLO_DIR "/stablehlo_legalize_to_vhlo.1_1_0.mlir.bc", &n);
  assert_non_null(b);
  for (size_t k = 4; k < n; k += (k < 300 ? 1 : 97)) {
    shlo_module *m = NULL;
    shlo_diag d;
    shlo_diag_clear(&d);
    shlo_status st = shlo_read_artifact(b, k, "cut", &m, NULL, &d);
    if (st == SHLO_OK) fail_msg("a %zu-byte prefix read as a module", k);
    /* "byte N (attribute/type section): ..." or "(file header)" */
    if (!strstr(d.message, "byte ") ||
        (!strstr(d.message, "section)") && !strstr(d.message, "header)")))
      fail_msg("prefix %zu: message without offset and section: %s", k,
               d.message);
  }
  free(b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_artifacts_match_text),
      cmocka_unit_test(test_future_op_refused),
      cmocka_unit_test(test_version_reported),
      cmocka_unit_test(test_truncation_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
