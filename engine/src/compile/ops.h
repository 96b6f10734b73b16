/* The op table: every op the engine knows, one row each.
 *
 * X(ENUM, "mnemonic", compile function).  The compile function of each row
 * lives in the file of its family (elementwise.c, shape.c, control.c,
 * check.c, ...); a family's compile function fails with SHLO_EUNSUPPORTED
 * naming the op for any case it cannot run yet.  The enum, the name table and the dispatch table are all generated
 * from this one list. */
#ifndef SHLO_OPS_H
#define SHLO_OPS_H

#include "compile/compiler.h"

#define SHLO_OPS_ELEMENTWISE(X)                                        \
  X(ABS, "stablehlo.abs", shlo__compile_elementwise)                    \
  X(ADD, "stablehlo.add", shlo__compile_elementwise)                    \
  X(AND, "stablehlo.and", shlo__compile_elementwise)                    \
  X(ATAN2, "stablehlo.atan2", shlo__compile_elementwise)                \
  X(BITCAST_CONVERT, "stablehlo.bitcast_convert", shlo__compile_bitcast_convert) \
  X(CBRT, "stablehlo.cbrt", shlo__compile_elementwise)                  \
  X(CEIL, "stablehlo.ceil", shlo__compile_elementwise)                  \
  X(CLAMP, "stablehlo.clamp", shlo__compile_elementwise)                \
  X(CLZ, "stablehlo.count_leading_zeros", shlo__compile_elementwise)    \
  X(COMPARE, "stablehlo.compare", shlo__compile_elementwise)            \
  X(COMPLEX, "stablehlo.complex", shlo__compile_elementwise)            \
  X(CONVERT, "stablehlo.convert", shlo__compile_convert)                \
  X(COSINE, "stablehlo.cosine", shlo__compile_elementwise)              \
  X(DIVIDE, "stablehlo.divide", shlo__compile_elementwise)              \
  X(EXPONENTIAL, "stablehlo.exponential", shlo__compile_elementwise)    \
  X(EXPM1, "stablehlo.exponential_minus_one", shlo__compile_elementwise) \
  X(FLOOR, "stablehlo.floor", shlo__compile_elementwise)                \
  X(IMAG, "stablehlo.imag", shlo__compile_elementwise)                  \
  X(IS_FINITE, "stablehlo.is_finite", shlo__compile_elementwise)        \
  X(LOG, "stablehlo.log", shlo__compile_elementwise)                    \
  X(LOG1P, "stablehlo.log_plus_one", shlo__compile_elementwise)         \
  X(LOGISTIC, "stablehlo.logistic", shlo__compile_elementwise)          \
  X(MAXIMUM, "stablehlo.maximum", shlo__compile_elementwise)            \
  X(MINIMUM, "stablehlo.minimum", shlo__compile_elementwise)            \
  X(MULTIPLY, "stablehlo.multiply", shlo__compile_elementwise)          \
  X(NEGATE, "stablehlo.negate", shlo__compile_elementwise)              \
  X(NOT, "stablehlo.not", shlo__compile_elementwise)                    \
  X(OR, "stablehlo.or", shlo__compile_elementwise)                      \
  X(POPCNT, "stablehlo.popcnt", shlo__compile_elementwise)              \
  X(POWER, "stablehlo.power", shlo__compile_elementwise)                \
  X(REAL, "stablehlo.real", shlo__compile_elementwise)                  \
  X(REDUCE_PRECISION, "stablehlo.reduce_precision", shlo__compile_elementwise) \
  X(REMAINDER, "stablehlo.remainder", shlo__compile_elementwise)        \
  X(ROUND_AFZ, "stablehlo.round_nearest_afz", shlo__compile_elementwise) \
  X(ROUND_EVEN, "stablehlo.round_nearest_even", shlo__compile_elementwise) \
  X(RSQRT, "stablehlo.rsqrt", shlo__compile_elementwise)                \
  X(SELECT, "stablehlo.select", shlo__compile_elementwise)              \
  X(SHIFT_LEFT, "stablehlo.shift_left", shlo__compile_elementwise)      \
  X(SHIFT_RIGHT_ARITHMETIC, "stablehlo.shift_right_arithmetic", shlo__compile_elementwise) \
  X(SHIFT_RIGHT_LOGICAL, "stablehlo.shift_right_logical", shlo__compile_elementwise) \
  X(SIGN, "stablehlo.sign", shlo__compile_elementwise)                  \
  X(SINE, "stablehlo.sine", shlo__compile_elementwise)                  \
  X(SQRT, "stablehlo.sqrt", shlo__compile_elementwise)                  \
  X(SUBTRACT, "stablehlo.subtract", shlo__compile_elementwise)          \
  X(TAN, "stablehlo.tan", shlo__compile_elementwise)                    \
  X(TANH, "stablehlo.tanh", shlo__compile_elementwise)                  \
  X(XOR, "stablehlo.xor", shlo__compile_elementwise)

#define SHLO_OPS_SHAPE(X)                                              \
  X(BROADCAST_IN_DIM, "stablehlo.broadcast_in_dim", shlo__compile_broadcast_in_dim) \
  X(CONCATENATE, "stablehlo.concatenate", shlo__compile_concatenate)    \
  X(DYNAMIC_SLICE, "stablehlo.dynamic_slice", shlo__compile_dynamic_slice) \
  X(DYNAMIC_UPDATE_SLICE, "stablehlo.dynamic_update_slice", shlo__compile_dynamic_update_slice) \
  X(GET_DIMENSION_SIZE, "stablehlo.get_dimension_size", shlo__compile_get_dimension_size) \
  X(IOTA, "stablehlo.iota", shlo__compile_iota)                         \
  X(PAD, "stablehlo.pad", shlo__compile_pad)                            \
  X(RESHAPE, "stablehlo.reshape", shlo__compile_reshape)                \
  X(REVERSE, "stablehlo.reverse", shlo__compile_reverse)                \
  X(SLICE, "stablehlo.slice", shlo__compile_slice)                      \
  X(TRANSPOSE, "stablehlo.transpose", shlo__compile_transpose)

#define SHLO_OPS_CONTROL(X)                                            \
  X(CALL, "func.call", shlo__compile_call)                              \
  X(CASE, "stablehlo.case", shlo__compile_case)                         \
  X(CONSTANT, "stablehlo.constant", shlo__compile_constant)             \
  X(FUNC_RETURN, "func.return", shlo__compile_return)                   \
  X(GET_TUPLE_ELEMENT, "stablehlo.get_tuple_element", shlo__compile_get_tuple_element) \
  X(IF, "stablehlo.if", shlo__compile_if)                               \
  X(OPTIMIZATION_BARRIER, "stablehlo.optimization_barrier", shlo__compile_identity) \
  X(RETURN, "stablehlo.return", shlo__compile_return)                   \
  X(TUPLE, "stablehlo.tuple", shlo__compile_tuple)                      \
  X(WHILE, "stablehlo.while", shlo__compile_while)

#define SHLO_OPS_CHECK(X)                                              \
  X(CHECK_EXPECT_ALMOST_EQ, "check.expect_almost_eq", shlo__compile_check) \
  X(CHECK_EXPECT_ALMOST_EQ_CONST, "check.expect_almost_eq_const", shlo__compile_check) \
  X(CHECK_EXPECT_CLOSE, "check.expect_close", shlo__compile_check)      \
  X(CHECK_EXPECT_EQ, "check.expect_eq", shlo__compile_check)            \
  X(CHECK_EXPECT_EQ_CONST, "check.expect_eq_const", shlo__compile_check) \
  X(CHECK_EXPECT_SERIALIZED_EQ, "check.expect_serialized_eq", shlo__compile_check) \
  X(INTERPRETER_PRINT, "interpreter.print", shlo__compile_check)        \
  X(INTERPRETER_PROBE, "interpreter.probe", shlo__compile_check)        \
  X(CUSTOM_CALL, "stablehlo.custom_call", shlo__compile_custom_call)

#define SHLO_OPS_REDUCE(X)                                             \
  X(MAP, "stablehlo.map", shlo__compile_map)                            \
  X(REDUCE, "stablehlo.reduce", shlo__compile_reduce)                   \
  X(REDUCE_WINDOW, "stablehlo.reduce_window", shlo__compile_reduce_window) \
  X(SELECT_AND_SCATTER, "stablehlo.select_and_scatter", shlo__compile_select_and_scatter) \
  X(SORT, "stablehlo.sort", shlo__compile_sort)

#define SHLO_OPS_INDEXING(X)                                           \
  X(DYNAMIC_GATHER, "stablehlo.dynamic_gather", shlo__compile_gather)   \
  X(GATHER, "stablehlo.gather", shlo__compile_gather)                   \
  X(SCATTER, "stablehlo.scatter", shlo__compile_scatter)

#define SHLO_OPS_LINALG(X)                                             \
  X(BATCH_NORM_GRAD, "stablehlo.batch_norm_grad", shlo__compile_batch_norm) \
  X(BATCH_NORM_INFERENCE, "stablehlo.batch_norm_inference", shlo__compile_batch_norm) \
  X(BATCH_NORM_TRAINING, "stablehlo.batch_norm_training", shlo__compile_batch_norm) \
  X(CHOLESKY, "stablehlo.cholesky", shlo__compile_cholesky)             \
  X(CONVOLUTION, "stablehlo.convolution", shlo__compile_convolution)    \
  X(DOT, "stablehlo.dot", shlo__compile_dot_general)                    \
  X(DOT_GENERAL, "stablehlo.dot_general", shlo__compile_dot_general)    \
  X(DYNAMIC_CONV, "stablehlo.dynamic_conv", shlo__compile_convolution)  \
  X(FFT, "stablehlo.fft", shlo__compile_fft)                            \
  X(TRIANGULAR_SOLVE, "stablehlo.triangular_solve", shlo__compile_triangular_solve)

#define SHLO_OPS_DYNAMIC(X)                                            \
  X(BROADCAST, "stablehlo.broadcast", shlo__compile_broadcast)          \
  X(DYNAMIC_BROADCAST_IN_DIM, "stablehlo.dynamic_broadcast_in_dim", shlo__compile_broadcast_in_dim) \
  X(DYNAMIC_IOTA, "stablehlo.dynamic_iota", shlo__compile_iota)         \
  X(DYNAMIC_PAD, "stablehlo.dynamic_pad", shlo__compile_dynamic_pad)    \
  X(DYNAMIC_RESHAPE, "stablehlo.dynamic_reshape", shlo__compile_reshape) \
  X(REAL_DYNAMIC_SLICE, "stablehlo.real_dynamic_slice", shlo__compile_real_dynamic_slice)

#define SHLO_OPS_RNG_QUANT(X)                                          \
  X(RNG, "stablehlo.rng", shlo__compile_rng)                            \
  X(RNG_BIT_GENERATOR, "stablehlo.rng_bit_generator", shlo__compile_rng_bit_generator) \
  X(UNIFORM_DEQUANTIZE, "stablehlo.uniform_dequantize", shlo__compile_uniform_dequantize) \
  X(UNIFORM_QUANTIZE, "stablehlo.uniform_quantize", shlo__compile_uniform_quantize)

/* Process grids: collectives, channels, feeds (grid.c, collective.c). */
#define SHLO_OPS_GRID(X)                                               \
  X(AFTER_ALL, "stablehlo.after_all", shlo__compile_after_all)          \
  X(ALL_GATHER, "stablehlo.all_gather", shlo__compile_collective)       \
  X(ALL_REDUCE, "stablehlo.all_reduce", shlo__compile_collective)       \
  X(ALL_TO_ALL, "stablehlo.all_to_all", shlo__compile_collective)       \
  X(COLLECTIVE_BROADCAST, "stablehlo.collective_broadcast", shlo__compile_collective) \
  X(COLLECTIVE_PERMUTE, "stablehlo.collective_permute", shlo__compile_collective) \
  X(COLLECTIVE_REDUCE, "stablehlo.collective_reduce", shlo__compile_collective) \
  X(INFEED, "stablehlo.infeed", shlo__compile_infeed)                   \
  X(OUTFEED, "stablehlo.outfeed", shlo__compile_outfeed)                \
  X(PARTITION_ID, "stablehlo.partition_id", shlo__compile_process_id)   \
  X(RECV, "stablehlo.recv", shlo__compile_recv)                         \
  X(REDUCE_SCATTER, "stablehlo.reduce_scatter", shlo__compile_collective) \
  X(REPLICA_ID, "stablehlo.replica_id", shlo__compile_process_id)       \
  X(RUN_PARALLEL, "interpreter.run_parallel", shlo__compile_run_parallel) \
  X(SEND, "stablehlo.send", shlo__compile_send)

/* CHLO ops that JAX exports, and ops beyond the spec (chlo.c). */
#define SHLO_OPS_CHLO(X)                                               \
  X(CHLO_ACOS, "chlo.acos", shlo__compile_chlo)                         \
  X(CHLO_ACOSH, "chlo.acosh", shlo__compile_chlo)                       \
  X(CHLO_ASIN, "chlo.asin", shlo__compile_chlo)                         \
  X(CHLO_ASINH, "chlo.asinh", shlo__compile_chlo)                       \
  X(CHLO_ATAN, "chlo.atan", shlo__compile_chlo)                         \
  X(CHLO_ATANH, "chlo.atanh", shlo__compile_chlo)                       \
  X(CHLO_BESSEL_I1E, "chlo.bessel_i1e", shlo__compile_chlo)             \
  X(CHLO_CONJ, "chlo.conj", shlo__compile_chlo)                         \
  X(CHLO_COSH, "chlo.cosh", shlo__compile_chlo)                         \
  X(CHLO_DIGAMMA, "chlo.digamma", shlo__compile_chlo)                   \
  X(CHLO_ERF, "chlo.erf", shlo__compile_chlo)                           \
  X(CHLO_ERF_INV, "chlo.erf_inv", shlo__compile_chlo)                   \
  X(CHLO_ERFC, "chlo.erfc", shlo__compile_chlo)                         \
  X(CHLO_IGAMMA, "chlo.igamma", shlo__compile_chlo)                     \
  X(CHLO_IGAMMAC, "chlo.igammac", shlo__compile_chlo)                   \
  X(CHLO_IS_INF, "chlo.is_inf", shlo__compile_chlo)                     \
  X(CHLO_IS_NEG_INF, "chlo.is_neg_inf", shlo__compile_chlo)             \
  X(CHLO_IS_POS_INF, "chlo.is_pos_inf", shlo__compile_chlo)             \
  X(CHLO_LGAMMA, "chlo.lgamma", shlo__compile_chlo)                     \
  X(CHLO_MULHI, "chlo.mulhi", shlo__compile_chlo)                       \
  X(CHLO_NEXT_AFTER, "chlo.next_after", shlo__compile_chlo)             \
  X(CHLO_POLYGAMMA, "chlo.polygamma", shlo__compile_chlo)               \
  X(CHLO_RAGGED_DOT, "chlo.ragged_dot", shlo__compile_chlo_ragged_dot)  \
  X(CHLO_SCAN, "chlo.scan", shlo__compile_chlo_scan)                    \
  X(CHLO_SINH, "chlo.sinh", shlo__compile_chlo)                         \
  X(CHLO_TAN, "chlo.tan", shlo__compile_chlo)                           \
  X(CHLO_TOP_K, "chlo.top_k", shlo__compile_chlo_top_k)                 \
  X(CHLO_ZETA, "chlo.zeta", shlo__compile_chlo)                         \
  X(COMPOSITE, "stablehlo.composite", shlo__compile_composite)          \
  X(EINSUM, "stablehlo.einsum", shlo__compile_unimplemented)

#define SHLO_OP_LIST(X)   \
  SHLO_OPS_ELEMENTWISE(X) \
  SHLO_OPS_SHAPE(X)       \
  SHLO_OPS_CONTROL(X)     \
  SHLO_OPS_CHECK(X)       \
  SHLO_OPS_REDUCE(X)      \
  SHLO_OPS_INDEXING(X)    \
  SHLO_OPS_LINALG(X)      \
  SHLO_OPS_DYNAMIC(X)     \
  SHLO_OPS_RNG_QUANT(X)   \
  SHLO_OPS_GRID(X)        \
  SHLO_OPS_CHLO(X)

typedef enum {
  SHLO_OP_UNKNOWN = 0,
#define SHLO_OP_ENUM(e, name, fn) SHLO_OP_##e,
  SHLO_OP_LIST(SHLO_OP_ENUM)
#undef SHLO_OP_ENUM
  SHLO_OP_COUNT
} shlo_opcode;

#define SHLO_OP_DECLARE(e, name, fn)                                   \
  shlo_status fn(shlo_compiler *cc, const shlo_op *op, shlo_step *step);
SHLO_OP_LIST(SHLO_OP_DECLARE)
#undef SHLO_OP_DECLARE
shlo_status shlo__compile_unimplemented(shlo_compiler *cc, const shlo_op *op,
                                       shlo_step *step);

/* Op code for a full op name ("stablehlo.add"); SHLO_OP_UNKNOWN if none. */
shlo_opcode shlo__op_lookup(const char *name, size_t len);
const char *shlo__op_name(shlo_opcode code);
shlo_compile_fn shlo__op_compile_fn(shlo_opcode code);

#endif
