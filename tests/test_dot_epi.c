/* SPDX-License-Identifier: Apache-2.0 */
/* Whole epilogues of a dot_general (kernels/linalg.c, dot_run_epi): the
 * multiply by a scalar, bias, residual add and ReLU behind a product,
 * taken into the product's step (kernels/fuse_epi.c), give the bits of
 * the same program run op by op.  The shapes reach each of the GEMM's
 * routes: the plain loops, the panels, OpenBLAS on each thread's rows,
 * a batch split over the pool, and, inside a while that carries its
 * weights unchanged, the packed weights with the epilogue on each panel
 * as it is made (an LSTM's input and recurrent products).  The bias
 * holds NaN and -inf, the residual NaN and -0; every ISA this machine
 * runs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/value.h"
#include "harness.h"
#include "kernels/vmath.h"
#include "shlo/engine.h"

#define TEXT_CAP 16384

enum {
  SCALE = 1,     /* multiply by a scalar constant, the product first */
  BIAS = 2,      /* add a bias along the last dimension, broadcast twice */
  RES_FIRST = 4, /* add the residual, written first */
  RES_AFTER = 8, /* add the residual, written second */
  RELU = 16,     /* the maximum with +0 */
  BATCHED = 32,  /* lhs and rhs share their leading dimension */
};

/* [b, m, k] x [k, n] (or [b, k, n] when batched) -> [b, m, n] */
typedef struct dot_case {
  int b, m, k, n, parts;
} dot_case;

/* %name: n floats of f(iota + shift), reshaped to type `to`. */
static void values(char *buf, size_t cap, const char *name, const char *f,
                   long n, const char *to) {
  harness_appendf(buf, cap,
      "  %%%s_i = stablehlo.iota dim = 0 : tensor<%ldxf32>\n"
      "  %%%s_f = stablehlo.%s %%%s_i : tensor<%ldxf32>\n"
      "  %%%s = stablehlo.reshape %%%s_f : (tensor<%ldxf32>) -> %s\n",
      name, n, name, f, name, n, name, name, n, to);
}

/* The bias log(j - 2) (NaN, NaN, -inf, then ordinary values) as %bv, and
 * the residual -max(sin(i), 0) * exp(log(i - 5)) as %res (NaN for i < 5,
 * -0 where the sine is not positive), made before the product so that
 * their runs stay apart from its epilogue. */
static void bias_and_residual(char *buf, size_t cap, int n, long onel,
                              const char *out) {
  harness_appendf(buf, cap,
      "  %%bi = stablehlo.iota dim = 0 : tensor<%dxf32>\n"
      "  %%two = stablehlo.constant dense<2.0> : tensor<%dxf32>\n"
      "  %%bd = stablehlo.subtract %%bi, %%two : tensor<%dxf32>\n"
      "  %%bv = stablehlo.log %%bd : tensor<%dxf32>\n",
      n, n, n, n);
  harness_appendf(buf, cap,
      "  %%ri = stablehlo.iota dim = 0 : tensor<%ldxf32>\n"
      "  %%rs = stablehlo.sine %%ri : tensor<%ldxf32>\n"
      "  %%r0 = stablehlo.constant dense<0.0> : tensor<%ldxf32>\n"
      "  %%rm = stablehlo.maximum %%rs, %%r0 : tensor<%ldxf32>\n"
      "  %%rn = stablehlo.negate %%rm : tensor<%ldxf32>\n"
      "  %%r5 = stablehlo.constant dense<5.0> : tensor<%ldxf32>\n"
      "  %%rd = stablehlo.subtract %%ri, %%r5 : tensor<%ldxf32>\n"
      "  %%rl = stablehlo.log %%rd : tensor<%ldxf32>\n"
      "  %%re = stablehlo.exponential %%rl : tensor<%ldxf32>\n"
      "  %%rp = stablehlo.multiply %%rn, %%re : tensor<%ldxf32>\n"
      "  %%res = stablehlo.reshape %%rp : (tensor<%ldxf32>) -> %s\n",
      onel, onel, onel, onel, onel, onel, onel, onel, onel, onel, onel, out);
}

/* The epilogue's ops on value %y of type out, as parts asks, in the
 * order JAX writes them; returns the last value's name. */
static const char *epilogue_ops(char *buf, size_t cap, int parts, int n,
                                const char *out) {
  const char *v = "%y";
  if (parts & SCALE) {
    harness_appendf(buf, cap,
        "  %%sc = stablehlo.constant dense<0.0441941731> : tensor<f32>\n"
        "  %%scb = stablehlo.broadcast_in_dim %%sc, dims = [] : (tensor<f32>)"
        " -> %s\n"
        "  %%y1 = stablehlo.multiply %%y, %%scb : %s\n",
        out, out);
    v = "%y1";
  }
  if (parts & BIAS) {
    harness_appendf(buf, cap,
        "  %%b3 = stablehlo.broadcast_in_dim %%bv, dims = [2] : "
        "(tensor<%dxf32>) -> tensor<1x1x%dxf32>\n"
        "  %%bb = stablehlo.broadcast_in_dim %%b3, dims = [0, 1, 2] : "
        "(tensor<1x1x%dxf32>) -> %s\n"
        "  %%y2 = stablehlo.add %s, %%bb : %s\n",
        n, n, n, out, v, out);
    v = "%y2";
  }
  if (parts & (RES_FIRST | RES_AFTER)) {
    harness_appendf(buf, cap, "  %%y3 = stablehlo.add %s%s%s : %s\n",
        parts & RES_FIRST ? "%res, " : "", v, parts & RES_FIRST ? "" : ", %res",
        out);
    v = "%y3";
  }
  if (parts & RELU) {
    harness_appendf(buf, cap,
        "  %%z = stablehlo.constant dense<0.0> : tensor<f32>\n"
        "  %%zb = stablehlo.broadcast_in_dim %%z, dims = [] : (tensor<f32>) "
        "-> %s\n"
        "  %%y4 = stablehlo.maximum %s, %%zb : %s\n",
        out, v, out);
    v = "%y4";
  }
  return v;
}

/* The program of case c: lhs sine values, rhs cosine ones. */
static void dot_program(char *buf, size_t cap, const dot_case *c) {
  char lhs[64], rhs[64], out[64];
  bool batched = c->parts & BATCHED;
  snprintf(lhs, sizeof lhs, "tensor<%dx%dx%dxf32>", c->b, c->m, c->k);
  if (batched)
    snprintf(rhs, sizeof rhs, "tensor<%dx%dx%dxf32>", c->b, c->k, c->n);
  else
    snprintf(rhs, sizeof rhs, "tensor<%dx%dxf32>", c->k, c->n);
  snprintf(out, sizeof out, "tensor<%dx%dx%dxf32>", c->b, c->m, c->n);
  long onel = (long)c->b * c->m * c->n;
  buf[0] = 0;
  harness_appendf(buf, cap, "func.func @main() -> %s {\n", out);
  values(buf, cap, "x", "sine", (long)c->b * c->m * c->k, lhs);
  values(buf, cap, "w", "cosine", (batched ? (long)c->b : 1) * c->k * c->n,
         rhs);
  bias_and_residual(buf, cap, c->n, onel, out);
  if (batched)
    harness_appendf(buf, cap,
        "  %%y = stablehlo.dot_general %%x, %%w, batching_dims = [0] x [0], "
        "contracting_dims = [2] x [1] : (%s, %s) -> %s\n",
        lhs, rhs, out);
  else
    harness_appendf(buf, cap,
        "  %%y = stablehlo.dot_general %%x, %%w, contracting_dims = [2] x [0]"
        " : (%s, %s) -> %s\n",
        lhs, rhs, out);
  const char *v = epilogue_ops(buf, cap, c->parts, c->n, out);
  harness_appendf(buf, cap, "  func.return %s : %s\n}\n", v, out);
}

/* The label of the step with parts' ops, in order. */
static void expected_label(char *buf, size_t cap, int parts) {
  snprintf(buf, cap, "+ epilogue(");
  const char *sep = "";
  if (parts & SCALE) harness_appendf(buf, cap, "%smultiply", sep), sep = ", ";
  if (parts & BIAS) harness_appendf(buf, cap, "%sadd", sep), sep = ", ";
  if (parts & (RES_FIRST | RES_AFTER)) harness_appendf(buf, cap, "%sadd", sep), sep = ", ";
  if (parts & RELU) harness_appendf(buf, cap, "%smaximum", sep);
  harness_appendf(buf, cap, ") [in the producer's registers]");
}

/* Fused and unfused, byte for byte; the fused plan contains expect. */
static void same_bits(const char *text, const char *expect) {
  harness_result a = harness_run_fused(text, true, NULL, 0);
  harness_result b = harness_run_fused(text, false, NULL, 0);
  if (!strstr(a.plan, expect)) {
    fprintf(stderr, "%s\n%s\n", text, a.plan);
    fail_msg("plan lacks '%s'", expect);
  }
  assert_null(strstr(b.plan, "epilogue("));
  assert_int_equal(a.n, b.n);
  for (int i = 0; i < a.n; i++) {
    assert_int_equal(a.v[i]->nbytes, b.v[i]->nbytes);
    assert_memory_equal(a.v[i]->data, b.v[i]->data, a.v[i]->nbytes);
  }
  harness_result_free(&a);
  harness_result_free(&b);
}

static void check_cases(const dot_case *cases, size_t n) {
  char *text = malloc(TEXT_CAP);
  assert_non_null(text);
  for (size_t i = 0; i < n; i++) {
    char label[160];
    dot_program(text, TEXT_CAP, &cases[i]);
    expected_label(label, sizeof label, cases[i].parts);
    same_bits(text, label);
  }
  free(text);
}

/* fn on each ISA the machine runs: the panels on AVX-512, OpenBLAS and
 * the epilogue in memory on the others. */
static void every_isa(void (*fn)(void)) {
  static const char *isas[] = {"avx512f", "avx2", "portable"};
  const char *was = shlo__vmath_isa();
  for (size_t i = 0; i < sizeof isas / sizeof isas[0]; i++)
    if (shlo__vmath_use_isa(isas[i])) fn();
  assert_true(shlo__vmath_use_isa(was));
}

/* Results of at least 4096 elements (smaller ones are not fused).
 * 4 x 32 x 1 x 32: the plain loops, k = 1; 3 x 30 x 40 x 70: the panels,
 * a 6-column tail; 4 x 40 x 96 x 200: split by columns over the pool;
 * 16 x 130 x 32 x 136: 2080 rows split by rows, each thread's share past
 * the panels' 1024 (OpenBLAS); one row of 4100 (its bias would be of
 * the result's shape, a residual, not a bias), two; a batch split over the
 * pool. */
static void products(void) {
  static const dot_case cases[] = {
      {4, 32, 1, 32, SCALE | BIAS},
      {3, 30, 40, 70, SCALE | BIAS},
      {3, 30, 40, 70, SCALE | RES_FIRST | RELU},
      {4, 40, 96, 200, SCALE | BIAS},
      {4, 40, 96, 200, BIAS | RES_AFTER | RELU},
      {16, 130, 32, 136, SCALE | BIAS},
      {16, 130, 32, 136, SCALE | BIAS | RES_FIRST | RELU},
      {1, 1, 33, 4100, SCALE | RES_AFTER | RELU},
      {2, 1, 33, 4100, SCALE | BIAS | RES_AFTER},
      {4, 24, 40, 72, BATCHED | SCALE | BIAS | RES_FIRST},
  };
  check_cases(cases, sizeof cases / sizeof cases[0]);
}

static void dot_epilogues_on_every_route(void **state) {
  (void)state;
  every_isa(products);
}

/* An LSTM's recurrence: a while carries the n x n weights unchanged
 * (packed once on AVX-512) and makes h = x[i] + dot(h, w) * s, x a slice
 * of an input that the loop also carries, with its residual written
 * first, three times: results of at least 4096 elements (smaller ones
 * are not fused); n = 129: two whole panels and one column; n = 1000:
 * a 40-column tail.  32 and 20 rows are split by rows over two or more
 * threads (20: blocks of 8, 8 and 4), the others by panels. */
static void loop_program(char *buf, size_t cap, int m, int n) {
  char mn[48], nn[48], xs[48];
  snprintf(mn, sizeof mn, "tensor<%dx%dxf32>", m, n);
  snprintf(nn, sizeof nn, "tensor<%dx%dxf32>", n, n);
  snprintf(xs, sizeof xs, "tensor<3x%dx%dxf32>", m, n);
  buf[0] = 0;
  harness_appendf(buf, cap, "func.func @main() -> %s {\n", mn);
  values(buf, cap, "h0", "sine", (long)m * n, mn);
  values(buf, cap, "w0", "cosine", (long)n * n, nn);
  values(buf, cap, "x0", "sine", 3L * m * n, xs);
  harness_appendf(buf, cap,
      "  %%c0 = stablehlo.constant dense<0> : tensor<i32>\n"
      "  %%r:4 = stablehlo.while(%%i = %%c0, %%h = %%h0, %%w = %%w0, "
      "%%x = %%x0) : tensor<i32>, %s, %s, %s\n"
      "  cond {\n"
      "    %%three = stablehlo.constant dense<3> : tensor<i32>\n"
      "    %%lt = stablehlo.compare LT, %%i, %%three, SIGNED : "
      "(tensor<i32>, tensor<i32>) -> tensor<i1>\n"
      "    stablehlo.return %%lt : tensor<i1>\n"
      "  } do {\n"
      "    %%one = stablehlo.constant dense<1> : tensor<i32>\n"
      "    %%zero = stablehlo.constant dense<0> : tensor<i32>\n"
      "    %%xi3 = stablehlo.dynamic_slice %%x, %%i, %%zero, %%zero, "
      "sizes = [1, %d, %d] : (%s, tensor<i32>, tensor<i32>, tensor<i32>) "
      "-> tensor<1x%dx%dxf32>\n"
      "    %%xi = stablehlo.reshape %%xi3 : (tensor<1x%dx%dxf32>) -> %s\n"
      "    %%y = stablehlo.dot_general %%h, %%w, contracting_dims = [1] x [0]"
      " : (%s, %s) -> %s\n"
      "    %%sc = stablehlo.constant dense<0.0441941731> : tensor<f32>\n"
      "    %%scb = stablehlo.broadcast_in_dim %%sc, dims = [] : "
      "(tensor<f32>) -> %s\n"
      "    %%y1 = stablehlo.multiply %%y, %%scb : %s\n"
      "    %%hn = stablehlo.add %%xi, %%y1 : %s\n"
      "    %%in = stablehlo.add %%i, %%one : tensor<i32>\n"
      "    stablehlo.return %%in, %%hn, %%w, %%x : tensor<i32>, %s, %s, %s\n"
      "  }\n"
      "  func.return %%r#1 : %s\n}\n",
      mn, nn, xs, m, n, xs, m, n, m, n, mn, mn, nn, mn, mn, mn, mn, mn, nn, xs,
      mn);
}

static void loops(void) {
  static const int shapes[][2] = {{32, 129}, {5, 1000}, {64, 64}, {20, 210}};
  char *text = malloc(TEXT_CAP);
  assert_non_null(text);
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
    loop_program(text, TEXT_CAP, shapes[i][0], shapes[i][1]);
    same_bits(text, "+ epilogue(multiply, add) [in the producer's registers]");
  }
  free(text);
}

static void recurrent_epilogues_on_packed_weights(void **state) {
  (void)state;
  every_isa(loops);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(dot_epilogues_on_every_route),
      cmocka_unit_test(recurrent_epilogues_on_packed_weights),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
