/* SPDX-License-Identifier: Apache-2.0 */
#include "runtime/exec_int.h"
#include "runtime/exec_packs.h"

struct shlo__pack_scope **shlo__exec_packs(shlo_exec *ex) {
  return &ex->packs;
}
