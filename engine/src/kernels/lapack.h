/* SPDX-License-Identifier: Apache-2.0 */
/* JAX's CPU LAPACK/BLAS custom calls (`lapack_spotrf_ffi` ...): the table
 * the custom_call dispatch looks targets up in, and what each routine
 * family (lapack_factor.c, lapack_eigen.c) gives the driver
 * (lapack_call.c).
 *
 * JAX's calling convention, which these follow: the operands and results
 * are batches of matrices (leading dimensions are the batch) laid out
 * column-major (operand_layouts [r-2, r-1, r-3, ..., 0]), vectors and the
 * per-matrix `info` i32 batch-major; attributes come in
 * mhlo.backend_config as ui8 characters ('L', 'V', ...) or i32.  A
 * failing factorization is reported in `info` exactly as LAPACK reports
 * it; JAX's own code around the call turns that into NaNs.
 *
 * The driver gives a family's run function one batch element at a time,
 * each matrix already column-major in scratch (the engine keeps tensors
 * row-major), and transposes the results back. */
#ifndef SHLO_LAPACK_H
#define SHLO_LAPACK_H

#include <stdbool.h>
#include <stdint.h>

#include "kernels/kernel.h"

/* The four LAPACK types: s, d, c, z. */
typedef enum { LK_S, LK_D, LK_C, LK_Z } la_kind;

enum { LA_MAX_IN = 4, LA_MAX_OUT = 6 };

/* How a slot (operand or result) looks per batch element. */
typedef enum {
  LA_MAT, /* rows x cols, column-major for LAPACK */
  LA_VEC, /* rows elements */
  LA_ONE, /* one element (info, sdim, alpha) */
} la_shape;

typedef struct la_slot {
  shlo_elem_type elem;
  la_shape shape;
  int64_t rows, cols;
  int64_t per;    /* elements per batch element */
  bool unbatched; /* one value for the whole batch (trsm's alpha) */
} la_slot;

typedef struct la_family la_family;

typedef struct la_params {
  const la_family *fam;
  la_kind kind;
  int nb;        /* batch rank */
  int64_t batch; /* matrices in the batch */
  int64_t bdims[SHLO_MAX_RANK];
  int n_in, n_out;
  la_slot in[LA_MAX_IN], out[LA_MAX_OUT];
  /* mhlo.backend_config, as characters LAPACK takes */
  char uplo, mode, side, trans, diag, jobvl, jobvr, sort;
  int32_t low, high; /* gehrd's ilo, ihi */
  bool has_alpha;    /* trsm with an alpha operand */
} la_params;

/* What a family's signature function works with while it checks an op. */
typedef struct la_sig {
  shlo_compiler *cc;
  const shlo_op *op;
  la_params *p;
  const char *target;
  const int64_t *bdims; /* = p->bdims */
} la_sig;

struct la_family {
  const char *names[4]; /* the target per kind, NULL where none */
  /* Read the attributes and operand shapes, declare every slot with
   * la_want_in / la_want_out; a wrong type fails with a message naming
   * the target. */
  shlo_status (*sig)(la_sig *g);
  /* One batch element: in[k] / out[k] point at column-major scratch
   * (inputs may be changed, outputs start zeroed).  0, or -1 when out of
   * memory for LAPACK's workspace. */
  int (*run)(const la_params *p, void *const *in, void *const *out);
};

/* ---- for the signature functions (lapack_call.c) ---- */

/* Element types of the kind: the matrix element, its real part, the
 * complex type with its precision. */
shlo_elem_type shlo__la_elem(la_kind k);
shlo_elem_type shlo__la_real(la_kind k);
shlo_elem_type shlo__la_complex(la_kind k);
static inline bool la_is_complex(la_kind k) { return k == LK_C || k == LK_Z; }

/* Dimension i of operand k past the batch dimensions; -1 if it has none
 * there (a failure follows in la_want_in). */
int64_t shlo__la_dim(la_sig *g, int k, int i);
/* Operand k must be a tensor of elem, shaped batch x (rows x cols | rows |
 * nothing) as shape says. */
shlo_status shlo__la_want_in(la_sig *g, int k, shlo_elem_type elem,
                             la_shape shape, int64_t rows, int64_t cols);
/* Operand k must be a rank-0 tensor of elem, shared by the batch. */
shlo_status shlo__la_want_scalar_in(la_sig *g, int k, shlo_elem_type elem);
shlo_status shlo__la_want_out(la_sig *g, int k, shlo_elem_type elem,
                              la_shape shape, int64_t rows, int64_t cols);
/* The op must have n_in operands and n_out results. */
shlo_status shlo__la_want_counts(la_sig *g, int n_in, int n_out);
/* A ui8 character attribute of mhlo.backend_config (dflt if absent); fails
 * unless it is one of `allowed`. */
shlo_status shlo__la_char_attr(la_sig *g, const char *name, char dflt,
                               const char *allowed, char *out);
shlo_status shlo__la_int_attr(la_sig *g, const char *name, int32_t dflt,
                              int32_t *out);
shlo_status shlo__la_fail(la_sig *g, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* LAPACK's workspace answer (work[0] of a query, real part) as a count
 * to allocate, at least `least`. */
int shlo__la_work_count(la_kind k, const void *answer, int least);
/* Bytes of one element of the kind / of its real part. */
size_t shlo__la_size(la_kind k);
size_t shlo__la_real_size(la_kind k);

/* ---- OpenBLAS threads inside one call (lapack_threads.c) ---- */

/* How many OpenBLAS threads each matrix of p's batch gets when the batch
 * runs one matrix after another rather than over the engine's pool of
 * pool_threads, one OpenBLAS thread each: more than one only for fewer
 * large matrices than the pool has threads, of the families whose time is
 * in BLAS-3, and no more than the CPUs free at the moment. */
int shlo__la_threads_for(const la_params *p, int pool_threads);
/* The CPUs a caller can use, from the text of /proc/loadavg: online CPUs
 * less the runnable threads other than the caller; -1 if unreadable. */
int shlo__la_idle_cpus(const char *loadavg_text);
/* The threads a call gets of pool_threads with free_cpus CPUs free (-1:
 * not known, all of them): at least one, at most both. */
int shlo__la_threads_within(int pool_threads, int free_cpus);
/* Let OpenBLAS use `threads` threads until shlo__la_threads_lower; false
 * (nothing changed, nothing to lower) when another call holds them. */
bool shlo__la_threads_raise(int threads);
void shlo__la_threads_lower(void);

/* ---- the families ---- */

extern const la_family shlo__la_potrf, shlo__la_getrf, shlo__la_geqrf,
    shlo__la_orgqr, shlo__la_geqp3, shlo__la_trsm, shlo__la_gtsv;
extern const la_family shlo__la_syevd, shlo__la_geev, shlo__la_gees,
    shlo__la_gehrd, shlo__la_sytrd, shlo__la_gesdd, shlo__la_gesvd;

/* The custom_call dispatch: nonzero when target is one of JAX's LAPACK
 * calls, which then compiles op into step (or fails with a message). */
bool shlo__lapack_target(const char *target);
shlo_status shlo__compile_lapack(shlo_compiler *cc, const shlo_op *op,
                                 shlo_step *step, const char *target);

#endif
