/* Process grids: run_parallel, replica/partition ids, collectives, send/recv, infeed/outfeed, after_all.
 *
 * Not implemented yet: each compile function reports the op as
 * unsupported. */
#include "ops.h"

shlo_status shlo_compile_after_all(shlo_compiler *cc, const shlo_op *op,
                                   shlo_step *step) {
  return shlo_compile_unimplemented(cc, op, step);
}

shlo_status shlo_compile_collective(shlo_compiler *cc, const shlo_op *op,
                                    shlo_step *step) {
  return shlo_compile_unimplemented(cc, op, step);
}

shlo_status shlo_compile_infeed(shlo_compiler *cc, const shlo_op *op,
                                shlo_step *step) {
  return shlo_compile_unimplemented(cc, op, step);
}

shlo_status shlo_compile_outfeed(shlo_compiler *cc, const shlo_op *op,
                                 shlo_step *step) {
  return shlo_compile_unimplemented(cc, op, step);
}

shlo_status shlo_compile_process_id(shlo_compiler *cc, const shlo_op *op,
                                    shlo_step *step) {
  return shlo_compile_unimplemented(cc, op, step);
}

shlo_status shlo_compile_recv(shlo_compiler *cc, const shlo_op *op,
                              shlo_step *step) {
  return shlo_compile_unimplemented(cc, op, step);
}

shlo_status shlo_compile_run_parallel(shlo_compiler *cc, const shlo_op *op,
                                      shlo_step *step) {
  return shlo_compile_unimplemented(cc, op, step);
}

shlo_status shlo_compile_send(shlo_compiler *cc, const shlo_op *op,
                              shlo_step *step) {
  return shlo_compile_unimplemented(cc, op, step);
}
