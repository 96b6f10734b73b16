/* SPDX-License-Identifier: Apache-2.0 */
/* The IR printer: modules in generic form.  Values are renamed %v<id>,
 * dense literals print as hex blobs of their storage, so parsing the output
 * gives back the same IR (tests/test_roundtrip.c checks this over the
 * corpus). */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/module.h"
#include "core/alloc.h"
#include "core/value.h"
#include "shlo/ir.h"
#include "core/strbuf.h"

static void print_type(strbuf *b, const shlo_type *t) {
  char small[256];
  int n = shlo_type_format(t, small, sizeof small);
  if ((size_t)n < sizeof small) {
    shlo__sb_printf(b, "%s", small);
    return;
  }
  char *big = shlo__malloc((size_t)n + 1);
  if (!big) {
    b->failed = true;
    return;
  }
  shlo_type_format(t, big, (size_t)n + 1);
  shlo__sb_printf(b, "%s", big);
  shlo__free(big);
}

static void print_string(strbuf *b, const char *s) {
  shlo__sb_printf(b, "\"");
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') shlo__sb_printf(b, "\\%c", c);
    else if (c == '\n') shlo__sb_printf(b, "\\n");
    else if (c < 0x20 || c >= 0x7f) shlo__sb_printf(b, "\\%02X", c);
    else shlo__sb_printf(b, "%c", c);
  }
  shlo__sb_printf(b, "\"");
}

static bool bare_symbol(const char *s) {
  if (!isalpha((unsigned char)*s) && *s != '_') return false;
  for (; *s; s++)
    if (!isalnum((unsigned char)*s) && *s != '_' && *s != '$' && *s != '.')
      return false;
  return true;
}

static void print_symbol(strbuf *b, const char *s) {
  shlo__sb_printf(b, "@");
  if (bare_symbol(s)) shlo__sb_printf(b, "%s", s);
  else print_string(b, s);
}

static void print_name(strbuf *b, const char *s) {
  if (bare_symbol(s)) shlo__sb_printf(b, "%s", s);
  else print_string(b, s);
}

static void print_attr(strbuf *b, const shlo_attr *a);

static void print_fields(strbuf *b, const shlo_named_attr *f, int n) {
  for (int i = 0; i < n; i++) {
    if (i) shlo__sb_printf(b, ", ");
    print_name(b, f[i].name);
    if (f[i].value->kind != SHLO_ATTR_UNIT) {
      shlo__sb_printf(b, " = ");
      print_attr(b, f[i].value);
    }
  }
}

static void print_conv_part(strbuf *b, int64_t x, int64_t y, const char *xy,
                            const int64_t *spatial, int n_spatial) {
  int rank = n_spatial + 2;
  shlo__sb_printf(b, "[");
  for (int pos = 0; pos < rank; pos++) {
    if (pos) shlo__sb_printf(b, ", ");
    if (pos == x) shlo__sb_printf(b, "%c", xy[0]);
    else if (pos == y) shlo__sb_printf(b, "%c", xy[1]);
    else
      for (int k = 0; k < n_spatial; k++)
        if (spatial[k] == pos) shlo__sb_printf(b, "%d", k);
  }
  shlo__sb_printf(b, "]");
}

static void print_dense(strbuf *b, const shlo_attr *a) {
  const shlo_value *v = a->dense;
  shlo__sb_printf(b, "dense<\"0x");
  const unsigned char *p = v->data;
  for (size_t i = 0; i < v->nbytes; i++) shlo__sb_printf(b, "%02X", p[i]);
  shlo__sb_printf(b, "\"> : ");
  print_type(b, a->type);
}

/* " : <type>" after a typed scalar attribute. */
static void print_type_suffix(strbuf *b, const shlo_attr *a) {
  if (a->type) {
    shlo__sb_printf(b, " : ");
    print_type(b, a->type);
  }
}

/* array<elem: v0, v1, ...> */
static void print_dense_array(strbuf *b, const shlo_attr *a) {
  char elem[64];
  shlo_type t = {.kind = SHLO_TYPE_ELEMENT, .elem = a->elem};
  shlo_type_format(&t, elem, sizeof elem);
  shlo__sb_printf(b, "array<%s", elem);
  for (int i = 0; i < a->n; i++) {
    shlo__sb_printf(b, i ? ", " : ": ");
    if (a->elem == SHLO_I1) shlo__sb_printf(b, a->ints[i] ? "true" : "false");
    else if (shlo_elem_is_float(a->elem)) shlo__sb_printf(b, "%.17e", a->floats[i]);
    else shlo__sb_printf(b, "%lld", (long long)a->ints[i]);
  }
  shlo__sb_printf(b, ">");
}

/* #stablehlo.conv<input x kernel -> output dimension layouts> */
static void print_conv_dims(strbuf *b, const shlo_attr *a) {
  shlo__sb_printf(b, "#stablehlo.conv<");
  print_conv_part(b, a->conv_in_batch, a->conv_in_feature, "bf",
                  a->conv_in_spatial, a->conv_n_spatial);
  shlo__sb_printf(b, "x");
  print_conv_part(b, a->conv_k_in, a->conv_k_out, "io", a->conv_k_spatial,
                  a->conv_n_spatial);
  shlo__sb_printf(b, "->");
  print_conv_part(b, a->conv_out_batch, a->conv_out_feature, "bf",
                  a->conv_out_spatial, a->conv_n_spatial);
  shlo__sb_printf(b, ">");
}

static void print_attr(strbuf *b, const shlo_attr *a) {
  switch (a->kind) {
  case SHLO_ATTR_UNIT:
    shlo__sb_printf(b, "unit");
    break;
  case SHLO_ATTR_BOOL:
    shlo__sb_printf(b, a->b ? "true" : "false");
    break;
  case SHLO_ATTR_INT:
    shlo__sb_printf(b, "%lld", (long long)a->i);
    print_type_suffix(b, a);
    break;
  case SHLO_ATTR_FLOAT:
    shlo__sb_printf(b, "%.17e", a->f);
    print_type_suffix(b, a);
    break;
  case SHLO_ATTR_STRING:
    print_string(b, a->str);
    print_type_suffix(b, a);
    break;
  case SHLO_ATTR_SYMBOL:
    print_symbol(b, a->str);
    break;
  case SHLO_ATTR_TYPE:
    print_type(b, a->type);
    break;
  case SHLO_ATTR_ARRAY:
    shlo__sb_printf(b, "[");
    for (int i = 0; i < a->n; i++) {
      if (i) shlo__sb_printf(b, ", ");
      print_attr(b, a->items[i]);
    }
    shlo__sb_printf(b, "]");
    break;
  case SHLO_ATTR_DENSE_ARRAY:
    print_dense_array(b, a);
    break;
  case SHLO_ATTR_DENSE:
    print_dense(b, a);
    break;
  case SHLO_ATTR_ENUM:
    if (a->enum_kind) shlo__sb_printf(b, "#stablehlo<%s %s>", a->enum_kind, a->str);
    else shlo__sb_printf(b, "%s", a->str);
    break;
  case SHLO_ATTR_STRUCT:
    if (a->struct_name) shlo__sb_printf(b, "#stablehlo.%s<", a->struct_name);
    else shlo__sb_printf(b, "{");
    print_fields(b, a->fields, a->n);
    shlo__sb_printf(b, a->struct_name ? ">" : "}");
    break;
  case SHLO_ATTR_CONV_DIMS:
    print_conv_dims(b, a);
    break;
  case SHLO_ATTR_OPAQUE:
    shlo__sb_printf(b, "%s", a->str);
    break;
  }
}

void shlo__print_attr(strbuf *b, const shlo_attr *a) { print_attr(b, a); }

static void print_block(strbuf *b, const shlo_func *f, const shlo_block *blk,
                        int indent, bool label);

static void print_types_of(strbuf *b, const shlo_func *f, const int *ids,
                           int n) {
  shlo__sb_printf(b, "(");
  for (int i = 0; i < n; i++) {
    if (i) shlo__sb_printf(b, ", ");
    print_type(b, f->value_types[ids[i]]);
  }
  shlo__sb_printf(b, ")");
}

static void print_op(strbuf *b, const shlo_func *f, const shlo_op *op,
                     int indent) {
  shlo__sb_printf(b, "%*s", indent, "");
  for (int i = 0; i < op->n_results; i++)
    shlo__sb_printf(b, "%s%%v%d", i ? ", " : "", op->results[i]);
  if (op->n_results) shlo__sb_printf(b, " = ");
  print_string(b, op->name);
  shlo__sb_printf(b, "(");
  for (int i = 0; i < op->n_operands; i++)
    shlo__sb_printf(b, "%s%%v%d", i ? ", " : "", op->operands[i]);
  shlo__sb_printf(b, ")");
  if (op->n_regions) {
    shlo__sb_printf(b, " (");
    for (int r = 0; r < op->n_regions; r++) {
      if (r) shlo__sb_printf(b, ", ");
      shlo__sb_printf(b, "{\n");
      print_block(b, f, op->regions[r], indent + 2, true);
      shlo__sb_printf(b, "%*s}", indent, "");
    }
    shlo__sb_printf(b, ")");
  }
  if (op->n_attrs) {
    shlo__sb_printf(b, " {");
    print_fields(b, op->attrs, op->n_attrs);
    shlo__sb_printf(b, "}");
  }
  shlo__sb_printf(b, " : ");
  print_types_of(b, f, op->operands, op->n_operands);
  shlo__sb_printf(b, " -> ");
  print_types_of(b, f, op->results, op->n_results);
  shlo__sb_printf(b, "\n");
}

static void print_block(strbuf *b, const shlo_func *f, const shlo_block *blk,
                        int indent, bool label) {
  if (label) {
    shlo__sb_printf(b, "%*s^bb0(", indent - 2, "");
    for (int i = 0; i < blk->n_args; i++) {
      if (i) shlo__sb_printf(b, ", ");
      shlo__sb_printf(b, "%%v%d: ", blk->args[i]);
      print_type(b, f->value_types[blk->args[i]]);
    }
    shlo__sb_printf(b, "):\n");
  }
  for (int i = 0; i < blk->n_ops; i++) print_op(b, f, blk->ops[i], indent);
}

static void print_func(strbuf *b, const shlo_func *f) {
  shlo__sb_printf(b, "  func.func ");
  if (f->visibility) shlo__sb_printf(b, "%s ", f->visibility);
  print_symbol(b, f->name);
  shlo__sb_printf(b, "(");
  for (int i = 0; i < f->n_args; i++) {
    if (i) shlo__sb_printf(b, ", ");
    shlo__sb_printf(b, "%%v%d: ", f->body ? f->body->args[i] : i);
    print_type(b, f->arg_types[i]);
    if (f->arg_attrs && f->arg_attrs[i]) {
      shlo__sb_printf(b, " ");
      print_attr(b, f->arg_attrs[i]);
    }
  }
  shlo__sb_printf(b, ") -> (");
  for (int i = 0; i < f->n_results; i++) {
    if (i) shlo__sb_printf(b, ", ");
    print_type(b, f->result_types[i]);
    if (f->result_attrs && f->result_attrs[i]) {
      shlo__sb_printf(b, " ");
      print_attr(b, f->result_attrs[i]);
    }
  }
  shlo__sb_printf(b, ")");
  if (f->attrs) {
    shlo__sb_printf(b, " attributes ");
    print_attr(b, f->attrs);
  }
  if (f->body) {
    shlo__sb_printf(b, " {\n");
    print_block(b, f, f->body, 4, false);
    shlo__sb_printf(b, "  }");
  }
  shlo__sb_printf(b, "\n");
}

char *shlo_module_print(const shlo_module *m) {
  strbuf b = {0};
  shlo__sb_printf(&b, "module");
  if (m->name) {
    shlo__sb_printf(&b, " ");
    print_symbol(&b, m->name);
  }
  if (m->attrs) {
    shlo__sb_printf(&b, " attributes ");
    print_attr(&b, m->attrs);
  }
  shlo__sb_printf(&b, " {\n");
  for (int i = 0; i < m->n_funcs; i++) print_func(&b, m->funcs[i]);
  shlo__sb_printf(&b, "}\n");
  return shlo__sb_take(&b);
}
