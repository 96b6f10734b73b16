/* SPDX-License-Identifier: Apache-2.0 */
/* The bits of floats and the floats of bits, for tests that compare
 * encodings exactly. */
#ifndef SHLO_TESTS_BITS_H
#define SHLO_TESTS_BITS_H

#include <stdint.h>
#include <string.h>

static inline float f32_of(uint32_t x) {
  float f;
  memcpy(&f, &x, sizeof f);
  return f;
}

static inline uint32_t bits32(float f) {
  uint32_t x;
  memcpy(&x, &f, sizeof x);
  return x;
}

static inline uint64_t bits64(double v) {
  uint64_t b;
  memcpy(&b, &v, sizeof b);
  return b;
}

static inline double from64(uint64_t b) {
  double v;
  memcpy(&v, &b, sizeof v);
  return v;
}

#endif
