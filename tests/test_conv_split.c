/* SPDX-License-Identifier: Apache-2.0 */
/* Channels-last convolutions split over the pool (kernels/conv_nhwc.c):
 * the small-window sums taken 256 rows at a time, the GEMM by panels'
 * blocks with their last round cut into pieces (nhwc_tail), and the
 * pool's opener watching for the last worker (runtime/pool.c).
 * Whatever share each thread gets, every output element is the same
 * chain of multiply-adds, so 2 and 3 threads must give the bytes one
 * thread gives (for the small-window sums under each ISA the engine can
 * be set to, though their code is the loader's clone for the CPU; for
 * the GEMMs on AVX-512F, where the engine's panels take them): cnn's
 * three layers at batch 1 and 3, with and without their bias and ReLU,
 * odd spatial sizes whose rows end in short blocks and pieces,
 * out-feature counts off the vector width, and a column of infinite
 * inputs whose NaNs must land where one thread puts them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/value.h"
#include "kernels/vmath.h"
#include "shlo/context.h"
#include "shlo/engine.h"
#include "harness.h"

/* A 3x3 convolution, NHWC by HWIO, padding 1 on every side. */
typedef struct conv_case {
  int n, h, w, ci, co, stride;
  bool epilogue; /* + bias, then the maximum with 0 (fused behind it) */
  bool inf;      /* the lhs's column 5 is +inf (inf and NaN results) */
} conv_case;

static void check_case(const conv_case *c) {
  enum { CAP = 8192 };
  char *t = calloc(CAP, 1);
  assert_non_null(t);
  int oh = (c->h + 2 - 3) / c->stride + 1, ow = (c->w + 2 - 3) / c->stride + 1;
  char lshape[64], kshape[64], oshape[64];
  snprintf(lshape, sizeof lshape, "%dx%dx%dx%d", c->n, c->h, c->w, c->ci);
  snprintf(kshape, sizeof kshape, "3x3x%dx%d", c->ci, c->co);
  snprintf(oshape, sizeof oshape, "%dx%dx%dx%d", c->n, oh, ow, c->co);
  harness_appendf(t, CAP, "func.func @main() -> tensor<%sxf32> {\n", oshape);
  long nl = (long)c->n * c->h * c->w * c->ci;
  harness_operand(t, CAP, c->inf ? "x0" : "x", "sine", nl, lshape, "0.37");
  if (c->inf)
    harness_appendf(t, CAP,
           "  %%pos = stablehlo.iota dim = 2 : tensor<%sxi32>\n"
           "  %%five = stablehlo.constant dense<5> : tensor<%sxi32>\n"
           "  %%at = stablehlo.compare EQ, %%pos, %%five : "
           "(tensor<%sxi32>, tensor<%sxi32>) -> tensor<%sxi1>\n"
           "  %%infs = stablehlo.constant dense<0x7F800000> : "
           "tensor<%sxf32>\n"
           "  %%x = stablehlo.select %%at, %%infs, %%x0 : tensor<%sxi1>, "
           "tensor<%sxf32>\n",
           lshape, lshape, lshape, lshape, lshape, lshape, lshape, lshape);
  harness_operand(t, CAP, "k", "cosine", 9L * c->ci * c->co, kshape, "0.61");
  harness_appendf(t, CAP,
         "  %%y = stablehlo.convolution(%%x, %%k) dim_numbers = [b, 0, 1, "
         "f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [%d, %d], pad = "
         "[[1, 1], [1, 1]]} {batch_group_count = 1 : i64, "
         "feature_group_count = 1 : i64} : (tensor<%sxf32>, tensor<%sxf32>) "
         "-> tensor<%sxf32>\n",
         c->stride, c->stride, lshape, kshape, oshape);
  if (!c->epilogue) {
    harness_appendf(t, CAP, "  func.return %%y : tensor<%sxf32>\n}\n", oshape);
  } else {
    char bshape[16];
    snprintf(bshape, sizeof bshape, "%d", c->co);
    harness_operand(t, CAP, "bias", "sine", c->co, bshape, "1.3");
    harness_appendf(t, CAP,
           "  %%bb = stablehlo.broadcast_in_dim %%bias, dims = [3] : "
           "(tensor<%dxf32>) -> tensor<%sxf32>\n"
           "  %%s = stablehlo.add %%y, %%bb : tensor<%sxf32>\n"
           "  %%zero = stablehlo.constant dense<0.0> : tensor<f32>\n"
           "  %%zb = stablehlo.broadcast_in_dim %%zero, dims = [] : "
           "(tensor<f32>) -> tensor<%sxf32>\n"
           "  %%r = stablehlo.maximum %%s, %%zb : tensor<%sxf32>\n"
           "  func.return %%r : tensor<%sxf32>\n}\n",
           c->co, oshape, oshape, oshape, oshape, oshape);
  }
  harness_same_on_pools(t);
  free(t);
}

/* Every case under each ISA the machine runs. */
static void check_every_isa(const conv_case *cases, size_t n) {
  static const char *isas[] = {"avx512f", "avx2", "portable"};
  const char *was = shlo__vmath_isa();
  for (size_t i = 0; i < sizeof isas / sizeof isas[0]; i++)
    if (shlo__vmath_use_isa(isas[i]))
      for (size_t k = 0; k < n; k++) check_case(&cases[k]);
  assert_true(shlo__vmath_use_isa(was));
}

/* cnn's first layer (3x3x3 into 32: the small-window sums) at batch 1
 * and 3, on odd sizes whose rows end in short pieces and in half groups
 * or overlapping ones (conv_small.c), 16 and 64 out-features and one
 * (20) summed as scalars. */
static void small_window_split_matches_one_thread(void **state) {
  (void)state;
  static const conv_case cases[] = {
      {1, 32, 32, 3, 32, 1, true, false},  {3, 32, 32, 3, 32, 1, true, false},
      {3, 17, 23, 3, 32, 1, false, false}, {3, 31, 29, 2, 16, 1, true, false},
      {1, 45, 47, 3, 64, 1, true, true},   {3, 21, 19, 3, 20, 2, true, false},
  };
  check_every_isa(cases, sizeof cases / sizeof cases[0]);
}

/* cnn's second and third layers (32 -> 64 with stride 2, 64 -> 64) at
 * batch 1 and 3, odd sizes, 40 out-features (a panel's tail), and an
 * infinite column: the GEMM by panels' blocks and the pieces of their
 * last round. */
static void gemm_split_matches_one_thread(void **state) {
  (void)state;
  static const conv_case cases[] = {
      {1, 32, 32, 32, 64, 2, true, false}, {3, 32, 32, 32, 64, 2, true, false},
      {1, 16, 16, 64, 64, 1, true, false}, {3, 16, 16, 64, 64, 1, false, false},
      {3, 19, 21, 64, 64, 1, true, true},  {1, 33, 31, 24, 40, 1, true, false},
      {3, 13, 27, 48, 64, 2, false, false},
  };
  /* Only the GEMM by panels (AVX-512F) is the engine's own: elsewhere
   * OpenBLAS multiplies each thread's share, and its result for a row
   * depends on the share's size (its small-matrix kernels), as before */
  const char *was = shlo__vmath_isa();
  if (!shlo__vmath_use_isa("avx512f")) {
    print_message("no AVX-512F: the GEMM by panels is not taken\n");
    skip();
  }
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
    check_case(&cases[k]);
  assert_true(shlo__vmath_use_isa(was));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(small_window_split_matches_one_thread),
      cmocka_unit_test(gemm_split_matches_one_thread),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
