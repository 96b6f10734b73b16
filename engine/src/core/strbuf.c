/* SPDX-License-Identifier: Apache-2.0 */
/* The string builder (see strbuf.h). */
#include "core/strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

bool shlo__sb_grow(strbuf *b, size_t more) {
  if (b->failed) return false;
  size_t cap = b->cap ? b->cap : 256;
  while (cap < b->len + more + 1) cap *= 2;
  char *d = realloc(b->data, cap);
  if (!d) {
    b->failed = true;
    return false;
  }
  b->data = d;
  b->cap = cap;
  return true;
}

void shlo__sb_printf(strbuf *b, const char *fmt, ...) {
  if (b->failed) return;
  /* Format straight into the spare room; when it does not fit, grow to
   * the length vsnprintf reported and format again. */
  for (int pass = 0; pass < 2; pass++) {
    va_list ap;
    va_start(ap, fmt);
    size_t room = b->cap - b->len;
    int n = vsnprintf(b->data ? b->data + b->len : NULL, b->data ? room : 0,
                      fmt, ap);
    va_end(ap);
    if (n < 0) {
      b->failed = true;
      return;
    }
    if (b->data && (size_t)n < room) {
      b->len += (size_t)n;
      return;
    }
    if (!shlo__sb_grow(b, (size_t)n)) return;
  }
}

char *shlo__sb_take(strbuf *b) {
  char *p = b->failed ? NULL : b->data;
  if (b->failed) free(b->data);
  else if (!p) p = calloc(1, 1);
  *b = (strbuf){0};
  return p;
}

void shlo__sb_free(strbuf *b) {
  free(b->data);
  *b = (strbuf){0};
}
