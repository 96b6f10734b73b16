/* SPDX-License-Identifier: Apache-2.0 */
/* Module names: each team's own, each name with versions.
 *
 * A team registers a module under a name (letters, digits, '_', '-',
 * '.', 1..63 bytes); the name then resolves only within that team (an
 * admin may address TEAM/NAME).  Registering a name again with another
 * module makes its next version (1, 2, ...); registering it again with the
 * module of its latest version changes nothing, so a retried request
 * makes no version.  The latest version is the name's default.  A DELETE
 * of a module by a team drops that team's versions naming it; the other
 * versions keep their numbers (a number is never reused).
 *
 * Thread-safe: one lock guards the table. */
#ifndef SHLO_SRV_NAMES_H
#define SHLO_SRV_NAMES_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "cache.h"

#define SRV_NAME_LEN 64

typedef struct srv_name_row {
  char team[SRV_NAME_LEN];
  char name[SRV_NAME_LEN];
  int version;               /* 1, 2, ... */
  char id[SRV_ID_LEN];       /* the module */
  int64_t registered_ns;     /* CLOCK_REALTIME of the registration */
} srv_name_row;

typedef struct srv_names {
  pthread_mutex_t lock;
  srv_name_row *rows;
  int n, cap;
  /* per (team, name): the highest version ever given, so that a dropped
   * version's number is not given again */
  srv_name_row *high;
  int n_high, cap_high;
} srv_names;

void srv_names_init(srv_names *t);
void srv_names_free(srv_names *t);

/* Team's name for module id, registered at t.  version > 0 puts that
 * version as it is (a record read back; the newest registration wins a
 * clash); 0 registers: the latest version's number when it already names
 * id, else the next one.  Returns the version, or -1 when out of memory. */
int srv_names_put(srv_names *t, const char *team, const char *name,
                  int version, const char *id, int64_t registered_ns);
/* The module of team's name at version (0: the latest) into id, and the
 * version found into *found (may be NULL).  false when there is none. */
bool srv_names_find(srv_names *t, const char *team, const char *name,
                    int version, char id[SRV_ID_LEN], int *found);
/* How many teams have name; the first one (in table order) into team. */
int srv_names_teams(srv_names *t, const char *name, char team[SRV_NAME_LEN]);
/* The rows that name module id (team NULL: any team's), up to cap into
 * out, oldest registration first; returns how many there are. */
int srv_names_of(srv_names *t, const char *team, const char *id,
                 srv_name_row *out, int cap);
/* The versions of team's name, ascending, up to cap into out; returns
 * how many there are. */
int srv_names_versions(srv_names *t, const char *team, const char *name,
                       int *out, int cap);
/* Drop the versions naming id that team holds (team NULL: every team's). */
void srv_names_drop(srv_names *t, const char *team, const char *id);
/* Drop one version of team's name (a model repository's unload); false
 * when there was none. */
bool srv_names_drop_version(srv_names *t, const char *team, const char *name,
                            int version);
/* A copy of team's rows (NULL: every team's), sorted by team, name and
 * version, into *out (malloc'd, NULL when there are none); returns how
 * many, -1 when out of memory. */
int srv_names_snapshot(srv_names *t, const char *team, srv_name_row **out);

#endif
