/* SPDX-License-Identifier: Apache-2.0 */
/* The nesting bound on calls (shlo_compile_limits.max_depth), checked
 * before compiling: the compiler, the refiner and the executor recurse
 * once per call and per region, so a module whose entry function reaches
 * deeper than the bound is refused before any of them starts. */
#ifndef SHLO_COMPILE_DEPTH_H
#define SHLO_COMPILE_DEPTH_H

#include "shlo/ir.h"
#include "shlo/limits.h"
#include "shlo/status.h"

/* SHLO_OK when no chain of calls from entry (each region around a call
 * one level more) is deeper than the bound limits sets (limits may be
 * NULL: the default); else SHLO_ELIMIT with diag at the call where the
 * chain passes the bound, SHLO_EUNSUPPORTED at a recursive call (as the
 * compiler would say), or SHLO_ENOMEM.  Uses no recursion itself. */
shlo_status shlo__check_depth(const shlo_module *m, const shlo_func *entry,
                              const shlo_compile_limits *limits,
                              shlo_diag *diag);

#endif
