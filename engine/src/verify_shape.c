/* stub */
#include "verify_int.h"

bool shlo__verify_broadcast_in_dim(shlo__vctx *vc, const shlo_op *op) {
  (void)vc; (void)op;
  return true;
}

bool shlo__verify_concatenate(shlo__vctx *vc, const shlo_op *op) {
  (void)vc; (void)op;
  return true;
}

bool shlo__verify_dynamic_slice(shlo__vctx *vc, const shlo_op *op) {
  (void)vc; (void)op;
  return true;
}

bool shlo__verify_dynamic_update_slice(shlo__vctx *vc, const shlo_op *op) {
  (void)vc; (void)op;
  return true;
}

bool shlo__verify_get_dimension_size(shlo__vctx *vc, const shlo_op *op) {
  (void)vc; (void)op;
  return true;
}

bool shlo__verify_iota(shlo__vctx *vc, const shlo_op *op) {
  (void)vc; (void)op;
  return true;
}

bool shlo__verify_pad(shlo__vctx *vc, const shlo_op *op) {
  (void)vc; (void)op;
  return true;
}

bool shlo__verify_reshape(shlo__vctx *vc, const shlo_op *op) {
  (void)vc; (void)op;
  return true;
}

bool shlo__verify_reverse(shlo__vctx *vc, const shlo_op *op) {
  (void)vc; (void)op;
  return true;
}

bool shlo__verify_slice(shlo__vctx *vc, const shlo_op *op) {
  (void)vc; (void)op;
  return true;
}

bool shlo__verify_transpose(shlo__vctx *vc, const shlo_op *op) {
  (void)vc; (void)op;
  return true;
}

bool shlo__verify_broadcast(shlo__vctx *vc, const shlo_op *op) {
  (void)vc; (void)op;
  return true;
}

