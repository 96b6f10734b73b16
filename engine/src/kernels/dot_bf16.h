/* SPDX-License-Identifier: Apache-2.0 */
/* dot_general bf16 x bf16 -> f32 on the bf16 GEMM (gemm_bf16.h says what
 * it computes: the engine's own f32 order over k, the same bits where the
 * widened path runs its own loops; an input outside the guard, or a CPU
 * without AVX512_BF16, sends the call to the widened path). */
#ifndef SHLO_DOT_BF16_H
#define SHLO_DOT_BF16_H

#include <stdbool.h>
#include <stdint.h>

#include "compile/plan.h"
#include "kernels/linalg_int.h"

/* Whether a dot_general of these element types may take the bf16 GEMM:
 * bf16 operands, an f32 result, no precision but DEFAULT (HIGH and
 * HIGHEST keep the widened path) and no algorithm. */
bool shlo__dot_bf16_applies(const shlo_op *op, shlo_elem_type lt,
                            shlo_elem_type rt, shlo_elem_type ot);

/* c ([nb][m][n] f32, all nonzero) = the products of lhs and rhs, walked
 * by w[0] as [nb][m][k] or by w[1] as [nb][k][m], and by w[2] as
 * [nb][k][n] or w[3] as [nb][n][k]: of each pair, the form read in place
 * (contiguous, then rows at one stride) or else in contiguous runs.
 * split_batch: whole GEMMs per thread of the pool, each followed by done
 * (when not NULL) of its block of c, the operands having been checked
 * against the guard first, so that no block is told of before the call
 * is sure to finish here; else each GEMM split, done not called, ex asked
 * between GEMMs whether to stop.  1: done; 0: declined (c partly
 * written: run the widened path); -1: out of memory; -2: stopped. */
int shlo__dot_bf16(const shlo__la_walk *const w[4], int64_t nb, int64_t m,
                   int64_t n, int64_t k, const char *lhs, const char *rhs,
                   float *c, bool split_batch, shlo_block_done done,
                   void *done_ctx, shlo_exec *ex);

#endif
