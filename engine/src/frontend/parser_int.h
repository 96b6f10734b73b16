/* SPDX-License-Identifier: Apache-2.0 */
/* Internals shared by the parser's files: the cursor over the text, error
 * reporting, and the value scopes of the function being parsed.
 *
 * Errors unwind with longjmp to shlo_parse_module (as Lua's parser does):
 * everything the parser builds lives in the module's arena, and the few
 * malloc'd work buffers hang off the parser struct, so one place frees it
 * all.  Recursion is bounded by the nesting limit (shlo_compile_limits'
 * max_depth: regions within regions, and types, attributes and literal
 * brackets within each other, each counted on its own), so no input can
 * exhaust the stack. */
#ifndef SHLO_PARSER_INT_H
#define SHLO_PARSER_INT_H

#include <setjmp.h>
#include <stdnoreturn.h>

#include "frontend/module.h"
#include "core/arena.h"
#include "core/namemap.h"
#include "shlo/ir.h"
#include "shlo/limits.h"

/* Splat literals (dense<1.0> : tensor<...>) expand at parse time. */
#define PARSE_MAX_SPLAT_BYTES ((int64_t)1 << 28)
#define PARSE_MAX_SPLAT_TOTAL ((int64_t)1 << 30)

typedef struct scope_entry {
  const char *name;
  size_t len;
  int id, count; /* first value id and how many (%x:2 defines two) */
  int prev;      /* previous entry with the same hash bucket, or -1 */
} scope_entry;

typedef struct alias {
  const char *name;
  size_t len;
  const shlo_attr *attr;
  const shlo_type *type;
} alias;

typedef struct parser {
  const char *src, *p, *end;
  int line;
  const char *line_start;
  const char *filename;
  shlo_arena *arena;
  shlo_module *m;
  shlo_diag *diag;
  jmp_buf on_error;
  int depth;        /* types, attributes, literal brackets open now */
  int region_depth; /* regions open now, a function's body the first */
  int max_depth;    /* the bound on each (shlo__max_depth) */
  /* In a pretty op's `key = value`, a following ':' starts the op's type,
   * not the value's (`dim = 0 : tensor<4xi32>`). */
  bool untyped_scalars;
  int64_t splat_bytes; /* bytes splat literals have expanded to so far */
  const shlo_compile_limits *limits; /* may be NULL */
  int64_t n_ops;       /* ops parsed so far, for limits */
  /* the function being parsed */
  const shlo_type **vtypes;
  int n_values, cap_values;
  scope_entry *scope;
  int n_scope, cap_scope;
  int *buckets; /* n_buckets heads into scope[], -1 = empty */
  int n_buckets; /* a power of two, grown with the scope */
  /* top-level #name = ... and !name = ... definitions */
  alias *aliases;
  int n_aliases, cap_aliases;
  shlo_name_map alias_index; /* alias name -> index in aliases */
  shlo_name_map func_index;  /* function name -> index in m->funcs */
} parser;

#define SCOPE_BUCKETS 4096 /* to start with */

/* ---- errors (parse_core.c) ---- */
noreturn void shlo__perr(parser *P, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
noreturn void shlo__perr_at(parser *P, const char *at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Stop at the cursor with status st, not a syntax error (a limit). */
noreturn void shlo__pstop(parser *P, shlo_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
noreturn void shlo__poom(parser *P); /* out of memory: unwind */
void *shlo__palloc(parser *P, size_t size);
char *shlo__pstrndup(parser *P, const char *s, size_t n);
/* The depth guard of types, attributes and literal brackets: refuses
 * nesting deeper than P->max_depth, naming the limit. */
void shlo__enter(parser *P);
void shlo__leave(parser *P);

/* ---- cursor ---- */
void shlo__skip_ws(parser *P);
int shlo__peekc(parser *P);               /* next non-space char, or -1 at end */
bool shlo__accept(parser *P, const char *lit);    /* punctuation */
void shlo__expect(parser *P, const char *lit);
bool shlo__accept_kw(parser *P, const char *kw);  /* keyword, whole word */
bool shlo__is_ident_start(int c);
bool shlo__is_ident_char(int c);
/* A bare identifier ([A-Za-z_][A-Za-z0-9_$.]*); false if none here. */
bool shlo__ident(parser *P, const char **s, size_t *n);
const char *shlo__expect_ident(parser *P, size_t *n, const char *what);
/* A string literal with escapes decoded; its length in *n. */
char *shlo__parse_string(parser *P, size_t *n);
bool shlo__at_number(parser *P);
int64_t shlo__parse_int(parser *P);
/* Skip a balanced (...), [...], {...} or <...> group starting at the
 * cursor; returns its text. */
char *shlo__skip_balanced(parser *P);
void shlo__skip_loc(parser *P); /* optional trailing loc(...) */

/* ---- types and attributes (parse_core.c) ---- */
const shlo_type *shlo__parse_type(parser *P);
bool shlo__at_type(parser *P);
int shlo__parse_type_list(parser *P, const shlo_type ***out); /* T, T, ... */
const shlo_attr *shlo__parse_attr(parser *P);
const shlo_attr *shlo__parse_attr_dict(parser *P); /* { ... } */
const shlo_attr *shlo__parse_symbol_attr(parser *P); /* @name or @"name" */
shlo_attr *shlo__new_attr(parser *P, shlo_attr_kind kind);
const shlo_attr *shlo__make_i64_array(parser *P, const int64_t *v, int n);
const shlo_attr *shlo__make_int(parser *P, int64_t v);
const shlo_attr *shlo__make_enum(parser *P, const char *kind, const char *value);
const shlo_type *shlo__make_scalar_type(parser *P, shlo_elem_type e);
/* [1, 2, 3] as an i64 list; returns count. */
int shlo__parse_i64_list(parser *P, int64_t *out, int cap);
const shlo_attr *shlo__parse_conv_dims(parser *P);
/* `k = v, ...` up to `close` (a trailing comma is allowed). */
shlo_named_attr *shlo__parse_fields(parser *P, const char *close, int *n_out);
/* The same for the fields of #stablehlo.<sname><...>: a repeated name is
 * an error, and so is a name the attribute does not have (for those with
 * fixed fields: dot, gather, scatter, dot_algorithm). */
shlo_named_attr *shlo__parse_struct_fields(parser *P, const char *close,
                                     int *n_out, const char *sname);
/* A #stablehlo.dot_algorithm's component counts are positive and its
 * types a combination known to be supported (dot_general C22-C24);
 * errors are reported at `at`, where the attribute starts. */
void shlo__check_dot_algorithm(parser *P, const char *at, const shlo_attr *a);

/* ---- values and scopes (parser.c) ---- */
int shlo__new_value(parser *P, const shlo_type *t);
void shlo__bind_name(parser *P, const char *name, size_t len, int id, int count);
int shlo__scope_mark(parser *P);
void shlo__scope_pop(parser *P, int mark);
/* %name or %name#k: its value id. */
int shlo__parse_value_ref(parser *P);
/* A region `{ [^bb(%a: T, ...):] ops }`.  Arguments may instead be given
 * by the pretty form before the braces: n_pre names (each %-less name and
 * length) with their types. */
typedef struct pre_arg {
  const char *name;
  size_t len;
  const shlo_type *type;
} pre_arg;
shlo_block *shlo__parse_region(parser *P, const pre_arg *pre, int n_pre);
/* A value name after '%' (digits, letters, _ $ . -). */
const char *shlo__parse_value_name(parser *P, size_t *n);

/* ---- ops (parser.c, parse_pretty.c) ---- */
/* An op under construction: growable operand/attr/region lists. */
typedef struct op_builder {
  shlo_op *op;
  const char *at; /* where the op's name starts, for diagnostics */
  int cap_operands, cap_attrs, cap_regions;
  const shlo_type **result_types;
  int n_result_types;
} op_builder;

void shlo__ob_operand(parser *P, op_builder *b, int id);
void shlo__ob_attr(parser *P, op_builder *b, const char *name, const shlo_attr *a);
void shlo__ob_region(parser *P, op_builder *b, const shlo_block *r);
/* Parse the pretty form of op b->op->name after its mnemonic. */
void shlo__parse_pretty_op(parser *P, op_builder *b, int n_results);

#endif
