/* SPDX-License-Identifier: Apache-2.0 */
/* One variant of the lane-program evaluator of vchain.h, included by
 * vmath_body.h (whose lane functions and macros it uses) once per ISA.
 *
 * A block is VC_K vectors, each of its accumulator's vectors a variable
 * of its own (v0, v1, ...) so that the compiler keeps them in registers
 * across the instruction loop; each instruction's case does its op on
 * all of them, one switch per instruction per block.  VC_K is as many as
 * the ISA's registers hold beside an op's temporaries: 16 of AVX-512's
 * 32, 8 of AVX2's 16. */

#if VM_KIND == VM_AVX512
#define VC_K 16
#define VC_EACH(X, E)                                                       \
  X(0, E) X(1, E) X(2, E) X(3, E) X(4, E) X(5, E) X(6, E) X(7, E)           \
  X(8, E) X(9, E) X(10, E) X(11, E) X(12, E) X(13, E) X(14, E) X(15, E)
#define VC_DECL VF v0, v1, v2, v3, v4, v5, v6, v7, v8, v9, v10, v11, v12, \
                   v13, v14, v15
#elif VM_KIND == VM_AVX2
#define VC_K 8
#define VC_EACH(X, E)                                                       \
  X(0, E) X(1, E) X(2, E) X(3, E) X(4, E) X(5, E) X(6, E) X(7, E)
#define VC_DECL VF v0, v1, v2, v3, v4, v5, v6, v7
#else
#define VC_K 4
#define VC_EACH(X, E) X(0, E) X(1, E) X(2, E) X(3, E)
#define VC_DECL VF v0, v1, v2, v3
#endif
#define VC_B (VC_K * VM_W) /* elements per block */

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

/* Operand forms: bit 0 set when operand a is an input (else the
 * accumulator), bit 1 the same for b. */
#define VC_CODE(op, form) ((op) * 4 + (form))
#define VC_LA(j) VM_FN(load)(pa + (j) * VM_W)
#define VC_LB(j) VM_FN(load)(pb + (j) * VM_W)
#define VC_AA(j, E) { VF x = v##j, y = v##j; v##j = E; }
#define VC_MA(j, E) { VF x = VC_LA(j), y = v##j; v##j = E; }
#define VC_AM(j, E) { VF x = v##j, y = VC_LB(j); v##j = E; }
#define VC_MM(j, E) { VF x = VC_LA(j), y = VC_LB(j); v##j = E; }
#define VC_UA(j, E) { VF x = v##j; v##j = E; }
#define VC_LD(j, E) v##j = VC_LA(j);
#define VC_CASE_BIN(OP, E)                                                  \
  case VC_CODE(SHLO_LANE_##OP, 0): VC_EACH(VC_AA, E) break;                 \
  case VC_CODE(SHLO_LANE_##OP, 1): VC_EACH(VC_MA, E) break;                 \
  case VC_CODE(SHLO_LANE_##OP, 2): VC_EACH(VC_AM, E) break;                 \
  case VC_CODE(SHLO_LANE_##OP, 3): VC_EACH(VC_MM, E) break;
/* a unary op of an input loads it into the accumulator first (its code,
 * large for exp and the like, is there once) */
#define VC_CASE_UN(OP, E)                                                   \
  case VC_CODE(SHLO_LANE_##OP, 1): VC_EACH(VC_LD, _)                        \
    __attribute__((fallthrough));                                           \
  case VC_CODE(SHLO_LANE_##OP, 0): VC_EACH(VC_UA, E) break;
#define VC_STORE(j, E) VM_FN(store)(po + (j) * VM_W, v##j);
#if VM_KIND == VM_AVX512
#define VC_STREAM(j, E) _mm512_stream_ps(po + (j) * VM_W, (__m512)v##j);
#elif VM_KIND == VM_AVX2
#define VC_STREAM(j, E) _mm256_stream_ps(po + (j) * VM_W, (__m256)v##j);
#else
#define VC_STREAM(j, E) VC_STORE(j, E)
#endif

/* Blocks [lo, hi) (multiples of VC_B apart): input k at in[k] + i, or
 * in[k] itself when adv[k] is 0 (a splat block); output k at out[k] + i. */
/* An instruction decoded for one call: its case, where its operands
 * start and whether they advance (a mask for the element index), and its
 * output (NULL: none), so that a block pays for the switch alone.  A
 * layernorm's four-instruction program, a row at a time, spent about a
 * third of its time decoding. */
typedef struct VM_FN(vc_dec) {
  const float *a, *b;
  int64_t ma, mb; /* -1: advances with the element; 0: a splat block */
  float *o;
  bool stream;
  int code;
} VM_FN(vc_dec);

VM_EXTERN void VM_FN(vc_blocks)(const shlo_vchain *p, float *const *out,
                                const float *const *in, const uint8_t *adv,
                                int64_t lo, int64_t hi) {
  VM_FN(vc_dec) dec[p->n_ins > 0 ? p->n_ins : 1];
  for (int k = 0; k < p->n_ins; k++) {
    const shlo_vchain_ins *ins = &p->ins[k];
    VM_FN(vc_dec) *d = &dec[k];
    int form = 0;
    d->a = d->b = NULL;
    d->ma = d->mb = 0;
    if (ins->a >= 0) {
      d->a = in[ins->a];
      d->ma = adv[ins->a] ? -1 : 0;
      form |= 1;
    }
    if (ins->b >= 0 && shlo_lane_op_binary(ins->op)) {
      d->b = in[ins->b];
      d->mb = adv[ins->b] ? -1 : 0;
      form |= 2;
    }
    d->code = VC_CODE(ins->op, form);
    d->o = ins->out >= 0 ? out[ins->out] : NULL;
    d->stream = ins->out >= 0 && p->out_stream[ins->out];
  }
  const VM_FN(vc_dec) *end = dec + p->n_ins;
  for (int64_t i = lo; i < hi; i += VC_B) {
    VC_DECL;
#define VC_ZERO(j, E) v##j = (VF){0};
    VC_EACH(VC_ZERO, _)
#undef VC_ZERO
    for (const VM_FN(vc_dec) *d = dec; d < end; d++) {
      /* (in integers: an unused operand's start is NULL) */
      const float *pa = (const float *)((uintptr_t)d->a +
                                        (uintptr_t)(i & d->ma) * 4);
      const float *pb = (const float *)((uintptr_t)d->b +
                                        (uintptr_t)(i & d->mb) * 4);
      switch (d->code) {
        VC_CASE_BIN(ADD, x + y)
        VC_CASE_BIN(SUB, x - y)
        VC_CASE_BIN(MUL, x * y)
        VC_CASE_BIN(DIV, x / y)
        VC_CASE_BIN(MAX, VM_FN(vc_max)(x, y))
        VC_CASE_BIN(MIN, VM_FN(vc_min)(x, y))
        VC_CASE_UN(NEG, VM_FN(vc_neg)(x))
        VC_CASE_UN(ABS, VM_FN(vc_abs)(x))
        VC_CASE_UN(SQRT, VM_FN(vc_sqrt)(x))
        VC_CASE_UN(EXP, VM_FN(exp_lanes)(x))
        VC_CASE_UN(TANH, VM_FN(tanh_lanes)(x))
        VC_CASE_UN(LOGISTIC, VM_FN(logistic_lanes)(x))
      default:
        break; /* refused when the program was built */
      }
      if (d->o) {
        float *po = d->o + i;
        if (d->stream && !((uintptr_t)po & (VM_W * 4 - 1))) {
          VC_EACH(VC_STREAM, _)
        } else {
          VC_EACH(VC_STORE, _)
        }
      }
    }
  }
}

/* The last n < VC_B elements: every array that advances is copied to a
 * block of its own in work (one block per distinct address, so that an
 * output read back as an input stays one array), the block runs, and the
 * outputs' first n elements are copied back.  The same operations as a
 * whole block's, so the same bits. */
VM_EXTERN void VM_FN(vc_tail)(const shlo_vchain *p, float *const *out,
                              const float *const *in, const uint8_t *adv,
                              int64_t n, float *work) {
  const float *addr[2 * SHLO_VCHAIN_MAX_IO];
  int n_addr = 0;
  const float *tin[SHLO_VCHAIN_MAX_IO];
  float *tout[SHLO_VCHAIN_MAX_IO];
  /* inputs first: an output at an input's address finds its block
   * already filled */
  for (int k = 0; k < p->n_in + p->n_out; k++) {
    bool is_in = k < p->n_in;
    const float *a = is_in ? in[k] : out[k - p->n_in];
    if (is_in && !adv[k]) {
      tin[k] = a; /* a splat block */
      continue;
    }
    int s = 0;
    while (s < n_addr && addr[s] != a) s++;
    float *blk = work + (size_t)s * VC_B;
    if (s == n_addr) {
      addr[n_addr++] = a;
      memset(blk, 0, VC_B * sizeof *blk);
      if (is_in) memcpy(blk, a, (size_t)n * sizeof *blk);
    }
    if (is_in) tin[k] = blk;
    else tout[k - p->n_in] = blk;
  }
  VM_FN(vc_blocks)(p, tout, tin, adv, 0, VC_B);
  for (int q = 0; q < p->n_out; q++)
    memcpy(out[q], tout[q], (size_t)n * sizeof *out[q]);
}

VM_EXTERN void VM_FN(vchain)(const shlo_vchain *p, float *const *out,
                             const float *const *in, int64_t n, void *work) {
  float *w = work;
  const float *src[SHLO_VCHAIN_MAX_IO];
  uint8_t adv[SHLO_VCHAIN_MAX_IO];
  for (int k = 0; k < p->n_in; k++) {
    adv[k] = !p->in_one[k];
    src[k] = in[k];
    if (adv[k]) continue;
    VF s = VM_FN(splat)(*in[k]); /* a block of the one element */
    for (int j = 0; j < VC_B; j += VM_W) VM_FN(store)(w + j, s);
    src[k] = w;
    w += VC_B;
  }
  int64_t whole = n - n % VC_B;
  VM_FN(vc_blocks)(p, out, src, adv, 0, whole);
  if (whole < n) {
    float *const *o = out;
    float *tail_out[SHLO_VCHAIN_MAX_IO];
    const float *tail_in[SHLO_VCHAIN_MAX_IO];
    for (int q = 0; q < p->n_out; q++) tail_out[q] = o[q] + whole;
    for (int k = 0; k < p->n_in; k++)
      tail_in[k] = adv[k] ? src[k] + whole : src[k];
    VM_FN(vc_tail)(p, tail_out, tail_in, adv, n - whole, w);
  }
}

#undef VC_K
#undef VC_EACH
#undef VC_DECL
#undef VC_B
#undef VC_CODE
#undef VC_LA
#undef VC_LB
#undef VC_AA
#undef VC_MA
#undef VC_AM
#undef VC_MM
#undef VC_UA
#undef VC_LD
#undef VC_CASE_BIN
#undef VC_CASE_UN
#undef VC_STORE
#undef VC_STREAM
