/* SPDX-License-Identifier: Apache-2.0 */
/* Shape ops whose sizes come from operands (dynamic_pad,
 * real_dynamic_slice) and the legacy broadcast.  Their results must still
 * have static types; the operand-given sizes are read when the kernel runs
 * and must agree with the result type.  (dynamic_iota, dynamic_reshape and
 * dynamic_broadcast_in_dim compile in shape.c, like their static forms.) */
#include <stdlib.h>
#include <string.h>

#include "core/value.h"
#include "kernels/kernel.h"
#include "core/value_quant.h"

/* ---- shared ---- */

typedef struct dyn_params {
  int rank;
  size_t esz;
  shlo_elem_type elem;
  int64_t out_dims[SHLO_MAX_RANK];
  int64_t tile; /* broadcast: how many copies of the operand */
} dyn_params;

static shlo_status setup(shlo_compiler *cc, const shlo_op *op,
                         shlo_step *step, int n_operands, dyn_params **out) {
  if (op->n_operands != n_operands || op->n_results != 1)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "expects %d operands and one result", n_operands);
  const shlo_type *it = shlo__cc_operand_type(cc, op, 0);
  const shlo_type *rt = shlo__cc_result_type(cc, op, 0);
  if (it->kind != SHLO_TYPE_TENSOR || !shlo_type_is_static(it) ||
      !shlo_type_is_static(rt))
    return shlo__cc_fail(cc, op, SHLO_EUNSUPPORTED,
                        "needs statically shaped operand and result");
  if (it->elem != rt->elem)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "operand and result element types differ");
  dyn_params *p = shlo__params_alloc(step, sizeof *p);
  if (!p) return SHLO_ENOMEM;
  p->rank = rt->rank;
  p->esz = shlo_elem_size(rt->elem);
  p->elem = rt->elem;
  memcpy(p->out_dims, rt->dims, sizeof p->out_dims);
  *out = p;
  return SHLO_OK;
}

/* Read a rank-1 integer operand of `rank` entries into v. */
static shlo_status read_sizes(const shlo_step *s, const shlo_value *t,
                              int rank, int64_t *v, const char *what,
                              shlo_exec *ex) {
  if (t->rank != 1 || t->numel != rank || !shlo_elem_is_int(t->elem))
    return shlo__exec_fail(ex, s, SHLO_ERUNTIME,
                          "%s must be a rank-1 integer tensor of %d values",
                          what, rank);
  for (int d = 0; d < rank; d++) v[d] = shlo_tensor_get_i64(t, d);
  return SHLO_OK;
}

/* Advance a multi-index over dims; false once it wraps around. */
static bool next_index(int64_t *idx, const int64_t *dims, int rank) {
  for (int d = rank - 1; d >= 0; d--) {
    if (++idx[d] < dims[d]) return true;
    idx[d] = 0;
  }
  return false;
}

/* ---- dynamic_pad ---- */

static shlo_status k_dynamic_pad(const shlo_step *s, shlo_value *const *in,
                                 shlo_value **out, shlo_exec *ex) {
  const dyn_params *p = s->params;
  const shlo_value *x = in[0];
  int64_t lo[SHLO_MAX_RANK], hi[SHLO_MAX_RANK], inner[SHLO_MAX_RANK];
  shlo_status st;
  if ((st = read_sizes(s, in[2], p->rank, lo, "edge_padding_low", ex)) ||
      (st = read_sizes(s, in[3], p->rank, hi, "edge_padding_high", ex)) ||
      (st = read_sizes(s, in[4], p->rank, inner, "interior_padding", ex)))
    return st;
  for (int d = 0; d < p->rank; d++) {
    int64_t span = x->dims[d] ? (x->dims[d] - 1) * (inner[d] + 1) + 1 : 0;
    if (inner[d] < 0 || lo[d] + span + hi[d] != p->out_dims[d])
      return shlo__exec_fail(ex, s, SHLO_ERUNTIME,
                            "padding of dimension %d gives size %lld, but "
                            "the result type says %lld",
                            d, (long long)(lo[d] + span + hi[d]),
                            (long long)p->out_dims[d]);
  }
  shlo_value *r = shlo_tensor_new(p->elem, p->rank, p->out_dims);
  if (!r) return shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory");
  shlo__value_share_quant(r, x);
  char *dst = r->data;
  for (int64_t i = 0; i < r->numel; i++)
    memcpy(dst + (size_t)i * p->esz, in[1]->data, p->esz);
  int64_t strides[SHLO_MAX_RANK], idx[SHLO_MAX_RANK] = {0};
  shlo_strides(p->rank, p->out_dims, strides);
  if (x->numel > 0) {
    int64_t k = 0;
    do {
      int64_t off = 0;
      bool inside = true;
      for (int d = 0; d < p->rank && inside; d++) {
        int64_t at = lo[d] + idx[d] * (inner[d] + 1);
        inside = at >= 0 && at < p->out_dims[d];
        off += at * strides[d];
      }
      if (inside)
        memcpy(dst + (size_t)off * p->esz,
               (const char *)x->data + (size_t)k * p->esz, p->esz);
      k++;
    } while (next_index(idx, x->dims, p->rank));
  }
  out[0] = r;
  return SHLO_OK;
}

/* stablehlo.dynamic_pad: pad with low/high/interior amounts given as
 * rank-1 operands (spec: dynamic_pad, C1-C4 as for pad). */
shlo_status shlo__compile_dynamic_pad(shlo_compiler *cc, const shlo_op *op,
                                     shlo_step *step) {
  dyn_params *p;
  shlo_status st = setup(cc, op, step, 5, &p);
  if (st) return st;
  if (shlo_type_numel(shlo__cc_operand_type(cc, op, 1)) != 1)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "padding_value must be a scalar");
  step->fn = k_dynamic_pad;
  return SHLO_OK;
}

/* ---- real_dynamic_slice ---- */

static shlo_status k_real_dynamic_slice(const shlo_step *s,
                                        shlo_value *const *in,
                                        shlo_value **out, shlo_exec *ex) {
  const dyn_params *p = s->params;
  const shlo_value *x = in[0];
  int64_t start[SHLO_MAX_RANK], limit[SHLO_MAX_RANK], step[SHLO_MAX_RANK];
  shlo_status st;
  if ((st = read_sizes(s, in[1], p->rank, start, "start_indices", ex)) ||
      (st = read_sizes(s, in[2], p->rank, limit, "limit_indices", ex)) ||
      (st = read_sizes(s, in[3], p->rank, step, "strides", ex)))
    return st;
  for (int d = 0; d < p->rank; d++) {
    if (start[d] < 0 || limit[d] < start[d] || limit[d] > x->dims[d] ||
        step[d] < 1)
      return shlo__exec_fail(ex, s, SHLO_ERUNTIME,
                            "slice [%lld:%lld:%lld] of dimension %d (size "
                            "%lld) is out of bounds",
                            (long long)start[d], (long long)limit[d],
                            (long long)step[d], d, (long long)x->dims[d]);
    int64_t n = (limit[d] - start[d] + step[d] - 1) / step[d];
    if (n != p->out_dims[d])
      return shlo__exec_fail(ex, s, SHLO_ERUNTIME,
                            "slice of dimension %d has %lld elements, but "
                            "the result type says %lld",
                            d, (long long)n, (long long)p->out_dims[d]);
  }
  shlo_value *r = shlo_tensor_new(p->elem, p->rank, p->out_dims);
  if (!r) return shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory");
  shlo__value_share_quant(r, x);
  int64_t xs[SHLO_MAX_RANK], idx[SHLO_MAX_RANK] = {0};
  shlo_strides(p->rank, x->dims, xs);
  if (r->numel > 0) {
    int64_t k = 0;
    do {
      int64_t off = 0;
      for (int d = 0; d < p->rank; d++) off += (start[d] + idx[d] * step[d]) * xs[d];
      memcpy((char *)r->data + (size_t)k * p->esz,
             (const char *)x->data + (size_t)off * p->esz, p->esz);
      k++;
    } while (next_index(idx, p->out_dims, p->rank));
  }
  out[0] = r;
  return SHLO_OK;
}

/* stablehlo.real_dynamic_slice: slice with start/limit/strides given as
 * rank-1 operands. */
shlo_status shlo__compile_real_dynamic_slice(shlo_compiler *cc,
                                            const shlo_op *op,
                                            shlo_step *step) {
  dyn_params *p;
  shlo_status st = setup(cc, op, step, 4, &p);
  if (st) return st;
  step->fn = k_real_dynamic_slice;
  return SHLO_OK;
}

/* ---- broadcast (legacy) ---- */

static shlo_status k_broadcast(const shlo_step *s, shlo_value *const *in,
                               shlo_value **out, shlo_exec *ex) {
  const dyn_params *p = s->params;
  shlo_value *r = shlo_tensor_new(p->elem, p->rank, p->out_dims);
  if (!r) return shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory");
  shlo__value_share_quant(r, in[0]);
  /* The operand's dimensions are the result's trailing ones: the result
   * is the operand's bytes repeated. */
  for (int64_t t = 0; t < p->tile; t++)
    memcpy((char *)r->data + (size_t)t * in[0]->nbytes, in[0]->data,
           in[0]->nbytes);
  out[0] = r;
  return SHLO_OK;
}

/* stablehlo.broadcast: result shape is broadcast_sizes followed by the
 * operand's shape. */
shlo_status shlo__compile_broadcast(shlo_compiler *cc, const shlo_op *op,
                                   shlo_step *step) {
  dyn_params *p;
  shlo_status st = setup(cc, op, step, 1, &p);
  if (st) return st;
  const shlo_type *it = shlo__cc_operand_type(cc, op, 0);
  int64_t sizes[SHLO_MAX_RANK];
  int n = shlo_attr_i64s(shlo_op_attr(op, "broadcast_sizes"), sizes,
                         SHLO_MAX_RANK);
  if (n < 0 || n + it->rank != p->rank)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "broadcast_sizes and the operand's shape must make "
                        "the result's shape");
  p->tile = 1;
  for (int d = 0; d < n; d++) {
    if (sizes[d] != p->out_dims[d])
      return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                          "result dimension %d is %lld, broadcast_sizes says "
                          "%lld", d, (long long)p->out_dims[d],
                          (long long)sizes[d]);
    p->tile *= sizes[d];
  }
  for (int d = 0; d < it->rank; d++)
    if (it->dims[d] != p->out_dims[n + d])
      return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                          "result dimension %d must equal operand dimension "
                          "%d", n + d, d);
  step->fn = k_broadcast;
  return SHLO_OK;
}
