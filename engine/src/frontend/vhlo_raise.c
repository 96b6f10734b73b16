/* SPDX-License-Identifier: Apache-2.0 */
/* StableHLO module -> portable artifact (artifact.h): the inverse of
 * vhlo.c and vhlo_lower.c.
 *
 * Each stablehlo op becomes the newest vhlo.X_vN the target StableHLO has
 * (vhlo_ops.c's table); its attributes are reshaped to VHLO's flat,
 * explicit form (dimension numbers split into their lists, dense arrays as
 * i64 tensors, channel handles as integers) and every attribute the op
 * version has but the text left out gets its StableHLO default, as VHLO
 * keeps them all.  An attribute the target's op version lacks is refused,
 * naming the op, the attribute and the version that has it.
 *
 * Ops of other dialects (the interpreter's check.* and interpreter.*, chlo)
 * travel as unregistered ops, as StableHLO's own tests keep them in
 * bytecode: generic form with an attribute dictionary, whose values use
 * VHLO's attribute encoding (symbols as builtin symbol references), so the
 * reader prints them back unchanged.
 *
 * Values are numbered per region in definition order, nested regions
 * after their parent's values; module and func_v1 are isolated from above
 * (their regions in nested IR sections), as MLIR's writer lays them out. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/module.h"
#include "core/alloc.h"
#include "core/floatfmt.h"
#include "core/strbuf.h"
#include "core/value.h"
#include "frontend/bytecode_write.h"
#include "frontend/vhlo.h"
#include "frontend/vhlo_ops.h"
#include "ops/ops.h"
#include "shlo/artifact.h"

#define KDYNAMIC INT64_MIN

enum { VA_ARRAY_C = 1, VA_BOOL_C = 2, VA_DICT_C = 6, VA_FLOAT_C = 8,
       VA_INT_C = 9, VA_ALIAS_C = 10, VA_STRING_C = 14, VA_TENSOR_C = 15,
       VA_TYPE_C = 17, VA_ACCURACY_C = 20 };

typedef struct raiser {
  bw w;
  const shlo_module *m;
  const shlo_func *f;
  vhlo_version target;
  int *ids;   /* per value id of f: its bytecode number */
  int next;   /* values reserved in the current isolated scope */
  int loc;    /* the one location: builtin UnknownLoc */
  int depth;  /* regions, types and attributes open now, together */
  char producer[48]; /* "StableHLO_v1.20.0" */
} raiser;

typedef struct vnamed {
  const char *name;
  int attr;
} vnamed;

typedef struct vattrs {
  vnamed v[VHLO_MAX_OP_ATTRS * 2];
  int n;
} vattrs;

static void put(raiser *r, vattrs *out, const char *name, int attr) {
  if (out->n == VHLO_MAX_OP_ATTRS * 2)
    shlo__bw_fail(&r->w, SHLO_EUNSUPPORTED, "op has too many attributes");
  out->v[out->n++] = (vnamed){name, attr};
}

/* ---- types ---- */

static int vtype_of(raiser *r, const shlo_type *t);

static int elem_type(raiser *r, shlo_elem_type e) {
  bw_buf b = {0};
  if (shlo_elem_is_complex(e)) {
    int part = elem_type(r, shlo_elem_complex_part(e));
    shlo__bw_varint(&r->w, &b, 1);
    shlo__bw_varint(&r->w, &b, (uint64_t)part);
  } else if (e == SHLO_INDEX) {
    shlo__bw_varint(&r->w, &b, 9);
  } else {
    int code = shlo__vhlo_scalar_code(e);
    if (code < 0) {
      shlo__bw_buf_free(&b);
      shlo__bw_fail(&r->w, SHLO_EUNSUPPORTED, "element type %s has no VHLO form",
              shlo_elem_name(e));
    }
    shlo__bw_varint(&r->w, &b, (uint64_t)code);
  }
  int i = shlo__bw_type(&r->w, "vhlo", &b);
  shlo__bw_buf_free(&b);
  return i;
}

/* Quantized storage is kept as the signless integer of its width, the
 * signedness in the flags, as MLIR's quant dialect holds it. */
static int quant_type(raiser *r, const shlo_quant *q) {
  shlo_elem_type st = q->storage;
  bool is_signed = shlo_elem_class_of(st) == SHLO_CLASS_SINT;
  if (!is_signed) {
    static const shlo_elem_type u[] = {SHLO_UI2, SHLO_UI4, SHLO_UI8,
                                       SHLO_UI16, SHLO_UI32, SHLO_UI64};
    static const shlo_elem_type s[] = {SHLO_SI2, SHLO_SI4, SHLO_SI8,
                                       SHLO_SI16, SHLO_SI32, SHLO_SI64};
    for (int i = 0; i < 6; i++)
      if (u[i] == st) st = s[i];
  }
  int sref = elem_type(r, st), eref = elem_type(r, q->expressed);
  bw_buf b = {0};
  shlo__bw_varint(&r->w, &b, q->per_axis ? 30 : 24);
  shlo__bw_varint(&r->w, &b, is_signed ? 1 : 0);
  shlo__bw_varint(&r->w, &b, (uint64_t)sref);
  shlo__bw_varint(&r->w, &b, (uint64_t)eref);
  if (q->per_axis) {
    shlo__bw_varint(&r->w, &b, (uint64_t)q->axis);
    shlo__bw_svarint(&r->w, &b, q->storage_min);
    shlo__bw_svarint(&r->w, &b, q->storage_max);
    shlo__bw_varint(&r->w, &b, (uint64_t)q->n);
    for (int i = 0; i < q->n; i++) {
      int64_t bits;
      memcpy(&bits, &q->scales[i], 8);
      shlo__bw_svarint(&r->w, &b, bits);
    }
    shlo__bw_varint(&r->w, &b, (uint64_t)q->n);
    for (int i = 0; i < q->n; i++) shlo__bw_svarint(&r->w, &b, q->zero_points[i]);
  } else {
    int64_t bits;
    memcpy(&bits, &q->scales[0], 8);
    shlo__bw_svarint(&r->w, &b, bits);
    shlo__bw_svarint(&r->w, &b, q->zero_points[0]);
    shlo__bw_svarint(&r->w, &b, q->storage_min);
    shlo__bw_svarint(&r->w, &b, q->storage_max);
  }
  int i = shlo__bw_type(&r->w, "vhlo", &b);
  shlo__bw_buf_free(&b);
  return i;
}

static int type_list(raiser *r, bw_buf *b, const shlo_type *const *ts,
                     int n) {
  int refs[64];
  if (n > 64) return -1;
  for (int i = 0; i < n; i++) refs[i] = vtype_of(r, ts[i]);
  shlo__bw_varint(&r->w, b, (uint64_t)n);
  for (int i = 0; i < n; i++) shlo__bw_varint(&r->w, b, (uint64_t)refs[i]);
  return 0;
}

/* #stablehlo.type_extensions<bounds = [16, ?]> (or #stablehlo.bounds<16,
 * ?>) as VHLO's type_extensions_v1: the bounds, ? as kDynamic. */
static int bounds_attr(raiser *r, const char *enc) {
  const char *p = strchr(enc, '[');
  if (!p && !strncmp(enc, "#stablehlo.bounds<", 18)) p = enc + 17;
  if (!p || (strncmp(enc, "#stablehlo.type_extensions<", 27) &&
             strncmp(enc, "#stablehlo.bounds<", 18)))
    shlo__bw_fail(&r->w, SHLO_EUNSUPPORTED,
            "tensor encoding %s is not supported in artifacts", enc);
  int64_t xs[SHLO_MAX_RANK];
  int n = 0;
  for (p++; *p && *p != ']' && *p != '>';) {
    while (*p == ' ' || *p == ',') p++;
    if (*p == ']' || *p == '>') break;
    if (n == SHLO_MAX_RANK) shlo__bw_fail(&r->w, SHLO_EUNSUPPORTED, "bounds too long");
    char *end;
    if (*p == '?') {
      xs[n++] = KDYNAMIC;
      p++;
    } else {
      xs[n++] = strtoll(p, &end, 10);
      if (end == p)
        shlo__bw_fail(&r->w, SHLO_EUNSUPPORTED, "bad bounds in %s", enc);
      p = end;
    }
  }
  bw_buf b = {0};
  shlo__bw_varint(&r->w, &b, 18);
  shlo__bw_varint(&r->w, &b, (uint64_t)n);
  for (int i = 0; i < n; i++) shlo__bw_svarint(&r->w, &b, xs[i]);
  return shlo__bw_attr(&r->w, "vhlo", &b);
}

static int tensor_type(raiser *r, const shlo_type *t) {
  int enc = t->encoding && t->rank >= 0 ? bounds_attr(r, t->encoding) : -1;
  if (t->encoding && t->rank < 0)
    shlo__bw_fail(&r->w, SHLO_EUNSUPPORTED,
            "tensor encoding %s is not supported in artifacts", t->encoding);
  int e = t->quant ? quant_type(r, t->quant) : elem_type(r, t->elem);
  bw_buf b = {0};
  if (t->rank < 0) {
    shlo__bw_varint(&r->w, &b, 25);
  } else {
    shlo__bw_varint(&r->w, &b, enc >= 0 ? 21 : 20);
    if (enc >= 0) shlo__bw_varint(&r->w, &b, (uint64_t)enc);
    shlo__bw_varint(&r->w, &b, (uint64_t)t->rank);
    for (int i = 0; i < t->rank; i++)
      shlo__bw_svarint(&r->w, &b, t->dims[i] == SHLO_DYN ? KDYNAMIC : t->dims[i]);
  }
  shlo__bw_varint(&r->w, &b, (uint64_t)e);
  int i = shlo__bw_type(&r->w, "vhlo", &b);
  shlo__bw_buf_free(&b);
  return i;
}

/* memref<2x?xf32>, kept by the parser as its text: VHLO's buffer_v1. */
static int buffer_type(raiser *r, const char *text) {
  int64_t dims[SHLO_MAX_RANK];
  int rank = 0;
  const char *p = text + 7;
  for (;;) {
    char *end;
    long long d = strtoll(p, &end, 10);
    if (*p == '?') end = (char *)p + 1, d = KDYNAMIC;
    if (end == p || *end != 'x') break;
    if (rank == SHLO_MAX_RANK)
      shlo__bw_fail(&r->w, SHLO_EUNSUPPORTED, "%s: rank too large", text);
    dims[rank++] = d;
    p = end + 1;
  }
  const char *close = strchr(p, '>');
  int e = close ? shlo_elem_from_name(p, (size_t)(close - p)) : -1;
  if (e < 0 || close[1])
    shlo__bw_fail(&r->w, SHLO_EUNSUPPORTED, "type %s is not supported in artifacts",
            text);
  int et = elem_type(r, (shlo_elem_type)e);
  bw_buf b = {0};
  shlo__bw_varint(&r->w, &b, 41);
  shlo__bw_varint(&r->w, &b, (uint64_t)rank);
  for (int i = 0; i < rank; i++) shlo__bw_svarint(&r->w, &b, dims[i]);
  shlo__bw_varint(&r->w, &b, (uint64_t)et);
  return shlo__bw_type(&r->w, "vhlo", &b);
}

static int vtype_of(raiser *r, const shlo_type *t);

/* !stablehlo.future<T, ...>, kept by the parser as its text: VHLO's
 * future_v1 of the types, which the parser reads as a function's
 * argument types. */
static int future_type(raiser *r, const char *text) {
  size_t n = strlen(text);
  if (n < 19 || text[n - 1] != '>')
    shlo__bw_fail(&r->w, SHLO_EUNSUPPORTED, "bad type %s", text);
  strbuf f = {0};
  shlo__sb_puts(&f, "func.func @f(%a0: ");
  int depth = 0, k = 1;
  for (const char *p = text + 18; p < text + n - 1; p++) {
    if (*p == '<' || *p == '(') depth++;
    if (*p == '>' || *p == ')') depth--;
    if (*p == ',' && !depth) shlo__sb_printf(&f, ", %%a%d: ", k++);
    else shlo__sb_putc(&f, *p);
  }
  shlo__sb_puts(&f, ") {\n  func.return\n}\n");
  char *src = shlo__sb_take(&f);
  if (!src) shlo__bw_fail(&r->w, SHLO_ENOMEM, "out of memory");
  shlo_module *m = NULL;
  shlo_diag d;
  shlo_status st = shlo_parse_module(src, strlen(src), "future", &m, &d);
  free(src);
  if (st) shlo__bw_fail(&r->w, SHLO_EUNSUPPORTED, "type %s: %s", text, d.message);
  const shlo_func *fn = m->funcs[0];
  int refs[64], count = fn->n_args < 64 ? fn->n_args : 64;
  for (int i = 0; i < count; i++) {
    shlo_type copy = *fn->arg_types[i];
    if (copy.kind != SHLO_TYPE_TENSOR || copy.quant || copy.encoding) {
      shlo_module_free(m);
      shlo__bw_fail(&r->w, SHLO_EUNSUPPORTED, "type %s is not supported", text);
    }
    refs[i] = vtype_of(r, &copy);
  }
  shlo_module_free(m);
  bw_buf b = {0};
  shlo__bw_varint(&r->w, &b, 42);
  shlo__bw_varint(&r->w, &b, (uint64_t)count);
  for (int i = 0; i < count; i++) shlo__bw_varint(&r->w, &b, (uint64_t)refs[i]);
  return shlo__bw_type(&r->w, "vhlo", &b);
}

static int vtype_of(raiser *r, const shlo_type *t) {
  if (++r->depth > BC_MAX_DEPTH)
    shlo__bw_fail(&r->w, SHLO_EUNSUPPORTED,
            "regions, types or attributes nested deeper than %d (the "
            "limit)", BC_MAX_DEPTH);
  int i;
  bw_buf b = {0};
  switch (t->kind) {
  case SHLO_TYPE_ELEMENT: i = elem_type(r, t->elem); break;
  case SHLO_TYPE_TENSOR: i = tensor_type(r, t); break;
  case SHLO_TYPE_TOKEN:
    shlo__bw_varint(&r->w, &b, 22);
    i = shlo__bw_type(&r->w, "vhlo", &b);
    break;
  case SHLO_TYPE_TUPLE:
    shlo__bw_varint(&r->w, &b, 23);
    if (type_list(r, &b, t->elems, t->n_elems)) {
      shlo__bw_buf_free(&b);
      shlo__bw_fail(&r->w, SHLO_EUNSUPPORTED, "tuple too wide");
    }
    i = shlo__bw_type(&r->w, "vhlo", &b);
    break;
  default:
    if (t->encoding && !strncmp(t->encoding, "memref<", 7)) {
      i = buffer_type(r, t->encoding);
      break;
    }
    if (t->encoding && !strncmp(t->encoding, "!stablehlo.future<", 18)) {
      i = future_type(r, t->encoding);
      break;
    }
    shlo__bw_fail(&r->w, SHLO_EUNSUPPORTED, "type %s is not supported in artifacts",
            t->encoding ? t->encoding : "(opaque)");
  }
  shlo__bw_buf_free(&b);
  r->depth--;
  return i;
}

static int function_type(raiser *r, const shlo_type *const *in, int n_in,
                         const shlo_type *const *out, int n_out) {
  bw_buf b = {0};
  shlo__bw_varint(&r->w, &b, 8);
  if (type_list(r, &b, in, n_in) || type_list(r, &b, out, n_out)) {
    shlo__bw_buf_free(&b);
    shlo__bw_fail(&r->w, SHLO_EUNSUPPORTED, "function has too many arguments");
  }
  int i = shlo__bw_type(&r->w, "vhlo", &b);
  shlo__bw_buf_free(&b);
  return i;
}

/* An element type the parser kept as a bare name ("tf32", which has no
 * element type of its own here, or "f32"). */
static int named_type(raiser *r, const char *name) {
  if (!strcmp(name, "tf32") || !strcmp(name, "none")) {
    bw_buf b = {0};
    shlo__bw_varint(&r->w, &b, name[0] == 't' ? 34 : 33);
    return shlo__bw_type(&r->w, "vhlo", &b);
  }
  int e = shlo_elem_from_name(name, strlen(name));
  if (e < 0) shlo__bw_fail(&r->w, SHLO_EUNSUPPORTED, "unknown type or value %s", name);
  return elem_type(r, (shlo_elem_type)e);
}

/* ---- attributes ---- */

/* One attribute from a code and up to a few varint fields. */
static int simple_attr(raiser *r, uint64_t code, int n, const uint64_t *xs) {
  bw_buf b = {0};
  shlo__bw_varint(&r->w, &b, code);
  for (int i = 0; i < n; i++) shlo__bw_varint(&r->w, &b, xs[i]);
  int i = shlo__bw_attr(&r->w, "vhlo", &b);
  shlo__bw_buf_free(&b);
  return i;
}

static int bool_attr(raiser *r, bool v) {
  uint64_t x = v;
  return simple_attr(r, VA_BOOL_C, 1, &x);
}

static int string_attr(raiser *r, const char *s) {
  uint64_t x = (uint64_t)shlo__bw_string(&r->w, s, strlen(s));
  return simple_attr(r, VA_STRING_C, 1, &x);
}

static int builtin_string(raiser *r, const char *s) {
  bw_buf b = {0};
  shlo__bw_varint(&r->w, &b, 2);
  shlo__bw_varint(&r->w, &b, (uint64_t)shlo__bw_string(&r->w, s, strlen(s)));
  int i = shlo__bw_attr(&r->w, "builtin", &b);
  shlo__bw_buf_free(&b);
  return i;
}

static int type_attr(raiser *r, int type) {
  uint64_t x = (uint64_t)type;
  return simple_attr(r, VA_TYPE_C, 1, &x);
}

static int array_attr(raiser *r, const int *items, int n) {
  bw_buf b = {0};
  shlo__bw_varint(&r->w, &b, VA_ARRAY_C);
  shlo__bw_varint(&r->w, &b, (uint64_t)n);
  for (int i = 0; i < n; i++) shlo__bw_varint(&r->w, &b, (uint64_t)items[i]);
  int i = shlo__bw_attr(&r->w, "vhlo", &b);
  shlo__bw_buf_free(&b);
  return i;
}

/* An integer of element type e; the APInt as bytecode.h reads it. */
static int int_attr(raiser *r, shlo_elem_type e, int64_t v) {
  int t = elem_type(r, e);
  bw_buf b = {0};
  shlo__bw_varint(&r->w, &b, VA_INT_C);
  shlo__bw_varint(&r->w, &b, (uint64_t)t);
  if (shlo_elem_bits(e) <= 8) shlo__bw_byte(&r->w, &b, (uint8_t)v);
  else shlo__bw_svarint(&r->w, &b, v);
  int i = shlo__bw_attr(&r->w, "vhlo", &b);
  shlo__bw_buf_free(&b);
  return i;
}

static int float_attr(raiser *r, shlo_elem_type e, double v) {
  int t = elem_type(r, e);
  uint8_t bytes[8] = {0};
  shlo__float_store(e, v, bytes);
  uint64_t bits = 0;
  memcpy(&bits, bytes, shlo_elem_size(e)); /* little-endian host */
  int w = shlo_elem_bits(e);
  bw_buf b = {0};
  shlo__bw_varint(&r->w, &b, VA_FLOAT_C);
  shlo__bw_varint(&r->w, &b, (uint64_t)t);
  if (w <= 8) {
    shlo__bw_byte(&r->w, &b, (uint8_t)bits);
  } else {
    if (w < 64 && (bits >> (w - 1) & 1)) bits |= ~(((uint64_t)1 << w) - 1);
    shlo__bw_svarint(&r->w, &b, (int64_t)bits);
  }
  int i = shlo__bw_attr(&r->w, "vhlo", &b);
  shlo__bw_buf_free(&b);
  return i;
}

/* tensor_v1: a ranked tensor type and its raw data (i1 packed as bits,
 * as MLIR's dense elements hold booleans). */
static int tensor_attr(raiser *r, const shlo_type *t, const void *data,
                       size_t nbytes, int64_t numel) {
  int ty = vtype_of(r, t);
  bw_buf b = {0};
  shlo__bw_varint(&r->w, &b, VA_TENSOR_C);
  shlo__bw_varint(&r->w, &b, (uint64_t)ty);
  if (t->elem == SHLO_I1 && !t->quant) {
    size_t packed = (size_t)(numel + 7) / 8;
    shlo__bw_varint(&r->w, &b, packed);
    const uint8_t *p = data;
    for (size_t k = 0; k < packed; k++) {
      uint8_t x = 0;
      for (int bit = 0; bit < 8 && (int64_t)(k * 8 + (size_t)bit) < numel;
           bit++)
        if (p[k * 8 + (size_t)bit]) x |= (uint8_t)(1 << bit);
      shlo__bw_byte(&r->w, &b, x);
    }
  } else {
    shlo__bw_varint(&r->w, &b, nbytes);
    shlo__bw_bytes(&r->w, &b, data, nbytes);
  }
  int i = shlo__bw_attr(&r->w, "vhlo", &b);
  shlo__bw_buf_free(&b);
  return i;
}

/* tensor<N x i64> (or i1) of the values: VHLO's form of dimension lists. */
static int ints_attr(raiser *r, const int64_t *xs, int n, bool is_bool) {
  shlo_type t = {.kind = SHLO_TYPE_TENSOR, .elem = is_bool ? SHLO_I1
                                                           : SHLO_SI64,
                 .rank = 1, .dims = {n}};
  if (is_bool) {
    uint8_t *bytes = shlo__bw_alloc(&r->w, (size_t)n + 1);
    for (int k = 0; k < n; k++) bytes[k] = xs[k] != 0;
    return tensor_attr(r, &t, bytes, (size_t)n, n);
  }
  return tensor_attr(r, &t, xs, sizeof *xs * (size_t)n, n);
}

static int fill_attr(raiser *r, int n, int64_t x, bool is_bool) {
  int64_t xs[SHLO_MAX_RANK];
  for (int i = 0; i < n && i < SHLO_MAX_RANK; i++) xs[i] = x;
  return ints_attr(r, xs, n < SHLO_MAX_RANK ? n : SHLO_MAX_RANK, is_bool);
}

static int enum_attr(raiser *r, const char *kind, const char *value) {
  int code = shlo__vhlo_enum_attr_code(kind);
  int v = shlo__vhlo_enum_value(kind, value);
  if (code < 0 || v < 0)
    shlo__bw_fail(&r->w, SHLO_EUNSUPPORTED, "unknown %s value %s", kind, value);
  uint64_t x = (uint64_t)v;
  return simple_attr(r, (uint64_t)code, 1, &x);
}

/* The enum kind an attribute name holds. */
static const char *enum_kind_of(const char *name, const shlo_attr *a) {
  if (a->enum_kind) return a->enum_kind;
  if (!strcmp(name, "compare_type")) return "comparison_type";
  if (!strcmp(name, "transpose_a")) return "transpose";
  if (!strcmp(name, "precision_config")) return "precision";
  return name;
}

static int generic_attr(raiser *r, const char *name, const shlo_attr *a,
                        bool in_vhlo);

static int dict_attr(raiser *r, const shlo_attr *a, bool in_vhlo) {
  int keys[256], vals[256];
  if (a->n > 256)
    shlo__bw_fail(&r->w, SHLO_EUNSUPPORTED, "dictionary with %d entries", a->n);
  for (int i = 0; i < a->n; i++) {
    keys[i] = in_vhlo ? string_attr(r, a->fields[i].name)
                      : builtin_string(r, a->fields[i].name);
    vals[i] = generic_attr(r, a->fields[i].name, a->fields[i].value, in_vhlo);
  }
  bw_buf b = {0};
  shlo__bw_varint(&r->w, &b, in_vhlo ? VA_DICT_C : 1);
  shlo__bw_varint(&r->w, &b, (uint64_t)a->n);
  for (int i = 0; i < a->n; i++) {
    shlo__bw_varint(&r->w, &b, (uint64_t)keys[i]);
    shlo__bw_varint(&r->w, &b, (uint64_t)vals[i]);
  }
  int i = shlo__bw_attr(&r->w, in_vhlo ? "vhlo" : "builtin", &b);
  shlo__bw_buf_free(&b);
  return i;
}

static int64_t field_int(const shlo_attr *s, const char *name) {
  int64_t v = 0;
  shlo_attr_get_i64(shlo_attr_field(s, name), &v);
  return v;
}

static int field_list(raiser *r, const shlo_attr *s, const char *name) {
  int64_t xs[SHLO_MAX_RANK * 4];
  int n = shlo_attr_i64s(shlo_attr_field(s, name), xs, SHLO_MAX_RANK * 4);
  return ints_attr(r, xs, n < 0 ? 0 : n, false);
}

static int alias_attr(raiser *r, const shlo_attr *a) {
  int64_t out[SHLO_MAX_RANK], opd[SHLO_MAX_RANK];
  int n = shlo_attr_i64s(shlo_attr_field(a, "output_tuple_indices"), out,
                         SHLO_MAX_RANK);
  int k = shlo_attr_i64s(shlo_attr_field(a, "operand_tuple_indices"), opd,
                         SHLO_MAX_RANK);
  bw_buf b = {0};
  shlo__bw_varint(&r->w, &b, VA_ALIAS_C);
  shlo__bw_varint(&r->w, &b, (uint64_t)(n < 0 ? 0 : n));
  for (int i = 0; i < n; i++) shlo__bw_svarint(&r->w, &b, out[i]);
  shlo__bw_svarint(&r->w, &b, field_int(a, "operand_index"));
  shlo__bw_varint(&r->w, &b, (uint64_t)(k < 0 ? 0 : k));
  for (int i = 0; i < k; i++) shlo__bw_svarint(&r->w, &b, opd[i]);
  int i = shlo__bw_attr(&r->w, "vhlo", &b);
  shlo__bw_buf_free(&b);
  return i;
}

static int accuracy_attr(raiser *r, double atol, double rtol, int64_t ulps,
                         const char *mode) {
  int m = enum_attr(r, "result_accuracy_mode", mode);
  int64_t at, rt;
  memcpy(&at, &atol, 8);
  memcpy(&rt, &rtol, 8);
  bw_buf b = {0};
  shlo__bw_varint(&r->w, &b, VA_ACCURACY_C);
  shlo__bw_svarint(&r->w, &b, at);
  shlo__bw_svarint(&r->w, &b, rt);
  shlo__bw_svarint(&r->w, &b, ulps);
  shlo__bw_varint(&r->w, &b, (uint64_t)m);
  int i = shlo__bw_attr(&r->w, "vhlo", &b);
  shlo__bw_buf_free(&b);
  return i;
}

/* The mode of a result_accuracy, kept by the parser as its text. */
static const char *accuracy_mode(const shlo_attr *a) {
  const shlo_attr *m = shlo_attr_field(a, "mode");
  const char *text = m ? (m->kind == SHLO_ATTR_OPAQUE ? m->str
                                                       : shlo_attr_get_str(m))
                       : NULL;
  static const char *const modes[] = {"TOLERANCE", "HIGHEST", "DEFAULT"};
  for (int i = 0; text && i < 3; i++)
    if (strstr(text, modes[i])) return modes[i];
  return "DEFAULT";
}

/* #stablehlo.axis_ref<name = "x"[, sub_axis_info = (1)2]>: VHLO code 22,
 * its sub-axis info code 21. */
static int axis_ref_attr(raiser *r, const shlo_attr *a) {
  const shlo_attr *nm = shlo_attr_field(a, "name");
  const shlo_attr *sub = shlo_attr_field(a, "sub_axis_info");
  if (!nm || !shlo_attr_get_str(nm))
    shlo__bw_fail(&r->w, SHLO_EUNSUPPORTED, "axis_ref without a name");
  int name = string_attr(r, shlo_attr_get_str(nm));
  int sub_ref = -1;
  if (sub) {
    long long pre, size;
    const char *text = sub->kind == SHLO_ATTR_OPAQUE ? sub->str
                                                      : shlo_attr_get_str(sub);
    if (!text || sscanf(text, " (%lld)%lld", &pre, &size) != 2)
      shlo__bw_fail(&r->w, SHLO_EUNSUPPORTED, "bad sub_axis_info");
    bw_buf b = {0};
    shlo__bw_varint(&r->w, &b, 21);
    shlo__bw_svarint(&r->w, &b, pre);
    shlo__bw_svarint(&r->w, &b, size);
    sub_ref = shlo__bw_attr(&r->w, "vhlo", &b);
  }
  bw_buf b = {0};
  shlo__bw_varint(&r->w, &b, 22);
  shlo__bw_varint(&r->w, &b, (uint64_t)name);
  shlo__bw_varint(&r->w, &b, sub_ref >= 0);
  if (sub_ref >= 0) shlo__bw_varint(&r->w, &b, (uint64_t)sub_ref);
  return shlo__bw_attr(&r->w, "vhlo", &b);
}

/* #stablehlo.replica_group_mesh_axes<mesh = @m, axes = [...]>: code 23. */
static int mesh_axes_attr(raiser *r, const shlo_attr *a) {
  const shlo_attr *mesh = shlo_attr_field(a, "mesh");
  const shlo_attr *axes = shlo_attr_field(a, "axes");
  if (!mesh || !shlo_attr_get_str(mesh) || !axes ||
      axes->kind != SHLO_ATTR_ARRAY || axes->n > 64)
    shlo__bw_fail(&r->w, SHLO_EUNSUPPORTED, "malformed replica_group_mesh_axes");
  int m = string_attr(r, shlo_attr_get_str(mesh)), items[64];
  for (int i = 0; i < axes->n; i++) {
    const shlo_attr *ax = axes->items[i];
    if (ax->kind != SHLO_ATTR_STRUCT)
      shlo__bw_fail(&r->w, SHLO_EUNSUPPORTED, "bad axis reference");
    items[i] = axis_ref_attr(r, ax);
  }
  int arr = array_attr(r, items, axes->n);
  bw_buf b = {0};
  shlo__bw_varint(&r->w, &b, 23);
  shlo__bw_varint(&r->w, &b, (uint64_t)m);
  shlo__bw_varint(&r->w, &b, (uint64_t)arr);
  return shlo__bw_attr(&r->w, "vhlo", &b);
}

static int struct_attr(raiser *r, const char *name, const shlo_attr *a,
                       bool in_vhlo) {
  if (!a->struct_name) return dict_attr(r, a, in_vhlo);
  if (!strcmp(a->struct_name, "replica_group_mesh_axes"))
    return mesh_axes_attr(r, a);
  if (!strcmp(a->struct_name, "output_operand_alias"))
    return alias_attr(r, a);
  if (!strcmp(a->struct_name, "result_accuracy")) {
    double atol = 0, rtol = 0;
    shlo_attr_get_f64(shlo_attr_field(a, "atol"), &atol);
    shlo_attr_get_f64(shlo_attr_field(a, "rtol"), &rtol);
    return accuracy_attr(r, atol, rtol, field_int(a, "ulps"),
                         accuracy_mode(a));
  }
  shlo__bw_fail(&r->w, SHLO_EUNSUPPORTED,
          "attribute %s (#stablehlo.%s) has no VHLO form here", name,
          a->struct_name);
}

/* An attribute of an unregistered op that VHLO has no form for, as its
 * generic text (MLIR bytecode's fallback for any attribute). */
static int text_attr(raiser *r, const shlo_attr *a) {
  strbuf b = {0};
  shlo__print_attr(&b, a);
  char *text = shlo__sb_take(&b);
  if (!text) shlo__bw_fail(&r->w, SHLO_ENOMEM, "out of memory");
  char *kept = shlo__bw_alloc(&r->w, strlen(text) + 1);
  strcpy(kept, text);
  free(text);
  return shlo__bw_attr_text(&r->w, "builtin", kept);
}

static int generic_attr(raiser *r, const char *name, const shlo_attr *a,
                        bool in_vhlo) {
  if (++r->depth > BC_MAX_DEPTH)
    shlo__bw_fail(&r->w, SHLO_EUNSUPPORTED,
            "regions, types or attributes nested deeper than %d (the "
            "limit)", BC_MAX_DEPTH);
  int i, items[1024];
  bw_buf b = {0};
  switch (a->kind) {
  case SHLO_ATTR_UNIT:
    shlo__bw_varint(&r->w, &b, 7);
    i = shlo__bw_attr(&r->w, "builtin", &b);
    break;
  case SHLO_ATTR_BOOL: i = bool_attr(r, a->b); break;
  case SHLO_ATTR_INT:
    i = int_attr(r, a->type ? a->type->elem : SHLO_SI64, a->i);
    break;
  case SHLO_ATTR_FLOAT:
    i = float_attr(r, a->type ? a->type->elem : SHLO_F64, a->f);
    break;
  case SHLO_ATTR_STRING: i = string_attr(r, a->str); break;
  case SHLO_ATTR_SYMBOL:
    if (in_vhlo) {
      i = string_attr(r, a->str);
    } else {
      int s = builtin_string(r, a->str);
      shlo__bw_varint(&r->w, &b, 4);
      shlo__bw_varint(&r->w, &b, (uint64_t)s);
      i = shlo__bw_attr(&r->w, "builtin", &b);
    }
    break;
  case SHLO_ATTR_TYPE: i = type_attr(r, vtype_of(r, a->type)); break;
  case SHLO_ATTR_ARRAY:
    if (a->n > 1024)
      shlo__bw_fail(&r->w, SHLO_EUNSUPPORTED, "array of %d attributes", a->n);
    for (int k = 0; k < a->n; k++)
      items[k] = generic_attr(r, name, a->items[k], in_vhlo);
    i = array_attr(r, items, a->n);
    break;
  case SHLO_ATTR_DENSE_ARRAY:
    if (shlo_elem_is_float(a->elem))
      shlo__bw_fail(&r->w, SHLO_EUNSUPPORTED, "float dense array %s", name);
    i = ints_attr(r, a->ints, a->n, a->elem == SHLO_I1);
    break;
  case SHLO_ATTR_DENSE:
    i = tensor_attr(r, a->type, a->dense->data, a->dense->nbytes,
                    a->dense->numel);
    break;
  case SHLO_ATTR_ENUM:
    if (!a->enum_kind && shlo__vhlo_enum_attr_code(enum_kind_of(name, a)) < 0) {
      i = type_attr(r, named_type(r, a->str)); /* a bare type: tf32, f32 */
      break;
    }
    i = enum_attr(r, enum_kind_of(name, a), a->str);
    break;
  case SHLO_ATTR_STRUCT:
    i = !in_vhlo && a->struct_name && strcmp(a->struct_name, "result_accuracy")
            ? text_attr(r, a)
            : struct_attr(r, name, a, in_vhlo);
    break;
  default:
    if (!in_vhlo) {
      i = text_attr(r, a);
      break;
    }
    shlo__bw_fail(&r->w, SHLO_EUNSUPPORTED,
            "attribute %s = %s has no VHLO form in this writer", name,
            a->kind == SHLO_ATTR_OPAQUE ? a->str : "(dimension numbers)");
  }
  shlo__bw_buf_free(&b);
  r->depth--;
  return i;
}

/* ---- per-op reshaping (the inverse of vhlo_lower.c) ---- */

static const char *const gather_fields[] = {
    "offset_dims", "collapsed_slice_dims", "operand_batching_dims",
    "start_indices_batching_dims", "start_index_map"};
static const char *const scatter_fields[] = {
    "update_window_dims", "inserted_window_dims", "input_batching_dims",
    "scatter_indices_batching_dims", "scatter_dims_to_operand_dims"};
static const char *const dot_fields[] = {
    "lhs_batching_dimensions", "rhs_batching_dimensions",
    "lhs_contracting_dimensions", "rhs_contracting_dimensions"};

/* Flatten a #stablehlo.gather/scatter/dot<...>: lists left empty are left
 * out (the defaults fill them), so an older op version without them is
 * still chosen. */
static void flatten(raiser *r, vattrs *out, const shlo_attr *s,
                    const char *const *fields, int n, bool with_ivd) {
  for (int i = 0; i < n; i++) {
    int64_t xs[1];
    if (shlo_attr_i64s(shlo_attr_field(s, fields[i]), xs, 1) > 0)
      put(r, out, fields[i], field_list(r, s, fields[i]));
  }
  if (with_ivd)
    put(r, out, "index_vector_dim",
        int_attr(r, SHLO_SI64, field_int(s, "index_vector_dim")));
}

static void flatten_conv(raiser *r, vattrs *out, const shlo_attr *a) {
  static const char *const names[] = {
      "input_batch_dimension", "input_feature_dimension",
      "kernel_input_feature_dimension", "kernel_output_feature_dimension",
      "output_batch_dimension", "output_feature_dimension"};
  const int64_t vals[] = {a->conv_in_batch, a->conv_in_feature,
                          a->conv_k_in,     a->conv_k_out,
                          a->conv_out_batch, a->conv_out_feature};
  for (int i = 0; i < 6; i++) put(r, out, names[i], int_attr(r, SHLO_SI64, vals[i]));
  put(r, out, "input_spatial_dimensions",
      ints_attr(r, a->conv_in_spatial, a->conv_n_spatial, false));
  put(r, out, "kernel_spatial_dimensions",
      ints_attr(r, a->conv_k_spatial, a->conv_n_spatial, false));
  put(r, out, "output_spatial_dimensions",
      ints_attr(r, a->conv_out_spatial, a->conv_n_spatial, false));
}

/* A dot algorithm's precision type: a type, or a bare name. */
static int algorithm_type(raiser *r, const shlo_attr *s, const char *field) {
  const shlo_attr *t = shlo_attr_field(s, field);
  if (t && t->kind == SHLO_ATTR_TYPE) return vtype_of(r, t->type);
  const char *name = t ? shlo_attr_get_str(t) : NULL;
  if (!name) shlo__bw_fail(&r->w, SHLO_EUNSUPPORTED, "dot algorithm without %s",
                     field);
  return named_type(r, name);
}

static void flatten_algorithm(raiser *r, vattrs *out, const shlo_attr *s) {
  static const char *const types[] = {"lhs_precision_type",
                                      "rhs_precision_type",
                                      "accumulation_type"};
  static const char *const ints[] = {"lhs_component_count",
                                     "rhs_component_count",
                                     "num_primitive_operations"};
  for (int i = 0; i < 3; i++) {
    put(r, out, types[i], type_attr(r, algorithm_type(r, s, types[i])));
  }
  for (int i = 0; i < 3; i++)
    put(r, out, ints[i], int_attr(r, SHLO_SI64, field_int(s, ints[i])));
  const shlo_attr *ai = shlo_attr_field(s, "allow_imprecise_accumulation");
  put(r, out, "allow_imprecise_accumulation", bool_attr(r, ai && ai->b));
}

/* Default-valued attributes that VHLO would store anyway: leave them to
 * the defaults, so they do not force a newer op version. */
static bool is_default_accuracy(const shlo_attr *a) {
  double atol = 1, rtol = 1;
  return a->kind == SHLO_ATTR_STRUCT && a->struct_name &&
         !strcmp(a->struct_name, "result_accuracy") &&
         shlo_attr_get_f64(shlo_attr_field(a, "atol"), &atol) && !atol &&
         shlo_attr_get_f64(shlo_attr_field(a, "rtol"), &rtol) && !rtol &&
         !field_int(a, "ulps") && !strcmp(accuracy_mode(a), "DEFAULT");
}

static void raise_attr(raiser *r, vattrs *out, const char *base,
                       const char *name, const shlo_attr *a) {
  if (!strcmp(name, "dimension_numbers") && a->kind == SHLO_ATTR_CONV_DIMS)
    flatten_conv(r, out, a);
  else if (!strcmp(name, "dimension_numbers") && a->struct_name &&
           !strcmp(a->struct_name, "gather"))
    flatten(r, out, a, gather_fields, 5, true);
  else if (!strcmp(name, "scatter_dimension_numbers"))
    flatten(r, out, a, scatter_fields, 5, true);
  else if (!strcmp(name, "dot_dimension_numbers"))
    flatten(r, out, a, dot_fields, 4, false);
  else if (!strcmp(name, "algorithm"))
    flatten_algorithm(r, out, a);
  else if (!strcmp(name, "channel_handle")) {
    put(r, out, "channel_id", int_attr(r, SHLO_SI64, field_int(a, "handle")));
    if (!strcmp(base, "send") || !strcmp(base, "recv"))
      put(r, out, "channel_type", int_attr(r, SHLO_SI64, field_int(a, "type")));
  } else if (a->kind == SHLO_ATTR_UNIT)
    put(r, out, name, bool_attr(r, true)); /* use_global_device_ids, ... */
  else if (!strcmp(name, "padding") && a->kind == SHLO_ATTR_DENSE_ARRAY &&
           !(a->n % 2) && a->n <= 2 * SHLO_MAX_RANK) {
    shlo_type t = {.kind = SHLO_TYPE_TENSOR, .elem = SHLO_SI64, .rank = 2,
                   .dims = {a->n / 2, 2}};
    put(r, out, name, tensor_attr(r, &t, a->ints, sizeof(int64_t) *
                                                      (size_t)a->n, a->n));
  } else if (!strcmp(name, "api_version") && a->kind == SHLO_ATTR_INT) {
    uint64_t v = (uint64_t)a->i;
    put(r, out, name, simple_attr(r, 5, 1, &v));
  } else if (!strcmp(name, "result_accuracy") && is_default_accuracy(a))
    return;
  else
    put(r, out, name, generic_attr(r, name, a, true));
}

/* ---- defaults: what StableHLO means when an attribute is left out ---- */

static int spatial_rank(raiser *r, const shlo_op *op, const char *base,
                        const vattrs *have) {
  (void)have;
  if (!strcmp(base, "convolution") || !strcmp(base, "dynamic_conv")) {
    const shlo_attr *d = shlo_op_attr(op, "dimension_numbers");
    return d && d->kind == SHLO_ATTR_CONV_DIMS ? d->conv_n_spatial : 0;
  }
  if (op->n_operands < 1) return 0;
  const shlo_type *t = r->f->value_types[op->operands[0]];
  return t->kind == SHLO_TYPE_TENSOR && t->rank > 0 ? t->rank : 0;
}

static bool listed(const char *list, const char *name) {
  size_t n = strlen(name);
  for (const char *p = list; (p = strstr(p, name)); p += n)
    if ((p == list || p[-1] == ' ') && (p[n] == ' ' || !p[n])) return true;
  return false;
}

static int default_attr(raiser *r, const shlo_op *op, const char *base,
                        const char *name, const vattrs *have) {
  static const char *const bools =
      "indices_are_sorted unique_indices is_stable has_side_effect "
      "is_host_transfer lower left_side unit_diagonal use_global_device_ids "
      "has_dynamic_root allow_imprecise_accumulation";
  static const char *const empty_lists =
      "offset_dims collapsed_slice_dims operand_batching_dims "
      "start_indices_batching_dims start_index_map update_window_dims "
      "inserted_window_dims input_batching_dims scatter_indices_batching_dims "
      "scatter_dims_to_operand_dims lhs_batching_dimensions "
      "rhs_batching_dimensions lhs_contracting_dimensions "
      "rhs_contracting_dimensions known_expanding_dimensions "
      "known_nonexpanding_dimensions";
  static const char *const empty_arrays =
      "precision_config called_computations operand_layouts result_layouts "
      "output_operand_aliases result_tilings layout";
  static const char *const ones =
      "window_strides base_dilations window_dilations lhs_dilation "
      "rhs_dilation";
  if (listed(bools, name)) return bool_attr(r, false);
  if (listed(empty_lists, name)) return ints_attr(r, NULL, 0, false);
  if (listed(empty_arrays, name)) return array_attr(r, NULL, 0);
  int rank = spatial_rank(r, op, base, have);
  if (listed(ones, name)) return fill_attr(r, rank, 1, false);
  if (!strcmp(name, "window_reversal")) return fill_attr(r, rank, 0, true);
  if (!strcmp(name, "padding") || !strcmp(name, "source_target_pairs")) {
    int n = !strcmp(name, "padding") ? rank : 0;
    int64_t zeros[2 * SHLO_MAX_RANK] = {0};
    shlo_type t = {.kind = SHLO_TYPE_TENSOR, .elem = SHLO_SI64, .rank = 2,
                   .dims = {n, 2}};
    return tensor_attr(r, &t, zeros, sizeof(int64_t) * 2 * (size_t)n, 2 * n);
  }
  if (!strcmp(name, "channel_id") || !strcmp(name, "channel_type"))
    return int_attr(r, SHLO_SI64, 0);
  if (!strcmp(name, "feature_group_count") ||
      !strcmp(name, "batch_group_count"))
    return int_attr(r, SHLO_SI64, 1);
  if (!strcmp(name, "compare_type")) return enum_attr(r, "comparison_type",
                                                      "NOTYPE");
  if (!strcmp(name, "rng_algorithm")) return enum_attr(r, "rng_algorithm",
                                                       "DEFAULT");
  if (!strcmp(name, "api_version")) {
    uint64_t v = 1; /* API_VERSION_ORIGINAL */
    return simple_attr(r, 5, 1, &v);
  }
  if (!strcmp(name, "backend_config") || !strcmp(name, "infeed_config") ||
      !strcmp(name, "outfeed_config"))
    return string_attr(r, "");
  if (!strcmp(name, "result_accuracy"))
    return accuracy_attr(r, 0, 0, 0, "DEFAULT");
  if (!strcmp(name, "lhs_precision_type") ||
      !strcmp(name, "rhs_precision_type") ||
      !strcmp(name, "accumulation_type")) {
    bw_buf b = {0};
    shlo__bw_varint(&r->w, &b, 33); /* none_v1 */
    int t = shlo__bw_type(&r->w, "vhlo", &b);
    shlo__bw_buf_free(&b);
    return type_attr(r, t);
  }
  if (!strcmp(name, "lhs_component_count") ||
      !strcmp(name, "rhs_component_count") ||
      !strcmp(name, "num_primitive_operations"))
    return int_attr(r, SHLO_SI64, 0);
  if (!strcmp(base, "sort") && !strcmp(name, "dimension"))
    return int_attr(r, SHLO_SI64, -1);
  if (!strcmp(base, "composite") && !strcmp(name, "version"))
    return int_attr(r, SHLO_SI32, 0);
  if (!strcmp(name, "composite_attributes")) {
    shlo_attr empty = {.kind = SHLO_ATTR_STRUCT};
    return dict_attr(r, &empty, true);
  }
  shlo__bw_fail(&r->w, SHLO_EUNSUPPORTED, "stablehlo.%s needs attribute %s", base,
          name);
}

/* ---- the IR ---- */

static int attr_dict(raiser *r, const shlo_named_attr *a, int n,
                     bool in_vhlo);

static void write_region(raiser *r, bw_buf *ir, const shlo_block *blk,
                         bool in_func);

/* Discardable attributes (named dialect.name, e.g. mhlo.sharding) are not
 * the op's own: VHLO keeps them in the op's attribute dictionary. */
static bool discardable(const char *name) { return strchr(name, '.'); }

static int op_dict(raiser *r, const shlo_op *op) {
  shlo_named_attr *d = shlo__bw_alloc(&r->w, sizeof *d * ((size_t)op->n_attrs + 1));
  int n = 0;
  for (int i = 0; i < op->n_attrs; i++)
    if (discardable(op->attrs[i].name)) d[n++] = op->attrs[i];
  return n ? attr_dict(r, d, n, true) : -1;
}

static int op_props(raiser *r, const shlo_op *op, const char *base,
                    const vhlo_op_def *def) {
  vattrs have = {0};
  for (int i = 0; i < op->n_attrs; i++)
    if (!discardable(op->attrs[i].name))
      raise_attr(r, &have, base, op->attrs[i].name, op->attrs[i].value);
  char buf[1024];
  const char *names[VHLO_MAX_OP_ATTRS];
  int k = shlo__vhlo_op_attr_names(def, true, buf, sizeof buf, names,
                             VHLO_MAX_OP_ATTRS);
  if (k < 0) shlo__bw_fail(&r->w, SHLO_EUNSUPPORTED, "vhlo.%s: bad table", def->name);
  for (int i = 0; i < have.n; i++) {
    bool known = false;
    for (int j = 0; j < k && !known; j++) known = !strcmp(names[j], have.v[i].name);
    if (known) continue;
    char at[32];
    shlo__vhlo_version_format(r->target, at, sizeof at);
    shlo__bw_fail(&r->w, SHLO_EUNSUPPORTED,
            "stablehlo.%s: attribute %s does not exist in vhlo.%s, the op's "
            "form at StableHLO %s", base, have.v[i].name, def->name, at);
  }
  bw_buf p = {0};
  for (int j = 0; j < k; j++) {
    int a = -1;
    for (int i = 0; i < have.n; i++)
      if (!strcmp(names[j], have.v[i].name)) a = have.v[i].attr;
    if (a < 0) a = default_attr(r, op, base, names[j], &have);
    shlo__bw_varint(&r->w, &p, (uint64_t)a);
  }
  int i = shlo__bw_props(&r->w, &p);
  shlo__bw_buf_free(&p);
  return i;
}

/* The VHLO base name of a StableHLO op (the op table's vhlo column), or
 * NULL for another dialect.  A stablehlo op the table gives no VHLO form
 * keeps its own name, so that it is refused by that name below. */
static const char *vhlo_base(const shlo_op *op) {
  const char *base = shlo__op_vhlo((shlo_opcode)op->code);
  if (base) return base;
  if (!strncmp(op->name, "stablehlo.", 10)) return op->name + 10;
  return NULL;
}

static int attr_dict(raiser *r, const shlo_named_attr *a, int n,
                     bool in_vhlo) {
  shlo_attr d = {.kind = SHLO_ATTR_STRUCT, .n = n,
                 .fields = (shlo_named_attr *)a};
  return dict_attr(r, &d, in_vhlo);
}

static void write_op(raiser *r, bw_buf *ir, const shlo_op *op) {
  const char *base = vhlo_base(op);
  int name, attrs = -1, props = -1;
  if (base) {
    vhlo_version oldest;
    const vhlo_op_def *def = shlo__vhlo_op_at(base, r->target, &oldest);
    if (!def) {
      char at[32], since[32];
      shlo__vhlo_version_format(r->target, at, sizeof at);
      shlo__vhlo_version_format(oldest, since, sizeof since);
      if (oldest)
        shlo__bw_fail(&r->w, SHLO_EUNSUPPORTED,
                "%s does not exist at StableHLO %s (vhlo.%s_v1 is from %s)",
                op->name, at, base, since);
      shlo__bw_fail(&r->w, SHLO_EUNSUPPORTED, "%s has no VHLO form", op->name);
    }
    name = shlo__bw_opname(&r->w, "vhlo", def->name, true);
    /* An op whose VHLO form has no attributes still goes through
     * op_props when it carries some of its own, so that they are refused
     * by name rather than dropped. */
    bool own_attrs = false;
    for (int i = 0; i < op->n_attrs && !own_attrs; i++)
      own_attrs = !discardable(op->attrs[i].name);
    if (*def->attrs || own_attrs) props = op_props(r, op, base, def);
    attrs = op_dict(r, op);
  } else {
    const char *dot = strchr(op->name, '.');
    if (!dot || dot == op->name || !dot[1])
      shlo__bw_fail(&r->w, SHLO_EUNSUPPORTED, "op name %s has no dialect", op->name);
    char dialect[64];
    snprintf(dialect, sizeof dialect, "%.*s", (int)(dot - op->name), op->name);
    name = shlo__bw_opname(&r->w, dialect, dot + 1, false);
    if (op->n_attrs) attrs = attr_dict(r, op->attrs, op->n_attrs, false);
  }
  int types[256];
  if (op->n_results > 256)
    shlo__bw_fail(&r->w, SHLO_EUNSUPPORTED, "%s has too many results", op->name);
  for (int i = 0; i < op->n_results; i++)
    types[i] = vtype_of(r, r->f->value_types[op->results[i]]);
  uint8_t mask = (uint8_t)((attrs >= 0 ? 0x01 : 0) |
                           (op->n_results ? 0x02 : 0) |
                           (op->n_operands ? 0x04 : 0) |
                           (op->n_regions ? 0x10 : 0) |
                           (props >= 0 ? 0x40 : 0));
  shlo__bw_varint(&r->w, ir, (uint64_t)name);
  shlo__bw_byte(&r->w, ir, mask);
  shlo__bw_varint(&r->w, ir, (uint64_t)r->loc);
  if (attrs >= 0) shlo__bw_varint(&r->w, ir, (uint64_t)attrs);
  if (props >= 0) shlo__bw_varint(&r->w, ir, (uint64_t)props);
  if (op->n_results) {
    shlo__bw_varint(&r->w, ir, (uint64_t)op->n_results);
    for (int i = 0; i < op->n_results; i++)
      shlo__bw_varint(&r->w, ir, (uint64_t)types[i]);
  }
  if (op->n_operands) {
    shlo__bw_varint(&r->w, ir, (uint64_t)op->n_operands);
    for (int i = 0; i < op->n_operands; i++)
      shlo__bw_varint(&r->w, ir, (uint64_t)r->ids[op->operands[i]]);
  }
  if (op->n_regions) {
    if (++r->depth > BC_MAX_DEPTH)
      shlo__bw_fail(&r->w, SHLO_EUNSUPPORTED,
              "regions, types or attributes nested deeper than %d (the "
              "limit)", BC_MAX_DEPTH);
    shlo__bw_varint(&r->w, ir, (uint64_t)op->n_regions << 1);
    for (int i = 0; i < op->n_regions; i++)
      write_region(r, ir, op->regions[i], false);
    r->depth--;
  }
}

/* One region of one block: its values are numbered first (nested regions
 * number theirs after them), then its ops follow. */
static void write_region(raiser *r, bw_buf *ir, const shlo_block *blk,
                         bool in_func) {
  (void)in_func;
  int base = r->next, k = 0;
  for (int i = 0; i < blk->n_args; i++) r->ids[blk->args[i]] = base + k++;
  for (int i = 0; i < blk->n_ops; i++)
    for (int j = 0; j < blk->ops[i]->n_results; j++)
      r->ids[blk->ops[i]->results[j]] = base + k++;
  r->next = base + k;
  shlo__bw_varint(&r->w, ir, 1); /* one block */
  shlo__bw_varint(&r->w, ir, (uint64_t)k);
  shlo__bw_varint(&r->w, ir, (uint64_t)blk->n_ops << 1 | (blk->n_args ? 1 : 0));
  if (blk->n_args) {
    shlo__bw_varint(&r->w, ir, (uint64_t)blk->n_args);
    for (int i = 0; i < blk->n_args; i++)
      shlo__bw_varint(&r->w, ir,
                (uint64_t)vtype_of(r, r->f->value_types[blk->args[i]]) << 1);
    shlo__bw_byte(&r->w, ir, 0); /* no use-list orders */
  }
  for (int i = 0; i < blk->n_ops; i++) write_op(r, ir, blk->ops[i]);
  r->next = base;
}

static int dicts_attr(raiser *r, const shlo_attr *const *dicts, int n) {
  bool any = false;
  for (int i = 0; dicts && i < n; i++) any = any || dicts[i];
  if (!any) return array_attr(r, NULL, 0);
  int *items = shlo__bw_alloc(&r->w, sizeof *items * ((size_t)n + 1));
  shlo_attr empty = {.kind = SHLO_ATTR_STRUCT};
  for (int i = 0; i < n; i++)
    items[i] = dict_attr(r, dicts[i] ? dicts[i] : &empty, true);
  return array_attr(r, items, n);
}

static void write_func(raiser *r, bw_buf *ir, const shlo_func *f) {
  r->f = f;
  r->ids = shlo__bw_alloc(&r->w, sizeof *r->ids * ((size_t)f->n_values + 1));
  int ft = function_type(r, f->arg_types, f->n_args, f->result_types,
                         f->n_results);
  /* properties in sorted name order: arg_attrs function_type res_attrs
   * sym_name sym_visibility */
  int props[5] = {dicts_attr(r, f->arg_attrs, f->n_args), type_attr(r, ft),
                  dicts_attr(r, f->result_attrs, f->n_results),
                  string_attr(r, f->name),
                  string_attr(r, f->visibility ? f->visibility : "")};
  bw_buf p = {0};
  for (int i = 0; i < 5; i++) shlo__bw_varint(&r->w, &p, (uint64_t)props[i]);
  int pi = shlo__bw_props(&r->w, &p);
  shlo__bw_buf_free(&p);
  int attrs = -1;
  if (f->attrs && f->attrs->n)
    attrs = attr_dict(r, f->attrs->fields, f->attrs->n, true);
  shlo__bw_varint(&r->w, ir, (uint64_t)shlo__bw_opname(&r->w, "vhlo", "func_v1", true));
  shlo__bw_byte(&r->w, ir, (uint8_t)(0x50 | (attrs >= 0 ? 0x01 : 0)));
  shlo__bw_varint(&r->w, ir, (uint64_t)r->loc);
  if (attrs >= 0) shlo__bw_varint(&r->w, ir, (uint64_t)attrs);
  shlo__bw_varint(&r->w, ir, (uint64_t)pi);
  shlo__bw_varint(&r->w, ir, 1 << 1 | 1); /* one region, isolated */
  bw_buf body = {0};
  int saved = r->next;
  r->next = 0;
  if (f->body) {
    write_region(r, &body, f->body, true);
  } else {
    shlo__bw_varint(&r->w, &body, 0); /* a declaration: no blocks */
  }
  r->next = saved;
  shlo__bw_byte(&r->w, ir, 4); /* IR section of the isolated region */
  shlo__bw_varint(&r->w, ir, body.n);
  shlo__bw_bytes(&r->w, ir, body.p, body.n);
  shlo__bw_buf_free(&body);
}

static void write_module(raiser *r) {
  const shlo_module *m = r->m;
  bw_buf b = {0};
  shlo__bw_varint(&r->w, &b, 15); /* UnknownLoc */
  r->loc = shlo__bw_attr(&r->w, "builtin", &b);
  int name = shlo__bw_opname(&r->w, "builtin", "module", true);
  /* properties: optional sym_name, sym_visibility */
  shlo__bw_varint(&r->w, &b, m->name ? (uint64_t)builtin_string(r, m->name) << 1 | 1
                               : 0);
  shlo__bw_varint(&r->w, &b, 0);
  int props = shlo__bw_props(&r->w, &b);
  int attrs = -1;
  if (m->attrs && m->attrs->n)
    attrs = attr_dict(r, m->attrs->fields, m->attrs->n, false);
  bw_buf *ir = &r->w.ir;
  shlo__bw_varint(&r->w, ir, 1 << 1); /* top level: one op, no arguments */
  shlo__bw_varint(&r->w, ir, (uint64_t)name);
  shlo__bw_byte(&r->w, ir, (uint8_t)(0x50 | (attrs >= 0 ? 0x01 : 0)));
  shlo__bw_varint(&r->w, ir, (uint64_t)r->loc);
  if (attrs >= 0) shlo__bw_varint(&r->w, ir, (uint64_t)attrs);
  shlo__bw_varint(&r->w, ir, (uint64_t)props);
  shlo__bw_varint(&r->w, ir, 1 << 1 | 1);
  shlo__bw_varint(&r->w, &b, 1); /* one block, no values of its own */
  shlo__bw_varint(&r->w, &b, 0);
  shlo__bw_varint(&r->w, &b, (uint64_t)m->n_funcs << 1);
  for (int i = 0; i < m->n_funcs; i++) write_func(r, &b, m->funcs[i]);
  shlo__bw_byte(&r->w, ir, 4);
  shlo__bw_varint(&r->w, ir, b.n);
  shlo__bw_bytes(&r->w, ir, b.p, b.n);
  shlo__bw_buf_free(&b);
}

/* Everything that may unwind, apart from the caller's arguments (which
 * setjmp could clobber). */
static shlo_status run(raiser *r, void **out, size_t *len) {
  if (setjmp(r->w.on_error))
    return r->w.diag->code ? r->w.diag->code : SHLO_EUNSUPPORTED;
  write_module(r);
  uint8_t *bytes;
  shlo__bw_finish(&r->w, r->producer, &bytes, len);
  *out = bytes;
  return SHLO_OK;
}

shlo_status shlo_write_artifact(const shlo_module *m, const char *target,
                                void **out, size_t *len, shlo_diag *diag) {
  *out = NULL;
  *len = 0;
  shlo_diag local;
  if (!diag) diag = &local;
  shlo_diag_clear(diag);
  if (!target) target = SHLO_ARTIFACT_MAX_VERSION;
  vhlo_version v = shlo__vhlo_version_parse(target);
  if (v < shlo__vhlo_version_parse(SHLO_ARTIFACT_MIN_WRITE_VERSION) ||
      v > shlo__vhlo_version_parse(SHLO_ARTIFACT_MAX_VERSION))
    return shlo_diag_set(diag, SHLO_EUNSUPPORTED, NULL, 0, 0,
                         "target StableHLO version '%s': shlo writes "
                         "%s through %s", target,
                         SHLO_ARTIFACT_MIN_WRITE_VERSION,
                         SHLO_ARTIFACT_MAX_VERSION);
  raiser *r = shlo__calloc(1, sizeof *r);
  if (!r)
    return shlo_diag_set(diag, SHLO_ENOMEM, NULL, 0, 0, "out of memory");
  shlo__bw_begin(&r->w, diag);
  r->m = m;
  r->target = v;
  snprintf(r->producer, sizeof r->producer, "StableHLO_v%s", target);
  shlo_status st = run(r, out, len);
  shlo__bw_free(&r->w);
  shlo__free(r);
  return st;
}
