/* SPDX-License-Identifier: Apache-2.0 */
/* The model repository (--model-repository DIR), laid out as Triton's:
 *
 *   DIR/NAME/config.json          optional: team, entry function, tensor
 *                                 names, max_batch_size, dynamic_batching,
 *                                 model_warmup, version_policy
 *   DIR/NAME/config.pbtxt         else: the same as Triton's text (pbtxt.h)
 *   DIR/NAME/warmup/FILE          warm-up inputs (warmup.h)
 *   DIR/NAME/VERSION/model.mlir   StableHLO text, or
 *   DIR/NAME/VERSION/model.mlir.bc  a portable artifact
 *
 * A model keeps at most its 256 highest version folders.
 * Each version is read, parsed, verified and its entry function compiled
 * when it loads; it is then the team's model NAME at VERSION (names.h),
 * served by the Open Inference Protocol and /v1 like a registered name.  A
 * model or version that fails is logged and listed UNAVAILABLE with its
 * reason in /v2/repository/index; the others load regardless.
 *
 * --model-control-mode: none loads every model at start (and again on
 * SIGHUP); poll also rescans every --repository-poll-secs; explicit loads
 * nothing at start: POST /v2/repository/models/NAME/load and .../unload
 * do, and SIGHUP rescans the loaded models only.  A load of a loaded
 * model picks up its versions on disk again (new, changed, removed).
 *
 * The repository holds a cache reference to each ready version; unloading
 * drops the name and that reference, so an execution that resolved the
 * name before runs on to its end with its own reference.
 *
 * Thread-safe: loads run one at a time (a worker, the repository's own
 * thread, or the start); the table answers lookups meanwhile. */
#ifndef SHLO_SRV_REPOSITORY_H
#define SHLO_SRV_REPOSITORY_H

#include <stdbool.h>
#include <stddef.h>

#include "cache.h"

struct srv_server;

/* Open the repository and load it as the control mode says (none, poll:
 * everything), then start the thread that rescans it (poll, SIGHUP).  0
 * also without --model-repository; -1 when DIR or the mode is unusable. */
int srv_repository_start(struct srv_server *s);
/* Stop the thread and let go of every version (before the cache goes). */
void srv_repository_stop(struct srv_server *s);
/* SIGHUP (loop thread): rescan soon, on the repository's thread. */
void srv_repository_reload(struct srv_server *s);

/* POST .../load and .../unload (a worker): an HTTP status, why set when
 * it is not 200. */
int srv_repository_load(struct srv_server *s, const char *name, char *why,
                        size_t cap);
int srv_repository_unload(struct srv_server *s, const char *name, char *why,
                          size_t cap);

/* The index as JSON: [{"name", "version", "state", "reason"}...] of team's
 * models (NULL: every team's, each with "team"), only the READY versions
 * with ready_only.  malloc'd; NULL when out of memory. */
char *srv_repository_index(struct srv_server *s, const char *team,
                           bool ready_only);

/* A ready version's module of that id, referenced (its cache entry may
 * have been evicted, the repository keeps it); NULL when none. */
cache_entry *srv_repository_entry(struct srv_server *s, const char *id);

/* The name config.json gives input (output) i of team's model `model`
 * (an admin's TEAM/NAME too) running module id; with team NULL (an id
 * was asked for), of any model running id.  True with out set, false
 * when it gives none. */
bool srv_repository_io_name(struct srv_server *s, const char *team,
                            const char *model, const char *id, bool output,
                            int i, char *out, size_t cap);

/* The max_batch_size config.json gives the model of module id (0: none
 * given, or no repository model runs it).  Its dynamic_batching
 * configures the batcher (batch.h) for each version as it loads, and
 * its model_warmup runs on each (a failure: the version UNAVAILABLE). */
long srv_repository_max_batch_size(struct srv_server *s, const char *id);

#endif
