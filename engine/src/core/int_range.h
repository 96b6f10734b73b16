/* SPDX-License-Identifier: Apache-2.0 */
/* The range of an integer element type's values, in one place: the
 * parser's and the printer's default quantized storage range, the
 * verifier's storage checks and convert's saturation bounds all need it,
 * and 1 << 63 must not be computed on the way. */
#ifndef SHLO_CORE_INT_RANGE_H
#define SHLO_CORE_INT_RANGE_H

#include <stdbool.h>
#include <stdint.h>

#include "shlo/types.h"

/* [*lo, *hi] = every value of integer type e (ui64's *hi is INT64_MAX,
 * the largest int64_t: callers compare it with int64_t storage bounds).
 * False, leaving both untouched, when e is not a signed or unsigned
 * integer type. */
static inline bool shlo__int_range(shlo_elem_type e, int64_t *lo,
                                   int64_t *hi) {
  int bits = shlo_elem_bits(e);
  switch (shlo_elem_class_of(e)) {
  case SHLO_CLASS_SINT:
    *lo = bits >= 64 ? INT64_MIN : -((int64_t)1 << (bits - 1));
    *hi = bits >= 64 ? INT64_MAX : ((int64_t)1 << (bits - 1)) - 1;
    return true;
  case SHLO_CLASS_UINT:
    *lo = 0;
    *hi = bits >= 63 ? INT64_MAX : ((int64_t)1 << bits) - 1;
    return true;
  default:
    return false;
  }
}

#endif
