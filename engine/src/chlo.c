/* CHLO ops as JAX exports them.
 *
 * Not implemented yet: each compile function reports the op as
 * unsupported. */
#include "ops.h"

shlo_status shlo_compile_chlo(shlo_compiler *cc, const shlo_op *op,
                              shlo_step *step) {
  return shlo_compile_unimplemented(cc, op, step);
}

shlo_status shlo_compile_chlo_ragged_dot(shlo_compiler *cc, const shlo_op *op,
                                         shlo_step *step) {
  return shlo_compile_unimplemented(cc, op, step);
}

shlo_status shlo_compile_chlo_scan(shlo_compiler *cc, const shlo_op *op,
                                   shlo_step *step) {
  return shlo_compile_unimplemented(cc, op, step);
}

shlo_status shlo_compile_chlo_top_k(shlo_compiler *cc, const shlo_op *op,
                                    shlo_step *step) {
  return shlo_compile_unimplemented(cc, op, step);
}
