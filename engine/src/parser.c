/* The parser: modules, functions, regions and ops in generic form.  Pretty
 * forms are in parse_pretty.c, types and attributes in parse_core.c. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "ops.h"
#include "parser_int.h"

/* ---- values and scopes ---- */

static void *grow(parser *P, void *v, int *cap, size_t elem, int need) {
  if (need <= *cap) return v;
  int ncap = *cap ? *cap : 16;
  while (ncap < need) {
    if (ncap > (1 << 28)) perr(P, "program too large");
    ncap *= 2;
  }
  void *w = realloc(v, (size_t)ncap * elem);
  if (!w) {
    shlo_diag_set(P->diag, SHLO_ENOMEM, P->filename, 0, 0,
                  "out of memory while parsing");
    longjmp(P->on_error, 2);
  }
  *cap = ncap;
  return w;
}

int new_value(parser *P, const shlo_type *t) {
  P->vtypes = grow(P, P->vtypes, &P->cap_values, sizeof *P->vtypes,
                   P->n_values + 1);
  P->vtypes[P->n_values] = t;
  return P->n_values++;
}

static unsigned name_hash(const char *s, size_t n) {
  unsigned h = 2166136261u;
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 16777619u;
  return h % SCOPE_BUCKETS;
}

void bind_name(parser *P, const char *name, size_t len, int id, int count) {
  P->scope = grow(P, P->scope, &P->cap_scope, sizeof *P->scope,
                  P->n_scope + 1);
  unsigned h = name_hash(name, len);
  scope_entry *e = &P->scope[P->n_scope];
  e->name = name;
  e->len = len;
  e->id = id;
  e->count = count;
  e->prev = P->buckets[h];
  P->buckets[h] = P->n_scope++;
}

int scope_mark(parser *P) { return P->n_scope; }

void scope_pop(parser *P, int mark) {
  while (P->n_scope > mark) {
    scope_entry *e = &P->scope[--P->n_scope];
    P->buckets[name_hash(e->name, e->len)] = e->prev;
  }
}

static const scope_entry *lookup(parser *P, const char *name, size_t len) {
  for (int i = P->buckets[name_hash(name, len)]; i >= 0; i = P->scope[i].prev)
    if (P->scope[i].len == len && !memcmp(P->scope[i].name, name, len))
      return &P->scope[i];
  return NULL;
}

const char *parse_value_name(parser *P, size_t *n) {
  skip_ws(P);
  if (P->p >= P->end || *P->p != '%') perr(P, "expected a value like %%x");
  P->p++;
  const char *s = P->p;
  while (P->p < P->end && (isalnum((unsigned char)*P->p) || *P->p == '_' ||
                           *P->p == '$' || *P->p == '.' || *P->p == '-'))
    P->p++;
  if (P->p == s) perr(P, "expected a value name after '%%'");
  *n = (size_t)(P->p - s);
  return s;
}

int parse_value_ref(parser *P) {
  skip_ws(P);
  const char *at = P->p;
  size_t n;
  const char *name = parse_value_name(P, &n);
  const scope_entry *e = lookup(P, name, n);
  if (!e) perr_at(P, at, "use of undefined value '%%%.*s'", (int)n, name);
  int64_t k = 0;
  if (P->p < P->end && *P->p == '#') {
    P->p++;
    if (P->p >= P->end || !isdigit((unsigned char)*P->p))
      perr(P, "expected a result number after '#'");
    k = parse_int(P);
    if (k < 0 || k >= e->count)
      perr_at(P, at, "'%%%.*s' has %d results; #%lld is out of range", (int)n,
              name, e->count, (long long)k);
  } else if (e->count != 1) {
    perr_at(P, at, "'%%%.*s' names %d results; use %%%.*s#N", (int)n, name,
            e->count, (int)n, name);
  }
  return e->id + (int)k;
}

/* ---- op builder ---- */

void ob_operand(parser *P, op_builder *b, int id) {
  shlo_op *op = b->op;
  if (op->n_operands == b->cap_operands) {
    int cap = b->cap_operands ? b->cap_operands * 2 : 4;
    if (cap > (1 << 24)) perr(P, "too many operands");
    int *v = palloc(P, (size_t)cap * sizeof *v);
    if (op->n_operands) memcpy(v, op->operands, (size_t)op->n_operands * sizeof *v);
    op->operands = v;
    b->cap_operands = cap;
  }
  op->operands[op->n_operands++] = id;
}

void ob_attr(parser *P, op_builder *b, const char *name, const shlo_attr *a) {
  shlo_op *op = b->op;
  for (int i = 0; i < op->n_attrs; i++)
    if (!strcmp(op->attrs[i].name, name)) {
      op->attrs[i].value = a;
      return;
    }
  if (op->n_attrs == b->cap_attrs) {
    int cap = b->cap_attrs ? b->cap_attrs * 2 : 4;
    if (cap > (1 << 20)) perr(P, "too many attributes");
    shlo_named_attr *v = palloc(P, (size_t)cap * sizeof *v);
    if (op->n_attrs) memcpy(v, op->attrs, (size_t)op->n_attrs * sizeof *v);
    op->attrs = v;
    b->cap_attrs = cap;
  }
  op->attrs[op->n_attrs].name = name;
  op->attrs[op->n_attrs].value = a;
  op->n_attrs++;
}

void ob_region(parser *P, op_builder *b, const shlo_block *r) {
  shlo_op *op = b->op;
  if (op->n_regions == b->cap_regions) {
    int cap = b->cap_regions ? b->cap_regions * 2 : 2;
    if (cap > (1 << 20)) perr(P, "too many regions");
    shlo_block **v = palloc(P, (size_t)cap * sizeof *v);
    if (op->n_regions) memcpy(v, op->regions, (size_t)op->n_regions * sizeof *v);
    op->regions = v;
    b->cap_regions = cap;
  }
  op->regions[op->n_regions++] = (shlo_block *)r;
}

static void ob_merge_dict(parser *P, op_builder *b, const shlo_attr *d) {
  for (int i = 0; i < d->n; i++) ob_attr(P, b, d->fields[i].name, d->fields[i].value);
}

/* ---- regions ---- */

static shlo_op *parse_op(parser *P);

shlo_block *parse_region(parser *P, const pre_arg *pre, int n_pre) {
  enter(P);
  int mark = scope_mark(P);
  shlo_block *blk = palloc(P, sizeof *blk);
  int cap_args = n_pre > 0 ? n_pre : 4;
  blk->args = palloc(P, (size_t)cap_args * sizeof(int));
  for (int i = 0; i < n_pre; i++) {
    int id = new_value(P, pre[i].type);
    bind_name(P, pre[i].name, pre[i].len, id, 1);
    blk->args[blk->n_args++] = id;
  }
  expect(P, "{");
  if (accept(P, "^")) {
    size_t n;
    if (!ident(P, &(const char *){0}, &n)) {
      /* ^0 style labels */
      while (P->p < P->end && isalnum((unsigned char)*P->p)) P->p++;
    }
    if (accept(P, "(") && !accept(P, ")")) {
      do {
        size_t len;
        const char *name = parse_value_name(P, &len);
        expect(P, ":");
        const shlo_type *t = parse_type(P);
        if (peekc(P) == '{') parse_attr_dict(P);
        skip_loc(P);
        if (blk->n_args == cap_args) {
          int *w = palloc(P, (size_t)cap_args * 2 * sizeof(int));
          memcpy(w, blk->args, (size_t)blk->n_args * sizeof(int));
          blk->args = w;
          cap_args *= 2;
        }
        int id = new_value(P, t);
        bind_name(P, name, len, id, 1);
        blk->args[blk->n_args++] = id;
      } while (accept(P, ","));
      expect(P, ")");
    }
    expect(P, ":");
  }
  int cap_ops = 0;
  while (!accept(P, "}")) {
    if (peekc(P) < 0) perr(P, "expected '}' to close the region");
    shlo_op *op = parse_op(P);
    if (blk->n_ops == cap_ops) {
      int cap = cap_ops ? cap_ops * 2 : 8;
      shlo_op **w = palloc(P, (size_t)cap * sizeof *w);
      if (blk->n_ops) memcpy(w, blk->ops, (size_t)blk->n_ops * sizeof *w);
      blk->ops = w;
      cap_ops = cap;
    }
    blk->ops[blk->n_ops++] = op;
  }
  scope_pop(P, mark);
  leave(P);
  return blk;
}

/* ---- ops ---- */

/* (T, T) -> T  or  (T) -> (T, T)  or  () -> () */
static void parse_function_type(parser *P, const shlo_type ***ins, int *n_in,
                                const shlo_type ***outs, int *n_out) {
  expect(P, "(");
  *n_in = 0;
  *ins = NULL;
  if (!accept(P, ")")) {
    *n_in = parse_type_list(P, ins);
    expect(P, ")");
  }
  expect(P, "->");
  *n_out = 0;
  *outs = NULL;
  if (accept(P, "(")) {
    if (!accept(P, ")")) {
      *n_out = parse_type_list(P, outs);
      expect(P, ")");
    }
  } else {
    *outs = palloc(P, sizeof **outs);
    (*outs)[0] = parse_type(P);
    *n_out = 1;
  }
}

static void parse_generic_op(parser *P, op_builder *b) {
  expect(P, "(");
  if (!accept(P, ")")) {
    do ob_operand(P, b, parse_value_ref(P));
    while (accept(P, ","));
    expect(P, ")");
  }
  if (peekc(P) == '[') perr(P, "successor blocks are not supported");
  if (accept(P, "<")) {
    ob_merge_dict(P, b, parse_attr_dict(P));
    expect(P, ">");
  }
  if (accept(P, "(")) {
    do ob_region(P, b, parse_region(P, NULL, 0));
    while (accept(P, ","));
    expect(P, ")");
  }
  if (peekc(P) == '{') ob_merge_dict(P, b, parse_attr_dict(P));
  expect(P, ":");
  const shlo_type **ins;
  int n_in;
  parse_function_type(P, &ins, &n_in, &b->result_types, &b->n_result_types);
  if (n_in != b->op->n_operands)
    perr_at(P, b->at, "'%s' has %d operands but its type lists %d",
            b->op->name, b->op->n_operands, n_in);
  for (int i = 0; i < n_in; i++) {
    const shlo_type *have = P->vtypes[b->op->operands[i]];
    if (!shlo_type_equal(have, ins[i])) {
      char t1[256], t2[256];
      shlo_type_format(have, t1, sizeof t1);
      shlo_type_format(ins[i], t2, sizeof t2);
      perr_at(P, b->at,
              "operand %d of '%s' has type %s but the op's type says %s", i,
              b->op->name, t1, t2);
    }
  }
}

static shlo_op *parse_op(parser *P) {
  enter(P);
  skip_ws(P);
  const char *start = P->p;
  /* result list: %a, %b:2 = */
  const char *names[64];
  size_t lens[64];
  int counts[64];
  int n_names = 0, n_results = 0;
  if (peekc(P) == '%') {
    do {
      if (n_names == 64) perr(P, "too many result names");
      names[n_names] = parse_value_name(P, &lens[n_names]);
      counts[n_names] = 1;
      if (P->p < P->end && *P->p == ':') {
        P->p++;
        int64_t k = parse_int(P);
        if (k < 1 || k > 100000) perr(P, "bad result count %lld", (long long)k);
        counts[n_names] = (int)k;
      }
      n_results += counts[n_names];
      n_names++;
    } while (accept(P, ","));
    expect(P, "=");
  }
  op_builder b = {0};
  b.op = palloc(P, sizeof *b.op);
  skip_ws(P);
  b.op->loc.line = P->line;
  b.op->loc.col = (int)(P->p - P->line_start) + 1;
  b.at = P->p;
  if (peekc(P) == '"') {
    size_t n;
    const char *name = parse_string(P, &n);
    b.op->name = name;
    b.op->code = shlo_op_lookup(name, n);
    parse_generic_op(P, &b);
  } else {
    size_t n;
    const char *name;
    if (!ident(P, &name, &n)) perr(P, "expected an operation");
    if (n == 6 && !memcmp(name, "return", 6)) {
      name = "func.return";
      n = strlen(name);
    } else if (n == 4 && !memcmp(name, "call", 4)) {
      name = "func.call";
      n = strlen(name);
    }
    if (!memchr(name, '.', n))
      perr_at(P, start, "expected an operation, found '%.*s'", (int)n, name);
    b.op->name = pstrndup(P, name, n);
    b.op->code = shlo_op_lookup(name, n);
    parse_pretty_op(P, &b, n_results);
  }
  skip_loc(P);
  if (b.n_result_types != n_results)
    perr_at(P, start, "'%s' defines %d result names but its type gives %d",
            b.op->name, n_results, b.n_result_types);
  b.op->n_results = n_results;
  b.op->results = palloc(P, (size_t)(n_results ? n_results : 1) * sizeof(int));
  int k = 0;
  for (int i = 0; i < n_names; i++) {
    int first = -1;
    for (int j = 0; j < counts[i]; j++) {
      int id = new_value(P, b.result_types[k]);
      if (first < 0) first = id;
      b.op->results[k++] = id;
    }
    bind_name(P, names[i], lens[i], first, counts[i]);
  }
  leave(P);
  return b.op;
}

/* ---- functions and modules ---- */

static void add_func(parser *P, int *cap, shlo_func *f) {
  shlo_module *m = P->m;
  if (m->n_funcs == *cap) {
    int nc = *cap ? *cap * 2 : 8;
    shlo_func **w = palloc(P, (size_t)nc * sizeof *w);
    if (m->n_funcs) memcpy(w, m->funcs, (size_t)m->n_funcs * sizeof *w);
    m->funcs = w;
    *cap = nc;
  }
  m->funcs[m->n_funcs++] = f;
}

/* (%a: T {attrs}, ...): the function's arguments, which become the body's
 * block arguments. */
static pre_arg *parse_func_args(parser *P, shlo_func *f) {
  int cap = 4;
  pre_arg *args = palloc(P, (size_t)cap * sizeof *args);
  f->arg_types = palloc(P, (size_t)cap * sizeof *f->arg_types);
  f->arg_attrs = palloc(P, (size_t)cap * sizeof *f->arg_attrs);
  expect(P, "(");
  if (accept(P, ")")) return args;
  do {
    if (f->n_args == cap) {
      pre_arg *a2 = palloc(P, (size_t)cap * 2 * sizeof *a2);
      const shlo_type **t2 = palloc(P, (size_t)cap * 2 * sizeof *t2);
      const shlo_attr **d2 = palloc(P, (size_t)cap * 2 * sizeof *d2);
      memcpy(a2, args, (size_t)cap * sizeof *a2);
      memcpy(t2, f->arg_types, (size_t)cap * sizeof *t2);
      memcpy(d2, f->arg_attrs, (size_t)cap * sizeof *d2);
      args = a2;
      f->arg_types = t2;
      f->arg_attrs = d2;
      cap *= 2;
    }
    pre_arg *a = &args[f->n_args];
    a->name = parse_value_name(P, &a->len);
    expect(P, ":");
    a->type = f->arg_types[f->n_args] = parse_type(P);
    if (peekc(P) == '{') f->arg_attrs[f->n_args] = parse_attr_dict(P);
    skip_loc(P);
    f->n_args++;
  } while (accept(P, ","));
  expect(P, ")");
  return args;
}

/* -> T  or  -> (T {attrs}, ...) */
static void parse_func_results(parser *P, shlo_func *f) {
  if (!accept(P, "->")) return;
  if (!accept(P, "(")) {
    f->result_types = palloc(P, sizeof *f->result_types);
    f->result_attrs = palloc(P, sizeof *f->result_attrs);
    f->result_types[0] = parse_type(P);
    f->n_results = 1;
    return;
  }
  if (accept(P, ")")) return;
  int cap = 4;
  f->result_types = palloc(P, (size_t)cap * sizeof *f->result_types);
  f->result_attrs = palloc(P, (size_t)cap * sizeof *f->result_attrs);
  do {
    if (f->n_results == cap) {
      const shlo_type **t2 = palloc(P, (size_t)cap * 2 * sizeof *t2);
      const shlo_attr **d2 = palloc(P, (size_t)cap * 2 * sizeof *d2);
      memcpy(t2, f->result_types, (size_t)cap * sizeof *t2);
      memcpy(d2, f->result_attrs, (size_t)cap * sizeof *d2);
      f->result_types = t2;
      f->result_attrs = d2;
      cap *= 2;
    }
    f->result_types[f->n_results] = parse_type(P);
    if (peekc(P) == '{') f->result_attrs[f->n_results] = parse_attr_dict(P);
    f->n_results++;
  } while (accept(P, ","));
  expect(P, ")");
}

/* func.func [visibility] @name(args) [-> results] [attributes {...}]
 * [{ body }] */
static shlo_func *parse_func(parser *P) {
  shlo_func *f = palloc(P, sizeof *f);
  skip_ws(P);
  f->loc.line = P->line;
  f->loc.col = (int)(P->p - P->line_start) + 1;
  if (accept_kw(P, "public")) f->visibility = "public";
  else if (accept_kw(P, "private")) f->visibility = "private";
  else if (accept_kw(P, "nested")) f->visibility = "nested";
  skip_ws(P);
  const char *name_at = P->p;
  expect(P, "@");
  size_t n;
  if (peekc(P) == '"') {
    f->name = parse_string(P, &n);
  } else {
    const char *s = expect_ident(P, &n, "a function name");
    f->name = pstrndup(P, s, n);
  }
  if (shlo_module_find_func(P->m, f->name))
    perr_at(P, name_at, "function '@%s' is defined twice", f->name);
  P->n_values = 0;
  P->n_scope = 0;
  for (int i = 0; i < SCOPE_BUCKETS; i++) P->buckets[i] = -1;
  pre_arg *args = parse_func_args(P, f);
  parse_func_results(P, f);
  if (accept_kw(P, "attributes")) f->attrs = parse_attr_dict(P);
  if (peekc(P) == '{') f->body = parse_region(P, args, f->n_args);
  skip_loc(P);
  f->n_values = P->n_values;
  f->value_types = palloc(P, (size_t)(P->n_values ? P->n_values : 1) *
                                 sizeof *f->value_types);
  if (P->n_values)
    memcpy(f->value_types, P->vtypes, (size_t)P->n_values * sizeof *P->vtypes);
  return f;
}

static void parse_alias_def(parser *P) {
  bool is_type = peekc(P) == '!';
  const char *at = P->p;
  P->p++;
  size_t n;
  const char *name = expect_ident(P, &n, "an alias name");
  expect(P, "=");
  P->aliases = grow(P, P->aliases, &P->cap_aliases, sizeof *P->aliases,
                    P->n_aliases + 1);
  alias *a = &P->aliases[P->n_aliases];
  memset(a, 0, sizeof *a);
  a->name = pstrndup(P, name, n);
  a->len = n;
  if (is_type) {
    a->type = parse_type(P);
  } else {
    a->attr = parse_attr(P);
  }
  (void)at;
  P->n_aliases++;
}

static void parse_items(parser *P, bool in_module, int *cap) {
  for (;;) {
    int c = peekc(P);
    if (c < 0) {
      if (in_module) perr(P, "expected '}' to close the module");
      return;
    }
    if (in_module && accept(P, "}")) return;
    if (c == '#' || c == '!') {
      parse_alias_def(P);
    } else if (accept_kw(P, "func.func")) {
      add_func(P, cap, parse_func(P));
    } else if (!in_module && accept_kw(P, "module")) {
      if (P->m->n_funcs || P->m->name) perr(P, "only one module per case");
      if (peekc(P) == '@') {
        P->p++;
        size_t n;
        const char *s = expect_ident(P, &n, "a module name");
        P->m->name = pstrndup(P, s, n);
      }
      if (accept_kw(P, "attributes")) P->m->attrs = parse_attr_dict(P);
      expect(P, "{");
      parse_items(P, true, cap);
      skip_loc(P);
    } else {
      perr(P, "expected 'func.func'%s", in_module ? " or '}'" : " or 'module'");
    }
  }
}

/* A parser over text with its own arena; NULL when out of memory.  The
 * caller owns P->arena until it hands it on (to a module) and frees the rest
 * with parser_free. */
static parser *parser_new(const char *text, size_t len, shlo_diag *diag,
                          shlo_diag *fallback) {
  parser *P = calloc(1, sizeof *P);
  if (!P) return NULL;
  P->arena = shlo_arena_new();
  P->buckets = malloc(SCOPE_BUCKETS * sizeof(int));
  if (!P->arena || !P->buckets) {
    shlo_arena_free(P->arena);
    free(P->buckets);
    free(P);
    return NULL;
  }
  P->diag = diag ? diag : fallback;
  P->src = P->p = P->line_start = text ? text : "";
  P->end = P->src + (text ? len : 0);
  P->line = 1;
  return P;
}

/* Frees the parser's work buffers (not its arena). */
static void parser_free(parser *P) {
  free(P->vtypes);
  free(P->scope);
  free(P->aliases);
  free(P->buckets);
  free(P);
}

shlo_status shlo_parse_module(const char *text, size_t len,
                              const char *filename, shlo_module **out,
                              shlo_diag *diag) {
  *out = NULL;
  shlo_diag tmp;
  parser *P = parser_new(text, len, diag, &tmp);
  shlo_module *m = P ? shlo_arena_alloc(P->arena, sizeof *m) : NULL;
  if (!m) {
    if (P) {
      shlo_arena_free(P->arena);
      parser_free(P);
    }
    return shlo_diag_set(diag, SHLO_ENOMEM, filename, 0, 0, "out of memory");
  }
  shlo_arena *arena = P->arena;
  P->m = m;
  m->arena = arena;
  m->filename = filename ? shlo_arena_strndup(arena, filename, strlen(filename))
                         : "<input>";
  P->filename = m->filename;
  shlo_status st = SHLO_OK;
  if (setjmp(P->on_error) == 0) {
    int cap = 0;
    if (memchr(P->src, 0, len))
      perr_at(P, (const char *)memchr(P->src, 0, len),
              "NUL byte in program text");
    parse_items(P, false, &cap);
    *out = m;
  } else {
    st = P->diag->code ? P->diag->code : SHLO_EPARSE;
    /* The filename lives in the arena; keep the caller's pointer. */
    P->diag->file = filename;
    shlo_arena_free(arena);
  }
  parser_free(P);
  return st;
}

void shlo_module_free(shlo_module *m) {
  if (m) shlo_arena_free(m->arena);
}

shlo_func *shlo_module_find_func(const shlo_module *m, const char *name) {
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
    bool list = accept(P, "[");
    int cap = 0;
    if (!list || !accept(P, "]")) {
      do {
        if (count == cap) {
          cap = cap ? cap * 2 : 8;
          const shlo_attr **w = palloc(P, (size_t)cap * sizeof *w);
          if (count) memcpy(w, items, (size_t)count * sizeof *w);
          items = w;
        }
        const shlo_attr *a = parse_attr(P);
        if (a->kind != SHLO_ATTR_DENSE)
          perr(P, "expected dense<...> : tensor<...>");
        items[count++] = a;
      } while (list && accept(P, ","));
      if (list) expect(P, "]");
    }
    if (peekc(P) >= 0) perr(P, "unexpected text after the values");
    shlo_value **out = calloc((size_t)count + 1, sizeof *out);
    if (!out) {
      st = shlo_diag_set(P->diag, SHLO_ENOMEM, NULL, 0, 0, "out of memory");
    } else {
      for (int i = 0; i < count; i++) {
        out[i] = shlo_value_ref(items[i]->dense);
        out[i]->quant = NULL; /* it pointed into the arena freed below */
      }
      *values = out;
      *n = count;
    }
  } else {
    st = P->diag->code ? P->diag->code : SHLO_EPARSE;
    P->diag->file = NULL;
  }
  shlo_arena_free(arena);
  parser_free(P);
  return st;
}
