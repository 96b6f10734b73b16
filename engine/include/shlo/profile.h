/* SPDX-License-Identifier: Apache-2.0 */
/* Per-step execution profiles, for `shlo bench --profile`.
 *
 * Pass a profile in shlo_exec_opts.profile and every step the execution
 * runs adds its wall time to the profile's row for that step (a step that
 * runs regions includes their time).  Thread-safe: grid processes and
 * concurrent executions may share one profile. */
#ifndef SHLO_PROFILE_H
#define SHLO_PROFILE_H

#include "shlo/export.h"

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct shlo_profile shlo_profile;

SHLO_API shlo_profile *shlo_profile_new(void); /* NULL when out of memory */
SHLO_API void shlo_profile_free(shlo_profile *p);
/* The `top` most expensive steps: op, source line, calls, total and mean
 * time, share of all steps' time. */
SHLO_API void shlo_profile_print(const shlo_profile *p, FILE *f, int top);

#ifdef __cplusplus
}
#endif

#endif
