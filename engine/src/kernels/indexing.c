/* SPDX-License-Identifier: Apache-2.0 */
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
 *      loop is one memcpy per slice row.  A large result's rows are split
 *      over the pool, and each row's source is prefetched a few rows
 *      ahead (the start indices are all known by then).
 *
 * The scatter kernel visits each scatter position once, clips its update
 * window to the bounds of the inputs (elements outside are skipped, as the
 * spec says) and applies the update computation along the window's
 * innermost dimension: a memcpy when the body just returns the update, a
 * native loop per element type when it is one known binary op (in vectors
 * along a contiguous f32 row), and the compiled region per element
 * otherwise.  It stays on one thread, in position order, so duplicate
 * indices combine in the order the spec's loop gives; the destination of
 * a position a few ahead is prefetched where its place is one index.
 *
 * Elements move by size whatever their type.  Index tensors may have any
 * integer type: a loader for it is chosen at compile time. */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <string.h>

#include "core/value.h"
#include "core/alloc.h"
#include "kernels/complex_mul.h"
#include "kernels/float_minmax.h"
#include "kernels/indexing.h"
#include "core/floatfmt.h"
#include "core/storage.h"
#include "core/tensor_uninit.h"
#include "kernels/kernel.h"
#include "kernels/multiversion.h"
#include "runtime/pool.h"

#define MAXR SHLO_MAX_RANK

/* ---- index loading ---- */

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
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
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

#ifndef NDEBUG
/* Every entry in [0, hi), no entry twice, and (if sorted) ascending. */
static bool list_ok(const int64_t *l, int n, int64_t hi, bool sorted) {
  for (int i = 0; i < n; i++) {
    if (l[i] < 0 || l[i] >= hi) return false;
    for (int j = 0; j < i; j++)
      if (l[j] == l[i] || (sorted && l[j] > l[i])) return false;
  }
  return true;
}
#endif

/* ---- gather ---- */

typedef struct gather_params {
  shlo_elem_type elem;
  size_t esz;
  shlo__int_load_fn load;
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
    return shlo__exec_fail(ex, s, SHLO_ERUNTIME,
                          "slice_sizes must be %d integers", p->rank);
  for (int d = 0; d < p->rank; d++) {
    sz[d] = shlo_tensor_get_i64(v, d);
    bool ok = p->unit[d] ? (sz[d] == 0 || sz[d] == 1) : sz[d] == p->slice[d];
    if (!ok)
      return shlo__exec_fail(ex, s, SHLO_ERUNTIME,
                            "slice_sizes[%d] = %lld does not match the "
                            "result type (expected %lld)",
                            d, (long long)sz[d], (long long)p->slice[d]);
  }
  gather_bounds(p, sz, hi);
  return SHLO_OK;
}

/* Pass 1 of a gather: the operand offset of each slice, from its clamped
 * start index (bounds hi) and its batching dims. */
static void gather_bases(const gather_params *p, const shlo_value *indices,
                         const int64_t *hi, int64_t *base) {
  const void *idx = indices->data;
  if (p->n_map == 1 && p->n_bat == 0 && p->n_bd == 1 &&
      indices->elem == SHLO_SI32) {
    /* one i32 index per slice along one dim (an embedding lookup), read
     * directly: through the loader, this walk took a third as long as
     * copying the rows it picks */
    const int32_t *iv = idx;
    int64_t st = p->bd_istr[0], h = hi[0], ms = p->map_str[0];
    for (int64_t b = 0; b < p->n_batch; b++) {
      int64_t v = iv[b * st];
      base[b] = (v < 0 ? 0 : v > h ? h : v) * ms;
    }
    return;
  }
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
}

/* Below this many result elements a gather stays on the calling thread: handing out the work costs more than it saves. */
#define IDX_PARALLEL_MIN ((int64_t)1 << 16)
/* How many slices ahead a gather prefetches its source rows, and at most
 * how many bytes of each.  Start indices are known before the walk, so the
 * rows' cache misses, which bound a gather from a large operand, can be
 * overlapped instead of taken one after another.  (16384 rows of 256
 * bytes from 16 MB: 8 ahead took 195 us on two threads, 16 160, 32 143.) */
#define IDX_AHEAD 32
#define IDX_AHEAD_BYTES 512

static void prefetch_bytes(const char *p, size_t n) {
  if (n > IDX_AHEAD_BYTES) n = IDX_AHEAD_BYTES;
  for (size_t o = 0; o < n; o += 64) __builtin_prefetch(p + o, 0, 0);
}

/* Pass 2 over rows [t0, t1) of the result (a row is one run of the
 * innermost loop), written to dst from row t0 on; false when the
 * execution was told to stop. */
static bool gather_rows(const gather_params *p, const int64_t *base,
                        const char *src, char *dst, int64_t t0, int64_t t1,
                        shlo_exec *ex) {
  size_t esz = p->esz;
  int nl = p->n_loop;
  int64_t inner = p->cnt[nl - 1], ib = p->bstr[nl - 1], il = p->lstr[nl - 1];
  int64_t ctr[MAXR] = {0}, cb = 0, co = 0, rem = t0;
  for (int j = nl - 2; j >= 0; j--) {
    ctr[j] = rem % p->cnt[j];
    rem /= p->cnt[j];
    cb += ctr[j] * p->bstr[j];
    co += ctr[j] * p->lstr[j];
  }
  /* where the slice IDX_AHEAD rows on starts, when rows step batches */
  int64_t ahead = nl >= 2 ? IDX_AHEAD * p->bstr[nl - 2] : 0;
  size_t row = (size_t)inner * esz;
  for (int64_t t = t0; t < t1; t++) {
    if ((t & 1023) == 1023 && shlo__exec_should_stop(ex)) return false;
    if (p->contig) {
      if (ahead > 0 && cb + ahead < p->n_batch)
        prefetch_bytes(src + (size_t)(base[cb + ahead] + co) * esz, row);
      memcpy(dst, src + (size_t)(base[cb] + co) * esz, row);
    } else {
      gather_row(dst, src, base + cb, ib, co, il, inner, esz);
    }
    dst += row;
    for (int j = nl - 2; j >= 0; j--) {
      cb += p->bstr[j];
      co += p->lstr[j];
      if (++ctr[j] < p->cnt[j]) break;
      cb -= ctr[j] * p->bstr[j];
      co -= ctr[j] * p->lstr[j];
      ctr[j] = 0;
    }
  }
  return true;
}

typedef struct gather_job {
  const gather_params *p;
  const int64_t *base;
  const char *src;
  char *dst;
  shlo_exec *ex;
  atomic_bool stopped;
} gather_job;

static void gather_chunk(void *ctx, int64_t t0, int64_t t1) {
  gather_job *j = ctx;
  size_t row = (size_t)j->p->cnt[j->p->n_loop - 1] * j->p->esz;
  if (atomic_load_explicit(&j->stopped, memory_order_relaxed)) return;
  if (!gather_rows(j->p, j->base, j->src, j->dst + (size_t)t0 * row, t0, t1,
                   j->ex))
    atomic_store_explicit(&j->stopped, true, memory_order_relaxed);
}

/* Pass 2: walk the result res, rows split over the pool when it is large
 * (each row is written by one thread, from the same sources: the bytes do
 * not depend on the split). */
static shlo_status gather_walk_result(const shlo_step *s,
                                      const gather_params *p,
                                      const int64_t *base, const char *src,
                                      shlo_value *res, shlo_exec *ex) {
  if (p->n_loop == 0) {
    memcpy(res->data, src + (size_t)base[0] * p->esz, p->esz);
    return SHLO_OK;
  }
  int64_t inner = p->cnt[p->n_loop - 1];
  int64_t outer = res->numel / inner;
  gather_job j = {p, base, src, res->data, ex, false};
  if (res->numel >= IDX_PARALLEL_MIN)
    shlo__parallel_for(outer, (IDX_PARALLEL_MIN / 4 + inner - 1) / inner,
                       gather_chunk, &j);
  else
    gather_chunk(&j, 0, outer);
  if (atomic_load(&j.stopped)) return shlo__exec_stopped(ex, s);
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
  /* every element of the result is written below, unless the operand
   * is empty: only unit dims of slice size 0 get here with a non-empty
   * result, which then stays zero */
  int64_t in_numel = in[0]->numel;
  shlo_value *res =
      in_numel ? shlo__tensor_new_uninit(p->elem, p->out_rank, p->out_dims)
               : shlo_tensor_new(p->elem, p->out_rank, p->out_dims);
  if (!res) return shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory");
  if (res->numel == 0 || in[0]->numel == 0) {
    out[0] = res;
    return SHLO_OK;
  }
  int64_t *base = shlo__malloc((size_t)p->n_batch * sizeof *base);
  if (!base) {
    shlo_value_unref(res);
    return shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory");
  }
  gather_bases(p, in[1], hi, base);
  shlo_status st = gather_walk_result(s, p, base, in[0]->data, res, ex);
  shlo__free(base);
  if (st) {
    shlo_value_unref(res);
    return st;
  }
  out[0] = res;
  return SHLO_OK;
}

/* The dimension numbers gather and scatter share, under gather's names
 * (scatter's in the comments).  Both ops check them with the same rules
 * (spec gather C1-C14, scatter C1-C14); only the names in the messages
 * differ, so the names come from an idx_names table. */
typedef struct idx_dnums {
  int64_t offd[MAXR]; /* offset_dims / update_window_dims */
  int64_t coll[MAXR]; /* collapsed_slice_dims / inserted_window_dims */
  int64_t obat[MAXR]; /* operand_batching_dims / input_batching_dims */
  int64_t sbat[MAXR]; /* start_indices_batching_dims /
                         scatter_indices_batching_dims */
  int64_t map[MAXR];  /* start_index_map / scatter_dims_to_operand_dims */
  int n_off, n_coll, n_obat, n_sbat, n_map;
  int64_t ivd;        /* index_vector_dim */
  int n_bd;           /* index dims other than ivd: batch / scatter dims */
} idx_dnums;

typedef struct idx_names {
  const char *op;       /* "gather" */
  const char *attr;     /* "dimension_numbers" */
  const char *off, *coll, *obat, *sbat, *map; /* the fields */
  const char *operand;  /* "operand": whose rank the fields split */
  const char *operands; /* "operand": in the batching-size message */
  const char *indices;  /* "start_indices" */
  const char *result;   /* "result": whose rank adds offset + batch dims */
  const char *off_word; /* "offset" */
  const char *bd_word;  /* "batch" */
  const char *collapsed; /* "collapsed" */
} idx_names;

static const idx_names gather_names = {
    "gather", "dimension_numbers", "offset_dims", "collapsed_slice_dims",
    "operand_batching_dims", "start_indices_batching_dims",
    "start_index_map", "operand", "operand", "start_indices", "result",
    "offset", "batch", "collapsed"};

static const idx_names scatter_names = {
    "scatter", "scatter_dimension_numbers", "update_window_dims",
    "inserted_window_dims", "input_batching_dims",
    "scatter_indices_batching_dims", "scatter_dims_to_operand_dims", "input",
    "inputs", "scatter_indices", "updates", "window", "scatter", "inserted"};

/* Read the struct attribute nm->attr into dn.  The verifier reads a
 * missing or malformed attribute as empty lists, so its form is checked
 * here. */
static shlo_status read_dnums(shlo_compiler *cc, const shlo_op *op,
                              const idx_names *nm, idx_dnums *dn) {
  const shlo_attr *a = shlo_op_attr(op, nm->attr);
  if (!a || a->kind != SHLO_ATTR_STRUCT)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY, "needs a #stablehlo.%s '%s'",
                        nm->op, nm->attr);
  shlo_status st;
  if ((st = read_list(cc, op, a, nm->off, dn->offd, &dn->n_off)) ||
      (st = read_list(cc, op, a, nm->coll, dn->coll, &dn->n_coll)) ||
      (st = read_list(cc, op, a, nm->obat, dn->obat, &dn->n_obat)) ||
      (st = read_list(cc, op, a, nm->sbat, dn->sbat, &dn->n_sbat)) ||
      (st = read_list(cc, op, a, nm->map, dn->map, &dn->n_map)))
    return st;
  dn->ivd = 0;
  const shlo_attr *ivd_a = shlo_attr_field(a, "index_vector_dim");
  if (ivd_a && !shlo_attr_get_i64(ivd_a, &dn->ivd))
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "index_vector_dim must be an integer");
  return SHLO_OK;
}

#ifndef NDEBUG
/* Whether dn fits the operand (input) type ot, the index type it and the
 * result (updates) rank: what the verifier checked (gather and
 * dynamic_gather C1-C19 and C22's rank, scatter C2, C4's rank, C7-C22). */
static bool dnums_ok(const idx_dnums *dn, const shlo_type *ot,
                     const shlo_type *it, int rrank) {
  int orank = ot->rank, irank = it->rank;
  int64_t ivd = dn->ivd;
  if (ivd < 0 || ivd > irank) return false;
  if (dn->n_map != (ivd < irank ? it->dims[ivd] : 1) ||
      orank != dn->n_off + dn->n_coll + dn->n_obat ||
      rrank != dn->n_off + dn->n_bd)
    return false;
  if (!list_ok(dn->offd, dn->n_off, rrank, true) ||
      !list_ok(dn->coll, dn->n_coll, orank, true) ||
      !list_ok(dn->obat, dn->n_obat, orank, true) ||
      !list_ok(dn->map, dn->n_map, orank, false) ||
      dn->n_sbat != dn->n_obat ||
      !list_ok(dn->sbat, dn->n_sbat, irank, false) ||
      in_list(dn->sbat, dn->n_sbat, ivd))
    return false;
  for (int i = 0; i < dn->n_obat; i++)
    if (in_list(dn->coll, dn->n_coll, dn->obat[i]) ||
        ot->dims[dn->obat[i]] != it->dims[dn->sbat[i]])
      return false;
  for (int i = 0; i < dn->n_map; i++)
    if (in_list(dn->obat, dn->n_obat, dn->map[i])) return false;
  return true;
}
#endif

/* Read the dimension numbers of a gather or scatter, and set dn->n_bd. */
static shlo_status load_dnums(shlo_compiler *cc, const shlo_op *op,
                              const idx_names *nm, idx_dnums *dn,
                              const shlo_type *ot, const shlo_type *it,
                              int rrank) {
  shlo_status st = read_dnums(cc, op, nm, dn);
  if (st) return st;
  dn->n_bd = it->rank - (dn->ivd < it->rank ? 1 : 0);
  assert(dnums_ok(dn, ot, it, rrank));
  (void)ot, (void)rrank;
  return SHLO_OK;
}

/* The operand, start_indices and result types of a gather, checked; load
 * reads one start index. */
static shlo_status gather_types(shlo_compiler *cc, const shlo_op *op,
                                bool dynamic, const shlo_type **ot,
                                const shlo_type **it, const shlo_type **rt,
                                shlo__int_load_fn *load) {
  assert(op->n_operands == (dynamic ? 3 : 2) && op->n_results == 1);
  (void)dynamic;
  *ot = shlo__cc_operand_type(cc, op, 0);
  *it = shlo__cc_operand_type(cc, op, 1);
  *rt = shlo__cc_result_type(cc, op, 0);
  if ((*ot)->kind != SHLO_TYPE_TENSOR || (*it)->kind != SHLO_TYPE_TENSOR ||
      (*rt)->kind != SHLO_TYPE_TENSOR)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY, "operands must be tensors");
  if (!shlo_type_is_static(*ot) || !shlo_type_is_static(*it) ||
      !shlo_type_is_static(*rt))
    return shlo__cc_fail(cc, op, SHLO_EUNSUPPORTED,
                        "dynamic shapes are not supported");
  /* dynamic_gather's verifier does not look at start_indices' type */
  *load = shlo__int_loader((*it)->elem);
  if (!*load || (*it)->quant)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "start_indices must have an integer element type");
  assert((*rt)->elem == (*ot)->elem); /* C23 */
  return SHLO_OK;
}

/* Slice sizes: the offset dims of the result give the window dims'
 * (window_dim[k] is the operand dim of the k-th offset dim).  A static
 * gather's slice_sizes attribute must agree; a dynamic one's are checked
 * against the operand at run time. */
static shlo_status gather_slices(shlo_compiler *cc, const shlo_op *op,
                                 gather_params *p, const idx_dnums *dn,
                                 const shlo_type *ot, const shlo_type *rt,
                                 int *window_dim) {
  int orank = ot->rank;
  for (int d = 0, k = 0; d < orank; d++) {
    p->unit[d] = in_list(dn->coll, dn->n_coll, d) ||
                 in_list(dn->obat, dn->n_obat, d);
    if (p->unit[d]) {
      p->slice[d] = 1;
    } else {
      window_dim[k] = d;
      p->slice[d] = rt->dims[dn->offd[k]];
      k++;
    }
  }
  if (p->dynamic) {
    /* the verifier cannot bound slice sizes it does not know (C21) */
    for (int d = 0; d < orank; d++)
      if (p->slice[d] > ot->dims[d])
        return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                            "result implies slice size %lld > dim %d of "
                            "the operand",
                            (long long)p->slice[d], d);
    gather_bounds(p, p->slice, p->hi);
    return SHLO_OK;
  }
  int64_t ss[MAXR];
  int n = shlo_attr_i64s(shlo_op_attr(op, "slice_sizes"), ss, MAXR);
  /* the verifier checked slice_sizes (C9, C12, C20-C22) */
  assert(n == orank);
  (void)n;
  for (int d = 0; d < orank; d++)
    assert(ss[d] >= 0 && ss[d] <= ot->dims[d] &&
           (p->unit[d] ? ss[d] <= 1 : ss[d] == p->slice[d]));
  gather_bounds(p, ss, p->hi);
  return SHLO_OK;
}

/* Batch dims: start_indices dims other than ivd, in order; they are the
 * result dims not in offset_dims, in the same order.  Sets blin[j] (the
 * linear stride of batch dim j) and bdim_of[j] (its start_indices dim). */
static void gather_batch(gather_params *p, const idx_dnums *dn,
                         const shlo_type *it, const int64_t *istr,
                         const int64_t *ostr, int64_t *blin,
                         int64_t *bdim_of) {
  for (int d = 0, j = 0; d < it->rank; d++) {
    if (d == dn->ivd) continue;
    bdim_of[j] = d;
    p->bd_cnt[j] = it->dims[d];
    p->bd_istr[j] = istr[d];
    j++;
  }
  p->n_bd = dn->n_bd;
  p->n_batch = 1;
  for (int j = dn->n_bd - 1; j >= 0; j--) {
    blin[j] = p->n_batch;
    p->n_batch *= p->bd_cnt[j];
  }
  p->n_bat = dn->n_obat;
  for (int i = 0; i < dn->n_obat; i++) {
    p->bat_pos[i] =
        (int)(dn->sbat[i] < dn->ivd ? dn->sbat[i] : dn->sbat[i] - 1);
    p->bat_ostr[i] = ostr[dn->obat[i]];
  }
}

/* Store the result walk (counts, batch and operand strides per result
 * dim) in p, dropping unit dims and merging dims that nest contiguously. */
static void gather_merge_walk(gather_params *p, int rrank,
                              const int64_t *cnt, const int64_t *bs,
                              const int64_t *ls) {
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
}

/* The result walk; the verifier checked the result shape (C22). */
static void gather_walk(gather_params *p, const idx_dnums *dn,
                        const shlo_type *it, const shlo_type *rt,
                        const int64_t *ostr, const int *window_dim,
                        const int64_t *blin, const int64_t *bdim_of) {
  int64_t cnt[MAXR], bs[MAXR], ls[MAXR];
  for (int r = 0, k = 0, j = 0; r < rt->rank; r++) {
    if (k < dn->n_off && dn->offd[k] == r) {
      int d = window_dim[k++];
      cnt[r] = rt->dims[r];
      bs[r] = 0;
      ls[r] = ostr[d];
    } else {
      assert(rt->dims[r] == it->dims[bdim_of[j]]);
      cnt[r] = rt->dims[r];
      bs[r] = blin[j++];
      ls[r] = 0;
    }
  }
  gather_merge_walk(p, rt->rank, cnt, bs, ls);
  (void)it, (void)bdim_of;
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
shlo_status shlo__compile_gather(shlo_compiler *cc, const shlo_op *op,
                                shlo_step *step) {
  bool dynamic = op->code == SHLO_OP_DYNAMIC_GATHER;
  const shlo_type *ot = NULL, *it = NULL, *rt = NULL;
  shlo__int_load_fn load = NULL;
  idx_dnums dn;
  shlo_status st = gather_types(cc, op, dynamic, &ot, &it, &rt, &load);
  if (st) return st;
  st = load_dnums(cc, op, &gather_names, &dn, ot, it, rt->rank);
  if (st) return st;

  gather_params *p = shlo__params_alloc(step, sizeof *p);
  if (!p) return SHLO_ENOMEM;
  p->elem = ot->elem;
  p->esz = shlo_elem_size(ot->elem);
  p->load = load;
  p->dynamic = dynamic;
  p->rank = ot->rank;
  p->n_map = dn.n_map;
  p->out_rank = rt->rank;
  int64_t ostr[MAXR], istr[MAXR];
  shlo_strides(ot->rank, ot->dims, ostr);
  shlo_strides(it->rank, it->dims, istr);
  for (int d = 0; d < ot->rank; d++) p->odims[d] = ot->dims[d];
  for (int d = 0; d < rt->rank; d++) p->out_dims[d] = rt->dims[d];
  for (int k = 0; k < dn.n_map; k++) {
    p->map[k] = dn.map[k];
    p->map_str[k] = ostr[dn.map[k]];
  }

  int window_dim[MAXR];
  st = gather_slices(cc, op, p, &dn, ot, rt, window_dim);
  if (st) return st;
  p->iv_str = dn.ivd < it->rank ? istr[dn.ivd] : 0;
  int64_t blin[MAXR], bdim_of[MAXR];
  gather_batch(p, &dn, it, istr, ostr, blin, bdim_of);
  gather_walk(p, &dn, it, rt, ostr, window_dim, blin, bdim_of);
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
enum { SHLO__ST_INT_NAMES(ICT_), ICT_COUNT };
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
#define IC_CELL(OP, TN, T, U) [ICT_##TN] = ic_##OP##_##TN,
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
#define FC_max(a, b) SHLO_FMAX(a, b)
#define FC_min(a, b) SHLO_FMIN(a, b)
#define FC_OPS(X) X(add) X(mul) X(max) X(min)

/* A contiguous f32 row (an embedding's row): in vectors, one IEEE op per
 * element as the strided loop does, so every clone gives the same bits. */
#define DEF_FC_ROW(OP)                                                      \
  SHLO_CLONES __attribute__((optimize("tree-vectorize",                    \
                                      "vect-cost-model=dynamic")))          \
  static void fc_##OP##_row_f32(float *restrict d, const float *restrict u, \
                                int64_t n) {                                \
    for (int64_t i = 0; i < n; i++) d[i] = FC_##OP(d[i], u[i]);            \
  }
FC_OPS(DEF_FC_ROW)

#define DEF_FC(OP)                                                          \
  static void fc_##OP##_f32(char *d_, const char *u_, int64_t n,            \
                            int64_t ds, int64_t us, shlo_elem_type et) {    \
    (void)et;                                                               \
    float *d = (float *)(void *)d_;                                         \
    const float *u = (const float *)(const void *)u_;                       \
    if (ds == 1 && us == 1) {                                               \
      fc_##OP##_row_f32(d, u, n);                                           \
      return;                                                               \
    }                                                                       \
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
      double a = shlo__float_load(et, dp);                                   \
      double b = shlo__float_load(et, u + (size_t)(i * us) * sz);            \
      shlo__float_store(et, FC_##OP(a, b), dp);                              \
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
    return ic_tab[o][shlo__int_storage(t)];
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
  shlo__int_load_fn load;
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
  /* The input is one element, and the result starts as that element
   * everywhere (a broadcast that only the scatter read, taken in by the
   * fusion: shlo__scatter_fill_from_scalar). */
  bool fill;
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
        shlo__step_run_region(r->s, 0, r->in, r->lead, 2 * nin, r->res, r->ex);
    if (st) return st;
    for (int i = 0; i < nin; i++) {
      shlo_value *v = r->res[i];
      if (st == SHLO_OK &&
          (v->kind != SHLO_TYPE_TENSOR || v->elem != p->elem[i] ||
           v->numel != 1))
        st = shlo__exec_fail(r->ex, r->s, SHLO_ERUNTIME,
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

/* Prefetch, for writing, the window of the position IDX_AHEAD on from
 * the one whose indices start at ioff, where its place is one index
 * along one dimension (the common embedding-gradient form); elsewhere
 * nothing.  Random rows of a large output are what bound such a
 * scatter, and their misses overlap this way. */
static void scatter_prefetch(const scatter_run *r, const void *idx,
                             int64_t ioff) {
  const scatter_params *p = r->p;
  if (p->n_sd != 1 || p->n_map != 1 || p->n_bat != 0) return;
  int64_t d = p->map[0];
  int64_t v = p->load(idx, ioff + IDX_AHEAD * p->sd_istr[0]);
  if (v < 0 || v >= p->idims[d]) return;
  int64_t at = v * p->istr[d];
  size_t esz = p->esz[0], n = esz;
  if (p->n_w > 0 && p->w_istr[p->n_w - 1] == 1)
    n = (size_t)p->w_cnt[p->n_w - 1] * esz;
  if (n > IDX_AHEAD_BYTES) n = IDX_AHEAD_BYTES;
  const char *row = (const char *)r->out[0]->data + (size_t)at * esz;
  for (size_t o = 0; o < n; o += 64) __builtin_prefetch(row + o, 1, 0);
}

/* From one scatter position to the next: its update scatter index pi,
 * where its indices start (*ioff) and its updates (*uo). */
static void scatter_next(const scatter_params *p, int64_t *pi, int64_t *ioff,
                         int64_t *uo) {
  for (int j = p->n_sd - 1; j >= 0; j--) {
    *ioff += p->sd_istr[j];
    *uo += p->sd_ustr[j];
    if (++pi[j] < p->sd_cnt[j]) return;
    *ioff -= pi[j] * p->sd_istr[j];
    *uo -= pi[j] * p->sd_ustr[j];
    pi[j] = 0;
  }
}

/* Every scatter position in order, each window applied where it lands. */
static shlo_status scatter_positions(const scatter_run *r) {
  const scatter_params *p = r->p;
  const void *idx = r->in[p->n]->data;
  int64_t pi[MAXR] = {0}, ioff = 0, uo = 0, start[MAXR];
  for (int64_t b = 0; b < p->n_pos; b++) {
    if ((b & 255) == 255 && shlo__exec_should_stop(r->ex))
      return shlo__exec_stopped(r->ex, r->s);
    if (b + IDX_AHEAD < p->n_pos) scatter_prefetch(r, idx, ioff);
    /* (only the input's dims: a memset of all MAXR cost as much as
     * an embedding row's update) */
    for (int d = 0; d < p->rank; d++) start[d] = 0;
    for (int k = 0; k < p->n_map; k++) {
      int64_t v = p->load(idx, ioff + k * p->iv_str);
      start[p->map[k]] = v < -SCATTER_FAR ? -SCATTER_FAR
                         : v > SCATTER_FAR ? SCATTER_FAR : v;
    }
    for (int i = 0; i < p->n_bat; i++)
      start[p->bat_dim[i]] += pi[p->bat_pos[i]];
    shlo_status st = scatter_window(r, start, uo);
    if (st) return st;
    scatter_next(p, pi, &ioff, &uo);
  }
  return SHLO_OK;
}

/* ---- a scatter split over the pool by where its updates land ---- */

/* A scatter whose updates combine natively (or replace) and whose
 * positions each land at one index along a dim of the input (an
 * embedding's gradient: rows picked by one index) splits that dim into
 * ranges: the positions are first sorted, stably, by the range they land
 * in, then each range applies its own in position order.  Each element
 * of the result gets its updates in the order one thread gives them, so
 * the bytes do not depend on the split.  Returns that dim, or -1 where
 * the scatter runs in one pass. */
static int scatter_split_dim(const scatter_params *p, int64_t work) {
  if (p->mode == SC_REGION || p->n_map != 1 || p->n_bat != 0 ||
      work < IDX_PARALLEL_MIN || (shlo__pool_threads() < 2 && !p->fill))
    return -1;
  int64_t d = p->map[0];
  for (int j = 0; j < p->n_pt; j++)
    if (p->pt_dim[j] == d && p->idims[d] >= 2) return (int)d;
  return -1;
}

/* ranges of the split dim per thread, claimed as threads come */
#define SCATTER_PARTS_PER_THREAD 4
/* A result filled range by range is cut into ranges of about this many
 * bytes, so that each range's fill is still in L2 when its updates
 * land (a 16 MB result filled whole and then updated at random missed
 * on its rows wherever the L3 was shared). */
#define SCATTER_FILL_RANGE ((size_t)512 << 10)

/* A position that lands in the input: its index along the split dim,
 * and where its updates start. */
typedef struct scatter_pos {
  int64_t v, uo;
} scatter_pos;

typedef struct scatter_split {
  const scatter_run *r;
  int dim;
  int64_t per;             /* indices of the dim per range */
  const scatter_pos *pos;  /* sorted by range, in position order within */
  const int64_t *first;    /* range k's positions: [first[k], first[k+1]) */
  bool fill;               /* each range fills its slab of the result first */
  int64_t run;             /* > 0: each position's window is one run of this
                            * many elements, in the result and in the
                            * updates alike (scatter_run_of) */
  atomic_int stopped;
} scatter_split;

/* The length of the one contiguous run that each position's window is,
 * in the result and in the updates, where the positions land along a
 * split dim (scatter_split_dim: one index, no batching): a window whose
 * only dim of extent > 1 is the innermost of both, over a native body or
 * a replace of one input.  Every other dim of the window then starts at
 * 0 and has extent 1, so the window is never clipped: a position at
 * index v of the split dim updates elements [v * istr[dim], + run).
 * 0 where the windows take scatter_window's general walk. */
static int64_t scatter_run_of(const scatter_params *p) {
  if (p->n != 1 || p->mode == SC_REGION || p->n_w != 1 ||
      p->w_istr[0] != 1 || p->w_ustr[0] != 1)
    return 0;
  return p->w_cnt[0];
}

/* n elements of esz bytes at dst set to *val: by memset where the
 * element's bytes are all one value (zeros: an embedding gradient's
 * start), which writes 16 MB in about 175 us on one core here against
 * 205-215 for the copies; otherwise by doubling copies. */
static void fill_elems(char *dst, const void *val, size_t esz, int64_t n) {
  if (n <= 0) return;
  const unsigned char *v = val;
  size_t same = 1;
  while (same < esz && v[same] == v[0]) same++;
  if (same == esz) {
    memset(dst, v[0], (size_t)n * esz);
    return;
  }
  memcpy(dst, val, esz);
  size_t have = esz, total = (size_t)n * esz;
  while (have < total) {
    size_t c = have < total - have ? have : total - have;
    memcpy(dst + have, dst, c);
    have += c;
  }
}

/* Elements [lo, hi) of a scatter's result seeded from its scalar. */
static void fill_result_range(const scatter_run *r, int64_t lo, int64_t hi) {
  size_t esz = r->p->esz[0];
  fill_elems((char *)r->out[0]->data + (size_t)lo * esz, r->in[0]->data, esz,
             hi - lo);
}

static void fill_result_chunk(void *ctx, int64_t lo, int64_t hi) {
  fill_result_range(ctx, lo, hi);
}

/* The whole result seeded from the scalar, over the pool when large. */
static void fill_result(const scatter_run *r) {
  int64_t n = r->out[0]->numel;
  if (n >= IDX_PARALLEL_MIN)
    shlo__parallel_for(n, IDX_PARALLEL_MIN, fill_result_chunk, (void *)r);
  else
    fill_result_range(r, 0, n);
}

/* Each position landing in the input, in order: its range (index >>
 * shift: ranges are 2^shift indices, a divide took as long as the rest
 * of a position's sorting) counted, and its place written (when at is
 * set; cursor: each range's next slot).  Run twice (count, then place)
 * rather than keeping each position's range between the passes: arrays
 * for that, allocated per execution, cost more than the second reading
 * of the indices. */
static void scatter_sort_pass(const scatter_run *r, int dim, int shift,
                              int64_t *cursor, scatter_pos *at) {
  const scatter_params *p = r->p;
  const void *idx = r->in[p->n]->data;
  int64_t n = p->idims[dim];
  if (p->n_sd == 1 && r->in[p->n]->elem == SHLO_SI32) {
    /* one scatter dim of i32 indices (the common form), read directly */
    const int32_t *iv = idx;
    int64_t is = p->sd_istr[0], us = p->sd_ustr[0];
    for (int64_t b = 0; b < p->n_pos; b++) {
      int64_t v = iv[b * is];
      if (v < 0 || v >= n) continue;
      int64_t k = v >> shift;
      if (at) at[cursor[k]] = (scatter_pos){v, b * us};
      cursor[k]++;
    }
    return;
  }
  int64_t pi[MAXR] = {0}, ioff = 0, uo = 0;
  for (int64_t b = 0; b < p->n_pos; b++) {
    int64_t v = p->load(idx, ioff);
    if (v >= 0 && v < n) {
      int64_t k = v >> shift;
      if (at) at[cursor[k]] = (scatter_pos){v, uo};
      cursor[k]++;
    }
    scatter_next(p, pi, &ioff, &uo);
  }
}

/* The positions sorted, stably, by range into pos (first[k]: where range
 * k's start; zeros in first[1..] on entry); false when out of memory. */
static bool scatter_sort(const scatter_run *r, int dim, int shift,
                         int64_t parts, int64_t *first, scatter_pos *pos) {
  scatter_sort_pass(r, dim, shift, first + 1, NULL);
  for (int64_t k = 0; k < parts; k++) first[k + 1] += first[k];
  int64_t *cursor = shlo__malloc((size_t)parts * sizeof *cursor);
  if (!cursor) return false;
  memcpy(cursor, first, (size_t)parts * sizeof *cursor);
  scatter_sort_pass(r, dim, shift, cursor, pos);
  shlo__free(cursor);
  return true;
}

/* Prefetch position q's input window (for writing) and updates. */
static void scatter_pos_prefetch(const scatter_run *r, int dim,
                                 const scatter_pos *q) {
  const scatter_params *p = r->p;
  size_t esz = p->esz[0], n = esz;
  if (p->n_w > 0 && p->w_istr[p->n_w - 1] == 1)
    n = (size_t)p->w_cnt[p->n_w - 1] * esz;
  if (n > IDX_AHEAD_BYTES) n = IDX_AHEAD_BYTES;
  const char *row = (const char *)r->out[0]->data +
                    (size_t)(q->v * p->istr[dim]) * esz;
  const char *up = (const char *)r->in[p->n + 1]->data + (size_t)q->uo * esz;
  for (size_t o = 0; o < n; o += 64) {
    __builtin_prefetch(row + o, 1, 0);
    __builtin_prefetch(up + o, 0, 0);
  }
}

/* Positions [i0, i1) of a split whose windows are runs (j->run): each
 * the body applied straight to its run.  False when told to stop.  A
 * loop of its own: the same step chosen per position inside
 * scatter_ranges' loop made gather_scatter 3% slower (0.394 -> 0.407
 * ms on one thread). */
static bool scatter_runs(scatter_split *j, int64_t i0, int64_t i1) {
  const scatter_run *r = j->r;
  const scatter_params *p = r->p;
  size_t esz = p->esz[0];
  int64_t step = p->istr[j->dim], n = j->run;
  char *out = r->out[0]->data;
  const char *upd = r->in[2]->data;
  for (int64_t i = i0; i < i1; i++) {
    if ((i & 255) == 255 && shlo__exec_should_stop(r->ex)) return false;
    if (i + IDX_AHEAD < i1)
      scatter_pos_prefetch(r, j->dim, &j->pos[i + IDX_AHEAD]);
    char *d = out + (size_t)(j->pos[i].v * step) * esz;
    const char *u = upd + (size_t)j->pos[i].uo * esz;
    if (p->mode == SC_NATIVE) p->combine(d, u, n, 1, 1, p->elem[0]);
    else memcpy(d, u, (size_t)n * esz);
  }
  return true;
}

static void scatter_ranges(void *ctx, int64_t lo, int64_t hi) {
  scatter_split *j = ctx;
  const scatter_run *r = j->r;
  const scatter_params *p = r->p;
  int64_t start[MAXR];
  for (int d = 0; d < p->rank; d++) start[d] = 0;
  for (int64_t k = lo; k < hi && !atomic_load(&j->stopped); k++) {
    if (j->fill) { /* (the split dim is the first: a slab of the result) */
      int64_t end = (k + 1) * j->per < p->idims[0] ? (k + 1) * j->per
                                                   : p->idims[0];
      fill_result_range(r, k * j->per * p->istr[0], end * p->istr[0]);
    }
    if (j->run > 0) {
      if (!scatter_runs(j, j->first[k], j->first[k + 1])) {
        atomic_store(&j->stopped, 1);
        return;
      }
      continue;
    }
    for (int64_t i = j->first[k]; i < j->first[k + 1]; i++) {
      if ((i & 255) == 255 && shlo__exec_should_stop(r->ex)) {
        atomic_store(&j->stopped, 1);
        return;
      }
      if (i + IDX_AHEAD < j->first[k + 1])
        scatter_pos_prefetch(r, j->dim, &j->pos[i + IDX_AHEAD]);
      start[j->dim] = j->pos[i].v;
      scatter_window(r, start, j->pos[i].uo); /* (natively: no status) */
    }
  }
}

/* All positions, split over the pool where scatter_split_dim allows; a
 * result seeded from a scalar filled first, or, where the split dim is
 * its first, range by range. */
static shlo_status scatter_all(const scatter_run *r) {
  const scatter_params *p = r->p;
  int dim = scatter_split_dim(p, r->in[p->n + 1]->numel);
  bool fill_ranges = p->fill && dim == 0;
  if (p->fill && !fill_ranges) fill_result(r);
  if (dim < 0) return scatter_positions(r);
  int64_t parts = (int64_t)shlo__pool_threads() * SCATTER_PARTS_PER_THREAD;
  size_t bytes = (size_t)r->out[0]->numel * p->esz[0];
  if (fill_ranges && (int64_t)(bytes / SCATTER_FILL_RANGE) > parts)
    parts = (int64_t)(bytes / SCATTER_FILL_RANGE);
  if (parts > p->idims[dim]) parts = p->idims[dim];
  /* ranges of a power of two indices, at most the share above: up to
   * twice as many ranges, each at most the fill's size */
  int shift = 0;
  while (((int64_t)2 << shift) * parts <= p->idims[dim]) shift++;
  int64_t per = (int64_t)1 << shift;
  parts = (p->idims[dim] + per - 1) / per;
  int64_t *first = shlo__calloc((size_t)parts + 1, sizeof *first);
  scatter_pos *pos = shlo__malloc((size_t)p->n_pos * sizeof *pos);
  if (!first || !pos) {
    shlo__free(first);
    shlo__free(pos);
    if (fill_ranges) fill_result(r);
    return scatter_positions(r); /* the same bytes, in one pass */
  }
  bool sorted = scatter_sort(r, dim, shift, parts, first, pos);
  scatter_split j = {r, dim, per, pos, first, fill_ranges,
                     scatter_run_of(p), 0};
  if (sorted) shlo__parallel_for(parts, 1, scatter_ranges, &j);
  shlo__free(first);
  shlo__free(pos);
  if (!sorted && fill_ranges) fill_result(r);
  if (!sorted) return scatter_positions(r); /* the same bytes, in one pass */
  return atomic_load(&j.stopped) ? shlo__exec_stopped(r->ex, r->s) : SHLO_OK;
}

static shlo_status k_scatter(const shlo_step *s, shlo_value *const *in,
                             shlo_value **out, shlo_exec *ex) {
  const scatter_params *p = s->params;
  int n = p->n;
  shlo_status st = SHLO_OK;
  scatter_run r = {s, p, in, out, ex, NULL, NULL};
  for (int i = 0; i < n; i++) {
    if (p->fill) { /* filled below, from the scalar in[0] */
      out[i] = shlo__tensor_new_uninit(p->elem[0], p->rank, p->idims);
    } else {
      /* the updates go straight into an operand that dies here */
      out[i] = shlo__exec_take_input(s, in, i);
      if (!out[i]) out[i] = shlo_tensor_clone(in[i]);
    }
    if (!out[i]) {
      st = shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory");
      goto done;
    }
  }
  if (p->fill && in[0]->numel != 1) {
    st = shlo__exec_fail(ex, s, SHLO_EVERIFY,
                         "the scalar a scatter starts from is not one element");
    goto done;
  }
  if (p->n_pos == 0 || in[n + 1]->numel == 0 || out[0]->numel == 0) {
    if (p->fill) fill_result(&r);
    goto done;
  }
  if (p->mode == SC_REGION) {
    r.lead = shlo__calloc((size_t)(3 * n), sizeof *r.lead);
    if (!r.lead) {
      st = shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory");
      goto done;
    }
    r.res = r.lead + 2 * n;
    for (int i = 0; i < 2 * n; i++) {
      r.lead[i] = shlo_tensor_new(p->elem[i % n], 0, NULL);
      if (!r.lead[i]) {
        st = shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory");
        goto done;
      }
    }
  }

  st = scatter_all(&r); /* (fills a result seeded from a scalar) */

done:
  if (r.lead) {
    for (int i = 0; i < 3 * n; i++) shlo_value_unref(r.lead[i]);
    shlo__free(r.lead);
  }
  if (st)
    for (int i = 0; i < n; i++) {
      shlo_value_unref(out[i]);
      out[i] = NULL;
    }
  return st;
}

#ifndef NDEBUG
static bool same_shape(const shlo_type *a, const shlo_type *b) {
  if (a->rank != b->rank) return false;
  for (int d = 0; d < a->rank; d++)
    if (a->dims[d] != b->dims[d]) return false;
  return true;
}
#endif

/* Whether value v has type tensor<elem> (rank 0, not quantized). */
static bool scalar_of(shlo_compiler *cc, int v, shlo_elem_type elem) {
  int ids[1] = {v};
  shlo_op probe = {0};
  probe.n_operands = 1;
  probe.operands = ids;
  const shlo_type *t = shlo__cc_operand_type(cc, &probe, 0);
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

/* The types of scatter's n inputs (ty[0..n)) and n updates (ty[n..2n)) and
 * of its scatter_indices (*it), checked against each other and the
 * results; load reads one scatter index. */
static shlo_status scatter_types(shlo_compiler *cc, const shlo_op *op,
                                 int n, const shlo_type **ty,
                                 const shlo_type **it,
                                 shlo__int_load_fn *load) {
  for (int i = 0; i < n; i++) {
    ty[i] = shlo__cc_operand_type(cc, op, i);
    ty[n + i] = shlo__cc_operand_type(cc, op, n + 1 + i);
  }
  *it = shlo__cc_operand_type(cc, op, n);
  for (int i = 0; i < 2 * n; i++) {
    if (ty[i]->kind != SHLO_TYPE_TENSOR)
      return shlo__cc_fail(cc, op, SHLO_EVERIFY, "operands must be tensors");
    if (!shlo_type_is_static(ty[i]))
      return shlo__cc_fail(cc, op, SHLO_EUNSUPPORTED,
                          "dynamic shapes are not supported");
  }
  if ((*it)->kind != SHLO_TYPE_TENSOR || !shlo_type_is_static(*it))
    return shlo__cc_fail(cc, op, SHLO_EUNSUPPORTED,
                        "scatter_indices must be a static tensor");
  *load = shlo__int_loader((*it)->elem);
  assert(*load); /* I2 */
  for (int i = 0; i < n; i++) {
    const shlo_type *t = ty[i], *rt = shlo__cc_result_type(cc, op, i);
    /* the verifier checked the shapes and the updates' types (C1, C3,
     * C6, C24) */
    assert(same_shape(t, ty[0]) && same_shape(ty[n + i], ty[n]) &&
           ty[n + i]->elem == t->elem && same_shape(rt, t));
    /* the spec lets the update computation promote the element type
     * (C25); the verifier allows it, this build does not */
    if (rt->elem != t->elem)
      return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                          "result %d and input %d types differ", i, i);
  }
  return SHLO_OK;
}

/* Decide how the update computation runs: natively (*mode SC_NATIVE, with
 * *combine) or as a compiled region, whose signature is checked here. */
static shlo_status scatter_update(shlo_compiler *cc, const shlo_op *op,
                                  shlo_step *step, int n,
                                  const shlo_type **ty, scatter_mode *mode,
                                  combine_fn *combine) {
  *combine = NULL;
  *mode = scatter_body(cc, op, n, ty, combine);
  if (*mode != SC_REGION) return SHLO_OK;
  const shlo_block *b = op->regions[0];
  assert(b->n_args == 2 * n); /* C23 */
  for (int i = 0; i < 2 * n; i++)
    if (!scalar_of(cc, b->args[i], ty[i % n]->elem))
      return shlo__cc_fail(cc, op, SHLO_EUNSUPPORTED,
                          "update computation argument %d must be a "
                          "tensor<%s> (promoted types are not supported)",
                          i, shlo_elem_name(ty[i % n]->elem));
  shlo_status st = shlo__cc_compile_regions(cc, op, step);
  if (st) return st;
  assert(step->plans[0]->n_results == n); /* C23 */
  return SHLO_OK;
}

/* The step's parameters, with room for n element types and sizes after
 * them. */
static scatter_params *scatter_alloc(shlo_step *step, int n,
                                     const shlo_type **ty) {
  size_t size = sizeof(scatter_params) + (size_t)n * sizeof(size_t) +
                (size_t)n * sizeof(shlo_elem_type);
  scatter_params *p = shlo__params_alloc(step, size);
  if (!p) return NULL;
  p->esz = (size_t *)(void *)(p + 1);
  p->elem = (shlo_elem_type *)(void *)(p->esz + n);
  p->n = n;
  for (int i = 0; i < n; i++) {
    p->elem[i] = ty[i]->elem;
    p->esz[i] = shlo_elem_size(ty[i]->elem);
  }
  return p;
}

/* Update scatter dims <-> scatter_indices dims other than ivd (the
 * verifier checked that they agree in size, C4); then the batching dims. */
static void scatter_dims(scatter_params *p, const idx_dnums *dn,
                         const shlo_type *it, const shlo_type *u0,
                         const int64_t *sstr, const int64_t *ustr) {
  p->n_sd = dn->n_bd;
  p->n_pos = 1;
  for (int d = 0, j = 0, id = 0; d < u0->rank; d++) {
    if (in_list(dn->offd, dn->n_off, d)) continue;
    if (id == dn->ivd) id++;
    assert(u0->dims[d] == it->dims[id]);
    p->sd_cnt[j] = u0->dims[d];
    p->sd_istr[j] = sstr[id];
    p->sd_ustr[j] = ustr[d];
    p->n_pos *= u0->dims[d];
    j++;
    id++;
  }
  p->n_bat = dn->n_obat;
  for (int i = 0; i < dn->n_obat; i++) {
    p->bat_pos[i] =
        (int)(dn->sbat[i] < dn->ivd ? dn->sbat[i] : dn->sbat[i] - 1);
    p->bat_dim[i] = dn->obat[i];
  }
  (void)it;
}

/* Window dims: update_window_dims[k] <-> the k-th input dim that is
 * neither inserted nor batching (the verifier checked the window fits,
 * C4).  Those of extent 1, with the inserted and batching dims, are
 * covered once (pt_dim); the rest are walked (w_*). */
static void scatter_window_dims(scatter_params *p, const idx_dnums *dn,
                                const shlo_type *t0, const shlo_type *u0,
                                const int64_t *ustr) {
  for (int d = 0, k = 0; d < t0->rank; d++) {
    if (in_list(dn->coll, dn->n_coll, d) ||
        in_list(dn->obat, dn->n_obat, d)) {
      p->pt_dim[p->n_pt++] = d;
      continue;
    }
    int64_t uwd = dn->offd[k];
    int64_t w = u0->dims[uwd];
    assert(w <= t0->dims[d]);
    if (w == 1) {
      p->pt_dim[p->n_pt++] = d;
    } else {
      p->w_dim[p->n_w] = d;
      p->w_cnt[p->n_w] = w;
      p->w_ustr[p->n_w] = ustr[uwd];
      p->w_istr[p->n_w] = p->istr[d];
      p->n_w++;
    }
    k++;
  }
}

/* scatter: results = inputs, then for every update_index of updates
 *   start     = scatter_indices[update scatter index, : at index_vector_dim]
 *   result_index = start mapped by scatter_dims_to_operand_dims
 *                + update scatter index at input_batching_dims
 *                + update window index with 0 at inserted and batching dims
 * and, when result_index is in bounds, results[result_index] =
 * update_computation(results[result_index], updates[update_index]).
 * Operands: N inputs, scatter_indices, N updates; N results. */
shlo_status shlo__compile_scatter(shlo_compiler *cc, const shlo_op *op,
                                 shlo_step *step) {
  int n = (op->n_operands - 1) / 2;
  /* C5, C23 */
  assert(n >= 1 && op->n_operands == 2 * n + 1 && op->n_results == n &&
         op->n_regions == 1);
  if (n > MAXR)
    return shlo__cc_fail(cc, op, SHLO_EUNSUPPORTED,
                        "more than %d inputs are not supported", MAXR);
  const shlo_type *ty[2 * MAXR + 2], *it = NULL;
  shlo__int_load_fn load = NULL;
  shlo_status st = scatter_types(cc, op, n, ty, &it, &load);
  if (st) return st;
  const shlo_type *t0 = ty[0], *u0 = ty[n];
  idx_dnums dn;
  st = load_dnums(cc, op, &scatter_names, &dn, t0, it, u0->rank);
  if (st) return st;
  scatter_mode mode;
  combine_fn combine;
  st = scatter_update(cc, op, step, n, ty, &mode, &combine);
  if (st) return st;

  scatter_params *p = scatter_alloc(step, n, ty);
  if (!p) return SHLO_ENOMEM;
  p->mode = mode;
  p->combine = combine;
  p->load = load;
  p->rank = t0->rank;
  int64_t sstr[MAXR], ustr[MAXR];
  shlo_strides(t0->rank, t0->dims, p->istr);
  shlo_strides(it->rank, it->dims, sstr);
  shlo_strides(u0->rank, u0->dims, ustr);
  for (int d = 0; d < t0->rank; d++) p->idims[d] = t0->dims[d];
  p->n_map = dn.n_map;
  for (int k = 0; k < dn.n_map; k++) p->map[k] = dn.map[k];
  p->iv_str = dn.ivd < it->rank ? sstr[dn.ivd] : 0;
  scatter_dims(p, &dn, it, u0, sstr, ustr);
  scatter_window_dims(p, &dn, t0, u0, ustr);
  step->fn = k_scatter;
  return SHLO_OK;
}

bool shlo__scatter_fill_from_scalar(shlo_step *s) {
  if (s->fn != k_scatter || !s->params) return false;
  scatter_params *p = s->params;
  if (p->n != 1 || p->fill) return false;
  p->fill = true;
  return true;
}
