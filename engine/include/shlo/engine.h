/* SPDX-License-Identifier: Apache-2.0 */
/* The engine's front door: compile a parsed module, execute a function.
 *
 *   shlo_module *m;  shlo_parse_module(text, len, "prog.mlir", &m, &diag);
 *   shlo_executable *e;  shlo_compile(m, NULL, &e, &diag);
 *   shlo_execute(e, NULL, args, n_args, &results, &n_results, &diag);
 *
 * or the first two steps at once: shlo_load_file("prog.mlir", NULL, &m, &e,
 * &diag).
 *
 * An executable is immutable and may be executed from many threads at once.
 * It borrows the module, which must outlive it. */
#ifndef SHLO_ENGINE_H
#define SHLO_ENGINE_H

#include <stdio.h>

#include "shlo/ir.h"
#include "shlo/status.h"
#include "shlo/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct shlo_executable shlo_executable;

typedef struct shlo_compile_opts {
  const char *entry; /* function to compile first; NULL = the entry func */
  bool no_fusion;    /* keep every elementwise op its own step (also when
                        the context's no_fusion option is set) */
  bool verified;     /* the caller has already run shlo_verify_module on
                        this module: do not verify it again */
  /* Bounds on the verifying and compiling (shlo/limits.h); NULL = none.
   * Exceeding one fails with SHLO_ELIMIT (or SHLO_ECANCELED) in diag. */
  const shlo_compile_limits *limits;
  /* The context (shlo/context.h) to compile in, and the one the
   * executable then runs in; NULL = the default context.  shlo_load
   * parses in it too.  Borrowed: must outlive the executable. */
  struct shlo_context *context;
} shlo_compile_opts;

/* Compile every function of m that the entry reaches.  On failure returns
 * the status (SHLO_EUNSUPPORTED for an op or type this build cannot run,
 * naming it in diag) and sets *out to NULL. */
SHLO_API shlo_status shlo_compile(const shlo_module *m, const shlo_compile_opts *opts,
                         shlo_executable **out, shlo_diag *diag);
SHLO_API void shlo_executable_free(shlo_executable *e);
SHLO_API const shlo_func *shlo_executable_entry(const shlo_executable *e);
/* The context e was compiled in and executes in (borrowed); NULL for the
 * default context. */
SHLO_API struct shlo_context *shlo_executable_context(const shlo_executable *e);

typedef struct shlo_exec_opts {
  double timeout_s;   /* <= 0: no deadline */
  FILE *print_stream; /* interpreter.print output; NULL = stdout */
  /* shlo_cancel_set from any thread to cancel (shlo/limits.h); borrowed,
   * must outlive the call; may be NULL */
  const shlo_cancel *cancel;
  int64_t max_bytes;  /* > 0: tensors alive at once during the execution
                         may not take more bytes (SHLO_ELIMIT) */
  struct shlo_profile *profile; /* non-NULL: time every step into it */
} shlo_exec_opts;

/* Run the entry function with n_args borrowed argument values.  On success
 * *results is a malloc'd array of *n_results owned references (free each
 * with shlo_value_release, then the array with free).  Failing checks return
 * SHLO_ECHECK with the first failure in diag. */
SHLO_API shlo_status shlo_execute(const shlo_executable *e, const shlo_exec_opts *opts,
                         shlo_value *const *args, int n_args,
                         shlo_value ***results, int *n_results,
                         shlo_diag *diag);

/* A bound on the entry function's work: the elements its steps write when
 * every step is a data-parallel op (elementwise, shape, constant); -1 when
 * it has loops, regions, calls or ops of other cost.  The server uses it to
 * answer tiny cached programs without a thread hand-off. */
SHLO_API int64_t shlo_executable_work(const shlo_executable *e);

/* Which kernels this process runs, picked when the library loaded, for
 * benchmarks and bug reports: "vmath avx512f, blas SkylakeX", with
 * " (OpenBLAS picked Prescott)" after the BLAS core when the engine
 * replaced OpenBLAS's own pick (core/blas_setup.h says when). */
SHLO_API const char *shlo_kernels_info(void);

/* Parse, verify and compile in one call: text (len bytes) is parsed with
 * name for diagnostics (file:line:col), then opts->entry (NULL: the entry
 * function) is verified and compiled as shlo_compile does.  On success *m
 * and *e are the caller's (free e, then m; the text may go at once); on
 * failure both are NULL and diag says which stage failed and where. */
SHLO_API shlo_status shlo_load(const char *text, size_t len, const char *name,
                               const shlo_compile_opts *opts, shlo_module **m,
                               shlo_executable **e, shlo_diag *diag);
/* The same for the file at path (diagnostics name path). */
SHLO_API shlo_status shlo_load_file(const char *path,
                                    const shlo_compile_opts *opts,
                                    shlo_module **m, shlo_executable **e,
                                    shlo_diag *diag);
/* A whole file as a malloc'd, NUL-terminated buffer of *len bytes (the
 * caller frees it); NULL with diag set ("cannot open/read PATH"). */
SHLO_API char *shlo_read_file(const char *path, size_t *len, shlo_diag *diag);

/* How many argument-shape signatures a module with dynamic shapes has been
 * refined and compiled for (each a compile; a call with shapes seen before
 * reuses its plan); 0 for a static module. */
SHLO_API int64_t shlo_executable_refinements(const shlo_executable *e);

/* Write a human-readable listing of the entry function's plan. */
SHLO_API void shlo_executable_explain(const shlo_executable *e, FILE *f);

#ifdef __cplusplus
}
#endif

#endif
