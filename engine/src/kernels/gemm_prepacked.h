/* SPDX-License-Identifier: Apache-2.0 */
/* f32 GEMM against an op(b) packed once for many products: the panels of
 * gemm_panels.h built ahead of time, not copied again by every call.
 *
 * A weight matrix that a while loop carries unchanged (an LSTM's
 * recurrent weights) is multiplied once per iteration; gemm_panels copies
 * each 64-column panel of it per call, out of rows ldb apart.  Packed
 * once, each product reads contiguous panels in place (8-9% faster per
 * product on 32 x 512 x 1024 here).
 *
 * Each element of c is the same fmaf chain over k in order, from zero,
 * as shlo__sgemm_panels gives: the bytes do not change. */
#ifndef SHLO_GEMM_PREPACKED_H
#define SHLO_GEMM_PREPACKED_H

#include <stdbool.h>
#include <stdint.h>

/* op(b), k x n, as panels of 64 columns: panel p holds columns
 * [64 p, 64 p + 64) as k rows of 64 floats, zeros past column n. */
typedef struct shlo__sgemm_packed {
  int64_t k, n;
  float *panels; /* ceil(n / 64) * k * 64 floats, 64-byte aligned */
} shlo__sgemm_packed;

/* op(b) (tb: b is stored transposed; ldb: the stride of its stored rows)
 * packed, or NULL when out of memory or when the engine does not run the
 * panels (not AVX-512F, or k or n out of their range). */
shlo__sgemm_packed *shlo__sgemm_pack(bool tb, int64_t k, int64_t n,
                                     const float *b, int64_t ldb);

void shlo__sgemm_packed_free(shlo__sgemm_packed *pb);

/* c (m x n, ldc) = op(a) (m x k; ta, lda as in gemm_panels.h) times the
 * packed op(b), its panels shared out among the engine's pool.  false,
 * having done nothing, where the panels cannot run. */
bool shlo__sgemm_prepacked(bool ta, int64_t m, const float *a, int64_t lda,
                           const shlo__sgemm_packed *pb, float *c,
                           int64_t ldc);

/* The same, then epi (gemm_panels.h; NULL: none) on each panel of c as
 * soon as it is made, by the thread that made it, while it is in cache:
 * a product's epilogue without a pass of its own over c.  The residual's
 * rows are ldres apart and aligned with c's.  epi.stream is ignored. */
struct shlo__gemm_epi;
bool shlo__sgemm_prepacked_epi(bool ta, int64_t m, const float *a,
                               int64_t lda, const shlo__sgemm_packed *pb,
                               float *c, int64_t ldc,
                               const struct shlo__gemm_epi *epi);

#endif
