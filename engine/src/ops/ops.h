/* SPDX-License-Identifier: Apache-2.0 */
/* The op table: every op the engine knows, one row each, and every fact
 * about an op that more than one stage needs.
 *
 *   X(ENUM, "mnemonic", compile, verify, flags, kernels, keywords)
 *
 * compile   shlo__compile_<compile>, in the file of the op's family
 *           (elementwise.c, shape.c, control.c, check.c, ...); it fails with
 *           SHLO_EUNSUPPORTED naming the op for any case it cannot run yet.
 * verify    shlo__verify_<verify>, in verify/verify_*.c; `none` is the
 *           explicit "no constraints checked" entry (shlo__verify_none), so
 *           an op without a verifier is a visible choice, and a misspelt
 *           name is a link error, never a silent pass.
 * flags     SHLO_OPF_* bits: SHLO_OPF_PER_AXIS, operands and results may be
 *           per-axis quantized (every other op is refused them).
 * kernels   what the family's compile file needs to pick a loop, or 0:
 *           SHLO_EW(arity, kinds, I, F, C, i1_op) for elementwise ops that
 *             verify_elementwise checks and elementwise.c runs from its
 *             scalar tables: kinds = the element classes the verifier
 *             accepts (ANY, BI bool+int, INT, NUM, SNUM signed numbers, FC
 *             float+complex, FQ float; all but BI and INT also per-tensor
 *             quantized); I, F, C = Y when elementwise.c has an integer,
 *             float, complex scalar function for the op (IB_/IU_, FB_/FU_,
 *             CB_/CU_<ENUM>); i1_op = the op whose integer loop runs the op
 *             on i1 (UNKNOWN: none);
 *           SHLO_CHLO(arity, real_fn, real_bin_fn, complex_fn) for CHLO
 *             functions chlo.c evaluates in double (its static functions);
 *           SHLO_BCAST(op, kinds, result) for CHLO's broadcasting ops
 *             (ops/chlo_bcast.h).
 * keywords  pretty-form keywords and the generic attribute each stands for,
 *           SHLO_KW("kw", "attr") SHLO_KW(...) ..., or 0 (parse_pretty.c).
 *
 * The enum, the name table, the verifier and compile dispatch, the per-axis
 * flags, the elementwise verifier facts and loops, the CHLO functions and
 * the keyword lookup are all generated from these rows.  The facts that
 * one stage each needs (quantized storage, refinement rule, reducer, lane,
 * VHLO name) are the same rows' second half, ops/op_facts.h.  Adding an op is
 * one row here plus its functions; see engine/README.md. */
#ifndef SHLO_OPS_H
#define SHLO_OPS_H

#include "shlo/ir.h"
#include "ops/op_facts.h"

/* The compile column names each family's step builder.  The op table comes
 * before the compile stage, so it knows the compiler and the step only by
 * name (compile/compiler.h and compile/plan.h define them). */
typedef struct shlo_compiler shlo_compiler;
typedef struct shlo_step shlo_step;
typedef shlo_status (*shlo_compile_fn)(shlo_compiler *cc, const shlo_op *op,
                                       shlo_step *step);

/* A keyword list is one string of NUL-terminated names, keyword then
 * attribute, ended by an empty keyword. */
#define SHLO_KW(kw, attr) kw "\0" attr "\0"

enum {
  SHLO_OPF_PER_AXIS = 1, /* may take and give per-axis quantized tensors */
};

#define SHLO_OPS_ELEMENTWISE(X)                                        \
  X(ABS, "stablehlo.abs", elementwise, elementwise, 0,                        \
      SHLO_EW(1, SNUM, Y, Y, N, UNKNOWN), 0)                                  \
  X(ADD, "stablehlo.add", elementwise, elementwise, SHLO_OPF_PER_AXIS,        \
      SHLO_EW(2, ANY, Y, Y, Y, OR), 0)                                        \
  X(AND, "stablehlo.and", elementwise, elementwise, 0,                        \
      SHLO_EW(2, BI, Y, N, N, AND), 0)                                        \
  X(ATAN2, "stablehlo.atan2", elementwise, elementwise, 0,                    \
      SHLO_EW(2, FC, N, Y, Y, UNKNOWN), 0)                                    \
  X(BITCAST_CONVERT, "stablehlo.bitcast_convert", bitcast_convert,            \
      bitcast_convert, SHLO_OPF_PER_AXIS, 0, 0)                               \
  X(CBRT, "stablehlo.cbrt", elementwise, elementwise, 0,                      \
      SHLO_EW(1, FC, N, Y, Y, UNKNOWN), 0)                                    \
  X(CEIL, "stablehlo.ceil", elementwise, elementwise, 0,                      \
      SHLO_EW(1, FQ, N, Y, N, UNKNOWN), 0)                                    \
  X(CLAMP, "stablehlo.clamp", elementwise, clamp, 0, 0, 0)                    \
  X(CLZ, "stablehlo.count_leading_zeros", elementwise, elementwise, 0,        \
      SHLO_EW(1, INT, Y, N, N, UNKNOWN), 0)                                   \
  X(COMPARE, "stablehlo.compare", elementwise, compare, 0, 0, 0)              \
  X(COMPLEX, "stablehlo.complex", elementwise, complex, 0, 0, 0)              \
  X(CONVERT, "stablehlo.convert", convert, convert, 0, 0, 0)                  \
  X(COSINE, "stablehlo.cosine", elementwise, elementwise, 0,                  \
      SHLO_EW(1, FC, N, Y, Y, UNKNOWN), 0)                                    \
  X(DIVIDE, "stablehlo.divide", elementwise, elementwise, 0,                  \
      SHLO_EW(2, NUM, Y, Y, Y, UNKNOWN), 0)                                   \
  X(EXPONENTIAL, "stablehlo.exponential", elementwise, elementwise, 0,        \
      SHLO_EW(1, FC, N, Y, Y, UNKNOWN), 0)                                    \
  X(EXPM1, "stablehlo.exponential_minus_one", elementwise, elementwise, 0,    \
      SHLO_EW(1, FC, N, Y, Y, UNKNOWN), 0)                                    \
  X(FLOOR, "stablehlo.floor", elementwise, elementwise, 0,                    \
      SHLO_EW(1, FQ, N, Y, N, UNKNOWN), 0)                                    \
  X(IMAG, "stablehlo.imag", elementwise, real_imag, 0, 0, 0)                  \
  X(IS_FINITE, "stablehlo.is_finite", elementwise, is_finite, 0, 0, 0)        \
  X(LOG, "stablehlo.log", elementwise, elementwise, 0,                        \
      SHLO_EW(1, FC, N, Y, Y, UNKNOWN), 0)                                    \
  X(LOG1P, "stablehlo.log_plus_one", elementwise, elementwise, 0,             \
      SHLO_EW(1, FC, N, Y, Y, UNKNOWN), 0)                                    \
  X(LOGISTIC, "stablehlo.logistic", elementwise, elementwise, 0,              \
      SHLO_EW(1, FC, N, Y, Y, UNKNOWN), 0)                                    \
  X(MAXIMUM, "stablehlo.maximum", elementwise, elementwise, 0,                \
      SHLO_EW(2, ANY, Y, Y, Y, OR), 0)                                        \
  X(MINIMUM, "stablehlo.minimum", elementwise, elementwise, 0,                \
      SHLO_EW(2, ANY, Y, Y, Y, AND), 0)                                       \
  X(MULTIPLY, "stablehlo.multiply", elementwise, elementwise, 0,              \
      SHLO_EW(2, ANY, Y, Y, Y, AND), 0)                                       \
  X(NEGATE, "stablehlo.negate", elementwise, elementwise, 0,                  \
      SHLO_EW(1, NUM, Y, Y, Y, UNKNOWN), 0)                                   \
  X(NOT, "stablehlo.not", elementwise, elementwise, 0,                        \
      SHLO_EW(1, BI, Y, N, N, NOT), 0)                                        \
  X(OR, "stablehlo.or", elementwise, elementwise, 0,                          \
      SHLO_EW(2, BI, Y, N, N, OR), 0)                                         \
  X(POPCNT, "stablehlo.popcnt", elementwise, elementwise, 0,                  \
      SHLO_EW(1, INT, Y, N, N, UNKNOWN), 0)                                   \
  X(POWER, "stablehlo.power", elementwise, elementwise, 0,                    \
      SHLO_EW(2, NUM, Y, Y, Y, UNKNOWN), 0)                                   \
  X(REAL, "stablehlo.real", elementwise, real_imag, 0, 0, 0)                  \
  X(REDUCE_PRECISION, "stablehlo.reduce_precision", elementwise,              \
      reduce_precision, 0, 0, 0)                                              \
  X(REMAINDER, "stablehlo.remainder", elementwise, elementwise, 0,            \
      SHLO_EW(2, NUM, Y, Y, N, UNKNOWN), 0)                                   \
  X(ROUND_AFZ, "stablehlo.round_nearest_afz", elementwise, elementwise, 0,    \
      SHLO_EW(1, FQ, N, Y, N, UNKNOWN), 0)                                    \
  X(ROUND_EVEN, "stablehlo.round_nearest_even", elementwise, elementwise, 0,  \
      SHLO_EW(1, FQ, N, Y, N, UNKNOWN), 0)                                    \
  X(RSQRT, "stablehlo.rsqrt", elementwise, elementwise, 0,                    \
      SHLO_EW(1, FC, N, Y, Y, UNKNOWN), 0)                                    \
  X(SELECT, "stablehlo.select", elementwise, select, 0, 0, 0)                 \
  X(SHIFT_LEFT, "stablehlo.shift_left", elementwise, elementwise, 0,          \
      SHLO_EW(2, INT, Y, N, N, UNKNOWN), 0)                                   \
  X(SHIFT_RIGHT_ARITHMETIC, "stablehlo.shift_right_arithmetic", elementwise,  \
      elementwise, 0, SHLO_EW(2, INT, Y, N, N, UNKNOWN), 0)                   \
  X(SHIFT_RIGHT_LOGICAL, "stablehlo.shift_right_logical", elementwise,        \
      elementwise, 0, SHLO_EW(2, INT, Y, N, N, UNKNOWN), 0)                   \
  X(SIGN, "stablehlo.sign", elementwise, elementwise, 0,                      \
      SHLO_EW(1, SNUM, Y, Y, Y, UNKNOWN), 0)                                  \
  X(SINE, "stablehlo.sine", elementwise, elementwise, 0,                      \
      SHLO_EW(1, FC, N, Y, Y, UNKNOWN), 0)                                    \
  X(SQRT, "stablehlo.sqrt", elementwise, elementwise, 0,                      \
      SHLO_EW(1, FC, N, Y, Y, UNKNOWN), 0)                                    \
  X(SUBTRACT, "stablehlo.subtract", elementwise, elementwise, 0,              \
      SHLO_EW(2, NUM, Y, Y, Y, UNKNOWN), 0)                                   \
  X(TAN, "stablehlo.tan", elementwise, elementwise, 0,                        \
      SHLO_EW(1, FC, N, Y, Y, UNKNOWN), 0)                                    \
  X(TANH, "stablehlo.tanh", elementwise, elementwise, 0,                      \
      SHLO_EW(1, FC, N, Y, Y, UNKNOWN), 0)                                    \
  X(XOR, "stablehlo.xor", elementwise, elementwise, 0,                        \
      SHLO_EW(2, BI, Y, N, N, XOR), 0)

#define SHLO_OPS_SHAPE(X)                                              \
  X(BROADCAST_IN_DIM, "stablehlo.broadcast_in_dim", broadcast_in_dim,         \
      broadcast_in_dim, SHLO_OPF_PER_AXIS, 0,                                 \
      SHLO_KW("dims", "broadcast_dimensions"))                                \
  X(CONCATENATE, "stablehlo.concatenate", concatenate, concatenate, 0, 0,     \
      SHLO_KW("dim", "dimension"))                                            \
  X(DYNAMIC_SLICE, "stablehlo.dynamic_slice", dynamic_slice, dynamic_slice,   \
      0, 0, SHLO_KW("sizes", "slice_sizes"))                                  \
  X(DYNAMIC_UPDATE_SLICE, "stablehlo.dynamic_update_slice",                   \
      dynamic_update_slice, dynamic_update_slice, 0, 0, 0)                    \
  X(GET_DIMENSION_SIZE, "stablehlo.get_dimension_size", get_dimension_size,   \
      get_dimension_size, SHLO_OPF_PER_AXIS, 0, SHLO_KW("dim", "dimension"))  \
  X(IOTA, "stablehlo.iota", iota, iota, 0, 0,                                 \
      SHLO_KW("dim", "iota_dimension"))                                       \
  X(PAD, "stablehlo.pad", pad, pad, 0, 0,                                     \
      SHLO_KW("low", "edge_padding_low")                                      \
      SHLO_KW("high", "edge_padding_high")                                    \
      SHLO_KW("interior", "interior_padding"))                                \
  X(RESHAPE, "stablehlo.reshape", reshape, reshape, SHLO_OPF_PER_AXIS, 0, 0)  \
  X(REVERSE, "stablehlo.reverse", reverse, reverse, 0, 0,                     \
      SHLO_KW("dims", "dimensions"))                                          \
  X(SLICE, "stablehlo.slice", slice, slice, 0, 0, 0)                          \
  X(TRANSPOSE, "stablehlo.transpose", transpose, transpose,                   \
      SHLO_OPF_PER_AXIS, 0, SHLO_KW("dims", "permutation"))

#define SHLO_OPS_CONTROL(X)                                            \
  X(ASYNC_DONE, "stablehlo.async_done", async_done, async_done, 0, 0, 0)     \
  X(ASYNC_START, "stablehlo.async_start", async_start, async_start, 0, 0, 0) \
  X(CALL, "func.call", call, call, SHLO_OPF_PER_AXIS, 0, 0)                   \
  X(CASE, "stablehlo.case", case, case, SHLO_OPF_PER_AXIS, 0, 0)              \
  X(CONSTANT, "stablehlo.constant", constant, constant, SHLO_OPF_PER_AXIS, 0, \
      0)                                                                      \
  X(FUNC_RETURN, "func.return", return, none, SHLO_OPF_PER_AXIS, 0, 0)        \
  X(GET_TUPLE_ELEMENT, "stablehlo.get_tuple_element", get_tuple_element,      \
      get_tuple_element, SHLO_OPF_PER_AXIS, 0, 0)                             \
  X(IF, "stablehlo.if", if, if, SHLO_OPF_PER_AXIS, 0, 0)                      \
  X(OPTIMIZATION_BARRIER, "stablehlo.optimization_barrier", identity,         \
      optimization_barrier, 0, 0, 0)                                          \
  X(RETURN, "stablehlo.return", return, none, SHLO_OPF_PER_AXIS, 0, 0)        \
  X(TUPLE, "stablehlo.tuple", tuple, tuple, SHLO_OPF_PER_AXIS, 0, 0)          \
  X(WHILE, "stablehlo.while", while, while, SHLO_OPF_PER_AXIS, 0, 0)        \
  /* MLIR's tensor.cast, which producers emit around StableHLO: the      \
   * operand as a compatible type (a static shape made dynamic or back) */ \
  X(TENSOR_CAST, "tensor.cast", identity, tensor_cast, SHLO_OPF_PER_AXIS, 0, \
      0)

#define SHLO_OPS_CHECK(X)                                              \
  X(CHECK_EXPECT_ALMOST_EQ, "check.expect_almost_eq", check, none,            \
      SHLO_OPF_PER_AXIS, 0, 0)                                                \
  X(CHECK_EXPECT_ALMOST_EQ_CONST, "check.expect_almost_eq_const", check,      \
      none, SHLO_OPF_PER_AXIS, 0, 0)                                          \
  X(CHECK_EXPECT_CLOSE, "check.expect_close", check, none, SHLO_OPF_PER_AXIS, \
      0, 0)                                                                   \
  X(CHECK_EXPECT_EQ, "check.expect_eq", check, none, SHLO_OPF_PER_AXIS, 0, 0) \
  X(CHECK_EXPECT_EQ_CONST, "check.expect_eq_const", check, none,              \
      SHLO_OPF_PER_AXIS, 0, 0)                                                \
  X(CHECK_EXPECT_SERIALIZED_EQ, "check.expect_serialized_eq", check, none,    \
      SHLO_OPF_PER_AXIS, 0, 0)                                                \
  X(INTERPRETER_PRINT, "interpreter.print", check, none, SHLO_OPF_PER_AXIS,   \
      0, 0)                                                                   \
  X(INTERPRETER_PROBE, "interpreter.probe", check, none, SHLO_OPF_PER_AXIS,   \
      0, 0)                                                                   \
  X(CUSTOM_CALL, "stablehlo.custom_call", custom_call, custom_call,           \
      SHLO_OPF_PER_AXIS, 0, 0)

#define SHLO_OPS_REDUCE(X)                                             \
  X(MAP, "stablehlo.map", map, map, 0, 0, 0)                                  \
  X(REDUCE, "stablehlo.reduce", reduce, reduce, 0, 0, 0)                      \
  X(REDUCE_WINDOW, "stablehlo.reduce_window", reduce_window, reduce_window,   \
      0, 0, 0)                                                                \
  X(SELECT_AND_SCATTER, "stablehlo.select_and_scatter", select_and_scatter,   \
      select_and_scatter, 0, 0, 0)                                            \
  X(SORT, "stablehlo.sort", sort, sort, 0, 0, SHLO_KW("dim", "dimension"))

#define SHLO_OPS_INDEXING(X)                                           \
  X(DYNAMIC_GATHER, "stablehlo.dynamic_gather", gather, dynamic_gather, 0, 0, \
      0)                                                                      \
  X(GATHER, "stablehlo.gather", gather, gather, 0, 0, 0)                      \
  X(SCATTER, "stablehlo.scatter", scatter, scatter, 0, 0, 0)

#define SHLO_OPS_LINALG(X)                                             \
  X(BATCH_NORM_GRAD, "stablehlo.batch_norm_grad", batch_norm,                 \
      batch_norm_grad, 0, 0, 0)                                               \
  X(BATCH_NORM_INFERENCE, "stablehlo.batch_norm_inference", batch_norm,       \
      batch_norm_inference, 0, 0, 0)                                          \
  X(BATCH_NORM_TRAINING, "stablehlo.batch_norm_training", batch_norm,         \
      batch_norm_training, 0, 0, 0)                                           \
  X(CHOLESKY, "stablehlo.cholesky", cholesky, cholesky, 0, 0, 0)              \
  X(CONVOLUTION, "stablehlo.convolution", convolution, convolution,           \
      SHLO_OPF_PER_AXIS, 0, SHLO_KW("dim_numbers", "dimension_numbers"))      \
  X(DOT, "stablehlo.dot", dot_general, dot, SHLO_OPF_PER_AXIS, 0,             \
      SHLO_KW("precision", "precision_config"))                               \
  X(DOT_GENERAL, "stablehlo.dot_general", dot_general, dot_general,           \
      SHLO_OPF_PER_AXIS, 0, SHLO_KW("precision", "precision_config"))         \
  X(DYNAMIC_CONV, "stablehlo.dynamic_conv", convolution, convolution,         \
      SHLO_OPF_PER_AXIS, 0, 0)                                                \
  X(FFT, "stablehlo.fft", fft, fft, 0, 0,                                     \
      SHLO_KW("type", "fft_type") SHLO_KW("length", "fft_length"))            \
  X(TRIANGULAR_SOLVE, "stablehlo.triangular_solve", triangular_solve,         \
      triangular_solve, 0, 0, 0)

#define SHLO_OPS_DYNAMIC(X)                                            \
  X(BROADCAST, "stablehlo.broadcast", broadcast, broadcast, 0, 0,             \
      SHLO_KW("sizes", "broadcast_sizes"))                                    \
  X(DYNAMIC_BROADCAST_IN_DIM, "stablehlo.dynamic_broadcast_in_dim",           \
      broadcast_in_dim, dynamic_broadcast_in_dim, SHLO_OPF_PER_AXIS, 0,       \
      SHLO_KW("dims", "broadcast_dimensions"))                                \
  X(DYNAMIC_IOTA, "stablehlo.dynamic_iota", iota, dynamic_iota, 0, 0,         \
      SHLO_KW("dim", "iota_dimension"))                                       \
  X(DYNAMIC_PAD, "stablehlo.dynamic_pad", dynamic_pad, dynamic_pad, 0, 0, 0)  \
  X(DYNAMIC_RESHAPE, "stablehlo.dynamic_reshape", reshape, dynamic_reshape,   \
      0, 0, 0)                                                                \
  X(REAL_DYNAMIC_SLICE, "stablehlo.real_dynamic_slice", real_dynamic_slice,   \
      none, 0, 0, 0)

#define SHLO_OPS_RNG_QUANT(X)                                          \
  X(RNG, "stablehlo.rng", rng, rng, 0, 0,                                     \
      SHLO_KW("distribution", "rng_distribution"))                            \
  X(RNG_BIT_GENERATOR, "stablehlo.rng_bit_generator", rng_bit_generator,      \
      rng_bit_generator, 0, 0, SHLO_KW("algorithm", "rng_algorithm"))         \
  X(UNIFORM_DEQUANTIZE, "stablehlo.uniform_dequantize", uniform_dequantize,   \
      uniform_dequantize, SHLO_OPF_PER_AXIS, 0, 0)                            \
  X(UNIFORM_QUANTIZE, "stablehlo.uniform_quantize", uniform_quantize,         \
      uniform_quantize, SHLO_OPF_PER_AXIS, 0, 0)

/* Process grids: collectives, channels, feeds (kernels/grid_ops.c,
 * kernels/collective.c; the grid itself is runtime/grid.c). */
#define SHLO_OPS_GRID(X)                                               \
  X(AFTER_ALL, "stablehlo.after_all", after_all, after_all, 0, 0, 0)          \
  X(ALL_GATHER, "stablehlo.all_gather", collective, all_gather, 0, 0, 0)      \
  X(ALL_REDUCE, "stablehlo.all_reduce", collective, all_reduce, 0, 0, 0)      \
  X(ALL_TO_ALL, "stablehlo.all_to_all", collective, all_to_all, 0, 0, 0)      \
  X(COLLECTIVE_BROADCAST, "stablehlo.collective_broadcast", collective,       \
      collective_broadcast, 0, 0, 0)                                          \
  X(COLLECTIVE_PERMUTE, "stablehlo.collective_permute", collective,           \
      collective_permute, 0, 0, 0)                                            \
  X(COLLECTIVE_REDUCE, "stablehlo.collective_reduce", collective,             \
      collective_reduce, 0, 0, 0)                                             \
  X(INFEED, "stablehlo.infeed", infeed, infeed, SHLO_OPF_PER_AXIS, 0, 0)      \
  X(OUTFEED, "stablehlo.outfeed", outfeed, outfeed, SHLO_OPF_PER_AXIS, 0, 0)  \
  X(PARTITION_ID, "stablehlo.partition_id", process_id, process_id, 0, 0, 0)  \
  X(RECV, "stablehlo.recv", recv, recv, SHLO_OPF_PER_AXIS, 0, 0)              \
  X(REDUCE_SCATTER, "stablehlo.reduce_scatter", collective, reduce_scatter,   \
      0, 0, 0)                                                                \
  X(REPLICA_ID, "stablehlo.replica_id", process_id, process_id, 0, 0, 0)      \
  X(RUN_PARALLEL, "interpreter.run_parallel", run_parallel, none, 0, 0, 0)    \
  X(SEND, "stablehlo.send", send, send, SHLO_OPF_PER_AXIS, 0, 0)

/* CHLO ops that JAX exports, and ops beyond the spec (chlo.c). */
#define SHLO_OPS_CHLO(X)                                               \
  X(CHLO_ACOS, "chlo.acos", chlo, none, SHLO_OPF_PER_AXIS,                    \
      SHLO_CHLO(1, sf_acos, 0, cacos), 0)                                     \
  X(CHLO_ACOSH, "chlo.acosh", chlo, none, SHLO_OPF_PER_AXIS,                  \
      SHLO_CHLO(1, sf_acosh, 0, cacosh), 0)                                   \
  X(CHLO_ASIN, "chlo.asin", chlo, none, SHLO_OPF_PER_AXIS,                    \
      SHLO_CHLO(1, sf_asin, 0, casin), 0)                                     \
  X(CHLO_ASIN_ACOS_KERNEL, "chlo.asin_acos_kernel", chlo, none,              \
      SHLO_OPF_PER_AXIS, SHLO_CHLO(1, 0, 0, sc_asin_acos_kernel), 0)          \
  X(CHLO_ASINH, "chlo.asinh", chlo, none, SHLO_OPF_PER_AXIS,                  \
      SHLO_CHLO(1, sf_asinh, 0, casinh), 0)                                   \
  X(CHLO_ATAN, "chlo.atan", chlo, none, SHLO_OPF_PER_AXIS,                    \
      SHLO_CHLO(1, sf_atan, 0, catan), 0)                                     \
  X(CHLO_ATANH, "chlo.atanh", chlo, none, SHLO_OPF_PER_AXIS,                  \
      SHLO_CHLO(1, sf_atanh, 0, catanh), 0)                                   \
  X(CHLO_BESSEL_I1E, "chlo.bessel_i1e", chlo, none, SHLO_OPF_PER_AXIS,        \
      SHLO_CHLO(1, sf_bessel_i1e, 0, 0), 0)                                   \
  X(CHLO_CONJ, "chlo.conj", chlo, none, SHLO_OPF_PER_AXIS,                    \
      SHLO_CHLO(1, sf_ident, 0, sc_conj), 0)                                  \
  X(CHLO_COSH, "chlo.cosh", chlo, none, SHLO_OPF_PER_AXIS,                    \
      SHLO_CHLO(1, sf_cosh, 0, ccosh), 0)                                     \
  X(CHLO_DIGAMMA, "chlo.digamma", chlo, none, SHLO_OPF_PER_AXIS,              \
      SHLO_CHLO(1, sf_digamma, 0, 0), 0)                                      \
  X(CHLO_ERF, "chlo.erf", chlo, none, SHLO_OPF_PER_AXIS,                      \
      SHLO_CHLO(1, sf_erf, 0, 0), 0)                                          \
  X(CHLO_ERF_INV, "chlo.erf_inv", chlo, none, SHLO_OPF_PER_AXIS,              \
      SHLO_CHLO(1, sf_erf_inv, 0, 0), 0)                                      \
  X(CHLO_ERFC, "chlo.erfc", chlo, none, SHLO_OPF_PER_AXIS,                    \
      SHLO_CHLO(1, sf_erfc, 0, 0), 0)                                         \
  X(CHLO_IGAMMA, "chlo.igamma", chlo, none, SHLO_OPF_PER_AXIS,                \
      SHLO_CHLO(2, 0, sf_igamma_p, 0), 0)                                     \
  X(CHLO_IGAMMAC, "chlo.igammac", chlo, none, SHLO_OPF_PER_AXIS,              \
      SHLO_CHLO(2, 0, sf_igamma_q, 0), 0)                                     \
  X(CHLO_IS_INF, "chlo.is_inf", chlo, none, SHLO_OPF_PER_AXIS,                \
      SHLO_CHLO(1, 0, 0, 0), 0)                                               \
  X(CHLO_IS_NEG_INF, "chlo.is_neg_inf", chlo, none, SHLO_OPF_PER_AXIS,        \
      SHLO_CHLO(1, 0, 0, 0), 0)                                               \
  X(CHLO_IS_POS_INF, "chlo.is_pos_inf", chlo, none, SHLO_OPF_PER_AXIS,        \
      SHLO_CHLO(1, 0, 0, 0), 0)                                               \
  X(CHLO_LGAMMA, "chlo.lgamma", chlo, none, SHLO_OPF_PER_AXIS,                \
      SHLO_CHLO(1, sf_lgamma, 0, 0), 0)                                       \
  X(CHLO_MULHI, "chlo.mulhi", chlo, none, SHLO_OPF_PER_AXIS,                  \
      SHLO_CHLO(2, 0, 0, 0), 0)                                               \
  X(CHLO_NEXT_AFTER, "chlo.next_after", chlo, none, SHLO_OPF_PER_AXIS,        \
      SHLO_CHLO(2, 0, 0, 0), 0)                                               \
  X(CHLO_POLYGAMMA, "chlo.polygamma", chlo, none, SHLO_OPF_PER_AXIS,          \
      SHLO_CHLO(2, 0, sf_polygamma, 0), 0)                                    \
  X(CHLO_RAGGED_DOT, "chlo.ragged_dot", chlo_ragged_dot, none,                \
      SHLO_OPF_PER_AXIS, 0, 0)                                                \
  X(CHLO_SCAN, "chlo.scan", chlo_scan, none, SHLO_OPF_PER_AXIS, 0, 0)         \
  X(CHLO_SINH, "chlo.sinh", chlo, none, SHLO_OPF_PER_AXIS,                    \
      SHLO_CHLO(1, sf_sinh, 0, csinh), 0)                                     \
  X(CHLO_TAN, "chlo.tan", chlo, none, SHLO_OPF_PER_AXIS,                      \
      SHLO_CHLO(1, sf_tan, 0, ctan), 0)                                       \
  X(CHLO_TOP_K, "chlo.top_k", chlo_top_k, none, SHLO_OPF_PER_AXIS, 0, 0)      \
  X(CHLO_ZETA, "chlo.zeta", chlo, none, SHLO_OPF_PER_AXIS,                    \
      SHLO_CHLO(2, 0, sf_zeta, 0), 0)                                         \
  X(COMPOSITE, "stablehlo.composite", composite, composite,                   \
      SHLO_OPF_PER_AXIS, 0, 0)                                                \
  X(ATAN, "stablehlo.atan", chlo, float_unary, 0,                            \
      SHLO_CHLO(1, sf_atan, 0, catan), 0)                                     \
  X(CHLO_SQUARE, "chlo.square", chlo, none, SHLO_OPF_PER_AXIS,               \
      SHLO_CHLO(1, sf_square, 0, sc_square), 0)                               \
  X(EINSUM, "stablehlo.einsum", einsum, einsum, 0, 0,                         \
      SHLO_KW("config", "einsum_config"))

/* CHLO's implicitly broadcasting ops (kernels/chlo_broadcast.c): each
 * broadcasts its operands to the result's shape (ops/chlo_bcast.h) and
 * runs the same-shape op of its SHLO_BCAST(op, kinds, result) column:
 * kinds = element classes it accepts, result = SAME element type as the
 * operands, PRED (i1) or CPLX (complex of the float operands). */
#define SHLO_OPS_CHLO_BROADCAST(X)                                     \
  X(CHLO_BROADCAST_ADD, "chlo.broadcast_add", chlo_broadcast,                 \
      chlo_broadcast, 0, SHLO_BCAST(ADD, ANY, SAME), 0)                       \
  X(CHLO_BROADCAST_AND, "chlo.broadcast_and", chlo_broadcast,                 \
      chlo_broadcast, 0, SHLO_BCAST(AND, BI, SAME), 0)                        \
  X(CHLO_BROADCAST_ATAN2, "chlo.broadcast_atan2", chlo_broadcast,             \
      chlo_broadcast, 0, SHLO_BCAST(ATAN2, FC, SAME), 0)                      \
  X(CHLO_BROADCAST_COMPARE, "chlo.broadcast_compare", chlo_broadcast,         \
      chlo_broadcast, 0, SHLO_BCAST(COMPARE, ANY, PRED), 0)                   \
  X(CHLO_BROADCAST_COMPLEX, "chlo.broadcast_complex", chlo_broadcast,         \
      chlo_broadcast, 0, SHLO_BCAST(COMPLEX, FQ, CPLX), 0)                    \
  X(CHLO_BROADCAST_DIVIDE, "chlo.broadcast_divide", chlo_broadcast,           \
      chlo_broadcast, 0, SHLO_BCAST(DIVIDE, NUM, SAME), 0)                    \
  X(CHLO_BROADCAST_MAXIMUM, "chlo.broadcast_maximum", chlo_broadcast,         \
      chlo_broadcast, 0, SHLO_BCAST(MAXIMUM, ANY, SAME), 0)                   \
  X(CHLO_BROADCAST_MINIMUM, "chlo.broadcast_minimum", chlo_broadcast,         \
      chlo_broadcast, 0, SHLO_BCAST(MINIMUM, ANY, SAME), 0)                   \
  X(CHLO_BROADCAST_MULTIPLY, "chlo.broadcast_multiply", chlo_broadcast,       \
      chlo_broadcast, 0, SHLO_BCAST(MULTIPLY, ANY, SAME), 0)                  \
  X(CHLO_BROADCAST_NEXT_AFTER, "chlo.broadcast_next_after", chlo_broadcast,   \
      chlo_broadcast, 0, SHLO_BCAST(CHLO_NEXT_AFTER, FQ, SAME), 0)            \
  X(CHLO_BROADCAST_OR, "chlo.broadcast_or", chlo_broadcast, chlo_broadcast,   \
      0, SHLO_BCAST(OR, BI, SAME), 0)                                         \
  X(CHLO_BROADCAST_POLYGAMMA, "chlo.broadcast_polygamma", chlo_broadcast,     \
      chlo_broadcast, 0, SHLO_BCAST(CHLO_POLYGAMMA, FQ, SAME), 0)             \
  X(CHLO_BROADCAST_POWER, "chlo.broadcast_power", chlo_broadcast,             \
      chlo_broadcast, 0, SHLO_BCAST(POWER, NUM, SAME), 0)                     \
  X(CHLO_BROADCAST_REMAINDER, "chlo.broadcast_remainder", chlo_broadcast,     \
      chlo_broadcast, 0, SHLO_BCAST(REMAINDER, NUM, SAME), 0)                 \
  X(CHLO_BROADCAST_SELECT, "chlo.broadcast_select", chlo_broadcast,           \
      chlo_broadcast, 0, SHLO_BCAST(SELECT, ANY, SAME), 0)                    \
  X(CHLO_BROADCAST_SHIFT_LEFT, "chlo.broadcast_shift_left", chlo_broadcast,   \
      chlo_broadcast, 0, SHLO_BCAST(SHIFT_LEFT, INT, SAME), 0)                \
  X(CHLO_BROADCAST_SHIFT_RIGHT_ARITHMETIC,                                    \
      "chlo.broadcast_shift_right_arithmetic", chlo_broadcast,                \
      chlo_broadcast, 0, SHLO_BCAST(SHIFT_RIGHT_ARITHMETIC, INT, SAME), 0)    \
  X(CHLO_BROADCAST_SHIFT_RIGHT_LOGICAL, "chlo.broadcast_shift_right_logical", \
      chlo_broadcast, chlo_broadcast, 0,                                      \
      SHLO_BCAST(SHIFT_RIGHT_LOGICAL, INT, SAME), 0)                          \
  X(CHLO_BROADCAST_SUBTRACT, "chlo.broadcast_subtract", chlo_broadcast,       \
      chlo_broadcast, 0, SHLO_BCAST(SUBTRACT, NUM, SAME), 0)                  \
  X(CHLO_BROADCAST_XOR, "chlo.broadcast_xor", chlo_broadcast,                 \
      chlo_broadcast, 0, SHLO_BCAST(XOR, BI, SAME), 0)                        \
  X(CHLO_BROADCAST_ZETA, "chlo.broadcast_zeta", chlo_broadcast,               \
      chlo_broadcast, 0, SHLO_BCAST(CHLO_ZETA, FQ, SAME), 0)

/* The rest of StableHLO's and CHLO's op definitions (StablehloOps.td,
 * ChloOps.td) outside the spec's list: ops on their way out that
 * producers still emit (kernels/dialect.c, chlo_broadcast.c), and the few
 * refused with their reason (the `removed` compile function). */
#define SHLO_OPS_DIALECT(X)                                            \
  X(CHLO_CONSTANT, "chlo.constant", constant, constant, 0, 0, 0)              \
  X(CHLO_CONSTANT_LIKE, "chlo.constant_like", constant_like, constant_like,   \
      0, 0, 0)                                                                \
  X(CHLO_MINIMUM_BROADCAST_SHAPES, "chlo.minimum_broadcast_shapes",           \
      minimum_broadcast_shapes, minimum_broadcast_shapes, 0, 0, 0)            \
  X(COMPUTE_RESHAPE_SHAPE, "stablehlo.compute_reshape_shape", removed, none,  \
      0, 0, 0)                                                                \
  X(CREATE_TOKEN, "stablehlo.create_token", after_all, after_all, 0, 0, 0)    \
  X(CROSS_REPLICA_SUM, "stablehlo.cross-replica-sum", collective,             \
      cross_replica_sum, 0, 0, 0)                                             \
  X(CSTR_RESHAPABLE, "stablehlo.cstr_reshapable", removed, none, 0, 0, 0)     \
  X(SET_DIMENSION_SIZE, "stablehlo.set_dimension_size", set_dimension_size,   \
      set_dimension_size, 0, 0, SHLO_KW("dim", "dimension"))                  \
  X(TORCH_INDEX_SELECT, "stablehlo.torch_index_select", torch_index_select,   \
      torch_index_select, 0, 0, 0)                                            \
  X(TRACE, "stablehlo.trace", trace, trace, 0, 0, 0)                          \
  X(UNARY_EINSUM, "stablehlo.unary_einsum", einsum, einsum, 0, 0,             \
      SHLO_KW("config", "einsum_config"))

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
  SHLO_OPS_CHLO(X)        \
  SHLO_OPS_CHLO_BROADCAST(X) \
  SHLO_OPS_DIALECT(X)

typedef enum {
  SHLO_OP_UNKNOWN = 0,
#define SHLO_OP_ENUM(e, name, c, v, fl, k, kw) SHLO_OP_##e,
  SHLO_OP_LIST(SHLO_OP_ENUM)
#undef SHLO_OP_ENUM
  SHLO_OP_COUNT
} shlo_opcode;

#define SHLO_OP_DECLARE(e, name, c, v, fl, k, kw)                             \
  shlo_status shlo__compile_##c(shlo_compiler *cc, const shlo_op *op,         \
                                shlo_step *step);
SHLO_OP_LIST(SHLO_OP_DECLARE)
#undef SHLO_OP_DECLARE
/* The compile function of ops the table does not know (compile.c). */
shlo_status shlo__compile_unimplemented(shlo_compiler *cc, const shlo_op *op,
                                        shlo_step *step);

/* A row's SHLO_EW kernels column as its fields, for a consumer macro m:
 * SHLO_EW_ROW(m, e, kernels) is m(e, arity, kinds, I, F, C, i1_op); a row
 * with no SHLO_EW column gives m(e, 0, NONE, N, N, N, UNKNOWN).  Only the
 * SHLO_OPS_ELEMENTWISE rows may be expanded this way. */
#define SHLO_INVOKE(m, ...) m(__VA_ARGS__)
#define SHLO_EW_FIELDS_SHLO_EW(arity, kinds, i, f, c, i1) \
  arity, kinds, i, f, c, i1
#define SHLO_EW_FIELDS_0 0, NONE, N, N, N, UNKNOWN
#define SHLO_EW_ROW(m, e, kernels) SHLO_INVOKE(m, e, SHLO_EW_FIELDS_##kernels)

/* Op code for a full op name ("stablehlo.add"); SHLO_OP_UNKNOWN if none. */
shlo_opcode shlo__op_lookup(const char *name, size_t len);
const char *shlo__op_name(shlo_opcode code);
shlo_compile_fn shlo__op_compile_fn(shlo_opcode code);
/* SHLO_OPF_* bits of an op (0 for SHLO_OP_UNKNOWN). */
unsigned shlo__op_flags(shlo_opcode code);
/* The generic attribute name that pretty keyword kw (n bytes) of op code
 * stands for; NULL when the op has no such keyword. */
const char *shlo__op_keyword_attr(shlo_opcode code, const char *kw, size_t n);
/* The op's i-th pretty keyword, or NULL past the last (for suggestions). */
const char *shlo__op_keyword(shlo_opcode code, int i);

/* The op_facts.h columns of an op.  SHLO_OP_UNKNOWN (and any code out of
 * range) has none: it runs via float when quantized, as before the table
 * said so; no refinement rule, no reducer, no VHLO name. */
shlo_op_quant shlo__op_quant(shlo_opcode code);
shlo_op_refine shlo__op_refine(shlo_opcode code);
shlo_op_reducer shlo__op_reducer(shlo_opcode code);
/* The op's VHLO base name ("abs"), or NULL. */
const char *shlo__op_vhlo(shlo_opcode code);

#endif
