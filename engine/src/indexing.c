/* gather, dynamic_gather and scatter.
 *
 * Not implemented yet: each compile function reports the op as
 * unsupported. */
#include "ops.h"

shlo_status shlo_compile_gather(shlo_compiler *cc, const shlo_op *op,
                                shlo_step *step) {
  return shlo_compile_unimplemented(cc, op, step);
}

shlo_status shlo_compile_scatter(shlo_compiler *cc, const shlo_op *op,
                                 shlo_step *step) {
  return shlo_compile_unimplemented(cc, op, step);
}
