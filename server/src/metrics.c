/* SPDX-License-Identifier: Apache-2.0 */
/* Counters and the Prometheus text of /metrics.  Loop thread only. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "batch.h"
#include "server.h"
#include "executions.h"
#include "modmetrics.h"
#include "shlo/version.h"
#include "otlp.h"
#include "traces.h"
#include "core/strbuf.h"

static const char *const route_names[] = {
#define R(e, s) s,
    SRV_ROUTES(R)
#undef R
};

static const int statuses[] = {
#define S(c) c,
    SRV_STATUSES(S)
#undef S
};

/* Upper bounds of the execution latency buckets, seconds. */
static const double lat_bounds[SRV_LAT_BUCKETS] = {
    0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01,
    0.025,  0.05,   0.1,   0.5,    1.0,   10.0};

static int status_index(int status) {
  for (int i = 0; i < SRV_N_STATUS - 1; i++)
    if (statuses[i] == status) return i;
  return SRV_N_STATUS - 1;
}

void srv_metrics_request(srv_metrics *m, srv_route route, int status) {
  m->requests[route][status_index(status)]++;
}

int srv_lat_bucket(double seconds) {
  int i = 0;
  while (i < SRV_LAT_BUCKETS && seconds > lat_bounds[i]) i++;
  return i;
}

double srv_histogram_quantile(const uint64_t counts[SRV_LAT_BUCKETS + 1],
                              double q) {
  uint64_t total = 0;
  for (int i = 0; i <= SRV_LAT_BUCKETS; i++) total += counts[i];
  if (!total) return NAN;
  double want = q * (double)total, cum = 0, lo = 0;
  for (int i = 0; i < SRV_LAT_BUCKETS; i++) {
    double in = (double)counts[i];
    if (cum + in >= want && in > 0)
      return lo + (lat_bounds[i] - lo) * (want - cum) / in;
    cum += in;
    lo = lat_bounds[i];
  }
  return lo; /* in +Inf: the largest finite bound */
}

void srv_histogram_add(srv_histogram *h, double seconds) {
  int i = srv_lat_bucket(seconds);
  h->buckets[i]++;
  h->count++;
  h->sum_s += seconds;
}

void srv_metrics_exec(srv_metrics *m, double seconds) {
  srv_histogram_add(&m->exec, seconds);
}

void srv_metrics_queue_wait(srv_metrics *m, const srv_job *j) {
  if (j->start_ns >= j->submit_ns && j->submit_ns)
    srv_histogram_add(&m->queue_wait[j->lane],
                      (double)(j->start_ns - j->submit_ns) / 1e9);
}

void srv_metrics_job(srv_metrics *m, const srv_request *r) {
  srv_metrics_queue_wait(m, &r->job);
  if (r->compile_ms > 0)
    srv_histogram_add(&m->compile[r->route == R_MODULES ? SRV_COMPILE_REGISTER
                                                         : SRV_COMPILE_EXECUTE],
                      r->compile_ms / 1000);
  if (r->executed) srv_metrics_exec(m, r->exec_s);
}

/* One histogram's series; labels is "" or `name="value"`. */
static void put_histogram(strbuf *b, const char *name, const char *labels,
                          const srv_histogram *h) {
  const char *sep = labels[0] ? "," : "";
  uint64_t cum = 0;
  for (int i = 0; i <= SRV_LAT_BUCKETS; i++) {
    cum += h->buckets[i];
    if (i < SRV_LAT_BUCKETS)
      shlo__sb_printf(b, "%s_bucket{%s%sle=\"%g\"} %llu\n", name, labels, sep,
                      lat_bounds[i], (unsigned long long)cum);
    else
      shlo__sb_printf(b, "%s_bucket{%s%sle=\"+Inf\"} %llu\n", name, labels,
                      sep, (unsigned long long)cum);
  }
  const char *open = labels[0] ? "{" : "", *close = labels[0] ? "}" : "";
  shlo__sb_printf(b, "%s_sum%s%s%s %.6f\n", name, open, labels, close, h->sum_s);
  shlo__sb_printf(b, "%s_count%s%s%s %llu\n", name, open, labels, close,
                  (unsigned long long)h->count);
}

void srv_put_histogram(strbuf *b, const char *name, const char *labels,
                       const srv_histogram *h) {
  put_histogram(b, name, labels, h);
}

/* The scheduling and guarding figures: lanes, compiles, cancels, refusals
 * (PROTOCOL.md "Fairness"). */
static void put_fairness(strbuf *b, const srv_metrics *m) {
  static const char *const lanes[SRV_N_LANES] = {"lane=\"long\"",
                                                 "lane=\"short\""};
  static const char *const kinds[SRV_N_COMPILE] = {"route=\"register\"",
                                                   "route=\"execute\""};
  shlo__sb_puts(b, "# HELP shlo_queue_wait_seconds Time a job waited for a "
                   "worker, by lane.\n# TYPE shlo_queue_wait_seconds "
                   "histogram\n");
  for (int l = 0; l < SRV_N_LANES; l++)
    put_histogram(b, "shlo_queue_wait_seconds", lanes[l], &m->queue_wait[l]);
  shlo__sb_puts(b, "# HELP shlo_compile_seconds Parse, verify and compile "
                   "time of a module entry, by route.\n# TYPE "
                   "shlo_compile_seconds histogram\n");
  for (int k = 0; k < SRV_N_COMPILE; k++)
    put_histogram(b, "shlo_compile_seconds", kinds[k], &m->compile[k]);
  shlo__sb_printf(b,
                  "# TYPE shlo_executions_canceled_total counter\n"
                  "shlo_executions_canceled_total{reason=\"client_gone\"} %llu\n"
                  "shlo_executions_canceled_total{reason=\"shutdown\"} %llu\n"
                  "# HELP shlo_cancel_latency_max_seconds Worst time from a "
                  "client's hang-up to its worker being free.\n"
                  "# TYPE shlo_cancel_latency_max_seconds gauge\n"
                  "shlo_cancel_latency_max_seconds %.6f\n"
                  "# TYPE shlo_connections_closed_total counter\n"
                  "shlo_connections_closed_total{reason=\"request-timeout\"} %llu\n"
                  "# TYPE shlo_reloads_total counter\n"
                  "shlo_reloads_total{result=\"ok\"} %llu\n"
                  "shlo_reloads_total{result=\"failed\"} %llu\n",
                  (unsigned long long)m->canceled_client_gone,
                  (unsigned long long)m->canceled_shutdown,
                  m->cancel_latency_max_s,
                  (unsigned long long)m->deadline_closes,
                  (unsigned long long)m->reloads,
                  (unsigned long long)m->reload_failures);
}

/* Per-team figures (teams.h): requests by class, execution seconds,
 * bytes, cache bytes, refusals by quota, jobs in flight.  Each family's
 * samples together, as the text format wants them. */
static void put_teams(strbuf *b, srv_server *s) {
  static const char *const classes[SRV_TEAM_N_CLASS] = {"1xx", "2xx", "3xx",
                                                        "4xx", "5xx"};
  static const char *const gauges[] = {
      "shlo_team_execution_seconds_total counter",
      "shlo_team_bytes_in_total counter", "shlo_team_bytes_out_total counter",
      "shlo_team_cache_bytes gauge", "shlo_team_cache_share_bytes gauge",
      "shlo_team_in_flight gauge"};
  shlo__sb_puts(b, "# HELP shlo_team_requests_total Requests by team and "
                   "status class, 429s in 4xx (HTTP and binary).\n"
                   "# TYPE shlo_team_requests_total counter\n");
  for (const srv_team *t = s->teams.list; t; t = t->next)
    for (int c = 0; c < SRV_TEAM_N_CLASS; c++)
      shlo__sb_printf(b, "shlo_team_requests_total{team=\"%s\",status=\"%s\"}"
                      " %llu\n", t->name, classes[c],
                      (unsigned long long)t->requests[c]);
  for (size_t g = 0; g < sizeof gauges / sizeof *gauges; g++) {
    int n = (int)strcspn(gauges[g], " ");
    shlo__sb_printf(b, "# TYPE %s\n", gauges[g]);
    for (const srv_team *t = s->teams.list; t; t = t->next) {
      double v = g == 0   ? t->exec_s
                 : g == 1 ? (double)t->bytes_in
                 : g == 2 ? (double)t->bytes_out
                 : g == 3 ? (double)cache_owner_bytes(&s->cache, t)
                 : g == 4 ? (double)t->quota.v[SRV_QUOTA_CACHE_BYTES]
                          : (double)t->in_flight;
      shlo__sb_printf(b, "%.*s{team=\"%s\"} %.17g\n", n, gauges[g], t->name,
                      v);
    }
  }
  shlo__sb_puts(b, "# TYPE shlo_team_refused_total counter\n");
  for (const srv_team *t = s->teams.list; t; t = t->next)
    for (int q = 0; q < SRV_N_QUOTAS; q++)
      if (q != SRV_QUOTA_BURST)
        shlo__sb_printf(b, "shlo_team_refused_total{team=\"%s\",quota=\"%s\"}"
                        " %llu\n", t->name, srv_quota_name(q),
                        (unsigned long long)t->refused[q]);
}

char *srv_metrics_text(srv_server *s) {
  srv_metrics *m = &s->metrics;
  strbuf b = {0};
  shlo__sb_puts(&b, "# HELP shlo_http_requests_total HTTP requests by route and "
                "status.\n# TYPE shlo_http_requests_total counter\n");
  for (int r = 0; r < R_COUNT; r++)
    for (int k = 0; k < SRV_N_STATUS; k++)
      if (m->requests[r][k]) {
        if (k < SRV_N_STATUS - 1)
          shlo__sb_printf(&b, "shlo_http_requests_total{route=\"%s\",status=\"%d\"} %llu\n",
                      route_names[r], statuses[k],
                      (unsigned long long)m->requests[r][k]);
        else
          shlo__sb_printf(&b, "shlo_http_requests_total{route=\"%s\",status=\"other\"} %llu\n",
                      route_names[r], (unsigned long long)m->requests[r][k]);
      }
  shlo__sb_puts(&b, "# HELP shlo_execution_seconds Engine execution time.\n"
                "# TYPE shlo_execution_seconds histogram\n");
  put_histogram(&b, "shlo_execution_seconds", "", &m->exec);
  put_fairness(&b, m);
  int queued, running;
  pool_depth(&s->pool, &queued, &running);
  shlo__sb_printf(&b, "# TYPE shlo_queue_depth gauge\nshlo_queue_depth %d\n"
                  "# TYPE shlo_executions_running gauge\n"
                  "shlo_executions_running %d\n"
                  "# TYPE shlo_workers gauge\nshlo_workers %d\n",
              queued, running, s->pool.n_threads);
  pthread_mutex_lock(&s->cache.lock);
  uint64_t hits = s->cache.hits, misses = s->cache.misses,
           ev = s->cache.evictions;
  size_t bytes = s->cache.bytes;
  int n = s->cache.n;
  pthread_mutex_unlock(&s->cache.lock);
  shlo__sb_printf(&b,
              "# TYPE shlo_cache_hits_total counter\nshlo_cache_hits_total %llu\n"
              "# TYPE shlo_cache_misses_total counter\nshlo_cache_misses_total %llu\n"
              "# TYPE shlo_cache_evictions_total counter\n"
              "shlo_cache_evictions_total %llu\n"
              "# TYPE shlo_cache_bytes gauge\nshlo_cache_bytes %zu\n"
              "# TYPE shlo_cache_limit_bytes gauge\nshlo_cache_limit_bytes %lld\n"
              "# TYPE shlo_cache_modules gauge\nshlo_cache_modules %d\n",
              (unsigned long long)hits, (unsigned long long)misses,
              (unsigned long long)ev, bytes, (long long)s->cfg.cache_bytes, n);
  shlo__sb_printf(&b,
              "# TYPE shlo_http_bytes_in_total counter\n"
              "shlo_http_bytes_in_total %llu\n"
              "# TYPE shlo_http_bytes_out_total counter\n"
              "shlo_http_bytes_out_total %llu\n"
              "# TYPE shlo_http_connections gauge\nshlo_http_connections %d\n"
              "# TYPE shlo_refused_total counter\n"
              "shlo_refused_total{limit=\"max-queue\"} %llu\n"
              "shlo_refused_total{limit=\"max-connections\"} %llu\n"
              "shlo_refused_total{limit=\"max-connections-per-ip\"} %llu\n"
              "shlo_refused_total{limit=\"max-client-jobs\"} %llu\n"
              "# TYPE shlo_uptime_seconds gauge\nshlo_uptime_seconds %.3f\n",
              (unsigned long long)m->bytes_in, (unsigned long long)m->bytes_out,
              s->n_conns, (unsigned long long)m->refused_queue,
              (unsigned long long)m->refused_connections,
              (unsigned long long)m->refused_per_ip,
              (unsigned long long)m->refused_client_jobs,
              (double)(srv_now_ns() - s->started_ns) / 1e9);
  srv_listen_metrics(s, &b);
  srv_execs_metrics(s, &b);
  srv_binary_metrics(s, &b);
  srv_traces_metrics(s, &b);
  srv_otlp_metrics(s, &b);
  put_teams(&b, s);
  srv_modmetrics_put(s, &b);
  srv_batch_metrics(s->batcher, &b);
  shlo__sb_printf(&b, "# HELP shlo_build_info The server's version (value "
                  "1).\n# TYPE shlo_build_info gauge\n"
                  "shlo_build_info{version=\"%s\"} 1\n", SHLO_VERSION_STRING);
  return srv_metrics_add_help(shlo__sb_take(&b));
}
