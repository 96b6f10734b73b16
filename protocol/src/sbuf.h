/* A growable byte buffer for building text.  Out of memory is sticky:
 * every later call is a no-op and sbuf_take returns NULL. */
#ifndef SHLO_SBUF_H
#define SHLO_SBUF_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct sbuf {
  char *p;
  size_t n, cap;
  bool oom;
} sbuf;

static inline void sbuf_init(sbuf *b) {
  b->p = NULL;
  b->n = b->cap = 0;
  b->oom = false;
}

static inline bool sbuf_reserve(sbuf *b, size_t more) {
  if (b->oom) return false;
  if (b->n + more + 1 <= b->cap) return true;
  size_t cap = b->cap ? b->cap : 256;
  while (cap < b->n + more + 1) cap *= 2;
  char *p = realloc(b->p, cap);
  if (!p) {
    b->oom = true;
    return false;
  }
  b->p = p;
  b->cap = cap;
  return true;
}

static inline void sbuf_add(sbuf *b, const char *s, size_t n) {
  if (!sbuf_reserve(b, n)) return;
  memcpy(b->p + b->n, s, n);
  b->n += n;
  b->p[b->n] = 0;
}

static inline void sbuf_puts(sbuf *b, const char *s) { sbuf_add(b, s, strlen(s)); }
static inline void sbuf_putc(sbuf *b, char c) { sbuf_add(b, &c, 1); }

static inline void sbuf_printf(sbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static inline void sbuf_printf(sbuf *b, const char *fmt, ...) {
  char tmp[256];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if ((size_t)n < sizeof tmp) {
    sbuf_add(b, tmp, (size_t)n);
    return;
  }
  if (!sbuf_reserve(b, (size_t)n)) return;
  va_start(ap, fmt);
  vsnprintf(b->p + b->n, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->n += (size_t)n;
}

/* The text (caller frees), or NULL after OOM; the buffer is reset. */
static inline char *sbuf_take(sbuf *b) {
  char *p = b->oom ? NULL : b->p;
  if (b->oom) free(b->p);
  if (!b->oom && !p) p = calloc(1, 1);
  sbuf_init(b);
  return p;
}

static inline void sbuf_free(sbuf *b) {
  free(b->p);
  sbuf_init(b);
}

#endif
