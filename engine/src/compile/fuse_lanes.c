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
 * The rows groups of softmax and layernorm keep their members one at a
 * time: their segments (subtract and exp between two reductions, say)
 * ran no faster as programs, a row at a time. */
#include <stdlib.h>
#include <string.h>

#include "compile/fuse_int.h"

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

/* Member m's operand i as an instruction's: the accumulator when it is
 * the value of member `prev`, the instruction before; else an input. */
static int lanes_operand(lane_prog *lp, const fused *f, const member *m,
                         int i, int prev) {
  int ref = m->ref[i];
  if (ref >= 0) return lanes_input(lp, true, ref, f->ext_esz[ref] == 0);
  int j = -ref - 1;
  if (j == prev) return SHLO_VCHAIN_ACC;
  if (f->m[j].one) return lanes_input(lp, true, f->m[j].ref[0], true);
  return lanes_input(lp, false, j, false);
}

/* Whether member q is a lane op a program can run: f32, with as many
 * operands as its op, and a one-element broadcast it reads is of an
 * outside value. */
static bool lanes_op(const shlo_plan *p, int first, const fused *f, int q) {
  const member *m = &f->m[q];
  int op = p->steps[first + q].lane_op;
  if (m->bcast || !op || m->esz != 4 ||
      m->n_in != (shlo_lane_op_binary(op) ? 2 : 1))
    return false;
  for (int i = 0; i < m->n_in; i++) {
    int j = -m->ref[i] - 1;
    if (j >= 0 && f->m[j].one && f->m[j].ref[0] < 0) return false;
  }
  return true;
}

/* Whether broadcast q may sit among a stretch's members: f32. */
static bool lanes_bcast(const fused *f, int q) {
  return f->m[q].bcast && f->m[q].esz == 4;
}

/* Which instructions of stretch [k, e) store their value: results, and
 * values a member other than the next instruction reads. */
static void lanes_stored(const shlo_plan *p, int first, const fused *f,
                         int k, int e, bool *stored) {
  int next[FUSE_MAX_MEMBERS];
  int after = -1;
  for (int q = e - 1; q >= k; q--) {
    next[q] = after;
    if (lanes_op(p, first, f, q)) after = q;
  }
  for (int q = k; q < e; q++) {
    stored[q] = false;
    if (!lanes_op(p, first, f, q)) continue;
    stored[q] = f->m[q].out >= 0;
    for (int r = q + 1; r < f->n_members; r++)
      for (int i = 0; i < f->m[r].n_in; i++)
        if (f->m[r].ref[i] == -(q + 1) && r != next[q]) stored[q] = true;
  }
}

/* The program of stretch [k, e), its members' fields set; NULL (and the
 * fields untouched) when it has no room for its inputs or outputs, or
 * memory is short. */
static lane_prog *lanes_stretch(const shlo_plan *p, int first, fused *f,
                                int k, int e, int n_ins) {
  bool stored[FUSE_MAX_MEMBERS];
  lanes_stored(p, first, f, k, e, stored);
  lane_prog *lp = calloc(1, sizeof *lp);
  shlo_vchain_ins *ins = malloc((size_t)n_ins * sizeof *ins);
  if (!lp || !ins) {
    free(lp);
    free(ins);
    return NULL;
  }
  shlo_vchain *c = &lp->chain;
  c->ins = ins;
  int prev = -1;
  for (int q = k; q < e; q++) {
    const member *m = &f->m[q];
    if (m->bcast) continue;
    int a = lanes_operand(lp, f, m, 0, prev);
    int b = m->n_in > 1 ? lanes_operand(lp, f, m, 1, prev) : SHLO_VCHAIN_ACC;
    if (a == -2 || b == -2 || (stored[q] && c->n_out == SHLO_VCHAIN_MAX_IO)) {
      shlo__fuse_lanes_free(lp);
      return NULL;
    }
    ins[c->n_ins] = (shlo_vchain_ins){p->steps[first + q].lane_op,
                                      (int8_t)a, (int8_t)b, -1};
    if (stored[q]) {
      ins[c->n_ins].out = (int8_t)c->n_out;
      lp->out[c->n_out] = q;
      /* a large result goes out past the caches, with no slot */
      c->out_stream[c->n_out++] = shlo__fuse_run_streams(f, m);
    }
    c->n_ins++;
    prev = q;
  }
  for (int q = k; q < e; q++) {
    member *m = &f->m[q];
    m->seg = k;
    m->prog_ins = !m->bcast;
    m->in_acc = !m->bcast && !stored[q];
  }
  f->m[e - 1].run_after = lp;
  size_t work = shlo__vchain_work_bytes(c);
  if (work > f->lanes_work) f->lanes_work = work;
  return lp;
}

int shlo__fuse_lanes_build(const shlo_plan *p, int first, fused *f,
                           int *n_ins, int *n_stored) {
  int progs = 0;
  *n_ins = *n_stored = 0;
  for (int k = 0; k < f->n_members;) {
    /* a stretch: lane ops and broadcasts, from a lane op to a lane op */
    if (!lanes_op(p, first, f, k)) {
      k++;
      continue;
    }
    int e = k, ops = 0, end = k;
    for (; e < f->n_members &&
           (lanes_op(p, first, f, e) || lanes_bcast(f, e));
         e++)
      if (lanes_op(p, first, f, e)) {
        ops++;
        end = e + 1;
      }
    const lane_prog *lp =
        ops >= 2 ? lanes_stretch(p, first, f, k, end, ops) : NULL;
    if (lp) {
      progs++;
      *n_ins += lp->chain.n_ins;
      *n_stored += lp->chain.n_out;
    }
    k = end;
  }
  return progs;
}

void shlo__fuse_lanes_free(lane_prog *lp) {
  if (!lp) return;
  free(lp->chain.ins);
  free(lp);
}

void shlo__fuse_lanes_run(const lane_prog *lp, const fused_run *r, int64_t b,
                          char *const *val, int64_t n, void *work) {
  const fused *f = r->f;
  const float *in[SHLO_VCHAIN_MAX_IO];
  float *out[SHLO_VCHAIN_MAX_IO];
  for (int k = 0; k < lp->chain.n_in; k++) {
    const lane_io *io = &lp->in[k];
    in[k] = io->ext ? (const float *)((const char *)r->in[io->ref]->data +
                                      (size_t)b * f->ext_esz[io->ref])
                    : (const float *)val[io->ref];
  }
  for (int q = 0; q < lp->chain.n_out; q++)
    out[q] = (float *)val[lp->out[q]];
  shlo__vchain_run(&lp->chain, out, in, n, work);
}
