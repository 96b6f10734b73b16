/* SPDX-License-Identifier: Apache-2.0 */
/* Fused steps (fuse.c): what a run or rows group holds, shared with the
 * lane programs built for them (fuse_lanes.c).  Internal to the fusion
 * files (kernels/fuse*.c). */
#ifndef SHLO_FUSE_INT_H
#define SHLO_FUSE_INT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "compile/plan.h"
#include "kernels/reduce_int.h"
#include "kernels/vchain.h"
#include "kernels/vmath.h"

/* Longest run or group: each member has FUSE_CHUNK * SCRATCH_ELEM bytes of
 * scratch per worker, so an endless chain may not make it endless (2 MiB). */
#define FUSE_MAX_MEMBERS 64

/* Rows groups: which elements of a value a member works on, and how far
 * an external operand advances from one block of rows to the next. */
enum { DOM_FULL, DOM_ROW };
enum { ADV_NONE, ADV_FULL, ADV_ROW };

/* How a broadcast_in_dim or slice member reads its operand: the operand
 * offset of result element i is `offset` plus i's multi-index times these
 * strides (0 along broadcast dimensions; a slice's start and steps). */
typedef struct bcast_map {
  int rank;
  int64_t dims[SHLO_MAX_RANK];
  int64_t src_stride[SHLO_MAX_RANK];
  int64_t offset; /* 0 for a broadcast */
} bcast_map;

typedef struct member {
  shlo_step step; /* the original step, moved here */
  bool bcast;     /* broadcast_in_dim of a smaller operand, or a slice */
  bool slice;     /* a slice of a larger operand from outside the run,
                     read in place through map as a broadcast is (runs
                     only): never a bias, a scalar or a periodic fill */
  bcast_map map;
  int n_in;
  int ref[3];     /* >= 0: external input; < 0: -(m + 1), member m's value */
  int out;        /* index among the fused step's outputs, or -1 */
  size_t esz;     /* element size of its result */
  /* rows groups only: */
  int dom;        /* DOM_FULL or DOM_ROW */
  int adv[3];     /* per external operand: ADV_* */
  const shlo_rb_native *fold; /* a reduce of the last dimension */
  bool rel;       /* a broadcast of a row member (block-relative) */
  int inv;        /* INV_*: the same in every block of rows */
  size_t row_bytes; /* from one row of its value to the next */
  /* How far its row pointer moves from one row of a block to the next in
   * rows_segment: row_bytes, or 0 for a value that only members of its
   * own segment read (rows_local): one row of scratch, reused by every
   * row, stays in L1 where a block's worth would pass through L2. */
  size_t row_step;
  bool result;    /* one of the function's results (not read by a step) */
  bool by_fold;   /* read by a reduction, over whole blocks of rows */
  /* A broadcast of one element (a row value along its row, or a scalar
   * along a run) whose readers all take it as a one-element operand
   * (range_one_arg): it is never filled; its value is that element. */
  bool one;
  int one_arg;    /* the operand that is such a broadcast, or -1 */
  /* runs only: */
  bool once;      /* a broadcast of one element from outside: its chunk is
                     filled once per worker and never changes */
  int slot;       /* its scratch slot, or -1 when it writes its result */
  /* lane programs (fuse_lanes.c), over stretches of a run's members or
   * a rows group's segments: */
  int seg;        /* runs: the first member of its stretch, or -1 */
  bool prog_ins;  /* one of a program's instructions: not run by itself */
  bool in_acc;    /* such, and its value is only ever in the accumulator:
                     never written */
  /* the program to run once this member's turn has come (a run's: the
   * last of its stretch); a rows group's, on the first member of its
   * segment */
  struct lane_prog *run_after;
  /* rows groups, reductions computed on tiles (fuse_tiles.c): */
  struct tile_prog *tile; /* a reduction's: its operand's program */
  bool tile_only; /* computed inside tile programs only, never stored */
  bool read_whole; /* read over the block by a tile program or a moved
                      member: kept whole, never one row (rows_local) */
  int moved_to;   /* >= 0: computed in the program of the later segment
                     that starts at this member instead of in its own
                     (where all its readers but tile programs are);
                     -1: in its own */
} member;

/* Where an input of a lane program lies: external input `ref` (in a run
 * at the chunk's start or its one element, in a rows group at the row's
 * start), or member ref's value (in a rows group, its row). */
typedef struct lane_io {
  bool ext;
  int ref;
} lane_io;

/* A lane program (kernels/vchain.h) of a run's stretch or a rows group's
 * segment: its inputs, the member whose value each output stores, and
 * which outputs go straight to their result past the caches (in a rows
 * group to the result's row, not the member's). */
typedef struct lane_prog {
  shlo_vchain chain;
  lane_io in[SHLO_VCHAIN_MAX_IO];
  int out[SHLO_VCHAIN_MAX_IO];
  bool direct[SHLO_VCHAIN_MAX_IO];
} lane_prog;

/* A reduction's tile program (kernels/fold_tiles.h): the members its
 * operand is computed from, since the last reduction before it, as one
 * lane program run on tiles of 16 rows of their operands.  lp.in[k] says
 * where input k lies and kind[k] how (SHLO_TILE_*; out_of[k] the output
 * a SHLO_TILE_OUT input reads back); output `result` is the operand. */
typedef struct tile_prog {
  lane_prog lp;
  uint8_t kind[SHLO_VCHAIN_MAX_IO];
  int8_t out_of[SHLO_VCHAIN_MAX_IO];
  int result;
} tile_prog;

/* Rows group members whose value over a block of rows is the same for
 * every block (broadcasts of values from outside along the rows, and what
 * is computed from them alone): computed once per worker (INV_ONCE), or,
 * for a broadcast that copies its operand's row, read in place
 * (INV_ALIAS).  Every row of such a value is the same row, so a full-size
 * one that no reduction reads (members other than reductions read values
 * a row at a time) keeps that one row, where it stays in L1; see
 * rows_one_row. */
enum { INV_NO, INV_ONCE, INV_ALIAS };

typedef struct output {
  shlo_elem_type elem;
  int rank;
  int64_t dims[SHLO_MAX_RANK];
} output;

/* A rows group that ends in softmax's tail (fuse_softmax.c): members
 * sub = subtract(a, broadcast of row value max), exp = exponential(sub),
 * sum = reduce add(exp), a broadcast of sum, div = divide(exp, that),
 * the group's last member; start: the first member of sub's segment
 * (after the reduction before it), where the tail's kernel takes over.
 * Indices into the members. */
typedef struct softmax_tail {
  int sub, max, exp, sum, div, start;
  bool max_of_a; /* max is a maximum of a itself: a - max <= 0 or NaN */
  /* a comes from outside, max is its maximum from an outside init, no
   * cap, no convert: each block's row maxima are taken beside the block
   * before's exponentials (softmax_carry's ahead) */
  bool max_ahead;
  /* The row value subtracted is maximum(c, max) (JAX's max with its
   * init folded in), c the one element of outside input cap_in, the
   * operands in that order unless !cap_first; the tail computes it, into
   * member cap's scratch.  cap = -1: the row value is max itself. */
  int cap, cap_in;
  bool cap_first;
  /* >= 0: the group's last member, a convert of div to bf16 (the bf16
   * transformer's), which is then the result instead of div */
  int cvt;
} softmax_tail;

typedef struct fused {
  int n_members;
  member *m;
  int n_ext;
  size_t *ext_esz;  /* 0 for an input that does not advance (one element) */
  int n_out;
  output *outs;
  int64_t numel;
  int64_t rows, cols; /* a rows group: F is rows x cols; 0 for a run */
  int64_t block;      /* rows group: rows per pass */
  size_t scratch_esz; /* the largest member element size */
  /* runs: members share scratch slots (see run_layout) */
  int n_slots;
  int64_t chunk;      /* elements per pass */
  size_t lanes_work;  /* bytes of workspace its lane programs need */
  bool softmax;       /* rows group: its tail runs as sm says */
  softmax_tail sm;
} fused;

typedef struct fused_run {
  const fused *f;
  shlo_value *const *in;
  shlo_value **out;
  atomic_int failed;
} fused_run;

/* Whether member m of run f makes a returned value larger than L2, which
 * goes to memory past the caches. */
bool shlo__fuse_run_streams(const fused *f, const member *m);
/* Whether member m of rows group f does (a full-size returned value). */
bool shlo__fuse_rows_streams(const fused *f, const member *m);

/* Lane programs for run f (made of steps first.. of p), one per stretch
 * of two or more lane ops (step.loop.lane_op) with only f32 broadcasts among
 * them; broadcasts stay as they are (filled, or read as one element).
 * Sets the members' seg, prog_ins, in_acc and run_after, and
 * f->lanes_work.  A stretch whose program cannot be made (too many
 * inputs, or memory short) runs member by member.  Returns how many
 * programs were made, with their instructions and stored values. */
int shlo__fuse_lanes_build(const shlo_plan *p, int first, fused *f,
                           int *n_ins, int *n_stored);
/* The lane program of the segment [k, e) of rows group f (its members
 * between two reductions), run a row at a time: an instruction per
 * member of full rows that is not a broadcast, each a lane op other than
 * exp, tanh and logistic, computed in every block; NULL when they are
 * not all such, the rows are short or go one to a block, it has no
 * room, or memory is short.
 * Marks in_acc and prog_ins, grows f->lanes_work. */
lane_prog *shlo__fuse_lanes_rows(const shlo_plan *p, int first, fused *f,
                                 int k, int e);
void shlo__fuse_lanes_free(lane_prog *lp);
/* Whether member q of f (step first + q of p) is a lane op a program can
 * run: f32, with as many operands as its op, and (in a run) a
 * one-element broadcast it reads is of an outside value. */
bool shlo__fuse_lanes_op(const shlo_plan *p, int first, const fused *f,
                         int q);
/* Whether the members [k, e) of rows group f, with those moved to k,
 * can run as a lane program a row at a time (see shlo__fuse_lanes_rows),
 * were q moved there too (q < 0: no other). */
bool shlo__fuse_lanes_rows_ok(const shlo_plan *p, int first, const fused *f,
                              int k, int e, int q);
/* The tile program of the n members list[] (in order, all lane ops of
 * full rows), whose value of member `result` is a reduction's operand;
 * NULL when it has no room or memory is short.  Leaves f's fields as they
 * are but for f->lanes_work. */
tile_prog *shlo__fuse_lanes_tile(const shlo_plan *p, int first, fused *f,
                                 const int *list, int n, int result);
void shlo__fuse_tile_free(tile_prog *tp);

/* Rows group f (steps first.. of p), its members' inv, one and row_bytes
 * set: the reductions (f32 sums) whose operand only they read and that
 * can be computed on tiles get a tile program (member.tile); members that
 * only tile programs read become tile_only; members that tile programs
 * recompute and only a later segment reads otherwise move to it
 * (member.moved_to), where it can run them in its program.  Returns how
 * many reductions run on tiles. */
int shlo__fuse_tiles_plan(const shlo_plan *p, int first, fused *f);
/* Undo shlo__fuse_tiles_plan: every member back in its segment. */
void shlo__fuse_tiles_undo(fused *f);
/* Run lp over n elements: external inputs from element ext_elem on
 * (unless one element), members' values at val[] (those it stores it
 * writes there), but output q where lp->direct[q] at direct[q] when
 * direct is not NULL (a rows group's result row). */
/* Whether run r, reading producer result `made` as its input ext, is a
 * bias and ReLU of it: bias = add(made, broadcast along the last
 * dimension of an f32 input from outside), then, optionally,
 * maximum(bias, broadcast of an f32 scalar input) as r's one result, of
 * made's type.  Sets *bias to the bias's input and *zero to the
 * scalar's (-1 without the maximum; a ReLU only where its value is
 * +0, which the caller checks). */
bool shlo__fuse_bias_relu_of(const shlo_step *r, const shlo_type *made,
                             int ext, const shlo_type *const *types,
                             int *bias, int *zero);
/* Whether broadcast member m of run r reads an f32 input from outside
 * the run along the last dimension alone (cols values, one per column),
 * or, with scalar, one f32 value everywhere. */
bool shlo__fuse_bcast_of(const member *m, const shlo_step *r,
                         const shlo_type *const *types, int64_t cols,
                         bool scalar);
/* Whether step s is a fused run or rows group (fuse.c's kernel). */
bool shlo__fuse_is_run(const shlo_step *s);
/* Each producer with loop.run_epi whose result only a chain of runs and
 * calls of a ReLU behind it reads, as a scale, bias, residual add and
 * ReLU (fuse_epi.c), made one step: the producer applying them all in
 * its registers. */
shlo_status shlo__fuse_epi_chains(shlo_plan *pl, const shlo_type *const *types);
/* Each producer with loop.run_epi whose result only a multiply by a
 * broadcast of one f32 element reads (the product first), a reduce
 * reading the multiply's, made one step with it, in the multiply's
 * place, the scale applied in the producer's registers (fuse_scale.c).
 * Run before the fusion indexes the plan. */
shlo_status shlo__fuse_fold_scales(shlo_plan *pl,
                                   const shlo_type *const *types);
/* Whether step s is op `code`. */
static inline bool shlo__fuse_step_is(const shlo_step *s, int code) {
  return s->op && s->op->code == code;
}
/* A producer p and the steps behind it made step js (its kernel and
 * inputs already set): js takes over the results of `last` (which keeps
 * none), p is moved into *keep, part of params (p left empty), and js's
 * op and params are set (fuse_epi.c's chains, fuse_scale.c's scales). */
void shlo__fuse_join(shlo_step *js, shlo_step *last, shlo_step *p,
                     shlo_step *keep, void *params,
                     void (*free_params)(void *));
/* The step before `before` of pl that makes slot, or -1. */
int shlo__fuse_maker(const shlo_plan *pl, int slot, int before);
/* How many times each slot of pl is read, a result counting as one read
 * more (n_slots + 1 ints, shlo__free'd by the caller); NULL when out of
 * memory. */
int *shlo__fuse_reads(const shlo_plan *pl);
/* The steps of pl not marked gone, moved down in order. */
void shlo__fuse_drop_gone(shlo_plan *pl, const bool *gone);
/* Each scatter whose input is a broadcast of one element that nothing
 * else reads takes that element instead, and fills its result from it
 * (fuse_fill.c).  Run before the fusion indexes the plan. */
shlo_status shlo__fuse_scatter_fills(shlo_plan *pl,
                                     const shlo_type *const *types);
/* Whether v is an f32 scalar +0 (bits all zero). */
bool shlo__fuse_is_pos_zero(const shlo_value *v);
/* Whether slot of pl is a constant step's f32 scalar +0. */
bool shlo__fuse_const_pos_zero(const shlo_plan *pl, int slot);
/* Broadcasts that only add unit dimensions to a small argument or
 * constant move to the front of plan p, behind its constants, so that
 * they no longer cut the chains they sit in (fuse_order.c); types: each
 * slot's.  Run before the fusion indexes the plan. */
shlo_status shlo__fuse_hoist_reshapes(shlo_plan *p,
                                      const shlo_type *const *types);
/* Whether rows group f (steps first.. of p, described) ends in softmax's
 * tail; sets f->softmax and f->sm when it does. */
bool shlo__fuse_softmax_plan(const shlo_plan *p, int first, fused *f);
/* A softmax block whose divide is still to do: it goes beside the next
 * block's exponentials, or at the chunk's end (shlo__fuse_softmax_flush).
 * blocks: how many blocks of the chunk have been begun; their parity
 * picks each block's buffers, so that the block before keeps its own.
 * Zeroed at the chunk's start. */
typedef struct softmax_carry {
  shlo_vsoftmax_div dv;
  int64_t blocks;
  /* the row maxima of the ahead_rows rows at ahead_r0, taken beside the
   * block before (ahead_rows 0: none) */
  const float *ahead;
  int64_t ahead_r0, ahead_rows;
} softmax_carry;

/* The softmax tail of r's group over the block of nr rows at r0, the
 * members before it done (val[] their values over the block), members'
 * scratch `per` bytes apart at scratch; the chunk's blocks end at row
 * hi.  Its divide may be left in c for the next block or the flush. */
void shlo__fuse_softmax_block(const fused_run *r, char *const *val,
                              int64_t r0, int64_t nr, int64_t hi,
                              char *scratch, size_t per, softmax_carry *c);
/* The divide c holds, if any, done now: at the end of a chunk. */
void shlo__fuse_softmax_flush(const fused_run *r, softmax_carry *c);
/* Whether c holds the row maxima of the block of nr rows at r0 (the
 * member max's value over it); if so they are copied to `to`. */
bool shlo__fuse_softmax_max_taken(softmax_carry *c, int64_t r0, int64_t nr,
                                  char *to);
/* Lane program lp over n elements: external inputs from element
 * ext_elem on, member k's value at val[k], output q at direct[q] where
 * lp->direct[q] (and direct is not NULL), else at its member's val. */
void shlo__fuse_lanes_run(const lane_prog *lp, const fused_run *r,
                          int64_t ext_elem, char *const *val,
                          char *const *direct, int64_t n, void *work);
/* The same over `rows` rows of n elements, one after the other, the
 * program decoded once: row j's external inputs from element ext_elem +
 * j * n on, member k's value at val[k] + j * val_step[k] bytes, a direct
 * output at direct[q] + j * direct_step[q]. */
void shlo__fuse_lanes_run_rows(const lane_prog *lp, const fused_run *r,
                               int64_t ext_elem, char *const *val,
                               const int64_t *val_step, char *const *direct,
                               const int64_t *direct_step, int64_t rows,
                               int64_t n, void *work);

#endif
