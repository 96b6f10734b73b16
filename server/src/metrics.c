/* Counters and the Prometheus text of /metrics.  Loop thread only. */
#include <stdlib.h>

#include "server.h"
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

void srv_metrics_exec(srv_metrics *m, double seconds) {
  int i = 0;
  while (i < SRV_LAT_BUCKETS && seconds > lat_bounds[i]) i++;
  m->exec_buckets[i]++;
  m->exec_count++;
  m->exec_sum_s += seconds;
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
  uint64_t cum = 0;
  for (int i = 0; i < SRV_LAT_BUCKETS; i++) {
    cum += m->exec_buckets[i];
    shlo__sb_printf(&b, "shlo_execution_seconds_bucket{le=\"%g\"} %llu\n",
                lat_bounds[i], (unsigned long long)cum);
  }
  cum += m->exec_buckets[SRV_LAT_BUCKETS];
  shlo__sb_printf(&b, "shlo_execution_seconds_bucket{le=\"+Inf\"} %llu\n",
              (unsigned long long)cum);
  shlo__sb_printf(&b, "shlo_execution_seconds_sum %.6f\n", m->exec_sum_s);
  shlo__sb_printf(&b, "shlo_execution_seconds_count %llu\n",
              (unsigned long long)m->exec_count);
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
              "# TYPE shlo_uptime_seconds gauge\nshlo_uptime_seconds %.3f\n",
              (unsigned long long)m->bytes_in, (unsigned long long)m->bytes_out,
              s->n_conns, (unsigned long long)m->refused_queue,
              (unsigned long long)m->refused_connections,
              (double)(srv_now_ns() - s->started_ns) / 1e9);
  srv_binary_metrics(s, &b);
  return shlo__sb_take(&b);
}
