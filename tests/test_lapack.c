/* SPDX-License-Identifier: Apache-2.0 */
/* JAX's LAPACK custom calls (engine/src/kernels/lapack_*.c), checked
 * without JAX's expected values: each factorization must give back its
 * input (L L^H, P L U, Q R, A V = V diag(w), U S V^H, Q T Q^H, the
 * Hessenberg and tridiagonal reductions' Q H Q^H), each solve must
 * satisfy its equation when multiplied back; on random, ill-conditioned
 * and singular inputs, in f32, f64, complex64 and complex128, with batches
 * of 0, 1 and 3 matrices.  A singular or non-positive-definite input must
 * give LAPACK's `info` (JAX turns it into NaNs), a wrong operand type a
 * compile error that names the target.
 *
 * The checks run in complex double; the bound is a multiple of the type's
 * epsilon times the size and the input's magnitude. */
#include <complex.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "shlo/context.h"
#include "shlo/engine.h"

typedef double complex cplx;

/* ---- types ---- */

enum { S, D, C, Z };
static const char *const ELEM[4] = {"f32", "f64", "complex<f32>",
                                    "complex<f64>"};
static const char *const REAL[4] = {"f32", "f64", "f32", "f64"};
static const char *const CPLX[4] = {"complex<f32>", "complex<f64>",
                                    "complex<f32>", "complex<f64>"};
static const char LETTER[4] = {'s', 'd', 'c', 'z'};
static const shlo_elem_type ETYPE[4] = {SHLO_F32, SHLO_F64, SHLO_C64,
                                        SHLO_C128};
static const int64_t BATCHES[3] = {0, 1, 3};

static bool is_cplx(int k) { return k == C || k == Z; }

/* The residual bound of the kind for an n x n problem of magnitude scale. */
static double bound(int k, int n, double scale) {
  double eps = k == S || k == C ? 1.2e-7 : 2.3e-16;
  return 200 * eps * (n + 1) * (scale > 1 ? scale : 1);
}

/* "tensor<3x4x4xf32>": batch, then the dims that are >= 0. */
static const char *ty(int64_t b, int64_t r, int64_t c, const char *elem) {
  static char bufs[16][64];
  static int next;
  char *s = bufs[next++ % 16];
  int n = snprintf(s, 64, "tensor<%lldx", (long long)b);
  if (r >= 0) n += snprintf(s + n, 64 - n, "%lldx", (long long)r);
  if (c >= 0) n += snprintf(s + n, 64 - n, "%lldx", (long long)c);
  snprintf(s + n, 64 - n, "%s>", elem);
  return s;
}

/* ---- values ---- */

static uint64_t rng_state = 88172645463325252ull;

static double rnd(void) { /* in [-1, 1) */
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (double)(rng_state >> 11) / 4503599627370496.0 - 1.0;
}

typedef cplx (*entry_fn)(int k, int64_t b, int64_t i, int64_t j);

static cplx random_entry(int k, int64_t b, int64_t i, int64_t j) {
  (void)b, (void)i, (void)j;
  return is_cplx(k) ? CMPLX(rnd(), rnd()) : rnd();
}

/* A tensor of kind k, batch x r x c (c < 0: a vector), entries from f. */
static shlo_value *make(int k, int64_t b, int64_t r, int64_t c, entry_fn f) {
  int64_t dims[3] = {b, r, c};
  shlo_value *v = shlo_tensor_new(ETYPE[k], c >= 0 ? 3 : 2, dims);
  assert_non_null(v);
  int64_t cols = c >= 0 ? c : 1;
  for (int64_t x = 0; x < b; x++)
    for (int64_t i = 0; i < r; i++)
      for (int64_t j = 0; j < cols; j++) {
        cplx z = f(k, x, i, j);
        int64_t at = (x * r + i) * cols + j;
        void *data = shlo_tensor_data(v);
        switch (k) {
        case S: ((float *)data)[at] = (float)creal(z); break;
        case D: ((double *)data)[at] = creal(z); break;
        case C:
          ((float *)data)[2 * at] = (float)creal(z);
          ((float *)data)[2 * at + 1] = (float)cimag(z);
          break;
        default:
          ((double *)data)[2 * at] = creal(z);
          ((double *)data)[2 * at + 1] = cimag(z);
        }
      }
  return v;
}

/* Element (b, i, j) of a batch x r x c tensor (j = 0 for vectors,
 * i = j = 0 for one value per matrix). */
static cplx at(const shlo_value *v, int64_t b, int64_t i, int64_t j) {
  int rank = shlo_tensor_rank(v);
  const int64_t *d = shlo_tensor_dims(v);
  int64_t r = rank >= 2 ? d[1] : 1, c = rank >= 3 ? d[2] : 1;
  double re = 0, im = 0;
  shlo_tensor_get_c128(v, (b * r + i) * c + j, &re, &im);
  return CMPLX(re, im);
}

static int64_t info_at(const shlo_value *v, int64_t b) {
  return shlo_tensor_get_i64(v, b);
}

/* ---- running ---- */

typedef struct outs {
  shlo_value **v;
  int n;
} outs;

/* The context run() compiles in: NULL (the default) but where a test
 * needs a pool of a known size. */
static shlo_context *run_ctx;

/* Compile and run text on args; the results into o.  Fails the test with
 * the diagnostic unless it runs. */
static void run(const char *text, shlo_value **args, int n_args, outs *o) {
  shlo_module *m = NULL;
  shlo_executable *e = NULL;
  shlo_diag d;
  shlo_diag_clear(&d);
  shlo_compile_opts co = {.context = run_ctx};
  shlo_status st = shlo_parse_module(text, strlen(text), "lapack.mlir", &m, &d);
  if (!st) st = shlo_compile(m, &co, &e, &d);
  if (!st) st = shlo_execute(e, NULL, args, n_args, &o->v, &o->n, &d);
  if (st) {
    char buf[2048];
    shlo_diag_format(&d, buf, sizeof buf);
    print_message("%s\n%s\n", text, buf);
  }
  shlo_executable_free(e);
  shlo_module_free(m);
  assert_int_equal(st, SHLO_OK);
}

static void outs_free(outs *o, shlo_value **args, int n_args) {
  for (int i = 0; i < o->n; i++) shlo_value_unref(o->v[i]);
  free(o->v);
  for (int i = 0; i < n_args; i++) shlo_value_unref(args[i]);
}

/* ---- small dense matrices in complex double ---- */

typedef struct mat {
  int r, c;
  cplx *a;
} mat;

static mat mat_new(int r, int c) {
  mat m = {r, c, calloc((size_t)(r * c > 0 ? r * c : 1), sizeof(cplx))};
  assert_non_null(m.a);
  return m;
}

#define M(m, i, j) ((m).a[(size_t)(i) * (m).c + (j)])

static mat mat_of(const shlo_value *v, int64_t b) {
  const int64_t *d = shlo_tensor_dims(v);
  mat m = mat_new((int)d[1], (int)d[2]);
  for (int i = 0; i < m.r; i++)
    for (int j = 0; j < m.c; j++) M(m, i, j) = at(v, b, i, j);
  return m;
}

static mat mat_mul(mat x, mat y) {
  assert_int_equal(x.c, y.r);
  mat m = mat_new(x.r, y.c);
  for (int i = 0; i < x.r; i++)
    for (int k = 0; k < x.c; k++)
      for (int j = 0; j < y.c; j++) M(m, i, j) += M(x, i, k) * M(y, k, j);
  return m;
}

/* x^H y and x y^H, without a temporary */
static mat mul_ah(mat x, mat y) {
  assert_int_equal(x.r, y.r);
  mat m = mat_new(x.c, y.c);
  for (int k = 0; k < x.r; k++)
    for (int i = 0; i < x.c; i++)
      for (int j = 0; j < y.c; j++) M(m, i, j) += conj(M(x, k, i)) * M(y, k, j);
  return m;
}

static mat mul_bh(mat x, mat y) {
  assert_int_equal(x.c, y.c);
  mat m = mat_new(x.r, y.r);
  for (int i = 0; i < x.r; i++)
    for (int j = 0; j < y.r; j++)
      for (int k = 0; k < x.c; k++) M(m, i, j) += M(x, i, k) * conj(M(y, j, k));
  return m;
}

/* q t q^H */
static mat similar(mat q, mat t) {
  mat qt = mat_mul(q, t), m = mul_bh(qt, q);
  free(qt.a);
  return m;
}

static mat mat_eye(int n) {
  mat m = mat_new(n, n);
  for (int i = 0; i < n; i++) M(m, i, i) = 1;
  return m;
}

static double mat_max(mat x) {
  double s = 0;
  for (int i = 0; i < x.r * x.c; i++)
    if (cabs(x.a[i]) > s) s = cabs(x.a[i]);
  return s;
}

/* |x - y| largest; fails the test when above tol. */
static void assert_close(mat x, mat y, double tol, const char *what) {
  assert_int_equal(x.r, y.r);
  assert_int_equal(x.c, y.c);
  double worst = 0;
  for (int i = 0; i < x.r * x.c; i++)
    if (!(cabs(x.a[i] - y.a[i]) <= worst)) worst = cabs(x.a[i] - y.a[i]);
  if (!(worst <= tol)) {
    print_message("%s: residual %g above %g\n", what, worst, tol);
    fail();
  }
}

/* The product of n - 1 reflectors H(i) = I - tau_i v_i v_i^H with v_i
 * zero above row i + shift, 1 there, and below it column i of a (the
 * layout of gehrd (shift 1), sytrd lower (shift 1) and geqrf (shift 0)):
 * Q = H(0) H(1) ... H(count - 1). */
static mat reflectors(mat a, const shlo_value *tau, int64_t b, int count,
                      int shift) {
  int n = a.r;
  mat q = mat_eye(n);
  for (int i = count - 1; i >= 0; i--) {
    cplx *v = calloc((size_t)n, sizeof *v);
    assert_non_null(v);
    v[i + shift] = 1;
    for (int r = i + shift + 1; r < n; r++) v[r] = M(a, r, i);
    cplx t = at(tau, b, i, 0);
    /* q = H(i) q */
    for (int j = 0; j < n; j++) {
      cplx dot = 0;
      for (int r = 0; r < n; r++) dot += conj(v[r]) * M(q, r, j);
      for (int r = 0; r < n; r++) M(q, r, j) -= t * v[r] * dot;
    }
    free(v);
  }
  return q;
}

/* ---- inputs ---- */

static int cur_n;

/* A Hermitian positive definite matrix: B B^H / n + I. */
static cplx hpd_entry(int k, int64_t b, int64_t i, int64_t j) {
  /* entries of B from a hash of (b, i, l) so that both triangles agree */
  cplx s = 0;
  for (int l = 0; l < cur_n; l++) {
    uint64_t h1 = (uint64_t)(b * 1000003 + i * 1009 + l) * 2654435761u;
    uint64_t h2 = (uint64_t)(b * 1000003 + j * 1009 + l) * 2654435761u;
    cplx x = (double)(h1 % 2001) / 1000 - 1, y = (double)(h2 % 2001) / 1000 - 1;
    if (is_cplx(k)) {
      x += I * ((double)(h1 / 7 % 2001) / 1000 - 1);
      y += I * ((double)(h2 / 7 % 2001) / 1000 - 1);
    }
    s += x * conj(y);
  }
  return s / cur_n + (i == j ? 1 : 0);
}

/* Hilbert's matrix: condition number ~ 1e5 at n = 5. */
static cplx hilbert_entry(int k, int64_t b, int64_t i, int64_t j) {
  (void)k;
  return 1.0 / (double)(i + j + 1) * (double)(b + 1);
}

/* Rank one: every row a multiple of the first, the last column zero:
 * exactly singular. */
static cplx singular_entry(int k, int64_t b, int64_t i, int64_t j) {
  (void)k;
  return j == cur_n - 1 ? 0 : (double)((i + 1) * (j + 2) + b);
}

static cplx neg_entry(int k, int64_t b, int64_t i, int64_t j) {
  (void)k, (void)b;
  return i == j ? -1.0 - (double)i : 0.0;
}

/* ==== potrf ==== */

static void check_potrf(int k, int64_t nb, int n, entry_fn f, char uplo,
                        bool want_ok) {
  cur_n = n;
  char text[2048];
  const char *a = ty(nb, n, n, ELEM[k]), *info = ty(nb, -1, -1, "i32");
  snprintf(text, sizeof text,
           "func.func @main(%%a: %s) -> (%s, %s) {\n"
           "  %%0:2 = stablehlo.custom_call @lapack_%cpotrf_ffi(%%a) "
           "{mhlo.backend_config = {uplo = %d : ui8}} : (%s) -> (%s, %s)\n"
           "  return %%0#0, %%0#1 : %s, %s\n}\n",
           a, a, info, LETTER[k], uplo, a, a, info, a, info);
  shlo_value *args[1] = {make(k, nb, n, n, f)};
  outs o;
  run(text, args, 1, &o);
  for (int64_t b = 0; b < nb; b++) {
    if (!want_ok) {
      assert_true(info_at(o.v[1], b) > 0);
      continue;
    }
    assert_int_equal(info_at(o.v[1], b), 0);
    mat x = mat_of(args[0], b), l = mat_of(o.v[0], b);
    /* the other triangle keeps the input: JAX clears it */
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++)
        if (uplo == 'L' ? j > i : j < i) M(l, i, j) = 0;
    mat back = uplo == 'L' ? mul_bh(l, l) : mul_ah(l, l);
    assert_close(back, x, bound(k, n, mat_max(x)), "potrf L L^H");
    free(x.a), free(l.a), free(back.a);
  }
  outs_free(&o, args, 1);
}

static void test_potrf(void **state) {
  (void)state;
  for (int k = 0; k < 4; k++)
    for (int bi = 0; bi < 3; bi++) {
      check_potrf(k, BATCHES[bi], 5, hpd_entry, 'L', true);
      check_potrf(k, BATCHES[bi], 4, hpd_entry, 'U', true);
      check_potrf(k, BATCHES[bi], 4, neg_entry, 'L', false);
    }
}

/* ==== getrf ==== */

static void check_getrf(int k, int64_t nb, int m, int n, entry_fn f,
                        bool singular) {
  cur_n = n;
  int mn = m < n ? m : n;
  char text[2048];
  const char *a = ty(nb, m, n, ELEM[k]), *piv = ty(nb, mn, -1, "i32"),
             *info = ty(nb, -1, -1, "i32");
  snprintf(text, sizeof text,
           "func.func @main(%%a: %s) -> (%s, %s, %s) {\n"
           "  %%0:3 = stablehlo.custom_call @lapack_%cgetrf_ffi(%%a) "
           "{mhlo.backend_config = {}} : (%s) -> (%s, %s, %s)\n"
           "  return %%0#0, %%0#1, %%0#2 : %s, %s, %s\n}\n",
           a, a, piv, info, LETTER[k], a, a, piv, info, a, piv, info);
  shlo_value *args[1] = {make(k, nb, m, n, f)};
  outs o;
  run(text, args, 1, &o);
  for (int64_t b = 0; b < nb; b++) {
    int64_t inf = info_at(o.v[2], b);
    assert_true(singular ? inf > 0 : inf == 0);
    mat x = mat_of(args[0], b), lu = mat_of(o.v[0], b);
    mat l = mat_new(m, mn), u = mat_new(mn, n);
    for (int i = 0; i < m; i++)
      for (int j = 0; j < mn; j++)
        M(l, i, j) = i == j ? 1 : i > j ? M(lu, i, j) : 0;
    for (int i = 0; i < mn; i++)
      for (int j = i; j < n; j++) M(u, i, j) = M(lu, i, j);
    /* P x: the row swaps, 1-based, in order */
    for (int i = 0; i < mn; i++) {
      int64_t p = shlo_tensor_get_i64(o.v[1], b * mn + i) - 1;
      assert_true(p >= i && p < m);
      for (int j = 0; j < n; j++) {
        cplx t = M(x, i, j);
        M(x, i, j) = M(x, p, j);
        M(x, p, j) = t;
      }
    }
    mat back = mat_mul(l, u);
    assert_close(back, x, bound(k, n, mat_max(x)), "getrf P L U");
    free(x.a), free(lu.a), free(l.a), free(u.a), free(back.a);
  }
  outs_free(&o, args, 1);
}

static void test_getrf(void **state) {
  (void)state;
  for (int k = 0; k < 4; k++)
    for (int bi = 0; bi < 3; bi++) {
      check_getrf(k, BATCHES[bi], 5, 5, random_entry, false);
      check_getrf(k, BATCHES[bi], 5, 3, random_entry, false);
      check_getrf(k, BATCHES[bi], 3, 5, random_entry, false);
      check_getrf(k, BATCHES[bi], 5, 5, hilbert_entry, false);
      check_getrf(k, BATCHES[bi], 4, 4, singular_entry, true);
    }
}

/* ==== geqrf + orgqr ==== */

static void check_qr(int k, int64_t nb, int m, int n, entry_fn f) {
  cur_n = n;
  int mn = m < n ? m : n;
  char text[3072];
  const char *a = ty(nb, m, n, ELEM[k]), *tau = ty(nb, mn, -1, ELEM[k]);
  snprintf(text, sizeof text,
           "func.func @main(%%a: %s) -> (%s, %s) {\n"
           "  %%0:2 = stablehlo.custom_call @lapack_%cgeqrf_ffi(%%a) "
           "{mhlo.backend_config = {}} : (%s) -> (%s, %s)\n"
           "  %%1 = stablehlo.custom_call @lapack_%c%sgqr_ffi(%%0#0, %%0#1) "
           "{mhlo.backend_config = {}} : (%s, %s) -> %s\n"
           "  return %%0#0, %%1 : %s, %s\n}\n",
           a, a, a, LETTER[k], a, a, tau, LETTER[k],
           is_cplx(k) ? "un" : "or", a, tau, a, a, a);
  shlo_value *args[1] = {make(k, nb, m, n, f)};
  outs o;
  run(text, args, 1, &o);
  for (int64_t b = 0; b < nb; b++) {
    mat x = mat_of(args[0], b), a_out = mat_of(o.v[0], b),
        q = mat_of(o.v[1], b), r = mat_new(mn, n);
    /* R: the upper triangle of geqrf's first min(m, n) rows */
    for (int i = 0; i < mn; i++)
      for (int j = i; j < n; j++) M(r, i, j) = M(a_out, i, j);
    free(a_out.a);
    mat back = mat_mul(q, r), qq = mul_ah(q, q), eye = mat_eye(n);
    assert_close(back, x, bound(k, n, mat_max(x)), "Q R");
    assert_close(qq, eye, bound(k, n, 1), "Q^H Q");
    free(x.a), free(r.a), free(q.a), free(back.a), free(qq.a), free(eye.a);
  }
  outs_free(&o, args, 1);
}

static void test_qr(void **state) {
  (void)state;
  for (int k = 0; k < 4; k++)
    for (int bi = 0; bi < 3; bi++) {
      check_qr(k, BATCHES[bi], 5, 3, random_entry);
      check_qr(k, BATCHES[bi], 4, 4, hilbert_entry);
      check_qr(k, BATCHES[bi], 4, 4, singular_entry);
    }
}

/* ==== syevd / heevd ==== */

static void check_eigh(int k, int64_t nb, int n, entry_fn f) {
  cur_n = n;
  char text[2048];
  const char *a = ty(nb, n, n, ELEM[k]), *w = ty(nb, n, -1, REAL[k]),
             *info = ty(nb, -1, -1, "i32");
  snprintf(text, sizeof text,
           "func.func @main(%%a: %s) -> (%s, %s, %s) {\n"
           "  %%0:3 = stablehlo.custom_call @lapack_%c%s_ffi(%%a) "
           "{mhlo.backend_config = {mode = 86 : ui8, uplo = 76 : ui8}} : "
           "(%s) -> (%s, %s, %s)\n"
           "  return %%0#0, %%0#1, %%0#2 : %s, %s, %s\n}\n",
           a, a, w, info, LETTER[k], is_cplx(k) ? "heevd" : "syevd", a, a, w,
           info, a, w, info);
  shlo_value *args[1] = {make(k, nb, n, n, f)};
  outs o;
  run(text, args, 1, &o);
  for (int64_t b = 0; b < nb; b++) {
    assert_int_equal(info_at(o.v[2], b), 0);
    mat x = mat_of(args[0], b), v = mat_of(o.v[0], b);
    mat vw = mat_new(n, n);
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) M(vw, i, j) = M(v, i, j) * at(o.v[1], b, j, 0);
    for (int j = 1; j < n; j++)
      assert_true(creal(at(o.v[1], b, j - 1, 0)) <= creal(at(o.v[1], b, j, 0)));
    mat av = mat_mul(x, v), vv = mul_ah(v, v), eye = mat_eye(n);
    assert_close(av, vw, bound(k, n, mat_max(x)), "A V = V diag(w)");
    assert_close(vv, eye, bound(k, n, 1), "V^H V");
    free(x.a), free(v.a), free(vw.a), free(av.a), free(vv.a), free(eye.a);
  }
  outs_free(&o, args, 1);
}

static void test_eigh(void **state) {
  (void)state;
  for (int k = 0; k < 4; k++)
    for (int bi = 0; bi < 3; bi++) {
      check_eigh(k, BATCHES[bi], 5, hpd_entry);
      check_eigh(k, BATCHES[bi], 5, hilbert_entry);
    }
}

/* ==== geev ==== */

static void check_geev(int k, int64_t nb, int n, entry_fn f, bool finite) {
  cur_n = n;
  char text[3072];
  const char *a = ty(nb, n, n, ELEM[k]), *w = ty(nb, n, -1, ELEM[k]),
             *v = ty(nb, n, n, CPLX[k]), *info = ty(nb, -1, -1, "i32");
  if (is_cplx(k))
    snprintf(text, sizeof text,
             "func.func @main(%%a: %s) -> (%s, %s, %s, %s) {\n"
             "  %%0:4 = stablehlo.custom_call @lapack_%cgeev_ffi(%%a) "
             "{mhlo.backend_config = {compute_left = 86 : ui8, "
             "compute_right = 86 : ui8}} : (%s) -> (%s, %s, %s, %s)\n"
             "  return %%0#0, %%0#1, %%0#2, %%0#3 : %s, %s, %s, %s\n}\n",
             a, w, v, v, info, LETTER[k], a, w, v, v, info, w, v, v, info);
  else
    snprintf(text, sizeof text,
             "func.func @main(%%a: %s) -> (%s, %s, %s, %s) {\n"
             "  %%0:5 = stablehlo.custom_call @lapack_%cgeev_ffi(%%a) "
             "{mhlo.backend_config = {compute_left = 86 : ui8, "
             "compute_right = 86 : ui8}} : (%s) -> (%s, %s, %s, %s, %s)\n"
             "  %%1 = stablehlo.complex %%0#0, %%0#1 : %s\n"
             "  return %%1, %%0#2, %%0#3, %%0#4 : %s, %s, %s, %s\n}\n",
             a, ty(nb, n, -1, CPLX[k]), v, v, info, LETTER[k], a, w, w, v, v,
             info, ty(nb, n, -1, CPLX[k]), ty(nb, n, -1, CPLX[k]), v, v,
             info);
  shlo_value *args[1] = {make(k, nb, n, n, f)};
  if (!finite && nb > 0) {
    if (is_cplx(k) || k == D)
      ((double *)shlo_tensor_data(args[0]))[0] = NAN;
    else
      ((float *)shlo_tensor_data(args[0]))[0] = NAN;
  }
  outs o;
  run(text, args, 1, &o);
  for (int64_t b = 0; b < nb; b++) {
    if (!finite) {
      /* not given to LAPACK, as in JAX (it may not return on NaN) */
      assert_int_equal(info_at(o.v[3], b), b == 0 ? -4 : 0);
      continue;
    }
    assert_int_equal(info_at(o.v[3], b), 0);
    mat x = mat_of(args[0], b), vl = mat_of(o.v[1], b),
        vr = mat_of(o.v[2], b);
    mat vrw = mat_new(n, n), wvl = mat_new(n, n);
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) {
        M(vrw, i, j) = M(vr, i, j) * at(o.v[0], b, j, 0);
        /* u_j^H A = w_j u_j^H, as rows of VL^H A = diag(w) VL^H */
        M(wvl, j, i) = at(o.v[0], b, j, 0) * conj(M(vl, i, j));
      }
    mat av = mat_mul(x, vr), vla = mul_ah(vl, x);
    /* eigenvectors of a general matrix: their condition bounds the error */
    double tol = 1e3 * bound(k, n, mat_max(x));
    assert_close(av, vrw, tol, "A V = V diag(w)");
    assert_close(vla, wvl, tol, "U^H A = diag(w) U^H");
    free(x.a), free(vl.a), free(vr.a), free(vrw.a), free(wvl.a), free(av.a),
        free(vla.a);
  }
  outs_free(&o, args, 1);
}

static void test_geev(void **state) {
  (void)state;
  for (int k = 0; k < 4; k++)
    for (int bi = 0; bi < 3; bi++) {
      check_geev(k, BATCHES[bi], 5, random_entry, true);
      check_geev(k, BATCHES[bi], 4, random_entry, false);
    }
}

/* ==== gesdd ==== */

static void check_svd(const char *fn, int k, int64_t nb, int m, int n,
                      entry_fn f, char mode) {
  cur_n = n;
  int mn = m < n ? m : n;
  int uc = mode == 'A' ? m : mn, vr = mode == 'A' ? n : mn;
  char text[2048];
  const char *a = ty(nb, m, n, ELEM[k]), *s = ty(nb, mn, -1, REAL[k]),
             *u = ty(nb, m, uc, ELEM[k]), *vt = ty(nb, vr, n, ELEM[k]),
             *info = ty(nb, -1, -1, "i32");
  snprintf(text, sizeof text,
           "func.func @main(%%a: %s) -> (%s, %s, %s, %s) {\n"
           "  %%0:5 = stablehlo.custom_call @lapack_%c%s_ffi(%%a) "
           "{mhlo.backend_config = {mode = %d : ui8}} : "
           "(%s) -> (%s, %s, %s, %s, %s)\n"
           "  return %%0#1, %%0#2, %%0#3, %%0#4 : %s, %s, %s, %s\n}\n",
           a, s, u, vt, info, LETTER[k], fn, mode, a, a, s, u, vt, info, s, u, vt,
           info);
  shlo_value *args[1] = {make(k, nb, m, n, f)};
  outs o;
  run(text, args, 1, &o);
  for (int64_t b = 0; b < nb; b++) {
    assert_int_equal(info_at(o.v[3], b), 0);
    mat x = mat_of(args[0], b), uu = mat_of(o.v[1], b),
        vv = mat_of(o.v[2], b);
    mat us = mat_new(m, n);
    for (int i = 0; i < m; i++)
      for (int j = 0; j < mn; j++) M(us, i, j) = M(uu, i, j) * at(o.v[0], b, j, 0);
    /* U S V^H with the first mn rows of V^H */
    mat vtop = mat_new(n, n);
    for (int i = 0; i < mn; i++)
      for (int j = 0; j < n; j++) M(vtop, i, j) = M(vv, i, j);
    mat back = mat_mul(us, vtop), utu = mul_ah(uu, uu),
        eye = mat_eye(uc);
    for (int j = 1; j < mn; j++)
      assert_true(creal(at(o.v[0], b, j - 1, 0)) >= creal(at(o.v[0], b, j, 0)));
    assert_close(back, x, bound(k, n, mat_max(x)), "U S V^H");
    assert_close(utu, eye, bound(k, n, 1), "U^H U");
    free(x.a), free(uu.a), free(vv.a), free(us.a), free(vtop.a), free(back.a),
        free(utu.a), free(eye.a);
  }
  outs_free(&o, args, 1);
}

static void test_svd(void **state) {
  (void)state;
  for (int k = 0; k < 4; k++)
    for (int bi = 0; bi < 3; bi++) {
      for (int f = 0; f < 2; f++) {
        const char *fn = f ? "gesvd" : "gesdd";
        check_svd(fn, k, BATCHES[bi], 5, 3, random_entry, 'A');
        check_svd(fn, k, BATCHES[bi], 3, 5, random_entry, 'S');
        check_svd(fn, k, BATCHES[bi], 4, 4, singular_entry, 'A');
        check_svd(fn, k, BATCHES[bi], 5, 5, hilbert_entry, 'S');
      }
    }
}

/* ==== gees ==== */

static void check_schur(int k, int64_t nb, int n, entry_fn f) {
  cur_n = n;
  char text[3072];
  const char *a = ty(nb, n, n, ELEM[k]), *w = ty(nb, n, -1, ELEM[k]),
             *one = ty(nb, -1, -1, "i32");
  if (is_cplx(k))
    snprintf(text, sizeof text,
             "func.func @main(%%a: %s) -> (%s, %s, %s) {\n"
             "  %%0:5 = stablehlo.custom_call @lapack_%cgees_ffi(%%a) "
             "{mhlo.backend_config = {mode = 86 : ui8, sort = 78 : ui8}} : "
             "(%s) -> (%s, %s, %s, %s, %s)\n"
             "  return %%0#0, %%0#1, %%0#4 : %s, %s, %s\n}\n",
             a, a, a, one, LETTER[k], a, a, a, w, one, one, a, a, one);
  else
    snprintf(text, sizeof text,
             "func.func @main(%%a: %s) -> (%s, %s, %s) {\n"
             "  %%0:6 = stablehlo.custom_call @lapack_%cgees_ffi(%%a) "
             "{mhlo.backend_config = {mode = 86 : ui8, sort = 78 : ui8}} : "
             "(%s) -> (%s, %s, %s, %s, %s, %s)\n"
             "  return %%0#0, %%0#1, %%0#5 : %s, %s, %s\n}\n",
             a, a, a, one, LETTER[k], a, a, a, w, w, one, one, a, a, one);
  shlo_value *args[1] = {make(k, nb, n, n, f)};
  outs o;
  run(text, args, 1, &o);
  for (int64_t b = 0; b < nb; b++) {
    assert_int_equal(info_at(o.v[2], b), 0);
    mat x = mat_of(args[0], b), t = mat_of(o.v[0], b), q = mat_of(o.v[1], b);
    /* quasi-triangular: nothing below the first subdiagonal (complex:
     * nothing below the diagonal) */
    for (int i = 0; i < n; i++)
      for (int j = 0; j + (is_cplx(k) ? 0 : 1) < i; j++)
        assert_true(cabs(M(t, i, j)) <= bound(k, n, mat_max(x)));
    mat back = similar(q, t);
    mat qq = mul_ah(q, q), eye = mat_eye(n);
    assert_close(back, x, bound(k, n, mat_max(x)), "Q T Q^H");
    assert_close(qq, eye, bound(k, n, 1), "Q^H Q");
    free(x.a), free(t.a), free(q.a), free(back.a), free(qq.a), free(eye.a);
  }
  outs_free(&o, args, 1);
}

static void test_schur(void **state) {
  (void)state;
  for (int k = 0; k < 4; k++)
    for (int bi = 0; bi < 3; bi++) {
      check_schur(k, BATCHES[bi], 5, random_entry);
      check_schur(k, BATCHES[bi], 4, singular_entry);
    }
}

/* ==== gehrd and sytrd/hetrd: Q H Q^H ==== */

static void check_hessenberg(int k, int64_t nb, int n, entry_fn f) {
  cur_n = n;
  char text[2048];
  const char *a = ty(nb, n, n, ELEM[k]), *tau = ty(nb, n - 1, -1, ELEM[k]),
             *info = ty(nb, -1, -1, "i32");
  snprintf(text, sizeof text,
           "func.func @main(%%a: %s) -> (%s, %s, %s) {\n"
           "  %%0:3 = stablehlo.custom_call @lapack_%cgehrd_ffi(%%a) "
           "{mhlo.backend_config = {high = %d : i32, low = 1 : i32}} : "
           "(%s) -> (%s, %s, %s)\n"
           "  return %%0#0, %%0#1, %%0#2 : %s, %s, %s\n}\n",
           a, a, tau, info, LETTER[k], n, a, a, tau, info, a, tau, info);
  shlo_value *args[1] = {make(k, nb, n, n, f)};
  outs o;
  run(text, args, 1, &o);
  for (int64_t b = 0; b < nb; b++) {
    assert_int_equal(info_at(o.v[2], b), 0);
    mat x = mat_of(args[0], b), h = mat_of(o.v[0], b);
    mat q = reflectors(h, o.v[1], b, n - 1, 1);
    for (int i = 0; i < n; i++)
      for (int j = 0; j + 1 < i; j++) M(h, i, j) = 0;
    mat back = similar(q, h);
    assert_close(back, x, bound(k, n, mat_max(x)), "Q H Q^H");
    free(x.a), free(h.a), free(q.a), free(back.a);
  }
  outs_free(&o, args, 1);
}

static void check_tridiagonal(int k, int64_t nb, int n, entry_fn f) {
  cur_n = n;
  char text[2048];
  const char *a = ty(nb, n, n, ELEM[k]), *d = ty(nb, n, -1, REAL[k]),
             *e = ty(nb, n - 1, -1, REAL[k]), *tau = ty(nb, n - 1, -1, ELEM[k]),
             *info = ty(nb, -1, -1, "i32");
  snprintf(text, sizeof text,
           "func.func @main(%%a: %s) -> (%s, %s, %s, %s, %s) {\n"
           "  %%0:5 = stablehlo.custom_call @lapack_%c%s_ffi(%%a) "
           "{mhlo.backend_config = {uplo = 76 : ui8}} : "
           "(%s) -> (%s, %s, %s, %s, %s)\n"
           "  return %%0#0, %%0#1, %%0#2, %%0#3, %%0#4 : %s, %s, %s, %s, %s\n"
           "}\n",
           a, a, d, e, tau, info, LETTER[k], is_cplx(k) ? "hetrd" : "sytrd",
           a, a, d, e, tau, info, a, d, e, tau, info);
  shlo_value *args[1] = {make(k, nb, n, n, f)};
  outs o;
  run(text, args, 1, &o);
  for (int64_t b = 0; b < nb; b++) {
    assert_int_equal(info_at(o.v[4], b), 0);
    mat x = mat_of(args[0], b), r = mat_of(o.v[0], b), t = mat_new(n, n);
    mat q = reflectors(r, o.v[3], b, n - 1, 1);
    for (int i = 0; i < n; i++) M(t, i, i) = at(o.v[1], b, i, 0);
    for (int i = 0; i + 1 < n; i++)
      M(t, i + 1, i) = M(t, i, i + 1) = at(o.v[2], b, i, 0);
    mat back = similar(q, t);
    assert_close(back, x, bound(k, n, mat_max(x)), "Q T Q^H");
    free(x.a), free(r.a), free(t.a), free(q.a), free(back.a);
  }
  outs_free(&o, args, 1);
}

static void test_reductions(void **state) {
  (void)state;
  for (int k = 0; k < 4; k++)
    for (int bi = 0; bi < 3; bi++) {
      check_hessenberg(k, BATCHES[bi], 5, random_entry);
      check_tridiagonal(k, BATCHES[bi], 5, hpd_entry);
      check_tridiagonal(k, BATCHES[bi], 4, hilbert_entry);
    }
}

/* ==== trsm ==== */

/* A triangle's entries, its diagonal away from zero. */
static cplx lower_entry(int k, int64_t b, int64_t i, int64_t j) {
  cplx z = random_entry(k, b, i, j);
  return i == j ? z + 4 : z;
}

/* A tridiagonal matrix's diagonal, dominant. */
static cplx dominant_entry(int k, int64_t b, int64_t i, int64_t j) {
  return random_entry(k, b, i, j) + 4;
}

/* alpha: with_alpha, an alpha operand of 2 (JAX's older form, one
 * scalar for the whole batch): op(A) X = 2 B */
static cplx two_entry(int k, int64_t b, int64_t i, int64_t j) {
  (void)k, (void)b, (void)i, (void)j;
  return 2;
}

static void check_trsm(int k, int64_t nb, int m, int n, char side, char uplo,
                       char trans, char diag, bool with_alpha) {
  int an = side == 'L' ? m : n;
  char text[2048];
  const char *a = ty(nb, an, an, ELEM[k]), *bt = ty(nb, m, n, ELEM[k]);
  char alpha_t[64];
  snprintf(alpha_t, sizeof alpha_t, "tensor<%s>", ELEM[k]);
  snprintf(text, sizeof text,
           "func.func @main(%%a: %s, %%b: %s%s%s) -> %s {\n"
           "  %%0 = stablehlo.custom_call @lapack_%ctrsm_ffi(%%a, %%b%s) "
           "{mhlo.backend_config = {diag = %d : ui8, side = %d : ui8, "
           "trans_x = %d : ui8, uplo = %d : ui8}} : (%s, %s%s%s) -> %s\n"
           "  return %%0 : %s\n}\n",
           a, bt, with_alpha ? ", %alpha: " : "", with_alpha ? alpha_t : "",
           bt, LETTER[k], with_alpha ? ", %alpha" : "", diag, side, trans,
           uplo, a, bt, with_alpha ? ", " : "", with_alpha ? alpha_t : "", bt,
           bt);
  shlo_value *args[3] = {make(k, nb, an, an, lower_entry),
                         make(k, nb, m, n, random_entry), NULL};
  if (with_alpha) {
    shlo_value *one = make(k, 1, 1, -1, two_entry); /* 1 x 1: reshape */
    args[2] = shlo_tensor_new(ETYPE[k], 0, NULL);
    assert_non_null(args[2]);
    memcpy(shlo_tensor_data(args[2]), shlo_tensor_data(one),
           shlo_tensor_nbytes(args[2]));
    shlo_value_unref(one);
  }
  int n_args = with_alpha ? 3 : 2;
  outs o;
  run(text, args, n_args, &o);
  for (int64_t b = 0; b < nb; b++) {
    mat x = mat_of(o.v[0], b), t = mat_of(args[0], b), rhs = mat_of(args[1], b);
    for (int i = 0; i < an; i++)
      for (int j = 0; j < an; j++) {
        if (uplo == 'L' ? j > i : j < i) M(t, i, j) = 0;
        if (i == j && diag == 'U') M(t, i, j) = 1;
      }
    mat op = trans == 'N' ? t : mat_new(an, an);
    if (trans != 'N')
      for (int i = 0; i < an; i++)
        for (int j = 0; j < an; j++)
          M(op, i, j) = trans == 'C' ? conj(M(t, j, i)) : M(t, j, i);
    mat back = side == 'L' ? mat_mul(op, x) : mat_mul(x, op);
    for (int i = 0; with_alpha && i < m * n; i++) rhs.a[i] *= 2;
    assert_close(back, rhs, 10 * bound(k, an, mat_max(t) * mat_max(x)),
                 "op(A) X = alpha B");
    if (op.a != t.a) free(op.a);
    free(x.a), free(t.a), free(rhs.a), free(back.a);
  }
  outs_free(&o, args, n_args);
}

static void test_trsm(void **state) {
  (void)state;
  static const char sides[] = "LR", uplos[] = "LU", trans[] = "NTC",
                    diags[] = "NU";
  for (int k = 0; k < 4; k++)
    for (int bi = 0; bi < 3; bi++)
      for (int s = 0; s < 2; s++)
        for (int u = 0; u < 2; u++)
          for (int t = 0; t < 3; t++)
            for (int d = 0; d < 2; d++)
              check_trsm(k, BATCHES[bi], 4, 3, sides[s], uplos[u], trans[t],
                         diags[d], (s + t + d) % 2 == 1);
}

/* ==== gtsv ==== */

static void check_gtsv(int k, int64_t nb, int n, int nrhs, bool singular) {
  char text[2048];
  const char *v = ty(nb, n, -1, ELEM[k]), *bt = ty(nb, n, nrhs, ELEM[k]),
             *info = ty(nb, -1, -1, "i32");
  snprintf(text, sizeof text,
           "func.func @main(%%dl: %s, %%d: %s, %%du: %s, %%b: %s) -> (%s, %s) {\n"
           "  %%0:5 = stablehlo.custom_call @lapack_%cgtsv_ffi(%%dl, %%d, %%du, "
           "%%b) {mhlo.backend_config = {}} : (%s, %s, %s, %s) -> "
           "(%s, %s, %s, %s, %s)\n"
           "  return %%0#3, %%0#4 : %s, %s\n}\n",
           v, v, v, bt, bt, info, LETTER[k], v, v, v, bt, v, v, v, bt, info,
           bt, info);
  shlo_value *args[4] = {make(k, nb, n, -1, random_entry),
                         make(k, nb, n, -1, dominant_entry),
                         make(k, nb, n, -1, random_entry),
                         make(k, nb, n, nrhs, random_entry)};
  if (singular) { /* a zero matrix: d = dl = du = 0 */
    for (int i = 0; i < 3; i++)
      memset(shlo_tensor_data(args[i]), 0, shlo_tensor_nbytes(args[i]));
  }
  outs o;
  run(text, args, 4, &o);
  for (int64_t b = 0; b < nb; b++) {
    if (singular) {
      assert_true(info_at(o.v[1], b) > 0);
      continue;
    }
    assert_int_equal(info_at(o.v[1], b), 0);
    mat t = mat_new(n, n), x = mat_of(o.v[0], b), rhs = mat_of(args[3], b);
    /* JAX's convention: dl[0] and du[n-1] are not part of the matrix */
    for (int i = 0; i < n; i++) {
      M(t, i, i) = at(args[1], b, i, 0);
      if (i > 0) M(t, i, i - 1) = at(args[0], b, i, 0);
      if (i + 1 < n) M(t, i, i + 1) = at(args[2], b, i, 0);
    }
    mat back = mat_mul(t, x);
    assert_close(back, rhs, 10 * bound(k, n, mat_max(t) * mat_max(x)),
                 "T X = B");
    free(t.a), free(x.a), free(rhs.a), free(back.a);
  }
  outs_free(&o, args, 4);
}

static void test_gtsv(void **state) {
  (void)state;
  for (int k = 0; k < 4; k++)
    for (int bi = 0; bi < 3; bi++) {
      check_gtsv(k, BATCHES[bi], 5, 2, false);
      check_gtsv(k, BATCHES[bi], 4, 3, true);
    }
}

/* ==== compile errors ==== */

static void expect_refused(const char *text, const char *words) {
  shlo_module *m = NULL;
  shlo_executable *e = NULL;
  shlo_diag d;
  shlo_diag_clear(&d);
  assert_int_equal(shlo_parse_module(text, strlen(text), "t.mlir", &m, &d),
                   SHLO_OK);
  assert_int_not_equal(shlo_compile(m, NULL, &e, &d), SHLO_OK);
  char buf[2048];
  shlo_diag_format(&d, buf, sizeof buf);
  if (!strstr(buf, words)) {
    print_message("got: %s\nwanted: %s\n", buf, words);
    fail();
  }
  shlo_executable_free(e);
  shlo_module_free(m);
}

static void test_refusals(void **state) {
  (void)state;
  /* f64 operand to the f32 kernel */
  expect_refused("func.func @main(%a: tensor<3x3xf64>) -> tensor<i32> {\n"
                 "  %0:2 = stablehlo.custom_call @lapack_spotrf_ffi(%a) "
                 "{mhlo.backend_config = {uplo = 76 : ui8}} : "
                 "(tensor<3x3xf64>) -> (tensor<3x3xf64>, tensor<i32>)\n"
                 "  return %0#1 : tensor<i32>\n}\n",
                 "lapack_spotrf_ffi: operand 0 must be a tensor<3x3xf32>");
  /* not square */
  expect_refused("func.func @main(%a: tensor<3x4xf32>) -> tensor<i32> {\n"
                 "  %0:2 = stablehlo.custom_call @lapack_spotrf_ffi(%a) "
                 "{mhlo.backend_config = {uplo = 76 : ui8}} : "
                 "(tensor<3x4xf32>) -> (tensor<3x4xf32>, tensor<i32>)\n"
                 "  return %0#1 : tensor<i32>\n}\n",
                 "operand 0 must be a tensor<3x3xf32>");
  /* a result missing */
  expect_refused("func.func @main(%a: tensor<3x3xf32>) -> tensor<3x3xf32> {\n"
                 "  %0 = stablehlo.custom_call @lapack_sgetrf_ffi(%a) "
                 "{mhlo.backend_config = {}} : "
                 "(tensor<3x3xf32>) -> tensor<3x3xf32>\n"
                 "  return %0 : tensor<3x3xf32>\n}\n",
                 "takes 1 operands and gives 3 results");
  /* an attribute out of its set */
  expect_refused("func.func @main(%a: tensor<3x3xf32>) -> tensor<i32> {\n"
                 "  %0:2 = stablehlo.custom_call @lapack_spotrf_ffi(%a) "
                 "{mhlo.backend_config = {uplo = 88 : ui8}} : "
                 "(tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<i32>)\n"
                 "  return %0#1 : tensor<i32>\n}\n",
                 "uplo = 'X' is not one of \"LU\"");
  /* a string backend_config would leave uplo at its default */
  expect_refused("func.func @main(%a: tensor<3x3xf32>) -> tensor<i32> {\n"
                 "  %0:2 = stablehlo.custom_call @lapack_spotrf_ffi(%a) "
                 "{mhlo.backend_config = \"uplo=U\"} : "
                 "(tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<i32>)\n"
                 "  return %0#1 : tensor<i32>\n}\n",
                 "mhlo.backend_config must be a dictionary");
  /* past LAPACK's 32-bit indices (compiled only: nothing is allocated) */
  expect_refused("func.func @main(%a: tensor<16385x16385xf32>) -> "
                 "tensor<i32> {\n"
                 "  %0:2 = stablehlo.custom_call @lapack_spotrf_ffi(%a) "
                 "{mhlo.backend_config = {uplo = 76 : ui8}} : "
                 "(tensor<16385x16385xf32>) -> (tensor<16385x16385xf32>, "
                 "tensor<i32>)\n"
                 "  return %0#1 : tensor<i32>\n}\n",
                 "more than LAPACK's 32-bit indices allow");
  /* a row-major layout JAX never writes */
  expect_refused("func.func @main(%a: tensor<3x3xf32>) -> tensor<i32> {\n"
                 "  %0:2 = stablehlo.custom_call @lapack_spotrf_ffi(%a) "
                 "{mhlo.backend_config = {uplo = 76 : ui8}, operand_layouts = "
                 "[dense<[1, 0]> : tensor<2xindex>], result_layouts = "
                 "[dense<[1, 0]> : tensor<2xindex>, dense<> : tensor<0xindex>]}"
                 " : (tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<i32>)\n"
                 "  return %0#1 : tensor<i32>\n}\n",
                 "operand 0 has a layout other than JAX's");
}

/* ==== large matrices, fewer than the pool has threads ====
 * Where CPUs are free they run one after another with OpenBLAS threaded
 * inside each call (lapack_threads.c) instead of over the pool (the
 * context has four threads, whatever the machine's core count): the same
 * answers either way. */

enum { LARGE = 130 }; /* 130 x 130: past the threaded path's 128 x 128 */

static void test_large_threaded(void **state) {
  (void)state;
  shlo_context_options o;
  shlo_context_options_init(&o);
  o.threads = 4;
  assert_int_equal(shlo_context_create(&o, &run_ctx), SHLO_OK);
  for (int k = 0; k < 4; k++) check_eigh(k, 1, LARGE, hpd_entry);
  check_eigh(D, 3, LARGE, hpd_entry);
  check_potrf(D, 1, LARGE, hpd_entry, 'L', true);
  check_potrf(C, 1, LARGE, neg_entry, 'U', false);
  check_getrf(S, 1, LARGE, LARGE, random_entry, false);
  check_getrf(D, 1, LARGE, LARGE, singular_entry, true);
  check_qr(Z, 1, LARGE, LARGE, random_entry);
  check_svd("gesdd", D, 1, LARGE, LARGE, random_entry, 'A');
  /* a batch as large as the pool goes over it, as before */
  check_potrf(S, 4, LARGE, hpd_entry, 'L', true);
  shlo_context_destroy(run_ctx);
  run_ctx = NULL;
}

/* Two executions at once that each want OpenBLAS's threads: one has them,
 * the other does not wait for them; both answers hold. */
typedef struct eigh_run {
  const shlo_executable *e;
  shlo_value *arg;
  shlo_value **res;
  int n_res;
  shlo_status st;
} eigh_run;

static void *run_eigh_thread(void *arg) {
  eigh_run *r = arg;
  shlo_diag d;
  shlo_diag_clear(&d);
  r->st = shlo_execute(r->e, NULL, &r->arg, 1, &r->res, &r->n_res, &d);
  return NULL;
}

static void test_large_concurrent(void **state) {
  (void)state;
  cur_n = LARGE;
  char text[1024];
  const char *a = ty(1, LARGE, LARGE, "f64"), *w = ty(1, LARGE, -1, "f64"),
             *info = ty(1, -1, -1, "i32");
  snprintf(text, sizeof text,
           "func.func @main(%%a: %s) -> (%s, %s, %s) {\n"
           "  %%0:3 = stablehlo.custom_call @lapack_dsyevd_ffi(%%a) "
           "{mhlo.backend_config = {mode = 86 : ui8, uplo = 76 : ui8}} : "
           "(%s) -> (%s, %s, %s)\n"
           "  return %%0#0, %%0#1, %%0#2 : %s, %s, %s\n}\n",
           a, a, w, info, a, a, w, info, a, w, info);
  shlo_context_options o;
  shlo_context_options_init(&o);
  o.threads = 2;
  shlo_context *ctx = NULL;
  assert_int_equal(shlo_context_create(&o, &ctx), SHLO_OK);
  shlo_module *m = NULL;
  shlo_executable *e = NULL;
  shlo_diag d;
  shlo_diag_clear(&d);
  shlo_compile_opts co = {.context = ctx};
  assert_int_equal(shlo_parse_module(text, strlen(text), "eigh.mlir", &m, &d),
                   SHLO_OK);
  assert_int_equal(shlo_compile(m, &co, &e, &d), SHLO_OK);
  enum { RUNS = 3 };
  eigh_run r[RUNS];
  pthread_t t[RUNS];
  for (int i = 0; i < RUNS; i++) {
    r[i] = (eigh_run){.e = e, .arg = make(D, 1, LARGE, LARGE, hpd_entry)};
    assert_int_equal(pthread_create(&t[i], NULL, run_eigh_thread, &r[i]), 0);
  }
  for (int i = 0; i < RUNS; i++) assert_int_equal(pthread_join(t[i], NULL), 0);
  for (int i = 0; i < RUNS; i++) {
    assert_int_equal(r[i].st, SHLO_OK);
    assert_int_equal(r[i].n_res, 3);
    assert_int_equal(info_at(r[i].res[2], 0), 0);
    mat x = mat_of(r[i].arg, 0), v = mat_of(r[i].res[0], 0);
    mat vw = mat_new(LARGE, LARGE);
    for (int p = 0; p < LARGE; p++)
      for (int q = 0; q < LARGE; q++)
        M(vw, p, q) = M(v, p, q) * at(r[i].res[1], 0, q, 0);
    mat av = mat_mul(x, v);
    assert_close(av, vw, bound(D, LARGE, mat_max(x)), "A V = V diag(w)");
    free(x.a), free(v.a), free(vw.a), free(av.a);
    outs o_i = {r[i].res, r[i].n_res};
    outs_free(&o_i, &r[i].arg, 1);
  }
  shlo_executable_free(e);
  shlo_module_free(m);
  shlo_context_destroy(ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_potrf),      cmocka_unit_test(test_getrf),
      cmocka_unit_test(test_qr),         cmocka_unit_test(test_eigh),
      cmocka_unit_test(test_geev),       cmocka_unit_test(test_svd),
      cmocka_unit_test(test_schur),      cmocka_unit_test(test_reductions),
      cmocka_unit_test(test_trsm),       cmocka_unit_test(test_gtsv),
      cmocka_unit_test(test_refusals),
      cmocka_unit_test(test_large_threaded),
      cmocka_unit_test(test_large_concurrent),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
