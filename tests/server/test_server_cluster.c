/* SPDX-License-Identifier: Apache-2.0 */
/* Three shlo-servers behind nginx, as deploy/compose.yaml runs them but
 * without containers: the servers and nginx on free loopback ports, nginx's
 * config written by deploy/nginx-conf.sh from deploy/nginx.conf.in.
 *
 * 50 modules are registered through nginx (POST /v1/modules?module=<id>)
 * and each executed 20 times; nginx hashes the module id, so each module is
 * compiled on exactly one server and >= 90% of executions are cache hits,
 * read from each server's /metrics.  Then one server stops: modules on the
 * others answer at once, and the stopped one's are refused cleanly (404
 * not_found) until the client registers them again, as README.md says a
 * client should.  SKIPPED (77) without nginx. */
#include "harness.h"

#include <openssl/sha.h>
#include <sys/stat.h>

#define N_SERVERS 3
#define N_MODULES 50
#define N_RUNS 20

typedef struct module {
  char *text;
  char id[72];
  double want; /* the constant: each output element is 1 + want */
} module;

static module mods[N_MODULES];

/* Module i: x + i (distinct texts, so distinct ids). */
static void make_module(int i) {
  module *m = &mods[i];
  char buf[512];
  snprintf(buf, sizeof buf,
           "func.func @main(%%x: tensor<4xf32>) -> tensor<4xf32> {\n"
           "  %%c = stablehlo.constant dense<%d.0> : tensor<4xf32>\n"
           "  %%0 = stablehlo.add %%x, %%c : tensor<4xf32>\n"
           "  return %%0 : tensor<4xf32>\n}\n", i);
  m->text = strdup(buf);
  unsigned char h[SHA256_DIGEST_LENGTH];
  SHA256((const unsigned char *)buf, strlen(buf), h);
  int n = snprintf(m->id, sizeof m->id, "sha256:");
  for (int k = 0; k < SHA256_DIGEST_LENGTH; k++)
    n += snprintf(m->id + n, sizeof m->id - (size_t)n, "%02x", h[k]);
  m->want = i;
}

/* nginx in the foreground on a free port (lb->port); its config from
 * deploy/.  -1 when it ended before answering, as when a test beside this
 * one took the port between free_port() and nginx's bind. */
static pid_t nginx_try_start(server *lb, server *srv, char *rundir) {
  lb->port = free_port();
  snprintf(lb->base, sizeof lb->base, "http://127.0.0.1:%d", lb->port);
  char cmd[2048], conf[600];
  int n = snprintf(cmd, sizeof cmd, "bash %s/deploy/nginx-conf.sh 127.0.0.1:%d %s",
                   SHLO_SOURCE_DIR, lb->port, rundir);
  for (int i = 0; i < N_SERVERS; i++)
    n += snprintf(cmd + n, sizeof cmd - (size_t)n, " 127.0.0.1:%d", srv[i].port);
  snprintf(conf, sizeof conf, "%s/nginx.conf", rundir);
  snprintf(cmd + n, sizeof cmd - (size_t)n, " > %s", conf);
  if (system(cmd) != 0) {
    fprintf(stderr, "FAIL: %s\n", cmd);
    exit(1);
  }
  chmod(rundir, 0755); /* nginx's workers may run as another user */
  pid_t pid = fork();
  if (pid == 0) {
    execl(SHLO_NGINX_BIN, "nginx", "-e", "stderr", "-p", rundir, "-c", conf,
          "-g", "daemon off;", (char *)NULL);
    perror("exec nginx");
    _exit(127);
  }
  int up = wait_healthz(lb, pid);
  if (up > 0) return pid;
  if (up == 0) return -1;
  fprintf(stderr, "FAIL: nginx did not answer on port %d\n", lb->port);
  kill(pid, SIGKILL);
  exit(1);
}

static pid_t nginx_start(server *lb, server *srv, char *rundir) {
  for (int attempt = 0; attempt < 5; attempt++) {
    pid_t pid = nginx_try_start(lb, srv, rundir);
    if (pid > 0) return pid;
    fprintf(stderr, "nginx ended on port %d; trying another\n", lb->port);
  }
  fprintf(stderr, "FAIL: nginx did not start\n");
  exit(1);
}

static long reg(const server *lb, const module *m) {
  char path[128];
  snprintf(path, sizeof path, "/v1/modules?module=%s", m->id);
  resp r = http(lb, "POST", path, NULL, m->text, NULL);
  CHECK(r.status != 200 || has(&r, m->id), "registered id: %s", r.body);
  long st = r.status;
  resp_free(&r);
  return st;
}

/* Execute module m through nginx: the HTTP status; 200 answers checked. */
static long exec_module(const server *lb, const module *m, char *kind, size_t cap) {
  char path[128], want[64];
  snprintf(path, sizeof path, "/v1/modules/%s/execute", m->id);
  resp r = post_json(lb, path, "{\"inputs\": [{\"dtype\": \"f32\", \"shape\": "
                               "[4], \"data\": [1, 1, 1, 1]}]}");
  snprintf(want, sizeof want, "\"data\":[%.1f,%.1f,%.1f,%.1f]", m->want + 1,
           m->want + 1, m->want + 1, m->want + 1);
  if (r.status == 200) CHECK(has(&r, want), "want %s: %s", want, r.body);
  kind[0] = 0;
  const char *k = r.body ? strstr(r.body, "\"kind\":\"") : NULL;
  if (k) snprintf(kind, cap, "%.*s", (int)strcspn(k + 8, "\""), k + 8);
  long st = r.status;
  resp_free(&r);
  return st;
}

/* A counter or gauge of a server's /metrics (-1 if absent). */
static double metric(const server *s, const char *name) {
  resp r = http(s, "GET", "/metrics", NULL, NULL, NULL);
  double v = -1;
  size_t n = strlen(name);
  for (const char *p = r.body; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
    if (!strncmp(p, name, n) && p[n] == ' ') v = atof(p + n + 1);
  resp_free(&r);
  return v;
}

/* Register every module and run each N_RUNS times; return the modules
 * each server holds (in held[]). */
static void register_and_run(const server *lb, server *srv, int held[]) {
  char kind[32];
  for (int i = 0; i < N_MODULES; i++) CHECK(reg(lb, &mods[i]) == 200, "register %d", i);
  int ok = 0;
  for (int run = 0; run < N_RUNS; run++)
    for (int i = 0; i < N_MODULES; i++) ok += exec_module(lb, &mods[i], kind, sizeof kind) == 200;
  CHECK(ok == N_MODULES * N_RUNS, "%d of %d executions answered 200", ok,
        N_MODULES * N_RUNS);
  double hits = 0, misses = 0;
  int total = 0;
  for (int k = 0; k < N_SERVERS; k++) {
    double h = metric(&srv[k], "shlo_cache_hits_total");
    double m = metric(&srv[k], "shlo_cache_misses_total");
    held[k] = (int)metric(&srv[k], "shlo_cache_modules");
    printf("server %d: %d modules, %.0f cache hits, %.0f misses\n", k + 1,
           held[k], h, m);
    hits += h, misses += m, total += held[k];
    CHECK(held[k] > 0, "server %d holds no module: the hash does not spread",
          k + 1);
  }
  /* each module compiled once, on the server its id hashes to */
  CHECK(total == N_MODULES, "%d modules across the servers, want %d", total,
        N_MODULES);
  double ratio = hits / (N_MODULES * N_RUNS);
  printf("cache hits per execution: %.0f / %d = %.3f (misses %.0f, the "
         "registrations)\n", hits, N_MODULES * N_RUNS, ratio, misses);
  CHECK(ratio >= 0.9, "hit ratio %.3f", ratio);
  CHECK(misses <= N_MODULES, "%.0f misses for %d registrations", misses,
        N_MODULES);
}

/* Server `down` stops: each module answers at once, or is refused with a
 * clean 404 not_found and answers once registered again. */
static void one_server_down(const server *lb, server *srv, int down, const int held[]) {
  CHECK(server_stop(&srv[down], 20) == 0, "server %d exit status", down + 1);
  int direct = 0, again = 0, bad = 0;
  char kind[32];
  for (int i = 0; i < N_MODULES; i++) {
    long st = exec_module(lb, &mods[i], kind, sizeof kind);
    if (st == 200) {
      direct++;
      continue;
    }
    if (st != 404 || strcmp(kind, "not_found")) {
      bad++;
      CHECK(0, "module %d: HTTP %ld kind '%s' with a server down", i, st, kind);
      continue;
    }
    CHECK(reg(lb, &mods[i]) == 200, "register %d again", i);
    st = exec_module(lb, &mods[i], kind, sizeof kind);
    CHECK(st == 200, "module %d after registering again: %ld", i, st);
    again += st == 200;
  }
  printf("server %d down: %d modules answered at once, %d after a clean 404 "
         "and registering again, %d otherwise\n", down + 1, direct, again, bad);
  /* consistent hashing: only the stopped server's modules moved */
  CHECK(again == held[down], "%d registered again, the stopped server held %d",
        again, held[down]);
  CHECK(direct == N_MODULES - held[down], "%d answered at once", direct);
}

int main(void) {
  if (!SHLO_NGINX_BIN[0] || access(SHLO_NGINX_BIN, X_OK)) {
    printf("SKIP: nginx not found (apt-get install nginx; deploy/bootstrap.sh "
           "installs it)\n");
    return 77;
  }
  curl_global_init(CURL_GLOBAL_DEFAULT);
  for (int i = 0; i < N_MODULES; i++) make_module(i);
  server srv[N_SERVERS];
  for (int k = 0; k < N_SERVERS; k++) srv[k] = server_start("--threads", "2", NULL);
  char rundir[] = "/tmp/shlo-lb-XXXXXX";
  if (!mkdtemp(rundir)) return 2;
  server lb = {0};
  pid_t nginx = nginx_start(&lb, srv, rundir);
  double t0 = now_s();
  int held[N_SERVERS];
  register_and_run(&lb, srv, held);
  printf("%d registrations and %d executions through nginx in %.2f s\n",
         N_MODULES, N_MODULES * N_RUNS, now_s() - t0);
  one_server_down(&lb, srv, 1, held);
  kill(nginx, SIGTERM);
  int status;
  waitpid(nginx, &status, 0);
  for (int k = 0; k < N_SERVERS; k++)
    if (k != 1) CHECK(server_stop(&srv[k], 20) == 0, "server %d exit status", k + 1);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", rundir);
  if (system(cmd)) fprintf(stderr, "could not remove %s\n", rundir);
  for (int i = 0; i < N_MODULES; i++) free(mods[i].text);
  curl_global_cleanup();
  return t_report("test_server_cluster");
}
