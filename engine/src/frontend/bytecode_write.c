/* SPDX-License-Identifier: Apache-2.0 */
/* The MLIR bytecode container writer (bytecode_write.h).
 *
 * Everything that the file refers to by index (strings, dialects, op
 * names, attributes, types, properties) goes through one interning table
 * kind, so equal entries share an index as MLIR's writer has them; the
 * sections are then laid out from the tables. */
#include "frontend/bytecode_write.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "core/alloc.h"

enum {
  SEC_STRING = 0, SEC_DIALECT = 1, SEC_ATTR_TYPE = 2,
  SEC_ATTR_TYPE_OFFSET = 3, SEC_IR = 4, SEC_RESOURCE = 5,
  SEC_RESOURCE_OFFSET = 6, SEC_PROPERTIES = 8
};

noreturn void shlo__bw_fail(bw *w, shlo_status code, const char *fmt, ...) {
  char msg[SHLO_DIAG_MAX - 64];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  shlo_diag_set(w->diag, code, NULL, 0, 0, "%s", msg);
  longjmp(w->on_error, 1);
}

static void *grow(bw *w, void *p, size_t size) {
  void *q = shlo__realloc(p, size ? size : 1);
  if (!q) shlo__bw_fail(w, SHLO_ENOMEM, "out of memory writing the artifact");
  return q;
}

/* Scratch memory lives until shlo__bw_free, so an error that unwinds past a
 * buffer on some caller's stack leaks nothing. */
void *shlo__bw_alloc(bw *w, size_t n) {
  if (w->n_allocs == w->cap_allocs) {
    int cap = w->cap_allocs ? w->cap_allocs * 2 : 64;
    w->allocs = grow(w, w->allocs, sizeof *w->allocs * (size_t)cap);
    w->cap_allocs = cap;
  }
  void *p = shlo__malloc(n ? n : 1);
  if (!p) shlo__bw_fail(w, SHLO_ENOMEM, "out of memory writing the artifact");
  w->allocs[w->n_allocs++] = p;
  return p;
}

void shlo__bw_bytes(bw *w, bw_buf *b, const void *p, size_t n) {
  if (n > SIZE_MAX / 4 - b->n)
    shlo__bw_fail(w, SHLO_EUNSUPPORTED, "artifact too large");
  if (b->n + n > b->cap) {
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->n + n) cap *= 2;
    uint8_t *q = shlo__bw_alloc(w, cap);
    if (b->n) memcpy(q, b->p, b->n);
    b->p = q;
    b->cap = cap;
  }
  if (n) memcpy(b->p + b->n, p, n);
  b->n += n;
}

void shlo__bw_byte(bw *w, bw_buf *b, uint8_t x) { shlo__bw_bytes(w, b, &x, 1); }

/* Prefix varint: n bytes hold 7n bits, the count of bytes after the first
 * in the trailing zero bits of the first; past 56 bits a zero byte and the
 * full 8-byte value. */
void shlo__bw_varint(bw *w, bw_buf *b, uint64_t v) {
  uint8_t out[9];
  for (int n = 1; n <= 8; n++) {
    if (n < 8 ? v >= (uint64_t)1 << (7 * n) : v >= (uint64_t)1 << 56)
      continue;
    uint64_t e = (v << n) | ((uint64_t)1 << (n - 1));
    for (int i = 0; i < n; i++) out[i] = (uint8_t)(e >> (8 * i));
    shlo__bw_bytes(w, b, out, (size_t)n);
    return;
  }
  out[0] = 0;
  for (int i = 0; i < 8; i++) out[1 + i] = (uint8_t)(v >> (8 * i));
  shlo__bw_bytes(w, b, out, 9);
}

void shlo__bw_svarint(bw *w, bw_buf *b, int64_t v) {
  shlo__bw_varint(w, b, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

void shlo__bw_buf_free(bw_buf *b) { *b = (bw_buf){0}; } /* shlo__bw_free frees */

/* ---- interning ---- */

static uint64_t hash_of(int dialect, const uint8_t *p, size_t n) {
  uint64_t h = 1469598103934665603ull ^ (uint64_t)dialect;
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

static bool same(const bw_table *t, int i, int dialect, const uint8_t *p,
                 size_t n) {
  return t->dialect[i] == dialect && t->len[i] == n &&
         (!n || !memcmp(t->data.p + t->off[i], p, n));
}

static void rehash(bw *w, bw_table *t) {
  int n_slots = t->n_slots ? t->n_slots * 2 : 64;
  shlo__free(t->slots);
  t->slots = grow(w, NULL, sizeof *t->slots * (size_t)n_slots);
  memset(t->slots, 0, sizeof *t->slots * (size_t)n_slots);
  t->n_slots = n_slots;
  for (int i = 0; i < t->n; i++) {
    uint64_t h = hash_of(t->dialect[i], t->data.p + t->off[i], t->len[i]);
    int s = (int)(h & (uint64_t)(n_slots - 1));
    while (t->slots[s]) s = (s + 1) & (n_slots - 1);
    t->slots[s] = i + 1;
  }
}

static int intern(bw *w, bw_table *t, int dialect, const uint8_t *p,
                  size_t n) {
  if (2 * (t->n + 1) > t->n_slots) rehash(w, t);
  uint64_t h = hash_of(dialect, p, n);
  int s = (int)(h & (uint64_t)(t->n_slots - 1));
  for (; t->slots[s]; s = (s + 1) & (t->n_slots - 1))
    if (same(t, t->slots[s] - 1, dialect, p, n)) return t->slots[s] - 1;
  if (t->n == t->cap) {
    t->cap = t->cap ? t->cap * 2 : 32;
    t->off = grow(w, t->off, sizeof *t->off * (size_t)t->cap);
    t->len = grow(w, t->len, sizeof *t->len * (size_t)t->cap);
    t->dialect = grow(w, t->dialect, sizeof *t->dialect * (size_t)t->cap);
  }
  t->off[t->n] = t->data.n;
  t->len[t->n] = n;
  t->dialect[t->n] = dialect;
  shlo__bw_bytes(w, &t->data, p, n);
  t->slots[s] = t->n + 1;
  return t->n++;
}

static void table_free(bw_table *t) {
  shlo__bw_buf_free(&t->data);
  shlo__free(t->off);
  shlo__free(t->len);
  shlo__free(t->dialect);
  shlo__free(t->slots);
  *t = (bw_table){0};
}

void shlo__bw_begin(bw *w, shlo_diag *diag) {
  memset(w, 0, sizeof *w);
  w->diag = diag;
}

void shlo__bw_free(bw *w) {
  table_free(&w->strings);
  table_free(&w->dialects);
  table_free(&w->opnames);
  table_free(&w->attrs);
  table_free(&w->types);
  table_free(&w->props);
  shlo__free(w->opname_dialect);
  shlo__free(w->opname_registered);
  shlo__bw_buf_free(&w->ir);
  for (int i = 0; i < w->n_allocs; i++) shlo__free(w->allocs[i]);
  shlo__free(w->allocs);
  w->allocs = NULL;
  w->n_allocs = w->cap_allocs = 0;
}

int shlo__bw_string(bw *w, const char *s, size_t n) {
  return intern(w, &w->strings, 0, (const uint8_t *)s, n);
}

int shlo__bw_dialect(bw *w, const char *name) {
  int s = shlo__bw_string(w, name, strlen(name));
  return intern(w, &w->dialects, 0, (const uint8_t *)&s, sizeof s);
}

int shlo__bw_opname(bw *w, const char *dialect, const char *name, bool registered) {
  int d = shlo__bw_dialect(w, dialect);
  int s = shlo__bw_string(w, name, strlen(name));
  int before = w->opnames.n;
  int i = intern(w, &w->opnames, d, (const uint8_t *)&s, sizeof s);
  if (w->opnames.n != before) {
    w->opname_dialect = grow(w, w->opname_dialect,
                             sizeof(int) * (size_t)w->opnames.cap);
    w->opname_registered = grow(w, w->opname_registered,
                                sizeof(bool) * (size_t)w->opnames.cap);
    w->opname_dialect[i] = d;
    w->opname_registered[i] = registered;
  }
  return i;
}

static int entry(bw *w, bw_table *t, const char *dialect, bw_buf *b) {
  int d = shlo__bw_dialect(w, dialect);
  int i = intern(w, t, d, b->p, b->n);
  b->n = 0;
  return i;
}

int shlo__bw_attr(bw *w, const char *dialect, bw_buf *b) {
  return entry(w, &w->attrs, dialect, b);
}

int shlo__bw_attr_text(bw *w, const char *dialect, const char *text) {
  int d = shlo__bw_dialect(w, dialect);
  return intern(w, &w->attrs, d | BW_TEXT, (const uint8_t *)text,
                strlen(text) + 1);
}

int shlo__bw_type(bw *w, const char *dialect, bw_buf *b) {
  return entry(w, &w->types, dialect, b);
}

int shlo__bw_props(bw *w, bw_buf *b) {
  int i = intern(w, &w->props, 0, b->p, b->n);
  b->n = 0;
  return i;
}

/* ---- sections ---- */

static int stored_int(const bw_table *t, int i) {
  int v;
  memcpy(&v, t->data.p + t->off[i], sizeof v);
  return v;
}

static void section(bw *w, bw_buf *out, int id, const bw_buf *body) {
  shlo__bw_byte(w, out, (uint8_t)id);
  shlo__bw_varint(w, out, body->n);
  shlo__bw_bytes(w, out, body->p, body->n);
}

static void dialect_section(bw *w, bw_buf *b) {
  shlo__bw_varint(w, b, (uint64_t)w->dialects.n);
  for (int i = 0; i < w->dialects.n; i++) /* name, no version */
    shlo__bw_varint(w, b, (uint64_t)stored_int(&w->dialects, i) << 1);
  shlo__bw_varint(w, b, (uint64_t)w->opnames.n);
  /* op names grouped by dialect, in runs of their numbering */
  for (int i = 0; i < w->opnames.n;) {
    int d = w->opname_dialect[i], k = i;
    while (k < w->opnames.n && w->opname_dialect[k] == d) k++;
    shlo__bw_varint(w, b, (uint64_t)d);
    shlo__bw_varint(w, b, (uint64_t)(k - i));
    for (; i < k; i++)
      shlo__bw_varint(w, b, (uint64_t)stored_int(&w->opnames, i) << 1 |
                          (w->opname_registered[i] ? 1 : 0));
  }
}

/* Entries in runs of one dialect: {dialect, count, (size << 1 | custom)}. */
static void offset_groups(bw *w, bw_buf *b, const bw_table *t) {
  for (int i = 0; i < t->n;) {
    int d = t->dialect[i], k = i;
    while (k < t->n && t->dialect[k] == d) k++;
    shlo__bw_varint(w, b, (uint64_t)(d & ~BW_TEXT));
    shlo__bw_varint(w, b, (uint64_t)(k - i));
    for (; i < k; i++)
      shlo__bw_varint(w, b, (uint64_t)t->len[i] << 1 | (d & BW_TEXT ? 0 : 1));
  }
}

static void string_section(bw *w, bw_buf *b) {
  const bw_table *t = &w->strings;
  shlo__bw_varint(w, b, (uint64_t)t->n);
  for (int i = t->n - 1; i >= 0; i--) shlo__bw_varint(w, b, t->len[i] + 1);
  for (int i = 0; i < t->n; i++) {
    shlo__bw_bytes(w, b, t->data.p + t->off[i], t->len[i]);
    shlo__bw_byte(w, b, 0);
  }
}

static void props_section(bw *w, bw_buf *b) {
  const bw_table *t = &w->props;
  shlo__bw_varint(w, b, (uint64_t)t->n);
  for (int i = 0; i < t->n; i++) {
    shlo__bw_varint(w, b, t->len[i]);
    shlo__bw_bytes(w, b, t->data.p + t->off[i], t->len[i]);
  }
}

void shlo__bw_finish(bw *w, const char *producer, uint8_t **out, size_t *len) {
  bw_buf f = {0}, s = {0};
  shlo__bw_bytes(w, &f, "ML\xefR", 4);
  shlo__bw_varint(w, &f, BW_FORMAT_VERSION);
  shlo__bw_bytes(w, &f, producer, strlen(producer) + 1);
  /* strings are complete only once the other sections are built */
  bw_buf dialects = {0};
  dialect_section(w, &dialects);
  section(w, &f, SEC_DIALECT, &dialects);
  shlo__bw_buf_free(&dialects);
  shlo__bw_varint(w, &s, (uint64_t)w->attrs.n);
  shlo__bw_varint(w, &s, (uint64_t)w->types.n);
  offset_groups(w, &s, &w->attrs);
  offset_groups(w, &s, &w->types);
  section(w, &f, SEC_ATTR_TYPE_OFFSET, &s);
  s.n = 0;
  shlo__bw_bytes(w, &s, w->attrs.data.p, w->attrs.data.n);
  shlo__bw_bytes(w, &s, w->types.data.p, w->types.data.n);
  section(w, &f, SEC_ATTR_TYPE, &s);
  section(w, &f, SEC_IR, &w->ir);
  s.n = 0;
  shlo__bw_varint(w, &s, 0); /* no resources */
  section(w, &f, SEC_RESOURCE_OFFSET, &s);
  s.n = 0;
  section(w, &f, SEC_RESOURCE, &s);
  string_section(w, &s);
  section(w, &f, SEC_STRING, &s);
  s.n = 0;
  props_section(w, &s);
  section(w, &f, SEC_PROPERTIES, &s);
  *out = malloc(f.n); /* the caller's, to free() (shlo/artifact.h) */
  if (!*out) shlo__bw_fail(w, SHLO_ENOMEM, "out of memory writing the artifact");
  memcpy(*out, f.p, f.n);
  *len = f.n;
}
