/* stub */
#include "verify_int.h"

bool shlo__verify_batch_norm_grad(shlo__vctx *vc, const shlo_op *op) {
  (void)vc; (void)op;
  return true;
}

bool shlo__verify_batch_norm_inference(shlo__vctx *vc, const shlo_op *op) {
  (void)vc; (void)op;
  return true;
}

bool shlo__verify_batch_norm_training(shlo__vctx *vc, const shlo_op *op) {
  (void)vc; (void)op;
  return true;
}

bool shlo__verify_cholesky(shlo__vctx *vc, const shlo_op *op) {
  (void)vc; (void)op;
  return true;
}

bool shlo__verify_convolution(shlo__vctx *vc, const shlo_op *op) {
  (void)vc; (void)op;
  return true;
}

bool shlo__verify_dot(shlo__vctx *vc, const shlo_op *op) {
  (void)vc; (void)op;
  return true;
}

bool shlo__verify_dot_general(shlo__vctx *vc, const shlo_op *op) {
  (void)vc; (void)op;
  return true;
}

bool shlo__verify_fft(shlo__vctx *vc, const shlo_op *op) {
  (void)vc; (void)op;
  return true;
}

bool shlo__verify_triangular_solve(shlo__vctx *vc, const shlo_op *op) {
  (void)vc; (void)op;
  return true;
}

