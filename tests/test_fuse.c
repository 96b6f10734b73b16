/* SPDX-License-Identifier: Apache-2.0 */
/* Elementwise fusion: a fused plan gives bit-identical results to the same
 * plan run op by op, for chains with intermediates used outside the run,
 * splat broadcasts, scalar select predicates, converts and several types. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/value.h"
#include "harness.h"
#include "shlo/engine.h"

typedef harness_result run_result;

static run_result run(const char *text, bool fuse) {
  return harness_run_fused(text, fuse, NULL, 0);
}

static void release(run_result *r) { harness_result_free(r); }

/* Run fused and unfused; the fused plan must contain `expect_fused` and all
 * results must match byte for byte. */
static void same_results(const char *text, const char *expect_fused) {
  run_result a = run(text, true), b = run(text, false);
  if (!strstr(a.plan, expect_fused))
    fail_msg("plan lacks '%s':\n%s", expect_fused, a.plan);
  assert_null(strstr(b.plan, "fused("));
  assert_null(strstr(b.plan, "fused_rows("));
  assert_int_equal(a.n, b.n);
  for (int i = 0; i < a.n; i++) {
    assert_int_equal(a.v[i]->nbytes, b.v[i]->nbytes);
    assert_int_equal(a.v[i]->elem, b.v[i]->elem);
    assert_memory_equal(a.v[i]->data, b.v[i]->data, a.v[i]->nbytes);
  }
  release(&a);
  release(&b);
}

static void a_chain_fuses_and_keeps_values_used_later(void **state) {
  (void)state;
  same_results(
      "func.func @main() -> (tensor<10000xf32>, tensor<10000xf32>) {\n"
      "  %x = stablehlo.iota dim = 0 : tensor<10000xf32>\n"
      "  %c = stablehlo.constant dense<0.001> : tensor<f32>\n"
      "  %cb = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<f32>) -> "
      "tensor<10000xf32>\n"
      "  %a = stablehlo.multiply %x, %cb : tensor<10000xf32>\n"
      "  %t = stablehlo.tanh %a : tensor<10000xf32>\n"
      "  %e = stablehlo.exponential %t : tensor<10000xf32>\n"
      "  %s = stablehlo.subtract %e, %a : tensor<10000xf32>\n"
      "  %n = stablehlo.negate %t : tensor<10000xf32>\n"
      "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %r = stablehlo.reduce(%n init: %z) applies stablehlo.add across "
      "dimensions = [0] : (tensor<10000xf32>, tensor<f32>) -> tensor<f32>\n"
      "  %rb = stablehlo.broadcast_in_dim %r, dims = [] : (tensor<f32>) -> "
      "tensor<10000xf32>\n"
      "  %q = stablehlo.add %rb, %s : tensor<10000xf32>\n"
      "  func.return %q, %t : tensor<10000xf32>, tensor<10000xf32>\n}\n",
      "fused(broadcast_in_dim, multiply, tanh, exponential, subtract, negate)");
}

/* %x: 600007 f32 values from -30 up, 0.0001 apart (their broadcasts and
 * ops lane ops too) */
#define RAMP_X                                                              \
  "  %i = stablehlo.iota dim = 0 : tensor<600007xf32>\n"                    \
  "  %s = stablehlo.constant dense<0.0001> : tensor<f32>\n"                 \
  "  %sb = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> "    \
  "tensor<600007xf32>\n"                                                    \
  "  %x0 = stablehlo.multiply %i, %sb : tensor<600007xf32>\n"               \
  "  %h = stablehlo.constant dense<30.0> : tensor<f32>\n"                   \
  "  %hb = stablehlo.broadcast_in_dim %h, dims = [] : (tensor<f32>) -> "    \
  "tensor<600007xf32>\n"                                                    \
  "  %x = stablehlo.subtract %x0, %hb : tensor<600007xf32>\n"

/* A run of f32 lane ops runs as one lane program (kernels/vchain.h):
 * gelu's chain over 600007 elements (whole chunks, then a tail), values
 * read again ops later (stored and read back), one the function returns
 * mid-chain (written straight to its result), square roots of negative
 * values (NaN) and their abs, and the last one
 * returned past SHLO_STREAM_MIN_BYTES (made in scratch and streamed):
 * the unfused bits. */
static void lane_ops_run_in_registers(void **state) {
  (void)state;
  same_results(
      "func.func @main() -> (tensor<600007xf32>, tensor<600007xf32>) {\n"
      RAMP_X
      "  %x2 = stablehlo.multiply %x, %x : tensor<600007xf32>\n"
      "  %x3 = stablehlo.multiply %x2, %x : tensor<600007xf32>\n"
      "  %c = stablehlo.constant dense<0.044715> : tensor<f32>\n"
      "  %cb = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<f32>) -> "
      "tensor<600007xf32>\n"
      "  %k = stablehlo.multiply %cb, %x3 : tensor<600007xf32>\n"
      "  %u = stablehlo.add %x, %k : tensor<600007xf32>\n"
      "  %t = stablehlo.tanh %u : tensor<600007xf32>\n"
      "  %v = stablehlo.subtract %t, %x2 : tensor<600007xf32>\n"
      "  %e = stablehlo.exponential %v : tensor<600007xf32>\n"
      "  %m = stablehlo.maximum %e, %t : tensor<600007xf32>\n"
      "  %n = stablehlo.negate %m : tensor<600007xf32>\n"
      "  %l = stablehlo.logistic %n : tensor<600007xf32>\n"
      "  %d = stablehlo.divide %l, %x : tensor<600007xf32>\n"
      "  %q = stablehlo.minimum %d, %cb : tensor<600007xf32>\n"
      "  %y = stablehlo.sqrt %x : tensor<600007xf32>\n"
      "  %z = stablehlo.abs %y : tensor<600007xf32>\n"
      "  %w = stablehlo.add %q, %z : tensor<600007xf32>\n"
      "  func.return %u, %w : tensor<600007xf32>, tensor<600007xf32>\n}\n",
      "fused(broadcast_in_dim, multiply, broadcast_in_dim, subtract, "
      "multiply, multiply, broadcast_in_dim, multiply, add, tanh, subtract, "
      "exponential, maximum, negate, logistic, divide, minimum, sqrt, abs, "
      "add) [broadcasts the same in every chunk: 0 filled once, 3 read as "
      "one element] [in registers: 17 ops, 6 values stored]");
}

static void select_convert_and_compare_fuse(void **state) {
  (void)state;
  same_results(
      "func.func @main() -> (tensor<70x100xi32>, tensor<70x100xi1>) {\n"
      "  %x = stablehlo.iota dim = 1 : tensor<70x100xf64>\n"
      "  %y = stablehlo.iota dim = 0 : tensor<70x100xf64>\n"
      "  %p = stablehlo.compare LT, %x, %y, FLOAT : (tensor<70x100xf64>, "
      "tensor<70x100xf64>) -> tensor<70x100xi1>\n"
      "  %m = stablehlo.select %p, %x, %y : tensor<70x100xi1>, "
      "tensor<70x100xf64>\n"
      "  %t = stablehlo.constant dense<true> : tensor<i1>\n"
      "  %m2 = stablehlo.select %t, %m, %x : tensor<i1>, tensor<70x100xf64>\n"
      "  %h = stablehlo.convert %m2 : (tensor<70x100xf64>) -> "
      "tensor<70x100xbf16>\n"
      "  %i = stablehlo.convert %h : (tensor<70x100xbf16>) -> "
      "tensor<70x100xi32>\n"
      "  %k = stablehlo.multiply %i, %i : tensor<70x100xi32>\n"
      "  func.return %k, %p : tensor<70x100xi32>, tensor<70x100xi1>\n}\n",
      "fused(compare, select, select, convert, convert, multiply)");
}

static void broadcasts_of_rows_and_columns_read_in_place(void **state) {
  (void)state;
  same_results(
      "func.func @main() -> tensor<70x100xf32> {\n"
      "  %x = stablehlo.iota dim = 1 : tensor<70x100xf32>\n"
      "  %r = stablehlo.iota dim = 0 : tensor<70xf32>\n"
      "  %c = stablehlo.iota dim = 0 : tensor<100xf32>\n"
      "  %u = stablehlo.iota dim = 1 : tensor<1x100xf32>\n"
      "  %rb = stablehlo.broadcast_in_dim %r, dims = [0] : (tensor<70xf32>) "
      "-> tensor<70x100xf32>\n"
      "  %a = stablehlo.subtract %x, %rb : tensor<70x100xf32>\n"
      "  %cb = stablehlo.broadcast_in_dim %c, dims = [1] : (tensor<100xf32>) "
      "-> tensor<70x100xf32>\n"
      "  %b = stablehlo.multiply %a, %cb : tensor<70x100xf32>\n"
      "  %ub = stablehlo.broadcast_in_dim %u, dims = [0, 1] : "
      "(tensor<1x100xf32>) -> tensor<70x100xf32>\n"
      "  %e = stablehlo.add %b, %ub : tensor<70x100xf32>\n"
      "  func.return %e : tensor<70x100xf32>\n}\n",
      "fused(broadcast_in_dim, subtract, broadcast_in_dim, multiply, "
      "broadcast_in_dim, add)");
}

static void transposing_broadcasts_read_strided(void **state) {
  (void)state;
  same_results(
      "func.func @main() -> tensor<50x30x4xf64> {\n"
      "  %x = stablehlo.iota dim = 2 : tensor<50x30x4xf64>\n"
      "  %t = stablehlo.iota dim = 1 : tensor<30x50xf64>\n"
      "  %tb = stablehlo.broadcast_in_dim %t, dims = [1, 0] : "
      "(tensor<30x50xf64>) -> tensor<50x30x4xf64>\n"
      "  %a = stablehlo.add %x, %tb : tensor<50x30x4xf64>\n"
      "  %s = stablehlo.constant dense<2.5> : tensor<f64>\n"
      "  %sb = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f64>) -> "
      "tensor<50x30x4xf64>\n"
      "  %m = stablehlo.multiply %a, %sb : tensor<50x30x4xf64>\n"
      "  func.return %m : tensor<50x30x4xf64>\n}\n",
      "fused(broadcast_in_dim, add, broadcast_in_dim, multiply)");
}

/* Slices of a larger value feed a run in place, copied a chunk at a time
 * into scratch (an LSTM's four gates cut from one product's columns, in a
 * lane program), and strided slices of a rank-3 value: the bits the copies
 * give, each slice read from its own start (an offset dropped or a stride
 * taken as 1 reads other elements). */
static void slices_feed_a_run_in_place(void **state) {
  (void)state;
  same_results(
      "func.func @main() -> (tensor<32x512xf32>, tensor<32x512xf32>) {\n"
      "  %j = stablehlo.iota dim = 1 : tensor<32x2048xf32>\n"
      "  %i = stablehlo.iota dim = 0 : tensor<32x2048xf32>\n"
      "  %k = stablehlo.constant dense<0.0013> : tensor<32x2048xf32>\n"
      "  %a = stablehlo.multiply %j, %k : tensor<32x2048xf32>\n"
      "  %g = stablehlo.subtract %a, %i : tensor<32x2048xf32>\n"
      "  %c = stablehlo.sine %i : tensor<32x2048xf32>\n"
      "  %x = stablehlo.add %g, %c : tensor<32x2048xf32>\n"
      "  %s0 = stablehlo.slice %x [0:32, 0:512] : (tensor<32x2048xf32>) -> "
      "tensor<32x512xf32>\n"
      "  %s1 = stablehlo.slice %x [0:32, 512:1024] : (tensor<32x2048xf32>) "
      "-> tensor<32x512xf32>\n"
      "  %s2 = stablehlo.slice %x [0:32, 1024:1536] : (tensor<32x2048xf32>) "
      "-> tensor<32x512xf32>\n"
      "  %s3 = stablehlo.slice %x [0:32, 1536:2048] : (tensor<32x2048xf32>) "
      "-> tensor<32x512xf32>\n"
      "  %n = stablehlo.negate %s1 : tensor<32x512xf32>\n"
      "  %e = stablehlo.exponential %n : tensor<32x512xf32>\n"
      "  %t = stablehlo.tanh %s2 : tensor<32x512xf32>\n"
      "  %m = stablehlo.multiply %e, %t : tensor<32x512xf32>\n"
      "  %l = stablehlo.logistic %s0 : tensor<32x512xf32>\n"
      "  %h = stablehlo.add %m, %l : tensor<32x512xf32>\n"
      "  %q = stablehlo.divide %h, %s3 : tensor<32x512xf32>\n"
      "  func.return %q, %h : tensor<32x512xf32>, tensor<32x512xf32>\n}\n",
      "fused(slice, slice, slice, slice, negate, exponential, tanh, "
      "multiply, logistic, add, divide) [in registers: 7 ops");
  same_results(
      "func.func @main() -> tensor<4x64x64xf64> {\n"
      "  %a = stablehlo.iota dim = 0 : tensor<10x64x130xf64>\n"
      "  %b = stablehlo.iota dim = 2 : tensor<10x64x130xf64>\n"
      "  %c = stablehlo.iota dim = 1 : tensor<10x64x130xf64>\n"
      "  %k = stablehlo.constant dense<1000.0> : tensor<10x64x130xf64>\n"
      "  %ak = stablehlo.multiply %a, %k : tensor<10x64x130xf64>\n"
      "  %ab = stablehlo.add %ak, %b : tensor<10x64x130xf64>\n"
      "  %x = stablehlo.atan2 %ab, %c : tensor<10x64x130xf64>\n"
      "  %y = stablehlo.iota dim = 1 : tensor<4x64x64xf64>\n"
      "  %s = \"stablehlo.slice\"(%x) {start_indices = array<i64: 1, 0, 2>, "
      "limit_indices = array<i64: 9, 64, 130>, strides = array<i64: 2, 1, "
      "2>} : (tensor<10x64x130xf64>) -> tensor<4x64x64xf64>\n"
      "  %w = stablehlo.multiply %s, %y : tensor<4x64x64xf64>\n"
      "  %z = stablehlo.add %w, %s : tensor<4x64x64xf64>\n"
      "  func.return %z : tensor<4x64x64xf64>\n}\n",
      "fused(slice, multiply, add)");
}

/* Pseudo-random f32 values of shape S (a string like "96x130") from two
 * iotas: %x = 4 sin(1.3 i + 0.7 j + 0.01 i j). */
#define WAVY(S)                                                              \
  "  %i = stablehlo.iota dim = 0 : tensor<" S "xf32>\n"                      \
  "  %j = stablehlo.iota dim = 1 : tensor<" S "xf32>\n"                      \
  "  %ka = stablehlo.constant dense<1.3> : tensor<" S "xf32>\n"              \
  "  %kb = stablehlo.constant dense<0.7> : tensor<" S "xf32>\n"              \
  "  %kc = stablehlo.constant dense<0.01> : tensor<" S "xf32>\n"             \
  "  %k4 = stablehlo.constant dense<4.0> : tensor<" S "xf32>\n"              \
  "  %ia = stablehlo.multiply %i, %ka : tensor<" S "xf32>\n"                 \
  "  %jb = stablehlo.multiply %j, %kb : tensor<" S "xf32>\n"                 \
  "  %ij = stablehlo.multiply %i, %j : tensor<" S "xf32>\n"                  \
  "  %ijc = stablehlo.multiply %ij, %kc : tensor<" S "xf32>\n"               \
  "  %s1 = stablehlo.add %ia, %jb : tensor<" S "xf32>\n"                     \
  "  %s2 = stablehlo.add %s1, %ijc : tensor<" S "xf32>\n"                    \
  "  %sn = stablehlo.sine %s2 : tensor<" S "xf32>\n"                         \
  "  %x0 = stablehlo.multiply %sn, %k4 : tensor<" S "xf32>\n"

/* Softmax over rows, the row maximum returned too: one rows group whose
 * row value is also a result. */
static void softmax_rows_fuse_around_both_reductions(void **state) {
  (void)state;
  same_results(
      "func.func @main() -> (tensor<96x130xf32>, tensor<96xf32>) {\n"
      WAVY("96x130")
      "  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"
      "  %m = stablehlo.reduce(%x0 init: %ninf) applies stablehlo.maximum "
      "across dimensions = [1] : (tensor<96x130xf32>, tensor<f32>) -> "
      "tensor<96xf32>\n"
      "  %mb = stablehlo.broadcast_in_dim %m, dims = [0] : (tensor<96xf32>) "
      "-> tensor<96x130xf32>\n"
      "  %d = stablehlo.subtract %x0, %mb : tensor<96x130xf32>\n"
      "  %e = stablehlo.exponential %d : tensor<96x130xf32>\n"
      "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %s = stablehlo.reduce(%e init: %z) applies stablehlo.add across "
      "dimensions = [1] : (tensor<96x130xf32>, tensor<f32>) -> "
      "tensor<96xf32>\n"
      "  %sb = stablehlo.broadcast_in_dim %s, dims = [0] : (tensor<96xf32>) "
      "-> tensor<96x130xf32>\n"
      "  %y = stablehlo.divide %e, %sb : tensor<96x130xf32>\n"
      "  func.return %y, %m : tensor<96x130xf32>, tensor<96xf32>\n}\n",
      "sine, multiply, reduce, broadcast_in_dim, subtract, exponential, "
      "reduce, broadcast_in_dim, divide)");
}

/* Layernorm where rows and columns have the same length (64x64): the
 * column vector gamma (broadcast along dims = [1]) and a row-shaped
 * argument added to the row means must each be read as what they are. */
static void square_layernorm_tells_rows_from_columns(void **state) {
  (void)state;
  same_results(
      "func.func @main() -> tensor<64x64xf32> {\n"
      WAVY("64x64")
      "  %g = stablehlo.iota dim = 0 : tensor<64xf32>\n"
      "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %s = stablehlo.reduce(%x0 init: %z) applies stablehlo.add across "
      "dimensions = [1] : (tensor<64x64xf32>, tensor<f32>) -> "
      "tensor<64xf32>\n"
      "  %n = stablehlo.constant dense<64.0> : tensor<64xf32>\n"
      "  %mean = stablehlo.divide %s, %n : tensor<64xf32>\n"
      "  %shift = stablehlo.add %mean, %g : tensor<64xf32>\n"
      "  %mb = stablehlo.broadcast_in_dim %shift, dims = [0] : "
      "(tensor<64xf32>) -> tensor<64x64xf32>\n"
      "  %c = stablehlo.subtract %x0, %mb : tensor<64x64xf32>\n"
      "  %sq = stablehlo.multiply %c, %c : tensor<64x64xf32>\n"
      "  %v = stablehlo.reduce(%sq init: %z) applies stablehlo.add across "
      "dimensions = [1] : (tensor<64x64xf32>, tensor<f32>) -> "
      "tensor<64xf32>\n"
      "  %r = stablehlo.rsqrt %v : tensor<64xf32>\n"
      "  %rb = stablehlo.broadcast_in_dim %r, dims = [0] : (tensor<64xf32>) "
      "-> tensor<64x64xf32>\n"
      "  %y = stablehlo.multiply %c, %rb : tensor<64x64xf32>\n"
      "  %gb = stablehlo.broadcast_in_dim %g, dims = [1] : (tensor<64xf32>) "
      "-> tensor<64x64xf32>\n"
      "  %o = stablehlo.multiply %y, %gb : tensor<64x64xf32>\n"
      "  func.return %o : tensor<64x64xf32>\n}\n",
      "fused_rows(");
}

/* A row value broadcast along the wrong dimension (dims = [1]: element r
 * goes to column r) cannot be read block by block: the group must end
 * before it, and the results stay the unfused ones. */
static void a_row_value_broadcast_across_columns_ends_the_group(void **state) {
  (void)state;
  same_results(
      "func.func @main() -> tensor<64x64xf32> {\n"
      WAVY("64x64")
      "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %s = stablehlo.reduce(%x0 init: %z) applies stablehlo.add across "
      "dimensions = [1] : (tensor<64x64xf32>, tensor<f32>) -> "
      "tensor<64xf32>\n"
      "  %sb = stablehlo.broadcast_in_dim %s, dims = [1] : (tensor<64xf32>) "
      "-> tensor<64x64xf32>\n"
      "  %y = stablehlo.subtract %x0, %sb : tensor<64x64xf32>\n"
      "  func.return %y : tensor<64x64xf32>\n}\n",
      "fused(");
}

/* Rank 3, the last dimension reduced by maximum and minimum, with NaNs
 * (the first NaN of a row wins, payload and all) and signed zeros
 * (maximum prefers +0, minimum -0) in some rows. */
static void rank3_rows_keep_nan_and_signed_zero_rules(void **state) {
  (void)state;
  same_results(
      "func.func @main() -> (tensor<8x20x40xf32>, tensor<8x20xf32>) {\n"
      "  %i = stablehlo.iota dim = 1 : tensor<8x20x40xf32>\n"
      "  %j = stablehlo.iota dim = 2 : tensor<8x20x40xf32>\n"
      "  %k = stablehlo.iota dim = 0 : tensor<8x20x40xf32>\n"
      "  %a = stablehlo.multiply %i, %j : tensor<8x20x40xf32>\n"
      "  %b = stablehlo.add %a, %k : tensor<8x20x40xf32>\n"
      "  %x = stablehlo.cosine %b : tensor<8x20x40xf32>\n"
      "  %c7 = stablehlo.constant dense<7.0> : tensor<8x20x40xf32>\n"
      "  %c3 = stablehlo.constant dense<3.0> : tensor<8x20x40xf32>\n"
      "  %nanpos = stablehlo.compare EQ, %i, %c7 : (tensor<8x20x40xf32>, "
      "tensor<8x20x40xf32>) -> tensor<8x20x40xi1>\n"
      "  %zpos = stablehlo.compare EQ, %i, %c3 : (tensor<8x20x40xf32>, "
      "tensor<8x20x40xf32>) -> tensor<8x20x40xi1>\n"
      "  %jpos = stablehlo.compare GT, %j, %c7 : (tensor<8x20x40xf32>, "
      "tensor<8x20x40xf32>) -> tensor<8x20x40xi1>\n"
      "  %nanat = stablehlo.and %nanpos, %jpos : tensor<8x20x40xi1>\n"
      "  %nan1 = stablehlo.constant dense<0x7FC00001> : tensor<8x20x40xf32>\n"
      "  %negz = stablehlo.constant dense<-0.0> : tensor<8x20x40xf32>\n"
      "  %zz = stablehlo.multiply %x, %negz : tensor<8x20x40xf32>\n"
      "  %x1 = stablehlo.select %nanat, %nan1, %x : tensor<8x20x40xi1>, "
      "tensor<8x20x40xf32>\n"
      "  %x2 = stablehlo.select %zpos, %zz, %x1 : tensor<8x20x40xi1>, "
      "tensor<8x20x40xf32>\n"
      "  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"
      "  %pinf = stablehlo.constant dense<0x7F800000> : tensor<f32>\n"
      "  %mx = stablehlo.reduce(%x2 init: %ninf) applies stablehlo.maximum "
      "across dimensions = [2] : (tensor<8x20x40xf32>, tensor<f32>) -> "
      "tensor<8x20xf32>\n"
      "  %mn = stablehlo.reduce(%x2 init: %pinf) applies stablehlo.minimum "
      "across dimensions = [2] : (tensor<8x20x40xf32>, tensor<f32>) -> "
      "tensor<8x20xf32>\n"
      "  %d = stablehlo.subtract %mx, %mn : tensor<8x20xf32>\n"
      "  %db = stablehlo.broadcast_in_dim %d, dims = [0, 1] : "
      "(tensor<8x20xf32>) -> tensor<8x20x40xf32>\n"
      "  %y = stablehlo.multiply %x2, %db : tensor<8x20x40xf32>\n"
      "  func.return %y, %mx : tensor<8x20x40xf32>, tensor<8x20xf32>\n}\n",
      "reduce, reduce, subtract, broadcast_in_dim, multiply)");
}

/* Layernorm on 50 rows of 300 (f32 sums: blocks of 16 rows, the last
 * one 2 rows): the broadcasts of the scalars and gamma scaled by a scalar
 * are the same in every block and computed once; gamma's and beta's
 * broadcasts along the rows are read in place; the mean's and the
 * inverse deviation's broadcasts along their rows are read as one element
 * per row; a row-shaped argument broadcast along the columns (dims = [0])
 * differs from row to row and is filled. */
static void layernorm_computes_what_every_block_shares_once(void **state) {
  (void)state;
  same_results(
      "func.func @main() -> tensor<50x300xf32> {\n"
      WAVY("50x300")
      "  %g = stablehlo.iota dim = 0 : tensor<300xf32>\n"
      "  %bt = stablehlo.iota dim = 0 : tensor<300xf32>\n"
      "  %sh = stablehlo.iota dim = 0 : tensor<50xf32>\n"
      "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %n = stablehlo.constant dense<300.0> : tensor<f32>\n"
      "  %half = stablehlo.constant dense<0.5> : tensor<f32>\n"
      "  %s = stablehlo.reduce(%x0 init: %z) applies stablehlo.add across "
      "dimensions = [1] : (tensor<50x300xf32>, tensor<f32>) -> "
      "tensor<50xf32>\n"
      "  %nb = stablehlo.broadcast_in_dim %n, dims = [] : (tensor<f32>) -> "
      "tensor<50xf32>\n"
      "  %mean = stablehlo.divide %s, %nb : tensor<50xf32>\n"
      "  %mb = stablehlo.broadcast_in_dim %mean, dims = [0] : "
      "(tensor<50xf32>) -> tensor<50x300xf32>\n"
      "  %c = stablehlo.subtract %x0, %mb : tensor<50x300xf32>\n"
      "  %shb = stablehlo.broadcast_in_dim %sh, dims = [0] : "
      "(tensor<50xf32>) -> tensor<50x300xf32>\n"
      "  %c2 = stablehlo.add %c, %shb : tensor<50x300xf32>\n"
      "  %sq = stablehlo.multiply %c2, %c2 : tensor<50x300xf32>\n"
      "  %v = stablehlo.reduce(%sq init: %z) applies stablehlo.add across "
      "dimensions = [1] : (tensor<50x300xf32>, tensor<f32>) -> "
      "tensor<50xf32>\n"
      "  %r = stablehlo.rsqrt %v : tensor<50xf32>\n"
      "  %rb = stablehlo.broadcast_in_dim %r, dims = [0] : (tensor<50xf32>) "
      "-> tensor<50x300xf32>\n"
      "  %y = stablehlo.multiply %c2, %rb : tensor<50x300xf32>\n"
      "  %gb = stablehlo.broadcast_in_dim %g, dims = [1] : (tensor<300xf32>) "
      "-> tensor<50x300xf32>\n"
      "  %hb = stablehlo.broadcast_in_dim %half, dims = [] : (tensor<f32>) "
      "-> tensor<50x300xf32>\n"
      "  %gh = stablehlo.multiply %gb, %hb : tensor<50x300xf32>\n"
      "  %o = stablehlo.multiply %y, %gh : tensor<50x300xf32>\n"
      "  %bb = stablehlo.broadcast_in_dim %bt, dims = [1] : "
      "(tensor<300xf32>) -> tensor<50x300xf32>\n"
      "  %out = stablehlo.add %o, %bb : tensor<50x300xf32>\n"
      "  func.return %out : tensor<50x300xf32>\n}\n",
      /* once: nb, hb, gh; in place: gb, bb; one element: mb, rb; read
       * only by the members right after them, one row at a time: c (not
       * c2, which a member after the second reduction reads, nor shb,
       * which the second reduction's tile program reads over the block),
       * y, o.  That reduction computes c, c2 and sq on tiles, from x0,
       * and sq, which it alone reads, is never stored; rows of 300 are too short for lane
       * programs, so c2 stays in its segment. */
      "[blocks of 64 rows; 3 members once, 2 read in place, 2 read as one "
      "element per row, 0 streamed, 3 kept to one row] [1 sum on tiles: 3 "
      "ops, 1 value never stored, 0 moved to a later segment]");
}

/* Layernorm on 800 rows of 700 (a result past SHLO_STREAM_MIN_BYTES; rows
 * of two whole program blocks and a tail): the second reduction computes
 * its operand (subtract the mean, square) on tiles, the square never
 * stored; the deviation moves to the segment after it, whose lane
 * program computes it again and scales it (by the inverse deviation, by
 * gamma, adds beta) a row at a time, the result streamed straight from
 * it; the unfused bits. */
static void layernorm_segments_run_in_registers(void **state) {
  (void)state;
  same_results(
      "func.func @main() -> tensor<800x700xf32> {\n"
      WAVY("800x700")
      "  %g = stablehlo.iota dim = 0 : tensor<700xf32>\n"
      "  %bt = stablehlo.iota dim = 0 : tensor<700xf32>\n"
      "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %n = stablehlo.constant dense<700.0> : tensor<f32>\n"
      "  %s = stablehlo.reduce(%x0 init: %z) applies stablehlo.add across "
      "dimensions = [1] : (tensor<800x700xf32>, tensor<f32>) -> "
      "tensor<800xf32>\n"
      "  %nb = stablehlo.broadcast_in_dim %n, dims = [] : (tensor<f32>) -> "
      "tensor<800xf32>\n"
      "  %mean = stablehlo.divide %s, %nb : tensor<800xf32>\n"
      "  %mb = stablehlo.broadcast_in_dim %mean, dims = [0] : "
      "(tensor<800xf32>) -> tensor<800x700xf32>\n"
      "  %c = stablehlo.subtract %x0, %mb : tensor<800x700xf32>\n"
      "  %sq = stablehlo.multiply %c, %c : tensor<800x700xf32>\n"
      "  %v = stablehlo.reduce(%sq init: %z) applies stablehlo.add across "
      "dimensions = [1] : (tensor<800x700xf32>, tensor<f32>) -> "
      "tensor<800xf32>\n"
      "  %r = stablehlo.rsqrt %v : tensor<800xf32>\n"
      "  %rb = stablehlo.broadcast_in_dim %r, dims = [0] : (tensor<800xf32>) "
      "-> tensor<800x700xf32>\n"
      "  %y = stablehlo.multiply %c, %rb : tensor<800x700xf32>\n"
      "  %gb = stablehlo.broadcast_in_dim %g, dims = [1] : (tensor<700xf32>) "
      "-> tensor<800x700xf32>\n"
      "  %o = stablehlo.multiply %y, %gb : tensor<800x700xf32>\n"
      "  %bb = stablehlo.broadcast_in_dim %bt, dims = [1] : "
      "(tensor<700xf32>) -> tensor<800x700xf32>\n"
      "  %out = stablehlo.add %o, %bb : tensor<800x700xf32>\n"
      "  func.return %out : tensor<800x700xf32>\n}\n",
      "1 streamed, 3 kept to one row] [in registers: 4 ops] [1 sum on "
      "tiles: 2 ops, 1 value never stored, 1 moved to a later segment]");
}

/* A sum computed on tiles from every kind of operand: the rows (x), a
 * row's one element (the mean), one row shared by all (gamma, in place),
 * a scalar filled once, and a value of its own read back past the next
 * instruction (d, read by q).  129 rows of 600: blocks of 64 rows and a
 * block of one (each member then computed in its place); tiles of 512
 * columns and of 88 (5 blocks of 16 and 8 columns one at a time).  d is read
 * after the sum too and moves to the segment there; e and q, which only
 * the sum reads, are never stored.  The unfused bits. */
static void sums_on_tiles_read_every_kind_of_operand(void **state) {
  (void)state;
  same_results(
      "func.func @main() -> (tensor<129x600xf32>, tensor<129xf32>) {\n"
      WAVY("129x600")
      "  %g = stablehlo.iota dim = 0 : tensor<600xf32>\n"
      "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %n = stablehlo.constant dense<600.0> : tensor<f32>\n"
      "  %t = stablehlo.constant dense<0.25> : tensor<f32>\n"
      "  %s = stablehlo.reduce(%x0 init: %z) applies stablehlo.add across "
      "dimensions = [1] : (tensor<129x600xf32>, tensor<f32>) -> "
      "tensor<129xf32>\n"
      "  %nb = stablehlo.broadcast_in_dim %n, dims = [] : (tensor<f32>) -> "
      "tensor<129xf32>\n"
      "  %mean = stablehlo.divide %s, %nb : tensor<129xf32>\n"
      "  %mb = stablehlo.broadcast_in_dim %mean, dims = [0] : "
      "(tensor<129xf32>) -> tensor<129x600xf32>\n"
      "  %d = stablehlo.subtract %x0, %mb : tensor<129x600xf32>\n"
      "  %gb = stablehlo.broadcast_in_dim %g, dims = [1] : (tensor<600xf32>) "
      "-> tensor<129x600xf32>\n"
      "  %e = stablehlo.multiply %d, %gb : tensor<129x600xf32>\n"
      "  %tb = stablehlo.broadcast_in_dim %t, dims = [] : (tensor<f32>) -> "
      "tensor<129x600xf32>\n"
      "  %et = stablehlo.multiply %e, %tb : tensor<129x600xf32>\n"
      "  %q = stablehlo.multiply %et, %d : tensor<129x600xf32>\n"
      "  %v = stablehlo.reduce(%q init: %z) applies stablehlo.add across "
      "dimensions = [1] : (tensor<129x600xf32>, tensor<f32>) -> "
      "tensor<129xf32>\n"
      "  %r = stablehlo.rsqrt %v : tensor<129xf32>\n"
      "  %rb = stablehlo.broadcast_in_dim %r, dims = [0] : (tensor<129xf32>) "
      "-> tensor<129x600xf32>\n"
      "  %y = stablehlo.multiply %d, %rb : tensor<129x600xf32>\n"
      "  func.return %y, %v : tensor<129x600xf32>, tensor<129xf32>\n}\n",
      "[1 sum on tiles: 4 ops, 3 values never stored, 1 moved to a later "
      "segment]");
}

/* A sum of squares of a value from outside the group (an iota, varying
 * along the rows).  70 rows: a block of 64 and one of 6, a tile of 16
 * rows only partly filled.  The unfused bits. */
static void a_sum_on_tiles_of_an_outside_value(void **state) {
  (void)state;
  same_results(
      "func.func @main() -> tensor<70x600xf32> {\n"
      "  %x = stablehlo.iota dim = 1 : tensor<70x600xf32>\n"
      "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %k = stablehlo.constant dense<0.001> : tensor<70x600xf32>\n"
      "  %xk = stablehlo.multiply %x, %k : tensor<70x600xf32>\n"
      "  %sq = stablehlo.multiply %xk, %xk : tensor<70x600xf32>\n"
      "  %v = stablehlo.reduce(%sq init: %z) applies stablehlo.add across "
      "dimensions = [1] : (tensor<70x600xf32>, tensor<f32>) -> "
      "tensor<70xf32>\n"
      "  %r = stablehlo.rsqrt %v : tensor<70xf32>\n"
      "  %rb = stablehlo.broadcast_in_dim %r, dims = [0] : (tensor<70xf32>) "
      "-> tensor<70x600xf32>\n"
      "  %y = stablehlo.multiply %x, %rb : tensor<70x600xf32>\n"
      "  func.return %y : tensor<70x600xf32>\n}\n",
      "[1 sum on tiles: 2 ops, 2 values never stored, 0 moved to a later "
      "segment]");
}

/* The deviation would move to the segment after the variance, but that
 * segment's program has no room (33 more operands from outside): the
 * group goes back to storing what the sum reads, as before tiles, and
 * gives the same bits. */
static void a_segment_without_room_undoes_the_tiles(void **state) {
  (void)state;
  enum { CAP = 16384 };
  char *text = malloc(CAP);
  assert_non_null(text);
  int n = snprintf(
      text, CAP,
      "func.func @main() -> tensor<64x600xf32> {\n%s"
      "  %%z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %%s = stablehlo.reduce(%%x0 init: %%z) applies stablehlo.add across "
      "dimensions = [1] : (tensor<64x600xf32>, tensor<f32>) -> "
      "tensor<64xf32>\n"
      "  %%mb = stablehlo.broadcast_in_dim %%s, dims = [0] : "
      "(tensor<64xf32>) -> tensor<64x600xf32>\n"
      "  %%d = stablehlo.subtract %%x0, %%mb : tensor<64x600xf32>\n"
      "  %%sq = stablehlo.multiply %%d, %%d : tensor<64x600xf32>\n"
      "  %%v = stablehlo.reduce(%%sq init: %%z) applies stablehlo.add across "
      "dimensions = [1] : (tensor<64x600xf32>, tensor<f32>) -> "
      "tensor<64xf32>\n"
      "  %%vb = stablehlo.broadcast_in_dim %%v, dims = [0] : "
      "(tensor<64xf32>) -> tensor<64x600xf32>\n"
      "  %%y0 = stablehlo.multiply %%d, %%vb : tensor<64x600xf32>\n",
      WAVY("64x600"));
  for (int k = 1; k <= 33; k++)
    n += snprintf(text + n, CAP - n,
                  "  %%c%d = stablehlo.constant dense<1.%02d> : "
                  "tensor<64x600xf32>\n"
                  "  %%y%d = stablehlo.multiply %%y%d, %%c%d : "
                  "tensor<64x600xf32>\n",
                  k, k, k, k - 1, k);
  snprintf(text + n, CAP - n,
           "  func.return %%y33 : tensor<64x600xf32>\n}\n");
  same_results(text, "fused_rows(");
  run_result a = run(text, true);
  if (strstr(a.plan, "on tiles")) fail_msg("tiles kept:\n%s", a.plan);
  release(&a);
  free(text);
}

/* A sum whose operand another member reads too is folded from its stored
 * value, as before: computing it twice would cost more than storing it
 * (softmax's exponentials). */
static void a_sum_of_a_value_read_again_stays_off_tiles(void **state) {
  (void)state;
  run_result a = run(
      "func.func @main() -> tensor<64x600xf32> {\n"
      WAVY("64x600")
      "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %sq = stablehlo.multiply %x0, %x0 : tensor<64x600xf32>\n"
      "  %v = stablehlo.reduce(%sq init: %z) applies stablehlo.add across "
      "dimensions = [1] : (tensor<64x600xf32>, tensor<f32>) -> "
      "tensor<64xf32>\n"
      "  %vb = stablehlo.broadcast_in_dim %v, dims = [0] : (tensor<64xf32>) "
      "-> tensor<64x600xf32>\n"
      "  %y = stablehlo.divide %sq, %vb : tensor<64x600xf32>\n"
      "  func.return %y : tensor<64x600xf32>\n}\n",
      true);
  if (!strstr(a.plan, "fused_rows(")) fail_msg("no rows group:\n%s", a.plan);
  if (strstr(a.plan, "on tiles")) fail_msg("tiles:\n%s", a.plan);
  release(&a);
}

/* Rows reduced only by maximum fold one at a time, so 1024-long rows go
 * one row a block: gamma's broadcast along the rows is read in place,
 * the scalar's is filled once, the maximum's is read as one element, and
 * a value that is also a result is written for every row. */
static void long_max_rows_read_row_broadcasts_in_place(void **state) {
  (void)state;
  same_results(
      "func.func @main() -> (tensor<20x1024xf32>, tensor<20x1024xf32>) {\n"
      WAVY("20x1024")
      "  %g = stablehlo.iota dim = 0 : tensor<1024xf32>\n"
      "  %two = stablehlo.constant dense<2.0> : tensor<f32>\n"
      "  %gb = stablehlo.broadcast_in_dim %g, dims = [1] : "
      "(tensor<1024xf32>) -> tensor<20x1024xf32>\n"
      "  %y = stablehlo.multiply %x0, %gb : tensor<20x1024xf32>\n"
      "  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"
      "  %m = stablehlo.reduce(%y init: %ninf) applies stablehlo.maximum "
      "across dimensions = [1] : (tensor<20x1024xf32>, tensor<f32>) -> "
      "tensor<20xf32>\n"
      "  %mb = stablehlo.broadcast_in_dim %m, dims = [0] : (tensor<20xf32>) "
      "-> tensor<20x1024xf32>\n"
      "  %d = stablehlo.subtract %y, %mb : tensor<20x1024xf32>\n"
      "  %tb = stablehlo.broadcast_in_dim %two, dims = [] : (tensor<f32>) "
      "-> tensor<20x1024xf32>\n"
      "  %o = stablehlo.multiply %d, %tb : tensor<20x1024xf32>\n"
      "  func.return %o, %y : tensor<20x1024xf32>, tensor<20x1024xf32>\n}\n",
      "[blocks of 1 row; 1 member once, 1 read in place, 1 read as one "
      "element per row, 0 streamed, 0 kept to one row]");
}

/* Returned results larger than L2 (520 rows of 1023 f32, so most rows
 * start off 16-byte boundaries) are made in scratch and streamed out:
 * the centred rows, which a later member also reads, and their squares,
 * each in one row of scratch, as are the values that make x0 (but x0,
 * which the reduction reads).  The row sums, a row value, are written in
 * place. */
static void big_results_stream_out(void **state) {
  (void)state;
  same_results(
      "func.func @main() -> (tensor<520x1023xf32>, tensor<520x1023xf32>, "
      "tensor<520xf32>) {\n"
      WAVY("520x1023")
      "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %s = stablehlo.reduce(%x0 init: %z) applies stablehlo.add across "
      "dimensions = [1] : (tensor<520x1023xf32>, tensor<f32>) -> "
      "tensor<520xf32>\n"
      "  %sb = stablehlo.broadcast_in_dim %s, dims = [0] : (tensor<520xf32>) "
      "-> tensor<520x1023xf32>\n"
      "  %c = stablehlo.subtract %x0, %sb : tensor<520x1023xf32>\n"
      "  %y = stablehlo.multiply %c, %c : tensor<520x1023xf32>\n"
      "  func.return %y, %c, %s : tensor<520x1023xf32>, "
      "tensor<520x1023xf32>, tensor<520xf32>\n}\n",
      "0 read in place, 1 read as one element per row, 2 streamed, 9 kept "
      "to one row]");
}

/* Broadcasts of one element in a run, over 10007 elements (a tail after
 * the last whole chunk): one that f32 ops read as their first or second
 * operand is read as that element; those read twice by one member, or by
 * ops without such a loop (i32 remainder, complex multiply), are filled
 * once per worker and read by every chunk; one the function returns is
 * written as a result. */
static void run_fills_scalar_broadcasts_once(void **state) {
  (void)state;
  same_results(
      "func.func @main() -> (tensor<10007xf32>, tensor<10007xi32>, "
      "tensor<10007xcomplex<f32>>, tensor<10007xf32>) {\n"
      "  %x = stablehlo.iota dim = 0 : tensor<10007xf32>\n"
      "  %i = stablehlo.iota dim = 0 : tensor<10007xi32>\n"
      "  %c = stablehlo.constant dense<3.5> : tensor<f32>\n"
      "  %cb = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<f32>) -> "
      "tensor<10007xf32>\n"
      "  %a = stablehlo.subtract %cb, %x : tensor<10007xf32>\n"
      "  %b = stablehlo.divide %a, %cb : tensor<10007xf32>\n"
      "  %d = stablehlo.constant dense<0.25> : tensor<f32>\n"
      "  %db = stablehlo.broadcast_in_dim %d, dims = [] : (tensor<f32>) -> "
      "tensor<10007xf32>\n"
      "  %dd = stablehlo.multiply %db, %db : tensor<10007xf32>\n"
      "  %e = stablehlo.add %b, %dd : tensor<10007xf32>\n"
      "  %k = stablehlo.constant dense<7> : tensor<i32>\n"
      "  %kb = stablehlo.broadcast_in_dim %k, dims = [] : (tensor<i32>) -> "
      "tensor<10007xi32>\n"
      "  %q = stablehlo.remainder %i, %kb : tensor<10007xi32>\n"
      "  %z = stablehlo.complex %x, %b : tensor<10007xcomplex<f32>>\n"
      "  %w = stablehlo.constant dense<(1.5, -2.0)> : tensor<complex<f32>>\n"
      "  %wb = stablehlo.broadcast_in_dim %w, dims = [] : "
      "(tensor<complex<f32>>) -> tensor<10007xcomplex<f32>>\n"
      "  %zw = stablehlo.multiply %wb, %z : tensor<10007xcomplex<f32>>\n"
      "  %h = stablehlo.constant dense<-1.0> : tensor<f32>\n"
      "  %hb = stablehlo.broadcast_in_dim %h, dims = [] : (tensor<f32>) -> "
      "tensor<10007xf32>\n"
      "  %g = stablehlo.maximum %e, %hb : tensor<10007xf32>\n"
      "  func.return %g, %q, %zw, %hb : tensor<10007xf32>, "
      "tensor<10007xi32>, tensor<10007xcomplex<f32>>, tensor<10007xf32>\n}\n",
      /* once: db, kb, wb; one: cb; neither: hb (returned) */
      "[broadcasts the same in every chunk: 3 filled once, 1 read as one "
      "element]");
}

/* Row values read as one element by ops with a loop for it (f64 maximum,
 * subtract and divide, the row value first or second) and by one without
 * (i32 remainder, through the splat pieces): the unfused results. */
static void rows_one_element_operands_of_every_loop(void **state) {
  (void)state;
  same_results(
      "func.func @main() -> (tensor<40x700xf64>, tensor<40x700xi32>) {\n"
      "  %i = stablehlo.iota dim = 0 : tensor<40x700xf64>\n"
      "  %j = stablehlo.iota dim = 1 : tensor<40x700xf64>\n"
      "  %ij = stablehlo.multiply %i, %j : tensor<40x700xf64>\n"
      "  %x = stablehlo.sine %ij : tensor<40x700xf64>\n"
      "  %ninf = stablehlo.constant dense<0xFFF0000000000000> : tensor<f64>\n"
      "  %m = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum "
      "across dimensions = [1] : (tensor<40x700xf64>, tensor<f64>) -> "
      "tensor<40xf64>\n"
      "  %mb = stablehlo.broadcast_in_dim %m, dims = [0] : (tensor<40xf64>) "
      "-> tensor<40x700xf64>\n"
      "  %d = stablehlo.subtract %x, %mb : tensor<40x700xf64>\n"
      "  %mb2 = stablehlo.broadcast_in_dim %m, dims = [0] : (tensor<40xf64>) "
      "-> tensor<40x700xf64>\n"
      "  %q = stablehlo.divide %mb2, %d : tensor<40x700xf64>\n"
      "  %ii = stablehlo.iota dim = 1 : tensor<40x700xi32>\n"
      "  %z = stablehlo.constant dense<0> : tensor<i32>\n"
      "  %s = stablehlo.reduce(%ii init: %z) applies stablehlo.add across "
      "dimensions = [1] : (tensor<40x700xi32>, tensor<i32>) -> "
      "tensor<40xi32>\n"
      "  %sb = stablehlo.broadcast_in_dim %s, dims = [0] : (tensor<40xi32>) "
      "-> tensor<40x700xi32>\n"
      "  %r = stablehlo.remainder %sb, %ii : tensor<40x700xi32>\n"
      "  func.return %q, %r : tensor<40x700xf64>, tensor<40x700xi32>\n}\n",
      "read as one element per row");
}

/* Broadcasts along the last dimensions with a period that divides every
 * chunk (a bias of 32 channels, f32, and of 4x16 f64 values) are filled
 * once per worker; one with a period that does not (3 values) is filled
 * per chunk; over several chunks and workers, the unfused results. */
static void run_fills_periodic_broadcasts_once(void **state) {
  (void)state;
  same_results(
      "func.func @main() -> tensor<16x24x32xf32> {\n"
      "  %x = stablehlo.iota dim = 1 : tensor<16x24x32xf32>\n"
      "  %b = stablehlo.iota dim = 0 : tensor<32xf32>\n"
      "  %bb = stablehlo.broadcast_in_dim %b, dims = [2] : (tensor<32xf32>) "
      "-> tensor<16x24x32xf32>\n"
      "  %a = stablehlo.add %x, %bb : tensor<16x24x32xf32>\n"
      "  %z = stablehlo.constant dense<20.0> : tensor<f32>\n"
      "  %zb = stablehlo.broadcast_in_dim %z, dims = [] : (tensor<f32>) -> "
      "tensor<16x24x32xf32>\n"
      "  %r = stablehlo.maximum %a, %zb : tensor<16x24x32xf32>\n"
      "  func.return %r : tensor<16x24x32xf32>\n}\n",
      "fused(broadcast_in_dim, add, broadcast_in_dim, maximum) [broadcasts "
      "the same in every chunk: 1 filled once, 1 read as one element]");
  same_results(
      "func.func @main() -> tensor<8x40x4x16xf64> {\n"
      "  %y = stablehlo.iota dim = 0 : tensor<8x40x4x16xf64>\n"
      "  %c = stablehlo.iota dim = 1 : tensor<4x16xf64>\n"
      "  %cb = stablehlo.broadcast_in_dim %c, dims = [2, 3] : "
      "(tensor<4x16xf64>) -> tensor<8x40x4x16xf64>\n"
      "  %m = stablehlo.multiply %cb, %y : tensor<8x40x4x16xf64>\n"
      "  %s = stablehlo.sine %m : tensor<8x40x4x16xf64>\n"
      "  func.return %s : tensor<8x40x4x16xf64>\n}\n",
      "fused(broadcast_in_dim, multiply, sine) [broadcasts the same in every "
      "chunk: 1 filled once, 0 read as one element]");
  /* no broadcasts' bracket: the period-3 broadcast is filled chunk by
   * chunk */
  same_results(
      "func.func @main() -> tensor<9000x3xf32> {\n"
      "  %w = stablehlo.iota dim = 0 : tensor<9000x3xf32>\n"
      "  %t = stablehlo.iota dim = 0 : tensor<3xf32>\n"
      "  %tb = stablehlo.broadcast_in_dim %t, dims = [1] : (tensor<3xf32>) "
      "-> tensor<9000x3xf32>\n"
      "  %u = stablehlo.subtract %w, %tb : tensor<9000x3xf32>\n"
      "  %v = stablehlo.multiply %u, %tb : tensor<9000x3xf32>\n"
      "  func.return %v : tensor<9000x3xf32>\n}\n",
      "fused(broadcast_in_dim, subtract, multiply) [in registers: 2 ops, 1 "
      "values stored] (");
}

/* A chain longer than the values alive at once, over more elements than
 * fit L2: members take turns in scratch slots across many chunks (of f64,
 * complex and f32, so chunks shrink to fit L1), a value read far down the
 * chain keeps its slot until then, and the returned results (one read
 * again after it is made) stream out of scratch. */
static void long_runs_reuse_scratch_and_stream_results(void **state) {
  (void)state;
  same_results(
      "func.func @main() -> (tensor<300001xf64>, tensor<300001xcomplex<f32>>,"
      " tensor<300001xf32>) {\n"
      "  %x = stablehlo.iota dim = 0 : tensor<300001xf64>\n"
      "  %c = stablehlo.constant dense<0.001> : tensor<f64>\n"
      "  %cb = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<f64>) -> "
      "tensor<300001xf64>\n"
      "  %a = stablehlo.multiply %x, %cb : tensor<300001xf64>\n"
      "  %b = stablehlo.sine %a : tensor<300001xf64>\n"
      "  %d = stablehlo.cosine %b : tensor<300001xf64>\n"
      "  %e = stablehlo.add %d, %b : tensor<300001xf64>\n"
      "  %f = stablehlo.multiply %e, %e : tensor<300001xf64>\n"
      "  %g = stablehlo.subtract %f, %a : tensor<300001xf64>\n"
      "  %h = stablehlo.convert %g : (tensor<300001xf64>) -> "
      "tensor<300001xf32>\n"
      "  %k = stablehlo.exponential %h : tensor<300001xf32>\n"
      "  %z = stablehlo.complex %h, %k : tensor<300001xcomplex<f32>>\n"
      "  %w = stablehlo.multiply %z, %z : tensor<300001xcomplex<f32>>\n"
      "  %r = stablehlo.real %w : (tensor<300001xcomplex<f32>>) -> "
      "tensor<300001xf32>\n"
      "  %q = stablehlo.tanh %r : tensor<300001xf32>\n"
      "  func.return %g, %w, %q : tensor<300001xf64>, "
      "tensor<300001xcomplex<f32>>, tensor<300001xf32>\n}\n",
      "fused(broadcast_in_dim, multiply, sine, cosine, add, multiply, "
      "subtract, convert, exponential, complex, multiply, real, tanh) "
      "[broadcasts the same in every chunk: 0 filled once, 1 read as one "
      "element]");
}

/* A row maximum broadcast along its rows is read as one element per row
 * as the first operand of a subtraction, over rows of 700 (pieces and a
 * tail); a row sum's broadcast that one member reads twice is filled. */
static void rows_read_row_broadcasts_as_one_element(void **state) {
  (void)state;
  same_results(
      "func.func @main() -> tensor<40x700xf32> {\n"
      WAVY("40x700")
      "  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"
      "  %m = stablehlo.reduce(%x0 init: %ninf) applies stablehlo.maximum "
      "across dimensions = [1] : (tensor<40x700xf32>, tensor<f32>) -> "
      "tensor<40xf32>\n"
      "  %mb = stablehlo.broadcast_in_dim %m, dims = [0] : (tensor<40xf32>) "
      "-> tensor<40x700xf32>\n"
      "  %d = stablehlo.subtract %mb, %x0 : tensor<40x700xf32>\n"
      "  %e = stablehlo.exponential %d : tensor<40x700xf32>\n"
      "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %s = stablehlo.reduce(%e init: %z) applies stablehlo.add across "
      "dimensions = [1] : (tensor<40x700xf32>, tensor<f32>) -> "
      "tensor<40xf32>\n"
      "  %sb = stablehlo.broadcast_in_dim %s, dims = [0] : (tensor<40xf32>) "
      "-> tensor<40x700xf32>\n"
      "  %sq = stablehlo.multiply %sb, %sb : tensor<40x700xf32>\n"
      "  %y = stablehlo.divide %e, %sq : tensor<40x700xf32>\n"
      "  func.return %y : tensor<40x700xf32>\n}\n",
      "1 read as one element per row");
}

static void small_tensors_stay_unfused(void **state) {
  (void)state;
  run_result r = run(
      "func.func @main() -> tensor<100xf32> {\n"
      "  %x = stablehlo.iota dim = 0 : tensor<100xf32>\n"
      "  %a = stablehlo.add %x, %x : tensor<100xf32>\n"
      "  %b = stablehlo.multiply %a, %x : tensor<100xf32>\n"
      "  func.return %b : tensor<100xf32>\n}\n",
      true);
  assert_null(strstr(r.plan, "fused("));
  release(&r);
}

/* A convolution of sine values by cosine ones, NHWC (n x hw x hw x ci by
 * 3 x 3 x ci x co, padding 1, stride st), plus a bias per out-feature
 * (%a), then (unless ret is "%a") the maximum with 0.5 (%r); the function
 * returns `ret`. */
static void conv_program(char *buf, size_t cap, int n, int hw, int ci, int co,
                         int st, const char *ret, const char *ret_types) {
  bool relu = strcmp(ret, "%a") != 0;
  int o = (hw + 2 - 3) / st + 1;
  char in[64], ker[64], out[64];
  snprintf(in, sizeof in, "tensor<%dx%dx%dx%dxf32>", n, hw, hw, ci);
  snprintf(ker, sizeof ker, "tensor<3x3x%dx%dxf32>", ci, co);
  snprintf(out, sizeof out, "tensor<%dx%dx%dx%dxf32>", n, o, o, co);
  int nel = n * hw * hw * ci, kel = 9 * ci * co;
  snprintf(buf, cap,
           "func.func @main() -> (%s) {\n"
           "  %%i = stablehlo.iota dim = 0 : tensor<%dxf32>\n"
           "  %%s = stablehlo.sine %%i : tensor<%dxf32>\n"
           "  %%x = stablehlo.reshape %%s : (tensor<%dxf32>) -> %s\n"
           "  %%j = stablehlo.iota dim = 0 : tensor<%dxf32>\n"
           "  %%c = stablehlo.cosine %%j : tensor<%dxf32>\n"
           "  %%k = stablehlo.reshape %%c : (tensor<%dxf32>) -> %s\n"
           "  %%bv = stablehlo.iota dim = 0 : tensor<%dxf32>\n"
           "  %%y = stablehlo.convolution(%%x, %%k) dim_numbers = "
           "[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = "
           "[%d, %d], pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, "
           "feature_group_count = 1 : i64} : (%s, %s) -> %s\n"
           "  %%bb = stablehlo.broadcast_in_dim %%bv, dims = [3] : "
           "(tensor<%dxf32>) -> %s\n"
           "  %%a = stablehlo.add %%y, %%bb : %s\n"
           "%s%s%s%s%s"
           "  func.return %s : %s\n}\n",
           ret_types, nel, nel, nel, in, kel, kel, kel, ker, co, st, st, in,
           ker, out, co, out, out,
           relu ? "  %z = stablehlo.constant dense<0.5> : tensor<f32>\n"
                  "  %zb = stablehlo.broadcast_in_dim %z, dims = [] : "
                  "(tensor<f32>) -> "
                : "",
           relu ? out : "", relu ? "\n  %r = stablehlo.maximum %a, %zb : " : "",
           relu ? out : "", relu ? "\n" : "", ret, ret_types);
}

static void same_results_without(const char *text, const char *expect,
                                 const char *absent) {
  run_result a = run(text, true);
  if (strstr(a.plan, absent)) fail_msg("plan has '%s':\n%s", absent, a.plan);
  release(&a);
  same_results(text, expect);
}

/* Ops that are not lane ops (sine, compare, select) split a run's lane
 * ops into stretches, each its own lane program: values cross from one
 * stretch to a later one and to the ops between (stored), one is
 * returned from the first stretch and the last streams out: the unfused
 * bits. */
static void lane_programs_run_between_other_ops(void **state) {
  (void)state;
  same_results(
      "func.func @main() -> (tensor<600007xf32>, tensor<600007xf32>) {\n"
      RAMP_X
      "  %a = stablehlo.multiply %x, %x : tensor<600007xf32>\n"
      "  %sn = stablehlo.sine %a : tensor<600007xf32>\n"
      "  %b = stablehlo.multiply %sn, %x : tensor<600007xf32>\n"
      "  %c = stablehlo.tanh %b : tensor<600007xf32>\n"
      "  %d = stablehlo.add %c, %a : tensor<600007xf32>\n"
      "  %p = stablehlo.compare GT, %d, %x : (tensor<600007xf32>, "
      "tensor<600007xf32>) -> tensor<600007xi1>\n"
      "  %q = stablehlo.select %p, %d, %c : tensor<600007xi1>, "
      "tensor<600007xf32>\n"
      "  %e = stablehlo.exponential %q : tensor<600007xf32>\n"
      "  %f = stablehlo.multiply %e, %sn : tensor<600007xf32>\n"
      "  func.return %a, %f : tensor<600007xf32>, tensor<600007xf32>\n}\n",
      "[in registers: 8 ops in 3 programs, 5 values stored]");
}

/* A run of lane ops that reads more outside values than a lane program
 * takes (SHLO_VCHAIN_MAX_IO) runs its members one at a time: the same
 * results, no program. */
static void too_many_inputs_for_a_lane_program(void **state) {
  (void)state;
  enum { K = 40 };
  char text[8192] = "func.func @main() -> tensor<5000xf32> {\n";
  size_t len = strlen(text);
  for (int k = 0; k < K; k++)
    len += (size_t)snprintf(text + len, sizeof text - len,
                            "  %%x%d = stablehlo.iota dim = 0 : "
                            "tensor<5000xf32>\n",
                            k);
  len += (size_t)snprintf(text + len, sizeof text - len,
                          "  %%a1 = stablehlo.add %%x0, %%x1 : "
                          "tensor<5000xf32>\n");
  for (int k = 2; k < K; k++)
    len += (size_t)snprintf(text + len, sizeof text - len,
                            "  %%a%d = stablehlo.multiply %%a%d, %%x%d : "
                            "tensor<5000xf32>\n",
                            k, k - 1, k);
  snprintf(text + len, sizeof text - len,
           "  func.return %%a%d : tensor<5000xf32>\n}\n", K - 1);
  same_results_without(text, "fused(add, multiply, multiply", "[in registers");
}

/* A convolution's bias and ReLU run behind each block of its GEMM (or of
 * the small-window sums), overwriting the block: a result of 2 MB
 * streams out of the same buffer. */
static void conv_epilogues_run_in_place(void **state) {
  (void)state;
  char text[4096];
  conv_program(text, sizeof text, 4, 12, 16, 32, 1, "%r",
               "tensor<4x12x12x32xf32>");
  same_results(text, "convolution [nhwc gemm] + fused(broadcast_in_dim, add, "
                     "broadcast_in_dim, maximum) [broadcasts the same in "
                     "every chunk: 1 filled once, 1 read as one element] "
                     "[in registers: 2 ops, 1 values stored] [in place]");
  conv_program(text, sizeof text, 8, 16, 32, 64, 2, "%r",
               "tensor<8x8x8x64xf32>");
  same_results(text, "convolution [nhwc gemm] + fused(");
  conv_program(text, sizeof text, 16, 32, 3, 32, 1, "%r",
               "tensor<16x32x32x32xf32>");
  same_results(text, "convolution [nhwc small window] + fused(broadcast_in_dim"
                     ", add, broadcast_in_dim, maximum) [broadcasts the same "
                     "in every chunk: 1 filled once, 1 read as one element] "
                     "[in registers: 2 ops, 1 values stored] [in place]");
}

/* Into results of their own: the run has two, or its last member reads
 * the convolution's result itself. */
static void conv_epilogues_with_results_of_their_own(void **state) {
  (void)state;
  static const struct {
    int n, hw, ci, co;
    const char *ret, *ret_types, *expect;
  } cases[] = {
      {4, 12, 16, 24, "%a, %r",
       "tensor<4x12x12x24xf32>, tensor<4x12x12x24xf32>",
       "convolution [nhwc gemm] + fused("},
      {16, 32, 3, 32, "%a", "tensor<16x32x32x32xf32>",
       "convolution [nhwc small window] + fused(broadcast_in_dim, add)"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char text[4096];
    conv_program(text, sizeof text, cases[i].n, cases[i].hw, cases[i].ci,
                 cases[i].co, 1, cases[i].ret, cases[i].ret_types);
    same_results_without(text, cases[i].expect, "[in place]");
  }
}

/* A convolution whose result another step (here the function) reads too
 * keeps its own step. */
static void conv_read_elsewhere_keeps_its_step(void **state) {
  (void)state;
  char text[4096];
  conv_program(text, sizeof text, 4, 12, 16, 24, 1, "%y, %r",
               "tensor<4x12x12x24xf32>, tensor<4x12x12x24xf32>");
  same_results_without(text, "convolution [nhwc gemm] (", " + fused(");
}

/* A convolution of sine values by cosine ones, NHWC (n x hw x hw x ci by
 * win x win x ci x co, padding pad, stride st), plus a bias per
 * out-feature of log(j - 2) (NaN, -inf, then ordinary values), then the
 * maximum with a constant +0: a ReLU. */
static void conv_relu_program(char *buf, size_t cap, int n, int hw, int ci,
                              int co, int win, int st, int pad) {
  int o = (hw + 2 * pad - win) / st + 1;
  char in[64], ker[64], out[64];
  snprintf(in, sizeof in, "tensor<%dx%dx%dx%dxf32>", n, hw, hw, ci);
  snprintf(ker, sizeof ker, "tensor<%dx%dx%dx%dxf32>", win, win, ci, co);
  snprintf(out, sizeof out, "tensor<%dx%dx%dx%dxf32>", n, o, o, co);
  int nel = n * hw * hw * ci, kel = win * win * ci * co;
  snprintf(buf, cap,
           "func.func @main() -> %s {\n"
           "  %%i = stablehlo.iota dim = 0 : tensor<%dxf32>\n"
           "  %%s = stablehlo.sine %%i : tensor<%dxf32>\n"
           "  %%x = stablehlo.reshape %%s : (tensor<%dxf32>) -> %s\n"
           "  %%j = stablehlo.iota dim = 0 : tensor<%dxf32>\n"
           "  %%c = stablehlo.cosine %%j : tensor<%dxf32>\n"
           "  %%k = stablehlo.reshape %%c : (tensor<%dxf32>) -> %s\n"
           "  %%bi = stablehlo.iota dim = 0 : tensor<%dxf32>\n"
           "  %%two = stablehlo.constant dense<2.0> : tensor<%dxf32>\n"
           "  %%bd = stablehlo.subtract %%bi, %%two : tensor<%dxf32>\n"
           "  %%bv = stablehlo.log %%bd : tensor<%dxf32>\n"
           "  %%y = stablehlo.convolution(%%x, %%k) dim_numbers = "
           "[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = "
           "[%d, %d], pad = [[%d, %d], [%d, %d]]} {batch_group_count = 1 : "
           "i64, feature_group_count = 1 : i64} : (%s, %s) -> %s\n"
           "  %%bb = stablehlo.broadcast_in_dim %%bv, dims = [3] : "
           "(tensor<%dxf32>) -> %s\n"
           "  %%a = stablehlo.add %%y, %%bb : %s\n"
           "  %%z = stablehlo.constant dense<0.0> : tensor<f32>\n"
           "  %%zb = stablehlo.broadcast_in_dim %%z, dims = [] : "
           "(tensor<f32>) -> %s\n"
           "  %%r = stablehlo.maximum %%a, %%zb : %s\n"
           "  func.return %%r : %s\n}\n",
           out, nel, nel, nel, in, kel, kel, kel, ker, co, co, co, co, st, st,
           pad, pad, pad, pad, in, ker, out, co, out, out, out, out, out);
}

/* A bias and a ReLU (the maximum with a constant +0) go into the
 * convolution itself (shlo_step.loop.run_bias_relu): in the GEMM by
 * panels' registers on partial panels (24, 40 and 100 out-features) and
 * blocks of rows cut short, strided or not, and over each block on the
 * paths without panels (small windows of 16, 32, 64 out-features and of
 * 20, a 1x1 window on the lhs itself, a window too long for the panels);
 * the bits of the unfused steps, NaN and -inf columns included. */
static void conv_bias_relu_in_the_convolution(void **state) {
  (void)state;
  static const struct {
    int n, hw, ci, co, win, st, pad;
    const char *how;
  } cases[] = {
      {3, 11, 16, 40, 3, 1, 1, "nhwc gemm"},
      {2, 13, 8, 100, 3, 2, 1, "nhwc gemm"},
      {5, 9, 32, 24, 3, 1, 0, "nhwc gemm"},
      {4, 17, 3, 20, 3, 1, 1, "nhwc small window"},
      {4, 17, 3, 32, 3, 1, 1, "nhwc small window"},
      {5, 16, 3, 16, 3, 2, 1, "nhwc small window"},
      {2, 15, 2, 64, 3, 1, 1, "nhwc small window"},
      {2, 9, 40, 33, 1, 1, 0, "nhwc gemm"},
      {4, 8, 520, 30, 3, 1, 1, "nhwc gemm"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char text[8192], expect[256];
    conv_relu_program(text, sizeof text, cases[i].n, cases[i].hw, cases[i].ci,
                      cases[i].co, cases[i].win, cases[i].st, cases[i].pad);
    snprintf(expect, sizeof expect,
             "convolution [%s] + fused(broadcast_in_dim, add, "
             "broadcast_in_dim, maximum)", cases[i].how);
    same_results(text, expect);
    same_results(text, "[in the producer's registers]");
  }
}

/* What is not exactly a bias and ReLU keeps its run behind the blocks:
 * the bias first (of two NaNs the add keeps its first operand's, the GEMM
 * the product's), a maximum with 0.5 (conv_program), a bias along
 * another dimension. */
static void conv_near_bias_relu_keeps_its_run(void **state) {
  (void)state;
  char text[8192];
  conv_relu_program(text, sizeof text, 3, 11, 16, 40, 3, 1, 1);
  char *add = strstr(text, "stablehlo.add %y, %bb");
  assert_non_null(add);
  memcpy(add, "stablehlo.add %bb, %y", strlen("stablehlo.add %bb, %y"));
  same_results_without(text, "convolution [nhwc gemm] + fused(",
                       "[in the producer's registers]");
  conv_program(text, sizeof text, 4, 12, 16, 32, 1, "%r",
               "tensor<4x12x12x32xf32>");
  same_results_without(text, "convolution [nhwc gemm] + fused(",
                       "[in the producer's registers]");
  conv_relu_program(text, sizeof text, 3, 40, 16, 40, 3, 1, 1);
  char *dims = strstr(text, "dims = [3]");
  assert_non_null(dims);
  dims[8] = '2'; /* 40 positions along dimension 2 as well */
  same_results_without(text, "convolution [nhwc gemm] + fused(",
                       "[in the producer's registers]");
}

/* Appends to buf the lines that make %NAME, a tensor<SHAPExf32> of
 * fn (sine, cosine) of 0, 1, ..., n - 1. */
static void wavy_operand(char *buf, size_t cap, const char *name,
                         const char *fn, long n, const char *shape) {
  size_t len = strlen(buf);
  snprintf(buf + len, cap - len,
           "  %%%s_i = stablehlo.iota dim = 0 : tensor<%ldxf32>\n"
           "  %%%s_f = stablehlo.%s %%%s_i : tensor<%ldxf32>\n"
           "  %%%s = stablehlo.reshape %%%s_f : (tensor<%ldxf32>) -> "
           "tensor<%sxf32>\n",
           name, n, name, fn, name, n, name, name, n, shape);
}

/* Scaled rows of a batched product, softmaxed along the rows: the scale
 * in the GEMM's registers (fuse_scale.c), the rows group behind each
 * batch element's GEMM (nb 8 splits over the pool), or behind all of
 * them, a block of rows at a time (nb 3), over the product in place. */
static void dot_softmax_runs_behind_the_gemms(void **state) {
  (void)state;
  static const int batches[] = {8, 3};
  for (int i = 0; i < 2; i++) {
    int nb = batches[i];
    char text[4096];
    char shape[32], tail[3072];
    snprintf(text, sizeof text, "func.func @main() -> tensor<%dx64x48xf32> {\n",
             nb);
    snprintf(shape, sizeof shape, "%dx64x32", nb);
    wavy_operand(text, sizeof text, "q", "sine", nb * 2048L, shape);
    snprintf(shape, sizeof shape, "%dx32x48", nb);
    wavy_operand(text, sizeof text, "k", "cosine", nb * 1536L, shape);
    snprintf(tail, sizeof tail,
             "  %%d = stablehlo.dot_general %%q, %%k, batching_dims = [0] x "
             "[0], contracting_dims = [2] x [1] : (tensor<%dx64x32xf32>, "
             "tensor<%dx32x48xf32>) -> tensor<%dx64x48xf32>\n"
             "  %%sc = stablehlo.constant dense<0.125> : tensor<f32>\n"
             "  %%scb = stablehlo.broadcast_in_dim %%sc, dims = [] : "
             "(tensor<f32>) -> tensor<%dx64x48xf32>\n"
             "  %%x = stablehlo.multiply %%d, %%scb : tensor<%dx64x48xf32>\n"
             "  %%ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"
             "  %%m = stablehlo.reduce(%%x init: %%ninf) applies "
             "stablehlo.maximum across dimensions = [2] : "
             "(tensor<%dx64x48xf32>, tensor<f32>) -> tensor<%dx64xf32>\n"
             "  %%mb = stablehlo.broadcast_in_dim %%m, dims = [0, 1] : "
             "(tensor<%dx64xf32>) -> tensor<%dx64x48xf32>\n"
             "  %%y = stablehlo.subtract %%x, %%mb : tensor<%dx64x48xf32>\n"
             "  %%e = stablehlo.exponential %%y : tensor<%dx64x48xf32>\n"
             "  %%z = stablehlo.constant dense<0.0> : tensor<f32>\n"
             "  %%t = stablehlo.reduce(%%e init: %%z) applies stablehlo.add "
             "across dimensions = [2] : (tensor<%dx64x48xf32>, tensor<f32>) "
             "-> tensor<%dx64xf32>\n"
             "  %%tb = stablehlo.broadcast_in_dim %%t, dims = [0, 1] : "
             "(tensor<%dx64xf32>) -> tensor<%dx64x48xf32>\n"
             "  %%o = stablehlo.divide %%e, %%tb : tensor<%dx64x48xf32>\n"
             "  func.return %%o : tensor<%dx64x48xf32>\n}\n",
             nb, nb, nb, nb, nb, nb, nb, nb, nb, nb, nb, nb, nb, nb, nb, nb,
             nb);
    strncat(text, tail, sizeof text - strlen(text) - 1);
    same_results(text, "dot_general + multiply [in the producer's "
                       "registers] + fused_rows(");
    run_result r = run(text, true);
    assert_non_null(strstr(r.plan, "[in place]"));
    release(&r);
  }
}

/* A batched product's blocks are whole batch elements (8 values here),
 * not chunks: its epilogue's bias, periodic over 64 values (8 along dim 1
 * times the 2x4 of each product), is filled once per worker from the
 * first block's own phase, so every block reads the bias its elements
 * take (it was filled from element 0, and blocks starting elsewhere in
 * the period read a shifted bias). */
static void dot_epilogue_bias_follows_the_blocks_phase(void **state) {
  (void)state;
  static const int ks[] = {3, 7, 40};
  for (int i = 0; i < 3; i++) {
    int k = ks[i];
    char text[2048] = "func.func @main() -> tensor<64x8x2x4xf32> {\n";
    char shape[32], tail[1024];
    snprintf(shape, sizeof shape, "64x8x2x%d", k);
    wavy_operand(text, sizeof text, "a", "sine", 1024L * k, shape);
    snprintf(shape, sizeof shape, "64x8x%dx4", k);
    wavy_operand(text, sizeof text, "w", "cosine", 2048L * k, shape);
    wavy_operand(text, sizeof text, "b", "sine", 32, "8x4");
    snprintf(tail, sizeof tail,
             "  %%d = stablehlo.dot_general %%a, %%w, batching_dims = [0, 1] "
             "x [0, 1], contracting_dims = [3] x [2] : "
             "(tensor<64x8x2x%dxf32>, tensor<64x8x%dx4xf32>) -> "
             "tensor<64x8x2x4xf32>\n"
             "  %%bb = stablehlo.broadcast_in_dim %%b, dims = [1, 3] : "
             "(tensor<8x4xf32>) -> tensor<64x8x2x4xf32>\n"
             "  %%r = stablehlo.add %%d, %%bb : tensor<64x8x2x4xf32>\n"
             "  %%q = stablehlo.multiply %%r, %%r : tensor<64x8x2x4xf32>\n"
             "  func.return %%q : tensor<64x8x2x4xf32>\n}\n",
             k, k);
    strncat(text, tail, sizeof text - strlen(text) - 1);
    same_results(text, "dot_general + fused(broadcast_in_dim, add, multiply) "
                       "[broadcasts the same in every chunk: 1 filled once");
  }
}

/* A product plus a bias, then a ReLU, and a product whose result type is
 * not the one its GEMM makes (i32: no blocks to run behind). */
static void dot_bias_relu_runs_behind_the_gemm(void **state) {
  (void)state;
  same_results(
      "func.func @main() -> tensor<96x200xf32> {\n"
      "  %i = stablehlo.iota dim = 0 : tensor<96x70xf32>\n"
      "  %j = stablehlo.iota dim = 1 : tensor<96x70xf32>\n"
      "  %ij = stablehlo.add %i, %j : tensor<96x70xf32>\n"
      "  %a = stablehlo.sine %ij : tensor<96x70xf32>\n"
      "  %w0 = stablehlo.iota dim = 1 : tensor<70x200xf32>\n"
      "  %w = stablehlo.cosine %w0 : tensor<70x200xf32>\n"
      "  %bv = stablehlo.iota dim = 0 : tensor<200xf32>\n"
      "  %d = stablehlo.dot_general %a, %w, contracting_dims = [1] x [0] : "
      "(tensor<96x70xf32>, tensor<70x200xf32>) -> tensor<96x200xf32>\n"
      "  %bb = stablehlo.broadcast_in_dim %bv, dims = [1] : "
      "(tensor<200xf32>) -> tensor<96x200xf32>\n"
      "  %x = stablehlo.add %d, %bb : tensor<96x200xf32>\n"
      "  %z = stablehlo.constant dense<3.0> : tensor<f32>\n"
      "  %zb = stablehlo.broadcast_in_dim %z, dims = [] : (tensor<f32>) -> "
      "tensor<96x200xf32>\n"
      "  %r = stablehlo.maximum %x, %zb : tensor<96x200xf32>\n"
      "  func.return %r : tensor<96x200xf32>\n}\n",
      "dot_general + fused(broadcast_in_dim, add, broadcast_in_dim, maximum) "
      "[broadcasts the same in every chunk: 0 filled once, 1 read as one "
      "element] [in registers: 2 ops, 1 values stored] [in place]");
  same_results_without(
      "func.func @main() -> tensor<80x100xi32> {\n"
      "  %a = stablehlo.iota dim = 0 : tensor<80x30xi32>\n"
      "  %w = stablehlo.iota dim = 1 : tensor<30x100xi32>\n"
      "  %d = stablehlo.dot_general %a, %w, contracting_dims = [1] x [0] : "
      "(tensor<80x30xi32>, tensor<30x100xi32>) -> tensor<80x100xi32>\n"
      "  %o = stablehlo.constant dense<5> : tensor<80x100xi32>\n"
      "  %x = stablehlo.add %d, %o : tensor<80x100xi32>\n"
      "  %y = stablehlo.multiply %x, %x : tensor<80x100xi32>\n"
      "  func.return %y : tensor<80x100xi32>\n}\n",
      "fused(add, multiply)", "dot_general + ");
}

/* A product whose rhs keeps no dimension (matrix times vector, batched
 * 3 ways, which do not split over two threads) softmaxed along rows of
 * 300, the lhs's last free dimension: the rows group runs from the pool
 * once the GEMMs are done. */
static void dot_rows_go_to_the_pool_whole(void **state) {
  (void)state;
  same_results(
      "func.func @main() -> tensor<3x100x300xf32> {\n"
      "  %i = stablehlo.iota dim = 2 : tensor<3x100x300x8xf32>\n"
      "  %j = stablehlo.iota dim = 3 : tensor<3x100x300x8xf32>\n"
      "  %ij = stablehlo.multiply %i, %j : tensor<3x100x300x8xf32>\n"
      "  %q = stablehlo.sine %ij : tensor<3x100x300x8xf32>\n"
      "  %v0 = stablehlo.iota dim = 1 : tensor<3x8xf32>\n"
      "  %v = stablehlo.cosine %v0 : tensor<3x8xf32>\n"
      "  %d = stablehlo.dot_general %q, %v, batching_dims = [0] x [0], "
      "contracting_dims = [3] x [1] : (tensor<3x100x300x8xf32>, "
      "tensor<3x8xf32>) -> tensor<3x100x300xf32>\n"
      "  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"
      "  %m = stablehlo.reduce(%d init: %ninf) applies stablehlo.maximum "
      "across dimensions = [2] : (tensor<3x100x300xf32>, tensor<f32>) -> "
      "tensor<3x100xf32>\n"
      "  %mb = stablehlo.broadcast_in_dim %m, dims = [0, 1] : "
      "(tensor<3x100xf32>) -> tensor<3x100x300xf32>\n"
      "  %y = stablehlo.subtract %d, %mb : tensor<3x100x300xf32>\n"
      "  %e = stablehlo.exponential %y : tensor<3x100x300xf32>\n"
      "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %t = stablehlo.reduce(%e init: %z) applies stablehlo.add across "
      "dimensions = [2] : (tensor<3x100x300xf32>, tensor<f32>) -> "
      "tensor<3x100xf32>\n"
      "  %tb = stablehlo.broadcast_in_dim %t, dims = [0, 1] : "
      "(tensor<3x100xf32>) -> tensor<3x100x300xf32>\n"
      "  %o = stablehlo.divide %e, %tb : tensor<3x100x300xf32>\n"
      "  func.return %o : tensor<3x100x300xf32>\n}\n",
      "dot_general + fused_rows(");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(a_chain_fuses_and_keeps_values_used_later),
      cmocka_unit_test(select_convert_and_compare_fuse),
      cmocka_unit_test(broadcasts_of_rows_and_columns_read_in_place),
      cmocka_unit_test(transposing_broadcasts_read_strided),
      cmocka_unit_test(slices_feed_a_run_in_place),
      cmocka_unit_test(softmax_rows_fuse_around_both_reductions),
      cmocka_unit_test(square_layernorm_tells_rows_from_columns),
      cmocka_unit_test(a_row_value_broadcast_across_columns_ends_the_group),
      cmocka_unit_test(rank3_rows_keep_nan_and_signed_zero_rules),
      cmocka_unit_test(layernorm_computes_what_every_block_shares_once),
      cmocka_unit_test(layernorm_segments_run_in_registers),
      cmocka_unit_test(sums_on_tiles_read_every_kind_of_operand),
      cmocka_unit_test(a_sum_of_a_value_read_again_stays_off_tiles),
      cmocka_unit_test(a_sum_on_tiles_of_an_outside_value),
      cmocka_unit_test(a_segment_without_room_undoes_the_tiles),
      cmocka_unit_test(long_max_rows_read_row_broadcasts_in_place),
      cmocka_unit_test(big_results_stream_out),
      cmocka_unit_test(run_fills_scalar_broadcasts_once),
      cmocka_unit_test(rows_one_element_operands_of_every_loop),
      cmocka_unit_test(run_fills_periodic_broadcasts_once),
      cmocka_unit_test(long_runs_reuse_scratch_and_stream_results),
      cmocka_unit_test(rows_read_row_broadcasts_as_one_element),
      cmocka_unit_test(small_tensors_stay_unfused),
      cmocka_unit_test(dot_epilogue_bias_follows_the_blocks_phase),
      cmocka_unit_test(lane_ops_run_in_registers),
      cmocka_unit_test(too_many_inputs_for_a_lane_program),
      cmocka_unit_test(lane_programs_run_between_other_ops),
      cmocka_unit_test(conv_epilogues_run_in_place),
      cmocka_unit_test(conv_epilogues_with_results_of_their_own),
      cmocka_unit_test(conv_read_elsewhere_keeps_its_step),
      cmocka_unit_test(conv_bias_relu_in_the_convolution),
      cmocka_unit_test(conv_near_bias_relu_keeps_its_run),
      cmocka_unit_test(dot_softmax_runs_behind_the_gemms),
      cmocka_unit_test(dot_bias_relu_runs_behind_the_gemm),
      cmocka_unit_test(dot_rows_go_to_the_pool_whole),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
