/* Stable LSD radix sort of (key, index) items by unsigned 64-bit key.
 *
 * Callers turn their order into ascending unsigned order first: a signed
 * key by flipping its top bit, a descending order by complementing the
 * key (either keeps equal keys equal, so stability is kept).  Only the
 * bits in which the keys differ are sorted on (keys are taken relative to
 * their minimum, 11 bits per pass), so f32-derived keys take 3 passes. */
#ifndef SHLO_RADIX_H
#define SHLO_RADIX_H

#include <stdint.h>

typedef struct shlo_radix_item {
  uint64_t key;
  int64_t idx;
} shlo_radix_item;

/* Entries of the counting table shlo__radix_sort needs. */
#define SHLO_RADIX_COUNTS (6 * 2048)

/* Sort a[0..n) by key, equal keys in their given order; tmp has room for
 * n items and count for SHLO_RADIX_COUNTS.  The result is in a. */
void shlo__radix_sort(shlo_radix_item *a, shlo_radix_item *tmp, int64_t n,
                      int64_t *count);

#endif
