/* SPDX-License-Identifier: Apache-2.0 */
/* stablehlo.reduce and stablehlo.map.
 *
 * reduce (spec: reduce): results[:][j] = body folded over the slice of the
 * inputs at j, starting from init_values, the inputs taken in ascending
 * lexicographic order of the reduced indices.  The schedule (the spec
 * leaves it to the implementation, as any tree that keeps that order):
 * acc = body(acc, x) one input at a time, except f32 sums, which add
 * each contiguous run of a result's inputs in the blocked tree of
 * sum_tree.h.  A run: ignoring dimensions of extent 1, the input's
 * innermost dimensions when they are all reduced (reduce_split.c merges
 * them; a result with every dimension reduced is one run).  Operands:
 * N inputs then N init values; N results.  A body that is one known op
 * (reduce_int.h) runs as a native loop: the input is walked row by row
 * (last dimension contiguous), each run folded into one result element
 * when the last dimension is reduced, or accumulated elementwise into a
 * result row when it is kept; every path (threads, fused kernels, ISA)
 * gives the same bits.  Other bodies run the region per element, one
 * input at a time.
 *
 * map (spec: map): result[i] = computation(inputs[0][i], ..., inputs[N-1][i]);
 * `dimensions` must be [0, ..., R-1].  A body that is one known binary op
 * on its two arguments runs natively.
 *
 * reduce_window and select_and_scatter live in reduce_window.c. */
#include <stdlib.h>
#include <string.h>

#include "core/value.h"
#include "runtime/pool.h"
#include "kernels/reduce_int.h"
#include "kernels/reduce_split.h"

/* ---- reduce ---- */

typedef struct reduce_params {
  int n;                          /* inputs */
  int rank;                       /* input rank, >= 1 (rank 0 runs as [1]) */
  int64_t dims[SHLO_MAX_RANK];
  int64_t out_stride[SHLO_MAX_RANK]; /* per input dim; 0 where reduced */
  bool last_reduced;
  int64_t in_numel;
  shlo_elem_type in_et[SHLO_RB_MAX_N], out_et[SHLO_RB_MAX_N];
  const shlo_type *out_type[SHLO_RB_MAX_N];
  shlo_rb_native nat;             /* nat.opcode != 0: native body */
} reduce_params;

/* New results filled with the init values in[n..2n). */
static shlo_status new_filled(const shlo_step *s, shlo_value *const *init,
                              const shlo_type *const *types, int n,
                              shlo_value **out, shlo_exec *ex) {
  shlo_status st = shlo__rb_new_results(s, types, n, out, ex);
  if (st) return st;
  for (int k = 0; k < n; k++) {
    size_t esz = shlo_elem_size(out[k]->elem);
    char *d = out[k]->data;
    for (int64_t i = 0; i < out[k]->numel; i++)
      memcpy(d + (size_t)i * esz, init[k]->data, esz);
  }
  return SHLO_OK;
}

/* Only the last dimension is reduced: row r of the input is output r. */
static bool rows_are_outputs(const reduce_params *p) {
  if (!p->last_reduced) return false;
  for (int d = 0; d < p->rank - 1; d++)
    if (p->out_stride[d] == 0) return false;
  return true;
}

/* Every dimension of extent above 1 reduced: one result element, whose
 * inputs are the whole input, in order. */
static bool all_reduced(const reduce_params *p) {
  for (int d = 0; d < p->rank; d++)
    if (p->out_stride[d] != 0 && p->dims[d] != 1) return false;
  return true;
}

typedef struct row_fold_job {
  const shlo_rb_native *b;
  const char *src;
  char *dst;
  int64_t len;
} row_fold_job;

static void fold_rows(void *ctx, int64_t lo, int64_t hi) {
  const row_fold_job *j = ctx;
  size_t esz = j->b->esz;
  j->b->fold_rows(j->dst + (size_t)lo * esz,
                  j->src + (size_t)(lo * j->len) * esz, hi - lo, j->len, j->b);
}

/* Rows per chunk: about 64K elements of work each. */
static int64_t row_grain(int64_t len) {
  int64_t g = (1 << 16) / (len > 0 ? len : 1);
  return g > 0 ? g : 1;
}

static shlo_status k_reduce_native(const shlo_step *s, shlo_value *const *in,
                                   shlo_value **out, shlo_exec *ex) {
  const reduce_params *p = s->params;
  shlo_status st = new_filled(s, in + 1, p->out_type, 1, out, ex);
  if (st) return st;
  const shlo_rb_native *b = &p->nat;
  int last = p->rank - 1;
  int64_t len = p->dims[last];
  int64_t rows = 1;
  for (int d = 0; d < last; d++) rows *= p->dims[d];
  if (len == 0 || rows == 0) return SHLO_OK;
  const char *src = in[0]->data;
  char *dst = out[0]->data;
  if (rows_are_outputs(p)) {
    /* Each row folds into its own output element: rows split across the
     * pool, each folded in order as below. */
    row_fold_job job = {b, src, dst, len};
    shlo__parallel_for(rows, row_grain(len), fold_rows, &job);
    return SHLO_OK;
  }
  /* Several rows per result element: split by result elements. */
  int split = shlo__reduce_split(p->rank, p->dims, p->out_stride, b, src, dst,
                                 ex);
  if (split < 0) {
    shlo__rb_unref_n(out, 1);
    return shlo__rb_stopped(s, ex);
  }
  if (split == 0) return SHLO_OK;
  if (all_reduced(p)) { /* one run */
    b->fold_run(dst, src, p->in_numel, b);
    return SHLO_OK;
  }
  int64_t idx[SHLO_MAX_RANK] = {0};
  int64_t obase = 0;
  for (int64_t r = 0; r < rows; r++) {
    if ((r & 4095) == 4095 && shlo__exec_should_stop(ex)) {
      shlo__rb_unref_n(out, 1);
      return shlo__rb_stopped(s, ex);
    }
    const char *row = src + (size_t)(r * len) * b->esz;
    if (p->last_reduced)
      b->fold_run(dst + (size_t)obase * b->esz, row, len, b);
    else
      b->accum(dst + (size_t)obase * b->esz, row, len, b);
    for (int d = last - 1; d >= 0; d--) {
      obase += p->out_stride[d];
      if (++idx[d] < p->dims[d]) break;
      obase -= p->out_stride[d] * p->dims[d];
      idx[d] = 0;
    }
  }
  return SHLO_OK;
}

static shlo_status k_reduce_generic(const shlo_step *s, shlo_value *const *in,
                                    shlo_value **out, shlo_exec *ex) {
  const reduce_params *p = s->params;
  int n = p->n;
  shlo_status st = new_filled(s, in + n, p->out_type, n, out, ex);
  if (st) return st;
  shlo_elem_type lead_et[2 * SHLO_RB_MAX_N];
  for (int k = 0; k < n; k++) {
    lead_et[k] = p->out_et[k];
    lead_et[n + k] = p->in_et[k];
  }
  shlo_rb_call call;
  st = shlo__rb_call_init(&call, lead_et, 2 * n, p->out_et, n, s, ex);
  if (st) {
    shlo__rb_unref_n(out, n);
    return st;
  }
  const void *src[2 * SHLO_RB_MAX_N];
  void *dst[SHLO_RB_MAX_N];
  size_t in_sz[SHLO_RB_MAX_N], out_sz[SHLO_RB_MAX_N];
  for (int k = 0; k < n; k++) {
    in_sz[k] = shlo_elem_size(p->in_et[k]);
    out_sz[k] = shlo_elem_size(p->out_et[k]);
  }
  int64_t idx[SHLO_MAX_RANK] = {0};
  int64_t o = 0;
  for (int64_t i = 0; i < p->in_numel; i++) {
    for (int k = 0; k < n; k++) {
      dst[k] = (char *)out[k]->data + (size_t)o * out_sz[k];
      src[k] = dst[k];
      src[n + k] = (const char *)in[k]->data + (size_t)i * in_sz[k];
    }
    st = shlo__rb_apply(&call, s, 0, in, src, dst, ex);
    if (st) break;
    for (int d = p->rank - 1; d >= 0; d--) {
      o += p->out_stride[d];
      if (++idx[d] < p->dims[d]) break;
      o -= p->out_stride[d] * p->dims[d];
      idx[d] = 0;
    }
  }
  shlo__rb_call_free(&call);
  if (st) shlo__rb_unref_n(out, n);
  return st;
}

static bool same_shape(const shlo_type *a, const shlo_type *b) {
  if (a->rank != b->rank) return false;
  for (int i = 0; i < a->rank; i++)
    if (a->dims[i] != b->dims[i]) return false;
  return true;
}

/* (C1-C2) the inputs share one static shape; each init value is a scalar
 * with its result's element type.  Records the element and result types. */
static shlo_status reduce_types(shlo_compiler *cc, const shlo_op *op,
                                reduce_params *p, const shlo_type *t0) {
  int n = p->n;
  for (int k = 0; k < n; k++) {
    const shlo_type *ti = shlo__cc_operand_type(cc, op, k);
    const shlo_type *tv = shlo__cc_operand_type(cc, op, n + k);
    const shlo_type *tr = shlo__cc_result_type(cc, op, k);
    if (!shlo__rb_is_tensor(ti) || !same_shape(ti, t0))
      return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                          "(C1) all inputs must have the same static shape");
    if (!shlo__rb_is_tensor(tv) || tv->rank != 0)
      return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                          "(C2) init value %d must be a rank-0 tensor", k);
    if (!shlo__rb_is_tensor(tr) || tr->elem != tv->elem)
      return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                          "(C2) result %d must have the element type of its "
                          "init value",
                          k);
    p->in_et[k] = ti->elem;
    p->out_et[k] = tr->elem;
    p->out_type[k] = tr;
  }
  return SHLO_OK;
}

/* (C4-C5) 'dimensions': in range and unique; red[d] marks them. */
static shlo_status reduce_dims(shlo_compiler *cc, const shlo_op *op,
                               int rank, bool *red) {
  int64_t dims[SHLO_MAX_RANK];
  int nd = shlo_attr_i64s(shlo_op_attr(op, "dimensions"), dims, SHLO_MAX_RANK);
  if (nd < 0)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY, "needs 'dimensions'");
  for (int i = 0; i < nd; i++) {
    if (dims[i] < 0 || dims[i] >= rank)
      return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                          "(C4) dimension %lld is out of range",
                          (long long)dims[i]);
    if (red[dims[i]])
      return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                          "(C5) dimension %lld appears twice",
                          (long long)dims[i]);
    red[dims[i]] = true;
  }
  return SHLO_OK;
}

/* (C7) the result shape is the input shape without the reduced dims;
 * then each input dim's stride in the result (0 where reduced). */
static shlo_status reduce_layout(shlo_compiler *cc, const shlo_op *op,
                                 reduce_params *p, const shlo_type *t0,
                                 const bool *red) {
  int64_t rdims[SHLO_MAX_RANK];
  int rr = 0;
  for (int d = 0; d < t0->rank; d++)
    if (!red[d]) rdims[rr++] = t0->dims[d];
  for (int k = 0; k < p->n; k++) {
    const shlo_type *tr = shlo__cc_result_type(cc, op, k);
    bool ok = tr->rank == rr;
    for (int d = 0; ok && d < rr; d++) ok = tr->dims[d] == rdims[d];
    if (!ok)
      return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                          "(C7) result %d has the wrong shape", k);
  }
  int64_t rstr[SHLO_MAX_RANK];
  shlo_strides(rr, rdims, rstr);
  if (t0->rank == 0) {
    p->rank = 1;
    p->dims[0] = 1;
    p->out_stride[0] = 0;
    p->last_reduced = false;
  } else {
    p->rank = t0->rank;
    int j = 0;
    for (int d = 0; d < t0->rank; d++) {
      p->dims[d] = t0->dims[d];
      p->out_stride[d] = red[d] ? 0 : rstr[j++];
    }
    p->last_reduced = red[t0->rank - 1];
  }
  p->in_numel = shlo_type_numel(t0);
  return SHLO_OK;
}

shlo_status shlo__compile_reduce(shlo_compiler *cc, const shlo_op *op,
                                shlo_step *step) {
  int n = op->n_results;
  shlo_status st = shlo__rb_check_counts(cc, op, "C3");
  if (st) return st;
  reduce_params *p = shlo__params_alloc(step, sizeof *p);
  if (!p) return SHLO_ENOMEM;
  p->n = n;
  const shlo_type *t0 = NULL;
  if ((st = shlo__rb_first_input(cc, op, &t0))) return st;
  bool red[SHLO_MAX_RANK] = {0};
  if ((st = reduce_types(cc, op, p, t0)) ||
      (st = reduce_dims(cc, op, t0->rank, red)) ||
      (st = reduce_layout(cc, op, p, t0, red)) ||
      (st = shlo__rb_compile_body(cc, op, step, n, p->out_et, "C6")))
    return st;
  if (n == 1 && shlo__rb_match(cc, op, 0, &p->nat) &&
      p->nat.et == p->in_et[0] && p->nat.et == p->out_et[0] &&
      !p->out_type[0]->quant) {
    step->fn = k_reduce_native;
  } else {
    memset(&p->nat, 0, sizeof p->nat);
    step->fn = k_reduce_generic;
  }
  return SHLO_OK;
}

const shlo_rb_native *shlo__reduce_row_fold(const shlo_step *s) {
  if (s->fn != k_reduce_native) return NULL;
  const reduce_params *p = s->params;
  return rows_are_outputs(p) ? &p->nat : NULL;
}

/* ---- map ---- */

typedef struct map_params {
  int n;
  int64_t numel;
  const shlo_type *out_type;
  shlo_elem_type in_et[SHLO_RB_MAX_N], out_et;
  shlo_rb_native nat;
} map_params;

static shlo_status k_map_native(const shlo_step *s, shlo_value *const *in,
                                shlo_value **out, shlo_exec *ex) {
  const map_params *p = s->params;
  shlo_value *r = shlo_tensor_new_like(p->out_type);
  if (!r)
    return shlo__exec_fail(ex, s, SHLO_ENOMEM,
                          "out of memory allocating the result");
  memcpy(r->data, in[0]->data, r->nbytes);
  p->nat.accum(r->data, in[1]->data, p->numel, &p->nat);
  out[0] = r;
  return SHLO_OK;
}

static shlo_status k_map_generic(const shlo_step *s, shlo_value *const *in,
                                 shlo_value **out, shlo_exec *ex) {
  const map_params *p = s->params;
  shlo_value *r = shlo_tensor_new_like(p->out_type);
  if (!r)
    return shlo__exec_fail(ex, s, SHLO_ENOMEM,
                          "out of memory allocating the result");
  shlo_rb_call call;
  shlo_status st = shlo__rb_call_init(&call, p->in_et, p->n, &p->out_et, 1, s, ex);
  if (st) {
    shlo_value_unref(r);
    return st;
  }
  size_t osz = shlo_elem_size(p->out_et);
  size_t isz[SHLO_RB_MAX_N];
  for (int k = 0; k < p->n; k++) isz[k] = shlo_elem_size(p->in_et[k]);
  const void *src[SHLO_RB_MAX_N];
  for (int64_t i = 0; i < p->numel; i++) {
    for (int k = 0; k < p->n; k++)
      src[k] = (const char *)in[k]->data + (size_t)i * isz[k];
    void *dst = (char *)r->data + (size_t)i * osz;
    st = shlo__rb_apply(&call, s, 0, in, src, &dst, ex);
    if (st) break;
  }
  shlo__rb_call_free(&call);
  if (st) {
    shlo_value_unref(r);
    return st;
  }
  out[0] = r;
  return SHLO_OK;
}

shlo_status shlo__compile_map(shlo_compiler *cc, const shlo_op *op,
                             shlo_step *step) {
  int n = op->n_operands;
  if (n < 1 || op->n_results != 1 || op->n_regions != 1)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "needs at least one input, one result and one region");
  if (n > SHLO_RB_MAX_N)
    return shlo__cc_fail(cc, op, SHLO_EUNSUPPORTED,
                        "more than %d inputs are not supported", SHLO_RB_MAX_N);
  map_params *p = shlo__params_alloc(step, sizeof *p);
  if (!p) return SHLO_ENOMEM;
  const shlo_type *tr = shlo__cc_result_type(cc, op, 0);
  if (!shlo__rb_is_tensor(tr))
    return shlo__cc_fail(cc, op, SHLO_EUNSUPPORTED,
                        "the result must be a static tensor");
  for (int k = 0; k < n; k++) {
    const shlo_type *t = shlo__cc_operand_type(cc, op, k);
    if (!shlo__rb_is_tensor(t) || !same_shape(t, tr))
      return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                          "(C1) input %d and the result must have the same "
                          "shape",
                          k);
    p->in_et[k] = t->elem;
  }
  int64_t dims[SHLO_MAX_RANK];
  int nd = shlo_attr_i64s(shlo_op_attr(op, "dimensions"), dims, SHLO_MAX_RANK);
  if (nd >= 0) {
    bool ok = nd == tr->rank;
    for (int i = 0; ok && i < nd; i++) ok = dims[i] == i;
    if (!ok)
      return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                          "(C3) dimensions must be [0, ..., %d]", tr->rank - 1);
  }
  p->n = n;
  p->numel = shlo_type_numel(tr);
  p->out_type = tr;
  p->out_et = tr->elem;
  shlo_status st = shlo__cc_compile_regions(cc, op, step);
  if (st) return st;
  shlo_elem_type aet[SHLO_RB_MAX_N], ret;
  if (!shlo__rb_region_types(cc, op, 0, aet, n, &ret, 1) ||
      step->plans[0]->n_results != 1)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "(C4) computation must take N scalars and return one");
  if (ret != p->out_et)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "(C4) computation must return tensor<%s>",
                        shlo_elem_name(p->out_et));
  if (n == 2 && shlo__rb_match(cc, op, 0, &p->nat) &&
      p->nat.et == p->in_et[0] && p->nat.et == p->in_et[1] &&
      p->nat.et == p->out_et && !tr->quant) {
    step->fn = k_map_native;
  } else {
    memset(&p->nat, 0, sizeof p->nat);
    step->fn = k_map_generic;
  }
  return SHLO_OK;
}
