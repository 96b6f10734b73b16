/* SPDX-License-Identifier: Apache-2.0 */
/* Small-window f32 convolution without a GEMM (conv_small.h).
 *
 * The sums of a group of positions live in registers: for 16, 32 or 64
 * out-features, vectors of 16 floats, 24 of them per group (12 positions
 * of 32 out-features, 6 of 64), which leaves registers for the kernel's
 * row and the lhs value; for other counts, 4 positions of scalars.  Each
 * step of a group then costs one broadcast lhs value per position and one
 * load per kernel vector for up to 24 multiply-adds: with 4 positions of
 * 2 vectors (8 sums), as before, the loads bounded cnn's first layer at
 * 120 GFLOP/s on one Zen 5 thread. */
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "kernels/conv_small.h"
#include "kernels/float_minmax.h"

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

/* The in-features of a window position on the padding. */
static const float small_zeros[SHLO_CONV_SMALL_K];

/* Tests may turn the padded copy off to compare with the pointers. */
static _Atomic bool small_pad_copy = true;

bool shlo__conv_small_use_pad_copy(bool on) {
  return atomic_exchange(&small_pad_copy, on);
}

/* The padded copy's layout (conv_small.h); pad_floats 0 where it does
 * not fit (or the row has no positions). */
static void pad_copy_init(shlo__conv_small *s) {
  const shlo__conv_nhwc *g = s->g;
  int last = g->ns - 1;
  s->pad_floats = 0;
  int64_t span_last;
  if (g->o_sp[last] < 1 ||
      __builtin_mul_overflow(g->o_sp[last] - 1, g->stride[last], &span_last) ||
      __builtin_add_overflow(span_last, s->reach[last] + 1, &span_last))
    return;
  int64_t n = g->ci, str[SHLO_CONV_NHWC_MAX_SP];
  for (int i = last; i >= 0; i--) {
    s->pad_span[i] = i == last ? span_last : s->reach[i] + 1;
    str[i] = n;
    if (__builtin_mul_overflow(n, s->pad_span[i], &n) ||
        n > SHLO_CONV_SMALL_PAD)
      return;
  }
  for (int64_t w = 0; w < s->windows; w++) {
    int64_t off = 0;
    for (int i = 0; i <= last; i++) off += s->kq[w][i] * str[i];
    for (int64_t c = 0; c < g->ci; c++) s->pad_rel[w * g->ci + c] = off + c;
  }
  s->pad_floats = n;
}

void shlo__conv_small_init(shlo__conv_small *s, const shlo__conv_nhwc *g,
                           const float *lhs, const float *kernel,
                           const int64_t *pad, float *out) {
  int ns = g->ns, last = ns - 1;
  s->g = g;
  s->lhs = lhs, s->kernel = kernel, s->out = out;
  s->k = g->ci;
  int64_t kidx[SHLO_CONV_NHWC_MAX_SP];
  for (int i = 0; i < ns; i++) {
    s->pad_lo[i] = pad[2 * i];
    s->k *= g->k_sp[i];
    s->reach[i] = (g->k_sp[i] - 1) * g->rhs_dil[i];
    kidx[i] = 0;
  }
  s->windows = s->k / g->ci;
  for (int64_t w = 0; w < s->windows; w++) {
    int64_t off = 0;
    for (int i = 0; i < ns; i++) {
      s->kq[w][i] = kidx[i] * g->rhs_dil[i];
      off = off * g->in_sp[i] + s->kq[w][i];
    }
    for (int64_t c = 0; c < g->ci; c++) s->rel[w * g->ci + c] = off * g->ci + c;
    for (int i = ns - 1; i >= 0; i--) {
      if (++kidx[i] < g->k_sp[i]) break;
      kidx[i] = 0;
    }
  }
  /* the indices whose window is inside form one range: its ends */
  int64_t st = g->stride[last], lo = s->pad_lo[last];
  int64_t room; /* x * st <= room: (in - 1 - reach) + lo, without overflow */
  if (__builtin_add_overflow(g->in_sp[last] - 1 - s->reach[last], lo, &room))
    room = lo > 0 ? INT64_MAX : -1;
  s->x_lo = lo <= 0 ? 0 : lo / st + (lo % st != 0);
  s->x_hi = room < 0 ? 0 : room / st >= g->o_sp[last] ? g->o_sp[last]
                                                      : room / st + 1;
  s->x_lo = min64(s->x_lo, s->x_hi);
  s->bias = NULL;
  s->relu = false;
  pad_copy_init(s);
}

/* Output position r, counted in the result's order, as its batch element
 * (returned) and spatial index oidx. */
static int64_t small_position(const shlo__conv_nhwc *g, int64_t r,
                              int64_t *oidx) {
  for (int i = g->ns - 1; i >= 0; i--) {
    oidx[i] = r % g->o_sp[i];
    r /= g->o_sp[i];
  }
  return r;
}

/* The positions waiting for a group of their own: their rows of the
 * result, batch elements and the lhs index of their window's first value
 * along each dimension (may lie on the padding). */
typedef struct small_queue {
  int n;
  int64_t r[12], b[12], base[12][SHLO_CONV_NHWC_MAX_SP];
} small_queue;

/* For queued position p (or none: p >= q->n), a pointer per window
 * position to its in-features, or to zeros. */
static void small_pointers(const shlo__conv_small *s, const small_queue *q,
                           int p, const float **src) {
  const shlo__conv_nhwc *g = s->g;
  for (int64_t w = 0; w < s->windows; w++) {
    bool in = p < q->n;
    int64_t off = in ? q->b[p] : 0;
    for (int i = 0; i < g->ns && in; i++) {
      int64_t at = q->base[p][i] + s->kq[w][i];
      in = at >= 0 && at < g->in_sp[i];
      off = off * g->in_sp[i] + at;
    }
    src[w] = in ? s->lhs + off * g->ci : small_zeros;
  }
}

/* buf = the padded copy for the row of positions of batch element b
 * whose first window starts at lhs index base[i] along each dimension
 * (the lhs values, zeros where they lie on the padding). */
static void pad_copy_fill(const shlo__conv_small *s, int64_t b,
                          const int64_t *base, float *buf) {
  const shlo__conv_nhwc *g = s->g;
  const int last = g->ns - 1;
  const int64_t ci = g->ci, span = s->pad_span[last];
  /* along the innermost dimension: [x0, x1) of the copy inside the lhs */
  int64_t x0 = min64(max64(-base[last], 0), span);
  int64_t x1 = max64(min64(g->in_sp[last] - base[last], span), x0);
  int64_t idx[SHLO_CONV_NHWC_MAX_SP] = {0};
  for (float *d = buf;; d += span * ci) {
    bool in = true;
    int64_t off = b;
    for (int i = 0; i < last && in; i++) {
      int64_t at = base[i] + idx[i];
      in = at >= 0 && at < g->in_sp[i];
      off = off * g->in_sp[i] + at;
    }
    if (!in || x1 == x0) {
      memset(d, 0, sizeof(float) * (size_t)(span * ci));
    } else {
      const float *from =
          s->lhs + (off * g->in_sp[last] + base[last] + x0) * ci;
      memset(d, 0, sizeof(float) * (size_t)(x0 * ci));
      memcpy(d + x0 * ci, from,
             sizeof(float) * (size_t)((x1 - x0) * ci));
      memset(d + x1 * ci, 0, sizeof(float) * (size_t)((span - x1) * ci));
    }
    int i = last - 1;
    for (; i >= 0; i--) {
      if (++idx[i] < s->pad_span[i]) break;
      idx[i] = 0;
    }
    if (i < 0) return;
  }
}

/* The sums compiled once per ISA level, like SHLO_CLONES
 * (multiversion.h), but NOT under its rule of the same bits everywhere:
 * the AVX-512 clone contracts each multiply and add into an FMA, the
 * others do not (their targets have no FMA), as a product's sums may
 * (docs/internals.md, summation order).  Every thread and every block
 * runs the same clone, so a CPU gives the same bytes at any thread
 * count. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define SMALL_CLONES \
  __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define SMALL_CLONES
#endif

/* The sums of one position: NV vectors of 16 floats for CO of 16, 32 or
 * 64, else co floats; POS positions at once. */
typedef float small_v16 __attribute__((vector_size(64)));
#define SMALL_ACC_16 small_v16
#define SMALL_ACC_32 small_v16
#define SMALL_ACC_64 small_v16
#define SMALL_ACC_co float
#define SMALL_ACC(CO) SMALL_ACC_##CO
#define SMALL_LANES_16 16
#define SMALL_LANES_32 16
#define SMALL_LANES_64 16
#define SMALL_LANES_co 1
#define SMALL_LANES(CO) SMALL_LANES_##CO
#define SMALL_NV(CO) (CO / SMALL_LANES(CO))
#define SMALL_POS_16 12
#define SMALL_POS_32 12
#define SMALL_POS_64 6
#define SMALL_POS_co 4
#define SMALL_POS(CO) SMALL_POS_##CO
#define SMALL_WIDTH_16 16
#define SMALL_WIDTH_32 32
#define SMALL_WIDTH_64 64
#define SMALL_WIDTH_co s->g->co
#define SMALL_WIDTH(CO) SMALL_WIDTH_##CO /* out-features, known if it can */

/* acc[p] = 0 for each of NPOS positions. */
#define SMALL_ZERO(CO, NPOS)                                                \
  _Pragma("GCC unroll 12") for (int p = 0; p < (NPOS); p++)                 \
  _Pragma("GCC unroll 4") for (int64_t qv = 0; qv < SMALL_NV(CO); qv++)     \
    acc[p][qv] = (SMALL_ACC(CO)){0};

/* acc[p] += VAL(p) x the kernel's row of out-features at wk: the row
 * loaded first, then position by position (each value broadcast just
 * before its multiply-adds: all of them first would take 12 registers and
 * push sums out of theirs). */
#define SMALL_MAC(CO, NPOS, VAL)                                            \
  {                                                                         \
    SMALL_ACC(CO) wv[SMALL_NV(CO)];                                         \
    _Pragma("GCC unroll 4") for (int64_t qv = 0; qv < SMALL_NV(CO); qv++)   \
      memcpy(&wv[qv], wk + qv * SMALL_LANES(CO), sizeof wv[qv]);            \
    _Pragma("GCC unroll 12") for (int p = 0; p < (NPOS); p++) {            \
      float val = VAL(p);                                                   \
      _Pragma("GCC unroll 4") for (int64_t qv = 0; qv < SMALL_NV(CO); qv++) \
        acc[p][qv] += val * wv[qv];                                         \
    }                                                                       \
  }

#define SMALL_AT(p) at[(p) * step]   /* the values of a group inside */
#define SMALL_SRC(p) src[p][w][c]   /* those of a queued group */

/* relu of epi_apply (gemm_panels.c), x where x > 0 or NaN, else +0, in
 * integer operations on the bits i: kept unless the sign is set and the
 * rest is not above infinity's (i >> 31 and that difference's sign are
 * then both all ones).  (A float compare giving a vector of lanes needs
 * AVX512DQ to turn its mask into one: without it the avx512f clone did
 * the lanes one by one, 4x slower.) */
typedef int32_t small_i16 __attribute__((vector_size(64)));
#define SMALL_RELU_BITS(i)                                                  \
  ((i) & ~(((i) >> 31) & ((((i) & INT32_MAX) - 0x7f800001) >> 31)))
#define SMALL_RELU_V(x) ((small_v16)SMALL_RELU_BITS((small_i16)(x)))
#define SMALL_RELU_16 SMALL_RELU_V
#define SMALL_RELU_32 SMALL_RELU_V
#define SMALL_RELU_64 SMALL_RELU_V
#define SMALL_RELU_co(x) shlo_fmaxf((x), 0.0f) /* as epi_apply_scalar */
#define SMALL_RELU(CO, x) SMALL_RELU_##CO(x)

/* acc[p], with s's epilogue, stored as the result's row rows[p], for
 * p < n. */
#define SMALL_STORE(CO, n, rows)                                            \
  if (s->bias || s->relu)                                                   \
    for (int p = 0; p < (n); p++)                                           \
      _Pragma("GCC unroll 4") for (int64_t qv = 0; qv < SMALL_NV(CO); qv++) { \
        if (s->bias) {                                                      \
          SMALL_ACC(CO) b;                                                  \
          memcpy(&b, s->bias + qv * SMALL_LANES(CO), sizeof b);             \
          acc[p][qv] = acc[p][qv] + b;                                      \
        }                                                                   \
        if (s->relu) acc[p][qv] = SMALL_RELU(CO, acc[p][qv]);               \
      }                                                                     \
  for (int p = 0; p < (n); p++)                                             \
    memcpy(s->out + (rows)[p] * width, acc[p], sizeof(float) * (size_t)width);

/* A group of NPOS positions at fixed offsets: NPOS positions along the
 * innermost dimension from the lhs value first, step values apart, into
 * result rows r .. r + NPOS - 1 (NAME: small_inside_CO, or _half for
 * NPOS = POS / 2); rel: the window values' offsets (s->rel in the lhs,
 * s->pad_rel in a padded copy). */
#define SMALL_INSIDE(CO, NAME, NPOS)                                        \
  static inline __attribute__((always_inline)) void NAME(                   \
      const shlo__conv_small *s, const float *first, int64_t step,          \
      const int64_t *rel, int64_t r) {                                      \
    const int64_t co = s->g->co, width = SMALL_WIDTH(CO);                   \
    (void)co; /* (the sums' count where CO is co) */                        \
    SMALL_ACC(CO) acc[NPOS][SMALL_NV(CO)];                                  \
    SMALL_ZERO(CO, NPOS)                                                    \
    const float *wk = s->kernel;                                            \
    for (int64_t v = 0; v < s->k; v++, wk += width) {                       \
      const float *at = first + rel[v];                                     \
      /* (opaque: else the compiler keeps first + p * step for each p in   \
       * a register of its own, and adds rel[v] to each) */                \
      __asm__("" : "+r"(at));                                               \
      SMALL_MAC(CO, NPOS, SMALL_AT)                                         \
    }                                                                       \
    int64_t rows[NPOS];                                                     \
    for (int p = 0; p < (NPOS); p++) rows[p] = r + p;                       \
    SMALL_STORE(CO, NPOS, rows)                                             \
  }

/* Per CO: the groups at fixed offsets (POS positions, and half as many),
 * the queued group, and the rows r0 .. r0 + rows - 1 sorted into them. */
#define SMALL_ROWS(CO)                                                      \
  SMALL_INSIDE(CO, small_inside_##CO, SMALL_POS(CO))                        \
  SMALL_INSIDE(CO, small_half_##CO, SMALL_POS(CO) / 2)                      \
  SMALL_INSIDE(CO, small_two3_##CO, SMALL_POS(CO) * 2 / 3)                  \
  /* n >= POS positions from first, step values apart, into result rows     \
   * r ..: whole groups, then what is left (if any): a half group where     \
   * it fits in one, else a group ending at n, each overlapping the one     \
   * before where it must (the same sums again, cheaper than queued         \
   * ones).  cnn's rows of 30 inside: 12, 12 and a half group of 6, not     \
   * 12 more of which 6 again (its first layer, one thread: 0.222 ->        \
   * 0.201 ms, minimums of 10 rounds) */                                    \
  static inline __attribute__((always_inline)) void small_span_##CO(        \
      const shlo__conv_small *s, const float *first, int64_t step,          \
      const int64_t *rel, int64_t n, int64_t r) {                           \
    const int64_t pos = SMALL_POS(CO), half = pos / 2, two3 = pos * 2 / 3;  \
    int64_t gx = 0;                                                         \
    for (; gx + pos <= n; gx += pos)                                        \
      small_inside_##CO(s, first + gx * step, step, rel, r + gx);           \
    if (gx < n && n - gx <= half)                                           \
      small_half_##CO(s, first + (n - half) * step, step, rel, r + n - half); \
    else if (gx < n && n - gx <= two3)                                      \
      small_two3_##CO(s, first + (n - two3) * step, step, rel, r + n - two3); \
    else if (gx < n)                                                        \
      small_inside_##CO(s, first + (n - pos) * step, step, rel, r + n - pos); \
  }                                                                         \
  /* small_span with the step a constant where it is 3 floats (three     \
   * in-features, stride 1: a first layer's RGB): each broadcast then     \
   * reads at a fixed displacement from one pointer, where a step known   \
   * only at run time takes an address computed per position, more       \
   * registers than there are, and spills */                              \
  static inline __attribute__((always_inline)) void small_span_any_##CO(    \
      const shlo__conv_small *s, const float *first, int64_t step,          \
      const int64_t *rel, int64_t n, int64_t r) {                           \
    if (step == 3) small_span_##CO(s, first, 3, rel, n, r);                 \
    else small_span_##CO(s, first, step, rel, n, r);                        \
  }                                                                         \
  static inline __attribute__((always_inline)) void small_queued_##CO(const shlo__conv_small *s,      \
                                            small_queue *q) {               \
    const int64_t co = s->g->co, width = SMALL_WIDTH(CO), ci = s->g->ci;    \
    (void)co;                                                               \
    const float *src[SMALL_POS(CO)][SHLO_CONV_SMALL_K];                     \
    for (int p = 0; p < SMALL_POS(CO); p++) small_pointers(s, q, p, src[p]); \
    SMALL_ACC(CO) acc[SMALL_POS(CO)][SMALL_NV(CO)];                         \
    SMALL_ZERO(CO, SMALL_POS(CO))                                           \
    const float *wk = s->kernel;                                            \
    for (int64_t w = 0; w < s->windows; w++)                                \
      for (int64_t c = 0; c < ci; c++, wk += width) {                       \
        SMALL_MAC(CO, SMALL_POS(CO), SMALL_SRC)                             \
      }                                                                     \
    SMALL_STORE(CO, q->n, q->r)                                             \
    q->n = 0;                                                               \
  }                                                                         \
  SMALL_CLONES static void small_rows_##CO(const shlo__conv_small *s, int64_t r0,        \
                              int64_t rows) {                               \
    const shlo__conv_nhwc *g = s->g;                                        \
    const int ns = g->ns, last = ns - 1;                                    \
    const int64_t sx = g->stride[last];                                     \
    small_queue q = {.n = 0};                                               \
    float padded[SHLO_CONV_SMALL_PAD];                                      \
    const bool pad_copy = s->pad_floats > 0 && atomic_load(&small_pad_copy); \
    int64_t oidx[SHLO_CONV_NHWC_MAX_SP], b = small_position(g, r0, oidx);  \
    for (int64_t r = r0, end = r0 + rows; r < end;) {                       \
      /* a run of positions along the innermost dimension */               \
      int64_t x = oidx[last], run = min64(g->o_sp[last] - x, end - r);      \
      int64_t base[SHLO_CONV_NHWC_MAX_SP], outer = b;                       \
      bool outer_inside = true;                                             \
      for (int i = 0; i < ns; i++) {                                        \
        base[i] = oidx[i] * g->stride[i] - s->pad_lo[i];                    \
        if (i < last)                                                       \
          outer_inside = outer_inside && base[i] >= 0 &&                    \
                         base[i] + s->reach[i] < g->in_sp[i];               \
        if (i < last) outer = outer * g->in_sp[i] + base[i];                \
      }                                                                     \
      /* [f0, f1): windows inside the lhs, at least a group of them */               \
      int64_t f0 = x, f1 = x;                                               \
      if (outer_inside) {                                                   \
        f0 = max64(x, s->x_lo);                                             \
        int64_t top = min64(x + run, s->x_hi);                              \
        if (top - f0 >= SMALL_POS(CO)) f1 = top;                            \
      }                                                                     \
      /* a whole row touching the padding: from its padded copy */          \
      if (pad_copy && x == 0 && run == g->o_sp[last] &&                     \
          run >= SMALL_POS(CO) && !(f0 == x && f1 == x + run)) {            \
        pad_copy_fill(s, b, base, padded);                                  \
        small_span_any_##CO(s, padded, sx * g->ci, s->pad_rel, run, r);       \
      } else                                                                \
      for (int64_t xx = x; xx < x + run;) {                                 \
        if (xx == f0 && f1 > f0) {                                          \
          const int64_t at_x = outer * g->in_sp[last] - s->pad_lo[last];    \
          small_span_any_##CO(s, s->lhs + (at_x + f0 * sx) * g->ci, sx * g->ci, \
                          s->rel, f1 - f0, r + (f0 - x));                   \
          xx = f1;                                                          \
          continue;                                                         \
        }                                                                   \
        q.r[q.n] = r + (xx - x);                                            \
        q.b[q.n] = b;                                                       \
        memcpy(q.base[q.n], base, sizeof(int64_t) * (size_t)ns);            \
        q.base[q.n][last] = base[last] + (xx - x) * sx;                     \
        if (++q.n == SMALL_POS(CO)) small_queued_##CO(s, &q);               \
        xx++;                                                               \
      }                                                                     \
      r += run;                                                             \
      /* on to the next run: the innermost index wraps, the others carry */ \
      oidx[last] = x + run;                                                 \
      for (int i = last; i > 0 && oidx[i] == g->o_sp[i]; i--) {             \
        oidx[i] = 0;                                                        \
        oidx[i - 1]++;                                                      \
      }                                                                     \
      if (oidx[0] == g->o_sp[0]) {                                          \
        oidx[0] = 0;                                                        \
        b++;                                                                \
      }                                                                     \
    }                                                                       \
    if (q.n) small_queued_##CO(s, &q);                                      \
  }
SMALL_ROWS(16)
SMALL_ROWS(32)
SMALL_ROWS(64)
SMALL_ROWS(co)

void shlo__conv_small_rows(const shlo__conv_small *s, int64_t r0,
                           int64_t rows) {
  switch (s->g->co) {
  case 16: small_rows_16(s, r0, rows); break;
  case 32: small_rows_32(s, r0, rows); break;
  case 64: small_rows_64(s, r0, rows); break;
  default: small_rows_co(s, r0, rows);
  }
}
