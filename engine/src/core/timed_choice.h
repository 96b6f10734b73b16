/* SPDX-License-Identifier: Apache-2.0 */
/* Which of two ways to run one thing is faster, found by timing both now
 * and then, for a thing that runs many times (an executable's
 * executions) and gives the same result either way.  Way 0 is the
 * default; way 1 is taken only while it is clearly faster.
 *
 * The engine uses it to run an executable's parallel steps on its
 * context's pool (way 0) or on the executing thread alone (way 1,
 * runtime/exec.c).  Why: where the pool's threads sit on cores that reach
 * each other's caches slowly (two vCPUs of an EPYC on different core
 * complexes: a cache line's round trip between them took 310-370 ns), a
 * memory-bound program whose steps hand data from one thread to the
 * other runs slower on two threads than on one (gather_scatter 1.10 ms
 * against 0.63: a line the other core has read must be taken back from
 * it before it is written again).  Which programs, and when, depends on
 * the machine (the same VM changes state for minutes at a time), so the
 * engine measures.
 *
 * Runs count into epochs.  After the first CHOICE_SKIP (cold: pages
 * touched first, weights packed once), an epoch opens with trials: a
 * block of CHOICE_TRIALS runs way 0, then a block way 1, each way keeping
 * its fastest run.  A busy moment only slows a trial down, and the first
 * run of a block, which finds the data where the other way left it, is
 * rarely the fastest (runs alternating between the ways measured neither
 * way: gather_scatter alone took 1.30 ms after each run on the pool, 0.63
 * after one alone).  Way 1's block stops after two runs that are both
 * slower than way 0's best by CHOICE_CLEAR (its other runs go way 0).
 * The rest of the epoch takes way 1 where it was at most CHOICE_GAIN of
 * way 0's time, way 0 otherwise.  An epoch whose trials repeat the last
 * choice by a clear margin (CHOICE_CLEAR) is twice as long as the last,
 * so a thing plainly better one way spends fewer and fewer runs trying
 * the other (down to 2 in 2^16).
 *
 * Every CHOICE_SAMPLE-th run outside the trials is timed too.  Where
 * CHOICE_SLOW_SAMPLES such samples in a row took more than CHOICE_CLEAR
 * times the chosen way's best trial of the epoch, the next run opens a
 * new epoch: the machine changed under a long epoch (the VM's cores
 * began to share lines slowly, and the pool's way, chosen at 0.23 ms,
 * took 1.1; a bench round's median went from 0.40 to 0.65 ms) or a
 * busy spell came, and the trials measure both ways again.  A way that
 * merely stays as fast while the other became faster waits for its
 * epoch's end, as before.
 *
 * Everything is atomic: runs may overlap.  A trial that overlaps an
 * epoch's turn may be counted in the next epoch; that costs at most a
 * wrong choice for one epoch. */
#ifndef SHLO_TIMED_CHOICE_H
#define SHLO_TIMED_CHOICE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define CHOICE_SKIP 2
#define CHOICE_TRIALS 4
#define CHOICE_EPOCH 256
#define CHOICE_MAX_BACKOFF 8
#define CHOICE_GAIN 0.9
#define CHOICE_CLEAR 1.5
#define CHOICE_SAMPLE 64
#define CHOICE_SLOW_SAMPLES 2

typedef struct shlo__choice {
  atomic_uint_fast64_t begun;       /* runs begun */
  atomic_uint_fast64_t epoch_start; /* `begun` at the current epoch's start */
  atomic_uint_fast64_t best[2];     /* fastest trial (ns) by way; 0: none */
  atomic_int trials_done;           /* trials of this epoch ended */
  atomic_int way;                   /* the epoch's choice after its trials */
  atomic_int backoff;               /* log2 of the epoch's length in epochs */
  atomic_int slow;                  /* slow samples in a row */
  atomic_bool retry;                /* open an epoch at the next run */
} shlo__choice;

/* What one run does: which way, and whether its time counts for
 * shlo__choice_end: a trial's, or a sample of the chosen way's. */
typedef struct shlo__choice_turn {
  int way;
  bool trial;
  bool sample;
} shlo__choice_turn;

void shlo__choice_init(shlo__choice *c);
/* The turn of the run about to start. */
shlo__choice_turn shlo__choice_begin(shlo__choice *c);
/* The way chosen so far, for a run that is no trial and not counted. */
int shlo__choice_current(const shlo__choice *c);
/* A finished run's turn and time (only trials and samples count). */
void shlo__choice_end(shlo__choice *c, shlo__choice_turn turn, uint64_t ns);

#endif
