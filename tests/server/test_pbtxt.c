/* SPDX-License-Identifier: Apache-2.0 */
/* config.pbtxt (pbtxt.h): a Triton model configuration in protobuf's text
 * format reads as the JSON that config.json would hold; text outside the
 * subset is refused with its line, never guessed at. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "pbtxt.h"

/* text as compact JSON (malloc'd), or NULL with why set. */
static char *as_json(const char *text, char *why) {
  cJSON *j = srv_pbtxt_parse(text, strlen(text), why, 256);
  char *s = j ? cJSON_PrintUnformatted(j) : NULL;
  cJSON_Delete(j);
  return s;
}

static void expect(const char *text, const char *json) {
  char why[256] = "";
  char *got = as_json(text, why);
  if (!got) fail_msg("%s: %s", text, why);
  assert_string_equal(got, json);
  free(got);
}

static void refused(const char *text, const char *word) {
  char why[256] = "";
  char *got = as_json(text, why);
  if (got) fail_msg("%s was read: %s", text, got);
  if (!strstr(why, word)) fail_msg("%s: \"%s\" lacks \"%s\"", text, why, word);
}

/* Triton's example configuration, with what this server reads. */
static void triton_config(void **state) {
  (void)state;
  expect("name: \"adder\"  # a comment\n"
         "platform: \"shlo\"\n"
         "max_batch_size: 8\n"
         "parameters { key: \"team\" value: { string_value: \"alpha\" } }\n"
         "input [\n"
         "  { name: \"a\" data_type: TYPE_FP32 dims: [ 2 ] },\n"
         "  { name: 'b', data_type: TYPE_FP32, dims: [ -1 ] }\n"
         "]\n"
         "output { name: \"out\" data_type: TYPE_FP32 dims: 2 }\n"
         "version_policy: { specific { versions: 1 } }\n"
         "dynamic_batching {\n"
         "  preferred_batch_size: [ 4, 8 ]\n"
         "  max_queue_delay_microseconds: 100;\n"
         "  preserve_ordering: true\n"
         "}\n"
         "model_warmup [{ name: \"w\" batch_size: 2 inputs {\n"
         "  key: \"a\" value: { data_type: TYPE_FP32 dims: [2] zero_data: "
         "true } }\n"
         "  inputs < key: \"b\" value < data_type: TYPE_FP32 dims: 2 "
         "random_data: false > > }]\n",
         "{\"name\":\"adder\",\"platform\":\"shlo\",\"max_batch_size\":8,"
         "\"parameters\":{\"team\":{\"string_value\":\"alpha\"}},"
         "\"input\":[{\"name\":\"a\",\"data_type\":\"TYPE_FP32\","
         "\"dims\":[2]},{\"name\":\"b\",\"data_type\":\"TYPE_FP32\","
         "\"dims\":[-1]}],"
         "\"output\":[{\"name\":\"out\",\"data_type\":\"TYPE_FP32\","
         "\"dims\":[2]}],"
         "\"version_policy\":{\"specific\":{\"versions\":[1]}},"
         "\"dynamic_batching\":{\"preferred_batch_size\":[4,8],"
         "\"max_queue_delay_microseconds\":100,\"preserve_ordering\":true},"
         "\"model_warmup\":[{\"name\":\"w\",\"batch_size\":2,\"inputs\":"
         "{\"a\":{\"data_type\":\"TYPE_FP32\",\"dims\":[2],"
         "\"zero_data\":true},\"b\":{\"data_type\":\"TYPE_FP32\","
         "\"dims\":[2],\"random_data\":false}}}]}");
  /* a field given twice is a list; an empty text an empty object */
  expect("x: 1 x: 2 y: \"a\\\"b\\\\c\\n\"", "{\"x\":[1,2],\"y\":\"a\\\"b\\\\c\\n\"}");
  expect("", "{}");
  expect("  # only a comment", "{}");
  expect("version_policy { all { } }", "{\"version_policy\":{\"all\":{}}}");
}

static void hostile_text(void **state) {
  (void)state;
  refused("name: \"open", "closing quote");
  refused("name: \"a\nb\"", "closing quote");
  refused("a { b: 1", "closing '}'");
  refused("a: 1 }", "field name");
  refused("a 1", "expected ':' or '{'");
  refused("a: [1, 2", "',' or ']'");
  refused("a: [1 2]", "',' or ']'");
  refused("a:", "missing");
  refused("a: 1.2.3", "not a number");
  refused("a: \"\\101\"", "octal");
  refused("a: \"\\x41\"", "hex");
  refused("[ext.field]: 1", "field name");
  refused("inputs { key: 1 value { } }", "map");
  refused("inputs { key: \"a\" value { } } inputs { key: \"a\" value { } }",
          "map");
  refused("a: @", "unexpected");
  refused("\n\nb: ?", ":3:");
  /* nesting: 32 levels are read, deeper is refused (no deep recursion) */
  char deep[400] = "", deeper[400] = "";
  for (int i = 0; i < 32; i++) strcat(deep, "a{");
  for (int i = 0; i < 32; i++) strcat(deep, "}");
  char why[256];
  char *got = as_json(deep, why);
  assert_non_null(got);
  free(got);
  for (int i = 0; i < 40; i++) strcat(deeper, "a{");
  refused(deeper, "deeper than 32");
  /* a NUL byte: not text */
  assert_null(srv_pbtxt_parse("a: 1\0b: 2", 9, why, sizeof why));
  assert_non_null(strstr(why, "NUL"));
}

/* Truncations and byte edits of a whole configuration: each is read or
 * refused with a reason, never more (run under the sanitizers too). */
static void edited_text(void **state) {
  (void)state;
  static const char base[] =
      "name: \"m\" max_batch_size: 4 input [ { name: 'a' dims: [ -1, 2 ] "
      "} ] dynamic_batching < preferred_batch_size: 2 > model_warmup [{ "
      "inputs { key: \"a\" value { zero_data: true } } }] # end\n";
  static const char bytes[] = "{}[]<>:;,\"'\\#\n -.1aZ_\0";
  char buf[sizeof base], why[256];
  unsigned seed = 7;
  for (int k = 0; k < 4000; k++) {
    memcpy(buf, base, sizeof base);
    size_t len = sizeof base - 1;
    for (int e = 0; e < 1 + k % 4; e++) {
      seed = seed * 1103515245u + 12345u;
      buf[(seed >> 8) % len] = bytes[(seed >> 20) % (sizeof bytes - 1)];
    }
    if (k % 3 == 0) len = (seed >> 4) % len; /* cut short */
    why[0] = 0;
    cJSON *j = srv_pbtxt_parse(buf, len, why, sizeof why);
    if (!j) assert_true(why[0] != 0);
    cJSON_Delete(j);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(triton_config),
      cmocka_unit_test(hostile_text),
      cmocka_unit_test(edited_text),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
