/* SPDX-License-Identifier: Apache-2.0 */
/* Narrow floating-point formats: exact decoding to double and
 * round-to-nearest-even encoding from double, bit for bit as LLVM's APFloat
 * (and so MLIR and the StableHLO reference interpreter) converts.
 *
 * Every format narrower than f32 is described by a small descriptor
 * (exponent bits, mantissa bits, bias, and how it spells inf/NaN); one
 * encoder and one decoder serve all of them.  Formats of 8 bits or fewer
 * decode through 256-entry tables built once, on first use. */
#include "core/floatfmt.h"

#include "core/bf16conv.h"

#include <assert.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

/* ---- f64 bit layout ---------------------------------------------------- */

#define F64_SIGN 0x8000000000000000ull
#define F64_EXP 0x7FF0000000000000ull
#define F64_FRAC 0x000FFFFFFFFFFFFFull
#define F64_IMPLICIT 0x0010000000000000ull
#define F64_QNAN 0x7FF8000000000000ull

static inline uint64_t bits_of(double v) {
  uint64_t b;
  memcpy(&b, &v, sizeof b);
  return b;
}

static inline double double_of(uint64_t b) {
  double v;
  memcpy(&v, &b, sizeof v);
  return v;
}

/* 2^k for k in the normal range of f64 (-1022..1023). */
static inline double pow2(int k) {
  return double_of((uint64_t)(k + 1023) << 52);
}

/* ---- format descriptors ------------------------------------------------- */

/* How a format spells its non-finite values (APFloat's fltNonfiniteBehavior
 * and fltNanEncoding, folded together). */
typedef enum {
  K_IEEE,    /* all-ones exponent: inf (mantissa 0) or NaN */
  K_FN,      /* no inf; NaN only S.1..1.1..1 (f8E4M3FN) */
  K_FNUZ,    /* no inf, no -0; NaN is the -0 pattern (0x80) */
  K_FINITE,  /* no inf, no NaN (f4/f6 MX formats) */
  K_E8M0,    /* unsigned powers of two, NaN 0xFF, no zero */
} fmt_kind;

typedef struct {
  uint8_t exp_bits;
  uint8_t mant_bits;
  uint8_t kind;  /* fmt_kind */
  int16_t bias;
} fmt_desc;

#define NARROW_FIRST SHLO_F4E2M1FN
#define NARROW_LAST SHLO_F8E8M0FNU
#define NARROW_COUNT (NARROW_LAST - NARROW_FIRST + 1)

_Static_assert(NARROW_COUNT == 11, "narrow float types must be contiguous");

/* Bias = 1 - APFloat's minExponent. */
static const fmt_desc k_narrow[NARROW_COUNT] = {
    [SHLO_F4E2M1FN - NARROW_FIRST] = {2, 1, K_FINITE, 1},
    [SHLO_F6E2M3FN - NARROW_FIRST] = {2, 3, K_FINITE, 1},
    [SHLO_F6E3M2FN - NARROW_FIRST] = {3, 2, K_FINITE, 3},
    [SHLO_F8E3M4 - NARROW_FIRST] = {3, 4, K_IEEE, 3},
    [SHLO_F8E4M3 - NARROW_FIRST] = {4, 3, K_IEEE, 7},
    [SHLO_F8E4M3FN - NARROW_FIRST] = {4, 3, K_FN, 7},
    [SHLO_F8E4M3FNUZ - NARROW_FIRST] = {4, 3, K_FNUZ, 8},
    [SHLO_F8E4M3B11FNUZ - NARROW_FIRST] = {4, 3, K_FNUZ, 11},
    [SHLO_F8E5M2 - NARROW_FIRST] = {5, 2, K_IEEE, 15},
    [SHLO_F8E5M2FNUZ - NARROW_FIRST] = {5, 2, K_FNUZ, 16},
    [SHLO_F8E8M0FNU - NARROW_FIRST] = {8, 0, K_E8M0, 127},
};

static const fmt_desc k_f16 = {5, 10, K_IEEE, 15};
static const fmt_desc k_bf16 = {8, 7, K_IEEE, 127};

static inline bool is_narrow(shlo_elem_type t) {
  return t >= NARROW_FIRST && t <= NARROW_LAST;
}

/* Width of the stored pattern; E8M0 has no sign bit. */
static inline int fmt_width(const fmt_desc *f) {
  return f->kind == K_E8M0 ? 8 : 1 + f->exp_bits + f->mant_bits;
}

static inline uint32_t fmt_sign_bit(const fmt_desc *f) {
  return 1u << (f->exp_bits + f->mant_bits);
}

/* Largest finite magnitude pattern (sign bit clear). */
static inline uint32_t fmt_max_mag(const fmt_desc *f) {
  const uint32_t all = fmt_sign_bit(f) - 1;
  switch ((fmt_kind)f->kind) {
    case K_IEEE: return all - (1u << f->mant_bits);  /* below the inf binade */
    case K_FN: return all - 1;                        /* all ones is NaN */
    default: return all;
  }
}

/* ---- encoding ----------------------------------------------------------- */

/* Magnitude pattern of the finite, non-negative double with bits `abs`,
 * rounded to nearest-even in f with an unbounded exponent (so the caller
 * sees overflow as a pattern above fmt_max_mag).  One rounding step, straight
 * from the 53-bit significand, also for results that land in f's subnormal
 * range. */
static uint64_t round_mag(const fmt_desc *f, uint64_t abs) {
  const int m = f->mant_bits;
  int de = (int)(abs >> 52);
  uint64_t sig = abs & F64_FRAC;
  if (de != 0)
    sig |= F64_IMPLICIT;
  else
    de = 1;  /* f64 subnormal: same scale as the smallest normal */
  const int x = de - 1023;
  const int emin = 1 - f->bias;
  int shift = 52 - m;
  uint64_t base = 0;  /* biased exponent - 1; the implicit bit adds the 1 */
  if (x < emin)
    shift += emin - x;  /* subnormal in f: fixed quantum 2^(emin - m) */
  else
    base = (uint64_t)(x + f->bias - 1);
  if (shift > 63)
    shift = 63;  /* sig < 2^53 < half: rounds to zero either way */
  const uint64_t q = sig >> shift;
  const uint64_t rem = sig & ((1ull << shift) - 1);
  const uint64_t half = 1ull << (shift - 1);
  const uint64_t up = rem > half || (rem == half && (q & 1));
  /* A carry out of the mantissa moves into the exponent field by itself. */
  return (base << m) + q + up;
}

static uint32_t enc_overflow(const fmt_desc *f, uint32_t s) {
  const uint32_t sbit = fmt_sign_bit(f);
  switch ((fmt_kind)f->kind) {
    case K_IEEE: return s | (fmt_max_mag(f) + 1);  /* inf */
    case K_FN: return s | (sbit - 1);               /* NaN keeps the sign */
    case K_FNUZ: return sbit;                       /* the only NaN */
    default: return s | fmt_max_mag(f);             /* saturate */
  }
}

/* inf or NaN (abs >= F64_EXP). */
static uint32_t enc_nonfinite(const fmt_desc *f, uint32_t s, uint64_t abs) {
  const uint32_t sbit = fmt_sign_bit(f);
  if (abs == F64_EXP)
    return enc_overflow(f, s);
  switch ((fmt_kind)f->kind) {
    case K_IEEE: {
      /* APFloat: keep the top payload bits and make the NaN quiet. */
      const int m = f->mant_bits;
      const uint32_t payload = (uint32_t)((abs & F64_FRAC) >> (52 - m));
      return s | (fmt_max_mag(f) + 1) | payload | (1u << (m - 1));
    }
    case K_FN: return s | (sbit - 1);
    case K_FNUZ: return sbit;
    default:
      /* No NaN: ml_dtypes (XLA) uses the -0 pattern as "quiet NaN" and
       * negates it for a negative NaN, so +NaN -> -0 and -NaN -> +0. */
      return s ^ sbit;
  }
}

/* f8E8M0FNU: the nearest power of two.  With a one-bit significand APFloat's
 * tie (1.5 * 2^k) rounds up, as ml_dtypes does. */
static uint32_t enc_e8m0(uint64_t b) {
  const uint64_t abs = b & ~F64_SIGN;
  if (abs >= F64_EXP)
    return 0xFF;  /* NaN, inf */
  if (abs == 0)
    return 0x00;  /* no zero: APFloat gives the smallest value, 2^-127 */
  if (b & F64_SIGN)
    return 0xFF;  /* unsigned format: negative -> NaN (ml_dtypes) */
  const int de = (int)(abs >> 52);
  if (de == 0)
    return 0x00;  /* far below 2^-127 */
  int x = de - 1023;
  if ((abs & F64_FRAC) >= (1ull << 51))
    x++;
  if (x < -127)
    return 0x00;  /* underflow -> smallest */
  if (x > 127)
    return 0xFF;  /* overflow -> NaN */
  return (uint32_t)(x + 127);
}

static uint32_t enc_narrow(const fmt_desc *f, double v) {
  const uint64_t b = bits_of(v);
  if (f->kind == K_E8M0)
    return enc_e8m0(b);
  const uint64_t abs = b & ~F64_SIGN;
  const uint32_t s = (b & F64_SIGN) ? fmt_sign_bit(f) : 0;
  if (abs >= F64_EXP)
    return enc_nonfinite(f, s, abs);
  const uint64_t mag = round_mag(f, abs);
  if (mag > fmt_max_mag(f))
    return enc_overflow(f, s);
  if (mag == 0 && f->kind == K_FNUZ)
    return 0;  /* no -0: its pattern is NaN */
  return s | (uint32_t)mag;
}

/* ---- decoding ----------------------------------------------------------- */

static double dec_e8m0(uint32_t bits) {
  if (bits == 0xFF)
    return double_of(F64_QNAN);
  return pow2((int)bits - 127);  /* 2^-127 .. 2^127, all normal in f64 */
}

/* inf (mant 0), or a quiet NaN with f's payload moved to the top of the
 * f64 fraction, as APFloat widens a NaN (a signalling one comes out quiet,
 * as from f32 -> f64 in hardware). */
static double nonfinite_with_payload(const fmt_desc *f, uint64_t sign,
                                     uint32_t mant) {
  const uint64_t quiet = mant ? F64_QNAN : F64_EXP;
  return double_of(sign | quiet | ((uint64_t)mant << (52 - f->mant_bits)));
}

static double dec_narrow(const fmt_desc *f, uint32_t bits) {
  if (f->kind == K_E8M0)
    return dec_e8m0(bits);
  const int m = f->mant_bits;
  const uint32_t sbit = fmt_sign_bit(f);
  const uint64_t sign = (bits & sbit) ? F64_SIGN : 0;
  const uint32_t mag = bits & (sbit - 1);
  const uint32_t ef = mag >> m;
  const uint32_t mant = mag & ((1u << m) - 1);
  switch ((fmt_kind)f->kind) {
    case K_IEEE:
      if (ef == (1u << f->exp_bits) - 1)
        return nonfinite_with_payload(f, sign, mant);
      break;
    case K_FN:
      if (mag == sbit - 1)
        return nonfinite_with_payload(f, sign, mant);
      break;
    case K_FNUZ:
      if (bits == sbit)
        return double_of(F64_QNAN);
      break;
    default: break;
  }
  if (ef == 0) {  /* zero or subnormal: mant * 2^(emin - m), exact */
    const double d = (double)mant * pow2(1 - f->bias - m);
    return sign ? -d : d;
  }
  return double_of(sign | ((uint64_t)((int)ef - f->bias + 1023) << 52) |
                   ((uint64_t)mant << (52 - m)));
}

/* ---- decode tables for the 8-bit-or-narrower formats --------------------- */

/* Entry i holds the value of pattern i with the bits above the format's
 * width ignored, so loads need no mask. */
static double g_dec[NARROW_COUNT][256];
static pthread_once_t g_dec_once = PTHREAD_ONCE_INIT;
static atomic_bool g_dec_ready;

static void build_dec_tables(void) {
  for (int k = 0; k < NARROW_COUNT; k++) {
    const uint32_t mask = (1u << fmt_width(&k_narrow[k])) - 1;
    for (uint32_t i = 0; i < 256; i++)
      g_dec[k][i] = dec_narrow(&k_narrow[k], i & mask);
  }
  atomic_store_explicit(&g_dec_ready, true, memory_order_release);
}

/* The atomic flag keeps the common path to one acquire load. */
static inline const double *dec_table(shlo_elem_type t) {
  if (!atomic_load_explicit(&g_dec_ready, memory_order_acquire))
    pthread_once(&g_dec_once, build_dec_tables);
  return g_dec[t - NARROW_FIRST];
}

/* ---- public: f16 / bf16 -------------------------------------------------- */

uint16_t shlo__f16_from_double(double v) {
  return (uint16_t)enc_narrow(&k_f16, v);
}

double shlo__f16_to_double(uint16_t bits) { return dec_narrow(&k_f16, bits); }

/* Doubles in bf16's normal range, [2^-126, 2^128): one nearest-even
 * rounding of the f64 pattern at bf16's 7 fraction bits, then the exponent
 * rebased (a carry out of the fraction lands in the next binade, or on inf
 * from just below 2^128).  The rest (subnormals, zeros, inf, NaN) takes the
 * descriptor path; both give the same bits (test_bf16conv checks). */
#define BF16_NORMAL_LO ((uint64_t)(1023 - 126) << 52)
#define BF16_NORMAL_HI ((uint64_t)(1023 + 128) << 52)
#define BF16_REBIAS ((uint64_t)(1023 - 127) << 7)

uint16_t shlo__bf16_from_double(double v) {
  const uint64_t b = bits_of(v);
  const uint64_t abs = b & ~F64_SIGN;
  if (abs < BF16_NORMAL_LO || abs >= BF16_NORMAL_HI)
    return (uint16_t)enc_narrow(&k_bf16, v);
  const uint64_t r = abs + ((1ull << 44) - 1) + ((abs >> 45) & 1);
  const uint32_t sign = (b & F64_SIGN) ? 0x8000u : 0;
  return (uint16_t)(sign | (uint32_t)((r >> 45) - BF16_REBIAS));
}

/* bf16 widens to f32 by a shift; f32 -> f64 is exact and keeps a quiet
 * NaN's payload at the top of the fraction, as dec_narrow does. */
double shlo__bf16_to_double(uint16_t bits) {
  const uint32_t x = shlo__bf16_to_f32_bits(bits);
  float f;
  memcpy(&f, &x, sizeof f);
  return (double)f;
}

uint16_t shlo__bf16_from_double_ref(double v) {
  return (uint16_t)enc_narrow(&k_bf16, v);
}

double shlo__bf16_to_double_ref(uint16_t bits) {
  return dec_narrow(&k_bf16, bits);
}

/* ---- public: load / store ------------------------------------------------ */

double shlo__float_load(shlo_elem_type t, const void *p) {
  switch (t) {
    case SHLO_F64: {
      double d;
      memcpy(&d, p, sizeof d);
      return d;
    }
    case SHLO_F32: {
      float f;
      memcpy(&f, p, sizeof f);
      return (double)f;
    }
    case SHLO_F16:
    case SHLO_BF16: {
      uint16_t h;
      memcpy(&h, p, sizeof h);
      return t == SHLO_F16 ? shlo__f16_to_double(h) : shlo__bf16_to_double(h);
    }
    default:
      if (is_narrow(t))
        return dec_table(t)[*(const uint8_t *)p];
      assert(!"shlo__float_load: not a float type");
      return double_of(F64_QNAN);
  }
}

void shlo__float_store(shlo_elem_type t, double v, void *p) {
  switch (t) {
    case SHLO_F64: memcpy(p, &v, sizeof v); return;
    case SHLO_F32: {
      const float f = (float)v;  /* C conversion rounds to nearest-even */
      memcpy(p, &f, sizeof f);
      return;
    }
    case SHLO_F16:
    case SHLO_BF16: {
      const uint16_t h = t == SHLO_F16 ? shlo__f16_from_double(v)
                                       : shlo__bf16_from_double(v);
      memcpy(p, &h, sizeof h);
      return;
    }
    default:
      if (is_narrow(t)) {
        *(uint8_t *)p = (uint8_t)enc_narrow(&k_narrow[t - NARROW_FIRST], v);
        return;
      }
      assert(!"shlo__float_store: not a float type");
  }
}

/* ---- raw patterns ------------------------------------------------------- */

/* Stored pattern width and mantissa width (APFloat precision - 1) of a
 * float type. */
static void pattern_shape(shlo_elem_type t, int *width, int *mant) {
  switch (t) {
    case SHLO_F64: *width = 64; *mant = 52; return;
    case SHLO_F32: *width = 32; *mant = 23; return;
    case SHLO_F16: *width = 16; *mant = 10; return;
    case SHLO_BF16: *width = 16; *mant = 7; return;
    default: {
      const fmt_desc *f = &k_narrow[t - NARROW_FIRST];
      *width = fmt_width(f);
      *mant = f->mant_bits;
      return;
    }
  }
}

static uint64_t load_pattern(const void *p, int width) {
  if (width <= 8)
    return *(const uint8_t *)p & ((1u << width) - 1);
  if (width == 16) {
    uint16_t h;
    memcpy(&h, p, sizeof h);
    return h;
  }
  if (width == 32) {
    uint32_t w;
    memcpy(&w, p, sizeof w);
    return w;
  }
  uint64_t d;
  memcpy(&d, p, sizeof d);
  return d;
}

/* ---- reduce_precision ---------------------------------------------------- */

/* The reference interpreter's bit-level algorithm on a `width`-bit pattern
 * with `src_m` mantissa bits: round the mantissa to m bits (nearest-even via
 * a rounding bias), then force values whose exponent is above the e-bit
 * range to inf and those at or below its subnormal range to zero; the
 * reduced format has no subnormals. */
static uint64_t reduce_pattern(uint64_t x, int width, int src_m, int e, int m) {
  const uint64_t wmask = width == 64 ? ~0ull : (1ull << width) - 1;
  if (m < src_m) {
    const int drop = src_m - m;
    const uint64_t last = 1ull << drop;
    const uint64_t bias = (last >> 1) - 1 + ((x & last) >> drop);
    x = ((x + bias) & ~(last - 1)) & wmask;
  }
  const int src_e = width - src_m - 1;
  if (e < src_e) {
    const uint64_t sign = 1ull << (width - 1);
    const uint64_t exp_mask = ((1ull << src_e) - 1) << src_m;
    const uint64_t src_bias = (1ull << (src_e - 1)) - 1;
    const uint64_t red_bias = (1ull << (e - 1)) - 1;
    const uint64_t xe = x & exp_mask;
    if (xe > ((src_bias + red_bias) << src_m))
      x = (x & sign) | exp_mask;
    if (xe <= ((src_bias - red_bias) << src_m))
      x &= sign;
  }
  return x;
}

static void clamp_rp_bits(int *e, int *m) {
  if (*e < 1)
    *e = 1;  /* the spec requires >= 1; keep the shifts defined */
  if (*e > 62)
    *e = 62;
  if (*m < 0)
    *m = 0;
}

double shlo__reduce_precision(double v, int exp_bits, int mant_bits) {
  clamp_rp_bits(&exp_bits, &mant_bits);
  if (isnan(v))
    return mant_bits > 0 ? v : INFINITY;  /* no mantissa: NaN can't survive */
  return double_of(reduce_pattern(bits_of(v), 64, 52, exp_bits, mant_bits));
}

double shlo__float_reduce_precision(shlo_elem_type t, double v, int exp_bits,
                                   int mant_bits) {
  if (t == SHLO_F64 || !(is_narrow(t) || t == SHLO_F32 || t == SHLO_F16 ||
                         t == SHLO_BF16))
    return shlo__reduce_precision(v, exp_bits, mant_bits);
  clamp_rp_bits(&exp_bits, &mant_bits);
  if (isnan(v))
    return mant_bits > 0 ? v : INFINITY;
  int width, src_m;
  pattern_shape(t, &width, &src_m);
  unsigned char buf[8] = {0};
  shlo__float_store(t, v, buf);
  uint64_t x = load_pattern(buf, width);
  x = reduce_pattern(x, width, src_m, exp_bits, mant_bits);
  memcpy(buf, &x, sizeof x);  /* little-endian host, as types.h assumes */
  return shlo__float_load(t, buf);
}

/* ---- ULP distance -------------------------------------------------------- */

/* Sign-magnitude pattern -> monotonic integer; +0 and -0 both map to 0. */
static int64_t pattern_order(uint64_t x, int width, bool is_unsigned) {
  if (is_unsigned)
    return (int64_t)x;
  const uint64_t sign = 1ull << (width - 1);
  const int64_t mag = (int64_t)(x & (sign - 1));
  return (x & sign) ? -mag : mag;
}

uint64_t shlo__float_ulp_distance(shlo_elem_type t, const void *a,
                                 const void *b) {
  const bool na = isnan(shlo__float_load(t, a));
  const bool nb = isnan(shlo__float_load(t, b));
  if (na || nb)
    return na && nb ? 0 : UINT64_MAX;
  int width, mant;
  pattern_shape(t, &width, &mant);
  const bool uns = t == SHLO_F8E8M0FNU;
  const int64_t oa = pattern_order(load_pattern(a, width), width, uns);
  const int64_t ob = pattern_order(load_pattern(b, width), width, uns);
  /* Unsigned subtraction: the f64 range spans more than INT64_MAX. */
  return oa >= ob ? (uint64_t)oa - (uint64_t)ob : (uint64_t)ob - (uint64_t)oa;
}
