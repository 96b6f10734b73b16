/* SPDX-License-Identifier: Apache-2.0 */
/* Encoding grid values for the trip between MPI ranks (grid_wire.h).
 *
 *   value  := kind:i64 body
 *   tensor := elem rank dims[rank] quant? nbytes bytes
 *   quant  := has:i64 [storage expressed min max axis per_axis n signed
 *             scales[n]:f64 zero_points[n]:i64]
 *   tuple  := n value[n]
 * Every field is an int64 (doubles by their bits), lengths in bytes. */
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/value.h"
#include "runtime/grid_wire.h"

void shlo__wire_i64(strbuf *b, int64_t x) {
  shlo__sb_add(b, (const char *)&x, sizeof x);
}

void shlo__wire_str(strbuf *b, const char *s) {
  size_t n = strlen(s);
  shlo__wire_i64(b, (int64_t)n);
  shlo__sb_add(b, s, n + 1);
}

static void wire_quant(strbuf *b, const shlo_quant *q) {
  shlo__wire_i64(b, q != NULL);
  if (!q) return;
  int64_t f[] = {q->storage,  q->expressed, q->storage_min,   q->storage_max,
                 q->axis,     q->per_axis,  q->n,             q->signed_storage};
  for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) shlo__wire_i64(b, f[i]);
  shlo__sb_add(b, (const char *)q->scales, (size_t)q->n * sizeof(double));
  shlo__sb_add(b, (const char *)q->zero_points, (size_t)q->n * sizeof(int64_t));
}

bool shlo__wire_value(strbuf *b, const shlo_value *v) {
  shlo__wire_i64(b, v->kind);
  switch (v->kind) {
  case SHLO_TYPE_TENSOR:
    shlo__wire_i64(b, v->elem);
    shlo__wire_i64(b, v->rank);
    for (int i = 0; i < v->rank; i++) shlo__wire_i64(b, v->dims[i]);
    wire_quant(b, v->quant);
    shlo__wire_i64(b, (int64_t)v->nbytes);
    shlo__sb_add(b, v->data, v->nbytes);
    return true;
  case SHLO_TYPE_TOKEN:
    return true;
  case SHLO_TYPE_TUPLE:
    shlo__wire_i64(b, v->n_elems);
    for (int i = 0; i < v->n_elems; i++)
      if (!shlo__wire_value(b, v->elems[i])) return false;
    return true;
  default:
    return false;
  }
}

static const char *take(wire_reader *r, size_t n) {
  if (r->bad || (size_t)(r->end - r->p) < n) {
    r->bad = true;
    return NULL;
  }
  const char *at = r->p;
  r->p += n;
  return at;
}

int64_t shlo__wire_read_i64(wire_reader *r) {
  int64_t x = 0;
  const char *at = take(r, sizeof x);
  if (at) memcpy(&x, at, sizeof x);
  return x;
}

const char *shlo__wire_read_str(wire_reader *r) {
  int64_t n = shlo__wire_read_i64(r);
  if (n < 0 || n > r->end - r->p - 1) {
    r->bad = true;
    return "";
  }
  const char *s = take(r, (size_t)n + 1);
  if (!s || s[n]) {
    r->bad = true;
    return "";
  }
  return s;
}

/* Read quantization parameters (if any) onto v. */
static void read_quant(wire_reader *r, shlo_value *v) {
  if (!shlo__wire_read_i64(r)) return;
  int64_t f[8];
  for (int i = 0; i < 8; i++) f[i] = shlo__wire_read_i64(r);
  if (r->bad || f[6] < 0 || f[6] > (r->end - r->p) / 16) {
    r->bad = true;
    return;
  }
  shlo_quant q = {.storage = (shlo_elem_type)f[0],
                  .expressed = (shlo_elem_type)f[1],
                  .storage_min = f[2], .storage_max = f[3], .axis = (int)f[4],
                  .per_axis = f[5] != 0, .n = (int)f[6],
                  .signed_storage = f[7] != 0};
  size_t n = (size_t)q.n;
  const char *s = take(r, n * sizeof(double));
  const char *z = take(r, n * sizeof(int64_t));
  if (!s || !z) return;
  double *scales = shlo__malloc(n * sizeof *scales + 1);
  int64_t *zps = shlo__malloc(n * sizeof *zps + 1);
  if (scales && zps) {
    memcpy(scales, s, n * sizeof *scales);
    memcpy(zps, z, n * sizeof *zps);
    q.scales = scales;
    q.zero_points = zps;
    if (shlo_tensor_set_quant(v, &q)) r->bad = true;
  } else {
    r->bad = true;
  }
  shlo__free(scales);
  shlo__free(zps);
}

static shlo_value *read_tensor(wire_reader *r) {
  int64_t elem = shlo__wire_read_i64(r), rank = shlo__wire_read_i64(r);
  int64_t dims[SHLO_MAX_RANK] = {0};
  if (r->bad || elem < 0 || elem >= SHLO_ELEM_COUNT || rank < 0 ||
      rank > SHLO_MAX_RANK) {
    r->bad = true;
    return NULL;
  }
  /* The data must be in the message: bound the size before allocating. */
  int64_t room = (r->end - r->p) /
                 (int64_t)shlo_elem_size((shlo_elem_type)elem);
  for (int i = 0; i < rank; i++) {
    dims[i] = shlo__wire_read_i64(r);
    if (dims[i] < 0 || (dims[i] && room / dims[i] < 1)) r->bad = true;
    else if (dims[i]) room /= dims[i];
  }
  if (r->bad) return NULL;
  shlo_value *v = shlo_tensor_new((shlo_elem_type)elem, (int)rank, dims);
  if (!v) {
    r->bad = true;
    return NULL;
  }
  read_quant(r, v);
  int64_t nbytes = shlo__wire_read_i64(r);
  const char *data = nbytes == (int64_t)v->nbytes ? take(r, v->nbytes) : NULL;
  if (!data) {
    r->bad = true;
    shlo_value_unref(v);
    return NULL;
  }
  memcpy(v->data, data, v->nbytes);
  return v;
}

shlo_value *shlo__wire_read_value(wire_reader *r) {
  int64_t kind = shlo__wire_read_i64(r);
  if (r->bad) return NULL;
  if (kind == SHLO_TYPE_TENSOR) return read_tensor(r);
  if (kind == SHLO_TYPE_TOKEN) {
    shlo_value *t = shlo_token_new();
    if (!t) r->bad = true;
    return t;
  }
  if (kind != SHLO_TYPE_TUPLE) {
    r->bad = true;
    return NULL;
  }
  int64_t n = shlo__wire_read_i64(r);
  /* each element takes at least one field: a bound before allocating */
  if (r->bad || n < 0 || n > (r->end - r->p) / 8) {
    r->bad = true;
    return NULL;
  }
  shlo_value **elems = shlo__calloc((size_t)n + 1, sizeof *elems);
  if (!elems) {
    r->bad = true;
    return NULL;
  }
  for (int64_t i = 0; i < n && !r->bad; i++)
    elems[i] = shlo__wire_read_value(r);
  shlo_value *t = NULL;
  if (r->bad) {
    for (int64_t i = 0; i < n; i++) shlo_value_unref(elems[i]);
  } else if (!(t = shlo_tuple_new((int)n, elems))) {
    r->bad = true; /* shlo_tuple_new dropped the elements */
  }
  shlo__free(elems);
  return t;
}
