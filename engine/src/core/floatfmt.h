/* SPDX-License-Identifier: Apache-2.0 */
/* Floating-point formats narrower than f32 (and the common f32/f64 paths):
 * decoding a stored element to double, and encoding a double into a format
 * with round-to-nearest-even and the format's own rules for overflow,
 * infinities, NaN and negative zero.
 *
 * Storage follows types.h: f4/f6/f8 bit patterns in the low bits of one
 * byte, bf16/f16 as uint16_t bit patterns, f32/f64 native. */
#ifndef SHLO_FLOATFMT_H
#define SHLO_FLOATFMT_H

#include <stdint.h>

#include "shlo/types.h"

/* Value of the element of float type t stored at p (exact: every narrow
 * format is a subset of f64).  A NaN of an IEEE-like format or f8E4M3FN keeps
 * its sign and payload (moved to the top of the f64 fraction) and loads
 * quiet, as APFloat widens it; FNUZ and f8E8M0FNU NaNs load as f64's
 * default quiet NaN (0x7FF8000000000000).  Bits above a f4/f6
 * format's width are ignored.  Narrow formats decode through tables built
 * on first use (pthread_once; thread-safe). */
double shlo__float_load(shlo_elem_type t, const void *p);

/* Store v rounded to nearest-even into float type t at p, with one rounding
 * straight from double (subnormals of t included), as APFloat converts.
 * Formats with infinities (f16, bf16, f8E5M2, f8E4M3, f8E3M4) overflow to
 * +-inf.  NaN-only formats (f8E4M3FN, the FNUZ ones, f8E8M0FNU) overflow to
 * NaN, as MLIR's APFloat conversion does.  Finite-only formats (f4E2M1FN,
 * f6E2M3FN, f6E3M2FN) saturate to the largest magnitude (APFloat), inf
 * included; a NaN becomes a zero of the opposite sign (+NaN -> -0, -NaN ->
 * +0), as ml_dtypes/XLA do: their "NaN" for these formats is the -0
 * pattern.  FNUZ formats have no negative zero: -0 becomes +0.
 * NaN: IEEE-like formats keep the sign and the top payload bits and set the
 * quiet bit (double's default NaN gives f16 0x7E00, bf16 0x7FC0);
 * f8E4M3FN gives S.1111.111 keeping the sign; FNUZ gives 0x80.
 * f8E8M0FNU (unsigned powers of two): the nearest power of two, a tie
 * (1.5 * 2^k) rounding up; +-0 and anything below 2^-127 give 0x00
 * (2^-127: there is no zero); negative values, NaN, inf and values from
 * 1.5 * 2^127 up give NaN (0xFF).
 * f32 uses C's (float)v; f64 is a copy.
 * Never reads or writes more than shlo_elem_size(t) bytes at p. */
void shlo__float_store(shlo_elem_type t, double v, void *p);

/* Same for a value already rounded to f32 (avoids double rounding only when
 * the value came from f32 arithmetic; equivalent to store((double)v)). */
static inline void shlo_float_store_f32(shlo_elem_type t, float v, void *p) {
  shlo__float_store(t, (double)v, p);
}

/* stablehlo.reduce_precision on an f64 element, as the reference
 * interpreter does it on the bit pattern: round the mantissa to mant_bits
 * with nearest-even, then values whose exponent exceeds the exp_bits range
 * become +-inf and values at or below its subnormal range become +-0 (the
 * reduced format has no subnormals).  A NaN stays the same NaN when
 * mant_bits > 0 and becomes +inf when mant_bits == 0. */
double shlo__reduce_precision(double v, int exp_bits, int mant_bits);

/* The same for an element of float type t whose value is v (v must be
 * representable in t, e.g. loaded with shlo__float_load): the algorithm runs
 * on t's own bit pattern, as the reference interpreter does, so t's
 * subnormals and its exponent/mantissa widths count (e.g. e5m10 leaves every
 * f16 value unchanged, subnormals included, which the f64 version would
 * flush).  Returns a value representable in t; store it with
 * shlo__float_store.  For f64 (and non-float t) this is
 * shlo__reduce_precision. */
double shlo__float_reduce_precision(shlo_elem_type t, double v, int exp_bits,
                                   int mant_bits);

/* Bit-level helpers for f16 and bf16. */
uint16_t shlo__f16_from_double(double v);
double shlo__f16_to_double(uint16_t bits);
uint16_t shlo__bf16_from_double(double v);
double shlo__bf16_to_double(uint16_t bits);

/* The descriptor-driven bf16 encoder and decoder every other format uses:
 * the reference that the fast bf16 paths (above and core/bf16conv.h) must
 * match bit for bit; tests compare against them. */
uint16_t shlo__bf16_from_double_ref(double v);
double shlo__bf16_to_double_ref(uint16_t bits);

/* ULP distance between two values of float type t stored at a and b:
 * |order(a) - order(b)|, where order maps the stored patterns monotonically
 * to integers (sign-magnitude to signed, +0 and -0 both 0; for f8E8M0FNU the
 * exponent field).  Adjacent values are 1 apart; inf counts as one past the
 * largest finite value.  Two NaNs give 0, one NaN gives UINT64_MAX. */
uint64_t shlo__float_ulp_distance(shlo_elem_type t, const void *a, const void *b);

#endif
