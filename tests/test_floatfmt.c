/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests for floatfmt: exact decoding, round-to-nearest-even encoding
 * with each format family's overflow/NaN rules, reduce_precision and ULP
 * distance.  Rounding is checked against an oracle that knows nothing of
 * the encoder's bit tricks: it finds the two neighbouring values of a
 * format among its decoded patterns and compares with their midpoint. */
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "core/floatfmt.h"
#include "bits.h"

/* ---- helpers ------------------------------------------------------------ */

static uint8_t enc8(shlo_elem_type t, double v) {
  uint8_t b = 0xAA;
  shlo__float_store(t, v, &b);
  return b;
}

static double dec8(shlo_elem_type t, uint8_t b) {
  return shlo__float_load(t, &b);
}

/* Deterministic xorshift so failures reproduce. */
static uint64_t g_rng = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void) {
  g_rng ^= g_rng << 13;
  g_rng ^= g_rng >> 7;
  g_rng ^= g_rng << 17;
  return g_rng;
}

typedef enum { FAM_IEEE, FAM_FN, FAM_FNUZ, FAM_FINITE, FAM_E8M0 } family;

typedef struct {
  shlo_elem_type t;
  int width;  /* pattern bits */
  int mant;   /* mantissa bits */
  family fam;
} fmt_info;

static const fmt_info k_fmts[] = {
    {SHLO_F4E2M1FN, 4, 1, FAM_FINITE},
    {SHLO_F6E2M3FN, 6, 3, FAM_FINITE},
    {SHLO_F6E3M2FN, 6, 2, FAM_FINITE},
    {SHLO_F8E3M4, 8, 4, FAM_IEEE},
    {SHLO_F8E4M3, 8, 3, FAM_IEEE},
    {SHLO_F8E4M3FN, 8, 3, FAM_FN},
    {SHLO_F8E4M3FNUZ, 8, 3, FAM_FNUZ},
    {SHLO_F8E4M3B11FNUZ, 8, 3, FAM_FNUZ},
    {SHLO_F8E5M2, 8, 2, FAM_IEEE},
    {SHLO_F8E5M2FNUZ, 8, 2, FAM_FNUZ},
    {SHLO_F8E8M0FNU, 8, 0, FAM_E8M0},
};
#define N_FMTS (sizeof k_fmts / sizeof k_fmts[0])

static unsigned sign_bit(const fmt_info *f) { return 1u << (f->width - 1); }

/* Largest finite magnitude pattern, by family. */
static unsigned max_mag(const fmt_info *f) {
  const unsigned all = sign_bit(f) - 1;
  switch (f->fam) {
    case FAM_IEEE: return all - (1u << f->mant);
    case FAM_FN: return all - 1;
    default: return all;
  }
}

/* Pattern an overflow (or inf) of sign s produces. */
static unsigned overflow_pattern(const fmt_info *f, bool neg) {
  const unsigned s = neg ? sign_bit(f) : 0;
  switch (f->fam) {
    case FAM_IEEE: return s | (max_mag(f) + 1);
    case FAM_FN: return s | (sign_bit(f) - 1);
    case FAM_FNUZ: return sign_bit(f);
    default: return s | max_mag(f);
  }
}

/* Oracle: round |v| (finite) to the format by comparing with midpoints of
 * neighbouring decoded values.  Not for E8M0. */
static unsigned oracle_encode(const fmt_info *f, double v) {
  const bool neg = signbit(v);
  const double a = fabs(v);
  const unsigned top = max_mag(f);
  const double maxv = dec8(f->t, (uint8_t)top);
  unsigned mag;
  if (a > maxv) {
    const double prev = dec8(f->t, (uint8_t)(top - 1));
    const double limit = maxv + (maxv - prev) / 2;
    if (a > limit || (a == limit && (top & 1)))
      return overflow_pattern(f, neg);
    mag = top;
  } else {
    unsigned lo = 0, hi = top;  /* value(lo) <= a <= value(hi) */
    while (hi - lo > 1) {
      const unsigned mid = (lo + hi) / 2;
      if (dec8(f->t, (uint8_t)mid) <= a)
        lo = mid;
      else
        hi = mid;
    }
    const double vl = dec8(f->t, (uint8_t)lo), vh = dec8(f->t, (uint8_t)hi);
    const double midv = (vl + vh) / 2;  /* exact: few significant bits */
    if (a == vl)
      mag = lo;
    else if (a == vh)
      mag = hi;
    else if (a < midv)
      mag = lo;
    else if (a > midv)
      mag = hi;
    else
      mag = (lo & 1) ? hi : lo;
  }
  if (mag == 0 && f->fam == FAM_FNUZ)
    return 0;
  return (neg ? sign_bit(f) : 0) | mag;
}

static bool is_nan_pattern(const fmt_info *f, unsigned p) {
  const unsigned mag = p & (sign_bit(f) - 1);
  switch (f->fam) {
    case FAM_IEEE: return mag > max_mag(f) + 1;
    case FAM_FN: return mag == sign_bit(f) - 1;
    case FAM_FNUZ: return p == sign_bit(f);
    case FAM_E8M0: return p == 0xFF;
    default: return false;
  }
}

/* A random double near the format's range: random sign, exponent in
 * [lo, hi], random 52-bit fraction; sometimes snapped to few bits so exact
 * values and midpoints show up. */
static double random_double(int lo, int hi) {
  const uint64_t r = rnd();
  const int e = lo + (int)(r % (uint64_t)(hi - lo + 1));
  uint64_t frac = rnd() & 0x000FFFFFFFFFFFFFull;
  if (r & 0x100)
    frac &= ~((1ull << (52 - 6)) - 1);  /* 6 fraction bits */
  double v = ldexp(1.0 + (double)frac / 4503599627370496.0, e);
  return (r & 0x200) ? -v : v;
}

/* ---- 8-bit-or-narrower formats ------------------------------------------- */

static void test_narrow_roundtrip_all_patterns(void **state) {
  (void)state;
  for (size_t k = 0; k < N_FMTS; k++) {
    const fmt_info *f = &k_fmts[k];
    for (unsigned p = 0; p < (1u << f->width); p++) {
      const double v = dec8(f->t, (uint8_t)p);
      unsigned want = p;
      if (f->fam == FAM_IEEE && is_nan_pattern(f, p))
        want = p | (1u << (f->mant - 1));  /* stored NaNs come back quiet */
      const unsigned got = enc8(f->t, v);
      if (got != want)
        fail_msg("%s: pattern 0x%02X -> %.17g -> 0x%02X, want 0x%02X",
                 shlo_elem_name(f->t), p, v, got, want);
      assert_int_equal(isnan(v) != 0, is_nan_pattern(f, p));
    }
  }
}

static void test_narrow_high_bits_ignored(void **state) {
  (void)state;
  assert_true(dec8(SHLO_F4E2M1FN, 0xF3) == 1.5);
  assert_true(dec8(SHLO_F4E2M1FN, 0x1F) == -6.0);
  assert_true(dec8(SHLO_F6E2M3FN, 0xC8) == 1.0);
  assert_true(dec8(SHLO_F6E3M2FN, 0x40 | 0x1F) == 28.0);
  /* Stores write only the format's bits. */
  assert_int_equal(enc8(SHLO_F4E2M1FN, -6.0), 0x0F);
  assert_int_equal(enc8(SHLO_F6E2M3FN, -7.5), 0x3F);
}

static void test_narrow_monotonic(void **state) {
  (void)state;
  for (size_t k = 0; k < N_FMTS; k++) {
    const fmt_info *f = &k_fmts[k];
    if (f->fam == FAM_E8M0)
      continue;
    for (unsigned p = 1; p <= max_mag(f); p++) {
      const double a = dec8(f->t, (uint8_t)(p - 1)), b = dec8(f->t, (uint8_t)p);
      assert_true(a < b);
      if (f->fam != FAM_FNUZ || p - 1 != 0)
        assert_true(dec8(f->t, (uint8_t)(sign_bit(f) | p)) == -b);
    }
  }
}

typedef struct {
  shlo_elem_type t;
  double max, min_sub, one;
  uint8_t max_p, min_sub_p, one_p;
} known_row;

static void test_narrow_known_values(void **state) {
  (void)state;
  static const known_row rows[] = {
      {SHLO_F4E2M1FN, 6.0, 0.5, 1.0, 0x07, 0x01, 0x02},
      {SHLO_F6E2M3FN, 7.5, 0.125, 1.0, 0x1F, 0x01, 0x08},
      {SHLO_F6E3M2FN, 28.0, 0.0625, 1.0, 0x1F, 0x01, 0x0C},
      {SHLO_F8E3M4, 15.5, 0x1p-6, 1.0, 0x6F, 0x01, 0x30},
      {SHLO_F8E4M3, 240.0, 0x1p-9, 1.0, 0x77, 0x01, 0x38},
      {SHLO_F8E4M3FN, 448.0, 0x1p-9, 1.0, 0x7E, 0x01, 0x38},
      {SHLO_F8E4M3FNUZ, 240.0, 0x1p-10, 1.0, 0x7F, 0x01, 0x40},
      {SHLO_F8E4M3B11FNUZ, 30.0, 0x1p-13, 1.0, 0x7F, 0x01, 0x58},
      {SHLO_F8E5M2, 57344.0, 0x1p-16, 1.0, 0x7B, 0x01, 0x3C},
      {SHLO_F8E5M2FNUZ, 57344.0, 0x1p-17, 1.0, 0x7F, 0x01, 0x40},
      {SHLO_F8E8M0FNU, 0x1p127, 0x1p-127, 1.0, 0xFE, 0x00, 0x7F},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    const known_row *r = &rows[i];
    assert_true(dec8(r->t, r->max_p) == r->max);
    assert_true(dec8(r->t, r->min_sub_p) == r->min_sub);
    assert_true(dec8(r->t, r->one_p) == r->one);
    assert_int_equal(enc8(r->t, r->max), r->max_p);
    assert_int_equal(enc8(r->t, r->min_sub), r->min_sub_p);
    assert_int_equal(enc8(r->t, r->one), r->one_p);
  }
  /* A few interior values. */
  assert_int_equal(enc8(SHLO_F8E4M3FN, -3.5), 0xC6);
  assert_int_equal(enc8(SHLO_F8E5M2, 0.3125), 0x35);
  assert_true(dec8(SHLO_F8E4M3FN, 0x07) == 7 * 0x1p-9);  /* largest subnormal */
  assert_true(dec8(SHLO_F8E5M2FNUZ, 0x04) == 0x1p-15);   /* smallest normal */
}

/* Midpoints of every pair of neighbours, and just either side of them. */
static void test_narrow_midpoints_ties_to_even(void **state) {
  (void)state;
  for (size_t k = 0; k < N_FMTS; k++) {
    const fmt_info *f = &k_fmts[k];
    if (f->fam == FAM_E8M0)
      continue;
    for (unsigned p = 0; p < max_mag(f); p++) {
      const double a = dec8(f->t, (uint8_t)p), b = dec8(f->t, (uint8_t)(p + 1));
      const double mid = (a + b) / 2;
      const unsigned even = (p & 1) ? p + 1 : p;
      assert_int_equal(enc8(f->t, mid), even);
      assert_int_equal(enc8(f->t, nextafter(mid, 0)), p);
      assert_int_equal(enc8(f->t, nextafter(mid, INFINITY)), p + 1);
      const unsigned neg_even = (even == 0 && f->fam == FAM_FNUZ)
                                    ? 0 : (sign_bit(f) | even);
      assert_int_equal(enc8(f->t, -mid), neg_even);
    }
  }
  /* The classic ones. */
  assert_int_equal(enc8(SHLO_F8E4M3FN, 1.0625), 0x38);  /* 1 | 1.125 -> 1 */
  assert_int_equal(enc8(SHLO_F8E4M3FN, 1.1875), 0x3A);  /* 1.125 | 1.25 */
  assert_int_equal(enc8(SHLO_F4E2M1FN, 2.5), 0x04);     /* 2 | 3 -> 2 */
  assert_int_equal(enc8(SHLO_F4E2M1FN, 5.0), 0x06);     /* 4 | 6 -> 4 */
}

static void test_narrow_random_vs_oracle(void **state) {
  (void)state;
  for (size_t k = 0; k < N_FMTS; k++) {
    const fmt_info *f = &k_fmts[k];
    if (f->fam == FAM_E8M0)
      continue;
    for (int i = 0; i < 100000; i++) {
      const double v = random_double(-24, 20);
      const unsigned want = oracle_encode(f, v);
      const unsigned got = enc8(f->t, v);
      if (got != want)
        fail_msg("%s: %a -> 0x%02X, oracle 0x%02X", shlo_elem_name(f->t), v,
                 got, want);
    }
  }
}

static void test_narrow_overflow(void **state) {
  (void)state;
  for (size_t k = 0; k < N_FMTS; k++) {
    const fmt_info *f = &k_fmts[k];
    if (f->fam == FAM_E8M0)
      continue;
    const unsigned top = max_mag(f);
    const double maxv = dec8(f->t, (uint8_t)top);
    const double limit = maxv + (maxv - dec8(f->t, (uint8_t)(top - 1))) / 2;
    /* Max is odd (mantissa all ones) except in f8E4M3FN, whose tie stays. */
    const unsigned at_limit = (top & 1) ? overflow_pattern(f, false) : top;
    assert_int_equal(enc8(f->t, limit), at_limit);
    assert_int_equal(enc8(f->t, nextafter(limit, 0)), top);
    assert_int_equal(enc8(f->t, nextafter(limit, INFINITY)),
                     overflow_pattern(f, false));
    assert_int_equal(enc8(f->t, -1e300), overflow_pattern(f, true));
    assert_int_equal(enc8(f->t, INFINITY), overflow_pattern(f, false));
    assert_int_equal(enc8(f->t, -INFINITY), overflow_pattern(f, true));
  }
  /* Spelled out per family. */
  assert_int_equal(enc8(SHLO_F8E5M2, 61440.0), 0x7C);  /* tie above max: inf */
  assert_int_equal(enc8(SHLO_F8E5M2, 61439.0), 0x7B);
  assert_int_equal(enc8(SHLO_F8E5M2, -INFINITY), 0xFC);
  assert_int_equal(enc8(SHLO_F8E4M3FN, 464.0), 0x7E);  /* tie to even 448 */
  assert_int_equal(enc8(SHLO_F8E4M3FN, 465.0), 0x7F);  /* NaN */
  assert_int_equal(enc8(SHLO_F8E4M3FN, 480.0), 0x7F);
  assert_int_equal(enc8(SHLO_F8E4M3FN, -1000.0), 0xFF);
  assert_int_equal(enc8(SHLO_F8E4M3FNUZ, 248.0), 0x80);
  assert_int_equal(enc8(SHLO_F8E4M3FNUZ, -248.0), 0x80);
  assert_int_equal(enc8(SHLO_F8E4M3FNUZ, 247.0), 0x7F);
  assert_int_equal(enc8(SHLO_F4E2M1FN, 100.0), 0x07);   /* saturate */
  assert_int_equal(enc8(SHLO_F4E2M1FN, -INFINITY), 0x0F);
  assert_int_equal(enc8(SHLO_F6E3M2FN, 1e9), 0x1F);
}

static void test_narrow_nan_zero_underflow(void **state) {
  (void)state;
  const double qnan = from64(0x7FF8000000000000ull);
  const double neg_qnan = from64(0xFFF8000000000000ull);
  assert_int_equal(enc8(SHLO_F8E5M2, qnan), 0x7E);
  assert_int_equal(enc8(SHLO_F8E5M2, neg_qnan), 0xFE);
  assert_int_equal(enc8(SHLO_F8E4M3, qnan), 0x7C);
  assert_int_equal(enc8(SHLO_F8E3M4, qnan), 0x78);
  /* Payload: top bits kept, quiet bit set. */
  assert_int_equal(enc8(SHLO_F8E5M2, from64(0x7FF4000000000000ull)), 0x7F);
  assert_int_equal(enc8(SHLO_F8E5M2, from64(0x7FF0000000000001ull)), 0x7E);
  assert_int_equal(enc8(SHLO_F8E4M3FN, qnan), 0x7F);
  assert_int_equal(enc8(SHLO_F8E4M3FN, neg_qnan), 0xFF);
  assert_int_equal(enc8(SHLO_F8E4M3FNUZ, qnan), 0x80);
  assert_int_equal(enc8(SHLO_F8E4M3B11FNUZ, neg_qnan), 0x80);
  assert_int_equal(enc8(SHLO_F8E5M2FNUZ, qnan), 0x80);
  assert_int_equal(enc8(SHLO_F8E8M0FNU, qnan), 0xFF);
  /* Finite-only: NaN -> zero of the opposite sign (ml_dtypes). */
  assert_int_equal(enc8(SHLO_F4E2M1FN, qnan), 0x08);
  assert_int_equal(enc8(SHLO_F4E2M1FN, neg_qnan), 0x00);
  assert_int_equal(enc8(SHLO_F6E2M3FN, qnan), 0x20);
  assert_int_equal(enc8(SHLO_F6E3M2FN, neg_qnan), 0x00);
  /* Decoded NaNs. */
  assert_true(isnan(dec8(SHLO_F8E4M3FN, 0x7F)));
  assert_true(isnan(dec8(SHLO_F8E4M3FN, 0xFF)));
  assert_true(!isnan(dec8(SHLO_F8E4M3FN, 0x7E)));
  assert_true(isnan(dec8(SHLO_F8E4M3FNUZ, 0x80)));
  assert_true(isinf(dec8(SHLO_F8E5M2, 0xFC)) && dec8(SHLO_F8E5M2, 0xFC) < 0);
  assert_true(bits64(dec8(SHLO_F8E4M3FN, 0x7F)) == 0x7FFE000000000000ull);
  /* Widened NaNs keep sign and payload and come out quiet (APFloat). */
  assert_true(bits64(dec8(SHLO_F8E5M2, 0xFD)) == 0xFFFC000000000000ull);
  assert_true(bits64(shlo__f16_to_double(0x7C01)) == 0x7FF8040000000000ull);
  assert_true(bits64(dec8(SHLO_F8E5M2FNUZ, 0x80)) == 0x7FF8000000000000ull);
  /* Zeros. */
  assert_int_equal(enc8(SHLO_F8E5M2, -0.0), 0x80);
  assert_int_equal(enc8(SHLO_F8E4M3FNUZ, -0.0), 0x00);
  assert_int_equal(enc8(SHLO_F8E5M2FNUZ, -0.0), 0x00);
  assert_int_equal(enc8(SHLO_F4E2M1FN, -0.0), 0x08);
  assert_true(signbit(dec8(SHLO_F8E5M2, 0x80)));
  /* Underflow keeps the sign, except where -0 does not exist. */
  assert_int_equal(enc8(SHLO_F8E5M2, 0x1p-18), 0x00);
  assert_int_equal(enc8(SHLO_F8E5M2, -0x1p-18), 0x80);
  assert_int_equal(enc8(SHLO_F8E5M2, 0x1p-17), 0x00);        /* tie -> 0 */
  assert_int_equal(enc8(SHLO_F8E5M2, 0x1.8p-17), 0x01);
  assert_int_equal(enc8(SHLO_F8E4M3FNUZ, -0x1p-12), 0x00);
  assert_int_equal(enc8(SHLO_F8E4M3FN, 5e-324), 0x00);       /* f64 subnormal */
  assert_int_equal(enc8(SHLO_F8E4M3FN, -5e-324), 0x80);
}

static void test_e8m0(void **state) {
  (void)state;
  const shlo_elem_type t = SHLO_F8E8M0FNU;
  assert_int_equal(enc8(t, 1.0), 0x7F);
  assert_int_equal(enc8(t, 1.4999999), 0x7F);
  assert_int_equal(enc8(t, 1.5), 0x80);      /* tie rounds up */
  assert_int_equal(enc8(t, 0.75), 0x7F);
  assert_int_equal(enc8(t, 3.0), 0x81);
  assert_int_equal(enc8(t, 0x1p127), 0xFE);
  assert_int_equal(enc8(t, 0x1.7ffp127), 0xFE);
  assert_int_equal(enc8(t, 0x1.8p127), 0xFF);  /* overflow -> NaN */
  assert_int_equal(enc8(t, 1e300), 0xFF);
  assert_int_equal(enc8(t, 0x1p-127), 0x00);
  assert_int_equal(enc8(t, 0x1p-200), 0x00);  /* underflow -> smallest */
  assert_int_equal(enc8(t, 0.0), 0x00);
  assert_int_equal(enc8(t, -0.0), 0x00);
  assert_int_equal(enc8(t, -1.0), 0xFF);
  assert_int_equal(enc8(t, INFINITY), 0xFF);
  assert_int_equal(enc8(t, -INFINITY), 0xFF);
  assert_true(dec8(t, 0x00) == 0x1p-127);
  assert_true(dec8(t, 0x7F) == 1.0);
  assert_true(dec8(t, 0x80) == 2.0);
  assert_true(dec8(t, 0xFE) == 0x1p127);
  assert_true(isnan(dec8(t, 0xFF)));
  for (int i = 0; i < 100000; i++) {
    const double v = fabs(random_double(-140, 140));
    const int e = ilogb(v);
    const double m = v / ldexp(1.0, e);  /* [1, 2) */
    int want_e = m >= 1.5 ? e + 1 : e;
    unsigned want = want_e < -127 ? 0x00 : want_e > 127 ? 0xFF
                                                        : (unsigned)(want_e + 127);
    assert_int_equal(enc8(t, v), want);
  }
}

/* ---- f16 / bf16 --------------------------------------------------------- */

static void test_f16_roundtrip_all(void **state) {
  (void)state;
  for (unsigned h = 0; h < 65536; h++) {
    const double v = shlo__f16_to_double((uint16_t)h);
    const bool nan = (h & 0x7C00) == 0x7C00 && (h & 0x03FF);
    const unsigned want = nan ? (h | 0x0200) : h;
    const unsigned got = shlo__f16_from_double(v);
    if (got != want)
      fail_msg("f16 0x%04X -> %a -> 0x%04X", h, v, got);
    uint16_t stored;
    shlo__float_store(SHLO_F16, v, &stored);
    assert_int_equal(stored, want);
    assert_true(bits64(shlo__float_load(SHLO_F16, &stored)) ==
                bits64(shlo__f16_to_double((uint16_t)want)));
  }
  assert_true(shlo__f16_to_double(0x3C00) == 1.0);
  assert_true(shlo__f16_to_double(0x7BFF) == 65504.0);
  assert_true(shlo__f16_to_double(0x0001) == 0x1p-24);
  assert_true(shlo__f16_to_double(0x03FF) == 1023 * 0x1p-24);
  assert_true(shlo__f16_to_double(0xFC00) == -INFINITY);
}

static void test_f16_rounding(void **state) {
  (void)state;
  assert_int_equal(shlo__f16_from_double(65504.0), 0x7BFF);
  assert_int_equal(shlo__f16_from_double(65519.99), 0x7BFF);
  assert_int_equal(shlo__f16_from_double(65520.0), 0x7C00);
  assert_int_equal(shlo__f16_from_double(-65520.0), 0xFC00);
  assert_int_equal(shlo__f16_from_double(0x1p-24), 0x0001);
  assert_int_equal(shlo__f16_from_double(0x1p-25), 0x0000);
  assert_int_equal(shlo__f16_from_double(-0x1p-25), 0x8000);
  assert_int_equal(shlo__f16_from_double(0x1.8p-25), 0x0001);
  assert_int_equal(shlo__f16_from_double(0x1.8p-24), 0x0002);  /* tie -> even */
  assert_int_equal(shlo__f16_from_double(0x1.ff8p-15), 0x03FF); /* max sub */
  assert_int_equal(shlo__f16_from_double(0x1.ffcp-15), 0x0400); /* to normal */
  assert_int_equal(shlo__f16_from_double(1.0 + 0x1p-11), 0x3C00);
  assert_int_equal(shlo__f16_from_double(1.0 + 3 * 0x1p-11), 0x3C02);
  /* Via f32 this would round twice (to the tie, then to even 0x3C00). */
  assert_int_equal(shlo__f16_from_double(1.0 + 0x1p-11 + 0x1p-40), 0x3C01);
  assert_int_equal(shlo__f16_from_double(from64(0x7FF8000000000000ull)), 0x7E00);
  assert_int_equal(shlo__f16_from_double(from64(0xFFF8000000000000ull)), 0xFE00);
  assert_int_equal(shlo__f16_from_double(INFINITY), 0x7C00);
  /* Every midpoint between f16 neighbours, and either side of it. */
  for (unsigned p = 0; p < 0x7BFF; p++) {
    const double a = shlo__f16_to_double((uint16_t)p);
    const double b = shlo__f16_to_double((uint16_t)(p + 1));
    const double mid = (a + b) / 2;
    assert_int_equal(shlo__f16_from_double(mid), (p & 1) ? p + 1 : p);
    assert_int_equal(shlo__f16_from_double(nextafter(mid, 0)), p);
    assert_int_equal(shlo__f16_from_double(nextafter(mid, 1e9)), p + 1);
    assert_int_equal(shlo__f16_from_double(-nextafter(mid, 0)), 0x8000 | p);
  }
}

/* E5M2 is the top byte of f16: round f16 patterns to it with the classic
 * rounding-bias trick and compare (an independent bit-level oracle). */
static void test_e5m2_vs_f16_bits(void **state) {
  (void)state;
  for (unsigned h = 0; h < 65536; h++) {
    if ((h & 0x7C00) == 0x7C00)
      continue;  /* inf/NaN */
    const unsigned bias = ((h >> 8) & 1) + 0x7F;
    const unsigned want = ((h + bias) >> 8) & 0xFF;  /* may carry to inf */
    assert_int_equal(enc8(SHLO_F8E5M2, shlo__f16_to_double((uint16_t)h)), want);
  }
}

#if defined(__FLT16_MAX__)
/* The compiler's double -> _Float16 conversion rounds once, to nearest-even. */
static void test_f16_vs_compiler(void **state) {
  (void)state;
  for (int i = 0; i < 1000000; i++) {
    const double v = random_double(-27, 17);
    volatile _Float16 h = (_Float16)v;
    uint16_t want;
    memcpy(&want, (const void *)&h, sizeof want);
    const uint16_t got = shlo__f16_from_double(v);
    if (got != want)
      fail_msg("f16 %a -> 0x%04X, compiler 0x%04X", v, got, want);
  }
}
#endif

static void test_bf16(void **state) {
  (void)state;
  for (unsigned h = 0; h < 65536; h++) {
    const double v = shlo__bf16_to_double((uint16_t)h);
    const bool nan = (h & 0x7F80) == 0x7F80 && (h & 0x007F);
    /* bf16 is the top half of f32: the value must match exactly. */
    const uint32_t f32bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &f32bits, sizeof f);
    if (!nan)
      assert_true(v == (double)f);
    assert_int_equal(shlo__bf16_from_double(v), nan ? (h | 0x0040) : h);
  }
  assert_int_equal(shlo__bf16_from_double(1.0), 0x3F80);
  assert_int_equal(shlo__bf16_from_double(1.0 + 0x1p-8), 0x3F80);      /* tie */
  assert_int_equal(shlo__bf16_from_double(1.0 + 3 * 0x1p-8), 0x3F82);  /* tie */
  assert_int_equal(shlo__bf16_from_double(1.0 + 0x1p-8 + 0x1p-40), 0x3F81);
  /* Via f32 the 2^-30 would vanish and the tie round to even. */
  assert_int_equal(shlo__bf16_from_double(1.0 + 0x1p-8 + 0x1p-30), 0x3F81);
  assert_int_equal(shlo__bf16_from_double(-2.0), 0xC000);
  assert_int_equal(shlo__bf16_from_double(0x1.fep127), 0x7F7F);  /* max */
  assert_int_equal(shlo__bf16_from_double(0x1.ffp127), 0x7F80);  /* tie: inf */
  assert_int_equal(shlo__bf16_from_double(0x1.fefffp127), 0x7F7F);
  assert_int_equal(shlo__bf16_from_double(1e300), 0x7F80);
  assert_int_equal(shlo__bf16_from_double(-1e300), 0xFF80);
  assert_int_equal(shlo__bf16_from_double(0x1p-133), 0x0001);
  assert_int_equal(shlo__bf16_from_double(0x1p-134), 0x0000);
  assert_int_equal(shlo__bf16_from_double(0x1.0001p-134), 0x0001);
  assert_int_equal(shlo__bf16_from_double(from64(0x7FF8000000000000ull)), 0x7FC0);
  assert_int_equal(shlo__bf16_from_double(from64(0xFFF8000000000000ull)), 0xFFC0);
  assert_true(shlo__bf16_to_double(0x0001) == 0x1p-133);
  uint16_t s;
  shlo__float_store(SHLO_BF16, 3.0, &s);
  assert_int_equal(s, 0x4040);
  assert_true(shlo__float_load(SHLO_BF16, &s) == 3.0);
}

static void test_f32_f64(void **state) {
  (void)state;
  float f;
  shlo__float_store(SHLO_F32, 1.0 + 0x1p-24, &f);  /* tie -> even */
  assert_true(f == 1.0f);
  shlo__float_store(SHLO_F32, 1.0 + 0x1p-24 + 0x1p-50, &f);
  assert_true(f == 1.0f + 0x1p-23f);
  shlo__float_store(SHLO_F32, 1e300, &f);
  assert_true(isinf(f));
  assert_true(shlo__float_load(SHLO_F32, &f) == INFINITY);
  double d;
  shlo__float_store(SHLO_F64, -0.1, &d);
  assert_true(d == -0.1);
  assert_true(shlo__float_load(SHLO_F64, &d) == -0.1);
  uint8_t b = 0x38;  /* store_f32 agrees with store */
  shlo_float_store_f32(SHLO_F8E4M3FN, 2.0f, &b);
  assert_int_equal(b, 0x40);
}

/* ---- reduce_precision --------------------------------------------------- */

static void test_reduce_precision_conformance(void **state) {
  (void)state;
  /* interpret/reduce_precision.mlir */
  const double in[] = {INFINITY, from64(0x7FFFFFFFFFFFFFFFull),
                       from64(0x0000000000000001ull), 0.0, 65505.0, 65520.0};
  const uint64_t want[] = {0x7FF0000000000000ull, 0x7FFFFFFFFFFFFFFFull, 0, 0,
                           bits64(65504.0), 0x7FF0000000000000ull};
  for (int i = 0; i < 6; i++)
    assert_true(bits64(shlo__reduce_precision(in[i], 5, 10)) == want[i]);
  assert_true(bits64(shlo__reduce_precision(from64(0x7FFFFFFFFFFFFFFFull), 5,
                                           0)) == 0x7FF0000000000000ull);
}

static void test_reduce_precision_cases(void **state) {
  (void)state;
  /* Mantissa rounding, ties to even. */
  assert_true(shlo__reduce_precision(1.0 + 0x1p-11, 5, 10) == 1.0);
  assert_true(shlo__reduce_precision(1.0 + 3 * 0x1p-11, 5, 10) == 1.0 + 0x1p-9);
  assert_true(shlo__reduce_precision(1.0 + 0x1p-11 + 0x1p-30, 5, 10) ==
              1.0 + 0x1p-10);
  assert_true(shlo__reduce_precision(1.0 + 0x1p-8, 8, 7) == 1.0);
  assert_true(shlo__reduce_precision(1.75, 8, 0) == 2.0);
  assert_true(shlo__reduce_precision(1.5, 8, 0) == 2.0);   /* odd 1 -> even 2 */
  assert_true(shlo__reduce_precision(1.25, 8, 0) == 1.0);
  /* Exponent range: no subnormals in the reduced format. */
  assert_true(shlo__reduce_precision(0x1p-14, 5, 10) == 0x1p-14);
  assert_true(shlo__reduce_precision(0x1.ffcp-15, 5, 10) == 0.0);
  assert_true(shlo__reduce_precision(0x1.ffep-15, 5, 10) == 0x1p-14);
  assert_true(shlo__reduce_precision(0x1p-15, 5, 10) == 0.0);
  assert_true(shlo__reduce_precision(0x1p-24, 5, 10) == 0.0);
  const double nz = shlo__reduce_precision(-0x1p-20, 5, 10);
  assert_true(nz == 0.0 && signbit(nz));
  assert_true(shlo__reduce_precision(-65536.0, 5, 10) == -INFINITY);
  assert_true(shlo__reduce_precision(65504.0, 5, 10) == 65504.0);
  assert_true(shlo__reduce_precision(-INFINITY, 5, 10) == -INFINITY);
  assert_true(shlo__reduce_precision(0x1p127, 8, 23) == 0x1p127);
  assert_true(shlo__reduce_precision(0x1p128, 8, 23) == INFINITY);
  /* NaN: kept with a mantissa, inf without (also for a negative NaN). */
  const double nnan = from64(0xFFF8000000000123ull);
  assert_true(bits64(shlo__reduce_precision(nnan, 5, 3)) == bits64(nnan));
  assert_true(shlo__reduce_precision(nnan, 5, 0) == INFINITY);
  /* e11m52 is the identity on f64. */
  for (int i = 0; i < 10000; i++) {
    const double v = from64(rnd());
    if (isnan(v))
      continue;
    assert_true(bits64(shlo__reduce_precision(v, 11, 52)) == bits64(v));
  }
  /* Agrees with rounding to f16 wherever f16 is normal. */
  for (int i = 0; i < 100000; i++) {
    const double v = random_double(-14, 15);
    const double r = shlo__reduce_precision(v, 5, 10);
    const double h = shlo__f16_to_double(shlo__f16_from_double(v));
    assert_true(bits64(r) == bits64(h) || (isinf(r) && isinf(h)) ||
                fabs(h) < 0x1p-14);
  }
}

static void test_reduce_precision_typed(void **state) {
  (void)state;
  /* Type-wide formats leave the type's subnormals alone... */
  assert_true(shlo__float_reduce_precision(SHLO_F16, 0x1p-24, 5, 10) == 0x1p-24);
  assert_true(shlo__float_reduce_precision(SHLO_F32, 0x1p-149, 8, 23) ==
              0x1p-149);
  assert_true(shlo__float_reduce_precision(SHLO_BF16, 0x1p-133, 8, 7) ==
              0x1p-133);
  /* ...which the f64 version, working on f64's exponent range, flushes. */
  assert_true(shlo__reduce_precision(0x1p-24, 5, 10) == 0.0);
  /* Mantissa rounding on the f16 pattern of a subnormal (fixed quantum). */
  assert_true(shlo__float_reduce_precision(SHLO_F16, 0x1p-24, 5, 2) == 0.0);
  assert_true(shlo__float_reduce_precision(SHLO_F16, 0x1p-16, 5, 2) == 0x1p-16);
  /* Narrower exponent: f16 min normal flushed by e4. */
  assert_true(shlo__float_reduce_precision(SHLO_F16, 0x1p-14, 4, 10) == 0.0);
  assert_true(shlo__float_reduce_precision(SHLO_F16, 1.0 + 0x1p-10, 5, 9) ==
              1.0);
  assert_true(shlo__float_reduce_precision(SHLO_F16, 65504.0, 5, 9) ==
              INFINITY);
  assert_true(shlo__float_reduce_precision(SHLO_F32, 1.0 + 0x1p-8, 8, 7) ==
              1.0);
  /* Identity on every bf16 and f16 value at the type's own format. */
  for (unsigned h = 0; h < 65536; h++) {
    const double b = shlo__bf16_to_double((uint16_t)h);
    const double f = shlo__f16_to_double((uint16_t)h);
    if (!isnan(b))
      assert_true(bits64(shlo__float_reduce_precision(SHLO_BF16, b, 8, 7)) ==
                  bits64(b));
    if (!isnan(f))
      assert_true(bits64(shlo__float_reduce_precision(SHLO_F16, f, 5, 10)) ==
                  bits64(f));
  }
  /* f64 delegates. */
  assert_true(shlo__float_reduce_precision(SHLO_F64, 65520.0, 5, 10) ==
              INFINITY);
  assert_true(shlo__float_reduce_precision(SHLO_F16, NAN, 5, 0) == INFINITY);
  assert_true(isnan(shlo__float_reduce_precision(SHLO_F16, NAN, 5, 1)));
}

/* ---- ULP distance ------------------------------------------------------- */

static void test_ulp_distance(void **state) {
  (void)state;
  float fa = 1.0f, fb = nextafterf(1.0f, 2.0f);
  assert_int_equal(shlo__float_ulp_distance(SHLO_F32, &fa, &fb), 1);
  assert_int_equal(shlo__float_ulp_distance(SHLO_F32, &fb, &fa), 1);
  fa = -0.0f;
  fb = 0.0f;
  assert_int_equal(shlo__float_ulp_distance(SHLO_F32, &fa, &fb), 0);
  fa = -0x1p-149f;
  fb = 0x1p-149f;
  assert_int_equal(shlo__float_ulp_distance(SHLO_F32, &fa, &fb), 2);
  double da = -1.7976931348623157e308, db = 1.7976931348623157e308;
  assert_true(shlo__float_ulp_distance(SHLO_F64, &da, &db) ==
              2 * 0x7FEFFFFFFFFFFFFFull);
  da = 1.0;
  db = 1.0 + 0x1p-52 * 3;
  assert_int_equal(shlo__float_ulp_distance(SHLO_F64, &da, &db), 3);
  uint16_t ha = 0x3C00, hb = 0x3C05;
  assert_int_equal(shlo__float_ulp_distance(SHLO_F16, &ha, &hb), 5);
  ha = 0x8001;
  hb = 0x0001;
  assert_int_equal(shlo__float_ulp_distance(SHLO_F16, &ha, &hb), 2);
  ha = 0x7C00;  /* inf is one past max */
  hb = 0x7BFF;
  assert_int_equal(shlo__float_ulp_distance(SHLO_F16, &ha, &hb), 1);
  ha = 0x3F80;
  hb = 0xBF80;
  assert_int_equal(shlo__float_ulp_distance(SHLO_BF16, &ha, &hb), 2 * 0x3F80);
  uint8_t a = 0x7F, b = 0x81;
  assert_int_equal(shlo__float_ulp_distance(SHLO_F8E8M0FNU, &a, &b), 2);
  a = 0x01;
  b = 0x81;
  assert_int_equal(shlo__float_ulp_distance(SHLO_F8E4M3FNUZ, &a, &b), 2);
  a = 0x09;  /* f4: -0.5 vs 0.5 */
  b = 0x01;
  assert_int_equal(shlo__float_ulp_distance(SHLO_F4E2M1FN, &a, &b), 2);
  a = 0x00;  /* f4: +0 vs -0 */
  b = 0x08;
  assert_int_equal(shlo__float_ulp_distance(SHLO_F4E2M1FN, &a, &b), 0);
  a = 0x7E;
  b = 0xFE;
  assert_int_equal(shlo__float_ulp_distance(SHLO_F8E4M3FN, &a, &b), 2 * 0x7E);
  /* NaNs. */
  a = 0x7F;
  b = 0xFF;
  assert_int_equal(shlo__float_ulp_distance(SHLO_F8E4M3FN, &a, &b), 0);
  b = 0x00;
  assert_true(shlo__float_ulp_distance(SHLO_F8E4M3FN, &a, &b) == UINT64_MAX);
  /* Adjacent patterns are 1 apart across every finite value. */
  for (size_t k = 0; k < N_FMTS; k++) {
    const fmt_info *f = &k_fmts[k];
    const unsigned top = f->fam == FAM_E8M0 ? 0xFE : max_mag(f);
    for (unsigned p = 0; p < top; p++) {
      uint8_t x = (uint8_t)p, y = (uint8_t)(p + 1);
      assert_int_equal(shlo__float_ulp_distance(f->t, &x, &y), 1);
    }
  }
}

/* ---- concurrency: first use from several threads ------------------------- */

static void *decode_everything(void *arg) {
  double *sum = arg;
  for (int rep = 0; rep < 20; rep++)
    for (size_t k = 0; k < N_FMTS; k++)
      for (unsigned p = 0; p < 256; p++) {
        const double v = dec8(k_fmts[k].t, (uint8_t)p);
        if (isfinite(v))
          *sum += v;
      }
  return NULL;
}

/* Runs first in the group so the decode tables are built under contention. */
static void test_concurrent_first_use(void **state) {
  (void)state;
  pthread_t th[4];
  double sums[4] = {0};
  for (int i = 0; i < 4; i++)
    assert_int_equal(pthread_create(&th[i], NULL, decode_everything, &sums[i]),
                     0);
  for (int i = 0; i < 4; i++)
    assert_int_equal(pthread_join(th[i], NULL), 0);
  for (int i = 1; i < 4; i++)
    assert_true(sums[i] == sums[0]);
  assert_true(dec8(SHLO_F8E4M3FN, 0x7E) == 448.0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_concurrent_first_use),
      cmocka_unit_test(test_narrow_roundtrip_all_patterns),
      cmocka_unit_test(test_narrow_high_bits_ignored),
      cmocka_unit_test(test_narrow_monotonic),
      cmocka_unit_test(test_narrow_known_values),
      cmocka_unit_test(test_narrow_midpoints_ties_to_even),
      cmocka_unit_test(test_narrow_random_vs_oracle),
      cmocka_unit_test(test_narrow_overflow),
      cmocka_unit_test(test_narrow_nan_zero_underflow),
      cmocka_unit_test(test_e8m0),
      cmocka_unit_test(test_f16_roundtrip_all),
      cmocka_unit_test(test_f16_rounding),
      cmocka_unit_test(test_e5m2_vs_f16_bits),
#if defined(__FLT16_MAX__)
      cmocka_unit_test(test_f16_vs_compiler),
#endif
      cmocka_unit_test(test_bf16),
      cmocka_unit_test(test_f32_f64),
      cmocka_unit_test(test_reduce_precision_conformance),
      cmocka_unit_test(test_reduce_precision_cases),
      cmocka_unit_test(test_reduce_precision_typed),
      cmocka_unit_test(test_ulp_distance),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
