/* SPDX-License-Identifier: Apache-2.0 */
/* Step order before fusion: reshaping broadcasts of arguments move to the
 * front of the plan; and the plan walks the passes before and after the
 * fusion share (fuse_int.h).
 *
 * JAX writes a bias add as two broadcasts, the first only adding unit
 * dimensions (768 -> 1x1x768, same elements), right before the add that
 * reads the second.  That first one is a small step of its own between
 * the steps of a chain, so the chain is cut in two runs there: a GEMM's
 * scale and its bias add, or a layernorm's normalization and its gamma,
 * went through memory twice.  Such a broadcast depends only on an
 * argument or a constant (constants are already at the front,
 * hoist_constants in fuse.c), so running it first changes no value; the
 * fusion that follows then sees the chain whole. */
#include <stdbool.h>
#include <string.h>

#include "core/alloc.h"
#include "kernels/fuse_int.h"

/* Larger copies are not moved: their value would stay alive longer. */
#define HOIST_MAX_NUMEL 65536

static int64_t numel_of(const shlo_type *const *types, int slot) {
  const shlo_type *t = types[slot];
  return t && t->kind == SHLO_TYPE_TENSOR ? shlo_type_numel(t) : -1;
}

/* Whether step s is a broadcast_in_dim of a value `ready` holds that
 * keeps its element count (adds unit dimensions only), small. */
static bool hoistable(const shlo_step *s, const shlo_type *const *types,
                      const bool *ready) {
  if (!s->op || s->op->code != SHLO_OP_BROADCAST_IN_DIM || s->n_in != 1 ||
      s->n_out != 1 || s->n_plans || !ready[s->in[0]])
    return false;
  int64_t n = numel_of(types, s->in[0]);
  return n >= 1 && n <= HOIST_MAX_NUMEL && n == numel_of(types, s->out[0]);
}

shlo_status shlo__fuse_hoist_reshapes(shlo_plan *p,
                                      const shlo_type *const *types) {
  size_t n = p->n_steps ? (size_t)p->n_steps : 1;
  shlo_step *tmp = shlo__malloc(n * sizeof *tmp);
  bool *ready = shlo__calloc((size_t)p->n_slots + 1, sizeof *ready);
  bool *moved = shlo__calloc(n, sizeof *moved);
  if (!tmp || !ready || !moved) {
    shlo__free(tmp);
    shlo__free(ready);
    shlo__free(moved);
    return SHLO_ENOMEM;
  }
  for (int i = 0; i < p->n_args; i++)
    if (p->arg_slots[i] >= 0 && p->arg_slots[i] < p->n_slots)
      ready[p->arg_slots[i]] = true;
  int w = 0, lead = 0; /* constants, then the moved broadcasts */
  for (; lead < p->n_steps && p->steps[lead].op &&
         p->steps[lead].op->code == SHLO_OP_CONSTANT;
       lead++) {
    tmp[w++] = p->steps[lead];
    for (int k = 0; k < p->steps[lead].n_out; k++)
      ready[p->steps[lead].out[k]] = true;
  }
  for (int i = lead; i < p->n_steps; i++)
    if (hoistable(&p->steps[i], types, ready)) {
      moved[i] = true;
      ready[p->steps[i].out[0]] = true;
      tmp[w++] = p->steps[i];
    }
  for (int i = lead; i < p->n_steps; i++)
    if (!moved[i]) tmp[w++] = p->steps[i];
  memcpy(p->steps, tmp, (size_t)p->n_steps * sizeof *tmp);
  shlo__free(tmp);
  shlo__free(ready);
  shlo__free(moved);
  return SHLO_OK;
}

void shlo__fuse_join(shlo_step *js, shlo_step *last, shlo_step *p,
                     shlo_step *keep, void *params,
                     void (*free_params)(void *)) {
  js->out = last->out; /* the last step's results become js's */
  js->n_out = last->n_out;
  last->out = NULL;
  last->n_out = 0;
  *keep = *p;
  memset(p, 0, sizeof *p);
  js->op = keep->op;
  js->params = params;
  js->free_params = free_params;
}

int shlo__fuse_maker(const shlo_plan *pl, int slot, int before) {
  for (int i = 0; i < before; i++)
    for (int k = 0; k < pl->steps[i].n_out; k++)
      if (pl->steps[i].out[k] == slot) return i;
  return -1;
}

int *shlo__fuse_reads(const shlo_plan *pl) {
  int *reads = shlo__calloc((size_t)pl->n_slots + 1, sizeof *reads);
  if (!reads) return NULL;
  for (int i = 0; i < pl->n_steps; i++)
    for (int k = 0; k < pl->steps[i].n_in; k++) reads[pl->steps[i].in[k]]++;
  for (int k = 0; k < pl->n_results; k++) reads[pl->result_slots[k]]++;
  return reads;
}

void shlo__fuse_drop_gone(shlo_plan *pl, const bool *gone) {
  int w = 0;
  for (int i = 0; i < pl->n_steps; i++)
    if (!gone[i]) pl->steps[w++] = pl->steps[i];
  pl->n_steps = w;
}

