/* SPDX-License-Identifier: Apache-2.0 */
/* The context's insides (shlo/context.h), for the engine's own files.
 *
 * The core half lives here: the allocator wrappers, the buffer cache and
 * which context the calling thread works in.  The runtime half (create,
 * destroy, the pool) is runtime/context.c; core sees the pool only as an
 * opaque pointer, so core includes nothing of runtime.
 *
 * Which context a thread works in: the entry points that run in a context
 * (shlo_compile, shlo_load, shlo_execute, a grid's process threads, a
 * pool's workers) make it the thread's current one for the length of the
 * call (shlo__ctx_swap) and put the previous one back; code below them
 * (tensor allocation, the pool, the kernels' settings) asks
 * shlo__ctx_current.  It is a scope, not a setting: nothing stays behind
 * when the call returns. */
#ifndef SHLO_CONTEXT_INT_H
#define SHLO_CONTEXT_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "shlo/context.h"

#define SHLO__CACHE_SLOTS 16

struct shlo__pool;

struct shlo_context {
  shlo_context_options opts; /* as given, struct_size now ours */
  bool custom_alloc;         /* opts.allocator.alloc was set */
  struct shlo__pool *pool;   /* runtime/pool.c */
  /* Large freed tensor buffers kept for the next tensor of their size
   * (core/tensor.c says why). */
  pthread_mutex_t cache_lock;
  void *cache_buf[SHLO__CACHE_SLOTS];
  size_t cache_cap[SHLO__CACHE_SLOTS];
  size_t cache_bytes, cache_max;
};

/* The calling thread's context: the one a scope set, else the default
 * context if it exists yet, else NULL (the C library's allocator, no
 * cache, default options). */
shlo_context *shlo__ctx_current(void);
/* The default context, or NULL before anything made it. */
shlo_context *shlo__ctx_default(void);
/* Make c the thread's current context (NULL: back to the default) and
 * return the one before, to hand back to shlo__ctx_swap when done. */
shlo_context *shlo__ctx_swap(shlo_context *c);
/* The options in force for c (NULL: the default context's). */
const shlo_context_options *shlo__ctx_options(const shlo_context *c);

/* For runtime/context.c: the default context once made, and the options
 * it is to be made with. */
void shlo__ctx_publish_default(shlo_context *c);
shlo_context_options *shlo__ctx_default_options(void);

/* Fill in what create needs of the core half (allocator flag, cache);
 * shlo__ctx_core_fini frees the cache. */
void shlo__ctx_core_init(shlo_context *c, const shlo_context_options *o);
void shlo__ctx_core_fini(shlo_context *c);

/* c's allocator (NULL c: the C library's). */
void *shlo__ctx_malloc(shlo_context *c, size_t n);
void *shlo__ctx_calloc(shlo_context *c, size_t n, size_t size);
void *shlo__ctx_realloc(shlo_context *c, void *p, size_t n);
void shlo__ctx_free(shlo_context *c, void *p);

/* Tensor data: cap bytes (a multiple of 64) aligned to 64, from c's
 * buffer cache or its allocator; NULL when out of memory.  data_free
 * keeps the buffer in the cache or frees it. */
void *shlo__ctx_data_alloc(shlo_context *c, size_t cap);
void shlo__ctx_data_free(shlo_context *c, void *p, size_t cap);
/* Free the buffers c's cache keeps (NULL c: none kept). */
void shlo__ctx_cache_release(shlo_context *c);

#endif
