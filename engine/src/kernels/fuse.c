/* SPDX-License-Identifier: Apache-2.0 */
/* Elementwise fusion.
 *
 * A run of consecutive steps that are pure loops over the same number of
 * elements (elementwise ops and convert, which set step->loop.range, and
 * broadcast_in_dim of a smaller operand, read in place) becomes one step.  It walks the elements
 * in cache-sized chunks, split across the pool, applying every member to
 * the chunk in turn; values used only inside the run live in per-chunk
 * scratch instead of whole tensors, so a chain of N ops reads and writes
 * memory once instead of N times.  Stretches of f32 lane ops go further:
 * each runs as one lane program (fuse_lanes.c), its values in registers.
 *
 * A rows group extends this across reductions of the last dimension (the
 * shape of softmax, layernorm, norms and log-sum-exp): around a reduce
 * over the last dimension of a shape F (R rows of C), consecutive steps
 * join when they are elementwise over F ("full" values) or over F without
 * its last dimension ("row" values: the reductions' results and what is
 * computed from them), or broadcasts into either, a row value broadcast
 * back along the last dimension among them.  The group runs a block of
 * rows at a time (as many as the reductions fold side by side, 16 for f32
 * sums), split across the pool by rows: each reduction folds the block
 * with the reduce kernel's own loop (so results are bit for bit the
 * unfused ones); the other members between two reductions run one row at
 * a time, so that a row's chain of values stays in L1.  Broadcasts of
 * outside values along the rows (gamma, beta, scalars) are the same in
 * every block and are made once per worker, or read in place; returned
 * results larger than L2 are streamed out past the caches.  Memory sees
 * the group's inputs and results once.  An f32 sum whose operand only it
 * reads computes that operand itself, on tiles of the block, and never
 * stores it (fuse_tiles.c). */
/* -O2 leaves loops that need a remainder scalar: the broadcast fills
 * below are worth vectorizing. */
#pragma GCC optimize("tree-vectorize", "vect-cost-model=dynamic")

#include <stdatomic.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/module.h"
#include "core/alloc.h"
#include "compile/fuse.h"
#include "kernels/fuse_int.h"
#include "core/tensor_uninit.h"
#include "core/value.h"
#include "kernels/fold_tiles.h"
#include "kernels/multiversion.h"
#include "kernels/reduce_int.h"
#include "kernels/stream_store.h"
#include "kernels/vchain.h"
#include "ops/ops.h"
#include "runtime/exec.h"
#include "runtime/pool.h"

#define FUSE_MIN_NUMEL 4096 /* below this, separate steps are as fast */
#define FUSE_CHUNK 2048     /* elements per pass: members' scratch fits L2 */
#define FUSE_GRAIN (16 * FUSE_CHUNK)
/* A run's scratch per worker: past it, chunks shrink.  Per-call costs
 * weigh more than L1 misses that L2 serves: gelu's 6 slots ran faster at
 * 2048 elements (48 KiB) than at 1024 (24 KiB, all in L1), and no faster
 * at 4096. */
#define RUN_SCRATCH_BYTES (48 << 10)
#define RUN_MIN_CHUNK 512
#define SCRATCH_ELEM 16     /* bytes: the largest element (complex<f64>) */
#define ROWS_MAX_COLS (1 << 16) /* longer rows: scratch would leave cache */
#define ROWS_LOOKAHEAD 64   /* steps searched for a reduce to group around */
#define ROWS_L1_ELEMS 1024  /* elements of a value per block, when rows
                               can be folded one at a time */
#define FUSE_LABEL_CAP 2048 /* --explain's name of a fused step (64 members) */
#define ROWS_APART_MIN_COLS 64 /* shorter rows: per-call costs would show */

static void fused_free(void *p) {
  fused *f = p;
  if (!f) return;
  for (int i = 0; i < f->n_members; i++) {
    shlo__step_free(&f->m[i].step);
    shlo__fuse_lanes_free(f->m[i].run_after);
    shlo__fuse_tile_free(f->m[i].tile);
  }
  shlo__free(f->m);
  shlo__free(f->ext_esz);
  shlo__free(f->outs);
  shlo__free(f);
}

/* Copy one element value `n` times (a run along a broadcast dimension). */
SHLO_CLONES static void splat_run(char *dst, const char *src, int64_t n, size_t esz) {
  switch (esz) {
  case 4: {
    uint32_t v;
    memcpy(&v, src, 4);
    for (int64_t i = 0; i < n; i++) memcpy(dst + 4 * i, &v, 4);
    break;
  }
  case 8: {
    uint64_t v;
    memcpy(&v, src, 8);
    for (int64_t i = 0; i < n; i++) memcpy(dst + 8 * i, &v, 8);
    break;
  }
  default:
    for (int64_t i = 0; i < n; i++) memcpy(dst + (size_t)i * esz, src, esz);
  }
}

#define ONE_PIECE 256 /* elements per range call when an operand is one */

/* Bytes operand i of member m advances per element in m's range loop: 0
 * for one that stays put (a rank-0 select/clamp operand, or the one
 * element of a broadcast read as such). */
static size_t operand_step(const fused *f, const member *m, int i) {
  int ref = m->ref[i];
  if (i == m->one_arg) return 0;
  if (ref < 0) return f->m[-ref - 1].esz;
  if (f->cols) return m->adv[i] == ADV_FULL ? f->ext_esz[ref] : 0;
  return f->ext_esz[ref];
}

/* Member m's range loop over n elements into d, operand m->one_arg being
 * one element broadcast over all n: the op's own loop for that where it
 * has one (step.loop.range_one), else its loop over pieces that read a short
 * splat of it kept in L1, where the broadcast member would have written
 * (and the loop read) n copies. */
static void range_one_arg(const fused *f, const member *m, char *d,
                          const void *const *x, int64_t n) {
  if (m->step.loop.range_one) { /* the op has a loop for it */
    m->step.loop.range_one(&m->step, d, x, n, m->one_arg);
    return;
  }
  _Alignas(64) char splat[ONE_PIECE * SCRATCH_ELEM];
  size_t one_esz = f->m[-m->ref[m->one_arg] - 1].esz;
  int64_t piece = n < ONE_PIECE ? n : ONE_PIECE;
  splat_run(splat, x[m->one_arg], piece, one_esz);
  const void *xs[3];
  for (int64_t b = 0; b < n; b += piece) {
    int64_t k = n - b < piece ? n - b : piece;
    for (int i = 0; i < m->n_in; i++)
      xs[i] = i == m->one_arg
                  ? splat
                  : (const char *)x[i] + (size_t)b * operand_step(f, m, i);
    m->step.loop.range(&m->step, d + (size_t)b * m->esz, xs, k);
  }
}

/* Member m (not a broadcast) over n elements into d. */
static void member_range(const fused *f, const member *m, char *d,
                         const void *const *x, int64_t n) {
  if (m->one_arg >= 0) range_one_arg(f, m, d, x, n);
  else m->step.loop.range(&m->step, d, x, n);
}

/* dst[0..n) = the broadcast's elements b .. b+n-1, a run along the last
 * dimension at a time: a memcpy where the operand is contiguous there, a
 * fill where it is broadcast. */
static void bcast_fill(const bcast_map *m, const char *src, char *dst,
                       int64_t b, int64_t n, size_t esz) {
  int64_t idx[SHLO_MAX_RANK], off = m->offset, rem = b;
  int last = m->rank - 1;
  if (last < 0) { /* rank 0: one element */
    splat_run(dst, src, n, esz);
    return;
  }
  for (int d = last; d >= 0; d--) {
    idx[d] = m->dims[d] ? rem % m->dims[d] : 0;
    rem = m->dims[d] ? rem / m->dims[d] : 0;
    off += idx[d] * m->src_stride[d];
  }
  int64_t inner = m->src_stride[last];
  for (int64_t k = 0; k < n;) {
    int64_t run = m->dims[last] - idx[last];
    if (run > n - k) run = n - k;
    char *d = dst + (size_t)k * esz;
    const char *s = src + (size_t)off * esz;
    if (inner == 1) memcpy(d, s, (size_t)run * esz);
    else if (inner == 0) splat_run(d, s, run, esz);
    else
      for (int64_t i = 0; i < run; i++)
        memcpy(d + (size_t)i * esz, s + (size_t)(i * inner) * esz, esz);
    k += run;
    off += run * inner;
    idx[last] += run;
    if (idx[last] < m->dims[last]) continue;
    /* carry into the outer dimensions */
    off -= inner * m->dims[last];
    idx[last] = 0;
    for (int d = last - 1; d >= 0; d--) {
      off += m->src_stride[d];
      if (++idx[d] < m->dims[d]) break;
      off -= m->src_stride[d] * m->dims[d];
      idx[d] = 0;
    }
  }
}

/* Whether run member m makes its result in scratch and streams it out
 * (shlo__stream_copy; a lane program streams it itself): a returned value
 * larger than L2. */
bool shlo__fuse_run_streams(const fused *f, const member *m) {
  return m->out >= 0 && m->result &&
         (size_t)f->numel * m->esz >= SHLO_STREAM_MIN_BYTES;
}

/* The chunk of n elements at b of run f's members, their values at
 * val[]: one member at a time, save the instructions of lane programs,
 * each program run when the last member of its stretch has its turn
 * (the stretch's broadcasts filled by then); it writes the values it
 * stores at val[]. */
static void run_members(const fused_run *r, int64_t b, int64_t n,
                        char **val, char *scratch, size_t per, void *work) {
  const fused *f = r->f;
  for (int k = 0; k < f->n_members; k++) {
    const member *m = &f->m[k];
    if (m->once) continue; /* filled for the worker's first chunk */
    const void *x[3];
    for (int i = 0; i < m->n_in; i++) {
      int ref = m->ref[i];
      x[i] = ref < 0 ? val[-ref - 1]
                     : (const char *)r->in[ref]->data +
                           (size_t)b * f->ext_esz[ref];
    }
    char *res = m->out >= 0
                    ? (char *)r->out[m->out]->data + (size_t)b * m->esz
                    : NULL;
    char *d = m->slot >= 0 ? scratch + (size_t)m->slot * per : res;
    val[k] = d;
    if (m->one) { /* its operand's one element */
      val[k] = (char *)x[0];
      continue;
    }
    if (m->bcast) bcast_fill(&m->map, x[0], d, b, n, m->esz);
    else if (!m->prog_ins) member_range(f, m, d, x, n);
    /* (a program streams its results itself) */
    if (!m->prog_ins && res && d != res)
      shlo__stream_copy(res, d, (size_t)n * m->esz);
    if (m->run_after)
      shlo__fuse_lanes_run(m->run_after, r, b, val, NULL, n, work);
  }
}

static void fused_chunk(void *ctx, int64_t lo, int64_t hi) {
  fused_run *r = ctx;
  const fused *f = r->f;
  size_t per = (size_t)f->chunk * f->scratch_esz;
  size_t slots = f->n_slots ? (size_t)f->n_slots : 1;
  char *scratch = shlo__aligned_alloc(slots * per + f->lanes_work);
  char **val = shlo__malloc((size_t)f->n_members * sizeof *val);
  if (!scratch || !val) {
    shlo__aligned_free(scratch);
    shlo__free(val);
    atomic_store(&r->failed, 1);
    return;
  }
  for (int k = 0; k < f->n_members; k++) {
    const member *m = &f->m[k];
    if (!m->once) continue;
    /* the same values for every chunk, filled from lo: an epilogue's
     * blocks start anywhere */
    val[k] = scratch + (size_t)m->slot * per;
    bcast_fill(&m->map, r->in[m->ref[0]]->data, val[k], lo, f->chunk,
               m->esz);
  }
  for (int64_t b = lo; b < hi; b += f->chunk) {
    int64_t n = hi - b < f->chunk ? hi - b : f->chunk;
    run_members(r, b, n, val, scratch, per, scratch + slots * per);
  }
  shlo__stream_fence(); /* before the pool's join */
  shlo__free(val);
  shlo__aligned_free(scratch);
}

/* Where member m's operand i starts for the block of rows at r0. */
static const void *rows_operand(const fused_run *r, const member *m, int i,
                                char *const *val, int64_t r0) {
  int ref = m->ref[i];
  if (ref < 0) return val[-ref - 1];
  int64_t off = m->adv[i] == ADV_FULL  ? r0 * r->f->cols
                : m->adv[i] == ADV_ROW ? r0
                                       : 0;
  return (const char *)r->in[ref]->data + (size_t)off * r->f->ext_esz[ref];
}

/* Each of reduction m's nr results at d starts from its init value. */
static void rows_fold_init(const fused_run *r, const member *m,
                           char *const *val, int64_t r0, int64_t nr, char *d) {
  const void *init = rows_operand(r, m, 1, val, r0);
  for (int64_t j = 0; j < nr; j++) memcpy(d + (size_t)j * m->esz, init, m->esz);
}

/* Member m over rows [r0, r0 + nr) into d. */
static void rows_member(const fused_run *r, const member *m, char *const *val,
                        int64_t r0, int64_t nr, char *d) {
  int64_t cols = r->f->cols;
  const void *x[3];
  for (int i = 0; i < m->n_in; i++) x[i] = rows_operand(r, m, i, val, r0);
  if (m->fold) { /* the reduce kernel's loop */
    rows_fold_init(r, m, val, r0, nr, d);
    m->fold->fold_rows(d, x[0], nr, cols, m->fold);
    return;
  }
  bool full = m->dom == DOM_FULL;
  int64_t b = full ? r0 * cols : r0, n = full ? nr * cols : nr;
  if (m->bcast) bcast_fill(&m->map, x[0], d, m->rel ? 0 : b, n, m->esz);
  else member_range(r->f, m, d, x, n);
}

/* Reduction m over rows [r0, r0 + nr) into d, its operand computed on
 * tiles by its tile program (fuse_tiles.c) from values of the block. */
static void rows_fold_tiles(const fused_run *r, const member *m,
                            char *const *val, int64_t r0, int64_t nr,
                            char *d, void *work) {
  const fused *f = r->f;
  const tile_prog *tp = m->tile;
  rows_fold_init(r, m, val, r0, nr, d);
  shlo_tile_in in[SHLO_VCHAIN_MAX_IO];
  for (int k = 0; k < tp->lp.chain.n_in; k++) {
    const lane_io *io = &tp->lp.in[k];
    in[k].kind = tp->kind[k];
    in[k].out = tp->out_of[k];
    if (in[k].kind == SHLO_TILE_OUT)
      in[k].base = NULL; /* the program's own output */
    else if (!io->ext)
      in[k].base = (const float *)val[io->ref];
    else
      in[k].base = (const float *)((const char *)r->in[io->ref]->data +
                                   (in[k].kind == SHLO_TILE_FULL
                                        ? (size_t)(r0 * f->cols) *
                                              f->ext_esz[io->ref]
                                        : 0));
  }
  shlo__fold_tiles_add_f32((float *)d, nr, f->cols, &tp->lp.chain,
                           tp->result, in, work);
}

/* Whether member m is computed in a block (the first of a worker's
 * chunk, or a later one). */
static bool rows_computes(const member *m, bool first) {
  if (m->one) return false;
  return m->inv == INV_NO || (first && m->inv == INV_ONCE);
}

/* A broadcast read as one element per row (member.one): its value over
 * the block is its operand's, the block's row values. */
static void rows_point_one(const fused *f, char **val, int k) {
  if (f->m[k].one) val[k] = val[-f->m[k].ref[0] - 1];
}

/* Where member k's value over the block of rows at r0 goes: its result
 * tensor when it is one of the group's results, else its scratch. */
static char *rows_dest(const fused_run *r, int k, int64_t r0, char *scratch,
                       size_t per) {
  const member *m = &r->f->m[k];
  int64_t b = m->dom == DOM_FULL ? r0 * r->f->cols : r0;
  return m->out >= 0 ? (char *)r->out[m->out]->data + (size_t)b * m->esz
                     : scratch + (size_t)k * per;
}

/* Whether member m is made row by row in scratch and streamed to its
 * result tensor (shlo__stream_copy): a full-size value that the function
 * returns, larger than L2.  A value the next steps read is better left
 * in the caches. */
bool shlo__fuse_rows_streams(const fused *f, const member *m) {
  return m->out >= 0 && m->result && m->dom == DOM_FULL &&
         (size_t)(f->rows * f->cols) * m->esz >= SHLO_STREAM_MIN_BYTES;
}

/* Lane program lp over row rr, its members' rows at row[]: outputs
 * written straight to their results go to that row of them; the other
 * large results are made in their row of scratch and streamed out.  Its
 * workspace is past the members' scratch. */
static void rows_lanes(const fused_run *r, const lane_prog *lp, char **row,
                       int64_t rr, char *scratch, size_t per) {
  const fused *f = r->f;
  char *direct[SHLO_VCHAIN_MAX_IO];
  for (int q = 0; q < lp->chain.n_out; q++)
    direct[q] = rows_dest(r, lp->out[q], rr, scratch, per);
  shlo__fuse_lanes_run(lp, r, rr * f->cols, row, direct, f->cols,
                       scratch + (size_t)f->n_members * per);
  for (int q = 0; q < lp->chain.n_out; q++) {
    const member *m = &f->m[lp->out[q]];
    if (!lp->direct[q] && shlo__fuse_rows_streams(f, m))
      shlo__stream_copy(direct[q], row[lp->out[q]], m->row_bytes);
  }
}

/* Whether lp can run over a block's rows in one call when no other
 * member of its segment computes anything a row at a time: none of its
 * outputs is made in scratch and streamed out after each row. */
static bool rows_lanes_whole(const fused *f, const lane_prog *lp) {
  for (int q = 0; q < lp->chain.n_out; q++)
    if (!lp->direct[q] && shlo__fuse_rows_streams(f, &f->m[lp->out[q]]))
      return false;
  return true;
}

/* rows_lanes over rows [r0, r0 + nr) in one call (the program decoded
 * once, not once a row: layernorm's output program spent a tenth of its
 * time on its calls a row at a time); member q's row pointer row[q]
 * moves step[q] bytes a row. */
static void rows_lanes_block(const fused_run *r, const lane_prog *lp,
                             char **row, const int64_t *step, int64_t r0,
                             int64_t nr, char *scratch, size_t per) {
  const fused *f = r->f;
  char *direct[SHLO_VCHAIN_MAX_IO];
  int64_t direct_step[SHLO_VCHAIN_MAX_IO];
  for (int q = 0; q < lp->chain.n_out; q++) {
    direct[q] = rows_dest(r, lp->out[q], r0, scratch, per);
    direct_step[q] = rows_dest(r, lp->out[q], r0 + 1, scratch, per) -
                     direct[q];
  }
  shlo__fuse_lanes_run_rows(lp, r, r0 * f->cols, row, step, direct,
                            direct_step, nr, f->cols,
                            scratch + (size_t)f->n_members * per);
}

/* Members [k, e) of the group, none of them a reduction, over the block
 * of nr rows at r0.  Those of row values (which read only row values)
 * first, each over the block; then the others one row at a time: each
 * row's chain of values stays in L1 from the member that makes it to
 * those that read it, where a member at a time over the whole block
 * would go through L2.  val[] keeps pointing at each member's block
 * (later reductions read them); row[] is scratch for the members'
 * pointers into one row. */
/* Not vectorized: GCC would pair the row pointers' updates below into
 * 16-byte loads of two 8-byte stores, which the CPU cannot forward, a
 * stall per row of every block (a tenth of attention's softmax rows). */
__attribute__((optimize("no-tree-vectorize")))
static void rows_segment(const fused_run *r, int k, int e, char **val,
                         char **row, int64_t r0, int64_t nr, bool first,
                         char *scratch, size_t per) {
  const fused *f = r->f;
  const lane_prog *lp = f->m[k].run_after;
  for (int q = k; q < e; q++) {
    const member *m = &f->m[q];
    rows_point_one(f, val, q);
    if (!rows_computes(m, first) || m->tile_only || m->moved_to >= 0)
      continue;
    val[q] = shlo__fuse_rows_streams(f, m) ? scratch + (size_t)q * per
                                           : rows_dest(r, q, r0, scratch, per);
    if (m->dom == DOM_ROW) rows_member(r, m, val, r0, nr, val[q]);
  }
  for (int q = 0; q < k; q++) /* moved here: its program computes them */
    if (f->m[q].moved_to == k) val[q] = rows_dest(r, q, r0, scratch, per);
  /* which members each row computes one by one, and which pointers move
   * from row to row: the same for every row of the block, so listed once
   * (a row's own work is a few hundred cycles; checking every member for
   * every row showed in profiles) */
  int own[FUSE_MAX_MEMBERS], moving[FUSE_MAX_MEMBERS], n_own = 0, n_moving = 0;
  for (int q = 0; q < e; q++) {
    const member *m = &f->m[q];
    row[q] = val[q];
    /* (not values this block never makes: computed on tiles only, or in
     * a later segment) */
    bool made = !m->tile_only && (m->moved_to < 0 || m->moved_to == k);
    if (m->row_step && made) moving[n_moving++] = q;
    if (q >= k && m->dom == DOM_FULL && rows_computes(m, first) &&
        !m->prog_ins && !m->tile_only && m->moved_to < 0)
      own[n_own++] = q;
  }
  if (lp && n_own == 0 && rows_lanes_whole(f, lp)) {
    int64_t step[FUSE_MAX_MEMBERS] = {0};
    for (int i = 0; i < n_moving; i++)
      step[moving[i]] = (int64_t)f->m[moving[i]].row_step;
    rows_lanes_block(r, lp, row, step, r0, nr, scratch, per);
    return;
  }
  for (int64_t j = 0; j < nr; j++) {
    for (int i = 0; i < n_own; i++) {
      int q = own[i];
      const member *m = &f->m[q];
      rows_member(r, m, row, r0 + j, 1, row[q]);
      if (shlo__fuse_rows_streams(f, m))
        shlo__stream_copy(rows_dest(r, q, r0 + j, scratch, per), row[q],
                    m->row_bytes);
    }
    if (lp) rows_lanes(r, lp, row, r0 + j, scratch, per);
    for (int i = 0; i < n_moving; i++) /* row j + 1 */
      row[moving[i]] += f->m[moving[i]].row_step;
  }
}

static void rows_chunk(void *ctx, int64_t lo, int64_t hi) {
  fused_run *r = ctx;
  const fused *f = r->f;
  /* each member's scratch on its own cache lines */
  size_t per = ((size_t)(f->block * f->cols) * f->scratch_esz + 63) & ~(size_t)63;
  char *scratch = shlo__aligned_alloc((size_t)f->n_members * per +
                                        f->lanes_work);
  char **val = shlo__calloc((size_t)f->n_members * 2, sizeof *val);
  if (!scratch || !val) {
    shlo__aligned_free(scratch);
    shlo__free(val);
    atomic_store(&r->failed, 1);
    return;
  }
  for (int k = 0; k < f->n_members; k++)
    if (f->m[k].inv == INV_ALIAS) val[k] = r->in[f->m[k].ref[0]]->data;
  char *work = scratch + (size_t)f->n_members * per;
  softmax_carry carry = {0};
  for (int64_t r0 = lo; r0 < hi; r0 += f->block) {
    int64_t nr = hi - r0 < f->block ? hi - r0 : f->block;
    for (int k = 0; k < f->n_members;) {
      const member *m = &f->m[k];
      if (f->softmax && k == f->sm.start) {
        /* the rest in two passes; the members before the subtract in
         * its segment are broadcasts read as one element */
        for (int q = k; q < f->sm.sub; q++) rows_point_one(f, val, q);
        shlo__fuse_softmax_block(r, val, r0, nr, hi, scratch, per, &carry);
        break;
      }
      if (f->softmax && k == f->sm.max && f->sm.max_ahead &&
          shlo__fuse_softmax_max_taken(&carry, r0, nr,
                                       rows_dest(r, k, r0, scratch, per))) {
        val[k] = rows_dest(r, k, r0, scratch, per); /* taken ahead */
        k++;
        continue;
      }
      if (m->fold || nr == 1) { /* one member over the whole block */
        /* (a block of one row computes every member in its place and
         * folds what they made, tile programs or not) */
        rows_point_one(f, val, k);
        if (rows_computes(m, r0 == lo)) {
          val[k] = rows_dest(r, k, r0, scratch, per);
          if (m->tile && nr > 1)
            rows_fold_tiles(r, m, val, r0, nr, val[k], work);
          else
            rows_member(r, m, val, r0, nr, val[k]);
        }
        k++;
        continue;
      }
      int e = k + 1;
      while (e < f->n_members && !f->m[e].fold) e++;
      rows_segment(r, k, e, val, val + f->n_members, r0, nr, r0 == lo,
                   scratch, per);
      k = e;
    }
  }
  if (f->softmax) shlo__fuse_softmax_flush(r, &carry);
  shlo__stream_fence(); /* before the pool's join */
  shlo__free(val);
  shlo__aligned_free(scratch);
}

/* The results of f, uninitialised: a run or group writes every element. */
static shlo_status fused_new_results(const shlo_step *s, const fused *f,
                                     shlo_value **out, shlo_exec *ex) {
  for (int k = 0; k < f->n_out; k++) {
    out[k] = shlo__tensor_new_uninit(f->outs[k].elem, f->outs[k].rank,
                                     f->outs[k].dims);
    if (!out[k])
      return shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory for a result");
  }
  return SHLO_OK;
}

/* Elements per pool chunk of run f: 16 scratch chunks; but a run too
 * short for two such whose members' loops add up to as much work (in
 * elements times members, broadcasts read as one element aside) goes to
 * the pool too, a share per thread.  An LSTM step's gates (16384
 * elements, 18 ops and 4 slices) took 28 us on one thread, 14 on two,
 * each thread's rows made by the same thread in the product before.
 * Smaller pieces of long runs cost more than they give (gelu 0.67 ->
 * 0.72 ms in chunks of 4096). */
static int64_t run_grain(const fused *f) {
  int64_t grain = 16 * f->chunk;
  int work = 0;
  for (int k = 0; k < f->n_members; k++)
    work += !f->m[k].one && !f->m[k].once;
  if (f->numel >= 2 * grain || f->numel * work < 4 * grain) return grain;
  int64_t threads = shlo__pool_threads();
  int64_t share = (f->numel + threads - 1) / threads;
  share = (share + f->chunk - 1) / f->chunk * f->chunk;
  return share < grain ? share : grain;
}

static shlo_status k_fused(const shlo_step *s, shlo_value *const *in,
                           shlo_value **out, shlo_exec *ex) {
  const fused *f = s->params;
  shlo_status st = fused_new_results(s, f, out, ex);
  if (st) return st;
  fused_run r = {f, in, out, 0};
  if (f->cols) {
    /* whole blocks per chunk */
    int64_t grain = FUSE_GRAIN / f->cols / f->block * f->block;
    /* and at least a quarter of a thread's share: each chunk pays for
     * its scratch and a first block with nothing to overlap its reads,
     * and a softmax tail's last divide goes alone (64-row chunks made
     * softmax 1.3x slower than 512-row ones on two threads); four a
     * thread still even out a thread that falls behind */
    int64_t quarter = f->rows / (4 * (int64_t)shlo__pool_threads()) /
                      f->block * f->block;
    if (quarter > grain) grain = quarter;
    shlo__parallel_for(f->rows, grain > f->block ? grain : f->block,
                       rows_chunk, &r);
  } else {
    shlo__parallel_for(f->numel, run_grain(f), fused_chunk, &r);
  }
  if (atomic_load(&r.failed))
    return shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory for scratch");
  return SHLO_OK;
}

/* ---- finding runs ---- */

static int64_t slot_numel(const shlo_type *const *types, int slot) {
  const shlo_type *t = types[slot];
  return t && t->kind == SHLO_TYPE_TENSOR ? shlo_type_numel(t) : -1;
}

/* A broadcast_in_dim of a smaller operand, which a run can read in
 * place through a bcast_map instead of materialising. */
static bool is_bcast(const shlo_step *s, const shlo_type *const *types) {
  if (!s->op || s->op->code != SHLO_OP_BROADCAST_IN_DIM || s->n_in != 1 ||
      s->n_out != 1)
    return false;
  int64_t n_in = slot_numel(types, s->in[0]);
  int64_t n_out = slot_numel(types, s->out[0]);
  return n_in >= 1 && n_in < n_out;
}

static bool bcast_map_of(const shlo_step *s, const shlo_type *const *types,
                         bcast_map *m) {
  const shlo_type *it = types[s->in[0]], *rt = types[s->out[0]];
  int64_t bd[SHLO_MAX_RANK], istr[SHLO_MAX_RANK];
  if (shlo_attr_i64s(shlo_op_attr(s->op, "broadcast_dimensions"), bd,
                     SHLO_MAX_RANK) != it->rank)
    return false;
  memset(m, 0, sizeof *m);
  m->rank = rt->rank;
  memcpy(m->dims, rt->dims, sizeof m->dims);
  shlo_strides(it->rank, it->dims, istr);
  for (int j = 0; j < it->rank; j++) {
    if (bd[j] < 0 || bd[j] >= rt->rank) return false;
    if (it->dims[j] == rt->dims[bd[j]]) m->src_stride[bd[j]] = istr[j];
    else if (it->dims[j] != 1) return false;
  }
  return true;
}

/* A slice of a larger operand, which a run reads in place as it reads a
 * broadcast (the gates of an LSTM cut from one product's columns): each
 * chunk copies its part of the slice into scratch in the caches instead
 * of a whole copy going through memory, on the pool's threads instead of
 * before the run.  Quantized operands keep their copy step. */
static bool is_slice_view(const shlo_step *s, const shlo_type *const *types) {
  if (!s->op || s->op->code != SHLO_OP_SLICE || s->n_in != 1 ||
      s->n_out != 1 || !types[s->in[0]] || types[s->in[0]]->quant)
    return false;
  int64_t n_in = slot_numel(types, s->in[0]);
  int64_t n_out = slot_numel(types, s->out[0]);
  return n_out >= 1 && n_out < n_in;
}

static bool slice_map_of(const shlo_step *s, const shlo_type *const *types,
                         bcast_map *m) {
  const shlo_type *it = types[s->in[0]], *rt = types[s->out[0]];
  int64_t start[SHLO_MAX_RANK], step[SHLO_MAX_RANK], istr[SHLO_MAX_RANK];
  if (it->rank != rt->rank || it->rank < 1 ||
      shlo_attr_i64s(shlo_op_attr(s->op, "start_indices"), start,
                     SHLO_MAX_RANK) != it->rank)
    return false;
  const shlo_attr *sa = shlo_op_attr(s->op, "strides");
  if (!sa)
    for (int d = 0; d < it->rank; d++) step[d] = 1;
  else if (shlo_attr_i64s(sa, step, SHLO_MAX_RANK) != it->rank)
    return false;
  memset(m, 0, sizeof *m);
  m->rank = rt->rank;
  memcpy(m->dims, rt->dims, sizeof m->dims);
  shlo_strides(it->rank, it->dims, istr);
  for (int d = 0; d < it->rank; d++) {
    /* (the verifier checked the bounds; a non-empty slice here) */
    if (start[d] < 0 || step[d] < 1 ||
        start[d] + (rt->dims[d] - 1) * step[d] >= it->dims[d])
      return false;
    m->src_stride[d] = istr[d] * step[d];
    m->offset += start[d] * istr[d];
  }
  return true;
}

/* The map of a member that reads its operand through one: a slice's, or
 * a broadcast_in_dim's (a rows group's row reshapes too). */
static bool view_map_of(const shlo_step *s, const shlo_type *const *types,
                        bcast_map *m) {
  if (is_slice_view(s, types)) return slice_map_of(s, types, m);
  return bcast_map_of(s, types, m);
}

static bool fusable(const shlo_step *s, const shlo_type *const *types,
                    int64_t numel) {
  if (s->n_out != 1 || s->n_plans || slot_numel(types, s->out[0]) != numel)
    return false;
  if (is_bcast(s, types) || is_slice_view(s, types)) {
    bcast_map m;
    return view_map_of(s, types, &m);
  }
  if (!s->loop.range) return false;
  /* Operands are whole (numel) or, for select/clamp, one element that
   * does not advance. */
  for (int k = 0; k < s->n_in; k++) {
    int64_t n = slot_numel(types, s->in[k]);
    if (n != numel && !(n == 1 && s->n_in == 3)) return false;
  }
  return s->n_in <= 3;
}

/* ---- finding rows groups ---- */

/* DOM_FULL when slot's value has shape F, DOM_ROW when it has F's shape
 * without the last dimension or with it 1 (JAX's keepdims mean, 8x128x1
 * beside 8x128x768: the same elements in the same order), else -1. */
static int slot_dom(const shlo_type *const *types, int slot,
                    const shlo_type *F) {
  const shlo_type *t = types[slot];
  if (!t || t->kind != SHLO_TYPE_TENSOR) return -1;
  int lead = F->rank - 1;
  if (t->rank != F->rank && t->rank != lead) return -1;
  for (int d = 0; d < lead; d++)
    if (t->dims[d] != F->dims[d]) return -1;
  if (t->rank == lead) return DOM_ROW;
  return t->dims[lead] == F->dims[lead] ? DOM_FULL
         : t->dims[lead] == 1           ? DOM_ROW
                                        : -1;
}

/* A broadcast_in_dim between two row values of as many elements (8x128
 * to 8x128x1, the order kept): a member that copies its block's rows. */
static bool is_row_reshape(const shlo_step *s, const shlo_type *const *types,
                           const shlo_type *F) {
  int64_t bd[SHLO_MAX_RANK];
  if (!s->op || s->op->code != SHLO_OP_BROADCAST_IN_DIM || s->n_in != 1 ||
      s->n_out != 1 || slot_dom(types, s->in[0], F) != DOM_ROW ||
      slot_dom(types, s->out[0], F) != DOM_ROW)
    return false;
  int n = shlo_attr_i64s(shlo_op_attr(s->op, "broadcast_dimensions"), bd,
                         SHLO_MAX_RANK);
  for (int j = 0; j < n; j++)
    if (bd[j] != j) return false;
  return n == types[s->in[0]]->rank;
}

/* Whether slot is written by one of steps [first, k). */
static bool made_by_member(const shlo_plan *p, int first, int k, int slot) {
  for (int j = first; j < k; j++)
    if (p->steps[j].n_out == 1 && p->steps[j].out[0] == slot) return true;
  return false;
}

/* A broadcast that puts element r of a row value at every column of row
 * r: broadcast_dimensions = [0, ..., rank - 2], or [0, ..., rank - 1] from
 * a row value whose last dimension is 1. */
static bool is_row_bcast(const shlo_step *s, const shlo_type *const *types,
                         const shlo_type *F) {
  int64_t bd[SHLO_MAX_RANK];
  int n = shlo_attr_i64s(shlo_op_attr(s->op, "broadcast_dimensions"), bd,
                         SHLO_MAX_RANK);
  if (slot_dom(types, s->in[0], F) != DOM_ROW ||
      slot_dom(types, s->out[0], F) != DOM_FULL || n != types[s->in[0]]->rank)
    return false;
  for (int j = 0; j < n; j++)
    if (bd[j] != j) return false;
  return true;
}

/* The domain of step k in a rows group over F of steps [first, k), or -1
 * when it cannot join: see the top of the file. */
static int rows_member_dom(const shlo_plan *p, int first, int k,
                           const shlo_type *const *types, const shlo_type *F) {
  const shlo_step *s = &p->steps[k];
  if (s->n_out != 1 || !s->op) return -1;
  int dom = slot_dom(types, s->out[0], F);
  if (dom < 0) return -1;
  if (shlo__reduce_row_fold(s))
    return dom == DOM_ROW && slot_dom(types, s->in[0], F) == DOM_FULL &&
                   !made_by_member(p, first, k, s->in[1])
               ? DOM_ROW
               : -1;
  if (s->n_plans) return -1;
  if (is_row_reshape(s, types, F)) return dom;
  if (is_bcast(s, types)) {
    bcast_map m;
    if (!bcast_map_of(s, types, &m)) return -1;
    if (!made_by_member(p, first, k, s->in[0])) return dom;
    return is_row_bcast(s, types, F) ? dom : -1;
  }
  if (!s->loop.range || s->n_in > 3) return -1;
  for (int i = 0; i < s->n_in; i++) {
    if (slot_dom(types, s->in[i], F) == dom) continue;
    /* a non-advancing select/clamp operand, from outside */
    if (slot_numel(types, s->in[i]) == 1 && s->n_in == 3 &&
        !made_by_member(p, first, k, s->in[i]))
      continue;
    return -1;
  }
  return dom;
}

/* The end of the rows group that starts at step i (i when none does),
 * with its shape F in *F: around the first reduce of the last dimension
 * among the next elementwise steps and broadcasts. */
static int rows_group_end(const shlo_plan *p, int i,
                          const shlo_type *const *types,
                          const shlo_type **F) {
  const shlo_type *f = NULL;
  for (int j = i; j < p->n_steps && j < i + ROWS_LOOKAHEAD && !f; j++) {
    const shlo_step *s = &p->steps[j];
    if (shlo__reduce_row_fold(s)) f = types[s->in[0]];
    else if (s->n_out != 1 || s->n_plans ||
             !(s->loop.range || is_bcast(s, types)))
      return i;
  }
  /* rank >= 2 with rows to share out: a reduction of a whole vector is
   * better split across the pool as a run and a separate reduce */
  if (!f || f->rank < 2 || f->dims[f->rank - 1] < 2 ||
      f->dims[f->rank - 1] > ROWS_MAX_COLS ||
      shlo_type_numel(f) < FUSE_MIN_NUMEL ||
      shlo_type_numel(f) / f->dims[f->rank - 1] < 16)
    return i;
  int j = i;
  bool reduces = false;
  while (j < p->n_steps && j - i < FUSE_MAX_MEMBERS &&
         rows_member_dom(p, i, j, types, f) >= 0)
    reduces |= shlo__reduce_row_fold(&p->steps[j++]) != NULL;
  if (!reduces || j - i < 2) return i;
  *F = f;
  return j;
}

/* The most elements in a block of rows whose reductions fold `side` of
 * them side by side: 1 MB of f32 (16 rows of up to 16384, or 64 of up to
 * 4096 where tiles fold them).  It was 16384 (16 rows of up to 1024), and
 * softmax over rows of 1040 went one row at a time, each sum folded one
 * element after another: 512 rows on one thread, 0.356 ms so, 0.106 in
 * blocks of 16 (rows of 1024: 0.106 either way); 128 rows of 4096, 0.336
 * -> 0.122 ms; 32 of 16384, 0.332 -> 0.155.  layernorm over 2 M elements
 * in rows of 4096: 2.58 -> 0.71 ms; of 16384: 2.59 -> 1.45. */
#define ROWS_SIDE_MAX_ELEMS (128 * FUSE_CHUNK)

/* Rows per block, when the group's reductions fold `side` rows side by
 * side (shlo_rb_native.side).  When they fold one row at a time, few
 * enough that each member's values over a block stay in L1; otherwise a
 * multiple of `side` when rows are short enough. */
static int64_t rows_block(int64_t cols, int side) {
  if (side == 1 && cols >= ROWS_APART_MIN_COLS)
    return ROWS_L1_ELEMS / cols > 1 ? ROWS_L1_ELEMS / cols : 1;
  int64_t block = FUSE_CHUNK / cols;
  if (block >= side) return block / side * side;
  if (side * cols <= ROWS_SIDE_MAX_ELEMS) return side;
  if (block < 4) block = 4 * cols <= 2 * FUSE_CHUNK ? 4 : 1;
  return block;
}

/* INV_* of member k of rows group f (block, adv and rel already set):
 * see the enum.  A result of the group is written block by block, so it
 * is never invariant. */
static int rows_invariant(const fused *f, int k) {
  const member *m = &f->m[k];
  if (m->out >= 0 || m->fold || m->rel) return INV_NO;
  if (m->bcast) {
    /* zero strides along every dimension of F but the last */
    int lead = m->dom == DOM_FULL ? m->map.rank - 1 : m->map.rank;
    for (int d = 0; d < lead; d++)
      if (m->map.src_stride[d]) return INV_NO;
    bool copies_row = m->dom == DOM_FULL && m->map.rank > 0 &&
                      m->map.src_stride[m->map.rank - 1] == 1;
    return copies_row && (f->block == 1 || !m->by_fold) ? INV_ALIAS
                                                        : INV_ONCE;
  }
  for (int i = 0; i < m->n_in; i++) {
    int ref = m->ref[i];
    if (ref < 0 ? f->m[-ref - 1].inv == INV_NO : m->adv[i] != ADV_NONE)
      return INV_NO;
  }
  return INV_ONCE;
}

/* Whether broadcast member k of f can be read as one element by all its
 * readers (member.one), and if so make it so.  Each reader must be a
 * range loop (not a broadcast or a reduction) that reads it through one
 * operand, and have no other such operand. */
static void try_one(fused *f, int k) {
  int arg[FUSE_MAX_MEMBERS], readers = 0;
  for (int q = k + 1; q < f->n_members; q++) {
    const member *m = &f->m[q];
    int uses = 0;
    arg[q] = -1;
    for (int i = 0; i < m->n_in; i++)
      if (m->ref[i] == -(k + 1)) {
        uses++;
        arg[q] = i;
      }
    if (!uses) continue;
    if (uses > 1 || m->bcast || m->fold || m->one_arg >= 0) return;
    readers++;
  }
  if (!readers) return;
  f->m[k].one = true;
  for (int q = k + 1; q < f->n_members; q++)
    if (arg[q] >= 0) f->m[q].one_arg = arg[q];
}

/* Mark the broadcasts of one element that f's members can read as such:
 * in a run, those of a one-element value from outside; in a rows group,
 * those of a row value along its row.  Results are always filled. */
static void mark_ones(const shlo_plan *p, int first, fused *f,
                      const shlo_type *const *types) {
  for (int k = 0; k < f->n_members; k++) {
    const member *m = &f->m[k];
    if (!m->bcast || m->out >= 0) continue;
    bool one = f->cols ? m->rel && m->dom == DOM_FULL
                       : m->ref[0] >= 0 &&
                             slot_numel(types, p->steps[first + k].in[0]) == 1;
    if (one) try_one(f, k);
  }
}

/* Whether member m's value over a block is one row, read again for every
 * row of the block (see INV_*): a full-size invariant that no reduction
 * reads over the block, or a broadcast read in place. */
static bool rows_one_row(const fused *f, const member *m) {
  if (m->inv == INV_ALIAS) return true;
  return m->inv == INV_ONCE && m->dom == DOM_FULL &&
         (f->block == 1 || !m->by_fold);
}

/* Whether member k of rows group f is made a row at a time and read only
 * by later members of its segment (rows_segment: no reduction between),
 * and is not written to a result tensor unless streamed out of scratch.
 * (Blocks of one row have nothing to gain.) */
static bool rows_local(const fused *f, int k) {
  const member *m = &f->m[k];
  if (f->block == 1 || m->dom != DOM_FULL || m->fold || m->inv != INV_NO ||
      m->one || m->by_fold || m->read_whole || m->moved_to >= 0 ||
      (m->out >= 0 && !shlo__fuse_rows_streams(f, m)))
    return false;
  bool fold_between = false;
  for (int q = k + 1; q < f->n_members; q++) {
    fold_between = fold_between || f->m[q].fold;
    if (f->m[q].tile_only) continue; /* computes what it reads itself */
    for (int i = 0; i < f->m[q].n_in; i++)
      if (f->m[q].ref[i] == -(k + 1) && fold_between) return false;
  }
  return true;
}

/* Each member's row_step and each segment's lane program (on its first
 * member, run_after).  False when a segment that has members moved to it
 * got no program (the program is what computes them). */
static bool rows_programs(const shlo_plan *p, int first, fused *f) {
  for (int k = 0; k < f->n_members; k++)
    f->m[k].row_step = rows_local(f, k) ? 0 : f->m[k].row_bytes;
  bool ok = true;
  for (int k = 0; k < f->n_members; k++) {
    shlo__fuse_lanes_free(f->m[k].run_after);
    f->m[k].run_after = NULL;
    f->m[k].prog_ins = f->m[k].in_acc = false;
  }
  for (int k = 0; k < f->n_members; k++) {
    if (f->m[k].fold || (k > 0 && !f->m[k - 1].fold)) continue;
    int e = k + 1;
    while (e < f->n_members && !f->m[e].fold) e++;
    f->m[k].run_after = shlo__fuse_lanes_rows(p, first, f, k, e);
    for (int q = 0; q < k && !f->m[k].run_after; q++)
      ok = ok && f->m[q].moved_to != k;
  }
  return ok;
}

/* Rows group fields of f's members (steps first.. of p, already described
 * as a run by fuse_member). */
static void rows_describe(const shlo_plan *p, int first, fused *f,
                          const shlo_step *fs, const shlo_type *const *types,
                          const shlo_type *F) {
  f->cols = F->dims[F->rank - 1];
  f->rows = shlo_type_numel(F) / f->cols;
  f->scratch_esz = 1;
  int side = 1; /* rows the reductions fold side by side */
  for (int e = 0; e < fs->n_in; e++)
    f->ext_esz[e] = shlo_elem_size(types[fs->in[e]]->elem);
  for (int k = 0; k < f->n_members; k++) {
    const shlo_step *s = &p->steps[first + k];
    member *m = &f->m[k];
    m->dom = slot_dom(types, s->out[0], F);
    m->fold = shlo__reduce_row_fold(s);
    if (m->fold) m->bcast = false;
    if (m->fold && m->fold->side > side) side = m->fold->side;
    if (m->esz > f->scratch_esz) f->scratch_esz = m->esz;
    m->rel = m->bcast && made_by_member(p, first, first + k, s->in[0]);
    for (int i = 0; i < m->n_in; i++) {
      int d = slot_dom(types, s->in[i], F);
      m->adv[i] = m->bcast || (m->fold && i == 1) ? ADV_NONE
                  : d == DOM_FULL                  ? ADV_FULL
                  : d == DOM_ROW && m->dom == DOM_ROW ? ADV_ROW
                                                      : ADV_NONE;
    }
  }
  for (int k = 0; k < f->n_members; k++)
    if (f->m[k].fold && f->m[k].ref[0] < 0)
      f->m[-f->m[k].ref[0] - 1].by_fold = true;
  f->block = rows_block(f->cols, side);
  mark_ones(p, first, f, types);
  for (int k = 0; k < f->n_members; k++) {
    member *m = &f->m[k];
    m->inv = rows_invariant(f, k);
    m->row_bytes = rows_one_row(f, m)         ? 0
                   : m->dom == DOM_FULL && !m->one ? (size_t)f->cols * m->esz
                                                   : m->esz;
  }
  /* reductions on tiles, and then a lane program per segment where one
   * pays; a segment given members that then gets no program (it had no
   * room) undoes the tiles */
  int64_t block = f->block;
  bool tiles = shlo__fuse_tiles_plan(p, first, f) > 0;
  /* blocks of 64 rows, where a tile program takes 16 at a time: the
   * segments' costs per block paid for more rows (layernorm on two
   * threads 0.224 ms in blocks of 16, 0.221 in 32, 0.219 in 64, 0.25-0.29
   * in 128, whose block leaves L2) */
  if (tiles && f->block == 16 && 64 * f->cols <= ROWS_SIDE_MAX_ELEMS)
    f->block = 64;
  while (!rows_programs(p, first, f) && tiles) {
    shlo__fuse_tiles_undo(f);
    f->block = block;
    f->lanes_work = 0; /* the segments' programs, made again */
    tiles = false;
  }
  shlo__fuse_softmax_plan(p, first, f);
}

/* Scratch slots and chunk size of run f: a member's value needs a slot
 * of one chunk unless it is written straight into its result; a slot is
 * reused once every reader of its value has run, and a broadcast filled
 * once per worker keeps its slot.  Chunks are as long as keeps every slot
 * in the caches closest to the core (RUN_SCRATCH_BYTES), within bounds
 * that keep per-call costs small. */
static void run_layout(fused *f) {
  int last[FUSE_MAX_MEMBERS], free_after[FUSE_MAX_MEMBERS];
  for (int k = 0; k < f->n_members; k++) last[k] = k;
  for (int q = 0; q < f->n_members; q++)
    for (int i = 0; i < f->m[q].n_in; i++)
      if (f->m[q].ref[i] < 0) last[-f->m[q].ref[i] - 1] = q;
  f->n_slots = 0;
  f->scratch_esz = 1;
  /* Slots of their own first for once-filled splats: a slot that held
   * another value would be overwritten in the next chunk. */
  for (int k = 0; k < f->n_members; k++) {
    member *m = &f->m[k];
    if (m->esz > f->scratch_esz) f->scratch_esz = m->esz;
    m->slot = m->once ? f->n_slots++ : -1;
    if (m->once) free_after[m->slot] = INT_MAX;
  }
  /* Then each value from when it is made to its last reader, in that
   * order.  A broadcast in a lane program's stretch is made when the
   * stretch begins: every one is filled before the program's first
   * instruction, so two may not share a slot.  A value may take a slot
   * whose last reader ran before it is made, in a program too: the
   * program writes each block of it after that reader read the block. */
  for (int t = 0; t < f->n_members; t++)
    for (int k = 0; k < f->n_members; k++) {
      member *m = &f->m[k];
      int born = m->bcast && m->seg >= 0 ? m->seg : k;
      if (born != t || m->slot >= 0 || m->one || m->in_acc ||
          (m->out >= 0 && (!shlo__fuse_run_streams(f, m) || m->prog_ins)))
        continue; /* a lane program streams its results itself */
      int s = 0;
      while (s < f->n_slots && free_after[s] >= born) s++;
      if (s == f->n_slots) f->n_slots++;
      m->slot = s;
      free_after[s] = last[k];
    }
  f->chunk = FUSE_CHUNK;
  while (f->chunk > RUN_MIN_CHUNK &&
         (size_t)f->n_slots * f->chunk * f->scratch_esz > RUN_SCRATCH_BYTES)
    f->chunk /= 2;
}

/* Whether every reader of member k of run f (steps first.. of p) has a
 * loop for one operand being a single element (step.loop.range_one). */
static bool readers_take_one(const shlo_plan *p, int first, const fused *f,
                             int k) {
  for (int q = k + 1; q < f->n_members; q++)
    for (int i = 0; i < f->m[q].n_in; i++)
      if (f->m[q].ref[i] == -(k + 1) && !p->steps[first + q].loop.range_one)
        return false;
  return true;
}

/* Whether broadcast map m repeats with a period that divides every chunk
 * a run may have (powers of two from RUN_MIN_CHUNK): its operand varies
 * along trailing dimensions only (a bias along the channels), so the
 * chunks of a worker, a whole number of chunks apart, see the same values
 * (fused_chunk fills them from its first chunk's start, which an
 * epilogue's blocks put anywhere). */
static bool bcast_periodic(const bcast_map *m) {
  int d0 = 0;
  while (d0 < m->rank && m->src_stride[d0] == 0) d0++;
  int64_t period = 1;
  for (int d = d0; d < m->rank; d++) {
    period *= m->dims[d];
    if (period > RUN_MIN_CHUNK) return false;
  }
  return RUN_MIN_CHUNK % period == 0;
}

/* Run f's broadcasts from outside that are the same in every chunk: one
 * element read as that element where every reader can (member.one, see
 * try_one), the others filled once per worker (member.once), scalars or
 * periodic (bcast_periodic).  Counts each kind. */
static void mark_scalars(const shlo_plan *p, int first, fused *f,
                         const shlo_type *const *types, int *once,
                         int *ones) {
  *once = *ones = 0;
  for (int k = 0; k < f->n_members; k++) {
    member *m = &f->m[k];
    if (!m->bcast || m->slice || m->out >= 0 || m->ref[0] < 0) continue;
    bool scalar = slot_numel(types, p->steps[first + k].in[0]) == 1;
    if (!scalar && !bcast_periodic(&m->map)) continue;
    if (scalar && readers_take_one(p, first, f, k)) try_one(f, k);
    m->once = !m->one;
    *once += m->once;
    *ones += m->one;
  }
}

/* --explain's account of a rows group: rows per block, how many members
 * are computed once per worker or read in place (INV_*), how many
 * results are streamed (shlo__fuse_rows_streams), how many values keep
 * one row of scratch (rows_local), and how many ops run in lane
 * programs. */
static void rows_label(const fused *f, char *buf, size_t cap) {
  int once = 0, alias = 0, streamed = 0, ones = 0, local = 0, lanes = 0;
  int tiles = 0, tile_ops = 0, tile_only = 0, moved = 0;
  for (int k = 0; k < f->n_members; k++) {
    lanes += f->m[k].run_after ? f->m[k].run_after->chain.n_ins : 0;
    tiles += f->m[k].tile != NULL;
    tile_ops += f->m[k].tile ? f->m[k].tile->lp.chain.n_ins : 0;
    tile_only += f->m[k].tile_only;
    moved += f->m[k].moved_to >= 0;
    once += f->m[k].inv == INV_ONCE;
    alias += f->m[k].inv == INV_ALIAS;
    streamed += shlo__fuse_rows_streams(f, &f->m[k]);
    ones += f->m[k].one;
    local += f->m[k].row_step == 0 && f->m[k].row_bytes != 0;
  }
  size_t len = strlen(buf);
  snprintf(buf + len, cap - len,
           " [blocks of %lld row%s; %d member%s once, %d read in place, "
           "%d read as one element per row, %d streamed, %d kept to one "
           "row]",
           (long long)f->block, f->block == 1 ? "" : "s", once,
           once == 1 ? "" : "s", alias, ones, streamed, local);
  len = strlen(buf);
  if (lanes)
    snprintf(buf + len, cap - len, " [in registers: %d ops]", lanes);
  len = strlen(buf);
  if (tiles)
    snprintf(buf + len, cap - len,
             " [%d sum%s on tiles: %d ops, %d value%s never stored, %d "
             "moved to a later segment]",
             tiles, tiles == 1 ? "" : "s", tile_ops, tile_only,
             tile_only == 1 ? "" : "s", moved);
  len = strlen(buf);
  if (f->softmax)
    snprintf(buf + len, cap - len, " [softmax tail in two passes]");
}

/* Per-slot lookups that keep fusion linear in the plan's size.  last_read
 * holds, for each slot, the last step that reads it (INT_MAX for a
 * result); member_of and ext_of map a slot to its writer in the run being
 * built (+1) and to its place among the run's external inputs (+1), and
 * are zeroed again once the run is built. */
typedef struct fuse_index {
  int *last_read;
  int *member_of;
  int *ext_of;
} fuse_index;

static bool used_outside(const fuse_index *x, int last, int slot) {
  return x->last_read[slot] >= last;
}

static void append_label(char *buf, size_t cap, const char *name) {
  size_t len = strlen(buf);
  const char *dot = strchr(name, '.');
  snprintf(buf + len, cap - len, "%s%s", buf[len - 1] != '(' ? ", " : "",
           dot ? dot + 1 : name);
}

/* Where member k's input slot comes from: -(j + 1) for earlier member j's
 * output, else its index among the fused step's external inputs (added to
 * fs->in when new, with its element size when it has numel elements, 0
 * for a broadcast scalar). */
static int fuse_input_ref(fuse_index *x, int slot,
                          const shlo_type *const *types, int64_t numel,
                          fused *f, shlo_step *fs) {
  if (x->member_of[slot]) return -x->member_of[slot];
  if (x->ext_of[slot]) return x->ext_of[slot] - 1;
  int ref = fs->n_in;
  fs->in[fs->n_in++] = slot;
  x->ext_of[slot] = ref + 1;
  f->ext_esz[ref] = slot_numel(types, slot) == numel
                        ? shlo_elem_size(types[slot]->elem)
                        : 0;
  return ref;
}

/* Describe member k (step first + k of p) in f; its output becomes one of
 * the fused step's outputs when a step outside [first, last) reads it. */
static void fuse_member(const shlo_plan *p, int first, int last, int k,
                        fuse_index *x, const shlo_type *const *types,
                        int64_t numel, fused *f, shlo_step *fs) {
  const shlo_step *s = &p->steps[first + k];
  member *m = &f->m[k];
  m->one_arg = -1;
  m->seg = -1;
  m->moved_to = -1;
  m->bcast = !s->loop.range;
  m->slice = m->bcast && is_slice_view(s, types);
  if (m->bcast) view_map_of(s, types, &m->map);
  m->n_in = s->n_in;
  for (int i = 0; i < s->n_in; i++)
    m->ref[i] = fuse_input_ref(x, s->in[i], types, numel, f, fs);
  x->member_of[s->out[0]] = k + 1;
  const shlo_type *rt = types[s->out[0]];
  m->esz = shlo_elem_size(rt->elem);
  m->out = -1;
  if (used_outside(x, last, s->out[0])) {
    m->result = x->last_read[s->out[0]] == INT_MAX;
    m->out = fs->n_out;
    output *o = &f->outs[fs->n_out];
    o->elem = rt->elem;
    o->rank = rt->rank;
    memcpy(o->dims, rt->dims, sizeof o->dims);
    fs->out[fs->n_out++] = s->out[0];
  }
  append_label(fs->label, FUSE_LABEL_CAP, s->op ? s->op->name : "?");
}

/* Replace steps [first, last) of p by one fused step written to *dst: a
 * run of numel elements, or a rows group over F when F is not NULL. */
static shlo_status fuse_run(shlo_plan *p, int first, int last,
                            fuse_index *x, const shlo_type *const *types,
                            int64_t numel, const shlo_type *F,
                            shlo_step *dst) {
  int n = last - first;
  fused *f = shlo__calloc(1, sizeof *f);
  shlo_step fs = {0};
  if (!f) return SHLO_ENOMEM;
  f->numel = numel;
  f->m = shlo__calloc((size_t)n, sizeof *f->m);
  f->ext_esz = shlo__calloc((size_t)3 * n, sizeof *f->ext_esz);
  f->outs = shlo__calloc((size_t)n, sizeof *f->outs);
  fs.in = shlo__malloc((size_t)3 * n * sizeof *fs.in);
  fs.out = shlo__malloc((size_t)n * sizeof *fs.out);
  fs.label = shlo__calloc(1, FUSE_LABEL_CAP);
  if (!f->m || !f->ext_esz || !f->outs || !fs.in || !fs.out || !fs.label) {
    fused_free(f);
    shlo__free(fs.in);
    shlo__free(fs.out);
    shlo__free(fs.label);
    return SHLO_ENOMEM;
  }
  snprintf(fs.label, FUSE_LABEL_CAP, F ? "fused_rows(" : "fused(");
  for (int k = 0; k < n; k++)
    fuse_member(p, first, last, k, x, types, numel, f, &fs);
  for (int k = 0; k < n; k++) x->member_of[p->steps[first + k].out[0]] = 0;
  for (int e = 0; e < fs.n_in; e++) x->ext_of[fs.in[e]] = 0;
  size_t len = strlen(fs.label);
  snprintf(fs.label + len, FUSE_LABEL_CAP - len, ")");
  f->n_members = n;
  f->n_ext = fs.n_in;
  f->n_out = fs.n_out;
  if (F) {
    rows_describe(p, first, f, &fs, types, F);
    rows_label(f, fs.label, FUSE_LABEL_CAP);
  } else {
    int once, ones;
    mark_scalars(p, first, f, types, &once, &ones);
    int ins, stored;
    int progs = shlo__fuse_lanes_build(p, first, f, &ins, &stored);
    run_layout(f);
    len = strlen(fs.label);
    if (once || ones)
      snprintf(fs.label + len, FUSE_LABEL_CAP - len,
               " [broadcasts the same in every chunk: %d filled once, %d "
               "read as one element]",
               once, ones);
    len = strlen(fs.label);
    if (progs == 1)
      snprintf(fs.label + len, FUSE_LABEL_CAP - len,
               " [in registers: %d ops, %d values stored]", ins, stored);
    else if (progs > 1)
      snprintf(fs.label + len, FUSE_LABEL_CAP - len,
               " [in registers: %d ops in %d programs, %d values stored]",
               ins, progs, stored);
  }
  /* The members move into the fused step; their slots stay as they are. */
  for (int k = 0; k < n; k++) {
    f->m[k].step = p->steps[first + k];
    memset(&p->steps[first + k], 0, sizeof p->steps[first + k]);
  }
  fs.fn = k_fused;
  fs.op = f->m[0].step.op;
  fs.params = f;
  fs.free_params = fused_free;
  *dst = fs;
  return SHLO_OK;
}

/* Constants have no inputs and cost nothing to keep alive (they share the
 * module's literal), so they move to the front of the plan, where they no
 * longer split the runs JAX interleaves them with. */
static shlo_status hoist_constants(shlo_plan *p) {
  shlo_step *tmp = shlo__malloc((size_t)(p->n_steps ? p->n_steps : 1) * sizeof *tmp);
  if (!tmp) return SHLO_ENOMEM;
  int w = 0;
  for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i < p->n_steps; i++) {
      bool is_const = p->steps[i].op && p->steps[i].op->code == SHLO_OP_CONSTANT;
      if (is_const == (pass == 0)) tmp[w++] = p->steps[i];
    }
  memcpy(p->steps, tmp, (size_t)p->n_steps * sizeof *tmp);
  shlo__free(tmp);
  return SHLO_OK;
}

static void fuse_index_free(fuse_index *x) {
  shlo__free(x->last_read);
  shlo__free(x->member_of);
  shlo__free(x->ext_of);
}

/* last_read over the plan as it stands (after hoisting), zeroed maps. */
static shlo_status fuse_index_init(fuse_index *x, const shlo_plan *p) {
  size_t n = (size_t)p->n_slots + 1;
  x->last_read = shlo__malloc(n * sizeof *x->last_read);
  x->member_of = shlo__calloc(n, sizeof *x->member_of);
  x->ext_of = shlo__calloc(n, sizeof *x->ext_of);
  if (!x->last_read || !x->member_of || !x->ext_of) {
    fuse_index_free(x);
    return SHLO_ENOMEM;
  }
  for (int s = 0; s < p->n_slots; s++) x->last_read[s] = -1;
  for (int i = 0; i < p->n_steps; i++)
    for (int k = 0; k < p->steps[i].n_in; k++)
      x->last_read[p->steps[i].in[k]] = i;
  for (int k = 0; k < p->n_results; k++)
    x->last_read[p->result_slots[k]] = INT_MAX;
  return SHLO_OK;
}

/* ---- epilogues: a run behind the blocks of the step that feeds it ---- */

/* A step whose kernel makes its result in blocks (shlo_step.loop.run_blocks)
 * and the run that alone reads that result: the run works on each block
 * as soon as it is final, on the same thread, while the block is in that
 * core's cache, instead of reading the whole result back from memory in a
 * pass of its own (a convolution's bias and ReLU).  The producer's result
 * is a temporary that no other step sees. */
typedef struct epilogue {
  shlo_step producer, run;   /* moved here from the plan */
  const shlo_type *made;     /* the producer's result type */
  int ext;                   /* the run's external input it feeds */
  /* The run's one result, made by its last member from values the run
   * computed (not from the producer's result directly), is written over
   * the producer's result: each chunk of it is read before it is
   * overwritten, and the block stays in cache instead of a second buffer
   * coming in from memory. */
  bool in_place;
  /* The run is a bias and ReLU (shlo__fuse_bias_relu_of) that the
   * producer applies itself (loop.run_bias_relu): the run's inputs
   * holding the bias and the maximum's scalar (-1: no maximum). */
  bool bias_relu;
  int bias_ext, zero_ext;
} epilogue;

static void epilogue_free(void *p) {
  epilogue *e = p;
  if (!e) return;
  shlo__step_free(&e->producer);
  shlo__step_free(&e->run);
  shlo__free(e);
}

/* A rows group over elements [lo, hi) of the producer's result, whole
 * rows of it (shlo_step.loop.run_blocks makes blocks of whole rows). */
static void rows_of_block(void *ctx, int64_t lo, int64_t hi) {
  const fused_run *r = ctx;
  rows_chunk(ctx, lo / r->f->cols, hi / r->f->cols);
}

/* The step's inputs are the producer's, then the run's but e->ext. */
static shlo_status k_epilogue(const shlo_step *s, shlo_value *const *in,
                              shlo_value **out, shlo_exec *ex) {
  const epilogue *e = s->params;
  const fused *f = e->run.params;
  shlo_value **run_in = shlo__malloc((size_t)f->n_ext * sizeof *run_in);
  shlo_value *made = shlo__tensor_new_uninit(e->made->elem, e->made->rank,
                                             e->made->dims);
  shlo_status st = SHLO_OK;
  if (!run_in || !made) {
    st = shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory for a result");
    goto done;
  }
  const int n_prod = e->producer.n_in;
  for (int k = 0; k < f->n_ext; k++)
    run_in[k] = k == e->ext ? made : in[n_prod + k - (k > e->ext)];
  /* (the scalar is a constant +0, epilogue_join; checked again) */
  if (e->bias_relu &&
      run_in[e->bias_ext]->numel == made->dims[made->rank - 1] &&
      (e->zero_ext < 0 || shlo__fuse_is_pos_zero(run_in[e->zero_ext]))) {
    st = e->producer.loop.run_bias_relu(&e->producer, in, made,
                                        run_in[e->bias_ext]->data,
                                        e->zero_ext >= 0, ex);
    if (!st) {
      out[0] = made;
      shlo_value_ref(made);
    }
    goto done;
  }
  if (e->in_place) {
    out[0] = made;
    shlo_value_ref(made);
  } else if ((st = fused_new_results(s, f, out, ex))) {
    goto done;
  }
  fused_run r = {f, run_in, out, 0};
  st = e->producer.loop.run_blocks(&e->producer, in, made,
                              f->cols ? rows_of_block : fused_chunk, &r, ex);
  if (!st && atomic_load(&r.failed))
    st = shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory for scratch");
done:
  if (st)
    for (int k = 0; k < f->n_out; k++) {
      if (out[k]) shlo_value_unref(out[k]);
      out[k] = NULL;
    }
  if (made) shlo_value_unref(made);
  shlo__free(run_in);
  return st;
}

/* Whether fused step r (a run or a rows group) can be producer p's
 * epilogue: it reads p's one full-size result (as external input *ext),
 * and no other step and no result of the plan does (reads[slot]: the
 * plan's reads of each slot, a result counting as one more). */
static bool epilogue_fits(const shlo_step *p, const shlo_step *r,
                          const shlo_type *const *types, const int *reads,
                          int *ext) {
  if (!p->loop.run_blocks || p->n_out != 1 || r->fn != k_fused) return false;
  const fused *f = r->params;
  int slot = p->out[0];
  const shlo_type *t = types[slot];
  if (f->cols ? t->rank < 1 || t->dims[t->rank - 1] != f->cols ||
                    slot_numel(types, slot) != f->rows * f->cols
              : slot_numel(types, slot) != f->numel)
    return false;
  *ext = -1;
  for (int k = 0; k < r->n_in; k++)
    if (r->in[k] == slot) *ext = k;
  return *ext >= 0 && f->ext_esz[*ext] && reads[slot] == 1;
}

/* Make steps i and i + 1 of pl (a producer and its epilogue run, ext the
 * run's input it feeds) one step, written to *dst. */
static shlo_status epilogue_join(shlo_plan *pl, int i, int ext,
                                 const shlo_type *const *types,
                                 shlo_step *dst) {
  shlo_step *p = &pl->steps[i], *r = &pl->steps[i + 1];
  epilogue *e = shlo__calloc(1, sizeof *e);
  shlo_step js = {0};
  js.in = shlo__malloc((size_t)(p->n_in + r->n_in) * sizeof *js.in);
  const char *pl_label = p->label ? p->label : p->op->name;
  size_t cap = strlen(pl_label) + strlen(r->label) + 40;
  js.label = shlo__malloc(cap);
  if (!e || !js.in || !js.label) {
    shlo__free(e);
    shlo__free(js.in);
    shlo__free(js.label);
    return SHLO_ENOMEM;
  }
  e->made = types[p->out[0]];
  e->ext = ext;
  const fused *f = r->params;
  const member *last = &f->m[f->n_members - 1];
  e->in_place = f->n_out == 1 && last->out == 0 &&
                (!f->cols || last->dom == DOM_FULL) &&
                shlo_type_equal(e->made, types[r->out[0]]);
  for (int k = 0; k < last->n_in; k++)
    e->in_place = e->in_place && last->ref[k] != ext;
  e->bias_relu = p->loop.run_bias_relu &&
                 shlo__fuse_bias_relu_of(r, e->made, ext, types, &e->bias_ext,
                                         &e->zero_ext) &&
                 (e->zero_ext < 0 ||
                  shlo__fuse_const_pos_zero(pl, r->in[e->zero_ext]));
  snprintf(js.label, cap, "%s + %s%s", pl_label, r->label,
           e->bias_relu  ? " [in the producer's registers]"
           : e->in_place ? " [in place]"
                         : "");
  for (int k = 0; k < p->n_in; k++) js.in[js.n_in++] = p->in[k];
  for (int k = 0; k < r->n_in; k++)
    if (k != ext) js.in[js.n_in++] = r->in[k];
  js.out = r->out; /* the run's results become the step's */
  js.n_out = r->n_out;
  r->out = NULL;
  r->n_out = 0;
  e->producer = *p;
  e->run = *r;
  js.fn = k_epilogue;
  js.op = p->op;
  js.params = e;
  js.free_params = epilogue_free;
  *dst = js;
  return SHLO_OK;
}

/* After steps [0, w) of p were rewritten from steps [0, i), when a pass
 * stops there (out of memory): move the steps not reached down to w, so
 * that every step is in the plan once and the plan frees cleanly. */
static void steps_close_gap(shlo_plan *p, int w, int i) {
  memmove(&p->steps[w], &p->steps[i],
          (size_t)(p->n_steps - i) * sizeof *p->steps);
  p->n_steps = w + (p->n_steps - i);
}

/* Join every producer with blocks to the run right behind it that alone
 * reads its result. */
static shlo_status join_epilogues(shlo_plan *pl,
                                  const shlo_type *const *types) {
  int *reads = shlo__calloc((size_t)pl->n_slots + 1, sizeof *reads);
  if (!reads) return SHLO_ENOMEM;
  for (int i = 0; i < pl->n_steps; i++)
    for (int k = 0; k < pl->steps[i].n_in; k++) reads[pl->steps[i].in[k]]++;
  for (int k = 0; k < pl->n_results; k++) reads[pl->result_slots[k]]++;
  int w = 0;
  for (int i = 0; i < pl->n_steps;) {
    int ext;
    if (i + 1 < pl->n_steps && epilogue_fits(&pl->steps[i], &pl->steps[i + 1],
                                             types, reads, &ext)) {
      shlo_step js;
      shlo_status st = epilogue_join(pl, i, ext, types, &js);
      if (st) {
        steps_close_gap(pl, w, i);
        shlo__free(reads);
        return st;
      }
      pl->steps[w++] = js;
      i += 2;
    } else {
      if (w != i) pl->steps[w] = pl->steps[i];
      w++;
      i++;
    }
  }
  pl->n_steps = w;
  shlo__free(reads);
  return SHLO_OK;
}

shlo_status shlo__fuse_plan(shlo_plan *p, const shlo_type *const *types) {
  shlo_status st0 = hoist_constants(p);
  if (!st0) st0 = shlo__fuse_hoist_reshapes(p, types);
  if (!st0) st0 = shlo__fuse_fold_scales(p, types);
  if (!st0) st0 = shlo__fuse_scatter_fills(p, types);
  if (st0) return st0;
  fuse_index x = {0};
  st0 = fuse_index_init(&x, p);
  if (st0) return st0;
  int w = 0;
  for (int i = 0; i < p->n_steps;) {
    const shlo_step *s = &p->steps[i];
    int64_t numel = s->n_out == 1 ? slot_numel(types, s->out[0]) : -1;
    const shlo_type *F = NULL;
    int j = rows_group_end(p, i, types, &F);
    if (j == i && numel >= FUSE_MIN_NUMEL)
      while (j < p->n_steps && j - i < FUSE_MAX_MEMBERS &&
             fusable(&p->steps[j], types, numel))
        j++;
    if (j - i >= 2) {
      shlo_step fs;
      shlo_status st = fuse_run(p, i, j, &x, types, numel, F, &fs);
      if (st) {
        steps_close_gap(p, w, i);
        fuse_index_free(&x);
        return st;
      }
      p->steps[w++] = fs;
      i = j;
    } else {
      if (w != i) p->steps[w] = p->steps[i];
      w++;
      i++;
    }
  }
  p->n_steps = w;
  fuse_index_free(&x);
  shlo_status st = shlo__fuse_epi_chains(p, types);
  return st ? st : join_epilogues(p, types);
}

bool shlo__fuse_is_run(const shlo_step *s) { return s->fn == k_fused; }
