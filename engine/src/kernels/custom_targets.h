/* SPDX-License-Identifier: Apache-2.0 */
/* custom_call targets that stand for ops (custom_targets.c): JAX's
 * shape-polymorphic `shape_assertion` and `stablehlo.dynamic_top_k`, and
 * the sharding annotations of sharded exports, which on one process are
 * identities.  JAX's LAPACK targets are in lapack.h. */
#ifndef SHLO_CUSTOM_TARGETS_H
#define SHLO_CUSTOM_TARGETS_H

#include <stdbool.h>

#include "kernels/kernel.h"
#include "ops/custom_targets.h"

/* Whether target is one of this file's; then compile op into step. */
bool shlo__custom_target_known(const char *target);
shlo_status shlo__compile_custom_target(shlo_compiler *cc, const shlo_op *op,
                                        shlo_step *step, const char *target);
/* stablehlo.dynamic_reduce_window, refined (dynamic_window.c). */
shlo_status shlo__compile_dynamic_reduce_window(shlo_compiler *cc,
                                                const shlo_op *op,
                                                shlo_step *step);
/* stablehlo.dynamic_approx_top_k, refined (dynamic_topk.c). */
shlo_status shlo__compile_dynamic_approx_top_k(shlo_compiler *cc,
                                               const shlo_op *op,
                                               shlo_step *step);
/* top_k with k given (chlo.c). */
shlo_status shlo__compile_top_k(shlo_compiler *cc, const shlo_op *op,
                                shlo_step *step, int64_t k);

#endif
