/* Execution workers (see pool.h). */
#include <errno.h>
#include <stdlib.h>

#include "pool.h"

static void *worker(void *arg) {
  srv_pool *p = arg;
  pthread_mutex_lock(&p->lock);
  for (;;) {
    while (!p->head && !p->stop) pthread_cond_wait(&p->cond, &p->lock);
    if (!p->head) break; /* stopping and nothing left */
    srv_job *j = p->head;
    p->head = j->next;
    if (!p->head) p->tail = NULL;
    p->queued--;
    p->running++;
    pthread_mutex_unlock(&p->lock);
    j->work(j);
    pthread_mutex_lock(&p->lock);
    p->running--;
    j->next = NULL;
    if (p->done_tail) p->done_tail->next = j;
    else p->done_head = j;
    p->done_tail = j;
    pthread_mutex_unlock(&p->lock);
    uv_async_send(&p->async);
    pthread_mutex_lock(&p->lock);
  }
  pthread_mutex_unlock(&p->lock);
  return NULL;
}

static void on_async(uv_async_t *a) {
  srv_pool *p = a->data;
  pthread_mutex_lock(&p->lock);
  srv_job *j = p->done_head;
  p->done_head = p->done_tail = NULL;
  pthread_mutex_unlock(&p->lock);
  while (j) {
    srv_job *next = j->next;
    j->done(j);
    j = next;
  }
}

int pool_init(srv_pool *p, uv_loop_t *loop, int n_threads, int max_queue) {
  *p = (srv_pool){0};
  pthread_mutex_init(&p->lock, NULL);
  pthread_cond_init(&p->cond, NULL);
  p->max_queue = max_queue;
  int rc = uv_async_init(loop, &p->async, on_async);
  if (rc) return rc;
  p->async.data = p;
  p->threads = calloc((size_t)n_threads, sizeof *p->threads);
  if (!p->threads) return -ENOMEM;
  for (int i = 0; i < n_threads; i++) {
    if (pthread_create(&p->threads[i], NULL, worker, p)) return -EAGAIN;
    p->n_threads++;
  }
  return 0;
}

int pool_submit(srv_pool *p, srv_job *j) {
  pthread_mutex_lock(&p->lock);
  /* Jobs an idle worker is about to take do not count against max_queue. */
  if (p->queued >= (p->n_threads - p->running) + p->max_queue) {
    pthread_mutex_unlock(&p->lock);
    return -1;
  }
  j->next = NULL;
  if (p->tail) p->tail->next = j;
  else p->head = j;
  p->tail = j;
  p->queued++;
  pthread_cond_signal(&p->cond);
  pthread_mutex_unlock(&p->lock);
  return 0;
}

void pool_depth(srv_pool *p, int *queued, int *running) {
  pthread_mutex_lock(&p->lock);
  *queued = p->queued;
  *running = p->running;
  pthread_mutex_unlock(&p->lock);
}

void pool_stop(srv_pool *p) {
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
  uv_close((uv_handle_t *)&p->async, NULL);
}
