/* SPDX-License-Identifier: Apache-2.0 */
/* JAX's LAPACK calls for factorizations and solves (lapack.h): Cholesky
 * (potrf), LU (getrf), QR (geqrf, geqp3, orgqr/ungqr), the triangular
 * solve (BLAS trsm) and the tridiagonal solve (gtsv).
 *
 * Each run function gets one batch element, column-major; results are
 * what LAPACK leaves, `info` included (JAX's code around the call makes
 * NaNs of a failed factorization and subtracts 1 from the pivots). */
#include <string.h>

#include <cblas.h>

#include "core/alloc.h"
#include "kernels/lapack.h"
#include "kernels/lapack_fortran.h"

static la_int ld(int64_t rows) { return rows > 1 ? (la_int)rows : 1; }

/* A copy of slot k of the inputs into result k's scratch: LAPACK works in
 * place, on the result. */
static void copy_in(const la_params *p, void *const *in, void *const *out,
                    int k_in, int k_out) {
  memcpy(out[k_out], in[k_in],
         (size_t)p->in[k_in].per * shlo_elem_size(p->in[k_in].elem));
}

/* ==== potrf: Cholesky ====
 * x: batch x n x n -> (x_out: the factor in the `uplo` triangle, the other
 * triangle as given; info: 0, or k > 0 when the leading minor of order k
 * is not positive definite). */

static shlo_status potrf_sig(la_sig *g) {
  la_kind k = g->p->kind;
  int64_t n = shlo__la_dim(g, 0, 0);
  shlo_status st;
  if ((st = shlo__la_want_counts(g, 1, 2)) ||
      (st = shlo__la_char_attr(g, "uplo", 'L', "LU", &g->p->uplo)) ||
      (st = shlo__la_want_in(g, 0, shlo__la_elem(k), LA_MAT, n, n)) ||
      (st = shlo__la_want_out(g, 0, shlo__la_elem(k), LA_MAT, n, n)) ||
      (st = shlo__la_want_out(g, 1, SHLO_SI32, LA_ONE, 1, 1)))
    return st;
  return SHLO_OK;
}

static int potrf_run(const la_params *p, void *const *in, void *const *out) {
  copy_in(p, in, out, 0, 0);
  la_int n = (la_int)p->in[0].rows, lda = ld(n), *info = out[1];
  switch (p->kind) {
  case LK_S: spotrf_(&p->uplo, &n, out[0], &lda, info, 1); break;
  case LK_D: dpotrf_(&p->uplo, &n, out[0], &lda, info, 1); break;
  case LK_C: cpotrf_(&p->uplo, &n, out[0], &lda, info, 1); break;
  case LK_Z: zpotrf_(&p->uplo, &n, out[0], &lda, info, 1); break;
  }
  return 0;
}

const la_family shlo__la_potrf = {{"lapack_spotrf_ffi", "lapack_dpotrf_ffi",
                                   "lapack_cpotrf_ffi", "lapack_zpotrf_ffi"},
                                  potrf_sig,
                                  potrf_run};

/* ==== getrf: LU with partial pivoting ====
 * x: m x n -> (x_out: L below the diagonal (unit diagonal implied) and U;
 * ipiv: min(m, n) i32, 1-based row swaps; info: k > 0 when U(k, k) is
 * exactly zero). */

static shlo_status getrf_sig(la_sig *g) {
  la_kind k = g->p->kind;
  int64_t m = shlo__la_dim(g, 0, 0), n = shlo__la_dim(g, 0, 1);
  shlo_status st;
  if ((st = shlo__la_want_counts(g, 1, 3)) ||
      (st = shlo__la_want_in(g, 0, shlo__la_elem(k), LA_MAT, m, n)) ||
      (st = shlo__la_want_out(g, 0, shlo__la_elem(k), LA_MAT, m, n)) ||
      (st = shlo__la_want_out(g, 1, SHLO_SI32, LA_VEC, m < n ? m : n, 1)) ||
      (st = shlo__la_want_out(g, 2, SHLO_SI32, LA_ONE, 1, 1)))
    return st;
  return SHLO_OK;
}

static int getrf_run(const la_params *p, void *const *in, void *const *out) {
  copy_in(p, in, out, 0, 0);
  la_int m = (la_int)p->in[0].rows, n = (la_int)p->in[0].cols, lda = ld(m);
  la_int *ipiv = out[1], *info = out[2];
  switch (p->kind) {
  case LK_S: sgetrf_(&m, &n, out[0], &lda, ipiv, info); break;
  case LK_D: dgetrf_(&m, &n, out[0], &lda, ipiv, info); break;
  case LK_C: cgetrf_(&m, &n, out[0], &lda, ipiv, info); break;
  case LK_Z: zgetrf_(&m, &n, out[0], &lda, ipiv, info); break;
  }
  return 0;
}

const la_family shlo__la_getrf = {{"lapack_sgetrf_ffi", "lapack_dgetrf_ffi",
                                   "lapack_cgetrf_ffi", "lapack_zgetrf_ffi"},
                                  getrf_sig,
                                  getrf_run};

/* ==== geqrf: QR (Householder) ====
 * x: m x n -> (x_out: R on and above the diagonal, the reflectors below;
 * tau: min(m, n) reflector scales). */

static shlo_status geqrf_sig(la_sig *g) {
  la_kind k = g->p->kind;
  int64_t m = shlo__la_dim(g, 0, 0), n = shlo__la_dim(g, 0, 1);
  shlo_status st;
  if ((st = shlo__la_want_counts(g, 1, 2)) ||
      (st = shlo__la_want_in(g, 0, shlo__la_elem(k), LA_MAT, m, n)) ||
      (st = shlo__la_want_out(g, 0, shlo__la_elem(k), LA_MAT, m, n)) ||
      (st =
           shlo__la_want_out(g, 1, shlo__la_elem(k), LA_VEC, m < n ? m : n, 1)))
    return st;
  return SHLO_OK;
}

/* work of `count` elements of the kind, after asking LAPACK how many. */
static void *work_alloc(la_kind k, const void *answer, int least, la_int *n) {
  *n = shlo__la_work_count(k, answer, least);
  return shlo__malloc((size_t)*n * shlo__la_size(k));
}

static void geqrf_call(la_kind k, la_int m, la_int n, void *a, la_int lda,
                       void *tau, void *work, la_int lwork, la_int *info) {
  switch (k) {
  case LK_S: sgeqrf_(&m, &n, a, &lda, tau, work, &lwork, info); break;
  case LK_D: dgeqrf_(&m, &n, a, &lda, tau, work, &lwork, info); break;
  case LK_C: cgeqrf_(&m, &n, a, &lda, tau, work, &lwork, info); break;
  case LK_Z: zgeqrf_(&m, &n, a, &lda, tau, work, &lwork, info); break;
  }
}

static int geqrf_run(const la_params *p, void *const *in, void *const *out) {
  copy_in(p, in, out, 0, 0);
  la_int m = (la_int)p->in[0].rows, n = (la_int)p->in[0].cols, lda = ld(m);
  la_int info = 0, lwork;
  double answer[2] = {0, 0};
  geqrf_call(p->kind, m, n, out[0], lda, out[1], answer, -1, &info);
  void *work = work_alloc(p->kind, answer, n > 1 ? n : 1, &lwork);
  if (!work)
    return -1;
  geqrf_call(p->kind, m, n, out[0], lda, out[1], work, lwork, &info);
  shlo__free(work);
  return 0;
}

const la_family shlo__la_geqrf = {{"lapack_sgeqrf_ffi", "lapack_dgeqrf_ffi",
                                   "lapack_cgeqrf_ffi", "lapack_zgeqrf_ffi"},
                                  geqrf_sig,
                                  geqrf_run};

/* ==== orgqr / ungqr: the Q of a QR ====
 * (x: m x n with the reflectors in its first k columns, tau: k) -> x_out:
 * the m x n matrix of orthonormal columns.  LAPACK needs m >= n >= k. */

static shlo_status orgqr_sig(la_sig *g) {
  la_kind k = g->p->kind;
  int64_t m = shlo__la_dim(g, 0, 0), n = shlo__la_dim(g, 0, 1),
          kk = shlo__la_dim(g, 1, 0);
  shlo_status st;
  if ((st = shlo__la_want_counts(g, 2, 1)) ||
      (st = shlo__la_want_in(g, 0, shlo__la_elem(k), LA_MAT, m, n)) ||
      (st = shlo__la_want_in(g, 1, shlo__la_elem(k), LA_VEC, kk, 1)) ||
      (st = shlo__la_want_out(g, 0, shlo__la_elem(k), LA_MAT, m, n)))
    return st;
  if (!(m >= n && n >= kk))
    return shlo__la_fail(g,
                         "needs rows >= columns >= reflectors, got %lld x %lld "
                         "with %lld",
                         (long long)m, (long long)n, (long long)kk);
  return SHLO_OK;
}

static void orgqr_call(la_kind k, la_int m, la_int n, la_int kk, void *a,
                       la_int lda, const void *tau, void *work, la_int lwork,
                       la_int *info) {
  switch (k) {
  case LK_S: sorgqr_(&m, &n, &kk, a, &lda, tau, work, &lwork, info); break;
  case LK_D: dorgqr_(&m, &n, &kk, a, &lda, tau, work, &lwork, info); break;
  case LK_C: cungqr_(&m, &n, &kk, a, &lda, tau, work, &lwork, info); break;
  case LK_Z: zungqr_(&m, &n, &kk, a, &lda, tau, work, &lwork, info); break;
  }
}

static int orgqr_run(const la_params *p, void *const *in, void *const *out) {
  copy_in(p, in, out, 0, 0);
  la_int m = (la_int)p->in[0].rows, n = (la_int)p->in[0].cols;
  la_int kk = (la_int)p->in[1].rows, lda = ld(m), info = 0, lwork;
  double answer[2] = {0, 0};
  orgqr_call(p->kind, m, n, kk, out[0], lda, in[1], answer, -1, &info);
  void *work = work_alloc(p->kind, answer, n > 1 ? n : 1, &lwork);
  if (!work)
    return -1;
  orgqr_call(p->kind, m, n, kk, out[0], lda, in[1], work, lwork, &info);
  shlo__free(work);
  return 0;
}

const la_family shlo__la_orgqr = {{"lapack_sorgqr_ffi", "lapack_dorgqr_ffi",
                                   "lapack_cungqr_ffi", "lapack_zungqr_ffi"},
                                  orgqr_sig,
                                  orgqr_run};

/* ==== geqp3: QR with column pivoting ====
 * (x: m x n, jpvt: n i32, nonzero = column kept in front) -> (x_out as
 * geqrf's, jpvt: 1-based column permutation, tau: min(m, n)). */

static shlo_status geqp3_sig(la_sig *g) {
  la_kind k = g->p->kind;
  int64_t m = shlo__la_dim(g, 0, 0), n = shlo__la_dim(g, 0, 1);
  shlo_status st;
  if ((st = shlo__la_want_counts(g, 2, 3)) ||
      (st = shlo__la_want_in(g, 0, shlo__la_elem(k), LA_MAT, m, n)) ||
      (st = shlo__la_want_in(g, 1, SHLO_SI32, LA_VEC, n, 1)) ||
      (st = shlo__la_want_out(g, 0, shlo__la_elem(k), LA_MAT, m, n)) ||
      (st = shlo__la_want_out(g, 1, SHLO_SI32, LA_VEC, n, 1)) ||
      (st =
           shlo__la_want_out(g, 2, shlo__la_elem(k), LA_VEC, m < n ? m : n, 1)))
    return st;
  return SHLO_OK;
}

static void geqp3_call(la_kind k, la_int m, la_int n, void *a, la_int lda,
                       la_int *jpvt, void *tau, void *work, la_int lwork,
                       void *rwork, la_int *info) {
  switch (k) {
  case LK_S: sgeqp3_(&m, &n, a, &lda, jpvt, tau, work, &lwork, info); break;
  case LK_D: dgeqp3_(&m, &n, a, &lda, jpvt, tau, work, &lwork, info); break;
  case LK_C:
    cgeqp3_(&m, &n, a, &lda, jpvt, tau, work, &lwork, rwork, info);
    break;
  case LK_Z:
    zgeqp3_(&m, &n, a, &lda, jpvt, tau, work, &lwork, rwork, info);
    break;
  }
}

static int geqp3_run(const la_params *p, void *const *in, void *const *out) {
  copy_in(p, in, out, 0, 0);
  copy_in(p, in, out, 1, 1);
  la_int m = (la_int)p->in[0].rows, n = (la_int)p->in[0].cols, lda = ld(m);
  la_int info = 0, lwork;
  double answer[2] = {0, 0};
  void *rwork = shlo__malloc((size_t)(2 * n + 1) * shlo__la_real_size(p->kind));
  if (!rwork)
    return -1;
  geqp3_call(p->kind, m, n, out[0], lda, out[1], out[2], answer, -1, rwork,
             &info);
  void *work = work_alloc(p->kind, answer, 3 * n + 1, &lwork);
  if (!work) {
    shlo__free(rwork);
    return -1;
  }
  geqp3_call(p->kind, m, n, out[0], lda, out[1], out[2], work, lwork, rwork,
             &info);
  shlo__free(work);
  shlo__free(rwork);
  return 0;
}

const la_family shlo__la_geqp3 = {{"lapack_sgeqp3_ffi", "lapack_dgeqp3_ffi",
                                   "lapack_cgeqp3_ffi", "lapack_zgeqp3_ffi"},
                                  geqp3_sig,
                                  geqp3_run};

/* ==== trsm: triangular solve (BLAS) ====
 * (a: the triangle, m x m for side 'L', n x n for 'R'; b: m x n[; alpha:
 * a scalar, older exports]) -> x with op(a) x = alpha b (side 'L') or
 * x op(a) = alpha b ('R'); op is trans_x ('N', 'T', 'C'); diag 'U' takes
 * a's diagonal as ones.  A zero on the diagonal gives infinities, as in
 * BLAS: trsm has no info. */

static shlo_status trsm_sig(la_sig *g) {
  la_params *p = g->p;
  la_kind k = p->kind;
  shlo_status st;
  int n_in = g->op->n_operands == 3 ? 3 : 2;
  p->has_alpha = n_in == 3;
  if ((st = shlo__la_want_counts(g, n_in, 1)) ||
      (st = shlo__la_char_attr(g, "side", 'L', "LR", &p->side)) ||
      (st = shlo__la_char_attr(g, "uplo", 'L', "LU", &p->uplo)) ||
      (st = shlo__la_char_attr(g, "trans_x", 'N', "NTC", &p->trans)) ||
      (st = shlo__la_char_attr(g, "diag", 'N', "NU", &p->diag)))
    return st;
  int64_t m = shlo__la_dim(g, 1, 0), n = shlo__la_dim(g, 1, 1);
  int64_t a = p->side == 'L' ? m : n;
  if ((st = shlo__la_want_in(g, 0, shlo__la_elem(k), LA_MAT, a, a)) ||
      (st = shlo__la_want_in(g, 1, shlo__la_elem(k), LA_MAT, m, n)) ||
      (n_in == 3 && (st = shlo__la_want_scalar_in(g, 2, shlo__la_elem(k)))) ||
      (st = shlo__la_want_out(g, 0, shlo__la_elem(k), LA_MAT, m, n)))
    return st;
  return SHLO_OK;
}

static int trsm_run(const la_params *p, void *const *in, void *const *out) {
  copy_in(p, in, out, 1, 0);
  int m = (int)p->in[1].rows, n = (int)p->in[1].cols;
  int lda = ld(p->side == 'L' ? m : n), ldb = ld(m);
  enum CBLAS_SIDE side = p->side == 'L' ? CblasLeft : CblasRight;
  enum CBLAS_UPLO uplo = p->uplo == 'L' ? CblasLower : CblasUpper;
  enum CBLAS_TRANSPOSE tr = p->trans == 'N'   ? CblasNoTrans
                            : p->trans == 'T' ? CblasTrans
                                              : CblasConjTrans;
  enum CBLAS_DIAG diag = p->diag == 'U' ? CblasUnit : CblasNonUnit;
  static const double one[2] = {1, 0};
  static const float onef[2] = {1, 0};
  const void *alpha = p->has_alpha                         ? in[2]
                      : p->kind == LK_S || p->kind == LK_C ? (const void *)onef
                                                           : one;
  if (m == 0 || n == 0)
    return 0;
  switch (p->kind) {
  case LK_S:
    cblas_strsm(CblasColMajor, side, uplo, tr, diag, m, n,
                *(const float *)alpha, in[0], lda, out[0], ldb);
    break;
  case LK_D:
    cblas_dtrsm(CblasColMajor, side, uplo, tr, diag, m, n,
                *(const double *)alpha, in[0], lda, out[0], ldb);
    break;
  case LK_C:
    cblas_ctrsm(CblasColMajor, side, uplo, tr, diag, m, n, alpha, in[0], lda,
                out[0], ldb);
    break;
  case LK_Z:
    cblas_ztrsm(CblasColMajor, side, uplo, tr, diag, m, n, alpha, in[0], lda,
                out[0], ldb);
    break;
  }
  return 0;
}

const la_family shlo__la_trsm = {{"lapack_strsm_ffi", "lapack_dtrsm_ffi",
                                  "lapack_ctrsm_ffi", "lapack_ztrsm_ffi"},
                                 trsm_sig,
                                 trsm_run};

/* ==== gtsv: tridiagonal solve ====
 * (dl, d, du: n each, JAX's convention: dl[0] and du[n-1] unused; b: n x
 * nrhs) -> (dl, d, du as LAPACK leaves them, x: n x nrhs, info: k > 0 when
 * U(k, k) is exactly zero, x then unfinished). */

static shlo_status gtsv_sig(la_sig *g) {
  la_kind k = g->p->kind;
  int64_t n = shlo__la_dim(g, 0, 0), nrhs = shlo__la_dim(g, 3, 1);
  shlo_status st;
  if ((st = shlo__la_want_counts(g, 4, 5)))
    return st;
  for (int i = 0; i < 3; i++)
    if ((st = shlo__la_want_in(g, i, shlo__la_elem(k), LA_VEC, n, 1)) ||
        (st = shlo__la_want_out(g, i, shlo__la_elem(k), LA_VEC, n, 1)))
      return st;
  if ((st = shlo__la_want_in(g, 3, shlo__la_elem(k), LA_MAT, n, nrhs)) ||
      (st = shlo__la_want_out(g, 3, shlo__la_elem(k), LA_MAT, n, nrhs)) ||
      (st = shlo__la_want_out(g, 4, SHLO_SI32, LA_ONE, 1, 1)))
    return st;
  return SHLO_OK;
}

static int gtsv_run(const la_params *p, void *const *in, void *const *out) {
  for (int i = 0; i < 4; i++)
    copy_in(p, in, out, i, i);
  la_int n = (la_int)p->in[0].rows, nrhs = (la_int)p->in[3].cols, ldb = ld(n);
  la_int *info = out[4];
  if (n == 0)
    return 0;
  char *dl =
      (char *)out[0] + shlo__la_size(p->kind); /* LAPACK's dl: n - 1 long */
  switch (p->kind) {
  case LK_S: sgtsv_(&n, &nrhs, dl, out[1], out[2], out[3], &ldb, info); break;
  case LK_D: dgtsv_(&n, &nrhs, dl, out[1], out[2], out[3], &ldb, info); break;
  case LK_C: cgtsv_(&n, &nrhs, dl, out[1], out[2], out[3], &ldb, info); break;
  case LK_Z: zgtsv_(&n, &nrhs, dl, out[1], out[2], out[3], &ldb, info); break;
  }
  return 0;
}

const la_family shlo__la_gtsv = {{"lapack_sgtsv_ffi", "lapack_dgtsv_ffi",
                                  "lapack_cgtsv_ffi", "lapack_zgtsv_ffi"},
                                 gtsv_sig,
                                 gtsv_run};
