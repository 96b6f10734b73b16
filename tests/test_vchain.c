/* SPDX-License-Identifier: Apache-2.0 */
/* f32 lane programs (kernels/vchain.h): on every ISA variant this machine
 * can run, at every tail length, each lane op gives the bits of the
 * scalar definition the elementwise loops use (IEEE f32 arithmetic,
 * float_minmax.h's maximum and minimum, a sign flip, vmath's exp, tanh
 * and logistic), on random operands and the edge values, an operand
 * advancing or one element; a chain keeps values in the accumulator,
 * stores and reads back the others, streams an output past the caches,
 * and writes an output over an input at the same address; rows in one
 * call give the bits of a call per row. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kernels/float_minmax.h"
#include "kernels/stream_store.h"
#include "kernels/vchain.h"
#include "kernels/vmath.h"
#include "vmath_test.h"

#define N 4099 /* not a multiple of any block */

static void fill(float *x, unsigned seed) {
  srand(seed);
  for (int i = 0; i < N; i++) {
    switch (rand() % 4) {
    case 0: x[i] = from_bits(edges[rand() % 16]); break;
    case 1: x[i] = ((float)rand() / RAND_MAX - 0.5f) * 8; break;
    case 2: x[i] = (float)(rand() % 5) - 2; break; /* equal pairs */
    default: x[i] = from_bits((uint32_t)rand() * 2654435761u); break;
    }
  }
}

/* One op on one element, as the elementwise loops define it; not inlined
 * so that no multiply and add of two calls contract into an FMA. */
__attribute__((noinline)) static float ref_op(int op, float a, float b) {
  float r;
  uint32_t u;
  switch (op) {
  case SHLO_LANE_ADD: return a + b;
  case SHLO_LANE_SUB: return a - b;
  case SHLO_LANE_MUL: return a * b;
  case SHLO_LANE_DIV: return a / b;
  case SHLO_LANE_MAX: return shlo_fmaxf(a, b);
  case SHLO_LANE_MIN: return shlo_fminf(a, b);
  case SHLO_LANE_NEG:
    memcpy(&u, &a, 4);
    u ^= 0x80000000u;
    memcpy(&r, &u, 4);
    return r;
  case SHLO_LANE_ABS:
    memcpy(&u, &a, 4);
    u &= 0x7fffffffu;
    memcpy(&r, &u, 4);
    return r;
  case SHLO_LANE_SQRT: return sqrtf(a);
  case SHLO_LANE_EXP: shlo__vexp_f32(&r, &a, 1); return r;
  case SHLO_LANE_TANH: shlo__vtanh_f32(&r, &a, 1); return r;
  case SHLO_LANE_LOGISTIC: shlo__vlogistic_f32(&r, &a, 1); return r;
  default: fail_msg("op %d", op);
  }
  return 0;
}

/* got == want by bits, but of two NaN operands a binary op may keep
 * either's payload (vchain.h): then any NaN will do. */
static void expect_bits(float got, float want, bool two_nans, int op, int i) {
  if (two_nans && got != got && want != want) return;
  if (memcmp(&got, &want, 4))
    fail_msg("%s op %d element %d: %a, want %a", shlo__vmath_isa(), op, i,
             got, want);
}

static void *work_for(const shlo_vchain *p) {
  void *w = aligned_alloc(64, shlo__vchain_work_bytes(p));
  assert_non_null(w);
  return w;
}

/* out = op(a, b): form 0 both advancing, 1 b one element, 2 a one
 * element, 3 both one element; form 4: a negated first, so that the op
 * takes the accumulator, and b one element (every operand form of the
 * evaluator: vchain_body.h) */
static void check_one_op(int op, int form, int n, const float *a,
                         const float *b, float *out) {
  bool bin = shlo_lane_op_binary(op);
  shlo_vchain_ins ins[2] = {
      {(uint8_t)op, 0, (int8_t)(bin ? 1 : SHLO_VCHAIN_ACC), 0}};
  if (form == 4) {
    ins[0] = (shlo_vchain_ins){SHLO_LANE_NEG, 0, SHLO_VCHAIN_ACC, -1};
    ins[1] = (shlo_vchain_ins){(uint8_t)op, SHLO_VCHAIN_ACC, 1, 0};
  }
  shlo_vchain p = {.n_ins = form == 4 ? 2 : 1, .n_in = bin ? 2 : 1,
                   .n_out = 1, .ins = ins};
  bool one_a = form == 2 || form == 3, one_b = form == 1 || form >= 3;
  p.in_one[0] = one_a;
  p.in_one[1] = one_b;
  void *work = work_for(&p);
  const float *in[2] = {a, b};
  memset(out, 0xa5, (size_t)(n + 1) * sizeof *out);
  shlo__vchain_run(&p, &out, in, n, work);
  for (int i = 0; i < n; i++) {
    float x = one_a ? a[0] : a[i], y = !bin ? 0 : one_b ? b[0] : b[i];
    if (form == 4) x = ref_op(SHLO_LANE_NEG, x, 0);
    expect_bits(out[i], ref_op(op, x, y), bin && x != x && y != y, op, i);
  }
  uint32_t past;
  memcpy(&past, &out[n], 4);
  assert_int_equal(past, 0xa5a5a5a5u); /* nothing written past n */
  free(work);
}

typedef struct arrays {
  float *a, *b, *out;
} arrays;

static void every_op_form_and_length(void *ctx) {
  static const int lens[] = {0, 1, 15, 16, 17, 63, 64, 65, 255, 256, 257,
                             300, N};
  const arrays *t = ctx;
  for (int op = SHLO_LANE_ADD; op < SHLO_LANE_COUNT; op++)
    for (int form = 0; form < (shlo_lane_op_binary(op) ? 5 : 3); form++)
      for (size_t l = 0; l < sizeof lens / sizeof *lens; l++)
        for (int shift = 0; shift < 2; shift++) /* unaligned too */
          check_one_op(op, form, lens[l] - (lens[l] > 0 && shift),
                       t->a + shift, t->b + shift, t->out);
}

static void each_op_gives_its_loops_bits_on_every_variant(void **state) {
  (void)state;
  arrays t = {malloc(N * sizeof *t.a), malloc(N * sizeof *t.b),
              malloc((N + 1) * sizeof *t.out)};
  assert_non_null(t.a);
  assert_non_null(t.b);
  assert_non_null(t.out);
  fill(t.a, 11);
  fill(t.b, 12);
  assert_true(each_vmath_variant(every_op_form_and_length, &t) >= 1);
  free(t.a);
  free(t.b);
  free(t.out);
}

/* gelu's shape with a value used twice and one used late:
 *   t0 = x * x; t1 = t0 * x; t2 = c * t1 (stored); t3 = x + t2;
 *   t4 = tanh t3; t5 = t4 - t2 (t2 read back); t6 = max(t5, t5) (out);
 *   t7 = exp x (over x's own array: the output at the input's address)
 * against the same ops one element at a time. */
static const shlo_vchain_ins gelu_ins[] = {
    {SHLO_LANE_MUL, 0, 0, -1},
    {SHLO_LANE_MUL, SHLO_VCHAIN_ACC, 0, -1},
    {SHLO_LANE_MUL, 1, SHLO_VCHAIN_ACC, 0},
    {SHLO_LANE_ADD, 0, SHLO_VCHAIN_ACC, -1},
    {SHLO_LANE_TANH, SHLO_VCHAIN_ACC, 0, -1},
    {SHLO_LANE_SUB, SHLO_VCHAIN_ACC, 2, -1},
    {SHLO_LANE_MAX, SHLO_VCHAIN_ACC, SHLO_VCHAIN_ACC, 1},
    {SHLO_LANE_EXP, 0, 0, 2},
};

/* t0..t7 of element v, one op at a time */
static void gelu_ref(float v, float c, float *r) {
  r[0] = ref_op(SHLO_LANE_MUL, v, v);
  r[1] = ref_op(SHLO_LANE_MUL, r[0], v);
  r[2] = ref_op(SHLO_LANE_MUL, c, r[1]);
  r[3] = ref_op(SHLO_LANE_ADD, v, r[2]);
  r[4] = ref_op(SHLO_LANE_TANH, r[3], 0);
  r[5] = ref_op(SHLO_LANE_SUB, r[4], r[2]);
  r[6] = ref_op(SHLO_LANE_MAX, r[5], r[5]);
  r[7] = ref_op(SHLO_LANE_EXP, v, 0);
}

static void gelu_chain_at_two_lengths(void *ctx) {
  (void)ctx;
  shlo_vchain p = {.n_ins = 8, .n_in = 3, .n_out = 3,
                   .ins = (shlo_vchain_ins *)gelu_ins};
  p.in_one[1] = 1;
  p.out_stream[1] = 1; /* t6 past the caches */
  void *work = work_for(&p);
  float *x = malloc(N * sizeof *x), *x0 = malloc(N * sizeof *x0),
        *t2 = malloc(N * sizeof *t2), *t6 = malloc(N * sizeof *t6);
  assert_true(x && x0 && t2 && t6);
  fill(x0, 5);
  float c = 0.044715f, r[8];
  for (int n = 250; n <= N; n += N - 250) {
    memcpy(x, x0, N * sizeof *x);
    const float *in[3] = {x, &c, t2};
    float *out[3] = {t2, t6, x};
    shlo__vchain_run(&p, out, in, n, work);
    shlo__stream_fence();
    for (int i = 0; i < n; i++) {
      gelu_ref(x0[i], c, r);
      expect_bits(t2[i], r[2], false, SHLO_LANE_MUL, i);
      expect_bits(t6[i], r[6], r[4] != r[4] && r[2] != r[2], SHLO_LANE_MAX,
                  i);
      expect_bits(x[i], r[7], false, SHLO_LANE_EXP, i);
    }
    assert_memory_equal(x + n, x0 + n, (size_t)(N - n) * sizeof *x);
  }
  free(work);
  free(x);
  free(x0);
  free(t2);
  free(t6);
}

static void a_chain_keeps_some_values_and_stores_the_rest(void **state) {
  (void)state;
  assert_true(each_vmath_variant(gelu_chain_at_two_lengths, NULL) >= 1);
}

/* Rows in one call against a call per row: row r's x at a stride past
 * its n elements, a one-element input that moves a row at a time, one
 * that does not, a value stored to one scratch row (step 0) and read
 * back by the same row, the result at a stride of its own.
 *   t0 = x - m[r] (stored to scratch); t1 = t0 * c; t2 = t1 + scratch */
static const shlo_vchain_ins rows_ins[] = {
    {SHLO_LANE_SUB, 0, 1, 0},
    {SHLO_LANE_MUL, SHLO_VCHAIN_ACC, 2, -1},
    {SHLO_LANE_ADD, SHLO_VCHAIN_ACC, 3, 1},
};

static void rows_in_one_call(void *ctx) {
  (void)ctx;
  enum { ROWS = 5, PAD = 7 };
  shlo_vchain p = {.n_ins = 3, .n_in = 4, .n_out = 2,
                   .ins = (shlo_vchain_ins *)rows_ins};
  p.in_one[1] = p.in_one[2] = 1;
  void *work = work_for(&p);
  for (int n = 300; n <= 512; n += 212) {
    int64_t stride = n + PAD;
    float *x = malloc(ROWS * stride * sizeof *x), m[ROWS], c = 0.75f;
    float *scratch = malloc(n * sizeof *scratch);
    float *got = calloc(ROWS * stride, sizeof *got);
    float *want = calloc(ROWS * stride, sizeof *want);
    assert_true(x && scratch && got && want);
    for (int64_t i = 0; i < ROWS * stride; i++) x[i] = (float)(i % 97) * 0.37f;
    for (int r = 0; r < ROWS; r++) m[r] = (float)r * 1.5f;
    for (int r = 0; r < ROWS; r++) { /* a call per row */
      const float *in[4] = {x + r * stride, &m[r], &c, scratch};
      float *out[2] = {scratch, want + r * stride};
      shlo__vchain_run(&p, out, in, n, work);
    }
    const float *in[4] = {x, m, &c, scratch};
    int64_t in_step[4] = {stride * 4, 4, 0, 0};
    float *out[2] = {scratch, got};
    int64_t out_step[2] = {0, stride * 4};
    shlo__vchain_run_rows(&p, out, out_step, in, in_step, ROWS, n, work);
    assert_memory_equal(got, want, ROWS * stride * sizeof *got);
    free(x);
    free(scratch);
    free(got);
    free(want);
  }
  free(work);
}

static void rows_run_as_calls_per_row(void **state) {
  (void)state;
  assert_true(each_vmath_variant(rows_in_one_call, NULL) >= 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(each_op_gives_its_loops_bits_on_every_variant),
      cmocka_unit_test(a_chain_keeps_some_values_and_stores_the_rest),
      cmocka_unit_test(rows_run_as_calls_per_row),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
