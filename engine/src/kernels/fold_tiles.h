/* SPDX-License-Identifier: Apache-2.0 */
/* Sums along rows of a value that is never stored: a lane program
 * (vchain.h) evaluated on tiles of 16 rows by up to 512 columns of the
 * arrays it is computed from, its value for the tile left in L1, and
 * added to the 16 rows' running sums a tile at a time.
 *
 * Each row is summed in the reduce kernel's schedule (sum_tree.h), and
 * each element is the one the program computes from the same operands
 * (the ops' own bits), so the sums are bit for bit those of the value
 * made whole and reduced after.  Fused rows groups use it for a
 * reduction whose operand only it reads (layernorm's squared
 * deviations): the value costs no pass over memory of its own. */
#ifndef SHLO_FOLD_TILES_H
#define SHLO_FOLD_TILES_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/vchain.h"

/* Where a program input lies, for rows [0, rows) and columns [0, cols). */
enum shlo_tile_kind {
  SHLO_TILE_FULL, /* a row-major array, rows of cols elements: base[r * cols + c] */
  SHLO_TILE_ROW,  /* one value per row: base[r] */
  SHLO_TILE_COL,  /* one value per column, the same in every row: base[c] */
  SHLO_TILE_ONE,  /* one value everywhere: base[0] (the program's in_one) */
  SHLO_TILE_OUT   /* the program's output `out`, stored by an earlier
                     instruction and read back */
};

typedef struct shlo_tile_in {
  int kind;
  int out;           /* SHLO_TILE_OUT only */
  const float *base;
} shlo_tile_in;

/* Bytes of the workspace shlo__fold_tiles_add_f32 needs for program p. */
size_t shlo__fold_tiles_work_bytes(const shlo_vchain *p);

/* acc[r] = acc[r] + v(r, c) for c = 0, 1, ..., cols - 1 in turn, for each
 * r in [0, rows), where v is output `result` of p with its inputs where
 * in[] says.  p->in_one[k] must be set exactly for SHLO_TILE_ONE inputs.
 * work: 64-byte aligned, shlo__fold_tiles_work_bytes(p) bytes. */
void shlo__fold_tiles_add_f32(float *acc, int64_t rows, int64_t cols,
                              const shlo_vchain *p, int result,
                              const shlo_tile_in *in, void *work);

#endif
