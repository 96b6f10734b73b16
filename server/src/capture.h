/* SPDX-License-Identifier: Apache-2.0 */
/* What an execution's interpreter.print ops write, kept for the client
 * that asked for it (HTTP "print": true, binary EXECUTE flag bit 1): a
 * stdio stream that appends to memory, up to a bound, so a program that
 * prints in a loop cannot grow the server without limit. */
#ifndef SHLO_SRV_CAPTURE_H
#define SHLO_SRV_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef struct srv_capture {
  char *text;      /* malloc'd, NUL-terminated once closed; NULL = nothing */
  size_t len;
  size_t max;      /* bytes kept at most; the rest is dropped */
  bool truncated;  /* something was dropped (the bound, or no memory) */
  FILE *f;         /* the open stream, NULL once closed */
} srv_capture;

/* Start keeping (c zeroed first); the stream to give the engine, NULL when
 * it cannot be opened. */
FILE *srv_capture_open(srv_capture *c, size_t max);
/* Flush and close the stream; the text stays. */
void srv_capture_close(srv_capture *c);
void srv_capture_free(srv_capture *c);

#endif
