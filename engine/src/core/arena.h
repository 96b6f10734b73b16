/* SPDX-License-Identifier: Apache-2.0 */
/* A bump allocator that owns everything one module (or one request) builds.
 * Freeing the arena frees all of it at once, plus any values registered
 * with shlo__arena_own_value. */
#ifndef SHLO_ARENA_H
#define SHLO_ARENA_H

#include <stddef.h>

#include "shlo/tensor.h"

typedef struct shlo_arena shlo_arena;

shlo_arena *shlo__arena_new(void);
void shlo__arena_free(shlo_arena *a);
/* Zeroed, 16-byte aligned memory; NULL when out of memory. */
void *shlo__arena_alloc(shlo_arena *a, size_t size);
char *shlo__arena_strndup(shlo_arena *a, const char *s, size_t n);
/* The arena takes the caller's reference to v and drops it when freed. */
int shlo__arena_own_value(shlo_arena *a, shlo_value *v);
/* Bytes handed out so far. */
size_t shlo__arena_used(const shlo_arena *a);

#endif
