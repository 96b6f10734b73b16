/* SPDX-License-Identifier: Apache-2.0 */
/* The module behind the opaque shlo_module (shlo/ir.h): what the parser
 * and the artifact reader build, and every later stage reads. */
#ifndef SHLO_MODULE_H
#define SHLO_MODULE_H

#include "shlo/ir.h"

struct shlo_module {
  struct shlo_arena *arena;
  const char *filename;  /* as given to the parser */
  const char *name;      /* module @name, or NULL */
  const shlo_attr *attrs;/* module attribute dictionary, or NULL */
  int n_funcs;
  shlo_func **funcs;
  /* Read from a portable artifact (artifact.h): its producer string
   * ("StableHLO_v1.20.0") and StableHLO version ("1.20.0"); NULL for text. */
  const char *producer;
  const char *stablehlo_version;
  shlo_func **by_name;   /* funcs sorted by name, for shlo_module_find_func
                            (set by the parser; NULL: it searches funcs) */
};

#endif
