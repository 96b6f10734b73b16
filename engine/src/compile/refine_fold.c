/* SPDX-License-Identifier: Apache-2.0 */
/* Shape refinement: folding the integer arithmetic that computes shapes
 * (refine_int.h).  Exporters compute shape operands from
 * get_dimension_size through convert, reshape, broadcast, concatenate,
 * slice and integer arithmetic; shape_assertion predicates through
 * compare, and, or, select.  Each of those, on small static integer
 * tensors whose operands are known, gets its values recorded; anything
 * else simply stays unknown (only a shape operand that must fold makes
 * that an error, in refine_infer.c). */
#include <string.h>

#include "compile/refine_int.h"
#include "ops/ops.h"

#define RK SHLO_MAX_RANK
#define MAXK SHLO_REFINE_MAX_KNOWN

static bool int_like(const shlo_type *t) {
  if (!t || t->kind != SHLO_TYPE_TENSOR || t->quant) return false;
  shlo_elem_class c = shlo_elem_class_of(t->elem);
  return c == SHLO_CLASS_SINT || c == SHLO_CLASS_UINT || c == SHLO_CLASS_BOOL;
}

/* Row-major coordinates of flat index i in dims (rank r). */
static void unravel(int64_t i, const int64_t *dims, int r, int64_t *c) {
  for (int k = r - 1; k >= 0; k--) {
    c[k] = dims[k] ? i % dims[k] : 0;
    i = dims[k] ? i / dims[k] : 0;
  }
}

/* The flat index of coordinates c in dims, or -1 when c is outside: the
 * refined shapes are only verified after folding, so operands may not
 * yet agree with the results they fold into. */
static int64_t ravel(const int64_t *c, const int64_t *dims, int r) {
  int64_t i = 0;
  for (int k = 0; k < r; k++) {
    if (c[k] < 0 || c[k] >= dims[k]) return -1;
    i = i * dims[k] + c[k];
  }
  return i;
}

/* broadcast_in_dim / dynamic_broadcast_in_dim. */
static bool fold_broadcast(const shlo_op *op, const shlo_type *a,
                           const int64_t *x, const shlo_type *t, int64_t n,
                           int64_t *out) {
  int64_t bd[RK], c[RK], ac[RK];
  int nb = shlo_attr_i64s(shlo_op_attr(op, "broadcast_dimensions"), bd, RK);
  if (nb != a->rank) return false;
  for (int64_t i = 0; i < n; i++) {
    unravel(i, t->dims, t->rank, c);
    for (int k = 0; k < nb; k++) {
      if (bd[k] < 0 || bd[k] >= t->rank) return false;
      ac[k] = a->dims[k] == 1 ? 0 : c[bd[k]];
    }
    int64_t at = ravel(ac, a->dims, a->rank);
    if (at < 0) return false;
    out[i] = x[at];
  }
  return true;
}

static bool fold_concatenate(refine_func *F, const shlo_op *op,
                             const shlo_type *t, int64_t n, int64_t *out) {
  int64_t d = 0, c[RK];
  shlo_attr_get_i64(shlo_op_attr(op, "dimension"), &d);
  if (d < 0 || d >= t->rank) return false;
  for (int j = 0; j < op->n_operands; j++)
    if (!F->known[op->operands[j]]) return false;
  for (int64_t i = 0; i < n; i++) {
    unravel(i, t->dims, t->rank, c);
    int j = 0;
    const shlo_type *a = F->types[op->operands[0]];
    while (c[d] >= a->dims[d] && j + 1 < op->n_operands) {
      c[d] -= a->dims[d];
      a = F->types[op->operands[++j]];
    }
    int64_t at = a->rank == t->rank ? ravel(c, a->dims, a->rank) : -1;
    if (at < 0) return false;
    out[i] = F->known[op->operands[j]][at];
  }
  return true;
}

static bool fold_slice(const shlo_op *op, const shlo_type *a,
                       const int64_t *x, const shlo_type *t, int64_t n,
                       int64_t *out) {
  int64_t s[RK], st[RK], c[RK];
  int ns = shlo_attr_i64s(shlo_op_attr(op, "start_indices"), s, RK);
  int nt = shlo_attr_i64s(shlo_op_attr(op, "strides"), st, RK);
  if (ns != a->rank) return false;
  if (nt < 0)
    for (nt = 0; nt < ns; nt++) st[nt] = 1;
  if (nt != ns) return false;
  for (int64_t i = 0; i < n; i++) {
    unravel(i, t->dims, t->rank, c);
    for (int k = 0; k < ns; k++) c[k] = s[k] + c[k] * st[k];
    int64_t at = ns == t->rank ? ravel(c, a->dims, a->rank) : -1;
    if (at < 0) return false;
    out[i] = x[at];
  }
  return true;
}

static bool compare(const char *dir, int64_t a, int64_t b, int64_t *r) {
  if (!dir) return false;
  if (!strcmp(dir, "EQ")) *r = a == b;
  else if (!strcmp(dir, "NE")) *r = a != b;
  else if (!strcmp(dir, "LT")) *r = a < b;
  else if (!strcmp(dir, "LE")) *r = a <= b;
  else if (!strcmp(dir, "GT")) *r = a > b;
  else if (!strcmp(dir, "GE")) *r = a >= b;
  else return false;
  return true;
}

/* One element of an elementwise op on known operands; false when it does
 * not fold (division by zero, an op without a rule). */
static bool ew(const shlo_op *op, const int64_t *v, int64_t *r) {
  int64_t a = v[0], b = v[1];
  switch (op->code) {
  case SHLO_OP_ADD: *r = (int64_t)((uint64_t)a + (uint64_t)b); return true;
  case SHLO_OP_SUBTRACT: *r = (int64_t)((uint64_t)a - (uint64_t)b); return true;
  case SHLO_OP_MULTIPLY: *r = (int64_t)((uint64_t)a * (uint64_t)b); return true;
  case SHLO_OP_DIVIDE:
  case SHLO_OP_REMAINDER:
    if (b == 0 || (a == INT64_MIN && b == -1)) return false;
    *r = op->code == SHLO_OP_DIVIDE ? a / b : a % b;
    return true;
  case SHLO_OP_MAXIMUM: *r = a > b ? a : b; return true;
  case SHLO_OP_MINIMUM: *r = a < b ? a : b; return true;
  case SHLO_OP_AND: *r = a & b; return true;
  case SHLO_OP_OR: *r = a | b; return true;
  case SHLO_OP_XOR: *r = a ^ b; return true;
  case SHLO_OP_NEGATE: *r = (int64_t)(0 - (uint64_t)a); return true;
  case SHLO_OP_ABS: *r = a < 0 ? (int64_t)(0 - (uint64_t)a) : a; return true;
  case SHLO_OP_SIGN: *r = (a > 0) - (a < 0); return true;
  case SHLO_OP_NOT: *r = ~a; return true;
  case SHLO_OP_CONVERT:
  case SHLO_OP_RESHAPE: *r = a; return true;
  case SHLO_OP_SELECT: *r = a ? b : v[2]; return true;
  case SHLO_OP_CLAMP: *r = b < a ? a : b > v[2] ? v[2] : b; return true;
  case SHLO_OP_COMPARE:
    return compare(shlo_attr_get_str(shlo_op_attr(op, "comparison_direction")),
                   a, b, r);
  default: return false;
  }
}

/* Elementwise on known operands of n elements or one (rank-0 operands of
 * select and clamp broadcast). */
static bool fold_elementwise(refine_func *F, const shlo_op *op, int64_t n,
                             int64_t *out) {
  if (op->n_operands > 3) return false;
  const int64_t *x[3];
  int64_t cnt[3];
  for (int j = 0; j < op->n_operands; j++) {
    x[j] = F->known[op->operands[j]];
    cnt[j] = shlo_type_numel(F->types[op->operands[j]]);
    if (!x[j] || (cnt[j] != n && cnt[j] != 1)) return false;
  }
  for (int64_t i = 0; i < n; i++) {
    int64_t v[3] = {0, 0, 0};
    for (int j = 0; j < op->n_operands; j++) v[j] = x[j][cnt[j] == 1 ? 0 : i];
    if (!ew(op, v, &out[i])) return false;
  }
  return true;
}

static bool fold_one(refine_func *F, const shlo_op *op, const shlo_type *t,
                     int64_t n, int64_t *out) {
  const shlo_type *a = op->n_operands ? F->types[op->operands[0]] : NULL;
  const int64_t *x = op->n_operands ? F->known[op->operands[0]] : NULL;
  switch (op->code) {
  case SHLO_OP_CONSTANT: {
    int got = shlo_attr_i64s(shlo_op_attr(op, "value"), out, (int)n);
    if (got == 1)
      for (int64_t i = 1; i < n; i++) out[i] = out[0];
    return got == n || got == 1;
  }
  case SHLO_OP_GET_DIMENSION_SIZE: {
    int64_t d = 0;
    shlo_attr_get_i64(shlo_op_attr(op, "dimension"), &d);
    if (d < 0 || d >= a->rank || a->dims[d] < 0) return false;
    out[0] = a->dims[d];
    return true;
  }
  case SHLO_OP_BROADCAST_IN_DIM:
  case SHLO_OP_DYNAMIC_BROADCAST_IN_DIM:
    return x && fold_broadcast(op, a, x, t, n, out);
  case SHLO_OP_CONCATENATE: return fold_concatenate(F, op, t, n, out);
  case SHLO_OP_SLICE: return x && fold_slice(op, a, x, t, n, out);
  case SHLO_OP_DYNAMIC_RESHAPE:
    if (!x || shlo_type_numel(a) != n) return false;
    memcpy(out, x, (size_t)n * sizeof *out);
    return true;
  default:
    return fold_elementwise(F, op, n, out);
  }
}

shlo_status shlo__refine_fold(refine_func *F, const shlo_op *op) {
  if (op->n_results != 1 || op->n_regions) return SHLO_OK;
  const shlo_type *t = F->types[op->results[0]];
  if (!int_like(t) || !shlo__refine_static(t)) return SHLO_OK;
  int64_t n = shlo_type_numel(t);
  if (n < 0 || n > MAXK) return SHLO_OK;
  for (int j = 0; j < op->n_operands; j++) /* operands too must be small */
    if (!shlo__refine_static(F->types[op->operands[j]])) return SHLO_OK;
  int64_t buf[MAXK];
  if (!fold_one(F, op, t, n, buf)) return SHLO_OK;
  int64_t *v = shlo__arena_alloc(F->R->a, (size_t)(n + 1) * sizeof *v);
  if (!v) return SHLO_ENOMEM;
  for (int64_t i = 0; i < n; i++) v[i] = shlo_int_wrap(t->elem, buf[i]);
  F->known[op->results[0]] = v;
  return SHLO_OK;
}
