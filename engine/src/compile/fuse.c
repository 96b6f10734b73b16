/* Elementwise fusion.
 *
 * A run of consecutive steps that are pure loops over the same number of
 * elements (elementwise ops and convert, which set step->range, and
 * broadcast_in_dim of a smaller operand, read in place) becomes one step.  It walks the elements
 * in cache-sized chunks, split across the pool, applying every member to
 * the chunk in turn; values used only inside the run live in per-chunk
 * scratch instead of whole tensors, so a chain of N ops reads and writes
 * memory once instead of N times. */
#include <stdatomic.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/fuse.h"
#include "ops/ops.h"
#include "runtime/exec.h"
#include "runtime/pool.h"

#define FUSE_MIN_NUMEL 4096 /* below this, separate steps are as fast */
#define FUSE_CHUNK 2048     /* elements per pass: members' scratch fits L2 */
#define FUSE_GRAIN (16 * FUSE_CHUNK)
#define SCRATCH_ELEM 16     /* bytes: the largest element (complex<f64>) */
/* Longest run: each member has FUSE_CHUNK * SCRATCH_ELEM bytes of scratch
 * per worker, so an endless chain may not make it endless (2 MiB). */
#define FUSE_MAX_MEMBERS 64

/* How a broadcast_in_dim member reads its operand: the operand offset of
 * result element i follows i's multi-index with these strides (0 along
 * broadcast dimensions). */
typedef struct bcast_map {
  int rank;
  int64_t dims[SHLO_MAX_RANK];
  int64_t src_stride[SHLO_MAX_RANK];
} bcast_map;

typedef struct member {
  shlo_step step; /* the original step, moved here */
  bool bcast;     /* broadcast_in_dim of a smaller operand */
  bcast_map map;
  int n_in;
  int ref[3];     /* >= 0: external input; < 0: -(m + 1), member m's value */
  int out;        /* index among the fused step's outputs, or -1 */
  size_t esz;     /* element size of its result */
} member;

typedef struct output {
  shlo_elem_type elem;
  int rank;
  int64_t dims[SHLO_MAX_RANK];
} output;

typedef struct fused {
  int n_members;
  member *m;
  int n_ext;
  size_t *ext_esz;  /* 0 for an input that does not advance (one element) */
  int n_out;
  output *outs;
  int64_t numel;
} fused;

static void fused_free(void *p) {
  fused *f = p;
  if (!f) return;
  for (int i = 0; i < f->n_members; i++) shlo__step_free(&f->m[i].step);
  free(f->m);
  free(f->ext_esz);
  free(f->outs);
  free(f);
}

/* Copy one element value `n` times (a run along a broadcast dimension). */
static void splat_run(char *dst, const char *src, int64_t n, size_t esz) {
  switch (esz) {
  case 4: {
    uint32_t v;
    memcpy(&v, src, 4);
    for (int64_t i = 0; i < n; i++) memcpy(dst + 4 * i, &v, 4);
    break;
  }
  case 8: {
    uint64_t v;
    memcpy(&v, src, 8);
    for (int64_t i = 0; i < n; i++) memcpy(dst + 8 * i, &v, 8);
    break;
  }
  default:
    for (int64_t i = 0; i < n; i++) memcpy(dst + (size_t)i * esz, src, esz);
  }
}

/* dst[0..n) = the broadcast's elements b .. b+n-1, a run along the last
 * dimension at a time: a memcpy where the operand is contiguous there, a
 * fill where it is broadcast. */
static void bcast_fill(const bcast_map *m, const char *src, char *dst,
                       int64_t b, int64_t n, size_t esz) {
  int64_t idx[SHLO_MAX_RANK], off = 0, rem = b;
  int last = m->rank - 1;
  if (last < 0) { /* rank 0: one element */
    splat_run(dst, src, n, esz);
    return;
  }
  for (int d = last; d >= 0; d--) {
    idx[d] = m->dims[d] ? rem % m->dims[d] : 0;
    rem = m->dims[d] ? rem / m->dims[d] : 0;
    off += idx[d] * m->src_stride[d];
  }
  int64_t inner = m->src_stride[last];
  for (int64_t k = 0; k < n;) {
    int64_t run = m->dims[last] - idx[last];
    if (run > n - k) run = n - k;
    char *d = dst + (size_t)k * esz;
    const char *s = src + (size_t)off * esz;
    if (inner == 1) memcpy(d, s, (size_t)run * esz);
    else if (inner == 0) splat_run(d, s, run, esz);
    else
      for (int64_t i = 0; i < run; i++)
        memcpy(d + (size_t)i * esz, s + (size_t)(i * inner) * esz, esz);
    k += run;
    off += run * inner;
    idx[last] += run;
    if (idx[last] < m->dims[last]) continue;
    /* carry into the outer dimensions */
    off -= inner * m->dims[last];
    idx[last] = 0;
    for (int d = last - 1; d >= 0; d--) {
      off += m->src_stride[d];
      if (++idx[d] < m->dims[d]) break;
      off -= m->src_stride[d] * m->dims[d];
      idx[d] = 0;
    }
  }
}

typedef struct fused_run {
  const fused *f;
  shlo_value *const *in;
  shlo_value **out;
  atomic_int failed;
} fused_run;

static void fused_chunk(void *ctx, int64_t lo, int64_t hi) {
  fused_run *r = ctx;
  const fused *f = r->f;
  char *scratch = malloc((size_t)f->n_members * FUSE_CHUNK * SCRATCH_ELEM);
  if (!scratch) {
    atomic_store(&r->failed, 1);
    return;
  }
  char **val = malloc((size_t)f->n_members * sizeof *val);
  if (!val) {
    free(scratch);
    atomic_store(&r->failed, 1);
    return;
  }
  for (int64_t b = lo; b < hi; b += FUSE_CHUNK) {
    int64_t n = hi - b < FUSE_CHUNK ? hi - b : FUSE_CHUNK;
    for (int k = 0; k < f->n_members; k++) {
      const member *m = &f->m[k];
      const void *x[3];
      for (int i = 0; i < m->n_in; i++) {
        int ref = m->ref[i];
        x[i] = ref < 0 ? val[-ref - 1]
                       : (const char *)r->in[ref]->data +
                             (size_t)b * f->ext_esz[ref];
      }
      char *d = m->out >= 0
                    ? (char *)r->out[m->out]->data + (size_t)b * m->esz
                    : scratch + (size_t)k * FUSE_CHUNK * SCRATCH_ELEM;
      if (m->bcast) {
        bcast_fill(&m->map, x[0], d, b, n, m->esz);
      } else {
        m->step.range(&m->step, d, x, n);
      }
      val[k] = d;
    }
  }
  free(val);
  free(scratch);
}

static shlo_status k_fused(const shlo_step *s, shlo_value *const *in,
                           shlo_value **out, shlo_exec *ex) {
  const fused *f = s->params;
  for (int k = 0; k < f->n_out; k++) {
    out[k] = shlo_tensor_new(f->outs[k].elem, f->outs[k].rank, f->outs[k].dims);
    if (!out[k])
      return shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory for a result");
  }
  fused_run r = {f, in, out, 0};
  shlo__parallel_for(f->numel, FUSE_GRAIN, fused_chunk, &r);
  if (atomic_load(&r.failed))
    return shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory for scratch");
  return SHLO_OK;
}

/* ---- finding runs ---- */

static int64_t slot_numel(const shlo_type *const *types, int slot) {
  const shlo_type *t = types[slot];
  return t && t->kind == SHLO_TYPE_TENSOR ? shlo_type_numel(t) : -1;
}

/* A broadcast_in_dim of a smaller operand, which a run can read in
 * place through a bcast_map instead of materialising. */
static bool is_bcast(const shlo_step *s, const shlo_type *const *types) {
  if (!s->op || s->op->code != SHLO_OP_BROADCAST_IN_DIM || s->n_in != 1 ||
      s->n_out != 1)
    return false;
  int64_t n_in = slot_numel(types, s->in[0]);
  int64_t n_out = slot_numel(types, s->out[0]);
  return n_in >= 1 && n_in < n_out;
}

static bool bcast_map_of(const shlo_step *s, const shlo_type *const *types,
                         bcast_map *m) {
  const shlo_type *it = types[s->in[0]], *rt = types[s->out[0]];
  int64_t bd[SHLO_MAX_RANK], istr[SHLO_MAX_RANK];
  if (shlo_attr_i64s(shlo_op_attr(s->op, "broadcast_dimensions"), bd,
                     SHLO_MAX_RANK) != it->rank)
    return false;
  memset(m, 0, sizeof *m);
  m->rank = rt->rank;
  memcpy(m->dims, rt->dims, sizeof m->dims);
  shlo_strides(it->rank, it->dims, istr);
  for (int j = 0; j < it->rank; j++) {
    if (bd[j] < 0 || bd[j] >= rt->rank) return false;
    if (it->dims[j] == rt->dims[bd[j]]) m->src_stride[bd[j]] = istr[j];
    else if (it->dims[j] != 1) return false;
  }
  return true;
}

static bool fusable(const shlo_step *s, const shlo_type *const *types,
                    int64_t numel) {
  if (s->n_out != 1 || s->n_plans || slot_numel(types, s->out[0]) != numel)
    return false;
  if (is_bcast(s, types)) {
    bcast_map m;
    return bcast_map_of(s, types, &m);
  }
  if (!s->range) return false;
  /* Operands are whole (numel) or, for select/clamp, one element that
   * does not advance. */
  for (int k = 0; k < s->n_in; k++) {
    int64_t n = slot_numel(types, s->in[k]);
    if (n != numel && !(n == 1 && s->n_in == 3)) return false;
  }
  return s->n_in <= 3;
}

/* Per-slot lookups that keep fusion linear in the plan's size.  last_read
 * holds, for each slot, the last step that reads it (INT_MAX for a
 * result); member_of and ext_of map a slot to its writer in the run being
 * built (+1) and to its place among the run's external inputs (+1), and
 * are zeroed again once the run is built. */
typedef struct fuse_index {
  int *last_read;
  int *member_of;
  int *ext_of;
} fuse_index;

static bool used_outside(const fuse_index *x, int last, int slot) {
  return x->last_read[slot] >= last;
}

static void append_label(char *buf, size_t cap, const char *name) {
  size_t len = strlen(buf);
  const char *dot = strchr(name, '.');
  snprintf(buf + len, cap - len, "%s%s", len > 6 ? ", " : "",
           dot ? dot + 1 : name);
}

/* Where member k's input slot comes from: -(j + 1) for earlier member j's
 * output, else its index among the fused step's external inputs (added to
 * fs->in when new, with its element size when it has numel elements, 0
 * for a broadcast scalar). */
static int fuse_input_ref(fuse_index *x, int slot,
                          const shlo_type *const *types, int64_t numel,
                          fused *f, shlo_step *fs) {
  if (x->member_of[slot]) return -x->member_of[slot];
  if (x->ext_of[slot]) return x->ext_of[slot] - 1;
  int ref = fs->n_in;
  fs->in[fs->n_in++] = slot;
  x->ext_of[slot] = ref + 1;
  f->ext_esz[ref] = slot_numel(types, slot) == numel
                        ? shlo_elem_size(types[slot]->elem)
                        : 0;
  return ref;
}

/* Describe member k (step first + k of p) in f; its output becomes one of
 * the fused step's outputs when a step outside [first, last) reads it. */
static void fuse_member(const shlo_plan *p, int first, int last, int k,
                        fuse_index *x, const shlo_type *const *types,
                        int64_t numel, fused *f, shlo_step *fs) {
  const shlo_step *s = &p->steps[first + k];
  member *m = &f->m[k];
  m->bcast = !s->range;
  if (m->bcast) bcast_map_of(s, types, &m->map);
  m->n_in = s->n_in;
  for (int i = 0; i < s->n_in; i++)
    m->ref[i] = fuse_input_ref(x, s->in[i], types, numel, f, fs);
  x->member_of[s->out[0]] = k + 1;
  const shlo_type *rt = types[s->out[0]];
  m->esz = shlo_elem_size(rt->elem);
  m->out = -1;
  if (used_outside(x, last, s->out[0])) {
    m->out = fs->n_out;
    output *o = &f->outs[fs->n_out];
    o->elem = rt->elem;
    o->rank = rt->rank;
    memcpy(o->dims, rt->dims, sizeof o->dims);
    fs->out[fs->n_out++] = s->out[0];
  }
  append_label(fs->label, 512, s->op ? s->op->name : "?");
}

/* Replace steps [first, last) of p by one fused step written to *dst. */
static shlo_status fuse_run(shlo_plan *p, int first, int last,
                            fuse_index *x, const shlo_type *const *types,
                            int64_t numel, shlo_step *dst) {
  int n = last - first;
  fused *f = calloc(1, sizeof *f);
  shlo_step fs = {0};
  if (!f) return SHLO_ENOMEM;
  f->numel = numel;
  f->m = calloc((size_t)n, sizeof *f->m);
  f->ext_esz = calloc((size_t)3 * n, sizeof *f->ext_esz);
  f->outs = calloc((size_t)n, sizeof *f->outs);
  fs.in = malloc((size_t)3 * n * sizeof *fs.in);
  fs.out = malloc((size_t)n * sizeof *fs.out);
  fs.label = calloc(1, 512);
  if (!f->m || !f->ext_esz || !f->outs || !fs.in || !fs.out || !fs.label) {
    fused_free(f);
    free(fs.in);
    free(fs.out);
    free(fs.label);
    return SHLO_ENOMEM;
  }
  snprintf(fs.label, 512, "fused(");
  for (int k = 0; k < n; k++)
    fuse_member(p, first, last, k, x, types, numel, f, &fs);
  for (int k = 0; k < n; k++) x->member_of[p->steps[first + k].out[0]] = 0;
  for (int e = 0; e < fs.n_in; e++) x->ext_of[fs.in[e]] = 0;
  size_t len = strlen(fs.label);
  snprintf(fs.label + len, 512 - len, ")");
  f->n_members = n;
  f->n_ext = fs.n_in;
  f->n_out = fs.n_out;
  /* The members move into the fused step; their slots stay as they are. */
  for (int k = 0; k < n; k++) {
    f->m[k].step = p->steps[first + k];
    memset(&p->steps[first + k], 0, sizeof p->steps[first + k]);
  }
  fs.fn = k_fused;
  fs.op = f->m[0].step.op;
  fs.params = f;
  fs.free_params = fused_free;
  *dst = fs;
  return SHLO_OK;
}

/* Constants have no inputs and cost nothing to keep alive (they share the
 * module's literal), so they move to the front of the plan, where they no
 * longer split the runs JAX interleaves them with. */
static shlo_status hoist_constants(shlo_plan *p) {
  shlo_step *tmp = malloc((size_t)(p->n_steps ? p->n_steps : 1) * sizeof *tmp);
  if (!tmp) return SHLO_ENOMEM;
  int w = 0;
  for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i < p->n_steps; i++) {
      bool is_const = p->steps[i].op && p->steps[i].op->code == SHLO_OP_CONSTANT;
      if (is_const == (pass == 0)) tmp[w++] = p->steps[i];
    }
  memcpy(p->steps, tmp, (size_t)p->n_steps * sizeof *tmp);
  free(tmp);
  return SHLO_OK;
}

static void fuse_index_free(fuse_index *x) {
  free(x->last_read);
  free(x->member_of);
  free(x->ext_of);
}

/* last_read over the plan as it stands (after hoisting), zeroed maps. */
static shlo_status fuse_index_init(fuse_index *x, const shlo_plan *p) {
  size_t n = (size_t)p->n_slots + 1;
  x->last_read = malloc(n * sizeof *x->last_read);
  x->member_of = calloc(n, sizeof *x->member_of);
  x->ext_of = calloc(n, sizeof *x->ext_of);
  if (!x->last_read || !x->member_of || !x->ext_of) {
    fuse_index_free(x);
    return SHLO_ENOMEM;
  }
  for (int s = 0; s < p->n_slots; s++) x->last_read[s] = -1;
  for (int i = 0; i < p->n_steps; i++)
    for (int k = 0; k < p->steps[i].n_in; k++)
      x->last_read[p->steps[i].in[k]] = i;
  for (int k = 0; k < p->n_results; k++) x->last_read[p->result_slots[k]] = INT_MAX;
  return SHLO_OK;
}

shlo_status shlo__fuse_plan(shlo_plan *p, const shlo_type *const *types) {
  shlo_status st0 = hoist_constants(p);
  if (st0) return st0;
  fuse_index x = {0};
  st0 = fuse_index_init(&x, p);
  if (st0) return st0;
  int w = 0;
  for (int i = 0; i < p->n_steps;) {
    const shlo_step *s = &p->steps[i];
    int64_t numel = s->n_out == 1 ? slot_numel(types, s->out[0]) : -1;
    int j = i;
    if (numel >= FUSE_MIN_NUMEL)
      while (j < p->n_steps && j - i < FUSE_MAX_MEMBERS &&
             fusable(&p->steps[j], types, numel))
        j++;
    if (j - i >= 2) {
      shlo_step fs;
      shlo_status st = fuse_run(p, i, j, &x, types, numel, &fs);
      if (st) {
        fuse_index_free(&x);
        return st;
      }
      p->steps[w++] = fs;
      i = j;
    } else {
      if (w != i) p->steps[w] = p->steps[i];
      w++;
      i++;
    }
  }
  p->n_steps = w;
  fuse_index_free(&x);
  return SHLO_OK;
}
