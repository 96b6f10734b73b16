/* SPDX-License-Identifier: Apache-2.0 */
/* The per-client count table (server/src/counts.c) against a plain array:
 * random adds and removals over colliding keys, so that deletion's
 * backward shift and growth are exercised. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "counts.h"

#define N_KEYS 300

static void matches_reference(void **state) {
  (void)state;
  srv_counts t = {0};
  int ref[N_KEYS] = {0};
  char key[32];
  srand(12345);
  for (int step = 0; step < 200000; step++) {
    int k = rand() % N_KEYS;
    snprintf(key, sizeof key, "10.0.%d.%d", k / 256, k % 256);
    int delta = ref[k] == 0 ? 1 : (rand() % 2 ? 1 : -1);
    int got = counts_add(&t, key, delta);
    ref[k] += delta;
    assert_int_equal(got, ref[k]);
    if (step % 997 == 0) {
      size_t live = 0;
      for (int i = 0; i < N_KEYS; i++) {
        snprintf(key, sizeof key, "10.0.%d.%d", i / 256, i % 256);
        assert_int_equal(counts_get(&t, key), ref[i]);
        live += ref[i] > 0;
      }
      assert_int_equal(t.n, live); /* keys at 0 have left the table */
    }
  }
  counts_free(&t);
}

static void empty_and_long_keys(void **state) {
  (void)state;
  srv_counts t = {0};
  assert_int_equal(counts_get(&t, "nobody"), 0);
  assert_int_equal(counts_add(&t, "", 1), 1); /* an unknown address */
  assert_int_equal(counts_get(&t, ""), 1);
  char long_key[200];
  memset(long_key, 'k', sizeof long_key - 1);
  long_key[sizeof long_key - 1] = 0;
  assert_int_equal(counts_add(&t, long_key, 2), 2);
  assert_int_equal(counts_get(&t, long_key), 2);
  assert_int_equal(counts_add(&t, long_key, -2), 0);
  assert_int_equal(counts_get(&t, long_key), 0);
  counts_free(&t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(matches_reference),
      cmocka_unit_test(empty_and_long_keys),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
