/* SPDX-License-Identifier: Apache-2.0 */
/* The slot of an execution that holds the pack scopes of its running
 * whiles (kernels/pack_scope.h): the kernels reach shlo_exec's fields
 * only through the runtime. */
#ifndef SHLO_EXEC_PACKS_H
#define SHLO_EXEC_PACKS_H

#include "compile/plan.h"

struct shlo__pack_scope;

struct shlo__pack_scope **shlo__exec_packs(shlo_exec *ex);

#endif
