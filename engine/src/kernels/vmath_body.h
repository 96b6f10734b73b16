/* SPDX-License-Identifier: Apache-2.0 */
/* One variant of the vector maths of vmath.h.  vmath.c includes this once
 * per variant with VM_ISA (a name suffix), VM_KIND (VM_AVX512, VM_AVX2 or
 * VM_PORTABLE), VM_TARGET (a target attribute string; none for the
 * portable variant), VM_W (floats per vector) and, for the ISA variants,
 * VM_PS and VM_M (their intrinsics' prefix and vector type) defined;
 * everything here is compiled for that target only and reached through
 * vmath.c's dispatch.
 *
 * Every step is one IEEE f32 operation, an FMA being one (a * b + c
 * rounded once: the FMA instruction, or its exact emulation in double in
 * the portable variant),
 * and vmath.c is built without contraction, so every variant, at any
 * width, gives the same bits.  The maths, on f32:
 *   exp(x):   x clamped to [-104, 89] (exp of either end is already 0 or
 *             inf in f32); k = round(x / ln2), r = x - k ln2 with ln2 in
 *             two parts, each product taken exactly by an FMA,
 *             |r| <= ln2/2; e^r as 1 + r + r^2 P(r), P of degree 4
 *             (minimax for e^r's relative error on |r| <= 0.3467, at most
 *             3.7e-9 with the coefficients rounded to f32); then times
 *             2^k, in two halves when 2^k is not a normal f32, so that a
 *             denormal result is rounded once.
 *   expm1(a): for 0 <= a <= 20 (tanh only): the same reduction; e^r - 1 as
 *             r + r^2 Q(r), Q of degree 4 (minimax for Q's own error,
 *             its constant term 1/2 exactly: e^r - 1 within 2.6e-8
 *             relative, nearly all of it at the interval's ends); then
 *             2^k (e^r - 1) + (2^k - 1) in one FMA, so small a keep their
 *             relative accuracy.
 *   Checked on every f32: exp within 1 ulp of the correctly rounded
 *   result over [-104, 89], tanh within 2 ulp over [0, 10]; the same
 *   bounds as the degree-5 polynomials these replaced (Cephes' expf, and
 *   the Taylor series to r^7), one FMA a value fewer (softmax and gelu
 *   3-4% faster).
 *   tanh(x):  e / (e + 2) with e = expm1(2|x|), 2|x| clamped to 20 (tanh
 *             is 1 in f32 from |x| = 9.02), and x's sign.
 *   logistic: e = exp(-|x|); 1 / (1 + e) for x >= 0, e / (1 + e) below.
 * NaN operands give x + x: the operand, quieted, payload kept. */

#define VM_N2(a, b) a##_##b
#define VM_N(a, b) VM_N2(a, b)
#define VF VM_N(vf, VM_ISA)
#define VI VM_N(vi, VM_ISA)
#define VM_FN(name) VM_N(name, VM_ISA)
#ifdef VM_TARGET
#define VM_INLINE static inline __attribute__((always_inline, target(VM_TARGET)))
#define VM_EXTERN static __attribute__((target(VM_TARGET)))
#else
#define VM_INLINE static inline __attribute__((always_inline))
#define VM_EXTERN static
#endif

typedef float VF __attribute__((vector_size(VM_W * 4)));
typedef int32_t VI __attribute__((vector_size(VM_W * 4)));

VM_INLINE VF VM_FN(splat)(float v) { return (VF){0} + v; }

/* m ? a : b, lane by lane (m lanes are all ones or all zeros) */
VM_INLINE VF VM_FN(sel)(VI m, VF a, VF b) {
  return (VF)(((VI)a & m) | ((VI)b & ~m));
}

/* a * b + c, rounded once; max and min with MAXPS's rule (b when either
 * is NaN); whether any lane of k is outside [lo, hi] */
#if VM_KIND != VM_PORTABLE
/* VM_PS(op): the ISA's _mm{256,512}_op_ps; VM_M: its vector type */
VM_INLINE VF VM_FN(fma)(VF a, VF b, VF c) {
  return (VF)VM_PS(fmadd)((VM_M)a, (VM_M)b, (VM_M)c);
}
VM_INLINE VF VM_FN(max)(VF a, VF b) {
  return (VF)VM_PS(max)((VM_M)a, (VM_M)b);
}
VM_INLINE VF VM_FN(min)(VF a, VF b) {
  return (VF)VM_PS(min)((VM_M)a, (VM_M)b);
}
#endif
#if VM_KIND == VM_AVX512
VM_INLINE bool VM_FN(any_outside)(VI k, int lo, int hi) {
  __m512i v = (__m512i)k;
  return (_mm512_cmplt_epi32_mask(v, _mm512_set1_epi32(lo)) |
          _mm512_cmpgt_epi32_mask(v, _mm512_set1_epi32(hi))) != 0;
}
#elif VM_KIND == VM_AVX2
VM_INLINE bool VM_FN(any_outside)(VI k, int lo, int hi) {
  VI m = (k < lo) | (k > hi);
  return !_mm256_testz_si256((__m256i)m, (__m256i)m);
}
#else
/* fmaf without an FMA unit or a call per element (glibc's fmaf is a call
 * even where the CPU has FMA, and slow software where it has not): the
 * product of two floats is exact in double; the sum is rounded to odd
 * (the nearest double, moved one ulp towards the exact sum when that
 * double is even and inexact), and a double rounded to odd rounds to
 * float as the exact sum would: correctly, the same bits as an FMA. */
typedef double VM_N(vd, VM_ISA) __attribute__((vector_size(VM_W * 8)));
typedef int64_t VM_N(vl, VM_ISA) __attribute__((vector_size(VM_W * 8)));
VM_INLINE VF VM_FN(fma)(VF a, VF b, VF c) {
  typedef VM_N(vd, VM_ISA) vd;
  typedef VM_N(vl, VM_ISA) vl;
  vd p = __builtin_convertvector(a, vd) * __builtin_convertvector(b, vd);
  vd cd = __builtin_convertvector(c, vd), s = p + cd;
  vd bb = s - p, err = (p - (s - bb)) + (cd - bb); /* s + err = p + c */
  /* (double compares give masks; no 64-bit integer compares, which SSE2
   * lacks) */
  vl u = (vl)s;
  vl inexact = (vl)(err != 0) & (vl)(s - s == 0); /* and s finite */
  vl even = (u & 1) - 1;                           /* all ones if even */
  vl away = ~((vl)(err > 0) ^ (vl)(s > 0));        /* err has s's sign */
  vl step = (away & 2) - 1;                        /* +1 or -1 */
  return __builtin_convertvector((vd)(u + (inexact & even & step)), VF);
}
VM_INLINE VF VM_FN(max)(VF a, VF b) { return VM_FN(sel)(a > b, a, b); }
VM_INLINE VF VM_FN(min)(VF a, VF b) { return VM_FN(sel)(a < b, a, b); }
VM_INLINE bool VM_FN(any_outside)(VI k, int lo, int hi) {
  bool any = false;
  for (int j = 0; j < VM_W; j++) any |= k[j] < lo || k[j] > hi;
  return any;
}
#endif

VM_INLINE VF VM_FN(clamp)(VF y, float lo, float hi) {
  return VM_FN(min)(VM_FN(max)(y, VM_FN(splat)(lo)), VM_FN(splat)(hi));
}

/* 2^k for integer lanes -126 <= k <= 127 */
VM_INLINE VF VM_FN(pow2)(VI k) { return (VF)((k + 127) << 23); }

/* k = round(y / ln2), as integer lanes (*k) and as floats (*kf), r = y -
 * k ln2, for |y| < 2^21 (what a caller leaves unused, inlined, goes) */
VM_INLINE VF VM_FN(reduce_both)(VF y, VI *k, VF *kf) {
  const float shift = 0x1.8p23f; /* adding it rounds to an integer */
  VF t = VM_FN(fma)(y, VM_FN(splat)(VM_LOG2E_F), VM_FN(splat)(shift));
  *kf = t - shift;
  *k = (VI)t - (VI)VM_FN(splat)(shift);
  VF r = VM_FN(fma)(*kf, VM_FN(splat)(-VM_LN2_HI_F), y);
  return VM_FN(fma)(*kf, VM_FN(splat)(-VM_LN2_LO_F), r);
}

VM_INLINE VF VM_FN(reduce)(VF y, VI *k) {
  VF kf;
  return VM_FN(reduce_both)(y, k, &kf);
}

/* for (j = 0; j < n; j++), unrolled: the _n functions below take n
 * vectors through each step together, so that their steps interleave in
 * the instruction stream.  One vector's tanh is a chain of about 80
 * cycles of dependent latency; taken alone, the out-of-order window
 * holds too few such chains to fill the FMA pipes (gelu's lanes: 18
 * cycles a vector one at a time, 12 eight at a time, on Zen 5). */
#define VM_EACH(j, n) _Pragma("GCC unroll 16") for (int j = 0; j < (n); j++)

/* c0 + r (c1 + r (c2 + ...)), highest first */
#define VM_HORNER(p, r, c) ((p) = VM_FN(fma)((p), (r), VM_FN(splat)(c)))

/* r[j] = e^r[j] for j < n, |r| <= ln2/2: 1 + r + r^2 P(r) (see the
 * top) */
VM_INLINE void VM_FN(exp_poly_n)(VF *r, int n) {
  VF p[16]; /* n <= 16, a constant once inlined */
  VM_EACH(j, n) p[j] = VM_FN(splat)(0x1.6a2436p-10f);
  VM_EACH(j, n) VM_HORNER(p[j], r[j], 0x1.123a14p-7f);
  VM_EACH(j, n) VM_HORNER(p[j], r[j], 0x1.5558f2p-5f);
  VM_EACH(j, n) VM_HORNER(p[j], r[j], 0x1.555492p-3f);
  VM_EACH(j, n) VM_HORNER(p[j], r[j], 0x1.fffffcp-2f);
  VM_EACH(j, n) r[j] = VM_FN(fma)(p[j], r[j] * r[j], r[j]) + 1.0f;
}

VM_INLINE VF VM_FN(exp_poly)(VF r) {
  VM_FN(exp_poly_n)(&r, 1);
  return r;
}

#if VM_KIND == VM_AVX512
VM_INLINE bool VM_FN(any_below)(VI k, int lo) {
  return _mm512_cmplt_epi32_mask((__m512i)k, _mm512_set1_epi32(lo)) != 0;
}
#else
VM_INLINE bool VM_FN(any_below)(VI k, int lo) {
  return VM_FN(any_outside)(k, lo, INT32_MAX);
}
#endif

/* exp of x clamped to [-104, 89] (exp_core); nonpos: the caller knows
 * every lane is <= 0 or NaN (softmax's x - max x), so the upper clamp
 * and the check for 2^k above the normals are left out: for such lanes
 * they change nothing (a NaN lane is clamped to -104 by MAXPS's rule
 * either way), and the bits are exp_core's.  Always inlined with a
 * constant nonpos. */
VM_INLINE VF VM_FN(exp_core_of)(VF x, bool nonpos) {
  VI k;
  VF c = nonpos ? VM_FN(max)(x, VM_FN(splat)(-104.0f))
                : VM_FN(clamp)(x, -104.0f, 89.0f);
  VF y = VM_FN(exp_poly)(VM_FN(reduce)(c, &k));
  if (nonpos ? !VM_FN(any_below)(k, -126) : !VM_FN(any_outside)(k, -126, 127))
    return y * VM_FN(pow2)(k);
  /* k in [-150, 128]: two normal halves; where 2^k is normal too, the
   * product is the one above */
  VI k1 = k >> 1;
  return y * VM_FN(pow2)(k1) * VM_FN(pow2)(k - k1);
}

VM_INLINE VF VM_FN(exp_core)(VF x) { return VM_FN(exp_core_of)(x, false); }

/* x + x (x quieted, payload kept) where x is NaN, else v: on AVX-512 a
 * compare into a mask and a masked add, where the generic select takes
 * four instructions */
VM_INLINE VF VM_FN(nan_or)(VF x, VF v) {
#if VM_KIND == VM_AVX512
  __mmask16 m = _mm512_cmp_ps_mask((__m512)x, (__m512)x, _CMP_UNORD_Q);
  return (VF)_mm512_mask_add_ps((__m512)v, m, (__m512)x, (__m512)x);
#else
  return VM_FN(sel)(x != x, x + x, v);
#endif
}

/* v[j] = tanh(v[j]) for j < n, with its sign and NaNs (tanh_lanes) */
VM_INLINE void VM_FN(tanh_n)(VF *v, int n) {
  const VI sign = (VI){0} + INT32_MIN;
  VF r[16], kf[16], q[16]; /* n <= 16, a constant once inlined */
  VI k[16];
  VM_EACH(j, n) {
    VF a = (VF)((VI)v[j] & ~sign);
#if VM_KIND == VM_AVX512
    /* as in exp_scalef_n: a NaN lane passes MINPS as its second operand,
     * and every step after gives it back; 2^k by VSCALEFPS (exact here) */
    a = (VF)_mm512_min_ps(_mm512_set1_ps(20.0f), (__m512)(a + a));
#else
    a = VM_FN(min)(a + a, VM_FN(splat)(20.0f));
#endif
    r[j] = VM_FN(reduce_both)(a, &k[j], &kf[j]);
  }
  VM_EACH(j, n) q[j] = VM_FN(splat)(0x1.6d7594p-10f); /* Q (see the top) */
  VM_EACH(j, n) VM_HORNER(q[j], r[j], 0x1.120b9ep-7f);
  VM_EACH(j, n) VM_HORNER(q[j], r[j], 0x1.5554b8p-5f);
  VM_EACH(j, n) VM_HORNER(q[j], r[j], 0x1.5554dcp-3f);
  VM_EACH(j, n) VM_HORNER(q[j], r[j], 0.5f);
  VM_EACH(j, n) {
    VF em = VM_FN(fma)(q[j], r[j] * r[j], r[j]); /* e^r - 1 */
#if VM_KIND == VM_AVX512
    VF s = (VF)_mm512_scalef_ps(_mm512_set1_ps(1.0f), (__m512)kf[j]);
#else
    VF s = VM_FN(pow2)(k[j]); /* k in [0, 29] */
#endif
    VF e = VM_FN(fma)(s, em, s - 1.0f);
    VF t = e / (e + 2.0f);
    t = (VF)((VI)t | ((VI)v[j] & sign));
#if VM_KIND == VM_AVX512
    v[j] = t; /* a NaN came through quieted, its sign put back: x + x */
#else
    v[j] = VM_FN(nan_or)(v[j], t);
#endif
  }
}

VM_INLINE VF VM_FN(load)(const float *x) {
  VF v;
  memcpy(&v, x, sizeof v);
  return v;
}

VM_INLINE void VM_FN(store)(float *d, VF v) { memcpy(d, &v, sizeof v); }

#if VM_KIND == VM_AVX512
/* exp_core_of's operations, with x + x for a NaN lane, in fewer
 * instructions and the same bits:
 * - the clamp takes x as MAXPS's and MINPS's second operand, which they
 *   give where either is NaN, so a NaN lane passes it; every step after
 *   it then has that NaN (quieted, payload kept) for each NaN operand and
 *   gives it: x + x, without nan_or's compare and masked add;
 * - VSCALEFPS multiplies by 2^k with one rounding whether or not 2^k or
 *   the product is a normal f32: the bits of y * 2^k, or of the two
 *   halves' product below the normals, without the test of k, the
 *   integer steps and the multiply.
 * One pass of softmax's exponentials took 9.75 cycles a vector of 16 the
 * other way, 8.6 so (alone in L1, on Zen 5). */
VM_INLINE void VM_FN(exp_scalef_n)(VF *v, int n, bool nonpos) {
  VF r[16], kf[16]; /* n <= 16, a constant once inlined */
  VM_EACH(j, n) {
    __m512 c = _mm512_max_ps(_mm512_set1_ps(-104.0f), (__m512)v[j]);
    if (!nonpos) c = _mm512_min_ps(_mm512_set1_ps(89.0f), c);
    VI k;
    r[j] = VM_FN(reduce_both)((VF)c, &k, &kf[j]);
  }
  VM_FN(exp_poly_n)(r, n);
  VM_EACH(j, n) v[j] = (VF)_mm512_scalef_ps((__m512)r[j], (__m512)kf[j]);
}

/* v[j] = exp_lanes(v[j]) for j < n, their steps together (VM_EACH) */
VM_INLINE void VM_FN(exp_n)(VF *v, int n) {
  VM_FN(exp_scalef_n)(v, n, false);
}

/* exp_n of lanes <= 0 or NaN, the same bits */
VM_INLINE void VM_FN(exp_nonpos_n)(VF *v, int n) {
  VM_FN(exp_scalef_n)(v, n, true);
}

VM_INLINE VF VM_FN(exp_lanes)(VF x) {
  VM_FN(exp_n)(&x, 1);
  return x;
}

/* exp_lanes of lanes <= 0 or NaN, the same bits */
VM_INLINE VF VM_FN(exp_nonpos_lanes)(VF x) {
  VM_FN(exp_nonpos_n)(&x, 1);
  return x;
}

/* exp of lanes <= 0, any value in a NaN lane (a caller that sets those) */
VM_INLINE VF VM_FN(exp_nonpos_any)(VF x) {
  return VM_FN(exp_nonpos_lanes)(x);
}
#else
VM_INLINE VF VM_FN(exp_lanes)(VF x) {
  return VM_FN(nan_or)(x, VM_FN(exp_core)(x));
}

/* exp_lanes of lanes <= 0 or NaN (exp_core_of), the same bits */
VM_INLINE VF VM_FN(exp_nonpos_lanes)(VF x) {
  return VM_FN(nan_or)(x, VM_FN(exp_core_of)(x, true));
}

/* exp of lanes <= 0, any value in a NaN lane (a caller that sets those) */
VM_INLINE VF VM_FN(exp_nonpos_any)(VF x) {
  return VM_FN(exp_core_of)(x, true);
}

/* (a test of k a vector: no steps taken together) */
VM_INLINE void VM_FN(exp_n)(VF *v, int n) {
  VM_EACH(j, n) v[j] = VM_FN(exp_lanes)(v[j]);
}

VM_INLINE void VM_FN(exp_nonpos_n)(VF *v, int n) {
  VM_EACH(j, n) v[j] = VM_FN(exp_nonpos_lanes)(v[j]);
}
#endif

VM_INLINE VF VM_FN(tanh_lanes)(VF x) {
  VM_FN(tanh_n)(&x, 1);
  return x;
}

/* e = exp(-|x|) never overflows: 1 / (1 + e) for x >= 0, e / (1 + e)
 * below, where 1 + e rounds to 1 and the result keeps e's accuracy down
 * to the denormals; v[j] for j < n, their steps together */
VM_INLINE void VM_FN(logistic_n)(VF *v, int n) {
  const VI sign = (VI){0} + INT32_MIN;
  VF e[16]; /* n <= 16, a constant once inlined */
  VM_EACH(j, n) e[j] = (VF)((VI)v[j] | sign);
#if VM_KIND == VM_AVX512
  VM_FN(exp_nonpos_n)(e, n);
#else
  VM_EACH(j, n) e[j] = VM_FN(exp_nonpos_any)(e[j]);
#endif
  VM_EACH(j, n) {
    VF r = VM_FN(sel)((VI)v[j] < 0, e[j], VM_FN(splat)(1.0f)) / (1.0f + e[j]);
    v[j] = VM_FN(nan_or)(v[j], r);
  }
}

VM_INLINE VF VM_FN(logistic_lanes)(VF x) {
  VM_FN(logistic_n)(&x, 1);
  return x;
}

/* d[i] = f(x[i]): whole vectors, then the tail through a padded vector
 * (the same operations, so a value's result does not depend on where it
 * lies in the array). */
#define VM_LOOP(NAME)                                                       \
  VM_EXTERN void VM_FN(v##NAME)(float *d, const float *x, int64_t n) {      \
    int64_t i = 0;                                                          \
    for (; i + VM_W <= n; i += VM_W)                                        \
      VM_FN(store)(d + i, VM_FN(NAME##_lanes)(VM_FN(load)(x + i)));         \
    if (i == n) return;                                                     \
    float buf[VM_W] = {0};                                                  \
    memcpy(buf, x + i, (size_t)(n - i) * sizeof *x);                        \
    VM_FN(store)(buf, VM_FN(NAME##_lanes)(VM_FN(load)(buf)));               \
    memcpy(d + i, buf, (size_t)(n - i) * sizeof *d);                        \
  }
VM_LOOP(exp)
VM_LOOP(tanh)
VM_LOOP(logistic)
#undef VM_LOOP

#include "kernels/vchain_body.h"
#include "kernels/vsoftmax_body.h"

#undef VM_N2
#undef VM_N
#undef VF
#undef VI
#undef VM_FN
#undef VM_INLINE
#undef VM_EXTERN
#undef VM_HORNER
