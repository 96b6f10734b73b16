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

struct shlo_step {
  shlo_kernel fn;
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
  /* Set by ops whose kernel is one pure loop over contiguous elements
   * (elementwise, convert): applies it to n elements, `in[k]` pointing at
   * operand k's first element (a rank-0 operand of select/clamp does not
   * advance).  The compiler fuses runs of such steps (fuse.c). */
  void (*range)(const shlo_step *s, void *out, const void *const *in,
                int64_t n);
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

/* ---- compilation (compile.c) ---- */

/* Each op's compile function fills step->fn, step->params (and may adjust
 * step->in/out); step->in/out already hold operand/result slots and
 * step->op is set.  It must check what the kernel relies on (static shapes,
 * supported element types) and fail with SHLO_EUNSUPPORTED naming the op
 * and type when this build cannot run it. */
typedef shlo_status (*shlo_compile_fn)(shlo_compiler *cc, const shlo_op *op,
                                       shlo_step *step);

/* Compile-time view the op compile functions get. */
const shlo_type *shlo__cc_operand_type(shlo_compiler *cc, const shlo_op *op,
                                      int i);
const shlo_type *shlo__cc_result_type(shlo_compiler *cc, const shlo_op *op,
                                     int i);
/* The type of any value id of the function being compiled (block
 * arguments of regions included). */
const shlo_type *shlo__cc_value_type(shlo_compiler *cc, int value);
/* Make shlo__cc_operand_type/shlo__cc_result_type report type t for value
 * `value` of the current function (NULL restores its own type).  The
 * quantized-op wrapper uses this to compile an op's float form; it must
 * restore every override it set before returning. */
shlo_status shlo__cc_override_type(shlo_compiler *cc, int value,
                                  const shlo_type *t);

/* Compile an op that has quantized operands or results (quant.c): ops that
 * only move data or convert between quantized and float run `inner`
 * directly; others run as dequantize -> inner's float kernel -> quantize,
 * as the spec defines for quantized operands. */
shlo_status shlo__compile_quantized(shlo_compiler *cc, const shlo_op *op,
                                    shlo_step *step, shlo_compile_fn inner);

/* Fail compilation with "file:line:col: error: <op name>: <message>". */
shlo_status shlo__cc_fail(shlo_compiler *cc, const shlo_op *op,
                         shlo_status code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Compile region i of op into step->plans[i]; captured outer values are
 * appended to step->in.  Called by the compile functions of ops with
 * regions (while, if, case, reduce, sort, ...). */
shlo_status shlo__cc_compile_regions(shlo_compiler *cc, const shlo_op *op,
                                    shlo_step *step);
/* The compiled plan of a function of the module (for func.call). */
shlo_status shlo__cc_func_plan(shlo_compiler *cc, const shlo_op *op,
                              const char *name, shlo_plan **out);

/* Each op's compile function fills step->fn, step->params (and may adjust
 * step->in/out); step->in/out already hold operand/result slots and
 * step->op is set.  It must check what the kernel relies on (static shapes,
 * supported element types) and fail with SHLO_EUNSUPPORTED naming the op
 * and type when this build cannot run it. */


void shlo__plan_free(shlo_plan *p);

/* ---- execution (exec.c) ---- */

/* Run a plan with n_args argument references (borrowed) and store owned
 * references to its results in results[0..p->n_results). */
shlo_status shlo__plan_run(const shlo_plan *p, shlo_exec *ex,
                          shlo_value *const *args, shlo_value **results);

/* Run region r of step s (compiled with shlo__cc_compile_regions): its n
 * leading block arguments are lead[0..n) (borrowed), its captures are taken
 * from the step's inputs `in`; results get owned references.  Kernels of
 * reduce, sort, scatter, while... call this per application of a body. */
shlo_status shlo__step_run_region(const shlo_step *s, int r,
                                 shlo_value *const *in,
                                 shlo_value *const *lead, int n,
                                 shlo_value **results, shlo_exec *ex);

/* Whether region r of step s runs as a scalar program, and running it:
 * lead[0..n) point at the leading block arguments' elements, captures come
 * from the step's inputs, results[k] receive the result elements.  Much
 * faster than shlo__step_run_region for bodies applied per element. */
bool shlo__step_region_is_scalar(const shlo_step *s, int r);
void shlo__step_run_region_scalar(const shlo_step *s, int r,
                                 shlo_value *const *in,
                                 const void *const *lead, int n,
                                 void *const *results);
/* Same, but copy register `slot` of the region's plan (any value it
 * computes, not only a result) to out, `size` bytes. */
void shlo__step_run_region_scalar_slot(const shlo_step *s, int r,
                                      shlo_value *const *in,
                                      const void *const *lead, int n,
                                      int slot, void *out, size_t size);

/* Record an error for this execution (first one wins) and return code.
 * The message is prefixed with the step's location and op name. */
shlo_status shlo__exec_fail(shlo_exec *ex, const shlo_step *s,
                           shlo_status code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Nonzero when the execution must stop (cancelled or past its deadline);
 * long-running kernels call it in their outer loops. */
bool shlo__exec_should_stop(shlo_exec *ex);
/* Where interpreter.print writes (stdout by default). */
FILE *shlo__exec_print_stream(shlo_exec *ex);
/* Probe storage for interpreter.probe / check.expect_serialized_eq. */
shlo_status shlo__exec_probe_record(shlo_exec *ex, const char *id,
                                   shlo_value *v);
shlo_value *shlo__exec_probe_get(shlo_exec *ex, const char *id, int64_t iter);

/* Helpers for kernels with simple parameters. */
void *shlo__params_alloc(shlo_step *s, size_t size); /* zeroed, freed with
                                                        the plan */

#endif
