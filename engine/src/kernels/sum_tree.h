/* SPDX-License-Identifier: Apache-2.0 */
/* The order in which shlo adds up an f32 row: the schedule of every
 * stablehlo.reduce whose body is an f32 add, over each run of its reduced
 * elements that lies contiguous in the input (reduce.c says which runs).
 *
 * The spec lets a reduction's schedule be any full binary tree whose
 * in-order traversal visits the inputs in ascending order, with the init
 * value anywhere among them.  shlo's, for a run x[0, n) folded into acc:
 *
 *   for each whole block of 16, b = x[16k, 16k + 16), in order:
 *     acc = acc + T(b)
 *   for each of the last n % 16 elements, in order:
 *     acc = acc + x[i]
 *
 *   T(b) = ((((b0 + b1) + (b2 + b3)) + ((b4 + b5) + (b6 + b7)))
 *          + (((b8 + b9) + (b10 + b11)) + ((b12 + b13) + (b14 + b15))))
 *
 * the balanced tree of adjacent pairs, left operand first.  Why this tree
 * and not the plain left fold: a fold's additions each wait on the last,
 * and vectors give one row's elements lane by lane, so keeping 16 rows'
 * folds in order took a 16 x 16 transpose per tile (4 shuffles a vector)
 * beside a chain of dependent adds; T costs 30 shuffles and 15 adds per 16
 * rows' blocks, and the chain one add a block.  Every path that sums f32
 * rows (the reduce kernel, the fused row kernels, softmax, the tiles of
 * fold_tiles.c) gives these bits, on every ISA and thread count.
 *
 * GCC's vector extensions (each function is inlined into its caller's
 * target clone). */
#ifndef SHLO_SUM_TREE_H
#define SHLO_SUM_TREE_H

#include <stdint.h>

#include "kernels/transpose16.h"

#define SHLO_SUM_BLOCK 16

/* acc + T(x[0, 16)) for one block, the scalar reference order. */
static inline float shlo_sum_block_f32(float acc, const float *x) {
  float p[8], q[4];
  for (int i = 0; i < 8; i++) p[i] = x[2 * i] + x[2 * i + 1];
  for (int i = 0; i < 4; i++) q[i] = p[2 * i] + p[2 * i + 1];
  return acc + ((q[0] + q[1]) + (q[2] + q[3]));
}

/* acc folded over x[0, n) in the schedule above, one element at a time
 * where vectors are not worth it (short rows, leftover rows). */
static inline float shlo_sum_row_f32(float acc, const float *x, int64_t n) {
  int64_t i = 0;
  for (; i + SHLO_SUM_BLOCK <= n; i += SHLO_SUM_BLOCK)
    acc = shlo_sum_block_f32(acc, x + i);
  for (; i < n; i++) acc = acc + x[i];
  return acc;
}

#if defined(__GNUC__) && !defined(__clang__)
/* Lane l: pair sums within each 4-lane group, first operand's pairs in
 * lanes 0-1 of the group, the second's in 2-3 (the even/odd halves). */
#define SHLO_ST_EVEN                                                        \
  ((shlo_v16i){0, 2, 16, 18, 4, 6, 20, 22, 8, 10, 24, 26, 12, 14, 28, 30})
#define SHLO_ST_ODD                                                         \
  ((shlo_v16i){1, 3, 17, 19, 5, 7, 21, 23, 9, 11, 25, 27, 13, 15, 29, 31})
/* 4-lane groups 0 and 2 of each operand, and 1 and 3 */
#define SHLO_ST_GEVEN                                                       \
  ((shlo_v16i){0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27})
#define SHLO_ST_GODD                                                        \
  ((shlo_v16i){4, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, 23, 28, 29, 30, 31})

/* a's and b's pairs (SHLO_ST_EVEN/ODD), or 4-lane groups (GEVEN/GODD),
 * added: left operand first */
#define SHLO_ST_JOIN(a, b, E, O)                                            \
  (__builtin_shuffle((a), (b), E) + __builtin_shuffle((a), (b), O))

/* *out lane r: T(t[r]), for 16 blocks t[0, 16) (one a row, say).
 *  - pairs of t[2i], t[2i+1]: each 4-lane group g of p[i] holds
 *    t[2i]'s (4g, 4g+1), (4g+2, 4g+3) sums, then t[2i+1]'s;
 *  - pairs of p[2j], p[2j+1]: group g of q[j] holds the sums of lanes
 *    [4g, 4g + 4) of t[4j], ..., t[4j + 3];
 *  - groups of q[0], q[1] (and q[2], q[3]): s[0]'s groups hold rows 0-3's
 *    lanes [0, 8), rows 0-3's [8, 16), rows 4-7's [0, 8), rows 4-7's
 *    [8, 16); s[1] the same for rows 8-15;
 *  - groups of s[0], s[1]: rows 0-3, 4-7, 8-11, 12-15, whole.
 * (Vectors by pointer: by value they would change the ABI where AVX-512
 * is off.) */
static inline __attribute__((always_inline)) void
shlo_sum_blocks16(shlo_v16f *out, const shlo_v16f *t) {
  shlo_v16f p[8], q[4], s[2];
#pragma GCC unroll 8
  for (int i = 0; i < 8; i++)
    p[i] = SHLO_ST_JOIN(t[2 * i], t[2 * i + 1], SHLO_ST_EVEN, SHLO_ST_ODD);
#pragma GCC unroll 4
  for (int j = 0; j < 4; j++)
    q[j] = SHLO_ST_JOIN(p[2 * j], p[2 * j + 1], SHLO_ST_EVEN, SHLO_ST_ODD);
  s[0] = SHLO_ST_JOIN(q[0], q[1], SHLO_ST_GEVEN, SHLO_ST_GODD);
  s[1] = SHLO_ST_JOIN(q[2], q[3], SHLO_ST_GEVEN, SHLO_ST_GODD);
  *out = SHLO_ST_JOIN(s[0], s[1], SHLO_ST_GEVEN, SHLO_ST_GODD);
}

/* Lanes r < 4 of *out: T(t[r]) for 4 blocks t[0, 4): the same levels,
 * the last two joining a vector's 4-lane groups with each other (2.5
 * shuffles a block where 16 blocks take 1.9, but 4 rows of 1024 floats
 * stay in L1 where 16 do not). */
static inline __attribute__((always_inline)) void
shlo_sum_blocks4(shlo_v16f *out, const shlo_v16f *t) {
  shlo_v16f p0 = SHLO_ST_JOIN(t[0], t[1], SHLO_ST_EVEN, SHLO_ST_ODD);
  shlo_v16f p1 = SHLO_ST_JOIN(t[2], t[3], SHLO_ST_EVEN, SHLO_ST_ODD);
  shlo_v16f q = SHLO_ST_JOIN(p0, p1, SHLO_ST_EVEN, SHLO_ST_ODD);
  shlo_v16f s = SHLO_ST_JOIN(q, q, SHLO_ST_GEVEN, SHLO_ST_GODD);
  *out = SHLO_ST_JOIN(s, s, SHLO_ST_GEVEN, SHLO_ST_GODD);
}

#endif

#endif
