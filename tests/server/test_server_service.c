/* SPDX-License-Identifier: Apache-2.0 */
/* shlo-server under a supervisor (server/src/service.c, config.c): it tells
 * $NOTIFY_SOCKET READY=1 once it serves and STOPPING=1 on SIGTERM (systemd's
 * Type=notify); SIGHUP reloads the tokens file, keeps the old tokens when
 * the new file is broken, and is harmless without one; options come from
 * SHLO_* environment variables, flags winning. */
#include "harness.h"

#include <poll.h>
#include <sys/un.h>

/* A datagram socket bound to a fresh path, named by NOTIFY_SOCKET for the
 * servers this process starts. */
static int notify_open(char *path, size_t cap) {
  snprintf(path, cap, "/tmp/shlo-notify-%d", (int)getpid());
  unlink(path);
  int fd = socket(AF_UNIX, SOCK_DGRAM, 0);
  struct sockaddr_un a = {.sun_family = AF_UNIX};
  snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
  if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a)) {
    perror("notify socket");
    exit(2);
  }
  setenv("NOTIFY_SOCKET", path, 1);
  return fd;
}

/* The next datagram within wait_ms, or "" (buf has cap bytes). */
static const char *notify_next(int fd, char *buf, size_t cap, int wait_ms) {
  struct pollfd p = {.fd = fd, .events = POLLIN};
  buf[0] = 0;
  if (poll(&p, 1, wait_ms) == 1) {
    ssize_t n = recv(fd, buf, cap - 1, 0);
    buf[n > 0 ? n : 0] = 0;
  }
  return buf;
}

static long get_status(const server *s, const char *path, const char *token) {
  resp r = http(s, "GET", path, NULL, NULL, token);
  long st = r.status;
  resp_free(&r);
  return st;
}

static void write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  fputs(text, f);
  fclose(f);
}

static void ready_then_stopping(int nfd) {
  char msg[256];
  server s = server_start(NULL);
  CHECK(strstr(notify_next(nfd, msg, sizeof msg, 10000), "READY=1"),
        "first message: '%s'", msg);
  CHECK(get_status(&s, "/readyz", NULL) == 200, "/readyz once READY=1 is sent");
  CHECK(server_stop(&s, 20) == 0, "exit status after SIGTERM");
  CHECK(strstr(notify_next(nfd, msg, sizeof msg, 2000), "STOPPING=1"),
        "after SIGTERM: '%s'", msg);
}

/* Wait for the reload's RELOADING=1 then READY=1. */
static void hup_and_wait(server *s, int nfd) {
  char msg[256];
  kill(s->pid, SIGHUP);
  CHECK(strstr(notify_next(nfd, msg, sizeof msg, 10000), "RELOADING=1"),
        "on SIGHUP: '%s'", msg);
  CHECK(strstr(notify_next(nfd, msg, sizeof msg, 10000), "READY=1"),
        "after the reload: '%s'", msg);
}

static void sighup_reloads_tokens(int nfd) {
  char path[64], msg[256];
  snprintf(path, sizeof path, "/tmp/shlo-tokens-%d", (int)getpid());
  write_file(path, "alice AAAA\n");
  server s = server_start("--tokens", path, NULL);
  notify_next(nfd, msg, sizeof msg, 10000); /* READY=1 */
  CHECK(get_status(&s, "/v1/modules", "AAAA") == 200, "alice before");
  CHECK(get_status(&s, "/v1/modules", "BBBB") == 401, "bob before");
  write_file(path, "bob BBBB\n");
  hup_and_wait(&s, nfd);
  CHECK(get_status(&s, "/v1/modules", "BBBB") == 200, "bob after the reload");
  CHECK(get_status(&s, "/v1/modules", "AAAA") == 401, "alice after the reload");
  /* A broken file (a line without its token) leaves bob's in force. */
  write_file(path, "carol CCCC\nbroken\n");
  hup_and_wait(&s, nfd);
  CHECK(get_status(&s, "/v1/modules", "BBBB") == 200, "bob kept");
  CHECK(get_status(&s, "/v1/modules", "CCCC") == 401, "carol not half-loaded");
  CHECK(server_stop(&s, 20) == 0, "exit status after SIGTERM");
  notify_next(nfd, msg, sizeof msg, 2000); /* STOPPING=1 */
  unlink(path);
}

static void sighup_without_tokens_is_harmless(int nfd) {
  char msg[256];
  server s = server_start(NULL);
  notify_next(nfd, msg, sizeof msg, 10000);
  hup_and_wait(&s, nfd);
  hup_and_wait(&s, nfd);
  CHECK(get_status(&s, "/healthz", NULL) == 200, "alive after two SIGHUPs");
  CHECK(server_stop(&s, 20) == 0, "exit status after SIGTERM");
  notify_next(nfd, msg, sizeof msg, 2000);
}

/* SHLO_MAX_BODY_BYTES limits bodies; SHLO_PORT loses to the harness's
 * --port flag (else server_start would never reach the server). */
static void options_from_the_environment(int nfd) {
  char msg[256];
  setenv("SHLO_MAX_BODY_BYTES", "100", 1);
  setenv("SHLO_PORT", "1", 1);
  server s = server_start(NULL);
  unsetenv("SHLO_MAX_BODY_BYTES");
  unsetenv("SHLO_PORT");
  notify_next(nfd, msg, sizeof msg, 10000);
  char body[201];
  memset(body, ' ', 200);
  body[200] = 0;
  resp r = http(&s, "POST", "/execute", NULL, body, NULL);
  CHECK(r.status == 413 && has(&r, "max-body-bytes"), "%ld %s", r.status,
        r.body);
  resp_free(&r);
  CHECK(server_stop(&s, 20) == 0, "exit status after SIGTERM");
  notify_next(nfd, msg, sizeof msg, 2000);
}

int main(void) {
  curl_global_init(CURL_GLOBAL_DEFAULT);
  char path[108];
  int nfd = notify_open(path, sizeof path);
  ready_then_stopping(nfd);
  sighup_reloads_tokens(nfd);
  sighup_without_tokens_is_harmless(nfd);
  options_from_the_environment(nfd);
  close(nfd);
  unlink(path);
  curl_global_cleanup();
  return t_report("test_server_service");
}
