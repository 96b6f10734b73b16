/* SPDX-License-Identifier: Apache-2.0 */
/* Shared internals of the region-applying ops (reduce.c, reduce_window.c,
 * sort.c): recognising region bodies that are one known op, the native
 * per-element-type loops that replace them, and the generic path that
 * applies a compiled region to rank-0 scalars.
 *
 * A body is "native" when its block has exactly two ops: one of
 * stablehlo.add/multiply/maximum/minimum/and/or/xor applied to the two
 * block arguments (either order: all of them are commutative) and a return
 * of its result, all of one element type.  Such a body runs as one of the
 * loops below, specialised per (op, storage type) and chosen at compile
 * time; arithmetic follows elementwise.c (integer wrap, i1 add = or,
 * NaN-propagating maximum/minimum with -0 < +0, narrow floats computed in
 * double and rounded to the type after every application). */
#ifndef SHLO_REDUCE_INT_H
#define SHLO_REDUCE_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "kernels/kernel.h"

#define SHLO_RB_MAX_N 32 /* operands of one variadic reduce/sort/map */

typedef struct shlo_rb_native shlo_rb_native;

/* acc = body(acc, src[i * stride]) for i in [0, n), in order. */
typedef void (*shlo_rb_fold_fn)(void *acc, const void *src, int64_t n,
                                int64_t stride, const shlo_rb_native *b);
/* acc = body(acc, offs[i] < 0 ? *init : src[offs[i]]) for i in [0, n). */
typedef void (*shlo_rb_gfold_fn)(void *acc, const void *src,
                                 const int64_t *offs, int64_t n,
                                 const void *init, const shlo_rb_native *b);
/* acc = body folded over the run src[0, n) in reduce's schedule: in
 * order, one element at a time, except f32 sums (sum_tree.h). */
typedef void (*shlo_rb_run_fn)(void *acc, const void *src, int64_t n,
                               const shlo_rb_native *b);
/* For every r in [0, rows): acc[r] folded over the run src[r * len, (r +
 * 1) * len) as shlo_rb_run_fn folds it, several rows at a time so that
 * the latencies of their folds overlap. */
typedef void (*shlo_rb_fold_rows_fn)(void *acc, const void *src, int64_t rows,
                                     int64_t len, const shlo_rb_native *b);
/* dst[i] = body(dst[i], src[i]) for i in [0, n). */
typedef void (*shlo_rb_accum_fn)(void *dst, const void *src, int64_t n,
                                 const shlo_rb_native *b);
/* A grid of rows folded into rows: for r in [0, rows) and then k in
 * [0, k): dst[r * dst_step + i] = body(dst[r * dst_step + i],
 * src[r * src_step + k * k_step + i]) for i in [0, n), in that order;
 * steps in elements (a step of 0 folds the same row again). */
typedef struct shlo_rb_grid {
  int64_t n, rows, dst_step, src_step, k, k_step;
} shlo_rb_grid;
typedef void (*shlo_rb_accum_grid_fn)(void *dst, const void *src,
                                      const shlo_rb_grid *grid,
                                      const shlo_rb_native *b);

struct shlo_rb_native {
  int opcode;         /* SHLO_OP_ADD, ...; 0 = not native */
  shlo_elem_type et;
  size_t esz;
  int wsh;            /* 8-bit storage of a narrower signed type: 8 - bits */
  uint64_t mask;      /* low `bits` bits */
  shlo_rb_fold_fn fold;
  shlo_rb_gfold_fn gfold;
  shlo_rb_accum_fn accum;
  shlo_rb_accum_grid_fn accum_grid;
  /* stablehlo.reduce's folds of contiguous runs (reduce.c says which):
   * the schedule that fused kernels must keep to give the same bits */
  shlo_rb_run_fn fold_run;
  shlo_rb_fold_rows_fn fold_rows;
  /* Rows fold_rows folds side by side (a fused row kernel passes it
   * blocks of a multiple of this many rows); 1: one at a time. */
  int side;
};

/* The f32 add's fold_run and fold_rows (reduce_sum_f32.c). */
void shlo__rb_sum_run_f32(void *acc, const void *src, int64_t n,
                          const shlo_rb_native *b);
void shlo__rb_sum_rows_f32(void *acc, const void *src, int64_t rows,
                           int64_t len, const shlo_rb_native *b);

/* Whether region r of op is a native binary body over element type et;
 * fills *b when it is (b->opcode != 0), zeroes it otherwise. */
bool shlo__rb_match(shlo_compiler *cc, const shlo_op *op, int r,
                    shlo_rb_native *b);

/* For a compiled stablehlo.reduce step of one input that reduces exactly
 * its last dimension with a native body: that body, whose fold gives each
 * result element from its init value and its input row (what the step's
 * kernel does, so the compiler can fuse the reduction, fuse.c).  NULL for
 * any other step. */
const shlo_rb_native *shlo__reduce_row_fold(const shlo_step *s);

/* Comparison keys for native comparators (sort, select_and_scatter). */
typedef enum {
  SHLO_KEY_I64,   /* signed integers; TOTALORDER floats as ordered ints */
  SHLO_KEY_U64,   /* unsigned integers, i1 */
  SHLO_KEY_F64,   /* IEEE float comparison (NaN unordered) */
} shlo_key_kind;

typedef enum { SHLO_DIR_LT, SHLO_DIR_LE, SHLO_DIR_GT, SHLO_DIR_GE } shlo_dir;

typedef union shlo_key {
  int64_t i;
  uint64_t u;
  double f;
} shlo_key;

typedef struct shlo_rb_compare {
  bool ok;            /* the region is a single compare we can run */
  int arg_pair;       /* compares block args (2k, 2k+1): k, after swap */
  shlo_dir dir;       /* direction as lhs=arg 2k, rhs=arg 2k+1 */
  shlo_key_kind kind;
  shlo_elem_type et;
  bool total;         /* TOTALORDER float compare */
} shlo_rb_compare;

/* Whether region r of op is `return compare(arg 2k, arg 2k+1)` (either
 * argument order) with direction LT/LE/GT/GE on an integer or float type. */
bool shlo__rb_match_compare(shlo_compiler *cc, const shlo_op *op, int r,
                            shlo_rb_compare *c);
/* Fill c from compare op o (inside a region of op): direction (swapped
 * when its operands come in the other order), key kind and type.  False
 * for directions or types a native sort cannot use. */
bool shlo__rb_compare_of(shlo_compiler *cc, const shlo_op *op,
                         const shlo_op *o, bool swapped, shlo_rb_compare *c);
/* The key of an element of c->et at p. */
shlo_key shlo__rb_key(const shlo_rb_compare *c, const void *p);
/* lhs `dir` rhs on keys. */
static inline bool shlo__rb_key_cmp(const shlo_rb_compare *c, shlo_key a,
                                    shlo_key b) {
  switch (c->kind) {
  case SHLO_KEY_I64:
    switch (c->dir) {
    case SHLO_DIR_LT: return a.i < b.i;
    case SHLO_DIR_LE: return a.i <= b.i;
    case SHLO_DIR_GT: return a.i > b.i;
    default: return a.i >= b.i;
    }
  case SHLO_KEY_U64:
    switch (c->dir) {
    case SHLO_DIR_LT: return a.u < b.u;
    case SHLO_DIR_LE: return a.u <= b.u;
    case SHLO_DIR_GT: return a.u > b.u;
    default: return a.u >= b.u;
    }
  default:
    switch (c->dir) {
    case SHLO_DIR_LT: return a.f < b.f;
    case SHLO_DIR_LE: return a.f <= b.f;
    case SHLO_DIR_GT: return a.f > b.f;
    default: return a.f >= b.f;
    }
  }
}

/* ---- the generic path: a region applied to rank-0 scalars ---- */

typedef struct shlo_rb_call {
  int n_lead, n_res;
  shlo_elem_type lead_et[2 * SHLO_RB_MAX_N];
  shlo_elem_type res_et[SHLO_RB_MAX_N];
  shlo_value *lead[2 * SHLO_RB_MAX_N]; /* owned rank-0 scalars */
  shlo_value *res[SHLO_RB_MAX_N];
  unsigned calls;
} shlo_rb_call;

/* Set up scalars for a region with the given argument and result element
 * types (n_lead <= 2 * SHLO_RB_MAX_N, n_res <= SHLO_RB_MAX_N). */
shlo_status shlo__rb_call_init(shlo_rb_call *c, const shlo_elem_type *lead_et,
                               int n_lead, const shlo_elem_type *res_et,
                               int n_res, const shlo_step *s, shlo_exec *ex);
void shlo__rb_call_free(shlo_rb_call *c);
/* Apply region r of step s: argument i gets one element copied from
 * src[i]; result k's element is copied to dst[k] (dst may alias src).
 * Checks the deadline every so many calls. */
shlo_status shlo__rb_apply(shlo_rb_call *c, const shlo_step *s, int r,
                           shlo_value *const *in, const void *const *src,
                           void *const *dst, shlo_exec *ex);

/* The failure a kernel of this family returns when the execution was
 * canceled or passed its deadline (shlo__exec_should_stop). */
shlo_status shlo__rb_stopped(const shlo_step *s, shlo_exec *ex);

/* Drop and clear v[0..n). */
void shlo__rb_unref_n(shlo_value **v, int n);

/* New results out[0..n) of types t[0..n), their elements not zeroed:
 * every kernel of this family writes each one (or drops the results);
 * on failure none are left. */
shlo_status shlo__rb_new_results(const shlo_step *s,
                                 const shlo_type *const *t, int n,
                                 shlo_value **out, shlo_exec *ex);

/* reduce and reduce_window take N inputs, N init values and N results
 * (1 <= N <= SHLO_RB_MAX_N) and one body; label is the spec constraint. */
shlo_status shlo__rb_check_counts(shlo_compiler *cc, const shlo_op *op,
                                  const char *label);

/* Compile the body of reduce or reduce_window, which must take 2*N
 * scalars and return N, all of the result element types out_et[0..n);
 * label is the spec constraint. */
shlo_status shlo__rb_compile_body(shlo_compiler *cc, const shlo_op *op,
                                  shlo_step *step, int n,
                                  const shlo_elem_type *out_et,
                                  const char *label);

/* A statically shaped tensor type. */
static inline bool shlo__rb_is_tensor(const shlo_type *t) {
  return t && t->kind == SHLO_TYPE_TENSOR && shlo_type_is_static(t);
}

/* The type of operand 0 (*t0), which must be a statically shaped tensor:
 * the first input of reduce, reduce_window and sort. */
shlo_status shlo__rb_first_input(shlo_compiler *cc, const shlo_op *op,
                                 const shlo_type **t0);

/* Element types of a region's block arguments / its terminator operands. */
bool shlo__rb_region_types(shlo_compiler *cc, const shlo_op *op, int r,
                           shlo_elem_type *args, int n_args,
                           shlo_elem_type *res, int n_res);

#endif
