/* SPDX-License-Identifier: Apache-2.0 */
/* Scalar region programs over blocks of elements (see lanes.h). */
#include <stdlib.h>
#include <string.h>

#include "core/value.h"
#include "core/alloc.h"
#include "kernels/lanes.h"

#define LANE_BLOCK ((size_t)SHLO_LANES * 16)

bool shlo__lanes_init(shlo_lanes *l, const shlo_step *s, int r) {
  const shlo_scalar_prog *sp = s->plans[r]->scalar;
  memset(l, 0, sizeof *l);
  if (!sp || sp->n_regs > SHLO_SCALAR_MAX_REGS) return false;
  l->n_regs = sp->n_regs;
  /* constants and captures stay broadcast from one run to the next
   * unless a step writes over their registers */
  const shlo_plan *p = s->plans[r];
  l->keep_inputs = true;
  for (int k = 0; k < sp->n_ops; k++)
    for (int i = 0; i < p->n_steps; i++)
      if (p->steps[i].op && p->steps[i].op->code == SHLO_OP_CONSTANT &&
          p->steps[i].out[0] == sp->ops[k]->out[0])
        l->keep_inputs = false;
  for (int k = 0; k < sp->n_ops; k++)
    for (int i = 0; i < p->n_args; i++)
      if (p->arg_slots[i] == sp->ops[k]->out[0]) l->keep_inputs = false;
  l->buf = shlo__malloc((size_t)(sp->n_regs + 1) * LANE_BLOCK);
  return l->buf != NULL;
}

void shlo__lanes_free(shlo_lanes *l) {
  shlo__free(l->buf);
  shlo__free(l->skip);
  l->buf = NULL;
  l->skip = NULL;
}

/* Backwards from the last op: an op is needed when it writes a register
 * live after it, which it then kills before its inputs become live. */
bool shlo__lanes_only(shlo_lanes *l, const shlo_step *s, int r, int slot) {
  const shlo_scalar_prog *sp = s->plans[r]->scalar;
  unsigned char *skip = shlo__malloc(sp->n_ops ? (size_t)sp->n_ops : 1);
  if (!skip) return false;
  bool live[SHLO_SCALAR_MAX_REGS] = {0};
  live[slot] = true;
  for (int k = sp->n_ops - 1; k >= 0; k--) {
    const shlo_step *st = sp->ops[k];
    skip[k] = !live[st->out[0]];
    if (skip[k]) continue;
    live[st->out[0]] = false;
    for (int j = 0; j < st->n_in; j++) live[st->in[j]] = true;
  }
  shlo__free(l->skip);
  l->skip = skip;
  return true;
}

/* count copies of the `size`-byte element at src into dst. */
static void broadcast(void *dst, const void *src, size_t size, int64_t count) {
  switch (size) {
  case 1: memset(dst, *(const unsigned char *)src, (size_t)count); return;
#define BCAST(T)                                                            \
  {                                                                         \
    T v;                                                                    \
    memcpy(&v, src, sizeof v);                                              \
    for (int64_t i = 0; i < count; i++) ((T *)dst)[i] = v;                  \
    return;                                                                 \
  }
  case 2: BCAST(uint16_t)
  case 4: BCAST(uint32_t)
  case 8: BCAST(uint64_t)
#undef BCAST
  default:
    for (int64_t i = 0; i < count; i++)
      memcpy((char *)dst + (size_t)i * size, src, size);
  }
}

static unsigned char *reg_block(shlo_lanes *l, int slot) {
  return l->buf + (size_t)slot * LANE_BLOCK;
}

/* Every lane of the constants' and captures' registers, as the scalar
 * program preloads them. */
static void broadcast_inputs(shlo_lanes *l, const shlo_step *s, int r,
                             shlo_value *const *in, int n, int base) {
  const shlo_plan *p = s->plans[r];
  for (int i = 0; i < p->n_steps; i++) {
    const shlo_step *c = &p->steps[i];
    if (!c->op || c->op->code != SHLO_OP_CONSTANT) continue;
    const shlo_value *v = *(shlo_value *const *)c->params;
    broadcast(reg_block(l, c->out[0]), v->data, v->nbytes, SHLO_LANES);
    l->at[c->out[0]] = reg_block(l, c->out[0]);
  }
  for (int i = n; i < p->n_args; i++) {
    int slot = p->arg_slots[i];
    broadcast(reg_block(l, slot), in[base + i - n]->data,
              p->scalar->arg_size[i], SHLO_LANES);
    l->at[slot] = reg_block(l, slot);
  }
}

void shlo__lanes_run(shlo_lanes *l, const shlo_step *s, int r,
                     shlo_value *const *in, const void *const *lead, int n,
                     int64_t count) {
  const shlo_plan *p = s->plans[r];
  const shlo_scalar_prog *sp = p->scalar;
  int base = s->op->n_operands;
  for (int i = 0; i < r; i++) base += s->n_captures[i];
  if (!l->primed) broadcast_inputs(l, s, r, in, n, base);
  l->primed = l->keep_inputs;
  for (int i = 0; i < n; i++) l->at[p->arg_slots[i]] = lead[i];
  for (int k = 0; k < sp->n_ops; k++) {
    if (l->skip && l->skip[k]) continue;
    const shlo_step *st = sp->ops[k];
    const void *x[3] = {0};
    for (int j = 0; j < st->n_in && j < 3; j++) x[j] = l->at[st->in[j]];
    unsigned char *d = reg_block(l, st->out[0]);
    shlo__range_lanes(st, d, x, count);
    l->at[st->out[0]] = d;
  }
}
