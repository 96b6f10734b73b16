/* SPDX-License-Identifier: Apache-2.0 */
/* The executor's side of profiles (see shlo/profile.h). */
#ifndef SHLO_PROFILE_INT_H
#define SHLO_PROFILE_INT_H

#include <stdint.h>

#include "compile/plan.h"
#include "shlo/profile.h"

void shlo__profile_add(shlo_profile *p, const shlo_step *s, uint64_t ns);

/* The executor's hook: step s of plan ran from t0_ns (shlo_trace_now_ns)
 * until now.  Adds to the step's row, or, for a trace's profile, records
 * a span when the plan is a function's (a region's steps count in the
 * step that runs the region). */
void shlo__profile_step(shlo_profile *p, const shlo_plan *plan,
                        const shlo_step *s, uint64_t t0_ns);

/* trace.c: a profile that feeds trace t instead of keeping rows. */
struct shlo_trace;
shlo_profile *shlo__profile_new_for_trace(struct shlo_trace *t);
void shlo__trace_step(struct shlo_trace *t, const shlo_step *s,
                      uint64_t t0_ns, uint64_t t1_ns);

#endif
