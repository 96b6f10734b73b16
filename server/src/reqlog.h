/* SPDX-License-Identifier: Apache-2.0 */
/* The request log (--log): one line per request, as key=value text or,
 * with log-format json, one JSON object per line for a log pipeline
 * (docs/observability.md).  Loop thread only. */
#ifndef SHLO_SRV_REQLOG_H
#define SHLO_SRV_REQLOG_H

#include <stdbool.h>
#include <stdint.h>

struct srv_server;

typedef struct srv_log_rec {
  const char *protocol;     /* "http" or "binary" */
  const char *request_id, *team, *token, *method, *path, *route, *module;
  const char *trace_id;     /* NULL: not traced */
  const char *binary_type;  /* binary: the message ("execute") */
  uint64_t binary_id;       /* binary: the frame's request id */
  int status;               /* HTTP status (binary: the error kind's) */
  const char *error_kind;   /* NULL: none */
  double duration_ms, queue_ms, compile_ms, exec_ms;
  uint64_t bytes_in, bytes_out;
  bool aborted;             /* the client went away before its answer */
} srv_log_rec;

void srv_log_request(struct srv_server *s, const srv_log_rec *r);

#endif
