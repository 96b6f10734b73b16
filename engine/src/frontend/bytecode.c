/* SPDX-License-Identifier: Apache-2.0 */
/* The MLIR bytecode container reader (bytecode.h).
 *
 * Layout, per MLIR's "Bytecode Format" document: magic, format version,
 * producer string, then sections {id, length, optional alignment, bytes}.
 * Strings, dialects/op names, the attribute/type offset table and the
 * properties table are read first; then the IR section, a tree of blocks,
 * ops and regions whose operands are numbered per isolated-from-above scope.
 *
 * Any count is checked against the bytes that remain (every item takes at
 * least one byte), so no input makes an allocation larger than the file;
 * nesting is bounded by BC_MAX_DEPTH; errors unwind with longjmp to shlo__bc_read,
 * and everything lives in the arena. */
#include "frontend/module.h"
#include "frontend/bytecode.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"

enum {
  SEC_STRING = 0,
  SEC_DIALECT = 1,
  SEC_ATTR_TYPE = 2,
  SEC_ATTR_TYPE_OFFSET = 3,
  SEC_IR = 4,
  SEC_RESOURCE = 5,
  SEC_RESOURCE_OFFSET = 6,
  SEC_DIALECT_VERSIONS = 7,
  SEC_PROPERTIES = 8,
  SEC_COUNT
};

/* Format versions that changed the encoding this reader sees. */
enum {
  V_DIALECT_VERSIONING = 1,
  V_LAZY_LOADING = 2,
  V_USE_LIST_ORDERING = 3,
  V_ELIDE_BLOCK_ARG_LOC = 4,
  V_NATIVE_PROPERTIES = 5,
  V_LATEST = 6
};

enum {
  OP_HAS_ATTRS = 0x01,
  OP_HAS_RESULTS = 0x02,
  OP_HAS_OPERANDS = 0x04,
  OP_HAS_SUCCESSORS = 0x08,
  OP_HAS_REGIONS = 0x10,
  OP_HAS_USE_LISTS = 0x20,
  OP_HAS_PROPERTIES = 0x40
};

static const char *const section_names[SEC_COUNT] = {
    "string section", "dialect section", "attribute/type section",
    "attribute/type offset section", "IR section", "resource section",
    "resource offset section", "dialect version section",
    "properties section"};

/* Operand numbering: one scope per isolated-from-above region; inside it a
 * region reserves slots for the values it defines and releases them when
 * it ends, as MLIR's reader does. */
typedef struct value_scope {
  int *slots; /* slot -> value number, -1 until defined */
  int n, cap;
} value_scope;

typedef struct ir_state {
  bc_file *f;
  value_scope scopes[BC_MAX_DEPTH + 1];
  int n_scopes;
} ir_state;

noreturn void shlo__bc_fail(bc_cursor *c, const char *fmt, ...) {
  bc_file *f = c->f;
  char msg[SHLO_DIAG_MAX - 128];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  shlo_diag_set(f->diag, SHLO_EPARSE, f->filename, 0, 0,
                "byte %zu (%s): %s", (size_t)(c->p - f->base),
                c->section, msg);
  longjmp(f->on_error, 1);
}

void *shlo__bc_alloc(bc_file *f, size_t n) {
  void *p = shlo__arena_alloc(f->arena, n ? n : 1);
  if (!p) {
    shlo_diag_set(f->diag, SHLO_ENOMEM, f->filename, 0, 0,
                  "out of memory reading the artifact");
    longjmp(f->on_error, 2);
  }
  return p;
}

bool shlo__bc_at_end(const bc_cursor *c) { return c->p >= c->end; }

uint8_t shlo__bc_byte(bc_cursor *c) {
  if (c->p >= c->end) shlo__bc_fail(c, "unexpected end of data");
  return *c->p++;
}

const uint8_t *shlo__bc_bytes(bc_cursor *c, size_t n) {
  if (n > (size_t)(c->end - c->p))
    shlo__bc_fail(c, "%zu bytes needed but only %zu remain", n,
            (size_t)(c->end - c->p));
  const uint8_t *p = c->p;
  c->p += n;
  return p;
}

/* Prefix varint: the trailing zero bits of the first byte count the bytes
 * that follow; a zero first byte is followed by a full 8-byte value. */
uint64_t shlo__bc_varint(bc_cursor *c) {
  uint8_t b0 = shlo__bc_byte(c);
  if (b0 & 1) return b0 >> 1;
  if (b0 == 0) {
    const uint8_t *p = shlo__bc_bytes(c, 8);
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
    return v;
  }
  int extra = __builtin_ctz(b0);
  const uint8_t *p = shlo__bc_bytes(c, (size_t)extra);
  uint64_t v = b0;
  for (int i = 0; i < extra; i++) v |= (uint64_t)p[i] << (8 * (i + 1));
  return v >> (extra + 1);
}

int64_t shlo__bc_svarint(bc_cursor *c) {
  uint64_t u = shlo__bc_varint(c);
  return (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
}

int shlo__bc_count(bc_cursor *c, size_t min_bytes) {
  const uint8_t *at = c->p;
  uint64_t n = shlo__bc_varint(c);
  size_t left = (size_t)(c->end - c->p);
  if (min_bytes && n > left / min_bytes) {
    c->p = at;
    shlo__bc_fail(c, "count %llu is more than the %zu bytes left can hold",
            (unsigned long long)n, left);
  }
  if (n > (uint64_t)1 << 30) {
    c->p = at;
    shlo__bc_fail(c, "count %llu is too large", (unsigned long long)n);
  }
  return (int)n;
}

int shlo__bc_index(bc_cursor *c, int limit, const char *what) {
  const uint8_t *at = c->p;
  uint64_t v = shlo__bc_varint(c);
  if (v >= (uint64_t)limit) {
    c->p = at;
    shlo__bc_fail(c, "%s index %llu out of range (%d entries)", what,
            (unsigned long long)v, limit);
  }
  return (int)v;
}

int shlo__bc_string(bc_cursor *c) { return shlo__bc_index(c, c->f->n_strings, "string"); }

uint64_t shlo__bc_apint(bc_cursor *c, unsigned width) {
  if (width <= 8) return shlo__bc_byte(c);
  if (width <= 64) return (uint64_t)shlo__bc_svarint(c);
  shlo__bc_fail(c, "integers wider than 64 bits are not supported");
}

bool shlo__bc_is_bytecode(const void *bytes, size_t len) {
  return len >= 4 && !memcmp(bytes, "ML\xefR", 4);
}

/* ---- sections ---- */

static bc_cursor sub_cursor(bc_file *f, const uint8_t *p, size_t n, int id) {
  return (bc_cursor){p, p + n, section_names[id], f};
}

/* One section header; its payload goes to data and n. */
static int read_section(bc_cursor *c, const uint8_t **data, size_t *n) {
  uint8_t b = shlo__bc_byte(c);
  int id = b & 0x7f;
  if (id >= SEC_COUNT) {
    c->p--;
    shlo__bc_fail(c, "unknown section id %d", id);
  }
  uint64_t len = shlo__bc_varint(c);
  if (b & 0x80) {
    uint64_t align = shlo__bc_varint(c);
    if (!align || align > 4096 || (align & (align - 1)))
      shlo__bc_fail(c, "section alignment %llu is not a power of two up to 4096",
              (unsigned long long)align);
    while ((size_t)(c->p - c->f->base) % align)
      if (shlo__bc_byte(c) != 0xCB) shlo__bc_fail(c, "bad section padding byte");
  }
  if (len > (uint64_t)(c->end - c->p))
    shlo__bc_fail(c, "%s of %llu bytes runs past the end",
            section_names[id], (unsigned long long)len);
  *data = shlo__bc_bytes(c, (size_t)len);
  *n = (size_t)len;
  return id;
}

/* Lengths come first, in reverse order; the texts are packed at the end of
 * the section, each with a NUL. */
static void read_strings(bc_file *f, bc_cursor *c) {
  int n = shlo__bc_count(c, 1);
  f->n_strings = n;
  f->strings = shlo__bc_alloc(f, sizeof *f->strings * (size_t)n);
  f->string_lens = shlo__bc_alloc(f, sizeof *f->string_lens * (size_t)n);
  size_t end = (size_t)(c->end - c->p); /* offsets from c->p */
  const uint8_t *start = c->p;
  for (int i = n - 1; i >= 0; i--) {
    uint64_t size = shlo__bc_varint(c);
    if (size == 0 || size > end) shlo__bc_fail(c, "bad string length %llu",
                                         (unsigned long long)size);
    end -= (size_t)size;
    f->strings[i] = (const char *)start + end;
    f->string_lens[i] = (size_t)size - 1;
  }
  if ((size_t)(c->p - start) > end)
    shlo__bc_fail(c, "string lengths overlap the string data");
  for (int i = 0; i < n; i++) { /* own, NUL-terminated copies */
    char *s = shlo__bc_alloc(f, f->string_lens[i] + 1);
    memcpy(s, f->strings[i], f->string_lens[i]);
    s[f->string_lens[i]] = 0;
    f->strings[i] = s;
  }
}

static void read_dialects(bc_file *f, bc_cursor *c) {
  int n = shlo__bc_count(c, 1);
  f->n_dialects = n;
  f->dialects = shlo__bc_alloc(f, sizeof *f->dialects * (size_t)n);
  for (int i = 0; i < n; i++) {
    if (f->version < V_DIALECT_VERSIONING) {
      f->dialects[i] = f->strings[shlo__bc_string(c)];
      continue;
    }
    uint64_t v = shlo__bc_varint(c);
    if ((v >> 1) >= (uint64_t)f->n_strings)
      shlo__bc_fail(c, "dialect name index %llu out of range",
              (unsigned long long)(v >> 1));
    f->dialects[i] = f->strings[v >> 1];
    if (v & 1) { /* a nested section with the dialect's version */
      const uint8_t *d;
      size_t dn;
      if (read_section(c, &d, &dn) != SEC_DIALECT_VERSIONS)
        shlo__bc_fail(c, "expected a dialect version section");
    }
  }
  int cap = f->n_strings * 2 + 1; /* an op name takes at least one byte */
  if (f->version >= V_ELIDE_BLOCK_ARG_LOC) shlo__bc_count(c, 1); /* op count */
  f->opnames = shlo__bc_alloc(f, sizeof *f->opnames * (size_t)(c->end - c->p + 1));
  (void)cap;
  while (!shlo__bc_at_end(c)) {
    int d = shlo__bc_index(c, f->n_dialects, "dialect");
    int k = shlo__bc_count(c, 1);
    for (int i = 0; i < k; i++) {
      uint64_t v = shlo__bc_varint(c);
      if (f->version >= V_NATIVE_PROPERTIES) v >>= 1; /* registered flag */
      if (v >= (uint64_t)f->n_strings)
        shlo__bc_fail(c, "op name index %llu out of range", (unsigned long long)v);
      f->opnames[f->n_opnames++] = (bc_opname){d, f->strings[v]};
    }
  }
}

static void read_entries(bc_file *f, bc_cursor *c, bc_entry *out, int n,
                         const uint8_t *data, size_t data_n, size_t *used) {
  int filled = 0;
  while (filled < n) {
    int d = shlo__bc_index(c, f->n_dialects, "dialect");
    int k = shlo__bc_count(c, 1);
    if (k > n - filled) shlo__bc_fail(c, "more entries than the table declares");
    for (int i = 0; i < k; i++) {
      uint64_t v = shlo__bc_varint(c);
      uint64_t size = v >> 1;
      if (size > data_n - *used)
        shlo__bc_fail(c, "entry of %llu bytes runs past the attribute/type section",
                (unsigned long long)size);
      out[filled++] = (bc_entry){d, v & 1, data + *used, (size_t)size};
      *used += (size_t)size;
    }
  }
}

static void read_attr_types(bc_file *f, bc_cursor *c, const uint8_t *data,
                            size_t data_n) {
  int na = shlo__bc_count(c, 1);
  int nt = shlo__bc_count(c, 1);
  if ((size_t)na + (size_t)nt > (size_t)(c->end - c->p))
    shlo__bc_fail(c, "more attributes and types than the table can hold");
  f->n_attrs = na;
  f->n_types = nt;
  f->attrs = shlo__bc_alloc(f, sizeof *f->attrs * (size_t)na);
  f->types = shlo__bc_alloc(f, sizeof *f->types * (size_t)nt);
  size_t used = 0;
  read_entries(f, c, f->attrs, na, data, data_n, &used);
  read_entries(f, c, f->types, nt, data, data_n, &used);
  if (!shlo__bc_at_end(c)) shlo__bc_fail(c, "trailing bytes after the offset table");
}

static void read_properties(bc_file *f, bc_cursor *c) {
  if (shlo__bc_at_end(c)) return;
  int n = shlo__bc_count(c, 1);
  f->n_props = n;
  f->props = shlo__bc_alloc(f, sizeof *f->props * (size_t)n);
  for (int i = 0; i < n; i++) {
    f->props[i] = c->p;
    uint64_t size = shlo__bc_varint(c);
    if (size > (uint64_t)(c->end - c->p))
      shlo__bc_fail(c, "properties entry of %llu bytes runs past the section",
              (unsigned long long)size);
    shlo__bc_bytes(c, (size_t)size);
  }
  f->props_end = c->end;
  if (!shlo__bc_at_end(c)) shlo__bc_fail(c, "trailing bytes in the properties section");
}

/* ---- the IR ---- */

static void scope_reserve(ir_state *s, bc_cursor *c, uint64_t n) {
  value_scope *sc = &s->scopes[s->n_scopes - 1];
  if (n > (uint64_t)(c->end - c->p) + 1)
    shlo__bc_fail(c, "region declares %llu values, more than its bytes can define",
            (unsigned long long)n);
  if (sc->n + (int64_t)n > sc->cap) {
    int cap = sc->cap ? sc->cap : 16;
    while (cap < sc->n + (int64_t)n) cap *= 2;
    int *w = shlo__realloc(sc->slots, sizeof *w * (size_t)cap);
    if (!w) {
      shlo_diag_set(s->f->diag, SHLO_ENOMEM, s->f->filename, 0, 0,
                    "out of memory reading the artifact");
      longjmp(s->f->on_error, 2);
    }
    sc->slots = w;
    sc->cap = cap;
  }
  for (int i = 0; i < (int)n; i++) sc->slots[sc->n + i] = -1;
  sc->n += (int)n;
}

/* The next free slot of the innermost region (*next), bounded by *limit. */
static int define_value(ir_state *s, bc_cursor *c, int *next, int limit) {
  if (*next >= limit)
    shlo__bc_fail(c, "region defines more values than it declared");
  value_scope *sc = &s->scopes[s->n_scopes - 1];
  int v = s->f->n_values++;
  sc->slots[(*next)++] = v;
  return v;
}

static int read_operand(ir_state *s, bc_cursor *c) {
  value_scope *sc = &s->scopes[s->n_scopes - 1];
  int i = shlo__bc_index(c, sc->n, "value");
  if (sc->slots[i] < 0)
    shlo__bc_fail(c, "value %d is used before its definition (forward references "
               "are not supported)", i);
  return sc->slots[i];
}

static void skip_use_lists(bc_cursor *c, int n_values) {
  int groups = 1;
  if (n_values > 1) groups = shlo__bc_count(c, 1);
  if (groups > n_values) shlo__bc_fail(c, "more use-list orders than values");
  for (int g = 0; g < groups; g++) {
    if (n_values > 1) shlo__bc_index(c, n_values, "use-list value");
    uint64_t v = shlo__bc_varint(c);
    uint64_t k = v >> 1;
    if (k > (uint64_t)(c->end - c->p)) shlo__bc_fail(c, "use-list too long");
    for (uint64_t i = 0; i < k; i++) {
      shlo__bc_varint(c);
      if (v & 1) shlo__bc_varint(c);
    }
  }
}

typedef struct region_slots {
  int next, limit;
} region_slots;

static void read_ops(ir_state *s, bc_cursor *c, bc_block *b,
                     region_slots *rs);

static void read_block(ir_state *s, bc_cursor *c, bc_block *b,
                       region_slots *rs) {
  bc_file *f = s->f;
  uint64_t v = shlo__bc_varint(c);
  uint64_t n_ops = v >> 1;
  if (n_ops > (uint64_t)(c->end - c->p) / 3)
    shlo__bc_fail(c, "block declares %llu ops, more than its bytes can hold",
            (unsigned long long)n_ops);
  b->n_ops = (int)n_ops;
  if (v & 1) {
    int n = shlo__bc_count(c, 1);
    b->n_args = n;
    b->arg_types = shlo__bc_alloc(f, sizeof(int) * (size_t)n);
    b->arg_values = shlo__bc_alloc(f, sizeof(int) * (size_t)n);
    for (int i = 0; i < n; i++) {
      if (f->version >= V_ELIDE_BLOCK_ARG_LOC) {
        uint64_t t = shlo__bc_varint(c);
        if ((t >> 1) >= (uint64_t)f->n_types)
          shlo__bc_fail(c, "type index %llu out of range",
                  (unsigned long long)(t >> 1));
        b->arg_types[i] = (int)(t >> 1);
        if (t & 1) shlo__bc_index(c, f->n_attrs, "location");
      } else {
        b->arg_types[i] = shlo__bc_index(c, f->n_types, "type");
        shlo__bc_index(c, f->n_attrs, "location");
      }
      b->arg_values[i] = define_value(s, c, &rs->next, rs->limit);
    }
    if (f->version >= V_USE_LIST_ORDERING && shlo__bc_byte(c))
      skip_use_lists(c, n);
  }
  read_ops(s, c, b, rs);
}

static void read_region(ir_state *s, bc_cursor *c, bc_region *r) {
  int n_blocks = shlo__bc_count(c, 1);
  r->n_blocks = n_blocks;
  if (!n_blocks) return;
  uint64_t n_values = shlo__bc_varint(c);
  value_scope *sc = &s->scopes[s->n_scopes - 1];
  int start = sc->n;
  scope_reserve(s, c, n_values);
  region_slots rs = {start, start + (int)n_values};
  r->blocks = shlo__bc_alloc(s->f, sizeof *r->blocks * (size_t)n_blocks);
  memset(r->blocks, 0, sizeof *r->blocks * (size_t)n_blocks);
  for (int i = 0; i < n_blocks; i++) read_block(s, c, &r->blocks[i], &rs);
  s->scopes[s->n_scopes - 1].n = start; /* release the region's slots */
}

static void read_regions(ir_state *s, bc_cursor *c, bc_op *op,
                         bool isolated) {
  bc_file *f = s->f;
  bc_cursor sub = *c;
  bc_cursor *rc = c;
  if (isolated && f->version >= V_LAZY_LOADING) {
    const uint8_t *d;
    size_t n;
    if (read_section(c, &d, &n) != SEC_IR)
      shlo__bc_fail(c, "expected an IR section for an isolated region");
    sub = sub_cursor(f, d, n, SEC_IR);
    rc = &sub;
  }
  if (isolated) {
    if (s->n_scopes > BC_MAX_DEPTH)
      shlo__bc_fail(c, "regions nested deeper than %d (the limit)", BC_MAX_DEPTH);
    s->scopes[s->n_scopes++] = (value_scope){0};
  }
  for (int i = 0; i < op->n_regions; i++) read_region(s, rc, &op->regions[i]);
  if (isolated) {
    value_scope *sc = &s->scopes[--s->n_scopes];
    shlo__free(sc->slots);
    *sc = (value_scope){0};
  }
  if (rc == &sub && !shlo__bc_at_end(&sub))
    shlo__bc_fail(&sub, "trailing bytes after the region");
}

static void read_props_ref(bc_file *f, bc_cursor *c, bc_op *op,
                           bool registered) {
  if (!registered) {
    op->props_attr = shlo__bc_index(c, f->n_attrs, "attribute");
    return;
  }
  int i = shlo__bc_index(c, f->n_props, "properties");
  bc_cursor pc = {f->props[i], f->props_end, "properties section", f};
  uint64_t n = shlo__bc_varint(&pc);
  op->props = shlo__bc_bytes(&pc, (size_t)n);
  op->props_n = (size_t)n;
}

static bc_op *read_op(ir_state *s, bc_cursor *c, region_slots *rs) {
  bc_file *f = s->f;
  bc_op *op = shlo__bc_alloc(f, sizeof *op);
  memset(op, 0, sizeof *op);
  op->offset = (size_t)(c->p - f->base);
  op->attr_dict = op->props_attr = -1;
  op->name = shlo__bc_index(c, f->n_opnames, "op name");
  uint8_t mask = shlo__bc_byte(c);
  shlo__bc_index(c, f->n_attrs, "location");
  if (mask & OP_HAS_ATTRS) op->attr_dict = shlo__bc_index(c, f->n_attrs, "attribute");
  if (mask & OP_HAS_PROPERTIES) {
    if (f->version < V_NATIVE_PROPERTIES)
      shlo__bc_fail(c, "properties in bytecode version %llu",
              (unsigned long long)f->version);
    read_props_ref(f, c, op, true);
  }
  if (mask & OP_HAS_RESULTS) {
    op->n_results = shlo__bc_count(c, 1);
    op->result_types = shlo__bc_alloc(f, sizeof(int) * (size_t)op->n_results);
    op->result_values = shlo__bc_alloc(f, sizeof(int) * (size_t)op->n_results);
    for (int i = 0; i < op->n_results; i++)
      op->result_types[i] = shlo__bc_index(c, f->n_types, "type");
  }
  if (mask & OP_HAS_OPERANDS) {
    op->n_operands = shlo__bc_count(c, 1);
    op->operand_values = shlo__bc_alloc(f, sizeof(int) * (size_t)op->n_operands);
    for (int i = 0; i < op->n_operands; i++)
      op->operand_values[i] = read_operand(s, c);
  }
  if (mask & OP_HAS_SUCCESSORS)
    shlo__bc_fail(c, "ops with successor blocks are not supported");
  if ((mask & OP_HAS_USE_LISTS) && f->version >= V_USE_LIST_ORDERING)
    skip_use_lists(c, op->n_results);
  bool isolated = false;
  if (mask & OP_HAS_REGIONS) {
    uint64_t v = shlo__bc_varint(c);
    isolated = v & 1;
    if ((v >> 1) > (uint64_t)(c->end - c->p) + 1)
      shlo__bc_fail(c, "op declares more regions than its bytes can hold");
    op->n_regions = (int)(v >> 1);
    op->regions = shlo__bc_alloc(f, sizeof *op->regions * (size_t)op->n_regions);
    memset(op->regions, 0, sizeof *op->regions * (size_t)op->n_regions);
  }
  for (int i = 0; i < op->n_results; i++)
    op->result_values[i] = define_value(s, c, &rs->next, rs->limit);
  if (op->n_regions) {
    if (++f->depth > BC_MAX_DEPTH)
      shlo__bc_fail(c, "regions nested deeper than %d (the limit)", BC_MAX_DEPTH);
    read_regions(s, c, op, isolated);
    f->depth--;
  }
  return op;
}

static void read_ops(ir_state *s, bc_cursor *c, bc_block *b,
                     region_slots *rs) {
  b->ops = shlo__bc_alloc(s->f, sizeof *b->ops * (size_t)(b->n_ops ? b->n_ops : 1));
  for (int i = 0; i < b->n_ops; i++) b->ops[i] = read_op(s, c, rs);
}

static void read_ir(bc_file *f, ir_state *s, bc_cursor *c) {
  s->f = f;
  s->scopes[0] = (value_scope){0};
  s->n_scopes = 1;
  region_slots rs = {0, 0};
  read_block(s, c, &f->top, &rs);
  if (!shlo__bc_at_end(c)) shlo__bc_fail(c, "trailing bytes after the top-level block");
}

/* ---- the file ---- */

static void read_header(bc_file *f, bc_cursor *c) {
  if (!shlo__bc_is_bytecode(f->base, f->len))
    shlo__bc_fail(c, "not MLIR bytecode (no \"ML\\xefR\" magic)");
  c->p += 4;
  f->version = shlo__bc_varint(c);
  if (f->version > V_LATEST)
    shlo__bc_fail(c, "bytecode format version %llu is newer than this reader "
               "understands (up to %d)", (unsigned long long)f->version,
            V_LATEST);
  const uint8_t *nul = memchr(c->p, 0, (size_t)(c->end - c->p));
  if (!nul) shlo__bc_fail(c, "producer string has no end");
  size_t n = (size_t)(nul - c->p);
  char *p = shlo__bc_alloc(f, n + 1);
  memcpy(p, c->p, n);
  p[n] = 0;
  f->producer = p;
  c->p = nul + 1;
}

static void read_all(bc_file *f, ir_state *s) {
  bc_cursor c = {f->base, f->base + f->len, "file header", f};
  read_header(f, &c);
  const uint8_t *data[SEC_COUNT] = {0};
  size_t size[SEC_COUNT] = {0};
  while (!shlo__bc_at_end(&c)) {
    const uint8_t *at = c.p;
    const uint8_t *d;
    size_t n;
    c.section = "section header";
    int id = read_section(&c, &d, &n);
    if (data[id]) {
      c.p = at;
      shlo__bc_fail(&c, "the %s appears twice", section_names[id]);
    }
    data[id] = d ? d : at;
    size[id] = n;
  }
  static const int required[] = {SEC_STRING, SEC_DIALECT, SEC_ATTR_TYPE,
                                 SEC_ATTR_TYPE_OFFSET, SEC_IR};
  for (size_t i = 0; i < sizeof required / sizeof *required; i++)
    if (!data[required[i]])
      shlo__bc_fail(&c, "missing the %s", section_names[required[i]]);
  bc_cursor sc = sub_cursor(f, data[SEC_STRING], size[SEC_STRING], SEC_STRING);
  read_strings(f, &sc);
  sc = sub_cursor(f, data[SEC_DIALECT], size[SEC_DIALECT], SEC_DIALECT);
  read_dialects(f, &sc);
  sc = sub_cursor(f, data[SEC_ATTR_TYPE_OFFSET], size[SEC_ATTR_TYPE_OFFSET],
                  SEC_ATTR_TYPE_OFFSET);
  read_attr_types(f, &sc, data[SEC_ATTR_TYPE], size[SEC_ATTR_TYPE]);
  if (data[SEC_PROPERTIES]) {
    sc = sub_cursor(f, data[SEC_PROPERTIES], size[SEC_PROPERTIES],
                    SEC_PROPERTIES);
    read_properties(f, &sc);
  }
  sc = sub_cursor(f, data[SEC_IR], size[SEC_IR], SEC_IR);
  read_ir(f, s, &sc);
}

shlo_status shlo__bc_read(bc_file *f, const void *bytes, size_t len,
                    const char *filename, shlo_diag *diag) {
  memset(f, 0, sizeof *f);
  f->base = bytes;
  f->len = len;
  f->diag = diag;
  f->filename = filename;
  f->arena = shlo__arena_new();
  if (!f->arena)
    return shlo_diag_set(diag, SHLO_ENOMEM, filename, 0, 0,
                         "out of memory reading the artifact");
  ir_state *s = shlo__calloc(1, sizeof *s);
  if (!s)
    return shlo_diag_set(diag, SHLO_ENOMEM, filename, 0, 0,
                         "out of memory reading the artifact");
  shlo_status st = SHLO_OK;
  int jumped = setjmp(f->on_error);
  if (!jumped) read_all(f, s);
  else st = jumped == 2 ? SHLO_ENOMEM : SHLO_EPARSE;
  for (int i = 0; i <= BC_MAX_DEPTH; i++) shlo__free(s->scopes[i].slots);
  shlo__free(s);
  return st;
}

void shlo__bc_free(bc_file *f) {
  if (f->arena) shlo__arena_free(f->arena);
  f->arena = NULL;
}
