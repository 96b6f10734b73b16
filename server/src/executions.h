/* SPDX-License-Identifier: Apache-2.0 */
/* Asynchronous executions as HTTP resources (PROTOCOL.md "Executions"):
 *
 *   POST   /v1/executions                      start one -> 202 {id, state}
 *   GET    /v1/executions/{id}[?wait_ms=N]     its state (and outputs)
 *   DELETE /v1/executions/{id}                 cancel; answers once ended
 *   POST   /v1/executions/{id}/infeed          feed values (NDJSON stream)
 *   GET    /v1/executions/{id}/outfeed         drain values (NDJSON stream)
 *   POST|GET /v1/executions/{id}/channels/{c}  host transfer channel c
 *
 * An execution is a job on the worker pool (jobs.c runs it like a
 * synchronous one, on a process grid whose infeed, outfeed and host
 * channel queues it gets from srv_exec_bind).  Everything else belongs to
 * the loop thread: the execution table, the connections that feed and
 * drain the queues (suspended while a queue is full or empty, resumed when
 * a queue's notify wakes the loop), the idle and retention sweeps. */
#ifndef SHLO_SRV_EXECUTIONS_H
#define SHLO_SRV_EXECUTIONS_H

#include "server.h"
#include "shlo/grid.h"

/* Start the module: its wake-up async handle and sweep timer (loop). */
int srv_execs_start(srv_server *s);
/* Shutdown: cancel every running execution with `why` (SRV_CANCEL_*);
 * how many. */
int srv_execs_cancel_all(srv_server *s, int why);
/* Any execution still running (its job holds a worker)? */
bool srv_execs_busy(srv_server *s);
/* Before MHD_stop_daemon: resume every suspended connection; then close
 * the handles.  The table is freed once the loop has closed them. */
void srv_execs_stop(srv_server *s);

/* The route of an /v1/executions URL (R_OTHER if it is none); id gets
 * the execution id. */
srv_route srv_execs_match(const char *url, char *id);
/* The methods a route takes ("" if not one of ours). */
const char *srv_execs_allowed(srv_route r);
/* A request to one of our routes whose body (if any) is complete; called
 * again each time the request is resumed. */
enum MHD_Result srv_execs_dispatch(srv_request *r, const char *method);
/* A piece of an infeed / channel upload (*upload_size bytes; 0 when the
 * upload is complete).  Consumes what the queue has room for, leaves the
 * rest in *upload_size and suspends the connection (backpressure). */
enum MHD_Result srv_execs_upload(srv_request *r, const char *upload,
                                 size_t *upload_size);
/* An infeed / channel upload's headers arrived (admit): MHD_YES to read
 * its body, or its answer queued now, before the body: 404 (no such
 * execution), 400 (bad query), 409 (the execution has ended). */
enum MHD_Result srv_execs_upload_headers(srv_request *r);
/* The request is over (on_completed): let go of its execution. */
void srv_execs_request_ended(srv_request *r);
/* Prometheus lines: executions by state, bytes streamed. */
void srv_execs_metrics(srv_server *s, struct strbuf *b);

/* Worker thread (jobs.c): the execution job r->exe starts on a grid of
 * replicas x partitions; fill g's infeed, outfeed and host channel
 * members.  SHLO_ENOMEM when the queues cannot be made. */
shlo_status srv_exec_bind(struct srv_execution *x, int replicas,
                          int partitions, shlo_grid_opts *g);

#endif
