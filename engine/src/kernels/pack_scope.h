/* SPDX-License-Identifier: Apache-2.0 */
/* Packed GEMM operands for the values a while loop carries unchanged.
 *
 * A while whose body returns its block argument i as its result i (a
 * compile-time fact of the body's plan) passes the same value, the same
 * bytes, to every iteration.  While it runs, it holds a scope over those
 * values; a dot_general inside the body (at any depth of calls) whose
 * right operand is one of them multiplies against op(b) packed once, on
 * first use, instead of copying b's panels again in every iteration
 * (gemm_prepacked.h).  The scope holds a reference to each value for its
 * whole life: no step can take the buffer in place
 * (shlo__exec_take_input wants a lone reference), so the bytes packed
 * are the bytes every later product would read.  A value the body
 * replaces is not in the scope: it is never packed.
 *
 * A scope belongs to the thread that entered it and is seen only by that
 * thread's lookups: a while nested in a region that runs on the pool's
 * threads keeps its packs to itself. */
#ifndef SHLO_PACK_SCOPE_H
#define SHLO_PACK_SCOPE_H

#include <stdbool.h>
#include <stdint.h>

#include "compile/plan.h"
#include "kernels/gemm_prepacked.h"

typedef struct shlo__pack_scope shlo__pack_scope;

/* A scope over values[0..n) on top of ex's, or NULL when there is nothing
 * to hold or no memory (the loop then runs without packs). */
shlo__pack_scope *shlo__pack_scope_enter(shlo_exec *ex,
                                         shlo_value *const *values, int n);

/* Ends scope (NULL: nothing) and frees its packs and references. */
void shlo__pack_scope_leave(shlo_exec *ex, shlo__pack_scope *scope);

/* op(b) packed, where b is v's data (f32, tb and ldb as in
 * gemm_prepacked.h) and v is held by a scope of this thread: built on
 * first use, then the same.  NULL otherwise, or when it cannot be
 * built. */
const shlo__sgemm_packed *shlo__pack_scope_find(shlo_exec *ex,
                                                const shlo_value *v, bool tb,
                                                int64_t k, int64_t n,
                                                int64_t ldb);

#endif
