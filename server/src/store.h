/* SPDX-License-Identifier: Apache-2.0 */
/* The module store (--store DIR) and module names.
 *
 * Every registered module is one file DIR/<64 hex digits>.module, named by
 * its id: a short text header (the format's version, id, its teams, name, entry
 * function, grid, registration time, program size), a blank line, then
 * the program exactly as it was posted (StableHLO text or a portable
 * artifact's bytes).  A file is written to a temporary name, fsync'd and
 * renamed, so a reader sees a whole record or none.  A file that fails any
 * check (its header, its size, or the SHA-256 of its program and grid
 * against its id) is skipped with a log line, never trusted.
 *
 * At start the store's modules are parsed into the cache (no compile: an
 * entry function compiles on first use); a module missing from the cache
 * (evicted, or registered by another server on the same directory) is read
 * back on lookup.  Without --store the names live in memory only.  A
 * temporary file (a write a crash cut short) untouched for
 * STORE_TMP_STALE_S is removed at start.
 *
 * Teams: a record lists every team that registered the module; a DELETE
 * removes the caller's team from it, and the file only when none is left.
 *
 * Names: a team may register a module with "name" (letters, digits,
 * '_', '-', '.', 1..63 bytes): the team's name, with versions (names.h);
 * the record keeps every team's names of its module. */
#ifndef SHLO_SRV_STORE_H
#define SHLO_SRV_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "batch.h"
#include "cache.h"
#include "names.h"

#define STORE_NAME_LEN 64
#define STORE_TEAM_LEN 64

/* A team's batching of a stored module (batch.h), one "batching" header
 * line: "TEAM MAX DELAY_US QUEUE PREFERRED ENTRY" (PREFERRED "-" or sizes
 * joined by ','; ENTRY, the batching function, is the rest of the line).
 * A record without such lines (older ones) batches nothing. */
typedef struct store_batching {
  char team[STORE_TEAM_LEN];
  srv_batch_cfg cfg;
  char entry[SRV_BATCH_FN_LEN];
} store_batching;

/* One stored module. */
typedef struct store_record {
  char id[SRV_ID_LEN];
  /* Every team that registered it and has not deleted it, in the order
   * they came: one "team" header line each (a record of the older format
   * has one).  malloc'd; store_record_free frees it. */
  char (*teams)[STORE_TEAM_LEN];
  int n_teams;
  srv_name_row *names;         /* malloc'd: its teams' names of it */
  int n_names;
  store_batching *batching;    /* malloc'd: its teams' batching of it */
  int n_batching;
  char *entry;                 /* malloc'd; NULL = the module's own */
  int replicas, partitions;    /* as the key saw them (0 = 1x1) */
  int64_t registered_ns;       /* CLOCK_REALTIME of the last write */
  char *program;               /* malloc'd, program_len bytes + NUL */
  size_t program_len;
} store_record;

void store_record_free(store_record *r);
/* Whether team is one of r's teams. */
bool store_record_has_team(const store_record *r, const char *team);
/* Add team to r's teams unless there; -1 on OOM or a name too long. */
int store_record_add_team(store_record *r, const char *team);
/* Remove team from r's teams; false when it was not one. */
bool store_record_drop_team(store_record *r, const char *team);

/* Whether s is a usable module name. */
bool store_name_ok(const char *s);

/* ---- the files (any thread; no state) ---- */

/* Create dir if absent; -1 with why set when it is unusable. */
int store_open_dir(const char *dir, char *why, size_t cap);
/* Write r atomically as dir/<hex>.module (replacing one with that id).
 * -1 with why set on any failure (nothing half-written is left). */
int store_write(const char *dir, const store_record *r, char *why, size_t cap);
/* Read the record of id.  0 ok; 1 no such file; -1 corrupt (why says
 * how).  With header_only, program stays NULL (the size is checked). */
int store_read(const char *dir, const char *id, bool header_only,
               store_record *out, char *why, size_t cap);
/* Remove the record of id; 0 also when there was none. */
int store_remove(const char *dir, const char *id);

/* ---- the server's view (server.h's srv_server) ---- */
struct srv_server;

/* Open --store and load its modules into the cache (log lines for the
 * skipped ones and a summary on stderr).  0 also without --store; -1 when
 * the directory is unusable. */
int srv_store_start(struct srv_server *s);
void srv_store_stop(struct srv_server *s);
/* After team registered e: give it team's `name` (may be NULL), its
 * version into *version, and write its record (a new module, a new team,
 * a new version of a name, or with batching_set a batching the
 * registration set, already in s->batcher).  -1 with why set when the
 * record could not be written. */
int srv_store_registered(struct srv_server *s, cache_entry *e,
                         const char *team, const char *name,
                         bool batching_set, int *version, char *why,
                         size_t cap);
/* The module of key that owner (a team; NULL: any) may see: cached, else
 * read back from the store when its record is owner's team's, parsed and
 * adopted by owner (the read is published to the cache).  A reference,
 * or NULL. */
cache_entry *srv_module_by_id(struct srv_server *s, const uint8_t key[32],
                              const void *owner, bool count_stats);
/* The module whose id is name, or that name (version; 0: the latest)
 * gives within team's names; an admin also addresses TEAM/NAME, and a
 * bare name of the one team that has it.  *found gets the version and
 * whose the team whose name it is (0 and "" for an id).  A reference, or
 * NULL with why set. */
struct srv_team;
cache_entry *srv_module_by_name(struct srv_server *s,
                                const struct srv_team *team, bool admin,
                                const char *name, int version, int *found,
                                char whose[SRV_NAME_LEN], char *why,
                                size_t cap);
/* A DELETE of e by owner (a team; NULL: an admin, for every team), after
 * cache_disown: owner's names of it go, owner leaves the record's teams;
 * the record goes when no team is left in it.  Loop thread (it may rewrite the record:
 * the program's bytes and an fsync, only when another team keeps it). */
void srv_store_deleted(struct srv_server *s, cache_entry *e,
                       const void *owner);

#endif
