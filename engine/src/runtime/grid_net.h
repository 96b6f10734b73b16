/* SPDX-License-Identifier: Apache-2.0 */
/* The seam between the grid runtime (grid.c, rendezvous.c) and the ranks
 * of an MPI job (grid_mpi.c; grid_mpi_off.c in a build without MPI, where
 * every grid stays in one process).  No mpi.h here or in its includers.
 *
 * Every rank runs the same host program (shlo run/test --mpi), so every
 * rank reaches the same grids in the same order.  A grid's process k runs
 * on rank home[k]; the others keep a placeholder for it.  A collective
 * whose group spans ranks meets as before, except that the members of
 * other ranks arrive as messages: every rank of the group receives every
 * member's operands and computes the results with the same code, in the
 * same group order, so they are bit-identical to one process's.  When
 * every process ended, the ranks trade results and status. */
#ifndef SHLO_GRID_NET_H
#define SHLO_GRID_NET_H

#include "runtime/grid.h"

/* Whether this thread's next grids may spread over the ranks: always,
 * unless shlo_mpi_spread_every_grid(false); then only between
 * shlo__net_spread_here(true) and (false) on the thread that runs them
 * (shlo_mpi_execute_grid, shlo_mpi_follow). */
void shlo__net_spread_here(bool on);

/* This rank cannot go on with the job (a follower that could not take
 * its share of a grid): as if a rank were lost, so shlo_mpi_stop aborts
 * every rank with `why`. */
void shlo__net_give_up(const char *why);

/* Whether rank r was heard from within the peer timeout (always true
 * without MPI). */
bool shlo__net_peer_alive(int r);

/* Place g's processes on the ranks (g->home, g->rank) when MPI runs
 * grids in this process and no other grid of this process is spread
 * now (a grid inside a grid process stays on its rank); otherwise leave
 * g->home NULL.  SHLO_ENOMEM. */
shlo_status shlo__net_begin(shlo_grid *g);

/* Under g->lock, by the last member of r on this rank to arrive: send
 * this rank's members' operands to the other ranks of r's group. */
shlo_status shlo__net_contribute(shlo_grid *g, const grid_rdv *r);

/* A send on channel `channel` by process `from`: the other ranks queue the
 * values too (a channel's one receiver may run on any of them). */
shlo_status shlo__net_send(shlo_grid *g, int64_t channel, int from,
                           shlo_value *const *vals, int n);

/* After this rank's processes ended: send their results (res[k][0..n_res[k])
 * for the local k; res may be NULL when out of memory) and status to every
 * other rank, receive theirs into res[k] of the remote k, and return the
 * grid's status across ranks with g->fail set from the failing rank.  A
 * rank that stops answering ends it with SHLO_ERUNTIME. */
shlo_status shlo__net_end(shlo_grid *g, shlo_value **const *res,
                          const int *n_res);

#endif
