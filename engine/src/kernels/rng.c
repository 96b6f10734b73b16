/* SPDX-License-Identifier: Apache-2.0 */
/* Random numbers: rng and rng_bit_generator.
 *
 * rng_bit_generator is bit-exact with XLA's expansion of the op
 * (xla/service/rng_bit_generator_expander.cc over xla/client/lib/prng.cc):
 *  - THREE_FRY: state u64[2] = [key, counter].  Threefry-2x32 with 20
 *    rounds, key = (lo, hi) of state[0], input block = (lo, hi) of
 *    counter + n.  64-bit outputs take one block each (lo | hi << 32);
 *    32-bit outputs split the shape in halves along its first even
 *    dimension (else its largest): element j of that dimension takes word
 *    j % 2 of the block of half-index j / 2.  Narrower outputs take the low
 *    bits of the 32-bit ones.  The counter advances by the blocks used.
 *  - PHILOX: state u64[3] = [key, counter lo, counter hi], or u64[2] =
 *    [key, counter lo] with counter hi = key (as XLA reverses the state);
 *    Philox-4x32 with 10 rounds over a 128-bit counter, block i giving
 *    words 4i..4i+3 (32-bit outputs) or two 64-bit numbers 2i, 2i+1
 *    (w0 | w1 << 32, w2 | w3 << 32).  The output state keeps the key and
 *    stores the advanced counter (its low half only for u64[2]).
 *  - DEFAULT is PHILOX, as on XLA's CPU and GPU backends.
 * A state of another integer or float type of the same total width (as
 * StableHLO's verifier allows: tensor<4xi32> for THREE_FRY, tensor<6xui32>
 * for PHILOX) is the little-endian concatenation of its elements' bits:
 * u64 word k is elements k*64/w .. (k+1)*64/w - 1, the first in the low
 * bits (for <4xi32>, word 0 = s[0] | s[1] << 32).  The output state is
 * the new words split back the same way, in the state's own type.
 * Float outputs hold the generated bits of their width.
 *
 * rng (UNIFORM, NORMAL) is implementation-defined: Philox-4x32 keyed by
 * the op's source location, with a per-step call counter, so each call of
 * the step (a loop iteration, a new execution) draws fresh numbers; a
 * fresh executable run the same way reproduces them.  UNIFORM floats:
 * a + (b - a) * u with u in [0, 1) from 53 random bits, rounded to the
 * type and redrawn if rounding reaches b; UNIFORM integers: a + bits mod
 * (b - a); NORMAL: Box-Muller, mean a and standard deviation b. */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/floatfmt.h"
#include "core/value.h"
#include "kernels/kernel.h"

/* ---- the generators ---- */

static inline uint32_t rotl32(uint32_t v, int d) {
  return (v << d) | (v >> (32 - d));
}

/* Threefry-2x32, 20 rounds, as XLA's ThreeFry2x32. */
static void threefry2x32(uint32_t k0, uint32_t k1, uint32_t in0, uint32_t in1,
                         uint32_t out[2]) {
  static const int rot[8] = {13, 15, 26, 6, 17, 29, 16, 24};
  uint32_t ks[3] = {k0, k1, 0x1BD11BDAu ^ k0 ^ k1};
  uint32_t x0 = in0 + ks[0], x1 = in1 + ks[1];
  for (int g = 0; g < 5; g++) {
    const int *r = (g & 1) ? rot + 4 : rot;
    for (int i = 0; i < 4; i++) {
      x0 += x1;
      x1 = rotl32(x1, r[i]);
      x1 ^= x0;
    }
    x0 += ks[(g + 1) % 3];
    x1 += ks[(g + 2) % 3] + (uint32_t)(g + 1);
  }
  out[0] = x0;
  out[1] = x1;
}

/* Philox-4x32, 10 rounds, as XLA's Philox4x32. */
static void philox4x32(const uint32_t in[4], uint32_t k0, uint32_t k1,
                       uint32_t out[4]) {
  uint32_t x0 = in[0], x1 = in[1], x2 = in[2], x3 = in[3];
  for (int r = 0; r < 10; r++) {
    uint64_t p0 = (uint64_t)x0 * 0xD2511F53u;
    uint64_t p1 = (uint64_t)x2 * 0xCD9E8D57u;
    uint32_t n0 = (uint32_t)(p1 >> 32) ^ x1 ^ k0;
    uint32_t n1 = (uint32_t)p1;
    uint32_t n2 = (uint32_t)(p0 >> 32) ^ x3 ^ k1;
    uint32_t n3 = (uint32_t)p0;
    x0 = n0, x1 = n1, x2 = n2, x3 = n3;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  out[0] = x0, out[1] = x1, out[2] = x2, out[3] = x3;
}

/* Philox block `i` after 128-bit counter (lo, hi). */
static void philox_block(uint64_t key, uint64_t lo, uint64_t hi, uint64_t i,
                         uint32_t w[4]) {
  uint64_t l = lo + i;
  uint64_t h = hi + (l < lo);
  uint32_t in[4] = {(uint32_t)l, (uint32_t)(l >> 32), (uint32_t)h,
                    (uint32_t)(h >> 32)};
  philox4x32(in, (uint32_t)key, (uint32_t)(key >> 32), w);
}

/* ---- rng_bit_generator ---- */

enum { ALG_THREE_FRY, ALG_PHILOX };

typedef struct rbg_params {
  int alg;
  int n_state;             /* 64-bit words: 2 or 3 */
  shlo_elem_type state_elem;
  int64_t state_len;       /* elements of the state tensor */
  shlo_elem_type out_elem;
  int bits;                /* generated width: 32 or 64 */
  int store_bits;          /* element storage bits: 8, 16, 32, 64 */
  int wsh;                 /* sub-byte signed: sign re-extension shift */
  uint8_t mask8;           /* sub-byte: value mask */
  int rank;
  int64_t dims[SHLO_MAX_RANK];
  int64_t numel;
  /* THREE_FRY 32-bit split: pre * h * post half elements */
  int64_t pre, d, h, post;
} rbg_params;

static void rbg_put(const rbg_params *p, void *data, int64_t i, uint64_t v) {
  switch (p->store_bits) {
  case 8: {
    uint8_t b = (uint8_t)v;
    if (p->mask8 != 0xFF) {
      b &= p->mask8;
      if (p->wsh) b = (uint8_t)((int8_t)(uint8_t)(b << p->wsh) >> p->wsh);
    }
    ((uint8_t *)data)[i] = b;
    break;
  }
  case 16: ((uint16_t *)data)[i] = (uint16_t)v; break;
  case 32: ((uint32_t *)data)[i] = (uint32_t)v; break;
  default: ((uint64_t *)data)[i] = v; break;
  }
}

/* THREE_FRY: fill r from the key and counter in st, advancing the counter
 * in nst; false when the execution was stopped. */
static bool rbg_three_fry(const rbg_params *p, const uint64_t *st,
                          uint64_t *nst, shlo_value *r, shlo_exec *ex) {
  uint64_t key = st[0];
  uint32_t k0 = (uint32_t)key, k1 = (uint32_t)(key >> 32);
  uint64_t ctr = st[1];
  uint32_t w[2];
  if (p->bits == 64) {
    for (int64_t i = 0; i < p->numel; i++) {
      uint64_t c = ctr + (uint64_t)i;
      threefry2x32(k0, k1, (uint32_t)c, (uint32_t)(c >> 32), w);
      rbg_put(p, r->data, i, (uint64_t)w[0] | ((uint64_t)w[1] << 32));
    }
    nst[1] = ctr + (uint64_t)p->numel;
    return true;
  }
  /* output (a, j, b) <- word j % 2 of half element (a, j / 2, b) */
  for (int64_t a = 0; a < p->pre; a++) {
    if ((a & 1023) == 0 && shlo__exec_should_stop(ex)) return false;
    for (int64_t hj = 0; hj < p->h; hj++) {
      for (int64_t b = 0; b < p->post; b++) {
        uint64_t c = ctr + (uint64_t)((a * p->h + hj) * p->post + b);
        threefry2x32(k0, k1, (uint32_t)c, (uint32_t)(c >> 32), w);
        for (int q = 0; q < 2; q++) {
          int64_t j = 2 * hj + q;
          if (j >= p->d) break;
          rbg_put(p, r->data, (a * p->d + j) * p->post + b, w[q]);
        }
      }
    }
  }
  nst[1] = ctr + (uint64_t)(p->pre * p->h * p->post);
  return true;
}

/* PHILOX: fill r from the key and 128-bit counter in st, advancing the
 * counter in nst. */
static void rbg_philox(const rbg_params *p, const uint64_t *st,
                       uint64_t *nst, shlo_value *r) {
  uint64_t key = st[0];
  uint64_t lo = st[1], hi = p->n_state >= 3 ? st[2] : st[0];
  uint32_t w[4];
  uint64_t blocks;
  if (p->bits == 64) {
    blocks = (uint64_t)(p->numel + 1) / 2;
    for (uint64_t i = 0; i < blocks; i++) {
      philox_block(key, lo, hi, i, w);
      uint64_t v0 = (uint64_t)w[0] | ((uint64_t)w[1] << 32);
      uint64_t v1 = (uint64_t)w[2] | ((uint64_t)w[3] << 32);
      rbg_put(p, r->data, (int64_t)(2 * i), v0);
      if ((int64_t)(2 * i + 1) < p->numel)
        rbg_put(p, r->data, (int64_t)(2 * i + 1), v1);
    }
  } else {
    blocks = (uint64_t)(p->numel + 3) / 4;
    for (uint64_t i = 0; i < blocks; i++) {
      philox_block(key, lo, hi, i, w);
      for (int q = 0; q < 4; q++)
        if ((int64_t)(4 * i + (uint64_t)q) < p->numel)
          rbg_put(p, r->data, (int64_t)(4 * i + (uint64_t)q), w[q]);
    }
  }
  uint64_t nl = lo + blocks;
  uint64_t nh = hi + (nl < lo);
  nst[1] = nl;
  if (p->n_state >= 3) nst[2] = nh;
}

static shlo_status k_rng_bit_generator(const shlo_step *s,
                                       shlo_value *const *in,
                                       shlo_value **out, shlo_exec *ex) {
  const rbg_params *p = s->params;
  const shlo_value *sv = in[0];
  size_t nb = (size_t)p->n_state * 8;
  if (sv->kind != SHLO_TYPE_TENSOR || sv->numel != p->state_len ||
      sv->nbytes != nb)
    return shlo__exec_fail(ex, s, SHLO_ERUNTIME,
                          "initial_state does not have the compiled shape");
  /* the state's bytes are its words, little-endian (see the top) */
  uint64_t st[3], nst[3];
  memcpy(st, sv->data, nb);
  memcpy(nst, st, nb);
  int64_t dim1 = p->state_len;
  shlo_value *ns = shlo_tensor_new(p->state_elem, 1, &dim1);
  shlo_value *r = shlo_tensor_new(p->out_elem, p->rank, p->dims);
  if (!ns || !r) {
    shlo_value_unref(ns);
    shlo_value_unref(r);
    return shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory");
  }
  if (p->alg != ALG_THREE_FRY) {
    rbg_philox(p, st, nst, r);
  } else if (!rbg_three_fry(p, st, nst, r, ex)) {
    shlo_value_unref(ns);
    shlo_value_unref(r);
    return shlo__exec_fail(ex, s, SHLO_ECANCELED, "execution stopped");
  }
  memcpy(ns->data, nst, nb);
  out[0] = ns;
  out[1] = r;
  return SHLO_OK;
}

shlo_status shlo__compile_rng_bit_generator(shlo_compiler *cc, const shlo_op *op,
                                           shlo_step *step) {
  if (op->n_operands != 1 || op->n_results != 2)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "expects one operand and two results");
  const shlo_type *it = shlo__cc_operand_type(cc, op, 0);
  const shlo_type *st = shlo__cc_result_type(cc, op, 0);
  const shlo_type *ot = shlo__cc_result_type(cc, op, 1);
  /* the verifier checked the element width; its total makes the words */
  if (it->kind != SHLO_TYPE_TENSOR || it->rank != 1 || it->quant ||
      !shlo_type_is_static(it))
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "initial_state must be a static 1-dimensional "
                        "tensor");
  if (!shlo_type_equal(it, st))
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "(C1) output_state type differs from initial_state");
  if (ot->kind != SHLO_TYPE_TENSOR || ot->quant)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY, "output must be a tensor");
  const char *alg = shlo_attr_get_str(shlo_op_attr(op, "rng_algorithm"));
  int a;
  if (!alg || !strcmp(alg, "DEFAULT") || !strcmp(alg, "PHILOX"))
    a = ALG_PHILOX;
  else if (!strcmp(alg, "THREE_FRY"))
    a = ALG_THREE_FRY;
  else
    return shlo__cc_fail(cc, op, SHLO_EVERIFY, "unknown rng_algorithm %s", alg);
  int64_t n_state = it->dims[0] * shlo_elem_bits(it->elem) / 64;
  if ((it->dims[0] * shlo_elem_bits(it->elem)) % 64 != 0 ||
      it->dims[0] * (int64_t)shlo_elem_size(it->elem) != n_state * 8)
    n_state = 0;
  if (a == ALG_THREE_FRY ? n_state != 2 : (n_state != 2 && n_state != 3))
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "(C2) initial_state of %s must have %s 64-bit "
                        "words, has %lld", alg ? alg : "DEFAULT",
                        a == ALG_THREE_FRY ? "2" : "2 or 3",
                        (long long)n_state);
  shlo_elem_class cls = shlo_elem_class_of(ot->elem);
  if (cls != SHLO_CLASS_SINT && cls != SHLO_CLASS_UINT &&
      cls != SHLO_CLASS_FLOAT)
    return shlo__cc_fail(cc, op, SHLO_EUNSUPPORTED,
                        "output element type %s is not supported",
                        shlo_elem_name(ot->elem));
  rbg_params *p = shlo__params_alloc(step, sizeof *p);
  if (!p) return shlo__cc_fail(cc, op, SHLO_ENOMEM, "out of memory");
  p->alg = a;
  p->n_state = (int)n_state;
  p->state_elem = it->elem;
  p->state_len = it->dims[0];
  p->out_elem = ot->elem;
  p->rank = ot->rank;
  memcpy(p->dims, ot->dims, sizeof p->dims);
  p->numel = shlo_type_numel(ot);
  p->store_bits = (int)shlo_elem_size(ot->elem) * 8;
  p->bits = p->store_bits == 64 ? 64 : 32;
  int w = shlo_elem_bits(ot->elem);
  p->mask8 = w >= 8 ? 0xFF : (uint8_t)((1u << w) - 1);
  p->wsh = (w < 8 && cls == SHLO_CLASS_SINT) ? 8 - w : 0;
  /* THREE_FRY's split of the shape for outputs of 32 bits or less */
  if (ot->rank == 0) {
    p->pre = 1, p->d = 1, p->h = 1, p->post = 1;
  } else {
    int sd = -1;
    for (int i = 0; i < ot->rank && sd < 0; i++)
      if (ot->dims[i] % 2 == 0) sd = i;
    if (sd < 0)
      for (int i = 0; i < ot->rank; i++)
        if (sd < 0 || ot->dims[i] > ot->dims[sd]) sd = i;
    p->pre = 1, p->post = 1;
    for (int i = 0; i < sd; i++) p->pre *= ot->dims[i];
    for (int i = sd + 1; i < ot->rank; i++) p->post *= ot->dims[i];
    p->d = ot->dims[sd];
    p->h = (p->d + 1) / 2;
  }
  step->fn = k_rng_bit_generator;
  return SHLO_OK;
}

/* ---- rng ---- */

enum { DIST_UNIFORM, DIST_NORMAL };

typedef struct rng_params {
  int dist;
  shlo_elem_type et;
  size_t esz;
  int rank;
  int64_t dims[SHLO_MAX_RANK];
  int64_t numel;
  uint64_t seed;
  atomic_uint_fast64_t calls; /* draws so far: each call gets a fresh stream */
} rng_params;

/* A stream of 64-bit words: Philox blocks of (seed, call) at counter i. */
typedef struct rng_stream {
  uint64_t key, call, next;
  uint32_t w[4];
  int have;
} rng_stream;

static uint64_t rs_u64(rng_stream *r) {
  if (r->have < 2) {
    philox_block(r->key, r->next++, r->call, 0, r->w);
    r->have = 4;
  }
  int k = 4 - r->have;
  r->have -= 2;
  return (uint64_t)r->w[k] | ((uint64_t)r->w[k + 1] << 32);
}

/* Uniform double in [0, 1) with 53 random bits. */
static double rs_unit(rng_stream *r) {
  return (double)(rs_u64(r) >> 11) * 0x1.0p-53;
}

static double rng_round(shlo_elem_type t, double v) {
  if (t == SHLO_F64) return v;
  if (t == SHLO_F32) return (double)(float)v;
  uint8_t buf[16];
  shlo__float_store(t, v, buf);
  return shlo__float_load(t, buf);
}

static shlo_status k_rng(const shlo_step *s, shlo_value *const *in,
                         shlo_value **out, shlo_exec *ex) {
  rng_params *p = s->params;
  shlo_value *r = shlo_tensor_new(p->et, p->rank, p->dims);
  if (!r) return shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory");
  rng_stream rs = {.key = p->seed,
                   .call = atomic_fetch_add(&p->calls, 1),
                   .next = 0, .have = 0};
  shlo_elem_class cls = shlo_elem_class_of(p->et);
  char *d = r->data;
  if (cls == SHLO_CLASS_FLOAT) {
    double a = shlo__float_load(p->et, in[0]->data);
    double b = shlo__float_load(p->et, in[1]->data);
    for (int64_t i = 0; i < p->numel; i++) {
      double v;
      if (p->dist == DIST_NORMAL) {
        double u1 = rs_unit(&rs), u2 = rs_unit(&rs);
        double z = sqrt(-2.0 * log(1.0 - u1)) * cos(2.0 * M_PI * u2);
        v = a + b * z;
      } else {
        int tries = 0;
        do {
          v = rng_round(p->et, a + (b - a) * rs_unit(&rs));
        } while (v >= b && a < b && ++tries < 64);
        if (v >= b && a < b) v = a;
      }
      shlo__float_store(p->et, v, d + (size_t)i * p->esz);
    }
  } else {
    int64_t a = shlo_tensor_get_i64(in[0], 0);
    int64_t b = shlo_tensor_get_i64(in[1], 0);
    uint64_t range = (uint64_t)b - (uint64_t)a;
    for (int64_t i = 0; i < p->numel; i++) {
      int64_t v = a;
      if (b > a) v = (int64_t)((uint64_t)a + rs_u64(&rs) % range);
      switch (p->esz) {
      case 1: ((uint8_t *)d)[i] = (uint8_t)v; break;
      case 2: ((uint16_t *)d)[i] = (uint16_t)v; break;
      case 4: ((uint32_t *)d)[i] = (uint32_t)v; break;
      default: ((uint64_t *)d)[i] = (uint64_t)v; break;
      }
    }
  }
  out[0] = r;
  return SHLO_OK;
}

shlo_status shlo__compile_rng(shlo_compiler *cc, const shlo_op *op,
                             shlo_step *step) {
  if (op->n_operands != 3 || op->n_results != 1)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "expects operands a, b, shape and one result");
  const shlo_type *at = shlo__cc_operand_type(cc, op, 0);
  const shlo_type *bt = shlo__cc_operand_type(cc, op, 1);
  const shlo_type *rt = shlo__cc_result_type(cc, op, 0);
  if (at->kind != SHLO_TYPE_TENSOR || at->rank != 0 ||
      bt->kind != SHLO_TYPE_TENSOR || bt->rank != 0 ||
      at->elem != rt->elem || bt->elem != rt->elem)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "(C1) a and b must be 0-dimensional tensors of the "
                        "result's element type");
  const char *ds = shlo_attr_get_str(shlo_op_attr(op, "rng_distribution"));
  int dist;
  if (ds && !strcmp(ds, "UNIFORM")) dist = DIST_UNIFORM;
  else if (ds && !strcmp(ds, "NORMAL")) dist = DIST_NORMAL;
  else
    return shlo__cc_fail(cc, op, SHLO_EVERIFY, "unknown rng_distribution %s",
                        ds ? ds : "(none)");
  shlo_elem_class cls = shlo_elem_class_of(rt->elem);
  if (dist == DIST_NORMAL && cls != SHLO_CLASS_FLOAT)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "(C2) NORMAL needs a float element type");
  if (cls == SHLO_CLASS_COMPLEX)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "element type %s is not supported",
                        shlo_elem_name(rt->elem));
  rng_params *p = shlo__params_alloc(step, sizeof *p);
  if (!p) return shlo__cc_fail(cc, op, SHLO_ENOMEM, "out of memory");
  p->dist = dist;
  p->et = rt->elem;
  p->esz = shlo_elem_size(rt->elem);
  p->rank = rt->rank;
  memcpy(p->dims, rt->dims, sizeof p->dims);
  p->numel = shlo_type_numel(rt);
  p->seed = ((uint64_t)(uint32_t)op->loc.line << 32) ^ (uint32_t)op->loc.col ^
            0x5DEECE66Dull;
  atomic_init(&p->calls, 0);
  step->fn = k_rng;
  return SHLO_OK;
}
