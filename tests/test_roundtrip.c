/* SPDX-License-Identifier: Apache-2.0 */
/* The parser and printer over the whole conformance corpus:
 *   - every case of interpret/ and jax/ parses;
 *   - every case of verify/ without an expected-error annotation parses;
 *   - for every case that parses, print -> parse -> print gives the same
 *     text (the printer writes what the parser reads back unchanged). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cases.h"
#include "shlo/ir.h"

typedef struct corpus_stats {
  const char *file;
  bool must_parse_all; /* interpret/, jax/ */
  int parsed, rejected, failures;
} corpus_stats;

static char *read_all(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc((size_t)n + 1);
  if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  if (buf) {
    buf[n] = 0;
    *len = (size_t)n;
  }
  return buf;
}

static int check_case(void *ctx, const test_case *c) {
  corpus_stats *st = ctx;
  shlo_module *m = NULL;
  shlo_diag d;
  shlo_diag_clear(&d);
  if (shlo_parse_module(c->text, c->len, st->file, &m, &d)) {
    bool expected = strstr(c->text, "expected-error") != NULL;
    if (st->must_parse_all || !expected) {
      char msg[SHLO_DIAG_MAX + 256];
      shlo_diag_format(&d, msg, sizeof msg);
      print_message("parse failure in case %d: %s\n", c->index, msg);
      st->failures++;
    } else {
      st->rejected++;
    }
    return 0;
  }
  st->parsed++;
  char *once = shlo_module_print(m);
  shlo_module_free(m);
  if (!once) {
    st->failures++;
    return 0;
  }
  shlo_module *m2 = NULL;
  if (shlo_parse_module(once, strlen(once), "<printed>", &m2, &d)) {
    char msg[SHLO_DIAG_MAX + 256];
    shlo_diag_format(&d, msg, sizeof msg);
    print_message("%s case %d: printed form does not parse: %s\n", st->file,
                  c->index, msg);
    st->failures++;
    free(once);
    return 0;
  }
  char *twice = shlo_module_print(m2);
  shlo_module_free(m2);
  if (!twice || strcmp(once, twice) != 0) {
    print_message("%s case %d: print(parse(print(x))) differs\n", st->file,
                  c->index);
    st->failures++;
  }
  free(once);
  free(twice);
  return 0;
}

static void run_folder(const char *sub, bool must_parse_all, int *parsed_out) {
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/%s", SHLO_CONFORMANCE_DIR, sub);
  file_list files = {0};
  assert_int_equal(cases_collect_files(dir, &files), 0);
  assert_true(files.n > 0);
  int failures = 0, parsed = 0;
  for (size_t i = 0; i < files.n; i++) {
    size_t len = 0;
    char *text = read_all(files.v[i], &len);
    assert_non_null(text);
    corpus_stats st = {files.v[i], must_parse_all, 0, 0, 0};
    assert_int_equal(cases_split(text, len, check_case, &st), 0);
    failures += st.failures;
    parsed += st.parsed;
    free(text);
  }
  cases_free_files(&files);
  print_message("%s: %d cases parsed and round-tripped, %d failures\n", sub,
                parsed, failures);
  assert_int_equal(failures, 0);
  *parsed_out = parsed;
}

static void interpret_parses_and_round_trips(void **state) {
  (void)state;
  int parsed;
  run_folder("interpret", true, &parsed);
  assert_true(parsed >= 500);
}

static void jax_parses_and_round_trips(void **state) {
  (void)state;
  int parsed;
  run_folder("jax", true, &parsed);
  assert_int_equal(parsed, 142);
}

static void verify_valid_cases_parse(void **state) {
  (void)state;
  int parsed;
  run_folder("verify", false, &parsed);
  assert_true(parsed > 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(interpret_parses_and_round_trips),
      cmocka_unit_test(jax_parses_and_round_trips),
      cmocka_unit_test(verify_valid_cases_parse),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
