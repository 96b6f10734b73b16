/* The bytes grid values cross MPI ranks as (runtime/grid_wire.h): every
 * kind of value comes back equal, quantization included, and every
 * truncation or corruption of a message is refused without a crash (the
 * reader checks every length against what arrived). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/value.h"
#include "runtime/grid_wire.h"

static shlo_value *tensor_f32(int64_t n, float base) {
  int64_t dims[2] = {2, n / 2};
  shlo_value *v = shlo_tensor_new(SHLO_F32, 2, dims);
  assert_non_null(v);
  for (int64_t i = 0; i < n; i++) ((float *)v->data)[i] = base + (float)i;
  return v;
}

static void assert_same(const shlo_value *a, const shlo_value *b) {
  assert_int_equal(a->kind, b->kind);
  if (a->kind == SHLO_TYPE_TUPLE) {
    assert_int_equal(a->n_elems, b->n_elems);
    for (int i = 0; i < a->n_elems; i++) assert_same(a->elems[i], b->elems[i]);
    return;
  }
  if (a->kind != SHLO_TYPE_TENSOR) return;
  assert_int_equal(a->elem, b->elem);
  assert_int_equal(a->rank, b->rank);
  assert_memory_equal(a->dims, b->dims, (size_t)a->rank * sizeof a->dims[0]);
  assert_int_equal(a->nbytes, b->nbytes);
  assert_memory_equal(a->data, b->data, a->nbytes);
  assert_int_equal(a->quant != NULL, b->quant != NULL);
  if (!a->quant) return;
  assert_int_equal(a->quant->n, b->quant->n);
  assert_int_equal(a->quant->storage, b->quant->storage);
  assert_int_equal(a->quant->axis, b->quant->axis);
  assert_memory_equal(a->quant->scales, b->quant->scales,
                      (size_t)a->quant->n * sizeof(double));
  assert_memory_equal(a->quant->zero_points, b->quant->zero_points,
                      (size_t)a->quant->n * sizeof(int64_t));
}

/* A tuple of a tensor, a token and a per-axis quantized tensor. */
static shlo_value *sample(void) {
  shlo_value *q = shlo_tensor_new(SHLO_SI8, 1, (int64_t[]){3});
  assert_non_null(q);
  double scales[3] = {0.5, 0.25, 2.0};
  int64_t zps[3] = {1, -2, 3};
  shlo_quant qp = {.storage = SHLO_SI8, .expressed = SHLO_F32,
                   .storage_min = -128, .storage_max = 127, .axis = 0,
                   .per_axis = true, .n = 3, .scales = scales,
                   .zero_points = zps};
  assert_int_equal(shlo_tensor_set_quant(q, &qp), SHLO_OK);
  ((int8_t *)q->data)[1] = -7;
  shlo_value *elems[3] = {tensor_f32(6, 1.5f), shlo_token_new(), q};
  shlo_value *t = shlo_tuple_new(3, elems);
  assert_non_null(t);
  return t;
}

static void test_round_trip(void **state) {
  (void)state;
  shlo_value *v = sample();
  strbuf b = {0};
  shlo__wire_i64(&b, -42);
  shlo__wire_str(&b, "a message");
  assert_true(shlo__wire_value(&b, v));
  assert_false(b.failed);
  wire_reader r = {b.data, b.data + b.len, false};
  assert_int_equal(shlo__wire_read_i64(&r), -42);
  assert_string_equal(shlo__wire_read_str(&r), "a message");
  shlo_value *back = shlo__wire_read_value(&r);
  assert_false(r.bad);
  assert_non_null(back);
  assert_ptr_equal(r.p, r.end); /* all of it read, nothing more */
  assert_same(v, back);
  shlo_value_unref(back);
  shlo_value_unref(v);
  free(b.data);
}

/* Every proper prefix of a message is refused. */
static void test_truncated(void **state) {
  (void)state;
  shlo_value *v = sample();
  strbuf b = {0};
  assert_true(shlo__wire_value(&b, v));
  for (size_t n = 0; n < b.len; n++) {
    char *copy = malloc(n + 1); /* exactly n bytes for valgrind/ASan */
    memcpy(copy, b.data, n);
    wire_reader r = {copy, copy + n, false};
    shlo_value *got = shlo__wire_read_value(&r);
    assert_null(got);
    assert_true(r.bad);
    free(copy);
  }
  shlo_value_unref(v);
  free(b.data);
}

/* Flipping any one byte never crashes; a value that still decodes is a
 * well-formed value of its own. */
static void test_corrupted(void **state) {
  (void)state;
  shlo_value *v = sample();
  strbuf b = {0};
  assert_true(shlo__wire_value(&b, v));
  for (size_t i = 0; i < b.len; i++) {
    for (int bit = 0; bit < 8; bit += 3) {
      char *copy = malloc(b.len);
      memcpy(copy, b.data, b.len);
      copy[i] ^= (char)(1 << bit);
      wire_reader r = {copy, copy + b.len, false};
      shlo_value *got = shlo__wire_read_value(&r);
      assert_true(got ? !r.bad : r.bad);
      shlo_value_unref(got);
      free(copy);
    }
  }
  shlo_value_unref(v);
  free(b.data);
}

/* Lengths that claim more than the message holds are refused before any
 * allocation of that size. */
static void test_huge_claims(void **state) {
  (void)state;
  int64_t tuple[] = {SHLO_TYPE_TUPLE, INT64_MAX / 2};
  wire_reader r = {(const char *)tuple, (const char *)(tuple + 2), false};
  assert_null(shlo__wire_read_value(&r));
  assert_true(r.bad);
  int64_t tensor[] = {SHLO_TYPE_TENSOR, SHLO_F32, 1, INT64_MAX / 4, 0};
  r = (wire_reader){(const char *)tensor, (const char *)(tensor + 5), false};
  assert_null(shlo__wire_read_value(&r));
  assert_true(r.bad);
  int64_t str[] = {INT64_MAX};
  r = (wire_reader){(const char *)str, (const char *)(str + 1), false};
  assert_string_equal(shlo__wire_read_str(&r), "");
  assert_true(r.bad);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_round_trip),
      cmocka_unit_test(test_truncated),
      cmocka_unit_test(test_corrupted),
      cmocka_unit_test(test_huge_claims),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
