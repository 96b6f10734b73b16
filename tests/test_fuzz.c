/* SPDX-License-Identifier: Apache-2.0 */
/* Hostile programs through the whole engine: corpus cases with a few
 * random edits (digits, types, op names, deleted or doubled bytes) go
 * through parse, verify, compile and a bounded execution; and corpus cases
 * run under memory budgets that make allocations fail.  Whatever comes
 * out must be a status, never a crash, hang or leak (the suite runs this
 * under valgrind). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "cases.h"
#include "shlo/engine.h"

typedef struct corpus {
  char **text;
  size_t *len;
  int n, cap;
} corpus;

static int keep_case(void *ctx, const test_case *c) {
  corpus *k = ctx;
  if (k->n == k->cap) {
    k->cap = k->cap ? k->cap * 2 : 256;
    k->text = realloc(k->text, (size_t)k->cap * sizeof *k->text);
    k->len = realloc(k->len, (size_t)k->cap * sizeof *k->len);
    assert_non_null(k->text);
    assert_non_null(k->len);
  }
  /* Keep small cases: mutations of big jax blobs mostly hit hex data. */
  if (c->len > 6000) return 0;
  k->text[k->n] = malloc(c->len + 1);
  memcpy(k->text[k->n], c->text, c->len + 1);
  k->len[k->n++] = c->len;
  return 0;
}

static const char *const swaps[] = {
    "f32", "i8", "ui4", "f16", "i1", "complex<f64>", "f8E4M3FN", "0", "1",
    "-1", "7", "100000", "[0]", "[1, 0]", "dense<>", "stablehlo.add",
    "stablehlo.multiply", "stablehlo.reshape", "tensor<", ">", "x", "?",
    "%0", "%1", "@main", ")", "(", "{", "}", ",", "2147483647",
};

static char *mutate(const char *src, size_t len, size_t *out_len) {
  char *buf = malloc(len * 2 + 64);
  memcpy(buf, src, len);
  size_t n = len;
  int edits = 1 + rand() % 3;
  for (int e = 0; e < edits && n > 0; e++) {
    size_t at = (size_t)rand() % n;
    switch (rand() % 4) {
    case 0: /* a digit changes */
      for (size_t i = at; i < n; i++)
        if (buf[i] >= '0' && buf[i] <= '9') {
          buf[i] = (char)('0' + rand() % 10);
          break;
        }
      break;
    case 1: { /* a token is replaced by another */
      const char *w = swaps[rand() % (int)(sizeof swaps / sizeof *swaps)];
      size_t wl = strlen(w), cut = 1 + (size_t)rand() % 4;
      if (at + cut > n) cut = n - at;
      if (n - cut + wl > len * 2 + 60) break;
      memmove(buf + at + wl, buf + at + cut, n - at - cut);
      memcpy(buf + at, w, wl);
      n = n - cut + wl;
      break;
    }
    case 2: /* a byte disappears */
      memmove(buf + at, buf + at + 1, n - at - 1);
      n--;
      break;
    default: /* a byte doubles */
      if (n + 1 > len * 2 + 60) break;
      memmove(buf + at + 1, buf + at, n - at);
      n++;
      break;
    }
  }
  buf[n] = 0;
  *out_len = n;
  return buf;
}

/* The small cases of the interpret corpus. */
static corpus load_interpret_cases(void) {
  corpus k = {0};
  file_list files = {0};
  assert_int_equal(
      cases_collect_files(SHLO_CONFORMANCE_DIR "/interpret", &files), 0);
  for (size_t i = 0; i < files.n; i++) {
    FILE *f = fopen(files.v[i], "rb");
    assert_non_null(f);
    static char text[1 << 20];
    size_t len = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[len] = 0;
    cases_split(text, len, keep_case, &k);
  }
  cases_free_files(&files);
  return k;
}

static void corpus_free(corpus *k) {
  for (int i = 0; i < k->n; i++) free(k->text[i]);
  free(k->text);
  free(k->len);
}

static void mutated_programs_end_in_a_status(void **state) {
  (void)state;
  corpus k = load_interpret_cases();
  assert_true(k.n > 100);
  /* SHLO_FUZZ_SEED and SHLO_FUZZ_ROUNDS explore further by hand. */
  const char *seed = getenv("SHLO_FUZZ_SEED");
  const char *rounds_env = getenv("SHLO_FUZZ_ROUNDS");
  int rounds = rounds_env ? atoi(rounds_env) : 20000;
  srand(seed ? (unsigned)atoi(seed) : 1234u);
  int parsed = 0, compiled = 0, ran = 0;
  time_t t0 = time(NULL);
  for (int round = 0; round < rounds && time(NULL) - t0 < 60; round++) {
    int c = rand() % k.n;
    size_t len;
    char *text = mutate(k.text[c], k.len[c], &len);
    shlo_module *m = NULL;
    shlo_executable *e = NULL;
    shlo_diag d;
    if (shlo_parse_module(text, len, "fuzz.mlir", &m, &d) == SHLO_OK) {
      parsed++;
      shlo_status st = shlo_compile(m, NULL, &e, &d);
      assert_true(st == SHLO_OK || st == SHLO_EVERIFY ||
                  st == SHLO_EUNSUPPORTED || st == SHLO_EINPUT ||
                  st == SHLO_ENOMEM);
      if (st == SHLO_OK && shlo_executable_entry(e)->n_args == 0) {
        compiled++;
        shlo_exec_opts o = {.timeout_s = 0.2, .max_bytes = 64 << 20,
                            .print_stream = fopen("/dev/null", "w")};
        shlo_value **res;
        int nres;
        st = shlo_execute(e, &o, NULL, 0, &res, &nres, &d);
        fclose(o.print_stream);
        if (st == SHLO_OK) {
          ran++;
          for (int r = 0; r < nres; r++) shlo_value_unref(res[r]);
          free(res);
        }
      }
      shlo_executable_free(e);
      shlo_module_free(m);
    }
    free(text);
  }
  print_message("fuzz: %d parsed, %d compiled, %d ran clean\n", parsed,
                compiled, ran);
  assert_true(parsed > 0);
  corpus_free(&k);
}

/* Allocation failure injection: every interpret case runs under memory
 * budgets so small that allocations fail at different points.  Each run
 * must end in SHLO_OK or SHLO_ELIMIT (never another error, a crash or a
 * leak), and with no limit every case still passes. */
static void failed_allocations_end_cleanly(void **state) {
  (void)state;
  corpus k = load_interpret_cases();
  static const int64_t limits[] = {1, 64, 200, 1000, 5000};
  int runs = 0, refused = 0;
  for (int c = 0; c < k.n; c++) {
    shlo_module *m = NULL;
    shlo_executable *e = NULL;
    shlo_diag d;
    if (shlo_parse_module(k.text[c], k.len[c], "alloc.mlir", &m, &d) ||
        shlo_module_num_funcs(m) == 0 || shlo_compile(m, NULL, &e, &d) ||
        shlo_executable_entry(e)->n_args) {
      shlo_executable_free(e);
      shlo_module_free(m);
      continue;
    }
    for (size_t l = 0; l < sizeof limits / sizeof *limits; l++) {
      shlo_exec_opts o = {.timeout_s = 2, .max_bytes = limits[l],
                          .print_stream = fopen("/dev/null", "w")};
      shlo_value **res;
      int nres;
      shlo_status st = shlo_execute(e, &o, NULL, 0, &res, &nres, &d);
      fclose(o.print_stream);
      if (st != SHLO_OK && st != SHLO_ELIMIT)
        fail_msg("case %d under %lld bytes: %s: %s", c, (long long)limits[l],
                 shlo_status_name(st), d.message);
      runs++;
      refused += st == SHLO_ELIMIT;
      if (st == SHLO_OK) {
        for (int r = 0; r < nres; r++) shlo_value_unref(res[r]);
        free(res);
      }
    }
    shlo_executable_free(e);
    shlo_module_free(m);
  }
  print_message("allocation failures: %d runs, %d refused\n", runs, refused);
  assert_true(refused > 0);
  corpus_free(&k);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(mutated_programs_end_in_a_status),
      cmocka_unit_test(failed_allocations_end_cleanly),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
