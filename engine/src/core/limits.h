/* SPDX-License-Identifier: Apache-2.0 */
/* Checking shlo_compile_limits (shlo/limits.h) from the parser, the
 * verifier and the compiler. */
#ifndef SHLO_CORE_LIMITS_H
#define SHLO_CORE_LIMITS_H

#include <stdbool.h>
#include <stddef.h>

#include "shlo/limits.h"
#include "shlo/status.h"

/* Whether c (may be NULL) is set: the engine's poll, inline because the
 * executor asks between steps.  Relaxed: a cancel needs to land soon, not
 * in order with other memory. */
static inline bool shlo__canceled(const shlo_cancel *c) {
  return c && __atomic_load_n(&c->private_state, __ATOMIC_RELAXED) != 0;
}

/* How often (in ops) the clock and the cancel flag are looked at. */
#define SHLO_LIMITS_EVERY 256

/* Whether work that has now visited n_ops ops (counted from 1) may go on:
 * SHLO_OK, else SHLO_ELIMIT (too many ops, deadline passed) or
 * SHLO_ECANCELED with a message in msg[cap].  `stage` ("parsing",
 * "verifying", "compiling") goes into the message.  l may be NULL. */
shlo_status shlo__limits_check(const shlo_compile_limits *l, int64_t n_ops,
                               const char *stage, char *msg, size_t cap);

/* The nesting bound l sets (shlo_compile_limits.max_depth): its default
 * when l is NULL or says 0, never more than SHLO_MAX_DEPTH_CAP. */
int shlo__max_depth(const shlo_compile_limits *l);

#endif
