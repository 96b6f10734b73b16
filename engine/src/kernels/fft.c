/* SPDX-License-Identifier: Apache-2.0 */
/* stablehlo.fft: FFT, IFFT, RFFT and IRFFT over the innermost 1-3
 * dimensions, for any lengths.
 *
 * Everything is computed in complex<f64> and rounded once on store.  Each
 * transformed axis has a plan built at compile time: an iterative radix-2
 * transform for powers of two, and Bluestein's chirp-z algorithm (a
 * power-of-two convolution of length >= 2n - 1) for any other length, so
 * every length costs O(n log n).  Inverse transforms use
 * ifft(x) = conj(fft(conj(x))) / n.  RFFT is the complex FFT of the real
 * input truncated to n/2 + 1 on the last axis; IRFFT inverts the outer
 * axes in complex, then extends each last-axis line by Hermitian symmetry
 * to length n, inverts it and keeps the real part (so the imaginary parts of
 * the zero and Nyquist bins are ignored, as XLA does). */
#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/value.h"
#include "core/alloc.h"
#include "kernels/linalg_int.h"
#include "kernels/kernel.h"
#include "compile/plan.h"

typedef double complex cplx;

enum { FFT_FWD, FFT_INV, FFT_R2C, FFT_C2R };

/* A forward transform of one length. */
typedef struct fft_plan {
  int64_t n;    /* transform length */
  int64_t m;    /* power-of-two work length (n, or Bluestein's) */
  cplx *tw;     /* m/2 twiddles exp(-2 pi i j / m) */
  cplx *chirp;  /* Bluestein: n values exp(-pi i k^2 / n); NULL if pow2 */
  cplx *bhat;   /* Bluestein: FFT of the conjugate chirp, length m */
} fft_plan;

typedef struct fft_params {
  int kind;
  shlo_elem_type it, ot;
  int rank, nl; /* rank, number of transformed (innermost) axes */
  int64_t in_dims[SHLO_MAX_RANK], out_dims[SHLO_MAX_RANK];
  int64_t len[3]; /* fft_length */
  fft_plan plan[3];
} fft_params;

static bool is_pow2(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

/* In-place radix-2 forward FFT of length m (a power of two). */
static void fft_pow2(cplx *x, int64_t m, const cplx *tw) {
  for (int64_t i = 1, j = 0; i < m; i++) {
    int64_t bit = m >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) {
      cplx t = x[i];
      x[i] = x[j];
      x[j] = t;
    }
  }
  for (int64_t len = 2; len <= m; len <<= 1) {
    int64_t half = len >> 1, step = m / len;
    for (int64_t i = 0; i < m; i += len)
      for (int64_t k = 0; k < half; k++) {
        cplx w = tw[k * step];
        cplx u = x[i + k], v = x[i + k + half] * w;
        x[i + k] = u + v;
        x[i + k + half] = u - v;
      }
  }
}

/* Forward DFT of x (length p->n) in place; work holds p->m values. */
static void fft_run(const fft_plan *p, cplx *x, cplx *work) {
  int64_t n = p->n, m = p->m;
  if (n <= 1) return;
  if (!p->chirp) {
    fft_pow2(x, n, p->tw);
    return;
  }
  for (int64_t k = 0; k < n; k++) work[k] = x[k] * p->chirp[k];
  for (int64_t k = n; k < m; k++) work[k] = 0;
  fft_pow2(work, m, p->tw);
  for (int64_t k = 0; k < m; k++) work[k] = conj(work[k] * p->bhat[k]);
  fft_pow2(work, m, p->tw); /* conj(fft(conj(y))) = m * ifft(y) */
  double inv = 1.0 / (double)m;
  for (int64_t k = 0; k < n; k++) x[k] = conj(work[k]) * inv * p->chirp[k];
}

static void fft_run_inverse(const fft_plan *p, cplx *x, cplx *work) {
  int64_t n = p->n;
  for (int64_t k = 0; k < n; k++) x[k] = conj(x[k]);
  fft_run(p, x, work);
  double inv = n ? 1.0 / (double)n : 0;
  for (int64_t k = 0; k < n; k++) x[k] = conj(x[k]) * inv;
}

static void plan_free(fft_plan *p) {
  shlo__free(p->tw);
  shlo__free(p->chirp);
  shlo__free(p->bhat);
}

static void params_free(void *v) {
  fft_params *p = v;
  if (!p) return;
  for (int i = 0; i < 3; i++) plan_free(&p->plan[i]);
  shlo__free(p);
}

static bool plan_init(fft_plan *p, int64_t n) {
  memset(p, 0, sizeof *p);
  p->n = n;
  if (n <= 1) {
    p->m = 1;
    return true;
  }
  int64_t m = 1;
  if (is_pow2(n))
    m = n;
  else
    while (m < 2 * n - 1) m <<= 1;
  p->m = m;
  p->tw = shlo__malloc((size_t)(m / 2 + 1) * sizeof *p->tw);
  if (!p->tw) return false;
  for (int64_t j = 0; j < m / 2; j++)
    p->tw[j] = cexp(-2.0 * M_PI * I * (double)j / (double)m);
  if (m == n) return true;
  p->chirp = shlo__malloc((size_t)n * sizeof *p->chirp);
  p->bhat = shlo__malloc((size_t)m * sizeof *p->bhat);
  if (!p->chirp || !p->bhat) return false;
  for (int64_t k = 0; k < n; k++) {
    /* k^2 mod 2n keeps the angle small and exact */
    int64_t q = (int64_t)(((unsigned __int128)k * (unsigned __int128)k) %
                          (unsigned __int128)(2 * n));
    p->chirp[k] = cexp(-M_PI * I * (double)q / (double)n);
  }
  for (int64_t k = 0; k < m; k++) p->bhat[k] = 0;
  p->bhat[0] = conj(p->chirp[0]);
  for (int64_t k = 1; k < n; k++)
    p->bhat[k] = p->bhat[m - k] = conj(p->chirp[k]);
  fft_pow2(p->bhat, m, p->tw);
  return true;
}

/* Transform every line along axis `ax` of a row-major complex buffer of
 * shape dims[0..rank). */
static void transform_axis(const fft_plan *p, bool inverse, cplx *buf,
                           int rank, const int64_t *dims, int ax, cplx *line,
                           cplx *work) {
  int64_t n = dims[ax], inner = 1, outer = 1;
  for (int i = ax + 1; i < rank; i++) inner *= dims[i];
  for (int i = 0; i < ax; i++) outer *= dims[i];
  for (int64_t o = 0; o < outer; o++)
    for (int64_t in = 0; in < inner; in++) {
      cplx *base = buf + o * n * inner + in;
      cplx *x = inner == 1 ? base : line;
      if (inner != 1)
        for (int64_t k = 0; k < n; k++) line[k] = base[k * inner];
      if (inverse)
        fft_run_inverse(p, x, work);
      else
        fft_run(p, x, work);
      if (inner != 1)
        for (int64_t k = 0; k < n; k++) base[k * inner] = line[k];
    }
}

/* How a transform run ended. */
typedef enum { FFT_DONE, FFT_STOPPED, FFT_NOMEM } fft_end;

/* Scratch of one k_fft run: the operand as complex (buf, in_total values),
 * one line of the longest axis, and the plans' work space. */
typedef struct fft_scratch {
  cplx *buf, *line, *work;
  int64_t in_total;
} fft_scratch;

/* FFT, IFFT and RFFT: transform the innermost nl axes of buf in place and
 * store into v (RFFT keeps the first n/2 + 1 values of each last-axis
 * line). */
static fft_end fft_complex(const fft_params *p, fft_scratch *w,
                           shlo_value *v, shlo_exec *ex) {
  int r = p->rank, nl = p->nl;
  size_t oes = shlo_elem_size(p->ot);
  for (int i = 0; i < nl; i++) {
    if (shlo__exec_should_stop(ex)) return FFT_STOPPED;
    transform_axis(&p->plan[i], p->kind == FFT_INV, w->buf, r, p->in_dims,
                   r - nl + i, w->line, w->work);
  }
  if (p->kind != FFT_R2C) {
    shlo__la_store(LA_C128, p->ot, v->data, (int64_t)oes, w->buf,
                   w->in_total);
  } else {
    int64_t n = p->in_dims[r - 1], h = p->out_dims[r - 1];
    for (int64_t l = 0; l < w->in_total / n; l++)
      shlo__la_store(LA_C128, p->ot, (char *)v->data + l * h * (int64_t)oes,
                     (int64_t)oes, w->buf + l * n, h);
  }
  return FFT_DONE;
}

/* IRFFT: inverse-transform all but the last axis, then each last-axis line
 * of h values, extended to n by Hermitian symmetry, to n reals. */
static fft_end fft_c2r(const fft_params *p, fft_scratch *w, shlo_value *v,
                       shlo_exec *ex) {
  int r = p->rank, nl = p->nl;
  size_t oes = shlo_elem_size(p->ot);
  cplx *line = w->line;
  for (int i = 0; i < nl - 1; i++) {
    if (shlo__exec_should_stop(ex)) return FFT_STOPPED;
    transform_axis(&p->plan[i], true, w->buf, r, p->in_dims, r - nl + i,
                   line, w->work);
  }
  const fft_plan *pl = &p->plan[nl - 1];
  int64_t n = pl->n, h = p->in_dims[r - 1];
  double *real = shlo__malloc((size_t)n * sizeof *real);
  if (!real) return FFT_NOMEM;
  for (int64_t l = 0; l < w->in_total / h; l++) {
    const cplx *src = w->buf + l * h;
    for (int64_t k = 0; k < n; k++) {
      if (k < h)
        line[k] = src[k];
      else
        line[k] = conj(src[n - k]);
    }
    fft_run_inverse(pl, line, w->work);
    for (int64_t k = 0; k < n; k++) real[k] = creal(line[k]);
    shlo__la_store(LA_F64, p->ot, (char *)v->data + l * n * (int64_t)oes,
                   (int64_t)oes, real, n);
  }
  shlo__free(real);
  return FFT_DONE;
}

static shlo_status k_fft(const shlo_step *s, shlo_value *const *in,
                         shlo_value **out, shlo_exec *ex) {
  const fft_params *p = s->params;
  shlo_value *v = shlo_tensor_new(p->ot, p->rank, p->out_dims);
  if (!v)
    return shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory for the result");
  fft_scratch w = {NULL, NULL, NULL, shlo__la_prod(p->in_dims, p->rank)};
  if (w.in_total == 0 || v->numel == 0) {
    out[0] = v;
    return SHLO_OK;
  }
  int64_t maxm = 1, maxn = 1;
  for (int i = 0; i < p->nl; i++) {
    if (p->plan[i].m > maxm) maxm = p->plan[i].m;
    if (p->plan[i].n > maxn) maxn = p->plan[i].n;
  }
  w.buf = shlo__malloc((size_t)w.in_total * sizeof *w.buf);
  w.line = shlo__malloc((size_t)maxn * sizeof *w.line);
  w.work = shlo__malloc((size_t)maxm * sizeof *w.work);
  fft_end end = FFT_NOMEM;
  if (w.buf && w.line && w.work) {
    shlo__la_load(LA_C128, p->it, w.buf, in[0]->data, w.in_total,
                  (int64_t)shlo_elem_size(p->it));
    end = p->kind == FFT_C2R ? fft_c2r(p, &w, v, ex)
                             : fft_complex(p, &w, v, ex);
  }
  shlo__free(w.buf), shlo__free(w.line), shlo__free(w.work);
  if (end == FFT_DONE) {
    out[0] = v;
    return SHLO_OK;
  }
  shlo_value_unref(v);
  if (end == FFT_STOPPED)
    return shlo__exec_fail(ex, s, SHLO_ECANCELED, "stopped");
  return shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory for scratch");
}

/* fft_type as FFT_FWD, FFT_INV, FFT_R2C or FFT_C2R (*kind). */
static shlo_status fft_kind(shlo_compiler *cc, const shlo_op *op,
                            const char *ty, int *kind) {
  if (!ty)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY, "missing fft_type");
  else if (!strcmp(ty, "FFT"))
    *kind = FFT_FWD;
  else if (!strcmp(ty, "IFFT"))
    *kind = FFT_INV;
  else if (!strcmp(ty, "RFFT"))
    *kind = FFT_R2C;
  else if (!strcmp(ty, "IRFFT"))
    *kind = FFT_C2R;
  else
    return shlo__cc_fail(cc, op, SHLO_EVERIFY, "unknown fft_type %s", ty);
  return SHLO_OK;
}

/* (C2) whether operand and result element types fit the kind. */
static bool fft_elems_ok(int kind, shlo_elem_type in, shlo_elem_type out) {
  switch (kind) {
  case FFT_FWD:
  case FFT_INV:
    return shlo_elem_is_complex(in) && out == in;
  case FFT_R2C:
    return (in == SHLO_F32 && out == SHLO_C64) ||
           (in == SHLO_F64 && out == SHLO_C128);
  default:
    return (in == SHLO_C64 && out == SHLO_F32) ||
           (in == SHLO_C128 && out == SHLO_F64);
  }
}

/* (C3-C4) the innermost nl dims of operand and result against len. */
static shlo_status fft_check_shapes(shlo_compiler *cc, const shlo_op *op,
                                    int kind, const shlo_type *it,
                                    const shlo_type *ot, const int64_t *len,
                                    int nl) {
  int r = it->rank;
  int64_t want_in[SHLO_MAX_RANK], want_out[SHLO_MAX_RANK];
  memcpy(want_in, it->dims, sizeof want_in);
  memcpy(want_out, it->dims, sizeof want_out);
  for (int i = 0; i < nl; i++) {
    want_in[r - nl + i] = len[i];
    want_out[r - nl + i] = len[i];
  }
  if (kind == FFT_R2C) want_out[r - 1] = len[nl - 1] == 0 ? 0 : len[nl - 1] / 2 + 1;
  if (kind == FFT_C2R) want_in[r - 1] = len[nl - 1] == 0 ? 0 : len[nl - 1] / 2 + 1;
  for (int i = 0; i < r; i++)
    if (it->dims[i] != want_in[i] || ot->dims[i] != want_out[i])
      return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                          "(C3-C4) operand/result shapes do not match "
                          "fft_length at dimension %d",
                          i);
  return SHLO_OK;
}

/* The step's parameters, with a plan per transformed dimension. */
static shlo_status fft_params_init(shlo_compiler *cc, const shlo_op *op,
                                   shlo_step *step, int kind,
                                   const shlo_type *it, const shlo_type *ot,
                                   const int64_t *len, int nl) {
  fft_params *p = shlo__calloc(1, sizeof *p);
  if (!p) return shlo__cc_fail(cc, op, SHLO_ENOMEM, "out of memory");
  if (step->params && step->free_params) step->free_params(step->params);
  step->params = p;
  step->free_params = params_free;
  p->kind = kind;
  p->it = it->elem;
  p->ot = ot->elem;
  p->rank = it->rank;
  p->nl = nl;
  memcpy(p->in_dims, it->dims, sizeof p->in_dims);
  memcpy(p->out_dims, ot->dims, sizeof p->out_dims);
  for (int i = 0; i < nl; i++) {
    p->len[i] = len[i];
    if (!plan_init(&p->plan[i], len[i]))
      return shlo__cc_fail(cc, op, SHLO_ENOMEM, "out of memory");
  }
  return SHLO_OK;
}

/* stablehlo.fft: (C1) 1 <= size(fft_length) <= 3; (C2) operand/result
 * element types per fft_type (FFT/IFFT complex -> same complex; RFFT
 * f32/f64 -> complex of it; IRFFT complex -> its part type); (C3)
 * the innermost dims of the operand equal fft_length (for IRFFT the last
 * one is fft_length[-1] / 2 + 1); (C4) the result has the operand's shape
 * except the last dim for RFFT (n / 2 + 1) and IRFFT (n). */
shlo_status shlo__compile_fft(shlo_compiler *cc, const shlo_op *op,
                             shlo_step *step) {
  if (op->n_operands != 1 || op->n_results != 1)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY, "expects 1 operand, 1 result");
  const shlo_type *it = shlo__cc_operand_type(cc, op, 0);
  const shlo_type *ot = shlo__cc_result_type(cc, op, 0);
  for (int i = 0; i < 2; i++) {
    const shlo_type *t = i ? ot : it;
    if (!t || t->kind != SHLO_TYPE_TENSOR)
      return shlo__cc_fail(cc, op, SHLO_EVERIFY, "operand/result not tensors");
    if (!shlo_type_is_static(t) || t->quant)
      return shlo__cc_fail(cc, op, SHLO_EUNSUPPORTED,
                          "dynamic or quantized tensors are not supported");
  }
  const char *ty = shlo_attr_get_str(shlo_op_attr(op, "fft_type"));
  int kind = FFT_FWD;
  shlo_status st = fft_kind(cc, op, ty, &kind);
  if (st) return st;
  int64_t len[4];
  int nl = shlo_attr_i64s(shlo_op_attr(op, "fft_length"), len, 4);
  if (nl < 1 || nl > 3)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "(C1) fft_length must have 1 to 3 values");
  if (it->rank < nl || ot->rank != it->rank)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "(C3) operand rank is below size(fft_length) or "
                        "differs from the result's");
  for (int i = 0; i < nl; i++)
    if (len[i] < 0)
      return shlo__cc_fail(cc, op, SHLO_EVERIFY, "negative fft_length");
  if (!fft_elems_ok(kind, it->elem, ot->elem))
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "(C2) element types %s -> %s do not fit fft_type %s",
                        shlo_elem_name(it->elem), shlo_elem_name(ot->elem), ty);
  if ((st = fft_check_shapes(cc, op, kind, it, ot, len, nl)) ||
      (st = fft_params_init(cc, op, step, kind, it, ot, len, nl)))
    return st;
  step->fn = k_fft;
  return SHLO_OK;
}
