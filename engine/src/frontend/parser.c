/* SPDX-License-Identifier: Apache-2.0 */
/* The parser: modules, functions, regions and ops in generic form.  Pretty
 * forms are in parse_pretty.c, types and attributes in parse_core.c. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/module.h"
#include "core/alloc.h"
#include "ops/ops.h"
#include "frontend/names.h"
#include "frontend/parser_int.h"
#include "shlo/artifact.h"
#include "core/limits.h"

/* ---- values and scopes ---- */

static void *grow(parser *P, void *v, int *cap, size_t elem, int need) {
  if (need <= *cap) return v;
  int ncap = *cap ? *cap : 16;
  while (ncap < need) {
    if (ncap > (1 << 28)) shlo__perr(P, "program too large");
    ncap *= 2;
  }
  void *w = shlo__realloc(v, (size_t)ncap * elem);
  if (!w) {
    shlo_diag_set(P->diag, SHLO_ENOMEM, P->filename, 0, 0,
                  "out of memory while parsing");
    longjmp(P->on_error, 2);
  }
  *cap = ncap;
  return w;
}

int shlo__new_value(parser *P, const shlo_type *t) {
  P->vtypes = grow(P, P->vtypes, &P->cap_values, sizeof *P->vtypes,
                   P->n_values + 1);
  P->vtypes[P->n_values] = t;
  return P->n_values++;
}

static unsigned name_hash(const parser *P, const char *s, size_t n) {
  return shlo__name_hash(s, n) & (unsigned)(P->n_buckets - 1);
}

/* Twice the buckets, the chains rebuilt in definition order (so a later
 * name still shadows an earlier one): lookups stay O(1) however many
 * values a function has. */
static void more_buckets(parser *P) {
  int n = P->n_buckets * 2;
  int *b = shlo__malloc((size_t)n * sizeof *b);
  if (!b) return; /* slower lookups, still correct */
  shlo__free(P->buckets);
  P->buckets = b;
  P->n_buckets = n;
  for (int i = 0; i < n; i++) b[i] = -1;
  for (int i = 0; i < P->n_scope; i++) {
    unsigned h = name_hash(P, P->scope[i].name, P->scope[i].len);
    P->scope[i].prev = b[h];
    b[h] = i;
  }
}

void shlo__bind_name(parser *P, const char *name, size_t len, int id, int count) {
  P->scope = grow(P, P->scope, &P->cap_scope, sizeof *P->scope,
                  P->n_scope + 1);
  if (P->n_scope >= 2 * P->n_buckets) more_buckets(P);
  unsigned h = name_hash(P, name, len);
  scope_entry *e = &P->scope[P->n_scope];
  e->name = name;
  e->len = len;
  e->id = id;
  e->count = count;
  e->prev = P->buckets[h];
  P->buckets[h] = P->n_scope++;
}

int shlo__scope_mark(parser *P) { return P->n_scope; }

void shlo__scope_pop(parser *P, int mark) {
  while (P->n_scope > mark) {
    scope_entry *e = &P->scope[--P->n_scope];
    P->buckets[name_hash(P, e->name, e->len)] = e->prev;
  }
}

static const scope_entry *lookup(parser *P, const char *name, size_t len) {
  for (int i = P->buckets[name_hash(P, name, len)]; i >= 0;
       i = P->scope[i].prev)
    if (P->scope[i].len == len && !memcmp(P->scope[i].name, name, len))
      return &P->scope[i];
  return NULL;
}

const char *shlo__parse_value_name(parser *P, size_t *n) {
  shlo__skip_ws(P);
  if (P->p >= P->end || *P->p != '%') shlo__perr(P, "expected a value like %%x");
  P->p++;
  const char *s = P->p;
  while (P->p < P->end && (isalnum((unsigned char)*P->p) || *P->p == '_' ||
                           *P->p == '$' || *P->p == '.' || *P->p == '-'))
    P->p++;
  if (P->p == s) shlo__perr(P, "expected a value name after '%%'");
  *n = (size_t)(P->p - s);
  return s;
}

int shlo__parse_value_ref(parser *P) {
  shlo__skip_ws(P);
  const char *at = P->p;
  size_t n;
  const char *name = shlo__parse_value_name(P, &n);
  const scope_entry *e = lookup(P, name, n);
  if (!e) shlo__perr_at(P, at, "use of undefined value '%%%.*s'", (int)n, name);
  int64_t k = 0;
  if (P->p < P->end && *P->p == '#') {
    P->p++;
    if (P->p >= P->end || !isdigit((unsigned char)*P->p))
      shlo__perr(P, "expected a result number after '#'");
    k = shlo__parse_int(P);
    if (k < 0 || k >= e->count)
      shlo__perr_at(P, at, "'%%%.*s' has %d results; #%lld is out of range", (int)n,
              name, e->count, (long long)k);
  } else if (e->count != 1) {
    shlo__perr_at(P, at, "'%%%.*s' names %d results; use %%%.*s#N", (int)n, name,
            e->count, (int)n, name);
  }
  return e->id + (int)k;
}

/* ---- op builder ---- */

void shlo__ob_operand(parser *P, op_builder *b, int id) {
  shlo_op *op = b->op;
  if (op->n_operands == b->cap_operands) {
    int cap = b->cap_operands ? b->cap_operands * 2 : 4;
    if (cap > (1 << 24)) shlo__perr(P, "too many operands");
    int *v = shlo__palloc(P, (size_t)cap * sizeof *v);
    if (op->n_operands) memcpy(v, op->operands, (size_t)op->n_operands * sizeof *v);
    op->operands = v;
    b->cap_operands = cap;
  }
  op->operands[op->n_operands++] = id;
}

void shlo__ob_attr(parser *P, op_builder *b, const char *name, const shlo_attr *a) {
  shlo_op *op = b->op;
  for (int i = 0; i < op->n_attrs; i++)
    if (!strcmp(op->attrs[i].name, name)) {
      op->attrs[i].value = a;
      return;
    }
  if (op->n_attrs == b->cap_attrs) {
    int cap = b->cap_attrs ? b->cap_attrs * 2 : 4;
    if (cap > (1 << 20)) shlo__perr(P, "too many attributes");
    shlo_named_attr *v = shlo__palloc(P, (size_t)cap * sizeof *v);
    if (op->n_attrs) memcpy(v, op->attrs, (size_t)op->n_attrs * sizeof *v);
    op->attrs = v;
    b->cap_attrs = cap;
  }
  op->attrs[op->n_attrs].name = name;
  op->attrs[op->n_attrs].value = a;
  op->n_attrs++;
}

void shlo__ob_region(parser *P, op_builder *b, const shlo_block *r) {
  shlo_op *op = b->op;
  if (op->n_regions == b->cap_regions) {
    int cap = b->cap_regions ? b->cap_regions * 2 : 2;
    if (cap > (1 << 20)) shlo__perr(P, "too many regions");
    shlo_block **v = shlo__palloc(P, (size_t)cap * sizeof *v);
    if (op->n_regions) memcpy(v, op->regions, (size_t)op->n_regions * sizeof *v);
    op->regions = v;
    b->cap_regions = cap;
  }
  op->regions[op->n_regions++] = (shlo_block *)r;
}

static void ob_merge_dict(parser *P, op_builder *b, const shlo_attr *d) {
  for (int i = 0; i < d->n; i++) shlo__ob_attr(P, b, d->fields[i].name, d->fields[i].value);
}

/* ---- regions ---- */

static shlo_op *parse_op(parser *P);

/* One more op to parse: within the caller's limits? */
static void count_op(parser *P) {
  char msg[160];
  shlo_status st = shlo__limits_check(P->limits, ++P->n_ops, "parsing", msg,
                                      sizeof msg);
  if (st) shlo__pstop(P, st, "%s", msg);
}

shlo_block *shlo__parse_region(parser *P, const pre_arg *pre, int n_pre) {
  /* A function's body is not nested: the limit counts the regions in it. */
  if (++P->region_depth - 1 > P->max_depth)
    shlo__perr(P, "regions nested deeper than %d (the limit)", P->max_depth);
  int mark = shlo__scope_mark(P);
  shlo_block *blk = shlo__palloc(P, sizeof *blk);
  int cap_args = n_pre > 0 ? n_pre : 4;
  blk->args = shlo__palloc(P, (size_t)cap_args * sizeof(int));
  for (int i = 0; i < n_pre; i++) {
    int id = shlo__new_value(P, pre[i].type);
    shlo__bind_name(P, pre[i].name, pre[i].len, id, 1);
    blk->args[blk->n_args++] = id;
  }
  shlo__expect(P, "{");
  if (shlo__accept(P, "^")) {
    size_t n;
    if (!shlo__ident(P, &(const char *){0}, &n)) {
      /* ^0 style labels */
      while (P->p < P->end && isalnum((unsigned char)*P->p)) P->p++;
    }
    if (shlo__accept(P, "(") && !shlo__accept(P, ")")) {
      do {
        size_t len;
        const char *name = shlo__parse_value_name(P, &len);
        shlo__expect(P, ":");
        const shlo_type *t = shlo__parse_type(P);
        if (shlo__peekc(P) == '{') shlo__parse_attr_dict(P);
        shlo__skip_loc(P);
        if (blk->n_args == cap_args) {
          int *w = shlo__palloc(P, (size_t)cap_args * 2 * sizeof(int));
          memcpy(w, blk->args, (size_t)blk->n_args * sizeof(int));
          blk->args = w;
          cap_args *= 2;
        }
        int id = shlo__new_value(P, t);
        shlo__bind_name(P, name, len, id, 1);
        blk->args[blk->n_args++] = id;
      } while (shlo__accept(P, ","));
      shlo__expect(P, ")");
    }
    shlo__expect(P, ":");
  }
  int cap_ops = 0;
  while (!shlo__accept(P, "}")) {
    if (shlo__peekc(P) < 0) shlo__perr(P, "expected '}' to close the region");
    count_op(P); /* before it, so an error points at its start */
    shlo_op *op = parse_op(P);
    if (blk->n_ops == cap_ops) {
      int cap = cap_ops ? cap_ops * 2 : 8;
      shlo_op **w = shlo__palloc(P, (size_t)cap * sizeof *w);
      if (blk->n_ops) memcpy(w, blk->ops, (size_t)blk->n_ops * sizeof *w);
      blk->ops = w;
      cap_ops = cap;
    }
    blk->ops[blk->n_ops++] = op;
  }
  shlo__scope_pop(P, mark);
  P->region_depth--;
  return blk;
}

/* ---- ops ---- */

/* (T, T) -> T  or  (T) -> (T, T)  or  () -> () */
static void parse_function_type(parser *P, const shlo_type ***ins, int *n_in,
                                const shlo_type ***outs, int *n_out) {
  shlo__expect(P, "(");
  *n_in = 0;
  *ins = NULL;
  if (!shlo__accept(P, ")")) {
    *n_in = shlo__parse_type_list(P, ins);
    shlo__expect(P, ")");
  }
  shlo__expect(P, "->");
  *n_out = 0;
  *outs = NULL;
  if (shlo__accept(P, "(")) {
    if (!shlo__accept(P, ")")) {
      *n_out = shlo__parse_type_list(P, outs);
      shlo__expect(P, ")");
    }
  } else {
    *outs = shlo__palloc(P, sizeof **outs);
    (*outs)[0] = shlo__parse_type(P);
    *n_out = 1;
  }
}

static void parse_generic_op(parser *P, op_builder *b) {
  shlo__expect(P, "(");
  if (!shlo__accept(P, ")")) {
    do shlo__ob_operand(P, b, shlo__parse_value_ref(P));
    while (shlo__accept(P, ","));
    shlo__expect(P, ")");
  }
  if (shlo__peekc(P) == '[') shlo__perr(P, "successor blocks are not supported");
  if (shlo__accept(P, "<")) {
    ob_merge_dict(P, b, shlo__parse_attr_dict(P));
    shlo__expect(P, ">");
  }
  if (shlo__accept(P, "(")) {
    do shlo__ob_region(P, b, shlo__parse_region(P, NULL, 0));
    while (shlo__accept(P, ","));
    shlo__expect(P, ")");
  }
  if (shlo__peekc(P) == '{') ob_merge_dict(P, b, shlo__parse_attr_dict(P));
  shlo__expect(P, ":");
  const shlo_type **ins;
  int n_in;
  parse_function_type(P, &ins, &n_in, &b->result_types, &b->n_result_types);
  if (n_in != b->op->n_operands)
    shlo__perr_at(P, b->at, "'%s' has %d operands but its type lists %d",
            b->op->name, b->op->n_operands, n_in);
  for (int i = 0; i < n_in; i++) {
    const shlo_type *have = P->vtypes[b->op->operands[i]];
    if (!shlo_type_equal(have, ins[i])) {
      char t1[256], t2[256];
      shlo_type_format(have, t1, sizeof t1);
      shlo_type_format(ins[i], t2, sizeof t2);
      shlo__perr_at(P, b->at,
              "operand %d of '%s' has type %s but the op's type says %s", i,
              b->op->name, t1, t2);
    }
  }
}

/* One name of an op's result list: %name, or %name:count. */
typedef struct result_name {
  const char *name;
  size_t len;
  int count;
} result_name;

static shlo_op *parse_op(parser *P) {
  shlo__skip_ws(P);
  const char *start = P->p;
  /* result list: %a, %b:2 =  -- a few names on the stack, more in the
   * arena: this frame recurses once per nested region */
  result_name few[4], *names = few;
  int n_names = 0, cap_names = 4, n_results = 0;
  if (shlo__peekc(P) == '%') {
    do {
      if (n_names == 64) shlo__perr(P, "too many result names");
      if (n_names == cap_names) {
        result_name *w = shlo__palloc(P, 2 * (size_t)cap_names * sizeof *w);
        memcpy(w, names, (size_t)n_names * sizeof *w);
        names = w;
        cap_names *= 2;
      }
      result_name *r = &names[n_names];
      r->name = shlo__parse_value_name(P, &r->len);
      r->count = 1;
      if (P->p < P->end && *P->p == ':') {
        P->p++;
        int64_t k = shlo__parse_int(P);
        if (k < 1 || k > 100000) shlo__perr(P, "bad result count %lld", (long long)k);
        r->count = (int)k;
      }
      n_results += r->count;
      n_names++;
    } while (shlo__accept(P, ","));
    shlo__expect(P, "=");
  }
  op_builder b = {0};
  b.op = shlo__palloc(P, sizeof *b.op);
  shlo__skip_ws(P);
  b.op->loc.line = P->line;
  b.op->loc.col = (int)(P->p - P->line_start) + 1;
  b.at = P->p;
  if (shlo__peekc(P) == '"') {
    size_t n;
    const char *name = shlo__parse_string(P, &n);
    b.op->name = name;
    b.op->code = shlo__op_lookup(name, n);
    if (b.op->code == SHLO_OP_UNKNOWN) shlo__check_unknown_op(P, b.at, name, n);
    parse_generic_op(P, &b);
  } else {
    size_t n;
    const char *name;
    if (!shlo__ident(P, &name, &n)) shlo__perr(P, "expected an operation");
    if (n == 6 && !memcmp(name, "return", 6)) {
      name = "func.return";
      n = strlen(name);
    } else if (n == 4 && !memcmp(name, "call", 4)) {
      name = "func.call";
      n = strlen(name);
    }
    if (!memchr(name, '.', n))
      shlo__perr_at(P, start, "expected an operation, found '%.*s'", (int)n, name);
    b.op->name = shlo__pstrndup(P, name, n);
    b.op->code = shlo__op_lookup(name, n);
    if (b.op->code == SHLO_OP_UNKNOWN) shlo__check_unknown_op(P, b.at, name, n);
    shlo__parse_pretty_op(P, &b, n_results);
  }
  shlo__skip_loc(P);
  if (b.n_result_types != n_results)
    shlo__perr_at(P, start, "'%s' defines %d result names but its type gives %d",
            b.op->name, n_results, b.n_result_types);
  b.op->n_results = n_results;
  b.op->results = shlo__palloc(P, (size_t)(n_results ? n_results : 1) * sizeof(int));
  int k = 0;
  for (int i = 0; i < n_names; i++) {
    int first = -1;
    for (int j = 0; j < names[i].count; j++) {
      int id = shlo__new_value(P, b.result_types[k]);
      if (first < 0) first = id;
      b.op->results[k++] = id;
    }
    shlo__bind_name(P, names[i].name, names[i].len, first, names[i].count);
  }
  return b.op;
}

/* ---- functions and modules ---- */

static void add_func(parser *P, int *cap, shlo_func *f) {
  shlo_module *m = P->m;
  if (m->n_funcs == *cap) {
    int nc = *cap ? *cap * 2 : 8;
    shlo_func **w = shlo__palloc(P, (size_t)nc * sizeof *w);
    if (m->n_funcs) memcpy(w, m->funcs, (size_t)m->n_funcs * sizeof *w);
    m->funcs = w;
    *cap = nc;
  }
  if (!shlo__name_map_put(&P->func_index, f->name, strlen(f->name),
                          m->n_funcs))
    shlo__poom(P);
  m->funcs[m->n_funcs++] = f;
}

/* (%a: T {attrs}, ...): the function's arguments, which become the body's
 * block arguments. */
static pre_arg *parse_func_args(parser *P, shlo_func *f) {
  int cap = 4;
  pre_arg *args = shlo__palloc(P, (size_t)cap * sizeof *args);
  f->arg_types = shlo__palloc(P, (size_t)cap * sizeof *f->arg_types);
  f->arg_attrs = shlo__palloc(P, (size_t)cap * sizeof *f->arg_attrs);
  shlo__expect(P, "(");
  if (shlo__accept(P, ")")) return args;
  do {
    if (f->n_args == cap) {
      pre_arg *a2 = shlo__palloc(P, (size_t)cap * 2 * sizeof *a2);
      const shlo_type **t2 = shlo__palloc(P, (size_t)cap * 2 * sizeof *t2);
      const shlo_attr **d2 = shlo__palloc(P, (size_t)cap * 2 * sizeof *d2);
      memcpy(a2, args, (size_t)cap * sizeof *a2);
      memcpy(t2, f->arg_types, (size_t)cap * sizeof *t2);
      memcpy(d2, f->arg_attrs, (size_t)cap * sizeof *d2);
      args = a2;
      f->arg_types = t2;
      f->arg_attrs = d2;
      cap *= 2;
    }
    pre_arg *a = &args[f->n_args];
    a->name = shlo__parse_value_name(P, &a->len);
    shlo__expect(P, ":");
    a->type = f->arg_types[f->n_args] = shlo__parse_type(P);
    if (shlo__peekc(P) == '{') f->arg_attrs[f->n_args] = shlo__parse_attr_dict(P);
    shlo__skip_loc(P);
    f->n_args++;
  } while (shlo__accept(P, ","));
  shlo__expect(P, ")");
  return args;
}

/* -> T  or  -> (T {attrs}, ...) */
static void parse_func_results(parser *P, shlo_func *f) {
  if (!shlo__accept(P, "->")) return;
  if (!shlo__accept(P, "(")) {
    f->result_types = shlo__palloc(P, sizeof *f->result_types);
    f->result_attrs = shlo__palloc(P, sizeof *f->result_attrs);
    f->result_types[0] = shlo__parse_type(P);
    f->n_results = 1;
    return;
  }
  if (shlo__accept(P, ")")) return;
  int cap = 4;
  f->result_types = shlo__palloc(P, (size_t)cap * sizeof *f->result_types);
  f->result_attrs = shlo__palloc(P, (size_t)cap * sizeof *f->result_attrs);
  do {
    if (f->n_results == cap) {
      const shlo_type **t2 = shlo__palloc(P, (size_t)cap * 2 * sizeof *t2);
      const shlo_attr **d2 = shlo__palloc(P, (size_t)cap * 2 * sizeof *d2);
      memcpy(t2, f->result_types, (size_t)cap * sizeof *t2);
      memcpy(d2, f->result_attrs, (size_t)cap * sizeof *d2);
      f->result_types = t2;
      f->result_attrs = d2;
      cap *= 2;
    }
    f->result_types[f->n_results] = shlo__parse_type(P);
    if (shlo__peekc(P) == '{') f->result_attrs[f->n_results] = shlo__parse_attr_dict(P);
    f->n_results++;
  } while (shlo__accept(P, ","));
  shlo__expect(P, ")");
}

/* func.func [visibility] @name(args) [-> results] [attributes {...}]
 * [{ body }] */
static shlo_func *parse_func(parser *P) {
  shlo_func *f = shlo__palloc(P, sizeof *f);
  shlo__skip_ws(P);
  f->loc.line = P->line;
  f->loc.col = (int)(P->p - P->line_start) + 1;
  if (shlo__accept_kw(P, "public")) f->visibility = "public";
  else if (shlo__accept_kw(P, "private")) f->visibility = "private";
  else if (shlo__accept_kw(P, "nested")) f->visibility = "nested";
  shlo__skip_ws(P);
  const char *name_at = P->p;
  shlo__expect(P, "@");
  size_t n;
  if (shlo__peekc(P) == '"') {
    f->name = shlo__parse_string(P, &n);
  } else {
    const char *s = shlo__expect_ident(P, &n, "a function name");
    f->name = shlo__pstrndup(P, s, n);
  }
  if (shlo__name_map_get(&P->func_index, f->name, strlen(f->name)) >= 0)
    shlo__perr_at(P, name_at, "function '@%s' is defined twice", f->name);
  P->n_values = 0;
  shlo__scope_pop(P, 0); /* empties every chain, whatever their number */
  pre_arg *args = parse_func_args(P, f);
  parse_func_results(P, f);
  if (shlo__accept_kw(P, "attributes")) f->attrs = shlo__parse_attr_dict(P);
  if (shlo__peekc(P) == '{') f->body = shlo__parse_region(P, args, f->n_args);
  shlo__skip_loc(P);
  f->n_values = P->n_values;
  f->value_types = shlo__palloc(P, (size_t)(P->n_values ? P->n_values : 1) *
                                 sizeof *f->value_types);
  if (P->n_values)
    memcpy(f->value_types, P->vtypes, (size_t)P->n_values * sizeof *P->vtypes);
  return f;
}

static void parse_alias_def(parser *P) {
  bool is_type = shlo__peekc(P) == '!';
  const char *at = P->p;
  P->p++;
  size_t n;
  const char *name = shlo__expect_ident(P, &n, "an alias name");
  shlo__expect(P, "=");
  P->aliases = grow(P, P->aliases, &P->cap_aliases, sizeof *P->aliases,
                    P->n_aliases + 1);
  alias *a = &P->aliases[P->n_aliases];
  memset(a, 0, sizeof *a);
  a->name = shlo__pstrndup(P, name, n);
  a->len = n;
  if (is_type) {
    a->type = shlo__parse_type(P);
  } else {
    a->attr = shlo__parse_attr(P);
  }
  (void)at;
  /* Indexed once defined: a definition does not see itself. */
  if (!shlo__name_map_put(&P->alias_index, a->name, n, P->n_aliases))
    shlo__poom(P);
  P->n_aliases++;
}

static void parse_items(parser *P, bool in_module, int *cap) {
  for (;;) {
    int c = shlo__peekc(P);
    if (c < 0) {
      if (in_module) shlo__perr(P, "expected '}' to close the module");
      return;
    }
    if (in_module && shlo__accept(P, "}")) return;
    if (c == '#' || c == '!') {
      parse_alias_def(P);
    } else if (shlo__accept_kw(P, "func.func")) {
      add_func(P, cap, parse_func(P));
    } else if (!in_module && shlo__accept_kw(P, "module")) {
      if (P->m->n_funcs || P->m->name) shlo__perr(P, "only one module per case");
      if (shlo__peekc(P) == '@') {
        P->p++;
        size_t n;
        const char *s = shlo__expect_ident(P, &n, "a module name");
        P->m->name = shlo__pstrndup(P, s, n);
      }
      if (shlo__accept_kw(P, "attributes")) P->m->attrs = shlo__parse_attr_dict(P);
      shlo__expect(P, "{");
      parse_items(P, true, cap);
      shlo__skip_loc(P);
    } else {
      shlo__perr(P, "expected 'func.func'%s", in_module ? " or '}'" : " or 'module'");
    }
  }
}

/* A parser over text with its own arena; NULL when out of memory.  The
 * caller owns P->arena until it hands it on (to a module) and frees the rest
 * with parser_free. */
static parser *parser_new(const char *text, size_t len, shlo_diag *diag,
                          shlo_diag *fallback) {
  parser *P = shlo__calloc(1, sizeof *P);
  if (!P) return NULL;
  P->arena = shlo__arena_new();
  P->buckets = shlo__malloc(SCOPE_BUCKETS * sizeof(int));
  P->n_buckets = SCOPE_BUCKETS;
  if (P->buckets)
    for (int i = 0; i < SCOPE_BUCKETS; i++) P->buckets[i] = -1;
  if (!P->arena || !P->buckets) {
    shlo__arena_free(P->arena);
    shlo__free(P->buckets);
    shlo__free(P);
    return NULL;
  }
  P->diag = diag ? diag : fallback;
  P->max_depth = shlo__max_depth(NULL);
  P->src = P->p = P->line_start = text ? text : "";
  P->end = P->src + (text ? len : 0);
  P->line = 1;
  return P;
}

/* Frees the parser's work buffers (not its arena). */
static void parser_free(parser *P) {
  shlo__free(P->vtypes);
  shlo__free(P->scope);
  shlo__free(P->aliases);
  shlo__free(P->buckets);
  shlo__name_map_free(&P->alias_index);
  shlo__name_map_free(&P->func_index);
  shlo__free(P);
}

static int by_name(const void *a, const void *b) {
  return strcmp((*(shlo_func *const *)a)->name, (*(shlo_func *const *)b)->name);
}

/* m->by_name: the functions sorted by name (the parser refused repeats). */
static void index_funcs(parser *P, shlo_module *m) {
  if (!m->n_funcs) return;
  m->by_name = shlo__palloc(P, (size_t)m->n_funcs * sizeof *m->by_name);
  memcpy(m->by_name, m->funcs, (size_t)m->n_funcs * sizeof *m->by_name);
  qsort(m->by_name, (size_t)m->n_funcs, sizeof *m->by_name, by_name);
}

shlo_status shlo_parse_module(const char *text, size_t len,
                              const char *filename, shlo_module **out,
                              shlo_diag *diag) {
  return shlo_parse_module_limited(text, len, filename, NULL, out, diag);
}

static shlo_status parse_module(const char *text, size_t len,
                                const char *filename,
                                const shlo_compile_limits *limits,
                                shlo_module **out, shlo_diag *diag);

shlo_status shlo_parse_module_limited(const char *text, size_t len,
                                      const char *filename,
                                      const shlo_compile_limits *limits,
                                      shlo_module **out, shlo_diag *diag) {
  /* A UTF-8 byte-order mark, which some editors write, says nothing to a
   * parser of ASCII text: skipped (as JSON parsers may, RFC 8259 8.1);
   * columns on the first line count from after it.  (Here, not in
   * parse_module: text and len must not change in a function that
   * calls setjmp.) */
  if (len >= 3 && !memcmp(text, "\xEF\xBB\xBF", 3))
    return parse_module(text + 3, len - 3, filename, limits, out, diag);
  return parse_module(text, len, filename, limits, out, diag);
}

static shlo_status parse_module(const char *text, size_t len,
                                const char *filename,
                                const shlo_compile_limits *limits,
                                shlo_module **out, shlo_diag *diag) {
  *out = NULL;
  /* A portable artifact (MLIR bytecode) is recognised by its magic, so
   * every caller of the parser reads artifacts as well as text. */
  if (shlo_is_artifact(text, len))
    return shlo_read_artifact(text, len, filename, out, NULL, diag);
  shlo_diag tmp;
  parser *P = parser_new(text, len, diag, &tmp);
  if (P) {
    P->limits = limits;
    P->max_depth = shlo__max_depth(limits);
  }
  shlo_module *m = P ? shlo__arena_alloc(P->arena, sizeof *m) : NULL;
  if (!m) {
    if (P) {
      shlo__arena_free(P->arena);
      parser_free(P);
    }
    return shlo_diag_set(diag, SHLO_ENOMEM, filename, 0, 0, "out of memory");
  }
  shlo_arena *arena = P->arena;
  P->m = m;
  m->arena = arena;
  m->filename = filename ? shlo__arena_strndup(arena, filename, strlen(filename))
                         : "<input>";
  P->filename = m->filename;
  shlo_status st = SHLO_OK;
  if (setjmp(P->on_error) == 0) {
    int cap = 0;
    if (memchr(P->src, 0, len))
      shlo__perr_at(P, (const char *)memchr(P->src, 0, len),
              "NUL byte in program text");
    parse_items(P, false, &cap);
    index_funcs(P, m);
    *out = m;
  } else {
    st = P->diag->code ? P->diag->code : SHLO_EPARSE;
    /* The filename lives in the arena; keep the caller's pointer. */
    P->diag->file = filename;
    shlo__arena_free(arena);
  }
  parser_free(P);
  return st;
}

void shlo_module_free(shlo_module *m) {
  if (m) shlo__arena_free(m->arena);
}

shlo_func *shlo_module_find_func(const shlo_module *m, const char *name) {
  if (m->by_name) { /* binary search: calls cost log n, not n, each */
    int lo = 0, hi = m->n_funcs;
    while (lo < hi) {
      int mid = lo + (hi - lo) / 2, c = strcmp(m->by_name[mid]->name, name);
      if (!c) return m->by_name[mid];
      if (c < 0) lo = mid + 1;
      else hi = mid;
    }
    return NULL;
  }
  for (int i = 0; i < m->n_funcs; i++)
    if (!strcmp(m->funcs[i]->name, name)) return m->funcs[i];
  return NULL;
}

shlo_func *shlo_module_entry(const shlo_module *m) {
  shlo_func *f = shlo_module_find_func(m, "main");
  if (f) return f;
  return m->n_funcs == 1 ? m->funcs[0] : NULL;
}

shlo_status shlo_parse_values(const char *text, size_t len,
                              shlo_value ***values, int *n, shlo_diag *diag) {
  *values = NULL;
  *n = 0;
  shlo_diag tmp;
  parser *P = parser_new(text, len, diag, &tmp);
  if (!P) return shlo_diag_set(diag, SHLO_ENOMEM, NULL, 0, 0, "out of memory");
  shlo_arena *arena = P->arena;
  P->filename = "<args>";
  shlo_status st = SHLO_OK;
  const shlo_attr **items = NULL;
  int count = 0;
  if (setjmp(P->on_error) == 0) {
    bool list = shlo__accept(P, "[");
    int cap = 0;
    if (!list || !shlo__accept(P, "]")) {
      do {
        if (count == cap) {
          cap = cap ? cap * 2 : 8;
          const shlo_attr **w = shlo__palloc(P, (size_t)cap * sizeof *w);
          if (count) memcpy(w, items, (size_t)count * sizeof *w);
          items = w;
        }
        const shlo_attr *a = shlo__parse_attr(P);
        if (a->kind != SHLO_ATTR_DENSE)
          shlo__perr(P, "expected dense<...> : tensor<...>");
        items[count++] = a;
      } while (list && shlo__accept(P, ","));
      if (list) shlo__expect(P, "]");
    }
    if (shlo__peekc(P) >= 0) shlo__perr(P, "unexpected text after the values");
    shlo_value **out = calloc((size_t)count + 1, sizeof *out);
    if (!out) {
      st = shlo_diag_set(P->diag, SHLO_ENOMEM, NULL, 0, 0, "out of memory");
    } else {
      /* Values own their quantization parameters: they outlive the
       * arena freed below. */
      for (int i = 0; i < count; i++) out[i] = shlo_value_ref(items[i]->dense);
      *values = out;
      *n = count;
    }
  } else {
    st = P->diag->code ? P->diag->code : SHLO_EPARSE;
    P->diag->file = NULL;
  }
  shlo__arena_free(arena);
  parser_free(P);
  return st;
}
