/* SPDX-License-Identifier: Apache-2.0 */
/* The console's history rings and recent errors (history.h).  Requests
 * add into the current second's sample; a 1 s timer closes it into the
 * seconds ring (an hour) and every 60 of them into the minutes ring (a
 * day).  Teams get series of their own up to TEAMS_MAX of them (the first
 * seen); later teams count in the server's totals only. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/strbuf.h"
#include "history.h"
#include "json_write.h"
#include "modmetrics.h"
#include "server.h"

enum { TEAMS_MAX = 16, SEC_N = 3600, MIN_N = 1440, ERR_N = 64 };

typedef struct sample {
  uint32_t requests, errors;
  uint32_t lat[SRV_LAT_BUCKETS + 1]; /* executions by latency bucket */
  double exec_s;
  uint32_t queue, running;           /* at the sample (a minute's: most) */
  uint32_t team_req[TEAMS_MAX], team_err[TEAMS_MAX];
  float team_exec_s[TEAMS_MAX];
  uint32_t team_execs[TEAMS_MAX];
} sample;

typedef struct ring {
  sample *v;
  int cap, n, head;                  /* head: where the next one goes */
  int64_t end_ms;                    /* wall time the newest one closed */
} ring;

typedef struct err_rec {
  int64_t at_ms;
  const srv_team *team;
  char request_id[SRV_REQ_ID_LEN];
  char route[48], module[SRV_ID_LEN];
  int status, kind;
} err_rec;

typedef struct srv_history {
  uv_timer_t timer;
  bool timer_on;
  sample cur, minute;
  int minute_ticks;
  ring sec, min;
  const srv_team *teams[TEAMS_MAX];
  int n_teams;
  err_rec errs[ERR_N];
  int n_errs, err_head;
} srv_history;

static int64_t wall_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void ring_push(ring *r, const sample *x) {
  r->v[r->head] = *x;
  r->head = (r->head + 1) % r->cap;
  if (r->n < r->cap) r->n++;
  r->end_ms = wall_ms();
}

/* The i-th oldest of the last n samples (0 <= i < n <= r->n). */
static const sample *ring_at(const ring *r, int n, int i) {
  return &r->v[((r->head - n + i) % r->cap + r->cap) % r->cap];
}

static void sample_add(sample *dst, const sample *src) {
  dst->requests += src->requests;
  dst->errors += src->errors;
  for (int i = 0; i <= SRV_LAT_BUCKETS; i++) dst->lat[i] += src->lat[i];
  dst->exec_s += src->exec_s;
  if (src->queue > dst->queue) dst->queue = src->queue;
  if (src->running > dst->running) dst->running = src->running;
  for (int t = 0; t < TEAMS_MAX; t++) {
    dst->team_req[t] += src->team_req[t];
    dst->team_err[t] += src->team_err[t];
    dst->team_exec_s[t] += src->team_exec_s[t];
    dst->team_execs[t] += src->team_execs[t];
  }
}

static void on_tick(uv_timer_t *t) {
  srv_server *s = t->data;
  srv_history *h = s->history;
  int queued, running;
  pool_depth(&s->pool, &queued, &running);
  h->cur.queue = (uint32_t)queued;
  h->cur.running = (uint32_t)running;
  ring_push(&h->sec, &h->cur);
  sample_add(&h->minute, &h->cur);
  memset(&h->cur, 0, sizeof h->cur);
  if (++h->minute_ticks == 60) {
    ring_push(&h->min, &h->minute);
    memset(&h->minute, 0, sizeof h->minute);
    h->minute_ticks = 0;
  }
}

int srv_history_start(srv_server *s) {
  srv_history *h = calloc(1, sizeof *h);
  if (!h) return -1;
  h->sec.cap = SEC_N;
  h->min.cap = MIN_N;
  h->sec.v = calloc(SEC_N, sizeof *h->sec.v);
  h->min.v = calloc(MIN_N, sizeof *h->min.v);
  if (!h->sec.v || !h->min.v) {
    free(h->sec.v);
    free(h->min.v);
    free(h);
    return -1;
  }
  s->history = h;
  uv_timer_init(s->loop, &h->timer);
  h->timer.data = s;
  uv_timer_start(&h->timer, on_tick, 1000, 1000);
  uv_unref((uv_handle_t *)&h->timer); /* sampling never keeps the loop up */
  h->timer_on = true;
  return 0;
}

void srv_history_stop(srv_server *s) {
  srv_history *h = s->history;
  if (!h || !h->timer_on) return;
  uv_timer_stop(&h->timer);
  uv_close((uv_handle_t *)&h->timer, NULL);
  h->timer_on = false;
}

void srv_history_free(srv_server *s) {
  srv_history *h = s->history;
  if (!h) return;
  free(h->sec.v);
  free(h->min.v);
  free(h);
  s->history = NULL;
}

/* The team's series index, taking a free one for a team first seen; -1
 * past TEAMS_MAX teams. */
static int team_index(srv_history *h, const srv_team *team) {
  if (!team) return -1;
  for (int i = 0; i < h->n_teams; i++)
    if (h->teams[i] == team) return i;
  if (h->n_teams == TEAMS_MAX) return -1;
  h->teams[h->n_teams] = team;
  return h->n_teams++;
}

static void copy_str(char *dst, size_t cap, const char *src) {
  size_t n = src ? strnlen(src, cap - 1) : 0;
  memcpy(dst, src ? src : "", n);
  dst[n] = 0;
}

static void remember_error(srv_history *h, const srv_team *team, int status,
                           const char *request_id, const char *route,
                           const char *module, int err_kind) {
  err_rec *e = &h->errs[h->err_head];
  h->err_head = (h->err_head + 1) % ERR_N;
  if (h->n_errs < ERR_N) h->n_errs++;
  e->at_ms = wall_ms();
  e->team = team;
  e->status = status;
  e->kind = err_kind;
  copy_str(e->request_id, sizeof e->request_id, request_id);
  copy_str(e->route, sizeof e->route, route);
  copy_str(e->module, sizeof e->module, module);
}

void srv_history_request(srv_server *s, const srv_team *team, int status,
                         double exec_s, const char *request_id,
                         const char *route, const char *module,
                         int err_kind) {
  srv_history *h = s->history;
  if (!h) return;
  bool error = status >= 400 || status == 0;
  sample *c = &h->cur;
  c->requests++;
  c->errors += error;
  if (exec_s >= 0) {
    c->lat[srv_lat_bucket(exec_s)]++;
    c->exec_s += exec_s;
  }
  int t = team_index(h, team);
  if (t >= 0) {
    c->team_req[t]++;
    c->team_err[t] += error;
    if (exec_s >= 0) {
      c->team_exec_s[t] += (float)exec_s;
      c->team_execs[t]++;
    }
  }
  if (error)
    remember_error(h, team, status, request_id, route, module, err_kind);
}

/* ---- the answer ---- */

typedef double (*value_fn)(const sample *x, int team);

static void put_series(strbuf *b, const ring *r, int n, value_fn f,
                       int team) {
  shlo__sb_putc(b, '[');
  for (int i = 0; i < n; i++) {
    double v = f(ring_at(r, n, i), team);
    if (i) shlo__sb_putc(b, ',');
    if (v != v) shlo__sb_puts(b, "null"); /* NaN: nothing to say */
    else shlo__sb_printf(b, "%.6g", v);
  }
  shlo__sb_putc(b, ']');
}

static double v_requests(const sample *x, int t) { (void)t; return x->requests; }
static double v_errors(const sample *x, int t) { (void)t; return x->errors; }
static double v_queue(const sample *x, int t) { (void)t; return x->queue; }
static double v_running(const sample *x, int t) { (void)t; return x->running; }

static double quantile_ms(const sample *x, double q) {
  uint64_t counts[SRV_LAT_BUCKETS + 1];
  for (int i = 0; i <= SRV_LAT_BUCKETS; i++) counts[i] = x->lat[i];
  return srv_histogram_quantile(counts, q) * 1000;
}

static double v_p50(const sample *x, int t) { (void)t; return quantile_ms(x, 0.5); }
static double v_p99(const sample *x, int t) { (void)t; return quantile_ms(x, 0.99); }
static double v_team_req(const sample *x, int t) { return x->team_req[t]; }
static double v_team_err(const sample *x, int t) { return x->team_err[t]; }
static double v_team_mean(const sample *x, int t) {
  return x->team_execs[t] ? 1000.0 * x->team_exec_s[t] / x->team_execs[t]
                          : NAN;
}

static void put_server(strbuf *b, const ring *r, int n) {
  static const struct { const char *name; value_fn f; } cols[] = {
      {"requests", v_requests}, {"errors", v_errors}, {"p50_ms", v_p50},
      {"p99_ms", v_p99},        {"queue", v_queue},   {"running", v_running}};
  shlo__sb_puts(b, ",\"series\":{");
  for (size_t i = 0; i < sizeof cols / sizeof *cols; i++) {
    shlo__sb_printf(b, "%s\"%s\":", i ? "," : "", cols[i].name);
    put_series(b, r, n, cols[i].f, 0);
  }
  shlo__sb_putc(b, '}');
}

/* visible: the one team a non-admin sees, NULL for every team. */
static void put_teams(strbuf *b, const srv_history *h, const ring *r, int n,
                      const srv_team *visible) {
  shlo__sb_puts(b, ",\"teams\":[");
  int put = 0;
  for (int t = 0; t < h->n_teams; t++) {
    if (visible && h->teams[t] != visible) continue;
    if (put++) shlo__sb_putc(b, ',');
    shlo__sb_puts(b, "{\"team\":");
    shlo__json_str(b, h->teams[t]->name);
    shlo__sb_puts(b, ",\"requests\":");
    put_series(b, r, n, v_team_req, t);
    shlo__sb_puts(b, ",\"errors\":");
    put_series(b, r, n, v_team_err, t);
    shlo__sb_puts(b, ",\"exec_mean_ms\":");
    put_series(b, r, n, v_team_mean, t);
    shlo__sb_putc(b, '}');
  }
  shlo__sb_putc(b, ']');
}

static void put_errors(strbuf *b, const srv_history *h,
                       const srv_team *visible) {
  shlo__sb_puts(b, ",\"errors\":[");
  int put = 0;
  for (int i = 0; i < h->n_errs; i++) { /* newest first */
    const err_rec *e = &h->errs[((h->err_head - 1 - i) % ERR_N + ERR_N) % ERR_N];
    if (visible && e->team != visible) continue;
    if (put++) shlo__sb_putc(b, ',');
    shlo__sb_printf(b, "{\"time_ms\":%lld,\"status\":%d,\"request_id\":",
                    (long long)e->at_ms, e->status);
    shlo__json_str(b, e->request_id);
    shlo__sb_puts(b, ",\"team\":");
    if (e->team) shlo__json_str(b, e->team->name);
    else shlo__sb_puts(b, "null");
    shlo__sb_puts(b, ",\"route\":");
    shlo__json_str(b, e->route);
    shlo__sb_puts(b, ",\"module\":");
    shlo__json_str(b, e->module);
    shlo__sb_puts(b, ",\"kind\":");
    if (e->kind >= 0 && e->kind < SHLO_PERR_COUNT)
      shlo__json_str(b, shlo_proto_err_name((shlo_proto_err_kind)e->kind));
    else shlo__sb_puts(b, "null");
    shlo__sb_putc(b, '}');
  }
  shlo__sb_putc(b, ']');
}

void srv_history_answer(srv_request *r, const char *res, const char *n_text) {
  srv_server *s = r->srv;
  srv_history *h = s->history;
  bool minutes = res && !strcmp(res, "1m");
  if ((res && !minutes && strcmp(res, "1s")) || !h) {
    srv_reply_error(r, SHLO_PERR_INPUT, 400, 0, 0,
                    "res must be 1s (the last hour) or 1m (the last day)");
    return;
  }
  const ring *ring = minutes ? &h->min : &h->sec;
  long want = n_text ? strtol(n_text, NULL, 10) : ring->cap;
  int n = want > 0 && want < ring->n ? (int)want : ring->n;
  const srv_team *visible = (const srv_team *)srv_visible_owner(r);
  strbuf b = {0};
  shlo__sb_printf(&b, "{\"resolution_s\":%d,\"end_ms\":%lld,\"admin\":%s,"
                  "\"team\":", minutes ? 60 : 1, (long long)ring->end_ms,
                  visible ? "false" : "true");
  shlo__json_str(&b, r->team ? r->team->name : "");
  if (!visible) put_server(&b, ring, n);
  put_teams(&b, h, ring, n, visible);
  put_errors(&b, h, visible);
  if (!visible) {
    shlo__sb_puts(&b, ",\"modules\":");
    srv_modmetrics_json(s, &b);
  }
  shlo__sb_putc(&b, '}');
  free(r->resp);
  r->resp = shlo__sb_take(&b);
  r->resp_len = r->resp ? strlen(r->resp) : 0;
  r->status = r->resp ? 200 : 500;
  r->resp_text = false;
}
