/* SPDX-License-Identifier: Apache-2.0 */
/* Hostile bodies against a live server: valid /execute and
 * /v1/modules/{id}/execute requests with random edits (bytes changed,
 * deleted, doubled, truncated, non-UTF-8 bytes, huge numbers, odd dtypes
 * and shapes).  Every answer must be a JSON 2xx or 4xx (a 5xx only where
 * the protocol calls for one: a failed check is `runtime`), and the server
 * must still answer correctly afterwards. */
#include "harness.h"

static const char *PROGRAM =
    "func.func @main(%a: tensor<2x3xf32>, %b: tensor<3xi32>) -> "
    "(tensor<2x3xf32>, tensor<3xi32>) {\n"
    "  %0 = stablehlo.add %a, %a : tensor<2x3xf32>\n"
    "  %1 = stablehlo.multiply %b, %b : tensor<3xi32>\n"
    "  return %0, %1 : tensor<2x3xf32>, tensor<3xi32>\n}";

static const char *INPUTS =
    "[{\"dtype\": \"f32\", \"shape\": [2, 3], \"data\": [[1, 2, 3], "
    "[4, \"NaN\", -6.5]]}, {\"dtype\": \"i32\", \"shape\": [3], "
    "\"b64\": \"AQAAAAIAAAADAAAA\"}]";

static const char *const swaps[] = {
    "\"f64\"", "\"i1\"", "\"complex<f32>\"", "\"q8\"", "-1", "1e309",
    "99999999999999999999", "[]", "{}", "null", "true", "\"\\u0000\"",
    "\"\xff\xfe\"", "[[[[[[[[", "]]]]", "\"b64\": \"!!!\"", ",", ":", "\"",
    "\"shape\": [1000000, 1000000]", "\"inputs\": 5", "\"timeout_ms\": -3",
};

static char *mutate(const char *src, size_t *len_out) {
  size_t len = strlen(src);
  char *b = malloc(len * 2 + 128);
  memcpy(b, src, len);
  int edits = 1 + rand() % 4;
  for (int e = 0; e < edits && len > 0; e++) {
    size_t at = (size_t)rand() % len;
    switch (rand() % 5) {
    case 0: b[at] = (char)(rand() % 256); break;
    case 1:
      memmove(b + at, b + at + 1, len - at - 1);
      len--;
      break;
    case 2: len = at; break; /* truncated */
    default: {
      const char *w = swaps[rand() % (int)(sizeof swaps / sizeof *swaps)];
      size_t wl = strlen(w), cut = (size_t)rand() % 6;
      if (at + cut > len) cut = len - at;
      if (len - cut + wl > strlen(src) * 2 + 100) break;
      memmove(b + at + wl, b + at + cut, len - at - cut);
      memcpy(b + at, w, wl);
      len = len - cut + wl;
    }
    }
  }
  b[len] = 0;
  *len_out = len;
  return b;
}

/* An answer is acceptable when it is a 2xx, a 4xx, a 503 refusal or a
 * runtime 500 (a failed check), always with a JSON body. */
static bool acceptable(const resp *r) {
  bool code = (r->status >= 200 && r->status < 300) ||
              (r->status >= 400 && r->status < 500) || r->status == 503 ||
              (r->status == 500 && has(r, "\"runtime\""));
  return code && r->body && r->body[0] == '{';
}

int main(void) {
  curl_global_init(CURL_GLOBAL_DEFAULT);
  server s = server_start("--threads", "2", NULL);
  char *prog = json_str(PROGRAM);
  size_t cap = strlen(prog) + strlen(INPUTS) + 64;
  char *valid = malloc(cap);
  snprintf(valid, cap, "{\"program\": %s, \"inputs\": %s}", prog, INPUTS);
  resp r = post_json(&s, "/execute", valid);
  CHECK(r.status == 200 && has(&r, "[2.0,4.0,6.0,8.0,\"NaN\",-13.0]") && has(&r, "\"NaN\""),
        "the valid request works: %ld %s", r.status, r.body);
  resp_free(&r);
  srand(2024);
  int bad = 0, ok = 0, n2xx = 0, n4xx = 0;
  for (int i = 0; i < 1500; i++) {
    size_t len;
    char *body = mutate(valid, &len);
    resp q;
    struct curl_slist *h;
    CURL *c = req_prepare(&s, "POST", "/execute",
                          i % 3 ? "application/json" : NULL, body, len, NULL,
                          &q, &h);
    CURLcode rc = curl_easy_perform(c);
    if (rc == CURLE_OK) curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &q.status);
    else q.status = -(long)rc;
    if (!acceptable(&q)) {
      if (bad++ < 5)
        CHECK(false, "mutation %d got %ld: %.200s", i, q.status,
              q.body ? q.body : "(none)");
    } else {
      ok++;
      n2xx += q.status < 300;
      n4xx += q.status >= 400 && q.status < 500;
    }
    curl_easy_cleanup(c);
    curl_slist_free_all(h);
    resp_free(&q);
    free(body);
  }
  CHECK(bad == 0, "%d of 1500 mutated requests got an unacceptable answer "
        "(%d answered 2xx, %d 4xx)", bad, n2xx, n4xx);
  CHECK(n2xx > 0 && n4xx > 0, "mutations both pass and fail: %d 2xx, %d 4xx",
        n2xx, n4xx);
  r = post_json(&s, "/execute", valid);
  CHECK(r.status == 200 && has(&r, "[2.0,4.0,6.0,8.0,\"NaN\",-13.0]"),
        "still answers correctly after %d mutated requests", ok);
  resp_free(&r);
  r = http(&s, "GET", "/healthz", NULL, NULL, NULL);
  CHECK(r.status == 200, "healthy after the fuzzing");
  resp_free(&r);
  free(valid);
  free(prog);
  CHECK(server_stop(&s, 10) == 0, "exit 0 on SIGTERM");
  curl_global_cleanup();
  return t_report("test_server_fuzz");
}
