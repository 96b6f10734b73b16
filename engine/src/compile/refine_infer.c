/* SPDX-License-Identifier: Apache-2.0 */
/* Shape refinement, op by op: the rule that gives each result's shape from
 * the operands' refined shapes and folded values, and the folding of
 * integer shape arithmetic (refine_int.h).
 *
 * A result whose declared type is static keeps it (the refined module is
 * verified afterwards, which catches operands that disagree with it); a
 * dynamic one takes its rule's sizes.  Ops without a rule, or whose shape
 * operands do not fold, are refused with SHLO_EUNSUPPORTED. */
#include <string.h>

#include "compile/refine_int.h"
#include "ops/ops.h"

#define RK SHLO_MAX_RANK

static const shlo_type *vt(refine_func *F, int v) { return F->types[v]; }
static const int64_t *kv(refine_func *F, int v) { return F->known[v]; }

shlo_status shlo__refine_set(refine_func *F, const shlo_op *op, int k, int r,
                             const int64_t *dims) {
  const shlo_type *d = vt(F, op->results[k]);
  if (d->kind != SHLO_TYPE_TENSOR || (d->rank >= 0 && d->rank != r))
    return shlo__refine_fail(F, op, SHLO_EINPUT, "result #%d is declared "
                             "with another rank than the %d its operands "
                             "give", k, r);
  int64_t out[RK];
  for (int i = 0; i < r; i++) {
    int64_t want = d->rank >= 0 ? d->dims[i] : SHLO_DYN;
    out[i] = want >= 0 ? want : dims[i];
    if (out[i] < 0)
      return shlo__refine_fail(F, op, SHLO_EUNSUPPORTED,
                               "cannot infer dimension %d of result #%d from "
                               "these argument shapes", i, k);
  }
  const shlo_type *t = shlo__refine_type(F, d, r, out);
  if (!t) return SHLO_ENOMEM;
  F->types[op->results[k]] = t;
  return SHLO_OK;
}

/* Result k has operand j's shape. */
static shlo_status like(refine_func *F, const shlo_op *op, int k, int j) {
  const shlo_type *t = vt(F, op->operands[j]);
  if (t->kind != SHLO_TYPE_TENSOR)
    return shlo__refine_fail(F, op, SHLO_EUNSUPPORTED, "non-tensor operand");
  return shlo__refine_set(F, op, k, t->rank, t->dims);
}

/* Elementwise: each dimension from the operands of the result's rank
 * (clamp and select may take rank-0 min/max/pred). */
static shlo_status elementwise(refine_func *F, const shlo_op *op) {
  const shlo_type *d = vt(F, op->results[0]);
  int r = d->rank;
  for (int j = 0; r < 0 && j < op->n_operands; j++)
    if (vt(F, op->operands[j])->rank > r) r = vt(F, op->operands[j])->rank;
  int64_t dims[RK];
  for (int i = 0; i < r; i++) dims[i] = SHLO_DYN;
  for (int j = 0; j < op->n_operands; j++) {
    const shlo_type *t = vt(F, op->operands[j]);
    if (t->rank != r) continue;
    for (int i = 0; i < r; i++)
      if (dims[i] < 0) dims[i] = t->dims[i];
  }
  return shlo__refine_set(F, op, 0, r, dims);
}

/* The folded values of operand j as sizes: n of them, all >= 0. */
static const int64_t *sizes(refine_func *F, const shlo_op *op, int j,
                            int *n) {
  const int64_t *v = kv(F, op->operands[j]);
  const shlo_type *t = vt(F, op->operands[j]);
  if (!v || t->rank != 1) return NULL;
  *n = (int)t->dims[0];
  return v;
}

static shlo_status unfolded(refine_func *F, const shlo_op *op,
                            const char *what) {
  return shlo__refine_fail(F, op, SHLO_EUNSUPPORTED,
                           "%s does not fold to a constant for these "
                           "argument shapes", what);
}

/* dynamic_broadcast_in_dim, dynamic_reshape, dynamic_iota: the result
 * shape is operand j's values. */
static shlo_status from_shape_operand(refine_func *F, const shlo_op *op,
                                      int j) {
  int n;
  const int64_t *v = sizes(F, op, j, &n);
  if (!v) return unfolded(F, op, "the shape operand");
  if (n > RK)
    return shlo__refine_fail(F, op, SHLO_EUNSUPPORTED, "rank %d too large", n);
  for (int i = 0; i < n; i++)
    if (v[i] < 0)
      return shlo__refine_fail(F, op, SHLO_EINPUT, "shape operand has the "
                               "negative size %lld", (long long)v[i]);
  return shlo__refine_set(F, op, 0, n, v);
}

static shlo_status reshape(refine_func *F, const shlo_op *op) {
  const shlo_type *a = vt(F, op->operands[0]), *d = vt(F, op->results[0]);
  if (d->rank < 0) return unfolded(F, op, "the result shape");
  int64_t dims[RK], prod = 1, total = shlo_type_numel(a);
  int hole = -1;
  for (int i = 0; i < d->rank; i++) {
    dims[i] = d->dims[i];
    if (dims[i] < 0) {
      if (hole >= 0) return unfolded(F, op, "the result shape");
      hole = i;
    } else {
      prod *= dims[i];
    }
  }
  if (hole >= 0) dims[hole] = prod ? total / prod : 0;
  return shlo__refine_set(F, op, 0, d->rank, dims);
}

static shlo_status concatenate(refine_func *F, const shlo_op *op) {
  const shlo_type *a = vt(F, op->operands[0]);
  int64_t d = 0, dims[RK];
  shlo_attr_get_i64(shlo_op_attr(op, "dimension"), &d);
  if (d < 0 || d >= a->rank) return unfolded(F, op, "the dimension");
  for (int i = 0; i < a->rank; i++) dims[i] = a->dims[i];
  dims[d] = 0;
  for (int j = 0; j < op->n_operands; j++)
    dims[d] += vt(F, op->operands[j])->dims[d];
  return shlo__refine_set(F, op, 0, a->rank, dims);
}

static shlo_status transpose(refine_func *F, const shlo_op *op) {
  const shlo_type *a = vt(F, op->operands[0]);
  int64_t p[RK], dims[RK];
  int n = shlo_attr_i64s(shlo_op_attr(op, "permutation"), p, RK);
  if (n != a->rank) return unfolded(F, op, "the permutation");
  for (int i = 0; i < n; i++) dims[i] = p[i] >= 0 && p[i] < n ? a->dims[p[i]] : 0;
  return shlo__refine_set(F, op, 0, n, dims);
}

/* slice (attributes) and real_dynamic_slice (folded operands 1-3):
 * ceil((limit - start) / stride) per dimension. */
static shlo_status slice_like(refine_func *F, const shlo_op *op,
                              const int64_t *s, const int64_t *l,
                              const int64_t *st, int n) {
  int64_t dims[RK];
  if (n > RK) return unfolded(F, op, "the slice bounds");
  for (int i = 0; i < n; i++) {
    if (st[i] <= 0 || l[i] < s[i])
      return shlo__refine_fail(F, op, SHLO_EINPUT, "slice bounds [%lld, "
                               "%lld) stride %lld are invalid in dimension "
                               "%d", (long long)s[i], (long long)l[i],
                               (long long)st[i], i);
    dims[i] = (l[i] - s[i] + st[i] - 1) / st[i];
  }
  return shlo__refine_set(F, op, 0, n, dims);
}

static shlo_status slice(refine_func *F, const shlo_op *op) {
  int64_t s[RK], l[RK], st[RK];
  int n = shlo_attr_i64s(shlo_op_attr(op, "start_indices"), s, RK);
  int nl = shlo_attr_i64s(shlo_op_attr(op, "limit_indices"), l, RK);
  int nt = shlo_attr_i64s(shlo_op_attr(op, "strides"), st, RK);
  if (nt < 0)
    for (nt = 0; nt < n; nt++) st[nt] = 1;
  if (n < 0 || nl != n || nt != n) return unfolded(F, op, "the slice bounds");
  return slice_like(F, op, s, l, st, n);
}

static shlo_status real_dynamic_slice(refine_func *F, const shlo_op *op) {
  int n0 = 0, n1 = 0, n2 = 0;
  const int64_t *s = sizes(F, op, 1, &n0), *l = sizes(F, op, 2, &n1),
                *st = sizes(F, op, 3, &n2);
  if (!s || !l || !st || n0 != n1 || n1 != n2)
    return unfolded(F, op, "start, limit or strides");
  return slice_like(F, op, s, l, st, n0);
}

/* pad and dynamic_pad: low + high + size + (size - 1) * interior. */
static shlo_status pad_like(refine_func *F, const shlo_op *op,
                            const int64_t *lo, const int64_t *hi,
                            const int64_t *in, int n) {
  const shlo_type *a = vt(F, op->operands[0]);
  int64_t dims[RK];
  if (n != a->rank) return unfolded(F, op, "the padding");
  for (int i = 0; i < n; i++) {
    int64_t x = a->dims[i];
    dims[i] = lo[i] + hi[i] + x + (x > 0 ? (x - 1) * in[i] : 0);
    if (dims[i] < 0)
      return shlo__refine_fail(F, op, SHLO_EINPUT, "padding gives dimension "
                               "%d the negative size %lld", i,
                               (long long)dims[i]);
  }
  return shlo__refine_set(F, op, 0, n, dims);
}

static shlo_status pad(refine_func *F, const shlo_op *op) {
  int64_t lo[RK], hi[RK], in[RK];
  int n = shlo_attr_i64s(shlo_op_attr(op, "edge_padding_low"), lo, RK);
  if (shlo_attr_i64s(shlo_op_attr(op, "edge_padding_high"), hi, RK) != n ||
      shlo_attr_i64s(shlo_op_attr(op, "interior_padding"), in, RK) != n)
    return unfolded(F, op, "the padding");
  return pad_like(F, op, lo, hi, in, n);
}

static shlo_status dynamic_pad(refine_func *F, const shlo_op *op) {
  int n0 = 0, n1 = 0, n2 = 0;
  const int64_t *lo = sizes(F, op, 2, &n0), *hi = sizes(F, op, 3, &n1),
                *in = sizes(F, op, 4, &n2);
  if (!lo || !hi || !in || n0 != n1 || n1 != n2)
    return unfolded(F, op, "the padding operands");
  return pad_like(F, op, lo, hi, in, n0);
}

static bool has(const int64_t *v, int n, int64_t x) {
  for (int i = 0; i < n; i++)
    if (v[i] == x) return true;
  return false;
}

/* dot_general: batch dims, then lhs free dims, then rhs free dims. */
static shlo_status dot_general(refine_func *F, const shlo_op *op) {
  const shlo_type *a = vt(F, op->operands[0]), *b = vt(F, op->operands[1]);
  const shlo_attr *dn = shlo_op_attr(op, "dot_dimension_numbers");
  int64_t lb[RK], rb[RK], lc[RK], rc[RK], dims[RK];
  int nlb = 0, nrb = 0, nlc = 0, nrc = 0, n = 0;
  if (op->code == SHLO_OP_DOT) { /* 1-d or 2-d: contract lhs's last dim */
    lc[nlc++] = a->rank - 1;
    rc[nrc++] = 0;
  } else {
    nlb = shlo_attr_i64s(shlo_attr_field(dn, "lhs_batching_dimensions"), lb, RK);
    nrb = shlo_attr_i64s(shlo_attr_field(dn, "rhs_batching_dimensions"), rb, RK);
    nlc = shlo_attr_i64s(shlo_attr_field(dn, "lhs_contracting_dimensions"), lc,
                         RK);
    nrc = shlo_attr_i64s(shlo_attr_field(dn, "rhs_contracting_dimensions"), rc,
                         RK);
    if (nlb < 0) nlb = 0;
    if (nrb < 0) nrb = 0;
    if (nlc < 0) nlc = 0;
    if (nrc < 0) nrc = 0;
  }
  for (int i = 0; i < nlb; i++) dims[n++] = a->dims[lb[i]];
  for (int i = 0; i < a->rank && n < RK; i++)
    if (!has(lb, nlb, i) && !has(lc, nlc, i)) dims[n++] = a->dims[i];
  for (int i = 0; i < b->rank && n < RK; i++)
    if (!has(rb, nrb, i) && !has(rc, nrc, i)) dims[n++] = b->dims[i];
  return shlo__refine_set(F, op, 0, n, dims);
}

/* reduce: each result is input 0 without the reduced dimensions. */
static shlo_status reduce(refine_func *F, const shlo_op *op) {
  const shlo_type *a = vt(F, op->operands[0]);
  int64_t rd[RK], dims[RK];
  int nd = shlo_attr_i64s(shlo_op_attr(op, "dimensions"), rd, RK), n = 0;
  if (nd < 0) return unfolded(F, op, "the dimensions");
  for (int i = 0; i < a->rank; i++)
    if (!has(rd, nd, i)) dims[n++] = a->dims[i];
  for (int k = 0; k < op->n_results; k++) {
    shlo_status st = shlo__refine_set(F, op, k, n, dims);
    if (st) return st;
  }
  return SHLO_OK;
}

/* gather, dynamic_gather: batch dims of start_indices, with the slice
 * sizes of the non-collapsed, non-batching operand dims at offset_dims. */
static shlo_status gather(refine_func *F, const shlo_op *op) {
  const shlo_type *a = vt(F, op->operands[0]), *si = vt(F, op->operands[1]);
  const shlo_attr *dn = shlo_op_attr(op, "dimension_numbers");
  int64_t off[RK], coll[RK], obat[RK], ss[RK], ivd = 0, dims[2 * RK];
  int noff = shlo_attr_i64s(shlo_attr_field(dn, "offset_dims"), off, RK);
  int ncoll = shlo_attr_i64s(shlo_attr_field(dn, "collapsed_slice_dims"), coll,
                             RK);
  int nobat = shlo_attr_i64s(shlo_attr_field(dn, "operand_batching_dims"),
                             obat, RK);
  shlo_attr_get_i64(shlo_attr_field(dn, "index_vector_dim"), &ivd);
  int nss;
  if (op->code == SHLO_OP_DYNAMIC_GATHER) {
    const int64_t *v = sizes(F, op, 2, &nss);
    if (!v) return unfolded(F, op, "slice_sizes");
    memcpy(ss, v, (size_t)(nss < RK ? nss : RK) * sizeof *ss);
  } else {
    nss = shlo_attr_i64s(shlo_op_attr(op, "slice_sizes"), ss, RK);
  }
  if (noff < 0) noff = 0;
  if (ncoll < 0) ncoll = 0;
  if (nobat < 0) nobat = 0;
  if (nss != a->rank) return unfolded(F, op, "slice_sizes");
  int64_t batch[RK], offs[RK];
  int nb = 0, no = 0, n = 0;
  for (int i = 0; i < si->rank; i++)
    if (i != ivd) batch[nb++] = si->dims[i];
  for (int i = 0; i < a->rank; i++)
    if (!has(coll, ncoll, i) && !has(obat, nobat, i)) offs[no++] = ss[i];
  for (int i = 0, bi = 0, oi = 0; i < nb + no && n < RK; i++)
    dims[n++] = has(off, noff, i) ? offs[oi++] : batch[bi++];
  return shlo__refine_set(F, op, 0, n, dims);
}

/* A list attribute of S entries, or `dflt` for each when absent. */
static bool window_list(const shlo_op *op, const char *name, int S,
                        int64_t dflt, int64_t *out) {
  int n = shlo_attr_i64s(shlo_op_attr(op, name), out, RK);
  if (n < 0)
    for (n = 0; n < S; n++) out[n] = dflt;
  return n == S;
}

/* convolution, dynamic_conv (padding from the folded operand 2). */
static shlo_status convolution(refine_func *F, const shlo_op *op) {
  const shlo_type *a = vt(F, op->operands[0]), *b = vt(F, op->operands[1]);
  const shlo_attr *d = shlo_op_attr(op, "dimension_numbers");
  if (!d || d->kind != SHLO_ATTR_CONV_DIMS || a->rank < 2)
    return unfolded(F, op, "dimension_numbers");
  int S = a->rank - 2;
  int64_t ws[RK], ld[RK], rd[RK], pad[2 * RK], bgc = 1, dims[RK];
  if (!window_list(op, "window_strides", S, 1, ws) ||
      !window_list(op, "lhs_dilation", S, 1, ld) ||
      !window_list(op, "rhs_dilation", S, 1, rd))
    return unfolded(F, op, "the window attributes");
  int np;
  const int64_t *pv = NULL;
  if (op->code == SHLO_OP_DYNAMIC_CONV) {
    pv = kv(F, op->operands[2]);
    np = pv ? (int)shlo_type_numel(vt(F, op->operands[2])) : -1;
  } else {
    np = shlo_attr_i64s(shlo_op_attr(op, "padding"), pad, 2 * RK);
    if (np < 0)
      for (np = 0; np < 2 * S; np++) pad[np] = 0;
    pv = pad;
  }
  if (!pv || np != 2 * S) return unfolded(F, op, "the padding");
  shlo_attr_get_i64(shlo_op_attr(op, "batch_group_count"), &bgc);
  if (bgc < 1) bgc = 1;
  dims[d->conv_out_batch] = a->dims[d->conv_in_batch] / bgc;
  dims[d->conv_out_feature] = b->dims[d->conv_k_out];
  for (int i = 0; i < S; i++) {
    int64_t x = a->dims[d->conv_in_spatial[i]];
    int64_t k = b->dims[d->conv_k_spatial[i]];
    int64_t padded = (x == 0 ? 0 : (x - 1) * ld[i] + 1) + pv[2 * i] +
                     pv[2 * i + 1];
    int64_t win = k == 0 ? 0 : (k - 1) * rd[i] + 1;
    dims[d->conv_out_spatial[i]] =
        padded < win || padded <= 0 ? 0 : (padded - win) / ws[i] + 1;
  }
  return shlo__refine_set(F, op, 0, a->rank, dims);
}

/* while: results carry the operands' shapes, and the body must keep them
 * (a loop that changes a shape has no static plan). */
static shlo_status while_op(refine_func *F, const shlo_op *op) {
  const shlo_block *body = op->n_regions > 1 ? op->regions[1] : NULL;
  const shlo_op *ret = body && body->n_ops ? body->ops[body->n_ops - 1]
                                           : NULL;
  for (int k = 0; k < op->n_results; k++) {
    const shlo_type *t = vt(F, op->operands[k]);
    if (ret && k < ret->n_operands &&
        !shlo_type_equal(vt(F, ret->operands[k]), t))
      return shlo__refine_fail(F, op, SHLO_EUNSUPPORTED, "the loop body "
                               "changes the shape of value #%d", k);
    F->types[op->results[k]] = t;
  }
  return SHLO_OK;
}

/* if, case: the first branch's returned shapes (the verifier checks the
 * others against them). */
static shlo_status branches(refine_func *F, const shlo_op *op) {
  const shlo_block *b = op->n_regions ? op->regions[0] : NULL;
  const shlo_op *ret = b && b->n_ops ? b->ops[b->n_ops - 1] : NULL;
  if (!ret || ret->n_operands != op->n_results)
    return unfolded(F, op, "the branch results");
  for (int k = 0; k < op->n_results; k++) {
    const shlo_type *t = vt(F, ret->operands[k]);
    if (t->kind != SHLO_TYPE_TENSOR) {
      F->types[op->results[k]] = t;
      continue;
    }
    shlo_status st = shlo__refine_set(F, op, k, t->rank, t->dims);
    if (st) return st;
  }
  return SHLO_OK;
}

/* Ops whose result k has operand k's shape (or operand `j` for all). */
static shlo_status each_like(refine_func *F, const shlo_op *op, int j) {
  for (int k = 0; k < op->n_results; k++) {
    int src = j >= 0 ? j : k;
    if (src >= op->n_operands) return unfolded(F, op, "the result shapes");
    shlo_status st = like(F, op, k, src);
    if (st) return st;
  }
  return SHLO_OK;
}

/* The op table's refine column (ops/op_facts.h) picks the rule. */
static shlo_status rule(refine_func *F, const shlo_op *op) {
  if (op->code == SHLO_OP_CUSTOM_CALL) return shlo__refine_custom_call(F, op);
  switch (shlo__op_refine((shlo_opcode)op->code)) {
  case SHLO_REFINE_ELEMENTWISE: return elementwise(F, op);
  case SHLO_REFINE_SHAPE_OPERAND1: return from_shape_operand(F, op, 1);
  case SHLO_REFINE_SHAPE_OPERAND0: return from_shape_operand(F, op, 0);
  case SHLO_REFINE_RESHAPE: return reshape(F, op);
  case SHLO_REFINE_CONCATENATE: return concatenate(F, op);
  case SHLO_REFINE_TRANSPOSE: return transpose(F, op);
  case SHLO_REFINE_SLICE: return slice(F, op);
  case SHLO_REFINE_REAL_DYNAMIC_SLICE: return real_dynamic_slice(F, op);
  case SHLO_REFINE_PAD: return pad(F, op);
  case SHLO_REFINE_DYNAMIC_PAD: return dynamic_pad(F, op);
  case SHLO_REFINE_DOT_GENERAL: return dot_general(F, op);
  case SHLO_REFINE_REDUCE: return reduce(F, op);
  case SHLO_REFINE_GATHER: return gather(F, op);
  case SHLO_REFINE_CONVOLUTION: return convolution(F, op);
  case SHLO_REFINE_WHILE: return while_op(F, op);
  case SHLO_REFINE_BRANCHES: return branches(F, op);
  case SHLO_REFINE_EACH_LIKE_ALL: return each_like(F, op, -1);
  case SHLO_REFINE_LIKE_OPERAND0: return each_like(F, op, 0);
  case SHLO_REFINE_LIKE_OPERAND1: return each_like(F, op, 1);
  case SHLO_REFINE_CALL: /* shlo__refine_infer handles it before */
  case SHLO_REFINE_NONE: break;
  }
  return shlo__refine_fail(F, op, SHLO_EUNSUPPORTED,
                           "no shape refinement rule for this op with a "
                           "dynamic result");
}

static bool results_static(refine_func *F, const shlo_op *op) {
  for (int k = 0; k < op->n_results; k++)
    if (!shlo__refine_static(vt(F, op->results[k]))) return false;
  return true;
}

shlo_status shlo__refine_infer(refine_func *F, const shlo_op *op) {
  if (shlo__op_refine((shlo_opcode)op->code) == SHLO_REFINE_CALL) {
    /* A composite runs its decomposition as a call does. */
    const char *callee = shlo_attr_get_str(shlo_op_attr(
        op, op->code == SHLO_OP_CALL ? "callee" : "decomposition"));
    if (!callee) return unfolded(F, op, "the callee");
    return shlo__refine_call(F, op, callee);
  }
  if (results_static(F, op)) return SHLO_OK;
  return rule(F, op);
}
