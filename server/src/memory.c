/* Giving memory back after big requests (server.h). */
#include <malloc.h>

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
