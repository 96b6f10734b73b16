/* SPDX-License-Identifier: Apache-2.0 */
/* Element type tables and type helpers. */
#include <stdio.h>
#include <string.h>

#include "core/int_range.h"
#include "shlo/types.h"

static const struct {
  const char *name;
  int bits;
  size_t size;
  shlo_elem_class cls;
} elem_info[SHLO_ELEM_COUNT] = {
#define SHLO_ET_INFO(e, s, b, n, c) {s, b, n, SHLO_CLASS_##c},
    SHLO_ELEM_TYPES(SHLO_ET_INFO)
#undef SHLO_ET_INFO
};

static bool elem_valid(shlo_elem_type t) {
  return (unsigned)t < SHLO_ELEM_COUNT;
}

const char *shlo_elem_name(shlo_elem_type t) {
  return elem_valid(t) ? elem_info[t].name : "?";
}
int shlo_elem_bits(shlo_elem_type t) {
  return elem_valid(t) ? elem_info[t].bits : 0;
}
size_t shlo_elem_size(shlo_elem_type t) {
  return elem_valid(t) ? elem_info[t].size : 0;
}
shlo_elem_class shlo_elem_class_of(shlo_elem_type t) {
  return elem_valid(t) ? elem_info[t].cls : SHLO_CLASS_BOOL;
}
bool shlo_elem_is_int(shlo_elem_type t) {
  shlo_elem_class c = shlo_elem_class_of(t);
  return c == SHLO_CLASS_SINT || c == SHLO_CLASS_UINT;
}
bool shlo_elem_is_float(shlo_elem_type t) {
  return shlo_elem_class_of(t) == SHLO_CLASS_FLOAT;
}
bool shlo_elem_is_complex(shlo_elem_type t) {
  return shlo_elem_class_of(t) == SHLO_CLASS_COMPLEX;
}

int shlo_elem_from_name(const char *s, size_t len) {
  /* "si8" is another spelling of "i8". */
  if (len > 2 && s[0] == 's' && s[1] == 'i') {
    s++;
    len--;
  }
  for (int t = 0; t < SHLO_ELEM_COUNT; t++)
    if (strlen(elem_info[t].name) == len &&
        memcmp(elem_info[t].name, s, len) == 0)
      return t;
  return -1;
}

shlo_elem_type shlo_elem_complex_part(shlo_elem_type t) {
  return t == SHLO_C128 ? SHLO_F64 : SHLO_F32;
}

int64_t shlo_type_numel(const shlo_type *t) {
  if (t->kind != SHLO_TYPE_TENSOR || t->rank < 0) return -1;
  int64_t n = 1;
  for (int i = 0; i < t->rank; i++) {
    if (t->dims[i] < 0) return -1;
    if (t->dims[i] && n > INT64_MAX / t->dims[i]) return -1;
    n *= t->dims[i];
  }
  return n;
}

bool shlo_type_is_static(const shlo_type *t) {
  if (t->kind == SHLO_TYPE_TUPLE) {
    for (int i = 0; i < t->n_elems; i++)
      if (!shlo_type_is_static(t->elems[i])) return false;
    return true;
  }
  return t->kind == SHLO_TYPE_TOKEN || t->kind == SHLO_TYPE_ELEMENT ||
         shlo_type_numel(t) >= 0;
}

static bool quant_equal(const shlo_quant *a, const shlo_quant *b) {
  if (!a || !b) return a == b;
  if (a->storage != b->storage || a->expressed != b->expressed ||
      a->storage_min != b->storage_min || a->storage_max != b->storage_max ||
      a->axis != b->axis || a->per_axis != b->per_axis || a->n != b->n)
    return false;
  for (int i = 0; i < a->n; i++)
    if (a->scales[i] != b->scales[i] || a->zero_points[i] != b->zero_points[i])
      return false;
  return true;
}

bool shlo_type_equal(const shlo_type *a, const shlo_type *b) {
  if (a == b) return true;
  if (a->kind != b->kind) return false;
  switch (a->kind) {
  case SHLO_TYPE_TOKEN:
    return true;
  case SHLO_TYPE_ELEMENT:
    return a->elem == b->elem;
  case SHLO_TYPE_OPAQUE:
    return !strcmp(a->encoding, b->encoding);
  case SHLO_TYPE_TUPLE:
    if (a->n_elems != b->n_elems) return false;
    for (int i = 0; i < a->n_elems; i++)
      if (!shlo_type_equal(a->elems[i], b->elems[i])) return false;
    return true;
  case SHLO_TYPE_TENSOR:
    if (a->elem != b->elem || a->rank != b->rank) return false;
    for (int i = 0; i < a->rank; i++)
      if (a->dims[i] != b->dims[i]) return false;
    return quant_equal(a->quant, b->quant);
  }
  return false;
}

/* Appends to buf like snprintf; *pos tracks the length needed so far. */
static void put(char *buf, size_t cap, size_t *pos, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
#include <stdarg.h>
static void put(char *buf, size_t cap, size_t *pos, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(*pos < cap ? buf + *pos : NULL, *pos < cap ? cap - *pos : 0,
                    fmt, ap);
  va_end(ap);
  if (n > 0) *pos += (size_t)n;
}

static void format_quant(const shlo_quant *q, char *buf, size_t cap,
                         size_t *pos) {
  put(buf, cap, pos, "!quant.uniform<%s", shlo_elem_name(q->storage));
  int64_t lo = 0, hi = 0;
  shlo__int_range(q->storage, &lo, &hi);
  if (q->storage_min != lo || q->storage_max != hi)
    put(buf, cap, pos, "<%lld:%lld>", (long long)q->storage_min,
        (long long)q->storage_max);
  put(buf, cap, pos, ":%s", shlo_elem_name(q->expressed));
  if (q->per_axis) put(buf, cap, pos, ":%d", q->axis);
  put(buf, cap, pos, q->per_axis ? ", {" : ", ");
  for (int i = 0; i < q->n; i++)
    put(buf, cap, pos, "%s%.17g:%lld", i ? "," : "", q->scales[i],
        (long long)q->zero_points[i]);
  put(buf, cap, pos, q->per_axis ? "}>" : ">");
}

static void format_type(const shlo_type *t, char *buf, size_t cap,
                        size_t *pos) {
  switch (t->kind) {
  case SHLO_TYPE_TOKEN:
    put(buf, cap, pos, "!stablehlo.token");
    return;
  case SHLO_TYPE_ELEMENT:
    put(buf, cap, pos, "%s", shlo_elem_name(t->elem));
    return;
  case SHLO_TYPE_OPAQUE:
    put(buf, cap, pos, "%s", t->encoding);
    return;
  case SHLO_TYPE_TUPLE:
    put(buf, cap, pos, "tuple<");
    for (int i = 0; i < t->n_elems; i++) {
      if (i) put(buf, cap, pos, ", ");
      format_type(t->elems[i], buf, cap, pos);
    }
    put(buf, cap, pos, ">");
    return;
  case SHLO_TYPE_TENSOR:
    put(buf, cap, pos, "tensor<");
    if (t->rank < 0) put(buf, cap, pos, "*x");
    for (int i = 0; i < t->rank; i++) {
      if (t->dims[i] < 0)
        put(buf, cap, pos, "?x");
      else
        put(buf, cap, pos, "%lldx", (long long)t->dims[i]);
    }
    if (t->quant)
      format_quant(t->quant, buf, cap, pos);
    else
      put(buf, cap, pos, "%s", shlo_elem_name(t->elem));
    if (t->encoding) put(buf, cap, pos, ", %s", t->encoding);
    put(buf, cap, pos, ">");
    return;
  }
}

int shlo_type_format(const shlo_type *t, char *buf, size_t cap) {
  size_t pos = 0;
  if (cap) buf[0] = 0;
  format_type(t, buf, cap, &pos);
  return (int)pos;
}
