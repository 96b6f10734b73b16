/* SPDX-License-Identifier: Apache-2.0 */
/* interpreter.print into memory (capture.h), through fopencookie. */
#define _GNU_SOURCE
#include "capture.h"

#include <stdlib.h>
#include <string.h>

/* Never fails: the engine's print must not fail an execution because the
 * client's copy is full; what does not fit is dropped and marked. */
static ssize_t capture_write(void *cookie, const char *p, size_t n) {
  srv_capture *c = cookie;
  size_t k = c->len + n > c->max ? c->max - c->len : n;
  if (k < n) c->truncated = true;
  if (!k) return (ssize_t)n;
  char *t = realloc(c->text, c->len + k + 1);
  if (!t) {
    c->truncated = true;
    return (ssize_t)n;
  }
  memcpy(t + c->len, p, k);
  c->len += k;
  t[c->len] = 0;
  c->text = t;
  return (ssize_t)n;
}

FILE *srv_capture_open(srv_capture *c, size_t max) {
  memset(c, 0, sizeof *c);
  c->max = max;
  cookie_io_functions_t io = {.write = capture_write};
  c->f = fopencookie(c, "w", io);
  return c->f;
}

void srv_capture_close(srv_capture *c) {
  if (c->f) fclose(c->f);
  c->f = NULL;
}

void srv_capture_free(srv_capture *c) {
  srv_capture_close(c);
  free(c->text);
  c->text = NULL;
  c->len = 0;
}
