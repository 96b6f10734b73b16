/* What the runtime reads of a compiled executable (compile.c). */
#ifndef SHLO_EXECUTABLE_H
#define SHLO_EXECUTABLE_H

#include "compile/plan.h"
#include "shlo/engine.h"

/* The entry function's plan, and the module the executable borrows. */
const shlo_plan *shlo__executable_plan(const shlo_executable *e);
const shlo_module *shlo__executable_module(const shlo_executable *e);

#endif
