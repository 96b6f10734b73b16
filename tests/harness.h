/* SPDX-License-Identifier: Apache-2.0 */
/* Shared by the unit tests: run a whole program text through the engine. */
#ifndef SHLO_TEST_HARNESS_H
#define SHLO_TEST_HARNESS_H

#include <stdbool.h>
#include <stddef.h>

#include "shlo/engine.h"

/* Parse, compile and run the entry function of `text` (no arguments).
 * Returns the status of the first stage that fails, or SHLO_OK; prints its
 * diagnostic unless quiet.  Frees everything it made. */
shlo_status harness_run(const char *text, bool quiet);

/* What --explain prints for e (malloc'd; the caller frees it). */
char *harness_explain(const shlo_executable *e);

/* The results of one run of a program, and the plan it ran. */
typedef struct harness_result {
  shlo_value **v;
  int n;
  char *plan; /* what --explain printed */
} harness_result;

/* Parse, compile (fused, or with fusion off) and run @main of `text` on
 * args; any failure fails the calling test with its diagnostic. */
harness_result harness_run_fused(const char *text, bool fuse,
                                 shlo_value *const *args, int n_args);
void harness_result_free(harness_result *r);

/* Run @main of `text` (no arguments, one result) on pools of 1, 2 and 3
 * threads, and fail the calling test unless 2 and 3 threads give one
 * thread's bytes (the first differing f32 element is printed). */
void harness_same_on_pools(const char *text);

/* Append printf-style text to the string in buf (cap bytes in all),
 * cut short at the end of buf. */
__attribute__((format(printf, 3, 4))) void harness_appendf(char *buf,
                                                          size_t cap,
                                                          const char *fmt,
                                                          ...);

/* Append to buf the lines that define %name, a tensor<shape> of n
 * distinct, irregular f32 values: stablehlo.FN of an iota scaled by step
 * (a decimal literal). */
void harness_operand(char *buf, size_t cap, const char *name, const char *fn,
                     long n, const char *shape, const char *step);

/* Append to t the ops that define %out, a tensor<P x f32>: each row of
 * %in (a tensor<P x N x f32>) folded from the scalar %init in shlo's
 * schedule for f32 sums (engine/src/kernels/sum_tree.h), the row being
 * N / L runs of L.  Written with ops that sum nothing natively: each
 * block of 16 as a tree of strided slices and elementwise adds, then the
 * blocks' sums and the rest of each run folded in order by a reduce
 * whose body the native loops do not take. */
void harness_tree_sum(char *t, size_t cap, const char *in, long P, long N,
                      long L, const char *init, const char *out);

/* A program: @main with the given body lines. */
#define PROG(...) "func.func @main() {\n" __VA_ARGS__ "  func.return\n}\n"

#endif
