/* SPDX-License-Identifier: Apache-2.0 */
/* Control flow and value plumbing: constant, func.call, while, if, case,
 * tuple, get_tuple_element, optimization_barrier.
 *
 * Ops with regions run their sub-plans; each sub-plan takes its block
 * arguments followed by its captured outer values, which the step carries
 * as trailing inputs (see compile.c). */
#include <stdlib.h>
#include <string.h>

#include "core/value.h"
#include "core/alloc.h"
#include "kernels/kernel.h"
#include "core/value_quant.h"
#include "kernels/pack_scope.h"

static shlo_status run_region(const shlo_step *s, int r, shlo_value *const *in,
                              shlo_value *const *lead, int n,
                              shlo_value **results, shlo_exec *ex) {
  return shlo__step_run_region(s, r, in, lead, n, results, ex);
}

/* ---- constant ---- */

static shlo_status k_constant(const shlo_step *s, shlo_value *const *in,
                              shlo_value **out, shlo_exec *ex) {
  (void)in;
  (void)ex;
  out[0] = shlo_value_ref(*(shlo_value **)s->params);
  return SHLO_OK;
}

shlo_status shlo__compile_constant(shlo_compiler *cc, const shlo_op *op,
                                  shlo_step *step) {
  const shlo_attr *v = shlo_op_attr(op, "value");
  if (!v || v->kind != SHLO_ATTR_DENSE)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY, "needs a dense 'value'");
  if (op->n_results != 1 ||
      !shlo_value_has_type(v->dense, shlo__cc_result_type(cc, op, 0)))
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "value and result types differ");
  shlo_value **p = shlo__params_alloc(step, sizeof(shlo_value *));
  if (!p) return SHLO_ENOMEM;
  /* The module owns the literal and outlives the plan. */
  *p = v->dense;
  step->fn = k_constant;
  return SHLO_OK;
}

/* ---- identity, tuple, get_tuple_element ---- */

static shlo_status k_identity(const shlo_step *s, shlo_value *const *in,
                              shlo_value **out, shlo_exec *ex) {
  (void)ex;
  for (int i = 0; i < s->n_out; i++) out[i] = shlo_value_ref(in[i]);
  return SHLO_OK;
}

shlo_status shlo__compile_identity(shlo_compiler *cc, const shlo_op *op,
                                  shlo_step *step) {
  if (op->n_operands != op->n_results)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "needs as many results as operands");
  step->fn = k_identity;
  return SHLO_OK;
}

static shlo_status k_tuple(const shlo_step *s, shlo_value *const *in,
                           shlo_value **out, shlo_exec *ex) {
  int n = s->op->n_operands;
  shlo_value **elems = shlo__malloc((size_t)(n ? n : 1) * sizeof *elems);
  if (!elems) return shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory");
  for (int i = 0; i < n; i++) elems[i] = shlo_value_ref(in[i]);
  out[0] = shlo_tuple_new(n, elems);
  shlo__free(elems);
  return out[0] ? SHLO_OK : shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory");
}

shlo_status shlo__compile_tuple(shlo_compiler *cc, const shlo_op *op,
                               shlo_step *step) {
  (void)cc;
  (void)op;
  step->fn = k_tuple;
  return SHLO_OK;
}

static shlo_status k_get_tuple_element(const shlo_step *s,
                                       shlo_value *const *in, shlo_value **out,
                                       shlo_exec *ex) {
  (void)ex;
  int64_t idx = *(int64_t *)s->params;
  out[0] = shlo_value_ref(in[0]->elems[idx]);
  return SHLO_OK;
}

shlo_status shlo__compile_get_tuple_element(shlo_compiler *cc,
                                           const shlo_op *op,
                                           shlo_step *step) {
  int64_t idx;
  const shlo_type *t = shlo__cc_operand_type(cc, op, 0);
  if (!shlo_attr_get_i64(shlo_op_attr(op, "index"), &idx))
    return shlo__cc_fail(cc, op, SHLO_EVERIFY, "needs an integer 'index'");
  if (t->kind != SHLO_TYPE_TUPLE || idx < 0 || idx >= t->n_elems)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "(C1) index %lld is out of range of the tuple",
                        (long long)idx);
  int64_t *p = shlo__params_alloc(step, sizeof *p);
  if (!p) return SHLO_ENOMEM;
  *p = idx;
  step->fn = k_get_tuple_element;
  return SHLO_OK;
}

/* ---- func.call, composite ---- */

static shlo_status k_call_plan(const shlo_step *s, shlo_value *const *in,
                               shlo_value **out, shlo_exec *ex) {
  return shlo__plan_run(*(shlo_plan **)s->params, ex, in, out);
}

/* stablehlo.composite runs its decomposition function like a call. */
shlo_status shlo__compile_composite(shlo_compiler *cc, const shlo_op *op,
                                   shlo_step *step) {
  const char *callee =
      shlo_attr_get_str(shlo_op_attr(op, "decomposition"));
  if (!callee)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY, "needs a decomposition");
  shlo_plan *plan;
  shlo_status st = shlo__cc_func_plan(cc, op, callee, &plan);
  if (st) return st;
  if (plan->n_args != op->n_operands || plan->n_results != op->n_results)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "decomposition '@%s' does not match the composite's "
                        "operands and results", callee);
  shlo_plan **p = shlo__params_alloc(step, sizeof *p);
  if (!p) return SHLO_ENOMEM;
  *p = plan;
  step->fn = k_call_plan;
  return SHLO_OK;
}

shlo_status shlo__compile_call(shlo_compiler *cc, const shlo_op *op,
                              shlo_step *step) {
  const char *callee = shlo_attr_get_str(shlo_op_attr(op, "callee"));
  if (!callee) return shlo__cc_fail(cc, op, SHLO_EVERIFY, "needs a callee");
  shlo_plan *plan;
  shlo_status st = shlo__cc_func_plan(cc, op, callee, &plan);
  if (st) return st;
  if (plan->n_args != op->n_operands || plan->n_results != op->n_results)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "call to '@%s' passes %d arguments for %d and expects "
                        "%d results of %d",
                        callee, op->n_operands, plan->n_args, op->n_results,
                        plan->n_results);
  shlo_plan **p = shlo__params_alloc(step, sizeof *p);
  if (!p) return SHLO_ENOMEM;
  *p = plan; /* owned by the executable */
  step->fn = k_call_plan;
  return SHLO_OK;
}

/* ---- while ---- */

static bool scalar_true(const shlo_value *v) {
  return ((const uint8_t *)v->data)[0] != 0;
}

static void unref_all(shlo_value **v, int n) {
  for (int i = 0; i < n; i++) {
    shlo_value_unref(v[i]);
    v[i] = NULL;
  }
}

/* A loop whose values are all scalars and whose cond and body are scalar
 * programs runs in registers: no tensor per iteration. */
#define WHILE_SCALAR_MAX 16

static bool while_is_scalar(const shlo_step *s, shlo_value *const *in) {
  int n = s->op->n_operands;
  if (n > WHILE_SCALAR_MAX || !shlo__step_region_is_scalar(s, 0) ||
      !shlo__step_region_is_scalar(s, 1))
    return false;
  for (int i = 0; i < n; i++)
    if (in[i]->kind != SHLO_TYPE_TENSOR || in[i]->numel != 1) return false;
  return true;
}

static shlo_status k_while_scalar(const shlo_step *s, shlo_value *const *in,
                                  shlo_value **out, shlo_exec *ex) {
  int n = s->op->n_operands;
  /* the loop-carried values, a register each: a region copies them in
   * before it runs, so the body's results can replace them at once */
  _Alignas(16) unsigned char v[WHILE_SCALAR_MAX][16] = {{0}};
  const void *cur[WHILE_SCALAR_MAX];
  for (int i = 0; i < n; i++) {
    memcpy(v[i], in[i]->data, in[i]->nbytes);
    cur[i] = v[i];
  }
  shlo_scalar_frame *fr = shlo__malloc(2 * sizeof *fr); /* cond, body */
  if (!fr) return shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory");
  shlo__scalar_frame_init(&fr[0], s, 0, in, n);
  shlo__scalar_frame_init(&fr[1], s, 1, in, n);
  for (unsigned iter = 1;; iter++) {
    if ((iter & 1023) == 0 && shlo__exec_should_stop(ex)) {
      shlo__free(fr);
      return shlo__exec_stopped(ex, s);
    }
    shlo__scalar_frame_run(&fr[0], cur);
    if (!shlo__scalar_frame_result(&fr[0], 0)[0]) break;
    shlo__scalar_frame_run(&fr[1], cur);
    for (int i = 0; i < n; i++)
      memcpy(v[i], shlo__scalar_frame_result(&fr[1], i), 16);
  }
  shlo__free(fr);
  for (int i = 0; i < n; i++) {
    out[i] = shlo_tensor_new(in[i]->elem, in[i]->rank, in[i]->dims);
    if (!out[i]) return shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory");
    shlo__value_share_quant(out[i], in[i]);
    memcpy(out[i]->data, v[i], in[i]->nbytes);
  }
  return SHLO_OK;
}

/* The scope (pack_scope.h) over the f32 matrices the body returns
 * unchanged (s->params, a bool per operand), or NULL: none. */
static shlo__pack_scope *while_pack_scope(const shlo_step *s,
                                          shlo_value *const *in,
                                          shlo_exec *ex) {
  const bool *same = s->params;
  int n = s->op->n_operands, held = 0;
  shlo_value *stack[8];
  shlo_value **v =
      n <= 8 ? stack : shlo__malloc((size_t)n * sizeof *v);
  if (!v) return NULL;
  for (int i = 0; i < n; i++)
    if (same[i] && in[i]->kind == SHLO_TYPE_TENSOR &&
        in[i]->elem == SHLO_F32 && in[i]->rank == 2 && !in[i]->quant)
      v[held++] = in[i];
  shlo__pack_scope *scope = shlo__pack_scope_enter(ex, v, held);
  if (v != stack) shlo__free(v);
  return scope;
}

static shlo_status k_while(const shlo_step *s, shlo_value *const *in,
                           shlo_value **out, shlo_exec *ex) {
  int n = s->op->n_operands;
  if (while_is_scalar(s, in)) return k_while_scalar(s, in, out, ex);
  shlo_value **cur = shlo__calloc((size_t)n + 1, sizeof *cur);
  shlo_value **next = shlo__calloc((size_t)n + 1, sizeof *next);
  shlo__pack_scope *packs = NULL;
  shlo_status st = SHLO_OK;
  if (!cur || !next) {
    st = shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory");
    goto done;
  }
  for (int i = 0; i < n; i++) cur[i] = shlo_value_ref(in[i]);
  packs = while_pack_scope(s, in, ex);
  for (;;) {
    if (shlo__exec_should_stop(ex)) {
      st = shlo__exec_stopped(ex, s);
      goto done;
    }
    shlo_value *pred = NULL;
    st = run_region(s, 0, in, cur, n, &pred, ex);
    if (st) goto done;
    bool go = scalar_true(pred);
    shlo_value_unref(pred);
    if (!go) break;
    st = run_region(s, 1, in, cur, n, next, ex);
    if (st) goto done;
    unref_all(cur, n);
    memcpy(cur, next, (size_t)n * sizeof *cur);
    memset(next, 0, (size_t)n * sizeof *next);
  }
  memcpy(out, cur, (size_t)n * sizeof *cur);
  memset(cur, 0, (size_t)n * sizeof *cur);
done:
  shlo__pack_scope_leave(ex, packs);
  if (cur) unref_all(cur, n);
  shlo__free(cur);
  shlo__free(next);
  return st;
}

/* Per operand, whether the body returns its block argument i as its
 * result i: the value every iteration sees is the one the loop began
 * with.  The step's parameters, one bool per operand. */
static shlo_status while_invariants(shlo_step *step, int n) {
  bool *same = shlo__params_alloc(step, (size_t)n + 1);
  if (!same) return SHLO_ENOMEM;
  const shlo_plan *body = step->plans[1];
  for (int i = 0; i < n && i < body->n_args; i++)
    same[i] = body->result_slots[i] == body->arg_slots[i];
  return SHLO_OK;
}

shlo_status shlo__compile_while(shlo_compiler *cc, const shlo_op *op,
                               shlo_step *step) {
  if (op->n_regions != 2)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY, "needs cond and body regions");
  shlo_status st = shlo__cc_compile_regions(cc, op, step);
  if (st) return st;
  if (step->plans[0]->n_results != 1 ||
      step->plans[1]->n_results != op->n_operands)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "cond must return one i1 and body the loop values");
  if (while_invariants(step, op->n_operands))
    return shlo__cc_fail(cc, op, SHLO_ENOMEM, "out of memory");
  step->fn = k_while;
  return SHLO_OK;
}

/* ---- if, case ---- */

static shlo_status run_branch(const shlo_step *s, int r, shlo_value *const *in,
                              shlo_value **out, shlo_exec *ex) {
  return run_region(s, r, in, NULL, 0, out, ex);
}

static shlo_status k_if(const shlo_step *s, shlo_value *const *in,
                        shlo_value **out, shlo_exec *ex) {
  return run_branch(s, scalar_true(in[0]) ? 0 : 1, in, out, ex);
}

static shlo_status k_case(const shlo_step *s, shlo_value *const *in,
                          shlo_value **out, shlo_exec *ex) {
  int64_t i = shlo_tensor_get_i64(in[0], 0);
  /* Out-of-range indices select the last branch (spec: case). */
  if (i < 0 || i >= s->n_plans) i = s->n_plans - 1;
  return run_branch(s, (int)i, in, out, ex);
}

static shlo_status compile_branches(shlo_compiler *cc, const shlo_op *op,
                                    shlo_step *step) {
  shlo_status st = shlo__cc_compile_regions(cc, op, step);
  if (st) return st;
  for (int r = 0; r < step->n_plans; r++)
    if (step->plans[r]->n_results != op->n_results)
      return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                          "branch %d returns %d values but the op has %d "
                          "results",
                          r, step->plans[r]->n_results, op->n_results);
  return SHLO_OK;
}

shlo_status shlo__compile_if(shlo_compiler *cc, const shlo_op *op,
                            shlo_step *step) {
  if (op->n_regions != 2 || op->n_operands != 1)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "needs a predicate and two branches");
  step->fn = k_if;
  return compile_branches(cc, op, step);
}

shlo_status shlo__compile_case(shlo_compiler *cc, const shlo_op *op,
                              shlo_step *step) {
  if (op->n_regions < 1 || op->n_operands != 1)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "needs an index and at least one branch");
  step->fn = k_case;
  return compile_branches(cc, op, step);
}

shlo_status shlo__compile_return(shlo_compiler *cc, const shlo_op *op,
                                shlo_step *step) {
  (void)step;
  return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                      "a return must be the last op of its block");
}
