/* SPDX-License-Identifier: Apache-2.0 */
/* OpenBLAS threads for a LAPACK call of one large matrix (lapack.h).
 *
 * The engine keeps OpenBLAS at one thread (core/blas_setup.h): its own
 * pool splits GEMMs and LAPACK batches, and OpenBLAS's workers would only
 * take cores from it.  A batch of fewer matrices than the pool has
 * threads leaves that pool idle, though, while inside the one LAPACK call
 * of the eigen and SVD drivers, and of QR, most of the time goes to BLAS-3
 * (the syr2k of the tridiagonal reduction, the GEMMs of divide and
 * conquer and of the block reflectors) that OpenBLAS splits well.
 * numpy.linalg calls the same routines with OpenBLAS on its default
 * thread count: at one thread shlo's eigh of a 512 x 512 f64 matrix took
 * 1.35x numpy's time on an idle two-core machine, and about the same as
 * numpy's with both on two threads.
 *
 * Two limits, both from measurements on a shared two-core machine:
 *  - Only those families.  potrf and getrf are OpenBLAS's own threaded
 *    codes whose threads wait for each other at every panel: already at
 *    numpy's speed on one thread, they ran up to four times slower on two
 *    when the machine was busy.
 *  - Only as many threads as there are idle CPUs at that moment: a second
 *    thread that waits for a CPU holds up the first, which spins for it
 *    (eigh 53 -> 61 ms, QR 22 -> 55 ms at a load of seven on two cores).
 *    The CPUs a call can use are the online ones less the threads the
 *    kernel counts as runnable besides the caller (/proc/loadavg's
 *    "running/total", the whole machine's; a worker of the engine's pool
 *    that spins for a moment after its last chunk counts too).  One read of a small file per call of a matrix of
 *    at least 128 x 128 (a millisecond or more of LAPACK).  Where the file
 *    cannot be read (not Linux), the pool's thread count stands.
 *    OpenBLAS's own workers keep spinning (runnable) for up to about 0.1 s
 *    after a threaded call (2^28 cycles, its default thread timeout): for
 *    a while after one, those this process raised count as free again,
 *    or back-to-back calls would each see the last one's workers and
 *    fall back to one thread every other time.
 *
 * OpenBLAS 0.3.21 (Debian 12) has one thread count for the whole process
 * (blas_cpu_number), so raising it is visible to every BLAS call made
 * meanwhile: a GEMM of another execution may then run threaded too, which
 * OpenBLAS allows (its threaded drivers take their own locks).  Only one
 * LAPACK call raises it at a time: a second one that finds it raised does
 * not wait for it (its BLAS calls run on whatever count is set while they
 * run), so nothing ever queues behind the lock.  The count goes back to
 * one afterwards; OpenBLAS's workers then sleep (after spinning a moment,
 * as they do for numpy).  Nothing here stops them
 * (blas_thread_shutdown_): a threaded call that started during the raise
 * may still be using them. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include <cblas.h>

#include "kernels/lapack.h"

static pthread_mutex_t raise_lock = PTHREAD_MUTEX_INITIALIZER;
static int raised_to; /* under raise_lock */

/* When the last raise ended and to how many threads: its workers may
 * still spin then (see above).  Written by the holder of raise_lock, read
 * by anyone; a torn pair only misjudges one call's thread count. */
static atomic_int_fast64_t lowered_ns;
static atomic_int lowered_threads;

/* How long after a threaded call its OpenBLAS workers may still spin:
 * 2^28 cycles is 0.1 s at 2.7 GHz; a slower clock takes longer. */
#define WORKER_SPIN_NS 250000000

static int64_t mono_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

bool shlo__la_threads_raise(int threads) {
  if (threads < 2)
    return false;
  if (pthread_mutex_trylock(&raise_lock) != 0)
    return false; /* another call has them */
  openblas_set_num_threads(threads);
  raised_to = threads;
  return true;
}

void shlo__la_threads_lower(void) {
  openblas_set_num_threads(1);
  atomic_store(&lowered_threads, raised_to);
  atomic_store(&lowered_ns, mono_ns());
  pthread_mutex_unlock(&raise_lock);
}

/* Runnable threads that are this process's own OpenBLAS workers spinning
 * after the last threaded call, as far as one can tell. */
static int own_spinning_workers(void) {
  int64_t since = mono_ns() - atomic_load(&lowered_ns);
  int threads = atomic_load(&lowered_threads);
  return since >= 0 && since < WORKER_SPIN_NS && threads > 1 ? threads - 1
                                                              : 0;
}

/* The families whose time is in BLAS-3 that OpenBLAS threads. */
static bool family_threads(const la_family *f) {
  static const la_family *const threaded[] = {
      &shlo__la_syevd, &shlo__la_gesdd, &shlo__la_gesvd, &shlo__la_geqrf,
      &shlo__la_orgqr, &shlo__la_geqp3, &shlo__la_geev,  &shlo__la_gees,
      &shlo__la_gehrd, &shlo__la_sytrd,
  };
  for (size_t i = 0; i < sizeof threaded / sizeof threaded[0]; i++)
    if (threaded[i] == f)
      return true;
  return false;
}

int shlo__la_idle_cpus(const char *loadavg_text) {
  double l1, l5, l15;
  int running, total;
  if (sscanf(loadavg_text, "%lf %lf %lf %d/%d", &l1, &l5, &l15, &running,
             &total) != 5 ||
      running < 1)
    return -1;
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  if (cpus < 1)
    return -1;
  long idle = cpus - (running - 1); /* the caller is one of the running */
  return idle < 0 ? 0 : (int)idle;
}

/* CPUs free for this call now, or -1 when the kernel does not say. */
static int idle_cpus_now(void) {
  FILE *f = fopen("/proc/loadavg", "r");
  if (!f)
    return -1;
  char text[128];
  bool got = fgets(text, sizeof text, f) != NULL;
  fclose(f);
  return got ? shlo__la_idle_cpus(text) : -1;
}

int shlo__la_threads_for(const la_params *p, int pool_threads) {
  /* Below about 128 x 128 a call takes well under a millisecond, and
   * OpenBLAS would keep most of its routines on one thread anyway; the
   * batch then goes over the engine's pool instead. */
  enum { LEAST_ELEMENTS = 128 * 128 };
  if (pool_threads < 2 || p->batch < 1 || p->batch >= pool_threads ||
      p->in[0].per < LEAST_ELEMENTS || !family_threads(p->fam))
    return 1;
  int idle = idle_cpus_now();
  if (idle >= 0)
    idle += own_spinning_workers();
  return shlo__la_threads_within(pool_threads, idle);
}

int shlo__la_threads_within(int pool_threads, int free_cpus) {
  if (free_cpus < 0 || free_cpus >= pool_threads)
    return pool_threads;
  return free_cpus < 1 ? 1 : free_cpus;
}
