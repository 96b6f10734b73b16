/* SPDX-License-Identifier: Apache-2.0 */
/* The # HELP line of every /metrics family that its writer does not give
 * one, in one table: the writers (metrics.c, listen.c, binary.c, ...) say
 * what they count with # TYPE, and this pass puts the operator's sentence
 * before it.  A family missing from both shows in `promtool check
 * metrics`, which the test suite runs (tests/server/metrics_promtool.py). */
#include <stdlib.h>
#include <string.h>

#include "core/strbuf.h"
#include "server.h"

/* X(family, help) */
#define SRV_METRIC_HELP(X)                                                   \
  X("shlo_executions_canceled_total",                                        \
    "Executions canceled, by reason (client gone, shutdown).")               \
  X("shlo_connections_closed_total",                                         \
    "HTTP connections closed by the server, by reason.")                     \
  X("shlo_reloads_total", "SIGHUP reloads of the configuration and tokens, " \
                          "by result.")                                      \
  X("shlo_queue_depth", "Jobs waiting for a worker.")                        \
  X("shlo_executions_running", "Jobs running on the workers now.")           \
  X("shlo_workers", "Execution worker threads.")                             \
  X("shlo_cache_hits_total", "Module cache lookups that found the module.")  \
  X("shlo_cache_misses_total", "Module cache lookups that did not.")         \
  X("shlo_cache_evictions_total", "Modules evicted from the cache.")         \
  X("shlo_cache_bytes", "Bytes the module cache holds.")                     \
  X("shlo_cache_limit_bytes", "The module cache's budget (cache-bytes).")    \
  X("shlo_cache_modules", "Modules in the cache.")                           \
  X("shlo_http_bytes_in_total", "HTTP request body bytes received.")         \
  X("shlo_http_bytes_out_total", "HTTP answer bytes sent.")                  \
  X("shlo_http_connections", "Open HTTP connections.")                       \
  X("shlo_refused_total", "Requests and connections refused with 503 or "    \
                          "429, by the limit that refused them.")            \
  X("shlo_uptime_seconds", "Seconds since the server started.")              \
  X("shlo_pending_body_bytes", "Bytes of request bodies and binary frames "  \
                               "partly received.")                           \
  X("shlo_pending_body_shed_total", "Connections closed for "                \
                                    "max-pending-body-bytes.")               \
  X("shlo_json_answers_refused_total", "Answers refused (413) for "          \
                                       "max-json-answer-bytes.")             \
  X("shlo_frame_timeouts_total", "Binary connections closed for "            \
                                 "frame-timeout-s.")                         \
  X("shlo_binary_bytes_in_total", "Binary-protocol bytes received.")         \
  X("shlo_binary_bytes_out_total", "Binary-protocol bytes sent.")            \
  X("shlo_binary_connections", "Open binary-protocol connections.")          \
  X("shlo_team_execution_seconds_total", "Seconds the team's executions "    \
                                         "ran.")                             \
  X("shlo_team_bytes_in_total", "Request bytes the team sent.")              \
  X("shlo_team_bytes_out_total", "Answer bytes the team received.")          \
  X("shlo_team_cache_bytes", "Module cache bytes the team holds.")           \
  X("shlo_team_cache_share_bytes", "The team's cache share (quota "          \
                                   "cache-bytes).")                          \
  X("shlo_team_in_flight", "The team's jobs running or queued.")             \
  X("shlo_team_refused_total", "The team's requests refused with 429, by "   \
                               "quota.")

static const char *const help_names[] = {
#define N(name, help) name,
    SRV_METRIC_HELP(N)
#undef N
};
static const char *const help_texts[] = {
#define T(name, help) help,
    SRV_METRIC_HELP(T)
#undef T
};
enum { N_HELP = sizeof help_names / sizeof *help_names };

static const char *help_of(const char *name, size_t n) {
  for (int i = 0; i < N_HELP; i++)
    if (strlen(help_names[i]) == n && !memcmp(help_names[i], name, n))
      return help_texts[i];
  return NULL;
}

/* Whether the text just before line (at off) is "# HELP <name> ". */
static bool has_help(const char *text, size_t off, const char *name,
                     size_t n) {
  if (off == 0) return false;
  size_t start = off - 1; /* the previous line's newline */
  while (start > 0 && text[start - 1] != '\n') start--;
  return off - start > 7 + n && !memcmp(text + start, "# HELP ", 7) &&
         !memcmp(text + start + 7, name, n) && text[start + 7 + n] == ' ';
}

char *srv_metrics_add_help(char *text) {
  if (!text) return NULL;
  strbuf b = {0};
  size_t off = 0, len = strlen(text);
  while (off < len) {
    const char *line = text + off;
    const char *nl = memchr(line, '\n', len - off);
    size_t n = nl ? (size_t)(nl - line) + 1 : len - off;
    if (n > 7 && !memcmp(line, "# TYPE ", 7)) {
      const char *name = line + 7;
      size_t nn = strcspn(name, " \n");
      const char *help = help_of(name, nn);
      if (help && !has_help(text, off, name, nn))
        shlo__sb_printf(&b, "# HELP %.*s %s\n", (int)nn, name, help);
    }
    shlo__sb_add(&b, line, n);
    off += n;
  }
  free(text);
  return shlo__sb_take(&b);
}
