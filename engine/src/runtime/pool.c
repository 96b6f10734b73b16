/* Fork-join pool: a list of open jobs, workers claiming chunks by atomic
 * counters, the caller working on its own job until every chunk is
 * claimed, then waiting for the chunks others are still running. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "runtime/pool.h"

typedef struct job {
  shlo_range_fn fn;
  void *ctx;
  int64_t n, grain;
  atomic_int_fast64_t next; /* first unclaimed index */
  int running;              /* workers inside this job (under the lock) */
  struct job *prev, *nextjob;
} job;

/* How long a worker that found nothing to do keeps looking before it
 * sleeps: a program's steps open jobs one after another, and waking a
 * sleeping thread costs tens of microseconds (more in a VM), as much as a
 * small step's whole work. */
#define POOL_SPIN_NS 100000

static struct {
  pthread_mutex_t mu;
  pthread_cond_t work; /* a job was opened */
  pthread_cond_t idle; /* a worker left a job */
  job *head;
  int threads;
  atomic_uint opened; /* jobs opened so far (wraps): what spinners watch */
} pool = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER,
          PTHREAD_COND_INITIALIZER, NULL, 1, 0};

static pthread_once_t pool_once = PTHREAD_ONCE_INIT;
static _Thread_local bool in_chunk;

static bool claim_and_run(job *j) {
  bool ran = false;
  for (;;) {
    int64_t b = atomic_fetch_add(&j->next, j->grain);
    if (b >= j->n) return ran;
    int64_t e = b + j->grain < j->n ? b + j->grain : j->n;
    in_chunk = true;
    j->fn(j->ctx, b, e);
    in_chunk = false;
    ran = true;
  }
}

static void unlink_job(job *j) {
  if (j->prev) j->prev->nextjob = j->nextjob;
  else if (pool.head == j) pool.head = j->nextjob;
  if (j->nextjob) j->nextjob->prev = j->prev;
  j->prev = j->nextjob = NULL;
}

static uint64_t mono_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Wait up to POOL_SPIN_NS, without the lock, for a job to be opened
 * after `seen` were. */
static void spin_for_job(unsigned seen) {
  uint64_t until = mono_ns() + POOL_SPIN_NS;
  while (atomic_load_explicit(&pool.opened, memory_order_relaxed) == seen &&
         mono_ns() < until) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
}

static void *worker(void *arg) {
  (void)arg;
  bool spun = false;
  pthread_mutex_lock(&pool.mu);
  for (;;) {
    job *j = pool.head;
    while (j && atomic_load(&j->next) >= j->n) j = j->nextjob;
    if (!j && !spun) { /* look again for a moment before sleeping */
      unsigned seen = atomic_load(&pool.opened);
      pthread_mutex_unlock(&pool.mu);
      spin_for_job(seen);
      pthread_mutex_lock(&pool.mu);
      spun = true;
      continue;
    }
    spun = false;
    if (!j) {
      pthread_cond_wait(&pool.work, &pool.mu);
      continue;
    }
    j->running++;
    pthread_mutex_unlock(&pool.mu);
    claim_and_run(j);
    pthread_mutex_lock(&pool.mu);
    j->running--;
    pthread_cond_broadcast(&pool.idle);
  }
  return NULL;
}

static void pool_start(void) {
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  int total = cores > 0 ? (int)cores : 1;
  const char *env = getenv("SHLO_THREADS");
  if (env && atoi(env) > 0) total = atoi(env);
  if (total > 256) total = 256;
  int started = 0;
  for (int i = 1; i < total; i++) {
    pthread_t t;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&t, &attr, worker, NULL) == 0) started++;
    pthread_attr_destroy(&attr);
  }
  pool.threads = 1 + started;
}

int shlo__pool_threads(void) {
  pthread_once(&pool_once, pool_start);
  return pool.threads;
}

void shlo__parallel_for(int64_t n, int64_t grain, shlo_range_fn fn, void *ctx) {
  if (n <= 0) return;
  if (grain < 1) grain = 1;
  if (n <= grain || in_chunk || shlo__pool_threads() == 1) {
    fn(ctx, 0, n);
    return;
  }
  job j = {.fn = fn, .ctx = ctx, .n = n, .grain = grain};
  atomic_init(&j.next, 0);
  pthread_mutex_lock(&pool.mu);
  j.nextjob = pool.head;
  if (pool.head) pool.head->prev = &j;
  pool.head = &j;
  atomic_fetch_add(&pool.opened, 1);
  pthread_cond_broadcast(&pool.work);
  pthread_mutex_unlock(&pool.mu);

  claim_and_run(&j);

  pthread_mutex_lock(&pool.mu);
  unlink_job(&j);
  while (j.running > 0) pthread_cond_wait(&pool.idle, &pool.mu);
  pthread_mutex_unlock(&pool.mu);
}
