/* SPDX-License-Identifier: Apache-2.0 */
/* Facts about the custom_call targets that stand for ops
 * (custom_targets.h). */
#include <string.h>

#include "ops/custom_targets.h"

/* dynamic_approx_top_k's shape operands: at most this many. */
enum { DTK_MAX = 8 };

/* A field of the op's mhlo.backend_config dictionary, or NULL. */
static const shlo_attr *config_field(const shlo_op *op, const char *name) {
  const shlo_attr *bc = shlo_op_attr(op, "mhlo.backend_config");
  return bc && bc->kind == SHLO_ATTR_STRUCT ? shlo_attr_field(bc, name) : NULL;
}

static const char *const annotations[] = {
    "Sharding",
    "SPMDFullToShardShape",
    "SPMDShardToFullShape",
    "annotate_device_placement",
};

bool shlo__custom_is_annotation(const char *target) {
  for (size_t i = 0; i < sizeof annotations / sizeof *annotations; i++)
    if (!strcmp(target, annotations[i]))
      return true;
  return !strncmp(target, "xla.sdy.", 8);
}

/* Result size of one dimension (the spec's reduce_window shape rule). */
int64_t shlo__reduce_window_size(int64_t in, int64_t size, int64_t stride,
                                 int64_t base, int64_t dil, int64_t lo,
                                 int64_t hi) {
  int64_t dilated = in == 0 ? 0 : (in - 1) * base + 1;
  int64_t padded = dilated + lo + hi;
  int64_t extent = (size - 1) * dil + 1;
  return padded < extent ? 0 : (padded - extent) / stride + 1;
}

/* The operands of a dynamic_approx_top_k before its shape operands: JAX
 * appends each result's shape as a further operand and lists those in
 * indices_of_shape_operands (they must come last); -1 if malformed. */
int shlo__approx_top_k_operands(const shlo_op *op) {
  int64_t idx[DTK_MAX];
  int extra = 0;
  const shlo_attr *a = shlo_op_attr(op, "indices_of_shape_operands");
  if (a && (extra = shlo_attr_i64s(a, idx, DTK_MAX)) < 0)
    return -1;
  int lead = op->n_operands - extra;
  for (int i = 0; i < extra; i++)
    if (idx[i] != lead + i)
      return -1;
  return lead;
}

/* The reduction dimension of a dynamic_approx_top_k, or -1. */
int shlo__approx_top_k_dim(const shlo_op *op, int rank) {
  int64_t d = -1;
  if (!shlo_attr_get_i64(config_field(op, "reduction_dim"), &d))
    return -1;
  return d >= 0 && d < rank ? (int)d : -1;
}
