/* SPDX-License-Identifier: Apache-2.0 */
/* Runtime values: tensors, tuples and tokens.
 *
 * A shlo_value is reference counted: shlo_value_retain adds an owner,
 * shlo_value_release drops one and frees at zero.  Tensor data is 64-byte
 * aligned, laid out row-major (last dimension fastest), element storage as
 * in types.h.  A value never points into a module, so it may outlive the
 * module that produced it.  Values are not thread-safe for concurrent
 * mutation; the engine only mutates a value it holds the single reference
 * to. */
#ifndef SHLO_TENSOR_H
#define SHLO_TENSOR_H

#include "shlo/status.h"
#include "shlo/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Opaque: read a value through the accessors below.  A pointer to one is
 * either owned (the caller holds one of its references and must release
 * it) or borrowed (valid while its owner keeps it); each declaration says
 * which. */
typedef struct shlo_value shlo_value;

/* New zero-filled tensor of the given element type and static shape; NULL
 * when out of memory or the byte size overflows.  Caller owns the one
 * reference. */
SHLO_API shlo_value *shlo_tensor_new(shlo_elem_type elem, int rank, const int64_t *dims);
/* Same, shape and element type taken from a static tensor type. */
SHLO_API shlo_value *shlo_tensor_new_like(const shlo_type *t);
/* A deep copy of a tensor (not of tuples). */
SHLO_API shlo_value *shlo_tensor_clone(const shlo_value *v);
/* New tuple that takes ownership of the n references in elems. */
SHLO_API shlo_value *shlo_tuple_new(int n, shlo_value **elems);
SHLO_API shlo_value *shlo_token_new(void);

/* Add an owner: returns v (NULL stays NULL), whose new reference the
 * caller owns.  Safe from any thread. */
SHLO_API shlo_value *shlo_value_retain(shlo_value *v);
/* Drop the caller's reference; the value is freed with its last.  NULL is
 * ignored.  Safe from any thread. */
SHLO_API void shlo_value_release(shlo_value *v);
/* The names before 0.2 (CHANGELOG.md), the same functions. */
SHLO_API shlo_value *shlo_value_ref(shlo_value *v);
SHLO_API void shlo_value_unref(shlo_value *v);

/* What a value is (SHLO_TYPE_TENSOR, _TUPLE or _TOKEN). */
SHLO_API shlo_type_kind shlo_value_kind(const shlo_value *v);
/* A tensor's element type (its storage type when quantized), rank, and
 * dimensions: shlo_tensor_dims is borrowed, rank entries long, valid while
 * the caller holds v. */
SHLO_API shlo_elem_type shlo_tensor_elem(const shlo_value *v);
SHLO_API int shlo_tensor_rank(const shlo_value *v);
SHLO_API const int64_t *shlo_tensor_dims(const shlo_value *v);
/* Number of elements (1 for rank 0) and bytes of storage (types.h). */
SHLO_API int64_t shlo_tensor_numel(const shlo_value *v);
SHLO_API size_t shlo_tensor_nbytes(const shlo_value *v);
/* A tensor's elements, row-major, 64-byte aligned, nbytes long; borrowed,
 * valid while the caller holds v.  Write through it only while the caller
 * holds v's single reference (a fresh tensor before it is shared). */
SHLO_API void *shlo_tensor_data(shlo_value *v);
SHLO_API const void *shlo_tensor_data_const(const shlo_value *v);
/* A tensor's quantization parameters, borrowed; NULL unless quantized. */
SHLO_API const shlo_quant *shlo_tensor_quant(const shlo_value *v);
/* A tuple's number of elements, and element i, borrowed (retain it to keep
 * it beyond the tuple); NULL when i is out of range. */
SHLO_API int shlo_tuple_size(const shlo_value *v);
SHLO_API shlo_value *shlo_tuple_get(const shlo_value *v, int i);

/* Free the large tensor buffers the default context keeps for reuse
 * (shlo_context_trim does it for any context; at most 64 MiB by default:
 * a freed buffer is handed to the next tensor of its size instead of the
 * kernel faulting in fresh pages).  For a server returning its memory after
 * a big request; safe at any time, from any thread. */
SHLO_API void shlo_buffer_cache_release(void);

/* Row-major strides in elements for a shape (strides[rank-1] = 1). */
SHLO_API void shlo_strides(int rank, const int64_t *dims, int64_t *strides);

/* Whether a value matches a static type (kind, element type, shape). */
SHLO_API bool shlo_value_has_type(const shlo_value *v, const shlo_type *t);

/* Element accessors that work for any element type; slow (a switch per
 * call): for tests, printing and checks, never for kernels. */
SHLO_API double shlo_tensor_get_f64(const shlo_value *v, int64_t i);
SHLO_API int64_t shlo_tensor_get_i64(const shlo_value *v, int64_t i);
SHLO_API void shlo_tensor_get_c128(const shlo_value *v, int64_t i, double *re, double *im);
SHLO_API void shlo_tensor_set_f64(shlo_value *v, int64_t i, double x);
SHLO_API void shlo_tensor_set_i64(shlo_value *v, int64_t i, int64_t x);

/* Wrap an integer to the range of an integer element type: sign-extend from
 * the type's width for signed types, mask for unsigned, 0/1 for i1. */
SHLO_API int64_t shlo_int_wrap(shlo_elem_type t, int64_t x);

/* Make v a quantized tensor with parameters q: v gets its own copy, so q
 * (typically a module's type's) may be freed afterwards; NULL makes v
 * unquantized.  SHLO_ENOMEM leaves v unquantized. */
SHLO_API shlo_status shlo_tensor_set_quant(shlo_value *v, const shlo_quant *q);

/* Print a value as `tensor<2xf32> { [1.0, 2.0] }`-style text (see
 * print.c for the exact format) into a malloc'd string; NULL on OOM. */
SHLO_API char *shlo_value_to_string(const shlo_value *v);

#ifdef __cplusplus
}
#endif

#endif
