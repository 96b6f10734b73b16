/* SPDX-License-Identifier: Apache-2.0 */
/* stablehlo.convolution and stablehlo.dynamic_conv (whose padding is a
 * third operand read at run time).
 *
 * Lowered to GEMM by im2col: the lhs is first gathered into the result's
 * compute domain (linalg_int.h) as [batch][feature][spatial...], the kernel
 * as [group][in-feature x window][out-feature-in-group] (window reversal is
 * a negative stride in that gather).  Then, per group and output batch
 * element, blocks of output positions are expanded into rows of
 * in-feature x window values (zero where the window falls on padding or a
 * hole of lhs dilation), multiplied by the group's kernel matrix, and
 * scattered into the result.  f32/f64/complex multiply with OpenBLAS,
 * integers and i1 with the native loops, narrow floats in f64.  Strides,
 * lhs/rhs dilation, negative padding, feature_group_count and
 * batch_group_count are all handled by the index tables below.
 *
 * Channels-last layouts of one group (conv_nhwc.h) skip the gathers, the
 * tables and the scatter: chosen at compile time, labelled "[nhwc gemm]"
 * in --explain and profiles. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/context_int.h"
#include "core/tensor_uninit.h"
#include "core/value.h"
#include "kernels/conv_nhwc.h"
#include "kernels/linalg_int.h"
#include "runtime/pool.h"
#include "kernels/kernel.h"
#include "compile/plan.h"

#define CONV_MAX_SP (SHLO_MAX_RANK - 2)
#define CONV_SPLIT_MIN ((int64_t)1 << 20) /* multiply-adds worth threads */

typedef struct conv_params {
  shlo__la_dom dom;
  shlo_elem_type lt, rt, ot;
  bool dynamic; /* padding comes from operand 2 */
  int ns;       /* spatial dimensions */
  int out_rank;
  int64_t out_dims[SHLO_MAX_RANK];
  int64_t n, c, s;     /* lhs batch, features, spatial product */
  int64_t in_sp[CONV_MAX_SP], in_sstr[CONV_MAX_SP]; /* packed lhs strides */
  int64_t k_sp[CONV_MAX_SP], kp;                    /* window, its product */
  int64_t o_sp[CONV_MAX_SP], pcount;                /* output positions */
  int64_t stride[CONV_MAX_SP], lhs_dil[CONV_MAX_SP], rhs_dil[CONV_MAX_SP];
  int64_t pad[2 * CONV_MAX_SP]; /* lo0, hi0, lo1, hi1, ... */
  int64_t fgc, bgc, groups, ci, og, nb;
  shlo__la_walk lw; /* lhs -> [N][C][S] */
  shlo__la_walk kw; /* rhs -> [G][Ci][window][Og] */
  int64_t ob_str, of_str, osp_str[CONV_MAX_SP]; /* result strides */
  bool nhwc;             /* takes the fast path, with: */
  shlo__conv_nhwc fast;
} conv_params;

/* Output size of one spatial dimension (spec C26's shape rule). */
static int64_t conv_out_size(int64_t in, int64_t k, int64_t stride,
                             int64_t ld, int64_t rd, int64_t lo, int64_t hi) {
  int64_t din = in == 0 ? 0 : (in - 1) * ld + 1;
  int64_t padded = lo + din + hi;
  int64_t dk = k == 0 ? 0 : (k - 1) * rd + 1;
  if (padded < dk || padded < 0) return 0;
  return (padded - dk) / stride + 1;
}

/* Copy n elements of es bytes from src + off[i] * es (or zero when
 * off[i] < 0) to dst. */
static void gather_row(char *dst, const char *src, const int64_t *off,
                       int64_t n, size_t es) {
#define CONV_ROW(T)                                                     \
  for (int64_t i = 0; i < n; i++) {                                     \
    T v = 0;                                                            \
    if (off[i] >= 0) memcpy(&v, src + off[i] * (int64_t)sizeof(T), sizeof v); \
    memcpy(dst + i * (int64_t)sizeof(T), &v, sizeof v);                 \
  }                                                                     \
  return;
  switch (es) {
  case 1: CONV_ROW(uint8_t)
  case 4: CONV_ROW(uint32_t)
  case 8: CONV_ROW(uint64_t)
  default:
    for (int64_t i = 0; i < n; i++) {
      if (off[i] >= 0)
        memcpy(dst + i * (int64_t)es, src + off[i] * (int64_t)es, es);
      else
        memset(dst + i * (int64_t)es, 0, es);
    }
    return;
  }
#undef CONV_ROW
}

/* dynamic_conv: read the padding operand into pad and check that it gives
 * the result's spatial sizes. */
static shlo_status conv_dynamic_pad(const shlo_step *s, const conv_params *p,
                                    const shlo_value *pv, int64_t *pad,
                                    shlo_exec *ex) {
  int ns = p->ns;
  if (pv->numel != 2 * ns)
    return shlo__exec_fail(ex, s, SHLO_ERUNTIME,
                          "padding has %lld values, expected %d",
                          (long long)pv->numel, 2 * ns);
  shlo__la_load(LA_INT, pv->elem, pad, pv->data, 2 * ns,
                (int64_t)shlo_elem_size(pv->elem));
  for (int i = 0; i < ns; i++)
    if (conv_out_size(p->in_sp[i], p->k_sp[i], p->stride[i], p->lhs_dil[i],
                      p->rhs_dil[i], pad[2 * i], pad[2 * i + 1]) !=
        p->o_sp[i])
      return shlo__exec_fail(ex, s, SHLO_ERUNTIME,
                            "padding does not give the result's spatial "
                            "dimension %d",
                            i);
  return SHLO_OK;
}

/* What one run of k_conv allocates. */
typedef struct conv_scratch {
  /* per spatial dim: input index for (output index, window index), or -1 */
  int64_t *tab[CONV_MAX_SP];
  char *lbuf, *wbuf; /* the gathered lhs and kernel */
  char *xbuf, *ybuf; /* one block of im2col rows, and its product */
  int64_t *koff;     /* lhs offsets of one im2col row */
  int64_t pb;        /* rows per block */
} conv_scratch;

static void conv_scratch_free(conv_scratch *w, int ns) {
  for (int i = 0; i < ns; i++) shlo__free(w->tab[i]);
  shlo__free(w->lbuf), shlo__free(w->wbuf), shlo__free(w->xbuf), shlo__free(w->ybuf), shlo__free(w->koff);
}

/* Fill w->tab[i] for the padding pad. */
static bool conv_tables(const conv_params *p, const int64_t *pad,
                        conv_scratch *w) {
  for (int i = 0; i < p->ns; i++) {
    int64_t no = p->o_sp[i], nk = p->k_sp[i];
    int64_t *t = w->tab[i] = shlo__malloc((size_t)(no * nk + 1) * sizeof(int64_t));
    if (!t) return false;
    for (int64_t o = 0; o < no; o++)
      for (int64_t k = 0; k < nk; k++) {
        int64_t pos = o * p->stride[i] + k * p->rhs_dil[i] - pad[2 * i];
        int64_t q = -1;
        if (pos >= 0 && pos % p->lhs_dil[i] == 0 &&
            pos / p->lhs_dil[i] < p->in_sp[i])
          q = pos / p->lhs_dil[i];
        t[o * nk + k] = q;
      }
  }
  return true;
}

/* Allocate the rest of w for ck = in-features x window values per row. */
static bool conv_buffers(const conv_params *p, int64_t ck, size_t es,
                         conv_scratch *w) {
  w->lbuf = shlo__malloc((size_t)(p->n * p->c * p->s) * es);
  w->wbuf = shlo__malloc((size_t)(p->groups * ck * p->og) * es);
  /* rows of im2col per block: about 8 MiB of scratch at most */
  int64_t pb = (int64_t)((8u << 20) / ((size_t)ck * es));
  if (pb < 1) pb = 1;
  if (pb > p->pcount) pb = p->pcount;
  w->pb = pb;
  return w->lbuf && w->wbuf;
}

/* Each thread's own im2col block, product and offsets (w->xbuf, ybuf,
 * koff) for ck values per row. */
static bool conv_thread_buffers(const conv_params *p, int64_t ck, size_t es,
                                conv_scratch *w) {
  w->xbuf = shlo__malloc((size_t)(w->pb * ck) * es);
  w->ybuf = shlo__malloc((size_t)(w->pb * p->og + 1) * es);
  w->koff = shlo__malloc((size_t)ck * sizeof *w->koff);
  return w->xbuf && w->ybuf && w->koff;
}

/* The im2col row of output position pos: the in-feature x window values
 * of the lhs plane lb (zero on padding and dilation holes) into xrow. */
static void conv_im2col_row(const conv_params *p, const conv_scratch *w,
                            int64_t pos, const char *lb, char *xrow,
                            size_t es) {
  int ns = p->ns;
  int64_t *koff = w->koff;
  /* output multi-index of position pos */
  int64_t oidx[CONV_MAX_SP], rem = pos;
  for (int i = ns - 1; i >= 0; i--) {
    oidx[i] = rem % p->o_sp[i];
    rem /= p->o_sp[i];
  }
  /* window offsets within one feature plane */
  int64_t kidx[CONV_MAX_SP] = {0};
  for (int64_t kk = 0; kk < p->kp; kk++) {
    int64_t off = 0;
    for (int i = 0; i < ns && off >= 0; i++) {
      int64_t q = w->tab[i][oidx[i] * p->k_sp[i] + kidx[i]];
      off = q < 0 ? -1 : off + q * p->in_sstr[i];
    }
    koff[kk] = off;
    for (int i = ns - 1; i >= 0; i--) {
      if (++kidx[i] < p->k_sp[i]) break;
      kidx[i] = 0;
    }
  }
  /* the same offsets per input feature, shifted by the plane */
  for (int64_t c = 1; c < p->ci; c++)
    for (int64_t kk = 0; kk < p->kp; kk++)
      koff[c * p->kp + kk] = koff[kk] < 0 ? -1 : koff[kk] + c * p->s;
  gather_row(xrow, lb, koff, p->ci * p->kp, es);
}

/* Store rows of products (output positions p0.., batch b, group g) into
 * the result v. */
static void conv_store_rows(const conv_params *p, const conv_scratch *w,
                            shlo_value *v, int64_t p0, int64_t rows,
                            int64_t b, int64_t g, size_t es) {
  size_t oes = shlo_elem_size(p->ot);
  for (int64_t r = 0; r < rows; r++) {
    int64_t rem = p0 + r, off = b * p->ob_str + g * p->og * p->of_str;
    for (int i = p->ns - 1; i >= 0; i--) {
      off += (rem % p->o_sp[i]) * p->osp_str[i];
      rem /= p->o_sp[i];
    }
    shlo__la_store(p->dom, p->ot, (char *)v->data + off * (int64_t)oes,
                   p->of_str * (int64_t)oes,
                   w->ybuf + r * p->og * (int64_t)es, p->og);
  }
}

/* One group and output batch element: every block of output positions
 * expanded, multiplied by the group's kernel matrix and stored. */
static void conv_batch(const conv_params *p, const conv_scratch *w,
                       shlo_value *v, int64_t g, int64_t b) {
  size_t es = shlo__la_dom_size(p->dom);
  int64_t ck = p->ci * p->kp, pb = w->pb;
  int64_t boff = p->bgc > 1 ? g * p->nb : 0;
  int64_t foff = p->fgc > 1 ? g * p->ci : 0;
  const char *wg = w->wbuf + g * ck * p->og * (int64_t)es;
  const char *lb = w->lbuf + ((boff + b) * p->c + foff) * p->s * (int64_t)es;
  for (int64_t p0 = 0; p0 < p->pcount; p0 += pb) {
    int64_t rows = p->pcount - p0 < pb ? p->pcount - p0 : pb;
    for (int64_t r = 0; r < rows; r++)
      conv_im2col_row(p, w, p0 + r, lb, w->xbuf + r * ck * (int64_t)es, es);
    shlo__la_gemm(p->dom, false, false, rows, p->og, ck, w->xbuf, ck, wg,
                  p->og, w->ybuf, p->og);
    conv_store_rows(p, w, v, p0, rows, b, g, es);
  }
}

/* (group, batch element) pairs are independent and write disjoint parts of
 * the result: they are shared out over the pool, each thread with its own
 * im2col buffers and the gathered operands in common. */
typedef struct conv_job {
  const conv_params *p;
  const conv_scratch *w;
  shlo_value *v;
  atomic_int failed;
} conv_job;

static void conv_items(void *ctx, int64_t lo, int64_t hi) {
  conv_job *j = ctx;
  const conv_params *p = j->p;
  size_t es = shlo__la_dom_size(p->dom);
  conv_scratch w = *j->w; /* tables, lbuf and wbuf are shared, read-only */
  if (conv_thread_buffers(p, p->ci * p->kp, es, &w))
    for (int64_t it = lo; it < hi; it++)
      conv_batch(p, &w, j->v, it / p->nb, it % p->nb);
  else
    atomic_store(&j->failed, 1);
  shlo__free(w.xbuf), shlo__free(w.ybuf), shlo__free(w.koff);
}

/* The whole convolution of in[0] by in[1] into v, for padding pad. */
static shlo_status conv_run(const shlo_step *s, const conv_params *p,
                            shlo_value *const *in, const int64_t *pad,
                            shlo_value *v, shlo_exec *ex) {
  if (p->nhwc) {
    if (!shlo__conv_nhwc_run(&p->fast, in[0]->data, in[1]->data, pad, v->data,
                             NULL, NULL))
      return shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory for scratch");
    return SHLO_OK;
  }
  size_t es = shlo__la_dom_size(p->dom);
  conv_scratch w = {{NULL}, NULL, NULL, NULL, NULL, NULL, 0};
  shlo_status st = SHLO_OK;
  if (!conv_tables(p, pad, &w) || !conv_buffers(p, p->ci * p->kp, es, &w)) {
    st = shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory for scratch");
    goto done;
  }
  shlo__la_gather(&p->lw, p->dom, p->lt, w.lbuf, in[0]->data);
  shlo__la_gather(&p->kw, p->dom, p->rt, w.wbuf, in[1]->data);
  if (shlo__exec_should_stop(ex)) {
    st = shlo__exec_fail(ex, s, SHLO_ECANCELED, "stopped");
    goto done;
  }
  conv_job j = {p, &w, v, 0};
  /* small convolutions stay on one thread: one chunk for all pairs */
  int64_t items = p->groups * p->nb;
  int64_t macs = items * p->pcount * p->ci * p->kp * p->og;
  int64_t grain = macs < CONV_SPLIT_MIN ? items : 1;
  shlo__parallel_for(items, grain, conv_items, &j);
  if (atomic_load(&j.failed))
    st = shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory for scratch");
done:
  conv_scratch_free(&w, p->ns);
  return st;
}

static shlo_status k_conv(const shlo_step *s, shlo_value *const *in,
                          shlo_value **out, shlo_exec *ex) {
  const conv_params *p = s->params;
  /* the fast path writes every element, unless there is nothing to sum */
  bool writes_all = p->nhwc && p->ci * p->kp != 0;
  shlo_value *v = writes_all
                      ? shlo__tensor_new_uninit(p->ot, p->out_rank, p->out_dims)
                      : shlo_tensor_new(p->ot, p->out_rank, p->out_dims);
  if (!v)
    return shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory for the result");
  int64_t pad[2 * CONV_MAX_SP];
  memcpy(pad, p->pad, sizeof pad);
  shlo_status st = SHLO_OK;
  if (p->dynamic) st = conv_dynamic_pad(s, p, in[2], pad, ex);
  /* empty, or nothing to sum: zeros */
  if (!st && v->numel != 0 && p->ci * p->kp != 0)
    st = conv_run(s, p, in, pad, v, ex);
  if (st != SHLO_OK) {
    shlo_value_unref(v);
    return st;
  }
  out[0] = v;
  return SHLO_OK;
}

/* A per-spatial-dimension list attribute; missing = all `dflt`. */
static shlo_status spatial_list(shlo_compiler *cc, const shlo_op *op,
                                const char *name, int n, int64_t dflt,
                                int64_t *out) {
  const shlo_attr *a = shlo_op_attr(op, name);
  for (int i = 0; i < n; i++) out[i] = dflt;
  if (!a) return SHLO_OK;
  int k = shlo_attr_i64s(a, out, n);
  if (k != n)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "%s has %d values, expected %d", name, k, n);
  return SHLO_OK;
}

/* The lhs, rhs, result (and dynamic_conv's padding) types, checked. */
static shlo_status conv_types(shlo_compiler *cc, const shlo_op *op,
                              bool dynamic, const shlo_type **lt,
                              const shlo_type **rt, const shlo_type **ot) {
  shlo_status st;
  if (op->n_operands != (dynamic ? 3 : 2) || op->n_results != 1)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY, "wrong number of operands");
  if ((st = shlo__la_lhs_rhs_result(cc, op, lt, rt, ot))) return st;
  if (dynamic) {
    const shlo_type *pt = shlo__cc_operand_type(cc, op, 2);
    if ((st = shlo__la_want_tensor(cc, op, pt, "padding"))) return st;
    if (!shlo_elem_is_int(pt->elem))
      return shlo__cc_fail(cc, op, SHLO_EVERIFY, "padding must be integers");
  }
  return SHLO_OK;
}

/* (C13/C20/C25) the input, kernel and output dimension numbers must each
 * be a permutation of 0..r-1. */
static shlo_status conv_check_perms(shlo_compiler *cc, const shlo_op *op,
                                    const shlo_attr *dn, int r) {
  int ns = r - 2;
  for (int part = 0; part < 3; part++) {
    int64_t a = part == 0 ? dn->conv_in_batch
                : part == 1 ? dn->conv_k_in : dn->conv_out_batch;
    int64_t b = part == 0 ? dn->conv_in_feature
                : part == 1 ? dn->conv_k_out : dn->conv_out_feature;
    const int64_t *sp = part == 0 ? dn->conv_in_spatial
                        : part == 1 ? dn->conv_k_spatial : dn->conv_out_spatial;
    bool seen[SHLO_MAX_RANK] = {false};
    bool ok = a >= 0 && a < r && b >= 0 && b < r && a != b;
    if (ok) seen[a] = seen[b] = true;
    for (int i = 0; ok && i < ns; i++) {
      ok = sp[i] >= 0 && sp[i] < r && !seen[sp[i]];
      if (ok) seen[sp[i]] = true;
    }
    if (!ok)
      return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                          "(C13/C20/C25) %s dimension numbers are not a "
                          "permutation",
                          part == 0 ? "input" : part == 1 ? "kernel" : "output");
  }
  return SHLO_OK;
}

/* Window strides, dilations, padding (static only), window_reversal (into
 * rev) and the two group counts. */
static shlo_status conv_window_attrs(shlo_compiler *cc, const shlo_op *op,
                                     conv_params *p, int64_t *rev) {
  shlo_status st;
  int ns = p->ns;
  if ((st = spatial_list(cc, op, "window_strides", ns, 1, p->stride)) ||
      (st = spatial_list(cc, op, "lhs_dilation", ns, 1, p->lhs_dil)) ||
      (st = spatial_list(cc, op, "rhs_dilation", ns, 1, p->rhs_dil)))
    return st;
  if (!p->dynamic &&
      (st = spatial_list(cc, op, "padding", 2 * ns, 0, p->pad)))
    return st;
  if ((st = spatial_list(cc, op, "window_reversal", ns, 0, rev))) return st;
  for (int i = 0; i < ns; i++)
    if (p->stride[i] < 1 || p->lhs_dil[i] < 1 || p->rhs_dil[i] < 1)
      return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                          "(C4/C7/C9) strides and dilations must be positive");
  p->fgc = p->bgc = 1;
  const shlo_attr *a;
  if ((a = shlo_op_attr(op, "feature_group_count")) &&
      !shlo_attr_get_i64(a, &p->fgc))
    return shlo__cc_fail(cc, op, SHLO_EVERIFY, "bad feature_group_count");
  if ((a = shlo_op_attr(op, "batch_group_count")) &&
      !shlo_attr_get_i64(a, &p->bgc))
    return shlo__cc_fail(cc, op, SHLO_EVERIFY, "bad batch_group_count");
  if (p->fgc < 1 || p->bgc < 1 || (p->fgc > 1 && p->bgc > 1))
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "(C21-C24) group counts must be positive, one of "
                        "them 1");
  return SHLO_OK;
}

/* Batch and feature sizes, split into groups, and the result's. */
static shlo_status conv_groups(shlo_compiler *cc, const shlo_op *op,
                               conv_params *p, const shlo_attr *dn,
                               const shlo_type *lt, const shlo_type *rt,
                               const shlo_type *ot) {
  p->n = lt->dims[dn->conv_in_batch];
  p->c = lt->dims[dn->conv_in_feature];
  p->ci = rt->dims[dn->conv_k_in];
  int64_t o = rt->dims[dn->conv_k_out];
  if (p->c % p->fgc || p->c / p->fgc != p->ci)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "(C14/C15) lhs features %lld / feature_group_count "
                        "%lld must equal kernel input features %lld",
                        (long long)p->c, (long long)p->fgc, (long long)p->ci);
  if (p->n % p->bgc)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "(C11) lhs batch is not divisible by batch_group_count");
  p->groups = p->fgc * p->bgc;
  if (o % p->groups)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "(C16-C17) kernel output features are not divisible "
                        "by the group count");
  p->og = o / p->groups;
  p->nb = p->n / p->bgc;
  if (ot->dims[dn->conv_out_batch] != p->nb ||
      ot->dims[dn->conv_out_feature] != o)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "(C26) result batch/feature sizes should be %lld/%lld",
                        (long long)p->nb, (long long)o);
  return SHLO_OK;
}

/* Spatial sizes of lhs, window and result, their products, and the packed
 * lhs strides; a static convolution's result sizes are checked (C26). */
static shlo_status conv_spatial(shlo_compiler *cc, const shlo_op *op,
                                conv_params *p, const shlo_attr *dn,
                                const shlo_type *lt, const shlo_type *rt,
                                const shlo_type *ot) {
  p->s = p->kp = p->pcount = 1;
  for (int i = 0; i < p->ns; i++) {
    p->in_sp[i] = lt->dims[dn->conv_in_spatial[i]];
    p->k_sp[i] = rt->dims[dn->conv_k_spatial[i]];
    p->o_sp[i] = ot->dims[dn->conv_out_spatial[i]];
    p->s *= p->in_sp[i];
    p->kp *= p->k_sp[i];
    p->pcount *= p->o_sp[i];
    if (!p->dynamic) {
      int64_t want = conv_out_size(p->in_sp[i], p->k_sp[i], p->stride[i],
                                   p->lhs_dil[i], p->rhs_dil[i], p->pad[2 * i],
                                   p->pad[2 * i + 1]);
      if (want != p->o_sp[i])
        return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                            "(C26) result spatial dimension %d is %lld, "
                            "expected %lld",
                            i, (long long)p->o_sp[i], (long long)want);
    }
  }
  int64_t acc = 1;
  for (int i = p->ns - 1; i >= 0; i--) {
    p->in_sstr[i] = acc;
    acc *= p->in_sp[i];
  }
  return SHLO_OK;
}

/* The gathers of lhs to [N][C][S] and kernel to [G][Ci][window][Og]
 * (reversed window dims walk backwards), and the result strides. */
static void conv_walks(conv_params *p, const shlo_attr *dn,
                       const shlo_type *lt, const shlo_type *rt,
                       const shlo_type *ot, const int64_t *rev) {
  int ns = p->ns, r = ns + 2;
  int64_t lstr[SHLO_MAX_RANK], rstr[SHLO_MAX_RANK], ostr[SHLO_MAX_RANK];
  shlo_strides(r, lt->dims, lstr);
  shlo_strides(r, rt->dims, rstr);
  shlo_strides(r, ot->dims, ostr);
  int64_t cnt[SHLO_LA_WALK_MAX], str[SHLO_LA_WALK_MAX];
  cnt[0] = p->n, str[0] = lstr[dn->conv_in_batch];
  cnt[1] = p->c, str[1] = lstr[dn->conv_in_feature];
  for (int i = 0; i < ns; i++)
    cnt[2 + i] = p->in_sp[i], str[2 + i] = lstr[dn->conv_in_spatial[i]];
  shlo__la_walk_init(&p->lw, r, cnt, str, 0, shlo_elem_size(lt->elem));
  int64_t kout = rstr[dn->conv_k_out], koff = 0;
  cnt[0] = p->groups, str[0] = p->og * kout;
  cnt[1] = p->ci, str[1] = rstr[dn->conv_k_in];
  for (int i = 0; i < ns; i++) {
    int64_t sd = rstr[dn->conv_k_spatial[i]];
    cnt[2 + i] = p->k_sp[i];
    if (rev[i] && p->k_sp[i] > 0) {
      koff += (p->k_sp[i] - 1) * sd;
      sd = -sd;
    }
    str[2 + i] = sd;
  }
  cnt[2 + ns] = p->og, str[2 + ns] = kout;
  shlo__la_walk_init(&p->kw, r + 1, cnt, str, koff, shlo_elem_size(rt->elem));
  p->ob_str = ostr[dn->conv_out_batch];
  p->of_str = ostr[dn->conv_out_feature];
  for (int i = 0; i < ns; i++) p->osp_str[i] = ostr[dn->conv_out_spatial[i]];
}

/* Whether p (dimension numbers dn, window reversal rev) can take the
 * channels-last fast path: one group, no lhs dilation or reversal, one
 * OpenBLAS element type throughout, and the layouts of conv_nhwc.h. */
static bool conv_is_nhwc(const conv_params *p, const shlo_attr *dn,
                         const int64_t *rev) {
  int ns = p->ns, r = ns + 2;
  bool ok = p->dom == LA_F32 || p->dom == LA_F64 || p->dom == LA_C64 ||
            p->dom == LA_C128;
  ok = ok && p->lt == p->ot && p->rt == p->ot &&
       shlo__la_native(p->dom, p->ot) && p->fgc == 1 && p->bgc == 1;
  ok = ok && dn->conv_in_batch == 0 && dn->conv_in_feature == r - 1 &&
       dn->conv_k_in == r - 2 && dn->conv_k_out == r - 1 &&
       dn->conv_out_batch == 0 && dn->conv_out_feature == r - 1;
  for (int i = 0; ok && i < ns; i++)
    ok = p->lhs_dil[i] == 1 && !rev[i] && dn->conv_in_spatial[i] == 1 + i &&
         dn->conv_k_spatial[i] == i && dn->conv_out_spatial[i] == 1 + i;
  return ok && !shlo__ctx_options(shlo__ctx_current())->conv_general;
}

/* The fast path of a convolution with fixed padding and something to sum,
 * block by block (shlo_step.loop.run_blocks). */
static shlo_status conv_run_blocks(const shlo_step *s, shlo_value *const *in,
                                   shlo_value *result, shlo_block_done done,
                                   void *ctx, shlo_exec *ex) {
  const conv_params *p = s->params;
  if (!shlo__conv_nhwc_run(&p->fast, in[0]->data, in[1]->data, p->pad,
                           result->data, done, ctx))
    return shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory for scratch");
  return SHLO_OK;
}

/* The same, f32, with a bias and ReLU after it (shlo_step.loop.run_bias_relu). */
static shlo_status conv_run_bias_relu(const shlo_step *s, shlo_value *const *in,
                                      shlo_value *result, const float *bias,
                                      bool relu, shlo_exec *ex) {
  const conv_params *p = s->params;
  shlo__gemm_epi epi = {.bias = bias, .relu = relu};
  if (!shlo__conv_nhwc_run_epi(&p->fast, in[0]->data, in[1]->data, p->pad,
                               result->data, &epi, NULL, NULL))
    return shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory for scratch");
  return SHLO_OK;
}

/* The same with a whole epilogue (shlo_step.loop.run_epi). */
static shlo_status conv_run_epi(const shlo_step *s, shlo_value *const *in,
                                shlo_value *result,
                                const struct shlo__gemm_epi *epi,
                                shlo_block_done done, void *ctx,
                                shlo_exec *ex) {
  const conv_params *p = s->params;
  if (!shlo__conv_nhwc_run_epi(&p->fast, in[0]->data, in[1]->data, p->pad,
                               result->data, epi, done, ctx))
    return shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory for scratch");
  return SHLO_OK;
}

/* The fast path's parameters and its --explain label. */
static shlo_status conv_use_nhwc(shlo_compiler *cc, const shlo_op *op,
                                 conv_params *p, shlo_step *step) {
  shlo__conv_nhwc *g = &p->fast;
  g->dom = p->dom;
  g->ns = p->ns;
  g->n = p->n, g->ci = p->ci, g->co = p->og;
  for (int i = 0; i < p->ns; i++) {
    g->in_sp[i] = p->in_sp[i], g->k_sp[i] = p->k_sp[i];
    g->o_sp[i] = p->o_sp[i];
    g->stride[i] = p->stride[i], g->rhs_dil[i] = p->rhs_dil[i];
  }
  const char *how =
      shlo__conv_nhwc_small(g) ? "nhwc small window" : "nhwc gemm";
  size_t len = strlen(op->name) + strlen(how) + 4;
  if (!(step->label = shlo__malloc(len))) /* the plan's: core/alloc.h */
    return shlo__cc_fail(cc, op, SHLO_ENOMEM, "out of memory");
  snprintf(step->label, len, "%s [%s]", op->name, how);
  p->nhwc = true;
  if (!p->dynamic && p->ci * p->kp != 0)
    step->loop.run_blocks = conv_run_blocks;
  if (!p->dynamic && p->ci * p->kp != 0 && p->dom == LA_F32)
    step->loop.run_bias_relu = conv_run_bias_relu;
  if (!p->dynamic && p->ci * p->kp != 0 && p->dom == LA_F32)
    step->loop.run_epi = conv_run_epi;
  return SHLO_OK;
}

/* stablehlo.convolution: result windows of the padded, dilated lhs dotted
 * with the kernel (spec "convolution").  Checked: (C1) equal ranks, (C3)
 * (C6) (C8) strides and dilations positive, (C5) padding shape, (C10)
 * window_reversal size, (C11-C14) and (C16-C25) dimension numbers form
 * permutations, feature/batch group divisibility, kernel in-feature size
 * = lhs features / feature_group_count, and the result shape (C26). */
shlo_status shlo__compile_convolution(shlo_compiler *cc, const shlo_op *op,
                                     shlo_step *step) {
  bool dynamic = op->code == SHLO_OP_DYNAMIC_CONV;
  const shlo_type *lt = NULL, *rt = NULL, *ot = NULL;
  shlo_status st = conv_types(cc, op, dynamic, &lt, &rt, &ot);
  if (st) return st;
  const shlo_attr *dn = shlo_op_attr(op, "dimension_numbers");
  if (!dn || dn->kind != SHLO_ATTR_CONV_DIMS)
    return shlo__cc_fail(cc, op, SHLO_EUNSUPPORTED,
                        "needs dimension_numbers in the [b, 0, f]x[0, i, o]->"
                        "[b, 0, f] form");
  int ns = dn->conv_n_spatial, r = ns + 2;
  if (lt->rank != r || rt->rank != r || ot->rank != r)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "(C1) lhs, rhs and result must have rank %d", r);
  if ((st = conv_check_perms(cc, op, dn, r))) return st;
  conv_params *p = shlo__params_alloc(step, sizeof *p);
  if (!p) return shlo__cc_fail(cc, op, SHLO_ENOMEM, "out of memory");
  p->dynamic = dynamic;
  p->ns = ns;
  int64_t rev[CONV_MAX_SP];
  if ((st = conv_window_attrs(cc, op, p, rev)) ||
      (st = conv_groups(cc, op, p, dn, lt, rt, ot)) ||
      (st = conv_spatial(cc, op, p, dn, lt, rt, ot)))
    return st;
  p->dom = shlo__la_dom_for(ot->elem);
  p->lt = lt->elem;
  p->rt = rt->elem;
  p->ot = ot->elem;
  p->out_rank = r;
  memcpy(p->out_dims, ot->dims, sizeof p->out_dims);
  conv_walks(p, dn, lt, rt, ot, rev);
  if (conv_is_nhwc(p, dn, rev) && (st = conv_use_nhwc(cc, op, p, step)))
    return st;
  step->fn = k_conv;
  return SHLO_OK;
}
