/* SPDX-License-Identifier: Apache-2.0 */
/* Sums along rows of a lane program's value, on transposed tiles
 * (fold_tiles.h). */
#include <stdbool.h>
#include <string.h>

#include "kernels/fold_tiles.h"
#include "kernels/multiversion.h"

#define SIDE 16
#define TILE (SIDE * SIDE) /* floats: column c at 16 * c */
#define GROUPS 4           /* tiles of 16 rows side by side */

/* Floats of the kept tiles of 64 rows: a 64 x 16 tile per 16 columns. */
static size_t kept_chunk(int64_t cols) {
  return (size_t)(cols + SIDE - 1) / SIDE * GROUPS * TILE;
}

size_t shlo__fold_tiles_kept_bytes(int64_t rows, int64_t cols) {
  int64_t chunks = (rows + GROUPS * SIDE - 1) / (GROUPS * SIDE);
  return (size_t)chunks * kept_chunk(cols) * sizeof(float);
}

/* Tiles of columns a program call takes when no input is loaded into a
 * buffer tile by tile: its decoding and calls paid once for 4 tiles, its
 * outputs 4 tiles of scratch (64 KB of L1/L2 in all for two). */
#define BATCH 4

size_t shlo__fold_tiles_work_bytes(const shlo_vchain *p) {
  return (size_t)(p->n_in + BATCH * p->n_out) * GROUPS * TILE *
             sizeof(float) +
         shlo__vchain_work_bytes(p);
}

#if defined(__GNUC__) && !defined(__clang__)
#include "kernels/sum_tree.h"

/* Columns [i, i + 16) of 16 rows of the array at base (rows of cols),
 * row r its row[r], as 16 column vectors in t. */
static inline __attribute__((always_inline)) void
tile_load(shlo_v16f *t, const float *base, int64_t cols, const int *row,
          int64_t i) {
#pragma GCC unroll 16
  for (int r = 0; r < SIDE; r++)
    memcpy(&t[r], base + (size_t)row[r] * cols + i, sizeof t[r]);
  SHLO_TRANSPOSE16(t);
}

/* Columns [i, i + w) of those rows into dst as columns; columns past w
 * are zeros (columns whose sums are thrown away). */
static inline __attribute__((always_inline)) void
tile_columns(float *dst, const float *base, int64_t cols, const int *row,
             int64_t i, int w) {
  if (w == SIDE) {
    shlo_v16f t[SIDE];
    tile_load(t, base, cols, row, i);
    memcpy(dst, t, sizeof t);
    return;
  }
  for (int c = 0; c < SIDE; c++)
    for (int r = 0; r < SIDE; r++)
      dst[c * SIDE + r] = c < w ? base[(size_t)row[r] * cols + i + c] : 0;
}

/* Rows [0, nr) (nr <= 64) of the sums, every column: four groups of 16
 * rows side by side, each tile of whole columns added as one block's tree
 * (sum_tree.h), the columns past the last whole tile one at a time; rows
 * past nr repeat row nr - 1 and their sums are thrown away. */
SHLO_CLONES static void fold_groups(float *acc, int nr, int64_t cols,
                                    const shlo_vchain *p, int result,
                                    const shlo_tile_in *in, float *bufs,
                                    void *vwork) {
  enum { N = GROUPS * TILE };
  float *ibuf = bufs, *obuf = bufs + (size_t)p->n_in * N;
  const float *src[SHLO_VCHAIN_MAX_IO];
  float *dst[SHLO_VCHAIN_MAX_IO];
  /* bytes from one tile's operand to the next's, when a call takes
   * several tiles: kept tiles and the outputs (read back or not) move,
   * the buffers filled once stay */
  int64_t in_step[SHLO_VCHAIN_MAX_IO], out_step[SHLO_VCHAIN_MAX_IO];
  int batch = BATCH;
  int row[GROUPS * SIDE];
  for (int r = 0; r < GROUPS * SIDE; r++) row[r] = r < nr ? r : nr - 1;
  for (int q = 0; q < p->n_out; q++) {
    dst[q] = obuf + (size_t)q * BATCH * N;
    out_step[q] = N * sizeof(float);
  }
  for (int k = 0; k < p->n_in; k++) {
    float *b = ibuf + (size_t)k * N;
    src[k] = b;
    bool moves = in[k].kind == SHLO_TILE_KEPT || in[k].kind == SHLO_TILE_OUT;
    in_step[k] = moves ? N * (int64_t)sizeof(float) : 0;
    if (in[k].kind == SHLO_TILE_FULL || in[k].kind == SHLO_TILE_COL)
      batch = 1; /* loaded tile by tile */
    if (in[k].kind == SHLO_TILE_ONE || in[k].kind == SHLO_TILE_KEPT)
      src[k] = in[k].base;
    else if (in[k].kind == SHLO_TILE_OUT) src[k] = dst[in[k].out];
    else if (in[k].kind == SHLO_TILE_ROW) /* the same every tile */
      for (int g = 0; g < GROUPS; g++) {
        shlo_v16f v;
        for (int r = 0; r < SIDE; r++) v[r] = in[k].base[row[g * SIDE + r]];
        for (int c = 0; c < SIDE; c++)
          memcpy(b + g * TILE + c * SIDE, &v, sizeof v);
      }
  }
  shlo_v16f a[GROUPS];
  for (int g = 0; g < GROUPS; g++)
    for (int r = 0; r < SIDE; r++) a[g][r] = acc[row[g * SIDE + r]];
  for (int64_t i = 0; i < cols;) {
    int64_t left = (cols - i + SIDE - 1) / SIDE;
    int t = left < batch ? (int)left : batch;
    for (int k = 0; k < p->n_in; k++) {
      float *b = ibuf + (size_t)k * N;
      int w = cols - i < SIDE ? (int)(cols - i) : SIDE; /* t is 1 here */
      if (in[k].kind == SHLO_TILE_FULL)
        for (int g = 0; g < GROUPS; g++)
          tile_columns(b + g * TILE, in[k].base, cols, row + g * SIDE, i, w);
      else if (in[k].kind == SHLO_TILE_KEPT) /* already columns */
        src[k] = in[k].base + (size_t)(i / SIDE) * N;
      else if (in[k].kind == SHLO_TILE_COL)
        for (int c = 0; c < SIDE; c++) {
          shlo_v16f v = {0};
          v += c < w ? in[k].base[i + c] : 0;
          for (int g = 0; g < GROUPS; g++)
            memcpy(b + g * TILE + c * SIDE, &v, sizeof v);
        }
    }
    shlo__vchain_run_rows(p, dst, out_step, src, in_step, t, N, vwork);
    for (int j = 0; j < t; j++, i += SIDE) {
      const float *o = dst[result] + (size_t)j * N;
      int w = cols - i < SIDE ? (int)(cols - i) : SIDE;
      if (w == SIDE)
#pragma GCC unroll 4
        for (int g = 0; g < GROUPS; g++) {
          shlo_v16f c[SIDE];
          memcpy(c, o + g * TILE, sizeof c);
          shlo_v16f v;
          shlo_sum_columns16(&v, c);
          a[g] += v;
        }
      else
        for (int c = 0; c < w; c++)
          for (int g = 0; g < GROUPS; g++) {
            shlo_v16f v;
            memcpy(&v, o + g * TILE + c * SIDE, sizeof v);
            a[g] += v;
          }
    }
  }
  for (int r = 0; r < nr; r++) acc[r] = a[r / SIDE][r % SIDE];
}

void shlo__fold_tiles_add_f32(float *acc, int64_t rows, int64_t cols,
                              const shlo_vchain *p, int result,
                              const shlo_tile_in *in, void *work) {
  float *bufs = work;
  void *vwork = bufs + (size_t)(p->n_in + BATCH * p->n_out) * GROUPS * TILE;
  for (int64_t r0 = 0; r0 < rows; r0 += GROUPS * SIDE) {
    int64_t left = rows - r0;
    int nr = left < GROUPS * SIDE ? (int)left : GROUPS * SIDE;
    shlo_tile_in at[SHLO_VCHAIN_MAX_IO];
    for (int k = 0; k < p->n_in; k++) {
      at[k] = in[k];
      if (in[k].kind == SHLO_TILE_FULL) at[k].base += (size_t)r0 * cols;
      else if (in[k].kind == SHLO_TILE_KEPT)
        at[k].base += (size_t)(r0 / (GROUPS * SIDE)) * kept_chunk(cols);
      else if (in[k].kind == SHLO_TILE_ROW) at[k].base += r0;
    }
    fold_groups(acc + r0, nr, cols, p, result, at, bufs, vwork);
  }
}

/* The sums of rows [0, nr) (nr <= 64) of the array at base, and their
 * tiles kept as columns at keep, in fold_groups' order.  A group of 16
 * rows at a time: 16 streams from memory at once, where 64 would be more
 * than the prefetchers follow. */
SHLO_CLONES static void keep_groups(float *acc, int nr, int64_t cols,
                                    const float *base, float *keep) {
  enum { N = GROUPS * TILE };
  int row[GROUPS * SIDE];
  for (int r = 0; r < GROUPS * SIDE; r++) row[r] = r < nr ? r : nr - 1;
  /* every group, rows past nr too: fold_groups reads their tiles (and
   * throws their sums away) */
  for (int g = 0; g < GROUPS; g++) {
    const int *gr = row + g * SIDE;
    shlo_v16f a;
    for (int r = 0; r < SIDE; r++) a[r] = acc[gr[r]];
    float *kt = keep + g * TILE;
    int64_t i = 0;
    for (; i + SIDE <= cols; i += SIDE, kt += N) {
      shlo_v16f t[SIDE];
      tile_load(t, base, cols, gr, i);
      memcpy(kt, t, sizeof t);
      shlo_v16f v;
      shlo_sum_columns16(&v, t);
      a += v;
    }
    if (i < cols) { /* the last columns, a tile padded with zeros */
      int w = (int)(cols - i);
      tile_columns(kt, base, cols, gr, i, w);
      for (int c = 0; c < w; c++) {
        shlo_v16f v;
        memcpy(&v, kt + c * SIDE, sizeof v);
        a += v;
      }
    }
    for (int r = 0; r < SIDE && g * SIDE + r < nr; r++) acc[g * SIDE + r] = a[r];
  }
}

void shlo__fold_tiles_keep_f32(float *acc, int64_t rows, int64_t cols,
                               const float *base, float *keep) {
  for (int64_t r0 = 0; r0 < rows; r0 += GROUPS * SIDE) {
    int64_t left = rows - r0;
    keep_groups(acc + r0, left < GROUPS * SIDE ? (int)left : GROUPS * SIDE,
                cols, base + (size_t)r0 * cols,
                keep + (size_t)(r0 / (GROUPS * SIDE)) * kept_chunk(cols));
  }
}

#else
#include "kernels/sum_tree.h"
/* Elsewhere a row at a time: the program over the row, then its sum in
 * the same schedule.  The same bits, without the vectors. */

/* Where element (r, c) of kept rows lies (the layout keep_groups writes). */
static float *kept_at(const float *keep, int64_t cols, int64_t r, int64_t c) {
  int64_t rr = r % (GROUPS * SIDE);
  return (float *)keep + (size_t)(r / (GROUPS * SIDE)) * kept_chunk(cols) +
         (size_t)(c / SIDE) * GROUPS * TILE + (size_t)(rr / SIDE) * TILE +
         (size_t)(c % SIDE) * SIDE + (size_t)(rr % SIDE);
}

void shlo__fold_tiles_keep_f32(float *acc, int64_t rows, int64_t cols,
                               const float *base, float *keep) {
  for (int64_t r = 0; r < rows; r++)
    for (int64_t c = 0; c < cols; c++) {
      float v = base[r * cols + c];
      *kept_at(keep, cols, r, c) = v;
    }
  for (int64_t r = 0; r < rows; r++)
    acc[r] = shlo_sum_row_f32(acc[r], base + r * cols, cols);
}

void shlo__fold_tiles_add_f32(float *acc, int64_t rows, int64_t cols,
                              const shlo_vchain *p, int result,
                              const shlo_tile_in *in, void *work) {
  float *bufs = work;
  void *vwork = bufs + (size_t)(p->n_in + p->n_out) * TILE;
  const float *src[SHLO_VCHAIN_MAX_IO];
  float *dst[SHLO_VCHAIN_MAX_IO];
  for (int q = 0; q < p->n_out; q++) dst[q] = bufs + (size_t)(p->n_in + q) * TILE;
  for (int64_t r = 0; r < rows; r++)
    for (int64_t i = 0; i < cols; i += TILE) {
      int64_t w = cols - i < TILE ? cols - i : TILE;
      for (int k = 0; k < p->n_in; k++) {
        float *b = bufs + (size_t)k * TILE;
        src[k] = b;
        switch (in[k].kind) {
        case SHLO_TILE_FULL: memcpy(b, in[k].base + r * cols + i, w * sizeof *b); break;
        case SHLO_TILE_COL: memcpy(b, in[k].base + i, w * sizeof *b); break;
        case SHLO_TILE_ROW: for (int64_t c = 0; c < w; c++) b[c] = in[k].base[r]; break;
        case SHLO_TILE_ONE: src[k] = in[k].base; break;
        case SHLO_TILE_KEPT:
          for (int64_t c = 0; c < w; c++) b[c] = *kept_at(in[k].base, cols, r, i + c);
          break;
        default: src[k] = dst[in[k].out]; break;
        }
      }
      shlo__vchain_run(p, dst, src, w, vwork);
      /* (TILE is whole blocks: the row's blocks stay whole) */
      acc[r] = shlo_sum_row_f32(acc[r], dst[result], w);
    }
}
#endif
