/* SPDX-License-Identifier: Apache-2.0 */
/* Internal helpers shared by the linear-algebra family (linalg.c, conv.c,
 * fft.c): compute domains, element conversion into and out of them, strided
 * gathers, and one GEMM entry point that goes to OpenBLAS for f32, f64 and
 * complex and to native loops for integers and booleans.
 *
 * A *compute domain* is the element type arithmetic runs in:
 *   LA_F32  float           LA_F64  double
 *   LA_C64  float[2] (re,im) LA_C128 double[2]
 *   LA_INT  int64_t, wrapping mod 2^64 (results are wrapped to the result
 *           type's width when stored, which equals wrapping every step)
 *   LA_BOOL uint8_t 0/1 (multiply = and, add = or)
 * Narrow floats (bf16, f16, f8, f6, f4) compute in LA_F64 and are rounded
 * once when stored (shlo__float_store). */
#ifndef SHLO_LINALG_INT_H
#define SHLO_LINALG_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "compile/compiler.h"
#include "runtime/exec.h"

typedef enum {
  LA_F32,
  LA_F64,
  LA_C64,
  LA_C128,
  LA_INT,
  LA_BOOL,
} shlo__la_dom;

/* The domain a result of element type t is computed in. */
shlo__la_dom shlo__la_dom_for(shlo_elem_type t);
/* Bytes of one element of a domain. */
size_t shlo__la_dom_size(shlo__la_dom d);
/* Whether elements of type t are stored exactly as domain d stores them,
 * so a buffer of t can be used as a domain buffer without conversion. */
bool shlo__la_native(shlo__la_dom d, shlo_elem_type t);

/* Convert n elements of type se, starting at src with a byte stride ss, to
 * n contiguous domain elements at dst. */
void shlo__la_load(shlo__la_dom d, shlo_elem_type se, void *dst,
                   const char *src, int64_t n, int64_t ss);
/* Convert n contiguous domain elements at src to type de at dst, with a
 * byte stride ds (integers wrap to de's width; floats round to nearest
 * even). */
void shlo__la_store(shlo__la_dom d, shlo_elem_type de, char *dst, int64_t ds,
                    const void *src, int64_t n);

/* A strided walk over a source tensor in destination order: count[i]
 * elements along walk dimension i, byte stride stride[i] in the source
 * (negative for reversed dimensions), starting at byte offset `offset`.
 * Extent-1 dimensions are dropped and contiguous neighbours merged. */
#define SHLO_LA_WALK_MAX (SHLO_MAX_RANK + 2)
typedef struct shlo__la_walk {
  int rank;
  bool empty;
  int64_t offset;
  int64_t count[SHLO_LA_WALK_MAX];
  int64_t stride[SHLO_LA_WALK_MAX];
} shlo__la_walk;

/* stride is in elements of es bytes; offset in elements. */
void shlo__la_walk_init(shlo__la_walk *w, int rank, const int64_t *count,
                        const int64_t *stride, int64_t offset, size_t es);
/* Walk src (elements of type se) and write the walked elements, converted
 * to domain d, contiguously to dst. */
void shlo__la_gather(const shlo__la_walk *w, shlo__la_dom d, shlo_elem_type se,
                     void *dst, const char *src);

/* C[M,N] = op(A)[M,K] * op(B)[K,N], row-major; C is overwritten.  ta/tb:
 * A is stored K x M (lda >= M) / B is stored N x K (ldb >= K).  Any of M,
 * N, K may be 0 (K = 0 gives zeros). */
void shlo__la_gemm(shlo__la_dom d, bool ta, bool tb, int64_t m, int64_t n,
                   int64_t k, const void *a, int64_t lda, const void *b,
                   int64_t ldb, void *c, int64_t ldc);

/* The same in the calling thread only: for callers that already split their
 * work over the pool and hand each thread its own block. */
void shlo__la_gemm_serial(shlo__la_dom d, bool ta, bool tb, int64_t m,
                          int64_t n, int64_t k, const void *a, int64_t lda,
                          const void *b, int64_t ldb, void *c, int64_t ldc);

/* Whether shlo__la_gemm of an f32 m x k by k x n product runs every block
 * of it through the GEMM panels (gemm_panels.h): then each element is
 * the fmaf chain the panels define, and any other route to the panels'
 * arithmetic (gemm_prepacked.h) gives the same bytes. */
bool shlo__la_gemm_f32_all_panels(int64_t m, int64_t n, int64_t k);

/* Element-count helpers: product of n dims; overflow-safe enough for
 * static shapes already accepted by the verifier. */
int64_t shlo__la_prod(const int64_t *dims, int n);

/* Compile-time check that t (named `what` in the message) is a statically
 * shaped, unquantized tensor. */
shlo_status shlo__la_want_tensor(shlo_compiler *cc, const shlo_op *op,
                                 const shlo_type *t, const char *what);
/* The types of operands 0 and 1 and result 0 into *lt, *rt, *ot, each
 * checked by shlo__la_want_tensor as "lhs", "rhs" and "result". */
shlo_status shlo__la_lhs_rhs_result(shlo_compiler *cc, const shlo_op *op,
                                    const shlo_type **lt,
                                    const shlo_type **rt,
                                    const shlo_type **ot);

#endif
