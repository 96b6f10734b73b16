/* SPDX-License-Identifier: Apache-2.0 */
/* Verifiers of the reduction family: map, reduce, reduce_window,
 * select_and_scatter, sort; and the reduction-body check that scatter and
 * the collectives share. */
#include <stdio.h>
#include <string.h>

#include "core/value.h"
#include "verify/verify_int.h"

#define R SHLO_MAX_RANK

bool shlo__promotable(const shlo_type *from, const shlo_type *to) {
  if (!shlo__is_tensor(from) || !shlo__is_tensor(to)) return false;
  if (from->quant || to->quant) {
    if (!from->quant || !to->quant) return false;
    return from->quant->expressed == to->quant->expressed &&
           shlo_elem_class_of(from->quant->storage) ==
               shlo_elem_class_of(to->quant->storage) &&
           shlo_elem_bits(to->quant->storage) >=
               shlo_elem_bits(from->quant->storage);
  }
  if (from->elem == to->elem) return true;
  shlo_elem_class a = shlo_elem_class_of(from->elem),
                  b = shlo_elem_class_of(to->elem);
  if (a != b || a == SHLO_CLASS_BOOL) return false;
  return shlo_elem_bits(to->elem) >= shlo_elem_bits(from->elem);
}

bool shlo__check_reduction_body(shlo__vctx *vc, const shlo_op *op,
                                const char *label, const shlo_block *b,
                                int n, const shlo_type *const *inputs,
                                const shlo_type **acc) {
  if (!b)
    return shlo__verr(vc, op, label, "requires a reduction region");
  if (b->n_args != 2 * n)
    return shlo__verr(vc, op, label, "reduction region must take %d "
                      "parameters, but takes %d", 2 * n, b->n_args);
  const shlo_op *ret = shlo__region_terminator(b);
  if (!ret || ret->n_operands == 0)
    return shlo__verr(vc, op, label, "the reduction region must return "
                      "some value(s)");
  if (ret->n_operands != n)
    return shlo__verr(vc, op, label, "the reduction region must produce %d "
                      "tensors, but produces %d", n, ret->n_operands);
  for (int i = 0; i < n; i++) {
    const shlo_type *rt = shlo__otype(vc, ret, i);
    if (!shlo__is_tensor(rt))
      return shlo__verr(vc, op, label, "the reduction region must produce "
                        "tensors, but result #%d is %s", i,
                        shlo__tstr(vc, rt));
  }
  for (int i = 0; i < n; i++) {
    const shlo_type *rt = shlo__otype(vc, ret, i);
    const shlo_type *a0 = shlo__barg(vc, b, i), *a1 = shlo__barg(vc, b, n + i);
    if (!shlo__compat_type(a0, rt))
      return shlo__verr(vc, op, label, "reduction region parameter #%d has "
                        "type %s but its result #%d is %s", i,
                        shlo__tstr(vc, a0), i, shlo__tstr(vc, rt));
    if (!shlo__compat_type(a1, rt))
      return shlo__verr(vc, op, label, "reduction region parameter #%d has "
                        "type %s but its result #%d is %s", n + i,
                        shlo__tstr(vc, a1), i, shlo__tstr(vc, rt));
    if (rt->rank != 0)
      return shlo__verr(vc, op, label, "reduction region result #%d %s must "
                        "be rank 0", i, shlo__tstr(vc, rt));
    if (inputs && inputs[i] && !shlo__promotable(inputs[i], rt))
      return shlo__verr(vc, op, label, "the reduction region's element type "
                        "%s is not promotable from the op's %s",
                        shlo__tstr(vc, rt), shlo__tstr(vc, inputs[i]));
    if (acc) acc[i] = rt;
  }
  return true;
}

/* Init values of reduce and reduce_window (operands n..2n-1): rank-0
 * tensors of the body's accumulator types acc[0..n-1]. */
static bool init_values_ok(shlo__vctx *vc, const shlo_op *op,
                           const char *label, int n,
                           const shlo_type *const *acc) {
  for (int i = 0; i < n; i++) {
    const shlo_type *iv = shlo__otype(vc, op, n + i);
    if (!shlo__is_tensor(iv) || iv->rank != 0 ||
        !shlo__same_baseline_elem(iv, acc[i]))
      return shlo__verr(vc, op, label, "init value #%d %s must be a rank-0 "
                        "tensor of the body's type %s", i,
                        shlo__tstr(vc, iv), shlo__tstr(vc, acc[i]));
  }
  return true;
}

/* Parameters of map's computation and sort's comparator: rank-0 tensors,
 * parameter i of the element type of input i / per.  what names a
 * parameter in messages; label is the constraint (map C4, sort C5). */
static bool scalar_params_ok(shlo__vctx *vc, const shlo_op *op,
                             const shlo_block *b, int per, const char *what,
                             const char *label) {
  for (int i = 0; i < b->n_args; i++) {
    const shlo_type *t = shlo__barg(vc, b, i);
    const shlo_type *in = shlo__otype(vc, op, i / per);
    if (!shlo__is_tensor(t) || t->rank != 0 || !shlo__same_elem(t, in))
      return shlo__verr(vc, op, label, "%s #%d has type %s; expected a "
                        "rank-0 tensor of the element type of %s", what, i,
                        shlo__tstr(vc, t), shlo__tstr(vc, in));
  }
  return true;
}

/* map (the spec's numbering): C1 the inputs and the result share one
 * shape; C2 there is at least one input; C3 dimensions are 0..rank-1 in
 * order; C4 computation takes one rank-0 tensor of each input's element
 * type and returns one rank-0 tensor of the result's element type. */
bool shlo__verify_map(shlo__vctx *vc, const shlo_op *op) {
  if (op->n_operands < 1 || op->n_results != 1)
    return shlo__verr(vc, op, "C2", "expects at least one input and one "
                      "result");
  const shlo_type *a = shlo__otype(vc, op, 0), *r = shlo__rtype(vc, op, 0);
  for (int i = 1; i < op->n_operands; i++)
    if (!shlo__compat_shape(a, shlo__otype(vc, op, i)))
      return shlo__verr(vc, op, "C1", "input #%d %s and input #0 %s have "
                        "different shapes", i,
                        shlo__tstr(vc, shlo__otype(vc, op, i)),
                        shlo__tstr(vc, a));
  int64_t d[R];
  int n = shlo__attr_ints(op, "dimensions", d, R);
  if (n >= 0) {
    bool ok = n == a->rank;
    for (int i = 0; ok && i < n; i++) ok = d[i] == i;
    if (!ok)
      return shlo__verr(vc, op, "C3", "dimensions %s must be 0..%d in order",
                        shlo__dstr(vc, d, n), a->rank - 1);
  }
  const shlo_block *b = op->n_regions ? op->regions[0] : NULL;
  if (!b || b->n_args != op->n_operands)
    return shlo__verr(vc, op, "C4", "computation must take %d parameters, "
                      "takes %d", op->n_operands, b ? b->n_args : 0);
  if (!scalar_params_ok(vc, op, b, 1, "computation parameter", "C4"))
    return false;
  const shlo_op *ret = shlo__region_terminator(b);
  if (!ret || ret->n_operands != 1)
    return shlo__verr(vc, op, "C4", "computation must return one value, "
                      "returns %d", ret ? ret->n_operands : 0);
  const shlo_type *rt = shlo__otype(vc, ret, 0);
  if (!shlo__is_tensor(rt) || rt->rank != 0)
    return shlo__verr(vc, op, "C4", "computation must return a rank-0 "
                      "tensor, returns %s", shlo__tstr(vc, rt));
  if (!shlo__compat_shape(r, a))
    return shlo__verr(vc, op, "C1", "result %s must have the inputs' shape "
                      "(%s)", shlo__tstr(vc, r), shlo__tstr(vc, a));
  if (!shlo__same_elem(r, rt))
    return shlo__verr(vc, op, "C4", "result %s must have the computation's "
                      "element type (%s)", shlo__tstr(vc, r),
                      shlo__tstr(vc, rt));
  return true;
}

/* reduce: C1 inputs share one shape; C2/C6 body takes (E0.., E0'..) and
 * returns (E0'..) with each input element type promotable to Ei' and each
 * init value of type tensor<Ei'>; C3 0 < N inputs = N init values = N
 * results; C4 0 <= dimensions < rank; C5 no duplicates; C7 result shape is
 * the input shape without dimensions; C8 result element types are the
 * body's. */
bool shlo__verify_reduce(shlo__vctx *vc, const shlo_op *op) {
  int n = op->n_operands / 2;
  if (n < 1 || op->n_operands != 2 * n || op->n_results != n)
    return shlo__verr(vc, op, "C3", "expects N > 0 inputs, N init values and "
                      "N results, got %d operands and %d results",
                      op->n_operands, op->n_results);
  const shlo_type *a = shlo__otype(vc, op, 0);
  const shlo_type *ins[64], *acc[64];
  if (n > 64) return shlo__verr(vc, op, "C3", "too many inputs");
  for (int i = 0; i < n; i++) {
    ins[i] = shlo__otype(vc, op, i);
    if (!shlo__is_tensor(ins[i]))
      return shlo__verr(vc, op, "I1", "input #%d %s must be a tensor", i,
                        shlo__tstr(vc, ins[i]));
    if (!shlo__compat_shape(ins[i], a))
      return shlo__verr(vc, op, "C1", "input #%d %s and input #0 %s have "
                        "different shapes", i, shlo__tstr(vc, ins[i]),
                        shlo__tstr(vc, a));
  }
  int64_t d[R];
  int nd = shlo__attr_ints(op, "dimensions", d, R);
  if (nd < 0) nd = 0;
  for (int i = 0; i < nd; i++)
    if (d[i] < 0 || d[i] >= a->rank)
      return shlo__verr(vc, op, "C4", "dimension %lld is out of range for "
                        "input %s", (long long)d[i], shlo__tstr(vc, a));
  int64_t dup;
  if (shlo__has_dups(d, nd, &dup))
    return shlo__verr(vc, op, "C5", "dimensions %s repeat %lld",
                      shlo__dstr(vc, d, nd), (long long)dup);
  if (!shlo__check_reduction_body(vc, op, "C6",
                                  op->n_regions ? op->regions[0] : NULL, n,
                                  ins, acc))
    return false;
  if (!init_values_ok(vc, op, "C2", n, acc)) return false;
  for (int i = 0; i < n; i++) {
    const shlo_type *r = shlo__rtype(vc, op, i);
    bool ok = shlo__is_tensor(r) && r->rank == a->rank - nd;
    for (int k = 0, j = 0; ok && k < a->rank; k++) {
      bool red = false;
      for (int q = 0; q < nd; q++) red |= d[q] == k;
      if (!red) ok = r->dims[j++] == a->dims[k];
    }
    if (!ok)
      return shlo__verr(vc, op, "C7", "result #%d %s must have the shape of "
                        "input %s without dimensions %s", i,
                        shlo__tstr(vc, r), shlo__tstr(vc, a),
                        shlo__dstr(vc, d, nd));
    if (!shlo__same_baseline_elem(r, acc[i]))
      return shlo__verr(vc, op, "C8", "result #%d %s must have the body's "
                        "element type %s", i, shlo__tstr(vc, r),
                        shlo__tstr(vc, acc[i]));
  }
  return true;
}

/* Reads an int list attribute of rank entries, default def. Returns false
 * (after an error under label) when present with a wrong count or when an
 * entry is below min. */
static bool window_attr(shlo__vctx *vc, const shlo_op *op, const char *name,
                        int rank, int64_t def, int64_t min,
                        const char *c_size, const char *c_min, int64_t *out) {
  int n = shlo__attr_ints(op, name, out, R);
  if (n < 0) {
    for (int i = 0; i < rank; i++) out[i] = def;
    return true;
  }
  if (n != rank)
    return shlo__verr(vc, op, c_size, "%s %s must have %d entries (the "
                      "operand's rank)", name, shlo__dstr(vc, out, n < R ? n : R),
                      rank);
  for (int i = 0; i < n; i++)
    if (out[i] < min)
      return shlo__verr(vc, op, c_min, "%s %s must be %s", name,
                        shlo__dstr(vc, out, n),
                        min > 0 ? "positive" : "non-negative");
  return true;
}

/* padding: a [rank, 2] integer tensor (or nested array). */
static bool padding_attr(shlo__vctx *vc, const shlo_op *op, int rank,
                         const char *label, int64_t *lo, int64_t *hi) {
  const shlo_attr *a = shlo_op_attr(op, "padding");
  for (int i = 0; i < rank; i++) lo[i] = hi[i] = 0;
  if (!a) return true;
  int64_t v[2 * R + 2];
  int n = shlo_attr_i64s(a, v, 2 * R + 2);
  bool shape_ok = n == 2 * rank;
  if (a->kind == SHLO_ATTR_DENSE)
    shape_ok = shape_ok && a->dense->rank == 2 && a->dense->dims[1] == 2;
  if (!shape_ok)
    return shlo__verr(vc, op, label, "padding must have shape [%d, 2]",
                      rank);
  for (int i = 0; i < rank; i++) {
    lo[i] = v[2 * i];
    hi[i] = v[2 * i + 1];
  }
  return true;
}


/* reduce_window: C1 0 < N inputs = N init values = N results; C2 inputs
 * share one shape; C4 size(window_dimensions) = rank; C5 > 0; C6/C7
 * window_strides; C8/C9 base_dilations; C10/C11 window_dilations; C12
 * padding is [rank, 2]; C13 body as reduce's; C3 init values rank-0 of
 * the inputs' (body's) element types; C14 results share one shape; C15
 * that shape is the number of windows; C16 result element types are the
 * body's. */
bool shlo__verify_reduce_window(shlo__vctx *vc, const shlo_op *op) {
  int n = op->n_operands / 2;
  if (n < 1 || op->n_operands != 2 * n || op->n_results != n || n > 64)
    return shlo__verr(vc, op, "C1", "expects N > 0 inputs, N init values and "
                      "N results, got %d operands and %d results",
                      op->n_operands, op->n_results);
  const shlo_type *a = shlo__otype(vc, op, 0);
  const shlo_type *ins[64], *acc[64];
  for (int i = 0; i < n; i++) {
    ins[i] = shlo__otype(vc, op, i);
    if (!shlo__compat_shape(ins[i], a))
      return shlo__verr(vc, op, "C2", "input #%d %s and input #0 %s have "
                        "different shapes", i, shlo__tstr(vc, ins[i]),
                        shlo__tstr(vc, a));
  }
  int rank = a->rank;
  int64_t wd[R], ws[R], bd[R], wdl[R], lo[R], hi[R];
  if (shlo__attr_ints(op, "window_dimensions", wd, R) < 0)
    return shlo__verr(vc, op, "C4", "requires window_dimensions");
  if (!window_attr(vc, op, "window_dimensions", rank, 1, 1, "C4", "C5", wd) ||
      !window_attr(vc, op, "window_strides", rank, 1, 1, "C6", "C7", ws) ||
      !window_attr(vc, op, "base_dilations", rank, 1, 1, "C8", "C9", bd) ||
      !window_attr(vc, op, "window_dilations", rank, 1, 1, "C10", "C11",
                   wdl) ||
      !padding_attr(vc, op, rank, "C12", lo, hi))
    return false;
  if (!shlo__check_reduction_body(vc, op, "C13",
                                  op->n_regions ? op->regions[0] : NULL, n,
                                  ins, acc))
    return false;
  if (!init_values_ok(vc, op, "C3", n, acc)) return false;
  int64_t want[R];
  for (int k = 0; k < rank; k++) {
    int64_t base, padded, win;
    if (a->dims[k] < 0) {
      want[k] = SHLO_DYN;
      continue;
    }
    if (!shlo__dilate(a->dims[k], bd[k], &base) ||
        !shlo__add3(base, lo[k], hi[k], &padded) ||
        !shlo__dilate(wd[k], wdl[k], &win))
      return shlo__verr(vc, op, "C15", "dimension %d: the padded, dilated "
                        "size or window overflows 64-bit integers", k);
    want[k] = padded < win ? 0 : (padded - win) / ws[k] + 1;
  }
  for (int i = 1; i < n; i++)
    if (!shlo__compat_shape(shlo__rtype(vc, op, i), shlo__rtype(vc, op, 0)))
      return shlo__verr(vc, op, "C14", "result #%d %s and result #0 %s have "
                        "different shapes", i,
                        shlo__tstr(vc, shlo__rtype(vc, op, i)),
                        shlo__tstr(vc, shlo__rtype(vc, op, 0)));
  for (int i = 0; i < n; i++) {
    const shlo_type *r = shlo__rtype(vc, op, i);
    bool ok = shlo__is_tensor(r) && r->rank == rank;
    for (int k = 0; ok && k < rank; k++)
      ok = shlo__dim_eq(r->dims[k], want[k]);
    if (!ok)
      return shlo__verr(vc, op, "C15", "result #%d %s must have shape %s "
                        "(the number of windows)", i, shlo__tstr(vc, r),
                        shlo__dstr(vc, want, rank));
    if (!shlo__same_baseline_elem(r, acc[i]))
      return shlo__verr(vc, op, "C16", "result #%d %s must have the body's "
                        "element type %s", i, shlo__tstr(vc, r),
                        shlo__tstr(vc, acc[i]));
  }
  return true;
}

/* select_and_scatter: C1 operand and source share the element type; C2
 * shape(source) is the number of windows; C3 init_value is rank 0 of that
 * element type; C4/C5 window_dimensions; C6/C7 window_strides; C8 padding
 * [rank, 2]; C9 select is (tensor<E>, tensor<E>) -> tensor<i1>; C10
 * scatter is a reduction body over E; C11 result shape is operand's; C12
 * its element type is the scatter body's E. */
bool shlo__verify_select_and_scatter(shlo__vctx *vc, const shlo_op *op) {
  if (op->n_operands != 3 || op->n_results != 1 || op->n_regions != 2)
    return shlo__verr(vc, op, NULL, "expects operand, source, init_value, "
                      "two regions and one result");
  const shlo_type *a = shlo__otype(vc, op, 0), *src = shlo__otype(vc, op, 1),
                  *iv = shlo__otype(vc, op, 2), *r = shlo__rtype(vc, op, 0);
  if (!shlo__same_baseline_elem(a, src))
    return shlo__verr(vc, op, "C1", "operand %s and source %s have different "
                      "element types", shlo__tstr(vc, a), shlo__tstr(vc, src));
  int rank = a->rank;
  int64_t wd[R], ws[R], lo[R], hi[R];
  if (!window_attr(vc, op, "window_dimensions", rank, 1, 1, "C4", "C5", wd) ||
      !window_attr(vc, op, "window_strides", rank, 1, 1, "C6", "C7", ws) ||
      !padding_attr(vc, op, rank, "C8", lo, hi))
    return false;
  const shlo_block *sel = op->regions[0];
  const shlo_op *sret = shlo__region_terminator(sel);
  if (sel->n_args != 2)
    return shlo__verr(vc, op, "C9", "select must take 2 parameters, takes %d",
                      sel->n_args);
  for (int i = 0; i < 2; i++) {
    const shlo_type *t = shlo__barg(vc, sel, i);
    if (!shlo__is_tensor(t) || t->rank != 0 || !shlo__same_elem(t, a))
      return shlo__verr(vc, op, "C9", "select parameter #%d %s must be a "
                        "rank-0 tensor of the operand's element type", i,
                        shlo__tstr(vc, t));
  }
  if (!sret || sret->n_operands != 1 ||
      !shlo__is_bool(shlo__otype(vc, sret, 0)) ||
      shlo__otype(vc, sret, 0)->rank != 0)
    return shlo__verr(vc, op, "C9", "select must return one tensor<i1>");
  const shlo_type *acc[1];
  if (!shlo__check_reduction_body(vc, op, "C10", op->regions[1], 1, &src,
                                  acc))
    return false;
  if (!shlo__is_tensor(iv) || iv->rank != 0 || !shlo__same_baseline_elem(iv, a))
    return shlo__verr(vc, op, "C3", "init_value %s must be a rank-0 tensor "
                      "of the operand's element type", shlo__tstr(vc, iv));
  int64_t want[R];
  for (int k = 0; k < rank; k++) {
    int64_t padded;
    if (a->dims[k] < 0) {
      want[k] = SHLO_DYN;
      continue;
    }
    if (!shlo__add3(a->dims[k], lo[k], hi[k], &padded))
      return shlo__verr(vc, op, "C2", "dimension %d: the padded size "
                        "overflows 64-bit integers", k);
    want[k] = padded < wd[k] ? 0 : (padded - wd[k]) / ws[k] + 1;
  }
  bool ok = src->rank == rank;
  for (int k = 0; ok && k < rank; k++) ok = shlo__dim_eq(src->dims[k], want[k]);
  if (!ok)
    return shlo__verr(vc, op, "C2", "source %s must have shape %s (the "
                      "number of windows)", shlo__tstr(vc, src),
                      shlo__dstr(vc, want, rank));
  if (!shlo__compat_shape(r, a))
    return shlo__verr(vc, op, "C11", "result %s must have the operand's "
                      "shape %s", shlo__tstr(vc, r), shlo__tstr(vc, a));
  if (!shlo__same_baseline_elem(r, acc[0]))
    return shlo__verr(vc, op, "C12", "result %s must have the scatter "
                      "body's element type %s", shlo__tstr(vc, r),
                      shlo__tstr(vc, acc[0]));
  return true;
}

/* sort (the spec's numbering): C1 at least one input; C2 results have the
 * inputs' types; C3 inputs (and so results) share one shape; C4 -R <=
 * dimension < R; C5 comparator takes two rank-0 tensors of each input's
 * element type and returns one tensor<i1>. */
bool shlo__verify_sort(shlo__vctx *vc, const shlo_op *op) {
  int n = op->n_operands;
  if (n < 1)
    return shlo__verr(vc, op, "C1", "expects at least one input");
  if (op->n_results != n)
    return shlo__verr(vc, op, "C2", "expects %d results, got %d", n,
                      op->n_results);
  for (int i = 0; i < n; i++)
    if (!shlo__compat_baseline(shlo__rtype(vc, op, i), shlo__otype(vc, op, i)))
      return shlo__verr(vc, op, "C2", "result #%d %s must have the type of "
                        "input #%d %s", i,
                        shlo__tstr(vc, shlo__rtype(vc, op, i)), i,
                        shlo__tstr(vc, shlo__otype(vc, op, i)));
  const shlo_type *a = shlo__otype(vc, op, 0);
  for (int i = 1; i < n; i++)
    if (!shlo__compat_shape(a, shlo__otype(vc, op, i)))
      return shlo__verr(vc, op, "C3", "input #%d %s and input #0 %s have "
                        "different shapes", i,
                        shlo__tstr(vc, shlo__otype(vc, op, i)),
                        shlo__tstr(vc, a));
  int64_t d = -1;
  shlo_attr_get_i64(shlo_op_attr(op, "dimension"), &d);
  if (d < -a->rank || d >= a->rank)
    return shlo__verr(vc, op, "C4", "dimension %lld is out of range for "
                      "input %s", (long long)d, shlo__tstr(vc, a));
  const shlo_block *b = op->n_regions ? op->regions[0] : NULL;
  if (!b || b->n_args != 2 * n)
    return shlo__verr(vc, op, "C5", "comparator must take %d arguments, "
                      "takes %d", 2 * n, b ? b->n_args : 0);
  if (!scalar_params_ok(vc, op, b, 2, "comparator argument", "C5"))
    return false;
  const shlo_op *ret = shlo__region_terminator(b);
  if (!ret || ret->n_operands != 1)
    return shlo__verr(vc, op, "C5", "comparator must return a single output "
                      "but returns %d", ret ? ret->n_operands : 0);
  const shlo_type *rt = shlo__otype(vc, ret, 0);
  if (!shlo__is_bool(rt) || rt->rank != 0)
    return shlo__verr(vc, op, "C5", "comparator must return tensor<i1> but "
                      "returns %s", shlo__tstr(vc, rt));
  return true;
}
