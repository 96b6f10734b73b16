/* SPDX-License-Identifier: Apache-2.0 */
/* The binary protocol codec of PROTOCOL.md part 2: every dtype's value
 * round-trips byte for byte, headers with a wrong magic, version, type,
 * reserved bit, length or size are refused with the matching kind, and
 * value headers that lie about their sizes are refused before use. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/value.h"
#include "shlo/binproto.h"

static void every_dtype_round_trips(void **state) {
  (void)state;
  for (unsigned code = 1; code <= 30; code++) {
    int et = shlo_bin_dtype_to_elem(code);
    assert_true(et >= 0);
    assert_int_equal(shlo_bin_elem_to_dtype(et), code);
    int64_t dims[2] = {3, 5};
    shlo_value *v = shlo_tensor_new((shlo_elem_type)et, 2, dims);
    for (size_t i = 0; i < v->nbytes; i++) ((unsigned char *)v->data)[i] = (unsigned char)(i * 7 + code);
    uint64_t n = shlo_bin_value_size(v);
    assert_int_equal(n % 8, 0);
    char *buf = malloc(n);
    assert_int_equal(shlo_bin_value_write(v, buf), n);
    shlo_value *back;
    uint64_t used;
    shlo_proto_error err;
    assert_int_equal(shlo_bin_value_read(buf, n, NULL, "t", &back, &used, &err), 0);
    assert_int_equal(used, n);
    assert_int_equal(back->elem, et);
    assert_int_equal(back->rank, 2);
    assert_int_equal(back->dims[1], 5);
    assert_memory_equal(back->data, v->data, v->nbytes);
    /* Every shorter buffer is "truncated", never read past. */
    for (uint64_t k = 0; k < n; k += 3) {
      shlo_value *t = (shlo_value *)1;
      assert_int_equal(shlo_bin_value_read(buf, k, NULL, "t", &t, &used, &err), -1);
      assert_null(t);
    }
    shlo_value_unref(back);
    shlo_value_unref(v);
    free(buf);
  }
  assert_int_equal(shlo_bin_dtype_to_elem(0), -1);
  assert_int_equal(shlo_bin_dtype_to_elem(31), -1);
  assert_int_equal(shlo_bin_elem_to_dtype(SHLO_INDEX), 0);
}

static void headers_are_checked(void **state) {
  (void)state;
  shlo_bin_header h;
  shlo_proto_error err;
  shlo_bin_header_init(&h, 1, SHLO_BIN_EXECUTE, 7, 64);
  assert_int_equal(shlo_bin_header_check(&h, 1, 1024, &err), 0);
  h.magic ^= 1;
  assert_int_equal(shlo_bin_header_check(&h, 1, 1024, &err), -1);
  assert_non_null(strstr(err.message, "magic"));
  shlo_bin_header_init(&h, SHLO_BIN_VERSION_MAX + 1, SHLO_BIN_EXECUTE, 7, 64);
  assert_int_equal(shlo_bin_header_check(&h, 0, 1024, &err), -1);
  assert_non_null(strstr(err.message, "version"));
  shlo_bin_header_init(&h, 1, 99, 7, 64);
  assert_int_equal(shlo_bin_header_check(&h, 1, 1024, &err), -1);
  assert_non_null(strstr(err.message, "unknown message type"));
  shlo_bin_header_init(&h, 1, SHLO_BIN_PING, 7, 64);
  h.flags = 4;
  assert_int_equal(shlo_bin_header_check(&h, 1, 1024, &err), -1);
  assert_non_null(strstr(err.message, "reserved"));
  shlo_bin_header_init(&h, 1, SHLO_BIN_PING, 7, 63);
  assert_int_equal(shlo_bin_header_check(&h, 1, 1024, &err), -1);
  assert_non_null(strstr(err.message, "multiple of 8"));
  shlo_bin_header_init(&h, 1, SHLO_BIN_PING, 7, 2048);
  assert_int_equal(shlo_bin_header_check(&h, 1, 1024, &err), -1);
  assert_int_equal(err.kind, SHLO_PERR_LIMIT);
  assert_non_null(strstr(err.message, "max-body-bytes"));
}

static void lying_value_headers_are_refused(void **state) {
  (void)state;
  shlo_proto_error err;
  int et;
  uint64_t dims[2] = {4, 4};
  shlo_bin_value h = {.dtype = 27, .rank = 2, .kind = 0, .length = 63};
  assert_int_equal(shlo_bin_value_check(&h, dims, NULL, "in", &et, &err), -1);
  assert_non_null(strstr(err.message, "63 data bytes, the shape needs 64"));
  h.length = 64;
  assert_int_equal(shlo_bin_value_check(&h, dims, NULL, "in", &et, &err), 0);
  assert_int_equal(et, SHLO_F32);
  h.reserved = 1;
  assert_int_equal(shlo_bin_value_check(&h, dims, NULL, "in", &et, &err), -1);
  h.reserved = 0;
  shlo_proto_limits lim = {.max_elements = 8};
  assert_int_equal(shlo_bin_value_check(&h, dims, &lim, "in", &et, &err), -1);
  assert_int_equal(err.kind, SHLO_PERR_LIMIT);
  uint64_t huge[2] = {UINT64_MAX / 2, 4};
  assert_int_equal(shlo_bin_value_check(&h, huge, NULL, "in", &et, &err), -1);
  h.rank = 17;
  assert_int_equal(shlo_bin_value_check(&h, dims, NULL, "in", &et, &err), -1);
  h.rank = 2;
  h.dtype = 31;
  assert_int_equal(shlo_bin_value_check(&h, dims, NULL, "in", &et, &err), -1);
}

static void error_frames_round_trip(void **state) {
  (void)state;
  shlo_proto_error e, back;
  shlo_proto_fail(&e, SHLO_PERR_VERIFY, "not implemented: %s", "op x");
  e.line = 3;
  e.column = 9;
  size_t n;
  char *f = shlo_bin_error_frame(1, 42, &e, -7, &n);
  assert_int_equal(n % 8, 0);
  shlo_bin_header h;
  memcpy(&h, f, sizeof h);
  assert_int_equal(shlo_bin_header_check(&h, 1, 0, &back), 0);
  assert_int_equal(h.id, 42);
  int es;
  assert_int_equal(shlo_bin_error_parse(f + 32, h.length, &back, &es), 0);
  assert_int_equal(back.kind, SHLO_PERR_VERIFY);
  assert_int_equal(back.line, 3);
  assert_int_equal(back.column, 9);
  assert_int_equal(es, -7);
  assert_string_equal(back.message, "not implemented: op x");
  assert_int_equal(shlo_bin_error_parse(f + 32, 23, &back, &es), -1);
  free(f);
}

/* max-tensor-elements is inclusive: a shape of exactly the limit passes,
 * one element more is refused. */
static void element_limit_is_exact(void **state) {
  (void)state;
  shlo_proto_error err;
  int et;
  uint64_t dims[2] = {3, 3};
  shlo_bin_value h = {.dtype = 27, .rank = 2, .kind = 0, .length = 36};
  shlo_proto_limits lim = {.max_elements = 9};
  assert_int_equal(shlo_bin_value_check(&h, dims, &lim, "in", &et, &err), 0);
  lim.max_elements = 8;
  assert_int_equal(shlo_bin_value_check(&h, dims, &lim, "in", &et, &err), -1);
  assert_int_equal(err.kind, SHLO_PERR_LIMIT);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_dtype_round_trips),
      cmocka_unit_test(headers_are_checked),
      cmocka_unit_test(lying_value_headers_are_refused),
      cmocka_unit_test(error_frames_round_trip),
      cmocka_unit_test(element_limit_is_exact),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
