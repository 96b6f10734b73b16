/* SPDX-License-Identifier: Apache-2.0 */
/* The HTTP listener and the connections' guards.  shlo-server accepts its
 * own connections (libmicrohttpd runs with MHD_USE_NO_LISTEN_SOCKET and
 * gets each admitted socket through MHD_add_connection) so that every
 * connection beyond the caps gets an answer, a JSON 503 with Retry-After,
 * instead of a closed socket or a hang:
 *
 * - max-connections: open connections.  SRV_RESERVED_CONNECTIONS more are
 *   admitted for the health routes only (/healthz, /readyz, /metrics),
 *   with a short deadline, so that a full server still answers its health
 *   checks; beyond those, the 503 is written at accept.
 * - max-connections-per-ip: open connections from one address (0 = off).
 * - request-timeout-s: a connection must deliver a request's headers and
 *   body within this time of opening or of its previous answer, however
 *   slowly the bytes trickle (libmicrohttpd's own timeout restarts with
 *   every byte); past it the connection is closed, with a 408 when the
 *   headers had arrived.
 *
 * It also watches the socket of a request that waits for a worker, so
 * that a client that hangs up cancels its execution (srv_watch_gone).
 * Loop thread only. */
#define _GNU_SOURCE /* accept4 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/strbuf.h"
#include "server.h"
#include "shlo/protocol.h"

/* How long a refused socket may take to read its 503 before it is closed,
 * and how many such sockets linger at once (more are closed at once). */
#define LINGER_NS 2000000000ull
#define MAX_LINGER 1024
/* Deadline of a connection admitted into the reserve. */
#define RESERVE_DEADLINE_NS 2000000000ull
#define SWEEP_MS 50
/* How long accepting pauses when the process is out of descriptors. */
#define ACCEPT_PAUSE_MS 100

typedef struct lingering {
  int fd;
  uint64_t until_ns;
} lingering;

static lingering linger_fds[MAX_LINGER];
static int n_linger;

static void write_all_nb(int fd, const char *p, size_t n) {
  while (n) { /* a small answer into an empty socket buffer: one send */
    ssize_t k = send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (k <= 0) return;
    p += k;
    n -= (size_t)k;
  }
}

/* A complete HTTP answer written straight to the socket, for sockets that
 * libmicrohttpd does not (or no longer) answers on. */
static void write_raw_error(int fd, int status, const char *reason,
                            bool retry, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static void write_raw_error(int fd, int status, const char *reason,
                            bool retry, const char *fmt, ...) {
  shlo_proto_error e = {.kind = status == 408 ? SHLO_PERR_TIMEOUT
                                              : SHLO_PERR_LIMIT,
                        .http = status};
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(e.message, sizeof e.message, fmt, ap);
  va_end(ap);
  char *json = shlo_proto_error_json(&e);
  char head[256];
  size_t jn = json ? strlen(json) : 0;
  int hn = snprintf(head, sizeof head,
                    "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\n"
                    "%sConnection: close\r\nContent-Length: %zu\r\n\r\n",
                    status, reason, retry ? "Retry-After: 1\r\n" : "", jn + 1);
  char buf[1024];
  if (json && (size_t)hn + jn + 1 < sizeof buf) {
    memcpy(buf, head, (size_t)hn);
    memcpy(buf + hn, json, jn);
    buf[hn + jn] = '\n';
    write_all_nb(fd, buf, (size_t)hn + jn + 1);
  }
  free(json);
}

/* Read and drop what the client sent; true once it has closed its side. */
static bool drain_input(int fd) {
  char buf[4096];
  for (int i = 0; i < 16; i++) {
    ssize_t k = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
    if (k == 0) return true;
    if (k < 0) return errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR;
  }
  return false;
}

/* Close a refused socket once the client had the time to read its answer
 * (closing with unread input would reset the connection and lose the
 * answer). */
static void linger_close(int fd) {
  shutdown(fd, SHUT_WR);
  if (drain_input(fd) || n_linger == MAX_LINGER) {
    close(fd);
    return;
  }
  linger_fds[n_linger++] = (lingering){fd, srv_now_ns() + LINGER_NS};
}

/* Answer a socket that is not admitted, then close it. */
static void refuse(srv_server *s, int fd, const char *limit, long long value) {
  s->metrics.refused_connections++;
  write_raw_error(fd, 503, "Service Unavailable", true,
                  "limit %s (%lld) reached; retry later", limit, value);
  linger_close(fd);
}

void srv_refuse_socket(srv_server *s, int fd, const void *answer, size_t n) {
  (void)s;
  write_all_nb(fd, answer, n);
  linger_close(fd);
}

void srv_conn_shed(srv_server *s, srv_conn *k, const char *limit,
                   long long value) {
  if (!k || k->fd < 0 || k->expired) return;
  k->expired = true;
  s->metrics.shed_pending++;
  write_raw_error(k->fd, 503, "Service Unavailable", true,
                  "limit %s (%lld): partly received bodies and frames fill the "
                  "server's budget, and this body is dropped (those that "
                  "waited longest for their bytes go first); retry later",
                  limit, value);
  /* libmicrohttpd sees the end of the stream and closes it */
  shutdown(k->fd, SHUT_RDWR);
}

static void sweep_lingering(uint64_t now) {
  for (int i = 0; i < n_linger;) {
    if (drain_input(linger_fds[i].fd) || now >= linger_fds[i].until_ns) {
      close(linger_fds[i].fd);
      linger_fds[i] = linger_fds[--n_linger];
    } else {
      i++;
    }
  }
}

void srv_addr_text(const struct sockaddr *a, char out[SRV_IP_LEN]) {
  out[0] = 0;
  if (a->sa_family == AF_INET)
    inet_ntop(AF_INET, &((const struct sockaddr_in *)a)->sin_addr, out,
              SRV_IP_LEN);
  else if (a->sa_family == AF_INET6)
    inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)a)->sin6_addr, out,
              SRV_IP_LEN);
}

/* Admit or refuse one accepted socket. */
static void admit_socket(srv_server *s, int fd, struct sockaddr_storage *ss,
                         socklen_t len) {
  char ip[SRV_IP_LEN];
  srv_addr_text((struct sockaddr *)ss, ip);
  long long cap = s->cfg.max_connections;
  if (s->n_conns >= cap + SRV_RESERVED_CONNECTIONS) {
    refuse(s, fd, "max-connections", cap);
    return;
  }
  if (srv_ip_full(s, ip)) {
    refuse(s, fd, "max-connections-per-ip", s->cfg.max_connections_per_ip);
    return;
  }
  /* on_connection_open runs inside and finds the socket's state */
  if (MHD_add_connection(s->mhd, fd, (struct sockaddr *)ss, len) != MHD_YES)
    s->metrics.refused_connections++; /* MHD closed the socket */
}

static void on_listen(uv_poll_t *h, int status, int events) {
  (void)events;
  srv_server *s = h->data;
  if (status < 0) return;
  /* A bounded batch, so one flood cannot starve the loop's other work. */
  for (int i = 0; i < 256; i++) {
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    int fd = accept4(s->listen_fd, (struct sockaddr *)&ss, &len,
                     SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
          errno == ENOMEM) {
        /* the pending connection stays readable: without a pause the
         * loop would spin on it; the sweep resumes accepting */
        fprintf(stderr, "shlo-server: accept: %s; pausing accepts for "
                        "%d ms\n", strerror(errno), ACCEPT_PAUSE_MS);
        uv_poll_stop(&s->listen_poll);
        s->accept_paused_ns = srv_now_ns() + ACCEPT_PAUSE_MS * 1000000ull;
      }
      break;
    }
    admit_socket(s, fd, &ss, len);
  }
  srv_http_pump(s);
}

/* ---- the connections' state ---- */

void srv_conn_opened(srv_server *s, struct MHD_Connection *c, void **ctx) {
  srv_conn *k = calloc(1, sizeof *k);
  s->n_conns++;
  *ctx = k;
  if (!k) return; /* then it has no deadline of its own: MHD's applies */
  const union MHD_ConnectionInfo *fi =
      MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
  const union MHD_ConnectionInfo *ai =
      MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
  k->fd = fi ? fi->connect_fd : -1;
  if (ai && ai->client_addr) srv_addr_text(ai->client_addr, k->ip);
  k->since_ns = srv_now_ns();
  k->reserve = s->n_conns > s->cfg.max_connections;
  if (counts_add(&s->per_ip, k->ip, 1) > 0) k->counted = true;
  k->next = s->conns;
  if (s->conns) s->conns->prev = k;
  s->conns = k;
}

void srv_conn_closed(srv_server *s, void **ctx) {
  srv_conn *k = *ctx;
  s->n_conns--;
  *ctx = NULL;
  if (!k) return;
  if (k->counted) counts_add(&s->per_ip, k->ip, -1);
  if (k->prev) k->prev->next = k->next;
  else s->conns = k->next;
  if (k->next) k->next->prev = k->prev;
  free(k);
}

srv_conn *srv_conn_of(struct MHD_Connection *c) {
  const union MHD_ConnectionInfo *i =
      MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
  return i ? i->socket_context : NULL;
}

/* Close the connections past their deadline (see the top of the file). */
static void sweep_deadlines(srv_server *s, uint64_t now) {
  uint64_t limit = (uint64_t)s->cfg.request_timeout_s * 1000000000ull;
  for (srv_conn *k = s->conns; k; k = k->next) {
    if (k->busy || k->expired || k->fd < 0) continue;
    uint64_t d = k->reserve && RESERVE_DEADLINE_NS < limit ? RESERVE_DEADLINE_NS
                                                           : limit;
    if (k->streaming) d = k->stream_idle_ns; /* stream_http.c */
    if (!d || now - k->since_ns < d) continue;
    k->expired = true;
    s->metrics.deadline_closes++;
    if (k->in_request && k->streaming)
      write_raw_error(k->fd, 408, "Request Timeout", false,
                      "limit stream-idle-timeout-s (%lld): the upload sent "
                      "no value for that long",
                      (long long)s->cfg.stream_idle_timeout_s);
    else if (k->in_request)
      write_raw_error(k->fd, 408, "Request Timeout", false,
                      "limit request-timeout-s (%lld): the request's headers "
                      "and body did not arrive in time",
                      (long long)s->cfg.request_timeout_s);
    /* libmicrohttpd sees the end of the stream and closes it */
    shutdown(k->fd, SHUT_RDWR);
  }
}

static void on_sweep(uv_timer_t *t) {
  srv_server *s = t->data;
  uint64_t now = srv_now_ns();
  sweep_lingering(now);
  sweep_deadlines(s, now);
  if (s->accept_paused_ns && now >= s->accept_paused_ns && s->listening) {
    s->accept_paused_ns = 0;
    uv_poll_start(&s->listen_poll, UV_READABLE, on_listen);
  }
  srv_http_pump(s);
}

/* ---- per-client caps (both protocols) ---- */

bool srv_ip_full(srv_server *s, const char *ip) {
  long long per_ip = s->cfg.max_connections_per_ip;
  if (!per_ip || counts_get(&s->per_ip, ip) < per_ip) return false;
  s->metrics.refused_per_ip++;
  return true;
}

bool srv_client_full(srv_server *s, const char *client,
                     shlo_proto_error *err) {
  long long cap = s->cfg.max_client_jobs;
  if (!cap || counts_get(&s->per_client, client) < cap) return false;
  s->metrics.refused_client_jobs++;
  shlo_proto_fail(err, SHLO_PERR_LIMIT, "limit max-client-jobs (%lld) "
                  "reached: this client has that many requests running or "
                  "queued; retry later", cap);
  err->http = 429;
  return true;
}

bool srv_client_hold(srv_server *s, const char *client, srv_job *job) {
  job->owner = NULL;
  if (counts_add(&s->per_client, client, 1) <= 0) return false;
  void **d = counts_data(&s->per_client, client);
  if (d && !*d) *d = calloc(1, sizeof(srv_job_owner));
  srv_job_owner *o = d ? *d : NULL;
  if (o) o->max_running = (int)s->cfg.max_client_running;
  job->owner = o;
  return true;
}

void srv_client_release(srv_server *s, const char *client) {
  void **d = counts_data(&s->per_client, client);
  void *owner = d ? *d : NULL;
  if (counts_add(&s->per_client, client, -1) == 0) free(owner);
}

/* ---- partly received bodies, all connections together ----
 *
 * A body or frame that arrives slowly holds its bytes until its last one
 * is in: a few thousand slow connections would hold gigabytes.  Their sum
 * is kept under max-pending-body-bytes by closing, when it would pass,
 * the connections whose bodies have waited longest for a byte: a stalled
 * or trickling client goes before one whose bytes are flowing.  The list
 * is kept in the order the bodies last grew (a grown one moves to the
 * tail), so the head is always the next to go. */

static void pending_unlist(srv_server *s, srv_pending *p) {
  if (!p->listed) return;
  if (p->prev) p->prev->next = p->next;
  else s->pending = p->next;
  if (p->next) p->next->prev = p->prev;
  else s->pending_tail = p->prev;
  p->prev = p->next = NULL;
  p->listed = false;
  s->pending_bytes -= p->bytes;
  p->bytes = 0;
}

static void pending_append(srv_server *s, srv_pending *p) {
  p->prev = s->pending_tail;
  p->next = NULL;
  if (s->pending_tail) s->pending_tail->next = p;
  else s->pending = p;
  s->pending_tail = p;
  p->listed = true;
}

/* Shed the head until the sum fits; p (just grown, at the tail) last. */
static bool pending_shed(srv_server *s, srv_pending *p) {
  uint64_t cap = (uint64_t)s->cfg.max_pending_body_bytes;
  bool p_shed = false;
  while (s->pending_bytes > cap && s->pending) {
    srv_pending *h = s->pending;
    pending_unlist(s, h);
    if (h == p) p_shed = true;
    h->shed(h);
  }
  return !p_shed;
}

bool srv_pending_set(srv_server *s, srv_pending *p, uint64_t bytes) {
  if (!bytes) {
    pending_unlist(s, p);
    return true;
  }
  pending_unlist(s, p); /* bytes came: to the tail, as the most recent */
  s->pending_bytes += bytes;
  p->bytes = bytes;
  p->last_ns = srv_now_ns();
  pending_append(s, p);
  return pending_shed(s, p);
}

void srv_listen_metrics(srv_server *s, struct strbuf *b) {
  shlo__sb_printf(b,
      "# TYPE shlo_pending_body_bytes gauge\nshlo_pending_body_bytes %llu\n"
      "# TYPE shlo_pending_body_shed_total counter\n"
      "shlo_pending_body_shed_total %llu\n"
      "# TYPE shlo_json_answers_refused_total counter\n"
      "shlo_json_answers_refused_total %llu\n"
      "# TYPE shlo_frame_timeouts_total counter\n"
      "shlo_frame_timeouts_total %llu\n",
      (unsigned long long)s->pending_bytes,
      (unsigned long long)s->metrics.shed_pending,
      (unsigned long long)s->metrics.refused_json_answers,
      (unsigned long long)s->metrics.frame_deadline_closes);
}

/* ---- a suspended request's client hanging up ---- */

typedef struct gone_watch {
  uv_poll_t poll;
  srv_request *r; /* NULL once unwatched */
} gone_watch;

static void on_gone_closed(uv_handle_t *h) { free(h->data); }

static void stop_watch(gone_watch *w) {
  uv_poll_stop(&w->poll);
  w->poll.data = w;
  uv_close((uv_handle_t *)&w->poll, on_gone_closed);
}

static void on_gone(uv_poll_t *h, int status, int events) {
  (void)events;
  gone_watch *w = h->data;
  srv_request *r = w->r;
  char c;
  ssize_t k = recv(r->conn_state->fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
  if (k < 0 && status >= 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
    return; /* nothing after all */
  if (k <= 0) { /* the end of the stream, or an error: the client left */
    r->gone_ns = srv_now_ns();
    shlo_cancel_set(&r->cancel, SRV_CANCEL_CLIENT_GONE);
    /* A job still queued leaves the queue now (and is counted as
     * canceled), rather than when a worker would have reached it. */
    if (pool_withdraw(&r->srv->pool, &r->job)) srv_reply_canceled(r);
    cache_recheck_waits(&r->srv->cache); /* and its compile, if alone */
  }
  /* else: the client sent more (a pipelined request) and is there */
  r->watch = NULL;
  stop_watch(w);
}

void srv_watch_gone(srv_request *r) {
  srv_conn *k = r->conn_state;
  if (!k || k->fd < 0 || r->watch) return;
  gone_watch *w = calloc(1, sizeof *w);
  if (!w) return;
  if (uv_poll_init(r->srv->loop, &w->poll, k->fd)) {
    free(w);
    return;
  }
  w->r = r;
  w->poll.data = w;
  if (uv_poll_start(&w->poll, UV_READABLE | UV_DISCONNECT, on_gone)) {
    stop_watch(w);
    return;
  }
  r->watch = w;
}

void srv_unwatch_gone(srv_request *r) {
  gone_watch *w = r->watch;
  if (!w) return;
  r->watch = NULL;
  stop_watch(w);
}

/* ---- start and stop ---- */

/* Room for every connection the caps allow, the workers' and the binary
 * port's descriptors, and some to spare. */
static void raise_fd_limit(srv_server *s) {
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl)) return;
  rlim_t want = (rlim_t)s->cfg.max_connections + SRV_RESERVED_CONNECTIONS +
                MAX_LINGER + 256;
  if (rl.rlim_cur >= want) return;
  rl.rlim_cur = want < rl.rlim_max ? want : rl.rlim_max;
  setrlimit(RLIMIT_NOFILE, &rl);
  if (rl.rlim_cur < want)
    fprintf(stderr, "shlo-server: warning: the open-files limit (%llu) is "
                    "below what max-connections %lld needs (%llu)\n",
            (unsigned long long)rl.rlim_cur, (long long)s->cfg.max_connections,
            (unsigned long long)want);
}

int srv_listen_start(srv_server *s, const struct sockaddr *addr,
                     socklen_t len) {
  raise_fd_limit(s);
  int fd = socket(addr->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
                  0);
  int one = 1;
  if (fd < 0) return -1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (addr->sa_family == AF_INET6)
    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
  struct sockaddr_storage ss;
  socklen_t sl = sizeof ss;
  if (bind(fd, addr, len) || listen(fd, 1024) ||
      getsockname(fd, (struct sockaddr *)&ss, &sl)) {
    close(fd);
    return -1;
  }
  s->port = ntohs(ss.ss_family == AF_INET6
                      ? ((struct sockaddr_in6 *)&ss)->sin6_port
                      : ((struct sockaddr_in *)&ss)->sin_port);
  s->listen_fd = fd;
  s->listening = true;
  uv_poll_init(s->loop, &s->listen_poll, fd);
  s->listen_poll.data = s;
  uv_poll_start(&s->listen_poll, UV_READABLE, on_listen);
  uv_timer_init(s->loop, &s->sweep_timer);
  s->sweep_timer.data = s;
  uv_timer_start(&s->sweep_timer, on_sweep, SWEEP_MS, SWEEP_MS);
  return 0;
}

void srv_listen_stop(srv_server *s) {
  if (!s->listening) return;
  s->listening = false;
  uv_poll_stop(&s->listen_poll);
  uv_close((uv_handle_t *)&s->listen_poll, NULL);
  uv_timer_stop(&s->sweep_timer);
  uv_close((uv_handle_t *)&s->sweep_timer, NULL);
  close(s->listen_fd);
  s->listen_fd = -1;
  for (int i = 0; i < n_linger; i++) close(linger_fds[i].fd);
  n_linger = 0;
}
