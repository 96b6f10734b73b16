/* SPDX-License-Identifier: Apache-2.0 */
/* Threads the engine (and the server, which runs programs on its own
 * workers) starts to run client programs on.
 *
 * A program drives recursion as deep as shlo_compile_limits.max_depth
 * allows (shlo/limits.h: up to 2 MiB of stack at the cap, measured under
 * ASan).  A thread's default stack follows the process's stack limit
 * (`ulimit -s`), which an operator may have set lower; these threads get
 * at least SHLO_THREAD_STACK whatever it says, so the bound holds. */
#ifndef SHLO_CORE_THREAD_H
#define SHLO_CORE_THREAD_H

#include <pthread.h>

#define SHLO_THREAD_STACK ((size_t)8 << 20)

/* pthread_create with a stack of at least SHLO_THREAD_STACK (the default
 * when that is larger): 0 or an errno value. */
int shlo__thread_start(pthread_t *t, void *(*run)(void *), void *arg);

#endif
