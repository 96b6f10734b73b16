/* SPDX-License-Identifier: Apache-2.0 */
/* Streaming executions over the binary protocol (PROTOCOL.md part 2,
 * "Streaming executions"): an asynchronous EXECUTE starts an execution of
 * executions.c's table (the same ids, states and queues as the HTTP
 * routes); INFEED queues one value, SUBSCRIBE pushes a queue's values as
 * OUTFEED frames written from the value's own buffer, WAIT and STOP answer
 * STATE.  Per connection, a bin_xconn holds what is in progress.  Loop
 * thread only. */
#include <stdlib.h>
#include <string.h>

#include "binary.h"
#include "core/value.h"
#include "stream_int.h"

/* Outfeed bytes written to a connection but not yet taken by its client
 * before subscriptions stop popping values: past it, the program's queue
 * fills and the program waits (backpressure reaches it). */
#define BX_OUT_LIMIT (8u << 20)

typedef struct bx_sub { /* a SUBSCRIBE in progress */
  struct bx_sub *next;
  uint64_t rid;
  srv_execution *x;
  bool channel;
  int64_t chan;
  bool all;         /* every process, round robin */
  uint32_t replica, partition;
  int next_proc;
  uint64_t seq;
} bx_sub;

typedef struct bx_wait { /* a WAIT or STOP for the end */
  struct bx_wait *next;
  uint64_t rid;
  int type;
  srv_execution *x;
} bx_wait;

typedef struct bx_ref { /* an execution this connection started */
  struct bx_ref *next;
  srv_execution *x;
} bx_ref;

typedef struct bin_xconn {
  bx_sub *subs;
  bx_wait *waits;
  bx_ref *started;
  /* the INFEED waiting for room (the connection reads nothing meanwhile) */
  shlo_value *pend;
  srv_execution *pend_x;
  uint64_t pend_rid;
  shlo_bin_stream pend_at;
  bool pending;
} bin_xconn;

static bin_xconn *xconn(bin_conn *c) {
  bin_xconn **p = bin_conn_streams(c);
  if (!*p) *p = calloc(1, sizeof **p);
  return *p;
}

static void x_hold(srv_execution *x) { x->attached++; }
static void x_let_go(srv_execution *x) { x->attached--; }

static void fail(bin_conn *c, uint64_t rid, int type, shlo_proto_err_kind k,
                 int http, const char *fmt, const char *arg) {
  shlo_proto_error e;
  shlo_proto_fail(&e, k, fmt, arg);
  e.http = http;
  bin_conn_send_error(c, rid, type, &e);
}

/* ---- STARTED ---- */

/* The JSON body of POST /execute for an asynchronous EXECUTE; NULL when
 * out of memory. */
static char *start_body(const bin_job *b) {
  const shlo_bin_execute *ex = &b->ex;
  double ms = ex->timeout_us ? (double)ex->timeout_us / 1000.0 : 0;
  char *json = shlo_proto_exec_req_build(b->program, b->entry, b->inputs,
                                         (int)ex->n_inputs, ms, true, true);
  if (!json) return NULL;
  size_t n = strlen(json);
  char *out = realloc(json, n + 96);
  if (!out) {
    free(json);
    return NULL;
  }
  snprintf(out + n - 1, 97, "%s%s%.0u%s%.0u}",
           ex->flags & SHLO_BIN_EXEC_PRINT ? ",\"print\":true" : "",
           ex->replicas ? ",\"replicas\":" : "", ex->replicas,
           ex->partitions ? ",\"partitions\":" : "", ex->partitions);
  return out;
}

static void started_frame(bin_conn *c, uint64_t rid, srv_execution *x) {
  shlo_bin_started m = {.state = (uint32_t)atomic_load(&x->state)};
  memcpy(m.exec_id, x->id, strlen(x->id));
  bin_conn_send_simple(c, SHLO_BIN_STARTED, rid, &m, sizeof m);
  bin_conn_count_ok(c, SHLO_BIN_EXECUTE);
}

void bin_xstart(bin_conn *c, bin_job *b) {
  srv_server *s = bin_conn_server(c);
  bin_xconn *xc = xconn(c);
  char *body = NULL, msg[200], module[SRV_ID_LEN];
  int status = 500;
  if (!(b->scopes & (SRV_SCOPE_EXECUTE | SRV_SCOPE_ADMIN))) {
    fail(c, b->id, SHLO_BIN_EXECUTE, SHLO_PERR_AUTH, 403,
         "this token's scopes do not include %s", "execute");
  } else if (b->program && b->program_len >= 4 &&
             !memcmp(b->program, "ML\xefR", 4)) {
    fail(c, b->id, SHLO_BIN_EXECUTE, SHLO_PERR_INPUT, 400, "%s",
         "an asynchronous EXECUTE takes a program as text or a module id: "
         "COMPILE the artifact first");
  } else if (!xc || !(body = start_body(b))) {
    fail(c, b->id, SHLO_BIN_EXECUTE, SHLO_PERR_LIMIT, 500, "%s",
         "out of memory");
  } else {
    if (!b->program) {
      memcpy(module, "sha256:", 7);
      for (int i = 0; i < 32; i++)
        snprintf(module + 7 + 2 * i, 3, "%02x", b->ex.id[i]);
    }
    x_start_req q = {.s = s, .client = b->client, .team = b->team,
                     .scopes = b->scopes, .module = b->program ? NULL : module,
                     .body = &body, .len = strlen(body),
                     .cap = strlen(body) + 1, .json_type = true,
                     .request_id = b->req_id};
    srv_execution *x = x_start(&q, &status, msg, sizeof msg);
    bx_ref *ref = x ? malloc(sizeof *ref) : NULL;
    if (x && ref) {
      x_hold(x);
      ref->x = x;
      ref->next = xc->started;
      xc->started = ref;
      started_frame(c, b->id, x);
    } else if (x) { /* no way to answer for it: stop it */
      x_cancel(x, SRV_CANCEL_CLIENT_GONE);
      fail(c, b->id, SHLO_BIN_EXECUTE, SHLO_PERR_LIMIT, 500, "%s",
           "out of memory");
    } else {
      fail(c, b->id, SHLO_BIN_EXECUTE, SHLO_PERR_LIMIT, status, "%s", msg);
    }
  }
  free(body);
  bin_job_free(b);
}

/* ---- looking up an execution ---- */

/* The execution a frame names, as the connection's team may see it;
 * NULL (answered not_found) when there is none. */
static srv_execution *named(bin_conn *c, uint64_t rid, int type,
                            const char id[SHLO_BIN_EXEC_ID_LEN]) {
  srv_server *s = bin_conn_server(c);
  char key[X_ID_LEN] = {0};
  memcpy(key, id, SHLO_BIN_EXEC_ID_LEN < X_ID_LEN - 1 ? SHLO_BIN_EXEC_ID_LEN
                                                      : X_ID_LEN - 1);
  srv_execution *x = s->execs ? x_find(s->execs, key) : NULL;
  if (x && x->team != bin_conn_team(c) &&
      !(bin_conn_scopes(c) & SRV_SCOPE_ADMIN))
    x = NULL;
  if (!x)
    fail(c, rid, type, SHLO_PERR_NOT_FOUND, 404, "no execution %s (never "
         "started, or ended more than execution-keep-s ago)", key);
  return x;
}

/* ---- STATE ---- */

static void state_frame(bin_conn *c, uint64_t rid, int type,
                        srv_execution *x) {
  char *json = x_state_json(x);
  size_t jn = json ? strlen(json) : 0;
  shlo_bin_state m = {.state = (uint32_t)atomic_load(&x->state),
                      .status = (uint32_t)(x->result ? x->result_status : 0),
                      .bytes_in = x->bytes_in,
                      .bytes_out = x->bytes_out,
                      .json_length = jn};
  memcpy(m.exec_id, x->id, strlen(x->id));
  char *p = calloc(1, sizeof m + shlo_bin_pad8(jn));
  if (!p) {
    free(json);
    fail(c, rid, type, SHLO_PERR_LIMIT, 500, "%s", "out of memory");
    return;
  }
  memcpy(p, &m, sizeof m);
  if (jn) memcpy(p + sizeof m, json, jn);
  free(json);
  bin_conn_send_simple(c, SHLO_BIN_STATE, rid, p, sizeof m + jn);
  bin_conn_count_ok(c, type);
  free(p);
}

/* ---- INFEED ---- */

static void end_pending(bin_conn *c, bin_xconn *xc) {
  shlo_value_unref(xc->pend);
  xc->pend = NULL;
  if (xc->pend_x) x_let_go(xc->pend_x);
  xc->pend_x = NULL;
  xc->pending = false;
  bin_conn_unpause(c);
}

/* The queue an INFEED names, once the execution runs; NULL when it
 * cannot be (answered, *bad set) or is not there yet. */
static shlo_feed *infeed_queue(bin_conn *c, bin_xconn *xc, bool *bad) {
  srv_execution *x = xc->pend_x;
  const shlo_bin_stream *at = &xc->pend_at;
  *bad = false;
  if (at->flags & SHLO_BIN_STREAM_CHANNEL) {
    shlo_feed *q = x_channel(x, at->channel, false);
    if (!q) {
      *bad = true;
      fail(c, xc->pend_rid, SHLO_BIN_INFEED, SHLO_PERR_LIMIT, 400, "%s",
           "more than 16 host channels, or out of memory");
    }
    return q;
  }
  if (!atomic_load(&x->bound)) return NULL;
  if (at->replica >= (uint32_t)x->replicas ||
      at->partition >= (uint32_t)x->partitions) {
    *bad = true;
    fail(c, xc->pend_rid, SHLO_BIN_INFEED, SHLO_PERR_INPUT, 400,
         "process %s is off the execution's grid", "(replica, partition)");
    return NULL;
  }
  return x->in[at->replica * (uint32_t)x->partitions + at->partition];
}

/* Queue the pending value if its queue has room: answered (QUEUED or
 * ERROR) and reading resumed, or still waiting. */
static void push_pending(bin_conn *c, bin_xconn *xc) {
  srv_execution *x = xc->pend_x;
  if (x_final(x)) {
    fail(c, xc->pend_rid, SHLO_BIN_INFEED, SHLO_PERR_INPUT, 409,
         "the execution has ended (%s): nothing more is fed",
         x_state_name(atomic_load(&x->state)));
    end_pending(c, xc);
    return;
  }
  bool bad;
  shlo_feed *q = infeed_queue(c, xc, &bad);
  if (bad) end_pending(c, xc);
  if (!q) return;
  shlo_status rc = xc->pend ? shlo_feed_try_push(q, xc->pend) : SHLO_OK;
  if (rc == SHLO_ELIMIT) return; /* full: wait for the program */
  if (rc == SHLO_EINPUT)
    fail(c, xc->pend_rid, SHLO_BIN_INFEED, SHLO_PERR_INPUT, 409, "%s",
         "the queue is closed");
  else if (rc)
    fail(c, xc->pend_rid, SHLO_BIN_INFEED, SHLO_PERR_LIMIT, 500, "%s",
         "out of memory");
  if (!rc) {
    size_t bytes = xc->pend ? xc->pend->nbytes : 0;
    x->bytes_in += bytes;
    x->owner->bytes_in += bytes;
    x->activity_ns = srv_now_ns();
    if (xc->pend_at.flags & SHLO_BIN_STREAM_CLOSE) shlo_feed_close(q);
    bin_conn_send_simple(c, SHLO_BIN_QUEUED, xc->pend_rid, NULL, 0);
    bin_conn_count_ok(c, SHLO_BIN_INFEED);
  }
  end_pending(c, xc);
}

static void on_infeed(bin_conn *c, bin_xconn *xc, uint64_t rid,
                      const shlo_bin_stream *at, const char *p,
                      uint64_t len) {
  srv_server *s = bin_conn_server(c);
  srv_execution *x = named(c, rid, SHLO_BIN_INFEED, at->exec_id);
  if (!x) return;
  shlo_value *v = NULL;
  if (len) {
    shlo_proto_limits lim = {s->cfg.max_tensor_elements,
                             s->cfg.max_tensor_bytes, 0};
    shlo_proto_error e;
    uint64_t used = 0;
    int rc = shlo_bin_value_read(p, len, &lim, "value", &v, &used, &e);
    if (!rc && (used != len || v->kind != SHLO_TYPE_TENSOR))
      rc = shlo_proto_fail(&e, SHLO_PERR_INPUT, "value: one tensor, and "
                           "nothing after it");
    if (rc) {
      shlo_value_unref(v);
      e.http = e.kind == SHLO_PERR_LIMIT ? 413 : 400;
      bin_conn_send_error(c, rid, SHLO_BIN_INFEED, &e);
      return;
    }
  } else if (!(at->flags & SHLO_BIN_STREAM_CLOSE)) {
    fail(c, rid, SHLO_BIN_INFEED, SHLO_PERR_INPUT, 400, "%s",
         "INFEED carries one value (or sets the close flag)");
    return;
  }
  x_hold(x);
  xc->pend = v;
  xc->pend_x = x;
  xc->pend_rid = rid;
  xc->pend_at = *at;
  xc->pending = true;
  push_pending(c, xc);
  if (xc->pending) bin_conn_pause(c); /* full: TCP pushes back */
}

/* ---- SUBSCRIBE -> OUTFEED ... STATE ---- */

/* One OUTFEED frame: header, its 16 bytes and the value's header in one
 * buffer, then the tensor's data straight from the value (the answer
 * holds a reference until written), then padding. */
static bool outfeed_frame(bin_conn *c, bx_sub *u, shlo_value *v, int proc) {
  static const char zeros[8];
  srv_execution *x = u->x;
  char *head = malloc(sizeof(shlo_bin_header) + sizeof(shlo_bin_outfeed) +
                      sizeof(shlo_bin_value) + 8 * SHLO_MAX_RANK);
  bin_answer a = {0};
  a.bufs = malloc(3 * sizeof *a.bufs);
  a.owned = malloc(sizeof *a.owned);
  a.vals = malloc(sizeof *a.vals);
  if (!head || !a.bufs || !a.owned || !a.vals) {
    free(head);
    bin_answer_free(&a);
    return false;
  }
  bool tensor = v->kind == SHLO_TYPE_TENSOR;
  shlo_bin_outfeed m = {SHLO_BIN_STREAM_ALL, SHLO_BIN_STREAM_ALL, u->seq++};
  if (proc >= 0) {
    m.replica = (uint32_t)(proc / x->partitions);
    m.partition = (uint32_t)(proc % x->partitions);
  }
  size_t vh = shlo_bin_value_head(v, head + 32 + sizeof m);
  uint64_t vsize = shlo_bin_value_size(v);
  shlo_bin_header h;
  shlo_bin_header_init(&h, SHLO_BIN_VERSION_STREAMS, SHLO_BIN_OUTFEED, u->rid,
                       sizeof m + vsize);
  memcpy(head, &h, sizeof h);
  memcpy(head + sizeof h, &m, sizeof m);
  size_t hn = sizeof h + sizeof m + vh;
  if (!tensor) { /* a tuple or token: whole, copied */
    char *all = realloc(head, sizeof h + sizeof m + vsize);
    if (!all) {
      free(head);
      bin_answer_free(&a);
      return false;
    }
    head = all;
    shlo_bin_value_write(v, head + sizeof h + sizeof m);
    hn = sizeof h + sizeof m + vsize;
  }
  a.owned[a.n_owned++] = head;
  a.bufs[a.n_bufs++] = uv_buf_init(head, (unsigned)hn);
  if (tensor && v->nbytes) {
    a.bufs[a.n_bufs++] = uv_buf_init(v->data, (unsigned)v->nbytes);
    size_t pad = shlo_bin_pad8(v->nbytes) - v->nbytes;
    if (pad) a.bufs[a.n_bufs++] = uv_buf_init((char *)zeros, (unsigned)pad);
  }
  a.vals[a.n_vals++] = v; /* the answer's reference now */
  a.bytes = sizeof h + sizeof m + vsize;
  size_t bytes = tensor ? v->nbytes : 0;
  x->bytes_out += bytes;
  x->owner->bytes_out += bytes;
  x->activity_ns = srv_now_ns();
  bin_conn_send(c, &a);
  return true;
}

/* The subscription's next value (round robin over its processes); the
 * process in *proc.  NULL when none is waiting. */
static shlo_value *sub_pop(bx_sub *u, int *proc) {
  srv_execution *x = u->x;
  shlo_value *v = NULL;
  *proc = -1;
  if (u->channel) {
    shlo_feed *q = x_channel(x, u->chan, true);
    return q && shlo_feed_pop(q, 0, &v) == SHLO_OK ? v : NULL;
  }
  if (!atomic_load(&x->bound)) return NULL;
  int only = u->all ? -1 : (int)(u->replica * (uint32_t)x->partitions +
                                 u->partition);
  for (int i = 0; i < x->n_procs; i++) {
    int k = only >= 0 ? only : (u->next_proc + i) % x->n_procs;
    if (shlo_feed_pop(x->out[k], 0, &v) == SHLO_OK) {
      u->next_proc = (k + 1) % x->n_procs;
      *proc = x->n_procs > 1 ? k : -1;
      return v;
    }
    if (only >= 0) break;
  }
  return NULL;
}

/* Send what the subscription has, while the client keeps up; true when it
 * is over (answered STATE or ERROR). */
static bool sub_pump(bin_conn *c, bx_sub *u) {
  srv_execution *x = u->x;
  if (!u->all && !u->channel && atomic_load(&x->bound) &&
      (u->replica >= (uint32_t)x->replicas ||
       u->partition >= (uint32_t)x->partitions)) {
    fail(c, u->rid, SHLO_BIN_SUBSCRIBE, SHLO_PERR_INPUT, 400,
         "process %s is off the execution's grid", "(replica, partition)");
    return true;
  }
  while (bin_conn_out_bytes(c) < BX_OUT_LIMIT) {
    bool final = x_final(x); /* before the pop: then empty stays empty */
    int proc;
    shlo_value *v = sub_pop(u, &proc);
    if (v) {
      if (!outfeed_frame(c, u, v, proc)) {
        shlo_value_unref(v);
        fail(c, u->rid, SHLO_BIN_SUBSCRIBE, SHLO_PERR_LIMIT, 500, "%s",
             "out of memory");
        return true;
      }
      continue;
    }
    if (final) {
      state_frame(c, u->rid, SHLO_BIN_SUBSCRIBE, x);
      return true;
    }
    /* A reader waits for a computing program: it is not idle. */
    x->activity_ns = srv_now_ns();
    break;
  }
  return false;
}

static void on_subscribe(bin_conn *c, bin_xconn *xc, uint64_t rid,
                         const shlo_bin_stream *at) {
  srv_execution *x = named(c, rid, SHLO_BIN_SUBSCRIBE, at->exec_id);
  if (!x) return;
  bx_sub *u = calloc(1, sizeof *u);
  if (!u) {
    fail(c, rid, SHLO_BIN_SUBSCRIBE, SHLO_PERR_LIMIT, 500, "%s",
         "out of memory");
    return;
  }
  u->rid = rid;
  u->x = x;
  u->channel = at->flags & SHLO_BIN_STREAM_CHANNEL;
  u->chan = at->channel;
  u->all = at->replica == SHLO_BIN_STREAM_ALL &&
           at->partition == SHLO_BIN_STREAM_ALL;
  u->replica = at->replica; /* checked against the grid once it runs */
  u->partition = at->partition;
  x_hold(x);
  x->activity_ns = srv_now_ns();
  u->next = xc->subs;
  xc->subs = u;
}

/* ---- WAIT, STOP ---- */

static void on_wait(bin_conn *c, bin_xconn *xc, int type, uint64_t rid,
                    const shlo_bin_exec_ref *m) {
  srv_execution *x = named(c, rid, type, m->exec_id);
  if (!x) return;
  if (type == SHLO_BIN_STOP) x_cancel(x, SRV_CANCEL_DELETE);
  bool at_end = type == SHLO_BIN_STOP || (m->flags & SHLO_BIN_WAIT_END);
  if (!at_end || x_final(x)) {
    state_frame(c, rid, type, x);
    return;
  }
  bx_wait *w = calloc(1, sizeof *w);
  if (!w) {
    fail(c, rid, type, SHLO_PERR_LIMIT, 500, "%s", "out of memory");
    return;
  }
  w->rid = rid;
  w->type = type;
  w->x = x;
  x_hold(x);
  w->next = xc->waits;
  xc->waits = w;
}

void bin_xframe(bin_conn *c, int type, uint64_t id, const char *p,
                uint64_t len) {
  bin_xconn *xc = xconn(c);
  if (!xc) {
    bin_conn_fatal(c, SHLO_PERR_LIMIT, "out of memory");
    return;
  }
  if (type == SHLO_BIN_WAIT || type == SHLO_BIN_STOP) {
    shlo_bin_exec_ref m;
    unsigned ok_flags = type == SHLO_BIN_WAIT ? SHLO_BIN_WAIT_END : 0;
    if (len != sizeof m) {
      bin_conn_fatal(c, SHLO_PERR_INPUT, "WAIT and STOP are 32 bytes");
      return;
    }
    memcpy(&m, p, sizeof m);
    if (m.reserved || (m.flags & ~ok_flags)) {
      bin_conn_fatal(c, SHLO_PERR_INPUT, "reserved field or flag set");
      return;
    }
    on_wait(c, xc, type, id, &m);
    return;
  }
  shlo_bin_stream at;
  unsigned ok_flags = SHLO_BIN_STREAM_CHANNEL |
                      (type == SHLO_BIN_INFEED ? SHLO_BIN_STREAM_CLOSE : 0);
  if (len < sizeof at || (type == SHLO_BIN_SUBSCRIBE && len != sizeof at)) {
    bin_conn_fatal(c, SHLO_PERR_INPUT, "INFEED and SUBSCRIBE start with 48 "
                                       "bytes; SUBSCRIBE has no more");
    return;
  }
  memcpy(&at, p, sizeof at);
  if (at.reserved || (at.flags & ~ok_flags)) {
    bin_conn_fatal(c, SHLO_PERR_INPUT, "reserved field or flag set");
    return;
  }
  if (id == 0) {
    bin_conn_fatal(c, SHLO_PERR_INPUT, "request id 0 is reserved");
    return;
  }
  if (type == SHLO_BIN_INFEED)
    on_infeed(c, xc, id, &at, p + sizeof at, len - sizeof at);
  else
    on_subscribe(c, xc, id, &at);
  bin_xpump(c);
}

/* ---- moving on, letting go ---- */

void bin_xpump(bin_conn *c) {
  bin_xconn *xc = *bin_conn_streams(c);
  if (!xc || !bin_conn_server(c)->execs) return;
  if (xc->pending) push_pending(c, xc);
  for (bx_sub **pu = &xc->subs, *u; (u = *pu);) {
    if (sub_pump(c, u)) {
      *pu = u->next;
      x_let_go(u->x);
      free(u);
    } else {
      pu = &u->next;
    }
  }
  for (bx_ref **pr = &xc->started, *r; (r = *pr);) {
    if (x_final(r->x)) { /* nothing to stop at a hang-up any more */
      *pr = r->next;
      x_let_go(r->x);
      free(r);
    } else {
      pr = &r->next;
    }
  }
  for (bx_wait **pw = &xc->waits, *w; (w = *pw);) {
    if (x_final(w->x)) {
      state_frame(c, w->rid, w->type, w->x);
      *pw = w->next;
      x_let_go(w->x);
      free(w);
    } else {
      pw = &w->next;
    }
  }
}

void bin_xclosed(bin_conn *c) {
  bin_xconn **pxc = bin_conn_streams(c), *xc = *pxc;
  *pxc = NULL;
  shlo_value_unref(xc->pend);
  if (xc->pend_x) x_let_go(xc->pend_x);
  while (xc->subs) {
    bx_sub *u = xc->subs;
    xc->subs = u->next;
    x_let_go(u->x);
    free(u);
  }
  while (xc->waits) {
    bx_wait *w = xc->waits;
    xc->waits = w->next;
    x_let_go(w->x);
    free(w);
  }
  while (xc->started) { /* its client is gone: stop what it started */
    bx_ref *r = xc->started;
    xc->started = r->next;
    x_cancel(r->x, SRV_CANCEL_CLIENT_GONE);
    x_let_go(r->x);
    free(r);
  }
  free(xc);
}
