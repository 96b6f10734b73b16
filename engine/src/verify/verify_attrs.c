/* SPDX-License-Identifier: Apache-2.0 */
/* The attributes an op cannot go without (the spec's inputs that are
 * constants with no default), checked before the op's own verifier: in the
 * generic form a misspelt key (`{permutaton = ...}`) leaves the real one
 * missing, which MLIR reports as "requires attribute"; here the message also
 * names the misspelling the op carries, when one is near.  Only ops and
 * attributes whose every spelling (pretty, generic, VHLO) stores the
 * attribute under this name are listed. */
#include <stdio.h>
#include <string.h>

#include "core/suggest.h"
#include "verify/verify_int.h"

static const struct {
  const char *op;
  const char *attrs[4];
} required[] = {
    {"stablehlo.compare", {"comparison_direction"}},
    {"stablehlo.transpose", {"permutation"}},
    {"stablehlo.slice", {"start_indices", "limit_indices"}},
    {"stablehlo.iota", {"iota_dimension"}},
    {"stablehlo.concatenate", {"dimension"}},
    {"stablehlo.broadcast_in_dim", {"broadcast_dimensions"}},
    {"stablehlo.dynamic_slice", {"slice_sizes"}},
    {"stablehlo.pad",
     {"edge_padding_low", "edge_padding_high", "interior_padding"}},
    {"stablehlo.reverse", {"dimensions"}},
    {"stablehlo.get_tuple_element", {"index"}},
    {"stablehlo.dot_general", {"dot_dimension_numbers"}},
    {"stablehlo.gather", {"dimension_numbers", "slice_sizes"}},
    {"stablehlo.scatter", {"scatter_dimension_numbers"}},
    {"stablehlo.fft", {"fft_type", "fft_length"}},
    {"stablehlo.reduce", {"dimensions"}},
    {"stablehlo.reduce_precision", {"exponent_bits", "mantissa_bits"}},
    {"stablehlo.get_dimension_size", {"dimension"}},
    {"stablehlo.rng", {"rng_distribution"}},
    {"stablehlo.rng_bit_generator", {"rng_algorithm"}},
    {"stablehlo.batch_norm_inference", {"epsilon", "feature_index"}},
    {"stablehlo.batch_norm_training", {"epsilon", "feature_index"}},
    {"stablehlo.batch_norm_grad", {"epsilon", "feature_index"}},
};

/* The op's attribute nearest to the missing name, or NULL. */
static const char *near_attr(const shlo_op *op, const char *name) {
  const char *names[64];
  int n = 0;
  for (int i = 0; i < op->n_attrs && n < 63; i++)
    names[n++] = op->attrs[i].name;
  names[n] = NULL;
  return shlo__suggest(name, strlen(name), names, -1);
}

bool shlo__verify_required_attrs(shlo__vctx *vc, const shlo_op *op) {
  for (size_t i = 0; i < sizeof required / sizeof required[0]; i++) {
    if (strcmp(required[i].op, op->name)) continue;
    for (int k = 0; k < 4 && required[i].attrs[k]; k++) {
      const char *want = required[i].attrs[k];
      if (shlo_op_attr(op, want)) continue;
      const char *typo = near_attr(op, want);
      if (typo)
        return shlo__verr(vc, op, NULL, "unknown attribute '%s' (did you "
                          "mean %s?): the op requires attribute '%s'", typo,
                          want, want);
      return shlo__verr(vc, op, NULL, "requires attribute '%s'", want);
    }
    return true;
  }
  return true;
}
