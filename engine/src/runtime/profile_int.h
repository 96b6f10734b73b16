/* SPDX-License-Identifier: Apache-2.0 */
/* The executor's side of profiles (see shlo/profile.h). */
#ifndef SHLO_PROFILE_INT_H
#define SHLO_PROFILE_INT_H

#include <stdint.h>

#include "compile/plan.h"
#include "shlo/profile.h"

void shlo__profile_add(shlo_profile *p, const shlo_step *s, uint64_t ns);

#endif
