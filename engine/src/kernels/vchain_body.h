/* SPDX-License-Identifier: Apache-2.0 */
/* One variant of the lane-program evaluator of vchain.h, included by
 * vmath_body.h (whose lane functions and macros it uses) once per ISA.
 *
 * A block is VC_K vectors, each of its accumulator's vectors a variable
 * of its own (v0, v1, ...) so that the compiler keeps them in registers
 * across the instruction loop; each instruction's case does its op on
 * all of them, one switch per instruction per block (vchain_blocks.h,
 * once per block width).  VC_K leaves room in the registers for an op's
 * constants and temporaries beside the accumulator: 8 of AVX2's 16
 * registers.  AVX-512 has two widths: 16 of its 32 registers, and 8 for
 * a program with exp, tanh or logistic, whose dozen constants beside 16
 * accumulators spilled (gelu 0.605 -> 0.558 ms with 8, where layernorm's
 * four plain ops a row at a time ran 2% slower with 8). */


/* max and min of StableHLO (float_minmax.h), lane by lane: the larger
 * (smaller); of equal values the AND (OR) of their bits, so +0 (-0) of
 * +0 and -0; b when b is NaN, then a when a is. */
VM_INLINE VF VM_FN(vc_max)(VF a, VF b) {
  VI m = (VI)VM_FN(sel)(a > b, a, b), eq = a == b;
  m = (m & ~eq) | (((VI)a & (VI)b) & eq);
  m = (VI)VM_FN(sel)(b != b, b, (VF)m);
  return VM_FN(sel)(a != a, a, (VF)m);
}
VM_INLINE VF VM_FN(vc_min)(VF a, VF b) {
  VI m = (VI)VM_FN(sel)(a < b, a, b), eq = a == b;
  m = (m & ~eq) | (((VI)a | (VI)b) & eq);
  m = (VI)VM_FN(sel)(b != b, b, (VF)m);
  return VM_FN(sel)(a != a, a, (VF)m);
}
VM_INLINE VF VM_FN(vc_neg)(VF a) {
  return (VF)((VI)a ^ ((VI){0} + INT32_MIN));
}
VM_INLINE VF VM_FN(vc_abs)(VF a) {
  return (VF)((VI)a & ((VI){0} + INT32_MAX));
}
/* IEEE square root: a negative operand gives the default NaN, as
 * elementwise.c's loop (sqrtss, or libm's sqrtf for the errno) does */
#if VM_KIND != VM_PORTABLE
VM_INLINE VF VM_FN(vc_sqrt)(VF a) { return (VF)VM_PS(sqrt)((VM_M)a); }
#else
VM_INLINE VF VM_FN(vc_sqrt)(VF a) {
  for (int j = 0; j < VM_W; j++) a[j] = sqrtf(a[j]);
  return a;
}
#endif

/* Operand forms: VC_ACC the accumulator, VC_MEM an input that advances
 * with the element, VC_ONE an input of one element, held in a register
 * (sa, sb) for the whole block instead of loaded from a block of copies
 * once a vector (layernorm's output program loaded its row's mean and
 * scale 32 times a block beside 48 loads of its own).  Code: the op,
 * then a's form, then b's. */
#ifndef VC_FORMS /* once for all variants */
#define VC_FORMS
enum { VC_ACC, VC_MEM, VC_ONE };
#endif
#define VC_CODE(op, fa, fb) ((op) * 9 + (fa) + 3 * (fb))
/* (read in the cases that use them, not before the switch: the loads
 * of both registers and the starts' arithmetic, once per instruction per
 * block, filled the reorder window beside the vector work) */
#define VC_LA(j) VM_FN(load)(d->a + i + (j) * VM_W)
#define VC_LB(j) VM_FN(load)(d->b + i + (j) * VM_W)
#define VC_SA (d->sa)
#define VC_SB (d->sb)
#define VC_AA(j, E) { VF x = v##j, y = v##j; v##j = E; }
#define VC_MA(j, E) { VF x = VC_LA(j), y = v##j; v##j = E; }
#define VC_OA(j, E) { VF x = VC_SA, y = v##j; v##j = E; }
#define VC_AM(j, E) { VF x = v##j, y = VC_LB(j); v##j = E; }
#define VC_MM(j, E) { VF x = VC_LA(j), y = VC_LB(j); v##j = E; }
#define VC_OM(j, E) { VF x = VC_SA, y = VC_LB(j); v##j = E; }
#define VC_AO(j, E) { VF x = v##j, y = VC_SB; v##j = E; }
#define VC_MO(j, E) { VF x = VC_LA(j), y = VC_SB; v##j = E; }
#define VC_UA(j, E) { VF x = v##j; v##j = E; }
#define VC_LD(j, E) v##j = VC_LA(j);
#define VC_SET(j, R) v##j = R;
#define VC_CASE_BIN(OP, E)                                                  \
  case VC_CODE(SHLO_LANE_##OP, VC_ACC, VC_ACC): VC_EACH(VC_AA, E) break;    \
  case VC_CODE(SHLO_LANE_##OP, VC_MEM, VC_ACC): VC_EACH(VC_MA, E) break;    \
  case VC_CODE(SHLO_LANE_##OP, VC_ONE, VC_ACC): VC_EACH(VC_OA, E) break;    \
  case VC_CODE(SHLO_LANE_##OP, VC_ACC, VC_MEM): VC_EACH(VC_AM, E) break;    \
  case VC_CODE(SHLO_LANE_##OP, VC_MEM, VC_MEM): VC_EACH(VC_MM, E) break;    \
  case VC_CODE(SHLO_LANE_##OP, VC_ONE, VC_MEM): VC_EACH(VC_OM, E) break;    \
  case VC_CODE(SHLO_LANE_##OP, VC_ACC, VC_ONE): VC_EACH(VC_AO, E) break;    \
  case VC_CODE(SHLO_LANE_##OP, VC_MEM, VC_ONE): VC_EACH(VC_MO, E) break;    \
  case VC_CODE(SHLO_LANE_##OP, VC_ONE, VC_ONE): {                           \
    VF x = VC_SA, y = VC_SB, r_ = E;                                        \
    VC_EACH(VC_SET, r_)                                                     \
  } break;
/* a unary op of an input loads it into the accumulator first (its code,
 * large for exp and the like, is there once); of one element, it runs
 * once on the register */
#define VC_CASE_UN(OP, E)                                                   \
  case VC_CODE(SHLO_LANE_##OP, VC_ONE, VC_ACC): {                           \
    VF x = VC_SA, r_ = E;                                                   \
    VC_EACH(VC_SET, r_)                                                     \
  } break;                                                                  \
  case VC_CODE(SHLO_LANE_##OP, VC_MEM, VC_ACC): VC_EACH(VC_LD, _)           \
    __attribute__((fallthrough));                                           \
  case VC_CODE(SHLO_LANE_##OP, VC_ACC, VC_ACC): VC_EACH(VC_UA, E) break;
/* the same for an op whose lane function takes n vectors at a time
 * (vmath_body.h's _n functions): the block's in groups of VC_GROUP, as
 * many as the registers hold (gelu's lanes on one thread, against one
 * vector at a time: AVX-512 0.057 -> 0.052 ms in groups of 8; AVX2
 * 0.114 -> 0.112 in groups of 2, 0.117 in 4, 0.120 in 8: its 16
 * registers spill) */
#if VM_KIND == VM_AVX512
#define VC_GROUP VC_K
#else
#define VC_GROUP 2
#endif
#define VC_TO(j, E) t_[j] = v##j;
#define VC_FROM(j, E) v##j = t_[j];
#define VC_CASE_UN_N(OP, FN)                                                \
  case VC_CODE(SHLO_LANE_##OP, VC_ONE, VC_ACC): {                           \
    VF r_ = VC_SA;                                                          \
    FN(&r_, 1);                                                             \
    VC_EACH(VC_SET, r_)                                                     \
  } break;                                                                  \
  case VC_CODE(SHLO_LANE_##OP, VC_MEM, VC_ACC): VC_EACH(VC_LD, _)           \
    __attribute__((fallthrough));                                           \
  case VC_CODE(SHLO_LANE_##OP, VC_ACC, VC_ACC): {                           \
    VF t_[VC_K];                                                            \
    VC_EACH(VC_TO, _)                                                       \
    _Pragma("GCC unroll 16")                                                \
    for (int g_ = 0; g_ < VC_K; g_ += VC_GROUP) FN(t_ + g_, VC_GROUP);      \
    VC_EACH(VC_FROM, _)                                                     \
  } break;
#define VC_STORE(j, E) VM_FN(store)(po + (j) * VM_W, v##j);
#if VM_KIND == VM_AVX512
#define VC_STREAM(j, E) _mm512_stream_ps(po + (j) * VM_W, (__m512)v##j);
#elif VM_KIND == VM_AVX2
#define VC_STREAM(j, E) _mm256_stream_ps(po + (j) * VM_W, (__m256)v##j);
#else
#define VC_STREAM(j, E) VC_STORE(j, E)
#endif

/* An instruction decoded for one call: its case (which says whether
 * each operand advances), where its operands start, and its output
 * (NULL: none), so that a block pays for the switch alone.  A
 * layernorm's four-instruction program, a row at a time, spent about a
 * third of its time decoding. */
typedef struct VM_FN(vc_dec) {
  VF sa, sb; /* operands of one element, in every lane */
  const float *a, *b;
  float *o;
  bool stream;
  int code;
} VM_FN(vc_dec);

#define VC_EACH8(X, E)                                                      \
  X(0, E) X(1, E) X(2, E) X(3, E) X(4, E) X(5, E) X(6, E) X(7, E)
#if VM_KIND == VM_AVX512
#define VC_K 16
#define VC_EACH(X, E)                                                       \
  VC_EACH8(X, E)                                                            \
  X(8, E) X(9, E) X(10, E) X(11, E) X(12, E) X(13, E) X(14, E) X(15, E)
#define VC_DECL VF v0, v1, v2, v3, v4, v5, v6, v7, v8, v9, v10, v11, v12, \
                   v13, v14, v15
#define VC_FN(name) VM_N(VM_FN(name), wide)
#include "kernels/vchain_blocks.h"
#endif
#if VM_KIND != VM_PORTABLE
#define VC_K 8
#define VC_EACH(X, E) VC_EACH8(X, E)
#define VC_DECL VF v0, v1, v2, v3, v4, v5, v6, v7
#else
#define VC_K 4
#define VC_EACH(X, E) X(0, E) X(1, E) X(2, E) X(3, E)
#define VC_DECL VF v0, v1, v2, v3
#endif
#define VC_FN(name) VM_N(VM_FN(name), narrow)
#include "kernels/vchain_blocks.h"
#undef VC_EACH8

/* Whether p has an op whose code holds many constants (see the top). */
VM_INLINE bool VM_FN(vc_heavy)(const shlo_vchain *p) {
  for (int k = 0; k < p->n_ins; k++)
    if (p->ins[k].op >= SHLO_LANE_EXP) return true;
  return false;
}

VM_EXTERN void VM_FN(vchain)(const shlo_vchain *p, float *const *out,
                             const int64_t *out_step, const float *const *in,
                             const int64_t *in_step, int64_t rows, int64_t n,
                             void *work) {
#if VM_KIND == VM_AVX512
  if (!VM_FN(vc_heavy)(p)) {
    VM_N(VM_FN(vchain), wide)(p, out, out_step, in, in_step, rows, n, work);
    return;
  }
#endif
  VM_N(VM_FN(vchain), narrow)(p, out, out_step, in, in_step, rows, n, work);
}

#undef VC_CODE
#undef VC_LA
#undef VC_SA
#undef VC_SB
#undef VC_LB
#undef VC_AA
#undef VC_MA
#undef VC_AM
#undef VC_MM
#undef VC_OA
#undef VC_OM
#undef VC_AO
#undef VC_MO
#undef VC_SET
#undef VC_UA
#undef VC_LD
#undef VC_CASE_BIN
#undef VC_CASE_UN
#undef VC_CASE_UN_N
#undef VC_GROUP
#undef VC_TO
#undef VC_FROM
#undef VC_STORE
#undef VC_STREAM
