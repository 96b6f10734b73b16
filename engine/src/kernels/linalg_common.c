/* SPDX-License-Identifier: Apache-2.0 */
/* Shared machinery of the linear-algebra family (see linalg_int.h):
 * compute domains, conversion of element runs into and out of them,
 * strided gathers, and the GEMM dispatcher (OpenBLAS for f32/f64/complex,
 * native loops for integers and booleans).
 *
 * Conversions switch on the element type once per run, never per element. */
#include <math.h>
#include <string.h>

#include <cblas.h>

#include "core/bf16conv.h"
#include "core/floatfmt.h"
#include "core/blas_setup.h"
#include "kernels/gemm_panels.h"
#include "kernels/linalg_int.h"
#include "runtime/pool.h"

shlo__la_dom shlo__la_dom_for(shlo_elem_type t) {
  switch (t) {
  case SHLO_F32: return LA_F32;
  case SHLO_F64: return LA_F64;
  case SHLO_C64: return LA_C64;
  case SHLO_C128: return LA_C128;
  case SHLO_I1: return LA_BOOL;
  default: return shlo_elem_is_int(t) ? LA_INT : LA_F64;
  }
}

size_t shlo__la_dom_size(shlo__la_dom d) {
  switch (d) {
  case LA_F32: return 4;
  case LA_F64: return 8;
  case LA_C64: return 8;
  case LA_C128: return 16;
  case LA_INT: return 8;
  case LA_BOOL: return 1;
  }
  return 1;
}

bool shlo__la_native(shlo__la_dom d, shlo_elem_type t) {
  switch (d) {
  case LA_F32: return t == SHLO_F32;
  case LA_F64: return t == SHLO_F64;
  case LA_C64: return t == SHLO_C64;
  case LA_C128: return t == SHLO_C128;
  case LA_INT: return t == SHLO_SI64 || t == SHLO_UI64;
  case LA_BOOL: return t == SHLO_I1;
  }
  return false;
}

int64_t shlo__la_prod(const int64_t *dims, int n) {
  int64_t p = 1;
  for (int i = 0; i < n; i++) p *= dims[i];
  return p;
}

/* ---- loads ---- */

/* One loop over a run: x is the source element of type ST; EXPR uses it. */
#define LA_RUN(ST, EXPR)                                               \
  for (int64_t i = 0; i < n; i++) {                                    \
    ST x;                                                              \
    memcpy(&x, src + i * ss, sizeof x);                                \
    EXPR;                                                              \
  }                                                                    \
  return;

/* Real value of each source element, written to d[i * step] as DT. */
#define LA_DEF_LOAD_REAL(NAME, DT)                                           \
  static void NAME(DT *d, int64_t step, shlo_elem_type se, const char *src,  \
                   int64_t n, int64_t ss) {                                  \
    switch (se) {                                                            \
    case SHLO_I1: case SHLO_UI2: case SHLO_UI4: case SHLO_UI8:               \
      LA_RUN(uint8_t, d[i * step] = (DT)x)                                   \
    case SHLO_SI2: case SHLO_SI4: case SHLO_SI8:                             \
      LA_RUN(int8_t, d[i * step] = (DT)x)                                    \
    case SHLO_SI16: LA_RUN(int16_t, d[i * step] = (DT)x)                     \
    case SHLO_UI16: LA_RUN(uint16_t, d[i * step] = (DT)x)                    \
    case SHLO_SI32: LA_RUN(int32_t, d[i * step] = (DT)x)                     \
    case SHLO_UI32: LA_RUN(uint32_t, d[i * step] = (DT)x)                    \
    case SHLO_SI64: LA_RUN(int64_t, d[i * step] = (DT)x)                     \
    case SHLO_UI64: LA_RUN(uint64_t, d[i * step] = (DT)x)                    \
    case SHLO_F32: case SHLO_C64: LA_RUN(float, d[i * step] = (DT)x)         \
    case SHLO_F64: case SHLO_C128: LA_RUN(double, d[i * step] = (DT)x)       \
    default:                                                                 \
      for (int64_t i = 0; i < n; i++)                                        \
        d[i * step] = (DT)shlo__float_load(se, src + i * ss);                 \
      return;                                                                \
    }                                                                        \
  }

LA_DEF_LOAD_REAL(load_f64, double)
LA_DEF_LOAD_REAL(load_f32_generic, float)

/* bf16 into f32, the operands of a bf16 GEMM with f32 accumulation:
 * contiguous runs convert as arrays (AVX-512 where present), strided ones
 * by the same bit steps; the values are those of the generic path.
 * Contiguous f16 runs convert as arrays too. */
static void load_f32(float *d, int64_t step, shlo_elem_type se,
                     const char *src, int64_t n, int64_t ss) {
  if (se == SHLO_F16 && step == 1 && ss == 2) {
    shlo__f16_to_f32_n(d, (const uint16_t *)(const void *)src, n);
    return;
  }
  if (se != SHLO_BF16) {
    load_f32_generic(d, step, se, src, n, ss);
    return;
  }
  if (step == 1 && ss == 2) {
    shlo__bf16_to_f32_n(d, (const uint16_t *)(const void *)src, n);
    return;
  }
  for (int64_t i = 0; i < n; i++) {
    uint16_t h;
    memcpy(&h, src + i * ss, sizeof h);
    const uint32_t x = shlo__bf16_to_f32_bits(h);
    memcpy(&d[i * step], &x, sizeof x);
  }
}

/* Imaginary parts (0 for real sources) into d[i * step]. */
#define LA_DEF_LOAD_IMAG(NAME, DT)                                           \
  static void NAME(DT *d, int64_t step, shlo_elem_type se, const char *src,  \
                   int64_t n, int64_t ss) {                                  \
    if (se == SHLO_C64) {                                                    \
      src += sizeof(float);                                                  \
      LA_RUN(float, d[i * step] = (DT)x)                                     \
    }                                                                        \
    if (se == SHLO_C128) {                                                   \
      src += sizeof(double);                                                 \
      LA_RUN(double, d[i * step] = (DT)x)                                    \
    }                                                                        \
    for (int64_t i = 0; i < n; i++) d[i * step] = 0;                         \
  }

LA_DEF_LOAD_IMAG(load_imag_f32, float)
LA_DEF_LOAD_IMAG(load_imag_f64, double)

/* A float value truncated toward zero, saturating; NaN gives 0. */
static int64_t f2i(double v) {
  if (v != v) return 0;
  if (v >= 9223372036854775807.0) return INT64_MAX;
  if (v <= -9223372036854775808.0) return INT64_MIN;
  return (int64_t)v;
}

static void load_int(int64_t *d, shlo_elem_type se, const char *src,
                     int64_t n, int64_t ss) {
  switch (se) {
  case SHLO_I1: case SHLO_UI2: case SHLO_UI4: case SHLO_UI8:
    LA_RUN(uint8_t, d[i] = x)
  case SHLO_SI2: case SHLO_SI4: case SHLO_SI8: LA_RUN(int8_t, d[i] = x)
  case SHLO_SI16: LA_RUN(int16_t, d[i] = x)
  case SHLO_UI16: LA_RUN(uint16_t, d[i] = x)
  case SHLO_SI32: LA_RUN(int32_t, d[i] = x)
  case SHLO_UI32: LA_RUN(uint32_t, d[i] = x)
  case SHLO_SI64: LA_RUN(int64_t, d[i] = x)
  case SHLO_UI64: LA_RUN(uint64_t, d[i] = (int64_t)x)
  case SHLO_F32: case SHLO_C64: LA_RUN(float, d[i] = f2i(x))
  case SHLO_F64: case SHLO_C128: LA_RUN(double, d[i] = f2i(x))
  default:
    for (int64_t i = 0; i < n; i++) d[i] = f2i(shlo__float_load(se, src + i * ss));
    return;
  }
}

static void load_bool(uint8_t *d, shlo_elem_type se, const char *src,
                      int64_t n, int64_t ss) {
  if (shlo_elem_is_int(se) || se == SHLO_I1) {
    int64_t tmp[256];
    for (int64_t off = 0; off < n; off += 256) {
      int64_t m = n - off < 256 ? n - off : 256;
      load_int(tmp, se, src + off * ss, m, ss);
      for (int64_t i = 0; i < m; i++) d[off + i] = tmp[i] != 0;
    }
    return;
  }
  for (int64_t i = 0; i < n; i++) {
    double re = 0, im = 0;
    if (se == SHLO_C64) {
      float p[2];
      memcpy(p, src + i * ss, sizeof p);
      re = p[0], im = p[1];
    } else if (se == SHLO_C128) {
      double p[2];
      memcpy(p, src + i * ss, sizeof p);
      re = p[0], im = p[1];
    } else {
      re = shlo__float_load(se, src + i * ss);
    }
    d[i] = re != 0 || im != 0;
  }
}

void shlo__la_load(shlo__la_dom d, shlo_elem_type se, void *dst,
                   const char *src, int64_t n, int64_t ss) {
  switch (d) {
  case LA_F32:
    if (se == SHLO_F32 && ss == 4) {
      memcpy(dst, src, (size_t)n * 4);
      return;
    }
    load_f32(dst, 1, se, src, n, ss);
    return;
  case LA_F64:
    if (se == SHLO_F64 && ss == 8) {
      memcpy(dst, src, (size_t)n * 8);
      return;
    }
    load_f64(dst, 1, se, src, n, ss);
    return;
  case LA_C64:
    if (se == SHLO_C64 && ss == 8) {
      memcpy(dst, src, (size_t)n * 8);
      return;
    }
    load_f32(dst, 2, se, src, n, ss);
    load_imag_f32((float *)dst + 1, 2, se, src, n, ss);
    return;
  case LA_C128:
    if (se == SHLO_C128 && ss == 16) {
      memcpy(dst, src, (size_t)n * 16);
      return;
    }
    load_f64(dst, 2, se, src, n, ss);
    load_imag_f64((double *)dst + 1, 2, se, src, n, ss);
    return;
  case LA_INT:
    load_int(dst, se, src, n, ss);
    return;
  case LA_BOOL:
    load_bool(dst, se, src, n, ss);
    return;
  }
}

/* ---- stores ---- */

/* One loop writing n elements of type DT at dst (byte stride ds); v is the
 * i-th source element. */
#define LA_PUT(DT, EXPR)                                               \
  for (int64_t i = 0; i < n; i++) {                                    \
    DT y = (DT)(EXPR);                                                 \
    memcpy(dst + i * ds, &y, sizeof y);                                \
  }                                                                    \
  return;

/* Real domain values (read as s[i * step] of type ST) into type de. */
#define LA_DEF_STORE_REAL(NAME, ST)                                          \
  static void NAME(shlo_elem_type de, char *dst, int64_t ds, const ST *s,    \
                   int64_t step, const ST *im, int64_t n) {                  \
    switch (de) {                                                            \
    case SHLO_F32: LA_PUT(float, s[i * step])                                \
    case SHLO_F64: LA_PUT(double, s[i * step])                               \
    case SHLO_C64:                                                           \
      for (int64_t i = 0; i < n; i++) {                                      \
        float y[2] = {(float)s[i * step], im ? (float)im[i * step] : 0.0f};  \
        memcpy(dst + i * ds, y, sizeof y);                                   \
      }                                                                      \
      return;                                                                \
    case SHLO_C128:                                                          \
      for (int64_t i = 0; i < n; i++) {                                      \
        double y[2] = {(double)s[i * step], im ? (double)im[i * step] : 0.0};\
        memcpy(dst + i * ds, y, sizeof y);                                   \
      }                                                                      \
      return;                                                                \
    case SHLO_I1: LA_PUT(uint8_t, s[i * step] != 0)                          \
    default:                                                                 \
      if (shlo_elem_is_int(de)) {                                            \
        for (int64_t i = 0; i < n; i++) {                                    \
          int64_t v = shlo_int_wrap(de, f2i((double)s[i * step]));           \
          memcpy(dst + i * ds, &v, shlo_elem_size(de));                      \
        }                                                                    \
        return;                                                              \
      }                                                                      \
      for (int64_t i = 0; i < n; i++)                                        \
        shlo__float_store(de, (double)s[i * step], dst + i * ds);             \
      return;                                                                \
    }                                                                        \
  }

LA_DEF_STORE_REAL(store_f32, float)
LA_DEF_STORE_REAL(store_f64, double)

static void store_int(shlo_elem_type de, char *dst, int64_t ds,
                      const int64_t *s, int64_t n) {
  switch (de) {
  case SHLO_SI8: LA_PUT(int8_t, s[i])
  case SHLO_UI8: LA_PUT(uint8_t, s[i])
  case SHLO_SI16: LA_PUT(int16_t, s[i])
  case SHLO_UI16: LA_PUT(uint16_t, s[i])
  case SHLO_SI32: LA_PUT(int32_t, s[i])
  case SHLO_UI32: LA_PUT(uint32_t, s[i])
  case SHLO_SI64: LA_PUT(int64_t, s[i])
  case SHLO_UI64: LA_PUT(uint64_t, s[i])
  case SHLO_SI2: case SHLO_SI4: LA_PUT(int8_t, shlo_int_wrap(de, s[i]))
  case SHLO_UI2: case SHLO_UI4: LA_PUT(uint8_t, shlo_int_wrap(de, s[i]))
  case SHLO_I1: LA_PUT(uint8_t, s[i] != 0)
  case SHLO_F32: LA_PUT(float, s[i])
  case SHLO_F64: LA_PUT(double, s[i])
  case SHLO_C64:
    for (int64_t i = 0; i < n; i++) {
      float y[2] = {(float)s[i], 0.0f};
      memcpy(dst + i * ds, y, sizeof y);
    }
    return;
  case SHLO_C128:
    for (int64_t i = 0; i < n; i++) {
      double y[2] = {(double)s[i], 0.0};
      memcpy(dst + i * ds, y, sizeof y);
    }
    return;
  default:
    for (int64_t i = 0; i < n; i++)
      shlo__float_store(de, (double)s[i], dst + i * ds);
    return;
  }
}

void shlo__la_store(shlo__la_dom d, shlo_elem_type de, char *dst, int64_t ds,
                    const void *src, int64_t n) {
  size_t es = shlo_elem_size(de);
  if (shlo__la_native(d, de) && ds == (int64_t)es) {
    memcpy(dst, src, (size_t)n * es);
    return;
  }
  switch (d) {
  case LA_F32: store_f32(de, dst, ds, src, 1, NULL, n); return;
  case LA_F64: store_f64(de, dst, ds, src, 1, NULL, n); return;
  case LA_C64:
    store_f32(de, dst, ds, src, 2, (const float *)src + 1, n);
    return;
  case LA_C128:
    store_f64(de, dst, ds, src, 2, (const double *)src + 1, n);
    return;
  case LA_INT: store_int(de, dst, ds, src, n); return;
  case LA_BOOL: {
    const uint8_t *s = src;
    int64_t tmp[256];
    for (int64_t off = 0; off < n; off += 256) {
      int64_t m = n - off < 256 ? n - off : 256;
      for (int64_t i = 0; i < m; i++) tmp[i] = s[off + i];
      store_int(de, dst + off * ds, ds, tmp, m);
    }
    return;
  }
  }
}

/* ---- strided walks ---- */

void shlo__la_walk_init(shlo__la_walk *w, int rank, const int64_t *count,
                        const int64_t *stride, int64_t offset, size_t es) {
  memset(w, 0, sizeof *w);
  w->offset = offset * (int64_t)es;
  int r = 0;
  for (int i = 0; i < rank; i++) {
    if (count[i] == 0) w->empty = true;
    if (count[i] == 1) continue;
    int64_t s = stride[i] * (int64_t)es;
    if (r > 0 && w->stride[r - 1] == s * count[i]) {
      w->count[r - 1] *= count[i];
      w->stride[r - 1] = s;
      continue;
    }
    w->count[r] = count[i];
    w->stride[r] = s;
    r++;
  }
  w->rank = r;
}

void shlo__la_gather(const shlo__la_walk *w, shlo__la_dom d, shlo_elem_type se,
                     void *dst, const char *src) {
  if (w->empty) return;
  size_t des = shlo__la_dom_size(d);
  char *out = dst;
  src += w->offset;
  if (w->rank == 0) {
    shlo__la_load(d, se, out, src, 1, (int64_t)shlo_elem_size(se));
    return;
  }
  int last = w->rank - 1;
  int64_t n = w->count[last], ss = w->stride[last];
  int64_t idx[SHLO_LA_WALK_MAX] = {0};
  for (;;) {
    shlo__la_load(d, se, out, src, n, ss);
    out += n * (int64_t)des;
    int k = last - 1;
    for (; k >= 0; k--) {
      src += w->stride[k];
      if (++idx[k] < w->count[k]) break;
      src -= w->stride[k] * w->count[k];
      idx[k] = 0;
    }
    if (k < 0) break;
  }
}

/* ---- GEMM ---- */

/* Native loops for the integer and boolean domains: C = A * B with A
 * element (i, p) at a[i * ai + p * ap] and B element (p, j) at
 * b[p * bp + j * bj]. */
static void gemm_int(bool ta, bool tb, int64_t m, int64_t n, int64_t k,
                     const int64_t *a, int64_t lda, const int64_t *b,
                     int64_t ldb, int64_t *c, int64_t ldc) {
  int64_t ai = ta ? 1 : lda, ap = ta ? lda : 1;
  int64_t bp = tb ? 1 : ldb, bj = tb ? ldb : 1;
  for (int64_t i = 0; i < m; i++) {
    uint64_t *crow = (uint64_t *)(c + i * ldc);
    for (int64_t j = 0; j < n; j++) crow[j] = 0;
    for (int64_t p = 0; p < k; p++) {
      uint64_t av = (uint64_t)a[i * ai + p * ap];
      if (!av) continue;
      const int64_t *brow = b + p * bp;
      for (int64_t j = 0; j < n; j++) crow[j] += av * (uint64_t)brow[j * bj];
    }
  }
}

static void gemm_bool(bool ta, bool tb, int64_t m, int64_t n, int64_t k,
                      const uint8_t *a, int64_t lda, const uint8_t *b,
                      int64_t ldb, uint8_t *c, int64_t ldc) {
  int64_t ai = ta ? 1 : lda, ap = ta ? lda : 1;
  int64_t bp = tb ? 1 : ldb, bj = tb ? ldb : 1;
  for (int64_t i = 0; i < m; i++) {
    uint8_t *crow = c + i * ldc;
    for (int64_t j = 0; j < n; j++) crow[j] = 0;
    for (int64_t p = 0; p < k; p++) {
      if (!a[i * ai + p * ap]) continue;
      const uint8_t *brow = b + p * bp;
      for (int64_t j = 0; j < n; j++) crow[j] |= brow[j * bj] != 0;
    }
  }
}

/* Plain sequential loops for small float products: each C element sums
 * its k products in order, without fused multiply-adds, as XLA's CPU
 * backend does for small dots (BLAS blocking and FMA would differ in the
 * last bits, which matters under cancellation). */
#define LA_NAIVE_REAL(NAME, T)                                              \
  __attribute__((optimize("fp-contract=off"))) static void NAME(           \
      bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T *a,        \
      int64_t lda, const T *b, int64_t ldb, T *c, int64_t ldc) {            \
    int64_t ai = ta ? 1 : lda, ap = ta ? lda : 1;                           \
    int64_t bp = tb ? 1 : ldb, bj = tb ? ldb : 1;                           \
    for (int64_t i = 0; i < m; i++)                                         \
      for (int64_t j = 0; j < n; j++) {                                     \
        T acc = 0;                                                          \
        for (int64_t p = 0; p < k; p++) {                                   \
          T prod = a[i * ai + p * ap] * b[p * bp + j * bj];                 \
          acc += prod;                                                      \
        }                                                                   \
        c[i * ldc + j] = acc;                                               \
      }                                                                     \
  }
#define LA_NAIVE_CPLX(NAME, T)                                              \
  __attribute__((optimize("fp-contract=off"))) static void NAME(           \
      bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T *a,        \
      int64_t lda, const T *b, int64_t ldb, T *c, int64_t ldc) {            \
    int64_t ai = ta ? 1 : lda, ap = ta ? lda : 1;                           \
    int64_t bp = tb ? 1 : ldb, bj = tb ? ldb : 1;                           \
    for (int64_t i = 0; i < m; i++)                                         \
      for (int64_t j = 0; j < n; j++) {                                     \
        T re = 0, im = 0;                                                   \
        for (int64_t p = 0; p < k; p++) {                                   \
          const T *x = a + 2 * (i * ai + p * ap), *y = b + 2 * (p * bp + j * bj); \
          T pr = x[0] * y[0] - x[1] * y[1];                                 \
          T pi = x[0] * y[1] + x[1] * y[0];                                 \
          re += pr;                                                         \
          im += pi;                                                         \
        }                                                                   \
        c[2 * (i * ldc + j)] = re;                                          \
        c[2 * (i * ldc + j) + 1] = im;                                      \
      }                                                                     \
  }
LA_NAIVE_REAL(naive_f32, float)
LA_NAIVE_REAL(naive_f64, double)
LA_NAIVE_CPLX(naive_c64, float)
LA_NAIVE_CPLX(naive_c128, double)

/* Products up to this many multiply-adds run the plain loops. */
#define LA_NAIVE_MAX 32768

/* One BLAS call: c[m x n] = op(a) op(b). */
static void blas_gemm(shlo__la_dom d, bool ta, bool tb, int64_t m, int64_t n,
                      int64_t k, const void *a, int64_t lda, const void *b,
                      int64_t ldb, void *c, int64_t ldc);

/* Large float GEMMs are split into blocks of rows or columns of c, one per
 * thread of the engine's pool, each a single-threaded BLAS call: OpenBLAS's
 * own threads would compete with the pool's (and, with two executions at
 * once, with each other) for the same cores. */
#define LA_SPLIT_MIN ((int64_t)1 << 18) /* multiply-adds worth a split */

typedef struct gemm_job {
  shlo__la_dom d;
  bool ta, tb, by_cols;
  int64_t m, n, k, lda, ldb, ldc;
  const char *a, *b;
  char *c;
} gemm_job;

static void gemm_block(void *ctx, int64_t lo, int64_t hi) {
  const gemm_job *j = ctx;
  size_t es = shlo__la_dom_size(j->d);
  if (j->by_cols) /* columns [lo, hi) of c: those of op(b) */
    blas_gemm(j->d, j->ta, j->tb, j->m, hi - lo, j->k, j->a, j->lda,
              j->b + (size_t)(j->tb ? lo * j->ldb : lo) * es, j->ldb,
              j->c + (size_t)lo * es, j->ldc);
  else /* rows [lo, hi) of c: those of op(a) */
    blas_gemm(j->d, j->ta, j->tb, hi - lo, j->n, j->k,
              j->a + (size_t)(j->ta ? lo : lo * j->lda) * es, j->lda, j->b,
              j->ldb, j->c + (size_t)(lo * j->ldc) * es, j->ldc);
}

/* At load, before any BLAS call (blas_setup.c says why here too). */
__attribute__((constructor)) static void blas_setup_at_load(void) {
  shlo__blas_setup();
}

static void la_gemm(shlo__la_dom d, bool ta, bool tb, int64_t m, int64_t n,
                    int64_t k, const void *a, int64_t lda, const void *b,
                    int64_t ldb, void *c, int64_t ldc, bool may_split) {
  if (m == 0 || n == 0) return;
  size_t es = shlo__la_dom_size(d);
  if (k == 0) {
    for (int64_t i = 0; i < m; i++)
      memset((char *)c + i * ldc * (int64_t)es, 0, (size_t)n * es);
    return;
  }
  if (m * n * k <= LA_NAIVE_MAX) {
    switch (d) {
    case LA_F32: naive_f32(ta, tb, m, n, k, a, lda, b, ldb, c, ldc); return;
    case LA_F64: naive_f64(ta, tb, m, n, k, a, lda, b, ldb, c, ldc); return;
    case LA_C64: naive_c64(ta, tb, m, n, k, a, lda, b, ldb, c, ldc); return;
    case LA_C128: naive_c128(ta, tb, m, n, k, a, lda, b, ldb, c, ldc); return;
    default: break;
    }
  }
  int threads = shlo__pool_threads();
  bool is_float = d == LA_F32 || d == LA_F64 || d == LA_C64 || d == LA_C128;
  if (may_split && is_float && threads > 1 && m * n * k >= LA_SPLIT_MIN) {
    gemm_job j = {d, ta, tb, n >= m, m, n, k, lda, ldb, ldc, a, b, c};
    int64_t len = j.by_cols ? n : m;
    /* one block per thread, a multiple of 16 rows or columns */
    int64_t grain = ((len + threads - 1) / threads + 15) / 16 * 16;
    shlo__parallel_for(len, grain, gemm_block, &j);
    return;
  }
  blas_gemm(d, ta, tb, m, n, k, a, lda, b, ldb, c, ldc);
}

void shlo__la_gemm(shlo__la_dom d, bool ta, bool tb, int64_t m, int64_t n,
                   int64_t k, const void *a, int64_t lda, const void *b,
                   int64_t ldb, void *c, int64_t ldc) {
  la_gemm(d, ta, tb, m, n, k, a, lda, b, ldb, c, ldc, true);
}

void shlo__la_gemm_serial(shlo__la_dom d, bool ta, bool tb, int64_t m,
                          int64_t n, int64_t k, const void *a, int64_t lda,
                          const void *b, int64_t ldb, void *c, int64_t ldc) {
  la_gemm(d, ta, tb, m, n, k, a, lda, b, ldb, c, ldc, false);
}

bool shlo__la_gemm_f32_all_panels(int64_t m, int64_t n, int64_t k) {
  if (m == 0 || n == 0 || k == 0 || m * n * k <= LA_NAIVE_MAX) return false;
  int threads = shlo__pool_threads();
  if (threads <= 1 || m * n * k < LA_SPLIT_MIN)
    return shlo__sgemm_panels_takes(m, n, k);
  /* la_gemm's blocks, as it splits them */
  bool by_cols = n >= m;
  int64_t len = by_cols ? n : m;
  int64_t grain = ((len + threads - 1) / threads + 15) / 16 * 16;
  for (int64_t lo = 0; lo < len; lo += grain) {
    int64_t part = len - lo < grain ? len - lo : grain;
    if (!(by_cols ? shlo__sgemm_panels_takes(m, part, k)
                  : shlo__sgemm_panels_takes(part, n, k)))
      return false;
  }
  return true;
}

static void blas_gemm(shlo__la_dom d, bool ta, bool tb, int64_t m, int64_t n,
                      int64_t k, const void *a, int64_t lda, const void *b,
                      int64_t ldb, void *c, int64_t ldc) {
  enum CBLAS_TRANSPOSE tra = ta ? CblasTrans : CblasNoTrans;
  enum CBLAS_TRANSPOSE trb = tb ? CblasTrans : CblasNoTrans;
  switch (d) {
  case LA_F32:
    /* the shapes where OpenBLAS spends much of the call packing */
    if (shlo__sgemm_panels(ta, tb, m, n, k, a, lda, b, ldb, c, ldc)) return;
    cblas_sgemm(CblasRowMajor, tra, trb, (blasint)m, (blasint)n, (blasint)k,
                1.0f, a, (blasint)lda, b, (blasint)ldb, 0.0f, c, (blasint)ldc);
    return;
  case LA_F64:
    cblas_dgemm(CblasRowMajor, tra, trb, (blasint)m, (blasint)n, (blasint)k,
                1.0, a, (blasint)lda, b, (blasint)ldb, 0.0, c, (blasint)ldc);
    return;
  case LA_C64: {
    const float one[2] = {1, 0}, zero[2] = {0, 0};
    cblas_cgemm(CblasRowMajor, tra, trb, (blasint)m, (blasint)n, (blasint)k,
                one, a, (blasint)lda, b, (blasint)ldb, zero, c, (blasint)ldc);
    return;
  }
  case LA_C128: {
    const double one[2] = {1, 0}, zero[2] = {0, 0};
    cblas_zgemm(CblasRowMajor, tra, trb, (blasint)m, (blasint)n, (blasint)k,
                one, a, (blasint)lda, b, (blasint)ldb, zero, c, (blasint)ldc);
    return;
  }
  case LA_INT:
    gemm_int(ta, tb, m, n, k, a, lda, b, ldb, c, ldc);
    return;
  case LA_BOOL:
    gemm_bool(ta, tb, m, n, k, a, lda, b, ldb, c, ldc);
    return;
  }
}

shlo_status shlo__la_want_tensor(shlo_compiler *cc, const shlo_op *op,
                                 const shlo_type *t, const char *what) {
  if (!t || t->kind != SHLO_TYPE_TENSOR)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY, "%s is not a tensor", what);
  if (!shlo_type_is_static(t) || shlo_type_numel(t) < 0)
    return shlo__cc_fail(cc, op, SHLO_EUNSUPPORTED,
                        "%s has a dynamic shape", what);
  if (t->quant)
    return shlo__cc_fail(cc, op, SHLO_EUNSUPPORTED,
                        "quantized %s is not supported", what);
  return SHLO_OK;
}

shlo_status shlo__la_lhs_rhs_result(shlo_compiler *cc, const shlo_op *op,
                                    const shlo_type **lt,
                                    const shlo_type **rt,
                                    const shlo_type **ot) {
  shlo_status st;
  *lt = shlo__cc_operand_type(cc, op, 0);
  *rt = shlo__cc_operand_type(cc, op, 1);
  *ot = shlo__cc_result_type(cc, op, 0);
  if ((st = shlo__la_want_tensor(cc, op, *lt, "lhs")) ||
      (st = shlo__la_want_tensor(cc, op, *rt, "rhs")) ||
      (st = shlo__la_want_tensor(cc, op, *ot, "result")))
    return st;
  return SHLO_OK;
}
