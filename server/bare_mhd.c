/* bare_mhd: the baseline for bench/server_bench.sh, a libmicrohttpd
 * handler that answers every request with one fixed JSON body, with MHD's
 * own single epoll thread.  It measures what HTTP alone costs on this
 * machine.  usage: bare_mhd PORT */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <microhttpd.h>

static const char body[] =
    "{\"outputs\":[{\"dtype\":\"f32\",\"shape\":[3],\"data\":[1.5,2.25,2.0]}],"
    "\"module\":\"sha256:0\",\"cached\":true,"
    "\"timing\":{\"compile_ms\":0,\"execute_ms\":0.001}}";

static enum MHD_Result on_access(void *cls, struct MHD_Connection *c,
                                 const char *url, const char *method,
                                 const char *version, const char *upload,
                                 size_t *upload_size, void **con_cls) {
  (void)cls, (void)url, (void)method, (void)version, (void)upload;
  if (!*con_cls) { /* headers: wait for the body */
    *con_cls = (void *)1;
    return MHD_YES;
  }
  if (*upload_size) { /* discard the body */
    *upload_size = 0;
    return MHD_YES;
  }
  struct MHD_Response *r = MHD_create_response_from_buffer(
      sizeof body - 1, (void *)body, MHD_RESPMEM_PERSISTENT);
  MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
  enum MHD_Result ret = MHD_queue_response(c, MHD_HTTP_OK, r);
  MHD_destroy_response(r);
  return ret;
}

int main(int argc, char **argv) {
  int port = argc > 1 ? atoi(argv[1]) : 8081;
  struct MHD_Daemon *d = MHD_start_daemon(
      MHD_USE_EPOLL_INTERNAL_THREAD | MHD_USE_ERROR_LOG, (uint16_t)port, NULL,
      NULL, on_access, NULL, MHD_OPTION_CONNECTION_LIMIT, 4096u,
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
