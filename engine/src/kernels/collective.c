/* SPDX-License-Identifier: Apache-2.0 */
/* Collectives: process groups, and the math of
 * all_gather, all_reduce, all_to_all, reduce_scatter, collective_permute,
 * collective_broadcast and collective_reduce.
 *
 * Each process computes its group from the op's attributes and the grid
 * shape (spec "Collective ops": cross_replica, cross_partition,
 * cross_replica_and_partition, flattened_ids), then meets the other
 * members at the rendezvous (runtime/rendezvous.c), where the last to
 * arrive checks that the members agree and computes every member's
 * results with the functions here. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/value.h"
#include "kernels/complex_mul.h"
#include "kernels/float_minmax.h"
#include "kernels/kernel.h"
#include "runtime/grid.h"
#include "runtime/grid_net.h"
#include "core/value_quant.h"

typedef enum {
  CROSS_REPLICA,
  CROSS_PARTITION,
  CROSS_REPLICA_AND_PARTITION,
  FLATTENED_IDS,
} strategy;

static const char *strategy_name[] = {"cross_replica", "cross_partition",
                                      "cross_replica_and_partition",
                                      "flattened_ids"};

typedef struct coll_params {
  int code;
  strategy strat;
  int n_groups;        /* 0: one group of every id */
  int *g_off, *g_len;
  int64_t *ids;        /* ragged groups, -1 padding dropped */
  int n_data;          /* data operands (a dynamic root comes after) */
  bool dynamic_root;
  int64_t dim;         /* all_gather_dim / scatter_dimension */
  int64_t split_dim, concat_dim, split_count;
  int n_pairs;
  int64_t *pairs;      /* source_target_pairs, n_pairs x 2 */
  int *reducer;        /* per data operand: shlo_op_reducer, NONE = region */
  const shlo_type **rtypes; /* result types (module-owned) */
} coll_params;

static void coll_free(void *p) {
  coll_params *cp = p;
  if (!cp) return;
  shlo__free(cp->g_off);
  shlo__free(cp->g_len);
  shlo__free(cp->ids);
  shlo__free(cp->pairs);
  shlo__free(cp->reducer);
  shlo__free(cp->rtypes);
  shlo__free(cp);
}

/* ---- tensor helpers ---- */

/* Copy a box of extents ext from src (dims sd, at offset so) into dst
 * (dims dd, at offset doff). */
static void box_copy(int rank, const int64_t *ext, size_t esz, char *dst,
                     const int64_t *dd, const int64_t *doff, const char *src,
                     const int64_t *sd, const int64_t *so) {
  if (rank == 0) {
    memcpy(dst, src, esz);
    return;
  }
  for (int i = 0; i < rank; i++)
    if (ext[i] <= 0) return;
  int64_t ds[SHLO_MAX_RANK], ss[SHLO_MAX_RANK], idx[SHLO_MAX_RANK] = {0};
  shlo_strides(rank, dd, ds);
  shlo_strides(rank, sd, ss);
  size_t run = (size_t)ext[rank - 1] * esz;
  for (;;) {
    int64_t a = 0, b = 0;
    for (int i = 0; i < rank; i++) {
      a += (idx[i] + doff[i]) * ds[i];
      b += (idx[i] + so[i]) * ss[i];
    }
    memcpy(dst + (size_t)a * esz, src + (size_t)b * esz, run);
    int i = rank - 2;
    for (; i >= 0; i--) {
      if (++idx[i] < ext[i]) break;
      idx[i] = 0;
    }
    if (i < 0) break;
  }
}

static shlo_value *new_like(const shlo_type *t) {
  return shlo_tensor_new(t->elem, t->rank, t->dims);
}

static void value_type_str(const shlo_value *v, char *buf, size_t cap) {
  if (v->kind != SHLO_TYPE_TENSOR) {
    snprintf(buf, cap, "a non-tensor value");
    return;
  }
  shlo_type t;
  memset(&t, 0, sizeof t);
  t.kind = SHLO_TYPE_TENSOR;
  t.elem = v->elem;
  t.rank = v->rank;
  memcpy(t.dims, v->dims, sizeof t.dims);
  shlo_type_format(&t, buf, cap);
}

static bool same_shape(const shlo_value *a, const shlo_value *b) {
  if (a->kind != b->kind) return false;
  if (a->kind != SHLO_TYPE_TENSOR) return true;
  return a->elem == b->elem && a->rank == b->rank &&
         !memcmp(a->dims, b->dims, (size_t)a->rank * sizeof a->dims[0]);
}

/* ---- native reductions ---- */

/* Which reducers combine() runs natively: integers of a byte or wider and
 * i1, float add/multiply/maximum/minimum, complex add/multiply.  Sub-byte
 * integers would need wrapping to their width: theirs run as a region. */
static bool native_ok(shlo_elem_type t, int op) {
  if (t == SHLO_I1) return true;
  switch (shlo_elem_storage(t)) {
  case SHLO_ST_F32: case SHLO_ST_F64:
    return op == SHLO_REDUCER_SUM || op == SHLO_REDUCER_PRODUCT ||
           op == SHLO_REDUCER_MAX || op == SHLO_REDUCER_MIN;
  case SHLO_ST_C64: case SHLO_ST_C128:
    return op == SHLO_REDUCER_SUM || op == SHLO_REDUCER_PRODUCT;
  default:
    return shlo_elem_is_int(t) && shlo_elem_bits(t) >= 8;
  }
}

/* Integer combine on the unsigned type U (wraps like the signed type's
 * two's complement), comparisons on the type T. */
#define INT_COMBINE(T, U)                                              \
  do {                                                                 \
    T *a = acc;                                                        \
    const T *b = x;                                                    \
    for (int64_t i = 0; i < n; i++) switch (op) {                      \
      case SHLO_REDUCER_SUM: a[i] = (T)((U)a[i] + (U)b[i]); break;     \
      case SHLO_REDUCER_PRODUCT: a[i] = (T)((U)a[i] * (U)b[i]); break; \
      case SHLO_REDUCER_MAX: a[i] = a[i] > b[i] ? a[i] : b[i]; break;  \
      case SHLO_REDUCER_MIN: a[i] = a[i] < b[i] ? a[i] : b[i]; break;  \
      case SHLO_REDUCER_AND: a[i] = a[i] & b[i]; break;                \
      case SHLO_REDUCER_OR: a[i] = a[i] | b[i]; break;                 \
      default: a[i] = a[i] ^ b[i]; break;                              \
      }                                                                \
  } while (0)

/* maximum/minimum propagate NaN; +0 is above -0. */
#define FLT_COMBINE(T)                                                 \
  do {                                                                 \
    T *a = acc;                                                        \
    const T *b = x;                                                    \
    for (int64_t i = 0; i < n; i++) {                                  \
      T p = a[i], q = b[i];                                            \
      switch (op) {                                                    \
      case SHLO_REDUCER_SUM: a[i] = p + q; break;                      \
      case SHLO_REDUCER_PRODUCT: a[i] = p * q; break;                  \
      case SHLO_REDUCER_MAX: a[i] = SHLO_FMAX(p, q); break;            \
      default: a[i] = SHLO_FMIN(p, q); break;                          \
      }                                                                \
    }                                                                  \
  } while (0)

#define CPLX_COMBINE(T)                                                \
  do {                                                                 \
    T *a = acc;                                                        \
    const T *b = x;                                                    \
    for (int64_t i = 0; i < n; i++) {                                  \
      T pr = a[2 * i], pi = a[2 * i + 1], qr = b[2 * i], qi = b[2 * i + 1]; \
      if (op == SHLO_REDUCER_SUM) {                                    \
        a[2 * i] = pr + qr;                                            \
        a[2 * i + 1] = pi + qi;                                        \
      } else {                                                         \
        SHLO_CMUL(T, pr, pi, qr, qi, a[2 * i], a[2 * i + 1]);          \
      }                                                                \
    }                                                                  \
  } while (0)

static void combine_i1(uint8_t *a, const uint8_t *b, int64_t n, int op) {
  for (int64_t i = 0; i < n; i++) switch (op) {
    case SHLO_REDUCER_SUM: case SHLO_REDUCER_MAX: case SHLO_REDUCER_OR:
      a[i] = a[i] | b[i];
      break;
    case SHLO_REDUCER_XOR: a[i] = a[i] ^ b[i]; break;
    default: a[i] = a[i] & b[i]; break;
    }
}

/* The loop by storage (shlo/types.h); native_ok chose which types come. */
static void combine(void *acc, const void *x, int64_t n, shlo_elem_type t,
                    int op) {
  if (t == SHLO_I1) {
    combine_i1(acc, x, n, op);
    return;
  }
  switch (shlo_elem_storage(t)) {
  case SHLO_ST_S8: INT_COMBINE(int8_t, uint8_t); break;
  case SHLO_ST_S16: INT_COMBINE(int16_t, uint16_t); break;
  case SHLO_ST_S32: INT_COMBINE(int32_t, uint32_t); break;
  case SHLO_ST_S64: INT_COMBINE(int64_t, uint64_t); break;
  case SHLO_ST_U8: INT_COMBINE(uint8_t, uint32_t); break;
  case SHLO_ST_U16: INT_COMBINE(uint16_t, uint32_t); break;
  case SHLO_ST_U32: INT_COMBINE(uint32_t, uint32_t); break;
  case SHLO_ST_U64: INT_COMBINE(uint64_t, uint64_t); break;
  case SHLO_ST_F32: FLT_COMBINE(float); break;
  case SHLO_ST_F64: FLT_COMBINE(double); break;
  case SHLO_ST_C64: CPLX_COMBINE(float); break;
  case SHLO_ST_C128: CPLX_COMBINE(double); break;
  default: break;
  }
}

/* Reduce operand k over the group in group order into a new tensor. */
static shlo_status reduce_group(const shlo_step *s, shlo_value *const *in,
                                int k, int G, shlo_value **const *contrib,
                                shlo_value **res, shlo_exec *ex) {
  const coll_params *cp = s->params;
  shlo_value *r = shlo_tensor_clone(contrib[0][k]);
  if (!r) return shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory");
  if (cp->reducer[k]) {
    for (int g = 1; g < G; g++)
      combine(r->data, contrib[g][k]->data, r->numel, r->elem, cp->reducer[k]);
    *res = r;
    return SHLO_OK;
  }
  /* Run the body per element: acc = body(acc, x_g) for g = 1..G-1. */
  size_t esz = shlo_elem_size(r->elem);
  shlo_status st = SHLO_OK;
  for (int64_t e = 0; e < r->numel && !st; e++) {
    shlo_value *acc = shlo_tensor_new(r->elem, 0, NULL);
    if (!acc) {
      st = shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory");
      break;
    }
    shlo__value_share_quant(acc, r);
    memcpy(acc->data, (char *)r->data + (size_t)e * esz, esz);
    for (int g = 1; g < G && !st; g++) {
      shlo_value *xv = shlo_tensor_new(r->elem, 0, NULL);
      if (!xv) {
        st = shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory");
        break;
      }
      shlo__value_share_quant(xv, r);
      memcpy(xv->data, (char *)contrib[g][k]->data + (size_t)e * esz, esz);
      shlo_value *lead[2] = {acc, xv}, *out = NULL;
      st = shlo__step_run_region(s, 0, in, lead, 2, &out, ex);
      shlo_value_unref(xv);
      shlo_value_unref(acc);
      acc = out;
      if (!st && (!out || out->kind != SHLO_TYPE_TENSOR ||
                  out->elem != r->elem || out->numel != 1))
        st = shlo__exec_fail(ex, s, SHLO_ERUNTIME,
                            "the reduction body must return one scalar of "
                            "the operand's element type");
    }
    if (!st) memcpy((char *)r->data + (size_t)e * esz, acc->data, esz);
    shlo_value_unref(acc);
  }
  if (st) {
    shlo_value_unref(r);
    return st;
  }
  *res = r;
  return SHLO_OK;
}

/* ---- the ops' math: fill results[g][0..n_data) for every member ---- */

static shlo_status oom(shlo_exec *ex, const shlo_step *s) {
  return shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory");
}

/* all_gather: result = concatenate(operand@group..., all_gather_dim). */
static shlo_status f_all_gather(const shlo_step *s, shlo_value *const *in,
                                int G, shlo_value **const *contrib,
                                shlo_value ***results, shlo_exec *ex) {
  (void)in;
  const coll_params *cp = s->params;
  int d = (int)cp->dim;
  for (int k = 0; k < cp->n_data; k++) {
    const shlo_type *rt = cp->rtypes[k];
    const shlo_value *x0 = contrib[0][k];
    if (rt->dims[d] != x0->dims[d] * G)
      return shlo__exec_fail(ex, s, SHLO_ERUNTIME,
                            "result %d has dimension %d of size %lld but a "
                            "group of %d processes gathers %lld",
                            k, d, (long long)rt->dims[d], G,
                            (long long)(x0->dims[d] * G));
    shlo_value *r = new_like(rt);
    if (!r) return oom(ex, s);
    int64_t off[SHLO_MAX_RANK] = {0}, zero[SHLO_MAX_RANK] = {0};
    for (int g = 0; g < G; g++) {
      off[d] = g * x0->dims[d];
      box_copy(rt->rank, x0->dims, shlo_elem_size(rt->elem), r->data, rt->dims,
               off, contrib[g][k]->data, x0->dims, zero);
    }
    for (int g = 0; g < G; g++) results[g][k] = shlo_value_ref(r);
    shlo_value_unref(r);
  }
  return SHLO_OK;
}

/* all_reduce: every member gets the reduction over the group. */
static shlo_status f_all_reduce(const shlo_step *s, shlo_value *const *in,
                                int G, shlo_value **const *contrib,
                                shlo_value ***results, shlo_exec *ex) {
  const coll_params *cp = s->params;
  for (int k = 0; k < cp->n_data; k++) {
    shlo_value *r;
    shlo_status st = reduce_group(s, in, k, G, contrib, &r, ex);
    if (st) return st;
    for (int g = 0; g < G; g++) results[g][k] = shlo_value_ref(r);
    shlo_value_unref(r);
  }
  return SHLO_OK;
}

/* collective_reduce (corpus): the group's first member gets the
 * reduction, the others zeros. */
static shlo_status f_collective_reduce(const shlo_step *s,
                                       shlo_value *const *in, int G,
                                       shlo_value **const *contrib,
                                       shlo_value ***results, shlo_exec *ex) {
  const coll_params *cp = s->params;
  for (int k = 0; k < cp->n_data; k++) {
    shlo_status st = reduce_group(s, in, k, G, contrib, &results[0][k], ex);
    if (st) return st;
    for (int g = 1; g < G; g++)
      if (!(results[g][k] = new_like(cp->rtypes[k]))) return oom(ex, s);
  }
  return SHLO_OK;
}

/* reduce_scatter: member g gets part g (along scatter_dimension) of the
 * reduction over the group. */
static shlo_status f_reduce_scatter(const shlo_step *s, shlo_value *const *in,
                                    int G, shlo_value **const *contrib,
                                    shlo_value ***results, shlo_exec *ex) {
  const coll_params *cp = s->params;
  int d = (int)cp->dim;
  for (int k = 0; k < cp->n_data; k++) {
    const shlo_type *rt = cp->rtypes[k];
    const shlo_value *x0 = contrib[0][k];
    if (x0->dims[d] != rt->dims[d] * G)
      return shlo__exec_fail(ex, s, SHLO_ERUNTIME,
                            "operand %d has dimension %d of size %lld, which "
                            "a group of %d processes cannot scatter into "
                            "parts of %lld",
                            k, d, (long long)x0->dims[d], G,
                            (long long)rt->dims[d]);
    shlo_value *full;
    shlo_status st = reduce_group(s, in, k, G, contrib, &full, ex);
    if (st) return st;
    int64_t off[SHLO_MAX_RANK] = {0}, zero[SHLO_MAX_RANK] = {0};
    for (int g = 0; g < G; g++) {
      shlo_value *r = new_like(rt);
      if (!r) {
        shlo_value_unref(full);
        return oom(ex, s);
      }
      off[d] = g * rt->dims[d];
      box_copy(rt->rank, rt->dims, shlo_elem_size(rt->elem), r->data,
               rt->dims, zero, full->data, full->dims, off);
      results[g][k] = r;
    }
    shlo_value_unref(full);
  }
  return SHLO_OK;
}

/* all_to_all: each sender splits its operand into G parts along
 * split_dimension; receiver j concatenates part j of every sender, in
 * group order, along concat_dimension. */
static shlo_status f_all_to_all(const shlo_step *s, shlo_value *const *in,
                                int G, shlo_value **const *contrib,
                                shlo_value ***results, shlo_exec *ex) {
  (void)in;
  const coll_params *cp = s->params;
  if (cp->split_count != G)
    return shlo__exec_fail(ex, s, SHLO_ERUNTIME,
                          "split_count is %lld but the process group has %d "
                          "members",
                          (long long)cp->split_count, G);
  int sd = (int)cp->split_dim, cd = (int)cp->concat_dim;
  for (int k = 0; k < cp->n_data; k++) {
    const shlo_type *rt = cp->rtypes[k];
    const shlo_value *x0 = contrib[0][k];
    int64_t box[SHLO_MAX_RANK];
    memcpy(box, x0->dims, sizeof box);
    box[sd] /= G;
    for (int j = 0; j < G; j++) {
      shlo_value *r = new_like(rt);
      if (!r) return oom(ex, s);
      for (int i = 0; i < G; i++) {
        int64_t so[SHLO_MAX_RANK] = {0}, doff[SHLO_MAX_RANK] = {0};
        so[sd] = j * box[sd];
        doff[cd] = i * box[cd];
        box_copy(rt->rank, box, shlo_elem_size(rt->elem), r->data, rt->dims,
                 doff, contrib[i][k]->data, x0->dims, so);
      }
      results[j][k] = r;
    }
  }
  return SHLO_OK;
}

/* collective_broadcast: every member gets the first member's operand (or,
 * with has_dynamic_root, operand k of the member its root[k] names). */
static shlo_status f_broadcast(const shlo_step *s, shlo_value *const *in,
                               int G, shlo_value **const *contrib,
                               shlo_value ***results, shlo_exec *ex) {
  (void)in;
  const coll_params *cp = s->params;
  for (int j = 0; j < G; j++)
    for (int k = 0; k < cp->n_data; k++) {
      int64_t src = 0;
      if (cp->dynamic_root) {
        const shlo_value *root = contrib[j][cp->n_data];
        src = shlo_tensor_get_i64(root, root->numel > k ? k : 0);
        if (src < 0 || src >= G)
          return shlo__exec_fail(ex, s, SHLO_ERUNTIME,
                                "root %lld is outside the group of %d",
                                (long long)src, G);
      }
      results[j][k] = shlo_value_ref(contrib[src][k]);
    }
  return SHLO_OK;
}

/* collective_permute over a whole replica (or partition) dimension:
 * member t gets the operand of s for each pair (s, t), zeros otherwise. */
static shlo_status f_permute(const shlo_step *s, shlo_value *const *in, int G,
                             shlo_value **const *contrib,
                             shlo_value ***results, shlo_exec *ex) {
  (void)in;
  const coll_params *cp = s->params;
  for (int j = 0; j < G; j++) {
    int src = -1;
    for (int i = 0; i < cp->n_pairs; i++)
      if (cp->pairs[2 * i + 1] == j) src = (int)cp->pairs[2 * i];
    for (int k = 0; k < cp->n_data; k++) {
      results[j][k] = src >= 0 ? shlo_value_ref(contrib[src][k])
                               : new_like(cp->rtypes[k]);
      if (!results[j][k]) return oom(ex, s);
    }
  }
  return SHLO_OK;
}

/* ---- the members of a rendezvous ---- */

/* Check that every member runs the same kind of op with operands of the
 * same types and the same result types; the last arriver runs it. */
static shlo_status check_members(const grid_rdv *r, const shlo_step *s,
                                 shlo_exec *ex) {
  const shlo_grid *g = ex->grid;
  char a[64], b[64], ta[256], tb[256];
  /* Members on other ranks (no step here) are checked by their operands,
   * and by their own rank for the op. */
  int first = 0;
  while (!r->steps[first]) first++;
  const shlo_step *s0 = r->steps[first];
  const coll_params *c0 = s0->params;
  for (int i = 0; i < r->n; i++) {
    shlo__proc_name(g, r->members[first], a, sizeof a);
    shlo__proc_name(g, r->members[i], b, sizeof b);
    const shlo_step *si = r->steps[i];
    const coll_params *ci = si ? si->params : NULL;
    if (si && (si->op->code != s0->op->code ||
               r->n_contrib[i] != r->n_contrib[first] ||
               ci->n_data != c0->n_data))
      return shlo__exec_fail(ex, s, SHLO_ERUNTIME,
                            "process %s runs %s at %d:%d but process %s runs "
                            "%s at %d:%d in the same group",
                            a, s0->op->name, s0->op->loc.line,
                            s0->op->loc.col, b, si->op->name,
                            si->op->loc.line, si->op->loc.col);
    if (r->n_contrib[i] != r->n_contrib[first])
      return shlo__exec_fail(ex, s, SHLO_ERUNTIME,
                            "process %s passes %d operands at %s but process "
                            "%s passes %d in the same group",
                            a, r->n_contrib[first], s0->op->name, b,
                            r->n_contrib[i]);
    for (int k = 0; k < r->n_contrib[first]; k++)
      if (!same_shape(r->contrib[first][k], r->contrib[i][k])) {
        value_type_str(r->contrib[first][k], ta, sizeof ta);
        value_type_str(r->contrib[i][k], tb, sizeof tb);
        return shlo__exec_fail(ex, s, SHLO_ERUNTIME,
                              "operand %d is %s in process %s but %s in "
                              "process %s",
                              k, ta, a, tb, b);
      }
    if (!si) continue;
    for (int k = 0; k < c0->n_data; k++)
      if (!shlo_type_equal(c0->rtypes[k], ci->rtypes[k])) {
        shlo_type_format(c0->rtypes[k], ta, sizeof ta);
        shlo_type_format(ci->rtypes[k], tb, sizeof tb);
        return shlo__exec_fail(ex, s, SHLO_ERUNTIME,
                              "result %d is %s in process %s but %s in "
                              "process %s",
                              k, ta, a, tb, b);
      }
  }
  return SHLO_OK;
}

/* The math of op code. */
static shlo_rdv_fn op_math(int code) {
  switch (code) {
  case SHLO_OP_ALL_GATHER: return f_all_gather;
  case SHLO_OP_ALL_REDUCE:
  case SHLO_OP_CROSS_REPLICA_SUM: return f_all_reduce;
  case SHLO_OP_ALL_TO_ALL: return f_all_to_all;
  case SHLO_OP_REDUCE_SCATTER: return f_reduce_scatter;
  case SHLO_OP_COLLECTIVE_REDUCE: return f_collective_reduce;
  case SHLO_OP_COLLECTIVE_BROADCAST: return f_broadcast;
  default: return f_permute;
  }
}

/* ---- process groups ---- */

/* The group of process me (members in group order); returns 0, or 1 when
 * the process is in no group (msg set), or -1 on a bad id (msg set). */
static int find_group(const coll_params *cp, strategy strat, int R, int P,
                      int me, int *members, int *G, char *msg, size_t cap) {
  int r = me / P, p = me % P;
  int N = strat == CROSS_PARTITION ? P : strat == FLATTENED_IDS ? R * P : R;
  int mine = strat == CROSS_PARTITION ? p : strat == FLATTENED_IDS ? me : r;
  const char *what = strat == CROSS_PARTITION ? "partition"
                     : strat == FLATTENED_IDS ? "flattened process"
                                              : "replica";
  for (int i = 0; i < cp->g_off[cp->n_groups]; i++)
    if (cp->ids[i] >= N) {
      snprintf(msg, cap,
               "%s id %lld in replica_groups is out of range: the grid has "
               "%d x %d processes (%s)",
               what, (long long)cp->ids[i], R, P, strategy_name[strat]);
      return -1;
    }
  int gi = -1;
  for (int i = 0; i < cp->n_groups && gi < 0; i++)
    for (int j = 0; j < cp->g_len[i]; j++)
      if (cp->ids[cp->g_off[i] + j] == mine) gi = i;
  const int64_t *ids = NULL;
  int n = 0;
  if (cp->n_groups == 0) {
    n = N; /* no groups: one group of every id */
  } else if (gi < 0) {
    snprintf(msg, cap,
             "process (%d, %d) is in none of the replica_groups (%s: its %s "
             "id %d is not listed)",
             r, p, strategy_name[strat], what, mine);
    return 1;
  } else {
    ids = cp->ids + cp->g_off[gi];
    n = cp->g_len[gi];
  }
  int m = 0;
  if (strat == CROSS_REPLICA_AND_PARTITION) {
    for (int pp = 0; pp < P; pp++)
      for (int j = 0; j < n; j++)
        members[m++] = (int)(ids ? ids[j] : j) * P + pp;
  } else {
    for (int j = 0; j < n; j++) {
      int id = (int)(ids ? ids[j] : j);
      members[m++] = strat == CROSS_REPLICA     ? id * P + p
                     : strat == CROSS_PARTITION ? r * P + id
                                                : id;
    }
  }
  *G = m;
  return 0;
}

static shlo_status k_collective(const shlo_step *s, shlo_value *const *in,
                                shlo_value **out, shlo_exec *ex) {
  const coll_params *cp = s->params;
  shlo_grid *g = ex->grid;
  int R = g ? g->n_replicas : 1, P = g ? g->n_partitions : 1;
  int me = g ? ex->proc : 0;
  int *members = shlo__malloc((size_t)(R * P + 1) * sizeof *members);
  if (!members) return oom(ex, s);
  char msg[512];
  int G = 0;
  shlo_status st = SHLO_OK;
  shlo_rdv_ops ops = {check_members, op_math(cp->code)};
  if (cp->code == SHLO_OP_COLLECTIVE_PERMUTE) {
    int N = cp->strat == CROSS_PARTITION ? P : R;
    for (int i = 0; i < 2 * cp->n_pairs; i++)
      if (cp->pairs[i] >= N) {
        st = shlo__exec_fail(ex, s, SHLO_ERUNTIME,
                            "source_target_pairs names id %lld but the grid "
                            "has %d %s",
                            (long long)cp->pairs[i], N,
                            cp->strat == CROSS_PARTITION ? "partitions"
                                                         : "replicas");
        goto done;
      }
    for (int i = 0; i < N; i++)
      members[G++] = cp->strat == CROSS_PARTITION ? (me / P) * P + i
                                                  : i * P + me % P;
  } else {
    int found = find_group(cp, cp->strat, R, P, me, members, &G, msg,
                           sizeof msg);
    if (found == 1 && cp->code == SHLO_OP_COLLECTIVE_BROADCAST) {
      /* Outside every group: zeros, no rendezvous. */
      for (int k = 0; k < cp->n_data; k++)
        if (!(out[k] = new_like(cp->rtypes[k]))) {
          st = oom(ex, s);
          goto done;
        }
      goto done;
    }
    if (found) {
      st = shlo__exec_fail(ex, s, SHLO_ERUNTIME, "%s", msg);
      goto done;
    }
  }
  st = shlo__rendezvous(s, in, members, G, ex, &ops, out);
done:
  shlo__free(members);
  return st;
}

/* ---- compilation ---- */

static bool flag_attr(const shlo_op *op, const char *name) {
  const shlo_attr *a = shlo_op_attr(op, name);
  if (!a) return false;
  return a->kind == SHLO_ATTR_UNIT || (a->kind == SHLO_ATTR_BOOL && a->b);
}

/* The reduction body is one known commutative op on the two arguments. */
static shlo_op_reducer native_reducer(const shlo_op *op) {
  if (op->n_regions != 1) return SHLO_REDUCER_NONE;
  const shlo_block *b = op->regions[0];
  if (b->n_args != 2 || b->n_ops != 2) return SHLO_REDUCER_NONE;
  const shlo_op *o = b->ops[0], *ret = b->ops[1];
  if ((ret->code != SHLO_OP_RETURN && ret->code != SHLO_OP_FUNC_RETURN) ||
      ret->n_operands != 1 || o->n_results != 1 || o->n_operands != 2 ||
      ret->operands[0] != o->results[0])
    return SHLO_REDUCER_NONE;
  bool ab = o->operands[0] == b->args[0] && o->operands[1] == b->args[1];
  bool ba = o->operands[0] == b->args[1] && o->operands[1] == b->args[0];
  if (!ab && !ba) return SHLO_REDUCER_NONE;
  /* The op table's reducer column says which combine() runs the op. */
  return shlo__op_reducer((shlo_opcode)o->code);
}

static shlo_status parse_groups(shlo_compiler *cc, const shlo_op *op,
                                coll_params *cp) {
  const shlo_attr *a = shlo_op_attr(op, "replica_groups");
  int rows = 0, cols = 0;
  if (a && a->kind == SHLO_ATTR_STRUCT && a->struct_name &&
      !strcmp(a->struct_name, "replica_group_mesh_axes"))
    return shlo__cc_fail(cc, op, SHLO_EUNSUPPORTED,
                         "replica groups given by mesh axes need the mesh's "
                         "axis sizes, which this build does not read");
  if (a) {
    if (a->kind != SHLO_ATTR_DENSE || !a->dense || a->dense->rank > 2)
      return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                          "replica_groups must be a dense 2-d integer tensor");
    rows = a->dense->rank == 2 ? (int)a->dense->dims[0] : 1;
    cols = a->dense->rank == 2 ? (int)a->dense->dims[1]
           : a->dense->rank == 1 ? (int)a->dense->dims[0] : 1;
    if (a->dense->numel == 0) rows = cols = 0;
  }
  int64_t total = (int64_t)rows * cols;
  cp->ids = shlo__malloc((size_t)(total + 1) * sizeof *cp->ids);
  cp->g_off = shlo__calloc((size_t)rows + 1, sizeof *cp->g_off);
  cp->g_len = shlo__calloc((size_t)rows + 1, sizeof *cp->g_len);
  if (!cp->ids || !cp->g_off || !cp->g_len) return SHLO_ENOMEM;
  if (total && shlo_attr_i64s(a, cp->ids, (int)total) != total)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "replica_groups must hold integers");
  int n = 0;
  for (int i = 0; i < rows; i++) {
    cp->g_off[i] = n;
    for (int j = 0; j < cols; j++) {
      int64_t id = cp->ids[(int64_t)i * cols + j];
      if (id == -1) continue;
      if (id < 0)
        return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                            "replica_groups holds the negative id %lld",
                            (long long)id);
      for (int k = 0; k < n; k++)
        if (cp->ids[k] == id)
          return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                              "(C1) id %lld appears twice in replica_groups",
                              (long long)id);
      cp->ids[n++] = id;
    }
    cp->g_len[i] = n - cp->g_off[i];
    if (!cp->g_len[i])
      return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                          "replica group %d is empty", i);
  }
  cp->g_off[rows] = n;
  cp->n_groups = rows;
  return SHLO_OK;
}

static shlo_status parse_pairs(shlo_compiler *cc, const shlo_op *op,
                               coll_params *cp) {
  const shlo_attr *a = shlo_op_attr(op, "source_target_pairs");
  if (!a || a->kind != SHLO_ATTR_DENSE || !a->dense ||
      (a->dense->numel && (a->dense->rank != 2 || a->dense->dims[1] != 2)))
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "(C1) source_target_pairs must be a dense Nx2 tensor");
  int n = (int)(a->dense->numel / 2);
  cp->pairs = shlo__malloc((size_t)(2 * n + 1) * sizeof *cp->pairs);
  if (!cp->pairs) return SHLO_ENOMEM;
  if (n && shlo_attr_i64s(a, cp->pairs, 2 * n) != 2 * n)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "source_target_pairs must hold integers");
  for (int i = 0; i < n; i++) {
    if (cp->pairs[2 * i] < 0 || cp->pairs[2 * i + 1] < 0)
      return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                          "(C4) source_target_pairs holds a negative id");
    for (int j = 0; j < i; j++)
      for (int c = 0; c < 2; c++)
        if (cp->pairs[2 * i + c] == cp->pairs[2 * j + c])
          return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                              "(C%d) %s %lld appears twice in "
                              "source_target_pairs",
                              2 + c, c ? "target" : "source",
                              (long long)cp->pairs[2 * i + c]);
  }
  cp->n_pairs = n;
  return SHLO_OK;
}

static shlo_status get_dim(shlo_compiler *cc, const shlo_op *op,
                           const char *name, int rank, int64_t *out) {
  if (!shlo_attr_get_i64(shlo_op_attr(op, name), out))
    return shlo__cc_fail(cc, op, SHLO_EVERIFY, "needs an integer '%s'", name);
  if (*out < 0 || *out >= rank)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "%s %lld is out of range for rank %d", name,
                        (long long)*out, rank);
  return SHLO_OK;
}

/* How process groups are formed (spec "collective ops"): from the channel
 * handle (or legacy channel_id) and use_global_device_ids. */
static shlo_status coll_strategy(shlo_compiler *cc, const shlo_op *op,
                                 coll_params *cp) {
  int64_t channel = 0;
  const shlo_attr *ch = shlo_op_attr(op, "channel_handle");
  if (ch && ch->kind == SHLO_ATTR_STRUCT)
    shlo_attr_get_i64(shlo_attr_field(ch, "handle"), &channel);
  else
    shlo_attr_get_i64(shlo_op_attr(op, "channel_id"), &channel);
  bool global = flag_attr(op, "use_global_device_ids");
  switch (op->code) {
  case SHLO_OP_ALL_GATHER: case SHLO_OP_ALL_REDUCE:
  case SHLO_OP_REDUCE_SCATTER: case SHLO_OP_COLLECTIVE_REDUCE:
    if (global && channel <= 0)
      return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                          "use_global_device_ids needs a channel_handle with "
                          "a positive handle");
    cp->strat = channel <= 0 ? CROSS_REPLICA
                : global     ? FLATTENED_IDS
                             : CROSS_REPLICA_AND_PARTITION;
    break;
  default:
    cp->strat = channel <= 0 ? CROSS_REPLICA : CROSS_PARTITION;
    break;
  }
  return SHLO_OK;
}

/* The data operands (all but a dynamic root) and their results: one
 * result each, static tensors of the same element type and rank.  Fills
 * cp->n_data and cp->rtypes and allocates cp->reducer. */
static shlo_status coll_data_types(shlo_compiler *cc, const shlo_op *op,
                                   coll_params *cp) {
  cp->n_data = op->n_operands - (cp->dynamic_root ? 1 : 0);
  if (cp->n_data < 1 || op->n_results != cp->n_data)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "needs one result per data operand (%d operands, %d "
                        "results)",
                        op->n_operands, op->n_results);
  if (cp->dynamic_root) {
    const shlo_type *rt = shlo__cc_operand_type(cc, op, cp->n_data);
    if (rt->kind != SHLO_TYPE_TENSOR || !shlo_elem_is_int(rt->elem) ||
        shlo_type_numel(rt) < 1)
      return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                          "has_dynamic_root needs an integer root tensor as "
                          "the last operand");
  }
  cp->rtypes = shlo__calloc((size_t)cp->n_data + 1, sizeof *cp->rtypes);
  cp->reducer = shlo__calloc((size_t)cp->n_data + 1, sizeof *cp->reducer);
  if (!cp->rtypes || !cp->reducer) return SHLO_ENOMEM;
  for (int k = 0; k < cp->n_data; k++) {
    const shlo_type *t = shlo__cc_operand_type(cc, op, k);
    const shlo_type *rt = shlo__cc_result_type(cc, op, k);
    if (t->kind != SHLO_TYPE_TENSOR || !shlo_type_is_static(t) ||
        rt->kind != SHLO_TYPE_TENSOR)
      return shlo__cc_fail(cc, op, SHLO_EUNSUPPORTED,
                          "operand %d must be a static tensor", k);
    if (t->elem != rt->elem || t->rank != rt->rank)
      return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                          "result %d must have the element type and rank of "
                          "its operand",
                          k);
    cp->rtypes[k] = rt;
  }
  return SHLO_OK;
}

/* all_gather / reduce_scatter: each result is its operand grown (or
 * shrunk) along cp->dim by a whole factor. */
static shlo_status coll_check_gather_scatter(shlo_compiler *cc,
                                             const shlo_op *op,
                                             coll_params *cp, int rank) {
  bool gather = op->code == SHLO_OP_ALL_GATHER;
  shlo_status st = get_dim(cc, op, gather ? "all_gather_dim"
                                          : "scatter_dimension",
                           rank, &cp->dim);
  if (st) return st;
  for (int k = 0; k < cp->n_data; k++) {
    const shlo_type *t = shlo__cc_operand_type(cc, op, k), *rt = cp->rtypes[k];
    if (cp->dim >= t->rank)
      return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                          "dimension %lld is out of range for operand %d",
                          (long long)cp->dim, k);
    for (int i = 0; i < t->rank; i++)
      if (i != cp->dim && t->dims[i] != rt->dims[i])
        return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                            "result %d differs from its operand outside "
                            "dimension %lld",
                            k, (long long)cp->dim);
    const shlo_type *big = gather ? rt : t, *small = gather ? t : rt;
    if (small->dims[cp->dim] == 0 ||
        big->dims[cp->dim] % small->dims[cp->dim])
      return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                          "dimension %lld of operand %d and result %d do "
                          "not divide",
                          (long long)cp->dim, k, k);
  }
  return SHLO_OK;
}

/* all_to_all: each result is its operand split split_count ways along
 * split_dimension and concatenated along concat_dimension. */
static shlo_status coll_check_all_to_all(shlo_compiler *cc, const shlo_op *op,
                                         coll_params *cp, int rank) {
  shlo_status st;
  if ((st = get_dim(cc, op, "split_dimension", rank, &cp->split_dim)) ||
      (st = get_dim(cc, op, "concat_dimension", rank, &cp->concat_dim)))
    return st;
  if (!shlo_attr_get_i64(shlo_op_attr(op, "split_count"), &cp->split_count) ||
      cp->split_count < 1)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "needs a positive split_count");
  for (int k = 0; k < cp->n_data; k++) {
    const shlo_type *t = shlo__cc_operand_type(cc, op, k);
    shlo_type want = *t;
    if (t->dims[cp->split_dim] % cp->split_count)
      return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                          "(C2) dimension %lld of operand %d is not a "
                          "multiple of split_count %lld",
                          (long long)cp->split_dim, k,
                          (long long)cp->split_count);
    want.dims[cp->split_dim] /= cp->split_count;
    want.dims[cp->concat_dim] *= cp->split_count;
    if (memcmp(want.dims, cp->rtypes[k]->dims,
               (size_t)t->rank * sizeof want.dims[0]))
      return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                          "result %d has the wrong shape for split_count "
                          "%lld",
                          k, (long long)cp->split_count);
  }
  return SHLO_OK;
}

/* The result shapes each op asks for; rank is the first operand's. */
static shlo_status coll_check_shapes(shlo_compiler *cc, const shlo_op *op,
                                     coll_params *cp, int rank) {
  switch (op->code) {
  case SHLO_OP_ALL_GATHER:
  case SHLO_OP_REDUCE_SCATTER:
    return coll_check_gather_scatter(cc, op, cp, rank);
  case SHLO_OP_ALL_TO_ALL:
    return coll_check_all_to_all(cc, op, cp, rank);
  default:
    for (int k = 0; k < cp->n_data; k++)
      if (!shlo_type_equal(shlo__cc_operand_type(cc, op, k), cp->rtypes[k]))
        return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                            "result %d must have its operand's type", k);
    return SHLO_OK;
  }
}

/* all_reduce, reduce_scatter, collective_reduce: compile the reduction
 * body, and use a native reducer per operand where the body is one. */
static shlo_status coll_reducer(shlo_compiler *cc, const shlo_op *op,
                                shlo_step *step, coll_params *cp) {
  /* cross-replica-sum is all_reduce with an add body: no region, the
   * native adder (for the types it has one) */
  if (op->code == SHLO_OP_CROSS_REPLICA_SUM) {
    const shlo_type *t = shlo__cc_operand_type(cc, op, 0);
    if (t->quant || !native_ok(t->elem, SHLO_REDUCER_SUM))
      return shlo__cc_fail(cc, op, SHLO_EUNSUPPORTED,
                          "element type %s is not supported",
                          shlo_elem_name(t->elem));
    cp->reducer[0] = SHLO_REDUCER_SUM;
    return SHLO_OK;
  }
  if (op->n_regions != 1 || op->regions[0]->n_args != 2)
    return shlo__cc_fail(cc, op, SHLO_EUNSUPPORTED,
                        "needs a reduction body of two scalar arguments");
  shlo_status st = shlo__cc_compile_regions(cc, op, step);
  if (st) return st;
  if (step->plans[0]->n_results != 1)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "the reduction body must return one value");
  const shlo_type *at = shlo__cc_value_type(cc, op->regions[0]->args[0]);
  shlo_op_reducer nat = native_reducer(op);
  for (int k = 0; k < cp->n_data; k++) {
    const shlo_type *t = shlo__cc_operand_type(cc, op, k);
    if (at->kind != SHLO_TYPE_TENSOR || at->rank != 0 || at->elem != t->elem)
      return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                          "the reduction body must take tensor<%s> "
                          "scalars",
                          shlo_elem_name(t->elem));
    cp->reducer[k] = nat && !t->quant && native_ok(t->elem, (int)nat)
                         ? (int)nat
                         : SHLO_REDUCER_NONE;
  }
  return SHLO_OK;
}

shlo_status shlo__compile_collective(shlo_compiler *cc, const shlo_op *op,
                                     shlo_step *step) {
  coll_params *cp = shlo__calloc(1, sizeof *cp);
  if (!cp) return SHLO_ENOMEM;
  step->params = cp;
  step->free_params = coll_free;
  cp->code = op->code;
  cp->dynamic_root = op->code == SHLO_OP_COLLECTIVE_BROADCAST &&
                     flag_attr(op, "has_dynamic_root");
  shlo_status st = coll_strategy(cc, op, cp);
  if (st) return st;
  st = op->code == SHLO_OP_COLLECTIVE_PERMUTE ? parse_pairs(cc, op, cp)
                                              : parse_groups(cc, op, cp);
  if (st) return st;
  if ((st = coll_data_types(cc, op, cp))) return st;
  int rank = shlo__cc_operand_type(cc, op, 0)->rank;
  if ((st = coll_check_shapes(cc, op, cp, rank))) return st;
  bool reduces = op->code == SHLO_OP_ALL_REDUCE ||
                 op->code == SHLO_OP_CROSS_REPLICA_SUM ||
                 op->code == SHLO_OP_REDUCE_SCATTER ||
                 op->code == SHLO_OP_COLLECTIVE_REDUCE;
  if (reduces && (st = coll_reducer(cc, op, step, cp))) return st;
  step->fn = k_collective;
  return SHLO_OK;
}

