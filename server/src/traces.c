/* SPDX-License-Identifier: Apache-2.0 */
/* Kept traces (traces.h): a list, oldest first, under one lock; a put
 * drops from the old end past trace-keep, trace-keep-bytes or
 * trace-keep-s.  A trace is kept as its spans, sealed (names copied out
 * of the executable), and rendered as JSON only when someone asks for it:
 * an execution pays for recording, not for formatting.  Lookups walk the
 * list: it holds trace-keep entries (256 by default), and a lookup is a
 * person opening a trace. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/strbuf.h"
#include "json_write.h"
#include "reqid.h"
#include "server.h"
#include "otlp.h"
#include "traces.h"

typedef struct kept {
  struct kept *next;
  char key[SRV_TRACE_KEY_LEN];
  const void *team;    /* srv_team: teams live as long as the server */
  uint64_t at_ns;
  shlo_trace *trace;   /* sealed */
  size_t len;          /* bytes held, for trace-keep-bytes */
  /* what otherData will say, copied as it was (formatted on a GET) */
  const char *protocol; /* static */
  char request_id[SRV_REQ_ID_LEN];
  char team_name[SRV_TEAM_NAME_LEN];
  char route[160], module[SRV_ID_LEN];
  int status;
  bool has_ctx;
  srv_trace_ctx ctx;
} kept;

enum { SPARE_MAX = 32 };

typedef struct srv_traces {
  pthread_mutex_t lock;
  kept *head, *tail;   /* oldest first */
  int64_t n, bytes;
  uint64_t recorded, evicted;
  /* dropped records with their traces, for the next traced requests:
   * at 100% sampling each request takes the record the last one let go,
   * so tracing allocates nothing once trace-keep records exist */
  kept *spare[SPARE_MAX];
  int n_spare;
} srv_traces;

int srv_traces_start(srv_server *s) {
  srv_traces *t = calloc(1, sizeof *t);
  if (!t) return -1;
  pthread_mutex_init(&t->lock, NULL);
  s->traces = t;
  return 0;
}

static void kept_free(kept *k) {
  shlo_trace_free(k->trace);
  free(k);
}

void srv_traces_stop(srv_server *s) {
  srv_traces *t = s->traces;
  if (!t) return;
  for (kept *k = t->head, *next; k; k = next) {
    next = k->next;
    kept_free(k);
  }
  for (int i = 0; i < t->n_spare; i++) kept_free(t->spare[i]);
  pthread_mutex_destroy(&t->lock);
  free(t);
  s->traces = NULL;
}

bool srv_trace_wanted(const srv_server *s, bool asked) {
  if (asked) return true;
  int64_t ppm = s->cfg.trace_sample_ppm;
  if (ppm <= 0) return false;
  if (ppm >= 1000000) return true;
  char hex[9];
  srv_hex_random(hex, 8);
  return (int64_t)(strtoul(hex, NULL, 16) % 1000000u) < ppm;
}

bool srv_trace_begin(const srv_server *s, srv_trace *tr, uint64_t t0_ns) {
  srv_traces *ts = s->traces;
  pthread_mutex_lock(&ts->lock);
  kept *k = ts->n_spare ? ts->spare[--ts->n_spare] : NULL;
  pthread_mutex_unlock(&ts->lock);
  tr->rec = k;
  if (k) {
    tr->t = k->trace;
    k->trace = NULL;
    shlo_trace_reset(tr->t);
  } else {
    tr->t = shlo_trace_new((int)s->cfg.trace_max_spans);
  }
  if (!tr->t) return false;
  shlo_trace_set_origin(tr->t, t0_ns);
  srv_hex_random(tr->key, 32);
  return true;
}

uint64_t srv_trace_span(srv_trace *tr, const char *name, uint64_t t0_ns) {
  uint64_t now = srv_now_ns();
  if (tr && tr->t) shlo_trace_span(tr->t, name, "server", t0_ns, now, NULL);
  return now;
}

char *srv_json_add_trace_id(char *json, const char *key) {
  if (!json) return NULL;
  /* memcpy, not snprintf: every traced answer passes here, and
   * printf's format machinery cost more than the rest of the answer's
   * tracing together (callgrind, small program) */
  size_t n = strlen(json);
  while (n && json[n - 1] != '}') n--;
  if (!n) return json;
  static const char member[] = "\"trace_id\":\"";
  size_t k = strlen(key);
  bool empty = n >= 2 && json[n - 2] == '{';
  size_t add = (empty ? 0 : 1) + sizeof member - 1 + k + 2;
  char *out = realloc(json, n + add + 1);
  if (!out) {
    free(json);
    return NULL;
  }
  char *p = out + n - 1; /* over the closing brace */
  if (!empty) *p++ = ',';
  memcpy(p, member, sizeof member - 1);
  p += sizeof member - 1;
  memcpy(p, key, k);
  p += k;
  memcpy(p, "\"}", 3);
  return out;
}

void srv_trace_discard(srv_trace *tr) {
  shlo_trace_free(tr->t);
  tr->t = NULL;
  free(tr->rec);
  tr->rec = NULL;
}

static void json_member(strbuf *b, const char *key, const char *v) {
  if (!v || !*v) return;
  shlo__sb_putc(b, ',');
  shlo__json_str(b, key);
  shlo__sb_putc(b, ':');
  shlo__json_str(b, v);
}

/* otherData's members: who asked, and the W3C trace the spans belong
 * to (the caller's span their parent when a traceparent came). */
static char *about_json(const kept *k) {
  strbuf b = {0};
  shlo__sb_puts(&b, "\"trace_id\":");
  shlo__json_str(&b, k->key);
  shlo__sb_printf(&b, ",\"status\":%d", k->status);
  json_member(&b, "protocol", k->protocol);
  json_member(&b, "request_id", k->request_id);
  json_member(&b, "team", k->team_name);
  json_member(&b, "route", k->route);
  json_member(&b, "module", k->module);
  if (k->has_ctx) {
    char tp[56];
    srv_trace_ctx_header(&k->ctx, tp);
    json_member(&b, "w3c_trace_id", k->ctx.trace_id);
    json_member(&b, "w3c_span_id", k->ctx.span_id);
    json_member(&b, "w3c_parent_span_id", k->ctx.parent_id);
    json_member(&b, "traceparent", tp);
  }
  return shlo__sb_take(&b);
}

static void copy_str(char *dst, size_t cap, const char *src) {
  size_t n = src ? strnlen(src, cap - 1) : 0;
  memcpy(dst, src ? src : "", n);
  dst[n] = 0;
}

/* Let a dropped record go, kept with its trace for reuse while the
 * spares have room (locked). */
static void drop(srv_traces *t, kept *k) {
  if (t->n_spare < SPARE_MAX) t->spare[t->n_spare++] = k;
  else kept_free(k);
}

/* Drop from the old end what the limits no longer allow (locked). */
static void trim(srv_traces *t, const srv_config *c, uint64_t now) {
  uint64_t max_age = (uint64_t)c->trace_keep_s * 1000000000u;
  while (t->head && (t->n > c->trace_keep || t->bytes > c->trace_keep_bytes ||
                     now - t->head->at_ns > max_age)) {
    kept *k = t->head;
    t->head = k->next;
    if (!t->head) t->tail = NULL;
    t->n--;
    t->bytes -= (int64_t)k->len;
    t->evicted++;
    drop(t, k);
  }
}

static void keep(srv_server *s, kept *k) {
  srv_traces *t = s->traces;
  pthread_mutex_lock(&t->lock);
  t->recorded++;
  if (t->tail) t->tail->next = k;
  else t->head = k;
  t->tail = k;
  t->n++;
  t->bytes += (int64_t)k->len;
  trim(t, &s->cfg, k->at_ns);
  pthread_mutex_unlock(&t->lock);
}

void srv_trace_finish(srv_server *s, srv_trace *tr, uint64_t t0_ns,
                      const srv_team *team, const srv_trace_about *a) {
  if (!tr->t) return;
  shlo_trace_span(tr->t, a->route ? a->route : "request", "request", t0_ns,
                  srv_now_ns(), NULL);
  kept *k = tr->rec ? tr->rec : malloc(sizeof *k);
  tr->rec = NULL;
  if (!k) {
    srv_trace_discard(tr);
    return;
  }
  shlo_trace_seal(tr->t);
  k->next = NULL;
  memcpy(k->key, tr->key, sizeof k->key);
  k->team = team;
  k->at_ns = srv_now_ns();
  k->trace = tr->t;
  tr->t = NULL;
  k->len = shlo_trace_bytes(k->trace) + sizeof *k;
  k->protocol = a->protocol;
  copy_str(k->request_id, sizeof k->request_id, a->request_id);
  copy_str(k->team_name, sizeof k->team_name, a->team);
  copy_str(k->route, sizeof k->route, a->route);
  copy_str(k->module, sizeof k->module, a->module);
  k->status = a->status;
  k->has_ctx = a->ctx != NULL;
  if (a->ctx) k->ctx = *a->ctx;
  srv_otlp_about o = {.key = k->key, .request_id = k->request_id,
                      .team = k->team_name, .route = k->route,
                      .module = k->module, .ctx = a->ctx,
                      .status = k->status};
  srv_otlp_export(s, k->trace, &o); /* before keep: then others may drop k */
  keep(s, k);
}

char *srv_traces_get(srv_server *s, const char *key,
                     const void *visible_owner) {
  srv_traces *t = s->traces;
  char *out = NULL;
  pthread_mutex_lock(&t->lock);
  trim(t, &s->cfg, srv_now_ns());
  for (kept *k = t->head; k; k = k->next)
    if (!strcmp(k->key, key)) {
      /* another team's trace answers as a missing one */
      if (!visible_owner || k->team == visible_owner) {
        char *about = about_json(k);
        out = about ? shlo_trace_json(k->trace, about) : NULL;
        free(about);
      }
      break;
    }
  pthread_mutex_unlock(&t->lock);
  return out;
}

void srv_traces_answer(srv_request *r) {
  char *json = srv_traces_get(r->srv, r->id, srv_visible_owner(r));
  if (!json) {
    srv_reply_error(r, SHLO_PERR_NOT_FOUND, 404, 0, 0,
                    "no trace %s (never recorded, another team's, or no "
                    "longer kept: trace-keep, trace-keep-s)", r->id);
    return;
  }
  free(r->resp);
  r->resp = json;
  r->resp_len = strlen(json);
  r->status = 200;
  r->resp_text = false;
}

void srv_traces_metrics(srv_server *s, strbuf *b) {
  srv_traces *t = s->traces;
  if (!t) return;
  pthread_mutex_lock(&t->lock);
  int64_t n = t->n, bytes = t->bytes;
  uint64_t rec = t->recorded, ev = t->evicted;
  pthread_mutex_unlock(&t->lock);
  shlo__sb_printf(b,
                  "# HELP shlo_traces_recorded_total Execution traces "
                  "recorded (asked for or sampled).\n"
                  "# TYPE shlo_traces_recorded_total counter\n"
                  "shlo_traces_recorded_total %llu\n"
                  "# HELP shlo_traces_evicted_total Kept traces dropped for "
                  "trace-keep, trace-keep-bytes or trace-keep-s.\n"
                  "# TYPE shlo_traces_evicted_total counter\n"
                  "shlo_traces_evicted_total %llu\n"
                  "# HELP shlo_traces_kept Traces GET /v1/traces/{id} can "
                  "answer now.\n# TYPE shlo_traces_kept gauge\n"
                  "shlo_traces_kept %lld\n"
                  "# HELP shlo_traces_kept_bytes Bytes the kept traces "
                  "hold.\n# TYPE shlo_traces_kept_bytes gauge\n"
                  "shlo_traces_kept_bytes %lld\n",
                  (unsigned long long)rec, (unsigned long long)ev,
                  (long long)n, (long long)bytes);
}
