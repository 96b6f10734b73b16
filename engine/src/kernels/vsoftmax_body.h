/* SPDX-License-Identifier: Apache-2.0 */
/* One variant of the softmax row kernels of vmath.h (shlo__vsoftmax_*),
 * included by vmath_body.h with its VM_* definitions.  Each element goes
 * through the same IEEE operations as the ops one by one: the subtract,
 * exp_lanes (the tail through a padded vector, as VM_LOOP does), the
 * divide; each row's sum adds its elements in column order from its
 * running value, as the reduce kernel's sequential fold does. */

/* exp(v), v <= 0 or NaN when nonpos (exp_core_of) */
VM_INLINE VF VM_FN(vsm_exp_of)(VF v, bool nonpos) {
  return nonpos ? VM_FN(exp_nonpos_lanes)(v) : VM_FN(exp_lanes)(v);
}

/* e[c] = exp(y[c] - m) for c in [0, cols), asking for pf[c] meanwhile */
VM_INLINE void VM_FN(vsm_exp_row)(float *e, const float *y, float m,
                                  int64_t cols, bool nonpos,
                                  const float *pf) {
  VF mv = VM_FN(splat)(m);
  int64_t i = 0;
  for (; i + VM_W <= cols; i += VM_W) {
    __builtin_prefetch(pf + i, 0, 2);
    VM_FN(store)(e + i, VM_FN(vsm_exp_of)(VM_FN(load)(y + i) - mv, nonpos));
  }
  if (i == cols) return;
  /* padded with m, whose lanes give m - m: 0 or NaN, as nonpos asks */
  float buf[VM_W];
  for (int j = 0; j < VM_W; j++) buf[j] = m;
  memcpy(buf, y + i, (size_t)(cols - i) * sizeof *y);
  VM_FN(store)(buf, VM_FN(vsm_exp_of)(VM_FN(load)(buf) - mv, nonpos));
  memcpy(e + i, buf, (size_t)(cols - i) * sizeof *e);
}

#if VM_KIND == VM_AVX512 && defined(__GNUC__) && !defined(__clang__)
/* sum[r] += e[r * cols + c] for c in [0, cols), for 16 rows: each
 * 16 x 16 tile transposed in registers so that one vector holds one
 * column of the 16 rows (lane r: row r), the columns added in turn; the
 * sequential order, the additions and loads vector ones (reduce_body.c's
 * rb_sum16_f32).  Padding e's rows (against 16 rows 4 KiB apart in
 * the same L1 sets) was measured and gave nothing. */
VM_INLINE void VM_FN(vsm_sum16)(float *sum, const float *e, int64_t cols) {
  VF acc = VM_FN(load)(sum);
  int64_t i = 0;
  for (; i + 16 <= cols; i += 16) {
    shlo_v16f t[16];
#pragma GCC unroll 16
    for (int r = 0; r < 16; r++) t[r] = (shlo_v16f)VM_FN(load)(e + r * cols + i);
    SHLO_TRANSPOSE16(t);
#pragma GCC unroll 16
    for (int c = 0; c < 16; c++) acc += (VF)t[c];
  }
  VM_FN(store)(sum, acc);
  for (int r = 0; r < 16; r++) /* the columns past the last tile */
    for (int64_t k = i; k < cols; k++) sum[r] += e[r * cols + k];
}
#endif

/* Each row's exponentials, and after every 16 rows their sums, while
 * the 16 rows are still in L1 or L2 (the exponentials of 16 rows
 * computed tile by tile instead, each tile's transposed at once, ran 6%
 * slower than the ops one by one: 16 exp chains at a time spill). */
VM_EXTERN bool VM_FN(vsm_exp)(float *e, float *sum,
                              const float *y, const float *m, int64_t rows,
                              int64_t cols, bool m_is_max,
                              const float *next) {
  for (int64_t r = 0; r < rows; r++) {
    const float *pf = (next ? next : y) + r * cols;
    if (m_is_max) /* two loops, each with its exp inlined */
      VM_FN(vsm_exp_row)(e + r * cols, y + r * cols, m[r], cols, true, pf);
    else
      VM_FN(vsm_exp_row)(e + r * cols, y + r * cols, m[r], cols, false, pf);
#if VM_KIND == VM_AVX512 && defined(__GNUC__) && !defined(__clang__)
    if (cols >= 16 && rows % 16 == 0 && r % 16 == 15)
      VM_FN(vsm_sum16)(sum + r - 15, e + (r - 15) * cols, cols);
#endif
  }
#if VM_KIND == VM_AVX512 && defined(__GNUC__) && !defined(__clang__)
  if (cols >= 16 && rows % 16 == 0) return true;
#else
  (void)sum;
#endif
  return false;
}

VM_EXTERN void VM_FN(vsm_div)(float *d, float *e, const float *s,
                              int64_t rows, int64_t cols, bool stream) {
  for (int64_t r = 0; r < rows; r++) {
    float *er = e + r * cols, *dr = d + r * cols;
    VF sv = VM_FN(splat)(s[r]);
    int64_t i = 0;
#if VM_KIND == VM_AVX512
    if (stream && ((uintptr_t)dr & 63) == 0 && cols % 16 == 0) {
      for (; i < cols; i += 16)
        _mm512_stream_ps(dr + i, (__m512)(VM_FN(load)(er + i) / sv));
      continue;
    }
#endif
    /* elsewhere a streamed row is divided in place and then copied */
    float *w = stream ? er : dr;
    for (; i + VM_W <= cols; i += VM_W)
      VM_FN(store)(w + i, VM_FN(load)(er + i) / sv);
    for (; i < cols; i++) w[i] = er[i] / s[r];
    if (stream) shlo__stream_copy(dr, er, (size_t)cols * sizeof *er);
  }
}
