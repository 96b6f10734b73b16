/* SPDX-License-Identifier: Apache-2.0 */
/* Copies whose stores bypass the caches, for results written once and
 * not read again soon: caching them would cost a read of every line
 * before it is overwritten, and would evict what the kernel still needs.
 * SSE2 (every x86-64) stores 16 bytes at a time, AVX-512F 64, picked at
 * run time; elsewhere a plain memcpy.  The stores are weakly ordered: a
 * worker calls shlo__stream_fence before its part is joined. */
#ifndef SHLO_STREAM_STORE_H
#define SHLO_STREAM_STORE_H

#include <stddef.h>

/* Results at least this large (bigger than L2) are worth streaming. */
#define SHLO_STREAM_MIN_BYTES ((size_t)2 << 20)

/* dst[0..n) = src[0..n); the buffers do not overlap. */
void shlo__stream_copy(void *dst, const void *src, size_t n);

/* Order the streamed stores of this thread before what follows. */
void shlo__stream_fence(void);

#endif
