/* SPDX-License-Identifier: Apache-2.0 */
/* Elementwise fusion, a pass of the compiler.
 *
 * The compiler runs it on every plan it makes; the kernels stage defines
 * it (kernels/fuse.c), since a fused step's parameters are the lane and
 * tile programs of the kernels it fuses.  The compile stage names it here
 * as the op table names each family's step builder: it calls it, and never
 * sees what it builds. */
#ifndef SHLO_FUSE_H
#define SHLO_FUSE_H

#include "compile/plan.h"

/* Fuse runs of consecutive pure-loop steps of p in place, and rows groups
 * (those steps around reductions of the last dimension, run a block of
 * rows at a time).  types[slot] is the type of each slot's value.  Call
 * before liveness is computed. */
shlo_status shlo__fuse_plan(shlo_plan *p, const shlo_type *const *types);

#endif
