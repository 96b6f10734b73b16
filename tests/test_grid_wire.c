/* SPDX-License-Identifier: Apache-2.0 */
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
  /* Every field the wire carries (a field not written, or two swapped,
   * must show here). */
  assert_int_equal(a->quant->n, b->quant->n);
  assert_int_equal(a->quant->storage, b->quant->storage);
  assert_int_equal(a->quant->expressed, b->quant->expressed);
  assert_int_equal(a->quant->storage_min, b->quant->storage_min);
  assert_int_equal(a->quant->storage_max, b->quant->storage_max);
  assert_int_equal(a->quant->axis, b->quant->axis);
  assert_int_equal(a->quant->per_axis, b->quant->per_axis);
  assert_int_equal(a->quant->signed_storage, b->quant->signed_storage);
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

/* A per-tensor quantized u8 tensor with a narrow storage range (min and
 * max neither symmetric nor the type's own) and a rank-3 f64 tensor: every
 * field comes back, checked against literal values as well as against the
 * original (so a field the reader and writer both get wrong shows too). */
static void test_round_trip_every_field(void **state) {
  (void)state;
  shlo_value *q = shlo_tensor_new(SHLO_UI8, 2, (int64_t[]){2, 2});
  assert_non_null(q);
  double scale = 0.125;
  int64_t zp = 7;
  shlo_quant qp = {.storage = SHLO_UI8, .expressed = SHLO_F16,
                   .storage_min = 3, .storage_max = 200, .axis = -1,
                   .per_axis = false, .n = 1, .scales = &scale,
                   .zero_points = &zp};
  assert_int_equal(shlo_tensor_set_quant(q, &qp), SHLO_OK);
  for (int i = 0; i < 4; i++) ((uint8_t *)q->data)[i] = (uint8_t)(10 * i + 3);
  shlo_value *f = shlo_tensor_new(SHLO_F64, 3, (int64_t[]){1, 3, 2});
  assert_non_null(f);
  for (int i = 0; i < 6; i++) ((double *)f->data)[i] = -1.5 * i;
  shlo_value *elems[2] = {q, f};
  shlo_value *v = shlo_tuple_new(2, elems);
  assert_non_null(v);
  strbuf b = {0};
  assert_true(shlo__wire_value(&b, v));
  wire_reader r = {b.data, b.data + b.len, false};
  shlo_value *back = shlo__wire_read_value(&r);
  assert_non_null(back);
  assert_false(r.bad);
  assert_same(v, back);
  const shlo_quant *g = back->elems[0]->quant;
  assert_non_null(g);
  assert_int_equal(g->storage, SHLO_UI8);
  assert_int_equal(g->expressed, SHLO_F16);
  assert_int_equal(g->storage_min, 3);
  assert_int_equal(g->storage_max, 200);
  assert_false(g->per_axis);
  assert_false(g->signed_storage);
  assert_int_equal(g->n, 1);
  assert_true(g->scales[0] == 0.125);
  assert_int_equal(g->zero_points[0], 7);
  assert_int_equal(back->elems[1]->elem, SHLO_F64);
  assert_int_equal(back->elems[1]->rank, 3);
  assert_int_equal(back->elems[1]->dims[1], 3);
  assert_int_equal(back->elems[1]->dims[2], 2);
  assert_true(((double *)back->elems[1]->data)[5] == -7.5);
  /* The per-axis sample's signed storage and full range. */
  shlo_value *s = sample(), *sb = NULL;
  strbuf b2 = {0};
  assert_true(shlo__wire_value(&b2, s));
  r = (wire_reader){b2.data, b2.data + b2.len, false};
  assert_non_null(sb = shlo__wire_read_value(&r));
  g = sb->elems[2]->quant;
  assert_true(g->per_axis);
  assert_int_equal(g->storage_min, -128);
  assert_int_equal(g->storage_max, 127);
  assert_int_equal(g->expressed, SHLO_F32);
  assert_int_equal(g->axis, 0);
  shlo_value_unref(sb);
  shlo_value_unref(s);
  free(b2.data);
  shlo_value_unref(back);
  shlo_value_unref(v);
  free(b.data);
}

/* The layout grid_wire.h documents, field by field: a reader on another
 * rank of another build depends on it, so the writer's bytes are compared
 * with the documented sequence, not only read back by the same code. */
static void test_layout(void **state) {
  (void)state;
  shlo_value *q = shlo_tensor_new(SHLO_SI8, 1, (int64_t[]){2});
  assert_non_null(q);
  double scales[2] = {0.5, 4.0};
  int64_t zps[2] = {-1, 2};
  shlo_quant qp = {.storage = SHLO_SI8, .expressed = SHLO_F32,
                   .storage_min = -100, .storage_max = 90, .axis = 0,
                   .per_axis = true, .n = 2, .scales = scales,
                   .zero_points = zps, .signed_storage = true};
  assert_int_equal(shlo_tensor_set_quant(q, &qp), SHLO_OK);
  ((int8_t *)q->data)[0] = 5;
  ((int8_t *)q->data)[1] = -6;
  strbuf b = {0};
  assert_true(shlo__wire_value(&b, q));
  /* kind elem rank dims | has storage expressed min max axis per_axis n
   * signed | scales zero_points | nbytes bytes */
  int64_t want[] = {SHLO_TYPE_TENSOR, SHLO_SI8, 1, 2, 1,
                    SHLO_SI8, SHLO_F32, -100, 90, 0, 1, 2, 1};
  size_t at = 0;
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++, at += 8) {
    int64_t got;
    memcpy(&got, b.data + at, 8);
    assert_int_equal(got, want[i]);
  }
  assert_memory_equal(b.data + at, scales, sizeof scales);
  at += sizeof scales;
  assert_memory_equal(b.data + at, zps, sizeof zps);
  at += sizeof zps;
  int64_t nbytes;
  memcpy(&nbytes, b.data + at, 8);
  assert_int_equal(nbytes, 2);
  at += 8;
  assert_int_equal((int8_t)b.data[at], 5);
  assert_int_equal((int8_t)b.data[at + 1], -6);
  assert_int_equal(b.len, at + 2);
  /* Read back: the signed storage (false in the other samples) too. */
  wire_reader r = {b.data, b.data + b.len, false};
  shlo_value *back = shlo__wire_read_value(&r);
  assert_non_null(back);
  assert_same(q, back);
  assert_true(back->quant->signed_storage);
  assert_true(back->quant->per_axis);
  shlo_value_unref(back);
  /* A token is its kind alone; a tuple its count, then its elements. */
  shlo_value *tok = shlo_token_new();
  shlo_value *t = shlo_tuple_new(1, &tok);
  assert_non_null(t);
  strbuf tb = {0};
  assert_true(shlo__wire_value(&tb, t));
  int64_t tw[3];
  assert_int_equal(tb.len, sizeof tw);
  memcpy(tw, tb.data, sizeof tw);
  assert_int_equal(tw[0], SHLO_TYPE_TUPLE);
  assert_int_equal(tw[1], 1);
  assert_int_equal(tw[2], SHLO_TYPE_TOKEN);
  /* A string: its length, then its bytes and a NUL. */
  strbuf sb = {0};
  shlo__wire_str(&sb, "ab");
  assert_int_equal(sb.len, 8 + 3);
  memcpy(&nbytes, sb.data, 8);
  assert_int_equal(nbytes, 2);
  assert_memory_equal(sb.data + 8, "ab", 3);
  free(sb.data);
  free(tb.data);
  shlo_value_unref(t);
  free(b.data);
  shlo_value_unref(q);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_round_trip),
      cmocka_unit_test(test_round_trip_every_field),
      cmocka_unit_test(test_layout),
      cmocka_unit_test(test_truncated),
      cmocka_unit_test(test_corrupted),
      cmocka_unit_test(test_huge_claims),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
