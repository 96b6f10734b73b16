/* SPDX-License-Identifier: Apache-2.0 */
/* Dynamic batching: concurrent executions of one module, stacked along
 * their leading dimension into one execution and split back.
 *
 * A module batches only when its registration asked for it ("batching",
 * docs/operator-guide.md; kept by the store, store.h), or its repository
 * model's config.json's dynamic_batching (repository.h), and its entry
 * function is shape-polymorphic in
 * the batch: every argument and result a ranked tensor whose leading
 * dimension is dynamic (`tensor<?x...>`) and whose other dimensions are
 * static.  The engine refines such a function for each batch size it sees
 * (shlo_executable_refinements), so one registered program serves any
 * batch: nothing is recompiled per size beyond that refinement.  A static
 * program is refused: changing its leading dimension would mean rewriting
 * the program, which this server does not do.
 *
 * Whether a batch gives each request what it would have got alone cannot
 * be proven in general (a reduction over the batch, or a kernel whose
 * rounding depends on the row count, breaks it); turning batching on is
 * the registering user's assertion that every output row depends only on
 * its own input row.
 *
 * How a batch forms: a worker whose request batches queues it with its
 * decoded arguments and waits.  The oldest waiting request's worker leads:
 * it waits until the queue holds max_batch_size rows (or the largest
 * preferred size), until max_queue_delay_us have passed since its request
 * came, or until every worker waits in a batch (no one else can come);
 * then it takes the longest run of requests from the queue's head whose
 * rows make a preferred size (else as many as fit max_batch_size),
 * executes them as one, and hands each its rows of every result.  The
 * next request in the queue then leads the next batch, while this one
 * runs.  A waiting request holds its worker, so a batch has at most
 * --threads requests.
 *
 * Thread-safe: one lock guards the table and its queues. */
#ifndef SHLO_SRV_BATCH_H
#define SHLO_SRV_BATCH_H

#include <stdbool.h>
#include <stdint.h>

#include "cache.h"
#include "shlo/engine.h"

struct cJSON;
struct strbuf;

#define SRV_BATCH_MAX_PREFERRED 8
#define SRV_BATCH_MAX_SIZE 4096
#define SRV_BATCH_MAX_DELAY_US 10000000 /* 10 s */
#define SRV_BATCH_FN_LEN 128 /* the batching function's name, NUL included */

/* One module's batching, as registered ("batching": {...}). */
typedef struct srv_batch_cfg {
  int max_batch_size;         /* rows of one execution; 0 = off */
  int64_t max_queue_delay_us; /* longest wait for a batch to fill */
  int preferred[SRV_BATCH_MAX_PREFERRED]; /* ascending */
  int n_preferred;
  int max_queue_size;         /* requests waiting; more get 429 (0: none) */
} srv_batch_cfg;

/* Read a "batching" object: {"max_batch_size": N, "max_queue_delay_us":
 * US, "preferred_batch_sizes": [...], "max_queue_size": N}; false with
 * why set for anything else (an unknown key, a bound crossed).  Also the
 * reader for a model repository's config. */
bool srv_batch_cfg_parse(const struct cJSON *j, srv_batch_cfg *out,
                         char *why, size_t cap);
/* Whether f can batch along its leading dimension; false with why set. */
bool srv_batch_shape_ok(const shlo_func *f, char *why, size_t cap);

typedef struct srv_batcher srv_batcher;

/* A table for a server whose long lane has n_workers workers; NULL on
 * OOM. */
srv_batcher *srv_batcher_new(int n_workers);
/* The long lane's worker count, once the pool has started (before any
 * execution: the table may be made, and configured, before the pool). */
void srv_batcher_set_workers(srv_batcher *b, int n_workers);
/* Free the table; no execution may be waiting in it. */
void srv_batcher_free(srv_batcher *b);
/* Batch team's executions of module id's function `entry` with cfg from
 * now on (cfg->max_batch_size 0: stop batching them); executions of its
 * other functions run alone.  Each team has its own queue and
 * configuration of a module: one team's registration never changes how
 * another team's executions of the same program wait.  -1 when out of
 * memory. */
int srv_batch_configure(srv_batcher *b, const char *team, const char *id,
                        const char *entry, const srv_batch_cfg *cfg);
/* Team's configuration of id into *out (and its function's name into
 * entry, SRV_BATCH_FN_LEN bytes): false when it does not batch. */
bool srv_batch_cfg_get(srv_batcher *b, const char *team, const char *id,
                       srv_batch_cfg *out, char *entry);
/* Whether team's executions of id batch (the loop's inline path declines
 * them: a batch waits, and the loop thread must not). */
bool srv_batch_enabled(srv_batcher *b, const char *team, const char *id);
/* The configuration as a JSON object into sb ("null" when off). */
void srv_batch_cfg_json(srv_batcher *b, const char *team, const char *id,
                        struct strbuf *sb);

/* How a batched execution ended, beside its status. */
typedef enum {
  SRV_BATCH_ALONE,   /* ran by itself (not batchable, or too many rows) */
  SRV_BATCH_STACKED, /* ran in a batch (of one, if no other came) */
  SRV_BATCH_FULL     /* refused: the queue held max_queue_size requests */
} srv_batch_kind;

typedef struct srv_batch_how {
  srv_batch_kind kind;
  double queued_s;   /* the wait for the batch to start, not execution */
} srv_batch_how;

/* shlo_execute of module id's executable x, stacked with team's concurrent
 * calls for id when they batch (a worker thread; it may wait up to the delay).
 * The results are the caller's, as shlo_execute's.  A batch runs without
 * its requests' cancel flags (one client's hang-up does not stop the
 * others'; only srv_batch_cancel_all stops it), with
 * the longest of its requests' deadlines and the sum of their memory
 * bounds.  *how says whether it batched and how long it waited for its
 * batch; with SRV_BATCH_FULL nothing ran and the status is SHLO_ELIMIT. */
shlo_status srv_batch_execute(srv_batcher *b, const char *team,
                              const char *id,
                              const shlo_executable *x,
                              const shlo_exec_opts *opts,
                              shlo_value *const *args, int n_args,
                              shlo_value ***results, int *n_results,
                              shlo_diag *d, srv_batch_how *how);

/* Shutdown's grace period is over (loop thread): running batches stop
 * (SHLO_ECANCELED, reason `why`), waiting leaders stop waiting, and later
 * batches run canceled. */
void srv_batch_cancel_all(srv_batcher *b, int why);

/* The batch sizes, queue delays, waiting requests and refusals of every
 * batching module, as Prometheus text. */
void srv_batch_metrics(srv_batcher *b, struct strbuf *sb);

#endif
