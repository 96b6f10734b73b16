/* gather, dynamic_gather and scatter: moving slices of a tensor picked by
 * a tensor of start indices (spec: gather, scatter; dynamic_gather is
 * gather with its slice sizes given as a third operand).
 *
 * Compile functions turn the dimension numbers into loop geometry kept in
 * the step's params.  The gather kernel runs in two passes:
 *
 *   1. for every batch position (every start_indices index with the index
 *      vector dimension left out) read the start index vector, clamp it so
 *      the slice stays inside the operand, add the batching dimensions, and
 *      keep the element offset of the slice's first element;
 *   2. walk the result row-major as a box whose dimensions step either the
 *      batch position (batch dims) or the operand offset (offset dims).
 *      Extent-1 dimensions are dropped and neighbours that are contiguous in
 *      both are merged, so when the offset dims are trailing the innermost
 *      loop is one memcpy per slice row.
 *
 * The scatter kernel visits each scatter position once, clips its update
 * window to the bounds of the inputs (elements outside are skipped, as the
 * spec says) and applies the update computation along the window's
 * innermost dimension: a memcpy when the body just returns the update, a
 * native loop per element type when it is one known binary op, and the
 * compiled region per element otherwise.
 *
 * Elements move by size whatever their type.  Index tensors may have any
 * integer type: a loader for it is chosen at compile time. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "complex_mul.h"
#include "floatfmt.h"
#include "ops.h"

#define MAXR SHLO_MAX_RANK

/* ---- index loading ---- */

/* Reads element i of an integer tensor at p as int64 (ui64 values past
 * INT64_MAX saturate, which is out of bounds for every dimension anyway). */
typedef int64_t (*idx_load_fn)(const void *p, int64_t i);

#define IDX_LOADER(NAME, T)                                      \
  static int64_t NAME(const void *p, int64_t i) {                \
    return (int64_t)((const T *)p)[i];                           \
  }
IDX_LOADER(ld_s8, int8_t)
IDX_LOADER(ld_s16, int16_t)
IDX_LOADER(ld_s32, int32_t)
IDX_LOADER(ld_s64, int64_t)
IDX_LOADER(ld_u8, uint8_t)
IDX_LOADER(ld_u16, uint16_t)
IDX_LOADER(ld_u32, uint32_t)
#undef IDX_LOADER

static int64_t ld_u64(const void *p, int64_t i) {
  uint64_t v = ((const uint64_t *)p)[i];
  return v > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)v;
}

static idx_load_fn idx_loader(shlo_elem_type t) {
  switch (t) {
  case SHLO_SI2: case SHLO_SI4: case SHLO_SI8: return ld_s8;
  case SHLO_SI16: return ld_s16;
  case SHLO_SI32: return ld_s32;
  case SHLO_SI64: return ld_s64;
  case SHLO_I1: case SHLO_UI2: case SHLO_UI4: case SHLO_UI8: return ld_u8;
  case SHLO_UI16: return ld_u16;
  case SHLO_UI32: return ld_u32;
  case SHLO_UI64: return ld_u64;
  default: return NULL;
  }
}

/* ---- dimension numbers ---- */

/* Field `name` of the dimension-numbers struct dn as a list of at most
 * MAXR integers; a missing field is the empty list. */
static shlo_status read_list(shlo_compiler *cc, const shlo_op *op,
                             const shlo_attr *dn, const char *name,
                             int64_t *out, int *n) {
  const shlo_attr *f = shlo_attr_field(dn, name);
  *n = 0;
  if (!f) return SHLO_OK;
  int k = shlo_attr_i64s(f, out, MAXR);
  if (k < 0 || k > MAXR)
    return shlo_cc_fail(cc, op, SHLO_EVERIFY,
                        "'%s' must be a list of at most %d integers", name,
                        MAXR);
  *n = k;
  return SHLO_OK;
}

static bool in_list(const int64_t *l, int n, int64_t v) {
  for (int i = 0; i < n; i++)
    if (l[i] == v) return true;
  return false;
}

/* Every entry in [0, hi), no entry twice, and (if sorted) ascending. */
static bool list_ok(const int64_t *l, int n, int64_t hi, bool sorted) {
  for (int i = 0; i < n; i++) {
    if (l[i] < 0 || l[i] >= hi) return false;
    for (int j = 0; j < i; j++)
      if (l[j] == l[i] || (sorted && l[j] > l[i])) return false;
  }
  return true;
}

/* ---- gather ---- */

typedef struct gather_params {
  shlo_elem_type elem;
  size_t esz;
  idx_load_fn load;
  bool dynamic;                /* dynamic_gather: check in[2] at run time */
  int rank;                    /* operand rank */
  int64_t odims[MAXR];
  int64_t slice[MAXR];         /* slice sizes (derived from the result) */
  bool unit[MAXR];             /* collapsed or batching dim: slice <= 1 */
  int n_map;                   /* start_index_map */
  int64_t map[MAXR];
  int64_t map_str[MAXR];       /* operand stride of map[k] */
  int64_t hi[MAXR];            /* clamp bound of index k (static slices) */
  int64_t iv_str;              /* start_indices stride of index_vector_dim */
  int n_bd;                    /* start_indices dims other than ivd */
  int64_t bd_cnt[MAXR], bd_istr[MAXR];
  int64_t n_batch;
  int n_bat;                   /* batching dims */
  int bat_pos[MAXR];           /* position in the batch index */
  int64_t bat_ostr[MAXR];      /* operand stride of the batching dim */
  int n_loop;                  /* result walk after merging */
  int64_t cnt[MAXR], bstr[MAXR], lstr[MAXR];
  bool contig;                 /* innermost loop is one memcpy */
  int out_rank;
  int64_t out_dims[MAXR];
} gather_params;

/* Clamp bounds for the start indices from the slice sizes sz. */
static void gather_bounds(const gather_params *p, const int64_t *sz,
                          int64_t *hi) {
  for (int k = 0; k < p->n_map; k++) {
    int64_t d = p->map[k];
    int64_t h = p->odims[d] - sz[d];
    /* A collapsed dim of slice size 0 still reads one element. */
    if (h > p->odims[d] - 1) h = p->odims[d] - 1;
    hi[k] = h < 0 ? 0 : h;
  }
}

/* Copy n elements whose source offsets are base[i*bs] + o + i*ls. */
static void gather_row(char *dst, const char *src, const int64_t *base,
                       int64_t bs, int64_t o, int64_t ls, int64_t n,
                       size_t esz) {
#define GATHER_ROW(T)                                                  \
  {                                                                    \
    T *d = (T *)(void *)dst;                                           \
    const T *sp = (const T *)(const void *)src;                        \
    if (bs)                                                            \
      for (int64_t i = 0; i < n; i++) d[i] = sp[base[i * bs] + o];     \
    else                                                               \
      for (int64_t i = 0; i < n; i++) d[i] = sp[base[0] + o + i * ls]; \
    return;                                                            \
  }
  switch (esz) {
  case 1: GATHER_ROW(uint8_t)
  case 2: GATHER_ROW(uint16_t)
  case 4: GATHER_ROW(uint32_t)
  case 8: GATHER_ROW(uint64_t)
  default:
    for (int64_t i = 0; i < n; i++)
      memcpy(dst + (size_t)i * esz,
             src + (size_t)(base[i * bs] + o + i * ls) * esz, esz);
    return;
  }
#undef GATHER_ROW
}

/* dynamic_gather: the slice sizes operand must agree with the result type
 * (which fixed every non-unit slice size at compile time). */
static shlo_status gather_dynamic_sizes(const shlo_step *s,
                                        const gather_params *p,
                                        const shlo_value *v, int64_t *hi,
                                        shlo_exec *ex) {
  int64_t sz[MAXR];
  if (v->kind != SHLO_TYPE_TENSOR || v->numel != p->rank ||
      !shlo_elem_is_int(v->elem))
    return shlo_exec_fail(ex, s, SHLO_ERUNTIME,
                          "slice_sizes must be %d integers", p->rank);
  for (int d = 0; d < p->rank; d++) {
    sz[d] = shlo_tensor_get_i64(v, d);
    bool ok = p->unit[d] ? (sz[d] == 0 || sz[d] == 1) : sz[d] == p->slice[d];
    if (!ok)
      return shlo_exec_fail(ex, s, SHLO_ERUNTIME,
                            "slice_sizes[%d] = %lld does not match the "
                            "result type (expected %lld)",
                            d, (long long)sz[d], (long long)p->slice[d]);
  }
  gather_bounds(p, sz, hi);
  return SHLO_OK;
}

static shlo_status k_gather(const shlo_step *s, shlo_value *const *in,
                            shlo_value **out, shlo_exec *ex) {
  const gather_params *p = s->params;
  int64_t hi[MAXR];
  memcpy(hi, p->hi, sizeof hi);
  if (p->dynamic) {
    shlo_status st = gather_dynamic_sizes(s, p, in[2], hi, ex);
    if (st) return st;
  }
  shlo_value *res = shlo_tensor_new(p->elem, p->out_rank, p->out_dims);
  if (!res) return shlo_exec_fail(ex, s, SHLO_ENOMEM, "out of memory");
  /* An empty operand leaves nothing to read: only unit dims of slice
   * size 0 get here with a non-empty result; it stays zero. */
  if (res->numel == 0 || in[0]->numel == 0) {
    out[0] = res;
    return SHLO_OK;
  }
  int64_t *base = malloc((size_t)p->n_batch * sizeof *base);
  if (!base) {
    shlo_value_unref(res);
    return shlo_exec_fail(ex, s, SHLO_ENOMEM, "out of memory");
  }

  /* Pass 1: operand offset of each slice. */
  const void *idx = in[1]->data;
  int64_t bi[MAXR] = {0}, ioff = 0;
  for (int64_t b = 0; b < p->n_batch; b++) {
    int64_t o = 0;
    for (int k = 0; k < p->n_map; k++) {
      int64_t v = p->load(idx, ioff + k * p->iv_str);
      v = v < 0 ? 0 : v > hi[k] ? hi[k] : v;
      o += v * p->map_str[k];
    }
    for (int i = 0; i < p->n_bat; i++) o += bi[p->bat_pos[i]] * p->bat_ostr[i];
    base[b] = o;
    for (int j = p->n_bd - 1; j >= 0; j--) {
      ioff += p->bd_istr[j];
      if (++bi[j] < p->bd_cnt[j]) break;
      ioff -= bi[j] * p->bd_istr[j];
      bi[j] = 0;
    }
  }

  /* Pass 2: walk the result. */
  char *dst = res->data;
  const char *src = in[0]->data;
  size_t esz = p->esz;
  shlo_status st = SHLO_OK;
  int nl = p->n_loop;
  if (nl == 0) {
    memcpy(dst, src + (size_t)base[0] * esz, esz);
  } else {
    int64_t inner = p->cnt[nl - 1], ib = p->bstr[nl - 1],
            il = p->lstr[nl - 1];
    int64_t outer = res->numel / inner;
    int64_t ctr[MAXR] = {0}, cb = 0, co = 0;
    for (int64_t t = 0; t < outer; t++) {
      if ((t & 1023) == 1023 && shlo_exec_should_stop(ex)) {
        st = shlo_exec_fail(ex, s, SHLO_ETIMEOUT,
                            "stopped: the execution was canceled or "
                            "exceeded its deadline");
        break;
      }
      if (p->contig)
        memcpy(dst, src + (size_t)(base[cb] + co) * esz,
               (size_t)inner * esz);
      else
        gather_row(dst, src, base + cb, ib, co, il, inner, esz);
      dst += (size_t)inner * esz;
      for (int j = nl - 2; j >= 0; j--) {
        cb += p->bstr[j];
        co += p->lstr[j];
        if (++ctr[j] < p->cnt[j]) break;
        cb -= ctr[j] * p->bstr[j];
        co -= ctr[j] * p->lstr[j];
        ctr[j] = 0;
      }
    }
  }
  free(base);
  if (st) {
    shlo_value_unref(res);
    return st;
  }
  out[0] = res;
  return SHLO_OK;
}

/* gather / dynamic_gather: result[result_index] = operand[operand_index]
 * where, for the result's batch dims (those not in offset_dims) and
 * offset dims,
 *   start     = start_indices[batch index, : at index_vector_dim],
 *   operand_index = clamp(start mapped by start_index_map, 0,
 *                         dim - slice_sizes)
 *                 + batch index at operand_batching_dims
 *                 + offset index with 0 at collapsed and batching dims.
 * dynamic_gather takes slice_sizes as a third operand; the result type
 * fixes them all but the collapsed/batching ones (0 or 1), so they are
 * derived from it here and checked against the operand at run time. */
shlo_status shlo_compile_gather(shlo_compiler *cc, const shlo_op *op,
                                shlo_step *step) {
  bool dynamic = op->code == SHLO_OP_DYNAMIC_GATHER;
  if (op->n_operands != (dynamic ? 3 : 2) || op->n_results != 1)
    return shlo_cc_fail(cc, op, SHLO_EVERIFY,
                        "needs %s and one result",
                        dynamic ? "operand, start_indices and slice_sizes"
                                : "operand and start_indices");
  const shlo_type *ot = shlo_cc_operand_type(cc, op, 0);
  const shlo_type *it = shlo_cc_operand_type(cc, op, 1);
  const shlo_type *rt = shlo_cc_result_type(cc, op, 0);
  if (ot->kind != SHLO_TYPE_TENSOR || it->kind != SHLO_TYPE_TENSOR ||
      rt->kind != SHLO_TYPE_TENSOR)
    return shlo_cc_fail(cc, op, SHLO_EVERIFY, "operands must be tensors");
  if (!shlo_type_is_static(ot) || !shlo_type_is_static(it) ||
      !shlo_type_is_static(rt))
    return shlo_cc_fail(cc, op, SHLO_EUNSUPPORTED,
                        "dynamic shapes are not supported");
  idx_load_fn load = idx_loader(it->elem);
  if (!load || it->quant)
    return shlo_cc_fail(cc, op, SHLO_EVERIFY,
                        "start_indices must have an integer element type");
  if (rt->elem != ot->elem)
    return shlo_cc_fail(cc, op, SHLO_EVERIFY,
                        "(C23) result and operand element types differ");

  const shlo_attr *dn = shlo_op_attr(op, "dimension_numbers");
  if (!dn || dn->kind != SHLO_ATTR_STRUCT)
    return shlo_cc_fail(cc, op, SHLO_EVERIFY,
                        "needs a #stablehlo.gather 'dimension_numbers'");
  int64_t offd[MAXR], coll[MAXR], obat[MAXR], sbat[MAXR], map[MAXR],
      ss[MAXR];
  int n_off, n_coll, n_obat, n_sbat, n_map;
  shlo_status st;
  if ((st = read_list(cc, op, dn, "offset_dims", offd, &n_off)) ||
      (st = read_list(cc, op, dn, "collapsed_slice_dims", coll, &n_coll)) ||
      (st = read_list(cc, op, dn, "operand_batching_dims", obat, &n_obat)) ||
      (st = read_list(cc, op, dn, "start_indices_batching_dims", sbat,
                      &n_sbat)) ||
      (st = read_list(cc, op, dn, "start_index_map", map, &n_map)))
    return st;
  int64_t ivd = 0;
  const shlo_attr *ivd_a = shlo_attr_field(dn, "index_vector_dim");
  if (ivd_a && !shlo_attr_get_i64(ivd_a, &ivd))
    return shlo_cc_fail(cc, op, SHLO_EVERIFY,
                        "index_vector_dim must be an integer");

  int orank = ot->rank, irank = it->rank, rrank = rt->rank;
  if (ivd < 0 || ivd > irank)
    return shlo_cc_fail(cc, op, SHLO_EVERIFY,
                        "index_vector_dim %lld is out of range [0, %d]",
                        (long long)ivd, irank);
  int64_t iv_len = ivd < irank ? it->dims[ivd] : 1;
  if (n_map != iv_len)
    return shlo_cc_fail(cc, op, SHLO_EVERIFY,
                        "start_index_map has %d entries but the index "
                        "vector has %lld",
                        n_map, (long long)iv_len);
  if (orank != n_off + n_coll + n_obat)
    return shlo_cc_fail(cc, op, SHLO_EVERIFY,
                        "operand rank %d is not size(offset_dims) + "
                        "size(collapsed_slice_dims) + "
                        "size(operand_batching_dims)",
                        orank);
  int n_bd = irank - (ivd < irank ? 1 : 0);
  if (rrank != n_off + n_bd)
    return shlo_cc_fail(cc, op, SHLO_EVERIFY,
                        "result rank %d is not %d offset dims + %d batch "
                        "dims",
                        rrank, n_off, n_bd);
  if (!list_ok(offd, n_off, rrank, true))
    return shlo_cc_fail(cc, op, SHLO_EVERIFY,
                        "offset_dims must be sorted, unique and in range");
  if (!list_ok(coll, n_coll, orank, true) ||
      !list_ok(obat, n_obat, orank, true))
    return shlo_cc_fail(cc, op, SHLO_EVERIFY,
                        "collapsed_slice_dims and operand_batching_dims must "
                        "be sorted and in range");
  for (int i = 0; i < n_obat; i++)
    if (in_list(coll, n_coll, obat[i]))
      return shlo_cc_fail(cc, op, SHLO_EVERIFY,
                          "dim %lld is both collapsed and a batching dim",
                          (long long)obat[i]);
  if (!list_ok(map, n_map, orank, false))
    return shlo_cc_fail(cc, op, SHLO_EVERIFY,
                        "start_index_map must be unique and in range");
  for (int i = 0; i < n_map; i++)
    if (in_list(obat, n_obat, map[i]))
      return shlo_cc_fail(cc, op, SHLO_EVERIFY,
                          "start_index_map and operand_batching_dims share "
                          "dim %lld",
                          (long long)map[i]);
  if (n_sbat != n_obat || !list_ok(sbat, n_sbat, irank, false) ||
      in_list(sbat, n_sbat, ivd))
    return shlo_cc_fail(cc, op, SHLO_EVERIFY,
                        "start_indices_batching_dims must be unique, in "
                        "range, not index_vector_dim, and as many as "
                        "operand_batching_dims");
  for (int i = 0; i < n_obat; i++)
    if (ot->dims[obat[i]] != it->dims[sbat[i]])
      return shlo_cc_fail(cc, op, SHLO_EVERIFY,
                          "batching dims %lld of operand and %lld of "
                          "start_indices differ in size",
                          (long long)obat[i], (long long)sbat[i]);

  gather_params *p = shlo_params_alloc(step, sizeof *p);
  if (!p) return SHLO_ENOMEM;
  p->elem = ot->elem;
  p->esz = shlo_elem_size(ot->elem);
  p->load = load;
  p->dynamic = dynamic;
  p->rank = orank;
  p->n_map = n_map;
  p->out_rank = rrank;
  int64_t ostr[MAXR], istr[MAXR];
  shlo_strides(orank, ot->dims, ostr);
  shlo_strides(irank, it->dims, istr);
  for (int d = 0; d < orank; d++) p->odims[d] = ot->dims[d];
  for (int d = 0; d < rrank; d++) p->out_dims[d] = rt->dims[d];

  for (int k = 0; k < n_map; k++) {
    p->map[k] = map[k];
    p->map_str[k] = ostr[map[k]];
  }

  /* Slice sizes: the offset dims of the result give the window dims'. */
  int window_dim[MAXR]; /* k-th offset dim -> operand dim */
  for (int d = 0, k = 0; d < orank; d++) {
    p->unit[d] = in_list(coll, n_coll, d) || in_list(obat, n_obat, d);
    if (p->unit[d]) {
      p->slice[d] = 1;
    } else {
      window_dim[k] = d;
      p->slice[d] = rt->dims[offd[k]];
      k++;
    }
  }
  if (!dynamic) {
    int n = shlo_attr_i64s(shlo_op_attr(op, "slice_sizes"), ss, MAXR);
    if (n != orank)
      return shlo_cc_fail(cc, op, SHLO_EVERIFY,
                          "slice_sizes must have one entry per operand dim");
    for (int d = 0; d < orank; d++) {
      if (ss[d] < 0 || ss[d] > ot->dims[d])
        return shlo_cc_fail(cc, op, SHLO_EVERIFY,
                            "slice_sizes[%d] = %lld is outside [0, %lld]", d,
                            (long long)ss[d], (long long)ot->dims[d]);
      if (p->unit[d] ? ss[d] > 1 : ss[d] != p->slice[d])
        return shlo_cc_fail(cc, op, SHLO_EVERIFY,
                            "slice_sizes[%d] = %lld does not match the "
                            "result type",
                            d, (long long)ss[d]);
    }
    gather_bounds(p, ss, p->hi);
  } else {
    for (int d = 0; d < orank; d++)
      if (p->slice[d] > ot->dims[d])
        return shlo_cc_fail(cc, op, SHLO_EVERIFY,
                            "result implies slice size %lld > dim %d of "
                            "the operand",
                            (long long)p->slice[d], d);
    gather_bounds(p, p->slice, p->hi);
  }

  p->iv_str = ivd < irank ? istr[ivd] : 0;

  /* Batch dims: start_indices dims other than ivd, in order; they are the
   * result dims not in offset_dims, in the same order. */
  int64_t blin[MAXR]; /* batch linear stride */
  int64_t bdim_of[MAXR];
  for (int d = 0, j = 0; d < irank; d++) {
    if (d == ivd) continue;
    bdim_of[j] = d;
    p->bd_cnt[j] = it->dims[d];
    p->bd_istr[j] = istr[d];
    j++;
  }
  p->n_bd = n_bd;
  p->n_batch = 1;
  for (int j = n_bd - 1; j >= 0; j--) {
    blin[j] = p->n_batch;
    p->n_batch *= p->bd_cnt[j];
  }
  p->n_bat = n_obat;
  for (int i = 0; i < n_obat; i++) {
    p->bat_pos[i] = (int)(sbat[i] < ivd ? sbat[i] : sbat[i] - 1);
    p->bat_ostr[i] = ostr[obat[i]];
  }

  /* The result walk, checking the result shape on the way. */
  int64_t cnt[MAXR], bs[MAXR], ls[MAXR];
  for (int r = 0, k = 0, j = 0; r < rrank; r++) {
    if (k < n_off && offd[k] == r) {
      int d = window_dim[k++];
      cnt[r] = rt->dims[r];
      bs[r] = 0;
      ls[r] = ostr[d];
    } else {
      if (rt->dims[r] != it->dims[bdim_of[j]])
        return shlo_cc_fail(cc, op, SHLO_EVERIFY,
                            "result dim %d is %lld but start_indices dim "
                            "%lld is %lld",
                            r, (long long)rt->dims[r],
                            (long long)bdim_of[j],
                            (long long)it->dims[bdim_of[j]]);
      cnt[r] = rt->dims[r];
      bs[r] = blin[j++];
      ls[r] = 0;
    }
  }
  int nl = 0;
  for (int r = 0; r < rrank; r++) {
    if (cnt[r] == 1) continue;
    if (nl > 0 && p->bstr[nl - 1] == bs[r] * cnt[r] &&
        p->lstr[nl - 1] == ls[r] * cnt[r]) {
      p->cnt[nl - 1] *= cnt[r];
      p->bstr[nl - 1] = bs[r];
      p->lstr[nl - 1] = ls[r];
      continue;
    }
    p->cnt[nl] = cnt[r];
    p->bstr[nl] = bs[r];
    p->lstr[nl] = ls[r];
    nl++;
  }
  p->n_loop = nl;
  p->contig = nl > 0 && p->bstr[nl - 1] == 0 && p->lstr[nl - 1] == 1;
  step->fn = k_gather;
  return SHLO_OK;
}

/* ---- scatter: native update computations ---- */

/* Apply the body to n elements: d[i*ds] = body(d[i*ds], u[i*us]) (strides
 * in elements).  et is the element type (for the generic flavours). */
typedef void (*combine_fn)(char *d, const char *u, int64_t n, int64_t ds,
                           int64_t us, shlo_elem_type et);

/* Integers wrap at their width: arithmetic in uint64_t, truncated. */
#define IC_add(T, U, a, b) (T)(U)((uint64_t)(U)(a) + (uint64_t)(U)(b))
#define IC_mul(T, U, a, b) (T)(U)((uint64_t)(U)(a) * (uint64_t)(U)(b))
#define IC_max(T, U, a, b) ((a) > (b) ? (a) : (b))
#define IC_min(T, U, a, b) ((a) < (b) ? (a) : (b))
#define IC_and(T, U, a, b) (T)((a) & (b))
#define IC_or(T, U, a, b) (T)((a) | (b))
#define IC_xor(T, U, a, b) (T)((a) ^ (b))
#define IC_OPS(X) X(add) X(mul) X(max) X(min) X(and) X(or) X(xor)
#define IC_TYPES(X, OP)                                            \
  X(OP, s8, int8_t, uint8_t) X(OP, s16, int16_t, uint16_t)         \
  X(OP, s32, int32_t, uint32_t) X(OP, s64, int64_t, uint64_t)      \
  X(OP, u8, uint8_t, uint8_t) X(OP, u16, uint16_t, uint16_t)       \
  X(OP, u32, uint32_t, uint32_t) X(OP, u64, uint64_t, uint64_t)
enum { ICT_s8, ICT_s16, ICT_s32, ICT_s64, ICT_u8, ICT_u16, ICT_u32, ICT_u64,
       ICT_COUNT };
enum { ICO_add, ICO_mul, ICO_max, ICO_min, ICO_and, ICO_or, ICO_xor,
       ICO_COUNT };

#define DEF_IC(OP, TN, T, U)                                                \
  static void ic_##OP##_##TN(char *d_, const char *u_, int64_t n,           \
                             int64_t ds, int64_t us, shlo_elem_type et) {   \
    (void)et;                                                               \
    T *d = (T *)(void *)d_;                                                 \
    const T *u = (const T *)(const void *)u_;                               \
    for (int64_t i = 0; i < n; i++) {                                       \
      T a = d[i * ds], b = u[i * us];                                       \
      d[i * ds] = IC_##OP(T, U, a, b);                                      \
    }                                                                       \
  }
#define DEF_IC_ALL(OP) IC_TYPES(DEF_IC, OP)
IC_OPS(DEF_IC_ALL)
#define IC_CELL(OP, TN, T, U) ic_##OP##_##TN,
#define IC_ROW(OP) [ICO_##OP] = {IC_TYPES(IC_CELL, OP)},
static const combine_fn ic_tab[ICO_COUNT][ICT_COUNT] = {IC_OPS(IC_ROW)};

/* Integers narrower than their byte (i2, i4, ui2, ui4): wrap to the
 * width after each operation. */
#define DEF_ICN(OP)                                                         \
  static void icn_##OP(char *d_, const char *u_, int64_t n, int64_t ds,     \
                       int64_t us, shlo_elem_type et) {                     \
    bool sg = shlo_elem_class_of(et) == SHLO_CLASS_SINT;                    \
    uint8_t *d = (uint8_t *)d_;                                             \
    const uint8_t *u = (const uint8_t *)u_;                                 \
    for (int64_t i = 0; i < n; i++) {                                       \
      int64_t a = sg ? (int8_t)d[i * ds] : d[i * ds];                       \
      int64_t b = sg ? (int8_t)u[i * us] : u[i * us];                       \
      int64_t r = IC_##OP(int64_t, uint64_t, a, b);                         \
      d[i * ds] = (uint8_t)shlo_int_wrap(et, r);                            \
    }                                                                       \
  }
IC_OPS(DEF_ICN)
#define ICN_ROW(OP) [ICO_##OP] = icn_##OP,
static const combine_fn icn_tab[ICO_COUNT] = {IC_OPS(ICN_ROW)};

/* Floats: maximum/minimum propagate NaN and order -0 below +0, as the
 * elementwise ops do. */
#define FC_add(a, b) ((a) + (b))
#define FC_mul(a, b) ((a) * (b))
#define FC_max(a, b)                                                    \
  ((a) != (a) ? (a) : (b) != (b) ? (b)                                  \
   : (a) == (b) ? (signbit(a) ? (b) : (a)) : (a) > (b) ? (a) : (b))
#define FC_min(a, b)                                                    \
  ((a) != (a) ? (a) : (b) != (b) ? (b)                                  \
   : (a) == (b) ? (signbit(a) ? (a) : (b)) : (a) < (b) ? (a) : (b))
#define FC_OPS(X) X(add) X(mul) X(max) X(min)

#define DEF_FC(OP)                                                          \
  static void fc_##OP##_f32(char *d_, const char *u_, int64_t n,            \
                            int64_t ds, int64_t us, shlo_elem_type et) {    \
    (void)et;                                                               \
    float *d = (float *)(void *)d_;                                         \
    const float *u = (const float *)(const void *)u_;                       \
    for (int64_t i = 0; i < n; i++) {                                       \
      float a = d[i * ds], b = u[i * us];                                   \
      d[i * ds] = FC_##OP(a, b);                                            \
    }                                                                       \
  }                                                                         \
  static void fc_##OP##_f64(char *d_, const char *u_, int64_t n,            \
                            int64_t ds, int64_t us, shlo_elem_type et) {    \
    (void)et;                                                               \
    double *d = (double *)(void *)d_;                                       \
    const double *u = (const double *)(const void *)u_;                     \
    for (int64_t i = 0; i < n; i++) {                                       \
      double a = d[i * ds], b = u[i * us];                                  \
      d[i * ds] = FC_##OP(a, b);                                            \
    }                                                                       \
  }                                                                         \
  /* narrower than f32: exact in double, one rounding on store */           \
  static void fc_##OP##_nar(char *d, const char *u, int64_t n, int64_t ds,  \
                            int64_t us, shlo_elem_type et) {                \
    size_t sz = shlo_elem_size(et);                                         \
    for (int64_t i = 0; i < n; i++) {                                       \
      char *dp = d + (size_t)(i * ds) * sz;                                 \
      double a = shlo_float_load(et, dp);                                   \
      double b = shlo_float_load(et, u + (size_t)(i * us) * sz);            \
      shlo_float_store(et, FC_##OP(a, b), dp);                              \
    }                                                                       \
  }
FC_OPS(DEF_FC)

/* Complex add and multiply, in the part type (as the elementwise ops). */
#define DEF_CC(TN, PT)                                                      \
  static void cc_add_##TN(char *d_, const char *u_, int64_t n, int64_t ds,  \
                          int64_t us, shlo_elem_type et) {                  \
    (void)et;                                                               \
    PT *d = (PT *)(void *)d_;                                               \
    const PT *u = (const PT *)(const void *)u_;                             \
    for (int64_t i = 0; i < n; i++) {                                       \
      d[2 * i * ds] += u[2 * i * us];                                       \
      d[2 * i * ds + 1] += u[2 * i * us + 1];                               \
    }                                                                       \
  }                                                                         \
  static void cc_mul_##TN(char *d_, const char *u_, int64_t n, int64_t ds,  \
                          int64_t us, shlo_elem_type et) {                  \
    (void)et;                                                               \
    PT *d = (PT *)(void *)d_;                                               \
    const PT *u = (const PT *)(const void *)u_;                             \
    for (int64_t i = 0; i < n; i++) {                                       \
      PT ar = d[2 * i * ds], ai = d[2 * i * ds + 1];                        \
      PT br = u[2 * i * us], bi = u[2 * i * us + 1];                        \
      SHLO_CMUL(PT, ar, ai, br, bi, d[2 * i * ds], d[2 * i * ds + 1]);      \
    }                                                                       \
  }
DEF_CC(c64, float)
DEF_CC(c128, double)

static int ic_type(shlo_elem_type t) {
  switch (t) {
  case SHLO_SI8: return ICT_s8;
  case SHLO_SI16: return ICT_s16;
  case SHLO_SI32: return ICT_s32;
  case SHLO_SI64: return ICT_s64;
  case SHLO_I1: case SHLO_UI8: return ICT_u8;
  case SHLO_UI16: return ICT_u16;
  case SHLO_UI32: return ICT_u32;
  case SHLO_UI64: return ICT_u64;
  default: return -1;
  }
}

/* The native loop for body op `code` on element type t, or NULL. */
static combine_fn native_combine(int code, shlo_elem_type t) {
  int o;
  switch (code) {
  case SHLO_OP_ADD: o = ICO_add; break;
  case SHLO_OP_MULTIPLY: o = ICO_mul; break;
  case SHLO_OP_MAXIMUM: o = ICO_max; break;
  case SHLO_OP_MINIMUM: o = ICO_min; break;
  case SHLO_OP_AND: o = ICO_and; break;
  case SHLO_OP_OR: o = ICO_or; break;
  case SHLO_OP_XOR: o = ICO_xor; break;
  default: return NULL;
  }
  if (t == SHLO_I1) {
    /* i1: add is or, multiply is and; max/min on 0/1 are or/and. */
    if (o == ICO_add) o = ICO_or;
    if (o == ICO_mul) o = ICO_and;
    return ic_tab[o][ICT_u8];
  }
  switch (shlo_elem_class_of(t)) {
  case SHLO_CLASS_SINT:
  case SHLO_CLASS_UINT:
    if (shlo_elem_bits(t) < 8) return icn_tab[o];
    return ic_type(t) < 0 ? NULL : ic_tab[o][ic_type(t)];
  case SHLO_CLASS_FLOAT: {
    static const combine_fn f32[] = {fc_add_f32, fc_mul_f32, fc_max_f32,
                                     fc_min_f32};
    static const combine_fn f64[] = {fc_add_f64, fc_mul_f64, fc_max_f64,
                                     fc_min_f64};
    static const combine_fn nar[] = {fc_add_nar, fc_mul_nar, fc_max_nar,
                                     fc_min_nar};
    if (o > ICO_min) return NULL;
    return t == SHLO_F32 ? f32[o] : t == SHLO_F64 ? f64[o] : nar[o];
  }
  case SHLO_CLASS_COMPLEX:
    if (o == ICO_add) return t == SHLO_C64 ? cc_add_c64 : cc_add_c128;
    if (o == ICO_mul) return t == SHLO_C64 ? cc_mul_c64 : cc_mul_c128;
    return NULL;
  default:
    return NULL;
  }
}

/* ---- scatter ---- */

typedef enum {
  SC_REGION,  /* run the compiled body per element */
  SC_REPLACE, /* the body returns the updates */
  SC_NATIVE,  /* one known binary op on the two block arguments */
} scatter_mode;

typedef struct scatter_params {
  int n;                   /* number of inputs (and of updates) */
  scatter_mode mode;
  combine_fn combine;      /* SC_NATIVE */
  shlo_elem_type *elem;    /* per input (points into this block) */
  size_t *esz;
  idx_load_fn load;
  int rank;                /* input rank */
  int64_t idims[MAXR], istr[MAXR];
  int n_map;               /* scatter_dims_to_operand_dims */
  int64_t map[MAXR];
  int64_t iv_str;          /* scatter_indices stride of index_vector_dim */
  int n_sd;                /* update scatter dims */
  int64_t sd_cnt[MAXR], sd_istr[MAXR], sd_ustr[MAXR];
  int64_t n_pos;           /* scatter positions */
  int n_bat;               /* batching dims */
  int bat_pos[MAXR];       /* position in the update scatter index */
  int64_t bat_dim[MAXR];   /* input dim */
  int n_pt;                /* input dims the window covers once */
  int64_t pt_dim[MAXR];
  int n_w;                 /* window dims of extent > 1, in order */
  int64_t w_dim[MAXR], w_cnt[MAXR], w_ustr[MAXR], w_istr[MAXR];
} scatter_params;

/* What a kernel run carries around. */
typedef struct scatter_run {
  const shlo_step *s;
  const scatter_params *p;
  shlo_value *const *in;
  shlo_value **out;
  shlo_exec *ex;
  shlo_value **lead;       /* SC_REGION: 2n scalars */
  shlo_value **res;        /* SC_REGION: n results */
} scatter_run;

static void copy_strided(char *d, const char *u, int64_t n, int64_t ds,
                         int64_t us, size_t esz) {
#define SCATTER_COPY(T)                                                \
  {                                                                    \
    T *dp = (T *)(void *)d;                                            \
    const T *up = (const T *)(const void *)u;                          \
    for (int64_t i = 0; i < n; i++) dp[i * ds] = up[i * us];           \
    return;                                                            \
  }
  switch (esz) {
  case 1: SCATTER_COPY(uint8_t)
  case 2: SCATTER_COPY(uint16_t)
  case 4: SCATTER_COPY(uint32_t)
  case 8: SCATTER_COPY(uint64_t)
  default:
    for (int64_t i = 0; i < n; i++)
      memcpy(d + (size_t)(i * ds) * esz, u + (size_t)(i * us) * esz, esz);
    return;
  }
#undef SCATTER_COPY
}

/* Apply the update computation to a run of n elements: inputs from
 * element io on (stride ds), updates from element uo on (stride us). */
static shlo_status scatter_apply(const scatter_run *r, int64_t io, int64_t uo,
                                 int64_t n, int64_t ds, int64_t us) {
  const scatter_params *p = r->p;
  int nin = p->n;
  if (p->mode == SC_NATIVE) {
    size_t esz = p->esz[0];
    p->combine((char *)r->out[0]->data + (size_t)io * esz,
               (const char *)r->in[2]->data + (size_t)uo * esz, n, ds, us,
               p->elem[0]);
    return SHLO_OK;
  }
  if (p->mode == SC_REPLACE) {
    for (int i = 0; i < nin; i++) {
      size_t esz = p->esz[i];
      char *d = (char *)r->out[i]->data + (size_t)io * esz;
      const char *u = (const char *)r->in[nin + 1 + i]->data + (size_t)uo * esz;
      if (ds == 1 && us == 1)
        memcpy(d, u, (size_t)n * esz);
      else
        copy_strided(d, u, n, ds, us, esz);
    }
    return SHLO_OK;
  }
  for (int64_t j = 0; j < n; j++) {
    int64_t di = io + j * ds, ui = uo + j * us;
    for (int i = 0; i < nin; i++) {
      size_t esz = p->esz[i];
      memcpy(r->lead[i]->data, (char *)r->out[i]->data + (size_t)di * esz,
             esz);
      memcpy(r->lead[nin + i]->data,
             (const char *)r->in[nin + 1 + i]->data + (size_t)ui * esz, esz);
    }
    shlo_status st =
        shlo_step_run_region(r->s, 0, r->in, r->lead, 2 * nin, r->res, r->ex);
    if (st) return st;
    for (int i = 0; i < nin; i++) {
      shlo_value *v = r->res[i];
      if (st == SHLO_OK &&
          (v->kind != SHLO_TYPE_TENSOR || v->elem != p->elem[i] ||
           v->numel != 1))
        st = shlo_exec_fail(r->ex, r->s, SHLO_ERUNTIME,
                            "update computation result %d is not a %s "
                            "scalar",
                            i, shlo_elem_name(p->elem[i]));
      if (st == SHLO_OK)
        memcpy((char *)r->out[i]->data + (size_t)di * p->esz[i], v->data,
               p->esz[i]);
      shlo_value_unref(v);
      r->res[i] = NULL;
    }
    if (st) return st;
  }
  return SHLO_OK;
}

/* One scatter position: its start index (unclamped) is start[]; clip the
 * window to the inputs and apply the body along its innermost dim. */
static shlo_status scatter_window(const scatter_run *r, const int64_t *start,
                                  int64_t uo) {
  const scatter_params *p = r->p;
  for (int j = 0; j < p->n_pt; j++) {
    int64_t d = p->pt_dim[j];
    if (start[d] < 0 || start[d] >= p->idims[d]) return SHLO_OK;
  }
  int64_t lo[MAXR], hi[MAXR], wi[MAXR];
  for (int k = 0; k < p->n_w; k++) {
    int64_t d = p->w_dim[k];
    lo[k] = start[d] < 0 ? -start[d] : 0;
    hi[k] = p->idims[d] - start[d];
    if (hi[k] > p->w_cnt[k]) hi[k] = p->w_cnt[k];
    if (lo[k] >= hi[k]) return SHLO_OK;
  }
  /* Every start is now within a window's extent of the input. */
  int64_t io = 0;
  for (int d = 0; d < p->rank; d++) io += start[d] * p->istr[d];
  for (int k = 0; k < p->n_w; k++) {
    io += lo[k] * p->w_istr[k];
    uo += lo[k] * p->w_ustr[k];
    wi[k] = lo[k];
  }
  if (p->n_w == 0) return scatter_apply(r, io, uo, 1, 1, 1);
  int last = p->n_w - 1;
  for (;;) {
    shlo_status st = scatter_apply(r, io, uo, hi[last] - lo[last],
                                   p->w_istr[last], p->w_ustr[last]);
    if (st) return st;
    int k = last - 1;
    for (; k >= 0; k--) {
      io += p->w_istr[k];
      uo += p->w_ustr[k];
      if (++wi[k] < hi[k]) break;
      io -= (wi[k] - lo[k]) * p->w_istr[k];
      uo -= (wi[k] - lo[k]) * p->w_ustr[k];
      wi[k] = lo[k];
    }
    if (k < 0) return SHLO_OK;
  }
}

/* Index values far outside any tensor are pinned so sums cannot overflow. */
#define SCATTER_FAR ((int64_t)1 << 61)

static shlo_status k_scatter(const shlo_step *s, shlo_value *const *in,
                             shlo_value **out, shlo_exec *ex) {
  const scatter_params *p = s->params;
  int n = p->n;
  shlo_status st = SHLO_OK;
  scatter_run r = {s, p, in, out, ex, NULL, NULL};
  for (int i = 0; i < n; i++) {
    out[i] = shlo_tensor_clone(in[i]);
    if (!out[i]) {
      st = shlo_exec_fail(ex, s, SHLO_ENOMEM, "out of memory");
      goto done;
    }
  }
  if (p->n_pos == 0 || in[n + 1]->numel == 0 || in[0]->numel == 0)
    goto done;
  if (p->mode == SC_REGION) {
    r.lead = calloc((size_t)(3 * n), sizeof *r.lead);
    if (!r.lead) {
      st = shlo_exec_fail(ex, s, SHLO_ENOMEM, "out of memory");
      goto done;
    }
    r.res = r.lead + 2 * n;
    for (int i = 0; i < 2 * n; i++) {
      r.lead[i] = shlo_tensor_new(p->elem[i % n], 0, NULL);
      if (!r.lead[i]) {
        st = shlo_exec_fail(ex, s, SHLO_ENOMEM, "out of memory");
        goto done;
      }
    }
  }

  const void *idx = in[n]->data;
  int64_t pi[MAXR] = {0}, ioff = 0, uo = 0, start[MAXR];
  for (int64_t b = 0; b < p->n_pos; b++) {
    if ((b & 255) == 255 && shlo_exec_should_stop(ex)) {
      st = shlo_exec_fail(ex, s, SHLO_ETIMEOUT,
                          "stopped: the execution was canceled or exceeded "
                          "its deadline");
      goto done;
    }
    memset(start, 0, sizeof start);
    for (int k = 0; k < p->n_map; k++) {
      int64_t v = p->load(idx, ioff + k * p->iv_str);
      start[p->map[k]] = v < -SCATTER_FAR ? -SCATTER_FAR
                         : v > SCATTER_FAR ? SCATTER_FAR : v;
    }
    for (int i = 0; i < p->n_bat; i++)
      start[p->bat_dim[i]] += pi[p->bat_pos[i]];
    st = scatter_window(&r, start, uo);
    if (st) goto done;
    for (int j = p->n_sd - 1; j >= 0; j--) {
      ioff += p->sd_istr[j];
      uo += p->sd_ustr[j];
      if (++pi[j] < p->sd_cnt[j]) break;
      ioff -= pi[j] * p->sd_istr[j];
      uo -= pi[j] * p->sd_ustr[j];
      pi[j] = 0;
    }
  }

done:
  if (r.lead) {
    for (int i = 0; i < 3 * n; i++) shlo_value_unref(r.lead[i]);
    free(r.lead);
  }
  if (st)
    for (int i = 0; i < n; i++) {
      shlo_value_unref(out[i]);
      out[i] = NULL;
    }
  return st;
}

static bool same_shape(const shlo_type *a, const shlo_type *b) {
  if (a->rank != b->rank) return false;
  for (int d = 0; d < a->rank; d++)
    if (a->dims[d] != b->dims[d]) return false;
  return true;
}

/* Whether value v has type tensor<elem> (rank 0, not quantized). */
static bool scalar_of(shlo_compiler *cc, int v, shlo_elem_type elem) {
  int ids[1] = {v};
  shlo_op probe = {0};
  probe.n_operands = 1;
  probe.operands = ids;
  const shlo_type *t = shlo_cc_operand_type(cc, &probe, 0);
  return t && t->kind == SHLO_TYPE_TENSOR && t->rank == 0 &&
         t->elem == elem && !t->quant;
}

/* Recognise a body that returns its update arguments, or (one input) that
 * is a single known op on both block arguments. */
static scatter_mode scatter_body(shlo_compiler *cc, const shlo_op *op, int n,
                                 const shlo_type *const *types,
                                 combine_fn *combine) {
  const shlo_block *b = op->regions[0];
  if (b->n_args != 2 * n || b->n_ops < 1) return SC_REGION;
  for (int i = 0; i < 2 * n; i++)
    if (!scalar_of(cc, b->args[i], types[i % n]->elem)) return SC_REGION;
  const shlo_op *ret = b->ops[b->n_ops - 1];
  if (ret->code != SHLO_OP_RETURN || ret->n_operands != n) return SC_REGION;
  if (b->n_ops == 1) {
    for (int i = 0; i < n; i++)
      if (ret->operands[i] != b->args[n + i]) return SC_REGION;
    return SC_REPLACE;
  }
  if (b->n_ops != 2 || n != 1 || types[0]->quant) return SC_REGION;
  const shlo_op *f = b->ops[0];
  if (f->n_operands != 2 || f->n_results != 1 || f->n_regions != 0 ||
      ret->operands[0] != f->results[0])
    return SC_REGION;
  int a0 = f->operands[0], a1 = f->operands[1];
  if (!((a0 == b->args[0] && a1 == b->args[1]) ||
        (a0 == b->args[1] && a1 == b->args[0])))
    return SC_REGION;
  *combine = native_combine(f->code, types[0]->elem);
  return *combine ? SC_NATIVE : SC_REGION;
}

/* scatter: results = inputs, then for every update_index of updates
 *   start     = scatter_indices[update scatter index, : at index_vector_dim]
 *   result_index = start mapped by scatter_dims_to_operand_dims
 *                + update scatter index at input_batching_dims
 *                + update window index with 0 at inserted and batching dims
 * and, when result_index is in bounds, results[result_index] =
 * update_computation(results[result_index], updates[update_index]).
 * Operands: N inputs, scatter_indices, N updates; N results. */
shlo_status shlo_compile_scatter(shlo_compiler *cc, const shlo_op *op,
                                 shlo_step *step) {
  int n = (op->n_operands - 1) / 2;
  if (op->n_operands < 3 || op->n_operands != 2 * n + 1 ||
      op->n_results != n || op->n_regions != 1)
    return shlo_cc_fail(cc, op, SHLO_EVERIFY,
                        "needs N inputs, scatter_indices, N updates, N "
                        "results and one update computation");
  const shlo_type *types[2 * MAXR + 2];
  const shlo_type **ty = n <= MAXR ? types : NULL;
  if (!ty)
    return shlo_cc_fail(cc, op, SHLO_EUNSUPPORTED,
                        "more than %d inputs are not supported", MAXR);
  for (int i = 0; i < n; i++) {
    ty[i] = shlo_cc_operand_type(cc, op, i);
    ty[n + i] = shlo_cc_operand_type(cc, op, n + 1 + i);
  }
  const shlo_type *it = shlo_cc_operand_type(cc, op, n);
  const shlo_type *t0 = ty[0], *u0 = ty[n];
  for (int i = 0; i < 2 * n; i++) {
    if (ty[i]->kind != SHLO_TYPE_TENSOR)
      return shlo_cc_fail(cc, op, SHLO_EVERIFY, "operands must be tensors");
    if (!shlo_type_is_static(ty[i]))
      return shlo_cc_fail(cc, op, SHLO_EUNSUPPORTED,
                          "dynamic shapes are not supported");
  }
  if (it->kind != SHLO_TYPE_TENSOR || !shlo_type_is_static(it))
    return shlo_cc_fail(cc, op, SHLO_EUNSUPPORTED,
                        "scatter_indices must be a static tensor");
  idx_load_fn load = idx_loader(it->elem);
  if (!load || it->quant)
    return shlo_cc_fail(cc, op, SHLO_EVERIFY,
                        "scatter_indices must have an integer element type");
  for (int i = 0; i < n; i++) {
    const shlo_type *t = ty[i], *u = ty[n + i];
    const shlo_type *rt = shlo_cc_result_type(cc, op, i);
    if (!same_shape(t, t0) || !same_shape(u, u0))
      return shlo_cc_fail(cc, op, SHLO_EVERIFY,
                          "inputs (and updates) must all have one shape");
    if (u->elem != t->elem)
      return shlo_cc_fail(cc, op, SHLO_EVERIFY,
                          "updates %d and inputs %d element types differ", i,
                          i);
    if (rt->kind != SHLO_TYPE_TENSOR || rt->elem != t->elem ||
        !same_shape(rt, t))
      return shlo_cc_fail(cc, op, SHLO_EVERIFY,
                          "result %d and input %d types differ", i, i);
  }

  const shlo_attr *dn = shlo_op_attr(op, "scatter_dimension_numbers");
  if (!dn || dn->kind != SHLO_ATTR_STRUCT)
    return shlo_cc_fail(cc, op, SHLO_EVERIFY,
                        "needs a #stablehlo.scatter "
                        "'scatter_dimension_numbers'");
  int64_t uwd[MAXR], iwd[MAXR], ibat[MAXR], sbat[MAXR], map[MAXR];
  int n_uwd, n_iwd, n_ibat, n_sbat, n_map;
  shlo_status st;
  if ((st = read_list(cc, op, dn, "update_window_dims", uwd, &n_uwd)) ||
      (st = read_list(cc, op, dn, "inserted_window_dims", iwd, &n_iwd)) ||
      (st = read_list(cc, op, dn, "input_batching_dims", ibat, &n_ibat)) ||
      (st = read_list(cc, op, dn, "scatter_indices_batching_dims", sbat,
                      &n_sbat)) ||
      (st = read_list(cc, op, dn, "scatter_dims_to_operand_dims", map,
                      &n_map)))
    return st;
  int64_t ivd = 0;
  const shlo_attr *ivd_a = shlo_attr_field(dn, "index_vector_dim");
  if (ivd_a && !shlo_attr_get_i64(ivd_a, &ivd))
    return shlo_cc_fail(cc, op, SHLO_EVERIFY,
                        "index_vector_dim must be an integer");

  int rank = t0->rank, irank = it->rank, urank = u0->rank;
  if (ivd < 0 || ivd > irank)
    return shlo_cc_fail(cc, op, SHLO_EVERIFY,
                        "index_vector_dim %lld is out of range [0, %d]",
                        (long long)ivd, irank);
  int64_t iv_len = ivd < irank ? it->dims[ivd] : 1;
  if (n_map != iv_len)
    return shlo_cc_fail(cc, op, SHLO_EVERIFY,
                        "scatter_dims_to_operand_dims has %d entries but the "
                        "index vector has %lld",
                        n_map, (long long)iv_len);
  if (rank != n_uwd + n_iwd + n_ibat)
    return shlo_cc_fail(cc, op, SHLO_EVERIFY,
                        "input rank %d is not size(update_window_dims) + "
                        "size(inserted_window_dims) + "
                        "size(input_batching_dims)",
                        rank);
  int n_sd = irank - (ivd < irank ? 1 : 0);
  if (urank != n_uwd + n_sd)
    return shlo_cc_fail(cc, op, SHLO_EVERIFY,
                        "updates rank %d is not %d window dims + %d scatter "
                        "dims",
                        urank, n_uwd, n_sd);
  if (!list_ok(uwd, n_uwd, urank, true))
    return shlo_cc_fail(cc, op, SHLO_EVERIFY,
                        "update_window_dims must be sorted, unique and in "
                        "range");
  if (!list_ok(iwd, n_iwd, rank, true) || !list_ok(ibat, n_ibat, rank, true))
    return shlo_cc_fail(cc, op, SHLO_EVERIFY,
                        "inserted_window_dims and input_batching_dims must "
                        "be sorted and in range");
  for (int i = 0; i < n_ibat; i++)
    if (in_list(iwd, n_iwd, ibat[i]))
      return shlo_cc_fail(cc, op, SHLO_EVERIFY,
                          "dim %lld is both inserted and a batching dim",
                          (long long)ibat[i]);
  if (!list_ok(map, n_map, rank, false))
    return shlo_cc_fail(cc, op, SHLO_EVERIFY,
                        "scatter_dims_to_operand_dims must be unique and in "
                        "range");
  for (int i = 0; i < n_map; i++)
    if (in_list(ibat, n_ibat, map[i]))
      return shlo_cc_fail(cc, op, SHLO_EVERIFY,
                          "scatter_dims_to_operand_dims and "
                          "input_batching_dims share dim %lld",
                          (long long)map[i]);
  if (n_sbat != n_ibat || !list_ok(sbat, n_sbat, irank, false) ||
      in_list(sbat, n_sbat, ivd))
    return shlo_cc_fail(cc, op, SHLO_EVERIFY,
                        "scatter_indices_batching_dims must be unique, in "
                        "range, not index_vector_dim, and as many as "
                        "input_batching_dims");
  for (int i = 0; i < n_ibat; i++)
    if (t0->dims[ibat[i]] != it->dims[sbat[i]])
      return shlo_cc_fail(cc, op, SHLO_EVERIFY,
                          "batching dims %lld of inputs and %lld of "
                          "scatter_indices differ in size",
                          (long long)ibat[i], (long long)sbat[i]);

  combine_fn combine = NULL;
  scatter_mode mode = scatter_body(cc, op, n, ty, &combine);
  if (mode == SC_REGION) {
    const shlo_block *b = op->regions[0];
    if (b->n_args != 2 * n)
      return shlo_cc_fail(cc, op, SHLO_EVERIFY,
                          "the update computation takes %d arguments, not "
                          "%d",
                          b->n_args, 2 * n);
    for (int i = 0; i < 2 * n; i++)
      if (!scalar_of(cc, b->args[i], ty[i % n]->elem))
        return shlo_cc_fail(cc, op, SHLO_EUNSUPPORTED,
                            "update computation argument %d must be a "
                            "tensor<%s> (promoted types are not supported)",
                            i, shlo_elem_name(ty[i % n]->elem));
    st = shlo_cc_compile_regions(cc, op, step);
    if (st) return st;
    if (step->plans[0]->n_results != n)
      return shlo_cc_fail(cc, op, SHLO_EVERIFY,
                          "the update computation returns %d values, not %d",
                          step->plans[0]->n_results, n);
  }

  size_t size = sizeof(scatter_params) + (size_t)n * sizeof(size_t) +
                (size_t)n * sizeof(shlo_elem_type);
  scatter_params *p = shlo_params_alloc(step, size);
  if (!p) return SHLO_ENOMEM;
  p->esz = (size_t *)(void *)(p + 1);
  p->elem = (shlo_elem_type *)(void *)(p->esz + n);
  p->n = n;
  p->mode = mode;
  p->combine = combine;
  for (int i = 0; i < n; i++) {
    p->elem[i] = ty[i]->elem;
    p->esz[i] = shlo_elem_size(ty[i]->elem);
  }
  p->load = load;
  p->rank = rank;
  int64_t istr[MAXR], sstr[MAXR], ustr[MAXR];
  shlo_strides(rank, t0->dims, p->istr);
  shlo_strides(irank, it->dims, sstr);
  shlo_strides(urank, u0->dims, ustr);
  memcpy(istr, p->istr, sizeof istr);
  for (int d = 0; d < rank; d++) p->idims[d] = t0->dims[d];
  p->n_map = n_map;
  for (int k = 0; k < n_map; k++) p->map[k] = map[k];
  p->iv_str = ivd < irank ? sstr[ivd] : 0;

  /* Update scatter dims <-> scatter_indices dims other than ivd. */
  p->n_sd = n_sd;
  p->n_pos = 1;
  for (int d = 0, j = 0, id = 0; d < urank; d++) {
    if (in_list(uwd, n_uwd, d)) continue;
    if (id == ivd) id++;
    if (u0->dims[d] != it->dims[id])
      return shlo_cc_fail(cc, op, SHLO_EVERIFY,
                          "updates dim %d is %lld but scatter_indices dim %d "
                          "is %lld",
                          d, (long long)u0->dims[d], id,
                          (long long)it->dims[id]);
    p->sd_cnt[j] = u0->dims[d];
    p->sd_istr[j] = sstr[id];
    p->sd_ustr[j] = ustr[d];
    p->n_pos *= u0->dims[d];
    j++;
    id++;
  }
  p->n_bat = n_ibat;
  for (int i = 0; i < n_ibat; i++) {
    p->bat_pos[i] = (int)(sbat[i] < ivd ? sbat[i] : sbat[i] - 1);
    p->bat_dim[i] = ibat[i];
  }

  /* Window dims: update_window_dims[k] <-> the k-th input dim that is
   * neither inserted nor batching. */
  for (int d = 0, k = 0; d < rank; d++) {
    if (in_list(iwd, n_iwd, d) || in_list(ibat, n_ibat, d)) {
      p->pt_dim[p->n_pt++] = d;
      continue;
    }
    int64_t w = u0->dims[uwd[k]];
    if (w > t0->dims[d])
      return shlo_cc_fail(cc, op, SHLO_EVERIFY,
                          "update window dim %lld (%lld) exceeds input dim "
                          "%d (%lld)",
                          (long long)uwd[k], (long long)w, d,
                          (long long)t0->dims[d]);
    if (w == 1) {
      p->pt_dim[p->n_pt++] = d;
    } else {
      p->w_dim[p->n_w] = d;
      p->w_cnt[p->n_w] = w;
      p->w_ustr[p->n_w] = ustr[uwd[k]];
      p->w_istr[p->n_w] = istr[d];
      p->n_w++;
    }
    k++;
  }
  step->fn = k_scatter;
  return SHLO_OK;
}
