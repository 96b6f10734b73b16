/* SPDX-License-Identifier: Apache-2.0 */
/* shlo-server internals shared by its modules: the server, one HTTP
 * request, metrics, auth.  Threads: everything here belongs to the loop
 * thread except what a job's work function reads (its request's input
 * fields, the config, the cache) and writes (its request's result fields)
 * while the request is suspended. */
#ifndef SHLO_SRV_SERVER_H
#define SHLO_SRV_SERVER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <microhttpd.h>
#include <uv.h>

#include "cache.h"
#include "names.h"
#include "config.h"
#include "counts.h"
#include "pool.h"
#include "reqid.h"
#include "shlo/protocol.h"
#include "teams.h"

/* X(ENUM, label in /metrics) */
#define SRV_ROUTES(X)                                   \
  X(EXECUTE, "/execute")                                \
  X(MODULES, "/v1/modules")                             \
  X(MODULE, "/v1/modules/{id}")                         \
  X(MODULE_EXEC, "/v1/modules/{id}/execute")            \
  X(MODEL_EXEC, "/v1/models/{name}/execute")            \
  X(HEALTHZ, "/healthz")                                \
  X(READYZ, "/readyz")                                  \
  X(METRICS, "/metrics")                                \
  X(EXECS, "/v1/executions")                            \
  X(EXEC, "/v1/executions/{id}")                        \
  X(EXEC_INFEED, "/v1/executions/{id}/infeed")          \
  X(EXEC_OUTFEED, "/v1/executions/{id}/outfeed")        \
  X(EXEC_CHANNEL, "/v1/executions/{id}/channels/{c}")   \
  X(OIP_HEALTH, "/v2/health/{live,ready}")              \
  X(OIP, "/v2/models/{name}")                           \
  X(OIP_INFER, "/v2/models/{name}/infer")               \
  X(OIP_MODELS, "/v2/models")                           \
  X(OIP_REPO, "/v2/repository/{index,models/{name}/...}") \
  X(TRACE, "/v1/traces/{id}")                           \
  X(HISTORY, "/v1/console/history")                     \
  X(OTHER, "other")

typedef enum {
#define SRV_ROUTE_ENUM(e, s) R_##e,
  SRV_ROUTES(SRV_ROUTE_ENUM)
#undef SRV_ROUTE_ENUM
  R_COUNT
} srv_route;

#define SRV_STATUSES(X) \
  X(200) X(400) X(401) X(403) X(404) X(405) X(413) X(422) X(429) X(500) X(503) X(504)
enum { SRV_N_STATUS = 13 }; /* the list above + "other" */

#define SRV_LAT_BUCKETS 12
/* A Prometheus histogram over the latency buckets (metrics.c). */
typedef struct srv_histogram {
  uint64_t buckets[SRV_LAT_BUCKETS + 1]; /* last = +Inf */
  uint64_t count;
  double sum_s;
} srv_histogram;

typedef enum { SRV_COMPILE_REGISTER, SRV_COMPILE_EXECUTE, SRV_N_COMPILE } srv_compile_kind;

typedef struct srv_metrics {
  uint64_t requests[R_COUNT][SRV_N_STATUS];
  srv_histogram exec;
  srv_histogram queue_wait[SRV_N_LANES];  /* by lane */
  srv_histogram compile[SRV_N_COMPILE];   /* by route kind */
  uint64_t bytes_in, bytes_out;
  uint64_t refused_queue, refused_connections, refused_per_ip;
  uint64_t refused_client_jobs;  /* 429: max-client-jobs */
  uint64_t deadline_closes;      /* request-timeout-s */
  uint64_t canceled_client_gone, canceled_shutdown;
  double cancel_latency_max_s;   /* client gone -> worker free, worst */
  uint64_t reloads, reload_failures;
  uint64_t shed_pending;         /* closed for max-pending-body-bytes */
  uint64_t frame_deadline_closes; /* frame-timeout-s */
  uint64_t refused_json_answers; /* 413: max-json-answer-bytes */
} srv_metrics;

/* Why an execution's cancel flag is set (srv_request.cancel). */
enum { SRV_CANCEL_SHUTDOWN = 1, SRV_CANCEL_CLIENT_GONE = 2,
       SRV_CANCEL_DELETE = 3,   /* DELETE /v1/executions/{id} */
       SRV_CANCEL_IDLE = 4,     /* execution-idle-ms without a client */
       SRV_CANCEL_START = 5 };  /* execution-start-timeout-s unstarted */

/* Connections admitted above max-connections, for the health routes only. */
#define SRV_RESERVED_CONNECTIONS 16
#define SRV_IP_LEN 48

/* One HTTP connection's guard state (listen.c), libmicrohttpd's socket
 * context. */
typedef struct srv_conn {
  struct srv_conn *prev, *next;
  int fd;
  char ip[SRV_IP_LEN];
  uint64_t since_ns;  /* waiting for a request's headers and body since */
  bool busy;          /* its request is complete: worked on or answered */
  bool in_request;    /* its request's headers arrived */
  bool reserve;       /* admitted above max-connections */
  bool counted;       /* in the per-address counts */
  bool expired;       /* closed for its deadline */
  /* An infeed / channel upload (stream_http.c): its body is not bound by
   * request-timeout-s; since_ns restarts with each value, and the limit
   * is this gap (0 = none). */
  bool streaming;
  uint64_t stream_idle_ns;
} srv_conn;

typedef enum { RS_BODY, RS_QUEUED, RS_DONE } srv_req_state;

/* A partly received request body or binary frame, counted against
 * max-pending-body-bytes (listen.c).  Its owner embeds it and says how to
 * close its connection when the budget sheds it. */
typedef struct srv_pending {
  struct srv_pending *prev, *next;
  uint64_t bytes;    /* counted in srv_server.pending_bytes */
  uint64_t last_ns;  /* when it last grew */
  bool listed;
  /* Called unlisted: drop the body's memory now, answer the refusal and
   * close the connection. */
  void (*shed)(struct srv_pending *p);
  void *owner;
} srv_pending;

typedef struct srv_server srv_server;

typedef struct srv_request {
  srv_job job; /* first: a job pointer is a request pointer */
  srv_server *srv;
  struct MHD_Connection *conn;
  srv_route route;
  char method[8];
  char path[160];      /* for the log, truncated */
  char req_id[SRV_REQ_ID_LEN]; /* X-Request-Id, sane, else made (reqid.h) */
  srv_trace_ctx tctx;  /* traceparent, else a new trace */
  struct srv_trace *trace; /* trace.h: set while its execution is traced */
  char trace_key[33];  /* the stored trace's id (GET /v1/traces/{id}) */
  char id[SRV_ID_LEN]; /* module id from the URL */
  bool json_type;      /* Content-Type: application/json */
  char *body;
  size_t len, cap;
  size_t received;     /* body bytes read: len plus what b64_in decoded */
  struct srv_b64_in *b64_in; /* b64_stream.h: a large execution body's */
  size_t content_length; /* the header's, when it gave one (<= the limit) */
  bool over_limit;     /* body grew past max-body-bytes */
  srv_req_state state;
  const char *token_name;
  srv_team *team;      /* the token's team (the anonymous one without tokens) */
  unsigned scopes;     /* SRV_SCOPE_* */
  int err_kind;        /* the answer's error kind, -1 for none */
  int quota;           /* SRV_QUOTA_* that refused it (429), or -1 */
  int retry_s;         /* Retry-After, seconds (0 = 1 when retry_after) */
  int64_t exec_mem;    /* reserved from its team's exec-memory */
  bool team_held;      /* counted in its team's in-flight jobs */
  uint64_t t0_ns;
  shlo_cancel cancel;   /* SRV_CANCEL_*: shutdown past the grace period, or
                          the client hung up while the job waited or ran */
  srv_conn *conn_state;
  struct gone_watch *watch; /* listen.c, while suspended */
  uint64_t gone_ns;    /* when the hang-up was seen */
  char client[SRV_COUNT_KEY]; /* token name, else address: per-client caps */
  bool client_counted; /* holds one of its client's max-client-jobs */
  size_t discarded;    /* body bytes read past an early answer */
  srv_pending pend;    /* the body while it arrives (listen.c) */
  bool close_after;    /* answer with Connection: close (framing unsure) */
  double compile_ms;   /* parse + verify + compile, when it compiled */
  /* the answer */
  int status;
  char *resp;          /* malloc'd */
  size_t resp_len;
  /* b64_stream.h: resp's holes, when a 200 answer's large base64 outputs
   * are encoded as they are sent */
  struct srv_b64_reply *b64_reply;
  bool resp_text;      /* text/plain (metrics) instead of JSON */
  bool retry_after;
  char module[SRV_ID_LEN];
  bool executed;
  double exec_s;
  /* Open Inference Protocol (oip.c): the request's
   * Inference-Header-Content-Length (-1 none), and the JSON part of a
   * binary answer (0: the answer is all JSON) */
  int64_t oip_header_len;
  size_t oip_json_len;
  struct srv_request *prev, *next; /* in-flight jobs */
  /* executions.c: the execution this job runs, or this request streams
   * into or out of, and the request's streaming state */
  struct srv_execution *exe;
  struct srv_stream *stream;
} srv_request;

struct srv_server {
  srv_config cfg;
  uv_loop_t *loop;
  int listen_fd;       /* listen.c */
  bool listening;
  uv_poll_t listen_poll;
  uv_timer_t sweep_timer;
  uint64_t accept_paused_ns; /* out of descriptors: accept again then */
  srv_conn *conns;
  srv_counts per_ip;     /* open connections by address */
  srv_counts per_client; /* requests in flight by client */
  char **argv;           /* for SIGHUP's reload of the configuration */
  int argc;
  struct MHD_Daemon *mhd;
  uv_poll_t mhd_poll;
  uv_timer_t mhd_timer;
  uv_signal_t sig_int, sig_term;
  uv_timer_t drain_timer;
  srv_pool pool;
  srv_cache cache;
  srv_names names;  /* module names per team and version (names.h) */
  struct srv_repository *repo; /* repository.h: NULL without
                                  --model-repository */
  srv_metrics metrics;
  srv_token *tokens;
  int n_tokens;
  srv_teams teams;
  srv_team *anonymous;   /* every request's team when there are no tokens */
  FILE *log;
  FILE *audit;           /* audit.c; NULL when off */
  FILE *devnull;       /* interpreter.print output of executions */
  bool mpi;            /* grid-backend mpi: big grids go across the ranks */
  int port;
  int n_conns;         /* open TCP connections */
  int n_active;        /* requests between first byte and completion */
  srv_request *inflight;
  bool draining, canceled;
  uint64_t drain_t0_ns;
  uint64_t started_ns;
  struct srv_binary *bin; /* NULL when --binary-port is 0 */
  struct srv_execs *execs; /* executions.c */
  struct srv_traces *traces; /* traces.c: the kept traces */
  struct srv_modmetrics *modmetrics; /* modmetrics.c, made at first use */
  struct srv_history *history; /* history.c: the console's rings */
  struct srv_otlp *otlp;       /* otlp.c: NULL unless otlp-endpoint */
  struct srv_batcher *batcher; /* batch.h: dynamic batching's queues */
  /* partly received bodies and frames, least recently grown first */
  srv_pending *pending, *pending_tail;
  uint64_t pending_bytes;
};

uint64_t srv_now_ns(void);
/* A message into the caller's buffer of cap bytes, cut to fit (the
 * reasons the repository and its warm-ups give; repository.c). */
void srv_say(char *out, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The log lines' time stamp, "2025-01-31T12:00:00.123Z" (http.c). */
void srv_log_time(char out[48]);
/* Append n bytes to r->body, kept NUL-terminated (http.c); false when out
 * of memory. */
bool srv_body_append(srv_request *r, const char *p, size_t n);

/* memory.c: after a request of this many bytes (body + reply) is freed,
 * return free memory to the system, so RSS comes back to its baseline. */
#define SRV_TRIM_AFTER_BYTES ((size_t)8 << 20)
void srv_memory_after_request(size_t bytes);
/* At start: at most one malloc arena per worker, plus the main one
 * (unless MALLOC_ARENA_MAX says otherwise). */
void srv_memory_init(int workers);

/* http.c */
int srv_http_start(srv_server *s);
void srv_http_pump(srv_server *s);     /* run MHD, re-arm its timer */
void srv_http_drained(void *srv);      /* the pool delivered a batch */
void srv_begin_shutdown(srv_server *s);
/* Queue r's answer (status, resp) on its connection; r->state = RS_DONE. */
enum MHD_Result srv_http_reply(srv_request *r);

/* listen.c (see there) */
int srv_listen_start(srv_server *s, const struct sockaddr *addr,
                     socklen_t len);
void srv_listen_stop(srv_server *s);
void srv_conn_opened(srv_server *s, struct MHD_Connection *c, void **ctx);
void srv_conn_closed(srv_server *s, void **ctx);
srv_conn *srv_conn_of(struct MHD_Connection *c);
void srv_addr_text(const struct sockaddr *a, char out[SRV_IP_LEN]);
/* Per-client caps, shared by HTTP and the binary protocol.  Connections
 * per address are counted in s->per_ip; srv_ip_full: the address holds
 * max-connections-per-ip already (the refusal is counted). */
bool srv_ip_full(srv_server *s, const char *ip);
/* Bytes came for p, which now holds `bytes` (0: complete or dropped,
 * unlisted).  Past max-pending-body-bytes the bodies that waited longest
 * for a byte are shed, p last.  Returns false when p itself was shed. */
bool srv_pending_set(srv_server *s, srv_pending *p, uint64_t bytes);
/* Answer a socket that is not admitted with `answer` (n bytes, already
 * made) and close it once the client read it, as for HTTP's 503s. */
void srv_refuse_socket(srv_server *s, int fd, const void *answer, size_t n);
/* Close an HTTP connection whose request is refused mid-body: a raw 503
 * naming limit, then the end of the stream (libmicrohttpd closes it). */
void srv_conn_shed(srv_server *s, srv_conn *k, const char *limit,
                   long long value);
/* The connections' memory figures for /metrics. */
struct strbuf;
void srv_listen_metrics(srv_server *s, struct strbuf *b);
/* An execution's answer as JSON text would pass max-json-answer-bytes:
 * true with r answered 413 (http.c). */
bool srv_json_answer_refused(srv_request *r, shlo_value *const *outputs,
                             int n_outputs, int n_procs, bool b64);
/* The client (token name, else address) has max-client-jobs jobs running
 * or queued: true with err set (limit, 429; the refusal is counted). */
bool srv_client_full(srv_server *s, const char *client,
                     shlo_proto_error *err);
/* Count one more job of client and make it the owner of job in the pool
 * (max-client-running); false, nothing counted, when the table cannot
 * grow.  Release each held job once, on the loop. */
bool srv_client_hold(srv_server *s, const char *client, srv_job *job);
void srv_client_release(srv_server *s, const char *client);
/* Watch a suspended request's socket: a hang-up sets its cancel flag. */
void srv_watch_gone(srv_request *r);
void srv_unwatch_gone(srv_request *r);

/* jobs.c: work functions (worker threads) */
void srv_job_execute(srv_job *j);
/* On the loop thread: answer a tiny cached execution right away (true,
 * reply set) or decline (false, nothing changed but the parse; *lane then
 * says where the job belongs: short when its module is compiled and
 * known to run quickly). */
bool srv_job_execute_inline(srv_request *r, srv_lane *lane);
void srv_job_register(srv_job *j);
/* Set r's answer to an error (status = the kind's or http). */
void srv_reply_error(srv_request *r, int kind, int http, int line, int col,
                     const char *fmt, ...) __attribute__((format(printf, 6, 7)));
/* Set r's answer to 503 "canceled: ..." for the reason in r->cancel. */
void srv_reply_canceled(srv_request *r);

/* Bytes of a value of type t (tuples summed; 0 for what is no tensor). */
size_t srv_type_bytes(const shlo_type *t);

/* Whether a compiled entry is tiny enough for the loop thread to run
 * (config inline-max-work; jobs.c, binary_exec.c): every step
 * data-parallel, at most that many elements written in all. */
bool srv_inline_ok(const srv_server *s, const shlo_executable *x);

/* jobs.c, shared with the binary protocol (binary_exec.c). */
/* The cached module of a program's text, or a new unlinked entry parsed
 * and verified now (*cached false; the caller publishes it with
 * cache_insert once its entry compiled).  A reference; NULL with err set
 * on failure.  *ms grows by the parse and verify time.  gone: the
 * request's cancel flag (nonzero: gone), which stops the parse. */
cache_entry *srv_module_get(srv_server *s, const char *text, size_t len,
                            int replicas, int partitions,
                            const shlo_cancel *gone, bool *cached,
                            double *ms, shlo_proto_error *err);
/* The error of a compile its cancel flag stopped: kind timeout, 503,
 * "canceled: the server is shutting down" or "...: the client went away"
 * (a compile stops only when all who wait for it are gone, or at
 * shutdown; see cache_waiter). */
void srv_compile_canceled(srv_server *s, shlo_proto_error *err);
/* The lane of an execution of e's compiled entry x (NULL: not compiled
 * yet, so long): short when x's work is small or e's recent runs were
 * quick (PROTOCOL.md, "Lanes"). */
srv_lane srv_lane_of(cache_entry *e, const shlo_executable *x);
/* An engine failure as a wire error ("not implemented: ..." prefixed to
 * SHLO_EUNSUPPORTED messages that do not say so). */
void srv_error_from_diag(shlo_proto_error *e, shlo_status st,
                         const shlo_diag *d);

/* binary.c: the binary protocol listener (PROTOCOL.md part 2). */
struct srv_binary;
int srv_binary_start(srv_server *s);   /* 0 when off or listening */
void srv_binary_quiesce(srv_server *s); /* shutdown begins: no new work */
bool srv_binary_busy(srv_server *s);    /* requests still running */
int srv_binary_cancel_all(srv_server *s); /* grace over: how many */
void srv_binary_stop(srv_server *s);    /* close every handle */
/* An execution's queue or state changed: move binary streams on. */
void srv_binary_streams_pump(srv_server *s);
struct strbuf;
void srv_binary_metrics(srv_server *s, struct strbuf *b);

/* metrics.c */
void srv_metrics_request(srv_metrics *m, srv_route route, int status);
void srv_metrics_exec(srv_metrics *m, double seconds);
void srv_histogram_add(srv_histogram *h, double seconds);
/* The latency bucket a duration falls in (SRV_LAT_BUCKETS: +Inf). */
int srv_lat_bucket(double seconds);
/* The q-quantile, seconds, of counts per latency bucket (not cumulative),
 * interpolated within its bucket; NaN when the counts are all 0. */
double srv_histogram_quantile(const uint64_t counts[SRV_LAT_BUCKETS + 1],
                              double q);
/* One histogram's series; labels is "" or `name="value",...`. */
struct strbuf;
void srv_put_histogram(struct strbuf *b, const char *name,
                       const char *labels, const srv_histogram *h);
/* A job's wait in its lane's queue, when it went through one. */
void srv_metrics_queue_wait(srv_metrics *m, const srv_job *j);
/* A finished job's queue wait, compile time and run time. */
void srv_metrics_job(srv_metrics *m, const srv_request *r);
char *srv_metrics_text(srv_server *s);
/* metrics_help.c: text (taken over) with a # HELP line before each
 * # TYPE line that has none; NULL when out of memory. */
char *srv_metrics_add_help(char *text);

/* auth.c */
int srv_auth_load(srv_server *s, const char *path);
/* The token's name, or NULL if the header carries no known token. */
const char *srv_auth_check(const srv_server *s, const char *authorization);
/* The token an Authorization header carries, or NULL. */
const srv_token *srv_auth_find(const srv_server *s, const char *authorization);

/* quota.c: team quotas at the HTTP door (loop thread) */
/* Set up the teams: defaults from the config, the anonymous team, the
 * cache shares; again after a reload.  -1 on OOM. */
int srv_quota_setup(srv_server *s);
/* Refuse r with 429 naming quota q (and Retry-After retry_s). */
void srv_quota_refuse(srv_request *r, int q, int retry_s);
/* The rate quota for a request just authenticated: false = refused. */
bool srv_quota_rate(srv_request *r);
/* Hold r against its team's in-flight jobs (false = refused) / let go. */
bool srv_quota_hold(srv_request *r);
void srv_quota_release(srv_request *r);
/* Count a finished request in its team's figures (on_completed). */
void srv_team_finished(srv_request *r, bool completed);
/* The owner whose modules r may see: its team, NULL (all) for admin. */
const void *srv_visible_owner(const srv_request *r);
/* The team whose names a listing shows r: its own; NULL (every team's,
 * each with its team) for an admin's token; the one team without tokens. */
const srv_team *srv_listing_team(const srv_request *r);

/* audit.c: one JSON line per request */
typedef struct srv_audit_rec {
  const char *protocol;   /* "http" or "binary" */
  const char *request_id; /* reqid.h */
  const char *trace_id;   /* a stored trace's id, or NULL */
  const char *team, *token_name, *method, *route, *module, *client;
  int status;             /* HTTP status (binary: the error kind's) */
  int err_kind;           /* -1: none */
  double queue_ms, compile_ms, exec_ms, total_ms;
  uint64_t bytes_in, bytes_out;
} srv_audit_rec;
/* (Re)open the audit log the config names; keeps the old one on error. */
int srv_audit_open(srv_server *s);
void srv_audit_close(srv_server *s);
void srv_audit_write(srv_server *s, const srv_audit_rec *a);
/* The record of a finished HTTP request. */
void srv_audit_request(srv_server *s, const srv_request *r);
void srv_auth_free(srv_server *s);

/* service.c: the supervisor's view (systemd's notify protocol, SIGHUP) */
/* Send `KEY=VALUE` lines to $NOTIFY_SOCKET; 0 also when there is none. */
int srv_service_notify(const char *state);
/* Watch SIGHUP: reload the tokens file, reopen the log file. */
void srv_service_start(srv_server *s);
/* After the loop has run out: close the SIGHUP handle, free what reloads
 * replaced. */
void srv_service_stop(srv_server *s);

#endif
