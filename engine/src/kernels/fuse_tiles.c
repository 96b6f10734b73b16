/* SPDX-License-Identifier: Apache-2.0 */
/* Reductions of a rows group computed on tiles (fuse_int.h,
 * kernels/fold_tiles.h).
 *
 * A reduction's operand that nothing else reads need not be stored: an
 * f32 sum can compute it from the values it is made of, on tiles of 16
 * rows by 512 columns of them, as it adds it up.  Layernorm's variance is the sum of
 * (x - mean)^2: its tile program subtracts and squares, so no member
 * stores the deviations or their squares for the sum.  The deviations
 * are also scaled after the sum; the segment that does so computes them
 * again from x and the mean in its own program (the member is moved
 * there), so the segment before the sum has nothing left to do.  The
 * block's values are written nowhere but the result, where before two
 * more went through the caches. */
#include <stdbool.h>
#include <string.h>

#include "kernels/fuse_int.h"
#include "kernels/fold_tiles.h"
#include "ops/ops.h"

/* Whether member q can be an instruction of a tile program: a lane op
 * of full rows, computed in every block from operands it reads as they
 * are (not a broadcast of a row's one element by itself). */
static bool tile_member(const shlo_plan *p, int first, const fused *f,
                        int q) {
  const member *m = &f->m[q];
  return m->dom == DOM_FULL && !m->fold && !m->one && m->inv == INV_NO &&
         m->moved_to < 0 && !m->tile_only &&
         shlo__fuse_lanes_op(p, first, f, q);
}

/* Whether member j's value is there, for the whole block, when a tile
 * program or a moved member reads it: a row's element (a broadcast read
 * as one), one row for every row, or a value of full rows that is made
 * in its segment and stays. */
static bool tile_leaf(const fused *f, int j) {
  const member *m = &f->m[j];
  if (m->one || (m->dom == DOM_FULL && m->row_bytes == 0)) return true;
  return m->dom == DOM_FULL && !m->fold && !m->tile_only && m->moved_to < 0;
}

/* Whether operand i of member m is one a tile program can read: an
 * outside array over the rows or one element, or a member's value. */
static bool tile_operand_ok(const fused *f, const member *m, int i,
                            const bool *in_s) {
  int ref = m->ref[i];
  if (ref >= 0) return m->adv[i] == ADV_FULL || f->ext_esz[ref] == 0;
  return in_s[-ref - 1] || tile_leaf(f, -ref - 1);
}

static bool reads(const member *m, int j) {
  for (int i = 0; i < m->n_in; i++)
    if (m->ref[i] == -(j + 1)) return true;
  return false;
}

/* The first member of the segment that member q is in. */
static int segment_start(const fused *f, int q) {
  while (q > 0 && !f->m[q - 1].fold) q--;
  return q;
}

/* One past the last member of the segment that starts at k. */
static int segment_end(const fused *f, int k) {
  while (k < f->n_members && !f->m[k].fold) k++;
  return k;
}

/* The members of S (in_s, from ks to kf) that only tile programs and
 * reduction kf read become tile_only. */
static void mark_tile_only(fused *f, int ks, int kf, const bool *in_s) {
  bool only[FUSE_MAX_MEMBERS] = {false};
  for (int q = ks; q < kf; q++) only[q] = in_s[q] && f->m[q].out < 0;
  for (bool changed = true; changed;) {
    changed = false;
    for (int q = ks; q < kf; q++) {
      if (!only[q]) continue;
      for (int r = q + 1; r < f->n_members && only[q]; r++)
        if (r != kf && !only[r] && !f->m[r].tile_only && reads(&f->m[r], q))
          only[q] = false, changed = true;
    }
  }
  for (int q = ks; q < kf; q++) f->m[q].tile_only |= only[q];
}

/* Members of S (in_s) that are not tile_only and are read (tile programs
 * aside) only in one later segment move to it when its program can run
 * them: their segment then has less, often nothing, to do. */
static void move_members(const shlo_plan *p, int first, fused *f, int kf,
                         const bool *in_s) {
  int to[FUSE_MAX_MEMBERS];
  for (int q = 0; q < kf; q++) {
    to[q] = -1;
    member *m = &f->m[q];
    if (!in_s[q] || m->tile_only || m->out >= 0) continue;
    for (int r = q + 1; r < f->n_members; r++)
      if (!f->m[r].tile_only && reads(&f->m[r], q)) {
        to[q] = r > kf ? segment_start(f, r) : -1;
        break;
      }
  }
  /* each one that segment's program can run, and every reader in that
   * segment or moved there too */
  for (bool changed = true; changed;) {
    changed = false;
    for (int q = 0; q < kf; q++) {
      if (to[q] < 0) continue;
      int e = segment_end(f, to[q]);
      bool ok = shlo__fuse_lanes_rows_ok(p, first, f, to[q], e, q);
      for (int r = q + 1; r < f->n_members && ok; r++) {
        if (f->m[r].tile_only || !reads(&f->m[r], q)) continue;
        ok = r < kf ? to[r] == to[q] : r >= to[q] && r < e;
      }
      if (!ok) {
        to[q] = -1;
        changed = true;
      }
    }
  }
  for (int q = 0; q < kf; q++)
    if (to[q] >= 0) f->m[q].moved_to = to[q];
  /* what they read must still be there when they run */
  for (int q = 0; q < kf; q++)
    for (int i = 0; to[q] >= 0 && i < f->m[q].n_in; i++) {
      int j = -f->m[q].ref[i] - 1;
      if (j >= 0 && f->m[j].moved_to < 0 && !f->m[j].one &&
          f->m[j].row_bytes)
        f->m[j].read_whole = true;
    }
}

/* A tile program for reduction kf, if it can have one. */
static bool plan_fold(const shlo_plan *p, int first, fused *f, int kf) {
  member *F = &f->m[kf];
  if (!F->fold || F->fold->opcode != SHLO_OP_ADD || F->fold->et != SHLO_F32 ||
      F->ref[0] >= 0)
    return false;
  int pq = -F->ref[0] - 1, ks = segment_start(f, kf);
  if (pq < ks || !tile_member(p, first, f, pq) || f->m[pq].out >= 0)
    return false;
  for (int r = pq + 1; r < f->n_members; r++)
    if (r != kf && reads(&f->m[r], pq)) return false;
  /* S: the operand and the lane ops of its segment it is made from */
  bool in_s[FUSE_MAX_MEMBERS] = {false};
  in_s[pq] = true;
  for (int q = pq; q >= ks; q--) {
    if (!in_s[q]) continue;
    for (int i = 0; i < f->m[q].n_in; i++) {
      int j = -f->m[q].ref[i] - 1;
      if (j >= ks && tile_member(p, first, f, j)) in_s[j] = true;
    }
  }
  int list[FUSE_MAX_MEMBERS], n = 0;
  for (int q = ks; q <= pq; q++) {
    if (!in_s[q]) continue;
    for (int i = 0; i < f->m[q].n_in; i++)
      if (!tile_operand_ok(f, &f->m[q], i, in_s)) return false;
    list[n++] = q;
  }
  F->tile = shlo__fuse_lanes_tile(p, first, f, list, n, pq);
  if (!F->tile) return false;
  for (int i = 0; i < n; i++) /* the values it reads stay whole */
    for (int a = 0; a < f->m[list[i]].n_in; a++) {
      int j = -f->m[list[i]].ref[a] - 1;
      if (j >= 0 && !in_s[j] && !f->m[j].one && f->m[j].row_bytes)
        f->m[j].read_whole = true;
    }
  mark_tile_only(f, ks, kf, in_s);
  move_members(p, first, f, kf, in_s);
  return true;
}

int shlo__fuse_tiles_plan(const shlo_plan *p, int first, fused *f) {
  /* sums fold 16 rows side by side, or rows too long for that one at a
   * time, computing every member in its place (rows_chunk) */
  if (f->block < 16) return 0;
  int n = 0;
  for (int k = 0; k < f->n_members; k++) n += plan_fold(p, first, f, k);
  return n;
}

void shlo__fuse_tiles_undo(fused *f) {
  for (int k = 0; k < f->n_members; k++) {
    member *m = &f->m[k];
    shlo__fuse_tile_free(m->tile);
    m->tile = NULL;
    m->tile_only = m->read_whole = false;
    m->moved_to = -1;
  }
}
