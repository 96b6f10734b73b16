/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests for the linear-algebra family: dot_general / dot
 * (engine/src/kernels/linalg.c, linalg_common.c), convolution / dynamic_conv
 * (conv.c), fft (fft.c), triangular_solve, cholesky and batch_norm_*.
 *
 * Two kinds of test: programs whose check.* ops state hand-computed
 * values (SHLO_OK means every check held), and programs that take random
 * arguments whose results are compared here with a plain reference loop
 * (every OpenBLAS path: in-place, transposed and packed operands, batched,
 * small sizes on the plain loops and large ones on BLAS; native integer
 * and i1 loops; FFT lengths that are not powers of two against a naive
 * DFT; grouped and dilated convolutions against the spec's formula; the
 * channels-last convolution path against the general one). */
#include <complex.h>
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
#include "shlo/context.h"
#include "shlo/engine.h"

/* ---- harness ---- */

/* The context programs compile and run in: NULL (the default, 3 threads)
 * or, while a test wants the general convolution kernel, one made with
 * conv_general (what SHLO_CONV_GENERAL=1 gives the CLI). */
static shlo_context *use_ctx, *general_ctx_made;

static shlo_context *general_ctx(void) {
  if (!general_ctx_made) {
    shlo_context_options o;
    shlo_context_options_init(&o);
    o.threads = 3;
    o.conv_general = true;
    assert_int_equal(shlo_context_create(&o, &general_ctx_made), SHLO_OK);
  }
  return general_ctx_made;
}

/* Parse, compile and run `text` with args; results (if wanted) get owned
 * references.  Returns the status of the first stage that fails. */
static shlo_status run_args(const char *text, shlo_value *const *args,
                            int n_args, shlo_value ***res, int *n_res,
                            int quiet) {
  shlo_module *m = NULL;
  shlo_executable *e = NULL;
  shlo_value **r = NULL;
  int nr = 0;
  shlo_diag d;
  char buf[SHLO_DIAG_MAX + 256];
  shlo_diag_clear(&d);
  shlo_compile_opts co = {.context = use_ctx};
  shlo_status st = shlo_parse_module(text, strlen(text), "test.mlir", &m, &d);
  if (st == SHLO_OK) st = shlo_compile(m, &co, &e, &d);
  if (st == SHLO_OK) st = shlo_execute(e, NULL, args, n_args, &r, &nr, &d);
  if (st != SHLO_OK && !quiet) {
    shlo_diag_format(&d, buf, sizeof buf);
    print_message("%s: %s\n", shlo_status_name(st), buf);
  }
  if (res) {
    *res = r;
    *n_res = nr;
  } else {
    for (int i = 0; i < nr; i++) shlo_value_unref(r[i]);
    free(r);
  }
  if (e) shlo_executable_free(e);
  if (m) shlo_module_free(m);
  return st;
}

static shlo_status run_text(const char *text, int quiet) {
  return run_args(text, NULL, 0, NULL, NULL, quiet);
}

#define PROG(...) "func.func @main() {\n" __VA_ARGS__ "  func.return\n}\n"
#define RUN_OK(...) assert_int_equal(run_text(PROG(__VA_ARGS__), 0), SHLO_OK)

/* Deterministic pseudo-random numbers. */
static uint64_t rng_state = 88172645463325252ull;
static uint64_t rnd(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}
static double rnd_unit(void) {
  return (double)(rnd() >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

/* "tensor<2x3xf32>" */
static void type_str(char *buf, size_t cap, shlo_elem_type t, int rank,
                     const int64_t *dims) {
  size_t n = (size_t)snprintf(buf, cap, "tensor<");
  for (int i = 0; i < rank; i++)
    n += (size_t)snprintf(buf + n, cap - n, "%lldx", (long long)dims[i]);
  snprintf(buf + n, cap - n, "%s>", shlo_elem_name(t));
}

/* A tensor of random values: floats in [-1, 1] (both parts for complex),
 * integers in [-ir, ir] (0..2ir for unsigned; 0/1 for i1). */
static shlo_value *rand_tensor(shlo_elem_type t, int rank, const int64_t *dims,
                               int64_t ir) {
  shlo_value *v = shlo_tensor_new(t, rank, dims);
  assert_non_null(v);
  for (int64_t i = 0; i < v->numel; i++) {
    if (t == SHLO_C64) {
      float *p = (float *)v->data + 2 * i;
      p[0] = (float)rnd_unit(), p[1] = (float)rnd_unit();
    } else if (t == SHLO_C128) {
      double *p = (double *)v->data + 2 * i;
      p[0] = rnd_unit(), p[1] = rnd_unit();
    } else if (t == SHLO_I1) {
      shlo_tensor_set_i64(v, i, (int64_t)(rnd() & 1));
    } else if (t == SHLO_UI8 || t == SHLO_UI16 || t == SHLO_UI32 ||
               t == SHLO_UI64) {
      shlo_tensor_set_i64(v, i, (int64_t)(rnd() % (uint64_t)(2 * ir + 1)));
    } else if (t == SHLO_SI8 || t == SHLO_SI16 || t == SHLO_SI32 ||
               t == SHLO_SI64) {
      shlo_tensor_set_i64(v, i, (int64_t)(rnd() % (uint64_t)(2 * ir + 1)) - ir);
    } else {
      shlo_tensor_set_f64(v, i, rnd_unit());
    }
  }
  return v;
}

static bool is_int_type(shlo_elem_type t) {
  return t != SHLO_I1 && t != SHLO_F32 && t != SHLO_F64 && t != SHLO_C64 &&
         t != SHLO_C128 && t != SHLO_BF16 && t != SHLO_F16;
}

/* One step of the reference loops: adds args[0][lo] * args[1][ro] to
 * iacc (integral: wrapping) or to acc (complex doubles), summing the
 * product's magnitude into mag for the tolerance. */
static void ref_mac(shlo_value *const *args, int64_t lo, int64_t ro,
                    bool integral, uint64_t *iacc, double complex *acc,
                    double *mag) {
  if (integral) {
    *iacc += (uint64_t)shlo_tensor_get_i64(args[0], lo) *
             (uint64_t)shlo_tensor_get_i64(args[1], ro);
    return;
  }
  double ar, ai, br, bi;
  shlo_tensor_get_c128(args[0], lo, &ar, &ai);
  shlo_tensor_get_c128(args[1], ro, &br, &bi);
  *acc += (ar + ai * I) * (br + bi * I);
  *mag += cabs(ar + ai * I) * cabs(br + bi * I);
}

/* ---- dot_general against a reference loop ---- */

typedef struct dot_case {
  shlo_elem_type lt, rt, ot;
  int lr, rr;
  int64_t ld[6], rd[6];
  int nb, nc;
  int64_t lb[3], rb[3], lc[3], rc[3];
} dot_case;

static void unravel(int64_t i, int rank, const int64_t *dims, int64_t *idx) {
  for (int d = rank - 1; d >= 0; d--) {
    idx[d] = dims[d] ? i % dims[d] : 0;
    if (dims[d]) i /= dims[d];
  }
}
static int64_t ravel(int rank, const int64_t *dims, const int64_t *idx) {
  int64_t off = 0;
  for (int d = 0; d < rank; d++) off = off * dims[d] + idx[d];
  return off;
}

static void run_dot_case(const dot_case *c) {
  char lts[128], rts[128], ots[128], text[2048];
  int64_t od[8];
  int orank = 0;
  int lrole[6] = {0}, rrole[6] = {0};
  for (int i = 0; i < c->nb; i++) lrole[c->lb[i]] = 1, rrole[c->rb[i]] = 1;
  for (int i = 0; i < c->nc; i++) lrole[c->lc[i]] = 2, rrole[c->rc[i]] = 2;
  for (int i = 0; i < c->nb; i++) od[orank++] = c->ld[c->lb[i]];
  int64_t lfree[6], rfree[6];
  int nlf = 0, nrf = 0;
  for (int d = 0; d < c->lr; d++)
    if (!lrole[d]) lfree[nlf++] = d, od[orank++] = c->ld[d];
  for (int d = 0; d < c->rr; d++)
    if (!rrole[d]) rfree[nrf++] = d, od[orank++] = c->rd[d];
  type_str(lts, sizeof lts, c->lt, c->lr, c->ld);
  type_str(rts, sizeof rts, c->rt, c->rr, c->rd);
  type_str(ots, sizeof ots, c->ot, orank, od);
  char bl[64] = "", br[64] = "", cl[64] = "", cr[64] = "";
  for (int i = 0; i < c->nb; i++) {
    snprintf(bl + strlen(bl), sizeof bl - strlen(bl), "%s%lld", i ? ", " : "",
             (long long)c->lb[i]);
    snprintf(br + strlen(br), sizeof br - strlen(br), "%s%lld", i ? ", " : "",
             (long long)c->rb[i]);
  }
  for (int i = 0; i < c->nc; i++) {
    snprintf(cl + strlen(cl), sizeof cl - strlen(cl), "%s%lld", i ? ", " : "",
             (long long)c->lc[i]);
    snprintf(cr + strlen(cr), sizeof cr - strlen(cr), "%s%lld", i ? ", " : "",
             (long long)c->rc[i]);
  }
  snprintf(text, sizeof text,
           "func.func @main(%%a: %s, %%b: %s) -> %s {\n"
           "  %%r = stablehlo.dot_general %%a, %%b, batching_dims = [%s] x "
           "[%s], contracting_dims = [%s] x [%s] : (%s, %s) -> %s\n"
           "  func.return %%r : %s\n}\n",
           lts, rts, ots, bl, br, cl, cr, lts, rts, ots, ots);
  shlo_value *args[2] = {rand_tensor(c->lt, c->lr, c->ld, 100),
                         rand_tensor(c->rt, c->rr, c->rd, 100)};
  shlo_value **res = NULL;
  int nres = 0;
  assert_int_equal(run_args(text, args, 2, &res, &nres, 0), SHLO_OK);
  assert_int_equal(nres, 1);
  shlo_value *r = res[0];
  assert_int_equal(r->rank, orank);
  /* reference */
  int64_t cdims[3];
  for (int i = 0; i < c->nc; i++) cdims[i] = c->ld[c->lc[i]];
  int64_t ncon = 1;
  for (int i = 0; i < c->nc; i++) ncon *= cdims[i];
  bool integral = is_int_type(c->ot);
  bool boolean = c->ot == SHLO_I1;
  double tol = c->ot == SHLO_F32 || c->ot == SHLO_C64 ? 1e-5
               : c->ot == SHLO_BF16                   ? 1e-2
                                                      : 1e-12;
  for (int64_t oi = 0; oi < r->numel; oi++) {
    int64_t oidx[8], li[6], ri[6], ci[3];
    unravel(oi, orank, od, oidx);
    int p = 0;
    for (int i = 0; i < c->nb; i++, p++)
      li[c->lb[i]] = oidx[p], ri[c->rb[i]] = oidx[p];
    for (int i = 0; i < nlf; i++) li[lfree[i]] = oidx[p++];
    for (int i = 0; i < nrf; i++) ri[rfree[i]] = oidx[p++];
    double complex acc = 0;
    double mag = 0;
    uint64_t iacc = 0;
    int bacc = 0;
    for (int64_t k = 0; k < ncon; k++) {
      unravel(k, c->nc, cdims, ci);
      for (int i = 0; i < c->nc; i++) li[c->lc[i]] = ci[i], ri[c->rc[i]] = ci[i];
      int64_t lo = ravel(c->lr, c->ld, li), ro = ravel(c->rr, c->rd, ri);
      if (boolean)
        bacc |= shlo_tensor_get_i64(args[0], lo) &&
                shlo_tensor_get_i64(args[1], ro);
      else
        ref_mac(args, lo, ro, integral, &iacc, &acc, &mag);
    }
    if (integral) {
      assert_int_equal(shlo_tensor_get_i64(r, oi),
                       shlo_int_wrap(c->ot, (int64_t)iacc));
    } else if (boolean) {
      assert_int_equal(shlo_tensor_get_i64(r, oi), bacc);
    } else {
      double gr, gi;
      shlo_tensor_get_c128(r, oi, &gr, &gi);
      double err = cabs((gr + gi * I) - acc);
      if (err > tol * (1 + mag)) {
        print_message("element %lld: got (%g, %g), want (%g, %g)\n",
                      (long long)oi, gr, gi, creal(acc), cimag(acc));
        fail();
      }
    }
  }
  shlo_value_unref(r);
  free(res);
  shlo_value_unref(args[0]);
  shlo_value_unref(args[1]);
}

static const shlo_elem_type blas_types[] = {SHLO_F32, SHLO_F64, SHLO_C64,
                                            SHLO_C128};

/* [B, M, K] x [B, K, N]: in place; big (BLAS) and small (plain loops). */
static void test_dot_batched_direct(void **state) {
  (void)state;
  for (int t = 0; t < 4; t++) {
    shlo_elem_type e = blas_types[t];
    dot_case big = {e, e, e, 3, 3, {3, 40, 41}, {3, 41, 42}, 1, 1,
                    {0}, {0}, {2}, {1}};
    run_dot_case(&big);
    dot_case small = {e, e, e, 3, 3, {2, 3, 4}, {2, 4, 5}, 1, 1,
                      {0}, {0}, {2}, {1}};
    run_dot_case(&small);
  }
}

/* Attention's shape, [B, M, K] x [B, N, K] -> [B, M, N]: with the pool
 * at 3 threads (main), 9 batch elements share out evenly and split
 * across the pool one whole GEMM each, 8 do not and each GEMM splits in
 * turn; both must give every batch element its own product. */
static void test_dot_batches_split_across_the_pool(void **state) {
  (void)state;
  for (int t = 0; t < 2; t++) {
    shlo_elem_type e = blas_types[t];
    dot_case even = {e, e, e, 3, 3, {9, 48, 40}, {9, 56, 40}, 1, 1,
                     {0}, {0}, {2}, {2}};
    run_dot_case(&even);
    dot_case uneven = {e, e, e, 3, 3, {8, 48, 40}, {8, 40, 56}, 1, 1,
                       {0}, {0}, {2}, {1}};
    run_dot_case(&uneven);
  }
}

/* Operands stored transposed ([K, M] and [N, K]): BLAS transposes. */
static void test_dot_transposed(void **state) {
  (void)state;
  for (int t = 0; t < 4; t++) {
    shlo_elem_type e = blas_types[t];
    dot_case big = {e, e, e, 2, 2, {50, 37}, {45, 50}, 0, 1,
                    {0}, {0}, {0}, {1}};
    run_dot_case(&big);
    dot_case small = {e, e, e, 2, 2, {3, 2}, {4, 3}, 0, 1, {0}, {0}, {0}, {1}};
    run_dot_case(&small);
  }
}

/* Scattered batch/contracting dims: packed operands, two contracting. */
static void test_dot_packed(void **state) {
  (void)state;
  for (int t = 0; t < 4; t++) {
    shlo_elem_type e = blas_types[t];
    /* lhs [M1=5, K1=6, B=2, K2=7, M2=4], rhs [K2=7, N=33, B=2, K1=6] */
    dot_case c = {e, e, e, 5, 4, {5, 6, 2, 7, 4}, {7, 33, 2, 6}, 1, 2,
                  {2}, {2}, {1, 3}, {3, 0}};
    run_dot_case(&c);
  }
  /* mixed: f32 operands into an f64 result, ints into complex */
  dot_case m1 = {SHLO_F32, SHLO_F32, SHLO_F64, 2, 2, {3, 4}, {4, 2}, 0, 1,
                 {0}, {0}, {1}, {0}};
  run_dot_case(&m1);
  dot_case m2 = {SHLO_SI8, SHLO_SI8, SHLO_C64, 2, 2, {3, 4}, {4, 2}, 0, 1,
                 {0}, {0}, {1}, {0}};
  run_dot_case(&m2);
}

/* Integer results wrap at their width; i1 is and/or. */
static void test_dot_integers(void **state) {
  (void)state;
  const shlo_elem_type it[] = {SHLO_SI8, SHLO_UI8, SHLO_SI16, SHLO_SI32,
                               SHLO_UI32, SHLO_SI64, SHLO_UI64};
  for (int t = 0; t < 7; t++) {
    dot_case c = {it[t], it[t], it[t], 3, 3, {2, 5, 9}, {2, 9, 3}, 1, 1,
                  {0}, {0}, {2}, {1}};
    run_dot_case(&c);
  }
  dot_case b = {SHLO_I1, SHLO_I1, SHLO_I1, 2, 2, {4, 6}, {6, 5}, 0, 1,
                {0}, {0}, {1}, {0}};
  run_dot_case(&b);
  dot_case bf = {SHLO_BF16, SHLO_BF16, SHLO_BF16, 2, 2, {4, 3}, {3, 6}, 0, 1,
                 {0}, {0}, {1}, {0}};
  run_dot_case(&bf);
  RUN_OK("  %a = stablehlo.constant dense<[100, 100, -128]> : tensor<3xi8>\n"
         "  %b = stablehlo.constant dense<[2, 2, 1]> : tensor<3xi8>\n"
         /* 400 - 128 = 272 wraps to 16 */
         "  %r = stablehlo.dot_general %a, %b, contracting_dims = [0] x [0]"
         " : (tensor<3xi8>, tensor<3xi8>) -> tensor<i8>\n"
         "  check.expect_eq_const %r, dense<16> : tensor<i8>\n"
         "  %c = stablehlo.constant dense<[200, 100]> : tensor<2xui8>\n"
         "  %s = stablehlo.dot_general %c, %c, contracting_dims = [0] x [0]"
         " : (tensor<2xui8>, tensor<2xui8>) -> tensor<ui8>\n"
         /* 40000 + 10000 = 50000 = 195 * 256 + 80 */
         "  check.expect_eq_const %s, dense<80> : tensor<ui8>\n");
}

/* K = 0 gives zeros, M = 0 an empty result, a rank-0 result. */
static void test_dot_empty_and_scalar(void **state) {
  (void)state;
  RUN_OK("  %a = stablehlo.constant dense<> : tensor<2x0xf32>\n"
         "  %b = stablehlo.constant dense<> : tensor<0x3xf32>\n"
         "  %r = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0]"
         " : (tensor<2x0xf32>, tensor<0x3xf32>) -> tensor<2x3xf32>\n"
         "  check.expect_eq_const %r, dense<0.0> : tensor<2x3xf32>\n"
         "  %ai = stablehlo.constant dense<> : tensor<2x0xi32>\n"
         "  %bi = stablehlo.constant dense<> : tensor<0x3xi32>\n"
         "  %ri = stablehlo.dot_general %ai, %bi, contracting_dims = [1] x [0]"
         " : (tensor<2x0xi32>, tensor<0x3xi32>) -> tensor<2x3xi32>\n"
         "  check.expect_eq_const %ri, dense<0> : tensor<2x3xi32>\n");
  RUN_OK("  %c = stablehlo.constant dense<> : tensor<0x4xf64>\n"
         "  %d = stablehlo.constant dense<1.0> : tensor<4x3xf64>\n"
         "  %r = stablehlo.dot_general %c, %d, contracting_dims = [1] x [0]"
         " : (tensor<0x4xf64>, tensor<4x3xf64>) -> tensor<0x3xf64>\n"
         "  check.expect_eq_const %r, dense<> : tensor<0x3xf64>\n"
         "  %e = stablehlo.constant dense<[[1.0, 2.0], [3.0, 4.0]]>"
         " : tensor<2x2xf64>\n"
         "  %s = stablehlo.dot_general %e, %e, batching_dims = [0, 1] x [0, 1]"
         " : (tensor<2x2xf64>, tensor<2x2xf64>) -> tensor<2x2xf64>\n"
         "  check.expect_eq_const %s, dense<[[1.0, 4.0], [9.0, 16.0]]>"
         " : tensor<2x2xf64>\n"
         "  %v = stablehlo.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>\n"
         "  %w = stablehlo.dot_general %v, %v, contracting_dims = [0] x [0]"
         " : (tensor<3xf32>, tensor<3xf32>) -> tensor<f32>\n"
         "  check.expect_eq_const %w, dense<14.0> : tensor<f32>\n");
}

/* Legacy stablehlo.dot: matrix-vector and vector-matrix. */
static void test_dot_legacy(void **state) {
  (void)state;
  RUN_OK("  %m = stablehlo.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]>"
         " : tensor<3x2xf32>\n"
         "  %v = stablehlo.constant dense<[1.0, -1.0]> : tensor<2xf32>\n"
         "  %r = \"stablehlo.dot\"(%m, %v) : (tensor<3x2xf32>, tensor<2xf32>)"
         " -> tensor<3xf32>\n"
         "  check.expect_eq_const %r, dense<[-1.0, -1.0, -1.0]> : tensor<3xf32>\n"
         "  %u = stablehlo.constant dense<[1.0, 0.0, 2.0]> : tensor<3xf32>\n"
         "  %s = stablehlo.dot %u, %m : (tensor<3xf32>, tensor<3x2xf32>)"
         " -> tensor<2xf32>\n"
         "  check.expect_eq_const %s, dense<[11.0, 14.0]> : tensor<2xf32>\n");
}

/* A wrong expectation is reported as a failed check. */
static void test_wrong_expectation(void **state) {
  (void)state;
  assert_int_equal(
      run_text(PROG("  %a = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>\n"
                    "  %r = stablehlo.dot_general %a, %a, contracting_dims = "
                    "[0] x [0] : (tensor<2xf32>, tensor<2xf32>) -> tensor<f32>\n"
                    "  check.expect_almost_eq_const %r, dense<6.0> : tensor<f32>\n"),
               1),
      SHLO_ECHECK);
  /* and a result shape that disagrees is refused at compile time */
  assert_int_equal(
      run_text(PROG("  %a = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>\n"
                    "  %r = stablehlo.dot_general %a, %a, contracting_dims = "
                    "[0] x [0] : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>\n"),
               1),
      SHLO_EVERIFY);
}

/* ---- convolution against the spec's formula ---- */

typedef struct conv_case {
  shlo_elem_type t;
  int64_t n, c, o, ci;          /* batch, lhs features, out features, kernel in */
  int64_t in[2], k[2];          /* spatial sizes */
  int64_t stride[2], ld[2], rd[2], pad[4];
  int rev[2];
  int64_t fgc, bgc;
  /* layout: positions of b, f, s0, s1 in lhs; i, o, s0, s1 in rhs; b, f,
   * s0, s1 in the result */
  int lpos[4], kpos[4], opos[4];
} conv_case;

static int64_t out_size(int64_t in, int64_t k, int64_t s, int64_t ld,
                        int64_t rd, int64_t lo, int64_t hi) {
  int64_t din = in ? (in - 1) * ld + 1 : 0, dk = k ? (k - 1) * rd + 1 : 0;
  int64_t p = lo + din + hi;
  return p < dk ? 0 : (p - dk) / s + 1;
}

static void run_conv_case(const conv_case *c) {
  int64_t ldims[4], kdims[4], odims[4], o_sp[2];
  for (int i = 0; i < 2; i++)
    o_sp[i] = out_size(c->in[i], c->k[i], c->stride[i], c->ld[i], c->rd[i],
                       c->pad[2 * i], c->pad[2 * i + 1]);
  int64_t lv[4] = {c->n, c->c, c->in[0], c->in[1]};
  int64_t kv[4] = {c->ci, c->o, c->k[0], c->k[1]};
  int64_t ov[4] = {c->n / c->bgc, c->o, o_sp[0], o_sp[1]};
  for (int i = 0; i < 4; i++) {
    ldims[c->lpos[i]] = lv[i];
    kdims[c->kpos[i]] = kv[i];
    odims[c->opos[i]] = ov[i];
  }
  char lts[128], kts[128], ots[128], text[4096], dn[3][32];
  type_str(lts, sizeof lts, c->t, 4, ldims);
  type_str(kts, sizeof kts, c->t, 4, kdims);
  type_str(ots, sizeof ots, c->t, 4, odims);
  const char *lett[3][2] = {{"b", "f"}, {"i", "o"}, {"b", "f"}};
  const int *pos[3] = {c->lpos, c->kpos, c->opos};
  for (int part = 0; part < 3; part++) {
    const char *slot[4];
    slot[pos[part][0]] = lett[part][0];
    slot[pos[part][1]] = lett[part][1];
    slot[pos[part][2]] = "0";
    slot[pos[part][3]] = "1";
    snprintf(dn[part], sizeof dn[part], "[%s, %s, %s, %s]", slot[0], slot[1],
             slot[2], slot[3]);
  }
  snprintf(text, sizeof text,
           "func.func @main(%%a: %s, %%b: %s) -> %s {\n"
           "  %%r = \"stablehlo.convolution\"(%%a, %%b) {\n"
           "    dimension_numbers = #stablehlo.conv<%sx%s->%s>,\n"
           "    window_strides = array<i64: %lld, %lld>,\n"
           "    padding = dense<[[%lld, %lld], [%lld, %lld]]> : tensor<2x2xi64>,\n"
           "    lhs_dilation = array<i64: %lld, %lld>,\n"
           "    rhs_dilation = array<i64: %lld, %lld>,\n"
           "    window_reversal = array<i1: %s, %s>,\n"
           "    feature_group_count = %lld : i64, batch_group_count = %lld : i64\n"
           "  } : (%s, %s) -> %s\n"
           "  func.return %%r : %s\n}\n",
           lts, kts, ots, dn[0], dn[1], dn[2], (long long)c->stride[0],
           (long long)c->stride[1], (long long)c->pad[0], (long long)c->pad[1],
           (long long)c->pad[2], (long long)c->pad[3], (long long)c->ld[0],
           (long long)c->ld[1], (long long)c->rd[0], (long long)c->rd[1],
           c->rev[0] ? "true" : "false", c->rev[1] ? "true" : "false",
           (long long)c->fgc, (long long)c->bgc, lts, kts, ots, ots);
  shlo_value *args[2] = {rand_tensor(c->t, 4, ldims, 20),
                         rand_tensor(c->t, 4, kdims, 20)};
  shlo_value **res = NULL;
  int nres = 0;
  assert_int_equal(run_args(text, args, 2, &res, &nres, 0), SHLO_OK);
  shlo_value *r = res[0];
  int64_t groups = c->fgc * c->bgc, og = c->o / groups, nb = c->n / c->bgc;
  bool integral = is_int_type(c->t);
  for (int64_t oi = 0; oi < r->numel; oi++) {
    int64_t idx[4], v[4];
    unravel(oi, 4, odims, idx);
    for (int i = 0; i < 4; i++) v[i] = idx[c->opos[i]]; /* b, f, s0, s1 */
    int64_t g = v[1] / og;
    double complex acc = 0;
    uint64_t iacc = 0;
    double mag = 0;
    for (int64_t ch = 0; ch < c->ci; ch++)
      for (int64_t k0 = 0; k0 < c->k[0]; k0++)
        for (int64_t k1 = 0; k1 < c->k[1]; k1++) {
          int64_t kk[2] = {k0, k1}, q[2];
          bool ok = true;
          for (int i = 0; i < 2 && ok; i++) {
            int64_t p = v[2 + i] * c->stride[i] + kk[i] * c->rd[i] - c->pad[2 * i];
            ok = p >= 0 && p % c->ld[i] == 0 && p / c->ld[i] < c->in[i];
            q[i] = ok ? p / c->ld[i] : 0;
          }
          if (!ok) continue;
          int64_t la[4] = {(c->bgc > 1 ? g * nb : 0) + v[0],
                           (c->fgc > 1 ? g * c->ci : 0) + ch, q[0], q[1]};
          int64_t ka[4] = {ch, v[1], c->rev[0] ? c->k[0] - 1 - k0 : k0,
                           c->rev[1] ? c->k[1] - 1 - k1 : k1};
          int64_t li[4], ki[4];
          for (int i = 0; i < 4; i++) li[c->lpos[i]] = la[i], ki[c->kpos[i]] = ka[i];
          int64_t lo = ravel(4, ldims, li), ko = ravel(4, kdims, ki);
          ref_mac(args, lo, ko, integral, &iacc, &acc, &mag);
        }
    if (integral) {
      assert_int_equal(shlo_tensor_get_i64(r, oi),
                       shlo_int_wrap(c->t, (int64_t)iacc));
    } else {
      double gr, gi;
      shlo_tensor_get_c128(r, oi, &gr, &gi);
      if (cabs(gr + gi * I - acc) > 1e-5 * (1 + mag)) {
        print_message("conv element %lld: got (%g, %g) want (%g, %g)\n",
                      (long long)oi, gr, gi, creal(acc), cimag(acc));
        fail();
      }
    }
  }
  shlo_value_unref(r);
  free(res);
  shlo_value_unref(args[0]);
  shlo_value_unref(args[1]);
}

static void test_conv_groups_dilation(void **state) {
  (void)state;
  const shlo_elem_type ts[] = {SHLO_F32, SHLO_F64, SHLO_C64, SHLO_C128,
                               SHLO_SI32, SHLO_SI8};
  for (int t = 0; t < 6; t++) {
    /* NHWC / HWIO, feature groups, rhs and lhs dilation, strides,
     * negative and positive padding, window reversal */
    conv_case a = {ts[t], 2, 4, 6, 2, {7, 6}, {3, 2}, {2, 1}, {2, 1},
                   {1, 2}, {1, -1, 2, 0}, {1, 0}, 2, 1,
                   {0, 3, 1, 2}, {2, 3, 0, 1}, {0, 3, 1, 2}};
    run_conv_case(&a);
    /* NCHW / OIHW, batch groups */
    conv_case b = {ts[t], 4, 3, 4, 3, {5, 5}, {2, 3}, {1, 2}, {1, 1},
                   {2, 1}, {0, 1, 1, 1}, {0, 1}, 1, 2,
                   {0, 1, 2, 3}, {1, 0, 2, 3}, {0, 1, 2, 3}};
    run_conv_case(&b);
    /* odd layout on every side, depthwise (feature groups = channels) */
    conv_case d = {ts[t], 1, 3, 6, 1, {4, 5}, {2, 2}, {1, 1}, {1, 2},
                   {1, 1}, {1, 1, 0, 0}, {1, 1}, 3, 1,
                   {2, 0, 3, 1}, {3, 1, 2, 0}, {1, 2, 0, 3}};
    run_conv_case(&d);
  }
  /* big enough that the f32 GEMM goes to OpenBLAS */
  conv_case big = {SHLO_F32, 2, 16, 32, 16, {12, 12}, {3, 3}, {1, 1}, {1, 1},
                   {1, 1}, {1, 1, 1, 1}, {0, 0}, 1, 1,
                   {0, 3, 1, 2}, {2, 3, 0, 1}, {0, 3, 1, 2}};
  run_conv_case(&big);
}

/* dynamic_conv takes its padding as an operand; an empty window or empty
 * input gives zeros / an empty result. */
static void test_conv_dynamic_and_empty(void **state) {
  (void)state;
  RUN_OK("  %l = stablehlo.constant dense<[[[1.0], [2.0], [3.0]]]>"
         " : tensor<1x3x1xf32>\n"
         "  %k = stablehlo.constant dense<[[[1.0]], [[10.0]]]> : tensor<2x1x1xf32>\n"
         "  %p = stablehlo.constant dense<[[1, 0]]> : tensor<1x2xi32>\n"
         "  %r = \"stablehlo.dynamic_conv\"(%l, %k, %p) {\n"
         "    dimension_numbers = #stablehlo.conv<[b, 0, f]x[0, i, o]->[b, 0, f]>,\n"
         "    window_strides = array<i64: 1>, lhs_dilation = array<i64: 1>,\n"
         "    rhs_dilation = array<i64: 1>, feature_group_count = 1 : i64,\n"
         "    batch_group_count = 1 : i64\n"
         "  } : (tensor<1x3x1xf32>, tensor<2x1x1xf32>, tensor<1x2xi32>)"
         " -> tensor<1x3x1xf32>\n"
         "  check.expect_almost_eq_const %r, dense<[[[10.0], [21.0], [32.0]]]>"
         " : tensor<1x3x1xf32>\n"
         "  %e = stablehlo.constant dense<> : tensor<1x3x0xf32>\n"
         "  %ke = stablehlo.constant dense<> : tensor<2x0x2xf32>\n"
         "  %z = stablehlo.convolution(%e, %ke)"
         " dim_numbers = [b, 0, f]x[0, i, o]->[b, 0, f], window = {}"
         " {batch_group_count = 1 : i64, feature_group_count = 1 : i64}"
         " : (tensor<1x3x0xf32>, tensor<2x0x2xf32>) -> tensor<1x2x2xf32>\n"
         "  check.expect_eq_const %z, dense<0.0> : tensor<1x2x2xf32>\n");
}

/* ---- convolution: the channels-last fast path against the general ---- */

/* The --explain text of `text`'s plan (malloc'd). */
static char *plan_text(const char *text) {
  shlo_module *m = NULL;
  shlo_executable *e = NULL;
  shlo_diag d;
  shlo_diag_clear(&d);
  if (shlo_parse_module(text, strlen(text), "test.mlir", &m, &d))
    fail_msg("parse: %s", d.message);
  shlo_compile_opts co = {.context = use_ctx};
  if (shlo_compile(m, &co, &e, &d)) fail_msg("compile: %s", d.message);
  char *plan = harness_explain(e);
  shlo_executable_free(e);
  shlo_module_free(m);
  return plan;
}

/* Whether `text`'s convolution takes the channels-last path. */
static bool takes_nhwc(const char *text) {
  char *plan = plan_text(text);
  bool fast = strstr(plan, "stablehlo.convolution [nhwc ") != NULL;
  assert_non_null(strstr(plan, "stablehlo.convolution"));
  free(plan);
  return fast;
}

typedef struct nhwc_case {
  shlo_elem_type t;
  int ns;                /* 1 or 2 spatial dimensions */
  int64_t n, ci, co;     /* batch, in-features, out-features */
  int64_t in[2], k[2], stride[2], rd[2], pad[4];
} nhwc_case;

/* The program of c: [b, 0, (1,) f] x [0, (1,) i, o] -> [b, 0, (1,) f]. */
static void nhwc_program(const nhwc_case *c, char *text, size_t cap,
                         int64_t *ldims, int64_t *kdims, int64_t *odims) {
  int ns = c->ns;
  ldims[0] = odims[0] = c->n;
  for (int i = 0; i < ns; i++) {
    ldims[1 + i] = c->in[i];
    kdims[i] = c->k[i];
    odims[1 + i] = out_size(c->in[i], c->k[i], c->stride[i], 1, c->rd[i],
                            c->pad[2 * i], c->pad[2 * i + 1]);
  }
  ldims[ns + 1] = c->ci;
  kdims[ns] = c->ci, kdims[ns + 1] = c->co;
  odims[ns + 1] = c->co;
  char lts[128], kts[128], ots[128], win[512];
  type_str(lts, sizeof lts, c->t, ns + 2, ldims);
  type_str(kts, sizeof kts, c->t, ns + 2, kdims);
  type_str(ots, sizeof ots, c->t, ns + 2, odims);
  if (ns == 1)
    snprintf(win, sizeof win,
             "    dimension_numbers = #stablehlo.conv<[b, 0, f]x[0, i, o]->"
             "[b, 0, f]>,\n    window_strides = array<i64: %lld>,\n"
             "    padding = dense<[[%lld, %lld]]> : tensor<1x2xi64>,\n"
             "    rhs_dilation = array<i64: %lld>,\n",
             (long long)c->stride[0], (long long)c->pad[0],
             (long long)c->pad[1], (long long)c->rd[0]);
  else
    snprintf(win, sizeof win,
             "    dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x"
             "[0, 1, i, o]->[b, 0, 1, f]>,\n"
             "    window_strides = array<i64: %lld, %lld>,\n"
             "    padding = dense<[[%lld, %lld], [%lld, %lld]]> :"
             " tensor<2x2xi64>,\n"
             "    rhs_dilation = array<i64: %lld, %lld>,\n",
             (long long)c->stride[0], (long long)c->stride[1],
             (long long)c->pad[0], (long long)c->pad[1], (long long)c->pad[2],
             (long long)c->pad[3], (long long)c->rd[0], (long long)c->rd[1]);
  snprintf(text, cap,
           "func.func @main(%%a: %s, %%b: %s) -> %s {\n"
           "  %%r = \"stablehlo.convolution\"(%%a, %%b) {\n%s"
           "    feature_group_count = 1 : i64, batch_group_count = 1 : i64\n"
           "  } : (%s, %s) -> %s\n"
           "  func.return %%r : %s\n}\n",
           lts, kts, ots, win, lts, kts, ots, ots);
}

/* Output element oi of c by the spec's formula into *want, with the sum of
 * the products' magnitudes into *mag. */
static void nhwc_reference(const nhwc_case *c, shlo_value *const *args,
                           const int64_t *odims, int64_t oi,
                           double complex *want, double *mag) {
  int ns = c->ns;
  int64_t idx[4];
  unravel(oi, ns + 2, odims, idx);
  *want = 0, *mag = 0;
  int64_t kp = c->k[0] * (ns == 2 ? c->k[1] : 1);
  for (int64_t w = 0; w < kp; w++) {
    int64_t kk[2] = {ns == 2 ? w / c->k[1] : w, ns == 2 ? w % c->k[1] : 0};
    int64_t lpos = idx[0];
    bool inside = true;
    for (int i = 0; i < ns; i++) {
      int64_t q = idx[1 + i] * c->stride[i] + kk[i] * c->rd[i] - c->pad[2 * i];
      inside = inside && q >= 0 && q < c->in[i];
      lpos = lpos * c->in[i] + q;
    }
    for (int64_t ch = 0; inside && ch < c->ci; ch++) {
      uint64_t unused = 0;
      ref_mac(args, lpos * c->ci + ch, (w * c->ci + ch) * c->co + idx[ns + 1],
              false, &unused, want, mag);
    }
  }
}

/* Run c on both paths: each must take the path asked for, and both agree
 * with each other and with the spec's formula within rtol of the sum of
 * the products' magnitudes. */
static void run_nhwc_case(const nhwc_case *c) {
  int64_t ldims[4], kdims[4], odims[4];
  char text[4096];
  nhwc_program(c, text, sizeof text, ldims, kdims, odims);
  shlo_value *args[2] = {rand_tensor(c->t, c->ns + 2, ldims, 0),
                         rand_tensor(c->t, c->ns + 2, kdims, 0)};
  shlo_value **fast = NULL, **general = NULL;
  int nf = 0, ng = 0;
  assert_true(takes_nhwc(text));
  assert_int_equal(run_args(text, args, 2, &fast, &nf, 0), SHLO_OK);
  use_ctx = general_ctx();
  assert_false(takes_nhwc(text));
  assert_int_equal(run_args(text, args, 2, &general, &ng, 0), SHLO_OK);
  use_ctx = NULL;
  double rtol = c->t == SHLO_F32 || c->t == SHLO_C64 ? 1e-5 : 1e-12;
  for (int64_t oi = 0; oi < fast[0]->numel; oi++) {
    double fr, fi, gr, gi, mag;
    double complex want;
    shlo_tensor_get_c128(fast[0], oi, &fr, &fi);
    shlo_tensor_get_c128(general[0], oi, &gr, &gi);
    nhwc_reference(c, args, odims, oi, &want, &mag);
    if (cabs((fr - gr) + (fi - gi) * I) > rtol * mag ||
        cabs(fr + fi * I - want) > rtol * (mag + 1e-300)) {
      print_message("element %lld: fast (%.17g, %.17g) general (%.17g, "
                    "%.17g) spec (%.17g, %.17g)\n",
                    (long long)oi, fr, fi, gr, gi, creal(want), cimag(want));
      fail();
    }
  }
  for (int i = 0; i < 2; i++) shlo_value_unref(args[i]);
  shlo_value_unref(fast[0]);
  shlo_value_unref(general[0]);
  free(fast);
  free(general);
}

static void test_conv_nhwc_matches_general(void **state) {
  (void)state;
  const nhwc_case cases[] = {
      /* cnn's first layer: 3x3, stride 1, padding 1, odd channels */
      {SHLO_F32, 2, 2, 3, 5, {6, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}},
      /* stride 2, batch 1 */
      {SHLO_F64, 2, 1, 7, 9, {9, 8}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}},
      /* rhs dilation 2, asymmetric padding, mixed strides */
      {SHLO_F32, 2, 3, 4, 6, {7, 9}, {2, 3}, {1, 2}, {2, 2}, {2, 0, 1, 3}},
      {SHLO_F64, 2, 3, 4, 6, {7, 9}, {2, 3}, {1, 2}, {2, 2}, {2, 0, 1, 3}},
      /* negative padding crops the lhs */
      {SHLO_F32, 2, 2, 3, 4, {8, 9}, {3, 2}, {1, 1}, {1, 1}, {-1, 1, 0, -2}},
      /* a 1x1 window, stride 1, no padding: the lhs is the matrix */
      {SHLO_F32, 2, 2, 5, 3, {6, 7}, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}},
      {SHLO_F64, 2, 1, 5, 3, {6, 7}, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}},
      /* a 1x1 window with stride 2 still builds rows */
      {SHLO_F32, 2, 2, 5, 3, {7, 6}, {1, 1}, {2, 2}, {1, 1}, {0, 0, 0, 0}},
      /* one spatial dimension: stride 2, dilation 2, padding 1 / 2 */
      {SHLO_F64, 1, 2, 5, 7, {17, 0}, {4, 0}, {2, 0}, {2, 0}, {1, 2, 0, 0}},
      {SHLO_F32, 1, 3, 1, 2, {10, 0}, {3, 0}, {1, 0}, {1, 0}, {0, 0, 0, 0}},
      /* a window wider than the padded input in one place, complex */
      {SHLO_C64, 2, 2, 3, 2, {3, 5}, {3, 3}, {1, 2}, {1, 1}, {1, 1, 2, 0}},
      {SHLO_C128, 1, 2, 3, 2, {5, 0}, {2, 0}, {1, 0}, {3, 0}, {2, 1, 0, 0}},
      /* large enough for several blocks per thread of the pool, and a
       * direct 1x1 one split across it */
      {SHLO_F32, 2, 4, 64, 16, {20, 20}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}},
      {SHLO_F32, 2, 4, 64, 33, {20, 20}, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}},
      /* small windows (at most 32 values) of 16, 32 and 64 out-features,
       * summed in vectors: cnn's first layer, one with stride and odd
       * padding, a dilated 1-D one; 35 and 9 positions leave tails of
       * the four computed at once */
      {SHLO_F32, 2, 2, 3, 32, {9, 10}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}},
      {SHLO_F32, 2, 1, 3, 32, {5, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}},
      {SHLO_F32, 2, 2, 2, 16, {7, 7}, {2, 2}, {2, 2}, {1, 1}, {0, 1, 1, 0}},
      {SHLO_F32, 1, 1, 4, 64, {11, 0}, {3, 0}, {1, 0}, {2, 0}, {2, 0, 0, 0}},
      /* small windows along rows wider than a group (12 positions of 16
       * or 32 out-features, 6 of 64): whole groups inside, a last group
       * overlapping the one before it, edges and rows on the padding
       * queued; strides, dilation and negative padding along the rows,
       * and out-feature counts summed as scalars (20) */
      {SHLO_F32, 2, 2, 3, 32, {6, 40}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}},
      {SHLO_F32, 2, 1, 2, 64, {5, 31}, {3, 3}, {2, 2}, {1, 1}, {1, 0, 1, 0}},
      {SHLO_F32, 2, 2, 1, 16, {4, 29}, {2, 3}, {1, 1}, {1, 3}, {0, 1, 2, 2}},
      {SHLO_F32, 2, 2, 2, 32, {9, 30}, {3, 3}, {1, 1}, {1, 1}, {-1, 1, -2, 0}},
      {SHLO_F32, 2, 1, 3, 20, {5, 13}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}},
      {SHLO_F32, 1, 3, 4, 32, {50, 0}, {5, 0}, {1, 0}, {1, 0}, {2, 2, 0, 0}},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    run_nhwc_case(&cases[i]);
}

/* A 1 x hw x hw x ci by 3 x 3 x ci x 8 f32 convolution, padding 1. */
static void conv3x3_text(char *buf, size_t cap, int hw, int ci) {
  snprintf(buf, cap,
           "func.func @main(%%a: tensor<1x%dx%dx%dxf32>, %%b: "
           "tensor<3x3x%dx8xf32>) -> tensor<1x%dx%dx8xf32> {\n"
           "  %%r = stablehlo.convolution(%%a, %%b) dim_numbers = "
           "[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = "
           "[1, 1], pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, "
           "feature_group_count = 1 : i64} : (tensor<1x%dx%dx%dxf32>, "
           "tensor<3x3x%dx8xf32>) -> tensor<1x%dx%dx8xf32>\n"
           "  func.return %%r : tensor<1x%dx%dx8xf32>\n}\n",
           hw, hw, ci, ci, hw, hw, hw, hw, ci, ci, hw, hw, hw, hw);
}

/* f32 windows of at most 32 values sum without a GEMM, larger ones and
 * other types take it; either way a padded position multiplies its 0 like
 * any value, so an infinite weight over padding gives NaN (spec: the
 * padded lhs is convolved). */
static void test_conv_small_window_path(void **state) {
  (void)state;
  const char *small =
      "func.func @main(%a: tensor<1x3x1xf32>, %b: tensor<3x1x2xf32>) -> "
      "tensor<1x3x2xf32> {\n"
      "  %r = stablehlo.convolution(%a, %b) dim_numbers = [b, 0, f]x[0, i, o]"
      "->[b, 0, f], window = {stride = [1], pad = [[1, 1]]} "
      "{batch_group_count = 1 : i64, feature_group_count = 1 : i64} : "
      "(tensor<1x3x1xf32>, tensor<3x1x2xf32>) -> tensor<1x3x2xf32>\n"
      "  func.return %r : tensor<1x3x2xf32>\n}\n";
  char *plan = plan_text(small);
  assert_non_null(strstr(plan, "stablehlo.convolution [nhwc small window]"));
  free(plan);
  for (int general = 0; general < 2; general++) {
    if (general) use_ctx = general_ctx();
    int64_t ld[3] = {1, 3, 1}, kd[3] = {3, 1, 2};
    shlo_value *args[2] = {shlo_tensor_new(SHLO_F32, 3, ld),
                           shlo_tensor_new(SHLO_F32, 3, kd)};
    float lhs[3] = {1, 2, 3}, ker[6] = {INFINITY, 1, 1, 1, 1, 1};
    memcpy(args[0]->data, lhs, sizeof lhs);
    memcpy(args[1]->data, ker, sizeof ker);
    shlo_value **res = NULL;
    int nres = 0;
    assert_int_equal(run_args(small, args, 2, &res, &nres, 0), SHLO_OK);
    const float *o = res[0]->data;
    /* position 0: 0 x inf + 1 x 1 + 2 x 1; position 1: 1 x inf + ... */
    assert_true(isnan(o[0]));
    assert_true(o[1] == 3.0f);
    assert_true(isinf(o[2]) && o[2] > 0);
    assert_true(o[3] == 6.0f);
    assert_true(isinf(o[4]) && o[4] > 0);
    assert_true(o[5] == 5.0f);
    for (int i = 0; i < 2; i++) shlo_value_unref(args[i]);
    shlo_value_unref(res[0]);
    free(res);
  }
  use_ctx = NULL;
  /* 3x3 windows of 4 in-features are 36 values: the GEMM */
  char wide[1024], none[1024];
  conv3x3_text(wide, sizeof wide, 5, 4);
  plan = plan_text(wide);
  assert_non_null(strstr(plan, "stablehlo.convolution [nhwc gemm]"));
  free(plan);
  /* no in-features: an empty window, all zeros (not the small path) */
  conv3x3_text(none, sizeof none, 4, 0);
  plan = plan_text(none);
  assert_non_null(strstr(plan, "stablehlo.convolution [nhwc gemm]"));
  free(plan);
  int64_t nd[4] = {1, 4, 4, 0}, nk[4] = {3, 3, 0, 8};
  shlo_value *none_args[2] = {shlo_tensor_new(SHLO_F32, 4, nd),
                              shlo_tensor_new(SHLO_F32, 4, nk)};
  shlo_value **zres = NULL;
  int nz = 0;
  assert_int_equal(run_args(none, none_args, 2, &zres, &nz, 0), SHLO_OK);
  for (int64_t i = 0; i < zres[0]->numel; i++)
    assert_true(((const float *)zres[0]->data)[i] == 0.0f);
  for (int i = 0; i < 2; i++) shlo_value_unref(none_args[i]);
  shlo_value_unref(zres[0]);
  free(zres);
}

/* Grouped, lhs-dilated, reversed and narrow-float convolutions in the
 * channels-last layouts, and other layouts, keep the general path. */
static void test_conv_nhwc_only_where_it_applies(void **state) {
  (void)state;
  struct {
    const char *t, *dn, *rev;
    int ld, fgc, fast;
  } cases[] = {
      {"f32", "[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]", "false", 1, 1, 1},
      {"f64", "[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]", "false", 1, 1, 1},
      {"f32", "[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]", "false", 1, 2, 0},
      {"f32", "[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]", "false", 2, 1, 0},
      {"f32", "[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]", "true", 1, 1, 0},
      {"f16", "[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]", "false", 1, 1, 0},
      {"i32", "[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]", "false", 1, 1, 0},
      {"f32", "[b, 1, 0, f]x[0, 1, i, o]->[b, 0, 1, f]", "false", 1, 1, 0},
      {"f32", "[b, 0, 1, f]x[1, 0, i, o]->[b, 0, 1, f]", "false", 1, 1, 0},
      {"f32", "[b, 0, 1, f]x[0, 1, o, i]->[b, 0, 1, f]", "false", 1, 1, 0},
      {"f32", "[b, 0, 1, f]x[0, 1, i, o]->[b, f, 0, 1]", "false", 1, 1, 0},
  };
  char text[2048], lt[64], kt[64], ot[64];
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    /* every spatial size and feature count is chosen so each layout above
     * reads the same shapes: a 5x5 lhs of 4 features, a 3x3 window */
    const char *t = cases[i].t, *dn = cases[i].dn;
    int ci = 4 / cases[i].fgc, o0 = cases[i].ld == 2 ? 7 : 3;
    bool nchw_out = strstr(dn, "->[b, f") != NULL;
    bool oi_kernel = strstr(dn, "o, i]") != NULL;
    snprintf(lt, sizeof lt, "tensor<1x5x5x4x%s>", t);
    snprintf(kt, sizeof kt, "tensor<3x3x%dx%dx%s>", oi_kernel ? 4 : ci,
             oi_kernel ? ci : 4, t);
    if (nchw_out)
      snprintf(ot, sizeof ot, "tensor<1x4x%dx3x%s>", o0, t);
    else
      snprintf(ot, sizeof ot, "tensor<1x%dx3x4x%s>", o0, t);
    snprintf(text, sizeof text,
             "func.func @main(%%a: %s, %%b: %s) -> %s {\n"
             "  %%r = \"stablehlo.convolution\"(%%a, %%b) {\n"
             "    dimension_numbers = #stablehlo.conv<%s>,\n"
             "    lhs_dilation = array<i64: %d, 1>,\n"
             "    window_reversal = array<i1: %s, false>,\n"
             "    feature_group_count = %d : i64, batch_group_count = 1 : i64\n"
             "  } : (%s, %s) -> %s\n"
             "  func.return %%r : %s\n}\n",
             lt, kt, ot, dn, cases[i].ld, cases[i].rev, cases[i].fgc, lt, kt,
             ot, ot);
    if (takes_nhwc(text) != (bool)cases[i].fast)
      fail_msg("case %zu should %stake the nhwc path:\n%s", i,
               cases[i].fast ? "" : "not ", text);
  }
}

/* ---- FFT against a naive DFT ---- */

/* Naive multi-dim DFT over the innermost nl axes of x (shape dims). */
static void naive_dft(const double complex *x, double complex *y, int rank,
                      const int64_t *dims, int nl, int sign, bool scale) {
  int64_t total = 1, inner = 1;
  for (int i = 0; i < rank; i++) total *= dims[i];
  for (int i = rank - nl; i < rank; i++) inner *= dims[i];
  const int64_t *fd = dims + rank - nl;
  for (int64_t b = 0; b < total / inner; b++)
    for (int64_t k = 0; k < inner; k++) {
      int64_t ki[3], ji[3];
      unravel(k, nl, fd, ki);
      double complex acc = 0;
      for (int64_t j = 0; j < inner; j++) {
        unravel(j, nl, fd, ji);
        double ph = 0;
        for (int a = 0; a < nl; a++)
          ph += (double)((ji[a] * ki[a]) % fd[a]) / (double)fd[a];
        acc += x[b * inner + j] * cexp(sign * 2.0 * M_PI * I * ph);
      }
      y[b * inner + k] = scale ? acc / (double)inner : acc;
    }
}

static void fft_case(const char *type, int rank, const int64_t *dims, int nl,
                     shlo_elem_type ct) {
  char ts[128], text[1024], len[64] = "";
  type_str(ts, sizeof ts, ct, rank, dims);
  for (int i = 0; i < nl; i++)
    snprintf(len + strlen(len), sizeof len - strlen(len), "%s%lld",
             i ? ", " : "", (long long)dims[rank - nl + i]);
  snprintf(text, sizeof text,
           "func.func @main(%%a: %s) -> %s {\n"
           "  %%r = stablehlo.fft %%a, type = %s, length = [%s] : (%s) -> %s\n"
           "  func.return %%r : %s\n}\n",
           ts, ts, type, len, ts, ts, ts);
  shlo_value *a = rand_tensor(ct, rank, dims, 0);
  shlo_value **res = NULL;
  int nres = 0;
  assert_int_equal(run_args(text, &a, 1, &res, &nres, 0), SHLO_OK);
  int64_t n = a->numel;
  double complex *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y);
  for (int64_t i = 0; i < n; i++) {
    double re, im;
    shlo_tensor_get_c128(a, i, &re, &im);
    x[i] = re + im * I;
  }
  bool inv = !strcmp(type, "IFFT");
  naive_dft(x, y, rank, dims, nl, inv ? 1 : -1, inv);
  double tol = ct == SHLO_C64 ? 1e-4 : 1e-10;
  for (int64_t i = 0; i < n; i++) {
    double re, im;
    shlo_tensor_get_c128(res[0], i, &re, &im);
    if (cabs(re + im * I - y[i]) > tol * (1 + cabs(y[i]))) {
      print_message("%s element %lld: got (%g, %g) want (%g, %g)\n", type,
                    (long long)i, re, im, creal(y[i]), cimag(y[i]));
      fail();
    }
  }
  free(x), free(y);
  shlo_value_unref(res[0]);
  free(res);
  shlo_value_unref(a);
}

static void test_fft_any_length(void **state) {
  (void)state;
  const int64_t lens[] = {1, 2, 3, 5, 6, 7, 8, 12, 16, 17, 30, 64, 100};
  for (size_t i = 0; i < sizeof lens / sizeof *lens; i++) {
    int64_t d[2] = {3, lens[i]};
    fft_case("FFT", 2, d, 1, SHLO_C128);
    fft_case("IFFT", 2, d, 1, SHLO_C128);
    fft_case("FFT", 2, d, 1, SHLO_C64);
  }
  int64_t d2[3] = {2, 3, 5};
  fft_case("FFT", 3, d2, 2, SHLO_C128);
  fft_case("IFFT", 3, d2, 3, SHLO_C128);
  int64_t d3[3] = {4, 6, 12};
  fft_case("FFT", 3, d3, 3, SHLO_C64);
}

/* RFFT against the DFT of the real input; IRFFT(RFFT(x)) == x. */
static void test_rfft_irfft(void **state) {
  (void)state;
  const int64_t lens[] = {1, 2, 5, 6, 8, 9, 12};
  for (size_t li = 0; li < sizeof lens / sizeof *lens; li++)
    for (int nl = 1; nl <= 2; nl++) {
      int64_t n = lens[li], h = n / 2 + 1;
      int64_t dims[3] = {2, 3, n}, cd[3] = {2, 3, h};
      char rts[64], cts[64], text[1024];
      type_str(rts, sizeof rts, SHLO_F64, 3, dims);
      type_str(cts, sizeof cts, SHLO_C128, 3, cd);
      snprintf(text, sizeof text,
               "func.func @main(%%a: %s) -> (%s, %s) {\n"
               "  %%f = stablehlo.fft %%a, type = RFFT, length = [%s%lld]"
               " : (%s) -> %s\n"
               "  %%b = stablehlo.fft %%f, type = IRFFT, length = [%s%lld]"
               " : (%s) -> %s\n"
               "  func.return %%f, %%b : %s, %s\n}\n",
               rts, cts, rts, nl == 2 ? "3, " : "", (long long)n, rts, cts,
               nl == 2 ? "3, " : "", (long long)n, cts, rts, cts, rts);
      shlo_value *a = rand_tensor(SHLO_F64, 3, dims, 0);
      shlo_value **res = NULL;
      int nres = 0;
      assert_int_equal(run_args(text, &a, 1, &res, &nres, 0), SHLO_OK);
      int64_t tot = a->numel;
      double complex *x = malloc((size_t)tot * sizeof *x);
      double complex *y = malloc((size_t)tot * sizeof *y);
      for (int64_t i = 0; i < tot; i++) x[i] = shlo_tensor_get_f64(a, i);
      naive_dft(x, y, 3, dims, nl, -1, false);
      for (int64_t l = 0; l < tot / n; l++)
        for (int64_t k = 0; k < h; k++) {
          double re, im;
          shlo_tensor_get_c128(res[0], l * h + k, &re, &im);
          assert_true(cabs(re + im * I - y[l * n + k]) < 1e-10);
        }
      for (int64_t i = 0; i < tot; i++)
        assert_true(fabs(shlo_tensor_get_f64(res[1], i) - creal(x[i])) < 1e-10);
      free(x), free(y);
      for (int i = 0; i < nres; i++) shlo_value_unref(res[i]);
      free(res);
      shlo_value_unref(a);
    }
  RUN_OK("  %x = stablehlo.constant dense<[(6.0, 0.0), (-1.5, 0.866025403784),"
         " (-1.5, -0.866025403784)]> : tensor<3xcomplex<f32>>\n"
         "  %r = stablehlo.fft %x, type = IFFT, length = [3]"
         " : (tensor<3xcomplex<f32>>) -> tensor<3xcomplex<f32>>\n"
         "  check.expect_almost_eq_const %r, dense<[(1.0, 0.0), (2.0, 0.0),"
         " (3.0, 0.0)]> : tensor<3xcomplex<f32>>\n"
         "  %y = stablehlo.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>\n"
         "  %s = stablehlo.fft %y, type = RFFT, length = [3]"
         " : (tensor<3xf32>) -> tensor<2xcomplex<f32>>\n"
         "  check.expect_almost_eq_const %s, dense<[(6.0, 0.0),"
         " (-1.5, 0.866025403784)]> : tensor<2xcomplex<f32>>\n");
}

/* ---- triangular_solve: check op(a) x = b on random systems ---- */

static void tri_case(shlo_elem_type t, bool left, bool lower, bool unit,
                     const char *trans, int64_t batch, int64_t m, int64_t n) {
  int64_t asz = left ? m : n;
  int64_t ad[3] = {batch, asz, asz}, bd[3] = {batch, m, n};
  char ats[64], bts[64], text[1024];
  type_str(ats, sizeof ats, t, 3, ad);
  type_str(bts, sizeof bts, t, 3, bd);
  snprintf(text, sizeof text,
           "func.func @main(%%a: %s, %%b: %s) -> %s {\n"
           "  %%r = \"stablehlo.triangular_solve\"(%%a, %%b) {left_side = %s,"
           " lower = %s, unit_diagonal = %s, transpose_a = "
           "#stablehlo<transpose %s>} : (%s, %s) -> %s\n"
           "  func.return %%r : %s\n}\n",
           ats, bts, bts, left ? "true" : "false", lower ? "true" : "false",
           unit ? "true" : "false", trans, ats, bts, bts, bts);
  shlo_value *a = rand_tensor(t, 3, ad, 0), *b = rand_tensor(t, 3, bd, 0);
  /* a well-conditioned diagonal (garbage in the unused triangle stays) */
  for (int64_t q = 0; q < batch; q++)
    for (int64_t i = 0; i < asz; i++) {
      int64_t o = (q * asz + i) * asz + i;
      if (t == SHLO_C64 || t == SHLO_C128) {
        if (t == SHLO_C64)
          ((float *)a->data)[2 * o] += 4.0f;
        else
          ((double *)a->data)[2 * o] += 4.0;
      } else {
        shlo_tensor_set_f64(a, o, shlo_tensor_get_f64(a, o) + 4.0);
      }
    }
  shlo_value *args[2] = {a, b};
  shlo_value **res = NULL;
  int nres = 0;
  assert_int_equal(run_args(text, args, 2, &res, &nres, 0), SHLO_OK);
  shlo_value *x = res[0];
  bool tr = strcmp(trans, "NO_TRANSPOSE") != 0, adj = !strcmp(trans, "ADJOINT");
  double tol = t == SHLO_F64 || t == SHLO_C128 ? 1e-10 : 1e-4;
  for (int64_t q = 0; q < batch; q++)
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < n; j++) {
        /* (op(a) x)[i][j] or (x op(a))[i][j] */
        double complex acc = 0;
        for (int64_t k = 0; k < asz; k++) {
          int64_t r = left ? i : k, c = left ? k : j; /* op(a)[r][c] */
          int64_t ar = tr ? c : r, ac = tr ? r : c;
          double complex av;
          if (ar == ac && unit)
            av = 1;
          else if (lower ? ac > ar : ac < ar)
            av = 0;
          else {
            double re, im;
            shlo_tensor_get_c128(a, (q * asz + ar) * asz + ac, &re, &im);
            av = re + im * I;
            if (adj) av = conj(av);
          }
          double re, im;
          int64_t xo = left ? (q * m + k) * n + j : (q * m + i) * n + k;
          shlo_tensor_get_c128(x, xo, &re, &im);
          acc += av * (re + im * I);
        }
        double re, im;
        shlo_tensor_get_c128(b, (q * m + i) * n + j, &re, &im);
        if (cabs(acc - (re + im * I)) > tol) {
          print_message("trsm %s left=%d lower=%d unit=%d %s: residual %g\n",
                        shlo_elem_name(t), left, lower, unit, trans,
                        cabs(acc - (re + im * I)));
          fail();
        }
      }
  shlo_value_unref(x);
  free(res);
  shlo_value_unref(a);
  shlo_value_unref(b);
}

static void test_triangular_solve(void **state) {
  (void)state;
  const char *trans[] = {"NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"};
  for (int t = 0; t < 4; t++)
    for (int mask = 0; mask < 8; mask++)
      for (int k = 0; k < 3; k++)
        tri_case(blas_types[t], mask & 1, mask & 2, mask & 4, trans[k], 2, 4, 3);
  tri_case(SHLO_F64, true, true, false, "NO_TRANSPOSE", 1, 0, 3);
  RUN_OK("  %a = stablehlo.constant dense<[[2.0, 0.0], [1.0, 4.0]]>"
         " : tensor<2x2xbf16>\n"
         "  %b = stablehlo.constant dense<[[2.0], [9.0]]> : tensor<2x1xbf16>\n"
         "  %x = \"stablehlo.triangular_solve\"(%a, %b) {left_side = true,"
         " lower = true, unit_diagonal = false, transpose_a ="
         " #stablehlo<transpose NO_TRANSPOSE>}"
         " : (tensor<2x2xbf16>, tensor<2x1xbf16>) -> tensor<2x1xbf16>\n"
         "  check.expect_eq_const %x, dense<[[1.0], [2.0]]> : tensor<2x1xbf16>\n");
}

/* ---- cholesky ---- */

static void test_cholesky(void **state) {
  (void)state;
  RUN_OK("  %a = stablehlo.constant dense<[[[4.0, 12.0, -16.0],"
         " [12.0, 37.0, -43.0], [-16.0, -43.0, 98.0]],"
         " [[1.0, 0.0, 0.0], [0.0, 9.0, 0.0], [0.0, 0.0, 16.0]]]>"
         " : tensor<2x3x3xf64>\n"
         "  %l = \"stablehlo.cholesky\"(%a) {lower = true}"
         " : (tensor<2x3x3xf64>) -> tensor<2x3x3xf64>\n"
         "  check.expect_almost_eq_const %l, dense<[[[2.0, 0.0, 0.0],"
         " [6.0, 1.0, 0.0], [-8.0, 5.0, 3.0]], [[1.0, 0.0, 0.0],"
         " [0.0, 3.0, 0.0], [0.0, 0.0, 4.0]]]> : tensor<2x3x3xf64>\n"
         "  %u = \"stablehlo.cholesky\"(%a) {lower = false}"
         " : (tensor<2x3x3xf64>) -> tensor<2x3x3xf64>\n"
         "  check.expect_almost_eq_const %u, dense<[[[2.0, 6.0, -8.0],"
         " [0.0, 1.0, 5.0], [0.0, 0.0, 3.0]], [[1.0, 0.0, 0.0],"
         " [0.0, 3.0, 0.0], [0.0, 0.0, 4.0]]]> : tensor<2x3x3xf64>\n"
         "  %f = stablehlo.constant dense<[[4.0, 99.0], [2.0, 5.0]]>"
         " : tensor<2x2xf32>\n"
         /* only the lower triangle is read: 99.0 is ignored */
         "  %g = stablehlo.cholesky %f, lower = true : tensor<2x2xf32>\n"
         "  check.expect_almost_eq_const %g, dense<[[2.0, 0.0], [1.0, 2.0]]>"
         " : tensor<2x2xf32>\n"
         "  %c = stablehlo.constant dense<[[(4.0, 0.0), (0.0, 2.0)],"
         " [(0.0, -2.0), (5.0, 0.0)]]> : tensor<2x2xcomplex<f64>>\n"
         "  %cl = \"stablehlo.cholesky\"(%c) {lower = true}"
         " : (tensor<2x2xcomplex<f64>>) -> tensor<2x2xcomplex<f64>>\n"
         "  check.expect_almost_eq_const %cl, dense<[[(2.0, 0.0), (0.0, 0.0)],"
         " [(0.0, -1.0), (2.0, 0.0)]]> : tensor<2x2xcomplex<f64>>\n"
         "  %cu = \"stablehlo.cholesky\"(%c) {lower = false}"
         " : (tensor<2x2xcomplex<f64>>) -> tensor<2x2xcomplex<f64>>\n"
         "  check.expect_almost_eq_const %cu, dense<[[(2.0, 0.0), (0.0, 1.0)],"
         " [(0.0, 0.0), (2.0, 0.0)]]> : tensor<2x2xcomplex<f64>>\n");
}

/* ---- batch norm ---- */

static void test_batch_norm(void **state) {
  (void)state;
  RUN_OK("  %x = stablehlo.constant dense<[[1.0, 2.0], [3.0, 6.0]]>"
         " : tensor<2x2xf32>\n"
         "  %s = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>\n"
         "  %o = stablehlo.constant dense<[0.0, 1.0]> : tensor<2xf32>\n"
         "  %t:3 = \"stablehlo.batch_norm_training\"(%x, %s, %o)"
         " {epsilon = 0.0 : f32, feature_index = 1 : i64}"
         " : (tensor<2x2xf32>, tensor<2xf32>, tensor<2xf32>)"
         " -> (tensor<2x2xf32>, tensor<2xf32>, tensor<2xf32>)\n"
         "  check.expect_almost_eq_const %t#0, dense<[[-1.0, -1.0], [1.0, 3.0]]>"
         " : tensor<2x2xf32>\n"
         "  check.expect_almost_eq_const %t#1, dense<[2.0, 4.0]> : tensor<2xf32>\n"
         "  check.expect_almost_eq_const %t#2, dense<[1.0, 4.0]> : tensor<2xf32>\n"
         "  %m = stablehlo.constant dense<[2.0, 4.0]> : tensor<2xf32>\n"
         "  %v = stablehlo.constant dense<[1.0, 4.0]> : tensor<2xf32>\n"
         "  %i = \"stablehlo.batch_norm_inference\"(%x, %s, %o, %m, %v)"
         " {epsilon = 0.0 : f32, feature_index = 1 : i64}"
         " : (tensor<2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>,"
         " tensor<2xf32>) -> tensor<2x2xf32>\n"
         "  check.expect_almost_eq_const %i, dense<[[-1.0, -1.0], [1.0, 3.0]]>"
         " : tensor<2x2xf32>\n"
         /* grad with given mean/variance (not the batch's) */
         "  %gs = stablehlo.constant dense<[2.0, 0.5]> : tensor<2xf32>\n"
         "  %gm = stablehlo.constant dense<[0.0, 1.0]> : tensor<2xf32>\n"
         "  %gv = stablehlo.constant dense<[4.0, 1.0]> : tensor<2xf32>\n"
         "  %dy = stablehlo.constant dense<[[1.0, 0.5], [-1.0, 2.0]]>"
         " : tensor<2x2xf32>\n"
         "  %g:3 = \"stablehlo.batch_norm_grad\"(%x, %gs, %gm, %gv, %dy)"
         " {epsilon = 0.0 : f32, feature_index = 1 : i64}"
         " : (tensor<2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>,"
         " tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2xf32>, tensor<2xf32>)\n"
         "  check.expect_almost_eq_const %g#0, dense<[[1.25, -3.0],"
         " [-0.25, -12.75]]> : tensor<2x2xf32>\n"
         "  check.expect_almost_eq_const %g#1, dense<[-1.0, 10.5]>"
         " : tensor<2xf32>\n"
         "  check.expect_almost_eq_const %g#2, dense<[0.0, 2.5]>"
         " : tensor<2xf32>\n");
  /* a middle feature dimension, f64, epsilon */
  RUN_OK("  %x = stablehlo.constant dense<[[[1.0, 2.0], [3.0, 4.0]],"
         " [[5.0, 6.0], [7.0, 8.0]]]> : tensor<2x2x2xf64>\n"
         "  %s = stablehlo.constant dense<1.0> : tensor<2xf64>\n"
         "  %o = stablehlo.constant dense<0.0> : tensor<2xf64>\n"
         "  %t:3 = \"stablehlo.batch_norm_training\"(%x, %s, %o)"
         " {epsilon = 0.75 : f32, feature_index = 1 : i64}"
         " : (tensor<2x2x2xf64>, tensor<2xf64>, tensor<2xf64>)"
         " -> (tensor<2x2x2xf64>, tensor<2xf64>, tensor<2xf64>)\n"
         "  check.expect_almost_eq_const %t#1, dense<[3.5, 5.5]> : tensor<2xf64>\n"
         "  check.expect_almost_eq_const %t#2, dense<[4.25, 4.25]>"
         " : tensor<2xf64>\n"
         /* (x - mean) / sqrt(4.25 + 0.75) */
         "  check.expect_almost_eq_const %t#0, dense<[[[-1.118033989, "
         "-0.670820393], [-1.118033989, -0.670820393]], [[0.670820393, "
         "1.118033989], [0.670820393, 1.118033989]]]> : tensor<2x2x2xf64>\n");
}

int main(void) {
  /* test_dot_batches_split_across_the_pool counts on 3 threads */
  shlo_context_options o;
  shlo_context_options_init(&o);
  o.threads = 3;
  if (shlo_default_context_configure(&o) != SHLO_OK) return 1;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_dot_batched_direct),
      cmocka_unit_test(test_dot_batches_split_across_the_pool),
      cmocka_unit_test(test_dot_transposed),
      cmocka_unit_test(test_dot_packed),
      cmocka_unit_test(test_dot_integers),
      cmocka_unit_test(test_dot_empty_and_scalar),
      cmocka_unit_test(test_dot_legacy),
      cmocka_unit_test(test_wrong_expectation),
      cmocka_unit_test(test_conv_groups_dilation),
      cmocka_unit_test(test_conv_dynamic_and_empty),
      cmocka_unit_test(test_conv_nhwc_matches_general),
      cmocka_unit_test(test_conv_small_window_path),
      cmocka_unit_test(test_conv_nhwc_only_where_it_applies),
      cmocka_unit_test(test_fft_any_length),
      cmocka_unit_test(test_rfft_irfft),
      cmocka_unit_test(test_triangular_solve),
      cmocka_unit_test(test_cholesky),
      cmocka_unit_test(test_batch_norm),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  shlo_context_destroy(general_ctx_made);
  return rc;
}
