/* SPDX-License-Identifier: Apache-2.0 */
/* IR lookups and attribute readers. */
#include <string.h>

#include "core/value.h"
#include "frontend/module.h"
#include "shlo/ir.h"

const shlo_attr *shlo_op_attr(const shlo_op *op, const char *name) {
  for (int i = 0; i < op->n_attrs; i++)
    if (!strcmp(op->attrs[i].name, name)) return op->attrs[i].value;
  return NULL;
}

const shlo_attr *shlo_attr_field(const shlo_attr *a, const char *name) {
  if (!a || a->kind != SHLO_ATTR_STRUCT) return NULL;
  for (int i = 0; i < a->n; i++)
    if (!strcmp(a->fields[i].name, name)) return a->fields[i].value;
  return NULL;
}

bool shlo_attr_get_i64(const shlo_attr *a, int64_t *out) {
  if (!a) return false;
  switch (a->kind) {
  case SHLO_ATTR_INT:
    *out = a->i;
    return true;
  case SHLO_ATTR_BOOL:
    *out = a->b;
    return true;
  case SHLO_ATTR_DENSE:
    if (a->dense->numel != 1 || !shlo_elem_is_int(a->dense->elem)) return false;
    *out = shlo_tensor_get_i64(a->dense, 0);
    return true;
  default:
    return false;
  }
}

bool shlo_attr_get_f64(const shlo_attr *a, double *out) {
  if (!a) return false;
  switch (a->kind) {
  case SHLO_ATTR_FLOAT:
    *out = a->f;
    return true;
  case SHLO_ATTR_INT:
    *out = (double)a->i;
    return true;
  default:
    return false;
  }
}

const char *shlo_attr_get_str(const shlo_attr *a) {
  if (!a) return NULL;
  switch (a->kind) {
  case SHLO_ATTR_ENUM:
  case SHLO_ATTR_STRING:
  case SHLO_ATTR_SYMBOL:
    return a->str;
  default:
    return NULL;
  }
}

int shlo_attr_i64s(const shlo_attr *a, int64_t *out, int cap) {
  if (!a) return -1;
  switch (a->kind) {
  case SHLO_ATTR_DENSE_ARRAY:
    for (int i = 0; i < a->n && i < cap; i++) out[i] = a->ints[i];
    return a->n;
  case SHLO_ATTR_ARRAY: {
    /* Nested lists ([[0, 1], [2, 3]]) flatten in order. */
    int n = 0;
    for (int i = 0; i < a->n; i++) {
      int64_t v;
      if (shlo_attr_get_i64(a->items[i], &v)) {
        if (n < cap) out[n] = v;
        n++;
      } else {
        int k = shlo_attr_i64s(a->items[i], n < cap ? out + n : out,
                               n < cap ? cap - n : 0);
        if (k < 0) return -1;
        n += k;
      }
    }
    return n;
  }
  case SHLO_ATTR_DENSE: {
    const shlo_value *v = a->dense;
    if (!shlo_elem_is_int(v->elem) && v->elem != SHLO_I1) return -1;
    for (int64_t i = 0; i < v->numel && i < cap; i++)
      out[i] = shlo_tensor_get_i64(v, i);
    return (int)v->numel;
  }
  default:
    return -1;
  }
}

/* ---- the module's accessors (shlo/ir.h) ---- */

int shlo_module_num_funcs(const shlo_module *m) { return m->n_funcs; }

shlo_func *shlo_module_func(const shlo_module *m, int i) {
  return i >= 0 && i < m->n_funcs ? m->funcs[i] : NULL;
}

const char *shlo_module_name(const shlo_module *m) { return m->name; }

const char *shlo_module_filename(const shlo_module *m) { return m->filename; }

const shlo_attr *shlo_module_attrs(const shlo_module *m) { return m->attrs; }

const char *shlo_module_producer(const shlo_module *m) { return m->producer; }

const char *shlo_module_stablehlo_version(const shlo_module *m) {
  return m->stablehlo_version;
}
