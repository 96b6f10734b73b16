/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests for the engine's streaming seam (engine/src/runtime/grid.c):
 * bounded feeds and their notify, an outfeed that waits for a slow reader,
 * host-transfer send/recv served by caller feeds, and a cancel that stops a
 * program blocked in infeed, in outfeed, in a collective or in a loop. 
 * The engine looks at the flag at least every 50 ms (grid_run's poll) and
 * every loop iteration; how soon a loaded machine then schedules the
 * thread is not the code's to promise, so the test asserts the ending
 * (SHLO_ECANCELED, no results) and only a bound that tells a lost cancel
 * from a slow one, printing the latency it saw. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/value.h"
#include "shlo/engine.h"
#include "shlo/grid.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static shlo_value *scalar(int64_t x) {
  shlo_value *v = shlo_tensor_new(SHLO_SI64, 0, NULL);
  assert_non_null(v);
  *(int64_t *)v->data = x;
  return v;
}

static int64_t value_of(const shlo_value *v) { return *(int64_t *)v->data; }

static void load(const char *text, shlo_module **m, shlo_executable **e) {
  shlo_diag d;
  shlo_diag_clear(&d);
  shlo_status st = shlo_load(text, strlen(text), "t", NULL, m, e, &d);
  if (st) fprintf(stderr, "%s\n", d.message);
  assert_int_equal(st, SHLO_OK);
}

typedef struct counter {
  pthread_mutex_t lock;
  int calls, max_size;
  shlo_feed *q;
} counter;

static void count(void *ctx) {
  counter *c = ctx;
  pthread_mutex_lock(&c->lock);
  c->calls++;
  int n = c->q ? shlo_feed_size(c->q) : 0;
  if (n > c->max_size) c->max_size = n;
  pthread_mutex_unlock(&c->lock);
}

/* try_push refuses past either bound; pops and closes notify; an empty
 * queue takes one value over the byte bound. */
static void test_bounds_and_notify(void **state) {
  (void)state;
  shlo_feed *q = shlo_feed_new();
  counter c = {.lock = PTHREAD_MUTEX_INITIALIZER, .q = q};
  shlo_feed_set_bounds(q, 2, 0);
  shlo_feed_set_notify(q, count, &c);
  shlo_value *a = scalar(1), *b = scalar(2), *x = scalar(3), *out;
  assert_int_equal(shlo_feed_try_push(q, a), SHLO_OK);
  assert_int_equal(shlo_feed_try_push(q, b), SHLO_OK);
  assert_int_equal(shlo_feed_try_push(q, x), SHLO_ELIMIT);
  assert_int_equal(shlo_feed_size(q), 2);
  assert_int_equal(shlo_feed_bytes(q), 16);
  assert_int_equal(shlo_feed_pop(q, 0, &out), SHLO_OK);
  assert_int_equal(value_of(out), 1);
  shlo_value_unref(out);
  assert_int_equal(shlo_feed_try_push(q, x), SHLO_OK);
  assert_int_equal(c.calls, 4); /* three pushes and a pop */
  shlo_feed_set_bounds(q, 0, 4); /* 4 bytes: less than one value */
  assert_int_equal(shlo_feed_try_push(q, a), SHLO_ELIMIT);
  for (int i = 0; i < 2; i++) {
    assert_int_equal(shlo_feed_pop(q, 0, &out), SHLO_OK);
    shlo_value_unref(out);
  }
  assert_int_equal(shlo_feed_try_push(q, a), SHLO_OK); /* empty: takes it */
  shlo_feed_close(q);
  assert_int_equal(c.calls, 8);
  assert_int_equal(shlo_feed_try_push(q, b), SHLO_EINPUT);
  shlo_value_unref(a);
  shlo_value_unref(b);
  shlo_value_unref(x);
  shlo_feed_free(q);
}

static const char *OUTFEED_10 =
    "func.func @main() -> tensor<i64> {\n"
    "  %t0 = \"stablehlo.after_all\"() : () -> !stablehlo.token\n"
    "  %c0 = stablehlo.constant dense<0> : tensor<i64>\n"
    "  %c1 = stablehlo.constant dense<1> : tensor<i64>\n"
    "  %c10 = stablehlo.constant dense<10> : tensor<i64>\n"
    "  %r:2 = stablehlo.while(%i = %c0, %t = %t0) : tensor<i64>, !stablehlo.token\n"
    "    cond {\n"
    "      %c = stablehlo.compare LT, %i, %c10 : (tensor<i64>, tensor<i64>) -> tensor<i1>\n"
    "      stablehlo.return %c : tensor<i1>\n"
    "    } do {\n"
    "      %t2 = \"stablehlo.outfeed\"(%i, %t) : (tensor<i64>, !stablehlo.token) -> !stablehlo.token\n"
    "      %i2 = stablehlo.add %i, %c1 : tensor<i64>\n"
    "      stablehlo.return %i2, %t2 : tensor<i64>, !stablehlo.token\n"
    "    }\n"
    "  return %r#0 : tensor<i64>\n"
    "}\n";

typedef struct slow_reader {
  shlo_feed *q;
  int64_t got[16];
  int n;
} slow_reader;

static void *read_slowly(void *arg) {
  slow_reader *s = arg;
  shlo_value *v;
  while (shlo_feed_pop(s->q, 5.0, &v) == SHLO_OK) {
    if (s->n < 16) s->got[s->n++] = value_of(v);
    shlo_value_unref(v);
    usleep(2000);
  }
  return NULL;
}

/* An outfeed bounded at 2 values: the program waits for the reader, the
 * queue never holds more than 2, every value arrives in order. */
static void test_outfeed_waits_for_reader(void **state) {
  (void)state;
  shlo_module *m;
  shlo_executable *e;
  load(OUTFEED_10, &m, &e);
  shlo_feed *out = shlo_feed_new();
  counter c = {.lock = PTHREAD_MUTEX_INITIALIZER, .q = out};
  shlo_feed_set_bounds(out, 2, 0);
  shlo_feed_set_notify(out, count, &c);
  slow_reader s = {.q = out};
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, read_slowly, &s), 0);
  shlo_grid_opts g = {.num_replicas = 1, .num_partitions = 1,
                      .outfeed = &out, .exec = {.timeout_s = 10}};
  shlo_value **res;
  int n_res;
  shlo_diag d;
  assert_int_equal(shlo_execute_grid(e, &g, NULL, 0, &res, &n_res, &d), 0);
  pthread_join(th, NULL);
  assert_int_equal(s.n, 10);
  for (int i = 0; i < 10; i++) assert_int_equal(s.got[i], i);
  assert_true(c.max_size <= 2);
  shlo_value_unref(res[0]);
  free(res);
  shlo_feed_free(out);
  shlo_executable_free(e);
  shlo_module_free(m);
}

static const char *HOST_ECHO =
    "func.func @main() -> tensor<i64> {\n"
    "  %t0 = \"stablehlo.after_all\"() : () -> !stablehlo.token\n"
    "  %r:2 = \"stablehlo.recv\"(%t0) {channel_handle = "
    "#stablehlo.channel_handle<handle = 5, type = 3>, is_host_transfer = true}"
    " : (!stablehlo.token) -> (tensor<i64>, !stablehlo.token)\n"
    "  %c1 = stablehlo.constant dense<1> : tensor<i64>\n"
    "  %v = stablehlo.add %r#0, %c1 : tensor<i64>\n"
    "  %t1 = \"stablehlo.send\"(%v, %r#1) {channel_handle = "
    "#stablehlo.channel_handle<handle = 6, type = 2>, is_host_transfer = true}"
    " : (tensor<i64>, !stablehlo.token) -> !stablehlo.token\n"
    "  return %v : tensor<i64>\n"
    "}\n";

typedef struct host {
  shlo_feed *to_device, *to_host;
  int64_t asked[4];
  int n_asked;
} host;

static shlo_feed *host_channel(void *ctx, int64_t channel, bool to_host) {
  host *h = ctx;
  if (h->n_asked < 4) h->asked[h->n_asked++] = channel * 2 + to_host;
  if (channel == 5 && !to_host) return h->to_device;
  if (channel == 6 && to_host) return h->to_host;
  return NULL;
}

static shlo_feed *no_channels(void *ctx, int64_t channel, bool to_host) {
  (void)ctx, (void)channel, (void)to_host;
  return NULL;
}

/* recv / send with is_host_transfer: values come from and go to the feeds
 * the caller serves for channels 5 and 6. */
static void test_host_transfer(void **state) {
  (void)state;
  shlo_module *m;
  shlo_executable *e;
  load(HOST_ECHO, &m, &e);
  host h = {.to_device = shlo_feed_new(), .to_host = shlo_feed_new()};
  shlo_value *v = scalar(41), *got;
  assert_int_equal(shlo_feed_push(h.to_device, v), 0);
  shlo_value_unref(v);
  shlo_grid_opts g = {.num_replicas = 1, .num_partitions = 1,
                      .host_channel = host_channel, .host_ctx = &h,
                      .exec = {.timeout_s = 10}};
  shlo_value **res;
  int n_res;
  shlo_diag d;
  assert_int_equal(shlo_execute_grid(e, &g, NULL, 0, &res, &n_res, &d), 0);
  assert_int_equal(shlo_feed_pop(h.to_host, 0, &got), SHLO_OK);
  assert_int_equal(value_of(got), 42);
  assert_int_equal(h.n_asked, 2);
  assert_int_equal(h.asked[0], 10); /* channel 5, to the device */
  assert_int_equal(h.asked[1], 13); /* channel 6, to the host */
  shlo_value_unref(got);
  shlo_value_unref(res[0]);
  free(res);
  /* A host that serves other channels only: the op fails, naming it. */
  g.host_channel = no_channels;
  res = NULL;
  assert_int_equal(shlo_execute_grid(e, &g, NULL, 0, &res, &n_res, &d),
                   SHLO_ERUNTIME);
  assert_non_null(strstr(d.message, "no host serves channel 5"));
  shlo_feed_free(h.to_device);
  shlo_feed_free(h.to_host);
  shlo_executable_free(e);
  shlo_module_free(m);
}

typedef struct canceler {
  shlo_cancel *flag;
  double at;
} canceler;

static void *cancel_later(void *arg) {
  canceler *c = arg;
  usleep(200000);
  c->at = now_s();
  shlo_cancel_set(c->flag, 1);
  return NULL;
}

/* Run e on R x 1 processes (infeeds empty and open, outfeeds bounded at
 * one value), cancel after 200 ms, and return how long the grid took to
 * stop after the flag was set. */
static double cancel_latency(const char *text, int R) {
  shlo_module *m;
  shlo_executable *e;
  load(text, &m, &e);
  shlo_feed *in[2], *out[2];
  for (int k = 0; k < R; k++) {
    in[k] = shlo_feed_new();
    out[k] = shlo_feed_new();
    shlo_feed_set_bounds(out[k], 1, 0);
  }
  shlo_cancel flag = SHLO_CANCEL_INIT;
  canceler c = {.flag = &flag};
  shlo_grid_opts g = {.num_replicas = R, .num_partitions = 1, .infeed = in,
                      .outfeed = out,
                      .exec = {.timeout_s = 30, .cancel = &flag}};
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, cancel_later, &c), 0);
  shlo_value **res = NULL;
  int n_res;
  shlo_diag d;
  shlo_status st = shlo_execute_grid(e, &g, NULL, 0, &res, &n_res, &d);
  double dt = now_s() - c.at;
  pthread_join(th, NULL);
  assert_int_equal(st, SHLO_ECANCELED);
  assert_null(res);
  for (int k = 0; k < R; k++) {
    shlo_feed_free(in[k]);
    shlo_feed_free(out[k]);
  }
  shlo_executable_free(e);
  shlo_module_free(m);
  return dt;
}

static const char *BLOCKED_IN_INFEED =
    "func.func @main() -> tensor<i64> {\n"
    "  %t0 = \"stablehlo.after_all\"() : () -> !stablehlo.token\n"
    "  %r:2 = \"stablehlo.infeed\"(%t0) : (!stablehlo.token) -> (tensor<i64>, !stablehlo.token)\n"
    "  return %r#0 : tensor<i64>\n"
    "}\n";

/* Replica 1 waits in infeed, so replica 0 waits in the all_reduce. */
static const char *WAITING_IN_COLLECTIVE =
    "module @m attributes {mhlo.num_replicas = 2 : i64} {\n"
    "func.func @main() -> tensor<i64> {\n"
    "  %id = stablehlo.replica_id : tensor<ui32>\n"
    "  %z = stablehlo.constant dense<0> : tensor<ui32>\n"
    "  %first = stablehlo.compare EQ, %id, %z : (tensor<ui32>, tensor<ui32>) -> tensor<i1>\n"
    "  %x = \"stablehlo.if\"(%first) ({\n"
    "    %c = stablehlo.constant dense<1> : tensor<i64>\n"
    "    stablehlo.return %c : tensor<i64>\n"
    "  }, {\n"
    "    %t0 = \"stablehlo.after_all\"() : () -> !stablehlo.token\n"
    "    %r:2 = \"stablehlo.infeed\"(%t0) : (!stablehlo.token) -> (tensor<i64>, !stablehlo.token)\n"
    "    stablehlo.return %r#0 : tensor<i64>\n"
    "  }) : (tensor<i1>) -> tensor<i64>\n"
    "  %s = \"stablehlo.all_reduce\"(%x) ({\n"
    "  ^bb0(%a: tensor<i64>, %b: tensor<i64>):\n"
    "    %y = stablehlo.add %a, %b : tensor<i64>\n"
    "    stablehlo.return %y : tensor<i64>\n"
    "  }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<i64>) -> tensor<i64>\n"
    "  return %s : tensor<i64>\n"
    "}\n}\n";

static void check_latency(const char *what, double dt) {
  printf("cancel %s: stopped %.1f ms after the flag\n", what, dt * 1000);
  assert_true(dt < 5.0); /* 100x the poll: only a lost cancel takes this */
}

static void test_cancel_stops_blocked_runs(void **state) {
  (void)state;
  char looping[2048];
  snprintf(looping, sizeof looping, "%s",
           "func.func @main() -> tensor<i64> {\n"
           "  %c0 = stablehlo.constant dense<0> : tensor<i64>\n"
           "  %c1 = stablehlo.constant dense<1> : tensor<i64>\n"
           "  %cn = stablehlo.constant dense<1000000000000> : tensor<i64>\n"
           "  %r = stablehlo.while(%i = %c0) : tensor<i64>\n"
           "    cond {\n"
           "      %t = stablehlo.compare LT, %i, %cn : (tensor<i64>, tensor<i64>) -> tensor<i1>\n"
           "      stablehlo.return %t : tensor<i1>\n"
           "    } do {\n"
           "      %n = stablehlo.add %i, %c1 : tensor<i64>\n"
           "      stablehlo.return %n : tensor<i64>\n"
           "    }\n"
           "  return %r : tensor<i64>\n"
           "}\n");
  check_latency("blocked in infeed", cancel_latency(BLOCKED_IN_INFEED, 1));
  /* OUTFEED_10 into a queue of one value nobody reads */
  check_latency("blocked in outfeed", cancel_latency(OUTFEED_10, 1));
  check_latency("waiting in a collective",
                cancel_latency(WAITING_IN_COLLECTIVE, 2));
  check_latency("looping", cancel_latency(looping, 1));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_bounds_and_notify),
      cmocka_unit_test(test_outfeed_waits_for_reader),
      cmocka_unit_test(test_host_transfer),
      cmocka_unit_test(test_cancel_stops_blocked_runs),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
