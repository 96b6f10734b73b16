/* SPDX-License-Identifier: Apache-2.0 */
/* Softmax's tail in a rows group (fuse_int.h): after the row maximum m,
 * e = exp(a - m), s = sum of e along the row, e / s.
 *
 * Member by member that is five passes over each block: the subtract
 * writes a - m, the exponential reads it and writes e, the sum reads e,
 * the divide reads e and writes the result (through a row of scratch
 * when it is streamed).  Here e is computed straight from a, a row at a
 * time, and stored once; every 16 rows their sums are taken while the
 * rows are still in L1 or L2 (vmath.h, shlo__vsoftmax_exp_f32); then
 * e / s goes to the result, streamed straight from registers where the
 * result is.  Every element sees the same IEEE operations as the ops
 * one by one and every sum adds its row in column order, so the bits are
 * the unfused ones (test_fuse_softmax checks each variant).  The divide
 * stays a divide: e * (1 / s) rounds twice. */
#include <string.h>

#include "core/value.h"
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

bool shlo__fuse_softmax_plan(const shlo_plan *p, int first, fused *f) {
  f->softmax = false;
  int n = f->n_members;
  if (n < 6 || f->cols < 1) return false;
  softmax_tail t = {n - 5, -1, n - 4, n - 3, n - 1, n - 5, false};
  const member *sub = &f->m[t.sub], *sum = &f->m[t.sum];
  const member *div = &f->m[t.div];
  t.max = one_of(f, t.sub, 1);
  if (!tail_op(p, first, f, t.sub, SHLO_LANE_SUB) || !tail_source(f, sub) ||
      t.max < 0 || !f->m[t.max].fold || f->m[t.max].dom != DOM_ROW ||
      f->m[t.max].inv != INV_NO ||
      f->m[t.max].esz != 4 || f->m[t.max].out >= 0)
    return false;
  if (!tail_op(p, first, f, t.exp, SHLO_LANE_EXP) ||
      member_ref(f->m[t.exp].ref[0]) != t.sub)
    return false;
  if (!sum->fold || sum->fold->opcode != SHLO_OP_ADD ||
      sum->fold->et != SHLO_F32 || sum->tile || sum->keep >= 0 ||
      member_ref(sum->ref[0]) != t.exp || member_ref(sum->ref[1]) >= 0)
    return false;
  if (!tail_op(p, first, f, t.div, SHLO_LANE_DIV) ||
      member_ref(div->ref[0]) != t.exp || one_of(f, t.div, 1) != t.sum ||
      member_ref(div->ref[1]) != n - 2 || div->out < 0)
    return false;
  /* the subtract's segment holds nothing to compute before it (fuse.c
   * starts the tail at the segment's first member) */
  while (t.start > 0 && !f->m[t.start - 1].fold) {
    t.start--;
    if (!f->m[t.start].one) return false;
  }
  const member *mx = &f->m[t.max];
  t.max_of_a = mx->fold->opcode == SHLO_OP_MAXIMUM &&
               mx->fold->et == SHLO_F32 && mx->ref[0] == sub->ref[0];
  /* what only the tail reads, and nothing outside */
  for (int q = t.sub; q < t.div; q++)
    if (f->m[q].out >= 0) return false;
  f->softmax = true;
  f->sm = t;
  return true;
}

void shlo__fuse_softmax_block(const fused_run *r, char *const *val,
                              int64_t r0, int64_t nr, char *scratch,
                              size_t per) {
  const fused *f = r->f;
  const softmax_tail *t = &f->sm;
  const member *sub = &f->m[t->sub], *sum_m = &f->m[t->sum];
  const member *div = &f->m[t->div];
  int64_t cols = f->cols;
  int a = member_ref(sub->ref[0]);
  const float *y =
      a >= 0 ? (const float *)val[a]
             : (const float *)r->in[sub->ref[0]]->data + r0 * cols;
  float *e = (float *)(scratch + (size_t)t->exp * per);
  float *sum = (float *)(scratch + (size_t)t->sum * per);
  float init;
  memcpy(&init, r->in[sum_m->ref[1]]->data, sizeof init);
  for (int64_t j = 0; j < nr; j++) sum[j] = init;
  if (!shlo__vsoftmax_exp_f32(e, sum, y, (const float *)val[t->max], nr,
                              cols, t->max_of_a))
    sum_m->fold->fold_rows(sum, e, nr, cols, sum_m->fold);
  float *d = (float *)r->out[div->out]->data + r0 * cols;
  shlo__vsoftmax_div_f32(d, e, sum, nr, cols,
                         shlo__fuse_rows_streams(f, div));
}
