/* SPDX-License-Identifier: Apache-2.0 */
/* The MLIR bytecode container writer: the inverse of bytecode.h.
 *
 * A writer interns strings, dialects, op names, attribute and type
 * entries and properties (each distinct one stored once, numbered in order
 * of first use), and collects the IR section as the caller emits ops; then
 * shlo__bw_finish lays out the file as MLIR's "Bytecode Format" describes it, in
 * the section order StableHLO's serializer uses (dialect, attribute/type
 * offsets, attributes/types, IR, resource offsets, resources, strings,
 * properties), at format version 6.
 *
 * Errors (out of memory, something the format cannot hold) fill the diag
 * and unwind with longjmp to the shlo__bw_begin caller's setjmp on w->on_error. */
#ifndef SHLO_BYTECODE_WRITE_H
#define SHLO_BYTECODE_WRITE_H

#include <setjmp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdnoreturn.h>

#include "shlo/status.h"

#define BW_FORMAT_VERSION 6
#define BW_TEXT (1 << 30)

/* A growable byte buffer. */
typedef struct bw_buf {
  uint8_t *p;
  size_t n, cap;
} bw_buf;

/* An interning table: each distinct byte string gets the next index. */
typedef struct bw_table {
  bw_buf data;        /* the entries, back to back */
  size_t *off, *len;  /* per index */
  int *dialect;       /* per index (attributes, types), else 0; with
                         BW_TEXT set for an entry kept as text */
  int n, cap;
  int *slots;         /* open addressing: index + 1, 0 = empty */
  int n_slots;
} bw_table;

typedef struct bw {
  jmp_buf on_error;
  shlo_diag *diag;
  bw_table strings, dialects, opnames, attrs, types, props;
  int *opname_dialect;    /* per op name */
  bool *opname_registered;
  bw_buf ir;
  void **allocs; /* scratch, freed by shlo__bw_free */
  int n_allocs, cap_allocs;
} bw;

/* Start a writer (zeroes it). */
void shlo__bw_begin(bw *w, shlo_diag *diag);
/* Release everything the writer holds (not the finished file). */
void shlo__bw_free(bw *w);
/* Fail with a message (SHLO_EUNSUPPORTED or SHLO_ENOMEM) via on_error. */
noreturn void shlo__bw_fail(bw *w, shlo_status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Encoding primitives on a buffer (prefix varints as bytecode.h reads). */
void shlo__bw_byte(bw *w, bw_buf *b, uint8_t x);
void shlo__bw_bytes(bw *w, bw_buf *b, const void *p, size_t n);
void shlo__bw_varint(bw *w, bw_buf *b, uint64_t v);
void shlo__bw_svarint(bw *w, bw_buf *b, int64_t v);
/* Forget a buffer (its memory is the writer's until shlo__bw_free). */
void shlo__bw_buf_free(bw_buf *b);
/* Scratch memory freed by shlo__bw_free (never by the caller). */
void *shlo__bw_alloc(bw *w, size_t n);

/* Interned indices. */
int shlo__bw_string(bw *w, const char *s, size_t n);
int shlo__bw_dialect(bw *w, const char *name);
int shlo__bw_opname(bw *w, const char *dialect, const char *name, bool registered);
/* An attribute / type entry of dialect (its custom encoding in b, which is
 * emptied for reuse). */
int shlo__bw_attr(bw *w, const char *dialect, bw_buf *b);
int shlo__bw_type(bw *w, const char *dialect, bw_buf *b);
/* An attribute kept as its assembly text (MLIR parses it when reading). */
int shlo__bw_attr_text(bw *w, const char *dialect, const char *text);
/* A properties entry (its bytes in b, emptied). */
int shlo__bw_props(bw *w, bw_buf *b);

/* The whole file: magic, version, producer, sections; malloc'd into *out
 * (the caller frees it). */
void shlo__bw_finish(bw *w, const char *producer, uint8_t **out, size_t *len);

#endif
