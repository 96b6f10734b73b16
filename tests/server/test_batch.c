/* SPDX-License-Identifier: Apache-2.0 */
/* Dynamic batching's core (server/src/batch.c, issue #34): the
 * "batching" object's reader, which programs may batch, and
 * srv_batch_execute from many threads at once: every caller gets exactly
 * the bytes shlo_execute gives it alone (rows 1 to 3 each), batches do
 * form, a program whose results do not split by rows falls back to running
 * each call alone, a full queue refuses, and a canceled batcher stops
 * waiting. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "batch.h"
#include "core/strbuf.h"
#include "shlo/engine.h"

#define N_CALLERS 8

static const char ROWS[] =
    "func.func @main(%x: tensor<?x3xf32>, %b: tensor<?x3xf32>) -> "
    "(tensor<?x3xf32>, tensor<?x3xf32>) {\n"
    "  %p = stablehlo.multiply %x, %x : tensor<?x3xf32>\n"
    "  %q = stablehlo.subtract %p, %b : tensor<?x3xf32>\n"
    "  %r = stablehlo.divide %q, %b : tensor<?x3xf32>\n"
    "  %m = stablehlo.maximum %x, %b : tensor<?x3xf32>\n"
    "  return %r, %m : tensor<?x3xf32>, tensor<?x3xf32>\n}\n";

/* Its result has twice the rows: a batch's would not split by request. */
static const char DOUBLED[] =
    "func.func @main(%x: tensor<?x3xf32>, %b: tensor<?x3xf32>) -> "
    "tensor<?x3xf32> {\n"
    "  %0 = stablehlo.concatenate %x, %b, dim = 0 : (tensor<?x3xf32>, "
    "tensor<?x3xf32>) -> tensor<?x3xf32>\n"
    "  return %0 : tensor<?x3xf32>\n}\n";

static const char STATIC[] =
    "func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {\n"
    "  return %x : tensor<2x3xf32>\n}\n";

/* ---- the configuration ---- */

static bool parse(const char *json, srv_batch_cfg *c, char *why) {
  cJSON *j = cJSON_Parse(json);
  bool ok = srv_batch_cfg_parse(j, c, why, 256);
  cJSON_Delete(j);
  return ok;
}

static void test_cfg(void **state) {
  (void)state;
  srv_batch_cfg c;
  char why[256];
  assert_true(parse("{\"max_batch_size\": 16, \"max_queue_delay_us\": 500, "
                    "\"preferred_batch_sizes\": [8, 2, 4], "
                    "\"max_queue_size\": 7}", &c, why));
  assert_int_equal(c.max_batch_size, 16);
  assert_int_equal(c.max_queue_delay_us, 500);
  assert_int_equal(c.max_queue_size, 7);
  assert_int_equal(c.n_preferred, 3);
  assert_int_equal(c.preferred[0], 2); /* kept ascending */
  assert_int_equal(c.preferred[2], 8);
  assert_true(parse("{\"max_batch_size\": 0}", &c, why)); /* off */
  assert_int_equal(c.max_batch_size, 0);
  assert_false(parse("{\"max_queue_delay_us\": 5}", &c, why));
  assert_non_null(strstr(why, "max_batch_size"));
  assert_false(parse("{\"max_batch_size\": 4, \"delay\": 1}", &c, why));
  assert_non_null(strstr(why, "unknown key"));
  assert_false(parse("{\"max_batch_size\": -1}", &c, why));
  assert_false(parse("{\"max_batch_size\": 2.5}", &c, why));
  assert_false(parse("{\"max_batch_size\": 1e9}", &c, why));
  assert_false(parse("{\"max_batch_size\": \"8\"}", &c, why));
  assert_false(parse("{\"max_batch_size\": 4, \"preferred_batch_sizes\": "
                     "[8]}", &c, why));
  assert_false(parse("{\"max_batch_size\": 4, \"preferred_batch_sizes\": "
                     "[1,1,1,1,1,1,1,1,1]}", &c, why));
  assert_false(parse("[4]", &c, why));
  assert_false(srv_batch_cfg_parse(NULL, &c, why, sizeof why));
}

static shlo_module *mod_of(const char *text, shlo_executable **x) {
  shlo_module *m;
  shlo_diag d;
  shlo_diag_clear(&d);
  assert_int_equal(shlo_load(text, strlen(text), "t.mlir", NULL, &m, x, &d),
                   SHLO_OK);
  return m;
}

static void test_shapes(void **state) {
  (void)state;
  char why[256];
  shlo_executable *x;
  shlo_module *m = mod_of(ROWS, &x);
  assert_true(srv_batch_shape_ok(shlo_executable_entry(x), why, sizeof why));
  shlo_executable_free(x);
  shlo_module_free(m);
  m = mod_of(STATIC, &x);
  assert_false(srv_batch_shape_ok(shlo_executable_entry(x), why, sizeof why));
  assert_non_null(strstr(why, "static leading dimension"));
  shlo_executable_free(x);
  shlo_module_free(m);
}

/* ---- executions from many threads ---- */

typedef struct caller {
  srv_batcher *b;
  const shlo_executable *x;
  pthread_barrier_t *gate;
  shlo_value *args[2];
  shlo_value **res;
  int n_res;
  shlo_status st;
  srv_batch_how how;
} caller;

/* Caller i's arguments: 1 to 3 rows of values that round. */
static void make_args(caller *c, int i) {
  int64_t dims[2] = {1 + i % 3, 3};
  for (int k = 0; k < 2; k++) {
    c->args[k] = shlo_tensor_new(SHLO_F32, 2, dims);
    float *p = shlo_tensor_data(c->args[k]);
    for (int64_t e = 0; e < dims[0] * 3; e++)
      p[e] = k ? (float)((i * 5 + e) % 13) / 7.0f + 0.1f
               : (float)((i * 7 + e) % 11) / 3.0f - 1.5f;
  }
}

static void *call(void *arg) {
  caller *c = arg;
  shlo_exec_opts o = {.timeout_s = 30};
  shlo_diag d;
  shlo_diag_clear(&d);
  if (c->gate) pthread_barrier_wait(c->gate);
  c->st = srv_batch_execute(c->b, "team", "mod", c->x, &o, c->args, 2,
                            &c->res, &c->n_res, &d, &c->how);
  return NULL;
}

static void release(caller *c) {
  for (int k = 0; k < 2; k++) shlo_value_release(c->args[k]);
  for (int k = 0; k < c->n_res; k++) shlo_value_release(c->res[k]);
  free(c->res);
}

/* The figure `name{team="team",module="mod"...}` from the metrics text. */
static double figure(srv_batcher *b, const char *name) {
  strbuf sb = {0};
  srv_batch_metrics(b, &sb);
  char key[160];
  snprintf(key, sizeof key, "%s{team=\"team\",module=\"mod\"", name);
  const char *p = sb.data ? strstr(sb.data, key) : NULL;
  double v = p ? atof(strchr(p, '}') + 2) : -1;
  shlo__sb_free(&sb);
  return v;
}

/* N_CALLERS threads gated to call together; each answer must be the
 * bytes of the same call alone. */
static void run_gated(const char *text, srv_batch_cfg *cfg, bool stacks) {
  shlo_executable *x;
  shlo_module *m = mod_of(text, &x);
  srv_batcher *b = srv_batcher_new(N_CALLERS);
  assert_int_equal(srv_batch_configure(b, "team", "mod", "main", cfg), 0);
  assert_true(srv_batch_enabled(b, "team", "mod"));
  assert_false(srv_batch_enabled(b, "other", "mod"));
  caller c[N_CALLERS], alone[N_CALLERS];
  pthread_t t[N_CALLERS];
  pthread_barrier_t gate;
  pthread_barrier_init(&gate, NULL, N_CALLERS);
  for (int i = 0; i < N_CALLERS; i++) {
    c[i] = (caller){.b = b, .x = x, .gate = &gate};
    alone[i] = (caller){.b = NULL, .x = x};
    make_args(&c[i], i);
    make_args(&alone[i], i);
    call(&alone[i]); /* no batcher: shlo_execute itself */
    assert_int_equal(alone[i].st, SHLO_OK);
  }
  for (int i = 0; i < N_CALLERS; i++)
    assert_int_equal(pthread_create(&t[i], NULL, call, &c[i]), 0);
  for (int i = 0; i < N_CALLERS; i++) pthread_join(t[i], NULL);
  for (int i = 0; i < N_CALLERS; i++) {
    assert_int_equal(c[i].st, SHLO_OK);
    assert_int_equal(c[i].how.kind, SRV_BATCH_STACKED);
    assert_int_equal(c[i].n_res, alone[i].n_res);
    for (int k = 0; k < c[i].n_res; k++) {
      assert_int_equal(shlo_tensor_rank(c[i].res[k]), 2);
      assert_memory_equal(shlo_tensor_dims(c[i].res[k]),
                          shlo_tensor_dims(alone[i].res[k]),
                          2 * sizeof(int64_t));
      assert_int_equal(shlo_tensor_nbytes(c[i].res[k]),
                       shlo_tensor_nbytes(alone[i].res[k]));
      assert_memory_equal(shlo_tensor_data(c[i].res[k]),
                          shlo_tensor_data(alone[i].res[k]),
                          shlo_tensor_nbytes(alone[i].res[k]));
    }
  }
  /* every caller waits in the batch, so they form one by design: at
   * least one execution took two or more of them */
  double execs = figure(b, "shlo_batch_size_count");
  double singles = figure(b, "shlo_batch_size_bucket");
  assert_true(execs >= 1 && execs < N_CALLERS);
  assert_true(singles < execs || !stacks);
  assert_true(figure(b, "shlo_batch_size_sum") == N_CALLERS);
  for (int i = 0; i < N_CALLERS; i++) {
    release(&c[i]);
    release(&alone[i]);
  }
  pthread_barrier_destroy(&gate);
  srv_batcher_free(b);
  shlo_executable_free(x);
  shlo_module_free(m);
}

static void test_same_bytes(void **state) {
  (void)state;
  srv_batch_cfg cfg = {.max_batch_size = 64, .max_queue_delay_us = 5000000};
  run_gated(ROWS, &cfg, true);
}

/* The batch's result has other rows than its requests: each runs alone
 * and still gets its own answer. */
static void test_no_split_runs_alone(void **state) {
  (void)state;
  srv_batch_cfg cfg = {.max_batch_size = 64, .max_queue_delay_us = 5000000};
  run_gated(DOUBLED, &cfg, false);
}

static void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* A queue of one refuses the second caller; a cancel ends the wait. */
static void test_full_and_cancel(void **state) {
  (void)state;
  shlo_executable *x;
  shlo_module *m = mod_of(ROWS, &x);
  srv_batcher *b = srv_batcher_new(4);
  srv_batch_cfg cfg = {.max_batch_size = 4,
                       .max_queue_delay_us = SRV_BATCH_MAX_DELAY_US,
                       .max_queue_size = 1};
  assert_int_equal(srv_batch_configure(b, "team", "mod", "main", &cfg), 0);
  caller first = {.b = b, .x = x}, second = {.b = b, .x = x};
  make_args(&first, 0);
  make_args(&second, 1);
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, call, &first), 0);
  while (figure(b, "shlo_batch_queue_depth") != 1) sleep_ms(1);
  call(&second);
  assert_int_equal(second.st, SHLO_ELIMIT);
  assert_int_equal(second.how.kind, SRV_BATCH_FULL);
  assert_int_equal(second.n_res, 0);
  assert_true(figure(b, "shlo_batch_refused_total") == 1);
  /* the first waits up to 10 s for company; a cancel starts it now (its
   * own run, a batch of one, still answers) */
  srv_batch_cancel_all(b, 1);
  pthread_join(t, NULL);
  assert_int_equal(first.how.kind, SRV_BATCH_STACKED);
  assert_int_equal(first.st, SHLO_OK);
  release(&first);
  release(&second);
  srv_batcher_free(b);
  shlo_executable_free(x);
  shlo_module_free(m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cfg),
      cmocka_unit_test(test_shapes),
      cmocka_unit_test(test_same_bytes),
      cmocka_unit_test(test_no_split_runs_alone),
      cmocka_unit_test(test_full_and_cancel),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
