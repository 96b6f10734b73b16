/* SPDX-License-Identifier: Apache-2.0 */
/* The canonical printed form of a module, for comparing what an artifact
 * reads to with what its text parses to (test_artifact.c,
 * test_artifact_write.c): attribute dictionaries and #stablehlo.x<...>
 * fields sorted by name, as MLIR holds them (their order in a text carries
 * no meaning), and attributes at their StableHLO default dropped on both
 * sides (the deserializer leaves them out; MLIR's printer elides them). */
#ifndef SHLO_ARTIFACT_CANON_H
#define SHLO_ARTIFACT_CANON_H

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "shlo/engine.h"
#include "shlo/ir.h"

/* The scratch copies of normalised attributes, freed after printing. */
typedef struct canon_scratch {
  void **blocks;
  int n, cap;
} canon_scratch;

static inline void *canon_alloc(canon_scratch *cs, size_t bytes) {
  if (cs->n == cs->cap) {
    cs->cap = cs->cap ? cs->cap * 2 : 64;
    cs->blocks = realloc(cs->blocks, sizeof *cs->blocks * (size_t)cs->cap);
    if (!cs->blocks) abort();
  }
  void *p = calloc(1, bytes + sizeof(shlo_attr));
  if (!p) abort();
  return cs->blocks[cs->n++] = p;
}

/* array<i64: 1, 2> as [1, 2]: the same list, as the reader spells a
 * dimension list inside #stablehlo.gather<...> and friends. */
static inline const shlo_attr *as_int_array(const shlo_attr *a,
                                            canon_scratch *cs) {
  if (a->kind != SHLO_ATTR_DENSE_ARRAY || shlo_elem_is_float(a->elem))
    return a;
  shlo_attr *arr = canon_alloc(cs, sizeof *arr);
  shlo_attr *items = canon_alloc(cs, sizeof *items * (size_t)a->n);
  const shlo_attr **ptrs = canon_alloc(cs, sizeof *ptrs * (size_t)a->n);
  arr->kind = SHLO_ATTR_ARRAY;
  arr->n = a->n;
  arr->items = ptrs;
  for (int i = 0; i < a->n; i++) {
    items[i].kind = SHLO_ATTR_INT;
    items[i].i = a->ints[i];
    ptrs[i] = &items[i];
  }
  return arr;
}

static inline int cmp_named(const void *a, const void *b) {
  return strcmp(((const shlo_named_attr *)a)->name,
                ((const shlo_named_attr *)b)->name);
}

/* Sort fields by name; inside #stablehlo.gather/scatter/dot<...>, lists
 * spelled as dense arrays become plain lists and index_vector_dim = 0 (its
 * default, which texts leave out) is dropped. */
static inline void sort_attr(const shlo_attr *a, canon_scratch *cs) {
  if (!a) return;
  if (a->kind == SHLO_ATTR_STRUCT) {
    bool dims = a->struct_name && (!strcmp(a->struct_name, "gather") ||
                                   !strcmp(a->struct_name, "scatter") ||
                                   !strcmp(a->struct_name, "dot"));
    int k = 0;
    for (int i = 0; i < a->n; i++) {
      shlo_named_attr f = a->fields[i];
      if (dims && !strcmp(f.name, "index_vector_dim") &&
          f.value->kind == SHLO_ATTR_INT && f.value->i == 0)
        continue;
      if (dims) f.value = as_int_array(f.value, cs);
      if (dims && f.value->kind == SHLO_ATTR_ARRAY && !f.value->n)
        continue; /* an empty list: the default */
      a->fields[k++] = f;
    }
    ((shlo_attr *)a)->n = k;
    if (a->n > 1)
      qsort(a->fields, (size_t)a->n, sizeof *a->fields, cmp_named);
    for (int i = 0; i < a->n; i++) sort_attr(a->fields[i].value, cs);
  } else if (a->kind == SHLO_ATTR_ARRAY) {
    for (int i = 0; i < a->n; i++) sort_attr(a->items[i], cs);
  }
}

/* Attributes at their StableHLO default mean the same as no attribute (the
 * deserializer leaves them out; MLIR's printer elides them): drop them on
 * both sides. */
static inline bool zero_field(const shlo_attr *s, const char *name) {
  double x;
  return shlo_attr_get_f64(shlo_attr_field(s, name), &x) && x == 0;
}

static inline bool default_accuracy(const shlo_attr *a) {
  if (a->kind != SHLO_ATTR_STRUCT || !a->struct_name ||
      strcmp(a->struct_name, "result_accuracy"))
    return false;
  const shlo_attr *mode = shlo_attr_field(a, "mode");
  /* the parser keeps #stablehlo.result_accuracy_mode<...> as its text */
  const char *m = mode && mode->kind == SHLO_ATTR_OPAQUE ? mode->str : NULL;
  return zero_field(a, "atol") && zero_field(a, "rtol") &&
         zero_field(a, "ulps") && m && strstr(m, "DEFAULT");
}

/* An attribute list of all-x integers (window strides of 1, ...). */
static inline bool all_ints(const shlo_attr *a, int64_t x) {
  int64_t v[64];
  int n = shlo_attr_i64s(a, v, 64);
  for (int i = 0; i < n; i++)
    if (v[i] != x) return false;
  return n >= 0;
}

static inline bool all_default_precision(const shlo_attr *a) {
  if (a->kind != SHLO_ATTR_ARRAY) return false;
  for (int i = 0; i < a->n; i++)
    if (a->items[i]->kind != SHLO_ATTR_ENUM ||
        strcmp(a->items[i]->str, "DEFAULT"))
      return false;
  return true;
}

/* Attributes at their StableHLO default mean the same as no attribute;
 * booleans at false likewise. */
static inline bool is_default_attr(const shlo_op *op, const char *name,
                                   const shlo_attr *a) {
  if (!strncmp(op->name, "stablehlo.", 10) && a->kind == SHLO_ATTR_BOOL &&
      !a->b)
    return true;
  if (!strcmp(op->name, "stablehlo.custom_call") &&
      !strcmp(name, "api_version") && a->kind == SHLO_ATTR_INT && a->i == 1)
    return true;
  if (!strcmp(name, "result_accuracy") && default_accuracy(a)) return true;
  if (!strcmp(name, "channel_handle") && a->kind == SHLO_ATTR_STRUCT &&
      !strcmp(op->name, "stablehlo.send") + !strcmp(op->name, "stablehlo.recv")
          == 0) {
    int64_t h = -1;
    shlo_attr_get_i64(shlo_attr_field(a, "handle"), &h);
    if (h == 0) return true; /* channel 0: none */
  }
  if (!strcmp(name, "precision_config") && all_default_precision(a))
    return true;
  bool windowed = !strcmp(op->name, "stablehlo.convolution") ||
                  !strcmp(op->name, "stablehlo.dynamic_conv") ||
                  !strcmp(op->name, "stablehlo.reduce_window") ||
                  !strcmp(op->name, "stablehlo.select_and_scatter");
  if (windowed && (!strcmp(name, "padding") ||
                   !strcmp(name, "window_reversal")))
    return all_ints(a, 0);
  if (windowed && (!strcmp(name, "window_strides") ||
                   !strcmp(name, "lhs_dilation") ||
                   !strcmp(name, "rhs_dilation") ||
                   !strcmp(name, "base_dilations") ||
                   !strcmp(name, "window_dilations")))
    return all_ints(a, 1);
  return false;
}

/* Spellings with one meaning, made one: an untyped integer is i64 and an
 * untyped float f64 (as MLIR reads them); call_target_name is a string,
 * which VHLO keeps even when the text spelled it as a symbol; padding is
 * its list of numbers, whether a dense array or a tensor. */
static inline const shlo_attr *normal_attr(const char *name,
                                           const shlo_attr *a,
                                           canon_scratch *cs) {
  static const shlo_type i64 = {.kind = SHLO_TYPE_ELEMENT,
                                .elem = SHLO_SI64};
  static const shlo_type f64 = {.kind = SHLO_TYPE_ELEMENT, .elem = SHLO_F64};
  shlo_attr *c = canon_alloc(cs, sizeof *c);
  *c = *a;
  if ((a->kind == SHLO_ATTR_INT || a->kind == SHLO_ATTR_FLOAT) && !a->type) {
    c->type = a->kind == SHLO_ATTR_INT ? &i64 : &f64;
    return c;
  }
  if (!strcmp(name, "call_target_name") && a->kind == SHLO_ATTR_SYMBOL) {
    c->kind = SHLO_ATTR_STRING;
    return c;
  }
  int64_t xs[4 * SHLO_MAX_RANK];
  int n = shlo_attr_i64s(a, xs, 4 * SHLO_MAX_RANK);
  if (!strcmp(name, "padding") && n >= 0) {
    int64_t *ints = canon_alloc(cs, sizeof *ints * (size_t)n);
    memcpy(ints, xs, sizeof *ints * (size_t)n);
    *c = (shlo_attr){.kind = SHLO_ATTR_DENSE_ARRAY, .elem = SHLO_SI64,
                     .n = n, .ints = ints};
    return c;
  }
  return a;
}

static inline void drop_defaults(shlo_op *op, canon_scratch *cs) {
  int k = 0;
  for (int i = 0; i < op->n_attrs; i++) {
    const shlo_attr *a = op->attrs[i].value;
    if (is_default_attr(op, op->attrs[i].name, a)) continue;
    op->attrs[k] = op->attrs[i];
    op->attrs[k].value = normal_attr(op->attrs[i].name, a, cs);
    k++;
  }
  op->n_attrs = k;
}

static inline void sort_block(const shlo_block *b, canon_scratch *cs) {
  for (int i = 0; i < b->n_ops; i++) {
    shlo_op *op = b->ops[i];
    drop_defaults(op, cs);
    if (op->n_attrs > 1) /* qsort of NULL, 0 is undefined */
      qsort(op->attrs, (size_t)op->n_attrs, sizeof *op->attrs, cmp_named);
    for (int k = 0; k < op->n_attrs; k++) sort_attr(op->attrs[k].value, cs);
    for (int r = 0; r < op->n_regions; r++) sort_block(op->regions[r], cs);
  }
}

/* The canonical printed form of m (malloc'd; NULL when out of memory).
 * Sorts and trims m's attributes in place. */
static inline char *canonical_module(shlo_module *m) {
  canon_scratch cs = {0};
  sort_attr(shlo_module_attrs(m), &cs);
  for (int i = 0; i < shlo_module_num_funcs(m); i++) {
    shlo_func *f = shlo_module_func(m, i);
    sort_attr(f->attrs, &cs);
    for (int k = 0; k < f->n_args; k++)
      if (f->arg_attrs) sort_attr(f->arg_attrs[k], &cs);
    if (f->body) sort_block(f->body, &cs);
  }
  char *text = shlo_module_print(m);
  for (int i = 0; i < cs.n; i++) free(cs.blocks[i]);
  free(cs.blocks);
  return text;
}

/* The canonical printed form of a module (NULL if it does not parse). */
static inline char *canonical(const char *bytes, size_t len, const char *name,
                       char *err, size_t cap) {
  shlo_module *m = NULL;
  shlo_diag d;
  shlo_diag_clear(&d);
  if (shlo_parse_module(bytes, len, name, &m, &d)) {
    shlo_diag_format(&d, err, cap);
    return NULL;
  }
  char *text = canonical_module(m);
  shlo_module_free(m);
  return text;
}

#endif
