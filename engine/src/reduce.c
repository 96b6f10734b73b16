/* Reductions over regions: reduce, reduce_window, select_and_scatter, map.
 *
 * Not implemented yet: each compile function reports the op as
 * unsupported. */
#include "ops.h"

shlo_status shlo_compile_map(shlo_compiler *cc, const shlo_op *op,
                             shlo_step *step) {
  return shlo_compile_unimplemented(cc, op, step);
}

shlo_status shlo_compile_reduce(shlo_compiler *cc, const shlo_op *op,
                                shlo_step *step) {
  return shlo_compile_unimplemented(cc, op, step);
}

shlo_status shlo_compile_reduce_window(shlo_compiler *cc, const shlo_op *op,
                                       shlo_step *step) {
  return shlo_compile_unimplemented(cc, op, step);
}

shlo_status shlo_compile_select_and_scatter(shlo_compiler *cc, const shlo_op *op,
                                            shlo_step *step) {
  return shlo_compile_unimplemented(cc, op, step);
}
