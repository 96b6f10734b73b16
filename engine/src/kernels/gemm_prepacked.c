/* SPDX-License-Identifier: Apache-2.0 */
/* f32 GEMM against a packed op(b) (see gemm_prepacked.h). */
#include <string.h>

#include "core/alloc.h"
#include "kernels/gemm_panels.h"
#include "kernels/gemm_prepacked.h"
#include "runtime/pool.h"

#define PP_PANEL 64 /* columns per panel: gemm_panels' widest */

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
  shlo__parallel_for(panels, grain, prepacked_panels, &job);
  return true;
}
