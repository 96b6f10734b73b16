/* SPDX-License-Identifier: Apache-2.0 */
/* Traces of executions at the server (docs/observability.md): which
 * executions are traced (asked for, or sampled at trace-sample-rate), the
 * spans a request adds around the engine's step spans, and the kept
 * traces that GET /v1/traces/{id} answers, bounded in count, bytes and
 * age and visible only to the team that ran the execution (and admins).
 * Any thread: the store has its own lock. */
#ifndef SHLO_SRV_TRACES_H
#define SHLO_SRV_TRACES_H

#include <stdbool.h>
#include <stdint.h>

#include "shlo/trace.h"

struct srv_server;
struct srv_team;
struct srv_trace_ctx;

#define SRV_TRACE_KEY_LEN 33 /* 32 hex digits and a NUL */

/* The kept traces (srv_server.traces). */
int srv_traces_start(struct srv_server *s); /* -1 on OOM */
void srv_traces_stop(struct srv_server *s);

/* One request's trace while it is recorded. */
typedef struct srv_trace {
  shlo_trace *t;
  char key[SRV_TRACE_KEY_LEN];
  void *rec; /* a kept record reused with t, or NULL (traces.c's) */
} srv_trace;

/* Whether to trace an execution: asked for, else drawn at the
 * configured trace-sample-rate. */
bool srv_trace_wanted(const struct srv_server *s, bool asked);
/* Start recording: a new trace whose origin is t0_ns (when the request
 * arrived) and a new key; false (nothing to free) when out of memory. */
bool srv_trace_begin(const struct srv_server *s, srv_trace *tr,
                     uint64_t t0_ns);
/* A span from t0 until now; returns now. */
uint64_t srv_trace_span(srv_trace *tr, const char *name, uint64_t t0_ns);
/* What a kept trace says about its request, in its otherData. */
typedef struct srv_trace_about {
  const char *protocol, *request_id, *team, *route, *module;
  const struct srv_trace_ctx *ctx; /* NULL for binary requests */
  int status;
} srv_trace_about;
/* Close the root span (t0 .. now), render the trace and keep it for
 * team; frees tr's trace either way.  Render while the executable whose
 * steps it holds is alive. */
void srv_trace_finish(struct srv_server *s, srv_trace *tr, uint64_t t0_ns,
                      const struct srv_team *team,
                      const srv_trace_about *about);
/* json (a malloc'd JSON object, taken over) with "trace_id": key added
 * at its end; json itself when it is no object, NULL when out of
 * memory. */
char *srv_json_add_trace_id(char *json, const char *key);
/* Drop a trace without keeping it. */
void srv_trace_discard(srv_trace *tr);

/* A kept trace's JSON (malloc'd), or NULL: no such key, expired, or
 * another team's (visible_owner NULL: an admin, every team's). */
char *srv_traces_get(struct srv_server *s, const char *key,
                     const void *visible_owner);

/* GET /v1/traces/{id} (loop thread): the answer set on r. */
struct srv_request;
void srv_traces_answer(struct srv_request *r);
/* The figures of /metrics. */
struct strbuf;
void srv_traces_metrics(struct srv_server *s, struct strbuf *b);

#endif
