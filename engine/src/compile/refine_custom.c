/* SPDX-License-Identifier: Apache-2.0 */
/* Shape rules of the custom_call targets that stand for ops with dynamic
 * shapes (refine_int.h): JAX's shape-polymorphic exports write
 * `stablehlo.dynamic_top_k` where the op's k is only known at call time,
 * and sharded exports wrap values in annotations that leave one process's
 * shapes as they are. */
#include <string.h>

#include "compile/refine_int.h"
#include "ops/custom_targets.h"

/* dynamic_top_k(operand, k): both results are the operand's shape with the
 * last dimension k, k a folded scalar in [0, last dimension]. */
static shlo_status dynamic_top_k(refine_func *F, const shlo_op *op) {
  if (op->n_operands != 2 || op->n_results != 2)
    return shlo__refine_fail(F, op, SHLO_EVERIFY,
                             "stablehlo.dynamic_top_k "
                             "takes an operand and k and gives two results");
  const shlo_type *t = F->types[op->operands[0]];
  const int64_t *k = F->known[op->operands[1]];
  if (t->kind != SHLO_TYPE_TENSOR || t->rank < 1)
    return shlo__refine_fail(F, op, SHLO_EVERIFY,
                             "stablehlo.dynamic_top_k "
                             "needs an operand of rank 1 or more");
  if (!k)
    return shlo__refine_fail(F, op, SHLO_EUNSUPPORTED,
                             "k of "
                             "stablehlo.dynamic_top_k does not fold to a "
                             "constant for these argument shapes");
  int64_t last = t->dims[t->rank - 1];
  if (last >= 0 && (k[0] < 0 || k[0] > last))
    return shlo__refine_fail(F, op, SHLO_EINPUT,
                             "k = %lld of "
                             "stablehlo.dynamic_top_k is outside [0, %lld]",
                             (long long)k[0], (long long)last);
  int64_t dims[SHLO_MAX_RANK];
  memcpy(dims, t->dims, (size_t)t->rank * sizeof *dims);
  dims[t->rank - 1] = k[0];
  shlo_status st = shlo__refine_set(F, op, 0, t->rank, dims);
  return st ? st : shlo__refine_set(F, op, 1, t->rank, dims);
}

/* dynamic_rng_bit_generator(state, shape): the new state is like the
 * old, the output's shape is the folded values of `shape`. */
static shlo_status dynamic_rng(refine_func *F, const shlo_op *op) {
  if (op->n_operands != 2 || op->n_results != 2)
    return shlo__refine_fail(F, op, SHLO_EVERIFY,
                             "stablehlo.dynamic_rng_bit_"
                             "generator takes a state and a shape and gives "
                             "two results");
  const shlo_type *st = F->types[op->operands[0]];
  const shlo_type *sh = F->types[op->operands[1]];
  const int64_t *v = F->known[op->operands[1]];
  if (st->kind != SHLO_TYPE_TENSOR || sh->kind != SHLO_TYPE_TENSOR ||
      sh->rank != 1 || sh->dims[0] < 0 || sh->dims[0] > SHLO_MAX_RANK)
    return shlo__refine_fail(F, op, SHLO_EVERIFY,
                             "stablehlo.dynamic_rng_bit_"
                             "generator needs a tensor state and a 1-d shape");
  if (!v)
    return shlo__refine_fail(F, op, SHLO_EUNSUPPORTED,
                             "the output shape of "
                             "stablehlo.dynamic_rng_bit_generator does not "
                             "fold to a constant for these argument shapes");
  for (int i = 0; i < sh->dims[0]; i++)
    if (v[i] < 0)
      return shlo__refine_fail(F, op, SHLO_EINPUT,
                               "output shape has the "
                               "negative size %lld",
                               (long long)v[i]);
  shlo_status st2 = shlo__refine_set(F, op, 0, st->rank, st->dims);
  return st2 ? st2 : shlo__refine_set(F, op, 1, (int)sh->dims[0], v);
}

/* dynamic_reduce_window(inputs[n], inits[n], window_dimensions, strides,
 * base_dilations, window_dilations, padding): reduce_window's shape rule
 * with the window's folded values. */
static shlo_status dynamic_reduce_window(refine_func *F, const shlo_op *op) {
  int n = op->n_results;
  if (n < 1 || op->n_operands != 2 * n + 5)
    return shlo__refine_fail(F, op, SHLO_EVERIFY,
                             "stablehlo.dynamic_reduce_"
                             "window takes 2 n + 5 operands for n results");
  const shlo_type *t = F->types[op->operands[0]];
  if (t->kind != SHLO_TYPE_TENSOR || t->rank < 0)
    return shlo__refine_fail(F, op, SHLO_EVERIFY,
                             "stablehlo.dynamic_reduce_"
                             "window needs ranked tensor inputs");
  const int64_t *v[5];
  for (int j = 0; j < 5; j++) {
    const shlo_type *vt = F->types[op->operands[2 * n + j]];
    v[j] = F->known[op->operands[2 * n + j]];
    int64_t want = j == 4 ? 2 * (int64_t)t->rank : t->rank;
    if (!v[j] || vt->kind != SHLO_TYPE_TENSOR || shlo_type_numel(vt) != want)
      return shlo__refine_fail(F, op, SHLO_EUNSUPPORTED,
                               "the window of "
                               "stablehlo.dynamic_reduce_window does not fold "
                               "to constants for these argument shapes");
  }
  int64_t dims[SHLO_MAX_RANK];
  for (int d = 0; d < t->rank; d++) {
    bool ok = v[4][2 * d] >= -INT32_MAX && v[4][2 * d] <= INT32_MAX &&
              v[4][2 * d + 1] >= -INT32_MAX && v[4][2 * d + 1] <= INT32_MAX;
    for (int j = 0; j < 4; j++)
      ok = ok && v[j][d] >= 1 && v[j][d] <= INT32_MAX;
    if (!ok)
      return shlo__refine_fail(F, op, SHLO_EINPUT,
                               "window of dimension %d "
                               "out of range",
                               d);
    dims[d] = shlo__reduce_window_size(t->dims[d], v[0][d], v[1][d], v[2][d],
                                       v[3][d], v[4][2 * d], v[4][2 * d + 1]);
  }
  for (int k = 0; k < n; k++) {
    shlo_status st = shlo__refine_set(F, op, k, t->rank, dims);
    if (st)
      return st;
  }
  return SHLO_OK;
}

/* dynamic_approx_top_k(inputs[n], inits[n], k): each result the inputs'
 * shape with reduction_dim of size k (XLA's exact fallback on CPU). */
static shlo_status dynamic_approx_top_k(refine_func *F, const shlo_op *op) {
  int n = op->n_results;
  if (n < 1 || shlo__approx_top_k_operands(op) != 2 * n + 1)
    return shlo__refine_fail(F, op, SHLO_EVERIFY,
                             "stablehlo.dynamic_approx_top_k takes 2 n + 1 "
                             "operands for n results (then the shape "
                             "operands it names)");
  const shlo_type *t = F->types[op->operands[0]];
  const int64_t *k = F->known[op->operands[2 * n]];
  int dim =
      t->kind == SHLO_TYPE_TENSOR ? shlo__approx_top_k_dim(op, t->rank) : -1;
  if (dim < 0)
    return shlo__refine_fail(F, op, SHLO_EVERIFY,
                             "stablehlo.dynamic_approx_"
                             "top_k needs a reduction_dim within the rank");
  if (!k)
    return shlo__refine_fail(F, op, SHLO_EUNSUPPORTED,
                             "k of "
                             "stablehlo.dynamic_approx_top_k does not fold to "
                             "a constant for these argument shapes");
  if (k[0] < 0 || k[0] > t->dims[dim])
    return shlo__refine_fail(F, op, SHLO_EINPUT,
                             "k = %lld is outside [0, "
                             "%lld]",
                             (long long)k[0], (long long)t->dims[dim]);
  int64_t dims[SHLO_MAX_RANK];
  memcpy(dims, t->dims, (size_t)t->rank * sizeof *dims);
  dims[dim] = k[0];
  for (int r = 0; r < n; r++) {
    shlo_status st = shlo__refine_set(F, op, r, t->rank, dims);
    if (st)
      return st;
  }
  return SHLO_OK;
}

/* An annotation: each result has operand 0's shape. */
static shlo_status identity(refine_func *F, const shlo_op *op) {
  const shlo_type *t = F->types[op->operands[0]];
  if (t->kind != SHLO_TYPE_TENSOR || op->n_results != 1)
    return shlo__refine_fail(F, op, SHLO_EVERIFY,
                             "a sharding annotation "
                             "takes one tensor and gives one");
  return shlo__refine_set(F, op, 0, t->rank, t->dims);
}

shlo_status shlo__refine_custom_call(refine_func *F, const shlo_op *op) {
  const char *target = shlo_attr_get_str(shlo_op_attr(op, "call_target_name"));
  if (target && !strcmp(target, "stablehlo.dynamic_top_k"))
    return dynamic_top_k(F, op);
  if (target && !strcmp(target, "stablehlo.dynamic_approx_top_k"))
    return dynamic_approx_top_k(F, op);
  if (target && !strcmp(target, "stablehlo.dynamic_reduce_window"))
    return dynamic_reduce_window(F, op);
  if (target && !strcmp(target, "stablehlo.dynamic_rng_bit_generator"))
    return dynamic_rng(F, op);
  if (target && shlo__custom_is_annotation(target) && op->n_operands >= 1)
    return identity(F, op);
  return shlo__refine_fail(F, op, SHLO_EUNSUPPORTED,
                           "no shape refinement rule for custom_call target "
                           "'%s' with a dynamic result",
                           target ? target : "?");
}
