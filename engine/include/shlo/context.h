/* SPDX-License-Identifier: Apache-2.0 */
/* An engine context: the threads, memory and settings one embedder gives
 * libshlo.
 *
 *   shlo_context_options o;
 *   shlo_context_options_init(&o);
 *   o.threads = 2;
 *   shlo_context *ctx;
 *   if (shlo_context_create(&o, &ctx) != SHLO_OK) ...;
 *   shlo_compile_opts co = {.context = ctx};
 *   shlo_load_file("prog.mlir", &co, &m, &e, &diag);   (parsed in ctx too)
 *   shlo_value *x = shlo_context_tensor_new(ctx, SHLO_F32, 1, dims);
 *   shlo_execute(e, NULL, &x, 1, &res, &n, &diag);     (runs in e's context)
 *   ... free results, x, e, m ...
 *   shlo_context_destroy(ctx);
 *
 * Everything the engine used to keep per process is the context's:
 *  - its fork-join pool (threads - 1 workers plus the thread that executes;
 *    or workers lent by the embedder's executor), joined on destroy;
 *  - its allocator, which tensors' data, modules' IR arenas and their
 *    buffer cache use (an object remembers the context it was made in and
 *    frees through it, whatever thread drops it);
 *  - its cache of large freed tensor buffers, freed on destroy;
 *  - the settings that were environment variables (SHLO_NO_FUSION,
 *    SHLO_CONV_GENERAL, SHLO_MPI_PEER_TIMEOUT, SHLO_THREADS): the library
 *    reads no environment variable; programs map them onto these options
 *    (the CLI and the server do).
 *
 * An executable belongs to the context its compile ran in
 * (shlo_compile_opts.context); executing it runs there, in the calling
 * thread plus the context's workers.  Two contexts share nothing, so two
 * differently configured engines can run side by side in one process.
 *
 * The entry points that take no context use the process's default context,
 * made on first use with shlo_default_context_configure's options (or the
 * defaults: one thread per core).  It lives until the process exits.
 *
 * Thread safety: a context may be used from any number of threads at once;
 * create and destroy are the caller's to serialise with its use.
 * shlo_context_destroy must come after every module, executable and value
 * made in the context has been freed: it then joins the workers and frees
 * the cache, and every byte taken from the allocator has been returned. */
#ifndef SHLO_CONTEXT_H
#define SHLO_CONTEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shlo/export.h"
#include "shlo/status.h"
#include "shlo/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct shlo_context shlo_context;

/* Where the context's memory comes from.  alloc and realloc return NULL
 * when out of memory; free(user, NULL) must be harmless; realloc(user,
 * NULL, n) allocates.  The engine asks for no alignment beyond malloc's:
 * it aligns tensor data itself.  Called from any thread at once. */
typedef struct shlo_allocator {
  void *(*alloc)(void *user, size_t size);
  void *(*realloc)(void *user, void *p, size_t size);
  void (*free)(void *user, void *p);
  void *user;
} shlo_allocator;

/* Lends the context worker threads instead of its starting its own:
 * run(user, fn, arg) must make another of the embedder's threads call
 * fn(arg) (soon, and never on the calling thread: fn returns only when the
 * context is being destroyed, and destroy waits for it) and return 0, or
 * return nonzero if it cannot (the context then has fewer workers).
 * The context calls it threads - 1 times at create. */
typedef struct shlo_executor {
  int (*run)(void *user, void (*fn)(void *arg), void *arg);
  void *user;
} shlo_executor;

typedef struct shlo_context_options {
  /* sizeof(shlo_context_options), set by shlo_context_options_init: fields
   * added later go at the end, and a library reads only the fields a
   * caller's struct_size covers. */
  size_t struct_size;
  /* Threads that take part in a parallel step, the executing thread
   * included; <= 0: one per online core.  At most 256. */
  int threads;
  /* Non-NULL run: workers come from the embedder (shlo_executor). */
  shlo_executor executor;
  /* NULL alloc: the C library's malloc, with huge pages for big tensors. */
  shlo_allocator allocator;
  /* > 0: the byte limit of an execution whose shlo_exec_opts.max_bytes is
   * 0 (tensors alive at once; SHLO_ELIMIT past it). */
  int64_t exec_max_bytes;
  /* Bytes of freed large tensor buffers kept for reuse: < 0 the default
   * (64 MiB), 0 none. */
  int64_t buffer_cache_bytes;
  /* Compile every elementwise op as its own step (was SHLO_NO_FUSION). */
  bool no_fusion;
  /* Run every convolution with the general kernel, never the NHWC fast
   * path (was SHLO_CONV_GENERAL; for tests and bug hunts). */
  bool conv_general;
  /* Seconds an MPI grid waits for a silent peer; <= 0: 60 (was
   * SHLO_MPI_PEER_TIMEOUT).  Process-wide (MPI is): the context that
   * first starts MPI sets it. */
  double mpi_peer_timeout_s;
  /* Keep the OpenBLAS core OpenBLAS picked, even when it is a slow
   * fallback on a CPU newer than the OpenBLAS release (set it when the
   * user chose one with OPENBLAS_CORETYPE).  Process-wide (OpenBLAS is):
   * the first context created decides (core/blas_setup.h). */
  bool blas_keep_core;
  /* Run every execution's parallel steps on all the context's threads.
   * Otherwise (the default) each executable times some of its executions
   * on the executing thread alone and runs there while that is clearly
   * faster: where the threads' cores share data slowly, a memory-bound
   * program can be (the results are the same bytes either way). */
  bool fixed_threads;
} shlo_context_options;

/* The defaults: every field zero but struct_size and buffer_cache_bytes. */
SHLO_API void shlo_context_options_init(shlo_context_options *o);

/* A new context with options o (NULL: the defaults).  On success *out is
 * the caller's, to free with shlo_context_destroy; on failure *out is NULL:
 * SHLO_EINPUT for a bad struct_size or half an allocator, SHLO_ENOMEM.  A
 * worker that cannot start leaves the context with fewer threads
 * (shlo_context_threads says how many), never none: the caller's own
 * thread always runs its share. */
SHLO_API shlo_status shlo_context_create(const shlo_context_options *o,
                                         shlo_context **out);
/* Join the workers, free the buffer cache and the context.  NULL is fine.
 * Everything made in the context must have been freed already. */
SHLO_API void shlo_context_destroy(shlo_context *ctx);

/* Threads that take part in ctx's parallel steps (workers + caller). */
SHLO_API int shlo_context_threads(const shlo_context *ctx);
/* The options ctx was created with (borrowed, lives as long as ctx). */
SHLO_API const shlo_context_options *shlo_context_get_options(
    const shlo_context *ctx);
/* Free the buffers ctx keeps for reuse (safe at any time, any thread). */
SHLO_API void shlo_context_trim(shlo_context *ctx);

/* The process's default context (made on first use; never NULL unless out
 * of memory).  Borrowed: never destroy it. */
SHLO_API shlo_context *shlo_default_context(void);
/* Set the options the default context will be made with.  Call before
 * anything uses it (before the first compile or execute without a
 * context); SHLO_EINPUT once it exists, or for options with an allocator
 * (the default context always uses the C library's: give an allocator to
 * a context of your own). */
SHLO_API shlo_status shlo_default_context_configure(
    const shlo_context_options *o);

/* shlo_tensor_new with the data from ctx's allocator (the caller owns the
 * one reference; NULL when out of memory). */
SHLO_API shlo_value *shlo_context_tensor_new(shlo_context *ctx,
                                             shlo_elem_type elem, int rank,
                                             const int64_t *dims);

#ifdef __cplusplus
}
#endif

#endif
