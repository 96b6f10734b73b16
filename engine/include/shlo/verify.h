/* SPDX-License-Identifier: Apache-2.0 */
/* The verifier: every constraint the StableHLO spec puts on a module.
 *
 *   shlo_diag_list dl;  shlo_diag_list_init(&dl);
 *   shlo_status st = shlo_verify_module(m, NULL, &dl);
 *   for (int i = 0; i < dl.n; i++) { shlo_diag_format(&dl.v[i], ...); }
 *   shlo_diag_list_free(&dl);
 *
 * Checks ops (the spec's numbered constraints C1, C2, ... of each op), types
 * (quantization parameters, element types, shapes), functions (return types
 * match the signature, calls match their callee, region arguments and
 * returns) and modules (no duplicate symbols; with require_entry, an entry
 * function).  Every diagnostic reads
 *   prog.mlir:12:8: error: stablehlo.dot_general (C7): lhs contracting ...
 * naming the op, the constraint label where the spec has one, the offending
 * values and types, and the op's location.
 *
 * Dynamic dimensions (`?`), unranked tensors and bounded types are not
 * supported: their ops get an SHLO_EUNSUPPORTED diagnostic naming the reason
 * (and are otherwise not checked). */
#ifndef SHLO_VERIFY_H
#define SHLO_VERIFY_H

#include "shlo/ir.h"
#include "shlo/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A growable list of diagnostics.  v is malloc'd and owned by the list;
 * the file strings point into the module (or are static). */
typedef struct shlo_diag_list {
  int n, cap;
  shlo_diag *v;
} shlo_diag_list;

SHLO_API void shlo_diag_list_init(shlo_diag_list *l);
SHLO_API void shlo_diag_list_free(shlo_diag_list *l);

typedef struct shlo_verify_opts {
  /* Require an entry function: `entry` when given, else @main or the only
   * function (as shlo_compile picks it). */
  bool require_entry;
  const char *entry;
  /* Bounds on the work (shlo/limits.h); NULL = none.  A limit stops the
   * walk with SHLO_ELIMIT or SHLO_ECANCELED and its diagnostic. */
  const shlo_compile_limits *limits;
} shlo_verify_opts;

/* Verify every function of m; opts may be NULL (no entry required).
 * Appends ALL diagnostics to out (which may be NULL to only get the
 * status).  Returns SHLO_OK when the module is clean, SHLO_EVERIFY when any
 * constraint fails, else SHLO_EUNSUPPORTED when the module uses dynamic or
 * bounded shapes the verifier does not handle, or SHLO_ENOMEM. */
SHLO_API shlo_status shlo_verify_module(const shlo_module *m,
                               const shlo_verify_opts *opts,
                               shlo_diag_list *out);

/* The same, for callers that report one diagnostic (shlo_compile, the
 * server): on failure fills diag with the first error (or, with no error,
 * the first unsupported-feature diagnostic).  diag may be NULL. */
SHLO_API shlo_status shlo_verify_module_first(const shlo_module *m,
                                     const shlo_verify_opts *opts,
                                     shlo_diag *diag);

#ifdef __cplusplus
}
#endif

#endif
