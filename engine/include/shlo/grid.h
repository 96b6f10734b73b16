/* SPDX-License-Identifier: Apache-2.0 */
/* Process grids: run one executable on num_replicas x num_partitions
 * processes, each a thread of one execution, with per-process inputs,
 * results, infeed and outfeed queues.
 *
 *   shlo_grid_opts g = {.num_replicas = 2, .num_partitions = 1};
 *   shlo_value **res;  int n_res;
 *   shlo_execute_grid(e, &g, args, n_args_per_process, &res, &n_res, &diag);
 *
 * Process k (k = replica * num_partitions + partition) takes arguments
 * args[k * n_args .. (k + 1) * n_args) and its results land at
 * res[k * n_res .. (k + 1) * n_res).  Collectives, send/recv, infeed and
 * outfeed run between the processes.  Any failure (a kernel error, a
 * collective that cannot complete, an infeed that never comes and the
 * deadline fires, a cancel) ends the whole execution with one diagnostic
 * that names the op and the process; every thread is joined and every
 * buffer freed before the call returns. */
#ifndef SHLO_GRID_H
#define SHLO_GRID_H

#include "shlo/engine.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- feed queues ----
 *
 * A feed is a thread-safe FIFO of values: a process's infeed queue (the
 * program pops with stablehlo.infeed, one value per tensor result) or its
 * outfeed queue (stablehlo.outfeed pushes each operand).  The caller owns
 * feeds and may push/pop from any thread while an execution runs. */
typedef struct shlo_feed shlo_feed;

/* New empty open queue; NULL when out of memory. */
SHLO_API shlo_feed *shlo_feed_new(void);
/* Free the queue and drop the references it still holds.  It must not be
 * in use by a running execution. */
SHLO_API void shlo_feed_free(shlo_feed *q);
/* Append a value; the queue takes a new reference (the caller keeps its
 * own).  SHLO_EINPUT if the queue is closed, SHLO_ENOMEM. */
SHLO_API shlo_status shlo_feed_push(shlo_feed *q, shlo_value *v);
/* No more values will come: an infeed that finds the queue empty and
 * closed fails at once instead of waiting.  Executions close each
 * process's outfeed queue when the process ends. */
SHLO_API void shlo_feed_close(shlo_feed *q);
SHLO_API bool shlo_feed_closed(shlo_feed *q);
/* Pop the oldest value into *out (an owned reference).  Waits up to
 * timeout_s seconds (0: do not wait; < 0: wait as long as it takes) for a
 * value.  Returns SHLO_OK, SHLO_ETIMEOUT when nothing came in time, or
 * SHLO_EINPUT when the queue is closed and empty. */
SHLO_API shlo_status shlo_feed_pop(shlo_feed *q, double timeout_s, shlo_value **out);
/* Values waiting in the queue now, and their tensor bytes. */
SHLO_API int shlo_feed_size(shlo_feed *q);
SHLO_API size_t shlo_feed_bytes(shlo_feed *q);

/* Bound the queue: at most max_values values and max_bytes tensor bytes
 * (<= 0 / 0: no bound), except that an empty queue always takes one value.
 * An execution's outfeed and host sends wait for room in a full queue
 * (until the deadline or a cancel); shlo_feed_push ignores the bounds. */
SHLO_API void shlo_feed_set_bounds(shlo_feed *q, int max_values,
                                   size_t max_bytes);
/* Append v only if the bounds leave room: SHLO_ELIMIT when full (nothing
 * queued), SHLO_EINPUT when closed, SHLO_ENOMEM.  For a producer that must
 * not block (a server's event loop): it retries after a notify. */
SHLO_API shlo_status shlo_feed_try_push(shlo_feed *q, shlo_value *v);

/* Called after every push, pop and close, on the thread that did it and
 * without the queue's lock held (it may call shlo_feed_size and the like,
 * not block).  A server uses it to wake the connection that feeds or
 * drains the queue.  ctx is borrowed. */
typedef void (*shlo_feed_notify)(void *ctx);
SHLO_API void shlo_feed_set_notify(shlo_feed *q, shlo_feed_notify fn,
                                   void *ctx);

/* ---- grid execution ---- */

typedef struct shlo_grid_opts {
  /* Grid shape; <= 0 takes the module's mhlo.num_replicas /
   * mhlo.num_partitions attribute, else 1. */
  int num_replicas, num_partitions;
  shlo_exec_opts exec; /* deadline, print stream, cancel flag */
  /* MPMD: per process, the executable it runs (NULL entries, or a NULL
   * array, run the executable given to shlo_execute_grid).  All must be
   * compiled from modules that outlive the call. */
  const shlo_executable *const *programs;
  /* Per process infeed / outfeed queues (borrowed), or NULL arrays or
   * entries: an empty closed infeed, a discarded outfeed. */
  shlo_feed *const *infeed;
  shlo_feed *const *outfeed;
  /* Host transfers: send (to_host) and recv ops with is_host_transfer =
   * true use the feed this returns for their channel id (called from the
   * process's thread; the same feed for the same arguments; borrowed, it
   * must outlive the call); a NULL result fails the op.  NULL function:
   * host transfers travel between the processes like other send / recv
   * (the reference interpreter's run_parallel). */
  shlo_feed *(*host_channel)(void *ctx, int64_t channel, bool to_host);
  void *host_ctx;
} shlo_grid_opts;

/* The grid shape a module asks for (its mhlo.num_replicas and
 * mhlo.num_partitions attributes; 1 where absent). */
SHLO_API void shlo_module_grid(const shlo_module *m, int *num_replicas,
                      int *num_partitions);

/* Run e's entry function (or each process's program) on the grid.
 * args: n_procs * n_args borrowed values, process-major, where n_args is
 * the entry function's argument count (all programs must take the same
 * number).  On success *results is a malloc'd array of n_procs *
 * *n_results owned references, process-major (free each with
 * shlo_value_release, then the array with free); all programs must return
 * the same number of results.  On failure *results is NULL and diag
 * names the op and the process. */
SHLO_API shlo_status shlo_execute_grid(const shlo_executable *e,
                              const shlo_grid_opts *opts,
                              shlo_value *const *args, int n_args,
                              shlo_value ***results, int *n_results,
                              shlo_diag *diag);

#ifdef __cplusplus
}
#endif

#endif
