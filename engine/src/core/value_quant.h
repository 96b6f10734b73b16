/* SPDX-License-Identifier: Apache-2.0 */
/* Quantization parameters owned by values.
 *
 * A type's shlo_quant lives in its module's arena, but a value must outlive
 * the module that produced it (shlo/tensor.h).  So a quantized value points
 * at a reference-counted heap copy of its parameters: made once from a type
 * (shlo_tensor_set_quant, public), then shared by every value derived from it
 * (shlo__value_share_quant), and released when the last such value goes. */
#ifndef SHLO_VALUE_QUANT_H
#define SHLO_VALUE_QUANT_H

#include "shlo/tensor.h"

/* Make dst share src's parameters (none if src has none). */
void shlo__value_share_quant(shlo_value *dst, const shlo_value *src);

#endif
