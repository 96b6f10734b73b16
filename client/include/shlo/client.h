/* SPDX-License-Identifier: Apache-2.0 */
/* libshlo-client: talk to shlo-server from C.
 *
 *   shlo_client_error err;
 *   shlo_client *c = shlo_client_connect("shlo://127.0.0.1:9090", NULL, &err);
 *   shlo_client_request rq = {.program = text, .program_len = len,
 *                             .inputs = args, .n_inputs = n};
 *   shlo_value **outs; int n_outs;
 *   if (shlo_client_execute(c, &rq, &outs, &n_outs, &err)) ... err.message
 *
 * URLs: shlo://host:port speaks the binary protocol (PROTOCOL.md part 2)
 * over one multiplexed TCP connection; http://host:port speaks HTTP/JSON
 * (part 1, inputs and outputs as b64) through libcurl.  A client is
 * thread-safe: any number of threads may call it at once.  Values are the
 * engine's (shlo/tensor.h); outputs are new references the caller
 * releases with shlo_value_release and an array it frees with free().
 * Functions return 0 or -1 with *err filled. */
#ifndef SHLO_CLIENT_H
#define SHLO_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "shlo/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SHLO_CLIENT_API __attribute__((visibility("default")))

typedef struct shlo_client shlo_client;
typedef struct shlo_call shlo_call;

/* A failure: kind as the JSON errors spell it ("parse", "verify",
 * "input", "limit", "runtime", "timeout", "auth", "not_found", or
 * "connection" for a transport failure), the HTTP status the server gave
 * it, the place (0 = absent), the engine's status when the server sent
 * one (SHLO_EUNSUPPORTED: an op this build lacks), and the message. */
typedef struct shlo_client_error {
  char kind[16];
  int status;
  int line, column;
  int engine_status;
  char message[1200];
} shlo_client_error;

/* One execution: a program's text, or the id of a compiled module
 * ("sha256:<hex>"); entry NULL = the module's entry function; replicas,
 * partitions 0 = the module's grid; timeout_ms 0 = the server's default.
 * Inputs are borrowed for the call.  printed, when not NULL, asks the
 * server for what the program's interpreter.print ops wrote: when the
 * call ends (success or failure) *printed is that text, malloc'd and
 * NUL-terminated, for the caller to free, or NULL when nothing was
 * printed. */
typedef struct shlo_client_request {
  const char *program;
  size_t program_len;
  const char *module_id;
  const char *entry;
  shlo_value *const *inputs;
  int n_inputs;
  int replicas, partitions;
  double timeout_ms;
  char **printed;
} shlo_client_request;

typedef struct shlo_client_module {
  char id[80];         /* "sha256:<hex>" */
  char entry[256];
  char signature[4096];
} shlo_client_module;

/* Connect (the binary protocol says HELLO here; token may be NULL). */
SHLO_CLIENT_API shlo_client *shlo_client_connect(const char *url,
                                                 const char *token,
                                                 shlo_client_error *err);
/* Close; calls still running end with a "connection" error. */
SHLO_CLIENT_API void shlo_client_close(shlo_client *c);

SHLO_CLIENT_API int shlo_client_compile(shlo_client *c, const char *program,
                                        size_t len, const char *entry,
                                        shlo_client_module *out,
                                        shlo_client_error *err);
SHLO_CLIENT_API int shlo_client_execute(shlo_client *c,
                                        const shlo_client_request *rq,
                                        shlo_value ***outs, int *n_outs,
                                        shlo_client_error *err);

/* Asynchronous execution: returns a handle at once (NULL with *err on
 * failure to send).  done, when not NULL, is called once on a client
 * thread when the answer arrives (status 0 or -1; err valid during the
 * call only); the handle must still be released by shlo_call_wait, which
 * blocks until the answer and hands the outputs over (NULL outs: they are
 * dropped), then frees the handle.  The request's inputs may be released
 * as soon as this returns. */
typedef void (*shlo_client_done)(void *user, int status,
                                 const shlo_client_error *err);
SHLO_CLIENT_API shlo_call *shlo_client_execute_async(
    shlo_client *c, const shlo_client_request *rq, shlo_client_done done,
    void *user, shlo_client_error *err);
SHLO_CLIENT_API int shlo_call_wait(shlo_call *call, shlo_value ***outs,
                                   int *n_outs, shlo_client_error *err);
/* Ask the server to stop the call (it answers a "timeout" error unless it
 * finished first).  The handle stays valid until shlo_call_wait. */
SHLO_CLIENT_API void shlo_call_cancel(shlo_call *call);

/* ---- streaming executions (shlo:// only, server protocol version 2) ----
 *
 *   shlo_execution *x = shlo_client_start(c, &rq, &err);
 *   shlo_execution_feed(x, value, 0, 0, &err);   // one thread feeds...
 *   while (shlo_execution_next(x, &v, &err) == 1) ... shlo_value_release(v);
 *   shlo_execution_wait(x, &json, &err);          // the final state
 *   shlo_execution_free(x);
 *
 * The program runs while the client feeds its infeed and drains its
 * outfeed (PROTOCOL.md part 2, "Streaming executions").  feed and next may
 * run in different threads at once (they must, when the program's queues
 * are bounded: a feeder blocks while its queue is full).  Closing the
 * client cancels the executions it started; free executions first. */
typedef struct shlo_execution shlo_execution;

/* Start rq asynchronously: the execution, or NULL with *err.  An http://
 * client answers "input" (use the HTTP routes of PROTOCOL.md). */
SHLO_CLIENT_API shlo_execution *shlo_client_start(
    shlo_client *c, const shlo_client_request *rq, shlo_client_error *err);
/* Its id, "ex-<16 hex>" (also valid on the HTTP routes). */
SHLO_CLIENT_API const char *shlo_execution_id(const shlo_execution *x);
/* Send one tensor to process (replica, partition)'s infeed.  Up to 8
 * INFEEDs per execution are in flight unanswered, so values stream
 * without a round trip each: feed returns once the value is sent and the
 * one 8 before it was queued (it blocks while the server's queue is
 * full).  A refused value fails that feed or a later one, and every feed
 * after it; shlo_execution_feed_flush waits for every answer.  v may be
 * released as soon as feed returns.  An execution's feeds travel on a
 * connection of their own, opened at its first feed (same server and
 * token) and closed by shlo_execution_free: the server reads nothing
 * more from a connection whose INFEED waits for room, and next, wait and
 * cancel must still reach it then. */
SHLO_CLIENT_API int shlo_execution_feed(shlo_execution *x,
                                        const shlo_value *v, int replica,
                                        int partition,
                                        shlo_client_error *err);
SHLO_CLIENT_API int shlo_execution_feed_flush(shlo_execution *x,
                                              shlo_client_error *err);
/* The next value the program outfeeds (every process's, as they come):
 * 1 with *out (a new reference), 0 once the execution ended and every
 * value was taken, -1 with *err.  The first call subscribes. */
SHLO_CLIENT_API int shlo_execution_next(shlo_execution *x, shlo_value **out,
                                        shlo_client_error *err);
/* Wait for the end; *state_json (when not NULL) gets the final state
 * object as the HTTP route answers it (malloc'd).  0 when it succeeded,
 * -1 with *err otherwise (kind "timeout" for a cancel). */
SHLO_CLIENT_API int shlo_execution_wait(shlo_execution *x, char **state_json,
                                        shlo_client_error *err);
/* Cancel it; returns once it has ended. */
SHLO_CLIENT_API int shlo_execution_cancel(shlo_execution *x,
                                          shlo_client_error *err);
/* Forget the handle (the execution runs on unless canceled); before
 * shlo_client_close. */
SHLO_CLIENT_API void shlo_execution_free(shlo_execution *x);

#ifdef __cplusplus
}
#endif

#endif
