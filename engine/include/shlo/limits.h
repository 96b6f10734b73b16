/* Bounds on the work of turning untrusted text into an executable.
 *
 * A server compiles programs its clients send; without bounds, a large or
 * pathological program holds a worker for as long as it likes.  The parser
 * (shlo_parse_module_limited), the verifier (shlo_verify_opts.limits) and
 * the compiler (shlo_compile_opts.limits) each count the ops they visit
 * and, every few hundred ops, look at the clock and the cancel flag.  One
 * struct serves all three, so a caller sets its bounds once. */
#ifndef SHLO_LIMITS_H
#define SHLO_LIMITS_H

#include <stdatomic.h>
#include <stdint.h>

#include "shlo/export.h"

typedef struct shlo_compile_limits {
  /* > 0: a module with more ops than this (ops inside regions included)
   * is refused with SHLO_ELIMIT. */
  int64_t max_ops;
  /* > 0: a CLOCK_MONOTONIC time in nanoseconds (shlo_monotonic_ns); work
   * still going on after it stops with SHLO_ELIMIT. */
  int64_t deadline_ns;
  /* Non-NULL: set nonzero from any thread to stop the work with
   * SHLO_ECANCELED.  Borrowed; must outlive the call. */
  const atomic_int *cancel;
} shlo_compile_limits;

/* CLOCK_MONOTONIC now, in nanoseconds (the clock of deadline_ns). */
SHLO_API int64_t shlo_monotonic_ns(void);

#endif
