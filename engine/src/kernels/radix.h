/* Stable LSD radix sort of 64-bit words by a field of their bits.
 *
 * Callers pack what they sort: sort.c puts a key (made ascending-unsigned
 * and taken relative to its minimum) above an element index, and sorts
 * by the key's bits only; since the words start in index order and every
 * pass is stable, equal keys keep their order.  Only the bits in which the
 * field can differ are sorted on, 11 bits a pass (f32 keys: 3 passes). */
#ifndef SHLO_RADIX_H
#define SHLO_RADIX_H

#include <stdint.h>

/* Entries of the counting table shlo__radix_sort needs. */
#define SHLO_RADIX_COUNTS (6 * 2048)

/* Sort a[0..n) by bits [lo, hi) of each word (0 <= lo <= hi <= 64; the
 * bits above hi must be zero), equal fields in their given order; tmp has
 * room for n words and count for SHLO_RADIX_COUNTS.  Returns where the
 * sorted words are: a or tmp (the other holds scratch). */
uint64_t *shlo__radix_sort(uint64_t *a, uint64_t *tmp, int64_t n, int lo,
                           int hi, int64_t *count);

#endif
