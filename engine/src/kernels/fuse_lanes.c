/* SPDX-License-Identifier: Apache-2.0 */
/* Lane programs for fused runs (fuse_int.h): each stretch of a run made
 * of f32 lane ops (and broadcasts among them) as one kernels/vchain.h
 * program, whose values stay in vector registers from op to op.
 *
 * The instructions are the stretch's members that are not broadcasts, in
 * order, so the accumulator holds the previous one's value.  A value is
 * stored only when it is a result or a member other than the next
 * instruction reads it (in the stretch or after it); the others are
 * in_acc and never written.  A broadcast of one element is an input of
 * that element; the other broadcasts, and values made before the
 * stretch, are read where fuse.c put them.
 *
 * A rows group's segment (its members between two reductions) runs as a
 * program a row at a time when its members of full rows are all lane
 * ops other than exp, tanh and logistic, and its rows are long: the
 * chain of layernorm's normalization, scale and shift ran 3 to 5% faster
 * so; the others ran slower (shlo__fuse_lanes_rows, ROWS_LANES_MIN_COLS). */
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "kernels/fuse_int.h"
#include "core/value.h"
#include "kernels/fold_tiles.h"

/* Rows shorter than this pay a program's setup (its one-element inputs
 * spread over a block) on too few elements: attention's rows of 256 ran
 * 4% slower as programs. */
#define ROWS_LANES_MIN_COLS 512

/* lp's input for external input ref (ext) or member ref's value, added
 * when new; -2 when the program has no room left. */
static int lanes_input(lane_prog *lp, bool ext, int ref, bool one) {
  shlo_vchain *c = &lp->chain;
  for (int k = 0; k < c->n_in; k++)
    if (lp->in[k].ext == ext && lp->in[k].ref == ref) return k;
  if (c->n_in == SHLO_VCHAIN_MAX_IO) return -2;
  int k = c->n_in++;
  lp->in[k] = (lane_io){ext, ref};
  c->in_one[k] = one;
  return k;
}

/* Whether member q of f is an instruction of the program of its stretch
 * or segment (not a broadcast, not a reduction, of full rows). */
static bool lanes_is_ins(const fused *f, int q) {
  const member *m = &f->m[q];
  return !m->bcast && !m->fold && (!f->cols || m->dom == DOM_FULL);
}

/* Where member j's value lies for a tile program that does not compute
 * it: a row value's broadcast (read as one element per row elsewhere),
 * one row that every row shares, or a value kept over the block. */
static int tile_kind_of(const fused *f, int j) {
  if (f->m[j].one) return SHLO_TILE_ROW;
  return f->m[j].row_bytes == 0 ? SHLO_TILE_COL : SHLO_TILE_FULL;
}

/* Member m's operand i as an instruction's: the accumulator when it is
 * the value of member `prev`, the instruction before; else an input (a
 * broadcast read as one element: a run's of an outside value, a rows
 * group's of the row's element).  In a tile program (tp), with its
 * kind: a value the program computes itself (in_list) is read back from
 * its output, and a row's one element is the row's in its lane. */
static int lanes_operand(lane_prog *lp, const fused *f, const member *m,
                         int i, int prev, tile_prog *tp,
                         const bool *in_list) {
  int ref = m->ref[i];
  int k, kind;
  if (ref >= 0) {
    bool one = f->ext_esz[ref] == 0;
    k = lanes_input(lp, true, ref, one);
    kind = one ? SHLO_TILE_ONE : SHLO_TILE_FULL;
  } else {
    int j = -ref - 1;
    if (j == prev) return SHLO_VCHAIN_ACC;
    if (tp) {
      kind = in_list[j] ? SHLO_TILE_OUT : tile_kind_of(f, j);
      k = lanes_input(lp, false, j, false);
    } else if (f->m[j].one) {
      k = f->cols ? lanes_input(lp, false, j, true)
                  : lanes_input(lp, true, f->m[j].ref[0], true);
    } else {
      k = lanes_input(lp, false, j, false);
    }
  }
  if (tp && k >= 0) tp->kind[k] = (uint8_t)kind;
  return k;
}

bool shlo__fuse_lanes_op(const shlo_plan *p, int first, const fused *f,
                         int q) {
  const member *m = &f->m[q];
  int op = p->steps[first + q].loop.lane_op;
  if (m->bcast || !op || m->esz != 4 ||
      m->n_in != (shlo_lane_op_binary(op) ? 2 : 1))
    return false;
  for (int i = 0; i < m->n_in; i++) {
    int j = -m->ref[i] - 1;
    if (!f->cols && j >= 0 && f->m[j].one && f->m[j].ref[0] < 0)
      return false;
  }
  return true;
}

/* Whether broadcast q may sit among a stretch's members: f32. */
static bool lanes_bcast(const fused *f, int q) {
  return f->m[q].bcast && f->m[q].esz == 4;
}

/* Which instructions of list[0, n) store their value (stored[q]), and
 * which of those a member reads again past the next instruction
 * (again[q]).  A stretch's or segment's program (result < 0): results,
 * values kept whole for tile programs and moved members (read_whole),
 * and values a member other than the next instruction reads (members
 * computed only in tile programs read nothing outside them).  A tile
 * program: its result, and values an instruction of its own other than
 * the next reads. */
static void lanes_stored(const fused *f, const int *list, int n, int result,
                         bool *stored, bool *again) {
  bool tile = result >= 0, in_list[FUSE_MAX_MEMBERS] = {false};
  for (int i = 0; i < n; i++) in_list[list[i]] = true;
  for (int i = n - 1; i >= 0; i--) {
    int q = list[i], next = i + 1 < n ? list[i + 1] : -1;
    stored[q] = tile ? q == result : f->m[q].out >= 0 || f->m[q].read_whole;
    again[q] = !tile && f->m[q].read_whole;
    for (int r = q + 1; r < f->n_members; r++) {
      if (r == next || (tile ? !in_list[r] : f->m[r].tile_only)) continue;
      for (int j = 0; j < f->m[r].n_in; j++)
        if (f->m[r].ref[j] == -(q + 1)) stored[q] = again[q] = true;
    }
  }
}

/* lp's instructions for the n members list[] (in order), lp zeroed; for
 * a tile program (tp, lp == &tp->lp) of member result's value.  False
 * (lp's instructions freed) when it has no room for its inputs or
 * outputs, or memory is short.  A large result goes out past the caches
 * unless a member reads it back. */
static bool lanes_fill(lane_prog *lp, const shlo_plan *p, int first,
                       const fused *f, const int *list, int n,
                       tile_prog *tp, int result) {
  bool stored[FUSE_MAX_MEMBERS], again[FUSE_MAX_MEMBERS];
  bool in_list[FUSE_MAX_MEMBERS] = {false};
  for (int i = 0; i < n; i++) in_list[list[i]] = true;
  lanes_stored(f, list, n, tp ? result : -1, stored, again);
  shlo_vchain *c = &lp->chain;
  c->ins = shlo__malloc((n > 0 ? (size_t)n : 1) * sizeof *c->ins);
  if (!c->ins) return false;
  int prev = -1;
  for (int i = 0; i < n; i++) {
    int q = list[i];
    const member *m = &f->m[q];
    int a = lanes_operand(lp, f, m, 0, prev, tp, in_list);
    int b = m->n_in > 1 ? lanes_operand(lp, f, m, 1, prev, tp, in_list)
                        : SHLO_VCHAIN_ACC;
    if (a == -2 || b == -2 || (stored[q] && c->n_out == SHLO_VCHAIN_MAX_IO)) {
      shlo__free(c->ins);
      c->ins = NULL;
      return false;
    }
    c->ins[c->n_ins] = (shlo_vchain_ins){p->steps[first + q].loop.lane_op,
                                         (int8_t)a, (int8_t)b, -1};
    if (stored[q]) {
      bool streams = !tp && (f->cols ? shlo__fuse_rows_streams(f, m)
                                     : shlo__fuse_run_streams(f, m));
      c->ins[c->n_ins].out = (int8_t)c->n_out;
      lp->out[c->n_out] = q;
      lp->direct[c->n_out] = streams && !again[q];
      c->out_stream[c->n_out++] = streams && !again[q];
    }
    c->n_ins++;
    prev = q;
  }
  return true;
}

/* The program of the n members list[] of a stretch or segment, those
 * members' fields set; NULL (and the fields untouched) when it has no
 * room or memory is short. */
static lane_prog *lanes_build(const shlo_plan *p, int first, fused *f,
                              const int *list, int n) {
  bool stored[FUSE_MAX_MEMBERS], again[FUSE_MAX_MEMBERS];
  lane_prog *lp = shlo__calloc(1, sizeof *lp);
  if (!lp) return NULL;
  if (!lanes_fill(lp, p, first, f, list, n, NULL, -1)) {
    shlo__free(lp);
    return NULL;
  }
  lanes_stored(f, list, n, -1, stored, again);
  for (int i = 0; i < n; i++) {
    member *m = &f->m[list[i]];
    m->prog_ins = true;
    m->in_acc = !stored[list[i]];
  }
  size_t work = shlo__vchain_work_bytes(&lp->chain);
  if (work > f->lanes_work) f->lanes_work = work;
  return lp;
}

tile_prog *shlo__fuse_lanes_tile(const shlo_plan *p, int first, fused *f,
                                 const int *list, int n, int result) {
  tile_prog *tp = shlo__calloc(1, sizeof *tp);
  if (!tp) return NULL;
  if (!lanes_fill(&tp->lp, p, first, f, list, n, tp, result)) {
    shlo__free(tp);
    return NULL;
  }
  for (int q = 0; q < tp->lp.chain.n_out; q++)
    if (tp->lp.out[q] == result) tp->result = q;
  for (int k = 0; k < tp->lp.chain.n_in; k++)
    for (int q = 0; q < tp->lp.chain.n_out; q++)
      if (tp->kind[k] == SHLO_TILE_OUT && tp->lp.out[q] == tp->lp.in[k].ref)
        tp->out_of[k] = (int8_t)q;
  size_t work = shlo__fold_tiles_work_bytes(&tp->lp.chain);
  if (work > f->lanes_work) f->lanes_work = work;
  return tp;
}

void shlo__fuse_tile_free(tile_prog *tp) {
  if (!tp) return;
  shlo__free(tp->lp.chain.ins);
  shlo__free(tp);
}

int shlo__fuse_lanes_build(const shlo_plan *p, int first, fused *f,
                           int *n_ins, int *n_stored) {
  int progs = 0;
  *n_ins = *n_stored = 0;
  for (int k = 0; k < f->n_members;) {
    /* a stretch: lane ops and broadcasts, from a lane op to a lane op */
    if (!shlo__fuse_lanes_op(p, first, f, k)) {
      k++;
      continue;
    }
    int e = k, end = k, list[FUSE_MAX_MEMBERS], ops = 0;
    for (; e < f->n_members &&
           (shlo__fuse_lanes_op(p, first, f, e) || lanes_bcast(f, e));
         e++)
      if (shlo__fuse_lanes_op(p, first, f, e)) {
        list[ops++] = e;
        end = e + 1;
      }
    lane_prog *lp = ops >= 2 ? lanes_build(p, first, f, list, ops) : NULL;
    if (lp) {
      for (int q = k; q < end; q++) f->m[q].seg = k;
      f->m[end - 1].run_after = lp;
      progs++;
      *n_ins += lp->chain.n_ins;
      *n_stored += lp->chain.n_out;
    }
    k = end;
  }
  return progs;
}

/* The instructions of segment [k, e)'s program, in order: the members
 * moved to it from earlier segments, then its own members of full rows
 * that are neither moved on nor computed only in tile programs. */
static int rows_list(const fused *f, int k, int e, int *list) {
  int n = 0;
  for (int q = 0; q < k; q++)
    if (f->m[q].moved_to == k) list[n++] = q;
  for (int q = k; q < e; q++)
    if (lanes_is_ins(f, q) && !f->m[q].tile_only && f->m[q].moved_to < 0)
      list[n++] = q;
  return n;
}

/* Whether member q can be an instruction of a rows program: a lane op
 * other than exp, tanh and logistic (a row at a time they ran slower
 * inline in a program than through their own loop: softmax's subtract
 * and exp, 5%), computed in every block, its outside operands whole. */
static bool rows_ins_ok(const shlo_plan *p, int first, const fused *f,
                        int q) {
  const member *m = &f->m[q];
  if (!shlo__fuse_lanes_op(p, first, f, q) || m->inv != INV_NO ||
      p->steps[first + q].loop.lane_op >= SHLO_LANE_EXP)
    return false;
  for (int i = 0; i < m->n_in; i++)
    if (m->ref[i] >= 0 && m->adv[i] != ADV_FULL) return false;
  return true;
}

bool shlo__fuse_lanes_rows_ok(const shlo_plan *p, int first, const fused *f,
                              int k, int e, int q) {
  /* rows_segment runs the programs; blocks of one row run member by
   * member (rows_chunk) */
  if (f->cols < ROWS_LANES_MIN_COLS || f->block < 2) return false;
  int list[FUSE_MAX_MEMBERS], n = rows_list(f, k, e, list);
  for (int i = 0; i < n; i++)
    if (!rows_ins_ok(p, first, f, list[i])) return false;
  return q < 0 || rows_ins_ok(p, first, f, q);
}

lane_prog *shlo__fuse_lanes_rows(const shlo_plan *p, int first, fused *f,
                                 int k, int e) {
  int list[FUSE_MAX_MEMBERS], n = rows_list(f, k, e, list);
  if (!n || !shlo__fuse_lanes_rows_ok(p, first, f, k, e, -1)) return NULL;
  return lanes_build(p, first, f, list, n);
}

void shlo__fuse_lanes_free(lane_prog *lp) {
  if (!lp) return;
  shlo__free(lp->chain.ins);
  shlo__free(lp);
}

void shlo__fuse_lanes_run_rows(const lane_prog *lp, const fused_run *r,
                               int64_t ext_elem, char *const *val,
                               const int64_t *val_step, char *const *direct,
                               const int64_t *direct_step, int64_t rows,
                               int64_t n, void *work) {
  const fused *f = r->f;
  const float *in[SHLO_VCHAIN_MAX_IO];
  float *out[SHLO_VCHAIN_MAX_IO];
  int64_t in_step[SHLO_VCHAIN_MAX_IO], out_step[SHLO_VCHAIN_MAX_IO];
  for (int k = 0; k < lp->chain.n_in; k++) {
    const lane_io *io = &lp->in[k];
    size_t esz = io->ext ? f->ext_esz[io->ref] : 0;
    in[k] = io->ext ? (const float *)((const char *)r->in[io->ref]->data +
                                      (size_t)ext_elem * esz)
                    : (const float *)val[io->ref];
    in_step[k] = io->ext ? n * (int64_t)esz : val_step ? val_step[io->ref] : 0;
  }
  for (int q = 0; q < lp->chain.n_out; q++) {
    bool d = direct && lp->direct[q];
    out[q] = (float *)(d ? direct[q] : val[lp->out[q]]);
    out_step[q] = d ? (direct_step ? direct_step[q] : 0)
                    : val_step ? val_step[lp->out[q]] : 0;
  }
  shlo__vchain_run_rows(&lp->chain, out, out_step, in, in_step, rows, n,
                        work);
}

void shlo__fuse_lanes_run(const lane_prog *lp, const fused_run *r,
                          int64_t ext_elem, char *const *val,
                          char *const *direct, int64_t n, void *work) {
  shlo__fuse_lanes_run_rows(lp, r, ext_elem, val, NULL, direct, NULL, 1, n,
                            work);
}
