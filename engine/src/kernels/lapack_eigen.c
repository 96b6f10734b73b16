/* SPDX-License-Identifier: Apache-2.0 */
/* JAX's LAPACK calls for spectral decompositions and reductions
 * (lapack.h): symmetric/Hermitian eigen (syevd/heevd), general eigen
 * (geev), Schur (gees), Hessenberg (gehrd), tridiagonal reduction
 * (sytrd/hetrd) and the SVD (gesdd).
 *
 * Each run function gets one batch element, column-major, asks LAPACK
 * for its workspace size and calls it; `info` is LAPACK's. */
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "kernels/lapack.h"
#include "kernels/lapack_fortran.h"

static la_int ld(int64_t rows) { return rows > 1 ? (la_int)rows : 1; }

static void copy_in(const la_params *p, void *const *in, void *const *out,
                    int k_in, int k_out) {
  memcpy(out[k_out], in[k_in],
         (size_t)p->in[k_in].per * shlo_elem_size(p->in[k_in].elem));
}

static bool single(la_kind k) { return k == LK_S || k == LK_C; }

/* ==== syevd / heevd: eigen of a symmetric or Hermitian matrix ====
 * x: n x n, only the `uplo` triangle read -> (x_out: the eigenvectors as
 * columns (mode 'V'), w: n real eigenvalues ascending, info). */

static shlo_status syevd_sig(la_sig *g) {
  la_kind k = g->p->kind;
  int64_t n = shlo__la_dim(g, 0, 0);
  shlo_status st;
  if ((st = shlo__la_want_counts(g, 1, 3)) ||
      (st = shlo__la_char_attr(g, "uplo", 'L', "LU", &g->p->uplo)) ||
      (st = shlo__la_char_attr(g, "mode", 'V', "VN", &g->p->mode)) ||
      (st = shlo__la_want_in(g, 0, shlo__la_elem(k), LA_MAT, n, n)) ||
      (st = shlo__la_want_out(g, 0, shlo__la_elem(k), LA_MAT, n, n)) ||
      (st = shlo__la_want_out(g, 1, shlo__la_real(k), LA_VEC, n, 1)) ||
      (st = shlo__la_want_out(g, 2, SHLO_SI32, LA_ONE, 1, 1)))
    return st;
  return SHLO_OK;
}

static void syevd_call(const la_params *p, la_int n, void *a, void *w,
                       void *work, la_int lwork, void *rwork, la_int lrwork,
                       la_int *iwork, la_int liwork, la_int *info) {
  la_int lda = ld(n);
  const char *j = &p->mode, *u = &p->uplo;
  switch (p->kind) {
  case LK_S:
    ssyevd_(j, u, &n, a, &lda, w, work, &lwork, iwork, &liwork, info, 1, 1);
    break;
  case LK_D:
    dsyevd_(j, u, &n, a, &lda, w, work, &lwork, iwork, &liwork, info, 1, 1);
    break;
  case LK_C:
    cheevd_(j, u, &n, a, &lda, w, work, &lwork, rwork, &lrwork, iwork, &liwork,
            info, 1, 1);
    break;
  case LK_Z:
    zheevd_(j, u, &n, a, &lda, w, work, &lwork, rwork, &lrwork, iwork, &liwork,
            info, 1, 1);
    break;
  }
}

static int syevd_run(const la_params *p, void *const *in, void *const *out) {
  copy_in(p, in, out, 0, 0);
  la_int n = (la_int)p->in[0].rows, *info = out[2];
  double wq[2] = {0, 0}, rq[2] = {0, 0};
  la_int iq = 0;
  syevd_call(p, n, out[0], out[1], wq, -1, rq, -1, &iq, -1, info);
  la_int lwork = shlo__la_work_count(p->kind, wq, 1 + 6 * n + 2 * n * n);
  la_int lrwork = shlo__la_work_count(single(p->kind) ? LK_S : LK_D, rq,
                                      1 + 5 * n + 2 * n * n);
  la_int liwork = iq > 3 + 5 * n ? iq : 3 + 5 * n;
  void *work = shlo__malloc((size_t)lwork * shlo__la_size(p->kind));
  void *rwork = la_is_complex(p->kind)
                    ? shlo__malloc((size_t)lrwork * shlo__la_real_size(p->kind))
                    : NULL;
  la_int *iwork = shlo__malloc((size_t)liwork * sizeof *iwork);
  int rc = -1;
  if (work && iwork && (rwork || !la_is_complex(p->kind))) {
    syevd_call(p, n, out[0], out[1], work, lwork, rwork, lrwork, iwork, liwork,
               info);
    rc = 0;
  }
  shlo__free(work);
  shlo__free(rwork);
  shlo__free(iwork);
  return rc;
}

const la_family shlo__la_syevd = {{"lapack_ssyevd_ffi", "lapack_dsyevd_ffi",
                                   "lapack_cheevd_ffi", "lapack_zheevd_ffi"},
                                  syevd_sig,
                                  syevd_run};

/* ==== geev: eigen of a general matrix ====
 * real x: n x n -> (wr, wi: n; vl, vr: n x n complex; info)
 * complex x -> (w: n; vl, vr: n x n; info)
 * vl's columns are left eigenvectors (u^H A = lambda u^H), vr's right
 * ones, each of unit norm with its largest component real.  A matrix with
 * a NaN or an infinity is not given to LAPACK (it may not return): info
 * is -4 then, as in JAX. */

static shlo_status geev_sig(la_sig *g) {
  la_params *p = g->p;
  la_kind k = p->kind;
  int64_t n = shlo__la_dim(g, 0, 0);
  bool cx = la_is_complex(k);
  int o = cx ? 1 : 2; /* index of vl */
  shlo_status st;
  if ((st = shlo__la_want_counts(g, 1, cx ? 4 : 5)) ||
      (st = shlo__la_char_attr(g, "compute_left", 'V', "VN", &p->jobvl)) ||
      (st = shlo__la_char_attr(g, "compute_right", 'V', "VN", &p->jobvr)) ||
      (st = shlo__la_want_in(g, 0, shlo__la_elem(k), LA_MAT, n, n)) ||
      (st = shlo__la_want_out(g, 0, shlo__la_elem(k), LA_VEC, n, 1)) ||
      (!cx && (st = shlo__la_want_out(g, 1, shlo__la_elem(k), LA_VEC, n, 1))) ||
      (st = shlo__la_want_out(g, o, shlo__la_complex(k), LA_MAT, n, n)) ||
      (st = shlo__la_want_out(g, o + 1, shlo__la_complex(k), LA_MAT, n, n)) ||
      (st = shlo__la_want_out(g, o + 2, SHLO_SI32, LA_ONE, 1, 1)))
    return st;
  return SHLO_OK;
}

static bool all_finite(la_kind k, const void *a, int64_t n) {
  int64_t parts = la_is_complex(k) ? 2 * n : n;
  if (single(k)) {
    const float *f = a;
    for (int64_t i = 0; i < parts; i++)
      if (!isfinite(f[i]))
        return false;
  } else {
    const double *d = a;
    for (int64_t i = 0; i < parts; i++)
      if (!isfinite(d[i]))
        return false;
  }
  return true;
}

/* LAPACK's real eigenvectors -> complex columns: a real eigenvalue's
 * vector is column j; a pair wi[j] > 0, wi[j+1] < 0 has its vector's real
 * part in column j and imaginary part in column j + 1 (the second vector
 * is the conjugate). */
#define UNPACK(T)                                                              \
  static void unpack_##T(int64_t n, const T *wi, const T *packed, T *cplx) {   \
    for (int64_t j = 0; j < n;) {                                              \
      if (wi[j] == 0 || isnan(wi[j]) || j + 1 == n) {                          \
        for (int64_t i = 0; i < n; i++) {                                      \
          cplx[2 * (j * n + i)] = packed[j * n + i];                           \
          cplx[2 * (j * n + i) + 1] = 0;                                       \
        }                                                                      \
        j++;                                                                   \
        continue;                                                              \
      }                                                                        \
      for (int64_t i = 0; i < n; i++) {                                        \
        T re = packed[j * n + i], im = packed[(j + 1) * n + i];                \
        cplx[2 * (j * n + i)] = re;                                            \
        cplx[2 * (j * n + i) + 1] = im;                                        \
        cplx[2 * ((j + 1) * n + i)] = re;                                      \
        cplx[2 * ((j + 1) * n + i) + 1] = -im;                                 \
      }                                                                        \
      j += 2;                                                                  \
    }                                                                          \
  }
UNPACK(float)
UNPACK(double)

static void geev_call(const la_params *p, la_int n, void *a, void *w1, void *w2,
                      void *vl, void *vr, void *work, la_int lwork, void *rwork,
                      la_int *info) {
  la_int lda = ld(n);
  const char *jl = &p->jobvl, *jr = &p->jobvr;
  switch (p->kind) {
  case LK_S:
    sgeev_(jl, jr, &n, a, &lda, w1, w2, vl, &lda, vr, &lda, work, &lwork, info,
           1, 1);
    break;
  case LK_D:
    dgeev_(jl, jr, &n, a, &lda, w1, w2, vl, &lda, vr, &lda, work, &lwork, info,
           1, 1);
    break;
  case LK_C:
    cgeev_(jl, jr, &n, a, &lda, w1, vl, &lda, vr, &lda, work, &lwork, rwork,
           info, 1, 1);
    break;
  case LK_Z:
    zgeev_(jl, jr, &n, a, &lda, w1, vl, &lda, vr, &lda, work, &lwork, rwork,
           info, 1, 1);
    break;
  }
}

static int geev_run(const la_params *p, void *const *in, void *const *out) {
  la_int n = (la_int)p->in[0].rows;
  bool cx = la_is_complex(p->kind);
  int o = cx ? 1 : 2;
  la_int *info = out[o + 2];
  if (!all_finite(p->kind, in[0], (int64_t)n * n)) {
    *info = -4;
    return 0;
  }
  size_t nn = (size_t)(n > 0 ? n : 1) * (size_t)(n > 0 ? n : 1);
  /* real kinds: LAPACK's packed vectors first, unpacked into the results */
  void *vl = cx ? out[o] : shlo__calloc(nn, shlo__la_size(p->kind));
  void *vr = cx ? out[o + 1] : shlo__calloc(nn, shlo__la_size(p->kind));
  void *rwork =
      cx ? shlo__malloc((size_t)(2 * n + 1) * shlo__la_real_size(p->kind))
         : NULL;
  void *work = NULL;
  int rc = -1;
  if (!vl || !vr || (cx && !rwork))
    goto done;
  double q[2] = {0, 0};
  void *w2 = cx ? NULL : out[1];
  geev_call(p, n, in[0], out[0], w2, vl, vr, q, -1, rwork, info);
  la_int lwork = shlo__la_work_count(p->kind, q, 4 * n + 1);
  if (!(work = shlo__malloc((size_t)lwork * shlo__la_size(p->kind))))
    goto done;
  geev_call(p, n, in[0], out[0], w2, vl, vr, work, lwork, rwork, info);
  if (!cx && *info == 0) {
    if (p->kind == LK_S) {
      if (p->jobvl == 'V')
        unpack_float(n, out[1], vl, out[o]);
      if (p->jobvr == 'V')
        unpack_float(n, out[1], vr, out[o + 1]);
    } else {
      if (p->jobvl == 'V')
        unpack_double(n, out[1], vl, out[o]);
      if (p->jobvr == 'V')
        unpack_double(n, out[1], vr, out[o + 1]);
    }
  }
  rc = 0;
done:
  if (!cx) {
    shlo__free(vl);
    shlo__free(vr);
  }
  shlo__free(rwork);
  shlo__free(work);
  return rc;
}

const la_family shlo__la_geev = {{"lapack_sgeev_ffi", "lapack_dgeev_ffi",
                                  "lapack_cgeev_ffi", "lapack_zgeev_ffi"},
                                 geev_sig,
                                 geev_run};

/* ==== gees: Schur decomposition ====
 * real x: n x n -> (t: the quasi-triangular Schur form, vs: the Schur
 * vectors (mode 'V'), wr, wi: n eigenvalues, sdim, info)
 * complex x -> (t, vs, w: n, sdim, info).  x = vs t vs^H.  Only sort 'N':
 * ordering needs a select function, which JAX never gives either. */

static shlo_status gees_sig(la_sig *g) {
  la_params *p = g->p;
  la_kind k = p->kind;
  int64_t n = shlo__la_dim(g, 0, 0);
  bool cx = la_is_complex(k);
  int o = cx ? 3 : 4; /* index of sdim */
  shlo_status st;
  if ((st = shlo__la_want_counts(g, 1, cx ? 5 : 6)) ||
      (st = shlo__la_char_attr(g, "mode", 'V', "VN", &p->mode)) ||
      (st = shlo__la_char_attr(g, "sort", 'N', "NS", &p->sort)) ||
      (st = shlo__la_want_in(g, 0, shlo__la_elem(k), LA_MAT, n, n)) ||
      (st = shlo__la_want_out(g, 0, shlo__la_elem(k), LA_MAT, n, n)) ||
      (st = shlo__la_want_out(g, 1, shlo__la_elem(k), LA_MAT, n, n)) ||
      (st = shlo__la_want_out(g, 2, shlo__la_elem(k), LA_VEC, n, 1)) ||
      (!cx && (st = shlo__la_want_out(g, 3, shlo__la_elem(k), LA_VEC, n, 1))) ||
      (st = shlo__la_want_out(g, o, SHLO_SI32, LA_ONE, 1, 1)) ||
      (st = shlo__la_want_out(g, o + 1, SHLO_SI32, LA_ONE, 1, 1)))
    return st;
  if (p->sort != 'N')
    return shlo__cc_fail(g->cc, g->op, SHLO_EUNSUPPORTED,
                         "%s: sort = 'S' (ordered eigenvalues) needs a "
                         "select function, which JAX does not implement "
                         "either",
                         g->target);
  return SHLO_OK;
}

static void gees_call(const la_params *p, la_int n, void *a, la_int *sdim,
                      void *w1, void *w2, void *vs, void *work, la_int lwork,
                      void *rwork, la_int *info) {
  la_int lda = ld(n);
  const char *j = &p->mode, *s = &p->sort;
  switch (p->kind) {
  case LK_S:
    sgees_(j, s, NULL, &n, a, &lda, sdim, w1, w2, vs, &lda, work, &lwork, NULL,
           info, 1, 1);
    break;
  case LK_D:
    dgees_(j, s, NULL, &n, a, &lda, sdim, w1, w2, vs, &lda, work, &lwork, NULL,
           info, 1, 1);
    break;
  case LK_C:
    cgees_(j, s, NULL, &n, a, &lda, sdim, w1, vs, &lda, work, &lwork, rwork,
           NULL, info, 1, 1);
    break;
  case LK_Z:
    zgees_(j, s, NULL, &n, a, &lda, sdim, w1, vs, &lda, work, &lwork, rwork,
           NULL, info, 1, 1);
    break;
  }
}

static int gees_run(const la_params *p, void *const *in, void *const *out) {
  copy_in(p, in, out, 0, 0);
  la_int n = (la_int)p->in[0].rows;
  bool cx = la_is_complex(p->kind);
  int o = cx ? 3 : 4;
  la_int *sdim = out[o], *info = out[o + 1];
  void *w2 = cx ? NULL : out[3];
  void *rwork =
      cx ? shlo__malloc((size_t)(n + 1) * shlo__la_real_size(p->kind)) : NULL;
  if (cx && !rwork)
    return -1;
  double q[2] = {0, 0};
  gees_call(p, n, out[0], sdim, out[2], w2, out[1], q, -1, rwork, info);
  la_int lwork = shlo__la_work_count(p->kind, q, 3 * n + 1);
  void *work = shlo__malloc((size_t)lwork * shlo__la_size(p->kind));
  if (!work) {
    shlo__free(rwork);
    return -1;
  }
  gees_call(p, n, out[0], sdim, out[2], w2, out[1], work, lwork, rwork, info);
  shlo__free(work);
  shlo__free(rwork);
  return 0;
}

const la_family shlo__la_gees = {{"lapack_sgees_ffi", "lapack_dgees_ffi",
                                  "lapack_cgees_ffi", "lapack_zgees_ffi"},
                                 gees_sig,
                                 gees_run};

/* ==== gehrd: Hessenberg reduction ====
 * x: n x n, attributes low, high (LAPACK's 1-based ilo, ihi) -> (x_out: H
 * on and above the first subdiagonal, the reflectors below; tau: n - 1;
 * info).  x = Q H Q^H with Q the product of the reflectors. */

static shlo_status gehrd_sig(la_sig *g) {
  la_params *p = g->p;
  la_kind k = p->kind;
  int64_t n = shlo__la_dim(g, 0, 0);
  shlo_status st;
  if ((st = shlo__la_want_counts(g, 1, 3)) ||
      (st = shlo__la_int_attr(g, "low", 1, &p->low)) ||
      (st = shlo__la_int_attr(g, "high", (int32_t)n, &p->high)) ||
      (st = shlo__la_want_in(g, 0, shlo__la_elem(k), LA_MAT, n, n)) ||
      (st = shlo__la_want_out(g, 0, shlo__la_elem(k), LA_MAT, n, n)) ||
      (st = shlo__la_want_out(g, 1, shlo__la_elem(k), LA_VEC, n - 1, 1)) ||
      (st = shlo__la_want_out(g, 2, SHLO_SI32, LA_ONE, 1, 1)))
    return st;
  /* LAPACK's own bounds: 1 <= ilo <= ihi <= n, or ilo = 1, ihi = 0 */
  bool ok = n == 0 ? p->low == 1 && p->high == 0
                   : 1 <= p->low && p->low <= p->high && p->high <= n;
  if (!ok)
    return shlo__la_fail(g,
                         "needs 1 <= low <= high <= %lld, got low = %d, "
                         "high = %d",
                         (long long)n, p->low, p->high);
  return SHLO_OK;
}

static void gehrd_call(la_kind k, la_int n, la_int ilo, la_int ihi, void *a,
                       void *tau, void *work, la_int lwork, la_int *info) {
  la_int lda = ld(n);
  switch (k) {
  case LK_S: sgehrd_(&n, &ilo, &ihi, a, &lda, tau, work, &lwork, info); break;
  case LK_D: dgehrd_(&n, &ilo, &ihi, a, &lda, tau, work, &lwork, info); break;
  case LK_C: cgehrd_(&n, &ilo, &ihi, a, &lda, tau, work, &lwork, info); break;
  case LK_Z: zgehrd_(&n, &ilo, &ihi, a, &lda, tau, work, &lwork, info); break;
  }
}

static int gehrd_run(const la_params *p, void *const *in, void *const *out) {
  copy_in(p, in, out, 0, 0);
  la_int n = (la_int)p->in[0].rows, *info = out[2];
  double q[2] = {0, 0};
  gehrd_call(p->kind, n, p->low, p->high, out[0], out[1], q, -1, info);
  la_int lwork;
  lwork = shlo__la_work_count(p->kind, q, n > 1 ? n : 1);
  void *work = shlo__malloc((size_t)lwork * shlo__la_size(p->kind));
  if (!work)
    return -1;
  gehrd_call(p->kind, n, p->low, p->high, out[0], out[1], work, lwork, info);
  shlo__free(work);
  return 0;
}

const la_family shlo__la_gehrd = {{"lapack_sgehrd_ffi", "lapack_dgehrd_ffi",
                                   "lapack_cgehrd_ffi", "lapack_zgehrd_ffi"},
                                  gehrd_sig,
                                  gehrd_run};

/* ==== sytrd / hetrd: tridiagonal reduction ====
 * x: n x n, the `uplo` triangle read -> (x_out: the reflectors and the
 * tridiagonal, d: n and e: n - 1 real (its diagonal and off-diagonal),
 * tau: n - 1, info).  x = Q T Q^H. */

static shlo_status sytrd_sig(la_sig *g) {
  la_params *p = g->p;
  la_kind k = p->kind;
  int64_t n = shlo__la_dim(g, 0, 0);
  shlo_status st;
  if ((st = shlo__la_want_counts(g, 1, 5)) ||
      (st = shlo__la_char_attr(g, "uplo", 'L', "LU", &p->uplo)) ||
      (st = shlo__la_want_in(g, 0, shlo__la_elem(k), LA_MAT, n, n)) ||
      (st = shlo__la_want_out(g, 0, shlo__la_elem(k), LA_MAT, n, n)) ||
      (st = shlo__la_want_out(g, 1, shlo__la_real(k), LA_VEC, n, 1)) ||
      (st = shlo__la_want_out(g, 2, shlo__la_real(k), LA_VEC, n - 1, 1)) ||
      (st = shlo__la_want_out(g, 3, shlo__la_elem(k), LA_VEC, n - 1, 1)) ||
      (st = shlo__la_want_out(g, 4, SHLO_SI32, LA_ONE, 1, 1)))
    return st;
  return SHLO_OK;
}

static void sytrd_call(const la_params *p, la_int n, void *a, void *d, void *e,
                       void *tau, void *work, la_int lwork, la_int *info) {
  la_int lda = ld(n);
  const char *u = &p->uplo;
  switch (p->kind) {
  case LK_S: ssytrd_(u, &n, a, &lda, d, e, tau, work, &lwork, info, 1); break;
  case LK_D: dsytrd_(u, &n, a, &lda, d, e, tau, work, &lwork, info, 1); break;
  case LK_C: chetrd_(u, &n, a, &lda, d, e, tau, work, &lwork, info, 1); break;
  case LK_Z: zhetrd_(u, &n, a, &lda, d, e, tau, work, &lwork, info, 1); break;
  }
}

static int sytrd_run(const la_params *p, void *const *in, void *const *out) {
  copy_in(p, in, out, 0, 0);
  la_int n = (la_int)p->in[0].rows, *info = out[4];
  double q[2] = {0, 0};
  sytrd_call(p, n, out[0], out[1], out[2], out[3], q, -1, info);
  la_int lwork = shlo__la_work_count(p->kind, q, 1);
  void *work = shlo__malloc((size_t)lwork * shlo__la_size(p->kind));
  if (!work)
    return -1;
  sytrd_call(p, n, out[0], out[1], out[2], out[3], work, lwork, info);
  shlo__free(work);
  return 0;
}

const la_family shlo__la_sytrd = {{"lapack_ssytrd_ffi", "lapack_dsytrd_ffi",
                                   "lapack_chetrd_ffi", "lapack_zhetrd_ffi"},
                                  sytrd_sig,
                                  sytrd_run};

/* ==== gesdd: SVD, divide and conquer ====
 * x: m x n, mode 'A' (full U, V^H), 'S' (min(m, n) columns / rows) or 'N'
 * (singular values only) -> (x_out: destroyed, s: min(m, n) real
 * descending, u: m x m | m x k, vt: n x n | k x n, info: > 0 when it did
 * not converge).  x = U diag(s) V^H. */

static shlo_status gesdd_sig(la_sig *g) {
  la_params *p = g->p;
  la_kind k = p->kind;
  int64_t m = shlo__la_dim(g, 0, 0), n = shlo__la_dim(g, 0, 1),
          mn = m < n ? m : n;
  shlo_status st;
  if ((st = shlo__la_want_counts(g, 1, 5)) ||
      (st = shlo__la_char_attr(g, "mode", 'A', "ASN", &p->mode)) ||
      (st = shlo__la_want_in(g, 0, shlo__la_elem(k), LA_MAT, m, n)) ||
      (st = shlo__la_want_out(g, 0, shlo__la_elem(k), LA_MAT, m, n)) ||
      (st = shlo__la_want_out(g, 1, shlo__la_real(k), LA_VEC, mn, 1)))
    return st;
  /* 'N' computes no vectors: JAX still declares u and vt, of any shape */
  const shlo_type *ut = shlo__cc_result_type(g->cc, g->op, 2);
  const shlo_type *vt = shlo__cc_result_type(g->cc, g->op, 3);
  int64_t ur = m, uc = p->mode == 'A' ? m : mn;
  int64_t vr = p->mode == 'A' ? n : mn, vc = n;
  if (p->mode == 'N' && ut->rank == p->nb + 2 && vt->rank == p->nb + 2) {
    ur = ut->dims[p->nb], uc = ut->dims[p->nb + 1];
    vr = vt->dims[p->nb], vc = vt->dims[p->nb + 1];
  }
  if ((st = shlo__la_want_out(g, 2, shlo__la_elem(k), LA_MAT, ur, uc)) ||
      (st = shlo__la_want_out(g, 3, shlo__la_elem(k), LA_MAT, vr, vc)) ||
      (st = shlo__la_want_out(g, 4, SHLO_SI32, LA_ONE, 1, 1)))
    return st;
  return SHLO_OK;
}

static void gesdd_call(const la_params *p, la_int m, la_int n, void *a, void *s,
                       void *u, la_int ldu, void *vt, la_int ldvt, void *work,
                       la_int lwork, void *rwork, la_int *iwork, la_int *info) {
  la_int lda = ld(m);
  const char *j = &p->mode;
  switch (p->kind) {
  case LK_S:
    sgesdd_(j, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, iwork,
            info, 1);
    break;
  case LK_D:
    dgesdd_(j, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, iwork,
            info, 1);
    break;
  case LK_C:
    cgesdd_(j, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, rwork,
            iwork, info, 1);
    break;
  case LK_Z:
    zgesdd_(j, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, rwork,
            iwork, info, 1);
    break;
  }
}

static int gesdd_run(const la_params *p, void *const *in, void *const *out) {
  copy_in(p, in, out, 0, 0);
  la_int m = (la_int)p->in[0].rows, n = (la_int)p->in[0].cols;
  int64_t mn = m < n ? m : n, mx = m < n ? n : m;
  la_int ldu = ld(p->out[2].rows), ldvt = ld(p->out[3].rows), *info = out[4];
  /* LAPACK's documented sizes for the complex real workspace */
  int64_t lr = p->mode == 'N' ? 7 * mn
               : 5 * mn * mn + 5 * mn > 2 * mx * mn + 2 * mn * mn + mn
                   ? 5 * mn * mn + 5 * mn
                   : 2 * mx * mn + 2 * mn * mn + mn;
  la_int *iwork = shlo__malloc((size_t)(8 * mn + 1) * sizeof *iwork);
  void *rwork =
      la_is_complex(p->kind)
          ? shlo__malloc((size_t)(lr + 1) * shlo__la_real_size(p->kind))
          : NULL;
  void *work = NULL;
  int rc = -1;
  if (!iwork || (la_is_complex(p->kind) && !rwork))
    goto done;
  double q[2] = {0, 0};
  gesdd_call(p, m, n, out[0], out[1], out[2], ldu, out[3], ldvt, q, -1, rwork,
             iwork, info);
  la_int lwork = shlo__la_work_count(p->kind, q, 1);
  if (!(work = shlo__malloc((size_t)lwork * shlo__la_size(p->kind))))
    goto done;
  gesdd_call(p, m, n, out[0], out[1], out[2], ldu, out[3], ldvt, work, lwork,
             rwork, iwork, info);
  rc = 0;
done:
  shlo__free(iwork);
  shlo__free(rwork);
  shlo__free(work);
  return rc;
}

const la_family shlo__la_gesdd = {{"lapack_sgesdd_ffi", "lapack_dgesdd_ffi",
                                   "lapack_cgesdd_ffi", "lapack_zgesdd_ffi"},
                                  gesdd_sig,
                                  gesdd_run};

/* ==== gesvd: SVD by QR iteration ====
 * JAX's svd(algorithm=QR): gesdd's operands, results and modes, computed
 * by gesvd (jobu = jobvt = mode). */

static void gesvd_call(const la_params *p, la_int m, la_int n, void *a, void *s,
                       void *u, la_int ldu, void *vt, la_int ldvt, void *work,
                       la_int lwork, void *rwork, la_int *info) {
  la_int lda = ld(m);
  const char *j = &p->mode;
  switch (p->kind) {
  case LK_S:
    sgesvd_(j, j, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, info, 1,
            1);
    break;
  case LK_D:
    dgesvd_(j, j, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, info, 1,
            1);
    break;
  case LK_C:
    cgesvd_(j, j, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, rwork,
            info, 1, 1);
    break;
  case LK_Z:
    zgesvd_(j, j, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, rwork,
            info, 1, 1);
    break;
  }
}

static int gesvd_run(const la_params *p, void *const *in, void *const *out) {
  copy_in(p, in, out, 0, 0);
  la_int m = (la_int)p->in[0].rows, n = (la_int)p->in[0].cols;
  int64_t mn = m < n ? m : n;
  la_int ldu = ld(p->out[2].rows), ldvt = ld(p->out[3].rows), *info = out[4];
  void *rwork =
      la_is_complex(p->kind)
          ? shlo__malloc((size_t)(5 * mn + 1) * shlo__la_real_size(p->kind))
          : NULL;
  if (la_is_complex(p->kind) && !rwork)
    return -1;
  double q[2] = {0, 0};
  gesvd_call(p, m, n, out[0], out[1], out[2], ldu, out[3], ldvt, q, -1, rwork,
             info);
  la_int lwork = shlo__la_work_count(p->kind, q, 5 * (int)mn + 1);
  void *work = shlo__malloc((size_t)lwork * shlo__la_size(p->kind));
  if (!work) {
    shlo__free(rwork);
    return -1;
  }
  gesvd_call(p, m, n, out[0], out[1], out[2], ldu, out[3], ldvt, work, lwork,
             rwork, info);
  shlo__free(work);
  shlo__free(rwork);
  return 0;
}

const la_family shlo__la_gesvd = {{"lapack_sgesvd_ffi", "lapack_dgesvd_ffi",
                                   "lapack_cgesvd_ffi", "lapack_zgesvd_ffi"},
                                  gesdd_sig,
                                  gesvd_run};
