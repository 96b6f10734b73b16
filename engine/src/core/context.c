/* SPDX-License-Identifier: Apache-2.0 */
/* The core half of a context (core/context_int.h): allocation through the
 * context's allocator, its buffer cache, and the thread's current context. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#ifdef __SANITIZE_ADDRESS__ /* GCC's ASan builds (deploy/test.sh) */
#include <sanitizer/asan_interface.h>
#define SHLO_ASAN 1
#endif

#include "core/alloc.h"
#include "core/context_int.h"

#define DATA_ALIGN 64

/* The scope the calling thread runs in (NULL: none, the default). */
static _Thread_local shlo_context *current;
/* The default context once runtime/context.c has made it. */
static _Atomic(shlo_context *) default_ctx;
/* What the default context is made with; written by configure before it
 * exists (runtime/context.c serialises both). */
static shlo_context_options default_opts = {
    .struct_size = sizeof(shlo_context_options), .buffer_cache_bytes = -1};

shlo_context *shlo__ctx_current(void) {
  return current ? current : atomic_load_explicit(&default_ctx,
                                                  memory_order_acquire);
}

shlo_context *shlo__ctx_default(void) {
  return atomic_load_explicit(&default_ctx, memory_order_acquire);
}

shlo_context *shlo__ctx_swap(shlo_context *c) {
  shlo_context *prev = current;
  current = c;
  return prev;
}

const shlo_context_options *shlo__ctx_options(const shlo_context *c) {
  return c ? &c->opts : &default_opts;
}

void shlo__ctx_publish_default(shlo_context *c) {
  atomic_store_explicit(&default_ctx, c, memory_order_release);
}

shlo_context_options *shlo__ctx_default_options(void) { return &default_opts; }

/* ---- allocation ---- */

void *shlo__ctx_malloc(shlo_context *c, size_t n) {
  if (c && c->custom_alloc)
    return c->opts.allocator.alloc(c->opts.allocator.user, n ? n : 1);
  return malloc(n ? n : 1);
}

void *shlo__ctx_calloc(shlo_context *c, size_t n, size_t size) {
  if (!(c && c->custom_alloc)) return calloc(n ? n : 1, size ? size : 1);
  if (size && n > SIZE_MAX / size) return NULL;
  void *p = shlo__ctx_malloc(c, n * size);
  if (p) memset(p, 0, n * size);
  return p;
}

void *shlo__ctx_realloc(shlo_context *c, void *p, size_t n) {
  if (c && c->custom_alloc)
    return c->opts.allocator.realloc(c->opts.allocator.user, p, n ? n : 1);
  return realloc(p, n ? n : 1);
}

void shlo__ctx_free(shlo_context *c, void *p) {
  if (!p) return;
  if (c && c->custom_alloc) c->opts.allocator.free(c->opts.allocator.user, p);
  else free(p);
}

/* ---- core/alloc.h: the thread's context ---- */

void *shlo__malloc(size_t n) { return shlo__ctx_malloc(shlo__ctx_current(), n); }

void *shlo__calloc(size_t n, size_t size) {
  return shlo__ctx_calloc(shlo__ctx_current(), n, size);
}

void *shlo__realloc(void *p, size_t n) {
  return shlo__ctx_realloc(shlo__ctx_current(), p, n);
}

void shlo__free(void *p) { shlo__ctx_free(shlo__ctx_current(), p); }

/* Buffers of several MB are asked for huge pages: a fresh 64 MB tensor
 * otherwise takes 16384 page faults to fill, which cost more than the
 * copy itself (a server reading a large input into it ran at 0.05 GB/s
 * on a virtual machine, where faults are dear). */
#define HUGE_PAGE ((size_t)2 << 20)

static void *system_data_alloc(size_t cap) {
  if (cap < 2 * HUGE_PAGE) return aligned_alloc(DATA_ALIGN, cap);
  size_t n = (cap + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
  void *p = aligned_alloc(HUGE_PAGE, n);
#ifdef MADV_HUGEPAGE
  if (p) (void)madvise(p, n, MADV_HUGEPAGE); /* a hint: failure is fine */
#endif
  return p;
}

/* Aligned by hand over c's malloc (an embedder's promises no alignment;
 * glibc's aligned_alloc fragments, see shlo__aligned_alloc): take
 * DATA_ALIGN more and keep the block's own address just below the
 * aligned data.  Under
 * AddressSanitizer the bytes past cap are poisoned, so that reading or
 * writing past the block is still caught where it begins. */
static void *aligned_over_malloc(shlo_context *c, size_t cap) {
  if (cap > SIZE_MAX - DATA_ALIGN - sizeof(void *)) return NULL;
  size_t whole = cap + DATA_ALIGN + sizeof(void *);
  char *raw = shlo__ctx_malloc(c, whole);
  if (!raw) return NULL;
  uintptr_t at = ((uintptr_t)(raw + sizeof(void *)) + DATA_ALIGN - 1) &
                 ~(uintptr_t)(DATA_ALIGN - 1);
  ((void **)at)[-1] = raw;
#ifdef SHLO_ASAN
  ASAN_POISON_MEMORY_REGION((char *)at + cap, (size_t)(raw + whole - ((char *)at + cap)));
#endif
  return (void *)at;
}

static void data_release(shlo_context *c, void *p) {
  if (c && c->custom_alloc) shlo__ctx_free(c, ((void **)p)[-1]);
  else free(p);
}

/* ---- the buffer cache ----
 *
 * Large buffers freed by one step are wanted again by the next: glibc
 * hands big blocks back to the kernel, so every reuse page-faults 4 KB at
 * a time (a 2 MB elementwise op cost 850 us instead of 150).  A few freed
 * buffers are kept, by size, for the next allocation of that size. */
#define CACHE_MIN ((size_t)64 << 10)

static void *cache_take(shlo_context *c, size_t cap) {
  void *b = NULL;
  if (!c || cap < CACHE_MIN || cap > c->cache_max) return NULL;
  pthread_mutex_lock(&c->cache_lock);
  for (int i = 0; i < SHLO__CACHE_SLOTS && !b; i++)
    if (c->cache_buf[i] && c->cache_cap[i] == cap) {
      b = c->cache_buf[i];
      c->cache_buf[i] = NULL;
      c->cache_bytes -= cap;
    }
  pthread_mutex_unlock(&c->cache_lock);
  return b;
}

/* Keep b if it is large and fits.  One buffer may take the whole cache: a
 * server receiving 64 MB inputs one after another then reuses the last
 * one's pages instead of having the kernel zero fresh ones for each. */
static bool cache_give(shlo_context *c, void *b, size_t cap) {
  bool kept = false;
  if (!c || cap < CACHE_MIN || cap > c->cache_max) return false;
  pthread_mutex_lock(&c->cache_lock);
  for (int i = 0; i < SHLO__CACHE_SLOTS && !kept; i++)
    if (!c->cache_buf[i] && c->cache_bytes + cap <= c->cache_max) {
      c->cache_buf[i] = b;
      c->cache_cap[i] = cap;
      c->cache_bytes += cap;
      kept = true;
    }
  pthread_mutex_unlock(&c->cache_lock);
  return kept;
}

void *shlo__ctx_data_alloc(shlo_context *c, size_t cap) {
  void *b = cache_take(c, cap);
  if (b) return b;
  return c && c->custom_alloc ? aligned_over_malloc(c, cap)
                              : system_data_alloc(cap);
}

void shlo__ctx_data_free(shlo_context *c, void *p, size_t cap) {
  if (p && !cache_give(c, p, cap)) data_release(c, p);
}

/* Kernel scratch: never from the buffer cache.  shlo__aligned_free knows
 * no size to give a block back to it with, so a scratch block taken from
 * the cache would leave it for good, and the next run's tensors of that
 * size would fault in fresh pages (layernorm's tiles ran 3-10x slower).
 *
 * Aligned by hand over a plain malloc, as for an embedder's allocator,
 * also on glibc's: its aligned_alloc carves each block out of a larger
 * one and leaves the pieces between, so a freed block did not fit the
 * next request of the same size, and the heap grew by the GEMM panels'
 * 512 KiB every run, each faulted in afresh (linear_f32's first ten
 * runs took 1.3-1.4 ms instead of 1.03). */
void *shlo__aligned_alloc(size_t n) {
  if (n > SIZE_MAX - DATA_ALIGN) return NULL;
  size_t cap = (n + DATA_ALIGN - 1) / DATA_ALIGN * DATA_ALIGN;
  if (!cap) cap = DATA_ALIGN;
  return aligned_over_malloc(shlo__ctx_current(), cap);
}

void shlo__aligned_free(void *p) {
  if (p) shlo__ctx_free(shlo__ctx_current(), ((void **)p)[-1]);
}

void shlo__ctx_cache_release(shlo_context *c) {
  void *keep[SHLO__CACHE_SLOTS];
  if (!c) return;
  pthread_mutex_lock(&c->cache_lock);
  for (int i = 0; i < SHLO__CACHE_SLOTS; i++) {
    keep[i] = c->cache_buf[i];
    c->cache_buf[i] = NULL;
  }
  c->cache_bytes = 0;
  pthread_mutex_unlock(&c->cache_lock);
  for (int i = 0; i < SHLO__CACHE_SLOTS; i++)
    if (keep[i]) data_release(c, keep[i]);
}

#define CACHE_DEFAULT_BYTES ((size_t)64 << 20)

void shlo__ctx_core_init(shlo_context *c, const shlo_context_options *o) {
  c->custom_alloc = o->allocator.alloc != NULL;
  pthread_mutex_init(&c->cache_lock, NULL);
  c->cache_max = o->buffer_cache_bytes < 0 ? CACHE_DEFAULT_BYTES
                                           : (size_t)o->buffer_cache_bytes;
}

void shlo__ctx_core_fini(shlo_context *c) {
  shlo__ctx_cache_release(c);
  pthread_mutex_destroy(&c->cache_lock);
}
