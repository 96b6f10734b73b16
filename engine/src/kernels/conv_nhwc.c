/* SPDX-License-Identifier: Apache-2.0 */
/* Channels-last convolution as one GEMM (conv_nhwc.h).
 *
 * The rows of the GEMM are the output positions of every batch element, in
 * the result's own order, so each block of rows is multiplied straight into
 * the result.  Blocks are sized so their im2col rows stay in L2 while the
 * GEMM reads them, and whole runs of blocks go to each thread of the pool,
 * each with its own im2col buffer (or, for the GEMM by panels, its table
 * of pointers to the rows' runs) and a single-threaded GEMM per block. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "kernels/conv_nhwc.h"
#include "kernels/conv_small.h"
#include "kernels/gemm_panels.h"
#include "kernels/multiversion.h"
#include "runtime/pool.h"

#define NHWC_BLOCK_BYTES ((int64_t)512 << 10) /* im2col rows of one block */
#define NHWC_SPLIT_MIN ((int64_t)1 << 20)     /* multiply-adds worth threads */
/* 1x1 windows through the panels up to this many in-features.  At 128
 * the copy of a panel of the kernel (k x 64 floats) stays in L1; the
 * bottleneck's 256 -> 64 layer (k = 256, the copy in L2) lost to OpenBLAS
 * until the panels prefetched the next block's rows of the input
 * (gemm_panels.c), then won: 3.13 ms against 3.38 on one thread, 1.61
 * against 1.88 on two (minimums of 14 and 10 interleaved rounds).  Not
 * measured past 256: OpenBLAS there, as before. */
#define NHWC_DIRECT_PANELS_K 256
/* Results of at least this many bytes that no consumer reads block by
 * block are stored past the caches by the GEMM by panels
 * (shlo__gemm_epi.stream): half the 32 MiB L3 of the machine measured,
 * where a result that size has mostly left it by the time the next step
 * reads it.  The bottleneck's last layer (25.7 MB, residual and ReLU),
 * one thread: 5.2 ms with cached stores, 4.1 streamed, the write no
 * longer reading each line first. */
#define NHWC_STREAM_BYTES ((int64_t)16 << 20)

typedef struct nhwc_job {
  const shlo__conv_nhwc *g;
  const char *lhs, *kernel;
  char *out;
  int64_t pad_lo[SHLO_CONV_NHWC_MAX_SP];
  int64_t rows;  /* GEMM rows: batch x output positions */
  int64_t k;     /* values per im2col row: window x in-features */
  int64_t block; /* rows per block */
  /* blocks from tail_from on have tail rows (the last round, cut finer so
   * that the threads end together; nhwc_tail); none where tail_from is
   * past the last block */
  int64_t tail_from, tail;
  size_t es;     /* bytes per element */
  bool direct;   /* 1x1 window, stride 1, no padding: lhs is the matrix */
  /* f32 where the GEMM by panels takes the blocks: no im2col copy, the
   * rows are gathered through pointers to each window position's
   * in-features, or to zeros (ci of them) on the padding */
  bool gathered;
  const float *zeros;
  const shlo__conv_small *small; /* the small-window sums' setup */
  void *small_out;               /* (its result) */
  bool small_epi; /* the small-window sums take the epilogue themselves */
  shlo__conv_done done;
  void *done_ctx;
  const shlo__gemm_epi *epi; /* f32: on each element before done; or NULL */
  bool stream; /* the result past the caches (NHWC_STREAM_BYTES) */
  atomic_int failed;
} nhwc_job;

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

/* Output position r, counted in the result's order, as its batch element
 * (returned) and spatial index oidx. */
static int64_t nhwc_position(const shlo__conv_nhwc *g, int64_t r,
                             int64_t *oidx) {
  for (int i = g->ns - 1; i >= 0; i--) {
    oidx[i] = r % g->o_sp[i];
    r /= g->o_sp[i];
  }
  return r;
}

/* (*b, oidx) moved on to the next output position. */
static void nhwc_next(const shlo__conv_nhwc *g, int64_t *b, int64_t *oidx) {
  for (int i = g->ns - 1; i >= 0; i--) {
    if (++oidx[i] < g->o_sp[i]) return;
    oidx[i] = 0;
  }
  (*b)++;
}

/* Along the innermost window dimension, starting at input index q0 with
 * dilation dl: the first window index [*lo] whose input is inside [0, in)
 * and the end [*hi] of that valid range (lo <= hi <= kl). */
static void nhwc_valid_range(int64_t q0, int64_t dl, int64_t kl, int64_t in,
                             int64_t *lo, int64_t *hi) {
  int64_t a = 0, b = 0; /* (no divisions undilated: this runs per row) */
  if (q0 < 0) a = dl == 1 ? -q0 : (-q0 + dl - 1) / dl;
  if (q0 < in) b = dl == 1 ? in - q0 : (in - 1 - q0) / dl + 1;
  *lo = min64(a, kl);
  *hi = max64(min64(b, kl), *lo);
}

/* The im2col row of output position oidx of batch element b into x: per
 * window position the in-features of the lhs element under it, or zeros
 * where it falls on padding.  The innermost window dimension is one copy
 * when undilated. */
static void nhwc_row(const nhwc_job *j, int64_t b, const int64_t *oidx,
                     char *x) {
  const shlo__conv_nhwc *g = j->g;
  int last = g->ns - 1;
  size_t run = (size_t)g->ci * j->es; /* one lhs element's features */
  /* (not `= {0}`: clearing all SHLO_MAX_RANK entries per row shows up) */
  int64_t base[SHLO_CONV_NHWC_MAX_SP], kidx[SHLO_CONV_NHWC_MAX_SP];
  int64_t outer = 1;
  for (int i = 0; i <= last; i++) {
    base[i] = oidx[i] * g->stride[i] - j->pad_lo[i];
    kidx[i] = 0;
    if (i < last) outer *= g->k_sp[i];
  }
  int64_t kl = g->k_sp[last], dl = g->rhs_dil[last], in = g->in_sp[last];
  int64_t lo, hi;
  nhwc_valid_range(base[last], dl, kl, in, &lo, &hi);
  for (int64_t w = 0; w < outer; w++, x += (size_t)kl * run) {
    bool inside = true;
    int64_t off = b; /* lhs element index of (b, q..., 0) */
    for (int i = 0; i < last; i++) {
      int64_t q = base[i] + kidx[i] * g->rhs_dil[i];
      inside = inside && q >= 0 && q < g->in_sp[i];
      off = off * g->in_sp[i] + q;
    }
    for (int i = last - 1; i >= 0; i--) {
      if (++kidx[i] < g->k_sp[i]) break;
      kidx[i] = 0;
    }
    if (!inside || lo == hi) {
      memset(x, 0, (size_t)kl * run);
      continue;
    }
    int64_t e0 = off * in + base[last]; /* may be before the lhs */
    /* away from the edges there is nothing to zero: no call for it */
    if (lo > 0) memset(x, 0, (size_t)lo * run);
    if (dl == 1)
      memcpy(x + (size_t)lo * run, j->lhs + (size_t)(e0 + lo) * run,
             (size_t)(hi - lo) * run);
    else
      for (int64_t k = lo; k < hi; k++)
        memcpy(x + (size_t)k * run, j->lhs + (size_t)(e0 + k * dl) * run, run);
    if (hi < kl) memset(x + (size_t)hi * run, 0, (size_t)(kl - hi) * run);
  }
}

/* im2col rows r0 .. r0 + rows - 1 into x. */
static void nhwc_fill(const nhwc_job *j, int64_t r0, int64_t rows, char *x) {
  int64_t oidx[SHLO_CONV_NHWC_MAX_SP], b = nhwc_position(j->g, r0, oidx);
  for (int64_t r = 0; r < rows; r++, nhwc_next(j->g, &b, oidx))
    nhwc_row(j, b, oidx, x + (size_t)(r * j->k) * j->es);
}

/* The window's shape for the pointer gathers: per window position w, its
 * offset in lhs elements from the window's first element (rel, for a
 * window wholly inside the lhs) and its index along each dimension (kq);
 * per dimension, how far the window reaches (reach). */
typedef struct nhwc_window {
  int64_t windows;
  int64_t *rel, *kq; /* windows, windows x ns */
  int64_t reach[SHLO_CONV_NHWC_MAX_SP];
} nhwc_window;

static void nhwc_window_shape(const shlo__conv_nhwc *g, nhwc_window *wn) {
  int ns = g->ns;
  int64_t kidx[SHLO_CONV_NHWC_MAX_SP];
  for (int i = 0; i < ns; i++) {
    kidx[i] = 0;
    wn->reach[i] = (g->k_sp[i] - 1) * g->rhs_dil[i];
  }
  for (int64_t w = 0; w < wn->windows; w++) {
    int64_t off = 0;
    for (int i = 0; i < ns; i++) {
      wn->kq[w * ns + i] = kidx[i] * g->rhs_dil[i];
      off = off * g->in_sp[i] + wn->kq[w * ns + i];
    }
    wn->rel[w] = off * g->ci;
    for (int i = ns - 1; i >= 0; i--) {
      if (++kidx[i] < g->k_sp[i]) break;
      kidx[i] = 0;
    }
  }
}

/* For rows r0 .. r0 + rows - 1, a pointer per window position (in window
 * order) to the in-features under it, or to zeros on the padding: the
 * im2col rows, not copied.  A window wholly inside the lhs (most of them)
 * is its first element's offset plus the fixed ones in wn->rel; only
 * those at the edges check each window position. */
static void nhwc_gather(const nhwc_job *j, const nhwc_window *wn, int64_t r0,
                        int64_t rows, const float **ptrs) {
  const shlo__conv_nhwc *g = j->g;
  const float *lhs = (const float *)j->lhs;
  int ns = g->ns;
  int64_t windows = wn->windows;
  int64_t oidx[SHLO_CONV_NHWC_MAX_SP], b = nhwc_position(g, r0, oidx);
  for (int64_t r = 0; r < rows; r++, ptrs += windows, nhwc_next(g, &b, oidx)) {
    int64_t base[SHLO_CONV_NHWC_MAX_SP], first = b;
    bool inside = true;
    for (int i = 0; i < ns; i++) {
      base[i] = oidx[i] * g->stride[i] - j->pad_lo[i];
      inside = inside && base[i] >= 0 && base[i] + wn->reach[i] < g->in_sp[i];
      first = first * g->in_sp[i] + base[i];
    }
    if (inside) {
      const float *at = lhs + first * g->ci;
      for (int64_t w = 0; w < windows; w++) ptrs[w] = at + wn->rel[w];
      continue;
    }
    for (int64_t w = 0; w < windows; w++) {
      bool in = true;
      int64_t off = b;
      for (int i = 0; i < ns; i++) {
        int64_t q = base[i] + wn->kq[w * ns + i];
        in = in && q >= 0 && q < g->in_sp[i];
        off = off * g->in_sp[i] + q;
      }
      ptrs[w] = in ? lhs + off * g->ci : j->zeros;
    }
  }
}

/* j->epi for the block of rows from r0: its residual rows moved there
 * and j->stream set (in e), or j->epi itself where neither applies. */
static const shlo__gemm_epi *nhwc_block_epi(const nhwc_job *j, int64_t r0,
                                            shlo__gemm_epi *e) {
  if (!j->stream && (!j->epi || !j->epi->res)) return j->epi;
  *e = j->epi ? *j->epi : (shlo__gemm_epi){0};
  e->stream = j->stream;
  if (e->res) e->res += r0 * e->ldres;
  return e;
}

/* Block blk's first row (returned) and its rows (*rows). */
static int64_t nhwc_block_span(const nhwc_job *j, int64_t blk,
                               int64_t *rows) {
  int64_t r0 = min64(blk, j->tail_from) * j->block;
  if (blk > j->tail_from) r0 += (blk - j->tail_from) * j->tail;
  *rows = min64(blk < j->tail_from ? j->block : j->tail, j->rows - r0);
  return r0;
}

/* Blocks [lo, hi) by the GEMM by panels on gathered rows. */
static void nhwc_gathered_blocks(nhwc_job *j, int64_t lo, int64_t hi) {
  const shlo__conv_nhwc *g = j->g;
  int64_t windows = j->k / g->ci;
  nhwc_window wn = {.windows = windows};
  const float **ptrs = shlo__malloc(sizeof *ptrs * (size_t)(j->block * windows));
  wn.rel = shlo__malloc(sizeof *wn.rel * (size_t)windows * (size_t)(1 + g->ns));
  if (!ptrs || !wn.rel) {
    atomic_store(&j->failed, 1);
    shlo__free(ptrs);
    shlo__free(wn.rel);
    return;
  }
  wn.kq = wn.rel + windows;
  nhwc_window_shape(g, &wn);
  for (int64_t blk = lo; blk < hi; blk++) {
    int64_t rows, r0 = nhwc_block_span(j, blk, &rows);
    nhwc_gather(j, &wn, r0, rows, ptrs);
    float *out = (float *)j->out + r0 * g->co;
    shlo__gemm_epi e;
    if (!shlo__sgemm_panels_gathered_epi(rows, g->co, windows, g->ci, ptrs,
                                         (const float *)j->kernel, g->co, out,
                                         g->co, nhwc_block_epi(j, r0, &e))) {
      atomic_store(&j->failed, 1); /* out of memory for its panel */
      break;
    }
    if (j->done) j->done(j->done_ctx, r0 * g->co, (r0 + rows) * g->co);
  }
  shlo__free(ptrs);
  shlo__free(wn.rel);
}

/* Blocks [lo, hi): im2col (unless direct), then one GEMM into the result. */
static void nhwc_blocks(void *ctx, int64_t lo, int64_t hi) {
  nhwc_job *j = ctx;
  const shlo__conv_nhwc *g = j->g;
  if (j->gathered) {
    nhwc_gathered_blocks(j, lo, hi);
    return;
  }
  char *x = NULL;
  if (!j->direct && !(x = shlo__malloc((size_t)(j->block * j->k) * j->es))) {
    atomic_store(&j->failed, 1);
    return;
  }
  for (int64_t blk = lo; blk < hi; blk++) {
    int64_t r0 = blk * j->block, rows = min64(j->block, j->rows - r0);
    const char *a = j->lhs + (size_t)(r0 * j->k) * j->es;
    if (!j->direct) {
      nhwc_fill(j, r0, rows, x);
      a = x;
    }
    shlo__la_gemm_serial(g->dom, false, false, rows, g->co, j->k, a, j->k,
                         j->kernel, g->co,
                         j->out + (size_t)(r0 * g->co) * j->es, g->co);
    shlo__gemm_epi e;
    shlo__gemm_epi_apply(nhwc_block_epi(j, r0, &e), rows, g->co,
                         (float *)j->out + r0 * g->co, g->co);
    if (j->done) j->done(j->done_ctx, r0 * g->co, (r0 + rows) * g->co);
  }
  shlo__free(x);
}

bool shlo__conv_nhwc_small(const shlo__conv_nhwc *g) {
  int64_t k = g->ci;
  for (int i = 0; i < g->ns; i++) k *= g->k_sp[i];
  /* (an empty window or no in-features: the GEMM's zeros) */
  return g->dom == LA_F32 && k > 0 && k <= SHLO_CONV_SMALL_K &&
         g->co <= SHLO_CONV_SMALL_CO;
}

#define NHWC_SMALL_PIECE 256 /* rows between calls of done: in L1 or L2 */

static void nhwc_small_blocks(void *ctx, int64_t lo, int64_t hi) {
  nhwc_job *j = ctx;
  int64_t co = j->g->co;
  int64_t end = min64(hi * j->block, j->rows);
  for (int64_t r0 = lo * j->block; r0 < end; r0 += NHWC_SMALL_PIECE) {
    int64_t rows = min64(NHWC_SMALL_PIECE, end - r0);
    shlo__conv_small_rows(j->small, r0, rows);
    shlo__gemm_epi e;
    if (!j->small_epi)
      shlo__gemm_epi_apply(nhwc_block_epi(j, r0, &e), rows, co,
                           (float *)j->small_out + r0 * co, co);
    if (j->done) j->done(j->done_ctx, r0 * co, (r0 + rows) * co);
  }
}

/* Whether the lhs itself is the im2col matrix: every output position reads
 * exactly one lhs element, its own. */
static bool nhwc_direct(const shlo__conv_nhwc *g, const int64_t *pad) {
  for (int i = 0; i < g->ns; i++)
    if (g->k_sp[i] != 1 || g->stride[i] != 1 || pad[2 * i] != 0 ||
        pad[2 * i + 1] != 0)
      return false;
  return true;
}

/* j->block for an f32 1x1 window, whose lhs is the GEMM's a: blocks
 * that stay in L2 like the im2col ones, so that an epilogue goes over each
 * in cache.  Through the panels for few in-features (the rows read in
 * place, one pointer each) where they take the product: true.  Else
 * OpenBLAS, in such blocks where there is an epilogue, in a thread's share
 * where there is none (as before it). */
static bool nhwc_direct_blocks(nhwc_job *j) {
  const shlo__conv_nhwc *g = j->g;
  int64_t b = min64(j->block, max64(1, NHWC_BLOCK_BYTES /
                                           max64(1, j->k * (int64_t)j->es)));
  if (j->k <= NHWC_DIRECT_PANELS_K && shlo__sgemm_panels_takes(b, g->co, j->k)) {
    j->block = b;
    return true;
  }
  if (shlo__gemm_epi_any(j->epi)) j->block = b;
  return false;
}

/* j->block for the GEMM by panels: as many blocks as the L2 bound asks
 * (the block it holds), rounded up to a multiple of the threads, all of
 * one size and that of whole blocks of the GEMM's rows (6, or 12 for up
 * to 32 out-features, gemm_panels.h), whose last rows would otherwise go
 * one or two at a time with too few sums in flight.  Blocks of 227 rows
 * taken three at a time left one of two threads 30% more of cnn's third
 * layer than the other. */
static void nhwc_balance(nhwc_job *j, int threads) {
  int64_t h = j->g->co <= 32 ? 12 : 6;
  int64_t want = (j->rows + j->block - 1) / j->block;
  want = (want + threads - 1) / threads * threads;
  int64_t even = (j->rows + want - 1) / want;
  even = (even + h - 1) / h * h;
  if (shlo__sgemm_panels_takes(even, j->g->co, j->k)) j->block = even;
  else if (j->block > h) j->block -= j->block % h;
}

#define NHWC_TAIL_PIECES 4 /* per thread, in the last round of blocks */

/* The last round of j's blocks (one per thread) cut into NHWC_TAIL_PIECES
 * pieces per thread (whole blocks of the GEMM's rows, h): the threads take
 * blocks as they come, and one that runs slower (another process, its
 * share of the memory) then waits for at most a piece, not a block.  cnn's
 * second and third layers have 5 and 10 blocks per thread, about 60 us
 * each on one thread; timed per thread on two, their busy times differed
 * by 42 us (355 against 313) for nearly equal rows.  The panel of the
 * kernel each piece copies again costs about 1% of a layer.  blocks is
 * j's count of blocks until now; returns the new count. */
static int64_t nhwc_tail(nhwc_job *j, int threads, int64_t blocks) {
  int64_t h = j->g->co <= 32 ? 12 : 6;
  if (threads < 2 || blocks < threads) return blocks;
  int64_t from = blocks - threads, left = j->rows - from * j->block;
  int64_t pieces = (int64_t)threads * NHWC_TAIL_PIECES;
  int64_t tail = (left + pieces - 1) / pieces;
  tail = (tail + h - 1) / h * h;
  if (tail >= j->block || !shlo__sgemm_panels_takes(tail, j->g->co, j->k))
    return blocks;
  j->tail_from = from;
  j->tail = tail;
  return from + (left + tail - 1) / tail;
}

bool shlo__conv_nhwc_run(const shlo__conv_nhwc *g, const void *lhs,
                         const void *kernel, const int64_t *pad, void *out,
                         shlo__conv_done done, void *ctx) {
  return shlo__conv_nhwc_run_epi(g, lhs, kernel, pad, out, NULL, done, ctx);
}

bool shlo__conv_nhwc_run_epi(const shlo__conv_nhwc *g, const void *lhs,
                             const void *kernel, const int64_t *pad, void *out,
                             const shlo__gemm_epi *epi, shlo__conv_done done,
                             void *ctx) {
  if (epi && g->dom != LA_F32) return false; /* (a caller's slip) */
  nhwc_job j = {.g = g, .lhs = lhs, .kernel = kernel, .out = out,
                .done = done, .done_ctx = ctx, .epi = epi, .small_out = out};
  j.es = shlo__la_dom_size(g->dom);
  j.direct = nhwc_direct(g, pad);
  j.rows = g->n;
  j.k = g->ci;
  for (int i = 0; i < g->ns; i++) {
    j.pad_lo[i] = pad[2 * i];
    j.rows *= g->o_sp[i];
    j.k *= g->k_sp[i];
  }
  if (j.rows == 0 || g->co == 0) return true;
  j.tail_from = INT64_MAX; /* no tail unless nhwc_tail cuts one */
  /* (no done: nothing reads the blocks as they come) */
  j.stream = !done && g->dom == LA_F32 &&
             j.rows * g->co >= NHWC_STREAM_BYTES / (int64_t)sizeof(float);
  int threads = shlo__pool_threads();
  /* enough blocks for every thread, each small enough to stay in L2 */
  int64_t per_thread = (j.rows + threads - 1) / threads;
  j.block = j.direct ? per_thread
                     : min64(per_thread,
                             max64(1, NHWC_BLOCK_BYTES /
                                          max64(1, j.k * (int64_t)j.es)));
  bool small = shlo__conv_nhwc_small(g);
  /* the small-window sums have no rows to keep in L2: blocks of one
   * piece, so that the threads share them evenly (blocks of 4854 rows
   * left one thread a third more of cnn's first layer than the other) */
  if (small) j.block = min64(per_thread, NHWC_SMALL_PIECE);
  int64_t blocks = (j.rows + j.block - 1) / j.block;
  float *zeros = NULL;
  shlo__conv_small sm;
  if (small) {
    shlo__conv_small_init(&sm, g, lhs, kernel, pad, out);
    j.small = &sm;
    /* a bias and a ReLU in the sums' registers, before they are stored */
    if (epi && !epi->scaled && !epi->res) {
      sm.bias = epi->bias;
      sm.relu = epi->relu;
      j.small_epi = true;
    }
  }
  bool direct_panels = !small && j.direct && g->dom == LA_F32 &&
                       nhwc_direct_blocks(&j);
  blocks = (j.rows + j.block - 1) / j.block;
  if (!small && (!j.direct || direct_panels) && g->dom == LA_F32 &&
      g->ci > 0 &&
      shlo__sgemm_panels_takes(j.block, g->co, j.k) &&
      (zeros = shlo__calloc((size_t)g->ci, sizeof(float)))) {
    j.gathered = true;
    j.zeros = zeros;
    nhwc_balance(&j, threads);
    blocks = (j.rows + j.block - 1) / j.block;
  }
  /* a few runs of blocks per thread, each allocating one buffer: a thread
   * held up by another process leaves little for the rest to wait on;
   * small convolutions stay on the calling thread.  The GEMM by panels'
   * blocks are few and even (nhwc_balance): one at a time */
  int64_t grain = (blocks + 4 * threads - 1) / (4 * threads);
  /* one piece at a time where nothing is allocated per run (a run of the
   * small-window sums is 256 rows, a few microseconds: the threads end
   * within one of each other) */
  if (j.gathered || small) grain = 1;
  bool split = j.rows * j.k * g->co >= NHWC_SPLIT_MIN;
  if (j.gathered && split) blocks = nhwc_tail(&j, threads, blocks);
  if (!split) grain = blocks;
  shlo__parallel_for(blocks, grain, small ? nhwc_small_blocks : nhwc_blocks,
                     &j);
  shlo__free(zeros);
  return !atomic_load(&j.failed);
}
