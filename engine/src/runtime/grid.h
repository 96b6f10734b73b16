/* SPDX-License-Identifier: Apache-2.0 */
/* Process grids, internal: the state one grid execution shares between its
 * process threads (grid.c), the rendezvous of collectives (rendezvous.c).
 *
 * One mutex and one condition variable guard and signal everything in a
 * shlo_grid: process phases, rendezvous records, send/recv channels and
 * the failure record.  Every wait is a timed wait against the execution
 * deadline that also ends when the grid fails; every state change
 * broadcasts.  A process that blocks, or ends, checks for a deadlock (no
 * process can make progress), so a missing peer ends the run at once even
 * without a deadline. */
#ifndef SHLO_GRID_INT_H
#define SHLO_GRID_INT_H

#include <pthread.h>

#include "compile/executable.h"
#include "runtime/exec_int.h"
#include "shlo/context.h"
#include "shlo/grid.h"

typedef enum {
  PROC_RUNNING,
  PROC_BLOCKED, /* at a collective or a recv */
  PROC_DONE,
} grid_phase;

/* One instance of a collective across one process group.  Processes are
 * matched by the sorted set of members and the number of earlier
 * rendezvous each had over the same set. */
typedef struct grid_rdv {
  struct grid_rdv *next;
  int n;              /* group size */
  int *set;           /* sorted member process indices */
  int *members;       /* group order, as the first arriver computed it */
  uint64_t seq;
  int n_arrived, n_left;
  int n_local;         /* members that run on this MPI rank (all: n) */
  int n_local_arrived; /* of those, how many arrived */
  bool complete;      /* everyone arrived; the last one computes */
  bool ready;         /* results are there (or computing failed) */
  const shlo_step **steps;  /* per position: the op each member runs */
  shlo_value ***contrib;    /* per position: owned refs of its operands */
  int *n_contrib;
  shlo_value ***results;    /* per position: owned refs of its results */
} grid_rdv;

/* A send/recv channel: a FIFO of messages. */
typedef struct grid_msg {
  struct grid_msg *next;
  int from;
  int n;
  shlo_value **values; /* owned */
} grid_msg;

typedef struct grid_chan {
  struct grid_chan *next;
  int64_t id;
  grid_msg *head, *tail;
} grid_chan;

typedef struct grid_seq {
  int n;
  int *set;
  uint64_t count;
} grid_seq;

typedef struct grid_proc {
  grid_phase phase;
  const shlo_step *at; /* BLOCKED: the op it waits at */
  grid_rdv *rdv;       /* BLOCKED at a collective */
  grid_chan *chan;     /* BLOCKED at a recv */
  const shlo_step *feed_at; /* waiting at an infeed (not BLOCKED: a caller
                               may still feed it) */
  int n_seqs;
  grid_seq *seqs;
} grid_proc;

/* Host channels one execution may use (send/recv with is_host_transfer). */
#define SHLO_GRID_MAX_HOST_FEEDS 64

typedef struct shlo_grid {
  pthread_mutex_t lock;
  pthread_cond_t cond; /* CLOCK_MONOTONIC */
  int n_replicas, n_partitions, n_procs;
  const char *filename;
  double deadline;     /* monotonic seconds; 0 = none */
  shlo_cancel stop;    /* the processes' cancel flag */
  grid_proc *procs;
  int n_done;
  grid_rdv *rdvs;
  grid_chan *chans;
  bool failed;
  shlo_diag fail;      /* the first failure */
  shlo_feed **infeed;  /* per process (borrowed), entries may be NULL */
  shlo_feed **outfeed;
  /* Host transfers (shlo_grid_opts.host_channel) and the feeds they have
   * used so far, which a failure wakes (g->lock). */
  shlo_feed *(*host_channel)(void *ctx, int64_t channel, bool to_host);
  void *host_ctx;
  shlo_feed *host[SHLO_GRID_MAX_HOST_FEEDS];
  int n_host;
  /* Across MPI ranks (grid_net.h): the rank each process runs on and this
   * rank, or home == NULL when every process runs here. */
  int *home;
  int rank;
} shlo_grid;

/* Whether process k runs in this OS process (on this MPI rank). */
static inline bool shlo__grid_local(const shlo_grid *g, int k) {
  return !g->home || g->home[k] == g->rank;
}

/* The most processes a grid may have (a run_parallel's or an execution's). */
#define SHLO_GRID_MAX_PROCS 4096

/* One process of a grid execution: the plan it runs on its thread. */
typedef struct grid_job {
  shlo_grid *g;
  int k;
  const shlo_plan *plan;
  const char *filename;
  shlo_value *const *args;
  shlo_value **results;
  FILE *print;
  struct shlo_mem_budget *budget; /* charged by this process's tensors */
  shlo_context *ctx;              /* the scope its thread runs in */
  shlo_status st;
  pthread_t thread;
  bool running;      /* its thread started (on this rank) */
} grid_job;

/* ---- grid.c ---- */
double shlo__now(void);
/* Absolute CLOCK_MONOTONIC time for pthread_cond_timedwait. */
struct timespec shlo__abstime(double t);
/* Under g->lock: record the grid's first failure (unless one is already
 * recorded), stop every process and wake all waiters. */
void shlo__grid_fail_locked(shlo_grid *g, shlo_status code,
                            const shlo_step *at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Under g->lock: fail the grid if no live process can make progress. */
void shlo__grid_check_deadlock(shlo_grid *g);
/* Write "(r, p)" for process k. */
int shlo__proc_name(const shlo_grid *g, int k, char *buf, size_t cap);
/* Status for a process that stops because another one failed. */
shlo_status shlo__grid_aborted(shlo_exec *ex, const shlo_step *s);

/* Under g->lock: record a failure that another rank reported (its
 * diagnostic as is), unless the grid already failed. */
void shlo__grid_fail_diag_locked(shlo_grid *g, const shlo_diag *d);
/* Append m to the channel (made on first use) and wake the receivers;
 * false when out of memory (m stays the caller's). */
bool shlo__chan_put(shlo_grid *g, int64_t channel, grid_msg *m);
/* Under g->lock: channel id, made on first use; NULL when out of memory. */
grid_chan *shlo__chan_get(shlo_grid *g, int64_t id);
/* The caller's feed for host channel `channel` (to_host: a send's), or
 * NULL when it gives none (remembered, so that a failure wakes a process
 * waiting on it). */
shlo_feed *shlo__host_feed(shlo_grid *g, int64_t channel, bool to_host);
/* Wait on c (m held) until woken or until `until` (monotonic seconds; 0:
 * no limit).  Returns true when the limit passed. */
bool shlo__wait_until(pthread_cond_t *c, pthread_mutex_t *m, double until);
/* Append v to feed q, waiting while the bounded queue is full until there
 * is room, *stop is set or the deadline passes: SHLO_OK, SHLO_EINPUT
 * (closed), SHLO_ECANCELED, SHLO_ETIMEOUT or SHLO_ENOMEM. */
shlo_status shlo__feed_put_wait(shlo_feed *q, shlo_value *v, double deadline,
                                const shlo_cancel *stop);
/* Wait until q holds k values, is closed, *stop is set or the deadline
 * passes; then take the k values (all or none) into out. */
shlo_status shlo__feed_take(shlo_feed *q, int k, shlo_value **out,
                            double deadline, const shlo_cancel *stop);
/* A grid of R x P processes of a program in filename, failing at the
 * deadline (monotonic seconds; 0: none), its feeds all NULL; NULL when out
 * of memory.  shlo__grid_free frees it (not the feeds). */
shlo_grid *shlo__grid_new(int R, int P, const char *filename,
                          double deadline);
void shlo__grid_free(shlo_grid *g);
/* Run jobs[0..n_procs) (one per process, plan, args, results, print set)
 * and wait for all of them, turning *cancel into a grid failure.  Returns
 * the grid's failure code (its diagnostic in g->fail). */
shlo_status shlo__grid_run(shlo_grid *g, grid_job *jobs,
                           const shlo_cancel *cancel);

/* ---- rendezvous.c ---- */

/* What a collective does at its rendezvous (kernels/collective.c says
 * what each op does):
 *  check    as the last member to arrive, before compute: whether the
 *           members agree (steps[i] is NULL for members on other ranks);
 *           an error status fails the group;
 *  compute  fill results[g][0..s->n_out) with owned references for every
 *           member g of the G, from their operands contrib[g]; in are
 *           this process's operands. */
typedef shlo_status (*shlo_rdv_fn)(const shlo_step *s, shlo_value *const *in,
                                   int G, shlo_value **const *contrib,
                                   shlo_value ***results, shlo_exec *ex);
typedef struct shlo_rdv_ops {
  shlo_status (*check)(const grid_rdv *r, const shlo_step *s, shlo_exec *ex);
  shlo_rdv_fn compute;
} shlo_rdv_ops;

/* Run one group of a collective step s: members[0..G) in group order,
 * this process (ex->proc) among them; out gets this process's results.
 * Every member leaves its operands in the group's rendezvous; the last to
 * arrive runs ops (a group of one runs compute at once). */
shlo_status shlo__rendezvous(const shlo_step *s, shlo_value *const *in,
                             const int *members, int G, shlo_exec *ex,
                             const shlo_rdv_ops *ops, shlo_value **out);
/* Under g->lock: the rendezvous over the sorted member set `set` (members
 * in group order) with sequence number seq, made on first use; NULL when
 * out of memory. */
grid_rdv *shlo__rdv_get(shlo_grid *g, const int *set, const int *members,
                        int n, uint64_t seq);
void shlo__rdv_free(grid_rdv *r);
#endif
