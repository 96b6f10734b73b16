/* SPDX-License-Identifier: Apache-2.0 */
/* A small table from a short text key (a client's address, a token's
 * name) to a count, for the per-client caps: connections per address and
 * requests in flight per client.  Loop thread only.  A key whose count
 * falls to 0 leaves the table, so it holds only clients with something
 * open. */
#ifndef SHLO_SRV_COUNTS_H
#define SHLO_SRV_COUNTS_H

#include <stdbool.h>
#include <stddef.h>

#define SRV_COUNT_KEY 64 /* longer keys are truncated */

typedef struct srv_count_slot {
  char key[SRV_COUNT_KEY]; /* "" = empty */
  int count;
  void *data; /* the caller's, kept with the key; NULL when it arrives */
} srv_count_slot;

typedef struct srv_counts {
  srv_count_slot *slots;
  size_t cap, n; /* cap: 0 or a power of two */
} srv_counts;

/* The count of key (0 when absent). */
int counts_get(const srv_counts *t, const char *key);
/* Add delta to key's count; returns the new count, or -1 when the table
 * cannot grow (nothing changed).  A key that falls to 0 leaves with its
 * data: take it (counts_data) before. */
int counts_add(srv_counts *t, const char *key, int delta);
/* The data slot of a key in the table (NULL when absent); valid until the
 * table next changes. */
void **counts_data(srv_counts *t, const char *key);
void counts_free(srv_counts *t);

#endif
