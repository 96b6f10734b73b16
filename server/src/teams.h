/* SPDX-License-Identifier: Apache-2.0 */
/* Teams, scopes and per-team quotas.  Every bearer token belongs to one
 * team and carries scopes; modules belong to the teams that registered or
 * ran them (cache.h owners); quotas and counters are per team.
 *
 * A team lives as long as the server: a SIGHUP that drops every token of a
 * team keeps its record (counters, token bucket, requests in flight), so
 * pointers to it stay valid.  Loop thread only, except exec_mem (workers). */
#ifndef SHLO_SRV_TEAMS_H
#define SHLO_SRV_TEAMS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pool.h"
#include "shlo/limits.h"

enum {
  SRV_SCOPE_EXECUTE = 1,  /* run programs and the team's modules */
  SRV_SCOPE_REGISTER = 2, /* add and delete the team's modules */
  SRV_SCOPE_ADMIN = 4,    /* every team's modules, /metrics */
  SRV_SCOPE_DEFAULT = SRV_SCOPE_EXECUTE | SRV_SCOPE_REGISTER,
  SRV_SCOPE_ALL = 7
};

#define SRV_TEAM_NAME_LEN 64

/* X(ENUM, name in errors, metrics and tokens-file lines) */
#define SRV_QUOTAS(X)           \
  X(RUNNING, "running")         \
  X(QUEUED, "queued")           \
  X(RATE, "rate")               \
  X(BURST, "burst")             \
  X(CACHE_BYTES, "cache-bytes") \
  X(EXEC_MEMORY, "exec-memory")

typedef enum {
#define SRV_QUOTA_ENUM(e, s) SRV_QUOTA_##e,
  SRV_QUOTAS(SRV_QUOTA_ENUM)
#undef SRV_QUOTA_ENUM
  SRV_N_QUOTAS
} srv_quota_kind;

/* One team's limits; 0 = none.  running: executions at once (more wait in
 * the queue); queued: requests waiting beyond those (more get 429); rate
 * and burst: a token bucket of requests per second; cache-bytes: module
 * cache bytes the team may hold and that others cannot evict; exec-memory:
 * bytes of inputs and results of the team's executions at once. */
typedef struct srv_quota {
  int64_t v[SRV_N_QUOTAS];
} srv_quota;

/* The name of a quota ("running", ...); NULL when out of range. */
const char *srv_quota_name(int q);
/* The quota of that name, or -1. */
int srv_quota_find(const char *name, size_t len);

/* Response classes counted per team (/metrics): every class, 429s in
 * 4xx (and by quota in the team's refusals); a client that hung up
 * before its answer counts as 4xx. */
enum { SRV_TEAM_1XX, SRV_TEAM_2XX, SRV_TEAM_3XX, SRV_TEAM_4XX, SRV_TEAM_5XX,
       SRV_TEAM_N_CLASS };

typedef struct srv_team {
  char name[SRV_TEAM_NAME_LEN];
  srv_quota quota;        /* in force: the team's lines over the defaults */
  srv_quota own;          /* set by the tokens file (0 = the default) */
  int in_flight;          /* its jobs running or queued */
  srv_job_owner owner;    /* the pool's cap on its running jobs */
  double bucket;          /* requests the rate still allows now */
  uint64_t bucket_ns;     /* when bucket was last filled */
  atomic_llong exec_mem;  /* bytes held by its executions (workers) */
  /* counters */
  uint64_t requests[SRV_TEAM_N_CLASS];
  uint64_t refused[SRV_N_QUOTAS];
  uint64_t bytes_in, bytes_out;
  double exec_s;
  struct srv_team *next;
} srv_team;

typedef struct srv_teams {
  srv_team *list;
  srv_quota defaults;    /* from the configuration */
} srv_teams;

/* The team of that name, created (with the defaults) on first use; NULL
 * on OOM or a name that does not fit. */
srv_team *srv_team_get(srv_teams *t, const char *name);
/* Apply the defaults under each team's own quotas; a cache-bytes default
 * of 0 is an equal share of cache_bytes among the teams that have tokens
 * (n_teams of them). */
void srv_teams_apply(srv_teams *t, int64_t cache_bytes, int n_teams);
void srv_teams_free(srv_teams *t);

/* The token bucket: true (one request taken) or false with *retry_s, the
 * whole seconds until a request would pass. */
bool srv_team_take(srv_team *team, uint64_t now_ns, int *retry_s);
/* A request of the team may join the queue: -1 if so, else the quota that
 * refuses it (SRV_QUOTA_RUNNING when queued is 0, else SRV_QUOTA_QUEUED). */
int srv_team_admit_job(const srv_team *team);
/* Reserve bytes of execution memory (any thread): false when exec-memory
 * would be exceeded (nothing reserved). */
bool srv_team_reserve_memory(srv_team *team, int64_t bytes);
void srv_team_release_memory(srv_team *team, int64_t bytes);
/* Count an answer's status in the team's classes. */
void srv_team_count_status(srv_team *team, int status);
/* A team's first use of a module that another team parsed and compiled
 * (worker threads): wait as long as that compile took (cost_ms), so that
 * its wall time tells the team no more than its answer's "cached": false
 * does -- whether another team holds the program is not this team's to
 * learn.  The worker is held as long as compiling it alone would have
 * held it, no longer.  Returns early once *cancel (may be NULL) is set. */
void srv_team_pay_compile(double cost_ms, const shlo_cancel *cancel);

/* "execute,register" -> flags; 0 for an empty or unknown scope. */
unsigned srv_scopes_parse(const char *list);

/* ---- the tokens file (auth.c) ----
 * Lines, # comments:
 *   NAME TOKEN [team=TEAM] [scopes=execute,register,admin]
 *   @TEAM QUOTA=VALUE...      (quotas: running queued rate burst
 *                              cache-bytes exec-memory; sizes take k/m/g)
 * A name or team is 1..63 of [A-Za-z0-9._-]; a token is 1..512 printable
 * bytes without spaces.  The team defaults to the name, the scopes to
 * execute,register. */
typedef struct srv_token {
  char *name, *token;
  srv_team *team;
  unsigned scopes;
} srv_token;

typedef enum { SRV_LINE_BLANK, SRV_LINE_TOKEN, SRV_LINE_QUOTA } srv_line_kind;

typedef struct srv_token_line {
  srv_line_kind kind;
  char name[SRV_TEAM_NAME_LEN]; /* the token's name (TOKEN lines) */
  char team[SRV_TEAM_NAME_LEN];
  char token[513];
  unsigned scopes;
  srv_quota quota;               /* QUOTA lines; 0 = not set */
} srv_token_line;

/* Parse one line (NUL-terminated; a trailing newline is allowed): 0, or
 * -1 with why in err. */
int srv_token_line_parse(const char *line, srv_token_line *out, char *err,
                         size_t err_cap);

#endif
