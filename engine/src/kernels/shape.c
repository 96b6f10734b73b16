/* SPDX-License-Identifier: Apache-2.0 */
/* The shape and data-movement family: broadcast_in_dim, concatenate,
 * dynamic_slice, dynamic_update_slice, get_dimension_size, iota, pad,
 * reshape, reverse, slice, transpose.
 *
 * These ops only move elements, so every kernel works on bytes, by element
 * size, whatever the element type (iota, which makes values, is the one
 * exception).  Each compile function reduces its op to a *strided box copy*
 * (shape_copy below): a count per dimension and a byte stride per dimension
 * for source and destination.  Dimensions of extent 1 are dropped and
 * neighbours that are contiguous in both source and destination are merged,
 * so the innermost loop moves the largest contiguous run with one memcpy
 * wherever the layout allows.  Everything that does not depend on runtime
 * values is decided at compile time and kept in the step's params. */
#include <assert.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "core/floatfmt.h"
#include "core/storage.h"
#include "core/tensor_uninit.h"
#include "core/tensor_view.h"
#include "core/value.h"
#include "kernels/kernel.h"
#include "runtime/pool.h"
#include "compile/plan.h"
#include "core/value_quant.h"
#include "runtime/exec.h"

/* ---- strided box copies ---- */

/* A box of count[0..rank) elements, walked row-major; byte strides for the
 * source and the destination per dimension (may be 0 or negative). */
typedef struct shape_copy {
  int rank;
  bool empty; /* some count is 0: nothing to move */
  size_t es;  /* element bytes */
  int64_t count[SHLO_MAX_RANK];
  int64_t sstride[SHLO_MAX_RANK];
  int64_t dstride[SHLO_MAX_RANK];
} shape_copy;

/* Build a copy descriptor from per-dimension counts and element strides,
 * dropping extent-1 dimensions and merging contiguous neighbours. */
static void copy_init(shape_copy *c, int rank, const int64_t *count,
                      const int64_t *sstride, const int64_t *dstride,
                      size_t es) {
  memset(c, 0, sizeof *c);
  c->es = es;
  int r = 0;
  for (int i = 0; i < rank; i++) {
    if (count[i] == 0) c->empty = true;
    if (count[i] == 1) continue;
    int64_t ss = sstride[i] * (int64_t)es, ds = dstride[i] * (int64_t)es;
    if (r > 0 && c->sstride[r - 1] == ss * count[i] &&
        c->dstride[r - 1] == ds * count[i]) {
      /* the previous (outer) dimension steps exactly over this one */
      c->count[r - 1] *= count[i];
      c->sstride[r - 1] = ss;
      c->dstride[r - 1] = ds;
      continue;
    }
    c->count[r] = count[i];
    c->sstride[r] = ss;
    c->dstride[r] = ds;
    r++;
  }
  c->rank = r;
}

/* Copy n elements of es bytes with byte strides ds / ss. */
static void copy_elems(char *dst, int64_t ds, const char *src, int64_t ss,
                       int64_t n, size_t es) {
#define SHAPE_COPY_LOOP(T)                                  \
  for (int64_t i = 0; i < n; i++, dst += ds, src += ss)     \
    *(T *)(void *)dst = *(const T *)(const void *)src;      \
  return;
  switch (es) {
  case 1: SHAPE_COPY_LOOP(uint8_t)
  case 2: SHAPE_COPY_LOOP(uint16_t)
  case 4: SHAPE_COPY_LOOP(uint32_t)
  case 8: SHAPE_COPY_LOOP(uint64_t)
  default:
    for (int64_t i = 0; i < n; i++, dst += ds, src += ss) memcpy(dst, src, es);
    return;
  }
#undef SHAPE_COPY_LOOP
}

/* A 2-D transpose block: n0 x n1 elements, source contiguous along n0
 * (stride es) and strided by s1 along n1, destination contiguous along n1
 * and strided by d0 along n0.  Walked in square tiles so both sides stay in
 * cache. */
#define SHAPE_TILE 16
static void copy_tiled(char *dst, int64_t d0, const char *src, int64_t s1,
                       int64_t n0, int64_t n1, size_t es) {
  for (int64_t i0 = 0; i0 < n0; i0 += SHAPE_TILE) {
    int64_t e0 = i0 + SHAPE_TILE < n0 ? i0 + SHAPE_TILE : n0;
    for (int64_t i1 = 0; i1 < n1; i1 += SHAPE_TILE) {
      int64_t m = n1 - i1 < SHAPE_TILE ? n1 - i1 : SHAPE_TILE;
      for (int64_t a = i0; a < e0; a++)
        copy_elems(dst + a * d0 + i1 * (int64_t)es, (int64_t)es,
                   src + a * (int64_t)es + i1 * s1, s1, m, es);
    }
  }
}

/* Run a copy: dst and src point at the box's first element. */
static void copy_run(const shape_copy *c, char *dst, const char *src) {
  if (c->empty) return;
  size_t es = c->es;
  if (c->rank == 0) {
    memcpy(dst, src, es);
    return;
  }
  int last = c->rank - 1;
  int64_t n = c->count[last], ss = c->sstride[last], ds = c->dstride[last];
  bool contig = ss == (int64_t)es && ds == (int64_t)es;
  /* the last two dimensions are a transpose: tile them */
  bool tiled = !contig && last >= 1 && ds == (int64_t)es &&
               c->sstride[last - 1] == (int64_t)es &&
               c->count[last - 1] >= SHAPE_TILE && n >= SHAPE_TILE;
  int outer_last = tiled ? last - 2 : last - 1;
  int64_t idx[SHLO_MAX_RANK] = {0};
  for (;;) {
    if (contig)
      memcpy(dst, src, (size_t)n * es);
    else if (tiled)
      copy_tiled(dst, c->dstride[last - 1], src, ss, c->count[last - 1], n,
                 es);
    else
      copy_elems(dst, ds, src, ss, n, es);
    int k = outer_last;
    for (; k >= 0; k--) {
      dst += c->dstride[k];
      src += c->sstride[k];
      if (++idx[k] < c->count[k]) break;
      dst -= c->dstride[k] * c->count[k];
      src -= c->sstride[k] * c->count[k];
      idx[k] = 0;
    }
    if (k < 0) break;
  }
}

/* Doubling stops once the copied span reaches this many bytes; from there
 * the span is copied from the start again and again, so its source stays
 * in L1 and a large fill only writes memory instead of reading its own
 * first half back. */
#define REPLICATE_SPAN ((size_t)16 << 10)
/* Fills of at least this many bytes are split over the pool. */
#define REPLICATE_PARALLEL ((size_t)2 << 20)

typedef struct span_fill {
  char *dst;       /* the whole destination; its first span is filled */
  size_t span;     /* bytes, a whole number of blocks */
  size_t total;    /* bytes */
} span_fill;

/* Spans [first, end) of the destination, the last one cut at total. */
static void fill_spans(void *ctx, int64_t first, int64_t end) {
  const span_fill *f = ctx;
  for (int64_t i = first < 1 ? 1 : first; i < end; i++) {
    size_t at = (size_t)i * f->span;
    size_t n = f->total - at < f->span ? f->total - at : f->span;
    memcpy(f->dst + at, f->dst, n);
  }
}

/* dst holds one block of blk bytes; repeat it so dst holds n blocks. */
static void replicate(char *dst, size_t blk, int64_t n) {
  int64_t done = 1;
  while (done < n && (size_t)done * blk < REPLICATE_SPAN) {
    int64_t c = done < n - done ? done : n - done;
    memcpy(dst + (size_t)done * blk, dst, (size_t)c * blk);
    done += c;
  }
  if (done >= n) return;
  span_fill f = {dst, (size_t)done * blk, (size_t)n * blk};
  int64_t spans = (int64_t)((f.total + f.span - 1) / f.span);
  if (f.total >= REPLICATE_PARALLEL)
    shlo__parallel_for(spans, 16, fill_spans, &f);
  else
    fill_spans(&f, 1, spans);
}

/* Broadcast copy into a dense destination: source stride 0 marks a
 * broadcast dimension, filled by copying the first slice once and then
 * doubling it with memcpy. */
static void bcast_run(const shape_copy *c, int lvl, char *dst,
                      const char *src) {
  size_t es = c->es;
  if (lvl == c->rank) {
    memcpy(dst, src, es);
    return;
  }
  int64_t n = c->count[lvl], ss = c->sstride[lvl], ds = c->dstride[lvl];
  if (ss == 0) {
    bcast_run(c, lvl + 1, dst, src);
    replicate(dst, (size_t)ds, n);
    return;
  }
  if (lvl == c->rank - 1) {
    if (ss == (int64_t)es)
      memcpy(dst, src, (size_t)n * es);
    else
      copy_elems(dst, ds, src, ss, n, es);
    return;
  }
  for (int64_t i = 0; i < n; i++)
    bcast_run(c, lvl + 1, dst + i * ds, src + i * ss);
}

/* Fill n elements at dst with the element at val. */
static void fill_elems(char *dst, const void *val, int64_t n, size_t es) {
  if (n <= 0) return;
  memcpy(dst, val, es);
  replicate(dst, es, n);
}

/* ---- parameters ---- */

typedef struct shape_params {
  shlo_elem_type elem;          /* result element type */
  int rank;                     /* result rank */
  int64_t dims[SHLO_MAX_RANK];  /* result shape */
  const shlo_quant *quant;      /* result quantization (or NULL) */
  size_t es;
  shape_copy copy;
  int64_t src_off, dst_off;     /* bytes from the buffers' starts */
  /* dynamic_slice / dynamic_update_slice: operand shape, byte strides and
   * the extent of the moved box, for clamping the start indices */
  int64_t op_dims[SHLO_MAX_RANK];
  int64_t op_stride[SHLO_MAX_RANK]; /* bytes */
  int64_t box[SHLO_MAX_RANK];
  int first_index;              /* operand number of the first start index */
  bool index_vector;            /* one rank-1 index tensor, not scalars */
  /* iota / concatenate / get_dimension_size */
  int64_t outer, inner, n;
  int dim;
  int n_inputs;
  int64_t blk[];                /* concatenate: bytes per outer row, per input */
} shape_params;

static shape_params *params_new(shlo_step *step, const shlo_type *rt,
                                size_t extra) {
  shape_params *p = shlo__params_alloc(step, sizeof(shape_params) + extra);
  if (!p) return NULL;
  p->elem = rt->elem;
  p->rank = rt->rank;
  memcpy(p->dims, rt->dims, sizeof p->dims);
  p->quant = rt->quant;
  p->es = shlo_elem_size(rt->elem);
  return p;
}

/* The result tensor of a step (NULL after reporting ENOMEM). */
/* Every kernel here writes each element of its result (or has none), so
 * the result is not zeroed first. */
static shlo_value *result_new(const shape_params *p, const shlo_step *s,
                              shlo_exec *ex) {
  shlo_value *v = shlo__tensor_new_uninit(p->elem, p->rank, p->dims);
  if (!v) {
    shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory for the result");
    return NULL;
  }
  if (shlo_tensor_set_quant(v, p->quant) != SHLO_OK) {
    shlo_value_unref(v);
    shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory for the result");
    return NULL;
  }
  return v;
}

/* ---- compile-time helpers ---- */

static shlo_status tensor_type(shlo_compiler *cc, const shlo_op *op,
                               const shlo_type *t, const char *what) {
  char buf[128];
  if (!t || t->kind != SHLO_TYPE_TENSOR)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY, "%s is not a tensor", what);
  if (!shlo_type_is_static(t) || shlo_type_numel(t) < 0) {
    shlo_type_format(t, buf, sizeof buf);
    return shlo__cc_fail(cc, op, SHLO_EUNSUPPORTED,
                        "%s type %s: dynamic shapes are not supported", what,
                        buf);
  }
  return SHLO_OK;
}

/* Check operand i and result 0 are static tensors; return their types.
 * Both outputs are set on every path (NULL on the early error), so no
 * caller can read an indeterminate pointer whatever status it acts on. */
static shlo_status io_types(shlo_compiler *cc, const shlo_op *op, int i,
                            const shlo_type **ot, const shlo_type **rt) {
  shlo_status st;
  *ot = *rt = NULL;
  if (op->n_operands <= i || op->n_results < 1)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY, "wrong number of operands");
  *ot = shlo__cc_operand_type(cc, op, i);
  *rt = shlo__cc_result_type(cc, op, 0);
  if ((st = tensor_type(cc, op, *ot, "operand")) ||
      (st = tensor_type(cc, op, *rt, "result")))
    return st;
  return SHLO_OK;
}

/* Data movement needs the same element storage on both sides. */
static shlo_status same_elem(shlo_compiler *cc, const shlo_op *op,
                             const shlo_type *a, const shlo_type *b) {
  if (a->elem != b->elem)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "element types %s and %s differ",
                        shlo_elem_name(a->elem), shlo_elem_name(b->elem));
  return SHLO_OK;
}

/* The operand (operand 0) and result types of an op that moves data
 * without changing its element type. */
static shlo_status move_types(shlo_compiler *cc, const shlo_op *op,
                              const shlo_type **ot, const shlo_type **rt) {
  shlo_status st = io_types(cc, op, 0, ot, rt);
  return st ? st : same_elem(cc, op, *ot, *rt);
}

/* Ops whose result keeps the operand's rank. */
static shlo_status same_rank(shlo_compiler *cc, const shlo_op *op,
                             const shlo_type *ot, const shlo_type *rt) {
  if (rt->rank != ot->rank)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY, "operand and result ranks differ");
  return SHLO_OK;
}

/* Read an integer-list attribute of exactly n values.  A missing attribute
 * is accepted as empty when n is 0. */
static shlo_status get_ints(shlo_compiler *cc, const shlo_op *op,
                            const char *name, int64_t *out, int n) {
  const shlo_attr *a = shlo_op_attr(op, name);
  if (!a) {
    if (n == 0) return SHLO_OK;
    return shlo__cc_fail(cc, op, SHLO_EVERIFY, "missing attribute `%s`", name);
  }
  int64_t buf[SHLO_MAX_RANK + 1];
  int got = shlo_attr_i64s(a, buf, SHLO_MAX_RANK + 1);
  if (got < 0)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "attribute `%s` is not a list of integers", name);
  if (got != n)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "attribute `%s` has %d values, expected %d", name, got,
                        n);
  memcpy(out, buf, (size_t)n * sizeof *out);
  return SHLO_OK;
}

static shlo_status get_int(shlo_compiler *cc, const shlo_op *op,
                           const char *name, int64_t *out) {
  const shlo_attr *a = shlo_op_attr(op, name);
  if (!a)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY, "missing attribute `%s`", name);
  if (!shlo_attr_get_i64(a, out)) {
    /* accept a one-element list as well */
    int64_t buf[2];
    if (shlo_attr_i64s(a, buf, 2) != 1)
      return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                          "attribute `%s` is not an integer", name);
    *out = buf[0];
  }
  return SHLO_OK;
}

static shlo_status no_mem(shlo_compiler *cc, const shlo_op *op) {
  return shlo__cc_fail(cc, op, SHLO_ENOMEM, "out of memory");
}

/* ---- reshape ---- */

/* stablehlo.reshape: same elements, row-major order, new shape (C1: same
 * number of elements).  An operand that dies here and that no one else
 * holds becomes the result: only its shape changes (a transformer layer's
 * reshapes around its attention heads copied 22 MB a call, an LSTM step's
 * dynamic_slice 256 KiB a step).  Otherwise,
 * and for quantized values (whose per-axis scales name a dimension), one
 * memcpy. */
static shlo_status k_reshape(const shlo_step *s, shlo_value *const *in,
                             shlo_value **out, shlo_exec *ex) {
  const shape_params *p = s->params;
  shlo_value *taken = p->quant || in[0]->quant || in[0]->elem != p->elem
                          ? NULL
                          : shlo__exec_take_input_shape(s, in, 0);
  if (taken) {
    taken->rank = p->rank;
    memcpy(taken->dims, p->dims, sizeof taken->dims);
    out[0] = taken;
    return SHLO_OK;
  }
  shlo_value *v = result_new(p, s, ex);
  if (!v) return SHLO_ENOMEM;
  if (v->nbytes) memcpy(v->data, in[0]->data, v->nbytes);
  out[0] = v;
  return SHLO_OK;
}

shlo_status shlo__compile_reshape(shlo_compiler *cc, const shlo_op *op,
                                 shlo_step *step) {
  const shlo_type *ot, *rt;
  shlo_status st;
  if ((st = move_types(cc, op, &ot, &rt))) return st;
  if (shlo_type_numel(ot) != shlo_type_numel(rt))
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "(C2) operand has %lld elements, result %lld",
                        (long long)shlo_type_numel(ot),
                        (long long)shlo_type_numel(rt));
  if (!params_new(step, rt, 0)) return no_mem(cc, op);
  step->fn = k_reshape;
  return SHLO_OK;
}

/* ---- the plain box-copy kernel (slice, reverse, transpose) ---- */

static shlo_status k_copy(const shlo_step *s, shlo_value *const *in,
                          shlo_value **out, shlo_exec *ex) {
  const shape_params *p = s->params;
  shlo_value *v = result_new(p, s, ex);
  if (!v) return SHLO_ENOMEM;
  copy_run(&p->copy, (char *)v->data + p->dst_off,
           (const char *)in[0]->data + p->src_off);
  out[0] = v;
  return SHLO_OK;
}

/* stablehlo.slice: result[i] = operand[start + i * strides] for
 * start_indices <= index < limit_indices (C2-C6). */
shlo_status shlo__compile_slice(shlo_compiler *cc, const shlo_op *op,
                               shlo_step *step) {
  const shlo_type *ot, *rt;
  shlo_status st;
  if ((st = move_types(cc, op, &ot, &rt))) return st;
  int r = ot->rank;
  int64_t start[SHLO_MAX_RANK], limit[SHLO_MAX_RANK], strides[SHLO_MAX_RANK];
  if ((st = get_ints(cc, op, "start_indices", start, r)) ||
      (st = get_ints(cc, op, "limit_indices", limit, r)))
    return st;
  if (shlo_op_attr(op, "strides")) {
    if ((st = get_ints(cc, op, "strides", strides, r))) return st;
  } else {
    for (int i = 0; i < r; i++) strides[i] = 1;
  }
  if ((st = same_rank(cc, op, ot, rt))) return st;
  int64_t ostr[SHLO_MAX_RANK], rstr[SHLO_MAX_RANK], sstr[SHLO_MAX_RANK];
  shlo_strides(r, ot->dims, ostr);
  shlo_strides(r, rt->dims, rstr);
  int64_t off = 0;
  for (int i = 0; i < r; i++) {
    /* verify_slice checked C3 (0 <= start <= limit <= dim), C4 (stride >
     * 0) and C5 (the result's extent). */
    assert(start[i] >= 0 && start[i] <= limit[i] && limit[i] <= ot->dims[i]);
    assert(strides[i] > 0);
    int64_t want = (limit[i] - start[i] + strides[i] - 1) / strides[i];
    assert(rt->dims[i] == want);
    sstr[i] = ostr[i] * strides[i];
    if (want > 0) off += start[i] * ostr[i];
  }
  shape_params *p = params_new(step, rt, 0);
  if (!p) return no_mem(cc, op);
  copy_init(&p->copy, r, rt->dims, sstr, rstr, p->es);
  p->src_off = off * (int64_t)p->es;
  step->fn = k_copy;
  return SHLO_OK;
}

/* stablehlo.reverse: reverses the order of elements along `dimensions`
 * (C2 unique, C3 in range).  Reversed dimensions read with a negative
 * stride from their last element. */
shlo_status shlo__compile_reverse(shlo_compiler *cc, const shlo_op *op,
                                 shlo_step *step) {
  const shlo_type *ot, *rt;
  shlo_status st;
  if ((st = move_types(cc, op, &ot, &rt))) return st;
  /* verify_reverse checked C1 (the result has the operand's type). */
  assert(ot->rank == rt->rank &&
         !memcmp(ot->dims, rt->dims, (size_t)ot->rank * sizeof(int64_t)));
  int r = ot->rank;
  const shlo_attr *a = shlo_op_attr(op, "dimensions");
  int64_t dims[SHLO_MAX_RANK + 1];
  int n = a ? shlo_attr_i64s(a, dims, SHLO_MAX_RANK + 1) : 0;
  /* The verifier skips a `dimensions` that is not an integer list. */
  if (n < 0)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY, "bad attribute `dimensions`");
  bool rev[SHLO_MAX_RANK] = {false};
  for (int i = 0; i < n; i++) {
    /* verify_reverse checked C2 (unique) and C3 (in range). */
    assert(dims[i] >= 0 && dims[i] < r && !rev[dims[i]]);
    rev[dims[i]] = true;
  }
  int64_t str[SHLO_MAX_RANK], sstr[SHLO_MAX_RANK];
  shlo_strides(r, rt->dims, str);
  int64_t off = 0;
  bool empty = shlo_type_numel(rt) == 0;
  for (int i = 0; i < r; i++) {
    sstr[i] = rev[i] ? -str[i] : str[i];
    if (rev[i] && !empty) off += (rt->dims[i] - 1) * str[i];
  }
  shape_params *p = params_new(step, rt, 0);
  if (!p) return no_mem(cc, op);
  copy_init(&p->copy, r, rt->dims, sstr, str, p->es);
  p->src_off = off * (int64_t)p->es;
  step->fn = k_copy;
  return SHLO_OK;
}

/* stablehlo.transpose: result[i0, ..., iN] = operand[j] where
 * j[permutation[k]] = i[k] (C2 permutation of 0..rank-1, C4 shape).  Reads
 * with permuted strides; trailing dimensions the permutation keeps in place
 * merge into one memcpy run. */
shlo_status shlo__compile_transpose(shlo_compiler *cc, const shlo_op *op,
                                   shlo_step *step) {
  const shlo_type *ot, *rt;
  shlo_status st;
  if ((st = move_types(cc, op, &ot, &rt))) return st;
  int r = ot->rank;
  int64_t perm[SHLO_MAX_RANK];
  if ((st = get_ints(cc, op, "permutation", perm, r))) return st;
  /* verify_transpose checked C2 (a permutation of 0..rank-1) and C3 (the
   * result is the operand permuted). */
  assert(rt->rank == r);
  for (int i = 0; i < r; i++)
    assert(perm[i] >= 0 && perm[i] < r && rt->dims[i] == ot->dims[perm[i]]);
  int64_t ostr[SHLO_MAX_RANK], rstr[SHLO_MAX_RANK], sstr[SHLO_MAX_RANK];
  shlo_strides(r, ot->dims, ostr);
  shlo_strides(r, rt->dims, rstr);
  for (int i = 0; i < r; i++) sstr[i] = ostr[perm[i]];
  shape_params *p = params_new(step, rt, 0);
  if (!p) return no_mem(cc, op);
  copy_init(&p->copy, r, rt->dims, sstr, rstr, p->es);
  step->fn = k_copy;
  return SHLO_OK;
}

/* ---- broadcast_in_dim ---- */

static shlo_status k_broadcast(const shlo_step *s, shlo_value *const *in,
                               shlo_value **out, shlo_exec *ex) {
  const shape_params *p = s->params;
  shlo_value *v = result_new(p, s, ex);
  if (!v) return SHLO_ENOMEM;
  if (!p->copy.empty) bcast_run(&p->copy, 0, v->data, in[0]->data);
  out[0] = v;
  return SHLO_OK;
}

/* stablehlo.broadcast_in_dim: operand dimension i becomes result dimension
 * broadcast_dimensions[i] (C2 size, C3 in range, C4 unique); an operand
 * dimension of extent 1 repeats along its result dimension (C5), as do
 * result dimensions no operand dimension maps to. */
shlo_status shlo__compile_broadcast_in_dim(shlo_compiler *cc,
                                          const shlo_op *op, shlo_step *step) {
  const shlo_type *ot, *rt;
  shlo_status st;
  if ((st = move_types(cc, op, &ot, &rt))) return st;
  int64_t bd[SHLO_MAX_RANK];
  if ((st = get_ints(cc, op, "broadcast_dimensions", bd, ot->rank))) return st;
  int64_t ostr[SHLO_MAX_RANK], rstr[SHLO_MAX_RANK], sstr[SHLO_MAX_RANK];
  shlo_strides(ot->rank, ot->dims, ostr);
  shlo_strides(rt->rank, rt->dims, rstr);
  for (int j = 0; j < rt->rank; j++) sstr[j] = 0;
  bool used[SHLO_MAX_RANK] = {false};
  for (int i = 0; i < ot->rank; i++) {
    if (bd[i] < 0 || bd[i] >= rt->rank || used[bd[i]])
      return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                          "(C3, C4) broadcast dimension %lld is out of range "
                          "or repeated",
                          (long long)bd[i]);
    used[bd[i]] = true;
    int64_t od = ot->dims[i], rd = rt->dims[bd[i]];
    if (od != 1 && od != rd)
      return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                          "(C5) operand dimension %d (%lld) does not broadcast "
                          "to result dimension %lld (%lld)",
                          i, (long long)od, (long long)bd[i], (long long)rd);
    if (od != 1) sstr[bd[i]] = ostr[i];
  }
  shape_params *p = params_new(step, rt, 0);
  if (!p) return no_mem(cc, op);
  copy_init(&p->copy, rt->rank, rt->dims, sstr, rstr, p->es);
  step->fn = k_broadcast;
  return SHLO_OK;
}

/* ---- concatenate ---- */

static shlo_status k_concatenate(const shlo_step *s, shlo_value *const *in,
                                 shlo_value **out, shlo_exec *ex) {
  const shape_params *p = s->params;
  shlo_value *v = result_new(p, s, ex);
  if (!v) return SHLO_ENOMEM;
  char *dst = v->data;
  if (v->nbytes) {
    for (int64_t o = 0; o < p->outer; o++)
      for (int k = 0; k < p->n_inputs; k++) {
        size_t b = (size_t)p->blk[k];
        if (!b) continue;
        memcpy(dst, (const char *)in[k]->data + (size_t)o * b, b);
        dst += b;
      }
  }
  out[0] = v;
  return SHLO_OK;
}

/* stablehlo.concatenate: inputs joined along `dimension` (C1-C6).  Each
 * row of the dimensions before it is one contiguous block per input. */
shlo_status shlo__compile_concatenate(shlo_compiler *cc, const shlo_op *op,
                                     shlo_step *step) {
  shlo_status st;
  /* verify_concatenate checked C1-C5: at least one input, element types,
   * ranks and the other dimensions agree, `dimension` is in range and the
   * result is the inputs joined along it. */
  assert(op->n_operands >= 1 && op->n_results == 1);
  const shlo_type *rt = shlo__cc_result_type(cc, op, 0);
  if ((st = tensor_type(cc, op, rt, "result"))) return st;
  int64_t dim;
  /* The verifier reads a missing `dimension` as 0; refuse it here. */
  if ((st = get_int(cc, op, "dimension", &dim))) return st;
  assert(dim >= 0 && dim < rt->rank);
  int n = op->n_operands;
  shape_params *p = params_new(step, rt, (size_t)n * sizeof(int64_t));
  if (!p) return no_mem(cc, op);
  int64_t inner = 1, outer = 1, total = 0;
  for (int i = 0; i < rt->rank; i++) {
    if (i < dim) outer *= rt->dims[i];
    if (i > dim) inner *= rt->dims[i];
  }
  for (int k = 0; k < n; k++) {
    const shlo_type *t = shlo__cc_operand_type(cc, op, k);
    if ((st = tensor_type(cc, op, t, "input"))) return st;
    assert(t->elem == rt->elem && t->rank == rt->rank);
    total += t->dims[dim];
    p->blk[k] = t->dims[dim] * inner * (int64_t)p->es;
  }
  assert(total == rt->dims[dim]);
  (void)total;
  p->outer = outer;
  p->inner = inner;
  p->n_inputs = n;
  p->dim = (int)dim;
  step->fn = k_concatenate;
  return SHLO_OK;
}

/* ---- dynamic_slice / dynamic_update_slice ---- */

/* Value of a start index: integer tensor v (the verifier checks the
 * type), element i. */
static int64_t index_value(const shlo_value *v, int64_t i) {
  shlo__int_load_fn load = shlo__int_loader(v->elem);
  assert(load);
  return load(v->data, i);
}

/* Byte offset into the operand of the clamped start indices. */
static int64_t start_offset(const shape_params *p, shlo_value *const *in) {
  int64_t off = 0;
  for (int i = 0; i < p->rank; i++) {
    int64_t s = p->index_vector ? index_value(in[p->first_index], i)
                                : index_value(in[p->first_index + i], 0);
    int64_t hi = p->op_dims[i] - p->box[i];
    if (s > hi) s = hi;
    if (s < 0) s = 0;
    off += s * p->op_stride[i];
  }
  return off;
}

/* Whether copy c is one contiguous run of bytes on both sides. */
static bool copy_is_one_run(const shape_copy *c) {
  return !c->empty && c->rank == 1 && c->sstride[0] == (int64_t)c->es &&
         c->dstride[0] == (int64_t)c->es;
}

static shlo_status k_dynamic_slice(const shlo_step *s, shlo_value *const *in,
                                   shlo_value **out, shlo_exec *ex) {
  const shape_params *p = s->params;
  /* whole rows of the operand: its elements where they are (a view),
   * when large and aligned enough (shlo__tensor_view says) */
  if (copy_is_one_run(&p->copy) && !p->quant) {
    shlo_value *v = shlo__tensor_view(in[0], (size_t)start_offset(p, in),
                                      p->elem, p->rank, p->dims);
    if (v) {
      out[0] = v;
      return SHLO_OK;
    }
  }
  shlo_value *v = result_new(p, s, ex);
  if (!v) return SHLO_ENOMEM;
  if (!p->copy.empty)
    copy_run(&p->copy, v->data,
             (const char *)in[0]->data + start_offset(p, in));
  out[0] = v;
  return SHLO_OK;
}

static shlo_status k_dynamic_update_slice(const shlo_step *s,
                                          shlo_value *const *in,
                                          shlo_value **out, shlo_exec *ex) {
  const shape_params *p = s->params;
  shlo_value *v = result_new(p, s, ex);
  if (!v) return SHLO_ENOMEM;
  if (v->nbytes) memcpy(v->data, in[0]->data, v->nbytes);
  if (!p->copy.empty)
    copy_run(&p->copy, (char *)v->data + start_offset(p, in), in[1]->data);
  out[0] = v;
  return SHLO_OK;
}

/* Check the start index operands from `first` on: rank scalar integer
 * tensors, or (older producers) one rank-1 integer tensor of rank values. */
static shlo_status index_operands(shlo_compiler *cc, const shlo_op *op,
                                  int first, int rank, shape_params *p) {
  shlo_status st;
  p->first_index = first;
  int n = op->n_operands - first;
  if (n == 1 && rank != 1) {
    const shlo_type *t = shlo__cc_operand_type(cc, op, first);
    if ((st = tensor_type(cc, op, t, "start indices"))) return st;
    if (t->rank == 1 && t->dims[0] == rank && shlo_elem_is_int(t->elem)) {
      p->index_vector = true;
      return SHLO_OK;
    }
  }
  if (n != rank)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "(C2) %d start indices for rank %d", n, rank);
  for (int i = 0; i < n; i++) {
    const shlo_type *t = shlo__cc_operand_type(cc, op, first + i);
    if ((st = tensor_type(cc, op, t, "start index"))) return st;
    if (t->rank != 0 || !shlo_elem_is_int(t->elem))
      return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                          "(C3) start index %d is not a scalar integer tensor",
                          i);
  }
  return SHLO_OK;
}

/* stablehlo.dynamic_slice: the box of `slice_sizes` at the start indices,
 * each clamped to [0, dim - size] (C1-C5). */
shlo_status shlo__compile_dynamic_slice(shlo_compiler *cc, const shlo_op *op,
                                       shlo_step *step) {
  const shlo_type *ot, *rt;
  shlo_status st;
  if ((st = move_types(cc, op, &ot, &rt))) return st;
  int r = ot->rank;
  int64_t sizes[SHLO_MAX_RANK];
  if ((st = get_ints(cc, op, "slice_sizes", sizes, r))) return st;
  if ((st = same_rank(cc, op, ot, rt))) return st;
  for (int i = 0; i < r; i++)
    if (sizes[i] < 0 || sizes[i] > ot->dims[i] || rt->dims[i] != sizes[i])
      return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                          "(C4, C5) dimension %d: slice size %lld, operand "
                          "%lld, result %lld",
                          i, (long long)sizes[i], (long long)ot->dims[i],
                          (long long)rt->dims[i]);
  shape_params *p = params_new(step, rt, 0);
  if (!p) return no_mem(cc, op);
  if ((st = index_operands(cc, op, 1, r, p))) return st;
  int64_t ostr[SHLO_MAX_RANK], rstr[SHLO_MAX_RANK];
  shlo_strides(r, ot->dims, ostr);
  shlo_strides(r, rt->dims, rstr);
  for (int i = 0; i < r; i++) {
    p->op_dims[i] = ot->dims[i];
    p->op_stride[i] = ostr[i] * (int64_t)p->es;
    p->box[i] = sizes[i];
  }
  copy_init(&p->copy, r, sizes, ostr, rstr, p->es);
  step->fn = k_dynamic_slice;
  return SHLO_OK;
}

/* stablehlo.dynamic_update_slice: the operand with the update written at
 * the start indices, each clamped to [0, dim - update dim] (C1-C6). */
shlo_status shlo__compile_dynamic_update_slice(shlo_compiler *cc,
                                              const shlo_op *op,
                                              shlo_step *step) {
  const shlo_type *ot, *rt, *ut;
  shlo_status st;
  if ((st = move_types(cc, op, &ot, &rt))) return st;
  if (op->n_operands < 2)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY, "missing the update operand");
  ut = shlo__cc_operand_type(cc, op, 1);
  if ((st = tensor_type(cc, op, ut, "update")) ||
      (st = same_elem(cc, op, ut, rt)))
    return st;
  int r = ot->rank;
  if (rt->rank != r || ut->rank != r)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "(C1, C3) operand, update and result ranks differ");
  for (int i = 0; i < r; i++)
    if (rt->dims[i] != ot->dims[i] || ut->dims[i] > ot->dims[i])
      return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                          "(C1, C6) dimension %d: operand %lld, update %lld, "
                          "result %lld",
                          i, (long long)ot->dims[i], (long long)ut->dims[i],
                          (long long)rt->dims[i]);
  shape_params *p = params_new(step, rt, 0);
  if (!p) return no_mem(cc, op);
  if ((st = index_operands(cc, op, 2, r, p))) return st;
  int64_t ostr[SHLO_MAX_RANK], ustr[SHLO_MAX_RANK];
  shlo_strides(r, ot->dims, ostr);
  shlo_strides(r, ut->dims, ustr);
  for (int i = 0; i < r; i++) {
    p->op_dims[i] = ot->dims[i];
    p->op_stride[i] = ostr[i] * (int64_t)p->es;
    p->box[i] = ut->dims[i];
  }
  copy_init(&p->copy, r, ut->dims, ustr, ostr, p->es);
  step->fn = k_dynamic_update_slice;
  return SHLO_OK;
}

/* ---- get_dimension_size ---- */

static shlo_status k_get_dimension_size(const shlo_step *s,
                                        shlo_value *const *in,
                                        shlo_value **out, shlo_exec *ex) {
  const shape_params *p = s->params;
  shlo_value *v = shlo_tensor_new(SHLO_SI32, 0, NULL);
  if (!v) return shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory");
  *(int32_t *)v->data = (int32_t)in[0]->dims[p->dim];
  out[0] = v;
  return SHLO_OK;
}

/* stablehlo.get_dimension_size: the extent of `dimension` as tensor<i32>
 * (C1).  Read from the runtime value, so dynamic operands work too. */
shlo_status shlo__compile_get_dimension_size(shlo_compiler *cc,
                                            const shlo_op *op,
                                            shlo_step *step) {
  shlo_status st;
  /* verify_get_dimension_size checked one tensor operand, the tensor<i32>
   * result (O1) and C1 (`dimension` in range). */
  assert(op->n_operands == 1 && op->n_results == 1);
  const shlo_type *ot = shlo__cc_operand_type(cc, op, 0);
  const shlo_type *rt = shlo__cc_result_type(cc, op, 0);
  assert(ot->kind == SHLO_TYPE_TENSOR && rt->rank == 0 &&
         rt->elem == SHLO_SI32);
  if ((st = tensor_type(cc, op, rt, "result"))) return st;
  int64_t dim;
  /* The verifier reads a missing `dimension` as 0; refuse it here. */
  if ((st = get_int(cc, op, "dimension", &dim))) return st;
  assert(dim >= 0 && dim < ot->rank);
  (void)ot;
  shape_params *p = params_new(step, rt, 0);
  if (!p) return no_mem(cc, op);
  p->dim = (int)dim;
  step->fn = k_get_dimension_size;
  return SHLO_OK;
}

/* ---- iota ---- */

/* Store index j as an element of type t at p: integers wrap, floats round
 * to nearest even, complex numbers get (j, 0). */
static void iota_value(shlo_elem_type t, int64_t j, void *p) {
  switch (shlo_elem_class_of(t)) {
  case SHLO_CLASS_FLOAT:
    shlo__float_store(t, (double)j, p);
    return;
  case SHLO_CLASS_COMPLEX:
    if (t == SHLO_C64) {
      float c[2] = {(float)j, 0.0f};
      memcpy(p, c, sizeof c);
    } else {
      double c[2] = {(double)j, 0.0};
      memcpy(p, c, sizeof c);
    }
    return;
  default: {
    /* little-endian: the low bytes of the wrapped value are its storage */
    int64_t w = shlo_int_wrap(t, j);
    memcpy(p, &w, shlo_elem_size(t));
    return;
  }
  }
}

static shlo_status k_iota(const shlo_step *s, shlo_value *const *in,
                          shlo_value **out, shlo_exec *ex) {
  (void)in;
  const shape_params *p = s->params;
  shlo_value *v = result_new(p, s, ex);
  if (!v) return SHLO_ENOMEM;
  if (v->nbytes) {
    /* one row of the iota dimension (with its inner block), converted once
     * per value, then repeated for the outer dimensions */
    char *d = v->data;
    size_t run = (size_t)p->inner * p->es;
    for (int64_t j = 0; j < p->n; j++) {
      iota_value(p->elem, j, d + (size_t)j * run);
      replicate(d + (size_t)j * run, p->es, p->inner);
    }
    replicate(d, (size_t)p->n * run, p->outer);
  }
  out[0] = v;
  return SHLO_OK;
}

/* stablehlo.iota: result[i] = i[iota_dimension] (C1). */
shlo_status shlo__compile_iota(shlo_compiler *cc, const shlo_op *op,
                              shlo_step *step) {
  shlo_status st;
  if (op->n_results != 1)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY, "wrong number of results");
  const shlo_type *rt = shlo__cc_result_type(cc, op, 0);
  if ((st = tensor_type(cc, op, rt, "result"))) return st;
  if (rt->quant)
    return shlo__cc_fail(cc, op, SHLO_EUNSUPPORTED,
                        "quantized iota is not supported");
  int64_t dim;
  if ((st = get_int(cc, op, "iota_dimension", &dim))) return st;
  if (dim < 0 || dim >= rt->rank)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "(C1) iota_dimension %lld is out of range for rank %d",
                        (long long)dim, rt->rank);
  shape_params *p = params_new(step, rt, 0);
  if (!p) return no_mem(cc, op);
  p->outer = 1;
  p->inner = 1;
  for (int i = 0; i < rt->rank; i++) {
    if (i < dim) p->outer *= rt->dims[i];
    if (i > dim) p->inner *= rt->dims[i];
  }
  p->n = rt->dims[dim];
  p->dim = (int)dim;
  step->fn = k_iota;
  return SHLO_OK;
}

/* ---- pad ---- */

static shlo_status k_pad(const shlo_step *s, shlo_value *const *in,
                         shlo_value **out, shlo_exec *ex) {
  const shape_params *p = s->params;
  shlo_value *v = result_new(p, s, ex);
  if (!v) return SHLO_ENOMEM;
  if (v->numel) {
    fill_elems(v->data, in[1]->data, v->numel, p->es);
    copy_run(&p->copy, (char *)v->data + p->dst_off,
             (const char *)in[0]->data + p->src_off);
  }
  out[0] = v;
  return SHLO_OK;
}

/* stablehlo.pad: operand element i lands at low + i * (interior + 1);
 * everything else is the padding value (C1-C4).  Negative low/high cut
 * elements off: only the operand elements that land inside the result are
 * copied, after the result is filled with the padding value. */
shlo_status shlo__compile_pad(shlo_compiler *cc, const shlo_op *op,
                             shlo_step *step) {
  const shlo_type *ot, *rt, *vt;
  shlo_status st;
  if ((st = move_types(cc, op, &ot, &rt))) return st;
  /* verify_pad checked two operands, a rank-0 padding value (I2) of the
   * operand's element type (C1), the attribute lengths (C2), interior >= 0
   * (C3) and every result dimension (C4). */
  assert(op->n_operands == 2);
  vt = shlo__cc_operand_type(cc, op, 1);
  if ((st = tensor_type(cc, op, vt, "padding value"))) return st;
  assert(vt->rank == 0 && vt->elem == rt->elem);
  int r = ot->rank;
  int64_t lo[SHLO_MAX_RANK], hi[SHLO_MAX_RANK], inter[SHLO_MAX_RANK];
  if ((st = get_ints(cc, op, "edge_padding_low", lo, r)) ||
      (st = get_ints(cc, op, "edge_padding_high", hi, r)))
    return st;
  if (shlo_op_attr(op, "interior_padding")) {
    if ((st = get_ints(cc, op, "interior_padding", inter, r))) return st;
  } else {
    for (int i = 0; i < r; i++) inter[i] = 0;
  }
  assert(rt->rank == r);
  int64_t ostr[SHLO_MAX_RANK], rstr[SHLO_MAX_RANK];
  int64_t cnt[SHLO_MAX_RANK], sstr[SHLO_MAX_RANK], dstr[SHLO_MAX_RANK];
  shlo_strides(r, ot->dims, ostr);
  shlo_strides(r, rt->dims, rstr);
  int64_t soff = 0, doff = 0;
  bool empty = false;
  for (int i = 0; i < r; i++) {
    int64_t d = ot->dims[i], R = rt->dims[i];
    assert(inter[i] >= 0 && R >= 0 &&
           R == lo[i] + hi[i] + d + (d > 0 ? (d - 1) * inter[i] : 0));
    /* operand indices j with 0 <= lo + j * step < R */
    int64_t step_ = inter[i] + 1;
    int64_t jmin = lo[i] >= 0 ? 0 : (-lo[i] + step_ - 1) / step_;
    int64_t jmax = R - 1 - lo[i] < 0 ? -1 : (R - 1 - lo[i]) / step_;
    if (jmax > d - 1) jmax = d - 1;
    cnt[i] = jmax >= jmin ? jmax - jmin + 1 : 0;
    if (cnt[i] == 0) {
      empty = true;
      continue;
    }
    sstr[i] = ostr[i];
    dstr[i] = rstr[i] * step_;
    soff += jmin * ostr[i];
    doff += (lo[i] + jmin * step_) * rstr[i];
  }
  shape_params *p = params_new(step, rt, 0);
  if (!p) return no_mem(cc, op);
  if (empty) {
    for (int i = 0; i < r; i++) {
      cnt[i] = 0;
      sstr[i] = dstr[i] = 0;
    }
    soff = doff = 0;
  }
  copy_init(&p->copy, r, cnt, sstr, dstr, p->es);
  p->src_off = soff * (int64_t)p->es;
  p->dst_off = doff * (int64_t)p->es;
  step->fn = k_pad;
  return SHLO_OK;
}
