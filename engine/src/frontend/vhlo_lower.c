/* SPDX-License-Identifier: Apache-2.0 */
/* VHLO -> StableHLO attributes (vhlo_lower.h).
 *
 * VHLO keeps every attribute explicit and flat: dimension lists as i64
 * tensors, gather/scatter/dot/conv dimension numbers as separate
 * attributes, channel handles as an integer.  StableHLO (what the text
 * parser reads) uses dense arrays, #stablehlo.gather<...> and friends, and
 * leaves out attributes at their default.  This file does that reshaping,
 * as StableHLO's VhloLegalizeToStablehlo does. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/vhlo_lower.h"

void shlo__vhlo_put_string(strbuf *b, const char *s, size_t n, bool symbol) {
  bool bare = symbol && n > 0 && (isalpha((unsigned char)s[0]) || s[0] == '_');
  for (size_t i = 0; bare && i < n; i++)
    if (!isalnum((unsigned char)s[i]) && s[i] != '_' && s[i] != '$' &&
        s[i] != '.')
      bare = false;
  if (bare) {
    shlo__sb_add(b, s, n);
    return;
  }
  shlo__sb_putc(b, '"');
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '"' || c == '\\') shlo__sb_printf(b, "\\%c", c);
    else if (c < 0x20 || c >= 0x7f) shlo__sb_printf(b, "\\%02X", c);
    else shlo__sb_putc(b, (char)c);
  }
  shlo__sb_putc(b, '"');
}

static const char *const cmp_dir[] = {"EQ", "NE", "GE", "GT", "LE", "LT"};
static const char *const cmp_type[] = {"NOTYPE", "FLOAT", "TOTALORDER",
                                       "SIGNED", "UNSIGNED"};
static const char *const fft[] = {"FFT", "IFFT", "RFFT", "IRFFT"};
static const char *const precision[] = {"DEFAULT", "HIGH", "HIGHEST"};
static const char *const rng_alg[] = {"DEFAULT", "THREE_FRY", "PHILOX"};
static const char *const rng_dist[] = {"INVALID", "UNIFORM", "NORMAL"};
static const char *const transpose[] = {"TRANSPOSE_INVALID", "NO_TRANSPOSE",
                                        "TRANSPOSE", "ADJOINT"};
static const char *const accuracy[] = {"DEFAULT", "HIGHEST", "TOLERANCE"};
static const struct {
  const char *kind;
  const char *const *names;
  int n;
} enums[] = {
    {"comparison_direction", cmp_dir, 6}, {"comparison_type", cmp_type, 5},
    {"fft_type", fft, 4},                 {"precision", precision, 3},
    {"rng_algorithm", rng_alg, 3},        {"rng_distribution", rng_dist, 3},
    {"transpose", transpose, 4},          {"result_accuracy_mode", accuracy, 3},
};

static const char *enum_name(const vattr *a) {
  for (size_t i = 0; i < sizeof enums / sizeof *enums; i++)
    if (!strcmp(enums[i].kind, a->enum_kind))
      return a->i >= 0 && a->i < enums[i].n ? enums[i].names[a->i] : NULL;
  return NULL;
}

int shlo__vhlo_enum_value(const char *kind, const char *name) {
  for (size_t i = 0; i < sizeof enums / sizeof *enums; i++)
    if (!strcmp(enums[i].kind, kind))
      for (int k = 0; k < enums[i].n; k++)
        if (!strcmp(enums[i].names[k], name)) return k;
  return -1;
}

static void put_attr(vhlo_ctx *v, bc_cursor *c, strbuf *b, const vattr *a);

static void put_ints(strbuf *b, const int64_t *x, int n) {
  shlo__sb_printf(b, "[");
  for (int i = 0; i < n; i++)
    shlo__sb_printf(b, "%s%lld", i ? ", " : "", (long long)x[i]);
  shlo__sb_printf(b, "]");
}

/* A TENSOR's raw data as MLIR holds it (i1 unpacked to a byte each). */
static void put_dense(vhlo_ctx *v, bc_cursor *c, strbuf *b, const vattr *a) {
  (void)v;
  const vtype *t = a->type;
  if (t->kind != VT_TENSOR || !t->elem_t)
    shlo__bc_fail(c, "tensor attribute without a ranked tensor type");
  int64_t numel = shlo__vhlo_numel(t);
  if (numel < 0) shlo__bc_fail(c, "tensor attribute with a dynamic shape");
  shlo__sb_printf(b, "dense<\"0x");
  bool is_bool = t->elem_t->kind == VT_ELEM && t->elem_t->elem == SHLO_I1;
  size_t packed = (size_t)((numel + 7) / 8);
  if (is_bool && a->blob_n == packed && a->blob_n != (size_t)numel) {
    for (int64_t i = 0; i < numel; i++)
      shlo__sb_printf(b, "%02X", (a->blob[i / 8] >> (i % 8)) & 1);
  } else {
    for (size_t i = 0; i < a->blob_n; i++)
      shlo__sb_printf(b, "%02X", a->blob[i]);
  }
  shlo__sb_printf(b, "\"> : %s", t->text);
}

static void put_dict_body(vhlo_ctx *v, bc_cursor *c, strbuf *b,
                          const vattr *d) {
  shlo__sb_printf(b, "{");
  for (int i = 0, k = 0; i < d->n; i++) {
    if (d->items[i]->kind == VA_DROPPED) continue;
    if (k++) shlo__sb_printf(b, ", ");
    shlo__vhlo_put_string(b, d->keys[i]->s, d->keys[i]->slen, true);
    if (d->items[i]->kind == VA_UNIT) continue;
    shlo__sb_printf(b, " = ");
    put_attr(v, c, b, d->items[i]);
  }
  shlo__sb_printf(b, "}");
}

static void put_attr(vhlo_ctx *v, bc_cursor *c, strbuf *b, const vattr *a) {
  if (++v->depth > BC_MAX_DEPTH)
    shlo__bc_fail(c, "attributes nested deeper than %d (the limit)", BC_MAX_DEPTH);
  switch (a->kind) {
  case VA_ARRAY:
    shlo__sb_printf(b, "[");
    for (int i = 0; i < a->n; i++) {
      if (i) shlo__sb_printf(b, ", ");
      put_attr(v, c, b, a->items[i]);
    }
    shlo__sb_printf(b, "]");
    break;
  case VA_BOOL: shlo__sb_printf(b, a->i ? "true" : "false"); break;
  case VA_ENUM: {
    if (!strcmp(a->enum_kind, "api_version")) {
      shlo__sb_printf(b, "%lld : i32", (long long)a->i);
      break;
    }
    const char *n = enum_name(a);
    if (!n) shlo__bc_fail(c, "unknown %s value %lld", a->enum_kind, (long long)a->i);
    if (!strcmp(a->enum_kind, "result_accuracy_mode"))
      shlo__sb_printf(b, "#stablehlo.result_accuracy_mode<%s>", n);
    else shlo__sb_printf(b, "#stablehlo<%s %s>", a->enum_kind, n);
    break;
  }
  case VA_DICT: put_dict_body(v, c, b, a); break;
  case VA_FLOAT:
    shlo__vhlo_print_float(b, a->type->elem, a->bits);
    shlo__sb_printf(b, " : %s", a->type->text);
    break;
  case VA_INT:
    if (a->type->elem == SHLO_I1) shlo__sb_printf(b, a->i ? "true" : "false");
    else shlo__sb_printf(b, "%lld : %s", (long long)a->i, a->type->text);
    break;
  case VA_ALIAS:
    shlo__sb_printf(b, "#stablehlo.output_operand_alias<output_tuple_indices = ");
    put_ints(b, a->ints, a->n);
    shlo__sb_printf(b, ", operand_index = %lld, operand_tuple_indices = ",
                    (long long)a->i);
    put_ints(b, a->ints2, a->n2);
    shlo__sb_printf(b, ">");
    break;
  case VA_STRING: shlo__vhlo_put_string(b, a->s, a->slen, false); break;
  case VA_TENSOR: put_dense(v, c, b, a); break;
  case VA_TYPE: shlo__sb_printf(b, "%s", a->type->text); break;
  case VA_ACCURACY:
    shlo__sb_printf(b, "#stablehlo.result_accuracy<atol = %.17e, rtol = %.17e, "
                       "ulps = %lld, mode = ", a->atol, a->rtol, (long long)a->i);
    put_attr(v, c, b, a->items[0]);
    shlo__sb_printf(b, ">");
    break;
  case VA_UNIT: shlo__sb_printf(b, "unit"); break;
  case VA_SYMBOL:
    shlo__sb_printf(b, "@");
    shlo__vhlo_put_string(b, a->s, a->slen, true);
    break;
  case VA_BOUNDS: case VA_DENSE_ARRAY: case VA_OTHER:
    if (a->text) shlo__sb_printf(b, "%s", a->text);
    else shlo__bc_fail(c, "attribute kind not supported here");
    break;
  case VA_DROPPED:
    shlo__bc_fail(c, "a Shardy (sdy) attribute where a value is needed");
    break;
  }
  v->depth--;
}

void shlo__vhlo_put_dict(vhlo_ctx *v, bc_cursor *c, strbuf *b, const vattr *d) {
  shlo__sb_printf(b, " ");
  put_dict_body(v, c, b, d);
}

static bool listed(const char *list, const char *name) {
  size_t n = strlen(name);
  if (!n) return false;
  for (const char *p = list; (p = strstr(p, name)); p += n)
    if ((p == list || p[-1] == ' ') && (p[n] == ' ' || !p[n])) return true;
  return false;
}

void shlo__vhlo_put_extra_attrs(vhlo_ctx *v, bc_cursor *c, strbuf *b,
                          const nattr *in, int n, const char *skip) {
  int k = 0;
  for (int i = 0; i < n; i++) {
    if (listed(skip, in[i].name) || in[i].a->kind == VA_DROPPED) continue;
    shlo__sb_printf(b, k++ ? ", " : " attributes {");
    shlo__vhlo_put_string(b, in[i].name, strlen(in[i].name), true);
    if (in[i].a->kind == VA_UNIT) continue;
    shlo__sb_printf(b, " = ");
    put_attr(v, c, b, in[i].a);
  }
  if (k) shlo__sb_printf(b, "}");
}

/* ---- per-op reshaping ---- */

typedef struct lower_state {
  vhlo_ctx *v;
  bc_cursor *c;
  const nattr *in;
  int n;
  bool *used;
  lowered *out;
} lower_state;

static const vattr *take(lower_state *s, const char *name) {
  for (int i = 0; i < s->n; i++)
    if (!strcmp(s->in[i].name, name)) {
      s->used[i] = true;
      return s->in[i].a;
    }
  return NULL;
}

static void emit(lower_state *s, const char *name, strbuf *b) {
  if (s->out->n == VHLO_MAX_OP_ATTRS * 2) shlo__bc_fail(s->c, "too many attributes");
  s->out->names[s->out->n] = name;
  s->out->texts[s->out->n++] = shlo__vhlo_buf_take(s->v, s->c, b);
}

static void emit_attr(lower_state *s, const char *name, const vattr *a) {
  strbuf *b = shlo__vhlo_buf(s->v, s->c);
  put_attr(s->v, s->c, b, a);
  emit(s, name, b);
}

/* An i64 (or i1) tensor's values. */
static int tensor_ints(lower_state *s, const vattr *a, int64_t *out, int cap,
                       bool *is_bool) {
  if (!a || a->kind != VA_TENSOR) shlo__bc_fail(s->c, "expected a tensor attribute");
  const vtype *e = a->type->elem_t;
  int64_t numel = shlo__vhlo_numel(a->type);
  if (!e || e->kind != VT_ELEM || numel < 0 || numel > cap)
    shlo__bc_fail(s->c, "bad dimension list attribute");
  size_t es = e->elem == SHLO_I1 ? 1 : shlo_elem_size(e->elem);
  *is_bool = e->elem == SHLO_I1;
  bool splat = a->blob_n == es && numel > 1;
  bool packed = *is_bool && a->blob_n == (size_t)(numel + 7) / 8 &&
                a->blob_n != (size_t)numel;
  if (!splat && !packed && a->blob_n != es * (size_t)numel)
    shlo__bc_fail(s->c, "dimension list data has the wrong size");
  for (int64_t i = 0; i < numel; i++) {
    if (packed) {
      out[i] = (a->blob[i / 8] >> (i % 8)) & 1;
      continue;
    }
    const uint8_t *p = a->blob + (splat ? 0 : (size_t)i * es);
    int64_t x = 0;
    memcpy(&x, p, es);
    if (es == 4) x = (int32_t)x;
    out[i] = x;
  }
  return (int)numel;
}

static void put_array_from_tensor(lower_state *s, strbuf *b, const vattr *a) {
  int64_t xs[4096];
  bool is_bool;
  int n = tensor_ints(s, a, xs, 4096, &is_bool);
  shlo__sb_printf(b, "array<%s", is_bool ? "i1" : "i64");
  for (int i = 0; i < n; i++) {
    shlo__sb_printf(b, i ? ", " : ": ");
    if (is_bool) shlo__sb_printf(b, xs[i] ? "true" : "false");
    else shlo__sb_printf(b, "%lld", (long long)xs[i]);
  }
  shlo__sb_printf(b, ">");
}

static void put_int_list(lower_state *s, strbuf *b, const vattr *a) {
  int64_t xs[4096];
  bool is_bool;
  int n = tensor_ints(s, a, xs, 4096, &is_bool);
  put_ints(b, xs, n);
}

static int64_t int_of(lower_state *s, const vattr *a) {
  if (!a || a->kind != VA_INT) shlo__bc_fail(s->c, "expected an integer attribute");
  return a->i;
}

/* Names whose i64/i1 tensor becomes a dense array in StableHLO. */
static const char *const dense_array_attrs =
    "broadcast_dimensions broadcast_sizes dimensions permutation "
    "start_indices limit_indices strides edge_padding_low edge_padding_high "
    "interior_padding slice_sizes window_dimensions window_strides "
    "base_dilations window_dilations lhs_dilation rhs_dilation fft_length "
    "known_expanding_dimensions known_nonexpanding_dimensions "
    "window_reversal";

/* #stablehlo.NAME<f1 = [..], ...>: fields whose lists are empty are left
 * out, as StableHLO prints them. */
static void emit_struct(lower_state *s, const char *attr, const char *sname,
                        const char *const *fields, int nf) {
  strbuf *b = shlo__vhlo_buf(s->v, s->c);
  shlo__sb_printf(b, "#stablehlo.%s<", sname);
  int k = 0;
  for (int i = 0; i < nf; i++) {
    const vattr *a = take(s, fields[i]);
    if (!a) continue;
    if (a->kind == VA_INT) {
      shlo__sb_printf(b, "%s%s = %lld", k++ ? ", " : "", fields[i],
                      (long long)a->i);
      continue;
    }
    if (a->kind != VA_TENSOR)
      shlo__bc_fail(s->c, "%s is neither an integer nor a tensor", fields[i]);
    if (shlo__vhlo_numel(a->type) == 0) continue;
    shlo__sb_printf(b, "%s%s = ", k++ ? ", " : "", fields[i]);
    put_int_list(s, b, a);
  }
  shlo__sb_printf(b, ">");
  emit(s, attr, b);
}

static void lower_gather(lower_state *s, bool scatter) {
  static const char *const g[] = {
      "offset_dims", "collapsed_slice_dims", "operand_batching_dims",
      "start_indices_batching_dims", "start_index_map", "index_vector_dim"};
  static const char *const sc[] = {
      "update_window_dims", "inserted_window_dims", "input_batching_dims",
      "scatter_indices_batching_dims", "scatter_dims_to_operand_dims",
      "index_vector_dim"};
  if (scatter) emit_struct(s, "scatter_dimension_numbers", "scatter", sc, 6);
  else emit_struct(s, "dimension_numbers", "gather", g, 6);
}

static void lower_dot(lower_state *s) {
  static const char *const d[] = {
      "lhs_batching_dimensions", "rhs_batching_dimensions",
      "lhs_contracting_dimensions", "rhs_contracting_dimensions"};
  emit_struct(s, "dot_dimension_numbers", "dot", d, 4);
  const vattr *lp = take(s, "lhs_precision_type");
  const vattr *rp = take(s, "rhs_precision_type");
  const vattr *acc = take(s, "accumulation_type");
  const vattr *lc = take(s, "lhs_component_count");
  const vattr *rc = take(s, "rhs_component_count");
  const vattr *np = take(s, "num_primitive_operations");
  const vattr *ai = take(s, "allow_imprecise_accumulation");
  if (!lp || lp->kind != VA_TYPE || lp->type->kind == VT_NONE) return;
  if (!rp || !acc || !lc || !rc || !np || !ai || rp->kind != VA_TYPE ||
      acc->kind != VA_TYPE || ai->kind != VA_BOOL)
    shlo__bc_fail(s->c, "incomplete dot algorithm");
  strbuf *b = shlo__vhlo_buf(s->v, s->c);
  shlo__sb_printf(b, "#stablehlo.dot_algorithm<lhs_precision_type = %s, "
                      "rhs_precision_type = %s, accumulation_type = %s, "
                      "lhs_component_count = %lld, rhs_component_count = "
                      "%lld, num_primitive_operations = %lld, "
                      "allow_imprecise_accumulation = %s>",
                  lp->type->text, rp->type->text, acc->type->text,
                  (long long)int_of(s, lc), (long long)int_of(s, rc),
                  (long long)int_of(s, np), ai->i ? "true" : "false");
  emit(s, "algorithm", b);
}

/* [b, 0, 1, f]: position p holds the batch/feature letter or its spatial
 * index. */
static void put_layout(lower_state *s, strbuf *b, const char *letters,
                       const vattr *x, const vattr *y, const vattr *sp) {
  int64_t spatial[64];
  bool is_bool;
  int n = tensor_ints(s, sp, spatial, 64, &is_bool);
  int64_t xi = int_of(s, x), yi = int_of(s, y);
  int rank = n + 2;
  shlo__sb_printf(b, "[");
  for (int p = 0; p < rank; p++) {
    if (p) shlo__sb_printf(b, ", ");
    if (p == xi) shlo__sb_printf(b, "%c", letters[0]);
    else if (p == yi) shlo__sb_printf(b, "%c", letters[1]);
    else {
      int k = 0;
      while (k < n && spatial[k] != p) k++;
      if (k == n) shlo__bc_fail(s->c, "convolution layout misses dimension %d", p);
      shlo__sb_printf(b, "%d", k);
    }
  }
  shlo__sb_printf(b, "]");
}

static void lower_conv(lower_state *s) {
  strbuf *b = shlo__vhlo_buf(s->v, s->c);
  shlo__sb_printf(b, "#stablehlo.conv<");
  put_layout(s, b, "bf", take(s, "input_batch_dimension"),
             take(s, "input_feature_dimension"),
             take(s, "input_spatial_dimensions"));
  shlo__sb_printf(b, "x");
  put_layout(s, b, "io", take(s, "kernel_input_feature_dimension"),
             take(s, "kernel_output_feature_dimension"),
             take(s, "kernel_spatial_dimensions"));
  shlo__sb_printf(b, "->");
  put_layout(s, b, "bf", take(s, "output_batch_dimension"),
             take(s, "output_feature_dimension"),
             take(s, "output_spatial_dimensions"));
  shlo__sb_printf(b, ">");
  emit(s, "dimension_numbers", b);
}

/* channel_id (and channel_type for send/recv) -> channel_handle; 0 means
 * none. */
static void lower_channel(lower_state *s) {
  const vattr *id = take(s, "channel_id");
  const vattr *ty = take(s, "channel_type");
  if (!id) return;
  int64_t h = int_of(s, id);
  if (!h && !ty) return;
  strbuf *b = shlo__vhlo_buf(s->v, s->c);
  shlo__sb_printf(b, "#stablehlo.channel_handle<handle = %lld, type = %lld>",
                  (long long)h, (long long)(ty ? int_of(s, ty) : 0));
  emit(s, "channel_handle", b);
}

static bool all_of_kind(const vattr *a, const char *value) {
  if (!a || a->kind != VA_ARRAY) return false;
  for (int i = 0; i < a->n; i++)
    if (a->items[i]->kind != VA_ENUM || strcmp(enum_name(a->items[i]) ?
                                                   enum_name(a->items[i]) : "",
                                               value))
      return false;
  return true;
}

static bool is_default(lower_state *s, const char *op, const char *name,
                       const vattr *a) {
  (void)s;
  switch (a->kind) {
  case VA_BOOL:
    return !a->i;
  case VA_ENUM:
    if (!strcmp(a->enum_kind, "comparison_type")) return a->i == 0;
    if (!strcmp(a->enum_kind, "api_version")) return a->i == 1; /* ORIGINAL */
    return false;
  case VA_ARRAY:
    if (!strcmp(name, "precision_config")) return a->n == 0;
    if (!strcmp(name, "called_computations") ||
        !strcmp(name, "output_operand_aliases") ||
        !strcmp(name, "layout") || !strcmp(name, "result_tilings"))
      return a->n == 0;
    return false;
  case VA_DICT:
    return !a->n && !strcmp(name, "backend_config");
  case VA_STRING:
    return !a->slen && (!strcmp(name, "backend_config") ||
                        !strcmp(name, "infeed_config") ||
                        !strcmp(name, "outfeed_config"));
  default:
    (void)op;
    return false;
  }
}

/* Whether every value of an integer tensor equals x. */
static bool tensor_all(lower_state *s, const vattr *a, int64_t x) {
  int64_t xs[4096];
  bool is_bool;
  if (a->kind != VA_TENSOR) return false;
  int n = tensor_ints(s, a, xs, 4096, &is_bool);
  for (int i = 0; i < n; i++)
    if (xs[i] != x) return false;
  return true;
}

/* Window attributes at their defaults (strides and dilations of 1, no
 * padding, no reversal) are left out, as StableHLO's deserializer does. */
static bool window_default(lower_state *s, const char *op, const char *name,
                           const vattr *a) {
  if (strcmp(op, "convolution") && strcmp(op, "dynamic_conv") &&
      strcmp(op, "reduce_window") && strcmp(op, "select_and_scatter"))
    return false;
  if (!strcmp(name, "padding") || !strcmp(name, "window_reversal"))
    return tensor_all(s, a, 0);
  if (!strcmp(name, "window_strides") || !strcmp(name, "lhs_dilation") ||
      !strcmp(name, "rhs_dilation") || !strcmp(name, "base_dilations") ||
      !strcmp(name, "window_dilations"))
    return tensor_all(s, a, 1);
  return false;
}

static void lower_rest(lower_state *s, const char *op) {
  for (int i = 0; i < s->n; i++) {
    if (s->used[i]) continue;
    const char *name = s->in[i].name;
    const vattr *a = s->in[i].a;
    s->used[i] = true;
    if (is_default(s, op, name, a) || window_default(s, op, name, a))
      continue;
    if ((!strcmp(name, "known_expanding_dimensions") ||
         !strcmp(name, "known_nonexpanding_dimensions")) &&
        a->kind == VA_TENSOR && shlo__vhlo_numel(a->type) == 0)
      continue;
    if ((!strcmp(op, "send") || !strcmp(op, "recv")) &&
        !strcmp(name, "source_target_pairs") && a->kind == VA_TENSOR &&
        shlo__vhlo_numel(a->type) == 0)
      continue;
    if (!strcmp(op, "sort") && !strcmp(name, "dimension") &&
        a->kind == VA_INT && a->i == -1)
      continue;
    if (a->kind == VA_ACCURACY && !a->atol && !a->rtol && !a->i &&
        a->items[0]->kind == VA_ENUM && !a->items[0]->i)
      continue; /* the default accuracy */
    if (!strcmp(op, "composite") &&
        ((!strcmp(name, "version") && a->kind == VA_INT && !a->i) ||
         (!strcmp(name, "composite_attributes") && a->kind == VA_DICT &&
          !a->n)))
      continue;
    if (!strcmp(name, "use_global_device_ids") ||
        !strcmp(name, "has_dynamic_root")) { /* unit attributes when set */
      strbuf *b = shlo__vhlo_buf(s->v, s->c);
      shlo__sb_printf(b, "unit");
      emit(s, name, b);
      continue;
    }
    if (a->kind == VA_TENSOR && listed(dense_array_attrs, name)) {
      strbuf *b = shlo__vhlo_buf(s->v, s->c);
      put_array_from_tensor(s, b, a);
      emit(s, name, b);
      continue;
    }
    if ((!strcmp(name, "callee") || !strcmp(name, "decomposition")) &&
        a->kind == VA_STRING) {
      strbuf *b = shlo__vhlo_buf(s->v, s->c);
      shlo__sb_printf(b, "@");
      shlo__vhlo_put_string(b, a->s, a->slen, true);
      emit(s, name, b);
      continue;
    }
    if (!strcmp(name, "called_computations") && a->kind == VA_ARRAY) {
      strbuf *b = shlo__vhlo_buf(s->v, s->c);
      shlo__sb_printf(b, "[");
      for (int k = 0; k < a->n; k++) {
        const vattr *e = a->items[k];
        if (e->kind != VA_STRING && e->kind != VA_SYMBOL)
          shlo__bc_fail(s->c, "called computation is not a name");
        shlo__sb_printf(b, "%s@", k ? ", " : "");
        shlo__vhlo_put_string(b, e->s, e->slen, true);
      }
      shlo__sb_printf(b, "]");
      emit(s, name, b);
      continue;
    }
    emit_attr(s, name, a);
  }
}

static int cmp_out(const void *x, const void *y) {
  const char *const *a = x, *const *b = y;
  return strcmp(a[0], b[0]);
}

static void sort_out(lowered *out) {
  const char *pairs[VHLO_MAX_OP_ATTRS * 4];
  for (int i = 0; i < out->n; i++) {
    pairs[2 * i] = out->names[i];
    pairs[2 * i + 1] = out->texts[i];
  }
  qsort(pairs, (size_t)out->n, 2 * sizeof *pairs, cmp_out);
  for (int i = 0; i < out->n; i++) {
    out->names[i] = pairs[2 * i];
    out->texts[i] = pairs[2 * i + 1];
  }
}

void shlo__vhlo_lower_op(vhlo_ctx *v, bc_cursor *c, const char *vname, bool in_func,
                   const nattr *in, int n, lowered *out) {
  memset(out, 0, sizeof *out);
  char base[80];
  const char *us = strrchr(vname, '_');
  size_t bn = us ? (size_t)(us - vname) : strlen(vname);
  if (bn >= sizeof base) shlo__bc_fail(c, "op name too long");
  memcpy(base, vname, bn);
  base[bn] = 0;
  if (!strcmp(base, "return"))
    snprintf(out->name, sizeof out->name, in_func ? "func.return"
                                                  : "stablehlo.return");
  else if (!strcmp(base, "call"))
    snprintf(out->name, sizeof out->name, "func.call");
  else snprintf(out->name, sizeof out->name, "stablehlo.%s", base);
  bool used[VHLO_MAX_OP_ATTRS * 2] = {0};
  lower_state s = {v, c, in, n, used, out};
  if (!strcmp(base, "gather") || !strcmp(base, "dynamic_gather"))
    lower_gather(&s, false);
  else if (!strcmp(base, "scatter")) lower_gather(&s, true);
  else if (!strcmp(base, "dot_general")) lower_dot(&s);
  else if (!strcmp(base, "convolution") || !strcmp(base, "dynamic_conv"))
    lower_conv(&s);
  lower_channel(&s);
  /* custom_call layouts come in pairs: both or neither */
  const vattr *ol = take(&s, "operand_layouts"), *rl = take(&s, "result_layouts");
  if ((ol && ol->kind == VA_ARRAY && ol->n) || (rl && rl->kind == VA_ARRAY && rl->n)) {
    if (ol) emit_attr(&s, "operand_layouts", ol);
    if (rl) emit_attr(&s, "result_layouts", rl);
  }
  const vattr *pc = take(&s, "precision_config");
  if (pc && !all_of_kind(pc, "DEFAULT") && pc->n) emit_attr(&s, "precision_config", pc);
  lower_rest(&s, base);
  sort_out(out);
}
