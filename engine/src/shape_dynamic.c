/* Dynamic-shape ops whose shapes are static in practice: broadcast, dynamic_pad, real_dynamic_slice (dynamic_iota, dynamic_reshape and dynamic_broadcast_in_dim share shape.c).
 *
 * Not implemented yet: each compile function reports the op as
 * unsupported. */
#include "ops.h"

shlo_status shlo_compile_broadcast(shlo_compiler *cc, const shlo_op *op,
                                   shlo_step *step) {
  return shlo_compile_unimplemented(cc, op, step);
}

shlo_status shlo_compile_dynamic_pad(shlo_compiler *cc, const shlo_op *op,
                                     shlo_step *step) {
  return shlo_compile_unimplemented(cc, op, step);
}

shlo_status shlo_compile_real_dynamic_slice(shlo_compiler *cc, const shlo_op *op,
                                            shlo_step *step) {
  return shlo_compile_unimplemented(cc, op, step);
}
