/* SPDX-License-Identifier: Apache-2.0 */
/* The bytes grid values travel as between the ranks of an MPI job
 * (grid_mpi.c): a flat, native-endian encoding of tensors (with their
 * quantization), tokens and tuples.  Every rank runs the same binary on
 * the same kind of host, so no byte swapping; every length is checked on
 * reading, so a short or corrupt message is an error, never a crash.
 * Knows nothing of MPI. */
#ifndef SHLO_GRID_WIRE_H
#define SHLO_GRID_WIRE_H

#include <stdint.h>

#include "core/strbuf.h"
#include "shlo/tensor.h"

/* Append fixed-size fields and values to b (out of memory is sticky in
 * b->failed). */
void shlo__wire_i64(strbuf *b, int64_t x);
void shlo__wire_str(strbuf *b, const char *s);
/* Tensors, tokens and tuples; false (nothing useful written) for another
 * kind of value. */
bool shlo__wire_value(strbuf *b, const shlo_value *v);

/* A reader over a received message.  Any read past the end, or a value
 * that does not decode, sets bad and returns zeros / NULL. */
typedef struct wire_reader {
  const char *p, *end;
  bool bad;
} wire_reader;

int64_t shlo__wire_read_i64(wire_reader *r);
/* A string in the message (pointer into it, NUL-terminated there). */
const char *shlo__wire_read_str(wire_reader *r);
/* A new value (owned reference), or NULL with r->bad set. */
shlo_value *shlo__wire_read_value(wire_reader *r);

#endif
