/* SPDX-License-Identifier: Apache-2.0 */
/* A product scaled by a scalar and then reduced, as attention's scores
 * are (kernels/fuse_scale.c): the multiply taken into the product's
 * GEMM gives the bits of the same program op by op, and of one thread,
 * on every vmath ISA this machine runs.  The shapes reach each route of
 * the GEMM with an epilogue (kernels/linalg.c): a batch split over the
 * threads through the panels, one product by the panels, a batch the
 * threads do not split, products too small for the panels and too deep
 * for them (OpenBLAS), the bf16 GEMM with an f32 product, each with
 * the rhs stored transposed or not.  The
 * lhs holds NaN, the scales include a negative one, NaN and a scale
 * computed at run time; a multiply with the scalar first, and a product
 * something else reads too, keep their steps. */
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

#define TEXT_CAP 8192
#define FOLDED "dot_general + multiply [in the producer's registers]"

enum {
  RHS_KN = 1,       /* rhs stored [b, k, n] rather than [b, n, k] */
  SCALAR_FIRST = 2, /* multiply(broadcast, product): not taken */
  READ_TWICE = 4,   /* the product is also returned: not taken */
  RUNTIME = 8,      /* the scale is sqrt(its square), made at run time */
  BF16 = 16,        /* q and k rounded to bf16, the product f32 */
  NO_NAN = 32,      /* q without its NaNs (a NaN scale meets no NaN
                       product: which of two NaNs a multiply keeps is the
                       engine's one caveat, kernels/vchain.h) */
};

typedef struct scale_case {
  int b, m, k, n;
  const char *scale; /* a float literal */
  int how;
} scale_case;

/* softmax(q k^T * scale) over the last dimension, q = 8 sin(i) except
 * its first three elements, NaN (log(i - 2) * 0; with NO_NAN log(i + 3)
 * * 0, zeros), k = 8 cos(j); with READ_TWICE the product is returned as
 * well. */
static void scale_program(char *buf, size_t cap, const scale_case *c) {
  long qn = (long)c->b * c->m * c->k, kn = (long)c->b * c->n * c->k;
  char Q[64], K[64], S[64], R[64];
  snprintf(Q, sizeof Q, "tensor<%dx%dx%dxf32>", c->b, c->m, c->k);
  if (c->how & RHS_KN)
    snprintf(K, sizeof K, "tensor<%dx%dx%dxf32>", c->b, c->k, c->n);
  else
    snprintf(K, sizeof K, "tensor<%dx%dx%dxf32>", c->b, c->n, c->k);
  snprintf(S, sizeof S, "tensor<%dx%dx%dxf32>", c->b, c->m, c->n);
  const char *ty = c->how & BF16 ? "bf16" : "f32";
  snprintf(R, sizeof R, "tensor<%dx%dxf32>", c->b, c->m);
  buf[0] = 0;
  harness_appendf(buf, cap, "func.func @main() -> (%s%s%s) {\n", S,
                  c->how & READ_TWICE ? ", " : "",
                  c->how & READ_TWICE ? S : "");
  harness_appendf(buf, cap,
      "  %%qi = stablehlo.iota dim = 0 : tensor<%ldxf32>\n"
      "  %%qs = stablehlo.sine %%qi : tensor<%ldxf32>\n"
      "  %%q8 = stablehlo.constant dense<8.0> : tensor<%ldxf32>\n"
      "  %%qv = stablehlo.multiply %%qs, %%q8 : tensor<%ldxf32>\n"
      "  %%q2 = stablehlo.constant dense<%s> : tensor<%ldxf32>\n"
      "  %%qd = stablehlo.subtract %%qi, %%q2 : tensor<%ldxf32>\n"
      "  %%ql = stablehlo.log %%qd : tensor<%ldxf32>\n"
      "  %%q0 = stablehlo.constant dense<0.0> : tensor<%ldxf32>\n"
      "  %%qz = stablehlo.multiply %%ql, %%q0 : tensor<%ldxf32>\n"
      "  %%qa = stablehlo.add %%qv, %%qz : tensor<%ldxf32>\n"
      "  %%q = stablehlo.reshape %%qa : (tensor<%ldxf32>) -> %s\n",
      qn, qn, qn, qn, c->how & NO_NAN ? "-3.0" : "2.0", qn, qn, qn, qn, qn,
      qn, qn, Q);
  harness_appendf(buf, cap,
      "  %%ki = stablehlo.iota dim = 0 : tensor<%ldxf32>\n"
      "  %%kc = stablehlo.cosine %%ki : tensor<%ldxf32>\n"
      "  %%k8 = stablehlo.constant dense<8.0> : tensor<%ldxf32>\n"
      "  %%kv = stablehlo.multiply %%kc, %%k8 : tensor<%ldxf32>\n"
      "  %%k = stablehlo.reshape %%kv : (tensor<%ldxf32>) -> %s\n",
      kn, kn, kn, kn, kn, K);
  char Qt[64], Kt[64];
  snprintf(Qt, sizeof Qt, "%.*s%s>", (int)(strlen(Q) - 4), Q, ty);
  snprintf(Kt, sizeof Kt, "%.*s%s>", (int)(strlen(K) - 4), K, ty);
  if (c->how & BF16)
    harness_appendf(buf, cap,
        "  %%qb = stablehlo.convert %%q : (%s) -> %s\n"
        "  %%kb = stablehlo.convert %%k : (%s) -> %s\n",
        Q, Qt, K, Kt);
  harness_appendf(buf, cap,
      "  %%p = stablehlo.dot_general %s, %s, batching_dims = [0] x [0], "
      "contracting_dims = [2] x [%d] : (%s, %s) -> %s\n",
      c->how & BF16 ? "%qb" : "%q", c->how & BF16 ? "%kb" : "%k",
      c->how & RHS_KN ? 1 : 2, Qt, Kt, S);
  if (c->how & RUNTIME)
    harness_appendf(buf, cap,
        "  %%c0 = stablehlo.constant dense<%s> : tensor<f32>\n"
        "  %%c2 = stablehlo.multiply %%c0, %%c0 : tensor<f32>\n"
        "  %%c = stablehlo.sqrt %%c2 : tensor<f32>\n",
        c->scale);
  else
    harness_appendf(buf, cap,
                    "  %%c = stablehlo.constant dense<%s> : tensor<f32>\n",
                    c->scale);
  harness_appendf(buf, cap,
      "  %%cb = stablehlo.broadcast_in_dim %%c, dims = [] : (tensor<f32>) "
      "-> %s\n"
      "  %%x = stablehlo.multiply %s : %s\n",
      S, c->how & SCALAR_FIRST ? "%cb, %p" : "%p, %cb", S);
  harness_appendf(buf, cap,
      "  %%ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"
      "  %%mx = stablehlo.reduce(%%x init: %%ninf) applies stablehlo.maximum "
      "across dimensions = [2] : (%s, tensor<f32>) -> %s\n"
      "  %%mb = stablehlo.broadcast_in_dim %%mx, dims = [0, 1] : (%s) -> %s\n"
      "  %%d = stablehlo.subtract %%x, %%mb : %s\n"
      "  %%e = stablehlo.exponential %%d : %s\n"
      "  %%z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %%s = stablehlo.reduce(%%e init: %%z) applies stablehlo.add "
      "across dimensions = [2] : (%s, tensor<f32>) -> %s\n"
      "  %%sb = stablehlo.broadcast_in_dim %%s, dims = [0, 1] : (%s) -> %s\n"
      "  %%y = stablehlo.divide %%e, %%sb : %s\n",
      S, R, R, S, S, S, S, R, R, S, S);
  harness_appendf(buf, cap, "  func.return %%y%s : %s%s%s\n}\n",
                  c->how & READ_TWICE ? ", %p" : "", S,
                  c->how & READ_TWICE ? ", " : "",
                  c->how & READ_TWICE ? S : "");
}

/* Fused and op by op, byte for byte; the fused plan folds the multiply
 * into the product exactly when `folds`. */
static void same_bits(const scale_case *c, bool folds) {
  char *text = malloc(TEXT_CAP);
  assert_non_null(text);
  scale_program(text, TEXT_CAP, c);
  harness_result a = harness_run_fused(text, true, NULL, 0);
  harness_result b = harness_run_fused(text, false, NULL, 0);
  if ((strstr(a.plan, FOLDED) != NULL) != folds) {
    fprintf(stderr, "%s\n%s\n", text, a.plan);
    fail_msg("%dx%dx%dx%d: the multiply %s", c->b, c->m, c->k, c->n,
             folds ? "kept its step" : "was folded");
  }
  assert_null(strstr(b.plan, FOLDED));
  assert_int_equal(a.n, b.n);
  for (int i = 0; i < a.n; i++) {
    assert_int_equal(a.v[i]->nbytes, b.v[i]->nbytes);
    if (memcmp(a.v[i]->data, b.v[i]->data, a.v[i]->nbytes)) {
      const uint32_t *p = a.v[i]->data, *q = b.v[i]->data;
      size_t e = 0;
      while (p[e] == q[e]) e++;
      fail_msg("%s, %dx%dx%dx%d scaled by %s (how %d): element %zu fused "
               "0x%08x, op by op 0x%08x",
               shlo__vmath_isa(), c->b, c->m, c->k, c->n, c->scale, c->how,
               e, (unsigned)p[e], (unsigned)q[e]);
    }
  }
  harness_result_free(&a);
  harness_result_free(&b);
  free(text);
}

static const scale_case routes[] = {
    {4, 64, 16, 48, "0.125", 0},            /* batch split, panels */
    {4, 64, 16, 48, "0.125", RHS_KN},
    {1, 96, 32, 40, "-3.0", 0},              /* one product, panels */
    {1, 96, 32, 40, "0.125", RHS_KN | RUNTIME},
    {3, 40, 16, 32, "0.25", 0},              /* a batch not split */
    {4, 20, 8, 10, "0.125", 0},              /* too small for panels */
    {2, 24, 4100, 32, "0.0625", RHS_KN},     /* too deep: OpenBLAS */
    {4, 64, 16, 48, "0x7FC00001", NO_NAN},   /* a NaN scale */
    {4, 64, 16, 48, "-0.5", RUNTIME},
    {4, 64, 32, 48, "0.125", BF16},          /* the bf16 GEMM */
    {3, 64, 32, 48, "0.125", BF16 | RHS_KN},
};

static void each_route(void) {
  for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++)
    same_bits(&routes[i], true);
}

/* Every route on each ISA the machine runs (the panels on AVX-512 only;
 * OpenBLAS and the scale in memory on the others). */
static void scaled_products_match_op_by_op(void **state) {
  (void)state;
  static const char *isas[] = {"avx512f", "avx2", "portable"};
  const char *was = shlo__vmath_isa();
  for (size_t i = 0; i < sizeof isas / sizeof isas[0]; i++)
    if (shlo__vmath_use_isa(isas[i])) each_route();
  assert_true(shlo__vmath_use_isa(was));
}

/* The batch split over 2 and 3 threads gives one thread's bytes. */
static void scaled_products_same_on_every_pool(void **state) {
  (void)state;
  char *text = malloc(TEXT_CAP);
  assert_non_null(text);
  scale_program(text, TEXT_CAP, &routes[0]);
  harness_same_on_pools(text);
  scale_program(text, TEXT_CAP, &routes[2]);
  harness_same_on_pools(text);
  free(text);
}

/* The scalar written first, or a product read twice: the multiply stays
 * a step of its own, with its bits. */
static void near_scales_keep_their_steps(void **state) {
  (void)state;
  static const scale_case kept[] = {
      {4, 64, 16, 48, "0.125", SCALAR_FIRST},
      {4, 64, 16, 48, "0.125", READ_TWICE},
  };
  for (size_t i = 0; i < sizeof kept / sizeof kept[0]; i++)
    same_bits(&kept[i], false);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(scaled_products_match_op_by_op),
      cmocka_unit_test(scaled_products_same_on_every_pool),
      cmocka_unit_test(near_scales_keep_their_steps),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
