/* SPDX-License-Identifier: Apache-2.0 */
/* The f32 GEMM by panels (engine/src/kernels/gemm_panels.c): on every
 * shape it takes -- either operand transposed or not, row blocks of 1 to
 * 6, panels cut by n at any column, strides wider than the rows -- each
 * element of c is exactly the scalar chain of fmaf over k in order;
 * op(a) gathered from runs of floats gives the bits of the strided form;
 * a bias and ReLU in registers give those of the add and maximum after;
 * outside its bounds, or on a CPU without AVX-512F, it declines and leaves
 * c alone. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kernels/gemm_panels.h"
#include "kernels/vmath.h"

static bool has_avx512f(void) {
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f");
#else
  return false;
#endif
}

static void fill(float *x, int64_t n, uint32_t seed) {
  for (int64_t i = 0; i < n; i++) {
    seed = seed * 1664525u + 1013904223u;
    x[i] = (float)(seed >> 8) / (float)(1 << 24) - 0.5f;
  }
}

/* c (m x n, stride n + 3) from op(a) and op(b), each stored with 5 or 7
 * extra elements per row, against fmaf; c's padding must stay as it was. */
static void check_shape(bool ta, bool tb, int64_t m, int64_t n, int64_t k) {
  int64_t a_rows = ta ? k : m, a_cols = ta ? m : k;
  int64_t b_rows = tb ? n : k, b_cols = tb ? k : n;
  int64_t lda = a_cols + 5, ldb = b_cols + 7, ldc = n + 3;
  float *a = malloc(sizeof(float) * (size_t)(a_rows * lda));
  float *b = malloc(sizeof(float) * (size_t)(b_rows * ldb));
  float *c = malloc(sizeof(float) * (size_t)(m * ldc));
  assert_non_null(a);
  assert_non_null(b);
  assert_non_null(c);
  fill(a, a_rows * lda, (uint32_t)(m * 7 + k));
  fill(b, b_rows * ldb, (uint32_t)(n * 13 + k));
  for (int64_t i = 0; i < m * ldc; i++) c[i] = -77.0f;
  bool took = shlo__sgemm_panels(ta, tb, m, n, k, a, lda, b, ldb, c, ldc);
  assert_int_equal(took, has_avx512f());
  for (int64_t i = 0; i < m; i++) {
    for (int64_t j = 0; j < n; j++) {
      float want = 0;
      for (int64_t kk = 0; kk < k; kk++)
        want = fmaf(ta ? a[kk * lda + i] : a[i * lda + kk],
                    tb ? b[j * ldb + kk] : b[kk * ldb + j], want);
      if (!took) want = -77.0f;
      if (memcmp(&c[i * ldc + j], &want, sizeof want))
        fail_msg("ta=%d tb=%d m=%lld n=%lld k=%lld: c[%lld][%lld] = %a, "
                 "want %a", ta, tb, (long long)m, (long long)n, (long long)k,
                 (long long)i, (long long)j, c[i * ldc + j], want);
    }
    for (int64_t j = n; j < ldc; j++) assert_true(c[i * ldc + j] == -77.0f);
  }
  free(a);
  free(b);
  free(c);
}

static void every_block_height_and_panel_cut(void **state) {
  (void)state;
  static const int64_t ms[] = {1, 2, 3, 4, 5, 6, 7, 8, 11, 12, 13, 25, 64};
  static const int64_t ns[] = {24, 31, 32, 33, 48, 63, 64, 65, 80, 111, 200};
  static const int64_t ks[] = {1, 2, 17, 300};
  for (int t = 0; t < 4; t++)
    for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++)
      for (size_t j = 0; j < sizeof ns / sizeof ns[0]; j++)
        for (size_t l = 0; l < sizeof ks / sizeof ks[0]; l++)
          check_shape(t & 1, t & 2, ms[i], ns[j], ks[l]);
}

/* the bench programs' shapes: mlp's long k and power-of-two strides,
 * attention's products, convolution blocks' many rows by few columns */
static void bench_shapes(void **state) {
  (void)state;
  check_shape(false, false, 64, 512, 1024);
  check_shape(false, false, 64, 1024, 784);
  check_shape(false, true, 256, 256, 64);
  check_shape(false, false, 256, 64, 256);
  check_shape(false, false, 1500, 64, 288);
  check_shape(true, false, 3, 64, 4096);
  check_shape(false, false, 2000, 32, 27);
  /* many rows and many columns, taken since the panels beat OpenBLAS
   * there too: a block of the LSTM's input projection (3200 x 2048 x
   * 512), rows past 1024 with columns past 128, either operand
   * transposed */
  check_shape(false, false, 1100, 200, 512);
  check_shape(true, false, 1031, 130, 33);
  check_shape(false, true, 1030, 129, 70);
}

/* linear_f32 (64 x 1024 by 1024 x 4096) as each of two threads runs it,
 * 32 panels of b rows 16 KiB apart, and its shape with tails: one row,
 * 63 and 65 rows (a block of 3 or 5 after the blocks of 6), 4095 columns
 * (a last panel of 63), k = 1023 and 1; n = 1 and 17 are not theirs. */
static void linear_shapes_with_tails(void **state) {
  (void)state;
  check_shape(false, false, 64, 2048, 1024);
  check_shape(false, false, 1, 4095, 1023);
  check_shape(false, false, 65, 4095, 7);
  check_shape(false, false, 63, 200, 1023);
  check_shape(false, false, 65, 129, 1023);
  check_shape(false, false, 63, 4095, 1);
  /* too few columns: BLAS's, whatever the CPU */
  assert_false(shlo__sgemm_panels_takes(65, 1, 1023));
  assert_false(shlo__sgemm_panels_takes(63, 17, 1023));
}

/* op(a) gathered from runs, every fifth of them zeros (a convolution's
 * padding), against the strided form on the same matrix written out: the
 * same bits, and the fmaf chain. */
static void check_gathered(int64_t m, int64_t n, int64_t runs, int64_t run) {
  int64_t k = runs * run;
  float *a = malloc(sizeof(float) * (size_t)(m * k));
  float *b = malloc(sizeof(float) * (size_t)(k * n));
  float *c = malloc(sizeof(float) * (size_t)(m * n));
  float *d = malloc(sizeof(float) * (size_t)(m * n));
  float *zeros = calloc((size_t)run, sizeof(float));
  const float **rows = malloc(sizeof(float *) * (size_t)(m * runs));
  assert_true(a && b && c && d && zeros && rows);
  fill(a, m * k, (uint32_t)(m + runs));
  fill(b, k * n, (uint32_t)(n + run));
  for (int64_t r = 0; r < m; r++)
    for (int64_t w = 0; w < runs; w++) {
      float *at = a + r * k + w * run;
      if ((r * runs + w) % 5 == 2) {
        memset(at, 0, sizeof(float) * (size_t)run);
        rows[r * runs + w] = zeros;
      } else {
        rows[r * runs + w] = at;
      }
    }
  bool took = shlo__sgemm_panels_gathered(m, n, runs, run, rows, b, n, c, n);
  assert_int_equal(took, has_avx512f());
  if (took) {
    assert_true(shlo__sgemm_panels(false, false, m, n, k, a, k, b, n, d, n));
    assert_memory_equal(c, d, sizeof(float) * (size_t)(m * n));
    for (int64_t j = 0; j < n; j += 7) {
      float want = 0;
      for (int64_t kk = 0; kk < k; kk++)
        want = fmaf(a[(m - 1) * k + kk], b[kk * n + j], want);
      assert_memory_equal(&c[(m - 1) * n + j], &want, sizeof want);
    }
  }
  free(a);
  free(b);
  free(c);
  free(d);
  free(zeros);
  free(rows);
}

/* cnn's second and third layers (3 x 3 windows of 32 and 64 features),
 * block heights of both panel widths, one run, runs of one value */
static void gathered_rows_are_the_strided_product(void **state) {
  (void)state;
  check_gathered(455, 64, 9, 32);
  check_gathered(227, 64, 9, 64);
  check_gathered(13, 30, 9, 3);
  check_gathered(7, 100, 1, 50);
  check_gathered(25, 48, 40, 1);
}

/* The epilogue in registers (shlo__gemm_epi) against the product without
 * it, then the add and StableHLO's maximum with +0 written out here: a NaN
 * kept, +0 for -0 and for negatives, bit for bit.  The bias holds NaN,
 * infinities and -0 among ordinary values, so some columns are all NaN,
 * all +0, or +inf. */
static float relu_ref(float x) { return isnan(x) ? x : x > 0 ? x : 0.0f; }

static void check_epi(int64_t m, int64_t n, int64_t runs, int64_t run,
                      bool with_bias, bool relu) {
  int64_t k = runs * run;
  float *a = malloc(sizeof(float) * (size_t)(m * k));
  float *b = malloc(sizeof(float) * (size_t)(k * n));
  float *c = malloc(sizeof(float) * (size_t)(m * n));
  float *d = malloc(sizeof(float) * (size_t)(m * n));
  float *bias = malloc(sizeof(float) * (size_t)n);
  const float **rows = malloc(sizeof(float *) * (size_t)(m * runs));
  assert_true(a && b && c && d && bias && rows);
  fill(a, m * k, (uint32_t)(m * 3 + runs));
  fill(b, k * n, (uint32_t)(n * 5 + run));
  fill(bias, n, (uint32_t)n);
  static const float odd[] = {NAN, -INFINITY, INFINITY, -0.0f, -1e30f};
  for (int64_t j = 0; j < n; j += 3) bias[j] = odd[(j / 3) % 5];
  for (int64_t r = 0; r < m; r++)
    for (int64_t w = 0; w < runs; w++) rows[r * runs + w] = a + r * k + w * run;
  shlo__gemm_epi epi = {.bias = with_bias ? bias : NULL, .relu = relu};
  bool took = shlo__sgemm_panels_gathered_epi(m, n, runs, run, rows, b, n, c,
                                              n, &epi);
  assert_int_equal(took, has_avx512f());
  if (took) {
    assert_true(shlo__sgemm_panels_gathered(m, n, runs, run, rows, b, n, d, n));
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < n; j++) {
        float want = with_bias ? d[i * n + j] + bias[j] : d[i * n + j];
        if (relu) want = relu_ref(want);
        if (memcmp(&c[i * n + j], &want, sizeof want))
          fail_msg("m=%lld n=%lld k=%lld bias=%d relu=%d: c[%lld][%lld] = "
                   "%a, want %a", (long long)m, (long long)n, (long long)k,
                   with_bias, relu, (long long)i, (long long)j, c[i * n + j],
                   want);
      }
  }
  /* the scalar form for the products the panels do not take */
  memcpy(c, d, sizeof(float) * (size_t)(m * n));
  shlo__gemm_epi_apply(&epi, m, n, c, n);
  if (took) {
    assert_true(shlo__sgemm_panels_gathered_epi(m, n, runs, run, rows, b, n,
                                                d, n, &epi));
    assert_memory_equal(c, d, sizeof(float) * (size_t)(m * n));
  }
  free(a);
  free(b);
  free(c);
  free(d);
  free(bias);
  free(rows);
}

/* partial panels of both widths (30 of 32 columns; 64 + 36 of 128; 24),
 * block heights that leave 1 to 5 rows at the end */
static void epilogue_in_registers_on_partial_panels(void **state) {
  (void)state;
  static const int64_t ms[] = {1, 7, 13, 29};
  static const int64_t ns[] = {24, 30, 64, 100};
  for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++)
    for (size_t j = 0; j < sizeof ns / sizeof ns[0]; j++)
      for (int t = 1; t < 4; t++) check_epi(ms[i], ns[j], 9, 5, t & 1, t & 2);
}

/* The epilogue over a block in memory (the paths without panels), with
 * each ISA's code the machine runs (AVX-512, or one element at a time):
 * the add and the maximum written out here, NaN and -0 included. */
static void epilogue_in_memory_on_every_isa(void **state) {
  (void)state;
  static const char *isas[] = {"avx512f", "avx2", "portable"};
  const char *was = shlo__vmath_isa();
  enum { M = 5, N = 37, LD = 40 };
  float bias[N], c[M * LD], want[M * LD];
  fill(bias, N, 11);
  static const float odd[] = {NAN, -INFINITY, INFINITY, -0.0f, -1e30f};
  for (int j = 0; j < N; j += 3) bias[j] = odd[(j / 3) % 5];
  for (size_t i = 0; i < sizeof isas / sizeof isas[0]; i++) {
    if (!shlo__vmath_use_isa(isas[i])) continue;
    for (int t = 1; t < 4; t++) {
      fill(c, M * LD, (uint32_t)(t + 40));
      c[0] = -0.0f, c[1] = NAN, c[LD + 2] = 0.0f;
      for (int r = 0; r < M; r++)
        for (int j = 0; j < LD; j++) {
          float x = c[r * LD + j];
          if (j < N && (t & 1)) x += bias[j];
          if (j < N && (t & 2)) x = relu_ref(x);
          want[r * LD + j] = x;
        }
      shlo__gemm_epi epi = {.bias = t & 1 ? bias : NULL, .relu = t & 2};
      shlo__gemm_epi_apply(&epi, M, N, c, LD);
      assert_memory_equal(c, want, sizeof c);
    }
  }
  assert_true(shlo__vmath_use_isa(was));
}

/* x, past the compiler: a product that stays rounded before the add
 * (no FMA of the two) */
static float rounded(float x) {
  volatile float v = x;
  return v;
}

/* The whole epilogue of element (i, j) written out: the product d times
 * scale, the bias, the residual (ldres apart) added in the order given,
 * the ReLU; what (flags) says which are there. */
enum { E_SCALE = 1, E_BIAS = 2, E_RES = 4, E_RES_FIRST = 8, E_RELU = 16 };
static float epi_ref(int what, float d, float scale, float bias, float res) {
  float x = d;
  if (what & E_SCALE) x = rounded(x * scale);
  if (what & E_BIAS) x = rounded(x + bias);
  if (what & E_RES) x = what & E_RES_FIRST ? rounded(res + x) : rounded(x + res);
  return what & E_RELU ? relu_ref(x) : x;
}

/* The residual: NaN, -inf, -0 and +0 among ordinary values, rows ldres
 * apart. */
static float *residual(int64_t m, int64_t ldres) {
  float *res = malloc(sizeof(float) * (size_t)(m * ldres + 1));
  assert_non_null(res);
  fill(res, m * ldres, (uint32_t)(m + ldres));
  static const float odd[] = {NAN, -0.0f, -INFINITY, 0.0f, -0.0f};
  for (int64_t i = 0; i < m * ldres; i += 4) res[i] = odd[(i / 4) % 5];
  return res;
}

/* The scale, bias, residual and ReLU, in the panels' registers (where the
 * machine has AVX-512; c stored through the caches and streamed past
 * them) and in memory on each ISA, against epi_ref for every combination,
 * c's rows n apart from `shift` floats past a 64-byte line (0: every
 * vector of a row of 16 * q floats is a whole line, streamed) and the
 * residual's n + 5. */
static void check_whole_epi(int64_t m, int64_t n, int64_t runs, int64_t run,
                            int64_t shift) {
  static const char *isas[] = {"avx512f", "avx2", "portable"};
  const char *was = shlo__vmath_isa();
  int64_t k = runs * run, ldres = n + 5;
  float *a = malloc(sizeof(float) * (size_t)(m * k));
  float *b = malloc(sizeof(float) * (size_t)(k * n));
  size_t c_bytes = (sizeof(float) * (size_t)(m * n + shift) + 63) / 64 * 64;
  float *c_line = aligned_alloc(64, c_bytes);
  float *d = malloc(sizeof(float) * (size_t)(m * n));
  float *bias = malloc(sizeof(float) * (size_t)n);
  float *res = residual(m, ldres);
  const float **rows = malloc(sizeof(float *) * (size_t)(m * runs));
  assert_true(a && b && c_line && d && bias && rows);
  float *c = c_line + shift;
  fill(a, m * k, (uint32_t)(m * 7 + runs));
  fill(b, k * n, (uint32_t)(n * 3 + run));
  fill(bias, n, (uint32_t)(n + 1));
  for (int64_t j = 0; j < n; j += 5) bias[j] = j % 2 ? INFINITY : NAN;
  for (int64_t r = 0; r < m; r++)
    for (int64_t w = 0; w < runs; w++) rows[r * runs + w] = a + r * k + w * run;
  const float scale = 0.0416666679f;
  bool panels = shlo__sgemm_panels_gathered(m, n, runs, run, rows, b, n, d, n);
  for (int what = 1; what < 32; what++) {
    if ((what & E_RES_FIRST) && !(what & E_RES)) continue;
    shlo__gemm_epi epi = {.bias = what & E_BIAS ? bias : NULL,
                          .relu = what & E_RELU,
                          .scaled = what & E_SCALE,
                          .scale = scale,
                          .res = what & E_RES ? res : NULL,
                          .ldres = ldres,
                          .res_first = what & E_RES_FIRST};
    for (size_t v = 0; v < sizeof isas / sizeof isas[0]; v++) {
      if (!shlo__vmath_use_isa(isas[v])) continue;
      /* 0: in memory, 1: in registers, 2: the same, streamed */
      for (int in_memory = 0; in_memory < 3; in_memory++) {
        if (in_memory && (!panels || strcmp(isas[v], "avx512f"))) continue;
        epi.stream = in_memory == 2;
        if (!in_memory) {
          memcpy(c, d, sizeof(float) * (size_t)(m * n));
          shlo__gemm_epi_apply(&epi, m, n, c, n);
        } else {
          for (int64_t i = 0; i < m * n; i++) c[i] = -77.0f;
          assert_true(shlo__sgemm_panels_gathered_epi(m, n, runs, run, rows,
                                                      b, n, c, n, &epi));
        }
        for (int64_t i = 0; i < m; i++)
          for (int64_t j = 0; j < n; j++) {
            float want = epi_ref(what, d[i * n + j], scale, bias[j],
                                 res[i * ldres + j]);
            if (memcmp(&c[i * n + j], &want, sizeof want))
              fail_msg("%s %s m=%lld n=%lld parts %d: c[%lld][%lld] = %a, "
                       "want %a", isas[v],
                       (const char *[]){"memory", "registers",
                                        "streamed"}[in_memory],
                       (long long)m, (long long)n, what, (long long)i,
                       (long long)j, c[i * n + j], want);
          }
      }
    }
  }
  assert_true(shlo__vmath_use_isa(was));
  free(a);
  free(b);
  free(c_line);
  free(d);
  free(bias);
  free(res);
  free(rows);
}

/* one row, blocks cut short (7, 13 rows), tails of panels of both
 * widths (30, 100 columns), one run of a whole row and runs of one; c on
 * a line's start and off it: rows of whole lines (64, 256 columns, every
 * vector streamed, or none where shifted), rows of 100 columns (some
 * vectors on a line's start, some not, the tail masked) */
static void whole_epilogue_in_registers_and_in_memory(void **state) {
  (void)state;
  check_whole_epi(1, 30, 4, 8, 0);
  check_whole_epi(7, 100, 1, 40, 0);
  check_whole_epi(7, 100, 1, 40, 3);
  check_whole_epi(13, 64, 9, 5, 0);
  check_whole_epi(13, 64, 9, 5, 1);
  check_whole_epi(29, 24, 30, 1, 0);
  check_whole_epi(19, 256, 2, 32, 0);
  check_whole_epi(1, 256, 1, 64, 8);
}

static void declines_outside_its_bounds(void **state) {
  (void)state;
  float a[4] = {1, 2, 3, 4}, b[4] = {1, 2, 3, 4}, c[4] = {9, 9, 9, 9};
  /* too few columns, no k, too long a k: checked before any operand is
   * read, so small arrays stand for all */
  assert_false(shlo__sgemm_panels(false, false, 4, 23, 8, a, 8, b, 23, c, 23));
  assert_false(shlo__sgemm_panels(false, false, 4, 64, 0, a, 0, b, 64, c, 64));
  assert_false(shlo__sgemm_panels(true, true, 4, 64, 4097, a, 4, b, 4097, c,
                                  64));
  for (int i = 0; i < 4; i++) assert_true(c[i] == 9);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_block_height_and_panel_cut),
      cmocka_unit_test(bench_shapes),
      cmocka_unit_test(linear_shapes_with_tails),
      cmocka_unit_test(gathered_rows_are_the_strided_product),
      cmocka_unit_test(epilogue_in_registers_on_partial_panels),
      cmocka_unit_test(epilogue_in_memory_on_every_isa),
      cmocka_unit_test(whole_epilogue_in_registers_and_in_memory),
      cmocka_unit_test(declines_outside_its_bounds),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
