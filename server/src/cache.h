/* SPDX-License-Identifier: Apache-2.0 */
/* The module cache: SHA-256(program text [+ grid shape]) -> parsed module
 * and its compiled executables, LRU, bounded in bytes, shared by every
 * worker thread.  An entry is reference counted: eviction or DELETE unlinks
 * it at once (its bytes leave the budget) and frees it when the last user
 * releases it, so an executable is never freed while it runs. */
#ifndef SHLO_SRV_CACHE_H
#define SHLO_SRV_CACHE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shlo/engine.h"

#define SRV_ID_LEN 72 /* "sha256:" + 64 hex + NUL */
#define SRV_MAX_EXES 8

typedef struct srv_exe {
  char *entry; /* function name */
  shlo_executable *e;
} srv_exe;

/* Bounds on turning a program's text into executables, from the server's
 * configuration: max-program-ops, compile-timeout-ms (each 0 = none) and a
 * flag that cancels (may be NULL; a compile's own comes from its
 * cache_waiter). */
typedef struct cache_bounds {
  int64_t max_ops;
  int64_t timeout_ms;
  const shlo_cancel *cancel;
  int64_t max_depth; /* max-nesting-depth; 0 = the engine's default */
} cache_bounds;

/* The engine's limits for one stage of work that starts now. */
void cache_bounds_start(const cache_bounds *b, shlo_compile_limits *out);
/* After a stage under l failed with st: a limit's message names the
 * option that refused it ("limit compile-timeout-ms (10000) exceeded: "). */
void cache_bounds_explain(const cache_bounds *b, const shlo_compile_limits *l,
                          shlo_status st, shlo_diag *d);

typedef struct cache_entry {
  uint8_t key[32];
  char *text;           /* the program text (a copy), for cache_find_text */
  size_t text_len;
  uint64_t text_hash;   /* cache_text_hash of text and the key's grid */
  char id[SRV_ID_LEN];
  shlo_module *m;       /* owned; the executables borrow it */
  bool verified;        /* m passed the verifier with no diagnostic */
  int replicas, partitions;
  size_t bytes;         /* estimate, see cache_estimate_bytes */
  int refs;             /* under the cache lock */
  bool linked;          /* in the table */
  uint64_t hits;
  char *entry;          /* the entry function named when it was first
                           posted (NULL: the module's); immutable once
                           linked */
  atomic_int slow_us;   /* recent slowest execution, -1 before the first
                           (workers write, the loop reads: srv lanes) */
  cache_bounds bounds;  /* for compiling its functions; set by its creator */
  shlo_cancel compile_stop; /* the engine's cancel flag while one compiles:
                              set when every request waiting for it is
                              gone (cache_waiter), or at shutdown */
  /* Compiling takes lock (one compile of an entry at a time); reading
   * never does: exes[i] is complete before n_exes counts it (a release
   * store), so the loop thread never waits on a compile (cache_entry_peek). */
  pthread_mutex_t lock;
  atomic_int n_exes;
  srv_exe exes[SRV_MAX_EXES];
  char *info;           /* JSON {"id", "functions", ...}, built at creation */
  /* The teams that registered or ran it (opaque pointers, cache lock):
   * each sees it and is charged its bytes.  Empty: nobody's yet. */
  const void **owners;
  int n_owners, cap_owners;
  _Atomic double cost_ms; /* what its first parse + compile took, and
                             each later entry function's compile: a
                             team's first use of another team's module
                             waits this long (teams.h) */
  struct cache_entry *prev, *next; /* LRU list, most recent first */
} cache_entry;

/* One owner's charge: the bytes of the entries it owns, and its share,
 * below which other owners' inserts do not evict its entries (0 = no
 * share: not protected, not capped). */
typedef struct cache_use {
  const void *owner;
  size_t bytes, share;
} cache_use;

/* A request that waits for a compile, or does it: a compile shared by
 * several requests (an entry's function) stops only when every one of
 * them is gone; one that only its request waits for (parsing a new
 * program) when that request is gone; every compile at shutdown. */
typedef struct cache_waiter {
  const void *work;       /* the entry compiled, or this waiter alone */
  const shlo_cancel *gone; /* the request's cancel flag: nonzero = gone */
  shlo_cancel *stop;       /* the engine's cancel flag of work */
  shlo_cancel own_stop;    /* stop, for work done for this waiter alone */
  struct cache_waiter *prev, *next;
} cache_waiter;

typedef struct srv_cache {
  pthread_mutex_t lock;
  cache_use *uses;
  int n_uses;
  size_t max_bytes, bytes;
  int n;
  uint64_t hits, misses, evictions;
  cache_entry *head, *tail;
  cache_waiter *waiters; /* under lock */
  atomic_bool stopping;  /* shutdown: every compile stops, none starts */
} srv_cache;

void cache_init(srv_cache *c, size_t max_bytes);
void cache_destroy(srv_cache *c);

/* Key of a program: SHA-256 of the text, then "\0grid=RxP" when the
 * request names a grid other than 1x1 (so without one the id equals
 * `sha256sum` of the file).  A dimension the request leaves out (0) is 1
 * when it names the other, so {"replicas": 2} and {"replicas": 2,
 * "partitions": 1} are one module. */
void cache_key(const char *text, size_t len, int replicas, int partitions,
               uint8_t key[32]);
void cache_key_to_id(const uint8_t key[32], char id[SRV_ID_LEN]);
/* Parse "sha256:<hex>" or "<hex>"; false if malformed. */
bool cache_id_to_key(const char *id, uint8_t key[32]);

/* A referenced entry (count_stats: count a hit or a miss), or NULL. */
cache_entry *cache_get(srv_cache *c, const uint8_t key[32], bool count_stats);
/* Count a hit found by a cache_get that did not count it (a lookup that
 * could still have been declined). */
void cache_count_hit(srv_cache *c);
/* The fast path of cache_key + cache_get for a program's text: finds the
 * entry by a cheap hash of the text and grid, confirmed by comparing the
 * text itself, so SHA-256 runs only on a miss.  A hit is referenced, and
 * counted when count_hit; a miss is not counted (the caller goes on to
 * cache_get). */
cache_entry *cache_find_text(srv_cache *c, const char *text, size_t len,
                             int replicas, int partitions, bool count_hit);
/* Make `entry` the function an unlinked entry runs when a request names
 * none (its info says so too).  -1 on OOM. */
int cache_entry_set_entry(cache_entry *e, const char *entry);
/* Record an execution's run time (any thread): the lanes send a module
 * whose recent runs were quick to the short lane. */
void cache_entry_ran(cache_entry *e, double seconds);
/* New unlinked entry owning m (refs = 1), keeping a copy of the program
 * text it was parsed from.  NULL on OOM (m not freed). */
cache_entry *cache_entry_new(shlo_module *m, const uint8_t key[32],
                             int replicas, int partitions, const char *text,
                             size_t text_len);
/* Link e (the caller keeps its reference) and evict LRU entries over the
 * budget.  If the key is there already, releases e and returns the existing
 * entry, referenced.  An entry larger than the whole budget is not linked
 * (it lives until released) and *too_big is set. */
cache_entry *cache_insert(srv_cache *c, cache_entry *e, bool *too_big);
void cache_release(srv_cache *c, cache_entry *e);
/* One more reference to e, which the caller holds one of already (linked
 * or not): released with cache_release. */
void cache_retain(srv_cache *c, cache_entry *e);
/* Unlink; false if absent. */
bool cache_remove(srv_cache *c, const uint8_t key[32]);
/* The executable of `entry` (NULL: e->entry, else the module's entry
 * function) if it is compiled already; NULL otherwise.  Never compiles,
 * never blocks: the loop thread calls it. */
const shlo_executable *cache_entry_peek(cache_entry *e, const char *entry);
/* The executable for function `entry` (NULL as for peek), compiling it on
 * first use (*compiled set) within e->bounds.  Borrowed from e.  gone
 * (may be NULL) is the asking request's cancel flag: the compile stops
 * (SHLO_ECANCELED) once every request that waits for it is gone, or the
 * cache is stopping. */
shlo_status cache_entry_exe(srv_cache *c, cache_entry *e, const char *entry,
                            const shlo_cancel *gone,
                            const shlo_executable **out, bool *compiled,
                            shlo_diag *diag);
/* Count w (caller's storage, until cache_wait_end) as waiting for work
 * (an entry; NULL: w alone, with w->own_stop as its flag) on behalf of a
 * request whose cancel flag is gone.  Sets the work's flag at once when
 * that is already all gone, or the cache is stopping. */
void cache_wait_begin(srv_cache *c, cache_waiter *w, const void *work,
                      const shlo_cancel *gone);
void cache_wait_end(srv_cache *c, cache_waiter *w);
/* After setting requests' cancel flags (any thread): stop the compiles
 * that no one waits for any more. */
void cache_recheck_waits(srv_cache *c);
/* Shutdown: stop every compile now and refuse new ones (ECANCELED). */
void cache_stop_compiles(srv_cache *c);
bool cache_stopping(srv_cache *c);
/* {"modules": [info...]} (malloc'd). */
char *cache_list_json(srv_cache *c);

/* ---- owners (teams) ----
 * A module belongs to the owners that adopted it; the compiled code is
 * shared.  owner NULL in a lookup means "any owner" (an admin). */

/* Set an owner's share (creating its record); -1 on OOM. */
int cache_set_share(srv_cache *c, const void *owner, size_t share);
/* The bytes charged to an owner now. */
size_t cache_owner_bytes(srv_cache *c, const void *owner);
/* cache_get that finds only an entry the owner owns: another owner's
 * entry is a miss, exactly as an unknown key. */
cache_entry *cache_get_for(srv_cache *c, const uint8_t key[32],
                           const void *owner, bool count_stats);
bool cache_owns(srv_cache *c, const cache_entry *e, const void *owner);

typedef enum {
  CACHE_ADOPTED,    /* now owned (or unlinked: nothing to own) */
  CACHE_HAD,        /* the owner had it already */
  CACHE_OVER_SHARE  /* it would take the owner past its share */
} cache_adopt_result;
/* Make owner an owner of e and charge it e's bytes.  Past its share, with
 * evict_own the owner gives up its least recently used entries first;
 * without, nothing changes and CACHE_OVER_SHARE says why. */
cache_adopt_result cache_adopt(srv_cache *c, cache_entry *e,
                               const void *owner, bool evict_own);

enum { CACHE_FITS, CACHE_TOO_BIG, CACHE_NO_ROOM };
/* cache_insert on behalf of owner: evicts least recently used entries
 * only where each of their owners is owner itself or over its share.
 * *no_room: CACHE_TOO_BIG (over the whole budget) or CACHE_NO_ROOM (the
 * rest is other owners' shares); then e is not linked. */
cache_entry *cache_insert_for(srv_cache *c, cache_entry *e, const void *owner,
                              int *no_room);
/* Give up owner's claim on the entry of key (owner NULL: every claim);
 * an entry nobody owns any more leaves the cache.  False if the owner did
 * not own it. */
bool cache_disown(srv_cache *c, const uint8_t key[32], const void *owner);
/* {"modules": [info...]} of the entries owner owns (NULL: all). */
char *cache_list_for(srv_cache *c, const void *owner);
/* The same, with more(b, e, ctx) adding keys (",\"k\":v...") to each
 * entry's object; it runs under the cache lock, so it takes no lock that
 * is ever held while the cache lock is taken. */
struct strbuf;
char *cache_list_with(srv_cache *c, const void *owner,
                      void (*more)(struct strbuf *b, const cache_entry *e,
                                   void *ctx),
                      void *ctx);

#endif
