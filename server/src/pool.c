/* SPDX-License-Identifier: Apache-2.0 */
/* Execution workers (see pool.h). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "pool.h"
#include "core/thread.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define cpu_relax() _mm_pause()
#else
#define cpu_relax() ((void)0)
#endif

static uint64_t mono_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Spin until a job is published or the spin time is over.  Under load the
 * next job often comes within microseconds, and catching it here saves the
 * futex wake and two context switches; but the spin takes a core, which
 * only pays when cores are spare (with the load generator on the same two
 * cores, bench/server_bench.sh runs faster without it). */
static void spin_for_work(srv_pool *p) {
  if (p->spin <= 0) return;
  uint64_t end = 0;
  for (unsigned i = 0;; i++) {
    if (atomic_load_explicit(&p->queued, memory_order_relaxed) > 0) return;
    cpu_relax();
    if ((i & 63) == 0) {
      uint64_t now = mono_ns();
      if (!end) end = now + (uint64_t)p->spin;
      else if (now >= end) return;
    }
  }
}

static void push_done(srv_pool *p, srv_job *j) {
  srv_job *old = atomic_load_explicit(&p->done, memory_order_relaxed);
  do j->next = old;
  while (!atomic_compare_exchange_weak_explicit(
      &p->done, &old, j, memory_order_release, memory_order_relaxed));
}

static bool owner_full(const srv_job *j) {
  return j->owner && j->owner->max_running > 0 &&
         j->owner->running >= j->owner->max_running;
}

/* The first job of q whose owner may run one more, unlinked (lock held). */
static srv_job *unlink_first_runnable(srv_lane_queue *q, bool stopping) {
  srv_job *prev = NULL, *j = q->head;
  while (j && owner_full(j) && !stopping) {
    prev = j;
    j = j->next;
  }
  if (!j) return NULL;
  if (prev) prev->next = j->next;
  else q->head = j->next;
  if (q->tail == j) q->tail = prev;
  return j;
}

/* The next job this worker may take (lock held): the short lane first,
 * then the long lane while it has a free worker; NULL when neither. */
static srv_job *take_job(srv_pool *p) {
  srv_job *j = unlink_first_runnable(&p->lanes[SRV_LANE_SHORT], p->stop);
  if (!j && (p->running_long < p->long_max || p->stop))
    j = unlink_first_runnable(&p->lanes[SRV_LANE_LONG], p->stop);
  if (!j) return NULL;
  if (j->lane == SRV_LANE_LONG) p->running_long++;
  if (j->owner) j->owner->running++;
  return j;
}

static bool any_queued(const srv_pool *p) {
  return p->lanes[SRV_LANE_SHORT].head || p->lanes[SRV_LANE_LONG].head;
}

static void *worker(void *arg) {
  srv_pool *p = arg;
  pthread_mutex_lock(&p->lock);
  for (;;) {
    srv_job *j;
    while (!(j = take_job(p)) && !p->stop) {
      p->sleeping++;
      pthread_cond_wait(&p->cond, &p->lock);
      p->sleeping--;
      if (p->waking > 0) p->waking--;
    }
    if (!j) break; /* stopping and nothing left */
    /* running first (pool_depth reads queued first): /metrics never sees
     * the job in neither count */
    atomic_fetch_add_explicit(&p->running, 1, memory_order_relaxed);
    atomic_fetch_sub_explicit(&p->queued, 1, memory_order_release);
    pthread_mutex_unlock(&p->lock);
    j->start_ns = mono_ns();
    j->work(j);
    atomic_fetch_sub_explicit(&p->running, 1, memory_order_relaxed);
    if (j->lane == SRV_LANE_LONG || j->owner) {
      pthread_mutex_lock(&p->lock);
      if (j->lane == SRV_LANE_LONG) p->running_long--;
      if (j->owner) j->owner->running--;
      /* a job passed over for this slot may wait while workers sleep */
      if (any_queued(p) && p->sleeping > p->waking) {
        pthread_cond_signal(&p->cond);
        p->waking++;
      }
      pthread_mutex_unlock(&p->lock);
    }
    push_done(p, j);
    uv_async_send(&p->async);
    spin_for_work(p);
    pthread_mutex_lock(&p->lock);
  }
  pthread_mutex_unlock(&p->lock);
  return NULL;
}

/* Deliver every finished job, oldest first, then tell the owner once. */
static void on_async(uv_async_t *a) {
  srv_pool *p = a->data;
  srv_job *j = atomic_exchange_explicit(&p->done, NULL, memory_order_acquire);
  srv_job *fifo = NULL;
  while (j) { /* the list is newest first: reverse it */
    srv_job *next = j->next;
    j->next = fifo;
    fifo = j;
    j = next;
  }
  if (!fifo) return;
  while (fifo) {
    srv_job *next = fifo->next;
    fifo->done(fifo);
    fifo = next;
  }
  if (p->drained) p->drained(p->drained_arg);
}

int pool_init(srv_pool *p, uv_loop_t *loop, int n_threads, int max_queue,
              int spin_ns, void (*drained)(void *arg), void *drained_arg) {
  *p = (srv_pool){0};
  pthread_mutex_init(&p->lock, NULL);
  pthread_cond_init(&p->cond, NULL);
  atomic_init(&p->queued, 0);
  atomic_init(&p->running, 0);
  atomic_init(&p->done, NULL);
  p->max_queue = max_queue;
  p->long_max = n_threads > 0 ? n_threads : 1;
  p->spin = spin_ns;
  p->drained = drained;
  p->drained_arg = drained_arg;
  int rc = uv_async_init(loop, &p->async, on_async);
  if (rc) return rc;
  p->async.data = p;
  p->threads = calloc((size_t)n_threads, sizeof *p->threads);
  if (!p->threads) return -ENOMEM;
  for (int i = 0; i < n_threads; i++) {
    if (shlo__thread_start(&p->threads[i], worker, p)) return -EAGAIN;
    p->n_threads++;
  }
  return 0;
}

void pool_set_short_reserved(srv_pool *p, int short_reserved) {
  int m = p->n_threads - (short_reserved > 0 ? short_reserved : 0);
  pthread_mutex_lock(&p->lock);
  p->long_max = m >= 1 ? m : 1;
  pthread_mutex_unlock(&p->lock);
}

int pool_submit(srv_pool *p, srv_job *j) {
  /* Jobs an idle worker is about to take do not count against max_queue. */
  int queued = atomic_load_explicit(&p->queued, memory_order_relaxed);
  int running = atomic_load_explicit(&p->running, memory_order_relaxed);
  if (queued + p->n_local >= (p->n_threads - running) + p->max_queue)
    return -1;
  j->next = NULL;
  j->submit_ns = mono_ns();
  if (j->lane != SRV_LANE_SHORT) j->lane = SRV_LANE_LONG;
  if (p->local_tail) p->local_tail->next = j;
  else p->local = j;
  p->local_tail = j;
  p->n_local++;
  return 0;
}

void pool_flush(srv_pool *p) {
  if (!p->local) return;
  pthread_mutex_lock(&p->lock);
  for (srv_job *j = p->local, *next; j; j = next) {
    next = j->next;
    j->next = NULL;
    srv_lane_queue *q = &p->lanes[j->lane];
    if (q->tail) q->tail->next = j;
    else q->head = j;
    q->tail = j;
  }
  atomic_fetch_add_explicit(&p->queued, p->n_local, memory_order_relaxed);
  /* Wake sleepers that nobody is waking yet, one per job; busy or spinning
   * workers take the rest when they finish. */
  int idle = p->sleeping - p->waking;
  for (int k = 0; k < p->n_local && k < idle; k++) {
    pthread_cond_signal(&p->cond);
    p->waking++;
  }
  pthread_mutex_unlock(&p->lock);
  p->local = p->local_tail = NULL;
  p->n_local = 0;
}

/* Unlink j from the list at *head (tail *tail, may be NULL): whether it
 * was there. */
static bool unlink_job(srv_job **head, srv_job **tail, srv_job *j) {
  srv_job *prev = NULL;
  for (srv_job *k = *head; k; prev = k, k = k->next) {
    if (k != j) continue;
    if (prev) prev->next = j->next;
    else *head = j->next;
    if (*tail == j) *tail = prev;
    j->next = NULL;
    return true;
  }
  return false;
}

bool pool_withdraw(srv_pool *p, srv_job *j) {
  bool found = unlink_job(&p->local, &p->local_tail, j);
  if (found) {
    p->n_local--;
  } else {
    pthread_mutex_lock(&p->lock);
    srv_lane_queue *q = &p->lanes[j->lane == SRV_LANE_SHORT ? SRV_LANE_SHORT
                                                             : SRV_LANE_LONG];
    found = unlink_job(&q->head, &q->tail, j);
    if (found) atomic_fetch_sub_explicit(&p->queued, 1, memory_order_relaxed);
    pthread_mutex_unlock(&p->lock);
  }
  if (!found) return false;
  push_done(p, j);
  uv_async_send(&p->async);
  return true;
}

void pool_depth(srv_pool *p, int *queued, int *running) {
  *queued = atomic_load(&p->queued) + p->n_local;
  *running = atomic_load(&p->running);
}

void pool_stop(srv_pool *p) {
  pool_flush(p);
  pthread_mutex_lock(&p->lock);
  p->stop = true;
  pthread_cond_broadcast(&p->cond);
  pthread_mutex_unlock(&p->lock);
  for (int i = 0; i < p->n_threads; i++) pthread_join(p->threads[i], NULL);
  free(p->threads);
  p->threads = NULL;
  p->n_threads = 0;
  /* Deliver what finished after the last async wakeup. */
  on_async(&p->async);
  uv_close((uv_handle_t *)&p->async, p->closed);
}
