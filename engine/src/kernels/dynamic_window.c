/* SPDX-License-Identifier: Apache-2.0 */
/* custom_call @stablehlo.dynamic_reduce_window (custom_targets.h): what
 * JAX writes for a reduce_window (cumsum, pooling) of a shape-polymorphic
 * export.  Operands: inputs[n], init_values[n], window_dimensions,
 * window_strides, base_dilations, window_dilations (each rank values),
 * padding (rank x 2); results[n]; the body is the function that
 * called_computations names.  Shape refinement (refine_custom.c) gives the
 * results their sizes; this kernel reads the window from its operands at
 * run time, checks that it gives those sizes, and reduces each window in
 * order, starting from the init values, by calling the body.
 *
 * A rare construct, kept simple: one body call per window element. */
#include <string.h>

#include "core/value.h"
#include "kernels/custom_targets.h"

enum { DRW_MAX = 8 };

typedef struct drw_params {
  int n, rank;
  const shlo_plan *body; /* the compiler's, shared with func.call */
  int64_t in_dims[SHLO_MAX_RANK], out_dims[SHLO_MAX_RANK];
  shlo_elem_type elem[DRW_MAX];
} drw_params;

typedef struct drw_window {
  int64_t size[SHLO_MAX_RANK], stride[SHLO_MAX_RANK], base[SHLO_MAX_RANK],
      dil[SHLO_MAX_RANK], lo[SHLO_MAX_RANK], hi[SHLO_MAX_RANK];
} drw_window;


static shlo_status read_window(const shlo_step *s, const drw_params *p,
                               shlo_value *const *in, drw_window *w,
                               shlo_exec *ex) {
  int at = 2 * p->n, r = p->rank;
  for (int d = 0; d < r; d++) {
    w->size[d] = shlo_tensor_get_i64(in[at], d);
    w->stride[d] = shlo_tensor_get_i64(in[at + 1], d);
    w->base[d] = shlo_tensor_get_i64(in[at + 2], d);
    w->dil[d] = shlo_tensor_get_i64(in[at + 3], d);
    w->lo[d] = shlo_tensor_get_i64(in[at + 4], 2 * d);
    w->hi[d] = shlo_tensor_get_i64(in[at + 4], 2 * d + 1);
    if (w->size[d] < 1 || w->stride[d] < 1 || w->base[d] < 1 || w->dil[d] < 1 ||
        w->size[d] > INT32_MAX || w->stride[d] > INT32_MAX ||
        w->base[d] > INT32_MAX || w->dil[d] > INT32_MAX ||
        w->lo[d] < -INT32_MAX || w->lo[d] > INT32_MAX ||
        w->hi[d] < -INT32_MAX || w->hi[d] > INT32_MAX)
      return shlo__exec_fail(ex, s, SHLO_EINPUT,
                             "window of dimension %d out of range", d);
    int64_t out =
        shlo__reduce_window_size(p->in_dims[d], w->size[d], w->stride[d],
                                 w->base[d], w->dil[d], w->lo[d], w->hi[d]);
    if (out != p->out_dims[d])
      return shlo__exec_fail(ex, s, SHLO_EINPUT,
                             "the window gives dimension %d size %lld, the "
                             "result has %lld",
                             d, (long long)out, (long long)p->out_dims[d]);
  }
  return SHLO_OK;
}

/* The linear index of the input element under window position `win` of
 * result element `o`, or -1 where padding or a dilation hole is. */
static int64_t source(const drw_params *p, const drw_window *w,
                      const int64_t *o, const int64_t *win) {
  int64_t at = 0;
  for (int d = 0; d < p->rank; d++) {
    int64_t pos = o[d] * w->stride[d] + win[d] * w->dil[d] - w->lo[d];
    if (pos < 0 || pos % w->base[d])
      return -1;
    pos /= w->base[d];
    if (pos >= p->in_dims[d])
      return -1;
    at = at * p->in_dims[d] + pos;
  }
  return at;
}

/* Advance a multi-index over dims; false after the last. */
static bool next_index(int64_t *i, const int64_t *dims, int rank) {
  for (int d = rank - 1; d >= 0; d--) {
    if (++i[d] < dims[d])
      return true;
    i[d] = 0;
  }
  return false;
}

/* One result element: acc = body(acc, x) over the window, in order. */
static shlo_status reduce_one(const shlo_step *s, const drw_params *p,
                              const drw_window *w, shlo_value *const *in,
                              const int64_t *o, shlo_value **acc,
                              shlo_exec *ex) {
  int n = p->n;
  int64_t win[SHLO_MAX_RANK] = {0};
  for (int k = 0; k < n; k++)
    acc[k] = shlo_value_ref(in[n + k]);
  shlo_status st = SHLO_OK;
  bool any = true;
  for (int d = 0; d < p->rank; d++)
    any = any && w->size[d] > 0;
  while (any && !st) {
    shlo_value *args[2 * DRW_MAX], *res[DRW_MAX] = {0};
    int64_t from = source(p, w, o, win);
    for (int k = 0; k < n; k++) {
      args[k] = acc[k];
      if (from < 0) {
        args[n + k] = shlo_value_ref(in[n + k]);
        continue;
      }
      args[n + k] = shlo_tensor_new(p->elem[k], 0, NULL);
      if (!args[n + k]) {
        for (int j = 0; j < k; j++)
          shlo_value_unref(args[n + j]);
        return shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory");
      }
      size_t es = shlo_elem_size(p->elem[k]);
      memcpy(args[n + k]->data, (const char *)in[k]->data + (size_t)from * es,
             es);
    }
    st = shlo__plan_run(p->body, ex, args, res);
    for (int k = 0; k < n; k++)
      shlo_value_unref(args[n + k]);
    if (st)
      break;
    for (int k = 0; k < n; k++) {
      shlo_value_unref(acc[k]);
      acc[k] = res[k];
    }
    any = next_index(win, w->size, p->rank);
  }
  return st;
}

static shlo_status k_dynamic_reduce_window(const shlo_step *s,
                                           shlo_value *const *in,
                                           shlo_value **out, shlo_exec *ex) {
  const drw_params *p = s->params;
  drw_window w;
  shlo_status st = read_window(s, p, in, &w, ex);
  if (st)
    return st;
  shlo_value *res[DRW_MAX] = {0};
  int64_t numel = 1;
  for (int d = 0; d < p->rank; d++)
    numel *= p->out_dims[d];
  for (int k = 0; k < p->n; k++)
    if (!(res[k] = shlo_tensor_new(p->elem[k], p->rank, p->out_dims))) {
      st = shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory");
      goto done;
    }
  int64_t o[SHLO_MAX_RANK] = {0};
  for (int64_t i = 0; i < numel && !st; i++) {
    if ((i & 255) == 255 && shlo__exec_should_stop(ex)) {
      st = shlo__exec_stopped(ex, s);
      break;
    }
    shlo_value *acc[DRW_MAX] = {0};
    st = reduce_one(s, p, &w, in, o, acc, ex);
    for (int k = 0; k < p->n; k++) {
      size_t es = shlo_elem_size(p->elem[k]);
      if (!st)
        memcpy((char *)res[k]->data + (size_t)i * es, acc[k]->data, es);
      shlo_value_unref(acc[k]);
    }
    next_index(o, p->out_dims, p->rank);
  }
done:
  for (int k = 0; k < p->n; k++) {
    if (st)
      shlo_value_unref(res[k]);
    else
      out[k] = res[k];
  }
  return st;
}

static bool int_vector(const shlo_type *t, int rank, int64_t len2) {
  if (t->kind != SHLO_TYPE_TENSOR)
    return false;
  shlo_elem_class c = shlo_elem_class_of(t->elem);
  if (c != SHLO_CLASS_SINT && c != SHLO_CLASS_UINT)
    return false;
  if (len2 == 0)
    return t->rank == 1 && t->dims[0] == rank;
  return t->rank == 2 && t->dims[0] == rank && t->dims[1] == len2;
}

shlo_status shlo__compile_dynamic_reduce_window(shlo_compiler *cc,
                                                const shlo_op *op,
                                                shlo_step *step) {
  const char *me = "stablehlo.dynamic_reduce_window";
  int n = op->n_results;
  if (n < 1 || n > DRW_MAX || op->n_operands != 2 * n + 5)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                         "%s takes 2 n + 5 operands "
                         "for n results (1 to %d)",
                         me, DRW_MAX);
  const shlo_type *t0 = shlo__cc_operand_type(cc, op, 0);
  if (t0->kind != SHLO_TYPE_TENSOR || !shlo_type_is_static(t0))
    return shlo__cc_fail(cc, op, SHLO_EVERIFY, "%s needs static inputs", me);
  int r = t0->rank;
  drw_params *p = shlo__params_alloc(step, sizeof *p);
  if (!p)
    return shlo__cc_fail(cc, op, SHLO_ENOMEM, "out of memory");
  p->n = n;
  p->rank = r;
  memcpy(p->in_dims, t0->dims, (size_t)r * sizeof *p->in_dims);
  for (int k = 0; k < n; k++) {
    const shlo_type *x = shlo__cc_operand_type(cc, op, k);
    const shlo_type *iv = shlo__cc_operand_type(cc, op, n + k);
    const shlo_type *rt = shlo__cc_result_type(cc, op, k);
    bool ok = x->kind == SHLO_TYPE_TENSOR && shlo_type_is_static(x) &&
              x->rank == r && !x->quant && iv->kind == SHLO_TYPE_TENSOR &&
              iv->rank == 0 && iv->elem == x->elem &&
              rt->kind == SHLO_TYPE_TENSOR && shlo_type_is_static(rt) &&
              rt->rank == r && rt->elem == x->elem;
    if (!ok)
      return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                           "%s: input %d, its init "
                           "value and result %d must be static tensors of one "
                           "element type and rank %d (init: a scalar)",
                           me, k, k, r);
    for (int d = 0; d < r; d++)
      if (x->dims[d] != t0->dims[d] ||
          shlo__cc_result_type(cc, op, 0)->dims[d] != rt->dims[d])
        return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                             "%s: inputs (and results) "
                             "must have one shape",
                             me);
    p->elem[k] = x->elem;
  }
  memcpy(p->out_dims, shlo__cc_result_type(cc, op, 0)->dims,
         (size_t)r * sizeof *p->out_dims);
  for (int j = 0; j < 5; j++)
    if (!int_vector(shlo__cc_operand_type(cc, op, 2 * n + j), r,
                    j == 4 ? 2 : 0))
      return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                           "%s: operand %d must be "
                           "integers, %d of them%s",
                           me, 2 * n + j, r, j == 4 ? " x 2" : "");
  const shlo_attr *cs = shlo_op_attr(op, "called_computations");
  const char *body = cs && cs->kind == SHLO_ATTR_ARRAY && cs->n == 1
                         ? shlo_attr_get_str(cs->items[0])
                         : NULL;
  if (!body)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                         "%s needs called_computations "
                         "naming its body",
                         me);
  shlo_plan *plan;
  shlo_status st = shlo__cc_func_plan(cc, op, body, &plan);
  if (st)
    return st;
  if (plan->n_args != 2 * n || plan->n_results != n)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                         "%s: body '@%s' must take %d "
                         "scalars and give %d",
                         me, body, 2 * n, n);
  p->body = plan;
  step->fn = k_dynamic_reduce_window;
  return SHLO_OK;
}
