/* SPDX-License-Identifier: Apache-2.0 */
/* stablehlo.reduce with a native body (reduce_int.h) when the result is
 * not one element per input row: a spatial mean's sum over [1, 2] of
 * NHWC, column sums, a reduction over the middle dimensions.  reduce.c
 * walked such an input row by row on one thread; here the pool splits it
 * by RESULT elements, along the outermost kept dimension, never along a
 * reduced one.  Each result element is still folded from its init value
 * over its inputs in ascending order of the reduced indices, by the same
 * body, so the bits are those of the walk on one thread whatever the
 * number of threads.
 *
 * The shape is first merged: neighbouring dimensions that are both
 * reduced or both kept become one (the order of the walk is the same).
 * When the last dimension is kept and the one before it reduced (NHWC's
 * [b, h*w, c]), the body's grid loop folds all of that dimension's rows
 * into the result row in one call instead of one call per row; for f32
 * sums that call keeps 64 columns in registers over those rows (the
 * body's own grid loop reads and writes the result row once a row). */
#include <stdatomic.h>
#include <stdbool.h>

#include "kernels/multiversion.h"
#include "runtime/exec.h"
#include "runtime/pool.h"
#include "kernels/reduce_split.h"

typedef struct merged_shape {
  int rank;
  int64_t dims[SHLO_MAX_RANK];
  int64_t in_str[SHLO_MAX_RANK];  /* elements */
  int64_t out_str[SHLO_MAX_RANK]; /* elements; 0 where reduced */
} merged_shape;

/* dims/out_stride (a dense input of that shape) with dimensions of
 * extent 1 dropped and same-kind neighbours merged (reduce.c's runs);
 * rank 0 when every extent is 1. */
static void merge_dims(int rank, const int64_t *dims, const int64_t *out_str,
                       merged_shape *m) {
  m->rank = 0;
  for (int d = 0; d < rank; d++) {
    if (dims[d] == 1) continue;
    bool red = out_str[d] == 0;
    int t = m->rank - 1;
    if (t >= 0 && (m->out_str[t] == 0) == red) {
      m->dims[t] *= dims[d];
      m->out_str[t] = out_str[d]; /* the inner one's stride */
      continue;
    }
    m->dims[m->rank] = dims[d];
    m->out_str[m->rank] = out_str[d];
    m->rank++;
  }
  int64_t s = 1;
  for (int d = m->rank - 1; d >= 0; d--) {
    m->in_str[d] = s;
    s *= m->dims[d];
  }
}

/* 16 floats, loaded and stored where they lie (any alignment). */
typedef float f32x16 __attribute__((vector_size(64), aligned(4), may_alias));

/* d[c] += s[c + k * step] for k in [0, rows), c in [0, 64): four vectors
 * of sums kept in registers across the rows. */
static inline __attribute__((always_inline)) void
sum_cols64(float *d, const float *s, int64_t rows, int64_t step) {
  f32x16 *dv = (f32x16 *)d;
  f32x16 a0 = dv[0], a1 = dv[1], a2 = dv[2], a3 = dv[3];
  for (int64_t k = 0; k < rows; k++) {
    const f32x16 *x = (const f32x16 *)(s + k * step);
    a0 = a0 + x[0];
    a1 = a1 + x[1];
    a2 = a2 + x[2];
    a3 = a3 + x[3];
  }
  dv[0] = a0;
  dv[1] = a1;
  dv[2] = a2;
  dv[3] = a3;
}

static inline __attribute__((always_inline)) void
sum_cols16(float *d, const float *s, int64_t rows, int64_t step) {
  f32x16 *dv = (f32x16 *)d;
  f32x16 a = dv[0];
  for (int64_t k = 0; k < rows; k++) a = a + *(const f32x16 *)(s + k * step);
  dv[0] = a;
}

/* The body's accum_grid for an f32 add (reduce_int.h), each element's
 * sum in the same order (the result row first, then the rows in k
 * order), but held in registers across k.  dst must not overlap src. */
SHLO_CLONES static void sum_grid_f32(void *dst, const void *src,
                                     const shlo_rb_grid *g,
                                     const shlo_rb_native *b) {
  (void)b;
  for (int64_t r = 0; r < g->rows; r++) {
    float *d = (float *)dst + r * g->dst_step;
    const float *s = (const float *)src + r * g->src_step;
    int64_t i = 0;
    for (; i + 64 <= g->n; i += 64) sum_cols64(d + i, s + i, g->k, g->k_step);
    for (; i + 16 <= g->n; i += 16) sum_cols16(d + i, s + i, g->k, g->k_step);
    for (; i < g->n; i++) {
      float a = d[i];
      for (int64_t k = 0; k < g->k; k++) a = a + s[i + k * g->k_step];
      d[i] = a;
    }
  }
}

typedef struct split_job {
  merged_shape m;
  int cut;          /* the kept dimension the pool splits */
  bool grid;        /* last kept, the one before reduced: one grid call */
  int outer;        /* dimensions [0, outer) walked one index at a time */
  const shlo_rb_native *b;
  shlo_rb_accum_grid_fn grid_fn; /* b's, or sum_grid_f32 */
  const char *src;
  char *dst;
  shlo_exec *ex;
  atomic_int stopped;
} split_job;

/* The innermost unit at src/dst offsets (elements): the last dimension
 * (columns [c0, c1) of it) folded or accumulated, and with `grid` every
 * row of the reduced dimension before it. */
static void fold_unit(const split_job *j, int64_t si, int64_t oi, int64_t c0,
                      int64_t c1) {
  const merged_shape *m = &j->m;
  const shlo_rb_native *b = j->b;
  int last = m->rank - 1;
  size_t esz = b->esz;
  const char *src = j->src + (size_t)si * esz;
  char *dst = j->dst + (size_t)oi * esz;
  if (m->out_str[last] == 0) { /* the last dimension reduced: one element */
    b->fold_run(dst, src, m->dims[last], b);
    return;
  }
  shlo_rb_grid g = {.n = c1 - c0, .rows = 1, .dst_step = 0, .src_step = 0,
                    .k = j->grid ? m->dims[last - 1] : 1,
                    .k_step = j->grid ? m->in_str[last - 1] : 0};
  j->grid_fn(dst + (size_t)c0 * esz, src + (size_t)c0 * esz, &g, b);
}

/* Result elements [lo, hi) along dimension `cut`, every input that folds
 * into them in the order of the walk on one thread. */
static void split_range(void *ctx, int64_t lo, int64_t hi) {
  split_job *j = ctx;
  const merged_shape *m = &j->m;
  if (atomic_load(&j->stopped)) return;
  int last = m->rank - 1;
  int64_t c0 = 0, c1 = m->dims[last];
  if (j->cut == last) {
    c0 = lo;
    c1 = hi;
  }
  int64_t idx[SHLO_MAX_RANK] = {0};
  int64_t si = 0, oi = 0;
  if (j->cut < j->outer) {
    idx[j->cut] = lo;
    si = lo * m->in_str[j->cut];
    oi = lo * m->out_str[j->cut];
  }
  for (int64_t n = 0;; n++) {
    if ((n & 1023) == 1023 &&
        (atomic_load(&j->stopped) || shlo__exec_should_stop(j->ex))) {
      atomic_store(&j->stopped, 1);
      return;
    }
    fold_unit(j, si, oi, c0, c1);
    int d = j->outer - 1;
    for (; d >= 0; d--) {
      int64_t end = d == j->cut ? hi : m->dims[d];
      int64_t start = d == j->cut ? lo : 0;
      si += m->in_str[d];
      oi += m->out_str[d];
      if (++idx[d] < end) break;
      si -= m->in_str[d] * (end - start);
      oi -= m->out_str[d] * (end - start);
      idx[d] = start;
    }
    if (d < 0) return;
  }
}

/* Input elements per chunk: about 64K, as reduce.c's row folds. */
static int64_t split_grain(const split_job *j, int64_t in_numel) {
  int64_t per = in_numel / j->m.dims[j->cut];
  int64_t g = (1 << 16) / (per > 0 ? per : 1);
  return g > 0 ? g : 1;
}

int shlo__reduce_split(int rank, const int64_t *dims, const int64_t *out_str,
                       const shlo_rb_native *b, const void *src, void *dst,
                       shlo_exec *ex) {
  split_job j = {.b = b, .src = src, .dst = dst, .ex = ex};
  merge_dims(rank, dims, out_str, &j.m);
  const merged_shape *m = &j.m;
  int last = m->rank - 1;
  j.cut = -1;
  for (int d = 0; d < m->rank && j.cut < 0; d++)
    if (m->out_str[d] != 0) j.cut = d;
  if (j.cut < 0 || !b->accum_grid) return 1; /* one result element */
  j.grid = last >= 1 && m->out_str[last] != 0 && m->out_str[last - 1] == 0;
  j.outer = last - (j.grid ? 1 : 0);
  int64_t in_numel = 1;
  for (int d = 0; d < m->rank; d++) in_numel *= m->dims[d];
  if (in_numel == 0) return 0;
  j.grid_fn = b->opcode == SHLO_OP_ADD && b->et == SHLO_F32 ? sum_grid_f32
                                                           : b->accum_grid;
  atomic_init(&j.stopped, 0);
  shlo__parallel_for(m->dims[j.cut], split_grain(&j, in_numel), split_range,
                     &j);
  return atomic_load(&j.stopped) ? -1 : 0;
}
