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

static inline int cmp_named(const void *a, const void *b) {
  return strcmp(((const shlo_named_attr *)a)->name,
                ((const shlo_named_attr *)b)->name);
}

static inline void sort_attr(const shlo_attr *a) {
  if (!a) return;
  if (a->kind == SHLO_ATTR_STRUCT) {
    if (a->n > 1)
      qsort(a->fields, (size_t)a->n, sizeof *a->fields, cmp_named);
    for (int i = 0; i < a->n; i++) sort_attr(a->fields[i].value);
  } else if (a->kind == SHLO_ATTR_ARRAY) {
    for (int i = 0; i < a->n; i++) sort_attr(a->items[i]);
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

static inline void drop_defaults(shlo_op *op) {
  int k = 0;
  for (int i = 0; i < op->n_attrs; i++) {
    const shlo_attr *a = op->attrs[i].value;
    bool dflt = !strcmp(op->name, "stablehlo.custom_call") &&
                !strcmp(op->attrs[i].name, "api_version") &&
                a->kind == SHLO_ATTR_INT && a->i == 1;
    dflt = dflt || (!strcmp(op->attrs[i].name, "result_accuracy") &&
                    default_accuracy(a));
    if (!dflt) op->attrs[k++] = op->attrs[i];
  }
  op->n_attrs = k;
}

static inline void sort_block(const shlo_block *b) {
  for (int i = 0; i < b->n_ops; i++) {
    shlo_op *op = b->ops[i];
    drop_defaults(op);
    if (op->n_attrs > 1) /* qsort of NULL, 0 is undefined */
      qsort(op->attrs, (size_t)op->n_attrs, sizeof *op->attrs, cmp_named);
    for (int k = 0; k < op->n_attrs; k++) sort_attr(op->attrs[k].value);
    for (int r = 0; r < op->n_regions; r++) sort_block(op->regions[r]);
  }
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
  sort_attr(m->attrs);
  for (int i = 0; i < m->n_funcs; i++) {
    shlo_func *f = m->funcs[i];
    sort_attr(f->attrs);
    for (int k = 0; k < f->n_args; k++)
      if (f->arg_attrs) sort_attr(f->arg_attrs[k]);
    if (f->body) sort_block(f->body);
  }
  char *text = shlo_module_print(m);
  shlo_module_free(m);
  return text;
}

#endif
