/* SPDX-License-Identifier: Apache-2.0 */
/* The binary protocol listener (PROTOCOL.md part 2) on the server's libuv
 * loop: one uv_tcp_t per connection, frames read by a small state machine
 * that hands each piece a destination -- a header, a payload buffer, or
 * the data of the very tensor an execution will use (read straight from
 * the socket, no copy of the payload) -- and answers written as lists of
 * pieces.  Requests go to the same workers, cache and limits as HTTP.
 * Loop thread only; a bin_job is touched by one worker while it runs. */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "binary.h"
#include "history.h"
#include "modmetrics.h"
#include "reqlog.h"
#include "core/strbuf.h"
#include "core/value.h"

#define STAGE_BYTES 65536
#define DIRECT_MIN 16384          /* pieces this large are read in place */
#define MAX_OUT_BYTES (16u << 20) /* unwritten answers before reads pause */
/* What a queued answer costs beyond its bytes (the write request, its
 * piece list): a flood of 32-byte PONGs is paused by what it holds. */
#define WRITE_COST 256
#define MAX_RUNNING 256           /* running requests before reads pause */
#define MAX_HELLO 65536
#define GATHER_BYTES 4096         /* answers this small go in one write */

typedef enum {
  RD_HEADER,   /* the 32-byte frame header */
  RD_PAYLOAD,  /* a whole small payload into conn->payload */
  RD_EX_FIXED, /* EXECUTE's 72-byte fixed part */
  RD_EX_STRS,  /* its entry name and program */
  RD_EX_VHEAD, /* an input's 16-byte value header */
  RD_EX_DIMS,  /* its dimensions */
  RD_EX_DATA,  /* its data, into the tensor */
  RD_EX_PAD,   /* its padding */
  RD_SKIP      /* the rest of a refused frame */
} rd_state;

struct bin_conn {
  uv_tcp_t tcp;
  srv_server *s;
  int refs;              /* the handle's + one per running job */
  bool closing, hello, reading, draining, goodbye_sent;
  bool stream_paused;    /* an INFEED waits for room: read nothing more */
  const char *held;      /* bytes read but not fed while paused (stage) */
  size_t held_n;
  struct bin_xconn *xs;  /* streaming executions (binary_stream.c) */
  int version;
  const char *token;     /* name of the HELLO's token */
  srv_team *team;        /* its team (the anonymous one without tokens) */
  unsigned scopes;
  char ip[SRV_IP_LEN];   /* the peer's address */
  char client[SRV_COUNT_KEY]; /* its key for the per-client caps */
  bool ip_counted;       /* in s->per_ip */
  /* the frame being read */
  rd_state st;
  char *dst;             /* where the current piece goes (NULL: discard) */
  uint64_t need;         /* bytes of the piece still to come */
  uint64_t left;         /* payload bytes of the frame not yet read */
  bool mid_frame;
  uint64_t last_ns;      /* last byte read */
  shlo_bin_header hdr;
  char *payload;
  bin_job *job;          /* the EXECUTE being read */
  char *strs;            /* its strings */
  uint32_t in_i;         /* its next input */
  shlo_bin_value vh;
  uint64_t dims[SHLO_MAX_RANK];
  char pad[8];
  char stage[STAGE_BYTES];
  uint64_t frame_t0_ns;  /* the frame's first byte (frame-timeout-s) */
  uint64_t paused_ns;    /* reading stopped then (0: reading or never) */
  srv_pending pend;      /* the frame's bytes held (max-pending-body-bytes) */
  uint64_t peak_bytes;   /* most held at once: trim memory after it */
  /* answers */
  uint64_t out_bytes;
  uint64_t out_cost;     /* out_bytes plus WRITE_COST per queued answer */
  uint64_t out_moved_ns; /* the queue last moved (connection-timeout-s) */
  size_t out_q;          /* libuv's write queue size then */
  int running;
  bin_job *jobs;         /* running, for CANCEL and shutdown */
  bin_conn *prev, *next;
};

struct srv_binary {
  uv_tcp_t listener;
  uv_timer_t tick;
  bin_conn *conns;
  int n_conns;
  uint64_t requests[SHLO_BIN_TYPE_END][SHLO_PERR_COUNT + 1]; /* last: ok */
  uint64_t bytes_in, bytes_out;
};

static void conn_close(bin_conn *c);
static void read_start(bin_conn *c);
static void expect(bin_conn *c, rd_state st, void *dst, uint64_t n);

/* ---- writing ---- */

typedef struct write_req {
  uv_write_t req;
  bin_conn *c;
  bin_answer ans;
  uint64_t cost;
} write_req;

/* The frame being read, dropped: its payload, strings and inputs. */
static void drop_frame(bin_conn *c) {
  free(c->payload);
  c->payload = NULL;
  free(c->strs);
  c->strs = NULL;
  if (c->job) bin_job_free(c->job);
  c->job = NULL;
  c->dst = NULL;
}

static void conn_unref(bin_conn *c) {
  if (--c->refs > 0) return;
  drop_frame(c);
  size_t peak = (size_t)c->peak_bytes;
  free(c);
  srv_memory_after_request(peak); /* a big connection's memory goes back */
}

/* Stop reading: the peer does not read its answers, or too many of its
 * requests run.  Every answer counts, PONGs and errors too. */
static void stop_reading(bin_conn *c) {
  if (!c->reading) return;
  uv_read_stop((uv_stream_t *)&c->tcp);
  c->reading = false;
  c->paused_ns = srv_now_ns();
}

static void maybe_pause(bin_conn *c) {
  if (c->reading && !c->closing &&
      (c->out_cost > MAX_OUT_BYTES || c->running >= MAX_RUNNING))
    stop_reading(c);
}

static void maybe_resume(bin_conn *c) {
  if (!c->reading && !c->closing && !c->draining && !c->stream_paused &&
      c->out_cost < MAX_OUT_BYTES / 2 && c->running < MAX_RUNNING / 2)
    read_start(c);
}

static void on_written(uv_write_t *req, int status) {
  write_req *w = (write_req *)req;
  bin_conn *c = w->c;
  c->out_bytes -= w->ans.bytes;
  c->out_cost -= w->cost;
  c->out_moved_ns = srv_now_ns();
  if (status == 0) c->s->bin->bytes_out += w->ans.bytes;
  bin_answer_free(&w->ans);
  free(w);
  if (status) conn_close(c);
  else maybe_resume(c);
  if (c->xs && !c->closing) bin_xpump(c); /* room for more outfeed */
  conn_unref(c);
}

/* Write what the socket takes now, when nothing is queued before it (an
 * answer must not overtake another): most answers fit the socket buffer
 * and then need no write request, nor the poller change libuv makes when
 * one completes.  Returns the bytes still to write (the pieces advanced
 * past what went out), or -1 when the connection failed. */
static int64_t write_now(bin_conn *c, bin_answer *a, int *first) {
  uv_stream_t *st = (uv_stream_t *)&c->tcp;
  *first = 0;
  if (uv_stream_get_write_queue_size(st) > 0) return (int64_t)a->bytes;
  /* A small answer's pieces (header, result, value header, data) go as one
   * buffer: copying a few hundred bytes costs less than the kernel's walk
   * of an iovec per piece. */
  char flat[GATHER_BYTES];
  uv_buf_t one;
  bool gather = a->n_bufs > 1 && a->bytes <= sizeof flat;
  if (gather) {
    size_t off = 0;
    for (int i = 0; i < a->n_bufs; i++) {
      memcpy(flat + off, a->bufs[i].base, a->bufs[i].len);
      off += a->bufs[i].len;
    }
    one = uv_buf_init(flat, (unsigned)off);
  }
  int n = gather ? uv_try_write(st, &one, 1)
                 : uv_try_write(st, a->bufs, (unsigned)a->n_bufs);
  if (n == UV_EAGAIN) return (int64_t)a->bytes;
  if (n < 0) return -1;
  c->s->bin->bytes_out += (uint64_t)n;
  size_t k = (size_t)n;
  while (*first < a->n_bufs && k >= a->bufs[*first].len)
    k -= a->bufs[(*first)++].len;
  if (*first < a->n_bufs) {
    a->bufs[*first].base += k;
    a->bufs[*first].len -= (unsigned)k;
  }
  return (int64_t)(a->bytes - (uint64_t)n);
}

/* Queue an answer (taken over: *a is emptied). */
static void send_answer(bin_conn *c, bin_answer *a) {
  if (c->closing || !a->n_bufs) {
    bin_answer_free(a);
    return;
  }
  int first;
  int64_t left = write_now(c, a, &first);
  if (left <= 0) {
    bin_answer_free(a);
    if (left < 0) conn_close(c);
    return;
  }
  a->bytes = (uint64_t)left;
  write_req *w = calloc(1, sizeof *w);
  if (!w) {
    bin_answer_free(a);
    conn_close(c);
    return;
  }
  w->c = c;
  w->ans = *a;
  w->cost = w->ans.bytes + WRITE_COST;
  memset(a, 0, sizeof *a);
  c->refs++;
  if (!c->out_bytes) c->out_moved_ns = srv_now_ns();
  c->out_bytes += w->ans.bytes;
  c->out_cost += w->cost;
  if (c->out_cost > c->peak_bytes) c->peak_bytes = c->out_cost;
  if (uv_write(&w->req, (uv_stream_t *)&c->tcp, w->ans.bufs + first,
               (unsigned)(w->ans.n_bufs - first), on_written)) {
    c->out_bytes -= w->ans.bytes;
    c->out_cost -= w->cost;
    bin_answer_free(&w->ans);
    free(w);
    conn_unref(c);
    conn_close(c);
    return;
  }
  maybe_pause(c);
}

/* A frame built in one malloc'd buffer. */
static void send_frame(bin_conn *c, void *frame, size_t n) {
  bin_answer a = {0};
  a.bufs = malloc(sizeof *a.bufs);
  a.owned = malloc(sizeof *a.owned);
  if (!a.bufs || !a.owned) {
    free(a.bufs);
    free(a.owned);
    free(frame);
    conn_close(c);
    return;
  }
  a.bufs[0] = uv_buf_init(frame, (unsigned)n);
  a.owned[0] = frame;
  a.n_bufs = a.cap_bufs = a.n_owned = a.cap_owned = 1;
  a.bytes = n;
  send_answer(c, &a);
}

static void send_simple(bin_conn *c, int type, uint64_t id, const void *p,
                        size_t n) {
  char *f = calloc(1, sizeof(shlo_bin_header) + shlo_bin_pad8(n));
  if (!f) {
    conn_close(c);
    return;
  }
  shlo_bin_header h;
  shlo_bin_header_init(&h, c->version ? c->version : SHLO_BIN_VERSION_MAX,
                       type, id, shlo_bin_pad8(n));
  memcpy(f, &h, sizeof h);
  if (n) memcpy(f + sizeof h, p, n);
  send_frame(c, f, sizeof h + shlo_bin_pad8(n));
}

static void count(bin_conn *c, int type, const shlo_proto_error *e) {
  if (type > 0 && type < SHLO_BIN_TYPE_END)
    c->s->bin->requests[type][e ? (int)e->kind : SHLO_PERR_COUNT]++;
}

static void send_error(bin_conn *c, uint64_t id, int type,
                       const shlo_proto_error *e) {
  size_t n;
  void *f = shlo_bin_error_frame(c->version ? c->version
                                            : SHLO_BIN_VERSION_MAX,
                                 id, e, 0, &n);
  count(c, type, e);
  if (f) send_frame(c, f, n);
  else conn_close(c);
}

static void on_shutdown_done(uv_shutdown_t *req, int status) {
  (void)status;
  bin_conn *c = req->data;
  free(req);
  conn_close(c);
  conn_unref(c);
}

/* Send what is queued, then close: after a protocol error (the stream can
 * no longer be trusted), a GOODBYE, or at shutdown. */
static void close_after_writes(bin_conn *c) {
  if (c->closing) return;
  stop_reading(c);
  c->draining = true;
  uv_shutdown_t *req = malloc(sizeof *req);
  if (!req) {
    conn_close(c);
    return;
  }
  req->data = c;
  c->refs++;
  if (uv_shutdown(req, (uv_stream_t *)&c->tcp, on_shutdown_done)) {
    free(req);
    conn_unref(c);
    conn_close(c);
  }
}

static void fatal(bin_conn *c, shlo_proto_err_kind kind, const char *msg) {
  shlo_proto_error e;
  shlo_proto_fail(&e, kind, "%s", msg);
  send_error(c, c->hdr.id, c->hdr.type, &e);
  close_after_writes(c);
}

/* ---- requests ---- */

static void log_job(srv_server *s, bin_job *b) {
  if (!s->log) return;
  const srv_job *j = &b->job;
  srv_log_rec l = {
      .protocol = "binary", .request_id = b->req_id,
      .team = b->team ? b->team->name : NULL,
      .token = b->conn ? b->conn->token : NULL,
      .method = shlo_bin_type_name(b->type),
      .route = shlo_bin_type_name(b->type), .module = b->module,
      .trace_id = b->trace_key[0] ? b->trace_key : NULL,
      .binary_type = shlo_bin_type_name(b->type), .binary_id = b->id,
      .status = b->failed ? (b->err.http ? b->err.http : 500) : 200,
      .error_kind = b->failed ? shlo_proto_err_name(b->err.kind) : NULL,
      .duration_ms = (double)(srv_now_ns() - b->t0_ns) / 1e6,
      .queue_ms = j->start_ns > j->submit_ns && j->submit_ns
                      ? (double)(j->start_ns - j->submit_ns) / 1e6 : 0,
      .exec_ms = b->executed ? b->exec_s * 1000 : 0,
      .bytes_in = b->input_bytes, .bytes_out = b->ans.bytes};
  srv_log_request(s, &l);
}

/* The team's figures and the audit line of a finished request. */
static void account_job(srv_server *s, bin_job *b) {
  int status = b->failed ? (b->err.http ? b->err.http : 500) : 200;
  srv_team *t = b->team;
  if (t) {
    if (b->refused_quota) t->refused[b->refused_quota - 1]++;
    srv_team_count_status(t, status);
    t->bytes_in += b->input_bytes;
    t->bytes_out += b->ans.bytes;
    if (b->executed) t->exec_s += b->exec_s;
  }
  srv_modmetrics_add(s, b->module, status, b->failed ? (int)b->err.kind : -1,
                     b->executed ? b->exec_s : -1);
  srv_history_request(s, t, status, b->executed ? b->exec_s : -1, b->req_id,
                      shlo_bin_type_name(b->type), b->module,
                      b->failed ? (int)b->err.kind : -1);
  srv_audit_rec a = {
      .protocol = "binary",
      .request_id = b->req_id,
      .trace_id = b->trace_key[0] ? b->trace_key : NULL,
      .team = t ? t->name : NULL,
      .token_name = b->conn ? b->conn->token : NULL,
      .method = shlo_bin_type_name(b->type),
      .route = shlo_bin_type_name(b->type),
      .module = b->module[0] ? b->module : NULL,
      .client = b->conn && b->conn->ip[0] ? b->conn->ip : NULL,
      .status = status,
      .err_kind = b->failed ? (int)b->err.kind : -1,
      .queue_ms = b->job.start_ns > b->job.submit_ns && b->job.submit_ns
                      ? (double)(b->job.start_ns - b->job.submit_ns) / 1e6
                      : 0,
      .exec_ms = b->executed ? b->exec_s * 1000 : 0,
      .total_ms = (double)(srv_now_ns() - b->t0_ns) / 1e6,
      .bytes_in = b->input_bytes,
      .bytes_out = b->ans.bytes};
  srv_audit_write(s, &a);
}

static void unlink_job(bin_conn *c, bin_job *b) {
  if (b->prev) b->prev->next = b->next;
  else c->jobs = b->next;
  if (b->next) b->next->prev = b->prev;
  b->prev = b->next = NULL;
  c->running--;
}

static void maybe_goodbye(bin_conn *c) {
  if (c->draining && !c->running && !c->closing && !c->goodbye_sent) {
    c->goodbye_sent = true;
    send_simple(c, SHLO_BIN_GOODBYE, 0, NULL, 0);
    close_after_writes(c);
  }
}

/* On the loop: a job finished (on a worker or inline). */
static void job_done(srv_job *j) {
  bin_job *b = (bin_job *)j;
  srv_server *s = b->srv;
  bin_conn *c = b->conn;
  if (b->executed) srv_metrics_exec(&s->metrics, b->exec_s);
  if (b->team_held) b->team->in_flight--;
  b->team_held = false;
  srv_metrics_queue_wait(&s->metrics, &b->job);
  if (b->client_counted) srv_client_release(s, b->client);
  b->client_counted = false;
  if (b->failed && bin_answer_error(b)) b->ans.bytes = 0;
  /* Out of memory for the OUTPUT frame: the answer goes without it. */
  if (b->ans.bytes) (void)bin_answer_output(b);
  if (c) count(c, b->type, b->failed ? &b->err : NULL);
  log_job(s, b);
  account_job(s, b);
  if (c) {
    unlink_job(c, b);
    send_answer(c, &b->ans);
    maybe_resume(c);
    maybe_goodbye(c);
    conn_unref(c);
  }
  bin_job_free(b);
}

static bin_job *job_new(bin_conn *c, int type) {
  bin_job *b = calloc(1, sizeof *b);
  if (!b) return NULL;
  b->job.work = bin_job_work;
  b->job.done = job_done;
  b->srv = c->s;
  b->conn = c;
  b->id = c->hdr.id;
  b->type = type;
  b->version = c->version;
  b->t0_ns = srv_now_ns();
  srv_reqid_new(b->req_id);
  b->team = c->team;
  b->scopes = c->scopes;
  shlo_cancel_set(&b->cancel, 0);
  memcpy(b->client, c->client, sizeof b->client);
  return b;
}

static bool id_in_use(bin_conn *c, uint64_t id) {
  for (bin_job *b = c->jobs; b; b = b->next)
    if (b->id == id) return true;
  return false;
}

/* The team's say on a request: its token's scopes (EXECUTE needs
 * execute, COMPILE either scope), its rate and its jobs in flight; a
 * refusal is an ERROR frame of kind limit (quota) or auth (scope). */
static void team_admit(bin_job *b) {
  srv_team *t = b->team;
  unsigned need = b->type == SHLO_BIN_EXECUTE
                      ? SRV_SCOPE_EXECUTE
                      : SRV_SCOPE_EXECUTE | SRV_SCOPE_REGISTER;
  int q = -1, retry = 1;
  if (!(b->scopes & (need | SRV_SCOPE_ADMIN))) {
    shlo_proto_fail(&b->err, SHLO_PERR_AUTH, "this token's scopes do not "
                    "include %s", b->type == SHLO_BIN_EXECUTE ? "execute"
                                                              : "register");
    b->err.http = 403;
    b->failed = true;
    return;
  }
  if (!srv_team_take(t, srv_now_ns(), &retry)) q = SRV_QUOTA_RATE;
  else q = srv_team_admit_job(t);
  if (q >= 0) {
    t->refused[q]++;
    shlo_proto_fail(&b->err, SHLO_PERR_LIMIT, "quota %s (%lld) of team %s "
                    "reached; retry in %d s", srv_quota_name(q),
                    (long long)t->quota.v[q], t->name, retry);
    b->err.http = 429;
    b->failed = true;
    return;
  }
  t->in_flight++;
  b->team_held = true;
  if (t->quota.v[SRV_QUOTA_RUNNING]) b->job.owner = &t->owner;
}

/* Queue a job for a worker in its lane, counted against its client's
 * caps as HTTP's are: false with b->err set when refused. */
static bool submit(srv_server *s, bin_job *b) {
  if (srv_client_full(s, b->client, &b->err)) {
    b->failed = true;
    return false;
  }
  b->client_counted = srv_client_hold(s, b->client, &b->job);
  /* A job has one owner for the pool's running caps: as on HTTP, the
   * team's running quota, when it has one, rules over the client's. */
  if (b->team_held && b->team->quota.v[SRV_QUOTA_RUNNING])
    b->job.owner = &b->team->owner;
  b->job.lane = bin_job_lane(b);
  if (!pool_submit(&s->pool, &b->job)) return true;
  if (b->client_counted) srv_client_release(s, b->client);
  b->client_counted = false;
  b->job.owner = NULL;
  s->metrics.refused_queue++;
  shlo_proto_fail(&b->err, SHLO_PERR_LIMIT, "limit max-queue (%lld): every "
                  "worker is busy; retry later", (long long)s->cfg.max_queue);
  b->err.http = 503;
  b->failed = true;
  return false;
}

/* Hand a complete request to a worker (or run a tiny one right here). */
static void dispatch(bin_conn *c, bin_job *b) {
  srv_server *s = c->s;
  if ((b->ex.flags & SHLO_BIN_EXEC_ASYNC) && !b->failed && !s->draining &&
      b->id && !id_in_use(c, b->id)) {
    bin_xstart(c, b); /* answered at once: nothing runs for the request */
    return;
  }
  if (s->draining) {
    shlo_proto_fail(&b->err, SHLO_PERR_LIMIT, "the server is shutting down");
    b->err.http = 503;
    b->failed = true;
  } else if (b->id == 0 || id_in_use(c, b->id)) {
    shlo_proto_fail(&b->err, SHLO_PERR_INPUT, "request id %llu is %s",
                    (unsigned long long)b->id,
                    b->id ? "still running" : "reserved (use a nonzero id)");
    b->failed = true;
  } else {
    team_admit(b);
  }
  c->refs++;
  c->running++;
  b->next = c->jobs;
  if (c->jobs) c->jobs->prev = b;
  c->jobs = b;
  if (b->failed || (b->type == SHLO_BIN_EXECUTE && bin_job_is_tiny(b))) {
    if (!b->failed) bin_job_work(&b->job);
    job_done(&b->job);
  } else if (!submit(s, b)) {
    job_done(&b->job);
  } else {
    pool_flush(&s->pool);
  }
  maybe_pause(c);
}

/* ---- small messages ---- */

static void on_hello(bin_conn *c) {
  srv_server *s = c->s;
  shlo_bin_hello h;
  if (c->hdr.length < sizeof h) {
    fatal(c, SHLO_PERR_INPUT, "HELLO: payload shorter than 16 bytes");
    return;
  }
  memcpy(&h, c->payload, sizeof h);
  if (h.reserved || h.token_length > c->hdr.length - sizeof h) {
    fatal(c, SHLO_PERR_INPUT, "HELLO: reserved field set or token longer "
                              "than the payload");
    return;
  }
  int v = h.max_version < SHLO_BIN_VERSION_MAX ? h.max_version
                                               : SHLO_BIN_VERSION_MAX;
  if (v < h.min_version || v < SHLO_BIN_VERSION_MIN) {
    char m[128];
    snprintf(m, sizeof m, "no common protocol version: the server speaks "
             "%d..%d", SHLO_BIN_VERSION_MIN, SHLO_BIN_VERSION_MAX);
    fatal(c, SHLO_PERR_INPUT, m);
    return;
  }
  if (s->n_tokens) {
    char auth[MAX_HELLO + 8] = "Bearer ";
    memcpy(auth + 7, c->payload + sizeof h, h.token_length);
    auth[7 + h.token_length] = 0;
    const srv_token *t =
        memchr(auth + 7, 0, h.token_length) ? NULL : srv_auth_find(s, auth);
    c->token = t ? t->name : NULL;
    if (t) {
      c->team = t->team;
      c->scopes = t->scopes;
    }
    if (!c->token) {
      fatal(c, SHLO_PERR_AUTH, "missing or unknown bearer token");
      return;
    }
  }
  /* per-client caps count by token when there are tokens, as HTTP does */
  if (c->token) snprintf(c->client, sizeof c->client, "token:%s", c->token);
  c->hello = true;
  c->version = v;
  shlo_bin_welcome w = {.version = (uint16_t)v,
                        .max_payload = (uint64_t)s->cfg.max_body_bytes,
                        .max_tensor_bytes = (uint64_t)s->cfg.max_tensor_bytes};
  send_simple(c, SHLO_BIN_WELCOME, 0, &w, sizeof w);
}

/* A padded string at p[*off..], length n, within len bytes: malloc'd copy
 * (NUL-terminated) or NULL when it does not fit. */
static char *take_string(const char *p, uint64_t len, uint64_t *off,
                         uint64_t n) {
  if (n > len - *off || shlo_bin_pad8(n) > len - *off) return NULL;
  char *s = malloc(n + 1);
  if (!s) return NULL;
  memcpy(s, p + *off, n);
  s[n] = 0;
  *off += shlo_bin_pad8(n);
  return s;
}

static void on_compile(bin_conn *c) {
  shlo_bin_compile m;
  uint64_t len = c->hdr.length, off = sizeof m;
  bin_job *b = job_new(c, SHLO_BIN_COMPILE);
  if (!b) {
    conn_close(c);
    return;
  }
  if (len < sizeof m) {
    bin_job_free(b);
    fatal(c, SHLO_PERR_INPUT, "COMPILE: payload shorter than 24 bytes");
    return;
  }
  memcpy(&m, c->payload, sizeof m);
  b->entry = take_string(c->payload, len, &off, m.entry_length);
  b->program = b->entry ? take_string(c->payload, len, &off,
                                      m.program_length) : NULL;
  if (m.reserved || !b->program || off != len) {
    bin_job_free(b);
    fatal(c, SHLO_PERR_INPUT, "COMPILE: reserved field set or lengths that "
                              "do not match the payload");
    return;
  }
  b->program_len = m.program_length;
  b->ex.replicas = m.replicas;
  b->ex.partitions = m.partitions;
  b->input_bytes = len;
  if (!b->entry[0] || b->entry[0] == '@')
    memmove(b->entry, b->entry + 1, strlen(b->entry));
  if (!b->entry[0]) {
    free(b->entry);
    b->entry = NULL;
  }
  dispatch(c, b);
}

static void on_cancel(bin_conn *c) {
  for (bin_job *b = c->jobs; b; b = b->next)
    if (b->id == c->hdr.id) shlo_cancel_set(&b->cancel, BIN_CANCEL_CLIENT);
  cache_recheck_waits(&c->s->cache); /* a compile no one waits for stops */
  count(c, SHLO_BIN_CANCEL, NULL);
}

/* A complete small payload. */
static void on_payload(bin_conn *c) {
  switch (c->hdr.type) {
  case SHLO_BIN_HELLO: on_hello(c); break;
  case SHLO_BIN_COMPILE: on_compile(c); break;
  case SHLO_BIN_INFEED:
  case SHLO_BIN_SUBSCRIBE:
  case SHLO_BIN_WAIT:
  case SHLO_BIN_STOP:
    bin_xframe(c, c->hdr.type, c->hdr.id, c->payload, c->hdr.length);
    break;
  case SHLO_BIN_PING:
    count(c, SHLO_BIN_PING, NULL);
    send_simple(c, SHLO_BIN_PONG, c->hdr.id, c->payload, c->hdr.length);
    break;
  default: break;
  }
  free(c->payload);
  c->payload = NULL;
}

/* ---- the frame reader ---- */

static void expect(bin_conn *c, rd_state st, void *dst, uint64_t n) {
  c->st = st;
  c->dst = dst;
  c->need = n;
}

static void next_frame(bin_conn *c) {
  c->mid_frame = false;
  srv_pending_set(c->s, &c->pend, 0); /* whole: handed on or answered */
  expect(c, RD_HEADER, &c->hdr, sizeof c->hdr);
  if (c->s->draining && !c->draining) { /* shutdown: read no more */
    if (c->reading) uv_read_stop((uv_stream_t *)&c->tcp);
    c->reading = false;
    c->draining = true;
    maybe_goodbye(c);
  }
}

/* Refuse the EXECUTE being read: skip the rest of its frame, then answer. */
static void refuse_execute(bin_conn *c) {
  c->job->failed = true;
  expect(c, RD_SKIP, NULL, c->left);
  if (!c->left) {
    bin_job *b = c->job;
    c->job = NULL;
    dispatch(c, b);
    next_frame(c);
  }
}

static bool take(bin_conn *c, uint64_t n) {
  if (n > c->left) return false;
  c->left -= n;
  return true;
}

static void on_header(bin_conn *c) {
  shlo_proto_error e;
  c->mid_frame = true;
  uint64_t max = (uint64_t)c->s->cfg.max_body_bytes;
  if (shlo_bin_header_check(&c->hdr, c->version, max, &e)) {
    send_error(c, c->hdr.id, c->hdr.type, &e);
    close_after_writes(c);
    return;
  }
  int t = c->hdr.type;
  c->left = c->hdr.length;
  if (!c->hello && t != SHLO_BIN_HELLO) {
    fatal(c, SHLO_PERR_AUTH, "the first frame must be HELLO");
    return;
  }
  /* Counted before anything is allocated for it: past the budget, other
   * frames are shed first; this one alone over it is refused. */
  if (c->left && !srv_pending_set(c->s, &c->pend, c->left)) return;
  switch (t) {
  case SHLO_BIN_INFEED:
  case SHLO_BIN_SUBSCRIBE:
  case SHLO_BIN_WAIT:
  case SHLO_BIN_STOP:
    if (c->version < SHLO_BIN_VERSION_STREAMS) {
      fatal(c, SHLO_PERR_INPUT, "streaming frames need protocol version 2");
      return;
    }
    __attribute__((fallthrough));
  case SHLO_BIN_HELLO:
  case SHLO_BIN_PING:
  case SHLO_BIN_COMPILE: {
    uint64_t cap = t == SHLO_BIN_HELLO ? MAX_HELLO + sizeof(shlo_bin_hello)
                   : t == SHLO_BIN_PING ? SHLO_BIN_MAX_PING : max;
    if ((t == SHLO_BIN_HELLO && c->hello) || c->left > cap) {
      fatal(c, SHLO_PERR_INPUT, c->hello && t == SHLO_BIN_HELLO
                                    ? "HELLO again on this connection"
                                    : "payload too long for its type");
      return;
    }
    c->payload = malloc(c->left ? c->left : 1);
    if (!c->payload) {
      fatal(c, SHLO_PERR_LIMIT, "out of memory for the payload");
      return;
    }
    expect(c, RD_PAYLOAD, c->payload, c->left);
    take(c, c->left);
    if (!c->need) {
      on_payload(c);
      if (!c->closing && !c->draining) next_frame(c);
    }
    return;
  }
  case SHLO_BIN_EXECUTE:
    if (!(c->job = job_new(c, SHLO_BIN_EXECUTE))) {
      conn_close(c);
      return;
    }
    c->job->input_bytes = c->hdr.length;
    if (!take(c, sizeof c->job->ex)) {
      fatal(c, SHLO_PERR_INPUT, "EXECUTE: payload shorter than 72 bytes");
      return;
    }
    expect(c, RD_EX_FIXED, &c->job->ex, sizeof c->job->ex);
    return;
  case SHLO_BIN_CANCEL:
  case SHLO_BIN_GOODBYE:
    if (c->left) {
      fatal(c, SHLO_PERR_INPUT, "CANCEL and GOODBYE carry no payload");
      return;
    }
    if (t == SHLO_BIN_CANCEL) {
      on_cancel(c);
      next_frame(c);
    } else {
      if (c->reading) uv_read_stop((uv_stream_t *)&c->tcp);
      c->reading = false;
      c->draining = true;
      maybe_goodbye(c);
    }
    return;
  default:
    fatal(c, SHLO_PERR_INPUT, "a client may not send this message type");
  }
}

/* EXECUTE's fixed part: check it, then read its strings. */
static void on_ex_fixed(bin_conn *c) {
  bin_job *b = c->job;
  const srv_config *cfg = &c->s->cfg;
  shlo_bin_execute *x = &b->ex;
  bool inl = x->flags & SHLO_BIN_EXEC_INLINE;
  uint64_t sl = shlo_bin_pad8(x->entry_length);
  bool has_id = x->flags & SHLO_BIN_EXEC_REQUEST_ID;
  uint64_t idl = shlo_bin_pad8(x->request_id_length);
  if ((has_id ? x->request_id_length == 0 ||
                    x->request_id_length > SRV_REQ_ID_MAX
              : x->request_id_length != 0) ||
      (x->flags & ~(SHLO_BIN_EXEC_INLINE | SHLO_BIN_EXEC_PRINT |
                    SHLO_BIN_EXEC_REQUEST_ID | SHLO_BIN_EXEC_TRACE |
                    (c->version >= SHLO_BIN_VERSION_STREAMS
                         ? SHLO_BIN_EXEC_ASYNC : 0))) ||
      (!inl && x->program_length) || x->entry_length > 4096 ||
      x->program_length > c->left ||
      sl + shlo_bin_pad8(x->program_length) + idl > c->left ||
      x->n_inputs > c->left / sizeof(shlo_bin_value)) {
    x->n_inputs = 0;
    fatal(c, SHLO_PERR_INPUT, "EXECUTE: reserved field or flag set, or "
                              "lengths that do not fit the payload");
    return;
  }
  uint64_t n = sl + shlo_bin_pad8(x->program_length) + idl;
  b->identity = x->flags & (SHLO_BIN_EXEC_REQUEST_ID | SHLO_BIN_EXEC_TRACE);
  if (cfg->max_inputs && x->n_inputs > (uint64_t)cfg->max_inputs) {
    shlo_proto_fail(&b->err, SHLO_PERR_LIMIT, "limit max-inputs (%lld) "
                    "exceeded: %u inputs", (long long)cfg->max_inputs,
                    x->n_inputs);
    x->n_inputs = 0;
    refuse_execute(c);
    return;
  }
  take(c, n);
  c->in_i = 0;
  b->inputs = calloc((size_t)x->n_inputs + 1, sizeof *b->inputs);
  c->strs = malloc(n + 1);
  if (!b->inputs || !c->strs) {
    x->n_inputs = 0;
    fatal(c, SHLO_PERR_LIMIT, "out of memory");
    return;
  }
  expect(c, RD_EX_STRS, c->strs, n);
}

static void next_input(bin_conn *c) {
  bin_job *b = c->job;
  if (c->in_i < b->ex.n_inputs) {
    if (!take(c, sizeof c->vh)) {
      shlo_proto_fail(&b->err, SHLO_PERR_INPUT, "EXECUTE: the payload ends "
                      "before input %u", c->in_i);
      refuse_execute(c);
      return;
    }
    expect(c, RD_EX_VHEAD, &c->vh, sizeof c->vh);
    return;
  }
  if (c->left) {
    shlo_proto_fail(&b->err, SHLO_PERR_INPUT, "EXECUTE: %llu bytes after the "
                    "last input", (unsigned long long)c->left);
    refuse_execute(c);
    return;
  }
  c->job = NULL;
  dispatch(c, b);
  next_frame(c);
}

static void on_ex_strs(bin_conn *c) {
  bin_job *b = c->job;
  uint64_t el = b->ex.entry_length, sl = shlo_bin_pad8(el);
  const char *e = c->strs + (el && c->strs[0] == '@');
  size_t en = el - (size_t)(e - c->strs);
  if (en && !(b->entry = strndup(e, en))) goto oom;
  if (b->ex.flags & SHLO_BIN_EXEC_INLINE) {
    b->program_len = b->ex.program_length;
    if (!(b->program = malloc(b->program_len + 1))) goto oom;
    memcpy(b->program, c->strs + sl, b->program_len);
    b->program[b->program_len] = 0;
  }
  /* a client's id that is not sane is replaced, as X-Request-Id's is */
  if (b->ex.flags & SHLO_BIN_EXEC_REQUEST_ID)
    srv_reqid_take(b->req_id,
                   c->strs + sl + shlo_bin_pad8(b->ex.program_length),
                   b->ex.request_id_length);
  free(c->strs);
  c->strs = NULL;
  next_input(c);
  return;
oom:
  shlo_proto_fail(&b->err, SHLO_PERR_LIMIT, "out of memory");
  refuse_execute(c);
}

static void on_ex_vhead(bin_conn *c) {
  if (c->vh.rank > SHLO_MAX_RANK || !take(c, 8 * (uint64_t)c->vh.rank)) {
    shlo_proto_fail(&c->job->err, SHLO_PERR_INPUT, "inputs[%u]: rank %u "
                    "is over 16 or past the payload", c->in_i,
                    (unsigned)c->vh.rank);
    refuse_execute(c);
    return;
  }
  expect(c, RD_EX_DIMS, c->dims, 8 * (uint64_t)c->vh.rank);
}

/* "inputs[K]" for messages (by hand: glibc's printf takes its slow
 * positional path in this process, and this runs for every input). */
static void input_path(char path[32], uint32_t k) {
  char digits[10];
  int n = 0;
  do digits[n++] = (char)('0' + k % 10);
  while ((k /= 10) && n < 10);
  memcpy(path, "inputs[", 7);
  for (int i = 0; i < n; i++) path[7 + i] = digits[n - 1 - i];
  path[7 + n] = ']';
  path[8 + n] = 0;
}

/* An input's header is complete: check it, make its tensor, read into it. */
static void on_ex_dims(bin_conn *c) {
  bin_job *b = c->job;
  const srv_config *cfg = &c->s->cfg;
  shlo_proto_limits lim = {cfg->max_tensor_elements, cfg->max_tensor_bytes,
                           (int)cfg->max_inputs};
  char path[32];
  input_path(path, c->in_i);
  int et;
  if (shlo_bin_value_check(&c->vh, c->dims, &lim, path, &et, &b->err)) {
    refuse_execute(c);
    return;
  }
  if (c->vh.kind != SHLO_BIN_TENSOR) {
    shlo_proto_fail(&b->err, SHLO_PERR_INPUT, "%s: only tensors can be "
                    "sent as inputs", path);
    refuse_execute(c);
    return;
  }
  b->input_bytes += c->vh.length;
  if (b->input_bytes > (uint64_t)cfg->max_exec_memory) {
    shlo_proto_fail(&b->err, SHLO_PERR_LIMIT, "limit max-exec-memory (%lld) "
                    "exceeded by the inputs", (long long)cfg->max_exec_memory);
    refuse_execute(c);
    return;
  }
  uint64_t padded = shlo_bin_pad8(c->vh.length);
  if (!take(c, padded)) {
    shlo_proto_fail(&b->err, SHLO_PERR_INPUT, "%s: data past the payload",
                    path);
    refuse_execute(c);
    return;
  }
  int64_t d[SHLO_MAX_RANK];
  for (int i = 0; i < c->vh.rank; i++) d[i] = (int64_t)c->dims[i];
  shlo_value *v = shlo_tensor_new((shlo_elem_type)et, c->vh.rank, d);
  if (!v) {
    c->left += padded;
    shlo_proto_fail(&b->err, SHLO_PERR_LIMIT, "%s: out of memory", path);
    refuse_execute(c);
    return;
  }
  b->inputs[c->in_i] = v;
  expect(c, RD_EX_DATA, v->data, c->vh.length);
}

/* A piece is complete: move to the next one. */
static void step(bin_conn *c) {
  switch (c->st) {
  case RD_HEADER: on_header(c); break;
  case RD_PAYLOAD:
    on_payload(c);
    if (!c->closing && !c->draining) next_frame(c);
    break;
  case RD_EX_FIXED: on_ex_fixed(c); break;
  case RD_EX_STRS: on_ex_strs(c); break;
  case RD_EX_VHEAD: on_ex_vhead(c); break;
  case RD_EX_DIMS: on_ex_dims(c); break;
  case RD_EX_DATA:
    expect(c, RD_EX_PAD, c->pad, shlo_bin_pad8(c->vh.length) - c->vh.length);
    if (c->need) break;
    __attribute__((fallthrough)); /* no padding */
  case RD_EX_PAD:
    c->in_i++;
    next_input(c);
    break;
  case RD_SKIP: {
    bin_job *b = c->job;
    c->job = NULL;
    dispatch(c, b);
    next_frame(c);
    break;
  }
  }
}

/* Bytes that arrived in the stage buffer: feed them piece by piece.  Zero
 * length pieces (empty strings, no dims) complete at once. */
static void feed(bin_conn *c, const char *p, size_t n) {
  while (!c->closing && !c->draining) {
    if (c->stream_paused) { /* keep the rest for when it reads on */
      c->held = p;
      c->held_n = n;
      return;
    }
    if (c->need == 0) {
      step(c);
      continue;
    }
    if (!n) break;
    size_t k = c->need < n ? (size_t)c->need : n;
    if (c->dst) {
      memcpy(c->dst, p, k);
      c->dst += k;
    }
    c->need -= k;
    p += k;
    n -= k;
  }
}

static void on_alloc(uv_handle_t *h, size_t hint, uv_buf_t *buf) {
  (void)hint;
  bin_conn *c = h->data;
  if (c->dst && c->need >= DIRECT_MIN) {
    /* Straight into the destination (a tensor's data): no copy. */
    size_t n = c->need < (1u << 30) ? (size_t)c->need : (1u << 30);
    *buf = uv_buf_init(c->dst, (unsigned)n);
  } else {
    *buf = uv_buf_init(c->stage, STAGE_BYTES);
  }
}

/* The bytes the frame being read holds: its whole payload, from its
 * header on (its tensors are allocated, and zeroed, before their data
 * comes; a header alone holds nothing). */
static uint64_t frame_held(const bin_conn *c) {
  if (!c->mid_frame || c->st == RD_HEADER || c->closing || c->draining)
    return 0;
  return c->hdr.length;
}

/* The budget shed this connection's frame (listen.c): its memory goes now,
 * the peer hears why, and the connection closes. */
static void shed_frame(srv_pending *p) {
  bin_conn *c = p->owner;
  srv_server *s = c->s;
  drop_frame(c);
  s->metrics.shed_pending++;
  shlo_proto_error e;
  shlo_proto_fail(&e, SHLO_PERR_LIMIT, "limit max-pending-body-bytes "
                  "(%lld): partly received frames and bodies fill the "
                  "server's budget, and this frame is dropped (those that "
                  "waited longest for their bytes go first); retry later",
                  (long long)s->cfg.max_pending_body_bytes);
  e.http = 503;
  send_error(c, c->hdr.id, c->hdr.type, &e);
  /* a peer that reads nothing would hold the connection open */
  if (uv_stream_get_write_queue_size((uv_stream_t *)&c->tcp) > 0)
    conn_close(c);
  else
    close_after_writes(c);
}

static void on_read(uv_stream_t *st, ssize_t n, const uv_buf_t *buf) {
  bin_conn *c = st->data;
  if (n < 0) {
    conn_close(c);
    return;
  }
  if (n == 0) return;
  c->last_ns = srv_now_ns();
  c->s->bin->bytes_in += (uint64_t)n;
  if (!c->mid_frame) c->frame_t0_ns = c->last_ns;
  c->mid_frame = true;
  if (buf->base != c->stage) {
    c->dst += n;
    c->need -= (uint64_t)n;
    feed(c, NULL, 0);
  } else {
    feed(c, buf->base, (size_t)n);
  }
  if (c->closing) return;
  uint64_t held = frame_held(c);
  if (held > c->peak_bytes) c->peak_bytes = held;
  srv_pending_set(c->s, &c->pend, held); /* may shed c itself */
}

static void read_start(bin_conn *c) {
  if (uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read) == 0) {
    c->reading = true;
    uint64_t now = srv_now_ns();
    c->last_ns = now;
    /* a frame's time runs while the server reads, not while it waits */
    if (c->paused_ns && c->mid_frame) c->frame_t0_ns += now - c->paused_ns;
    c->paused_ns = 0;
  } else {
    conn_close(c);
  }
}

/* ---- for binary_stream.c ---- */

void bin_conn_send(bin_conn *c, bin_answer *a) { send_answer(c, a); }
void bin_conn_send_simple(bin_conn *c, int type, uint64_t id, const void *p,
                          size_t n) {
  send_simple(c, type, id, p, n);
}
void bin_conn_send_error(bin_conn *c, uint64_t id, int type,
                         const shlo_proto_error *e) {
  send_error(c, id, type, e);
}
void bin_conn_fatal(bin_conn *c, shlo_proto_err_kind kind, const char *msg) {
  fatal(c, kind, msg);
}
void bin_conn_count_ok(bin_conn *c, int type) { count(c, type, NULL); }
uint64_t bin_conn_out_bytes(const bin_conn *c) { return c->out_bytes; }
srv_team *bin_conn_team(const bin_conn *c) { return c->team; }
unsigned bin_conn_scopes(const bin_conn *c) { return c->scopes; }
srv_server *bin_conn_server(const bin_conn *c) { return c->s; }
struct bin_xconn **bin_conn_streams(bin_conn *c) { return &c->xs; }

void bin_conn_pause(bin_conn *c) {
  c->stream_paused = true;
  stop_reading(c);
}

/* Feed what was held back when the pause began, then read on. */
void bin_conn_unpause(bin_conn *c) {
  if (!c->stream_paused || c->closing) return;
  c->stream_paused = false;
  const char *p = c->held;
  size_t n = c->held_n;
  c->held = NULL;
  c->held_n = 0;
  if (n) feed(c, p, n);
  if (!c->stream_paused) maybe_resume(c);
}

void srv_binary_streams_pump(srv_server *s) {
  if (!s->bin) return;
  for (bin_conn *c = s->bin->conns, *n; c; c = n) {
    n = c->next;
    if (c->xs && !c->closing) bin_xpump(c);
  }
}

/* ---- connections ---- */

static void on_closed(uv_handle_t *h) {
  bin_conn *c = h->data;
  conn_unref(c);
}

static void conn_close(bin_conn *c) {
  if (c->closing) return;
  c->closing = true;
  srv_binary *bn = c->s->bin;
  if (c->prev) c->prev->next = c->next;
  else bn->conns = c->next;
  if (c->next) c->next->prev = c->prev;
  bn->n_conns--;
  srv_pending_set(c->s, &c->pend, 0);
  if (c->ip_counted) counts_add(&c->s->per_ip, c->ip, -1);
  c->ip_counted = false;
  /* Running jobs answer to no one now: stop them. */
  for (bin_job *b = c->jobs; b; b = b->next) {
    shlo_cancel_set(&b->cancel, BIN_CANCEL_CLIENT);
    b->conn = NULL;
    c->refs--; /* the jobs' references: they no longer point here */
  }
  c->jobs = NULL;
  c->running = 0;
  if (c->xs) bin_xclosed(c);
  cache_recheck_waits(&c->s->cache);
  uv_close((uv_handle_t *)&c->tcp, on_closed);
}

/* A connection over a cap, refused at accept so that it holds nothing and
 * counts for nothing: an ERROR frame (limit, 503) written at once, as the
 * answer its HELLO will find, and the socket closed once it is read. */
static void refuse_at_accept(bin_conn *c, const char *limit, long long cap) {
  srv_server *s = c->s;
  shlo_proto_error e;
  shlo_proto_fail(&e, SHLO_PERR_LIMIT, "limit %s (%lld) reached; retry later",
                  limit, cap);
  e.http = 503;
  count(c, SHLO_BIN_HELLO, &e);
  size_t n;
  void *f = shlo_bin_error_frame(SHLO_BIN_VERSION_MAX, 0, &e, 0, &n);
  uv_os_fd_t fd;
  int copy = f && !uv_fileno((uv_handle_t *)&c->tcp, &fd) ? dup(fd) : -1;
  if (copy >= 0) srv_refuse_socket(s, copy, f, n);
  free(f);
  uv_close((uv_handle_t *)&c->tcp, on_closed);
}

static void on_connection(uv_stream_t *server, int status) {
  srv_server *s = server->data;
  if (status < 0) return;
  bin_conn *c = calloc(1, sizeof *c);
  if (!c) return;
  c->s = s;
  c->team = s->anonymous;
  c->scopes = SRV_SCOPE_ALL;
  c->refs = 1;
  uv_tcp_init(s->loop, &c->tcp);
  c->tcp.data = c;
  if (uv_accept(server, (uv_stream_t *)&c->tcp)) {
    uv_close((uv_handle_t *)&c->tcp, on_closed);
    return;
  }
  if (s->draining) {
    s->metrics.refused_connections++;
    uv_close((uv_handle_t *)&c->tcp, on_closed);
    return;
  }
  /* One address's connections count with its HTTP ones (listen.c). */
  struct sockaddr_storage ss;
  int len = sizeof ss;
  if (!uv_tcp_getpeername(&c->tcp, (struct sockaddr *)&ss, &len))
    srv_addr_text((struct sockaddr *)&ss, c->ip);
  if (srv_ip_full(s, c->ip)) {
    refuse_at_accept(c, "max-connections-per-ip",
                     s->cfg.max_connections_per_ip);
    return;
  }
  if (s->bin->n_conns >= s->cfg.max_connections) {
    s->metrics.refused_connections++;
    refuse_at_accept(c, "max-connections", s->cfg.max_connections);
    return;
  }
  uv_tcp_nodelay(&c->tcp, 1);
  _Static_assert(SRV_COUNT_KEY >= SRV_IP_LEN, "an address is a client key");
  memcpy(c->client, c->ip, sizeof c->ip);
  c->pend.owner = c;
  c->pend.shed = shed_frame;
  c->ip_counted = counts_add(&s->per_ip, c->ip, 1) > 0;
  c->next = s->bin->conns;
  if (c->next) c->next->prev = c;
  s->bin->conns = c;
  s->bin->n_conns++;
  next_frame(c);
  read_start(c);
}

/* A frame that took longer than frame-timeout-s from its first byte,
 * however steadily its bytes trickle: ERROR timeout, then closed. */
static void frame_expired(bin_conn *c) {
  srv_server *s = c->s;
  s->metrics.frame_deadline_closes++;
  drop_frame(c);
  srv_pending_set(s, &c->pend, 0);
  shlo_proto_error e;
  shlo_proto_fail(&e, SHLO_PERR_TIMEOUT, "limit frame-timeout-s (%lld): the "
                  "frame did not arrive whole in time",
                  (long long)s->cfg.frame_timeout_s);
  e.http = 408;
  bool whole = c->st != RD_HEADER; /* else its id is not known yet */
  send_error(c, whole ? c->hdr.id : 0, whole ? c->hdr.type : 0, &e);
  if (c->closing) return;
  if (uv_stream_get_write_queue_size((uv_stream_t *)&c->tcp) > 0)
    conn_close(c);
  else
    close_after_writes(c);
}

/* Once a second: close connections that stall mid-frame, never say HELLO
 * or leave their answers unread within connection-timeout-s, and frames
 * past frame-timeout-s. */
static void on_tick(uv_timer_t *t) {
  srv_server *s = t->data;
  uint64_t now = srv_now_ns(),
           limit = (uint64_t)s->cfg.connection_timeout_s * 1000000000u,
           frame = (uint64_t)s->cfg.frame_timeout_s * 1000000000u;
  for (bin_conn *c = s->bin->conns, *n; c; c = n) {
    n = c->next;
    /* a large answer moves without its write completing */
    size_t q = uv_stream_get_write_queue_size((uv_stream_t *)&c->tcp);
    if (q != c->out_q) {
      c->out_q = q;
      c->out_moved_ns = now;
    }
    bool waiting = !c->hello || c->mid_frame;
    if (limit && c->reading && waiting && now - c->last_ns > limit)
      conn_close(c);
    else if (limit && c->out_bytes && now - c->out_moved_ns > limit)
      conn_close(c); /* its peer reads nothing: the answers go nowhere */
    else if (frame && c->reading && c->mid_frame &&
             now - c->frame_t0_ns > frame)
      frame_expired(c);
  }
}

int srv_binary_start(srv_server *s) {
  if (!s->cfg.binary_port) return 0;
  srv_binary *bn = calloc(1, sizeof *bn);
  if (!bn) return -1;
  s->bin = bn;
  struct sockaddr_storage ss;
  int rc = uv_ip4_addr(s->cfg.host, (int)s->cfg.binary_port,
                       (struct sockaddr_in *)&ss);
  if (rc)
    rc = uv_ip6_addr(s->cfg.host, (int)s->cfg.binary_port,
                     (struct sockaddr_in6 *)&ss);
  uv_tcp_init(s->loop, &bn->listener);
  bn->listener.data = s;
  if (!rc) rc = uv_tcp_bind(&bn->listener, (struct sockaddr *)&ss, 0);
  if (!rc) rc = uv_listen((uv_stream_t *)&bn->listener, 511, on_connection);
  uv_timer_init(s->loop, &bn->tick);
  bn->tick.data = s;
  if (rc) {
    fprintf(stderr, "shlo-server: cannot listen on %s port %lld (binary): "
            "%s\n", s->cfg.host, (long long)s->cfg.binary_port,
            uv_strerror(rc));
    srv_binary_stop(s);
    return -1;
  }
  uv_timer_start(&bn->tick, on_tick, 1000, 1000);
  fprintf(stderr, "shlo-server: binary protocol on shlo://%s%s%s:%lld/\n",
          strchr(s->cfg.host, ':') ? "[" : "", s->cfg.host,
          strchr(s->cfg.host, ':') ? "]" : "", (long long)s->cfg.binary_port);
  return 0;
}

void srv_binary_quiesce(srv_server *s) {
  srv_binary *bn = s->bin;
  if (!bn) return;
  if (!uv_is_closing((uv_handle_t *)&bn->listener))
    uv_close((uv_handle_t *)&bn->listener, NULL);
  for (bin_conn *c = bn->conns, *n; c; c = n) {
    n = c->next;
    if (c->mid_frame) continue; /* finish reading its frame first */
    if (c->reading) uv_read_stop((uv_stream_t *)&c->tcp);
    c->reading = false;
    c->draining = true;
    maybe_goodbye(c);
  }
}

bool srv_binary_busy(srv_server *s) {
  if (!s->bin) return false;
  for (bin_conn *c = s->bin->conns; c; c = c->next)
    if (c->running || c->mid_frame) return true;
  return false;
}

int srv_binary_cancel_all(srv_server *s) {
  int n = 0;
  if (!s->bin) return 0;
  for (bin_conn *c = s->bin->conns, *next; c; c = next) {
    next = c->next;
    for (bin_job *b = c->jobs; b; b = b->next, n++)
      shlo_cancel_set(&b->cancel, BIN_CANCEL_SHUTDOWN);
    /* a frame still arriving after the grace period would only lead to
     * a refused request: stop waiting for it */
    if (c->mid_frame && !c->running) conn_close(c);
  }
  cache_recheck_waits(&s->cache);
  return n;
}

void srv_binary_stop(srv_server *s) {
  srv_binary *bn = s->bin;
  if (!bn) return;
  while (bn->conns) conn_close(bn->conns);
  if (!uv_is_closing((uv_handle_t *)&bn->listener))
    uv_close((uv_handle_t *)&bn->listener, NULL);
  if (!uv_is_closing((uv_handle_t *)&bn->tick))
    uv_close((uv_handle_t *)&bn->tick, NULL);
}

void srv_binary_metrics(srv_server *s, strbuf *b) {
  srv_binary *bn = s->bin;
  if (!bn) return;
  shlo__sb_puts(b, "# HELP shlo_binary_requests_total Binary-protocol "
                "requests by message type and outcome.\n"
                "# TYPE shlo_binary_requests_total counter\n");
  for (int t = 1; t < SHLO_BIN_TYPE_END; t++)
    for (int k = 0; k <= SHLO_PERR_COUNT; k++)
      if (bn->requests[t][k])
        shlo__sb_printf(b, "shlo_binary_requests_total{type=\"%s\",kind=\"%s\"}"
                        " %llu\n", shlo_bin_type_name(t),
                        k == SHLO_PERR_COUNT ? "ok"
                                             : shlo_proto_err_name(k),
                        (unsigned long long)bn->requests[t][k]);
  shlo__sb_printf(b, "# TYPE shlo_binary_bytes_in_total counter\n"
                  "shlo_binary_bytes_in_total %llu\n"
                  "# TYPE shlo_binary_bytes_out_total counter\n"
                  "shlo_binary_bytes_out_total %llu\n"
                  "# TYPE shlo_binary_connections gauge\n"
                  "shlo_binary_connections %d\n",
                  (unsigned long long)bn->bytes_in,
                  (unsigned long long)bn->bytes_out, bn->n_conns);
}
