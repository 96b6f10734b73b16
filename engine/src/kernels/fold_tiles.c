/* SPDX-License-Identifier: Apache-2.0 */
/* Sums along rows of a lane program's value, a tile of 16 rows at a
 * time (fold_tiles.h). */
#include <stdbool.h>
#include <string.h>

#include "kernels/fold_tiles.h"
#include "kernels/multiversion.h"
#include "kernels/sum_tree.h"

#define SIDE 16 /* rows of a tile */
/* Columns of a tile: 16 rows' values of one program output (32 KB) stay
 * in L1 from the program to their sums.  Layernorm on two threads:
 * 0.218 ms with 256, 0.214 with 512 or 1024.  At least the lane
 * program's block (vchain_blocks.h), or every call runs as its tail. */
#define CHUNK 512

size_t shlo__fold_tiles_work_bytes(const shlo_vchain *p) {
  return (size_t)p->n_out * SIDE * CHUNK * sizeof(float) +
         shlo__vchain_work_bytes(p);
}

/* The program over rows [0, nr) (nr <= 16), a tile's columns [c0, c0 +
 * w) at a time, its outputs into scratch (rows of CHUNK); after each
 * tile, sum(r, o) folds output o's rows into the rows' running sums. */
typedef struct tile_walk {
  shlo_vchain p; /* a value per row: one element, moving with the row */
  const float *src[SHLO_VCHAIN_MAX_IO];
  float *dst[SHLO_VCHAIN_MAX_IO];
  int64_t in_step[SHLO_VCHAIN_MAX_IO], out_step[SHLO_VCHAIN_MAX_IO];
  bool by_col[SHLO_VCHAIN_MAX_IO]; /* moves with the tile's columns */
} tile_walk;

static void tile_walk_init(tile_walk *t, const shlo_vchain *p, int64_t cols,
                           const shlo_tile_in *in, float *scratch) {
  t->p = *p;
  for (int q = 0; q < p->n_out; q++) {
    t->dst[q] = scratch + (size_t)q * SIDE * CHUNK;
    t->out_step[q] = CHUNK * sizeof(float);
    t->p.out_stream[q] = 0; /* read back at once */
  }
  for (int k = 0; k < p->n_in; k++) {
    t->src[k] = in[k].base;
    t->in_step[k] = 0;
    t->by_col[k] = false;
    switch (in[k].kind) {
    case SHLO_TILE_FULL:
      t->in_step[k] = cols * (int64_t)sizeof(float);
      t->by_col[k] = true;
      break;
    case SHLO_TILE_COL: t->by_col[k] = true; break;
    case SHLO_TILE_ROW:
      t->in_step[k] = sizeof(float);
      t->p.in_one[k] = 1;
      break;
    case SHLO_TILE_OUT:
      t->src[k] = t->dst[in[k].out];
      t->in_step[k] = CHUNK * sizeof(float);
      break;
    default: break; /* SHLO_TILE_ONE */
    }
  }
}

/* The program over the tile of rows [0, nr) from column c0 on: its
 * width, at most CHUNK. */
static inline int64_t tile_run(tile_walk *t, int nr, int64_t c0,
                               int64_t cols, void *vwork) {
  int64_t w = cols - c0 < CHUNK ? cols - c0 : CHUNK;
  const float *at[SHLO_VCHAIN_MAX_IO];
  for (int k = 0; k < t->p.n_in; k++)
    at[k] = t->by_col[k] ? t->src[k] + c0 : t->src[k];
  shlo__vchain_run_rows(&t->p, t->dst, t->out_step, at, t->in_step, nr, w,
                        vwork);
  return w;
}

#if defined(__GNUC__) && !defined(__clang__)
/* Rows [0, nr) of the sums, every column: each 16 columns of the tile's
 * 16 rows become one vector of their blocks' trees (shlo_sum_blocks16),
 * added to the rows' running sums; the columns past the last whole
 * block one at a time.  Rows past nr are zeros, their sums thrown
 * away. */
SHLO_CLONES static void fold_rows16(float *acc, int nr, int64_t cols,
                                    tile_walk *t, int result, void *vwork) {
  shlo_v16f a = {0};
  for (int r = 0; r < nr; r++) a[r] = acc[r];
  const float *o = t->dst[result];
  for (int64_t c0 = 0; c0 < cols; c0 += CHUNK) {
    int64_t w = tile_run(t, nr, c0, cols, vwork);
    int64_t i = 0;
    for (; i + SIDE <= w; i += SIDE) {
      shlo_v16f b[SIDE];
#pragma GCC unroll 16
      for (int r = 0; r < SIDE; r++) {
        b[r] = (shlo_v16f){0};
        if (r < nr) memcpy(&b[r], o + (size_t)r * CHUNK + i, sizeof b[r]);
      }
      shlo_v16f v;
      shlo_sum_blocks16(&v, b);
      a += v;
    }
    for (int r = 0; r < nr && i < w; r++) /* (the last tile only) */
      for (int64_t c = i; c < w; c++) a[r] = a[r] + o[(size_t)r * CHUNK + c];
  }
  for (int r = 0; r < nr; r++) acc[r] = a[r];
}
#else
/* Elsewhere each row's sum by itself, in the same schedule: the same
 * bits, without the vectors. */
static void fold_rows16(float *acc, int nr, int64_t cols, tile_walk *t,
                        int result, void *vwork) {
  const float *o = t->dst[result];
  for (int64_t c0 = 0; c0 < cols; c0 += CHUNK) {
    int64_t w = tile_run(t, nr, c0, cols, vwork);
    /* (CHUNK is whole blocks: a row's blocks stay whole) */
    for (int r = 0; r < nr; r++)
      acc[r] = shlo_sum_row_f32(acc[r], o + (size_t)r * CHUNK, w);
  }
}
#endif

void shlo__fold_tiles_add_f32(float *acc, int64_t rows, int64_t cols,
                              const shlo_vchain *p, int result,
                              const shlo_tile_in *in, void *work) {
  float *scratch = work;
  void *vwork = scratch + (size_t)p->n_out * SIDE * CHUNK;
  for (int64_t r0 = 0; r0 < rows; r0 += SIDE) {
    int64_t left = rows - r0;
    int nr = left < SIDE ? (int)left : SIDE;
    shlo_tile_in at[SHLO_VCHAIN_MAX_IO];
    for (int k = 0; k < p->n_in; k++) {
      at[k] = in[k];
      if (in[k].kind == SHLO_TILE_FULL) at[k].base += (size_t)r0 * cols;
      else if (in[k].kind == SHLO_TILE_ROW) at[k].base += r0;
    }
    tile_walk t;
    tile_walk_init(&t, p, cols, at, scratch);
    fold_rows16(acc + r0, nr, cols, &t, result, vwork);
  }
}
