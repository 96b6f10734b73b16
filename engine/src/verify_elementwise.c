/* stub */
#include "verify_int.h"

bool shlo__verify_elementwise(shlo__vctx *vc, const shlo_op *op) {
  (void)vc; (void)op;
  return true;
}

bool shlo__verify_compare(shlo__vctx *vc, const shlo_op *op) {
  (void)vc; (void)op;
  return true;
}

bool shlo__verify_select(shlo__vctx *vc, const shlo_op *op) {
  (void)vc; (void)op;
  return true;
}

bool shlo__verify_clamp(shlo__vctx *vc, const shlo_op *op) {
  (void)vc; (void)op;
  return true;
}

bool shlo__verify_complex(shlo__vctx *vc, const shlo_op *op) {
  (void)vc; (void)op;
  return true;
}

bool shlo__verify_real_imag(shlo__vctx *vc, const shlo_op *op) {
  (void)vc; (void)op;
  return true;
}

bool shlo__verify_convert(shlo__vctx *vc, const shlo_op *op) {
  (void)vc; (void)op;
  return true;
}

bool shlo__verify_bitcast_convert(shlo__vctx *vc, const shlo_op *op) {
  (void)vc; (void)op;
  return true;
}

bool shlo__verify_reduce_precision(shlo__vctx *vc, const shlo_op *op) {
  (void)vc; (void)op;
  return true;
}

bool shlo__verify_is_finite(shlo__vctx *vc, const shlo_op *op) {
  (void)vc; (void)op;
  return true;
}

bool shlo__verify_constant(shlo__vctx *vc, const shlo_op *op) {
  (void)vc; (void)op;
  return true;
}

bool shlo__verify_uniform_quantize(shlo__vctx *vc, const shlo_op *op) {
  (void)vc; (void)op;
  return true;
}

bool shlo__verify_uniform_dequantize(shlo__vctx *vc, const shlo_op *op) {
  (void)vc; (void)op;
  return true;
}

