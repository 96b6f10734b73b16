/* SPDX-License-Identifier: Apache-2.0 */
/* HTTP on the loop: libmicrohttpd without threads of its own, its epoll
 * descriptor under a uv_poll_t and its timeout under a uv_timer_t.  Routes
 * that compute (execute, register) go to the worker pool with the
 * connection suspended, and resume when the job's done callback runs on
 * the loop. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "batch.h"
#include "b64_stream.h"
#include "console.h"
#include "server.h"
#include "executions.h"
#include "json_write.h"
#include "shlo/protocol.h"
#include "oip.h"
#include "store.h"
#include "history.h"
#include "modmetrics.h"
#include "reqlog.h"
#include "traces.h"

uint64_t srv_now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* ---- the MHD pump ---- */

static void on_mhd_timer(uv_timer_t *t) { srv_http_pump(t->data); }

static void on_mhd_poll(uv_poll_t *p, int status, int events) {
  (void)status;
  (void)events;
  srv_http_pump(p->data);
}

void srv_http_pump(srv_server *s) {
  if (!s->mhd) return;
  MHD_run(s->mhd);
  /* The executions this pass submitted go to the workers together. */
  pool_flush(&s->pool);
  MHD_UNSIGNED_LONG_LONG to;
  if (MHD_get_timeout(s->mhd, &to) == MHD_YES)
    uv_timer_start(&s->mhd_timer, on_mhd_timer, to, 0);
  else
    uv_timer_stop(&s->mhd_timer);
}

/* ---- routing ---- */

static srv_route match(const char *url, char *id) {
  if (!strcmp(url, "/execute")) return R_EXECUTE;
  if (!strncmp(url, "/v1/executions", 14)) return srv_execs_match(url, id);
  if (!strcmp(url, "/healthz")) return R_HEALTHZ;
  if (!strcmp(url, "/readyz")) return R_READYZ;
  if (!strcmp(url, "/metrics")) return R_METRICS;
  if (!strcmp(url, "/v1/console/history")) return R_HISTORY;
  if (!strncmp(url, "/v1/traces/", 11)) {
    size_t n = strlen(url + 11);
    if (n == 0 || n >= SRV_ID_LEN || strchr(url + 11, '/')) return R_OTHER;
    memcpy(id, url + 11, n + 1);
    return R_TRACE;
  }
  if (!strncmp(url, "/v2", 3) && (!url[3] || url[3] == '/'))
    return srv_oip_match(url);
  if (!strcmp(url, "/v1/modules") || !strcmp(url, "/v1/modules/"))
    return R_MODULES;
  if (!strncmp(url, "/v1/modules/", 12)) {
    const char *p = url + 12, *slash = strchr(p, '/');
    size_t n = slash ? (size_t)(slash - p) : strlen(p);
    if (n == 0 || n >= SRV_ID_LEN) return R_OTHER;
    memcpy(id, p, n);
    id[n] = 0;
    if (!slash) return R_MODULE;
    if (!strcmp(slash, "/execute")) return R_MODULE_EXEC;
  }
  /* /v1/models/NAME[/versions/V]/execute: the worker reads the name */
  size_t n = strlen(url);
  if (!strncmp(url, "/v1/models/", 11) && n > 19 &&
      !strcmp(url + n - 8, "/execute"))
    return R_MODEL_EXEC;
  return R_OTHER;
}

static const char *allowed(srv_route r) {
  switch (r) {
  case R_EXECUTE:
  case R_OIP_INFER:
  case R_MODULE_EXEC:
  case R_MODEL_EXEC: return "POST";
  case R_MODULES: return "GET, POST";
  case R_MODULE: return "GET, DELETE";
  case R_HEALTHZ:
  case R_READYZ:
  case R_OIP_HEALTH:
  case R_OIP:
  case R_OIP_MODELS:
  case R_METRICS: return "GET, HEAD";
  case R_OIP_REPO: return "GET, POST";
  case R_TRACE:
  case R_HISTORY: return "GET";
  default: return srv_execs_allowed(r);
  }
}

static bool method_ok(srv_route r, const char *m) {
  const char *a = allowed(r);
  size_t n = strlen(m);
  for (const char *p = a; (p = strstr(p, m)); p += n)
    if ((p == a || p[-2] == ',') && (p[n] == 0 || p[n] == ','))
      return true;
  return false;
}

/* ---- answers ---- */

static void set_body(srv_request *r, int status, char *body, bool text) {
  free(r->resp);
  r->resp = body;
  r->resp_len = body ? strlen(body) : 0;
  r->status = body ? status : 500;
  r->resp_text = text;
}

/* A constant JSON body. */
static void reply_json(srv_request *r, int status, const char *json) {
  set_body(r, status, strdup(json), false);
}

/* The answer as libmicrohttpd sends it: r->resp, taken over, or with its
 * holes filled as it goes (b64_stream.h). */
static struct MHD_Response *answer_response(srv_request *r) {
  srv_b64_reply *stream = r->b64_reply;
  r->b64_reply = NULL;
  if (stream && r->resp && r->status == 200 && !r->resp_text) {
    char *text = r->resp;
    r->resp = NULL; /* the reply frees it */
    return srv_b64_reply_response(stream, text, r->resp_len, &r->resp_len);
  }
  srv_b64_reply_free(stream); /* an error took the answer's place */
  struct MHD_Response *resp = MHD_create_response_from_buffer(
      r->resp_len, r->resp ? r->resp : (char *)"", r->resp ? MHD_RESPMEM_MUST_FREE
                                                  : MHD_RESPMEM_PERSISTENT);
  if (resp) r->resp = NULL; /* MHD frees it */
  return resp;
}

enum MHD_Result srv_http_reply(srv_request *r) {
  r->state = RS_DONE;
  if (r->conn_state) r->conn_state->busy = true;
  if (!r->resp) srv_reply_error(r, SHLO_PERR_RUNTIME, 500, 0, 0, "out of memory");
  /* every answer under /v2, a 404 or 405 of no route included */
  bool oip = !strncmp(r->path, "/v2", 3) &&
             (!r->path[3] || r->path[3] == '/' || r->path[3] == '?');
  if (oip && r->status >= 400) srv_oip_error_shape(r);
  if (r->resp && !r->resp_text && !r->oip_json_len) { /* end JSON with a
                                                          newline, for curl */
    char *b = realloc(r->resp, r->resp_len + 2);
    if (b) {
      b[r->resp_len++] = '\n';
      b[r->resp_len] = 0;
      r->resp = b;
    }
  }
  struct MHD_Response *resp = answer_response(r);
  if (!resp) return MHD_NO;
  MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
                          r->resp_text      ? "text/plain; version=0.0.4"
                          : r->oip_json_len ? "application/octet-stream"
                                            : "application/json");
  if (r->oip_json_len) {
    char n[24];
    snprintf(n, sizeof n, "%zu", r->oip_json_len);
    MHD_add_response_header(resp, "Inference-Header-Content-Length", n);
  }
  MHD_add_response_header(resp, "X-Request-Id", r->req_id);
  if (r->trace_key[0]) MHD_add_response_header(resp, "X-Trace-Id", r->trace_key);
  if (r->retry_after) {
    char secs[16];
    snprintf(secs, sizeof secs, "%d", r->retry_s > 0 ? r->retry_s : 1);
    MHD_add_response_header(resp, "Retry-After", secs);
  }
  if (r->status == 405)
    MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, allowed(r->route));
  if (r->status == 401)
    MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
                            "Bearer realm=\"shlo\"");
  if (r->srv->draining || r->close_after)
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
  enum MHD_Result ret = MHD_queue_response(r->conn, (unsigned)r->status, resp);
  MHD_destroy_response(resp);
  return ret;
}

bool srv_json_answer_refused(srv_request *r, shlo_value *const *outputs,
                             int n_outputs, int n_procs, bool b64) {
  srv_server *s = r->srv;
  uint64_t cap = (uint64_t)s->cfg.max_json_answer_bytes, n = 256;
  if (!cap) return false;
  int k = n_outputs * (n_procs > 1 ? n_procs : 1);
  for (int i = 0; i < k; i++) n += shlo_proto_value_json_max(outputs[i], b64);
  if (n <= cap) return false;
  s->metrics.refused_json_answers++;
  srv_reply_error(r, SHLO_PERR_LIMIT, 413, 0, 0,
                  "limit max-json-answer-bytes (%llu): the outputs as JSON "
                  "text could take %llu bytes; ask for \"output_format\": "
                  "\"b64\" (streamed) or use the binary port",
                  (unsigned long long)cap, (unsigned long long)n);
  return true;
}

/* ---- jobs ---- */

static void client_hold(srv_server *s, srv_request *r) {
  r->client_counted = srv_client_hold(s, r->client, &r->job);
}

static void client_release(srv_server *s, srv_request *r) {
  if (!r->client_counted) return;
  r->client_counted = false;
  srv_client_release(s, r->client);
}

/* A job that ended canceled: count it, and for a hang-up, how long the
 * worker took to let go. */
static void count_cancel(srv_server *s, srv_request *r) {
  int why = shlo_cancel_reason(&r->cancel);
  if (why == SRV_CANCEL_SHUTDOWN) s->metrics.canceled_shutdown++;
  if (why != SRV_CANCEL_CLIENT_GONE) return;
  s->metrics.canceled_client_gone++;
  double lat = (double)(srv_now_ns() - r->gone_ns) / 1e9;
  /* the latency of stopping a running job; a queued one just never runs */
  bool was_running = r->job.start_ns && r->job.start_ns <= r->gone_ns;
  if (was_running && lat > s->metrics.cancel_latency_max_s)
    s->metrics.cancel_latency_max_s = lat;
  if (s->log) {
    char when[48];
    srv_log_time(when);
    if (!strcmp(s->cfg.log_format, "json")) /* request ids need no escapes */
      fprintf(s->log, "{\"time\":\"%s\",\"level\":\"info\",\"event\":"
                      "\"canceled\",\"reason\":\"client_gone\","
                      "\"request_id\":\"%s\",\"cancel_ms\":%.3f}\n",
              when, r->req_id, lat * 1000);
    else
      fprintf(s->log, "time=%s event=canceled reason=client_gone "
                      "request_id=%s path=%s cancel_ms=%.3f\n", when,
              r->req_id, r->path, lat * 1000);
  }
}

static void job_done(srv_job *j) {
  srv_request *r = (srv_request *)j;
  srv_server *s = r->srv;
  if (r->prev) r->prev->next = r->next;
  else s->inflight = r->next;
  if (r->next) r->next->prev = r->prev;
  r->prev = r->next = NULL;
  r->state = RS_DONE;
  srv_unwatch_gone(r);
  client_release(s, r);
  srv_quota_release(r);
  srv_metrics_job(&s->metrics, r);
  count_cancel(s, r);
  if (!r->conn) { /* its connection ended while it ran */
    free(r->body);
    free(r->resp);
    srv_b64_reply_free(r->b64_reply);
    srv_b64_in_free(r->b64_in);
    free(r);
    return;
  }
  /* The pool calls srv_http_drained after the batch: one MHD pass answers
   * every connection resumed here. */
  MHD_resume_connection(r->conn);
}

void srv_http_drained(void *arg) { srv_http_pump(arg); }

static enum MHD_Result submit(srv_request *r, void (*work)(srv_job *)) {
  srv_server *s = r->srv;
  if (s->draining) {
    srv_reply_error(r, SHLO_PERR_LIMIT, 503, 0, 0,
                    "the server is shutting down");
    r->retry_after = true;
    return srv_http_reply(r);
  }
  srv_lane lane = SRV_LANE_SHORT; /* registrations: compiles are bounded */
  if (work == srv_job_execute && srv_job_execute_inline(r, &lane)) {
    if (r->executed) srv_metrics_exec(&s->metrics, r->exec_s);
    return srv_http_reply(r);
  }
  shlo_proto_error full;
  if (srv_client_full(s, r->client, &full)) {
    srv_reply_error(r, full.kind, full.http, 0, 0, "%s", full.message);
    r->retry_after = true;
    return srv_http_reply(r);
  }
  r->job.work = work;
  r->job.done = job_done;
  r->job.lane = lane;
  client_hold(s, r);
  if (!srv_quota_hold(r)) {
    client_release(s, r);
    r->job.owner = NULL;
    return srv_http_reply(r);
  }
  r->state = RS_QUEUED;
  if (pool_submit(&s->pool, &r->job)) {
    client_release(s, r);
    srv_quota_release(r);
    r->job.owner = NULL;
    r->state = RS_BODY;
    s->metrics.refused_queue++;
    srv_reply_error(r, SHLO_PERR_LIMIT, 503, 0, 0,
                    "limit max-queue (%lld) reached: all %d workers are busy "
                    "and the queue is full; retry later",
                    (long long)s->cfg.max_queue, s->pool.n_threads);
    r->retry_after = true;
    return srv_http_reply(r);
  }
  r->next = s->inflight;
  if (s->inflight) s->inflight->prev = r;
  s->inflight = r;
  if (r->conn_state) r->conn_state->busy = true;
  MHD_suspend_connection(r->conn);
  srv_watch_gone(r);
  return MHD_YES;
}

/* Each module's names in GET /v1/modules: the caller's team's (with
 * their team for an admin, who sees every team's). */
typedef struct names_of_ctx {
  srv_server *s;
  const char *team; /* NULL: every team's, each with its team */
} names_of_ctx;

static void module_names(strbuf *b, const cache_entry *e, void *arg) {
  names_of_ctx *ctx = arg;
  srv_name_row rows[32];
  int n = srv_names_of(&ctx->s->names, ctx->team, e->id, rows, 32);
  shlo__sb_puts(b, ",\"names\":[");
  for (int i = 0; i < n && i < 32; i++) {
    shlo__sb_puts(b, i ? ",{" : "{");
    if (!ctx->team) {
      shlo__json_key(b, "team", true);
      shlo__json_str(b, rows[i].team);
    }
    shlo__json_key(b, "name", ctx->team != NULL);
    shlo__json_str(b, rows[i].name);
    shlo__sb_printf(b, ",\"version\":%d}", rows[i].version);
  }
  shlo__sb_putc(b, ']');
}

static char *modules_listing(srv_request *r) {
  const srv_team *team = srv_listing_team(r);
  names_of_ctx ctx = {r->srv, team ? team->name : NULL};
  return cache_list_with(&r->srv->cache, srv_visible_owner(r), module_names,
                         &ctx);
}

static enum MHD_Result dispatch(srv_request *r, const char *method) {
  srv_server *s = r->srv;
  switch (r->route) {
  case R_HEALTHZ:
    reply_json(r, 200, "{\"status\":\"ok\"}");
    break;
  case R_READYZ:
    if (s->draining) reply_json(r, 503, "{\"status\":\"draining\"}");
    else reply_json(r, 200, "{\"status\":\"ready\"}");
    break;
  case R_METRICS:
    set_body(r, 200, srv_metrics_text(s), true);
    break;
  case R_TRACE:
    srv_traces_answer(r);
    break;
  case R_HISTORY:
    srv_history_answer(
        r, MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, "res"),
        MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, "n"));
    break;
  case R_MODULES:
    if (!strcmp(method, "POST")) return submit(r, srv_job_register);
    set_body(r, 200, modules_listing(r), false);
    break;
  case R_MODULE: {
    uint8_t key[32];
    bool ok = cache_id_to_key(r->id, key);
    const void *owner = srv_visible_owner(r);
    /* another team's module answers as an unknown one */
    cache_entry *e = ok ? srv_module_by_id(s, key, owner, false) : NULL;
    if (!e) {
      srv_reply_error(r, SHLO_PERR_NOT_FOUND, 404, 0, 0, "no module %s%s",
                      r->id, ok ? "" : " (an id is sha256:<64 hex digits>)");
      break;
    }
    snprintf(r->module, sizeof r->module, "%s", e->id);
    if (!strcmp(method, "DELETE")) {
      cache_disown(&s->cache, key, owner);
      srv_store_deleted(s, e, owner); /* only owner's claim */
      strbuf b = {0};
      shlo__sb_puts(&b, "{\"deleted\":");
      shlo__json_str(&b, e->id);
      shlo__sb_putc(&b, '}');
      set_body(r, 200, shlo__sb_take(&b), false);
    } else {
      set_body(r, 200, strdup(e->info), false);
    }
    cache_release(&s->cache, e);
    break;
  }
  case R_EXECUTE:
  case R_MODULE_EXEC:
  case R_MODEL_EXEC:
    return submit(r, srv_job_execute);
  case R_EXECS:
  case R_EXEC:
  case R_EXEC_INFEED:
  case R_EXEC_OUTFEED:
  case R_EXEC_CHANNEL:
    return srv_execs_dispatch(r, method);
  case R_OIP_HEALTH:
  case R_OIP:
  case R_OIP_INFER:
  case R_OIP_MODELS:
  case R_OIP_REPO:
    if (srv_oip_answer_inline(r)) break;
    return submit(r, srv_job_oip);
  default:
    srv_reply_error(r, SHLO_PERR_NOT_FOUND, 404, 0, 0, "no route %s",
                    r->path);
  }
  return srv_http_reply(r);
}

static void drop_body(srv_request *r);

/* The body's memory goes now; the request is answered 503 on the raw
 * socket and its connection ends (max-pending-body-bytes, listen.c). */
static void shed_body(srv_pending *p) {
  srv_request *r = p->owner;
  drop_body(r);
  srv_conn_shed(r->srv, r->conn_state, "max-pending-body-bytes",
                (long long)r->srv->cfg.max_pending_body_bytes);
}

/* snprintf(dst, cap, "%s", src) without printf's cost. */
static void copy_trunc(char *dst, size_t cap, const char *src) {
  size_t n = strnlen(src, cap - 1);
  memcpy(dst, src, n);
  dst[n] = 0;
}

/* The state of a new request, from its first callback (headers only). */
static srv_request *request_new(srv_server *s, struct MHD_Connection *c,
                                const char *url, const char *method) {
  srv_request *r = calloc(1, sizeof *r);
  if (!r) return NULL;
  s->n_active++;
  r->srv = s;
  r->conn = c;
  r->pend.owner = r;
  r->pend.shed = shed_body;
  r->t0_ns = srv_now_ns();
  shlo_cancel_set(&r->cancel, 0);
  copy_trunc(r->method, sizeof r->method, method);
  copy_trunc(r->path, sizeof r->path, url);
  r->route = match(url, r->id);
  r->err_kind = r->quota = -1;
  const char *rid = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
                                                "X-Request-Id");
  srv_reqid_take(r->req_id, rid, rid ? strlen(rid) : 0);
  srv_trace_ctx_init(&r->tctx, MHD_lookup_connection_value(
                                   c, MHD_HEADER_KIND, "traceparent"));
  r->team = s->anonymous;
  r->scopes = SRV_SCOPE_ALL; /* no tokens: one team, every scope */
  r->conn_state = srv_conn_of(c);
  if (r->conn_state) {
    r->conn_state->in_request = true;
    snprintf(r->client, sizeof r->client, "%s", r->conn_state->ip);
  }
  const char *ct =
      MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type");
  r->json_type = ct && !strncasecmp(ct, "application/json", 16);
  const char *ih = MHD_lookup_connection_value(
      c, MHD_HEADER_KIND, "Inference-Header-Content-Length");
  char *end = NULL;
  r->oip_header_len = ih ? strtoll(ih, &end, 10) : -1;
  if (ih && (end == ih || *end || r->oip_header_len < 0))
    r->oip_header_len = INT64_MAX; /* malformed: oip.c refuses it */
  return r;
}

/* An upload that executions.c reads as it comes (infeed, host channel). */
static bool is_stream_upload(const srv_request *r) {
  return r->route == R_EXEC_INFEED ||
         (r->route == R_EXEC_CHANNEL && !strcmp(r->method, "POST"));
}

static bool health_route(srv_route r) {
  return r == R_HEALTHZ || r == R_READYZ || r == R_METRICS ||
         r == R_OIP_HEALTH;
}

/* Registering and deleting modules needs the register scope. */
static bool needs_register(srv_route route, const char *method) {
  return (route == R_MODULES && !strcmp(method, "POST")) ||
         (route == R_MODULE && !strcmp(method, "DELETE"));
}

/* What a token's scopes allow: admin everything; /metrics only admin;
 * reading modules either scope; the rest as its route needs. */
static bool scope_allows(unsigned scopes, srv_route route,
                         const char *method) {
  if (scopes & SRV_SCOPE_ADMIN) return true;
  if (route == R_METRICS) return false;
  if (needs_register(route, method)) return scopes & SRV_SCOPE_REGISTER;
  if (route == R_MODULES || route == R_MODULE)
    return scopes & (SRV_SCOPE_EXECUTE | SRV_SCOPE_REGISTER);
  return scopes & SRV_SCOPE_EXECUTE;
}

static const char *allowed_path(srv_route route) {
  static const char *const names[] = {
#define R(e, str) str,
      SRV_ROUTES(R)
#undef R
  };
  return names[route];
}

const void *srv_visible_owner(const srv_request *r) {
  return r->scopes & SRV_SCOPE_ADMIN ? NULL : r->team;
}

const srv_team *srv_listing_team(const srv_request *r) {
  if (!r->srv->n_tokens) return r->team; /* one team: names as they are */
  return r->scopes & SRV_SCOPE_ADMIN ? NULL : r->team;
}

/* An answer decided from the headers, sent once the body (if any) has
 * been read and dropped, so that the connection stays usable. */
static enum MHD_Result answer_after_body(srv_request *r) {
  r->state = RS_DONE;
  return MHD_YES;
}

/* Content-Length headers seen so far: the first value, and whether a
 * later one differs. */
typedef struct cl_seen {
  const char *first;
  bool conflict;
} cl_seen;

static enum MHD_Result on_header(void *cls, enum MHD_ValueKind kind,
                                 const char *key, const char *value) {
  (void)kind;
  cl_seen *seen = cls;
  if (!key || strcasecmp(key, "Content-Length")) return MHD_YES;
  if (!seen->first) seen->first = value ? value : "";
  else if (strcmp(seen->first, value ? value : "")) seen->conflict = true;
  return MHD_YES;
}

/* Two Content-Length headers that disagree leave the body's end unknown:
 * a proxy in front may have framed it by the other one (request
 * smuggling).  libmicrohttpd's lookup gives only one of them, so every
 * header is walked. */
static bool content_length_conflict(struct MHD_Connection *c) {
  cl_seen seen = {0};
  MHD_get_connection_values(c, MHD_HEADER_KIND, on_header, &seen);
  return seen.conflict;
}

/* Refuse what the headers alone condemn, before a body byte is read:
 * too many connections, no such route or method, no valid token, or a
 * Content-Length over the limit. */
static enum MHD_Result admit(srv_request *r, const char *url,
                             const char *method) {
  srv_server *s = r->srv;
  struct MHD_Connection *c = r->conn;
  const char *cl =
      MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
  if (r->conn_state && r->conn_state->reserve && !health_route(r->route)) {
    s->metrics.refused_connections++;
    srv_reply_error(r, SHLO_PERR_LIMIT, 503, 0, 0,
                    "limit max-connections (%lld) reached",
                    (long long)s->cfg.max_connections);
    r->retry_after = true;
    return srv_http_reply(r);
  }
  if (content_length_conflict(c)) {
    srv_reply_error(r, SHLO_PERR_INPUT, 400, 0, 0,
                    "conflicting Content-Length headers");
    r->close_after = true; /* where the body ends is unknown */
    return srv_http_reply(r);
  }
  if (r->route == R_OTHER) {
    srv_reply_error(r, SHLO_PERR_NOT_FOUND, 404, 0, 0, "no route %s", url);
    return answer_after_body(r);
  }
  if (!method_ok(r->route, method)) {
    srv_reply_error(r, SHLO_PERR_METHOD, 405, 0, 0,
                    "%s does not take %s (allowed: %s)", url, method,
                    allowed(r->route));
    return answer_after_body(r);
  }
  if (s->n_tokens && r->route != R_HEALTHZ && r->route != R_READYZ &&
      r->route != R_OIP_HEALTH) {
    const char *auth =
        MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
    const srv_token *t = srv_auth_find(s, auth);
    r->token_name = t ? t->name : NULL;
    if (!r->token_name) {
      srv_reply_error(r, SHLO_PERR_AUTH, 401, 0, 0,
                      auth ? "unknown bearer token"
                           : "this server needs `Authorization: Bearer "
                             "<token>`");
      return answer_after_body(r);
    }
    /* per-client caps count by token when there are tokens */
    snprintf(r->client, sizeof r->client, "token:%s", r->token_name);
    r->team = t->team;
    r->scopes = t->scopes;
    if (!scope_allows(r->scopes, r->route, method)) {
      srv_reply_error(r, SHLO_PERR_AUTH, 403, 0, 0,
                      "token %s may not %s %s (its scopes do not include %s)",
                      r->token_name, method, allowed_path(r->route),
                      r->route == R_METRICS ? "admin"
                      : needs_register(r->route, method) ? "register"
                                                         : "execute");
      return answer_after_body(r);
    }
  }
  if (!health_route(r->route) && !srv_quota_rate(r))
    return answer_after_body(r);
  unsigned long long cl_n = cl ? strtoull(cl, NULL, 10) : 0;
  bool stream = is_stream_upload(r); /* read as it comes, never whole */
  if (!stream && cl_n > (unsigned long long)s->cfg.max_body_bytes) {
    srv_reply_error(r, SHLO_PERR_LIMIT, 413, 0, 0,
                    "limit max-body-bytes (%lld) exceeded: Content-Length "
                    "is %s", (long long)s->cfg.max_body_bytes, cl);
    return srv_http_reply(r);
  }
  if (stream) return srv_execs_upload_headers(r); /* 409 before the body */
  r->content_length = stream ? 0 : (size_t)cl_n;
  /* a large execution body: its base64 decoded as it comes */
  if ((r->route == R_EXECUTE || r->route == R_MODULE_EXEC ||
       r->route == R_MODEL_EXEC) &&
      r->content_length >= SRV_B64_SPLICE_BODY &&
      !(r->b64_in = srv_b64_in_new(r->content_length)))
    return MHD_NO;
  return MHD_YES;
}

/* Room for need bytes of body.  The first piece allocates what the
 * Content-Length announced (checked against max-body-bytes in admit), so
 * a large body is neither copied by regrowth nor faulted in 4 KB at a
 * time: several MB go on huge pages (json_write.h). */
static bool body_reserve(srv_request *r, size_t need) {
  if (need <= r->cap) return true;
  size_t cap = r->cap ? r->cap : 4096;
  if (!r->body && r->content_length >= need) cap = r->content_length + 1;
  while (cap < need) cap *= 2;
  char *b = realloc(r->body, cap);
  if (!b) return false;
  shlo__advise_huge(b + r->len, cap - r->len);
  r->body = b;
  r->cap = cap;
  return true;
}

/* Forget the body received so far; the rest of it is read and ignored. */
static void drop_body(srv_request *r) {
  r->over_limit = true;
  srv_pending_set(r->srv, &r->pend, 0);
  free(r->body);
  r->body = NULL;
  r->len = r->cap = 0;
  srv_b64_in_free(r->b64_in);
  r->b64_in = NULL;
}

/* Append n uploaded bytes to the body, kept NUL-terminated.  A body over
 * max-body-bytes is dropped and the rest of it read and ignored, so that
 * the 413 goes out once the upload ends. */
static enum MHD_Result append_upload(srv_request *r, const char *upload,
                                     size_t n) {
  srv_server *s = r->srv;
  if (r->state == RS_DONE) { /* answered from the headers: drop the body */
    r->discarded += n;
    return r->discarded > (size_t)s->cfg.max_body_bytes ? MHD_NO : MHD_YES;
  }
  if (r->state != RS_BODY || r->over_limit) return MHD_YES;
  if (r->received + n > (size_t)s->cfg.max_body_bytes) {
    s->metrics.bytes_in += r->received;
    drop_body(r);
    return MHD_YES;
  }
  r->received += n;
  /* counted with every other partly received body, at what its
   * Content-Length announced (what is allocated for it; a large
   * execution's tensors are made before their bytes come); past the
   * budget the longest stalled ones are closed, this one perhaps */
  size_t held = r->received > r->content_length ? r->received
                                                : r->content_length;
  if (!srv_pending_set(s, &r->pend, held)) return MHD_YES;
  if (r->b64_in) return srv_b64_in_feed(r, upload, n) ? MHD_YES : MHD_NO;
  return srv_body_append(r, upload, n) ? MHD_YES : MHD_NO;
}

bool srv_body_append(srv_request *r, const char *p, size_t n) {
  if (!body_reserve(r, r->len + n + 1)) return false;
  memcpy(r->body + r->len, p, n);
  r->len += n;
  r->body[r->len] = 0;
  return true;
}

/* The last callback of a request: the whole body is in. */
static enum MHD_Result body_complete(srv_request *r, const char *method) {
  srv_server *s = r->srv;
  if (r->state == RS_QUEUED) return MHD_YES; /* not reached: suspended */
  if (r->state == RS_DONE) return srv_http_reply(r);
  if (r->conn_state && r->conn_state->expired) return MHD_NO; /* shed */
  srv_pending_set(s, &r->pend, 0); /* whole: no longer pending */
  s->metrics.bytes_in += r->received;
  if (r->over_limit) {
    srv_reply_error(r, SHLO_PERR_LIMIT, 413, 0, 0,
                    "limit max-body-bytes (%lld) exceeded",
                    (long long)s->cfg.max_body_bytes);
    return srv_http_reply(r);
  }
  if (!r->body) {
    r->body = calloc(1, 1);
    if (!r->body) return MHD_NO;
  }
  if (r->b64_in && !srv_b64_in_finish(r)) return MHD_NO;
  return dispatch(r, method);
}

/* libmicrohttpd calls this once with the headers, once per piece of the
 * body, and once more when the body is complete. */
static enum MHD_Result on_access(void *cls, struct MHD_Connection *c,
                                 const char *url, const char *method,
                                 const char *version, const char *upload,
                                 size_t *upload_size, void **con_cls) {
  (void)version;
  srv_request *r = *con_cls;
  if (!r) {
    /* The console's static files: answered at once, no request state (a
     * connection over max-connections goes the usual way, to its 503). */
    srv_conn *k = srv_conn_of(c);
    if (srv_console_route(cls, url) && !(k && k->reserve))
      return srv_console_answer(c, url, method);
    r = request_new(cls, c, url, method);
    if (!r) return MHD_NO;
    *con_cls = r;
    return admit(r, url, method);
  }
  if (*upload_size && r->state == RS_BODY && is_stream_upload(r))
    return srv_execs_upload(r, upload, upload_size);
  if (*upload_size) {
    size_t n = *upload_size;
    *upload_size = 0;
    return append_upload(r, upload, n);
  }
  return body_complete(r, method);
}

/* ---- per-request bookkeeping ---- */

void srv_log_time(char out[48]) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  struct tm tm;
  gmtime_r(&ts.tv_sec, &tm);
  char when[24];
  strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
  snprintf(out, 48, "%.23s.%03dZ", when, (int)(ts.tv_nsec / 1000000));
}

static void log_request(srv_server *s, srv_request *r, bool completed) {
  if (!s->log) return;
  const srv_job *j = &r->job;
  srv_log_rec l = {
      .protocol = "http", .request_id = r->req_id,
      .team = r->team && (r->token_name || !s->n_tokens) ? r->team->name
                                                         : NULL,
      .token = r->token_name, .method = r->method, .path = r->path,
      .route = allowed_path(r->route), .module = r->module,
      .trace_id = r->trace_key[0] ? r->trace_key : NULL,
      .status = r->status,
      .error_kind = r->status >= 400 && r->err_kind >= 0
                        ? shlo_proto_err_name(r->err_kind) : NULL,
      .duration_ms = (double)(srv_now_ns() - r->t0_ns) / 1e6,
      .queue_ms = j->start_ns > j->submit_ns && j->submit_ns
                      ? (double)(j->start_ns - j->submit_ns) / 1e6 : 0,
      .compile_ms = r->compile_ms,
      .exec_ms = r->executed ? r->exec_s * 1000 : 0,
      .bytes_in = r->received, .bytes_out = r->resp_len,
      .aborted = !completed};
  srv_log_request(s, &l);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe) {
  srv_server *s = cls;
  srv_request *r = *con_cls;
  srv_conn *k = srv_conn_of(c);
  if (k) { /* the next request's deadline starts now */
    k->busy = k->in_request = false;
    k->since_ns = srv_now_ns();
  }
  if (!r) return;
  *con_cls = NULL;
  srv_pending_set(s, &r->pend, 0);
  srv_execs_request_ended(r);
  bool ok = toe == MHD_REQUEST_TERMINATED_COMPLETED_OK;
  if (!ok && r->state != RS_DONE) r->status = 0; /* client went away */
  srv_metrics_request(&s->metrics, r->route, r->status);
  if (ok) s->metrics.bytes_out += r->resp_len;
  log_request(s, r, ok);
  srv_modmetrics_add(s, r->module, r->status, r->err_kind,
                     r->executed ? r->exec_s : -1);
  if (!health_route(r->route) && r->route != R_HISTORY &&
      r->route != R_TRACE)
    srv_history_request(s, r->team && (r->token_name || !s->n_tokens)
                               ? r->team : NULL,
                        r->status, r->executed ? r->exec_s : -1, r->req_id,
                        allowed_path(r->route), r->module,
                        r->status >= 400 ? r->err_kind : -1);
  srv_team_finished(r, ok);
  srv_audit_request(s, r);
  s->n_active--;
  if (r->state == RS_QUEUED) {
    /* Not expected (a suspended connection does not end), but a worker may
     * still hold r: leave it to job_done. */
    r->conn = NULL;
    return;
  }
  size_t bytes = r->received + r->resp_len;
  free(r->body);
  free(r->resp);
  srv_b64_reply_free(r->b64_reply);
  srv_b64_in_free(r->b64_in);
  free(r);
  srv_memory_after_request(bytes);
}

static void on_connection(void *cls, struct MHD_Connection *c,
                          void **socket_context,
                          enum MHD_ConnectionNotificationCode toe) {
  srv_server *s = cls;
  if (toe == MHD_CONNECTION_NOTIFY_STARTED) srv_conn_opened(s, c, socket_context);
  else srv_conn_closed(s, socket_context);
}

/* ---- start and stop ---- */

/* The PEM text of tls-cert and tls-key while the daemon runs. */
static char *tls_pem[2];

static void free_tls(void) {
  free(tls_pem[0]);
  free(tls_pem[1]);
  tls_pem[0] = tls_pem[1] = NULL;
}

/* A PEM file's text (malloc'd), or NULL after a message on stderr. */
static char *read_pem(const char *option, const char *path) {
  FILE *f = fopen(path, "rb");
  char *text = NULL;
  size_t n = 0;
  if (f) {
    text = malloc(1 << 20);
    n = text ? fread(text, 1, (1 << 20) - 1, f) : 0;
    int err = ferror(f) ? errno : 0; /* EISDIR: a directory opens */
    bool whole = text && feof(f) && !err;
    fclose(f);
    if (whole) text[n] = 0;
    if (!whole || !strstr(text, "-----BEGIN ")) {
      fprintf(stderr, "shlo-server: --%s %s: %s%s\n", option, path,
              whole ? (n ? "not a PEM file" : "empty (0 bytes), not a PEM "
                                               "file")
              : err ? "cannot read: " : "over 1 MiB",
              err ? strerror(err) : "");
      free(text);
      return NULL;
    }
    return text;
  }
  fprintf(stderr, "shlo-server: --%s %s: %s\n", option, path,
          strerror(errno));
  return NULL;
}

/* HTTPS: both tls-cert and tls-key, read now; 0 when off or loaded. */
static int load_tls(srv_server *s, char **cert, char **key) {
  *cert = *key = NULL;
  const srv_config *c = &s->cfg;
  if (!c->tls_cert[0] && !c->tls_key[0]) return 0;
  if (!c->tls_cert[0] || !c->tls_key[0]) {
    fprintf(stderr, "shlo-server: HTTPS needs both --tls-cert and "
                    "--tls-key\n");
    return -1;
  }
  if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
    fprintf(stderr, "shlo-server: this libmicrohttpd was built without TLS\n");
    return -1;
  }
  if (c->binary_port) {
    fprintf(stderr, "shlo-server: --binary-port has no TLS (yet): it would "
                    "carry programs and tensors in the clear next to the "
                    "HTTPS port; leave it off (0) with --tls-cert\n");
    return -1;
  }
  if (!(*cert = read_pem("tls-cert", c->tls_cert)) ||
      !(*key = read_pem("tls-key", c->tls_key))) {
    free(*cert);
    *cert = NULL;
    return -1;
  }
  return 0;
}

int srv_http_start(srv_server *s) {
  struct sockaddr_storage ss;
  memset(&ss, 0, sizeof ss);
  /* TURBO: read, write and accept before asking epoll (the sockets are
   * non-blocking), which saves an epoll round per request under load;
   * bare_mhd, the benchmark's baseline, uses it too. */
  unsigned flags = MHD_USE_EPOLL | MHD_USE_TURBO | MHD_ALLOW_SUSPEND_RESUME |
                   MHD_USE_ERROR_LOG | MHD_USE_NO_LISTEN_SOCKET;
  const char *host = s->cfg.host;
  if (!strcmp(host, "localhost")) host = "127.0.0.1";
  struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
  struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
  if (inet_pton(AF_INET, host, &a4->sin_addr) == 1) {
    a4->sin_family = AF_INET;
    a4->sin_port = htons((uint16_t)s->cfg.port);
  } else if (inet_pton(AF_INET6, host, &a6->sin6_addr) == 1) {
    a6->sin6_family = AF_INET6;
    a6->sin6_port = htons((uint16_t)s->cfg.port);
  } else {
    fprintf(stderr, "shlo-server: --host %s is not an IPv4 or IPv6 address\n",
            s->cfg.host);
    return -1;
  }
  socklen_t len = ss.ss_family == AF_INET6 ? sizeof *a6 : sizeof *a4;
  char *cert, *key;
  if (load_tls(s, &cert, &key)) return -1;
  if (srv_listen_start(s, (struct sockaddr *)&ss, len)) {
    free(cert);
    free(key);
    fprintf(stderr, "shlo-server: cannot listen on %s:%lld\n", s->cfg.host,
            (long long)s->cfg.port);
    return -1;
  }
  /* listen.c caps the connections (max-connections can change on
   * SIGHUP); libmicrohttpd's own limit only has to stay out of the way. */
  /* With TLS the certificate and key go in as the first options (an
   * empty key with no TLS flag is ignored by libmicrohttpd's option
   * list: MHD_OPTION_ARRAY of one or none). */
  struct MHD_OptionItem tls[] = {
      {MHD_OPTION_HTTPS_MEM_CERT, 0, cert},
      {MHD_OPTION_HTTPS_MEM_KEY, 0, key},
      {MHD_OPTION_END, 0, NULL}};
  if (cert) flags |= MHD_USE_TLS;
  else tls[0].option = MHD_OPTION_END;
  s->mhd = MHD_start_daemon(
      flags, 0, NULL, NULL, on_access, s,
      MHD_OPTION_ARRAY, tls,
      MHD_OPTION_CONNECTION_LIMIT, 1u << 20,
      MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)s->cfg.connection_timeout_s,
      MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
      MHD_OPTION_NOTIFY_CONNECTION, on_connection, s, MHD_OPTION_END);
  /* kept until the daemon stops: libmicrohttpd borrows them */
  tls_pem[0] = cert;
  tls_pem[1] = key;
  const union MHD_DaemonInfo *ei =
      s->mhd ? MHD_get_daemon_info(s->mhd, MHD_DAEMON_INFO_EPOLL_FD) : NULL;
  if (!ei) {
    if (cert) /* most often a PEM block that does not parse */
      fprintf(stderr, "shlo-server: --tls-cert %s / --tls-key %s: not a "
                      "usable certificate and key (malformed PEM, or a key "
                      "that is not the certificate's)\n",
              s->cfg.tls_cert, s->cfg.tls_key);
    else
      fprintf(stderr, "shlo-server: cannot start libmicrohttpd with "
                      "epoll\n");
    free_tls();
    if (s->mhd) MHD_stop_daemon(s->mhd);
    s->mhd = NULL;
    srv_listen_stop(s);
    return -1;
  }
  uv_timer_init(s->loop, &s->mhd_timer);
  s->mhd_timer.data = s;
  uv_poll_init(s->loop, &s->mhd_poll, ei->epoll_fd);
  s->mhd_poll.data = s;
  uv_poll_start(&s->mhd_poll, UV_READABLE, on_mhd_poll);
  if (srv_execs_start(s) || srv_history_start(s)) {
    fprintf(stderr, "shlo-server: out of memory\n");
    return -1;
  }
  srv_http_pump(s);
  return 0;
}

static void stop_all(srv_server *s) {
  uv_timer_stop(&s->drain_timer);
  uv_close((uv_handle_t *)&s->drain_timer, NULL);
  srv_listen_stop(s);
  uv_poll_stop(&s->mhd_poll);
  uv_timer_stop(&s->mhd_timer);
  srv_execs_stop(s); /* resumes what it suspended, as MHD_stop_daemon needs */
  srv_history_stop(s);
  MHD_stop_daemon(s->mhd);
  s->mhd = NULL;
  free_tls();
  uv_close((uv_handle_t *)&s->mhd_poll, NULL);
  uv_close((uv_handle_t *)&s->mhd_timer, NULL);
  uv_close((uv_handle_t *)&s->sig_int, NULL);
  uv_close((uv_handle_t *)&s->sig_term, NULL);
  srv_binary_stop(s);
  pool_stop(&s->pool);
}

static void on_drain_tick(uv_timer_t *t) {
  srv_server *s = t->data;
  uint64_t ms = (srv_now_ns() - s->drain_t0_ns) / 1000000;
  bool running = s->inflight || srv_binary_busy(s) || srv_execs_busy(s);
  if (running && !s->canceled &&
      ms >= (uint64_t)s->cfg.shutdown_grace_ms) {
    s->canceled = true;
    int n = srv_binary_cancel_all(s) +
            srv_execs_cancel_all(s, SRV_CANCEL_SHUTDOWN);
    for (srv_request *r = s->inflight; r; r = r->next, n++) {
      /* a hang-up seen before keeps its reason */
      shlo_cancel_set_first(&r->cancel, SRV_CANCEL_SHUTDOWN);
    }
    cache_recheck_waits(&s->cache);
    srv_batch_cancel_all(s->batcher, SRV_CANCEL_SHUTDOWN);
    fprintf(stderr, "shlo-server: grace period over, canceled %d "
                    "execution(s)\n", n);
  }
  /* With nothing running, connections still open are idle keep-alives or
   * uploads in progress: they get a second to finish, not the whole grace
   * period, which is for executions. */
  if (!running && (s->n_active == 0 || ms >= 1000)) {
    fprintf(stderr, "shlo-server: stopped\n");
    stop_all(s);
  }
}

void srv_begin_shutdown(srv_server *s) {
  if (s->draining) return;
  s->draining = true;
  s->drain_t0_ns = srv_now_ns();
  /* The listener stays open while it drains: a new connection gets /readyz's
   * 503 (so a balancer takes the server out) and 503 for new work. */
  fprintf(stderr, "shlo-server: shutting down: no new work, %s\n",
          s->inflight ? "finishing running executions" : "nothing running");
  srv_binary_quiesce(s);
  /* Compiles stop now: the grace period is for executions, and a compile
   * (up to compile-timeout-ms) would only lead to one. */
  cache_stop_compiles(&s->cache);
  uv_timer_init(s->loop, &s->drain_timer);
  s->drain_timer.data = s;
  uv_timer_start(&s->drain_timer, on_drain_tick, 0, 20);
}
