/* SPDX-License-Identifier: Apache-2.0 */
/* custom_call @stablehlo.dynamic_approx_top_k (custom_targets.h): what
 * JAX writes for lax.approx_max_k / approx_min_k in a shape-polymorphic
 * export.  Operands: inputs[n], init_values[n], k; results[n], each the
 * inputs' shape with reduction_dim (mhlo.backend_config) of size k; the
 * comparator is the function called_computations names, in sort's form
 * (lhs_0, rhs_0, lhs_1, rhs_1, ...) -> i1.
 *
 * On CPU, XLA runs ApproxTopK as its exact fallback: sort each slice along
 * reduction_dim by the comparator (stably) and keep the first k.  So does
 * this kernel; the init values only pad TPU's partial reductions and are
 * not read.  One comparator call per comparison (a merge sort): correct,
 * not fast. */
#include <string.h>

#include "core/alloc.h"
#include "core/value.h"
#include "kernels/custom_targets.h"

enum { DTK_MAX = 8 };

typedef struct dtk_params {
  int n, rank, dim;
  const shlo_plan *cmp; /* the compiler's, shared with func.call */
  int64_t in_dims[SHLO_MAX_RANK], k;
  int64_t outer, len, inner; /* slices: outer x len x inner */
  shlo_elem_type elem[DTK_MAX];
} dtk_params;

typedef struct dtk_ctx {
  const dtk_params *p;
  shlo_value *const *in;
  int64_t base; /* element of the slice's first entry */
  shlo_exec *ex;
  shlo_status st;
} dtk_ctx;

/* Whether entry a goes before entry b: the comparator on their elements
 * (false once a call has failed). */
static bool before(dtk_ctx *c, int64_t a, int64_t b) {
  const dtk_params *p = c->p;
  if (c->st)
    return false;
  shlo_value *args[2 * DTK_MAX] = {0}, *res[1] = {0};
  for (int k = 0; k < p->n && !c->st; k++)
    for (int side = 0; side < 2; side++) {
      int64_t at = c->base + (side ? b : a) * p->inner;
      size_t es = shlo_elem_size(p->elem[k]);
      shlo_value *v = shlo_tensor_new(p->elem[k], 0, NULL);
      if (!v) {
        c->st = SHLO_ENOMEM;
        break;
      }
      memcpy(v->data, (const char *)c->in[k]->data + (size_t)at * es, es);
      args[2 * k + side] = v;
    }
  if (!c->st)
    c->st = shlo__plan_run(p->cmp, c->ex, args, res);
  bool r = !c->st && res[0] && res[0]->numel >= 1 &&
           ((const uint8_t *)res[0]->data)[0];
  shlo_value_unref(res[0]);
  for (int i = 0; i < 2 * p->n; i++)
    shlo_value_unref(args[i]);
  return r;
}

/* Stable merge sort of idx[0..n) by `before`, tmp as scratch. */
static void merge_sort(dtk_ctx *c, int64_t *idx, int64_t *tmp, int64_t n) {
  for (int64_t w = 1; w < n && !c->st; w *= 2)
    for (int64_t lo = 0; lo < n; lo += 2 * w) {
      int64_t mid = lo + w < n ? lo + w : n;
      int64_t hi = lo + 2 * w < n ? lo + 2 * w : n, i = lo, j = mid, o = lo;
      while (i < mid && j < hi)
        tmp[o++] = before(c, idx[j], idx[i]) ? idx[j++] : idx[i++];
      while (i < mid)
        tmp[o++] = idx[i++];
      while (j < hi)
        tmp[o++] = idx[j++];
      memcpy(idx + lo, tmp + lo, (size_t)(hi - lo) * sizeof *idx);
    }
}

static shlo_status k_dynamic_approx_top_k(const shlo_step *s,
                                          shlo_value *const *in,
                                          shlo_value **out, shlo_exec *ex) {
  const dtk_params *p = s->params;
  int64_t k_given = shlo_tensor_get_i64(in[2 * p->n], 0);
  if (k_given != p->k)
    return shlo__exec_fail(ex, s, SHLO_EINPUT,
                           "k = %lld, but the results hold %lld",
                           (long long)k_given, (long long)p->k);
  int64_t out_dims[SHLO_MAX_RANK];
  memcpy(out_dims, p->in_dims, sizeof out_dims);
  out_dims[p->dim] = p->k;
  shlo_value *res[DTK_MAX] = {0};
  int64_t len = p->len > 0 ? p->len : 1;
  int64_t *idx = shlo__malloc((size_t)(2 * len) * sizeof *idx);
  dtk_ctx c = {p, in, 0, ex, SHLO_OK};
  for (int k = 0; k < p->n && idx; k++)
    if (!(res[k] = shlo_tensor_new(p->elem[k], p->rank, out_dims)))
      break;
  if (!idx || (p->n > 0 && !res[p->n - 1]))
    c.st = SHLO_ENOMEM;
  for (int64_t o = 0; o < p->outer && !c.st; o++)
    for (int64_t i = 0; i < p->inner && !c.st; i++) {
      if (shlo__exec_should_stop(ex)) {
        c.st = shlo__exec_stopped(ex, s);
        break;
      }
      c.base = o * p->len * p->inner + i;
      for (int64_t j = 0; j < p->len; j++)
        idx[j] = j;
      merge_sort(&c, idx, idx + len, p->len);
      for (int k = 0; k < p->n && !c.st; k++) {
        size_t es = shlo_elem_size(p->elem[k]);
        for (int64_t j = 0; j < p->k; j++)
          memcpy((char *)res[k]->data +
                     (size_t)((o * p->k + j) * p->inner + i) * es,
                 (const char *)in[k]->data +
                     (size_t)(c.base + idx[j] * p->inner) * es,
                 es);
      }
    }
  shlo__free(idx);
  if (c.st) {
    for (int k = 0; k < p->n; k++)
      shlo_value_unref(res[k]);
    if (c.st == SHLO_ENOMEM)
      return shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory");
    return c.st; /* the comparator's failure, already reported */
  }
  for (int k = 0; k < p->n; k++)
    out[k] = res[k];
  return SHLO_OK;
}




shlo_status shlo__compile_dynamic_approx_top_k(shlo_compiler *cc,
                                               const shlo_op *op,
                                               shlo_step *step) {
  const char *me = "stablehlo.dynamic_approx_top_k";
  int n = op->n_results;
  if (n < 1 || n > DTK_MAX || shlo__approx_top_k_operands(op) != 2 * n + 1)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                         "%s takes 2 n + 1 operands "
                         "for n results (1 to %d)",
                         me, DTK_MAX);
  const shlo_type *t0 = shlo__cc_operand_type(cc, op, 0);
  const shlo_type *r0 = shlo__cc_result_type(cc, op, 0);
  if (t0->kind != SHLO_TYPE_TENSOR || !shlo_type_is_static(t0) ||
      r0->kind != SHLO_TYPE_TENSOR || !shlo_type_is_static(r0) ||
      r0->rank != t0->rank)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                         "%s needs static inputs and "
                         "results of one rank",
                         me);
  int dim = shlo__approx_top_k_dim(op, t0->rank);
  if (dim < 0)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                         "%s needs an i64 reduction_dim "
                         "in range in mhlo.backend_config",
                         me);
  dtk_params *p = shlo__params_alloc(step, sizeof *p);
  if (!p)
    return shlo__cc_fail(cc, op, SHLO_ENOMEM, "out of memory");
  p->n = n, p->rank = t0->rank, p->dim = dim, p->k = r0->dims[dim];
  memcpy(p->in_dims, t0->dims, (size_t)t0->rank * sizeof *p->in_dims);
  p->outer = 1, p->inner = 1, p->len = t0->dims[dim];
  for (int d = 0; d < dim; d++)
    p->outer *= t0->dims[d];
  for (int d = dim + 1; d < t0->rank; d++)
    p->inner *= t0->dims[d];
  if (p->k > p->len)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                         "%s: k = %lld is more than "
                         "the %lld entries",
                         me, (long long)p->k, (long long)p->len);
  for (int k = 0; k < n; k++) {
    const shlo_type *x = shlo__cc_operand_type(cc, op, k);
    const shlo_type *iv = shlo__cc_operand_type(cc, op, n + k);
    const shlo_type *rt = shlo__cc_result_type(cc, op, k);
    bool ok = x->kind == SHLO_TYPE_TENSOR && x->rank == t0->rank && !x->quant;
    for (int d = 0; ok && d < t0->rank; d++)
      ok = x->dims[d] == t0->dims[d] && rt->kind == SHLO_TYPE_TENSOR &&
           rt->rank == t0->rank && rt->dims[d] == r0->dims[d];
    ok = ok && iv->kind == SHLO_TYPE_TENSOR && iv->rank == 0 &&
         iv->elem == x->elem && rt->elem == x->elem;
    if (!ok)
      return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                           "%s: input %d, its initial "
                           "value and output %d must agree with input 0 and "
                           "output 0",
                           me, k, k);
    p->elem[k] = x->elem;
  }
  const shlo_type *kt = shlo__cc_operand_type(cc, op, 2 * n);
  shlo_elem_class kc = shlo_elem_class_of(kt->elem);
  if (kt->kind != SHLO_TYPE_TENSOR || kt->rank != 0 ||
      (kc != SHLO_CLASS_SINT && kc != SHLO_CLASS_UINT))
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                         "%s: k must be an integer "
                         "scalar",
                         me);
  const shlo_attr *cs = shlo_op_attr(op, "called_computations");
  const char *name = cs && cs->kind == SHLO_ATTR_ARRAY && cs->n == 1
                         ? shlo_attr_get_str(cs->items[0])
                         : NULL;
  if (!name)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                         "%s needs called_computations "
                         "naming its comparator",
                         me);
  shlo_plan *plan;
  shlo_status st = shlo__cc_func_plan(cc, op, name, &plan);
  if (st)
    return st;
  if (plan->n_args != 2 * n || plan->n_results != 1)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                         "%s: comparator '@%s' must "
                         "take %d scalars and give one i1",
                         me, name, 2 * n);
  p->cmp = plan;
  step->fn = k_dynamic_approx_top_k;
  return SHLO_OK;
}
