/* SPDX-License-Identifier: Apache-2.0 */
/* The compiler's interface to op compile functions.
 *
 * compile.c walks a verified function and, for each op, calls the compile
 * function its op-table row names (ops/ops.h) with a step whose slots
 * are filled in.  This header is what those functions may ask of the
 * compiler; it knows nothing of how plans run (runtime/exec.h). */
#ifndef SHLO_COMPILER_H
#define SHLO_COMPILER_H

#include "compile/plan.h"
#include "ops/ops.h"

/* Each op's compile function fills step->fn, step->params (and may adjust
 * step->in/out); step->in/out already hold operand/result slots and
 * step->op is set.  It must check what the kernel relies on (static shapes,
 * supported element types) and fail with SHLO_EUNSUPPORTED naming the op
 * and type when this build cannot run it.
 * (shlo_compile_fn, declared with the op table in ops/ops.h.) */

/* Compile-time view the op compile functions get. */
const shlo_type *shlo__cc_operand_type(shlo_compiler *cc, const shlo_op *op,
                                      int i);
const shlo_type *shlo__cc_result_type(shlo_compiler *cc, const shlo_op *op,
                                     int i);
/* The type of any value id of the function being compiled (block
 * arguments of regions included). */
const shlo_type *shlo__cc_value_type(shlo_compiler *cc, int value);
/* Make shlo__cc_operand_type/shlo__cc_result_type report type t for value
 * `value` of the current function (NULL restores its own type).  The
 * quantized-op wrapper uses this to compile an op's float form; it must
 * restore every override it set before returning. */
shlo_status shlo__cc_override_type(shlo_compiler *cc, int value,
                                  const shlo_type *t);

/* Compile an op that has quantized operands or results (quant.c): ops that
 * only move data or convert between quantized and float run `inner`
 * directly; others run as dequantize -> inner's float kernel -> quantize,
 * as the spec defines for quantized operands. */
shlo_status shlo__compile_quantized(shlo_compiler *cc, const shlo_op *op,
                                    shlo_step *step, shlo_compile_fn inner);

/* Fail compilation with "file:line:col: error: <op name>: <message>". */
shlo_status shlo__cc_fail(shlo_compiler *cc, const shlo_op *op,
                         shlo_status code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Compile region i of op into step->plans[i]; captured outer values are
 * appended to step->in.  Called by the compile functions of ops with
 * regions (while, if, case, reduce, sort, ...). */
shlo_status shlo__cc_compile_regions(shlo_compiler *cc, const shlo_op *op,
                                    shlo_step *step);
/* The compiled plan of a function of the module (for func.call). */
shlo_status shlo__cc_func_plan(shlo_compiler *cc, const shlo_op *op,
                              const char *name, shlo_plan **out);


#endif
