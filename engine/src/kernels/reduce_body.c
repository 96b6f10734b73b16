/* SPDX-License-Identifier: Apache-2.0 */
/* Region bodies of reduce-like ops (see reduce_int.h): recognising a body
 * that is one known binary op or one compare, the native loops generated
 * per (op, storage type) that replace such bodies, and the generic path
 * that applies a compiled region to rank-0 scalars. */
/* -O2 leaves loops that need a remainder scalar; the lane folds below
 * are written to be vectorized. */
#pragma GCC optimize("tree-vectorize", "vect-cost-model=dynamic")

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/value.h"
#include "kernels/complex_mul.h"
#include "kernels/float_minmax.h"
#include "kernels/multiversion.h"
#include "core/floatfmt.h"
#include "core/storage.h"
#include "core/tensor_uninit.h"
#include "kernels/reduce_int.h"
#include "kernels/sum_tree.h"
#include "kernels/vmath.h"

/* ---- native binary bodies ---- */

enum { RB_ADD, RB_MUL, RB_MAX, RB_MIN, RB_AND, RB_OR, RB_XOR, RB_NOPS };

/* Storage flavours, numbered by storage (core/storage.h). */
enum { SHLO__ST_LOOP_NAMES(FL_), FL_COUNT };

typedef struct { float re, im; } rb_c64;
typedef struct { double re, im; } rb_c128;

/* Re-wrap an integer result to the element width (only 8-bit storage can
 * hold a narrower type; see elementwise.c). */
#define RB_IWRAP(SG, T, U, x)                                             \
  (sizeof(T) > 1 ? (T)(x)                                                 \
   : (SG) ? (T)((T)(U)((U)(x) << b->wsh) >> b->wsh)                       \
          : (T)((U)(x) & (U)b->mask))

#define RB_DEF_INT(TN, T, U, SG)                                            \
  static inline T ld_##TN(const void *p, int64_t i,                         \
                          const shlo_rb_native *b) {                        \
    (void)b;                                                                \
    return ((const T *)p)[i];                                               \
  }                                                                         \
  static inline void st_##TN(void *p, int64_t i, T v,                       \
                             const shlo_rb_native *b) {                     \
    (void)b;                                                                \
    ((T *)p)[i] = v;                                                        \
  }                                                                         \
  static inline T c_ADD_##TN(T a, T x, const shlo_rb_native *b) {           \
    return RB_IWRAP(SG, T, U, (U)((uint64_t)(U)a + (uint64_t)(U)x));        \
  }                                                                         \
  static inline T c_MUL_##TN(T a, T x, const shlo_rb_native *b) {           \
    return RB_IWRAP(SG, T, U, (U)((uint64_t)(U)a * (uint64_t)(U)x));        \
  }                                                                         \
  static inline T c_MAX_##TN(T a, T x, const shlo_rb_native *b) {           \
    (void)b;                                                                \
    return a > x ? a : x;                                                   \
  }                                                                         \
  static inline T c_MIN_##TN(T a, T x, const shlo_rb_native *b) {           \
    (void)b;                                                                \
    return a < x ? a : x;                                                   \
  }                                                                         \
  static inline T c_AND_##TN(T a, T x, const shlo_rb_native *b) {           \
    (void)b;                                                                \
    return (T)(a & x);                                                      \
  }                                                                         \
  static inline T c_OR_##TN(T a, T x, const shlo_rb_native *b) {            \
    (void)b;                                                                \
    return (T)(a | x);                                                      \
  }                                                                         \
  static inline T c_XOR_##TN(T a, T x, const shlo_rb_native *b) {           \
    (void)b;                                                                \
    return (T)(a ^ x);                                                      \
  }

RB_DEF_INT(s8, int8_t, uint8_t, 1)
RB_DEF_INT(s16, int16_t, uint16_t, 1)
RB_DEF_INT(s32, int32_t, uint32_t, 1)
RB_DEF_INT(s64, int64_t, uint64_t, 1)
RB_DEF_INT(u8, uint8_t, uint8_t, 0)
RB_DEF_INT(u16, uint16_t, uint16_t, 0)
RB_DEF_INT(u32, uint32_t, uint32_t, 0)
RB_DEF_INT(u64, uint64_t, uint64_t, 0)

/* maximum/minimum: NaN propagates (the first NaN wins), -0 < +0. */
#define RB_FMAX(a, x) SHLO_FMAX_FOLD(a, x)
#define RB_FMIN(a, x) SHLO_FMIN_FOLD(a, x)

#define RB_DEF_FLOAT(TN, T)                                                 \
  static inline T ld_##TN(const void *p, int64_t i,                         \
                          const shlo_rb_native *b) {                        \
    (void)b;                                                                \
    return ((const T *)p)[i];                                               \
  }                                                                         \
  static inline void st_##TN(void *p, int64_t i, T v,                       \
                             const shlo_rb_native *b) {                     \
    (void)b;                                                                \
    ((T *)p)[i] = v;                                                        \
  }                                                                         \
  static inline T c_ADD_##TN(T a, T x, const shlo_rb_native *b) {           \
    (void)b;                                                                \
    return a + x;                                                           \
  }                                                                         \
  static inline T c_MUL_##TN(T a, T x, const shlo_rb_native *b) {           \
    (void)b;                                                                \
    return a * x;                                                           \
  }                                                                         \
  static inline T c_MAX_##TN(T a, T x, const shlo_rb_native *b) {           \
    (void)b;                                                                \
    return RB_FMAX(a, x);                                                   \
  }                                                                         \
  static inline T c_MIN_##TN(T a, T x, const shlo_rb_native *b) {           \
    (void)b;                                                                \
    return RB_FMIN(a, x);                                                   \
  }

RB_DEF_FLOAT(f32, float)
RB_DEF_FLOAT(f64, double)

/* Narrow floats: values held in double, rounded to the type after each
 * application. */
static inline double rb_nround(const shlo_rb_native *b, double v) {
  uint8_t buf[8];
  shlo__float_store(b->et, v, buf);
  return shlo__float_load(b->et, buf);
}
static inline double ld_nar(const void *p, int64_t i, const shlo_rb_native *b) {
  return shlo__float_load(b->et, (const char *)p + (size_t)i * b->esz);
}
static inline void st_nar(void *p, int64_t i, double v,
                          const shlo_rb_native *b) {
  shlo__float_store(b->et, v, (char *)p + (size_t)i * b->esz);
}
static inline double c_ADD_nar(double a, double x, const shlo_rb_native *b) {
  return rb_nround(b, a + x);
}
static inline double c_MUL_nar(double a, double x, const shlo_rb_native *b) {
  return rb_nround(b, a * x);
}
static inline double c_MAX_nar(double a, double x, const shlo_rb_native *b) {
  (void)b;
  return RB_FMAX(a, x);
}
static inline double c_MIN_nar(double a, double x, const shlo_rb_native *b) {
  (void)b;
  return RB_FMIN(a, x);
}

/* Complex: add and multiply in the part type, maximum/minimum
 * lexicographic on (real, imaginary), as elementwise.c. */
#define RB_DEF_COMPLEX(TN, CT, PT)                                          \
  static inline CT ld_##TN(const void *p, int64_t i,                        \
                           const shlo_rb_native *b) {                       \
    (void)b;                                                                \
    return ((const CT *)p)[i];                                              \
  }                                                                         \
  static inline void st_##TN(void *p, int64_t i, CT v,                      \
                             const shlo_rb_native *b) {                     \
    (void)b;                                                                \
    ((CT *)p)[i] = v;                                                       \
  }                                                                         \
  static inline CT c_ADD_##TN(CT a, CT x, const shlo_rb_native *b) {        \
    (void)b;                                                                \
    CT r = {a.re + x.re, a.im + x.im};                                      \
    return r;                                                               \
  }                                                                         \
  static inline CT c_MUL_##TN(CT a, CT x, const shlo_rb_native *b) {        \
    (void)b;                                                                \
    CT r;                                                                   \
    SHLO_CMUL(PT, a.re, a.im, x.re, x.im, r.re, r.im);                      \
    return r;                                                               \
  }                                                                         \
  static inline CT c_MAX_##TN(CT a, CT x, const shlo_rb_native *b) {        \
    (void)b;                                                                \
    int g = a.re == x.re ? a.im > x.im : a.re > x.re;                       \
    return g ? a : x;                                                       \
  }                                                                         \
  static inline CT c_MIN_##TN(CT a, CT x, const shlo_rb_native *b) {        \
    (void)b;                                                                \
    int g = a.re == x.re ? a.im < x.im : a.re < x.re;                       \
    return g ? a : x;                                                       \
  }

RB_DEF_COMPLEX(c64, rb_c64, float)
RB_DEF_COMPLEX(c128, rb_c128, double)

/* accum is one operation per element, so its vector code may be cloned
 * per ISA (multiversion.h): reduce_window's pooling over channels-last
 * rows spends its time there.  Not for complex (a product's a*c - b*d
 * could become a multiply-add in a clone) or nar (converted per use). */
#define RB_CLONE_s8 SHLO_CLONES
#define RB_CLONE_s16 SHLO_CLONES
#define RB_CLONE_s32 SHLO_CLONES
#define RB_CLONE_s64 SHLO_CLONES
#define RB_CLONE_u8 SHLO_CLONES
#define RB_CLONE_u16 SHLO_CLONES
#define RB_CLONE_u32 SHLO_CLONES
#define RB_CLONE_u64 SHLO_CLONES
#define RB_CLONE_f32 SHLO_CLONES
#define RB_CLONE_f64 SHLO_CLONES
#define RB_CLONE_nar
#define RB_CLONE_c64
#define RB_CLONE_c128

/* The three loop shapes for one (op, flavour). */
#define RB_LOOPS(OP, TN, T)                                                 \
  static void fold_##OP##_##TN(void *acc, const void *src, int64_t n,       \
                               int64_t stride, const shlo_rb_native *b) {   \
    T a = ld_##TN(acc, 0, b);                                               \
    for (int64_t i = 0; i < n; i++)                                         \
      a = c_##OP##_##TN(a, ld_##TN(src, i * stride, b), b);                 \
    st_##TN(acc, 0, a, b);                                                  \
  }                                                                         \
  static void gfold_##OP##_##TN(void *acc, const void *src,                 \
                                const int64_t *offs, int64_t n,             \
                                const void *init,                           \
                                const shlo_rb_native *b) {                  \
    T a = ld_##TN(acc, 0, b);                                               \
    T iv = ld_##TN(init, 0, b);                                             \
    for (int64_t i = 0; i < n; i++)                                         \
      a = c_##OP##_##TN(a, offs[i] < 0 ? iv : ld_##TN(src, offs[i], b), b); \
    st_##TN(acc, 0, a, b);                                                  \
  }                                                                         \
  RB_CLONE_##TN static void accum_##OP##_##TN(                             \
      void *dst, const void *src, int64_t n, const shlo_rb_native *b) {     \
    for (int64_t i = 0; i < n; i++)                                         \
      st_##TN(dst, i,                                                       \
              c_##OP##_##TN(ld_##TN(dst, i, b), ld_##TN(src, i, b), b), b); \
  }                                                                         \
  RB_CLONE_##TN static void accum_grid_##OP##_##TN(                        \
      void *dst, const void *src, const shlo_rb_grid *g,                    \
      const shlo_rb_native *b) {                                            \
    int64_t n = g->n, rows = g->rows, kn = g->k;                            \
    size_t esz = b->esz, dstep = (size_t)g->dst_step * esz;                 \
    size_t sstep = (size_t)g->src_step * esz, kstep = (size_t)g->k_step * esz; \
    for (int64_t r = 0; r < rows; r++) {                                    \
      char *d = (char *)dst + (size_t)r * dstep;                            \
      for (int64_t k = 0; k < kn; k++) {                                    \
        const char *x =                                                     \
            (const char *)src + (size_t)r * sstep + (size_t)k * kstep;      \
        for (int64_t i = 0; i < n; i++)                                     \
          st_##TN(d, i, c_##OP##_##TN(ld_##TN(d, i, b), ld_##TN(x, i, b), b), \
                  b);                                                       \
      }                                                                     \
    }                                                                       \
  }

#define RB_INT_TYPES(X, OP)                                                 \
  X(OP, s8, int8_t) X(OP, s16, int16_t) X(OP, s32, int32_t)                 \
  X(OP, s64, int64_t) X(OP, u8, uint8_t) X(OP, u16, uint16_t)               \
  X(OP, u32, uint32_t) X(OP, u64, uint64_t)
#define RB_FLOAT_TYPES(X, OP)                                               \
  X(OP, f32, float) X(OP, f64, double) X(OP, nar, double)                   \
  X(OP, c64, rb_c64) X(OP, c128, rb_c128)

RB_INT_TYPES(RB_LOOPS, ADD)
RB_INT_TYPES(RB_LOOPS, MUL)
RB_INT_TYPES(RB_LOOPS, MAX)
RB_INT_TYPES(RB_LOOPS, MIN)
RB_INT_TYPES(RB_LOOPS, AND)
RB_INT_TYPES(RB_LOOPS, OR)
RB_INT_TYPES(RB_LOOPS, XOR)
RB_FLOAT_TYPES(RB_LOOPS, ADD)
RB_FLOAT_TYPES(RB_LOOPS, MUL)
RB_FLOAT_TYPES(RB_LOOPS, MAX)
RB_FLOAT_TYPES(RB_LOOPS, MIN)

#define RB_CELL(OP, TN, T)                                                  \
  [FL_##TN] = {fold_##OP##_##TN, gfold_##OP##_##TN, accum_##OP##_##TN,      \
               accum_grid_##OP##_##TN},
#define RB_ROW_ALL(OP)                                                      \
  [RB_##OP] = {RB_INT_TYPES(RB_CELL, OP) RB_FLOAT_TYPES(RB_CELL, OP)},
#define RB_ROW_INT(OP) [RB_##OP] = {RB_INT_TYPES(RB_CELL, OP)},

typedef struct {
  shlo_rb_fold_fn fold;
  shlo_rb_gfold_fn gfold;
  shlo_rb_accum_fn accum;
  shlo_rb_accum_grid_fn accum_grid;
} rb_loops;

static const rb_loops rb_tab[RB_NOPS][FL_COUNT] = {
    RB_ROW_ALL(ADD) RB_ROW_ALL(MUL) RB_ROW_ALL(MAX) RB_ROW_ALL(MIN)
    RB_ROW_INT(AND) RB_ROW_INT(OR) RB_ROW_INT(XOR)};

/* f32 maximum/minimum over a contiguous row in 64 independent lanes, eight
 * vectors of 8 (AVX2 compares into vector masks; AVX-512F alone would need
 * mask registers, and GCC's vector extensions then go element by element),
 * each keeping the larger (smaller) of its values by a float compare.  With
 * no NaN in the row the result's value does not depend on the order, so
 * it is the sequential fold's, except for the sign of a zero (of +0 and
 * -0, the compare keeps whichever came first, where shlo_fmaxf wants +0
 * and shlo_fminf -0).  So a NaN in the row (tracked on the side), or a
 * zero result, sends the row back to the sequential fold, which finds the
 * first NaN and orders the zeros; any other row costs a compare and a
 * select per vector. */
#define RB_LANES 64
typedef float rb_vals __attribute__((vector_size(32)));
typedef int32_t rb_mask __attribute__((vector_size(32)));

/* a GCC statement expression: a function returning the vector would
 * change the ABI where AVX is off */
#define rb_load(p)                                                          \
  ({                                                                        \
    rb_vals v_;                                                             \
    memcpy(&v_, (p), sizeof v_);                                            \
    v_;                                                                     \
  })

#define RB_PICK(k, y, CMP)                                                  \
  do {                                                                      \
    rb_mask m_ = (y)CMP(k);                                                 \
    (k) = (rb_vals)(((rb_mask)(y) & m_) | ((rb_mask)(k) & ~m_));            \
  } while (0)

/* The lanes' loop with the ISA's own maximum and minimum: MAXPS(y, k) is
 * y > k ? y : k and MINPS(y, k) is y < k ? y : k, RB_PICK's select in one
 * instruction (GCC's vector extensions cannot ask for it, and it halves
 * the work of a fold that runs at memory speed).  AVX-512: four vectors
 * of 16, NaNs gathered in a mask register; AVX2: eight of 8.  Sets *r to
 * the fold of x[0, n) (n >= RB_LANES) by the same compare as the generic
 * loop, *nan when one of them is a NaN; false when neither is in use. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#include <immintrin.h>
#define RB_ISA_TAIL(CMP)                                                    \
  do {                                                                      \
    float r_ = t[0];                                                        \
    for (size_t j = 1; j < sizeof t / sizeof *t; j++)                       \
      if (t[j] CMP r_) r_ = t[j];                                           \
    for (; i < n; i++) {                                                    \
      any |= x[i] != x[i];                                                  \
      if (x[i] CMP r_) r_ = x[i];                                           \
    }                                                                       \
    *r = r_;                                                                \
    *nan = any;                                                             \
  } while (0)
#define RB_ISA_512(NAME, PICK, CMP)                                         \
  __attribute__((target("avx512f"))) static void NAME(                      \
      const float *x, int64_t n, float *r, int32_t *nan) {                  \
    __m512 k0 = _mm512_loadu_ps(x), k1 = _mm512_loadu_ps(x + 16);           \
    __m512 k2 = _mm512_loadu_ps(x + 32), k3 = _mm512_loadu_ps(x + 48);      \
    __mmask16 m = _mm512_cmp_ps_mask(k0, k0, _CMP_UNORD_Q) |                \
                  _mm512_cmp_ps_mask(k1, k1, _CMP_UNORD_Q) |                \
                  _mm512_cmp_ps_mask(k2, k2, _CMP_UNORD_Q) |                \
                  _mm512_cmp_ps_mask(k3, k3, _CMP_UNORD_Q);                 \
    int64_t i = RB_LANES;                                                   \
    for (; i + RB_LANES <= n; i += RB_LANES) {                              \
      __m512 y0 = _mm512_loadu_ps(x + i), y1 = _mm512_loadu_ps(x + i + 16); \
      __m512 y2 = _mm512_loadu_ps(x + i + 32);                              \
      __m512 y3 = _mm512_loadu_ps(x + i + 48);                              \
      m |= _mm512_cmp_ps_mask(y0, y0, _CMP_UNORD_Q) |                       \
           _mm512_cmp_ps_mask(y1, y1, _CMP_UNORD_Q) |                       \
           _mm512_cmp_ps_mask(y2, y2, _CMP_UNORD_Q) |                       \
           _mm512_cmp_ps_mask(y3, y3, _CMP_UNORD_Q);                        \
      k0 = PICK(y0, k0);                                                    \
      k1 = PICK(y1, k1);                                                    \
      k2 = PICK(y2, k2);                                                    \
      k3 = PICK(y3, k3);                                                    \
    }                                                                       \
    k0 = PICK(PICK(k1, k0), PICK(k3, k2));                                  \
    float t[16];                                                            \
    _mm512_storeu_ps(t, k0);                                                \
    int32_t any = m != 0;                                                   \
    RB_ISA_TAIL(CMP);                                                       \
  }
#define RB_ISA_256(NAME, PICK, CMP)                                         \
  __attribute__((target("avx2"))) static void NAME(                         \
      const float *x, int64_t n, float *r, int32_t *nan) {                  \
    __m256 k[8], m = _mm256_setzero_ps();                                   \
    for (int j = 0; j < 8; j++) {                                           \
      k[j] = _mm256_loadu_ps(x + 8 * j);                                    \
      m = _mm256_or_ps(m, _mm256_cmp_ps(k[j], k[j], _CMP_UNORD_Q));        \
    }                                                                       \
    int64_t i = RB_LANES;                                                   \
    for (; i + RB_LANES <= n; i += RB_LANES)                                \
      _Pragma("GCC unroll 8") for (int j = 0; j < 8; j++) {                 \
        __m256 y = _mm256_loadu_ps(x + i + 8 * j);                          \
        m = _mm256_or_ps(m, _mm256_cmp_ps(y, y, _CMP_UNORD_Q));             \
        k[j] = PICK(y, k[j]);                                               \
      }                                                                     \
    for (int w = 4; w >= 1; w /= 2)                                         \
      for (int j = 0; j < w; j++) k[j] = PICK(k[j + w], k[j]);              \
    float t[8];                                                             \
    _mm256_storeu_ps(t, k[0]);                                              \
    int32_t any = _mm256_movemask_ps(m) != 0;                               \
    RB_ISA_TAIL(CMP);                                                       \
  }
RB_ISA_512(lanes_max_avx512, _mm512_max_ps, >)
RB_ISA_512(lanes_min_avx512, _mm512_min_ps, <)
RB_ISA_256(lanes_max_avx2, _mm256_max_ps, >)
RB_ISA_256(lanes_min_avx2, _mm256_min_ps, <)

/* accum_grid of an f32 maximum or minimum (reduce_window's pooling, see
 * reduce_int.h): each vector of dst taken into a register, folded with
 * its k window elements in order, stored once, where the generic loop
 * reads and writes dst for every window element.  MAXPS/MINPS give the
 * body's bits unless a value is a NaN or a zero (which NaN, and which
 * zero of a tie, the order of the comparisons decides): a vector that
 * meets one is folded again, lane by lane, with the body's function.
 * The columns after the last whole vector go the same way.  The input
 * RB_GRID_AHEAD bytes on is asked for as each row starts: a pool's rows
 * stream through the input faster than the hardware fetched them (2x2
 * max pool of 32 MB on two threads: 0.88 ms without, 0.80 at 2 KB
 * ahead, 0.71 at 6 KB, 0.65 at 16 KB, no better at 40 KB). */
#define RB_GRID_AHEAD (16 << 10)
#define RB_GRID_512(NAME, PICK, FN)                                         \
  __attribute__((target("avx512f"))) static void NAME(                      \
      void *dst, const void *src, const shlo_rb_grid *g) {                  \
    const __m512i magnitude = _mm512_set1_epi32(0x7fffffff);                \
    const __m512 zero = _mm512_setzero_ps();                                \
    size_t ahead_bytes = (size_t)g->src_step * sizeof(float);               \
    if (ahead_bytes > 512) ahead_bytes = 512;                               \
    for (int64_t r = 0; r < g->rows; r++) {                                 \
      float *d = (float *)dst + r * g->dst_step;                            \
      const float *x = (const float *)src + r * g->src_step;               \
      for (size_t q = 0; q < ahead_bytes; q += 64)                          \
        _mm_prefetch((const char *)x + RB_GRID_AHEAD + q, _MM_HINT_T0);      \
      for (int64_t i = 0; i < g->n; i += 16) {                              \
        __mmask16 odd = 0xffff;                                             \
        if (i + 16 <= g->n) {                                               \
          __m512 v = _mm512_loadu_ps(d + i);                                \
          odd = 0;                                                          \
          for (int64_t k = 0; k <= g->k; k++) {                             \
            __m512 y = k ? _mm512_loadu_ps(x + (k - 1) * g->k_step + i) : v; \
            __m512 m = _mm512_castsi512_ps(                                 \
                _mm512_and_si512(_mm512_castps_si512(y), magnitude));       \
            odd |= _mm512_cmp_ps_mask(m, zero, _CMP_NGT_UQ);                \
            v = PICK(y, v);                                                 \
          }                                                                 \
          if (!odd) _mm512_storeu_ps(d + i, v);                             \
        }                                                                   \
        if (odd)                                                            \
          for (int64_t l = i; l < i + 16 && l < g->n; l++) {                \
            float a = d[l];                                                 \
            for (int64_t k = 0; k < g->k; k++)                              \
              a = FN(a, x[k * g->k_step + l]);                              \
            d[l] = a;                                                       \
          }                                                                 \
      }                                                                     \
    }                                                                       \
  }
RB_GRID_512(grid_max_avx512, _mm512_max_ps, RB_FMAX)
RB_GRID_512(grid_min_avx512, _mm512_min_ps, RB_FMIN)

/* The loop of the variant vmath uses (shlo__vmath_isa: the best this CPU
 * has, or the one a test chose), so that tests walk both folds and vector
 * maths through each ISA alike.  Its "avx2" also asks for FMA, which these
 * loops do not need; a CPU without it takes the generic loop. */
static bool rb_lanes_isa(bool max, const float *x, int64_t n, float *r,
                         int32_t *nan) {
  const char *isa = shlo__vmath_isa();
  if (!strcmp(isa, "avx512f"))
    (max ? lanes_max_avx512 : lanes_min_avx512)(x, n, r, nan);
  else if (!strcmp(isa, "avx2"))
    (max ? lanes_max_avx2 : lanes_min_avx2)(x, n, r, nan);
  else
    return false;
  return true;
}

/* The grid fold above where vmath's variant is AVX-512's; false else. */
static bool rb_grid_isa(bool max, void *dst, const void *src,
                        const shlo_rb_grid *g) {
  if (strcmp(shlo__vmath_isa(), "avx512f")) return false;
  (max ? grid_max_avx512 : grid_min_avx512)(dst, src, g);
  return true;
}
#else
static bool rb_lanes_isa(bool max, const float *x, int64_t n, float *r,
                         int32_t *nan) {
  (void)max, (void)x, (void)n, (void)r, (void)nan;
  return false;
}
static bool rb_grid_isa(bool max, void *dst, const void *src,
                        const shlo_rb_grid *g) {
  (void)max, (void)dst, (void)src, (void)g;
  return false;
}
#endif

/* accum_grid of an f32 maximum or minimum: the ISA's grid fold, or the
 * generic loop. */
static void accum_grid_MAX_f32_isa(void *dst, const void *src,
                                   const shlo_rb_grid *g,
                                   const shlo_rb_native *b) {
  if (!rb_grid_isa(true, dst, src, g)) accum_grid_MAX_f32(dst, src, g, b);
}
static void accum_grid_MIN_f32_isa(void *dst, const void *src,
                                   const shlo_rb_grid *g,
                                   const shlo_rb_native *b) {
  if (!rb_grid_isa(false, dst, src, g)) accum_grid_MIN_f32(dst, src, g, b);
}

#define RB_DEF_LANES(NAME, CMP, FN, SEQ, IS_MAX)                            \
  SHLO_CLONES static void NAME(void *acc, const void *src, int64_t n,       \
                               int64_t stride, const shlo_rb_native *b) {   \
    const float *x = src;                                                   \
    float a = *(float *)acc;                                                \
    if (stride != 1 || n < 2 * RB_LANES || a != a) {                        \
      SEQ(acc, src, n, stride, b);                                          \
      return;                                                               \
    }                                                                       \
    float r = 0; /* set by either loop */                                   \
    int32_t any_nan = 0;                                                    \
    if (!rb_lanes_isa(IS_MAX, x, n, &r, &any_nan)) {                        \
      rb_vals k[8];                                                         \
      rb_mask nan = {0};                                                    \
      _Pragma("GCC unroll 8") for (int j = 0; j < 8; j++) {                 \
        k[j] = rb_load(x + 8 * j);                                          \
        nan |= k[j] != k[j];                                                \
      }                                                                     \
      int64_t i = RB_LANES;                                                 \
      for (; i + RB_LANES <= n; i += RB_LANES)                              \
        _Pragma("GCC unroll 8") for (int j = 0; j < 8; j++) {               \
          rb_vals y = rb_load(x + i + 8 * j);                               \
          nan |= y != y;                                                    \
          RB_PICK(k[j], y, CMP);                                            \
        }                                                                   \
      _Pragma("GCC unroll 3") for (int w = 4; w >= 1; w /= 2)               \
        _Pragma("GCC unroll 4") for (int j = 0; j < w; j++)                 \
          RB_PICK(k[j], k[j + w], CMP);                                     \
      r = k[0][0];                                                          \
      for (int j = 0; j < 8; j++) {                                         \
        if (k[0][j] CMP r) r = k[0][j];                                     \
        any_nan |= nan[j];                                                  \
      }                                                                     \
      for (; i < n; i++) {                                                  \
        any_nan |= x[i] != x[i];                                            \
        if (x[i] CMP r) r = x[i];                                           \
      }                                                                     \
    }                                                                       \
    a = FN(a, r);                                                           \
    if (any_nan || r == 0 || a != a) {                                      \
      SEQ(acc, src, n, stride, b);                                          \
      return;                                                               \
    }                                                                       \
    *(float *)acc = a;                                                      \
  }
RB_DEF_LANES(fold_MAX_f32_lanes, >, shlo_fmaxf, fold_MAX_f32, true)
RB_DEF_LANES(fold_MIN_f32_lanes, <, shlo_fminf, fold_MIN_f32, false)

/* A run in order, with the body's fold. */
static void fold_run_in_order(void *acc, const void *src, int64_t n,
                              const shlo_rb_native *b) {
  b->fold(acc, src, n, 1, b);
}

/* Rows one at a time, with the body's fold. */
static void fold_rows_each(void *acc, const void *src, int64_t rows,
                           int64_t len, const shlo_rb_native *b) {
  for (int64_t r = 0; r < rows; r++)
    b->fold_run((char *)acc + (size_t)r * b->esz,
                (const char *)src + (size_t)(r * len) * b->esz, len, b);
}

/* f32/f64 add and multiply: R rows folded side by side, each still in its
 * own order from its own accumulator, so every result is the sequential
 * fold's while R additions are in flight instead of one (8 hide the add's
 * latency on current cores; 4 left it the bound of layernorm's rows). */
/* Four rows from row R: accumulators A0..A3 and row pointers X0..X3 set
 * up, folded over the row, and stored back. */
#define RB_ROWS4_IN(T, A, X, R)                                             \
  T A##0 = acc[R], A##1 = acc[R + 1], A##2 = acc[R + 2], A##3 = acc[R + 3]; \
  const T *X##0 = src + (R) * len, *X##1 = X##0 + len, *X##2 = X##1 + len,  \
          *X##3 = X##2 + len;
#define RB_ROWS4_FOLD(OP, A, X, I)                                          \
  A##0 = A##0 OP X##0[I];                                                   \
  A##1 = A##1 OP X##1[I];                                                   \
  A##2 = A##2 OP X##2[I];                                                   \
  A##3 = A##3 OP X##3[I];
#define RB_ROWS4_OUT(A, R)                                                  \
  acc[R] = A##0, acc[R + 1] = A##1, acc[R + 2] = A##2, acc[R + 3] = A##3;

#define RB_DEF_ROWS(NAME, T, OP)                                            \
  static void NAME(void *acc_, const void *src_, int64_t rows, int64_t len, \
                   const shlo_rb_native *b) {                               \
    T *acc = acc_;                                                          \
    const T *src = src_;                                                    \
    int64_t r = 0;                                                          \
    for (; r + 8 <= rows; r += 8) {                                         \
      RB_ROWS4_IN(T, a, x, r)                                               \
      RB_ROWS4_IN(T, c, y, r + 4)                                           \
      for (int64_t i = 0; i < len; i++) {                                   \
        RB_ROWS4_FOLD(OP, a, x, i)                                          \
        RB_ROWS4_FOLD(OP, c, y, i)                                          \
      }                                                                     \
      RB_ROWS4_OUT(a, r)                                                    \
      RB_ROWS4_OUT(c, r + 4)                                                \
    }                                                                       \
    for (; r + 4 <= rows; r += 4) {                                         \
      RB_ROWS4_IN(T, a, x, r)                                               \
      for (int64_t i = 0; i < len; i++) {                                   \
        RB_ROWS4_FOLD(OP, a, x, i)                                          \
      }                                                                     \
      RB_ROWS4_OUT(a, r)                                                    \
    }                                                                       \
    for (; r + 2 <= rows; r += 2) {                                         \
      T a0 = acc[r], a1 = acc[r + 1];                                       \
      const T *x0 = src + r * len, *x1 = x0 + len;                          \
      for (int64_t i = 0; i < len; i++) {                                   \
        a0 = a0 OP x0[i];                                                   \
        a1 = a1 OP x1[i];                                                   \
      }                                                                     \
      acc[r] = a0, acc[r + 1] = a1;                                         \
    }                                                                       \
    fold_rows_each(acc + r, src + r * len, rows - r, len, b);               \
  }
RB_DEF_ROWS(fold_rows_seq_ADD_f32, float, +)
RB_DEF_ROWS(fold_rows_MUL_f32, float, *)
RB_DEF_ROWS(fold_rows_ADD_f64, double, +)
RB_DEF_ROWS(fold_rows_MUL_f64, double, *)

/* f32 sums in their tree schedule (sum_tree.h); rows shorter than a
 * block are plain folds in order, four or eight side by side. */
static void fold_rows_ADD_f32(void *acc, const void *src, int64_t rows,
                              int64_t len, const shlo_rb_native *b) {
  if (len < SHLO_SUM_BLOCK) fold_rows_seq_ADD_f32(acc, src, rows, len, b);
  else shlo__rb_sum_rows_f32(acc, src, rows, len, b);
}

static int rb_op_index(int code, shlo_elem_type et) {
  bool i1 = et == SHLO_I1;
  switch (code) {
  case SHLO_OP_ADD: return i1 ? RB_OR : RB_ADD;
  case SHLO_OP_MULTIPLY: return i1 ? RB_AND : RB_MUL;
  case SHLO_OP_MAXIMUM: return i1 ? RB_OR : RB_MAX;
  case SHLO_OP_MINIMUM: return i1 ? RB_AND : RB_MIN;
  case SHLO_OP_AND: return RB_AND;
  case SHLO_OP_OR: return RB_OR;
  case SHLO_OP_XOR: return RB_XOR;
  default: return -1;
  }
}

/* The type of value id v.  Block arguments and op results are numbered
 * per function alike; plan.h reads types through an op's operands, so ask
 * through a one-operand view. */
static const shlo_type *vtype(shlo_compiler *cc, const shlo_op *op, int v) {
  shlo_op view = *op;
  view.n_operands = 1;
  view.operands = &v;
  return shlo__cc_operand_type(cc, &view, 0);
}

static bool scalar_any(const shlo_type *t, shlo_elem_type *et) {
  if (!t || t->kind != SHLO_TYPE_TENSOR || t->rank != 0) return false;
  *et = t->elem;
  return true;
}

/* A rank-0 tensor type that native loops can handle (not quantized). */
static bool scalar_of(const shlo_type *t, shlo_elem_type *et) {
  return scalar_any(t, et) && !t->quant;
}

static bool is_return(const shlo_op *o) {
  return o->code == SHLO_OP_RETURN || o->code == SHLO_OP_FUNC_RETURN;
}

bool shlo__rb_match(shlo_compiler *cc, const shlo_op *op, int r,
                    shlo_rb_native *b) {
  memset(b, 0, sizeof *b);
  if (r >= op->n_regions) return false;
  const shlo_block *blk = op->regions[r];
  if (blk->n_args != 2 || blk->n_ops != 2) return false;
  const shlo_op *o = blk->ops[0], *ret = blk->ops[1];
  if (!is_return(ret) || ret->n_operands != 1 || o->n_operands != 2 ||
      o->n_results != 1 || o->n_regions || ret->operands[0] != o->results[0])
    return false;
  int a0 = blk->args[0], a1 = blk->args[1];
  if (!((o->operands[0] == a0 && o->operands[1] == a1) ||
        (o->operands[0] == a1 && o->operands[1] == a0)))
    return false;
  shlo_elem_type e0, e1, er;
  if (!scalar_of(vtype(cc, op, a0), &e0) || !scalar_of(vtype(cc, op, a1), &e1) ||
      !scalar_of(vtype(cc, op, o->results[0]), &er) || e0 != e1 || e0 != er)
    return false;
  int k = rb_op_index(o->code, e0), fl = shlo__storage_loop(e0);
  if (k < 0 || fl < 0 || !rb_tab[k][fl].fold) return false;
  b->opcode = o->code;
  b->et = e0;
  b->esz = shlo_elem_size(e0);
  int bits = shlo_elem_bits(e0);
  b->mask = bits >= 64 ? UINT64_MAX : ((1ull << bits) - 1);
  b->wsh = b->esz == 1 && shlo_elem_class_of(e0) == SHLO_CLASS_SINT ? 8 - bits
                                                                     : 0;
  b->fold = rb_tab[k][fl].fold;
  b->fold_rows = fl == FL_f32 && k == RB_ADD   ? fold_rows_ADD_f32
                 : fl == FL_f32 && k == RB_MUL ? fold_rows_MUL_f32
                 : fl == FL_f64 && k == RB_ADD ? fold_rows_ADD_f64
                 : fl == FL_f64 && k == RB_MUL ? fold_rows_MUL_f64
                                               : fold_rows_each;
  b->fold_run = fl == FL_f32 && k == RB_ADD ? shlo__rb_sum_run_f32
                                            : fold_run_in_order;
  b->side = b->fold_rows == fold_rows_each   ? 1
            : fl == FL_f32 && k == RB_ADD    ? 16
                                             : 8;
  if (fl == FL_f32 && k == RB_MAX) b->fold = fold_MAX_f32_lanes;
  if (fl == FL_f32 && k == RB_MIN) b->fold = fold_MIN_f32_lanes;
  b->gfold = rb_tab[k][fl].gfold;
  b->accum = rb_tab[k][fl].accum;
  b->accum_grid = rb_tab[k][fl].accum_grid;
  if (fl == FL_f32 && k == RB_MAX) b->accum_grid = accum_grid_MAX_f32_isa;
  if (fl == FL_f32 && k == RB_MIN) b->accum_grid = accum_grid_MIN_f32_isa;
  return true;
}

/* ---- native comparators ---- */

static int dir_of(const char *s) {
  if (!s) return -1;
  if (!strcmp(s, "LT")) return SHLO_DIR_LT;
  if (!strcmp(s, "LE")) return SHLO_DIR_LE;
  if (!strcmp(s, "GT")) return SHLO_DIR_GT;
  if (!strcmp(s, "GE")) return SHLO_DIR_GE;
  return -1;
}

static shlo_dir dir_swap(shlo_dir d) {
  switch (d) {
  case SHLO_DIR_LT: return SHLO_DIR_GT;
  case SHLO_DIR_LE: return SHLO_DIR_GE;
  case SHLO_DIR_GT: return SHLO_DIR_LT;
  default: return SHLO_DIR_LE;
  }
}

bool shlo__rb_compare_of(shlo_compiler *cc, const shlo_op *op,
                         const shlo_op *o, bool swapped, shlo_rb_compare *c) {
  memset(c, 0, sizeof *c);
  int d = dir_of(shlo_attr_get_str(shlo_op_attr(o, "comparison_direction")));
  if (d < 0) return false;
  shlo_elem_type ea, eb;
  if (!scalar_of(vtype(cc, op, o->operands[0]), &ea) ||
      !scalar_of(vtype(cc, op, o->operands[1]), &eb) || ea != eb)
    return false;
  const char *ct = shlo_attr_get_str(shlo_op_attr(o, "compare_type"));
  c->total = ct && !strcmp(ct, "TOTALORDER");
  c->et = ea;
  switch (shlo_elem_class_of(ea)) {
  case SHLO_CLASS_BOOL:
  case SHLO_CLASS_UINT: c->kind = SHLO_KEY_U64; break;
  case SHLO_CLASS_SINT: c->kind = SHLO_KEY_I64; break;
  case SHLO_CLASS_FLOAT: c->kind = c->total ? SHLO_KEY_I64 : SHLO_KEY_F64; break;
  default: return false;
  }
  c->dir = swapped ? dir_swap((shlo_dir)d) : (shlo_dir)d;
  c->ok = true;
  return true;
}

bool shlo__rb_match_compare(shlo_compiler *cc, const shlo_op *op, int r,
                            shlo_rb_compare *c) {
  memset(c, 0, sizeof *c);
  if (r >= op->n_regions) return false;
  const shlo_block *blk = op->regions[r];
  if (blk->n_args < 2 || blk->n_args % 2 || blk->n_ops != 2) return false;
  const shlo_op *o = blk->ops[0], *ret = blk->ops[1];
  if (o->code != SHLO_OP_COMPARE || !is_return(ret) || ret->n_operands != 1 ||
      o->n_operands != 2 || o->n_results != 1 ||
      ret->operands[0] != o->results[0])
    return false;
  int ia = -1, ib = -1;
  for (int i = 0; i < blk->n_args; i++) {
    if (blk->args[i] == o->operands[0]) ia = i;
    if (blk->args[i] == o->operands[1]) ib = i;
  }
  if (ia < 0 || ib < 0 || ia / 2 != ib / 2 || ia == ib) return false;
  if (!shlo__rb_compare_of(cc, op, o, ia % 2 != 0, c)) return false;
  c->arg_pair = ia / 2;
  return true;
}

/* TOTALORDER: -NaN < -Inf < ... < -0 < +0 < ... < +Inf < +NaN. */
static inline int64_t tkey64(double v) {
  int64_t k;
  memcpy(&k, &v, 8);
  return k < 0 ? k ^ INT64_MAX : k;
}

shlo_key shlo__rb_key(const shlo_rb_compare *c, const void *p) {
  shlo_key k;
  switch (c->et) {
  case SHLO_I1: case SHLO_UI2: case SHLO_UI4: case SHLO_UI8:
    k.u = *(const uint8_t *)p; break;
  case SHLO_UI16: k.u = *(const uint16_t *)p; break;
  case SHLO_UI32: k.u = *(const uint32_t *)p; break;
  case SHLO_UI64: k.u = *(const uint64_t *)p; break;
  case SHLO_SI2: case SHLO_SI4: case SHLO_SI8: k.i = *(const int8_t *)p; break;
  case SHLO_SI16: k.i = *(const int16_t *)p; break;
  case SHLO_SI32: k.i = *(const int32_t *)p; break;
  case SHLO_SI64: k.i = *(const int64_t *)p; break;
  case SHLO_F32: {
    if (c->total) {
      int32_t b;
      memcpy(&b, p, 4);
      k.i = b < 0 ? (int64_t)(b ^ INT32_MAX) : b;
    } else {
      k.f = *(const float *)p;
    }
    break;
  }
  case SHLO_F64:
    k.f = *(const double *)p;
    if (c->total) k.i = tkey64(k.f);
    break;
  default:
    k.f = shlo__float_load(c->et, p);
    if (c->total) k.i = tkey64(k.f);
    break;
  }
  return k;
}

/* ---- the generic path ---- */

shlo_status shlo__rb_call_init(shlo_rb_call *c, const shlo_elem_type *lead_et,
                               int n_lead, const shlo_elem_type *res_et,
                               int n_res, const shlo_step *s, shlo_exec *ex) {
  memset(c, 0, sizeof *c);
  c->n_lead = n_lead;
  c->n_res = n_res;
  for (int i = 0; i < n_lead; i++) {
    c->lead_et[i] = lead_et[i];
    c->lead[i] = shlo_tensor_new(lead_et[i], 0, NULL);
    if (!c->lead[i]) {
      shlo__rb_call_free(c);
      return shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory");
    }
  }
  for (int i = 0; i < n_res; i++) c->res_et[i] = res_et[i];
  return SHLO_OK;
}

void shlo__rb_call_free(shlo_rb_call *c) {
  for (int i = 0; i < c->n_lead; i++) {
    shlo_value_unref(c->lead[i]);
    c->lead[i] = NULL;
  }
  for (int i = 0; i < c->n_res; i++) {
    shlo_value_unref(c->res[i]);
    c->res[i] = NULL;
  }
}

shlo_status shlo__rb_stopped(const shlo_step *s, shlo_exec *ex) {
  return shlo__exec_stopped(ex, s);
}

void shlo__rb_unref_n(shlo_value **v, int n) {
  for (int i = 0; i < n; i++) {
    shlo_value_unref(v[i]);
    v[i] = NULL;
  }
}

shlo_status shlo__rb_new_results(const shlo_step *s,
                                 const shlo_type *const *t, int n,
                                 shlo_value **out, shlo_exec *ex) {
  for (int k = 0; k < n; k++) {
    out[k] = shlo__tensor_new_uninit(t[k]->elem, t[k]->rank, t[k]->dims);
    if (out[k] && shlo_tensor_set_quant(out[k], t[k]->quant) != SHLO_OK) {
      shlo_value_unref(out[k]);
      out[k] = NULL;
    }
    if (!out[k]) {
      shlo__rb_unref_n(out, k);
      return shlo__exec_fail(ex, s, SHLO_ENOMEM,
                            "out of memory allocating the result");
    }
  }
  return SHLO_OK;
}

shlo_status shlo__rb_apply(shlo_rb_call *c, const shlo_step *s, int r,
                           shlo_value *const *in, const void *const *src,
                           void *const *dst, shlo_exec *ex) {
  if ((++c->calls & 255) == 0 && shlo__exec_should_stop(ex))
    return shlo__rb_stopped(s, ex);
  if (shlo__step_region_is_scalar(s, r)) {
    shlo__step_run_region_scalar(s, r, in, src, c->n_lead, dst);
    return SHLO_OK;
  }
  for (int i = 0; i < c->n_lead; i++) {
    /* Only write into a scalar nobody else holds (a probe in the body
     * may have kept one). */
    if (atomic_load(&c->lead[i]->refs) != 1) {
      shlo_value_unref(c->lead[i]);
      c->lead[i] = shlo_tensor_new(c->lead_et[i], 0, NULL);
      if (!c->lead[i])
        return shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory");
    }
    memcpy(c->lead[i]->data, src[i], shlo_elem_size(c->lead_et[i]));
  }
  shlo_status st = shlo__step_run_region(s, r, in, c->lead, c->n_lead, c->res, ex);
  if (st) return st;
  for (int k = 0; k < c->n_res; k++) {
    shlo_value *v = c->res[k];
    if (!v || v->kind != SHLO_TYPE_TENSOR || v->numel != 1 ||
        v->elem != c->res_et[k]) {
      for (int j = 0; j < c->n_res; j++) {
        shlo_value_unref(c->res[j]);
        c->res[j] = NULL;
      }
      return shlo__exec_fail(ex, s, SHLO_ERUNTIME,
                            "region result %d is not a scalar of type %s", k,
                            shlo_elem_name(c->res_et[k]));
    }
  }
  for (int k = 0; k < c->n_res; k++) {
    memcpy(dst[k], c->res[k]->data, shlo_elem_size(c->res_et[k]));
    shlo_value_unref(c->res[k]);
    c->res[k] = NULL;
  }
  return SHLO_OK;
}

bool shlo__rb_region_types(shlo_compiler *cc, const shlo_op *op, int r,
                           shlo_elem_type *args, int n_args,
                           shlo_elem_type *res, int n_res) {
  if (r >= op->n_regions) return false;
  const shlo_block *blk = op->regions[r];
  if (blk->n_args != n_args || blk->n_ops < 1) return false;
  const shlo_op *ret = blk->ops[blk->n_ops - 1];
  if (!is_return(ret) || ret->n_operands != n_res) return false;
  for (int i = 0; i < n_args; i++)
    if (!scalar_any(vtype(cc, op, blk->args[i]), &args[i])) return false;
  for (int i = 0; i < n_res; i++)
    if (!scalar_any(vtype(cc, op, ret->operands[i]), &res[i])) return false;
  return true;
}

shlo_status shlo__rb_check_counts(shlo_compiler *cc, const shlo_op *op,
                                  const char *label) {
  int n = op->n_results;
  if (n < 1 || op->n_operands != 2 * n || op->n_regions != 1)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "(%s) needs N inputs, N init values and N results "
                        "(N >= 1) and one body region",
                        label);
  if (n > SHLO_RB_MAX_N)
    return shlo__cc_fail(cc, op, SHLO_EUNSUPPORTED,
                        "more than %d inputs are not supported", SHLO_RB_MAX_N);
  return SHLO_OK;
}

shlo_status shlo__rb_compile_body(shlo_compiler *cc, const shlo_op *op,
                                  shlo_step *step, int n,
                                  const shlo_elem_type *out_et,
                                  const char *label) {
  shlo_status st = shlo__cc_compile_regions(cc, op, step);
  if (st) return st;
  shlo_elem_type aet[2 * SHLO_RB_MAX_N], ret[SHLO_RB_MAX_N];
  if (!shlo__rb_region_types(cc, op, 0, aet, 2 * n, ret, n) ||
      step->plans[0]->n_results != n)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "(%s) body must take 2*N scalars and return N", label);
  for (int k = 0; k < n; k++)
    if (ret[k] != out_et[k] || aet[k] != out_et[k])
      return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                          "(%s) body argument/result %d must be tensor<%s>",
                          label, k, shlo_elem_name(out_et[k]));
  return SHLO_OK;
}

shlo_status shlo__rb_first_input(shlo_compiler *cc, const shlo_op *op,
                                 const shlo_type **t0) {
  *t0 = shlo__cc_operand_type(cc, op, 0);
  if (!shlo__rb_is_tensor(*t0))
    return shlo__cc_fail(cc, op, SHLO_EUNSUPPORTED,
                        "inputs must be statically shaped tensors");
  return SHLO_OK;
}
