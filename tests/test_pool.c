/* SPDX-License-Identifier: Apache-2.0 */
/* The fork-join pool: every index is visited exactly once, from any number
 * of concurrent callers, nested calls run inline, and a call returns only
 * once every chunk is done, however long a worker's chunk outlasts the
 * caller's own; a caller set alone runs every chunk itself.  (Which
 * thread takes which home range is a matter of timing: not asserted.) */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "runtime/pool.h"

typedef struct counts {
  atomic_int *hits;
  atomic_long chunks;
} counts;

static void count_range(void *ctx, int64_t b, int64_t e) {
  counts *c = ctx;
  assert_true(b < e);
  for (int64_t i = b; i < e; i++) atomic_fetch_add(&c->hits[i], 1);
  atomic_fetch_add(&c->chunks, 1);
}

static void check_once(int64_t n, int64_t grain) {
  counts c = {calloc((size_t)n + 1, sizeof(atomic_int)), 0};
  assert_non_null(c.hits);
  shlo__parallel_for(n, grain, count_range, &c);
  for (int64_t i = 0; i < n; i++) assert_int_equal(atomic_load(&c.hits[i]), 1);
  if (n > 0) assert_true(atomic_load(&c.chunks) >= (n + grain - 1) / grain);
  free(c.hits);
}

static void every_index_runs_exactly_once(void **state) {
  (void)state;
  check_once(0, 16);
  check_once(1, 16);
  check_once(1000, 1);
  check_once(100003, 64);
  check_once(1 << 20, 1 << 15);
  check_once(7, 1); /* fewer chunks than some pools have threads */
  check_once(130, 1); /* more threads than home ranges, where so */
  assert_true(shlo__pool_threads() >= 1);
}

static void on_the_caller(void *ctx, int64_t b, int64_t e) {
  pthread_t *self = ctx;
  assert_true(pthread_equal(*self, pthread_self()));
  (void)b;
  (void)e;
}

static void alone_runs_on_the_caller(void **state) {
  (void)state;
  assert_false(shlo__pool_alone(true));
  assert_int_equal(shlo__pool_threads(), 1);
  pthread_t self = pthread_self();
  shlo__parallel_for(1 << 20, 1, on_the_caller, &self);
  counts c = {calloc(100003, sizeof(atomic_int)), 0};
  assert_non_null(c.hits);
  shlo__parallel_for(100003, 64, count_range, &c); /* one chunk, the lot */
  for (int64_t i = 0; i < 100003; i++) assert_int_equal(atomic_load(&c.hits[i]), 1);
  free(c.hits);
  assert_true(shlo__pool_alone(false));
  assert_false(shlo__pool_alone(false));
  check_once(100003, 64);
}

static void *caller(void *arg) {
  (void)arg;
  for (int k = 0; k < 50; k++) check_once(20000 + k, 97);
  return NULL;
}

static void concurrent_callers_share_the_workers(void **state) {
  (void)state;
  pthread_t t[6];
  for (int i = 0; i < 6; i++)
    assert_int_equal(pthread_create(&t[i], NULL, caller, NULL), 0);
  for (int i = 0; i < 6; i++) pthread_join(t[i], NULL);
}

static void nested_range(void *ctx, int64_t b, int64_t e) {
  counts *c = ctx;
  for (int64_t i = b; i < e; i++) {
    counts inner = {c->hits + i * 10, 0};
    shlo__parallel_for(10, 1, count_range, &inner);
  }
}

static void nested_calls_run_inline(void **state) {
  (void)state;
  counts c = {calloc(1000, sizeof(atomic_int)), 0};
  shlo__parallel_for(100, 3, nested_range, &c);
  for (int i = 0; i < 1000; i++) assert_int_equal(atomic_load(&c.hits[i]), 1);
  free(c.hits);
}

/* Odd indices sleep `ns` before writing their slot (a plain int: what
 * the caller reads after the call must be the chunk's write). */
typedef struct slow {
  int *slot;
  long ns;
} slow;

static void slow_range(void *ctx, int64_t b, int64_t e) {
  slow *s = ctx;
  for (int64_t i = b; i < e; i++) {
    if (i % 2) {
      struct timespec t = {0, s->ns};
      nanosleep(&t, NULL);
    }
    s->slot[i] = (int)i + 1;
  }
}

/* The caller watches for its last worker for a while (runtime/pool.c),
 * then sleeps on the condition: chunks shorter than that watch, about as
 * long, and far longer all end before the call returns. */
static void calls_wait_for_slow_chunks(void **state) {
  (void)state;
  static const long waits[] = {20000, 90000, 110000, 2000000};
  int slot[8];
  for (size_t w = 0; w < sizeof waits / sizeof waits[0]; w++)
    for (int round = 0; round < 5; round++) {
      memset(slot, 0, sizeof slot);
      slow s = {slot, waits[w]};
      shlo__parallel_for(8, 1, slow_range, &s);
      for (int i = 0; i < 8; i++) assert_int_equal(slot[i], i + 1);
    }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_index_runs_exactly_once),
      cmocka_unit_test(alone_runs_on_the_caller),
      cmocka_unit_test(concurrent_callers_share_the_workers),
      cmocka_unit_test(nested_calls_run_inline),
      cmocka_unit_test(calls_wait_for_slow_chunks),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
