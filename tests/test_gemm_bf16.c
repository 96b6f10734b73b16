/* SPDX-License-Identifier: Apache-2.0 */
/* The bf16 GEMM on VDPBF16PS (engine/src/kernels/gemm_bf16.c) and
 * dot_general bf16 x bf16 -> f32 through it:
 * - the instruction itself adds (acc + odd product) + even product, each
 *   rounded once, and flushes subnormal inputs (what the kernel's packing
 *   order and guard rest on);
 * - on every shape (tails of m, n and k, odd k, k = 1, strides wider than
 *   the rows) each element of c is the scalar f32 sum over k in order
 *   from +0, bit for bit, and c's padding is left alone, also where
 *   the loops split k into slices and the rows into blocks (shrunk to
 *   reach every edge, and at the defaults);
 * - inputs outside the guard (subnormal, tiny, >= 2^64, inf, NaN)
 *   anywhere, the tail of an odd k included, make it decline, and the
 *   guard's edge values are taken;
 * - dot_general in the layouts a transformer's lowering gives (batched,
 *   contracting dims first or last, split over the pool) gives the same
 *   bits as that scalar sum, on every ISA variant of this machine that
 *   runs the engine's own loops, and within the f32 error bound on the
 *   others; a subnormal input gives its exact products (the widened
 *   path), not the flushed ones. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bits.h"
#include "core/value.h"
#include "kernels/gemm_bf16.h"
#include "kernels/vmath.h"
#include "shlo/engine.h"

static bool cpu_has_bf16(void) {
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") &&
         __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") &&
         __builtin_cpu_supports("avx512bf16");
#else
  return false;
#endif
}

static uint64_t rng = 88172645463325252ull;
static uint64_t rnd(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

/* A random bf16: sign, exponent within 2^-8 .. 2^8, mantissa; 1 in 16 a
 * signed zero. */
static uint16_t rand_bf16(void) {
  uint64_t r = rnd();
  uint16_t sign = (uint16_t)((r & 1) << 15);
  if ((r >> 1) % 16 == 0) return sign;
  return (uint16_t)(sign | ((119 + (r >> 8) % 17) << 7) | ((r >> 20) & 127));
}

static float bf(uint16_t h) { return f32_of((uint32_t)h << 16); }

/* The sum over k in order from +0 of the exact products. */
__attribute__((optimize("fp-contract=off"))) static float seq_dot(
    const uint16_t *a, int64_t as, const uint16_t *b, int64_t bs, int64_t k) {
  float acc = 0.0f;
  for (int64_t kk = 0; kk < k; kk++) acc += bf(a[kk * as]) * bf(b[kk * bs]);
  return acc;
}

/* ---- the instruction ---- */

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && \
    __GNUC__ >= 10
#include <immintrin.h>
#define HAVE_DP 1
/* One lane of VDPBF16PS: acc + a1 * b1 + a0 * b0 as the CPU does it. */
__attribute__((target("avx512f,avx512bf16"))) static float dp_lane(
    float acc, uint16_t a0, uint16_t a1, uint16_t b0, uint16_t b1) {
  __m512i av = _mm512_set1_epi32((int)((uint32_t)a1 << 16 | a0));
  __m512i bv = _mm512_set1_epi32((int)((uint32_t)b1 << 16 | b0));
  __m512 r = _mm512_dpbf16_ps(_mm512_set1_ps(acc), (__m512bh)av,
                              (__m512bh)bv);
  return _mm512_cvtss_f32(r);
}
#endif

__attribute__((optimize("fp-contract=off"))) static void
test_instruction_adds_odd_then_even(void **state) {
  (void)state;
  if (!cpu_has_bf16()) skip();
#ifdef HAVE_DP
  int other_orders_differ = 0;
  for (int i = 0; i < 20000; i++) {
    uint16_t a0 = rand_bf16(), a1 = rand_bf16(), b0 = rand_bf16(),
             b1 = rand_bf16();
    float acc = bf(rand_bf16());
    float p0 = bf(a0) * bf(b0), p1 = bf(a1) * bf(b1);
    float got = dp_lane(acc, a0, a1, b0, b1);
    float want = (acc + p1) + p0;
    assert_int_equal(bits32(got), bits32(want));
    if (bits32((acc + p0) + p1) != bits32(want) ||
        bits32(acc + (p0 + p1)) != bits32(want))
      other_orders_differ++;
  }
  /* the draws tell the orders apart */
  assert_true(other_orders_differ > 100);
  /* ties: 1 + 2^-24 + 2^-24 rounds twice to 1 (once, it would be
   * 1 + 2^-23) */
  assert_int_equal(bits32(dp_lane(1.0f, 0x3380, 0x3380, 0x3f80, 0x3f80)),
                   bits32(1.0f));
  /* a sum past f32's range rounds to inf, as an IEEE add does:
   * 1.5 * 2^127 + 2^63 * 2^63 */
  assert_int_equal(bits32(dp_lane(0x1.8p127f, 0, 0x5f00, 0, 0x5f00)),
                   bits32(INFINITY));
  assert_int_equal(bits32(dp_lane(-0x1.8p127f, 0, 0xdf00, 0, 0x5f00)),
                   bits32(-INFINITY));
  /* a subnormal input counts as 0 (DAZ): 2^-133 * 2^126 is 2^-7 */
  assert_int_equal(bits32(dp_lane(0.0f, 0x0001, 0, 0x7e80, 0)), 0);
  /* and a product below f32's normals gives 0 (FTZ) */
  assert_int_equal(bits32(dp_lane(0.0f, 0x0c00, 0, 0x0c00, 0)), 0);
#endif
}

/* ---- the kernel ---- */

/* c = op(a) * op(b) with padded strides against seq_dot, through the
 * serial or the split entry point; the padding past each stored row
 * holds values the guard refuses, never read. */
static void check_shape(bool ta, bool tb, int64_t m, int64_t n, int64_t k,
                        bool split) {
  int64_t a_rows = ta ? k : m, a_cols = ta ? m : k;
  int64_t b_rows = tb ? n : k, b_cols = tb ? k : n;
  int64_t lda = a_cols + 3, ldb = b_cols + 5, ldc = n + 2;
  uint16_t *a = malloc(sizeof(uint16_t) * (size_t)(a_rows * lda));
  uint16_t *b = malloc(sizeof(uint16_t) * (size_t)(b_rows * ldb));
  float *c = malloc(sizeof(float) * (size_t)(m * ldc));
  assert_true(a && b && c);
  for (int64_t i = 0; i < a_rows * lda; i++)
    a[i] = i % lda < a_cols ? rand_bf16() : 0x0001;
  for (int64_t i = 0; i < b_rows * ldb; i++)
    b[i] = i % ldb < b_cols ? rand_bf16() : 0x7f80;
  for (int64_t i = 0; i < m * ldc; i++) c[i] = -77.0f;
  int r = split ? shlo__gemm_bf16(ta, tb, m, n, k, a, lda, b, ldb, c, ldc)
                : shlo__gemm_bf16_serial(ta, tb, m, n, k, a, lda, b, ldb, c,
                                         ldc);
  assert_int_equal(r, 1);
  for (int64_t i = 0; i < m; i++) {
    for (int64_t j = 0; j < n; j++) {
      float want = seq_dot(ta ? a + i : a + i * lda, ta ? lda : 1,
                           tb ? b + j * ldb : b + j, tb ? 1 : ldb, k);
      if (bits32(c[i * ldc + j]) != bits32(want))
        fail_msg("%d%d %lldx%lldx%lld: c[%lld][%lld] = %a, want %a", ta, tb,
                 (long long)m, (long long)n, (long long)k, (long long)i,
                 (long long)j, (double)c[i * ldc + j], (double)want);
    }
    for (int64_t j = n; j < ldc; j++) assert_true(c[i * ldc + j] == -77.0f);
  }
  free(a), free(b), free(c);
}

static void test_kernel_every_tail(void **state) {
  (void)state;
  if (!shlo__gemm_bf16_available()) skip();
  static const int64_t ms[] = {1, 2, 5, 6, 7, 13, 17};
  static const int64_t ns[] = {1, 15, 16, 17, 64, 65, 130};
  static const int64_t ks[] = {1, 2, 3, 7, 32, 33, 64, 129};
  for (int form = 0; form < 4; form++)
    for (size_t i = 0; i < sizeof ms / sizeof *ms; i++)
      for (size_t j = 0; j < sizeof ns / sizeof *ns; j++)
        for (size_t l = 0; l < sizeof ks / sizeof *ks; l++)
          check_shape(form & 1, form & 2, ms[i], ns[j], ks[l], false);
}

static void test_kernel_split_over_pool(void **state) {
  (void)state;
  if (!shlo__gemm_bf16_available()) skip();
  for (int form = 0; form < 4; form++) {
    check_shape(form & 1, form & 2, 70, 300, 33, true);  /* by columns */
    check_shape(form & 1, form & 2, 301, 40, 65, true);  /* by rows */
    check_shape(form & 1, form & 2, 128, 128, 64, true); /* attention */
  }
}

/* The loops over slices of k and blocks of rows, shrunk so that small
 * shapes reach every edge: a slice boundary at, just before and just
 * after a pair, an odd k ending in a short last slice, blocks of rows
 * that end in a tail of 1 to 5, a block height that is not a multiple of
 * 6, a slice of a single pair; plain and transposed, serial and split.
 * A later slice starts from the partial sums in c, so every element must
 * still be the one sum over k in order from +0. */
static void test_kernel_small_blocks(void **state) {
  (void)state;
  if (!shlo__gemm_bf16_available()) skip();
  static const int64_t blocks[][2] = {{4, 6}, {1, 7}, {3, 12}, {5, 1}};
  static const int64_t ms[] = {1, 5, 6, 7, 12, 13, 25};
  static const int64_t ks[] = {1, 7, 8, 9, 15, 16, 17, 33};
  for (size_t bl = 0; bl < sizeof blocks / sizeof *blocks; bl++) {
    shlo__gemm_bf16_set_blocking(blocks[bl][0], blocks[bl][1]);
    for (int form = 0; form < 4; form++)
      for (size_t i = 0; i < sizeof ms / sizeof *ms; i++)
        for (size_t l = 0; l < sizeof ks / sizeof *ks; l++)
          check_shape(form & 1, form & 2, ms[i], 65, ks[l], false);
    for (int form = 0; form < 4; form++) {
      check_shape(form & 1, form & 2, 70, 300, 33, true);
      check_shape(form & 1, form & 2, 301, 40, 65, true);
      check_shape(form & 1, form & 2, 5, 1300, 41, true); /* by panels */
    }
  }
  shlo__gemm_bf16_set_blocking(0, 0);
}

/* The default blocks (1536 pairs of k, 48 rows): k at a slice's end
 * (3072), one element past it (3073, odd: a last slice of one lone
 * element) and one pair past it (3074); rows at a block's end (48) and
 * past it (49, 97). */
static void test_kernel_default_blocks(void **state) {
  (void)state;
  if (!shlo__gemm_bf16_available()) skip();
  shlo__gemm_bf16_set_blocking(0, 0);
  for (int form = 0; form < 4; form++) {
    check_shape(form & 1, form & 2, 48, 17, 3072, false);
    check_shape(form & 1, form & 2, 49, 65, 3073, false);
    check_shape(form & 1, form & 2, 97, 16, 3074, false);
  }
}

/* A value outside the guard in a later slice of k or a later block of
 * rows still declines the call (a is packed by blocks as it is used). */
static int with_value(uint16_t v, bool in_a, int64_t pos, int form);

static void test_kernel_guard_in_later_blocks(void **state) {
  (void)state;
  if (!shlo__gemm_bf16_available()) skip();
  shlo__gemm_bf16_set_blocking(2, 2);
  for (int form = 0; form < 4; form++)
    for (int64_t pos = 0; pos < 7 * 9; pos += 4) {
      assert_int_equal(with_value(0x7f80, true, pos, form), 0);
      assert_int_equal(with_value(0x0001, true, pos, form), 0);
      assert_int_equal(with_value(0xffc0, false, pos * 3, form), 0);
      assert_int_equal(with_value(0x3f80, true, pos, form), 1);
    }
  shlo__gemm_bf16_set_blocking(0, 0);
}

/* Sums of -0 products are +0, as the scalar chain from +0 gives. */
static void test_kernel_zero_sign(void **state) {
  (void)state;
  if (!shlo__gemm_bf16_available()) skip();
  uint16_t a[3] = {0x8000, 0x3f80, 0x8000}, b[3 * 16];
  for (int i = 0; i < 3 * 16; i++) b[i] = (i / 16) == 1 ? 0x8000 : 0x3f80;
  float c[16];
  assert_int_equal(shlo__gemm_bf16_serial(false, false, 1, 16, 3, a, 3, b, 16, c, 16), 1);
  for (int j = 0; j < 16; j++) assert_int_equal(bits32(c[j]), 0);
}

/* One value v at position pos of a or of b, each stored plain or
 * transposed: whether the kernel takes it. */
static int with_value(uint16_t v, bool in_a, int64_t pos, int form) {
  enum { M = 7, N = 19, K = 9 };
  bool ta = form & 1, tb = form & 2;
  uint16_t a[M * K], b[K * N];
  float c[M * N];
  for (int i = 0; i < M * K; i++) a[i] = rand_bf16();
  for (int i = 0; i < K * N; i++) b[i] = rand_bf16();
  if (in_a) a[pos % (M * K)] = v;
  else b[pos % (K * N)] = v;
  return shlo__gemm_bf16_serial(ta, tb, M, N, K, a, ta ? M : K, b,
                                tb ? K : N, c, N);
}

static void test_kernel_guard(void **state) {
  (void)state;
  if (!shlo__gemm_bf16_available()) skip();
  /* refused: subnormals, below 2^-50, 2^64 and above, inf, NaN */
  static const uint16_t refused[] = {0x0001, 0x007f, 0x0080, 0x25ff,
                                     0x2600, 0x5f80, 0x7f7f, 0x7f80,
                                     0x7fc0, 0x7f81, 0xffc0};
  /* taken: zeros and the range's edges 2^-50 and just below 2^64 */
  static const uint16_t taken[] = {0x0000, 0x8000, 0x2680, 0xa680, 0x5f7f,
                                   0xdf7f, 0x3f80};
  /* ends of rows, the last row and the odd k's lone halves of pairs in
   * each form (a's 8 and 62, b's 8, 170 and 189 among them) */
  static const int64_t where[] = {0, 8, 62, 5, 18, 170, 189, 53};
  for (int form = 0; form < 4; form++)
    for (size_t w = 0; w < sizeof where / sizeof *where; w++)
      for (int side = 0; side < 2; side++) {
        for (size_t i = 0; i < sizeof refused / sizeof *refused; i++)
          assert_int_equal(with_value(refused[i], side, where[w], form), 0);
        for (size_t i = 0; i < sizeof taken / sizeof *taken; i++)
          assert_int_equal(with_value(taken[i], side, where[w], form), 1);
      }
  /* the edge values give exact sums */
  uint16_t a[2] = {0x2680, 0x5f7f}, b[2] = {0x2680, 0x5f7f};
  float c;
  assert_int_equal(shlo__gemm_bf16_serial(false, false, 1, 1, 2, a, 2, b, 1, &c, 1), 1);
  assert_int_equal(bits32(c), bits32(seq_dot(a, 1, b, 1, 2)));
}

/* ---- dot_general ---- */

typedef struct dot_case {
  const char *text;         /* the program: @main(%a, %b) */
  int lrank, rrank;
  int64_t ldims[4], rdims[4];
  /* result element (b0, b1, i, j) sums lhs[lidx] * rhs[ridx] over kk;
   * index(kind, b0, b1, i, j, kk) gives the flat operand indices */
  int64_t nb0, nb1, m, n, k;
  int64_t (*lidx)(const int64_t *d, int64_t b0, int64_t b1, int64_t i,
                  int64_t kk);
  int64_t (*ridx)(const int64_t *d, int64_t b0, int64_t b1, int64_t j,
                  int64_t kk);
  bool doubled; /* the program returns r + r: fused, run on each block */
} dot_case;

/* the attention's scores: [b, s, h, d] x [b, s, h, d], batch (0, 2),
 * contracting 3 -> [b, h, s, s] */
static int64_t att_l(const int64_t *d, int64_t b0, int64_t b1, int64_t i,
                     int64_t kk) {
  return ((b0 * d[1] + i) * d[2] + b1) * d[3] + kk;
}
/* the attention's output: [b, s, h, d] contracting 1 (s) with
 * [b, h, q, s] contracting 3 -> [b, h, d, q] */
static int64_t out_l(const int64_t *d, int64_t b0, int64_t b1, int64_t i,
                     int64_t kk) {
  return ((b0 * d[1] + kk) * d[2] + b1) * d[3] + i;
}
static int64_t out_r(const int64_t *d, int64_t b0, int64_t b1, int64_t j,
                     int64_t kk) {
  return ((b0 * d[1] + b1) * d[2] + j) * d[3] + kk;
}
/* a plain [m, k] x [k, n] (batch dims of extent 1) */
static int64_t mat_l(const int64_t *d, int64_t b0, int64_t b1, int64_t i,
                     int64_t kk) {
  (void)b0, (void)b1;
  return i * d[1] + kk;
}
static int64_t mat_r(const int64_t *d, int64_t b0, int64_t b1, int64_t j,
                     int64_t kk) {
  (void)b0, (void)b1;
  return kk * d[1] + j;
}
/* [n, k]: b transposed */
static int64_t matt_r(const int64_t *d, int64_t b0, int64_t b1, int64_t j,
                      int64_t kk) {
  (void)b0, (void)b1;
  return j * d[1] + kk;
}
/* [B, m, k] x [k, n]: the layer's projections */
static int64_t proj_l(const int64_t *d, int64_t b0, int64_t b1, int64_t i,
                      int64_t kk) {
  (void)b1;
  return (b0 * d[1] + i) * d[2] + kk;
}

static const dot_case cases[] = {
    {"func.func @main(%a: tensor<2x13x3x9xbf16>, %b: tensor<2x13x3x9xbf16>)"
     " -> tensor<2x3x13x13xf32> {\n"
     "  %r = stablehlo.dot_general %a, %b, batching_dims = [0, 2] x [0, 2],"
     " contracting_dims = [3] x [3] : (tensor<2x13x3x9xbf16>,"
     " tensor<2x13x3x9xbf16>) -> tensor<2x3x13x13xf32>\n"
     "  func.return %r : tensor<2x3x13x13xf32>\n}\n",
     4, 4, {2, 13, 3, 9}, {2, 13, 3, 9}, 2, 3, 13, 13, 9, att_l, att_l, false},
    {"func.func @main(%a: tensor<2x13x3x9xbf16>, %b: tensor<2x3x11x13xbf16>)"
     " -> tensor<2x3x9x11xf32> {\n"
     "  %r = stablehlo.dot_general %a, %b, batching_dims = [0, 2] x [0, 1],"
     " contracting_dims = [1] x [3] : (tensor<2x13x3x9xbf16>,"
     " tensor<2x3x11x13xbf16>) -> tensor<2x3x9x11xf32>\n"
     "  func.return %r : tensor<2x3x9x11xf32>\n}\n",
     4, 4, {2, 13, 3, 9}, {2, 3, 11, 13}, 2, 3, 9, 11, 13, out_l, out_r, false},
    {"func.func @main(%a: tensor<37x71xbf16>, %b: tensor<71x130xbf16>)"
     " -> tensor<37x130xf32> {\n"
     "  %r = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0]"
     " : (tensor<37x71xbf16>, tensor<71x130xbf16>) -> tensor<37x130xf32>\n"
     "  func.return %r : tensor<37x130xf32>\n}\n",
     2, 2, {37, 71}, {71, 130}, 1, 1, 37, 130, 71, mat_l, mat_r, false},
    {"func.func @main(%a: tensor<37x71xbf16>, %b: tensor<130x71xbf16>)"
     " -> tensor<37x130xf32> {\n"
     "  %r = stablehlo.dot_general %a, %b, contracting_dims = [1] x [1],"
     " precision = [DEFAULT, DEFAULT] : (tensor<37x71xbf16>,"
     " tensor<130x71xbf16>) -> tensor<37x130xf32>\n"
     "  func.return %r : tensor<37x130xf32>\n}\n",
     2, 2, {37, 71}, {130, 71}, 1, 1, 37, 130, 71, mat_l, matt_r, false},
    /* big enough to split over the pool */
    {"func.func @main(%a: tensor<4x50x97xbf16>, %b: tensor<97x300xbf16>)"
     " -> tensor<4x50x300xf32> {\n"
     "  %r = stablehlo.dot_general %a, %b, contracting_dims = [2] x [0]"
     " : (tensor<4x50x97xbf16>, tensor<97x300xbf16>) ->"
     " tensor<4x50x300xf32>\n"
     "  func.return %r : tensor<4x50x300xf32>\n}\n",
     3, 2, {4, 50, 97}, {97, 300}, 1, 1, 200, 300, 97, proj_l, mat_r, false},
    /* the scores with an add fused after the product: the batch split
     * over the pool, each block's add run as its GEMM is done */
    {"func.func @main(%a: tensor<2x13x3x9xbf16>, %b: tensor<2x13x3x9xbf16>)"
     " -> tensor<2x3x13x13xf32> {\n"
     "  %r = stablehlo.dot_general %a, %b, batching_dims = [0, 2] x [0, 2],"
     " contracting_dims = [3] x [3] : (tensor<2x13x3x9xbf16>,"
     " tensor<2x13x3x9xbf16>) -> tensor<2x3x13x13xf32>\n"
     "  %s = stablehlo.add %r, %r : tensor<2x3x13x13xf32>\n"
     "  func.return %s : tensor<2x3x13x13xf32>\n}\n",
     4, 4, {2, 13, 3, 9}, {2, 13, 3, 9}, 2, 3, 13, 13, 9, att_l, att_l, true},
    /* HIGHEST keeps the widened path: the same sums where it runs the
     * engine's own loops */
    {"func.func @main(%a: tensor<37x71xbf16>, %b: tensor<71x130xbf16>)"
     " -> tensor<37x130xf32> {\n"
     "  %r = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0],"
     " precision = [HIGHEST, HIGHEST] : (tensor<37x71xbf16>,"
     " tensor<71x130xbf16>) -> tensor<37x130xf32>\n"
     "  func.return %r : tensor<37x130xf32>\n}\n",
     2, 2, {37, 71}, {71, 130}, 1, 1, 37, 130, 71, mat_l, mat_r, false},
};

/* Operand values: random (rand_bf16), subnormals, or magnitudes within
 * 2^40 .. 2^63 (whose products with subnormals are normal f32). */
/* VALS_LAST_SUBNORMAL: +0 everywhere but the last element, a subnormal:
 * the guard must find it in the last row of the last matrix, however
 * the operand is read (in place, with strides, or gathered) */
enum { VALS_RANDOM, VALS_SUBNORMAL, VALS_LARGE, VALS_LAST_SUBNORMAL };

static shlo_value *bf16_tensor(int rank, const int64_t *dims, int vals) {
  shlo_value *v = shlo_tensor_new(SHLO_BF16, rank, dims);
  assert_non_null(v);
  uint16_t *x = v->data;
  for (int64_t i = 0; i < v->numel; i++) {
    uint16_t h = rand_bf16();
    if (vals == VALS_SUBNORMAL) h = (uint16_t)((h & 0x807f) | 1);
    if (vals == VALS_LARGE)
      h = (uint16_t)((h & 0x807f) | ((167 + rnd() % 23) << 7));
    if (vals == VALS_LAST_SUBNORMAL) h = i + 1 < v->numel ? 0 : 0x0041;
    x[i] = h;
  }
  return v;
}

/* Runs case c; exact: every element must be seq_dot's bits, else within
 * the f32 bound k * 2^-24 * sum |products| of the exact sum. */
static void run_case(const dot_case *c, bool exact, int lvals, int rvals) {
  shlo_value *args[2] = {bf16_tensor(c->lrank, c->ldims, lvals),
                         bf16_tensor(c->rrank, c->rdims, rvals)};
  shlo_module *mod = NULL;
  shlo_executable *e = NULL;
  shlo_value **res = NULL;
  int nres = 0;
  shlo_diag d;
  shlo_diag_clear(&d);
  shlo_compile_opts co = {0};
  assert_int_equal(shlo_parse_module(c->text, strlen(c->text), "t.mlir", &mod,
                                     &d),
                   SHLO_OK);
  assert_int_equal(shlo_compile(mod, &co, &e, &d), SHLO_OK);
  assert_int_equal(shlo_execute(e, NULL, args, 2, &res, &nres, &d), SHLO_OK);
  assert_int_equal(nres, 1);
  const uint16_t *l = args[0]->data, *r = args[1]->data;
  const float *out = res[0]->data;
  int64_t o = 0;
  for (int64_t b0 = 0; b0 < c->nb0; b0++)
    for (int64_t b1 = 0; b1 < c->nb1; b1++)
      for (int64_t i = 0; i < c->m; i++)
        for (int64_t j = 0; j < c->n; j++, o++) {
          float acc = 0.0f;
          double sum = 0, mag = 0;
          for (int64_t kk = 0; kk < c->k; kk++) {
            float p = bf(l[c->lidx(c->ldims, b0, b1, i, kk)]) *
                      bf(r[c->ridx(c->rdims, b0, b1, j, kk)]);
            acc += p;
            sum += p, mag += fabs(p);
          }
          if (c->doubled) acc += acc, sum += sum, mag += mag;
          if (exact) {
            if (bits32(out[o]) != bits32(acc))
              fail_msg("%s: element %lld = %a, want %a", shlo__vmath_isa(),
                       (long long)o, (double)out[o], (double)acc);
          } else {
            assert_true(fabs(out[o] - sum) <= c->k * 0x1p-24 * mag);
          }
        }
  shlo_value_unref(res[0]);
  free(res);
  shlo_executable_free(e);
  shlo_module_free(mod);
  shlo_value_unref(args[0]);
  shlo_value_unref(args[1]);
}

/* Every ISA variant of this machine: the engine's own loops (AVX-512F:
 * the bf16 GEMM where the CPU has it, else the f32 panels) give the
 * scalar sums' bits; OpenBLAS (on the others, for the bigger products)
 * its own order, within the bound. */
static void test_dot_general_layouts(void **state) {
  (void)state;
  static const char *const isas[] = {"avx512f", "avx2", "portable"};
  for (size_t v = 0; v < 3; v++) {
    if (!shlo__vmath_use_isa(isas[v])) continue;
    bool own_loops = !strcmp(isas[v], "avx512f");
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
      int64_t work = cases[i].nb0 * cases[i].nb1 * cases[i].m * cases[i].n *
                     cases[i].k;
      /* the widened path's plain loops for products up to 32768 madds */
      bool plain = work / (cases[i].nb0 * cases[i].nb1) <= 32768;
      run_case(&cases[i], own_loops || plain, VALS_RANDOM, VALS_RANDOM);
    }
  }
  assert_true(shlo__vmath_use_isa("avx512f") || shlo__vmath_use_isa("avx2") ||
              shlo__vmath_use_isa("portable"));
}

/* Subnormal inputs decline the bf16 GEMM: the products are the exact
 * ones, not flushed to 0 (each is at least 2^-93 here, and every sum
 * nonzero). */
static void test_dot_general_subnormal_inputs(void **state) {
  (void)state;
  assert_true(shlo__vmath_use_isa("avx512f") || shlo__vmath_use_isa("avx2"));
  bool own = !strcmp(shlo__vmath_isa(), "avx512f");
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    bool plain = cases[i].m * cases[i].n * cases[i].k <= 32768;
    run_case(&cases[i], own || plain, VALS_SUBNORMAL, VALS_LARGE);
    run_case(&cases[i], own || plain, VALS_LARGE, VALS_SUBNORMAL);
    run_case(&cases[i], own || plain, VALS_LAST_SUBNORMAL, VALS_LARGE);
    run_case(&cases[i], own || plain, VALS_LARGE, VALS_LAST_SUBNORMAL);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_instruction_adds_odd_then_even),
      cmocka_unit_test(test_kernel_every_tail),
      cmocka_unit_test(test_kernel_split_over_pool),
      cmocka_unit_test(test_kernel_small_blocks),
      cmocka_unit_test(test_kernel_default_blocks),
      cmocka_unit_test(test_kernel_guard_in_later_blocks),
      cmocka_unit_test(test_kernel_zero_sign),
      cmocka_unit_test(test_kernel_guard),
      cmocka_unit_test(test_dot_general_layouts),
      cmocka_unit_test(test_dot_general_subnormal_inputs),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
