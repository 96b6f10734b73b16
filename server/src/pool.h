/* Execution workers: a fixed set of threads taking jobs from a bounded
 * queue.  Jobs leave the loop with pool_submit and come back on the loop
 * thread through one uv_async_t: `done` always runs on the loop. */
#ifndef SHLO_SRV_POOL_H
#define SHLO_SRV_POOL_H

#include <pthread.h>
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
  srv_job *head, *tail;       /* waiting */
  srv_job *done_head, *done_tail;
  int queued, running, max_queue, n_threads;
  bool stop;
  pthread_t *threads;
  uv_async_t async;
} srv_pool;

/* Start n threads; the async handle joins loop.  0 or a negative errno. */
int pool_init(srv_pool *p, uv_loop_t *loop, int n_threads, int max_queue);
/* Queue a job: 0, or -1 when every worker is busy and max_queue jobs
 * already wait (the caller answers 503). */
int pool_submit(srv_pool *p, srv_job *j);
void pool_depth(srv_pool *p, int *queued, int *running);
/* Let the threads finish what is queued, join them, close the async handle
 * (its close callback runs on the next loop turn). */
void pool_stop(srv_pool *p);

#endif
