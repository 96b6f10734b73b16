/* SPDX-License-Identifier: Apache-2.0 */
/* Uniform quantization: uniform_quantize, uniform_dequantize, and the
 * wrapper that runs any op with quantized operands or results.
 *
 * A quantized tensor value holds its storage integers (types.h) and
 * carries v->quant.  The spec's helpers (section "Quantization
 * computations"):
 *   dequantize(x) = convert(x_storage - zero_point, expressed) * scale
 *   quantize(x)   = clamp(storage_min,
 *                         round_nearest_even(x / scale) + zero_point,
 *                         storage_max)
 * with scale and zero point taken per element along the quantization
 * dimension for per-axis types.  Arithmetic happens in the expressed type:
 * each product/quotient is computed in double and rounded once to the
 * expressed type, which equals the expressed type's own correctly rounded
 * operation (f32, f16 and bf16 have under half of double's precision).
 * Out-of-range results saturate at storage_min/storage_max; NaN quantizes
 * to the zero point.
 *
 * shlo__compile_quantized (called by the compiler for every op with a
 * quantized operand or result) does what the op table's quant column
 * (ops/op_facts.h) says: ops that only move storage, or that convert
 * between quantized and float themselves (QUANT_STORAGE), compile as they
 * are; QUANT_REFUSED ops are refused; every other op (QUANT_VIA_FLOAT) is
 * compiled in its float form (the value types of the op
 * and of its regions overridden to the expressed types) and runs as the
 * spec's dequantize_op_quantize: dequantize the quantized inputs, run the
 * float kernel, quantize the results whose type is quantized. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/floatfmt.h"
#include "core/value.h"
#include "kernels/kernel.h"
#include "kernels/multiversion.h"
#include "kernels/qgemm.h"
#include "core/value_quant.h"

/* ---- element access chosen once per type ---- */

typedef int64_t (*q_ild)(const void *p, int64_t i);
typedef void (*q_ist)(void *p, int64_t i, int64_t v);

#define Q_INT(NAME, T)                                                       \
  static int64_t ild_##NAME(const void *p, int64_t i) {                      \
    return (int64_t)((const T *)p)[i];                                       \
  }                                                                          \
  static void ist_##NAME(void *p, int64_t i, int64_t v) {                    \
    ((T *)p)[i] = (T)v;                                                      \
  }
Q_INT(s8, int8_t)
Q_INT(s16, int16_t)
Q_INT(s32, int32_t)
Q_INT(s64, int64_t)
Q_INT(u8, uint8_t)
Q_INT(u16, uint16_t)
Q_INT(u32, uint32_t)
Q_INT(u64, uint64_t)

static bool q_int_access(shlo_elem_type t, q_ild *ld, q_ist *st) {
  switch (t) {
  case SHLO_SI2: case SHLO_SI4: case SHLO_SI8: *ld = ild_s8; *st = ist_s8; break;
  case SHLO_SI16: *ld = ild_s16; *st = ist_s16; break;
  case SHLO_SI32: *ld = ild_s32; *st = ist_s32; break;
  case SHLO_SI64: *ld = ild_s64; *st = ist_s64; break;
  case SHLO_UI2: case SHLO_UI4: case SHLO_UI8: *ld = ild_u8; *st = ist_u8; break;
  case SHLO_UI16: *ld = ild_u16; *st = ist_u16; break;
  case SHLO_UI32: *ld = ild_u32; *st = ist_u32; break;
  case SHLO_UI64: *ld = ild_u64; *st = ist_u64; break;
  default: return false;
  }
  return true;
}

/* Round v to the float type t (its value as a double). */
static double q_round(shlo_elem_type t, double v) {
  switch (t) {
  case SHLO_F64: return v;
  case SHLO_F32: return (double)(float)v;
  default: {
    uint8_t buf[16];
    shlo__float_store(t, v, buf);
    return shlo__float_load(t, buf);
  }
  }
}

/* ---- quantization parameters of one tensor type ---- */

typedef struct qinfo {
  shlo_elem_type storage, expressed;
  const shlo_quant *quant;   /* borrowed from the module */
  int64_t smin, smax;
  int rank;
  int64_t dims[SHLO_MAX_RANK];
  int64_t numel;
  int64_t axis_dim, inner;   /* per element i: pair (i / inner) % axis_dim */
  int n;
  double *scale;             /* rounded to the expressed type */
  int64_t *zp;
  q_ild ld;
  q_ist st;
} qinfo;

static void qinfo_free(qinfo *q) {
  if (!q) return;
  shlo__free(q->scale);
  shlo__free(q->zp);
  shlo__free(q);
}

/* Build the parameters of static quantized tensor type t; NULL with a
 * compile error in *st. */
static qinfo *qinfo_new(shlo_compiler *cc, const shlo_op *op,
                        const shlo_type *t, shlo_status *st) {
  const shlo_quant *q = t->quant;
  *st = SHLO_OK;
  if (t->kind != SHLO_TYPE_TENSOR || !q || !shlo_type_is_static(t)) {
    *st = shlo__cc_fail(cc, op, SHLO_EUNSUPPORTED,
                       "needs a statically shaped quantized tensor");
    return NULL;
  }
  if (!shlo_elem_is_float(q->expressed)) {
    *st = shlo__cc_fail(cc, op, SHLO_EUNSUPPORTED,
                       "expressed type %s is not a float type",
                       shlo_elem_name(q->expressed));
    return NULL;
  }
  qinfo *qi = shlo__calloc(1, sizeof *qi);
  if (!qi) {
    *st = shlo__cc_fail(cc, op, SHLO_ENOMEM, "out of memory");
    return NULL;
  }
  qi->storage = q->storage;
  qi->expressed = q->expressed;
  qi->quant = q;
  qi->smin = q->storage_min;
  qi->smax = q->storage_max;
  qi->rank = t->rank;
  memcpy(qi->dims, t->dims, sizeof qi->dims);
  qi->numel = shlo_type_numel(t);
  if (!q_int_access(q->storage, &qi->ld, &qi->st)) {
    qinfo_free(qi);
    *st = shlo__cc_fail(cc, op, SHLO_EUNSUPPORTED, "storage type %s",
                       shlo_elem_name(q->storage));
    return NULL;
  }
  qi->axis_dim = 1;
  qi->inner = 1;
  int n = q->n > 0 ? q->n : 1;
  if (q->per_axis) {
    if (q->axis < 0 || q->axis >= t->rank || t->dims[q->axis] != q->n) {
      qinfo_free(qi);
      *st = shlo__cc_fail(cc, op, SHLO_EVERIFY,
                         "per-axis quantization dimension %d does not have "
                         "%d elements", q->axis, q->n);
      return NULL;
    }
    qi->axis_dim = t->dims[q->axis];
    for (int d = q->axis + 1; d < t->rank; d++) qi->inner *= t->dims[d];
  }
  qi->n = n;
  qi->scale = shlo__malloc((size_t)n * sizeof *qi->scale);
  qi->zp = shlo__malloc((size_t)n * sizeof *qi->zp);
  if (!qi->scale || !qi->zp) {
    qinfo_free(qi);
    *st = shlo__cc_fail(cc, op, SHLO_ENOMEM, "out of memory");
    return NULL;
  }
  for (int k = 0; k < n; k++) {
    qi->scale[k] = q_round(q->expressed, q->n > 0 ? q->scales[k] : 1.0);
    qi->zp[k] = q->n > 0 ? q->zero_points[k] : 0;
  }
  return qi;
}

static inline int q_pair(const qinfo *q, int64_t i) {
  return q->axis_dim == 1 ? 0 : (int)((i / q->inner) % q->axis_dim);
}

/* f32 dequantization of 8- and 16-bit storage in float arithmetic: the
 * difference to the zero point is an exact float there, and one float
 * multiply rounds the exact product once, as the double product rounded
 * to float below does; so the bytes are the general loop's.  The pair
 * index goes by blocks rather than a division per element: a quantized
 * linear layer's weights (4M elements) went through this on every call.
 * T is the storage's C type. */
/* The fast loops below vectorize only with the full cost model (-O2's
 * cheap one refuses loops with a remainder); vectorizing them changes no
 * result: no float sums to reassociate, each element on its own. */
#pragma GCC push_options
#pragma GCC optimize("tree-vectorize", "vect-cost-model=dynamic")
#define Q_DEQ_F32(NAME, T)                                                   \
  SHLO_CLONES static void deq_f32_##NAME(const qinfo *q, const void *src, float *dst,    \
                             const float *scale, const int32_t *zp) {        \
    const T *x = src;                                                        \
    const int64_t inner = q->inner, axis = q->axis_dim;                      \
    if (axis == 1) {                                                         \
      for (int64_t i = 0; i < q->numel; i++)                                 \
        dst[i] = (float)((int32_t)x[i] - zp[0]) * scale[0];                  \
      return;                                                                \
    }                                                                        \
    for (int64_t o = 0; o < q->numel; o += axis * inner) {                   \
      if (inner == 1) {                                                      \
        for (int64_t k = 0; k < axis; k++)                                   \
          dst[o + k] = (float)((int32_t)x[o + k] - zp[k]) * scale[k];        \
        continue;                                                            \
      }                                                                      \
      for (int64_t k = 0; k < axis; k++) {                                   \
        const int64_t b = o + k * inner;                                     \
        for (int64_t j = 0; j < inner; j++)                                  \
          dst[b + j] = (float)((int32_t)x[b + j] - zp[k]) * scale[k];        \
      }                                                                      \
    }                                                                        \
  }
typedef void (*q_deq_f32)(const qinfo *q, const void *src, float *dst,
                          const float *scale, const int32_t *zp);
Q_DEQ_F32(s8, int8_t)
Q_DEQ_F32(u8, uint8_t)
Q_DEQ_F32(s16, int16_t)
Q_DEQ_F32(u16, uint16_t)
Q_DEQ_F32(s32, int32_t) /* only with zero points 0: x - 0 cannot overflow */
#pragma GCC pop_options

/* The float fast path of q_dequantize where it applies (f32 expressed,
 * storage of at most 16 bits, zero points within 2^24 of 0); false to
 * take the general loop. */
static bool deq_f32_fast(const qinfo *q, const void *src, float *dst) {
  q_deq_f32 fn;
  switch (q->storage) {
  case SHLO_SI2: case SHLO_SI4: case SHLO_SI8: fn = deq_f32_s8; break;
  case SHLO_UI2: case SHLO_UI4: case SHLO_UI8: fn = deq_f32_u8; break;
  case SHLO_SI16: fn = deq_f32_s16; break;
  case SHLO_UI16: fn = deq_f32_u16; break;
  /* an int32 rounds to f32 once, as q_round does with the exact
   * difference; the quantized dot's i32 results come here */
  case SHLO_SI32: fn = deq_f32_s32; break;
  default: return false;
  }
  if (q->expressed != SHLO_F32 || q->axis_dim * q->inner <= 0 ||
      q->numel % (q->axis_dim * q->inner) != 0)
    return false;
  enum { ON_STACK = 256 };
  float scale_stack[ON_STACK];
  int32_t zp_stack[ON_STACK];
  int n = q->n;
  float *scale =
      n <= ON_STACK ? scale_stack : shlo__malloc((size_t)n * sizeof *scale);
  int32_t *zp = n <= ON_STACK ? zp_stack : shlo__malloc((size_t)n * sizeof *zp);
  bool ok = scale && zp;
  for (int k = 0; ok && k < n; k++) {
    ok = q->zp[k] >= -(1 << 24) && q->zp[k] <= (1 << 24) &&
         (q->storage != SHLO_SI32 || q->zp[k] == 0);
    scale[k] = (float)q->scale[k]; /* already a float's value */
    zp[k] = (int32_t)q->zp[k];
  }
  if (ok) fn(q, src, dst, scale, zp);
  if (scale != scale_stack) shlo__free(scale);
  if (zp != zp_stack) shlo__free(zp);
  return ok;
}

/* Storage tensor x (of q's type) to a new float tensor of q's expressed
 * type; NULL when out of memory. */
static shlo_value *q_dequantize(const qinfo *q, const shlo_value *x) {
  shlo_value *r = shlo_tensor_new(q->expressed, q->rank, q->dims);
  if (!r) return NULL;
  if (deq_f32_fast(q, x->data, (float *)r->data)) return r;
  const shlo_elem_type et = q->expressed;
  for (int64_t i = 0; i < q->numel; i++) {
    int k = q_pair(q, i);
    double v = q_round(et, (double)(q->ld(x->data, i) - q->zp[k]));
    v = v * q->scale[k];
    if (et == SHLO_F32)
      ((float *)r->data)[i] = (float)v;
    else if (et == SHLO_F64)
      ((double *)r->data)[i] = v;
    else
      shlo__float_store(et, v, (char *)r->data + (size_t)i * shlo_elem_size(et));
  }
  return r;
}

/* The storage integer for float value v (of the expressed type). */
static inline int64_t q_one(const qinfo *q, int k, double v) {
  double t = q_round(q->expressed, v / q->scale[k]);
  int64_t s;
  if (t != t) {
    s = q->zp[k];
  } else {
    t = nearbyint(t); /* round to nearest even (default rounding mode) */
    if (t > 4e18) t = 4e18;
    if (t < -4e18) t = -4e18;
    s = (int64_t)t;
    /* saturating add of the zero point */
    if (q->zp[k] > 0 && s > INT64_MAX - q->zp[k]) s = INT64_MAX;
    else if (q->zp[k] < 0 && s < INT64_MIN - q->zp[k]) s = INT64_MIN;
    else s += q->zp[k];
  }
  if (s < q->smin) s = q->smin;
  if (s > q->smax) s = q->smax;
  return s;
}

/* q_one over f32 x, per tensor, into storage of type T, in f32
 * arithmetic: x / scale in f32 is the double quotient rounded to f32
 * (double has over 2 * 24 + 2 bits); the clamp to [lo, hi] (the storage
 * range less the zero point, integers) commutes with rounding to an
 * integer, and after it |t| < 2^22, where adding and subtracting 1.5 *
 * 2^23 rounds to nearest even exactly.  NaN gives the zero point.  No
 * multiply, so no contraction: every clone gives the same bytes. */
#pragma GCC push_options /* as for Q_DEQ_F32 */
#pragma GCC optimize("tree-vectorize", "vect-cost-model=dynamic")
#define Q_QUANT_F32(NAME, T)                                                 \
  SHLO_CLONES static void quant_f32_##NAME(const float *x, int64_t n,        \
                                           void *dst, float scale, int32_t zp, \
                                           float lo, float hi) {             \
    T *d = dst;                                                              \
    for (int64_t i = 0; i < n; i++) {                                        \
      float t = x[i] / scale;                                                \
      t = t == t ? t : 0.0f;                                                 \
      t = t < lo ? lo : t;                                                   \
      t = t > hi ? hi : t;                                                   \
      t = (t + 12582912.0f) - 12582912.0f;                                   \
      d[i] = (T)((int32_t)t + zp);                                           \
    }                                                                        \
  }
Q_QUANT_F32(s8, int8_t)
Q_QUANT_F32(u8, uint8_t)
Q_QUANT_F32(s16, int16_t)
Q_QUANT_F32(u16, uint16_t)
#pragma GCC pop_options

/* The fast path of q_quantize where it applies (f32 in, f32 expressed,
 * one scale, storage of at most 16 bits); false to take the general
 * loop. */
static bool quant_f32_fast(const qinfo *q, const shlo_value *x,
                           shlo_elem_type xt, void *dst) {
  if (xt != SHLO_F32 || q->expressed != SHLO_F32 || q->n != 1 ||
      q->zp[0] < -(1 << 16) || q->zp[0] > (1 << 16) ||
      q->smin < -(1 << 16) || q->smax > (1 << 16))
    return false;
  void (*fn)(const float *, int64_t, void *, float, int32_t, float, float);
  switch (q->storage) {
  case SHLO_SI2: case SHLO_SI4: case SHLO_SI8: fn = quant_f32_s8; break;
  case SHLO_UI2: case SHLO_UI4: case SHLO_UI8: fn = quant_f32_u8; break;
  case SHLO_SI16: fn = quant_f32_s16; break;
  case SHLO_UI16: fn = quant_f32_u16; break;
  default: return false;
  }
  fn(x->data, q->numel, dst, (float)q->scale[0], (int32_t)q->zp[0],
     (float)(q->smin - q->zp[0]), (float)(q->smax - q->zp[0]));
  return true;
}

/* Float tensor x of element type xt to a new storage tensor of q's type. */
static shlo_value *q_quantize(const qinfo *q, const shlo_value *x,
                              shlo_elem_type xt) {
  shlo_value *r = shlo_tensor_new(q->storage, q->rank, q->dims);
  if (!r) return NULL;
  if (shlo_tensor_set_quant(r, q->quant) != SHLO_OK) {
    shlo_value_unref(r);
    return NULL;
  }
  if (quant_f32_fast(q, x, xt, r->data)) return r;
  size_t xs = shlo_elem_size(xt);
  for (int64_t i = 0; i < q->numel; i++) {
    double v;
    if (xt == SHLO_F32) v = ((const float *)x->data)[i];
    else if (xt == SHLO_F64) v = ((const double *)x->data)[i];
    else v = shlo__float_load(xt, (const char *)x->data + (size_t)i * xs);
    q->st(r->data, i, q_one(q, q_pair(q, i), v));
  }
  return r;
}

/* ---- uniform_quantize / uniform_dequantize ---- */

typedef struct qconv_params {
  qinfo *in;             /* operand quantization, NULL if float */
  qinfo *out;            /* result quantization, NULL if float */
  shlo_elem_type in_elem;
  int64_t numel;
} qconv_params;

static void qconv_free(void *p_) {
  qconv_params *p = p_;
  if (!p) return;
  qinfo_free(p->in);
  qinfo_free(p->out);
  shlo__free(p);
}

static shlo_status k_qconv(const shlo_step *s, shlo_value *const *in,
                           shlo_value **out, shlo_exec *ex) {
  const qconv_params *p = s->params;
  if (in[0]->kind != SHLO_TYPE_TENSOR || in[0]->numel != p->numel)
    return shlo__exec_fail(ex, s, SHLO_ERUNTIME,
                          "operand does not have the compiled shape");
  shlo_value *f = p->in ? q_dequantize(p->in, in[0]) : shlo_value_ref(in[0]);
  if (!f) return shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory");
  shlo_value *r = f;
  if (p->out) {
    r = q_quantize(p->out, f, p->in ? p->in->expressed : p->in_elem);
    shlo_value_unref(f);
    if (!r) return shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory");
  }
  out[0] = r;
  return SHLO_OK;
}

/* uniform_quantize: float -> quantized, or quantized -> quantized
 * (dequantize, then quantize).  uniform_dequantize: quantized -> float. */
static shlo_status compile_qconv(shlo_compiler *cc, const shlo_op *op,
                                 shlo_step *step, bool quantize) {
  if (op->n_operands != 1 || op->n_results != 1)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY, "expects one operand and one result");
  const shlo_type *it = shlo__cc_operand_type(cc, op, 0);
  const shlo_type *rt = shlo__cc_result_type(cc, op, 0);
  if (it->kind != SHLO_TYPE_TENSOR || rt->kind != SHLO_TYPE_TENSOR ||
      !shlo_type_is_static(it) || shlo_type_numel(it) != shlo_type_numel(rt))
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "(C1) operand and result shapes differ");
  if (quantize ? !rt->quant : (!it->quant || rt->quant))
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        quantize ? "result must be quantized"
                                 : "operand must be quantized, result float");
  if (!it->quant && !shlo_elem_is_float(it->elem))
    return shlo__cc_fail(cc, op, SHLO_EVERIFY, "operand must be a float tensor");
  qconv_params *p = shlo__calloc(1, sizeof *p);
  if (!p) return shlo__cc_fail(cc, op, SHLO_ENOMEM, "out of memory");
  if (step->free_params) step->free_params(step->params);
  step->params = p;
  step->free_params = qconv_free;
  p->in_elem = it->elem;
  p->numel = shlo_type_numel(it);
  shlo_status st = SHLO_OK;
  if (it->quant && !(p->in = qinfo_new(cc, op, it, &st))) return st;
  if (rt->quant && !(p->out = qinfo_new(cc, op, rt, &st))) return st;
  if (!quantize && rt->elem != it->quant->expressed)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "(C1) result element type %s is not the expressed "
                        "type %s", shlo_elem_name(rt->elem),
                        shlo_elem_name(it->quant->expressed));
  if (quantize && !it->quant && it->elem != rt->quant->expressed)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "(C1) operand element type %s is not the expressed "
                        "type %s", shlo_elem_name(it->elem),
                        shlo_elem_name(rt->quant->expressed));
  step->fn = k_qconv;
  return SHLO_OK;
}

shlo_status shlo__compile_uniform_dequantize(shlo_compiler *cc, const shlo_op *op,
                                            shlo_step *step) {
  return compile_qconv(cc, op, step, false);
}

shlo_status shlo__compile_uniform_quantize(shlo_compiler *cc, const shlo_op *op,
                                          shlo_step *step) {
  return compile_qconv(cc, op, step, true);
}

/* ---- dequantize -> float op -> quantize ---- */

typedef struct qwrap_params {
  shlo_kernel inner_fn;
  void *inner_params;
  void (*inner_free)(void *);
  int n_in, n_out;
  qinfo **in_q;      /* per input (operands, then captures): NULL if as is */
  qinfo **out_q;     /* per result: NULL if float */
  shlo_elem_type *out_elem; /* float element type of each quantized result */
  int n_types;
  shlo_type **types; /* the expressed types the float form was compiled
                        with (kernels may keep pointers to them) */
} qwrap_params;

static void qwrap_free(void *p_) {
  qwrap_params *p = p_;
  if (!p) return;
  if (p->inner_free) p->inner_free(p->inner_params);
  for (int i = 0; i < p->n_in; i++) qinfo_free(p->in_q[i]);
  for (int i = 0; i < p->n_out; i++) qinfo_free(p->out_q[i]);
  for (int i = 0; i < p->n_types; i++) shlo__free(p->types[i]);
  shlo__free(p->in_q);
  shlo__free(p->out_q);
  shlo__free(p->out_elem);
  shlo__free(p->types);
  shlo__free(p);
}

static shlo_status k_qwrap(const shlo_step *s, shlo_value *const *in,
                           shlo_value **out, shlo_exec *ex) {
  const qwrap_params *p = s->params;
  shlo_value *stack[16] = {0};
  shlo_value **fin = p->n_in <= 16 ? stack : shlo__calloc((size_t)p->n_in, sizeof *fin);
  if (!fin) return shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory");
  shlo_status st = SHLO_OK;
  int made = 0;
  for (int i = 0; i < p->n_in; i++) {
    if (p->in_q[i]) {
      if (in[i]->kind != SHLO_TYPE_TENSOR || in[i]->numel != p->in_q[i]->numel) {
        st = shlo__exec_fail(ex, s, SHLO_ERUNTIME,
                            "operand %d does not have the compiled shape", i);
        break;
      }
      fin[i] = q_dequantize(p->in_q[i], in[i]);
      if (!fin[i]) {
        st = shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory");
        break;
      }
    } else {
      fin[i] = shlo_value_ref(in[i]);
    }
    made = i + 1;
  }
  if (st == SHLO_OK) {
    shlo_step t = *s;
    t.fn = p->inner_fn;
    t.params = p->inner_params;
    t.free_params = NULL;
    st = p->inner_fn(&t, fin, out, ex);
  }
  for (int i = 0; i < made; i++) shlo_value_unref(fin[i]);
  if (fin != stack) shlo__free(fin);
  if (st != SHLO_OK) return st;
  for (int k = 0; k < p->n_out; k++) {
    if (!p->out_q[k] || !out[k]) continue;
    shlo_value *q = q_quantize(p->out_q[k], out[k], p->out_elem[k]);
    shlo_value_unref(out[k]);
    out[k] = q;
    if (!q) st = SHLO_ENOMEM;
  }
  if (st != SHLO_OK) {
    for (int k = 0; k < p->n_out; k++) {
      shlo_value_unref(out[k]);
      out[k] = NULL;
    }
    return shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory");
  }
  return SHLO_OK;
}

/* Overrides set while compiling one op's float form. */
typedef struct qover {
  shlo_compiler *cc;
  int n, cap;
  int *values;
  shlo_type **types;
  shlo_status st;
} qover;

/* Override value id `v` with its expressed type if it is quantized. */
static void qover_value(qover *o, int v) {
  if (o->st) return;
  const shlo_type *t = shlo__cc_value_type(o->cc, v);
  if (!t || t->kind != SHLO_TYPE_TENSOR || !t->quant) return;
  if (o->n == o->cap) {
    int cap = o->cap ? 2 * o->cap : 8;
    int *nv = shlo__realloc(o->values, (size_t)cap * sizeof *nv);
    if (nv) o->values = nv;
    shlo_type **nt = shlo__realloc(o->types, (size_t)cap * sizeof *nt);
    if (nt) o->types = nt;
    if (!nv || !nt) {
      o->st = SHLO_ENOMEM;
      return;
    }
    o->cap = cap;
  }
  shlo_type *ft = shlo__malloc(sizeof *ft);
  if (!ft) {
    o->st = SHLO_ENOMEM;
    return;
  }
  *ft = *t;
  ft->elem = t->quant->expressed;
  ft->quant = NULL;
  o->values[o->n] = v;
  o->types[o->n++] = ft;
  o->st = shlo__cc_override_type(o->cc, v, ft);
}

static void qover_block(qover *o, const shlo_block *b) {
  for (int i = 0; i < b->n_args; i++) qover_value(o, b->args[i]);
  for (int i = 0; i < b->n_ops; i++) {
    const shlo_op *op = b->ops[i];
    for (int k = 0; k < op->n_results; k++) qover_value(o, op->results[k]);
    for (int r = 0; r < op->n_regions; r++) qover_block(o, op->regions[r]);
  }
}

static void qover_restore(qover *o) {
  for (int i = o->n - 1; i >= 0; i--)
    shlo__cc_override_type(o->cc, o->values[i], NULL);
}

shlo_status shlo__compile_quantized(shlo_compiler *cc, const shlo_op *op,
                                    shlo_step *step, shlo_compile_fn inner) {
  /* A dot whose quantized answer is an integer sum (qgemm.h) runs as one */
  shlo_status qst;
  if (shlo__qgemm_compile(cc, op, step, &qst)) return qst;
  /* The op table's quant column says, for every op, whether its kernel
   * runs on storage, runs via float here, or is refused. */
  switch (shlo__op_quant((shlo_opcode)op->code)) {
  case SHLO_QUANT_STORAGE: return inner(cc, op, step);
  case SHLO_QUANT_REFUSED:
    return shlo__cc_fail(cc, op, SHLO_EUNSUPPORTED,
                         "this op takes no quantized operands or results");
  case SHLO_QUANT_VIA_FLOAT: break;
  }

  qwrap_params *p = shlo__calloc(1, sizeof *p);
  if (!p) return shlo__cc_fail(cc, op, SHLO_ENOMEM, "out of memory");
  shlo_status st = SHLO_OK;
  int n_ops = op->n_operands;
  p->n_out = op->n_results;
  p->out_q = shlo__calloc((size_t)p->n_out + 1, sizeof *p->out_q);
  p->out_elem = shlo__calloc((size_t)p->n_out + 1, sizeof *p->out_elem);
  qinfo **opq = shlo__calloc((size_t)n_ops + 1, sizeof *opq);
  if (!p->out_q || !p->out_elem || !opq) {
    shlo__free(opq);
    qwrap_free(p);
    return shlo__cc_fail(cc, op, SHLO_ENOMEM, "out of memory");
  }
  /* quantization of operands and results, before the overrides */
  for (int k = 0; k < n_ops && !st; k++) {
    const shlo_type *t = shlo__cc_operand_type(cc, op, k);
    if (t->kind == SHLO_TYPE_TENSOR && t->quant) opq[k] = qinfo_new(cc, op, t, &st);
  }
  for (int k = 0; k < p->n_out && !st; k++) {
    const shlo_type *t = shlo__cc_result_type(cc, op, k);
    if (t->kind == SHLO_TYPE_TENSOR && t->quant) {
      p->out_q[k] = qinfo_new(cc, op, t, &st);
      p->out_elem[k] = t->quant->expressed;
    }
  }
  qover o = {.cc = cc};
  if (!st) {
    for (int k = 0; k < n_ops; k++) qover_value(&o, op->operands[k]);
    for (int k = 0; k < op->n_results; k++) qover_value(&o, op->results[k]);
    for (int r = 0; r < op->n_regions; r++) qover_block(&o, op->regions[r]);
    if (o.st) st = shlo__cc_fail(cc, op, o.st, "out of memory");
  }
  if (!st) st = inner(cc, op, step);
  qover_restore(&o);
  shlo__free(o.values);
  p->types = o.types;
  p->n_types = o.n;
  if (!st && !step->fn)
    st = shlo__cc_fail(cc, op, SHLO_EUNSUPPORTED, "no kernel for this op");
  if (!st) {
    /* inputs: the operands, then any captures the regions appended */
    p->in_q = shlo__calloc((size_t)step->n_in + 1, sizeof *p->in_q);
    if (p->in_q) p->n_in = step->n_in;
    if (!p->in_q) {
      st = shlo__cc_fail(cc, op, SHLO_ENOMEM, "out of memory");
    } else {
      for (int k = 0; k < n_ops && k < p->n_in; k++) {
        p->in_q[k] = opq[k];
        opq[k] = NULL;
      }
    }
  }
  for (int k = 0; k < n_ops; k++) qinfo_free(opq[k]);
  shlo__free(opq);
  if (st) {
    qwrap_free(p);
    return st;
  }
  p->inner_fn = step->fn;
  p->inner_params = step->params;
  p->inner_free = step->free_params;
  step->params = p;
  step->free_params = qwrap_free;
  step->fn = k_qwrap;
  return SHLO_OK;
}
