/* A growable string for printers.  On allocation failure it stops growing
 * and sb_take returns NULL. */
#ifndef SHLO_STRBUF_H
#define SHLO_STRBUF_H

#include <stdbool.h>
#include <stddef.h>

typedef struct strbuf {
  char *data;
  size_t len, cap;
  bool failed;
} strbuf;

void shlo__sb_printf(strbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The NUL-terminated text (caller frees), or NULL if anything failed. */
char *shlo__sb_take(strbuf *b);

#endif
