/* SPDX-License-Identifier: Apache-2.0 */
/* Verifiers of control flow, tuples and the rest: func.call, case, if,
 * while, tuple, get_tuple_element, optimization_barrier, rng,
 * rng_bit_generator, custom_call, composite, and the dynamic-shape ops
 * whose shape operand is a constant (dynamic_broadcast_in_dim,
 * dynamic_iota, dynamic_reshape). */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "core/suggest.h"
#include "verify/verify_int.h"

#define R SHLO_MAX_RANK

/* Results of a region's terminator against expected types. */
static bool region_returns(shlo__vctx *vc, const shlo_op *op,
                           const char *label, const char *what, int idx,
                           const shlo_block *b, int n,
                           const shlo_type *const *types, bool from_results) {
  const shlo_op *ret = shlo__region_terminator(b);
  int got = ret ? ret->n_operands : 0;
  if (got != n)
    return shlo__verr(vc, op, label, "%s %d returns %d values, expected %d",
                      what, idx, got, n);
  for (int i = 0; i < n; i++)
    if (!shlo__compat_type(shlo__otype(vc, ret, i), types[i]))
      return shlo__verr(vc, op, label, "%s %d returns %s at index %d but %s "
                        "%s", what, idx,
                        shlo__tstr(vc, shlo__otype(vc, ret, i)), i,
                        from_results ? "the op's result is" : "expected",
                        shlo__tstr(vc, types[i]));
  return true;
}

static const shlo_type **result_types(shlo__vctx *vc, const shlo_op *op,
                                      const shlo_type **buf, int cap) {
  for (int i = 0; i < op->n_results && i < cap; i++)
    buf[i] = shlo__rtype(vc, op, i);
  return buf;
}

/* Branches of if / case, under the spec's labels, which case numbers one
 * on from if's (its C1 is that there is a branch at all): if's C1 / case's
 * C2 each takes no arguments; C2 / C3 they return the same types; C3 / C4
 * those are the op's result types; the index/pred is a rank-0 tensor. */
static bool branches(shlo__vctx *vc, const shlo_op *op, bool is_case) {
  const char *no_args = is_case ? "C2" : "C1", *same_out = is_case ? "C3" : "C2",
             *results = is_case ? "C4" : "C3";
  const shlo_type *rt[64];
  if (op->n_results > 64) return true;
  result_types(vc, op, rt, 64);
  if (op->n_regions < 1)
    return shlo__verr(vc, op, "C1", "expects at least one branch");
  for (int i = 0; i < op->n_regions; i++)
    if (op->regions[i]->n_args)
      return shlo__verr(vc, op, no_args, "branch %d must have 0 arguments, "
                        "but has %d", i, op->regions[i]->n_args);
  const shlo_op *r0 = shlo__region_terminator(op->regions[0]);
  for (int i = 1; i < op->n_regions; i++) {
    const shlo_op *ri = shlo__region_terminator(op->regions[i]);
    int n0 = r0 ? r0->n_operands : 0, ni = ri ? ri->n_operands : 0;
    bool same = n0 == ni;
    for (int k = 0; same && k < n0; k++)
      same = shlo__compat_type(shlo__otype(vc, r0, k), shlo__otype(vc, ri, k));
    if (!same)
      return shlo__verr(vc, op, same_out, "branch 0 and branch %d have "
                        "mismatched return types", i);
  }
  if (!region_returns(vc, op, results, "branch", 0, op->regions[0],
                      op->n_results, rt, true))
    return false;
  const shlo_type *p = shlo__otype(vc, op, 0);
  if (!shlo__is_tensor(p) || p->rank != 0)
    return shlo__verr(vc, op, "I1", "operand %s should be a rank-0 tensor",
                      shlo__tstr(vc, p));
  return true;
}

/* if: pred is tensor<i1>; branches as case's (C1-C3). */
bool shlo__verify_if(shlo__vctx *vc, const shlo_op *op) {
  if (op->n_operands != 1)
    return shlo__verr(vc, op, NULL, "expects one operand (pred)");
  return branches(vc, op, false);
}

/* case: index is tensor<si32>; C1 at least one branch; C2 none takes
 * arguments; C3/C4 branch returns. */
bool shlo__verify_case(shlo__vctx *vc, const shlo_op *op) {
  if (op->n_operands != 1)
    return shlo__verr(vc, op, NULL, "expects one operand (index)");
  return branches(vc, op, true);
}

/* while: C1 cond takes the operand types and returns tensor<i1>; C2 body
 * takes and returns the operand types; C3 results have the operand
 * types. */
bool shlo__verify_while(shlo__vctx *vc, const shlo_op *op) {
  if (op->n_regions != 2)
    return shlo__verr(vc, op, NULL, "expects cond and body regions");
  int n = op->n_operands;
  if (op->n_results != n)
    return shlo__verr(vc, op, "C3", "has %d operands but %d results", n,
                      op->n_results);
  const shlo_type *ot[64];
  if (n > 64) return true;
  for (int i = 0; i < n; i++) {
    ot[i] = shlo__otype(vc, op, i);
    if (!shlo__compat_type(ot[i], shlo__rtype(vc, op, i)))
      return shlo__verr(vc, op, "C3", "result #%d %s must have operand #%d's "
                        "type %s", i, shlo__tstr(vc, shlo__rtype(vc, op, i)),
                        i, shlo__tstr(vc, ot[i]));
  }
  for (int k = 0; k < 2; k++) {
    const shlo_block *b = op->regions[k];
    const char *lab = k ? "C2" : "C1";
    if (b->n_args != n)
      return shlo__verr(vc, op, lab, "%s takes %d arguments, expected %d",
                        k ? "body" : "cond", b->n_args, n);
    for (int i = 0; i < n; i++)
      if (!shlo__compat_type(shlo__barg(vc, b, i), ot[i]))
        return shlo__verr(vc, op, lab, "%s argument #%d has type %s but "
                          "operand #%d is %s", k ? "body" : "cond", i,
                          shlo__tstr(vc, shlo__barg(vc, b, i)), i,
                          shlo__tstr(vc, ot[i]));
  }
  const shlo_op *cr = shlo__region_terminator(op->regions[0]);
  if (!cr || cr->n_operands != 1 || !shlo__is_bool(shlo__otype(vc, cr, 0)) ||
      shlo__otype(vc, cr, 0)->rank != 0)
    return shlo__verr(vc, op, "C1", "cond must return one tensor<i1>");
  return region_returns(vc, op, "C2", "body", 1, op->regions[1], n, ot,
                        false);
}

/* The module's function nearest to a misspelt name, or NULL. */
static const char *nearest_func(const shlo_module *m, const char *name) {
  const char *best = NULL;
  int best_d = 1 << 20;
  for (int i = 0; i < shlo_module_num_funcs(m); i++) {
    const char *f = shlo_module_func(m, i)->name;
    int d = shlo__edit_distance(name, strlen(name), f, strlen(f));
    if (d < best_d) best_d = d, best = f;
  }
  return shlo__near_enough(strlen(name), best_d) ? best : NULL;
}

/* func.call: the callee exists; operand and result types match its
 * signature. */
bool shlo__verify_call(shlo__vctx *vc, const shlo_op *op) {
  const char *callee = shlo_attr_get_str(shlo_op_attr(op, "callee"));
  const shlo_func *f = callee ? shlo_module_find_func(vc->m, callee) : NULL;
  if (!f) {
    const char *near = callee ? nearest_func(vc->m, callee) : NULL;
    return shlo__verr(vc, op, NULL, "'%s' does not reference a valid "
                      "function%s%s%s", callee ? callee : "(no callee)",
                      near ? " (did you mean @" : "", near ? near : "",
                      near ? "?)" : "");
  }
  if (op->n_operands != f->n_args)
    return shlo__verr(vc, op, NULL, "passes %d operands but @%s takes %d",
                      op->n_operands, f->name, f->n_args);
  for (int i = 0; i < f->n_args; i++)
    if (!shlo__compat_type(shlo__otype(vc, op, i), f->arg_types[i]))
      return shlo__verr(vc, op, NULL, "operand #%d has type %s but @%s takes "
                        "%s", i, shlo__tstr(vc, shlo__otype(vc, op, i)),
                        f->name, shlo__tstr(vc, f->arg_types[i]));
  if (op->n_results != f->n_results)
    return shlo__verr(vc, op, NULL, "has %d results but @%s returns %d",
                      op->n_results, f->name, f->n_results);
  for (int i = 0; i < f->n_results; i++)
    if (!shlo__compat_type(shlo__rtype(vc, op, i), f->result_types[i]))
      return shlo__verr(vc, op, NULL, "result #%d has type %s but @%s "
                        "returns %s", i,
                        shlo__tstr(vc, shlo__rtype(vc, op, i)), f->name,
                        shlo__tstr(vc, f->result_types[i]));
  return true;
}

/* tuple: C1 the result is tuple of the operand types. */
bool shlo__verify_tuple(shlo__vctx *vc, const shlo_op *op) {
  const shlo_type *r = op->n_results ? shlo__rtype(vc, op, 0) : NULL;
  bool ok = r && r->kind == SHLO_TYPE_TUPLE && r->n_elems == op->n_operands;
  for (int i = 0; ok && i < op->n_operands; i++)
    ok = shlo__compat_type(r->elems[i], shlo__otype(vc, op, i));
  if (!ok)
    return shlo__verr(vc, op, "C1", "result %s must be the tuple of the "
                      "operand types", shlo__tstr(vc, r));
  return true;
}

/* get_tuple_element: C1 0 <= index < size(operand); C2 the result type is
 * the indexed element's. */
bool shlo__verify_get_tuple_element(shlo__vctx *vc, const shlo_op *op) {
  const shlo_type *t = shlo__otype(vc, op, 0);
  int64_t i = 0;
  shlo_attr_get_i64(shlo_op_attr(op, "index"), &i);
  if (!t || t->kind != SHLO_TYPE_TUPLE)
    return shlo__verr(vc, op, "I1", "operand %s must be a tuple",
                      shlo__tstr(vc, t));
  if (i < 0 || i >= t->n_elems)
    return shlo__verr(vc, op, "C1", "index %lld is out of bounds of operand "
                      "%s with size %d", (long long)i, shlo__tstr(vc, t),
                      t->n_elems);
  if (!shlo__compat_type(t->elems[i], shlo__rtype(vc, op, 0)))
    return shlo__verr(vc, op, "C2", "result %s must be element %lld of %s",
                      shlo__tstr(vc, shlo__rtype(vc, op, 0)), (long long)i,
                      shlo__tstr(vc, t));
  return true;
}

/* optimization_barrier: C1 results have the operand types. */
bool shlo__verify_optimization_barrier(shlo__vctx *vc, const shlo_op *op) {
  if (op->n_operands != op->n_results)
    return shlo__verr(vc, op, "C1", "has %d operands but %d results",
                      op->n_operands, op->n_results);
  for (int i = 0; i < op->n_operands; i++)
    if (!shlo__compat_type(shlo__otype(vc, op, i), shlo__rtype(vc, op, i)))
      return shlo__verr(vc, op, "C1", "result #%d %s must have operand's "
                        "type %s", i, shlo__tstr(vc, shlo__rtype(vc, op, i)),
                        shlo__tstr(vc, shlo__otype(vc, op, i)));
  return true;
}

/* rng: a and b are rank-0 (I1, I2) and not complex; shape is a 1-d
 * integer tensor (I3); C1 a, b and result share the element type; C2 with
 * NORMAL they are floats; C3 shape(result) = shape when constant. */
bool shlo__verify_rng(shlo__vctx *vc, const shlo_op *op) {
  if (op->n_operands != 3 || op->n_results != 1)
    return shlo__verr(vc, op, NULL, "expects a, b, shape and one result");
  const shlo_type *a = shlo__otype(vc, op, 0), *b = shlo__otype(vc, op, 1),
                  *s = shlo__otype(vc, op, 2), *r = shlo__rtype(vc, op, 0);
  if (a->rank != 0 || shlo__is_complex(a))
    return shlo__verr(vc, op, "I1", "a %s must be a rank-0 tensor of a "
                      "boolean, integer or float type", shlo__tstr(vc, a));
  if (b->rank != 0 || shlo__is_complex(b))
    return shlo__verr(vc, op, "I2", "b %s must be a rank-0 tensor of a "
                      "boolean, integer or float type", shlo__tstr(vc, b));
  if (s->rank != 1 || !shlo__is_int(s))
    return shlo__verr(vc, op, "I3", "shape %s must be a 1-d integer tensor",
                      shlo__tstr(vc, s));
  if (!shlo__same_elem(a, b) || !shlo__same_elem(a, r))
    return shlo__verr(vc, op, "C1", "a %s, b %s and result %s must have the "
                      "same element type", shlo__tstr(vc, a),
                      shlo__tstr(vc, b), shlo__tstr(vc, r));
  const char *dist = shlo_attr_get_str(shlo_op_attr(op, "rng_distribution"));
  if (dist && !strcmp(dist, "NORMAL") && !shlo__is_float(a))
    return shlo__verr(vc, op, "C2", "NORMAL needs float operands, got %s",
                      shlo__tstr(vc, a));
  int64_t sh[R];
  int n = shlo__const_ints(vc, op->operands[2], sh, R);
  if (n >= 0) {
    bool ok = r->rank == n;
    for (int i = 0; ok && i < n; i++) ok = shlo__dim_eq(r->dims[i], sh[i]);
    if (!ok)
      return shlo__verr(vc, op, "C3", "result %s must have shape %s",
                        shlo__tstr(vc, r), shlo__dstr(vc, sh, n));
  } else if (s->dims[0] >= 0 && r->rank >= 0 && s->dims[0] != r->rank) {
    return shlo__verr(vc, op, "C3", "result %s must have rank %lld, the size "
                      "of shape %s", shlo__tstr(vc, r),
                      (long long)s->dims[0], shlo__tstr(vc, s));
  }
  return true;
}

/* rng_bit_generator: C1 output_state has initial_state's type; C2 the
 * state's size suits the algorithm.  Interoperability: the spec's C2 asks
 * for a ui64 state of 2 (THREE_FRY) or 2-3 (PHILOX) elements, but
 * StableHLO's reference verifier accepts any 1-D integer or float state of
 * the algorithm's bit width (THREE_FRY 128 bits, PHILOX 128 or 192), so
 * shlo accepts those too: a tensor<4xi32> is the little-endian
 * concatenation of its elements' bits, read as the algorithm's 64-bit
 * words (kernels/rng.c).  Stricter than the reference: elements must be 8,
 * 16, 32 or 64 bits wide (no sub-byte or i1 states), and DEFAULT (which is
 * PHILOX here) needs PHILOX's sizes where the reference checks none. */
bool shlo__verify_rng_bit_generator(shlo__vctx *vc, const shlo_op *op) {
  if (op->n_operands != 1 || op->n_results != 2)
    return shlo__verr(vc, op, NULL, "expects initial_state and two results");
  const shlo_type *s = shlo__otype(vc, op, 0), *os = shlo__rtype(vc, op, 0);
  if (!shlo__compat_type(s, os))
    return shlo__verr(vc, op, "C1", "output_state %s must have the type of "
                      "initial_state %s", shlo__tstr(vc, os),
                      shlo__tstr(vc, s));
  const char *alg = shlo_attr_get_str(shlo_op_attr(op, "rng_algorithm"));
  if (!shlo__is_tensor(s) || s->rank != 1)
    return shlo__verr(vc, op, "C2", "initial_state %s must be a "
                      "1-dimensional tensor", shlo__tstr(vc, s));
  if (s->dims[0] < 0) return true;
  int w = shlo_elem_bits(s->elem);
  if (s->quant || (!shlo__is_int(s) && !shlo__is_float(s)) ||
      (w != 8 && w != 16 && w != 32 && w != 64))
    return shlo__verr(vc, op, "C2", "initial_state %s must hold integers or "
                      "floats of 8, 16, 32 or 64 bits", shlo__tstr(vc, s));
  int64_t bits = s->dims[0] * w;
  bool three_fry = alg && !strcmp(alg, "THREE_FRY");
  if (three_fry ? bits != 128 : (bits != 128 && bits != 192))
    return shlo__verr(vc, op, "C2", "initial_state %s has %lld bits; %s "
                      "needs %s", shlo__tstr(vc, s), (long long)bits,
                      alg ? alg : "DEFAULT",
                      three_fry ? "128" : "128 or 192");
  return true;
}

/* A layout: a permutation of 0..rank-1. */
static bool layout_ok(shlo__vctx *vc, const shlo_op *op, const char *what,
                      int i, const shlo_type *t, const shlo_attr *l) {
  int64_t v[R * 2];
  int n = shlo_attr_i64s(l, v, R * 2);
  if (n < 0) return true;
  if (t->kind == SHLO_TYPE_TUPLE)
    return shlo__verr(vc, op, NULL, "tuple types are not supported with "
                      "layout constraints");
  if (t->kind != SHLO_TYPE_TENSOR) {
    if (n == 0) return true;
    return shlo__verr(vc, op, NULL, "only tensor types can have a non-empty "
                      "layout: %s #%d has type %s", what, i,
                      shlo__tstr(vc, t));
  }
  if (n != t->rank || !shlo__is_permutation(v, n))
    return shlo__verr(vc, op, NULL, "layout %s for %s #%d of type %s must be "
                      "a permutation of [0, %d)", shlo__dstr(vc, v, n), what,
                      i, shlo__tstr(vc, t), t->rank);
  return true;
}

/* custom_call: operand_layouts and result_layouts come together, one per
 * operand / result, each a permutation of its tensor's dimensions. */
/* The part of type t at a path of tuple indices; NULL when a step is out
 * of bounds or not into a tuple. */
static const shlo_type *tuple_part(const shlo_type *t, const int64_t *path,
                                   int n) {
  for (int i = 0; i < n && t; i++)
    t = t->kind == SHLO_TYPE_TUPLE && path[i] >= 0 && path[i] < t->n_elems
            ? t->elems[path[i]]
            : NULL;
  return t;
}

/* custom_call's output_operand_aliases: each names an operand in range,
 * tuple paths within the operand's and the output's types (several
 * results count as a tuple of them), and the two parts have compatible
 * types. */
static bool aliases_ok(shlo__vctx *vc, const shlo_op *op) {
  const shlo_attr *al = shlo_op_attr(op, "output_operand_aliases");
  if (!al || al->kind != SHLO_ATTR_ARRAY) return true;
  const shlo_type *results[64];
  shlo_type tup = {.kind = SHLO_TYPE_TUPLE};
  const shlo_type *out = NULL;
  if (op->n_results == 1) {
    out = shlo__rtype(vc, op, 0);
  } else if (op->n_results > 1 && op->n_results <= 64) {
    for (int i = 0; i < op->n_results; i++) results[i] = shlo__rtype(vc, op, i);
    tup.n_elems = op->n_results;
    tup.elems = results;
    out = &tup;
  }
  for (int k = 0; k < al->n; k++) {
    const shlo_attr *a = al->items[k];
    if (a->kind != SHLO_ATTR_STRUCT) continue;
    int64_t oti[R], opi[R], idx = 0;
    int n_oti = shlo__field_ints(a, "output_tuple_indices", oti, R);
    int n_opi = shlo__field_ints(a, "operand_tuple_indices", opi, R);
    shlo_attr_get_i64(shlo_attr_field(a, "operand_index"), &idx);
    if (n_oti < 0 || n_opi < 0 || n_oti > R || n_opi > R) continue;
    if (idx < 0 || idx >= op->n_operands)
      return shlo__verr(vc, op, "output_operand_aliases", "operand_index %lld "
                        "of alias #%d must be in range [0, %d)",
                        (long long)idx, k, op->n_operands);
    const shlo_type *opart =
        tuple_part(shlo__otype(vc, op, (int)idx), opi, n_opi);
    if (!opart)
      return shlo__verr(vc, op, "output_operand_aliases", "operand_tuple_"
                        "indices %s of alias #%d are out of bounds of "
                        "operand #%lld %s", shlo__dstr(vc, opi, n_opi), k,
                        (long long)idx,
                        shlo__tstr(vc, shlo__otype(vc, op, (int)idx)));
    if (!out) continue;
    const shlo_type *rpart = tuple_part(out, oti, n_oti);
    if (!rpart)
      return shlo__verr(vc, op, "output_operand_aliases", "output_tuple_"
                        "indices %s of alias #%d are out of bounds of the "
                        "output %s", shlo__dstr(vc, oti, n_oti), k,
                        shlo__tstr(vc, out));
    if (!shlo__compat_type(opart, rpart))
      return shlo__verr(vc, op, "output_operand_aliases", "alias #%d: operand "
                        "part %s and output part %s must have compatible "
                        "types", k, shlo__tstr(vc, opart),
                        shlo__tstr(vc, rpart));
  }
  return true;
}

/* backend_config agrees with api_version: a dictionary for
 * API_VERSION_TYPED_FFI (4), a string for the older versions. */
static bool backend_config_ok(shlo__vctx *vc, const shlo_op *op) {
  const shlo_attr *bc = shlo_op_attr(op, "backend_config");
  const shlo_attr *av = shlo_op_attr(op, "api_version");
  if (!bc || bc->kind == SHLO_ATTR_UNIT) return true;
  int64_t v = 1; /* the default, API_VERSION_ORIGINAL */
  if (av && av->kind == SHLO_ATTR_ENUM && av->str) {
    static const char *const names[] = {
        "API_VERSION_UNSPECIFIED", "API_VERSION_ORIGINAL",
        "API_VERSION_STATUS_RETURNING", "API_VERSION_STATUS_RETURNING_UNIFIED",
        "API_VERSION_TYPED_FFI"};
    for (int i = 0; i < 5; i++)
      if (!strcmp(av->str, names[i])) v = i;
  } else if (av) {
    shlo_attr_get_i64(av, &v);
  }
  bool dict = bc->kind == SHLO_ATTR_STRUCT && !bc->struct_name;
  if (v == 4 && !dict)
    return shlo__verr(vc, op, "backend_config", "backend_config for "
                      "api_version API_VERSION_TYPED_FFI must be a dictionary "
                      "attribute");
  if (v != 4 && bc->kind != SHLO_ATTR_STRING)
    return shlo__verr(vc, op, "backend_config", "backend_config for "
                      "api_version %lld must be a string attribute",
                      (long long)v);
  return true;
}

bool shlo__verify_custom_call(shlo__vctx *vc, const shlo_op *op) {
  if (!aliases_ok(vc, op) || !backend_config_ok(vc, op)) return false;
  const shlo_attr *ol = shlo_op_attr(op, "operand_layouts");
  const shlo_attr *rl = shlo_op_attr(op, "result_layouts");
  if (!ol && !rl) return true;
  if (!ol || !rl)
    return shlo__verr(vc, op, NULL, "layouts must be given for both operands "
                      "and results or for neither");
  if (ol->kind != SHLO_ATTR_ARRAY || rl->kind != SHLO_ATTR_ARRAY) return true;
  if (ol->n != op->n_operands)
    return shlo__verr(vc, op, NULL, "number of operands must match the "
                      "number of operand layouts, %d != %d", op->n_operands,
                      ol->n);
  int nres = op->n_results;
  if (nres == 1 && shlo__rtype(vc, op, 0)->kind == SHLO_TYPE_TUPLE)
    nres = shlo__rtype(vc, op, 0)->n_elems;
  if (rl->n != nres)
    return shlo__verr(vc, op, NULL, "number of results must match the number "
                      "of result layouts, %d != %d", nres, rl->n);
  for (int i = 0; i < ol->n; i++)
    if (!layout_ok(vc, op, "operand", i, shlo__otype(vc, op, i), ol->items[i]))
      return false;
  for (int i = 0; i < rl->n; i++) {
    const shlo_type *t = op->n_results == nres
                             ? shlo__rtype(vc, op, i)
                             : shlo__rtype(vc, op, 0)->elems[i];
    if (!layout_ok(vc, op, "result", i, t, rl->items[i])) return false;
  }
  return true;
}

/* A namespaced op name: identifiers joined by dots, at least two. */
static bool namespaced(const char *s) {
  int parts = 0;
  const char *p = s;
  for (;;) {
    if (!isalpha((unsigned char)*p) && *p != '_' && *p != '$') return false;
    p++;
    while (isalnum((unsigned char)*p) || *p == '_' || *p == '$') p++;
    parts++;
    if (!*p) break;
    if (*p != '.') return false;
    p++;
  }
  return parts >= 2;
}

/* composite: name is a namespaced op name; decomposition names a function
 * whose signature is the op's operand and result types. */
bool shlo__verify_composite(shlo__vctx *vc, const shlo_op *op) {
  const char *name = shlo_attr_get_str(shlo_op_attr(op, "name"));
  if (name && !namespaced(name))
    return shlo__verr(vc, op, NULL, "name \"%s\" must be a valid namespaced "
                      "op name", name);
  const char *dec =
      shlo_attr_get_str(shlo_op_attr(op, "decomposition"));
  const shlo_func *f = dec ? shlo_module_find_func(vc->m, dec) : NULL;
  if (!f)
    return shlo__verr(vc, op, NULL, "'%s' does not reference a valid "
                      "function", dec ? dec : "(no decomposition)");
  if (op->n_operands != f->n_args)
    return shlo__verr(vc, op, NULL, "has %d operand(s), but decomposition "
                      "has %d", op->n_operands, f->n_args);
  for (int i = 0; i < f->n_args; i++)
    if (!shlo__compat_type(shlo__otype(vc, op, i), f->arg_types[i]))
      return shlo__verr(vc, op, NULL, "operand at index %d has type %s, but "
                        "decomposition has type %s", i,
                        shlo__tstr(vc, shlo__otype(vc, op, i)),
                        shlo__tstr(vc, f->arg_types[i]));
  if (op->n_results != f->n_results)
    return shlo__verr(vc, op, NULL, "has %d result(s), but decomposition has "
                      "%d", op->n_results, f->n_results);
  for (int i = 0; i < f->n_results; i++)
    if (!shlo__compat_type(shlo__rtype(vc, op, i), f->result_types[i]))
      return shlo__verr(vc, op, NULL, "result at index %d has type %s, but "
                        "decomposition has type %s", i,
                        shlo__tstr(vc, shlo__rtype(vc, op, i)),
                        shlo__tstr(vc, f->result_types[i]));
  return true;
}

/* A constant output shape operand against the result type. */
/* A shape operand (output_dimensions, output_shape): a statically shaped
 * 1-d integer tensor, as the ops' definitions require of the operand. */
static bool shape_operand_ok(shlo__vctx *vc, const shlo_op *op, int operand,
                             const char *what) {
  const shlo_type *t = shlo__otype(vc, op, operand);
  if (!shlo__is_static(t) || t->rank != 1 ||
      !(shlo__is_int(t) || t->elem == SHLO_INDEX))
    return shlo__verr(vc, op, NULL, "operand #%d (%s) %s must be a statically "
                      "shaped 1-d integer or index tensor", operand, what,
                      shlo__tstr(vc, t));
  return true;
}

static bool output_shape(shlo__vctx *vc, const shlo_op *op, int operand,
                         const char *label) {
  int64_t sh[R];
  int n = shlo__const_ints(vc, op->operands[operand], sh, R);
  const shlo_type *r = shlo__rtype(vc, op, 0);
  if (n < 0) return true;
  bool ok = r->rank == n;
  /* A constant size is a static size: it must be non-negative and fit
   * the result's dimension. */
  for (int i = 0; ok && i < n; i++)
    ok = sh[i] >= 0 && shlo__dim_eq(sh[i], r->dims[i]);
  if (!ok)
    return shlo__verr(vc, op, label, "output shape %s is incompatible with "
                      "the result type %s", shlo__dstr(vc, sh, n),
                      shlo__tstr(vc, r));
  return true;
}

/* dynamic_broadcast_in_dim: broadcast_in_dim's C1-C5 against the result
 * type; output_dimensions (when constant) is the result shape; expansion
 * hints are unique operand dimensions. */
bool shlo__verify_dynamic_broadcast_in_dim(shlo__vctx *vc, const shlo_op *op) {
  if (op->n_operands != 2 || op->n_results != 1)
    return shlo__verr(vc, op, NULL, "expects operand, output_dimensions and "
                      "one result");
  const shlo_type *a = shlo__otype(vc, op, 0), *r = shlo__rtype(vc, op, 0);
  if (!shape_operand_ok(vc, op, 1, "output_dimensions")) return false;
  if (!shlo__same_baseline_elem(a, r))
    return shlo__verr(vc, op, "C1", "expects operand and result to have "
                      "compatible element types, got %s and %s",
                      shlo__tstr(vc, a), shlo__tstr(vc, r));
  int64_t bd[R];
  int n = shlo__attr_ints(op, "broadcast_dimensions", bd, R);
  if (n < 0) n = shlo__attr_ints(op, "dims", bd, R);
  if (n != a->rank)
    return shlo__verr(vc, op, "C2", "broadcast_dimensions size (%d) must be "
                      "the operand rank %d", n, a->rank);
  for (int i = 0; i < n; i++)
    if (bd[i] < 0 || bd[i] >= r->rank)
      return shlo__verr(vc, op, "C3", "broadcast_dimensions contains invalid "
                        "value %lld for result %s", (long long)bd[i],
                        shlo__tstr(vc, r));
  if (shlo__has_dups(bd, n, NULL))
    return shlo__verr(vc, op, "C4", "broadcast_dimensions %s have "
                      "duplicates", shlo__dstr(vc, bd, n));
  for (int i = 0; i < n; i++)
    if (a->dims[i] != 1 && !shlo__dim_eq(a->dims[i], r->dims[bd[i]]))
      return shlo__verr(vc, op, "C5", "size of operand dimension %d (%lld) "
                        "is not 1 or the size of result dimension %lld "
                        "(%lld)", i, (long long)a->dims[i], (long long)bd[i],
                        (long long)r->dims[bd[i]]);
  int64_t sh[R];
  if (shlo__const_ints(vc, op->operands[1], sh, R) == r->rank)
    for (int i = 0; i < n; i++)
      if (a->dims[i] >= 0 && a->dims[i] != 1 && a->dims[i] != sh[bd[i]])
        return shlo__verr(vc, op, "C5", "size of operand dimension %d "
                          "(%lld) is not equal to 1 or value of shape at "
                          "index %lld (%lld)", i, (long long)a->dims[i],
                          (long long)bd[i], (long long)sh[bd[i]]);
  if (!shlo__check_broadcast_quant(vc, op, a, r, bd)) return false;
  if (!output_shape(vc, op, 1, "C7")) return false;
  int64_t ke[R * 2], kn[R * 2];
  int ne = shlo__attr_ints(op, "known_expanding_dimensions", ke, R);
  int nn = shlo__attr_ints(op, "known_nonexpanding_dimensions", kn, R);
  if (ne < 0) ne = 0;
  if (nn < 0) nn = 0;
  for (int i = 0; i < nn && ne + i < 2 * R; i++) ke[ne + i] = kn[i];
  if (shlo__has_dups(ke, ne + nn, NULL))
    return shlo__verr(vc, op, "C8", "duplicate expansion hint for an operand "
                      "dimension");
  for (int i = 0; i < ne + nn; i++)
    if (ke[i] < 0 || ke[i] >= a->rank)
      return shlo__verr(vc, op, "C9", "hint for expanding dimension %lld "
                        "does not refer to a valid operand dimension",
                        (long long)ke[i]);
  return true;
}

/* dynamic_pad: C1 operand and padding_value element types agree; C2 the
 * three padding operands are 1-d with rank(operand) elements; C3 interior
 * padding (when constant) is non-negative; C4 with constant paddings the
 * result shape is pad's. */
bool shlo__verify_dynamic_pad(shlo__vctx *vc, const shlo_op *op) {
  if (op->n_operands != 5 || op->n_results != 1)
    return shlo__verr(vc, op, NULL, "expects operand, padding_value, "
                      "edge_padding_low, edge_padding_high, interior_padding "
                      "and one result");
  const shlo_type *a = shlo__otype(vc, op, 0), *pv = shlo__otype(vc, op, 1),
                  *r = shlo__rtype(vc, op, 0);
  if (!shlo__same_baseline_elem(a, pv) || !shlo__same_baseline_elem(a, r))
    return shlo__verr(vc, op, "C1", "operand %s, padding_value %s and result "
                      "%s must have the same element type", shlo__tstr(vc, a),
                      shlo__tstr(vc, pv), shlo__tstr(vc, r));
  static const char *const names[3] = {"edge_padding_low",
                                       "edge_padding_high", "interior_padding"};
  int64_t v[3][R];
  bool known = true;
  for (int k = 0; k < 3; k++) {
    const shlo_type *t = shlo__otype(vc, op, 2 + k);
    if (t->rank != 1 || t->dims[0] != a->rank)
      return shlo__verr(vc, op, "C2", "%s %s must be 1-d with %d elements "
                        "(the operand's rank)", names[k], shlo__tstr(vc, t),
                        a->rank);
    if (shlo__const_ints(vc, op->operands[2 + k], v[k], R) != a->rank)
      known = false;
  }
  if (shlo__const_ints(vc, op->operands[4], v[2], R) == a->rank)
    for (int i = 0; i < a->rank; i++)
      if (v[2][i] < 0)
        return shlo__verr(vc, op, "C3", "interior_padding %s must be "
                          "non-negative", shlo__dstr(vc, v[2], a->rank));
  if (r->rank != a->rank)
    return shlo__verr(vc, op, "C4", "result %s must have the operand's rank "
                      "%d", shlo__tstr(vc, r), a->rank);
  if (!known) return true;
  int64_t want[R];
  for (int i = 0; i < a->rank; i++) {
    int64_t d = a->dims[i];
    want[i] = d + v[0][i] + v[1][i] + (d > 0 ? d - 1 : 0) * v[2][i];
  }
  for (int i = 0; i < a->rank; i++)
    if (!shlo__dim_eq(r->dims[i], a->dims[i] < 0 ? SHLO_DYN : want[i]))
      return shlo__verr(vc, op, "C4", "result %s must have shape %s",
                        shlo__tstr(vc, r), shlo__dstr(vc, want, a->rank));
  return true;
}

/* dynamic_iota: iota's C1 and a constant output_shape matching the
 * result. */
bool shlo__verify_dynamic_iota(shlo__vctx *vc, const shlo_op *op) {
  if (op->n_operands != 1 || op->n_results != 1)
    return shlo__verr(vc, op, NULL, "expects output_shape and one result");
  const shlo_type *r = shlo__rtype(vc, op, 0);
  if (!shape_operand_ok(vc, op, 0, "output_shape")) return false;
  int64_t d = 0;
  shlo_attr_get_i64(shlo_op_attr(op, "iota_dimension"), &d);
  if (d < 0 || d >= r->rank)
    return shlo__verr(vc, op, "C1", "iota_dimension %lld is out of range for "
                      "result %s", (long long)d, shlo__tstr(vc, r));
  return output_shape(vc, op, 0, "C2");
}

/* dynamic_reshape: C1 element types agree; C2 size of result = size of
 * operand; C3 rank(result) = size(output_shape); a constant output_shape
 * is the result shape. */
bool shlo__verify_dynamic_reshape(shlo__vctx *vc, const shlo_op *op) {
  if (op->n_operands != 2 || op->n_results != 1)
    return shlo__verr(vc, op, NULL, "expects operand, output_shape and one "
                      "result");
  const shlo_type *a = shlo__otype(vc, op, 0), *s = shlo__otype(vc, op, 1),
                  *r = shlo__rtype(vc, op, 0);
  if (!shlo__same_baseline_elem(a, r))
    return shlo__verr(vc, op, "C1", "operand %s and result %s must have "
                      "compatible element types", shlo__tstr(vc, a),
                      shlo__tstr(vc, r));
  if (!shape_operand_ok(vc, op, 1, "output_shape")) return false;
  if (shlo__is_static(a) && shlo__is_static(r) &&
      shlo_type_numel(a) != shlo_type_numel(r))
    return shlo__verr(vc, op, "C2", "number of output elements (%lld) does "
                      "not match the operand's (%lld)",
                      (long long)shlo_type_numel(r),
                      (long long)shlo_type_numel(a));
  int64_t sh[R];
  int n = shlo__const_ints(vc, op->operands[1], sh, R);
  if (n >= 0 && shlo__is_static(a)) {
    int64_t numel = 1;
    for (int i = 0; i < n; i++) numel *= sh[i];
    if (numel != shlo_type_numel(a))
      return shlo__verr(vc, op, "C2", "output_shape is incompatible with "
                        "the operand: it has %lld elements, output_shape %s "
                        "has %lld", (long long)shlo_type_numel(a),
                        shlo__dstr(vc, sh, n), (long long)numel);
  }
  if (s->rank == 1 && s->dims[0] != r->rank)
    return shlo__verr(vc, op, "C3", "result %s should have a rank equal to "
                      "the number of elements in output_shape (%lld)",
                      shlo__tstr(vc, r), (long long)s->dims[0]);
  return output_shape(vc, op, 1, "C4");
}

/* ---- async_start, async_done ----
 *
 * Not in the spec's op list; StableHLO's op definitions (StablehloOps.td)
 * give them this meaning: async_start applies its region to its operands
 * and yields a !stablehlo.future<T...> of the region's results; async_done
 * takes that future and yields the T... .  The future's element types must
 * be exactly the region's results (and async_done's results). */

/* Whether the future type t spells exactly the types of values ids[0..n). */
static bool future_holds(const shlo__vctx *vc, const shlo_type *t,
                         const int *ids, int n) {
  if (t->kind != SHLO_TYPE_OPAQUE || !t->encoding) return false;
  char want[1024], got[1024];
  size_t w = (size_t)snprintf(want, sizeof want, "stablehlo.future<");
  for (int i = 0; i < n && w < sizeof want; i++) {
    if (i) w += (size_t)snprintf(want + w, sizeof want - w, ",");
    if (w < sizeof want)
      w += (size_t)shlo_type_format(shlo__vtype(vc, ids[i]), want + w,
                                      sizeof want - w);
  }
  if (w >= sizeof want - 1) return false;
  want[w++] = '>';
  want[w] = 0;
  size_t g = 0;
  for (const char *p = t->encoding; *p && g < sizeof got - 1; p++)
    if (*p != ' ' && *p != '\n' && *p != '\t' && *p != '!') got[g++] = *p;
  got[g] = 0;
  size_t k = 0;
  for (size_t i = 0; want[i]; i++)
    if (want[i] != ' ') want[k++] = want[i];
  want[k] = 0;
  return strcmp(want, got) == 0;
}

bool shlo__verify_async_start(shlo__vctx *vc, const shlo_op *op) {
  if (op->n_regions != 1 || op->n_results != 1)
    return shlo__verr(vc, op, NULL, "needs one region and one result");
  const shlo_block *b = op->regions[0];
  if (b->n_args != op->n_operands)
    return shlo__verr(vc, op, NULL, "region takes %d arguments for %d "
                      "operands", b->n_args, op->n_operands);
  for (int i = 0; i < b->n_args; i++)
    if (!shlo_type_equal(shlo__vtype(vc, b->args[i]),
                         shlo__vtype(vc, op->operands[i])))
      return shlo__verr(vc, op, NULL, "region argument %d and operand %d "
                        "differ in type", i, i);
  const shlo_op *ret = b->n_ops ? b->ops[b->n_ops - 1] : NULL;
  if (!ret || ret->n_operands > 16)
    return shlo__verr(vc, op, NULL, "region must return at most 16 values");
  if (!future_holds(vc, shlo__vtype(vc, op->results[0]), ret->operands,
                    ret->n_operands))
    return shlo__verr(vc, op, NULL, "result must be a !stablehlo.future of "
                      "the region's result types");
  return true;
}

bool shlo__verify_async_done(shlo__vctx *vc, const shlo_op *op) {
  if (op->n_operands != 1 || op->n_results > 16)
    return shlo__verr(vc, op, NULL, "needs one future operand");
  if (!future_holds(vc, shlo__vtype(vc, op->operands[0]), op->results,
                    op->n_results))
    return shlo__verr(vc, op, NULL, "results must be the operand "
                      "future's types");
  return true;
}
