/* SPDX-License-Identifier: Apache-2.0 */
/* libshlo-client over HTTP/JSON: one libcurl easy handle per call (so
 * calls from many threads never share one), tensors as b64 both ways; an
 * asynchronous call is a thread doing the transfer, canceled by aborting
 * it from libcurl's progress callback. */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <curl/curl.h>

#include "client_int.h"
#include "shlo/status.h"

typedef struct http {
  char base[300];
  char auth[1100]; /* "Authorization: Bearer ..." or "" */
} http;

typedef struct buf {
  char *p;
  size_t n;
} buf;

static size_t on_body(char *p, size_t sz, size_t n, void *ud) {
  buf *b = ud;
  char *q = realloc(b->p, b->n + sz * n + 1);
  if (!q) return 0;
  memcpy(q + b->n, p, sz * n);
  b->p = q;
  b->n += sz * n;
  q[b->n] = 0;
  return sz * n;
}

static int on_progress(void *ud, curl_off_t a, curl_off_t b, curl_off_t c,
                       curl_off_t d) {
  (void)a, (void)b, (void)c, (void)d;
  shlo_call *call = ud;
  return call && atomic_load(&call->cancel) ? 1 : 0;
}

/* An error body into err; engine_status SHLO_EUNSUPPORTED for the
 * "not implemented" verify errors (JSON carries no engine status). */
static int http_error(const buf *b, long status, shlo_client_error *err) {
  shlo_proto_error e;
  if (!b->p || !shlo_proto_error_parse(b->p, b->n, &e))
    return shlo__client_err_conn(err, "HTTP %ld without an error body", status);
  shlo__client_err_from_proto(err, &e, 0);
  err->status = (int)status;
  if (e.kind == SHLO_PERR_VERIFY && strstr(e.message, "not implemented"))
    err->engine_status = SHLO_EUNSUPPORTED;
  return -1;
}

/* POST body to path; the answer's body in *out.  0 for a 200. */
static int post(http *h, const char *path, const char *body, shlo_call *call,
                buf *out, shlo_client_error *err) {
  CURL *cu = curl_easy_init();
  if (!cu) return shlo__client_err_conn(err, "cannot start libcurl");
  char url[512];
  snprintf(url, sizeof url, "%s%s", h->base, path);
  struct curl_slist *hd = curl_slist_append(NULL, "Content-Type: application/json");
  if (h->auth[0]) hd = curl_slist_append(hd, h->auth);
  curl_easy_setopt(cu, CURLOPT_URL, url);
  curl_easy_setopt(cu, CURLOPT_HTTPHEADER, hd);
  curl_easy_setopt(cu, CURLOPT_POSTFIELDS, body);
  curl_easy_setopt(cu, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(cu, CURLOPT_WRITEDATA, out);
  curl_easy_setopt(cu, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(cu, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(cu, CURLOPT_XFERINFOFUNCTION, on_progress);
  curl_easy_setopt(cu, CURLOPT_XFERINFODATA, call);
  CURLcode rc = curl_easy_perform(cu);
  long status = 0;
  curl_easy_getinfo(cu, CURLINFO_RESPONSE_CODE, &status);
  curl_slist_free_all(hd);
  curl_easy_cleanup(cu);
  if (rc == CURLE_ABORTED_BY_CALLBACK) {
    shlo__client_err_conn(err, "canceled by the client");
    snprintf(err->kind, sizeof err->kind, "timeout");
    return -1;
  }
  if (rc != CURLE_OK)
    return shlo__client_err_conn(err, "%s: %s", url, curl_easy_strerror(rc));
  return status == 200 ? 0 : http_error(out, status, err);
}

typedef struct job {
  http *h;
  shlo_call *call;
  char path[128];
  char *body;
} job;

/* The answer's "printed" (success or error body) into the call. */
static void keep_printed(shlo_call *call, const buf *out) {
  if (!call->printed_to || !out->p) return;
  cJSON *root = cJSON_ParseWithLength(out->p, out->n);
  const cJSON *p = cJSON_GetObjectItemCaseSensitive(root, "printed");
  if (cJSON_IsString(p) && p->valuestring[0])
    call->printed = strdup(p->valuestring);
  cJSON_Delete(root);
}

static void *run_job(void *arg) {
  job *j = arg;
  shlo_call *call = j->call;
  buf out = {0};
  int rc = post(j->h, j->path, j->body, call, &out, &call->err);
  keep_printed(call, &out);
  if (!rc) {
    shlo_proto_error e;
    if (shlo_proto_exec_resp_parse(out.p, out.n, NULL, &call->outs,
                                   &call->n_outs, &e)) {
      shlo__client_err_from_proto(&call->err, &e, 0);
      rc = -1;
    }
  }
  free(out.p);
  free(j->body);
  free(j);
  shlo__client_call_finish(call, rc);
  return NULL;
}

/* The body with "replicas" and "partitions" (0: the module's) and
 * "print" added; body is taken over, NULL when out of memory. */
static char *with_members(char *body, int replicas, int partitions,
                          bool print) {
  size_t n = strlen(body);
  char *b = realloc(body, n + 80);
  if (!b) {
    free(body);
    return NULL;
  }
  char *end = strrchr(b, '}'); /* the body is one JSON object */
  int k = 0;
  if (replicas) k += sprintf(end + k, ", \"replicas\": %d", replicas);
  if (partitions) k += sprintf(end + k, ", \"partitions\": %d", partitions);
  if (print) k += sprintf(end + k, ", \"print\": true");
  strcpy(end + k, "}");
  return b;
}

/* Whether a program is a portable artifact (MLIR bytecode), by its magic
 * (the library does not link the engine's shlo_is_artifact). */
static bool is_artifact(const char *p, size_t len) {
  return len >= 4 && !memcmp(p, "ML\xefR", 4);
}

/* A portable artifact's bytes are not JSON text: they go as base64 in an
 * "artifact" member (body is taken over; NULL when out of memory). */
static char *with_artifact(char *body, const char *bytes, size_t len) {
  char *b64 = body ? shlo_proto_b64_encode(bytes, len) : NULL;
  size_t n = body ? strlen(body) : 0;
  char *b = b64 ? realloc(body, n + strlen(b64) + 32) : NULL;
  if (!b) {
    free(b64);
    free(body);
    return NULL;
  }
  char *end = strrchr(b, '}'); /* the body is one JSON object */
  sprintf(end, "%s\"artifact\": \"%s\"}", end > b + 1 ? ", " : "", b64);
  free(b64);
  return b;
}

static int http_start(shlo_client *c, const shlo_client_request *rq,
                      shlo_call *call) {
  http *h = c->impl;
  char *program = NULL;
  bool artifact = rq->program && is_artifact(rq->program, rq->program_len);
  if (rq->program && !artifact &&
      !(program = strndup(rq->program, rq->program_len)))
    return shlo__client_err_conn(&call->err, "out of memory");
  job *j = calloc(1, sizeof *j);
  if (j)
    j->body = shlo_proto_exec_req_build(program, rq->entry, rq->inputs,
                                        rq->n_inputs, rq->timeout_ms, true,
                                        true);
  free(program);
  if (j && artifact)
    j->body = with_artifact(j->body, rq->program, rq->program_len);
  if (j && j->body && (rq->replicas || rq->partitions || rq->printed))
    j->body = with_members(j->body, rq->replicas, rq->partitions,
                           rq->printed != NULL);
  if (!j || !j->body) {
    free(j);
    return shlo__client_err_conn(&call->err, "out of memory");
  }
  j->h = h;
  j->call = call;
  if (rq->program) snprintf(j->path, sizeof j->path, "/execute");
  else snprintf(j->path, sizeof j->path, "/v1/modules/%.80s/execute",
                rq->module_id ? rq->module_id : "");
  call->has_thread = true;
  if (pthread_create(&call->thread, NULL, run_job, j)) {
    call->has_thread = false;
    free(j->body);
    free(j);
    return shlo__client_err_conn(&call->err, "cannot start a thread");
  }
  return 0;
}

static void http_cancel(shlo_call *call) { (void)call; /* the flag does it */ }

/* The entry's signature from a module info's "functions". */
static void signature_of(const cJSON *root, const char *entry, char *sig,
                         size_t cap) {
  const cJSON *fs = cJSON_GetObjectItemCaseSensitive(root, "functions"), *f;
  sig[0] = 0;
  cJSON_ArrayForEach(f, fs) {
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(f, "name");
    if (!cJSON_IsString(n) || strcmp(n->valuestring, entry)) continue;
    const char *keys[2] = {"inputs", "outputs"};
    for (int k = 0; k < 2; k++) {
      const cJSON *a = cJSON_GetObjectItemCaseSensitive(f, keys[k]), *t;
      int cnt = cJSON_GetArraySize(a), i = 0;
      bool paren = k == 0 || cnt != 1;
      size_t l = strlen(sig);
      snprintf(sig + l, cap - l, "%s%s", k ? " -> " : "", paren ? "(" : "");
      cJSON_ArrayForEach(t, a) {
        l = strlen(sig);
        snprintf(sig + l, cap - l, "%s%s", i++ ? ", " : "",
                 cJSON_IsString(t) ? t->valuestring : "?");
      }
      l = strlen(sig);
      snprintf(sig + l, cap - l, "%s", paren ? ")" : "");
    }
  }
}

static int http_compile(shlo_client *c, const char *program, size_t len,
                        const char *entry, shlo_client_module *out,
                        shlo_client_error *err) {
  http *h = c->impl;
  cJSON *req = cJSON_CreateObject();
  bool artifact = is_artifact(program, len);
  char *text = artifact ? shlo_proto_b64_encode(program, len)
                        : strndup(program, len);
  if (!req || !text ||
      !cJSON_AddStringToObject(req, artifact ? "artifact" : "program", text) ||
      (entry && !cJSON_AddStringToObject(req, "entry", entry))) {
    cJSON_Delete(req);
    free(text);
    return shlo__client_err_conn(err, "out of memory");
  }
  free(text);
  char *body = cJSON_PrintUnformatted(req);
  cJSON_Delete(req);
  buf b = {0};
  int rc = body ? post(h, "/v1/modules", body, NULL, &b, err)
                : shlo__client_err_conn(err, "out of memory");
  free(body);
  cJSON *root = rc ? NULL : cJSON_Parse(b.p);
  const cJSON *id = cJSON_GetObjectItemCaseSensitive(root, "id");
  const cJSON *en = cJSON_GetObjectItemCaseSensitive(root, "entry");
  if (!rc && (!cJSON_IsString(id) || !cJSON_IsString(en)))
    rc = shlo__client_err_conn(err, "malformed answer from /v1/modules");
  if (!rc) {
    snprintf(out->id, sizeof out->id, "%s", id->valuestring);
    snprintf(out->entry, sizeof out->entry, "%s", en->valuestring);
    signature_of(root, en->valuestring, out->signature, sizeof out->signature);
  }
  cJSON_Delete(root);
  free(b.p);
  return rc;
}

static void curl_init(void) { curl_global_init(CURL_GLOBAL_DEFAULT); }

void *shlo__client_http_connect(const char *host, int port, const char *token,
                          shlo_client_error *err) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, curl_init);
  http *h = calloc(1, sizeof *h);
  if (!h) {
    shlo__client_err_conn(err, "out of memory");
    return NULL;
  }
  bool v6 = strchr(host, ':') != NULL;
  snprintf(h->base, sizeof h->base, "http://%s%s%s:%d", v6 ? "[" : "", host,
           v6 ? "]" : "", port);
  if (token) snprintf(h->auth, sizeof h->auth, "Authorization: Bearer %s", token);
  return h;
}

static void http_close(shlo_client *c) { free(c->impl); }

const client_ops shlo__client_http_ops = {http_compile, http_start, http_cancel,
                                    http_close};
