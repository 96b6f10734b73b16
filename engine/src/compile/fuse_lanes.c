/* Lane programs for fused runs (fuse_int.h): a run of f32 lane ops as one
 * kernels/vchain.h program, whose values stay in vector registers from op
 * to op.
 *
 * The instructions are the members that are not broadcasts, in order, so
 * the accumulator holds the previous one's value.  A value is stored only
 * when it is a result or a member other than the next instruction reads
 * it; the others are in_acc and never written.  A broadcast of one
 * element is an input of that element; the other broadcasts are filled
 * by fuse.c before the program runs and read as inputs.
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

/* Whether run f fits a program: every member f32; each that is not a
 * broadcast a lane op with as many operands; each broadcast read as one
 * element reading an outside value.  Counts the instructions. */
static bool lanes_fit(const shlo_plan *p, int first, const fused *f,
                      int *n_ins) {
  *n_ins = 0;
  for (int q = 0; q < f->n_members; q++) {
    const member *m = &f->m[q];
    if (m->esz != 4 || (m->one && m->ref[0] < 0)) return false;
    if (m->bcast) continue;
    int op = p->steps[first + q].lane_op;
    if (!op || m->n_in != (shlo_lane_op_binary(op) ? 2 : 1)) return false;
    (*n_ins)++;
  }
  return *n_ins > 0;
}

/* Which members store their value: results, and values a member other
 * than the next instruction reads. */
static void lanes_stored(const fused *f, bool *stored) {
  int prev = -1;
  for (int q = 0; q < f->n_members; q++) stored[q] = false;
  for (int q = 0; q < f->n_members; q++) {
    const member *m = &f->m[q];
    if (m->bcast) continue;
    stored[q] = m->out >= 0;
    for (int i = 0; i < m->n_in; i++) {
      int j = -m->ref[i] - 1;
      if (j >= 0 && !f->m[j].bcast && j != prev) stored[j] = true;
    }
    prev = q;
  }
}

lane_prog *shlo__fuse_lanes_build(const shlo_plan *p, int first, fused *f) {
  int n_ins;
  if (!lanes_fit(p, first, f, &n_ins)) return NULL;
  bool stored[FUSE_MAX_MEMBERS];
  lanes_stored(f, stored);
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
  for (int q = 0; q < f->n_members; q++) {
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
  for (int q = 0; q < f->n_members; q++)
    f->m[q].in_acc = !f->m[q].bcast && !stored[q];
  f->lanes_work = shlo__vchain_work_bytes(c);
  return lp;
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
