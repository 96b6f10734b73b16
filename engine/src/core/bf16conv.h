/* SPDX-License-Identifier: Apache-2.0 */
/* f32 <-> bf16 on bit patterns, for whole arrays and single elements
 * (and f32 <-> f16 for whole arrays).
 *
 * Bit for bit what floatfmt's descriptor-driven path gives (f32 widened to
 * double, then rounded once; bf16 decoded to double, then narrowed to
 * f32): bf16 has f32's exponent range, so rounding the top 16 bits of the
 * f32 pattern to nearest-even is that one rounding, subnormals and the
 * overflow to inf included.  A NaN keeps its sign and its top 7 payload
 * bits and comes out quiet (bit 6 of bf16 / bit 22 of f32 set), as APFloat
 * and the hardware's f32 <-> f64 conversions do.  No MXCSR state (DAZ,
 * FTZ) is read: the work is integer arithmetic.
 *
 * The array functions use AVX-512F where the CPU has it (picked once, at
 * first call) and a scalar loop elsewhere; both give the same bits. */
#ifndef SHLO_BF16CONV_H
#define SHLO_BF16CONV_H

#include <stdint.h>

#define SHLO__F32_ABS 0x7FFFFFFFu
#define SHLO__F32_INF 0x7F800000u

/* bf16 pattern of the f32 with pattern x. */
static inline uint16_t shlo__bf16_from_f32_bits(uint32_t x) {
  if ((x & SHLO__F32_ABS) > SHLO__F32_INF)
    return (uint16_t)((x >> 16) | 0x40u); /* NaN: keep the top payload, quiet */
  /* Adding 0x7FFF plus the kept part's lowest bit rounds half to even; a
   * carry into the exponent is the correct next binade (or inf). */
  return (uint16_t)((x + 0x7FFFu + ((x >> 16) & 1u)) >> 16);
}

/* f32 pattern of the bf16 with pattern h (exact; NaNs come out quiet). */
static inline uint32_t shlo__bf16_to_f32_bits(uint16_t h) {
  const uint32_t x = (uint32_t)h << 16;
  return (x & SHLO__F32_ABS) > SHLO__F32_INF ? x | 0x00400000u : x;
}

/* dst[i] = the bf16 pattern of src[i], i < n.  dst and src must not
 * overlap.  Never touches memory outside the n elements of each. */
void shlo__bf16_from_f32_n(uint16_t *dst, const float *src, int64_t n);

/* dst[i] = the f32 value of the bf16 pattern src[i], i < n (no overlap). */
void shlo__bf16_to_f32_n(float *dst, const uint16_t *src, int64_t n);

/* The same for f16: dst[i] = src[i] rounded to nearest-even (overflow to
 * inf, NaNs quiet with their top payload bits), and back exactly; bit for
 * bit floatfmt's shlo__f16_from_double / shlo__f16_to_double. */
void shlo__f16_from_f32_n(uint16_t *dst, const float *src, int64_t n);
void shlo__f16_to_f32_n(float *dst, const uint16_t *src, int64_t n);

/* The ISA the array functions use on this CPU: "avx512f" or "scalar". */
const char *shlo__bf16conv_isa(void);

#endif
