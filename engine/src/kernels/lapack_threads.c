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
#include <stdbool.h>
#include <stdio.h>
#include <unistd.h>

#include <cblas.h>

#include "kernels/lapack.h"

static pthread_mutex_t raise_lock = PTHREAD_MUTEX_INITIALIZER;

bool shlo__la_threads_raise(int threads) {
  if (threads < 2)
    return false;
  if (pthread_mutex_trylock(&raise_lock) != 0)
    return false; /* another call has them */
  openblas_set_num_threads(threads);
  return true;
}

void shlo__la_threads_lower(void) {
  openblas_set_num_threads(1);
  pthread_mutex_unlock(&raise_lock);
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
  if (idle >= 0 && idle < pool_threads)
    return idle < 1 ? 1 : idle;
  return pool_threads;
}
