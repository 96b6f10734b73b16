/* SPDX-License-Identifier: Apache-2.0 */
/* Verifiers of the shape family: broadcast_in_dim, broadcast,
 * concatenate, dynamic_slice, dynamic_update_slice, get_dimension_size,
 * iota, pad, reshape, reverse, slice, transpose. */
#include <stdio.h>

#include "verify/verify_int.h"

#define R SHLO_MAX_RANK

static bool is_tensor_op(shlo__vctx *vc, const shlo_op *op, int n_in) {
  if ((n_in >= 0 && op->n_operands != n_in) || op->n_results != 1)
    return shlo__verr(vc, op, NULL, "expects %d operand(s) and 1 result, got "
                      "%d and %d", n_in, op->n_operands, op->n_results);
  for (int i = 0; i < op->n_operands; i++)
    if (!shlo__is_tensor(shlo__otype(vc, op, i)))
      return shlo__verr(vc, op, NULL, "operand #%d %s must be a tensor", i,
                        shlo__tstr(vc, shlo__otype(vc, op, i)));
  if (!shlo__is_tensor(shlo__rtype(vc, op, 0)))
    return shlo__verr(vc, op, NULL, "result %s must be a tensor",
                      shlo__tstr(vc, shlo__rtype(vc, op, 0)));
  return true;
}

/* Element types agree: exactly, or for quantized types in storage and
 * expressed types (scales may differ where the spec allows). */
static bool elem_ok(const shlo_type *a, const shlo_type *b) {
  if (shlo__is_quant(a) && shlo__is_quant(b) && !a->quant->per_axis &&
      !b->quant->per_axis)
    return shlo__same_elem(a, b); /* same scale and zero point */
  return shlo__same_baseline_elem(a, b);
}

/* Both per-axis quantized with the same lists of scales and zero points
 * (reshape and transpose move the axis but keep its parameters). */
static bool same_axis_params(const shlo_type *a, const shlo_type *b) {
  if (!shlo__is_per_axis(a) || !shlo__is_per_axis(b)) return true;
  if (a->quant->n != b->quant->n) return false;
  for (int i = 0; i < a->quant->n; i++)
    if (a->quant->scales[i] != b->quant->scales[i] ||
        a->quant->zero_points[i] != b->quant->zero_points[i])
      return false;
  return true;
}

/* C1 of broadcast_in_dim, dynamic_slice, reshape, slice and transpose:
 * operand a and result r agree in element type (elem_ok); with
 * axis_params (reshape, transpose), per-axis ones also in their scales and
 * zero points. */
static bool c1_elem(shlo__vctx *vc, const shlo_op *op, const shlo_type *a,
                    const shlo_type *r, bool axis_params) {
  if (!elem_ok(a, r))
    return shlo__verr(vc, op, "C1", "operand %s and result %s have different "
                      "element types", shlo__tstr(vc, a), shlo__tstr(vc, r));
  if (axis_params && !same_axis_params(a, r))
    return shlo__verr(vc, op, "C1", "operand %s and result %s must have the "
                      "same quantization scales and zero points",
                      shlo__tstr(vc, a), shlo__tstr(vc, r));
  return true;
}

/* broadcast_in_dim: C1 element types agree; C2 size(broadcast_dimensions)
 * = rank(operand); C3 each is within rank(result); C4 no duplicates;
 * C5 each operand dimension is 1 or equals the result dimension it maps
 * to; C6 a per-axis result quantizes along the mapped operand axis. */
bool shlo__verify_broadcast_in_dim(shlo__vctx *vc, const shlo_op *op) {
  if (!is_tensor_op(vc, op, 1)) return false;
  const shlo_type *a = shlo__otype(vc, op, 0), *r = shlo__rtype(vc, op, 0);
  if (!c1_elem(vc, op, a, r, false)) return false;
  int64_t bd[R];
  int n = shlo__attr_ints(op, "broadcast_dimensions", bd, R);
  if (n < 0) return shlo__verr(vc, op, "C2", "requires broadcast_dimensions");
  if (n != a->rank)
    return shlo__verr(vc, op, "C2", "broadcast_dimensions %s has %d entries "
                      "but the operand %s has rank %d", shlo__dstr(vc, bd, n),
                      n, shlo__tstr(vc, a), a->rank);
  for (int i = 0; i < n; i++)
    if (bd[i] < 0 || bd[i] >= r->rank)
      return shlo__verr(vc, op, "C3", "broadcast_dimensions[%d] = %lld is "
                        "out of range for result %s", i, (long long)bd[i],
                        shlo__tstr(vc, r));
  int64_t dup;
  if (shlo__has_dups(bd, n, &dup))
    return shlo__verr(vc, op, "C4", "broadcast_dimensions %s repeats %lld",
                      shlo__dstr(vc, bd, n), (long long)dup);
  if (!shlo__static_or_bounded(r))
    return shlo__verr(vc, op, NULL, "result %s must be statically shaped or "
                      "single bounded dimension tensor", shlo__tstr(vc, r));
  for (int i = 0; i < n; i++)
    if (a->dims[i] != 1 && !shlo__dim_eq(a->dims[i], r->dims[bd[i]]))
      return shlo__verr(vc, op, "C5", "operand dimension %d has size %lld, "
                        "which is neither 1 nor the size %lld of result "
                        "dimension %lld", i, (long long)a->dims[i],
                        (long long)r->dims[bd[i]], (long long)bd[i]);
  return shlo__check_broadcast_quant(vc, op, a, r, bd);
}

bool shlo__check_broadcast_quant(shlo__vctx *vc, const shlo_op *op,
                                 const shlo_type *a, const shlo_type *r,
                                 const int64_t *bd) {
  if (!shlo__is_per_axis(r)) return true;
  if (!shlo__is_per_axis(a))
    return shlo__verr(vc, op, "C6", "per-axis quantized result %s needs a "
                      "per-axis quantized operand", shlo__tstr(vc, r));
  const shlo_quant *qa = a->quant, *qr = r->quant;
  int ax = qa->axis;
  if (qr->axis != bd[ax])
    return shlo__verr(vc, op, "C6", "result quantization dimension %d must "
                      "be broadcast_dimensions[%d] = %lld", qr->axis, ax,
                      (long long)bd[ax]);
  if (a->dims[ax] != 1) return true;
  /* A size-1 quantized dimension broadcasts its one (scale, zero point). */
  for (int k = 0; k < qr->n; k++) {
    if (qr->scales[k] != qa->scales[0])
      return shlo__verr(vc, op, "C6", "result %s scale #%d (%g) must be the "
                        "operand's scale #0 (%g)", shlo__tstr(vc, r), k,
                        qr->scales[k], qa->scales[0]);
    if (qr->zero_points[k] != qa->zero_points[0])
      return shlo__verr(vc, op, "C6", "result %s zero point #%d (%lld) must "
                        "be the operand's zero point #0 (%lld)",
                        shlo__tstr(vc, r), k, (long long)qr->zero_points[k],
                        (long long)qa->zero_points[0]);
  }
  return true;
}

/* broadcast: the result shape is broadcast_sizes followed by the operand's
 * shape, with the operand's element type. */
bool shlo__verify_broadcast(shlo__vctx *vc, const shlo_op *op) {
  if (!is_tensor_op(vc, op, 1)) return false;
  const shlo_type *a = shlo__otype(vc, op, 0), *r = shlo__rtype(vc, op, 0);
  int64_t bs[R];
  int n = shlo__attr_ints(op, "broadcast_sizes", bs, R);
  if (n < 0) n = 0;
  for (int i = 0; i < n; i++)
    if (bs[i] < 0)
      return shlo__verr(vc, op, "C1", "broadcast_sizes %s must be "
                        "non-negative", shlo__dstr(vc, bs, n));
  bool ok = elem_ok(a, r) && r->rank == n + a->rank;
  for (int i = 0; ok && i < r->rank; i++)
    ok = r->dims[i] == (i < n ? bs[i] : a->dims[i - n]);
  if (!ok)
    return shlo__verr(vc, op, "C1", "result %s must be %s broadcast by %s",
                      shlo__tstr(vc, r), shlo__tstr(vc, a),
                      shlo__dstr(vc, bs, n));
  return true;
}

/* concatenate: C1 inputs share the element type; C2 and their shapes
 * except at dimension; C3 at least one input; C4 0 <= dimension < rank;
 * C5 the result has their element type; C6 and their shape with the
 * sizes at dimension summed. */
bool shlo__verify_concatenate(shlo__vctx *vc, const shlo_op *op) {
  if (op->n_operands < 1)
    return shlo__verr(vc, op, "C3", "expects at least one input");
  if (!is_tensor_op(vc, op, -1)) return false;
  const shlo_type *a = shlo__otype(vc, op, 0), *r = shlo__rtype(vc, op, 0);
  int64_t d = 0;
  shlo_attr_get_i64(shlo_op_attr(op, "dimension"), &d);
  if (a->rank == 0)
    return shlo__verr(vc, op, "C4", "rank-0 inputs cannot be concatenated");
  if (d < 0 || d >= a->rank)
    return shlo__verr(vc, op, "C4", "dimension %lld is out of range for "
                      "input %s", (long long)d, shlo__tstr(vc, a));
  int64_t sum = 0;
  for (int i = 0; i < op->n_operands; i++) {
    const shlo_type *t = shlo__otype(vc, op, i);
    if (!elem_ok(t, a))
      return shlo__verr(vc, op, "C1", "input #%d %s and input #0 %s have "
                        "different element types", i, shlo__tstr(vc, t),
                        shlo__tstr(vc, a));
    if (t->rank != a->rank)
      return shlo__verr(vc, op, "C2", "input #%d %s and input #0 %s have "
                        "different ranks", i, shlo__tstr(vc, t),
                        shlo__tstr(vc, a));
    for (int k = 0; k < a->rank; k++)
      if (k != d && !shlo__dim_eq(t->dims[k], a->dims[k]))
        return shlo__verr(vc, op, "C2", "input #%d %s and input #0 %s "
                          "differ at dimension %d", i, shlo__tstr(vc, t),
                          shlo__tstr(vc, a), k);
    /* A dynamic input makes the concatenated size dynamic. */
    sum = sum < 0 || t->dims[d] < 0 ? SHLO_DYN : sum + t->dims[d];
  }
  if (!elem_ok(r, a))
    return shlo__verr(vc, op, "C5", "result %s must have the inputs' element "
                      "type (%s)", shlo__tstr(vc, r), shlo__tstr(vc, a));
  bool ok = r->rank == a->rank;
  for (int k = 0; ok && k < a->rank; k++)
    ok = shlo__dim_eq(r->dims[k], k == d ? sum : a->dims[k]);
  if (!ok)
    return shlo__verr(vc, op, "C6", "result %s does not match the inputs "
                      "concatenated along dimension %lld (size %lld)",
                      shlo__tstr(vc, r), (long long)d, (long long)sum);
  return true;
}

/* Start indices of dynamic_slice / dynamic_update_slice: rank-0 integer
 * tensors of one type. */
static bool start_indices_ok(shlo__vctx *vc, const shlo_op *op, int first,
                             int rank, const char *c_count,
                             const char *c_type) {
  int n = op->n_operands - first;
  if (n != rank)
    return shlo__verr(vc, op, c_count, "has %d start indices but the operand "
                      "has rank %d", n, rank);
  for (int i = first; i < op->n_operands; i++) {
    const shlo_type *t = shlo__otype(vc, op, i);
    if (t->rank != 0 || !shlo__is_int(t))
      return shlo__verr(vc, op, c_type, "start index %d has type %s; "
                        "expected a rank-0 integer tensor", i - first,
                        shlo__tstr(vc, t));
    if (!shlo__same_elem(t, shlo__otype(vc, op, first)))
      return shlo__verr(vc, op, c_type, "start indices must have the same "
                        "type: %s vs %s", shlo__tstr(vc, t),
                        shlo__tstr(vc, shlo__otype(vc, op, first)));
  }
  return true;
}

/* dynamic_slice: C1 element types agree; C2 size(start_indices) =
 * size(slice_sizes) = rank(operand); C3 start indices share one integer
 * type; C4 0 <= slice_sizes <= shape(operand); C5 result shape is
 * slice_sizes. */
bool shlo__verify_dynamic_slice(shlo__vctx *vc, const shlo_op *op) {
  if (!is_tensor_op(vc, op, -1) || op->n_operands < 1) return false;
  const shlo_type *a = shlo__otype(vc, op, 0), *r = shlo__rtype(vc, op, 0);
  if (!c1_elem(vc, op, a, r, false)) return false;
  int64_t ss[R];
  int n = shlo__attr_ints(op, "slice_sizes", ss, R);
  if (n != a->rank)
    return shlo__verr(vc, op, "C2", "slice_sizes %s must have one entry per "
                      "operand dimension (rank %d)",
                      shlo__dstr(vc, ss, n < 0 ? 0 : n), a->rank);
  if (!start_indices_ok(vc, op, 1, a->rank, "C2", "C3")) return false;
  for (int i = 0; i < n; i++)
    if (ss[i] < 0 || (a->dims[i] >= 0 && ss[i] > a->dims[i]))
      return shlo__verr(vc, op, "C4", "slice size %lld of dimension %d is "
                        "not within [0, %lld]", (long long)ss[i], i,
                        (long long)a->dims[i]);
  bool ok = r->rank == n;
  for (int i = 0; ok && i < n; i++) ok = shlo__dim_eq(r->dims[i], ss[i]);
  if (!ok)
    return shlo__verr(vc, op, "C5", "result %s must have shape slice_sizes "
                      "%s", shlo__tstr(vc, r), shlo__dstr(vc, ss, n));
  return true;
}

/* dynamic_update_slice: C1 result type is operand's; C2 update's element
 * type is operand's; C3 rank(update) = rank(operand); C4
 * size(start_indices) = rank(operand); C5 start indices share one integer
 * type; C6 shape(update) <= shape(operand). */
bool shlo__verify_dynamic_update_slice(shlo__vctx *vc, const shlo_op *op) {
  if (!is_tensor_op(vc, op, -1) || op->n_operands < 2) return false;
  const shlo_type *a = shlo__otype(vc, op, 0), *u = shlo__otype(vc, op, 1),
                  *r = shlo__rtype(vc, op, 0);
  if (!shlo__compat_baseline(a, r))
    return shlo__verr(vc, op, "C1", "result %s must have the operand's type "
                      "%s", shlo__tstr(vc, r), shlo__tstr(vc, a));
  if (!elem_ok(a, u))
    return shlo__verr(vc, op, "C2", "update %s must have the operand's "
                      "element type (%s)", shlo__tstr(vc, u),
                      shlo__tstr(vc, a));
  if (u->rank != a->rank)
    return shlo__verr(vc, op, "C3", "update %s and operand %s have "
                      "different ranks", shlo__tstr(vc, u),
                      shlo__tstr(vc, a));
  if (!start_indices_ok(vc, op, 2, a->rank, "C4", "C5")) return false;
  for (int i = 0; i < a->rank; i++)
    if (a->dims[i] >= 0 && u->dims[i] > a->dims[i])
      return shlo__verr(vc, op, "C6", "update dimension %d has size %lld, "
                        "larger than the operand's %lld", i,
                        (long long)u->dims[i], (long long)a->dims[i]);
  return true;
}

/* get_dimension_size: C1 0 <= dimension < rank(operand); the result is
 * tensor<i32>. */
/* set_dimension_size (not in the spec; MLIR's op): operand, a rank-0 i32 size and one result; dimension is
 * non-negative and within the operand's rank; the result has the
 * operand's element type and rank, and its other dimensions. */
bool shlo__verify_set_dimension_size(shlo__vctx *vc, const shlo_op *op) {
  if (op->n_operands != 2 || op->n_results != 1)
    return shlo__verr(vc, op, NULL, "expects operand, size and one result");
  const shlo_type *a = shlo__otype(vc, op, 0), *sz = shlo__otype(vc, op, 1),
                  *r = shlo__rtype(vc, op, 0);
  if (!shlo__is_tensor(a) || !shlo__is_tensor(r) || !shlo__is_tensor(sz))
    return shlo__verr(vc, op, NULL, "operands and result must be tensors");
  int64_t d = 0;
  shlo_attr_get_i64(shlo_op_attr(op, "dimension"), &d);
  if (d < 0)
    return shlo__verr(vc, op, "dimension", "dimension %lld must be "
                      "non-negative", (long long)d);
  if (sz->rank != 0 || sz->quant || sz->elem != SHLO_SI32)
    return shlo__verr(vc, op, "size", "size operand %s must be a rank-0 "
                      "tensor<i32>", shlo__tstr(vc, sz));
  if (d >= a->rank)
    return shlo__verr(vc, op, "dimension", "dimension %lld must be in range "
                      "[0, %d) of operand %s", (long long)d, a->rank,
                      shlo__tstr(vc, a));
  bool ok = shlo__same_elem(a, r) && r->rank == a->rank;
  for (int i = 0; ok && i < a->rank; i++)
    ok = i == d || r->dims[i] == a->dims[i];
  if (!ok)
    return shlo__verr(vc, op, NULL, "result %s must be operand %s with "
                      "dimension %lld resized", shlo__tstr(vc, r),
                      shlo__tstr(vc, a), (long long)d);
  return true;
}

bool shlo__verify_get_dimension_size(shlo__vctx *vc, const shlo_op *op) {
  if (!is_tensor_op(vc, op, 1)) return false;
  const shlo_type *a = shlo__otype(vc, op, 0), *r = shlo__rtype(vc, op, 0);
  int64_t d = 0;
  shlo_attr_get_i64(shlo_op_attr(op, "dimension"), &d);
  if (d < 0 || d >= a->rank)
    return shlo__verr(vc, op, "C1", "dimension %lld is out of range for "
                      "operand %s", (long long)d, shlo__tstr(vc, a));
  if (r->rank != 0 || r->quant || r->elem != SHLO_SI32)
    return shlo__verr(vc, op, "O1", "result %s must be tensor<i32>",
                      shlo__tstr(vc, r));
  return true;
}

/* iota: C1 0 <= iota_dimension < rank(result). */
bool shlo__verify_iota(shlo__vctx *vc, const shlo_op *op) {
  if (!is_tensor_op(vc, op, 0)) return false;
  const shlo_type *r = shlo__rtype(vc, op, 0);
  int64_t d = 0;
  shlo_attr_get_i64(shlo_op_attr(op, "iota_dimension"), &d);
  if (r->rank == 0)
    return shlo__verr(vc, op, "C1", "result %s must have rank > 0",
                      shlo__tstr(vc, r));
  if (d < 0 || d >= r->rank)
    return shlo__verr(vc, op, "C1", "iota_dimension %lld is out of range "
                      "for result %s", (long long)d, shlo__tstr(vc, r));
  return true;
}

/* pad: C1 operand, padding_value and result share the element type; C2
 * edge_padding_low/high and interior_padding have rank(operand) entries;
 * C3 interior_padding >= 0; C4 result dims are low + high + operand +
 * (operand - 1) * interior, all >= 0. */
bool shlo__verify_pad(shlo__vctx *vc, const shlo_op *op) {
  if (!is_tensor_op(vc, op, 2)) return false;
  const shlo_type *a = shlo__otype(vc, op, 0), *p = shlo__otype(vc, op, 1),
                  *r = shlo__rtype(vc, op, 0);
  if (p->rank != 0)
    return shlo__verr(vc, op, "I2", "padding_value %s must be rank 0",
                      shlo__tstr(vc, p));
  if (!elem_ok(a, p) || !elem_ok(a, r))
    return shlo__verr(vc, op, "C1", "operand %s, padding_value %s and result "
                      "%s must have the same element type",
                      shlo__tstr(vc, a), shlo__tstr(vc, p),
                      shlo__tstr(vc, r));
  int64_t lo[R], hi[R], in[R];
  int nl = shlo__attr_ints(op, "edge_padding_low", lo, R);
  int nh = shlo__attr_ints(op, "edge_padding_high", hi, R);
  int ni = shlo__attr_ints(op, "interior_padding", in, R);
  if (nl != a->rank || nh != a->rank || ni != a->rank)
    return shlo__verr(vc, op, "C2", "edge_padding_low, edge_padding_high and "
                      "interior_padding must have %d entries (the operand's "
                      "rank), got %d, %d and %d", a->rank, nl, nh, ni);
  for (int i = 0; i < ni; i++)
    if (in[i] < 0)
      return shlo__verr(vc, op, "C3", "interior_padding %s must be "
                        "non-negative", shlo__dstr(vc, in, ni));
  if (r->rank != a->rank)
    return shlo__verr(vc, op, "C4", "result %s must have the operand's rank "
                      "%d", shlo__tstr(vc, r), a->rank);
  for (int i = 0; i < a->rank; i++) {
    if (a->dims[i] < 0) continue; /* a dynamic operand pads to any size */
    int64_t inner = 0, want;
    if ((a->dims[i] > 0 &&
         __builtin_mul_overflow(a->dims[i] - 1, in[i], &inner)) ||
        !shlo__add3(lo[i], hi[i], a->dims[i], &want) ||
        __builtin_add_overflow(want, inner, &want))
      return shlo__verr(vc, op, "C4", "padding gives dimension %d a size "
                        "that overflows 64-bit integers", i);
    if (want < 0)
      return shlo__verr(vc, op, "C4", "padding gives dimension %d a negative "
                        "size %lld", i, (long long)want);
    if (!shlo__dim_eq(r->dims[i], want))
      return shlo__verr(vc, op, "C4", "result dimension %d has size %lld but "
                        "padding gives %lld", i, (long long)r->dims[i],
                        (long long)want);
  }
  return true;
}

/* reshape: C1 element types agree (quantized: same parameters, per-axis
 * within rules); C2 size(operand) = size(result). */
bool shlo__verify_reshape(shlo__vctx *vc, const shlo_op *op) {
  if (!is_tensor_op(vc, op, 1)) return false;
  const shlo_type *a = shlo__otype(vc, op, 0), *r = shlo__rtype(vc, op, 0);
  if (!c1_elem(vc, op, a, r, true)) return false;
  int64_t na = shlo_type_numel(a), nr = shlo_type_numel(r);
  if (na != nr)
    return shlo__verr(vc, op, "C2", "operand %s has %lld elements but result "
                      "%s has %lld", shlo__tstr(vc, a), (long long)na,
                      shlo__tstr(vc, r), (long long)nr);
  if (shlo__is_per_axis(r) && shlo__is_per_axis(a)) {
    /* C3: the product of dims before the quantization dimension agrees. */
    int64_t pa = 1, pr = 1;
    for (int i = 0; i < a->quant->axis; i++) pa *= a->dims[i];
    for (int i = 0; i < r->quant->axis; i++) pr *= r->dims[i];
    if (pa != pr || a->dims[a->quant->axis] != r->dims[r->quant->axis])
      return shlo__verr(vc, op, "C3", "reshape must keep the quantization "
                        "dimension of %s in %s", shlo__tstr(vc, a),
                        shlo__tstr(vc, r));
  }
  return true;
}

/* reverse: C1 result type is operand's; C2 dimensions are unique; C3 each
 * is within the operand's rank. */
bool shlo__verify_reverse(shlo__vctx *vc, const shlo_op *op) {
  if (!is_tensor_op(vc, op, 1)) return false;
  const shlo_type *a = shlo__otype(vc, op, 0), *r = shlo__rtype(vc, op, 0);
  if (!shlo__compat_baseline(a, r))
    return shlo__verr(vc, op, "C1", "result %s must have the operand's type "
                      "%s", shlo__tstr(vc, r), shlo__tstr(vc, a));
  int64_t d[R * 2];
  int n = shlo__attr_ints(op, "dimensions", d, R * 2);
  int64_t dup;
  if (n > 0 && shlo__has_dups(d, n, &dup))
    return shlo__verr(vc, op, "C2", "dimensions %s repeat %lld",
                      shlo__dstr(vc, d, n), (long long)dup);
  for (int i = 0; i < n; i++)
    if (d[i] < 0 || d[i] >= a->rank)
      return shlo__verr(vc, op, "C3", "dimension %lld is out of range for "
                        "operand %s", (long long)d[i], shlo__tstr(vc, a));
  return true;
}

/* slice: C1 element types agree; C2 start_indices, limit_indices and
 * strides have rank(operand) entries; C3 0 <= start <= limit <= dim;
 * C4 strides > 0; C5 result dim = ceil((limit - start) / stride). */
bool shlo__verify_slice(shlo__vctx *vc, const shlo_op *op) {
  if (!is_tensor_op(vc, op, 1)) return false;
  const shlo_type *a = shlo__otype(vc, op, 0), *r = shlo__rtype(vc, op, 0);
  if (!c1_elem(vc, op, a, r, false)) return false;
  int64_t s[R], l[R], st[R];
  int ns = shlo__attr_ints(op, "start_indices", s, R);
  int nl = shlo__attr_ints(op, "limit_indices", l, R);
  int nt = shlo__attr_ints(op, "strides", st, R);
  if (nt < 0) {
    nt = ns;
    for (int i = 0; i < nt; i++) st[i] = 1;
  }
  if (ns != a->rank || nl != a->rank || nt != a->rank)
    return shlo__verr(vc, op, "C2", "start_indices, limit_indices and strides "
                      "must have %d entries (the operand's rank), got %d, %d "
                      "and %d", a->rank, ns, nl, nt);
  for (int i = 0; i < ns; i++) {
    if (s[i] < 0)
      return shlo__verr(vc, op, "C3", "negative start index %lld in "
                        "dimension %d", (long long)s[i], i);
    if (a->dims[i] >= 0 && l[i] > a->dims[i])
      return shlo__verr(vc, op, "C3", "limit index %lld is larger than "
                        "dimension %d's size %lld", (long long)l[i], i,
                        (long long)a->dims[i]);
    if (s[i] > l[i])
      return shlo__verr(vc, op, "C3", "start index %lld is larger than limit "
                        "index %lld in dimension %d", (long long)s[i],
                        (long long)l[i], i);
    if (st[i] <= 0)
      return shlo__verr(vc, op, "C4", "stride %lld of dimension %d must be "
                        "positive", (long long)st[i], i);
  }
  bool ok = r->rank == a->rank;
  for (int i = 0; ok && i < ns; i++)
    ok = shlo__dim_eq(r->dims[i], (l[i] - s[i] + st[i] - 1) / st[i]);
  if (!ok)
    return shlo__verr(vc, op, "C5", "result %s does not match slicing %s "
                      "with start %s, limit %s, strides %s",
                      shlo__tstr(vc, r), shlo__tstr(vc, a),
                      shlo__dstr(vc, s, ns), shlo__dstr(vc, l, nl),
                      shlo__dstr(vc, st, nt));
  return true;
}

/* transpose: C1 element types agree; C2 permutation is a permutation of
 * 0..rank-1; C3 result dim i is operand dim permutation[i]; C4 a per-axis
 * result quantizes along the permuted axis. */
bool shlo__verify_transpose(shlo__vctx *vc, const shlo_op *op) {
  if (!is_tensor_op(vc, op, 1)) return false;
  const shlo_type *a = shlo__otype(vc, op, 0), *r = shlo__rtype(vc, op, 0);
  if (!c1_elem(vc, op, a, r, true)) return false;
  int64_t p[R];
  int n = shlo__attr_ints(op, "permutation", p, R);
  if (n != a->rank || !shlo__is_permutation(p, n))
    return shlo__verr(vc, op, "C2", "permutation %s is not a permutation of "
                      "the %d dimensions of %s",
                      shlo__dstr(vc, p, n < 0 ? 0 : n), a->rank,
                      shlo__tstr(vc, a));
  bool ok = r->rank == n;
  for (int i = 0; ok && i < n; i++) ok = r->dims[i] == a->dims[p[i]];
  if (!ok)
    return shlo__verr(vc, op, "C3", "result %s is not operand %s permuted by "
                      "%s", shlo__tstr(vc, r), shlo__tstr(vc, a),
                      shlo__dstr(vc, p, n));
  if (shlo__is_per_axis(a) && shlo__is_per_axis(r) &&
      p[r->quant->axis] != a->quant->axis)
    return shlo__verr(vc, op, "C4", "result quantization dimension %d must "
                      "map to the operand's %d", r->quant->axis,
                      a->quant->axis);
  return true;
}
