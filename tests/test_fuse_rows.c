/* SPDX-License-Identifier: Apache-2.0 */
/* The shapes JAX exports for a transformer layer, fused as they are in
 * bench/models/transformer.mlir: layernorm and softmax whose row values
 * keep a last dimension of 1 (B x R x 1 beside B x R x C), gammas, betas
 * and biases broadcast through 1 x 1 x C (moved to the front of the plan,
 * kernels/fuse_order.c), and reshapes that take over an operand that dies.
 * Every case runs fused and op by op (no_fusion) on the same arguments
 * and the results must be the same bytes; the fused plan must show the
 * chain as one step.  Row lengths 1, 15, 16, 17 and 130 (tails of the
 * 16-lane sums), rows holding NaN, +inf or only -inf. */
#include <inttypes.h>
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
#include "shlo/engine.h"
#include "shlo/tensor.h"

#define TEXT_CAP 16384

typedef harness_result run_result;

static run_result run(const char *text, bool fuse, shlo_value **args,
                      int n_args) {
  return harness_run_fused(text, fuse, args, n_args);
}

static void release(run_result *r) { harness_result_free(r); }

/* Fused and op by op on args: the same bytes; the fused plan contains
 * `expect` (NULL: no check) and the unfused one no fused step. */
static void same_results(const char *text, shlo_value **args, int n_args,
                         const char *expect) {
  run_result a = run(text, true, args, n_args);
  run_result b = run(text, false, args, n_args);
  if (expect && !strstr(a.plan, expect))
    fail_msg("plan lacks '%s':\n%s", expect, a.plan);
  assert_null(strstr(b.plan, "fused"));
  assert_int_equal(a.n, b.n);
  for (int i = 0; i < a.n; i++) {
    assert_int_equal(a.v[i]->rank, b.v[i]->rank);
    assert_memory_equal(a.v[i]->dims, b.v[i]->dims,
                        (size_t)a.v[i]->rank * sizeof *a.v[i]->dims);
    assert_int_equal(a.v[i]->nbytes, b.v[i]->nbytes);
    assert_memory_equal(a.v[i]->data, b.v[i]->data, a.v[i]->nbytes);
  }
  release(&a);
  release(&b);
}

/* An f32 tensor of the given shape, values in [-4, 4) from a SplitMix64
 * stream; when `special`, row 1 (of the rows along the last dimension)
 * holds a NaN, row 2 a +inf, row 3 is all -inf (rows that exist). */
static shlo_value *arg_f32(int rank, const int64_t *dims, uint64_t seed,
                           bool special) {
  shlo_value *v = shlo_tensor_new(SHLO_F32, rank, dims);
  assert_non_null(v);
  float *x = v->data;
  int64_t cols = dims[rank - 1];
  uint64_t z = seed;
  for (int64_t i = 0; i < v->numel; i++) {
    z += 0x9E3779B97F4A7C15ull;
    uint64_t t = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    t = (t ^ (t >> 27)) * 0x94D049BB133111EBull;
    t ^= t >> 31;
    x[i] = (float)((double)(t >> 40) * 0x1p-21 - 4.0);
  }
  if (special) {
    int64_t rows = v->numel / cols;
    if (rows > 1) x[1 * cols + cols / 2] = NAN;
    if (rows > 2) x[2 * cols] = INFINITY;
    for (int64_t c = 0; rows > 3 && c < cols; c++) x[3 * cols + c] = -INFINITY;
  }
  return v;
}

static void unref_all(shlo_value **v, int n) {
  for (int i = 0; i < n; i++) shlo_value_unref(v[i]);
}

/* Pre-LayerNorm as JAX writes it for x of B x R x C: the mean and
 * variance kept as B x R x 1, gamma and beta through 1 x 1 x C (%g, %be).
 * The mean (B x R x 1) is returned too: a row value written block by
 * block into a result of that shape. */
static void layernorm_text(char *buf, int64_t b, int64_t r, int64_t c) {
  char F[64], K[64];
  snprintf(F, sizeof F, "%" PRId64 "x%" PRId64 "x%" PRId64, b, r, c);
  snprintf(K, sizeof K, "%" PRId64 "x%" PRId64 "x1", b, r);
  snprintf(
      buf, TEXT_CAP,
      "func.func @main(%%x: tensor<%sxf32>, %%g: tensor<%" PRId64
      "xf32>, %%be: tensor<%" PRId64 "xf32>) -> (tensor<%sxf32>, "
      "tensor<%sxf32>) {\n"
      "  %%z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %%cn = stablehlo.constant dense<%" PRId64 ".0> : tensor<f32>\n"
      "  %%eps = stablehlo.constant dense<1.0e-5> : tensor<f32>\n"
      "  %%s = stablehlo.reduce(%%x init: %%z) applies stablehlo.add across "
      "dimensions = [2] : (tensor<%sxf32>, tensor<f32>) -> tensor<%" PRId64
      "x%" PRId64 "xf32>\n"
      "  %%s1 = stablehlo.broadcast_in_dim %%s, dims = [0, 1] : (tensor<%" PRId64
      "x%" PRId64 "xf32>) -> tensor<%sxf32>\n"
      "  %%n = stablehlo.broadcast_in_dim %%cn, dims = [] : (tensor<f32>) -> "
      "tensor<%sxf32>\n"
      "  %%mean = stablehlo.divide %%s1, %%n : tensor<%sxf32>\n"
      "  %%mb = stablehlo.broadcast_in_dim %%mean, dims = [0, 1, 2] : "
      "(tensor<%sxf32>) -> tensor<%sxf32>\n"
      "  %%d = stablehlo.subtract %%x, %%mb : tensor<%sxf32>\n"
      "  %%sq = stablehlo.multiply %%d, %%d : tensor<%sxf32>\n"
      "  %%v = stablehlo.reduce(%%sq init: %%z) applies stablehlo.add across "
      "dimensions = [2] : (tensor<%sxf32>, tensor<f32>) -> tensor<%" PRId64
      "x%" PRId64 "xf32>\n"
      "  %%v1 = stablehlo.broadcast_in_dim %%v, dims = [0, 1] : (tensor<%" PRId64
      "x%" PRId64 "xf32>) -> tensor<%sxf32>\n"
      "  %%var = stablehlo.divide %%v1, %%n : tensor<%sxf32>\n"
      "  %%eb = stablehlo.broadcast_in_dim %%eps, dims = [] : (tensor<f32>) -> "
      "tensor<%sxf32>\n"
      "  %%ve = stablehlo.add %%var, %%eb : tensor<%sxf32>\n"
      "  %%rs = stablehlo.rsqrt %%ve : tensor<%sxf32>\n"
      "  %%rb = stablehlo.broadcast_in_dim %%rs, dims = [0, 1, 2] : "
      "(tensor<%sxf32>) -> tensor<%sxf32>\n"
      "  %%y = stablehlo.multiply %%d, %%rb : tensor<%sxf32>\n"
      "  %%g1 = stablehlo.broadcast_in_dim %%g, dims = [2] : (tensor<%" PRId64
      "xf32>) -> tensor<1x1x%" PRId64 "xf32>\n"
      "  %%gb = stablehlo.broadcast_in_dim %%g1, dims = [0, 1, 2] : "
      "(tensor<1x1x%" PRId64 "xf32>) -> tensor<%sxf32>\n"
      "  %%yg = stablehlo.multiply %%y, %%gb : tensor<%sxf32>\n"
      "  %%b1 = stablehlo.broadcast_in_dim %%be, dims = [2] : (tensor<%" PRId64
      "xf32>) -> tensor<1x1x%" PRId64 "xf32>\n"
      "  %%bb = stablehlo.broadcast_in_dim %%b1, dims = [0, 1, 2] : "
      "(tensor<1x1x%" PRId64 "xf32>) -> tensor<%sxf32>\n"
      "  %%o = stablehlo.add %%yg, %%bb : tensor<%sxf32>\n"
      "  func.return %%o, %%mean : tensor<%sxf32>, tensor<%sxf32>\n}\n",
      F, c, c, F, K, c, F, b, r, b, r, K, K, K, K, F, F, F, F, b, r, b, r, K, K,
      K, K, K, K, F, F, c, c, c, F, F, c, c, c, F, F, F, K);
}

static void keepdims_layernorm(int64_t b, int64_t r, int64_t c,
                               const char *expect) {
  char *text = malloc(TEXT_CAP);
  assert_non_null(text);
  layernorm_text(text, b, r, c);
  int64_t xd[3] = {b, r, c}, gd[1] = {c};
  shlo_value *args[3] = {arg_f32(3, xd, 1, true), arg_f32(1, gd, 2, false),
                         arg_f32(1, gd, 3, false)};
  same_results(text, args, 3, expect);
  unref_all(args, 3);
  free(text);
}

/* The whole layernorm is one rows group (both sums, the x1 row values,
 * gamma and beta through 1 x 1 x C): rows of 130, 16, 17 and 15. */
static void keepdims_layernorm_is_one_group(void **state) {
  (void)state;
  const char *whole =
      "fused_rows(reduce, broadcast_in_dim, broadcast_in_dim, divide, "
      "broadcast_in_dim, subtract, multiply, reduce, broadcast_in_dim, "
      "divide, broadcast_in_dim, add, rsqrt, broadcast_in_dim, multiply, "
      "broadcast_in_dim, multiply, broadcast_in_dim, add)";
  keepdims_layernorm(3, 40, 130, whole);
  keepdims_layernorm(2, 300, 16, whole);
  keepdims_layernorm(4, 100, 17, whole);
  keepdims_layernorm(2, 200, 15, whole);
  /* rows longer than 1024: blocks of 64 with their tail of 6 rows (rows
   * of 1040), of 16 with a tail of 4 (rows of 4100, past 64 x 4096) */
  keepdims_layernorm(1, 70, 1040, whole);
  keepdims_layernorm(1, 20, 4100, whole);
}

/* Rows of one element form no group; the results stay the same. */
static void keepdims_layernorm_rows_of_one(void **state) {
  (void)state;
  keepdims_layernorm(4, 2048, 1, NULL);
}

/* Softmax over the last of four dimensions as JAX writes it: the max
 * kept as ... x 1 after a maximum with -inf, the sum too. */
static void keepdims_softmax(int64_t b, int64_t h, int64_t r, int64_t c,
                             const char *expect) {
  char *text = malloc(TEXT_CAP);
  assert_non_null(text);
  char F[80], R[64], K[80];
  snprintf(F, sizeof F, "%" PRId64 "x%" PRId64 "x%" PRId64 "x%" PRId64, b, h,
           r, c);
  snprintf(R, sizeof R, "%" PRId64 "x%" PRId64 "x%" PRId64, b, h, r);
  snprintf(K, sizeof K, "%sx1", R);
  snprintf(
      text, TEXT_CAP,
      "func.func @main(%%x: tensor<%sxf32>) -> tensor<%sxf32> {\n"
      "  %%z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %%ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"
      "  %%k = stablehlo.constant dense<0.125> : tensor<f32>\n"
      "  %%kb = stablehlo.broadcast_in_dim %%k, dims = [] : (tensor<f32>) -> "
      "tensor<%sxf32>\n"
      "  %%xs = stablehlo.multiply %%x, %%kb : tensor<%sxf32>\n"
      "  %%m = stablehlo.reduce(%%xs init: %%ninf) applies stablehlo.maximum "
      "across dimensions = [3] : (tensor<%sxf32>, tensor<f32>) -> "
      "tensor<%sxf32>\n"
      "  %%nb = stablehlo.broadcast_in_dim %%ninf, dims = [] : (tensor<f32>) "
      "-> tensor<%sxf32>\n"
      "  %%m2 = stablehlo.maximum %%nb, %%m : tensor<%sxf32>\n"
      "  %%m1 = stablehlo.broadcast_in_dim %%m2, dims = [0, 1, 2] : "
      "(tensor<%sxf32>) -> tensor<%sxf32>\n"
      "  %%mb = stablehlo.broadcast_in_dim %%m1, dims = [0, 1, 2, 3] : "
      "(tensor<%sxf32>) -> tensor<%sxf32>\n"
      "  %%d = stablehlo.subtract %%xs, %%mb : tensor<%sxf32>\n"
      "  %%e = stablehlo.exponential %%d : tensor<%sxf32>\n"
      "  %%s = stablehlo.reduce(%%e init: %%z) applies stablehlo.add across "
      "dimensions = [3] : (tensor<%sxf32>, tensor<f32>) -> tensor<%sxf32>\n"
      "  %%s1 = stablehlo.broadcast_in_dim %%s, dims = [0, 1, 2] : "
      "(tensor<%sxf32>) -> tensor<%sxf32>\n"
      "  %%sb = stablehlo.broadcast_in_dim %%s1, dims = [0, 1, 2, 3] : "
      "(tensor<%sxf32>) -> tensor<%sxf32>\n"
      "  %%y = stablehlo.divide %%e, %%sb : tensor<%sxf32>\n"
      "  func.return %%y : tensor<%sxf32>\n}\n",
      F, F, F, F, F, R, R, R, R, K, K, F, F, F, F, R, R, K, K, F, F, F);
  int64_t xd[4] = {b, h, r, c};
  shlo_value *x = arg_f32(4, xd, 7, true);
  same_results(text, &x, 1, expect);
  shlo_value_unref(x);
  free(text);
}

static void keepdims_softmax_is_one_group(void **state) {
  (void)state;
  const char *whole =
      "fused_rows(broadcast_in_dim, multiply, reduce, broadcast_in_dim, "
      "maximum, broadcast_in_dim, broadcast_in_dim, subtract, exponential, "
      "reduce, broadcast_in_dim, broadcast_in_dim, divide)";
  keepdims_softmax(2, 3, 40, 128, whole);
  keepdims_softmax(2, 2, 200, 16, whole);
  keepdims_softmax(1, 3, 100, 17, whole);
  keepdims_softmax(2, 1, 200, 15, whole);
  keepdims_softmax(1, 1, 37, 2050, whole);
  keepdims_softmax(2, 4, 1024, 1, NULL);
}

/* A GEMM's scale and bias through 1 x 1 x N, then a residual add: the
 * bias's reshaping broadcast no longer cuts the chain, which runs whole
 * behind the GEMM (since dot_general took whole epilogues, in its
 * registers: kernels/fuse_epi.c). */
static void bias_through_unit_dims_joins_the_chain(void **state) {
  (void)state;
  char text[TEXT_CAP];
  snprintf(
      text, sizeof text,
      "func.func @main(%%x: tensor<4x33x64xf32>, %%w: tensor<64x48xf32>, "
      "%%b: tensor<48xf32>, %%res: tensor<4x33x48xf32>) -> "
      "tensor<4x33x48xf32> {\n"
      "  %%p = stablehlo.dot_general %%x, %%w, contracting_dims = [2] x [0] : "
      "(tensor<4x33x64xf32>, tensor<64x48xf32>) -> tensor<4x33x48xf32>\n"
      "  %%k = stablehlo.constant dense<0.036> : tensor<f32>\n"
      "  %%kb = stablehlo.broadcast_in_dim %%k, dims = [] : (tensor<f32>) -> "
      "tensor<4x33x48xf32>\n"
      "  %%ps = stablehlo.multiply %%p, %%kb : tensor<4x33x48xf32>\n"
      "  %%b1 = stablehlo.broadcast_in_dim %%b, dims = [2] : "
      "(tensor<48xf32>) -> tensor<1x1x48xf32>\n"
      "  %%bb = stablehlo.broadcast_in_dim %%b1, dims = [0, 1, 2] : "
      "(tensor<1x1x48xf32>) -> tensor<4x33x48xf32>\n"
      "  %%pb = stablehlo.add %%ps, %%bb : tensor<4x33x48xf32>\n"
      "  %%o = stablehlo.add %%res, %%pb : tensor<4x33x48xf32>\n"
      "  func.return %%o : tensor<4x33x48xf32>\n}\n");
  int64_t xd[3] = {4, 33, 64}, wd[2] = {64, 48}, bd[1] = {48},
          rd[3] = {4, 33, 48};
  shlo_value *args[4] = {arg_f32(3, xd, 11, true), arg_f32(2, wd, 12, false),
                         arg_f32(1, bd, 13, false), arg_f32(3, rd, 14, true)};
  same_results(text, args, 4,
               "dot_general + epilogue(multiply, add, add) [in the "
               "producer's registers]");
  unref_all(args, 4);
}

/* Reshapes: of a value that dies there (taken over), of one read again
 * afterwards (copied: the later reader sees the old shape's bytes), and
 * of an argument (the caller's value keeps its shape and bytes). */
static void reshapes_take_over_only_what_dies(void **state) {
  (void)state;
  const char *text =
      "func.func @main(%x: tensor<6x8xf32>) -> (tensor<48xf32>, "
      "tensor<2x24xf32>, tensor<6x8xf32>, tensor<8x6xf32>) {\n"
      "  %a = stablehlo.exponential %x : tensor<6x8xf32>\n"
      "  %r1 = stablehlo.reshape %a : (tensor<6x8xf32>) -> tensor<48xf32>\n"
      "  %b = stablehlo.negate %x : tensor<6x8xf32>\n"
      "  %r2 = stablehlo.reshape %b : (tensor<6x8xf32>) -> tensor<2x24xf32>\n"
      "  %c = stablehlo.add %b, %x : tensor<6x8xf32>\n"
      "  %r3 = stablehlo.reshape %x : (tensor<6x8xf32>) -> tensor<8x6xf32>\n"
      "  func.return %r1, %r2, %c, %r3 : tensor<48xf32>, tensor<2x24xf32>, "
      "tensor<6x8xf32>, tensor<8x6xf32>\n}\n";
  int64_t xd[2] = {6, 8};
  shlo_value *x = arg_f32(2, xd, 21, true);
  shlo_value *copy = arg_f32(2, xd, 21, true);
  same_results(text, &x, 1, NULL);
  run_result a = run(text, false, &x, 1);
  assert_int_equal(a.n, 4);
  assert_int_equal(a.v[0]->rank, 1);
  assert_int_equal(a.v[0]->dims[0], 48);
  assert_int_equal(a.v[1]->rank, 2);
  assert_int_equal(a.v[1]->dims[0], 2);
  assert_int_equal(a.v[1]->dims[1], 24);
  const uint32_t *in = copy->data, *r2 = a.v[1]->data;
  for (int i = 0; i < 48; i++) /* negate: the sign bit, NaNs too */
    assert_int_equal(r2[i], in[i] ^ 0x80000000u);
  assert_memory_equal(a.v[3]->data, copy->data, copy->nbytes);
  release(&a);
  assert_int_equal(x->rank, 2);
  assert_int_equal(x->dims[0], 6);
  assert_int_equal(x->dims[1], 8);
  assert_memory_equal(x->data, copy->data, x->nbytes);
  shlo_value_unref(x);
  shlo_value_unref(copy);
}

/* Inside a loop body: the bias's reshaping broadcast of a captured value
 * moves ahead of the body's chain, and a reshape of a value the body
 * made and drops (taken over) feeds the next step; each of three
 * iterations gives the op-by-op bytes. */
static void loop_bodies_move_and_reshape_alike(void **state) {
  (void)state;
  const char *text =
      "func.func @main(%x: tensor<64x96xf32>, %b: tensor<96xf32>) -> "
      "tensor<64x96xf32> {\n"
      "  %z = stablehlo.constant dense<0> : tensor<i64>\n"
      "  %n = stablehlo.constant dense<3> : tensor<i64>\n"
      "  %r:2 = stablehlo.while(%i = %z, %v = %x) : tensor<i64>, "
      "tensor<64x96xf32>\n"
      "  cond {\n"
      "    %c = stablehlo.compare LT, %i, %n : (tensor<i64>, tensor<i64>) "
      "-> tensor<i1>\n"
      "    stablehlo.return %c : tensor<i1>\n"
      "  } do {\n"
      "    %one = stablehlo.constant dense<1> : tensor<i64>\n"
      "    %i2 = stablehlo.add %i, %one : tensor<i64>\n"
      "    %k = stablehlo.constant dense<0.5> : tensor<f32>\n"
      "    %kb = stablehlo.broadcast_in_dim %k, dims = [] : (tensor<f32>) -> "
      "tensor<64x96xf32>\n"
      "    %t = stablehlo.tanh %v : tensor<64x96xf32>\n"
      "    %h = stablehlo.multiply %t, %kb : tensor<64x96xf32>\n"
      "    %b1 = stablehlo.broadcast_in_dim %b, dims = [1] : "
      "(tensor<96xf32>) -> tensor<1x96xf32>\n"
      "    %bb = stablehlo.broadcast_in_dim %b1, dims = [0, 1] : "
      "(tensor<1x96xf32>) -> tensor<64x96xf32>\n"
      "    %y = stablehlo.add %h, %bb : tensor<64x96xf32>\n"
      "    %y3 = stablehlo.reshape %y : (tensor<64x96xf32>) -> "
      "tensor<64x2x48xf32>\n"
      "    %e = stablehlo.exponential %y3 : tensor<64x2x48xf32>\n"
      "    %y2 = stablehlo.reshape %e : (tensor<64x2x48xf32>) -> "
      "tensor<64x96xf32>\n"
      "    stablehlo.return %i2, %y2 : tensor<i64>, tensor<64x96xf32>\n"
      "  }\n"
      "  func.return %r#1 : tensor<64x96xf32>\n}\n";
  int64_t xd[2] = {64, 96}, bd[1] = {96};
  shlo_value *args[2] = {arg_f32(2, xd, 31, true), arg_f32(1, bd, 32, false)};
  same_results(text, args, 2,
               "fused(broadcast_in_dim, tanh, multiply, broadcast_in_dim, "
               "add)");
  unref_all(args, 2);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(keepdims_layernorm_is_one_group),
      cmocka_unit_test(keepdims_layernorm_rows_of_one),
      cmocka_unit_test(keepdims_softmax_is_one_group),
      cmocka_unit_test(bias_through_unit_dims_joins_the_chain),
      cmocka_unit_test(reshapes_take_over_only_what_dies),
      cmocka_unit_test(loop_bodies_move_and_reshape_alike),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
