/* SPDX-License-Identifier: Apache-2.0 */
/* Bump allocator in chunks; big requests get a chunk of their own. */
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "core/context_int.h"

#define CHUNK_SIZE (64 * 1024)

typedef struct chunk {
  struct chunk *next;
  size_t used, cap;
  _Alignas(16) unsigned char data[];
} chunk;

typedef struct owned {
  struct owned *next;
  shlo_value *v;
} owned;

struct shlo_arena {
  shlo_context *ctx; /* whose allocator the chunks come from */
  chunk *head;
  owned *values;
  size_t total;
};

/* A module's IR is its arena: it comes from the context the thread works
 * in when the module is made (shlo_load's, or a compile's), and goes back
 * there whoever frees it. */
shlo_arena *shlo__arena_new(void) {
  shlo_context *ctx = shlo__ctx_current();
  shlo_arena *a = shlo__ctx_calloc(ctx, 1, sizeof *a);
  if (a) a->ctx = ctx;
  return a;
}

void shlo__arena_free(shlo_arena *a) {
  if (!a) return;
  for (owned *o = a->values; o;) {
    owned *next = o->next;
    shlo_value_unref(o->v);
    shlo__ctx_free(a->ctx, o);
    o = next;
  }
  for (chunk *c = a->head; c;) {
    chunk *next = c->next;
    shlo__ctx_free(a->ctx, c);
    c = next;
  }
  shlo__ctx_free(a->ctx, a);
}

void *shlo__arena_alloc(shlo_arena *a, size_t size) {
  size = (size + 15) & ~(size_t)15;
  if (size == 0) size = 16;
  chunk *c = a->head;
  if (!c || c->cap - c->used < size) {
    size_t cap = size > CHUNK_SIZE / 4 ? size : CHUNK_SIZE;
    if (cap > SIZE_MAX - sizeof(chunk)) return NULL;
    chunk *n = shlo__ctx_malloc(a->ctx, sizeof(chunk) + cap);
    if (!n) return NULL;
    n->used = 0;
    n->cap = cap;
    if (cap == size && c) {
      /* A big block goes behind the current chunk so its free space
       * stays usable. */
      n->next = c->next;
      c->next = n;
    } else {
      n->next = c;
      a->head = n;
    }
    c = n;
  }
  void *p = c->data + c->used;
  c->used += size;
  a->total += size;
  memset(p, 0, size);
  return p;
}

char *shlo__arena_strndup(shlo_arena *a, const char *s, size_t n) {
  char *d = shlo__arena_alloc(a, n + 1);
  if (!d) return NULL;
  memcpy(d, s, n);
  d[n] = 0;
  return d;
}

int shlo__arena_own_value(shlo_arena *a, shlo_value *v) {
  owned *o = shlo__ctx_malloc(a->ctx, sizeof *o);
  if (!o) {
    shlo_value_unref(v);
    return -1;
  }
  o->v = v;
  o->next = a->values;
  a->values = o;
  return 0;
}

size_t shlo__arena_used(const shlo_arena *a) { return a->total; }
