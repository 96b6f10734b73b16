/* SPDX-License-Identifier: Apache-2.0 */
/* Shape refinement: the walk over functions, blocks and calls (refine.h).
 * Per-op shape rules and folding are in refine_infer.c.
 *
 * The refined copy shares everything with the original module that does
 * not change: op structs are reused unless the op has regions (its copy
 * points at refined region blocks), value ids stay the same, and only the
 * per-function type tables are new.  A callee is refined once, for the
 * types and folded values it is first called with; a second call with
 * other shapes is refused (it would need a second copy under a new
 * name). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/module.h"
#include "core/alloc.h"
#include "compile/refine_int.h"
#include "core/diag.h"
#include "ops/ops.h"
#include "verify/verify_int.h" /* shlo__dim_bound */

struct shlo_refined {
  shlo_arena *a;
  shlo_module mod;
};

shlo_status shlo__refine_fail(refine_func *F, const shlo_op *op,
                              shlo_status code, const char *fmt, ...) {
  shlo_loc loc = op ? op->loc : F->f->loc;
  va_list ap;
  va_start(ap, fmt);
  shlo__diag_vset_named(F->R->diag, code, F->R->m->filename, loc.line,
                        loc.col, op ? op->name : F->f->name, fmt, ap);
  va_end(ap);
  return code;
}

static bool type_static(const shlo_type *t) {
  if (!t) return true;
  if (t->kind == SHLO_TYPE_TUPLE) {
    for (int i = 0; i < t->n_elems; i++)
      if (!type_static(t->elems[i])) return false;
    return true;
  }
  if (t->kind != SHLO_TYPE_TENSOR) return true;
  if (t->rank < 0 || t->encoding) return false;
  for (int i = 0; i < t->rank; i++)
    if (t->dims[i] < 0) return false;
  return true;
}

bool shlo__refine_static(const shlo_type *t) { return type_static(t); }

bool shlo__module_is_dynamic(const shlo_module *m) {
  for (int i = 0; i < m->n_funcs; i++) {
    const shlo_func *f = m->funcs[i];
    for (int k = 0; k < f->n_args; k++)
      if (!type_static(f->arg_types[k])) return true;
    for (int k = 0; k < f->n_results; k++)
      if (!type_static(f->result_types[k])) return true;
    for (int k = 0; k < f->n_values; k++)
      if (!type_static(f->value_types[k])) return true;
  }
  return false;
}

const shlo_type *shlo__refine_type(refine_func *F, const shlo_type *t,
                                   int rank, const int64_t *dims) {
  shlo_type *n = shlo__arena_alloc(F->R->a, sizeof *n);
  if (!n) return NULL;
  *n = *t;
  n->kind = SHLO_TYPE_TENSOR;
  n->encoding = NULL;
  n->rank = rank;
  for (int i = 0; i < rank; i++) n->dims[i] = dims[i];
  return n;
}

/* ---- shape_assertion ---- */

/* custom_call @shape_assertion(%pred, %dims...) {error_message = "..."}:
 * the predicate must fold; false is an input error whose message is the
 * assertion's, each {k} replaced by the value of operand k + 1. */
static bool is_shape_assertion(const shlo_op *op) {
  if (op->code != SHLO_OP_CUSTOM_CALL) return false;
  const char *t = shlo_attr_get_str(shlo_op_attr(op, "call_target_name"));
  return t && !strcmp(t, "shape_assertion");
}

static shlo_status check_assertion(refine_func *F, const shlo_op *op) {
  if (op->n_operands < 1)
    return shlo__refine_fail(F, op, SHLO_EVERIFY,
                             "shape_assertion needs a predicate operand");
  const int64_t *pred = F->known[op->operands[0]];
  if (!pred)
    return shlo__refine_fail(F, op, SHLO_EUNSUPPORTED,
                             "the shape_assertion predicate does not fold to "
                             "a constant for these argument shapes");
  if (pred[0]) return SHLO_OK;
  const char *fmt = shlo_attr_get_str(shlo_op_attr(op, "error_message"));
  if (!fmt) fmt = "shape assertion failed";
  char msg[SHLO_DIAG_MAX - 64];
  size_t n = 0;
  for (const char *p = fmt; *p && n + 24 < sizeof msg; p++) {
    int k;
    int used = 0;
    if (*p == '{' && sscanf(p, "{%d}%n", &k, &used) == 1 && used > 0 &&
        k >= 0 && k + 1 < op->n_operands && F->known[op->operands[k + 1]]) {
      n += (size_t)snprintf(msg + n, sizeof msg - n, "%lld",
                            (long long)F->known[op->operands[k + 1]][0]);
      p += used - 1;
    } else {
      msg[n++] = *p;
    }
  }
  msg[n] = 0;
  return shlo__refine_fail(F, op, SHLO_EINPUT, "%s", msg);
}

/* ---- blocks ---- */

static shlo_status refine_op(refine_func *F, const shlo_op *op,
                             const shlo_op **out) {
  *out = op;
  if (op->n_regions == 0) {
    shlo_status st = shlo__refine_infer(F, op);
    return st ? st : shlo__refine_fold(F, op);
  }
  /* An op with regions: a copy pointing at the refined regions.  Their
   * block arguments are refined by the op's rule (while, if, case carry
   * the operands' shapes); other regions (reduction bodies) keep their
   * declared argument types. */
  shlo_op *n = shlo__arena_alloc(F->R->a, sizeof *n);
  shlo_block **regions =
      shlo__arena_alloc(F->R->a, (size_t)op->n_regions * sizeof *regions);
  if (!n || !regions) return SHLO_ENOMEM;
  *n = *op;
  n->regions = regions;
  const shlo_type *carried[SHLO_MAX_RANK * 8];
  bool carry = op->code == SHLO_OP_WHILE &&
               op->n_operands <= (int)(sizeof carried / sizeof *carried);
  for (int i = 0; carry && i < op->n_operands; i++)
    carried[i] = F->types[op->operands[i]];
  for (int r = 0; r < op->n_regions; r++) {
    shlo_status st = shlo__refine_region(F, op->regions[r],
                                         carry ? carried : NULL, &regions[r]);
    if (st) return st;
  }
  *out = n;
  shlo_status st = shlo__refine_infer(F, n);
  return st ? st : shlo__refine_fold(F, n);
}

shlo_status shlo__refine_region(refine_func *F, const shlo_block *b,
                                const shlo_type *const *arg_types,
                                shlo_block **out) {
  shlo_block *n = shlo__arena_alloc(F->R->a, sizeof *n);
  if (!n) return SHLO_ENOMEM;
  *n = *b;
  n->ops = shlo__arena_alloc(F->R->a, (size_t)(b->n_ops + 1) * sizeof *n->ops);
  if (!n->ops) return SHLO_ENOMEM;
  if (arg_types)
    for (int i = 0; i < b->n_args; i++) F->types[b->args[i]] = arg_types[i];
  n->n_ops = 0;
  for (int i = 0; i < b->n_ops; i++) {
    const shlo_op *op = b->ops[i];
    shlo_status st;
    if (is_shape_assertion(op)) {
      if ((st = check_assertion(F, op))) return st;
      continue; /* checked: nothing left to run */
    }
    const shlo_op *r;
    if ((st = refine_op(F, op, &r))) return st;
    n->ops[n->n_ops++] = (shlo_op *)r;
  }
  *out = n;
  return SHLO_OK;
}

/* ---- functions and calls ---- */

static int func_index(const shlo_module *m, const char *name) {
  for (int i = 0; i < m->n_funcs; i++)
    if (!strcmp(m->funcs[i]->name, name)) return i;
  return -1;
}

static bool same_known(const int64_t *a, const int64_t *b, int64_t n) {
  if (!a || !b) return a == b;
  return !memcmp(a, b, (size_t)n * sizeof *a);
}

/* Whether function idx, already refined, was refined for these argument
 * types and folded values. */
static bool same_specialization(const refine_func *G,
                                const shlo_type *const *types,
                                int64_t *const *known) {
  for (int i = 0; i < G->nf->n_args; i++) {
    const shlo_type *t = G->nf->arg_types[i];
    if (!shlo_type_equal(t, types[i])) return false;
    int64_t n = t->kind == SHLO_TYPE_TENSOR ? shlo_type_numel(t) : 0;
    if (!same_known(G->known[G->f->body->args[i]], known ? known[i] : NULL,
                    n))
      return false;
  }
  return true;
}

/* The refined function's results: the types its func.return passes. */
static shlo_status refine_results(refine_func *G) {
  const shlo_block *b = G->nf->body;
  const shlo_op *ret = b->n_ops ? b->ops[b->n_ops - 1] : NULL;
  if (!ret || ret->code != SHLO_OP_FUNC_RETURN ||
      ret->n_operands != G->f->n_results)
    return shlo__refine_fail(G, ret, SHLO_EVERIFY,
                             "@%s does not end with a func.return of its "
                             "results", G->f->name);
  const shlo_type **rt = shlo__arena_alloc(
      G->R->a, (size_t)(ret->n_operands + 1) * sizeof *rt);
  G->result_known = shlo__arena_alloc(
      G->R->a, (size_t)(ret->n_operands + 1) * sizeof *G->result_known);
  if (!rt || !G->result_known) return SHLO_ENOMEM;
  for (int i = 0; i < ret->n_operands; i++) {
    rt[i] = G->types[ret->operands[i]];
    G->result_known[i] = G->known[ret->operands[i]];
  }
  G->nf->result_types = rt;
  return SHLO_OK;
}

/* Refine function idx for argument types (and folded values, or NULL). */
static shlo_status refine_func_at(refiner *R, int idx,
                                  const shlo_type *const *types,
                                  int64_t *const *known) {
  const shlo_func *f = R->m->funcs[idx];
  refine_func *G = shlo__arena_alloc(R->a, sizeof *G);
  shlo_func *nf = shlo__arena_alloc(R->a, sizeof *nf);
  size_t nv = (size_t)f->n_values + 1;
  if (!G || !nf) return SHLO_ENOMEM;
  *nf = *f;
  G->R = R;
  G->f = f;
  G->nf = nf;
  G->types = shlo__arena_alloc(R->a, nv * sizeof *G->types);
  G->known = shlo__arena_alloc(R->a, nv * sizeof *G->known);
  const shlo_type **at =
      shlo__arena_alloc(R->a, (size_t)(f->n_args + 1) * sizeof *at);
  if (!G->types || !G->known || !at) return SHLO_ENOMEM;
  memcpy(G->types, f->value_types, (size_t)f->n_values * sizeof *G->types);
  for (int i = 0; i < f->n_args; i++) {
    at[i] = types[i];
    G->types[f->body->args[i]] = types[i];
    if (known) G->known[f->body->args[i]] = known[i];
  }
  nf->arg_types = at;
  nf->value_types = G->types;
  R->busy[idx] = 1;
  shlo_status st = shlo__refine_region(G, f->body, NULL, &nf->body);
  R->busy[idx] = 0;
  if (!st) st = refine_results(G);
  if (st) return st;
  R->spec[idx] = nf;
  R->state[idx] = G;
  return SHLO_OK;
}

shlo_status shlo__refine_call(refine_func *F, const shlo_op *op,
                              const char *callee) {
  refiner *R = F->R;
  int idx = func_index(R->m, callee);
  if (idx < 0 || !R->m->funcs[idx]->body)
    return shlo__refine_fail(F, op, SHLO_EVERIFY,
                             "no function with a body named '@%s'", callee);
  if (R->busy[idx])
    return shlo__refine_fail(F, op, SHLO_EUNSUPPORTED,
                             "recursive call to '@%s'", callee);
  const shlo_func *g = R->m->funcs[idx];
  if (g->n_args != op->n_operands || g->n_results != op->n_results)
    return shlo__refine_fail(F, op, SHLO_EVERIFY, "'@%s' does not take these "
                             "operands or give these results", callee);
  /* In the arena, not on the stack: this frame recurses once per call. */
  size_t n = (size_t)op->n_operands + 1;
  const shlo_type **types = shlo__arena_alloc(R->a, n * sizeof *types);
  int64_t **known = shlo__arena_alloc(R->a, n * sizeof *known);
  if (!types || !known) return SHLO_ENOMEM;
  for (int i = 0; i < op->n_operands; i++) {
    types[i] = F->types[op->operands[i]];
    known[i] = F->known[op->operands[i]];
  }
  if (R->state[idx]) {
    if (!same_specialization(R->state[idx], types, known))
      return shlo__refine_fail(F, op, SHLO_EUNSUPPORTED,
                               "'@%s' is called with different shapes from "
                               "two places; refinement keeps one copy",
                               callee);
  } else {
    shlo_status st = refine_func_at(R, idx, types, known);
    if (st) return st;
  }
  const refine_func *G = R->state[idx];
  for (int i = 0; i < op->n_results; i++) {
    F->types[op->results[i]] = G->nf->result_types[i];
    F->known[op->results[i]] = (int64_t *)G->result_known[i];
  }
  return SHLO_OK;
}

/* Each argument type matches the declared one: same element type and
 * rank, same size where declared static, within the bound where bounded. */
static shlo_status check_args(refiner *R, const shlo_func *f,
                              const shlo_type *const *types, int n) {
  if (n != f->n_args)
    return shlo_diag_set(R->diag, SHLO_EINPUT, R->m->filename, f->loc.line,
                         f->loc.col, "@%s takes %d arguments but %d were "
                         "given", f->name, f->n_args, n);
  for (int i = 0; i < n; i++) {
    const shlo_type *d = f->arg_types[i], *t = types[i];
    bool ok = type_static(t) && d->kind == t->kind;
    if (ok && d->kind == SHLO_TYPE_TENSOR) {
      ok = d->elem == t->elem && (d->rank < 0 || d->rank == t->rank);
      for (int k = 0; ok && d->rank >= 0 && k < d->rank; k++) {
        int64_t bound = shlo__dim_bound(d, k);
        ok = d->dims[k] < 0 ? bound < 0 || t->dims[k] <= bound
                            : d->dims[k] == t->dims[k];
      }
    } else if (ok) {
      ok = type_static(d) && shlo_type_equal(d, t);
    }
    if (!ok) {
      char want[256], got[256];
      shlo_type_format(d, want, sizeof want);
      shlo_type_format(t, got, sizeof got);
      return shlo_diag_set(R->diag, SHLO_EINPUT, R->m->filename, f->loc.line,
                           f->loc.col, "argument %d of @%s must be %s (a "
                           "size within each bound), got %s",
                           i, f->name, want, got);
    }
  }
  return SHLO_OK;
}

shlo_status shlo__refine(const shlo_module *m, const shlo_func *entry,
                         const shlo_type *const *arg_types, int n_args,
                         shlo_refined **out, shlo_diag *diag) {
  *out = NULL;
  shlo_refined *r = shlo__calloc(1, sizeof *r);
  refiner R = {.m = m, .diag = diag};
  if (r) r->a = R.a = shlo__arena_new();
  size_t nf = (size_t)m->n_funcs + 1;
  if (R.a) {
    R.spec = shlo__arena_alloc(R.a, nf * sizeof *R.spec);
    R.state = shlo__arena_alloc(R.a, nf * sizeof *R.state);
    R.busy = shlo__arena_alloc(R.a, nf);
  }
  shlo_func **funcs = R.a ? shlo__arena_alloc(R.a, nf * sizeof *funcs) : NULL;
  int idx = func_index(m, entry->name);
  if (!r || !funcs || !R.spec || !R.state || !R.busy) {
    if (r) shlo__refined_free(r);
    return shlo_diag_set(diag, SHLO_ENOMEM, m->filename, 0, 0,
                         "out of memory refining shapes");
  }
  shlo_status st = check_args(&R, entry, arg_types, n_args);
  if (!st && idx < 0) st = SHLO_EINPUT;
  /* The caller's types may be temporaries: the copy keeps its own. */
  const shlo_type **own =
      st ? NULL : shlo__arena_alloc(R.a, (size_t)(n_args + 1) * sizeof *own);
  for (int i = 0; own && i < n_args; i++) {
    shlo_type *t = shlo__arena_alloc(R.a, sizeof *t);
    if (!t) own = NULL;
    else *t = *arg_types[i], own[i] = t;
  }
  if (!st && !own) st = SHLO_ENOMEM;
  if (!st) st = refine_func_at(&R, idx, own, NULL);
  if (st) {
    if (st == SHLO_ENOMEM && diag && !diag->code)
      shlo_diag_set(diag, SHLO_ENOMEM, m->filename, 0, 0,
                    "out of memory refining shapes");
    shlo__refined_free(r);
    return st;
  }
  for (int i = 0; i < m->n_funcs; i++)
    funcs[i] = R.spec[i] ? R.spec[i] : m->funcs[i];
  r->mod = *m;
  r->mod.arena = NULL; /* the original's; the copy owns only r->a */
  r->mod.funcs = funcs;
  *out = r;
  return SHLO_OK;
}

const shlo_module *shlo__refined_module(const shlo_refined *r) {
  return &r->mod;
}

void shlo__refined_free(shlo_refined *r) {
  if (!r) return;
  shlo__arena_free(r->a);
  shlo__free(r);
}
