/* SPDX-License-Identifier: Apache-2.0 */
/* Shape refinement at call time (StableHLO's shape refinement, done when
 * the argument shapes are known).
 *
 * A function with dynamic shapes (`?` dimensions, bounds, unranked
 * tensors) cannot be compiled into a plan: kernels need static shapes.
 * Given concrete argument types, shlo__refine copies the entry function
 * (and each function it calls) with every value's type made static:
 * result shapes are inferred op by op from operand shapes, from the
 * values of integer shape operands that fold to constants
 * (get_dimension_size, constants, shape arithmetic), and from callee
 * results.  `shape_assertion` custom calls are checked there and dropped.
 * The copy is a module the ordinary compiler takes as is.
 *
 * Failures: SHLO_EINPUT when the arguments do not match the declared
 * types, a shape_assertion fails (its message, with {k} replaced) or two
 * shapes that must agree do not; SHLO_EUNSUPPORTED when a shape cannot be
 * inferred (an op the refiner has no rule for, a shape operand that does
 * not fold). */
#ifndef SHLO_REFINE_H
#define SHLO_REFINE_H

#include <stdbool.h>

#include "shlo/ir.h"
#include "shlo/status.h"

typedef struct shlo_refined shlo_refined;

/* Whether t is static: a ranked tensor without dynamic or bounded
 * dimensions, or a token, or a tuple of static parts. */
bool shlo__refine_static(const shlo_type *t);

/* Whether some function of m has a type that is not static (a dynamic or
 * bounded dimension, an unranked tensor): such modules compile lazily,
 * per argument-shape signature. */
bool shlo__module_is_dynamic(const shlo_module *m);

/* A static type for each argument of entry (n_args of them).  On success
 * *out owns the refined module (free with shlo__refined_free). */
shlo_status shlo__refine(const shlo_module *m, const shlo_func *entry,
                         const shlo_type *const *arg_types, int n_args,
                         shlo_refined **out, shlo_diag *diag);
/* The refined module: the same functions, those refined replaced by their
 * static copies (same names). */
const shlo_module *shlo__refined_module(const shlo_refined *r);
void shlo__refined_free(shlo_refined *r);

#endif
