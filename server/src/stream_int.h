/* SPDX-License-Identifier: Apache-2.0 */
/* Internals shared by executions.c (the table, the state routes) and
 * stream_http.c (the infeed / outfeed / channel connections). */
#ifndef SHLO_SRV_STREAM_INT_H
#define SHLO_SRV_STREAM_INT_H

#include <pthread.h>
#include <stdatomic.h>

#include "executions.h"
#include "core/strbuf.h"

#define X_ID_LEN 24   /* "ex-" + 16 hex + NUL, with room */
#define X_MAX_CHANS 16 /* host channel queues per execution */

typedef enum {
  X_QUEUED, X_RUNNING, X_SUCCEEDED, X_FAILED, X_CANCELED, X_N_STATES
} x_state;

typedef struct x_chan {
  int64_t id;
  bool to_host; /* a send's queue (the client reads it) */
  shlo_feed *q;
} x_chan;

typedef struct srv_execs {
  srv_server *s;
  uv_async_t wake;  /* a queue moved or a job started: resume waiters */
  uv_timer_t sweep;
  struct srv_execution *list;
  atomic_bool stopping;
  int open_handles;
  uint64_t created, ended[X_N_STATES];
  uint64_t bytes_in, bytes_out; /* tensor bytes streamed, all executions */
  /* The executions' own workers (execution-workers): a job waiting for
   * its infeed sleeps on one of these, so it never holds a worker of
   * s->pool, where compiles and synchronous executions run. */
  srv_pool pool;
  uint64_t start_timeouts; /* ended unstarted: execution-start-timeout-s */
} srv_execs;

typedef struct srv_execution {
  struct srv_execution *next;
  srv_execs *owner;
  char id[X_ID_LEN];
  char client[SRV_COUNT_KEY];
  struct srv_team *team; /* its creator's: other teams get a 404 */
  srv_request *job;         /* the running job (loop); NULL once ended */
  _Atomic int state;        /* x_state; the worker sets X_RUNNING */
  atomic_int dirty;         /* x_wake since the loop last looked */
  /* The queues: set by the worker at bind (lock), read by the loop once
   * `bound`; freed with the execution. */
  pthread_mutex_t lock;
  atomic_bool bound;
  int replicas, partitions, n_procs;
  shlo_feed **in, **out;
  x_chan chans[X_MAX_CHANS];
  int n_chans;
  /* loop only */
  char *result;             /* the job's answer (JSON), once ended */
  int result_status, cancel_why;
  uint64_t created_ns, done_ns, activity_ns;
  srv_request **waiting;    /* suspended connections */
  int n_waiting, cap_waiting;
  int attached;             /* requests that point at it */
  bool seen_running;        /* the sweep saw X_RUNNING: idle clock on */
  uint64_t bytes_in, bytes_out;
  char request_id[SRV_REQ_ID_LEN]; /* the request that created it */
} srv_execution;

/* One request's state on a streaming or state route (loop). */
typedef struct srv_stream {
  bool waiting;     /* in its execution's waiting list, suspended */
  bool started;
  bool reader;      /* drains a queue (outfeed, channel GET) */
  int from_state;   /* long poll: the state it began in */
  uint64_t until_ns;/* long poll / DELETE: answer by then */
  int proc;         /* replica * partitions + partition; -1: all / (0,0) */
  int64_t chan;     /* channel routes */
  /* upload */
  bool ndjson, close_after, failed;
  strbuf line;      /* the current line (NDJSON) or the whole body */
  shlo_value *pending; /* decoded, waiting for room in the queue */
  int64_t queued;
  /* reader */
  strbuf out;       /* encoded lines not yet handed to MHD */
  size_t out_off;
  int next_proc;    /* round robin over processes */
  bool ended;       /* the final state line is in `out` */
  bool sse;         /* text/event-stream: "data: ..." events, not lines */
} srv_stream;

const char *x_state_name(x_state st);
void x_wake(srv_execution *x);
void x_resume_all(srv_execution *x);
bool x_wait(srv_execution *x, srv_request *r, bool watch_gone);
bool x_final(const srv_execution *x);
/* Cancel x's job for `why` (SRV_CANCEL_*; a reason set before stays): a
 * job still waiting for an execution worker leaves the queue now and
 * ends "canceled"; a running one sees its flag. */
void x_cancel(srv_execution *x, int why);
srv_execution *x_find(srv_execs *t, const char *id);
shlo_feed *x_channel(srv_execution *x, int64_t id, bool to_host);
bool x_attach(srv_request *r);
void x_reply(srv_request *r, int status, char *json);
/* {"id","state"[,"reason"],"bytes_in","bytes_out"[,"status", the job's
 * answer's members: "outputs" or "error", ...]}; malloc'd, NULL on OOM. */
char *x_state_json(const srv_execution *x);

/* A new execution: its job queued on the pool (long lane), as `client`
 * of `team`; body (JSON, as POST /execute's) is taken over (*body set to
 * NULL) when it started.  NULL with *status (429, 503, 500) and msg when
 * refused. */
typedef struct x_start_req {
  srv_server *s;
  const char *client;
  struct srv_team *team;
  unsigned scopes;
  const char *module; /* a module id, or NULL: the body has "program" */
  char **body;
  size_t len, cap;
  bool json_type;
  const char *request_id; /* the creating request's (reqid.h), or NULL */
} x_start_req;
srv_execution *x_start(const x_start_req *q, int *status, char *msg,
                       size_t msg_len);

/* stream_http.c */
enum MHD_Result x_stream_out(srv_request *r);
enum MHD_Result x_upload_end(srv_request *r);
void x_stream_free(srv_stream *st);

#endif
