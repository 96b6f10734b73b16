/* SPDX-License-Identifier: Apache-2.0 */
/* Verifiers of the indexing family: gather, dynamic_gather, scatter. */
#include <stdio.h>

#include "verify/verify_int.h"

#define R SHLO_MAX_RANK

static bool sorted(const int64_t *v, int n) {
  for (int i = 1; i < n; i++)
    if (v[i] < v[i - 1]) return false;
  return true;
}

static bool contains(const int64_t *v, int n, int64_t x) {
  for (int i = 0; i < n; i++)
    if (v[i] == x) return true;
  return false;
}

/* Every entry of v within [0, hi). */
static bool in_range(shlo__vctx *vc, const shlo_op *op, const char *label,
                     const char *name, const int64_t *v, int n, int64_t hi,
                     const char *of) {
  for (int i = 0; i < n; i++)
    if (v[i] < 0 || v[i] >= hi)
      return shlo__verr(vc, op, label, "each element of %s %s must be in "
                        "range [0, %lld) (%s), got %lld", name,
                        shlo__dstr(vc, v, n), (long long)hi, of,
                        (long long)v[i]);
  return true;
}

/* A dims list that must be sorted (label c_sorted) and have every entry
 * within [0, hi) (c_range). */
static bool sorted_in_range(shlo__vctx *vc, const shlo_op *op,
                            const char *c_sorted, const char *c_range,
                            const char *name, const int64_t *v, int n,
                            int64_t hi, const char *of) {
  if (!sorted(v, n))
    return shlo__verr(vc, op, c_sorted, "%s %s must be sorted", name,
                      shlo__dstr(vc, v, n));
  return in_range(vc, op, c_range, name, v, n, hi, of);
}

static bool unique(shlo__vctx *vc, const shlo_op *op, const char *label,
                   const char *name, const int64_t *a, int na,
                   const int64_t *b, int nb) {
  int64_t all[2 * R + 2];
  int n = 0;
  for (int i = 0; i < na && n < 2 * R; i++) all[n++] = a[i];
  for (int i = 0; i < nb && n < 2 * R; i++) all[n++] = b[i];
  int64_t dup;
  if (shlo__has_dups(all, n, &dup))
    return shlo__verr(vc, op, label, "%s repeat dimension %lld", name,
                      (long long)dup);
  return true;
}

typedef struct gdims {
  int64_t off[R], coll[R], obat[R], sbat[R], map[R];
  int n_off, n_coll, n_obat, n_sbat, n_map;
  int64_t ivd;
} gdims;

static int field(const shlo_attr *dn, const char *name, int64_t *v) {
  int n = shlo__field_ints(dn, name, v, R);
  return n < 0 ? 0 : n > R ? R : n;
}

/* C1-C5: ranks, index_vector_dim, start_index_map's size, offset_dims. */
static bool gather_index_ok(shlo__vctx *vc, const shlo_op *op,
                            const shlo_type *a, const shlo_type *si,
                            const gdims *g) {
  int sr = si->rank;
  if (a->rank != g->n_off + g->n_coll + g->n_obat)
    return shlo__verr(vc, op, "C1", "offset_dims size (%d) plus "
                      "collapsed_slice_dims size (%d) plus "
                      "operand_batching_dims size (%d) is not equal to "
                      "operand rank (%d)", g->n_off, g->n_coll, g->n_obat,
                      a->rank);
  if (g->ivd < 0 || g->ivd > sr)
    return shlo__verr(vc, op, "C2", "index_vector_dim %lld must be in range "
                      "[0, %d] (the rank of start_indices %s)",
                      (long long)g->ivd, sr, shlo__tstr(vc, si));
  int64_t want = g->ivd < sr ? si->dims[g->ivd] : 1;
  if (want >= 0 && g->n_map != want)
    return shlo__verr(vc, op, "C3", "start_index_map size (%d) is not equal "
                      "to the size of index dimension (%lld) of start_indices "
                      "(%lld)", g->n_map, (long long)g->ivd, (long long)want);
  if (!unique(vc, op, "C4", "offset_dims", g->off, g->n_off, NULL, 0))
    return false;
  int batch_rank = sr - (g->ivd < sr ? 1 : 0);
  return sorted_in_range(vc, op, "C4", "C5", "offset_dims", g->off, g->n_off,
                         batch_rank + g->n_off, "the implied result rank");
}

/* C6-C12: collapsed_slice_dims and operand_batching_dims, with their slice
 * sizes (when known: ss[0..n_ss)) at most 1. */
static bool gather_unit_dims_ok(shlo__vctx *vc, const shlo_op *op,
                                const shlo_type *a, const gdims *g,
                                const int64_t *ss, int n_ss) {
  if (!unique(vc, op, "C6", "collapsed_slice_dims and operand_batching_dims",
              g->coll, g->n_coll, g->obat, g->n_obat))
    return false;
  if (!sorted_in_range(vc, op, "C7", "C8", "collapsed_slice_dims",
                       g->coll, g->n_coll, a->rank, "the operand's rank"))
    return false;
  if (ss)
    for (int i = 0; i < g->n_coll; i++)
      if (g->coll[i] < n_ss && ss[g->coll[i]] > 1)
        return shlo__verr(vc, op, "C9", "slice_sizes[%lld] of collapsed "
                          "dimension must be <= 1, got %lld",
                          (long long)g->coll[i], (long long)ss[g->coll[i]]);
  if (!sorted_in_range(vc, op, "C10", "C11", "operand_batching_dims",
                       g->obat, g->n_obat, a->rank, "the operand's rank"))
    return false;
  if (ss)
    for (int i = 0; i < g->n_obat; i++)
      if (g->obat[i] < n_ss && ss[g->obat[i]] > 1)
        return shlo__verr(vc, op, "C12", "slice_sizes[%lld] of a batching "
                          "dimension must be <= 1, got %lld",
                          (long long)g->obat[i], (long long)ss[g->obat[i]]);
  return true;
}

/* C13-C19: the batching dims of start_indices pair with the operand's, and
 * start_index_map is unique and in range. */
static bool gather_batching_ok(shlo__vctx *vc, const shlo_op *op,
                               const shlo_type *a, const shlo_type *si,
                               const gdims *g) {
  int sr = si->rank;
  if (!unique(vc, op, "C13", "start_indices_batching_dims", g->sbat,
              g->n_sbat, NULL, 0))
    return false;
  if (!in_range(vc, op, "C14", "start_indices_batching_dims", g->sbat,
                g->n_sbat, sr, "the rank of start_indices"))
    return false;
  if (contains(g->sbat, g->n_sbat, g->ivd))
    return shlo__verr(vc, op, "C15", "start_indices_batching_dims %s must "
                      "not include index_vector_dim %lld",
                      shlo__dstr(vc, g->sbat, g->n_sbat), (long long)g->ivd);
  if (g->n_obat != g->n_sbat)
    return shlo__verr(vc, op, "C16", "operand_batching_dims %s and "
                      "start_indices_batching_dims %s must have the same "
                      "size", shlo__dstr(vc, g->obat, g->n_obat),
                      shlo__dstr(vc, g->sbat, g->n_sbat));
  for (int i = 0; i < g->n_obat; i++)
    if (!shlo__dim_eq(a->dims[g->obat[i]], si->dims[g->sbat[i]]))
      return shlo__verr(vc, op, "C17", "operand_batching_dims[%d] and "
                        "start_indices_batching_dims[%d] must have the same "
                        "sizes, got %lld and %lld", i, i,
                        (long long)a->dims[g->obat[i]],
                        (long long)si->dims[g->sbat[i]]);
  if (!unique(vc, op, "C18", "start_index_map and operand_batching_dims",
              g->map, g->n_map, g->obat, g->n_obat))
    return false;
  if (!in_range(vc, op, "C19", "start_index_map", g->map, g->n_map, a->rank,
                "the operand's rank"))
    return false;
  return true;
}

/* The constraints gather and dynamic_gather share (C1-C21 but C20-C22). */
static bool gather_common(shlo__vctx *vc, const shlo_op *op,
                          const shlo_type *a, const shlo_type *si,
                          const gdims *g, const int64_t *ss, int n_ss) {
  return gather_index_ok(vc, op, a, si, g) &&
         gather_unit_dims_ok(vc, op, a, g, ss, n_ss) &&
         gather_batching_ok(vc, op, a, si, g);
}

/* Read the five dim lists of a gather's or scatter's dimension numbers,
 * named in gdims order (offset, collapsed, operand batching, index
 * batching, index map), and index_vector_dim. */
static void read_dims(const shlo_attr *dn, const char *const names[5],
                      gdims *g) {
  g->n_off = field(dn, names[0], g->off);
  g->n_coll = field(dn, names[1], g->coll);
  g->n_obat = field(dn, names[2], g->obat);
  g->n_sbat = field(dn, names[3], g->sbat);
  g->n_map = field(dn, names[4], g->map);
  g->ivd = 0;
  shlo_attr_get_i64(shlo_attr_field(dn, "index_vector_dim"), &g->ivd);
}

static void read_gdims(const shlo_attr *dn, gdims *g) {
  static const char *const names[5] = {
      "offset_dims", "collapsed_slice_dims", "operand_batching_dims",
      "start_indices_batching_dims", "start_index_map"};
  read_dims(dn, names, g);
}

/* gather: C1-C19 on dimension_numbers as in the spec (sizes, ranges,
 * sortedness, uniqueness, batching dims); C20 size(slice_sizes) =
 * rank(operand); C21 0 <= slice_sizes <= shape(operand); C22 the result
 * shape is the batch dims of start_indices with the offset dims (slice
 * sizes less the collapsed and batching dims) at offset_dims; C23 element
 * types agree. */
bool shlo__verify_gather(shlo__vctx *vc, const shlo_op *op) {
  if (op->n_operands != 2 || op->n_results != 1)
    return shlo__verr(vc, op, NULL, "expects operand, start_indices and one "
                      "result");
  const shlo_type *a = shlo__otype(vc, op, 0), *si = shlo__otype(vc, op, 1),
                  *r = shlo__rtype(vc, op, 0);
  if (!shlo__is_int(si))
    return shlo__verr(vc, op, "I2", "start_indices %s must be an integer "
                      "tensor", shlo__tstr(vc, si));
  gdims g;
  read_gdims(shlo_op_attr(op, "dimension_numbers"), &g);
  int64_t ss[R];
  int n_ss = shlo__attr_ints(op, "slice_sizes", ss, R);
  if (n_ss < 0) n_ss = 0;
  if (!gather_common(vc, op, a, si, &g, ss, n_ss)) return false;
  if (n_ss != a->rank)
    return shlo__verr(vc, op, "C20", "slice_sizes size (%d) is not equal to "
                      "the operand rank (%d)", n_ss, a->rank);
  for (int i = 0; i < n_ss; i++)
    if (ss[i] < 0 || (a->dims[i] >= 0 && ss[i] > a->dims[i]))
      return shlo__verr(vc, op, "C21", "slice size %lld is out of bounds for "
                        "operand dimension %d of size %lld",
                        (long long)ss[i], i, (long long)a->dims[i]);
  int64_t want[2 * R];
  int nr = 0;
  int64_t batch[R], offs[R];
  int nb = 0, no = 0;
  for (int i = 0; i < si->rank; i++)
    if (i != g.ivd) batch[nb++] = si->dims[i];
  for (int i = 0; i < a->rank; i++)
    if (!contains(g.coll, g.n_coll, i) && !contains(g.obat, g.n_obat, i))
      offs[no++] = ss[i];
  for (int i = 0, bi = 0, oi = 0; i < nb + no && nr < 2 * R; i++)
    want[nr++] = contains(g.off, g.n_off, i) ? offs[oi++] : batch[bi++];
  bool ok = shlo__is_tensor(r) && r->rank == nr;
  for (int i = 0; ok && i < nr; i++) ok = shlo__dim_eq(r->dims[i], want[i]);
  if (!ok)
    return shlo__verr(vc, op, "C22", "result %s must have shape %s",
                      shlo__tstr(vc, r), shlo__dstr(vc, want, nr));
  if (!shlo__same_baseline_elem(a, r))
    return shlo__verr(vc, op, "C23", "operand %s and result %s have "
                      "different element types", shlo__tstr(vc, a),
                      shlo__tstr(vc, r));
  return true;
}

/* dynamic_gather: gather with slice_sizes as a 1-d integer operand of
 * rank(operand) elements (C20); the other constraints as gather's. */
bool shlo__verify_dynamic_gather(shlo__vctx *vc, const shlo_op *op) {
  if (op->n_operands != 3 || op->n_results != 1)
    return shlo__verr(vc, op, NULL, "expects operand, start_indices, "
                      "slice_sizes and one result");
  const shlo_type *a = shlo__otype(vc, op, 0), *si = shlo__otype(vc, op, 1),
                  *ss = shlo__otype(vc, op, 2), *r = shlo__rtype(vc, op, 0);
  gdims g;
  read_gdims(shlo_op_attr(op, "dimension_numbers"), &g);
  /* A constant slice_sizes is checked as gather's attribute is. */
  int64_t sv[R], want[2 * R], batch[R], offs[R];
  bool known = shlo__const_ints(vc, op->operands[2], sv, R) == a->rank;
  if (!gather_common(vc, op, a, si, &g, known ? sv : NULL, known ? a->rank : 0))
    return false;
  if (ss->rank != 1 || ss->dims[0] != a->rank)
    return shlo__verr(vc, op, "C20", "slice_sizes %s must be 1-d with %d "
                      "elements (the operand's rank)", shlo__tstr(vc, ss),
                      a->rank);
  for (int i = 0; known && i < a->rank; i++)
    if (sv[i] < 0 || (a->dims[i] >= 0 && sv[i] > a->dims[i]))
      return shlo__verr(vc, op, "C21", "slice size %lld is out of bounds for "
                        "operand dimension %d of size %lld",
                        (long long)sv[i], i, (long long)a->dims[i]);
  /* C22: batch dims of start_indices with the offset dims (sizes from a
   * constant slice_sizes, else any) at offset_dims. */
  int nb = 0, no = 0, nr = 0;
  for (int i = 0; i < si->rank; i++)
    if (i != g.ivd) batch[nb++] = si->dims[i];
  for (int i = 0; i < a->rank; i++)
    if (!contains(g.coll, g.n_coll, i) && !contains(g.obat, g.n_obat, i))
      offs[no++] = known ? sv[i] : SHLO_DYN;
  for (int i = 0, bi = 0, oi = 0; i < nb + no && nr < 2 * R; i++)
    want[nr++] = contains(g.off, g.n_off, i) ? offs[oi++] : batch[bi++];
  bool ok = shlo__is_tensor(r) && r->rank == nr;
  for (int i = 0; ok && i < nr; i++) ok = shlo__dim_eq(r->dims[i], want[i]);
  if (!ok)
    return shlo__verr(vc, op, "C22", "result %s must have shape %s (-1: "
                      "any size)", shlo__tstr(vc, r), shlo__dstr(vc, want, nr));
  if (!shlo__same_baseline_elem(a, r))
    return shlo__verr(vc, op, "C23", "operand %s and result %s have "
                      "different element types", shlo__tstr(vc, a),
                      shlo__tstr(vc, r));
  return true;
}

/* scatter_dimension_numbers, in gdims under gather's names:
 * update_window_dims in off, inserted_window_dims in coll,
 * input_batching_dims in obat, scatter_indices_batching_dims in sbat and
 * scatter_dims_to_operand_dims in map. */
static void read_sdims(const shlo_attr *dn, gdims *g) {
  static const char *const names[5] = {
      "update_window_dims", "inserted_window_dims", "input_batching_dims",
      "scatter_indices_batching_dims", "scatter_dims_to_operand_dims"};
  read_dims(dn, names, g);
}

/* C1, C3: the n inputs share input 0's shape, the updates update 0's. */
static bool vscatter_shapes_ok(shlo__vctx *vc, const shlo_op *op, int n,
                               const shlo_type *a, const shlo_type *u0) {
  for (int i = 0; i < n; i++) {
    if (!shlo__compat_shape(shlo__otype(vc, op, i), a))
      return shlo__verr(vc, op, "C1", "input #%d %s and input #0 %s have "
                        "different shapes", i,
                        shlo__tstr(vc, shlo__otype(vc, op, i)),
                        shlo__tstr(vc, a));
    if (!shlo__compat_shape(shlo__otype(vc, op, n + 1 + i), u0))
      return shlo__verr(vc, op, "C3", "update #%d %s and update #0 %s have "
                        "different shapes", i,
                        shlo__tstr(vc, shlo__otype(vc, op, n + 1 + i)),
                        shlo__tstr(vc, u0));
  }
  return true;
}

/* C7-C16: the window and batching dim lists. */
static bool vscatter_lists_ok(shlo__vctx *vc, const shlo_op *op,
                              const shlo_type *a, const shlo_type *si,
                              const shlo_type *u0, const gdims *g) {
  if (!unique(vc, op, "C7", "update_window_dims", g->off, g->n_off, NULL, 0))
    return false;
  if (!sorted_in_range(vc, op, "C7", "C8", "update_window_dims",
                       g->off, g->n_off, u0->rank, "the rank of updates"))
    return false;
  if (!unique(vc, op, "C9", "inserted_window_dims and input_batching_dims",
              g->coll, g->n_coll, g->obat, g->n_obat))
    return false;
  if (!sorted_in_range(vc, op, "C10", "C11", "inserted_window_dims",
                       g->coll, g->n_coll, a->rank, "the input's rank"))
    return false;
  if (!sorted_in_range(vc, op, "C12", "C13", "input_batching_dims",
                       g->obat, g->n_obat, a->rank, "the input's rank"))
    return false;
  if (!unique(vc, op, "C14", "scatter_indices_batching_dims", g->sbat,
              g->n_sbat, NULL, 0))
    return false;
  if (!in_range(vc, op, "C15", "scatter_indices_batching_dims", g->sbat,
                g->n_sbat, si->rank, "the rank of scatter_indices"))
    return false;
  if (contains(g->sbat, g->n_sbat, g->ivd))
    return shlo__verr(vc, op, "C16", "scatter_indices_batching_dims %s must "
                      "not include index_vector_dim %lld",
                      shlo__dstr(vc, g->sbat, g->n_sbat), (long long)g->ivd);
  return true;
}

/* C17-C22: batching dims pair up, and the index vector maps into the
 * input. */
static bool vscatter_index_ok(shlo__vctx *vc, const shlo_op *op,
                              const shlo_type *a, const shlo_type *si,
                              const gdims *g) {
  int sr = si->rank;
  if (g->n_obat != g->n_sbat)
    return shlo__verr(vc, op, "C17", "input_batching_dims and "
                      "scatter_indices_batching_dims must have the same size, "
                      "got %d and %d", g->n_obat, g->n_sbat);
  for (int i = 0; i < g->n_obat; i++)
    if (!shlo__dim_eq(a->dims[g->obat[i]], si->dims[g->sbat[i]]))
      return shlo__verr(vc, op, "C18", "input_batching_dims[%d] and "
                        "scatter_indices_batching_dims[%d] must have the same "
                        "sizes, got %lld and %lld", i, i,
                        (long long)a->dims[g->obat[i]],
                        (long long)si->dims[g->sbat[i]]);
  if (g->ivd < 0 || g->ivd > sr)
    return shlo__verr(vc, op, "C22", "index_vector_dim %lld must be in range "
                      "[0, %d]", (long long)g->ivd, sr);
  int64_t want = g->ivd < sr ? si->dims[g->ivd] : 1;
  if (want >= 0 && g->n_map != want)
    return shlo__verr(vc, op, "C19", "scatter_dims_to_operand_dims size (%d) "
                      "must be the size (%lld) of index_vector_dim of "
                      "scatter_indices", g->n_map, (long long)want);
  if (!unique(vc, op, "C20", "scatter_dims_to_operand_dims and "
              "input_batching_dims", g->map, g->n_map, g->obat, g->n_obat))
    return false;
  if (!in_range(vc, op, "C21", "scatter_dims_to_operand_dims", g->map,
                g->n_map, a->rank, "the input's rank"))
    return false;
  return true;
}

/* C4: the updates' shape is the scatter dims of scatter_indices with
 * window sizes, each within the input, at update_window_dims. */
static bool vscatter_updates_ok(shlo__vctx *vc, const shlo_op *op,
                                const shlo_type *a, const shlo_type *si,
                                const shlo_type *u0, const gdims *g) {
  int64_t sdims[R];
  int ns = 0;
  for (int i = 0; i < si->rank; i++)
    if (i != g->ivd) sdims[ns++] = si->dims[i];
  if (u0->rank != ns + g->n_off)
    return shlo__verr(vc, op, "C4", "updates %s must have rank %d (scatter "
                      "dims of scatter_indices plus update_window_dims)",
                      shlo__tstr(vc, u0), ns + g->n_off);
  int64_t wsz[R];
  int nw = 0;
  for (int i = 0; i < a->rank; i++)
    if (!contains(g->coll, g->n_coll, i) && !contains(g->obat, g->n_obat, i))
      wsz[nw++] = a->dims[i];
  for (int i = 0, si_i = 0, wi = 0; i < u0->rank; i++) {
    if (contains(g->off, g->n_off, i)) {
      if (wi < nw && wsz[wi] >= 0 && u0->dims[i] > wsz[wi])
        return shlo__verr(vc, op, "C4", "updates dimension %d has size %lld, "
                          "larger than the input window size %lld", i,
                          (long long)u0->dims[i], (long long)wsz[wi]);
      wi++;
    } else {
      if (!shlo__dim_eq(u0->dims[i], sdims[si_i]))
        return shlo__verr(vc, op, "C4", "updates dimension %d has size %lld "
                          "but scatter_indices gives %lld", i,
                          (long long)u0->dims[i], (long long)sdims[si_i]);
      si_i++;
    }
  }
  return true;
}

/* C6, C23-C25: element types of updates, the update computation and the
 * results. */
static bool vscatter_body_ok(shlo__vctx *vc, const shlo_op *op, int n) {
  const shlo_type *ins[64], *acc[64];
  for (int i = 0; i < n; i++) {
    ins[i] = shlo__otype(vc, op, i);
    if (!shlo__same_baseline_elem(shlo__otype(vc, op, n + 1 + i), ins[i]))
      return shlo__verr(vc, op, "C6", "update #%d %s and input #%d %s have "
                        "different element types", i,
                        shlo__tstr(vc, shlo__otype(vc, op, n + 1 + i)), i,
                        shlo__tstr(vc, ins[i]));
  }
  if (!shlo__check_reduction_body(vc, op, "C23",
                                  op->n_regions ? op->regions[0] : NULL, n,
                                  ins, acc))
    return false;
  for (int i = 0; i < n; i++) {
    const shlo_type *r = shlo__rtype(vc, op, i);
    if (!shlo__compat_shape(r, ins[i]))
      return shlo__verr(vc, op, "C24", "result #%d %s must have the shape of "
                        "input #%d %s", i, shlo__tstr(vc, r), i,
                        shlo__tstr(vc, ins[i]));
    if (!shlo__same_baseline_elem(r, acc[i]))
      return shlo__verr(vc, op, "C25", "result #%d %s must have the "
                        "update_computation's element type %s", i,
                        shlo__tstr(vc, r), shlo__tstr(vc, acc[i]));
  }
  return true;
}

/* scatter: C1 inputs share one shape; C2 rank(inputs[0]) =
 * size(update_window_dims) + size(inserted_window_dims) +
 * size(input_batching_dims); C3 updates share one shape; C4 the updates'
 * shape is the scatter dims of scatter_indices with window sizes at
 * update_window_dims, each window size within the input; C5 0 < N inputs =
 * N updates; C6 updates' element types are the inputs'; C7-C22 on
 * scatter_dimension_numbers (uniqueness, order, ranges, batching dims);
 * C23 update_computation is a reduction body; C24/C25 results have the
 * inputs' shapes and the body's element types. */
bool shlo__verify_scatter(shlo__vctx *vc, const shlo_op *op) {
  int n = (op->n_operands - 1) / 2;
  if (n < 1 || op->n_operands != 2 * n + 1 || op->n_results != n || n > 64)
    return shlo__verr(vc, op, "C5", "expects N > 0 inputs, scatter_indices "
                      "and N updates, with N results; got %d operands and %d "
                      "results", op->n_operands, op->n_results);
  const shlo_type *a = shlo__otype(vc, op, 0), *si = shlo__otype(vc, op, n),
                  *u0 = shlo__otype(vc, op, n + 1);
  if (!vscatter_shapes_ok(vc, op, n, a, u0)) return false;
  if (!shlo__is_int(si))
    return shlo__verr(vc, op, "I2", "scatter_indices %s must be an integer "
                      "tensor", shlo__tstr(vc, si));
  gdims g;
  read_sdims(shlo_op_attr(op, "scatter_dimension_numbers"), &g);
  if (a->rank != g.n_off + g.n_coll + g.n_obat)
    return shlo__verr(vc, op, "C2", "update_window_dims size (%d) plus "
                      "inserted_window_dims size (%d) plus "
                      "input_batching_dims size (%d) is not equal to the "
                      "input rank (%d)", g.n_off, g.n_coll, g.n_obat, a->rank);
  return vscatter_lists_ok(vc, op, a, si, u0, &g) &&
         vscatter_index_ok(vc, op, a, si, &g) &&
         vscatter_updates_ok(vc, op, a, si, u0, &g) &&
         vscatter_body_ok(vc, op, n);
}
