/* SPDX-License-Identifier: Apache-2.0 */
/* --mpi for shlo run and shlo test: under `mpirun -n K`, every rank runs
 * the same command; rank 0 reads the files and shares their bytes, grids
 * spread over the ranks (shlo/grid_mpi.h), and only rank 0 prints. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "shlo/grid_mpi.h"

static int report_fd = STDERR_FILENO;

int cli_mpi_start(void) {
  shlo_diag d;
  shlo_diag_clear(&d);
  if (shlo_mpi_start(&d)) {
    cli_print_diag(&d);
    return 1;
  }
  /* The other ranks compute the same things: one copy of the output.
   * Their own stderr stays open for one thing only: why this rank gives
   * up on the job (cli_mpi_finish), which rank 0 may not live to say. */
  if (shlo_mpi_rank() != 0) {
    report_fd = dup(STDERR_FILENO);
    if (!freopen("/dev/null", "w", stdout) ||
        !freopen("/dev/null", "w", stderr))
      return 1;
  }
  return 0;
}

char *cli_mpi_read_file(const char *path, size_t *len) {
  char *text = NULL;
  *len = 0;
  if (shlo_mpi_rank() == 0) text = cli_read_file(path, len);
  char *shared = text;
  if (shlo_mpi_share(&shared, len)) {
    fprintf(stderr, "shlo: cannot share %s with the other MPI ranks\n", path);
    if (shared != text) free(shared);
    free(text);
    return NULL;
  }
  return shared;
}

char *cli_mpi_share_text(const char *text) {
  size_t len = text ? strlen(text) : 0;
  char *buf = shlo_mpi_rank() == 0 && text ? strdup(text) : NULL;
  if (shlo_mpi_rank() == 0 && text && !buf) len = 0;
  char *shared = buf;
  if (shlo_mpi_share(&shared, &len)) {
    if (shared != buf) free(shared);
    free(buf);
    return NULL;
  }
  return shared;
}

int cli_mpi_finish(int rc) {
  fflush(stdout);
  fflush(stderr);
  const char *why = shlo_mpi_lost_reason();
  if (why && report_fd >= 0)
    dprintf(report_fd, "shlo: MPI rank %d aborts the job: %s\n",
            shlo_mpi_rank(), why);
  shlo_mpi_stop(rc ? rc : 1);
  return rc;
}
