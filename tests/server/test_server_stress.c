/* SPDX-License-Identifier: Apache-2.0 */
/* 200 concurrent clients send a mix of valid and broken requests; every
 * valid answer must be correct, every broken one a clean 4xx, and the
 * server healthy (and its RSS bounded) after.  Two rounds, to see whether
 * memory keeps growing. */
#include "harness.h"

enum { CLIENTS = 200, PER_CLIENT = 6, KINDS = 8 };

static const char *ADD =
    "func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {\n"
    "  %0 = stablehlo.add %a, %b : tensor<4xf32>\n"
    "  %1 = stablehlo.multiply %0, %b : tensor<4xf32>\n"
    "  return %1 : tensor<4xf32>\n"
    "}\n";

static const char *CONST =
    "func.func @main() -> tensor<3xi64> {\n"
    "  %0 = stablehlo.constant dense<[7, 8, 9]> : tensor<3xi64>\n"
    "  return %0 : tensor<3xi64>\n"
    "}\n";

typedef struct client {
  CURL *c;
  struct curl_slist *h;
  resp r;
  int n, kind, seed;
  char *body;
  long want;
  char expect[256];
} client;

static char module_path[160];
static int n_ok, n_bad_ok, n_wrong;

static void make_request(const server *s, client *cl) {
  int k = cl->kind = (cl->seed * 7 + cl->n * 3) % KINDS;
  int v = cl->seed * 10 + cl->n;
  free(cl->body);
  cl->body = NULL;
  const char *path = "/execute", *ctype = "application/json";
  char *prog = json_str(ADD);
  cl->expect[0] = 0;
  int rc = 0;
  switch (k) {
  case 0: /* valid: (a + b) * b with b = 2 */
  case 1: /* valid, registered module */
    rc = asprintf(&cl->body,
                  "{%s%s%s\"inputs\": [{\"dtype\": \"f32\", \"shape\": [4], "
                  "\"data\": [%d, %d, %d, %d]}, {\"dtype\": \"f32\", "
                  "\"shape\": [4], \"data\": [2, 2, 2, 2]}]}",
                  k == 0 ? "\"program\": " : "", k == 0 ? prog : "",
                  k == 0 ? ", " : "", v, v + 1, v + 2, v + 3);
    if (k == 1) path = module_path;
    snprintf(cl->expect, sizeof cl->expect, "\"data\":[%d.0,%d.0,%d.0,%d.0]",
             (v + 2) * 2, (v + 3) * 2, (v + 4) * 2, (v + 5) * 2);
    cl->want = 200;
    break;
  case 2: /* malformed JSON */
    rc = asprintf(&cl->body, "{\"program\": %s, \"inputs\": [{\"dtype\"", prog);
    cl->want = 400;
    break;
  case 3: /* wrong shape */
    rc = asprintf(&cl->body,
                  "{\"program\": %s, \"inputs\": [{\"dtype\": \"f32\", "
                  "\"shape\": [5], \"data\": [1,2,3,4,5]}, {\"dtype\": \"f32\", "
                  "\"shape\": [4], \"data\": [1,2,3,4]}]}", prog);
    cl->want = 400;
    break;
  case 4: /* parse error */
    rc = asprintf(&cl->body, "func.func @main( -> %d", v);
    ctype = "text/plain";
    cl->want = 400;
    break;
  case 5: /* not UTF-8 */
    rc = asprintf(&cl->body, "func.func @main() \xc3\x28 %d", v);
    ctype = "text/plain";
    cl->want = 400;
    break;
  case 6: /* no such module */
    rc = asprintf(&cl->body, "{\"inputs\": []}");
    path = "/v1/modules/sha256:00000000000000000000000000000000000000000000"
           "00000000000000000000/execute";
    cl->want = 404;
    break;
  default: /* valid text program */
    rc = asprintf(&cl->body, "%s", CONST);
    ctype = NULL;
    snprintf(cl->expect, sizeof cl->expect, "\"data\":[7,8,9]");
    cl->want = 200;
  }
  if (rc < 0) abort();
  free(prog);
  if (cl->c) {
    curl_easy_cleanup(cl->c);
    curl_slist_free_all(cl->h);
  }
  resp_free(&cl->r);
  cl->c = req_prepare(s, "POST", path, ctype, cl->body, strlen(cl->body),
                      NULL, &cl->r, &cl->h);
  curl_easy_setopt(cl->c, CURLOPT_PRIVATE, cl);
}

static void round_of_clients(const server *s) {
  static client cls[CLIENTS];
  CURLM *m = curl_multi_init();
  curl_multi_setopt(m, CURLMOPT_MAX_TOTAL_CONNECTIONS, (long)CLIENTS);
  for (int i = 0; i < CLIENTS; i++) {
    memset(&cls[i], 0, sizeof cls[i]);
    cls[i].seed = i;
    make_request(s, &cls[i]);
    curl_multi_add_handle(m, cls[i].c);
  }
  int running = 1, done = 0;
  while (done < CLIENTS) {
    curl_multi_perform(m, &running);
    CURLMsg *msg;
    int q;
    while ((msg = curl_multi_info_read(m, &q))) {
      if (msg->msg != CURLMSG_DONE) continue;
      client *cl;
      curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&cl);
      long st = 0;
      curl_easy_getinfo(msg->easy_handle, CURLINFO_RESPONSE_CODE, &st);
      bool good = st == cl->want &&
                  (!cl->expect[0] || (cl->r.body && strstr(cl->r.body, cl->expect)));
      if (st == 200 && good) n_ok++;
      else if (good) n_bad_ok++;
      else {
        n_wrong++;
        if (n_wrong < 10)
          fprintf(stderr, "kind %d: want %ld %s, got %ld (curl %d) %s\n",
                  cl->kind, cl->want, cl->expect, st, msg->data.result,
                  cl->r.body ? cl->r.body : "");
      }
      curl_multi_remove_handle(m, cl->c);
      if (++cl->n < PER_CLIENT) {
        make_request(s, cl);
        curl_multi_add_handle(m, cl->c);
      } else {
        done++;
      }
    }
    if (done < CLIENTS) curl_multi_poll(m, NULL, 0, 100, NULL);
  }
  for (int i = 0; i < CLIENTS; i++) {
    curl_easy_cleanup(cls[i].c);
    curl_slist_free_all(cls[i].h);
    resp_free(&cls[i].r);
    free(cls[i].body);
  }
  curl_multi_cleanup(m);
}

int main(void) {
  curl_global_init(CURL_GLOBAL_DEFAULT);
  /* The 200 clients share one address: the per-client cap (a shared
   * server's guard, tested in robust_lanes.py) would answer them 429. */
  server s = server_start("--threads", "2", "--max-queue", "1000",
                          "--max-client-jobs", "0", NULL);
  resp r = http(&s, "POST", "/v1/modules", "text/plain", ADD, NULL);
  CHECK(r.status == 200, "register: %ld %s", r.status, r.body);
  char *id = strstr(r.body ? r.body : "", "sha256:");
  snprintf(module_path, sizeof module_path, "/v1/modules/%.71s/execute",
           id ? id : "none");
  resp_free(&r);
  long rss0 = rss_kb(s.pid);
  double t0 = now_s();
  round_of_clients(&s);
  long rss1 = rss_kb(s.pid);
  round_of_clients(&s);
  long rss2 = rss_kb(s.pid);
  double dt = now_s() - t0;
  int total = 2 * CLIENTS * PER_CLIENT;
  fprintf(stderr, "stress: %d requests from %d concurrent clients in %.2f s "
                  "(%.0f req/s): %d valid ok, %d broken answered 4xx, %d "
                  "wrong; RSS %ld KiB at start, %ld after round 1, %ld after "
                  "round 2\n", total, CLIENTS, dt, total / dt, n_ok, n_bad_ok,
          n_wrong, rss0, rss1, rss2);
  CHECK(n_wrong == 0 && n_ok + n_bad_ok == total, "%d wrong answers", n_wrong);
#ifndef __SANITIZE_ADDRESS__ /* ASan's quarantine keeps freed memory */
  CHECK(rss2 - rss1 < 16 * 1024, "RSS grew %ld KiB in round 2", rss2 - rss1);
#endif
  r = http(&s, "GET", "/healthz", NULL, NULL, NULL);
  CHECK(r.status == 200, "healthy after: %ld", r.status);
  resp_free(&r);
  r = http(&s, "GET", "/metrics", NULL, NULL, NULL);
  CHECK(r.status == 200 && has(&r, "shlo_queue_depth 0"), "queue drained: %s",
        r.body);
  resp_free(&r);
  CHECK(server_stop(&s, 10) == 0, "exit 0");
  curl_global_cleanup();
  return t_report("test_server_stress");
}
