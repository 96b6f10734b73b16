/* One ISA's variant of the vector maths of vmath.h.  vmath.c includes this
 * once per ISA with VM_ISA (a name suffix), VM_TARGET (a target attribute
 * string) and VM_W (doubles per vector) defined; everything here is
 * compiled for that target only and reached through vmath.c's dispatch.
 *
 * The maths (in double, on f32 operands converted exactly):
 *   exp(y):   y = k ln2 + r, |r| <= ln2/2, k = round(y / ln2);
 *             e^r by its Taylor series to r^12 (truncation < 3e-16);
 *             2^k built in the exponent bits.  y is clamped to
 *             [-110, 90] first: exp of either end already rounds to 0 or
 *             inf in f32, so the clamp changes no f32 result.
 *   expm1(y): the same reduction, e^r - 1 by its series without the 1, then
 *             2^k (e^r - 1) + (2^k - 1): exact for k = 0, so small y keep
 *             their relative accuracy.
 *   tanh(x):  expm1(2|x|) / (expm1(2|x|) + 2) with x's sign; |x| clamped to
 *             20, where tanh is 1 in double. */

#define VM_N2(a, b) a##_##b
#define VM_N(a, b) VM_N2(a, b)
#define VD VM_N(vd, VM_ISA)
#define VL VM_N(vl, VM_ISA)
#define VF VM_N(vf, VM_ISA)
#define VM_FN(name) VM_N(name, VM_ISA)
#define VM_INLINE static inline __attribute__((always_inline, target(VM_TARGET)))
#define VM_EXTERN static __attribute__((target(VM_TARGET)))

typedef double VD __attribute__((vector_size(VM_W * 8)));
typedef int64_t VL __attribute__((vector_size(VM_W * 8)));
typedef float VF __attribute__((vector_size(VM_W * 4)));

/* m ? a : b, lane by lane (m lanes are all ones or all zeros) */
VM_INLINE VD VM_FN(sel)(VL m, VD a, VD b) {
  return (VD)(((VL)a & m) | ((VL)b & ~m));
}

VM_INLINE bool VM_FN(any_nan)(VD y) {
  VL m = y != y;
  int64_t acc = 0;
  for (int j = 0; j < VM_W; j++) acc |= m[j];
  return acc != 0;
}

VM_INLINE VD VM_FN(load)(const float *x) {
  VF f;
  memcpy(&f, x, sizeof f);
  return __builtin_convertvector(f, VD);
}

VM_INLINE void VM_FN(store)(float *d, VD v) {
  VF f = __builtin_convertvector(v, VF);
  memcpy(d, &f, sizeof f);
}

VM_INLINE VD VM_FN(clamp)(VD y, double lo, double hi) {
  VD vlo = (VD){0} + lo, vhi = (VD){0} + hi;
  y = VM_FN(sel)(y < vlo, vlo, y);
  return VM_FN(sel)(y > vhi, vhi, y);
}

/* k = round(y / ln2) (as a double and as 2^k), r = y - k ln2 */
VM_INLINE VD VM_FN(reduce)(VD y, VD *scale) {
  const double shift = 0x1.8p52; /* adding it rounds to an integer */
  VD t = y * VM_LOG2E + shift;
  VD k = t - shift;
  VD r = y - k * VM_LN2_HI; /* exact: LN2_HI has 32 trailing zero bits */
  r = r - k * VM_LN2_LO;
  VL bits = ((VL)t - (VL)((VD){0} + shift) + 1023) << 52;
  *scale = (VD)bits;
  return r;
}

/* e^r - 1 for |r| <= ln2/2, Taylor to r^13 */
VM_INLINE VD VM_FN(expm1_poly)(VD r) {
  VD p = (VD){0} + 0x1.6124613a86d09p-33; /* 1/13! */
  p = p * r + 0x1.1eed8eff8d898p-29;      /* 1/12! */
  p = p * r + 0x1.ae64567f544e4p-26;      /* 1/11! */
  p = p * r + 0x1.27e4fb7789f5cp-22;      /* 1/10! */
  p = p * r + 0x1.71de3a556c734p-19;      /* 1/9! */
  p = p * r + 0x1.a01a01a01a01ap-16;      /* 1/8! */
  p = p * r + 0x1.a01a01a01a01ap-13;      /* 1/7! */
  p = p * r + 0x1.6c16c16c16c17p-10;      /* 1/6! */
  p = p * r + 0x1.1111111111111p-7;       /* 1/5! */
  p = p * r + 0x1.5555555555555p-5;       /* 1/4! */
  p = p * r + 0x1.5555555555555p-3;       /* 1/3! */
  p = p * r + 0.5;
  return r + (r * r) * p;
}

VM_INLINE VD VM_FN(exp_core)(VD y) {
  VD s, r = VM_FN(reduce)(VM_FN(clamp)(y, -110.0, 90.0), &s);
  return s * VM_FN(expm1_poly)(r) + s;
}

/* tanh for y = |x| (sign applied by the caller) */
VM_INLINE VD VM_FN(tanh_abs)(VD a) {
  VD s, r = VM_FN(reduce)(VM_FN(clamp)(a + a, 0.0, 40.0), &s);
  VD e = s * VM_FN(expm1_poly)(r) + (s - 1.0);
  return e / (e + 2.0);
}

VM_EXTERN void VM_FN(vexp)(float *d, const float *x, int64_t n) {
  int64_t i = 0;
  for (; i + VM_W <= n; i += VM_W) {
    VD y = VM_FN(load)(x + i);
    if (VM_FN(any_nan)(y)) {
      vm_exp_scalar(d + i, x + i, VM_W);
      continue;
    }
    VM_FN(store)(d + i, VM_FN(exp_core)(y));
  }
  vm_exp_scalar(d + i, x + i, n - i);
}

VM_EXTERN void VM_FN(vtanh)(float *d, const float *x, int64_t n) {
  const VL sign = (VL){0} + INT64_MIN;
  int64_t i = 0;
  for (; i + VM_W <= n; i += VM_W) {
    VD y = VM_FN(load)(x + i);
    if (VM_FN(any_nan)(y)) {
      vm_tanh_scalar(d + i, x + i, VM_W);
      continue;
    }
    VD t = VM_FN(tanh_abs)((VD)((VL)y & ~sign));
    VM_FN(store)(d + i, (VD)((VL)t | ((VL)y & sign)));
  }
  vm_tanh_scalar(d + i, x + i, n - i);
}

VM_EXTERN void VM_FN(vlogistic)(float *d, const float *x, int64_t n) {
  int64_t i = 0;
  for (; i + VM_W <= n; i += VM_W) {
    VD y = VM_FN(load)(x + i);
    if (VM_FN(any_nan)(y)) {
      vm_logistic_scalar(d + i, x + i, VM_W);
      continue;
    }
    /* in f32, as the scalar loop: 1 / (1 + (float)exp(-x)) */
    VF e = __builtin_convertvector(VM_FN(exp_core)(-y), VF);
    VF r = 1.0f / (1.0f + e);
    memcpy(d + i, &r, sizeof r);
  }
  vm_logistic_scalar(d + i, x + i, n - i);
}

#undef VM_N2
#undef VM_N
#undef VD
#undef VL
#undef VF
#undef VM_FN
#undef VM_INLINE
#undef VM_EXTERN
