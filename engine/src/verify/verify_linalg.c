/* SPDX-License-Identifier: Apache-2.0 */
/* Verifiers of the linear-algebra family: dot, dot_general, convolution,
 * fft, triangular_solve, cholesky and the three batch_norm ops. */
#include <stdio.h>
#include <string.h>

#include "core/value.h"
#include "verify/verify_int.h"

#define R SHLO_MAX_RANK

static bool contains(const int64_t *v, int n, int64_t x) {
  for (int i = 0; i < n; i++)
    if (v[i] == x) return true;
  return false;
}

/* precision_config has 0 or 2 entries (dot_general C11, convolution C24). */
static bool precision_ok(shlo__vctx *vc, const shlo_op *op, const char *label) {
  const shlo_attr *p = shlo_op_attr(op, "precision_config");
  if (!p || p->kind != SHLO_ATTR_ARRAY) return true;
  if (p->n > 2)
    return shlo__verr(vc, op, label, "precision_config must be empty or have "
                      "<= 2 elements, has %d", p->n);
  for (int i = 0; i < p->n; i++) {
    const shlo_attr *e = p->items[i];
    const char *s = e->kind == SHLO_ATTR_ENUM ? e->str : NULL;
    if (!s || (strcmp(s, "DEFAULT") && strcmp(s, "HIGH") &&
               strcmp(s, "HIGHEST")))
      return shlo__verr(vc, op, label, "precision_config element #%d must be "
                        "a precision DEFAULT, HIGH or HIGHEST, got %s%s%s", i,
                        e->kind == SHLO_ATTR_STRING ? "\"" : "",
                        shlo_attr_get_str(e) ? shlo_attr_get_str(e) : "?",
                        e->kind == SHLO_ATTR_STRING ? "\"" : "");
  }
  return true;
}

/* dot: lhs and rhs are rank 1 or 2; lhs's last dimension matches rhs's
 * first; the result shape is lhs's free dims then rhs's. */
bool shlo__verify_dot(shlo__vctx *vc, const shlo_op *op) {
  if (op->n_operands != 2 || op->n_results != 1)
    return shlo__verr(vc, op, NULL, "expects lhs, rhs and one result");
  const shlo_type *a = shlo__otype(vc, op, 0), *b = shlo__otype(vc, op, 1),
                  *r = shlo__rtype(vc, op, 0);
  if (a->rank < 1 || a->rank > 2 || b->rank < 1 || b->rank > 2)
    return shlo__verr(vc, op, "C1", "expects lhs %s and rhs %s of rank 1 or "
                      "2", shlo__tstr(vc, a), shlo__tstr(vc, b));
  if (!shlo__dim_eq(a->dims[a->rank - 1], b->dims[0]))
    return shlo__verr(vc, op, "C2", "lhs %s and rhs %s contracting dimension "
                      "sizes must match", shlo__tstr(vc, a),
                      shlo__tstr(vc, b));
  if (!precision_ok(vc, op, "C3")) return false;
  int64_t want[2];
  int n = 0;
  if (a->rank == 2) want[n++] = a->dims[0];
  if (b->rank == 2) want[n++] = b->dims[1];
  bool ok = r->rank == n;
  for (int i = 0; ok && i < n; i++) ok = shlo__dim_eq(r->dims[i], want[i]);
  if (!ok)
    return shlo__verr(vc, op, "C4", "result %s must have shape %s",
                      shlo__tstr(vc, r), shlo__dstr(vc, want, n));
  return true;
}

static bool dims_in(shlo__vctx *vc, const shlo_op *op, const char *label,
                    const char *name, const int64_t *v, int n, int rank) {
  for (int i = 0; i < n; i++)
    if (v[i] < 0 || v[i] >= rank)
      return shlo__verr(vc, op, label, "%s %s: dimension %lld is out of range "
                        "[0, %d)", name, shlo__dstr(vc, v, n),
                        (long long)v[i], rank);
  return true;
}


static bool quant_zero_points_zero(const shlo_quant *q) {
  for (int i = 0; i < q->n; i++)
    if (q->zero_points[i] != 0) return false;
  return true;
}

/* The quantization constraints dot_general (C14, C17-C20) and convolution
 * (C28, C31-C34) share; labels[] names them in that order: rhs is
 * quantized and lhs and result are both quantized or neither; with a
 * quantized lhs the storage types of lhs and rhs agree, the expressed
 * types of all three agree and a per-tensor rhs means a per-tensor result;
 * with a float lhs, lhs, rhs's expressed type and result agree. */
static bool quant_common(shlo__vctx *vc, const shlo_op *op,
                         const char *const labels[5], const shlo_type *a,
                         const shlo_type *b, const shlo_type *r) {
  if (!b->quant || !a->quant != !r->quant)
    return shlo__verr(vc, op, labels[0], "rhs %s must be quantized, and lhs "
                      "%s and result %s both quantized or both not",
                      shlo__tstr(vc, b), shlo__tstr(vc, a), shlo__tstr(vc, r));
  if (a->quant) {
    if (a->quant->storage != b->quant->storage)
      return shlo__verr(vc, op, labels[1], "lhs %s and rhs %s must have the "
                        "same quantization storage type", shlo__tstr(vc, a),
                        shlo__tstr(vc, b));
    if (a->quant->expressed != b->quant->expressed ||
        a->quant->expressed != r->quant->expressed)
      return shlo__verr(vc, op, labels[2], "lhs %s, rhs %s and result %s "
                        "must have the same quantization expressed type",
                        shlo__tstr(vc, a), shlo__tstr(vc, b),
                        shlo__tstr(vc, r));
    if (!b->quant->per_axis && r->quant->per_axis)
      return shlo__verr(vc, op, labels[3], "rhs %s is per-tensor quantized so "
                        "result %s must be too", shlo__tstr(vc, b),
                        shlo__tstr(vc, r));
  } else if (a->elem != b->quant->expressed || a->elem != r->elem) {
    return shlo__verr(vc, op, labels[4], "lhs %s, the expressed type of rhs "
                      "%s and result %s must have the same element type",
                      shlo__tstr(vc, a), shlo__tstr(vc, b), shlo__tstr(vc, r));
  }
  return true;
}

/* dot_general's batching and contracting dims per side. */
typedef struct vdot_dims {
  int64_t lb[R], rb[R], lc[R], rc[R];
  int nlb, nrb, nlc, nrc;
} vdot_dims;

/* Read the dimension numbers and check C1-C10 against lhs a and rhs b. */
static bool vdot_dims_ok(shlo__vctx *vc, const shlo_op *op,
                         const shlo_type *a, const shlo_type *b,
                         vdot_dims *d) {
  const shlo_attr *dn = shlo_op_attr(op, "dot_dimension_numbers");
  int64_t *lb = d->lb, *rb = d->rb, *lc = d->lc, *rc = d->rc;
  int nlb = d->nlb = shlo__field_ints(dn, "lhs_batching_dimensions", lb, R);
  int nrb = d->nrb = shlo__field_ints(dn, "rhs_batching_dimensions", rb, R);
  int nlc = d->nlc = shlo__field_ints(dn, "lhs_contracting_dimensions", lc, R);
  int nrc = d->nrc = shlo__field_ints(dn, "rhs_contracting_dimensions", rc, R);
  if (nlb < 0 || nrb < 0 || nlc < 0 || nrc < 0 || nlb > R || nrb > R ||
      nlc > R || nrc > R)
    return shlo__verr(vc, op, NULL, "malformed dot_dimension_numbers");
  if (nlb != nrb)
    return shlo__verr(vc, op, "C1", "lhs_batching_dimensions %s and "
                      "rhs_batching_dimensions %s must have the same size",
                      shlo__dstr(vc, lb, nlb), shlo__dstr(vc, rb, nrb));
  if (nlc != nrc)
    return shlo__verr(vc, op, "C2", "lhs_contracting_dimensions %s and "
                      "rhs_contracting_dimensions %s must have the same size",
                      shlo__dstr(vc, lc, nlc), shlo__dstr(vc, rc, nrc));
  int64_t all[2 * R], dup;
  memcpy(all, lb, (size_t)nlb * sizeof *all);
  memcpy(all + nlb, lc, (size_t)nlc * sizeof *all);
  if (shlo__has_dups(all, nlb + nlc, &dup))
    return shlo__verr(vc, op, "C3", "lhs batching and contracting dimensions "
                      "repeat dimension %lld", (long long)dup);
  memcpy(all, rb, (size_t)nrb * sizeof *all);
  memcpy(all + nrb, rc, (size_t)nrc * sizeof *all);
  if (shlo__has_dups(all, nrb + nrc, &dup))
    return shlo__verr(vc, op, "C4", "rhs batching and contracting dimensions "
                      "repeat dimension %lld", (long long)dup);
  if (!dims_in(vc, op, "C5", "lhs_batching_dimensions", lb, nlb, a->rank) ||
      !dims_in(vc, op, "C6", "lhs_contracting_dimensions", lc, nlc, a->rank) ||
      !dims_in(vc, op, "C7", "rhs_batching_dimensions", rb, nrb, b->rank) ||
      !dims_in(vc, op, "C8", "rhs_contracting_dimensions", rc, nrc, b->rank))
    return false;
  for (int i = 0; i < nlb; i++)
    if (!shlo__dim_eq(a->dims[lb[i]], b->dims[rb[i]]))
      return shlo__verr(vc, op, "C9", "lhs batching dimension %lld has size "
                        "%lld but rhs batching dimension %lld has size %lld",
                        (long long)lb[i], (long long)a->dims[lb[i]],
                        (long long)rb[i], (long long)b->dims[rb[i]]);
  for (int i = 0; i < nlc; i++)
    if (!shlo__dim_eq(a->dims[lc[i]], b->dims[rc[i]]))
      return shlo__verr(vc, op, "C10", "lhs contracting dimension %lld has "
                        "size %lld but rhs contracting dimension %lld has "
                        "size %lld", (long long)lc[i],
                        (long long)a->dims[lc[i]], (long long)rc[i],
                        (long long)b->dims[rc[i]]);
  return true;
}

/* C21-C22: an algorithm's counts are positive and precision_config is
 * DEFAULT with it. */
static bool vdot_algorithm_ok(shlo__vctx *vc, const shlo_op *op) {
  const shlo_attr *alg = shlo_op_attr(op, "algorithm");
  if (!alg || alg->kind != SHLO_ATTR_STRUCT) return true;
  static const char *counts[] = {"lhs_component_count",
                                 "rhs_component_count",
                                 "num_primitive_operations"};
  for (int i = 0; i < 3; i++) {
    int64_t v = 1;
    shlo_attr_get_i64(shlo_attr_field(alg, counts[i]), &v);
    if (v <= 0)
      return shlo__verr(vc, op, "C22", "algorithm %s must be positive, got "
                        "%lld", counts[i], (long long)v);
  }
  const shlo_attr *p = shlo_op_attr(op, "precision_config");
  if (p && p->kind == SHLO_ATTR_ARRAY)
    for (int i = 0; i < p->n; i++) {
      const char *s = shlo_attr_get_str(p->items[i]);
      if (s && strcmp(s, "DEFAULT"))
        return shlo__verr(vc, op, "C21", "precision_config must be DEFAULT "
                          "when algorithm is set, got %s", s);
    }
  return true;
}

/* C14-C20 for quantized operands or result. */
static bool vdot_quant_ok(shlo__vctx *vc, const shlo_op *op,
                          const shlo_type *a, const shlo_type *b,
                          const shlo_type *r, const vdot_dims *d) {
  if (!a->quant && !b->quant && !r->quant) return true;
  static const char *const l[5] = {"C14", "C17", "C18", "C19", "C20"};
  if (!b->quant || !a->quant != !r->quant)
    return quant_common(vc, op, l, a, b, r);
  if (!quant_zero_points_zero(b->quant))
    return shlo__verr(vc, op, "C15", "rhs %s must have zero points 0",
                      shlo__tstr(vc, b));
  if (b->quant->per_axis && contains(d->rc, d->nrc, b->quant->axis))
    return shlo__verr(vc, op, "C16", "quantization dimension %d of rhs %s "
                      "must not be a contracting dimension %s",
                      b->quant->axis, shlo__tstr(vc, b),
                      shlo__dstr(vc, d->rc, d->nrc));
  return quant_common(vc, op, l, a, b, r);
}

/* C12: the result is batch dims, lhs free dims, rhs free dims. */
static bool vdot_result_ok(shlo__vctx *vc, const shlo_op *op,
                           const shlo_type *a, const shlo_type *b,
                           const shlo_type *r, const vdot_dims *d) {
  int64_t want[2 * R];
  int n = 0;
  for (int i = 0; i < d->nlb; i++) want[n++] = a->dims[d->lb[i]];
  for (int i = 0; i < a->rank; i++)
    if (!contains(d->lb, d->nlb, i) && !contains(d->lc, d->nlc, i))
      want[n++] = a->dims[i];
  for (int i = 0; i < b->rank; i++)
    if (!contains(d->rb, d->nrb, i) && !contains(d->rc, d->nrc, i))
      want[n++] = b->dims[i];
  bool ok = r->rank == n;
  for (int i = 0; ok && i < n; i++) ok = shlo__dim_eq(r->dims[i], want[i]);
  if (!ok)
    return shlo__verr(vc, op, "C12", "result %s must have shape %s",
                      shlo__tstr(vc, r), shlo__dstr(vc, want, n));
  return true;
}

/* dot_general: C1/C2 batching and contracting dims come in pairs; C3/C4
 * unique per side; C5-C8 within rank; C9 batch sizes agree; C10
 * contracting sizes agree; C11 precision_config; C12 result shape is batch
 * dims, lhs free dims, rhs free dims; algorithm counts are positive and
 * precision DEFAULT with an algorithm. */
bool shlo__verify_dot_general(shlo__vctx *vc, const shlo_op *op) {
  if (op->n_operands != 2 || op->n_results != 1)
    return shlo__verr(vc, op, NULL, "expects lhs, rhs and one result");
  const shlo_type *a = shlo__otype(vc, op, 0), *b = shlo__otype(vc, op, 1),
                  *r = shlo__rtype(vc, op, 0);
  if (shlo__is_per_axis(a))
    return shlo__verr(vc, op, "C13", "lhs %s must not be per-axis quantized",
                      shlo__tstr(vc, a));
  vdot_dims d;
  return vdot_dims_ok(vc, op, a, b, &d) && precision_ok(vc, op, "C11") &&
         vdot_algorithm_ok(vc, op) && vdot_quant_ok(vc, op, a, b, r, &d) &&
         vdot_result_ok(vc, op, a, b, r, &d);
}

static int window_list(const shlo_op *op, const char *name, int n,
                       int64_t def, int64_t *out) {
  int k = shlo__attr_ints(op, name, out, R);
  if (k < 0) {
    for (int i = 0; i < n; i++) out[i] = def;
    return n;
  }
  return k;
}

/* A per-spatial-dimension list of S entries (default def) whose entries
 * must all be positive: C-labels count_label (size) and pos_label. */
static bool positive_list(shlo__vctx *vc, const shlo_op *op,
                          const char *name, const char *count_label,
                          const char *pos_label, int S, int64_t *out) {
  int n;
  if ((n = window_list(op, name, S, 1, out)) != S)
    return shlo__verr(vc, op, count_label, "%s must have %d entries, has %d",
                      name, S, n);
  for (int i = 0; i < S; i++)
    if (out[i] <= 0)
      return shlo__verr(vc, op, pos_label, "%s %s must be positive", name,
                        shlo__dstr(vc, out, S));
  return true;
}

/* The window attributes of a convolution with S spatial dims. */
typedef struct vconv_window {
  int64_t ws[R], ld[R], rd[R], lo[R], hi[R], rev[R];
} vconv_window;

/* C4: padding of shape [S, 2] into w->lo and w->hi (zero when absent). */
static bool vconv_padding_ok(shlo__vctx *vc, const shlo_op *op, int S,
                             vconv_window *w) {
  const shlo_attr *pad = shlo_op_attr(op, "padding");
  for (int i = 0; i < S; i++) w->lo[i] = w->hi[i] = 0;
  if (!pad) return true;
  int64_t v[2 * R + 2];
  int k = shlo_attr_i64s(pad, v, 2 * R + 2);
  bool shape_ok = k == 2 * S;
  if (pad->kind == SHLO_ATTR_DENSE)
    shape_ok = shape_ok && pad->dense->rank == 2 && pad->dense->dims[1] == 2;
  if (!shape_ok)
    return shlo__verr(vc, op, "C4", "padding must have shape [%d, 2]", S);
  for (int i = 0; i < S; i++) {
    w->lo[i] = v[2 * i];
    w->hi[i] = v[2 * i + 1];
  }
  return true;
}

/* C2-C9: strides, padding, dilations and window_reversal. */
static bool vconv_window_ok(shlo__vctx *vc, const shlo_op *op, int S,
                            vconv_window *w) {
  int n;
  if (!positive_list(vc, op, "window_strides", "C2", "C3", S, w->ws) ||
      !vconv_padding_ok(vc, op, S, w) ||
      !positive_list(vc, op, "lhs_dilation", "C5", "C6", S, w->ld) ||
      !positive_list(vc, op, "rhs_dilation", "C7", "C8", S, w->rd))
    return false;
  if ((n = window_list(op, "window_reversal", S, 0, w->rev)) != S)
    return shlo__verr(vc, op, "C9", "window_reversal must have %d entries, "
                      "has %d", S, n);
  return true;
}

/* C21-C23: the group counts are positive and one of them is 1. */
static bool vconv_groups_ok(shlo__vctx *vc, const shlo_op *op, int64_t *fgc,
                            int64_t *bgc) {
  *fgc = *bgc = 1;
  shlo_attr_get_i64(shlo_op_attr(op, "feature_group_count"), fgc);
  shlo_attr_get_i64(shlo_op_attr(op, "batch_group_count"), bgc);
  if (*fgc <= 0)
    return shlo__verr(vc, op, "C21", "feature_group_count must be positive, "
                      "got %lld", (long long)*fgc);
  if (*bgc <= 0)
    return shlo__verr(vc, op, "C22", "batch_group_count must be positive, "
                      "got %lld", (long long)*bgc);
  if (*fgc != 1 && *bgc != 1)
    return shlo__verr(vc, op, "C23", "feature_group_count (%lld) or "
                      "batch_group_count (%lld) must be 1", (long long)*fgc,
                      (long long)*bgc);
  return true;
}

/* C12, C13, C18, C20: the dimension numbers, as [batch, feature,
 * spatial...] for input (in), kernel ([in, out, spatial...], kd) and
 * output (od), each unique and within rank N. */
static bool vconv_dims_ok(shlo__vctx *vc, const shlo_op *op,
                          const shlo_attr *d, int N, int64_t *in,
                          int64_t *kd, int64_t *od) {
  int S = N - 2;
  int64_t dup;
  if (d->conv_n_spatial != S)
    return shlo__verr(vc, op, "C12", "dimension_numbers have %d spatial "
                      "dimensions but the operands have %d",
                      d->conv_n_spatial, S);
  /* The raw form's kernel and output lists of another length than the
   * input's (marked by the parser with -1 / -2). */
  for (int i = 0; i <= S && i < R; i++) {
    bool pad = i < S, extra = i == S;
    if ((pad && d->conv_k_spatial[i] == -1) ||
        (extra && d->conv_k_spatial[i] == -2))
      return shlo__verr(vc, op, "C17", "kernel_spatial_dimensions must have "
                        "%d entries", S);
    if ((pad && d->conv_out_spatial[i] == -1) ||
        (extra && d->conv_out_spatial[i] == -2))
      return shlo__verr(vc, op, "C19", "output_spatial_dimensions must have "
                        "%d entries", S);
  }
  in[0] = d->conv_in_batch;
  in[1] = d->conv_in_feature;
  kd[0] = d->conv_k_in;
  kd[1] = d->conv_k_out;
  od[0] = d->conv_out_batch;
  od[1] = d->conv_out_feature;
  for (int i = 0; i < S; i++) {
    in[2 + i] = d->conv_in_spatial[i];
    kd[2 + i] = d->conv_k_spatial[i];
    od[2 + i] = d->conv_out_spatial[i];
  }
  if (shlo__has_dups(in, N, &dup) || !dims_in(vc, op, "C13", "input dims",
                                              in, N, N))
    return shlo__verr(vc, op, "C13", "input dimension numbers %s must be "
                      "unique and within rank %d", shlo__dstr(vc, in, N), N);
  if (shlo__has_dups(kd, N, &dup) || !dims_in(vc, op, "C18", "kernel dims",
                                              kd, N, N))
    return shlo__verr(vc, op, "C18", "kernel dimension numbers %s must be "
                      "unique and within rank %d", shlo__dstr(vc, kd, N), N);
  if (shlo__has_dups(od, N, &dup) || !dims_in(vc, op, "C20", "output dims",
                                              od, N, N))
    return shlo__verr(vc, op, "C20", "output dimension numbers %s must be "
                      "unique and within rank %d", shlo__dstr(vc, od, N), N);
  return true;
}

/* C10, C11, C14-C16: batch and feature sizes against the group counts. */
static bool vconv_features_ok(shlo__vctx *vc, const shlo_op *op,
                              int64_t batch, int64_t feat, int64_t kin,
                              int64_t kout, int64_t fgc, int64_t bgc) {
  /* A dynamic size (-1) satisfies every divisibility constraint. */
  if (batch >= 0 && batch % bgc)
    return shlo__verr(vc, op, "C10", "input batch dimension size %lld must be "
                      "divisible by batch_group_count %lld", (long long)batch,
                      (long long)bgc);
  if (feat >= 0 && feat % fgc)
    return shlo__verr(vc, op, "C11", "input feature dimension size %lld must "
                      "be divisible by feature_group_count %lld",
                      (long long)feat, (long long)fgc);
  if (kin >= 0 && feat >= 0 && kin != feat / fgc)
    return shlo__verr(vc, op, "C14", "kernel input feature dimension size "
                      "%lld must be input features %lld / "
                      "feature_group_count %lld", (long long)kin,
                      (long long)feat, (long long)fgc);
  if (kout >= 0 && kout % bgc)
    return shlo__verr(vc, op, "C15", "kernel output feature dimension size "
                      "%lld must be divisible by batch_group_count %lld",
                      (long long)kout, (long long)bgc);
  if (kout >= 0 && kout % fgc)
    return shlo__verr(vc, op, "C16", "kernel output feature dimension size "
                      "%lld must be divisible by feature_group_count %lld",
                      (long long)kout, (long long)fgc);
  return true;
}

/* C28-C34 for quantized operands or result; kout_dim and out_feat are the
 * kernel output and result feature dimensions. */
static bool vconv_quant_ok(shlo__vctx *vc, const shlo_op *op,
                           const shlo_type *a, const shlo_type *b,
                           const shlo_type *r, int64_t kout_dim,
                           int64_t out_feat) {
  if (!a->quant && !b->quant && !r->quant) return true;
  static const char *const l[5] = {"C28", "C31", "C32", "C33", "C34"};
  if (!b->quant || !a->quant != !r->quant)
    return quant_common(vc, op, l, a, b, r);
  if (b->quant->per_axis && b->quant->axis != kout_dim)
    return shlo__verr(vc, op, "C29", "quantization dimension %d of rhs %s "
                      "must be kernel_output_feature_dimension %lld",
                      b->quant->axis, shlo__tstr(vc, b), (long long)kout_dim);
  if (r->quant && r->quant->per_axis && r->quant->axis != out_feat)
    return shlo__verr(vc, op, "C30", "quantization dimension %d of result "
                      "%s must be output_feature_dimension %lld",
                      r->quant->axis, shlo__tstr(vc, r), (long long)out_feat);
  return quant_common(vc, op, l, a, b, r);
}

/* C25: the result shape, from the dilated, padded input and window. */
static bool vconv_result_ok(shlo__vctx *vc, const shlo_op *op,
                            const shlo_type *a, const shlo_type *b,
                            const shlo_type *r, const vconv_window *w,
                            const int64_t *in, const int64_t *kd,
                            const int64_t *od, int64_t bgc) {
  int N = a->rank, S = N - 2;
  int64_t want[R];
  want[od[0]] = a->dims[in[0]] < 0 ? SHLO_DYN : a->dims[in[0]] / bgc;
  want[od[1]] = b->dims[kd[1]];
  for (int i = 0; i < S; i++) {
    int64_t x = a->dims[in[2 + i]], k = b->dims[kd[2 + i]];
    if (x < 0 || k < 0) { /* a dynamic window or input: any size */
      want[od[2 + i]] = SHLO_DYN;
      continue;
    }
    int64_t base, padded, win;
    if (!shlo__dilate(x, w->ld[i], &base) ||
        !shlo__add3(base, w->lo[i], w->hi[i], &padded) ||
        !shlo__dilate(k, w->rd[i], &win))
      return shlo__verr(vc, op, "C25", "spatial dimension %d: the padded, "
                        "dilated size or window overflows 64-bit integers",
                        i);
    want[od[2 + i]] = padded < win || padded <= 0
                          ? 0 : (padded - win) / w->ws[i] + 1;
  }
  bool ok = r->rank == N;
  for (int i = 0; ok && i < N; i++) ok = shlo__dim_eq(r->dims[i], want[i]);
  if (!ok)
    return shlo__verr(vc, op, "C25", "result %s must have shape %s",
                      shlo__tstr(vc, r), shlo__dstr(vc, want, N));
  return true;
}

/* convolution: C1 rank(lhs) = rank(rhs) = N; C2/C3 window_strides; C4
 * padding [N-2, 2]; C5/C6 lhs_dilation; C7/C8 rhs_dilation; C9
 * window_reversal; C10 batch divisible by batch_group_count; C11 input
 * features by feature_group_count; C12-C20 dimension numbers complete and
 * unique; C14 kernel input features = input features / groups; C15/C16
 * kernel output features divisible by the group counts; C21/C22 group
 * counts positive; C23 one of them is 1; C24 precision_config; C25 the
 * result shape; C26 its rank; C27 unquantized operands share the element
 * type; C28-C34 quantization. */
bool shlo__verify_convolution(shlo__vctx *vc, const shlo_op *op) {
  if (op->n_operands < 2 || op->n_results != 1)
    return shlo__verr(vc, op, NULL, "expects lhs, rhs and one result");
  const shlo_type *a = shlo__otype(vc, op, 0), *b = shlo__otype(vc, op, 1),
                  *r = shlo__rtype(vc, op, 0);
  int N = a->rank, S = N - 2;
  if (b->rank != N)
    return shlo__verr(vc, op, "C1", "lhs %s and rhs %s must have the same "
                      "rank", shlo__tstr(vc, a), shlo__tstr(vc, b));
  if (r->rank >= 0 && r->rank != N)
    return shlo__verr(vc, op, "C26", "result %s must have rank %d, the "
                      "operands'", shlo__tstr(vc, r), N);
  if (!a->quant && !b->quant && !r->quant && a->elem != b->elem)
    return shlo__verr(vc, op, "C27", "lhs %s and rhs %s must have the same "
                      "element type", shlo__tstr(vc, a), shlo__tstr(vc, b));
  if (N < 2)
    return shlo__verr(vc, op, "C1", "lhs %s must have rank >= 2",
                      shlo__tstr(vc, a));
  vconv_window w;
  int64_t fgc, bgc;
  if (!vconv_window_ok(vc, op, S, &w) || !vconv_groups_ok(vc, op, &fgc, &bgc))
    return false;
  const shlo_attr *d = shlo_op_attr(op, "dimension_numbers");
  if (!d || d->kind != SHLO_ATTR_CONV_DIMS) return precision_ok(vc, op, "C24");
  int64_t in[R], kd[R], od[R];
  if (!vconv_dims_ok(vc, op, d, N, in, kd, od) ||
      !vconv_features_ok(vc, op, a->dims[in[0]], a->dims[in[1]],
                         b->dims[kd[0]], b->dims[kd[1]], fgc, bgc) ||
      !precision_ok(vc, op, "C24") ||
      !vconv_quant_ok(vc, op, a, b, r, kd[1], od[1]))
    return false;
  if (op->code != SHLO_OP_CONVOLUTION) return true;
  return vconv_result_ok(vc, op, a, b, r, &w, in, kd, od, bgc);
}

/* fft: C1 1 <= size(fft_length) <= 3; C2 element types by fft_type (RFFT
 * takes f32/f64, the others complex); C3 rank(operand) >= size(fft_length);
 * C4 the trailing dims match fft_length (IRFFT: the last is
 * fft_length[-1]/2+1) and the result's trailing dims follow. */
bool shlo__verify_fft(shlo__vctx *vc, const shlo_op *op) {
  if (op->n_operands != 1 || op->n_results != 1)
    return shlo__verr(vc, op, NULL, "expects one operand and one result");
  const shlo_type *a = shlo__otype(vc, op, 0), *r = shlo__rtype(vc, op, 0);
  const char *ty = shlo_attr_get_str(shlo_op_attr(op, "fft_type"));
  if (!ty) ty = "FFT";
  int64_t L[R];
  int n = shlo__attr_ints(op, "fft_length", L, R);
  if (n < 1 || n > 3)
    return shlo__verr(vc, op, "C1", "fft_length must have 1 to 3 entries, "
                      "has %d", n);
  bool rfft = !strcmp(ty, "RFFT"), irfft = !strcmp(ty, "IRFFT");
  if (rfft) {
    if (a->quant || (a->elem != SHLO_F32 && a->elem != SHLO_F64))
      return shlo__verr(vc, op, "C2", "RFFT requires an f32 or f64 operand, "
                        "got %s", shlo__tstr(vc, a));
  } else if (!shlo__is_complex(a)) {
    return shlo__verr(vc, op, "C2", "%s takes a complex operand, got %s", ty,
                      shlo__tstr(vc, a));
  }
  if (a->rank < n)
    return shlo__verr(vc, op, "C3", "operand %s has rank below the fft rank "
                      "%d", shlo__tstr(vc, a), n);
  int off = a->rank - n;
  for (int i = 0; i < n; i++) {
    int64_t want = L[i];
    if (irfft && i == n - 1) want = L[i] / 2 + 1;
    if (!shlo__dim_eq(a->dims[off + i], want))
      return shlo__verr(vc, op, "C4", "%s operand %s: dimension %d must be "
                        "%lld for fft_length %s", ty, shlo__tstr(vc, a),
                        off + i, (long long)want, shlo__dstr(vc, L, n));
  }
  int64_t want[R];
  for (int i = 0; i < a->rank; i++) want[i] = a->dims[i];
  if (rfft) want[a->rank - 1] = L[n - 1] / 2 + 1;
  if (irfft) want[a->rank - 1] = L[n - 1];
  bool ok = r->rank == a->rank;
  for (int i = 0; ok && i < a->rank; i++) ok = shlo__dim_eq(r->dims[i], want[i]);
  shlo_elem_type we = rfft    ? (a->elem == SHLO_F32 ? SHLO_C64 : SHLO_C128)
                      : irfft ? shlo_elem_complex_part(a->elem)
                              : a->elem;
  if (!ok || r->quant || r->elem != we)
    return shlo__verr(vc, op, "C5", "result %s must be tensor of shape %s "
                      "and element type %s", shlo__tstr(vc, r),
                      shlo__dstr(vc, want, a->rank), shlo_elem_name(we));
  return true;
}

/* triangular_solve: C1 a has rank >= 2, square minor dims; C2 a and b have
 * equal rank; C3 the shared dimension agrees (b's rows with left_side,
 * else columns); C4 batch dims agree; C5 the result has b's type. */
bool shlo__verify_triangular_solve(shlo__vctx *vc, const shlo_op *op) {
  if (op->n_operands != 2 || op->n_results != 1)
    return shlo__verr(vc, op, NULL, "expects a, b and one result");
  const shlo_type *a = shlo__otype(vc, op, 0), *b = shlo__otype(vc, op, 1),
                  *r = shlo__rtype(vc, op, 0);
  if (a->rank < 2)
    return shlo__verr(vc, op, "C1", "operand a %s must have rank >= 2",
                      shlo__tstr(vc, a));
  if (!shlo__dim_eq(a->dims[a->rank - 1], a->dims[a->rank - 2]))
    return shlo__verr(vc, op, "C1", "the two minor dimensions of a %s must "
                      "be equal", shlo__tstr(vc, a));
  const shlo_attr *ta = shlo_op_attr(op, "transpose_a");
  if (ta) {
    const char *v = ta->kind == SHLO_ATTR_ENUM ? ta->str : NULL;
    if (!v || (strcmp(v, "NO_TRANSPOSE") && strcmp(v, "TRANSPOSE") &&
               strcmp(v, "ADJOINT")))
      return shlo__verr(vc, op, "transpose_a", "invalid transpose option %s; "
                        "expected NO_TRANSPOSE, TRANSPOSE or ADJOINT",
                        v ? v : "(not an enum)");
  }
  if (a->rank != b->rank)
    return shlo__verr(vc, op, "C2", "a %s and b %s must have equal rank",
                      shlo__tstr(vc, a), shlo__tstr(vc, b));
  const shlo_attr *ls = shlo_op_attr(op, "left_side");
  bool left = ls && (ls->kind == SHLO_ATTR_UNIT || ls->b);
  int64_t shared = left ? b->dims[b->rank - 2] : b->dims[b->rank - 1];
  if (!shlo__dim_eq(shared, a->dims[a->rank - 1]))
    return shlo__verr(vc, op, "C3", "shared dimension of a %s and b %s must "
                      "agree", shlo__tstr(vc, a), shlo__tstr(vc, b));
  for (int i = 0; i < a->rank - 2; i++)
    if (!shlo__dim_eq(a->dims[i], b->dims[i]))
      return shlo__verr(vc, op, "C4", "batch dimensions of a %s and b %s "
                        "must agree", shlo__tstr(vc, a), shlo__tstr(vc, b));
  if (!shlo__compat_baseline(r, b))
    return shlo__verr(vc, op, "C5", "result %s must have b's type %s",
                      shlo__tstr(vc, r), shlo__tstr(vc, b));
  return true;
}

/* cholesky: C1 the result has a's type; C2 a has rank >= 2; C3 its two
 * minor dimensions are equal. */
bool shlo__verify_cholesky(shlo__vctx *vc, const shlo_op *op) {
  if (op->n_operands != 1 || op->n_results != 1)
    return shlo__verr(vc, op, NULL, "expects a and one result");
  const shlo_type *a = shlo__otype(vc, op, 0), *r = shlo__rtype(vc, op, 0);
  if (a->rank < 2)
    return shlo__verr(vc, op, "C2", "a %s must have rank >= 2",
                      shlo__tstr(vc, a));
  if (!shlo__dim_eq(a->dims[a->rank - 1], a->dims[a->rank - 2]))
    return shlo__verr(vc, op, "C3", "the two minor dimensions of a %s must "
                      "be equal", shlo__tstr(vc, a));
  if (!shlo__compat_baseline(r, a))
    return shlo__verr(vc, op, "C1", "result %s must have a's type %s",
                      shlo__tstr(vc, r), shlo__tstr(vc, a));
  return true;
}

/* The batch_norm ops: C1 0 <= feature_index < rank(operand); C2 every
 * operand and result has operand's element type; 1-d operands (scale,
 * offset, mean, variance and the 1-d results) have dim(operand,
 * feature_index) elements and multi-dimensional ones operand's shape,
 * each under the label its op's spec gives that operand or result
 * (labels_in, labels_out: one per operand and result). */
static bool batch_norm(shlo__vctx *vc, const shlo_op *op, int n_in, int n_out,
                       const char *multi_in, const char *multi_out,
                       const char *const *labels_in,
                       const char *const *labels_out) {
  if (op->n_operands != n_in || op->n_results != n_out)
    return shlo__verr(vc, op, NULL, "expects %d operands and %d results",
                      n_in, n_out);
  const shlo_type *a = shlo__otype(vc, op, 0);
  int64_t fi = 0;
  shlo_attr_get_i64(shlo_op_attr(op, "feature_index"), &fi);
  if (fi < 0 || fi >= a->rank)
    return shlo__verr(vc, op, "C1", "feature_index %lld must be within the "
                      "operand's rank %d", (long long)fi, a->rank);
  int64_t nf = a->dims[fi];
  for (int k = 0; k < n_in + n_out; k++) {
    bool is_in = k < n_in;
    int i = is_in ? k : k - n_in;
    const shlo_type *t = is_in ? shlo__otype(vc, op, i) : shlo__rtype(vc, op, i);
    bool multi = (is_in ? multi_in : multi_out)[i] == 'm';
    const char *label = (is_in ? labels_in : labels_out)[i];
    if (!shlo__same_baseline_elem(t, a))
      return shlo__verr(vc, op, "C2", "%s #%d %s must have the operand's "
                        "element type", is_in ? "operand" : "result", i,
                        shlo__tstr(vc, t));
    if (multi) {
      if (!shlo__compat_shape(t, a))
        return shlo__verr(vc, op, label, "%s #%d %s must have the operand's "
                          "shape %s", is_in ? "operand" : "result", i,
                          shlo__tstr(vc, t), shlo__tstr(vc, a));
    } else if (t->rank != 1 || !shlo__dim_eq(t->dims[0], nf)) {
      return shlo__verr(vc, op, label, "%s #%d %s must be 1-d with the "
                        "feature count %lld", is_in ? "operand" : "result", i,
                        shlo__tstr(vc, t), (long long)nf);
    }
  }
  return true;
}

/* batch_norm_grad: operand, scale, mean, variance, grad_output ->
 * grad_operand, grad_scale, grad_offset (C1-C5). */
bool shlo__verify_batch_norm_grad(shlo__vctx *vc, const shlo_op *op) {
  /* C3 operand, grad_output, grad_operand share a shape; C4 the 1-d ones
   * scale's; C5 size(scale) = dim(operand, feature_index) */
  static const char *const in[] = {"C3", "C5", "C4", "C4", "C3"},
                           *const out[] = {"C3", "C4", "C4"};
  return batch_norm(vc, op, 5, 3, "m111m", "m11", in, out);
}

/* batch_norm_inference: operand, scale, offset, mean, variance -> result
 * (C1-C7). */
bool shlo__verify_batch_norm_inference(shlo__vctx *vc, const shlo_op *op) {
  /* C3..C6 the sizes of scale, offset, mean, variance; C7 the result */
  static const char *const in[] = {"C7", "C3", "C4", "C5", "C6"},
                           *const out[] = {"C7"};
  return batch_norm(vc, op, 5, 1, "m1111", "m", in, out);
}

/* batch_norm_training: operand, scale, offset -> output, batch_mean,
 * batch_var (C1-C7). */
bool shlo__verify_batch_norm_training(shlo__vctx *vc, const shlo_op *op) {
  /* C3, C4 the sizes of scale, offset; C5, C6 of batch_mean, batch_var;
   * C7 the output */
  static const char *const in[] = {"C7", "C3", "C4"},
                           *const out[] = {"C7", "C5", "C6"};
  return batch_norm(vc, op, 3, 3, "m11", "m11", in, out);
}
