/* SPDX-License-Identifier: Apache-2.0 */
/* The refined plans of one dynamic-shape executable, cached per argument
 * shape signature (refine_cache.c).
 *
 * shlo_compile gives a module with dynamic shapes an executable that holds
 * one of these instead of a plan.  Each shlo_execute with argument shapes
 * not seen before refines the module for them (refine.h), verifies the
 * refined copy, compiles it, and keeps the result; later calls with the
 * same shapes reuse it.  The cache keeps the SHLO_REFINE_CACHE_CAP most
 * recently used signatures; an evicted entry lives on until the last
 * execution using it ends.  Safe to use from many threads at once. */
#ifndef SHLO_REFINE_CACHE_H
#define SHLO_REFINE_CACHE_H

#include <stdint.h>

#include "shlo/engine.h"

#define SHLO_REFINE_CACHE_CAP 16

typedef struct shlo_refine_cache shlo_refine_cache;

/* A cache for entry of m (borrowed; it must outlive the cache) whose
 * plans are compiled in context ctx (NULL: the default). */
shlo_refine_cache *shlo__refine_cache_new(const shlo_module *m,
                                          const shlo_func *entry,
                                          bool no_fusion,
                                          struct shlo_context *ctx);
void shlo__refine_cache_free(shlo_refine_cache *c);

/* Refine and compile for static argument types now (when the entry's
 * signature is static, shlo_compile does so at once, so that errors show
 * at compile time). */
shlo_status shlo__refine_cache_prepare(shlo_refine_cache *c,
                                       const shlo_type *const *types, int n,
                                       shlo_diag *diag);

/* shlo_execute for an executable that refines (same contract). */
shlo_status shlo__refine_cache_execute(shlo_refine_cache *c,
                                       const shlo_exec_opts *opts,
                                       shlo_value *const *args, int n_args,
                                       shlo_value ***results, int *n_results,
                                       shlo_diag *diag);

/* How many refinements (each one a compile) the cache has made. */
int64_t shlo__refine_cache_compiles(const shlo_refine_cache *c);

#endif
