/* Giving memory back after big requests (server.h). */
#include <malloc.h>

#include "server.h"

void srv_memory_after_request(size_t bytes) {
  /* glibc keeps freed heap memory for reuse, and raises its mmap threshold
   * as big blocks come and go, so a large request's tensors and buffers
   * can stay resident long after it; malloc_trim returns the free pages
   * of every arena.  It walks the arenas, so only after big requests. */
  if (bytes >= SRV_TRIM_AFTER_BYTES) malloc_trim(0);
}
