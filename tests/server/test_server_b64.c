/* SPDX-License-Identifier: Apache-2.0 */
/* Large base64 tensors through a live shlo-server, the path a 64 MiB
 * round trip takes: a body several MB long (allocated once from its
 * Content-Length, or grown when sent chunked), decoded into the input
 * tensor, and an answer written over the dead body's memory.
 *  - an identity program answers the very base64 text it was sent, and
 *    negate(negate(x)) (a fresh output tensor) does too;
 *  - a bad byte in the middle, or one group too few, is a 400 naming
 *    inputs[0].b64, and the server answers correctly right after;
 *  - the same body sent chunked (no Content-Length) gives the same answer.
 * A body with a Content-Length over 4 MiB has its base64 decoded as it
 * arrives (server/src/b64_stream.h), and answers stream their base64:
 *  - JSON escapes inside the string after decoding began, the URL-safe
 *    alphabet, white space around the ':' and "b64" before "shape" all
 *    give the right tensor;
 *  - a body that breaks off after the string, or has bytes after its
 *    object, gets the same 400 as sent chunked (read whole), with the
 *    byte offset of the body as sent;
 *  - two streamed outputs (the input and its negation) come back right,
 *    with a Content-Length that libcurl holds the answer to.
 * The request's base64 is made with the protocol library, whose codec
 * test_text_codecs checks against a reference; this test checks the
 * server's plumbing around it. */
#include "harness.h"

#include "shlo/protocol.h"

/* f32 elements: a 13 MB body, over the server's 8 MB trim size (where an
 * answer reuses its body's memory) and small enough for an ASan build. */
#define N 2500001
#define STR(x) #x
#define XSTR(x) STR(x)
#define TENSOR "tensor<" XSTR(N) "xf32>"

/* {"program": P, "output_format": "b64", "inputs": [{... "b64": B64}]}. */
static char *request(const char *body_of_main, const char *b64) {
  char prog[512];
  snprintf(prog, sizeof prog,
           "func.func @main(%%x: tensor<%dxf32>) -> tensor<%dxf32> {\\n%s"
           "}\\n", N, N, body_of_main);
  size_t cap = strlen(prog) + strlen(b64) + 256;
  char *r = malloc(cap);
  snprintf(r, cap, "{\"program\": \"%s\", \"output_format\": \"b64\", "
           "\"inputs\": [{\"dtype\": \"f32\", \"shape\": [%d], \"b64\": "
           "\"%s\"}]}", prog, N, b64);
  return r;
}

/* The answer's only output carries exactly want as its base64. */
static bool answers_b64(const resp *r, const char *want) {
  const char *p = r->body ? strstr(r->body, "\"b64\":\"") : NULL;
  size_t n = strlen(want);
  return p && !strncmp(p + 7, want, n) && p[7 + n] == '"';
}

typedef struct reader {
  const char *p;
  size_t left;
} reader;

static size_t on_read(char *dst, size_t size, size_t n, void *ud) {
  reader *r = ud;
  size_t k = size * n < r->left ? size * n : r->left;
  if (k > 100000) k = 100000; /* many chunks */
  memcpy(dst, r->p, k);
  r->p += k;
  r->left -= k;
  return k;
}

/* POST body to /execute: with a Content-Length, or chunked (none).  The
 * harness's 60 s timeout is too short for a sanitizer build on a busy
 * machine; this allows 10 minutes. */
static resp post(const server *s, const char *body, bool chunked) {
  resp r;
  struct curl_slist *h;
  CURL *c = req_prepare(s, "POST", "/execute", "application/json",
                        chunked ? NULL : body, chunked ? 0 : strlen(body),
                        NULL, &r, &h);
  curl_easy_setopt(c, CURLOPT_TIMEOUT, 600L);
  if (!chunked) {
    req_perform(c, h, &r);
    return r;
  }
  h = curl_slist_append(h, "Transfer-Encoding: chunked");
  reader rd = {body, strlen(body)};
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
  curl_easy_setopt(c, CURLOPT_POST, 1L);
  curl_easy_setopt(c, CURLOPT_READFUNCTION, on_read);
  curl_easy_setopt(c, CURLOPT_READDATA, &rd);
  req_perform(c, h, &r);
  return r;
}

/* s with every '/' from byte `from` on written as the JSON escape \/. */
static char *escape_slashes(const char *s, size_t from) {
  size_t n = strlen(s);
  char *out = malloc(2 * n + 1), *o = out;
  for (size_t i = 0; i < n; i++) {
    if (i >= from && s[i] == '/') *o++ = '\\';
    *o++ = s[i];
  }
  *o = 0;
  return out;
}

/* The same tensor, spelled in ways the decoder must follow. */
static void spellings(const server *s, const char *identity,
                      const char *b64) {
  char *esc = escape_slashes(b64, 200000); /* past where decoding began */
  char *req = request(identity, esc);
  resp r = post(s, req, false);
  CHECK(r.status == 200 && answers_b64(&r, b64), "escaped: %ld %.200s",
        r.status, r.body);
  resp_free(&r);
  free(req);
  free(esc);
  char *url = strdup(b64);
  for (char *c = url; *c; c++)
    if (*c == '+' || *c == '/') *c = *c == '+' ? '-' : '_';
  req = request(identity, url);
  r = post(s, req, false);
  CHECK(r.status == 200 && answers_b64(&r, b64), "url-safe: %ld %.200s",
        r.status, r.body);
  resp_free(&r);
  free(req);
  free(url);
  /* "b64" first, white space around its ':' */
  char *full = request(identity, b64);
  const char *prog = strstr(full, "\"program\": ");
  size_t cap = strlen(full) + 64;
  req = malloc(cap);
  snprintf(req, cap, "{\"inputs\": [{\"b64\" :\n \"%s\", \"shape\": [%d], "
           "\"dtype\": \"f32\"}], \"output_format\": \"b64\", %.*s}", b64,
           N, (int)(strstr(prog, ", \"output_format\"") - prog), prog);
  r = post(s, req, false);
  CHECK(r.status == 200 && answers_b64(&r, b64), "reordered: %ld %.200s",
        r.status, r.body);
  resp_free(&r);
  free(req);
  free(full);
}

/* Bodies that do not parse: the error of the body as sent. */
static void broken_bodies(const server *s, const char *identity,
                          const char *b64) {
  char *req = request(identity, b64);
  size_t len = strlen(req);
  req[len - 1] = 0; /* no closing brace */
  resp whole = post(s, req, true), r = post(s, req, false);
  CHECK(r.status == 400 && has(&r, "malformed JSON at byte") &&
            whole.body && r.body && !strcmp(r.body, whole.body),
        "cut short: %ld %.300s, read whole %.300s", r.status, r.body,
        whole.body);
  resp_free(&r);
  resp_free(&whole);
  req[len - 1] = '}';
  char *more = malloc(len + 8);
  snprintf(more, len + 8, "%s x", req);
  char want[64];
  snprintf(want, sizeof want, "trailing bytes at byte %zu", len + 1);
  r = post(s, more, false);
  CHECK(r.status == 400 && has(&r, want), "trailing: %ld %.300s", r.status,
        r.body);
  resp_free(&r);
  free(more);
  free(req);
}

/* Two large outputs: the input and its negation. */
static void two_outputs(const server *s, const float *x, const char *b64) {
  const char *pair = "  %0 = stablehlo.negate %x : " TENSOR "\n"
                     "  return %0, %x : " TENSOR ", " TENSOR "\n";
  char prog[512];
  snprintf(prog, sizeof prog,
           "func.func @main(%%x: " TENSOR ") -> (" TENSOR ", " TENSOR
           ") {\n%s}\n", pair);
  size_t cap = strlen(prog) + strlen(b64) + 256;
  char *req = malloc(cap);
  snprintf(req, cap, "{\"program\": \"%s\", \"output_format\": \"b64\", "
           "\"inputs\": [{\"dtype\": \"f32\", \"shape\": [%d], \"b64\": "
           "\"%s\"}]}", prog, N, b64);
  float *neg = malloc((size_t)N * sizeof *neg);
  for (int i = 0; i < N; i++) neg[i] = -x[i];
  char *want = shlo_proto_b64_encode(neg, (size_t)N * sizeof *neg);
  resp r = post(s, req, false);
  const char *second = r.body ? strstr(r.body, "},{") : NULL;
  resp tail = {.body = second ? (char *)second : NULL};
  CHECK(r.status == 200 && answers_b64(&r, want) && answers_b64(&tail, b64),
        "two outputs: %ld %.200s", r.status, r.body);
  resp_free(&r);
  free(want);
  free(neg);
  free(req);
}

int main(void) {
  curl_global_init(CURL_GLOBAL_ALL);
  server s = server_start("--threads", "2", NULL);
  float *x = malloc((size_t)N * sizeof *x);
  for (int i = 0; i < N; i++) /* finite, every sign and many exponents */
    x[i] = (float)((i % 2001) - 1000) * (i % 7 ? 0.001953125f : 4096.0f);
  char *b64 = shlo_proto_b64_encode(x, (size_t)N * sizeof *x);
  const char *identity = "  return %x : " TENSOR "\\n";
  const char *twice = "  %0 = stablehlo.negate %x : " TENSOR "\\n"
                      "  %1 = stablehlo.negate %0 : " TENSOR "\\n"
                      "  return %1 : " TENSOR "\\n";
  for (int k = 0; k < 2; k++) {
    char *req = request(k ? twice : identity, b64);
    resp r = post(&s, req, false);
    CHECK(r.status == 200 && answers_b64(&r, b64), "%s: %ld %.200s",
          k ? "negate twice" : "identity", r.status, r.body);
    resp_free(&r);
    free(req);
  }

  /* Malformed: a bad byte half way, then one group short. */
  size_t len = strlen(b64);
  char *bad = strdup(b64);
  bad[len / 2] = '#';
  char *req = request(identity, bad);
  resp r = post(&s, req, false);
  CHECK(r.status == 400 && has(&r, "inputs[0].b64: not valid base64"),
        "bad byte: %ld %.300s", r.status, r.body);
  resp_free(&r);
  free(req);
  bad[len - 4] = 0;
  memcpy(bad + len / 2, b64 + len / 2, 1);
  req = request(identity, bad);
  r = post(&s, req, false);
  CHECK(r.status == 400 && has(&r, "inputs[0].b64: ") &&
            has(&r, "the shape needs 10000004"),
        "short: %ld %.300s", r.status, r.body);
  resp_free(&r);
  free(req);
  free(bad);

  /* Chunked, then once more with a Content-Length: both still right. */
  req = request(identity, b64);
  r = post(&s, req, true);
  CHECK(r.status == 200 && answers_b64(&r, b64), "chunked: %ld %.200s",
        r.status, r.body);
  resp_free(&r);
  r = post(&s, req, false);
  CHECK(r.status == 200 && answers_b64(&r, b64), "after: %ld %.200s",
        r.status, r.body);
  resp_free(&r);
  free(req);

  spellings(&s, identity, b64);
  broken_bodies(&s, identity, b64);
  two_outputs(&s, x, b64);

  CHECK(server_stop(&s, 30) == 0, "exit status");
  free(b64);
  free(x);
  curl_global_cleanup();
  return t_report("test_server_b64");
}
