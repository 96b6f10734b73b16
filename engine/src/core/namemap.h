/* SPDX-License-Identifier: Apache-2.0 */
/* Names to ints: an open-addressing hash map for lookups that would be
 * quadratic as linear scans (the parser's aliases and function names).
 * Keys are borrowed (name, length) pairs that must outlive the map. */
#ifndef SHLO_CORE_NAMEMAP_H
#define SHLO_CORE_NAMEMAP_H

#include <stdbool.h>
#include <stddef.h>

typedef struct shlo_name_entry {
  const char *name; /* NULL = empty */
  size_t len;
  int value;
} shlo_name_entry;

typedef struct shlo_name_map {
  shlo_name_entry *e;
  size_t cap, n; /* cap: 0 or a power of two, kept above 2n */
} shlo_name_map;

/* FNV-1a of the name (shared with the parser's scope table). */
unsigned shlo__name_hash(const char *s, size_t n);
/* The value of name, or -1 when absent. */
int shlo__name_map_get(const shlo_name_map *m, const char *s, size_t n);
/* Add name -> value unless name is there (the first one stays); false
 * on OOM. */
bool shlo__name_map_put(shlo_name_map *m, const char *s, size_t n, int value);
void shlo__name_map_free(shlo_name_map *m);

#endif
