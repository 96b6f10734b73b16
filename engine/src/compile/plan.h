/* SPDX-License-Identifier: Apache-2.0 */
/* Plans: what the compiler makes of a function and the executor runs.
 *
 * A plan is a flat array of steps over numbered slots.  Each step names a
 * kernel, the slots it reads and the slots it writes, precomputed parameters
 * (shapes, strides, attribute values decided at compile time), and sub-plans
 * for its regions.  A plan is immutable after compilation and may run in any
 * number of executions at once; mutable state lives in the per-execution
 * frame (slot array) and the shlo_exec context. */
#ifndef SHLO_PLAN_H
#define SHLO_PLAN_H

#include <stdio.h>
#include <stdatomic.h>

struct shlo__gemm_epi; /* kernels/gemm_panels.h */

#include "shlo/ir.h"
#include "shlo/tensor.h"

typedef struct shlo_plan shlo_plan;
typedef struct shlo_step shlo_step;
typedef struct shlo_exec shlo_exec;
typedef struct shlo_compiler shlo_compiler;

/* A kernel reads in[0..n_in) (borrowed references) and stores a new owned
 * reference in each out[0..n_out).  It returns SHLO_OK, or an error status
 * after calling shlo__exec_fail (check failures, runtime errors, cancel).
 * On error it must leave no out[] set (or set them all; the executor frees
 * whatever is non-NULL). */
typedef shlo_status (*shlo_kernel)(const shlo_step *s, shlo_value *const *in,
                                   shlo_value **out, shlo_exec *ex);

/* Told that elements [lo, hi) of a result are final (see run_blocks). */
typedef void (*shlo_block_done)(void *ctx, int64_t lo, int64_t hi);

/* A step runs through one entry point, its kernel fn.  Some ops can also
 * give their computation as loops, which the compiler combines with other
 * steps': into new steps whose kernels call them (fusion, kernels/fuse.c),
 * or into a region that runs on registers (shlo_scalar_prog, whose steps'
 * element loops the executor calls); these are those loops, each
 * optional, and each computing what fn computes. */
typedef struct shlo_step_loops {
  /* Set by ops whose kernel is one pure loop over contiguous elements
   * (elementwise, convert): applies it to n elements, `in[k]` pointing at
   * operand k's first element (a rank-0 operand of select/clamp does not
   * advance).  The compiler fuses runs of such steps (kernels/fuse.c). */
  void (*range)(const shlo_step *s, void *out, const void *const *in,
                int64_t n);
  /* Optional, beside range for a binary op: the same loop with operand
   * `one` (0 or 1) a single element that every element reads (fusion
   * reads a broadcast of one element so, instead of filling it). */
  void (*range_one)(const shlo_step *s, void *out, const void *const *in,
                    int64_t n, int one);
  /* Optional, beside range: the shlo_lane_op (kernels/vchain.h) whose
   * bits range's loop gives, for f32 ops that have one; fusion runs
   * chains of them with the values in registers.  0: none. */
  unsigned char lane_op;
  /* Optional, set by ops whose kernel makes its one result in blocks of
   * consecutive elements (the GEMM-shaped ones): the kernel's work, into
   * `result` (allocated by the caller with the step's result type, every
   * element written here), calling done(ctx, lo, hi) on the thread that
   * finished each block, once per element.  Blocks are whole rows of the
   * result's last dimension.  The compiler runs the
   * elementwise run that reads the result right behind each block, while
   * the block is in cache (an epilogue, kernels/fuse.c). */
  shlo_status (*run_blocks)(const shlo_step *s, shlo_value *const *in,
                            shlo_value *result, shlo_block_done done,
                            void *ctx, shlo_exec *ex);
  /* Optional, beside run_blocks, for an f32 result of rank >= 1: the
   * same result with, on each element while it is made, bias[column]
   * (bias: one float per element of the last dimension; NULL: none)
   * added, then, when relu, the maximum with +0 as stablehlo.maximum
   * gives it.  The compiler hands it a convolution's bias and ReLU
   * (kernels/fuse.c), which the GEMM applies in its registers. */
  shlo_status (*run_bias_relu)(const shlo_step *s, shlo_value *const *in,
                               shlo_value *result, const float *bias,
                               bool relu, shlo_exec *ex);
  /* Optional, the same with a whole epilogue (kernels/gemm_panels.h:
   * a scale, a bias, a residual added, a ReLU), which the compiler
   * gathers from the steps behind the product (kernels/fuse_epi.c,
   * kernels/fuse_scale.c); with done (NULL: none), telling it of each
   * block as run_blocks does, every element of the block final. */
  shlo_status (*run_epi)(const shlo_step *s, shlo_value *const *in,
                         shlo_value *result,
                         const struct shlo__gemm_epi *epi,
                         shlo_block_done done, void *ctx, shlo_exec *ex);
} shlo_step_loops;

struct shlo_step {
  shlo_kernel fn;         /* the one entry point (see shlo_step_loops) */
  const shlo_op *op;      /* for diagnostics and --explain */
  int n_in, n_out;
  int *in, *out;          /* slot numbers */
  int n_release;
  int *release;           /* slots whose value dies after this step */
  void *params;           /* kernel parameters, owned by the plan */
  void (*free_params)(void *);
  int n_plans;
  shlo_plan **plans;      /* compiled regions; each region's arguments are
                             its block arguments followed by its captures */
  int *n_captures;        /* per region: captured outer values, passed as
                             trailing inputs of this step (in order) */
  /* The step's computation as loops the compiler may combine with other
   * steps' (see shlo_step_loops); all unset for most ops. */
  shlo_step_loops loop;
  char *label;            /* for --explain, when op->name is not enough */
};

/* A region whose values are all scalars and whose steps are all constants
 * or elementwise loops runs without tensors: each slot is a 16-byte
 * register, constants are preloaded, and each step's loop runs on one
 * element (see shlo__step_run_region_scalar). */
#define SHLO_SCALAR_MAX_REGS 64

typedef struct shlo_scalar_prog {
  int n_regs;
  unsigned char *init;    /* n_regs * 16 bytes, constants in place */
  int n_ops;
  const shlo_step **ops;  /* the plan's steps, in order */
  size_t *arg_size;       /* element size of each plan argument */
  size_t *res_size;       /* element size of each result */
} shlo_scalar_prog;

struct shlo_plan {
  const char *name;       /* function name or "<region>" */
  shlo_scalar_prog *scalar; /* set when the plan qualifies, else NULL */
  int64_t work;           /* elements its steps write, when every step is
                             a data-parallel op; -1 when it has regions,
                             calls or ops of unbounded cost */
  int n_slots;
  int n_args;
  int *arg_slots;         /* where arguments land */
  int n_results;
  int *result_slots;      /* what the terminator returns */
  int n_steps;
  shlo_step *steps;
  int max_io;             /* most inputs or outputs of any step */
};

/* ---- plan lifetime (plan.c) ---- */

/* Free a plan and everything its steps own (parameters, sub-plans). */
void shlo__plan_free(shlo_plan *p);
/* Free a scalar program (plan->scalar). */
void shlo__scalar_prog_free(shlo_scalar_prog *sp);
/* Free what one step owns (not the step itself). */
void shlo__step_free(shlo_step *s);
/* Zeroed kernel parameters of `size` bytes, owned by the step and freed
 * with the plan (replaces any the step had). */
void *shlo__params_alloc(shlo_step *s, size_t size);

#endif
