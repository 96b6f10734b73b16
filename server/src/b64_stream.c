/* Base64 answers encoded as they are sent (b64_stream.h). */
#include "b64_stream.h"

#include <stdlib.h>
#include <string.h>

#include "json_write.h"

struct srv_b64_reply {
  shlo__b64_holes h; /* each hole holds a reference to its tensor */
  char *text;
  size_t text_len;
  /* where the last block ended: segment seg (text before hole seg / 2
   * when even, hole seg / 2 when odd) starts at byte seg_pos */
  int seg;
  uint64_t seg_pos;
};

/* Base64's length for n bytes. */
static size_t b64_len(size_t n) { return (n + 2) / 3 * 4; }

static bool any_large(const shlo_value *v) {
  if (v->kind == SHLO_TYPE_TUPLE) {
    for (int i = 0; i < v->n_elems; i++)
      if (any_large(v->elems[i])) return true;
    return false;
  }
  return v->kind == SHLO_TYPE_TENSOR && v->nbytes >= SRV_B64_STREAM_MIN;
}

void srv_b64_reply_free(srv_b64_reply *reply) {
  if (!reply) return;
  for (int k = 0; k < reply->h.n; k++) shlo_value_unref(reply->h.at[k].v);
  free(reply->h.at);
  free(reply->text);
  free(reply);
}

int srv_b64_reply_build(shlo_value *const *outputs, int n_outputs,
                        int n_procs, const char *module_id, bool cached,
                        double compile_ms, double execute_ms, char **json,
                        srv_b64_reply **out) {
  int n = n_outputs * (n_procs > 1 ? n_procs : 1);
  bool large = false;
  for (int i = 0; i < n && !large; i++) large = any_large(outputs[i]);
  if (!large) return 0;
  srv_b64_reply *reply = calloc(1, sizeof *reply);
  if (!reply) return -1;
  reply->h.min_bytes = SRV_B64_STREAM_MIN;
  *json = shlo__exec_resp_build_holes(outputs, n_outputs, n_procs, module_id,
                                      cached, compile_ms, execute_ms,
                                      &reply->h);
  if (!*json) {
    reply->h.n = 0; /* no references taken yet */
    srv_b64_reply_free(reply);
    return -1;
  }
  /* the outputs are the caller's: the answer keeps its own references */
  for (int k = 0; k < reply->h.n; k++) shlo_value_ref(reply->h.at[k].v);
  *out = reply;
  return 1;
}

/* Segment s's length. */
static size_t seg_len(const srv_b64_reply *r, int s) {
  int k = s / 2;
  if (s % 2) return b64_len(r->h.at[k].v->nbytes);
  size_t from = k ? r->h.at[k - 1].at : 0;
  size_t to = k < r->h.n ? r->h.at[k].at : r->text_len;
  return to - from;
}

/* Up to m bytes of v's base64 from its byte o into buf; whole groups are
 * encoded in place, a group cut by o or m through a scratch group. */
static size_t put_b64(const shlo_value *v, size_t o, char *buf, size_t m) {
  const unsigned char *d = v->data;
  size_t total = b64_len(v->nbytes), done = 0;
  if (m > total - o) m = total - o;
  while (done < m) {
    size_t g = (o + done) / 4, off = (o + done) % 4, from = g * 3;
    if (off == 0 && m - done >= 4) {
      size_t nb = (m - done) / 4 * 3;
      if (nb > v->nbytes - from) nb = v->nbytes - from;
      done += shlo__b64_encode_to(d + from, nb, buf + done);
    } else {
      char group[4];
      size_t nb = v->nbytes - from < 3 ? v->nbytes - from : 3;
      shlo__b64_encode_to(d + from, nb, group);
      size_t k = 4 - off < m - done ? 4 - off : m - done;
      memcpy(buf + done, group + off, k);
      done += k;
    }
  }
  return done;
}

/* libmicrohttpd's reader: the body's bytes from pos, up to max. */
static ssize_t read_body(void *cls, uint64_t pos, char *buf, size_t max) {
  srv_b64_reply *r = cls;
  int last = 2 * r->h.n; /* the text after the last hole */
  if (pos < r->seg_pos) { /* not expected: MHD reads forward */
    r->seg = 0;
    r->seg_pos = 0;
  }
  size_t done = 0;
  while (done < max && r->seg <= last) {
    size_t len = seg_len(r, r->seg);
    uint64_t at = pos + done;
    if (at >= r->seg_pos + len) {
      r->seg_pos += len;
      r->seg++;
      continue;
    }
    size_t o = (size_t)(at - r->seg_pos), m = max - done;
    if (m > len - o) m = len - o;
    if (r->seg % 2) {
      done += put_b64(r->h.at[r->seg / 2].v, o, buf + done, m);
    } else {
      int k = r->seg / 2;
      memcpy(buf + done, r->text + (k ? r->h.at[k - 1].at : 0) + o, m);
      done += m;
    }
  }
  return done ? (ssize_t)done : MHD_CONTENT_READER_END_OF_STREAM;
}

static void free_reply(void *cls) { srv_b64_reply_free(cls); }

/* Blocks of this size: large enough that a call's overhead vanishes,
 * small enough to stay in cache between encoding and sending. */
#define SRV_B64_BLOCK ((size_t)256 << 10)

struct MHD_Response *srv_b64_reply_response(srv_b64_reply *reply, char *json,
                                            size_t json_len, size_t *len) {
  free(reply->text);
  reply->text = json;
  reply->text_len = json_len;
  uint64_t total = json_len;
  for (int k = 0; k < reply->h.n; k++)
    total += b64_len(reply->h.at[k].v->nbytes);
  struct MHD_Response *resp = MHD_create_response_from_callback(
      total, SRV_B64_BLOCK, read_body, reply, free_reply);
  if (!resp) {
    srv_b64_reply_free(reply);
    return NULL;
  }
  *len = (size_t)total;
  return resp;
}
