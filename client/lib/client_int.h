/* SPDX-License-Identifier: Apache-2.0 */
/* Inside libshlo-client: a call handle shared by both transports, and the
 * transports' entry points. */
#ifndef SHLO_CLIENT_INT_H
#define SHLO_CLIENT_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "shlo/client.h"
#include "shlo/protocol.h"

struct shlo_call {
  shlo_client *client;
  uint64_t id;
  pthread_mutex_t lock;
  pthread_cond_t cond;
  bool done;
  int status;
  shlo_client_error err;
  shlo_value **outs;
  int n_outs;
  void *payload;          /* binary: the answer's payload (malloc'd) */
  uint64_t payload_len;
  int type;               /* binary: the answer's message type */
  char *printed;          /* interpreter.print's text, NUL-terminated */
  size_t printed_len;
  char **printed_to;      /* the request's printed: where it goes */
  atomic_int cancel;
  shlo_client_done cb;
  void *user;
  pthread_t thread;       /* http async: the thread doing the transfer */
  bool has_thread;
  struct shlo_call *next; /* binary: the pending list */
};

typedef struct client_ops {
  int (*compile)(shlo_client *c, const char *program, size_t len,
                 const char *entry, shlo_client_module *out,
                 shlo_client_error *err);
  /* Start an execution: 0, or -1 with call->err set. */
  int (*start)(shlo_client *c, const shlo_client_request *rq,
               shlo_call *call);
  void (*cancel)(shlo_call *call);
  void (*close)(shlo_client *c);
} client_ops;

struct shlo_client {
  const client_ops *ops;
  void *impl;
};

/* Fill err from a wire error / a connection failure. */
void shlo__client_err_from_proto(shlo_client_error *err, const shlo_proto_error *e,
                           int engine_status);
int shlo__client_err_conn(shlo_client_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Finish a call (status, outputs taken over) and wake its waiter. */
void shlo__client_call_finish(shlo_call *call, int status);

/* client_bin.c, client_http.c: NULL with *err on failure. */
void *shlo__client_bin_connect(const char *host, int port, const char *token,
                         shlo_client_error *err);
void *shlo__client_http_connect(const char *host, int port, const char *token,
                          shlo_client_error *err);
extern const client_ops shlo__client_bin_ops, shlo__client_http_ops;

#endif
