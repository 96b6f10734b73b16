/* f32 lane programs (kernels/vchain.h): on every ISA variant this machine
 * can run, at every tail length, each lane op gives the bits of the
 * scalar definition the elementwise loops use (IEEE f32 arithmetic,
 * float_minmax.h's maximum and minimum, a sign flip, vmath's exp, tanh
 * and logistic), on random operands and the edge values, an operand
 * advancing or one element; a chain keeps values in the accumulator,
 * stores and reads back the others, streams an output past the caches,
 * and writes an output over an input at the same address. */
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

static const char *const isas[] = {"portable", "avx2", "avx512f"};

static float from_bits(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static const uint32_t edges[] = {
    0x00000000, 0x80000000, 0x7f800000, 0xff800000, /* +-0, +-inf */
    0x7fc00000, 0xffc00001, 0x7f800001, 0x7fa00000, /* NaNs, signalling */
    0x00000001, 0x807fffff, 0x00400000, 0x00800000, /* denormals */
    0x7f7fffff, 0xff7fffff, 0x3f800000, 0xbf800000, /* +-max, +-1 */
};

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

/* out = op(a, b) with b advancing, one element, or (one_a) a one element */
static void check_one_op(int op, int form, int n, const float *a,
                         const float *b, float *out) {
  bool bin = shlo_lane_op_binary(op);
  shlo_vchain_ins ins = {(uint8_t)op, 0, (int8_t)(bin ? 1 : SHLO_VCHAIN_ACC),
                         0};
  shlo_vchain p = {.n_ins = 1, .n_in = bin ? 2 : 1, .n_out = 1, .ins = &ins};
  p.in_one[0] = form == 2;
  p.in_one[1] = form == 1;
  void *work = work_for(&p);
  const float *in[2] = {a, b};
  memset(out, 0xa5, (size_t)(n + 1) * sizeof *out);
  shlo__vchain_run(&p, &out, in, n, work);
  for (int i = 0; i < n; i++) {
    float x = form == 2 ? a[0] : a[i], y = !bin ? 0 : form == 1 ? b[0] : b[i];
    expect_bits(out[i], ref_op(op, x, y), bin && x != x && y != y, op, i);
  }
  uint32_t past;
  memcpy(&past, &out[n], 4);
  assert_int_equal(past, 0xa5a5a5a5u); /* nothing written past n */
  free(work);
}

static void each_op_gives_its_loops_bits_on_every_variant(void **state) {
  (void)state;
  static const int lens[] = {0, 1, 15, 16, 17, 63, 64, 65, 255, 256, 257,
                             300, N};
  float *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b),
        *out = malloc((N + 1) * sizeof *out);
  assert_non_null(a);
  assert_non_null(b);
  assert_non_null(out);
  fill(a, 11);
  fill(b, 12);
  const char *best = shlo__vmath_isa();
  int variants = 0;
  for (size_t k = 0; k < sizeof isas / sizeof *isas; k++) {
    if (!shlo__vmath_use_isa(isas[k])) continue;
    variants++;
    for (int op = SHLO_LANE_ADD; op < SHLO_LANE_COUNT; op++)
      for (int form = 0; form < (shlo_lane_op_binary(op) ? 3 : 2); form++)
        for (size_t l = 0; l < sizeof lens / sizeof *lens; l++)
          for (int shift = 0; shift < 2; shift++) /* unaligned too */
            check_one_op(op, form, lens[l] - (lens[l] > 0 && shift), a + shift,
                         b + shift, out);
  }
  assert_true(variants >= 1);
  assert_true(shlo__vmath_use_isa(best));
  free(a);
  free(b);
  free(out);
}

/* gelu's shape with a value used twice and one used late:
 *   t0 = x * x; t1 = t0 * x; t2 = c * t1 (stored); t3 = x + t2;
 *   t4 = tanh t3; t5 = t4 - t2 (t2 read back); t6 = max(t5, t5) (out);
 *   t7 = exp x (over x's own array: the output at the input's address)
 * against the same ops one element at a time. */
static void a_chain_keeps_some_values_and_stores_the_rest(void **state) {
  (void)state;
  enum { ACC = SHLO_VCHAIN_ACC };
  shlo_vchain_ins ins[] = {
      {SHLO_LANE_MUL, 0, 0, -1},   {SHLO_LANE_MUL, ACC, 0, -1},
      {SHLO_LANE_MUL, 1, ACC, 0},  {SHLO_LANE_ADD, 0, ACC, -1},
      {SHLO_LANE_TANH, ACC, 0, -1}, {SHLO_LANE_SUB, ACC, 2, -1},
      {SHLO_LANE_MAX, ACC, ACC, 1}, {SHLO_LANE_EXP, 0, 0, 2},
  };
  shlo_vchain p = {.n_ins = 8, .n_in = 3, .n_out = 3, .ins = ins};
  p.in_one[1] = 1;
  p.out_stream[1] = 1; /* t6 past the caches */
  void *work = work_for(&p);
  float *x = malloc(N * sizeof *x), *x0 = malloc(N * sizeof *x0),
        *t2 = malloc(N * sizeof *t2), *t6 = malloc(N * sizeof *t6);
  assert_non_null(x);
  assert_non_null(x0);
  assert_non_null(t2);
  assert_non_null(t6);
  fill(x0, 5);
  float c = 0.044715f;
  const char *best = shlo__vmath_isa();
  for (size_t k = 0; k < sizeof isas / sizeof *isas; k++) {
    if (!shlo__vmath_use_isa(isas[k])) continue;
    for (int n = 250; n <= N; n += N - 250) {
      memcpy(x, x0, N * sizeof *x);
      const float *in[3] = {x, &c, t2};
      float *out[3] = {t2, t6, x};
      shlo__vchain_run(&p, out, in, n, work);
      shlo__stream_fence();
      for (int i = 0; i < n; i++) {
        float v = x0[i];
        float r0 = ref_op(SHLO_LANE_MUL, v, v);
        float r1 = ref_op(SHLO_LANE_MUL, r0, v);
        float r2 = ref_op(SHLO_LANE_MUL, c, r1);
        float r3 = ref_op(SHLO_LANE_ADD, v, r2);
        float r4 = ref_op(SHLO_LANE_TANH, r3, 0);
        float r5 = ref_op(SHLO_LANE_SUB, r4, r2);
        float r6 = ref_op(SHLO_LANE_MAX, r5, r5);
        float r7 = ref_op(SHLO_LANE_EXP, v, 0);
        expect_bits(t2[i], r2, r1 != r1, SHLO_LANE_MUL, i);
        expect_bits(t6[i], r6, r4 != r4 && r2 != r2, SHLO_LANE_MAX, i);
        expect_bits(x[i], r7, false, SHLO_LANE_EXP, i);
      }
      assert_memory_equal(x + n, x0 + n, (size_t)(N - n) * sizeof *x);
    }
  }
  assert_true(shlo__vmath_use_isa(best));
  free(work);
  free(x);
  free(x0);
  free(t2);
  free(t6);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(each_op_gives_its_loops_bits_on_every_variant),
      cmocka_unit_test(a_chain_keeps_some_values_and_stores_the_rest),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
