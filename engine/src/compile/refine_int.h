/* SPDX-License-Identifier: Apache-2.0 */
/* Internals of shape refinement shared by refine.c (the walk over
 * functions, blocks and calls) and refine_infer.c (per-op shape rules and
 * constant folding of shape arithmetic). */
#ifndef SHLO_REFINE_INT_H
#define SHLO_REFINE_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "compile/refine.h"
#include "core/arena.h"

/* Integer tensors up to this many elements have their values tracked when
 * they fold to constants (shape operands are short). */
#define SHLO_REFINE_MAX_KNOWN 64

typedef struct refine_func refine_func;

typedef struct refiner {
  const shlo_module *m;
  shlo_arena *a;
  shlo_diag *diag;
  shlo_func **spec;     /* per module function: its refined copy, or NULL */
  refine_func **state;  /* per module function: the refinement of it */
  char *busy;           /* per module function: being refined now */
} refiner;

/* One function being refined: the copy's value types, and the values of
 * integer tensors that folded to constants. */
struct refine_func {
  refiner *R;
  const shlo_func *f;
  shlo_func *nf;
  const shlo_type **types; /* per value id (nf->value_types) */
  int64_t **known;         /* per value id: folded contents, or NULL */
  const int64_t **result_known; /* per result once refined */
};

/* Report at op (file:line:col: error: <op>: message); returns code. */
shlo_status shlo__refine_fail(refine_func *F, const shlo_op *op,
                              shlo_status code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* A copy of type t with rank and dims (encoding dropped), in the arena. */
const shlo_type *shlo__refine_type(refine_func *F, const shlo_type *t,
                                   int rank, const int64_t *dims);

/* Infer op's result types from its (refined) operands into F->types,
 * keeping the declared sizes that are static and checking the inferred
 * ones against them. */
shlo_status shlo__refine_infer(refine_func *F, const shlo_op *op);
/* Fold op's integer results when its operands are known. */
shlo_status shlo__refine_fold(refine_func *F, const shlo_op *op);
/* Set the result types of op from dims computed by a rule (rank r). */
shlo_status shlo__refine_set(refine_func *F, const shlo_op *op, int k, int r,
                             const int64_t *dims);

/* The shape rule of a custom_call target that stands for an op
 * (refine_custom.c: stablehlo.dynamic_top_k, the sharding annotations). */
shlo_status shlo__refine_custom_call(refine_func *F, const shlo_op *op);

/* Refine the call op's callee for its operands' types and values; writes
 * the callee's refined result types into F->types. */
shlo_status shlo__refine_call(refine_func *F, const shlo_op *op,
                              const char *callee);
/* Refine a region block of op in place in F (block arguments typed by
 * arg_types when not NULL); *out is the refined copy. */
shlo_status shlo__refine_region(refine_func *F, const shlo_block *b,
                                const shlo_type *const *arg_types,
                                shlo_block **out);

#endif
