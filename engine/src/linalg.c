/* Linear algebra: dot_general/dot, triangular_solve, cholesky, batch norm.
 *
 * Not implemented yet: each compile function reports the op as
 * unsupported. */
#include "ops.h"

shlo_status shlo_compile_batch_norm(shlo_compiler *cc, const shlo_op *op,
                                    shlo_step *step) {
  return shlo_compile_unimplemented(cc, op, step);
}

shlo_status shlo_compile_cholesky(shlo_compiler *cc, const shlo_op *op,
                                  shlo_step *step) {
  return shlo_compile_unimplemented(cc, op, step);
}

shlo_status shlo_compile_dot_general(shlo_compiler *cc, const shlo_op *op,
                                     shlo_step *step) {
  return shlo_compile_unimplemented(cc, op, step);
}

shlo_status shlo_compile_triangular_solve(shlo_compiler *cc, const shlo_op *op,
                                          shlo_step *step) {
  return shlo_compile_unimplemented(cc, op, step);
}
