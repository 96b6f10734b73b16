/* SPDX-License-Identifier: Apache-2.0 */
/* CHLO's broadcasting ops (chlo.broadcast_add ... broadcast_select) and
 * chlo.constant_like.
 *
 * A broadcasting op is lowered at compile time onto the same-shape op its
 * row names (ops.h SHLO_BCAST column: stablehlo.add, compare, select,
 * chlo.zeta, ...): that op's own compile function runs with the operands'
 * types overridden to the result's shape, and the step runs its kernel on
 * operands first expanded to that shape (ops/chlo_bcast.h says how dims
 * map: numpy's trailing alignment, or broadcast_dimensions).  An operand
 * that already has the result's shape is passed as it is.  The step is
 * never fused (its operands are not of the result's shape). */
#include <stdlib.h>
#include <string.h>

#include "core/value.h"
#include "core/alloc.h"
#include "kernels/kernel.h"
#include "ops/chlo_bcast.h"

typedef struct bc_operand {
  bool expand;               /* false: already the result's shape */
  shlo_elem_type elem;
  int64_t stride[SHLO_MAX_RANK]; /* elements per result index step; 0 on
                                    repeated dims */
} bc_operand;

typedef struct bc_params {
  shlo_op inner_op;          /* the same-shape op the kernel runs */
  shlo_kernel inner_fn;
  void *inner_params;
  void (*inner_free)(void *);
  int n_in;
  bc_operand in[3];
  int rank;
  int64_t dims[SHLO_MAX_RANK];
  int64_t numel;
} bc_params;

static void bc_free(void *p_) {
  bc_params *p = p_;
  if (!p) return;
  if (p->inner_free) p->inner_free(p->inner_params);
  shlo__free(p);
}

/* Operand k of the step as a tensor of the result's shape. */
static shlo_value *bc_expand(const bc_params *p, const bc_operand *o,
                             const shlo_value *v) {
  shlo_value *r = shlo_tensor_new(o->elem, p->rank, p->dims);
  if (!r) return NULL;
  size_t es = shlo_elem_size(o->elem);
  int64_t idx[SHLO_MAX_RANK] = {0}, src = 0;
  char *dst = r->data;
  const char *from = v->data;
  for (int64_t i = 0; i < p->numel; i++) {
    memcpy(dst + (size_t)i * es, from + (size_t)src * es, es);
    for (int d = p->rank - 1; d >= 0; d--) {
      src += o->stride[d];
      if (++idx[d] < p->dims[d]) break;
      src -= o->stride[d] * p->dims[d];
      idx[d] = 0;
    }
  }
  return r;
}

static shlo_status k_bcast(const shlo_step *s, shlo_value *const *in,
                           shlo_value **out, shlo_exec *ex) {
  const bc_params *p = s->params;
  shlo_value *tmp[3] = {NULL, NULL, NULL}, *args[3];
  shlo_status st = SHLO_OK;
  for (int k = 0; k < p->n_in; k++) {
    args[k] = in[k];
    if (!p->in[k].expand) continue;
    tmp[k] = bc_expand(p, &p->in[k], in[k]);
    if (!tmp[k]) st = shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory");
    args[k] = tmp[k];
  }
  if (!st) {
    shlo_step t = *s;
    t.fn = p->inner_fn;
    t.params = p->inner_params;
    t.free_params = NULL;
    st = p->inner_fn(&t, args, out, ex);
  }
  for (int k = 0; k < p->n_in; k++) shlo_value_unref(tmp[k]);
  return st;
}

/* The broadcast of each operand: strides over the result's index. */
static shlo_status bc_plan(shlo_compiler *cc, const shlo_op *op,
                           bc_params *p, const shlo_type *rt) {
  int ranks[3];
  const int64_t *dims[3];
  for (int k = 0; k < p->n_in; k++) {
    const shlo_type *t = shlo__cc_operand_type(cc, op, k);
    if (t->kind != SHLO_TYPE_TENSOR || !shlo_type_is_static(t))
      return shlo__cc_fail(cc, op, SHLO_EUNSUPPORTED,
                          "operand %d must be a statically shaped tensor", k);
    ranks[k] = t->rank;
    dims[k] = t->dims;
  }
  int64_t bd[SHLO_MAX_RANK], out[SHLO_MAX_RANK];
  int n_bd = -1, rank, map[3][SHLO_MAX_RANK];
  if (shlo_op_attr(op, "broadcast_dimensions"))
    n_bd = shlo_attr_i64s(shlo_op_attr(op, "broadcast_dimensions"), bd,
                          SHLO_MAX_RANK);
  char msg[160];
  /* the verifier checked the rule; a failure here is a verifier bug */
  if (shlo__bcast_shape(p->n_in, ranks, dims, bd, n_bd, &rank, out, map, msg,
                        sizeof msg) || rank != rt->rank)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY, "%s", msg);
  p->rank = rank;
  memcpy(p->dims, rt->dims, sizeof p->dims);
  p->numel = shlo_type_numel(rt);
  for (int k = 0; k < p->n_in; k++) {
    bc_operand *o = &p->in[k];
    const shlo_type *t = shlo__cc_operand_type(cc, op, k);
    o->elem = t->elem;
    o->expand = t->rank != rank || memcmp(t->dims, rt->dims,
                                          (size_t)rank * sizeof *t->dims);
    int64_t st = 1;
    for (int i = t->rank - 1; i >= 0; i--) {
      o->stride[map[k][i]] = t->dims[i] == 1 ? 0 : st;
      st *= t->dims[i];
    }
  }
  return SHLO_OK;
}

/* Types of the operands as the inner op sees them: the result's shape. */
static shlo_status bc_override(shlo_compiler *cc, const shlo_op *op,
                               const shlo_type *rt, shlo_type *types) {
  shlo_status st = SHLO_OK;
  for (int k = 0; k < op->n_operands && !st; k++) {
    types[k] = *rt;
    types[k].elem = shlo__cc_operand_type(cc, op, k)->elem;
    types[k].quant = NULL;
  }
  for (int k = 0; k < op->n_operands && !st; k++)
    st = shlo__cc_override_type(cc, op->operands[k], &types[k]);
  return st;
}

shlo_status shlo__compile_chlo_broadcast(shlo_compiler *cc, const shlo_op *op,
                                         shlo_step *step) {
  shlo_bcast_info bi = shlo__bcast_info(op->code);
  const shlo_type *rt = shlo__cc_result_type(cc, op, 0);
  if (!bi.inner || op->n_operands > 3 || op->n_results != 1)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY, "not a broadcasting op");
  if (rt->kind != SHLO_TYPE_TENSOR || !shlo_type_is_static(rt))
    return shlo__cc_fail(cc, op, SHLO_EUNSUPPORTED,
                        "result must be a statically shaped tensor");
  bc_params *p = shlo__calloc(1, sizeof *p);
  if (!p) return shlo__cc_fail(cc, op, SHLO_ENOMEM, "out of memory");
  p->n_in = op->n_operands;
  shlo_status st = bc_plan(cc, op, p, rt);
  shlo_type types[3];
  if (!st) {
    p->inner_op = *op;
    p->inner_op.code = bi.inner;
    p->inner_op.name = shlo__op_name(bi.inner);
    st = bc_override(cc, op, rt, types);
    if (!st) st = shlo__op_compile_fn(bi.inner)(cc, &p->inner_op, step);
    for (int k = 0; k < op->n_operands; k++)
      shlo__cc_override_type(cc, op->operands[k], NULL);
  }
  if (!st && !step->fn)
    st = shlo__cc_fail(cc, op, SHLO_EUNSUPPORTED, "no kernel for this op");
  if (st) {
    shlo__free(p);
    return st;
  }
  p->inner_fn = step->fn;
  p->inner_params = step->params;
  p->inner_free = step->free_params;
  step->params = p;
  step->free_params = bc_free;
  step->fn = k_bcast;
  step->loop.range = NULL;
  step->loop.range_one = NULL;
  return SHLO_OK;
}

/* ---- constant_like ---- */

static void splat_free(void *p) { shlo_value_unref(p); }

static shlo_status k_splat(const shlo_step *s, shlo_value *const *in,
                           shlo_value **out, shlo_exec *ex) {
  (void)in;
  (void)ex;
  out[0] = shlo_value_ref(s->params);
  return SHLO_OK;
}

/* The value, made once at compile time and shared by every run. */
shlo_status shlo__compile_constant_like(shlo_compiler *cc, const shlo_op *op,
                                        shlo_step *step) {
  const shlo_type *rt = shlo__cc_result_type(cc, op, 0);
  const shlo_attr *a = shlo_op_attr(op, "value");
  if (rt->kind != SHLO_TYPE_TENSOR || !shlo_type_is_static(rt) || !a)
    return shlo__cc_fail(cc, op, SHLO_EUNSUPPORTED,
                        "result must be a statically shaped tensor");
  shlo_value *v = shlo_tensor_new_like(rt);
  if (!v) return shlo__cc_fail(cc, op, SHLO_ENOMEM, "out of memory");
  for (int64_t i = 0; i < v->numel; i++) {
    if (a->kind == SHLO_ATTR_FLOAT) shlo_tensor_set_f64(v, i, a->f);
    else shlo_tensor_set_i64(v, i, a->kind == SHLO_ATTR_BOOL ? a->b : a->i);
  }
  step->params = v;
  step->free_params = splat_free;
  step->fn = k_splat;
  return SHLO_OK;
}
