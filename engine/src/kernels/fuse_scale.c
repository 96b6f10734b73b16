/* SPDX-License-Identifier: Apache-2.0 */
/* A product scaled by a scalar before anything else reads it, the scaled
 * value then reduced, as JAX writes attention's scores (q k^T times
 * 1/sqrt(d), then softmax's row maxima): the multiply goes into the
 * product's step, which applies it in its GEMM's registers
 * (shlo_step.loop.run_epi), before the fusion groups the steps.
 *
 * Left to the fusion, the multiply became the first member of the
 * softmax rows group behind the product: a pass over each block of the
 * scores into scratch, and the softmax's operand was then that member
 * rather than the product, so the next block's row maxima could not be
 * taken beside the exponentials (fuse_softmax.c).  A scaled value that
 * only elementwise steps read is left to fuse_epi.c, whose chains take
 * the scale with a bias, a residual and a ReLU after it.
 *
 * Bits: the epilogue computes product * scale, the multiply's own
 * operation with its operands in the program's order (the product
 * first; the other order is left alone, as fuse_epi.c leaves it).  The
 * combined step is a producer in blocks (loop.run_blocks), so that the
 * rows group behind it still runs on each block while it is in cache
 * (fuse.c's epilogues). */
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/tensor_uninit.h"
#include "core/value.h"
#include "kernels/fuse_int.h"
#include "kernels/gemm_panels.h"
#include "ops/ops.h"
#include "runtime/exec.h"

/* The combined step's parameters: the producer, moved here; the scalar
 * is the step's last input. */
typedef struct scaled {
  shlo_step producer;
  const shlo_type *made; /* the product's type, the multiply's too */
} scaled;

static void scaled_free(void *p) {
  scaled *sc = p;
  if (!sc) return;
  shlo__step_free(&sc->producer);
  shlo__free(sc);
}

/* The scale from the step's last input (a one-element f32, checked). */
static bool scale_of(const shlo_step *s, shlo_value *const *in, float *v) {
  const shlo_value *x = in[s->n_in - 1];
  if (x->numel != 1) return false;
  memcpy(v, x->data, sizeof *v);
  return true;
}

/* The scaled product, telling done (NULL: none) of each block. */
static shlo_status scaled_run(const shlo_step *s, shlo_value *const *in,
                              shlo_value *result, shlo_block_done done,
                              void *ctx, shlo_exec *ex) {
  const scaled *sc = s->params;
  shlo__gemm_epi epi = {.scaled = true};
  if (!scale_of(s, in, &epi.scale))
    return shlo__exec_fail(ex, s, SHLO_EVERIFY,
                           "scale of a product is not one element");
  return sc->producer.loop.run_epi(&sc->producer, in, result, &epi, done,
                                   ctx, ex);
}

static shlo_status k_scaled(const shlo_step *s, shlo_value *const *in,
                            shlo_value **out, shlo_exec *ex) {
  const shlo_type *t = ((const scaled *)s->params)->made;
  shlo_value *made = shlo__tensor_new_uninit(t->elem, t->rank, t->dims);
  if (!made)
    return shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory for a result");
  shlo_status st = scaled_run(s, in, made, NULL, NULL, ex);
  if (st) {
    shlo_value_unref(made);
    return st;
  }
  out[0] = made;
  return SHLO_OK;
}

/* Whether step p's result can take the scale: an f32 tensor with rows. */
static bool producer_takes(const shlo_step *p, const shlo_type *const *types) {
  if (!p->loop.run_epi || !p->loop.run_blocks || p->n_out != 1) return false;
  const shlo_type *t = types[p->out[0]];
  return t && t->kind == SHLO_TYPE_TENSOR && t->elem == SHLO_F32 &&
         !t->quant && t->rank >= 1 && t->dims[t->rank - 1] > 0;
}

/* Whether a reduce after step i reads slot. */
static bool reduced(const shlo_plan *pl, int i, int slot) {
  for (int j = i + 1; j < pl->n_steps; j++)
    for (int k = 0; k < pl->steps[j].n_in; k++)
      if (pl->steps[j].in[k] == slot && shlo__fuse_step_is(&pl->steps[j], SHLO_OP_REDUCE))
        return true;
  return false;
}

/* Whether step mi multiplies slot x (first) by a broadcast of one f32
 * element (made by step *b, reading slot *scalar), with x's type, and a
 * reduce reads the result. */
static bool scales(const shlo_plan *pl, int mi, int x,
                   const shlo_type *const *types, int *b, int *scalar) {
  const shlo_step *m = &pl->steps[mi];
  if (!shlo__fuse_step_is(m, SHLO_OP_MULTIPLY) || m->n_in != 2 || m->n_out != 1 ||
      m->in[0] != x || m->in[1] == x ||
      !shlo_type_equal(types[m->out[0]], types[x]) ||
      !reduced(pl, mi, m->out[0]))
    return false;
  *b = shlo__fuse_maker(pl, m->in[1], mi);
  if (*b < 0) return false;
  const shlo_step *bs = &pl->steps[*b];
  if (!shlo__fuse_step_is(bs, SHLO_OP_BROADCAST_IN_DIM) || bs->n_in != 1 ||
      bs->n_out != 1 || bs->n_plans)
    return false;
  const shlo_type *st = types[bs->in[0]];
  *scalar = bs->in[0];
  return st && st->kind == SHLO_TYPE_TENSOR && st->elem == SHLO_F32 &&
         !st->quant && shlo_type_numel(st) == 1;
}

/* "LABEL * scalar [in the producer's registers]" */
static char *scaled_label(const shlo_step *p) {
  const char *pl = p->label ? p->label : p->op->name;
  size_t cap = strlen(pl) + 48;
  char *label = shlo__malloc(cap);
  if (label)
    snprintf(label, cap, "%s + multiply [in the producer's registers]", pl);
  return label;
}

/* Producer i, scaled by multiply mi reading scalar: one step in mi's
 * place; i's marked gone. */
static shlo_status scale_join(shlo_plan *pl, int i, int mi, int scalar,
                              const shlo_type *const *types, bool *gone) {
  shlo_step *p = &pl->steps[i], *m = &pl->steps[mi];
  scaled *sc = shlo__calloc(1, sizeof *sc);
  shlo_step js = {0};
  js.in = shlo__malloc((size_t)(p->n_in + 1) * sizeof *js.in);
  js.label = scaled_label(p);
  if (!sc || !js.in || !js.label) {
    shlo__free(sc);
    shlo__free(js.in);
    shlo__free(js.label);
    return SHLO_ENOMEM;
  }
  sc->made = types[p->out[0]];
  for (int k = 0; k < p->n_in; k++) js.in[js.n_in++] = p->in[k];
  js.in[js.n_in++] = scalar;
  shlo__fuse_join(&js, m, p, &sc->producer, sc, scaled_free);
  js.fn = k_scaled;
  js.loop.run_blocks = scaled_run;
  shlo__step_free(m);
  *m = js;
  gone[i] = true;
  return SHLO_OK;
}

shlo_status shlo__fuse_fold_scales(shlo_plan *pl,
                                   const shlo_type *const *types) {
  int *reads = shlo__fuse_reads(pl);
  bool *gone = shlo__calloc((size_t)pl->n_steps + 1, sizeof *gone);
  shlo_status st = reads && gone ? SHLO_OK : SHLO_ENOMEM;
  for (int i = 0; !st && i < pl->n_steps; i++) {
    const shlo_step *p = &pl->steps[i];
    if (gone[i] || !producer_takes(p, types) || reads[p->out[0]] != 1)
      continue;
    int x = p->out[0], mi = -1, b, scalar;
    for (int j = i + 1; j < pl->n_steps && mi < 0; j++)
      for (int k = 0; k < pl->steps[j].n_in; k++)
        if (pl->steps[j].in[k] == x) mi = j;
    if (mi < 0 || !scales(pl, mi, x, types, &b, &scalar)) continue;
    int y = pl->steps[mi].in[1];
    st = scale_join(pl, i, mi, scalar, types, gone);
    if (!st && reads[y] == 1) { /* the broadcast has no other reader */
      shlo__step_free(&pl->steps[b]);
      gone[b] = true;
    }
  }
  if (gone) shlo__fuse_drop_gone(pl, gone);
  shlo__free(reads);
  shlo__free(gone);
  return st;
}
