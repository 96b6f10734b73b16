/* SPDX-License-Identifier: Apache-2.0 */
/* Fork-join pool, one per context: a list of open jobs, workers claiming
 * chunks by atomic counters, the caller working on its own job until
 * every chunk is claimed, then waiting for the chunks others are still
 * running.  Destroying the pool stops and joins its workers.
 *
 * A job's chunks are cut into one home range per thread, in order: the
 * caller's first, then worker 1's, and so on.  Each thread claims from
 * its own range first and then from the others'.  So a thread takes the
 * same part of every job of the same size, and a step that splits its
 * data as the step before it did, or as the same step did on the last
 * execution, finds its part where it left it: in its own core's cache.
 * Where cores share lines slowly that is worth a lot (a line the other
 * core holds must be fetched or taken back from it); claiming chunks in
 * one global order sent each chunk to whichever thread came first:
 * attention 0.35-0.38 -> 0.34 ms, reduce_window 0.56 -> 0.54 on two
 * threads.  A thread that arrives late still finds its range's chunks
 * taken by the others, so no thread waits on another's range. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "core/context_int.h"
#include "core/thread.h"
#include "core/membudget.h"
#include "runtime/pool.h"

/* home ranges of a job at most (threads past it share them) */
#define POOL_HOMES 64

typedef struct job {
  shlo_range_fn fn;
  void *ctx;
  struct shlo_mem_budget *budget; /* the opener's: chunks charge it */
  int64_t n, grain;
  int64_t chunks;   /* of grain indices each, the last fewer */
  int homes;        /* home ranges, each of per_home chunks (the last */
  int64_t per_home; /* fewer) */
  atomic_int_fast64_t next[POOL_HOMES]; /* each range's next unclaimed chunk */
  /* workers inside this job: changed under the lock, read without it by
   * the opener while it waits for the last of them (wait_for_workers) */
  atomic_int running;
  struct job *prev, *nextjob;
} job;

/* How long a worker that found nothing to do keeps looking before it
 * sleeps: a program's steps open jobs one after another, and waking a
 * sleeping thread costs tens of microseconds (more in a VM), as much as a
 * small step's whole work.  This window is long enough for the serial
 * steps between two parallel ones seen so far (#37, 2 threads, counted
 * per job: lstm's ~30 us of gate steps between its recurrent GEMMs,
 * linear_f32, attention, cnn): a worker slept before under 2% of jobs and
 * claimed its first chunk 1-4 us after the job opened.  What the opener
 * waits for at the end of a job is the worker's share running longer
 * (the data the opener's serial steps just wrote is in the opener's
 * cache), which only a finer grain from the caller can even out. */
#define POOL_SPIN_NS 100000
#define POOL_MAX_THREADS 256

struct shlo__pool {
  shlo_context *ctx; /* the workers' scope: what their chunks allocate in */
  pthread_mutex_t mu;
  pthread_cond_t work; /* a job was opened, or stop was set */
  pthread_cond_t idle; /* a worker left a job, or a worker ended */
  job *head;
  int threads;  /* workers + the caller */
  bool stop;    /* destroy: workers return */
  int live;     /* workers inside worker() (under mu) */
  int n_own;    /* threads the pool started itself, to join */
  pthread_t own[POOL_MAX_THREADS];
  atomic_uint opened; /* jobs opened so far (wraps): what spinners watch */
  atomic_int workers_seen; /* workers started: the next one's home */
};

static _Thread_local bool in_chunk;
/* the thread's execution runs its parallel steps alone (pool.h) */
static _Thread_local bool alone;

/* One past home range h's last chunk. */
static int64_t home_end(const job *j, int h) {
  int64_t end = (h + 1) * j->per_home;
  return end < j->chunks ? end : j->chunks;
}

static bool job_open(const job *j) {
  for (int h = 0; h < j->homes; h++)
    if (atomic_load(&j->next[h]) < home_end(j, h)) return true;
  return false;
}

/* Run chunks of j until none is left unclaimed, from home range `home`
 * (0 for every caller, k for worker k) first. */
static bool claim_and_run(job *j, int home) {
  bool ran = false;
  int mine = home % j->homes;
  for (int k = 0; k < j->homes; k++) {
    int h = (mine + k) % j->homes;
    int64_t hi = home_end(j, h);
    for (;;) {
      int64_t c = atomic_fetch_add(&j->next[h], 1);
      if (c >= hi) break;
      int64_t b = c * j->grain;
      int64_t e = b + j->grain < j->n ? b + j->grain : j->n;
      in_chunk = true;
      j->fn(j->ctx, b, e);
      in_chunk = false;
      ran = true;
    }
  }
  return ran;
}

static void unlink_job(shlo__pool *pool, job *j) {
  if (j->prev) j->prev->nextjob = j->nextjob;
  else if (pool->head == j) pool->head = j->nextjob;
  if (j->nextjob) j->nextjob->prev = j->prev;
  j->prev = j->nextjob = NULL;
}

static uint64_t mono_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Wait up to POOL_SPIN_NS, without the lock, for a job to be opened
 * after `seen` were (or for the pool to stop). */
static void spin_for_job(shlo__pool *pool, unsigned seen) {
  uint64_t until = mono_ns() + POOL_SPIN_NS;
  while (atomic_load_explicit(&pool->opened, memory_order_relaxed) == seen &&
         mono_ns() < until) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
}

/* Return once no worker runs a chunk of j, which is unlinked (so none
 * can enter it).  The opener is usually done a moment before the last
 * worker: it watches the count for up to POOL_SPIN_NS before sleeping on
 * the condition, because waking a sleeper costs tens of microseconds in a
 * VM, and each convolution of cnn used to pay that on its critical path
 * (a step of about 200-600 us on two threads). */
static void wait_for_workers(shlo__pool *pool, job *j) {
  uint64_t until = 0;
  while (atomic_load(&j->running) > 0) {
    uint64_t now = mono_ns();
    if (!until) until = now + POOL_SPIN_NS;
    if (now >= until) break;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
  if (atomic_load(&j->running) == 0) return;
  pthread_mutex_lock(&pool->mu);
  while (atomic_load(&j->running) > 0)
    pthread_cond_wait(&pool->idle, &pool->mu);
  pthread_mutex_unlock(&pool->mu);
}

/* A worker's life: run chunks of open jobs until the pool stops.  The
 * context is the thread's scope meanwhile, so what a chunk allocates comes
 * from the pool's context whichever thread runs it. */
static void worker_loop(void *arg) {
  shlo__pool *pool = arg;
  int home = 1 + atomic_fetch_add(&pool->workers_seen, 1);
  shlo_context *prev_scope = shlo__ctx_swap(pool->ctx);
  bool spun = false;
  pthread_mutex_lock(&pool->mu);
  while (!pool->stop) {
    job *j = pool->head;
    while (j && !job_open(j)) j = j->nextjob;
    if (!j && !spun) { /* look again for a moment before sleeping */
      unsigned seen = atomic_load(&pool->opened);
      pthread_mutex_unlock(&pool->mu);
      spin_for_job(pool, seen);
      pthread_mutex_lock(&pool->mu);
      spun = true;
      continue;
    }
    spun = false;
    if (!j) {
      pthread_cond_wait(&pool->work, &pool->mu);
      continue;
    }
    atomic_fetch_add(&j->running, 1);
    pthread_mutex_unlock(&pool->mu);
    /* what a chunk allocates counts against its execution's limit */
    struct shlo_mem_budget *prev_budget = shlo__budget_swap(j->budget);
    claim_and_run(j, home);
    shlo__budget_swap(prev_budget);
    pthread_mutex_lock(&pool->mu);
    /* (j may be gone once this is 0: its opener returns without the lock) */
    atomic_fetch_sub(&j->running, 1);
    pthread_cond_broadcast(&pool->idle);
  }
  pool->live--;
  pthread_cond_broadcast(&pool->idle);
  pthread_mutex_unlock(&pool->mu);
  shlo__ctx_swap(prev_scope);
}

static void *worker_thread(void *arg) {
  worker_loop(arg);
  return NULL;
}

/* Start threads - 1 workers: the embedder's when it lent an executor,
 * else our own joinable threads.  Returns how many started. */
static int start_workers(shlo__pool *pool, int want,
                         const shlo_executor *exec) {
  int started = 0;
  for (int i = 0; i < want; i++) {
    pthread_mutex_lock(&pool->mu);
    pool->live++; /* counted before it runs, so stop waits for it */
    pthread_mutex_unlock(&pool->mu);
    bool ok;
    if (exec && exec->run) {
      ok = exec->run(exec->user, worker_loop, pool) == 0;
    } else {
      ok = shlo__thread_start(&pool->own[pool->n_own], worker_thread,
                               pool) == 0;
      if (ok) pool->n_own++;
    }
    if (ok) {
      started++;
      continue;
    }
    pthread_mutex_lock(&pool->mu);
    pool->live--;
    pthread_mutex_unlock(&pool->mu);
  }
  return started;
}

shlo__pool *shlo__pool_new(shlo_context *ctx, int threads,
                           const shlo_executor *exec) {
  if (threads <= 0) {
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    threads = cores > 0 ? (int)cores : 1;
  }
  if (threads > POOL_MAX_THREADS) threads = POOL_MAX_THREADS;
  /* from the context's allocator: create readied its core half first */
  shlo__pool *pool = shlo__ctx_calloc(ctx, 1, sizeof *pool);
  if (!pool) return NULL;
  pool->ctx = ctx;
  pthread_mutex_init(&pool->mu, NULL);
  pthread_cond_init(&pool->work, NULL);
  pthread_cond_init(&pool->idle, NULL);
  atomic_init(&pool->opened, 0);
  pool->threads = 1 + start_workers(pool, threads - 1, exec);
  return pool;
}

void shlo__pool_free(shlo__pool *pool) {
  if (!pool) return;
  pthread_mutex_lock(&pool->mu);
  pool->stop = true;
  atomic_fetch_add(&pool->opened, 1); /* wake spinners too */
  pthread_cond_broadcast(&pool->work);
  while (pool->live > 0) pthread_cond_wait(&pool->idle, &pool->mu);
  pthread_mutex_unlock(&pool->mu);
  /* every worker has left worker_loop; our own threads end right after */
  for (int i = 0; i < pool->n_own; i++) pthread_join(pool->own[i], NULL);
  pthread_cond_destroy(&pool->idle);
  pthread_cond_destroy(&pool->work);
  pthread_mutex_destroy(&pool->mu);
  shlo__ctx_free(pool->ctx, pool);
}

int shlo__pool_size(const shlo__pool *pool) { return pool ? pool->threads : 1; }

/* The pool of the thread's context, made on first use for the default. */
static shlo__pool *current_pool(void) {
  shlo_context *c = shlo__ctx_current();
  if (!c) c = shlo_default_context();
  return c ? c->pool : NULL;
}

int shlo__pool_threads(void) {
  return alone ? 1 : shlo__pool_size(current_pool());
}

bool shlo__pool_alone(bool on) {
  bool was = alone;
  alone = on;
  return was;
}

void shlo__parallel_for(int64_t n, int64_t grain, shlo_range_fn fn, void *ctx) {
  if (n <= 0) return;
  if (grain < 1) grain = 1;
  shlo__pool *pool = n <= grain || in_chunk || alone ? NULL : current_pool();
  if (!pool || pool->threads == 1) {
    fn(ctx, 0, n);
    return;
  }
  job j = {.fn = fn, .ctx = ctx, .n = n, .grain = grain,
           .budget = shlo__budget_current()};
  j.chunks = (n + grain - 1) / grain;
  j.homes = pool->threads < POOL_HOMES ? pool->threads : POOL_HOMES;
  if (j.homes > j.chunks) j.homes = (int)j.chunks;
  j.per_home = (j.chunks + j.homes - 1) / j.homes;
  for (int h = 0; h < j.homes; h++) atomic_init(&j.next[h], h * j.per_home);
  atomic_init(&j.running, 0);
  pthread_mutex_lock(&pool->mu);
  j.nextjob = pool->head;
  if (pool->head) pool->head->prev = &j;
  pool->head = &j;
  atomic_fetch_add(&pool->opened, 1);
  pthread_cond_broadcast(&pool->work);
  pthread_mutex_unlock(&pool->mu);

  claim_and_run(&j, 0);

  pthread_mutex_lock(&pool->mu);
  unlink_job(pool, &j);
  pthread_mutex_unlock(&pool->mu);
  wait_for_workers(pool, &j);
}
