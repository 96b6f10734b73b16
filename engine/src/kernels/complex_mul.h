/* SPDX-License-Identifier: Apache-2.0 */
/* Complex multiplication, one definition for every kernel.
 *
 * Computed as XLA's CPU backend does (the JAX corpus's expected values come
 * from it): re = ar*br - ai*bi as fma(ar, br, -(ai*bi)) and
 * im = ar*bi + ai*br as fma(ai, br, ar*bi), in the part type, with the
 * accumulator on the left in reductions.  Long products (cumprod over
 * complex<f32>) drift past the corpus's tolerance with any other rounding;
 * this one reproduces jax/cumprod_complex64_8_9 exactly. */
#ifndef SHLO_COMPLEX_MUL_H
#define SHLO_COMPLEX_MUL_H

#include <math.h>

/* rr, ri = (ar + i ai) * (br + i bi), PT the part type (float or double). */
#define SHLO_CMUL(PT, ar, ai, br, bi, rr, ri)                               \
  do {                                                                      \
    PT ar_ = (ar), ai_ = (ai), br_ = (br), bi_ = (bi);                      \
    if (sizeof(PT) == sizeof(float)) {                                      \
      (rr) = (PT)fmaf((float)ar_, (float)br_, (float)-(ai_ * bi_));         \
      (ri) = (PT)fmaf((float)ai_, (float)br_, (float)(ar_ * bi_));          \
    } else {                                                                \
      (rr) = (PT)fma((double)ar_, (double)br_, (double)-(ai_ * bi_));       \
      (ri) = (PT)fma((double)ai_, (double)br_, (double)(ar_ * bi_));        \
    }                                                                       \
  } while (0)

#endif
