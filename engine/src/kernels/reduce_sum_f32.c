/* SPDX-License-Identifier: Apache-2.0 */
/* stablehlo.reduce's f32 sums in shlo's schedule (sum_tree.h): one run
 * of a row at a time, or 16 rows side by side. */
#include <string.h>

#include "kernels/multiversion.h"
#include "kernels/reduce_int.h"
#include "kernels/sum_tree.h"

#if defined(__GNUC__) && !defined(__clang__)
/* acc folded over x[0, n): 16 blocks at a time through the vector tree,
 * whose lanes, the blocks' sums in order, then join acc one by one. */
SHLO_CLONES static float sum_run(float acc, const float *x, int64_t n) {
  enum { SPAN = 16 * SHLO_SUM_BLOCK };
  int64_t i = 0;
  for (; i + SPAN <= n; i += SPAN) {
    shlo_v16f t[16];
#pragma GCC unroll 16
    for (int k = 0; k < 16; k++)
      memcpy(&t[k], x + i + k * SHLO_SUM_BLOCK, sizeof t[k]);
    float s[16];
    shlo_v16f v;
    shlo_sum_blocks16(&v, t);
    memcpy(s, &v, sizeof s);
    for (int k = 0; k < 16; k++) acc = acc + s[k];
  }
  return shlo_sum_row_f32(acc, x + i, n - i);
}

/* acc[r] folded over row r of src (rows of len), for 16 rows: lane r of
 * each tree's vector is row r's block, so one vector add a block. */
SHLO_CLONES static void sum_rows16(float *acc, const float *src,
                                   int64_t len) {
  shlo_v16f a;
  memcpy(&a, acc, sizeof a);
  int64_t i = 0;
  for (; i + SHLO_SUM_BLOCK <= len; i += SHLO_SUM_BLOCK) {
    shlo_v16f t[16];
#pragma GCC unroll 16
    for (int r = 0; r < 16; r++) memcpy(&t[r], src + r * len + i, sizeof t[r]);
    shlo_v16f v;
    shlo_sum_blocks16(&v, t);
    a += v;
  }
  memcpy(acc, &a, sizeof a);
  for (int r = 0; r < 16; r++) /* the elements past the last block */
    for (int64_t k = i; k < len; k++) acc[r] = acc[r] + src[r * len + k];
}
#else
static float sum_run(float acc, const float *x, int64_t n) {
  return shlo_sum_row_f32(acc, x, n);
}
#endif

void shlo__rb_sum_run_f32(void *acc, const void *src, int64_t n,
                          const shlo_rb_native *b) {
  (void)b;
  float *a = acc;
  *a = sum_run(*a, src, n);
}

void shlo__rb_sum_rows_f32(void *acc_, const void *src_, int64_t rows,
                           int64_t len, const shlo_rb_native *b) {
  (void)b;
  float *acc = acc_;
  const float *src = src_;
  int64_t r = 0;
#if defined(__GNUC__) && !defined(__clang__)
  for (; r + 16 <= rows; r += 16) sum_rows16(acc + r, src + r * len, len);
#endif
  for (; r < rows; r++) acc[r] = sum_run(acc[r], src + r * len, len);
}
