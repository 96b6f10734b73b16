/* SPDX-License-Identifier: Apache-2.0 */
/* Names to ints (namemap.h). */
#include "core/namemap.h"

#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"

unsigned shlo__name_hash(const char *s, size_t n) {
  unsigned h = 2166136261u;
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 16777619u;
  return h;
}

static shlo_name_entry *find(const shlo_name_map *m, const char *s, size_t n) {
  size_t mask = m->cap - 1;
  for (size_t i = shlo__name_hash(s, n) & mask;; i = (i + 1) & mask) {
    shlo_name_entry *e = &m->e[i];
    if (!e->name || (e->len == n && !memcmp(e->name, s, n))) return e;
  }
}

int shlo__name_map_get(const shlo_name_map *m, const char *s, size_t n) {
  if (!m->cap) return -1;
  const shlo_name_entry *e = find(m, s, n);
  return e->name ? e->value : -1;
}

static bool grow(shlo_name_map *m) {
  size_t cap = m->cap ? 2 * m->cap : 64;
  shlo_name_map bigger = {shlo__calloc(cap, sizeof *bigger.e), cap, m->n};
  if (!bigger.e) return false;
  for (size_t i = 0; i < m->cap; i++)
    if (m->e[i].name) *find(&bigger, m->e[i].name, m->e[i].len) = m->e[i];
  shlo__free(m->e);
  *m = bigger;
  return true;
}

bool shlo__name_map_put(shlo_name_map *m, const char *s, size_t n, int value) {
  if (2 * (m->n + 1) > m->cap && !grow(m)) return false;
  shlo_name_entry *e = find(m, s, n);
  if (e->name) return true;
  *e = (shlo_name_entry){s, n, value};
  m->n++;
  return true;
}

void shlo__name_map_free(shlo_name_map *m) {
  shlo__free(m->e);
  m->e = NULL;
  m->cap = m->n = 0;
}
