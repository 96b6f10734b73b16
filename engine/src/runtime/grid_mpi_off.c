/* SPDX-License-Identifier: Apache-2.0 */
/* The MPI backend in a build without MPI: grids stay in one process.
 * (grid_mpi.c is the real one; CMake compiles exactly one of them.) */
#include <stdlib.h>

#include "runtime/grid_net.h"
#include "shlo/grid_mpi.h"

bool shlo_mpi_built(void) { return false; }

shlo_status shlo_mpi_start(shlo_diag *diag) {
  return shlo_diag_set(diag, SHLO_EUNSUPPORTED, NULL, 0, 0,
                       "this shlo was built without MPI (SHLO_WITH_MPI)");
}

int shlo_mpi_rank(void) { return 0; }
int shlo_mpi_size(void) { return 1; }
shlo_status shlo_mpi_share(char **buf, size_t *len) {
  (void)buf;
  (void)len;
  return SHLO_OK;
}
bool shlo_mpi_lost(void) { return false; }
const char *shlo_mpi_lost_reason(void) { return NULL; }
void shlo_mpi_stop(int code) { (void)code; }

void shlo_mpi_spread_every_grid(bool on) { (void)on; }
void shlo__net_spread_here(bool on) { (void)on; }
void shlo__net_give_up(const char *why) { (void)why; }
bool shlo__net_peer_alive(int r) {
  (void)r;
  return true;
}

shlo_status shlo__net_begin(shlo_grid *g) {
  (void)g;
  return SHLO_OK;
}

shlo_status shlo__net_contribute(shlo_grid *g, const grid_rdv *r) {
  (void)g;
  (void)r;
  return SHLO_OK;
}

shlo_status shlo__net_send(shlo_grid *g, int64_t channel, int from,
                           shlo_value *const *vals, int n) {
  (void)g, (void)channel, (void)from, (void)vals, (void)n;
  return SHLO_OK;
}

shlo_status shlo__net_end(shlo_grid *g, shlo_value **const *res,
                          const int *n_res) {
  (void)res;
  (void)n_res;
  return g->failed ? g->fail.code : SHLO_OK;
}
