/* SPDX-License-Identifier: Apache-2.0 */
/* The engine's fork-join thread pools, one per context (shlo/context.h).
 *
 * shlo__parallel_for splits [0, n) into chunks of at least `grain` and runs
 * fn(ctx, begin, end) on them from the calling thread and the workers of
 * the calling thread's context (core/context_int.h: the scope an execution
 * or compile sets; the default context outside one), returning when every
 * chunk is done.  Any number of threads may call it at once (concurrent
 * executions share the workers); a call made from inside a chunk runs
 * inline. */
#ifndef SHLO_POOL_H
#define SHLO_POOL_H

#include <stdbool.h>
#include <stdint.h>

#include "shlo/context.h"

typedef void (*shlo_range_fn)(void *ctx, int64_t begin, int64_t end);
typedef struct shlo__pool shlo__pool;

void shlo__parallel_for(int64_t n, int64_t grain, shlo_range_fn fn, void *ctx);

/* Threads that take part in a parallel_for of the calling thread's
 * context (workers + the caller). */
int shlo__pool_threads(void);

/* From now on the calling thread runs the parallel_for calls it makes by
 * itself, as a pool of one (shlo__pool_threads then says 1), when on;
 * returns the setting it replaces.  An execution timed alone sets it
 * (core/timed_choice.h). */
bool shlo__pool_alone(bool on);

/* A pool of `threads` (<= 0: one per core; at most 256) for context ctx:
 * threads - 1 workers, lent by exec when exec->run is set, else started
 * here.  NULL when out of memory; fewer workers when some cannot start. */
shlo__pool *shlo__pool_new(shlo_context *ctx, int threads,
                           const shlo_executor *exec);
/* Stop the workers and wait until each has returned (joining the pool's
 * own threads), then free the pool.  No parallel_for may be running. */
void shlo__pool_free(shlo__pool *pool);
int shlo__pool_size(const shlo__pool *pool);

#endif
