/* bare_mhd: the baseline for bench/server_bench.sh, a libmicrohttpd
 * handler that reads the whole request body and answers every request with
 * one fixed JSON body the size and shape of shlo-server's answer to the
 * benchmark's request, with MHD's own single epoll thread.  It measures
 * what HTTP alone costs on this machine.  usage: bare_mhd PORT */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <microhttpd.h>

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
  struct MHD_Response *r = MHD_create_response_from_buffer(
      sizeof body - 1, (void *)body, MHD_RESPMEM_PERSISTENT);
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
