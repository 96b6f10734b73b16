/* SPDX-License-Identifier: Apache-2.0 */
/* Module names per team, with versions (see names.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "names.h"

void srv_names_init(srv_names *t) {
  memset(t, 0, sizeof *t);
  pthread_mutex_init(&t->lock, NULL);
}

void srv_names_free(srv_names *t) {
  free(t->rows);
  free(t->high);
  pthread_mutex_destroy(&t->lock);
  memset(t, 0, sizeof *t);
}

static bool same(const srv_name_row *r, const char *team, const char *name) {
  return !strcmp(r->team, team) && !strcmp(r->name, name);
}

/* Room for one more row in *rows (n used of *cap); false when out of
 * memory. */
static bool grow(srv_name_row **rows, int n, int *cap) {
  if (n < *cap) return true;
  int c = *cap ? 2 * *cap : 16;
  srv_name_row *g = realloc(*rows, (size_t)c * sizeof *g);
  if (!g) return false;
  *rows = g;
  *cap = c;
  return true;
}

/* The highest version team's name ever had (0: none), lock held. */
static int high_of(const srv_names *t, const char *team, const char *name) {
  for (int i = 0; i < t->n_high; i++)
    if (same(&t->high[i], team, name)) return t->high[i].version;
  return 0;
}

static bool set_high(srv_names *t, const char *team, const char *name,
                     int version) {
  for (int i = 0; i < t->n_high; i++)
    if (same(&t->high[i], team, name)) {
      if (t->high[i].version < version) t->high[i].version = version;
      return true;
    }
  if (!grow(&t->high, t->n_high, &t->cap_high)) return false;
  srv_name_row *h = &t->high[t->n_high++];
  memset(h, 0, sizeof *h);
  snprintf(h->team, sizeof h->team, "%s", team);
  snprintf(h->name, sizeof h->name, "%s", name);
  h->version = version;
  return true;
}

/* The row of team's name at version (0: the latest), or -1; lock held. */
static int find_locked(const srv_names *t, const char *team, const char *name,
                       int version) {
  int at = -1;
  for (int i = 0; i < t->n; i++) {
    const srv_name_row *r = &t->rows[i];
    if (!same(r, team, name)) continue;
    if (version ? r->version == version
                : at < 0 || r->version > t->rows[at].version)
      at = i;
  }
  return at;
}

int srv_names_put(srv_names *t, const char *team, const char *name,
                  int version, const char *id, int64_t registered_ns) {
  if (strlen(team) >= SRV_NAME_LEN || strlen(name) >= SRV_NAME_LEN ||
      strlen(id) >= SRV_ID_LEN || version < 0)
    return -1;
  pthread_mutex_lock(&t->lock);
  int got = -1;
  int at = find_locked(t, team, name, version);
  if (!version && at >= 0 && !strcmp(t->rows[at].id, id)) {
    got = t->rows[at].version; /* the latest already names it */
    goto out;
  }
  if (version && at >= 0) { /* a clash of records: the newest wins */
    if (t->rows[at].registered_ns <= registered_ns) {
      snprintf(t->rows[at].id, SRV_ID_LEN, "%s", id);
      t->rows[at].registered_ns = registered_ns;
    }
    got = version;
    goto out;
  }
  if (!version) version = high_of(t, team, name) + 1;
  if (!grow(&t->rows, t->n, &t->cap) || !set_high(t, team, name, version))
    goto out;
  srv_name_row *r = &t->rows[t->n++];
  memset(r, 0, sizeof *r);
  snprintf(r->team, sizeof r->team, "%s", team);
  snprintf(r->name, sizeof r->name, "%s", name);
  snprintf(r->id, sizeof r->id, "%s", id);
  r->version = version;
  r->registered_ns = registered_ns;
  got = version;
out:
  pthread_mutex_unlock(&t->lock);
  return got;
}

bool srv_names_find(srv_names *t, const char *team, const char *name,
                    int version, char id[SRV_ID_LEN], int *found) {
  pthread_mutex_lock(&t->lock);
  int at = find_locked(t, team, name, version);
  if (at >= 0) {
    memcpy(id, t->rows[at].id, SRV_ID_LEN);
    if (found) *found = t->rows[at].version;
  }
  pthread_mutex_unlock(&t->lock);
  return at >= 0;
}

int srv_names_teams(srv_names *t, const char *name,
                    char team[SRV_NAME_LEN]) {
  int n = 0;
  pthread_mutex_lock(&t->lock);
  for (int i = 0; i < t->n; i++) {
    if (strcmp(t->rows[i].name, name)) continue;
    bool before = false; /* this team counted at an earlier row */
    for (int j = 0; j < i && !before; j++)
      before = same(&t->rows[j], t->rows[i].team, name);
    if (before) continue;
    if (!n++) memcpy(team, t->rows[i].team, SRV_NAME_LEN);
  }
  pthread_mutex_unlock(&t->lock);
  return n;
}

static int by_time(const void *a, const void *b) {
  const srv_name_row *x = a, *y = b;
  if (x->registered_ns != y->registered_ns)
    return x->registered_ns < y->registered_ns ? -1 : 1;
  return x->version - y->version;
}

int srv_names_of(srv_names *t, const char *team, const char *id,
                 srv_name_row *out, int cap) {
  int n = 0;
  pthread_mutex_lock(&t->lock);
  for (int i = 0; i < t->n; i++) {
    const srv_name_row *r = &t->rows[i];
    if (strcmp(r->id, id) || (team && strcmp(r->team, team))) continue;
    if (n < cap) out[n] = *r;
    n++;
  }
  pthread_mutex_unlock(&t->lock);
  if (n > 1 && cap > 1) qsort(out, (size_t)(n < cap ? n : cap), sizeof *out,
                              by_time);
  return n;
}

static int ascending(const void *a, const void *b) {
  return *(const int *)a - *(const int *)b;
}

int srv_names_versions(srv_names *t, const char *team, const char *name,
                       int *out, int cap) {
  int n = 0;
  pthread_mutex_lock(&t->lock);
  for (int i = 0; i < t->n; i++)
    if (same(&t->rows[i], team, name)) {
      if (n < cap) out[n] = t->rows[i].version;
      n++;
    }
  pthread_mutex_unlock(&t->lock);
  if (n > 1 && cap > 1) qsort(out, (size_t)(n < cap ? n : cap), sizeof *out,
                              ascending);
  return n;
}

void srv_names_drop(srv_names *t, const char *team, const char *id) {
  pthread_mutex_lock(&t->lock);
  for (int i = 0; i < t->n; i++) {
    const srv_name_row *r = &t->rows[i];
    if (!strcmp(r->id, id) && (!team || !strcmp(r->team, team)))
      t->rows[i--] = t->rows[--t->n];
  }
  pthread_mutex_unlock(&t->lock);
}

bool srv_names_drop_version(srv_names *t, const char *team, const char *name,
                            int version) {
  pthread_mutex_lock(&t->lock);
  int at = version > 0 ? find_locked(t, team, name, version) : -1;
  if (at >= 0) t->rows[at] = t->rows[--t->n];
  pthread_mutex_unlock(&t->lock);
  return at >= 0;
}

static int by_team_name_version(const void *a, const void *b) {
  const srv_name_row *x = a, *y = b;
  int c = strcmp(x->team, y->team);
  if (!c) c = strcmp(x->name, y->name);
  return c ? c : x->version - y->version;
}

int srv_names_snapshot(srv_names *t, const char *team, srv_name_row **out) {
  *out = NULL;
  pthread_mutex_lock(&t->lock);
  int n = 0;
  srv_name_row *rows = t->n ? malloc((size_t)t->n * sizeof *rows) : NULL;
  if (t->n && !rows) n = -1;
  for (int i = 0; rows && i < t->n; i++)
    if (!team || !strcmp(t->rows[i].team, team)) rows[n++] = t->rows[i];
  pthread_mutex_unlock(&t->lock);
  if (n > 1) qsort(rows, (size_t)n, sizeof *rows, by_team_name_version);
  if (n <= 0) free(rows);
  else *out = rows;
  return n;
}
