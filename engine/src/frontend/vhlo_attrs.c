/* SPDX-License-Identifier: Apache-2.0 */
/* Decoding of attribute and type entries (vhlo.h): the builtin dialect's
 * bytecode encoding (MLIR's BuiltinDialectBytecode) for the few builtin
 * attributes artifacts hold, and VHLO's own encoding (StableHLO's
 * VhloBytecode): a leading varint code, then the fields of that kind. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/floatfmt.h"
#include "frontend/vhlo.h"
#include "frontend/vhlo_lower.h"

#define KDYNAMIC INT64_MIN /* ShapedType::kDynamic */

void shlo__vhlo_ctx_init(vhlo_ctx *v, bc_file *f) {
  memset(v, 0, sizeof *v);
  v->f = f;
  v->attrs = shlo__bc_alloc(f, sizeof *v->attrs * (size_t)(f->n_attrs + 1));
  v->types = shlo__bc_alloc(f, sizeof *v->types * (size_t)(f->n_types + 1));
  memset(v->attrs, 0, sizeof *v->attrs * (size_t)(f->n_attrs + 1));
  memset(v->types, 0, sizeof *v->types * (size_t)(f->n_types + 1));
}

static char *dup_text(bc_file *f, const char *s) {
  size_t n = strlen(s);
  char *p = shlo__bc_alloc(f, n + 1);
  memcpy(p, s, n + 1);
  return p;
}

static vattr *new_attr(bc_file *f, vattr_kind k) {
  vattr *a = shlo__bc_alloc(f, sizeof *a);
  memset(a, 0, sizeof *a);
  a->kind = k;
  return a;
}

static vtype *new_type(bc_file *f, vtype_kind k) {
  vtype *t = shlo__bc_alloc(f, sizeof *t);
  memset(t, 0, sizeof *t);
  t->kind = k;
  return t;
}

int64_t shlo__vhlo_numel(const vtype *t) {
  if (t->kind != VT_TENSOR) return -1;
  int64_t n = 1;
  for (int i = 0; i < t->rank; i++) {
    if (t->dims[i] < 0 || (t->dims[i] && n > INT64_MAX / t->dims[i]))
      return -1;
    n *= t->dims[i];
  }
  return n;
}

void shlo__vhlo_print_float(strbuf *b, shlo_elem_type t, uint64_t bits) {
  unsigned char want[8] = {0}, got[8];
  size_t es = shlo_elem_size(t);
  memcpy(want, &bits, es); /* little-endian host */
  double v = shlo__float_load(t, want);
  if (v != v || v == 1.0 / 0.0 || v == -1.0 / 0.0) {
    shlo__sb_printf(b, "0x%0*llX", (int)(es * 2), (unsigned long long)bits);
    return;
  }
  char buf[64];
  for (int prec = 1; prec <= 17; prec++) {
    snprintf(buf, sizeof buf, "%.*e", prec - 1, v);
    memset(got, 0, sizeof got);
    shlo__float_store(t, strtod(buf, NULL), got);
    if (!memcmp(got, want, es)) break;
  }
  char *e = strchr(buf, 'e');
  if (e && !strchr(buf, '.')) /* the parser wants 1.0e-03, not 1e-03 */
    shlo__sb_printf(b, "%.*s.0%s", (int)(e - buf), buf, e);
  else shlo__sb_printf(b, "%s", buf);
}

/* ---- types ---- */

static const vtype *read_type_ref(vhlo_ctx *v, bc_cursor *c) {
  return shlo__vhlo_type(v, shlo__bc_index(c, v->f->n_types, "type"));
}

static const vattr *read_attr_ref(vhlo_ctx *v, bc_cursor *c) {
  return shlo__vhlo_attr(v, shlo__bc_index(c, v->f->n_attrs, "attribute"));
}

static vtype *elem_type(bc_file *f, shlo_elem_type e) {
  vtype *t = new_type(f, VT_ELEM);
  t->elem = e;
  t->text = shlo_elem_name(e);
  return t;
}

static void shape_text(strbuf *b, const int64_t *dims, int rank) {
  for (int i = 0; i < rank; i++) {
    if (dims[i] == KDYNAMIC) shlo__sb_printf(b, "?x");
    else shlo__sb_printf(b, "%lldx", (long long)dims[i]);
  }
}

strbuf *shlo__vhlo_buf(vhlo_ctx *v, bc_cursor *c) {
  if (v->n_bufs == VHLO_MAX_BUFS)
    shlo__bc_fail(c, "attributes nested deeper than %d (the limit)", BC_MAX_DEPTH);
  strbuf *b = &v->bufs[v->n_bufs++];
  *b = (strbuf){0};
  return b;
}

char *shlo__vhlo_buf_take(vhlo_ctx *v, bc_cursor *c, strbuf *b) {
  char *s = shlo__sb_take(b);
  v->n_bufs--; /* b is the newest buffer */
  if (!s) shlo__bc_fail(c, "out of memory");
  char *r = dup_text(v->f, s);
  free(s);
  return r;
}

void shlo__vhlo_ctx_free_bufs(vhlo_ctx *v) {
  for (int i = 0; i < v->n_bufs; i++) shlo__sb_free(&v->bufs[i]);
  v->n_bufs = 0;
}

static const vtype *read_tensor(vhlo_ctx *v, bc_cursor *c, bool encoded,
                                vtype_kind kind) {
  bc_file *f = v->f;
  const vattr *enc = encoded ? read_attr_ref(v, c) : NULL;
  vtype *t = new_type(f, kind);
  t->rank = shlo__bc_count(c, 1);
  if (t->rank > SHLO_MAX_RANK) shlo__bc_fail(c, "rank %d is too large", t->rank);
  t->dims = shlo__bc_alloc(f, sizeof *t->dims * (size_t)(t->rank + 1));
  for (int i = 0; i < t->rank; i++) {
    t->dims[i] = shlo__bc_svarint(c);
    if (t->dims[i] < 0 && t->dims[i] != KDYNAMIC)
      shlo__bc_fail(c, "negative dimension %lld", (long long)t->dims[i]);
  }
  t->elem_t = read_type_ref(v, c);
  strbuf *b = shlo__vhlo_buf(v, c);
  shlo__sb_printf(b, kind == VT_BUFFER ? "memref<" : "tensor<");
  shape_text(b, t->dims, t->rank);
  shlo__sb_printf(b, "%s", t->elem_t->text);
  if (enc && enc->kind == VA_BOUNDS) {
    shlo__sb_printf(b, ", #stablehlo.type_extensions<bounds = [");
    for (int i = 0; i < enc->n; i++) {
      if (i) shlo__sb_printf(b, ", ");
      if (enc->ints[i] == KDYNAMIC) shlo__sb_printf(b, "?");
      else shlo__sb_printf(b, "%lld", (long long)enc->ints[i]);
    }
    shlo__sb_printf(b, "]>");
  } else if (enc) {
    shlo__bc_fail(c, "unsupported tensor encoding");
  }
  shlo__sb_printf(b, ">");
  t->text = shlo__vhlo_buf_take(v, c, b);
  return t;
}

static const vtype **read_type_list(vhlo_ctx *v, bc_cursor *c, int *n) {
  *n = shlo__bc_count(c, 1);
  const vtype **ts = shlo__bc_alloc(v->f, sizeof *ts * (size_t)(*n + 1));
  for (int i = 0; i < *n; i++) ts[i] = read_type_ref(v, c);
  return ts;
}

static void type_list_text(strbuf *b, const vtype **ts, int n) {
  for (int i = 0; i < n; i++)
    shlo__sb_printf(b, "%s%s", i ? ", " : "", ts[i]->text);
}

static const vtype *read_function(vhlo_ctx *v, bc_cursor *c) {
  vtype *t = new_type(v->f, VT_FUNCTION);
  t->in = read_type_list(v, c, &t->n_in);
  t->out = read_type_list(v, c, &t->n_out);
  strbuf *b = shlo__vhlo_buf(v, c);
  shlo__sb_printf(b, "(");
  type_list_text(b, t->in, t->n_in);
  shlo__sb_printf(b, ") -> (");
  type_list_text(b, t->out, t->n_out);
  shlo__sb_printf(b, ")");
  t->text = shlo__vhlo_buf_take(v, c, b);
  return t;
}

/* !quant.uniform<storage<min:max>:expressed[:axis], scale:zero_point> */
static const vtype *read_quant(vhlo_ctx *v, bc_cursor *c, bool per_axis) {
  bc_file *f = v->f;
  uint64_t flags = shlo__bc_varint(c);
  const vtype *st = read_type_ref(v, c), *et = read_type_ref(v, c);
  strbuf *b = shlo__vhlo_buf(v, c);
  if (st->kind != VT_ELEM) shlo__bc_fail(c, "bad quantized storage type");
  shlo_elem_type se = st->elem;
  bool is_signed = flags & 1;
  unsigned width = shlo_elem_bits(se);
  const char *sname = st->text;
  char tmp[16];
  if (sname[0] == 'u' || sname[0] == 'i') {
    snprintf(tmp, sizeof tmp, "%s%u", is_signed ? "i" : "u", width);
    sname = tmp;
  }
  int64_t lo, hi, axis = 0;
  double scale = 0;
  int64_t zp = 0;
  int n_scales = 0;
  double *scales = NULL;
  int64_t *zps = NULL;
  if (per_axis) {
    axis = (int64_t)shlo__bc_varint(c);
    lo = shlo__bc_svarint(c);
    hi = shlo__bc_svarint(c);
    n_scales = shlo__bc_count(c, 1);
    scales = shlo__bc_alloc(f, sizeof *scales * (size_t)(n_scales + 1));
    for (int i = 0; i < n_scales; i++) {
      uint64_t u = (uint64_t)shlo__bc_svarint(c);
      memcpy(&scales[i], &u, 8);
    }
    int nz = shlo__bc_count(c, 1);
    if (nz != n_scales) shlo__bc_fail(c, "scales and zero points differ in count");
    zps = shlo__bc_alloc(f, sizeof *zps * (size_t)(nz + 1));
    for (int i = 0; i < nz; i++) zps[i] = shlo__bc_svarint(c);
  } else {
    uint64_t u = (uint64_t)shlo__bc_svarint(c);
    memcpy(&scale, &u, 8);
    zp = shlo__bc_svarint(c);
    lo = shlo__bc_svarint(c);
    hi = shlo__bc_svarint(c);
  }
  int64_t dlo = is_signed ? -((int64_t)1 << (width - 1)) : 0;
  int64_t dhi = is_signed ? ((int64_t)1 << (width - 1)) - 1
                          : (int64_t)(((uint64_t)1 << width) - 1);
  shlo__sb_printf(b, "!quant.uniform<%s", sname);
  if (lo != dlo || hi != dhi)
    shlo__sb_printf(b, "<%lld:%lld>", (long long)lo, (long long)hi);
  shlo__sb_printf(b, ":%s", et->text);
  if (per_axis) {
    shlo__sb_printf(b, ":%lld, {", (long long)axis);
    for (int i = 0; i < n_scales; i++)
      shlo__sb_printf(b, "%s%.17g:%lld", i ? "," : "", scales[i],
                      (long long)zps[i]);
    shlo__sb_printf(b, "}>");
  } else {
    shlo__sb_printf(b, ", %.17g:%lld>", scale, (long long)zp);
  }
  vtype *t = new_type(f, VT_QUANT);
  t->elem_t = st;
  t->text = shlo__vhlo_buf_take(v, c, b);
  return t;
}

static const shlo_elem_type vhlo_scalar[] = {
    [0] = SHLO_I1,          [2] = SHLO_BF16,        [3] = SHLO_F16,
    [4] = SHLO_F32,         [5] = SHLO_F64,         [6] = SHLO_F8E4M3FN,
    [7] = SHLO_F8E5M2,      [10] = SHLO_SI4,        [11] = SHLO_SI8,
    [12] = SHLO_SI16,       [13] = SHLO_SI32,       [14] = SHLO_SI64,
    [15] = SHLO_UI4,        [16] = SHLO_UI8,        [17] = SHLO_UI16,
    [18] = SHLO_UI32,       [19] = SHLO_UI64,       [27] = SHLO_F8E4M3FNUZ,
    [28] = SHLO_F8E5M2FNUZ, [29] = SHLO_F8E4M3B11FNUZ,
    [31] = SHLO_SI2,        [32] = SHLO_UI2,        [35] = SHLO_F8E4M3,
    [36] = SHLO_F8E3M4,     [37] = SHLO_F4E2M1FN,   [38] = SHLO_F6E2M3FN,
    [39] = SHLO_F6E3M2FN,   [40] = SHLO_F8E8M0FNU};
static const bool vhlo_scalar_set[41] = {
    [0] = 1,  [2] = 1,  [3] = 1,  [4] = 1,  [5] = 1,  [6] = 1,  [7] = 1,
    [10] = 1, [11] = 1, [12] = 1, [13] = 1, [14] = 1, [15] = 1, [16] = 1,
    [17] = 1, [18] = 1, [19] = 1, [27] = 1, [28] = 1, [29] = 1, [31] = 1,
    [32] = 1, [35] = 1, [36] = 1, [37] = 1, [38] = 1, [39] = 1, [40] = 1};

int shlo__vhlo_scalar_code(shlo_elem_type e) {
  for (int code = 0; code < 41; code++)
    if (vhlo_scalar_set[code] && vhlo_scalar[code] == e) return code;
  return -1;
}

static const vtype *read_vhlo_type(vhlo_ctx *v, bc_cursor *c) {
  bc_file *f = v->f;
  uint64_t code = shlo__bc_varint(c);
  if (code < 41 && vhlo_scalar_set[code])
    return elem_type(f, vhlo_scalar[code]);
  vtype *t;
  switch (code) {
  case 1: { /* complex */
    const vtype *e = read_type_ref(v, c);
    if (e->kind != VT_ELEM || (e->elem != SHLO_F32 && e->elem != SHLO_F64))
      shlo__bc_fail(c, "unsupported complex element type");
    return elem_type(f, e->elem == SHLO_F32 ? SHLO_C64 : SHLO_C128);
  }
  case 8: return read_function(v, c);
  case 9: return elem_type(f, SHLO_INDEX);
  case 20: return read_tensor(v, c, false, VT_TENSOR);
  case 21: return read_tensor(v, c, true, VT_TENSOR);
  case 22:
    t = new_type(f, VT_TOKEN);
    t->text = "!stablehlo.token";
    return t;
  case 23: {
    t = new_type(f, VT_TUPLE);
    t->in = read_type_list(v, c, &t->n_in);
    strbuf *b = shlo__vhlo_buf(v, c);
    shlo__sb_printf(b, "tuple<");
    type_list_text(b, t->in, t->n_in);
    shlo__sb_printf(b, ">");
    t->text = shlo__vhlo_buf_take(v, c, b);
    return t;
  }
  case 24: return read_quant(v, c, false);
  case 30: return read_quant(v, c, true);
  case 25: {
    const vtype *e = read_type_ref(v, c);
    t = new_type(f, VT_UNRANKED);
    t->elem_t = e;
    strbuf *b = shlo__vhlo_buf(v, c);
    shlo__sb_printf(b, "tensor<*x%s>", e->text);
    t->text = shlo__vhlo_buf_take(v, c, b);
    return t;
  }
  case 26:
    t = new_type(f, VT_OTHER);
    t->text = "!shape.witness";
    return t;
  case 33:
    t = new_type(f, VT_NONE);
    t->text = "none";
    return t;
  case 34:
    t = new_type(f, VT_OTHER);
    t->text = "tf32";
    return t;
  case 41: return read_tensor(v, c, false, VT_BUFFER);
  case 42: { /* future: the types an async_start's region yields */
    t = new_type(f, VT_OTHER);
    t->in = read_type_list(v, c, &t->n_in);
    strbuf *b = shlo__vhlo_buf(v, c);
    shlo__sb_printf(b, "!stablehlo.future<");
    type_list_text(b, t->in, t->n_in);
    shlo__sb_printf(b, ">");
    t->text = shlo__vhlo_buf_take(v, c, b);
    return t;
  }
  default:
    shlo__bc_fail(c, "unknown vhlo type code %llu", (unsigned long long)code);
  }
}

static const vtype *read_builtin_type(vhlo_ctx *v, bc_cursor *c) {
  uint64_t code = shlo__bc_varint(c);
  bc_file *f = v->f;
  switch (code) {
  case 0: {
    uint64_t w = shlo__bc_varint(c);
    unsigned width = (unsigned)(w >> 2), sign = (unsigned)(w & 3);
    static const struct { unsigned w; shlo_elem_type s, u; } ints[] = {
        {2, SHLO_SI2, SHLO_UI2},   {4, SHLO_SI4, SHLO_UI4},
        {8, SHLO_SI8, SHLO_UI8},   {16, SHLO_SI16, SHLO_UI16},
        {32, SHLO_SI32, SHLO_UI32}, {64, SHLO_SI64, SHLO_UI64}};
    if (width == 1) return elem_type(f, SHLO_I1);
    for (size_t i = 0; i < sizeof ints / sizeof *ints; i++)
      if (ints[i].w == width) return elem_type(f, sign == 2 ? ints[i].u : ints[i].s);
    shlo__bc_fail(c, "unsupported integer width %u", width);
  }
  case 1: return elem_type(f, SHLO_INDEX);
  case 2: return read_function(v, c);
  case 3: return elem_type(f, SHLO_BF16);
  case 4: return elem_type(f, SHLO_F16);
  case 5: return elem_type(f, SHLO_F32);
  case 6: return elem_type(f, SHLO_F64);
  case 12: {
    vtype *t = new_type(f, VT_NONE);
    t->text = "none";
    return t;
  }
  case 13: return read_tensor(v, c, false, VT_TENSOR);
  default:
    shlo__bc_fail(c, "unsupported builtin type code %llu", (unsigned long long)code);
  }
}

const vtype *shlo__vhlo_type(vhlo_ctx *v, int index) {
  if (v->types[index]) return v->types[index];
  bc_file *f = v->f;
  bc_entry *e = &f->types[index];
  bc_cursor c = {e->data, e->data + e->n, "attribute/type section", f};
  if (++v->depth > BC_MAX_DEPTH)
    shlo__bc_fail(&c, "types nested deeper than %d (the limit)", BC_MAX_DEPTH);
  const char *dialect = f->dialects[e->dialect];
  if (!e->custom)
    shlo__bc_fail(&c, "type stored as text (%.*s) is not supported",
            (int)(e->n > 60 ? 60 : e->n), (const char *)e->data);
  const vtype *t;
  if (!strcmp(dialect, "vhlo")) t = read_vhlo_type(v, &c);
  else if (!strcmp(dialect, "builtin")) t = read_builtin_type(v, &c);
  else shlo__bc_fail(&c, "type of unsupported dialect '%s'", dialect);
  if (!shlo__bc_at_end(&c)) shlo__bc_fail(&c, "trailing bytes after a type");
  v->depth--;
  v->types[index] = t;
  return t;
}

/* ---- attributes ---- */

static const vattr **read_attr_list(vhlo_ctx *v, bc_cursor *c, int *n) {
  *n = shlo__bc_count(c, 1);
  const vattr **as = shlo__bc_alloc(v->f, sizeof *as * (size_t)(*n + 1));
  for (int i = 0; i < *n; i++) as[i] = read_attr_ref(v, c);
  return as;
}

static int64_t *read_svarints(bc_file *f, bc_cursor *c, int *n) {
  *n = shlo__bc_count(c, 1);
  int64_t *xs = shlo__bc_alloc(f, sizeof *xs * (size_t)(*n + 1));
  for (int i = 0; i < *n; i++) xs[i] = shlo__bc_svarint(c);
  return xs;
}

static vattr *read_dict(vhlo_ctx *v, bc_cursor *c) {
  vattr *a = new_attr(v->f, VA_DICT);
  a->n = shlo__bc_count(c, 2);
  a->keys = shlo__bc_alloc(v->f, sizeof *a->keys * (size_t)(a->n + 1));
  a->items = shlo__bc_alloc(v->f, sizeof *a->items * (size_t)(a->n + 1));
  for (int i = 0; i < a->n; i++) {
    a->keys[i] = read_attr_ref(v, c);
    if (a->keys[i]->kind != VA_STRING) shlo__bc_fail(c, "dictionary key is not a string");
    a->items[i] = read_attr_ref(v, c);
  }
  return a;
}

static vattr *read_string_attr(vhlo_ctx *v, bc_cursor *c, vattr_kind k) {
  vattr *a = new_attr(v->f, k);
  int s = shlo__bc_string(c);
  a->s = v->f->strings[s];
  a->slen = v->f->string_lens[s];
  return a;
}

static unsigned int_width(const vtype *t) {
  if (t->kind != VT_ELEM) return 0;
  if (t->elem == SHLO_INDEX) return 64;
  return shlo_elem_bits(t->elem);
}

static vattr *read_number(vhlo_ctx *v, bc_cursor *c, bool is_float) {
  vattr *a = new_attr(v->f, is_float ? VA_FLOAT : VA_INT);
  a->type = read_type_ref(v, c);
  unsigned w = int_width(a->type);
  if (!w || (is_float != shlo_elem_is_float(a->type->elem)))
    shlo__bc_fail(c, "bad type for a %s attribute", is_float ? "float" : "integer");
  uint64_t u = shlo__bc_apint(c, w);
  a->bits = u;
  if (!is_float) { /* sign-extend the stored width */
    if (w < 64 && w > 1 && shlo_elem_class_of(a->type->elem) != SHLO_CLASS_UINT &&
        (u >> (w - 1) & 1))
      u |= ~(((uint64_t)1 << w) - 1);
    a->i = (int64_t)u;
  }
  return a;
}

/* Replica groups named by mesh axes (StableHLO 1.16+), kept as the text
 * StableHLO spells them:
 *   21 sub_axis_info {pre_size, size: svarint}      -> (1)2
 *   22 axis_ref {name, present: varint, [sub_axis_info]}
 *   23 replica_group_mesh_axes {mesh, axes: array of axis_ref} */
static const vattr *read_mesh_attr(vhlo_ctx *v, bc_cursor *c, uint64_t code) {
  bc_file *f = v->f;
  strbuf *b = shlo__vhlo_buf(v, c);
  if (code == 21) {
    int64_t pre = shlo__bc_svarint(c), size = shlo__bc_svarint(c);
    shlo__sb_printf(b, "(%lld)%lld", (long long)pre, (long long)size);
  } else if (code == 22) {
    const vattr *name = read_attr_ref(v, c);
    if (name->kind != VA_STRING) shlo__bc_fail(c, "axis name is not a string");
    shlo__sb_printf(b, "#stablehlo.axis_ref<name = ");
    shlo__vhlo_put_string(b, name->s, name->slen, false);
    uint64_t has_sub = shlo__bc_varint(c);
    if (has_sub > 1) shlo__bc_fail(c, "bad sub-axis flag");
    if (has_sub) {
      const vattr *sub = read_attr_ref(v, c);
      if (sub->kind != VA_OTHER || !sub->text) shlo__bc_fail(c, "bad sub-axis info");
      shlo__sb_printf(b, ", sub_axis_info = %s", sub->text);
    }
    shlo__sb_printf(b, ">");
  } else {
    const vattr *mesh = read_attr_ref(v, c), *axes = read_attr_ref(v, c);
    if ((mesh->kind != VA_STRING && mesh->kind != VA_SYMBOL) ||
        axes->kind != VA_ARRAY)
      shlo__bc_fail(c, "malformed replica_group_mesh_axes");
    shlo__sb_printf(b, "#stablehlo.replica_group_mesh_axes<mesh = @%.*s, "
                        "axes = [", (int)mesh->slen, mesh->s);
    for (int i = 0; i < axes->n; i++) {
      const vattr *ax = axes->items[i];
      if (ax->kind != VA_OTHER || !ax->text) shlo__bc_fail(c, "bad axis reference");
      shlo__sb_printf(b, "%s%s", i ? ", " : "", ax->text);
    }
    shlo__sb_printf(b, "]>");
  }
  vattr *a = new_attr(f, VA_OTHER);
  a->text = shlo__vhlo_buf_take(v, c, b);
  return a;
}

static const char *const enum_kinds[] = {
    [3] = "comparison_direction", [4] = "comparison_type",
    [5] = "api_version",          [7] = "fft_type",
    [11] = "precision",           [12] = "rng_algorithm",
    [13] = "rng_distribution",    [16] = "transpose",
    [19] = "result_accuracy_mode"};

int shlo__vhlo_enum_attr_code(const char *kind) {
  for (int code = 0; code < (int)(sizeof enum_kinds / sizeof *enum_kinds);
       code++)
    if (enum_kinds[code] && !strcmp(enum_kinds[code], kind)) return code;
  return -1;
}

static const vattr *read_vhlo_attr(vhlo_ctx *v, bc_cursor *c) {
  bc_file *f = v->f;
  uint64_t code = shlo__bc_varint(c);
  vattr *a;
  switch (code) {
  case 1:
    a = new_attr(f, VA_ARRAY);
    a->items = read_attr_list(v, c, &a->n);
    return a;
  case 2:
    a = new_attr(f, VA_BOOL);
    a->i = (int64_t)shlo__bc_varint(c);
    if (a->i > 1) shlo__bc_fail(c, "boolean value %lld", (long long)a->i);
    return a;
  case 3: case 4: case 5: case 7: case 11: case 12: case 13: case 16:
  case 19:
    a = new_attr(f, VA_ENUM);
    a->enum_kind = enum_kinds[code];
    a->i = (int64_t)shlo__bc_varint(c);
    return a;
  case 6: return read_dict(v, c);
  case 8: return read_number(v, c, true);
  case 9: return read_number(v, c, false);
  case 10:
    a = new_attr(f, VA_ALIAS);
    a->ints = read_svarints(f, c, &a->n);
    a->i = shlo__bc_svarint(c);
    a->ints2 = read_svarints(f, c, &a->n2);
    return a;
  case 14: return read_string_attr(v, c, VA_STRING);
  case 15: {
    a = new_attr(f, VA_TENSOR);
    a->type = read_type_ref(v, c);
    uint64_t n = shlo__bc_varint(c);
    a->blob = shlo__bc_bytes(c, (size_t)n);
    a->blob_n = (size_t)n;
    return a;
  }
  case 17:
    a = new_attr(f, VA_TYPE);
    a->type = read_type_ref(v, c);
    return a;
  case 18:
    a = new_attr(f, VA_BOUNDS);
    a->ints = read_svarints(f, c, &a->n);
    return a;
  case 20: {
    a = new_attr(f, VA_ACCURACY);
    uint64_t at = (uint64_t)shlo__bc_svarint(c), rt = (uint64_t)shlo__bc_svarint(c);
    memcpy(&a->atol, &at, 8);
    memcpy(&a->rtol, &rt, 8);
    a->i = shlo__bc_svarint(c);
    a->n = 1;
    a->items = shlo__bc_alloc(f, sizeof *a->items);
    a->items[0] = read_attr_ref(v, c);
    return a;
  }
  case 21: case 22: case 23: return read_mesh_attr(v, c, code);
  default:
    shlo__bc_fail(c, "unknown vhlo attribute code %llu", (unsigned long long)code);
  }
}

static const vattr *read_builtin_attr(vhlo_ctx *v, bc_cursor *c) {
  bc_file *f = v->f;
  uint64_t code = shlo__bc_varint(c);
  vattr *a;
  switch (code) {
  case 0:
    a = new_attr(f, VA_ARRAY);
    a->items = read_attr_list(v, c, &a->n);
    return a;
  case 1: return read_dict(v, c);
  case 2: return read_string_attr(v, c, VA_STRING);
  case 4: {
    const vattr *s = read_attr_ref(v, c);
    if (s->kind != VA_STRING) shlo__bc_fail(c, "symbol reference without a name");
    a = new_attr(f, VA_SYMBOL);
    a->s = s->s;
    a->slen = s->slen;
    return a;
  }
  case 6:
    a = new_attr(f, VA_TYPE);
    a->type = read_type_ref(v, c);
    return a;
  case 7: return new_attr(f, VA_UNIT);
  case 8: return read_number(v, c, false);
  case 9: return read_number(v, c, true);
  case 17: { /* dense array: element type, count, raw data */
    a = new_attr(f, VA_DENSE_ARRAY);
    a->type = read_type_ref(v, c);
    a->n = shlo__bc_count(c, 0);
    uint64_t n = shlo__bc_varint(c);
    a->blob = shlo__bc_bytes(c, (size_t)n);
    a->blob_n = (size_t)n;
    return a;
  }
  case 10: case 11: case 12: case 13: case 14: case 15: case 22:
    return new_attr(f, VA_OTHER); /* a location: never printed */
  default:
    shlo__bc_fail(c, "unsupported builtin attribute code %llu",
            (unsigned long long)code);
  }
}

const vattr *shlo__vhlo_attr(vhlo_ctx *v, int index) {
  if (v->attrs[index]) return v->attrs[index];
  bc_file *f = v->f;
  bc_entry *e = &f->attrs[index];
  bc_cursor c = {e->data, e->data + e->n, "attribute/type section", f};
  if (++v->depth > BC_MAX_DEPTH)
    shlo__bc_fail(&c, "attributes nested deeper than %d (the limit)", BC_MAX_DEPTH);
  const char *dialect = f->dialects[e->dialect];
  const vattr *a;
  if (!e->custom) {
    vattr *t = new_attr(f, VA_OTHER);
    char *s = shlo__bc_alloc(f, e->n + 1);
    memcpy(s, e->data, e->n);
    s[e->n] = 0;
    t->text = s;
    a = t;
    c.p = c.end;
  } else if (!strcmp(dialect, "vhlo")) {
    a = read_vhlo_attr(v, &c);
  } else if (!strcmp(dialect, "builtin")) {
    a = read_builtin_attr(v, &c);
  } else if (!strcmp(dialect, "sdy")) {
    /* Shardings and meshes JAX attaches to arguments and results: they
     * place data on devices, which the engine's caller does; the engine
     * computes the same values without them. */
    a = new_attr(f, VA_DROPPED);
    c.p = c.end;
  } else {
    shlo__bc_fail(&c, "attribute of unsupported dialect '%s'", dialect);
  }
  if (!shlo__bc_at_end(&c) && a->kind != VA_OTHER)
    shlo__bc_fail(&c, "trailing bytes after an attribute");
  v->depth--;
  v->attrs[index] = a;
  return a;
}
