/* The radix sort (kernels/radix.h) against a straightforward stable
 * insertion sort on random keys: wide and narrow key ranges, many equal
 * keys (stability), one distinct key, the 64-bit extremes. */
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

static void insertion_sort(shlo_radix_item *a, int64_t n) {
  for (int64_t i = 1; i < n; i++) {
    shlo_radix_item x = a[i];
    int64_t j = i;
    while (j > 0 && a[j - 1].key > x.key) {
      a[j] = a[j - 1];
      j--;
    }
    a[j] = x;
  }
}

static void check_against_reference(int64_t n, uint64_t base, uint64_t span) {
  shlo_radix_item *a = malloc((size_t)n * sizeof *a);
  shlo_radix_item *ref = malloc((size_t)n * sizeof *ref);
  shlo_radix_item *tmp = malloc((size_t)n * sizeof *tmp);
  int64_t *count = malloc(SHLO_RADIX_COUNTS * sizeof *count);
  assert_true(a && ref && tmp && count);
  for (int64_t i = 0; i < n; i++) {
    a[i].key = base + (span ? next() % span : next());
    a[i].idx = i;
  }
  memcpy(ref, a, (size_t)n * sizeof *a);
  insertion_sort(ref, n);
  shlo__radix_sort(a, tmp, n, count);
  for (int64_t i = 0; i < n; i++) {
    assert_int_equal(a[i].key, ref[i].key);
    assert_int_equal(a[i].idx, ref[i].idx); /* equal keys in input order */
  }
  free(a);
  free(ref);
  free(tmp);
  free(count);
}

static void sorts_like_a_stable_reference(void **state) {
  (void)state;
  check_against_reference(0, 0, 0);
  check_against_reference(1, 5, 0);
  check_against_reference(3000, 0, 0);                  /* full 64 bits */
  check_against_reference(3000, 0, 7);                  /* many ties */
  check_against_reference(3000, 1ull << 40, 1ull << 33); /* f32-like span */
  check_against_reference(3000, UINT64_MAX - 100, 100); /* near the top */
  check_against_reference(2500, 42, 1);                 /* all equal */
}

static void extreme_keys_order_correctly(void **state) {
  (void)state;
  shlo_radix_item a[4] = {{UINT64_MAX, 0}, {0, 1}, {UINT64_MAX, 2}, {1, 3}};
  shlo_radix_item tmp[4];
  int64_t count[SHLO_RADIX_COUNTS];
  shlo__radix_sort(a, tmp, 4, count);
  const int64_t want[4] = {1, 3, 0, 2};
  for (int i = 0; i < 4; i++) assert_int_equal(a[i].idx, want[i]);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(sorts_like_a_stable_reference),
      cmocka_unit_test(extreme_keys_order_correctly),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
