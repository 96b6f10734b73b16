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

/* e[c] = exp(y[c] - m) for c in [i, cols), the columns left after
 * whole vectors: through a vector padded with m, whose lanes give
 * m - m: 0 or NaN, as nonpos asks */
VM_INLINE void VM_FN(vsm_exp_rest)(float *e, const float *y, float m,
                                   int64_t i, int64_t cols, bool nonpos) {
  if (i == cols) return;
  float buf[VM_W];
  for (int j = 0; j < VM_W; j++) buf[j] = m;
  memcpy(buf, y + i, (size_t)(cols - i) * sizeof *y);
  VM_FN(store)(buf, VM_FN(vsm_exp_of)(VM_FN(load)(buf) - VM_FN(splat)(m),
                                      nonpos));
  memcpy(e + i, buf, (size_t)(cols - i) * sizeof *e);
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
  VM_FN(vsm_exp_rest)(e, y, m, i, cols, nonpos);
}

/* d[c] = x[c] / s for c in [0, cols), written past the caches when
 * stream (the caller fences); with stream, x may be d.  AVX-512 streams
 * straight from registers where d's row is aligned and whole vectors;
 * elsewhere a streamed row is divided in place and then copied. */
VM_INLINE void VM_FN(vsm_div_row)(float *d, float *x, float s, int64_t cols,
                                  bool stream) {
  VF sv = VM_FN(splat)(s);
  int64_t i = 0;
#if VM_KIND == VM_AVX512
  if (stream && ((uintptr_t)d & 63) == 0 && cols % 16 == 0) {
    for (; i < cols; i += 16)
      _mm512_stream_ps(d + i, (__m512)(VM_FN(load)(x + i) / sv));
    return;
  }
#endif
  float *w = stream ? x : d;
  for (; i + VM_W <= cols; i += VM_W) VM_FN(store)(w + i, VM_FN(load)(x + i) / sv);
  for (; i < cols; i++) w[i] = x[i] / s;
  if (stream) shlo__stream_copy(d, x, (size_t)cols * sizeof *x);
}

/* vsm_exp_row, and beside it d[c] = x[c] / s (vsm_div_row) from another
 * buffer, in one loop: the divides and their stores go out while the
 * exponential's FMAs run, instead of in a pass of their own that waits
 * on the stores.  Each element's operations are those of the two rows
 * done one after the other. */
VM_INLINE void VM_FN(vsm_exp_div_row)(float *e, const float *y, float m,
                                      int64_t cols, bool nonpos,
                                      const float *pf, float *d,
                                      const float *x, float s, bool stream) {
  VF mv = VM_FN(splat)(m), sv = VM_FN(splat)(s);
  int64_t i = 0;
#if VM_KIND == VM_AVX512
  if (stream) { /* the caller checked d's row: aligned, whole vectors */
    for (; i + 16 <= cols; i += 16) {
      __builtin_prefetch(pf + i, 0, 2);
      _mm512_stream_ps(d + i, (__m512)(VM_FN(load)(x + i) / sv));
      VM_FN(store)(e + i, VM_FN(vsm_exp_of)(VM_FN(load)(y + i) - mv, nonpos));
    }
    VM_FN(vsm_exp_rest)(e, y, m, i, cols, nonpos);
    return;
  }
#else
  (void)stream; /* the caller streams no row through here */
#endif
  for (; i + VM_W <= cols; i += VM_W) {
    __builtin_prefetch(pf + i, 0, 2);
    VM_FN(store)(d + i, VM_FN(load)(x + i) / sv);
    VM_FN(store)(e + i, VM_FN(vsm_exp_of)(VM_FN(load)(y + i) - mv, nonpos));
  }
  for (int64_t j = i; j < cols; j++) d[j] = x[j] / s;
  VM_FN(vsm_exp_rest)(e, y, m, i, cols, nonpos);
}

/* Whether a row of d can take vsm_exp_div_row's divide */
VM_INLINE bool VM_FN(vsm_div_beside)(const float *d, int64_t cols,
                                     bool stream) {
#if VM_KIND == VM_AVX512
  return !stream || (((uintptr_t)d & 63) == 0 && cols % 16 == 0);
#else
  (void)d;
  (void)cols;
  return !stream;
#endif
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
 * slower than the ops one by one: 16 exp chains at a time spill); row r
 * of dv's divide beside row r's exponentials. */
VM_EXTERN bool VM_FN(vsm_exp)(float *e, float *sum,
                              const float *y, const float *m, int64_t rows,
                              int64_t cols, bool m_is_max, const float *next,
                              const shlo_vsoftmax_div *dv) {
  int64_t n_div = dv ? dv->rows : 0;
  for (int64_t r = 0; r < rows; r++) {
    const float *pf = (next ? next : y) + r * cols;
    float *er = e + r * cols;
    const float *yr = y + r * cols;
    float *dr = r < n_div ? dv->d + r * cols : NULL;
    if (dr && VM_FN(vsm_div_beside)(dr, cols, dv->stream)) {
      const float *x = dv->e + r * cols;
      /* each combination a loop of its own, its exp inlined */
      if (m_is_max && dv->stream)
        VM_FN(vsm_exp_div_row)(er, yr, m[r], cols, true, pf, dr, x, dv->s[r], true);
      else if (m_is_max)
        VM_FN(vsm_exp_div_row)(er, yr, m[r], cols, true, pf, dr, x, dv->s[r], false);
      else if (dv->stream)
        VM_FN(vsm_exp_div_row)(er, yr, m[r], cols, false, pf, dr, x, dv->s[r], true);
      else
        VM_FN(vsm_exp_div_row)(er, yr, m[r], cols, false, pf, dr, x, dv->s[r], false);
    } else {
      if (dr) VM_FN(vsm_div_row)(dr, dv->e + r * cols, dv->s[r], cols, dv->stream);
      if (m_is_max)
        VM_FN(vsm_exp_row)(er, yr, m[r], cols, true, pf);
      else
        VM_FN(vsm_exp_row)(er, yr, m[r], cols, false, pf);
    }
#if VM_KIND == VM_AVX512 && defined(__GNUC__) && !defined(__clang__)
    if (cols >= 16 && rows % 16 == 0 && r % 16 == 15)
      VM_FN(vsm_sum16)(sum + r - 15, e + (r - 15) * cols, cols);
#endif
  }
  for (int64_t r = rows; r < n_div; r++) /* dv's rows past these */
    VM_FN(vsm_div_row)(dv->d + r * cols, dv->e + r * cols, dv->s[r], cols,
                       dv->stream);
#if VM_KIND == VM_AVX512 && defined(__GNUC__) && !defined(__clang__)
  if (cols >= 16 && rows % 16 == 0) return true;
#else
  (void)sum;
#endif
  return false;
}

VM_EXTERN void VM_FN(vsm_div)(float *d, float *e, const float *s,
                              int64_t rows, int64_t cols, bool stream) {
  for (int64_t r = 0; r < rows; r++)
    VM_FN(vsm_div_row)(d + r * cols, e + r * cols, s[r], cols, stream);
}
