/* SPDX-License-Identifier: Apache-2.0 */
/* custom_call targets that stand for ops (custom_targets.h).
 *
 * shape_assertion(pred, v0, v1, ...) {error_message = "... {0} ..."}:
 * JAX's check that the argument shapes meet the export's constraints.
 * Shape refinement (refine.c) evaluates it when the program has dynamic
 * shapes; a static program runs it here, before anything that depends on
 * it: a false predicate ends the execution with SHLO_EINPUT and JAX's
 * message, each {k} replaced by operand k + 1's value. */
#include <stdio.h>
#include <string.h>

#include "core/value.h"
#include "kernels/custom_targets.h"


bool shlo__custom_target_known(const char *target) {
  return !strcmp(target, "shape_assertion") ||
         !strcmp(target, "stablehlo.dynamic_top_k") ||
         !strcmp(target, "stablehlo.dynamic_rng_bit_generator") ||
         !strcmp(target, "stablehlo.dynamic_reduce_window") ||
         !strcmp(target, "stablehlo.dynamic_approx_top_k") ||
         shlo__custom_is_annotation(target);
}

/* ---- annotations: identities on one process ---- */

static shlo_status k_identity(const shlo_step *s, shlo_value *const *in,
                              shlo_value **out, shlo_exec *ex) {
  (void)s, (void)ex;
  out[0] = shlo_value_ref(in[0]);
  return SHLO_OK;
}

/* A marker with no result: nothing to do. */
static shlo_status k_identity_none(const shlo_step *s, shlo_value *const *in,
                                   shlo_value **out, shlo_exec *ex) {
  (void)s, (void)in, (void)out, (void)ex;
  return SHLO_OK;
}

static shlo_status compile_annotation(shlo_compiler *cc, const shlo_op *op,
                                      shlo_step *step, const char *target) {
  if (op->n_results == 0) { /* a pure marker (xla.sdy.ShardingGroup) */
    step->fn = k_identity_none;
    return SHLO_OK;
  }
  if (op->n_operands != 1 || op->n_results != 1)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                         "%s takes one operand and gives one result", target);
  const shlo_type *a = shlo__cc_operand_type(cc, op, 0);
  const shlo_type *r = shlo__cc_result_type(cc, op, 0);
  if (!shlo_type_equal(a, r))
    return shlo__cc_fail(cc, op, SHLO_EUNSUPPORTED,
                         "%s changes the shape (a shard of a partitioned "
                         "value): partitioning a value across processes by "
                         "its sharding is not supported; one process runs "
                         "the unpartitioned program",
                         target);
  step->fn = k_identity;
  return SHLO_OK;
}

/* ---- shape_assertion ---- */

typedef struct assert_params {
  const char *message; /* module-owned */
} assert_params;

/* Operand k of a shape_assertion as text (its first element: the
 * operands are scalars). */
static void operand_text(char *buf, size_t cap, const shlo_value *v) {
  int64_t x = 0;
  if (v->numel < 1) {
    snprintf(buf, cap, "?");
    return;
  }
  switch (shlo_elem_size(v->elem)) {
  case 1: x = *(const int8_t *)v->data; break;
  case 2: x = *(const int16_t *)v->data; break;
  case 4: x = *(const int32_t *)v->data; break;
  default: x = *(const int64_t *)v->data; break;
  }
  if (v->elem == SHLO_UI32)
    x = *(const uint32_t *)v->data;
  snprintf(buf, cap, "%lld", (long long)x);
}

static shlo_status k_shape_assertion(const shlo_step *s, shlo_value *const *in,
                                     shlo_value **out, shlo_exec *ex) {
  (void)out;
  const assert_params *p = s->params;
  if (in[0]->numel >= 1 && ((const uint8_t *)in[0]->data)[0])
    return SHLO_OK;
  char msg[1024];
  size_t n = 0;
  for (const char *c = p->message; *c && n + 32 < sizeof msg; c++) {
    int k = 0, used = 0;
    if (*c == '{' && sscanf(c, "{%d}%n", &k, &used) == 1 && used > 0 &&
        k >= 0 && k + 1 < s->n_in) {
      operand_text(msg + n, sizeof msg - n, in[k + 1]);
      n += strlen(msg + n);
      c += used - 1;
    } else {
      msg[n++] = *c;
    }
  }
  msg[n] = 0;
  return shlo__exec_fail(ex, s, SHLO_EINPUT, "%s", msg);
}

static shlo_status compile_assertion(shlo_compiler *cc, const shlo_op *op,
                                     shlo_step *step) {
  if (op->n_operands < 1 || op->n_results != 0)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                         "shape_assertion takes a "
                         "predicate and values and gives no result");
  for (int k = 0; k < op->n_operands; k++) {
    const shlo_type *t = shlo__cc_operand_type(cc, op, k);
    bool ok = t->kind == SHLO_TYPE_TENSOR && t->rank == 0 &&
              (k == 0 ? t->elem == SHLO_I1
                      : shlo_elem_class_of(t->elem) == SHLO_CLASS_SINT ||
                            shlo_elem_class_of(t->elem) == SHLO_CLASS_UINT);
    if (!ok)
      return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                           "shape_assertion operand %d "
                           "must be a scalar %s",
                           k, k == 0 ? "i1" : "integer");
  }
  assert_params *p = shlo__params_alloc(step, sizeof *p);
  if (!p)
    return shlo__cc_fail(cc, op, SHLO_ENOMEM, "out of memory");
  p->message = shlo_attr_get_str(shlo_op_attr(op, "error_message"));
  if (!p->message)
    p->message = "shape assertion failed";
  step->fn = k_shape_assertion;
  return SHLO_OK;
}

/* ---- stablehlo.dynamic_rng_bit_generator ---- */

/* (state, shape) {mhlo.attributes = {rng_algorithm = ...}}, refined: the
 * op rng_bit_generator(state) with that algorithm and the refined output
 * type.  Its compile function sees a copy of the op that has the one
 * operand and the attributes the op would have; the kernel reads only
 * the state. */
static shlo_status compile_dynamic_rng(shlo_compiler *cc, const shlo_op *op,
                                       shlo_step *step) {
  if (op->n_operands != 2 || op->n_results != 2)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                         "stablehlo.dynamic_rng_bit_"
                         "generator takes a state and a shape and gives two "
                         "results");
  const shlo_type *ot = shlo__cc_result_type(cc, op, 1);
  if (ot->kind != SHLO_TYPE_TENSOR || !shlo_type_is_static(ot))
    return shlo__cc_fail(cc, op, SHLO_EUNSUPPORTED,
                         "stablehlo.dynamic_rng_"
                         "bit_generator's output shape is not known here");
  const shlo_attr *attrs = shlo_op_attr(op, "mhlo.attributes");
  /* rng_algorithm: an attribute of the call itself (JAX's exports), or
   * in mhlo.attributes */
  shlo_op as_op = *op;
  as_op.n_operands = 1;
  if (attrs && attrs->kind == SHLO_ATTR_STRUCT) {
    as_op.n_attrs = attrs->n;
    as_op.attrs = attrs->fields;
  }
  return shlo__compile_rng_bit_generator(cc, &as_op, step);
}

/* ---- dispatch ---- */

shlo_status shlo__compile_custom_target(shlo_compiler *cc, const shlo_op *op,
                                        shlo_step *step, const char *target) {
  if (!strcmp(target, "shape_assertion"))
    return compile_assertion(cc, op, step);
  if (!strcmp(target, "stablehlo.dynamic_approx_top_k"))
    return shlo__compile_dynamic_approx_top_k(cc, op, step);
  if (!strcmp(target, "stablehlo.dynamic_reduce_window"))
    return shlo__compile_dynamic_reduce_window(cc, op, step);
  if (!strcmp(target, "stablehlo.dynamic_rng_bit_generator"))
    return compile_dynamic_rng(cc, op, step);
  if (!strcmp(target, "stablehlo.dynamic_top_k")) {
    /* refined: k is the results' last dimension */
    if (op->n_operands != 2 || op->n_results != 2)
      return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                           "stablehlo.dynamic_top_k "
                           "takes an operand and k and gives two results");
    const shlo_type *r = shlo__cc_result_type(cc, op, 0);
    if (r->kind != SHLO_TYPE_TENSOR || r->rank < 1 || !shlo_type_is_static(r))
      return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                           "stablehlo.dynamic_top_k "
                           "needs static results of rank 1 or more");
    return shlo__compile_top_k(cc, op, step, r->dims[r->rank - 1]);
  }
  return compile_annotation(cc, op, step, target);
}
