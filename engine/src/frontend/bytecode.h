/* SPDX-License-Identifier: Apache-2.0 */
/* The MLIR bytecode container: what bytecode.c reads from a portable
 * artifact before any dialect gives the bytes a meaning.
 *
 * The format is MLIR's "Bytecode Format" (magic "ML\xefR", prefix varints,
 * sections for strings, dialects, attributes/types, properties and the IR).
 * shlo__bc_read checks every length, count, index and nesting depth against the
 * bytes that remain, so a count can never ask for more memory than the file
 * has bytes, and reports the first problem as "byte N (section): message".
 *
 * Attributes and types stay raw slices here (bc_entry); their dialect
 * (builtin or vhlo) decodes them in vhlo_attrs.c.  Everything lives in one
 * arena that shlo__bc_free releases. */
#ifndef SHLO_BYTECODE_H
#define SHLO_BYTECODE_H

#include <setjmp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdnoreturn.h>

#include "core/arena.h"
#include "shlo/status.h"

#define BC_MAX_DEPTH 64 /* regions inside regions, attributes inside attrs */

/* A cursor over part of the file; errors name its section. */
typedef struct bc_cursor {
  const uint8_t *p, *end;
  const char *section;
  struct bc_file *f;
} bc_cursor;

/* One attribute or type: its dialect and its encoded bytes. */
typedef struct bc_entry {
  int dialect;
  bool custom; /* dialect encoding; false: its assembly text, NUL-ended */
  const uint8_t *data;
  size_t n;
} bc_entry;

typedef struct bc_op bc_op;

typedef struct bc_block {
  int n_args;
  int *arg_types;  /* type table indices */
  int *arg_values; /* value numbers, unique in the file */
  int n_ops;
  bc_op **ops;
} bc_block;

typedef struct bc_region {
  int n_blocks;
  bc_block *blocks;
} bc_region;

struct bc_op {
  int name;            /* op name table index */
  size_t offset;       /* file offset of the op, for messages */
  int attr_dict;       /* attribute index of its dictionary, or -1 */
  const uint8_t *props; /* properties bytes (registered ops), or NULL */
  size_t props_n;
  int props_attr;      /* unregistered op: properties as an attribute, or -1 */
  int n_results;
  int *result_types;
  int *result_values;
  int n_operands;
  int *operand_values;
  int n_regions;
  bc_region *regions;
};

typedef struct bc_opname {
  int dialect;
  const char *name; /* without the dialect prefix */
} bc_opname;

typedef struct bc_file {
  shlo_arena *arena;
  shlo_diag *diag;
  const char *filename;
  jmp_buf on_error;
  const uint8_t *base;
  size_t len;
  uint64_t version;     /* bytecode format version */
  const char *producer; /* "StableHLO_v1.20.0" */
  int n_strings;
  const char **strings;
  size_t *string_lens;
  int n_dialects;
  const char **dialects;
  int n_opnames;
  bc_opname *opnames;
  int n_attrs, n_types;
  bc_entry *attrs, *types;
  int n_props;
  const uint8_t **props; /* each: a varint size then that many bytes */
  const uint8_t *props_end;
  bc_block top;  /* the top-level block: builtin.module */
  int n_values;  /* value numbers handed out */
  int depth;
} bc_file;

/* True when bytes start with the bytecode magic "ML\xefR". */
bool shlo__bc_is_bytecode(const void *bytes, size_t len);

/* Read the container of bytes (which must outlive f).  On error fills diag
 * ("file: byte N (section): ...") and returns SHLO_EPARSE or SHLO_ENOMEM;
 * f is then still to be freed with shlo__bc_free. */
shlo_status shlo__bc_read(bc_file *f, const void *bytes, size_t len,
                    const char *filename, shlo_diag *diag);
void shlo__bc_free(bc_file *f);

/* Primitives the dialect decoders use on an entry's bytes. */
noreturn void shlo__bc_fail(bc_cursor *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void *shlo__bc_alloc(bc_file *f, size_t n);
bool shlo__bc_at_end(const bc_cursor *c);
uint8_t shlo__bc_byte(bc_cursor *c);
uint64_t shlo__bc_varint(bc_cursor *c);
int64_t shlo__bc_svarint(bc_cursor *c);
/* A count of items that each take at least min_bytes of what remains. */
int shlo__bc_count(bc_cursor *c, size_t min_bytes);
const uint8_t *shlo__bc_bytes(bc_cursor *c, size_t n);
/* A string table reference: its index (text in f->strings, which may
 * hold NUL bytes, length in f->string_lens). */
int shlo__bc_string(bc_cursor *c);
int shlo__bc_index(bc_cursor *c, int limit, const char *what);
/* An APInt of a known bit width: one byte up to 8 bits, a signed varint up
 * to 64; wider values are refused. */
uint64_t shlo__bc_apint(bc_cursor *c, unsigned width);

#endif
