/* Stable LSD radix sort (see radix.h): one read of the keys counts every
 * pass's digits; each pass then scatters the items by its digit into the
 * other buffer.  A pass whose digit is the same for every item is
 * skipped. */
#include <string.h>

#include "kernels/radix.h"

#define RADIX_BITS 11
#define RADIX_SIZE (1 << RADIX_BITS)
#define RADIX_MAX_PASSES ((64 + RADIX_BITS - 1) / RADIX_BITS)

static int bit_width(uint64_t v) { return v ? 64 - __builtin_clzll(v) : 0; }

_Static_assert(RADIX_MAX_PASSES * RADIX_SIZE <= SHLO_RADIX_COUNTS,
               "the counting table holds every pass");

void shlo__radix_sort(shlo_radix_item *a, shlo_radix_item *tmp, int64_t n,
                      int64_t *count) {
  if (n < 2) return;
  uint64_t lo = a[0].key, hi = a[0].key;
  for (int64_t i = 1; i < n; i++) {
    uint64_t k = a[i].key;
    lo = k < lo ? k : lo;
    hi = k > hi ? k : hi;
  }
  int passes = (bit_width(hi - lo) + RADIX_BITS - 1) / RADIX_BITS;
  if (passes == 0) return; /* all keys equal: already in order */
  memset(count, 0, (size_t)passes * RADIX_SIZE * sizeof *count);
  for (int64_t i = 0; i < n; i++) {
    uint64_t k = a[i].key - lo;
    for (int p = 0; p < passes; p++)
      count[p * RADIX_SIZE + ((k >> (p * RADIX_BITS)) & (RADIX_SIZE - 1))]++;
  }
  shlo_radix_item *src = a, *dst = tmp;
  for (int p = 0; p < passes; p++) {
    int64_t *c = count + p * RADIX_SIZE;
    int shift = p * RADIX_BITS;
    /* one digit for everything: this pass would not move anything */
    if (c[((src[0].key - lo) >> shift) & (RADIX_SIZE - 1)] == n) continue;
    int64_t sum = 0;
    for (int d = 0; d < RADIX_SIZE; d++) {
      int64_t t = c[d];
      c[d] = sum;
      sum += t;
    }
    for (int64_t i = 0; i < n; i++) {
      unsigned d = (unsigned)(((src[i].key - lo) >> shift) & (RADIX_SIZE - 1));
      dst[c[d]++] = src[i];
    }
    shlo_radix_item *t = src;
    src = dst;
    dst = t;
  }
  if (src != a) memcpy(a, src, (size_t)n * sizeof *a);
}
