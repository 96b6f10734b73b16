/* SPDX-License-Identifier: Apache-2.0 */
/* libshlo-client over the binary protocol: one TCP connection, writes
 * under a lock (a frame goes out whole, its tensors straight from the
 * caller's buffers with writev), and one reader thread that routes each
 * answer to its call by request id, so calls from many threads overlap. */
#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "client_int.h"
#include "shlo/binproto.h"

typedef struct xsub xsub;

typedef struct bin {
  int fd;
  int version;
  pthread_mutex_t wlock;   /* one frame at a time on the socket */
  pthread_mutex_t plock;   /* pending, next_id, dead */
  shlo_call *pending;
  uint64_t next_id;
  bool dead;
  char why[256];           /* why the connection ended */
  xsub *subs;              /* SUBSCRIBEs not yet ended (plock) */
  pthread_t reader;
  char host[256];          /* where it connected, for a sibling */
  int port;
  char *token;
} bin;

static const char zeros[8];

static int read_full(int fd, void *p, size_t n) {
  char *b = p;
  while (n) {
    ssize_t r = recv(fd, b, n, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return -1;
    b += r;
    n -= (size_t)r;
  }
  return 0;
}

/* Write every iovec (advancing through partial writes). */
static int write_all(int fd, struct iovec *iov, int n) {
  while (n > 0) {
    ssize_t w = writev(fd, iov, n > 1024 ? 1024 : n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    while (n > 0 && (size_t)w >= iov->iov_len) {
      w -= (ssize_t)iov->iov_len;
      iov++;
      n--;
    }
    if (n > 0) {
      iov->iov_base = (char *)iov->iov_base + w;
      iov->iov_len -= (size_t)w;
    }
  }
  return 0;
}

/* A frame of type/id whose payload is the n iovecs after iov[0], which
 * this fills with the header. */
static int send_frame(bin *b, int type, uint64_t id, struct iovec *iov,
                      int n) {
  uint64_t len = 0;
  for (int i = 1; i < n; i++) len += iov[i].iov_len;
  shlo_bin_header h;
  shlo_bin_header_init(&h, b->version, type, id, len);
  iov[0].iov_base = &h;
  iov[0].iov_len = sizeof h;
  pthread_mutex_lock(&b->wlock);
  int rc = write_all(b->fd, iov, n);
  pthread_mutex_unlock(&b->wlock);
  return rc;
}

/* ---- the reader ---- */

/* OUTPUT for a pending call: its text is kept with the call (appended,
 * should the server send more than one); the call stays pending. */
static void keep_output(bin *b, uint64_t id, const char *p, uint64_t len) {
  shlo_bin_output o;
  if (len < sizeof o) return;
  memcpy(&o, p, sizeof o);
  if (o.length > len - sizeof o) return;
  pthread_mutex_lock(&b->plock);
  shlo_call *c = b->pending;
  while (c && c->id != id) c = c->next;
  char *t = c ? realloc(c->printed, c->printed_len + o.length + 1) : NULL;
  if (t) {
    memcpy(t + c->printed_len, p + sizeof o, o.length);
    c->printed = t;
    c->printed_len += o.length;
    t[c->printed_len] = 0;
  }
  pthread_mutex_unlock(&b->plock);
}

static shlo_call *take_pending(bin *b, uint64_t id) {
  pthread_mutex_lock(&b->plock);
  shlo_call **pp = &b->pending, *c = NULL;
  for (; *pp; pp = &(*pp)->next)
    if ((*pp)->id == id) {
      c = *pp;
      *pp = c->next;
      break;
    }
  pthread_mutex_unlock(&b->plock);
  return c;
}

static void deliver(shlo_call *call, int type, char *payload, uint64_t len) {
  int status = 0;
  if (type == SHLO_BIN_ERROR) {
    shlo_proto_error e;
    int es = 0;
    if (shlo_bin_error_parse(payload, len, &e, &es))
      status = shlo__client_err_conn(&call->err, "malformed ERROR frame");
    else
      shlo__client_err_from_proto(&call->err, &e, es), status = -1;
  }
  call->type = type;
  call->payload = payload;
  call->payload_len = len;
  shlo__client_call_finish(call, status);
}

static void subs_fail(bin *b, const char *why);

/* The connection is over: every pending call fails. */
static void fail_all(bin *b, const char *why) {
  pthread_mutex_lock(&b->plock);
  b->dead = true;
  snprintf(b->why, sizeof b->why, "%s", why);
  shlo_call *list = b->pending;
  b->pending = NULL;
  pthread_mutex_unlock(&b->plock);
  while (list) {
    shlo_call *n = list->next;
    shlo__client_err_conn(&list->err, "connection lost: %s", why);
    shlo__client_call_finish(list, -1);
    list = n;
  }
  subs_fail(b, why);
}

/* ---- RESULT, read straight into its tensors ---- */

/* A RESULT being read from the socket: left = payload bytes not yet
 * read.  Each tensor's data goes from the socket into the tensor, so a
 * large output is neither held twice nor copied (the frame's payload is
 * never in one buffer). */
typedef struct result_in {
  int fd;
  uint64_t left;
  bool broken; /* the socket failed: the connection is over */
  shlo_proto_error err;
} result_in;

static bool take_bytes(result_in *r, void *p, uint64_t n) {
  if (n > r->left) {
    shlo_proto_fail(&r->err, SHLO_PERR_INPUT, "RESULT: truncated value");
    return false;
  }
  r->left -= n;
  if (read_full(r->fd, p, n) == 0) return true;
  r->broken = true;
  return false;
}

/* One value (a tuple's elements recursively), as shlo_bin_value_read
 * would decode it from a buffer. */
static shlo_value *read_value(result_in *r, int depth) {
  shlo_bin_value h;
  uint64_t dims[SHLO_MAX_RANK];
  int et = -1;
  if (depth > 16) {
    shlo_proto_fail(&r->err, SHLO_PERR_INPUT, "outputs: nested too deep");
    return NULL;
  }
  if (!take_bytes(r, &h, sizeof h)) return NULL;
  if (h.rank <= SHLO_MAX_RANK && !take_bytes(r, dims, 8 * (uint64_t)h.rank))
    return NULL;
  if (shlo_bin_value_check(&h, dims, NULL, "outputs", &et, &r->err))
    return NULL;
  if (h.kind == SHLO_BIN_TOKEN) return shlo_token_new();
  if (h.kind == SHLO_BIN_TUPLE) {
    if (h.length > r->left / sizeof h) {
      shlo_proto_fail(&r->err, SHLO_PERR_INPUT, "RESULT: truncated tuple");
      return NULL;
    }
    shlo_value **el = calloc((size_t)h.length + 1, sizeof *el);
    if (!el) return NULL;
    for (uint64_t i = 0; i < h.length; i++)
      if (!(el[i] = read_value(r, depth + 1))) {
        while (i--) shlo_value_unref(el[i]);
        free(el);
        return NULL;
      }
    shlo_value *t = shlo_tuple_new((int)h.length, el);
    free(el);
    return t;
  }
  if (shlo_bin_pad8(h.length) > r->left) {
    shlo_proto_fail(&r->err, SHLO_PERR_INPUT, "RESULT: truncated tensor");
    return NULL;
  }
  int64_t d[SHLO_MAX_RANK];
  for (int i = 0; i < h.rank; i++) d[i] = (int64_t)dims[i];
  shlo_value *v = shlo_tensor_new((shlo_elem_type)et, h.rank, d);
  char pad[8];
  if (!v) {
    shlo_proto_fail(&r->err, SHLO_PERR_LIMIT, "out of memory");
  } else if (!take_bytes(r, shlo_tensor_data(v), h.length) ||
             !take_bytes(r, pad, shlo_bin_pad8(h.length) - h.length)) {
    shlo_value_unref(v);
    v = NULL;
  }
  return v;
}

/* The RESULT whose header h was just read: its outputs to the pending
 * call (dropped when none waits).  A malformed value fails that call and
 * the rest of the payload is skipped; -1 only when the socket failed. */
static int read_result(bin *b, const shlo_bin_header *h) {
  result_in r = {b->fd, h->length, false, {0}};
  shlo_bin_result rh;
  shlo_value **outs = NULL;
  uint64_t n = 0, got = 0;
  if (!take_bytes(&r, &rh, sizeof rh)) goto bad;
  n = (uint64_t)rh.n_procs * rh.n_outputs;
  if (n > r.left / sizeof(shlo_bin_value)) {
    shlo_proto_fail(&r.err, SHLO_PERR_INPUT, "RESULT lists more values "
                    "than fit");
    goto bad;
  }
  if (!(outs = calloc((size_t)n + 1, sizeof *outs))) {
    shlo_proto_fail(&r.err, SHLO_PERR_LIMIT, "out of memory");
    goto bad;
  }
  for (; got < n; got++)
    if (!(outs[got] = read_value(&r, 0))) goto bad;
  if (r.left) {
    shlo_proto_fail(&r.err, SHLO_PERR_INPUT, "RESULT: bytes after the last "
                    "value");
    goto bad;
  }
  shlo_call *call = take_pending(b, h->id);
  if (!call) { /* canceled and forgotten: nobody wants them */
    for (uint64_t i = 0; i < n; i++) shlo_value_unref(outs[i]);
    free(outs);
    return 0;
  }
  call->outs = outs;
  call->n_outs = (int)n;
  call->type = SHLO_BIN_RESULT;
  shlo__client_call_finish(call, 0);
  return 0;
bad:
  for (uint64_t i = 0; i < got; i++) shlo_value_unref(outs[i]);
  free(outs);
  char skip[4096];
  while (!r.broken && r.left)
    take_bytes(&r, skip, r.left < sizeof skip ? r.left : sizeof skip);
  if (r.broken) return -1;
  if (!r.err.message[0]) /* an allocation that failed without a word */
    shlo_proto_fail(&r.err, SHLO_PERR_LIMIT, "out of memory");
  shlo_call *failed = take_pending(b, h->id);
  if (failed) { /* malformed or out of memory: that call fails */
    shlo__client_err_from_proto(&failed->err, &r.err, 0);
    failed->type = SHLO_BIN_RESULT;
    shlo__client_call_finish(failed, -1);
  }
  return 0;
}

/* ---- subscriptions: OUTFEED values to shlo_execution_next ---- */

#define SUB_MAX_VALUES 256 /* taken-not-yet values before the reader waits */

struct xsub {
  uint64_t id;
  pthread_cond_t cond;     /* with bin.plock */
  shlo_value **vals;       /* a ring of n values from head */
  size_t head, n;
  bool ended, abandoned;   /* abandoned: its execution was freed */
  int status;              /* once ended: 0 (STATE) or -1 */
  shlo_client_error err;
  xsub *next;
};

static void sub_free(xsub *u) {
  for (size_t i = 0; i < u->n; i++)
    shlo_value_unref(u->vals[(u->head + i) % SUB_MAX_VALUES]);
  free(u->vals);
  pthread_cond_destroy(&u->cond);
  free(u);
}

static xsub *sub_find(bin *b, uint64_t id) {
  xsub *u = b->subs;
  while (u && u->id != id) u = u->next;
  return u;
}

/* Unlink u (plock held); an abandoned one is freed. */
static void sub_finish(bin *b, xsub *u, int status) {
  for (xsub **pp = &b->subs; *pp; pp = &(*pp)->next)
    if (*pp == u) {
      *pp = u->next;
      break;
    }
  u->ended = true;
  u->status = status;
  if (u->abandoned) sub_free(u);
  else pthread_cond_broadcast(&u->cond);
}

/* An OUTFEED frame: its value, read from the socket into its tensor, goes
 * to its subscription's ring (the reader waits while the ring is full:
 * the server then stops sending, and the program waits).  -1 only when
 * the socket failed. */
static int read_outfeed(bin *b, const shlo_bin_header *h) {
  result_in r = {b->fd, h->length, false, {0}};
  shlo_bin_outfeed m;
  shlo_value *v = take_bytes(&r, &m, sizeof m) ? read_value(&r, 0) : NULL;
  char skip[4096];
  while (!r.broken && r.left)
    take_bytes(&r, skip, r.left < sizeof skip ? r.left : sizeof skip);
  if (r.broken) {
    shlo_value_unref(v);
    return -1;
  }
  pthread_mutex_lock(&b->plock);
  xsub *u = sub_find(b, h->id);
  while (u && !u->abandoned && u->n == SUB_MAX_VALUES)
    pthread_cond_wait(&u->cond, &b->plock);
  if (u && !u->abandoned && v) {
    u->vals[(u->head + u->n++) % SUB_MAX_VALUES] = v;
    v = NULL;
    pthread_cond_broadcast(&u->cond);
  } else if (u && !v) { /* malformed or out of memory: the stream fails */
    shlo__client_err_from_proto(&u->err, &r.err, 0);
    sub_finish(b, u, -1);
  }
  pthread_mutex_unlock(&b->plock);
  shlo_value_unref(v);
  return 0;
}

/* STATE or ERROR for a subscription: it ends.  False when id is none. */
static bool sub_end(bin *b, uint64_t id, int type, char *p, uint64_t len) {
  pthread_mutex_lock(&b->plock);
  xsub *u = sub_find(b, id);
  if (u) {
    int status = 0;
    shlo_proto_error e;
    int es = 0;
    if (type == SHLO_BIN_ERROR && !shlo_bin_error_parse(p, len, &e, &es))
      shlo__client_err_from_proto(&u->err, &e, es), status = -1;
    else if (type != SHLO_BIN_STATE)
      status = shlo__client_err_conn(&u->err, "unexpected answer to SUBSCRIBE");
    sub_finish(b, u, status);
  }
  pthread_mutex_unlock(&b->plock);
  if (u) free(p);
  return u != NULL;
}

static void subs_fail(bin *b, const char *why) {
  pthread_mutex_lock(&b->plock);
  while (b->subs) {
    xsub *u = b->subs;
    shlo__client_err_conn(&u->err, "connection lost: %s", why);
    sub_finish(b, u, -1);
  }
  pthread_mutex_unlock(&b->plock);
}

static void *reader_main(void *arg) {
  bin *b = arg;
  const char *why = "the server closed the connection";
  for (;;) {
    shlo_bin_header h;
    shlo_proto_error e;
    if (read_full(b->fd, &h, sizeof h)) break;
    if (shlo_bin_header_check(&h, b->version, 0, &e)) {
      why = "malformed frame from the server";
      break;
    }
    if (h.type == SHLO_BIN_RESULT) {
      if (read_result(b, &h)) break;
      continue;
    }
    if (h.type == SHLO_BIN_OUTFEED) {
      if (read_outfeed(b, &h)) break;
      continue;
    }
    char *p = malloc(h.length ? h.length : 1);
    if (!p || read_full(b->fd, p, h.length)) {
      free(p);
      why = p ? "the server closed the connection" : "out of memory";
      break;
    }
    if (h.type == SHLO_BIN_OUTPUT) {
      keep_output(b, h.id, p, h.length);
      free(p);
      continue;
    }
    shlo_call *call = take_pending(b, h.id);
    if (call) {
      deliver(call, h.type, p, h.length);
    } else if (sub_end(b, h.id, h.type, p, h.length)) {
      continue;
    } else {
      free(p);
      if (h.type == SHLO_BIN_GOODBYE) {
        why = "the server said goodbye (shutting down)";
        break;
      }
    }
  }
  fail_all(b, why);
  return NULL;
}

/* ---- calls ---- */

/* Register call under a fresh id and send its frame. */
static int start_call(bin *b, shlo_call *call, int type, struct iovec *iov,
                      int n) {
  pthread_mutex_lock(&b->plock);
  if (b->dead) {
    pthread_mutex_unlock(&b->plock);
    return shlo__client_err_conn(&call->err, "connection lost: %s", b->why);
  }
  call->id = ++b->next_id;
  call->next = b->pending;
  b->pending = call;
  pthread_mutex_unlock(&b->plock);
  if (send_frame(b, type, call->id, iov, n)) {
    /* The reader may still deliver the server's reason (a refused frame);
     * otherwise it fails the call when the connection ends. */
    shutdown(b->fd, SHUT_WR);
  }
  return 0;
}

static int parse_id(const char *s, uint8_t id[32]) {
  if (!strncmp(s, "sha256:", 7)) s += 7;
  if (strlen(s) != 64) return -1;
  for (int i = 0; i < 32; i++) {
    unsigned v;
    if (sscanf(s + 2 * i, "%2x", &v) != 1) return -1;
    id[i] = (uint8_t)v;
  }
  return 0;
}

static int send_execute(shlo_client *c, const shlo_client_request *rq,
                        shlo_call *call, uint32_t flags) {
  bin *b = c->impl;
  shlo_bin_execute x = {.flags = flags};
  if (rq->program) {
    x.flags |= SHLO_BIN_EXEC_INLINE;
    x.program_length = rq->program_len;
  } else if (!rq->module_id || parse_id(rq->module_id, x.id)) {
    return shlo__client_err_conn(&call->err, "a request needs a program or a "
                                       "module id sha256:<64 hex>");
  }
  const char *entry = rq->entry ? rq->entry : "";
  x.entry_length = (uint32_t)strlen(entry);
  x.replicas = (uint32_t)rq->replicas;
  x.partitions = (uint32_t)rq->partitions;
  x.timeout_us = rq->timeout_ms > 0 ? (uint64_t)(rq->timeout_ms * 1000) : 0;
  x.n_inputs = (uint32_t)rq->n_inputs;
  if (rq->printed) x.flags |= SHLO_BIN_EXEC_PRINT;
  int n_iov = 6 + 4 * rq->n_inputs;
  struct iovec *iov = calloc((size_t)n_iov, sizeof *iov);
  char *heads = calloc((size_t)rq->n_inputs + 1,
                       sizeof(shlo_bin_value) + 8 * SHLO_MAX_RANK);
  if (!iov || !heads) {
    free(iov);
    free(heads);
    return shlo__client_err_conn(&call->err, "out of memory");
  }
  int k = 1;
  iov[k++] = (struct iovec){&x, sizeof x};
  iov[k++] = (struct iovec){(void *)entry, x.entry_length};
  iov[k++] = (struct iovec){(void *)zeros, shlo_bin_pad8(x.entry_length) - x.entry_length};
  iov[k++] = (struct iovec){(void *)rq->program, x.program_length};
  iov[k++] = (struct iovec){(void *)zeros,
                            shlo_bin_pad8(x.program_length) - x.program_length};
  for (int i = 0; i < rq->n_inputs; i++) {
    const shlo_value *v = rq->inputs[i];
    char *h = heads + (size_t)i * (sizeof(shlo_bin_value) + 8 * SHLO_MAX_RANK);
    iov[k++] = (struct iovec){h, shlo_bin_value_head(v, h)};
    size_t nb = shlo_tensor_nbytes(v); /* 0 for a tuple or token */
    iov[k++] = (struct iovec){(void *)shlo_tensor_data_const(v), nb};
    iov[k++] = (struct iovec){(void *)zeros, shlo_bin_pad8(nb) - nb};
  }
  int rc = start_call(b, call, SHLO_BIN_EXECUTE, iov, k);
  free(iov);
  free(heads);
  return rc;
}

static int bin_start(shlo_client *c, const shlo_client_request *rq,
                     shlo_call *call) {
  return send_execute(c, rq, call, 0);
}

static void bin_cancel(shlo_call *call) {
  bin *b = call->client->impl;
  struct iovec iov[1];
  if (send_frame(b, SHLO_BIN_CANCEL, call->id, iov, 1))
    shutdown(b->fd, SHUT_WR);
}

/* MODULE's payload into out. */
static int decode_module(shlo_call *call, shlo_client_module *out,
                         shlo_client_error *err) {
  shlo_bin_module m;
  const char *p = call->payload;
  uint64_t len = call->payload_len;
  if (call->type != SHLO_BIN_MODULE || len < sizeof m)
    return shlo__client_err_conn(err, "unexpected answer to COMPILE");
  memcpy(&m, p, sizeof m);
  uint64_t el = m.entry_length, sl = m.signature_length;
  if (el >= sizeof out->entry || sl >= sizeof out->signature ||
      sizeof m + shlo_bin_pad8(el) + sl > len)
    return shlo__client_err_conn(err, "malformed MODULE frame");
  strcpy(out->id, "sha256:");
  for (int i = 0; i < 32; i++) sprintf(out->id + 7 + 2 * i, "%02x", m.id[i]);
  memcpy(out->entry, p + sizeof m, el);
  out->entry[el] = 0;
  memcpy(out->signature, p + sizeof m + shlo_bin_pad8(el), sl);
  out->signature[sl] = 0;
  return 0;
}

static int bin_compile(shlo_client *c, const char *program, size_t len,
                       const char *entry, shlo_client_module *out,
                       shlo_client_error *err) {
  bin *b = c->impl;
  shlo_call *call = calloc(1, sizeof *call);
  if (!call) return shlo__client_err_conn(err, "out of memory");
  call->client = c;
  pthread_mutex_init(&call->lock, NULL);
  pthread_cond_init(&call->cond, NULL);
  entry = entry ? entry : "";
  shlo_bin_compile m = {.entry_length = (uint32_t)strlen(entry),
                        .program_length = len};
  struct iovec iov[6] = {{0}, {&m, sizeof m}, {(void *)entry, m.entry_length},
                         {(void *)zeros, shlo_bin_pad8(m.entry_length) - m.entry_length},
                         {(void *)program, len},
                         {(void *)zeros, shlo_bin_pad8(len) - len}};
  if (start_call(b, call, SHLO_BIN_COMPILE, iov, 6)) {
    *err = call->err;
    pthread_mutex_destroy(&call->lock);
    pthread_cond_destroy(&call->cond);
    free(call);
    return -1;
  }
  pthread_mutex_lock(&call->lock);
  while (!call->done) pthread_cond_wait(&call->cond, &call->lock);
  pthread_mutex_unlock(&call->lock);
  int rc = call->status ? (*err = call->err, -1) : decode_module(call, out, err);
  free(call->payload);
  pthread_mutex_destroy(&call->lock);
  pthread_cond_destroy(&call->cond);
  free(call);
  return rc;
}

/* ---- connecting ---- */

static int dial(const char *host, int port, shlo_client_error *err) {
  struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *ai;
  char ps[16];
  snprintf(ps, sizeof ps, "%d", port);
  int rc = getaddrinfo(host, ps, &hints, &ai);
  if (rc)
    return shlo__client_err_conn(err, "%s: %s", host, gai_strerror(rc));
  int fd = -1;
  for (struct addrinfo *a = ai; a && fd < 0; a = a->ai_next) {
    fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd >= 0 && connect(fd, a->ai_addr, a->ai_addrlen)) {
      close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(ai);
  if (fd < 0)
    return shlo__client_err_conn(err, "cannot connect to %s:%d: %s", host, port,
                           strerror(errno));
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

/* HELLO, then WELCOME or the server's refusal. */
static int hello(bin *b, const char *token, shlo_client_error *err) {
  size_t tl = token ? strlen(token) : 0;
  shlo_bin_hello h = {SHLO_BIN_VERSION_MIN, SHLO_BIN_VERSION_MAX,
                      (uint32_t)tl, 0};
  struct iovec iov[4] = {{0}, {&h, sizeof h}, {(void *)token, tl},
                         {(void *)zeros, shlo_bin_pad8(tl) - tl}};
  b->version = SHLO_BIN_VERSION_MAX;
  if (send_frame(b, SHLO_BIN_HELLO, 0, iov, 4))
    return shlo__client_err_conn(err, "cannot send HELLO");
  shlo_bin_header fh;
  shlo_proto_error e;
  char p[2048];
  if (read_full(b->fd, &fh, sizeof fh) ||
      shlo_bin_header_check(&fh, 0, sizeof p, &e) ||
      read_full(b->fd, p, fh.length))
    return shlo__client_err_conn(err, "no answer to HELLO (is this a shlo binary "
                                "port?)");
  int es;
  if (fh.type == SHLO_BIN_ERROR && !shlo_bin_error_parse(p, fh.length, &e, &es)) {
    shlo__client_err_from_proto(err, &e, es);
    return -1;
  }
  shlo_bin_welcome w;
  if (fh.type != SHLO_BIN_WELCOME || fh.length < sizeof w)
    return shlo__client_err_conn(err, "unexpected answer to HELLO");
  memcpy(&w, p, sizeof w);
  b->version = w.version;
  return 0;
}

void *shlo__client_bin_connect(const char *host, int port, const char *token,
                         shlo_client_error *err) {
  bin *b = calloc(1, sizeof *b);
  char *tok = token ? strdup(token) : NULL;
  if (!b || (token && !tok)) {
    free(b);
    free(tok);
    shlo__client_err_conn(err, "out of memory");
    return NULL;
  }
  snprintf(b->host, sizeof b->host, "%s", host);
  b->port = port;
  b->token = tok;
  b->fd = dial(host, port, err);
  pthread_mutex_init(&b->wlock, NULL);
  pthread_mutex_init(&b->plock, NULL);
  if (b->fd < 0 || hello(b, token, err) ||
      pthread_create(&b->reader, NULL, reader_main, b)) {
    if (b->fd >= 0) close(b->fd);
    pthread_mutex_destroy(&b->wlock);
    pthread_mutex_destroy(&b->plock);
    free(b->token);
    free(b);
    return NULL;
  }
  return b;
}

static void bin_close(shlo_client *c) {
  bin *b = c->impl;
  struct iovec iov[1];
  send_frame(b, SHLO_BIN_GOODBYE, 0, iov, 1);
  shutdown(b->fd, SHUT_RDWR);
  pthread_join(b->reader, NULL);
  close(b->fd);
  pthread_mutex_destroy(&b->wlock);
  pthread_mutex_destroy(&b->plock);
  free(b->token);
  free(b);
}

const client_ops shlo__client_bin_ops = {bin_compile, bin_start, bin_cancel,
                                   bin_close};

/* ---- streaming executions ---- */

/* INFEEDs in flight per execution before feed waits for the oldest's
 * answer: the values stream without a round trip each. */
#define FEED_WINDOW 8

/* Feeds go on a connection of their own (feeder, opened at the first
 * feed): while an INFEED waits for room in a full queue the server reads
 * nothing more from its connection, so on the client's connection a
 * SUBSCRIBE, WAIT or STOP sent after it (a feeding thread ahead of the
 * reading one) would not be read until the program, waiting on an
 * outfeed nobody drains, reached its deadline. */
struct shlo_execution {
  shlo_client *c;
  char id[SHLO_BIN_EXEC_ID_LEN + 1];
  xsub *sub; /* after the first shlo_execution_next */
  pthread_mutex_t feed_lock;
  shlo_client *feeder;         /* INFEEDs' connection (feed_lock) */
  shlo_call *fed[FEED_WINDOW]; /* a ring of unanswered INFEEDs */
  int fed_head, fed_n;
  int feed_failed;             /* a refused INFEED: later feeds fail */
  shlo_client_error feed_err;
};

static shlo_call *call_new(shlo_client *c) {
  shlo_call *call = calloc(1, sizeof *call);
  if (!call) return NULL;
  call->client = c;
  pthread_mutex_init(&call->lock, NULL);
  pthread_cond_init(&call->cond, NULL);
  return call;
}

static void call_free(shlo_call *call) {
  free(call->payload);
  pthread_mutex_destroy(&call->lock);
  pthread_cond_destroy(&call->cond);
  free(call);
}

/* Send a frame as a call and wait for its answer: the call (payload and
 * type in it), or NULL with *err (the server's ERROR, or the transport). */
static shlo_call *round_trip(shlo_client *c, int type, struct iovec *iov,
                             int n, shlo_client_error *err) {
  shlo_call *call = call_new(c);
  if (!call) {
    shlo__client_err_conn(err, "out of memory");
    return NULL;
  }
  if (start_call(c->impl, call, type, iov, n)) {
    *err = call->err;
    call_free(call);
    return NULL;
  }
  pthread_mutex_lock(&call->lock);
  while (!call->done) pthread_cond_wait(&call->cond, &call->lock);
  pthread_mutex_unlock(&call->lock);
  if (call->status) {
    *err = call->err;
    call_free(call);
    return NULL;
  }
  return call;
}

static bool streams_ok(shlo_client *c, shlo_client_error *err) {
  if (c->ops != &shlo__client_bin_ops) {
    snprintf(err->kind, sizeof err->kind, "input");
    err->status = 400;
    snprintf(err->message, sizeof err->message, "streaming executions in "
             "libshlo-client need a shlo:// URL (over HTTP use the "
             "/v1/executions routes)");
    return false;
  }
  if (((bin *)c->impl)->version < SHLO_BIN_VERSION_STREAMS)
    return shlo__client_err_conn(err, "the server's binary protocol has no "
                                "streaming executions (version 1)") == 0;
  return true;
}

shlo_execution *shlo_client_start(shlo_client *c,
                                  const shlo_client_request *rq,
                                  shlo_client_error *err) {
  if (!streams_ok(c, err)) return NULL;
  shlo_call *call = call_new(c);
  shlo_execution *x = calloc(1, sizeof *x);
  if (!call || !x) {
    free(x);
    if (call) call_free(call);
    shlo__client_err_conn(err, "out of memory");
    return NULL;
  }
  if (send_execute(c, rq, call, SHLO_BIN_EXEC_ASYNC)) {
    *err = call->err;
    goto fail;
  }
  pthread_mutex_lock(&call->lock);
  while (!call->done) pthread_cond_wait(&call->cond, &call->lock);
  pthread_mutex_unlock(&call->lock);
  for (int i = 0; i < call->n_outs; i++) shlo_value_unref(call->outs[i]);
  free(call->outs);
  shlo_bin_started m;
  if (call->status) {
    *err = call->err;
    goto fail;
  }
  if (call->type != SHLO_BIN_STARTED || call->payload_len < sizeof m) {
    shlo__client_err_conn(err, "unexpected answer to an asynchronous EXECUTE");
    goto fail;
  }
  memcpy(&m, call->payload, sizeof m);
  memcpy(x->id, m.exec_id, SHLO_BIN_EXEC_ID_LEN);
  x->c = c;
  pthread_mutex_init(&x->feed_lock, NULL);
  call_free(call);
  return x;
fail:
  call_free(call);
  free(x);
  return NULL;
}

const char *shlo_execution_id(const shlo_execution *x) { return x->id; }

static void stream_of(const shlo_execution *x, shlo_bin_stream *at) {
  memset(at, 0, sizeof *at);
  memcpy(at->exec_id, x->id, strlen(x->id));
}

/* Wait for the oldest INFEED in flight (feed_lock held); its refusal
 * fails this and every later feed. */
static void feed_settle(shlo_execution *x) {
  shlo_call *call = x->fed[x->fed_head];
  x->fed_head = (x->fed_head + 1) % FEED_WINDOW;
  x->fed_n--;
  pthread_mutex_lock(&call->lock);
  while (!call->done) pthread_cond_wait(&call->cond, &call->lock);
  pthread_mutex_unlock(&call->lock);
  if (!x->feed_failed && (call->status || call->type != SHLO_BIN_QUEUED)) {
    x->feed_failed = 1;
    x->feed_err = call->err;
    if (!call->status)
      shlo__client_err_conn(&x->feed_err, "unexpected answer to INFEED");
  }
  call_free(call);
}

/* The feeding connection: another to the same server with the same
 * token (feed_lock held); NULL with feed_err set, failing every feed. */
static shlo_client *feeder_open(shlo_execution *x) {
  bin *b = x->c->impl;
  shlo_client *f = calloc(1, sizeof *f);
  if (f) {
    f->ops = &shlo__client_bin_ops;
    f->impl = shlo__client_bin_connect(b->host, b->port, b->token,
                                       &x->feed_err);
  } else {
    shlo__client_err_conn(&x->feed_err, "out of memory");
  }
  if (f && f->impl) return f;
  free(f);
  x->feed_failed = 1;
  return NULL;
}

int shlo_execution_feed(shlo_execution *x, const shlo_value *v, int replica,
                        int partition, shlo_client_error *err) {
  if (shlo_value_kind(v) != SHLO_TYPE_TENSOR || replica < 0 || partition < 0)
    return shlo__client_err_conn(err, "feed: one tensor, to a process >= 0");
  shlo_bin_stream at;
  stream_of(x, &at);
  at.replica = (uint32_t)replica;
  at.partition = (uint32_t)partition;
  char head[sizeof(shlo_bin_value) + 8 * SHLO_MAX_RANK];
  size_t nb = shlo_tensor_nbytes(v);
  struct iovec iov[5] = {{0}, {&at, sizeof at},
                         {head, shlo_bin_value_head(v, head)},
                         {(void *)shlo_tensor_data_const(v), nb},
                         {(void *)zeros, shlo_bin_pad8(nb) - nb}};
  pthread_mutex_lock(&x->feed_lock);
  if (!x->feeder && !x->feed_failed) x->feeder = feeder_open(x);
  if (x->fed_n == FEED_WINDOW) feed_settle(x);
  shlo_call *call = x->feed_failed ? NULL : call_new(x->feeder);
  if (call && start_call(x->feeder->impl, call, SHLO_BIN_INFEED, iov, 5)) {
    x->feed_failed = 1;
    x->feed_err = call->err;
    call_free(call);
    call = NULL;
  } else if (call) {
    x->fed[(x->fed_head + x->fed_n++) % FEED_WINDOW] = call;
  } else if (!x->feed_failed) {
    x->feed_failed = 1;
    shlo__client_err_conn(&x->feed_err, "out of memory");
  }
  int rc = x->feed_failed ? -1 : 0;
  if (rc) *err = x->feed_err;
  pthread_mutex_unlock(&x->feed_lock);
  return rc;
}

int shlo_execution_feed_flush(shlo_execution *x, shlo_client_error *err) {
  pthread_mutex_lock(&x->feed_lock);
  while (x->fed_n) feed_settle(x);
  int rc = x->feed_failed ? -1 : 0;
  if (rc) *err = x->feed_err;
  pthread_mutex_unlock(&x->feed_lock);
  return rc;
}

/* SUBSCRIBE to every process's outfeed: the subscription, registered
 * before the frame goes out (its values may come at once). */
static xsub *subscribe(shlo_execution *x, shlo_client_error *err) {
  bin *b = x->c->impl;
  xsub *u = calloc(1, sizeof *u);
  if (u) u->vals = calloc(SUB_MAX_VALUES, sizeof *u->vals);
  if (!u || !u->vals) {
    free(u);
    shlo__client_err_conn(err, "out of memory");
    return NULL;
  }
  pthread_cond_init(&u->cond, NULL);
  pthread_mutex_lock(&b->plock);
  if (b->dead) {
    pthread_mutex_unlock(&b->plock);
    sub_free(u);
    shlo__client_err_conn(err, "connection lost: %s", b->why);
    return NULL;
  }
  u->id = ++b->next_id;
  u->next = b->subs;
  b->subs = u;
  pthread_mutex_unlock(&b->plock);
  shlo_bin_stream at;
  stream_of(x, &at);
  at.replica = at.partition = SHLO_BIN_STREAM_ALL;
  struct iovec iov[2] = {{0}, {&at, sizeof at}};
  if (send_frame(b, SHLO_BIN_SUBSCRIBE, u->id, iov, 2))
    shutdown(b->fd, SHUT_WR); /* the reader ends it with the connection */
  return u;
}

int shlo_execution_next(shlo_execution *x, shlo_value **out,
                        shlo_client_error *err) {
  bin *b = x->c->impl;
  *out = NULL;
  if (!x->sub && !(x->sub = subscribe(x, err))) return -1;
  xsub *u = x->sub;
  pthread_mutex_lock(&b->plock);
  while (!u->n && !u->ended) pthread_cond_wait(&u->cond, &b->plock);
  int rc = 0;
  if (u->n) {
    *out = u->vals[u->head];
    u->head = (u->head + 1) % SUB_MAX_VALUES;
    u->n--;
    pthread_cond_broadcast(&u->cond); /* room for the reader */
    rc = 1;
  } else if (u->status) {
    *err = u->err;
    rc = -1;
  }
  pthread_mutex_unlock(&b->plock);
  return rc;
}

/* WAIT (until the end) or STOP: the STATE's JSON, 0 when it succeeded. */
static int state_call(shlo_execution *x, int type, char **state_json,
                      shlo_client_error *err) {
  shlo_bin_exec_ref m = {.flags = type == SHLO_BIN_WAIT ? SHLO_BIN_WAIT_END
                                                        : 0};
  memcpy(m.exec_id, x->id, strlen(x->id));
  struct iovec iov[2] = {{0}, {&m, sizeof m}};
  if (state_json) *state_json = NULL;
  shlo_call *call = round_trip(x->c, type, iov, 2, err);
  if (!call) return -1;
  shlo_bin_state st;
  int rc = 0;
  if (call->type != SHLO_BIN_STATE || call->payload_len < sizeof st) {
    rc = shlo__client_err_conn(err, "unexpected answer to WAIT or STOP");
  } else {
    memcpy(&st, call->payload, sizeof st);
    uint64_t n = st.json_length <= call->payload_len - sizeof st
                     ? st.json_length : 0;
    if (state_json && (*state_json = malloc(n + 1))) {
      memcpy(*state_json, (char *)call->payload + sizeof st, n);
      (*state_json)[n] = 0;
    }
    if (st.state != SHLO_BIN_X_SUCCEEDED) {
      snprintf(err->kind, sizeof err->kind, "%s",
               st.state == SHLO_BIN_X_CANCELED ? "timeout" : "runtime");
      err->status = (int)st.status;
      err->line = err->column = err->engine_status = 0;
      snprintf(err->message, sizeof err->message, "execution %s %s", x->id,
               st.state == SHLO_BIN_X_CANCELED ? "was canceled" : "failed");
      rc = -1;
    }
  }
  call_free(call);
  return rc;
}

int shlo_execution_wait(shlo_execution *x, char **state_json,
                        shlo_client_error *err) {
  return state_call(x, SHLO_BIN_WAIT, state_json, err);
}

int shlo_execution_cancel(shlo_execution *x, shlo_client_error *err) {
  int rc = state_call(x, SHLO_BIN_STOP, NULL, err);
  return rc && !strcmp(err->kind, "timeout") ? 0 : rc;
}

void shlo_execution_free(shlo_execution *x) {
  if (!x) return;
  shlo_client_error ignored;
  shlo_execution_feed_flush(x, &ignored);
  shlo_client_close(x->feeder);
  pthread_mutex_destroy(&x->feed_lock);
  if (x->sub) {
    bin *b = x->c->impl;
    pthread_mutex_lock(&b->plock);
    if (x->sub->ended) {
      sub_free(x->sub);
    } else { /* the reader frees it when its stream ends */
      x->sub->abandoned = true;
      pthread_cond_broadcast(&x->sub->cond);
    }
    pthread_mutex_unlock(&b->plock);
  }
  free(x);
}
