/* SPDX-License-Identifier: Apache-2.0 */
/* Giving memory back after big requests (server.h). */
#include <malloc.h>
#include <stdlib.h>

#include "server.h"
#include "shlo/tensor.h"

void srv_memory_after_request(size_t bytes) {
  /* glibc keeps freed heap memory for reuse, and raises its mmap threshold
   * as big blocks come and go, so a large request's tensors and buffers
   * can stay resident long after it; malloc_trim returns the free pages
   * of every arena.  It walks the arenas, so only after big requests. */
  if (bytes < SRV_TRIM_AFTER_BYTES) return;
  /* The engine's reuse cache of large buffers goes first: it may hold the
   * request's tensors, up to 64 MiB.  Back-to-back big requests lose that
   * reuse and pay page faults instead; a shared server's RSS coming back
   * after one is worth more. */
  shlo_buffer_cache_release();
  malloc_trim(0);
}

void srv_memory_init(int workers) {
  /* glibc gives a thread that finds the arenas busy a new one, up to 8 per
   * core, and an arena keeps what was freed into it.  The workers, the
   * engine's kernel threads and a grid's one thread per process would
   * spread a long-running server's heap over dozens of arenas, each with
   * its own free memory that RSS never gives back.  One arena per worker
   * plus the loop's main arena is what the work needs; the operator's
   * MALLOC_ARENA_MAX wins. */
  if (getenv("MALLOC_ARENA_MAX")) return;
  mallopt(M_ARENA_MAX, workers + 1);
}
