/* SPDX-License-Identifier: Apache-2.0 */
/* stablehlo.convert and stablehlo.bitcast_convert.
 *
 * convert: one loop per (source storage flavour, destination storage
 * flavour), generated below and picked at compile time.  Semantics follow
 * the StableHLO reference interpreter:
 *  - integer -> integer: sign- or zero-extend the source by its own
 *    signedness, then truncate to the destination width;
 *  - integer -> float: rounded once to nearest even (through a
 *    round-to-odd double for formats narrower than f32, so values above
 *    2^53 are not rounded twice);
 *  - float -> integer: round toward zero, saturating at the destination's
 *    range; NaN gives 0;
 *  - float -> float: round to nearest even with the format's overflow rules
 *    (floatfmt.h);
 *  - anything -> i1: value != 0 (NaN is true); i1 -> anything: 0 or 1;
 *  - complex -> real types: the real part; real -> complex: imaginary 0.
 *
 * bitcast_convert: the operand's elements, each of its element type's bit
 * width (sub-byte types: their own width, i1 one bit), form a little-endian
 * bit stream that the result's elements are cut from; a wider result
 * consumes the operand's last dimension, a narrower one adds a last
 * dimension.  When both types fill their storage bytes exactly this is a
 * memcpy. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "core/bf16conv.h"
#include "core/floatfmt.h"
#include "core/int_range.h"
#include "core/storage.h"
#include "core/value.h"
#include "kernels/kernel.h"
#include "compile/plan.h"
#include "core/value_quant.h"

typedef struct cv_params cv_params;
typedef void (*cv_fn)(void *d, const void *a, int64_t n, const cv_params *p);

struct cv_params {
  shlo_elem_type out_elem;
  int rank;
  int64_t dims[SHLO_MAX_RANK];
  int64_t numel;          /* result elements */
  int64_t in_numel;       /* operand elements */
  shlo_elem_type set, det; /* source / destination element types */
  size_t ssz, dsz;        /* their storage sizes */
  int sbits, dbits;       /* their bit widths */
  /* integer destinations */
  int wsh;
  uint64_t mask;
  double dlo, dhi;        /* saturation bounds for float -> integer */
  int64_t imin, imax;
  uint64_t umax;
  cv_fn fn;
  bool bytewise;          /* bitcast: plain memcpy */
  const shlo_quant *out_quant; /* bitcast to a quantized type (borrowed
                                  from the module, which outlives the plan;
                                  results get their own copy) */
};

static shlo_status cv_begin(const shlo_step *s, shlo_value *const *in,
                            shlo_exec *ex, shlo_value **res) {
  const cv_params *p = s->params;
  if (!in[0] || in[0]->kind != SHLO_TYPE_TENSOR || in[0]->numel != p->in_numel)
    return shlo__exec_fail(ex, s, SHLO_ERUNTIME,
                          "operand does not have the compiled shape");
  *res = shlo_tensor_new(p->out_elem, p->rank, p->dims);
  if (!*res)
    return shlo__exec_fail(ex, s, SHLO_ENOMEM,
                          "out of memory allocating the result");
  return SHLO_OK;
}

/* ---- scalar conversion helpers ---- */

static inline int64_t cv_f2s(double v, const cv_params *p) {
  if (v != v) return 0;
  if (v <= p->dlo) return p->imin;
  if (v >= p->dhi) return p->imax;
  return (int64_t)v;
}

static inline uint64_t cv_f2u(double v, const cv_params *p) {
  if (!(v > 0)) return 0; /* NaN, negatives (truncated or saturated) */
  if (v >= p->dhi) return p->umax;
  return (uint64_t)v;
}

/* Integer to double rounding to odd at 53 bits: exact below 2^53, and
 * rounding the result once more to a narrow format gives the correctly
 * rounded value. */
static inline double cv_u2d(uint64_t m) {
  if (m <= (1ull << 53)) return (double)m;
  int sh = 64 - __builtin_clzll(m) - 53;
  uint64_t q = m >> sh;
  if (m & ((1ull << sh) - 1)) q |= 1;
  return ldexp((double)q, sh);
}
static inline double cv_s2d(int64_t v) {
  return v < 0 ? -cv_u2d(0 - (uint64_t)v) : cv_u2d((uint64_t)v);
}

/* ---- source flavours: X(DN, DK, name, kind) ---- */

#define CV_SRCS(X, DN, DK)                                                  \
  X(DN, DK, s8, SI) X(DN, DK, s16, SI) X(DN, DK, s32, SI)                   \
  X(DN, DK, s64, SI) X(DN, DK, u8, UI) X(DN, DK, u16, UI)                   \
  X(DN, DK, u32, UI) X(DN, DK, u64, UI) X(DN, DK, f32, F)                   \
  X(DN, DK, f64, F) X(DN, DK, nar, F) X(DN, DK, c64, C) X(DN, DK, c128, C)
/* Sources are numbered by their storage (core/storage.h). */
enum { SHLO__ST_LOOP_NAMES(SRC_), SRC_COUNT };

#define SLD_s8(a, i) (((const int8_t *)(a))[i])
#define SLD_s16(a, i) (((const int16_t *)(a))[i])
#define SLD_s32(a, i) (((const int32_t *)(a))[i])
#define SLD_s64(a, i) (((const int64_t *)(a))[i])
#define SLD_u8(a, i) (((const uint8_t *)(a))[i])
#define SLD_u16(a, i) (((const uint16_t *)(a))[i])
#define SLD_u32(a, i) (((const uint32_t *)(a))[i])
#define SLD_u64(a, i) (((const uint64_t *)(a))[i])
#define SLD_f32(a, i) ((double)((const float *)(a))[i])
#define SLD_f64(a, i) (((const double *)(a))[i])
#define SLD_nar(a, i) shlo__float_load(set, (const char *)(a) + (size_t)(i) * ssz)
#define SLD_c64(a, i) ((double)((const float *)(a))[2 * (i)])
#define SLD_c128(a, i) (((const double *)(a))[2 * (i)])
#define SLDI_s8(a, i) 0
#define SLDI_s16(a, i) 0
#define SLDI_s32(a, i) 0
#define SLDI_s64(a, i) 0
#define SLDI_u8(a, i) 0
#define SLDI_u16(a, i) 0
#define SLDI_u32(a, i) 0
#define SLDI_u64(a, i) 0
#define SLDI_f32(a, i) 0
#define SLDI_f64(a, i) 0
#define SLDI_nar(a, i) 0
#define SLDI_c64(a, i) ((double)((const float *)(a))[2 * (i) + 1])
#define SLDI_c128(a, i) (((const double *)(a))[2 * (i) + 1])

/* ---- destination flavours: X(name, kind) ---- */

#define CV_DSTS(X)                                                          \
  X(s8, I) X(s16, I) X(s32, I) X(s64, I) X(u8, I) X(u16, I) X(u32, I)       \
  X(u64, I) X(b1, B) X(f32, F32) X(f64, F64) X(nar, NAR) X(c64, C64)        \
  X(c128, C128)
enum { SHLO__ST_LOOP_NAMES(DST_), DST_b1, DST_COUNT };

#define CVT_T_s8 int8_t
#define CVT_T_s16 int16_t
#define CVT_T_s32 int32_t
#define CVT_T_s64 int64_t
#define CVT_T_u8 uint8_t
#define CVT_T_u16 uint16_t
#define CVT_T_u32 uint32_t
#define CVT_T_u64 uint64_t
#define CVT_SG_s8 1
#define CVT_SG_s16 1
#define CVT_SG_s32 1
#define CVT_SG_s64 1
#define CVT_SG_u8 0
#define CVT_SG_u16 0
#define CVT_SG_u32 0
#define CVT_SG_u64 0

/* Re-wrap to a sub-byte destination width (see elementwise.c). */
#define CV_WRAP(SG, T, x)                                                   \
  (sizeof(T) > 1 ? (T)(x)                                                   \
   : (SG) ? (T)((T)(uint8_t)((uint8_t)(x) << wsh) >> wsh)                   \
          : (T)((uint8_t)(x) & (uint8_t)mask))

#define CV_PUT_I(DN, d, i, x)                                               \
  do {                                                                      \
    CVT_T_##DN r_ = (CVT_T_##DN)(x);                                        \
    ((CVT_T_##DN *)(d))[i] = CV_WRAP(CVT_SG_##DN, CVT_T_##DN, r_);          \
  } while (0)
#define CV_F2I(DN, v)                                                       \
  (CVT_SG_##DN ? (uint64_t)cv_f2s((v), p) : cv_f2u((v), p))

#define CVST_I_SI(DN, d, i, v, vi) CV_PUT_I(DN, d, i, v)
#define CVST_I_UI(DN, d, i, v, vi) CV_PUT_I(DN, d, i, v)
#define CVST_I_F(DN, d, i, v, vi) CV_PUT_I(DN, d, i, CV_F2I(DN, v))
#define CVST_I_C(DN, d, i, v, vi) CV_PUT_I(DN, d, i, CV_F2I(DN, v))
#define CVST_B_SI(DN, d, i, v, vi) (((uint8_t *)(d))[i] = (v) != 0)
#define CVST_B_UI(DN, d, i, v, vi) (((uint8_t *)(d))[i] = (v) != 0)
#define CVST_B_F(DN, d, i, v, vi) (((uint8_t *)(d))[i] = (v) != 0)
#define CVST_B_C(DN, d, i, v, vi) (((uint8_t *)(d))[i] = (v) != 0)
#define CVST_F32_SI(DN, d, i, v, vi) (((float *)(d))[i] = (float)(v))
#define CVST_F32_UI(DN, d, i, v, vi) (((float *)(d))[i] = (float)(v))
#define CVST_F32_F(DN, d, i, v, vi) (((float *)(d))[i] = (float)(v))
#define CVST_F32_C(DN, d, i, v, vi) (((float *)(d))[i] = (float)(v))
#define CVST_F64_SI(DN, d, i, v, vi) (((double *)(d))[i] = (double)(v))
#define CVST_F64_UI(DN, d, i, v, vi) (((double *)(d))[i] = (double)(v))
#define CVST_F64_F(DN, d, i, v, vi) (((double *)(d))[i] = (double)(v))
#define CVST_F64_C(DN, d, i, v, vi) (((double *)(d))[i] = (double)(v))
#define CV_NARP(d, i) ((char *)(d) + (size_t)(i) * dsz)
#define CVST_NAR_SI(DN, d, i, v, vi)                                        \
  shlo__float_store(det, cv_s2d((int64_t)(v)), CV_NARP(d, i))
#define CVST_NAR_UI(DN, d, i, v, vi)                                        \
  shlo__float_store(det, cv_u2d((uint64_t)(v)), CV_NARP(d, i))
#define CVST_NAR_F(DN, d, i, v, vi) shlo__float_store(det, (v), CV_NARP(d, i))
#define CVST_NAR_C(DN, d, i, v, vi) shlo__float_store(det, (v), CV_NARP(d, i))
#define CV_PUT_C(PT, d, i, re, im)                                          \
  do {                                                                      \
    PT *o_ = (PT *)(d) + 2 * (i);                                           \
    o_[0] = (PT)(re);                                                       \
    o_[1] = (PT)(im);                                                       \
  } while (0)
#define CVST_C64_SI(DN, d, i, v, vi) CV_PUT_C(float, d, i, v, 0)
#define CVST_C64_UI(DN, d, i, v, vi) CV_PUT_C(float, d, i, v, 0)
#define CVST_C64_F(DN, d, i, v, vi) CV_PUT_C(float, d, i, v, 0)
#define CVST_C64_C(DN, d, i, v, vi) CV_PUT_C(float, d, i, v, vi)
#define CVST_C128_SI(DN, d, i, v, vi) CV_PUT_C(double, d, i, v, 0)
#define CVST_C128_UI(DN, d, i, v, vi) CV_PUT_C(double, d, i, v, 0)
#define CVST_C128_F(DN, d, i, v, vi) CV_PUT_C(double, d, i, v, 0)
#define CVST_C128_C(DN, d, i, v, vi) CV_PUT_C(double, d, i, v, vi)

#define CV_PROLOGUE                                                         \
  const shlo_elem_type set = p->set, det = p->det;                          \
  const size_t ssz = p->ssz, dsz = p->dsz;                                  \
  const int wsh = p->wsh;                                                   \
  const uint64_t mask = p->mask;                                            \
  (void)set; (void)det; (void)ssz; (void)dsz; (void)wsh; (void)mask

#define DEF_CVT(DN, DK, SN, SK)                                             \
  static void cvt_##SN##_##DN(void *d, const void *a, int64_t n,            \
                              const cv_params *p) {                         \
    CV_PROLOGUE;                                                            \
    for (int64_t i = 0; i < n; i++) {                                       \
      CVST_##DK##_##SK(DN, d, i, SLD_##SN(a, i), SLDI_##SN(a, i));          \
    }                                                                       \
  }
#define DEF_CVT_ROW(DN, DK) CV_SRCS(DEF_CVT, DN, DK)
CV_DSTS(DEF_CVT_ROW)

#define CELL_CVT(DN, DK, SN, SK) [SRC_##SN] = cvt_##SN##_##DN,
#define ROW_CVT(DN, DK) [DST_##DN] = {CV_SRCS(CELL_CVT, DN, DK)},
static const cv_fn cv_tab[DST_COUNT][SRC_COUNT] = {CV_DSTS(ROW_CVT)};

/* f32 <-> bf16 (the conversions around every bf16 GEMM) and f32 <-> f16:
 * whole arrays at once (AVX-512 where present), the same bits as the
 * generic loops. */
static void cvt_f32_to_bf16(void *d, const void *a, int64_t n,
                            const cv_params *p) {
  (void)p;
  shlo__bf16_from_f32_n(d, a, n);
}

static void cvt_bf16_to_f32(void *d, const void *a, int64_t n,
                            const cv_params *p) {
  (void)p;
  shlo__bf16_to_f32_n(d, a, n);
}

static void cvt_f32_to_f16(void *d, const void *a, int64_t n,
                           const cv_params *p) {
  (void)p;
  shlo__f16_from_f32_n(d, a, n);
}

static void cvt_f16_to_f32(void *d, const void *a, int64_t n,
                           const cv_params *p) {
  (void)p;
  shlo__f16_to_f32_n(d, a, n);
}

/* The array loop for set -> det where one exists, else the table's. */
static cv_fn cv_pick(shlo_elem_type set, shlo_elem_type det, cv_fn generic) {
  if (set == SHLO_F32 && det == SHLO_BF16) return cvt_f32_to_bf16;
  if (set == SHLO_BF16 && det == SHLO_F32) return cvt_bf16_to_f32;
  if (set == SHLO_F32 && det == SHLO_F16) return cvt_f32_to_f16;
  if (set == SHLO_F16 && det == SHLO_F32) return cvt_f16_to_f32;
  return generic;
}

/* i1 stores its 0/1 (b1); every other type by its storage. */
static int cv_dst_index(shlo_elem_type t) {
  return t == SHLO_I1 ? DST_b1 : shlo__storage_loop(t);
}

/* ---- compile-time checks shared by both ops ---- */

static shlo_status cv_setup(shlo_compiler *cc, const shlo_op *op,
                            shlo_step *step, bool allow_quant,
                            cv_params **out) {
  if (op->n_operands != 1 || op->n_results != 1)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "expected one operand and one result");
  const shlo_type *it = shlo__cc_operand_type(cc, op, 0);
  const shlo_type *rt = shlo__cc_result_type(cc, op, 0);
  if (!it || !rt || it->kind != SHLO_TYPE_TENSOR ||
      rt->kind != SHLO_TYPE_TENSOR || !shlo_type_is_static(it) ||
      !shlo_type_is_static(rt))
    return shlo__cc_fail(cc, op, SHLO_EUNSUPPORTED,
                        "operand and result must be statically shaped "
                        "tensors");
  if (!allow_quant && (it->quant || rt->quant))
    return shlo__cc_fail(cc, op, SHLO_EUNSUPPORTED,
                        "quantized element type %s is not supported",
                        shlo_elem_name(it->quant ? it->elem : rt->elem));
  cv_params *p = shlo__params_alloc(step, sizeof *p);
  if (!p) return shlo__cc_fail(cc, op, SHLO_ENOMEM, "out of memory");
  p->out_elem = rt->elem;
  p->rank = rt->rank;
  memcpy(p->dims, rt->dims, sizeof p->dims);
  p->numel = shlo_type_numel(rt);
  p->in_numel = shlo_type_numel(it);
  p->set = it->elem;
  p->det = rt->elem;
  p->ssz = shlo_elem_size(it->elem);
  p->dsz = shlo_elem_size(rt->elem);
  p->sbits = shlo_elem_bits(it->elem);
  p->dbits = shlo_elem_bits(rt->elem);
  p->out_quant = rt->quant;
  *out = p;
  return SHLO_OK;
}

/* ---- convert ---- */

static void cv_range(const shlo_step *s, void *d, const void *const *x,
                     int64_t n) {
  const cv_params *p = s->params;
  p->fn(d, x[0], n, p);
}

static shlo_status k_convert(const shlo_step *s, shlo_value *const *in,
                             shlo_value **out, shlo_exec *ex) {
  const cv_params *p = s->params;
  shlo_value *r;
  shlo_status st = cv_begin(s, in, ex, &r);
  if (st != SHLO_OK) return st;
  p->fn(r->data, in[0]->data, p->numel, p);
  out[0] = r;
  return SHLO_OK;
}

shlo_status shlo__compile_convert(shlo_compiler *cc, const shlo_op *op,
                                 shlo_step *step) {
  cv_params *p;
  shlo_status st = cv_setup(cc, op, step, false, &p);
  if (st != SHLO_OK) return st;
  if (p->numel != p->in_numel)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "operand and result shapes differ");
  int si = shlo__storage_loop(p->set), di = cv_dst_index(p->det);
  if (si < 0 || di < 0)
    return shlo__cc_fail(cc, op, SHLO_EUNSUPPORTED,
                        "conversion from element type %s to %s is not "
                        "supported",
                        shlo_elem_name(p->set), shlo_elem_name(p->det));
  shlo_elem_class dc = shlo_elem_class_of(p->det);
  int b = p->dbits;
  p->mask = b >= 64 ? UINT64_MAX : ((1ull << b) - 1);
  p->wsh = p->dsz == 1 && dc == SHLO_CLASS_SINT ? 8 - b : 0;
  if (dc == SHLO_CLASS_SINT) {
    p->dlo = -ldexp(1.0, b - 1);
    p->dhi = ldexp(1.0, b - 1);
    shlo__int_range(p->det, &p->imin, &p->imax);
  } else if (dc == SHLO_CLASS_UINT) {
    p->dhi = ldexp(1.0, b);
    p->umax = p->mask;
  }
  p->fn = cv_pick(p->set, p->det, cv_tab[di][si]);
  step->fn = k_convert;
  step->loop.range = cv_range;
  return SHLO_OK;
}

/* ---- bitcast_convert ---- */

static shlo_status k_bitcast(const shlo_step *s, shlo_value *const *in,
                             shlo_value **out, shlo_exec *ex) {
  const cv_params *p = s->params;
  shlo_value *r;
  shlo_status st = cv_begin(s, in, ex, &r);
  if (st != SHLO_OK) return st;
  if (shlo_tensor_set_quant(r, p->out_quant) != SHLO_OK) {
    shlo_value_unref(r);
    return shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory");
  }
  if (p->bytewise) {
    if (r->nbytes) memcpy(r->data, in[0]->data, r->nbytes);
    out[0] = r;
    return SHLO_OK;
  }
  /* Bit stream: bit g of the stream is bit (g % sbits) of operand element
   * g / sbits, read from its storage bytes (sub-byte patterns sit in the
   * low bits). */
  const uint8_t *src = in[0]->data;
  uint8_t *dst = r->data;
  const int sb = p->sbits, db = p->dbits;
  const bool sext = p->dsz == 1 && db < 8 &&
                    shlo_elem_class_of(p->det) == SHLO_CLASS_SINT;
  for (int64_t k = 0; k < p->numel; k++) {
    uint8_t *o = dst + (size_t)k * p->dsz;
    for (int j = 0; j < db; j++) {
      int64_t g = k * db + j;
      int64_t e = g / sb;
      int bit = (int)(g % sb);
      if ((src[(size_t)e * p->ssz + (size_t)(bit >> 3)] >> (bit & 7)) & 1)
        o[j >> 3] |= (uint8_t)(1u << (j & 7));
    }
    if (sext && (o[0] >> (db - 1)) & 1) o[0] |= (uint8_t)(0xFFu << db);
  }
  out[0] = r;
  return SHLO_OK;
}

static bool cv_bytewise_type(shlo_elem_type t) {
  return (int)shlo_elem_size(t) * 8 == shlo_elem_bits(t);
}

shlo_status shlo__compile_bitcast_convert(shlo_compiler *cc, const shlo_op *op,
                                         shlo_step *step) {
  cv_params *p;
  /* Quantized types reinterpret their storage type's bits: this is how
   * programs build quantized tensors from integers and back. */
  shlo_status st = cv_setup(cc, op, step, true, &p);
  if (st != SHLO_OK) return st;
  /* Total bits must agree (computed in 128 bits: numel * 128 may pass
   * 2^63). */
  __int128 in_bits = (__int128)p->in_numel * p->sbits;
  __int128 out_bits = (__int128)p->numel * p->dbits;
  if (in_bits != out_bits)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "operand (%s) and result (%s) hold different numbers "
                        "of bits",
                        shlo_elem_name(p->set), shlo_elem_name(p->det));
  p->bytewise = cv_bytewise_type(p->set) && cv_bytewise_type(p->det);
  step->fn = k_bitcast;
  return SHLO_OK;
}
