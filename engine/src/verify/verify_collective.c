/* SPDX-License-Identifier: Apache-2.0 */
/* Verifiers of the collective and communication family: all_gather,
 * all_reduce, all_to_all, collective_broadcast, collective_permute,
 * collective_reduce, reduce_scatter, infeed, outfeed, send, recv,
 * after_all, replica_id/partition_id. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/value.h"
#include "verify/verify_int.h"

#define R SHLO_MAX_RANK

/* replica_groups (all collectives' C1-C3): a rank-2 tensor; ids unique,
 * non-negative (-1 pads groups where sizes may differ), 0..max all seen;
 * not empty with use_global_device_ids; with same_size, every group has
 * group_size ids when group_size > 0. */
/* #stablehlo.replica_group_mesh_axes<mesh = @m, axes = [#stablehlo.axis_ref
 * <name = "x", sub_axis_info = (pre)size>, ...]> (StableHLO 1.16+): the
 * groups are the devices that differ only along the named axes of mesh @m.
 * The mesh must be a symbol of the module; the axes a non-empty list of
 * distinct axis references. */
static bool mesh_axes_ok(shlo__vctx *vc, const shlo_op *op,
                         const shlo_attr *a) {
  const shlo_attr *mesh = shlo_attr_field(a, "mesh");
  const shlo_attr *axes = shlo_attr_field(a, "axes");
  if (!mesh || mesh->kind != SHLO_ATTR_SYMBOL ||
      !shlo_module_find_func(vc->m, mesh->str))
    return shlo__verr(vc, op, "replica_groups", "replica_group_mesh_axes "
                      "needs mesh = @name of a symbol of the module");
  if (!axes || axes->kind != SHLO_ATTR_ARRAY || !axes->n)
    return shlo__verr(vc, op, "replica_groups", "replica_group_mesh_axes "
                      "needs a non-empty list of axes");
  for (int i = 0; i < axes->n; i++) {
    const shlo_attr *ax = axes->items[i];
    const char *name = ax->kind == SHLO_ATTR_STRUCT && ax->struct_name &&
                               !strcmp(ax->struct_name, "axis_ref")
                           ? shlo_attr_get_str(shlo_attr_field(ax, "name"))
                           : NULL;
    if (!name)
      return shlo__verr(vc, op, "replica_groups", "axis %d must be a "
                        "#stablehlo.axis_ref with a name", i);
    for (int k = 0; k < i; k++) {
      const char *other =
          shlo_attr_get_str(shlo_attr_field(axes->items[k], "name"));
      const shlo_attr *s1 = shlo_attr_field(ax, "sub_axis_info");
      const shlo_attr *s2 = shlo_attr_field(axes->items[k], "sub_axis_info");
      if (other && !strcmp(name, other) &&
          (!s1 || !s2 || !strcmp(s1->str ? s1->str : "", s2->str ? s2->str : "")))
        return shlo__verr(vc, op, "replica_groups", "axis \"%s\" appears "
                          "twice", name);
    }
  }
  return true;
}

/* The labels replica_groups' rules have in an op's spec, which numbers
 * them differently for each op: range (rank 2, ids >= 0), unique (no id
 * twice), size (every id from 0 up to the largest present) and group_size
 * (all_to_all: split_count ids per group). */
typedef struct rg_labels {
  const char *range, *unique, *size, *group_size;
} rg_labels;

static bool replica_groups_ok(shlo__vctx *vc, const shlo_op *op,
                              bool same_size, int64_t group_size,
                              const rg_labels *L) {
  bool all_seen = op->code != SHLO_OP_COLLECTIVE_BROADCAST;
  const shlo_attr *a = shlo_op_attr(op, "replica_groups");
  if (!a) return true;
  if (a->kind == SHLO_ATTR_STRUCT && a->struct_name &&
      !strcmp(a->struct_name, "replica_group_mesh_axes"))
    return mesh_axes_ok(vc, op, a);
  int64_t ng = 0, gs = 0;
  if (a->kind == SHLO_ATTR_DENSE) {
    if (a->dense->rank != 2)
      return shlo__verr(vc, op, L->range, "replica_groups should be a rank 2 "
                        "tensor, got rank %d", a->dense->rank);
    ng = a->dense->dims[0];
    gs = a->dense->dims[1];
  }
  int64_t cap = ng * gs > 0 ? ng * gs : 1;
  if (cap > (1 << 20)) return true;
  int64_t *v = shlo__malloc((size_t)cap * sizeof *v);
  if (!v) return true;
  int n = shlo_attr_i64s(a, v, (int)cap);
  bool ok = true;
  if (shlo_op_attr(op, "use_global_device_ids") && n == 0)
    ok = shlo__verr(vc, op, L->size, "replica_groups cannot be empty with "
                    "use_global_device_ids");
  int64_t max = -1;
  for (int i = 0; ok && i < n; i++) {
    if (v[i] == -1 && !same_size) continue;
    if (v[i] < 0) {
      ok = shlo__verr(vc, op, L->range, "invalid replica id %lld",
                      (long long)v[i]);
      break;
    }
    for (int j = 0; j < i; j++)
      if (v[j] == v[i]) {
        ok = shlo__verr(vc, op, L->unique, "replica id #%lld seen more than "
                        "once",
                        (long long)v[i]);
        break;
      }
    if (v[i] > max) max = v[i];
  }
  for (int64_t id = 0; ok && all_seen && id <= max; id++) {
    bool seen = false;
    for (int i = 0; i < n && !seen; i++) seen = v[i] == id;
    if (!seen)
      ok = shlo__verr(vc, op, L->size, "replica id #%lld not seen in "
                      "replica_groups", (long long)id);
  }
  if (ok && same_size && group_size > 0 && gs != group_size &&
      (n > 0 || a->kind == SHLO_ATTR_DENSE))
    ok = shlo__verr(vc, op, L->group_size, "group size of replica_groups must "
                    "be "
                    "%lld, got %lld", (long long)group_size, (long long)gs);
  shlo__free(v);
  return ok;
}

/* channel_handle with use_global_device_ids: the channel id is positive
 * (or, where zero is allowed, non-negative). */
static bool channel_ok(shlo__vctx *vc, const shlo_op *op, const char *label,
                       bool allow_zero) {
  const shlo_attr *ch = shlo_op_attr(op, "channel_handle");
  if (!shlo_op_attr(op, "use_global_device_ids")) return true;
  int64_t h = 0; /* no channel_handle: channel id 0 */
  if (ch) shlo_attr_get_i64(shlo_attr_field(ch, "handle"), &h);
  if (h < 0 || (!allow_zero && h == 0))
    return shlo__verr(vc, op, label, "channel_id must be %s when "
                      "use_global_device_ids is set, got %lld",
                      allow_zero ? "non-negative" : "positive", (long long)h);
  return true;
}

static bool same_count(shlo__vctx *vc, const shlo_op *op) {
  if (op->n_operands != op->n_results)
    return shlo__verr(vc, op, NULL, "requires the same number of operands "
                      "and results, got %d and %d", op->n_operands,
                      op->n_results);
  return true;
}

static bool nonneg_attr(shlo__vctx *vc, const shlo_op *op, const char *name,
                        int64_t *out) {
  *out = 0;
  shlo_attr_get_i64(shlo_op_attr(op, name), out);
  if (*out < 0)
    return shlo__verr(vc, op, "C1", "%s must be non-negative, got %lld",
                      name, (long long)*out);
  return true;
}

/* all_gather (the spec's numbers): C1 0 <= all_gather_dim <
 * rank(operands); C2-C4 replica groups; C5 channel id; C6 for each operand
 * and result: same rank, same shape but at all_gather_dim, where the
 * result's size is a multiple of the operand's (non-zero) size; element
 * types agree. */
bool shlo__verify_all_gather(shlo__vctx *vc, const shlo_op *op) {
  if (!same_count(vc, op)) return false;
  int64_t d;
  if (!nonneg_attr(vc, op, "all_gather_dim", &d)) return false;
  static const rg_labels L = {"C4", "C2", "C3", "C3"};
  if (!replica_groups_ok(vc, op, true, 0, &L) ||
      !channel_ok(vc, op, "C5", true))
    return false;
  for (int i = 0; i < op->n_operands; i++) {
    const shlo_type *a = shlo__otype(vc, op, i), *r = shlo__rtype(vc, op, i);
    if (d >= a->rank)
      return shlo__verr(vc, op, "C1", "all_gather_dim %lld must be a valid "
                        "index of operand %s", (long long)d,
                        shlo__tstr(vc, a));
    if (a->dims[d] == 0)
      return shlo__verr(vc, op, "C6", "dimension size of operand %s at "
                        "all_gather_dim cannot be zero", shlo__tstr(vc, a));
    if (!shlo__same_baseline_elem(a, r))
      return shlo__verr(vc, op, "C6", "operand %s and result %s have "
                        "different element types", shlo__tstr(vc, a),
                        shlo__tstr(vc, r));
    if (a->rank != r->rank)
      return shlo__verr(vc, op, "C6", "operand %s and result %s must have "
                        "the same rank", shlo__tstr(vc, a), shlo__tstr(vc, r));
    for (int k = 0; k < a->rank; k++)
      if (k != d && a->dims[k] != r->dims[k])
        return shlo__verr(vc, op, "C6", "operand %s and result %s must have "
                          "the same shape except at all_gather_dim",
                          shlo__tstr(vc, a), shlo__tstr(vc, r));
    if (r->dims[d] % a->dims[d])
      return shlo__verr(vc, op, "C6", "result gather dimension has size "
                        "%lld, expected a multiple of the operand's %lld",
                        (long long)r->dims[d], (long long)a->dims[d]);
  }
  return true;
}

/* all_reduce: C1-C3 replica groups; C4 channel id; C5 computation is a
 * reduction body, operand element types promotable to it; C6 results have
 * the operands' shapes and C7 the body's element types. */
bool shlo__verify_all_reduce(shlo__vctx *vc, const shlo_op *op) {
  if (!same_count(vc, op)) return false;
  static const rg_labels L = {"C3", "C1", "C2", "C2"};
  if (!replica_groups_ok(vc, op, false, 0, &L) ||
      !channel_ok(vc, op, "C4", false))
    return false;
  const shlo_block *b = op->n_regions ? op->regions[0] : NULL;
  for (int i = 0; i < op->n_operands; i++) {
    const shlo_type *a = shlo__otype(vc, op, i), *r = shlo__rtype(vc, op, i);
    const shlo_type *acc;
    if (!shlo__check_reduction_body(vc, op, "C5", b, 1, &a, &acc))
      return false;
    if (!shlo__compat_shape(a, r))
      return shlo__verr(vc, op, "C6", "result #%d %s must have the shape of "
                        "operand %s", i, shlo__tstr(vc, r), shlo__tstr(vc, a));
    if (!shlo__same_baseline_elem(r, acc))
      return shlo__verr(vc, op, "C7", "result #%d %s must have the "
                        "computation's element type %s", i, shlo__tstr(vc, r),
                        shlo__tstr(vc, acc));
  }
  return true;
}

/* all_to_all: C1 0 <= split_dimension < rank; C2 its size is a multiple of
 * split_count; C3 0 <= concat_dimension < rank; C4 split_count > 0; C5-C7
 * replica groups, C8 of split_count ids each; C9 each result is its
 * operand with split_dimension divided and concat_dimension multiplied by
 * split_count. */
bool shlo__verify_all_to_all(shlo__vctx *vc, const shlo_op *op) {
  if (!same_count(vc, op)) return false;
  int64_t sd, cd, sc = 1;
  if (!nonneg_attr(vc, op, "split_dimension", &sd)) return false;
  if (!nonneg_attr(vc, op, "concat_dimension", &cd)) return false;
  shlo_attr_get_i64(shlo_op_attr(op, "split_count"), &sc);
  if (sc <= 0)
    return shlo__verr(vc, op, "C4", "split_count must be positive, got %lld",
                      (long long)sc);
  for (int i = 0; i < op->n_operands; i++) {
    const shlo_type *a = shlo__otype(vc, op, i);
    if (sd >= a->rank)
      return shlo__verr(vc, op, "C1", "split_dimension %lld is out of bounds "
                        "for operand %s", (long long)sd, shlo__tstr(vc, a));
    if (cd >= a->rank)
      return shlo__verr(vc, op, "C3", "concat_dimension %lld is out of "
                        "bounds for operand %s", (long long)cd,
                        shlo__tstr(vc, a));
    if (a->dims[sd] >= 0 && a->dims[sd] % sc)
      return shlo__verr(vc, op, "C2", "split dimension has size %lld, "
                        "expected a multiple of split_count %lld",
                        (long long)a->dims[sd], (long long)sc);
  }
  static const rg_labels L = {"C7", "C5", "C6", "C8"};
  if (!replica_groups_ok(vc, op, true, sc, &L)) return false;
  for (int i = 0; i < op->n_operands; i++) {
    const shlo_type *a = shlo__otype(vc, op, i), *r = shlo__rtype(vc, op, i);
    if (!shlo__same_baseline_elem(a, r))
      return shlo__verr(vc, op, "C9", "operand %s and result %s at index %d "
                        "have different element types", shlo__tstr(vc, a),
                        shlo__tstr(vc, r), i);
    int64_t want[R];
    for (int k = 0; k < a->rank; k++) want[k] = a->dims[k];
    if (want[sd] >= 0) want[sd] /= sc;
    if (want[cd] >= 0) want[cd] *= sc;
    bool ok = r->rank == a->rank;
    for (int k = 0; ok && k < a->rank; k++)
      ok = shlo__dim_eq(r->dims[k], want[k]);
    if (!ok)
      return shlo__verr(vc, op, "C9", "result #%d %s must have shape %s", i,
                        shlo__tstr(vc, r), shlo__dstr(vc, want, a->rank));
  }
  return true;
}

/* Dynamic root of collective_broadcast / collective_reduce: with
 * has_dynamic_root the last operand is a rank-1 i32 tensor with one
 * element per data operand. Returns the number of data operands, -1 on
 * error. */
static int data_operands(shlo__vctx *vc, const shlo_op *op, const char *what) {
  bool dyn = shlo_op_attr(op, "has_dynamic_root") != NULL;
  if (!dyn) {
    if (op->n_operands < 1) {
      shlo__verr(vc, op, "C1", "%s requires at least one data operand", what);
      return -1;
    }
    return op->n_operands;
  }
  if (op->n_operands < 2) {
    shlo__verr(vc, op, "C1", "%s with has_dynamic_root requires at least two "
               "operands (data + root)", what);
    return -1;
  }
  const shlo_type *root = shlo__otype(vc, op, op->n_operands - 1);
  int nd = op->n_operands - 1;
  if (!shlo__is_tensor(root) || root->rank != 1 || root->quant ||
      root->elem != SHLO_SI32) {
    shlo__verr(vc, op, "C1", "last operand %s of %s with has_dynamic_root "
               "must be a rank-1 i32 tensor", shlo__tstr(vc, root), what);
    return -1;
  }
  if (root->dims[0] != nd) {
    shlo__verr(vc, op, "C1", "last operand of %s with has_dynamic_root must "
               "have as many elements as data operands (%d), got %lld", what,
               nd, (long long)root->dims[0]);
    return -1;
  }
  return nd;
}

/* collective_broadcast: C1-C2 replica groups; C3 results have the data
 * operands' types; at least one data operand (and a root with
 * has_dynamic_root). */
bool shlo__verify_collective_broadcast(shlo__vctx *vc, const shlo_op *op) {
  int nd = data_operands(vc, op, "collective_broadcast");
  if (nd < 0) return false;
  static const rg_labels L = {"C2", "C1", "C1", "C1"};
  if (!replica_groups_ok(vc, op, false, 0, &L)) return false;
  for (int i = 0; i < nd && i < op->n_results; i++)
    if (!shlo__compat_baseline(shlo__otype(vc, op, i), shlo__rtype(vc, op, i)))
      return shlo__verr(vc, op, "C3", "result #%d %s must have the operand's "
                        "type %s", i, shlo__tstr(vc, shlo__rtype(vc, op, i)),
                        shlo__tstr(vc, shlo__otype(vc, op, i)));
  return true;
}

/* collective_reduce: data operands as collective_broadcast's, replica
 * groups, channel id, and a reduction body. */
bool shlo__verify_collective_reduce(shlo__vctx *vc, const shlo_op *op) {
  if (!channel_ok(vc, op, "C4", false)) return false;
  int nd = data_operands(vc, op, "collective_reduce");
  if (nd < 0) return false;
  static const rg_labels L = {"C1", "C1", "C2", "C3"}; /* not in the spec */
  if (!replica_groups_ok(vc, op, false, 0, &L)) return false;
  const shlo_block *b = op->n_regions ? op->regions[0] : NULL;
  for (int i = 0; i < nd; i++) {
    const shlo_type *a = shlo__otype(vc, op, i);
    if (!shlo__check_reduction_body(vc, op, "C5", b, 1, &a, NULL))
      return false;
  }
  return true;
}

/* collective_permute: C1 source_target_pairs has shape [N, 2]; C2 sources
 * unique; C3 targets unique; C4 ids >= 0; C5 result type is operand's. */
bool shlo__verify_collective_permute(shlo__vctx *vc, const shlo_op *op) {
  const shlo_attr *a = shlo_op_attr(op, "source_target_pairs");
  if (a && a->kind == SHLO_ATTR_DENSE) {
    const shlo_value *d = a->dense;
    if (d->rank != 2)
      return shlo__verr(vc, op, "C1", "source_target_pairs must be of rank "
                        "2, got rank %d", d->rank);
    if (d->dims[1] != 2)
      return shlo__verr(vc, op, "C1", "source_target_pairs must have shape "
                        "(N, 2), got (%lld, %lld)", (long long)d->dims[0],
                        (long long)d->dims[1]);
    int64_t n = d->dims[0];
    for (int64_t i = 0; i < n; i++) {
      int64_t s = shlo_tensor_get_i64(d, 2 * i),
              t = shlo_tensor_get_i64(d, 2 * i + 1);
      if (s < 0 || t < 0)
        return shlo__verr(vc, op, "C4", "ids in source_target_pairs must be "
                          ">= 0, got (%lld, %lld)", (long long)s,
                          (long long)t);
      for (int64_t j = 0; j < i; j++) {
        if (shlo_tensor_get_i64(d, 2 * j) == s)
          return shlo__verr(vc, op, "C2", "duplicate source %lld in "
                            "source_target_pairs", (long long)s);
        if (shlo_tensor_get_i64(d, 2 * j + 1) == t)
          return shlo__verr(vc, op, "C3", "duplicate target %lld in "
                            "source_target_pairs", (long long)t);
      }
    }
  }
  for (int i = 0; i < op->n_operands && i < op->n_results; i++)
    if (!shlo__compat_baseline(shlo__otype(vc, op, i), shlo__rtype(vc, op, i)))
      return shlo__verr(vc, op, "C5", "result #%d %s must have the operand's "
                        "type %s", i, shlo__tstr(vc, shlo__rtype(vc, op, i)),
                        shlo__tstr(vc, shlo__otype(vc, op, i)));
  return true;
}

/* reduce_scatter: C1 operand's scatter_dimension size is a multiple of the
 * result's (of the group size); C2 0 <= scatter_dimension < rank; C3-C5
 * replica groups; C6 channel id; C7 computation is a reduction body; C8
 * result: same rank, same sizes but at scatter_dimension; C9 the body's
 * element type. */
bool shlo__verify_reduce_scatter(shlo__vctx *vc, const shlo_op *op) {
  if (!same_count(vc, op)) return false;
  int64_t d;
  if (!nonneg_attr(vc, op, "scatter_dimension", &d)) return false;
  static const rg_labels L = {"C5", "C3", "C4", "C4"};
  if (!replica_groups_ok(vc, op, true, 0, &L) ||
      !channel_ok(vc, op, "C6", false))
    return false;
  const shlo_block *b = op->n_regions ? op->regions[0] : NULL;
  for (int i = 0; i < op->n_operands; i++) {
    const shlo_type *a = shlo__otype(vc, op, i), *r = shlo__rtype(vc, op, i);
    const shlo_type *acc;
    if (!shlo__check_reduction_body(vc, op, "C7", b, 1, &a, &acc))
      return false;
    if (a->rank != r->rank)
      return shlo__verr(vc, op, "C8", "operand %s and result %s should have "
                        "the same rank", shlo__tstr(vc, a), shlo__tstr(vc, r));
    if (d >= a->rank)
      return shlo__verr(vc, op, "C2", "scatter_dimension %lld must be less "
                        "than the operand rank %d", (long long)d, a->rank);
    if (a->dims[d] == 0)
      return shlo__verr(vc, op, "C1", "operand dimension size at "
                        "scatter_dimension cannot be zero");
    if (r->dims[d] == 0)
      return shlo__verr(vc, op, "C8", "result dimension size at "
                        "scatter_dimension cannot be zero");
    /* the process groups' size depends on the grid mode: the operand's
     * size is checked against the result's (the group size is their
     * ratio) */
    if (a->dims[d] % r->dims[d])
      return shlo__verr(vc, op, "C1", "operand scatter dimension has size "
                        "%lld, expected a multiple of the result's %lld",
                        (long long)a->dims[d], (long long)r->dims[d]);
    for (int k = 0; k < a->rank; k++)
      if (k != d && a->dims[k] != r->dims[k])
        return shlo__verr(vc, op, "C8", "non-scatter dimension %d differs: "
                          "operand %lld, result %lld", k,
                          (long long)a->dims[k], (long long)r->dims[k]);
    if (!shlo__same_baseline_elem(r, acc))
      return shlo__verr(vc, op, "C9", "result element type is expected to be "
                        "that of the computation (%s), got %s",
                        shlo__tstr(vc, acc), shlo__tstr(vc, r));
  }
  return true;
}

/* The layout attribute of infeed: an array of (n_results - 1) arrays of
 * integers. */
static bool infeed_layout_ok(shlo__vctx *vc, const shlo_op *op) {
  const shlo_attr *l = shlo_op_attr(op, "layout");
  if (!l) return true;
  if (l->kind != SHLO_ATTR_ARRAY)
    return shlo__verr(vc, op, "C3", "layout must be an array");
  if (l->n != op->n_results - 1)
    return shlo__verr(vc, op, "C3", "layout size must be %d (the number of "
                      "results less the token), got %d", op->n_results - 1,
                      l->n);
  for (int i = 0; i < l->n; i++) {
    const shlo_attr *e = l->items[i];
    if (e->kind != SHLO_ATTR_ARRAY)
      return shlo__verr(vc, op, "C3", "layout elements must be arrays");
    for (int k = 0; k < e->n; k++)
      if (e->items[k]->kind != SHLO_ATTR_INT)
        return shlo__verr(vc, op, "C3", "layout's leaf elements must be "
                          "integers");
  }
  return true;
}

/* The results of infeed/recv: tensors (or tuples) followed by one token. */
static bool feed_results_ok(shlo__vctx *vc, const shlo_op *op,
                            const char *label) {
  if (op->n_results < 1)
    return shlo__verr(vc, op, label, "expects at least one result (the "
                      "token), got 0");
  for (int i = 0; i + 1 < op->n_results; i++)
    if (shlo__rtype(vc, op, i)->kind == SHLO_TYPE_TOKEN)
      return shlo__verr(vc, op, label, "every result but the last must be a "
                        "tensor, result #%d is %s", i,
                        shlo__tstr(vc, shlo__rtype(vc, op, i)));
  const shlo_type *t = shlo__rtype(vc, op, op->n_results - 1);
  if (t->kind != SHLO_TYPE_TOKEN)
    return shlo__verr(vc, op, label, "the last result must be a token, got "
                      "%s", shlo__tstr(vc, t));
  return true;
}

/* infeed: C1-C2 results are tensors then a token; C3 layout. */
bool shlo__verify_infeed(shlo__vctx *vc, const shlo_op *op) {
  return feed_results_ok(vc, op, "C1") && infeed_layout_ok(vc, op);
}

/* outfeed: the last operand is a token, the result a token. */
bool shlo__verify_outfeed(shlo__vctx *vc, const shlo_op *op) {
  if (op->n_operands < 1 ||
      shlo__otype(vc, op, op->n_operands - 1)->kind != SHLO_TYPE_TOKEN)
    return shlo__verr(vc, op, "I2", "the last operand must be a token");
  return true;
}

/* channel_type agrees with is_host_transfer (send C1, recv C1): host
 * transfers use DEVICE_TO_HOST (send) / HOST_TO_DEVICE (recv), others
 * DEVICE_TO_DEVICE. */
static bool channel_type_ok(shlo__vctx *vc, const shlo_op *op, int host) {
  const shlo_attr *ch = shlo_op_attr(op, "channel_handle");
  if (!ch) return true;
  int64_t t = 0;
  if (!shlo_attr_get_i64(shlo_attr_field(ch, "type"), &t)) return true;
  const shlo_attr *h = shlo_op_attr(op, "is_host_transfer");
  bool is_host = h && (h->kind == SHLO_ATTR_UNIT || h->b);
  static const char *names[] = {"CHANNEL_TYPE_INVALID", "DEVICE_TO_DEVICE",
                                "DEVICE_TO_HOST", "HOST_TO_DEVICE"};
  int want = is_host ? host : 1;
  if (t != want)
    return shlo__verr(vc, op, "C1", "channel_type should be %s when "
                      "is_host_transfer is %s, got %s", names[want],
                      is_host ? "true" : "false",
                      t >= 0 && t < 4 ? names[t] : "an unknown type");
  return true;
}

/* send: C1 channel type; the last operand is a token. */
bool shlo__verify_send(shlo__vctx *vc, const shlo_op *op) {
  return channel_type_ok(vc, op, 2);
}

/* recv: C1 channel type; C2-C3 results are tensors then a token. */
bool shlo__verify_recv(shlo__vctx *vc, const shlo_op *op) {
  return channel_type_ok(vc, op, 3) && feed_results_ok(vc, op, "C2");
}

/* after_all: operands and the result are tokens. */
bool shlo__verify_after_all(shlo__vctx *vc, const shlo_op *op) {
  for (int i = 0; i < op->n_operands; i++)
    if (shlo__otype(vc, op, i)->kind != SHLO_TYPE_TOKEN)
      return shlo__verr(vc, op, "I1", "operand #%d %s must be a token", i,
                        shlo__tstr(vc, shlo__otype(vc, op, i)));
  return true;
}

/* replica_id, partition_id: the result is tensor<ui32>. */
bool shlo__verify_process_id(shlo__vctx *vc, const shlo_op *op) {
  const shlo_type *r = op->n_results ? shlo__rtype(vc, op, 0) : NULL;
  if (!shlo__is_tensor(r) || r->rank != 0 || r->elem != SHLO_UI32)
    return shlo__verr(vc, op, "O1", "result %s must be tensor<ui32>",
                      shlo__tstr(vc, r));
  return true;
}
