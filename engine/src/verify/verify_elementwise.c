/* SPDX-License-Identifier: Apache-2.0 */
/* Verifiers of the elementwise family: unary and binary arithmetic, logical
 * and bitwise ops, compare, select, clamp, complex/real/imag, the
 * conversions, reduce_precision, is_finite, constant and the uniform
 * (de)quantize ops.  Element-type rules are the spec's input/output
 * descriptions (labels I1, I2, O1); shape rules its C1, C2, ... */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verify/verify_int.h"

/* Element categories an op accepts. */
enum {
  K_BOOL = 1,
  K_SINT = 2,
  K_UINT = 4,
  K_FLOAT = 8,
  K_COMPLEX = 16,
  K_QUANT = 32, /* per-tensor quantized */
  K_INT = K_SINT | K_UINT,
  K_ANY = K_BOOL | K_INT | K_FLOAT | K_COMPLEX | K_QUANT,
  K_FC = K_FLOAT | K_COMPLEX | K_QUANT,
  K_NUM = K_INT | K_FLOAT | K_COMPLEX | K_QUANT,
  K_SNUM = K_SINT | K_FLOAT | K_COMPLEX | K_QUANT,
};

static int kind_of(const shlo_type *t) {
  if (!shlo__is_tensor(t)) return 0;
  if (t->quant) return t->quant->per_axis ? 0 : K_QUANT;
  switch (shlo_elem_class_of(t->elem)) {
  case SHLO_CLASS_BOOL: return K_BOOL;
  case SHLO_CLASS_SINT: return t->elem == SHLO_INDEX ? 0 : K_SINT;
  case SHLO_CLASS_UINT: return K_UINT;
  case SHLO_CLASS_FLOAT: return K_FLOAT;
  case SHLO_CLASS_COMPLEX: return K_COMPLEX;
  }
  return 0;
}

/* Arity and accepted element kinds of the ops verify_elementwise checks,
 * from their rows' SHLO_EW column in the op table (ops.h). */
enum { K_NONE = 0, K_BI = K_BOOL | K_INT, K_FQ = K_FLOAT | K_QUANT };
static const struct {
  signed char arity, kinds;
} ew_facts[] = {
    [SHLO_OP_UNKNOWN] = {0, 0},
#define EW_FACT(e, arity, kinds, i, f, c, i1) \
  [SHLO_OP_##e] = {arity, K_##kinds},
#define EW_ROW(e, name, c, v, fl, k, kw) SHLO_EW_ROW(EW_FACT, e, k)
    SHLO_OPS_ELEMENTWISE(EW_ROW)
#undef EW_ROW
#undef EW_FACT
};

/* result_accuracy (spec "ResultAccuracy", C1-C2 of the attribute): with a
 * mode other than TOLERANCE every tolerance is zero; tolerances are never
 * negative. */
static bool verify_result_accuracy(shlo__vctx *vc, const shlo_op *op) {
  const shlo_attr *a = shlo_op_attr(op, "result_accuracy");
  if (!a) return true;
  const char *s = a->kind == SHLO_ATTR_OPAQUE ? a->str : NULL;
  double atol = 0, rtol = 0, ulps = 0;
  const char *mode = "DEFAULT";
  if (s) {
    const char *p;
    if ((p = strstr(s, "atol"))) atol = strtod(strchr(p, '=') + 1, NULL);
    if ((p = strstr(s, "rtol"))) rtol = strtod(strchr(p, '=') + 1, NULL);
    if ((p = strstr(s, "ulps"))) ulps = strtod(strchr(p, '=') + 1, NULL);
    if (strstr(s, "HIGHEST")) mode = "HIGHEST";
    if (strstr(s, "TOLERANCE")) mode = "TOLERANCE";
  } else if (a->kind == SHLO_ATTR_STRUCT) {
    shlo_attr_get_f64(shlo_attr_field(a, "atol"), &atol);
    shlo_attr_get_f64(shlo_attr_field(a, "rtol"), &rtol);
    shlo_attr_get_f64(shlo_attr_field(a, "ulps"), &ulps);
    const shlo_attr *m = shlo_attr_field(a, "mode");
    const char *ms = m ? (m->str ? m->str : m->struct_name) : NULL;
    if (ms && strstr(ms, "HIGHEST")) mode = "HIGHEST";
    if (ms && strstr(ms, "TOLERANCE")) mode = "TOLERANCE";
    for (int i = 0; m && m->kind == SHLO_ATTR_STRUCT && i < m->n; i++)
      if (!strcmp(m->fields[i].name, "TOLERANCE")) mode = "TOLERANCE";
  }
  if (atol < 0 || rtol < 0 || ulps < 0)
    return shlo__verr(vc, op, "result_accuracy",
                      "tolerances must be non-negative, got atol = %g, "
                      "rtol = %g, ulps = %g", atol, rtol, ulps);
  if (strcmp(mode, "TOLERANCE") && (atol != 0 || rtol != 0 || ulps != 0))
    return shlo__verr(vc, op, "result_accuracy",
                      "with mode %s the tolerances must all be zero, got "
                      "atol = %g, rtol = %g, ulps = %g", mode, atol, rtol,
                      ulps);
  return true;
}

static bool check_kind(shlo__vctx *vc, const shlo_op *op, const char *label,
                       const char *what, const shlo_type *t, int kinds) {
  if (kind_of(t) & kinds) return true;
  return shlo__verr(vc, op, label, "%s has type %s, which this op does not "
                    "accept", what, shlo__tstr(vc, t));
}

/* Operand and result counts. */
static bool arity(shlo__vctx *vc, const shlo_op *op, int n_in, int n_out) {
  if (op->n_operands != n_in || op->n_results != n_out)
    return shlo__verr(vc, op, NULL, "expects %d operand(s) and %d result(s), "
                      "got %d and %d", n_in, n_out, op->n_operands,
                      op->n_results);
  return true;
}

/* Quantized elementwise ops (add C2-C7 and likewise): operands and result
 * are all quantized or none, with the same storage and expressed types. */
static bool quant_consistent(shlo__vctx *vc, const shlo_op *op) {
  const shlo_type *r = shlo__rtype(vc, op, 0);
  for (int i = 0; i < op->n_operands; i++) {
    const shlo_type *t = shlo__otype(vc, op, i);
    if (!t->quant != !r->quant)
      return shlo__verr(vc, op, "C2", "expects all operands and results to "
                        "be either quantized or non-quantized: operand #%d "
                        "is %s, result is %s", i, shlo__tstr(vc, t),
                        shlo__tstr(vc, r));
    if (!t->quant) continue;
    if (t->quant->storage != r->quant->storage)
      return shlo__verr(vc, op, "C3", "mismatched operands and result "
                        "quantization storage types: %s vs %s",
                        shlo__tstr(vc, t), shlo__tstr(vc, r));
    if (t->quant->expressed != r->quant->expressed)
      return shlo__verr(vc, op, "C4", "mismatched operands and result "
                        "quantization expressed types: %s vs %s",
                        shlo__tstr(vc, t), shlo__tstr(vc, r));
    if (t->quant->per_axis && !r->quant->per_axis)
      return shlo__verr(vc, op, "C5", "result is not per_axis quantized "
                        "but operand #%d is", i);
    if (t->quant->per_axis && t->quant->axis != r->quant->axis)
      return shlo__verr(vc, op, i ? "C7" : "C6", "quantization_dimension of "
                        "operand #%d (%d) and result (%d) are not the same",
                        i, t->quant->axis, r->quant->axis);
  }
  return true;
}

/* Unary and binary elementwise ops (abs, add, ..., xor).
 * I1/I2: element types the op accepts; C1: operands and result have the
 * same shape and (non-quantized) the same element type; abs (C2): the
 * result of a complex operand is its part type; quantized add C2-C7. */
bool shlo__verify_elementwise(shlo__vctx *vc, const shlo_op *op) {
  int n_in = op->code < (int)(sizeof ew_facts / sizeof ew_facts[0])
                 ? ew_facts[op->code].arity : 0;
  if (n_in == 0) /* a row naming this verifier without an SHLO_EW column */
    return shlo__verr(vc, op, NULL, "is not an elementwise op");
  bool unary = n_in == 1;
  if (!arity(vc, op, n_in, 1)) return false;
  int kinds = ew_facts[op->code].kinds;
  if (op->code == SHLO_OP_ADD) kinds |= 64; /* per-axis allowed */
  const shlo_type *r = shlo__rtype(vc, op, 0);
  for (int i = 0; i < op->n_operands; i++) {
    const shlo_type *t = shlo__otype(vc, op, i);
    if (op->code == SHLO_OP_ADD && shlo__is_per_axis(t)) continue;
    char what[32];
    snprintf(what, sizeof what, "operand #%d", i);
    if (!check_kind(vc, op, i ? "I2" : "I1", what, t, kinds)) return false;
  }
  if (!(op->code == SHLO_OP_ADD && shlo__is_per_axis(r)) &&
      !check_kind(vc, op, unary ? "O1" : "O1", "result", r,
                  kinds | (op->code == SHLO_OP_ABS ? K_FLOAT : 0)))
    return false;
  for (int i = 0; i < op->n_operands; i++) {
    const shlo_type *t = shlo__otype(vc, op, i);
    if (!shlo__compat_shape(t, r))
      return shlo__verr(vc, op, "C1", "operand #%d %s and result %s have "
                        "different shapes", i, shlo__tstr(vc, t),
                        shlo__tstr(vc, r));
  }
  if (r->quant || shlo__otype(vc, op, 0)->quant) {
    if (!quant_consistent(vc, op)) return false;
  } else {
    for (int i = 0; i < op->n_operands; i++) {
      const shlo_type *t = shlo__otype(vc, op, i);
      shlo_elem_type want = t->elem;
      if (op->code == SHLO_OP_ABS && shlo_elem_is_complex(want))
        want = shlo_elem_complex_part(want);
      if (r->elem != want)
        return shlo__verr(vc, op, op->code == SHLO_OP_ABS ? "C2" : "C1",
                          "operand #%d %s implies result element type %s "
                          "but the result is %s", i, shlo__tstr(vc, t),
                          shlo_elem_name(want), shlo__tstr(vc, r));
    }
  }
  return verify_result_accuracy(vc, op);
}

/* compare: C1 lhs and rhs have the same element type (baseline for
 * quantized), C2 lhs, rhs and result the same shape, C3 comparison_type
 * suits the element type (FLOAT/TOTALORDER for floats, SIGNED for signed
 * integers, UNSIGNED for unsigned and booleans); result is i1 (O1). */
bool shlo__verify_compare(shlo__vctx *vc, const shlo_op *op) {
  if (!arity(vc, op, 2, 1)) return false;
  const shlo_type *a = shlo__otype(vc, op, 0), *b = shlo__otype(vc, op, 1);
  const shlo_type *r = shlo__rtype(vc, op, 0);
  if (!check_kind(vc, op, "I1", "lhs", a, K_ANY)) return false;
  if (!check_kind(vc, op, "I2", "rhs", b, K_ANY)) return false;
  if (!shlo__same_baseline_elem(a, b))
    return shlo__verr(vc, op, "C1", "lhs %s and rhs %s have different "
                      "element types", shlo__tstr(vc, a), shlo__tstr(vc, b));
  if (!shlo__is_bool(r))
    return shlo__verr(vc, op, "O1", "result %s must have element type i1",
                      shlo__tstr(vc, r));
  if (!shlo__compat_shape(a, b) || !shlo__compat_shape(a, r))
    return shlo__verr(vc, op, "C2", "lhs %s, rhs %s and result %s must have "
                      "the same shape", shlo__tstr(vc, a), shlo__tstr(vc, b),
                      shlo__tstr(vc, r));
  const char *ct = shlo_attr_get_str(shlo_op_attr(op, "compare_type"));
  const char *dir =
      shlo_attr_get_str(shlo_op_attr(op, "comparison_direction"));
  if (ct && strcmp(ct, "NOTYPE")) {
    int k = kind_of(a);
    bool ok = (k & (K_FLOAT | K_QUANT) &&
               (!strcmp(ct, "FLOAT") || !strcmp(ct, "TOTALORDER"))) ||
              (k & K_COMPLEX && !strcmp(ct, "FLOAT")) ||
              (k & K_SINT && !strcmp(ct, "SIGNED")) ||
              (k & (K_UINT | K_BOOL) && !strcmp(ct, "UNSIGNED"));
    if (!ok)
      return shlo__verr(vc, op, "C3", "compare_type %s does not suit "
                        "element type of %s", ct, shlo__tstr(vc, a));
  }
  if (dir && kind_of(a) == K_COMPLEX && strcmp(dir, "EQ") && strcmp(dir, "NE"))
    return shlo__verr(vc, op, "C4", "comparison_direction %s is not defined "
                      "for complex %s", dir, shlo__tstr(vc, a));
  return true;
}

/* select: C1 pred is i1 and rank 0 or the shape of on_true; C2 on_true,
 * on_false and result have the same type. */
bool shlo__verify_select(shlo__vctx *vc, const shlo_op *op) {
  if (!arity(vc, op, 3, 1)) return false;
  const shlo_type *p = shlo__otype(vc, op, 0), *t = shlo__otype(vc, op, 1),
                  *f = shlo__otype(vc, op, 2), *r = shlo__rtype(vc, op, 0);
  if (!shlo__is_bool(p))
    return shlo__verr(vc, op, "I1", "pred %s must have element type i1",
                      shlo__tstr(vc, p));
  if (!check_kind(vc, op, "I2", "on_true", t, K_ANY)) return false;
  if (!check_kind(vc, op, "I3", "on_false", f, K_ANY)) return false;
  if (p->rank != 0 && !shlo__compat_shape(p, t))
    return shlo__verr(vc, op, "C1", "pred %s must be rank 0 or have the "
                      "shape of on_true %s", shlo__tstr(vc, p),
                      shlo__tstr(vc, t));
  if (!shlo__compat_type(t, f) || !shlo__compat_type(t, r))
    return shlo__verr(vc, op, "C2", "on_true %s, on_false %s and result %s "
                      "must have the same type", shlo__tstr(vc, t),
                      shlo__tstr(vc, f), shlo__tstr(vc, r));
  return true;
}

/* clamp: C1 min is rank 0 or has operand's shape; C2 likewise max; C3 min,
 * operand and max share the element type; C4 result type is operand's. */
bool shlo__verify_clamp(shlo__vctx *vc, const shlo_op *op) {
  if (!arity(vc, op, 3, 1)) return false;
  const shlo_type *mn = shlo__otype(vc, op, 0), *x = shlo__otype(vc, op, 1),
                  *mx = shlo__otype(vc, op, 2), *r = shlo__rtype(vc, op, 0);
  if (!check_kind(vc, op, "I2", "operand", x, K_ANY)) return false;
  if (!check_kind(vc, op, "I1", "min", mn, K_ANY)) return false;
  if (!check_kind(vc, op, "I3", "max", mx, K_ANY)) return false;
  if (mn->rank != 0 && !shlo__compat_shape(mn, x))
    return shlo__verr(vc, op, "C1", "min %s is not rank 0 and does not have "
                      "the operand's shape %s", shlo__tstr(vc, mn),
                      shlo__tstr(vc, x));
  if (mx->rank != 0 && !shlo__compat_shape(mx, x))
    return shlo__verr(vc, op, "C2", "max %s is not rank 0 and does not have "
                      "the operand's shape %s", shlo__tstr(vc, mx),
                      shlo__tstr(vc, x));
  if (!shlo__same_baseline_elem(mn, x) || !shlo__same_baseline_elem(mx, x))
    return shlo__verr(vc, op, "C3", "min %s, operand %s and max %s must have "
                      "the same element type", shlo__tstr(vc, mn),
                      shlo__tstr(vc, x), shlo__tstr(vc, mx));
  if (!shlo__compat_baseline(x, r))
    return shlo__verr(vc, op, "C4", "result %s must have the operand's type "
                      "%s", shlo__tstr(vc, r), shlo__tstr(vc, x));
  return true;
}

/* complex: C1 lhs and rhs have the same type, f32 or f64; C2 the result
 * has their shape; C3 the result's element type is complex of theirs. */
bool shlo__verify_complex(shlo__vctx *vc, const shlo_op *op) {
  if (!arity(vc, op, 2, 1)) return false;
  const shlo_type *a = shlo__otype(vc, op, 0), *b = shlo__otype(vc, op, 1),
                  *r = shlo__rtype(vc, op, 0);
  if (!shlo__is_tensor(a) || a->quant ||
      (a->elem != SHLO_F32 && a->elem != SHLO_F64))
    return shlo__verr(vc, op, "I1", "lhs %s must have element type f32 or "
                      "f64", shlo__tstr(vc, a));
  if (!shlo__compat_type(a, b))
    return shlo__verr(vc, op, "C1", "lhs %s and rhs %s must have the same "
                      "type", shlo__tstr(vc, a), shlo__tstr(vc, b));
  if (!shlo__compat_shape(a, r))
    return shlo__verr(vc, op, "C2", "result %s must have the shape of lhs "
                      "%s", shlo__tstr(vc, r), shlo__tstr(vc, a));
  shlo_elem_type want = a->elem == SHLO_F32 ? SHLO_C64 : SHLO_C128;
  if (r->quant || r->elem != want)
    return shlo__verr(vc, op, "C3", "result %s must have element type %s",
                      shlo__tstr(vc, r), shlo_elem_name(want));
  return true;
}

/* real, imag: C1 same shape; C2 the result element type is the complex
 * operand's part type, or the operand's own float type. */
bool shlo__verify_real_imag(shlo__vctx *vc, const shlo_op *op) {
  if (!arity(vc, op, 1, 1)) return false;
  const shlo_type *a = shlo__otype(vc, op, 0), *r = shlo__rtype(vc, op, 0);
  if (!check_kind(vc, op, "I1", "operand", a, K_FLOAT | K_COMPLEX))
    return false;
  if (!shlo__compat_shape(a, r))
    return shlo__verr(vc, op, "C1", "operand %s and result %s must have the "
                      "same shape", shlo__tstr(vc, a), shlo__tstr(vc, r));
  shlo_elem_type want = shlo_elem_is_complex(a->elem)
                            ? shlo_elem_complex_part(a->elem)
                            : a->elem;
  if (r->quant || r->elem != want)
    return shlo__verr(vc, op, "C2", "result %s must have element type %s "
                      "for operand %s", shlo__tstr(vc, r),
                      shlo_elem_name(want), shlo__tstr(vc, a));
  return true;
}

/* convert: C1 operand and result have the same shape; neither is
 * quantized (use uniform_quantize/dequantize). */
bool shlo__verify_convert(shlo__vctx *vc, const shlo_op *op) {
  if (!arity(vc, op, 1, 1)) return false;
  const shlo_type *a = shlo__otype(vc, op, 0), *r = shlo__rtype(vc, op, 0);
  if (!shlo__is_tensor(a) || !shlo__is_tensor(r))
    return shlo__verr(vc, op, "I1", "operand %s and result %s must be "
                      "tensors", shlo__tstr(vc, a), shlo__tstr(vc, r));
  if (!shlo__compat_shape(a, r))
    return shlo__verr(vc, op, "C1", "operand %s and result %s must have the "
                      "same shape", shlo__tstr(vc, a), shlo__tstr(vc, r));
  return true;
}

/* bitcast_convert: C1 with equal bit widths the shapes are equal; with a
 * narrower result its shape is the operand's plus a last dimension of the
 * width ratio; with a wider result the operand's last dimension is the
 * ratio and the rest match.  Complex and real types do not mix (C2). */
bool shlo__verify_bitcast_convert(shlo__vctx *vc, const shlo_op *op) {
  if (!arity(vc, op, 1, 1)) return false;
  const shlo_type *a = shlo__otype(vc, op, 0), *r = shlo__rtype(vc, op, 0);
  if (!shlo__is_tensor(a) || !shlo__is_tensor(r))
    return shlo__verr(vc, op, "I1", "operand %s and result %s must be "
                      "tensors", shlo__tstr(vc, a), shlo__tstr(vc, r));
  shlo_elem_type ea = a->quant ? a->quant->storage : a->elem;
  shlo_elem_type er = r->quant ? r->quant->storage : r->elem;
  if (shlo_elem_is_complex(ea) != shlo_elem_is_complex(er))
    return shlo__verr(vc, op, "C2", "cannot convert between real and complex "
                      "types: %s and %s", shlo__tstr(vc, a),
                      shlo__tstr(vc, r));
  int wa = shlo_elem_bits(ea), wr = shlo_elem_bits(er);
  const shlo_type *small = wa < wr ? a : r, *big = wa < wr ? r : a;
  int ws = wa < wr ? wa : wr, wb = wa < wr ? wr : wa;
  if (wa == wr) {
    if (!shlo__compat_shape(a, r))
      return shlo__verr(vc, op, "C1", "operand %s and result %s must have "
                        "the same shape", shlo__tstr(vc, a),
                        shlo__tstr(vc, r));
    return true;
  }
  if (small->rank != big->rank + 1)
    return shlo__verr(vc, op, "C1", "rank of the type with the smaller "
                      "element type (%s) should be 1 more than that of %s",
                      shlo__tstr(vc, small), shlo__tstr(vc, big));
  for (int i = 0; i < big->rank; i++)
    if (small->dims[i] != big->dims[i])
      return shlo__verr(vc, op, "C1", "operand %s and result %s shapes must "
                        "match except for the innermost dimension of the "
                        "smaller element type", shlo__tstr(vc, a),
                        shlo__tstr(vc, r));
  if (small->dims[small->rank - 1] * ws != wb)
    return shlo__verr(vc, op, "C1", "requires compatible bit widths: %s and "
                      "%s, but %d * %lld != %d", shlo__tstr(vc, a),
                      shlo__tstr(vc, r), ws,
                      (long long)small->dims[small->rank - 1], wb);
  return true;
}

/* reduce_precision: C1 result type is operand's (float or quantized);
 * C2 exponent_bits >= 1; C3 mantissa_bits >= 0. */
bool shlo__verify_reduce_precision(shlo__vctx *vc, const shlo_op *op) {
  if (!arity(vc, op, 1, 1)) return false;
  const shlo_type *a = shlo__otype(vc, op, 0), *r = shlo__rtype(vc, op, 0);
  if (!check_kind(vc, op, "I1", "operand", a, K_FLOAT | K_QUANT))
    return false;
  if (!shlo__compat_baseline(a, r))
    return shlo__verr(vc, op, "C1", "result %s must have the operand's type "
                      "%s", shlo__tstr(vc, r), shlo__tstr(vc, a));
  int64_t e = 1, m = 0;
  shlo_attr_get_i64(shlo_op_attr(op, "exponent_bits"), &e);
  shlo_attr_get_i64(shlo_op_attr(op, "mantissa_bits"), &m);
  if (e < 1)
    return shlo__verr(vc, op, "C2", "exponent_bits must be positive, got "
                      "%lld", (long long)e);
  if (m < 0)
    return shlo__verr(vc, op, "C3", "mantissa_bits must be non-negative, got "
                      "%lld", (long long)m);
  return true;
}

/* is_finite: operand float or quantized (I1); C1 result i1 with the
 * operand's shape. */
bool shlo__verify_is_finite(shlo__vctx *vc, const shlo_op *op) {
  if (!arity(vc, op, 1, 1)) return false;
  const shlo_type *a = shlo__otype(vc, op, 0), *r = shlo__rtype(vc, op, 0);
  if (!check_kind(vc, op, "I1", "operand", a, K_FLOAT | K_QUANT))
    return false;
  if (!shlo__is_bool(r))
    return shlo__verr(vc, op, "O1", "result %s must have element type i1",
                      shlo__tstr(vc, r));
  if (!shlo__compat_shape(a, r))
    return shlo__verr(vc, op, "C1", "operand %s and result %s must have the "
                      "same shape", shlo__tstr(vc, a), shlo__tstr(vc, r));
  return true;
}

/* constant: C1 the value's type is the result type (a quantized result
 * takes a value of its storage type). */
bool shlo__verify_constant(shlo__vctx *vc, const shlo_op *op) {
  if (!arity(vc, op, 0, 1)) return false;
  const shlo_attr *v = shlo_op_attr(op, "value");
  const shlo_type *r = shlo__rtype(vc, op, 0);
  if (!v)
    return shlo__verr(vc, op, "C1", "requires a 'value' attribute");
  if (v->kind != SHLO_ATTR_DENSE || !v->type) return true;
  const shlo_type *t = v->type;
  bool ok;
  if (shlo__is_tensor(r) && r->quant && !t->quant)
    ok = t->kind == SHLO_TYPE_TENSOR && shlo__compat_shape(t, r) &&
         t->elem == r->quant->storage;
  else
    ok = shlo__compat_type(t, r);
  if (!ok)
    return shlo__verr(vc, op, "C1", "value has type %s but the result is %s",
                      shlo__tstr(vc, t), shlo__tstr(vc, r));
  return true;
}

/* uniform_quantize: operand float or quantized (I1), result quantized
 * (O1); C1 same shape; C2 the result's expressed type is the operand's
 * float (or expressed) type. */
bool shlo__verify_uniform_quantize(shlo__vctx *vc, const shlo_op *op) {
  if (!arity(vc, op, 1, 1)) return false;
  const shlo_type *a = shlo__otype(vc, op, 0), *r = shlo__rtype(vc, op, 0);
  if (!shlo__is_tensor(a) || (!a->quant && !shlo_elem_is_float(a->elem)))
    return shlo__verr(vc, op, "I1", "operand %s must be a float or quantized "
                      "tensor", shlo__tstr(vc, a));
  if (!shlo__is_quant(r))
    return shlo__verr(vc, op, "O1", "result %s must be quantized",
                      shlo__tstr(vc, r));
  if (!shlo__compat_shape(a, r))
    return shlo__verr(vc, op, "C1", "operand %s and result %s must have the "
                      "same shape", shlo__tstr(vc, a), shlo__tstr(vc, r));
  shlo_elem_type ex = a->quant ? a->quant->expressed : a->elem;
  if (r->quant->expressed != ex)
    return shlo__verr(vc, op, "C2", "expressed type of result expected to be "
                      "%s, but got %s", shlo_elem_name(ex),
                      shlo_elem_name(r->quant->expressed));
  return true;
}

/* uniform_dequantize: operand quantized (I1); C1 same shape; C2 the
 * result's element type is the operand's expressed type. */
bool shlo__verify_uniform_dequantize(shlo__vctx *vc, const shlo_op *op) {
  if (!arity(vc, op, 1, 1)) return false;
  const shlo_type *a = shlo__otype(vc, op, 0), *r = shlo__rtype(vc, op, 0);
  if (!shlo__is_quant(a))
    return shlo__verr(vc, op, "I1", "operand %s must be quantized",
                      shlo__tstr(vc, a));
  if (!shlo__is_tensor(r) || r->quant || r->elem != a->quant->expressed)
    return shlo__verr(vc, op, "C2", "result %s must have the operand's "
                      "expressed type %s", shlo__tstr(vc, r),
                      shlo_elem_name(a->quant->expressed));
  if (!shlo__compat_shape(a, r))
    return shlo__verr(vc, op, "C1", "operand %s and result %s must have the "
                      "same shape", shlo__tstr(vc, a), shlo__tstr(vc, r));
  return true;
}
