/* SPDX-License-Identifier: Apache-2.0 */
/* dot_general of bf16 operands with an f32 result on the bf16 GEMM
 * (gemm_bf16.h), for linalg.c: each operand is walked into [B][M][K] or
 * its transpose [B][K][M] (rhs: [B][K][N] or [B][N][K]) as bf16 bit
 * patterns, whichever form is laid out in place or in contiguous runs
 * (copies of two bytes, no conversion), then one bf16 GEMM per batch
 * element, told which operands are transposed.  When the kernel declines (no AVX512_BF16, an
 * input outside its guard), the caller runs the widened f32 path for the
 * whole call, overwriting whatever was written. */
#include <stdatomic.h>
#include <string.h>

#include "core/alloc.h"
#include "kernels/dot_bf16.h"
#include "kernels/gemm_bf16.h"
#include "runtime/pool.h"

bool shlo__dot_bf16_applies(const shlo_op *op, shlo_elem_type lt,
                            shlo_elem_type rt, shlo_elem_type ot) {
  if (lt != SHLO_BF16 || rt != SHLO_BF16 || ot != SHLO_F32) return false;
  /* an explicit algorithm names its own precision: keep the exact path */
  if (shlo_op_attr(op, "algorithm")) return false;
  const shlo_attr *pc = shlo_op_attr(op, "precision_config");
  if (pc && pc->kind == SHLO_ATTR_ARRAY)
    for (int i = 0; i < pc->n; i++) {
      const char *s = pc->items[i]->str;
      if (!s || strcmp(s, "DEFAULT")) return false; /* HIGH, HIGHEST */
    }
  return true;
}

/* Whether the walk reads its source front to back, contiguously. */
static bool walk_in_place(const shlo__la_walk *w) {
  return w->offset == 0 &&
         (w->rank == 0 || (w->rank == 1 && w->stride[0] == 2));
}

/* The walked two-byte elements of src, one after another, into dst. */
static void gather_u16(const shlo__la_walk *w, uint16_t *dst,
                       const char *src) {
  if (w->empty) return;
  src += w->offset;
  if (w->rank == 0) {
    memcpy(dst, src, 2);
    return;
  }
  int last = w->rank - 1;
  int64_t n = w->count[last], ss = w->stride[last];
  int64_t idx[SHLO_LA_WALK_MAX] = {0};
  for (;;) {
    if (ss == 2) {
      memcpy(dst, src, (size_t)n * 2);
    } else {
      for (int64_t i = 0; i < n; i++) memcpy(dst + i, src + i * ss, 2);
    }
    dst += n;
    int d = last - 1;
    for (; d >= 0; d--) {
      src += w->stride[d];
      if (++idx[d] < w->count[d]) break;
      src -= w->stride[d] * w->count[d];
      idx[d] = 0;
    }
    if (d < 0) break;
  }
}

/* Whether a walk reads runs of contiguous elements. */
static bool walk_in_runs(const shlo__la_walk *w) {
  return w->rank == 0 || w->stride[w->rank - 1] == 2;
}

/* Of an operand's two forms (plain, transposed), the one to read: in
 * place before in runs before element by element, the plain one on a
 * tie.  Whether it is the transposed one. */
static bool pick_transposed(const shlo__la_walk *plain,
                            const shlo__la_walk *trans) {
  if (walk_in_place(plain)) return false;
  if (walk_in_place(trans)) return true;
  return !walk_in_runs(plain) && walk_in_runs(trans);
}

/* An operand as a [B][rows][cols] bf16 array: in place or gathered into
 * *buf (to free).  NULL when out of memory. */
static const uint16_t *operand(const shlo__la_walk *w, const char *src,
                               int64_t count, uint16_t **buf) {
  *buf = NULL;
  if (walk_in_place(w)) return (const uint16_t *)(const void *)src;
  *buf = shlo__malloc((size_t)count * 2);
  if (!*buf) return NULL;
  gather_u16(w, *buf, src);
  return *buf;
}

typedef struct bf16_batches {
  bool ta, tb;
  int64_t m, n, k;
  const uint16_t *a, *b;
  float *c;
  shlo_block_done done;
  void *done_ctx;
  atomic_int declined, nomem;
} bf16_batches;

static void batch_range(void *ctx, int64_t lo, int64_t hi) {
  bf16_batches *j = ctx;
  int64_t m = j->m, n = j->n, k = j->k;
  for (int64_t i = lo; i < hi; i++) {
    if (atomic_load_explicit(&j->declined, memory_order_relaxed)) return;
    int r = shlo__gemm_bf16_serial(j->ta, j->tb, m, n, k, j->a + i * m * k,
                                   j->ta ? m : k, j->b + i * k * n,
                                   j->tb ? k : n, j->c + i * m * n, n);
    if (r == 0) atomic_store_explicit(&j->declined, 1, memory_order_relaxed);
    if (r < 0) atomic_store_explicit(&j->nomem, 1, memory_order_relaxed);
    if (r == 1 && j->done) j->done(j->done_ctx, i * m * n, (i + 1) * m * n);
  }
}

int shlo__dot_bf16(const shlo__la_walk *const w[4], int64_t nb, int64_t m,
                   int64_t n, int64_t k, const char *lhs, const char *rhs,
                   float *c, bool split_batch, shlo_block_done done,
                   void *done_ctx, shlo_exec *ex) {
  if (!shlo__gemm_bf16_available()) return 0;
  uint16_t *abuf = NULL, *bbuf = NULL;
  int result = -1;
  bool ta = pick_transposed(w[0], w[1]), tb = pick_transposed(w[2], w[3]);
  const uint16_t *a = operand(w[ta ? 1 : 0], lhs, nb * m * k, &abuf);
  const uint16_t *b = a ? operand(w[tb ? 3 : 2], rhs, nb * k * n, &bbuf) : NULL;
  if (!a || !b) goto out;
  bf16_batches job = {.ta = ta, .tb = tb, .m = m, .n = n, .k = k, .a = a, .b = b, .c = c};
  atomic_init(&job.declined, 0);
  atomic_init(&job.nomem, 0);
  if (split_batch) {
    /* whole GEMMs per thread, as linalg.c's f32 batches, each followed by
     * what reads its block (while it is in cache): once the operands are
     * known to be in the guard, no GEMM declines */
    if (done && (!shlo__gemm_bf16_in_guard(a, nb * m * k) ||
                 !shlo__gemm_bf16_in_guard(b, nb * k * n))) {
      result = 0;
      goto out;
    }
    job.done = done;
    job.done_ctx = done_ctx;
    int64_t grain = ((int64_t)1 << 18) / (m * n * k);
    shlo__parallel_for(nb, grain > 1 ? grain : 1, batch_range, &job);
  } else {
    for (int64_t i = 0; i < nb && !atomic_load(&job.declined); i++) {
      /* between GEMMs, as linalg.c's f32 loop does every 64 */
      if (i && i % 64 == 0 && shlo__exec_should_stop(ex)) {
        result = -2;
        goto out;
      }
      int r = shlo__gemm_bf16(ta, tb, m, n, k, a + i * m * k, ta ? m : k,
                              b + i * k * n, tb ? k : n, c + i * m * n, n);
      if (r == 0) atomic_store(&job.declined, 1);
      if (r < 0) atomic_store(&job.nomem, 1);
    }
  }
  result = atomic_load(&job.nomem) ? -1 : atomic_load(&job.declined) ? 0 : 1;
out:
  shlo__free(abuf);
  shlo__free(bbuf);
  return result;
}
