/* SPDX-License-Identifier: Apache-2.0 */
/* stablehlo.sort: variadic, stable or not, any comparator.
 *
 * Spec: sort.  Every 1-D slice along `dimension` (negative counts from the
 * end) of all inputs is sorted together: a permutation of the slice is
 * found with the comparator, then applied to every input.  The comparator
 * gets 2*N scalars, (lhs_0, rhs_0, lhs_1, rhs_1, ...), and returns true
 * when lhs sorts before rhs.  The sort is a merge sort (insertion-sorted
 * runs, then bottom-up merges) that takes the right element only when it is
 * strictly before the left one, so it is stable whether or not is_stable
 * asks for it.
 *
 * A comparator that is one stablehlo.compare LT/LE/GT/GE of the two
 * arguments of one input (often the first), with any compare_type, runs
 * natively: that input's slice is turned into keys (signed, unsigned,
 * IEEE double, or TOTALORDER ordered integers, where -NaN < -Inf < ... <
 * -0 < +0 < ... < +Inf < +NaN) and sorted by a merge sort specialised per
 * key kind and direction, or, for integer keys compared LT or GT in long
 * slices, by a stable radix sort (radix.h), which gives the same order.
 * A keyed comparator, compare(f(a), f(b)) with one pure f (jnp.sort's
 * -0/NaN canonicalisation), gets its keys f(x) from the region's scalar
 * program run over blocks of elements (lanes.h; only the ops f needs)
 * and then sorts natively.  4-byte keys (f32 TOTALORDER, si32, ui32)
 * compared LT or GT in long slices become 32-bit words in ascending
 * unsigned order, made in parts on the pool, and sort by radix (also in
 * parts): one operand whose keys are its own bits (a plain compare, or a
 * keyed one where f(x) == x on the whole slice, as for jnp.sort of data
 * without -0 and NaN) sorts the bare words and decodes them into the
 * result; any other one operand of 4 bytes sorts words with its bits
 * below the key; several operands sort words with the index below the
 * key and are permuted by it.  Other comparators run their region per
 * comparison. */
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/tensor_uninit.h"
#include "core/value.h"
#include "kernels/lanes.h"
#include "kernels/radix.h"
#include "kernels/reduce_int.h"
#include "runtime/pool.h"

/* How a 4-byte key's bits become a word that orders the same way as
 * unsigned (before flip). */
typedef enum { CODE_NONE, CODE_U32, CODE_S32, CODE_F32T } key_code;

typedef struct sort_params {
  int n;
  int rank;                   /* >= 1 */
  int dim;
  int64_t dims[SHLO_MAX_RANK], str[SHLO_MAX_RANK];
  int64_t numel;
  shlo_elem_type et[SHLO_RB_MAX_N];
  const shlo_type *out_type[SHLO_RB_MAX_N];
  shlo_rb_compare cmp;        /* cmp.ok: native comparator */
  /* A keyed comparator, compare(f(a_k), f(b_k)) with the same pure scalar
   * function f on both sides (JAX's float sort canonicalises -0 and NaN
   * this way): keys f(x) come from the region's scalar program, one run
   * per element, and the sort itself is native. */
  bool keyed;
  int key_slot;               /* register of f(a_k) in the scalar program */
  size_t key_size;
  /* 4-byte keys compared LT or GT (f32 TOTALORDER, si32, ui32): their
   * bits map to 32-bit words in ascending unsigned order (key_code), and
   * long slices sort those by radix. */
  key_code code;
  uint32_t flip;              /* GT: every word inverted */
} sort_params;

typedef struct sort_pair {
  shlo_key k;
  int64_t i;
} sort_pair;

#define SORT_RUN 16

/* A stable merge sort of pairs by key, LESS(x, y) meaning x before y. */
#define DEF_MSORT(NAME, LESS)                                               \
  static void msort_##NAME(sort_pair *a, sort_pair *tmp, int64_t n) {       \
    for (int64_t lo = 0; lo < n; lo += SORT_RUN) {                          \
      int64_t hi = lo + SORT_RUN < n ? lo + SORT_RUN : n;                   \
      for (int64_t i = lo + 1; i < hi; i++) {                               \
        sort_pair x = a[i];                                                 \
        int64_t j = i;                                                      \
        while (j > lo && LESS(x.k, a[j - 1].k)) {                           \
          a[j] = a[j - 1];                                                  \
          j--;                                                              \
        }                                                                   \
        a[j] = x;                                                           \
      }                                                                     \
    }                                                                       \
    sort_pair *src = a, *dst = tmp;                                         \
    for (int64_t w = SORT_RUN; w < n; w *= 2) {                             \
      for (int64_t lo = 0; lo < n; lo += 2 * w) {                           \
        int64_t mid = lo + w < n ? lo + w : n;                              \
        int64_t hi = lo + 2 * w < n ? lo + 2 * w : n;                       \
        int64_t i = lo, j = mid, k = lo;                                    \
        while (i < mid && j < hi)                                           \
          dst[k++] = LESS(src[j].k, src[i].k) ? src[j++] : src[i++];        \
        while (i < mid) dst[k++] = src[i++];                                \
        while (j < hi) dst[k++] = src[j++];                                 \
      }                                                                     \
      sort_pair *t = src;                                                   \
      src = dst;                                                            \
      dst = t;                                                              \
    }                                                                       \
    if (src != a) memcpy(a, src, (size_t)n * sizeof *a);                    \
  }

#define L_I_LT(x, y) ((x).i < (y).i)
#define L_I_LE(x, y) ((x).i <= (y).i)
#define L_I_GT(x, y) ((x).i > (y).i)
#define L_I_GE(x, y) ((x).i >= (y).i)
#define L_U_LT(x, y) ((x).u < (y).u)
#define L_U_LE(x, y) ((x).u <= (y).u)
#define L_U_GT(x, y) ((x).u > (y).u)
#define L_U_GE(x, y) ((x).u >= (y).u)
#define L_F_LT(x, y) ((x).f < (y).f)
#define L_F_LE(x, y) ((x).f <= (y).f)
#define L_F_GT(x, y) ((x).f > (y).f)
#define L_F_GE(x, y) ((x).f >= (y).f)
DEF_MSORT(i_lt, L_I_LT)
DEF_MSORT(i_le, L_I_LE)
DEF_MSORT(i_gt, L_I_GT)
DEF_MSORT(i_ge, L_I_GE)
DEF_MSORT(u_lt, L_U_LT)
DEF_MSORT(u_le, L_U_LE)
DEF_MSORT(u_gt, L_U_GT)
DEF_MSORT(u_ge, L_U_GE)
DEF_MSORT(f_lt, L_F_LT)
DEF_MSORT(f_le, L_F_LE)
DEF_MSORT(f_gt, L_F_GT)
DEF_MSORT(f_ge, L_F_GE)

typedef void (*msort_fn)(sort_pair *, sort_pair *, int64_t);
/* [key kind][direction] */
static const msort_fn msort_tab[3][4] = {
    [SHLO_KEY_I64] = {msort_i_lt, msort_i_le, msort_i_gt, msort_i_ge},
    [SHLO_KEY_U64] = {msort_u_lt, msort_u_le, msort_u_gt, msort_u_ge},
    [SHLO_KEY_F64] = {msort_f_lt, msort_f_le, msort_f_gt, msort_f_ge},
};

/* ---- the generic comparator ---- */

typedef struct gsort_ctx {
  const shlo_step *s;
  shlo_value *const *in;
  shlo_exec *ex;
  shlo_rb_call call;
  int n;
  size_t esz[SHLO_RB_MAX_N];
  const char *slice[SHLO_RB_MAX_N]; /* operand data at the slice start */
  int64_t step;                     /* element stride along the dimension */
  shlo_status st;
} gsort_ctx;

/* comparator(x, y): x sorts before y. */
static bool gless(gsort_ctx *c, int64_t x, int64_t y) {
  if (c->st) return false;
  const void *src[2 * SHLO_RB_MAX_N];
  for (int k = 0; k < c->n; k++) {
    src[2 * k] = c->slice[k] + (size_t)(x * c->step) * c->esz[k];
    src[2 * k + 1] = c->slice[k] + (size_t)(y * c->step) * c->esz[k];
  }
  uint8_t pred = 0;
  void *dst = &pred;
  c->st = shlo__rb_apply(&c->call, c->s, 0, c->in, src, &dst, c->ex);
  return !c->st && pred != 0;
}

static void gsort(gsort_ctx *c, int64_t *a, int64_t *tmp, int64_t n) {
  for (int64_t lo = 0; lo < n; lo += SORT_RUN) {
    int64_t hi = lo + SORT_RUN < n ? lo + SORT_RUN : n;
    for (int64_t i = lo + 1; i < hi; i++) {
      int64_t x = a[i], j = i;
      while (j > lo && gless(c, x, a[j - 1])) {
        a[j] = a[j - 1];
        j--;
      }
      a[j] = x;
    }
  }
  int64_t *src = a, *dst = tmp;
  for (int64_t w = SORT_RUN; w < n; w *= 2) {
    for (int64_t lo = 0; lo < n; lo += 2 * w) {
      int64_t mid = lo + w < n ? lo + w : n;
      int64_t hi = lo + 2 * w < n ? lo + 2 * w : n;
      int64_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi)
        dst[k++] = gless(c, src[j], src[i]) ? src[j++] : src[i++];
      while (i < mid) dst[k++] = src[i++];
      while (j < hi) dst[k++] = src[j++];
    }
    int64_t *t = src;
    src = dst;
    dst = t;
  }
  if (src != a) memcpy(a, src, (size_t)n * sizeof *a);
}

/* ---- the kernel ---- */

/* Most parts a long slice's keys are made in on the pool, and the least
 * elements a part is worth having. */
#define SORT_PARTS 16
#define SORT_PART_MIN ((int64_t)1 << 16)

/* What one run of k_sort works with. */
typedef struct sort_run {
  const shlo_step *s;
  const sort_params *p;
  shlo_value *const *in;
  shlo_value **out;
  size_t esz[SHLO_RB_MAX_N];
  int64_t len, sd;   /* the sorted dimension: extent, element stride */
  int64_t *perm;     /* the order of one slice, then as much scratch */
  sort_pair *pairs;  /* native comparator: keys of one slice, and scratch */
  uint64_t *words;   /* radix_applies: keys and indices, and scratch */
  uint32_t *k32;     /* radix32_applies: 32-bit key words, and scratch */
  msort_fn ms;       /* native comparator: the merge sort */
  shlo_key *keys;    /* native comparator: the keys of one slice */
  /* keyed comparator: its key program over lanes, one per part of a
   * slice whose keys are made on the pool (SORT_PARTS) */
  shlo_lanes lanes[SORT_PARTS];
  int n_lanes;       /* how many are set up */
  int parts;         /* how many a slice's keys are made in */
  char *gather;      /* keyed, strided slices: operands' lanes gathered,
                      * GATHER_BYTES per part */
  shlo_value *perm_t, *words_t, *keys_t, *k32_t; /* where scratch lives */
  bool call_ready;
  gsort_ctx *gc;     /* comparator region */
  shlo_exec *ex;
} sort_run;

/* Set up gc to apply the comparator region of s to pairs of elements
 * `step` apart. */
static shlo_status gsort_init(gsort_ctx *gc, const shlo_step *s,
                              shlo_value *const *in, shlo_exec *ex,
                              const size_t *esz, int64_t step) {
  const sort_params *p = s->params;
  int n = p->n;
  shlo_elem_type lead[2 * SHLO_RB_MAX_N] = {0}, i1 = SHLO_I1;
  for (int k = 0; k < n; k++) lead[2 * k] = lead[2 * k + 1] = p->et[k];
  shlo_status st = shlo__rb_call_init(&gc->call, lead, 2 * n, &i1, 1, s, ex);
  if (st) return st;
  gc->s = s;
  gc->in = in;
  gc->ex = ex;
  gc->n = n;
  gc->step = step;
  for (int k = 0; k < n; k++) gc->esz[k] = esz[k];
  return SHLO_OK;
}

/* keys[0..len) = the native comparator's keys of the slice at base. */
static void plain_keys(const sort_run *r, int64_t base, shlo_key *keys) {
  const sort_params *p = r->p;
  int kk = p->cmp.arg_pair;
  size_t e = r->esz[kk];
  const char *key = (const char *)r->in[kk]->data + (size_t)base * e;
  for (int64_t i = 0; i < r->len; i++)
    keys[i] = shlo__rb_key(&p->cmp, key + (size_t)(i * r->sd) * e);
}

/* The same for a keyed comparator: the region's scalar program runs on
 * SHLO_LANES elements at a time (lanes.h), both arguments of each pair
 * being the element itself, and its key register gives the keys.  A
 * strided slice is gathered into r->gather first.  keyed_block runs the
 * block of cnt elements from i0 and returns the keys' register, *own the
 * key operand's elements (contiguous). */
#define GATHER_BYTES(p) ((size_t)(p)->n * SHLO_LANES * 16)

static const char *keyed_block(sort_run *r, int part, int64_t base,
                               int64_t i0, int64_t cnt, const void **own) {
  const sort_params *p = r->p;
  shlo_lanes *l = &r->lanes[part];
  const void *lead[2 * SHLO_RB_MAX_N];
  for (int k = 0; k < p->n; k++) {
    size_t e = r->esz[k];
    const char *src =
        (const char *)r->in[k]->data + (size_t)(base + i0 * r->sd) * e;
    if (r->sd != 1) {
      char *g = r->gather + part * GATHER_BYTES(p) +
                (size_t)k * SHLO_LANES * 16;
      for (int64_t j = 0; j < cnt; j++)
        memcpy(g + (size_t)j * e, src + (size_t)(j * r->sd) * e, e);
      src = g;
    }
    lead[2 * k] = lead[2 * k + 1] = src;
  }
  shlo__lanes_run(l, r->s, 0, r->in, lead, 2 * p->n, cnt);
  *own = lead[2 * p->cmp.arg_pair];
  return l->at[p->key_slot];
}

static void keyed_keys(sort_run *r, int64_t base, shlo_key *keys) {
  const sort_params *p = r->p;
  for (int64_t i0 = 0; i0 < r->len; i0 += SHLO_LANES) {
    int64_t cnt = r->len - i0 < SHLO_LANES ? r->len - i0 : SHLO_LANES;
    const void *own;
    const char *kv = keyed_block(r, 0, base, i0, cnt, &own);
    for (int64_t j = 0; j < cnt; j++)
      keys[i0 + j] = shlo__rb_key(&p->cmp, kv + (size_t)j * p->key_size);
  }
}

static void slice_keys(sort_run *r, int64_t base, shlo_key *keys) {
  if (r->p->keyed) keyed_keys(r, base, keys);
  else plain_keys(r, base, keys);
}

/* Integer keys compared LT or GT sort by radix (radix.h) once a slice is
 * this long; the merge sort does the rest. */
#define SORT_RADIX_MIN 512

static bool radix_applies(const sort_params *p, int64_t len) {
  return p->cmp.ok && p->cmp.kind != SHLO_KEY_F64 && len >= SORT_RADIX_MIN &&
         (p->cmp.dir == SHLO_DIR_LT || p->cmp.dir == SHLO_DIR_GT);
}

/* The key in ascending unsigned order: a strict LT/GT order on keys is
 * the same order on these, and equal keys stay equal (so a stable sort of
 * either is the comparator's stable sort). */
static uint64_t radix_key(const shlo_rb_compare *c, shlo_key k) {
  uint64_t u = c->kind == SHLO_KEY_I64 ? (uint64_t)k.i ^ (1ull << 63) : k.u;
  return c->dir == SHLO_DIR_GT ? ~u : u;
}

static int bit_width(uint64_t v) { return v ? 64 - __builtin_clzll(v) : 0; }

/* The slice's order by radix: each key (ascending-unsigned, relative to
 * the smallest) above its index in one word, sorted by the key bits.
 * False when key and index do not fit in 64 bits together. */
static bool radix_order(sort_run *r, int64_t base) {
  int64_t len = r->len;
  uint64_t *w = r->words, lo = UINT64_MAX, hi = 0;
  shlo_key *keys = r->keys;
  slice_keys(r, base, keys);
  for (int64_t i = 0; i < len; i++) {
    w[i] = radix_key(&r->p->cmp, keys[i]);
    lo = w[i] < lo ? w[i] : lo;
    hi = w[i] > hi ? w[i] : hi;
  }
  int ib = bit_width((uint64_t)len - 1), kb = bit_width(hi - lo);
  if (ib + kb > 64) return false;
  for (int64_t i = 0; i < len; i++) /* ib >= 9: len >= SORT_RADIX_MIN */
    w[i] = (w[i] - lo) << ib | (uint64_t)i;
  const uint64_t *sorted = shlo__radix_sort(w, w + len, len, ib, ib + kb);
  if (!sorted) return false; /* out of memory: the merge sort needs none */
  uint64_t mask = (1ull << ib) - 1;
  for (int64_t i = 0; i < len; i++) r->perm[i] = (int64_t)(sorted[i] & mask);
  return true;
}

/* r->perm = the sorted order of the slice that starts at element base. */
static shlo_status sort_slice_order(sort_run *r, int64_t base) {
  const sort_params *p = r->p;
  int64_t len = r->len;
  if (r->words && radix_order(r, base)) return SHLO_OK;
  if (r->ms) {
    slice_keys(r, base, r->keys);
    for (int64_t i = 0; i < len; i++)
      r->pairs[i] = (sort_pair){r->keys[i], i};
    r->ms(r->pairs, r->pairs + len, len);
    for (int64_t i = 0; i < len; i++) r->perm[i] = r->pairs[i].i;
    return SHLO_OK;
  }
  gsort_ctx *gc = r->gc;
  for (int k = 0; k < p->n; k++)
    gc->slice[k] = (const char *)r->in[k]->data + (size_t)base * r->esz[k];
  for (int64_t i = 0; i < len; i++) r->perm[i] = i;
  gsort(gc, r->perm, r->perm + len, len);
  return gc->st;
}

/* Every output's slice at base = its input's, in the order r->perm. */
static void sort_permute_slice(const sort_run *r, int64_t base) {
  int64_t sd = r->sd;
  for (int k = 0; k < r->p->n; k++) {
    size_t e = r->esz[k];
    const char *src = (const char *)r->in[k]->data + (size_t)base * e;
    char *dst = (char *)r->out[k]->data + (size_t)base * e;
    if (sd == 1 && e == 4) { /* the common case, without a call per element */
      for (int64_t i = 0; i < r->len; i++)
        ((uint32_t *)dst)[i] = ((const uint32_t *)src)[r->perm[i]];
      continue;
    }
    for (int64_t i = 0; i < r->len; i++)
      memcpy(dst + (size_t)(i * sd) * e, src + (size_t)(r->perm[i] * sd) * e,
             e);
  }
}

/* Scratch of `bytes` as a tensor: counted against the execution's memory
 * limit, and its pages recycled from one run to the next.  Not zeroed:
 * every use writes before it reads. */
static void *scratch_new(shlo_value **holder, size_t bytes) {
  int64_t n = (int64_t)bytes;
  *holder = shlo__tensor_new_uninit(SHLO_UI8, 1, &n);
  return *holder ? (*holder)->data : NULL;
}

/* ---- 32-bit key words ---- */

/* Slices this long with 4-byte keys sort by radix on 32-bit words (and
 * index words, when an index is needed, have room for the index). */
static bool radix32_applies(const sort_params *p, int64_t len) {
  return p->code != CODE_NONE && radix_applies(p, len) &&
         len <= ((int64_t)1 << 32);
}

/* The loop of code_words for one key code, element stride ST. */
#define CODE_LOOP(ST, EXPR)                                                 \
  for (int64_t i = 0; i < n; i++) {                                         \
    uint32_t b = s[i * (ST)];                                               \
    d[i] = (EXPR) ^ flip;                                                   \
  }
#define CODE_BY_STRIDE(EXPR)                                                \
  if (st == 1) {                                                            \
    CODE_LOOP(1, EXPR)                                                      \
  } else {                                                                  \
    CODE_LOOP(st, EXPR)                                                     \
  }

/* d[i] = the word of the key bits s[i * st], for i < n.  A TOTALORDER
 * f32 key turns negatives around (~b) and lifts positives above them
 * (b with the sign bit set): unsigned order, NaNs at both ends. */
static void code_words(key_code c, uint32_t flip, const uint32_t *s,
                       int64_t st, uint32_t *d, int64_t n) {
  switch (c) {
  case CODE_S32:
    CODE_BY_STRIDE(b ^ 0x80000000u)
    break;
  case CODE_F32T:
    CODE_BY_STRIDE(b ^ ((uint32_t)((int32_t)b >> 31) | 0x80000000u))
    break;
  default:
    CODE_BY_STRIDE(b)
    break;
  }
}

/* d[i * st] = the key bits of word w[i], for i < n: code_words undone. */
static void code_bits(key_code c, uint32_t flip, const uint32_t *w,
                      uint32_t *d, int64_t st, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    uint32_t u = w[i] ^ flip;
    switch (c) {
    case CODE_S32: u ^= 0x80000000u; break;
    case CODE_F32T: u ^= ~(uint32_t)((int32_t)u >> 31) | 0x80000000u; break;
    default: break;
    }
    d[i * st] = u;
  }
}

typedef struct words_job {
  sort_run *r;
  int64_t base, chunk; /* part t: elements [t * chunk, (t + 1) * chunk) */
  uint32_t *k;
  bool exact[SORT_PARTS];
} words_job;

static void words_parts(void *ctx, int64_t t0, int64_t t1) {
  words_job *j = ctx;
  sort_run *r = j->r;
  const sort_params *p = r->p;
  int kk = p->cmp.arg_pair;
  for (int64_t t = t0; t < t1; t++) {
    int64_t lo = t * j->chunk, hi = lo + j->chunk < r->len ? lo + j->chunk
                                                           : r->len;
    if (!p->keyed) {
      code_words(p->code, p->flip,
                 (const uint32_t *)r->in[kk]->data + j->base + lo * r->sd,
                 r->sd, j->k + lo, hi - lo);
      j->exact[t] = true;
      continue;
    }
    bool exact = r->esz[kk] == 4;
    for (int64_t i0 = lo; i0 < hi; i0 += SHLO_LANES) {
      int64_t cnt = hi - i0 < SHLO_LANES ? hi - i0 : SHLO_LANES;
      const void *own;
      const uint32_t *kv =
          (const uint32_t *)keyed_block(r, (int)t, j->base, i0, cnt, &own);
      code_words(p->code, p->flip, kv, 1, j->k + i0, cnt);
      if (exact) exact = !memcmp(kv, own, (size_t)cnt * 4);
    }
    j->exact[t] = exact;
  }
}

/* k[0..len) = the words of the keys of the slice at base, made in
 * r->parts parts on the pool.  Returns whether every key's bits are its
 * own element's: always for a plain comparator, and for a keyed one when
 * f(x) is x bit for bit on every element of the slice (jnp.sort's
 * canonicalisation, on data without -0 or NaN). */
static bool slice_words(sort_run *r, int64_t base, uint32_t *k) {
  int64_t per = (r->len + r->parts - 1) / r->parts;
  words_job j = {.r = r, .base = base, .k = k,
                 .chunk = (per + SHLO_LANES - 1) / SHLO_LANES * SHLO_LANES};
  int64_t parts = (r->len + j.chunk - 1) / j.chunk;
  shlo__parallel_for(parts, 1, words_parts, &j);
  bool exact = true;
  for (int64_t t = 0; t < parts; t++) exact = exact && j.exact[t];
  return exact;
}

/* Scratch the first slice that needs it takes: index words and perm. */
static bool radix32_scratch(sort_run *r) {
  size_t len = (size_t)r->len;
  if (!r->words) r->words = scratch_new(&r->words_t, len * 2 * 8);
  if (!r->perm) r->perm = scratch_new(&r->perm_t, len * sizeof *r->perm);
  return r->words && r->perm;
}

/* Sort the slice at base on 32-bit key words.  One operand whose keys
 * are its elements' bits: the sorted words are the result (equal words
 * are equal elements, so stability holds trivially).  One 4-byte operand
 * otherwise: each word carries its element's bits below it.  Else each
 * carries its index, and the operands are permuted by it. */
static shlo_status radix32_slice(sort_run *r, int64_t base) {
  const sort_params *p = r->p;
  int64_t len = r->len, sd = r->sd;
  uint32_t *k = r->k32;
  bool exact = slice_words(r, base, k);
  if (p->n == 1 && exact) {
    const uint32_t *w = shlo__radix_sort32(k, k + len, len, 0, 32);
    if (!w) return shlo__exec_fail(r->ex, r->s, SHLO_ENOMEM, "out of memory");
    code_bits(p->code, p->flip, w, (uint32_t *)r->out[0]->data + base, sd,
              len);
    return SHLO_OK;
  }
  if (!radix32_scratch(r))
    return shlo__exec_fail(r->ex, r->s, SHLO_ENOMEM, "out of memory");
  uint64_t *w = r->words;
  bool own = p->n == 1 && r->esz[0] == 4;
  int lo = own ? 32 : bit_width((uint64_t)len - 1); /* <= 32 */
  const uint32_t *x = own ? (const uint32_t *)r->in[0]->data + base : NULL;
  for (int64_t i = 0; i < len; i++)
    w[i] = (uint64_t)k[i] << lo | (own ? x[i * sd] : (uint64_t)i);
  const uint64_t *sorted = shlo__radix_sort(w, w + len, len, lo, lo + 32);
  if (!sorted)
    return shlo__exec_fail(r->ex, r->s, SHLO_ENOMEM, "out of memory");
  if (own) {
    uint32_t *o = (uint32_t *)r->out[0]->data + base;
    for (int64_t i = 0; i < len; i++) o[i * sd] = (uint32_t)sorted[i];
    return SHLO_OK;
  }
  uint64_t mask = (1ull << lo) - 1;
  for (int64_t i = 0; i < len; i++) r->perm[i] = (int64_t)(sorted[i] & mask);
  sort_permute_slice(r, base);
  return SHLO_OK;
}

/* Sort the slice at base, every operand. */
static shlo_status sort_slice(sort_run *r, int64_t base) {
  if (r->k32) return radix32_slice(r, base);
  shlo_status st = sort_slice_order(r, base);
  if (!st) sort_permute_slice(r, base);
  return st;
}

/* Sort every slice along the dimension, checking for a stop now and then. */
static shlo_status sort_slices(const shlo_step *s, sort_run *r,
                               shlo_exec *ex) {
  const sort_params *p = r->p;
  int64_t slices = p->numel / r->len;
  int64_t idx[SHLO_MAX_RANK] = {0};
  int64_t base = 0;
  for (int64_t sl = 0; sl < slices; sl++) {
    if ((sl & 255) == 255 && shlo__exec_should_stop(ex))
      return shlo__rb_stopped(s, ex);
    shlo_status st = sort_slice(r, base);
    if (st) return st;
    /* next slice: odometer over every dimension but the sorted one */
    for (int d = p->rank - 1; d >= 0; d--) {
      if (d == p->dim) continue;
      base += p->str[d];
      if (++idx[d] < p->dims[d]) break;
      base -= p->str[d] * p->dims[d];
      idx[d] = 0;
    }
  }
  return SHLO_OK;
}

/* The scratch a run needs, by the path it takes; false when out of
 * memory (sort_run_free releases what was had). */
static bool sort_run_alloc(sort_run *r) {
  const sort_params *p = r->p;
  int64_t len = r->len;
  r->parts = 1;
  if (radix32_applies(p, len)) {
    int64_t most = len / SORT_PART_MIN, threads = shlo__pool_threads();
    most = most < threads ? most : threads;
    r->parts = most < 1 ? 1 : most > SORT_PARTS ? SORT_PARTS : (int)most;
  }
  bool keyed_ok = true;
  if (p->keyed) {
    while (r->n_lanes < r->parts &&
           shlo__lanes_init(&r->lanes[r->n_lanes], r->s, 0)) {
      if (!shlo__lanes_only(&r->lanes[r->n_lanes], r->s, 0, p->key_slot)) {
        shlo__lanes_free(&r->lanes[r->n_lanes]);
        break;
      }
      r->n_lanes++;
    }
    r->gather = shlo__malloc((size_t)r->parts * GATHER_BYTES(p));
    keyed_ok = r->n_lanes == r->parts && r->gather;
  }
  if (radix32_applies(p, len)) { /* the rest comes when a slice needs it */
    r->k32 = scratch_new(&r->k32_t, (size_t)len * 2 * sizeof *r->k32);
    return keyed_ok && r->k32;
  }
  r->perm = scratch_new(&r->perm_t, (size_t)len * 2 * sizeof *r->perm);
  bool radix = radix_applies(p, len);
  /* the merge sort's pairs stay for keys too wide to pack with an index */
  r->pairs = p->cmp.ok ? shlo__malloc((size_t)len * 2 * sizeof *r->pairs) : NULL;
  r->keys = p->cmp.ok ? scratch_new(&r->keys_t, (size_t)len * sizeof *r->keys)
                      : NULL;
  r->words = radix ? scratch_new(&r->words_t,
                                 (size_t)len * 2 * sizeof *r->words)
                   : NULL;
  r->gc = p->cmp.ok ? NULL : shlo__calloc(1, sizeof *r->gc);
  return r->perm && keyed_ok && (!radix || r->words) &&
         (p->cmp.ok ? r->pairs && r->keys : r->gc != NULL);
}

static void sort_run_free(sort_run *r) {
  if (r->call_ready) shlo__rb_call_free(&r->gc->call);
  for (int i = 0; i < r->n_lanes; i++) shlo__lanes_free(&r->lanes[i]);
  shlo__free(r->gather);
  shlo__free(r->gc);
  shlo__free(r->pairs);
  if (r->keys_t) shlo_value_unref(r->keys_t);
  if (r->k32_t) shlo_value_unref(r->k32_t);
  if (r->words_t) shlo_value_unref(r->words_t);
  if (r->perm_t) shlo_value_unref(r->perm_t);
}

/* The results, not zeroed: every path writes each of their elements
 * (quantized types, rare here, take the public constructor). */
static shlo_status sort_new_results(const shlo_step *s, shlo_value **out,
                                    shlo_exec *ex) {
  const sort_params *p = s->params;
  for (int k = 0; k < p->n; k++) {
    const shlo_type *t = p->out_type[k];
    out[k] = t->quant ? shlo_tensor_new_like(t)
                      : shlo__tensor_new_uninit(t->elem, t->rank, t->dims);
    if (!out[k]) {
      shlo__rb_unref_n(out, k);
      return shlo__exec_fail(ex, s, SHLO_ENOMEM,
                            "out of memory allocating the result");
    }
  }
  return SHLO_OK;
}

static shlo_status k_sort(const shlo_step *s, shlo_value *const *in,
                          shlo_value **out, shlo_exec *ex) {
  const sort_params *p = s->params;
  int n = p->n;
  shlo_status st = sort_new_results(s, out, ex);
  if (st) return st;
  int64_t len = p->dims[p->dim];
  if (len == 0 || p->numel == 0) return SHLO_OK;
  /* On the heap, not the stack (it is some 9 KB): a comparator may sort
   * again, so this frame recurses once per nested sort. */
  sort_run *r = shlo__malloc(sizeof *r);
  if (!r) {
    shlo__rb_unref_n(out, n);
    return shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory");
  }
  *r = (sort_run){.s = s, .p = p, .in = in, .out = out, .len = len,
                  .sd = p->str[p->dim], .ex = ex};
  for (int k = 0; k < n; k++) r->esz[k] = shlo_elem_size(p->et[k]);
  if (!sort_run_alloc(r)) {
    st = shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory");
    goto done;
  }
  if (r->gc) {
    st = gsort_init(r->gc, s, in, ex, r->esz, r->sd);
    if (st) goto done;
    r->call_ready = true;
  }
  r->ms = p->cmp.ok ? msort_tab[p->cmp.kind][p->cmp.dir] : NULL;
  st = sort_slices(s, r, ex);
done:
  sort_run_free(r);
  shlo__free(r);
  if (st) shlo__rb_unref_n(out, n);
  return st;
}

/* ---- keyed comparators ---- */

static int arg_index(const shlo_block *b, int v) {
  for (int i = 0; i < b->n_args; i++)
    if (b->args[i] == v) return i;
  return -1;
}

static const shlo_op *producer(const shlo_block *b, int v) {
  for (int i = 0; i < b->n_ops; i++)
    for (int k = 0; k < b->ops[i]->n_results; k++)
      if (b->ops[i]->results[k] == v) return b->ops[i];
  return NULL;
}

static bool attr_same(const shlo_attr *a, const shlo_attr *b) {
  if (a == b) return true;
  if (!a || !b || a->kind != b->kind) return false;
  switch (a->kind) {
  case SHLO_ATTR_ENUM:
  case SHLO_ATTR_STRING:
    return !strcmp(a->str, b->str);
  case SHLO_ATTR_INT:
    return a->i == b->i;
  case SHLO_ATTR_FLOAT:
    return a->f == b->f;
  case SHLO_ATTR_BOOL:
    return a->b == b->b;
  case SHLO_ATTR_DENSE:
    return shlo_type_equal(a->type, b->type) &&
           a->dense->nbytes == b->dense->nbytes &&
           !memcmp(a->dense->data, b->dense->data, a->dense->nbytes);
  default:
    return false;
  }
}

/* Whether value l (computed from block argument *la only) and value r
 * (from *ra only) are the same pure function of their argument.  The
 * first argument reached fixes *la and *ra. */
static bool same_function(const shlo_block *b, int l, int r, int *la,
                          int *ra, int depth) {
  if (depth > 64) return false;
  int il = arg_index(b, l), ir = arg_index(b, r);
  if (il >= 0 || ir >= 0) {
    if (il < 0 || ir < 0) return false;
    if (*la < 0) {
      *la = il;
      *ra = ir;
    }
    return il == *la && ir == *ra;
  }
  const shlo_op *ol = producer(b, l), *orr = producer(b, r);
  if (!ol || !orr || ol->code != orr->code || ol->code == SHLO_OP_UNKNOWN ||
      ol->n_results != 1 || orr->n_results != 1 || ol->n_regions ||
      orr->n_regions || ol->n_operands != orr->n_operands ||
      ol->n_attrs != orr->n_attrs)
    return false;
  for (int i = 0; i < ol->n_attrs; i++)
    if (strcmp(ol->attrs[i].name, orr->attrs[i].name) ||
        !attr_same(ol->attrs[i].value, orr->attrs[i].value))
      return false;
  for (int i = 0; i < ol->n_operands; i++)
    if (!same_function(b, ol->operands[i], orr->operands[i], la, ra,
                       depth + 1))
      return false;
  return true;
}

/* Recognise `return compare(f(arg 2k), f(arg 2k+1))` (either order) whose
 * region runs as a scalar program; set p->cmp, p->keyed and the slot of
 * f(arg 2k). */
static void match_keyed(shlo_compiler *cc, const shlo_op *op,
                        const shlo_step *step, sort_params *p) {
  const shlo_block *b = op->regions[0];
  const shlo_plan *plan = step->plans[0];
  if (!plan->scalar || b->n_ops < 2) return;
  const shlo_op *ret = b->ops[b->n_ops - 1];
  if (ret->n_operands != 1) return;
  const shlo_op *c = producer(b, ret->operands[0]);
  if (!c || c->code != SHLO_OP_COMPARE || c->n_operands != 2) return;
  int la = -1, ra = -1;
  if (!same_function(b, c->operands[0], c->operands[1], &la, &ra, 0) ||
      la < 0 || la / 2 != ra / 2 || la == ra)
    return;
  shlo_rb_compare cmp;
  if (!shlo__rb_compare_of(cc, op, c, la % 2 != 0, &cmp)) return;
  /* The compare's step in the plan reads f(arg la) from its first input. */
  for (int i = 0; i < plan->n_steps; i++)
    if (plan->steps[i].op == c && plan->steps[i].n_in == 2) {
      cmp.arg_pair = la / 2;
      p->cmp = cmp;
      p->keyed = true;
      p->key_slot = plan->steps[i].in[la % 2 != 0 ? 1 : 0];
      p->key_size = shlo_elem_size(cmp.et);
      return;
    }
}

/* The 32-bit word code of a comparator's keys, CODE_NONE where radix32
 * does not apply (other types, IEEE float order, LE/GE). */
static key_code key_code_of(const shlo_rb_compare *c) {
  if (!c->ok || (c->dir != SHLO_DIR_LT && c->dir != SHLO_DIR_GT))
    return CODE_NONE;
  switch (c->et) {
  case SHLO_F32: return c->total ? CODE_F32T : CODE_NONE;
  case SHLO_SI32: return CODE_S32;
  case SHLO_UI32: return CODE_U32;
  default: return CODE_NONE;
  }
}

shlo_status shlo__compile_sort(shlo_compiler *cc, const shlo_op *op,
                              shlo_step *step) {
  int n = op->n_operands;
  if (n < 1 || op->n_results != n || op->n_regions != 1)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "(C1) needs at least one input, as many results and "
                        "a comparator");
  if (n > SHLO_RB_MAX_N)
    return shlo__cc_fail(cc, op, SHLO_EUNSUPPORTED,
                        "more than %d inputs are not supported", SHLO_RB_MAX_N);
  sort_params *p = shlo__params_alloc(step, sizeof *p);
  if (!p) return SHLO_ENOMEM;
  const shlo_type *t0 = NULL;
  shlo_status st = shlo__rb_first_input(cc, op, &t0);
  if (st) return st;
  for (int k = 0; k < n; k++) {
    const shlo_type *t = shlo__cc_operand_type(cc, op, k);
    const shlo_type *r = shlo__cc_result_type(cc, op, k);
    bool same = t->kind == SHLO_TYPE_TENSOR && t->rank == t0->rank;
    for (int d = 0; same && d < t0->rank; d++) same = t->dims[d] == t0->dims[d];
    if (!same)
      return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                          "(C3) all inputs must have the same shape");
    if (!shlo_type_equal(t, r))
      return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                          "(C2) input %d and result %d types differ", k, k);
    p->et[k] = t->elem;
    p->out_type[k] = r;
  }
  int64_t dim = -1;
  if (!shlo_attr_get_i64(shlo_op_attr(op, "dimension"), &dim)) dim = -1;
  int rank = t0->rank;
  if (rank == 0) {
    /* C4 leaves no valid dimension; a scalar is already sorted */
    p->rank = 1;
    p->dims[0] = 1;
    p->dim = 0;
  } else {
    if (dim < -rank || dim >= rank)
      return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                          "(C4) dimension %lld is out of range for rank %d",
                          (long long)dim, rank);
    p->rank = rank;
    for (int d = 0; d < rank; d++) p->dims[d] = t0->dims[d];
    p->dim = (int)(dim < 0 ? dim + rank : dim);
  }
  shlo_strides(p->rank, p->dims, p->str);
  p->numel = shlo_type_numel(t0);
  p->n = n;
  st = shlo__cc_compile_regions(cc, op, step);
  if (st) return st;
  shlo_elem_type aet[2 * SHLO_RB_MAX_N], ret;
  if (!shlo__rb_region_types(cc, op, 0, aet, 2 * n, &ret, 1) ||
      ret != SHLO_I1 || step->plans[0]->n_results != 1)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "(C5) comparator must take 2*N scalars and return "
                        "tensor<i1>");
  for (int k = 0; k < n; k++)
    if (aet[2 * k] != p->et[k] || aet[2 * k + 1] != p->et[k])
      return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                          "(C5) comparator arguments %d and %d must be "
                          "tensor<%s>",
                          2 * k, 2 * k + 1, shlo_elem_name(p->et[k]));
  if (!(shlo__rb_match_compare(cc, op, 0, &p->cmp) &&
        p->cmp.et == p->et[p->cmp.arg_pair] &&
        !p->out_type[p->cmp.arg_pair]->quant)) {
    memset(&p->cmp, 0, sizeof p->cmp);
    match_keyed(cc, op, step, p);
  }
  p->code = key_code_of(&p->cmp);
  p->flip = p->cmp.dir == SHLO_DIR_GT ? UINT32_MAX : 0;
  step->fn = k_sort;
  return SHLO_OK;
}
