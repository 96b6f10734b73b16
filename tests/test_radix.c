/* SPDX-License-Identifier: Apache-2.0 */
/* The radix sort (kernels/radix.h), 64- and 32-bit words, against a
 * plainly stable reference (qsort by key, then original index) on random
 * keys: wide and narrow fields, many equal keys (stability), one distinct
 * key, one bit, and arrays long enough to be split into parts sorted on
 * several threads (a default context of 4 threads, whatever the machine's cores). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "shlo/context.h"
#include "kernels/radix.h"

static uint64_t rng_state = 1;
static uint64_t next(void) { /* SplitMix64 */
  uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* (field, index) pairs sorted by field, then index: a stable sort's
 * order, whatever qsort does with ties (there are none). */
typedef struct pair {
  uint64_t key;
  int64_t idx;
} pair;

static int pair_cmp(const void *x, const void *y) {
  const pair *a = x, *b = y;
  if (a->key != b->key) return a->key < b->key ? -1 : 1;
  return (a->idx > b->idx) - (a->idx < b->idx);
}

static void reference_sort(pair *a, int64_t n) {
  qsort(a, (size_t)n, sizeof *a, pair_cmp);
}

/* n words of `width` bits (64 or 32) whose bits [lo, hi) are random
 * (fewer distinct values when span is not 0) and whose low lo bits are
 * the index modulo 2^lo, as sort.c packs them; the sorted words must
 * match the reference, field for field and (every test keeps n <= 2^lo
 * where lo > 0) index for index. */
/* A random key in field_mask, below span when span is not 0. */
static uint64_t any_key(uint64_t span, uint64_t field_mask) {
  return (span ? next() % span : next()) & field_mask;
}

/* Three keys in four share their top 11 bits (one long bucket when the
 * sort goes top digit first); the rest are random. */
static uint64_t mostly_one_top_digit(uint64_t span, uint64_t field_mask) {
  (void)span;
  uint64_t k = next() & field_mask;
  return next() % 4 ? k & (field_mask >> 11) : k;
}

static uint64_t (*key_of)(uint64_t, uint64_t) = any_key;

static void check_width(int width, int64_t n, int lo, int hi, uint64_t span) {
  size_t cap = (size_t)(n ? n : 1);
  uint64_t *a = malloc(cap * sizeof *a), *tmp = malloc(cap * sizeof *tmp);
  uint32_t *a32 = malloc(cap * sizeof *a32), *t32 = malloc(cap * sizeof *t32);
  pair *ref = malloc(cap * sizeof *ref);
  assert_true(a && ref && tmp && a32 && t32);
  uint64_t field_mask = hi - lo == 64 ? UINT64_MAX : (1ull << (hi - lo)) - 1;
  uint64_t low_mask = (1ull << lo) - 1; /* lo < 64 */
  for (int64_t i = 0; i < n; i++) {
    uint64_t key = key_of(span, field_mask);
    a[i] = (lo == 64 ? 0 : key << lo) | ((uint64_t)i & low_mask);
    a32[i] = (uint32_t)a[i];
    ref[i] = (pair){key, i};
  }
  reference_sort(ref, n);
  const uint64_t *got = a;
  if (width == 64) {
    got = shlo__radix_sort(a, tmp, n, lo, hi);
    assert_true(got == a || got == tmp);
  } else {
    const uint32_t *g32 = shlo__radix_sort32(a32, t32, n, lo, hi);
    assert_true(g32 == a32 || g32 == t32);
    for (int64_t i = 0; i < n; i++) a[i] = g32[i];
  }
  for (int64_t i = 0; i < n; i++) {
    assert_int_equal(got[i] >> lo, ref[i].key);
    /* equal keys in input order */
    assert_int_equal(got[i] & low_mask, (uint64_t)ref[i].idx & low_mask);
  }
  free(a);
  free(ref);
  free(tmp);
  free(a32);
  free(t32);
}

static void check_against_reference(int64_t n, int lo, int hi,
                                    uint64_t span) {
  check_width(64, n, lo, hi, span);
}

static void check32_against_reference(int64_t n, int lo, int hi,
                                      uint64_t span) {
  check_width(32, n, lo, hi, span);
}

static void sorts_like_a_stable_reference(void **state) {
  (void)state;
  check_against_reference(0, 12, 40, 0);
  check_against_reference(1, 12, 40, 0);
  check_against_reference(3000, 12, 64, 0);          /* 52-bit field */
  check_against_reference(3000, 12, 64, 7);          /* many ties */
  check_against_reference(3000, 20, 53, 0);          /* f32 keys: 33 bits */
  check_against_reference(3000, 12, 13, 0);          /* one bit */
  check_against_reference(2500, 12, 40, 1);          /* all equal */
}

/* Long enough for parts on the pool: each part's words must land after
 * the previous part's in every bucket. */
static void long_arrays_sort_stably_in_parts(void **state) {
  (void)state;
  check_against_reference(600000, 20, 52, 0);        /* key over index */
  check_against_reference(600000, 20, 52, 1000);     /* many ties */
  check_against_reference(600001, 32, 64, 0);        /* key over bits */
}

/* Long enough to go top digit first, with one bucket long enough to be
 * sorted in parts and many short ones. */
static void skewed_top_digits_sort_stably(void **state) {
  (void)state;
  key_of = mostly_one_top_digit;
  check_against_reference(900000, 20, 52, 0);
  check32_against_reference(900000, 0, 32, 0);
  key_of = any_key;
}

static void words32_sort_like_the_reference(void **state) {
  (void)state;
  check32_against_reference(0, 0, 32, 0);
  check32_against_reference(1, 0, 32, 0);
  check32_against_reference(5000, 0, 32, 0);         /* bare keys */
  check32_against_reference(5000, 0, 32, 50);        /* equal keys */
  check32_against_reference(5000, 13, 32, 0);        /* 19-bit field */
  check32_against_reference(5000, 13, 32, 1);        /* all equal */
  check32_against_reference(600000, 0, 32, 0);       /* in parts */
  check32_against_reference(600000, 20, 32, 0);      /* in parts, ties */
}

/* Bits outside [lo, hi) do not take part: words equal in the field keep
 * their order whatever their low bits say. */
static void only_the_field_orders(void **state) {
  (void)state;
  uint64_t a[4] = {(5ull << 8) | 200, (1ull << 8) | 7, (5ull << 8) | 3,
                   (1ull << 8) | 1};
  uint64_t tmp[4];
  const uint64_t *got = shlo__radix_sort(a, tmp, 4, 8, 11);
  const uint64_t want[4] = {(1ull << 8) | 7, (1ull << 8) | 1,
                            (5ull << 8) | 200, (5ull << 8) | 3};
  for (int i = 0; i < 4; i++) assert_int_equal(got[i], want[i]);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(sorts_like_a_stable_reference),
      cmocka_unit_test(only_the_field_orders),
      cmocka_unit_test(long_arrays_sort_stably_in_parts),
      cmocka_unit_test(words32_sort_like_the_reference),
      cmocka_unit_test(skewed_top_digits_sort_stably),
  };
  /* parts on the pool on any machine: 4 threads, before the default
   * context's first use */
  shlo_context_options o;
  shlo_context_options_init(&o);
  o.threads = 4;
  if (shlo_default_context_configure(&o) != SHLO_OK) return 1;
  return cmocka_run_group_tests(tests, NULL, NULL);
}
