/* SPDX-License-Identifier: Apache-2.0 */
/* Ops of MLIR's tensor dialect that producers emit around StableHLO. */
#include "verify/verify_int.h"

/* tensor.cast: one operand and one result of cast-compatible types (the
 * same element type; shapes that agree wherever both are static), as
 * MLIR's tensor.cast verifier has it. */
bool shlo__verify_tensor_cast(shlo__vctx *vc, const shlo_op *op) {
  if (op->n_operands != 1 || op->n_results != 1)
    return shlo__verr(vc, op, NULL, "expects one operand and one result");
  const shlo_type *a = shlo__otype(vc, op, 0), *r = shlo__rtype(vc, op, 0);
  if (!shlo__is_tensor(a) || !shlo__is_tensor(r) ||
      !shlo__compat_type(a, r))
    return shlo__verr(vc, op, NULL, "operand type %s and result type %s are "
                      "cast incompatible", shlo__tstr(vc, a),
                      shlo__tstr(vc, r));
  return true;
}
