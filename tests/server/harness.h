/* SPDX-License-Identifier: Apache-2.0 */
/* End-to-end test harness: start a real shlo-server on a free loopback
 * port, talk HTTP to it with libcurl, stop it with SIGTERM and check that it
 * exits 0.  Each test program is its own process (ctest gives it a
 * timeout).  Header-only: each test includes it once. */
#ifndef SHLO_TEST_HARNESS_H
#define SHLO_TEST_HARNESS_H

#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

static int t_failures, t_checks;

#define CHECK(cond, ...)                                                   \
  do {                                                                     \
    t_checks++;                                                            \
    if (!(cond)) {                                                         \
      t_failures++;                                                        \
      fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);      \
      fprintf(stderr, __VA_ARGS__);                                        \
      fputc('\n', stderr);                                                 \
    }                                                                      \
  } while (0)

typedef struct server {
  pid_t pid;
  int port;
  char base[64];
  char log[32]; /* the server's stderr, copied to ours when it stops */
} server;

typedef struct resp {
  long status;
  char *body;
  size_t len, cap;
  char retry_after[32];
  char allow[64];
} resp;

__attribute__((unused)) static int free_port(void) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET,
                          .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t n = sizeof a;
  if (bind(fd, (struct sockaddr *)&a, sizeof a) ||
      getsockname(fd, (struct sockaddr *)&a, &n)) {
    perror("free_port");
    exit(2);
  }
  close(fd);
  return ntohs(a.sin_port);
}

/* The body grows by doubling: an exact-size realloc per piece is
 * quadratic where realloc copies (ASan's always does), and a 13 MB answer
 * then took minutes. */
static size_t on_body(char *p, size_t sz, size_t n, void *ud) {
  resp *r = ud;
  if (r->len + sz * n + 1 > r->cap) {
    size_t cap = r->cap ? r->cap : 4096;
    while (cap < r->len + sz * n + 1) cap *= 2;
    char *b = realloc(r->body, cap);
    if (!b) return 0;
    r->body = b;
    r->cap = cap;
  }
  memcpy(r->body + r->len, p, sz * n);
  r->len += sz * n;
  r->body[r->len] = 0;
  return sz * n;
}

static size_t on_header(char *p, size_t sz, size_t n, void *ud) {
  resp *r = ud;
  size_t len = sz * n;
  if (len > 13 && !strncasecmp(p, "Retry-After: ", 13))
    snprintf(r->retry_after, sizeof r->retry_after, "%.*s", (int)(len - 15), p + 13);
  if (len > 7 && !strncasecmp(p, "Allow: ", 7))
    snprintf(r->allow, sizeof r->allow, "%.*s", (int)(len - 9), p + 7);
  return len;
}

static void resp_free(resp *r) {
  free(r->body);
  memset(r, 0, sizeof *r);
}

/* Prepare an easy handle for one request.  ctype NULL: no Content-Type
 * header at all (as `curl --data-binary` without -H sends a form type, we
 * mimic that with "application/x-www-form-urlencoded" where wanted). */
static CURL *req_prepare(const server *s, const char *method, const char *path,
                         const char *ctype, const char *body, size_t len,
                         const char *token, resp *r, struct curl_slist **hdrs) {
  CURL *c = curl_easy_init();
  char url[512], h[256];
  snprintf(url, sizeof url, "%s%s", s->base, path);
  memset(r, 0, sizeof *r);
  curl_easy_setopt(c, CURLOPT_URL, url);
  curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, r);
  curl_easy_setopt(c, CURLOPT_TIMEOUT, 60L);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  *hdrs = curl_slist_append(NULL, "Expect:");
  if (ctype) {
    snprintf(h, sizeof h, "Content-Type: %s", ctype);
    *hdrs = curl_slist_append(*hdrs, h);
  } else {
    *hdrs = curl_slist_append(*hdrs, "Content-Type:");
  }
  if (token) {
    snprintf(h, sizeof h, "Authorization: Bearer %s", token);
    *hdrs = curl_slist_append(*hdrs, h);
  }
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, *hdrs);
  if (body) {
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
  }
  return c;
}

/* Run a prepared request (its status, or minus curl's error code) and
 * free the handle and its headers. */
static void req_perform(CURL *c, struct curl_slist *h, resp *r) {
  CURLcode rc = curl_easy_perform(c);
  if (rc == CURLE_OK) curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
  else r->status = -(long)rc;
  if (!r->body) r->body = calloc(1, 1);
  curl_easy_cleanup(c);
  curl_slist_free_all(h);
}

static resp http(const server *s, const char *method, const char *path,
                 const char *ctype, const char *body, const char *token) {
  resp r;
  struct curl_slist *h;
  CURL *c = req_prepare(s, method, path, ctype, body, body ? strlen(body) : 0,
                        token, &r, &h);
  req_perform(c, h, &r);
  return r;
}

__attribute__((unused)) static resp post_json(const server *s, const char *path, const char *json) {
  return http(s, "POST", path, "application/json", json, NULL);
}

__attribute__((unused)) static bool has(const resp *r, const char *needle) {
  return r->body && strstr(r->body, needle);
}

__attribute__((unused)) static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Poll s's /healthz every 20 ms, up to 20 s (a sanitized build on a
 * loaded machine): 1 once it answers 200, 0 when process pid (the one
 * that should answer) ended first, -1 when nothing answered in time. */
static int wait_healthz(const server *s, pid_t pid) {
  for (int i = 0; i < 1000; i++) {
    resp r = http(s, "GET", "/healthz", NULL, NULL, NULL);
    long st = r.status;
    resp_free(&r);
    if (st == 200) return 1;
    if (waitpid(pid, NULL, WNOHANG) == pid) return 0;
    usleep(20000);
  }
  return -1;
}

/* Copy the server's stderr file to ours (its messages, a sanitizer's
 * report) and remove it. */
static void server_log_flush(server *s) {
  if (!s->log[0]) return;
  FILE *f = fopen(s->log, "r");
  for (int c; f && (c = fgetc(f)) != EOF;) fputc(c, stderr);
  if (f) fclose(f);
  unlink(s->log);
  s->log[0] = 0;
}

/* The port the server's own log line names ("listening on
 * http://127.0.0.1:PORT/"), read from its stderr file; 0 while the line
 * is not there yet. */
static int logged_port(const char *log) {
  FILE *f = fopen(log, "r");
  if (!f) return 0;
  char line[512];
  int port = 0;
  while (!port && fgets(line, sizeof line, f)) {
    const char *p = strstr(line, "listening on http");
    p = p ? strstr(p, "://") : NULL;
    p = p ? strrchr(p, ':') : NULL;
    if (p) port = atoi(p + 1);
  }
  fclose(f);
  return port;
}

/* Start argv with --port 0 and its stderr in a file; the kernel picks a
 * port no other test holds, and the server's log line says which (a port
 * picked free beforehand could be taken by a test running beside this
 * one, whose server would then answer this test's requests).  Waits for
 * /healthz: true once it answers, false when it did not. */
static bool server_try_start(server *s, const char **argv) {
  char *log = s->log;
  snprintf(s->log, sizeof s->log, "/tmp/shlo-harness-XXXXXX");
  int fd = mkstemp(log);
  if (fd < 0) {
    perror("mkstemp");
    return false;
  }
  s->pid = fork();
  if (s->pid == 0) {
    dup2(fd, 2);
    execv(argv[0], (char *const *)argv);
    perror("execv");
    _exit(127);
  }
  close(fd);
  s->port = 0;
  for (int i = 0; i < 1000 && !s->port; i++) {
    s->port = logged_port(log);
    if (!s->port && waitpid(s->pid, NULL, WNOHANG) == s->pid) break;
    if (!s->port) usleep(20000);
  }
  snprintf(s->base, sizeof s->base, "http://127.0.0.1:%d", s->port);
  int up = s->port ? wait_healthz(s, s->pid) : -1;
  if (up < 0) {
    kill(s->pid, SIGKILL);
    waitpid(s->pid, NULL, 0);
  }
  if (up <= 0) server_log_flush(s);
  return up > 0;
}

/* Start the server with extra flags (NULL-terminated); waits for /healthz. */
static server server_start(const char *first, ...) {
  server s = {0};
  const char *argv[64];
  int n = 0;
  argv[n++] = SHLO_SERVER_BIN;
  argv[n++] = "--port";
  argv[n++] = "0";
  argv[n++] = "--log";
  argv[n++] = getenv("SHLO_TEST_LOG") ? getenv("SHLO_TEST_LOG") : "off";
  va_list ap;
  va_start(ap, first);
  for (const char *a = first; a && n < 62; a = va_arg(ap, const char *))
    argv[n++] = a;
  va_end(ap);
  argv[n] = NULL;
  if (server_try_start(&s, argv)) return s;
  fprintf(stderr, "FAIL: shlo-server did not start\n");
  exit(1);
}

/* SIGTERM, then the exit status (-1 if it had to be killed). */
__attribute__((unused)) static int server_stop(server *s, double wait_s) {
  kill(s->pid, SIGTERM);
  double t0 = now_s();
  int status;
  while (now_s() - t0 < wait_s) {
    if (waitpid(s->pid, &status, WNOHANG) == s->pid) {
      server_log_flush(s);
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    usleep(10000);
  }
  kill(s->pid, SIGKILL);
  waitpid(s->pid, &status, 0);
  server_log_flush(s);
  return -1;
}

/* Resident set size of a process in KiB. */
__attribute__((unused)) static long rss_kb(pid_t pid) {
  char path[64], line[256];
  snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
  FILE *f = fopen(path, "r");
  long kb = -1;
  while (f && fgets(line, sizeof line, f))
    if (!strncmp(line, "VmRSS:", 6)) kb = atol(line + 6);
  if (f) fclose(f);
  return kb;
}

/* A JSON string literal of text (malloc'd). */
__attribute__((unused)) static char *json_str(const char *text) {
  size_t n = strlen(text);
  char *o = malloc(n * 6 + 3), *p = o;
  *p++ = '"';
  for (const unsigned char *s = (const unsigned char *)text; *s; s++) {
    if (*s == '"' || *s == '\\') *p++ = '\\', *p++ = (char)*s;
    else if (*s == '\n') *p++ = '\\', *p++ = 'n';
    else if (*s < 0x20) p += sprintf(p, "\\u%04x", *s);
    else *p++ = (char)*s;
  }
  *p++ = '"';
  *p = 0;
  return o;
}

__attribute__((unused)) static int t_report(const char *name) {
  if (t_failures) fprintf(stderr, "%s: %d of %d checks failed\n", name, t_failures, t_checks);
  else fprintf(stderr, "%s: all %d checks passed\n", name, t_checks);
  return t_failures ? 1 : 0;
}

#endif
