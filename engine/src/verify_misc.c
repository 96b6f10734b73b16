/* stub */
#include "verify_int.h"

bool shlo__verify_call(shlo__vctx *vc, const shlo_op *op) {
  (void)vc; (void)op;
  return true;
}

bool shlo__verify_case(shlo__vctx *vc, const shlo_op *op) {
  (void)vc; (void)op;
  return true;
}

bool shlo__verify_if(shlo__vctx *vc, const shlo_op *op) {
  (void)vc; (void)op;
  return true;
}

bool shlo__verify_while(shlo__vctx *vc, const shlo_op *op) {
  (void)vc; (void)op;
  return true;
}

bool shlo__verify_tuple(shlo__vctx *vc, const shlo_op *op) {
  (void)vc; (void)op;
  return true;
}

bool shlo__verify_get_tuple_element(shlo__vctx *vc, const shlo_op *op) {
  (void)vc; (void)op;
  return true;
}

bool shlo__verify_optimization_barrier(shlo__vctx *vc, const shlo_op *op) {
  (void)vc; (void)op;
  return true;
}

bool shlo__verify_rng(shlo__vctx *vc, const shlo_op *op) {
  (void)vc; (void)op;
  return true;
}

bool shlo__verify_rng_bit_generator(shlo__vctx *vc, const shlo_op *op) {
  (void)vc; (void)op;
  return true;
}

bool shlo__verify_custom_call(shlo__vctx *vc, const shlo_op *op) {
  (void)vc; (void)op;
  return true;
}

bool shlo__verify_composite(shlo__vctx *vc, const shlo_op *op) {
  (void)vc; (void)op;
  return true;
}

