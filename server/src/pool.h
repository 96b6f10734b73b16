/* Execution workers: a fixed set of threads taking jobs from a bounded
 * queue.  Jobs leave the loop with pool_submit + pool_flush and come back
 * on the loop thread through one uv_async_t: `done` always runs on the
 * loop.
 *
 * The hand-off is built for many small jobs: the loop queues jobs locally
 * while libmicrohttpd runs and publishes them with one lock (pool_flush),
 * waking only workers that sleep and are not already being woken; a worker
 * that finishes a job may look for the next one for a moment before it
 * sleeps (spin_ns); finished jobs go on a lock-free list, and one async wakeup
 * delivers every job finished since the last one, then calls `drained`
 * once. */
#ifndef SHLO_SRV_POOL_H
#define SHLO_SRV_POOL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include <uv.h>

typedef struct srv_job srv_job;
struct srv_job {
  void (*work)(srv_job *j); /* on a worker thread */
  void (*done)(srv_job *j); /* on the loop thread, after work */
  srv_job *next;
};

typedef struct srv_pool {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  srv_job *head, *tail;       /* published, waiting (lock) */
  int sleeping, waking;       /* workers in cond_wait / signaled (lock) */
  bool stop;                  /* (lock) */
  srv_job *local, *local_tail;/* submitted, not yet published (loop) */
  int n_local;                /* (loop) */
  atomic_int queued, running; /* published and waiting / in work */
  _Atomic(srv_job *) done;    /* finished, newest first (lock-free) */
  int max_queue, n_threads, spin;
  pthread_t *threads;
  uv_async_t async;
  void (*drained)(void *arg); /* loop: after each batch of done calls */
  void *drained_arg;
} srv_pool;

/* Start n threads; the async handle joins loop.  A worker with nothing to
 * do spins spin_ns before it sleeps.  drained (may be NULL) runs on the
 * loop after each batch of `done` calls.  0 or a negative errno. */
int pool_init(srv_pool *p, uv_loop_t *loop, int n_threads, int max_queue,
              int spin_ns, void (*drained)(void *arg), void *drained_arg);
/* Queue a job (loop thread): 0, or -1 when every worker is busy and
 * max_queue jobs already wait (the caller answers 503).  The job reaches
 * the workers at the next pool_flush. */
int pool_submit(srv_pool *p, srv_job *j);
/* Hand the jobs queued since the last flush to the workers (loop). */
void pool_flush(srv_pool *p);
void pool_depth(srv_pool *p, int *queued, int *running);
/* Let the threads finish what is queued, join them, close the async handle
 * (its close callback runs on the next loop turn). */
void pool_stop(srv_pool *p);

#endif
