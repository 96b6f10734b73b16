/* SPDX-License-Identifier: Apache-2.0 */
/* Whole epilogues of a product (shlo_step.loop.run_epi): the steps JAX
 * writes behind a convolution of a network with its batch norm folded —
 * a multiply by a scalar, a bias broadcast along the features, the
 * block's input added back, a ReLU that is a call of @relu — found as a
 * chain of runs and calls that alone read the product, then one step in
 * which the GEMM applies them all in its registers (gemm_panels.h).
 * Without it each link of the chain is a pass over the whole result: in
 * the ResNet bottleneck, five passes of up to 25 MB for three GEMMs.
 *
 * The chain's order is the epilogue's: scale, bias, residual, ReLU, each
 * at most once; each link is exactly the op the program writes (the
 * product first in the multiply and the bias add, the residual add's
 * operands in the program's order), so the bits are those of the steps
 * one by one (save the payload of a NaN where both operands of an add
 * are NaNs, as everywhere in the engine, kernels/vchain.h).  A chain of
 * a single run right behind the producer with a bias and perhaps a ReLU
 * is left to fuse.c's epilogue (loop.run_bias_relu), which does the same.
 *
 * dot_general takes such chains too (linalg.c, dot_run_epi): an LSTM's
 * input projection (scale and bias over a 26 MB result, a pass of its
 * own before) and its recurrent product (scale, then the step's input
 * added, written first). */
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/tensor_uninit.h"
#include "core/value.h"
#include "kernels/fuse_int.h"
#include "kernels/gemm_panels.h"
#include "ops/ops.h"
#include "runtime/exec.h"

/* the epilogue's parts, in the order they are applied */
enum { EPI_SCALE, EPI_BIAS, EPI_RES, EPI_RELU, EPI_KINDS };

/* steps after the producer searched for the next link */
#define EPI_LOOKAHEAD 8

/* One link's op: kind, and its other operand (a run's input index while
 * matching a run, then the plan's slot), first when the program writes
 * it first. */
typedef struct epi_op {
  int kind;
  int ref;
  bool first;
} epi_op;

/* The combined step's parameters: the producer, moved here, and where
 * its epilogue's operands are among the step's inputs (-1: none). */
typedef struct epi_chain {
  shlo_step producer;
  const shlo_type *made;
  int scale_at, bias_at, res_at;
  bool relu, res_first;
} epi_chain;

static bool member_is(const member *m, int code) {
  return m->step.op && m->step.op->code == code;
}

/* Member k of run r as a link, its value read as cur: the op and its
 * other operand (a broadcast of a scalar or of a column, or, added, a
 * full f32 input of made's type).  False for anything else. */
static bool member_link(const shlo_step *r, int k, int cur, int ext,
                        const shlo_type *made, const shlo_type *const *types,
                        epi_op *op) {
  const fused *f = r->params;
  const member *m = &f->m[k];
  int64_t cols = made->dims[made->rank - 1];
  if (m->n_in != 2 || m->ref[0] == m->ref[1]) return false;
  int which = m->ref[0] == cur ? 1 : m->ref[1] == cur ? 0 : -1;
  if (which < 0) return false;
  int o = m->ref[which];
  const member *ob = o < 0 ? &f->m[-o - 1] : NULL;
  bool scalar = ob && ob->bcast &&
                shlo__fuse_bcast_of(ob, r, types, cols, true);
  bool column = ob && ob->bcast &&
                shlo__fuse_bcast_of(ob, r, types, cols, false);
  op->ref = ob ? ob->ref[0] : o;
  op->first = which == 0;
  if (member_is(m, SHLO_OP_MULTIPLY) && scalar && which == 1)
    op->kind = EPI_SCALE;
  else if (member_is(m, SHLO_OP_ADD) && column && which == 1)
    op->kind = EPI_BIAS;
  else if (member_is(m, SHLO_OP_ADD) && !ob && o >= 0 && o != ext &&
           !f->cols && f->ext_esz[o] == sizeof(float) &&
           shlo_type_equal(types[r->in[o]], made))
    op->kind = EPI_RES;
  else if (member_is(m, SHLO_OP_MAXIMUM) && scalar)
    op->kind = EPI_RELU;
  else
    return false;
  return true;
}

/* Run r, reading the product (made's type) as its input ext, as links:
 * every member a broadcast of a scalar or a column, or the next link on
 * the value so far, the last the run's one result, of made's type.
 * Operands are r's input indices. */
static bool run_links(const shlo_step *r, int ext, const shlo_type *made,
                      const shlo_type *const *types, epi_op *ops, int *n) {
  const fused *f = r->params;
  if (f->n_out != 1 || r->n_out != 1 ||
      !shlo_type_equal(made, types[r->out[0]]))
    return false;
  int64_t cols = made->dims[made->rank - 1];
  int cur = ext;
  *n = 0;
  for (int k = 0; k < f->n_members; k++) {
    const member *m = &f->m[k];
    if (m->bcast) {
      if (!shlo__fuse_bcast_of(m, r, types, cols, true) &&
          !shlo__fuse_bcast_of(m, r, types, cols, false))
        return false;
      continue;
    }
    bool last = k == f->n_members - 1;
    if (*n == EPI_KINDS || (last ? m->out != 0 : m->out >= 0) ||
        !member_link(r, k, cur, ext, made, types, &ops[*n]))
      return false;
    (*n)++;
    cur = -(k + 1);
  }
  return *n > 0 && cur == -f->n_members;
}

/* Whether call step s runs a ReLU of its one argument: a plan of
 * constants and one run, a broadcast of a constant +0 and the maximum
 * of the argument with it, the run's result the plan's. */
static bool call_is_relu(const shlo_step *s) {
  if (!s->op || s->op->code != SHLO_OP_CALL || s->n_in != 1 ||
      s->n_out != 1 || !s->params)
    return false;
  const shlo_plan *cp = *(shlo_plan *const *)s->params;
  if (!cp || cp->n_args != 1 || cp->n_results != 1) return false;
  const shlo_step *r = NULL;
  for (int i = 0; i < cp->n_steps; i++) {
    const shlo_step *c = &cp->steps[i];
    if (c->op && c->op->code == SHLO_OP_CONSTANT) continue;
    if (r || !shlo__fuse_is_run(c)) return false;
    r = c;
  }
  if (!r || r->n_out != 1 || r->out[0] != cp->result_slots[0]) return false;
  const fused *f = r->params;
  if (f->n_members != 2 || f->n_out != 1 || f->cols) return false;
  const member *b = &f->m[0], *mx = &f->m[1];
  if (!b->bcast || b->slice || b->n_in != 1 || b->ref[0] < 0 ||
      b->out >= 0 ||
      !member_is(mx, SHLO_OP_MAXIMUM) || mx->out != 0 || mx->n_in != 2)
    return false;
  for (int d = 0; d < b->map.rank; d++)
    if (b->map.src_stride[d] && b->map.dims[d] != 1) return false;
  int arg = -1;
  for (int k = 0; k < r->n_in; k++)
    if (r->in[k] == cp->arg_slots[0]) arg = arg < 0 ? k : -2;
  bool reads = (mx->ref[0] == arg && mx->ref[1] == -1) ||
               (mx->ref[0] == -1 && mx->ref[1] == arg);
  return arg >= 0 && reads && shlo__fuse_const_pos_zero(cp, r->in[b->ref[0]]);
}

/* The chain so far, on the plan. */
typedef struct chain {
  epi_op ops[EPI_KINDS];
  int n_ops;
  int links[EPI_LOOKAHEAD]; /* the steps, in order */
  int n_links;
} chain;

/* Step s, reading the value at slot cur, as the next link(s) of c, the
 * operands mapped to pl's slots; false (c unchanged) when it is not one
 * or breaks the epilogue's order. */
static bool chain_add(chain *c, const shlo_plan *pl, const shlo_step *s,
                      int cur, const shlo_type *made,
                      const shlo_type *const *types) {
  epi_op ops[EPI_KINDS];
  int n = 0;
  if (call_is_relu(s)) {
    if (!shlo_type_equal(made, types[s->out[0]])) return false;
    ops[n++] = (epi_op){EPI_RELU, -1, false};
  } else {
    if (!shlo__fuse_is_run(s)) return false;
    int ext = -1;
    for (int k = 0; k < s->n_in; k++)
      if (s->in[k] == cur) ext = ext < 0 ? k : -2;
    if (ext < 0 || !run_links(s, ext, made, types, ops, &n)) return false;
    for (int k = 0; k < n; k++) {
      ops[k].ref = s->in[ops[k].ref];
      if (ops[k].kind == EPI_RELU && !shlo__fuse_const_pos_zero(pl, ops[k].ref))
        return false;
    }
  }
  int last = c->n_ops ? c->ops[c->n_ops - 1].kind : -1;
  for (int k = 0; k < n; last = ops[k++].kind)
    if (ops[k].kind <= last) return false;
  memcpy(c->ops + c->n_ops, ops, (size_t)n * sizeof *ops);
  c->n_ops += n;
  return true;
}

/* The longest chain behind producer i (its result's one reader, that
 * value's one reader, ...), skipping steps that read none of it. */
static void chain_find(const shlo_plan *pl, int i, const int *reads,
                       const bool *gone, const shlo_type *const *types,
                       chain *c) {
  const shlo_type *made = types[pl->steps[i].out[0]];
  int cur = pl->steps[i].out[0];
  memset(c, 0, sizeof *c);
  for (int j = i + 1; j < pl->n_steps && j <= i + EPI_LOOKAHEAD &&
                      c->n_links < EPI_LOOKAHEAD;
       j++) {
    const shlo_step *s = &pl->steps[j];
    bool reads_cur = false;
    for (int k = 0; k < s->n_in; k++) reads_cur = reads_cur || s->in[k] == cur;
    if (gone[j] || !reads_cur) continue;
    if (reads[cur] != 1 || s->n_out != 1 ||
        !chain_add(c, pl, s, cur, made, types))
      return;
    c->links[c->n_links++] = j;
    cur = s->out[0];
  }
}

/* Whether fuse.c's own epilogue does as well: one run right behind
 * producer i, a bias, perhaps a ReLU. */
static bool chain_is_bias_relu(const chain *c, int i) {
  return c->n_links == 1 && c->links[0] == i + 1 &&
         c->ops[0].kind == EPI_BIAS &&
         (c->n_ops == 1 || c->ops[1].kind == EPI_RELU);
}

static void epi_chain_free(void *p) {
  epi_chain *e = p;
  if (!e) return;
  shlo__step_free(&e->producer);
  shlo__free(e);
}

/* The step's inputs: the producer's, then the epilogue's operands. */
static shlo_status k_epi_chain(const shlo_step *s, shlo_value *const *in,
                               shlo_value **out, shlo_exec *ex) {
  const epi_chain *e = s->params;
  const shlo_type *t = e->made;
  shlo__gemm_epi epi = {0};
  int64_t cols = t->dims[t->rank - 1];
  shlo_value *made = shlo__tensor_new_uninit(t->elem, t->rank, t->dims);
  if (!made) return shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory for a result");
  bool ok = true;
  if (e->scale_at >= 0) {
    ok = ok && in[e->scale_at]->numel == 1;
    if (ok) memcpy(&epi.scale, in[e->scale_at]->data, sizeof epi.scale);
    epi.scaled = true;
  }
  if (e->bias_at >= 0) {
    ok = ok && in[e->bias_at]->numel == cols;
    epi.bias = in[e->bias_at]->data;
  }
  if (e->res_at >= 0) {
    ok = ok && in[e->res_at]->numel == made->numel;
    epi.res = in[e->res_at]->data;
    epi.ldres = cols;
    epi.res_first = e->res_first;
  }
  epi.relu = e->relu;
  shlo_status st =
      ok ? e->producer.loop.run_epi(&e->producer, in, made, &epi, NULL,
                                        NULL, ex)
         : shlo__exec_fail(ex, s, SHLO_EVERIFY, "epilogue operand of another size");
  if (st) {
    shlo_value_unref(made);
    return st;
  }
  out[0] = made;
  return SHLO_OK;
}

/* "LABEL + epilogue(multiply, add, ...) [in the producer's registers]" */
static char *chain_label(const shlo_step *p, const chain *c) {
  static const char *const names[EPI_KINDS] = {"multiply", "add", "add",
                                               "maximum"};
  const char *pl = p->label ? p->label : p->op->name;
  size_t cap = strlen(pl) + 96;
  char *label = shlo__malloc(cap);
  if (!label) return NULL;
  int len = snprintf(label, cap, "%s + epilogue(", pl);
  for (int k = 0; k < c->n_ops; k++)
    len += snprintf(label + len, cap - (size_t)len, "%s%s", k ? ", " : "",
                    names[c->ops[k].kind]);
  snprintf(label + len, cap - (size_t)len,
           ") [in the producer's registers]");
  return label;
}

/* Producer i and chain c made one step, in place of c's last link; the
 * producer's and the other links' places marked gone. */
static shlo_status chain_join(shlo_plan *pl, int i, const chain *c,
                              const shlo_type *const *types, bool *gone) {
  shlo_step *p = &pl->steps[i];
  shlo_step *last = &pl->steps[c->links[c->n_links - 1]];
  epi_chain *e = shlo__calloc(1, sizeof *e);
  shlo_step js = {0};
  js.in = shlo__malloc((size_t)(p->n_in + EPI_KINDS) * sizeof *js.in);
  js.label = chain_label(p, c);
  if (!e || !js.in || !js.label) {
    shlo__free(e);
    shlo__free(js.in);
    shlo__free(js.label);
    return SHLO_ENOMEM;
  }
  e->made = types[p->out[0]];
  e->scale_at = e->bias_at = e->res_at = -1;
  for (int k = 0; k < p->n_in; k++) js.in[js.n_in++] = p->in[k];
  for (int k = 0; k < c->n_ops; k++) {
    const epi_op *op = &c->ops[k];
    if (op->kind == EPI_RELU) {
      e->relu = true;
      continue;
    }
    int at = js.n_in;
    js.in[js.n_in++] = op->ref;
    if (op->kind == EPI_SCALE) e->scale_at = at;
    if (op->kind == EPI_BIAS) e->bias_at = at;
    if (op->kind == EPI_RES) e->res_at = at, e->res_first = op->first;
  }
  shlo__fuse_join(&js, last, p, &e->producer, e, epi_chain_free);
  js.fn = k_epi_chain;
  for (int k = 0; k < c->n_links; k++) shlo__step_free(&pl->steps[c->links[k]]);
  for (int k = 0; k < c->n_links - 1; k++) gone[c->links[k]] = true;
  gone[i] = true;
  *last = js;
  return SHLO_OK;
}

/* Whether step p's result can take a whole epilogue. */
static bool producer_takes(const shlo_step *p, const shlo_type *const *types) {
  if (!p->loop.run_epi || p->n_out != 1) return false;
  const shlo_type *t = types[p->out[0]];
  return t && t->kind == SHLO_TYPE_TENSOR && t->elem == SHLO_F32 &&
         !t->quant && t->rank >= 1 && t->dims[t->rank - 1] > 0;
}

shlo_status shlo__fuse_epi_chains(shlo_plan *pl, const shlo_type *const *types) {
  int *reads = shlo__fuse_reads(pl);
  bool *gone = shlo__calloc((size_t)pl->n_steps + 1, sizeof *gone);
  shlo_status st = reads && gone ? SHLO_OK : SHLO_ENOMEM;
  for (int i = 0; !st && i < pl->n_steps; i++) {
    if (gone[i] || !producer_takes(&pl->steps[i], types)) continue;
    chain c;
    chain_find(pl, i, reads, gone, types, &c);
    if (c.n_links && !chain_is_bias_relu(&c, i))
      st = chain_join(pl, i, &c, types, gone);
  }
  if (gone) shlo__fuse_drop_gone(pl, gone);
  shlo__free(reads);
  shlo__free(gone);
  return st;
}
