/* SPDX-License-Identifier: Apache-2.0 */
/* The driver of JAX's LAPACK custom calls (lapack.h): the target table,
 * the checks of an op against its family's signature and JAX's layouts,
 * and the kernel that runs a family over the batch.
 *
 * The batch runs in chunks on the engine's pool when it has more than one
 * matrix; each chunk owns its scratch (every operand and result of one
 * batch element), so the LAPACK calls of different chunks share nothing.
 * OpenBLAS itself runs one thread per call there (blas_setup.c).  Fewer
 * large matrices than the pool has threads may run one after another with
 * OpenBLAS threaded inside each call instead (lapack_threads.c says
 * when). */
#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/value.h"
#include "kernels/lapack.h"
#include "runtime/pool.h"

/* ---- the table: target name -> family and kind ---- */

static const la_family *const families[] = {
    &shlo__la_potrf, &shlo__la_getrf, &shlo__la_geqrf, &shlo__la_orgqr,
    &shlo__la_geqp3, &shlo__la_trsm,  &shlo__la_gtsv,  &shlo__la_syevd,
    &shlo__la_geev,  &shlo__la_gees,  &shlo__la_gehrd, &shlo__la_sytrd,
    &shlo__la_gesdd, &shlo__la_gesvd,
};
enum { N_FAMILIES = sizeof families / sizeof families[0] };

static bool find_target(const char *target, const la_family **fam,
                        la_kind *kind) {
  for (int f = 0; f < N_FAMILIES; f++)
    for (int k = 0; k < 4; k++) {
      const char *name = families[f]->names[k];
      if (name && !strcmp(name, target)) {
        *fam = families[f];
        *kind = (la_kind)k;
        return true;
      }
    }
  return false;
}

bool shlo__lapack_target(const char *target) {
  const la_family *f;
  la_kind k;
  return target && find_target(target, &f, &k);
}

/* ---- element types ---- */

shlo_elem_type shlo__la_elem(la_kind k) {
  static const shlo_elem_type t[] = {SHLO_F32, SHLO_F64, SHLO_C64, SHLO_C128};
  return t[k];
}

shlo_elem_type shlo__la_real(la_kind k) {
  return k == LK_S || k == LK_C ? SHLO_F32 : SHLO_F64;
}

shlo_elem_type shlo__la_complex(la_kind k) {
  return k == LK_S || k == LK_C ? SHLO_C64 : SHLO_C128;
}

size_t shlo__la_size(la_kind k) { return shlo_elem_size(shlo__la_elem(k)); }
size_t shlo__la_real_size(la_kind k) {
  return shlo_elem_size(shlo__la_real(k));
}

int shlo__la_work_count(la_kind k, const void *answer, int least) {
  double v = k == LK_S || k == LK_C ? (double)*(const float *)answer
                                    : *(const double *)answer;
  /* a float answer may be rounded down past 2^24: take a little more */
  if (k == LK_S || k == LK_C)
    v = v * (1 + 1e-6) + 1;
  if (!(v < 2147483647.0))
    v = 2147483647.0;
  int n = (int)ceil(v);
  return n > least ? n : least;
}

/* ---- signature checks ---- */

shlo_status shlo__la_fail(la_sig *g, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return shlo__cc_fail(g->cc, g->op, SHLO_EVERIFY, "%s: %s", g->target, msg);
}

shlo_status shlo__la_want_counts(la_sig *g, int n_in, int n_out) {
  if (g->op->n_operands != n_in || g->op->n_results != n_out)
    return shlo__la_fail(
        g, "takes %d operands and gives %d results, not %d and %d", n_in, n_out,
        g->op->n_operands, g->op->n_results);
  g->p->n_in = n_in;
  g->p->n_out = n_out;
  return SHLO_OK;
}

static int shape_rank(la_shape s) { return s == LA_MAT ? 2 : s == LA_VEC; }

int64_t shlo__la_dim(la_sig *g, int k, int i) {
  if (k >= g->op->n_operands)
    return -1;
  const shlo_type *t = shlo__cc_operand_type(g->cc, g->op, k);
  if (t->kind != SHLO_TYPE_TENSOR || g->p->nb + i >= t->rank)
    return -1;
  return t->dims[g->p->nb + i];
}

/* "tensor<2x4x4xf32>" for messages. */
static void type_text(char *buf, size_t cap, int nb, const int64_t *bdims,
                      la_shape s, int64_t rows, int64_t cols,
                      shlo_elem_type e) {
  size_t n = (size_t)snprintf(buf, cap, "tensor<");
  int64_t d[SHLO_MAX_RANK + 2];
  int r = 0;
  for (int i = 0; i < nb; i++)
    d[r++] = bdims[i];
  if (s != LA_ONE)
    d[r++] = rows;
  if (s == LA_MAT)
    d[r++] = cols;
  for (int i = 0; i < r && n < cap; i++)
    n += (size_t)snprintf(buf + n, cap - n, "%lldx", (long long)d[i]);
  if (n < cap)
    snprintf(buf + n, cap - n, "%s>", shlo_elem_name(e));
}

static shlo_status want(la_sig *g, bool is_in, int k, shlo_elem_type elem,
                        la_shape shape, int64_t rows, int64_t cols) {
  if (rows < 0)
    rows = 0;
  if (shape != LA_MAT)
    cols = 1;
  if (shape == LA_ONE)
    rows = 1;
  const shlo_type *t = is_in ? shlo__cc_operand_type(g->cc, g->op, k)
                             : shlo__cc_result_type(g->cc, g->op, k);
  int nb = g->p->nb;
  bool ok = t->kind == SHLO_TYPE_TENSOR && t->elem == elem &&
            t->rank == nb + shape_rank(shape);
  for (int i = 0; ok && i < nb; i++)
    ok = t->dims[i] == g->bdims[i];
  if (ok && shape != LA_ONE)
    ok = t->dims[nb] == rows;
  if (ok && shape == LA_MAT)
    ok = t->dims[nb + 1] == cols;
  if (!ok) {
    char wanted[160];
    type_text(wanted, sizeof wanted, nb, g->bdims, shape, rows, cols, elem);
    return shlo__la_fail(g, "%s %d must be a %s", is_in ? "operand" : "result",
                         k, wanted);
  }
  la_slot *s = is_in ? &g->p->in[k] : &g->p->out[k];
  *s = (la_slot){elem, shape, rows, cols, rows * cols, false};
  return SHLO_OK;
}

shlo_status shlo__la_want_in(la_sig *g, int k, shlo_elem_type elem,
                             la_shape shape, int64_t rows, int64_t cols) {
  return want(g, true, k, elem, shape, rows, cols);
}

shlo_status shlo__la_want_scalar_in(la_sig *g, int k, shlo_elem_type elem) {
  const shlo_type *t = shlo__cc_operand_type(g->cc, g->op, k);
  if (t->kind != SHLO_TYPE_TENSOR || t->elem != elem || t->rank != 0)
    return shlo__la_fail(g, "operand %d must be a tensor<%s>", k,
                         shlo_elem_name(elem));
  g->p->in[k] = (la_slot){elem, LA_ONE, 1, 1, 1, true};
  return SHLO_OK;
}

shlo_status shlo__la_want_out(la_sig *g, int k, shlo_elem_type elem,
                              la_shape shape, int64_t rows, int64_t cols) {
  return want(g, false, k, elem, shape, rows, cols);
}

static const shlo_attr *backend_field(la_sig *g, const char *name) {
  const shlo_attr *bc = shlo_op_attr(g->op, "mhlo.backend_config");
  if (!bc || bc->kind != SHLO_ATTR_STRUCT)
    return NULL;
  return shlo_attr_field(bc, name);
}

shlo_status shlo__la_char_attr(la_sig *g, const char *name, char dflt,
                               const char *allowed, char *out) {
  const shlo_attr *a = backend_field(g, name);
  int64_t v = (unsigned char)dflt;
  if (a && !shlo_attr_get_i64(a, &v))
    return shlo__la_fail(g, "backend_config %s must be a ui8 character", name);
  if (v <= 0 || v > 127 || !strchr(allowed, (int)v)) {
    char shown[8];
    snprintf(shown, sizeof shown, v > 32 && v < 127 ? "'%c'" : "%d", (int)v);
    return shlo__la_fail(g, "backend_config %s = %s is not one of \"%s\"", name,
                         shown, allowed);
  }
  *out = (char)v;
  return SHLO_OK;
}

shlo_status shlo__la_int_attr(la_sig *g, const char *name, int32_t dflt,
                              int32_t *out) {
  const shlo_attr *a = backend_field(g, name);
  int64_t v = dflt;
  if (a && !shlo_attr_get_i64(a, &v))
    return shlo__la_fail(g, "backend_config %s must be an integer", name);
  if (v < INT32_MIN || v > INT32_MAX)
    return shlo__la_fail(g, "backend_config %s is out of range", name);
  *out = (int32_t)v;
  return SHLO_OK;
}

/* The layout JAX gives a slot: matrices column-major, batch major. */
static bool layout_is_jax(const shlo_attr *a, int rank, la_shape shape) {
  int64_t l[SHLO_MAX_RANK + 2];
  int n = shlo_attr_i64s(a, l, SHLO_MAX_RANK + 2);
  if (n != rank)
    return false;
  int i = 0;
  if (shape == LA_MAT) {
    if (l[0] != rank - 2 || l[1] != rank - 1)
      return false;
    i = 2;
  }
  for (int want_dim = rank - 1 - i; i < rank; i++, want_dim--)
    if (l[i] != want_dim)
      return false;
  return true;
}

static shlo_status check_layouts(la_sig *g, const char *attr, bool is_in) {
  const shlo_attr *ls = shlo_op_attr(g->op, attr);
  if (!ls)
    return SHLO_OK; /* none given: JAX's */
  int n = is_in ? g->p->n_in : g->p->n_out;
  if (ls->kind != SHLO_ATTR_ARRAY || ls->n != n)
    return shlo__la_fail(g, "%s must list %d layouts", attr, n);
  for (int k = 0; k < n; k++) {
    const la_slot *s = is_in ? &g->p->in[k] : &g->p->out[k];
    int rank = s->unbatched ? 0 : g->p->nb + shape_rank(s->shape);
    if (!layout_is_jax(ls->items[k], rank, s->shape))
      return shlo__cc_fail(g->cc, g->op, SHLO_EUNSUPPORTED,
                           "%s: %s %d has a layout other than JAX's (%s)",
                           g->target, is_in ? "operand" : "result", k,
                           s->shape == LA_MAT
                               ? "column-major matrices, batch major"
                               : "row-major");
  }
  return SHLO_OK;
}

/* ---- the kernel ---- */

typedef struct la_job {
  const la_params *p;
  shlo_value *const *in;
  shlo_value **out;
  shlo_exec *ex;
  atomic_int failed; /* 1: out of memory, 2: stopped */
} la_job;

/* Row-major rows x cols at src -> column-major at dst (or back, with
 * rows and cols swapped), elements of es bytes, in tiles so that both
 * sides stay in cache (a 512 x 512 f64 matrix: 0.3 ms instead of 1.4). */
#define TILE 32
#define TRANSPOSE_TILES(T)                                                     \
  static void transpose_##T(T *d, const T *s, int64_t rows, int64_t cols) {    \
    for (int64_t i0 = 0; i0 < rows; i0 += TILE)                                \
      for (int64_t j0 = 0; j0 < cols; j0 += TILE) {                            \
        int64_t i1 = i0 + TILE < rows ? i0 + TILE : rows;                      \
        int64_t j1 = j0 + TILE < cols ? j0 + TILE : cols;                      \
        for (int64_t j = j0; j < j1; j++)                                      \
          for (int64_t i = i0; i < i1; i++)                                    \
            d[j * rows + i] = s[i * cols + j];                                 \
      }                                                                        \
  }
TRANSPOSE_TILES(uint32_t)
TRANSPOSE_TILES(uint64_t)
typedef struct pair64 {
  uint64_t re, im;
} pair64;
TRANSPOSE_TILES(pair64)

static void transpose(void *dst, const void *src, int64_t rows, int64_t cols,
                      size_t es) {
  switch (es) {
  case 4: transpose_uint32_t(dst, src, rows, cols); break;
  case 8: transpose_uint64_t(dst, src, rows, cols); break;
  default: transpose_pair64(dst, src, rows, cols); break; /* 16 */
  }
}

static void load_slot(const la_slot *s, void *dst, const shlo_value *v,
                      int64_t b) {
  size_t es = shlo_elem_size(s->elem);
  const char *src =
      (const char *)v->data + (size_t)(s->unbatched ? 0 : b * s->per) * es;
  if (s->shape == LA_MAT)
    transpose(dst, src, s->rows, s->cols, es);
  else
    memcpy(dst, src, (size_t)s->per * es);
}

static void store_slot(const la_slot *s, shlo_value *v, const void *src,
                       int64_t b) {
  size_t es = shlo_elem_size(s->elem);
  char *dst = (char *)v->data + (size_t)(b * s->per) * es;
  if (s->shape == LA_MAT)
    transpose(dst, src, s->cols, s->rows, es); /* column-major -> row */
  else
    memcpy(dst, src, (size_t)s->per * es);
}

/* Scratch of one batch element: each slot at a 64-byte boundary, at least
 * one element each (LAPACK may be handed a pointer into an empty array). */
static size_t scratch_layout(const la_params *p, size_t *off_in,
                             size_t *off_out) {
  size_t at = 0;
  for (int k = 0; k < p->n_in + p->n_out; k++) {
    const la_slot *s = k < p->n_in ? &p->in[k] : &p->out[k - p->n_in];
    size_t bytes = (size_t)(s->per > 0 ? s->per : 1) * shlo_elem_size(s->elem);
    if (k < p->n_in)
      off_in[k] = at;
    else
      off_out[k - p->n_in] = at;
    at += (bytes + 63) & ~(size_t)63;
  }
  return at;
}

static void run_range(void *ctx, int64_t begin, int64_t end) {
  la_job *job = ctx;
  const la_params *p = job->p;
  size_t off_in[LA_MAX_IN], off_out[LA_MAX_OUT];
  size_t total = scratch_layout(p, off_in, off_out);
  char *scratch = shlo__malloc(total);
  if (!scratch) {
    atomic_store(&job->failed, 1);
    return;
  }
  void *in[LA_MAX_IN], *out[LA_MAX_OUT];
  for (int k = 0; k < p->n_in; k++)
    in[k] = scratch + off_in[k];
  for (int k = 0; k < p->n_out; k++)
    out[k] = scratch + off_out[k];
  for (int64_t b = begin; b < end && !atomic_load(&job->failed); b++) {
    if (shlo__exec_should_stop(job->ex)) {
      atomic_store(&job->failed, 2);
      break;
    }
    /* results start zeroed (a job's unused outputs stay so); the inputs
     * are overwritten whole */
    memset(scratch + off_out[0], 0, total - off_out[0]);
    for (int k = 0; k < p->n_in; k++)
      load_slot(&p->in[k], in[k], job->in[k], b);
    if (p->fam->run(p, in, out)) {
      atomic_store(&job->failed, 1);
      break;
    }
    for (int k = 0; k < p->n_out; k++)
      store_slot(&p->out[k], job->out[k], out[k], b);
  }
  shlo__free(scratch);
}

static shlo_status k_lapack(const shlo_step *s, shlo_value *const *in,
                            shlo_value **out, shlo_exec *ex) {
  const la_params *p = s->params;
  shlo_value *res[LA_MAX_OUT] = {0};
  for (int k = 0; k < p->n_out; k++) {
    const la_slot *o = &p->out[k];
    int64_t dims[SHLO_MAX_RANK + 2];
    int r = p->nb;
    memcpy(dims, p->bdims, (size_t)r * sizeof *dims);
    if (o->shape != LA_ONE)
      dims[r++] = o->rows;
    if (o->shape == LA_MAT)
      dims[r++] = o->cols;
    res[k] = shlo_tensor_new(o->elem, r, dims);
    if (!res[k]) /* every element is written below, batch by batch */
      goto nomem;
  }
  la_job job = {.p = p, .in = in, .out = res, .ex = ex};
  atomic_init(&job.failed, 0);
  int threads = shlo__la_threads_for(p, shlo__pool_threads());
  if (threads > 1 && shlo__la_threads_raise(threads)) {
    run_range(&job, 0, p->batch);
    shlo__la_threads_lower();
  } else if (p->batch > 1) {
    shlo__parallel_for(p->batch, 1, run_range, &job);
  } else if (p->batch == 1) {
    run_range(&job, 0, 1);
  }
  int failed = atomic_load(&job.failed);
  if (failed == 1)
    goto nomem;
  if (failed == 2) {
    for (int k = 0; k < p->n_out; k++)
      shlo_value_unref(res[k]);
    return shlo__exec_stopped(ex, s);
  }
  for (int k = 0; k < p->n_out; k++)
    out[k] = res[k];
  return SHLO_OK;
nomem:
  for (int k = 0; k < p->n_out; k++)
    shlo_value_unref(res[k]);
  return shlo__exec_fail(ex, s, SHLO_ENOMEM,
                         "out of memory for a LAPACK call's scratch");
}

/* ---- compile ---- */

shlo_status shlo__compile_lapack(shlo_compiler *cc, const shlo_op *op,
                                 shlo_step *step, const char *target) {
  const la_family *fam;
  la_kind kind;
  if (!find_target(target, &fam, &kind))
    return shlo__cc_fail(cc, op, SHLO_EUNSUPPORTED,
                         "custom_call target '%s' is not supported", target);
  la_params *p = shlo__params_alloc(step, sizeof *p);
  if (!p)
    return shlo__cc_fail(cc, op, SHLO_ENOMEM, "out of memory");
  p->fam = fam;
  p->kind = kind;
  la_sig g = {.cc = cc, .op = op, .p = p, .target = target, .bdims = p->bdims};
  if (op->n_operands < 1 || op->n_results < 1)
    return shlo__la_fail(&g, "needs an operand and a result");
  for (int k = 0; k < op->n_operands; k++)
    if (shlo__cc_operand_type(cc, op, k)->kind != SHLO_TYPE_TENSOR)
      return shlo__la_fail(&g, "operand %d must be a tensor", k);
  for (int k = 0; k < op->n_results; k++)
    if (shlo__cc_result_type(cc, op, k)->kind != SHLO_TYPE_TENSOR)
      return shlo__la_fail(&g, "result %d must be a tensor", k);
  /* the batch: operand 0's leading dimensions (gtsv's first operand is a
   * vector, every other family's a matrix) */
  const shlo_type *t0 = shlo__cc_operand_type(cc, op, 0);
  int trailing = fam == &shlo__la_gtsv ? 1 : 2;
  if (t0->rank < trailing)
    return shlo__la_fail(&g, "operand 0 must have rank %d or more", trailing);
  p->nb = t0->rank - trailing;
  p->batch = 1;
  for (int i = 0; i < p->nb; i++) {
    p->bdims[i] = t0->dims[i];
    p->batch *= t0->dims[i];
  }
  for (int i = 0; i < t0->rank; i++)
    if (t0->dims[i] < 0 || t0->dims[i] > INT32_MAX)
      return shlo__la_fail(&g, "needs static dimensions below 2^31");
  /* a string config (an older custom-call API) would leave every
   * attribute at its default: a wrong answer, not a refusal */
  const shlo_attr *bc = shlo_op_attr(op, "mhlo.backend_config");
  if (bc && bc->kind != SHLO_ATTR_STRUCT)
    return shlo__la_fail(&g, "mhlo.backend_config must be a dictionary, as "
                             "JAX's typed FFI calls write it");
  shlo_status st = fam->sig(&g);
  if (st)
    return st;
  /* LAPACK indexes with 32-bit integers, and some workspaces grow as 5 n^2:
   * a matrix of up to 2^28 elements (16384 x 16384) keeps every index and
   * workspace size below 2^31 */
  for (int k = 0; k < p->n_in + p->n_out; k++) {
    const la_slot *sl = k < p->n_in ? &p->in[k] : &p->out[k - p->n_in];
    if (sl->per > ((int64_t)1 << 28))
      return shlo__cc_fail(cc, op, SHLO_EUNSUPPORTED,
                           "%s: a matrix of %lld elements is more than "
                           "LAPACK's 32-bit indices allow here (2^28)",
                           target, (long long)sl->per);
  }
  if ((st = check_layouts(&g, "operand_layouts", true)) ||
      (st = check_layouts(&g, "result_layouts", false)))
    return st;
  step->fn = k_lapack;
  /* --explain and profiles name the routine (optional: no label, no harm) */
  size_t cap = strlen(op->name) + strlen(target) + 3;
  if ((step->label = shlo__malloc(cap)))
    snprintf(step->label, cap, "%s @%s", op->name, target);
  return SHLO_OK;
}
