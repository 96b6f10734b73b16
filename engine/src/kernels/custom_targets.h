/* custom_call targets that stand for ops (custom_targets.c): JAX's
 * shape-polymorphic `shape_assertion` and `stablehlo.dynamic_top_k`, and
 * the sharding annotations of sharded exports, which on one process are
 * identities.  JAX's LAPACK targets are in lapack.h. */
#ifndef SHLO_CUSTOM_TARGETS_H
#define SHLO_CUSTOM_TARGETS_H

#include <stdbool.h>

#include "kernels/kernel.h"

/* Sharding, SPMDFullToShardShape, SPMDShardToFullShape,
 * annotate_device_placement and Shardy's xla.sdy.* wrappers. */
bool shlo__custom_is_annotation(const char *target);
/* Whether target is one of this file's; then compile op into step. */
bool shlo__custom_target_known(const char *target);
shlo_status shlo__compile_custom_target(shlo_compiler *cc, const shlo_op *op,
                                        shlo_step *step, const char *target);
/* stablehlo.dynamic_reduce_window, refined (dynamic_window.c), and the
 * size of one dimension of a reduce_window's result. */
shlo_status shlo__compile_dynamic_reduce_window(shlo_compiler *cc,
                                                const shlo_op *op,
                                                shlo_step *step);
int64_t shlo__reduce_window_size(int64_t in, int64_t size, int64_t stride,
                                 int64_t base, int64_t dil, int64_t lo,
                                 int64_t hi);
/* stablehlo.dynamic_approx_top_k, refined (dynamic_topk.c), and its
 * reduction dimension (mhlo.backend_config reduction_dim), -1 if absent
 * or out of [0, rank). */
shlo_status shlo__compile_dynamic_approx_top_k(shlo_compiler *cc,
                                               const shlo_op *op,
                                               shlo_step *step);
int shlo__approx_top_k_dim(const shlo_op *op, int rank);
/* Its operands before the result shapes JAX appends (-1: malformed). */
int shlo__approx_top_k_operands(const shlo_op *op);
/* top_k with k given (chlo.c). */
shlo_status shlo__compile_top_k(shlo_compiler *cc, const shlo_op *op,
                                shlo_step *step, int64_t k);

#endif
