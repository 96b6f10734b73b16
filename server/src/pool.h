/* SPDX-License-Identifier: Apache-2.0 */
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
 * once.
 *
 * Two lanes, so that quick work is not stuck behind long executions: a
 * job in the short lane (registrations, executions known to be quick) may
 * run on any worker; one in the long lane (the default: anything whose
 * run time is unknown or long) only while fewer than `long_max` long jobs
 * run.  With long_max = n_threads - 1 one worker is always free for the
 * short lane within one short job's time.  Each lane is FIFO, except that
 * a job whose owner is at its cap of running jobs is passed over. */
#ifndef SHLO_SRV_POOL_H
#define SHLO_SRV_POOL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include <uv.h>

#include <stdint.h>

typedef enum { SRV_LANE_LONG, SRV_LANE_SHORT, SRV_N_LANES } srv_lane;

/* Jobs of one owner (a client) run at most max_running at once (0 = no
 * cap); its other jobs wait while later jobs of other owners run.  Guarded
 * by the pool's lock; the owner outlives its jobs. */
typedef struct srv_job_owner {
  int running, max_running;
} srv_job_owner;

typedef struct srv_job srv_job;
struct srv_job {
  void (*work)(srv_job *j); /* on a worker thread */
  void (*done)(srv_job *j); /* on the loop thread, after work */
  srv_job *next;
  srv_lane lane;            /* set before pool_submit; 0 = long */
  srv_job_owner *owner;     /* NULL: no per-owner cap */
  uint64_t submit_ns, start_ns; /* CLOCK_MONOTONIC, set by the pool */
};

typedef struct srv_lane_queue {
  srv_job *head, *tail;
} srv_lane_queue;

typedef struct srv_pool {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  srv_lane_queue lanes[SRV_N_LANES]; /* published, waiting (lock) */
  int running_long;           /* long jobs in work (lock) */
  int long_max;               /* at most this many long jobs at once */
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
  /* Runs when pool_stop's close of `async` is over (NULL: none), for an
   * owner that frees the pool's memory only then. */
  uv_close_cb closed;
} srv_pool;

/* Start n threads; the async handle joins loop.  A worker with nothing to
 * do spins spin_ns before it sleeps.  drained (may be NULL) runs on the
 * loop after each batch of `done` calls.  Long jobs run on at most
 * n_threads - short_reserved workers (at least one).  0 or a negative
 * errno. */
int pool_init(srv_pool *p, uv_loop_t *loop, int n_threads, int max_queue,
              int spin_ns, void (*drained)(void *arg), void *drained_arg);
/* Keep short_reserved workers out of the long lane (loop thread; clamped
 * so that at least one worker takes long jobs). */
void pool_set_short_reserved(srv_pool *p, int short_reserved);
/* Queue a job (loop thread): 0, or -1 when every worker is busy and
 * max_queue jobs already wait (the caller answers 503).  The job reaches
 * the workers at the next pool_flush. */
int pool_submit(srv_pool *p, srv_job *j);
/* Hand the jobs queued since the last flush to the workers (loop). */
void pool_flush(srv_pool *p);
void pool_depth(srv_pool *p, int *queued, int *running);
/* Take back job j if it still waits for a worker (loop thread): it leaves
 * the queue now, and its `done` runs on the loop as for a finished job,
 * without `work` having run.  False, changing nothing, when a worker has
 * taken it (or it was never queued). */
bool pool_withdraw(srv_pool *p, srv_job *j);
/* Let the threads finish what is queued, join them, close the async handle
 * (its close callback runs on the next loop turn). */
void pool_stop(srv_pool *p);

#endif
