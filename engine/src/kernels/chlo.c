/* SPDX-License-Identifier: Apache-2.0 */
/* CHLO ops as JAX exports them: the elementwise math functions (acos ...
 * zeta, mulhi, the is_*inf predicates), top_k, ragged_dot and scan.
 *
 * Elementwise functions are evaluated in double and rounded once to the
 * result type (f32, f16, bf16 and the narrow floats alike; f64 directly),
 * so narrow results are correctly rounded whenever the double result is.
 * The compile function picks one loop per (function, storage flavour);
 * the loop calls the chosen double -> double function per element.
 * Special functions without a libm counterpart are implemented below:
 * digamma (recurrence + asymptotic series, reflection for x < 0, NaN at
 * non-positive integers), erf_inv (Giles' approximation refined by Newton
 * steps on erf/erfc), the regularized incomplete gamma functions (series
 * or Lentz continued fraction), the Hurwitz zeta function (Euler-Maclaurin,
 * as Cephes), polygamma (digamma for n = 0, else (-1)^(n+1) n! zeta(n+1,
 * x); NaN for non-integer n) and bessel_i1e (power series below 40, the
 * asymptotic expansion above).  Complex operands of acos ... tanh use C99
 * complex functions in double.  Binary functions take operands of the
 * result's shape, or rank-0 operands, which broadcast. */
#include "core/alloc.h"
#include "core/cmplx.h"
#include "core/value.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/floatfmt.h"
#include "core/storage.h"
#include "kernels/kernel.h"
#include "kernels/custom_targets.h"

/* ---- special functions (double) ---- */

static double sf_digamma(double x) {
  if (isnan(x) || x == -INFINITY) return NAN;
  if (x == INFINITY) return INFINITY;
  double r = 0;
  if (x <= 0) {
    if (x == floor(x)) return NAN;
    /* psi(x) = psi(1 - x) - pi / tan(pi x), tan on the reduced argument */
    double fr = x - floor(x);
    r = -M_PI / tan(M_PI * fr);
    x = 1 - x;
  }
  while (x < 6) {
    r -= 1 / x;
    x += 1;
  }
  double z = 1 / (x * x);
  double s = z * (1.0 / 12 - z * (1.0 / 120 - z * (1.0 / 252 - z * (1.0 / 240 -
             z * (1.0 / 132 - z * (691.0 / 32760 - z * (1.0 / 12)))))));
  return r + log(x) - 0.5 / x - s;
}

static double sf_lgamma(double x) {
  int sg;
  return lgamma_r(x, &sg);
}

static double sf_erf_inv(double y) {
  if (isnan(y) || y < -1 || y > 1) return NAN;
  if (y == 1) return INFINITY;
  if (y == -1) return -INFINITY;
  if (y == 0) return y;
  double a = fabs(y);
  double w = -log((1 - a) * (1 + a)), p;
  if (w < 5) {
    w -= 2.5;
    p = 2.81022636e-08;
    p = 3.43273939e-07 + p * w;
    p = -3.5233877e-06 + p * w;
    p = -4.39150654e-06 + p * w;
    p = 0.00021858087 + p * w;
    p = -0.00125372503 + p * w;
    p = -0.00417768164 + p * w;
    p = 0.246640727 + p * w;
    p = 1.50140941 + p * w;
  } else {
    w = sqrt(w) - 3;
    p = -0.000200214257;
    p = 0.000100950558 + p * w;
    p = 0.00134934322 + p * w;
    p = -0.00367342844 + p * w;
    p = 0.00573950773 + p * w;
    p = -0.0076224613 + p * w;
    p = 0.00943887047 + p * w;
    p = 1.00167406 + p * w;
    p = 2.83297682 + p * w;
  }
  double r = p * a;
  for (int it = 0; it < 4; it++) {
    double err = a > 0.5 ? (1 - a) - erfc(r) : erf(r) - a;
    double dr = err / (2 / sqrt(M_PI) * exp(-r * r));
    if (!isfinite(dr)) break;
    r -= dr;
  }
  return y < 0 ? -r : r;
}

/* Regularized lower (upper = false) or upper incomplete gamma. */
static double sf_igamma(double a, double x, bool upper) {
  if (isnan(a) || isnan(x) || x < 0 || a <= 0) return NAN;
  if (x == 0) return upper ? 1 : 0;
  if (isinf(x)) return upper ? 0 : 1;
  if (isinf(a)) return upper ? 1 : 0;
  double lg = sf_lgamma(a);
  double lpre = -x + a * log(x) - lg;
  const double eps = 1e-17;
  if (x < a + 1) {
    double ap = a, del = 1 / a, sum = del;
    for (int n = 0; n < 100000; n++) {
      ap += 1;
      del *= x / ap;
      sum += del;
      if (fabs(del) < fabs(sum) * eps) break;
    }
    double pv = sum * exp(lpre);
    if (pv > 1) pv = 1;
    return upper ? 1 - pv : pv;
  }
  const double tiny = 1e-300;
  double b = x + 1 - a, c = 1 / tiny, d = 1 / b, h = d;
  for (int i = 1; i < 100000; i++) {
    double an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (fabs(d) < tiny) d = tiny;
    c = b + an / c;
    if (fabs(c) < tiny) c = tiny;
    d = 1 / d;
    double del = d * c;
    h *= del;
    if (fabs(del - 1) < eps) break;
  }
  double q = exp(lpre) * h;
  if (q > 1) q = 1;
  return upper ? q : 1 - q;
}

/* Hurwitz zeta(x, q) = sum over n >= 0 of (q + n)^-x (Cephes' method). */
static double sf_zeta(double x, double q) {
  /* (2k)! / B_2k for k = 1..12 */
  static const double A[12] = {
      12.0, -720.0, 30240.0, -1209600.0, 47900160.0,
      -1.8924375803183791606e9, 7.47242496e10, -2.950130727918164224e12,
      1.1646782814350067249e14, -4.5979787224074726105e15,
      1.8152105401943546773e17, -7.1661652561756670113e18};
  const double eps = 1.1102230246251565e-16;
  if (isnan(x) || isnan(q)) return NAN;
  if (x == 1) return INFINITY;
  if (x < 1) return NAN;
  if (q <= 0) {
    if (q == floor(q)) return INFINITY;
    if (x != floor(x)) return NAN;
  }
  double s = pow(q, -x), a = q, b = 0;
  int i = 0;
  while (i < 9 || a <= 9.0) {
    i++;
    a += 1;
    b = pow(a, -x);
    s += b;
    if (fabs(b / s) < eps) return s;
  }
  double w = a;
  s += b * w / (x - 1);
  s -= 0.5 * b;
  double fa = 1, k = 0;
  for (i = 0; i < 12; i++) {
    fa *= x + k;
    b /= w;
    double t = fa * b / A[i];
    s += t;
    if (fabs(t / s) < eps) break;
    k += 1;
    fa *= x + k;
    b /= w;
    k += 1;
  }
  return s;
}

static double sf_polygamma(double n, double x) {
  if (isnan(n) || isnan(x) || n != floor(n) || n < 0) return NAN;
  if (n == 0) return sf_digamma(x);
  double sign = fmod(n, 2) == 0 ? -1 : 1; /* (-1)^(n+1) */
  return sign * exp(lgamma(n + 1)) * sf_zeta(n + 1, x);
}

/* exp(-|x|) * I1(x) */
static double sf_bessel_i1e(double x) {
  if (isnan(x)) return x;
  double z = fabs(x), r;
  if (z == 0) return x;
  if (isinf(z)) {
    r = 0;
  } else if (z <= 40) {
    double t = 0.5 * z * exp(-z), s = t, q = 0.25 * z * z;
    for (int k = 0; k < 500; k++) {
      t *= q / ((k + 1.0) * (k + 2.0));
      s += t;
      if (t < s * 1e-17) break;
    }
    r = s;
  } else {
    double t = 1, s = 1;
    for (int k = 1; k < 200; k++) {
      double m = (double)(2 * k - 1);
      double nt = t * -(4 - m * m) / (8.0 * k * z);
      if (fabs(nt) > fabs(t)) break;
      t = nt;
      s += t;
      if (fabs(t) < 1e-17 * fabs(s)) break;
    }
    r = s / sqrt(2 * M_PI * z);
  }
  return x < 0 ? -r : r;
}

static double sf_acosh(double x) { return acosh(x); }
static double sf_acos(double x) { return acos(x); }
static double sf_asin(double x) { return asin(x); }
static double sf_asinh(double x) { return asinh(x); }
static double sf_atan(double x) { return atan(x); }
static double sf_atanh(double x) { return atanh(x); }
static double sf_cosh(double x) { return cosh(x); }
static double sf_sinh(double x) { return sinh(x); }
static double sf_tan(double x) { return tan(x); }
static double sf_erf(double x) { return erf(x); }
static double sf_erfc(double x) { return erfc(x); }
static double sf_ident(double x) { return x; }
/* square: x * x; of doubles from a narrower type it is exact before the
 * one rounding to the result type. */
static double sf_square(double x) { return x * x; }
static double sf_igamma_p(double a, double x) { return sf_igamma(a, x, false); }
static double sf_igamma_q(double a, double x) { return sf_igamma(a, x, true); }

/* ---- elementwise kernels ---- */

typedef double (*sf_un)(double);
typedef double (*sf_bin)(double, double);
typedef double complex (*sf_cun)(double complex);

typedef struct cew_params cew_params;
typedef void (*cew_loop)(void *d, const void *a, const void *b, int64_t n,
                         const cew_params *p);

struct cew_params {
  shlo_elem_type et, out_elem;
  size_t esz;
  int bits;
  int rank;
  int64_t dims[SHLO_MAX_RANK];
  int64_t numel;
  int n_in;
  int64_t in_numel[2];
  int64_t stride[2];    /* 1, or 0 for a broadcast rank-0 operand */
  sf_un un;
  sf_bin bin;
  sf_cun cun;
  int pred;             /* is_inf: 0 any, 1 positive, -1 negative */
  cew_loop loop;
};

/* Float flavours: load as double, store rounded once. */
#define CF_LD_f32(a, i) ((double)((const float *)(a))[i])
#define CF_LD_f64(a, i) (((const double *)(a))[i])
#define CF_LD_f16(a, i) shlo__f16_to_double(((const uint16_t *)(a))[i])
#define CF_LD_bf16(a, i) shlo__bf16_to_double(((const uint16_t *)(a))[i])
#define CF_LD_nar(a, i) shlo__float_load(p->et, (const char *)(a) + (size_t)(i) * p->esz)
#define CF_ST_f32(d, i, v) (((float *)(d))[i] = (float)(v))
#define CF_ST_f64(d, i, v) (((double *)(d))[i] = (v))
#define CF_ST_f16(d, i, v) (((uint16_t *)(d))[i] = shlo__f16_from_double(v))
#define CF_ST_bf16(d, i, v) (((uint16_t *)(d))[i] = shlo__bf16_from_double(v))
#define CF_ST_nar(d, i, v) shlo__float_store(p->et, (v), (char *)(d) + (size_t)(i) * p->esz)
#define CF_FLAVOURS(X) X(f32) X(f64) X(f16) X(bf16) X(nar)
enum { CF_f32, CF_f64, CF_f16, CF_bf16, CF_nar };

#define DEF_CF(FN)                                                            \
  static void un_##FN(void *d, const void *a, const void *b, int64_t n,       \
                      const cew_params *p) {                                  \
    (void)b;                                                                  \
    for (int64_t i = 0; i < n; i++) CF_ST_##FN(d, i, p->un(CF_LD_##FN(a, i)));\
  }                                                                           \
  static void bin_##FN(void *d, const void *a, const void *b, int64_t n,      \
                       const cew_params *p) {                                 \
    const int64_t sa = p->stride[0], sb = p->stride[1];                       \
    for (int64_t i = 0; i < n; i++)                                           \
      CF_ST_##FN(d, i, p->bin(CF_LD_##FN(a, i * sa), CF_LD_##FN(b, i * sb))); \
  }                                                                           \
  static void pred_##FN(void *d, const void *a, const void *b, int64_t n,     \
                        const cew_params *p) {                                \
    (void)b;                                                                  \
    uint8_t *o = d;                                                           \
    for (int64_t i = 0; i < n; i++) {                                         \
      double v = CF_LD_##FN(a, i);                                            \
      o[i] = isinf(v) && (p->pred == 0 || (p->pred > 0) == (v > 0));          \
    }                                                                         \
  }
CF_FLAVOURS(DEF_CF)
#define CF_CELL_UN(FN) un_##FN,
#define CF_CELL_BIN(FN) bin_##FN,
#define CF_CELL_PRED(FN) pred_##FN,
static const cew_loop cf_un_tab[] = {CF_FLAVOURS(CF_CELL_UN)};
static const cew_loop cf_bin_tab[] = {CF_FLAVOURS(CF_CELL_BIN)};
static const cew_loop cf_pred_tab[] = {CF_FLAVOURS(CF_CELL_PRED)};

static int cf_flavour(shlo_elem_type t) {
  switch (t) {
  case SHLO_F32: return CF_f32;
  case SHLO_F64: return CF_f64;
  case SHLO_F16: return CF_f16;
  case SHLO_BF16: return CF_bf16;
  default: return shlo_elem_is_float(t) ? CF_nar : -1;
  }
}

/* next_after: f32/f64 through libm, other formats on their bit pattern
 * (sign-magnitude: one step away from or towards zero). */
static void nextafter_f32(void *d, const void *a, const void *b, int64_t n,
                          const cew_params *p) {
  const float *x = a, *y = b;
  for (int64_t i = 0; i < n; i++)
    ((float *)d)[i] = nextafterf(x[i * p->stride[0]], y[i * p->stride[1]]);
}
static void nextafter_f64(void *d, const void *a, const void *b, int64_t n,
                          const cew_params *p) {
  const double *x = a, *y = b;
  for (int64_t i = 0; i < n; i++)
    ((double *)d)[i] = nextafter(x[i * p->stride[0]], y[i * p->stride[1]]);
}
static void nextafter_bits(void *d, const void *a, const void *b, int64_t n,
                           const cew_params *p) {
  const size_t sz = p->esz;
  const uint32_t sign = 1u << (p->bits - 1);
  for (int64_t i = 0; i < n; i++) {
    const char *pa = (const char *)a + (size_t)(i * p->stride[0]) * sz;
    const char *pb = (const char *)b + (size_t)(i * p->stride[1]) * sz;
    char *pd = (char *)d + (size_t)i * sz;
    double x = shlo__float_load(p->et, pa), y = shlo__float_load(p->et, pb);
    if (isnan(x) || isnan(y)) {
      shlo__float_store(p->et, NAN, pd);
      continue;
    }
    if (x == y) {
      memcpy(pd, pb, sz);
      continue;
    }
    uint32_t bits = 0;
    memcpy(&bits, pa, sz);
    if (x == 0) {
      bits = (y < 0 ? sign : 0) | 1;
    } else if ((x < y) == (x > 0)) {
      bits += 1;
    } else {
      bits -= 1;
    }
    memcpy(pd, &bits, sz);
  }
}

/* Complex: C99 functions in double. */
#define DEF_CC(NAME, PT)                                                     \
  static void cun_##NAME(void *d, const void *a, const void *b, int64_t n,   \
                         const cew_params *p) {                              \
    (void)b;                                                                 \
    const PT *x = a;                                                         \
    PT *o = d;                                                               \
    for (int64_t i = 0; i < n; i++) {                                        \
      double complex z = CMPLX((double)x[2 * i], (double)x[2 * i + 1]);      \
      double complex r = p->cun(z);                                          \
      o[2 * i] = (PT)creal(r);                                               \
      o[2 * i + 1] = (PT)cimag(r);                                           \
    }                                                                        \
  }
DEF_CC(c64, float)
DEF_CC(c128, double)

static double complex sc_conj(double complex z) { return conj(z); }
/* CHLO's square of a complex number: ((re - im)(re + im), 2 re im), which
 * keeps re^2 - im^2 accurate where the two squares nearly cancel. */
static double complex sc_square(double complex z) {
  double re = creal(z), im = cimag(z);
  return CMPLX((re - im) * (re + im), 2 * re * im);
}

/* asin_acos_kernel(z) = w with asin(z) = atan2(x, Re w) + i sign(y) Im w
 * and acos(z) = atan2(Re w, x) - i sign(y) Im w (z = x + iy).  With
 * a = (|z + 1| + |z - 1|) / 2 (Hull et al.'s A), Re w = sqrt(a^2 - x^2)
 * and Im w = acosh(a) >= 0; a >= |x| always, so the square root is real.
 * (a - |x|)(a + |x|) avoids cancelling the two squares. */
static double complex sc_asin_acos_kernel(double complex z) {
  double x = fabs(creal(z)), y = cimag(z);
  double a = 0.5 * (hypot(x + 1, y) + hypot(x - 1, y));
  if (a < 1) a = 1; /* rounding on the real segment [-1, 1] */
  double re = sqrt(fmax(0.0, (a - x) * (a + x)));
  return CMPLX(re, acosh(a));
}

/* mulhi: the high half of the full-width product. */
#define DEF_MULHI(NAME, T, W)                                                \
  static void mulhi_##NAME(void *d, const void *a, const void *b, int64_t n, \
                           const cew_params *p) {                            \
    const T *x = a, *y = b;                                                  \
    T *o = d;                                                                \
    for (int64_t i = 0; i < n; i++)                                          \
      o[i] = (T)(((W)x[i * p->stride[0]] * (W)y[i * p->stride[1]]) >>        \
                 (8 * sizeof(T)));                                           \
  }
DEF_MULHI(s8, int8_t, int64_t)
DEF_MULHI(s16, int16_t, int64_t)
DEF_MULHI(s32, int32_t, int64_t)
DEF_MULHI(s64, int64_t, __int128)
DEF_MULHI(u8, uint8_t, uint64_t)
DEF_MULHI(u16, uint16_t, uint64_t)
DEF_MULHI(u32, uint32_t, uint64_t)
DEF_MULHI(u64, uint64_t, unsigned __int128)

/* Sub-byte integers (i2, i4, ui2, ui4 in one byte): shift by the width. */
static void mulhi_sub(void *d, const void *a, const void *b, int64_t n,
                      const cew_params *p) {
  const uint8_t *x = a, *y = b;
  uint8_t *o = d;
  bool sg = shlo_elem_class_of(p->et) == SHLO_CLASS_SINT;
  for (int64_t i = 0; i < n; i++) {
    int64_t u = sg ? (int8_t)x[i * p->stride[0]] : x[i * p->stride[0]];
    int64_t v = sg ? (int8_t)y[i * p->stride[1]] : y[i * p->stride[1]];
    o[i] = (uint8_t)shlo_int_wrap(p->et, (u * v) >> p->bits);
  }
}

static shlo_status k_cew(const shlo_step *s, shlo_value *const *in,
                         shlo_value **out, shlo_exec *ex) {
  const cew_params *p = s->params;
  for (int k = 0; k < p->n_in; k++)
    if (in[k]->kind != SHLO_TYPE_TENSOR || in[k]->numel != p->in_numel[k])
      return shlo__exec_fail(ex, s, SHLO_ERUNTIME,
                            "operand %d does not have the compiled shape", k);
  shlo_value *r = shlo_tensor_new(p->out_elem, p->rank, p->dims);
  if (!r) return shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory");
  p->loop(r->data, in[0]->data, p->n_in > 1 ? in[1]->data : NULL, p->numel, p);
  out[0] = r;
  return SHLO_OK;
}

/* Per CHLO op: its arity and the double (and complex) function of its
 * row's SHLO_CHLO column in the op table; arity 0 for ops without one. */
typedef struct {
  int arity;
  sf_un un;
  sf_bin bin;
  sf_cun cun;
} chlo_fn;

#define CHLO_FN_SHLO_CHLO(a, un, bin, cun) {a, un, bin, cun}
#define CHLO_FN_0 {0, NULL, NULL, NULL}
#define CHLO_ROW(e, name, c, v, fl, k, kw) [SHLO_OP_##e] = CHLO_FN_##k,
static const chlo_fn chlo_fns[SHLO_OP_COUNT] = {SHLO_OPS_CHLO(CHLO_ROW)};
#undef CHLO_ROW

static chlo_fn chlo_fn_of(int code) {
  chlo_fn none = {0, NULL, NULL, NULL};
  return code > 0 && code < SHLO_OP_COUNT ? chlo_fns[code] : none;
}

/* Integers of a byte or wider by their storage (core/storage.h); the
 * sub-byte ones through mulhi_sub; not i1. */
static cew_loop mulhi_loop(shlo_elem_type t) {
  static const cew_loop by_storage[SHLO__ST_INTS] = {
      [SHLO_ST_S8] = mulhi_s8,   [SHLO_ST_S16] = mulhi_s16,
      [SHLO_ST_S32] = mulhi_s32, [SHLO_ST_S64] = mulhi_s64,
      [SHLO_ST_U8] = mulhi_u8,   [SHLO_ST_U16] = mulhi_u16,
      [SHLO_ST_U32] = mulhi_u32, [SHLO_ST_U64] = mulhi_u64};
  if (!shlo_elem_is_int(t)) return NULL;
  return shlo_elem_bits(t) < 8 ? mulhi_sub : by_storage[shlo__int_storage(t)];
}

/* Each operand: a static tensor of element type et that walks with the
 * result (stride 1) or is a scalar broadcast (stride 0). */
static shlo_status cew_operands(shlo_compiler *cc, const shlo_op *op,
                                cew_params *p, shlo_elem_type et) {
  for (int k = 0; k < p->n_in; k++) {
    const shlo_type *t = shlo__cc_operand_type(cc, op, k);
    if (t->kind != SHLO_TYPE_TENSOR || !shlo_type_is_static(t) ||
        t->elem != et)
      return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                          "operands must be static tensors of one element "
                          "type");
    int64_t kn = shlo_type_numel(t);
    if (kn == p->numel && (t->rank == p->rank || kn == 1))
      p->stride[k] = 1;
    else if (t->rank == 0)
      p->stride[k] = 0;
    else
      return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                          "operand %d shape does not match the result", k);
    p->in_numel[k] = kn;
  }
  return SHLO_OK;
}

/* The loop (and function) computing op on element type p->et; returns the
 * result element type it writes. */
static shlo_elem_type cew_pick_loop(int code, cew_params *p) {
  shlo_elem_type et = p->et;
  int fl = cf_flavour(et);
  switch (code) {
  case SHLO_OP_CHLO_IS_INF:
  case SHLO_OP_CHLO_IS_POS_INF:
  case SHLO_OP_CHLO_IS_NEG_INF:
    p->pred = code == SHLO_OP_CHLO_IS_INF ? 0
              : code == SHLO_OP_CHLO_IS_POS_INF ? 1 : -1;
    if (fl >= 0) p->loop = cf_pred_tab[fl];
    return SHLO_I1;
  case SHLO_OP_CHLO_MULHI:
    p->loop = mulhi_loop(et);
    return et;
  case SHLO_OP_CHLO_NEXT_AFTER:
    if (et == SHLO_F32) p->loop = nextafter_f32;
    else if (et == SHLO_F64) p->loop = nextafter_f64;
    else if (fl >= 0) p->loop = nextafter_bits;
    return et;
  default: {
    chlo_fn f = chlo_fn_of(code);
    if (fl >= 0 && f.un) {
      p->un = f.un;
      p->loop = cf_un_tab[fl];
    } else if (fl >= 0 && f.bin) {
      p->bin = f.bin;
      p->loop = cf_bin_tab[fl];
    } else if ((et == SHLO_C64 || et == SHLO_C128) && f.cun) {
      p->cun = f.cun;
      p->loop = et == SHLO_C64 ? cun_c64 : cun_c128;
    }
    return et;
  }
  }
}

shlo_status shlo__compile_chlo(shlo_compiler *cc, const shlo_op *op,
                              shlo_step *step) {
  int code = op->code;
  int n_in = chlo_fn_of(code).arity;
  if (op->n_operands != n_in || op->n_results != 1)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "expects %d operand(s) and one result", n_in);
  const shlo_type *rt = shlo__cc_result_type(cc, op, 0);
  if (rt->kind != SHLO_TYPE_TENSOR || !shlo_type_is_static(rt))
    return shlo__cc_fail(cc, op, SHLO_EUNSUPPORTED,
                        "result must be a statically shaped tensor");
  cew_params *p = shlo__params_alloc(step, sizeof *p);
  if (!p) return shlo__cc_fail(cc, op, SHLO_ENOMEM, "out of memory");
  p->numel = shlo_type_numel(rt);
  p->rank = rt->rank;
  memcpy(p->dims, rt->dims, sizeof p->dims);
  p->n_in = n_in;
  p->out_elem = rt->elem;
  shlo_elem_type et = shlo__cc_operand_type(cc, op, 0)->elem;
  shlo_status st = cew_operands(cc, op, p, et);
  if (st) return st;
  p->et = et;
  p->esz = shlo_elem_size(et);
  p->bits = shlo_elem_bits(et);
  shlo_elem_type want = cew_pick_loop(code, p);
  if (!p->loop)
    return shlo__cc_fail(cc, op, SHLO_EUNSUPPORTED,
                        "element type %s is not supported",
                        shlo_elem_name(et));
  if (rt->elem != want)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "result element type %s, expected %s",
                        shlo_elem_name(rt->elem), shlo_elem_name(want));
  step->fn = k_cew;
  return SHLO_OK;
}

/* ---- top_k ---- */

typedef struct topk_params {
  shlo_elem_type et, idx_elem;
  size_t esz;
  int64_t rows, n, k;
  int rank;
  int64_t in_numel;
  int64_t out_dims[SHLO_MAX_RANK];
} topk_params;

typedef struct {
  uint64_t key;
  int64_t idx;
} topk_item;

static int topk_cmp(const void *a_, const void *b_) {
  const topk_item *a = a_, *b = b_;
  if (a->key != b->key) return a->key > b->key ? -1 : 1;
  return a->idx < b->idx ? -1 : a->idx > b->idx;
}

/* A key whose unsigned order is the element order: integers (and i1) by
 * value, floats in total order (-NaN < -inf < ... < -0 < +0 < ... < inf < NaN). */
static uint64_t topk_key(const topk_params *p, const void *data, int64_t i) {
  const char *e = (const char *)data + (size_t)i * p->esz;
  switch (shlo_elem_class_of(p->et)) {
  case SHLO_CLASS_FLOAT: {
    double v = p->et == SHLO_F32 ? (double)*(const float *)e
               : p->et == SHLO_F64 ? *(const double *)e
                                   : shlo__float_load(p->et, e);
    uint64_t b;
    memcpy(&b, &v, 8);
    return (b >> 63) ? ~b : b | (1ull << 63);
  }
  case SHLO_CLASS_SINT: {
    int64_t v = p->esz == 1 ? *(const int8_t *)e
                : p->esz == 2 ? *(const int16_t *)e
                : p->esz == 4 ? *(const int32_t *)e : *(const int64_t *)e;
    return (uint64_t)v ^ (1ull << 63);
  }
  default: {
    uint64_t v = p->esz == 1 ? *(const uint8_t *)e
                 : p->esz == 2 ? *(const uint16_t *)e
                 : p->esz == 4 ? *(const uint32_t *)e : *(const uint64_t *)e;
    return v;
  }
  }
}

static shlo_status k_top_k(const shlo_step *s, shlo_value *const *in,
                           shlo_value **out, shlo_exec *ex) {
  const topk_params *p = s->params;
  if (in[0]->kind != SHLO_TYPE_TENSOR || in[0]->numel != p->in_numel)
    return shlo__exec_fail(ex, s, SHLO_ERUNTIME,
                          "operand does not have the compiled shape");
  shlo_value *vals = shlo_tensor_new(p->et, p->rank, p->out_dims);
  shlo_value *idx = shlo_tensor_new(p->idx_elem, p->rank, p->out_dims);
  topk_item *items = shlo__malloc((size_t)(p->n ? p->n : 1) * sizeof *items);
  if (!vals || !idx || !items) {
    shlo_value_unref(vals);
    shlo_value_unref(idx);
    shlo__free(items);
    return shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory");
  }
  for (int64_t r = 0; r < p->rows; r++) {
    if ((r & 255) == 0 && shlo__exec_should_stop(ex)) {
      shlo_value_unref(vals);
      shlo_value_unref(idx);
      shlo__free(items);
      return shlo__exec_fail(ex, s, SHLO_ECANCELED, "execution stopped");
    }
    for (int64_t j = 0; j < p->n; j++) {
      items[j].key = topk_key(p, in[0]->data, r * p->n + j);
      items[j].idx = j;
    }
    qsort(items, (size_t)p->n, sizeof *items, topk_cmp);
    for (int64_t j = 0; j < p->k; j++) {
      int64_t o = r * p->k + j;
      memcpy((char *)vals->data + (size_t)o * p->esz,
             (const char *)in[0]->data + (size_t)(r * p->n + items[j].idx) * p->esz,
             p->esz);
      if (p->idx_elem == SHLO_SI64)
        ((int64_t *)idx->data)[o] = items[j].idx;
      else
        ((int32_t *)idx->data)[o] = (int32_t)items[j].idx;
    }
  }
  shlo__free(items);
  out[0] = vals;
  out[1] = idx;
  return SHLO_OK;
}

/* top_k(operand, k): the k largest entries of each row along the last
 * dimension, in descending order, ties lower index first; values keep
 * the operand's element type, indices are i32 (or i64). */
shlo_status shlo__compile_chlo_top_k(shlo_compiler *cc, const shlo_op *op,
                                    shlo_step *step) {
  if (op->n_operands != 1 || op->n_results != 2)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "expects one operand and two results");
  int64_t k;
  if (!shlo_attr_get_i64(shlo_op_attr(op, "k"), &k))
    return shlo__cc_fail(cc, op, SHLO_EVERIFY, "needs an integer 'k'");
  return shlo__compile_top_k(cc, op, step, k);
}

/* top_k of operand 0 with k given: chlo.top_k's attribute, or the
 * refined result size of custom_call @stablehlo.dynamic_top_k, whose
 * further operand (k as a tensor) the kernel does not read. */
shlo_status shlo__compile_top_k(shlo_compiler *cc, const shlo_op *op,
                                shlo_step *step, int64_t k) {
  if (op->n_operands < 1 || op->n_results != 2)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "expects an operand and two results");
  const shlo_type *it = shlo__cc_operand_type(cc, op, 0);
  const shlo_type *vt = shlo__cc_result_type(cc, op, 0);
  const shlo_type *xt = shlo__cc_result_type(cc, op, 1);
  if (it->kind != SHLO_TYPE_TENSOR || !shlo_type_is_static(it) || it->rank < 1)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "operand must be a static tensor of rank >= 1");
  int64_t n = it->dims[it->rank - 1];
  if (k < 0 || k > n)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "k = %lld is out of range of the last dimension %lld",
                        (long long)k, (long long)n);
  if (vt->elem != it->elem || vt->rank != it->rank || xt->rank != it->rank ||
      (xt->elem != SHLO_SI32 && xt->elem != SHLO_SI64))
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "results must be values of the operand's type and "
                        "i32 indices");
  for (int d = 0; d < it->rank; d++) {
    int64_t want = d == it->rank - 1 ? k : it->dims[d];
    if (vt->dims[d] != want || xt->dims[d] != want)
      return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                          "result shape must be the operand's with the last "
                          "dimension k");
  }
  shlo_elem_class cls = shlo_elem_class_of(it->elem);
  /* i1 is stored a byte per element, 0 or 1: its key is the byte, so
   * true sorts above false. */
  if (cls == SHLO_CLASS_COMPLEX)
    return shlo__cc_fail(cc, op, SHLO_EUNSUPPORTED,
                        "element type %s is not supported",
                        shlo_elem_name(it->elem));
  topk_params *p = shlo__params_alloc(step, sizeof *p);
  if (!p) return shlo__cc_fail(cc, op, SHLO_ENOMEM, "out of memory");
  p->et = it->elem;
  p->idx_elem = xt->elem;
  p->esz = shlo_elem_size(it->elem);
  p->n = n;
  p->k = k;
  p->rank = it->rank;
  p->in_numel = shlo_type_numel(it);
  p->rows = n ? p->in_numel / n : 0;
  if (!n) {
    p->rows = 1;
    for (int d = 0; d + 1 < it->rank; d++) p->rows *= it->dims[d];
  }
  memcpy(p->out_dims, vt->dims, sizeof p->out_dims);
  step->fn = k_top_k;
  return SHLO_OK;
}

/* ---- ragged_dot ---- */

enum { RD_NONCONTRACT = 1, RD_CONTRACT = 2, RD_BATCH = 3 };

typedef struct rd_params {
  int mode;
  shlo_elem_type lt, rt_, ot, gt;
  bool is_float;
  int64_t lnumel, rnumel, g;
  int orank;
  int64_t odims[SHLO_MAX_RANK];
  int64_t onumel;
  /* per result dimension: its stride in lhs and rhs (0 if absent), and
   * whether it is the group dimension (mode 2) or lhs's ragged dim */
  int64_t o_lstride[SHLO_MAX_RANK], o_rstride[SHLO_MAX_RANK];
  int o_group_dim;    /* mode 2: result dim 0; else -1 */
  int o_ragged_dim;   /* mode 1/3: result dim that carries lhs's ragged dim */
  int64_t rgroup_stride; /* mode 1: rhs stride of the group dimension */
  int64_t kn;            /* contracting index space size */
  int64_t *loff, *roff;  /* per contracting index: offsets */
  int64_t *kragged;      /* mode 2: the ragged coordinate per contracting index */
} rd_params;

static void rd_free(void *p_) {
  rd_params *p = p_;
  if (!p) return;
  shlo__free(p->loff);
  shlo__free(p->roff);
  shlo__free(p->kragged);
  shlo__free(p);
}

static double *rd_load(const shlo_value *v, shlo_elem_type t, int64_t n) {
  double *d = shlo__malloc((size_t)(n ? n : 1) * sizeof *d);
  if (!d) return NULL;
  for (int64_t i = 0; i < n; i++)
    d[i] = shlo_elem_is_float(t) ? shlo__float_load(t, (const char *)v->data +
                                                          (size_t)i * shlo_elem_size(t))
                                 : (double)shlo_tensor_get_i64(v, i);
  return d;
}

static shlo_status k_ragged_dot(const shlo_step *s, shlo_value *const *in,
                                shlo_value **out, shlo_exec *ex) {
  const rd_params *p = s->params;
  if (in[0]->numel != p->lnumel || in[1]->numel != p->rnumel ||
      in[2]->numel != p->g)
    return shlo__exec_fail(ex, s, SHLO_ERUNTIME,
                          "operands do not have the compiled shapes");
  int64_t *start = shlo__malloc((size_t)(p->g + 1) * sizeof *start);
  double *L = rd_load(in[0], p->lt, p->lnumel);
  double *R = rd_load(in[1], p->rt_, p->rnumel);
  shlo_value *res = shlo_tensor_new(p->ot, p->orank, p->odims);
  if (!start || !L || !R || !res) {
    shlo__free(start), shlo__free(L), shlo__free(R), shlo_value_unref(res);
    return shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory");
  }
  start[0] = 0;
  for (int64_t j = 0; j < p->g; j++) {
    int64_t gs = shlo_tensor_get_i64(in[2], j);
    start[j + 1] = start[j] + (gs > 0 ? gs : 0);
  }
  int64_t idx[SHLO_MAX_RANK] = {0};
  size_t osz = shlo_elem_size(p->ot);
  for (int64_t o = 0; o < p->onumel; o++) {
    if ((o & 4095) == 0 && shlo__exec_should_stop(ex)) {
      shlo__free(start), shlo__free(L), shlo__free(R), shlo_value_unref(res);
      return shlo__exec_fail(ex, s, SHLO_ECANCELED, "execution stopped");
    }
    int64_t lb = 0, rb = 0, grp = -1;
    for (int d = 0; d < p->orank; d++) {
      lb += idx[d] * p->o_lstride[d];
      rb += idx[d] * p->o_rstride[d];
    }
    double acc = 0;
    if (p->mode == RD_CONTRACT) {
      grp = idx[p->o_group_dim];
      for (int64_t c = 0; c < p->kn; c++)
        if (p->kragged[c] >= start[grp] && p->kragged[c] < start[grp + 1])
          acc += L[lb + p->loff[c]] * R[rb + p->roff[c]];
    } else {
      int64_t row = idx[p->o_ragged_dim];
      for (int64_t j = 0; j < p->g; j++)
        if (row >= start[j] && row < start[j + 1]) grp = j;
      if (grp >= 0) {
        if (p->mode == RD_NONCONTRACT) rb += grp * p->rgroup_stride;
        for (int64_t c = 0; c < p->kn; c++)
          acc += L[lb + p->loff[c]] * R[rb + p->roff[c]];
      }
    }
    char *dst = (char *)res->data + (size_t)o * osz;
    if (p->is_float) shlo__float_store(p->ot, acc, dst);
    else shlo_tensor_set_i64(res, o, (int64_t)acc);
    for (int d = p->orank - 1; d >= 0; d--) {
      if (++idx[d] < p->odims[d]) break;
      idx[d] = 0;
    }
  }
  shlo__free(start), shlo__free(L), shlo__free(R);
  out[0] = res;
  return SHLO_OK;
}

static bool rd_in(const int64_t *a, int n, int64_t v) {
  for (int i = 0; i < n; i++)
    if (a[i] == v) return true;
  return false;
}

/* ragged_dot_dimension_numbers: the dot_general lists plus the lhs ragged
 * and rhs group dimensions (a missing list is empty). */
typedef struct rd_dims {
  int64_t lb[SHLO_MAX_RANK], rbd[SHLO_MAX_RANK], lc[SHLO_MAX_RANK],
      rc[SHLO_MAX_RANK], lr[SHLO_MAX_RANK], rg[SHLO_MAX_RANK];
  int nlb, nrb, nlc, nrc, nlr, nrg;
} rd_dims;

/* Field `name` of dn as a list (negative when it is not one). */
static int rd_list(const shlo_attr *dn, const char *name, int64_t *out) {
  return shlo_attr_i64s(shlo_attr_field(dn, name), out, SHLO_MAX_RANK);
}

static shlo_status rd_read_dims(shlo_compiler *cc, const shlo_op *op,
                                rd_dims *d) {
  const shlo_attr *dn = shlo_op_attr(op, "ragged_dot_dimension_numbers");
  d->nlb = rd_list(dn, "lhs_batching_dimensions", d->lb);
  d->nrb = rd_list(dn, "rhs_batching_dimensions", d->rbd);
  d->nlc = rd_list(dn, "lhs_contracting_dimensions", d->lc);
  d->nrc = rd_list(dn, "rhs_contracting_dimensions", d->rc);
  d->nlr = rd_list(dn, "lhs_ragged_dimensions", d->lr);
  d->nrg = rd_list(dn, "rhs_group_dimensions", d->rg);
  if (!dn || d->nlb < 0) d->nlb = 0;
  if (d->nrb < 0) d->nrb = 0;
  if (d->nlc < 0) d->nlc = 0;
  if (d->nrc < 0) d->nrc = 0;
  if (d->nrg < 0) d->nrg = 0;
  if (!dn || d->nlr != 1 || d->nlb != d->nrb || d->nlc != d->nrc)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "needs ragged_dot_dimension_numbers with one lhs "
                        "ragged dimension");
  return SHLO_OK;
}

/* Static operands, integer group_sizes of rank 1, and integer or float
 * lhs, rhs and result. */
static shlo_status rd_check_types(shlo_compiler *cc, const shlo_op *op,
                                  const shlo_type *lt, const shlo_type *rt,
                                  const shlo_type *gt, const shlo_type *ot) {
  if (!shlo_type_is_static(lt) || !shlo_type_is_static(rt) ||
      !shlo_type_is_static(gt) || gt->rank != 1 ||
      !shlo_elem_is_int(gt->elem))
    return shlo__cc_fail(cc, op, SHLO_EUNSUPPORTED,
                        "needs static operands and 1-dimensional integer "
                        "group_sizes");
  if (!(shlo_elem_is_float(ot->elem) || shlo_elem_is_int(ot->elem)) ||
      !(shlo_elem_is_float(lt->elem) || shlo_elem_is_int(lt->elem)) ||
      !(shlo_elem_is_float(rt->elem) || shlo_elem_is_int(rt->elem)))
    return shlo__cc_fail(cc, op, SHLO_EUNSUPPORTED,
                        "element types must be integer or float");
  return SHLO_OK;
}

/* The result dims ([g,] batch, lhs free, rhs free) with the lhs and rhs
 * strides of each, checked against the result type ot. */
static shlo_status rd_result_dims(shlo_compiler *cc, const shlo_op *op,
                                  rd_params *p, const rd_dims *d,
                                  const shlo_type *lt, const shlo_type *rt,
                                  const shlo_type *ot, const int64_t *ls,
                                  const int64_t *rs) {
  int n = 0;
  p->o_group_dim = -1;
  p->o_ragged_dim = -1;
  /* The result has (group) + batch + lhs free + rhs free dimensions; refuse
   * before writing past SHLO_MAX_RANK. */
  int upper = (p->mode == RD_CONTRACT) + d->nlb;
  for (int x = 0; x < lt->rank; x++)
    if (!rd_in(d->lb, d->nlb, x) && !rd_in(d->lc, d->nlc, x)) upper++;
  for (int x = 0; x < rt->rank; x++)
    if (!rd_in(d->rbd, d->nrb, x) && !rd_in(d->rc, d->nrc, x) &&
        !rd_in(d->rg, d->nrg, x))
      upper++;
  if (upper > SHLO_MAX_RANK)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "result would have rank %d, above %d", upper,
                        SHLO_MAX_RANK);
  if (p->mode == RD_CONTRACT) {
    p->o_group_dim = n;
    p->odims[n++] = p->g;
  }
  for (int i = 0; i < d->nlb; i++) {
    if (d->lb[i] == d->lr[0]) p->o_ragged_dim = n;
    p->o_lstride[n] = ls[d->lb[i]];
    p->o_rstride[n] = rs[d->rbd[i]];
    p->odims[n++] = lt->dims[d->lb[i]];
  }
  for (int x = 0; x < lt->rank; x++) {
    if (rd_in(d->lb, d->nlb, x) || rd_in(d->lc, d->nlc, x)) continue;
    if (x == d->lr[0]) p->o_ragged_dim = n;
    p->o_lstride[n] = ls[x];
    p->odims[n++] = lt->dims[x];
  }
  for (int x = 0; x < rt->rank; x++) {
    if (rd_in(d->rbd, d->nrb, x) || rd_in(d->rc, d->nrc, x) ||
        rd_in(d->rg, d->nrg, x))
      continue;
    p->o_rstride[n] = rs[x];
    p->odims[n++] = rt->dims[x];
  }
  if (p->mode != RD_CONTRACT && p->o_ragged_dim < 0)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "lhs ragged dimension must be a batch or free "
                        "dimension of lhs");
  p->orank = n;
  p->onumel = 1;
  for (int x = 0; x < n; x++) p->onumel *= p->odims[x];
  if (ot->rank != n)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY, "result rank %d, expected %d",
                        ot->rank, n);
  for (int x = 0; x < n; x++)
    if (ot->dims[x] != p->odims[x])
      return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                          "result dimension %d is %lld, expected %lld", x,
                          (long long)ot->dims[x], (long long)p->odims[x]);
  return SHLO_OK;
}

/* The contracting index space: for each of its kn points, the lhs and rhs
 * offsets and the index along the ragged dimension (0 unless contracting). */
static shlo_status rd_contracting(shlo_compiler *cc, const shlo_op *op,
                                  rd_params *p, const rd_dims *d,
                                  const shlo_type *lt, const shlo_type *rt,
                                  const int64_t *ls, const int64_t *rs) {
  p->kn = 1;
  for (int i = 0; i < d->nlc; i++) {
    if (lt->dims[d->lc[i]] != rt->dims[d->rc[i]])
      return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                          "contracting dimensions differ in size");
    p->kn *= lt->dims[d->lc[i]];
  }
  p->loff = shlo__malloc((size_t)(p->kn + 1) * sizeof *p->loff);
  p->roff = shlo__malloc((size_t)(p->kn + 1) * sizeof *p->roff);
  p->kragged = shlo__malloc((size_t)(p->kn + 1) * sizeof *p->kragged);
  if (!p->loff || !p->roff || !p->kragged)
    return shlo__cc_fail(cc, op, SHLO_ENOMEM, "out of memory");
  int64_t ci[SHLO_MAX_RANK] = {0};
  for (int64_t c = 0; c < p->kn; c++) {
    int64_t lo = 0, ro = 0, kr = 0;
    for (int i = 0; i < d->nlc; i++) {
      lo += ci[i] * ls[d->lc[i]];
      ro += ci[i] * rs[d->rc[i]];
      if (d->lc[i] == d->lr[0]) kr = ci[i];
    }
    p->loff[c] = lo, p->roff[c] = ro, p->kragged[c] = kr;
    for (int i = d->nlc - 1; i >= 0; i--) {
      if (++ci[i] < lt->dims[d->lc[i]]) break;
      ci[i] = 0;
    }
  }
  return SHLO_OK;
}

/* ragged_dot(lhs, rhs, group_sizes): a dot_general whose lhs ragged
 * dimension is split into groups of group_sizes rows.  Ragged in a
 * non-contracting dimension (mode 1): rows of group j use rhs[j] (rhs's
 * group dimension), rows past the groups give 0; result [batch, lhs free,
 * rhs free].  Ragged in a contracting dimension (mode 2): result
 * [g, batch, lhs free, rhs free], group j contracting only over its
 * range.  Ragged in a batch dimension (mode 3): a plain dot_general whose
 * batch entries past the groups give 0. */
shlo_status shlo__compile_chlo_ragged_dot(shlo_compiler *cc, const shlo_op *op,
                                         shlo_step *step) {
  if (op->n_operands != 3 || op->n_results != 1)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "expects lhs, rhs, group_sizes and one result");
  const shlo_type *lt = shlo__cc_operand_type(cc, op, 0);
  const shlo_type *rt = shlo__cc_operand_type(cc, op, 1);
  const shlo_type *gt = shlo__cc_operand_type(cc, op, 2);
  const shlo_type *ot = shlo__cc_result_type(cc, op, 0);
  rd_dims d;
  shlo_status st;
  if ((st = rd_read_dims(cc, op, &d)) ||
      (st = rd_check_types(cc, op, lt, rt, gt, ot)))
    return st;
  int64_t ls[SHLO_MAX_RANK], rs[SHLO_MAX_RANK];
  shlo_strides(lt->rank, lt->dims, ls);
  shlo_strides(rt->rank, rt->dims, rs);
  rd_params *p = shlo__calloc(1, sizeof *p);
  if (!p) return shlo__cc_fail(cc, op, SHLO_ENOMEM, "out of memory");
  if (step->free_params) step->free_params(step->params);
  step->params = p;
  step->free_params = rd_free;
  p->lt = lt->elem, p->rt_ = rt->elem, p->ot = ot->elem, p->gt = gt->elem;
  p->is_float = shlo_elem_is_float(ot->elem);
  p->lnumel = shlo_type_numel(lt);
  p->rnumel = shlo_type_numel(rt);
  p->g = gt->dims[0];
  p->mode = rd_in(d.lc, d.nlc, d.lr[0]) ? RD_CONTRACT
            : rd_in(d.lb, d.nlb, d.lr[0]) ? RD_BATCH : RD_NONCONTRACT;
  if ((p->mode == RD_NONCONTRACT) != (d.nrg == 1) ||
      (d.nrg == 1 && rt->dims[d.rg[0]] != p->g))
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "rhs_group_dimensions must name one dimension of "
                        "size %lld exactly when lhs is ragged in a "
                        "non-contracting dimension", (long long)p->g);
  if ((st = rd_result_dims(cc, op, p, &d, lt, rt, ot, ls, rs))) return st;
  if (d.nrg == 1) p->rgroup_stride = rs[d.rg[0]];
  if ((st = rd_contracting(cc, op, p, &d, lt, rt, ls, rs))) return st;
  step->fn = k_ragged_dot;
  return SHLO_OK;
}

/* ---- scan ---- */

typedef struct scan_params {
  int n_in, n_carry, n_out;
  int64_t dim;          /* scan dimension */
  int64_t len;          /* its size */
  bool reverse;
  /* per input and per output: outer/inner extents around `dim` */
  int64_t *in_outer, *in_inner, *out_outer, *out_inner;
  shlo_elem_type *in_elem, *out_elem;
  int *in_rank, *out_rank;
  int64_t (*in_sdims)[SHLO_MAX_RANK];  /* slice shapes (dim removed) */
  int64_t (*out_dims)[SHLO_MAX_RANK];
} scan_params;

static void scan_free(void *p_) {
  scan_params *p = p_;
  if (!p) return;
  shlo__free(p->in_outer), shlo__free(p->in_inner), shlo__free(p->out_outer), shlo__free(p->out_inner);
  shlo__free(p->in_elem), shlo__free(p->out_elem), shlo__free(p->in_rank), shlo__free(p->out_rank);
  shlo__free(p->in_sdims), shlo__free(p->out_dims);
  shlo__free(p);
}

/* args[0..n_in) = each input's slice at position pos of the scanned
 * dimension. */
static shlo_status scan_slice_inputs(const shlo_step *s, const scan_params *p,
                                     shlo_value *const *in, shlo_value **args,
                                     int64_t pos, shlo_exec *ex) {
  for (int i = 0; i < p->n_in; i++) {
    shlo_value_unref(args[i]);
    args[i] = shlo_tensor_new(p->in_elem[i], p->in_rank[i] - 1, p->in_sdims[i]);
    if (!args[i]) return shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory");
    size_t esz = shlo_elem_size(p->in_elem[i]);
    size_t row = (size_t)p->in_inner[i] * esz;
    for (int64_t o = 0; o < p->in_outer[i]; o++)
      memcpy((char *)args[i]->data + (size_t)o * row,
             (const char *)in[i]->data + ((size_t)(o * p->len + pos)) * row,
             row);
  }
  return SHLO_OK;
}

/* Store the body's outputs res[0..n_out) at position pos of outs (and drop
 * them). */
static shlo_status scan_store_outputs(const shlo_step *s,
                                      const scan_params *p, shlo_value **res,
                                      shlo_value **outs, int64_t pos,
                                      shlo_exec *ex) {
  for (int k = 0; k < p->n_out; k++) {
    size_t esz = shlo_elem_size(p->out_elem[k]);
    size_t row = (size_t)p->out_inner[k] * esz;
    if (res[k]->numel * (int64_t)esz != (int64_t)(row * (size_t)p->out_outer[k]))
      return shlo__exec_fail(ex, s, SHLO_ERUNTIME,
                            "body output %d has the wrong size", k);
    for (int64_t o = 0; o < p->out_outer[k]; o++)
      memcpy((char *)outs[k]->data + ((size_t)(o * p->len + pos)) * row,
             (const char *)res[k]->data + (size_t)o * row, row);
    shlo_value_unref(res[k]);
    res[k] = NULL;
  }
  return SHLO_OK;
}

/* Run the body at every position, carries flowing from one to the next. */
static shlo_status scan_steps(const shlo_step *s, const scan_params *p,
                              shlo_value *const *in, shlo_value **args,
                              shlo_value **res, shlo_value **outs,
                              shlo_exec *ex) {
  int nb = p->n_in + p->n_carry, nr = p->n_out + p->n_carry;
  for (int64_t t = 0; t < p->len; t++) {
    if (shlo__exec_should_stop(ex))
      return shlo__exec_fail(ex, s, SHLO_ECANCELED, "execution stopped");
    int64_t pos = p->reverse ? p->len - 1 - t : t;
    shlo_status st = scan_slice_inputs(s, p, in, args, pos, ex);
    if (st) return st;
    for (int k = 0; k < nr; k++) res[k] = NULL;
    st = shlo__step_run_region(s, 0, in, args, nb, res, ex);
    if (!st) st = scan_store_outputs(s, p, res, outs, pos, ex);
    if (st) return st;
    for (int c = 0; c < p->n_carry; c++) {
      shlo_value_unref(args[p->n_in + c]);
      args[p->n_in + c] = res[p->n_out + c];
      res[p->n_out + c] = NULL;
    }
  }
  return SHLO_OK;
}

static shlo_status k_scan(const shlo_step *s, shlo_value *const *in,
                          shlo_value **out, shlo_exec *ex) {
  const scan_params *p = s->params;
  int nb = p->n_in + p->n_carry, nr = p->n_out + p->n_carry;
  shlo_value **args = shlo__calloc((size_t)nb + 1, sizeof *args);
  shlo_value **res = shlo__calloc((size_t)nr + 1, sizeof *res);
  shlo_value **outs = shlo__calloc((size_t)p->n_out + 1, sizeof *outs);
  shlo_status st = SHLO_OK;
  if (!args || !res || !outs) {
    st = shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory");
    goto done;
  }
  for (int c = 0; c < p->n_carry; c++)
    args[p->n_in + c] = shlo_value_ref(in[p->n_in + c]);
  for (int k = 0; k < p->n_out; k++) {
    outs[k] = shlo_tensor_new(p->out_elem[k], p->out_rank[k], p->out_dims[k]);
    if (!outs[k]) {
      st = shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory");
      goto done;
    }
  }
  st = scan_steps(s, p, in, args, res, outs, ex);
  if (st) goto done;
  for (int k = 0; k < p->n_out; k++) {
    out[k] = outs[k];
    outs[k] = NULL;
  }
  for (int c = 0; c < p->n_carry; c++) {
    out[p->n_out + c] = args[p->n_in + c];
    args[p->n_in + c] = NULL;
  }
done:
  if (args)
    for (int i = 0; i < nb; i++) shlo_value_unref(args[i]);
  if (res)
    for (int k = 0; k < nr; k++) shlo_value_unref(res[k]);
  if (outs)
    for (int k = 0; k < p->n_out; k++) shlo_value_unref(outs[k]);
  shlo__free(args), shlo__free(res), shlo__free(outs);
  return st;
}

/* scan(inputs) inits(inits) dimension = d {body}: for each position t of
 * dimension d (from the end with is_reverse), the body takes the inputs'
 * slices at t and the carries, and returns the outputs' slices at t and
 * the new carries.  Results: the stacked outputs, then the final carries.
 * The `inits` attribute counts the trailing operands that are inits. */
shlo_status shlo__compile_chlo_scan(shlo_compiler *cc, const shlo_op *op,
                                   shlo_step *step) {
  int64_t n_carry = 0, dim = 0;
  shlo_attr_get_i64(shlo_op_attr(op, "inits"), &n_carry);
  if (!shlo_attr_get_i64(shlo_op_attr(op, "dimension"), &dim))
    return shlo__cc_fail(cc, op, SHLO_EVERIFY, "needs a 'dimension'");
  const shlo_attr *rev = shlo_op_attr(op, "is_reverse");
  bool reverse = rev && (rev->kind == SHLO_ATTR_UNIT ||
                         (rev->kind == SHLO_ATTR_BOOL && rev->b));
  int n_in = op->n_operands - (int)n_carry;
  int n_out = op->n_results - (int)n_carry;
  if (n_carry < 0 || n_in < 0 || n_out < 0 || op->n_regions != 1)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "inconsistent inputs, inits and results");
  const shlo_block *body = op->regions[0];
  if (body->n_args != n_in + n_carry)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "body takes %d arguments, expected %d", body->n_args,
                        n_in + (int)n_carry);
  scan_params *p = shlo__calloc(1, sizeof *p);
  if (!p) return shlo__cc_fail(cc, op, SHLO_ENOMEM, "out of memory");
  if (step->free_params) step->free_params(step->params);
  step->params = p;
  step->free_params = scan_free;
  p->n_in = n_in, p->n_carry = (int)n_carry, p->n_out = n_out;
  p->dim = dim, p->reverse = reverse, p->len = -1;
  size_t ni = (size_t)n_in + 1, no = (size_t)n_out + 1;
  p->in_outer = shlo__calloc(ni, sizeof(int64_t));
  p->in_inner = shlo__calloc(ni, sizeof(int64_t));
  p->out_outer = shlo__calloc(no, sizeof(int64_t));
  p->out_inner = shlo__calloc(no, sizeof(int64_t));
  p->in_elem = shlo__calloc(ni, sizeof(shlo_elem_type));
  p->out_elem = shlo__calloc(no, sizeof(shlo_elem_type));
  p->in_rank = shlo__calloc(ni, sizeof(int));
  p->out_rank = shlo__calloc(no, sizeof(int));
  p->in_sdims = shlo__calloc(ni, sizeof *p->in_sdims);
  p->out_dims = shlo__calloc(no, sizeof *p->out_dims);
  if (!p->in_outer || !p->in_inner || !p->out_outer || !p->out_inner ||
      !p->in_elem || !p->out_elem || !p->in_rank || !p->out_rank ||
      !p->in_sdims || !p->out_dims)
    return shlo__cc_fail(cc, op, SHLO_ENOMEM, "out of memory");
  for (int k = 0; k < n_in + n_out; k++) {
    bool is_in = k < n_in;
    int j = is_in ? k : k - n_in;
    const shlo_type *t = is_in ? shlo__cc_operand_type(cc, op, j)
                               : shlo__cc_result_type(cc, op, j);
    if (t->kind != SHLO_TYPE_TENSOR || !shlo_type_is_static(t) ||
        dim < 0 || dim >= t->rank)
      return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                          "%s %d must be a static tensor with dimension %lld",
                          is_in ? "input" : "output", j, (long long)dim);
    if (p->len >= 0 && t->dims[dim] != p->len)
      return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                          "scan dimension sizes differ");
    p->len = t->dims[dim];
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < dim; d++) outer *= t->dims[d];
    for (int d = (int)dim + 1; d < t->rank; d++) inner *= t->dims[d];
    if (is_in) {
      p->in_outer[j] = outer, p->in_inner[j] = inner;
      p->in_elem[j] = t->elem, p->in_rank[j] = t->rank;
      int m = 0;
      for (int d = 0; d < t->rank; d++)
        if (d != dim) p->in_sdims[j][m++] = t->dims[d];
    } else {
      p->out_outer[j] = outer, p->out_inner[j] = inner;
      p->out_elem[j] = t->elem, p->out_rank[j] = t->rank;
      memcpy(p->out_dims[j], t->dims, sizeof p->out_dims[j]);
    }
  }
  if (p->len < 0) p->len = 0;
  shlo_status st = shlo__cc_compile_regions(cc, op, step);
  if (st) return st;
  step->fn = k_scan;
  return SHLO_OK;
}
