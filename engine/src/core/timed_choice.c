/* SPDX-License-Identifier: Apache-2.0 */
/* Epochs of trials between two ways (timed_choice.h says why and how). */
#include "core/timed_choice.h"

void shlo__choice_init(shlo__choice *c) {
  atomic_init(&c->begun, 0);
  atomic_init(&c->epoch_start, CHOICE_SKIP);
  atomic_init(&c->best[0], 0);
  atomic_init(&c->best[1], 0);
  atomic_init(&c->trials_done, 0);
  atomic_init(&c->way, 0);
  atomic_init(&c->backoff, 0);
  atomic_init(&c->slow, 0);
  atomic_init(&c->retry, false);
}

shlo__choice_turn shlo__choice_begin(shlo__choice *c) {
  uint64_t n = atomic_fetch_add(&c->begun, 1);
  shlo__choice_turn turn = {0, false, false};
  if (n < CHOICE_SKIP) return turn;
  uint_fast64_t s = atomic_load(&c->epoch_start);
  uint64_t len = (uint64_t)CHOICE_EPOCH << atomic_load(&c->backoff);
  /* (a retry waits for the epoch's own trials to end) */
  bool open = n >= s && (n - s >= len || (atomic_load(&c->retry) &&
                                          n - s >= 2 * CHOICE_TRIALS));
  if (open && atomic_compare_exchange_strong(&c->epoch_start, &s, n)) {
    atomic_store(&c->best[0], 0);
    atomic_store(&c->best[1], 0);
    atomic_store(&c->trials_done, 0);
    atomic_store(&c->slow, 0);
    atomic_store(&c->retry, false);
    s = n;
  }
  /* (n < s: another run opened an epoch after this one began) */
  if (n >= s && n - s < 2 * CHOICE_TRIALS) {
    turn.way = n - s >= CHOICE_TRIALS;
    turn.trial = true;
    /* way 1 already clearly slower after two of its trials: the rest of
     * its block goes way 0 (still a trial, for way 0's best) */
    uint_fast64_t b0 = atomic_load(&c->best[0]), b1 = atomic_load(&c->best[1]);
    if (turn.way == 1 && n - s >= CHOICE_TRIALS + 2 && b0 && b1 &&
        (double)b1 > (double)b0 * CHOICE_CLEAR)
      turn.way = 0;
  } else {
    turn.way = atomic_load(&c->way);
    turn.sample = n >= s && (n - s) % CHOICE_SAMPLE == 0;
  }
  return turn;
}

int shlo__choice_current(const shlo__choice *c) {
  return atomic_load(&((shlo__choice *)c)->way);
}

/* best = min(best, ns), 0 counting as none */
static void keep_fastest(atomic_uint_fast64_t *best, uint64_t ns) {
  uint_fast64_t cur = atomic_load(best);
  while ((cur == 0 || ns < cur) &&
         !atomic_compare_exchange_weak(best, &cur, ns)) {
  }
}

/* A sample of the chosen way: slow against its best trial, or not. */
static void sampled(shlo__choice *c, int way, uint64_t ns) {
  uint_fast64_t best = atomic_load(&c->best[way]);
  if (best == 0) return; /* an epoch turned meanwhile */
  if ((double)ns <= (double)best * CHOICE_CLEAR) {
    atomic_store(&c->slow, 0);
    return;
  }
  if (atomic_fetch_add(&c->slow, 1) + 1 >= CHOICE_SLOW_SAMPLES)
    atomic_store(&c->retry, true);
}

void shlo__choice_end(shlo__choice *c, shlo__choice_turn turn, uint64_t ns) {
  if (turn.sample) sampled(c, turn.way, ns);
  if (!turn.trial) return;
  keep_fastest(&c->best[turn.way], ns ? ns : 1);
  if (atomic_fetch_add(&c->trials_done, 1) + 1 != 2 * CHOICE_TRIALS) return;
  /* the epoch's last trial: choose */
  double t0 = (double)atomic_load(&c->best[0]);
  double t1 = (double)atomic_load(&c->best[1]);
  if (t0 <= 0 || t1 <= 0) return; /* an epoch turned meanwhile */
  int was = atomic_load(&c->way);
  int now = t1 <= t0 * CHOICE_GAIN;
  double margin = now ? t0 / t1 : t1 / t0;
  int b = atomic_load(&c->backoff);
  if (now != was) b = 0;
  else if (margin >= CHOICE_CLEAR && b < CHOICE_MAX_BACKOFF) b++;
  atomic_store(&c->backoff, b);
  atomic_store(&c->way, now);
}
