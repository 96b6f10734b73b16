/* SPDX-License-Identifier: Apache-2.0 */
/* A scatter into a broadcast of one element that nothing else reads (an
 * embedding's gradient: zeros, then the rows added in): the broadcast
 * goes, and the scatter fills its result from the element itself
 * (shlo__scatter_fill_from_scalar), range by range beside its updates.
 * Filled whole by its own step, a 16 MB result was written, then read
 * back at random by the updates, from memory wherever the L3 was shared;
 * each range's fill is now in cache when its rows are updated.  The
 * bytes are the same: every element starts as the broadcast's. */
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "kernels/fuse_int.h"
#include "kernels/indexing.h"
#include "ops/ops.h"

/* Whether step b broadcasts one element of a plain tensor. */
static bool broadcasts_one(const shlo_step *b, const shlo_type *const *types) {
  if (!shlo__fuse_step_is(b, SHLO_OP_BROADCAST_IN_DIM) || b->n_in != 1 || b->n_out != 1 ||
      b->n_plans)
    return false;
  const shlo_type *t = types[b->in[0]];
  return t && t->kind == SHLO_TYPE_TENSOR && !t->quant &&
         shlo_type_numel(t) == 1;
}

shlo_status shlo__fuse_scatter_fills(shlo_plan *pl,
                                     const shlo_type *const *types) {
  int *reads = shlo__fuse_reads(pl);
  bool *gone = shlo__calloc((size_t)pl->n_steps + 1, sizeof *gone);
  if (!reads || !gone) {
    shlo__free(reads);
    shlo__free(gone);
    return SHLO_ENOMEM;
  }
  for (int i = 0; i < pl->n_steps; i++) {
    shlo_step *s = &pl->steps[i];
    if (!shlo__fuse_step_is(s, SHLO_OP_SCATTER) || s->n_in < 1 || reads[s->in[0]] != 1)
      continue;
    int b = shlo__fuse_maker(pl, s->in[0], i);
    if (b < 0 || gone[b] || !broadcasts_one(&pl->steps[b], types) ||
        !shlo__scatter_fill_from_scalar(s))
      continue;
    const char *name = s->label ? s->label : s->op->name;
    size_t cap = strlen(name) + 32;
    char *label = shlo__malloc(cap);
    if (label) { /* (--explain's; the step runs the same without it) */
      snprintf(label, cap, "%s [from one element]", name);
      shlo__free(s->label);
      s->label = label;
    }
    s->in[0] = pl->steps[b].in[0];
    shlo__step_free(&pl->steps[b]);
    gone[b] = true;
  }
  shlo__fuse_drop_gone(pl, gone);
  shlo__free(reads);
  shlo__free(gone);
  return SHLO_OK;
}
