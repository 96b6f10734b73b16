/* SPDX-License-Identifier: Apache-2.0 */
/* Runtime values: allocation, reference counting, slow accessors. */
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "core/context_int.h"
#include "core/floatfmt.h"
#include "core/membudget.h"
#include "core/tensor_uninit.h"
#include "core/tensor_view.h"
#include "core/value.h"
#include "core/value_quant.h"
#include "shlo/tensor.h"

#define SHLO_ALIGN 64

static shlo_value *value_alloc(shlo_type_kind kind) {
  shlo_context *ctx = shlo__ctx_current();
  shlo_value *v = shlo__ctx_calloc(ctx, 1, sizeof *v);
  if (!v) return NULL;
  atomic_init(&v->refs, 1);
  v->kind = kind;
  v->ctx = ctx;
  return v;
}

/* Small tensors (scalars above all: loop counters, region arguments) live
 * in the same allocation as their header, which halves the allocations of
 * scalar-heavy code.  The header is padded so the data stays aligned. */
#define SHLO_INLINE_MAX 256
#define SHLO_HEADER ((sizeof(shlo_value) + SHLO_ALIGN - 1) / SHLO_ALIGN * SHLO_ALIGN)

/* Large freed buffers are kept for reuse by the context they came from
 * (core/context.c); this hands back the default context's. */
void shlo_buffer_cache_release(void) {
  shlo__ctx_cache_release(shlo__ctx_default());
}

/* ---- quantization parameters (core/value_quant.h) ---- */

/* The heap copy a value's `quant` points at: the parameters, their scales
 * and zero points in one block, with the count of values sharing it. */
typedef struct shared_quant {
  atomic_int refs;
  shlo_context *ctx; /* whose allocator it came from */
  shlo_quant q;
} shared_quant;

static shared_quant *shared_of(const shlo_quant *q) {
  return (shared_quant *)((char *)q - offsetof(shared_quant, q));
}

static void quant_release(const shlo_quant *q) {
  if (!q) return;
  shared_quant *sq = shared_of(q);
  if (atomic_fetch_sub_explicit(&sq->refs, 1, memory_order_acq_rel) == 1)
    shlo__ctx_free(sq->ctx, sq);
}

shlo_status shlo_tensor_set_quant(shlo_value *v, const shlo_quant *q) {
  quant_release(v->quant);
  v->quant = NULL;
  if (!q) return SHLO_OK;
  size_t n = q->n > 0 ? (size_t)q->n : 0;
  shared_quant *sq = shlo__ctx_malloc(
      v->ctx, sizeof *sq + n * (sizeof(double) + sizeof(int64_t)));
  if (!sq) return SHLO_ENOMEM;
  atomic_init(&sq->refs, 1);
  sq->ctx = v->ctx;
  sq->q = *q;
  sq->q.scales = (double *)(sq + 1);
  sq->q.zero_points = (int64_t *)(sq->q.scales + n);
  if (n) {
    memcpy(sq->q.scales, q->scales, n * sizeof(double));
    memcpy(sq->q.zero_points, q->zero_points, n * sizeof(int64_t));
  }
  v->quant = &sq->q;
  return SHLO_OK;
}

void shlo__value_share_quant(shlo_value *dst, const shlo_value *src) {
  if (dst->quant == src->quant) return;
  quant_release(dst->quant);
  dst->quant = src->quant;
  if (dst->quant)
    atomic_fetch_add_explicit(&shared_of(dst->quant)->refs, 1,
                              memory_order_relaxed);
}

/* Whether v's data shares its header's block: decided by the size alone,
 * as tensor_new decides it.  (Not by comparing addresses: a separately
 * allocated buffer can land right behind its header, and then looked
 * inline, and was freed with the header -- an allocator with a header of
 * its own per block made that happen.) */
static bool data_is_inline(const shlo_value *v) {
  size_t cap = (v->nbytes + SHLO_ALIGN - 1) / SHLO_ALIGN * SHLO_ALIGN;
  return v->kind == SHLO_TYPE_TENSOR && (cap ? cap : SHLO_ALIGN) <= SHLO_INLINE_MAX;
}

/* A new tensor; its data zeroed when `zero`, else only the padding past
 * its last element is. */
/* The elements of a tensor of elem and dims in *numel; false for a bad
 * element type, rank or dimension, or a count past int64. */
static bool shape_numel(shlo_elem_type elem, int rank, const int64_t *dims,
                        int64_t *numel) {
  if (rank < 0 || rank > SHLO_MAX_RANK || (unsigned)elem >= SHLO_ELEM_COUNT)
    return false;
  *numel = 1;
  for (int i = 0; i < rank; i++) {
    if (dims[i] < 0) return false;
    if (dims[i] && *numel > INT64_MAX / dims[i]) return false;
    *numel *= dims[i];
  }
  return true;
}

/* A tensor header's shape fields. */
static void set_shape(shlo_value *v, shlo_elem_type elem, int rank,
                      const int64_t *dims, int64_t numel, size_t nbytes) {
  v->kind = SHLO_TYPE_TENSOR;
  v->elem = elem;
  v->rank = rank;
  if (rank) memcpy(v->dims, dims, (size_t)rank * sizeof *dims);
  v->numel = numel;
  v->nbytes = nbytes;
}

static shlo_value *tensor_new(shlo_elem_type elem, int rank,
                              const int64_t *dims, bool zero) {
  int64_t numel;
  if (!shape_numel(elem, rank, dims, &numel)) return NULL;
  size_t esize = shlo_elem_size(elem);
  if ((uint64_t)numel > SIZE_MAX / esize - SHLO_ALIGN - SHLO_HEADER)
    return NULL;
  size_t nbytes = (size_t)numel * esize;
  /* Round up so aligned_alloc's size is a multiple of the alignment and a
   * zero-element tensor still has a valid pointer. */
  size_t cap = (nbytes + SHLO_ALIGN - 1) / SHLO_ALIGN * SHLO_ALIGN;
  if (!cap) cap = SHLO_ALIGN;
  shlo_mem_budget *budget;
  if (!shlo__budget_charge((int64_t)cap, &budget)) return NULL;
  shlo_context *ctx = shlo__ctx_current();
  shlo_value *v;
  if (cap <= SHLO_INLINE_MAX) {
    v = shlo__ctx_data_alloc(ctx, SHLO_HEADER + cap);
    if (!v) goto fail;
    memset(v, 0, SHLO_HEADER + cap);
    v->data = (char *)v + SHLO_HEADER;
  } else {
    v = shlo__ctx_calloc(ctx, 1, sizeof *v);
    if (!v) goto fail;
    v->data = shlo__ctx_data_alloc(ctx, cap);
    if (!v->data) {
      shlo__ctx_free(ctx, v);
      goto fail;
    }
    if (zero) memset(v->data, 0, cap);
    else memset((char *)v->data + nbytes, 0, cap - nbytes);
  }
  v->budget = budget;
  v->ctx = ctx;
  atomic_init(&v->refs, 1);
  set_shape(v, elem, rank, dims, numel, nbytes);
  return v;
fail:
  shlo__budget_uncharge(budget, (int64_t)cap);
  return NULL;
}

shlo_value *shlo_tensor_new(shlo_elem_type elem, int rank,
                            const int64_t *dims) {
  return tensor_new(elem, rank, dims, true);
}

shlo_value *shlo__tensor_new_uninit(shlo_elem_type elem, int rank,
                                    const int64_t *dims) {
  return tensor_new(elem, rank, dims, false);
}

bool shlo__tensor_adopt(shlo_value *v, void *data) {
  /* data is aligned_alloc's: only a tensor of the C library's may take it */
  if (v->kind != SHLO_TYPE_TENSOR || data_is_inline(v) || v->owner ||
      (v->ctx && v->ctx->custom_alloc))
    return false;
  size_t cap = (v->nbytes + SHLO_ALIGN - 1) / SHLO_ALIGN * SHLO_ALIGN;
  free(v->data); /* untouched but for its padding: not worth the cache */
  v->data = data;
  memset((char *)data + v->nbytes, 0, cap - v->nbytes);
  return true;
}

/* The bytes tensor_new charged for v. */
static int64_t charged_bytes(const shlo_value *v) {
  size_t cap = (v->nbytes + SHLO_ALIGN - 1) / SHLO_ALIGN * SHLO_ALIGN;
  return (int64_t)(cap ? cap : SHLO_ALIGN);
}

shlo_value *shlo_context_tensor_new(shlo_context *ctx, shlo_elem_type elem,
                                    int rank, const int64_t *dims) {
  shlo_context *prev = shlo__ctx_swap(ctx);
  shlo_value *v = tensor_new(elem, rank, dims, true);
  shlo__ctx_swap(prev);
  return v;
}

shlo_value *shlo__tensor_view(shlo_value *of, size_t offset,
                              shlo_elem_type elem, int rank,
                              const int64_t *dims) {
  int64_t numel;
  if (of->kind != SHLO_TYPE_TENSOR || of->quant ||
      !shape_numel(elem, rank, dims, &numel))
    return NULL;
  shlo_value *owner = of->owner ? of->owner : of;
  /* where the view starts in its owner's buffer */
  size_t from = (size_t)((const char *)of->data - (const char *)owner->data);
  size_t esize = shlo_elem_size(elem);
  if (offset > owner->nbytes - from || (uint64_t)numel > SIZE_MAX / esize)
    return NULL;
  from += offset;
  size_t nbytes = (size_t)numel * esize;
  if (nbytes < SHLO_VIEW_MIN_BYTES || nbytes % SHLO_ALIGN || from % SHLO_ALIGN ||
      nbytes > owner->nbytes - from)
    return NULL;
  shlo_value *v = value_alloc(SHLO_TYPE_TENSOR);
  if (!v) return NULL;
  v->owner = shlo_value_retain(owner);
  v->data = (char *)owner->data + from;
  set_shape(v, elem, rank, dims, numel, nbytes);
  return v;
}

bool shlo__value_is_view(const shlo_value *v) { return v && v->owner; }

shlo_status shlo__value_settle(shlo_value **v) {
  shlo_value *x = *v;
  if (!x) return SHLO_OK;
  if (x->kind == SHLO_TYPE_TUPLE) {
    for (int i = 0; i < x->n_elems; i++) {
      shlo_status st = shlo__value_settle(&x->elems[i]);
      if (st) return st;
    }
    return SHLO_OK;
  }
  if (!x->owner) return SHLO_OK;
  shlo_value *c = shlo_tensor_clone(x);
  if (!c) return SHLO_ENOMEM;
  shlo_value_release(x);
  *v = c;
  return SHLO_OK;
}

shlo_value *shlo_tensor_new_like(const shlo_type *t) {
  if (t->kind != SHLO_TYPE_TENSOR || !shlo_type_is_static(t)) return NULL;
  shlo_value *v = shlo_tensor_new(t->elem, t->rank, t->dims);
  if (v && shlo_tensor_set_quant(v, t->quant) != SHLO_OK) {
    shlo_value_unref(v);
    return NULL;
  }
  return v;
}

shlo_value *shlo_tensor_clone(const shlo_value *v) {
  /* every element is copied: no zeroing first */
  shlo_value *c = tensor_new(v->elem, v->rank, v->dims, false);
  if (!c) return NULL;
  memcpy(c->data, v->data, v->nbytes);
  shlo__value_share_quant(c, v);
  return c;
}

shlo_value *shlo_tuple_new(int n, shlo_value **elems) {
  shlo_value *v = value_alloc(SHLO_TYPE_TUPLE);
  if (!v) goto fail;
  v->n_elems = n;
  if (n) {
    v->elems = shlo__ctx_malloc(v->ctx, (size_t)n * sizeof *v->elems);
    if (!v->elems) goto fail;
    memcpy(v->elems, elems, (size_t)n * sizeof *elems);
  }
  return v;
fail:
  for (int i = 0; i < n; i++) shlo_value_unref(elems[i]);
  if (v) shlo__ctx_free(v->ctx, v);
  return NULL;
}

shlo_value *shlo_token_new(void) { return value_alloc(SHLO_TYPE_TOKEN); }

shlo_value *shlo_value_retain(shlo_value *v) {
  if (v) atomic_fetch_add_explicit(&v->refs, 1, memory_order_relaxed);
  return v;
}

void shlo_value_release(shlo_value *v) {
  if (!v) return;
  if (atomic_fetch_sub_explicit(&v->refs, 1, memory_order_acq_rel) != 1)
    return;
  for (int i = 0; i < v->n_elems; i++) shlo_value_release(v->elems[i]);
  shlo_context *ctx = v->ctx;
  shlo__ctx_free(ctx, v->elems);
  quant_release(v->quant);
  if (v->budget) shlo__budget_uncharge(v->budget, charged_bytes(v));
  if (v->owner) { /* a view: the buffer is its owner's */
    shlo_value_release(v->owner);
    shlo__ctx_free(ctx, v);
  } else if (v->kind != SHLO_TYPE_TENSOR) {
    shlo__ctx_free(ctx, v);
  } else if (data_is_inline(v)) {
    shlo__ctx_data_free(ctx, v, SHLO_HEADER + (size_t)charged_bytes(v));
  } else {
    shlo__ctx_data_free(ctx, v->data, (size_t)charged_bytes(v));
    shlo__ctx_free(ctx, v);
  }
}

/* The names before 0.2: kept so programs written for them still build. */
shlo_value *shlo_value_ref(shlo_value *v) { return shlo_value_retain(v); }
void shlo_value_unref(shlo_value *v) { shlo_value_release(v); }

/* Accessors for programs that see shlo_value opaque (shlo/tensor.h).  A
 * tensor accessor given a tuple or token answers as for an empty tensor
 * (no data, rank 0) rather than reading fields that mean nothing there. */
shlo_type_kind shlo_value_kind(const shlo_value *v) { return v->kind; }

static bool is_tensor(const shlo_value *v) {
  return v->kind == SHLO_TYPE_TENSOR;
}

shlo_elem_type shlo_tensor_elem(const shlo_value *v) { return v->elem; }
int shlo_tensor_rank(const shlo_value *v) { return is_tensor(v) ? v->rank : 0; }
const int64_t *shlo_tensor_dims(const shlo_value *v) { return v->dims; }
int64_t shlo_tensor_numel(const shlo_value *v) {
  return is_tensor(v) ? v->numel : 0;
}
size_t shlo_tensor_nbytes(const shlo_value *v) {
  return is_tensor(v) ? v->nbytes : 0;
}
void *shlo_tensor_data(shlo_value *v) { return is_tensor(v) ? v->data : NULL; }
const void *shlo_tensor_data_const(const shlo_value *v) {
  return is_tensor(v) ? v->data : NULL;
}
const shlo_quant *shlo_tensor_quant(const shlo_value *v) {
  return is_tensor(v) ? v->quant : NULL;
}
int shlo_tuple_size(const shlo_value *v) {
  return v->kind == SHLO_TYPE_TUPLE ? v->n_elems : 0;
}
shlo_value *shlo_tuple_get(const shlo_value *v, int i) {
  if (v->kind != SHLO_TYPE_TUPLE || i < 0 || i >= v->n_elems) return NULL;
  return v->elems[i];
}

void shlo_strides(int rank, const int64_t *dims, int64_t *strides) {
  int64_t s = 1;
  for (int i = rank - 1; i >= 0; i--) {
    strides[i] = s;
    s *= dims[i];
  }
}

bool shlo_value_has_type(const shlo_value *v, const shlo_type *t) {
  if (v->kind != t->kind) return false;
  switch (t->kind) {
  case SHLO_TYPE_TOKEN:
    return true;
  case SHLO_TYPE_ELEMENT:
  case SHLO_TYPE_OPAQUE:
    return false;
  case SHLO_TYPE_TUPLE:
    if (v->n_elems != t->n_elems) return false;
    for (int i = 0; i < t->n_elems; i++)
      if (!shlo_value_has_type(v->elems[i], t->elems[i])) return false;
    return true;
  case SHLO_TYPE_TENSOR:
    if (v->elem != t->elem || v->rank != t->rank) return false;
    for (int i = 0; i < t->rank; i++)
      if (t->dims[i] >= 0 && t->dims[i] != v->dims[i]) return false;
    return true;
  }
  return false;
}

int64_t shlo_int_wrap(shlo_elem_type t, int64_t x) {
  int bits = shlo_elem_bits(t);
  switch (shlo_elem_class_of(t)) {
  case SHLO_CLASS_BOOL:
    return x & 1;
  case SHLO_CLASS_SINT:
    if (bits >= 64) return x;
    return (int64_t)((uint64_t)x << (64 - bits)) >> (64 - bits);
  case SHLO_CLASS_UINT:
    if (bits >= 64) return x;
    return (int64_t)((uint64_t)x & (((uint64_t)1 << bits) - 1));
  default:
    return x;
  }
}

int64_t shlo_tensor_get_i64(const shlo_value *v, int64_t i) {
  const void *p = v->data;
  switch (shlo_elem_storage(v->elem)) {
#define GET(st, ct) case SHLO_ST_##st: return (int64_t)((const ct *)p)[i];
  SHLO_STORAGE_INTS(GET)
#undef GET
  default:
    return (int64_t)shlo_tensor_get_f64(v, i);
  }
}

double shlo_tensor_get_f64(const shlo_value *v, int64_t i) {
  size_t es = shlo_elem_size(v->elem);
  const char *p = (const char *)v->data + (size_t)i * es;
  switch (shlo_elem_class_of(v->elem)) {
  case SHLO_CLASS_FLOAT:
    return shlo__float_load(v->elem, p);
  case SHLO_CLASS_COMPLEX:
    return v->elem == SHLO_C64 ? ((const float *)p)[0] : ((const double *)p)[0];
  case SHLO_CLASS_UINT:
    if (v->elem == SHLO_UI64) return (double)((const uint64_t *)p)[0];
    return (double)shlo_tensor_get_i64(v, i);
  default:
    return (double)shlo_tensor_get_i64(v, i);
  }
}

void shlo_tensor_get_c128(const shlo_value *v, int64_t i, double *re,
                          double *im) {
  if (v->elem == SHLO_C64) {
    const float *p = (const float *)v->data + 2 * i;
    *re = p[0];
    *im = p[1];
  } else if (v->elem == SHLO_C128) {
    const double *p = (const double *)v->data + 2 * i;
    *re = p[0];
    *im = p[1];
  } else {
    *re = shlo_tensor_get_f64(v, i);
    *im = 0;
  }
}

void shlo_tensor_set_i64(shlo_value *v, int64_t i, int64_t x) {
  void *p = v->data;
  x = shlo_int_wrap(v->elem, x);
  switch (shlo_elem_storage(v->elem)) {
#define SET(st, ct) case SHLO_ST_##st: ((ct *)p)[i] = (ct)x; return;
  SHLO_STORAGE_INTS(SET)
#undef SET
  default:
    shlo_tensor_set_f64(v, i, (double)x);
  }
}

void shlo_tensor_set_f64(shlo_value *v, int64_t i, double x) {
  size_t es = shlo_elem_size(v->elem);
  char *p = (char *)v->data + (size_t)i * es;
  switch (shlo_elem_class_of(v->elem)) {
  case SHLO_CLASS_FLOAT:
    shlo__float_store(v->elem, x, p);
    return;
  case SHLO_CLASS_COMPLEX:
    if (v->elem == SHLO_C64) {
      ((float *)p)[0] = (float)x;
      ((float *)p)[1] = 0;
    } else {
      ((double *)p)[0] = x;
      ((double *)p)[1] = 0;
    }
    return;
  case SHLO_CLASS_BOOL:
    shlo_tensor_set_i64(v, i, x != 0);
    return;
  default:
    shlo_tensor_set_i64(v, i, (int64_t)x);
  }
}
