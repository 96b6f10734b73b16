/* SPDX-License-Identifier: Apache-2.0 */
/* What the worker threads do: decode a request, find or build the cached
 * module, execute, encode the answer.  Runs while the request's HTTP
 * connection is suspended; touches only its request, the config (read
 * only) and the cache (locked). */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "capture.h"
#include "core/value.h"
#include "executions.h"
#include "server.h"
#include "shlo/grid.h"
#include "shlo/grid_mpi.h"
#include "artifact_body.h"
#include "b64_stream.h"
#include "batch.h"
#include "json_write.h"
#include "shlo/protocol.h"
#include "shlo/verify.h"
#include "store.h"
#include "traces.h"

void srv_reply_error(srv_request *r, int kind, int http, int line, int col,
                     const char *fmt, ...) {
  shlo_proto_error e;
  e.kind = (shlo_proto_err_kind)kind;
  e.http = http ? http : shlo_proto_err_http(e.kind);
  e.line = line;
  e.column = col;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(e.message, sizeof e.message, fmt, ap);
  va_end(ap);
  free(r->resp);
  r->resp = shlo_proto_error_json(&e);
  r->resp_len = r->resp ? strlen(r->resp) : 0;
  r->status = e.http;
  r->resp_text = false;
  r->err_kind = e.kind;
}

static void reply_proto(srv_request *r, const shlo_proto_error *e) {
  srv_reply_error(r, e->kind, e->http, e->line, e->column, "%s", e->message);
}

void srv_error_from_diag(shlo_proto_error *e, shlo_status st,
                         const shlo_diag *d) {
  shlo_proto_from_status(e, st, d->message, d->line, d->col);
  if (st == SHLO_EUNSUPPORTED && !strstr(e->message, "not implemented") &&
      !strstr(e->message, "unsupported"))
    snprintf(e->message, sizeof e->message, "not implemented: %s", d->message);
}

static void reply_diag(srv_request *r, shlo_status st, const shlo_diag *d) {
  shlo_proto_error e;
  if (st == SHLO_ECANCELED) srv_compile_canceled(r->srv, &e);
  else srv_error_from_diag(&e, st, d);
  reply_proto(r, &e);
}

static void reply_ok(srv_request *r, char *json) {
  free(r->resp);
  r->resp = json;
  if (!json) {
    srv_reply_error(r, SHLO_PERR_RUNTIME, 500, 0, 0, "out of memory");
    return;
  }
  r->resp_len = strlen(json);
  r->status = 200;
}

static double now_ms(void) { return (double)srv_now_ns() / 1e6; }

/* Is the body JSON?  By content type, or (curl --data-binary sends
 * application/x-www-form-urlencoded) by its first byte: MLIR text never
 * starts with '{'. */
static bool body_is_json(const srv_request *r) {
  if (r->json_type) return true;
  for (size_t i = 0; i < r->len; i++) {
    char c = r->body[i];
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    return c == '{';
  }
  return false;
}

static bool check_utf8(srv_request *r) {
  int64_t bad = shlo_proto_utf8_check(r->body, r->len);
  if (bad < 0) return true;
  int line = 1, col = 1;
  for (int64_t i = 0; i < bad; i++) {
    if (r->body[i] == '\n') line++, col = 1;
    else col++;
  }
  srv_reply_error(r, SHLO_PERR_INPUT, 400, line, col,
                  "the body is not valid UTF-8 (byte %lld)", (long long)bad);
  return false;
}

/* A parsed request body: JSON, or the program alone as text or as a
 * portable artifact's bytes (artifact_body.h). */
typedef struct body {
  shlo_proto_exec_req req;
  const char *program;
  size_t program_len;
  char *artifact; /* decoded from JSON "artifact", owned */
} body;

static void body_free(body *b) {
  shlo_proto_exec_req_free(&b->req);
  free(b->artifact);
  b->artifact = NULL;
}

static bool read_body_once(srv_request *r, body *b) {
  memset(b, 0, sizeof *b);
  if (srv_body_is_artifact(r->body, r->len)) { /* bytes, not UTF-8 text */
    b->program = r->body;
    b->program_len = r->len;
    return true;
  }
  if (!check_utf8(r)) return false;
  if (body_is_json(r)) {
    shlo_proto_error e;
    if (shlo_proto_exec_req_parse(r->body, r->len, &b->req, &e)) {
      reply_proto(r, &e);
      return false;
    }
    b->program = b->req.program;
    b->program_len = b->req.program_len;
    size_t n;
    int got = srv_artifact_from_json(&b->req, &b->artifact, &n, &e);
    if (got < 0) {
      body_free(b);
      reply_proto(r, &e);
      return false;
    }
    if (got) {
      b->program = b->artifact;
      b->program_len = n;
    }
    /* a grid named by one dimension is 1 in the other (PROTOCOL.md) */
    if (b->req.replicas > 0 || b->req.partitions > 0) {
      if (b->req.replicas <= 0) b->req.replicas = 1;
      if (b->req.partitions <= 0) b->req.partitions = 1;
    }
  } else if (r->len) {
    b->program = r->body;
    b->program_len = r->len;
  }
  return true;
}

/* A body some of whose base64 was decoded as it arrived that does not
 * read is read again as it was sent, for the error that one gets. */
static bool read_body(srv_request *r, body *b) {
  if (read_body_once(r, b)) return true;
  if (!srv_b64_in_unsplice(r)) return false;
  free(r->resp); /* the first reading's error */
  r->resp = NULL;
  r->resp_len = 0;
  r->err_kind = -1;
  return read_body_once(r, b);
}

/* A compile stopped by its cancel flag, as the reply's error. */
void srv_compile_canceled(srv_server *s, shlo_proto_error *err) {
  shlo_proto_fail(err, SHLO_PERR_TIMEOUT, "%s",
                  cache_stopping(&s->cache)
                      ? "canceled: the server is shutting down"
                      : "canceled: the client went away");
  err->http = 503;
}

/* Parse and verify a new program within the server's bounds; stops when
 * the request is gone or the server stops. */
static shlo_status parse_and_verify(srv_server *s, const char *text,
                                    size_t len, const shlo_cancel *gone,
                                    cache_bounds *bounds, shlo_module **m,
                                    shlo_diag *d) {
  cache_waiter w;
  cache_wait_begin(&s->cache, &w, NULL, gone);
  /* Parsing and verifying share one compile-timeout-ms. */
  bounds->cancel = &w.own_stop;
  shlo_compile_limits lim;
  cache_bounds_start(bounds, &lim);
  shlo_status st = shlo_parse_module_limited(text, len, "program", &lim, m,
                                             d);
  if (!st) {
    /* Verify once, before the module enters the cache.  Features the
     * verifier cannot judge (dynamic shapes) are left to the compiler. */
    shlo_verify_opts vo = {.limits = &lim};
    st = shlo_verify_module_first(*m, &vo, d);
  }
  cache_bounds_explain(bounds, &lim, st, d);
  cache_wait_end(&s->cache, &w);
  bounds->cancel = NULL; /* w is gone; the entry's compiles have their own */
  return st;
}

cache_entry *srv_module_get(srv_server *s, const char *text, size_t len,
                            int replicas, int partitions,
                            const shlo_cancel *gone, bool *cached,
                            double *ms, shlo_proto_error *err) {
  cache_entry *e =
      cache_find_text(&s->cache, text, len, replicas, partitions, true);
  *cached = e != NULL;
  if (e) return e;
  uint8_t key[32];
  cache_key(text, len, replicas, partitions, key);
  e = cache_get(&s->cache, key, true);
  *cached = e != NULL;
  if (e) return e;
  double t0 = now_ms();
  shlo_module *m = NULL;
  shlo_diag d;
  shlo_diag_clear(&d);
  cache_bounds bounds = {s->cfg.max_program_ops, s->cfg.compile_timeout_ms,
                         NULL, s->cfg.max_nesting_depth};
  shlo_status st = parse_and_verify(s, text, len, gone, &bounds, &m, &d);
  if (st && st != SHLO_EUNSUPPORTED) {
    shlo_module_free(m);
    if (st == SHLO_ECANCELED) srv_compile_canceled(s, err);
    else srv_error_from_diag(err, st, &d);
    return NULL;
  }
  if (shlo_module_num_funcs(m) == 0) {
    shlo_module_free(m);
    shlo_proto_fail(err, SHLO_PERR_VERIFY, "the program defines no function");
    return NULL;
  }
  e = cache_entry_new(m, key, replicas, partitions, text, len);
  if (!e) {
    shlo_module_free(m);
    shlo_proto_fail(err, SHLO_PERR_RUNTIME, "out of memory");
    err->http = 500;
    return NULL;
  }
  e->verified = st == SHLO_OK; /* compiling need not verify again */
  e->bounds = bounds;
  *ms += now_ms() - t0;
  return e;
}

/* srv_module_get with the failure as r's reply.  A module this request
 * parsed remembers the entry function it names. */
static cache_entry *get_module(srv_request *r, const char *text, size_t len,
                               const shlo_proto_exec_req *req, bool *cached,
                               double *ms) {
  shlo_proto_error e;
  cache_entry *got = srv_module_get(r->srv, text, len, req->replicas,
                                    req->partitions, &r->cancel, cached, ms,
                                    &e);
  if (!got) {
    reply_proto(r, &e);
    return NULL;
  }
  if (!*cached && req->entry && cache_entry_set_entry(got, req->entry)) {
    cache_release(&r->srv->cache, got);
    srv_reply_error(r, SHLO_PERR_RUNTIME, 500, 0, 0, "out of memory");
    return NULL;
  }
  return got;
}

/* Link a freshly parsed (and compiled) entry; returns the entry to use. */
static cache_entry *publish(srv_request *r, cache_entry *e, bool must_fit) {
  int no_room;
  srv_server *s = r->srv;
  cache_entry *got = cache_insert_for(&s->cache, e, r->team, &no_room);
  if (no_room == CACHE_NO_ROOM && must_fit) { /* the rest: others' shares */
    srv_quota_refuse(r, SRV_QUOTA_CACHE_BYTES, 1);
    cache_release(&s->cache, e);
    return NULL;
  }
  if (no_room && must_fit) {
    srv_reply_error(r, SHLO_PERR_LIMIT, 413, 0, 0,
                    "limit cache-bytes (%lld) exceeded: the module needs "
                    "about %zu bytes", (long long)s->cfg.cache_bytes,
                    e->bytes);
    cache_release(&s->cache, e);
    return NULL;
  }
  return got;
}

size_t srv_type_bytes(const shlo_type *t) {
  if (t->kind == SHLO_TYPE_TUPLE) {
    size_t n = 0;
    for (int i = 0; i < t->n_elems; i++) n += srv_type_bytes(t->elems[i]);
    return n;
  }
  if (t->kind != SHLO_TYPE_TENSOR) return 0;
  int64_t n = shlo_type_numel(t);
  return n < 0 ? 0 : (size_t)n * shlo_elem_size(t->elem);
}

/* Decode the inputs of n_procs processes into args (process-major).  With
 * one process "inputs" is [tensor...]; with more it is [[tensor...]...],
 * one list per process, or one flat list that every process gets. */
static bool decode_inputs(srv_request *r, const cJSON *inputs,
                          const shlo_func *f, int n_procs, shlo_value **args,
                          size_t *mem) {
  const srv_config *cfg = &r->srv->cfg;
  shlo_proto_limits lim = {cfg->max_tensor_elements, cfg->max_tensor_bytes,
                           (int)cfg->max_inputs};
  int n_in = inputs ? cJSON_GetArraySize(inputs) : 0;
  bool per_proc = n_procs > 1 && inputs && inputs->child &&
                  cJSON_IsArray(inputs->child);
  if (per_proc && n_in != n_procs) {
    srv_reply_error(r, SHLO_PERR_INPUT, 400, 0, 0,
                    "\"inputs\" has %d per-process lists, the grid has %d "
                    "processes", n_in, n_procs);
    return false;
  }
  for (int p = 0; p < (per_proc ? n_procs : 1); p++) {
    const cJSON *list = per_proc ? cJSON_GetArrayItem(inputs, p) : inputs;
    int n = list && cJSON_IsArray(list) ? cJSON_GetArraySize(list) : 0;
    if (list && !cJSON_IsArray(list)) {
      srv_reply_error(r, SHLO_PERR_INPUT, 400, 0, 0,
                      "inputs[%d]: expected a list of tensors", p);
      return false;
    }
    if (cfg->max_inputs && n > cfg->max_inputs) {
      srv_reply_error(r, SHLO_PERR_LIMIT, 413, 0, 0,
                      "limit max-inputs (%lld) exceeded: %d inputs",
                      (long long)cfg->max_inputs, n);
      return false;
    }
    if (n != f->n_args) {
      srv_reply_error(r, SHLO_PERR_INPUT, 400, 0, 0,
                      "@%s takes %d input%s, the request gives %d%s", f->name,
                      f->n_args, f->n_args == 1 ? "" : "s", n,
                      !inputs && f->n_args
                          ? " (a text body carries none: send JSON with "
                            "\"inputs\")"
                          : "");
      return false;
    }
    int i = 0;
    for (const cJSON *c = list ? list->child : NULL; c; c = c->next, i++) {
      char path[48];
      if (per_proc) snprintf(path, sizeof path, "inputs[%d][%d]", p, i);
      else if (i < 10) { /* the common case, without printf */
        memcpy(path, "inputs[0]", 10);
        path[7] = (char)('0' + i);
      } else {
        snprintf(path, sizeof path, "inputs[%d]", i);
      }
      const shlo_type *t = f->arg_types[i];
      if (t->kind != SHLO_TYPE_TENSOR) {
        srv_reply_error(r, SHLO_PERR_INPUT, 400, 0, 0,
                        "%s: argument %d of @%s is not a tensor; only tensor "
                        "arguments can be sent", path, i, f->name);
        return false;
      }
      shlo_proto_error pe;
      int n_sp;
      shlo_proto_b64_splice *sp = srv_b64_in_splices(r, &n_sp);
      if (shlo_proto_tensor_decode_spliced(c, t, &lim, sp, n_sp, path,
                                           &args[p * f->n_args + i], &pe)) {
        reply_proto(r, &pe);
        return false;
      }
      *mem += args[p * f->n_args + i]->nbytes * (per_proc ? 1 : (size_t)n_procs);
      if (*mem > (size_t)cfg->max_exec_memory) return true; /* caller says */
    }
  }
  if (!per_proc) /* every process gets the same values */
    for (int p = 1; p < n_procs; p++)
      for (int i = 0; i < f->n_args; i++)
        args[p * f->n_args + i] = shlo_value_ref(args[i]);
  return true;
}

/* Tiny cached programs are answered on the loop thread, without the
 * hand-off to a worker and back: for a program whose every step is
 * data-parallel and writes at most inline-max-work elements in all,
 * running it costs less than the two thread switches (DESIGN.md's "the
 * loop never blocks on compute" holds in spirit: a few microseconds,
 * bounded).  A body over this many bytes is not even parsed on the loop. */
#define SRV_INLINE_MAX_BODY 16384

/* Executions of a compiled module whose steps write at most this many
 * elements, or whose recent runs took at most SRV_SHORT_EXEC_US, go to
 * the short lane (pool.h); anything else, or unknown, to the long one. */
#define SRV_SHORT_MAX_WORK (1 << 22)
#define SRV_SHORT_EXEC_US 20000

srv_lane srv_lane_of(cache_entry *e, const shlo_executable *x) {
  if (!x) return SRV_LANE_LONG; /* still to compile: unknown run time */
  int64_t work = shlo_executable_work(x);
  if (work >= 0 && work <= SRV_SHORT_MAX_WORK) return SRV_LANE_SHORT;
  int slow = atomic_load_explicit(&e->slow_us, memory_order_relaxed);
  return slow >= 0 && slow <= SRV_SHORT_EXEC_US ? SRV_LANE_SHORT
                                                : SRV_LANE_LONG;
}

/* Whether the request's program is cached, compiled and tiny; sets *e (a
 * reference) and *x when it is, else *lane for the job. */
static bool inline_target(srv_request *r, const body *b, cache_entry **e,
                          const shlo_executable **x, srv_lane *lane) {
  srv_server *s = r->srv;
  *e = NULL;
  if (r->route == R_EXECUTE) {
    if (!b->program || b->req.replicas > 1 || b->req.partitions > 1)
      return false;
    /* not counted here: a decline goes on to the worker, which counts */
    *e = cache_find_text(&s->cache, b->program, b->program_len,
                         b->req.replicas, b->req.partitions, false);
    /* another team's program: the worker adopts it, answers cached false */
    if (*e && !cache_owns(&s->cache, *e, r->team)) {
      cache_release(&s->cache, *e);
      *e = NULL;
    }
  } else {
    uint8_t key[32];
    if (b->program || !cache_id_to_key(r->id, key)) return false;
    *e = cache_get_for(&s->cache, key, srv_visible_owner(r), false);
  }
  if (!*e) return false;
  int mr, mp;
  shlo_module_grid((*e)->m, &mr, &mp);
  *x = cache_entry_peek(*e, b->req.entry);
  /* a batching module's executions wait for their batch: never here */
  if (mr * mp == 1 && (*e)->replicas <= 1 && (*e)->partitions <= 1 &&
      srv_inline_ok(s, *x) &&
      !srv_batch_enabled(s->batcher, r->team->name, (*e)->id)) {
    /* the lookup above did not count: a decline goes on to the worker,
     * which counts it then */
    cache_count_hit(&s->cache);
    return true;
  }
  *lane = srv_lane_of(*e, *x);
  cache_release(&s->cache, *e);
  *e = NULL;
  return false;
}

bool srv_inline_ok(const srv_server *s, const shlo_executable *x) {
  int64_t work = x ? shlo_executable_work(x) : -1;
  return work >= 0 && work <= s->cfg.inline_max_work &&
         s->cfg.inline_max_work > 0;
}

static bool run_execute(srv_request *r, srv_lane *lane);

void srv_job_execute(srv_job *j) { run_execute((srv_request *)j, NULL); }

/* The lane of an execution by id whose body is too large to parse on the
 * loop: by its module's entry as posted. */
static srv_lane lane_by_id(srv_request *r) {
  uint8_t key[32];
  cache_entry *e;
  if (r->route != R_MODULE_EXEC || !cache_id_to_key(r->id, key) ||
      !(e = cache_get_for(&r->srv->cache, key, srv_visible_owner(r), false)))
    return SRV_LANE_LONG;
  srv_lane lane = srv_lane_of(e, cache_entry_peek(e, NULL));
  cache_release(&r->srv->cache, e);
  return lane;
}

bool srv_job_execute_inline(srv_request *r, srv_lane *lane) {
  *lane = SRV_LANE_LONG;
  if (r->len > SRV_INLINE_MAX_BODY || r->b64_in) {
    *lane = lane_by_id(r);
    return false;
  }
  return run_execute(r, lane);
}

/* One execution, from the parsed body to the results.  Holds a reference
 * to e, and owns args and res: exec_free releases them. */
typedef struct exec_state {
  srv_request *r;
  body b;
  cache_entry *e;
  const shlo_executable *x;
  const shlo_func *f;       /* x's entry function */
  shlo_value **args, **res; /* process-major */
  int n_args, n_res;        /* how many of args and res to release */
  int replicas, partitions, n_procs;
  double compile_ms;
  srv_trace tr;   /* tr.t set when this execution is traced */
  bool cached; /* the module and its executable came from the cache */
  bool fresh;  /* parsed by this request and not yet published */
  srv_batch_how batch; /* batch.h: whether it ran stacked with others */
  srv_capture printed; /* "print": true -- interpreter.print's text */
} exec_state;

void srv_reply_canceled(srv_request *r) {
  int why = shlo_cancel_reason(&r->cancel);
  if (why == SRV_CANCEL_CLIENT_GONE)
    srv_reply_error(r, SHLO_PERR_TIMEOUT, 503, 0, 0,
                    "canceled: the client went away");
  else if (why == SRV_CANCEL_START)
    srv_reply_error(r, SHLO_PERR_TIMEOUT, 503, 0, 0,
                    "canceled: no execution worker took it within "
                    "execution-start-timeout-s (%lld)",
                    (long long)r->srv->cfg.execution_start_timeout_s);
  else if (why == SRV_CANCEL_DELETE || why == SRV_CANCEL_IDLE)
    srv_reply_error(r, SHLO_PERR_TIMEOUT, 503, 0, 0, "canceled: %s",
                    why == SRV_CANCEL_DELETE
                        ? "DELETE /v1/executions/{id}"
                        : "no client fed or drained it for "
                          "execution-idle-ms");
  else
    srv_reply_error(r, SHLO_PERR_TIMEOUT, 503, 0, 0,
                    "canceled: the server is shutting down");
}

/* POST /v1/execute: the program in the body, cached or parsed now. */
static bool module_from_program(exec_state *ex) {
  srv_request *r = ex->r;
  const body *b = &ex->b;
  if (!b->program) {
    srv_reply_error(r, SHLO_PERR_INPUT, 400, 0, 0,
                    "no program: send StableHLO text, or JSON with "
                    "\"program\"");
    return false;
  }
  ex->e = get_module(r, b->program, b->program_len, &b->req, &ex->cached,
                     &ex->compile_ms);
  if (!ex->e) return false;
  ex->fresh = !ex->cached;
  return true;
}

/* POST /v1/modules/{id}/execute: a registered module, by its id. */
static bool module_from_id(exec_state *ex) {
  srv_request *r = ex->r;
  uint8_t key[32];
  if (ex->b.program) {
    srv_reply_error(r, SHLO_PERR_INPUT, 400, 0, 0,
                    "\"program\" is not allowed here: the module is %s",
                    r->id);
    return false;
  }
  if (!cache_id_to_key(r->id, key) ||
      !(ex->e = srv_module_by_id(r->srv, key, srv_visible_owner(r),
                                 true))) {
    srv_reply_error(r, SHLO_PERR_NOT_FOUND, 404, 0, 0,
                    "no module %s (never registered, deleted, or evicted "
                    "from the cache: POST it to /v1/modules again)", r->id);
    return false;
  }
  return true;
}

/* The NAME (an admin's TEAM/NAME too) and version (0: none) of path
 * "/v1/models/NAME[/versions/V]/execute"; false when malformed. */
static bool model_path(const char *path, char *name, size_t cap,
                       int *version) {
  const char *p = path + 11, *end = path + strlen(path) - 8; /* /execute */
  const char *vs = strstr(p, "/versions/");
  *version = 0;
  if (vs && vs < end) {
    char *stop;
    long v = strtol(vs + 10, &stop, 10);
    if (stop != end || stop == vs + 10 || v < 1 || v > INT32_MAX)
      return false;
    *version = (int)v;
    end = vs;
  }
  size_t n = (size_t)(end - p);
  if (end < p || n == 0 || n >= cap) return false;
  memcpy(name, p, n);
  name[n] = 0;
  return true;
}

/* POST /v1/models/{name}[/versions/{v}]/execute: a name resolved as /v2
 * resolves it (the caller's team's names; an admin's TEAM/NAME); an id
 * in the name's place must be a module the team owns, as on /v2. */
static bool module_from_name(exec_state *ex) {
  srv_request *r = ex->r;
  char name[2 * STORE_NAME_LEN + SRV_ID_LEN], why[512] = "";
  char whose[SRV_NAME_LEN];
  int version, found = 0;
  if (ex->b.program) {
    srv_reply_error(r, SHLO_PERR_INPUT, 400, 0, 0, "\"program\" is not "
                    "allowed here: the URL names the model");
    return false;
  }
  if (!model_path(r->path, name, sizeof name, &version)) {
    srv_reply_error(r, SHLO_PERR_NOT_FOUND, 404, 0, 0, "malformed model "
                    "name or version in %.200s", r->path);
    return false;
  }
  const void *owner = srv_visible_owner(r);
  ex->e = srv_module_by_name(r->srv, r->team, owner == NULL, name, version,
                             &found, whose, why, sizeof why);
  if (ex->e && ((owner && !found && !cache_owns(&r->srv->cache, ex->e,
                                                 owner)) ||
                (version && !found))) {
    cache_release(&r->srv->cache, ex->e); /* another team's id, or an id */
    ex->e = NULL;                          /* with a version */
    snprintf(why, sizeof why, "no model %s%s", name,
             version ? " with versions" : "");
  }
  if (!ex->e && !why[0]) /* an id: srv_module_by_id says nothing */
    snprintf(why, sizeof why, "no model %s", name);
  if (!ex->e) {
    srv_reply_error(r, SHLO_PERR_NOT_FOUND, 404, 0, 0, "%s (register a "
                    "module with \"name\", or use its id)", why);
    return false;
  }
  return true;
}

/* Find the request's module and its compiled entry; with a lane (inline
 * only), only a tiny cached one (see inline_target). */
static bool find_module(exec_state *ex, srv_lane *lane) {
  if (lane) return inline_target(ex->r, &ex->b, &ex->e, &ex->x, lane);
  if (ex->r->route == R_MODEL_EXEC) return module_from_name(ex);
  return ex->r->route == R_EXECUTE ? module_from_program(ex)
                                   : module_from_id(ex);
}

/* The program becomes the team's (making room in its own share); what
 * the answer says is the team's story: "cached" only if the team had it,
 * and a first use costs what compiling it did, whoever compiled it. */
static void adopt_for_execute(exec_state *ex) {
  srv_request *r = ex->r;
  if (cache_adopt(&r->srv->cache, ex->e, r->team, true) == CACHE_HAD) return;
  if (ex->cached) {
    ex->cached = false;
    ex->compile_ms = ex->e->cost_ms;
    r->compile_ms = 0; /* nothing compiled for this request */
    srv_team_pay_compile(ex->e->cost_ms, &r->cancel); /* nor in wall time */
  }
}

/* Compile the entry function unless the inline path found it compiled,
 * then publish a module this request parsed. */
static bool compile_entry(exec_state *ex) {
  srv_request *r = ex->r;
  bool compiled = false;
  shlo_diag d;
  shlo_diag_clear(&d);
  double t0 = now_ms();
  /* A client's hang-up stops the compile once no other request waits
   * for it; a shutdown stops it at once (cache_entry_exe). */
  if (shlo_cancel_reason(&r->cancel)) {
    srv_reply_canceled(r);
    return false;
  }
  srv_cache *c = &r->srv->cache;
  shlo_status st = ex->x ? SHLO_OK
                         : cache_entry_exe(c, ex->e, ex->b.req.entry,
                                           &r->cancel, &ex->x, &compiled, &d);
  if (compiled) {
    ex->compile_ms += now_ms() - t0;
    ex->cached = false;
  }
  if (!ex->cached) r->compile_ms = ex->compile_ms;
  if (st) {
    reply_diag(r, st, &d);
    return false;
  }
  if (ex->fresh) {
    /* Another worker may have published the same program meanwhile: then
     * use its entry (ours is freed by publish). */
    ex->e->cost_ms = ex->compile_ms;
    cache_entry *p = publish(r, ex->e, false);
    if (p != ex->e) {
      ex->e = p;
      st = cache_entry_exe(c, ex->e, ex->b.req.entry, &r->cancel, &ex->x,
                           &compiled, &d);
      if (st) {
        reply_diag(r, st, &d);
        return false;
      }
    }
  }
  if (r->route == R_EXECUTE) adopt_for_execute(ex);
  return true;
}

/* The grid: the request's, else the module's (1 x 1 by default). */
static bool choose_grid(exec_state *ex) {
  srv_request *r = ex->r;
  const cache_entry *e = ex->e;
  int R = ex->b.req.replicas, P = ex->b.req.partitions, mr, mp;
  shlo_module_grid(e->m, &mr, &mp);
  if (R <= 0) R = r->route == R_EXECUTE || e->replicas <= 0 ? mr : e->replicas;
  if (P <= 0) P = r->route == R_EXECUTE || e->partitions <= 0 ? mp : e->partitions;
  if ((int64_t)R * P > 4096) {
    srv_reply_error(r, SHLO_PERR_LIMIT, 413, 0, 0,
                    "grid %d x %d: more than 4096 processes", R, P);
    return false;
  }
  ex->replicas = R;
  ex->partitions = P;
  ex->n_procs = R * P;
  return true;
}

/* Decode every process's arguments, then apply the per-execution memory
 * limit: inputs and results are refused before running; what the
 * execution allocates is charged to its budget. */
static bool decode_args(exec_state *ex) {
  srv_request *r = ex->r;
  const srv_config *cfg = &r->srv->cfg;
  const shlo_func *f = ex->f = shlo_executable_entry(ex->x);
  ex->args = calloc((size_t)ex->n_procs * (size_t)f->n_args + 1,
                    sizeof *ex->args);
  if (!ex->args) {
    srv_reply_error(r, SHLO_PERR_RUNTIME, 500, 0, 0, "out of memory");
    return false;
  }
  size_t mem = 0;
  bool ok = decode_inputs(r, ex->b.req.inputs, f, ex->n_procs, ex->args, &mem);
  /* Count what was decoded, so that a failure part-way releases it. */
  while (ex->n_args < ex->n_procs * f->n_args && ex->args[ex->n_args])
    ex->n_args++;
  if (!ok) return false;
  for (int k = 0; k < f->n_results; k++)
    mem += srv_type_bytes(f->result_types[k]) * (size_t)ex->n_procs;
  if (mem > (size_t)cfg->max_exec_memory) {
    srv_reply_error(r, SHLO_PERR_LIMIT, 413, 0, 0,
                    "limit max-exec-memory (%lld) exceeded: inputs and "
                    "results need %zu bytes", (long long)cfg->max_exec_memory,
                    mem);
    return false;
  }
  if (!srv_team_reserve_memory(r->team, (int64_t)mem)) {
    srv_quota_refuse(r, SRV_QUOTA_EXEC_MEMORY, 1);
    return false;
  }
  r->exec_mem = (int64_t)mem;
  return true;
}

/* The request's deadline, else the default; never past the maximum. */
static double timeout_ms_of(const srv_config *cfg,
                            const shlo_proto_exec_req *req) {
  double ms = req->timeout_ms > 0 ? req->timeout_ms
                                  : (double)cfg->default_timeout_ms;
  return ms > (double)cfg->max_timeout_ms ? (double)cfg->max_timeout_ms : ms;
}

/* Whether the execution may join a batch (batch.h): nothing printed or
 * profiled (one batch has one print stream and one trace); the batcher
 * checks the function. */
static bool batchable(const exec_state *ex) {
  return !ex->b.req.print && !ex->tr.t &&
         srv_batch_enabled(ex->r->srv->batcher, ex->r->team->name, ex->e->id);
}

/* Run the entry on one process or on the grid; records the run time. */
static shlo_status run_entry(exec_state *ex, double timeout_ms,
                             shlo_diag *d) {
  srv_request *r = ex->r;
  srv_server *s = r->srv;
  FILE *print = ex->b.req.print
                    ? srv_capture_open(&ex->printed, s->cfg.max_body_bytes / 2)
                    : NULL;
  shlo_exec_opts opts = {.timeout_s = timeout_ms / 1000.0,
                         .print_stream = print ? print : s->devnull,
                         .cancel = &r->cancel,
                         .max_bytes = s->cfg.max_exec_memory,
                         .profile = ex->tr.t ? shlo_trace_profile(ex->tr.t)
                                             : NULL};
  shlo_status st;
  shlo_diag_clear(d);
  uint64_t t1 = srv_now_ns();
  if (r->exe) { /* an asynchronous execution: its queues are streams */
    shlo_grid_opts g = {.num_replicas = ex->replicas,
                        .num_partitions = ex->partitions,
                        .exec = opts};
    st = srv_exec_bind(r->exe, ex->replicas, ex->partitions, &g);
    if (st) shlo_diag_set(d, st, NULL, 0, 0, "out of memory for the stream queues");
    else st = shlo_execute_grid(ex->x, &g, ex->args, ex->f->n_args,
                                &ex->res, &ex->n_res, d);
  } else if (ex->n_procs == 1 && batchable(ex)) {
    st = srv_batch_execute(s->batcher, r->team->name, ex->e->id, ex->x, &opts,
                           ex->args, ex->f->n_args, &ex->res, &ex->n_res, d,
                           &ex->batch);
  } else if (ex->n_procs == 1) {
    st = shlo_execute(ex->x, &opts, ex->args, ex->f->n_args, &ex->res,
                      &ex->n_res, d);
  } else {
    shlo_grid_opts g = {.num_replicas = ex->replicas,
                        .num_partitions = ex->partitions,
                        .exec = opts};
    if (s->mpi && ex->n_procs >= s->cfg.mpi_min_procs)
      st = shlo_mpi_execute_grid(ex->e->text, ex->e->text_len, ex->f->name,
                                 ex->x, &g, ex->args, ex->f->n_args,
                                 &ex->res, &ex->n_res, d);
    else
      st = shlo_execute_grid(ex->x, &g, ex->args, ex->f->n_args, &ex->res,
                             &ex->n_res, d);
  }
  /* a batched request's wait for its batch is no execution time */
  r->exec_s = (double)(srv_trace_span(&ex->tr, "execute", t1) - t1) / 1e9 -
              ex->batch.queued_s;
  r->executed = true;
  srv_capture_close(&ex->printed);
  if (st == SHLO_OK || st == SHLO_ETIMEOUT) cache_entry_ran(ex->e, r->exec_s);
  return st;
}

/* The reply to a failed execution.  A shutdown's cancel shows through
 * whatever status the engine stopped with. */
static void reply_exec_failure(srv_request *r, shlo_status st,
                               const shlo_diag *d, double timeout_ms) {
  const srv_config *cfg = &r->srv->cfg;
  if (shlo_cancel_reason(&r->cancel) || st == SHLO_ECANCELED)
    srv_reply_canceled(r);
  else if (st == SHLO_ETIMEOUT)
    srv_reply_error(r, SHLO_PERR_TIMEOUT, 504, 0, 0,
                    "limit deadline: the execution ran past %g ms and was "
                    "stopped (%s)", timeout_ms, d->message);
  else if (st == SHLO_ELIMIT)
    srv_reply_error(r, SHLO_PERR_LIMIT, 413, 0, 0,
                    "limit max-exec-memory (%lld bytes): %s",
                    (long long)cfg->max_exec_memory, d->message);
  else
    reply_diag(r, st, d);
}

/* A b64 answer to an HTTP client whose large outputs are encoded as
 * they are sent (b64_stream.h); false to build it whole. */
static bool reply_streamed(exec_state *ex) {
  srv_request *r = ex->r;
  /* a traced answer is built whole: its trace id goes in the text */
  if (!ex->b.req.b64_out || !r->conn || r->exe || ex->tr.t) return false;
  char *json = NULL;
  srv_b64_reply *reply = NULL;
  int got = srv_b64_reply_build(ex->res, ex->n_res, ex->n_procs, ex->e->id,
                                ex->cached, ex->compile_ms, r->exec_s * 1000,
                                &json, &reply);
  if (got <= 0) return false; /* small, or out of memory: the whole way */
  reply_ok(r, json);
  srv_b64_reply_free(r->b64_reply);
  r->b64_reply = reply;
  /* The body was decoded into the inputs and is dead now (a b64 answer
   * implies a JSON body): a large one need not stay while the answer
   * goes out. */
  if (r->cap >= SRV_TRIM_AFTER_BYTES) {
    free(r->body);
    r->body = NULL;
    r->cap = 0;
  }
  return true;
}

/* The success answer built whole. */
static void reply_whole(exec_state *ex) {
  srv_request *r = ex->r;
  if (srv_json_answer_refused(r, ex->res, ex->n_res, ex->n_procs,
                              ex->b.req.b64_out))
    return; /* answered 413 before a byte of it is written */
  /* A large body was decoded into the inputs and is dead now (a b64
   * answer implies a JSON body, whose program was copied out): its
   * memory, already faulted in, takes the answer. */
  char *spare = NULL;
  size_t spare_cap = 0;
  if (ex->b.req.b64_out && r->cap >= SRV_TRIM_AFTER_BYTES) {
    spare = r->body;
    spare_cap = r->cap;
    r->body = NULL;
    r->cap = 0;
  }
  reply_ok(r, shlo_proto_exec_resp_build_into(
                  spare, spare_cap, ex->res, ex->n_res, ex->n_procs,
                  ex->e->id, ex->cached, ex->compile_ms, r->exec_s * 1000,
                  ex->b.req.b64_out));
}

static void execute_and_reply(exec_state *ex) {
  srv_request *r = ex->r;
  double timeout_ms = timeout_ms_of(&r->srv->cfg, &ex->b.req);
  shlo_diag d;
  shlo_status st = run_entry(ex, timeout_ms, &d);
  uint64_t t0 = srv_now_ns();
  if (ex->batch.kind == SRV_BATCH_FULL) {
    srv_reply_error(r, SHLO_PERR_LIMIT, 429, 0, 0, "%s", d.message);
    r->retry_after = true;
  } else if (st) {
    reply_exec_failure(r, st, &d, timeout_ms);
  } else {
    if (!reply_streamed(ex)) reply_whole(ex);
    ex->n_res *= ex->n_procs; /* res holds every process's results */
    srv_trace_span(&ex->tr, "encode answer", t0);
  }
  if (ex->printed.len && r->resp && !r->resp_text) { /* success or error */
    r->resp = shlo_proto_json_add_printed(r->resp, ex->printed.text,
                                          ex->printed.truncated);
    r->resp_len = r->resp ? strlen(r->resp) : 0;
    if (!r->resp) srv_reply_error(r, SHLO_PERR_RUNTIME, 500, 0, 0,
                                  "out of memory");
  }
}

/* Whether the body asks for a trace ("trace": true); false after a 400
 * for a "trace" that is no boolean. */
static bool trace_asked(exec_state *ex, bool *asked) {
  const cJSON *root = ex->b.req.root;
  const cJSON *t = root ? cJSON_GetObjectItemCaseSensitive(root, "trace")
                        : NULL;
  *asked = t && cJSON_IsTrue(t);
  if (!t || cJSON_IsBool(t) || cJSON_IsNull(t)) return true;
  srv_reply_error(ex->r, SHLO_PERR_INPUT, 400, 0, 0,
                  "\"trace\" must be true or false");
  return false;
}

/* Trace the execution when asked, or when trace-sample-rate draws it:
 * from the request's arrival, through its reading (read_t0 .. read_t1). */
static void trace_start(exec_state *ex, bool asked, uint64_t read_t0,
                        uint64_t read_t1) {
  srv_request *r = ex->r;
  if (!srv_trace_wanted(r->srv, asked) ||
      !srv_trace_begin(r->srv, &ex->tr, r->t0_ns))
    return; /* out of memory: the execution runs untraced */
  const srv_job *j = &r->job;
  if (j->submit_ns && j->start_ns > j->submit_ns) {
    shlo_trace_span(ex->tr.t, "receive request", "server", r->t0_ns,
                    j->submit_ns, NULL);
    shlo_trace_span(ex->tr.t, "queue wait", "server", j->submit_ns,
                    j->start_ns, NULL);
  } else { /* on the loop thread, at once */
    shlo_trace_span(ex->tr.t, "receive request", "server", r->t0_ns,
                    read_t0, NULL);
  }
  shlo_trace_span(ex->tr.t, "decode request", "server", read_t0, read_t1,
                  NULL);
}

/* A traced execution's id goes in its answer, and its trace is kept. */
static void trace_end(exec_state *ex) {
  srv_request *r = ex->r;
  if (!ex->tr.t) return;
  memcpy(r->trace_key, ex->tr.key, sizeof r->trace_key);
  if (r->resp && !r->resp_text) {
    r->resp = srv_json_add_trace_id(r->resp, ex->tr.key);
    r->resp_len = r->resp ? strlen(r->resp) : 0;
    if (!r->resp) srv_reply_error(r, SHLO_PERR_RUNTIME, 500, 0, 0,
                                  "out of memory");
  }
  srv_trace_about a = {.protocol = "http", .request_id = r->req_id,
                       .team = r->team ? r->team->name : NULL,
                       .route = r->path, .module = r->module,
                       .ctx = &r->tctx, .status = r->status};
  srv_trace_finish(r->srv, &ex->tr, r->t0_ns, r->team, &a);
}

static void exec_free(exec_state *ex) {
  srv_trace_discard(&ex->tr);
  for (int k = 0; k < ex->n_res; k++) shlo_value_unref(ex->res[k]);
  free(ex->res);
  for (int k = 0; k < ex->n_args; k++) shlo_value_unref(ex->args[k]);
  free(ex->args);
  if (ex->e) cache_release(&ex->r->srv->cache, ex->e);
  srv_capture_free(&ex->printed);
  body_free(&ex->b);
}

/* The execution job.  With a lane (on the loop), it declines (returns
 * false, no reply, *lane set) unless the program is a tiny cached one;
 * otherwise it always sets the reply and returns true. */
static bool run_execute(srv_request *r, srv_lane *lane) {
  if (shlo_cancel_reason(&r->cancel)) {
    srv_reply_canceled(r);
    return true;
  }
  exec_state ex = {.r = r, .n_procs = 1, .cached = true};
  uint64_t t0 = srv_now_ns();
  if (!read_body(r, &ex.b)) return true;
  uint64_t t1 = srv_now_ns();
  bool asked;
  if (!trace_asked(&ex, &asked)) {
    exec_free(&ex);
    return true;
  }
  /* A worker traces from here; the loop only once it found a tiny
   * module to run, so that a try it declines costs no trace. */
  if (!lane) trace_start(&ex, asked, t0, t1);
  bool found = find_module(&ex, lane);
  if (lane && found) trace_start(&ex, asked, t0, t1);
  uint64_t t = srv_trace_span(&ex.tr, !found      ? "module (not found or "
                                                    "did not parse)"
                                      : ex.cached ? "module (cached)"
                                                  : "parse and verify",
                              t1);
  if (!found) {
    trace_end(&ex); /* a failed request's trace is kept too */
    exec_free(&ex);
    return !lane;
  }
  memcpy(r->module, ex.e->id, SRV_ID_LEN);
  bool ok = compile_entry(&ex);
  t = srv_trace_span(&ex.tr, ex.cached ? "executable (cached)" : "compile",
                     t);
  if (ok && choose_grid(&ex) && decode_args(&ex)) {
    srv_trace_span(&ex.tr, "decode inputs", t);
    execute_and_reply(&ex);
  }
  trace_end(&ex);
  exec_free(&ex);
  if (r->exec_mem) srv_team_release_memory(r->team, r->exec_mem);
  r->exec_mem = 0;
  return true;
}

/* The optional "name" of a registration (store.h); false after an error
 * reply. */
static bool register_name(srv_request *r, const shlo_proto_exec_req *req,
                          const char **name) {
  const cJSON *n =
      req->root ? cJSON_GetObjectItemCaseSensitive(req->root, "name") : NULL;
  *name = NULL;
  if (!n || cJSON_IsNull(n)) return true;
  if (!cJSON_IsString(n) || !store_name_ok(n->valuestring)) {
    srv_reply_error(r, SHLO_PERR_INPUT, 400, 0, 0,
                    "\"name\" must be 1 to %d letters, digits, '_', '-' or "
                    "'.'", STORE_NAME_LEN - 1);
    return false;
  }
  *name = n->valuestring;
  return true;
}

/* The optional "batching" of a registration (batch.h): read, and checked
 * against the compiled entry x; false after an error reply.  *on says
 * whether the registration sets it (max_batch_size 0 turns it off). */
static bool register_batching(srv_request *r, const shlo_proto_exec_req *req,
                              const cache_entry *e, const shlo_executable *x,
                              srv_batch_cfg *cfg, bool *on) {
  const cJSON *j = req->root ? cJSON_GetObjectItemCaseSensitive(req->root,
                                                                "batching")
                             : NULL;
  char why[512];
  int mr, mp;
  *on = j && !cJSON_IsNull(j);
  if (!*on) return true;
  shlo_module_grid(e->m, &mr, &mp);
  if (!srv_batch_cfg_parse(j, cfg, why, sizeof why) ||
      (cfg->max_batch_size &&
       !srv_batch_shape_ok(shlo_executable_entry(x), why, sizeof why))) {
    srv_reply_error(r, SHLO_PERR_INPUT, 400, 0, 0, "%s", why);
    return false;
  }
  if (cfg->max_batch_size &&
      (mr * mp > 1 || req->replicas > 1 || req->partitions > 1)) {
    srv_reply_error(r, SHLO_PERR_INPUT, 400, 0, 0,
                    "cannot batch: the module runs on a grid");
    return false;
  }
  return true;
}

void srv_job_register(srv_job *j) {
  srv_request *r = (srv_request *)j;
  srv_server *s = r->srv;
  cache_entry *e = NULL;
  body b;
  bool cached;
  double ms = 0;
  if (!read_body(r, &b)) return;
  if (!b.program) {
    srv_reply_error(r, SHLO_PERR_INPUT, 400, 0, 0,
                    "no program: send StableHLO text, or JSON with "
                    "\"program\"");
    goto done;
  }
  const char *name = NULL;
  if (!register_name(r, &b.req, &name)) goto done;
  e = get_module(r, b.program, b.program_len, &b.req, &cached, &ms);
  if (!e) goto done;
  memcpy(r->module, e->id, SRV_ID_LEN);
  /* Verify and compile the entry function now, so errors show here. */
  const shlo_executable *x;
  bool compiled;
  shlo_diag d;
  shlo_diag_clear(&d);
  double t0 = now_ms();
  shlo_status st = cache_entry_exe(&s->cache, e, b.req.entry, &r->cancel,
                                   &x, &compiled, &d);
  if (compiled) r->compile_ms = ms + now_ms() - t0;
  if (st) {
    reply_diag(r, st, &d);
    goto done;
  }
  srv_batch_cfg batching;
  bool batching_set;
  if (!register_batching(r, &b.req, e, x, &batching, &batching_set))
    goto done;
  /* the function's name outlives x, which a publish below may free */
  char batch_fn[SRV_BATCH_FN_LEN];
  snprintf(batch_fn, sizeof batch_fn, "%s", shlo_executable_entry(x)->name);
  if (!cached) {
    e->cost_ms = r->compile_ms;
    cache_entry *p = publish(r, e, true);
    if (p != e) {
      e = p; /* NULL when too big; else someone published it first */
      if (!e) goto done;
    }
  }
  /* The module is the team's now, within its share of the cache; cached
   * says whether the team had it already. */
  cache_adopt_result a = cache_adopt(&s->cache, e, r->team, false);
  if (a == CACHE_OVER_SHARE) {
    srv_quota_refuse(r, SRV_QUOTA_CACHE_BYTES, 1);
    goto done;
  }
  /* another team's compile: this team's first registration takes as long
   * as a compile would, as its "cached": false says (teams.h) */
  if (cached && !compiled && a != CACHE_HAD)
    srv_team_pay_compile(e->cost_ms, &r->cancel);
  cached = a == CACHE_HAD;
  char why[1200];
  int version = 0;
  /* the batcher first: the store's record keeps what it has */
  if (batching_set &&
      srv_batch_configure(s->batcher, r->team->name, e->id, batch_fn,
                          &batching)) {
    srv_reply_error(r, SHLO_PERR_RUNTIME, 500, 0, 0, "out of memory");
    goto done;
  }
  if (srv_store_registered(s, e, r->team->name, name, batching_set, &version,
                           why, sizeof why)) {
    srv_reply_error(r, SHLO_PERR_RUNTIME, 500, 0, 0, "store: %s", why);
    goto done;
  }
  /* The entry's info object with "name" (if any) and "cached" last. */
  strbuf info = {0};
  shlo__sb_add(&info, e->info, strlen(e->info) - 1); /* without its '}' */
  if (name) {
    shlo__json_key(&info, "name", false);
    shlo__json_str(&info, name);
    shlo__sb_printf(&info, ",\"version\":%d", version);
  }
  if (srv_batch_enabled(s->batcher, r->team->name, e->id)) {
    shlo__json_key(&info, "batching", false);
    srv_batch_cfg_json(s->batcher, r->team->name, e->id, &info);
  }
  shlo__sb_puts(&info, cached ? ",\"cached\":true}" : ",\"cached\":false}");
  reply_ok(r, shlo__sb_take(&info));
done:
  if (e) cache_release(&s->cache, e);
  body_free(&b);
}
