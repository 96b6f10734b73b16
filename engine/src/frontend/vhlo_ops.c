/* SPDX-License-Identifier: Apache-2.0 */
/* The VHLO ops this build reads: each versioned op's attribute names.
 *
 * In bytecode format 5 and later an op's attributes are "properties":
 * attribute references in the order of the sorted names below, with no
 * names in the file, so this table is what gives them meaning (from
 * StableHLO's VhloOps.td).  An op missing here is from a newer StableHLO
 * than this build and is refused by name.  Names after a '|' were added to
 * an op in a later StableHLO without a new op version (custom_call_v2's
 * result_tilings in 1.18): older artifacts lack them.
 *
 * `since` is the first StableHLO release with the op version, as the
 * corpus's per-release legalization tests (vhlo/stablehlo_legalize_to_vhlo.
 * X_Y_Z.mlir) first use it; the writer picks by it (shlo__vhlo_op_at). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/vhlo_ops.h"

#define CONV_ATTRS                                                          \
  "batch_group_count feature_group_count input_batch_dimension "           \
  "input_feature_dimension input_spatial_dimensions "                      \
  "kernel_input_feature_dimension kernel_output_feature_dimension "        \
  "kernel_spatial_dimensions lhs_dilation output_batch_dimension "         \
  "output_feature_dimension output_spatial_dimensions precision_config "   \
  "rhs_dilation window_reversal window_strides"
#define GATHER_V1 \
  "collapsed_slice_dims index_vector_dim indices_are_sorted offset_dims " \
  "start_index_map"
#define GATHER_V2 GATHER_V1 " operand_batching_dims start_indices_batching_dims"
#define SCATTER_V1                                                     \
  "index_vector_dim indices_are_sorted inserted_window_dims "          \
  "scatter_dims_to_operand_dims unique_indices update_window_dims"
#define ACCURACY "result_accuracy"

static const vhlo_op_def defs[] = {
    {"abs_v1", 900, ""},
    {"add_v1", 900, ""},
    {"after_all_v1", 900, ""},
    {"all_gather_v1", 900, "all_gather_dim channel_id replica_groups use_global_device_ids"},
    {"all_gather_v2", 10500, "all_gather_dim channel_id replica_groups use_global_device_ids"},
    {"all_reduce_v1", 900, "channel_id replica_groups use_global_device_ids"},
    {"all_reduce_v2", 10500, "channel_id replica_groups use_global_device_ids"},
    {"all_to_all_v1", 900, "channel_id concat_dimension replica_groups split_count split_dimension"},
    {"all_to_all_v2", 10500, "channel_id concat_dimension replica_groups split_count split_dimension"},
    {"and_v1", 900, ""},
    {"async_done_v1", 11500, ""},
    {"async_start_v1", 11500, ""},
    {"atan2_v1", 900, ""},
    {"batch_norm_grad_v1", 900, "epsilon feature_index"},
    {"batch_norm_inference_v1", 900, "epsilon feature_index"},
    {"batch_norm_training_v1", 900, "epsilon feature_index"},
    {"bitcast_convert_v1", 900, ""},
    {"broadcast_in_dim_v1", 900, "broadcast_dimensions"},
    {"broadcast_v1", 900, "broadcast_sizes"},
    {"call_v1", 900, "callee"},
    {"case_v1", 900, ""},
    {"cbrt_v1", 900, ""},
    {"cbrt_v2", 11000, ACCURACY},
    {"ceil_v1", 900, ""},
    {"cholesky_v1", 900, "lower"},
    {"clamp_v1", 900, ""},
    {"collective_broadcast_v1", 1600, "channel_id replica_groups"},
    {"collective_broadcast_v2", 12000, "channel_id has_dynamic_root replica_groups"},
    {"collective_permute_v1", 900, "channel_id source_target_pairs"},
    {"collective_reduce_v1", 12000, "channel_id has_dynamic_root replica_groups use_global_device_ids"},
    {"compare_v1", 900, "compare_type comparison_direction"},
    {"complex_v1", 900, ""},
    {"composite_v1", 1900, "composite_attributes decomposition name version"},
    {"composite_v2", 11500, "composite_attributes decomposition name version"},
    {"concatenate_v1", 900, "dimension"},
    {"constant_v1", 900, "value"},
    {"convert_v1", 900, ""},
    {"convolution_v1", 900, CONV_ATTRS " padding"},
    {"cosine_v1", 900, ""},
    {"cosine_v2", 11000, ACCURACY},
    {"count_leading_zeros_v1", 900, ""},
    {"create_token_v1", 900, ""},
    {"cross-replica-sum_v1", 900, "replica_groups"},
    {"custom_call_v1", 900, "api_version backend_config call_target_name called_computations has_side_effect operand_layouts output_operand_aliases result_layouts"},
    {"custom_call_v2", 11800, "api_version backend_config call_target_name called_computations has_side_effect operand_layouts output_operand_aliases result_layouts | result_tilings"},
    {"divide_v1", 900, ""},
    {"dot_general_v1", 900, "lhs_batching_dimensions lhs_contracting_dimensions precision_config rhs_batching_dimensions rhs_contracting_dimensions"},
    {"dot_general_v2", 10600, "accumulation_type allow_imprecise_accumulation lhs_batching_dimensions lhs_component_count lhs_contracting_dimensions lhs_precision_type num_primitive_operations precision_config rhs_batching_dimensions rhs_component_count rhs_contracting_dimensions rhs_precision_type"},
    {"dot_v1", 900, "precision_config"},
    {"dynamic_broadcast_in_dim_v1", 900, "broadcast_dimensions known_expanding_dimensions known_nonexpanding_dimensions"},
    {"dynamic_conv_v1", 900, CONV_ATTRS " padding"},
    {"dynamic_conv_v2", 2000, CONV_ATTRS},
    {"dynamic_gather_v1", 900, GATHER_V1},
    {"dynamic_gather_v2", 10100, GATHER_V2},
    {"dynamic_iota_v1", 900, "iota_dimension"},
    {"dynamic_pad_v1", 900, ""},
    {"dynamic_reshape_v1", 900, ""},
    {"dynamic_slice_v1", 900, "slice_sizes"},
    {"dynamic_update_slice_v1", 900, ""},
    {"einsum_v1", 900, "einsum_config"},
    {"exponential_minus_one_v1", 900, ""},
    {"exponential_minus_one_v2", 11000, ACCURACY},
    {"exponential_v1", 900, ""},
    {"exponential_v2", 10900, ACCURACY},
    {"fft_v1", 900, "fft_length fft_type"},
    {"floor_v1", 900, ""},
    {"func_v1", 900, "arg_attrs function_type res_attrs sym_name sym_visibility"},
    {"gather_v1", 900, GATHER_V1 " slice_sizes"},
    {"gather_v2", 10100, GATHER_V2 " slice_sizes"},
    {"get_dimension_size_v1", 900, "dimension"},
    {"get_tuple_element_v1", 900, "index"},
    {"if_v1", 900, ""},
    {"imag_v1", 900, ""},
    {"infeed_v1", 900, "infeed_config layout"},
    {"iota_v1", 900, "iota_dimension"},
    {"is_finite_v1", 900, ""},
    {"log_plus_one_v1", 900, ""},
    {"log_plus_one_v2", 11000, ACCURACY},
    {"log_v1", 900, ""},
    {"log_v2", 11000, ACCURACY},
    {"logistic_v1", 900, ""},
    {"logistic_v2", 11000, ACCURACY},
    {"map_v1", 900, "dimensions"},
    {"maximum_v1", 900, ""},
    {"minimum_v1", 900, ""},
    {"multiply_v1", 900, ""},
    {"negate_v1", 900, ""},
    {"not_v1", 900, ""},
    {"optimization_barrier_v1", 900, ""},
    {"or_v1", 900, ""},
    {"outfeed_v1", 900, "outfeed_config"},
    {"pad_v1", 900, "edge_padding_high edge_padding_low interior_padding"},
    {"partition_id_v1", 900, ""},
    {"popcnt_v1", 900, ""},
    {"power_v1", 900, ""},
    {"real_dynamic_slice_v1", 900, ""},
    {"real_v1", 900, ""},
    {"recv_v1", 900, "channel_id channel_type is_host_transfer"},
    {"recv_v2", 11200, "channel_id channel_type is_host_transfer source_target_pairs"},
    {"reduce_precision_v1", 900, "exponent_bits mantissa_bits"},
    {"reduce_scatter_v1", 900, "channel_id replica_groups scatter_dimension use_global_device_ids"},
    {"reduce_v1", 900, "dimensions"},
    {"reduce_window_v1", 900, "base_dilations padding window_dilations window_dimensions window_strides"},
    {"remainder_v1", 900, ""},
    {"replica_id_v1", 900, ""},
    {"reshape_v1", 900, ""},
    {"return_v1", 900, ""},
    {"reverse_v1", 900, "dimensions"},
    {"rng_bit_generator_v1", 900, "rng_algorithm"},
    {"rng_v1", 900, "rng_distribution"},
    {"round_nearest_afz_v1", 900, ""},
    {"round_nearest_even_v1", 900, ""},
    {"rsqrt_v1", 900, ""},
    {"rsqrt_v2", 11000, ACCURACY},
    {"scatter_v1", 900, SCATTER_V1},
    {"scatter_v2", 10100, SCATTER_V1 " input_batching_dims scatter_indices_batching_dims"},
    {"select_and_scatter_v1", 900, "padding window_dimensions window_strides"},
    {"select_v1", 900, ""},
    {"send_v1", 900, "channel_id channel_type is_host_transfer"},
    {"send_v2", 11200, "channel_id channel_type is_host_transfer source_target_pairs"},
    {"set_dimension_size_v1", 900, "dimension"},
    {"shift_left_v1", 900, ""},
    {"shift_right_arithmetic_v1", 900, ""},
    {"shift_right_logical_v1", 900, ""},
    {"sign_v1", 900, ""},
    {"sine_v1", 900, ""},
    {"sine_v2", 11000, ACCURACY},
    {"slice_v1", 900, "limit_indices start_indices strides"},
    {"sort_v1", 900, "dimension is_stable"},
    {"sqrt_v1", 900, ""},
    {"sqrt_v2", 11000, ACCURACY},
    {"subtract_v1", 900, ""},
    {"tan_v1", 10400, ""},
    {"tan_v2", 11000, ACCURACY},
    {"tanh_v1", 900, ""},
    {"tanh_v2", 11000, ACCURACY},
    {"torch_index_select_v1", 900, "batch_dims dim"},
    {"transpose_v1", 900, "permutation"},
    {"triangular_solve_v1", 900, "left_side lower transpose_a unit_diagonal"},
    {"tuple_v1", 900, ""},
    {"unary_einsum_v1", 900, "einsum_config"},
    {"uniform_dequantize_v1", 900, ""},
    {"uniform_quantize_v1", 900, ""},
    {"while_v1", 900, ""},
    {"xor_v1", 900, ""},
};

const vhlo_op_def *shlo__vhlo_op_find(const char *name) {
  size_t lo = 0, hi = sizeof defs / sizeof *defs;
  while (lo < hi) { /* defs is sorted by name */
    size_t mid = (lo + hi) / 2;
    int c = strcmp(name, defs[mid].name);
    if (!c) return &defs[mid];
    if (c < 0) hi = mid;
    else lo = mid + 1;
  }
  return NULL;
}

const vhlo_op_def *shlo__vhlo_op_nth(size_t i) {
  return i < sizeof defs / sizeof *defs ? &defs[i] : NULL;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int shlo__vhlo_op_attr_names(const vhlo_op_def *d, bool newer, char *buf,
                       size_t cap, const char **names, int max) {
  size_t n = strlen(d->attrs);
  if (n + 1 > cap) return -1;
  memcpy(buf, d->attrs, n + 1);
  int k = 0;
  char *save = NULL;
  for (char *p = strtok_r(buf, " ", &save); p; p = strtok_r(NULL, " ", &save)) {
    if (!strcmp(p, "|")) {
      if (!newer) break;
      continue;
    }
    if (k == max) return -1;
    names[k++] = p;
  }
  qsort(names, (size_t)k, sizeof *names, cmp_str);
  return k;
}

const vhlo_op_def *shlo__vhlo_op_at(const char *base, vhlo_version at,
                              vhlo_version *oldest) {
  const vhlo_op_def *best = NULL;
  *oldest = 0;
  char name[96];
  for (int k = 1; k < 10; k++) {
    if (snprintf(name, sizeof name, "%s_v%d", base, k) >= (int)sizeof name)
      return NULL;
    const vhlo_op_def *d = shlo__vhlo_op_find(name);
    if (!d) break;
    if (!*oldest || d->since < *oldest) *oldest = d->since;
    if (d->since <= at) best = d;
  }
  return best;
}

vhlo_version shlo__vhlo_version_parse(const char *s) {
  unsigned a, b, c;
  char end;
  if (!s || sscanf(s, "%u.%u.%u%c", &a, &b, &c, &end) != 3 || a > 99 ||
      b > 99 || c > 99)
    return -1;
  return (vhlo_version)(a * 10000 + b * 100 + c);
}

void shlo__vhlo_version_format(vhlo_version v, char *buf, size_t cap) {
  snprintf(buf, cap, "%d.%d.%d", v / 10000, v / 100 % 100, v % 100);
}
