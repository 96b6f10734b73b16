/* SPDX-License-Identifier: Apache-2.0 */
/* The wire codec of protocol/PROTOCOL.md, called directly: every element
 * type survives encode -> decode (data and b64 forms), every malformed
 * tensor is refused with its own message, and the client half (request
 * builder, response and error parsers) reads what the server half writes. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/value.h"
#include "shlo/protocol.h"

/* ---- helpers ---- */

/* Decode one tensor from JSON text; returns the status, *out the value. */
static int decode_text(const char *json, const shlo_proto_limits *lim,
                       shlo_value **out, shlo_proto_error *err) {
  cJSON *j = shlo_proto_json_parse(json, strlen(json), NULL);
  assert_non_null(j);
  int rc = shlo_proto_tensor_decode(j, NULL, lim, "t", out, err);
  cJSON_Delete(j);
  return rc;
}

/* Same element values: bit-equal, or both NaN (a NaN's payload is not
 * part of the wire format). */
static void assert_same_elems(const shlo_value *a, const shlo_value *b) {
  assert_int_equal(a->elem, b->elem);
  assert_int_equal(a->rank, b->rank);
  assert_int_equal(a->numel, b->numel);
  for (int i = 0; i < a->rank; i++) assert_int_equal(a->dims[i], b->dims[i]);
  shlo_elem_class cls = shlo_elem_class_of(a->elem);
  for (int64_t i = 0; i < a->numel; i++) {
    if (cls == SHLO_CLASS_FLOAT || cls == SHLO_CLASS_COMPLEX) {
      double ar, ai, br, bi;
      shlo_tensor_get_c128(a, i, &ar, &ai);
      shlo_tensor_get_c128(b, i, &br, &bi);
      if (isnan(ar)) assert_true(isnan(br));
      else assert_memory_equal(&ar, &br, sizeof ar); /* keeps -0.0 apart */
      if (isnan(ai)) assert_true(isnan(bi));
      else assert_memory_equal(&ai, &bi, sizeof ai);
    } else {
      assert_int_equal(shlo_tensor_get_i64(a, i), shlo_tensor_get_i64(b, i));
    }
  }
}

/* Encode v (data or b64), decode it back, compare. */
static void round_trip(const shlo_value *v, bool b64) {
  char *text = shlo_proto_tensor_encode(v, b64);
  assert_non_null(text);
  assert_non_null(strstr(text, b64 ? "\"b64\":" : "\"data\":"));
  shlo_value *back = NULL;
  shlo_proto_error err;
  if (decode_text(text, NULL, &back, &err))
    fail_msg("%s: %s", text, err.message);
  assert_same_elems(v, back);
  shlo_value_unref(back);
  free(text);
}

/* A tensor of type t holding the type's hard cases. */
static shlo_value *hard_cases(shlo_elem_type t) {
  static const double floats[] = {0.0, -0.0, 1.0, -1.5, 0.1, 1.0 / 3,
                                  1e-40, 5e-324, 1.7976931348623157e308,
                                  -65504, NAN, INFINITY, -INFINITY};
  int64_t n = sizeof floats / sizeof *floats;
  shlo_value *v = shlo_tensor_new(t, 1, &n);
  assert_non_null(v);
  shlo_elem_class cls = shlo_elem_class_of(t);
  int bits = shlo_elem_bits(t);
  for (int64_t i = 0; i < n; i++) {
    if (cls == SHLO_CLASS_FLOAT) {
      shlo_tensor_set_f64(v, i, floats[i]);
    } else if (cls == SHLO_CLASS_COMPLEX) {
      double p[2] = {floats[i], floats[n - 1 - i]};
      if (t == SHLO_C64) {
        float q[2] = {(float)p[0], (float)p[1]};
        memcpy((char *)v->data + i * 8, q, sizeof q);
      } else {
        memcpy((char *)v->data + i * 16, p, sizeof p);
      }
    } else if (cls == SHLO_CLASS_BOOL) {
      shlo_tensor_set_i64(v, i, i & 1);
    } else {
      /* min, max, 0, -1 (wraps for unsigned), then small values */
      int64_t lo = cls == SHLO_CLASS_SINT
                       ? (bits == 64 ? INT64_MIN : -((int64_t)1 << (bits - 1)))
                       : 0;
      int64_t hi = cls == SHLO_CLASS_SINT
                       ? (bits == 64 ? INT64_MAX : ((int64_t)1 << (bits - 1)) - 1)
                       : (bits == 64 ? -1 /* UINT64_MAX */
                                     : ((int64_t)1 << bits) - 1);
      int64_t x = i == 0 ? lo : i == 1 ? hi : i == 2 ? 0 : i == 3 ? -1 : i;
      shlo_tensor_set_i64(v, i, x);
    }
  }
  return v;
}

/* ---- round trips ---- */

static void every_element_type_round_trips(void **state) {
  (void)state;
  for (int t = 0; t < SHLO_ELEM_COUNT; t++) {
    if (t == SHLO_INDEX) continue; /* not a wire dtype */
    shlo_value *v = hard_cases((shlo_elem_type)t);
    round_trip(v, true);
    round_trip(v, false);
    shlo_value_unref(v);
  }
}

static void extreme_integers_are_exact(void **state) {
  (void)state;
  shlo_value *v = hard_cases(SHLO_SI64);
  char *text = shlo_proto_tensor_encode(v, false);
  /* 2^63 - 1 is not a double: it must be written digit for digit. */
  assert_non_null(strstr(text, "-9223372036854775808,9223372036854775807,"));
  free(text);
  shlo_value_unref(v);
  v = hard_cases(SHLO_UI64);
  text = shlo_proto_tensor_encode(v, false);
  assert_non_null(strstr(text, "[0,18446744073709551615,0,"));
  free(text);
  shlo_value_unref(v);
}

static void expect_error(const char *json, const shlo_proto_limits *lim,
                         shlo_proto_err_kind kind, const char *needle) {
  shlo_value *v = (shlo_value *)1;
  shlo_proto_error err;
  assert_int_equal(decode_text(json, lim, &v, &err), -1);
  assert_null(v);
  assert_int_equal(err.kind, kind);
  if (!strstr(err.message, needle))
    fail_msg("%s: message \"%s\" lacks \"%s\"", json, err.message, needle);
}

/* JSON numbers beyond 2^53 decode digit for digit (cJSON alone would round
 * them through a double): 2^53 + 1, the extremes of i64 and ui64, and such
 * a token inside an f64 tensor, which reads as the nearest double. */
static void big_json_integers_decode_exactly(void **state) {
  (void)state;
  shlo_value *d;
  shlo_proto_error err;
  assert_int_equal(decode_text("{\"dtype\":\"i64\",\"shape\":[4],\"data\":"
                               "[9007199254740993,-9223372036854775808,"
                               "9223372036854775807,-9007199254740993]}",
                               NULL, &d, &err), 0);
  assert_true(shlo_tensor_get_i64(d, 0) == 9007199254740993LL);
  assert_true(shlo_tensor_get_i64(d, 1) == INT64_MIN);
  assert_true(shlo_tensor_get_i64(d, 2) == INT64_MAX);
  assert_true(shlo_tensor_get_i64(d, 3) == -9007199254740993LL);
  shlo_value_unref(d);
  assert_int_equal(decode_text("{\"dtype\":\"ui64\",\"shape\":[2],\"data\":"
                               "[18446744073709551615,9007199254740993]}",
                               NULL, &d, &err), 0);
  assert_true((uint64_t)shlo_tensor_get_i64(d, 0) == UINT64_MAX);
  assert_true(shlo_tensor_get_i64(d, 1) == 9007199254740993LL);
  shlo_value_unref(d);
  assert_int_equal(decode_text("{\"dtype\":\"f64\",\"shape\":[1],\"data\":"
                               "[18446744073709551615]}", NULL, &d, &err), 0);
  assert_true(shlo_tensor_get_f64(d, 0) == 18446744073709551616.0);
  shlo_value_unref(d);
  /* Out of range is refused, not wrapped; a fraction or exponent beyond
   * 2^53 is refused as inexact. */
  expect_error("{\"dtype\":\"i64\",\"shape\":[1],\"data\":"
               "[9223372036854775808]}", NULL, SHLO_PERR_INPUT,
               "\"9223372036854775808\" is not a i64 value");
  expect_error("{\"dtype\":\"i64\",\"shape\":[1],\"data\":[1e19]}", NULL,
               SHLO_PERR_INPUT, "beyond 2^53");
}

/* A request body with a big integer keeps error places true: the quotes
 * the exact reader adds do not shift the reported column. */
static void big_integers_keep_error_columns(void **state) {
  (void)state;
  const char *body = "{\"inputs\":[{\"dtype\":\"i64\",\"shape\":[1],"
                     "\"data\":[12345678901234567890]}] x";
  shlo_proto_exec_req req;
  shlo_proto_error err;
  assert_int_equal(shlo_proto_exec_req_parse(body, strlen(body), &req, &err),
                   -1);
  assert_int_equal(err.column, (int)(strchr(body, 'x') - body) + 1);
}

static void special_floats_are_spelled_as_strings(void **state) {
  (void)state;
  shlo_value *v = hard_cases(SHLO_F32);
  char *text = shlo_proto_tensor_encode(v, false);
  assert_non_null(strstr(text, "[0.0,-0.0,1.0,-1.5,0.1,0.33333334,"));
  assert_non_null(strstr(text, "\"NaN\",\"Infinity\",\"-Infinity\"]"));
  free(text);
  shlo_value_unref(v);
  /* Strings and numbers both decode; "nan"/"inf" spellings too. */
  shlo_value *d;
  shlo_proto_error err;
  assert_int_equal(decode_text("{\"dtype\":\"f64\",\"shape\":[4],\"data\":"
                               "[\"nan\",\"inf\",\"-inf\",-0.0]}",
                               NULL, &d, &err), 0);
  assert_true(isnan(shlo_tensor_get_f64(d, 0)));
  assert_true(shlo_tensor_get_f64(d, 1) == INFINITY);
  assert_true(shlo_tensor_get_f64(d, 2) == -INFINITY);
  assert_true(signbit(shlo_tensor_get_f64(d, 3)));
  shlo_value_unref(d);
}

static void narrow_floats_are_shortest(void **state) {
  (void)state;
  int64_t n = 2;
  shlo_value *v = shlo_tensor_new(SHLO_BF16, 1, &n);
  shlo_tensor_set_f64(v, 0, 0.1);   /* bf16 0.10009765625 */
  shlo_tensor_set_f64(v, 1, 300.0); /* exact */
  char *text = shlo_proto_tensor_encode(v, false);
  assert_string_equal(text, "{\"dtype\":\"bf16\",\"shape\":[2],"
                            "\"data\":[0.1,300.0]}");
  free(text);
  shlo_value_unref(v);
}

static void nested_lists_and_aliases_decode(void **state) {
  (void)state;
  shlo_value *a, *b;
  shlo_proto_error err;
  assert_int_equal(decode_text("{\"dtype\":\"int8\",\"shape\":[2,2],"
                               "\"data\":[[1,2],[3,-4]]}", NULL, &a, &err), 0);
  assert_int_equal(decode_text("{\"dtype\":\"i8\",\"shape\":[2,2],"
                               "\"data\":[1,2,3,-4]}", NULL, &b, &err), 0);
  assert_same_elems(a, b);
  shlo_value_unref(a);
  shlo_value_unref(b);
  /* complex: [re, im] pairs, nested; a bare number is the real part */
  assert_int_equal(decode_text("{\"dtype\":\"complex<f32>\",\"shape\":[2],"
                               "\"data\":[[1.5,-2],3]}", NULL, &a, &err), 0);
  double re, im;
  shlo_tensor_get_c128(a, 0, &re, &im);
  assert_true(re == 1.5 && im == -2);
  shlo_tensor_get_c128(a, 1, &re, &im);
  assert_true(re == 3 && im == 0);
  shlo_value_unref(a);
  /* i1 from true/false and 0/1 */
  assert_int_equal(decode_text("{\"dtype\":\"bool\",\"shape\":[3],"
                               "\"data\":[true,0,1]}", NULL, &a, &err), 0);
  assert_int_equal(shlo_tensor_get_i64(a, 0), 1);
  assert_int_equal(shlo_tensor_get_i64(a, 1), 0);
  assert_int_equal(shlo_tensor_get_i64(a, 2), 1);
  shlo_value_unref(a);
}

static void tuples_and_tokens_encode(void **state) {
  (void)state;
  shlo_value *el[2] = {shlo_tensor_new(SHLO_UI8, 0, NULL), shlo_token_new()};
  shlo_value *t = shlo_tuple_new(2, el);
  char *text = shlo_proto_tensor_encode(t, false);
  assert_string_equal(text, "{\"tuple\":[{\"dtype\":\"ui8\",\"shape\":[],"
                            "\"data\":[0]},{\"token\":true}]}");
  free(text);
  shlo_value_unref(t);
}

/* ---- errors ---- */

static void malformed_tensors_are_refused(void **state) {
  (void)state;
  const shlo_proto_err_kind IN = SHLO_PERR_INPUT;
  expect_error("{\"dtype\":\"f33\",\"shape\":[1],\"data\":[1]}", NULL, IN,
               "t.dtype: unknown dtype \"f33\"");
  expect_error("{\"dtype\":\"index\",\"shape\":[1],\"data\":[1]}", NULL, IN,
               "unknown dtype \"index\"");
  expect_error("{\"shape\":[1],\"data\":[1]}", NULL, IN,
               "t.dtype: missing or not a string");
  expect_error("{\"dtype\":\"f32\",\"data\":[1]}", NULL, IN,
               "t.shape: missing or not an array");
  expect_error("{\"dtype\":\"f32\",\"shape\":[-1],\"data\":[]}", NULL, IN,
               "t.shape[0]: not a non-negative integer");
  expect_error("{\"dtype\":\"f32\",\"shape\":[1]}", NULL, IN,
               "give exactly one of \"data\" and \"b64\"");
  expect_error("{\"dtype\":\"f32\",\"shape\":[1],\"data\":[1],\"b64\":\"\"}",
               NULL, IN, "give exactly one of");
  expect_error("[1]", NULL, IN, "t: a tensor is an object");
  expect_error("{\"dtype\":\"f32\",\"shape\":[2,2],\"data\":[1,2,3]}", NULL,
               IN, "t.data: 3 elements, the shape needs 4");
  expect_error("{\"dtype\":\"f32\",\"shape\":[2],\"data\":[1,2,3]}", NULL, IN,
               "t.data: more elements than the shape's 2");
  expect_error("{\"dtype\":\"f32\",\"shape\":[1],\"data\":[\"x\"]}", NULL, IN,
               "t.data[0]: expected a number or \"NaN\"");
  expect_error("{\"dtype\":\"i32\",\"shape\":[1],\"data\":[true]}", NULL, IN,
               "t.data[0]: expected an integer for i32");
  expect_error("{\"dtype\":\"i1\",\"shape\":[1],\"data\":[2]}", NULL, IN,
               "expected true, false, 0 or 1 for i1");
  expect_error("{\"dtype\":\"i32\",\"shape\":[2],\"data\":[1,1.5]}", NULL, IN,
               "t.data[1]: 1.5 is not a i32 value");
  expect_error("{\"dtype\":\"i8\",\"shape\":[1],\"data\":[128]}", NULL, IN,
               "128 is not a i8 value");
  expect_error("{\"dtype\":\"ui8\",\"shape\":[1],\"data\":[-1]}", NULL, IN,
               "-1 is not a ui8 value");
  expect_error("{\"dtype\":\"i64\",\"shape\":[1],"
               "\"data\":[\"9223372036854775808\"]}", NULL, IN,
               "\"9223372036854775808\" is not a i64 value");
  expect_error("{\"dtype\":\"ui4\",\"shape\":[1],\"data\":[\"16\"]}", NULL, IN,
               "\"16\" is not a ui4 value");
  expect_error("{\"dtype\":\"c64\",\"shape\":[1],\"data\":[[1,2,3]]}", NULL,
               IN, "a complex element is [re, im]");
  expect_error("{\"dtype\":\"ui8\",\"shape\":[3],\"b64\":\"AB$C\"}", NULL, IN,
               "t.b64: not valid base64");
  expect_error("{\"dtype\":\"f32\",\"shape\":[2],\"b64\":\"AAAAAA==\"}", NULL,
               IN, "t.b64: 4 bytes, the shape needs 8 (4 per element)");
  expect_error("{\"dtype\":\"f32\",\"shape\":[1],\"b64\":7}", NULL, IN,
               "t.b64: not a string");
}

static void limits_are_enforced_before_allocating(void **state) {
  (void)state;
  shlo_proto_limits lim = {.max_elements = 10, .max_bytes = 16};
  expect_error("{\"dtype\":\"i8\",\"shape\":[11],\"data\":[]}", &lim,
               SHLO_PERR_LIMIT, "limit max-tensor-elements (10) exceeded");
  expect_error("{\"dtype\":\"f64\",\"shape\":[3],\"data\":[]}", &lim,
               SHLO_PERR_LIMIT, "limit max-tensor-bytes (16) exceeded by a "
               "24-byte tensor");
  expect_error("{\"dtype\":\"i8\",\"shape\":[4294967296,4294967296,"
               "4294967296],\"data\":[]}", NULL, SHLO_PERR_LIMIT,
               "more than");
}

/* ---- the client half ---- */

static void requests_built_by_the_client_parse(void **state) {
  (void)state;
  shlo_value *in[2] = {hard_cases(SHLO_F32), hard_cases(SHLO_SI16)};
  for (int b64 = 0; b64 < 2; b64++) {
    char *body = shlo_proto_exec_req_build("func.func @f() {\n}\n\"q\"", "@f",
                                           in, 2, 250.5, b64, !b64);
    assert_non_null(body);
    shlo_proto_exec_req req;
    shlo_proto_error err;
    assert_int_equal(shlo_proto_exec_req_parse(body, strlen(body), &req, &err),
                     0);
    assert_string_equal(req.program, "func.func @f() {\n}\n\"q\"");
    assert_string_equal(req.entry, "f"); /* the '@' is dropped */
    assert_true(req.timeout_ms == 250.5);
    assert_int_equal(req.b64_out, !b64);
    assert_int_equal(cJSON_GetArraySize(req.inputs), 2);
    int i = 0;
    for (const cJSON *c = req.inputs->child; c; c = c->next, i++) {
      shlo_value *v;
      assert_int_equal(shlo_proto_tensor_decode(c, NULL, NULL, "in", &v, &err),
                       0);
      assert_same_elems(in[i], v);
      shlo_value_unref(v);
    }
    shlo_proto_exec_req_free(&req);
    free(body);
  }
  /* No program, no entry, no timeout: only "inputs". */
  char *body = shlo_proto_exec_req_build(NULL, NULL, NULL, 0, 0, false, false);
  assert_string_equal(body, "{\"inputs\":[]}");
  free(body);
  shlo_value_unref(in[0]);
  shlo_value_unref(in[1]);
}

static void responses_read_back(void **state) {
  (void)state;
  shlo_value *out[3] = {hard_cases(SHLO_F64), hard_cases(SHLO_C64),
                        hard_cases(SHLO_UI32)};
  for (int b64 = 0; b64 < 2; b64++) {
    char *body = shlo_proto_exec_resp_build(out, 3, 1, "sha256:00", true,
                                            1.5, 0.25, b64);
    assert_non_null(strstr(body, "\"module\":\"sha256:00\",\"cached\":true,"
                                 "\"timing\":{\"compile_ms\":1.5,"
                                 "\"execute_ms\":0.25}}"));
    shlo_value **got;
    int n;
    shlo_proto_error err;
    assert_int_equal(shlo_proto_exec_resp_parse(body, strlen(body), NULL, &got,
                                                &n, &err), 0);
    assert_int_equal(n, 3);
    for (int i = 0; i < 3; i++) {
      assert_same_elems(out[i], got[i]);
      shlo_value_unref(got[i]);
    }
    free(got);
    free(body);
  }
  for (int i = 0; i < 3; i++) shlo_value_unref(out[i]);
}

/* "print": true is read; "printed" is added to success and error bodies
 * alike, escaped, and a grid's per-process outputs read back flat. */
static void printed_text_and_grids(void **state) {
  (void)state;
  shlo_proto_exec_req req;
  shlo_proto_error err;
  const char *on = "{\"program\": \"x\", \"print\": true}";
  assert_int_equal(shlo_proto_exec_req_parse(on, strlen(on), &req, &err), 0);
  assert_true(req.print);
  shlo_proto_exec_req_free(&req);
  const char *bad = "{\"program\": \"x\", \"print\": 1}";
  assert_int_equal(shlo_proto_exec_req_parse(bad, strlen(bad), &req, &err), -1);
  assert_int_equal(err.kind, SHLO_PERR_INPUT);
  shlo_proto_fail(&err, SHLO_PERR_RUNTIME, "check failed");
  char *body = shlo_proto_json_add_printed(shlo_proto_error_json(&err),
                                           "tensor<i1> {\n  \"a\"\n}\n", true);
  assert_string_equal(body, "{\"error\":{\"kind\":\"runtime\",\"message\":"
                            "\"check failed\"},\"printed\":\"tensor<i1> "
                            "{\\n  \\\"a\\\"\\n}\\n\",\"printed_truncated\":true}");
  free(body);
  body = shlo_proto_json_add_printed(strdup("{}"), "x", false);
  assert_string_equal(body, "{\"printed\":\"x\"}");
  free(body);
  shlo_value *out[4] = {hard_cases(SHLO_F32), hard_cases(SHLO_SI8),
                        hard_cases(SHLO_F32), hard_cases(SHLO_SI8)};
  body = shlo_proto_exec_resp_build(out, 2, 2, NULL, false, 0, 0, false);
  shlo_value **got;
  int n;
  assert_int_equal(shlo_proto_exec_resp_parse(body, strlen(body), NULL, &got,
                                              &n, &err), 0);
  assert_int_equal(n, 4);
  for (int i = 0; i < 4; i++) {
    assert_same_elems(out[i], got[i]);
    shlo_value_unref(got[i]);
    shlo_value_unref(out[i]);
  }
  free(got);
  free(body);
}

static void errors_read_back(void **state) {
  (void)state;
  shlo_proto_error e, back;
  shlo_proto_fail(&e, SHLO_PERR_VERIFY, "op \"add\"\nfailed\t%d", 3);
  e.line = 12;
  e.column = 7;
  char *body = shlo_proto_error_json(&e);
  assert_string_equal(body, "{\"error\":{\"kind\":\"verify\",\"message\":"
                            "\"op \\\"add\\\"\\nfailed\\t3\",\"line\":12,"
                            "\"column\":7}}");
  assert_true(shlo_proto_error_parse(body, strlen(body), &back));
  assert_int_equal(back.kind, SHLO_PERR_VERIFY);
  assert_int_equal(back.http, 422);
  assert_string_equal(back.message, "op \"add\"\nfailed\t3");
  assert_int_equal(back.line, 12);
  assert_int_equal(back.column, 7);
  /* A response parser handed an error body reports that error. */
  shlo_value **got = (shlo_value **)1;
  int n = -1;
  shlo_proto_error err;
  assert_int_equal(shlo_proto_exec_resp_parse(body, strlen(body), NULL, &got,
                                              &n, &err), -1);
  assert_null(got);
  assert_int_equal(n, 0);
  assert_int_equal(err.kind, SHLO_PERR_VERIFY);
  assert_string_equal(err.message, back.message);
  free(body);
  /* Not an error body, nor a response. */
  assert_false(shlo_proto_error_parse("{\"x\":1}", 7, &back));
  assert_int_equal(shlo_proto_exec_resp_parse("{\"x\":1}", 7, NULL, &got, &n,
                                              &err), -1);
  assert_string_equal(err.message, "response has no \"outputs\"");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_element_type_round_trips),
      cmocka_unit_test(extreme_integers_are_exact),
      cmocka_unit_test(big_json_integers_decode_exactly),
      cmocka_unit_test(big_integers_keep_error_columns),
      cmocka_unit_test(special_floats_are_spelled_as_strings),
      cmocka_unit_test(narrow_floats_are_shortest),
      cmocka_unit_test(nested_lists_and_aliases_decode),
      cmocka_unit_test(tuples_and_tokens_encode),
      cmocka_unit_test(malformed_tensors_are_refused),
      cmocka_unit_test(limits_are_enforced_before_allocating),
      cmocka_unit_test(requests_built_by_the_client_parse),
      cmocka_unit_test(responses_read_back),
      cmocka_unit_test(errors_read_back),
      cmocka_unit_test(printed_text_and_grids),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
