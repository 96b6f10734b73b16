/* SPDX-License-Identifier: Apache-2.0 */
/* Linear algebra: dot_general (and the legacy dot), triangular_solve,
 * cholesky and the three batch_norm ops.
 *
 * dot_general packs each operand into [batch, M, K] x [batch, K, N] in the
 * compute domain of the result (linalg_int.h) and runs one GEMM per batch
 * element: OpenBLAS for f32/f64/complex (operands already in that layout,
 * or its transpose, are used in place), native loops for integers (wrapping
 * at the result's width) and i1 (and/or); narrow floats go through f64 and
 * are rounded once.  triangular_solve uses cblas_?trsm per batch element
 * (narrow floats through f64); cholesky is a plain per-matrix algorithm in
 * f64 / complex<f64>; batch norm runs in f64.  All geometry is fixed at
 * compile time. */
#include <assert.h>
#include <complex.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "core/alloc.h"
#include "core/floatfmt.h"
#include "core/value.h"
#include "kernels/dot_bf16.h"
#include "kernels/linalg_int.h"
#include "core/tensor_uninit.h"
#include "kernels/kernel.h"
#include "kernels/gemm_panels.h"
#include "kernels/pack_scope.h"
#include "compile/plan.h"
#include "runtime/pool.h"

/* ---- compile-time helpers ---- */

static shlo_status no_mem(shlo_compiler *cc, const shlo_op *op) {
  return shlo__cc_fail(cc, op, SHLO_ENOMEM, "out of memory");
}

static shlo_value *new_result(const shlo_step *s, shlo_exec *ex,
                              shlo_elem_type t, int rank,
                              const int64_t *dims) {
  shlo_value *v = shlo_tensor_new(t, rank, dims);
  if (!v) shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory for the result");
  return v;
}

static shlo_status oom(const shlo_step *s, shlo_exec *ex) {
  return shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory for scratch");
}

/* A list attribute field of a struct (missing = empty). */
static int field_ints(const shlo_attr *st, const char *name, int64_t *out) {
  const shlo_attr *f = st ? shlo_attr_field(st, name) : NULL;
  if (!f) return 0;
  return shlo_attr_i64s(f, out, SHLO_MAX_RANK);
}

/* ==== dot_general ==== */

enum { DOT_PACK, DOT_DIRECT, DOT_DIRECT_T };

typedef struct dot_params {
  shlo__la_dom dom;
  shlo_elem_type lt, rt, ot;
  int64_t nb, m, n, k;
  int out_rank;
  int64_t out_dims[SHLO_MAX_RANK];
  shlo__la_walk lw, rw; /* lhs -> [B][M][K], rhs -> [B][K][N] */
  int lmode, rmode;     /* DOT_PACK or used in place (transposed or not) */
  bool bf16;            /* may take the bf16 GEMM (dot_bf16.h) */
  shlo__la_walk lw_t, rw_t; /* with bf16: [B][K][M] and [B][N][K] */
} dot_params;

/* One GEMM per batch element, for batch elements [lo, hi); with epi (f32
 * only), it is applied to each element's block of C, in the panels'
 * registers when `panels` (the GEMM would run through them anyway);
 * with done, that is told of the block as soon as it is final. */
typedef struct dot_batches {
  const dot_params *p;
  const char *a, *b;
  char *c;
  const shlo__gemm_epi *epi;
  bool panels;
  shlo_block_done done;
  void *done_ctx;
} dot_batches;

static void dot_batch_range(void *ctx, int64_t lo, int64_t hi) {
  const dot_batches *j = ctx;
  const dot_params *p = j->p;
  int64_t m = p->m, n = p->n, k = p->k, es = (int64_t)shlo__la_dom_size(p->dom);
  bool ta = p->lmode == DOT_DIRECT_T, tb = p->rmode == DOT_DIRECT_T;
  for (int64_t i = lo; i < hi; i++) {
    const char *a = j->a + i * m * k * es, *b = j->b + i * k * n * es;
    char *c = j->c + i * m * n * es;
    shlo__gemm_epi e = j->epi ? *j->epi : (shlo__gemm_epi){0};
    if (e.res) e.res += i * m * e.ldres; /* this element's rows */
    if (!j->panels ||
        !shlo__sgemm_panels_epi(ta, tb, m, n, k, (const float *)a,
                                ta ? m : k, (const float *)b, tb ? k : n,
                                (float *)c, n, &e)) {
      shlo__la_gemm(p->dom, ta, tb, m, n, k, a, ta ? m : k, b, tb ? k : n, c,
                    n);
      if (j->epi) shlo__gemm_epi_apply(&e, m, n, (float *)c, n);
    }
    if (j->done) j->done(j->done_ctx, i * m * n, (i + 1) * m * n);
  }
}

/* Multiply-adds of one batch element's GEMM below which batch elements
 * go to the pool in groups rather than one each. */
#define DOT_BATCH_GRAIN_WORK ((int64_t)1 << 18)

/* Whether the batch splits across the pool, each thread running whole
 * GEMMs (single-threaded, no split of one GEMM's rows or columns: fewer
 * joins and packing copies), rather than each GEMM splitting in turn:
 * when the batch elements share out evenly among the threads. */
static bool dot_split_batch(const dot_params *p) {
  int threads = shlo__pool_threads();
  return threads > 1 && p->nb > 1 &&
         (p->nb % threads == 0 || p->nb >= 4 * threads);
}

/* done over whole rows of the result (n: its last dimension), from the
 * pool. */
typedef struct dot_rows_done {
  shlo_block_done done;
  void *ctx;
  int64_t n;
} dot_rows_done;

static void dot_rows_done_range(void *ctx, int64_t lo, int64_t hi) {
  const dot_rows_done *d = ctx;
  d->done(d->ctx, lo * d->n, hi * d->n);
}

/* done of every row of the result, from the pool. */
static void dot_tell_rows(const dot_params *p, shlo_block_done done,
                          void *done_ctx) {
  int64_t row = p->out_rank ? p->out_dims[p->out_rank - 1] : 1;
  dot_rows_done rows = {done, done_ctx, row};
  int64_t grain = (1 << 14) / row;
  shlo__parallel_for(p->nb * p->m * p->n / row, grain > 1 ? grain : 1,
                     dot_rows_done_range, &rows);
}

/* The packed form of rhs where it is a matrix a running while carries
 * unchanged (pack_scope.h) and the product would run through the GEMM
 * panels anyway (the bytes stay the same); NULL otherwise. */
static const shlo__sgemm_packed *dot_loop_pack(const dot_params *p,
                                               const shlo_value *rhs,
                                               shlo_exec *ex) {
  if (p->dom != LA_F32 || p->rt != SHLO_F32 || p->ot != SHLO_F32 ||
      p->nb != 1 || p->rmode == DOT_PACK ||
      !shlo__la_gemm_f32_all_panels(p->m, p->n, p->k) ||
      !shlo__sgemm_panels_takes(p->m, p->n, p->k))
    return NULL;
  bool tb = p->rmode == DOT_DIRECT_T;
  return shlo__pack_scope_find(ex, rhs, tb, p->k, p->n, tb ? p->k : p->n);
}

/* epi on whole rows of an f32 result, n floats each, as the blocks of it
 * are told done, then the caller's done (NULL: none) of the same block:
 * the residual's rows moved to the block's first. */
typedef struct dot_epi_rows {
  const shlo__gemm_epi *epi;
  float *c;
  int64_t n;
  shlo_block_done done;
  void *ctx;
} dot_epi_rows;

static void dot_epi_block(void *ctx, int64_t lo, int64_t hi) {
  const dot_epi_rows *d = ctx;
  shlo__gemm_epi e = *d->epi;
  if (e.res) e.res += lo / d->n * e.ldres;
  shlo__gemm_epi_apply(&e, (hi - lo) / d->n, d->n, d->c + lo, d->n);
  if (d->done) d->done(d->ctx, lo, hi);
}

/* C (v, uninitialised; nb, m, n, k all nonzero) = the GEMMs of in[0] and
 * in[1], then epi (NULL: none; f32 only) on every element, telling done of
 * its blocks when it is not NULL. */
static shlo_status dot_compute(const shlo_step *s, const dot_params *p,
                               shlo_value *const *in, shlo_value *v,
                               const shlo__gemm_epi *epi,
                               shlo_block_done done, void *done_ctx,
                               shlo_exec *ex) {
  int64_t nb = p->nb, m = p->m, n = p->n, k = p->k;
  /* outside the batches split over the pool, epi goes over each block
   * as it is told done, before the caller's done */
  dot_epi_rows after = {epi, v->data,
                        p->out_rank ? p->out_dims[p->out_rank - 1] : 1, done,
                        done_ctx};
  shlo_block_done batch_done = done;
  void *batch_ctx = done_ctx;
  if (shlo__gemm_epi_any(epi)) {
    done = dot_epi_block;
    done_ctx = &after;
  } else {
    epi = NULL;
  }
  size_t es = shlo__la_dom_size(p->dom);
  void *abuf = NULL, *bbuf = NULL, *cbuf = NULL;
  const char *a = in[0]->data, *b = in[1]->data;
  char *c = v->data;
  if (p->bf16) { /* the bf16 GEMM, unless it declines the call */
    const shlo__la_walk *w[4] = {&p->lw, &p->lw_t, &p->rw, &p->rw_t};
    bool split = dot_split_batch(p);
    int r = shlo__dot_bf16(w, nb, m, n, k, a, b, (float *)(void *)c, split,
                           done, done_ctx, ex);
    if (r == -2) return shlo__exec_stopped(ex, s);
    if (r < 0) return oom(s, ex);
    if (r > 0) {
      if (done && !split) dot_tell_rows(p, done, done_ctx);
      return SHLO_OK;
    }
  }
  if (p->lmode == DOT_PACK) {
    abuf = shlo__malloc((size_t)(nb * m * k) * es);
    if (!abuf) goto nomem;
    shlo__la_gather(&p->lw, p->dom, p->lt, abuf, in[0]->data);
    a = abuf;
  }
  if (p->rmode == DOT_PACK) {
    bbuf = shlo__malloc((size_t)(nb * k * n) * es);
    if (!bbuf) goto nomem;
    shlo__la_gather(&p->rw, p->dom, p->rt, bbuf, in[1]->data);
    b = bbuf;
  }
  bool direct_out = shlo__la_native(p->dom, p->ot);
  if (!direct_out) {
    cbuf = shlo__malloc((size_t)(nb * m * n) * es);
    if (!cbuf) goto nomem;
    c = cbuf;
  }
  dot_batches job = {p, a, b, c, NULL, false, NULL, NULL};
  const shlo__sgemm_packed *pb = dot_loop_pack(p, in[1], ex);
  bool ta = p->lmode == DOT_DIRECT_T;
  if (pb && shlo__sgemm_prepacked(ta, m, (const float *)a, ta ? m : k, pb,
                                  (float *)c, n)) {
    if (done) { /* as below: whole rows of the result, from the pool */
      int64_t row = p->out_rank ? p->out_dims[p->out_rank - 1] : 1;
      dot_rows_done rows = {done, done_ctx, row};
      int64_t grain = (1 << 14) / row;
      shlo__parallel_for(m * n / row, grain > 1 ? grain : 1,
                         dot_rows_done_range, &rows);
    }
  } else if (dot_split_batch(p)) {
    /* each thread's GEMMs, then at once what follows them: epi in the
     * panels' registers where they make each GEMM whole anyway */
    job.epi = epi;
    job.panels = epi && shlo__la_gemm_f32_all_panels(m, n, k);
    job.done = batch_done;
    job.done_ctx = batch_ctx;
    int64_t grain = DOT_BATCH_GRAIN_WORK / (m * n * k);
    shlo__parallel_for(nb, grain > 1 ? grain : 1, dot_batch_range, &job);
  } else {
    for (int64_t i = 0; i < nb; i += 64) {
      if (i && shlo__exec_should_stop(ex)) {
        shlo__free(abuf), shlo__free(bbuf), shlo__free(cbuf);
        return shlo__exec_fail(ex, s, SHLO_ECANCELED, "stopped");
      }
      dot_batch_range(&job, i, i + 64 < nb ? i + 64 : nb);
    }
    if (done) /* the GEMMs had the threads: the rows go to the pool */
      dot_tell_rows(p, done, done_ctx);
  }
  if (!direct_out)
    shlo__la_store(p->dom, p->ot, v->data, (int64_t)shlo_elem_size(p->ot),
                   cbuf, nb * m * n);
  shlo__free(abuf), shlo__free(bbuf), shlo__free(cbuf);
  return SHLO_OK;
nomem:
  shlo__free(abuf), shlo__free(bbuf), shlo__free(cbuf);
  return oom(s, ex);
}

static shlo_status k_dot(const shlo_step *s, shlo_value *const *in,
                         shlo_value **out, shlo_exec *ex) {
  const dot_params *p = s->params;
  int64_t nb = p->nb, m = p->m, n = p->n, k = p->k;
  bool zeros = nb == 0 || m == 0 || n == 0 || k == 0;
  /* otherwise every GEMM (BLAS with beta 0 too) writes all of its C */
  shlo_value *v =
      zeros ? shlo_tensor_new(p->ot, p->out_rank, p->out_dims)
            : shlo__tensor_new_uninit(p->ot, p->out_rank, p->out_dims);
  if (!v)
    return shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory for the result");
  shlo_status st =
      zeros ? SHLO_OK : dot_compute(s, p, in, v, NULL, NULL, NULL, ex);
  if (st) {
    shlo_value_unref(v);
    return st;
  }
  out[0] = v;
  return SHLO_OK;
}

/* shlo_step.loop.run_blocks of a dot_general whose result is the product of
 * its operands' native type: blocks of whole batch elements where the
 * batch splits over the pool, else whole rows of the result once every
 * GEMM is done. */
static shlo_status dot_run_blocks(const shlo_step *s, shlo_value *const *in,
                                  shlo_value *result, shlo_block_done done,
                                  void *ctx, shlo_exec *ex) {
  return dot_compute(s, s->params, in, result, NULL, done, ctx, ex);
}

/* The product through the GEMM by panels with the epilogue in its
 * registers (gemm_panels.h), each thread a block of rows of c whose rows
 * of a are read in place through pointers.  Each element is the panels'
 * fmaf chain over k in any blocking, so this gives k_dot's bytes where
 * la_gemm runs every block of it through the panels too. */
typedef struct dot_panels_job {
  const float *const *rows; /* a's rows */
  const float *b;
  float *c;
  int64_t n, k;
  const shlo__gemm_epi *epi;
  atomic_int failed; /* a panel's copy could not be allocated */
} dot_panels_job;

static void dot_panels_rows(void *ctx, int64_t lo, int64_t hi) {
  dot_panels_job *j = ctx;
  shlo__gemm_epi e = *j->epi;
  if (e.res) e.res += lo * e.ldres;
  if (!shlo__sgemm_panels_gathered_epi(hi - lo, j->n, 1, j->k, j->rows + lo,
                                       j->b, j->n, j->c + lo * j->n, j->n,
                                       &e))
    atomic_store(&j->failed, 1);
}

/* Rows of c per thread for dot_panels_rows, or 0 where the product is
 * not one the panels take whole, in blocks of rows, as k_dot would. */
static int64_t dot_panels_grain(const dot_params *p) {
  if (p->bf16 || p->nb != 1 || p->lt != SHLO_F32 || p->rt != SHLO_F32 ||
      p->lmode != DOT_DIRECT || p->rmode != DOT_DIRECT ||
      !shlo__la_gemm_f32_all_panels(p->m, p->n, p->k))
    return 0;
  int threads = shlo__pool_threads();
  int64_t grain = (p->m + threads - 1) / threads;
  /* a lone small product stays on the calling thread, as in la_gemm */
  if (p->m * p->n * p->k < ((int64_t)1 << 18)) grain = p->m;
  return shlo__sgemm_panels_takes(grain, p->n, p->k) ? grain : 0;
}

/* dot_panels_rows over all of c; false where the panels could not run
 * (out of memory for a copy: the caller makes c the other way). */
static bool dot_panels_epi(const dot_params *p, int64_t grain,
                                  const float *a, const float *b, float *c,
                                  const shlo__gemm_epi *epi) {
  const float **rows = shlo__malloc((size_t)p->m * sizeof *rows);
  if (!rows) return false;
  for (int64_t r = 0; r < p->m; r++) rows[r] = a + r * p->k;
  dot_panels_job j = {rows, b, c, p->n, p->k, epi, 0};
  shlo__parallel_for(p->m, grain, dot_panels_rows, &j);
  shlo__free(rows);
  return !atomic_load(&j.failed);
}

/* shlo_step.loop.run_epi of an f32 dot_general: the GEMM as run_blocks
 * makes it, then epi on each element.  Where the loop's packed weights
 * take the product (an LSTM's recurrent step), each 64-column panel gets
 * it right after it is made, on that thread; where the GEMM by panels
 * takes the product, or each GEMM of a batch split over the threads, it
 * runs in the panels' registers; elsewhere (the products OpenBLAS makes)
 * each block of rows gets it as it is told done (the same blocks as an
 * epilogue run has, without its broadcasts and scratch).  The GEMM's
 * calls are those of k_dot, and shlo__gemm_epi_apply gives the ops' own
 * bits: the bytes are those of the steps one by one.  done, where the
 * whole product is made at once, is told of its rows after it. */
static shlo_status dot_run_epi(const shlo_step *s, shlo_value *const *in,
                               shlo_value *result, const shlo__gemm_epi *epi,
                               shlo_block_done done, void *ctx,
                               shlo_exec *ex) {
  const dot_params *p = s->params;
  float *c = result->data;
  const shlo__sgemm_packed *pb = p->bf16 ? NULL : dot_loop_pack(p, in[1], ex);
  bool ta = p->lmode == DOT_DIRECT_T;
  int64_t grain = dot_panels_grain(p);
  if ((pb && shlo__sgemm_prepacked_epi(ta, p->m, in[0]->data,
                                       ta ? p->m : p->k, pb, c, p->n, epi)) ||
      (grain &&
       dot_panels_epi(p, grain, in[0]->data, in[1]->data, c, epi))) {
    if (done) dot_tell_rows(p, done, ctx);
    return SHLO_OK;
  }
  return dot_compute(s, p, in, result, epi, done, ctx, ex);
}

/* Whether dims order[0..r) is 0, 1, ..., r-1. */
static bool is_identity(const int64_t *order, int r) {
  for (int i = 0; i < r; i++)
    if (order[i] != i) return false;
  return true;
}

/* dot_general's dimension lists: batching, contracting and (derived) free
 * dims of each side. */
typedef struct dot_dims {
  int64_t lb[SHLO_MAX_RANK], rb[SHLO_MAX_RANK];
  int64_t lc[SHLO_MAX_RANK], rc[SHLO_MAX_RANK];
  int64_t lfree[SHLO_MAX_RANK], rfree[SHLO_MAX_RANK];
  int nlb, nrb, nlc, nrc, nlf, nrf;
} dot_dims;

/* Read the batching and contracting lists (legacy dot: lhs's last with
 * rhs's first).  The verifier checked them (dot C1, dot_general C1-C2). */
static void dot_read_dims(const shlo_op *op, const shlo_type *lt,
                          dot_dims *d) {
  if (op->code == SHLO_OP_DOT) {
    assert(lt->rank >= 1 && lt->rank <= 2);
    d->nlb = d->nrb = 0;
    d->nlc = d->nrc = 1;
    d->lc[0] = lt->rank - 1;
    d->rc[0] = 0;
  } else {
    const shlo_attr *dn = shlo_op_attr(op, "dot_dimension_numbers");
    d->nlb = field_ints(dn, "lhs_batching_dimensions", d->lb);
    d->nrb = field_ints(dn, "rhs_batching_dimensions", d->rb);
    d->nlc = field_ints(dn, "lhs_contracting_dimensions", d->lc);
    d->nrc = field_ints(dn, "rhs_contracting_dimensions", d->rc);
  }
  assert(d->nlb >= 0 && d->nlb <= SHLO_MAX_RANK && d->nlb == d->nrb);
  assert(d->nlc >= 0 && d->nlc <= SHLO_MAX_RANK && d->nlc == d->nrc);
}

/* The free dims of each side, in order.  The verifier checked the lists
 * (dot_general C3-C10, dot C2): in range, unique, sizes matching. */
static void dot_free_dims(const shlo_type *lt, const shlo_type *rt,
                          dot_dims *d) {
  /* role of each dim: 0 free, 1 batch, 2 contracting */
  int lrole[SHLO_MAX_RANK] = {0}, rrole[SHLO_MAX_RANK] = {0};
  int nlb = d->nlb, nlc = d->nlc;
  for (int side = 0; side < 2; side++) {
    int *role = side ? rrole : lrole;
    const int64_t *bd = side ? d->rb : d->lb, *cd = side ? d->rc : d->lc;
    for (int i = 0; i < nlb + nlc; i++) {
      int64_t x = i < nlb ? bd[i] : cd[i - nlb];
      assert(x >= 0 && x < (side ? rt : lt)->rank && !role[x]);
      role[x] = i < nlb ? 1 : 2;
    }
  }
  d->nlf = d->nrf = 0;
  for (int x = 0; x < lt->rank; x++)
    if (!lrole[x]) d->lfree[d->nlf++] = x;
  for (int x = 0; x < rt->rank; x++)
    if (!rrole[x]) d->rfree[d->nrf++] = x;
}

/* order = the lists a (na), b (nb), c (nc) one after another; returns the
 * total length. */
static int concat3(int64_t *order, const int64_t *a, int na,
                   const int64_t *b, int nb, const int64_t *c, int nc) {
  int r = 0;
  for (int i = 0; i < na; i++) order[r++] = a[i];
  for (int i = 0; i < nb; i++) order[r++] = b[i];
  for (int i = 0; i < nc; i++) order[r++] = c[i];
  return r;
}

/* A walk of t's dims in order[0..r). */
static void dot_walk(shlo__la_walk *w, const shlo_type *t,
                     const int64_t *order, int r) {
  int64_t tstr[SHLO_MAX_RANK], cnt[SHLO_MAX_RANK], str[SHLO_MAX_RANK];
  shlo_strides(t->rank, t->dims, tstr);
  for (int i = 0; i < r; i++) cnt[i] = t->dims[order[i]], str[i] = tstr[order[i]];
  shlo__la_walk_init(w, r, cnt, str, 0, shlo_elem_size(t->elem));
}

/* How an operand of type t reaches the GEMM: in place when it is laid out
 * as `order` (DOT_DIRECT) or as `alt` (its transposed form, DOT_DIRECT_T)
 * and stored as the domain stores it; packed otherwise. */
static int dot_operand_mode(const dot_params *p, const shlo_type *t,
                            const int64_t *order, const int64_t *alt) {
  if (!shlo__la_native(p->dom, t->elem)) return DOT_PACK;
  if (is_identity(order, t->rank)) return DOT_DIRECT;
  /* the native integer/bool loops take any layout too, but the transposed
   * forms are only worth it for BLAS; keep them packed otherwise */
  if (is_identity(alt, t->rank) && p->dom != LA_INT && p->dom != LA_BOOL)
    return DOT_DIRECT_T;
  return DOT_PACK;
}

/* stablehlo.dot_general: result[batch..., lhs free..., rhs free...] =
 * sum over the contracting indices of lhs * rhs.  The verifier checked the
 * dimension lists and the result shape (dot_general C1-C12).  Legacy
 * stablehlo.dot contracts lhs's last dimension with rhs's first. */
shlo_status shlo__compile_dot_general(shlo_compiler *cc, const shlo_op *op,
                                     shlo_step *step) {
  shlo_status st;
  assert(op->n_operands == 2 && op->n_results == 1);
  const shlo_type *lt = NULL, *rt = NULL, *ot = NULL;
  dot_dims d;
  if ((st = shlo__la_lhs_rhs_result(cc, op, &lt, &rt, &ot))) return st;
  dot_read_dims(op, lt, &d);
  dot_free_dims(lt, rt, &d);
  assert(d.nlb + d.nlf + d.nrf == ot->rank);
  dot_params *p = shlo__params_alloc(step, sizeof *p);
  if (!p) return no_mem(cc, op);
  p->dom = shlo__la_dom_for(ot->elem);
  p->lt = lt->elem;
  p->rt = rt->elem;
  p->ot = ot->elem;
  p->bf16 = shlo__dot_bf16_applies(op, lt->elem, rt->elem, ot->elem);
  p->out_rank = ot->rank;
  memcpy(p->out_dims, ot->dims, sizeof p->out_dims);
  p->nb = p->m = p->n = p->k = 1;
  for (int i = 0; i < d.nlb; i++) p->nb *= lt->dims[d.lb[i]];
  for (int i = 0; i < d.nlc; i++) p->k *= lt->dims[d.lc[i]];
  for (int i = 0; i < d.nlf; i++) p->m *= lt->dims[d.lfree[i]];
  for (int i = 0; i < d.nrf; i++) p->n *= rt->dims[d.rfree[i]];
  /* lhs walks as [B, M, K], rhs as [B, K, N]; in place they may also be
   * [B, K, M] and [B, N, K] */
  int64_t order[SHLO_MAX_RANK], alt[SHLO_MAX_RANK];
  int r = concat3(order, d.lb, d.nlb, d.lfree, d.nlf, d.lc, d.nlc);
  concat3(alt, d.lb, d.nlb, d.lc, d.nlc, d.lfree, d.nlf);
  dot_walk(&p->lw, lt, order, r);
  if (p->bf16) dot_walk(&p->lw_t, lt, alt, r);
  p->lmode = dot_operand_mode(p, lt, order, alt);
  r = concat3(order, d.rb, d.nrb, d.rc, d.nrc, d.rfree, d.nrf);
  concat3(alt, d.rb, d.nrb, d.rfree, d.nrf, d.rc, d.nrc);
  dot_walk(&p->rw, rt, order, r);
  if (p->bf16) dot_walk(&p->rw_t, rt, alt, r);
  p->rmode = dot_operand_mode(p, rt, order, alt);
  step->fn = k_dot;
  if (p->nb && p->m && p->n && p->k && shlo__la_native(p->dom, p->ot))
    step->loop.run_blocks = dot_run_blocks;
  if (step->loop.run_blocks && p->dom == LA_F32 && p->ot == SHLO_F32 &&
      p->out_rank >= 1)
    step->loop.run_epi = dot_run_epi;
  return SHLO_OK;
}

/* ==== triangular_solve ==== */

typedef struct tri_params {
  shlo__la_dom dom; /* F32, F64, C64 or C128 */
  shlo_elem_type at, bt, ot;
  int rank;
  int64_t dims[SHLO_MAX_RANK]; /* result (= b) shape */
  int64_t batch, m, n, asz;    /* b is [batch, m, n]; a is [batch, asz, asz] */
  bool left, lower, unit;
  int trans; /* CblasNoTrans, CblasTrans, CblasConjTrans */
} tri_params;

static void trsm(const tri_params *p, const void *a, void *b) {
  enum CBLAS_SIDE side = p->left ? CblasLeft : CblasRight;
  enum CBLAS_UPLO uplo = p->lower ? CblasLower : CblasUpper;
  enum CBLAS_TRANSPOSE tr = (enum CBLAS_TRANSPOSE)p->trans;
  enum CBLAS_DIAG diag = p->unit ? CblasUnit : CblasNonUnit;
  blasint m = (blasint)p->m, n = (blasint)p->n, lda = (blasint)p->asz,
          ldb = (blasint)p->n;
  switch (p->dom) {
  case LA_F32:
    cblas_strsm(CblasRowMajor, side, uplo, tr, diag, m, n, 1.0f, a, lda, b, ldb);
    break;
  case LA_F64:
    cblas_dtrsm(CblasRowMajor, side, uplo, tr, diag, m, n, 1.0, a, lda, b, ldb);
    break;
  case LA_C64: {
    const float one[2] = {1, 0};
    cblas_ctrsm(CblasRowMajor, side, uplo, tr, diag, m, n, one, a, lda, b, ldb);
    break;
  }
  case LA_C128: {
    const double one[2] = {1, 0};
    cblas_ztrsm(CblasRowMajor, side, uplo, tr, diag, m, n, one, a, lda, b, ldb);
    break;
  }
  default:
    break;
  }
}

static shlo_status k_triangular_solve(const shlo_step *s,
                                      shlo_value *const *in, shlo_value **out,
                                      shlo_exec *ex) {
  const tri_params *p = s->params;
  shlo_value *v = new_result(s, ex, p->ot, p->rank, p->dims);
  if (!v) return SHLO_ENOMEM;
  int64_t bn = p->m * p->n, an = p->asz * p->asz, total = p->batch * bn;
  if (total == 0) {
    out[0] = v;
    return SHLO_OK;
  }
  size_t es = shlo__la_dom_size(p->dom);
  void *abuf = NULL, *bbuf = NULL;
  const char *a = in[0]->data;
  char *b = v->data;
  bool native_b = shlo__la_native(p->dom, p->ot);
  if (!shlo__la_native(p->dom, p->at)) {
    abuf = shlo__malloc((size_t)(p->batch * an) * es);
    if (!abuf) goto nomem;
    shlo__la_load(p->dom, p->at, abuf, in[0]->data, p->batch * an,
                  (int64_t)shlo_elem_size(p->at));
    a = abuf;
  }
  if (!native_b) {
    bbuf = shlo__malloc((size_t)total * es);
    if (!bbuf) goto nomem;
    b = bbuf;
  }
  shlo__la_load(p->dom, p->bt, b, in[1]->data, total,
                (int64_t)shlo_elem_size(p->bt));
  for (int64_t i = 0; i < p->batch; i++) {
    if ((i & 63) == 63 && shlo__exec_should_stop(ex)) {
      shlo__free(abuf), shlo__free(bbuf);
      shlo_value_unref(v);
      return shlo__exec_fail(ex, s, SHLO_ECANCELED, "stopped");
    }
    trsm(p, a + i * an * (int64_t)es, b + i * bn * (int64_t)es);
  }
  if (!native_b)
    shlo__la_store(p->dom, p->ot, v->data, (int64_t)shlo_elem_size(p->ot), b,
                   total);
  shlo__free(abuf), shlo__free(bbuf);
  out[0] = v;
  return SHLO_OK;
nomem:
  shlo__free(abuf), shlo__free(bbuf);
  shlo_value_unref(v);
  return oom(s, ex);
}

static bool attr_bool(const shlo_op *op, const char *name, bool dflt) {
  int64_t v;
  const shlo_attr *a = shlo_op_attr(op, name);
  if (!a || !shlo_attr_get_i64(a, &v)) return dflt;
  return v != 0;
}

/* stablehlo.triangular_solve: solves op(a) * x = b (left_side) or
 * x * op(a) = b for x, batched over the leading dimensions; only the
 * `lower` (or upper) triangle of a is read; unit_diagonal takes its
 * diagonal as ones.  (C1) same element types, (C2) ranks >= 2 and equal,
 * (C3) a's matrices square, (C4) batch and solve dimensions agree, (C5)
 * result type = b's. */
shlo_status shlo__compile_triangular_solve(shlo_compiler *cc, const shlo_op *op,
                                          shlo_step *step) {
  shlo_status st;
  assert(op->n_operands == 2 && op->n_results == 1);
  const shlo_type *at = shlo__cc_operand_type(cc, op, 0);
  const shlo_type *bt = shlo__cc_operand_type(cc, op, 1);
  const shlo_type *ot = shlo__cc_result_type(cc, op, 0);
  if ((st = shlo__la_want_tensor(cc, op, at, "a")) ||
      (st = shlo__la_want_tensor(cc, op, bt, "b")) ||
      (st = shlo__la_want_tensor(cc, op, ot, "result")))
    return st;
  /* the verifier does not look at the element type */
  if (!shlo_elem_is_float(ot->elem) && !shlo_elem_is_complex(ot->elem))
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "element type %s is not floating-point or complex",
                        shlo_elem_name(ot->elem));
  /* the verifier checked ranks, square a, batch dims and b's type (C1-C5) */
  assert(at->rank >= 2 && at->rank == bt->rank && shlo_type_equal(bt, ot));
  int r = at->rank;
  tri_params *p = shlo__params_alloc(step, sizeof *p);
  if (!p) return no_mem(cc, op);
  p->left = attr_bool(op, "left_side", false);
  p->lower = attr_bool(op, "lower", false);
  p->unit = attr_bool(op, "unit_diagonal", false);
  const char *tr = shlo_attr_get_str(shlo_op_attr(op, "transpose_a"));
  if (!tr || !strcmp(tr, "NO_TRANSPOSE"))
    p->trans = CblasNoTrans;
  else if (!strcmp(tr, "TRANSPOSE"))
    p->trans = CblasTrans;
  else /* ADJOINT: the verifier allows no other */
    p->trans = CblasConjTrans;
  p->asz = at->dims[r - 1];
  p->m = bt->dims[r - 2];
  p->n = bt->dims[r - 1];
  assert((p->left ? p->m : p->n) == p->asz);
  p->batch = shlo__la_prod(bt->dims, r - 2);
  p->at = at->elem;
  p->bt = bt->elem;
  p->ot = ot->elem;
  p->rank = r;
  memcpy(p->dims, ot->dims, sizeof p->dims);
  switch (ot->elem) {
  case SHLO_F32: p->dom = LA_F32; break;
  case SHLO_C64: p->dom = LA_C64; break;
  case SHLO_C128: p->dom = LA_C128; break;
  default: p->dom = LA_F64; break;
  }
  /* the verifier does not compare a's element type with b's */
  if (shlo_elem_is_complex(ot->elem) != shlo_elem_is_complex(at->elem))
    return shlo__cc_fail(cc, op, SHLO_EVERIFY, "(C1) a and b element types differ");
  if (p->trans == CblasConjTrans && !shlo_elem_is_complex(ot->elem))
    p->trans = CblasTrans;
  step->fn = k_triangular_solve;
  return SHLO_OK;
}

/* ==== cholesky ==== */

typedef struct chol_params {
  bool cplx, lower;
  shlo_elem_type t;
  int rank;
  int64_t dims[SHLO_MAX_RANK];
  int64_t batch, n;
} chol_params;

/* Zero the strict upper triangle of an n x n matrix of elements of es
 * bytes, one row at a time.  The factor loops below clear it the same way
 * rather than walking down a column with i * n + j, which GCC (Release,
 * after inlining) showed could be reached with an index past any object:
 * every offset here is bounded by the row it is in. */
static void zero_upper(void *a, int64_t n, size_t es) {
  char *row = a;
  for (int64_t i = 0; i + 1 < n; i++, row += (size_t)n * es)
    memset(row + (size_t)(i + 1) * es, 0, (size_t)(n - i - 1) * es);
}

/* Factor one n x n matrix in place (row-major), reading the lower
 * triangle; the strict upper triangle is set to zero. */
static void chol_real(double *a, int64_t n) {
  for (int64_t j = 0; j < n; j++) {
    double *rj = a + j * n;
    double d = rj[j];
    for (int64_t k = 0; k < j; k++) d -= rj[k] * rj[k];
    d = sqrt(d);
    rj[j] = d;
    for (double *ri = rj + n; ri < a + n * n; ri += n) {
      double x = ri[j];
      for (int64_t k = 0; k < j; k++) x -= ri[k] * rj[k];
      ri[j] = x / d;
    }
  }
  zero_upper(a, n, sizeof *a);
}

static void chol_complex(double complex *a, int64_t n) {
  for (int64_t j = 0; j < n; j++) {
    double complex *rj = a + j * n;
    double d = creal(rj[j]);
    for (int64_t k = 0; k < j; k++)
      d -= creal(rj[k]) * creal(rj[k]) + cimag(rj[k]) * cimag(rj[k]);
    d = sqrt(d);
    rj[j] = d;
    for (double complex *ri = rj + n; ri < a + n * n; ri += n) {
      double complex x = ri[j];
      for (int64_t k = 0; k < j; k++) x -= ri[k] * conj(rj[k]);
      ri[j] = x / d;
    }
  }
  zero_upper(a, n, sizeof *a);
}

/* Transpose (conjugating when complex) an n x n matrix in place. */
static void adjoint_inplace(double *a, int64_t n, bool cplx) {
  for (int64_t i = 0; i < n; i++) {
    for (int64_t j = cplx ? i : i + 1; j < n; j++) {
      if (cplx) {
        double *x = a + 2 * (i * n + j), *y = a + 2 * (j * n + i);
        double xr = x[0], xi = x[1];
        x[0] = y[0], x[1] = -y[1];
        y[0] = xr, y[1] = -xi;
      } else {
        double t = a[i * n + j];
        a[i * n + j] = a[j * n + i];
        a[j * n + i] = t;
      }
    }
  }
}

static shlo_status k_cholesky(const shlo_step *s, shlo_value *const *in,
                              shlo_value **out, shlo_exec *ex) {
  const chol_params *p = s->params;
  shlo_value *v = new_result(s, ex, p->t, p->rank, p->dims);
  if (!v) return SHLO_ENOMEM;
  int64_t nn = p->n * p->n, total = p->batch * nn;
  if (total == 0) {
    out[0] = v;
    return SHLO_OK;
  }
  shlo__la_dom dom = p->cplx ? LA_C128 : LA_F64;
  size_t es = shlo__la_dom_size(dom);
  double *buf = shlo__malloc((size_t)total * es);
  if (!buf) {
    shlo_value_unref(v);
    return oom(s, ex);
  }
  shlo__la_load(dom, p->t, buf, in[0]->data, total,
                (int64_t)shlo_elem_size(p->t));
  int64_t step = nn * (p->cplx ? 2 : 1);
  for (int64_t b = 0; b < p->batch; b++) {
    if (shlo__exec_should_stop(ex)) {
      shlo__free(buf);
      shlo_value_unref(v);
      return shlo__exec_fail(ex, s, SHLO_ECANCELED, "stopped");
    }
    double *a = buf + b * step;
    /* upper: factor the adjoint's lower triangle, A = U^H U = L L^H with
     * L = U^H; so work on adjoint(A) and take the adjoint back */
    if (!p->lower) adjoint_inplace(a, p->n, p->cplx);
    if (p->cplx)
      chol_complex((double complex *)(void *)a, p->n);
    else
      chol_real(a, p->n);
    if (!p->lower) adjoint_inplace(a, p->n, p->cplx);
  }
  shlo__la_store(dom, p->t, v->data, (int64_t)shlo_elem_size(p->t), buf,
                 total);
  shlo__free(buf);
  out[0] = v;
  return SHLO_OK;
}

/* stablehlo.cholesky: the Cholesky factor of each matrix in the batch,
 * lower (A = L L^H) or upper (A = U^H U), reading only that triangle;
 * the other triangle of the result is zero here (implementation-defined
 * in the spec).  (C1) same type as the operand, (C2) rank >= 2, (C3)
 * square matrices. */
shlo_status shlo__compile_cholesky(shlo_compiler *cc, const shlo_op *op,
                                  shlo_step *step) {
  shlo_status st;
  assert(op->n_operands == 1 && op->n_results == 1);
  const shlo_type *at = shlo__cc_operand_type(cc, op, 0);
  const shlo_type *ot = shlo__cc_result_type(cc, op, 0);
  if ((st = shlo__la_want_tensor(cc, op, at, "a")) ||
      (st = shlo__la_want_tensor(cc, op, ot, "result")))
    return st;
  /* the verifier checked the type and the square matrices (C1-C3) */
  assert(shlo_type_equal(at, ot) && at->rank >= 2 &&
         at->dims[at->rank - 1] == at->dims[at->rank - 2]);
  /* the verifier does not look at the element type */
  if (!shlo_elem_is_float(at->elem) && !shlo_elem_is_complex(at->elem))
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "element type %s is not floating-point or complex",
                        shlo_elem_name(at->elem));
  chol_params *p = shlo__params_alloc(step, sizeof *p);
  if (!p) return no_mem(cc, op);
  p->cplx = shlo_elem_is_complex(at->elem);
  p->lower = attr_bool(op, "lower", false);
  p->t = at->elem;
  p->rank = at->rank;
  memcpy(p->dims, at->dims, sizeof p->dims);
  p->n = at->dims[at->rank - 1];
  p->batch = shlo__la_prod(at->dims, at->rank - 2);
  step->fn = k_cholesky;
  return SHLO_OK;
}

/* ==== batch_norm_training / _inference / _grad ==== */

typedef struct bn_params {
  int code;
  double eps;
  shlo_elem_type t;
  int rank;
  int64_t dims[SHLO_MAX_RANK];
  int64_t outer, nf, inner; /* operand viewed as [outer, nf, inner] */
} bn_params;

/* Load a tensor of n elements of type t into a new double array. */
static double *load_f64(shlo_elem_type t, const shlo_value *v, int64_t n) {
  double *d = shlo__malloc((size_t)(n ? n : 1) * sizeof *d);
  if (d && n) shlo__la_load(LA_F64, t, d, v->data, n, (int64_t)shlo_elem_size(t));
  return d;
}

/* Per-feature mean of x (or of x * y when y is not NULL). */
static void feature_mean(const bn_params *p, const double *x, const double *y,
                         double *out) {
  int64_t cnt = p->outer * p->inner;
  for (int64_t f = 0; f < p->nf; f++) out[f] = 0;
  for (int64_t o = 0; o < p->outer; o++)
    for (int64_t f = 0; f < p->nf; f++) {
      const double *xr = x + (o * p->nf + f) * p->inner;
      const double *yr = y ? y + (o * p->nf + f) * p->inner : NULL;
      double acc = 0;
      for (int64_t i = 0; i < p->inner; i++) acc += yr ? xr[i] * yr[i] : xr[i];
      out[f] += acc;
    }
  for (int64_t f = 0; f < p->nf; f++) out[f] = cnt ? out[f] / (double)cnt : 0;
}

/* Per-feature mean and variance: computed from the operand xo (training)
 * or taken from the mean and variance operands. */
static void bn_stats(const bn_params *p, double *const *x, double *mean,
                     double *var) {
  int64_t nf = p->nf;
  if (p->code == SHLO_OP_BATCH_NORM_TRAINING) {
    feature_mean(p, x[0], NULL, mean);
    feature_mean(p, x[0], x[0], var);
    for (int64_t f = 0; f < nf; f++) {
      var[f] -= mean[f] * mean[f];
      if (var[f] < 0) var[f] = 0;
    }
  } else {
    const double *mi = x[p->code == SHLO_OP_BATCH_NORM_GRAD ? 2 : 3];
    const double *vi = x[p->code == SHLO_OP_BATCH_NORM_GRAD ? 3 : 4];
    memcpy(mean, mi, (size_t)nf * sizeof *mean);
    memcpy(var, vi, (size_t)nf * sizeof *var);
  }
}

/* training / inference: res[0] = (x - mean) * scale / stddev + offset,
 * and (training) res[1], res[2] = mean, variance. */
static void bn_normalize(const bn_params *p, double *const *x,
                         const double *mean, const double *var, double *work,
                         shlo_value *const *res, int n_out) {
  int64_t nf = p->nf, n = p->outer * nf * p->inner;
  const double *xo = x[0], *scale = x[1], *offset = x[2];
  for (int64_t o = 0; o < p->outer; o++)
    for (int64_t f = 0; f < nf; f++) {
      double k = scale[f] / sqrt(var[f] + p->eps);
      int64_t base = (o * nf + f) * p->inner;
      for (int64_t i = 0; i < p->inner; i++)
        work[base + i] = (xo[base + i] - mean[f]) * k + offset[f];
    }
  shlo__la_store(LA_F64, p->t, res[0]->data, (int64_t)shlo_elem_size(p->t),
                 work, n);
  if (n_out == 3) {
    shlo__la_store(LA_F64, p->t, res[1]->data,
                   (int64_t)shlo_elem_size(p->t), mean, nf);
    shlo__la_store(LA_F64, p->t, res[2]->data,
                   (int64_t)shlo_elem_size(p->t), var, nf);
  }
}

/* batch_norm_grad, as the spec (from XLA's batchnorm_expander):
 * grad_operand = scale / stddev / N * (N * dy - sum(dy)
 *                - (x - mean) * sum(dy * (x - mean)) / (var + eps)),
 * grad_scale = sum(dy * centered / stddev), grad_offset = sum(dy).
 * r1 holds the mean on entry and is reused; false when out of memory. */
static bool bn_grad(const bn_params *p, double *const *x, double *r1,
                    const double *var, double *r3, double *work,
                    shlo_value *const *res) {
  int64_t nf = p->nf, n = p->outer * nf * p->inner;
  const double *xo = x[0], *scale = x[1], *dy = x[4];
  double cnt = (double)(p->outer * p->inner);
  double *sum_dy = r3, *sum_dyc = r1; /* r1 (mean) copied below */
  double *mean_c = shlo__malloc((size_t)(nf ? nf : 1) * sizeof *mean_c);
  double *gs = shlo__malloc((size_t)(nf ? nf : 1) * sizeof *gs);
  if (!mean_c || !gs) {
    shlo__free(mean_c);
    shlo__free(gs);
    return false;
  }
  memcpy(mean_c, r1, (size_t)nf * sizeof *mean_c);
  for (int64_t i = 0; i < n; i++) {
    int64_t f = (i / p->inner) % nf;
    work[i] = xo[i] - mean_c[f]; /* centered */
  }
  feature_mean(p, dy, NULL, sum_dy);
  feature_mean(p, dy, work, sum_dyc);
  for (int64_t f = 0; f < nf; f++) sum_dy[f] *= cnt, sum_dyc[f] *= cnt;
  for (int64_t f = 0; f < nf; f++) gs[f] = sum_dyc[f] / sqrt(var[f] + p->eps);
  for (int64_t i = 0; i < n; i++) {
    int64_t f = (i / p->inner) % nf;
    double ve = var[f] + p->eps;
    double i6 = dy[i] * cnt - sum_dy[f] - work[i] * sum_dyc[f] / ve;
    work[i] = scale[f] / sqrt(ve) / cnt * i6;
  }
  size_t es = shlo_elem_size(p->t);
  shlo__la_store(LA_F64, p->t, res[0]->data, (int64_t)es, work, n);
  shlo__la_store(LA_F64, p->t, res[1]->data, (int64_t)es, gs, nf);
  shlo__la_store(LA_F64, p->t, res[2]->data, (int64_t)es, sum_dy, nf);
  shlo__free(gs);
  shlo__free(mean_c);
  return true;
}

static shlo_status k_batch_norm(const shlo_step *s, shlo_value *const *in,
                                shlo_value **out, shlo_exec *ex) {
  const bn_params *p = s->params;
  int64_t n = p->outer * p->nf * p->inner, nf = p->nf;
  int n_in = p->code == SHLO_OP_BATCH_NORM_TRAINING ? 3 : 5;
  int n_out = p->code == SHLO_OP_BATCH_NORM_INFERENCE ? 1 : 3;
  double *x[5] = {NULL}, *work = NULL, *r1 = NULL, *r2 = NULL, *r3 = NULL;
  shlo_value *res[3] = {NULL};
  shlo_status st = SHLO_OK;
  for (int i = 0; i < n_in; i++) {
    int64_t cnt = (i == 0 || (p->code == SHLO_OP_BATCH_NORM_GRAD && i == 4))
                      ? n : nf;
    if (!(x[i] = load_f64(p->t, in[i], cnt))) goto nomem;
  }
  work = shlo__malloc((size_t)(n ? n : 1) * sizeof *work);
  r1 = shlo__malloc((size_t)(nf ? nf : 1) * sizeof *r1);
  r2 = shlo__malloc((size_t)(nf ? nf : 1) * sizeof *r2);
  r3 = shlo__malloc((size_t)(nf ? nf : 1) * sizeof *r3);
  if (!work || !r1 || !r2 || !r3) goto nomem;
  res[0] = new_result(s, ex, p->t, p->rank, p->dims);
  for (int i = 1; i < n_out; i++) res[i] = new_result(s, ex, p->t, 1, &p->nf);
  for (int i = 0; i < n_out; i++)
    if (!res[i]) {
      st = SHLO_ENOMEM;
      goto done;
    }
  bn_stats(p, x, r1, r2); /* mean in r1, variance in r2 */
  if (p->code != SHLO_OP_BATCH_NORM_GRAD)
    bn_normalize(p, x, r1, r2, work, res, n_out);
  else if (!bn_grad(p, x, r1, r2, r3, work, res))
    goto nomem;
  for (int i = 0; i < n_out; i++) out[i] = res[i], res[i] = NULL;
  goto done;
nomem:
  st = oom(s, ex);
done:
  for (int i = 0; i < 3; i++)
    if (res[i]) shlo_value_unref(res[i]);
  for (int i = 0; i < 5; i++) shlo__free(x[i]);
  shlo__free(work), shlo__free(r1), shlo__free(r2), shlo__free(r3);
  return st;
}

/* stablehlo.batch_norm_training (operand, scale, offset -> output,
 * batch_mean, batch_var), batch_norm_inference (operand, scale, offset,
 * mean, variance -> result) and batch_norm_grad (operand, scale, mean,
 * variance, grad_output -> grad_operand, grad_scale, grad_offset): per
 * feature `feature_index` normalisation, computed in f64.  (C1)
 * 0 <= feature_index < rank, (C2..) the 1-D operands have the feature
 * dimension's size, same element type throughout. */
shlo_status shlo__compile_batch_norm(shlo_compiler *cc, const shlo_op *op,
                                    shlo_step *step) {
  shlo_status st;
  int n_in = op->code == SHLO_OP_BATCH_NORM_TRAINING ? 3 : 5;
  int n_out = op->code == SHLO_OP_BATCH_NORM_INFERENCE ? 1 : 3;
  assert(op->n_operands == n_in && op->n_results == n_out);
  const shlo_type *xt = shlo__cc_operand_type(cc, op, 0);
  if ((st = shlo__la_want_tensor(cc, op, xt, "operand"))) return st;
  /* the verifier does not look at the element type */
  if (!shlo_elem_is_float(xt->elem))
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "element type %s is not floating-point",
                        shlo_elem_name(xt->elem));
  int64_t fi;
  double eps;
  /* the verifier takes a missing feature_index for 0 */
  if (!shlo_attr_get_i64(shlo_op_attr(op, "feature_index"), &fi) ||
      !shlo_attr_get_f64(shlo_op_attr(op, "epsilon"), &eps))
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "needs feature_index and epsilon attributes");
  /* the verifier checked feature_index and every operand's and result's
   * type (C1-C7); what is left is what this build runs */
  assert(fi >= 0 && fi < xt->rank);
  for (int i = 1; i < n_in + n_out; i++) {
    const shlo_type *t = i < n_in ? shlo__cc_operand_type(cc, op, i)
                                  : shlo__cc_result_type(cc, op, i - n_in);
    if ((st = shlo__la_want_tensor(cc, op, t, i < n_in ? "operand" : "result")))
      return st;
    assert(t->elem == xt->elem);
  }
  bn_params *p = shlo__params_alloc(step, sizeof *p);
  if (!p) return no_mem(cc, op);
  p->code = op->code;
  p->eps = eps;
  p->t = xt->elem;
  p->rank = xt->rank;
  memcpy(p->dims, xt->dims, sizeof p->dims);
  p->nf = xt->dims[fi];
  p->outer = shlo__la_prod(xt->dims, (int)fi);
  p->inner = shlo__la_prod(xt->dims + fi + 1, xt->rank - (int)fi - 1);
  step->fn = k_batch_norm;
  return SHLO_OK;
}
