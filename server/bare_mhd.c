/* SPDX-License-Identifier: Apache-2.0 */
/* bare_mhd: the baseline for bench/server_bench.sh, a libmicrohttpd
 * handler that reads the whole request body and answers every request with
 * one fixed JSON body the size and shape of shlo-server's answer to the
 * benchmark's request, with MHD's own single epoll thread.  It measures
 * what HTTP alone costs on this machine.  usage: bare_mhd PORT [echo]
 * With "echo" it answers each request with its own body instead (for
 * bench/b64_roundtrip.sh's floor: the same bytes each way, no decoding),
 * the body's buffer sized from Content-Length and on huge pages as
 * shlo-server's is. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/mman.h>

#include <microhttpd.h>

static int echo;

static const char body[] =
    "{\"outputs\":[{\"dtype\":\"f32\",\"shape\":[4],\"data\":[0.75,1.25,1.75,"
    "2.25]}],\"module\":\"sha256:51aa2b65ee645e336928d6a49d2d9659b7f765f21746a"
    "110dcd0bfdb0606b562\",\"cached\":true,\"timing\":{\"compile_ms\":0,"
    "\"execute_ms\":0.002}}\n";

typedef struct upload {
  char *data;
  size_t len, cap;
} upload;

static enum MHD_Result on_access(void *cls, struct MHD_Connection *c,
                                 const char *url, const char *method,
                                 const char *version, const char *data,
                                 size_t *data_size, void **con_cls) {
  (void)cls, (void)url, (void)method, (void)version;
  upload *u = *con_cls;
  if (!u) { /* headers: wait for the body */
    u = calloc(1, sizeof *u);
    if (!u) return MHD_NO;
    *con_cls = u;
    const char *cl =
        MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
    size_t n = cl ? strtoull(cl, NULL, 10) : 0;
    if (echo && n > 0 && n < ((size_t)1 << 32) && (u->data = malloc(n))) {
      u->cap = n;
#ifdef MADV_HUGEPAGE
      const size_t huge = (size_t)2 << 20;
      size_t a = ((size_t)u->data + huge - 1) & ~(huge - 1);
      size_t e = ((size_t)u->data + n) & ~(huge - 1);
      if (e > a) madvise((void *)a, e - a, MADV_HUGEPAGE);
#endif
    }
    return MHD_YES;
  }
  if (*data_size) { /* keep the body, as a real handler would */
    if (u->len + *data_size > u->cap) {
      size_t cap = u->cap ? u->cap * 2 : 4096;
      while (cap < u->len + *data_size) cap *= 2;
      char *p = realloc(u->data, cap);
      if (!p) return MHD_NO;
      u->data = p;
      u->cap = cap;
    }
    memcpy(u->data + u->len, data, *data_size);
    u->len += *data_size;
    *data_size = 0;
    return MHD_YES;
  }
  struct MHD_Response *r;
  if (echo) { /* the body goes back; MHD frees it */
    r = MHD_create_response_from_buffer(u->len, u->data,
                                        MHD_RESPMEM_MUST_FREE);
    if (r) u->data = NULL;
  } else {
    r = MHD_create_response_from_buffer(sizeof body - 1, (void *)body,
                                        MHD_RESPMEM_PERSISTENT);
  }
  if (!r) return MHD_NO;
  MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
  enum MHD_Result ret = MHD_queue_response(c, MHD_HTTP_OK, r);
  MHD_destroy_response(r);
  return ret;
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe) {
  (void)cls, (void)c, (void)toe;
  upload *u = *con_cls;
  if (!u) return;
  free(u->data);
  free(u);
  *con_cls = NULL;
}

int main(int argc, char **argv) {
  int port = argc > 1 ? atoi(argv[1]) : 8081;
  echo = argc > 2 && !strcmp(argv[2], "echo");
  /* The MHD flags shlo-server uses (epoll, turbo), with MHD's thread. */
  unsigned flags =
      MHD_USE_EPOLL_INTERNAL_THREAD | MHD_USE_TURBO | MHD_USE_ERROR_LOG;
  struct MHD_Daemon *d = MHD_start_daemon(
      flags, (uint16_t)port, NULL,
      NULL, on_access, NULL, MHD_OPTION_CONNECTION_LIMIT, 4096u,
      MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL,
      MHD_OPTION_LISTEN_BACKLOG_SIZE, 1024u, MHD_OPTION_END);
  if (!d) {
    fprintf(stderr, "bare_mhd: cannot listen on port %d\n", port);
    return 1;
  }
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigprocmask(SIG_BLOCK, &set, NULL);
  int sig;
  sigwait(&set, &sig);
  MHD_stop_daemon(d);
  return 0;
}
