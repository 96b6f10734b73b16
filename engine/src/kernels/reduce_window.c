/* SPDX-License-Identifier: Apache-2.0 */
/* stablehlo.reduce_window and stablehlo.select_and_scatter: reductions
 * over sliding windows.
 *
 * reduce_window (spec: reduce_window): each result element folds its
 * window of the padded, base-dilated inputs, starting from init_values, in
 * row-major window order: acc = body(acc, x).  Padding and the holes of
 * base dilation hold the init values and are folded like any element (as
 * the spec's pad-then-reduce does); negative padding crops.  The window
 * geometry is fixed at compile time; a window position maps to an input
 * index with p = o * stride + w * window_dilation - pad_lo, valid when
 * 0 <= p < dilated size and p % base_dilation == 0.  A body that is one
 * known op (reduce_int.h) runs natively: the innermost window row is folded
 * with a strided loop when it lies inside the input, with an offset list
 * otherwise.
 *
 * select_and_scatter (spec: select_and_scatter): for every source element,
 * its window over the operand (padding positions are skipped) picks one
 * element: the first valid one, replaced by a later candidate c whenever
 * select(current, c) is false; then result[picked] =
 * scatter(result[picked], source element), in row-major source order, the
 * result starting as init_value everywhere.  A select region that is one
 * compare and a scatter region that is one known op run natively. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/value.h"
#include "core/alloc.h"
#include "runtime/pool.h"
#include "kernels/reduce_int.h"
#include "kernels/stream_store.h"

/* Window geometry shared by both ops. */
typedef struct win_geom {
  int rank;                         /* >= 1 (rank 0 runs as [1]) */
  int64_t in_dims[SHLO_MAX_RANK], in_str[SHLO_MAX_RANK];
  int64_t out_dims[SHLO_MAX_RANK];
  int64_t win[SHLO_MAX_RANK], stride[SHLO_MAX_RANK];
  int64_t bdil[SHLO_MAX_RANK], wdil[SHLO_MAX_RANK], lo[SHLO_MAX_RANK];
  int64_t dil_size[SHLO_MAX_RANK];  /* (in_dim - 1) * bdil + 1, or 0 */
  int64_t out_numel, win_numel;
} win_geom;

/* Read an attribute of `rank` values (default `def` when absent). */
static shlo_status attr_vec(shlo_compiler *cc, const shlo_op *op,
                            const char *name, int rank, int64_t def,
                            bool required, int64_t *out) {
  const shlo_attr *a = shlo_op_attr(op, name);
  if (!a) {
    if (required)
      return shlo__cc_fail(cc, op, SHLO_EVERIFY, "needs '%s'", name);
    for (int i = 0; i < rank; i++) out[i] = def;
    return SHLO_OK;
  }
  int n = shlo_attr_i64s(a, out, SHLO_MAX_RANK);
  if (n != rank)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "'%s' must have %d values (the operand rank)", name,
                        rank);
  return SHLO_OK;
}

/* Fill g from the attributes; in_type is the (first) input.  select_and_
 * scatter has no dilations (with_dilations false). */
static shlo_status geom_init(shlo_compiler *cc, const shlo_op *op,
                             const shlo_type *in_type, bool with_dilations,
                             win_geom *g) {
  int rank = in_type->rank;
  int64_t pad[2 * SHLO_MAX_RANK];
  shlo_status st;
  if ((st = attr_vec(cc, op, "window_dimensions", rank, 1, true, g->win)) ||
      (st = attr_vec(cc, op, "window_strides", rank, 1, false, g->stride)))
    return st;
  if (with_dilations) {
    if ((st = attr_vec(cc, op, "base_dilations", rank, 1, false, g->bdil)) ||
        (st = attr_vec(cc, op, "window_dilations", rank, 1, false, g->wdil)))
      return st;
  } else {
    for (int i = 0; i < rank; i++) g->bdil[i] = g->wdil[i] = 1;
  }
  const shlo_attr *pa = shlo_op_attr(op, "padding");
  if (!pa) {
    for (int i = 0; i < 2 * rank; i++) pad[i] = 0;
  } else if (shlo_attr_i64s(pa, pad, 2 * SHLO_MAX_RANK) != 2 * rank) {
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "'padding' must be %dx2 values", rank);
  }
  for (int i = 0; i < rank; i++) {
    if (g->win[i] <= 0 || g->stride[i] <= 0 || g->bdil[i] <= 0 ||
        g->wdil[i] <= 0)
      return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                          "window dimensions, strides and dilations must be "
                          "positive");
    g->in_dims[i] = in_type->dims[i];
    g->lo[i] = pad[2 * i];
    g->dil_size[i] = g->in_dims[i] == 0 ? 0 : (g->in_dims[i] - 1) * g->bdil[i] + 1;
    int64_t padded = pad[2 * i] + g->dil_size[i] + pad[2 * i + 1];
    int64_t dwin = (g->win[i] - 1) * g->wdil[i] + 1;
    g->out_dims[i] = padded <= 0 || dwin > padded
                         ? 0
                         : (padded - dwin) / g->stride[i] + 1;
  }
  g->rank = rank;
  if (rank == 0) {
    g->rank = 1;
    g->in_dims[0] = g->out_dims[0] = g->win[0] = g->stride[0] = 1;
    g->bdil[0] = g->wdil[0] = g->dil_size[0] = 1;
    g->lo[0] = 0;
  }
  shlo_strides(g->rank, g->in_dims, g->in_str);
  g->out_numel = g->win_numel = 1;
  for (int i = 0; i < g->rank; i++) {
    g->out_numel *= g->out_dims[i];
    g->win_numel *= g->win[i];
  }
  return SHLO_OK;
}

static bool shape_is(const shlo_type *t, const win_geom *g, int orig_rank) {
  if (t->rank != orig_rank) return false;
  for (int i = 0; i < orig_rank; i++)
    if (t->dims[i] != g->out_dims[i]) return false;
  return true;
}

/* Input index of window position w of output index o along dim d, or -1
 * when it falls into padding or a base-dilation hole. */
static inline int64_t win_index(const win_geom *g, int d, int64_t o,
                                int64_t w) {
  int64_t p = o * g->stride[d] + w * g->wdil[d] - g->lo[d];
  if (p < 0 || p >= g->dil_size[d]) return -1;
  if (g->bdil[d] != 1) {
    if (p % g->bdil[d]) return -1;
    p /= g->bdil[d];
  }
  return p;
}

/* The input offset (in elements) of window position w of output o, or -1
 * on padding or a hole of base dilation; then w steps to the next window
 * position (row-major). */
static int64_t win_offset_next(const win_geom *g, const int64_t *o,
                               int64_t *w) {
  int last = g->rank - 1;
  int64_t off = 0;
  for (int d = 0; d <= last && off >= 0; d++) {
    int64_t ix = win_index(g, d, o[d], w[d]);
    off = ix < 0 ? -1 : off + ix * g->in_str[d];
  }
  for (int d = last; d >= 0; d--) {
    if (++w[d] < g->win[d]) break;
    w[d] = 0;
  }
  return off;
}

/* ---- reduce_window ---- */

typedef struct rw_params {
  int n;
  win_geom g;
  shlo_elem_type in_et[SHLO_RB_MAX_N], out_et[SHLO_RB_MAX_N];
  const shlo_type *out_type[SHLO_RB_MAX_N];
  shlo_rb_native nat;
} rw_params;

/* One chunk of a native reduce_window: outputs [lo, hi), each folded over
 * its window in the same order as a sequential run. */
typedef struct rw_native_job {
  const rw_params *p;
  const char *src;
  const void *init;
  char *dst;
  shlo_exec *ex;
  atomic_int failed, stopped;
} rw_native_job;

static void rw_native_chunk(void *ctx, int64_t lo, int64_t hi) {
  rw_native_job *j = ctx;
  const rw_params *p = j->p;
  const win_geom *g = &p->g;
  const shlo_rb_native *b = &p->nat;
  int last = g->rank - 1;
  int64_t wl = g->win[last];
  int64_t *offs = shlo__malloc((size_t)(2 * wl) * sizeof *offs);
  if (!offs) {
    atomic_store(&j->failed, 1);
    return;
  }
  int64_t *none = offs + wl; /* all -1: a window row in padding */
  for (int64_t w = 0; w < wl; w++) none[w] = -1;
  size_t esz = b->esz;
  int64_t o[SHLO_MAX_RANK] = {0};
  int64_t rest = lo; /* lo's multi-index */
  for (int d = last; d >= 0; d--) {
    o[d] = rest % g->out_dims[d];
    rest /= g->out_dims[d];
  }
  for (int64_t oi = lo; oi < hi; oi++) {
    if ((oi & 1023) == 1023 &&
        (atomic_load(&j->stopped) || shlo__exec_should_stop(j->ex))) {
      atomic_store(&j->stopped, 1);
      break;
    }
    /* the innermost window row, as offsets relative to the row start */
    int64_t p0 = o[last] * g->stride[last] - g->lo[last];
    int64_t pend = p0 + (wl - 1) * g->wdil[last];
    bool inside = g->bdil[last] == 1 && p0 >= 0 && pend < g->dil_size[last];
    if (!inside)
      for (int64_t w = 0; w < wl; w++) {
        int64_t ix = win_index(g, last, o[last], w);
        offs[w] = ix < 0 ? -1 : ix * g->in_str[last];
      }
    uint8_t acc[16];
    memcpy(acc, j->init, esz);
    /* odometer over the outer window dimensions */
    int64_t w[SHLO_MAX_RANK] = {0};
    for (;;) {
      int64_t base = 0;
      bool valid = true;
      for (int d = 0; d < last; d++) {
        int64_t ix = win_index(g, d, o[d], w[d]);
        if (ix < 0) {
          valid = false;
          break;
        }
        base += ix * g->in_str[d];
      }
      if (!valid)
        b->gfold(acc, j->src, none, wl, j->init, b);
      else if (inside)
        b->fold(acc, j->src + (size_t)(base + p0 * g->in_str[last]) * esz, wl,
                g->wdil[last] * g->in_str[last], b);
      else
        b->gfold(acc, j->src + (size_t)base * esz, offs, wl, j->init, b);
      int d = last - 1;
      for (; d >= 0; d--) {
        if (++w[d] < g->win[d]) break;
        w[d] = 0;
      }
      if (d < 0) break;
    }
    memcpy(j->dst + (size_t)oi * esz, acc, esz);
    for (int d = last; d >= 0; d--) {
      if (++o[d] < g->out_dims[d]) break;
      o[d] = 0;
    }
  }
  shlo__free(offs);
}

/* Windows that span one element of the last dimension (stride 1, no
 * padding or dilation there) -- pooling over NHWC -- fold whole rows.
 * The outputs are taken in segments of consecutive positions along the
 * next-to-last dimension d (a run of output pixels that stays in L1).
 * For each window position over the dimensions before d, in row-major
 * order, one grid call folds, for every output pixel of the segment, its
 * window row along d (input pixels read in memory order); so each
 * element still sees its window in row-major order. */
static bool rows_fold(const win_geom *g) {
  int last = g->rank - 1;
  return g->rank >= 2 && g->win[last] == 1 && g->stride[last] == 1 &&
         g->lo[last] == 0 && g->bdil[last] == 1 &&
         g->out_dims[last] == g->in_dims[last] && g->in_str[last] == 1;
}

enum { RW_SEGMENT_BYTES = 16 << 10 };

/* Narrow [*a, *b) to the outputs along dimension d for which window
 * position w falls inside the input (base dilation 1 there). */
static void rw_inside(const win_geom *g, int d, int64_t w, int64_t *a,
                      int64_t *b) {
  int64_t s = g->stride[d], first = g->lo[d] - w * g->wdil[d];
  int64_t top = g->dil_size[d] - 1 - w * g->wdil[d] + g->lo[d];
  int64_t lo = first <= 0 ? 0 : (first + s - 1) / s;
  int64_t hi = top < 0 ? 0 : top / s + 1;
  if (lo > *a) *a = lo;
  if (hi < *b) *b = hi;
  if (*b < *a) *b = *a;
}

/* Fold the window row along d of one output pixel (output index od along
 * d, acc its row) position by position, init where it leaves the input. */
static void rw_fold_pixel(const rw_native_job *j, int d, int64_t od,
                          const char *base, char *acc, const char *init_row) {
  const win_geom *g = &j->p->g;
  const shlo_rb_native *b = &j->p->nat;
  int64_t C = g->out_dims[g->rank - 1];
  for (int64_t w = 0; w < g->win[d]; w++) {
    int64_t ix = win_index(g, d, od, w);
    const char *x =
        ix < 0 ? init_row : base + (size_t)(ix * g->in_str[d]) * b->esz;
    b->accum(acc, x, C, b);
  }
}

/* Fold window position w of the dimensions before d = rank - 2, with the
 * whole window row along d, into the segment acc of outputs o[d] ..
 * o[d] + len - 1 along d. */
static void rw_fold_window_row(const rw_native_job *j, const int64_t *o,
                               const int64_t *w, int64_t len, char *acc,
                               const char *init_row) {
  const win_geom *g = &j->p->g;
  const shlo_rb_native *b = &j->p->nat;
  int last = g->rank - 1, d = last - 1;
  int64_t C = g->out_dims[last];
  size_t esz = b->esz;
  int64_t base = 0;
  for (int k = 0; k < d; k++) {
    int64_t ix = win_index(g, k, o[k], w[k]);
    if (ix < 0) { /* the whole window row lies in padding */
      shlo_rb_grid pad = {C, len, C, 0, g->win[d], 0};
      b->accum_grid(acc, init_row, &pad, b);
      return;
    }
    base += ix * g->in_str[k];
  }
  const char *row = j->src + (size_t)base * esz;
  /* [a, e): the pixels whose whole window row lies inside the input */
  int64_t a = o[d], e = o[d] + len;
  if (g->bdil[d] == 1) {
    rw_inside(g, d, 0, &a, &e);
    rw_inside(g, d, g->win[d] - 1, &a, &e);
  } else {
    a = e;
  }
  for (int64_t od = o[d]; od < a; od++)
    rw_fold_pixel(j, d, od, row, acc + (size_t)((od - o[d]) * C) * esz,
                  init_row);
  if (e > a) {
    int64_t p = a * g->stride[d] - g->lo[d];
    shlo_rb_grid in = {C, e - a, C, g->stride[d] * g->in_str[d], g->win[d],
                       g->wdil[d] * g->in_str[d]};
    b->accum_grid(acc + (size_t)((a - o[d]) * C) * esz,
                  row + (size_t)(p * g->in_str[d]) * esz, &in, b);
  }
  for (int64_t od = e > a ? e : a; od < o[d] + len; od++)
    rw_fold_pixel(j, d, od, row, acc + (size_t)((od - o[d]) * C) * esz,
                  init_row);
}

static void rw_rows_chunk(void *ctx, int64_t lo, int64_t hi) {
  rw_native_job *j = ctx;
  const win_geom *g = &j->p->g;
  const shlo_rb_native *b = &j->p->nat;
  int last = g->rank - 1, d = last - 1;
  int64_t C = g->out_dims[last];
  size_t esz = b->esz, row = (size_t)C * esz;
  int64_t seg_max =
      row >= RW_SEGMENT_BYTES ? 1 : RW_SEGMENT_BYTES / (int64_t)row;
  if (seg_max > hi - lo) seg_max = hi - lo;
  /* a segment of init values, copied into each segment before its folds
   * (its first row is also the row padding folds); a result larger than
   * L2 is folded in a second, scratch segment and streamed out */
  size_t seg_bytes = row * (size_t)seg_max;
  bool stream = (size_t)g->out_numel * esz >= SHLO_STREAM_MIN_BYTES;
  char *init_seg = shlo__malloc(seg_bytes * (stream ? 2 : 1) + 1);
  if (!init_seg) {
    atomic_store(&j->failed, 1);
    return;
  }
  for (int64_t c = 0; c < C; c++)
    memcpy(init_seg + (size_t)c * esz, j->init, esz);
  for (size_t have = row, want = row * (size_t)seg_max; have < want;) {
    size_t more = have < want - have ? have : want - have;
    memcpy(init_seg + have, init_seg, more);
    have += more;
  }
  int64_t o[SHLO_MAX_RANK] = {0}, rest = lo;
  for (int k = d; k >= 0; k--) {
    o[k] = rest % g->out_dims[k];
    rest /= g->out_dims[k];
  }
  for (int64_t pix = lo; pix < hi;) {
    if (atomic_load(&j->stopped) || shlo__exec_should_stop(j->ex)) {
      atomic_store(&j->stopped, 1);
      break;
    }
    int64_t len = g->out_dims[d] - o[d];
    if (len > hi - pix) len = hi - pix;
    if (len > seg_max) len = seg_max;
    char *acc = stream ? init_seg + seg_bytes : j->dst + (size_t)pix * row;
    memcpy(acc, init_seg, (size_t)len * row);
    int64_t w[SHLO_MAX_RANK] = {0};
    for (;;) {
      rw_fold_window_row(j, o, w, len, acc, init_seg);
      int k = d - 1;
      for (; k >= 0; k--) {
        if (++w[k] < g->win[k]) break;
        w[k] = 0;
      }
      if (k < 0) break;
    }
    if (stream)
      shlo__stream_copy(j->dst + (size_t)pix * row, acc, (size_t)len * row);
    pix += len;
    o[d] += len;
    for (int k = d; k >= 0 && o[k] >= g->out_dims[k]; k--) {
      o[k] = 0;
      if (k > 0) o[k - 1]++;
    }
  }
  shlo__stream_fence(); /* before the pool's join */
  shlo__free(init_seg);
}

static shlo_status k_reduce_window_native(const shlo_step *s,
                                          shlo_value *const *in,
                                          shlo_value **out, shlo_exec *ex) {
  const rw_params *p = s->params;
  const win_geom *g = &p->g;
  shlo_status st = shlo__rb_new_results(s, p->out_type, 1, out, ex);
  if (st) return st;
  if (g->out_numel == 0) return SHLO_OK;
  if (shlo__exec_should_stop(ex)) {
    shlo__rb_unref_n(out, 1);
    return shlo__rb_stopped(s, ex);
  }
  /* Outputs are independent: chunks of them go to the pool. */
  int64_t per_out = 1;
  for (int d = 0; d < g->rank; d++) per_out *= g->win[d] > 0 ? g->win[d] : 1;
  int64_t grain = (1 << 14) / per_out;
  rw_native_job j = {p, in[0]->data, in[1]->data, out[0]->data, ex, 0, 0};
  if (rows_fold(g) && p->nat.accum_grid) {
    int64_t C = g->out_dims[g->rank - 1];
    int64_t pixels = C ? g->out_numel / C : 0;
    int64_t pg = (1 << 16) / (per_out * (C ? C : 1));
    shlo__parallel_for(pixels, pg > 0 ? pg : 1, rw_rows_chunk, &j);
  } else {
    shlo__parallel_for(g->out_numel, grain > 0 ? grain : 1, rw_native_chunk,
                      &j);
  }
  if (atomic_load(&j.failed) || atomic_load(&j.stopped)) {
    shlo__rb_unref_n(out, 1);
    if (atomic_load(&j.stopped)) return shlo__rb_stopped(s, ex);
    return shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory");
  }
  return SHLO_OK;
}

static shlo_status k_reduce_window_generic(const shlo_step *s,
                                           shlo_value *const *in,
                                           shlo_value **out, shlo_exec *ex) {
  const rw_params *p = s->params;
  const win_geom *g = &p->g;
  int n = p->n;
  shlo_status st = shlo__rb_new_results(s, p->out_type, n, out, ex);
  if (st) return st;
  if (g->out_numel == 0) return SHLO_OK;
  shlo_elem_type lead_et[2 * SHLO_RB_MAX_N] = {0};
  size_t in_sz[SHLO_RB_MAX_N], out_sz[SHLO_RB_MAX_N];
  for (int k = 0; k < n; k++) {
    lead_et[k] = p->out_et[k];
    lead_et[n + k] = p->in_et[k];
    in_sz[k] = shlo_elem_size(p->in_et[k]);
    out_sz[k] = shlo_elem_size(p->out_et[k]);
  }
  shlo_rb_call call;
  st = shlo__rb_call_init(&call, lead_et, 2 * n, p->out_et, n, s, ex);
  if (st) {
    shlo__rb_unref_n(out, n);
    return st;
  }
  const void *src[2 * SHLO_RB_MAX_N];
  void *dst[SHLO_RB_MAX_N];
  int last = g->rank - 1;
  int64_t o[SHLO_MAX_RANK] = {0};
  for (int64_t oi = 0; oi < g->out_numel && !st; oi++) {
    for (int k = 0; k < n; k++) {
      dst[k] = (char *)out[k]->data + (size_t)oi * out_sz[k];
      memcpy(dst[k], in[n + k]->data, out_sz[k]);
      src[k] = dst[k];
    }
    int64_t w[SHLO_MAX_RANK] = {0};
    for (int64_t wi = 0; wi < g->win_numel; wi++) {
      int64_t off = win_offset_next(g, o, w);
      for (int k = 0; k < n; k++)
        src[n + k] = off < 0 ? in[n + k]->data
                             : (const char *)in[k]->data + (size_t)off * in_sz[k];
      st = shlo__rb_apply(&call, s, 0, in, src, dst, ex);
      if (st) break;
    }
    for (int d = last; d >= 0; d--) {
      if (++o[d] < g->out_dims[d]) break;
      o[d] = 0;
    }
  }
  shlo__rb_call_free(&call);
  if (st) shlo__rb_unref_n(out, n);
  return st;
}

shlo_status shlo__compile_reduce_window(shlo_compiler *cc, const shlo_op *op,
                                       shlo_step *step) {
  int n = op->n_results;
  shlo_status st = shlo__rb_check_counts(cc, op, "C1");
  if (st) return st;
  rw_params *p = shlo__params_alloc(step, sizeof *p);
  if (!p) return SHLO_ENOMEM;
  p->n = n;
  const shlo_type *t0 = NULL;
  if ((st = shlo__rb_first_input(cc, op, &t0))) return st;
  st = geom_init(cc, op, t0, true, &p->g);
  if (st) return st;
  for (int k = 0; k < n; k++) {
    const shlo_type *ti = shlo__cc_operand_type(cc, op, k);
    const shlo_type *tv = shlo__cc_operand_type(cc, op, n + k);
    const shlo_type *tr = shlo__cc_result_type(cc, op, k);
    bool same = shlo__rb_is_tensor(ti) && ti->rank == t0->rank;
    for (int d = 0; same && d < t0->rank; d++) same = ti->dims[d] == t0->dims[d];
    if (!same)
      return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                          "(C2) all inputs must have the same static shape");
    if (!shlo__rb_is_tensor(tv) || tv->rank != 0)
      return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                          "init value %d must be a rank-0 tensor", k);
    if (!shlo__rb_is_tensor(tr) || tr->elem != tv->elem)
      return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                          "(C16) result %d must have the element type of its "
                          "init value",
                          k);
    if (!shape_is(tr, &p->g, t0->rank))
      return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                          "(C15) result %d does not have the shape of the "
                          "number of windows",
                          k);
    p->in_et[k] = ti->elem;
    p->out_et[k] = tr->elem;
    p->out_type[k] = tr;
  }
  st = shlo__rb_compile_body(cc, op, step, n, p->out_et, "C13");
  if (st) return st;
  if (n == 1 && shlo__rb_match(cc, op, 0, &p->nat) &&
      p->nat.et == p->in_et[0] && p->nat.et == p->out_et[0] &&
      !p->out_type[0]->quant && p->nat.esz <= 16) {
    step->fn = k_reduce_window_native;
  } else {
    memset(&p->nat, 0, sizeof p->nat);
    step->fn = k_reduce_window_generic;
  }
  return SHLO_OK;
}

/* ---- select_and_scatter ---- */

typedef struct sas_params {
  win_geom g;                /* over the operand; out_dims = source shape */
  const shlo_type *out_type;
  shlo_elem_type et;
  size_t esz;
  shlo_rb_compare sel;       /* sel.ok: native select */
  shlo_rb_native scat;       /* scat.opcode != 0: native scatter */
} sas_params;

/* What one run of k_select_and_scatter carries around. */
typedef struct sas_run {
  const shlo_step *s;
  const sas_params *p;
  shlo_value *const *in;
  shlo_exec *ex;
  shlo_rb_call selc, scatc; /* the regions, where not native */
} sas_run;

/* Whether select keeps the current pick cur over the candidate cand
 * (*keep); with a native select, curk is cur's key and becomes cand's when
 * cand wins. */
static shlo_status sas_keep(sas_run *r, int64_t cur, shlo_key *curk,
                            const char *cand, bool *keep) {
  const sas_params *p = r->p;
  if (p->sel.ok) {
    shlo_key ck = shlo__rb_key(&p->sel, cand);
    *keep = shlo__rb_key_cmp(&p->sel, *curk, ck);
    if (!*keep) *curk = ck;
    return SHLO_OK;
  }
  uint8_t pred = 0;
  const char *opd = r->in[0]->data;
  const void *args[2] = {opd + (size_t)cur * p->esz, cand};
  void *dst = &pred;
  shlo_status st = shlo__rb_apply(&r->selc, r->s, 0, r->in, args, &dst, r->ex);
  *keep = pred != 0;
  return st;
}

/* The operand offset select picks in the window of source position o
 * (*sel, or -1 when the window lies wholly in padding). */
static shlo_status sas_select(sas_run *r, const int64_t *o, int64_t *sel) {
  const sas_params *p = r->p;
  const win_geom *g = &p->g;
  const char *opd = r->in[0]->data;
  shlo_key selk = {0};
  int64_t w[SHLO_MAX_RANK] = {0};
  *sel = -1;
  for (int64_t wi = 0; wi < g->win_numel; wi++) {
    int64_t off = win_offset_next(g, o, w);
    if (off < 0) continue;
    const char *cand = opd + (size_t)off * p->esz;
    if (*sel < 0) {
      *sel = off;
      if (p->sel.ok) selk = shlo__rb_key(&p->sel, cand);
      continue;
    }
    bool keep;
    shlo_status st = sas_keep(r, *sel, &selk, cand, &keep);
    if (st) return st;
    if (!keep) *sel = off;
  }
  return SHLO_OK;
}

/* acc = scatter(acc, x). */
static shlo_status sas_scatter(sas_run *r, char *acc, const char *x) {
  const sas_params *p = r->p;
  if (p->scat.opcode) {
    p->scat.fold(acc, x, 1, 1, &p->scat);
    return SHLO_OK;
  }
  const void *args[2] = {acc, x};
  void *dst = acc;
  return shlo__rb_apply(&r->scatc, r->s, 1, r->in, args, &dst, r->ex);
}

/* Every source element, in row-major order, scattered onto the operand
 * element its window selects, in res. */
static shlo_status sas_walk(sas_run *r, char *res) {
  const sas_params *p = r->p;
  const win_geom *g = &p->g;
  const char *srcv = r->in[1]->data;
  int last = g->rank - 1;
  int64_t o[SHLO_MAX_RANK] = {0};
  for (int64_t si = 0; si < g->out_numel; si++) {
    if ((si & 1023) == 1023 && shlo__exec_should_stop(r->ex))
      return shlo__rb_stopped(r->s, r->ex);
    int64_t sel;
    shlo_status st = sas_select(r, o, &sel);
    if (!st && sel >= 0)
      st = sas_scatter(r, res + (size_t)sel * p->esz,
                       srcv + (size_t)si * p->esz);
    if (st) return st;
    for (int d = last; d >= 0; d--) {
      if (++o[d] < g->out_dims[d]) break;
      o[d] = 0;
    }
  }
  return SHLO_OK;
}

static shlo_status k_select_and_scatter(const shlo_step *s,
                                        shlo_value *const *in,
                                        shlo_value **out, shlo_exec *ex) {
  const sas_params *p = s->params;
  shlo_value *r = shlo_tensor_new_like(p->out_type);
  if (!r)
    return shlo__exec_fail(ex, s, SHLO_ENOMEM,
                          "out of memory allocating the result");
  size_t esz = p->esz;
  char *res = r->data;
  for (int64_t i = 0; i < r->numel; i++)
    memcpy(res + (size_t)i * esz, in[2]->data, esz);
  sas_run run = {.s = s, .p = p, .in = in, .ex = ex};
  bool have_sel = false, have_scat = false;
  shlo_status st = SHLO_OK;
  shlo_elem_type two[2] = {p->et, p->et}, i1 = SHLO_I1;
  if (!p->sel.ok) {
    st = shlo__rb_call_init(&run.selc, two, 2, &i1, 1, s, ex);
    if (st) goto done;
    have_sel = true;
  }
  if (!p->scat.opcode) {
    st = shlo__rb_call_init(&run.scatc, two, 2, two, 1, s, ex);
    if (st) goto done;
    have_scat = true;
  }
  st = sas_walk(&run, res);
done:
  if (have_sel) shlo__rb_call_free(&run.selc);
  if (have_scat) shlo__rb_call_free(&run.scatc);
  if (st) {
    shlo_value_unref(r);
    return st;
  }
  out[0] = r;
  return SHLO_OK;
}

shlo_status shlo__compile_select_and_scatter(shlo_compiler *cc,
                                            const shlo_op *op,
                                            shlo_step *step) {
  if (op->n_operands != 3 || op->n_results != 1 || op->n_regions != 2)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "needs operand, source, init_value, one result and "
                        "select and scatter regions");
  sas_params *p = shlo__params_alloc(step, sizeof *p);
  if (!p) return SHLO_ENOMEM;
  const shlo_type *to = shlo__cc_operand_type(cc, op, 0);
  const shlo_type *ts = shlo__cc_operand_type(cc, op, 1);
  const shlo_type *tv = shlo__cc_operand_type(cc, op, 2);
  const shlo_type *tr = shlo__cc_result_type(cc, op, 0);
  if (!shlo__rb_is_tensor(to) || !shlo__rb_is_tensor(ts) ||
      !shlo__rb_is_tensor(tv) || !shlo__rb_is_tensor(tr))
    return shlo__cc_fail(cc, op, SHLO_EUNSUPPORTED,
                        "operands must be statically shaped tensors");
  if (ts->elem != to->elem || tv->elem != to->elem || tv->rank != 0)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "(C2, C4) source and a rank-0 init_value must have "
                        "the operand's element type");
  if (!shlo_type_equal(to, tr))
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "(C12) operand and result types differ");
  shlo_status st = geom_init(cc, op, to, false, &p->g);
  if (st) return st;
  if (!shape_is(ts, &p->g, to->rank))
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "(C3) source does not have the shape of the number "
                        "of windows");
  p->out_type = tr;
  p->et = to->elem;
  p->esz = shlo_elem_size(to->elem);
  st = shlo__cc_compile_regions(cc, op, step);
  if (st) return st;
  shlo_elem_type aet[2], ret;
  if (!shlo__rb_region_types(cc, op, 0, aet, 2, &ret, 1) || ret != SHLO_I1 ||
      aet[0] != p->et || aet[1] != p->et)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "(C10) select must take two tensor<%s> and return "
                        "tensor<i1>",
                        shlo_elem_name(p->et));
  if (!shlo__rb_region_types(cc, op, 1, aet, 2, &ret, 1) || ret != p->et ||
      aet[0] != p->et || aet[1] != p->et)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "(C11) scatter must take two tensor<%s> and return "
                        "one",
                        shlo_elem_name(p->et));
  if (!(shlo__rb_match_compare(cc, op, 0, &p->sel) && p->sel.arg_pair == 0 &&
        p->sel.et == p->et && !to->quant))
    memset(&p->sel, 0, sizeof p->sel);
  if (!(shlo__rb_match(cc, op, 1, &p->scat) && p->scat.et == p->et &&
        !to->quant))
    memset(&p->scat, 0, sizeof p->scat);
  step->fn = k_select_and_scatter;
  return SHLO_OK;
}
