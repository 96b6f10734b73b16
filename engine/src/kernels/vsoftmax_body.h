/* SPDX-License-Identifier: Apache-2.0 */
/* One variant of the softmax row kernels of vmath.h (shlo__vsoftmax_*),
 * included by vmath_body.h with its VM_* definitions.  Each element goes
 * through the same IEEE operations as the ops one by one: the subtract,
 * exp_lanes (the tail through a padded vector, as VM_LOOP does), the
 * divide; each row's sum adds its elements to its running value in the
 * reduce kernel's schedule (sum_tree.h). */

/* v[j] = exp(v[j]) for j < n, v <= 0 or NaN when nonpos (exp_core_of) */
VM_INLINE void VM_FN(vsm_exp_n)(VF *v, int n, bool nonpos) {
  if (nonpos) VM_FN(exp_nonpos_n)(v, n);
  else VM_FN(exp_n)(v, n);
}

/* exp(v), v <= 0 or NaN when nonpos */
VM_INLINE VF VM_FN(vsm_exp_of)(VF v, bool nonpos) {
  VM_FN(vsm_exp_n)(&v, 1, nonpos);
  return v;
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

/* What vsm_row does beside a row's exponentials: nothing, a divide
 * (vsm_div_row's, stored), or a divide streamed from registers (AVX-512,
 * the caller having checked that d's row is aligned whole vectors). */
#ifndef VSM_DIV_KINDS /* once for all variants */
#define VSM_DIV_KINDS
enum { VSM_NO_DIV, VSM_DIV, VSM_DIV_STREAM };
#endif

/* e[c] = exp(y[c] - m) for c in [0, cols), and in the same loop:
 * - by div, d[c] = x[c] / s from another buffer: the divides and their
 *   stores go out while the exponential's FMAs run, instead of in a pass
 *   of their own that waits on the stores;
 * - where ahead, the largest element of another row xm into *hi, *odd
 *   set where xm holds a NaN or its largest is zero (whose sign the
 *   order of comparisons would decide): the next block's row maximum,
 *   from loads the FMAs hide, in place of a pass of its own;
 * - elsewhere pf[c] asked for from memory.
 * Each element's operations are those of the rows done one by one.
 * Always inlined with constant nonpos, div and ahead. */
VM_INLINE void VM_FN(vsm_row)(float *e, const float *y, float m,
                              int64_t cols, bool nonpos, const float *pf,
                              int div, float *d, const float *x, float s,
                              bool ahead, const float *xm, float *hi,
                              bool *odd) {
  VF mv = VM_FN(splat)(m), sv = VM_FN(splat)(s);
  VF h = VM_FN(splat)(-INFINITY);
  VI nan = {0};
  int64_t i = 0;
  /* the work beside the exponentials of the vector at i */
#if VM_KIND == VM_AVX512
#define VSM_STREAM_DIV(i)                                                   \
  if (div == VSM_DIV_STREAM)                                                \
    _mm512_stream_ps(d + (i), (__m512)(VM_FN(load)(x + (i)) / sv));
#else
#define VSM_STREAM_DIV(i)
#endif
#define VSM_BESIDE(i)                                                       \
  do {                                                                      \
    if (ahead) {                                                            \
      VF v_ = VM_FN(load)(xm + (i));                                        \
      nan |= (VI)(v_ != v_);                                                \
      h = VM_FN(max)(h, v_);                                                \
    }                                                                       \
    __builtin_prefetch(pf + (i), 0, 2);                                     \
    VSM_STREAM_DIV(i)                                                       \
    if (div == VSM_DIV) VM_FN(store)(d + (i), VM_FN(load)(x + (i)) / sv);   \
  } while (0)
  /* 4 vectors' exponentials at a time, their steps together (vmath's _n
   * functions): one at a time, the out-of-order window held too few of
   * their chains to fill the FMA pipes */
  for (; i + 4 * VM_W <= cols; i += 4 * VM_W) {
    VF v[4];
    VM_EACH(j, 4) {
      VSM_BESIDE(i + j * VM_W);
      v[j] = VM_FN(load)(y + i + j * VM_W) - mv;
    }
    VM_FN(vsm_exp_n)(v, 4, nonpos);
    VM_EACH(j, 4) VM_FN(store)(e + i + j * VM_W, v[j]);
  }
  for (; i + VM_W <= cols; i += VM_W) {
    VSM_BESIDE(i);
    VM_FN(store)(e + i, VM_FN(vsm_exp_of)(VM_FN(load)(y + i) - mv, nonpos));
  }
#undef VSM_BESIDE
#undef VSM_STREAM_DIV
  if (div == VSM_DIV)
    for (int64_t j = i; j < cols; j++) d[j] = x[j] / s;
  VM_FN(vsm_exp_rest)(e, y, m, i, cols, nonpos);
  if (!ahead) return;
  /* (through arrays: indexing the vectors themselves kept them in
   * memory, stored on every iteration of the loop above) */
  float hl[VM_W];
  int32_t nl[VM_W];
  VM_FN(store)(hl, h);
  memcpy(nl, &nan, sizeof nl);
  float r = -INFINITY;
  bool bad = false;
  for (int l = 0; l < VM_W; l++) {
    bad |= nl[l] != 0;
    if (hl[l] > r) r = hl[l];
  }
  for (int64_t j = i; j < cols; j++) {
    bad |= xm[j] != xm[j];
    if (xm[j] > r) r = xm[j];
  }
  *hi = r;
  *odd = bad || r == 0;
}

/* Whether a row of d can take vsm_row's divide */
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
/* sum[r] folded over e's row r, for 4 rows, in sum_tree.h's schedule:
 * each 4 x 64 tile of the rows becomes the rows' block sums (4 x 16 where
 * fewer columns are left), added to the running sums block by block.  4 rows, not 16 as the reduce kernel takes them (the
 * same tree either way): 16 rows of 1024 floats pass through L2, 4 stay
 * in L1 from their exponentials to their sums (softmax 0.41 -> 0.38 ms).
 * Padding e's rows (against rows 4 KiB apart in the same L1 sets) was
 * measured and gave nothing. */
VM_INLINE void VM_FN(vsm_sum4)(float *sum, const float *e, int64_t cols) {
  VF acc = {0};
  memcpy(&acc, sum, 4 * sizeof *sum);
  int64_t i = 0;
  /* 4 blocks of the 4 rows at a time: one 16-block tree, whose lanes
   * 4b + r hold row r's block b, added to the rows' sums block by block
   * (3 more shuffles to bring blocks 1-3 to lanes 0-3: 33 a 16 blocks
   * where 4-block trees take 40) */
  for (; i + 64 <= cols; i += 64) {
    shlo_v16f t[16];
#pragma GCC unroll 16
    for (int k = 0; k < 16; k++)
      t[k] = (shlo_v16f)VM_FN(load)(e + (k % 4) * cols + i + (k / 4) * 16);
    shlo_v16f v;
    shlo_sum_blocks16(&v, t);
    acc += (VF)v;
    acc += (VF)__builtin_shuffle(v, (shlo_v16i){4, 5, 6, 7, 4, 5, 6, 7, 4, 5,
                                                6, 7, 4, 5, 6, 7});
    acc += (VF)__builtin_shuffle(v, (shlo_v16i){8, 9, 10, 11, 8, 9, 10, 11,
                                                8, 9, 10, 11, 8, 9, 10, 11});
    acc += (VF)__builtin_shuffle(v, (shlo_v16i){12, 13, 14, 15, 12, 13, 14,
                                                15, 12, 13, 14, 15, 12, 13,
                                                14, 15});
  }
  for (; i + 16 <= cols; i += 16) {
    shlo_v16f t[4];
#pragma GCC unroll 4
    for (int r = 0; r < 4; r++)
      t[r] = (shlo_v16f)VM_FN(load)(e + r * cols + i);
    shlo_v16f v;
    shlo_sum_blocks4(&v, t);
    acc += (VF)v;
  }
  memcpy(sum, &acc, 4 * sizeof *sum);
  for (int r = 0; r < 4; r++) /* the elements past the last block */
    for (int64_t k = i; k < cols; k++) sum[r] = sum[r] + e[r * cols + k];
}
#endif

/* Each row's exponentials, and after every 4 rows their sums, while
 * the 4 rows are still in L1 (the exponentials of 16 rows
 * computed tile by tile instead, each tile's transposed at once, ran 6%
 * slower than the ops one by one: 16 exp chains at a time spill); row r
 * of dv's divide and of mx's maxima beside row r's exponentials. */
VM_EXTERN bool VM_FN(vsm_exp)(float *e, float *sum,
                              const float *y, const float *m, int64_t rows,
                              int64_t cols, bool m_is_max, const float *next,
                              const shlo_vsoftmax_div *dv,
                              const shlo_vsoftmax_max *mx) {
  int64_t n_div = dv ? dv->rows : 0, n_max = mx ? mx->rows : 0;
  for (int64_t r = 0; r < rows; r++) {
    /* asked for from memory meanwhile: the next block's row, or, where
     * that row's maximum is taken here, the row of the block after */
    const float *pf = r < n_max ? mx->x + (rows + r) * cols
                                : (next ? next : y) + r * cols;
    float *er = e + r * cols, *dr = r < n_div ? dv->d + r * cols : NULL;
    const float *yr = y + r * cols;
    const float *x = dr ? dv->e + r * cols : NULL;
    float s = dr ? dv->s[r] : 0;
    int div = VSM_NO_DIV;
    if (dr && VM_FN(vsm_div_beside)(dr, cols, dv->stream))
      div = dv->stream ? VSM_DIV_STREAM : VSM_DIV;
    else if (dr) /* a row the loop cannot take: first, by itself */
      VM_FN(vsm_div_row)(dr, dv->e + r * cols, s, cols, dv->stream);
    bool ahead = r < n_max;
    const float *xm = ahead ? mx->x + r * cols : NULL;
    float *hi = ahead ? &mx->hi[r] : NULL;
    bool *odd = ahead ? &mx->odd[r] : NULL;
    /* each combination a loop of its own, its exp inlined */
#define VSM_ROW(NONPOS, DIV, AHEAD)                                        \
  VM_FN(vsm_row)(er, yr, m[r], cols, NONPOS, pf, DIV, dr, x, s, AHEAD, xm, \
                 hi, odd)
#define VSM_ROWS(NONPOS, AHEAD)                                            \
  do {                                                                     \
    if (div == VSM_DIV_STREAM) VSM_ROW(NONPOS, VSM_DIV_STREAM, AHEAD);     \
    else if (div == VSM_DIV) VSM_ROW(NONPOS, VSM_DIV, AHEAD);              \
    else VSM_ROW(NONPOS, VSM_NO_DIV, AHEAD);                               \
  } while (0)
    if (m_is_max && ahead) VSM_ROWS(true, true);
    else if (m_is_max) VSM_ROWS(true, false);
    else if (ahead) VSM_ROWS(false, true);
    else VSM_ROWS(false, false);
#undef VSM_ROWS
#undef VSM_ROW
#if VM_KIND == VM_AVX512 && defined(__GNUC__) && !defined(__clang__)
    if (cols >= 16 && rows % 4 == 0 && r % 4 == 3)
      VM_FN(vsm_sum4)(sum + r - 3, e + (r - 3) * cols, cols);
#endif
  }
  for (int64_t r = rows; r < n_div; r++) /* dv's rows past these */
    VM_FN(vsm_div_row)(dv->d + r * cols, dv->e + r * cols, dv->s[r], cols,
                       dv->stream);
#if VM_KIND == VM_AVX512 && defined(__GNUC__) && !defined(__clang__)
  if (cols >= 16 && rows % 4 == 0) return true;
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
