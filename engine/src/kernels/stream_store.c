/* SPDX-License-Identifier: Apache-2.0 */
/* Streaming copies (stream_store.h). */
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "kernels/stream_store.h"

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx512f"))) static size_t stream_avx512(char *dst,
                                                             const char *src,
                                                             size_t n) {
  size_t i = 0;
  for (; i + 64 <= n; i += 64)
    _mm512_stream_si512((__m512i *)(dst + i),
                        _mm512_loadu_si512((const void *)(src + i)));
  return i;
}

static size_t stream_sse2(char *dst, const char *src, size_t n) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm_stream_si128((__m128i *)(dst + i),
                     _mm_loadu_si128((const __m128i *)(src + i)));
  return i;
}

typedef size_t (*stream_fn)(char *dst, const char *src, size_t n);

static stream_fn stream_pick(void) {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") ? stream_avx512 : stream_sse2;
}
#endif

void shlo__stream_copy(void *dst_, const void *src_, size_t n) {
  char *dst = dst_;
  const char *src = src_;
#if defined(__x86_64__) && defined(__GNUC__)
  static _Atomic(stream_fn) pick;
  stream_fn fn = atomic_load_explicit(&pick, memory_order_relaxed);
  if (!fn)
    atomic_store_explicit(&pick, fn = stream_pick(), memory_order_relaxed);
  size_t i = (64 - ((uintptr_t)dst & 63)) & 63; /* to a line boundary */
  if (i > n) i = n;
  memcpy(dst, src, i);
  i += fn(dst + i, src + i, n - i);
  memcpy(dst + i, src + i, n - i);
#else
  memcpy(dst, src, n);
#endif
}

void shlo__stream_fence(void) {
#if defined(__x86_64__)
  _mm_sfence();
#endif
}
