/* SPDX-License-Identifier: Apache-2.0 */
/* dot_general of bf16 operands with an f32 result on the bf16 GEMM
 * (gemm_bf16.h), for linalg.c: each operand is read as [B][M][K] or its
 * transpose [B][K][M] (rhs: [B][K][N] or [B][N][K]) bf16 matrices, in
 * place where its walk lays them out contiguously or as rows at one
 * stride (each matrix found from the walk's leading dimensions), else
 * walked into a copy (two bytes at a time, no conversion); then one bf16
 * GEMM per batch element, told which operands are transposed and their
 * row strides.  When the kernel declines (no AVX512_BF16, an input
 * outside its guard), the caller runs the widened f32 path for the whole
 * call, overwriting whatever was written. */
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

/* An operand as nb matrices of rows x cols bf16, rows ld elements apart:
 * read in place (contiguous, or with strides the walk gives) or gathered
 * into buf (to free).  Matrix i starts at base plus, for each leading
 * dimension d of the walk, i's digit in d times stride[d] bytes. */
typedef struct bf16_view {
  const char *base;
  int64_t ld, rows, cols;
  int nlead;
  int64_t count[SHLO_LA_WALK_MAX], stride[SHLO_LA_WALK_MAX];
  uint16_t *buf;
} bf16_view;

static void view_contiguous(bf16_view *v, const void *p, int64_t nb) {
  v->base = p;
  v->ld = v->cols;
  v->nlead = 1;
  v->count[0] = nb;
  v->stride[0] = v->rows * v->cols * 2;
}

/* Whether the walk reads nb matrices whose rows are runs of exactly cols
 * elements, rows at one stride: then they are read where they lie (the
 * attention's heads, [batch][seq][head][dim], are such matrices: a copy
 * of each operand cost as much as the small products' packing). */
static bool view_strided(bf16_view *v, const shlo__la_walk *w, int64_t nb,
                         const char *src) {
  if (w->empty || w->rank < 2) return false;
  int last = w->rank - 1;
  if (w->stride[last] != 2 || w->count[last] != v->cols ||
      w->count[last - 1] != v->rows || w->stride[last - 1] % 2 ||
      w->stride[last - 1] / 2 < v->cols)
    return false;
  int64_t batches = 1;
  for (int d = 0; d < last - 1; d++) batches *= w->count[d];
  if (batches != nb) return false;
  v->base = src + w->offset;
  v->ld = w->stride[last - 1] / 2;
  v->nlead = last - 1;
  for (int d = 0; d < last - 1; d++) {
    v->count[d] = w->count[d];
    v->stride[d] = w->stride[d];
  }
  return true;
}

static const uint16_t *view_matrix(const bf16_view *v, int64_t i) {
  const char *p = v->base;
  for (int d = v->nlead - 1; d >= 0; d--) {
    p += i % v->count[d] * v->stride[d];
    i /= v->count[d];
  }
  return (const uint16_t *)(const void *)p;
}

/* Whether every element of the view is in the bf16 GEMM's guard. */
static bool view_in_guard(const bf16_view *v, int64_t nb) {
  for (int64_t i = 0; i < nb; i++) {
    const uint16_t *x = view_matrix(v, i);
    if (v->ld == v->cols) {
      if (!shlo__gemm_bf16_in_guard(x, v->rows * v->cols)) return false;
      continue;
    }
    for (int64_t r = 0; r < v->rows; r++)
      if (!shlo__gemm_bf16_in_guard(x + r * v->ld, v->cols)) return false;
  }
  return true;
}

/* Of an operand's two forms (plain: rows x cols, transposed), the one to
 * read, into *v: in place contiguous, then in place with strides, then
 * gathered (pick_transposed's choice).  Whether it is the transposed one;
 * v->base NULL when out of memory. */
static bool operand_view(const shlo__la_walk *plain,
                         const shlo__la_walk *trans, int64_t nb,
                         int64_t rows, int64_t cols, const char *src,
                         bf16_view *v) {
  bf16_view form[2] = {{.rows = rows, .cols = cols},
                        {.rows = cols, .cols = rows}};
  const shlo__la_walk *w[2] = {plain, trans};
  for (int t = 0; t < 2; t++)
    if (walk_in_place(w[t])) {
      *v = form[t];
      view_contiguous(v, src, nb);
      return t;
    }
  for (int t = 0; t < 2; t++)
    if (view_strided(&form[t], w[t], nb, src)) {
      *v = form[t];
      return t;
    }
  int t = pick_transposed(plain, trans);
  *v = form[t];
  v->buf = shlo__malloc((size_t)(nb * rows * cols) * 2);
  if (!v->buf) {
    v->base = NULL;
    return t;
  }
  gather_u16(w[t], v->buf, src);
  view_contiguous(v, v->buf, nb);
  return t;
}

typedef struct bf16_batches {
  bool ta, tb;
  int64_t m, n, k;
  const bf16_view *a, *b;
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
    int r = shlo__gemm_bf16_serial(j->ta, j->tb, m, n, k, view_matrix(j->a, i),
                                   j->a->ld, view_matrix(j->b, i), j->b->ld,
                                   j->c + i * m * n, n);
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
  bf16_view va = {0}, vb = {0};
  int result = -1;
  bool ta = operand_view(w[0], w[1], nb, m, k, lhs, &va);
  bool tb = va.base ? operand_view(w[2], w[3], nb, k, n, rhs, &vb) : false;
  if (!va.base || !vb.base) goto out;
  bf16_batches job = {.ta = ta, .tb = tb, .m = m, .n = n, .k = k,
                      .a = &va, .b = &vb, .c = c};
  atomic_init(&job.declined, 0);
  atomic_init(&job.nomem, 0);
  if (split_batch) {
    /* whole GEMMs per thread, as linalg.c's f32 batches, each followed by
     * what reads its block (while it is in cache): once the operands are
     * known to be in the guard, no GEMM declines */
    if (done && (!view_in_guard(&va, nb) || !view_in_guard(&vb, nb))) {
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
      int r = shlo__gemm_bf16(ta, tb, m, n, k, view_matrix(&va, i), va.ld,
                              view_matrix(&vb, i), vb.ld, c + i * m * n, n);
      if (r == 0) atomic_store(&job.declined, 1);
      if (r < 0) atomic_store(&job.nomem, 1);
    }
  }
  result = atomic_load(&job.nomem) ? -1 : atomic_load(&job.declined) ? 0 : 1;
out:
  shlo__free(va.buf);
  shlo__free(vb.buf);
  return result;
}
