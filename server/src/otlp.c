/* SPDX-License-Identifier: Apache-2.0 */
/* OTLP/JSON export of traces (otlp.h).  A worker renders a finished
 * trace's spans as one ExportTraceServiceRequest and queues the text; the
 * exporter thread appends it to the file or POSTs it to the collector,
 * one connection per request (a trace a second is the sampled case; a
 * collector is on the local network). */
#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "core/strbuf.h"
#include "json_write.h"
#include "otlp.h"
#include "reqid.h"
#include "server.h"
#include "shlo/version.h"

enum { QUEUE_MAX = 256, SEND_TIMEOUT_S = 5 };

typedef struct item {
  struct item *next;
  char *json;
} item;

typedef struct srv_otlp {
  FILE *file;              /* file:PATH, or NULL */
  char host[256], port[8], path[512]; /* http:// */
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t wake;
  item *head, *tail;
  int queued;
  bool stopping;
  uint64_t sent, failed, dropped; /* under lock */
} srv_otlp;

/* ---- rendering ---- */

static void attr_str(strbuf *b, bool *first, const char *key, const char *v) {
  if (!v || !*v) return;
  shlo__sb_puts(b, *first ? "" : ",");
  *first = false;
  shlo__sb_puts(b, "{\"key\":");
  shlo__json_str(b, key);
  shlo__sb_puts(b, ",\"value\":{\"stringValue\":");
  shlo__json_str(b, v);
  shlo__sb_puts(b, "}}");
}

static void attr_int(strbuf *b, bool *first, const char *key, long long v) {
  shlo__sb_puts(b, *first ? "" : ",");
  *first = false;
  shlo__sb_puts(b, "{\"key\":");
  shlo__json_str(b, key);
  /* OTLP/JSON writes 64-bit integers as strings */
  shlo__sb_printf(b, ",\"value\":{\"intValue\":\"%lld\"}}", v);
}

typedef struct render {
  strbuf *b;
  const srv_otlp_about *a;
  const char *trace_id, *root_id, *parent_id;
  int64_t wall_minus_mono; /* ns: a span's wall time = its t + this */
  int n;
} render;

static void put_span(const shlo_trace_span_view *v, void *arg) {
  render *r = arg;
  strbuf *b = r->b;
  bool root = !strcmp(v->cat, "request");
  char id[17];
  if (root) snprintf(id, sizeof id, "%s", r->root_id);
  else srv_hex_random(id, 16);
  shlo__sb_puts(b, r->n++ ? ",{" : "{");
  shlo__sb_printf(b, "\"traceId\":\"%s\",\"spanId\":\"%s\"", r->trace_id, id);
  const char *parent = root ? r->parent_id : r->root_id;
  if (parent && *parent) shlo__sb_printf(b, ",\"parentSpanId\":\"%s\"", parent);
  shlo__sb_puts(b, ",\"name\":");
  shlo__json_str(b, root && r->a->route ? r->a->route : v->name);
  shlo__sb_printf(b, ",\"kind\":%d,\"startTimeUnixNano\":\"%lld\","
                  "\"endTimeUnixNano\":\"%lld\",\"attributes\":[", root ? 2 : 1,
                  (long long)((int64_t)v->t0_ns + r->wall_minus_mono),
                  (long long)((int64_t)v->t1_ns + r->wall_minus_mono));
  bool first = true;
  attr_str(b, &first, "shlo.request_id", r->a->request_id);
  attr_str(b, &first, "shlo.team", r->a->team);
  attr_str(b, &first, "shlo.category", v->cat);
  attr_int(b, &first, "thread.id", v->tid);
  if (*v->op) {
    attr_str(b, &first, "shlo.op", v->op);
    attr_int(b, &first, "code.lineno", v->line);
  }
  if (root) {
    attr_str(b, &first, "http.route", r->a->route);
    attr_str(b, &first, "shlo.module", r->a->module);
    attr_str(b, &first, "shlo.trace_id", r->a->key);
    attr_int(b, &first, "http.response.status_code", r->a->status);
  }
  shlo__sb_puts(b, "]}");
}

static int64_t ns_of(clockid_t c) {
  struct timespec ts;
  clock_gettime(c, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The ExportTraceServiceRequest of t, malloc'd (NULL: out of memory). */
static char *render_request(shlo_trace *t, const srv_otlp_about *a) {
  char trace_id[33], root_id[17];
  const char *parent = "";
  if (a->ctx) {
    snprintf(trace_id, sizeof trace_id, "%s", a->ctx->trace_id);
    snprintf(root_id, sizeof root_id, "%s", a->ctx->span_id);
    parent = a->ctx->valid ? a->ctx->parent_id : "";
  } else {
    snprintf(trace_id, sizeof trace_id, "%s", a->key);
    srv_hex_random(root_id, 16);
  }
  strbuf b = {0};
  shlo__sb_puts(&b, "{\"resourceSpans\":[{\"resource\":{\"attributes\":[");
  bool first = true;
  attr_str(&b, &first, "service.name", "shlo-server");
  attr_str(&b, &first, "service.version", SHLO_VERSION_STRING);
  shlo__sb_puts(&b, "]},\"scopeSpans\":[{\"scope\":{\"name\":\"shlo-server\"},"
                    "\"spans\":[");
  render r = {&b, a, trace_id, root_id, parent,
              ns_of(CLOCK_REALTIME) - ns_of(CLOCK_MONOTONIC), 0};
  shlo_trace_each(t, put_span, &r);
  shlo__sb_puts(&b, "]}]}]}");
  return shlo__sb_take(&b);
}

/* ---- sending ---- */

/* POST json to the collector: true on a 2xx answer. */
static bool post(const srv_otlp *o, const char *json) {
  struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *ai = NULL;
  if (getaddrinfo(o->host, o->port, &hints, &ai) || !ai) return false;
  int fd = socket(ai->ai_family, SOCK_STREAM, 0);
  struct timeval tv = {.tv_sec = SEND_TIMEOUT_S};
  bool ok = fd >= 0 &&
            !setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) &&
            !setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) &&
            !connect(fd, ai->ai_addr, ai->ai_addrlen);
  freeaddrinfo(ai);
  char head[1024];
  size_t n = strlen(json);
  int h = snprintf(head, sizeof head,
                   "POST %s HTTP/1.1\r\nHost: %s:%s\r\nContent-Type: "
                   "application/json\r\nContent-Length: %zu\r\nConnection: "
                   "close\r\n\r\n", o->path, o->host, o->port, n);
  ok = ok && h > 0 && (size_t)h < sizeof head &&
       send(fd, head, (size_t)h, MSG_NOSIGNAL) == h;
  for (size_t off = 0; ok && off < n;) {
    ssize_t w = send(fd, json + off, n - off, MSG_NOSIGNAL);
    if (w <= 0) ok = false;
    else off += (size_t)w;
  }
  /* the status line, then the rest read to the end (closing with bytes
   * unread would reset the collector's connection as it answers) */
  char buf[4096];
  size_t got = 0;
  for (ssize_t r; ok && got < sizeof buf &&
                  (r = recv(fd, buf + got, sizeof buf - got, 0)) > 0;)
    got += (size_t)r;
  ok = ok && got >= 12 && !strncmp(buf, "HTTP/1.", 7) && buf[9] == '2';
  while (ok && recv(fd, buf, sizeof buf, 0) > 0) {
  }
  if (fd >= 0) close(fd);
  return ok;
}

static bool send_one(srv_otlp *o, const char *json) {
  if (!o->file) return post(o, json);
  return fputs(json, o->file) != EOF && fputc('\n', o->file) != EOF &&
         fflush(o->file) == 0;
}

static void *exporter(void *arg) {
  srv_otlp *o = arg;
  pthread_mutex_lock(&o->lock);
  for (;;) {
    while (!o->head && !o->stopping) pthread_cond_wait(&o->wake, &o->lock);
    item *it = o->head;
    if (!it) break; /* stopping, and nothing left */
    o->head = it->next;
    if (!o->head) o->tail = NULL;
    o->queued--;
    pthread_mutex_unlock(&o->lock);
    bool ok = send_one(o, it->json);
    free(it->json);
    free(it);
    pthread_mutex_lock(&o->lock);
    if (ok) o->sent++;
    else o->failed++;
  }
  pthread_mutex_unlock(&o->lock);
  return NULL;
}

/* "http://HOST[:PORT]/PATH" (PATH defaults to /v1/traces); false when it
 * is not one. */
static bool parse_http(srv_otlp *o, const char *url) {
  if (strncmp(url, "http://", 7)) return false;
  const char *h = url + 7, *slash = strchr(h, '/');
  size_t hl = slash ? (size_t)(slash - h) : strlen(h);
  const char *colon = memchr(h, ':', hl);
  size_t name = colon ? (size_t)(colon - h) : hl;
  size_t port = colon ? hl - name - 1 : 0;
  if (!name || name >= sizeof o->host || port >= sizeof o->port ||
      (colon && !port))
    return false;
  memcpy(o->host, h, name);
  o->host[name] = 0;
  if (colon) memcpy(o->port, colon + 1, port);
  o->port[colon ? port : 0] = 0;
  if (!colon) snprintf(o->port, sizeof o->port, "4318"); /* OTLP/HTTP's */
  for (const char *p = o->port; *p; p++)
    if (*p < '0' || *p > '9') return false;
  const char *path = slash && slash[1] ? slash : "/v1/traces";
  if (strlen(path) >= sizeof o->path || strpbrk(path, " \r\n")) return false;
  snprintf(o->path, sizeof o->path, "%s", path);
  return true;
}

int srv_otlp_start(srv_server *s) {
  const char *ep = s->cfg.otlp_endpoint;
  if (!ep || !*ep) return 0;
  srv_otlp *o = calloc(1, sizeof *o);
  if (!o) return -1;
  if (!strncmp(ep, "file:", 5)) {
    if (!(o->file = fopen(ep + 5, "a"))) {
      fprintf(stderr, "shlo-server: --otlp-endpoint %s: %s\n", ep,
              strerror(errno));
      free(o);
      return -1;
    }
  } else if (!parse_http(o, ep)) {
    fprintf(stderr, "shlo-server: --otlp-endpoint %s: not file:PATH or "
                    "http://HOST[:PORT][/PATH]\n", ep);
    free(o);
    return -1;
  }
  pthread_mutex_init(&o->lock, NULL);
  pthread_cond_init(&o->wake, NULL);
  if (pthread_create(&o->thread, NULL, exporter, o)) {
    fprintf(stderr, "shlo-server: cannot start the OTLP exporter thread\n");
    pthread_mutex_destroy(&o->lock);
    pthread_cond_destroy(&o->wake);
    if (o->file) fclose(o->file);
    free(o);
    return -1;
  }
  s->otlp = o;
  return 0;
}

void srv_otlp_stop(srv_server *s) {
  srv_otlp *o = s->otlp;
  if (!o) return;
  pthread_mutex_lock(&o->lock);
  o->stopping = true;
  pthread_cond_signal(&o->wake);
  pthread_mutex_unlock(&o->lock);
  pthread_join(o->thread, NULL);
  pthread_mutex_destroy(&o->lock);
  pthread_cond_destroy(&o->wake);
  if (o->file) fclose(o->file);
  free(o);
  s->otlp = NULL;
}

void srv_otlp_export(srv_server *s, shlo_trace *t, const srv_otlp_about *a) {
  srv_otlp *o = s->otlp;
  if (!o) return;
  item *it = malloc(sizeof *it);
  char *json = it ? render_request(t, a) : NULL;
  pthread_mutex_lock(&o->lock);
  if (!json || o->queued >= QUEUE_MAX || o->stopping) {
    o->dropped++;
    pthread_mutex_unlock(&o->lock);
    free(json);
    free(it);
    return;
  }
  it->json = json;
  it->next = NULL;
  if (o->tail) o->tail->next = it;
  else o->head = it;
  o->tail = it;
  o->queued++;
  pthread_cond_signal(&o->wake);
  pthread_mutex_unlock(&o->lock);
}

void srv_otlp_metrics(srv_server *s, strbuf *b) {
  srv_otlp *o = s->otlp;
  if (!o) return;
  pthread_mutex_lock(&o->lock);
  uint64_t sent = o->sent, failed = o->failed, dropped = o->dropped;
  int queued = o->queued;
  pthread_mutex_unlock(&o->lock);
  shlo__sb_printf(b, "# HELP shlo_otlp_exports_total Traces exported as "
                  "OTLP/JSON, by result (dropped: the queue was full).\n"
                  "# TYPE shlo_otlp_exports_total counter\n"
                  "shlo_otlp_exports_total{result=\"sent\"} %llu\n"
                  "shlo_otlp_exports_total{result=\"failed\"} %llu\n"
                  "shlo_otlp_exports_total{result=\"dropped\"} %llu\n"
                  "# HELP shlo_otlp_queued Traces waiting for the OTLP "
                  "exporter.\n# TYPE shlo_otlp_queued gauge\n"
                  "shlo_otlp_queued %d\n", (unsigned long long)sent,
                  (unsigned long long)failed, (unsigned long long)dropped,
                  queued);
}
