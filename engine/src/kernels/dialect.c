/* SPDX-License-Identifier: Apache-2.0 */
/* StableHLO ops outside the spec's list that producers still emit
 * (StablehloOps.td: "on its way out of StableHLO"): torch_index_select,
 * einsum and unary_einsum, trace, set_dimension_size; and the compile
 * function of the ops shlo refuses with their reason.
 *
 * torch_index_select (PyTorch/XLA): result[p, j, q] = operand[p, index[
 * p[:batch_dims], j], q] for p over operand[:dim], j over
 * index[batch_dims:], q over operand[dim+1:]; an index outside
 * [0, size) is clamped, as the gather XLA lowers it to clamps.
 * einsum: result[out letters] = sum over the other letters of the
 * product of the operands' elements; integers wrap as in dot_general,
 * floats are summed in double and rounded once, complex in double
 * complex.  trace: a no-op (its semantics are undocumented).
 * set_dimension_size: on static shapes the size must be the dimension's
 * own (shlo has no bounded dynamic shapes); the data is unchanged. */
#include "core/alloc.h"
#include "core/cmplx.h"
#include "core/value.h"
#include <stdlib.h>
#include <string.h>

#include "core/floatfmt.h"
#include "kernels/kernel.h"

/* ---- torch_index_select ---- */

typedef struct tis_params {
  int64_t pre, batch, n_idx, axis, post; /* see k_torch_index_select */
  size_t esz;
  shlo_type rt;
} tis_params;

/* operand viewed as [batch, pre/batch, axis, post], index as
 * [batch, n_idx], result as [batch, pre/batch, n_idx, post]. */
static shlo_status k_torch_index_select(const shlo_step *s,
                                        shlo_value *const *in,
                                        shlo_value **out, shlo_exec *ex) {
  const tis_params *p = s->params;
  shlo_value *r = shlo_tensor_new_like(&p->rt);
  if (!r) return shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory");
  const char *src = in[0]->data;
  char *dst = r->data;
  int64_t mid = p->pre / p->batch, chunk = p->post * (int64_t)p->esz;
  for (int64_t b = 0; b < p->batch; b++)
    for (int64_t m = 0; m < mid; m++)
      for (int64_t j = 0; j < p->n_idx; j++) {
        int64_t ix = shlo_tensor_get_i64(in[1], b * p->n_idx + j);
        if (!shlo_elem_is_int(in[1]->elem) || in[1]->elem == SHLO_I1) ix = 0;
        ix = ix < 0 ? 0 : ix >= p->axis ? p->axis - 1 : ix;
        int64_t o = ((b * mid + m) * p->axis + ix) * chunk;
        int64_t d = ((b * mid + m) * p->n_idx + j) * chunk;
        memcpy(dst + d, src + o, (size_t)chunk);
      }
  out[0] = r;
  return SHLO_OK;
}

shlo_status shlo__compile_torch_index_select(shlo_compiler *cc,
                                             const shlo_op *op,
                                             shlo_step *step) {
  const shlo_type *a = shlo__cc_operand_type(cc, op, 0);
  const shlo_type *ix = shlo__cc_operand_type(cc, op, 1);
  const shlo_type *rt = shlo__cc_result_type(cc, op, 0);
  if (!shlo_type_is_static(a) || !shlo_type_is_static(ix) ||
      !shlo_type_is_static(rt) || a->quant)
    return shlo__cc_fail(cc, op, SHLO_EUNSUPPORTED,
                        "needs statically shaped, non-quantized tensors");
  int64_t dim = 0, bdims = 0;
  shlo_attr_get_i64(shlo_op_attr(op, "dim"), &dim);
  shlo_attr_get_i64(shlo_op_attr(op, "batch_dims"), &bdims);
  tis_params *p = shlo__params_alloc(step, sizeof *p);
  if (!p) return shlo__cc_fail(cc, op, SHLO_ENOMEM, "out of memory");
  p->pre = p->batch = p->n_idx = p->post = 1;
  for (int i = 0; i < dim; i++) p->pre *= a->dims[i];
  for (int i = 0; i < bdims; i++) p->batch *= a->dims[i];
  for (int i = (int)bdims; i < ix->rank; i++) p->n_idx *= ix->dims[i];
  for (int i = (int)dim + 1; i < a->rank; i++) p->post *= a->dims[i];
  p->axis = a->dims[dim];
  p->rt = *rt;
  p->esz = shlo_elem_size(a->elem);
  if (p->axis == 0 && shlo_type_numel(rt) > 0)
    return shlo__cc_fail(cc, op, SHLO_EUNSUPPORTED,
                        "selects from an empty dimension");
  step->fn = k_torch_index_select;
  return SHLO_OK;
}

/* ---- einsum, unary_einsum ---- */

typedef struct es_params {
  int n_in, n_letters;
  int64_t size[52];               /* per letter */
  int64_t stride[3][52];          /* per operand (2 = result), per letter */
  shlo_elem_type elem;
  shlo_type rt;
} es_params;

static int letter_ix(char c) {
  return c >= 'a' && c <= 'z' ? c - 'a' : 26 + (c - 'A');
}

/* Element i of v as double complex (real types: imaginary part 0). */
static double complex es_load(const shlo_value *v, int64_t i) {
  if (v->elem == SHLO_C64) {
    const float *f = (const float *)v->data + 2 * i;
    return CMPLX(f[0], f[1]);
  }
  if (v->elem == SHLO_C128) {
    const double *f = (const double *)v->data + 2 * i;
    return CMPLX(f[0], f[1]);
  }
  return shlo_tensor_get_f64(v, i);
}

static void es_store(shlo_value *v, int64_t i, double complex x) {
  if (v->elem == SHLO_C64) {
    float *f = (float *)v->data + 2 * i;
    f[0] = (float)creal(x), f[1] = (float)cimag(x);
  } else if (v->elem == SHLO_C128) {
    double *f = (double *)v->data + 2 * i;
    f[0] = creal(x), f[1] = cimag(x);
  } else {
    shlo_tensor_set_f64(v, i, creal(x));
  }
}

/* Walk every assignment of the letters; accumulate into the result. */
static shlo_status k_einsum(const shlo_step *s, shlo_value *const *in,
                            shlo_value **out, shlo_exec *ex) {
  const es_params *p = s->params;
  shlo_value *r = shlo_tensor_new_like(&p->rt);
  if (!r) return shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory");
  bool is_int = shlo_elem_is_int(p->elem);
  int64_t idx[52] = {0}, off[3] = {0, 0, 0};
  int64_t *acc_i = is_int ? shlo__calloc((size_t)r->numel + 1, sizeof *acc_i) : 0;
  double complex *acc = is_int ? 0 : shlo__calloc((size_t)r->numel + 1, sizeof *acc);
  if (!acc_i && !acc) {
    shlo_value_unref(r);
    return shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory");
  }
  bool empty = false;
  for (int l = 0; l < p->n_letters; l++) empty |= p->size[l] == 0;
  for (bool more = !empty; more;) {
    if (is_int) {
      uint64_t prod = (uint64_t)shlo_tensor_get_i64(in[0], off[0]);
      if (p->n_in == 2) prod *= (uint64_t)shlo_tensor_get_i64(in[1], off[1]);
      acc_i[off[2]] = (int64_t)((uint64_t)acc_i[off[2]] + prod);
    } else {
      double complex prod = es_load(in[0], off[0]);
      if (p->n_in == 2) prod *= es_load(in[1], off[1]);
      acc[off[2]] += prod;
    }
    more = false;
    for (int l = p->n_letters - 1; l >= 0 && !more; l--) {
      for (int k = 0; k < 3; k++) off[k] += p->stride[k][l];
      if (++idx[l] < p->size[l]) more = true;
      else {
        for (int k = 0; k < 3; k++) off[k] -= p->stride[k][l] * p->size[l];
        idx[l] = 0;
      }
    }
  }
  for (int64_t i = 0; i < r->numel; i++) {
    if (is_int) shlo_tensor_set_i64(r, i, acc_i[i]);
    else es_store(r, i, acc[i]);
  }
  shlo__free(acc_i);
  shlo__free(acc);
  out[0] = r;
  return SHLO_OK;
}

/* Strides of one operand's letters (a repeated letter adds its strides:
 * the diagonal). */
static void es_strides(const shlo_type *t, const char *letters,
                       int64_t *stride) {
  int64_t st = 1;
  for (int d = t->rank - 1; d >= 0; d--) {
    stride[letter_ix(letters[d])] += st;
    st *= t->dims[d];
  }
}

shlo_status shlo__compile_einsum(shlo_compiler *cc, const shlo_op *op,
                                 shlo_step *step) {
  const char *cfg = shlo_attr_get_str(shlo_op_attr(op, "einsum_config"));
  const shlo_type *rt = shlo__cc_result_type(cc, op, 0);
  if (!cfg || !shlo_type_is_static(rt))
    return shlo__cc_fail(cc, op, SHLO_EUNSUPPORTED,
                        "needs an einsum_config and a static result");
  es_params *p = shlo__params_alloc(step, sizeof *p);
  if (!p) return shlo__cc_fail(cc, op, SHLO_ENOMEM, "out of memory");
  p->n_in = op->n_operands;
  p->elem = rt->elem;
  p->rt = *rt;
  if (rt->elem == SHLO_I1 || rt->quant)
    return shlo__cc_fail(cc, op, SHLO_EUNSUPPORTED,
                        "element type %s is not supported",
                        shlo_elem_name(rt->elem));
  for (int l = 0; l < 52; l++) p->size[l] = -1;
  const char *part = cfg;
  for (int k = 0; k <= p->n_in; k++) {
    const shlo_type *t = k < p->n_in ? shlo__cc_operand_type(cc, op, k) : rt;
    if (!shlo_type_is_static(t))
      return shlo__cc_fail(cc, op, SHLO_EUNSUPPORTED,
                          "needs statically shaped operands");
    for (int d = 0; d < t->rank; d++)
      p->size[letter_ix(part[d])] = t->dims[d];
    es_strides(t, part, p->stride[k < p->n_in ? k : 2]);
    part += t->rank;
    part += *part == ',' ? 1 : *part == '-' ? 2 : 0;
  }
  p->n_letters = 52;
  for (int l = 0; l < 52; l++)
    if (p->size[l] < 0) p->size[l] = 1; /* unused letters: one step */
  step->fn = k_einsum;
  return SHLO_OK;
}

/* ---- trace, set_dimension_size, refused ops ---- */

static shlo_status k_nothing(const shlo_step *s, shlo_value *const *in,
                             shlo_value **out, shlo_exec *ex) {
  (void)s, (void)in, (void)out, (void)ex;
  return SHLO_OK;
}

shlo_status shlo__compile_trace(shlo_compiler *cc, const shlo_op *op,
                                shlo_step *step) {
  (void)cc, (void)op;
  step->fn = k_nothing;
  return SHLO_OK;
}

static shlo_status k_set_dimension_size(const shlo_step *s,
                                        shlo_value *const *in,
                                        shlo_value **out, shlo_exec *ex) {
  const int64_t *p = s->params; /* dimension, its static size */
  int64_t size = shlo_tensor_get_i64(in[1], 0);
  if (size != p[1])
    return shlo__exec_fail(ex, s, SHLO_EUNSUPPORTED,
                          "size %lld for static dimension %lld of size "
                          "%lld: shlo has no bounded dynamic shapes",
                          (long long)size, (long long)p[0],
                          (long long)p[1]);
  out[0] = shlo_value_ref(in[0]);
  return SHLO_OK;
}

shlo_status shlo__compile_set_dimension_size(shlo_compiler *cc,
                                             const shlo_op *op,
                                             shlo_step *step) {
  const shlo_type *a = shlo__cc_operand_type(cc, op, 0);
  const shlo_type *rt = shlo__cc_result_type(cc, op, 0);
  int64_t d = 0;
  shlo_attr_get_i64(shlo_op_attr(op, "dimension"), &d);
  if (!shlo_type_is_static(a) || !shlo_type_equal(a, rt))
    return shlo__cc_fail(cc, op, SHLO_EUNSUPPORTED,
                        "runs only with a static result of the operand's "
                        "type (no bounded dynamic shapes)");
  int64_t *p = shlo__params_alloc(step, 2 * sizeof *p);
  if (!p) return shlo__cc_fail(cc, op, SHLO_ENOMEM, "out of memory");
  p[0] = d;
  p[1] = a->dims[d];
  step->fn = k_set_dimension_size;
  return SHLO_OK;
}

/* chlo.minimum_broadcast_shapes: the shapes after dropping the dimensions
 * that are 1 in every shape and merging each run of adjacent dimensions in
 * which the same shapes need broadcasting into one dimension (their
 * product); shapes that do not broadcast together come back unchanged.
 * Walking from the minor end keeps numpy's trailing alignment.  The result
 * lengths depend on the operands' values, so the step runs only when the
 * result types are static, and fails (never truncates) when the computed
 * ranks differ from them. */
typedef struct {
  int k;                /* number of shapes */
  int64_t *len;         /* static result lengths */
} min_bcast_params;

static void min_bcast_free(void *p) {
  min_bcast_params *m = p;
  if (m) shlo__free(m->len);
  shlo__free(m);
}

/* The extent of shape s counted from its minor end (v = 1 is the last),
 * 1 past its rank. */
static int64_t extent_from_end(const shlo_value *s, int64_t v) {
  return v > s->numel ? 1 : shlo_tensor_get_i64(s, s->numel - v);
}

/* Fills out[i] (s[i]->numel extents each, preset to 1) with the merged
 * shapes; returns false when the shapes do not broadcast together. */
static bool min_bcast_merge(shlo_value *const *s, int k, int64_t **out,
                            bool *prev, bool *cur) {
  int64_t max_rank = 0, running = 1, offset = 0;
  for (int i = 0; i < k; i++) {
    if (s[i]->numel > max_rank) max_rank = s[i]->numel;
    prev[i] = false;
  }
  for (int64_t v = 1; v <= max_rank + 1; v++) {
    int64_t same = 1;
    for (int i = 0; i < k; i++) {
      int64_t size = extent_from_end(s[i], v);
      cur[i] = size != 1;
      if (cur[i] && same != 1 && size != same) return false;
      if (cur[i]) same = size;
    }
    bool changed = false;
    for (int i = 0; i < k; i++) {
      if (same == 1) cur[i] = prev[i]; /* an all-1 dimension is dropped */
      changed |= cur[i] != prev[i];
    }
    if (v > max_rank || changed) {
      if (running != 1) {
        offset++;
        for (int i = 0; i < k; i++) {
          int64_t at = s[i]->numel - offset;
          bool was_in_bounds = s[i]->numel - v >= -1;
          if (!(was_in_bounds || prev[i])) continue;
          /* Never expected; the unmerged shapes are a safe answer. */
          if (at < 0) return false;
          out[i][at] = prev[i] ? running : 1;
        }
      }
      running = same;
    } else {
      running *= same;
    }
    memcpy(prev, cur, (size_t)k * sizeof *prev);
  }
  return true;
}

static shlo_status k_minimum_broadcast_shapes(const shlo_step *s,
                                              shlo_value *const *in,
                                              shlo_value **out,
                                              shlo_exec *ex) {
  const min_bcast_params *p = s->params;
  int k = p->k;
  int64_t **merged = shlo__calloc((size_t)k, sizeof *merged);
  bool *flags = shlo__calloc(2 * (size_t)k, sizeof *flags);
  shlo_status st = merged && flags ? SHLO_OK : SHLO_ENOMEM;
  for (int i = 0; st == SHLO_OK && i < k; i++) {
    merged[i] = shlo__malloc(((size_t)in[i]->numel + 1) * sizeof **merged);
    if (!merged[i]) st = SHLO_ENOMEM;
    for (int64_t j = 0; merged[i] && j < in[i]->numel; j++) merged[i][j] = 1;
  }
  if (st != SHLO_OK) {
    st = shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory");
  } else {
    bool ok = min_bcast_merge(in, k, merged, flags, flags + k);
    for (int i = 0; i < k && st == SHLO_OK; i++) {
      const int64_t *src = merged[i];
      int64_t n = in[i]->numel, lead = 0;
      if (ok)
        while (lead < n && src[lead] == 1) lead++;
      if (n - lead != p->len[i]) {
        st = shlo__exec_fail(ex, s, SHLO_EUNSUPPORTED,
                            "result %d has %lld extents but its static "
                            "type holds %lld: give the result type the "
                            "computed rank", i, (long long)(n - lead),
                            (long long)p->len[i]);
        break;
      }
      out[i] = shlo_tensor_new(SHLO_INDEX, 1, &p->len[i]);
      if (!out[i]) {
        st = shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory");
        break;
      }
      for (int64_t j = 0; j < p->len[i]; j++)
        shlo_tensor_set_i64(out[i], j,
                            ok ? src[lead + j] : shlo_tensor_get_i64(in[i], j));
    }
    if (st != SHLO_OK)
      for (int i = 0; i < k; i++) {
        if (out[i]) shlo_value_unref(out[i]);
        out[i] = NULL;
      }
  }
  for (int i = 0; merged && i < k; i++) shlo__free(merged[i]);
  shlo__free(merged);
  shlo__free(flags);
  return st;
}

shlo_status shlo__compile_minimum_broadcast_shapes(shlo_compiler *cc,
                                                   const shlo_op *op,
                                                   shlo_step *step) {
  min_bcast_params *p = shlo__calloc(1, sizeof *p);
  if (!p) return shlo__cc_fail(cc, op, SHLO_ENOMEM, "out of memory");
  step->params = p;
  step->free_params = min_bcast_free;
  p->k = op->n_results;
  p->len = shlo__calloc((size_t)p->k, sizeof *p->len);
  if (!p->len) return shlo__cc_fail(cc, op, SHLO_ENOMEM, "out of memory");
  for (int i = 0; i < p->k; i++) {
    const shlo_type *rt = shlo__cc_result_type(cc, op, i);
    if (!shlo_type_is_static(rt))
      return shlo__cc_fail(cc, op, SHLO_EUNSUPPORTED,
                          "runs only with static result types: the result "
                          "lengths depend on the operands' values");
    p->len[i] = rt->dims[0];
  }
  step->fn = k_minimum_broadcast_shapes;
  return SHLO_OK;
}

/* Ops of the .td files that no StableHLO program can run: they compute on
 * `index` scalars and !shape.witness values (compute_reshape_shape,
 * cstr_reshapable: shape-dialect helpers, removed from StableHLO). */
shlo_status shlo__compile_removed(shlo_compiler *cc, const shlo_op *op,
                                  shlo_step *step) {
  (void)step;
  return shlo__cc_fail(cc, op, SHLO_EUNSUPPORTED,
                      "%s is not run: it is a shape-computation helper on "
                      "`index` values that "
                      "StableHLO removed; lower it before sending the "
                      "program", op->name);
}
