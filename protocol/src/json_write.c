/* SPDX-License-Identifier: Apache-2.0 */
/* The JSON writer (see json_write.h). */
#include "core/value.h"
#include "json_write.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "core/elemfmt.h"
#include "shlo/protocol.h"

#define HUGE_PAGE ((uintptr_t)2 << 20)

void shlo__advise_huge(void *p, size_t n) {
#ifdef MADV_HUGEPAGE
  if (n < 2 * HUGE_PAGE) return;
  uintptr_t a = ((uintptr_t)p + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
  uintptr_t e = ((uintptr_t)p + n) & ~(HUGE_PAGE - 1);
  if (e > a) (void)madvise((void *)a, e - a, MADV_HUGEPAGE); /* a hint */
#else
  (void)p, (void)n;
#endif
}

/* Room for n more bytes of a tensor's text, on huge pages when large: a
 * 89 MB answer filled 4 KB page by page took ~0.5 s of page faults on a
 * virtual machine, against ~25 ms on 2 MB pages. */
static bool reserve_big(strbuf *b, size_t n) {
  if (!shlo__sb_reserve(b, n)) return false;
  shlo__advise_huge(b->data + b->len, b->cap - b->len);
  return true;
}

void shlo__json_num(strbuf *b, double d) {
  if (isnan(d) || isinf(d)) {
    shlo__sb_puts(b, "null");
    return;
  }
  if (d == 0 && signbit(d)) {
    shlo__sb_puts(b, "-0");
    return;
  }
  /* Integers and short decimals: the same text without printf. */
  if (d >= -2147483648.0 && d <= 2147483647.0 && d == (double)(int)d) {
    shlo__sb_put_i64(b, (int)d);
    return;
  }
  char tmp[40];
  size_t n = shlo__fmt_fixed_decimal(d, 15, tmp);
  if (n) {
    shlo__sb_add(b, tmp, n);
    return;
  }
  snprintf(tmp, sizeof tmp, "%1.15g", d);
  double back = strtod(tmp, NULL);
  double mag = fabs(back) > fabs(d) ? fabs(back) : fabs(d);
  if (!(fabs(back - d) <= mag * DBL_EPSILON))
    snprintf(tmp, sizeof tmp, "%1.17g", d);
  shlo__sb_puts(b, tmp);
}

void shlo__json_str(strbuf *b, const char *s) {
  shlo__sb_putc(b, '"');
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    const char *esc = NULL;
    switch (*p) {
    case '"': esc = "\\\""; break;
    case '\\': esc = "\\\\"; break;
    case '\b': esc = "\\b"; break;
    case '\f': esc = "\\f"; break;
    case '\n': esc = "\\n"; break;
    case '\r': esc = "\\r"; break;
    case '\t': esc = "\\t"; break;
    }
    if (esc) shlo__sb_puts(b, esc);
    else if (*p < 32) shlo__sb_printf(b, "\\u%04x", *p);
    else shlo__sb_putc(b, (char)*p);
  }
  shlo__sb_putc(b, '"');
}

void shlo__json_key(strbuf *b, const char *key, bool first) {
  if (!first) shlo__sb_putc(b, ',');
  shlo__json_str(b, key);
  shlo__sb_putc(b, ':');
}

/* "data": the elements as a flat JSON array. */
static void put_data(strbuf *b, const shlo_value *v) {
  /* A guess at the text's size (most elements print in under 8 bytes
   * with their comma); the builder grows past it if need be. */
  if (v->numel > 4096 && (uint64_t)v->numel < SIZE_MAX / 16)
    reserve_big(b, (size_t)v->numel * 8);
  shlo__sb_putc(b, '[');
  for (int64_t i = 0; i < v->numel; i++) {
    if (i) shlo__sb_putc(b, ',');
    shlo__sb_put_elem(b, v, i, SHLO_ELEMFMT_JSON);
  }
  shlo__sb_putc(b, ']');
}

/* Room for one more hole; false when out of memory. */
static bool hole_add(shlo__b64_holes *h, size_t at, const shlo_value *v) {
  if (h->n == h->cap) {
    int cap = h->cap ? 2 * h->cap : 4;
    shlo__b64_hole *a = realloc(h->at, (size_t)cap * sizeof *a);
    if (!a) return false;
    h->at = a;
    h->cap = cap;
  }
  h->at[h->n].at = at;
  h->at[h->n++].v = (shlo_value *)v; /* the caller's output, not changed */
  return true;
}

/* The tensor's "b64" member: its base64, or a hole for it. */
static void put_b64(strbuf *b, const shlo_value *v, shlo__b64_holes *h) {
  shlo__sb_puts(b, "\"b64\":\"");
  if (h && v->nbytes >= h->min_bytes && !h->failed) {
    if (!hole_add(h, b->len, v)) h->failed = true;
  } else {
    /* Straight into the buffer: base64 needs no JSON escapes. */
    size_t n = (v->nbytes + 2) / 3 * 4;
    if (!reserve_big(b, n + 1)) return;
    b->len += shlo__b64_encode_to(v->data, v->nbytes, b->data + b->len);
  }
  shlo__sb_add(b, "\"", 1);
}

static void put_tensor(strbuf *b, const shlo_value *v, bool b64,
                       shlo__b64_holes *h) {
  if (v->kind == SHLO_TYPE_TOKEN) {
    shlo__sb_puts(b, "{\"token\":true}");
    return;
  }
  if (v->kind == SHLO_TYPE_TUPLE) {
    shlo__sb_puts(b, "{\"tuple\":[");
    for (int i = 0; i < v->n_elems; i++) {
      if (i) shlo__sb_putc(b, ',');
      put_tensor(b, v->elems[i], b64, h);
    }
    shlo__sb_puts(b, "]}");
    return;
  }
  shlo__sb_puts(b, "{\"dtype\":");
  shlo__json_str(b, shlo_elem_name(v->elem));
  shlo__sb_puts(b, ",\"shape\":[");
  for (int i = 0; i < v->rank; i++) {
    if (i) shlo__sb_putc(b, ',');
    shlo__json_num(b, (double)v->dims[i]);
  }
  shlo__sb_puts(b, "],");
  if (b64) {
    put_b64(b, v, h);
  } else {
    shlo__sb_puts(b, "\"data\":");
    put_data(b, v);
  }
  shlo__sb_putc(b, '}');
}

void shlo__json_tensor(strbuf *b, const shlo_value *v, bool b64) {
  put_tensor(b, v, b64, NULL);
}

void shlo__json_tensor_holes(strbuf *b, const shlo_value *v,
                             shlo__b64_holes *h) {
  put_tensor(b, v, true, h);
}

/* The longest text of one element of type t in "data", with its comma:
 * "false", "-128", "-2.2250738585072014e-308", "\"-Infinity\"", and a
 * complex number's pair "[re,im]". */
static uint64_t elem_text_max(shlo_elem_type t) {
  int bits = shlo_elem_bits(t);
  switch (shlo_elem_class_of(t)) {
  case SHLO_CLASS_BOOL: return 6;
  case SHLO_CLASS_SINT:
  case SHLO_CLASS_UINT:
    return bits <= 8 ? 5 : bits <= 16 ? 7 : bits <= 32 ? 12 : 21;
  case SHLO_CLASS_FLOAT: return bits <= 32 ? 16 : 26;
  case SHLO_CLASS_COMPLEX: return bits <= 64 ? 35 : 55;
  }
  return 26;
}

uint64_t shlo_proto_value_json_max(const shlo_value *v, bool b64) {
  uint64_t n = 64; /* braces, member names, dtype */
  if (v->kind == SHLO_TYPE_TOKEN) return n;
  if (v->kind == SHLO_TYPE_TUPLE) {
    for (int i = 0; i < v->n_elems; i++)
      n += shlo_proto_value_json_max(v->elems[i], b64) + 1;
    return n;
  }
  n += 21 * (uint64_t)v->rank;
  if (b64) return n + ((uint64_t)v->nbytes + 2) / 3 * 4;
  return n + (uint64_t)v->numel * elem_text_max(v->elem);
}
