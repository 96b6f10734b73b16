/* SPDX-License-Identifier: Apache-2.0 */
/* Batched products whose batch splits over the pool (kernels/linalg.c,
 * dot_split_batch), with the rows group behind each GEMM run on the
 * thread that made it: attention's chain (Q K^T, scaled and softmaxed
 * along rows behind the GEMMs, then times V, its K^T copied by the
 * panels' transposed tiles) and products with the lhs stored transposed
 * give, on 2 and 3 threads, the bytes one thread gives: batches of 1, 3,
 * 4 and 8, row counts that end in short blocks, 1-row products.  (Cutting
 * each GEMM into slices of rows for more units per thread was tried with
 * this test and left out: see docs/performance.md.) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/value.h"
#include "shlo/context.h"
#include "shlo/engine.h"
#include "harness.h"

/* softmax(Q K^T * 0.125) V with Q [b, m, d], K [b, n, d], V [b, n, e]. */
static void check_attention(int b, int m, int n, int d, int e) {
  enum { CAP = 8192 };
  char *t = calloc(CAP, 1);
  assert_non_null(t);
  char shape[64];
  harness_appendf(t, CAP, "func.func @main() -> tensor<%dx%dx%dxf32> {\n", b, m, e);
  snprintf(shape, sizeof shape, "%dx%dx%d", b, m, d);
  harness_operand(t, CAP, "q", "sine", (long)b * m * d, shape, "0.37");
  snprintf(shape, sizeof shape, "%dx%dx%d", b, n, d);
  harness_operand(t, CAP, "k", "cosine", (long)b * n * d, shape, "0.61");
  snprintf(shape, sizeof shape, "%dx%dx%d", b, n, e);
  harness_operand(t, CAP, "v", "sine", (long)b * n * e, shape, "1.13");
  char s[48];
  snprintf(s, sizeof s, "tensor<%dx%dx%dxf32>", b, m, n);
  harness_appendf(t, CAP,
         "  %%s = stablehlo.dot_general %%q, %%k, batching_dims = [0] x [0], "
         "contracting_dims = [2] x [2] : (tensor<%dx%dx%dxf32>, "
         "tensor<%dx%dx%dxf32>) -> %s\n"
         "  %%c = stablehlo.constant dense<1.250000e-01> : tensor<f32>\n"
         "  %%cb = stablehlo.broadcast_in_dim %%c, dims = [] : (tensor<f32>) "
         "-> %s\n"
         "  %%x = stablehlo.multiply %%s, %%cb : %s\n"
         "  %%ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"
         "  %%mx = stablehlo.reduce(%%x init: %%ninf) applies "
         "stablehlo.maximum across dimensions = [2] : (%s, tensor<f32>) -> "
         "tensor<%dx%dxf32>\n"
         "  %%mb = stablehlo.broadcast_in_dim %%mx, dims = [0, 1] : "
         "(tensor<%dx%dxf32>) -> %s\n"
         "  %%y = stablehlo.subtract %%x, %%mb : %s\n"
         "  %%ex = stablehlo.exponential %%y : %s\n"
         "  %%z = stablehlo.constant dense<0.0> : tensor<f32>\n"
         "  %%sum = stablehlo.reduce(%%ex init: %%z) applies stablehlo.add "
         "across dimensions = [2] : (%s, tensor<f32>) -> tensor<%dx%dxf32>\n"
         "  %%sb = stablehlo.broadcast_in_dim %%sum, dims = [0, 1] : "
         "(tensor<%dx%dxf32>) -> %s\n"
         "  %%p = stablehlo.divide %%ex, %%sb : %s\n"
         "  %%o = stablehlo.dot_general %%p, %%v, batching_dims = [0] x [0], "
         "contracting_dims = [2] x [1] : (%s, tensor<%dx%dx%dxf32>) -> "
         "tensor<%dx%dx%dxf32>\n"
         "  func.return %%o : tensor<%dx%dx%dxf32>\n}\n",
         b, m, d, b, n, d, s, s, s, s, b, m, b, m, s, s, s, s, b, m, b, m, s,
         s, s, b, n, e, b, m, e, b, m, e);
  harness_same_on_pools(t);
  free(t);
}

/* A [b, k, m] (stored transposed) times B [b, k, n], alone (no rows group
 * behind it). */
static void check_lhs_transposed(int b, int m, int n, int k) {
  enum { CAP = 4096 };
  char *t = calloc(CAP, 1);
  assert_non_null(t);
  char shape[64];
  harness_appendf(t, CAP, "func.func @main() -> tensor<%dx%dx%dxf32> {\n", b, m, n);
  snprintf(shape, sizeof shape, "%dx%dx%d", b, k, m);
  harness_operand(t, CAP, "a", "sine", (long)b * k * m, shape, "0.29");
  snprintf(shape, sizeof shape, "%dx%dx%d", b, k, n);
  harness_operand(t, CAP, "w", "cosine", (long)b * k * n, shape, "0.77");
  harness_appendf(t, CAP,
         "  %%o = stablehlo.dot_general %%a, %%w, batching_dims = [0] x [0], "
         "contracting_dims = [1] x [1] : (tensor<%dx%dx%dxf32>, "
         "tensor<%dx%dx%dxf32>) -> tensor<%dx%dx%dxf32>\n"
         "  func.return %%o : tensor<%dx%dx%dxf32>\n}\n",
         b, k, m, b, k, n, b, m, n, b, m, n);
  harness_same_on_pools(t);
  free(t);
}

/* The bench program's shape (8 heads of 256 x 64), and 3 heads whose
 * rows end in a short block. */
static void attention_split_matches_one_thread(void **state) {
  (void)state;
  check_attention(8, 256, 256, 64, 64);
  check_attention(3, 150, 200, 300, 40);
}

/* A batch of 1 (the GEMM splits itself, not the batch) and 1-row
 * products in attention's chain. */
static void whole_gemms_match_one_thread(void **state) {
  (void)state;
  check_attention(1, 200, 256, 64, 64);
  check_attention(8, 1, 256, 64, 64);
  check_attention(3, 1, 40, 300, 33);
}

/* op(a) read from a transposed lhs. */
static void transposed_lhs_split_matches_one_thread(void **state) {
  (void)state;
  check_lhs_transposed(4, 130, 96, 200);
  check_lhs_transposed(3, 61, 64, 500);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(attention_split_matches_one_thread),
      cmocka_unit_test(whole_gemms_match_one_thread),
      cmocka_unit_test(transposed_lhs_split_matches_one_thread),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
