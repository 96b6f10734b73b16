/* SPDX-License-Identifier: Apache-2.0 */
/* Softmax's tail in a rows group (fuse_int.h): after the row maximum m,
 * e = exp(a - m), s = sum of e along the row, e / s.
 *
 * Member by member that is five passes over each block: the subtract
 * writes a - m, the exponential reads it and writes e, the sum reads e,
 * the divide reads e and writes the result (through a row of scratch
 * when it is streamed).  Here e is computed straight from a, a row at a
 * time, and stored once; every 4 rows their sums are taken while the
 * rows are still in L1 (vmath.h, shlo__vsoftmax_exp_f32); then
 * e / s goes to the result, streamed straight from registers where the
 * result is, in the same loop as the next block's exponentials (the
 * chunk's last block at its end), and where a is an outside argument
 * that loop also takes the next block's row maxima.  Every element sees
 * the same IEEE operations as the ops one by one and every sum adds its
 * row in the reduce kernel's schedule (sum_tree.h), so the bits are the
 * unfused ones
 * (test_fuse_softmax checks each variant).  The divide stays a divide:
 * e * (1 / s) rounds twice.
 *
 * JAX's softmax with keepdims (bench/models/transformer.mlir) reaches m
 * and s through broadcasts that only add unit dimensions (8x12x128 ->
 * 8x12x128x1), and subtracts maximum(-inf, m): its reduce's -inf init
 * folded in again as an elementwise maximum.  Such a broadcast's value
 * is its operand's element for element, so the tail reads the operand.
 * The maximum is no identity to rely on for any c, so the tail computes
 * it, per row, with the maximum op's own function (shlo_fmaxf: NaN
 * propagated, -0 below +0), the operands in the program's order; for
 * c = -inf it gives m's bits for every m, NaN and -0 included.  Since
 * maximum(c, m) >= m or is NaN, a - it is still <= 0 or NaN where m is
 * the maximum of a. */
#include <math.h>
#include <string.h>

#include "core/bf16conv.h"
#include "core/value.h"
#include "kernels/float_minmax.h"
#include "kernels/fuse_int.h"
#include "kernels/vmath.h"
#include "ops/ops.h"

/* The member a reference names, or -1 for an outside input. */
static int member_ref(int ref) { return ref < 0 ? -ref - 1 : -1; }

/* Whether member q of f is an f32 lane op `op` over full rows, computed
 * in every block by itself (no tile program, lane program or other
 * segment does it instead) and not one of the group's results. */
static bool tail_op(const shlo_plan *p, int first, const fused *f, int q,
                    int op) {
  const member *m = &f->m[q];
  return p->steps[first + q].loop.lane_op == op &&
         shlo__fuse_lanes_op(p, first, f, q) && m->dom == DOM_FULL &&
         m->inv == INV_NO && !m->one && !m->tile_only && m->moved_to < 0 &&
         m->esz == 4;
}

/* Whether operand a of the subtract (its ref) is there over the whole
 * block, rows cols floats apart: an outside f32 array over the rows, or
 * a member's value kept whole for the block. */
static bool tail_source(const fused *f, const member *sub) {
  int j = member_ref(sub->ref[0]);
  if (j < 0)
    return sub->adv[0] == ADV_FULL && f->ext_esz[sub->ref[0]] == 4;
  const member *a = &f->m[j];
  return a->dom == DOM_FULL && a->esz == 4 && a->inv == INV_NO && !a->one &&
         !a->tile_only && a->moved_to < 0 && !a->in_acc &&
         a->row_step == (size_t)f->cols * 4;
}

/* The broadcast member that operand i of member q reads as one element
 * per row, and the member whose row values it broadcasts (-1: none). */
static int one_of(const fused *f, int q, int i) {
  int b = member_ref(f->m[q].ref[i]);
  if (b < 0 || !f->m[b].one) return -1;
  return member_ref(f->m[b].ref[0]);
}

/* Whether member q is a broadcast of a row value (one element per row)
 * to another shape of one element per row, only adding or keeping unit
 * dimensions (JAX's keepdims 8x12x128 -> 8x12x128x1): element i of its
 * value is element i of its operand, so the tail may read the operand
 * in its place.  None of the group's results. */
static bool row_copy(const fused *f, int q) {
  const member *m = &f->m[q];
  int j = member_ref(m->ref[0]);
  if (!m->bcast || m->one || m->dom != DOM_ROW || m->out >= 0 ||
      m->esz != 4 || j < 0 || f->m[j].dom != DOM_ROW)
    return false;
  int64_t stride = 1; /* the operand's offsets are the linear index */
  for (int d = m->map.rank - 1; d >= 0; d--) {
    if (m->map.dims[d] != 1 && m->map.src_stride[d] != stride) return false;
    stride *= m->map.dims[d];
  }
  return stride == f->rows;
}

/* Member q followed back through row copies, each marked in on[]. */
static int through_copies(const fused *f, int q, bool *on) {
  while (q >= 0 && row_copy(f, q)) {
    on[q] = true;
    q = member_ref(f->m[q].ref[0]);
  }
  return q;
}

/* Whether member q is maximum(c, x) or maximum(x, c) over row values, c
 * a broadcast of one f32 element from outside; sets t's cap fields and
 * returns x's member (-1: not such). */
static int capped_max(const shlo_plan *p, int first, const fused *f, int q,
                      softmax_tail *t, bool *on) {
  if (q < 0) return -1;
  const member *m = &f->m[q];
  const shlo_step *s = &p->steps[first + q]; /* members take it later */
  if (s->loop.lane_op != SHLO_LANE_MAX || !s->op ||
      s->op->code != SHLO_OP_MAXIMUM ||
      !shlo__fuse_lanes_op(p, first, f, q) || m->dom != DOM_ROW ||
      m->out >= 0 || m->moved_to >= 0)
    return -1;
  for (int i = 0; i < 2; i++) {
    int c = member_ref(m->ref[i]), x = member_ref(m->ref[1 - i]);
    if (c < 0 || x < 0) continue;
    const member *cm = &f->m[c];
    bool scalar = cm->bcast && !cm->one && cm->esz == 4 && cm->out < 0 &&
                  cm->ref[0] >= 0;
    /* every element read from the operand's offset 0: along no
     * dimension longer than 1 does it move, so it holds one element */
    for (int d = 0; scalar && d < cm->map.rank; d++)
      if (cm->map.dims[d] != 1 && cm->map.src_stride[d] != 0) scalar = false;
    if (!scalar) continue;
    t->cap = q;
    t->cap_in = cm->ref[0];
    t->cap_first = i == 0;
    on[q] = on[c] = true;
    return x;
  }
  return -1;
}

/* The row maximum member the subtract's row value comes from: through
 * row copies, optionally maximum(c, ...) (capped_max), row copies again;
 * the members passed marked in on[].  -1: not such. */
static int row_value(const shlo_plan *p, int first, const fused *f,
                     softmax_tail *t, bool *on) {
  int q = through_copies(f, one_of(f, t->sub, 1), on);
  if (q >= 0 && !f->m[q].fold)
    q = through_copies(f, capped_max(p, first, f, q, t, on), on);
  return q;
}

/* Whether member q is a convert to bf16 of member q - 1's f32 value
 * over full rows, one of the group's results. */
static bool to_bf16(const shlo_plan *p, int first, const fused *f, int q) {
  const member *m = &f->m[q];
  const shlo_step *s = &p->steps[first + q]; /* members take it later */
  return s->op && s->op->code == SHLO_OP_CONVERT && m->n_in == 1 &&
         member_ref(m->ref[0]) == q - 1 && f->m[q - 1].esz == 4 &&
         m->dom == DOM_FULL && m->out >= 0 &&
         f->outs[m->out].elem == SHLO_BF16 && !m->one && !m->tile_only &&
         m->moved_to < 0 && m->inv == INV_NO;
}

bool shlo__fuse_softmax_plan(const shlo_plan *p, int first, fused *f) {
  f->softmax = false;
  int n = f->n_members;
  if (n < 6 || n > FUSE_MAX_MEMBERS || f->cols < 1) return false;
  bool on[FUSE_MAX_MEMBERS] = {false}; /* the tail's row values' members */
  softmax_tail t = {0, -1, 0, 0, n - 1, 0, false, false, -1, -1, false, -1};
  if (to_bf16(p, first, f, n - 1)) {
    t.cvt = n - 1;
    t.div = n - 2;
  }
  const member *div = &f->m[t.div];
  if (!tail_op(p, first, f, t.div, SHLO_LANE_DIV) ||
      member_ref(div->ref[0]) < 0 || (div->out < 0) != (t.cvt >= 0))
    return false;
  /* the divisor: a broadcast of the sum read as one element per row,
   * through row copies */
  int b = member_ref(div->ref[1]);
  if (b < 0 || !f->m[b].one) return false;
  on[b] = true;
  t.sum = through_copies(f, member_ref(f->m[b].ref[0]), on);
  t.exp = t.sum - 1;
  t.sub = t.sum - 2;
  if (t.sub < 1 || member_ref(div->ref[0]) != t.exp) return false;
  for (int q = t.sum + 1; q < t.div; q++) /* only the divisor's path */
    if (!on[q]) return false;
  const member *sub = &f->m[t.sub], *sum = &f->m[t.sum];
  if (!sum->fold || sum->fold->opcode != SHLO_OP_ADD ||
      sum->fold->et != SHLO_F32 || sum->tile ||
      member_ref(sum->ref[0]) != t.exp || member_ref(sum->ref[1]) >= 0)
    return false;
  if (!tail_op(p, first, f, t.exp, SHLO_LANE_EXP) ||
      member_ref(f->m[t.exp].ref[0]) != t.sub)
    return false;
  if (!tail_op(p, first, f, t.sub, SHLO_LANE_SUB) || !tail_source(f, sub))
    return false;
  t.max = row_value(p, first, f, &t, on);
  if (t.max < 0 || !f->m[t.max].fold || f->m[t.max].dom != DOM_ROW ||
      f->m[t.max].inv != INV_NO || f->m[t.max].esz != 4 ||
      f->m[t.max].out >= 0 || on[t.max])
    return false;
  /* the subtract's segment holds nothing to compute before it but the
   * row value's path, which the tail computes itself (fuse.c starts
   * the tail at the segment's first member) */
  t.start = t.sub;
  while (t.start > 0 && !f->m[t.start - 1].fold) {
    t.start--;
    if (!f->m[t.start].one && !on[t.start]) return false;
  }
  for (int q = 0; q < t.start; q++) /* the path lies in that segment */
    if (on[q]) return false;
  /* with a cap, maximum(c, m) >= m or NaN: the same bound holds */
  const member *mx = &f->m[t.max];
  t.max_of_a = mx->fold->opcode == SHLO_OP_MAXIMUM &&
               mx->fold->et == SHLO_F32 && mx->ref[0] == sub->ref[0];
  /* the scratch of the divide, past its other block's sums, holds the
   * maxima ahead and their flags: room for that from 16 columns */
  t.max_ahead = t.max_of_a && member_ref(sub->ref[0]) < 0 && t.cap < 0 &&
                t.cvt < 0 && member_ref(mx->ref[1]) < 0 && !mx->tile &&
                f->cols >= 16;
  /* what only the tail reads, and nothing outside */
  for (int q = t.start; q < t.div; q++)
    if (f->m[q].out >= 0) return false;
  f->softmax = true;
  f->sm = t;
  return true;
}

/* The row values maximum(c, max[j]) of nr rows in to[], operands in
 * the maximum's order, with the maximum op's own function: the bits the
 * member would have made. */
static const float *capped_rows(const fused_run *r, const char *max,
                                int64_t nr, char *to) {
  const softmax_tail *t = &r->f->sm;
  const float *m = (const float *)max;
  float c, *v = (float *)to;
  memcpy(&c, r->in[t->cap_in]->data, sizeof c);
  for (int64_t j = 0; j < nr; j++)
    v[j] = t->cap_first ? shlo_fmaxf(c, m[j]) : shlo_fmaxf(m[j], c);
  return v;
}

/* The member max's value over the rows mx took (the block at r0), from
 * their largest elements: maximum(init, largest) with the maximum op's
 * function, as the reduce kernel's lanes fold ends; a row mx could not
 * settle, or whose init makes that NaN, through the member's own fold.
 * Left in c for shlo__fuse_softmax_max_taken. */
static void max_ahead_done(const fused_run *r, const shlo_vsoftmax_max *mx,
                           int64_t r0, softmax_carry *c) {
  const member *m = &r->f->m[r->f->sm.max];
  int64_t cols = r->f->cols;
  float init;
  memcpy(&init, r->in[m->ref[1]]->data, sizeof init);
  for (int64_t j = 0; j < mx->rows; j++) {
    float v = mx->odd[j] ? NAN : shlo_fmaxf(init, mx->hi[j]);
    if (v != v) {
      v = init;
      m->fold->fold_rows(&v, mx->x + j * cols, 1, cols, m->fold);
    }
    mx->hi[j] = v;
  }
  c->ahead = mx->hi;
  c->ahead_r0 = r0;
  c->ahead_rows = mx->rows;
}

bool shlo__fuse_softmax_max_taken(softmax_carry *c, int64_t r0, int64_t nr,
                                  char *to) {
  bool ok = c->ahead_rows == nr && c->ahead_r0 == r0;
  if (ok) memcpy(to, c->ahead, (size_t)nr * sizeof *c->ahead);
  c->ahead_rows = 0;
  return ok;
}

void shlo__fuse_softmax_block(const fused_run *r, char *const *val,
                              int64_t r0, int64_t nr, int64_t hi,
                              char *scratch, size_t per, softmax_carry *c) {
  const fused *f = r->f;
  const softmax_tail *t = &f->sm;
  const member *sub = &f->m[t->sub], *sum_m = &f->m[t->sum];
  const member *div = &f->m[t->div];
  int64_t cols = f->cols;
  int a = member_ref(sub->ref[0]);
  const float *y =
      a >= 0 ? (const float *)val[a]
             : (const float *)r->in[sub->ref[0]]->data + r0 * cols;
  /* every other block's e and sums in the subtract's and the divide's
   * scratch, which the tail leaves unused (e is made straight from a;
   * the divide writes the result), while the block before is divided
   * from its own */
  bool other = t->cvt < 0 && c->blocks++ % 2;
  float *e = (float *)(scratch + (size_t)(other ? t->sub : t->exp) * per);
  float *sum = (float *)(scratch + (size_t)(other ? t->div : t->sum) * per);
  const float *mx = (const float *)val[t->max];
  if (t->cap >= 0) mx = capped_rows(r, val[t->max], nr,
                                    scratch + (size_t)t->cap * per);
  float init;
  memcpy(&init, r->in[sum_m->ref[1]]->data, sizeof init);
  for (int64_t j = 0; j < nr; j++) sum[j] = init;
  /* an outside a's next block is asked for while this one's
   * exponentials are computed, so the next row maximum reads it from
   * L2 instead of waiting on memory with nothing else to do; or, where
   * the tail may, that maximum is taken meanwhile */
  const float *next = a < 0 && r0 + nr < hi ? y + nr * cols : NULL;
  const shlo_vsoftmax_div *dv = c->dv.rows ? &c->dv : NULL;
  shlo_vsoftmax_max ahead = {0};
  if (next && t->max_ahead) {
    float *at = (float *)(scratch + (size_t)t->div * per) + f->block;
    /* the next block is never longer than this one (only a chunk's
     * last block is short), as the kernel asks */
    ahead = (shlo_vsoftmax_max){next, at, (bool *)(at + f->block),
                                hi - r0 - nr < nr ? hi - r0 - nr : nr};
    next = NULL; /* read anyway */
  }
  if (!shlo__vsoftmax_exp_f32(e, sum, y, mx, nr, cols, t->max_of_a, next,
                              dv, ahead.rows ? &ahead : NULL))
    sum_m->fold->fold_rows(sum, e, nr, cols, sum_m->fold);
  c->dv.rows = 0; /* done beside these exponentials */
  if (ahead.rows) max_ahead_done(r, &ahead, r0 + nr, c);
  if (t->cvt >= 0) { /* e / s in place, then rounded as convert does */
    shlo__vsoftmax_div_f32(e, e, sum, nr, cols, false);
    shlo__bf16_from_f32_n(
        (uint16_t *)r->out[f->m[t->cvt].out]->data + r0 * cols, e,
        nr * cols);
    return;
  }
  /* e / s: beside the next block's exponentials, where their FMAs hide
   * the divides and the stores, or at the chunk's end */
  c->dv = (shlo_vsoftmax_div){(float *)r->out[div->out]->data + r0 * cols,
                              e, sum, nr, shlo__fuse_rows_streams(f, div)};
}

void shlo__fuse_softmax_flush(const fused_run *r, softmax_carry *c) {
  if (c->dv.rows)
    shlo__vsoftmax_div_f32(c->dv.d, c->dv.e, c->dv.s, c->dv.rows, r->f->cols,
                           c->dv.stream);
  c->dv.rows = 0;
}
