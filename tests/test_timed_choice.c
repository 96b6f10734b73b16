/* SPDX-License-Identifier: Apache-2.0 */
/* core/timed_choice.h, driven with made-up times so that every choice is
 * known: the trials' order, the choice after them, the back-off of a
 * plain choice, a change of mind when the times change, a busy trial, a
 * chosen way's slowdown seen by its samples, and a lone slow sample;
 * then the engine's use of it: an executable that may run alone gives
 * the same bytes on every execution, whichever way each ran, and one
 * with a product, or in a context with fixed_threads, is never timed. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "compile/executable.h"
#include "core/timed_choice.h"
#include "core/value.h"
#include "shlo/context.h"
#include "shlo/engine.h"

/* One run with way w costing cost[w] ns; returns its turn. */
static shlo__choice_turn run_once(shlo__choice *c, const uint64_t cost[2]) {
  shlo__choice_turn t = shlo__choice_begin(c);
  shlo__choice_end(c, t, cost[t.way]);
  return t;
}

static void trials_then_the_faster_way(void **state) {
  (void)state;
  shlo__choice c;
  shlo__choice_init(&c);
  const uint64_t cost[2] = {100, 50};
  for (int n = 0; n < CHOICE_SKIP; n++) {
    shlo__choice_turn t = run_once(&c, cost);
    assert_false(t.trial);
    assert_int_equal(t.way, 0);
  }
  for (int k = 0; k < 2 * CHOICE_TRIALS; k++) { /* a block each way */
    shlo__choice_turn t = run_once(&c, cost);
    assert_true(t.trial);
    assert_int_equal(t.way, k >= CHOICE_TRIALS);
  }
  for (int n = 0; n < 100; n++) {
    shlo__choice_turn t = run_once(&c, cost);
    assert_false(t.trial);
    assert_int_equal(t.way, 1);
  }
}

static void a_small_gain_keeps_way_0(void **state) {
  (void)state;
  shlo__choice c;
  shlo__choice_init(&c);
  const uint64_t cost[2] = {100, 95}; /* above CHOICE_GAIN of way 0 */
  for (int n = 0; n < 3000; n++) {
    shlo__choice_turn t = run_once(&c, cost);
    if (t.way == 1) assert_true(t.trial); /* only ever tried */
  }
  assert_int_equal(shlo__choice_current(&c), 0);
}

static void a_busy_trial_does_not_decide(void **state) {
  (void)state;
  shlo__choice c;
  shlo__choice_init(&c);
  uint64_t cost[2] = {100, 80};
  for (int n = 0; n < CHOICE_SKIP; n++) run_once(&c, cost);
  /* way 0's first trial hit a busy moment: its others count */
  shlo__choice_turn t = shlo__choice_begin(&c);
  assert_true(t.trial && t.way == 0);
  shlo__choice_end(&c, t, 10000);
  for (int n = 0; n < 50; n++) run_once(&c, cost);
  assert_int_equal(shlo__choice_current(&c), 1); /* 80 <= 0.9 * 100 */
  shlo__choice_init(&c);
  cost[1] = 95;
  for (int n = 0; n < CHOICE_SKIP; n++) run_once(&c, cost);
  t = shlo__choice_begin(&c);
  shlo__choice_end(&c, t, 10000);
  for (int n = 0; n < 50; n++) run_once(&c, cost);
  assert_int_equal(shlo__choice_current(&c), 0); /* 95 > 0.9 * 100 */
}

/* Way 1 plainly slower: its block stops after two runs, and epochs grow,
 * so it runs rarely and ever more rarely. */
static void a_plain_loser_is_tried_rarely(void **state) {
  (void)state;
  shlo__choice c;
  shlo__choice_init(&c);
  const uint64_t cost[2] = {100, 300};
  int way1_first = 0, way1_later = 0;
  for (int n = 0; n < 200000; n++) {
    shlo__choice_turn t = run_once(&c, cost);
    if (t.way == 1) *(n < 500 ? &way1_first : &way1_later) += 1;
    if (t.way == 1) assert_true(t.trial);
  }
  assert_int_equal(way1_first, 2); /* the first epoch's block, cut short */
  /* then epochs of 1024, 2048, ... 65536 runs, two runs way 1 in each:
   * from runs 514, 1538, 3586, ..., 65026, 130562 and 196098 */
  assert_int_equal(way1_later, 2 * (CHOICE_MAX_BACKOFF + 1));
  assert_int_equal(shlo__choice_current(&c), 0);
  assert_int_equal(atomic_load(&c.backoff), CHOICE_MAX_BACKOFF);
}

/* The machine changes: way 1 was faster, now it is slower; the next
 * epoch's trials go back to way 0, and the back-off starts again. */
static void a_change_is_followed(void **state) {
  (void)state;
  shlo__choice c;
  shlo__choice_init(&c);
  uint64_t cost[2] = {100, 40};
  for (int n = 0; n < 2000; n++) run_once(&c, cost);
  assert_int_equal(shlo__choice_current(&c), 1);
  int b = atomic_load(&c.backoff);
  assert_true(b >= 1); /* a clear choice, repeated */
  cost[1] = 250;
  /* at most the epoch under way, then the next one's trials */
  int64_t bound = ((int64_t)CHOICE_EPOCH << CHOICE_MAX_BACKOFF) +
                  2 * CHOICE_TRIALS;
  int64_t n = 0;
  while (shlo__choice_current(&c) == 1 && n < bound) {
    run_once(&c, cost);
    n++;
  }
  assert_int_equal(shlo__choice_current(&c), 0);
  assert_true(n <= ((int64_t)CHOICE_EPOCH << b) + 2 * CHOICE_TRIALS);
  assert_int_equal(atomic_load(&c.backoff), 0);
}

/* The chosen way becomes slow in the middle of a long epoch: its samples
 * say so, and the trials run again at once, not at the epoch's end. */
static void a_slowed_choice_is_tried_again_at_once(void **state) {
  (void)state;
  shlo__choice c;
  shlo__choice_init(&c);
  uint64_t cost[2] = {40, 100};
  for (int n = 0; n < 20000; n++) run_once(&c, cost);
  assert_int_equal(shlo__choice_current(&c), 0);
  assert_true(atomic_load(&c.backoff) >= 4); /* epochs of 4096 runs and up */
  cost[0] = 250;
  /* two slow samples (CHOICE_SAMPLE runs apart), then a new epoch's trials */
  int64_t n = 0;
  while (shlo__choice_current(&c) == 0 && n < 100000) {
    run_once(&c, cost);
    n++;
  }
  assert_int_equal(shlo__choice_current(&c), 1);
  assert_true(n <= (CHOICE_SLOW_SAMPLES + 1) * CHOICE_SAMPLE +
                       2 * CHOICE_TRIALS);
}

/* One slow sample among fast ones (a busy moment) opens no epoch: no
 * trial runs until the epoch's end. */
static void one_slow_sample_changes_nothing(void **state) {
  (void)state;
  shlo__choice c;
  shlo__choice_init(&c);
  const uint64_t cost[2] = {40, 100};
  for (int n = 0; n < 20000; n++) run_once(&c, cost);
  assert_true(atomic_load(&c.backoff) >= 4); /* epochs of 4096 runs and up */
  /* from the start of the next epoch, past its trials */
  while (!run_once(&c, cost).trial) {
  }
  while (run_once(&c, cost).trial) {
  }
  uint64_t start = atomic_load(&c.epoch_start);
  int samples = 0, slowed = 0;
  for (int n = 0; n < 1000; n++) {
    shlo__choice_turn t = shlo__choice_begin(&c);
    assert_false(t.trial);
    samples += t.sample;
    /* every other sample slow: never two in a row */
    bool slow = t.sample && samples % 2 == 1;
    slowed += slow;
    shlo__choice_end(&c, t, slow ? 1000 : cost[t.way]);
  }
  assert_true(slowed >= 5);
  assert_int_equal(atomic_load(&c.epoch_start), start);
  assert_int_equal(shlo__choice_current(&c), 0);
}

typedef struct racer {
  shlo__choice *c;
  int runs;
} racer;

static void *race(void *arg) {
  racer *r = arg;
  const uint64_t cost[2] = {300, 100};
  for (int n = 0; n < r->runs; n++) run_once(r->c, cost);
  return NULL;
}

/* Runs from four threads at once: each trial's time is its way's, so
 * whatever the interleaving the choice ends on way 1. */
static void overlapping_runs(void **state) {
  (void)state;
  shlo__choice c;
  shlo__choice_init(&c);
  pthread_t th[4];
  racer r = {&c, 20000};
  for (int i = 0; i < 4; i++)
    assert_int_equal(pthread_create(&th[i], NULL, race, &r), 0);
  for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
  assert_int_equal((int)atomic_load(&c.begun), 80000);
  assert_int_equal(shlo__choice_current(&c), 1);
}

/* ---- the engine's use ---- */

/* A scatter-add of gathered rows (bench/gather_scatter's shape, small):
 * memory moves only, so its executions may be timed alone. */
static const char *scatter_prog =
    "func.func @main(%t: tensor<4096x16xf32>, %i: tensor<2048x1xi32>) -> "
    "tensor<4096x16xf32> {\n"
    "  %g = \"stablehlo.gather\"(%t, %i) {dimension_numbers = "
    "#stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], "
    "start_index_map = [0], index_vector_dim = 1>, slice_sizes = "
    "array<i64: 1, 16>} : (tensor<4096x16xf32>, tensor<2048x1xi32>) -> "
    "tensor<2048x16xf32>\n"
    "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
    "  %b = stablehlo.broadcast_in_dim %z, dims = [] : (tensor<f32>) -> "
    "tensor<4096x16xf32>\n"
    "  %s = \"stablehlo.scatter\"(%b, %i, %g) ({\n"
    "  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
    "    %r = stablehlo.add %x, %y : tensor<f32>\n"
    "    stablehlo.return %r : tensor<f32>\n"
    "  }) {scatter_dimension_numbers = #stablehlo.scatter<"
    "update_window_dims = [1], inserted_window_dims = [0], "
    "scatter_dims_to_operand_dims = [0], index_vector_dim = 1>} : "
    "(tensor<4096x16xf32>, tensor<2048x1xi32>, tensor<2048x16xf32>) -> "
    "tensor<4096x16xf32>\n"
    "  return %s : tensor<4096x16xf32>\n"
    "}\n";

static const char *dot_prog =
    "func.func @main(%a: tensor<64x64xf32>) -> tensor<64x64xf32> {\n"
    "  %d = stablehlo.dot_general %a, %a, contracting_dims = [1] x [0] : "
    "(tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>\n"
    "  return %d : tensor<64x64xf32>\n"
    "}\n";

static shlo_context *context_of(int threads, bool fixed) {
  shlo_context_options o;
  shlo_context_options_init(&o);
  o.threads = threads;
  o.fixed_threads = fixed;
  shlo_context *ctx = NULL;
  assert_int_equal(shlo_context_create(&o, &ctx), SHLO_OK);
  return ctx;
}

static void load(shlo_context *ctx, const char *text, shlo_module **m,
                 shlo_executable **e) {
  shlo_compile_opts co = {.context = ctx};
  shlo_diag d;
  assert_int_equal(shlo_load(text, strlen(text), "t.mlir", &co, m, e, &d),
                   SHLO_OK);
}

/* Runs the scatter program n times, checking every result against the
 * first run's bytes. */
static void run_scatter(shlo_context *ctx, shlo_executable *e, int n) {
  int64_t td[2] = {4096, 16}, id[2] = {2048, 1};
  shlo_value *args[2] = {shlo_context_tensor_new(ctx, SHLO_F32, 2, td),
                         shlo_context_tensor_new(ctx, SHLO_SI32, 2, id)};
  assert_non_null(args[0]);
  assert_non_null(args[1]);
  float *t = args[0]->data;
  int32_t *ix = args[1]->data;
  for (int64_t k = 0; k < 4096 * 16; k++) t[k] = (float)(k % 977) * 0.37f;
  for (int k = 0; k < 2048; k++) ix[k] = (k * 2654435761u) % 4096;
  void *first = NULL;
  size_t bytes = 0;
  for (int r = 0; r < n; r++) {
    shlo_value **res = NULL;
    int n_res = 0;
    shlo_diag d;
    assert_int_equal(shlo_execute(e, NULL, args, 2, &res, &n_res, &d),
                     SHLO_OK);
    assert_int_equal(n_res, 1);
    if (!first) {
      bytes = (size_t)res[0]->numel * 4;
      first = malloc(bytes);
      assert_non_null(first);
      memcpy(first, res[0]->data, bytes);
    } else {
      assert_memory_equal(res[0]->data, first, bytes);
    }
    shlo_value_release(res[0]);
    free(res);
  }
  free(first);
  shlo_value_release(args[0]);
  shlo_value_release(args[1]);
}

static void executions_alone_give_the_same_bytes(void **state) {
  (void)state;
  shlo_context *ctx = context_of(3, false);
  shlo_module *m;
  shlo_executable *e;
  load(ctx, scatter_prog, &m, &e);
  shlo__choice *c = shlo__executable_alone(e);
  assert_non_null(c);
  run_scatter(ctx, e, 40);
  /* both trial blocks ran (way 1's at least its first two runs) */
  assert_int_equal((int)atomic_load(&c->begun), 40);
  assert_true(atomic_load(&c->best[0]) > 0);
  assert_true(atomic_load(&c->best[1]) > 0);
  shlo_executable_free(e);
  shlo_module_free(m);
  shlo_context_destroy(ctx);
}

static void fixed_threads_and_products_are_not_timed(void **state) {
  (void)state;
  shlo_context *ctx = context_of(2, true);
  shlo_module *m;
  shlo_executable *e;
  load(ctx, scatter_prog, &m, &e);
  run_scatter(ctx, e, 12);
  assert_int_equal((int)atomic_load(&shlo__executable_alone(e)->begun), 0);
  shlo_executable_free(e);
  shlo_module_free(m);
  shlo_context_destroy(ctx);

  ctx = context_of(2, false);
  load(ctx, dot_prog, &m, &e);
  assert_null(shlo__executable_alone(e));
  shlo_executable_free(e);
  shlo_module_free(m);
  shlo_context_destroy(ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(trials_then_the_faster_way),
      cmocka_unit_test(a_small_gain_keeps_way_0),
      cmocka_unit_test(a_busy_trial_does_not_decide),
      cmocka_unit_test(a_plain_loser_is_tried_rarely),
      cmocka_unit_test(a_change_is_followed),
      cmocka_unit_test(a_slowed_choice_is_tried_again_at_once),
      cmocka_unit_test(one_slow_sample_changes_nothing),
      cmocka_unit_test(overlapping_runs),
      cmocka_unit_test(executions_alone_give_the_same_bytes),
      cmocka_unit_test(fixed_threads_and_products_are_not_timed),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
