/* Random numbers: rng and rng_bit_generator.
 *
 * Not implemented yet: each compile function reports the op as
 * unsupported. */
#include "ops.h"

shlo_status shlo_compile_rng(shlo_compiler *cc, const shlo_op *op,
                             shlo_step *step) {
  return shlo_compile_unimplemented(cc, op, step);
}

shlo_status shlo_compile_rng_bit_generator(shlo_compiler *cc, const shlo_op *op,
                                           shlo_step *step) {
  return shlo_compile_unimplemented(cc, op, step);
}
