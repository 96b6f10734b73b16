/* SPDX-License-Identifier: Apache-2.0 */
/* The work of a binary-protocol request (binary.h): find or compile the
 * module in the shared cache, check the inputs the loop already read into
 * tensors against the entry's arguments, execute, and lay out the answer
 * as pieces that borrow the results' data, so a large output is written to
 * the socket straight from the tensor the engine filled. */
#include <stdlib.h>
#include <string.h>

#include "batch.h"
#include "binary.h"
#include "traces.h"
#include "core/value.h"
#include "store.h"
#include "shlo/grid.h"
#include "shlo/grid_mpi.h"

/* ---- answers ---- */

static bool ans_grow(bin_answer *a) {
  if (a->n_bufs < a->cap_bufs && a->n_owned < a->cap_owned) return true;
  int nb = a->cap_bufs ? a->cap_bufs * 2 : 16;
  uv_buf_t *b = realloc(a->bufs, (size_t)nb * sizeof *b);
  if (!b) return false;
  a->bufs = b;
  a->cap_bufs = nb;
  void **o = realloc(a->owned, (size_t)nb * sizeof *o);
  if (!o) return false;
  a->owned = o;
  a->cap_owned = nb;
  return true;
}

/* Append a piece: owned (freed with the answer) or borrowed. */
static bool ans_add(bin_answer *a, void *p, size_t n, bool owned) {
  if (!ans_grow(a)) {
    if (owned) free(p);
    return false;
  }
  if (owned) a->owned[a->n_owned++] = p;
  a->bufs[a->n_bufs++] = uv_buf_init(p, (unsigned)n);
  a->bytes += n;
  return true;
}

/* A copy of n bytes as an owned piece. */
static bool ans_copy(bin_answer *a, const void *p, size_t n) {
  void *c = malloc(n ? n : 1);
  if (!c) return false;
  memcpy(c, p, n);
  return ans_add(a, c, n, true);
}

void bin_answer_free(bin_answer *a) {
  for (int i = 0; i < a->n_owned; i++) free(a->owned[i]);
  for (int i = 0; i < a->n_vals; i++) shlo_value_unref(a->vals[i]);
  free(a->owned);
  free(a->bufs);
  free(a->vals);
  memset(a, 0, sizeof *a);
}

/* One value: its header, then its data in pieces of at most 1 GiB (a
 * uv_buf_t length is 32-bit), then zero padding. */
static bool ans_value(bin_answer *a, const shlo_value *v) {
  char head[sizeof(shlo_bin_value) + 8 * SHLO_MAX_RANK];
  size_t n = shlo_bin_value_head(v, head);
  if (!ans_copy(a, head, n)) return false;
  if (v->kind == SHLO_TYPE_TUPLE) {
    for (int i = 0; i < v->n_elems; i++)
      if (!ans_value(a, v->elems[i])) return false;
    return true;
  }
  if (v->kind != SHLO_TYPE_TENSOR) return true;
  for (size_t off = 0; off < v->nbytes; off += (size_t)1 << 30) {
    size_t k = v->nbytes - off < (size_t)1 << 30 ? v->nbytes - off
                                                 : (size_t)1 << 30;
    if (!ans_add(a, (char *)v->data + off, k, false)) return false;
  }
  static const char zeros[8];
  size_t pad = shlo_bin_pad8(v->nbytes) - v->nbytes;
  return !pad || ans_add(a, (void *)zeros, pad, false);
}

/* A RESULT this small is laid out whole in one buffer: one allocation
 * instead of one per piece, and one buffer for the socket. */
#define FLAT_RESULT_BYTES 4096

/* RESULT in one owned buffer (the values copied in); false when out of
 * memory. */
static bool ans_flat_result(bin_job *b, const shlo_bin_result *rh,
                            const char *ident, size_t ident_len,
                            shlo_value **res, int total, uint64_t len) {
  shlo_bin_header h;
  shlo_bin_header_init(&h, b->version, SHLO_BIN_RESULT, b->id, len);
  char *f = malloc(sizeof h + len);
  if (!f) return false;
  memcpy(f, &h, sizeof h);
  memcpy(f + sizeof h, rh, sizeof *rh);
  size_t off = sizeof h + sizeof *rh;
  if (ident_len) memcpy(f + off, ident, ident_len);
  off += ident_len;
  for (int k = 0; k < total; k++) off += shlo_bin_value_write(res[k], f + off);
  return ans_add(&b->ans, f, off, true);
}

/* The frame header as the first piece, once the payload size is known. */
static bool ans_finish(bin_job *b, int type) {
  bin_answer *a = &b->ans;
  shlo_bin_header *h = malloc(sizeof *h);
  if (!h || !ans_grow(a)) {
    free(h);
    return false;
  }
  shlo_bin_header_init(h, b->version, type, b->id, a->bytes);
  memmove(a->bufs + 1, a->bufs, (size_t)a->n_bufs * sizeof *a->bufs);
  a->bufs[0] = uv_buf_init((char *)h, sizeof *h);
  a->n_bufs++;
  a->owned[a->n_owned++] = h;
  a->bytes += sizeof *h;
  return true;
}

int bin_answer_error(bin_job *b) {
  bin_answer_free(&b->ans);
  size_t n;
  void *f = shlo_bin_error_frame(b->version, b->id, &b->err, b->engine_status,
                                 &n);
  return f && ans_add(&b->ans, f, n, true) ? 0 : -1;
}

/* Prepend a whole frame (owned) to the answer's pieces. */
static bool ans_prepend(bin_answer *a, void *frame, size_t n) {
  if (!ans_grow(a)) {
    free(frame);
    return false;
  }
  memmove(a->bufs + 1, a->bufs, (size_t)a->n_bufs * sizeof *a->bufs);
  a->bufs[0] = uv_buf_init(frame, (unsigned)n);
  a->n_bufs++;
  a->owned[a->n_owned++] = frame;
  a->bytes += n;
  return true;
}

int bin_answer_output(bin_job *b) {
  const srv_capture *pc = &b->printed;
  if (!pc->len) return 0;
  shlo_bin_output o = {.length = pc->len,
                       .flags = pc->truncated ? SHLO_BIN_OUTPUT_TRUNCATED : 0};
  uint64_t len = sizeof o + shlo_bin_pad8(pc->len);
  if (len + sizeof(shlo_bin_header) > (uint64_t)1 << 31) return -1;
  char *f = calloc(1, sizeof(shlo_bin_header) + len);
  if (!f) return -1;
  shlo_bin_header h;
  shlo_bin_header_init(&h, b->version, SHLO_BIN_OUTPUT, b->id, len);
  memcpy(f, &h, sizeof h);
  memcpy(f + sizeof h, &o, sizeof o);
  memcpy(f + sizeof h + sizeof o, pc->text, pc->len);
  return ans_prepend(&b->ans, f, sizeof h + len) ? 0 : -1;
}

/* Where the execution's interpreter.print goes: the job's text when the
 * client asked for it (at most half of max-body-bytes), else nowhere. */
static FILE *print_stream(bin_job *b) {
  FILE *f = NULL;
  if (b->ex.flags & SHLO_BIN_EXEC_PRINT)
    f = srv_capture_open(&b->printed,
                         (size_t)b->srv->cfg.max_body_bytes / 2);
  return f ? f : b->srv->devnull;
}

/* ---- the work ---- */

static bool fail(bin_job *b, shlo_proto_err_kind kind, int http,
                 const char *msg) {
  shlo_proto_fail(&b->err, kind, "%s", msg);
  if (http) b->err.http = http;
  b->failed = true;
  return false;
}

static bool fail_diag(bin_job *b, shlo_status st, const shlo_diag *d) {
  if (st == SHLO_ECANCELED) srv_compile_canceled(b->srv, &b->err);
  else srv_error_from_diag(&b->err, st, d);
  b->engine_status = st;
  b->failed = true;
  return false;
}

static const void *bin_visible(const bin_job *b) {
  return b->scopes & SRV_SCOPE_ADMIN ? NULL : b->team;
}

/* The module: the inline program (cached now if new) or the cached id. */
static cache_entry *find_module(bin_job *b, bool *cached, bool *fresh,
                                double *ms) {
  srv_server *s = b->srv;
  *fresh = false;
  if (b->program) {
    cache_entry *e = srv_module_get(s, b->program, b->program_len,
                                    (int)b->ex.replicas, (int)b->ex.partitions,
                                    &b->cancel, cached, ms, &b->err);
    if (!e) b->failed = true;
    *fresh = e && !*cached;
    return e;
  }
  /* another team's module is a miss, as an unknown id */
  cache_entry *e = srv_module_by_id(s, b->ex.id, bin_visible(b), true);
  *cached = true;
  if (!e) {
    char id[SRV_ID_LEN];
    cache_key_to_id(b->ex.id, id);
    shlo_proto_fail(&b->err, SHLO_PERR_NOT_FOUND, "no module %s (never "
                    "compiled, deleted, or evicted from the cache: send "
                    "COMPILE again)", id);
    b->failed = true;
  }
  return e;
}

/* The entry's executable, compiled now if needed; a module this request
 * parsed is published once it compiled.  Updates *e to the entry to use. */
static const shlo_executable *compile(bin_job *b, cache_entry **e, bool fresh,
                                      bool *cached, double *ms) {
  const shlo_executable *x = NULL;
  bool compiled = false;
  shlo_diag d;
  shlo_diag_clear(&d);
  uint64_t t0 = srv_now_ns();
  srv_cache *c = &b->srv->cache;
  shlo_status st = cache_entry_exe(c, *e, b->entry, &b->cancel, &x,
                                   &compiled, &d);
  if (compiled) {
    *ms += (double)(srv_now_ns() - t0) / 1e6;
    *cached = false;
  }
  if (st) {
    fail_diag(b, st, &d);
    return NULL;
  }
  if (fresh) {
    int no_room;
    (*e)->cost_ms = *ms;
    cache_entry *p = cache_insert_for(&b->srv->cache, *e, b->team, &no_room);
    if (p != *e) {
      *e = p; /* another request published the same program first */
      st = cache_entry_exe(c, *e, b->entry, &b->cancel, &x, &compiled, &d);
      if (st) {
        fail_diag(b, st, &d);
        return NULL;
      }
    }
  }
  /* A program sent in full becomes the team's; "cached" is the team's. */
  if (b->program &&
      cache_adopt(&b->srv->cache, *e, b->team, true) != CACHE_HAD &&
      *cached) {
    *cached = false;
    *ms = (*e)->cost_ms;
    srv_team_pay_compile(*ms, &b->cancel); /* its wall time too (teams.h) */
  }
  return x;
}

/* Each input against the entry's argument types (a quantized argument
 * takes its storage type and gets its parameters here). */
static bool check_inputs(bin_job *b, const shlo_func *f, int n_procs) {
  uint32_t n = b->ex.n_inputs;
  bool per_proc = n_procs > 1 && n == (uint32_t)(f->n_args * n_procs);
  if (n != (uint32_t)f->n_args && !per_proc) {
    shlo_proto_fail(&b->err, SHLO_PERR_INPUT, "@%s takes %d input%s, the "
                    "request gives %u", f->name, f->n_args,
                    f->n_args == 1 ? "" : "s", n);
    b->failed = true;
    return false;
  }
  for (uint32_t k = 0; k < n; k++) {
    const shlo_type *t = f->arg_types[k % (uint32_t)(f->n_args ? f->n_args : 1)];
    shlo_value *v = b->inputs[k];
    if (!shlo_value_has_type(v, t) &&
        !(t->kind == SHLO_TYPE_TENSOR && t->quant && v->elem == t->elem &&
          v->rank == t->rank)) {
      char want[256], got[256];
      shlo_type_format(t, want, sizeof want);
      shlo_type got_t = {.kind = SHLO_TYPE_TENSOR, .elem = v->elem,
                         .rank = v->rank};
      memcpy(got_t.dims, v->dims, sizeof v->dims);
      shlo_type_format(&got_t, got, sizeof got);
      shlo_proto_fail(&b->err, SHLO_PERR_INPUT, "inputs[%u]: expected %s, "
                      "got %s", k, want, got);
      b->failed = true;
      return false;
    }
    if (t->quant && shlo_tensor_set_quant(v, t->quant) != SHLO_OK)
      return fail(b, SHLO_PERR_RUNTIME, 500, "out of memory");
  }
  return true;
}

/* The engine's failure as the answer; a cancel shows through whatever
 * status the engine stopped with. */
static void exec_failed(bin_job *b, shlo_status st, const shlo_diag *d,
                        double timeout_ms) {
  const srv_config *cfg = &b->srv->cfg;
  int c = shlo_cancel_reason(&b->cancel);
  if (c == BIN_CANCEL_SHUTDOWN)
    fail(b, SHLO_PERR_TIMEOUT, 503, "canceled: the server is shutting down");
  else if (c == BIN_CANCEL_CLIENT || st == SHLO_ECANCELED)
    fail(b, SHLO_PERR_TIMEOUT, 0, "canceled by the client");
  else if (st == SHLO_ETIMEOUT) {
    shlo_proto_fail(&b->err, SHLO_PERR_TIMEOUT, "limit deadline: the "
                    "execution ran past %g ms and was stopped (%s)",
                    timeout_ms, d->message);
    b->failed = true;
  } else if (st == SHLO_ELIMIT) {
    shlo_proto_fail(&b->err, SHLO_PERR_LIMIT, "limit max-exec-memory (%lld "
                    "bytes): %s", (long long)cfg->max_exec_memory, d->message);
    b->failed = true;
  } else {
    fail_diag(b, st, d);
  }
  if (st) b->engine_status = st;
}

/* The RESULT's identity block (PROTOCOL.md "Request identity"), when
 * the EXECUTE asked for it: calloc'd, *n bytes; NULL with *n = 0 when
 * not asked for or out of memory. */
static char *identity_block(const bin_job *b, size_t *n) {
  *n = 0;
  if (!b->identity) return NULL;
  shlo_bin_identity id = {
      .request_id_length = (uint32_t)strlen(b->req_id),
      .trace_id_length = (uint32_t)strlen(b->trace_key)};
  size_t rl = shlo_bin_pad8(id.request_id_length);
  size_t len = sizeof id + rl + shlo_bin_pad8(id.trace_id_length);
  char *p = calloc(1, len);
  if (!p) return NULL;
  memcpy(p, &id, sizeof id);
  memcpy(p + sizeof id, b->req_id, id.request_id_length);
  memcpy(p + sizeof id + rl, b->trace_key, id.trace_id_length);
  *n = len;
  return p;
}

/* The references run() took for a grid that shares one input list. */
static void release_own(shlo_value **own, int n) {
  if (!own) return;
  for (int k = 0; k < n; k++) shlo_value_unref(own[k]);
  free(own);
}

/* Run on one process or the grid, then lay out RESULT. */
static void run(bin_job *b, cache_entry *e, const shlo_executable *x,
                int R, int P, bool cached, double compile_ms) {
  const srv_config *cfg = &b->srv->cfg;
  const shlo_func *f = shlo_executable_entry(x);
  int n_procs = R * P;
  if (!check_inputs(b, f, n_procs)) return;
  double timeout_ms = b->ex.timeout_us ? (double)b->ex.timeout_us / 1000.0
                                       : (double)cfg->default_timeout_ms;
  if (timeout_ms > (double)cfg->max_timeout_ms)
    timeout_ms = (double)cfg->max_timeout_ms;
  shlo_exec_opts opts = {.timeout_s = timeout_ms / 1000.0,
                         .cancel = &b->cancel,
                         .max_bytes = cfg->max_exec_memory,
                         .profile = b->trace && b->trace->t
                                        ? shlo_trace_profile(b->trace->t)
                                        : NULL};
  shlo_value **args = b->inputs, **res = NULL, **own = NULL;
  int n_res = 0;
  if (n_procs > 1 && b->ex.n_inputs == (uint32_t)f->n_args) {
    /* One list for every process: each gets references to it. */
    own = calloc((size_t)n_procs * (size_t)f->n_args + 1, sizeof *own);
    if (!own) {
      fail(b, SHLO_PERR_RUNTIME, 500, "out of memory");
      return;
    }
    for (int k = 0; k < n_procs * f->n_args; k++)
      own[k] = shlo_value_ref(b->inputs[k % f->n_args]);
    args = own;
  }
  /* the team's exec-memory: inputs and results, as HTTP counts them */
  int64_t mem = (int64_t)b->input_bytes;
  for (int k = 0; k < f->n_results; k++)
    mem += (int64_t)srv_type_bytes(f->result_types[k]) * n_procs;
  if (!srv_team_reserve_memory(b->team, mem)) {
    shlo_proto_fail(&b->err, SHLO_PERR_LIMIT, "quota exec-memory (%lld) of "
                    "team %s reached; retry later",
                    (long long)b->team->quota.v[SRV_QUOTA_EXEC_MEMORY],
                    b->team->name);
    b->err.http = 429;
    b->failed = true;
    b->refused_quota = SRV_QUOTA_EXEC_MEMORY + 1;
    release_own(own, n_procs * f->n_args);
    return;
  }
  shlo_diag d;
  shlo_diag_clear(&d);
  opts.print_stream = print_stream(b);
  uint64_t t1 = srv_now_ns();
  shlo_status st;
  srv_batch_how how = {SRV_BATCH_ALONE, 0};
  if (n_procs == 1 && !(b->ex.flags & SHLO_BIN_EXEC_PRINT) && !opts.profile) {
    /* stacked with concurrent executions of a batching module (batch.h) */
    st = srv_batch_execute(b->srv->batcher, b->team->name, e->id, x, &opts,
                           args, f->n_args, &res, &n_res, &d, &how);
  } else if (n_procs == 1) {
    st = shlo_execute(x, &opts, args, f->n_args, &res, &n_res, &d);
  } else {
    shlo_grid_opts g = {.num_replicas = R, .num_partitions = P, .exec = opts};
    if (b->srv->mpi && n_procs >= cfg->mpi_min_procs)
      st = shlo_mpi_execute_grid(e->text, e->text_len, f->name, x, &g, args,
                                 f->n_args, &res, &n_res, &d);
    else
      st = shlo_execute_grid(x, &g, args, f->n_args, &res, &n_res, &d);
  }
  b->exec_s = (double)(srv_trace_span(b->trace, "execute", t1) - t1) / 1e9 -
              how.queued_s; /* a batch's wait is no execution time */
  b->executed = true;
  /* its run time places the module's next executions in a lane */
  if (st == SHLO_OK || st == SHLO_ETIMEOUT) cache_entry_ran(e, b->exec_s);
  srv_capture_close(&b->printed);
  srv_team_release_memory(b->team, mem);
  release_own(own, n_procs * f->n_args);
  if (how.kind == SRV_BATCH_FULL) {
    fail(b, SHLO_PERR_LIMIT, 429, d.message);
    return;
  }
  if (st) {
    exec_failed(b, st, &d, timeout_ms);
    return;
  }
  int total = n_res * n_procs;
  uint64_t t_enc = srv_now_ns(); /* laying out RESULT: the trace's encode */
  size_t ident_len;
  char *ident = identity_block(b, &ident_len);
  if (b->identity && !ident) {
    fail(b, SHLO_PERR_RUNTIME, 500, "out of memory");
    return;
  }
  shlo_bin_result rh = {.flags = (cached ? SHLO_BIN_RESULT_CACHED : 0) |
                                 (ident ? SHLO_BIN_RESULT_IDENTITY : 0),
                        .n_procs = (uint32_t)n_procs,
                        .n_outputs = (uint32_t)n_res,
                        .compile_ms = compile_ms,
                        .execute_ms = b->exec_s * 1000};
  memcpy(rh.id, e->key, 32);
  b->ans.vals = res; /* the answer owns the results now */
  b->ans.n_vals = total;
  uint64_t len = sizeof rh + ident_len;
  for (int k = 0; k < total && len <= FLAT_RESULT_BYTES; k++)
    len += shlo_bin_value_size(res[k]);
  if (len <= FLAT_RESULT_BYTES) {
    if (!ans_flat_result(b, &rh, ident, ident_len, res, total, len))
      fail(b, SHLO_PERR_RUNTIME, 500, "out of memory");
    free(ident);
    srv_trace_span(b->trace, "encode answer", t_enc);
    return;
  }
  bool ok = ans_copy(&b->ans, &rh, sizeof rh);
  if (ok && ident_len) ok = ans_copy(&b->ans, ident, ident_len);
  free(ident);
  for (int k = 0; ok && k < total; k++) ok = ans_value(&b->ans, res[k]);
  if (!ok || !ans_finish(b, SHLO_BIN_RESULT))
    fail(b, SHLO_PERR_RUNTIME, 500, "out of memory");
  srv_trace_span(b->trace, "encode answer", t_enc);
}

/* The grid: the request's, else the module's (1 x 1 by default). */
static bool grid_of(bin_job *b, const cache_entry *e, int *R, int *P) {
  int mr, mp;
  shlo_module_grid(e->m, &mr, &mp);
  *R = b->ex.replicas ? (int)b->ex.replicas
                      : (!b->program && e->replicas > 0 ? e->replicas : mr);
  *P = b->ex.partitions ? (int)b->ex.partitions
                        : (!b->program && e->partitions > 0 ? e->partitions
                                                            : mp);
  if ((int64_t)*R * *P <= 4096) return true;
  return fail(b, SHLO_PERR_LIMIT, 413, "grid: more than 4096 processes");
}

/* MODULE: id, entry, the entry's signature. */
static void answer_module(bin_job *b, cache_entry *e, const shlo_executable *x,
                          bool cached) {
  const shlo_func *f = shlo_executable_entry(x);
  char sig[4096] = "(";
  size_t n = 1;
  for (int i = 0; i < f->n_args && n < sizeof sig - 300; i++) {
    if (i) n += (size_t)snprintf(sig + n, sizeof sig - n, ", ");
    shlo_type_format(f->arg_types[i], sig + n, sizeof sig - n);
    n = strlen(sig);
  }
  n += (size_t)snprintf(sig + n, sizeof sig - n, ") -> %s",
                        f->n_results == 1 ? "" : "(");
  for (int i = 0; i < f->n_results && n < sizeof sig - 300; i++) {
    if (i) n += (size_t)snprintf(sig + n, sizeof sig - n, ", ");
    shlo_type_format(f->result_types[i], sig + n, sizeof sig - n);
    n = strlen(sig);
  }
  if (f->n_results != 1) snprintf(sig + n, sizeof sig - n, ")");
  size_t el = strlen(f->name), sl = strlen(sig);
  shlo_bin_module m = {.flags = cached ? SHLO_BIN_MODULE_CACHED : 0,
                       .replicas = (uint32_t)(e->replicas > 0 ? e->replicas : 1),
                       .partitions = (uint32_t)(e->partitions > 0 ? e->partitions : 1),
                       .entry_length = (uint32_t)el,
                       .signature_length = (uint32_t)sl};
  memcpy(m.id, e->key, 32);
  size_t total = sizeof m + shlo_bin_pad8(el) + shlo_bin_pad8(sl);
  char *p = calloc(1, total);
  if (!p) {
    fail(b, SHLO_PERR_RUNTIME, 500, "out of memory");
    return;
  }
  memcpy(p, &m, sizeof m);
  memcpy(p + sizeof m, f->name, el);
  memcpy(p + sizeof m + shlo_bin_pad8(el), sig, sl);
  if (!ans_add(&b->ans, p, total, true) || !ans_finish(b, SHLO_BIN_MODULE))
    fail(b, SHLO_PERR_RUNTIME, 500, "out of memory");
}

/* An EXECUTE that set the trace flag, or that trace-sample-rate drew,
 * is traced from its queue wait on. */
static void trace_start(bin_job *b, srv_trace *tr) {
  bool asked = b->ex.flags & SHLO_BIN_EXEC_TRACE;
  if (b->type != SHLO_BIN_EXECUTE || !srv_trace_wanted(b->srv, asked) ||
      !srv_trace_begin(b->srv, tr, b->t0_ns))
    return;
  b->trace = tr;
  memcpy(b->trace_key, tr->key, sizeof b->trace_key);
  const srv_job *j = &b->job;
  if (j->submit_ns && j->start_ns > j->submit_ns) {
    shlo_trace_span(tr->t, "receive request", "server", b->t0_ns,
                    j->submit_ns, NULL);
    shlo_trace_span(tr->t, "queue wait", "server", j->submit_ns, j->start_ns,
                    NULL);
  }
}

static void trace_end(bin_job *b) {
  if (!b->trace) return;
  srv_trace_about a = {.protocol = "binary", .request_id = b->req_id,
                       .team = b->team ? b->team->name : NULL,
                       .route = "EXECUTE", .module = b->module,
                       .status = b->failed ? (int)b->err.http : 200};
  srv_trace_finish(b->srv, b->trace, b->t0_ns, b->team, &a);
  b->trace = NULL;
}

void bin_job_work(srv_job *j) {
  bin_job *b = (bin_job *)j;
  if (shlo_cancel_reason(&b->cancel)) {
    exec_failed(b, SHLO_ECANCELED, NULL, 0);
    return;
  }
  srv_trace tr = {0};
  trace_start(b, &tr);
  bool cached, fresh;
  double ms = 0;
  uint64_t t = srv_now_ns();
  cache_entry *e = find_module(b, &cached, &fresh, &ms);
  if (e) {
    t = srv_trace_span(b->trace, cached ? "module (cached)"
                                        : "parse and verify", t);
    memcpy(b->module, e->id, SRV_ID_LEN);
    const shlo_executable *x = compile(b, &e, fresh, &cached, &ms);
    srv_trace_span(b->trace, cached ? "executable (cached)" : "compile", t);
    int R, P;
    if (x && b->type == SHLO_BIN_COMPILE) answer_module(b, e, x, cached);
    else if (x && grid_of(b, e, &R, &P)) run(b, e, x, R, P, cached, ms);
  }
  trace_end(b); /* before e goes: step spans name e's ops */
  if (e) cache_release(&b->srv->cache, e);
}

bool bin_job_is_tiny(bin_job *b) {
  if (b->program || b->ex.replicas > 1 || b->ex.partitions > 1) return false;
  cache_entry *e = cache_get_for(&b->srv->cache, b->ex.id, bin_visible(b),
                                 false);
  if (!e) return false;
  int mr, mp;
  shlo_module_grid(e->m, &mr, &mp);
  const shlo_executable *x = cache_entry_peek(e, b->entry);
  bool tiny = mr * mp == 1 && e->replicas <= 1 && e->partitions <= 1 &&
              srv_inline_ok(b->srv, x) &&
              !srv_batch_enabled(b->srv->batcher, b->team->name, e->id);
  cache_release(&b->srv->cache, e);
  return tiny;
}

srv_lane bin_job_lane(bin_job *b) {
  srv_cache *c = &b->srv->cache;
  if (b->type == SHLO_BIN_COMPILE) return SRV_LANE_SHORT;
  cache_entry *e = b->program
                       ? cache_find_text(c, b->program, b->program_len,
                                         (int)b->ex.replicas,
                                         (int)b->ex.partitions, false)
                       : cache_get(c, b->ex.id, false);
  if (!e) return SRV_LANE_LONG;
  srv_lane lane = srv_lane_of(e, cache_entry_peek(e, b->entry));
  cache_release(c, e);
  return lane;
}

void bin_job_free(bin_job *b) {
  for (uint32_t k = 0; b->inputs && k < b->ex.n_inputs; k++)
    if (b->inputs[k]) shlo_value_unref(b->inputs[k]);
  free(b->inputs);
  free(b->entry);
  free(b->program);
  srv_capture_free(&b->printed);
  bin_answer_free(&b->ans);
  free(b);
}
