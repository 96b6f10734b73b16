/* SPDX-License-Identifier: Apache-2.0 */
/* Compile limits: an op count, a deadline, a cancel flag (shlo/limits.h). */
#include "core/limits.h"

#include <stdio.h>
#include <time.h>

int64_t shlo_monotonic_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The flag is a plain int read and written only through GCC's __atomic
 * builtins (shlo/limits.h says why it is no atomic_int); sequentially
 * consistent, as atomic_int's default operations were. */
void shlo_cancel_set(shlo_cancel *c, int reason) {
  __atomic_store_n(&c->private_state, reason, __ATOMIC_SEQ_CST);
}

bool shlo_cancel_set_first(shlo_cancel *c, int reason) {
  int clear = 0;
  return __atomic_compare_exchange_n(&c->private_state, &clear, reason, false,
                                     __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}

int shlo_cancel_reason(const shlo_cancel *c) {
  return __atomic_load_n(&c->private_state, __ATOMIC_SEQ_CST);
}

shlo_status shlo__limits_check(const shlo_compile_limits *l, int64_t n_ops,
                               const char *stage, char *msg, size_t cap) {
  if (!l) return SHLO_OK;
  if (l->max_ops > 0 && n_ops > l->max_ops) {
    snprintf(msg, cap, "the program has more than %lld ops, the most this "
             "server compiles", (long long)l->max_ops);
    return SHLO_ELIMIT;
  }
  if (n_ops % SHLO_LIMITS_EVERY) return SHLO_OK;
  if (shlo__canceled(l->cancel)) {
    snprintf(msg, cap, "canceled while %s", stage);
    return SHLO_ECANCELED;
  }
  if (l->deadline_ns > 0 && shlo_monotonic_ns() > l->deadline_ns) {
    snprintf(msg, cap, "the compile deadline passed while %s (after %lld "
             "ops)", stage, (long long)n_ops);
    return SHLO_ELIMIT;
  }
  return SHLO_OK;
}

int shlo__max_depth(const shlo_compile_limits *l) {
  if (!l || l->max_depth <= 0) return SHLO_DEFAULT_MAX_DEPTH;
  return l->max_depth < SHLO_MAX_DEPTH_CAP ? l->max_depth : SHLO_MAX_DEPTH_CAP;
}
