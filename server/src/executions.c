/* SPDX-License-Identifier: Apache-2.0 */
/* Asynchronous executions: the table, their life (queued, running, ended,
 * forgotten), the state routes and the sweeps.  The streaming routes
 * (infeed / outfeed / channel connections) are in stream_http.c; both
 * share stream_int.h.  Threads: see executions.h. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "executions.h"
#include "stream_int.h"
#include "core/strbuf.h"
#include "json_write.h"

static const char *const state_names[X_N_STATES] = {
    "queued", "running", "succeeded", "failed", "canceled"};

const char *x_state_name(x_state st) { return state_names[st]; }

/* ---- waking the loop ---- */

/* Any thread: something about x changed (a queue moved, the job started or
 * ended); the loop resumes x's waiting connections. */
void x_wake(srv_execution *x) {
  atomic_store(&x->dirty, 1);
  if (!atomic_load(&x->owner->stopping)) uv_async_send(&x->owner->wake);
}

static void on_feed_change(void *ctx) { x_wake(ctx); }

/* Loop: resume every connection suspended on x; each looks again. */
void x_resume_all(srv_execution *x) {
  for (int i = 0; i < x->n_waiting; i++) {
    srv_request *r = x->waiting[i];
    r->stream->waiting = false;
    srv_unwatch_gone(r);
    MHD_resume_connection(r->conn);
  }
  x->n_waiting = 0;
}

/* Loop: suspend r's connection until x changes (or the sweep wakes it). */
bool x_wait(srv_execution *x, srv_request *r, bool watch_gone) {
  if (r->stream->waiting) return true;
  if (x->n_waiting == x->cap_waiting) {
    int cap = x->cap_waiting ? 2 * x->cap_waiting : 4;
    srv_request **w = realloc(x->waiting, (size_t)cap * sizeof *w);
    if (!w) return false;
    x->waiting = w;
    x->cap_waiting = cap;
  }
  x->waiting[x->n_waiting++] = r;
  r->stream->waiting = true;
  MHD_suspend_connection(r->conn);
  if (watch_gone) srv_watch_gone(r);
  return true;
}

static void unwait(srv_execution *x, srv_request *r) {
  for (int i = 0; i < x->n_waiting; i++)
    if (x->waiting[i] == r) {
      x->waiting[i] = x->waiting[--x->n_waiting];
      r->stream->waiting = false;
      return;
    }
}

static void on_wake(uv_async_t *a) {
  srv_execs *t = a->data;
  bool any = false;
  for (srv_execution *x = t->list; x; x = x->next)
    if (atomic_exchange(&x->dirty, 0) && x->n_waiting) {
      x_resume_all(x);
      any = true;
    }
  if (any) srv_http_pump(t->s);
  srv_binary_streams_pump(t->s);
}

/* ---- the queues (worker thread at bind, loop later) ---- */

static shlo_feed *feed_make(srv_execution *x) {
  shlo_feed *q = shlo_feed_new();
  if (!q) return NULL;
  const srv_config *c = &x->owner->s->cfg;
  shlo_feed_set_bounds(q, (int)c->stream_queue_values,
                       (size_t)c->stream_queue_bytes);
  shlo_feed_set_notify(q, on_feed_change, x);
  return q;
}

/* The host channel queue (id, direction), made on first use by the
 * program or a client; NULL when out of memory or past X_MAX_CHANS. */
shlo_feed *x_channel(srv_execution *x, int64_t id, bool to_host) {
  shlo_feed *q = NULL;
  pthread_mutex_lock(&x->lock);
  for (int i = 0; i < x->n_chans && !q; i++)
    if (x->chans[i].id == id && x->chans[i].to_host == to_host)
      q = x->chans[i].q;
  if (!q && x->n_chans < X_MAX_CHANS && (q = feed_make(x))) {
    x->chans[x->n_chans].id = id;
    x->chans[x->n_chans].to_host = to_host;
    x->chans[x->n_chans++].q = q;
  }
  pthread_mutex_unlock(&x->lock);
  return q;
}

static shlo_feed *host_channel(void *ctx, int64_t channel, bool to_host) {
  return x_channel(ctx, channel, to_host);
}

static void feeds_free(shlo_feed **f, int n) {
  for (int k = 0; f && k < n; k++) shlo_feed_free(f[k]);
  free(f);
}

shlo_status srv_exec_bind(srv_execution *x, int replicas, int partitions,
                          shlo_grid_opts *g) {
  int n = replicas * partitions;
  shlo_feed **in = calloc((size_t)n, sizeof *in);
  shlo_feed **out = calloc((size_t)n, sizeof *out);
  bool ok = in && out;
  for (int k = 0; ok && k < n; k++)
    ok = (in[k] = feed_make(x)) && (out[k] = feed_make(x));
  if (!ok) {
    feeds_free(in, n);
    feeds_free(out, n);
    return SHLO_ENOMEM;
  }
  pthread_mutex_lock(&x->lock);
  x->replicas = replicas;
  x->partitions = partitions;
  x->n_procs = n;
  x->in = in;
  x->out = out;
  pthread_mutex_unlock(&x->lock);
  atomic_store(&x->bound, true);
  atomic_store(&x->state, X_RUNNING);
  g->infeed = in;
  g->outfeed = out;
  g->host_channel = host_channel;
  g->host_ctx = x;
  x_wake(x);
  return SHLO_OK;
}

/* ---- the table ---- */

static void x_free(srv_execution *x) {
  feeds_free(x->in, x->n_procs);
  feeds_free(x->out, x->n_procs);
  for (int i = 0; i < x->n_chans; i++) shlo_feed_free(x->chans[i].q);
  pthread_mutex_destroy(&x->lock);
  free(x->waiting);
  free(x->result);
  free(x);
}

srv_execution *x_find(srv_execs *t, const char *id) {
  for (srv_execution *x = t->list; x; x = x->next)
    if (!strcmp(x->id, id)) return x;
  return NULL;
}

bool x_final(const srv_execution *x) { return atomic_load(&x->state) >= X_SUCCEEDED; }

void x_cancel(srv_execution *x, int why) {
  srv_request *job = x->job;
  if (!job) return;
  shlo_cancel_set_first(&job->cancel, why);
  /* Still queued: no worker will look at the flag before it gets there,
   * which may be never; its answer is set here, and job_done runs on the
   * next loop turn. */
  if (pool_withdraw(&x->owner->pool, &job->job)) srv_reply_canceled(job);
}

/* A queued execution whose start is overdue (loop): it leaves the queue
 * with `why` as its reason.  False, changing nothing, when a worker has
 * taken it already (it compiles: then it is no longer waiting). */
static bool drop_unstarted(srv_execution *x, int why) {
  srv_request *job = x->job;
  if (!job || !pool_withdraw(&x->owner->pool, &job->job)) return false;
  shlo_cancel_set_first(&job->cancel, why);
  srv_reply_canceled(job);
  if (shlo_cancel_reason(&job->cancel) == SRV_CANCEL_START)
    x->owner->start_timeouts++;
  return true;
}

static int running_of(srv_execs *t, const char *client) {
  int n = 0;
  for (srv_execution *x = t->list; x; x = x->next)
    if (!x_final(x) && (!client || !strcmp(x->client, client))) n++;
  return n;
}

/* The job ended (loop): keep its answer as the execution's result. */
static void job_done(srv_job *j) {
  srv_request *job = (srv_request *)j;
  srv_execution *x = job->exe;
  srv_execs *t = x->owner;
  int why = shlo_cancel_reason(&job->cancel);
  x->result = job->resp;
  x->result_status = job->status;
  job->resp = NULL;
  x_state st = job->status == 200 ? X_SUCCEEDED : why ? X_CANCELED : X_FAILED;
  x->cancel_why = why;
  x->done_ns = srv_now_ns();
  t->ended[st]++;
  size_t bytes = job->len;
  free(job->body);
  free(job);
  x->job = NULL;
  /* its inputs went with the job's end: give a large body's pages back */
  srv_memory_after_request(bytes);
  atomic_store(&x->state, st);
  x_resume_all(x);
  srv_binary_streams_pump(t->s);
}

/* A new id, "ex-" and 16 random hex digits. */
static void new_id(char id[X_ID_LEN]) {
  uint8_t b[8] = {0};
  if (getrandom(b, sizeof b, 0) != (ssize_t)sizeof b) {
    uint64_t t = srv_now_ns();
    memcpy(b, &t, sizeof b);
  }
  snprintf(id, X_ID_LEN, "ex-%02x%02x%02x%02x%02x%02x%02x%02x", b[0], b[1],
           b[2], b[3], b[4], b[5], b[6], b[7]);
}

/* The job request for the body: runs like POST /execute (or, with a
 * module id, like /v1/modules/ID/execute), as the creator's client. */
static srv_request *job_new(const x_start_req *q, srv_execution *x) {
  srv_request *job = calloc(1, sizeof *job);
  if (!job) return NULL;
  job->srv = q->s;
  job->exe = x;
  shlo_cancel_set(&job->cancel, 0);
  job->t0_ns = srv_now_ns();
  job->route = R_EXECUTE;
  if (q->module && strlen(q->module) < SRV_ID_LEN) {
    job->route = R_MODULE_EXEC;
    strcpy(job->id, q->module);
  }
  snprintf(job->method, sizeof job->method, "POST");
  snprintf(job->path, sizeof job->path, "/v1/executions/%s", x->id);
  job->json_type = q->json_type;
  job->body = *q->body; /* taken over */
  job->len = q->len;
  job->cap = q->cap;
  *q->body = NULL;
  memcpy(job->client, q->client, sizeof job->client);
  job->team = q->team; /* quotas and module visibility, as the creator's */
  job->scopes = q->scopes;
  /* the creating request's id goes with the work: its log and audit
   * lines and its trace name it */
  memcpy(job->req_id, x->request_id, sizeof job->req_id);
  srv_trace_ctx_init(&job->tctx, NULL);
  job->job.work = srv_job_execute;
  job->job.done = job_done;
  job->job.lane = SRV_LANE_LONG;
  return job;
}

void x_reply(srv_request *r, int status, char *json) {
  free(r->resp);
  r->resp = json;
  r->resp_len = json ? strlen(json) : 0;
  r->status = status;
  r->resp_text = false;
}

/* {"id":..,"state":..[,"status":http, members of the job's answer]} */
char *x_state_json(const srv_execution *x) {
  strbuf b = {0};
  x_state st = atomic_load(&x->state);
  shlo__sb_puts(&b, "{\"id\":");
  shlo__json_str(&b, x->id);
  shlo__sb_puts(&b, ",\"state\":");
  shlo__json_str(&b, state_names[st]);
  shlo__sb_puts(&b, ",\"request_id\":");
  shlo__json_str(&b, x->request_id);
  if (st == X_CANCELED) {
    static const char *why[] = {"", "shutdown", "client_gone", "delete",
                                "idle", "start_timeout"};
    shlo__sb_puts(&b, ",\"reason\":");
    shlo__json_str(&b, x->cancel_why >= 1 && x->cancel_why <= 5
                           ? why[x->cancel_why] : "unknown");
  }
  shlo__sb_printf(&b, ",\"bytes_in\":%llu,\"bytes_out\":%llu",
                  (unsigned long long)x->bytes_in,
                  (unsigned long long)x->bytes_out);
  const char *res = x->result;
  if (res) {
    while (*res == ' ' || *res == '\n') res++;
    shlo__sb_printf(&b, ",\"status\":%d", x->result_status);
    if (*res == '{' && res[1] != '}') {
      shlo__sb_putc(&b, ',');
      shlo__sb_puts(&b, res + 1); /* its members and its '}' */
      return shlo__sb_take(&b);
    }
  }
  shlo__sb_putc(&b, '}');
  return shlo__sb_take(&b);
}

srv_execution *x_start(const x_start_req *q, int *status, char *msg,
                       size_t msg_len) {
  srv_server *s = q->s;
  srv_execs *t = s->execs;
  long long all = s->cfg.max_executions, mine = s->cfg.max_client_executions;
  *status = 0;
  if (s->draining) {
    *status = 503;
    snprintf(msg, msg_len, "the server is shutting down");
    return NULL;
  }
  if (running_of(t, NULL) >= all || running_of(t, q->client) >= mine) {
    bool total = running_of(t, NULL) >= all;
    *status = 429;
    snprintf(msg, msg_len, "limit %s (%lld) reached: that many executions "
             "are running%s; retry later",
             total ? "max-executions" : "max-client-executions",
             total ? all : mine, total ? "" : " for this client");
    return NULL;
  }
  srv_execution *x = calloc(1, sizeof *x);
  srv_request *job = NULL;
  if (x) {
    x->owner = t;
    pthread_mutex_init(&x->lock, NULL);
    new_id(x->id);
    memcpy(x->client, q->client, sizeof x->client);
    x->team = q->team;
    if (q->request_id)
      snprintf(x->request_id, sizeof x->request_id, "%s", q->request_id);
    x->created_ns = x->activity_ns = srv_now_ns();
    job = job_new(q, x);
  }
  if (!job || pool_submit(&t->pool, &job->job)) {
    bool full = job != NULL;
    if (job) free(job->body);
    free(job);
    if (x) x_free(x);
    *status = full ? 503 : 500;
    snprintf(msg, msg_len, full ? "limit max-queue reached: every worker is "
                                  "busy" : "out of memory");
    return NULL;
  }
  pool_flush(&t->pool); /* one job: hand it over now */
  x->job = job;
  x->next = t->list;
  t->list = x;
  t->created++;
  return x;
}

/* POST /v1/executions: check the bounds, queue the job, answer 202. */
static enum MHD_Result create(srv_request *r) {
  const char *mod =
      MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, "module");
  x_start_req q = {.s = r->srv, .client = r->client, .team = r->team,
                   .scopes = r->scopes, .module = mod, .body = &r->body,
                   .len = r->len, .cap = r->cap, .json_type = r->json_type,
                   .request_id = r->req_id};
  int status;
  char msg[200];
  srv_execution *x = x_start(&q, &status, msg, sizeof msg);
  if (!r->body) r->len = r->cap = 0;
  if (!x) {
    srv_reply_error(r, SHLO_PERR_LIMIT, status, 0, 0, "%s", msg);
    r->retry_after = status != 500;
    return srv_http_reply(r);
  }
  x_reply(r, 202, x_state_json(x));
  return srv_http_reply(r);
}

/* GET (long poll) and DELETE (cancel, then wait for the end) of
 * /v1/executions/{id}.  Called again each time r is resumed. */
static enum MHD_Result state_route(srv_request *r, srv_execution *x,
                                   bool del) {
  srv_stream *st = r->stream;
  if (!st->started) {
    st->started = true;
    st->from_state = atomic_load(&x->state);
    const char *w =
        MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, "wait_ms");
    long long ms = del ? 5000 : w ? strtoll(w, NULL, 10) : 0;
    if (ms > 60000) ms = 60000;
    st->until_ns = ms > 0 ? srv_now_ns() + (uint64_t)ms * 1000000u : 0;
    if (del) x_cancel(x, SRV_CANCEL_DELETE);
  }
  bool changed = del ? x_final(x) : atomic_load(&x->state) != st->from_state;
  bool gone = shlo_cancel_reason(&r->cancel) != 0;
  if (!changed && !gone && st->until_ns && srv_now_ns() < st->until_ns &&
      x_wait(x, r, true))
    return MHD_YES;
  x_reply(r, 200, x_state_json(x));
  return srv_http_reply(r);
}

/* ---- routes ---- */

srv_route srv_execs_match(const char *url, char *id) {
  if (strncmp(url, "/v1/executions", 14)) return R_OTHER;
  const char *p = url + 14;
  if (!*p || !strcmp(p, "/")) return R_EXECS;
  if (*p++ != '/') return R_OTHER;
  const char *slash = strchr(p, '/');
  size_t n = slash ? (size_t)(slash - p) : strlen(p);
  if (n == 0 || n >= X_ID_LEN) return R_OTHER;
  memcpy(id, p, n);
  id[n] = 0;
  if (!slash) return R_EXEC;
  if (!strcmp(slash, "/infeed")) return R_EXEC_INFEED;
  if (!strcmp(slash, "/outfeed")) return R_EXEC_OUTFEED;
  if (!strncmp(slash, "/channels/", 10) && slash[10]) return R_EXEC_CHANNEL;
  return R_OTHER;
}

const char *srv_execs_allowed(srv_route r) {
  switch (r) {
  case R_EXECS: return "GET, POST";
  case R_EXEC: return "GET, DELETE";
  case R_EXEC_INFEED: return "POST";
  case R_EXEC_OUTFEED: return "GET";
  case R_EXEC_CHANNEL: return "GET, POST";
  default: return "";
  }
}

/* The request's stream state and its execution (404 when there is no
 * such execution: then false with the answer set). */
bool x_attach(srv_request *r) {
  if (r->stream) return r->exe != NULL;
  r->stream = calloc(1, sizeof *r->stream);
  if (!r->stream) {
    srv_reply_error(r, SHLO_PERR_RUNTIME, 500, 0, 0, "out of memory");
    return false;
  }
  r->stream->proc = -1;
  srv_execution *x = x_find(r->srv->execs, r->id);
  /* Another team's execution is as unknown as one never started. */
  if (x && x->team != r->team && !(r->scopes & SRV_SCOPE_ADMIN)) x = NULL;
  if (!x) {
    srv_reply_error(r, SHLO_PERR_NOT_FOUND, 404, 0, 0,
                    "no execution %s (never started, or ended more than "
                    "execution-keep-s ago)", r->id);
    return false;
  }
  r->exe = x;
  x->attached++;
  if (r->route != R_EXEC) x->activity_ns = srv_now_ns(); /* a stream */
  return true;
}

/* GET /v1/executions: the caller's team's executions (every one for
 * admin), newest first (creation prepends), as {"executions":[{"id","state"}...]}. */
static enum MHD_Result list_route(srv_request *r) {
  strbuf b = {0};
  shlo__sb_puts(&b, "{\"executions\":[");
  bool first = true;
  for (srv_execution *x = r->srv->execs->list; x; x = x->next) {
    if (x->team != r->team && !(r->scopes & SRV_SCOPE_ADMIN)) continue;
    shlo__sb_puts(&b, first ? "{\"id\":" : ",{\"id\":");
    first = false;
    shlo__json_str(&b, x->id);
    shlo__sb_puts(&b, ",\"state\":");
    shlo__json_str(&b, state_names[atomic_load(&x->state)]);
    shlo__sb_putc(&b, '}');
  }
  shlo__sb_puts(&b, "]}");
  char *json = shlo__sb_take(&b);
  if (!json) {
    srv_reply_error(r, SHLO_PERR_RUNTIME, 500, 0, 0, "out of memory");
    return srv_http_reply(r);
  }
  x_reply(r, 200, json);
  return srv_http_reply(r);
}

enum MHD_Result srv_execs_dispatch(srv_request *r, const char *method) {
  if (r->route == R_EXECS)
    return strcmp(method, "GET") ? create(r) : list_route(r);
  if (!x_attach(r)) return srv_http_reply(r);
  switch (r->route) {
  case R_EXEC:
    return state_route(r, r->exe, !strcmp(method, "DELETE"));
  case R_EXEC_OUTFEED:
    return x_stream_out(r);
  case R_EXEC_CHANNEL:
    if (!strcmp(method, "GET")) return x_stream_out(r);
    return x_upload_end(r);
  default:
    return x_upload_end(r);
  }
}

void srv_execs_request_ended(srv_request *r) {
  srv_execution *x = r->exe;
  if (x) {
    if (r->stream && r->stream->waiting) unwait(x, r);
    x->attached--;
    if (r->route != R_EXEC) x->activity_ns = srv_now_ns();
  }
  if (r->conn_state) r->conn_state->streaming = false; /* next: timed */
  if (r->stream) x_stream_free(r->stream);
  r->stream = NULL;
  r->exe = NULL;
}

/* ---- sweeps ---- */

/* Is a reader suspended waiting for x's program to produce? */
static bool reader_waits(const srv_execution *x) {
  for (int i = 0; i < x->n_waiting; i++)
    if (x->waiting[i]->stream->reader) return true;
  return false;
}

/* Is a stream (a reader, or an upload waiting for the program's start)
 * suspended on x?  A long poll of its state is not one. */
static bool stream_waits(const srv_execution *x) {
  for (int i = 0; i < x->n_waiting; i++)
    if (x->waiting[i]->route != R_EXEC) return true;
  return false;
}

/* A queued execution (loop): one that nobody fed or drained for
 * execution-idle-ms is idle, as a running one would be; one that waited
 * execution-start-timeout-s for a worker has missed its start.  Either
 * leaves the queue, so that an abandoned execution holds its input only
 * that long.  (One that a worker took, still compiling, is left alone.) */
static void sweep_queued(srv_execution *x, uint64_t now, bool stream) {
  const srv_config *c = &x->owner->s->cfg;
  uint64_t idle = (uint64_t)c->execution_idle_ms * 1000000u;
  uint64_t start = (uint64_t)c->execution_start_timeout_s * 1000000000u;
  if (atomic_load(&x->state) != X_QUEUED) return;
  if (now - x->created_ns > start) drop_unstarted(x, SRV_CANCEL_START);
  else if (!stream && now - x->activity_ns > idle)
    drop_unstarted(x, SRV_CANCEL_IDLE); /* no stream waits for it */
}

/* Every 20 ms: resume waiters whose time is up or whose client left;
 * cancel idle executions; forget old finished ones. */
static void on_sweep(uv_timer_t *tm) {
  srv_execs *t = tm->data;
  srv_server *s = t->s;
  uint64_t now = srv_now_ns();
  uint64_t idle = (uint64_t)s->cfg.execution_idle_ms * 1000000u;
  uint64_t keep = (uint64_t)s->cfg.execution_keep_s * 1000000000u;
  bool pump = false;
  for (srv_execution **px = &t->list, *x; (x = *px);) {
    /* who waits, seen before the resume below empties the list (the
     * resumed wait again at the next pump) */
    bool reader = reader_waits(x), stream = stream_waits(x), due = false;
    for (int i = 0; i < x->n_waiting; i++) {
      const srv_request *w = x->waiting[i];
      due |= shlo_cancel_reason(&w->cancel) ||
             (w->stream->until_ns && now >= w->stream->until_ns);
      /* an upload held back by a full queue (or an unstarted program) is
       * not idle: its stream-idle-timeout-s clock waits too */
      if (w->conn_state && w->conn_state->streaming)
        w->conn_state->since_ns = now;
    }
    if (due) {
      x_resume_all(x);
      pump = true;
    }
    if (!x->seen_running && atomic_load(&x->state) == X_RUNNING) {
      x->seen_running = true; /* the idle clock starts with the run */
      x->activity_ns = now;
    }
    if (x->seen_running && x->job && !x_final(x) && !reader &&
        now - x->activity_ns > idle)
      x_cancel(x, SRV_CANCEL_IDLE);
    if (!x->seen_running && x->job) sweep_queued(x, now, stream);
    if (x_final(x) && !x->attached && now - x->done_ns >= keep) {
      *px = x->next;
      x_free(x);
      continue;
    }
    px = &x->next;
  }
  if (pump) srv_http_pump(s);
  srv_binary_streams_pump(s); /* readers waiting keep their executions alive */
}

/* The executions' pool delivered a batch (loop): one MHD pass answers
 * what job_done resumed; nothing once the module stops. */
static void on_pool_drained(void *arg) {
  srv_execs *t = arg;
  if (!atomic_load(&t->stopping)) srv_http_pump(t->s);
}

static void on_closed(uv_handle_t *h);

/* The pool's async handle is closed: one handle fewer to wait for. */
static void on_pool_closed(uv_handle_t *h) {
  srv_pool *p = h->data;
  h->data = (char *)p - offsetof(srv_execs, pool);
  on_closed(h);
}

int srv_execs_start(srv_server *s) {
  srv_execs *t = calloc(1, sizeof *t);
  if (!t) return -1;
  t->s = s;
  /* Admission is max-executions' (x_start); the pool queues whatever it
   * admitted, as many as it may be. */
  if (pool_init(&t->pool, s->loop, (int)s->cfg.execution_workers, 1 << 30,
                0, on_pool_drained, t)) {
    fprintf(stderr, "shlo-server: cannot start %lld execution worker "
            "threads\n", (long long)s->cfg.execution_workers);
    free(t); /* the process exits: threads started are not joined */
    return -1;
  }
  t->pool.closed = on_pool_closed;
  if (uv_async_init(s->loop, &t->wake, on_wake)) {
    free(t);
    return -1;
  }
  t->wake.data = t;
  uv_timer_init(s->loop, &t->sweep);
  t->sweep.data = t;
  uv_timer_start(&t->sweep, on_sweep, 20, 20);
  s->execs = t;
  return 0;
}

int srv_execs_cancel_all(srv_server *s, int why) {
  int n = 0;
  for (srv_execution *x = s->execs ? s->execs->list : NULL; x; x = x->next)
    if (x->job) {
      x_cancel(x, why);
      n++;
    }
  return n;
}

bool srv_execs_busy(srv_server *s) {
  for (srv_execution *x = s->execs ? s->execs->list : NULL; x; x = x->next)
    if (x->job) return true;
  return false;
}

static void on_closed(uv_handle_t *h) {
  srv_execs *t = h->data;
  if (--t->open_handles) return;
  while (t->list) {
    srv_execution *x = t->list;
    t->list = x->next;
    x_free(x);
  }
  free(t);
}

void srv_execs_stop(srv_server *s) {
  srv_execs *t = s->execs;
  if (!t) return;
  atomic_store(&t->stopping, true);
  /* Nothing runs any more (the drain waited for srv_execs_busy): this
   * joins sleeping threads. */
  pool_stop(&t->pool);
  for (srv_execution *x = t->list; x; x = x->next) x_resume_all(x);
  uv_timer_stop(&t->sweep);
  t->open_handles = 3;
  uv_close((uv_handle_t *)&t->wake, on_closed);
  uv_close((uv_handle_t *)&t->sweep, on_closed);
  s->execs = NULL;
}

void srv_execs_metrics(srv_server *s, strbuf *b) {
  srv_execs *t = s->execs;
  if (!t) return;
  uint64_t now[X_N_STATES] = {0};
  for (srv_execution *x = t->list; x; x = x->next) now[atomic_load(&x->state)]++;
  shlo__sb_puts(b, "# HELP shlo_async_executions Asynchronous executions in the "
                   "table by state (finished ones until execution-keep-s)\n"
                   "# TYPE shlo_async_executions gauge\n");
  for (int i = 0; i < X_N_STATES; i++)
    shlo__sb_printf(b, "shlo_async_executions{state=\"%s\"} %llu\n", state_names[i],
                    (unsigned long long)now[i]);
  shlo__sb_puts(b, "# HELP shlo_async_executions_ended_total Asynchronous "
                   "executions that ended, by final state\n"
                   "# TYPE shlo_async_executions_ended_total counter\n");
  for (int i = X_SUCCEEDED; i < X_N_STATES; i++)
    shlo__sb_printf(b, "shlo_async_executions_ended_total{state=\"%s\"} %llu\n",
                    state_names[i], (unsigned long long)t->ended[i]);
  shlo__sb_printf(b, "# HELP shlo_async_executions_created_total Asynchronous "
                     "executions started\n"
                     "# TYPE shlo_async_executions_created_total counter\n"
                     "shlo_async_executions_created_total %llu\n"
                     "# HELP shlo_stream_bytes_total Tensor bytes streamed "
                     "into (infeed, host recv) and out of (outfeed, host "
                     "send) executions\n"
                     "# TYPE shlo_stream_bytes_total counter\n"
                     "shlo_stream_bytes_total{direction=\"in\"} %llu\n"
                     "shlo_stream_bytes_total{direction=\"out\"} %llu\n",
                  (unsigned long long)t->created,
                  (unsigned long long)t->bytes_in,
                  (unsigned long long)t->bytes_out);
  int queued, running;
  pool_depth(&t->pool, &queued, &running);
  shlo__sb_printf(b, "# HELP shlo_execution_workers Asynchronous executions' "
                     "own workers (execution-workers): running a job (busy), "
                     "or not (idle), and jobs waiting for one (queued)\n"
                     "# TYPE shlo_execution_workers gauge\n"
                     "shlo_execution_workers{state=\"busy\"} %d\n"
                     "shlo_execution_workers{state=\"idle\"} %d\n"
                     "shlo_execution_workers{state=\"queued\"} %d\n"
                     "# HELP shlo_execution_start_timeouts_total Asynchronous "
                     "executions that ended unstarted "
                     "(execution-start-timeout-s)\n"
                     "# TYPE shlo_execution_start_timeouts_total counter\n"
                     "shlo_execution_start_timeouts_total %llu\n",
                  running, t->pool.n_threads - running, queued,
                  (unsigned long long)t->start_timeouts);
}
