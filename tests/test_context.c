/* SPDX-License-Identifier: Apache-2.0 */
/* Contexts (shlo/context.h): two differently sized contexts run programs
 * at once in one process, each on its own pool; a context with a counting
 * allocator gets back every byte it handed out once its objects are freed
 * and it is destroyed; workers lent by an executor return on destroy; bad
 * options are refused.  Run under valgrind as well (tests/CMakeLists.txt),
 * which sees that destroy joins every thread and frees the rest. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/context_int.h"
#include "core/value.h"
#include "runtime/pool.h"
#include "shlo/artifact.h"
#include "shlo/context.h"
#include "shlo/engine.h"
#include "shlo/grid.h"

#define N 65536 /* 256 KiB of f32: big enough for the pool and the cache */

static const char program[] =
    "func.func @main(%a: tensor<65536xf32>, %b: tensor<65536xf32>) -> "
    "tensor<65536xf32> {\n"
    "  %s = stablehlo.add %a, %b : tensor<65536xf32>\n"
    "  %m = stablehlo.multiply %s, %a : tensor<65536xf32>\n"
    "  func.return %m : tensor<65536xf32>\n"
    "}\n";

/* ---- a counting allocator: a size header before each block ---- */

typedef struct counter {
  atomic_llong bytes;  /* outstanding */
  atomic_llong allocs; /* calls that returned a block */
  atomic_llong frees;
  atomic_llong peak;   /* most bytes outstanding at once */
} counter;

#define HDR 16 /* keeps malloc's alignment for what follows the header */

static void *count_alloc(void *user, size_t n) {
  counter *c = user;
  char *p = malloc(n + HDR);
  if (!p) return NULL;
  *(size_t *)p = n;
  long long now = atomic_fetch_add(&c->bytes, (long long)n) + (long long)n;
  long long was = atomic_load(&c->peak);
  while (now > was && !atomic_compare_exchange_weak(&c->peak, &was, now)) {
  }
  atomic_fetch_add(&c->allocs, 1);
  return p + HDR;
}

static void count_free(void *user, void *q) {
  counter *c = user;
  if (!q) return;
  char *p = (char *)q - HDR;
  atomic_fetch_sub(&c->bytes, (long long)*(size_t *)p);
  atomic_fetch_add(&c->frees, 1);
  free(p);
}

static void *count_realloc(void *user, void *q, size_t n) {
  if (!q) return count_alloc(user, n);
  size_t old = *(size_t *)((char *)q - HDR);
  void *r = count_alloc(user, n);
  if (!r) return NULL;
  memcpy(r, q, old < n ? old : n);
  count_free(user, q);
  return r;
}

/* ---- running the program in a context ---- */

static shlo_value *filled(shlo_context *ctx, float (*f)(int64_t)) {
  int64_t dims[1] = {N};
  shlo_value *v = shlo_context_tensor_new(ctx, SHLO_F32, 1, dims);
  assert_non_null(v);
  float *d = v->data;
  for (int64_t i = 0; i < N; i++) d[i] = f(i);
  return v;
}

static float a_of(int64_t i) { return (float)(i % 7); }
static float b_of(int64_t i) { return (float)(i % 5) + 1; }

/* Load the program in ctx and run it `runs` times: (a + b) * a, exact in
 * f32 for these small integers. */
static void run_in(shlo_context *ctx, int runs) {
  shlo_module *m;
  shlo_executable *e;
  shlo_diag d;
  shlo_diag_clear(&d);
  shlo_compile_opts co = {.context = ctx};
  if (shlo_load(program, strlen(program), "ctx.mlir", &co, &m, &e, &d))
    fail_msg("load: %s", d.message);
  assert_ptr_equal(shlo_executable_context(e), ctx);
  shlo_value *args[2] = {filled(ctx, a_of), filled(ctx, b_of)};
  for (int r = 0; r < runs; r++) {
    shlo_value **res = NULL;
    int n = 0;
    if (shlo_execute(e, NULL, args, 2, &res, &n, &d))
      fail_msg("execute: %s", d.message);
    assert_int_equal(n, 1);
    assert_ptr_equal(res[0]->ctx, ctx); /* made in the executable's */
    const float *o = res[0]->data;
    for (int64_t i = 0; i < N; i++)
      if (o[i] != (a_of(i) + b_of(i)) * a_of(i))
        fail_msg("run %d: out[%lld] = %g", r, (long long)i, (double)o[i]);
    shlo_value_unref(res[0]);
    free(res); /* the results array is the C library's (shlo_execute) */
  }
  shlo_value_unref(args[0]);
  shlo_value_unref(args[1]);
  shlo_executable_free(e);
  shlo_module_free(m);
}

/* ---- which threads a context's parallel steps run on ---- */

typedef struct seen {
  pthread_mutex_t mu;
  pthread_t ids[8];
  int n;
} seen;

static void note_thread(void *arg, int64_t b, int64_t e) {
  seen *s = arg;
  (void)b;
  (void)e;
  pthread_mutex_lock(&s->mu);
  bool known = false;
  for (int i = 0; i < s->n; i++) known = known || pthread_equal(s->ids[i], pthread_self());
  if (!known && s->n < 8) s->ids[s->n++] = pthread_self();
  pthread_mutex_unlock(&s->mu);
}

/* The distinct threads a 4096-chunk parallel_for in ctx ran on. */
static int threads_used(shlo_context *ctx) {
  seen s = {.mu = PTHREAD_MUTEX_INITIALIZER};
  shlo_context *prev = shlo__ctx_swap(ctx);
  assert_int_equal(shlo__pool_threads(), shlo_context_threads(ctx));
  shlo__parallel_for(4096, 1, note_thread, &s);
  shlo__ctx_swap(prev);
  pthread_mutex_destroy(&s.mu);
  return s.n;
}

typedef struct runner {
  shlo_context *ctx;
  int max_threads_seen;
} runner;

static void *runner_main(void *arg) {
  runner *r = arg;
  for (int k = 0; k < 4; k++) {
    run_in(r->ctx, 3);
    int used = threads_used(r->ctx);
    if (used > r->max_threads_seen) r->max_threads_seen = used;
  }
  return NULL;
}

static shlo_context *make(int threads, counter *c) {
  shlo_context_options o;
  shlo_context_options_init(&o);
  o.threads = threads;
  if (c)
    o.allocator = (shlo_allocator){count_alloc, count_realloc, count_free, c};
  shlo_context *ctx = NULL;
  assert_int_equal(shlo_context_create(&o, &ctx), SHLO_OK);
  assert_non_null(ctx);
  return ctx;
}

/* Contexts of 1 and 2 threads, each driven by its own thread at the same
 * time: right results in both, the one-thread context never leaves its
 * caller, the other uses at most its two. */
static void two_contexts_run_at_once(void **state) {
  (void)state;
  runner r[2] = {{make(1, NULL), 0}, {make(2, NULL), 0}};
  assert_int_equal(shlo_context_threads(r[0].ctx), 1);
  assert_int_equal(shlo_context_threads(r[1].ctx), 2);
  pthread_t t[2];
  for (int i = 0; i < 2; i++)
    assert_int_equal(pthread_create(&t[i], NULL, runner_main, &r[i]), 0);
  for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
  assert_int_equal(r[0].max_threads_seen, 1);
  assert_true(r[1].max_threads_seen >= 1 && r[1].max_threads_seen <= 2);
  shlo_context_destroy(r[0].ctx);
  shlo_context_destroy(r[1].ctx);
}

/* One thread, every allocation counted: load, compile, run twice (the
 * second run takes buffers from the cache), free, destroy -- and every
 * byte is back. */
static void counting_allocator_gets_every_byte_back(void **state) {
  (void)state;
  counter c = {0};
  shlo_context *ctx = make(1, &c);
  assert_true(atomic_load(&c.allocs) >= 1); /* the context itself */
  run_in(ctx, 2);
  /* the tensors' data went through it: two arguments and a result of
   * 256 KiB alive at once, besides the IR and the plan */
  assert_true(atomic_load(&c.peak) >= 3 * N * (long long)sizeof(float));
  assert_true(atomic_load(&c.allocs) > 8);
  shlo_context_destroy(ctx);
  assert_int_equal(atomic_load(&c.bytes), 0);
  assert_int_equal(atomic_load(&c.allocs), atomic_load(&c.frees));
}

/* The same with two threads: what the pool's worker allocates for its
 * chunks (a fused group's scratch) comes from the context too, and all of
 * it is back after destroy. */
static void counting_allocator_with_a_worker(void **state) {
  (void)state;
  counter c = {0};
  shlo_context *ctx = make(2, &c);
  assert_int_equal(shlo_context_threads(ctx), 2);
  run_in(ctx, 4);
  shlo_context_destroy(ctx);
  assert_int_equal(atomic_load(&c.bytes), 0);
  assert_int_equal(atomic_load(&c.allocs), atomic_load(&c.frees));
}

/* A grid in a counting context: 2 replicas each take a tensor from its
 * infeed, add its argument, all-reduce the sum over both and send it to
 * its outfeed.  The processes' threads, the collective and the feeds'
 * values all run in the executable's context, and every byte it handed
 * out is back after destroy. */
static const char grid_program[] =
    "module @g attributes {mhlo.num_replicas = 2 : i64} {\n"
    "func.func @main(%x: tensor<4xi32>, %t: !stablehlo.token) -> "
    "tensor<4xi32> {\n"
    "  %v:2 = \"stablehlo.infeed\"(%t) : (!stablehlo.token) -> "
    "(tensor<4xi32>, !stablehlo.token)\n"
    "  %a = stablehlo.add %x, %v#0 : tensor<4xi32>\n"
    "  %s = \"stablehlo.all_reduce\"(%a) ({\n"
    "  ^bb0(%p: tensor<i32>, %q: tensor<i32>):\n"
    "    %r = stablehlo.add %p, %q : tensor<i32>\n"
    "    stablehlo.return %r : tensor<i32>\n"
    "  }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : "
    "(tensor<4xi32>) -> tensor<4xi32>\n"
    "  %o = \"stablehlo.outfeed\"(%s, %v#1) : (tensor<4xi32>, "
    "!stablehlo.token) -> !stablehlo.token\n"
    "  return %s : tensor<4xi32>\n"
    "}\n}\n";

static shlo_value *i32x4(shlo_context *ctx, int32_t base) {
  int64_t four = 4;
  shlo_value *v = shlo_context_tensor_new(ctx, SHLO_SI32, 1, &four);
  assert_non_null(v);
  for (int i = 0; i < 4; i++) ((int32_t *)v->data)[i] = base + i;
  return v;
}

static void grid_in(shlo_context *ctx) {
  shlo_module *m;
  shlo_executable *e;
  shlo_diag d;
  shlo_diag_clear(&d);
  shlo_compile_opts co = {.context = ctx};
  if (shlo_load(grid_program, strlen(grid_program), "grid.mlir", &co, &m, &e,
                &d))
    fail_msg("load: %s", d.message);
  shlo_feed *in[2], *out[2];
  shlo_value *args[4]; /* process-major: x, token */
  for (int k = 0; k < 2; k++) {
    in[k] = shlo_feed_new();
    out[k] = shlo_feed_new();
    assert_non_null(in[k]);
    assert_non_null(out[k]);
    shlo_value *v = i32x4(ctx, 100 * (k + 1));
    assert_int_equal(shlo_feed_push(in[k], v), SHLO_OK);
    shlo_value_unref(v);
    args[2 * k] = i32x4(ctx, 10 * (k + 1));
    args[2 * k + 1] = shlo_token_new();
  }
  shlo_grid_opts o = {.infeed = in, .outfeed = out};
  shlo_value **res = NULL;
  int n = 0;
  if (shlo_execute_grid(e, &o, args, 2, &res, &n, &d))
    fail_msg("grid: %s", d.message);
  assert_int_equal(n, 1);
  for (int k = 0; k < 2; k++) {
    /* (10 + i + 100 + i) + (20 + i + 200 + i) on both replicas */
    shlo_value *v = NULL;
    assert_int_equal(shlo_feed_pop(out[k], 0, &v), SHLO_OK);
    for (int i = 0; i < 4; i++) {
      assert_int_equal(((int32_t *)res[k]->data)[i], 330 + 4 * i);
      assert_int_equal(((int32_t *)v->data)[i], 330 + 4 * i);
    }
    shlo_value_unref(v);
    shlo_value_unref(res[k]);
    shlo_feed_free(in[k]);
    shlo_feed_free(out[k]);
    shlo_value_unref(args[2 * k]);
    shlo_value_unref(args[2 * k + 1]);
  }
  free(res); /* the results array is the C library's (shlo_execute_grid) */
  shlo_executable_free(e);
  shlo_module_free(m);
}

static void counting_allocator_runs_a_grid(void **state) {
  (void)state;
  counter c = {0};
  shlo_context *ctx = make(2, &c);
  long long before = atomic_load(&c.allocs);
  grid_in(ctx);
  assert_true(atomic_load(&c.allocs) > before + 8); /* IR, plan, tensors */
  shlo_context_destroy(ctx);
  assert_int_equal(atomic_load(&c.bytes), 0);
  assert_int_equal(atomic_load(&c.allocs), atomic_load(&c.frees));
}

/* The program of run_in written as a portable artifact (in the default
 * context), then loaded from those bytes and run in a counting one: the
 * bytecode reader and the VHLO lowering allocate through it, and give
 * every byte back. */
static void counting_allocator_reads_an_artifact(void **state) {
  (void)state;
  shlo_module *src;
  shlo_diag d;
  shlo_diag_clear(&d);
  assert_int_equal(
      shlo_parse_module(program, strlen(program), "ctx.mlir", &src, &d),
      SHLO_OK);
  void *bytes = NULL;
  size_t len = 0;
  if (shlo_write_artifact(src, NULL, &bytes, &len, &d))
    fail_msg("write: %s", d.message);
  shlo_module_free(src);
  assert_true(shlo_is_artifact(bytes, len));

  counter c = {0};
  shlo_context *ctx = make(1, &c);
  long long before = atomic_load(&c.allocs);
  shlo_module *m;
  shlo_executable *e;
  shlo_compile_opts co = {.context = ctx};
  if (shlo_load(bytes, len, "ctx.mlirbc", &co, &m, &e, &d))
    fail_msg("load: %s", d.message);
  free(bytes); /* the writer's buffer is the C library's */
  assert_true(atomic_load(&c.allocs) > before);
  shlo_value *args[2] = {filled(ctx, a_of), filled(ctx, b_of)};
  shlo_value **res = NULL;
  int n = 0;
  if (shlo_execute(e, NULL, args, 2, &res, &n, &d))
    fail_msg("execute: %s", d.message);
  assert_int_equal(n, 1);
  const float *o = res[0]->data;
  for (int64_t i = 0; i < N; i++)
    if (o[i] != (a_of(i) + b_of(i)) * a_of(i))
      fail_msg("out[%lld] = %g", (long long)i, (double)o[i]);
  shlo_value_unref(res[0]);
  free(res);
  shlo_value_unref(args[0]);
  shlo_value_unref(args[1]);
  shlo_executable_free(e);
  shlo_module_free(m);
  shlo_context_destroy(ctx);
  assert_int_equal(atomic_load(&c.bytes), 0);
  assert_int_equal(atomic_load(&c.allocs), atomic_load(&c.frees));
}

/* exec_max_bytes bounds an execution that names no limit of its own: a
 * 256 KiB result does not fit in 64 KiB (SHLO_ELIMIT), and fits when the
 * execution asks for more. */
static void exec_max_bytes_is_the_default_limit(void **state) {
  (void)state;
  shlo_context_options o;
  shlo_context_options_init(&o);
  o.threads = 1;
  o.exec_max_bytes = 64 << 10;
  shlo_context *ctx;
  assert_int_equal(shlo_context_create(&o, &ctx), SHLO_OK);
  shlo_module *m;
  shlo_executable *e;
  shlo_diag d;
  shlo_compile_opts co = {.context = ctx};
  if (shlo_load(program, strlen(program), "lim.mlir", &co, &m, &e, &d))
    fail_msg("load: %s", d.message);
  shlo_value *args[2] = {filled(ctx, a_of), filled(ctx, b_of)};
  shlo_value **res = NULL;
  int n = 0;
  assert_int_equal(shlo_execute(e, NULL, args, 2, &res, &n, &d), SHLO_ELIMIT);
  shlo_exec_opts eo = {.max_bytes = 1 << 20};
  assert_int_equal(shlo_execute(e, &eo, args, 2, &res, &n, &d), SHLO_OK);
  shlo_value_unref(res[0]);
  free(res);
  shlo_value_unref(args[0]);
  shlo_value_unref(args[1]);
  shlo_executable_free(e);
  shlo_module_free(m);
  shlo_context_destroy(ctx);
}

/* ---- an executor lending its threads ---- */

typedef struct lender {
  pthread_t t[4];
  int n;
} lender;

typedef struct lent_job {
  void (*fn)(void *);
  void *arg;
} lent_job;

static void *lent_main(void *p) {
  lent_job j = *(lent_job *)p;
  free(p);
  j.fn(j.arg);
  return NULL;
}

static int lend(void *user, void (*fn)(void *), void *arg) {
  lender *l = user;
  lent_job *j = malloc(sizeof *j);
  if (!j || l->n == 4) {
    free(j);
    return -1;
  }
  j->fn = fn;
  j->arg = arg;
  if (pthread_create(&l->t[l->n], NULL, lent_main, j)) {
    free(j);
    return -1;
  }
  l->n++;
  return 0;
}

/* Three threads asked, two lent by the executor: the context runs the
 * program on them, and on destroy each lent worker returns (join). */
static void executor_lends_workers(void **state) {
  (void)state;
  lender l = {.n = 0};
  shlo_context_options o;
  shlo_context_options_init(&o);
  o.threads = 3;
  o.executor = (shlo_executor){lend, &l};
  shlo_context *ctx;
  assert_int_equal(shlo_context_create(&o, &ctx), SHLO_OK);
  assert_int_equal(l.n, 2);
  assert_int_equal(shlo_context_threads(ctx), 3);
  run_in(ctx, 2);
  assert_true(threads_used(ctx) <= 3);
  shlo_context_destroy(ctx);
  for (int i = 0; i < l.n; i++) assert_int_equal(pthread_join(l.t[i], NULL), 0);
}

/* Options a context cannot be made with; the settings that were
 * environment variables are read from the context. */
static void options_are_checked(void **state) {
  (void)state;
  shlo_context *ctx = (shlo_context *)&ctx;
  shlo_context_options o;
  shlo_context_options_init(&o);
  o.struct_size = 0;
  assert_int_equal(shlo_context_create(&o, &ctx), SHLO_EINPUT);
  assert_null(ctx);
  shlo_context_options_init(&o);
  o.struct_size = sizeof o + 8;
  assert_int_equal(shlo_context_create(&o, &ctx), SHLO_EINPUT);
  shlo_context_options_init(&o);
  o.allocator.alloc = count_alloc; /* without realloc and free */
  assert_int_equal(shlo_context_create(&o, &ctx), SHLO_EINPUT);
  shlo_context_options_init(&o);
  o.allocator = (shlo_allocator){count_alloc, count_realloc, count_free, NULL};
  assert_int_equal(shlo_default_context_configure(&o), SHLO_EINPUT);
  /* an older caller's shorter struct: the rest keeps its defaults */
  shlo_context_options_init(&o);
  o.struct_size = offsetof(shlo_context_options, executor);
  o.threads = 1;
  o.no_fusion = true; /* past struct_size: not read */
  assert_int_equal(shlo_context_create(&o, &ctx), SHLO_OK);
  assert_int_equal(shlo_context_threads(ctx), 1);
  assert_false(shlo_context_get_options(ctx)->no_fusion);
  assert_int_equal(shlo_context_get_options(ctx)->buffer_cache_bytes, -1);
  shlo_context_destroy(ctx);
  shlo_context_destroy(NULL);
}

/* no_fusion as a context option: the compile in that context keeps each
 * elementwise op its own step (what SHLO_NO_FUSION=1 gives the CLI). */
static void no_fusion_is_the_contexts(void **state) {
  (void)state;
  shlo_context_options o;
  shlo_context_options_init(&o);
  o.threads = 1;
  o.no_fusion = true;
  shlo_context *plain = make(1, NULL), *unfused;
  assert_int_equal(shlo_context_create(&o, &unfused), SHLO_OK);
  int64_t steps[2];
  shlo_context *in[2] = {plain, unfused};
  for (int i = 0; i < 2; i++) {
    shlo_module *m;
    shlo_executable *e;
    shlo_diag d;
    shlo_compile_opts co = {.context = in[i]};
    if (shlo_load(program, strlen(program), "f.mlir", &co, &m, &e, &d))
      fail_msg("load: %s", d.message);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    shlo_executable_explain(e, f);
    fclose(f);
    steps[i] = 0;
    for (char *p = text; (p = strstr(p, "stablehlo.")); p++) steps[i]++;
    free(text);
    shlo_executable_free(e);
    shlo_module_free(m);
  }
  assert_true(steps[1] > steps[0]); /* add and multiply apart, not fused */
  shlo_context_destroy(plain);
  shlo_context_destroy(unfused);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(two_contexts_run_at_once),
      cmocka_unit_test(counting_allocator_gets_every_byte_back),
      cmocka_unit_test(counting_allocator_with_a_worker),
      cmocka_unit_test(counting_allocator_runs_a_grid),
      cmocka_unit_test(counting_allocator_reads_an_artifact),
      cmocka_unit_test(exec_max_bytes_is_the_default_limit),
      cmocka_unit_test(executor_lends_workers),
      cmocka_unit_test(options_are_checked),
      cmocka_unit_test(no_fusion_is_the_contexts),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
