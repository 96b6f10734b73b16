/* SPDX-License-Identifier: Apache-2.0 */
/* shlo-server end to end: every route, every error kind, the cache, the
 * deadline, the queue limit, auth on and off, hostile bytes, and a clean
 * exit on SIGTERM. */
#include "harness.h"

#include <openssl/evp.h>

static const char *ADD =
    "func.func @main(%a: tensor<2x2xf32>, %b: tensor<2x2xf32>) -> "
    "tensor<2x2xf32> {\n"
    "  %0 = stablehlo.add %a, %b : tensor<2x2xf32>\n"
    "  return %0 : tensor<2x2xf32>\n"
    "}\n";

static const char *CONST =
    "func.func @main() -> (tensor<3xi32>, tensor<2xcomplex<f32>>) {\n"
    "  %0 = stablehlo.constant dense<[1, -2, 3]> : tensor<3xi32>\n"
    "  %1 = stablehlo.constant dense<[(1.0, 2.0), (3.5, -4.0)]> : "
    "tensor<2xcomplex<f32>>\n"
    "  return %0, %1 : tensor<3xi32>, tensor<2xcomplex<f32>>\n"
    "}\n";

static const char *LOOP =
    "func.func @main() -> tensor<i64> {\n"
    "  %c0 = stablehlo.constant dense<0> : tensor<i64>\n"
    "  %c1 = stablehlo.constant dense<1> : tensor<i64>\n"
    "  %r = stablehlo.while(%i = %c0) : tensor<i64>\n"
    "    cond {\n"
    "      %t = stablehlo.compare GE, %i, %c0 : (tensor<i64>, tensor<i64>) -> "
    "tensor<i1>\n"
    "      stablehlo.return %t : tensor<i1>\n"
    "    } do {\n"
    "      %n = stablehlo.add %i, %c1 : tensor<i64>\n"
    "      stablehlo.return %n : tensor<i64>\n"
    "    }\n"
    "  return %r : tensor<i64>\n"
    "}\n";

static const char *CHECK_FAILS =
    "func.func @main() -> tensor<2xf32> {\n"
    "  %0 = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>\n"
    "  %1 = stablehlo.constant dense<[1.0, 3.0]> : tensor<2xf32>\n"
    "  stablehlo.custom_call @check.expect_eq(%0, %1) {has_side_effect = "
    "true} : (tensor<2xf32>, tensor<2xf32>) -> ()\n"
    "  return %0 : tensor<2xf32>\n"
    "}\n";

static const char *BAD_VERIFY =
    "func.func @main(%a: tensor<2xf32>, %b: tensor<3xf32>) -> tensor<2xf32> {\n"
    "  %0 = stablehlo.add %a, %b : (tensor<2xf32>, tensor<3xf32>) -> "
    "tensor<2xf32>\n"
    "  return %0 : tensor<2xf32>\n"
    "}\n";

static const char *ALL_REDUCE =
    "func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
    "  %0 = \"stablehlo.all_reduce\"(%x) ({\n"
    "  ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
    "    %s = stablehlo.add %a, %b : tensor<f32>\n"
    "    stablehlo.return %s : tensor<f32>\n"
    "  }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : "
    "(tensor<2xf32>) -> tensor<2xf32>\n"
    "  return %0 : tensor<2xf32>\n"
    "}\n";

static char *exec_body(const char *program, const char *rest) {
  char *p = json_str(program), *o;
  if (asprintf(&o, "{\"program\": %s%s%s}", p, rest ? ", " : "",
               rest ? rest : "") < 0)
    o = NULL;
  free(p);
  return o;
}

static const char *ADD_INPUTS =
    "\"inputs\": [{\"dtype\": \"f32\", \"shape\": [2, 2], \"data\": [[1, 2], "
    "[3, 4]]}, {\"dtype\": \"f32\", \"shape\": [2, 2], \"data\": [0.5, "
    "\"NaN\", \"Infinity\", -1]}]";

static void sha256_id(const char *text, char out[80]) {
  unsigned char md[32];
  unsigned int n;
  EVP_Digest(text, strlen(text), md, &n, EVP_sha256(), NULL);
  strcpy(out, "sha256:");
  for (int i = 0; i < 32; i++) sprintf(out + 7 + 2 * i, "%02x", md[i]);
}

static void test_routes(const server *s) {
  resp r = http(s, "GET", "/healthz", NULL, NULL, NULL);
  CHECK(r.status == 200 && has(&r, "ok"), "healthz %ld %s", r.status, r.body);
  resp_free(&r);
  r = http(s, "GET", "/readyz", NULL, NULL, NULL);
  CHECK(r.status == 200, "readyz %ld", r.status);
  resp_free(&r);

  /* text body, no content type, program without arguments */
  r = http(s, "POST", "/execute", NULL, CONST, NULL);
  CHECK(r.status == 200, "text execute %ld %s", r.status, r.body);
  CHECK(has(&r, "\"data\":[1,-2,3]"), "i32 data: %s", r.body);
  CHECK(has(&r, "\"data\":[[1.0,2.0],[3.5,-4.0]]"), "complex data: %s", r.body);
  CHECK(has(&r, "\"cached\":false"), "first is a miss: %s", r.body);
  resp_free(&r);
  /* curl --data-binary's default content type */
  r = http(s, "POST", "/execute", "application/x-www-form-urlencoded", CONST,
           NULL);
  CHECK(r.status == 200 && has(&r, "\"cached\":true"), "cache hit: %ld %s",
        r.status, r.body);
  resp_free(&r);

  /* JSON with inputs, nested and flat data, NaN and Infinity */
  char *b = exec_body(ADD, ADD_INPUTS);
  r = post_json(s, "/execute", b);
  CHECK(r.status == 200, "json execute %ld %s", r.status, r.body);
  CHECK(has(&r, "\"data\":[1.5,\"NaN\",\"Infinity\",3.0]"), "add: %s", r.body);
  CHECK(has(&r, "\"shape\":[2,2]") && has(&r, "\"dtype\":\"f32\""), "%s", r.body);
  char id[80];
  sha256_id(ADD, id);
  CHECK(has(&r, id), "module id is sha256 of the text (%s): %s", id, r.body);
  CHECK(has(&r, "\"compile_ms\"") && has(&r, "\"execute_ms\""), "%s", r.body);
  resp_free(&r);
  r = post_json(s, "/execute", b);
  CHECK(r.status == 200 && has(&r, "\"cached\":true"), "second is a hit: %s",
        r.body);
  resp_free(&r);
  free(b);
  /* The cache finds a program by its text and grid: the same text on a
   * 2 x 1 grid is another module (a miss), "replicas": 1 the same one. */
  char *rest = malloc(strlen(ADD_INPUTS) + 32);
  sprintf(rest, "\"replicas\": 2, %s", ADD_INPUTS);
  b = exec_body(ADD, rest);
  r = post_json(s, "/execute", b);
  CHECK(r.status == 200 && has(&r, "\"cached\":false") && !has(&r, id),
        "same text, 2 x 1 grid: %ld %s", r.status, r.body);
  resp_free(&r);
  free(b);
  sprintf(rest, "\"replicas\": 1, %s", ADD_INPUTS);
  b = exec_body(ADD, rest);
  r = post_json(s, "/execute", b);
  CHECK(r.status == 200 && has(&r, "\"cached\":true") && has(&r, id),
        "same text, 1 x 1 grid: %ld %s", r.status, r.body);
  resp_free(&r);
  free(b);
  free(rest);

  /* b64 in and out: [1,2,3,4] f32 = AACAPwAAAEAAAEBAAACAQA== */
  b = exec_body(ADD, "\"inputs\": [{\"dtype\": \"f32\", \"shape\": [2, 2], "
                     "\"b64\": \"AACAPwAAAEAAAEBAAACAQA==\"}, {\"dtype\": "
                     "\"f32\", \"shape\": [2, 2], \"data\": [0, 0, 0, 0]}], "
                     "\"output_format\": \"b64\"");
  r = post_json(s, "/execute", b);
  CHECK(r.status == 200 && has(&r, "\"b64\":\"AACAPwAAAEAAAEBAAACAQA==\""),
        "b64 round trip: %ld %s", r.status, r.body);
  resp_free(&r);
  free(b);

  /* modules */
  r = http(s, "POST", "/v1/modules", "text/plain", ADD, NULL);
  CHECK(r.status == 200 && has(&r, id), "register %ld %s", r.status, r.body);
  CHECK(has(&r, "\"functions\":[{\"name\":\"main\"") &&
            has(&r, "\"inputs\":[\"tensor<2x2xf32>\",\"tensor<2x2xf32>\"]") &&
            has(&r, "\"outputs\":[\"tensor<2x2xf32>\"]"),
        "functions: %s", r.body);
  resp_free(&r);
  char path[160];
  snprintf(path, sizeof path, "/v1/modules/%s", id);
  r = http(s, "GET", path, NULL, NULL, NULL);
  CHECK(r.status == 200 && has(&r, id), "get module %ld %s", r.status, r.body);
  resp_free(&r);
  r = http(s, "GET", "/v1/modules", NULL, NULL, NULL);
  CHECK(r.status == 200 && has(&r, id), "list %ld %s", r.status, r.body);
  resp_free(&r);
  snprintf(path, sizeof path, "/v1/modules/%s/execute", id);
  char *inputs;
  if (asprintf(&inputs, "{%s}", ADD_INPUTS) < 0) abort();
  r = post_json(s, path, inputs);
  CHECK(r.status == 200 && has(&r, "\"data\":[1.5,\"NaN\",\"Infinity\",3.0]") &&
            has(&r, "\"cached\":true"),
        "module execute %ld %s", r.status, r.body);
  resp_free(&r);
  snprintf(path, sizeof path, "/v1/modules/%s", id);
  r = http(s, "DELETE", path, NULL, NULL, NULL);
  CHECK(r.status == 200, "delete %ld %s", r.status, r.body);
  resp_free(&r);
  r = http(s, "GET", path, NULL, NULL, NULL);
  CHECK(r.status == 404 && has(&r, "\"kind\":\"not_found\""), "gone %ld %s",
        r.status, r.body);
  resp_free(&r);
  snprintf(path, sizeof path, "/v1/modules/%s/execute", id);
  r = post_json(s, path, inputs);
  CHECK(r.status == 404 && has(&r, "not_found"), "execute deleted %ld %s",
        r.status, r.body);
  resp_free(&r);
  free(inputs);

  /* a 2 x 1 grid with per-process inputs and outputs */
  b = exec_body(ALL_REDUCE, "\"replicas\": 2, \"inputs\": [[{\"dtype\": "
                            "\"f32\", \"shape\": [2], \"data\": [1, 2]}], "
                            "[{\"dtype\": \"f32\", \"shape\": [2], "
                            "\"data\": [10, 20]}]]");
  r = post_json(s, "/execute", b);
  CHECK(r.status == 200 &&
            has(&r, "\"outputs\":[[{\"dtype\":\"f32\",\"shape\":[2],"
                    "\"data\":[11.0,22.0]}],[{\"dtype\":\"f32\","
                    "\"shape\":[2],\"data\":[11.0,22.0]}]]"),
        "grid: %ld %s", r.status, r.body);
  resp_free(&r);
  free(b);
  b = exec_body(ALL_REDUCE, "\"replicas\": 2, \"inputs\": [[{\"dtype\": "
                            "\"f32\", \"shape\": [2], \"data\": [1, 2]}]]");
  r = post_json(s, "/execute", b);
  CHECK(r.status == 400 && has(&r, "per-process"), "grid lists: %ld %s",
        r.status, r.body);
  resp_free(&r);
  free(b);

  r = http(s, "GET", "/metrics", NULL, NULL, NULL);
  CHECK(r.status == 200 &&
            has(&r, "shlo_http_requests_total{route=\"/execute\",status=\"200\"}") &&
            has(&r, "shlo_execution_seconds_bucket") &&
            has(&r, "shlo_cache_hits_total") && has(&r, "shlo_queue_depth") &&
            has(&r, "shlo_http_bytes_in_total"),
        "metrics %ld %s", r.status, r.body);
  resp_free(&r);
}

static void expect_error(const server *s, const char *method, const char *path,
                         const char *ctype, const char *body, long status,
                         const char *kind, const char *msg_part, int line) {
  resp r = http(s, method, path, ctype, body, NULL);
  char k[64];
  snprintf(k, sizeof k, "\"kind\":\"%s\"", kind);
  CHECK(r.status == status && has(&r, k) && (!msg_part || has(&r, msg_part)),
        "line %d: want %ld %s (%s), got %ld %s", line, status, kind,
        msg_part ? msg_part : "", r.status, r.body);
  resp_free(&r);
}
#define EXPECT_ERROR(...) expect_error(__VA_ARGS__, __LINE__)

static void test_errors(const server *s) {
  /* parse, with line and column */
  EXPECT_ERROR(s, "POST", "/execute", "text/plain",
               "func.func @main() -> tensor<f32> {\n  %0 = stablehlo.bogus 3 }",
               400, "parse", "\"line\":2");
  /* verify */
  char *b = exec_body(BAD_VERIFY, NULL);
  EXPECT_ERROR(s, "POST", "/execute", "application/json", b, 422, "verify",
               NULL);
  free(b);
  /* runtime: a failed check */
  EXPECT_ERROR(s, "POST", "/execute", NULL, CHECK_FAILS, 500, "runtime",
               NULL);
  /* input errors */
  b = exec_body(ADD, "\"inputs\": [{\"dtype\": \"f64\", \"shape\": [2, 2], "
                     "\"data\": [1, 2, 3, 4]}, {\"dtype\": \"f32\", \"shape\": "
                     "[2, 2], \"data\": [1, 2, 3, 4]}]");
  EXPECT_ERROR(s, "POST", "/execute", "application/json", b, 400, "input",
               "expected tensor<2x2xf32>, got tensor<2x2xf64>");
  free(b);
  b = exec_body(ADD, "\"inputs\": [{\"dtype\": \"f32\", \"shape\": [4], "
                     "\"data\": [1, 2, 3, 4]}, {\"dtype\": \"f32\", \"shape\": "
                     "[2, 2], \"data\": [1, 2, 3, 4]}]");
  EXPECT_ERROR(s, "POST", "/execute", "application/json", b, 400, "input",
               "inputs[0]");
  free(b);
  b = exec_body(ADD, "\"inputs\": [{\"dtype\": \"f32\", \"shape\": [2, 2], "
                     "\"data\": [1, 2, 3]}, {\"dtype\": \"f32\", \"shape\": "
                     "[2, 2], \"data\": [1, 2, 3, 4]}]");
  EXPECT_ERROR(s, "POST", "/execute", "application/json", b, 400, "input",
               "3 elements");
  free(b);
  b = exec_body(ADD, "\"inputs\": []");
  EXPECT_ERROR(s, "POST", "/execute", "application/json", b, 400, "input",
               "takes 2 inputs");
  free(b);
  b = exec_body(ADD, "\"inputs\": [{\"dtype\": \"f32\", \"shape\": [2, 2], "
                     "\"b64\": \"AAAA\"}, {\"dtype\": \"f32\", \"shape\": "
                     "[2, 2], \"data\": [1, 2, 3, 4]}]");
  EXPECT_ERROR(s, "POST", "/execute", "application/json", b, 400, "input",
               "b64");
  free(b);
  b = exec_body(ADD, "\"inputs\": [{\"dtype\": \"q7\", \"shape\": [2, 2], "
                     "\"data\": [1, 2, 3, 4]}, 5]");
  EXPECT_ERROR(s, "POST", "/execute", "application/json", b, 400, "input",
               "unknown dtype");
  free(b);
  EXPECT_ERROR(s, "POST", "/execute", "application/json",
               "{\"program\": \"func", 400, "input", "malformed JSON");
  EXPECT_ERROR(s, "POST", "/execute", "application/json", "[1, 2]", 400,
               "input", "object");
  EXPECT_ERROR(s, "POST", "/execute", "application/json",
               "{\"program\": 5}", 400, "input", "program");
  EXPECT_ERROR(s, "POST", "/execute", "text/plain", "func.func \xff\xfe", 400,
               "input", "UTF-8");
  EXPECT_ERROR(s, "POST", "/execute", "text/plain", "", 400, "input",
               "no program");
  b = exec_body(CONST, "\"entry\": \"nope\"");
  EXPECT_ERROR(s, "POST", "/execute", "application/json", b, 400, "input",
               "@nope");
  free(b);
  /* not found, method */
  EXPECT_ERROR(s, "GET", "/nowhere", NULL, NULL, 404, "not_found", NULL);
  EXPECT_ERROR(s, "GET", "/v1/modules/sha256:abc", NULL, NULL, 404,
               "not_found", NULL);
  resp r = http(s, "PUT", "/execute", NULL, NULL, NULL);
  CHECK(r.status == 405 && has(&r, "\"kind\":\"method\"") &&
            !strcmp(r.allow, "POST"),
        "405 with Allow: %ld [%s] %s", r.status, r.allow, r.body);
  resp_free(&r);
  /* timeout: a runaway while is stopped at its deadline */
  b = exec_body(LOOP, "\"timeout_ms\": 300");
  double t0 = now_s();
  EXPECT_ERROR(s, "POST", "/execute", "application/json", b, 504, "timeout",
               "deadline");
  double dt = now_s() - t0;
  CHECK(dt < 5.0, "deadline took %.2f s", dt);
  free(b);
  /* limits */
  b = exec_body(ADD, "\"inputs\": [{\"dtype\": \"f32\", \"shape\": [100000, "
                     "100000, 100000], \"data\": []}, 1]");
  EXPECT_ERROR(s, "POST", "/execute", "application/json", b, 413, "limit",
               "max-tensor-elements");
  free(b);
}

/* Raw bytes on a socket: garbage, a truncated body, a half request. */
static void raw_send(const server *s, const char *bytes, size_t n,
                     bool read_reply) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET,
                          .sin_port = htons((uint16_t)s->port),
                          .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  if (connect(fd, (struct sockaddr *)&a, sizeof a) == 0) {
    ssize_t w = write(fd, bytes, n);
    (void)w;
    if (read_reply) {
      struct timeval tv = {2, 0};
      setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
      char buf[4096];
      ssize_t r = read(fd, buf, sizeof buf);
      (void)r;
    }
  }
  close(fd);
}

static void test_hostile(const server *s) {
  const char garbage[] = "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03GARBAGE\r\n\r\n";
  raw_send(s, garbage, sizeof garbage - 1, true);
  const char *trunc = "POST /execute HTTP/1.1\r\nHost: x\r\nContent-Type: "
                      "application/json\r\nContent-Length: 1000\r\n\r\n{\"progr";
  raw_send(s, trunc, strlen(trunc), false);
  const char *half = "GET /heal";
  raw_send(s, half, strlen(half), false);
  const char *huge_hdr = "POST /execute HTTP/1.1\r\nContent-Length: "
                         "99999999999999999999\r\n\r\n";
  raw_send(s, huge_hdr, strlen(huge_hdr), true);
  const char *chunked = "POST /execute HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: "
                        "chunked\r\n\r\nZZ\r\nxx\r\n0\r\n\r\n";
  raw_send(s, chunked, strlen(chunked), true);
  resp r = http(s, "GET", "/healthz", NULL, NULL, NULL);
  CHECK(r.status == 200, "healthy after hostile bytes: %ld", r.status);
  resp_free(&r);
  r = http(s, "POST", "/execute", NULL, CONST, NULL);
  CHECK(r.status == 200, "serving after hostile bytes: %ld %s", r.status, r.body);
  resp_free(&r);
}

/* A small body limit from a config file; a full queue. */
static void test_limits(void) {
  char cfg[] = "/tmp/shlo-test-cfg-XXXXXX";
  int fd = mkstemp(cfg);
  const char *text = "# limits for the test\nmax-body-bytes 600\nmax-queue 1\n"
                     "threads 1\n";
  if (write(fd, text, strlen(text)) < 0) abort();
  close(fd);
  server s = server_start("--config", cfg, NULL);
  char big[2000];
  memset(big, ' ', sizeof big - 1);
  big[sizeof big - 1] = 0;
  EXPECT_ERROR(&s, "POST", "/execute", "text/plain", big, 413, "limit",
               "max-body-bytes");
  /* one running, one queued, the rest refused with 503 + Retry-After */
  char *b = exec_body(LOOP, "\"timeout_ms\": 1500");
  CURLM *m = curl_multi_init();
  enum { N = 5 };
  resp rs[N];
  struct curl_slist *hs[N];
  CURL *cs[N];
  for (int i = 0; i < N; i++) {
    cs[i] = req_prepare(&s, "POST", "/execute", "application/json", b,
                        strlen(b), NULL, &rs[i], &hs[i]);
    curl_multi_add_handle(m, cs[i]);
  }
  int running = 1;
  while (running) {
    curl_multi_perform(m, &running);
    curl_multi_poll(m, NULL, 0, 100, NULL);
  }
  int n503 = 0, n504 = 0;
  for (int i = 0; i < N; i++) {
    long st = 0;
    curl_easy_getinfo(cs[i], CURLINFO_RESPONSE_CODE, &st);
    if (st == 503) {
      n503++;
      CHECK(rs[i].retry_after[0] && rs[i].body && strstr(rs[i].body, "max-queue"),
            "503 names max-queue with Retry-After [%s]: %s", rs[i].retry_after,
            rs[i].body);
    }
    if (st == 504) n504++;
    curl_multi_remove_handle(m, cs[i]);
    curl_easy_cleanup(cs[i]);
    curl_slist_free_all(hs[i]);
    resp_free(&rs[i]);
  }
  curl_multi_cleanup(m);
  CHECK(n503 >= 1 && n504 >= 1 && n503 + n504 == N,
        "full queue: %d x 503, %d x 504", n503, n504);
  free(b);
  CHECK(server_stop(&s, 10) == 0, "exit 0");
  unlink(cfg);

  /* memory of one execution: inputs and results are refused up front... */
  s = server_start("--max-exec-memory", "20", NULL);
  b = exec_body(ADD, ADD_INPUTS);
  EXPECT_ERROR(&s, "POST", "/execute", "application/json", b, 413, "limit",
               "max-exec-memory");
  free(b);
  CHECK(server_stop(&s, 10) == 0, "exit 0");
  /* ...and what the program allocates while it runs (4 MB of iota under
   * a 1 MB limit, with a scalar result) is charged as it goes. */
  s = server_start("--max-exec-memory", "1m", NULL);
  EXPECT_ERROR(&s, "POST", "/execute", "text/plain",
               "func.func @main() -> tensor<f32> {\n"
               "  %x = stablehlo.iota dim = 0 : tensor<1048576xf32>\n"
               "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
               "  %s = stablehlo.reduce(%x init: %z) applies stablehlo.add "
               "across dimensions = [0] : (tensor<1048576xf32>, tensor<f32>)"
               " -> tensor<f32>\n"
               "  return %s : tensor<f32>\n}\n",
               413, "limit", "max-exec-memory");
  CHECK(server_stop(&s, 10) == 0, "exit 0");
}

static void test_auth(void) {
  char tf[] = "/tmp/shlo-test-tokens-XXXXXX";
  int fd = mkstemp(tf);
  const char *text = "# name token\nalice s3cret-alice\nbob s3cret-bob\n";
  if (write(fd, text, strlen(text)) < 0) abort();
  close(fd);
  server s = server_start("--tokens", tf, NULL);
  resp r = http(&s, "POST", "/execute", NULL, CONST, NULL);
  CHECK(r.status == 401 && has(&r, "\"kind\":\"auth\""), "no token: %ld %s",
        r.status, r.body);
  resp_free(&r);
  r = http(&s, "POST", "/execute", NULL, CONST, "wrong");
  CHECK(r.status == 401, "bad token: %ld", r.status);
  resp_free(&r);
  r = http(&s, "POST", "/execute", NULL, CONST, "s3cret-bob");
  CHECK(r.status == 200, "good token: %ld %s", r.status, r.body);
  resp_free(&r);
  r = http(&s, "GET", "/metrics", NULL, NULL, NULL);
  CHECK(r.status == 401, "metrics need a token: %ld", r.status);
  resp_free(&r);
  r = http(&s, "GET", "/healthz", NULL, NULL, NULL);
  CHECK(r.status == 200, "healthz stays open: %ld", r.status);
  resp_free(&r);
  CHECK(server_stop(&s, 10) == 0, "exit 0");
  unlink(tf);
}

/* SIGTERM while an execution runs: it finishes (or is canceled after the
 * grace period) and the server exits 0. */
static void test_shutdown(void) {
  server s = server_start("--shutdown-grace-ms", "500", NULL);
  char *b = exec_body(LOOP, "\"timeout_ms\": 30000");
  resp r;
  struct curl_slist *h;
  CURL *c = req_prepare(&s, "POST", "/execute", "application/json", b,
                        strlen(b), NULL, &r, &h);
  CURLM *m = curl_multi_init();
  curl_multi_add_handle(m, c);
  double t0 = now_s();
  int running = 1;
  bool sent = false;
  while (running) {
    curl_multi_perform(m, &running);
    curl_multi_poll(m, NULL, 0, 50, NULL);
    if (!sent && now_s() - t0 > 0.3) {
      kill(s.pid, SIGTERM);
      sent = true;
    }
  }
  long st = 0;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &st);
  CHECK(st == 503 && r.body && strstr(r.body, "shutting down"),
        "canceled at shutdown: %ld %s", st, r.body);
  int status;
  waitpid(s.pid, &status, 0);
  server_log_flush(&s);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "exit status %d",
        status);
  CHECK(now_s() - t0 < 5, "stopped in %.2f s", now_s() - t0);
  curl_multi_remove_handle(m, c);
  curl_easy_cleanup(c);
  curl_multi_cleanup(m);
  curl_slist_free_all(h);
  resp_free(&r);
  free(b);
}

int main(void) {
  curl_global_init(CURL_GLOBAL_DEFAULT);
  server s = server_start("--threads", "2", NULL);
  test_routes(&s);
  test_errors(&s);
  test_hostile(&s);
  CHECK(server_stop(&s, 10) == 0, "exit 0 on SIGTERM");
  test_limits();
  test_auth();
  test_shutdown();
  curl_global_cleanup();
  return t_report("test_server_api");
}
