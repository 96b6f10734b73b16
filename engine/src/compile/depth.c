/* SPDX-License-Identifier: Apache-2.0 */
/* How deep the compiler, the refiner and the executor will recurse on a
 * module, measured before any of them starts (depth.h).
 *
 * They walk a call by walking its callee then and there (compile_func ->
 * compile_block -> compile_op -> call -> compile_func ...), and a region
 * by walking its block, so their stack grows by one level for each call
 * and each region between the entry function and the deepest op.  The
 * parser bounds regions within one function; only here is a chain of
 * calls through many functions seen whole.  This walk itself uses work
 * lists, not recursion, and visits each function once (a callee shared by
 * many callers costs one visit), so it is linear in the module's size. */
#include "frontend/module.h"
#include "compile/depth.h"

#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/limits.h"
#include "core/namemap.h"
#include "ops/ops.h"

/* A call (or another op naming a function the compiler compiles) at
 * `level` regions deep inside its function. */
typedef struct call_edge {
  const shlo_op *op;
  const char *callee;
  int level, callee_idx;
} call_edge;

/* One function on the walk's stack: its calls, and the next to look at. */
typedef struct func_frame {
  int idx;
  call_edge *edges;
  int n_edges, next;
  int depth; /* deepest nesting found in it so far */
} func_frame;

/* A block being scanned for calls: the next op and how deep it is. */
typedef struct block_frame {
  const shlo_block *b;
  int next, level;
} block_frame;

typedef struct depth_walk {
  const shlo_module *m;
  shlo_diag *diag;
  int limit;
  shlo_name_map index; /* function name -> index in m->funcs */
  char *state;         /* per function: 0 unseen, 1 on the stack, 2 done */
  int *depth;          /* per function, once done */
  func_frame *stack;
  int n_stack;
  block_frame *blocks; /* scratch for scan_func */
  int cap_blocks;
} depth_walk;

static bool push_edge(call_edge **e, int *n, int *cap, call_edge x) {
  if (*n == *cap) {
    int c = *cap ? *cap * 2 : 8;
    call_edge *w = shlo__realloc(*e, (size_t)c * sizeof *w);
    if (!w) return false;
    *e = w;
    *cap = c;
  }
  (*e)[(*n)++] = x;
  return true;
}

/* The edges of one op: every function symbol in the attributes the
 * compiler follows (func.call's callee, composite's decomposition, a
 * grid's programs and infeed), in the order it follows them. */
static bool op_edges(depth_walk *W, const shlo_op *op, int level,
                     call_edge **e, int *n, int *cap) {
  static const char *const names[] = {"callee", "decomposition", "programs",
                                      "infeed"};
  for (size_t k = 0; k < sizeof names / sizeof *names; k++) {
    const shlo_attr *a = shlo_op_attr(op, names[k]);
    if (!a) continue;
    /* a symbol, a list of them, or a list of such lists (programs) */
    const shlo_attr *one[1] = {a};
    const shlo_attr *const *items = a->kind == SHLO_ATTR_ARRAY ? a->items : one;
    int n_items = a->kind == SHLO_ATTR_ARRAY ? a->n : 1;
    for (int i = 0; i < n_items; i++) {
      const shlo_attr *row[1] = {items[i]};
      const shlo_attr *const *syms =
          items[i]->kind == SHLO_ATTR_ARRAY ? items[i]->items : row;
      int n_syms = items[i]->kind == SHLO_ATTR_ARRAY ? items[i]->n : 1;
      for (int j = 0; j < n_syms; j++) {
        if (syms[j]->kind != SHLO_ATTR_SYMBOL || !syms[j]->str) continue;
        const char *s = syms[j]->str;
        int idx = shlo__name_map_get(&W->index, s, strlen(s));
        if (idx < 0) continue; /* the compiler reports the missing name */
        if (!push_edge(e, n, cap, (call_edge){op, s, level, idx}))
          return false;
      }
    }
  }
  return true;
}

static bool push_block(depth_walk *W, int *n, const shlo_block *b,
                       int level) {
  if (*n == W->cap_blocks) {
    int c = W->cap_blocks ? W->cap_blocks * 2 : 16;
    block_frame *w = shlo__realloc(W->blocks, (size_t)c * sizeof *w);
    if (!w) return false;
    W->blocks = w;
    W->cap_blocks = c;
  }
  W->blocks[(*n)++] = (block_frame){b, 0, level};
  return true;
}

/* Fills fr with function fr->idx's calls, in the order the compiler meets
 * them (each op's regions before the next op), and fr->depth with how deep
 * its regions nest. */
static shlo_status scan_func(depth_walk *W, func_frame *fr) {
  const shlo_func *f = W->m->funcs[fr->idx];
  int cap = 0, n = 0;
  fr->edges = NULL;
  fr->n_edges = fr->next = fr->depth = 0;
  if (!f->body) return SHLO_OK;
  if (!push_block(W, &n, f->body, 0)) return SHLO_ENOMEM;
  while (n > 0) {
    block_frame *t = &W->blocks[n - 1];
    if (t->next == t->b->n_ops) {
      n--;
      continue;
    }
    const shlo_op *op = t->b->ops[t->next++];
    int level = t->level;
    if (!op_edges(W, op, level, &fr->edges, &fr->n_edges, &cap))
      return SHLO_ENOMEM;
    if (op->n_regions && level + 1 > fr->depth) fr->depth = level + 1;
    if (fr->depth > W->limit)
      return shlo_diag_set(W->diag, SHLO_ELIMIT, W->m->filename, op->loc.line,
                           op->loc.col,
                           "regions nested deeper than %d (the limit)",
                           W->limit);
    /* the first region on top, so it is scanned first */
    for (int r = op->n_regions - 1; r >= 0; r--)
      if (!push_block(W, &n, op->regions[r], level + 1)) return SHLO_ENOMEM;
  }
  return SHLO_OK;
}

static shlo_status push_func(depth_walk *W, int idx) {
  func_frame *fr = &W->stack[W->n_stack++];
  fr->idx = idx;
  W->state[idx] = 1;
  return scan_func(W, fr);
}

/* The next step of the walk from the function on top of the stack. */
static shlo_status step(depth_walk *W) {
  func_frame *fr = &W->stack[W->n_stack - 1];
  if (fr->next == fr->n_edges) { /* all its callees measured */
    W->depth[fr->idx] = fr->depth;
    W->state[fr->idx] = 2;
    shlo__free(fr->edges);
    W->n_stack--;
    return SHLO_OK;
  }
  const call_edge *e = &fr->edges[fr->next];
  if (W->state[e->callee_idx] == 1) /* as the compiler would say */
    return shlo_diag_set(W->diag, SHLO_EUNSUPPORTED, W->m->filename,
                         e->op->loc.line, e->op->loc.col,
                         "%s: recursive call to '@%s' is not supported",
                         e->op->name, e->callee);
  if (W->state[e->callee_idx] == 0) return push_func(W, e->callee_idx);
  int d = e->level + 1 + W->depth[e->callee_idx];
  if (d > W->limit)
    return shlo_diag_set(W->diag, SHLO_ELIMIT, W->m->filename,
                         e->op->loc.line, e->op->loc.col,
                         "call chain deeper than %d (the limit; the regions "
                         "around each call count too) from this call to "
                         "'@%s'", W->limit, e->callee);
  if (d > fr->depth) fr->depth = d;
  fr->next++;
  return SHLO_OK;
}

shlo_status shlo__check_depth(const shlo_module *m, const shlo_func *entry,
                              const shlo_compile_limits *limits,
                              shlo_diag *diag) {
  depth_walk W = {.m = m, .diag = diag, .limit = shlo__max_depth(limits)};
  size_t nf = (size_t)m->n_funcs + 1;
  W.state = shlo__calloc(nf, 1);
  W.depth = shlo__calloc(nf, sizeof *W.depth);
  W.stack = shlo__calloc(nf, sizeof *W.stack); /* each function once at most */
  shlo_status st = W.state && W.depth && W.stack ? SHLO_OK : SHLO_ENOMEM;
  int entry_idx = -1;
  for (int i = 0; !st && i < m->n_funcs; i++) {
    const char *name = m->funcs[i]->name;
    if (m->funcs[i] == entry) entry_idx = i;
    if (!shlo__name_map_put(&W.index, name, strlen(name), i)) st = SHLO_ENOMEM;
  }
  if (!st && entry_idx >= 0) st = push_func(&W, entry_idx);
  while (!st && W.n_stack > 0) st = step(&W);
  for (int i = 0; i < W.n_stack; i++) shlo__free(W.stack[i].edges);
  if (st == SHLO_ENOMEM && diag && !diag->code)
    shlo_diag_set(diag, SHLO_ENOMEM, m->filename, 0, 0,
                  "out of memory measuring how deep calls nest");
  shlo__name_map_free(&W.index);
  shlo__free(W.blocks);
  shlo__free(W.stack);
  shlo__free(W.depth);
  shlo__free(W.state);
  return st;
}
