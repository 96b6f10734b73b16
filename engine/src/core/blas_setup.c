/* SPDX-License-Identifier: Apache-2.0 */
/* OpenBLAS's process-wide setup (see blas_setup.h).
 *
 * The calls below that are not in cblas.h are OpenBLAS's own internals,
 * taken weak so that a BLAS without them still links and merely keeps its
 * threads and its core:
 *  - blas_thread_shutdown_ stops the worker threads (OpenBLAS calls it
 *    before a fork); they would otherwise wait for work in a sched_yield
 *    loop for about 0.1 s after each call before they sleep.
 *  - gotoblas_dynamic_quit and gotoblas_dynamic_init are the pair that
 *    picks the core of a DYNAMIC_ARCH build (Debian's) when the library
 *    loads: init reads OPENBLAS_CORETYPE first, so quitting, setting it
 *    and initialising again switches the core.  Nothing is cached from the
 *    first core before the first BLAS call, which has not happened yet. */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cblas.h>

#include "core/blas_setup.h"

extern int blas_thread_shutdown_(void) __attribute__((weak));
extern void gotoblas_dynamic_quit(void) __attribute__((weak));
extern void gotoblas_dynamic_init(void) __attribute__((weak));

static char blas_core_text[96] = "unknown";

/* OpenBLAS cores with AVX2 and FMA kernels or better (0.3.21's names and
 * later releases'): a pick among these is OpenBLAS's own and stays. */
static bool core_has_avx2(const char *name) {
  static const char *const cores[] = {"Haswell", "Zen", "SkylakeX",
                                      "Cooperlake", "SapphireRapids"};
  for (size_t i = 0; i < sizeof cores / sizeof cores[0]; i++)
    if (!strcasecmp(name, cores[i])) return true;
  return false;
}

/* The core this CPU runs best, or NULL for one without AVX2 and FMA (which
 * OpenBLAS's fallbacks already serve).  __builtin_cpu_supports also asks
 * whether the OS saves the AVX and AVX-512 registers. */
static const char *core_for_this_cpu(void) {
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma"))
    return NULL;
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
    return "SkylakeX";
  return "Haswell";
#else
  return NULL;
#endif
}

/* Switch to `core`; true when OpenBLAS now runs it. */
static bool switch_core(const char *core) {
  if (!gotoblas_dynamic_quit || !gotoblas_dynamic_init) return false;
  if (setenv("OPENBLAS_CORETYPE", core, 1) != 0) return false;
  gotoblas_dynamic_quit();
  gotoblas_dynamic_init();
  /* the variable was only the way in: children and later readers see the
   * environment the process started with */
  unsetenv("OPENBLAS_CORETYPE");
  const char *now = openblas_get_corename();
  return now && !strcasecmp(now, core);
}

static void blas_threads_once(void) {
  openblas_set_num_threads(1);
  if (blas_thread_shutdown_) blas_thread_shutdown_();
  const char *picked = openblas_get_corename();
  snprintf(blas_core_text, sizeof blas_core_text, "%s",
           picked ? picked : "unknown");
}

static pthread_once_t blas_threads_done = PTHREAD_ONCE_INIT;

void shlo__blas_setup(void) { pthread_once(&blas_threads_done, blas_threads_once); }

/* At load.  From the static library an object is linked only when
 * another names one of its functions, so linalg_common.c, which every
 * program that makes GEMMs links, calls the setup at load as well: the
 * first of the two does it. */
__attribute__((constructor)) static void blas_setup_at_load(void) {
  shlo__blas_setup();
}

static bool keep_core_arg;

static void blas_core_once(void) {
  shlo__blas_setup();
  const char *picked = openblas_get_corename();
  if (!picked) picked = "unknown";
  const char *best = core_for_this_cpu();
  char before[32];
  snprintf(before, sizeof before, "%s", picked);
  if (!keep_core_arg && best && !core_has_avx2(before) && switch_core(best))
    snprintf(blas_core_text, sizeof blas_core_text, "%s (OpenBLAS picked %s)",
             best, before);
  else
    snprintf(blas_core_text, sizeof blas_core_text, "%s", before);
}

static pthread_once_t blas_core_done = PTHREAD_ONCE_INIT;
static pthread_mutex_t keep_core_lock = PTHREAD_MUTEX_INITIALIZER;

void shlo__blas_setup_core(bool keep_core) {
  /* the lock orders the argument's write before the one call that reads
   * it; later calls find the once done and change nothing */
  pthread_mutex_lock(&keep_core_lock);
  keep_core_arg = keep_core;
  pthread_once(&blas_core_done, blas_core_once);
  pthread_mutex_unlock(&keep_core_lock);
}

const char *shlo__blas_core(void) { return blas_core_text; }
