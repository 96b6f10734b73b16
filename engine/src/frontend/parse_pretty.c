/* SPDX-License-Identifier: Apache-2.0 */
/* Pretty (custom assembly) forms of ops, as JAX and the StableHLO tests
 * print them.  One generic loop reads the shapes most ops share (operands,
 * `key = value`, bare enum words, `{attrs}`, `: signature`); while, reduce
 * and chlo.scan have forms of their own.  Keywords are stored under the
 * generic attribute names, so both forms give the same IR. */
#include <stdio.h>
#include <string.h>

#include "ops/ops.h"
#include "frontend/names.h"
#include "frontend/parser_int.h"

static bool is(const char *a, const char *b) { return !strcmp(a, b); }

/* Generic attribute names whose enum values print as #stablehlo<kind V>. */
static const struct {
  const char *attr, *kind;
} enum_kinds[] = {
    {"comparison_direction", "comparison_direction"},
    {"compare_type", "comparison_type"},
    {"fft_type", "fft_type"},
    {"rng_algorithm", "rng_algorithm"},
    {"rng_distribution", "rng_distribution"},
    {"transpose_a", "transpose"},
};

/* Keywords whose [..] lists are i64 arrays in the generic form. */
static const char *const i64_list_attrs[] = {
    "broadcast_dimensions", "permutation", "dimensions", "slice_sizes",
    "edge_padding_low", "edge_padding_high", "interior_padding", "fft_length",
    "broadcast_sizes",
};

/* The generic attribute a pretty keyword stands for: the op's row in the
 * op table (SHLO_KW) says, else the keyword is the attribute's name. */
static const char *canonical_name(parser *P, shlo_opcode code, const char *kw,
                                  size_t n) {
  const char *attr = shlo__op_keyword_attr(code, kw, n);
  return attr ? attr : shlo__pstrndup(P, kw, n);
}

/* A bare enum word (at `at`) gets the kind its attribute has, and must be
 * one of that kind's values. */
static const shlo_attr *with_enum_kind(parser *P, const char *at,
                                       const char *attr, const shlo_attr *a) {
  if (a->kind != SHLO_ATTR_ENUM || a->enum_kind) return a;
  for (size_t i = 0; i < sizeof enum_kinds / sizeof *enum_kinds; i++)
    if (is(enum_kinds[i].attr, attr)) {
      shlo__check_enum(P, at, at, NULL, 0, enum_kinds[i].kind, a->str);
      return shlo__make_enum(P, enum_kinds[i].kind, a->str);
    }
  return a;
}

static const shlo_attr *as_i64_array(parser *P, const char *attr,
                                     const shlo_attr *a) {
  bool listed = false;
  for (size_t i = 0; i < sizeof i64_list_attrs / sizeof *i64_list_attrs; i++)
    if (is(i64_list_attrs[i], attr)) listed = true;
  if (!listed || a->kind != SHLO_ATTR_ARRAY) return a;
  int64_t *v = shlo__palloc(P, (size_t)(a->n ? a->n : 1) * sizeof *v);
  for (int i = 0; i < a->n; i++)
    if (!shlo_attr_get_i64(a->items[i], &v[i])) return a;
  return shlo__make_i64_array(P, v, a->n);
}

/* [a:b, c:d:s] after a slice operand. */
static void parse_slice_ranges(parser *P, op_builder *b) {
  int64_t start[SHLO_MAX_RANK], limit[SHLO_MAX_RANK], stride[SHLO_MAX_RANK];
  int n = 0;
  shlo__expect(P, "[");
  if (!shlo__accept(P, "]")) {
    do {
      if (n == SHLO_MAX_RANK) shlo__perr(P, "too many slice dimensions");
      start[n] = shlo__parse_int(P);
      shlo__expect(P, ":");
      limit[n] = shlo__parse_int(P);
      stride[n] = shlo__accept(P, ":") ? shlo__parse_int(P) : 1;
      n++;
    } while (shlo__accept(P, ","));
    shlo__expect(P, "]");
  }
  shlo__ob_attr(P, b, "start_indices", shlo__make_i64_array(P, start, n));
  shlo__ob_attr(P, b, "limit_indices", shlo__make_i64_array(P, limit, n));
  shlo__ob_attr(P, b, "strides", shlo__make_i64_array(P, stride, n));
}

/* dot_general's `batching_dims = [0] x [0]` and `contracting_dims = ...`
 * accumulate into one #stablehlo.dot<...> attribute. */
static void add_dot_dims(parser *P, op_builder *b, const char *which) {
  int64_t l[SHLO_MAX_RANK], r[SHLO_MAX_RANK];
  int nl = shlo__parse_i64_list(P, l, SHLO_MAX_RANK);
  shlo__expect(P, "x");
  int nr = shlo__parse_i64_list(P, r, SHLO_MAX_RANK);
  const shlo_attr *old = shlo_op_attr(b->op, "dot_dimension_numbers");
  shlo_attr *d = shlo__new_attr(P, SHLO_ATTR_STRUCT);
  d->struct_name = "dot";
  d->fields = shlo__palloc(P, 4 * sizeof *d->fields);
  if (old)
    for (int i = 0; i < old->n; i++) d->fields[d->n++] = old->fields[i];
  char name[64];
  snprintf(name, sizeof name, "lhs_%s_dimensions", which);
  d->fields[d->n].name = shlo__pstrndup(P, name, strlen(name));
  d->fields[d->n++].value = shlo__make_i64_array(P, l, nl);
  snprintf(name, sizeof name, "rhs_%s_dimensions", which);
  d->fields[d->n].name = shlo__pstrndup(P, name, strlen(name));
  d->fields[d->n++].value = shlo__make_i64_array(P, r, nr);
  shlo__ob_attr(P, b, "dot_dimension_numbers", d);
}

/* convolution's window = {stride = [..], pad = [[..], ..], ...}. */
static void add_conv_window(parser *P, op_builder *b) {
  shlo__skip_ws(P);
  const char *start = P->p;
  const shlo_attr *w = shlo__parse_attr_dict(P);
  for (int i = 0; i < w->n; i++) {
    const char *k = w->fields[i].name;
    const shlo_attr *v = w->fields[i].value;
    shlo__check_window_key(P, start, P->p, k);
    if (is(k, "pad")) {
      int64_t flat[2 * SHLO_MAX_RANK];
      int n = 0;
      if (v->kind != SHLO_ATTR_ARRAY) shlo__perr(P, "window pad must be a list");
      for (int j = 0; j < v->n; j++) {
        if (v->items[j]->kind != SHLO_ATTR_ARRAY || v->items[j]->n != 2 ||
            n + 2 > 2 * SHLO_MAX_RANK)
          shlo__perr(P, "window pad must be a list of [low, high] pairs");
        for (int h = 0; h < 2; h++)
          if (!shlo_attr_get_i64(v->items[j]->items[h], &flat[n++]))
            shlo__perr(P, "window pad must hold integers");
      }
      shlo_attr *a = (shlo_attr *)shlo__make_i64_array(P, flat, n);
      shlo__ob_attr(P, b, "padding", a);
      continue;
    }
    const char *name = is(k, "stride")       ? "window_strides"
                       : is(k, "lhs_dilate") ? "lhs_dilation"
                       : is(k, "rhs_dilate") ? "rhs_dilation"
                       : is(k, "reverse")    ? "window_reversal"
                                             : k;
    int64_t vals[SHLO_MAX_RANK];
    int n = shlo_attr_i64s(v, vals, SHLO_MAX_RANK);
    if (n < 0) shlo__perr(P, "window %s must be a list of integers", k);
    if (is(name, "window_reversal")) {
      shlo_attr *a = (shlo_attr *)shlo__make_i64_array(P, vals, n);
      a->elem = SHLO_I1;
      shlo__ob_attr(P, b, name, a);
    } else {
      shlo__ob_attr(P, b, name, shlo__make_i64_array(P, vals, n));
    }
  }
}

static void parse_keyword(parser *P, op_builder *b, const char *kw, size_t n) {
  const char *op = b->op->name;
  shlo__check_pretty_keyword(P, kw, b->op->code, kw, n);
  shlo__expect(P, "=");
  if (n == 16 && !memcmp(kw, "contracting_dims", n)) {
    add_dot_dims(P, b, "contracting");
  } else if (n == 13 && !memcmp(kw, "batching_dims", n)) {
    add_dot_dims(P, b, "batching");
  } else if (n == 6 && !memcmp(kw, "window", n)) {
    add_conv_window(P, b);
  } else if (n == 11 && !memcmp(kw, "dim_numbers", n)) {
    shlo__ob_attr(P, b, "dimension_numbers", shlo__parse_conv_dims(P));
  } else if (n == 6 && !memcmp(kw, "format", n) &&
             is(op, "stablehlo.reduce_precision")) {
    /* format = e5m10 */
    size_t fn;
    const char *f = shlo__expect_ident(P, &fn, "a format like e5m10");
    int e = 0, m = 0;
    if (sscanf(shlo__pstrndup(P, f, fn), "e%dm%d", &e, &m) != 2)
      shlo__perr(P, "expected a format like e5m10");
    shlo__ob_attr(P, b, "exponent_bits", shlo__make_int(P, e));
    shlo__ob_attr(P, b, "mantissa_bits", shlo__make_int(P, m));
  } else if (shlo__peekc(P) == '<') {
    /* dot_general's algorithm = <k = v, ...> is #stablehlo.dot_algorithm */
    const char *at = P->p;
    P->p++;
    shlo_attr *a = shlo__new_attr(P, SHLO_ATTR_STRUCT);
    a->struct_name = n == 9 && !memcmp(kw, "algorithm", 9)
                         ? "dot_algorithm"
                         : shlo__pstrndup(P, kw, n);
    a->fields = shlo__parse_struct_fields(P, ">", &a->n, a->struct_name);
    if (!strcmp(a->struct_name, "dot_algorithm"))
      shlo__check_dot_algorithm(P, at, a);
    shlo__ob_attr(P, b, canonical_name(P, b->op->code, kw, n), a);
  } else {
    const char *name = canonical_name(P, b->op->code, kw, n);
    P->untyped_scalars = true;
    shlo__skip_ws(P);
    const char *at = P->p;
    const shlo_attr *a = shlo__parse_attr(P);
    P->untyped_scalars = false;
    a = as_i64_array(P, name, with_enum_kind(P, at, name, a));
    shlo__ob_attr(P, b, name, a);
  }
}

/* After '{': does a region follow (rather than an attribute dict)? */
static bool region_follows(parser *P) {
  const char *save = P->p;
  int save_line = P->line;
  const char *save_ls = P->line_start;
  P->p++;
  int c = shlo__peekc(P);
  bool region = c == '^' || c == '%' || c == '}';
  if (!region && c >= 0 && shlo__is_ident_start(c)) {
    const char *s;
    size_t n;
    shlo__ident(P, &s, &n);
    region = memchr(s, '.', n) != NULL && P->p < P->end && *P->p != '=' &&
             shlo__peekc(P) != '=' && shlo__peekc(P) != ',' && shlo__peekc(P) != '}';
  }
  P->p = save;
  P->line = save_line;
  P->line_start = save_ls;
  return region;
}

/* `: T`, `: T, T`, `: (T, T) -> T`, `: T -> T` */
static void parse_signature(parser *P, op_builder *b, int n_results) {
  const shlo_type **ins = NULL, **outs = NULL;
  int n_in = 0, n_out = 0;
  bool functional = false;
  if (shlo__peekc(P) == '(') {
    functional = true;
    shlo__expect(P, "(");
    if (!shlo__accept(P, ")")) {
      n_in = shlo__parse_type_list(P, &ins);
      shlo__expect(P, ")");
    }
    shlo__expect(P, "->");
  } else {
    n_in = shlo__parse_type_list(P, &ins);
    if (shlo__accept(P, "->")) functional = true;
  }
  if (functional) {
    if (shlo__accept(P, "(")) {
      if (!shlo__accept(P, ")")) {
        n_out = shlo__parse_type_list(P, &outs);
        shlo__expect(P, ")");
      }
    } else {
      outs = shlo__palloc(P, sizeof *outs);
      outs[0] = shlo__parse_type(P);
      n_out = 1;
    }
    b->result_types = outs;
    b->n_result_types = n_out;
    return;
  }
  if (n_results == 0) return; /* the types are the operands' */
  if (n_in == n_results) {
    b->result_types = ins;
  } else if (n_in == 1) {
    b->result_types = shlo__palloc(P, (size_t)n_results * sizeof *outs);
    for (int i = 0; i < n_results; i++) b->result_types[i] = ins[0];
  } else if (n_in > n_results) {
    /* select prints `: pred_type, result_type`: results come last. */
    b->result_types = ins + (n_in - n_results);
  } else {
    shlo__perr(P, "'%s' has %d results but its type lists %d", b->op->name,
         n_results, n_in);
  }
  b->n_result_types = n_results;
}

/* What the generic pretty-form loop has seen so far. */
typedef struct pretty_state {
  bool item_ok;                /* an item may start here (after a comma) */
  int positional;              /* bare enum words seen */
  const shlo_type *dense_type; /* type of a `dense<...> : T` item */
} pretty_state;

static void merge_dict(parser *P, op_builder *b, const shlo_attr *d) {
  for (int i = 0; i < d->n; i++)
    shlo__ob_attr(P, b, d->fields[i].name, d->fields[i].value);
}

/* %x, and what may follow it directly: slice ranges `[a:b]` or a
 * get_tuple_element index `[k]`. */
static void pretty_operand(parser *P, op_builder *b) {
  const char *op = b->op->name;
  shlo__ob_operand(P, b, shlo__parse_value_ref(P));
  bool adjacent = P->p < P->end && *P->p == '[';
  if (adjacent && is(op, "stablehlo.get_tuple_element")) {
    P->p++;
    shlo_attr *a = (shlo_attr *)shlo__make_int(P, shlo__parse_int(P));
    a->type = shlo__make_scalar_type(P, SHLO_SI32);
    shlo__ob_attr(P, b, "index", a);
    shlo__expect(P, "]");
  } else if (adjacent || (shlo__peekc(P) == '[' && is(op, "stablehlo.slice"))) {
    parse_slice_ranges(P, b);
  }
}

/* @target of custom_call, @callee of call. */
static void pretty_symbol(parser *P, op_builder *b) {
  const shlo_attr *a = shlo__parse_symbol_attr(P);
  shlo__ob_attr(P, b, is(b->op->name, "stablehlo.custom_call") ? "call_target_name"
                                                         : "callee",
          a);
}

/* (%a, %b, key = value, ...) */
static void pretty_paren_list(parser *P, op_builder *b) {
  P->p++;
  if (shlo__accept(P, ")")) return;
  do {
    if (shlo__peekc(P) == '%') {
      shlo__ob_operand(P, b, shlo__parse_value_ref(P));
    } else {
      size_t n;
      const char *kw = shlo__expect_ident(P, &n, "an operand or keyword");
      parse_keyword(P, b, kw, n);
    }
  } while (shlo__accept(P, ","));
  shlo__expect(P, ")");
}

/* A word: dense<...>, attributes {...}, key = value, name(%a, ...) or a
 * bare enum word. */
static void pretty_word(parser *P, op_builder *b, pretty_state *ps) {
  const char *save = P->p;
  size_t n;
  const char *kw = shlo__expect_ident(P, &n, "a keyword");
  if (n == 5 && !memcmp(kw, "dense", 5)) {
    P->p = save;
    const shlo_attr *a = shlo__parse_attr(P);
    ps->dense_type = a->type;
    shlo__ob_attr(P, b, "value", a);
    ps->item_ok = false;
  } else if (n == 10 && !memcmp(kw, "attributes", 10)) {
    merge_dict(P, b, shlo__parse_attr_dict(P));
  } else if (shlo__peekc(P) == '=') {
    parse_keyword(P, b, kw, n);
    ps->item_ok = false;
  } else if (shlo__peekc(P) == '(') {
    /* chlo.scan's inits(%a, ...): more operands, counted. */
    int before = b->op->n_operands;
    P->p++;
    do shlo__ob_operand(P, b, shlo__parse_value_ref(P));
    while (shlo__accept(P, ","));
    shlo__expect(P, ")");
    shlo__ob_attr(P, b, shlo__pstrndup(P, kw, n), shlo__make_int(P, b->op->n_operands - before));
  } else {
    /* compare's direction and type come as bare words. */
    const char *name = "enum";
    if (is(b->op->name, "stablehlo.compare"))
      name = ps->positional == 0 ? "comparison_direction" : "compare_type";
    ps->positional++;
    shlo__ob_attr(P, b, name,
            with_enum_kind(P, kw, name, shlo__make_enum(P, NULL, shlo__pstrndup(P, kw, n))));
    ps->item_ok = false;
  }
}

/* One step of the loop: false when the op's text has ended. */
static bool pretty_item(parser *P, op_builder *b, pretty_state *ps) {
  int c = shlo__peekc(P);
  if (c == ',') {
    P->p++;
    ps->item_ok = true;
  } else if (c == '{') {
    if (region_follows(P)) shlo__ob_region(P, b, shlo__parse_region(P, NULL, 0));
    else merge_dict(P, b, shlo__parse_attr_dict(P));
    ps->item_ok = false;
  } else if (c == 'a' && shlo__accept_kw(P, "attributes")) {
    merge_dict(P, b, shlo__parse_attr_dict(P));
  } else if (!ps->item_ok) {
    return false;
  } else if (c == '%') {
    pretty_operand(P, b);
    ps->item_ok = false;
  } else if (c == '@') {
    pretty_symbol(P, b); /* an operand list may follow directly */
  } else if (c == '(') {
    pretty_paren_list(P, b);
  } else if (c == '"') {
    shlo_attr *a = shlo__new_attr(P, SHLO_ATTR_STRING);
    a->str = shlo__parse_string(P, NULL);
    /* composite's "name"; trace's "tag" (`stablehlo.trace %x, "tag"`) */
    shlo__ob_attr(P, b, is(b->op->name, "stablehlo.trace") ? "tag" : "name",
                  a);
  } else if (shlo__is_ident_start(c)) {
    pretty_word(P, b, ps);
  } else {
    return false;
  }
  return true;
}

static void generic_pretty(parser *P, op_builder *b, int n_results) {
  pretty_state ps = {.item_ok = true};
  for (;;) {
    if (shlo__peekc(P) == ':') {
      P->p++;
      parse_signature(P, b, n_results);
      if (shlo__peekc(P) == '{' && !region_follows(P))
        merge_dict(P, b, shlo__parse_attr_dict(P));
      return;
    }
    if (!pretty_item(P, b, &ps)) break;
  }
  if (n_results == 0) return;
  /* No signature: `stablehlo.constant dense<...> : T` typed its result. */
  if (!ps.dense_type || n_results != 1)
    shlo__perr(P, "expected ':' and the type of '%s'", b->op->name);
  b->result_types = shlo__palloc(P, sizeof *b->result_types);
  b->result_types[0] = ps.dense_type;
  b->n_result_types = 1;
}

/* stablehlo.while(%a = %x, ...) [attributes {..}] : T, ... cond {..} do {..} */
static void parse_while(parser *P, op_builder *b, int n_results) {
  int cap = 4, n = 0;
  pre_arg *args = shlo__palloc(P, (size_t)cap * sizeof *args);
  shlo__expect(P, "(");
  if (!shlo__accept(P, ")")) {
    do {
      if (n == cap) {
        pre_arg *w = shlo__palloc(P, (size_t)cap * 2 * sizeof *w);
        memcpy(w, args, (size_t)n * sizeof *w);
        args = w;
        cap *= 2;
      }
      args[n].name = shlo__parse_value_name(P, &args[n].len);
      shlo__expect(P, "=");
      int id = shlo__parse_value_ref(P);
      args[n].type = P->vtypes[id];
      shlo__ob_operand(P, b, id);
      n++;
    } while (shlo__accept(P, ","));
    shlo__expect(P, ")");
  }
  if (shlo__accept_kw(P, "attributes")) merge_dict(P, b, shlo__parse_attr_dict(P));
  if (shlo__accept(P, ":")) {
    const shlo_type **types;
    int nt = shlo__parse_type_list(P, &types);
    if (nt != n) shlo__perr(P, "stablehlo.while has %d operands but %d types", n, nt);
    for (int i = 0; i < n; i++) args[i].type = types[i];
  }
  b->result_types = shlo__palloc(P, (size_t)(n ? n : 1) * sizeof *b->result_types);
  for (int i = 0; i < n; i++) b->result_types[i] = args[i].type;
  b->n_result_types = n;
  (void)n_results;
  if (!shlo__accept_kw(P, "cond")) shlo__perr(P, "expected 'cond' region of stablehlo.while");
  shlo__ob_region(P, b, shlo__parse_region(P, args, n));
  if (!shlo__accept_kw(P, "do")) shlo__perr(P, "expected 'do' region of stablehlo.while");
  shlo__ob_region(P, b, shlo__parse_region(P, args, n));
}

/* A region whose body is the single op `name` over scalar args. */
static shlo_block *single_op_region(parser *P, const char *name,
                                    const shlo_type *const *elem_types,
                                    int n) {
  shlo_block *blk = shlo__palloc(P, sizeof *blk);
  blk->n_args = 2 * n;
  blk->args = shlo__palloc(P, (size_t)(2 * n) * sizeof(int));
  for (int i = 0; i < 2 * n; i++) blk->args[i] = shlo__new_value(P, elem_types[i % n]);
  shlo_op *body = shlo__palloc(P, sizeof *body);
  body->name = name;
  body->code = shlo__op_lookup(name, strlen(name));
  body->n_operands = 2 * n;
  body->operands = blk->args;
  body->n_results = n;
  body->results = shlo__palloc(P, (size_t)n * sizeof(int));
  for (int i = 0; i < n; i++) body->results[i] = shlo__new_value(P, elem_types[i]);
  shlo_op *ret = shlo__palloc(P, sizeof *ret);
  ret->name = "stablehlo.return";
  ret->code = shlo__op_lookup(ret->name, strlen(ret->name));
  ret->n_operands = n;
  ret->operands = body->results;
  blk->n_ops = 2;
  blk->ops = shlo__palloc(P, 2 * sizeof *blk->ops);
  blk->ops[0] = body;
  blk->ops[1] = ret;
  return blk;
}

/* The region of `applies OP`: OP over the inits' element types.  Out of
 * line, so that its buffer is not on the stack of every nested reducer. */
static __attribute__((noinline)) void applies_region(parser *P, op_builder *b,
                                                     const char *applies,
                                                     const int *inits, int n) {
  const shlo_type *elem_types[64];
  for (int i = 0; i < n; i++) elem_types[i] = P->vtypes[inits[i]];
  shlo__ob_region(P, b, single_op_region(P, applies, elem_types, n));
}

/* stablehlo.reduce(%x init: %i), ... applies OP across dimensions = [..] : sig
 * or ... across dimensions = [..] : sig reducer(%a: T, %b: T) (...) {..} */
static void parse_reduce(parser *P, op_builder *b, int n_results) {
  int inputs[64], inits[64], n = 0;
  do {
    if (n == 64) shlo__perr(P, "too many reduce operands");
    shlo__expect(P, "(");
    inputs[n] = shlo__parse_value_ref(P);
    if (!shlo__accept_kw(P, "init")) shlo__perr(P, "expected 'init:'");
    shlo__expect(P, ":");
    inits[n] = shlo__parse_value_ref(P);
    shlo__expect(P, ")");
    n++;
  } while (shlo__accept(P, ","));
  for (int i = 0; i < n; i++) shlo__ob_operand(P, b, inputs[i]);
  for (int i = 0; i < n; i++) shlo__ob_operand(P, b, inits[i]);
  const char *applies = NULL;
  if (shlo__accept_kw(P, "applies")) {
    size_t an;
    const char *s = shlo__expect_ident(P, &an, "an op name after 'applies'");
    if (shlo__op_lookup(s, an) == SHLO_OP_UNKNOWN)
      shlo__check_unknown_op(P, s, s, an);
    applies = shlo__pstrndup(P, s, an);
  }
  if (!shlo__accept_kw(P, "across")) shlo__perr(P, "expected 'across dimensions = [...]'");
  if (!shlo__accept_kw(P, "dimensions")) shlo__perr(P, "expected 'dimensions'");
  shlo__expect(P, "=");
  int64_t dims[SHLO_MAX_RANK];
  int nd = shlo__parse_i64_list(P, dims, SHLO_MAX_RANK);
  shlo__ob_attr(P, b, "dimensions", shlo__make_i64_array(P, dims, nd));
  if (shlo__peekc(P) == '{') merge_dict(P, b, shlo__parse_attr_dict(P));
  shlo__expect(P, ":");
  parse_signature(P, b, n_results);
  if (applies) {
    applies_region(P, b, applies, inits, n);
    return;
  }
  if (!shlo__accept_kw(P, "reducer")) shlo__perr(P, "expected 'applies' or 'reducer'");
  /* In the arena, not on the stack: this frame recurses once per nested
   * reducer (n <= 64 inputs, so 2n arguments). */
  pre_arg *args = shlo__palloc(P, (size_t)(2 * n) * sizeof *args);
  for (int i = 0; i < n; i++) {
    shlo__expect(P, "(");
    for (int j = 0; j < 2; j++) {
      pre_arg *a = &args[j * n + i];
      a->name = shlo__parse_value_name(P, &a->len);
      shlo__expect(P, ":");
      a->type = shlo__parse_type(P);
      if (j == 0) shlo__expect(P, ",");
    }
    shlo__expect(P, ")");
  }
  shlo__ob_region(P, b, shlo__parse_region(P, args, 2 * n));
}

/* tensor.cast %x : T to U: one operand of type T, the result of type U. */
static void parse_tensor_cast(parser *P, op_builder *b) {
  int x = shlo__parse_value_ref(P);
  shlo__ob_operand(P, b, x);
  shlo__expect(P, ":");
  shlo__skip_ws(P);
  const char *at = P->p;
  const shlo_type *from = shlo__parse_type(P);
  if (P->vtypes[x] && !shlo_type_equal(from, P->vtypes[x]))
    shlo__perr_at(P, at, "tensor.cast's operand has another type than the "
                  "one written here");
  if (!shlo__accept_kw(P, "to"))
    shlo__perr(P, "expected 'to' and the result type of tensor.cast");
  b->result_types = shlo__palloc(P, sizeof *b->result_types);
  b->result_types[0] = shlo__parse_type(P);
  b->n_result_types = 1;
}

void shlo__parse_pretty_op(parser *P, op_builder *b, int n_results) {
  const char *name = b->op->name;
  if (is(name, "tensor.cast")) {
    parse_tensor_cast(P, b);
  } else if (is(name, "stablehlo.while")) {
    parse_while(P, b, n_results);
  } else if (is(name, "stablehlo.reduce") && shlo__peekc(P) == '(') {
    parse_reduce(P, b, n_results);
  } else {
    generic_pretty(P, b, n_results);
  }
}
