/* SPDX-License-Identifier: Apache-2.0 */
/* Base64 answers encoded as they are sent (b64_stream.h). */
#include "b64_stream.h"
#include "core/value.h"

#include <stdlib.h>
#include <string.h>

#include "json_write.h"
#include "server.h"

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

/* ---- bodies decoded as they arrive ---- */

/* Where the scanner is in the JSON text. */
typedef enum {
  IN_START,  /* before the first byte that is not white space */
  IN_TEXT,   /* between strings */
  IN_STR,    /* in a string */
  IN_ESC,    /* after a backslash in a string */
  IN_KEY,    /* after the string "b64": a ':' makes it a member name */
  IN_COLON,  /* after "b64": -- a '"' starts its value */
  IN_VALUE,  /* in the value of a "b64" member, kept while it is short */
  IN_DECODE, /* in it, decoding whole groups as they come */
  IN_TAIL,   /* in its rest, past the decoded groups */
  IN_OFF     /* nothing more to look for: keep every byte */
} in_state;

#define SRV_B64_MAX_SPLICES 16 /* each reserves up to the body's rest */

struct srv_b64_in {
  in_state state;
  size_t str_start;  /* body offset of the current string's first byte */
  bool escaped;      /* the current string has an escape */
  size_t remaining;  /* body bytes still to come, by Content-Length */
  char pend[4];      /* a group cut by the end of an upload piece */
  int n_pend;
  bool broken;       /* a decoded string went on irregularly */
  shlo_proto_b64_splice sp[SRV_B64_MAX_SPLICES];
  size_t at[SRV_B64_MAX_SPLICES]; /* body offsets of their rests */
  int n;
};

srv_b64_in *srv_b64_in_new(size_t content_length) {
  srv_b64_in *d = calloc(1, sizeof *d);
  if (d) d->remaining = content_length;
  return d;
}

void srv_b64_in_free(srv_b64_in *d) {
  if (!d) return;
  for (int i = 0; i < d->n; i++) free(d->sp[i].bytes);
  free(d);
}

static bool is_ws(char c) {
  return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

static bool in_alphabet(const char *s, size_t n) {
  char scratch[3];
  size_t w;
  char g[4] = {'A', 'A', 'A', 'A'};
  memcpy(g, s, n);
  return shlo__b64_decode_groups(g, 4, scratch, 3, &w) == 4;
}

/* The current string, which began at d->str_start and has had its
 * characters kept so far, starts being decoded: its whole groups move
 * from the body into a new buffer.  False when it is not all alphabet
 * (it stays a plain string) or out of splices; -1 out of memory. */
static int splice_begin(srv_request *r, srv_b64_in *d) {
  size_t have = r->len - d->str_start;
  if (d->n == SRV_B64_MAX_SPLICES) return 0;
  size_t cap = (have + d->remaining) / 4 * 3 + 3;
  cap = (cap + 63) / 64 * 64;
  shlo_proto_b64_splice *sp = &d->sp[d->n];
  sp->bytes = aligned_alloc(64, cap);
  if (!sp->bytes) return -1;
  shlo__advise_huge(sp->bytes, cap);
  sp->cap = cap;
  size_t k = shlo__b64_decode_groups(r->body + d->str_start, have, sp->bytes,
                                     cap, &sp->n);
  if (have - k >= 4 || !in_alphabet(r->body + d->str_start + k, have - k)) {
    free(sp->bytes); /* a character outside the alphabet: a plain string */
    *sp = (shlo_proto_b64_splice){0};
    return 0;
  }
  sp->chars = k;
  d->n_pend = (int)(have - k);
  memcpy(d->pend, r->body + d->str_start + k, (size_t)d->n_pend);
  d->at[d->n++] = d->str_start;
  r->len = d->str_start; /* the characters are in sp now */
  r->body[r->len] = 0;
  return 1;
}

/* The decoded string goes on with something other than whole groups:
 * the cut group goes back to the body, and the rest follows it. */
static bool splice_end(srv_request *r, srv_b64_in *d) {
  d->state = IN_TAIL;
  int k = d->n_pend;
  d->n_pend = 0;
  return srv_body_append(r, d->pend, (size_t)k);
}

/* Decode what p[0..n) continues of the current string; returns the bytes
 * taken, (size_t)-1 when out of memory. */
static size_t feed_decode(srv_request *r, srv_b64_in *d, const char *p,
                          size_t n) {
  shlo_proto_b64_splice *sp = &d->sp[d->n - 1];
  size_t i = 0, w;
  while (d->n_pend && i < n) { /* complete the cut group first */
    if (!in_alphabet(p + i, 1)) return splice_end(r, d) ? i : (size_t)-1;
    d->pend[d->n_pend++] = p[i++];
    if (d->n_pend < 4) continue;
    if (!shlo__b64_decode_groups(d->pend, 4, (char *)sp->bytes + sp->n,
                                 sp->cap - sp->n, &w))
      return splice_end(r, d) ? i : (size_t)-1;
    sp->n += w;
    sp->chars += 4;
    d->n_pend = 0;
  }
  if (d->n_pend) return n; /* still cut: the piece ended */
  size_t k = shlo__b64_decode_groups(p + i, n - i, (char *)sp->bytes + sp->n,
                                     sp->cap - sp->n, &w);
  sp->n += w;
  sp->chars += k;
  i += k;
  if (n - i >= 4 || !in_alphabet(p + i, n - i))
    return splice_end(r, d) ? i : (size_t)-1;
  memcpy(d->pend, p + i, n - i); /* a group cut by the piece's end */
  d->n_pend = (int)(n - i);
  return n;
}

/* Past the string bytes of p[0..n) up to its closing quote or an escape
 * (the one that stops it, or n). */
static size_t string_run(const char *p, size_t n) {
  const char *q = memchr(p, '"', n);
  size_t to = q ? (size_t)(q - p) : n;
  const char *bs = memchr(p, '\\', to);
  return bs ? (size_t)(bs - p) : to;
}

/* The string that just ended (its closing quote the body's last byte). */
static bool string_is(const srv_request *r, const srv_b64_in *d,
                      const char *s) {
  size_t n = strlen(s);
  return !d->escaped && r->len - 1 - d->str_start == n &&
         !memcmp(r->body + d->str_start, s, n);
}

/* One step of the scanner over p[0..n): returns the bytes it took (0 is
 * fine: a state change), (size_t)-1 when out of memory. */
static size_t feed_step(srv_request *r, srv_b64_in *d, const char *p,
                        size_t n) {
  size_t k;
  switch (d->state) {
  case IN_OFF:
    return srv_body_append(r, p, n) ? n : (size_t)-1;
  case IN_START:
  case IN_KEY:
  case IN_COLON:
    if (is_ws(p[0])) return srv_body_append(r, p, 1) ? 1 : (size_t)-1;
    if (d->state == IN_START) d->state = p[0] == '{' ? IN_TEXT : IN_OFF;
    else if (d->state == IN_KEY) d->state = p[0] == ':' ? IN_COLON : IN_TEXT;
    else if (p[0] == '"') d->state = IN_VALUE;
    else d->state = IN_TEXT;
    if (d->state == IN_TEXT) return 0; /* p[0] again, as text */
    d->escaped = false;
    d->str_start = r->len + 1;
    return srv_body_append(r, p, 1) ? 1 : (size_t)-1;
  case IN_TEXT: {
    const char *q = memchr(p, '"', n);
    k = q ? (size_t)(q - p) + 1 : n;
    if (!srv_body_append(r, p, k)) return (size_t)-1;
    if (q) {
      d->state = IN_STR;
      d->escaped = false;
      d->str_start = r->len;
    }
    return k;
  }
  case IN_ESC:
    d->state = IN_STR;
    return srv_body_append(r, p, 1) ? 1 : (size_t)-1;
  case IN_STR:
  case IN_VALUE:
  case IN_TAIL:
    k = string_run(p, n);
    if (k == n || p[k] == '\\') { /* the string goes on */
      if (k < n) {
        d->escaped = true;
        k++;
        /* an escape after decoded groups: they go back (finish) */
        d->broken = d->state == IN_TAIL;
        d->state = d->broken ? IN_OFF : IN_ESC;
      }
      if (!srv_body_append(r, p, k)) return (size_t)-1;
      if (d->state == IN_VALUE && r->len - d->str_start >= SRV_B64_SPLICE_MIN) {
        int got = splice_begin(r, d);
        if (got < 0) return (size_t)-1;
        d->state = got ? IN_DECODE : IN_STR;
      }
      return k;
    }
    if (!srv_body_append(r, p, k + 1)) return (size_t)-1;
    d->state = d->state == IN_STR && string_is(r, d, "b64") ? IN_KEY : IN_TEXT;
    return k + 1;
  case IN_DECODE:
    return feed_decode(r, d, p, n);
  }
  return (size_t)-1;
}

bool srv_b64_in_feed(srv_request *r, const char *p, size_t n) {
  srv_b64_in *d = r->b64_in;
  while (n) {
    size_t k = feed_step(r, d, p, n);
    if (k == (size_t)-1) return false;
    d->remaining -= k < d->remaining ? k : d->remaining;
    p += k;
    n -= k;
  }
  return true;
}

bool srv_b64_in_unsplice(srv_request *r) {
  srv_b64_in *d = r->b64_in;
  if (!d || !d->n) return false;
  size_t total = r->len;
  for (int i = 0; i < d->n; i++) total += d->sp[i].chars;
  char *body = malloc(total + 1), *o = body;
  if (!body) return false;
  size_t from = 0;
  for (int i = 0; i < d->n; i++) { /* whole groups: chars exactly */
    memcpy(o, r->body + from, d->at[i] - from);
    o += d->at[i] - from;
    o += shlo__b64_encode_to(d->sp[i].bytes, d->sp[i].n, o);
    from = d->at[i];
  }
  memcpy(o, r->body + from, r->len - from);
  o += r->len - from;
  *o = 0;
  free(r->body);
  r->body = body;
  r->len = r->cap = total;
  r->cap++;
  srv_b64_in_free(d);
  r->b64_in = NULL;
  return true;
}

bool srv_b64_in_finish(srv_request *r) {
  srv_b64_in *d = r->b64_in;
  bool inside = d->state == IN_DECODE || d->state == IN_TAIL;
  if (!d->n) return true;
  if (d->broken || inside) return srv_b64_in_unsplice(r);
  for (int i = 0; i < d->n; i++) d->sp[i].at = r->body + d->at[i];
  return true;
}

shlo_proto_b64_splice *srv_b64_in_splices(srv_request *r, int *n) {
  *n = r->b64_in ? r->b64_in->n : 0;
  return r->b64_in ? r->b64_in->sp : NULL;
}
