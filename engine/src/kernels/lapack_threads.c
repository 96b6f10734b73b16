/* SPDX-License-Identifier: Apache-2.0 */
/* OpenBLAS threads for a LAPACK call of one large matrix (lapack.h).
 *
 * The engine keeps OpenBLAS at one thread (core/blas_setup.h): its own
 * pool splits GEMMs and LAPACK batches, and OpenBLAS's workers would only
 * take cores from it.  A batch of fewer matrices than the pool has
 * threads leaves that pool idle, though, while inside the one LAPACK call
 * the time goes to BLAS-3 (the syr2k of the tridiagonal reduction, the
 * GEMMs of divide and conquer, the block updates of potrf and getrf) that
 * OpenBLAS splits well.  numpy.linalg calls the same routines with
 * OpenBLAS at its default thread count; at one thread shlo's eigh of a
 * 512 x 512 f64 matrix took 1.35x numpy's time on two cores.
 *
 * OpenBLAS 0.3.21 (Debian 12) has one thread count for the whole process
 * (blas_cpu_number), so raising it is visible to every BLAS call made
 * meanwhile: a GEMM of another execution may then run threaded too, which
 * OpenBLAS allows (its threaded drivers take their own locks) and which
 * costs that GEMM nothing but sharing cores it shares anyway.  Only one
 * LAPACK call raises it at a time: a second one that finds it raised does
 * not wait for it (its BLAS calls run on whatever count is set while they
 * run), so nothing ever queues behind the lock.  The count goes back to one afterwards; OpenBLAS's
 * workers then sleep (after spinning a moment, as they do for numpy).
 * Nothing here stops them (blas_thread_shutdown_): a threaded call that
 * started during the raise may still be using them. */
#include <pthread.h>
#include <stdbool.h>

#include <cblas.h>

#include "kernels/lapack.h"

static pthread_mutex_t raise_lock = PTHREAD_MUTEX_INITIALIZER;

bool shlo__la_threads_raise(int threads) {
  if (threads < 2)
    return false;
  if (pthread_mutex_trylock(&raise_lock) != 0)
    return false; /* another call has them: this one runs on one */
  openblas_set_num_threads(threads);
  return true;
}

void shlo__la_threads_lower(void) {
  openblas_set_num_threads(1);
  pthread_mutex_unlock(&raise_lock);
}

bool shlo__la_threads_pay(const la_params *p, int threads) {
  /* Below about 128 x 128 a call takes well under a millisecond, and
   * OpenBLAS would keep most of its routines on one thread anyway; the
   * batch then goes over the engine's pool instead. */
  enum { LEAST_ELEMENTS = 128 * 128 };
  return threads > 1 && p->batch >= 1 && p->batch < threads &&
         p->in[0].per >= LEAST_ELEMENTS;
}
