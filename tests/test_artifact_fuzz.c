/* SPDX-License-Identifier: Apache-2.0 */
/* The artifact reader against hostile bytes: the corpus's vhlo/ artifacts
 * with seeded mutations (bit flips, truncations, inserted and overwritten
 * bytes, huge varints, lengths and counts pushed to their limits).  Every
 * input must come back as a module or a refusal with a message, within the
 * test's time limit; the suite also runs this under AddressSanitizer
 * (test_artifact_fuzz_asan), where a stray read or a leak fails it.
 * Whatever reads is also written again by the artifact writer and must
 * read back the same (artifact_fuzz.h).
 * Deterministic: the same seed gives the same inputs (SHLO_FUZZ_SEED in
 * the environment picks another, for exploring by hand). */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "artifact_fuzz.h"

#define VHLO_DIR SHLO_CONFORMANCE_DIR "/vhlo"
#define ITERATIONS 3000
#define SEED 0x5eed12u

typedef struct seeds {
  uint8_t *data[64];
  size_t len[64];
  int n;
} seeds;

static uint32_t rng_state = SEED;

static uint32_t next_rand(void) { /* xorshift32 */
  uint32_t x = rng_state;
  x ^= x << 13;
  x ^= x >> 17;
  x ^= x << 5;
  return rng_state = x;
}

static void load_seeds(seeds *s) {
  DIR *dir = opendir(VHLO_DIR);
  assert_non_null(dir);
  struct dirent *e;
  while ((e = readdir(dir)) && s->n < 64) {
    size_t n = strlen(e->d_name);
    if (n < 8 || strcmp(e->d_name + n - 8, ".mlir.bc")) continue;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", VHLO_DIR, e->d_name);
    shlo_diag d;
    size_t len;
    char *b = shlo_read_file(path, &len, &d);
    assert_non_null(b);
    s->data[s->n] = (uint8_t *)b;
    s->len[s->n++] = len;
  }
  closedir(dir);
  assert_true(s->n >= 20);
}

/* A prefix varint of the largest value, or of a value just past a limit. */
static size_t huge_varint(uint8_t *out) {
  out[0] = 0;
  uint64_t v = next_rand() % 2 ? UINT64_MAX : ((uint64_t)1 << 31) + 1;
  memcpy(out + 1, &v, 8);
  return 9;
}

/* One to four edits of src into buf (capacity cap); returns the length. */
static size_t mutate(const uint8_t *src, size_t len, uint8_t *buf,
                     size_t cap) {
  size_t n = len < cap ? len : cap;
  memcpy(buf, src, n);
  int edits = 1 + (int)(next_rand() % 4);
  for (int e = 0; e < edits && n > 8; e++) {
    size_t at = 4 + next_rand() % (n - 4); /* keep the magic mostly */
    switch (next_rand() % 6) {
    case 0: /* a bit flips */
      buf[at] ^= (uint8_t)(1u << (next_rand() % 8));
      break;
    case 1: /* the file ends early */
      n = at;
      break;
    case 2: { /* bytes appear */
      size_t k = 1 + next_rand() % 8;
      if (n + k > cap) break;
      memmove(buf + at + k, buf + at, n - at);
      for (size_t i = 0; i < k; i++) buf[at + i] = (uint8_t)next_rand();
      n += k;
      break;
    }
    case 3: { /* a huge varint replaces a byte */
      uint8_t v[9];
      size_t k = huge_varint(v);
      if (n + k > cap) break;
      memmove(buf + at + k, buf + at + 1, n - at - 1);
      memcpy(buf + at, v, k);
      n += k - 1;
      break;
    }
    case 4: /* a byte takes an edge value */
      buf[at] = (uint8_t[]){0x00, 0x01, 0x7f, 0x80, 0xfe, 0xff}[next_rand() % 6];
      break;
    default: /* bytes disappear */
      if (at + 4 < n) {
        memmove(buf + at, buf + at + 4, n - at - 4);
        n -= 4;
      }
      break;
    }
  }
  return n;
}

static void test_mutated_artifacts(void **state) {
  (void)state;
  seeds s = {0};
  const char *env = getenv("SHLO_FUZZ_SEED");
  if (env && strtoul(env, NULL, 0)) rng_state = (uint32_t)strtoul(env, NULL, 0);
  load_seeds(&s);
  size_t cap = 0;
  for (int i = 0; i < s.n; i++)
    if (s.len[i] + 256 > cap) cap = s.len[i] + 256;
  uint8_t *buf = malloc(cap);
  assert_non_null(buf);
  int read_ok = 0, refused = 0;
  for (int it = 0; it < ITERATIONS; it++) {
    int k = (int)(next_rand() % (uint32_t)s.n);
    size_t n = mutate(s.data[k], s.len[k], buf, cap);
    int r = artifact_fuzz_one(buf, n);
    if (r == -1) fail_msg("iteration %d: refused without a message", it);
    if (r < -1)
      fail_msg("iteration %d: the writer %s", it,
               r == -2 ? "wrote what reads back different"
                       : "refused without a message");
    if (r) read_ok++;
    else refused++;
  }
  print_message("  %d mutated artifacts: %d read, %d refused\n", ITERATIONS,
                read_ok, refused);
  assert_true(refused > 0);
  free(buf);
  for (int i = 0; i < s.n; i++) free(s.data[i]);
}

/* Inputs no artifact contains: tiny, all-zero, all-ones, only the magic. */
static void test_degenerate_inputs(void **state) {
  (void)state;
  uint8_t buf[4096];
  static const uint8_t magic[] = {'M', 'L', 0xef, 'R'};
  for (size_t n = 0; n <= 64; n++) {
    memset(buf, 0, sizeof buf);
    memcpy(buf, magic, n < 4 ? n : 4);
    assert_int_equal(artifact_fuzz_one(buf, n), 0);
    memset(buf + 4, 0xff, sizeof buf - 4);
    assert_int_equal(artifact_fuzz_one(buf, n), 0);
  }
  memcpy(buf, magic, 4);
  buf[4] = 0x0d; /* version 6 */
  buf[5] = 0;    /* empty producer */
  for (size_t i = 6; i < sizeof buf; i++) buf[i] = 0x00; /* huge lengths */
  assert_int_equal(artifact_fuzz_one(buf, sizeof buf), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_mutated_artifacts),
      cmocka_unit_test(test_degenerate_inputs),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
