/* SPDX-License-Identifier: Apache-2.0 */
/* The block loop of vchain_body.h at one width, included by it once per
 * width with VC_K (vectors per block), VC_EACH and VC_DECL (one
 * variable per vector) and VC_FN (a name with the width's suffix)
 * defined; it undefines them. */

#define VC_B (VC_K * VM_W) /* elements per block */

/* dec[] for p's instructions: input k at in[k], or the one element
 * *in[k] when adv[k] is 0 (held in a register); output k at out[k]. */
VM_INLINE void VC_FN(vc_decode)(const shlo_vchain *p, VM_FN(vc_dec) *dec,
                                float *const *out, const float *const *in,
                                const uint8_t *adv) {
  for (int k = 0; k < p->n_ins; k++) {
    const shlo_vchain_ins *ins = &p->ins[k];
    VM_FN(vc_dec) *d = &dec[k];
    int fa = VC_ACC, fb = VC_ACC;
    d->a = d->b = NULL;
    d->sa = d->sb = (VF){0};
    if (ins->a >= 0) {
      d->a = in[ins->a];
      fa = adv[ins->a] ? VC_MEM : VC_ONE;
      if (fa == VC_ONE) d->sa = VM_FN(splat)(*d->a);
    }
    if (ins->b >= 0 && shlo_lane_op_binary(ins->op)) {
      d->b = in[ins->b];
      fb = adv[ins->b] ? VC_MEM : VC_ONE;
      if (fb == VC_ONE) d->sb = VM_FN(splat)(*d->b);
    }
    d->code = VC_CODE(ins->op, fa, fb);
    d->o = ins->out >= 0 ? out[ins->out] : NULL;
    d->stream = ins->out >= 0 && p->out_stream[ins->out];
  }
}

/* Blocks [lo, hi) (multiples of VC_B apart) of the decoded program
 * dec[0, n): operands at a + i (the one element sa where they do not
 * advance), outputs at o + i. */
VM_EXTERN void VC_FN(vc_run)(const VM_FN(vc_dec) *dec, int n, int64_t lo,
                             int64_t hi) {
  const VM_FN(vc_dec) *end = dec + n;
  for (int64_t i = lo; i < hi; i += VC_B) {
    VC_DECL;
#define VC_ZERO(j, E) v##j = (VF){0};
    VC_EACH(VC_ZERO, _)
#undef VC_ZERO
    for (const VM_FN(vc_dec) *d = dec; d < end; d++) {
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
        VC_CASE_UN_N(EXP, VM_FN(exp_n))
        VC_CASE_UN_N(TANH, VM_FN(tanh_n))
        VC_CASE_UN_N(LOGISTIC, VM_FN(logistic_n))
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

/* Blocks [lo, hi): input k at in[k] + i, or the one element *in[k] when
 * adv[k] is 0; output k at out[k] + i. */
VM_EXTERN void VC_FN(vc_blocks)(const shlo_vchain *p, float *const *out,
                                const float *const *in, const uint8_t *adv,
                                int64_t lo, int64_t hi) {
  VM_FN(vc_dec) dec[p->n_ins > 0 ? p->n_ins : 1];
  VC_FN(vc_decode)(p, dec, out, in, adv);
  VC_FN(vc_run)(dec, p->n_ins, lo, hi);
}

/* The last n < VC_B elements: every array that advances is copied to a
 * block of its own in work (one block per distinct address, so that an
 * output read back as an input stays one array), the block runs, and the
 * outputs' first n elements are copied back.  The same operations as a
 * whole block's, so the same bits. */
VM_EXTERN void VC_FN(vc_tail)(const shlo_vchain *p, float *const *out,
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
      tin[k] = a; /* one element */
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
  VC_FN(vc_blocks)(p, tout, tin, adv, 0, VC_B);
  for (int q = 0; q < p->n_out; q++)
    memcpy(out[q], tout[q], (size_t)n * sizeof *out[q]);
}

/* Row r's array at base + r * step bytes. */
#define VC_ROW(T, base, step, r)                                            \
  ((T)((uintptr_t)(base) + (uintptr_t)((r) * (step))))

/* shlo__vchain_run_rows (vchain.h): decoded once; for each row after
 * the first only the operands' and outputs' starts move (and the
 * one-element operands' registers are filled again). */
VM_EXTERN void VC_FN(vchain)(const shlo_vchain *p, float *const *out,
                             const int64_t *out_step, const float *const *in,
                             const int64_t *in_step, int64_t rows, int64_t n,
                             void *work) {
  uint8_t adv[SHLO_VCHAIN_MAX_IO];
  for (int k = 0; k < p->n_in; k++) adv[k] = !p->in_one[k];
  int64_t whole = n - n % VC_B;
  VM_FN(vc_dec) dec[p->n_ins > 0 ? p->n_ins : 1];
  VC_FN(vc_decode)(p, dec, out, in, adv);
  for (int64_t r = 0; r < rows; r++) {
    if (r > 0)
      for (int k = 0; k < p->n_ins; k++) {
        const shlo_vchain_ins *ins = &p->ins[k];
        VM_FN(vc_dec) *d = &dec[k];
        if (d->a) {
          d->a = VC_ROW(const float *, in[ins->a], in_step[ins->a], r);
          if (!adv[ins->a]) d->sa = VM_FN(splat)(*d->a);
        }
        if (d->b) {
          d->b = VC_ROW(const float *, in[ins->b], in_step[ins->b], r);
          if (!adv[ins->b]) d->sb = VM_FN(splat)(*d->b);
        }
        if (d->o) d->o = VC_ROW(float *, out[ins->out], out_step[ins->out], r);
      }
    VC_FN(vc_run)(dec, p->n_ins, 0, whole);
    if (whole == n) continue;
    float *tail_out[SHLO_VCHAIN_MAX_IO];
    const float *tail_in[SHLO_VCHAIN_MAX_IO];
    for (int q = 0; q < p->n_out; q++)
      tail_out[q] = VC_ROW(float *, out[q], rows > 1 ? out_step[q] : 0, r) +
                    whole;
    for (int k = 0; k < p->n_in; k++) {
      tail_in[k] = VC_ROW(const float *, in[k], rows > 1 ? in_step[k] : 0, r);
      if (adv[k]) tail_in[k] += whole;
    }
    VC_FN(vc_tail)(p, tail_out, tail_in, adv, n - whole, work);
  }
}
#undef VC_ROW

#undef VC_K
#undef VC_EACH
#undef VC_DECL
#undef VC_B
#undef VC_FN
