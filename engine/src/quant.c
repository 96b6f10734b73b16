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
