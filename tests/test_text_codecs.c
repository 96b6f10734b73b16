/* SPDX-License-Identifier: Apache-2.0 */
/* The byte-level codecs of the JSON route (protocol/src/b64.c and the
 * string scanner of json_read.c), whose fast loops take whole groups at a
 * time: every length and every alignment against a plain one-bit-at-a-time
 * base64 written here, a bad byte at every position of a long input
 * (inside the fast loops and at their edges), padding and white space,
 * too little room, the URL-safe alphabet; the UTF-8 check finding a bad
 * byte wherever it is; and JSON strings with escapes anywhere, including
 * a long base64 member that is read as a span. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/value.h"
#include "shlo/protocol.h"

/* ---- a reference base64, one bit at a time ---- */

static const char alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static char *ref_encode(const unsigned char *p, size_t n) {
  char *out = malloc((n + 2) / 3 * 4 + 1);
  assert_non_null(out);
  size_t o = 0, bits = n * 8;
  for (size_t b = 0; b < bits; b += 6) {
    int v = 0;
    for (size_t k = b; k < b + 6; k++) {
      int bit = k < bits ? (p[k / 8] >> (7 - k % 8)) & 1 : 0;
      v = v << 1 | bit;
    }
    out[o++] = alphabet[v];
  }
  while (o % 4) out[o++] = '=';
  out[o] = 0;
  return out;
}

/* Deterministic bytes (a xorshift), every byte value likely. */
static void fill_bytes(unsigned char *p, size_t n, uint32_t seed) {
  uint32_t x = seed * 2654435761u + 1;
  for (size_t i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    p[i] = (unsigned char)(x >> 7);
  }
}

/* ---- base64 ---- */

static void every_length_and_alignment_matches_the_reference(void **state) {
  (void)state;
  unsigned char buf[512 + 8], back[512 + 8];
  for (size_t off = 0; off < 8; off++) {
    for (size_t n = 0; n <= 200; n++) {
      unsigned char *p = buf + off;
      fill_bytes(p, n, (uint32_t)(n * 8 + off));
      char *want = ref_encode(p, n);
      char *got = shlo_proto_b64_encode(p, n);
      assert_non_null(got);
      assert_string_equal(got, want);
      /* decode into exactly n bytes of room, at an odd address too */
      unsigned char *q = back + off;
      memset(back, 0xAA, sizeof back);
      assert_int_equal(shlo_proto_b64_decode(got, strlen(got), q, n),
                       (int64_t)n);
      assert_memory_equal(q, p, n);
      assert_int_equal(q[n], 0xAA); /* nothing past the room */
      free(want);
      free(got);
    }
  }
}

static void a_large_buffer_round_trips(void **state) {
  (void)state;
  size_t n = (1u << 20) + 7;
  unsigned char *p = malloc(n), *q = malloc(n);
  assert_non_null(p);
  assert_non_null(q);
  fill_bytes(p, n, 99);
  char *text = shlo_proto_b64_encode(p, n);
  char *want = ref_encode(p, n);
  assert_string_equal(text, want);
  assert_int_equal(shlo_proto_b64_decode(text, strlen(text), q, n),
                   (int64_t)n);
  assert_memory_equal(p, q, n);
  free(p);
  free(q);
  free(text);
  free(want);
}

static void a_bad_byte_anywhere_is_refused(void **state) {
  (void)state;
  unsigned char p[96], q[96];
  fill_bytes(p, sizeof p, 5);
  char *good = shlo_proto_b64_encode(p, sizeof p); /* 128 characters */
  size_t len = strlen(good);
  const char bad[] = {'$', '"', '\\', '.', (char)0x80, (char)0xFF, 0, '*'};
  for (size_t i = 0; i < len; i++) {
    for (size_t k = 0; k < sizeof bad; k++) {
      char *t = strdup(good);
      t[i] = bad[k];
      assert_int_equal(shlo_proto_b64_decode(t, len, q, sizeof q), -1);
      free(t);
    }
  }
  free(good);
}

static void padding_and_white_space(void **state) {
  (void)state;
  unsigned char q[64];
  /* white space between groups, and inside one, is skipped */
  const char *spaced = "AAEC AwQF\nBgcI\tCQoL\r\nDA0ODxAREhMU FRYX";
  assert_int_equal(shlo_proto_b64_decode(spaced, strlen(spaced), q, sizeof q),
                   24);
  for (int i = 0; i < 24; i++) assert_int_equal(q[i], i);
  const char *split = "AAECAwQFBgcICQoL DA0ODxAREhMUFRYX";
  assert_int_equal(shlo_proto_b64_decode(split, strlen(split), q, sizeof q),
                   24);
  assert_int_equal(q[23], 23);
  /* padding ends the text: nothing but more padding may follow it */
  assert_int_equal(shlo_proto_b64_decode("AAECAw==", 8, q, sizeof q), 4);
  assert_int_equal(shlo_proto_b64_decode("AAECAwQ=", 8, q, sizeof q), 5);
  assert_int_equal(shlo_proto_b64_decode("AAECAw==AAAA", 12, q, sizeof q), -1);
  assert_int_equal(shlo_proto_b64_decode("AA==AAECAwQFBgcI", 16, q, sizeof q),
                   -1);
  /* unpadded ends are taken; a lone sextet is not a byte */
  assert_int_equal(shlo_proto_b64_decode("AAECAw", 6, q, sizeof q), 4);
  assert_int_equal(shlo_proto_b64_decode("AAECAwQ", 7, q, sizeof q), 5);
  assert_int_equal(shlo_proto_b64_decode("AAECAwQFB", 9, q, sizeof q), -1);
}

static void too_little_room_is_refused(void **state) {
  (void)state;
  unsigned char p[48], q[64];
  fill_bytes(p, sizeof p, 11);
  char *t = shlo_proto_b64_encode(p, sizeof p);
  for (size_t cap = 0; cap < sizeof p; cap++) {
    memset(q, 0xAA, sizeof q);
    assert_int_equal(shlo_proto_b64_decode(t, strlen(t), q, cap), -1);
    assert_int_equal(q[cap], 0xAA); /* and never written past it */
  }
  assert_int_equal(shlo_proto_b64_decode(t, strlen(t), q, sizeof p), 48);
  free(t);
}

static void the_url_safe_alphabet_decodes(void **state) {
  (void)state;
  unsigned char q[16];
  /* 0xFB 0xEF 0xBE repeated: "++++" / "----" ... and 0xFF*3: "////" */
  assert_int_equal(shlo_proto_b64_decode("-_-_-_-_", 8, q, sizeof q), 6);
  assert_int_equal(shlo_proto_b64_decode("+/+/+/+/", 8, q + 8, 8), 6);
  assert_memory_equal(q, q + 8, 6);
  assert_int_equal(q[0], 0xFB);
  assert_int_equal(q[1], 0xFF);
  assert_int_equal(q[2], 0xBF);
}

/* ---- UTF-8 ---- */

static void the_first_bad_utf8_byte_is_found_anywhere(void **state) {
  (void)state;
  char s[300];
  memset(s, 'a', sizeof s);
  assert_int_equal(shlo_proto_utf8_check(s, sizeof s), -1);
  for (size_t i = 0; i < sizeof s; i++) {
    memset(s, 'a', sizeof s);
    s[i] = (char)0xFF;
    assert_int_equal(shlo_proto_utf8_check(s, sizeof s), (int64_t)i);
    /* a good two-byte character there passes; cut short it does not */
    if (i + 1 < sizeof s) {
      s[i] = (char)0xC3;
      s[i + 1] = (char)0xA9;
      assert_int_equal(shlo_proto_utf8_check(s, sizeof s), -1);
      assert_int_equal(shlo_proto_utf8_check(s, i + 1), (int64_t)i);
    }
  }
}

/* ---- JSON strings ---- */

static const char *member(const cJSON *o, const char *key) {
  const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, key);
  assert_true(cJSON_IsString(j));
  return j->valuestring;
}

static void escapes_anywhere_in_a_long_string(void **state) {
  (void)state;
  size_t n = 5000;
  char *text = malloc(n + 64), *want = malloc(n + 1);
  for (size_t at = 0; at < n; at += 499) {
    size_t k = (size_t)sprintf(text, "{\"s\":\"");
    size_t w = 0;
    for (size_t i = 0; i < n; i++) {
      if (i == at || i == n - 1) {
        k += (size_t)sprintf(text + k, "\\\"");
        want[w++] = '"';
      } else if (i == at + 1) {
        k += (size_t)sprintf(text + k, "\\u0041");
        want[w++] = 'A';
      } else {
        text[k++] = 'x';
        want[w++] = 'x';
      }
    }
    want[w] = 0;
    k += (size_t)sprintf(text + k, "\"}");
    cJSON *j = shlo_proto_json_parse(text, k, NULL);
    assert_non_null(j);
    assert_string_equal(member(j, "s"), want);
    cJSON_Delete(j);
  }
  free(text);
  free(want);
}

static void malformed_strings_are_refused(void **state) {
  (void)state;
  const char *bad[] = {
      "{\"s\":\"abc",      "{\"s\":\"abc\\",   "{\"s\":\"a\\qb\"}",
      "{\"s\":\"a\\u12\"}", "{\"s\":\"a\\\"}", "{\"b64\":\"AAAA",
      "{\"b64\":\"AA\\",    "{\"s\":\"\\u00zz\"}",
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
    assert_null(shlo_proto_json_parse(bad[i], strlen(bad[i]), NULL));
  /* an escaped NUL is not one of JSON's escapes */
  const char nul[] = "{\"s\":\"a\\\0b\"}";
  assert_null(shlo_proto_json_parse(nul, sizeof nul - 1, NULL));
}

/* A long b64 member decodes into its tensor; one bad byte in it, or an
 * escape (which base64 never needs), is an error naming the member. */
static void a_long_b64_member_decodes(void **state) {
  (void)state;
  size_t n = 4 * 100003;
  unsigned char *p = malloc(n);
  fill_bytes(p, n, 3);
  char *b64 = shlo_proto_b64_encode(p, n);
  size_t tl = strlen(b64) + 128;
  char *text = malloc(tl);
  for (int variant = 0; variant < 3; variant++) {
    size_t k = (size_t)snprintf(text, tl, "{\"dtype\":\"ui32\",\"shape\":[%zu],"
                                "\"b64\":\"%s\"}", n / 4, b64);
    char *mid = strstr(text, "\"b64\":\"") + 7 + strlen(b64) / 2;
    if (variant == 1) *mid = '#';
    if (variant == 2) mid[0] = '\\', mid[1] = '/';
    cJSON *j = shlo_proto_json_parse(text, k, NULL);
    assert_non_null(j);
    shlo_value *v = NULL;
    shlo_proto_error e;
    int rc = shlo_proto_tensor_decode(j, NULL, NULL, "t", &v, &e);
    if (variant == 0) {
      assert_int_equal(rc, 0);
      assert_memory_equal(v->data, p, n);
      shlo_value_unref(v);
    } else {
      assert_int_equal(rc, -1);
      assert_non_null(strstr(e.message, "t.b64"));
    }
    cJSON_Delete(j);
  }
  free(text);
  free(b64);
  free(p);
}

/* \u escapes become UTF-8: a surrogate pair joins into one 4-byte code
 * point; a lone surrogate becomes U+FFFD. */
static void unicode_escapes_become_utf8(void **state) {
  (void)state;
  const char *text = "{\"s\":\"\\u00e9\\ud83d\\ude00\\u20ac\\udc00!\"}";
  cJSON *j = shlo_proto_json_parse(text, strlen(text), NULL);
  assert_non_null(j);
  assert_string_equal(member(j, "s"), "\xc3\xa9\xf0\x9f\x98\x80\xe2\x82\xac"
                                      "\xef\xbf\xbd!");
  cJSON_Delete(j);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_length_and_alignment_matches_the_reference),
      cmocka_unit_test(a_large_buffer_round_trips),
      cmocka_unit_test(a_bad_byte_anywhere_is_refused),
      cmocka_unit_test(padding_and_white_space),
      cmocka_unit_test(too_little_room_is_refused),
      cmocka_unit_test(the_url_safe_alphabet_decodes),
      cmocka_unit_test(the_first_bad_utf8_byte_is_found_anywhere),
      cmocka_unit_test(escapes_anywhere_in_a_long_string),
      cmocka_unit_test(unicode_escapes_become_utf8),
      cmocka_unit_test(malformed_strings_are_refused),
      cmocka_unit_test(a_long_b64_member_decodes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
