/* SPDX-License-Identifier: Apache-2.0 */
/* The per-execution context behind shlo_exec (plan.h): diagnostics,
 * deadline, cancel flag, print stream and probe records.  Shared by the
 * threads of one execution; the lock guards the diagnostic and probes. */
#ifndef SHLO_EXEC_INT_H
#define SHLO_EXEC_INT_H

#include <pthread.h>

#include "core/limits.h"
#include "runtime/exec.h"
#include "shlo/engine.h"

typedef struct probe {
  char *id;
  int n;
  shlo_value **values;
} probe;

struct shlo_exec {
  pthread_mutex_t lock;
  shlo_diag *diag;
  const char *filename;
  bool failed;
  double deadline;   /* monotonic seconds; 0 = none */
  const shlo_cancel *cancel;
  FILE *print;
  unsigned ticks;    /* steps run, to pace deadline checks */
  probe *probes;
  int n_probes;
  struct shlo_profile *profile; /* NULL unless profiling */
  struct shlo_grid *grid; /* the process grid this execution is one process
                             of (grid.h), or NULL: a lone 1x1 process */
  int proc;               /* index in grid: replica * partitions + partition */
  /* Called once, after this execution's first failure is recorded: a grid
   * uses it to fail the whole grid and wake the other processes.  Set by
   * whoever runs the execution (grid.c); the executor knows no more. */
  void (*on_failure)(shlo_exec *ex);
  /* The loop-invariant values of the whiles running now, innermost first,
   * with their packed GEMM forms (kernels/pack_scope.h); NULL: none. */
  struct shlo__pack_scope *packs;
};

void shlo__exec_init(shlo_exec *ex, const shlo_exec_opts *opts,
                     const char *filename, shlo_diag *diag);
void shlo__exec_destroy(shlo_exec *ex);

struct shlo_mem_budget;
/* Turn a failed execution whose budget ran out into SHLO_ELIMIT with a
 * message naming the limit (the original message says where). */
shlo_status shlo__budget_refusal(const struct shlo_mem_budget *b,
                                 shlo_diag *d);

#endif
