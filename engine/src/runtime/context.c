/* SPDX-License-Identifier: Apache-2.0 */
/* Contexts: create, destroy, the default one (shlo/context.h).  The core
 * half (allocation, buffer cache, the thread's scope) is core/context.c. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/context_int.h"
#include "core/blas_setup.h"
#include "runtime/pool.h"

void shlo_context_options_init(shlo_context_options *o) {
  memset(o, 0, sizeof *o);
  o->struct_size = sizeof *o;
  o->buffer_cache_bytes = -1;
}

/* o as this library's struct: the fields an older caller's struct_size
 * does not cover keep their defaults.  False for a size no caller could
 * have (0, or larger than any struct this library knows). */
static bool read_options(const shlo_context_options *o,
                         shlo_context_options *out) {
  shlo_context_options_init(out);
  if (!o) return true;
  if (o->struct_size < offsetof(shlo_context_options, threads) + sizeof(int) ||
      o->struct_size > sizeof *out)
    return false;
  memcpy(out, o, o->struct_size);
  out->struct_size = sizeof *out;
  return true;
}

static bool allocator_ok(const shlo_allocator *a) {
  bool any = a->alloc || a->realloc || a->free;
  return !any || (a->alloc && a->realloc && a->free);
}

shlo_status shlo_context_create(const shlo_context_options *o,
                                shlo_context **out) {
  *out = NULL;
  shlo_context_options opts;
  if (!read_options(o, &opts) || !allocator_ok(&opts.allocator))
    return SHLO_EINPUT;
  /* OpenBLAS is one per process: the first context decides its core */
  shlo__blas_setup_core(opts.blas_keep_core);
  shlo_context *c;
  if (opts.allocator.alloc)
    c = opts.allocator.alloc(opts.allocator.user, sizeof *c);
  else
    c = malloc(sizeof *c);
  if (!c) return SHLO_ENOMEM;
  memset(c, 0, sizeof *c);
  c->opts = opts;
  shlo__ctx_core_init(c, &opts);
  c->pool = shlo__pool_new(c, opts.threads, &opts.executor);
  if (!c->pool) {
    shlo__ctx_core_fini(c);
    shlo__ctx_free(c, c);
    return SHLO_ENOMEM;
  }
  *out = c;
  return SHLO_OK;
}

void shlo_context_destroy(shlo_context *c) {
  if (!c) return;
  shlo__pool_free(c->pool);
  shlo__ctx_core_fini(c);
  shlo__ctx_free(c, c); /* reads the allocator before the block goes */
}

int shlo_context_threads(const shlo_context *c) {
  return shlo__pool_size(c ? c->pool : NULL);
}

const shlo_context_options *shlo_context_get_options(const shlo_context *c) {
  return shlo__ctx_options(c);
}

void shlo_context_trim(shlo_context *c) { shlo__ctx_cache_release(c); }

/* ---- the default context ---- */

static pthread_mutex_t default_lock = PTHREAD_MUTEX_INITIALIZER;

shlo_context *shlo_default_context(void) {
  shlo_context *c = shlo__ctx_default();
  if (c) return c;
  pthread_mutex_lock(&default_lock);
  c = shlo__ctx_default();
  if (!c && shlo_context_create(shlo__ctx_default_options(), &c) == SHLO_OK)
    shlo__ctx_publish_default(c);
  pthread_mutex_unlock(&default_lock);
  return c;
}

/* The default context takes no allocator: objects made before it exists
 * (with no context in scope) come from the C library's, and may be freed
 * after it does, so both must be the same.  A custom allocator needs an
 * explicit context, whose objects all remember it. */
shlo_status shlo_default_context_configure(const shlo_context_options *o) {
  shlo_context_options opts;
  if (!read_options(o, &opts) || opts.allocator.alloc ||
      opts.allocator.realloc || opts.allocator.free)
    return SHLO_EINPUT;
  shlo_status st = SHLO_OK;
  pthread_mutex_lock(&default_lock);
  if (shlo__ctx_default()) st = SHLO_EINPUT;
  else *shlo__ctx_default_options() = opts;
  pthread_mutex_unlock(&default_lock);
  return st;
}
