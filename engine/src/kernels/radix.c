/* SPDX-License-Identifier: Apache-2.0 */
/* Stable LSD radix sort (see radix.h).
 *
 * Long arrays first go by their top digit into buckets (one count and
 * one scatter over memory), then each bucket is finished by the LSD
 * passes of the digits below, in cache and on the pool, bucket by bucket
 * (a very short one by insertion).  Stable both ways, so the order is the
 * one plain LSD gives; it only spares the passes over memory.
 *
 * One part (a short array, or one thread): a single read of the words
 * counts every pass's digits, then each pass scatters the words by its
 * digit into the other buffer.  Several parts: each pass counts its digit
 * per part on the pool, turns the counts into each part's starting offset
 * in every bucket (bucket by bucket, part by part, so part t's words land
 * after part t-1's and the pass stays stable), and scatters per part on
 * the pool.  The counts of a pass depend on where the previous pass put
 * the words, so with parts they are taken pass by pass; one more read of
 * the words is cheap next to a scatter. */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "kernels/radix.h"
#include "runtime/pool.h"

#define RADIX_BITS 11
#define RADIX_SIZE (1 << RADIX_BITS)
#define RADIX_MASK (RADIX_SIZE - 1)
/* Words a part should have before another thread is worth its start-up
 * and its share of cache. */
#define RADIX_PART_MIN ((int64_t)1 << 17)
#define RADIX_MAX_PARTS 32
/* Words above which a sort goes top digit first (msd) */
#define RADIX_MSD_MIN ((int64_t)1 << 16)
/* Buckets longer than this are sorted in parts on the pool, one by one;
 * shorter ones are shared out to the threads whole. */
#define RADIX_BUCKET_PARTS_MIN ((int64_t)1 << 18)
#define RADIX_INSERT_MAX 24 /* shorter buckets: insertion sort */

/* One pass over parts of the words: part t is [begin(t), begin(t + 1)). */
typedef struct radix_job {
  const void *src;
  void *dst;
  int64_t n, chunk;
  int shift;
  int64_t *count; /* [part][digit]: counts, then offsets */
} radix_job;

static int64_t part_begin(const radix_job *j, int64_t t) {
  return t * j->chunk < j->n ? t * j->chunk : j->n;
}

/* Turn the parts' counts of one pass into offsets.  False when every
 * word has the digit of word0 (the pass would not move anything). */
static bool radix_offsets(int64_t *count, int parts, int64_t n,
                          uint64_t word0, int shift) {
  int d0 = (int)((word0 >> shift) & RADIX_MASK);
  int64_t same = 0;
  for (int t = 0; t < parts; t++) same += count[t * RADIX_SIZE + d0];
  if (same == n) return false;
  int64_t sum = 0;
  for (int d = 0; d < RADIX_SIZE; d++)
    for (int t = 0; t < parts; t++) {
      int64_t c = count[t * RADIX_SIZE + d];
      count[t * RADIX_SIZE + d] = sum;
      sum += c;
    }
  return true;
}

/* The counting and scattering loops and the two drivers, per word type. */
#define DEF_RADIX(SUF, W)                                                   \
  static void count_##SUF(void *ctx, int64_t t0, int64_t t1) {              \
    radix_job *j = ctx;                                                     \
    const W *src = j->src;                                                  \
    for (int64_t t = t0; t < t1; t++) {                                     \
      int64_t *c = j->count + t * RADIX_SIZE;                               \
      memset(c, 0, RADIX_SIZE * sizeof *c);                                 \
      for (int64_t i = part_begin(j, t), e = part_begin(j, t + 1); i < e;   \
           i++)                                                             \
        c[(src[i] >> j->shift) & RADIX_MASK]++;                             \
    }                                                                       \
  }                                                                         \
                                                                            \
  static void scatter_##SUF(void *ctx, int64_t t0, int64_t t1) {            \
    radix_job *j = ctx;                                                     \
    const W *src = j->src;                                                  \
    W *dst = j->dst;                                                        \
    int shift = j->shift;                                                   \
    for (int64_t t = t0; t < t1; t++) {                                     \
      int64_t *c = j->count + t * RADIX_SIZE;                               \
      for (int64_t i = part_begin(j, t), e = part_begin(j, t + 1); i < e;   \
           i++)                                                             \
        dst[c[(src[i] >> shift) & RADIX_MASK]++] = src[i];                  \
    }                                                                       \
  }                                                                         \
                                                                            \
  /* One part: every pass's digits counted in one read. */                 \
  static W *sort_one_##SUF(W *a, W *tmp, int64_t n, int lo, int passes,     \
                           int64_t *count) {                                \
    memset(count, 0, (size_t)passes * RADIX_SIZE * sizeof *count);         \
    for (int64_t i = 0; i < n; i++) {                                       \
      W k = a[i] >> lo;                                                     \
      for (int p = 0; p < passes; p++)                                      \
        count[p * RADIX_SIZE + ((k >> (p * RADIX_BITS)) & RADIX_MASK)]++;   \
    }                                                                       \
    radix_job j = {.n = n, .chunk = n};                                     \
    W *src = a, *dst = tmp;                                                 \
    for (int p = 0; p < passes; p++) {                                      \
      j.count = count + p * RADIX_SIZE;                                     \
      j.shift = lo + p * RADIX_BITS;                                        \
      if (!radix_offsets(j.count, 1, n, src[0], j.shift)) continue;         \
      j.src = src;                                                          \
      j.dst = dst;                                                          \
      scatter_##SUF(&j, 0, 1);                                              \
      W *t = src;                                                           \
      src = dst;                                                            \
      dst = t;                                                              \
    }                                                                       \
    return src;                                                             \
  }                                                                         \
                                                                            \
  static W *sort_parts_##SUF(W *a, W *tmp, int64_t n, int lo, int passes,   \
                             int parts, int64_t *count) {                   \
    radix_job j = {.n = n, .chunk = (n + parts - 1) / parts, .count = count};\
    W *src = a, *dst = tmp;                                                 \
    for (int p = 0; p < passes; p++) {                                      \
      j.src = src;                                                          \
      j.dst = dst;                                                          \
      j.shift = lo + p * RADIX_BITS;                                        \
      shlo__parallel_for(parts, 1, count_##SUF, &j);                        \
      if (!radix_offsets(count, parts, n, src[0], j.shift)) continue;       \
      shlo__parallel_for(parts, 1, scatter_##SUF, &j);                      \
      W *t = src;                                                           \
      src = dst;                                                            \
      dst = t;                                                              \
    }                                                                       \
    return src;                                                             \
  }                                                                         \
                                                                            \
  /* Bucket a[0..n) by bits [lo, lo + passes * RADIX_BITS) into place: */  \
  /* the result is left in a, tmp is scratch.  Short buckets by stable   */ \
  /* insertion; the others by LSD (in parts when long and `parts`). */     \
  static void bucket_##SUF(W *a, W *tmp, int64_t n, int lo, int passes,     \
                           int parts, int64_t *count) {                     \
    if (n <= RADIX_INSERT_MAX) {                                            \
      for (int64_t i = 1; i < n; i++) {                                     \
        W w = a[i];                                                         \
        int64_t k = i;                                                      \
        for (; k > 0 && (a[k - 1] >> lo) > (w >> lo); k--) a[k] = a[k - 1];   \
        a[k] = w;                                                           \
      }                                                                     \
      return;                                                               \
    }                                                                       \
    W *r = parts > 1 ? sort_parts_##SUF(a, tmp, n, lo, passes, parts, count)\
                     : sort_one_##SUF(a, tmp, n, lo, passes, count);        \
    if (r != a) memcpy(a, r, (size_t)n * sizeof *a);                        \
  }                                                                         \
                                                                            \
  typedef struct msd_##SUF {                                                \
    W *a, *tmp;                                                             \
    const int64_t *start; /* bucket d is [start[d], start[d + 1]) */        \
    int lo, passes;                                                         \
    atomic_int failed;                                                      \
  } msd_##SUF;                                                              \
                                                                            \
  /* (Most buckets are empty or short: the counts are allocated only for */\
  /* a bucket that needs them.) */                                         \
  static void buckets_##SUF(void *ctx, int64_t d0, int64_t d1) {            \
    msd_##SUF *m = ctx;                                                     \
    int64_t *count = NULL;                                                  \
    for (int64_t d = d0; d < d1; d++) {                                     \
      int64_t s = m->start[d], n = m->start[d + 1] - s;                     \
      if (n >= RADIX_BUCKET_PARTS_MIN) continue; /* done in parts */        \
      if (n > RADIX_INSERT_MAX && !count &&                                 \
          !(count = shlo__malloc((size_t)m->passes * RADIX_SIZE * sizeof *count))) {\
        atomic_store(&m->failed, 1);                                        \
        return;                                                             \
      }                                                                     \
      bucket_##SUF(m->tmp + s, m->a + s, n, m->lo, m->passes, 1, count);    \
    }                                                                       \
    shlo__free(count);                                                            \
  }                                                                         \
                                                                            \
  /* Top digit first (see the top of the file); the result is in tmp. */   \
  static W *sort_msd_##SUF(W *a, W *tmp, int64_t n, int lo, int passes,     \
                           int parts, int64_t *count) {                     \
    radix_job j = {.src = a, .dst = tmp, .n = n,                            \
                   .chunk = (n + parts - 1) / parts, .count = count,        \
                   .shift = lo + (passes - 1) * RADIX_BITS};                \
    shlo__parallel_for(parts, 1, count_##SUF, &j);                          \
    if (!radix_offsets(count, parts, n, a[0], j.shift)) { /* one bucket */  \
      bucket_##SUF(a, tmp, n, lo, passes - 1, parts, count);                \
      return a;                                                             \
    }                                                                       \
    int64_t start[RADIX_SIZE + 1];                                          \
    for (int d = 0; d < RADIX_SIZE; d++) start[d] = count[d];               \
    start[RADIX_SIZE] = n;                                                  \
    shlo__parallel_for(parts, 1, scatter_##SUF, &j);                        \
    msd_##SUF m = {a, tmp, start, lo, passes - 1, 0};                       \
    for (int d = 0; d < RADIX_SIZE; d++) /* the long ones, in parts */      \
      if (start[d + 1] - start[d] >= RADIX_BUCKET_PARTS_MIN)                \
        bucket_##SUF(tmp + start[d], a + start[d], start[d + 1] - start[d], \
                     lo, passes - 1, parts, count);                         \
    shlo__parallel_for(RADIX_SIZE, 1, buckets_##SUF, &m);                   \
    return atomic_load(&m.failed) ? NULL : tmp;                             \
  }

DEF_RADIX(u32, uint32_t)
DEF_RADIX(u64, uint64_t)

/* How many parts to split n words into. */
static int radix_parts(int64_t n) {
  int64_t parts = n / RADIX_PART_MIN;
  if (parts < 2) return 1;
  int threads = shlo__pool_threads();
  if (parts > threads) parts = threads;
  return parts > RADIX_MAX_PARTS ? RADIX_MAX_PARTS : (int)parts;
}

/* The passes, parts and counting table for sorting n words by bits
 * [lo, hi); false when out of memory.  *count is NULL when nothing needs
 * sorting. */
static bool radix_plan(int64_t n, int lo, int hi, int *passes, int *parts,
                       int64_t **count) {
  *passes = (hi - lo + RADIX_BITS - 1) / RADIX_BITS;
  *count = NULL;
  if (n < 2 || *passes <= 0) return true;
  *parts = radix_parts(n);
  int rows = *parts > 1 ? *parts : *passes;
  *count = shlo__malloc((size_t)rows * RADIX_SIZE * sizeof **count);
  return *count != NULL;
}

/* The entry point NAME (radix.h) for words W. */
#define DEF_ENTRY(SUF, W, NAME)                                             \
  W *NAME(W *a, W *tmp, int64_t n, int lo, int hi) {                        \
    int passes, parts;                                                      \
    int64_t *count;                                                         \
    if (!radix_plan(n, lo, hi, &passes, &parts, &count)) return NULL;       \
    if (!count) return a;                                                   \
    W *r = n >= RADIX_MSD_MIN && passes > 1                                 \
               ? sort_msd_##SUF(a, tmp, n, lo, passes, parts, count)        \
           : parts > 1 ? sort_parts_##SUF(a, tmp, n, lo, passes, parts, count)\
                       : sort_one_##SUF(a, tmp, n, lo, passes, count);      \
    shlo__free(count);                                                            \
    return r;                                                               \
  }

DEF_ENTRY(u64, uint64_t, shlo__radix_sort)
DEF_ENTRY(u32, uint32_t, shlo__radix_sort32)
