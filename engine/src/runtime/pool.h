/* The engine's fork-join thread pool.
 *
 * shlo__parallel_for splits [0, n) into chunks of at least `grain` and runs
 * fn(ctx, begin, end) on them from the calling thread and the pool's
 * workers, returning when every chunk is done.  Any number of threads may
 * call it at once (concurrent executions share the workers); a call made
 * from inside a chunk runs inline.  The pool starts on first use with one
 * worker per core beyond the caller (SHLO_THREADS overrides the total). */
#ifndef SHLO_POOL_H
#define SHLO_POOL_H

#include <stdint.h>

typedef void (*shlo_range_fn)(void *ctx, int64_t begin, int64_t end);

void shlo__parallel_for(int64_t n, int64_t grain, shlo_range_fn fn, void *ctx);

/* Threads that take part in a parallel_for (workers + the caller). */
int shlo__pool_threads(void);

#endif
