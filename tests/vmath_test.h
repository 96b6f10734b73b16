/* SPDX-License-Identifier: Apache-2.0 */
/* What the tests of the f32 vector code (test_vmath.c, test_vchain.c)
 * share: float bit patterns, the edge values every variant must get
 * right, and a walk over the ISA variants this machine can run. */
#ifndef SHLO_TEST_VMATH_TEST_H
#define SHLO_TEST_VMATH_TEST_H

#include <stdint.h>
#include <string.h>

#include "kernels/vmath.h"

static inline float from_bits(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static const uint32_t edges[] = {
    0x00000000, 0x80000000, 0x7f800000, 0xff800000, /* +-0, +-inf */
    0x7fc00000, 0xffc00001, 0x7f800001, 0x7fa00000, /* NaNs, signalling */
    0x00000001, 0x807fffff, 0x00400000, 0x00800000, /* denormals, min normal */
    0x7f7fffff, 0xff7fffff, 0x3f800000, 0xbf800000, /* +-max, +-1 */
};

/* fn(ctx) once with each variant this machine has (portable, avx2,
 * avx512f), then the best one again; how many ran. */
static inline int each_vmath_variant(void (*fn)(void *ctx), void *ctx) {
  static const char *const isas[] = {"portable", "avx2", "avx512f"};
  const char *best = shlo__vmath_isa();
  int ran = 0;
  for (size_t k = 0; k < sizeof isas / sizeof *isas; k++)
    if (shlo__vmath_use_isa(isas[k])) {
      fn(ctx);
      ran++;
    }
  shlo__vmath_use_isa(best);
  return ran;
}

#endif
