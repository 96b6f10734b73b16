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

#include "compile/fuse_int.h"

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

/* Member m's operand i as an instruction's: the accumulator when it is
 * the value of member `prev`, the instruction before; else an input (a
 * broadcast read as one element: a run's of an outside value, a rows
 * group's of the row's element). */
static int lanes_operand(lane_prog *lp, const fused *f, const member *m,
                         int i, int prev) {
  int ref = m->ref[i];
  if (ref >= 0) return lanes_input(lp, true, ref, f->ext_esz[ref] == 0);
  int j = -ref - 1;
  if (j == prev) return SHLO_VCHAIN_ACC;
  if (f->m[j].one)
    return f->cols ? lanes_input(lp, false, j, true)
                   : lanes_input(lp, true, f->m[j].ref[0], true);
  return lanes_input(lp, false, j, false);
}

/* Whether member q is a lane op a program can run: f32, with as many
 * operands as its op, and (in a run) a one-element broadcast it reads is
 * of an outside value. */
static bool lanes_op(const shlo_plan *p, int first, const fused *f, int q) {
  const member *m = &f->m[q];
  int op = p->steps[first + q].lane_op;
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

/* Which instructions of [k, e) store their value: results (stored), and
 * values a member other than the next instruction reads (also again). */
static void lanes_stored(const fused *f, int k, int e, bool *stored,
                         bool *again) {
  int next = -1;
  for (int q = e - 1; q >= k; q--) {
    stored[q] = again[q] = false;
    if (!lanes_is_ins(f, q)) continue;
    stored[q] = f->m[q].out >= 0;
    for (int r = q + 1; r < f->n_members; r++)
      for (int i = 0; i < f->m[r].n_in; i++)
        if (f->m[r].ref[i] == -(q + 1) && r != next)
          stored[q] = again[q] = true;
    next = q;
  }
}

/* The program of the n_ins instructions of [k, e), those members' fields
 * set; NULL (and the fields untouched) when it has no room for its
 * inputs or outputs, or memory is short.  A large result goes out past
 * the caches unless a member reads it back. */
static lane_prog *lanes_build(const shlo_plan *p, int first, fused *f, int k,
                              int e, int n_ins) {
  bool stored[FUSE_MAX_MEMBERS], again[FUSE_MAX_MEMBERS];
  lanes_stored(f, k, e, stored, again);
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
    if (!lanes_is_ins(f, q)) continue;
    int a = lanes_operand(lp, f, m, 0, prev);
    int b = m->n_in > 1 ? lanes_operand(lp, f, m, 1, prev) : SHLO_VCHAIN_ACC;
    if (a == -2 || b == -2 || (stored[q] && c->n_out == SHLO_VCHAIN_MAX_IO)) {
      shlo__fuse_lanes_free(lp);
      return NULL;
    }
    ins[c->n_ins] = (shlo_vchain_ins){p->steps[first + q].lane_op,
                                      (int8_t)a, (int8_t)b, -1};
    if (stored[q]) {
      bool streams = f->cols ? shlo__fuse_rows_streams(f, m)
                             : shlo__fuse_run_streams(f, m);
      ins[c->n_ins].out = (int8_t)c->n_out;
      lp->out[c->n_out] = q;
      lp->direct[c->n_out] = streams && !again[q];
      c->out_stream[c->n_out++] = streams && !again[q];
    }
    c->n_ins++;
    prev = q;
  }
  for (int q = k; q < e; q++) {
    member *m = &f->m[q];
    m->prog_ins = lanes_is_ins(f, q);
    m->in_acc = m->prog_ins && !stored[q];
  }
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
    lane_prog *lp = ops >= 2 ? lanes_build(p, first, f, k, end, ops) : NULL;
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

lane_prog *shlo__fuse_lanes_rows(const shlo_plan *p, int first, fused *f,
                                 int k, int e) {
  /* rows_segment runs the programs; blocks of one row run member by
   * member (rows_chunk) */
  if (f->cols < ROWS_LANES_MIN_COLS || f->block < 2) return NULL;
  int n_ins = 0;
  for (int q = k; q < e; q++) {
    const member *m = &f->m[q];
    if (!lanes_is_ins(f, q)) continue;
    int op = p->steps[first + q].lane_op;
    if (!lanes_op(p, first, f, q) || m->inv != INV_NO) return NULL;
    /* exp and the like a row at a time ran slower inline in a program
     * than through their own loop (softmax's subtract and exp: 5%) */
    if (op >= SHLO_LANE_EXP) return NULL;
    for (int i = 0; i < m->n_in; i++)
      if (m->ref[i] >= 0 && m->adv[i] != ADV_FULL) return NULL;
    n_ins++;
  }
  return n_ins ? lanes_build(p, first, f, k, e, n_ins) : NULL;
}

void shlo__fuse_lanes_free(lane_prog *lp) {
  if (!lp) return;
  free(lp->chain.ins);
  free(lp);
}

void shlo__fuse_lanes_run(const lane_prog *lp, const fused_run *r,
                          int64_t ext_elem, char *const *val,
                          char *const *direct, int64_t n, void *work) {
  const fused *f = r->f;
  const float *in[SHLO_VCHAIN_MAX_IO];
  float *out[SHLO_VCHAIN_MAX_IO];
  for (int k = 0; k < lp->chain.n_in; k++) {
    const lane_io *io = &lp->in[k];
    in[k] = io->ext ? (const float *)((const char *)r->in[io->ref]->data +
                                      (size_t)ext_elem * f->ext_esz[io->ref])
                    : (const float *)val[io->ref];
  }
  for (int q = 0; q < lp->chain.n_out; q++)
    out[q] = (float *)(direct && lp->direct[q] ? direct[q]
                                               : val[lp->out[q]]);
  shlo__vchain_run(&lp->chain, out, in, n, work);
}
