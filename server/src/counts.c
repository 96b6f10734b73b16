/* SPDX-License-Identifier: Apache-2.0 */
/* Open addressing with linear probing; deletion shifts the following run
 * back, so there are no tombstones to clean up (see counts.h). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "counts.h"

static size_t hash_key(const char *k) {
  uint64_t h = 1469598103934665603u; /* FNV-1a */
  for (; *k; k++) h = (h ^ (uint8_t)*k) * 1099511628211u;
  return (size_t)(h ^ (h >> 29));
}

/* The slot of key, or the empty slot where it would go. */
static size_t probe(const srv_counts *t, const char *key) {
  size_t mask = t->cap - 1, i = hash_key(key) & mask;
  while (t->slots[i].key[0] && strcmp(t->slots[i].key, key)) i = (i + 1) & mask;
  return i;
}

static int grow(srv_counts *t) {
  size_t cap = t->cap ? t->cap * 2 : 64;
  srv_counts bigger = {calloc(cap, sizeof(srv_count_slot)), cap, 0};
  if (!bigger.slots) return -1;
  for (size_t i = 0; i < t->cap; i++)
    if (t->slots[i].key[0]) {
      bigger.slots[probe(&bigger, t->slots[i].key)] = t->slots[i];
      bigger.n++;
    }
  free(t->slots);
  *t = bigger;
  return 0;
}

/* Empty slot i and move back the entries of its run that probed past it. */
static void remove_at(srv_counts *t, size_t i) {
  size_t mask = t->cap - 1, j = i;
  t->slots[i].key[0] = 0;
  t->n--;
  for (;;) {
    j = (j + 1) & mask;
    if (!t->slots[j].key[0]) return;
    size_t home = hash_key(t->slots[j].key) & mask;
    /* j stays if its home lies cyclically in (i, j] */
    bool stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
    if (stays) continue;
    t->slots[i] = t->slots[j];
    t->slots[j].key[0] = 0;
    i = j;
  }
}

int counts_get(const srv_counts *t, const char *key) {
  if (!t->cap) return 0;
  char k[SRV_COUNT_KEY];
  strncpy(k, key[0] ? key : "-", sizeof k - 1);
  k[sizeof k - 1] = 0;
  const srv_count_slot *s = &t->slots[probe(t, k)];
  return s->key[0] ? s->count : 0;
}

int counts_add(srv_counts *t, const char *key, int delta) {
  char k[SRV_COUNT_KEY];
  strncpy(k, key[0] ? key : "-", sizeof k - 1);
  k[sizeof k - 1] = 0;
  if ((t->n + 1) * 2 > t->cap && grow(t)) return -1;
  size_t i = probe(t, k);
  srv_count_slot *s = &t->slots[i];
  if (!s->key[0]) {
    memcpy(s->key, k, sizeof k);
    s->count = 0;
    s->data = NULL;
    t->n++;
  }
  int c = s->count += delta;
  if (c <= 0) {
    remove_at(t, i);
    return 0;
  }
  return c;
}

void **counts_data(srv_counts *t, const char *key) {
  if (!t->cap) return NULL;
  char k[SRV_COUNT_KEY];
  strncpy(k, key[0] ? key : "-", sizeof k - 1);
  k[sizeof k - 1] = 0;
  srv_count_slot *s = &t->slots[probe(t, k)];
  return s->key[0] ? &s->data : NULL;
}

void counts_free(srv_counts *t) {
  free(t->slots);
  *t = (srv_counts){0};
}
