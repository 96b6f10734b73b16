/* SPDX-License-Identifier: Apache-2.0 */
/* A region's scalar program (plan.h) run on many elements at once.
 *
 * Kernels that apply one small region per element (a sort comparator's
 * key function, for one) pay the interpreter once per element and per
 * op when they use shlo__step_run_region_scalar.  Here each register
 * holds up to SHLO_LANES elements and each step's loop runs over all of
 * them in one call, so the per-op cost is shared by a block of elements
 * and the loops vectorise.  The results are bit for bit those of the
 * scalar program: the same loops compute them. */
#ifndef SHLO_LANES_H
#define SHLO_LANES_H

#include "kernels/kernel.h"

#define SHLO_LANES 256

typedef struct shlo_lanes {
  int n_regs;
  unsigned char *buf;              /* n_regs blocks of SHLO_LANES * 16 bytes */
  const void *at[SHLO_SCALAR_MAX_REGS]; /* where each register's lanes are */
  bool keep_inputs;  /* no step writes a constant's or argument's register */
  bool primed;       /* constants and captures are in place */
  unsigned char *skip; /* NULL, or per op of the program: not run */
} shlo_lanes;

/* Scratch for region r of step s (which must be scalar); false when out
 * of memory.  shlo__lanes_free releases it. */
bool shlo__lanes_init(shlo_lanes *l, const shlo_step *s, int r);
void shlo__lanes_free(shlo_lanes *l);

/* From now on run only the ops that register `slot` of region r depends
 * on (a sort's key needs half of its comparator, not the compare): the
 * other registers are then not valid after a run.  False when out of
 * memory (nothing changes). */
bool shlo__lanes_only(shlo_lanes *l, const shlo_step *s, int r, int slot);

/* Run region r of s on `count` (<= SHLO_LANES) elements: lead[i] points
 * at `count` contiguous elements of block argument i (i < n), captures
 * come from the step's inputs `in` (the same value in every lane; the
 * same inputs in every run on one shlo_lanes).
 * Afterwards l->at[slot] points at `count` elements of register slot. */
void shlo__lanes_run(shlo_lanes *l, const shlo_step *s, int r,
                     shlo_value *const *in, const void *const *lead, int n,
                     int64_t count);

/* step->loop.range with every operand advancing one element per lane (a
 * select's predicate or a clamp's bounds too, which a scalar region's
 * loops otherwise hold still as broadcast scalars); elementwise.c. */
void shlo__range_lanes(const shlo_step *s, void *d, const void *const *x,
                       int64_t n);

#endif
