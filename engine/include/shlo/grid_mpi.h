/* SPDX-License-Identifier: Apache-2.0 */
/* Process grids across the ranks of an MPI job.
 *
 * Started in every rank of `mpirun -n K prog`, the MPI backend spreads
 * each grid execution's processes over the K ranks (several per rank run
 * as threads, as without MPI); collectives, send/recv and the results
 * travel between ranks as MPI messages, and every collective's results
 * are computed by the same code, in the same order, as in one process.
 *
 * Every rank runs the same host program on the same inputs (rank 0 reads
 * them and shares them with shlo_mpi_share), so every rank reaches the
 * same grid executions in the same order; one grid execution is spread at
 * a time (a grid started while one is spread runs on its own rank).
 * Every rank ends up with every process's results.
 *
 * A rank that stops answering (SHLO_MPI_PEER_TIMEOUT seconds, default 60,
 * without a message from it while ranks wait for each other) fails the
 * grid execution in flight with SHLO_ERUNTIME; afterwards shlo_mpi_lost()
 * is true and shlo_mpi_stop() aborts the whole job.
 *
 * In a build without MPI (SHLO_WITH_MPI off) shlo_mpi_start returns
 * SHLO_EUNSUPPORTED and grids stay in one process. */
#ifndef SHLO_GRID_MPI_H
#define SHLO_GRID_MPI_H

#include <stddef.h>

#include "shlo/engine.h"
#include "shlo/grid.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Whether this build has the MPI backend. */
SHLO_API bool shlo_mpi_built(void);
/* Initialise MPI (threads: MPI_THREAD_MULTIPLE) and make grid executions
 * of this process spread over its ranks from now on.  Call once, from
 * the main thread, before any grid runs.  SHLO_EUNSUPPORTED without MPI;
 * SHLO_ERUNTIME when MPI cannot start (diag says why). */
SHLO_API shlo_status shlo_mpi_start(shlo_diag *diag);
/* This process's rank and the number of ranks (0 and 1 before start). */
SHLO_API int shlo_mpi_rank(void);
SHLO_API int shlo_mpi_size(void);
/* Rank 0's bytes to every rank: every rank calls it at the same point.
 * On rank 0 *buf (len bytes, or NULL: "nothing", which every rank then
 * gets) stays the caller's; on the others *buf becomes a malloc'd,
 * NUL-terminated copy the caller frees.  SHLO_ERUNTIME when a rank was
 * lost, SHLO_ENOMEM. */
SHLO_API shlo_status shlo_mpi_share(char **buf, size_t *len);
/* Whether a rank stopped answering; the job cannot go on. */
SHLO_API bool shlo_mpi_lost(void);
/* Why (the first lost rank and how long it was silent, or the deadline
 * the others missed); NULL while no rank is lost.  Stays valid until
 * shlo_mpi_stop. */
SHLO_API const char *shlo_mpi_lost_reason(void);
/* Finish MPI (after every rank's last grid); when a rank was lost, abort
 * the whole job with exit status `code` (nonzero) instead. */
SHLO_API void shlo_mpi_stop(int code);

/* ---- a server's grids across the ranks ----
 *
 * `mpirun -n K shlo-server --grid-backend mpi`: rank 0 serves clients;
 * ranks 1..K-1 hold no sockets and sit in shlo_mpi_follow.  Rank 0 runs
 * the grid executions it wants spread with shlo_mpi_execute_grid: the
 * followers receive the program, entry, grid shape, deadline and
 * arguments, compile the program (once: they keep the last few), and run
 * their share of the processes.  Every other grid of rank 0 stays in its
 * process (shlo_mpi_spread_every_grid(false)).  One grid at a time goes
 * across the ranks; a second caller waits for the first. */

/* Whether every grid this process runs spreads over the ranks (true
 * after shlo_mpi_start: shlo run/test --mpi) or only those run through
 * shlo_mpi_execute_grid and shlo_mpi_follow (false: a server). */
SHLO_API void shlo_mpi_spread_every_grid(bool on);

/* Rank 0: shlo_execute_grid of e across every rank.  program[0..len) is
 * the text (or portable artifact) e was compiled from, entry the
 * function e runs (NULL: the module's entry).  Infeed, outfeed and
 * per-process programs (opts->programs) are not supported across ranks:
 * SHLO_EUNSUPPORTED.  Without MPI, or with one rank, it is
 * shlo_execute_grid. */
SHLO_API shlo_status shlo_mpi_execute_grid(
    const char *program, size_t len, const char *entry,
    const shlo_executable *e, const shlo_grid_opts *opts,
    shlo_value *const *args, int n_args, shlo_value ***results,
    int *n_results, shlo_diag *diag);

/* Ranks other than 0: run rank 0's shlo_mpi_execute_grid calls until
 * rank 0 calls shlo_mpi_follow_end (SHLO_OK) or is lost (SHLO_ERUNTIME,
 * diag says why).  A job this rank cannot compile or run fails that grid
 * on every rank, and the follower goes on. */
SHLO_API shlo_status shlo_mpi_follow(shlo_diag *diag);

/* Rank 0: release the followers (call once, after the last grid). */
SHLO_API void shlo_mpi_follow_end(void);

#ifdef __cplusplus
}
#endif

#endif
