/* SPDX-License-Identifier: Apache-2.0 */
/* Floating-point maximum and minimum, one definition for every kernel.
 *
 * StableHLO's maximum/minimum propagate NaN (the first operand's NaN when
 * both are) and order -0 below +0.  The select is done with integer masks
 * rather than branches: a ReLU or max-pool over random data would
 * otherwise mispredict half its comparisons.  Equal values merge by bits:
 * AND keeps +0 of (+0, -0) for the maximum, OR keeps -0 for the minimum. */
#ifndef SHLO_FLOAT_MINMAX_H
#define SHLO_FLOAT_MINMAX_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#define SHLO_MINMAX_FN(NAME, T, U, CMP, MERGE)                            \
  static inline T NAME(T a, T b) {                                        \
    U x, y, m;                                                            \
    memcpy(&x, &a, sizeof x);                                             \
    memcpy(&y, &b, sizeof y);                                             \
    T sel = a CMP b ? a : b;                                              \
    memcpy(&m, &sel, sizeof m);                                           \
    U eq = (U)0 - (U)(a == b), nb = (U)0 - (U)(b != b),                   \
      na = (U)0 - (U)(a != a);                                            \
    m = (m & ~eq) | ((x MERGE y) & eq);                                   \
    m = (m & ~nb) | (y & nb);                                             \
    m = (m & ~na) | (x & na);                                             \
    memcpy(&sel, &m, sizeof m);                                           \
    return sel;                                                           \
  }
SHLO_MINMAX_FN(shlo_fmaxf, float, uint32_t, >, &)
SHLO_MINMAX_FN(shlo_fminf, float, uint32_t, <, |)
SHLO_MINMAX_FN(shlo_fmaxd, double, uint64_t, >, &)
SHLO_MINMAX_FN(shlo_fmind, double, uint64_t, <, |)
#undef SHLO_MINMAX_FN

/* Folds (a running maximum over a row) are the other way round: each step
 * depends on the last, so the mask form's latency adds up, while the
 * branches below are almost always predicted (the running value rarely
 * changes).  Same results as the mask form. */
#define SHLO_FMAX_FOLD(a, x)                                                \
  ((a) != (a) ? (a) : (x) != (x) ? (x)                                      \
   : (a) == (x) ? (signbit(a) ? (x) : (a)) : (a) > (x) ? (a) : (x))
#define SHLO_FMIN_FOLD(a, x)                                                \
  ((a) != (a) ? (a) : (x) != (x) ? (x)                                      \
   : (a) == (x) ? (signbit(a) ? (a) : (x)) : (a) < (x) ? (a) : (x))

/* For float or double operands (the wider type of the two decides). */
#define SHLO_FMAX(a, b) \
  _Generic((a) + (b), float: shlo_fmaxf, default: shlo_fmaxd)(a, b)
#define SHLO_FMIN(a, b) \
  _Generic((a) + (b), float: shlo_fminf, default: shlo_fmind)(a, b)

#endif
