/* SPDX-License-Identifier: Apache-2.0 */
/* libshlo-client's front: URLs, call handles, synchronous calls as an
 * asynchronous call and a wait. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client_int.h"

void shlo__client_err_from_proto(shlo_client_error *err, const shlo_proto_error *e,
                           int engine_status) {
  snprintf(err->kind, sizeof err->kind, "%s", shlo_proto_err_name(e->kind));
  err->status = e->http;
  err->line = e->line;
  err->column = e->column;
  err->engine_status = engine_status;
  snprintf(err->message, sizeof err->message, "%s", e->message);
}

int shlo__client_err_conn(shlo_client_error *err, const char *fmt, ...) {
  memset(err, 0, sizeof *err);
  snprintf(err->kind, sizeof err->kind, "connection");
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err->message, sizeof err->message, fmt, ap);
  va_end(ap);
  return -1;
}

/* "shlo://host:port" or "http://host:port[/]": host (brackets removed)
 * and port; false when malformed. */
static bool parse_url(const char *url, char *host, size_t cap, int *port,
                      bool *binary) {
  const char *p;
  if (!strncmp(url, "shlo://", 7)) *binary = true, p = url + 7;
  else if (!strncmp(url, "http://", 7)) *binary = false, p = url + 7;
  else return false;
  const char *colon = *p == '[' ? strstr(p, "]:") : strrchr(p, ':');
  if (!colon) return false;
  size_t n = (size_t)(colon - p) - (*p == '[');
  if (n == 0 || n >= cap) return false;
  memcpy(host, p + (*p == '['), n);
  host[n] = 0;
  char *end;
  long v = strtol(colon + 1 + (*colon == ']'), &end, 10);
  if (v <= 0 || v > 65535 || (*end && strcmp(end, "/"))) return false;
  *port = (int)v;
  return true;
}

shlo_client *shlo_client_connect(const char *url, const char *token,
                                 shlo_client_error *err) {
  char host[256];
  int port;
  bool binary;
  if (!url || !parse_url(url, host, sizeof host, &port, &binary)) {
    shlo__client_err_conn(err, "bad server URL '%s' (shlo://host:port or "
                         "http://host:port)", url ? url : "");
    return NULL;
  }
  shlo_client *c = calloc(1, sizeof *c);
  if (!c) {
    shlo__client_err_conn(err, "out of memory");
    return NULL;
  }
  c->ops = binary ? &shlo__client_bin_ops : &shlo__client_http_ops;
  c->impl = binary ? shlo__client_bin_connect(host, port, token, err)
                   : shlo__client_http_connect(host, port, token, err);
  if (!c->impl) {
    free(c);
    return NULL;
  }
  return c;
}

void shlo_client_close(shlo_client *c) {
  if (!c) return;
  c->ops->close(c);
  free(c);
}

int shlo_client_compile(shlo_client *c, const char *program, size_t len,
                        const char *entry, shlo_client_module *out,
                        shlo_client_error *err) {
  return c->ops->compile(c, program, len, entry, out, err);
}

void shlo__client_call_finish(shlo_call *call, int status) {
  call->status = status;
  if (call->cb) call->cb(call->user, status, &call->err);
  pthread_mutex_lock(&call->lock);
  call->done = true;
  pthread_cond_broadcast(&call->cond);
  pthread_mutex_unlock(&call->lock);
}

shlo_call *shlo_client_execute_async(shlo_client *c,
                                     const shlo_client_request *rq,
                                     shlo_client_done done, void *user,
                                     shlo_client_error *err) {
  shlo_call *call = calloc(1, sizeof *call);
  if (!call) {
    shlo__client_err_conn(err, "out of memory");
    return NULL;
  }
  call->client = c;
  call->cb = done;
  call->user = user;
  call->printed_to = rq->printed;
  if (rq->printed) *rq->printed = NULL;
  pthread_mutex_init(&call->lock, NULL);
  pthread_cond_init(&call->cond, NULL);
  if (c->ops->start(c, rq, call)) {
    *err = call->err;
    pthread_mutex_destroy(&call->lock);
    pthread_cond_destroy(&call->cond);
    free(call);
    return NULL;
  }
  return call;
}

int shlo_call_wait(shlo_call *call, shlo_value ***outs, int *n_outs,
                   shlo_client_error *err) {
  pthread_mutex_lock(&call->lock);
  while (!call->done) pthread_cond_wait(&call->cond, &call->lock);
  pthread_mutex_unlock(&call->lock);
  if (call->has_thread) pthread_join(call->thread, NULL);
  int rc = call->status;
  if (rc && err) *err = call->err;
  if (!rc && outs) {
    *outs = call->outs;
    *n_outs = call->n_outs;
  } else {
    for (int i = 0; i < call->n_outs; i++) shlo_value_unref(call->outs[i]);
    free(call->outs);
    if (outs) *outs = NULL;
    if (n_outs) *n_outs = 0;
  }
  free(call->payload);
  if (call->printed_to) *call->printed_to = call->printed;
  else free(call->printed);
  pthread_mutex_destroy(&call->lock);
  pthread_cond_destroy(&call->cond);
  free(call);
  return rc;
}

void shlo_call_cancel(shlo_call *call) {
  atomic_store(&call->cancel, 1);
  call->client->ops->cancel(call);
}

int shlo_client_execute(shlo_client *c, const shlo_client_request *rq,
                        shlo_value ***outs, int *n_outs,
                        shlo_client_error *err) {
  shlo_call *call = shlo_client_execute_async(c, rq, NULL, NULL, err);
  if (!call) return -1;
  return shlo_call_wait(call, outs, n_outs, err);
}
