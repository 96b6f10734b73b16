/* Uniform quantization: uniform_quantize, uniform_dequantize.
 *
 * Not implemented yet: each compile function reports the op as
 * unsupported. */
#include "ops.h"

shlo_status shlo_compile_uniform_dequantize(shlo_compiler *cc, const shlo_op *op,
                                            shlo_step *step) {
  return shlo_compile_unimplemented(cc, op, step);
}

shlo_status shlo_compile_uniform_quantize(shlo_compiler *cc, const shlo_op *op,
                                          shlo_step *step) {
  return shlo_compile_unimplemented(cc, op, step);
}

shlo_status shlo__compile_quantized(shlo_compiler *cc, const shlo_op *op,
                                    shlo_step *step, shlo_compile_fn inner) {
  /* Until quantization lands, only ops that merely move or reinterpret
   * storage accept quantized types. */
  switch (op->code) {
  case SHLO_OP_BITCAST_CONVERT:
  case SHLO_OP_CONSTANT:
    return inner(cc, op, step);
  default:
    return shlo_cc_fail(cc, op, SHLO_EUNSUPPORTED,
                        "quantized operands are not supported by '%s' yet",
                        op->name);
  }
}
