/* SPDX-License-Identifier: Apache-2.0 */
/* What an op family's file includes: both halves of the plan contract,
 * the compiler's (compile/compiler.h, for its compile functions, which the
 * op table ops/ops.h declares) and the executor's (runtime/exec.h, for
 * its kernels).  The compiler itself sees only the first half. */
#ifndef SHLO_KERNEL_H
#define SHLO_KERNEL_H

#include "compile/compiler.h"
#include "ops/ops.h"
#include "runtime/exec.h"

#endif
