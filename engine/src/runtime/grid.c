/* SPDX-License-Identifier: Apache-2.0 */
/* Process grids: feed queues, grid executions (one thread per process,
 * a supervisor that joins them), shlo_execute_grid, and the channels of
 * send and recv.  The ops that use them are kernels: the collectives in
 * kernels/collective.c (their rendezvous in rendezvous.c), and
 * interpreter.run_parallel, replica_id, partition_id, after_all, infeed,
 * outfeed, send and recv in kernels/grid_ops.c.
 *
 * A grid never hangs: every wait is a timed wait against the execution
 * deadline that also wakes when the grid fails; a process that blocks or
 * ends checks whether any live process can still make progress; the
 * supervisor turns a cancel into a grid failure. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "frontend/module.h"
#include "core/value.h"
#include "core/tensor_view.h"
#include "core/thread.h"
#include "runtime/exec.h"
#include "runtime/grid.h"
#include "runtime/grid_net.h"
#include "core/context_int.h"
#include "core/membudget.h"

double shlo__now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

struct timespec shlo__abstime(double t) {
  struct timespec ts;
  if (t < 0) t = 0;
  ts.tv_sec = (time_t)t;
  ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
  if (ts.tv_nsec >= 1000000000L) {
    ts.tv_sec++;
    ts.tv_nsec -= 1000000000L;
  }
  return ts;
}

static void cond_init_monotonic(pthread_cond_t *c) {
  pthread_condattr_t a;
  pthread_condattr_init(&a);
  pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
  pthread_cond_init(c, &a);
  pthread_condattr_destroy(&a);
}

/* Wait on c until woken or until `until` (0: no limit).  Returns true
 * when the limit passed. */
bool shlo__wait_until(pthread_cond_t *c, pthread_mutex_t *m, double until) {
  if (until <= 0) {
    pthread_cond_wait(c, m);
    return false;
  }
  struct timespec ts = shlo__abstime(until);
  pthread_cond_timedwait(c, m, &ts);
  return shlo__now() >= until;
}

/* ---- feeds ---- */

struct shlo_feed {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  shlo_value **items; /* ring buffer of owned refs */
  int head, n, cap;
  bool closed;
  int max_values;     /* > 0: bounded (shlo_feed_set_bounds) */
  size_t max_bytes, bytes;
  shlo_feed_notify notify;
  void *notify_ctx;
};

static size_t value_bytes(const shlo_value *v) {
  return v && v->kind == SHLO_TYPE_TENSOR ? v->nbytes : 0;
}

/* Room for v under the bounds?  An empty queue always takes one value, so
 * that a value larger than max_bytes cannot wedge the queue. */
static bool feed_has_room(const shlo_feed *q, const shlo_value *v) {
  if (q->n == 0) return true;
  if (q->max_values > 0 && q->n >= q->max_values) return false;
  return !q->max_bytes || q->bytes + value_bytes(v) <= q->max_bytes;
}

/* Tell the owner the queue changed; called without the lock held. */
static void feed_notify(shlo_feed *q) {
  if (q->notify) q->notify(q->notify_ctx);
}

shlo_feed *shlo_feed_new(void) {
  shlo_feed *q = calloc(1, sizeof *q);
  if (!q) return NULL;
  pthread_mutex_init(&q->lock, NULL);
  cond_init_monotonic(&q->cond);
  return q;
}

void shlo_feed_free(shlo_feed *q) {
  if (!q) return;
  for (int i = 0; i < q->n; i++)
    shlo_value_unref(q->items[(q->head + i) % q->cap]);
  free(q->items);
  pthread_cond_destroy(&q->cond);
  pthread_mutex_destroy(&q->lock);
  free(q);
}

/* Under q->lock: append a new reference to v, growing the ring. */
static shlo_status feed_append_locked(shlo_feed *q, shlo_value *v) {
  if (q->n == q->cap) {
    int cap = q->cap ? q->cap * 2 : 8;
    shlo_value **items = malloc((size_t)cap * sizeof *items);
    if (!items) return SHLO_ENOMEM;
    for (int i = 0; i < q->n; i++) items[i] = q->items[(q->head + i) % q->cap];
    free(q->items);
    q->items = items;
    q->cap = cap;
    q->head = 0;
  }
  q->items[(q->head + q->n) % q->cap] = shlo_value_ref(v);
  q->n++;
  q->bytes += value_bytes(v);
  pthread_cond_broadcast(&q->cond);
  return SHLO_OK;
}

shlo_status shlo_feed_push(shlo_feed *q, shlo_value *v) {
  pthread_mutex_lock(&q->lock);
  shlo_status st = q->closed ? SHLO_EINPUT : feed_append_locked(q, v);
  pthread_mutex_unlock(&q->lock);
  if (!st) feed_notify(q);
  return st;
}

shlo_status shlo_feed_try_push(shlo_feed *q, shlo_value *v) {
  pthread_mutex_lock(&q->lock);
  shlo_status st = q->closed            ? SHLO_EINPUT
                   : !feed_has_room(q, v) ? SHLO_ELIMIT
                                          : feed_append_locked(q, v);
  pthread_mutex_unlock(&q->lock);
  if (!st) feed_notify(q);
  return st;
}

static shlo_status feed_put_wait(shlo_feed *q, shlo_value *v, double deadline,
                                 const shlo_cancel *stop);

/* Append v, waiting while the bounded queue is full until there is room,
 * *stop is set or the deadline passes (the outfeed and host sends of a
 * program whose reader is slow). */
shlo_status shlo__feed_put_wait(shlo_feed *q, shlo_value *v, double deadline,
                                const shlo_cancel *stop) {
  /* what a feed holds may reach a caller, who may write it: a view goes
   * as a copy of its own (core/tensor_view.h) */
  shlo_value *own = shlo_value_ref(v);
  shlo_status st = shlo__value_settle(&own);
  if (st) {
    shlo_value_unref(own);
    return st;
  }
  st = feed_put_wait(q, own, deadline, stop);
  shlo_value_unref(own);
  return st;
}

static shlo_status feed_put_wait(shlo_feed *q, shlo_value *v, double deadline,
                                 const shlo_cancel *stop) {
  shlo_status st = SHLO_OK;
  pthread_mutex_lock(&q->lock);
  for (;;) {
    if (q->closed) {
      st = SHLO_EINPUT;
      goto out;
    }
    if (feed_has_room(q, v)) break;
    if (shlo__canceled(stop)) {
      st = SHLO_ECANCELED;
      goto out;
    }
    if (deadline > 0 && shlo__now() >= deadline) {
      st = SHLO_ETIMEOUT;
      goto out;
    }
    shlo__wait_until(&q->cond, &q->lock, deadline);
  }
  st = feed_append_locked(q, v);
out:
  pthread_mutex_unlock(&q->lock);
  if (!st) feed_notify(q);
  return st;
}

void shlo_feed_set_bounds(shlo_feed *q, int max_values, size_t max_bytes) {
  pthread_mutex_lock(&q->lock);
  q->max_values = max_values;
  q->max_bytes = max_bytes;
  pthread_mutex_unlock(&q->lock);
}

void shlo_feed_set_notify(shlo_feed *q, shlo_feed_notify fn, void *ctx) {
  pthread_mutex_lock(&q->lock);
  q->notify = fn;
  q->notify_ctx = ctx;
  pthread_mutex_unlock(&q->lock);
}

size_t shlo_feed_bytes(shlo_feed *q) {
  pthread_mutex_lock(&q->lock);
  size_t n = q->bytes;
  pthread_mutex_unlock(&q->lock);
  return n;
}

void shlo_feed_close(shlo_feed *q) {
  pthread_mutex_lock(&q->lock);
  q->closed = true;
  pthread_cond_broadcast(&q->cond);
  pthread_mutex_unlock(&q->lock);
  feed_notify(q);
}

bool shlo_feed_closed(shlo_feed *q) {
  pthread_mutex_lock(&q->lock);
  bool c = q->closed;
  pthread_mutex_unlock(&q->lock);
  return c;
}

int shlo_feed_size(shlo_feed *q) {
  pthread_mutex_lock(&q->lock);
  int n = q->n;
  pthread_mutex_unlock(&q->lock);
  return n;
}

/* Wait until k values are there, the queue is closed, *stop is set or the
 * deadline passes; then take the k values (all or none). */
shlo_status shlo__feed_take(shlo_feed *q, int k, shlo_value **out,
                            double deadline, const shlo_cancel *stop) {
  shlo_status st = SHLO_OK;
  pthread_mutex_lock(&q->lock);
  for (;;) {
    if (q->n >= k) break;
    if (shlo__canceled(stop)) {
      st = SHLO_ECANCELED;
      goto out;
    }
    if (q->closed) {
      st = SHLO_EINPUT;
      goto out;
    }
    if (deadline > 0 && shlo__now() >= deadline) {
      st = SHLO_ETIMEOUT;
      goto out;
    }
    shlo__wait_until(&q->cond, &q->lock, deadline);
  }
  for (int i = 0; i < k; i++) {
    out[i] = q->items[q->head];
    q->bytes -= value_bytes(out[i]);
    q->head = (q->head + 1) % q->cap;
    q->n--;
  }
  pthread_cond_broadcast(&q->cond); /* a waiting feed_put_wait has room */
out:
  pthread_mutex_unlock(&q->lock);
  if (!st) feed_notify(q);
  return st;
}

shlo_status shlo_feed_pop(shlo_feed *q, double timeout_s, shlo_value **out) {
  *out = NULL;
  double deadline = timeout_s < 0 ? 0 : shlo__now() + timeout_s;
  if (timeout_s == 0) deadline = shlo__now();
  return shlo__feed_take(q, 1, out, deadline, NULL);
}

static void feed_wake(shlo_feed *q) {
  pthread_mutex_lock(&q->lock);
  pthread_cond_broadcast(&q->cond);
  pthread_mutex_unlock(&q->lock);
}

/* ---- grid state ---- */

int shlo__proc_name(const shlo_grid *g, int k, char *buf, size_t cap) {
  return snprintf(buf, cap, "(%d, %d)", k / g->n_partitions,
                  k % g->n_partitions);
}

static void grid_wake_all(shlo_grid *g) {
  shlo_cancel_set(&g->stop, 1);
  pthread_cond_broadcast(&g->cond);
  for (int k = 0; k < g->n_procs; k++) {
    if (g->infeed && g->infeed[k]) feed_wake(g->infeed[k]);
    if (g->outfeed && g->outfeed[k]) feed_wake(g->outfeed[k]);
  }
  for (int i = 0; i < g->n_host; i++) feed_wake(g->host[i]);
}

void shlo__grid_fail_locked(shlo_grid *g, shlo_status code,
                            const shlo_step *at, const char *fmt, ...) {
  if (g->failed) return;
  char msg[SHLO_DIAG_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  g->failed = true;
  if (at && at->op)
    shlo_diag_set(&g->fail, code, g->filename, at->op->loc.line,
                  at->op->loc.col, "%s: %s", at->op->name, msg);
  else
    shlo_diag_set(&g->fail, code, g->filename, 0, 0, "%s", msg);
  grid_wake_all(g);
}

/* The on_failure hook of every process's execution: its first failure
 * becomes the grid's, and every process wakes to see it. */
static void grid_process_failed(shlo_exec *ex) {
  shlo_grid *g = ex->grid;
  pthread_mutex_lock(&g->lock);
  if (!g->failed) {
    char who[64];
    shlo__proc_name(g, ex->proc, who, sizeof who);
    const shlo_diag *d = ex->diag;
    g->failed = true;
    shlo_diag_set(&g->fail, d->code, d->file, d->line, d->col,
                  "process %s: %s", who, d->message);
    grid_wake_all(g);
  }
  pthread_mutex_unlock(&g->lock);
}

void shlo__grid_fail_diag_locked(shlo_grid *g, const shlo_diag *d) {
  if (g->failed) return;
  g->failed = true;
  g->fail = *d;
  grid_wake_all(g);
}

shlo_status shlo__grid_aborted(shlo_exec *ex, const shlo_step *s) {
  return shlo__exec_fail(ex, s, SHLO_ECANCELED,
                        "stopped because the execution failed elsewhere");
}

static bool proc_stuck(const shlo_grid *g, int k) {
  const grid_proc *p = &g->procs[k];
  if (p->phase != PROC_BLOCKED) return false;
  if (p->rdv) return !p->rdv->complete;
  if (p->chan) return p->chan->head == NULL;
  return false;
}

void shlo__grid_check_deadlock(shlo_grid *g) {
  if (g->failed) return;
  int live = 0, stuck = 0, first = -1;
  char who[64], peer[64];
  for (int k = 0; k < g->n_procs; k++) {
    const grid_proc *p = &g->procs[k];
    if (p->phase == PROC_DONE) continue;
    live++;
    if (!proc_stuck(g, k)) continue;
    stuck++;
    if (first < 0) first = k;
    if (!p->rdv) continue;
    /* A member that ended can never arrive. */
    for (int i = 0; i < p->rdv->n; i++) {
      int m = p->rdv->members[i];
      if (p->rdv->contrib[i] || g->procs[m].phase != PROC_DONE) continue;
      shlo__proc_name(g, k, who, sizeof who);
      shlo__proc_name(g, m, peer, sizeof peer);
      shlo__grid_fail_locked(g, SHLO_ERUNTIME, p->at,
                             "process %s waits for process %s, which ended "
                             "without reaching this collective",
                             who, peer);
      return;
    }
  }
  if (!live || stuck < live) return;
  /* Every live process waits for another one: name them all. */
  char msg[SHLO_DIAG_MAX];
  size_t len = 0;
  msg[0] = 0;
  for (int k = 0; k < g->n_procs && len < sizeof msg - 100; k++) {
    const grid_proc *p = &g->procs[k];
    if (p->phase == PROC_DONE) continue;
    shlo__proc_name(g, k, who, sizeof who);
    len += (size_t)snprintf(msg + len, sizeof msg - len, "%s%s at %s %d:%d",
                            len ? ", " : "", who, p->at->op->name,
                            p->at->op->loc.line, p->at->op->loc.col);
  }
  shlo__grid_fail_locked(g, SHLO_ERUNTIME, g->procs[first].at,
                         "deadlock: every running process waits for "
                         "another: %s",
                         msg);
}

/* A rendezvous and the values it still holds (rendezvous.c makes them;
 * the grid frees those left when it ends). */
void shlo__rdv_free(grid_rdv *r) {
  if (!r) return;
  for (int i = 0; i < r->n; i++) {
    if (r->contrib && r->contrib[i]) {
      for (int k = 0; k < r->n_contrib[i]; k++)
        shlo_value_unref(r->contrib[i][k]);
      free(r->contrib[i]);
    }
    if (r->results && r->results[i]) {
      int n_out = r->steps[i] ? r->steps[i]->n_out : 0;
      for (int k = 0; k < n_out; k++) shlo_value_unref(r->results[i][k]);
      free(r->results[i]);
    }
  }
  free(r->set);
  free(r->members);
  free(r->steps);
  free(r->contrib);
  free(r->n_contrib);
  free(r->results);
  free(r);
}

shlo_grid *shlo__grid_new(int R, int P, const char *filename,
                          double deadline) {
  shlo_grid *g = calloc(1, sizeof *g);
  if (!g) return NULL;
  g->n_replicas = R;
  g->n_partitions = P;
  g->n_procs = R * P;
  g->filename = filename;
  g->deadline = deadline;
  g->procs = calloc((size_t)g->n_procs, sizeof *g->procs);
  g->infeed = calloc((size_t)g->n_procs, sizeof *g->infeed);
  g->outfeed = calloc((size_t)g->n_procs, sizeof *g->outfeed);
  if (!g->procs || !g->infeed || !g->outfeed) {
    free(g->procs);
    free(g->infeed);
    free(g->outfeed);
    free(g);
    return NULL;
  }
  pthread_mutex_init(&g->lock, NULL);
  cond_init_monotonic(&g->cond);
  shlo_diag_clear(&g->fail);
  return g;
}

void shlo__grid_free(shlo_grid *g) {
  if (!g) return;
  for (int k = 0; k < g->n_procs; k++) {
    for (int i = 0; i < g->procs[k].n_seqs; i++) free(g->procs[k].seqs[i].set);
    free(g->procs[k].seqs);
  }
  while (g->rdvs) {
    grid_rdv *r = g->rdvs;
    g->rdvs = r->next;
    shlo__rdv_free(r);
  }
  while (g->chans) {
    grid_chan *c = g->chans;
    g->chans = c->next;
    while (c->head) {
      grid_msg *m = c->head;
      c->head = m->next;
      for (int i = 0; i < m->n; i++) shlo_value_unref(m->values[i]);
      free(m->values);
      free(m);
    }
    free(c);
  }
  free(g->procs);
  free(g->infeed);
  free(g->outfeed);
  free(g->home);
  pthread_cond_destroy(&g->cond);
  pthread_mutex_destroy(&g->lock);
  free(g);
}

/* ---- running a grid ---- */

static void *proc_main(void *arg) {
  grid_job *j = arg;
  shlo_grid *g = j->g;
  shlo_exec ex;
  shlo_diag d;
  shlo_diag_clear(&d);
  shlo_exec_opts o = {.print_stream = j->print, .cancel = &g->stop};
  shlo__exec_init(&ex, &o, j->filename, &d);
  shlo__budget_swap(j->budget);
  shlo__ctx_swap(j->ctx);
  ex.deadline = g->deadline;
  ex.grid = g;
  ex.on_failure = grid_process_failed;
  ex.proc = j->k;
  j->st = shlo__plan_run(j->plan, &ex, j->args, j->results);
  for (int i = 0; !j->st && i < j->plan->n_results; i++)
    j->st = shlo__value_settle(&j->results[i]);
  shlo__exec_destroy(&ex);
  if (g->outfeed[j->k]) shlo_feed_close(g->outfeed[j->k]);
  pthread_mutex_lock(&g->lock);
  if (j->st && !g->failed) {
    char who[64];
    shlo__proc_name(g, j->k, who, sizeof who);
    shlo__grid_fail_locked(g, j->st, NULL, "process %s failed: %s", who,
                           d.message[0] ? d.message
                                        : shlo_status_message(j->st));
  }
  g->procs[j->k].phase = PROC_DONE;
  g->n_done++;
  shlo__grid_check_deadlock(g);
  pthread_cond_broadcast(&g->cond);
  pthread_mutex_unlock(&g->lock);
  return NULL;
}

/* Under g->lock: "; process (r, p) waits at OP L:C, ..." for every
 * process waiting at a collective, a recv or an infeed. */
static void describe_waits(const shlo_grid *g, char *buf, size_t cap) {
  size_t len = 0;
  buf[0] = 0;
  for (int k = 0; k < g->n_procs && len + 120 < cap; k++) {
    const grid_proc *p = &g->procs[k];
    const shlo_step *at = p->phase == PROC_BLOCKED ? p->at : p->feed_at;
    if (p->phase == PROC_DONE || !at) continue;
    char who[64];
    shlo__proc_name(g, k, who, sizeof who);
    len += (size_t)snprintf(buf + len, cap - len, "%s process %s waits at %s "
                            "%d:%d",
                            len ? "," : ";", who, at->op->name,
                            at->op->loc.line, at->op->loc.col);
  }
}

/* Start a thread per process that runs on this rank; those on other
 * ranks (g->home) count as done here, their rank runs them.  A thread
 * that cannot start fails the grid. */
static void grid_start(shlo_grid *g, grid_job *jobs) {
  /* Processes share the budget of the thread that starts them (an
   * execution's run_parallel, or shlo_execute_grid's own). */
  struct shlo_mem_budget *budget = shlo__budget_current();
  shlo_context *ctx = shlo__ctx_current(); /* and its context */
  int k = 0;
  for (; k < g->n_procs; k++) {
    jobs[k].g = g;
    jobs[k].k = k;
    jobs[k].budget = budget;
    jobs[k].ctx = ctx;
    if (!shlo__grid_local(g, k)) {
      g->n_done++; /* another rank runs it */
      continue;
    }
    if (shlo__thread_start(&jobs[k].thread, proc_main, &jobs[k])) break;
    jobs[k].running = true;
  }
  if (k == g->n_procs) return;
  pthread_mutex_lock(&g->lock);
  int failed_at = k;
  for (; k < g->n_procs; k++)
    if (shlo__grid_local(g, k)) {
      g->procs[k].phase = PROC_DONE;
      g->n_done++;
    }
  shlo__grid_fail_locked(g, SHLO_ENOMEM, NULL,
                         "cannot start a thread for process %d of %d",
                         failed_at, g->n_procs);
  pthread_mutex_unlock(&g->lock);
}

/* Across ranks: trade results and status with the other ranks once this
 * rank's processes ended (grid_net.h). */
static shlo_status grid_net_finish(shlo_grid *g, grid_job *jobs) {
  shlo_value ***res = calloc((size_t)g->n_procs, sizeof *res);
  int *n_res = calloc((size_t)g->n_procs, sizeof *n_res);
  shlo_status st;
  if (!res || !n_res) {
    pthread_mutex_lock(&g->lock);
    shlo__grid_fail_locked(g, SHLO_ENOMEM, NULL, "out of memory");
    pthread_mutex_unlock(&g->lock);
  } else {
    for (int k = 0; k < g->n_procs; k++) {
      res[k] = jobs[k].results;
      n_res[k] = jobs[k].plan->n_results;
    }
  }
  st = shlo__net_end(g, (shlo_value **const *)res, n_res);
  free(res);
  free(n_res);
  return st;
}

/* Run jobs[0..n) (one per process) and wait for all of them, turning
 * *cancel into a grid failure.  Returns the grid's failure code. */
shlo_status shlo__grid_run(shlo_grid *g, grid_job *jobs,
                           const shlo_cancel *cancel) {
  shlo_status st = shlo__net_begin(g);
  if (st) {
    shlo_diag_set(&g->fail, st, g->filename, 0, 0,
                  "cannot spread the grid over the MPI ranks");
    return st;
  }
  grid_start(g, jobs);
  pthread_mutex_lock(&g->lock);
  const double grace = 0.5; /* let processes report their own timeouts */
  /* Nothing signals the condition when *cancel is set, so it is polled:
   * every 10 ms at first, backing off to 50 ms once the grid has run a
   * while, so that many executions parked on their feeds cost next to no
   * CPU while a cancel still lands within 50 ms. */
  double poll = 0.01;
  while (g->n_done < g->n_procs) {
    double now = shlo__now();
    if (!g->failed) {
      bool canceled = shlo__canceled(cancel);
      if (canceled || (g->deadline > 0 && now > g->deadline + grace)) {
        char where[SHLO_DIAG_MAX / 2];
        describe_waits(g, where, sizeof where);
        shlo__grid_fail_locked(g, canceled ? SHLO_ECANCELED : SHLO_ETIMEOUT,
                               NULL, "execution %s%s",
                               canceled ? "canceled" : "exceeded its deadline",
                               where);
      }
    }
    double until = 0;
    if (cancel) {
      until = now + poll;
      if (poll < 0.05) poll *= 1.25;
    }
    if (g->deadline > 0 && !g->failed &&
        (!until || g->deadline + grace < until))
      until = g->deadline + grace;
    shlo__wait_until(&g->cond, &g->lock, until);
  }
  pthread_mutex_unlock(&g->lock);
  for (int k = 0; k < g->n_procs; k++)
    if (jobs[k].running) pthread_join(jobs[k].thread, NULL);
  if (g->home) return grid_net_finish(g, jobs);
  return g->failed ? (g->fail.code ? g->fail.code : SHLO_ERUNTIME) : SHLO_OK;
}

void shlo_module_grid(const shlo_module *m, int *num_replicas,
                      int *num_partitions) {
  int64_t r = 1, p = 1;
  if (m->attrs) {
    shlo_attr_get_i64(shlo_attr_field(m->attrs, "mhlo.num_replicas"), &r);
    shlo_attr_get_i64(shlo_attr_field(m->attrs, "mhlo.num_partitions"), &p);
  }
  *num_replicas = r > 0 && r <= 1 << 20 ? (int)r : 1;
  *num_partitions = p > 0 && p <= 1 << 20 ? (int)p : 1;
}

/* Every process's program (e, or opts->programs[k]) must take the n_args
 * arguments given for it and all must return as many results (*n_res). */
static shlo_status grid_check_programs(const shlo_executable *e,
                                       const shlo_executable *const *progs,
                                       int n, int P, shlo_value *const *args,
                                       int n_args, int *n_res,
                                       shlo_diag *diag) {
  *n_res = -1;
  for (int k = 0; k < n; k++) {
    const shlo_executable *pe = progs && progs[k] ? progs[k] : e;
    const shlo_func *f = shlo_executable_entry(pe);
    const char *file = shlo__executable_module(pe)->filename;
    if (shlo__executable_refine(pe))
      return shlo_diag_set(diag, SHLO_EUNSUPPORTED, file, f->loc.line,
                           f->loc.col, "@%s has dynamic shapes, which run on "
                           "one process only", f->name);
    if (f->n_args != n_args)
      return shlo_diag_set(diag, SHLO_EINPUT, file, f->loc.line, f->loc.col,
                           "@%s of process (%d, %d) takes %d arguments but "
                           "%d were given",
                           f->name, k / P, k % P, f->n_args, n_args);
    for (int i = 0; i < n_args; i++)
      if (!shlo_value_has_type(args[k * n_args + i], f->arg_types[i])) {
        char want[256];
        shlo_type_format(f->arg_types[i], want, sizeof want);
        return shlo_diag_set(diag, SHLO_EINPUT, file, f->loc.line, f->loc.col,
                             "argument %d of @%s of process (%d, %d) must be "
                             "%s",
                             i, f->name, k / P, k % P, want);
      }
    int nr = shlo__executable_plan(pe)->n_results;
    if (*n_res >= 0 && nr != *n_res)
      return shlo_diag_set(diag, SHLO_EINPUT, file, f->loc.line, f->loc.col,
                           "@%s of process (%d, %d) returns %d results but "
                           "process (0, 0) returns %d",
                           f->name, k / P, k % P, nr, *n_res);
    *n_res = nr;
  }
  return SHLO_OK;
}

/* Fill in each process's job: its plan, arguments, result slots and
 * streams. */
static void grid_init_jobs(shlo_grid *g, grid_job *jobs,
                           const shlo_executable *e,
                           const shlo_grid_opts *opts, int n,
                           shlo_value *const *args, int n_args,
                           shlo_value **res, int n_res) {
  const shlo_executable *const *progs = opts ? opts->programs : NULL;
  for (int k = 0; k < n; k++) {
    const shlo_executable *pe = progs && progs[k] ? progs[k] : e;
    jobs[k].plan = shlo__executable_plan(pe);
    jobs[k].filename = shlo__executable_module(pe)->filename;
    jobs[k].args = args + (size_t)k * (size_t)n_args;
    jobs[k].results = res + (size_t)k * (size_t)n_res;
    jobs[k].print = opts ? opts->exec.print_stream : NULL;
    if (opts && opts->infeed) g->infeed[k] = opts->infeed[k];
    if (opts && opts->outfeed) g->outfeed[k] = opts->outfeed[k];
  }
  if (opts) {
    g->host_channel = opts->host_channel;
    g->host_ctx = opts->host_ctx;
  }
}

/* Run the jobs under the memory budget opts asks for (if any). */
static shlo_status grid_run_budgeted(shlo_grid *g, grid_job *jobs,
                                     const shlo_grid_opts *opts) {
  shlo_mem_budget *budget = NULL, *prev = NULL;
  if (opts && opts->exec.max_bytes > 0 &&
      (budget = shlo__budget_new(opts->exec.max_bytes)))
    prev = shlo__budget_swap(budget);
  shlo_status st = shlo__grid_run(g, jobs, opts ? opts->exec.cancel : NULL);
  if (budget) shlo__budget_swap(prev);
  if (st && shlo__budget_exceeded(budget))
    st = shlo__budget_refusal(budget, &g->fail);
  shlo__budget_release(budget);
  return st;
}

shlo_status shlo_execute_grid(const shlo_executable *e,
                              const shlo_grid_opts *opts,
                              shlo_value *const *args, int n_args,
                              shlo_value ***results, int *n_results,
                              shlo_diag *diag) {
  *results = NULL;
  *n_results = 0;
  const shlo_module *m = shlo__executable_module(e);
  int R = 0, P = 0, mr, mp;
  shlo_module_grid(m, &mr, &mp);
  if (opts) {
    R = opts->num_replicas;
    P = opts->num_partitions;
  }
  if (R <= 0) R = mr;
  if (P <= 0) P = mp;
  if ((int64_t)R * P > SHLO_GRID_MAX_PROCS)
    return shlo_diag_set(diag, SHLO_ELIMIT, m->filename, 0, 0,
                         "a grid of %d x %d processes is over the limit of "
                         "%d processes",
                         R, P, SHLO_GRID_MAX_PROCS);
  int n = R * P, n_res;
  shlo_status st = grid_check_programs(e, opts ? opts->programs : NULL, n, P,
                                       args, n_args, &n_res, diag);
  if (st) return st;
  double deadline = opts && opts->exec.timeout_s > 0
                        ? shlo__now() + opts->exec.timeout_s
                        : 0;
  shlo_grid *g = shlo__grid_new(R, P, m->filename, deadline);
  grid_job *jobs = calloc((unsigned)n, sizeof *jobs);
  shlo_value **res = calloc((unsigned)n * (size_t)n_res + 1, sizeof *res);
  if (!g || !jobs || !res) {
    shlo__grid_free(g);
    free(jobs);
    free(res);
    return shlo_diag_set(diag, SHLO_ENOMEM, m->filename, 0, 0,
                         "out of memory");
  }
  grid_init_jobs(g, jobs, e, opts, n, args, n_args, res, n_res);
  /* every process runs in e's context (shlo_execute's rule) */
  shlo_context *ctx = shlo_executable_context(e);
  shlo_context *prev = shlo__ctx_swap(ctx ? ctx : shlo_default_context());
  st = grid_run_budgeted(g, jobs, opts);
  shlo__ctx_swap(prev);
  if (st) {
    if (diag) *diag = g->fail;
    for (int i = 0; i < n * n_res; i++) shlo_value_unref(res[i]);
    free(res);
  } else {
    *results = res;
    *n_results = n_res;
  }
  free(jobs);
  shlo__grid_free(g);
  return st;
}

/* ---- channels ---- */

grid_chan *shlo__chan_get(shlo_grid *g, int64_t id) {
  for (grid_chan *c = g->chans; c; c = c->next)
    if (c->id == id) return c;
  grid_chan *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  c->id = id;
  c->next = g->chans;
  g->chans = c;
  return c;
}

bool shlo__chan_put(shlo_grid *g, int64_t channel, grid_msg *m) {
  pthread_mutex_lock(&g->lock);
  grid_chan *c = shlo__chan_get(g, channel);
  if (c) {
    if (c->tail) c->tail->next = m;
    else c->head = m;
    c->tail = m;
    pthread_cond_broadcast(&g->cond);
  }
  pthread_mutex_unlock(&g->lock);
  return c != NULL;
}

/* The caller's feed for host channel `channel` (to_host: a send's), or
 * NULL when it gives none.  Remembered in g->host so that a failure wakes
 * a process waiting on it. */
shlo_feed *shlo__host_feed(shlo_grid *g, int64_t channel, bool to_host) {
  if (!g->host_channel) return NULL;
  shlo_feed *q = g->host_channel(g->host_ctx, channel, to_host);
  if (!q) return NULL;
  pthread_mutex_lock(&g->lock);
  bool known = false;
  for (int i = 0; i < g->n_host && !known; i++) known = g->host[i] == q;
  if (!known && g->n_host < SHLO_GRID_MAX_HOST_FEEDS) {
    g->host[g->n_host++] = q;
    known = true;
  }
  pthread_mutex_unlock(&g->lock);
  return known ? q : NULL; /* more channels than a failure could wake */
}
