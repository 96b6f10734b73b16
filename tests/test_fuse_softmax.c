/* SPDX-License-Identifier: Apache-2.0 */
/* Softmax's tail in a fused rows group (kernels/fuse_softmax.c: the
 * exponentials straight from the input, 16 rows summed while in cache,
 * the divide streamed from registers) against the same program op by op
 * (no_fusion): the same bytes, on every vmath ISA this machine has.
 * Softmax as JAX exports it (bench/programs/softmax.mlir) and scaled
 * first as attention's is; row lengths 1, 15, 16, 17, 1023 and 1024 (the
 * tails of 16-lane vectors and tiles), row counts that are no multiple
 * of the block of 16, a result large enough to be streamed, and rows
 * holding NaN, +inf, only -inf, huge values and values whose
 * exponentials are denormal or zero. */
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
#include "kernels/vmath.h"
#include "shlo/engine.h"
#include "shlo/tensor.h"

#define TEXT_CAP 4096
#define TAIL_LABEL "[softmax tail in two passes]"

static int64_t numel_of(int rank, const int64_t *dims) {
  int64_t n = 1;
  for (int i = 0; i < rank; i++) n *= dims[i];
  return n;
}

/* x of rows x cols: values in [-8, 8) from a SplitMix64 stream; when
 * `special`, rows 1 to 7 of every 16 (those that exist) hold a NaN, a
 * +inf, only -inf, values near +-3e38, values spread over [-200, 0]
 * (exponentials denormal or zero), a -inf among ordinary values, and
 * -0.0 and +0.0 only, and row 8 two NaNs of different payloads and
 * signs: in the first block of a chunk, whose row maximum
 * is the reduce kernel's, and in later ones, whose row maximum the tail
 * takes beside the block before. */
static shlo_value *softmax_arg(int rank, const int64_t *dims, bool special) {
  shlo_value *v = shlo_tensor_new(SHLO_F32, rank, dims);
  assert_non_null(v);
  float *x = v->data;
  int64_t cols = dims[rank - 1], rows = v->numel / cols;
  uint64_t z = 12345;
  for (int64_t i = 0; i < v->numel; i++) {
    z += 0x9E3779B97F4A7C15ull;
    uint64_t t = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    t = (t ^ (t >> 27)) * 0x94D049BB133111EBull;
    t ^= t >> 31;
    x[i] = (float)((double)(t >> 40) * 0x1p-20 - 8.0);
  }
  if (!special) return v;
  for (int64_t b = 0; b < rows; b += 16) {
    float *y = x + b * cols;
    int64_t left = rows - b;
    for (int64_t c = 0; c < cols; c++) {
      float u = y[c]; /* the block's row 0, in [-8, 8) */
      if (left > 1 && c == cols / 2) y[1 * cols + c] = NAN;
      if (left > 2 && c == 0) y[2 * cols + c] = INFINITY;
      if (left > 3) y[3 * cols + c] = -INFINITY;
      if (left > 4) y[4 * cols + c] = u * 4.2e37f;
      if (left > 5) y[5 * cols + c] = -25.0f * (u + 8.0f);
      if (left > 6 && c == cols - 1) y[6 * cols + c] = -INFINITY;
      if (left > 7) y[7 * cols + c] = c % 2 ? -0.0f : 0.0f;
      /* two NaNs of other payloads: which one a maximum keeps shows */
      if (left > 8 && cols > 3 && (c == 1 || c == cols - 2)) {
        uint32_t bits = c == 1 ? 0x7fc00001u : 0xffc00002u;
        memcpy(&y[8 * cols + c], &bits, sizeof bits);
      }
    }
  }
  return v;
}

/* Softmax over the last dimension of x (dims, rank 2 or 3), as JAX
 * writes it; with `scaled`, x times 0.125 first (attention's scores).
 * `fold` is the row value subtracted: "maximum" (softmax, init -inf),
 * or "minimum" (init +inf; x - min x is >= 0: the exponential's general
 * path). */
static void softmax_text(char *buf, int rank, const int64_t *dims,
                         bool scaled, const char *fold) {
  char F[64], R[64];
  if (rank == 2) {
    snprintf(F, sizeof F, "%" PRId64 "x%" PRId64, dims[0], dims[1]);
    snprintf(R, sizeof R, "%" PRId64, dims[0]);
  } else {
    snprintf(F, sizeof F, "%" PRId64 "x%" PRId64 "x%" PRId64, dims[0],
             dims[1], dims[2]);
    snprintf(R, sizeof R, "%" PRId64 "x%" PRId64, dims[0], dims[1]);
  }
  const char *keep = rank == 2 ? "0" : "0, 1";
  int last = rank - 1;
  char scale[512] = "";
  if (scaled)
    snprintf(scale, sizeof scale,
             "  %%k = stablehlo.constant dense<0.125> : tensor<f32>\n"
             "  %%kb = stablehlo.broadcast_in_dim %%k, dims = [] : "
             "(tensor<f32>) -> tensor<%sxf32>\n"
             "  %%xs = stablehlo.multiply %%x, %%kb : tensor<%sxf32>\n",
             F, F);
  const char *xs = scaled ? "%xs" : "%x";
  snprintf(
      buf, TEXT_CAP,
      "func.func @main(%%x: tensor<%sxf32>) -> tensor<%sxf32> {\n"
      "%s"
      "  %%ninf = stablehlo.constant dense<%s> : tensor<f32>\n"
      "  %%m = stablehlo.reduce(%s init: %%ninf) applies stablehlo.%s "
      "across dimensions = [%d] : (tensor<%sxf32>, tensor<f32>) -> "
      "tensor<%sxf32>\n"
      "  %%mb = stablehlo.broadcast_in_dim %%m, dims = [%s] : "
      "(tensor<%sxf32>) -> tensor<%sxf32>\n"
      "  %%d = stablehlo.subtract %s, %%mb : tensor<%sxf32>\n"
      "  %%e = stablehlo.exponential %%d : tensor<%sxf32>\n"
      "  %%z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %%s = stablehlo.reduce(%%e init: %%z) applies stablehlo.add across "
      "dimensions = [%d] : (tensor<%sxf32>, tensor<f32>) -> tensor<%sxf32>\n"
      "  %%sb = stablehlo.broadcast_in_dim %%s, dims = [%s] : "
      "(tensor<%sxf32>) -> tensor<%sxf32>\n"
      "  %%y = stablehlo.divide %%e, %%sb : tensor<%sxf32>\n"
      "  func.return %%y : tensor<%sxf32>\n}\n",
      F, F, scale, strcmp(fold, "maximum") ? "0x7F800000" : "0xFF800000", xs,
      fold, last, F, R, keep, R, F, xs, F, F, last, F, R,
      keep, R, F, F, F);
}

/* Fused and op by op on the same x: the same bytes.  When `grouped`,
 * the fused plan must make the chain one rows group; whenever it does,
 * the group must run the tail as one kernel. */
static void same_softmax_of(int rank, const int64_t *dims, bool scaled,
                            bool special, bool grouped, const char *fold) {
  char text[TEXT_CAP];
  softmax_text(text, rank, dims, scaled, fold);
  shlo_value *x = softmax_arg(rank, dims, special);
  harness_result a = harness_run_fused(text, true, &x, 1);
  harness_result b = harness_run_fused(text, false, &x, 1);
  bool group = strstr(a.plan, "fused_rows(") != NULL;
  if ((grouped && !group) || group != (strstr(a.plan, TAIL_LABEL) != NULL))
    fail_msg("%" PRId64 " rows of %" PRId64 ": not one rows group with "
             "its softmax tail:\n%s",
             numel_of(rank, dims) / dims[rank - 1],
             dims[rank - 1], a.plan);
  assert_null(strstr(b.plan, "fused"));
  assert_int_equal(a.n, 1);
  assert_int_equal(b.n, 1);
  assert_int_equal(a.v[0]->nbytes, b.v[0]->nbytes);
  if (memcmp(a.v[0]->data, b.v[0]->data, a.v[0]->nbytes)) {
    const uint32_t *p = a.v[0]->data, *q = b.v[0]->data;
    int64_t i = 0;
    while (p[i] == q[i]) i++;
    fail_msg("%s: element %" PRId64 " fused 0x%08" PRIx32
             " op by op 0x%08" PRIx32,
             shlo__vmath_isa(), i, p[i], q[i]);
  }
  harness_result_free(&a);
  harness_result_free(&b);
  shlo_value_unref(x);
}

static void same_softmax(int rank, const int64_t *dims, bool scaled,
                         bool special, bool grouped) {
  same_softmax_of(rank, dims, scaled, special, grouped, "maximum");
}

/* fn once per vmath ISA this machine runs, then back to the default. */
static void each_isa(void (*fn)(void)) {
  const char *was = shlo__vmath_isa();
  static const char *const isas[] = {"avx512f", "avx2", "portable"};
  int ran = 0;
  for (size_t i = 0; i < sizeof isas / sizeof isas[0]; i++)
    if (shlo__vmath_use_isa(isas[i])) {
      fn();
      ran++;
    }
  assert_true(ran >= 1);
  assert_true(shlo__vmath_use_isa(was));
}

/* Row lengths around the vector and tile widths, row counts around the
 * block of 16; small shapes stay op by op (too few elements to fuse). */
static void row_lengths(void) {
  static const int64_t cols[] = {1, 15, 16, 17, 1023, 1024};
  static const int64_t rows[] = {1, 7, 16, 17, 37, 300};
  for (size_t c = 0; c < sizeof cols / sizeof cols[0]; c++)
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
      int64_t d[2] = {rows[r], cols[c]};
      bool fused = d[0] >= 16 && d[0] * d[1] >= 4096 && cols[c] > 1;
      same_softmax(2, d, false, true, fused);
      same_softmax(2, d, false, false, fused);
    }
}

/* Rows longer than 1024 (the old bound of blocks of 16, past which sums
 * went one row at a time) in blocks of 16, a tail of columns and of rows
 * among them: the op-by-op bytes.  The block is asserted too, since the
 * bytes alone would not show a fall back to single rows. */
static void long_rows(void) {
  static const int64_t cols[] = {1040, 4100};
  static const int64_t rows[] = {16, 37};
  for (size_t c = 0; c < sizeof cols / sizeof cols[0]; c++)
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
      int64_t d[2] = {rows[r], cols[c]};
      same_softmax(2, d, false, true, true);
      same_softmax(2, d, false, false, true);
      char text[TEXT_CAP];
      softmax_text(text, 2, d, false, "maximum");
      shlo_value *x = softmax_arg(2, d, false);
      harness_result a = harness_run_fused(text, true, &x, 1);
      if (!strstr(a.plan, "[blocks of 16 rows"))
        fail_msg("rows of %" PRId64 ": not in blocks of 16:\n%s", cols[c],
                 a.plan);
      harness_result_free(&a);
      shlo_value_unref(x);
    }
}

static void long_rows_match_op_by_op(void **state) {
  (void)state;
  each_isa(long_rows);
}

static void softmax_rows_match_op_by_op(void **state) {
  (void)state;
  each_isa(row_lengths);
}

/* attention's shape: batch x rows x 256, scaled before the maximum */
static void scaled(void) {
  int64_t d[3] = {3, 37, 256};
  same_softmax(3, d, true, true, true);
  int64_t e[3] = {2, 16, 17};
  same_softmax(3, e, true, false, false); /* 544 elements: op by op */
  int64_t f[3] = {5, 33, 129};
  same_softmax(3, f, true, true, true);
  /* x - min x: the exponential's general path (a row with +inf gives
   * inf / inf, NaN, op by op too) */
  same_softmax_of(3, f, true, true, true, "minimum");
  same_softmax_of(3, f, true, false, true, "minimum");
}

static void scaled_softmax_matches_op_by_op(void **state) {
  (void)state;
  each_isa(scaled);
}

/* A result of 2 MiB and more is streamed past the caches: 520 rows of
 * 1024 (the last block 8 rows), and 513 of 1023 (rows not 64-byte
 * aligned, the in-place divide and copy). */
static void streamed(void) {
  int64_t d[2] = {520, 1024};
  same_softmax(2, d, false, true, true);
  int64_t e[2] = {513, 1023};
  same_softmax(2, e, false, true, true);
}

static void streamed_result_matches_op_by_op(void **state) {
  (void)state;
  each_isa(streamed);
}

/* exp(x - max) also returned: the tail is not softmax's alone, and the
 * group runs member by member, with the same bytes. */
static void shared_exponential_keeps_the_plain_path(void **state) {
  (void)state;
  const char *text =
      "func.func @main(%x: tensor<64x128xf32>) -> (tensor<64x128xf32>, "
      "tensor<64x128xf32>) {\n"
      "  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"
      "  %m = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum "
      "across dimensions = [1] : (tensor<64x128xf32>, tensor<f32>) -> "
      "tensor<64xf32>\n"
      "  %mb = stablehlo.broadcast_in_dim %m, dims = [0] : "
      "(tensor<64xf32>) -> tensor<64x128xf32>\n"
      "  %d = stablehlo.subtract %x, %mb : tensor<64x128xf32>\n"
      "  %e = stablehlo.exponential %d : tensor<64x128xf32>\n"
      "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %s = stablehlo.reduce(%e init: %z) applies stablehlo.add across "
      "dimensions = [1] : (tensor<64x128xf32>, tensor<f32>) -> "
      "tensor<64xf32>\n"
      "  %sb = stablehlo.broadcast_in_dim %s, dims = [0] : "
      "(tensor<64xf32>) -> tensor<64x128xf32>\n"
      "  %y = stablehlo.divide %e, %sb : tensor<64x128xf32>\n"
      "  func.return %y, %e : tensor<64x128xf32>, tensor<64x128xf32>\n}\n";
  int64_t d[2] = {64, 128};
  shlo_value *x = softmax_arg(2, d, true);
  harness_result a = harness_run_fused(text, true, &x, 1);
  harness_result b = harness_run_fused(text, false, &x, 1);
  assert_non_null(strstr(a.plan, "fused_rows("));
  assert_null(strstr(a.plan, TAIL_LABEL));
  assert_int_equal(a.n, 2);
  assert_int_equal(b.n, 2);
  for (int i = 0; i < 2; i++)
    assert_memory_equal(a.v[i]->data, b.v[i]->data, a.v[i]->nbytes);
  harness_result_free(&a);
  harness_result_free(&b);
  shlo_value_unref(x);
}

/* Softmax as JAX exports it with keepdims (bench/models/transformer.mlir's
 * attention): x scaled by 0.125, its row maximum m (init -inf), then
 * maximum(c, m) (JAX's -inf init folded in again as an elementwise
 * maximum; `cap` is c's literal, `cap_second` puts it second), m and the
 * sum each broadcast to R x 1 and then along the rows.  `cap_op`
 * replaces the maximum (a different row value: "add"); `transposed`
 * broadcasts maximum(c, m) to R x 1 with its two dimensions swapped
 * (square R), another row's value. */
typedef struct keepdims_form {
  const char *cap, *cap_op;
  bool cap_second, transposed;
  bool bf16; /* the result converted to bf16 (transformer_bf16.mlir) */
} keepdims_form;

static void keepdims_text(char *buf, int rank, const int64_t *dims,
                          keepdims_form k) {
  char F[64] = "", R[64] = "", K[64] = "", lead[32] = "", all[32] = "";
  for (int i = 0; i < rank; i++) {
    char d[24];
    snprintf(d, sizeof d, "%" PRId64 "x", dims[i]);
    strcat(F, d);
    if (i < rank - 1) {
      strcat(R, d);
      strcat(K, d);
      snprintf(d, sizeof d, "%s%d", i ? ", " : "", i);
      strcat(lead, d);
    }
    snprintf(d, sizeof d, "%s%d", i ? ", " : "", i);
    strcat(all, d);
  }
  strcat(K, "1x");
  R[strlen(R) - 1] = '\0'; /* R: the row dims without the trailing x */
  const char *swap = rank == 3 ? "1, 0" : "0, 2, 1";
  const char *op = k.cap_op ? k.cap_op : "maximum";
  char cvt[160] = "";
  if (k.bf16)
    snprintf(cvt, sizeof cvt,
             "  %%yb = stablehlo.convert %%y : (tensor<%sf32>) -> "
             "tensor<%sbf16>\n", F, F);
  int n = snprintf(
      buf, TEXT_CAP,
      "func.func @main(%%x: tensor<%sf32>) -> tensor<%s%s> {\n"
      "  %%k = stablehlo.constant dense<0.125> : tensor<f32>\n"
      "  %%kb = stablehlo.broadcast_in_dim %%k, dims = [] : (tensor<f32>) "
      "-> tensor<%sf32>\n"
      "  %%xs = stablehlo.multiply %%x, %%kb : tensor<%sf32>\n"
      "  %%ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"
      "  %%c = stablehlo.constant dense<%s> : tensor<f32>\n"
      "  %%m = stablehlo.reduce(%%xs init: %%ninf) applies stablehlo.maximum "
      "across dimensions = [%d] : (tensor<%sf32>, tensor<f32>) -> "
      "tensor<%sxf32>\n"
      "  %%cb = stablehlo.broadcast_in_dim %%c, dims = [] : (tensor<f32>) "
      "-> tensor<%sxf32>\n"
      "  %%mm = stablehlo.%s %s : tensor<%sxf32>\n"
      "  %%m1 = stablehlo.broadcast_in_dim %%mm, dims = [%s] : "
      "(tensor<%sxf32>) -> tensor<%sf32>\n"
      "  %%mb = stablehlo.broadcast_in_dim %%m1, dims = [%s] : "
      "(tensor<%sf32>) -> tensor<%sf32>\n"
      "  %%d = stablehlo.subtract %%xs, %%mb : tensor<%sf32>\n"
      "  %%e = stablehlo.exponential %%d : tensor<%sf32>\n"
      "  %%z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %%s = stablehlo.reduce(%%e init: %%z) applies stablehlo.add across "
      "dimensions = [%d] : (tensor<%sf32>, tensor<f32>) -> tensor<%sxf32>\n"
      "  %%s1 = stablehlo.broadcast_in_dim %%s, dims = [%s] : "
      "(tensor<%sxf32>) -> tensor<%sf32>\n"
      "  %%sb = stablehlo.broadcast_in_dim %%s1, dims = [%s] : "
      "(tensor<%sf32>) -> tensor<%sf32>\n"
      "  %%y = stablehlo.divide %%e, %%sb : tensor<%sf32>\n"
      "%s"
      "  func.return %s : tensor<%s%s>\n}\n",
      F, F, k.bf16 ? "bf16" : "f32", F, F, k.cap, rank - 1, F, R, R, op,
      k.cap_second ? "%m, %cb" : "%cb, %m", R, k.transposed ? swap : lead, R,
      K, all, K, F, F, F, rank - 1, F, R, lead, R, K, all, K, F, F, cvt,
      k.bf16 ? "%yb" : "%y", F, k.bf16 ? "bf16" : "f32");
  assert_true(n > 0 && n < TEXT_CAP);
}

/* keepdims_text's program fused and op by op on the same x: the same
 * bytes; the tail in two passes exactly when `taken`. */
static void same_keepdims(int rank, const int64_t *dims, keepdims_form k,
                          bool special, bool taken) {
  char text[TEXT_CAP];
  keepdims_text(text, rank, dims, k);
  shlo_value *x = softmax_arg(rank, dims, special);
  harness_result a = harness_run_fused(text, true, &x, 1);
  harness_result b = harness_run_fused(text, false, &x, 1);
  if ((strstr(a.plan, TAIL_LABEL) != NULL) != taken)
    fail_msg("cap %s %s: the tail %s taken:\n%s", k.cap,
             k.cap_op ? k.cap_op : "maximum", taken ? "not" : "wrongly",
             a.plan);
  assert_int_equal(a.n, 1);
  assert_int_equal(b.n, 1);
  assert_int_equal(a.v[0]->nbytes, b.v[0]->nbytes);
  if (memcmp(a.v[0]->data, b.v[0]->data, a.v[0]->nbytes)) {
    const uint8_t *p = a.v[0]->data, *q = b.v[0]->data;
    size_t i = 0;
    while (p[i] == q[i]) i++;
    fail_msg("%s cap %s%s: byte %zu fused 0x%02x op by op 0x%02x",
             shlo__vmath_isa(), k.cap, k.bf16 ? " bf16" : "", i, p[i],
             q[i]);
  }
  harness_result_free(&a);
  harness_result_free(&b);
  shlo_value_unref(x);
}

/* The transformer's own shape (8 x 12 heads x 128 x 128), then rows of
 * 1, 17 and 129 (vector and tile tails) in row counts no multiple of
 * 16; caps -inf (the transformer's), a finite one that lifts most row
 * values (the maximum applied, not assumed away), NaN (every row NaN),
 * +inf, and -0 against rows of +-0; either operand order. */
static void keepdims(void) {
  keepdims_form jax = {"0xFF800000", NULL, false, false, false};
  int64_t t[4] = {8, 12, 128, 128};
  same_keepdims(4, t, jax, true, true);
  keepdims_form jax_bf16 = {"0xFF800000", NULL, false, false, true};
  same_keepdims(4, t, jax_bf16, true, true);
  static const int64_t shapes[][3] = {{3, 37, 129}, {7, 37, 17}, {2, 40, 1}};
  static const char *const caps[] = {"0xFF800000", "0.5", "0x7FC00000",
                                     "0x7F800000", "-0.0"};
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
    for (size_t c = 0; c < sizeof caps / sizeof caps[0]; c++)
      for (int second = 0; second < 2; second++) {
        keepdims_form k = {caps[c], NULL, second, false, false};
        same_keepdims(3, shapes[i], k, true, shapes[i][2] > 1);
        same_keepdims(3, shapes[i], k, false, shapes[i][2] > 1);
        k.bf16 = true;
        same_keepdims(3, shapes[i], k, true, shapes[i][2] > 1);
      }
}

static void keepdims_softmax_matches_op_by_op(void **state) {
  (void)state;
  each_isa(keepdims);
}

/* Row values the tail must not take for maximum(c, m): c added to m
 * (one rows group, whose tail keeps the plain path), and maximum(c, m)
 * of the row at the swapped index (rows i, j reading j, i's: the
 * planner ends the group before the transposing broadcast, and the
 * second group's row value comes from outside).  The same bytes. */
static void other_row_values_keep_the_plain_path(void **state) {
  (void)state;
  int64_t d[3] = {24, 24, 33};
  keepdims_form add = {"0.5", "add", false, false, false};
  same_keepdims(3, d, add, true, false);
  keepdims_form swapped = {"0xFF800000", NULL, false, true, false};
  same_keepdims(3, d, swapped, true, false);
}

/* Each chunk of blocks divides a block beside the next one's
 * exponentials and the last at its end, and the chunks follow the
 * thread count: 1, 2 and 3 threads give the same bytes.  Rows of 1024
 * (streamed, 1000 rows: chunks of 112 and 80 rows, and a last block of
 * 8 after whole ones) and of 200 (not streamed, 600 rows). */
static void softmax_text_of_iota(char *text, size_t cap, long rows,
                                 long cols) {
  char shape[64];
  snprintf(shape, sizeof shape, "%ldx%ld", rows, cols);
  snprintf(text, cap, "func.func @main() -> tensor<%sxf32> {\n", shape);
  harness_operand(text, cap, "x", "sine", rows * cols, shape, "0.37");
  harness_appendf(
      text, cap,
      "  %%ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"
      "  %%zero = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %%m = stablehlo.reduce(%%x init: %%ninf) applies stablehlo.maximum "
      "across dimensions = [1] : (tensor<%sxf32>, tensor<f32>) -> "
      "tensor<%ldxf32>\n"
      "  %%mb = stablehlo.broadcast_in_dim %%m, dims = [0] : "
      "(tensor<%ldxf32>) -> tensor<%sxf32>\n"
      "  %%d = stablehlo.subtract %%x, %%mb : tensor<%sxf32>\n"
      "  %%e = stablehlo.exponential %%d : tensor<%sxf32>\n"
      "  %%s = stablehlo.reduce(%%e init: %%zero) applies stablehlo.add "
      "across dimensions = [1] : (tensor<%sxf32>, tensor<f32>) -> "
      "tensor<%ldxf32>\n"
      "  %%sb = stablehlo.broadcast_in_dim %%s, dims = [0] : "
      "(tensor<%ldxf32>) -> tensor<%sxf32>\n"
      "  %%r = stablehlo.divide %%e, %%sb : tensor<%sxf32>\n"
      "  return %%r : tensor<%sxf32>\n}\n",
      shape, rows, rows, shape, shape, shape, shape, rows, rows, shape, shape,
      shape);
}

static void blocks_split_over_threads_alike(void **state) {
  (void)state;
  static const long shapes[][2] = {{1000, 1024}, {600, 200}};
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
    char text[TEXT_CAP];
    softmax_text_of_iota(text, sizeof text, shapes[i][0], shapes[i][1]);
    harness_result a = harness_run_fused(text, true, NULL, 0);
    if (!strstr(a.plan, TAIL_LABEL)) fail_msg("no softmax tail:\n%s", a.plan);
    harness_result_free(&a);
    harness_same_on_pools(text);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(softmax_rows_match_op_by_op),
      cmocka_unit_test(long_rows_match_op_by_op),
      cmocka_unit_test(scaled_softmax_matches_op_by_op),
      cmocka_unit_test(streamed_result_matches_op_by_op),
      cmocka_unit_test(shared_exponential_keeps_the_plain_path),
      cmocka_unit_test(keepdims_softmax_matches_op_by_op),
      cmocka_unit_test(other_row_values_keep_the_plain_path),
      cmocka_unit_test(blocks_split_over_threads_alike),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
