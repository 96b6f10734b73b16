/* SPDX-License-Identifier: Apache-2.0 */
/* Facts about the custom_call targets that stand for ops, which shape
 * refinement (compile/refine_custom.c) and their kernels
 * (kernels/custom_targets.c, dynamic_window.c, dynamic_topk.c) both
 * need: pure functions of names, attributes and sizes. */
#ifndef SHLO_OPS_CUSTOM_TARGETS_H
#define SHLO_OPS_CUSTOM_TARGETS_H

#include <stdbool.h>
#include <stdint.h>

#include "shlo/ir.h"

/* Sharding, SPMDFullToShardShape, SPMDShardToFullShape,
 * annotate_device_placement and Shardy's xla.sdy.* wrappers. */
bool shlo__custom_is_annotation(const char *target);
/* The size of one dimension of a reduce_window's result (the spec's
 * shape rule). */
int64_t shlo__reduce_window_size(int64_t in, int64_t size, int64_t stride,
                                 int64_t base, int64_t dil, int64_t lo,
                                 int64_t hi);
/* A stablehlo.dynamic_approx_top_k's reduction dimension
 * (mhlo.backend_config reduction_dim), -1 if absent or out of [0, rank). */
int shlo__approx_top_k_dim(const shlo_op *op, int rank);
/* Its operands before the result shapes JAX appends (-1: malformed). */
int shlo__approx_top_k_operands(const shlo_op *op);

#endif
