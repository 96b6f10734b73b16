/* SPDX-License-Identifier: Apache-2.0 */
/* The one growable string builder of shlo: the engine's printers, the
 * protocol's JSON writer and the server's text bodies all append here.
 * Out of memory is sticky: every later call is a no-op and shlo__sb_take
 * returns NULL, so a writer checks once, at the end.
 *
 * The small appenders are inline because the server's response writer
 * calls them once per element. */
#ifndef SHLO_STRBUF_H
#define SHLO_STRBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

typedef struct strbuf {
  char *data;   /* NUL-terminated once anything was added */
  size_t len, cap;
  bool failed;  /* an allocation failed: the text is incomplete */
} strbuf;

/* Grow (doubling) so that `more` bytes and a NUL fit; false after OOM. */
bool shlo__sb_grow(strbuf *b, size_t more);

static inline bool shlo__sb_reserve(strbuf *b, size_t more) {
  if (b->failed) return false;
  return b->len + more + 1 <= b->cap || shlo__sb_grow(b, more);
}

static inline void shlo__sb_add(strbuf *b, const char *s, size_t n) {
  if (!shlo__sb_reserve(b, n)) return;
  memcpy(b->data + b->len, s, n);
  b->len += n;
  b->data[b->len] = 0;
}

static inline void shlo__sb_puts(strbuf *b, const char *s) {
  shlo__sb_add(b, s, strlen(s));
}

static inline void shlo__sb_putc(strbuf *b, char c) { shlo__sb_add(b, &c, 1); }

void shlo__sb_printf(strbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The NUL-terminated text (caller frees; "" when nothing was added), or
 * NULL if anything failed.  The buffer is left empty for reuse. */
char *shlo__sb_take(strbuf *b);
/* Drop the text (for error paths that do not take it). */
void shlo__sb_free(strbuf *b);

#endif
