/* SPDX-License-Identifier: Apache-2.0 */
#define _POSIX_C_SOURCE 200809L /* open_memstream */
/* The integer GEMM of quantized dot_general (engine/src/kernels/qgemm.c).
 *
 * Kernel: on shapes with tails (m = 1 and not a multiple of the 6-row
 * block, n not a multiple of 16 or 64, k not a multiple of 4, k = 0),
 * signed and unsigned lhs, zero points on both sides, narrow clamps, a
 * long k whose unsigned-times-signed sums wrap around 32 bits, every
 * ISA variant this machine has gives exactly clamp(sum_k (a - za)(w - zw))
 * as the test computes it in int64.
 *
 * Programs: a quantized dot_general the compiler sends to the integer
 * path gives the bytes of the same math written out as dequantize -> f32
 * dot_general -> quantize (exact there: power-of-two scales, sums under
 * 2^24) and of the int64 reference; per-tensor and per-channel weights,
 * lhs zero points (the verifier wants the rhs's 0: dot_general C15), i32
 * and saturating i8 results; the dots the integer path must decline
 * (result zero point 1; ui8 storage, which C17 makes both sides' and whose
 * weights VPDPBUSD cannot take) still give the reference, through the
 * float path. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/value.h"
#include "harness.h"
#include "kernels/qgemm.h"
#include "shlo/engine.h"

static const char *const isas[] = {"avx512vnni", "avx512bw", "avx2", "portable"};

static uint32_t rnd(uint32_t *s) {
  *s = *s * 1664525u + 1013904223u;
  return *s >> 8;
}

static int32_t clamp32(int64_t v, int32_t lo, int32_t hi) {
  return v < lo ? lo : v > hi ? hi : (int32_t)v;
}

/* ---- kernel ---- */

typedef struct kcase {
  int64_t m, n, k;
  bool a_unsigned;
  int32_t za;
  int zw_spread; /* zw[j] in [-zw_spread, zw_spread] */
  int32_t cmin, cmax;
  bool extreme; /* every a at its largest, every w -128 */
} kcase;

static void check_kernel(const kcase *kc, uint32_t seed) {
  int64_t m = kc->m, n = kc->n, k = kc->k;
  uint8_t *a = malloc((size_t)(m * k) + 1);
  int8_t *w = malloc((size_t)(k * n) + 1);
  int32_t *zw = malloc((size_t)n * sizeof *zw);
  int32_t *c = malloc((size_t)(m * n) * sizeof *c);
  int32_t *want = malloc((size_t)(m * n) * sizeof *want);
  assert_true(a && w && zw && c && want);
  for (int64_t i = 0; i < m * k; i++) a[i] = (uint8_t)rnd(&seed);
  for (int64_t i = 0; i < k * n; i++) w[i] = (int8_t)rnd(&seed);
  /* the extremes, where an emulation that saturates would show */
  if (m * k > 0) a[0] = kc->a_unsigned ? 255 : 0x80;
  if (k * n > 0) w[0] = -128;
  if (kc->extreme) {
    memset(a, kc->a_unsigned ? 255 : 127, (size_t)(m * k));
    memset(w, 0x80, (size_t)(k * n));
  }
  for (int64_t j = 0; j < n; j++)
    zw[j] = kc->zw_spread
                ? (int32_t)(rnd(&seed) % (2 * kc->zw_spread + 1)) - kc->zw_spread
                : 0;
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      int64_t s = 0;
      for (int64_t kk = 0; kk < k; kk++) {
        int64_t av = kc->a_unsigned ? a[i * k + kk] : (int8_t)a[i * k + kk];
        s += (av - kc->za) * ((int64_t)w[kk * n + j] - zw[j]);
      }
      want[i * n + j] = clamp32(s, kc->cmin, kc->cmax);
    }
  int tried = 0;
  for (size_t v = 0; v < sizeof isas / sizeof isas[0]; v++) {
    if (!shlo__qgemm_use_isa(isas[v])) continue;
    tried++;
    memset(c, 0x5a, (size_t)(m * n) * sizeof *c);
    shlo__qgemm g = {.m = m, .n = n, .k = k, .a = a,
                     .a_unsigned = kc->a_unsigned, .za = kc->za, .w = w,
                     .zw = zw, .cmin = kc->cmin, .cmax = kc->cmax, .c = c};
    assert_true(shlo__qgemm_run(&g));
    for (int64_t i = 0; i < m * n; i++) {
      if (c[i] != want[i])
        print_message("%s m %lld n %lld k %lld: element %lld is %d, want %d\n",
                      isas[v], (long long)m, (long long)n, (long long)k,
                      (long long)i, c[i], want[i]);
      assert_int_equal(c[i], want[i]);
    }
  }
  assert_true(tried >= 1); /* portable always runs */
  free(a);
  free(w);
  free(zw);
  free(c);
  free(want);
}

static void test_kernel_shapes(void **state) {
  (void)state;
  const char *best = shlo__qgemm_isa();
  const kcase cases[] = {
      {1, 1, 1, false, 0, 0, INT32_MIN, INT32_MAX, false},
      {1, 64, 4, false, 0, 0, INT32_MIN, INT32_MAX, false},
      {1, 65, 7, false, 0, 2, INT32_MIN, INT32_MAX, false},
      {7, 17, 3, true, 128, 0, INT32_MIN, INT32_MAX, false},
      {6, 130, 33, false, 5, 3, INT32_MIN, INT32_MAX, false},
      {13, 100, 129, true, 7, 1, INT32_MIN, INT32_MAX, false},
      {12, 64, 256, false, -3, 0, INT32_MIN, INT32_MAX, false},
      {25, 47, 61, false, 0, 0, -128, 127, false}, /* the clamp of an i8 result */
      {5, 9, 0, false, 0, 0, 3, 100, false},       /* k = 0: 0 clamped */
      {3, 0, 5, false, 0, 0, INT32_MIN, INT32_MAX, false},
      /* a long k: fewer blocks packed at once (5 blocks in 3 + 2 or 1s) */
      {2, 300, 5001, false, 1, 0, INT32_MIN, INT32_MAX, false},
      /* S = 100000 * 127 * -128 fits 32 bits, while the sum of
       * (a + 128) * w that VPDPBUSD makes wraps around: it must come back */
      {1, 3, 100000, false, 0, 0, INT32_MIN, INT32_MAX, true},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    check_kernel(&cases[i], (uint32_t)(17 + i));
  assert_true(shlo__qgemm_use_isa(best));
}

static void test_unknown_isa(void **state) {
  (void)state;
  const char *best = shlo__qgemm_isa();
  assert_false(shlo__qgemm_use_isa("avx9000"));
  assert_string_equal(shlo__qgemm_isa(), best);
  assert_true(shlo__qgemm_use_isa("portable"));
  assert_string_equal(shlo__qgemm_isa(), "portable");
  assert_true(shlo__qgemm_use_isa(best));
}

/* ---- programs ---- */

typedef struct pcase {
  int64_t m, n, k;
  const char *a_store; /* "i8" or "ui8" */
  int32_t za;
  bool per_channel;    /* rhs and result per channel, else per tensor */
  bool zw;             /* rhs zero points nonzero */
  const char *c_store; /* "i32" or "i8" */
  int32_t zc;          /* result zero point: nonzero declines the path */
} pcase;

/* The rhs scale of column j: powers of two, products exact in f32. */
static double rhs_scale(const pcase *pc, int64_t j) {
  return pc->per_channel ? 1.0 / (double)(8 << (j % 3)) : 1.0 / 16;
}
static int32_t rhs_zp(const pcase *pc, int64_t j) {
  return pc->zw ? (int32_t)(j % 5) - 2 : 0;
}
#define LHS_SCALE 0.25

/* The quantized type text of the rhs (kind 0) or result (kind 1). */
static void qtype(char *buf, size_t cap, const pcase *pc, int kind) {
  size_t len;
  const char *store = kind ? pc->c_store : pc->a_store;
  if (!pc->per_channel) {
    double s = kind ? LHS_SCALE * rhs_scale(pc, 0) : rhs_scale(pc, 0);
    snprintf(buf, cap, "!quant.uniform<%s:f32, %.17g:%d>", store, s,
             kind ? pc->zc : rhs_zp(pc, 0));
    return;
  }
  len = (size_t)snprintf(buf, cap, "!quant.uniform<%s:f32:1, {", store);
  for (int64_t j = 0; j < pc->n; j++) {
    double s = kind ? LHS_SCALE * rhs_scale(pc, j) : rhs_scale(pc, j);
    len += (size_t)snprintf(buf + len, cap - len, "%s%.17g:%d", j ? ", " : "",
                            s, kind ? pc->zc : rhs_zp(pc, j));
  }
  snprintf(buf + len, cap - len, "}>");
}

/* The program: quantize x and w, then either the quantized dot (direct)
 * or dequantize -> f32 dot -> quantize. */
static char *program(const pcase *pc, bool direct) {
  size_t cap = (size_t)(pc->n * 64 + 4096);
  char *rq = malloc(cap), *cq = malloc(cap), *text = malloc(4 * cap);
  assert_true(rq && cq && text);
  qtype(rq, cap, pc, 0);
  qtype(cq, cap, pc, 1);
  char aq[128], x[64], wt[64], ct[64];
  snprintf(aq, sizeof aq, "!quant.uniform<%s:f32, %.17g:%d>", pc->a_store,
           LHS_SCALE, pc->za);
  snprintf(x, sizeof x, "%lldx%lld", (long long)pc->m, (long long)pc->k);
  snprintf(wt, sizeof wt, "%lldx%lld", (long long)pc->k, (long long)pc->n);
  snprintf(ct, sizeof ct, "%lldx%lld", (long long)pc->m, (long long)pc->n);
  size_t len = (size_t)snprintf(
      text, 4 * cap,
      "func.func @main(%%x: tensor<%sxf32>, %%w: tensor<%sxf32>) -> tensor<%sx%s> {\n"
      "  %%a = stablehlo.uniform_quantize %%x : (tensor<%sxf32>) -> tensor<%sx%s>\n"
      "  %%b = stablehlo.uniform_quantize %%w : (tensor<%sxf32>) -> tensor<%sx%s>\n",
      x, wt, ct, cq, x, x, aq, wt, wt, rq);
  if (direct)
    snprintf(text + len, 4 * cap - len,
             "  %%c = stablehlo.dot_general %%a, %%b, contracting_dims = [1] x [0] :"
             " (tensor<%sx%s>, tensor<%sx%s>) -> tensor<%sx%s>\n"
             "  func.return %%c : tensor<%sx%s>\n}\n",
             x, aq, wt, rq, ct, cq, ct, cq);
  else
    snprintf(text + len, 4 * cap - len,
             "  %%fa = stablehlo.uniform_dequantize %%a : (tensor<%sx%s>) -> tensor<%sxf32>\n"
             "  %%fb = stablehlo.uniform_dequantize %%b : (tensor<%sx%s>) -> tensor<%sxf32>\n"
             "  %%fc = stablehlo.dot_general %%fa, %%fb, contracting_dims = [1] x [0] :"
             " (tensor<%sxf32>, tensor<%sxf32>) -> tensor<%sxf32>\n"
             "  %%c = stablehlo.uniform_quantize %%fc : (tensor<%sxf32>) -> tensor<%sx%s>\n"
             "  func.return %%c : tensor<%sx%s>\n}\n",
             x, aq, x, wt, rq, wt, x, wt, ct, ct, ct, cq, ct, cq);
  free(rq);
  free(cq);
  return text;
}

/* Run text on args; the one result (the caller frees it).  *integer: whether
 * the plan runs a dot on the integer path (--explain's label). */
static shlo_value *run(const char *text, shlo_value *const *args,
                       bool *integer) {
  harness_result h = harness_run_fused(text, true, args, 2);
  assert_int_equal(h.n, 1);
  *integer = strstr(h.plan, "[integer]") != NULL;
  shlo_value *v = h.v[0];
  h.n = 0; /* the result is the caller's */
  harness_result_free(&h);
  return v;
}

static void check_program(const pcase *pc, uint32_t seed) {
  int64_t m = pc->m, n = pc->n, k = pc->k;
  bool a_unsigned = pc->a_store[0] == 'u';
  int64_t xd[2] = {m, k}, wd[2] = {k, n};
  shlo_value *args[2] = {shlo_tensor_new(SHLO_F32, 2, xd),
                         shlo_tensor_new(SHLO_F32, 2, wd)};
  int32_t *qa = malloc((size_t)(m * k) * sizeof *qa);
  int32_t *qw = malloc((size_t)(k * n) * sizeof *qw);
  assert_true(args[0] && args[1] && qa && qw);
  /* storage values first; the float inputs are exactly what quantizes
   * to them */
  for (int64_t i = 0; i < m * k; i++) {
    qa[i] = a_unsigned ? (int32_t)(rnd(&seed) % 256) : (int32_t)(rnd(&seed) % 256) - 128;
    ((float *)args[0]->data)[i] = (float)((qa[i] - pc->za) * LHS_SCALE);
  }
  for (int64_t i = 0; i < k * n; i++) {
    int64_t j = i % n;
    qw[i] = (int32_t)(rnd(&seed) % 256) - (a_unsigned ? 0 : 128);
    ((float *)args[1]->data)[i] =
        (float)((qw[i] - rhs_zp(pc, j)) * rhs_scale(pc, j));
  }
  bool i8 = !strcmp(pc->c_store, "i8");
  char *direct = program(pc, true), *via_float = program(pc, false);
  bool integer = false, ref_integer = true;
  shlo_value *got = run(direct, args, &integer);
  shlo_value *ref = run(via_float, args, &ref_integer);
  assert_int_equal(integer, pc->zc == 0 && !a_unsigned);
  assert_false(ref_integer);
  assert_int_equal(got->nbytes, ref->nbytes);
  assert_memory_equal(got->data, ref->data, got->nbytes);
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      int64_t s = 0;
      for (int64_t kk = 0; kk < k; kk++)
        s += (int64_t)(qa[i * k + kk] - pc->za) * (qw[kk * n + j] - rhs_zp(pc, j));
      int32_t want = clamp32(s + pc->zc, i8 ? -128 : INT32_MIN, i8 ? 127 : INT32_MAX);
      int32_t v = i8 ? ((int8_t *)got->data)[i * n + j] : ((int32_t *)got->data)[i * n + j];
      assert_int_equal(v, want);
    }
  free(direct);
  free(via_float);
  shlo_value_unref(got);
  shlo_value_unref(ref);
  shlo_value_unref(args[0]);
  shlo_value_unref(args[1]);
  free(qa);
  free(qw);
}

static void test_programs(void **state) {
  (void)state;
  const pcase cases[] = {
      {1, 3, 5, "i8", 0, false, false, "i32", 0},
      {7, 70, 33, "i8", 0, true, false, "i32", 0},
      {64, 130, 100, "i8", 3, true, false, "i32", 0},
      {9, 20, 17, "ui8", 128, true, false, "i32", 0}, /* declined: ui8 w */
      {5, 33, 64, "i8", -2, true, false, "i8", 0}, /* saturates */
      {4, 6, 9, "i8", 0, true, false, "i32", 1},   /* declined */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    check_program(&cases[i], (uint32_t)(101 + i));
}

/* ---- the quantize and dequantize around the dot ---- */

/* Run text on n_args f32/i32 args; its n_res results into res. */
static void run_n(const char *text, shlo_value *const *args, int n_args,
                  shlo_value **res, int n_res) {
  harness_result h = harness_run_fused(text, true, args, n_args);
  assert_int_equal(h.n, n_res);
  for (int i = 0; i < h.n; i++) res[i] = h.v[i];
  h.n = 0; /* the results are the caller's */
  harness_result_free(&h);
}

/* f32 operands for quantization: the edges and a spread of magnitudes. */
#define QX_N 4096
static void quant_inputs(float *x, float scale) {
  const float edges[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, -NAN,
                         1e-45f, -1e-45f, 1.17e-38f, 3.4e38f, -3.4e38f};
  int n = 0;
  for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) x[n++] = edges[i];
  /* halfway points and their neighbours, around and past the clamps */
  for (int k = -300; k <= 300 && n + 3 <= QX_N / 2; k++) {
    float h = ((float)k + 0.5f) * scale;
    x[n++] = h;
    x[n++] = nextafterf(h, INFINITY);
    x[n++] = nextafterf(h, -INFINITY);
  }
  uint32_t seed = 7;
  while (n < QX_N) { /* random bit patterns: every exponent */
    uint32_t bits = rnd(&seed) ^ (rnd(&seed) << 24);
    memcpy(&x[n++], &bits, sizeof bits);
  }
}

/* q_one as quant.c's general loop defines it, in double. */
static int64_t quant_ref(float x, double scale, int64_t zp, int64_t lo,
                         int64_t hi) {
  double t = (double)(float)((double)x / scale);
  int64_t s;
  if (t != t) {
    s = zp;
  } else {
    t = nearbyint(t);
    if (t > 4e18) t = 4e18;
    if (t < -4e18) t = -4e18;
    s = (int64_t)t + zp;
  }
  return s < lo ? lo : s > hi ? hi : s;
}

/* Per tensor (the vector loop) and per axis with the same pair twice (the
 * general loop) give the same bytes, and those of the reference. */
static void check_quantize(const char *store, int64_t lo, int64_t hi,
                           const char *scale_text, float scale, int zp) {
  int64_t dims[2] = {QX_N / 2, 2};
  shlo_value *x = shlo_tensor_new(SHLO_F32, 2, dims);
  assert_non_null(x);
  quant_inputs(x->data, scale);
  const char *it = strstr(store, "16") ? "i16" : "i8";
  char text[2048];
  snprintf(text, sizeof text,
           "func.func @main(%%x: tensor<2048x2xf32>) -> (tensor<2048x2x%s>, tensor<2048x2x%s>) {\n"
           "  %%a = stablehlo.uniform_quantize %%x : (tensor<2048x2xf32>) -> tensor<2048x2x!quant.uniform<%s:f32, %s:%d>>\n"
           "  %%b = stablehlo.uniform_quantize %%x : (tensor<2048x2xf32>) -> tensor<2048x2x!quant.uniform<%s:f32:1, {%s:%d, %s:%d}>>\n"
           "  %%ai = stablehlo.bitcast_convert %%a : (tensor<2048x2x!quant.uniform<%s:f32, %s:%d>>) -> tensor<2048x2x%s>\n"
           "  %%bi = stablehlo.bitcast_convert %%b : (tensor<2048x2x!quant.uniform<%s:f32:1, {%s:%d, %s:%d}>>) -> tensor<2048x2x%s>\n"
           "  func.return %%ai, %%bi : tensor<2048x2x%s>, tensor<2048x2x%s>\n}\n",
           it, it, store, scale_text, zp, store, scale_text, zp, scale_text, zp,
           store, scale_text, zp, it, store, scale_text, zp, scale_text, zp, it,
           it, it);
  shlo_value *r[2];
  run_n(text, &x, 1, r, 2);
  assert_int_equal(r[0]->nbytes, r[1]->nbytes);
  assert_memory_equal(r[0]->data, r[1]->data, r[0]->nbytes);
  bool wide = it[1] == '1';
  bool is_unsigned = store[0] == 'u';
  for (int64_t i = 0; i < QX_N; i++) {
    int64_t got = wide ? (is_unsigned ? (int64_t)((uint16_t *)r[0]->data)[i]
                                      : (int64_t)((int16_t *)r[0]->data)[i])
                       : (is_unsigned ? (int64_t)((uint8_t *)r[0]->data)[i]
                                      : (int64_t)((int8_t *)r[0]->data)[i]);
    int64_t want = quant_ref(((float *)x->data)[i], (double)scale, zp, lo, hi);
    if (got != want)
      print_message("%s x %a: %lld, want %lld\n", store, (double)((float *)x->data)[i],
                    (long long)got, (long long)want);
    assert_int_equal(got, want);
  }
  shlo_value_unref(r[0]);
  shlo_value_unref(r[1]);
  shlo_value_unref(x);
}

static void test_quantize_bytes(void **state) {
  (void)state;
  check_quantize("i8", -128, 127, "0.1", 0.1f, -3);
  check_quantize("i8", -128, 127, "0.0078125", 0.0078125f, 0);
  check_quantize("ui8", 0, 255, "0.3", 0.3f, 128);
  check_quantize("i16", -32768, 32767, "0.001", 0.001f, 7);
}

/* i32 storage with zero point 0 to f32: one rounding of the int32, one
 * f32 multiply, per tensor and per axis. */
static void test_dequantize_i32(void **state) {
  (void)state;
  int64_t dims[2] = {1024, 3};
  shlo_value *x = shlo_tensor_new(SHLO_SI32, 2, dims);
  assert_non_null(x);
  int32_t *xv = x->data;
  uint32_t seed = 3;
  const int32_t edges[] = {0, 1, -1, INT32_MAX, INT32_MIN, 16777217, -16777217,
                           16777219, 33554435};
  for (int i = 0; i < 3 * 1024; i++)
    xv[i] = i < 9 ? edges[i] : (int32_t)(rnd(&seed) ^ (rnd(&seed) << 24)) >> (i % 24);
  const char *text =
      "func.func @main(%x: tensor<1024x3xi32>) -> (tensor<1024x3xf32>, tensor<1024x3xf32>) {\n"
      "  %a = stablehlo.bitcast_convert %x : (tensor<1024x3xi32>) -> tensor<1024x3x!quant.uniform<i32:f32, 0.1>>\n"
      "  %b = stablehlo.bitcast_convert %x : (tensor<1024x3xi32>) -> tensor<1024x3x!quant.uniform<i32:f32:1, {0.1, 3.0e-5, 6.103515625e-05}>>\n"
      "  %fa = stablehlo.uniform_dequantize %a : (tensor<1024x3x!quant.uniform<i32:f32, 0.1>>) -> tensor<1024x3xf32>\n"
      "  %fb = stablehlo.uniform_dequantize %b : (tensor<1024x3x!quant.uniform<i32:f32:1, {0.1, 3.0e-5, 6.103515625e-05}>>) -> tensor<1024x3xf32>\n"
      "  func.return %fa, %fb : tensor<1024x3xf32>, tensor<1024x3xf32>\n}\n";
  shlo_value *r[2];
  run_n(text, &x, 1, r, 2);
  const double scales[3] = {(double)0.1f, (double)3.0e-5f, 6.103515625e-05};
  for (int i = 0; i < 3 * 1024; i++) {
    float a = (float)((double)(float)(double)xv[i] * (double)0.1f);
    float b = (float)((double)(float)(double)xv[i] * scales[i % 3]);
    assert_memory_equal(&((float *)r[0]->data)[i], &a, sizeof a);
    assert_memory_equal(&((float *)r[1]->data)[i], &b, sizeof b);
  }
  shlo_value_unref(r[0]);
  shlo_value_unref(r[1]);
  shlo_value_unref(x);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_kernel_shapes),
      cmocka_unit_test(test_unknown_isa),
      cmocka_unit_test(test_programs),
      cmocka_unit_test(test_quantize_bytes),
      cmocka_unit_test(test_dequantize_i32),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
