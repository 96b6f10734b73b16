/* SPDX-License-Identifier: Apache-2.0 */
/* The streaming connections of an execution (loop thread):
 *
 * - uploads (POST .../infeed, POST .../channels/{c}): each NDJSON line is
 *   decoded and queued the moment it is complete; when the queue is full
 *   the connection is suspended with the rest of the upload unread, so the
 *   client's TCP window closes (backpressure) instead of the server
 *   buffering;
 * - readers (GET .../outfeed, GET .../channels/{c}): a chunked NDJSON
 *   response whose callback pops values as the program produces them and
 *   suspends the connection while there are none; the last line is the
 *   execution's final state.
 *
 * A suspended connection is resumed by its execution's wake-up (a queue
 * moved, the job ended) and simply looks again. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/value.h"
#include "stream_int.h"
#include "json_write.h"
#include "shlo/protocol.h"

/* ---- the query ---- */

static long long arg_int(srv_request *r, const char *name, long long def) {
  const char *v =
      MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, name);
  if (!v || !*v) return def;
  char *end;
  long long n = strtoll(v, &end, 10);
  return *end ? -1 : n;
}

/* ?replica=R&partition=P -> st->proc (-1 when neither is given);
 * channel routes: the channel id.  False with a 400 set when malformed. */
static bool read_query(srv_request *r) {
  srv_stream *st = r->stream;
  long long R = arg_int(r, "replica", -2), P = arg_int(r, "partition", -2);
  if (R == -1 || P == -1 || R > 1 << 20 || P > 1 << 20) {
    srv_reply_error(r, SHLO_PERR_INPUT, 400, 0, 0,
                    "replica and partition must be integers >= 0");
    return false;
  }
  st->proc = -1;
  if (R >= 0 || P >= 0) { /* made a process index once the grid is known */
    st->proc = (int)((R < 0 ? 0 : R) << 20 | (P < 0 ? 0 : P));
  }
  st->close_after = arg_int(r, "close", 0) == 1;
  if (r->route == R_EXEC_CHANNEL) {
    const char *c = strstr(r->path, "/channels/") + 10;
    char *end;
    st->chan = strtoll(c, &end, 10);
    if (end == c || *end) {
      srv_reply_error(r, SHLO_PERR_INPUT, 400, 0, 0,
                      "a channel id is an integer: %s", c);
      return false;
    }
  }
  return true;
}

/* The process index of st->proc on x's grid; -2 (with a 400 set) when out
 * of the grid; -1 for "all" (readers) . */
static int proc_index(srv_request *r, const srv_execution *x) {
  int p = r->stream->proc;
  if (p < 0) return -1;
  int R = p >> 20, P = p & ((1 << 20) - 1);
  if (R >= x->replicas || P >= x->partitions) {
    srv_reply_error(r, SHLO_PERR_INPUT, 400, 0, 0,
                    "no process (%d, %d) on this %d x %d grid", R, P,
                    x->replicas, x->partitions);
    return -2;
  }
  return R * x->partitions + P;
}

/* ---- uploads ---- */

/* The queue an upload feeds: NULL while the grid is not known yet (the
 * job has not started), or (st->failed, answer set) for a bad process. */
static shlo_feed *upload_queue(srv_request *r) {
  srv_execution *x = r->exe;
  srv_stream *st = r->stream;
  if (r->route == R_EXEC_CHANNEL) {
    shlo_feed *q = x_channel(x, st->chan, false);
    if (!q) {
      srv_reply_error(r, SHLO_PERR_LIMIT, 413, 0, 0,
                      "more than %d host channels", X_MAX_CHANS);
      st->failed = true;
    }
    return q;
  }
  if (!atomic_load(&x->bound)) return NULL;
  int k = proc_index(r, x);
  if (k == -2) {
    st->failed = true;
    return NULL;
  }
  return x->in[k < 0 ? 0 : k];
}

static void upload_fail(srv_request *r, int http, int kind, const char *msg) {
  srv_reply_error(r, kind, http, 0, 0, "%s", msg);
  r->stream->failed = true;
}

/* Decode one JSON tensor of the upload into st->pending. */
static bool decode_line(srv_request *r, const char *text, size_t len) {
  srv_stream *st = r->stream;
  const srv_config *c = &r->srv->cfg;
  size_t stop = 0;
  cJSON *j = shlo_proto_json_parse(text, len, &stop);
  while (j && stop < len && strchr(" \t\r\n", text[stop])) stop++;
  if (!j || stop != len) {
    cJSON_Delete(j);
    srv_reply_error(r, SHLO_PERR_INPUT, 400, 0, 0,
                    "value %lld of the upload is not one JSON tensor "
                    "(byte %zu of its line)", (long long)st->queued, stop);
    st->failed = true;
    return false;
  }
  shlo_proto_limits lim = {.max_elements = c->max_tensor_elements,
                           .max_bytes = c->max_tensor_bytes};
  char path[40];
  snprintf(path, sizeof path, "values[%lld]", (long long)st->queued);
  shlo_proto_error e;
  int rc = shlo_proto_tensor_decode(j, NULL, &lim, path, &st->pending, &e);
  cJSON_Delete(j);
  if (rc) {
    srv_reply_error(r, e.kind, e.http, 0, 0, "%s", e.message);
    st->failed = true;
    return false;
  }
  return true;
}

/* Queue st->pending if there is room: true when queued (or nothing was
 * pending), false when full or failed (st->failed, answer set). */
static bool push_pending(srv_request *r, shlo_feed *q) {
  srv_stream *st = r->stream;
  if (!st->pending) return true;
  size_t bytes = st->pending->kind == SHLO_TYPE_TENSOR ? st->pending->nbytes : 0;
  shlo_status rc = shlo_feed_try_push(q, st->pending);
  if (rc == SHLO_ELIMIT) return false;
  if (rc == SHLO_EINPUT)
    upload_fail(r, 409, SHLO_PERR_INPUT, "the queue is closed (?close=1)");
  else if (rc)
    upload_fail(r, 500, SHLO_PERR_RUNTIME, "out of memory");
  if (rc) return false;
  shlo_value_unref(st->pending);
  st->pending = NULL;
  st->queued++;
  r->exe->bytes_in += bytes;
  r->exe->owner->bytes_in += bytes;
  r->exe->activity_ns = srv_now_ns();
  if (r->conn_state) r->conn_state->since_ns = r->exe->activity_ns;
  return true;
}

/* The upload's connection is timed by the gap between its values
 * (stream-idle-timeout-s), not by request-timeout-s: a stream that feeds
 * a value a second for an hour is well-behaved.  The clock restarts with
 * each value queued, and while the server keeps it waiting (on_sweep). */
static void time_by_values(srv_request *r) {
  srv_conn *k = r->conn_state;
  if (!k) return;
  k->streaming = true;
  k->stream_idle_ns =
      (uint64_t)r->srv->cfg.stream_idle_timeout_s * 1000000000ull;
  k->since_ns = srv_now_ns();
}

/* The first piece of an upload: its execution, query and content type. */
static bool upload_begin(srv_request *r) {
  if (!x_attach(r) || !read_query(r)) return false;
  const char *ct =
      MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "Content-Type");
  /* one JSON tensor for application/json, else one per line */
  r->stream->ndjson = !ct || strncasecmp(ct, "application/json", 16);
  r->stream->started = true;
  time_by_values(r);
  return true;
}

enum MHD_Result srv_execs_upload_headers(srv_request *r) {
  if (!upload_begin(r)) {
    if (r->stream) r->stream->failed = true;
    return srv_http_reply(r); /* 404, 400: the body is not worth reading */
  }
  if (!x_final(r->exe)) return MHD_YES;
  /* An ended execution takes no more values: say so before the client
   * sends them (the connection closes after the answer). */
  srv_reply_error(r, SHLO_PERR_INPUT, 409, 0, 0,
                  "execution %s has ended (%s): it takes no more values",
                  r->exe->id, x_state_name(atomic_load(&r->exe->state)));
  r->stream->failed = true;
  return srv_http_reply(r);
}

static bool blank(const char *p, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!strchr(" \t\r\n", p[i])) return false;
  return true;
}

/* Is the upload over before its end: answered already, or the execution
 * ended with values of it (a pending one, or the n bytes at p, or its
 * unfinished line) not queued (409)? */
static bool upload_stopped(srv_request *r, const char *p, size_t n) {
  srv_stream *st = r->stream;
  if (st->failed) return true;
  if (!x_final(r->exe)) return false;
  if (!st->pending && blank(p, n) && blank(st->line.data, st->line.len))
    return false; /* all it sent is queued: the end is no error */
  srv_reply_error(r, SHLO_PERR_INPUT, 409, 0, 0,
                  "execution %s has ended (%s) after %lld value(s) of this "
                  "upload", r->exe->id,
                  x_state_name(atomic_load(&r->exe->state)),
                  (long long)st->queued);
  st->failed = true;
  return true;
}

/* Take whole lines from the n bytes at p while the queue has room;
 * returns how many bytes were used. */
static size_t take_lines(srv_request *r, shlo_feed *q, const char *p,
                         size_t n) {
  srv_stream *st = r->stream;
  size_t max = (size_t)r->srv->cfg.max_body_bytes, used = 0;
  while (used < n && !st->pending && !st->failed) {
    const char *nl = st->ndjson ? memchr(p + used, '\n', n - used) : NULL;
    size_t take = nl ? (size_t)(nl - (p + used)) + 1 : n - used;
    if (st->line.len + take > max) {
      upload_fail(r, 413, SHLO_PERR_LIMIT,
                  "a value of the upload is longer than max-body-bytes");
      break;
    }
    shlo__sb_add(&st->line, p + used, take);
    used += take;
    if (!nl) break;
    if (!blank(st->line.data, st->line.len) &&
        decode_line(r, st->line.data, st->line.len))
      push_pending(r, q);
    st->line.len = 0;
  }
  if (st->line.failed) upload_fail(r, 500, SHLO_PERR_RUNTIME, "out of memory");
  return used;
}

enum MHD_Result srv_execs_upload(srv_request *r, const char *upload,
                                 size_t *upload_size) {
  if (!r->stream && !upload_begin(r) && r->stream) r->stream->failed = true;
  srv_stream *st = r->stream;
  if (!st || st->failed || upload_stopped(r, upload, *upload_size) ||
      x_final(r->exe)) {
    *upload_size = 0; /* read and dropped (or blank, after the end); the
                         answer goes out at the end */
    return st ? MHD_YES : MHD_NO;
  }
  shlo_feed *q = upload_queue(r);
  if (q && push_pending(r, q)) {
    size_t used = take_lines(r, q, upload, *upload_size);
    *upload_size -= used;
    if (st->failed) *upload_size = 0;
  }
  if (st->failed || (q && !st->pending && !*upload_size)) return MHD_YES;
  /* full (or not started): stop reading until the execution moves */
  return x_wait(r->exe, r, false) ? MHD_YES : MHD_NO;
}

static char *answer_queued(const srv_stream *st) {
  char *json = malloc(48);
  if (json) snprintf(json, 48, "{\"queued\":%lld}", (long long)st->queued);
  return json;
}

/* The upload is complete (also after each resume): queue its last value,
 * close the queue if asked, answer {"queued": n}. */
enum MHD_Result x_upload_end(srv_request *r) {
  if (!r->stream && !upload_begin(r)) return srv_http_reply(r);
  srv_stream *st = r->stream;
  if (upload_stopped(r, "", 0)) return srv_http_reply(r);
  shlo_feed *q = x_final(r->exe) ? NULL : upload_queue(r);
  if (!q && !st->failed && x_final(r->exe)) {
    x_reply(r, 200, answer_queued(st)); /* all it sent was queued */
    return srv_http_reply(r);
  }
  if (st->failed) return srv_http_reply(r);
  if (q && push_pending(r, q) && st->line.len) {
    if (!blank(st->line.data, st->line.len) &&
        decode_line(r, st->line.data, st->line.len))
      push_pending(r, q);
    st->line.len = 0;
    if (st->failed) return srv_http_reply(r);
  }
  if (!q || st->pending)
    return x_wait(r->exe, r, false) ? MHD_YES : MHD_NO;
  if (st->close_after) shlo_feed_close(q);
  x_reply(r, 200, answer_queued(st));
  return srv_http_reply(r);
}

/* ---- readers ---- */

/* Append one encoded value as a line, with its process on a grid. */
static bool put_value(srv_request *r, shlo_value *v, int k) {
  srv_stream *st = r->stream;
  srv_execution *x = r->exe;
  char *json = shlo_proto_tensor_encode(v, arg_int(r, "b64", 0) == 1);
  size_t bytes = v->kind == SHLO_TYPE_TENSOR ? v->nbytes : 0;
  shlo_value_unref(v);
  if (!json) return false;
  if (st->sse) shlo__sb_puts(&st->out, "data: ");
  if (k >= 0 && x->n_procs > 1) {
    shlo__sb_printf(&st->out, "{\"replica\":%d,\"partition\":%d,",
                    k / x->partitions, k % x->partitions);
    shlo__sb_puts(&st->out, json + 1);
  } else {
    shlo__sb_puts(&st->out, json);
  }
  shlo__sb_puts(&st->out, st->sse ? "\n\n" : "\n");
  free(json);
  x->bytes_out += bytes;
  x->owner->bytes_out += bytes;
  x->activity_ns = srv_now_ns();
  return !st->out.failed;
}

/* The next value for this reader, round robin over its processes. */
static bool pop_value(srv_request *r) {
  srv_stream *st = r->stream;
  srv_execution *x = r->exe;
  shlo_value *v;
  if (r->route == R_EXEC_CHANNEL) {
    shlo_feed *q = x_channel(x, st->chan, true);
    return q && shlo_feed_pop(q, 0, &v) == SHLO_OK && put_value(r, v, -1);
  }
  if (!atomic_load(&x->bound)) return false;
  int only = proc_index(r, x);
  for (int i = 0; i < x->n_procs; i++) {
    int k = only >= 0 ? only : (st->next_proc + i) % x->n_procs;
    if (shlo_feed_pop(x->out[k], 0, &v) == SHLO_OK) {
      st->next_proc = (k + 1) % x->n_procs;
      return put_value(r, v, k);
    }
    if (only >= 0) break;
  }
  return false;
}

static ssize_t read_values(void *cls, uint64_t pos, char *buf, size_t max) {
  (void)pos;
  srv_request *r = cls;
  srv_stream *st = r->stream;
  if (shlo_cancel_reason(&r->cancel)) return MHD_CONTENT_READER_END_WITH_ERROR;
  if (st->out_off == st->out.len) {
    st->out.len = st->out_off = 0;
    /* The job ends after its processes' last outfeed: once it has, an
     * empty queue stays empty. */
    bool final = x_final(r->exe);
    if (!st->ended && !pop_value(r) && final) {
      char *last = x_state_json(r->exe); /* begins {"id":..,"state":.. */
      if (st->sse) shlo__sb_puts(&st->out, "event: end\ndata: ");
      if (last) shlo__sb_puts(&st->out, last);
      shlo__sb_puts(&st->out, st->sse ? "\n\n" : "\n");
      st->out.failed |= !last;
      free(last);
      st->ended = true;
    }
    if (st->out.failed) return MHD_CONTENT_READER_END_WITH_ERROR;
  }
  size_t n = st->out.len - st->out_off;
  if (n) {
    if (n > max) n = max;
    memcpy(buf, st->out.data + st->out_off, n);
    st->out_off += n;
    return (ssize_t)n;
  }
  if (st->ended) return MHD_CONTENT_READER_END_OF_STREAM;
  return x_wait(r->exe, r, true) ? 0 : MHD_CONTENT_READER_END_WITH_ERROR;
}

enum MHD_Result x_stream_out(srv_request *r) {
  srv_stream *st = r->stream;
  if (!read_query(r)) return srv_http_reply(r);
  if (atomic_load(&r->exe->bound) && proc_index(r, r->exe) == -2)
    return srv_http_reply(r);
  st->reader = st->started = true;
  /* A browser's EventSource asks for text/event-stream: the same values,
   * one "data:" event each, and the final state as an "end" event. */
  const char *accept =
      MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "Accept");
  st->sse = accept && strstr(accept, "text/event-stream");
  struct MHD_Response *resp = MHD_create_response_from_callback(
      MHD_SIZE_UNKNOWN, 64 * 1024, read_values, r, NULL);
  if (!resp) return MHD_NO;
  MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
                          st->sse ? "text/event-stream"
                                  : "application/x-ndjson");
  MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
  r->state = RS_DONE;
  r->status = 200;
  /* its request is complete: request-timeout-s is over for it (the
   * answer may stream as long as the program runs) */
  if (r->conn_state) r->conn_state->busy = true;
  enum MHD_Result ret = MHD_queue_response(r->conn, 200, resp);
  MHD_destroy_response(resp);
  return ret;
}

void x_stream_free(srv_stream *st) {
  if (st->pending) shlo_value_unref(st->pending);
  free(st->line.data);
  free(st->out.data);
  free(st);
}
