/* SPDX-License-Identifier: Apache-2.0 */
/* The Fortran LAPACK routines that Debian's libopenblas exports, declared
 * here once (OpenBLAS ships no header of them that every Debian release
 * agrees on).
 *
 * Fortran passes every argument by reference and, after the last one, the
 * length of each CHARACTER argument as a hidden size_t.  We pass those
 * lengths (always 1): gfortran-built routines may read them, and leaving
 * them out is what broke R's and other callers' LAPACK calls when
 * gfortran began to tail-call.  Array arguments are void * so one
 * prototype covers the real and the complex kinds of a routine (s/d real,
 * c/z interleaved complex pairs). */
#ifndef SHLO_LAPACK_FORTRAN_H
#define SHLO_LAPACK_FORTRAN_H

#include <stddef.h>

typedef int la_int;    /* LAPACK's INTEGER: 32 bits in Debian's OpenBLAS */
typedef size_t la_len; /* a hidden CHARACTER length */

#define LA_DECL4(ret, name, args)                                              \
  ret s##name args;                                                            \
  ret d##name args;                                                            \
  ret c##name args;                                                            \
  ret z##name args;

/* Cholesky: potrf(uplo, n, a, lda, info) */
LA_DECL4(void, potrf_,
         (const char *, const la_int *, void *, const la_int *, la_int *,
          la_len))
/* LU with partial pivoting: getrf(m, n, a, lda, ipiv, info) */
LA_DECL4(void, getrf_,
         (const la_int *, const la_int *, void *, const la_int *, la_int *,
          la_int *))
/* QR: geqrf(m, n, a, lda, tau, work, lwork, info) */
LA_DECL4(void, geqrf_,
         (const la_int *, const la_int *, void *, const la_int *, void *,
          void *, const la_int *, la_int *))
/* Q of a QR: orgqr / ungqr(m, n, k, a, lda, tau, work, lwork, info) */
void sorgqr_(const la_int *, const la_int *, const la_int *, void *,
             const la_int *, const void *, void *, const la_int *, la_int *);
void dorgqr_(const la_int *, const la_int *, const la_int *, void *,
             const la_int *, const void *, void *, const la_int *, la_int *);
void cungqr_(const la_int *, const la_int *, const la_int *, void *,
             const la_int *, const void *, void *, const la_int *, la_int *);
void zungqr_(const la_int *, const la_int *, const la_int *, void *,
             const la_int *, const void *, void *, const la_int *, la_int *);
/* Column-pivoted QR: geqp3(m, n, a, lda, jpvt, tau, work, lwork[, rwork],
 * info) */
void sgeqp3_(const la_int *, const la_int *, void *, const la_int *, la_int *,
             void *, void *, const la_int *, la_int *);
void dgeqp3_(const la_int *, const la_int *, void *, const la_int *, la_int *,
             void *, void *, const la_int *, la_int *);
void cgeqp3_(const la_int *, const la_int *, void *, const la_int *, la_int *,
             void *, void *, const la_int *, void *, la_int *);
void zgeqp3_(const la_int *, const la_int *, void *, const la_int *, la_int *,
             void *, void *, const la_int *, void *, la_int *);
/* Tridiagonal solve: gtsv(n, nrhs, dl, d, du, b, ldb, info) */
LA_DECL4(void, gtsv_,
         (const la_int *, const la_int *, void *, void *, void *, void *,
          const la_int *, la_int *))
/* Symmetric / Hermitian eigen, divide and conquer:
 * syevd(jobz, uplo, n, a, lda, w, work, lwork, iwork, liwork, info)
 * heevd(jobz, uplo, n, a, lda, w, work, lwork, rwork, lrwork, iwork,
 *       liwork, info) */
void ssyevd_(const char *, const char *, const la_int *, void *, const la_int *,
             void *, void *, const la_int *, la_int *, const la_int *, la_int *,
             la_len, la_len);
void dsyevd_(const char *, const char *, const la_int *, void *, const la_int *,
             void *, void *, const la_int *, la_int *, const la_int *, la_int *,
             la_len, la_len);
void cheevd_(const char *, const char *, const la_int *, void *, const la_int *,
             void *, void *, const la_int *, void *, const la_int *, la_int *,
             const la_int *, la_int *, la_len, la_len);
void zheevd_(const char *, const char *, const la_int *, void *, const la_int *,
             void *, void *, const la_int *, void *, const la_int *, la_int *,
             const la_int *, la_int *, la_len, la_len);
/* General eigen: real geev(jobvl, jobvr, n, a, lda, wr, wi, vl, ldvl, vr,
 * ldvr, work, lwork, info); complex geev(jobvl, jobvr, n, a, lda, w, vl,
 * ldvl, vr, ldvr, work, lwork, rwork, info) */
void sgeev_(const char *, const char *, const la_int *, void *, const la_int *,
            void *, void *, void *, const la_int *, void *, const la_int *,
            void *, const la_int *, la_int *, la_len, la_len);
void dgeev_(const char *, const char *, const la_int *, void *, const la_int *,
            void *, void *, void *, const la_int *, void *, const la_int *,
            void *, const la_int *, la_int *, la_len, la_len);
void cgeev_(const char *, const char *, const la_int *, void *, const la_int *,
            void *, void *, const la_int *, void *, const la_int *, void *,
            const la_int *, void *, la_int *, la_len, la_len);
void zgeev_(const char *, const char *, const la_int *, void *, const la_int *,
            void *, void *, const la_int *, void *, const la_int *, void *,
            const la_int *, void *, la_int *, la_len, la_len);
/* Schur: real gees(jobvs, sort, select, n, a, lda, sdim, wr, wi, vs, ldvs,
 * work, lwork, bwork, info); complex gees(jobvs, sort, select, n, a, lda,
 * sdim, w, vs, ldvs, work, lwork, rwork, bwork, info).  select is never
 * called with sort = 'N', the only order JAX asks for. */
void sgees_(const char *, const char *, void *, const la_int *, void *,
            const la_int *, la_int *, void *, void *, void *, const la_int *,
            void *, const la_int *, la_int *, la_int *, la_len, la_len);
void dgees_(const char *, const char *, void *, const la_int *, void *,
            const la_int *, la_int *, void *, void *, void *, const la_int *,
            void *, const la_int *, la_int *, la_int *, la_len, la_len);
void cgees_(const char *, const char *, void *, const la_int *, void *,
            const la_int *, la_int *, void *, void *, const la_int *, void *,
            const la_int *, void *, la_int *, la_int *, la_len, la_len);
void zgees_(const char *, const char *, void *, const la_int *, void *,
            const la_int *, la_int *, void *, void *, const la_int *, void *,
            const la_int *, void *, la_int *, la_int *, la_len, la_len);
/* Hessenberg: gehrd(n, ilo, ihi, a, lda, tau, work, lwork, info) */
LA_DECL4(void, gehrd_,
         (const la_int *, const la_int *, const la_int *, void *,
          const la_int *, void *, void *, const la_int *, la_int *))
/* Tridiagonal reduction: sytrd / hetrd(uplo, n, a, lda, d, e, tau, work,
 * lwork, info) */
void ssytrd_(const char *, const la_int *, void *, const la_int *, void *,
             void *, void *, void *, const la_int *, la_int *, la_len);
void dsytrd_(const char *, const la_int *, void *, const la_int *, void *,
             void *, void *, void *, const la_int *, la_int *, la_len);
void chetrd_(const char *, const la_int *, void *, const la_int *, void *,
             void *, void *, void *, const la_int *, la_int *, la_len);
void zhetrd_(const char *, const la_int *, void *, const la_int *, void *,
             void *, void *, void *, const la_int *, la_int *, la_len);
/* SVD, divide and conquer: real gesdd(jobz, m, n, a, lda, s, u, ldu, vt,
 * ldvt, work, lwork, iwork, info); complex adds rwork before iwork. */
void sgesdd_(const char *, const la_int *, const la_int *, void *,
             const la_int *, void *, void *, const la_int *, void *,
             const la_int *, void *, const la_int *, la_int *, la_int *,
             la_len);
void dgesdd_(const char *, const la_int *, const la_int *, void *,
             const la_int *, void *, void *, const la_int *, void *,
             const la_int *, void *, const la_int *, la_int *, la_int *,
             la_len);
void cgesdd_(const char *, const la_int *, const la_int *, void *,
             const la_int *, void *, void *, const la_int *, void *,
             const la_int *, void *, const la_int *, void *, la_int *, la_int *,
             la_len);
void zgesdd_(const char *, const la_int *, const la_int *, void *,
             const la_int *, void *, void *, const la_int *, void *,
             const la_int *, void *, const la_int *, void *, la_int *, la_int *,
             la_len);

/* SVD, QR iteration: real gesvd(jobu, jobvt, m, n, a, lda, s, u, ldu, vt,
 * ldvt, work, lwork, info); complex adds rwork before info. */
void sgesvd_(const char *, const char *, const la_int *, const la_int *, void *,
             const la_int *, void *, void *, const la_int *, void *,
             const la_int *, void *, const la_int *, la_int *, la_len, la_len);
void dgesvd_(const char *, const char *, const la_int *, const la_int *, void *,
             const la_int *, void *, void *, const la_int *, void *,
             const la_int *, void *, const la_int *, la_int *, la_len, la_len);
void cgesvd_(const char *, const char *, const la_int *, const la_int *, void *,
             const la_int *, void *, void *, const la_int *, void *,
             const la_int *, void *, const la_int *, void *, la_int *, la_len,
             la_len);
void zgesvd_(const char *, const char *, const la_int *, const la_int *, void *,
             const la_int *, void *, void *, const la_int *, void *,
             const la_int *, void *, const la_int *, void *, la_int *, la_len,
             la_len);

#undef LA_DECL4

#endif
