/* stub */
#include "verify_int.h"

bool shlo__verify_gather(shlo__vctx *vc, const shlo_op *op) {
  (void)vc; (void)op;
  return true;
}

bool shlo__verify_dynamic_gather(shlo__vctx *vc, const shlo_op *op) {
  (void)vc; (void)op;
  return true;
}

bool shlo__verify_scatter(shlo__vctx *vc, const shlo_op *op) {
  (void)vc; (void)op;
  return true;
}

