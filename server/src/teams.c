/* SPDX-License-Identifier: Apache-2.0 */
/* Teams and their quotas (see teams.h). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "teams.h"

void srv_team_pay_compile(double cost_ms, const shlo_cancel *cancel) {
  struct timespec t0, now;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (;;) {
    if (cancel && shlo_cancel_reason(cancel)) return;
    clock_gettime(CLOCK_MONOTONIC, &now);
    double left = cost_ms - ((double)(now.tv_sec - t0.tv_sec) * 1e3 +
                             (double)(now.tv_nsec - t0.tv_nsec) / 1e6);
    if (left <= 0) return;
    /* slices of 5 ms at most: a client that hangs up frees the worker */
    double ms = left < 5 ? left : 5;
    struct timespec d = {0, (long)(ms * 1e6)};
    nanosleep(&d, NULL);
  }
}

static const char *const quota_names[SRV_N_QUOTAS] = {
#define SRV_QUOTA_NAME(e, s) s,
    SRV_QUOTAS(SRV_QUOTA_NAME)
#undef SRV_QUOTA_NAME
};

const char *srv_quota_name(int q) {
  return q >= 0 && q < SRV_N_QUOTAS ? quota_names[q] : NULL;
}

int srv_quota_find(const char *name, size_t len) {
  for (int q = 0; q < SRV_N_QUOTAS; q++)
    if (strlen(quota_names[q]) == len && !memcmp(quota_names[q], name, len))
      return q;
  return -1;
}

srv_team *srv_team_get(srv_teams *t, const char *name) {
  size_t n = strlen(name);
  if (n == 0 || n >= SRV_TEAM_NAME_LEN) return NULL;
  for (srv_team *x = t->list; x; x = x->next)
    if (!strcmp(x->name, name)) return x;
  srv_team *x = calloc(1, sizeof *x);
  if (!x) return NULL;
  memcpy(x->name, name, n + 1);
  x->quota = t->defaults;
  x->bucket = (double)x->quota.v[SRV_QUOTA_BURST];
  atomic_init(&x->exec_mem, 0);
  x->next = t->list;
  t->list = x;
  return x;
}

void srv_teams_apply(srv_teams *t, int64_t cache_bytes, int n_teams) {
  for (srv_team *x = t->list; x; x = x->next) {
    for (int q = 0; q < SRV_N_QUOTAS; q++)
      x->quota.v[q] = x->own.v[q] ? x->own.v[q] : t->defaults.v[q];
    if (!x->quota.v[SRV_QUOTA_CACHE_BYTES] && n_teams > 0)
      x->quota.v[SRV_QUOTA_CACHE_BYTES] = cache_bytes / n_teams;
    /* a rate without a burst allows one second's worth at once */
    if (x->quota.v[SRV_QUOTA_RATE] && !x->quota.v[SRV_QUOTA_BURST])
      x->quota.v[SRV_QUOTA_BURST] = x->quota.v[SRV_QUOTA_RATE];
    if (x->bucket > (double)x->quota.v[SRV_QUOTA_BURST])
      x->bucket = (double)x->quota.v[SRV_QUOTA_BURST];
    x->owner.max_running = (int)x->quota.v[SRV_QUOTA_RUNNING];
  }
}

void srv_teams_free(srv_teams *t) {
  while (t->list) {
    srv_team *x = t->list;
    t->list = x->next;
    free(x);
  }
}

bool srv_team_take(srv_team *team, uint64_t now_ns, int *retry_s) {
  int64_t rate = team->quota.v[SRV_QUOTA_RATE];
  if (rate <= 0) return true;
  double burst = (double)team->quota.v[SRV_QUOTA_BURST];
  if (team->bucket_ns) {
    team->bucket += (double)(now_ns - team->bucket_ns) / 1e9 * (double)rate;
    if (team->bucket > burst) team->bucket = burst;
  } else {
    team->bucket = burst;
  }
  team->bucket_ns = now_ns;
  if (team->bucket >= 1.0) {
    team->bucket -= 1.0;
    return true;
  }
  double wait = (1.0 - team->bucket) / (double)rate;
  *retry_s = (int)wait + ((double)(int)wait < wait);
  if (*retry_s < 1) *retry_s = 1;
  return false;
}

int srv_team_admit_job(const srv_team *team) {
  int64_t running = team->quota.v[SRV_QUOTA_RUNNING];
  int64_t queued = team->quota.v[SRV_QUOTA_QUEUED];
  if (!running) return -1; /* no cap on running: queued alone means nothing */
  if (team->in_flight < running + queued) return -1;
  return queued ? SRV_QUOTA_QUEUED : SRV_QUOTA_RUNNING;
}

bool srv_team_reserve_memory(srv_team *team, int64_t bytes) {
  int64_t cap = team->quota.v[SRV_QUOTA_EXEC_MEMORY];
  long long now = atomic_fetch_add(&team->exec_mem, bytes) + bytes;
  if (cap > 0 && now > cap) {
    atomic_fetch_sub(&team->exec_mem, bytes);
    return false;
  }
  return true;
}

void srv_team_release_memory(srv_team *team, int64_t bytes) {
  atomic_fetch_sub(&team->exec_mem, bytes);
}

void srv_team_count_status(srv_team *team, int status) {
  int c = status >= 500             ? SRV_TEAM_5XX
          : status >= 400 || !status  ? SRV_TEAM_4XX
          : status >= 300             ? SRV_TEAM_3XX
          : status >= 200             ? SRV_TEAM_2XX
                                      : SRV_TEAM_1XX;
  team->requests[c]++;
}

unsigned srv_scopes_parse(const char *list) {
  static const struct { const char *name; unsigned bit; } scopes[] = {
      {"execute", SRV_SCOPE_EXECUTE},
      {"register", SRV_SCOPE_REGISTER},
      {"admin", SRV_SCOPE_ADMIN}};
  unsigned out = 0;
  const char *p = list;
  for (;;) { /* an empty item (",,", a trailing ',', "") refuses the list */
    size_t n = strcspn(p, ",");
    unsigned bit = 0;
    for (size_t i = 0; i < sizeof scopes / sizeof *scopes; i++)
      if (strlen(scopes[i].name) == n && !memcmp(scopes[i].name, p, n))
        bit = scopes[i].bit;
    if (!bit) return 0;
    out |= bit;
    p += n;
    if (!*p) return out;
    p++;
  }
}
