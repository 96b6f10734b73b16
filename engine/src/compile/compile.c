/* SPDX-License-Identifier: Apache-2.0 */
/* The compiler: functions and regions into plans.
 *
 * Every value of a block gets its own slot; a value's slot is released
 * right after its last use, so memory is reused as the plan runs.  Regions
 * become sub-plans whose arguments are the block arguments followed by the
 * outer values the region captures; the step that owns the region passes
 * those captures as extra inputs, so liveness sees them. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/module.h"
#include "core/alloc.h"
#include "compile/executable.h"
#include "core/context_int.h"
#include "core/diag.h"
#include "compile/depth.h"
#include "core/limits.h"
#include "core/namemap.h"
#include "compile/compiler.h"
#include "compile/fuse.h"
#include "compile/refine.h"
#include "compile/refine_cache.h"
#include "core/value.h"
#include "ops/ops.h"
#include "shlo/engine.h"
#include "shlo/verify.h"

/* The plan being built for one block.  slot_of is the function's one
 * value -> slot map (cc->slot_of), shared by its nested blocks: a block
 * sets the entries of the values it defines and of its captures, and on
 * leaving puts back what it found, so each block costs its own size, not
 * the function's. */
typedef struct block_ctx {
  int *slot_of;   /* value id -> slot, -1 if not in this plan */
  int n_slots;
  int *value_of;  /* slot -> value id, n_slots of them */
  int cap;
  struct block_ctx *outer;
} block_ctx;

struct shlo_compiler {
  const shlo_module *m;
  const shlo_type **override; /* per value id, or NULL: see
                                 shlo__cc_override_type */
  shlo_diag *diag;
  const shlo_func *func;  /* the function being compiled */
  block_ctx *cur;
  shlo_plan **func_plans; /* per module function; NULL until compiled */
  char *compiling;        /* per module function: on the call stack now */
  int *slot_of;           /* per value id of func: see block_ctx */
  char *mark;             /* per value id of func: zeroed scratch */
  const shlo_compile_limits *limits; /* may be NULL */
  int64_t n_ops;          /* ops compiled so far, for limits */
  shlo_name_map func_index; /* function name -> index in m->funcs */
  bool no_fusion;
};

struct shlo_executable {
  const shlo_module *m;
  int n_funcs;
  shlo_plan **func_plans;
  const shlo_func *entry;
  int entry_index;
  shlo_refine_cache *refine; /* dynamic shapes: plans per signature */
  shlo_context *ctx;         /* where it runs; NULL: the default */
  shlo__choice alone;        /* executions on the pool or alone */
  bool may_run_alone;        /* a candidate for it (may_run_alone) */
};

/* ---- compile-time view for op compile functions ---- */

const shlo_type *shlo__cc_value_type(shlo_compiler *cc, int id) {
  if (cc->override && cc->override[id]) return cc->override[id];
  return cc->func->value_types[id];
}

const shlo_type *shlo__cc_operand_type(shlo_compiler *cc, const shlo_op *op,
                                      int i) {
  return shlo__cc_value_type(cc, op->operands[i]);
}

const shlo_type *shlo__cc_result_type(shlo_compiler *cc, const shlo_op *op,
                                     int i) {
  return shlo__cc_value_type(cc, op->results[i]);
}

shlo_status shlo__cc_override_type(shlo_compiler *cc, int value,
                                  const shlo_type *t) {
  if (!cc->override) {
    if (!t) return SHLO_OK;
    cc->override = shlo__calloc((size_t)cc->func->n_values + 1, sizeof *cc->override);
    if (!cc->override) return SHLO_ENOMEM;
  }
  cc->override[value] = t;
  return SHLO_OK;
}

shlo_status shlo__cc_fail(shlo_compiler *cc, const shlo_op *op,
                         shlo_status code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  shlo__diag_vset_named(cc->diag, code, cc->m->filename, op->loc.line,
                        op->loc.col, op->name, fmt, ap);
  va_end(ap);
  return code;
}

shlo_status shlo__compile_unimplemented(shlo_compiler *cc, const shlo_op *op,
                                       shlo_step *step) {
  (void)step;
  return shlo__cc_fail(cc, op, SHLO_EUNSUPPORTED,
                      "op '%s' is not implemented in this build", op->name);
}

static void clear_defs(const shlo_block *b, char *mark) {
  for (int i = 0; i < b->n_args; i++) mark[b->args[i]] = 0;
  for (int i = 0; i < b->n_ops; i++) {
    const shlo_op *op = b->ops[i];
    for (int j = 0; j < op->n_results; j++) mark[op->results[j]] = 0;
    for (int r = 0; r < op->n_regions; r++) clear_defs(op->regions[r], mark);
  }
}

static void mark_defs(const shlo_block *b, char *mark, char bit) {
  for (int i = 0; i < b->n_args; i++) mark[b->args[i]] |= bit;
  for (int i = 0; i < b->n_ops; i++) {
    const shlo_op *op = b->ops[i];
    for (int j = 0; j < op->n_results; j++) mark[op->results[j]] |= bit;
    for (int r = 0; r < op->n_regions; r++) mark_defs(op->regions[r], mark, bit);
  }
}

typedef struct int_vec {
  int *v;
  int n, cap;
} int_vec;

static bool int_vec_push(int_vec *a, int x) {
  if (a->n == a->cap) {
    int cap = a->cap ? 2 * a->cap : 16;
    int *v = shlo__realloc(a->v, (size_t)cap * sizeof *v);
    if (!v) return false;
    a->v = v;
    a->cap = cap;
  }
  a->v[a->n++] = x;
  return true;
}

static bool collect_uses(const shlo_block *b, char *mark, int_vec *out) {
  for (int i = 0; i < b->n_ops; i++) {
    const shlo_op *op = b->ops[i];
    for (int j = 0; j < op->n_operands; j++) {
      int v = op->operands[j];
      if (!(mark[v] & 1) && !(mark[v] & 2)) {
        mark[v] |= 2;
        if (!int_vec_push(out, v)) return false;
      }
    }
    for (int r = 0; r < op->n_regions; r++)
      if (!collect_uses(op->regions[r], mark, out)) return false;
  }
  return true;
}

/* Values a block uses but does not define (its captures), in first-use
 * order, as a malloc'd array (NULL on OOM).  cc->mark is left zeroed. */
static int *block_captures(shlo_compiler *cc, const shlo_block *b, int *n) {
  int_vec out = {0};
  mark_defs(b, cc->mark, 1);
  bool ok = collect_uses(b, cc->mark, &out) && int_vec_push(&out, -1);
  clear_defs(b, cc->mark);
  for (int i = 0; i < out.n; i++)
    if (out.v[i] >= 0) cc->mark[out.v[i]] = 0;
  if (!ok) {
    shlo__free(out.v);
    return NULL;
  }
  *n = out.n - 1;
  return out.v;
}

/* A new slot for value; -1 on OOM. */
static int new_slot(block_ctx *bc, int value) {
  if (bc->n_slots == bc->cap) {
    int cap = bc->cap ? 2 * bc->cap : 16;
    int *v = shlo__realloc(bc->value_of, (size_t)cap * sizeof *v);
    if (!v) return -1;
    bc->value_of = v;
    bc->cap = cap;
  }
  bc->value_of[bc->n_slots] = value;
  bc->slot_of[value] = bc->n_slots;
  return bc->n_slots++;
}

static bool is_terminator(const shlo_op *op) {
  return op->code == SHLO_OP_FUNC_RETURN || op->code == SHLO_OP_RETURN;
}

/* Release lists: each slot dies after the step that uses it last; slots
 * that are never read die right after they are written.  Results of the
 * plan live to the end.  Linear: one pass finds each slot's last step, a
 * counting pass sizes each step's list, a third fills them in slot order. */
static shlo_status compute_releases(shlo_plan *p) {
  int *last = shlo__malloc((size_t)(p->n_slots ? p->n_slots : 1) * sizeof *last);
  if (!last) return SHLO_ENOMEM;
  for (int s = 0; s < p->n_slots; s++) last[s] = -1;
  for (int i = 0; i < p->n_steps; i++) {
    for (int k = 0; k < p->steps[i].n_out; k++) last[p->steps[i].out[k]] = i;
    for (int k = 0; k < p->steps[i].n_in; k++) last[p->steps[i].in[k]] = i;
  }
  for (int k = 0; k < p->n_results; k++) last[p->result_slots[k]] = -2;
  for (int slot = 0; slot < p->n_slots; slot++)
    if (last[slot] >= 0) p->steps[last[slot]].n_release++;
  shlo_status st = SHLO_OK;
  for (int i = 0; i < p->n_steps; i++) {
    shlo_step *s = &p->steps[i];
    if (!s->n_release) continue;
    s->release = shlo__malloc((size_t)s->n_release * sizeof *s->release);
    s->n_release = 0; /* refilled below; shlo__step_free needs no count */
    if (!s->release) st = SHLO_ENOMEM;
  }
  for (int slot = 0; !st && slot < p->n_slots; slot++) {
    if (last[slot] < 0) continue;
    shlo_step *s = &p->steps[last[slot]];
    s->release[s->n_release++] = slot;
  }
  shlo__free(last);
  return st;
}

static shlo_status compile_block(shlo_compiler *cc, const shlo_block *b,
                                 const int *captures, int n_captures,
                                 const char *name, shlo_plan **out);

static bool is_scalar_tensor(const shlo_type *t) {
  return t && t->kind == SHLO_TYPE_TENSOR && shlo_type_numel(t) == 1 &&
         !t->quant;
}

/* Build p->scalar when every slot holds a one-element tensor and every step
 * is a constant or an elementwise loop (a region body like a sort
 * comparator or a reduction).  Plans that do not qualify keep NULL. */
static shlo_status build_scalar_prog(const shlo_type *const *types,
                                     shlo_plan *p) {
  if (p->n_slots > SHLO_SCALAR_MAX_REGS) return SHLO_OK;
  for (int i = 0; i < p->n_slots; i++)
    if (!is_scalar_tensor(types[i])) return SHLO_OK;
  for (int i = 0; i < p->n_steps; i++) {
    const shlo_step *s = &p->steps[i];
    bool constant = s->op && s->op->code == SHLO_OP_CONSTANT;
    if (s->n_plans || s->n_out != 1 || (!constant && !s->loop.range))
      return SHLO_OK;
  }
  shlo_scalar_prog *sp = shlo__calloc(1, sizeof *sp);
  if (!sp) return SHLO_ENOMEM;
  sp->n_regs = p->n_slots;
  sp->init = shlo__calloc((size_t)p->n_slots + 1, 16);
  sp->ops = shlo__calloc((size_t)p->n_steps + 1, sizeof *sp->ops);
  sp->arg_size = shlo__calloc((size_t)p->n_args + 1, sizeof *sp->arg_size);
  sp->res_size = shlo__calloc((size_t)p->n_results + 1, sizeof *sp->res_size);
  if (!sp->init || !sp->ops || !sp->arg_size || !sp->res_size) {
    shlo__scalar_prog_free(sp);
    return SHLO_ENOMEM;
  }
  for (int i = 0; i < p->n_steps; i++) {
    const shlo_step *s = &p->steps[i];
    if (s->op && s->op->code == SHLO_OP_CONSTANT) {
      const shlo_value *v = *(shlo_value *const *)s->params;
      memcpy(sp->init + (size_t)s->out[0] * 16, v->data, v->nbytes);
    } else {
      sp->ops[sp->n_ops++] = s;
    }
  }
  for (int i = 0; i < p->n_args; i++)
    sp->arg_size[i] = shlo_elem_size(types[p->arg_slots[i]]->elem);
  for (int k = 0; k < p->n_results; k++)
    sp->res_size[k] = shlo_elem_size(types[p->result_slots[k]]->elem);
  p->scalar = sp;
  return SHLO_OK;
}

/* Ops whose cost is proportional to the elements they write. */
static const bool op_is_linear[SHLO_OP_COUNT] = {
#define LINEAR_ROW(e, name, c, v, fl, k, kw) [SHLO_OP_##e] = true,
    SHLO_OPS_ELEMENTWISE(LINEAR_ROW) SHLO_OPS_SHAPE(LINEAR_ROW)
#undef LINEAR_ROW
    [SHLO_OP_CONSTANT] = true, [SHLO_OP_TUPLE] = true,
    [SHLO_OP_GET_TUPLE_ELEMENT] = true, [SHLO_OP_OPTIMIZATION_BARRIER] = true,
};

/* plan->work: the elements the plan's steps write, or -1 (see plan.h). */
static int64_t plan_work(const shlo_plan *p, const shlo_type *const *types) {
  int64_t work = 0;
  for (int i = 0; i < p->n_steps; i++) {
    const shlo_step *s = &p->steps[i];
    if (s->n_plans || !s->op || (unsigned)s->op->code >= SHLO_OP_COUNT ||
        !op_is_linear[s->op->code])
      return -1;
    for (int k = 0; k < s->n_out; k++) {
      int64_t n = types[s->out[k]] ? shlo_type_numel(types[s->out[k]]) : 0;
      if (n < 0 || work > INT64_MAX / 2 - n) return -1;
      work += n;
    }
  }
  return work;
}

/* Elementwise fusion over the finished plan (kernels/fuse.c); it needs
 * each slot's type. */
static shlo_status fuse_block(shlo_compiler *cc, const block_ctx *bc,
                              shlo_plan *p) {
  const shlo_type **types = shlo__calloc((size_t)bc->n_slots + 1, sizeof *types);
  if (!types) return SHLO_ENOMEM;
  for (int slot = 0; slot < bc->n_slots; slot++)
    types[slot] = cc->func->value_types[bc->value_of[slot]];
  p->work = plan_work(p, types);
  shlo_status st = cc->no_fusion ? SHLO_OK : shlo__fuse_plan(p, types);
  if (!st && bc->outer) st = build_scalar_prog(types, p);
  shlo__free(types);
  return st;
}

shlo_status shlo__cc_compile_regions(shlo_compiler *cc, const shlo_op *op,
                                    shlo_step *step) {
  if (!op->n_regions) return SHLO_OK;
  step->plans = shlo__calloc((size_t)op->n_regions, sizeof *step->plans);
  step->n_captures = shlo__calloc((size_t)op->n_regions, sizeof *step->n_captures);
  if (!step->plans || !step->n_captures) return SHLO_ENOMEM;
  step->n_plans = op->n_regions;
  for (int r = 0; r < op->n_regions; r++) {
    int n_cap = 0;
    int *caps = block_captures(cc, op->regions[r], &n_cap);
    if (!caps) return SHLO_ENOMEM;
    shlo_status st = compile_block(cc, op->regions[r], caps, n_cap,
                                   "<region>", &step->plans[r]);
    if (st) {
      shlo__free(caps);
      return st;
    }
    int *in = shlo__realloc(step->in, (size_t)(step->n_in + n_cap + 1) * sizeof *in);
    if (!in) {
      shlo__free(caps);
      return SHLO_ENOMEM;
    }
    step->in = in;
    for (int k = 0; k < n_cap; k++) {
      int slot = cc->cur->slot_of[caps[k]];
      if (slot < 0) {
        shlo__free(caps);
        return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                            "region uses a value that is not in scope");
      }
      step->in[step->n_in++] = slot;
    }
    step->n_captures[r] = n_cap;
    shlo__free(caps);
  }
  return SHLO_OK;
}

static bool op_is_quantized(shlo_compiler *cc, const shlo_op *op) {
  for (int k = 0; k < op->n_operands; k++)
    if (shlo__cc_operand_type(cc, op, k)->quant) return true;
  for (int k = 0; k < op->n_results; k++)
    if (shlo__cc_result_type(cc, op, k)->quant) return true;
  return false;
}

static shlo_status compile_op(shlo_compiler *cc, block_ctx *bc,
                              const shlo_op *op, shlo_step *s) {
  s->op = op;
  s->in = shlo__malloc((size_t)(op->n_operands + 1) * sizeof *s->in);
  s->out = shlo__malloc((size_t)(op->n_results + 1) * sizeof *s->out);
  if (!s->in || !s->out) return SHLO_ENOMEM;
  for (int k = 0; k < op->n_operands; k++) {
    int slot = bc->slot_of[op->operands[k]];
    if (slot < 0)
      return shlo__cc_fail(cc, op, SHLO_EVERIFY, "operand %d is not in scope", k);
    s->in[s->n_in++] = slot;
  }
  for (int k = 0; k < op->n_results; k++) {
    int slot = new_slot(bc, op->results[k]);
    if (slot < 0) return SHLO_ENOMEM;
    s->out[s->n_out++] = slot;
  }
  for (int k = 0; k < op->n_results; k++) {
    const shlo_type *t = cc->func->value_types[op->results[k]];
    /* async_start's future has no shape to be dynamic. */
    bool future = t->kind == SHLO_TYPE_OPAQUE && t->encoding &&
                  strstr(t->encoding, "stablehlo.future<");
    if (!future && !shlo_type_is_static(t))
      return shlo__cc_fail(cc, op, SHLO_EUNSUPPORTED,
                          "dynamic result shapes are not supported");
  }
  shlo_compile_fn fn = shlo__op_compile_fn((shlo_opcode)op->code);
  bool quantized = op_is_quantized(cc, op);
  shlo_status st = quantized ? shlo__compile_quantized(cc, op, s, fn)
                             : fn(cc, op, s);
  /* A quantized op's kernel wraps its float loop: never fuse it. */
  if (quantized) s->loop.range = NULL, s->loop.range_one = NULL;
  if (!st && !s->fn)
    st = shlo__cc_fail(cc, op, SHLO_EUNSUPPORTED, "no kernel for this op");
  return st;
}

/* Give the block's arguments, then its captures, their slots in p. */
static shlo_status block_enter(block_ctx *bc, const shlo_block *b,
                               const int *captures, int n_captures,
                               shlo_plan *p) {
  for (int i = 0; i < b->n_args; i++)
    if ((p->arg_slots[i] = new_slot(bc, b->args[i])) < 0) return SHLO_ENOMEM;
  for (int i = 0; i < n_captures; i++)
    if ((p->arg_slots[b->n_args + i] = new_slot(bc, captures[i])) < 0)
      return SHLO_ENOMEM;
  return SHLO_OK;
}

/* Undo block_enter and every new_slot since: the block's values leave
 * scope, its captures get their outer slots back. */
static void block_leave(block_ctx *bc, const int *captures, int n_captures,
                        const int *saved) {
  for (int s = 0; s < bc->n_slots; s++) bc->slot_of[bc->value_of[s]] = -1;
  for (int i = 0; i < n_captures; i++) bc->slot_of[captures[i]] = saved[i];
  shlo__free(bc->value_of);
}

/* One more op to compile: within the caller's limits? */
static shlo_status compile_check(shlo_compiler *cc, const shlo_op *op) {
  char msg[160];
  shlo_status st = shlo__limits_check(cc->limits, ++cc->n_ops, "compiling",
                                      msg, sizeof msg);
  return st ? shlo__cc_fail(cc, op, st, "%s", msg) : SHLO_OK;
}

static shlo_status compile_steps(shlo_compiler *cc, block_ctx *bc,
                                 const shlo_block *b, shlo_plan *p) {
  const shlo_op *term = NULL;
  for (int i = 0; i < b->n_ops; i++) {
    const shlo_op *op = b->ops[i];
    shlo_status st = compile_check(cc, op); /* counts what the parser did */
    if (st) return st;
    if (is_terminator(op)) {
      term = op;
      break;
    }
    st = compile_op(cc, bc, op, &p->steps[p->n_steps++]);
    if (st) return st;
  }
  if (!term) return SHLO_OK;
  p->n_results = term->n_operands;
  p->result_slots = shlo__malloc((size_t)(p->n_results + 1) * sizeof(int));
  if (!p->result_slots) return SHLO_ENOMEM;
  for (int k = 0; k < term->n_operands; k++) {
    p->result_slots[k] = bc->slot_of[term->operands[k]];
    if (p->result_slots[k] < 0)
      return shlo__cc_fail(cc, term, SHLO_EVERIFY, "returned value not in scope");
  }
  return SHLO_OK;
}

static shlo_status compile_block(shlo_compiler *cc, const shlo_block *b,
                                 const int *captures, int n_captures,
                                 const char *name, shlo_plan **out) {
  *out = NULL;
  shlo_status st = SHLO_ENOMEM;
  block_ctx bc = {0};
  bc.outer = cc->cur;
  bc.slot_of = cc->slot_of;
  int *saved = shlo__malloc((size_t)(n_captures + 1) * sizeof *saved);
  shlo_plan *p = shlo__calloc(1, sizeof *p);
  if (saved) /* what slot_of says of each capture outside the block */
    for (int i = 0; i < n_captures; i++) saved[i] = bc.slot_of[captures[i]];
  if (!saved || !p) goto done;
  cc->cur = &bc;
  p->name = name;
  p->n_args = b->n_args + n_captures;
  p->arg_slots = shlo__malloc((size_t)(p->n_args + 1) * sizeof(int));
  p->steps = shlo__calloc((size_t)b->n_ops + 1, sizeof *p->steps);
  if (!p->arg_slots || !p->steps) goto done;
  st = block_enter(&bc, b, captures, n_captures, p);
  if (!st) st = compile_steps(cc, &bc, b, p);
  if (st) goto done;
  p->n_slots = bc.n_slots;
  st = fuse_block(cc, &bc, p);
  if (!st) st = compute_releases(p);
  p->max_io = 1;
  for (int i = 0; i < p->n_steps; i++) {
    if (p->steps[i].n_in > p->max_io) p->max_io = p->steps[i].n_in;
    if (p->steps[i].n_out > p->max_io) p->max_io = p->steps[i].n_out;
  }
done:
  cc->cur = bc.outer;
  if (saved) block_leave(&bc, captures, n_captures, saved);
  else shlo__free(bc.value_of);
  shlo__free(saved);
  if (st) {
    if (st == SHLO_ENOMEM && cc->diag && !cc->diag->code)
      shlo_diag_set(cc->diag, SHLO_ENOMEM, cc->m->filename, 0, 0,
                    "out of memory while compiling");
    shlo__plan_free(p);
    return st;
  }
  *out = p;
  return SHLO_OK;
}

static int func_index(const shlo_compiler *cc, const char *name) {
  return shlo__name_map_get(&cc->func_index, name, strlen(name));
}

/* cc->func_index over every function (the first of a repeated name, as a
 * linear search would find). */
static bool index_funcs(shlo_compiler *cc) {
  for (int i = 0; i < cc->m->n_funcs; i++) {
    const char *name = cc->m->funcs[i]->name;
    if (!shlo__name_map_put(&cc->func_index, name, strlen(name), i))
      return false;
  }
  return true;
}

static shlo_status compile_func(shlo_compiler *cc, int idx) {
  if (cc->func_plans[idx]) return SHLO_OK;
  const shlo_func *f = cc->m->funcs[idx];
  if (!f->body)
    return shlo_diag_set(cc->diag, SHLO_EUNSUPPORTED, cc->m->filename,
                         f->loc.line, f->loc.col,
                         "function '@%s' has no body", f->name);
  const shlo_func *saved_func = cc->func;
  block_ctx *saved_cur = cc->cur;
  const shlo_type **saved_override = cc->override;
  int *saved_slot_of = cc->slot_of;
  char *saved_mark = cc->mark;
  cc->func = f;
  cc->cur = NULL;
  cc->override = NULL;
  cc->slot_of = shlo__malloc(((size_t)f->n_values + 1) * sizeof *cc->slot_of);
  cc->mark = shlo__calloc((size_t)f->n_values + 1, 1);
  shlo_status st = SHLO_ENOMEM;
  if (cc->slot_of && cc->mark) {
    for (int v = 0; v < f->n_values; v++) cc->slot_of[v] = -1;
    cc->compiling[idx] = 1;
    st = compile_block(cc, f->body, NULL, 0, f->name, &cc->func_plans[idx]);
    cc->compiling[idx] = 0;
  } else {
    shlo_diag_set(cc->diag, SHLO_ENOMEM, cc->m->filename, 0, 0,
                  "out of memory while compiling");
  }
  shlo__free(cc->slot_of);
  shlo__free(cc->mark);
  cc->slot_of = saved_slot_of;
  cc->mark = saved_mark;
  shlo__free(cc->override);
  cc->override = saved_override;
  cc->func = saved_func;
  cc->cur = saved_cur;
  return st;
}

shlo_status shlo__cc_func_plan(shlo_compiler *cc, const shlo_op *op,
                              const char *name, shlo_plan **out) {
  int idx = func_index(cc, name);
  if (idx < 0)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY, "no function named '@%s'", name);
  if (cc->compiling[idx])
    return shlo__cc_fail(cc, op, SHLO_EUNSUPPORTED,
                        "recursive call to '@%s' is not supported", name);
  shlo_status st = compile_func(cc, idx);
  if (st) return st;
  *out = cc->func_plans[idx];
  return SHLO_OK;
}

/* A module with dynamic shapes has no plan of its own: it is refined and
 * compiled per argument-shape signature when executed (refine_cache.h),
 * and at once when the entry's own signature is static. */
static shlo_status compile_refining(const shlo_module *m,
                                    const shlo_func *entry, bool no_fusion,
                                    shlo_context *ctx, shlo_executable **out,
                                    shlo_diag *diag) {
  shlo_executable *e = shlo__calloc(1, sizeof *e);
  if (e) e->refine = shlo__refine_cache_new(m, entry, no_fusion, ctx);
  if (!e || !e->refine) {
    shlo__free(e);
    return shlo_diag_set(diag, SHLO_ENOMEM, m->filename, 0, 0, "out of memory");
  }
  e->m = m;
  e->ctx = ctx;
  e->entry = entry;
  e->entry_index = -1;
  for (int i = 0; i < m->n_funcs && e->entry_index < 0; i++)
    if (m->funcs[i] == entry) e->entry_index = i;
  bool fixed = true;
  for (int i = 0; i < entry->n_args; i++)
    fixed = fixed && shlo__refine_static(entry->arg_types[i]);
  shlo_status st = fixed ? shlo__refine_cache_prepare(
                               e->refine, entry->arg_types, entry->n_args, diag)
                         : SHLO_OK;
  if (st) {
    shlo_executable_free(e);
    return st;
  }
  *out = e;
  return SHLO_OK;
}

/* Whether executions of plan p may be timed on the executing thread
 * alone (core/timed_choice.h): none of its steps is a product, a
 * convolution or a factorisation, which two threads always run faster,
 * nor a loop, call or branch, whose body may be any of those, nor an
 * exchange with the outside (feeds, collectives), whose time is not the
 * program's.  What is left moves and maps data, where whether the second
 * thread helps depends on how fast the cores share it. */
static bool may_run_alone(const shlo_plan *p) {
  if (!p) return false;
  for (int i = 0; i < p->n_steps; i++) {
    const shlo_op *op = p->steps[i].op;
    if (!op) return false;
    switch (op->code) {
    case SHLO_OP_DOT: case SHLO_OP_DOT_GENERAL: case SHLO_OP_CONVOLUTION:
    case SHLO_OP_DYNAMIC_CONV: case SHLO_OP_CHLO_RAGGED_DOT:
    case SHLO_OP_EINSUM: case SHLO_OP_UNARY_EINSUM: case SHLO_OP_FFT:
    case SHLO_OP_CHOLESKY: case SHLO_OP_TRIANGULAR_SOLVE:
    case SHLO_OP_CUSTOM_CALL: case SHLO_OP_WHILE: case SHLO_OP_CASE:
    case SHLO_OP_IF: case SHLO_OP_CALL: case SHLO_OP_COMPOSITE:
    case SHLO_OP_CHLO_SCAN: case SHLO_OP_INFEED: case SHLO_OP_OUTFEED:
    case SHLO_OP_SEND: case SHLO_OP_RECV: case SHLO_OP_ALL_GATHER:
    case SHLO_OP_ALL_REDUCE: case SHLO_OP_ALL_TO_ALL:
    case SHLO_OP_COLLECTIVE_BROADCAST: case SHLO_OP_COLLECTIVE_PERMUTE:
    case SHLO_OP_COLLECTIVE_REDUCE: case SHLO_OP_REDUCE_SCATTER:
    case SHLO_OP_CROSS_REPLICA_SUM:
    case SHLO_OP_RUN_PARALLEL: case SHLO_OP_ASYNC_START:
      return false;
    default:
      break;
    }
  }
  return true;
}

static shlo_status compile_in_scope(const shlo_module *m,
                                    const shlo_compile_opts *opts,
                                    shlo_executable **out, shlo_diag *diag);

/* The compile runs with opts->context as the thread's scope, so what it
 * allocates and the settings it reads are that context's. */
shlo_status shlo_compile(const shlo_module *m, const shlo_compile_opts *opts,
                         shlo_executable **out, shlo_diag *diag) {
  *out = NULL;
  shlo_context *ctx = opts ? opts->context : NULL;
  shlo_context *prev = shlo__ctx_swap(ctx ? ctx : shlo__ctx_current());
  shlo_status st = compile_in_scope(m, opts, out, diag);
  shlo__ctx_swap(prev);
  return st;
}

static shlo_status compile_in_scope(const shlo_module *m,
                                    const shlo_compile_opts *opts,
                                    shlo_executable **out, shlo_diag *diag) {
  shlo_context *ctx = opts ? opts->context : NULL;
  /* No unverified program reaches the executor. */
  if (!opts || !opts->verified) {
    shlo_verify_opts vo = {.require_entry = true,
                           .entry = opts ? opts->entry : NULL,
                           .limits = opts ? opts->limits : NULL};
    shlo_status vst = shlo_verify_module_first(m, &vo, diag);
    if (vst) return vst;
  }
  const shlo_func *entry = opts && opts->entry
                               ? shlo_module_find_func(m, opts->entry)
                               : shlo_module_entry(m);
  if (!entry) {
    if (opts && opts->entry)
      return shlo_diag_set(diag, SHLO_EINPUT, m->filename, 0, 0,
                           "no function named '@%s'", opts->entry);
    return shlo_diag_set(diag, SHLO_EINPUT, m->filename, 0, 0,
                         "no entry function: expected @main or a single "
                         "function");
  }
  /* The compiler, the refiner and the executor recurse once per call and
   * per region: a chain deeper than the bound is refused before them. */
  shlo_status dst = shlo__check_depth(m, entry, opts ? opts->limits : NULL,
                                      diag);
  if (dst) return dst;
  bool no_fusion = (opts && opts->no_fusion) || shlo__ctx_options(ctx)->no_fusion;
  if (shlo__module_is_dynamic(m))
    return compile_refining(m, entry, no_fusion, ctx, out, diag);
  shlo_compiler cc = {0};
  cc.m = m;
  cc.diag = diag;
  cc.limits = opts ? opts->limits : NULL;
  cc.no_fusion = no_fusion;
  shlo_executable *e = shlo__calloc(1, sizeof *e);
  cc.func_plans = shlo__calloc((size_t)m->n_funcs + 1, sizeof *cc.func_plans);
  cc.compiling = shlo__calloc((size_t)m->n_funcs + 1, 1);
  if (!e || !cc.func_plans || !cc.compiling || !index_funcs(&cc)) {
    shlo__free(e);
    shlo__free(cc.func_plans);
    shlo__free(cc.compiling);
    shlo__name_map_free(&cc.func_index);
    return shlo_diag_set(diag, SHLO_ENOMEM, m->filename, 0, 0, "out of memory");
  }
  e->m = m;
  e->ctx = ctx;
  shlo__choice_init(&e->alone);
  e->n_funcs = m->n_funcs;
  e->func_plans = cc.func_plans;
  e->entry = entry;
  e->entry_index = func_index(&cc, entry->name);
  shlo_status st = compile_func(&cc, e->entry_index);
  shlo__free(cc.compiling);
  shlo__name_map_free(&cc.func_index);
  if (st) {
    shlo_executable_free(e);
    return st;
  }
  e->may_run_alone = may_run_alone(e->func_plans[e->entry_index]);
  *out = e;
  return SHLO_OK;
}

/* Freed in its own context: its plans came from there (core/alloc.h). */
static void executable_free_in_scope(shlo_executable *e);

void shlo_executable_free(shlo_executable *e) {
  if (!e) return;
  shlo_context *prev = shlo__ctx_swap(e->ctx ? e->ctx : shlo__ctx_current());
  executable_free_in_scope(e);
  shlo__ctx_swap(prev);
}

static void executable_free_in_scope(shlo_executable *e) {
  for (int i = 0; i < e->n_funcs; i++) shlo__plan_free(e->func_plans[i]);
  shlo__free(e->func_plans);
  shlo__refine_cache_free(e->refine);
  shlo__free(e);
}

const shlo_func *shlo_executable_entry(const shlo_executable *e) {
  return e->entry;
}

shlo_context *shlo_executable_context(const shlo_executable *e) {
  return e->ctx;
}

int64_t shlo_executable_work(const shlo_executable *e) {
  if (e->refine) return -1; /* unknown until the shapes are */
  return e->func_plans[e->entry_index]->work;
}

int64_t shlo_executable_refinements(const shlo_executable *e) {
  return e->refine ? shlo__refine_cache_compiles(e->refine) : 0;
}

/* ---- the executable, as the runtime sees it (compile/compiler.h) ---- */

const shlo_plan *shlo__executable_plan(const shlo_executable *e) {
  return e->refine ? NULL : e->func_plans[e->entry_index];
}

shlo__choice *shlo__executable_alone(const shlo_executable *e) {
  /* (atomics that executions update: the executable is otherwise shared
   * read-only) */
  return e->may_run_alone ? (shlo__choice *)&e->alone : NULL;
}

shlo_refine_cache *shlo__executable_refine(const shlo_executable *e) {
  return e->refine;
}

const shlo_module *shlo__executable_module(const shlo_executable *e) {
  return e->m;
}

static void explain_plan(const shlo_plan *p, FILE *f, int indent) {
  fprintf(f, "%*splan %s: %d args, %d slots, %d steps, results [", indent, "",
          p->name, p->n_args, p->n_slots, p->n_steps);
  for (int k = 0; k < p->n_results; k++)
    fprintf(f, "%s%d", k ? ", " : "", p->result_slots[k]);
  fprintf(f, "]\n");
  for (int i = 0; i < p->n_steps; i++) {
    const shlo_step *s = &p->steps[i];
    fprintf(f, "%*s%3d: %s (", indent + 2, "", i,
            s->label ? s->label : s->op->name);
    for (int k = 0; k < s->n_in; k++) fprintf(f, "%s%d", k ? ", " : "", s->in[k]);
    fprintf(f, ") -> (");
    for (int k = 0; k < s->n_out; k++)
      fprintf(f, "%s%d", k ? ", " : "", s->out[k]);
    fprintf(f, ")");
    if (s->n_release) {
      fprintf(f, " free [");
      for (int k = 0; k < s->n_release; k++)
        fprintf(f, "%s%d", k ? ", " : "", s->release[k]);
      fprintf(f, "]");
    }
    fprintf(f, "\n");
    for (int r = 0; r < s->n_plans; r++) explain_plan(s->plans[r], f, indent + 6);
  }
}

void shlo_executable_explain(const shlo_executable *e, FILE *f) {
  if (e->refine) {
    fprintf(f, "plan %s: dynamic shapes, refined and compiled per argument "
            "shapes when called (%lld so far)\n", e->entry->name,
            (long long)shlo__refine_cache_compiles(e->refine));
    return;
  }
  explain_plan(e->func_plans[e->entry_index], f, 0);
}
