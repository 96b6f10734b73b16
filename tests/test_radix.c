/* The radix sort (kernels/radix.h) against a straightforward stable
 * insertion sort on random keys: wide and narrow fields, many equal keys
 * (stability), one distinct key, one bit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kernels/radix.h"

static uint64_t rng_state = 1;
static uint64_t next(void) { /* SplitMix64 */
  uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* Stable insertion sort of (field, index) pairs: the reference. */
typedef struct pair {
  uint64_t key;
  int64_t idx;
} pair;

static void insertion_sort(pair *a, int64_t n) {
  for (int64_t i = 1; i < n; i++) {
    pair x = a[i];
    int64_t j = i;
    while (j > 0 && a[j - 1].key > x.key) {
      a[j] = a[j - 1];
      j--;
    }
    a[j] = x;
  }
}

/* n words whose bits [lo, hi) are random (fewer distinct values when
 * span is not 0) and whose low lo bits are the index, as sort.c packs
 * them; the sorted words must match the reference, index for index. */
static void check_against_reference(int64_t n, int lo, int hi,
                                    uint64_t span) {
  uint64_t *a = malloc((size_t)(n ? n : 1) * sizeof *a);
  uint64_t *tmp = malloc((size_t)(n ? n : 1) * sizeof *tmp);
  pair *ref = malloc((size_t)(n ? n : 1) * sizeof *ref);
  int64_t *count = malloc(SHLO_RADIX_COUNTS * sizeof *count);
  assert_true(a && ref && tmp && count);
  uint64_t field_mask = hi - lo == 64 ? UINT64_MAX : (1ull << (hi - lo)) - 1;
  for (int64_t i = 0; i < n; i++) {
    uint64_t key = (span ? next() % span : next()) & field_mask;
    a[i] = key << lo | (uint64_t)i;
    ref[i] = (pair){key, i};
  }
  insertion_sort(ref, n);
  const uint64_t *got = shlo__radix_sort(a, tmp, n, lo, hi, count);
  assert_true(got == a || got == tmp);
  for (int64_t i = 0; i < n; i++) {
    assert_int_equal(got[i] >> lo, ref[i].key);
    /* equal keys in input order */
    assert_int_equal(got[i] & ((1ull << lo) - 1), ref[i].idx);
  }
  free(a);
  free(ref);
  free(tmp);
  free(count);
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

/* Bits outside [lo, hi) do not take part: words equal in the field keep
 * their order whatever their low bits say. */
static void only_the_field_orders(void **state) {
  (void)state;
  uint64_t a[4] = {(5ull << 8) | 200, (1ull << 8) | 7, (5ull << 8) | 3,
                   (1ull << 8) | 1};
  uint64_t tmp[4];
  int64_t count[SHLO_RADIX_COUNTS];
  const uint64_t *got = shlo__radix_sort(a, tmp, 4, 8, 11, count);
  const uint64_t want[4] = {(1ull << 8) | 7, (1ull << 8) | 1,
                            (5ull << 8) | 200, (5ull << 8) | 3};
  for (int i = 0; i < 4; i++) assert_int_equal(got[i], want[i]);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(sorts_like_a_stable_reference),
      cmocka_unit_test(only_the_field_orders),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
