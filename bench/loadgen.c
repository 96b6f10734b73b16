/* SPDX-License-Identifier: Apache-2.0 */
/* shlo-loadgen: the client side of bench/binary_bench.sh.  It drives one
 * shlo-server through both of its faces, the binary protocol and the JSON
 * route, the same way, and prints figures (never judges them):
 *
 *   shlo-loadgen roundtrip BPORT HPORT MIB REPS   a MIB MiB f32 tensor
 *       through an identity program: send and receive GB/s of the tensor's
 *       bytes, best of REPS, each protocol
 *   shlo-loadgen latency BPORT HPORT N            a small cached program,
 *       N requests one after another on one connection: p50, p99; and the
 *       floor under both, the same bytes bounced off a bare echo thread
 *       and off a bare echo process
 *   shlo-loadgen rate BPORT HPORT CONNS SECONDS   the same program from
 *       CONNS connections (one thread each, one request in flight each):
 *       requests/s
 *
 * HPORT 0 leaves the JSON route out (to profile the binary side alone).
 * The binary side speaks raw frames on a blocking socket (the codec is
 * shlo/binproto.h), the JSON side raw HTTP/1.1 keep-alive, so that neither
 * pays for a client library's threads and both pay the same syscalls.  The
 * server is on 127.0.0.1. */
#define _GNU_SOURCE /* strcasestr */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "shlo/binproto.h"
#include "shlo/protocol.h"

static const char zeros[8];

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *what) {
  fprintf(stderr, "shlo-loadgen: %s%s%s\n", what, errno ? ": " : "",
          errno ? strerror(errno) : "");
  exit(1);
}

static int dial(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                          .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a)) die("connect");
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

static void read_full(int fd, void *p, size_t n) {
  char *b = p;
  while (n) {
    ssize_t r = recv(fd, b, n, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) die("the server closed the connection");
    b += r;
    n -= (size_t)r;
  }
}

/* A blocking socket's writev returns once everything is written (no
 * signal handlers here can cut it short). */
static void write_all(int fd, struct iovec *iov, int n) {
  size_t total = 0;
  for (int i = 0; i < n; i++) total += iov[i].iov_len;
  if (writev(fd, iov, n) != (ssize_t)total) die("write");
}

/* ---- the binary protocol, raw ---- */

static void bin_send(int fd, int type, uint64_t id, struct iovec *iov, int n) {
  uint64_t len = 0;
  for (int i = 1; i < n; i++) len += iov[i].iov_len;
  shlo_bin_header h;
  shlo_bin_header_init(&h, 1, type, id, len);
  iov[0] = (struct iovec){&h, sizeof h};
  write_all(fd, iov, n);
}

/* The next frame's header; its payload into buf (grown as needed).  One
 * recv usually brings a small frame whole (as one brings a small HTTP
 * answer): these connections have one request in flight, so no byte of a
 * later frame can follow it. */
static shlo_bin_header bin_recv(int fd, char **buf, size_t *cap) {
  shlo_bin_header h;
  char first[4096];
  size_t got = 0;
  while (got < sizeof h) {
    ssize_t r = recv(fd, first + got, sizeof first - got, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) die("the server closed the connection");
    got += (size_t)r;
  }
  memcpy(&h, first, sizeof h);
  if (h.magic != SHLO_BIN_MAGIC || got - sizeof h > h.length)
    die("not a binary frame");
  if (h.length > *cap) {
    free(*buf);
    *cap = h.length;
    if (!(*buf = malloc(*cap))) die("out of memory");
  }
  memcpy(*buf, first + sizeof h, got - sizeof h);
  read_full(fd, *buf + got - sizeof h, h.length - (got - sizeof h));
  if (h.type == SHLO_BIN_ERROR) {
    errno = 0;
    shlo_proto_error e;
    int es;
    if (!shlo_bin_error_parse(*buf, h.length, &e, &es)) die(e.message);
    die("ERROR frame");
  }
  return h;
}

static int bin_connect(int port) {
  int fd = dial(port);
  shlo_bin_hello hello = {1, 1, 0, 0};
  struct iovec iov[2] = {{0}, {&hello, sizeof hello}};
  bin_send(fd, SHLO_BIN_HELLO, 0, iov, 2);
  char *buf = NULL;
  size_t cap = 0;
  if (bin_recv(fd, &buf, &cap).type != SHLO_BIN_WELCOME) die("no WELCOME");
  free(buf);
  return fd;
}

/* COMPILE: the module's 32-byte id and its "sha256:<hex>" spelling. */
static void bin_compile(int fd, const char *prog, uint8_t id[32],
                        char hex[80]) {
  size_t n = strlen(prog);
  shlo_bin_compile c = {.program_length = n};
  struct iovec iov[4] = {{0}, {&c, sizeof c}, {(void *)prog, n},
                         {(void *)zeros, shlo_bin_pad8(n) - n}};
  bin_send(fd, SHLO_BIN_COMPILE, 1, iov, 4);
  char *buf = NULL;
  size_t cap = 0;
  if (bin_recv(fd, &buf, &cap).type != SHLO_BIN_MODULE) die("no MODULE");
  memcpy(id, buf, 32);
  free(buf);
  strcpy(hex, "sha256:");
  for (int i = 0; i < 32; i++) sprintf(hex + 7 + 2 * i, "%02x", id[i]);
}

/* EXECUTE of module id with one 1-D f32 input of n elements. */
static void bin_execute(int fd, uint64_t rid, const uint8_t id[32],
                        const float *x, uint64_t n) {
  shlo_bin_execute e = {.n_inputs = 1};
  memcpy(e.id, id, 32);
  struct {
    shlo_bin_value v;
    uint64_t dim;
  } vh = {{.dtype = 27, .rank = 1, .length = n * 4}, n};
  struct iovec iov[5] = {{0}, {&e, sizeof e}, {&vh, sizeof vh},
                         {(void *)x, n * 4},
                         {(void *)zeros, shlo_bin_pad8(n * 4) - n * 4}};
  bin_send(fd, SHLO_BIN_EXECUTE, rid, iov, 5);
}

/* ---- the JSON route, raw HTTP/1.1 keep-alive ---- */

/* POST body to path; the response body (status 200, else exit) into
 * *buf.  *t_first: when the response's first bytes arrived. */
static size_t http_post(int fd, int port, const char *path, const char *body,
                        size_t n, char **buf, size_t *cap, double *t_first) {
  char head[512];
  int hl = snprintf(head, sizeof head,
                    "POST %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: "
                    "application/json\r\nContent-Length: %zu\r\n\r\n",
                    path, port, n);
  struct iovec iov[2] = {{head, (size_t)hl}, {(void *)body, n}};
  write_all(fd, iov, 2);
  char h[4096];
  size_t got = 0;
  char *end = NULL;
  while (!end) {
    ssize_t r = recv(fd, h + got, sizeof h - 1 - got, 0);
    if (r <= 0) die("HTTP: the server closed the connection");
    if (!got && t_first) *t_first = now_s();
    got += (size_t)r;
    h[got] = 0;
    end = strstr(h, "\r\n\r\n");
    if (!end && got == sizeof h - 1) die("HTTP: headers too long");
  }
  const char *cl = strcasestr(h, "content-length:");
  if (strncmp(h, "HTTP/1.1 200", 12) || !cl) {
    errno = 0;
    fprintf(stderr, "%.*s\n", (int)got, h);
    die("HTTP: not a 200 with a Content-Length");
  }
  size_t len = strtoull(cl + 15, NULL, 10), have = got - (size_t)(end + 4 - h);
  if (len + 1 > *cap) {
    free(*buf);
    *cap = len + 1;
    if (!(*buf = malloc(*cap))) die("out of memory");
  }
  memcpy(*buf, end + 4, have);
  read_full(fd, *buf + have, len - have);
  (*buf)[len] = 0;
  return len;
}

/* ---- the figures ---- */

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static const char *identity(uint64_t n) {
  static char prog[256];
  snprintf(prog, sizeof prog,
           "func.func @main(%%x: tensor<%llux%s>) -> tensor<%llux%s> {\n"
           "  return %%x : tensor<%llux%s>\n}\n",
           (unsigned long long)n, "f32", (unsigned long long)n, "f32",
           (unsigned long long)n, "f32");
  return prog;
}

/* A small program a cache holds: one add of four floats. */
static const char small_prog[] =
    "func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
    "  %0 = stablehlo.add %x, %x : tensor<4xf32>\n"
    "  return %0 : tensor<4xf32>\n}\n";
static const float small_x[4] = {1, 2, 3, 4};
static const char small_json[] =
    "{\"inputs\": [{\"dtype\": \"f32\", \"shape\": [4], "
    "\"data\": [1, 2, 3, 4]}]}";

/* Best send and receive GB/s of reps binary round trips of x (n floats)
 * through module id: send = the frame out (the server reads it straight
 * into the tensor as it comes), receive = first byte to last of RESULT. */
static void bin_roundtrips(int fd, const uint8_t id[32], const float *x,
                           uint64_t n, int reps, double best[2]) {
  uint64_t bytes = n * 4;
  char *buf = malloc(bytes + 4096);
  if (!buf) die("out of memory");
  for (int r = 0; r < reps; r++) {
    double t0 = now_s();
    bin_execute(fd, (uint64_t)r + 2, id, x, n);
    double t1 = now_s();
    shlo_bin_header h;
    read_full(fd, &h, sizeof h);
    double t2 = now_s();
    if (h.type != SHLO_BIN_RESULT || h.length > bytes + 4096) die("no RESULT");
    read_full(fd, buf, h.length);
    double t3 = now_s();
    if (h.length < bytes || memcmp(buf + h.length - bytes, x, bytes))
      die("the binary round trip changed the tensor");
    double gb = (double)bytes / 1e9;
    if (gb / (t1 - t0) > best[0]) best[0] = gb / (t1 - t0);
    if (gb / (t3 - t2) > best[1]) best[1] = gb / (t3 - t2);
  }
  free(buf);
}

/* The same through the JSON route (b64 both ways): send = the request out
 * until the answer's first byte, so it includes the server's base64
 * decoding, the execution and the encoding; receive = the answer. */
static void json_roundtrips(int fd, int port, const char *hex,
                            const float *x, uint64_t n, int reps,
                            double best[2]) {
  uint64_t bytes = n * 4;
  char path[160], *buf = NULL;
  size_t cap = 0;
  snprintf(path, sizeof path, "/v1/modules/%s/execute", hex);
  char *b64 = shlo_proto_b64_encode(x, bytes);
  size_t jcap = (b64 ? strlen(b64) : 0) + 256;
  char *json = malloc(jcap);
  if (!b64 || !json) die("out of memory");
  size_t jn = (size_t)snprintf(json, jcap, "{\"inputs\": [{\"dtype\": \"f32\", "
                               "\"shape\": [%llu], \"b64\": \"%s\"}], "
                               "\"output_format\": \"b64\"}",
                               (unsigned long long)n, b64);
  for (int r = 0; r < reps; r++) {
    double t0 = now_s(), tf = 0;
    http_post(fd, port, path, json, jn, &buf, &cap, &tf);
    double t3 = now_s();
    if (!strstr(buf, b64)) die("the JSON round trip changed the tensor");
    double gb = (double)bytes / 1e9;
    if (gb / (tf - t0) > best[0]) best[0] = gb / (tf - t0);
    if (gb / (t3 - tf) > best[1]) best[1] = gb / (t3 - tf);
  }
  free(b64);
  free(json);
  free(buf);
}

/* Each protocol's reps one after the other, not interleaved, so neither
 * finds the server's memory as the other left it. */
static void roundtrip(int bport, int hport, uint64_t mib, int reps) {
  uint64_t n = mib << 18;
  float *x = malloc(n * 4);
  if (!x) die("out of memory");
  for (uint64_t i = 0; i < n; i++) x[i] = (float)(i % 1000) * 0.5f;
  uint8_t id[32];
  char hex[80];
  int bfd = bin_connect(bport);
  bin_compile(bfd, identity(n), id, hex);
  double best[2][2] = {{0, 0}, {0, 0}}; /* [binary|json][send|receive] */
  bin_roundtrips(bfd, id, x, n, reps, best[0]);
  close(bfd);
  if (hport) {
    int hfd = dial(hport);
    json_roundtrips(hfd, hport, hex, x, n, reps, best[1]);
    close(hfd);
  }
  printf("round trip of a %llu MiB f32 tensor (identity program, best of %d):\n"
         "  binary: send %.2f GB/s, receive %.2f GB/s\n",
         (unsigned long long)mib, reps, best[0][0], best[0][1]);
  if (hport)
    printf("  json:   send %.2f GB/s, receive %.2f GB/s (send: request out "
           "until the answer's first byte, which includes the server's base64 "
           "decoding and encoding)\n", best[1][0], best[1][1]);
  free(x);
}

/* The binary EXECUTE of small_x, and the RESULT last seen, in bytes:
 * what the floor bounces. */
static size_t small_request_bytes(void) {
  return sizeof(shlo_bin_header) + sizeof(shlo_bin_execute) +
         sizeof(shlo_bin_value) + 8 + shlo_bin_pad8(sizeof small_x);
}
static atomic_size_t small_answer_bytes = 136; /* written by rate threads too */

/* One small request on fd (binary or JSON), answered. */
typedef struct small_target {
  bool binary;
  int port;
  uint8_t id[32];
  char path[160];
} small_target;

static void small_once(const small_target *t, int fd, uint64_t rid,
                       char **buf, size_t *cap) {
  if (t->binary) {
    bin_execute(fd, rid, t->id, small_x, 4);
    shlo_bin_header h = bin_recv(fd, buf, cap);
    if (h.type != SHLO_BIN_RESULT) die("no RESULT");
    small_answer_bytes = sizeof h + h.length;
  } else {
    http_post(fd, t->port, t->path, small_json, sizeof small_json - 1, buf,
              cap, NULL);
  }
}

static int small_connect(const small_target *t) {
  return t->binary ? bin_connect(t->port) : dial(t->port);
}

static void small_targets(int bport, int hport, small_target t[2]) {
  int fd = bin_connect(bport);
  char hex[80];
  t[0] = (small_target){.binary = true, .port = bport};
  bin_compile(fd, small_prog, t[0].id, hex);
  close(fd);
  t[1] = (small_target){.binary = false, .port = hport};
  snprintf(t[1].path, sizeof t[1].path, "/v1/modules/%s/execute", hex);
}

/* ---- the floor: loopback TCP alone ---- */

typedef struct echo {
  int listen_fd;
  size_t answer; /* bytes to send back per request */
} echo;

/* Answer each read with e->answer bytes: epoll, read, write, as an event
 * loop does, and nothing else (the request fits one read). */
static void *echo_main(void *arg) {
  echo *e = arg;
  int fd = accept(e->listen_fd, NULL, NULL), ep = epoll_create1(0);
  struct epoll_event ev = {.events = EPOLLIN};
  if (fd < 0 || ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev)) die("echo");
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  char buf[65536];
  static char answer[4096];
  for (;;) {
    if (epoll_wait(ep, &ev, 1, -1) < 0 && errno != EINTR) break;
    ssize_t r = read(fd, buf, sizeof buf);
    if (r <= 0 || write(fd, answer, e->answer) != (ssize_t)e->answer) break;
  }
  close(ep);
  close(fd);
  return NULL;
}

/* p50 and p99 (us) of n round trips of `request` bytes out and `answer`
 * bytes back through a bare echo on loopback: a thread of this process,
 * or (in_process false) a child process, as the server is.  Switching
 * between two processes costs more than between two threads of one (an
 * address-space switch; in a paravirtual guest much more), so the second
 * is the floor a server in its own process stands on. */
static void tcp_floor(size_t request, size_t answer, int n, bool in_process,
                      double *ms) {
  echo e = {socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0),
            answer < 4096 ? answer : 4096};
  struct sockaddr_in a = {.sin_family = AF_INET,
                          .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t al = sizeof a;
  if (e.listen_fd < 0 || bind(e.listen_fd, (struct sockaddr *)&a, al) ||
      getsockname(e.listen_fd, (struct sockaddr *)&a, &al) ||
      listen(e.listen_fd, 1))
    die("echo listen");
  pthread_t th;
  pid_t child = 0;
  if (in_process) {
    if (pthread_create(&th, NULL, echo_main, &e)) die("thread");
  } else {
    fflush(stdout);
    if ((child = fork()) < 0) die("fork");
    if (!child) {
      echo_main(&e);
      _exit(0);
    }
  }
  int fd = dial(ntohs(a.sin_port));
  char out[4096] = {0}, in[4096];
  if (request > sizeof out) request = sizeof out;
  for (int i = -n / 10; i < n; i++) {
    double t0 = now_s();
    if (write(fd, out, request) != (ssize_t)request) die("write");
    read_full(fd, in, e.answer);
    if (i >= 0) ms[i] = (now_s() - t0) * 1e3;
  }
  close(fd);
  if (in_process) pthread_join(th, NULL);
  else if (waitpid(child, NULL, 0) < 0) die("waitpid");
  close(e.listen_fd);
  qsort(ms, (size_t)n, sizeof *ms, cmp_double);
  printf("  floor  p50 %.1f us, p99 %.1f us (loopback TCP alone: the same "
         "%zu bytes out and %zu back through a bare echo %s)\n",
         ms[n / 2] * 1e3, ms[(size_t)n * 99 / 100] * 1e3, request, e.answer,
         in_process ? "thread" : "process");
}

static void latency(int bport, int hport, int n) {
  small_target t[2];
  small_targets(bport, hport, t);
  double *ms = malloc((size_t)n * sizeof *ms);
  if (!ms) die("out of memory");
  printf("small cached program, one connection, %d requests:\n", n);
  for (int k = 0; k < (hport ? 2 : 1); k++) {
    int fd = small_connect(&t[k]);
    char *buf = NULL;
    size_t cap = 0;
    for (int i = 0; i < n / 10; i++) small_once(&t[k], fd, 1, &buf, &cap);
    for (int i = 0; i < n; i++) {
      double t0 = now_s();
      small_once(&t[k], fd, 1, &buf, &cap);
      ms[i] = (now_s() - t0) * 1e3;
    }
    qsort(ms, (size_t)n, sizeof *ms, cmp_double);
    printf("  %-6s p50 %.1f us, p99 %.1f us\n", t[k].binary ? "binary" : "json",
           ms[n / 2] * 1e3, ms[(size_t)n * 99 / 100] * 1e3);
    free(buf);
    close(fd);
  }
  tcp_floor(small_request_bytes(), atomic_load(&small_answer_bytes), n, true,
            ms);
  tcp_floor(small_request_bytes(), atomic_load(&small_answer_bytes), n, false,
            ms);
  free(ms);
}

typedef struct rate_worker {
  const small_target *t;
  double until;
  atomic_long *count;
} rate_worker;

static void *rate_main(void *arg) {
  rate_worker *w = arg;
  int fd = small_connect(w->t);
  char *buf = NULL;
  size_t cap = 0;
  long done = 0;
  while (now_s() < w->until) {
    small_once(w->t, fd, 1, &buf, &cap);
    done++;
  }
  atomic_fetch_add(w->count, done);
  free(buf);
  close(fd);
  return NULL;
}

static void rate(int bport, int hport, int conns, double secs) {
  small_target t[2];
  small_targets(bport, hport, t);
  pthread_t *th = malloc((size_t)conns * sizeof *th);
  rate_worker *w = malloc((size_t)conns * sizeof *w);
  if (!th || !w) die("out of memory");
  printf("small cached program, %d connections, %.0f s each:\n", conns, secs);
  for (int k = 0; k < (hport ? 2 : 1); k++) {
    atomic_long count = 0;
    double t0 = now_s();
    for (int i = 0; i < conns; i++) {
      w[i] = (rate_worker){&t[k], t0 + secs, &count};
      if (pthread_create(&th[i], NULL, rate_main, &w[i])) die("thread");
    }
    for (int i = 0; i < conns; i++) pthread_join(th[i], NULL);
    double el = now_s() - t0;
    printf("  %-6s %.0f requests/s\n", t[k].binary ? "binary" : "json",
           (double)atomic_load(&count) / el);
  }
  free(th);
  free(w);
}

int main(int argc, char **argv) {
  if (argc == 6 && !strcmp(argv[1], "roundtrip"))
    roundtrip(atoi(argv[2]), atoi(argv[3]), strtoull(argv[4], NULL, 10),
              atoi(argv[5]));
  else if (argc == 5 && !strcmp(argv[1], "latency"))
    latency(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]));
  else if (argc == 6 && !strcmp(argv[1], "rate"))
    rate(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]), atof(argv[5]));
  else {
    fprintf(stderr, "usage: shlo-loadgen roundtrip BPORT HPORT MIB REPS | "
                    "latency BPORT HPORT N | rate BPORT HPORT CONNS SECONDS\n");
    return 2;
  }
  return 0;
}
