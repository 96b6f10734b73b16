/* SPDX-License-Identifier: Apache-2.0 */
/* f32 GEMM against a packed op(b) (see gemm_prepacked.h). */
#include <string.h>

#include "core/alloc.h"
#include "kernels/gemm_panels.h"
#include "kernels/gemm_prepacked.h"
#include "runtime/pool.h"

#define PP_PANEL 64 /* columns per panel: gemm_panels' widest */
/* A product of at most this many rows is split over the threads by rows,
 * in blocks of PP_ROW_BLOCK, instead of by panels (prepacked_rows). */
#define PP_ROWS_SPLIT_MAX 64
#define PP_ROW_BLOCK 8

static int64_t panel_count(int64_t n) {
  return (n + PP_PANEL - 1) / PP_PANEL;
}

/* Panel `p` of op(b) into dst: k rows of 64 floats, zeros past n. */
static void pack_panel(bool tb, int64_t k, int64_t n, const float *b,
                       int64_t ldb, int64_t p, float *dst) {
  int64_t j0 = p * PP_PANEL;
  int64_t width = n - j0 < PP_PANEL ? n - j0 : PP_PANEL;
  for (int64_t kk = 0; kk < k; kk++) {
    float *row = dst + kk * PP_PANEL;
    if (tb)
      for (int64_t j = 0; j < width; j++) row[j] = b[(j0 + j) * ldb + kk];
    else
      memcpy(row, b + kk * ldb + j0, sizeof(float) * (size_t)width);
    if (width < PP_PANEL)
      memset(row + width, 0, sizeof(float) * (size_t)(PP_PANEL - width));
  }
}

shlo__sgemm_packed *shlo__sgemm_pack(bool tb, int64_t k, int64_t n,
                                     const float *b, int64_t ldb) {
  /* the range the panels take (any m up to 1024 will do) */
  if (!shlo__sgemm_panels_takes(1, n, k)) return NULL;
  int64_t panels = panel_count(n);
  shlo__sgemm_packed *pb = shlo__calloc(1, sizeof *pb);
  if (!pb) return NULL;
  pb->k = k;
  pb->n = n;
  pb->panels =
      shlo__aligned_alloc(sizeof(float) * (size_t)(panels * k * PP_PANEL));
  if (!pb->panels) {
    shlo__free(pb);
    return NULL;
  }
  for (int64_t p = 0; p < panels; p++)
    pack_panel(tb, k, n, b, ldb, p, pb->panels + p * k * PP_PANEL);
  return pb;
}

void shlo__sgemm_packed_free(shlo__sgemm_packed *pb) {
  if (!pb) return;
  shlo__aligned_free(pb->panels);
  shlo__free(pb);
}

typedef struct prepacked_job {
  bool ta;
  int64_t m, lda, ldc;
  const float *a;
  const shlo__sgemm_packed *pb;
  float *c;
  const shlo__gemm_epi *epi; /* or NULL */
} prepacked_job;

/* Panels [lo, hi) of c. */
static void prepacked_panels(void *ctx, int64_t lo, int64_t hi) {
  const prepacked_job *j = ctx;
  int64_t k = j->pb->k, n = j->pb->n;
  /* the epilogue in the blocks' registers, their residual's lines
   * fetched while they sum: applied to each panel after it, the LSTM's
   * recurrent product waited on its residual's rows, 8 KB apart */
  const shlo__gemm_epi none = {0}, *epi = j->epi ? j->epi : &none;
  for (int64_t p = lo; p < hi; p++) {
    int64_t j0 = p * PP_PANEL;
    int64_t width = n - j0 < PP_PANEL ? n - j0 : PP_PANEL;
    /* cannot fail: shlo__sgemm_prepacked checked the ISA and sizes */
    const float *panel = j->pb->panels + p * k * PP_PANEL;
    shlo__gemm_epi e = *epi; /* its bias and residual from column j0 */
    if (e.bias) e.bias += j0;
    if (e.res) e.res += j0;
    (void)shlo__sgemm_panels_packed(j->ta, j->m, k, j->a, j->lda, panel,
                                    width, &e, j->c + j0, j->ldc);
  }
}

/* Rows [lo, hi) * PP_ROW_BLOCK of c, every panel. */
static void prepacked_rows(void *ctx, int64_t lo, int64_t hi) {
  const prepacked_job *j = ctx;
  prepacked_job part = *j;
  int64_t r0 = lo * PP_ROW_BLOCK;
  int64_t r1 = hi * PP_ROW_BLOCK < j->m ? hi * PP_ROW_BLOCK : j->m;
  part.m = r1 - r0;
  part.a = j->ta ? j->a + r0 : j->a + r0 * j->lda;
  part.c = j->c + r0 * j->ldc;
  shlo__gemm_epi e;
  if (j->epi) {
    e = *j->epi;
    if (e.res) e.res += r0 * e.ldres;
    part.epi = &e;
  }
  prepacked_panels(&part, 0, panel_count(j->pb->n));
}

bool shlo__sgemm_prepacked(bool ta, int64_t m, const float *a, int64_t lda,
                           const shlo__sgemm_packed *pb, float *c,
                           int64_t ldc) {
  return shlo__sgemm_prepacked_epi(ta, m, a, lda, pb, c, ldc, NULL);
}

bool shlo__sgemm_prepacked_epi(bool ta, int64_t m, const float *a,
                               int64_t lda, const shlo__sgemm_packed *pb,
                               float *c, int64_t ldc,
                               const shlo__gemm_epi *epi) {
  if (!pb || !shlo__sgemm_panels_takes(m, pb->n, pb->k)) return false;
  prepacked_job job = {ta, m, lda, ldc, a, pb, c, epi};
  int64_t panels = panel_count(pb->n);
  int threads = shlo__pool_threads();
  /* one even share of panels per thread; a lone small product stays on
   * the calling thread */
  int64_t grain = (panels + threads - 1) / threads;
  if (m * pb->n * pb->k < ((int64_t)1 << 18)) grain = panels;
  /* Few rows (a recurrent step's h W: 32 rows): each thread makes whole
   * rows, reading every panel, so that the rows it makes, and what the
   * step's next ops make of them, are the same thread's every step (with
   * the pool's home ranges) instead of half of each row coming from the
   * other core.  lstm 33.3-33.5 -> 32.6-33.1 ms; its step's gates, run
   * on the caller, 21 -> 19 us.  Each element's sum is the same either
   * way (gemm_panels.h). */
  int64_t blocks = (m + PP_ROW_BLOCK - 1) / PP_ROW_BLOCK;
  if (threads > 1 && grain < panels && m <= PP_ROWS_SPLIT_MAX &&
      blocks >= threads) {
    shlo__parallel_for(blocks, (blocks + threads - 1) / threads,
                       prepacked_rows, &job);
    return true;
  }
  shlo__parallel_for(panels, grain, prepacked_panels, &job);
  return true;
}
