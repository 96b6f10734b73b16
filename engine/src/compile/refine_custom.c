/* Shape rules of the custom_call targets that stand for ops with dynamic
 * shapes (refine_int.h): JAX's shape-polymorphic exports write
 * `stablehlo.dynamic_top_k` where the op's k is only known at call time,
 * and sharded exports wrap values in annotations that leave one process's
 * shapes as they are. */
#include <string.h>

#include "compile/refine_int.h"
#include "kernels/custom_targets.h"

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
  if (target && !strcmp(target, "stablehlo.dynamic_rng_bit_generator"))
    return dynamic_rng(F, op);
  if (target && shlo__custom_is_annotation(target) && op->n_operands >= 1)
    return identity(F, op);
  return shlo__refine_fail(F, op, SHLO_EUNSUPPORTED,
                           "no shape refinement rule for custom_call target "
                           "'%s' with a dynamic result",
                           target ? target : "?");
}
