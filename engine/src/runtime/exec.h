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


#endif
