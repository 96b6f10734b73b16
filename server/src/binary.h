/* SPDX-License-Identifier: Apache-2.0 */
/* The binary protocol's server side, split in two: binary.c owns the
 * sockets (loop thread: frames in, frames out, flow control, timeouts),
 * binary_exec.c does a request's work (a worker thread, or the loop for a
 * tiny cached program) and builds its answer.  A bin_job is what passes
 * between them. */
#ifndef SHLO_SRV_BINARY_H
#define SHLO_SRV_BINARY_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <uv.h>

#include "capture.h"
#include "server.h"
#include "shlo/binproto.h"

typedef struct bin_conn bin_conn;
typedef struct srv_binary srv_binary;

enum { BIN_CANCEL_CLIENT = 1, BIN_CANCEL_SHUTDOWN = 2 };

/* An answer as a list of pieces written in order: owned buffers (freed
 * with the answer) and borrowed tensor data (the answer holds a reference
 * to its values until the write completes). */
typedef struct bin_answer {
  uv_buf_t *bufs;
  int n_bufs, cap_bufs;
  void **owned;         /* malloc'd pieces */
  int n_owned, cap_owned;
  shlo_value **vals;    /* values whose data the pieces borrow */
  int n_vals;
  uint64_t bytes;
} bin_answer;

typedef struct bin_job {
  srv_job job;           /* first: a job pointer is a bin_job pointer */
  srv_server *srv;
  bin_conn *conn;        /* NULL once the connection closed */
  uint64_t id;
  int type;              /* SHLO_BIN_COMPILE or SHLO_BIN_EXECUTE */
  int version;
  uint64_t t0_ns;
  char req_id[SRV_REQ_ID_LEN]; /* the EXECUTE's, else made (reqid.h) */
  bool identity;         /* the RESULT carries the identity block */
  struct srv_trace *trace; /* trace.h: set while its execution is traced */
  char trace_key[33];    /* the stored trace's id, "" when not traced */
  /* the request */
  shlo_bin_execute ex;   /* EXECUTE's fixed part (COMPILE fills grid/entry) */
  char *entry;           /* malloc'd, NUL-terminated; NULL = default */
  char *program;         /* malloc'd, NUL-terminated, or NULL */
  size_t program_len;
  shlo_value **inputs;   /* ex.n_inputs owned references (some NULL while
                            reading) */
  uint64_t input_bytes;
  shlo_cancel cancel;     /* BIN_CANCEL_*: the engine's cancel flag */
  srv_team *team;        /* the connection's team and scopes */
  unsigned scopes;
  bool team_held;        /* counted in the team's in-flight jobs */
  int refused_quota;     /* SRV_QUOTA_* + 1 of a worker's refusal, 0: none */
  char client[SRV_COUNT_KEY]; /* token name, else address: per-client caps */
  bool client_counted;   /* holds one of its client's max-client-jobs */
  /* the answer */
  bool failed;
  shlo_proto_error err;
  int engine_status;
  bin_answer ans;
  srv_capture printed;   /* interpreter.print's text (SHLO_BIN_EXEC_PRINT) */
  char module[SRV_ID_LEN];
  bool executed;
  double exec_s;
  struct bin_job *prev, *next; /* the connection's running requests */
} bin_job;

/* binary_exec.c */
/* The work of a COMPILE or EXECUTE job; sets failed+err or ans. */
void bin_job_work(srv_job *j);
/* Whether an EXECUTE names a cached, compiled, tiny program the loop may
 * run itself (srv_inline_ok: config inline-max-work). */
bool bin_job_is_tiny(bin_job *b);
/* The lane of a job going to a worker: COMPILE short (compiles are
 * bounded, like HTTP registrations); EXECUTE by its module (srv_lane_of). */
srv_lane bin_job_lane(bin_job *b);
void bin_job_free(bin_job *b);
/* The ERROR frame of a failed job as its answer (replacing any other). */
int bin_answer_error(bin_job *b);
void bin_answer_free(bin_answer *a);
/* Put an OUTPUT frame with the job's printed text before its answer, when
 * it printed anything; -1 (the answer unchanged) when out of memory. */
int bin_answer_output(bin_job *b);

/* binary.c, for binary_stream.c: a connection's sending and reading. */
void bin_conn_send(bin_conn *c, bin_answer *a); /* takes *a over */
void bin_conn_send_simple(bin_conn *c, int type, uint64_t id, const void *p,
                          size_t n);
void bin_conn_send_error(bin_conn *c, uint64_t id, int type,
                         const shlo_proto_error *e);
/* ERROR for the frame being read, then close (the stream is not trusted). */
void bin_conn_fatal(bin_conn *c, shlo_proto_err_kind kind, const char *msg);
void bin_conn_count_ok(bin_conn *c, int type);
/* Stop reading frames (an infeed waits for room) / read on. */
void bin_conn_pause(bin_conn *c);
void bin_conn_unpause(bin_conn *c);
uint64_t bin_conn_out_bytes(const bin_conn *c);
srv_team *bin_conn_team(const bin_conn *c);
unsigned bin_conn_scopes(const bin_conn *c);
srv_server *bin_conn_server(const bin_conn *c);
struct bin_xconn **bin_conn_streams(bin_conn *c);

/* binary_stream.c: streaming executions over the binary protocol
 * (PROTOCOL.md part 2, "Streaming executions"). */
/* An EXECUTE with SHLO_BIN_EXEC_ASYNC, read whole: start the execution,
 * answer STARTED or ERROR; b is freed. */
void bin_xstart(bin_conn *c, bin_job *b);
/* A complete INFEED, SUBSCRIBE, WAIT or STOP payload. */
void bin_xframe(bin_conn *c, int type, uint64_t id, const char *p,
                uint64_t len);
/* Move what can move on c's streams: pending infeed, subscriptions,
 * waits.  Called on every queue change, write completion and sweep. */
void bin_xpump(bin_conn *c);
/* The connection closes: cancel the executions it started (reason
 * client_gone), let go of the rest. */
void bin_xclosed(bin_conn *c);

#endif
