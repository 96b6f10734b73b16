/* f32 vector maths: exp, tanh and logistic over arrays, in SIMD.
 *
 * Each function gives what the engine's scalar loops give, element for
 * element: exp and tanh are libm's double function of the f32 operand
 * rounded to f32; logistic is 1.0f / (1.0f + that exp of -x).  Inside they
 * evaluate in double with a polynomial accurate to a few double ulps, so a
 * result can differ from the scalar one only where the exact value lies
 * within ~1e-15 (relative) of a halfway point between two f32 values: about
 * one operand in 10^8, and then by one f32 ulp.  NaN operands take the
 * scalar libm path, payload and all.
 *
 * The ISA is picked at run time (AVX-512F, AVX2+FMA, else SSE2); the
 * build needs no -march.  d and x may be the same array. */
#ifndef SHLO_VMATH_H
#define SHLO_VMATH_H

#include <stdbool.h>
#include <stdint.h>

void shlo__vexp_f32(float *d, const float *x, int64_t n);
void shlo__vtanh_f32(float *d, const float *x, int64_t n);
void shlo__vlogistic_f32(float *d, const float *x, int64_t n);

/* The ISA the functions above use: "avx512f", "avx2" or "sse2", the best
 * this machine has unless shlo__vmath_use_isa chose another. */
const char *shlo__vmath_isa(void);
/* Use the variant `isa` (one of the names above) from now on, process-wide;
 * false, changing nothing, when this machine cannot run it.  For tests,
 * which check every variant the machine has. */
bool shlo__vmath_use_isa(const char *isa);

#endif
