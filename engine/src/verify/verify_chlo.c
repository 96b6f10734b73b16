/* SPDX-License-Identifier: Apache-2.0 */
/* Verifiers of the ops that StableHLO's and CHLO's op definitions
 * (StablehloOps.td, ChloOps.td) declare outside the spec's list: CHLO's
 * broadcasting ops and constant_like, and StableHLO's cross-replica-sum,
 * torch_index_select, einsum/unary_einsum and trace.  The spec gives them
 * no constraint labels; errors name the .td's rule instead ("operands",
 * "broadcast_dimensions", ...).  Where shlo checks more or less than
 * MLIR's verifier, the comment above the rule says so. */
#include <stdio.h>
#include <string.h>

#include "ops/chlo_bcast.h"
#include "verify/verify_int.h"

static int bc_class(const shlo_type *t) {
  if (!shlo__is_tensor(t) || t->quant) return 0;
  switch (shlo_elem_class_of(t->elem)) {
  case SHLO_CLASS_BOOL: return SHLO_BC_BOOL;
  case SHLO_CLASS_SINT: return t->elem == SHLO_INDEX ? 0 : SHLO_BC_INT;
  case SHLO_CLASS_UINT: return SHLO_BC_INT;
  case SHLO_CLASS_FLOAT: return SHLO_BC_FLOAT;
  case SHLO_CLASS_COMPLEX: return SHLO_BC_COMPLEX;
  }
  return 0;
}

/* The element type the result must have. */
static bool bc_result_elem(const shlo_bcast_info *bi, shlo_elem_type e,
                           shlo_elem_type *out) {
  if (bi->result == SHLO_BC_RES_PRED) {
    *out = SHLO_I1;
  } else if (bi->result == SHLO_BC_RES_CPLX) {
    if (e != SHLO_F32 && e != SHLO_F64) return false;
    *out = e == SHLO_F32 ? SHLO_C64 : SHLO_C128;
  } else {
    *out = e;
  }
  return true;
}

/* chlo.broadcast_*: two operands (select: pred, on_true, on_false) of one
 * element type the op accepts (select: pred i1), shapes that broadcast by
 * CHLO's rule (ops/chlo_bcast.h) to the result's shape, and the result
 * element type the op gives.  Stricter than MLIR: it infers an unranked
 * result for shapes that do not broadcast, and takes broadcast_dimensions
 * out of range or out of order; shlo refuses both.  Quantized operands,
 * which ChloOps.td allows for some ops, are refused (no lowering here). */
bool shlo__verify_chlo_broadcast(shlo__vctx *vc, const shlo_op *op) {
  shlo_bcast_info bi = shlo__bcast_info(op->code);
  bool sel = bi.inner == SHLO_OP_SELECT;
  int n = sel ? 3 : 2;
  if (op->n_operands != n || op->n_results != 1)
    return shlo__verr(vc, op, NULL, "expects %d operands and one result", n);
  int ranks[3];
  const int64_t *dims[3];
  for (int k = 0; k < n; k++) {
    const shlo_type *t = shlo__otype(vc, op, k);
    if (!shlo__is_tensor(t) || t->rank < 0)
      return shlo__verr(vc, op, "operands", "operand #%d %s must be a "
                        "ranked tensor", k, shlo__tstr(vc, t));
    ranks[k] = t->rank;
    dims[k] = t->dims;
  }
  const shlo_type *a = shlo__otype(vc, op, sel ? 1 : 0);
  const shlo_type *b = shlo__otype(vc, op, sel ? 2 : 1);
  const shlo_type *r = shlo__rtype(vc, op, 0);
  if (sel && (!shlo__is_bool(shlo__otype(vc, op, 0))))
    return shlo__verr(vc, op, "pred", "pred %s must be a tensor of i1",
                      shlo__tstr(vc, shlo__otype(vc, op, 0)));
  if (!(bc_class(a) & bi.kinds) || a->elem != b->elem || b->quant)
    return shlo__verr(vc, op, "operands", "operands %s and %s must have one "
                      "element type that this op accepts",
                      shlo__tstr(vc, a), shlo__tstr(vc, b));
  shlo_elem_type want;
  if (!bc_result_elem(&bi, a->elem, &want))
    return shlo__verr(vc, op, "operands", "operands %s must be f32 or f64",
                      shlo__tstr(vc, a));
  int64_t bd[SHLO_MAX_RANK];
  int n_bd = -1;
  if (shlo_op_attr(op, "broadcast_dimensions")) {
    n_bd = shlo__attr_ints(op, "broadcast_dimensions", bd, SHLO_MAX_RANK);
    if (n_bd < 0 || sel)
      return shlo__verr(vc, op, "broadcast_dimensions", "broadcast_dimensions "
                        "must be a list of at most %d integers%s",
                        SHLO_MAX_RANK, sel ? " (and select takes none)" : "");
  }
  int rank, map[3][SHLO_MAX_RANK];
  int64_t out[SHLO_MAX_RANK];
  char msg[160];
  if (shlo__bcast_shape(n, ranks, dims, bd, n_bd, &rank, out, map, msg,
                        sizeof msg))
    return shlo__verr(vc, op, "broadcast_dimensions", "%s", msg);
  bool ok = shlo__is_tensor(r) && !r->quant && r->elem == want &&
            r->rank == rank;
  for (int d = 0; ok && d < rank; d++) ok = shlo__dim_eq(r->dims[d], out[d]);
  if (!ok) {
    shlo_type t = *a;
    t.elem = want;
    t.quant = NULL;
    t.rank = rank;
    memcpy(t.dims, out, sizeof t.dims);
    return shlo__verr(vc, op, "result", "result %s must be %s, the "
                      "broadcast of the operands", shlo__tstr(vc, r),
                      shlo__tstr(vc, &t));
  }
  return true;
}

/* chlo.constant_like: a scalar integer, float or bool `value` of the
 * operand's element type, and a result of the operand's type (MLIR's
 * verifier: value's type is the element type of the result; the
 * result's shape is the operand's). */
bool shlo__verify_constant_like(shlo__vctx *vc, const shlo_op *op) {
  if (op->n_operands != 1 || op->n_results != 1)
    return shlo__verr(vc, op, NULL, "expects one operand and one result");
  const shlo_type *a = shlo__otype(vc, op, 0), *r = shlo__rtype(vc, op, 0);
  const shlo_attr *v = shlo_op_attr(op, "value");
  if (!v)
    return shlo__verr(vc, op, "value", "requires a 'value' attribute");
  if (!shlo__compat_type(a, r) || a->quant)
    return shlo__verr(vc, op, "result", "result %s must have the type of "
                      "the operand %s", shlo__tstr(vc, r), shlo__tstr(vc, a));
  shlo_elem_type e = a->elem;
  bool ok = false;
  if (v->kind == SHLO_ATTR_BOOL) ok = e == SHLO_I1;
  else if (v->kind == SHLO_ATTR_INT)
    ok = v->type && v->type->kind == SHLO_TYPE_ELEMENT && v->type->elem == e &&
         (shlo_elem_is_int(e) || e == SHLO_I1);
  else if (v->kind == SHLO_ATTR_FLOAT)
    ok = v->type && v->type->kind == SHLO_TYPE_ELEMENT && v->type->elem == e &&
         shlo_elem_is_float(e);
  if (!ok)
    return shlo__verr(vc, op, "value", "value's type doesn't match element "
                      "return type %s (a scalar `N : %s`; complex values "
                      "are not supported)", shlo_elem_name(e),
                      shlo_elem_name(e));
  return true;
}

/* One operand and one result of its type. */
static bool same_type_unary(shlo__vctx *vc, const shlo_op *op) {
  if (op->n_operands != 1 || op->n_results != 1)
    return shlo__verr(vc, op, NULL, "expects one operand and one result");
  const shlo_type *a = shlo__otype(vc, op, 0), *r = shlo__rtype(vc, op, 0);
  if (!shlo__compat_type(a, r))
    return shlo__verr(vc, op, "result", "result %s must have the operand's "
                      "type %s", shlo__tstr(vc, r), shlo__tstr(vc, a));
  return true;
}

/* stablehlo.cross-replica-sum: all_reduce with an add body (the .td's
 * description): result has the operand's type. */
bool shlo__verify_cross_replica_sum(shlo__vctx *vc, const shlo_op *op) {
  if (!same_type_unary(vc, op)) return false;
  if (!shlo_op_attr(op, "replica_groups"))
    return shlo__verr(vc, op, "replica_groups", "requires replica_groups");
  return true;
}

/* stablehlo.torch_index_select: 0 <= batch_dims <= dim < rank(operand),
 * batch_dims <= rank(index), integer index; the operand's and the index's
 * leading batch_dims sizes agree; result shape operand[:dim] ++
 * index[batch_dims:] ++ operand[dim+1:] of the operand's element type.
 * MLIR's verifier checks none of this (the op has no verifier); shlo
 * checks the shape the op's description defines. */
bool shlo__verify_torch_index_select(shlo__vctx *vc, const shlo_op *op) {
  if (op->n_operands != 2 || op->n_results != 1)
    return shlo__verr(vc, op, NULL, "expects operand, index and one result");
  const shlo_type *a = shlo__otype(vc, op, 0), *ix = shlo__otype(vc, op, 1);
  const shlo_type *r = shlo__rtype(vc, op, 0);
  int64_t dim = -1, bdims = -1;
  shlo_attr_get_i64(shlo_op_attr(op, "dim"), &dim);
  shlo_attr_get_i64(shlo_op_attr(op, "batch_dims"), &bdims);
  if (!shlo__is_tensor(a) || !shlo__is_int(ix))
    return shlo__verr(vc, op, "index", "operand %s must be a tensor and "
                      "index %s a tensor of integers", shlo__tstr(vc, a),
                      shlo__tstr(vc, ix));
  if (bdims < 0 || dim < bdims || dim >= a->rank || bdims > ix->rank)
    return shlo__verr(vc, op, "dim", "needs 0 <= batch_dims (%lld) <= dim "
                      "(%lld) < rank of the operand (%d), batch_dims <= "
                      "rank of the index (%d)", (long long)bdims,
                      (long long)dim, a->rank, ix->rank);
  for (int i = 0; i < bdims; i++)
    if (!shlo__dim_eq(a->dims[i], ix->dims[i]))
      return shlo__verr(vc, op, "batch_dims", "batch dimension %d differs: "
                        "operand %s, index %s", i, shlo__tstr(vc, a),
                        shlo__tstr(vc, ix));
  int64_t want[SHLO_MAX_RANK];
  int n = 0;
  for (int i = 0; i < dim; i++) want[n++] = a->dims[i];
  for (int i = (int)bdims; i < ix->rank && n < SHLO_MAX_RANK; i++)
    want[n++] = ix->dims[i];
  for (int i = (int)dim + 1; i < a->rank && n < SHLO_MAX_RANK; i++)
    want[n++] = a->dims[i];
  bool ok = shlo__is_tensor(r) && shlo__same_elem(a, r) &&
            a->rank - 1 + ix->rank - bdims == r->rank;
  for (int i = 0; ok && i < n; i++) ok = shlo__dim_eq(r->dims[i], want[i]);
  if (!ok)
    return shlo__verr(vc, op, "result", "result %s must have shape %s and "
                      "the operand's element type", shlo__tstr(vc, r),
                      shlo__dstr(vc, want, n));
  return true;
}

/* stablehlo.einsum / unary_einsum: an einsum_config string of letters,
 * "ab,bc->ac" (two operands) or "ab->a" (one); one letter per dimension
 * of each operand, a letter's sizes agree wherever it appears, and the
 * output letters (each from an operand, none repeated) give the result's
 * shape.  Element types may differ (i8 operands, an i16 result), as MLIR
 * allows; the sum is taken in the result's type.  MLIR's verifier checks
 * none of the rest (no verifier); shlo does not take "..." (broadcast
 * dimensions). */
bool shlo__verify_einsum(shlo__vctx *vc, const shlo_op *op) {
  bool unary = op->code == SHLO_OP_UNARY_EINSUM;
  int n = unary ? 1 : 2;
  if (op->n_operands != n || op->n_results != 1)
    return shlo__verr(vc, op, NULL, "expects %d operand(s) and one result",
                      n);
  const char *cfg = shlo_attr_get_str(shlo_op_attr(op, "einsum_config"));
  if (!cfg)
    return shlo__verr(vc, op, "einsum_config", "requires an einsum_config "
                      "string");
  int64_t size[128];
  for (int c = 0; c < 128; c++) size[c] = -2;
  const char *p = cfg;
  const shlo_type *r = shlo__rtype(vc, op, 0);
  for (int k = 0; k <= n; k++) {
    const shlo_type *t = k < n ? shlo__otype(vc, op, k) : r;
    if (!shlo__is_tensor(t) || t->quant)
      return shlo__verr(vc, op, "operands", "operands and result must be "
                        "non-quantized tensors: %s", shlo__tstr(vc, t));
    int d = 0;
    bool seen[128] = {0};
    for (; *p >= 'A' && *p <= 'z' && (*p <= 'Z' || *p >= 'a'); p++, d++) {
      int c = (unsigned char)*p;
      if (d >= t->rank) break;
      if (k == n && (seen[c] || size[c] == -2))
        return shlo__verr(vc, op, "einsum_config", "output letter '%c' of "
                          "\"%s\" is repeated or names no operand dimension",
                          *p, cfg);
      seen[c] = true;
      if (size[c] >= 0 && t->dims[d] >= 0 && size[c] != t->dims[d])
        return shlo__verr(vc, op, "einsum_config", "letter '%c' of \"%s\" "
                          "has sizes %lld and %lld", *p, cfg,
                          (long long)size[c], (long long)t->dims[d]);
      if (k < n) size[c] = t->dims[d];
    }
    const char *sep = k + 1 < n ? "," : k + 1 == n ? "->" : "";
    if (d != t->rank || strncmp(p, sep, strlen(sep)) || (k == n && *p))
      return shlo__verr(vc, op, "einsum_config", "\"%s\" does not match "
                        "%s #%d %s (one letter per dimension, then \"%s\")",
                        cfg, k < n ? "operand" : "result", k < n ? k : 0,
                        shlo__tstr(vc, t), sep);
    p += strlen(sep);
  }
  return true;
}

/* stablehlo.trace: one tensor operand, a string tag, no results.  The
 * .td leaves its semantics undocumented; shlo runs it as a no-op. */
bool shlo__verify_trace(shlo__vctx *vc, const shlo_op *op) {
  if (op->n_operands != 1 || op->n_results != 0 ||
      !shlo__is_tensor(shlo__otype(vc, op, 0)))
    return shlo__verr(vc, op, NULL, "expects one tensor operand and no "
                      "results");
  if (!shlo_attr_get_str(shlo_op_attr(op, "tag")))
    return shlo__verr(vc, op, "tag", "requires a string tag");
  return true;
}

/* stablehlo.atan (StablehloOps.td at the pinned revision; not yet in the
 * spec's list): a float or complex operand and a result of its type, as
 * the .td's HLO_CompatibleOperandsAndResultType over HLO_FpOrComplexTensor
 * says. */
bool shlo__verify_float_unary(shlo__vctx *vc, const shlo_op *op) {
  if (!same_type_unary(vc, op)) return false;
  const shlo_type *a = shlo__otype(vc, op, 0);
  if (!shlo__is_float(a) && !shlo__is_complex(a))
    return shlo__verr(vc, op, "operand", "operand %s must be a tensor of "
                      "floats or complex numbers", shlo__tstr(vc, a));
  return true;
}

/* chlo.minimum_broadcast_shapes: two or more shapes in, as many out, each
 * a 1-D tensor of `index` extents (ChloOps.td's constraints). */
bool shlo__verify_minimum_broadcast_shapes(shlo__vctx *vc, const shlo_op *op) {
  if (op->n_operands != op->n_results)
    return shlo__verr(vc, op, NULL, "number of operand shapes (%d) does not "
                      "match number of result shapes (%d)", op->n_operands,
                      op->n_results);
  if (op->n_operands < 2)
    return shlo__verr(vc, op, NULL, "number of operand shapes (%d) should "
                      "be >= 2", op->n_operands);
  for (int i = 0; i < 2 * op->n_operands; i++) {
    bool is_operand = i < op->n_operands;
    int k = is_operand ? i : i - op->n_operands;
    const shlo_type *t = is_operand ? shlo__otype(vc, op, k)
                                    : shlo__rtype(vc, op, k);
    if (t->kind != SHLO_TYPE_TENSOR || t->rank != 1 || t->elem != SHLO_INDEX)
      return shlo__verr(vc, op, is_operand ? "operand" : "result",
                        "%s %d must be a 1-D tensor of index, not %s",
                        is_operand ? "operand" : "result", k,
                        shlo__tstr(vc, t));
  }
  return true;
}
