/* SPDX-License-Identifier: Apache-2.0 */
/* What kernels may ask of the executor while a plan runs (exec.c).
 *
 * The runtime half of the plan contract: kernels report failures, run the
 * compiled regions of their step, poll for cancellation.  The compiler
 * never calls these; the executor never calls the compiler. */
#ifndef SHLO_EXEC_H
#define SHLO_EXEC_H

#include <stdio.h>

#include "compile/plan.h"

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

/* A scalar region applied again and again with the same captures (a
 * while loop's cond and body): its registers keep the constants and the
 * captures from shlo__scalar_frame_init on, so each application copies
 * in only the leading arguments.  Every value of the region has its own
 * register, written before it is read, so nothing else needs resetting. */
typedef struct shlo_scalar_frame {
  _Alignas(16) unsigned char regs[SHLO_SCALAR_MAX_REGS * 16];
  const shlo_plan *p;
  int n_lead;
} shlo_scalar_frame;

/* Set up f for region r of step s (shlo__step_region_is_scalar), whose
 * first n block arguments are the leading ones; captures come from in. */
void shlo__scalar_frame_init(shlo_scalar_frame *f, const shlo_step *s, int r,
                             shlo_value *const *in, int n);
/* Run f's region on the leading arguments lead[0..n), each pointing at 16
 * readable bytes (a register's worth; the element comes first). */
void shlo__scalar_frame_run(shlo_scalar_frame *f, const void *const *lead);
/* Where result k of f's last run is (16 bytes, the element first). */
static inline const unsigned char *shlo__scalar_frame_result(
    const shlo_scalar_frame *f, int k) {
  return f->regs + (size_t)f->p->result_slots[k] * 16;
}

/* Record an error for this execution (first one wins) and return code.
 * The message is prefixed with the step's location and op name. */
shlo_status shlo__exec_fail(shlo_exec *ex, const shlo_step *s,
                           shlo_status code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Input k of step s for the step to change in place and return: a new
 * reference to it when no one else can see the change (its slot dies
 * after s, the value has no other owner, and no other input of s is the
 * same value); NULL when the kernel must work on a copy.  Saves a copy of
 * a large operand that dies there (scatter into a tensor of zeros). */
shlo_value *shlo__exec_take_input(const shlo_step *s, shlo_value *const *in,
                                  int k);
/* The same for a kernel that changes only the value's shape (reshape):
 * a view (core/tensor_view.h) may be taken too, which take_input never
 * hands out, its elements being its owner's. */
shlo_value *shlo__exec_take_input_shape(const shlo_step *s,
                                        shlo_value *const *in, int k);
/* Nonzero when the execution must stop (cancelled or past its deadline);
 * long-running kernels call it in their outer loops. */
bool shlo__exec_should_stop(shlo_exec *ex);
/* Fail the execution at step s for the reason it must stop: SHLO_ECANCELED
 * when its flag is set, else SHLO_ETIMEOUT; returns that status. */
shlo_status shlo__exec_stopped(shlo_exec *ex, const shlo_step *s);
/* Where interpreter.print writes (stdout by default). */
FILE *shlo__exec_print_stream(shlo_exec *ex);
/* Probe storage for interpreter.probe / check.expect_serialized_eq. */
shlo_status shlo__exec_probe_record(shlo_exec *ex, const char *id,
                                   shlo_value *v);
shlo_value *shlo__exec_probe_get(shlo_exec *ex, const char *id, int64_t iter);


#endif
