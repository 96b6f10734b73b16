/* SPDX-License-Identifier: Apache-2.0 */
/* What the runtime reads of a compiled executable (compile.c). */
#ifndef SHLO_EXECUTABLE_H
#define SHLO_EXECUTABLE_H

#include "compile/plan.h"
#include "core/timed_choice.h"
#include "shlo/engine.h"

/* The entry function's plan (NULL for an executable that refines), and
 * the module the executable borrows. */
const shlo_plan *shlo__executable_plan(const shlo_executable *e);
const shlo_module *shlo__executable_module(const shlo_executable *e);
/* The refined-plan cache of an executable whose module has dynamic
 * shapes (refine_cache.h), or NULL: such executables have no plan of their
 * own and shlo_execute goes through the cache. */
struct shlo_refine_cache *shlo__executable_refine(const shlo_executable *e);
/* Whether its executions run their parallel steps on the pool (way 0) or
 * on the executing thread alone (way 1): core/timed_choice.h.  NULL for
 * an executable that always runs on the pool (compile.c's
 * may_run_alone). */
shlo__choice *shlo__executable_alone(const shlo_executable *e);

#endif
