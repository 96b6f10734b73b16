/* SPDX-License-Identifier: Apache-2.0 */
/* Stable LSD radix sort of 32- or 64-bit words by a field of their bits.
 *
 * Callers pack what they sort: sort.c puts a key (made ascending-unsigned
 * and taken relative to its minimum) above an element index or above the
 * element's own bits, or sorts bare 32-bit keys; since the words start in
 * index order and every pass is stable, equal keys keep their order.  Only
 * the bits in which the field can differ are sorted on, 11 bits a pass
 * (32-bit keys: 3 passes), and a pass whose digit is the same in every
 * word is skipped.  Long arrays are split into parts that count and
 * scatter on the engine's thread pool; each part's words go to its own
 * stretch of every digit's bucket, after the parts before it, so the
 * result is the same stable order whatever the number of threads. */
#ifndef SHLO_RADIX_H
#define SHLO_RADIX_H

#include <stdint.h>

/* Sort a[0..n) by bits [lo, hi) of each word (0 <= lo <= hi <= 64; the
 * bits above hi must be zero), equal fields in their given order; tmp has
 * room for n words.  Returns where the sorted words are: a or tmp (the
 * other holds scratch), or NULL, with a unchanged, when out of memory. */
uint64_t *shlo__radix_sort(uint64_t *a, uint64_t *tmp, int64_t n, int lo,
                           int hi);

/* The same for 32-bit words (0 <= lo <= hi <= 32). */
uint32_t *shlo__radix_sort32(uint32_t *a, uint32_t *tmp, int64_t n, int lo,
                             int hi);

#endif
