/* SPDX-License-Identifier: Apache-2.0 */
/* Team quotas at the HTTP door (teams.h has the model): the rate at
 * authentication, the in-flight jobs at submission, and the 429 answer
 * that names the quota.  Loop thread only. */
#include <stdlib.h>
#include <string.h>

#include "server.h"

/* Teams that hold at least one token (the anonymous one without tokens):
 * cache-bytes 0 shares the cache among these. */
static int count_teams(const srv_server *s) {
  int n = 0;
  for (const srv_team *t = s->teams.list; t; t = t->next) {
    bool has = t == s->anonymous && !s->n_tokens;
    for (int i = 0; i < s->n_tokens && !has; i++)
      has = s->tokens[i].team == t;
    n += has;
  }
  return n;
}

int srv_quota_setup(srv_server *s) {
  const srv_config *c = &s->cfg;
  int64_t d[SRV_N_QUOTAS] = {
      [SRV_QUOTA_RUNNING] = c->team_max_running,
      [SRV_QUOTA_QUEUED] = c->team_max_queued,
      [SRV_QUOTA_RATE] = c->team_rate,
      [SRV_QUOTA_BURST] = c->team_burst,
      [SRV_QUOTA_CACHE_BYTES] = c->team_cache_bytes,
      [SRV_QUOTA_EXEC_MEMORY] = c->team_exec_memory};
  memcpy(s->teams.defaults.v, d, sizeof d);
  if (!s->anonymous && !(s->anonymous = srv_team_get(&s->teams, "anonymous")))
    return -1;
  srv_teams_apply(&s->teams, c->cache_bytes, count_teams(s));
  for (srv_team *t = s->teams.list; t; t = t->next)
    if (cache_set_share(&s->cache, t,
                        (size_t)t->quota.v[SRV_QUOTA_CACHE_BYTES]))
      return -1;
  return 0;
}

void srv_quota_refuse(srv_request *r, int q, int retry_s) {
  const srv_team *t = r->team;
  srv_reply_error(r, SHLO_PERR_LIMIT, 429, 0, 0,
                  "quota %s (%lld) of team %s reached; retry later",
                  srv_quota_name(q), (long long)t->quota.v[q], t->name);
  /* {"error":{...}} gains "quota" beside "kind" and "message" */
  size_t n = r->resp ? strlen(r->resp) : 0;
  const char *name = srv_quota_name(q);
  char *b = n >= 2 ? realloc(r->resp, n + strlen(name) + 16) : NULL;
  if (b) {
    snprintf(b + n - 2, strlen(name) + 18, ",\"quota\":\"%s\"}}", name);
    r->resp = b;
    r->resp_len = strlen(b);
  }
  r->quota = q;
  r->retry_after = true;
  r->retry_s = retry_s > 0 ? retry_s : 1;
}

bool srv_quota_rate(srv_request *r) {
  int retry;
  if (srv_team_take(r->team, srv_now_ns(), &retry)) return true;
  srv_quota_refuse(r, SRV_QUOTA_RATE, retry);
  return false;
}

bool srv_quota_hold(srv_request *r) {
  srv_team *t = r->team;
  int q = srv_team_admit_job(t);
  if (q >= 0) {
    srv_quota_refuse(r, q, 1);
    return false;
  }
  t->in_flight++;
  r->team_held = true;
  /* the team's cap on running jobs takes the place of the client's */
  if (t->quota.v[SRV_QUOTA_RUNNING]) r->job.owner = &t->owner;
  return true;
}

void srv_quota_release(srv_request *r) {
  if (!r->team_held) return;
  r->team_held = false;
  r->team->in_flight--;
}

void srv_team_finished(srv_request *r, bool completed) {
  srv_team *t = r->team;
  if (!t) return;
  srv_team_count_status(t, r->status);
  t->bytes_in += r->received;
  if (completed) t->bytes_out += r->resp_len;
  if (r->executed) t->exec_s += r->exec_s;
  if (r->quota >= 0 && r->quota < SRV_N_QUOTAS) t->refused[r->quota]++;
}
