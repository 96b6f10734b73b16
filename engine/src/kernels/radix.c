/* Stable LSD radix sort (see radix.h): one read of the words counts every
 * pass's digits; each pass then scatters the words by its digit into the
 * other buffer.  A pass whose digit is the same for every word is
 * skipped. */
#include <string.h>

#include "kernels/radix.h"

#define RADIX_BITS 11
#define RADIX_SIZE (1 << RADIX_BITS)
#define RADIX_MAX_PASSES ((64 + RADIX_BITS - 1) / RADIX_BITS)

_Static_assert(RADIX_MAX_PASSES * RADIX_SIZE <= SHLO_RADIX_COUNTS,
               "the counting table holds every pass");

uint64_t *shlo__radix_sort(uint64_t *a, uint64_t *tmp, int64_t n, int lo,
                           int hi, int64_t *count) {
  int passes = (hi - lo + RADIX_BITS - 1) / RADIX_BITS;
  if (n < 2 || passes <= 0) return a;
  memset(count, 0, (size_t)passes * RADIX_SIZE * sizeof *count);
  for (int64_t i = 0; i < n; i++) {
    uint64_t k = a[i] >> lo;
    for (int p = 0; p < passes; p++)
      count[p * RADIX_SIZE + ((k >> (p * RADIX_BITS)) & (RADIX_SIZE - 1))]++;
  }
  uint64_t *src = a, *dst = tmp;
  for (int p = 0; p < passes; p++) {
    int64_t *c = count + p * RADIX_SIZE;
    int shift = lo + p * RADIX_BITS;
    /* one digit for everything: this pass would not move anything */
    if (c[(src[0] >> shift) & (RADIX_SIZE - 1)] == n) continue;
    int64_t sum = 0;
    for (int d = 0; d < RADIX_SIZE; d++) {
      int64_t t = c[d];
      c[d] = sum;
      sum += t;
    }
    for (int64_t i = 0; i < n; i++)
      dst[c[(src[i] >> shift) & (RADIX_SIZE - 1)]++] = src[i];
    uint64_t *t = src;
    src = dst;
    dst = t;
  }
  return src;
}
