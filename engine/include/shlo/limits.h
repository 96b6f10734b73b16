/* SPDX-License-Identifier: Apache-2.0 */
/* Bounds on the work of turning untrusted text into an executable.
 *
 * A server compiles programs its clients send; without bounds, a large or
 * pathological program holds a worker for as long as it likes.  The parser
 * (shlo_parse_module_limited), the verifier (shlo_verify_opts.limits) and
 * the compiler (shlo_compile_opts.limits) each count the ops they visit
 * and, every few hundred ops, look at the clock and the cancel flag.  One
 * struct serves all three, so a caller sets its bounds once.
 *
 * Nesting is bounded too, whatever the caller sets: the parser, the
 * verifier, the compiler, the printer and the executor walk regions,
 * calls, types and attributes by recursion, so max_depth keeps every such
 * walk far inside the smallest stack it runs on (a thread's 8 MiB default,
 * and ASan's frames several times larger than plain ones). */
#ifndef SHLO_LIMITS_H
#define SHLO_LIMITS_H

#include <stdbool.h>
#include <stdint.h>

#include "shlo/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A cancel flag: 0 until someone asks the work that watches it to stop,
 * then the nonzero reason they gave (the engine only tests nonzero; the
 * reasons are the caller's).  Zero-initialized storage (SHLO_CANCEL_INIT,
 * calloc) is a clear flag.
 *
 * The member is private: touch it only through the functions below, which
 * read and write it atomically, so one thread may set it while others
 * poll.  It is not a C11 atomic_int because C++ cannot name that type in
 * a shared header (std::atomic<int> is another type with no promise of
 * the same layout), and it is not a bare int* because a caller's plain
 * store racing the engine's load is a data race in both languages.  It is
 * a struct and not a handle to allocate so that a caller can keep one in
 * its own request struct or on its stack, with no allocation to fail. */
typedef struct shlo_cancel {
  int private_state; /* use the functions below */
} shlo_cancel;

#define SHLO_CANCEL_INIT {0}

/* Set the reason (nonzero: cancel; 0: clear again).  Any thread. */
SHLO_API void shlo_cancel_set(shlo_cancel *c, int reason);
/* Set the reason only if the flag is clear: true when this call set it,
 * false when an earlier reason stays.  Any thread. */
SHLO_API bool shlo_cancel_set_first(shlo_cancel *c, int reason);
/* The reason, 0 when not canceled.  Any thread. */
SHLO_API int shlo_cancel_reason(const shlo_cancel *c);

typedef struct shlo_compile_limits {
  /* > 0: a module with more ops than this (ops inside regions included)
   * is refused with SHLO_ELIMIT. */
  int64_t max_ops;
  /* > 0: a CLOCK_MONOTONIC time in nanoseconds (shlo_monotonic_ns); work
   * still going on after it stops with SHLO_ELIMIT. */
  int64_t deadline_ns;
  /* Non-NULL: shlo_cancel_set it from any thread to stop the work with
   * SHLO_ECANCELED.  Borrowed; must outlive the call. */
  const shlo_cancel *cancel;
  /* > 0: the deepest nesting accepted, at most SHLO_MAX_DEPTH_CAP; 0:
   * SHLO_DEFAULT_MAX_DEPTH.  It bounds regions within regions (in the
   * text), types and attributes within each other and brackets of a
   * dense literal (each counted on its own), and a chain of calls from the
   * entry function, where each region around a call counts one level too.
   * Deeper input is refused with SHLO_ELIMIT and a message naming the
   * limit. */
  int max_depth;
} shlo_compile_limits;

/* The nesting bound when max_depth is 0, and the highest one accepted.
 * Measured in an ASan build (tests/test_depth.c): parsing, compiling and
 * running 500 levels of the deepest recursions (calls through refined
 * shapes, sorts within comparators, reduces within reducers, regions
 * within regions) takes at most 2 MiB of stack, 256 levels at most
 * 1.5 MiB; the kernels that run a region take up to some 3 KB a level
 * more than those.  A thread's stack is 8 MiB unless the process's stack
 * limit says otherwise. */
#define SHLO_DEFAULT_MAX_DEPTH 256
#define SHLO_MAX_DEPTH_CAP 500

/* CLOCK_MONOTONIC now, in nanoseconds (the clock of deadline_ns). */
SHLO_API int64_t shlo_monotonic_ns(void);

#ifdef __cplusplus
}
#endif

#endif
