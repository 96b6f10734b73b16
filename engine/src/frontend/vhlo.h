/* SPDX-License-Identifier: Apache-2.0 */
/* VHLO, StableHLO's versioned mirror dialect, as portable artifacts carry
 * it: attribute/type decoding (vhlo_attrs.c) and the op-by-op lowering to
 * the StableHLO generic text the parser reads (vhlo.c).
 *
 * A decoded attribute or type is a small tree in the bytecode file's arena;
 * each table entry is decoded once (memoised) and nesting is bounded. */
#ifndef SHLO_VHLO_H
#define SHLO_VHLO_H

#include "core/strbuf.h"
#include "frontend/bytecode.h"
#include "shlo/ir.h"
#include "shlo/types.h"

typedef enum {
  VA_ARRAY, VA_BOOL, VA_ENUM, VA_DICT, VA_FLOAT, VA_INT, VA_ALIAS,
  VA_STRING, VA_TENSOR, VA_TYPE, VA_BOUNDS, VA_ACCURACY, VA_UNIT,
  VA_SYMBOL, VA_DENSE_ARRAY, VA_OTHER,
  VA_DROPPED /* Shardy's (sdy) attributes: dropped from attribute
                dictionaries, refused anywhere else */
} vattr_kind;

typedef struct vtype vtype;
typedef struct vattr vattr;

struct vattr {
  vattr_kind kind;
  const char *enum_kind; /* VA_ENUM: "comparison_direction", ... */
  int64_t i;             /* BOOL, ENUM value, INT, ALIAS operand index */
  uint64_t bits;         /* FLOAT bit pattern */
  double atol, rtol;     /* ACCURACY (ulps in i, mode in items[0]) */
  const vtype *type;     /* FLOAT, INT, TENSOR, TYPE, DENSE_ARRAY */
  const char *s;         /* STRING, SYMBOL */
  size_t slen;
  int n;                 /* ARRAY/DICT items, BOUNDS/ALIAS ints */
  const vattr **items;
  const vattr **keys;    /* DICT names (strings) */
  int64_t *ints, *ints2; /* BOUNDS; ALIAS output/operand tuple indices */
  int n2;
  const uint8_t *blob;   /* TENSOR / DENSE_ARRAY raw data */
  size_t blob_n;
  const char *text;      /* OTHER: assembly text as stored */
};

typedef enum {
  VT_ELEM, VT_TENSOR, VT_UNRANKED, VT_TOKEN, VT_TUPLE, VT_FUNCTION,
  VT_QUANT, VT_BUFFER, VT_NONE, VT_OTHER
} vtype_kind;

struct vtype {
  vtype_kind kind;
  shlo_elem_type elem; /* VT_ELEM */
  const char *text;    /* StableHLO spelling: "tensor<2xf32>" */
  int rank;            /* TENSOR, BUFFER */
  int64_t *dims;
  const vtype *elem_t;
  int n_in, n_out;     /* FUNCTION inputs/results, TUPLE parts (n_in) */
  const vtype **in, **out;
};

#define VHLO_MAX_BUFS (2 * BC_MAX_DEPTH + 16)

typedef struct vhlo_ctx {
  bc_file *f;
  const vattr **attrs; /* memo per attribute index */
  const vtype **types;
  int depth;
  /* Text being built, innermost last: an error unwinds past them with
   * longjmp, so they are the context's to free (shlo__vhlo_ctx_free_bufs). */
  strbuf bufs[VHLO_MAX_BUFS];
  int n_bufs;
} vhlo_ctx;

/* A fresh text buffer, and its text moved into the file's arena (the
 * buffer must be the newest one open). */
strbuf *shlo__vhlo_buf(vhlo_ctx *v, bc_cursor *c);
char *shlo__vhlo_buf_take(vhlo_ctx *v, bc_cursor *c, strbuf *b);
void shlo__vhlo_ctx_free_bufs(vhlo_ctx *v);

void shlo__vhlo_ctx_init(vhlo_ctx *v, bc_file *f);
const vattr *shlo__vhlo_attr(vhlo_ctx *v, int index);
const vtype *shlo__vhlo_type(vhlo_ctx *v, int index);
/* Shortest decimal that reads back to the same value of type t. */
void shlo__vhlo_print_float(strbuf *b, shlo_elem_type t, uint64_t bits);
int64_t shlo__vhlo_numel(const vtype *t); /* -1 when not static */

/* The shared encoding tables, for the writer too: VHLO's type code of an
 * element type (-1 if VHLO has none), the attribute code of an enum kind
 * ("comparison_direction" -> 3, -1 if unknown), and an enum value's
 * number from its name ("LT" -> 5; -1 if unknown). */
int shlo__vhlo_scalar_code(shlo_elem_type e);
int shlo__vhlo_enum_attr_code(const char *kind);
int shlo__vhlo_enum_value(const char *kind, const char *name);

/* print_ir.c's printer of one attribute in generic form: the writer keeps
 * an attribute VHLO has no form for as this text (unregistered ops). */
void shlo__print_attr(strbuf *b, const shlo_attr *a);

#endif
