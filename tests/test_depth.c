/* SPDX-License-Identifier: Apache-2.0 */
/* Nesting that only the stack would bound (issue #30): chains of calls,
 * regions within regions, types and attributes within each other.  Each
 * is refused at ten times the limit with a message naming the limit, and
 * works at the limit -- on a thread whose stack is a fraction of the 8 MiB
 * a server's workers get, so the limit keeps a wide margin (the ASan build
 * runs these too, with its larger frames).  Measured in the ASan build,
 * 500 levels (the cap) need at most 2 MiB, 256 (the default) at most
 * 1.5 MiB (nested sorts, reduces and whiles, run as well as parsed). */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "shlo/engine.h"
#include "shlo/limits.h"

/* The stack a program runs on: a quarter of a thread's usual 8 MiB (the
 * server's workers and the libuv loop thread have that) under the default
 * limit, and 3 MiB under a limit up to the cap; or SHLO_DEPTH_STACK_KB KiB
 * (to measure what a test needs, with SHLO_DEPTH_ONLY=its name). */
static size_t small_stack(int max_depth) {
  const char *kb = getenv("SHLO_DEPTH_STACK_KB");
  if (kb && atoi(kb) > 0) return (size_t)atoi(kb) << 10;
  return max_depth > SHLO_DEFAULT_MAX_DEPTH ? (size_t)3 << 20
                                            : (size_t)2 << 20;
}

/* ---- a growable string ---- */

typedef struct sbuf {
  char *s;
  size_t n, cap;
} sbuf;

static void put(sbuf *b, const char *fmt, ...) {
  va_list ap;
  for (;;) {
    va_start(ap, fmt);
    int k = vsnprintf(b->s ? b->s + b->n : NULL, b->s ? b->cap - b->n : 0,
                      fmt, ap);
    va_end(ap);
    assert_true(k >= 0);
    if (b->s && b->n + (size_t)k < b->cap) {
      b->n += (size_t)k;
      return;
    }
    b->cap = (b->cap + (size_t)k + 1) * 2;
    b->s = realloc(b->s, b->cap);
    assert_non_null(b->s);
  }
}

/* ---- programs ---- */

/* How each function of a chain calls the next. */
enum { CALL, CALL_IN_REGION, COMPOSITE, GRID };

/* @main calls @f0, which calls @f1 ... @f{n-1}, which doubles its
 * argument: n calls deep.  With CALL_IN_REGION, each call but main's sits
 * in a stablehlo.case branch, a region and a call per function; with
 * COMPOSITE, each is a composite whose decomposition is the next; with
 * GRID, a one-process interpreter.run_parallel of the next.  `t` is
 * the callees' argument type (a dynamic one makes the module refined). */
static char *chain(int n, int how, const char *t) {
  sbuf b = {0};
  put(&b, "func.func @main() -> tensor<2xi32> {\n"
          "  %%c = stablehlo.constant dense<[5, 6]> : tensor<2xi32>\n"
          "  %%r = func.call @f0(%%c) : (tensor<2xi32>) -> %s\n"
          "  func.return %%r : %s\n}\n", t, t);
  for (int i = 0; i < n; i++) {
    put(&b, "func.func private @f%d(%%a: %s) -> %s {\n", i, t, t);
    if (i + 1 == n) {
      put(&b, "  %%r = stablehlo.add %%a, %%a : %s\n", t);
    } else if (how == COMPOSITE) {
      put(&b, "  %%r = \"stablehlo.composite\"(%%a) {name = \"x.next\", "
              "decomposition = @f%d} : (%s) -> %s\n", i + 1, t, t);
    } else if (how == GRID) {
      put(&b, "  %%r = \"interpreter.run_parallel\"(%%a) {programs = "
              "[[@f%d]]} : (%s) -> %s\n", i + 1, t, t);
    } else if (how == CALL_IN_REGION) {
      put(&b, "  %%i = stablehlo.constant dense<0> : tensor<i32>\n"
              "  %%r = \"stablehlo.case\"(%%i) ({\n"
              "    %%c = func.call @f%d(%%a) : (%s) -> %s\n"
              "    \"stablehlo.return\"(%%c) : (%s) -> ()\n"
              "  }) : (tensor<i32>) -> %s\n", i + 1, t, t, t, t);
    } else {
      put(&b, "  %%r = func.call @f%d(%%a) : (%s) -> %s\n", i + 1, t, t);
    }
    put(&b, "  func.return %%r : %s\n}\n", t);
  }
  return b.s;
}

/* n stablehlo.case ops, each inside the last one's branch. */
static char *nested_regions(int n) {
  sbuf b = {0};
  put(&b, "func.func @main() -> tensor<2xi32> {\n"
          "  %%i = stablehlo.constant dense<0> : tensor<i32>\n"
          "  %%a = stablehlo.constant dense<[5, 6]> : tensor<2xi32>\n");
  for (int k = 0; k < n; k++)
    put(&b, "  %%r%d = \"stablehlo.case\"(%%i) ({\n", k);
  put(&b, "  %%d = stablehlo.add %%a, %%a : tensor<2xi32>\n"
          "  \"stablehlo.return\"(%%d) : (tensor<2xi32>) -> ()\n");
  for (int k = n - 1; k >= 0; k--) {
    put(&b, "  }) : (tensor<i32>) -> tensor<2xi32>\n");
    if (k)
      put(&b, "  \"stablehlo.return\"(%%r%d) : (tensor<2xi32>) -> ()\n", k);
  }
  put(&b, "  func.return %%r0 : tensor<2xi32>\n}\n");
  return b.s;
}

/* n stablehlo.while ops in pretty form, each in the last one's body; each
 * runs its body once, so @main returns 1 after n loops. */
static char *nested_whiles(int n) {
  sbuf b = {0};
  const char *t = "tensor<i64>";
  put(&b, "func.func @main() -> %s {\n"
          "  %%c0 = stablehlo.constant dense<0> : %s\n"
          "  %%c1 = stablehlo.constant dense<1> : %s\n", t, t, t);
  for (int k = 0; k < n; k++)
    put(&b, "  %%r%d = stablehlo.while(%%i%d = %%c0) : %s\n"
            "  cond {\n"
            "    %%t = stablehlo.compare LT, %%i%d, %%c1 : (%s, %s) -> "
            "tensor<i1>\n"
            "    stablehlo.return %%t : tensor<i1>\n"
            "  } do {\n", k, k, t, k, t, t);
  for (int k = n - 1; k >= 0; k--)
    put(&b, "  %%n%d = stablehlo.add %%i%d, %%c1 : %s\n"
            "  stablehlo.return %%n%d : %s\n"
            "  }\n", k, k, t, k, t);
  put(&b, "  func.return %%r0 : %s\n}\n", t);
  return b.s;
}

/* n stablehlo.reduce ops in pretty form, each in the last one's reducer
 * (the parser's largest frame per region); each reduces one element, so
 * each reducer runs once, and every level gives 0 + 5. */
static char *nested_reduces(int n) {
  sbuf b = {0};
  const char *t = "tensor<i32>";
  put(&b, "func.func @main() -> %s {\n"
          "  %%a = stablehlo.constant dense<[5]> : tensor<1xi32>\n"
          "  %%z = stablehlo.constant dense<0> : %s\n", t, t);
  for (int k = 0; k < n; k++)
    put(&b, "  %%r%d = stablehlo.reduce(%%a init: %%z) across dimensions = "
            "[0] : (tensor<1xi32>, %s) -> %s\n"
            "  reducer(%%x%d: %s, %%y%d: %s) {\n", k, t, t, k, t, k, t);
  for (int k = n - 1; k >= 0; k--)
    put(&b, "  %%s%d = stablehlo.add %%x%d, %%y%d : %s\n"
            "  stablehlo.return %%s%d : %s\n"
            "  }\n", k, k, k, t, k, t);
  put(&b, "  func.return %%r0 : %s\n}\n", t);
  return b.s;
}

/* n stablehlo.sort ops, each in the last one's comparator (the kernel
 * with the largest frame that runs a region); two elements, so each
 * comparator runs once: [6, 5] sorted. */
static char *nested_sorts(int n) {
  sbuf b = {0};
  const char *t = "tensor<2xi32>", *s = "tensor<i32>";
  put(&b, "func.func @main() -> %s {\n"
          "  %%a = stablehlo.constant dense<[6, 5]> : %s\n", t, t);
  for (int k = 0; k < n; k++)
    put(&b, "  %%r%d = \"stablehlo.sort\"(%%a) ({\n"
            "  ^bb0(%%x%d: %s, %%y%d: %s):\n", k, k, s, k, s);
  for (int k = n - 1; k >= 0; k--)
    put(&b, "  %%t%d = stablehlo.compare LT, %%x%d, %%y%d : (%s, %s) -> "
            "tensor<i1>\n"
            "  \"stablehlo.return\"(%%t%d) : (tensor<i1>) -> ()\n"
            "  }) {dimension = 0 : i64, is_stable = false} : (%s) -> %s\n",
        k, k, k, s, s, k, t, t);
  put(&b, "  func.return %%r0 : %s\n}\n", t);
  return b.s;
}

/* @f{i} calls @f{i+1} twice: 2^n paths, n functions. */
static char *shared_callees(int n) {
  sbuf b = {0};
  const char *t = "tensor<2xi32>";
  put(&b, "func.func @main() -> %s {\n"
          "  %%c = stablehlo.constant dense<[5, 6]> : %s\n"
          "  %%r = func.call @f0(%%c) : (%s) -> %s\n"
          "  func.return %%r : %s\n}\n", t, t, t, t, t);
  for (int i = 0; i < n; i++) {
    put(&b, "func.func private @f%d(%%a: %s) -> %s {\n", i, t, t);
    if (i + 1 == n) {
      put(&b, "  %%r = stablehlo.add %%a, %%a : %s\n", t);
    } else {
      put(&b, "  %%x = func.call @f%d(%%a) : (%s) -> %s\n"
              "  %%y = func.call @f%d(%%a) : (%s) -> %s\n"
              "  %%r = stablehlo.maximum %%x, %%y : %s\n",
          i + 1, t, t, i + 1, t, t, t);
    }
    put(&b, "  func.return %%r : %s\n}\n", t);
  }
  return b.s;
}

/* `open` n times, then `mid`, then `close` n times, inside `pre`/`post`. */
static char *nested_text(const char *pre, const char *open, const char *mid,
                         const char *close, const char *post, int n) {
  sbuf b = {0};
  put(&b, "%s", pre);
  for (int k = 0; k < n; k++) put(&b, "%s", open);
  put(&b, "%s", mid);
  for (int k = 0; k < n; k++) put(&b, "%s", close);
  put(&b, "%s", post);
  return b.s;
}

/* ---- running them ---- */

typedef struct run_case {
  const char *text;
  int max_depth;        /* 0: the default */
  shlo_status st;       /* what it gave */
  char message[SHLO_DIAG_MAX + 256];
  int64_t result[2];    /* main's result's first two, when st is OK */
  int64_t numel;
} run_case;

static void *run(void *arg) {
  run_case *c = arg;
  shlo_compile_limits lim = {.max_depth = c->max_depth};
  shlo_compile_opts opts = {.limits = &lim};
  shlo_module *m = NULL;
  shlo_executable *e = NULL;
  shlo_value **res = NULL;
  int n_res = 0;
  shlo_diag d;
  shlo_diag_clear(&d);
  c->st = shlo_load(c->text, strlen(c->text), "deep.mlir", &opts, &m, &e, &d);
  if (!c->st) c->st = shlo_execute(e, NULL, NULL, 0, &res, &n_res, &d);
  c->message[0] = 0;
  if (c->st) shlo_diag_format(&d, c->message, sizeof c->message);
  if (!c->st && n_res == 1) {
    c->numel = shlo_tensor_numel(res[0]);
    for (int64_t i = 0; i < 2 && i < c->numel; i++)
      c->result[i] = shlo_tensor_get_i64(res[0], i);
  }
  for (int i = 0; i < n_res; i++) shlo_value_unref(res[i]);
  free(res);
  shlo_executable_free(e);
  shlo_module_free(m);
  return NULL;
}

/* Runs text on a thread with small_stack(max_depth); frees text. */
static run_case run_small(char *text, int max_depth) {
  run_case c = {.text = text, .max_depth = max_depth};
  pthread_attr_t attr;
  pthread_t t;
  assert_int_equal(pthread_attr_init(&attr), 0);
  assert_int_equal(pthread_attr_setstacksize(&attr, small_stack(max_depth)), 0);
  assert_int_equal(pthread_create(&t, &attr, run, &c), 0);
  assert_int_equal(pthread_join(t, NULL), 0);
  pthread_attr_destroy(&attr);
  free(text);
  c.text = NULL;
  return c;
}

static void expect_ok(char *text, int max_depth) {
  run_case c = run_small(text, max_depth);
  if (c.st) fail_msg("%s: %s", shlo_status_name(c.st), c.message);
  assert_int_equal(c.numel, 2);
  assert_int_equal(c.result[0], 10);
  assert_int_equal(c.result[1], 12);
}

/* Refused with st and a message holding `want` (the limit's words). */
static void expect_refused(char *text, int max_depth, shlo_status st,
                           const char *want) {
  run_case c = run_small(text, max_depth);
  if (c.st != st || !strstr(c.message, want))
    fail_msg("%s: '%s', expected %s with '%s'", shlo_status_name(c.st),
             c.message, shlo_status_name(st), want);
}

static char *limit_words(int limit) {
  static char w[64];
  snprintf(w, sizeof w, "deeper than %d (the limit", limit);
  return w;
}

/* ---- tests ---- */

#define T2 "tensor<2xi32>" /* a static chain's type */

static void call_chain_at_the_limit_runs(void **state) {
  (void)state;
  expect_ok(chain(SHLO_DEFAULT_MAX_DEPTH, CALL, T2), 0);
  expect_ok(chain(SHLO_MAX_DEPTH_CAP, CALL, T2),
            SHLO_MAX_DEPTH_CAP);
}

static void call_chain_past_the_limit_is_refused(void **state) {
  (void)state;
  expect_refused(chain(SHLO_DEFAULT_MAX_DEPTH + 1, CALL, T2), 0,
                 SHLO_ELIMIT, limit_words(SHLO_DEFAULT_MAX_DEPTH));
  expect_refused(chain(10 * SHLO_DEFAULT_MAX_DEPTH, CALL, T2),
                 0, SHLO_ELIMIT, "call chain deeper than");
  /* a limit past the cap is the cap */
  expect_refused(chain(10 * SHLO_MAX_DEPTH_CAP, CALL, T2),
                 100 * SHLO_MAX_DEPTH_CAP, SHLO_ELIMIT,
                 limit_words(SHLO_MAX_DEPTH_CAP));
  /* the caller's own limit */
  expect_ok(chain(10, CALL, T2), 10);
  expect_refused(chain(11, CALL, T2), 10, SHLO_ELIMIT,
                 limit_words(10));
}

/* Refinement (dynamic shapes) walks calls as the compiler does. */
static void refined_call_chain(void **state) {
  (void)state;
  expect_ok(chain(SHLO_DEFAULT_MAX_DEPTH, CALL, "tensor<?xi32>"), 0);
  expect_ok(chain(SHLO_MAX_DEPTH_CAP, CALL, "tensor<?xi32>"),
            SHLO_MAX_DEPTH_CAP);
  expect_refused(chain(10 * SHLO_DEFAULT_MAX_DEPTH, CALL, "tensor<?xi32>"),
                 0, SHLO_ELIMIT, limit_words(SHLO_DEFAULT_MAX_DEPTH));
}

/* A call inside a region inside a call ...: both count. */
static void calls_within_regions(void **state) {
  (void)state;
  /* n functions: main's call, then a region and a call in each of n - 1,
   * 2n - 1 levels */
  int n = (SHLO_DEFAULT_MAX_DEPTH + 1) / 2;
  expect_ok(chain(n, CALL_IN_REGION, T2), 0);
  expect_refused(chain(n + 1, CALL_IN_REGION, T2), 0, SHLO_ELIMIT,
                 limit_words(SHLO_DEFAULT_MAX_DEPTH));
  expect_ok(chain((SHLO_MAX_DEPTH_CAP + 1) / 2, CALL_IN_REGION, T2),
            SHLO_MAX_DEPTH_CAP);
  expect_refused(chain(10 * SHLO_DEFAULT_MAX_DEPTH, CALL_IN_REGION, T2),
                 0, SHLO_ELIMIT, limit_words(SHLO_DEFAULT_MAX_DEPTH));
}

/* A composite's decomposition and a grid's programs are compiled like
 * callees (a grid chain is only refused here: each level would start a
 * grid of its own). */
static void composite_chain(void **state) {
  (void)state;
  expect_refused(chain(10 * SHLO_DEFAULT_MAX_DEPTH, GRID, T2), 0, SHLO_ELIMIT,
                 limit_words(SHLO_DEFAULT_MAX_DEPTH));
  expect_ok(chain(SHLO_DEFAULT_MAX_DEPTH, COMPOSITE, T2), 0);
  expect_refused(chain(10 * SHLO_DEFAULT_MAX_DEPTH, COMPOSITE, T2),
                 0, SHLO_ELIMIT, limit_words(SHLO_DEFAULT_MAX_DEPTH));
}

static void nested_regions_at_and_past_the_limit(void **state) {
  (void)state;
  expect_ok(nested_regions(SHLO_DEFAULT_MAX_DEPTH), 0);
  expect_ok(nested_regions(SHLO_MAX_DEPTH_CAP), SHLO_MAX_DEPTH_CAP);
  expect_refused(nested_regions(SHLO_DEFAULT_MAX_DEPTH + 1), 0, SHLO_EPARSE,
                 "regions nested deeper than 256 (the limit)");
  expect_refused(nested_regions(10 * SHLO_DEFAULT_MAX_DEPTH), 0, SHLO_EPARSE,
                 limit_words(SHLO_DEFAULT_MAX_DEPTH));
}

/* The pretty forms with regions, whose parsers have their own frames,
 * run `depth` deep under limit max_depth. */
static void pretty_forms(int depth, int max_depth) {
  run_case c = run_small(nested_whiles(depth), max_depth);
  if (c.st) fail_msg("%s: %s", shlo_status_name(c.st), c.message);
  assert_int_equal(c.numel, 1);
  assert_int_equal(c.result[0], 1);
  c = run_small(nested_reduces(depth), max_depth);
  if (c.st) fail_msg("%s: %s", shlo_status_name(c.st), c.message);
  assert_int_equal(c.result[0], 5);
  c = run_small(nested_sorts(depth), max_depth);
  if (c.st) fail_msg("%s: %s", shlo_status_name(c.st), c.message);
  assert_int_equal(c.result[0], 5);
  assert_int_equal(c.result[1], 6);
}

static void nested_pretty_forms(void **state) {
  (void)state;
  pretty_forms(SHLO_DEFAULT_MAX_DEPTH, 0);
  expect_refused(nested_whiles(10 * SHLO_DEFAULT_MAX_DEPTH), 0, SHLO_EPARSE,
                 limit_words(SHLO_DEFAULT_MAX_DEPTH));
  expect_refused(nested_reduces(10 * SHLO_DEFAULT_MAX_DEPTH), 0, SHLO_EPARSE,
                 limit_words(SHLO_DEFAULT_MAX_DEPTH));
}

static void nested_pretty_forms_at_the_cap(void **state) {
  (void)state;
  pretty_forms(SHLO_MAX_DEPTH_CAP, SHLO_MAX_DEPTH_CAP);
}

/* A callee shared by many callers is compiled once: 2^60 paths through
 * 60 functions compile at once (running them would take 2^60 calls: that
 * is the program's own work, bounded by an execution's deadline). */
static void shared_callees_compile_once(void **state) {
  (void)state;
  expect_ok(shared_callees(10), 0);
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  char *text = shared_callees(60);
  shlo_module *m = NULL;
  shlo_executable *e = NULL;
  shlo_diag d;
  assert_int_equal(shlo_load(text, strlen(text), "t.mlir", NULL, &m, &e, &d),
                   SHLO_OK);
  shlo_executable_free(e);
  shlo_module_free(m);
  free(text);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  /* 2^60 walks would never end; a generous bound for a loaded machine */
  assert_true(t1.tv_sec - t0.tv_sec < 60);
}

static void recursion_is_refused(void **state) {
  (void)state;
  char *text = strdup(
      "func.func @main() -> tensor<2xi32> {\n"
      "  %c = stablehlo.constant dense<[5, 6]> : tensor<2xi32>\n"
      "  %r = func.call @f(%c) : (tensor<2xi32>) -> tensor<2xi32>\n"
      "  func.return %r : tensor<2xi32>\n}\n"
      "func.func private @f(%a: tensor<2xi32>) -> tensor<2xi32> {\n"
      "  %r = func.call @g(%a) : (tensor<2xi32>) -> tensor<2xi32>\n"
      "  func.return %r : tensor<2xi32>\n}\n"
      "func.func private @g(%a: tensor<2xi32>) -> tensor<2xi32> {\n"
      "  %r = func.call @f(%a) : (tensor<2xi32>) -> tensor<2xi32>\n"
      "  func.return %r : tensor<2xi32>\n}\n");
  assert_non_null(text);
  expect_refused(text, 0, SHLO_EUNSUPPORTED, "recursive call to '@f'");
}

/* Types, attributes and literal brackets ten times the limit deep. */
static void nested_types_and_attributes(void **state) {
  (void)state;
  const char *w = limit_words(SHLO_DEFAULT_MAX_DEPTH);
  int n = 10 * SHLO_DEFAULT_MAX_DEPTH;
  expect_refused(nested_text("func.func @main(%a: ", "tuple<", "tensor<i32>",
                             ">", ") {\n  func.return\n}\n", n),
                 0, SHLO_EPARSE, w);
  expect_refused(nested_text("func.func @main() attributes {x = ", "{a = ",
                             "1", "}", "} {\n  func.return\n}\n", n),
                 0, SHLO_EPARSE, w);
  expect_refused(nested_text("func.func @main() attributes {x = ", "[", "1",
                             "]", "} {\n  func.return\n}\n", n),
                 0, SHLO_EPARSE, w);
  expect_refused(nested_text("func.func @main() {\n  %c = stablehlo.constant "
                             "dense<", "[", "1", "]",
                             "> : tensor<1xi32>\n  func.return\n}\n", n),
                 0, SHLO_EPARSE, w);
  expect_refused(nested_text("func.func @main(%a: tensor<", "complex<", "f32",
                             ">", ">) {\n  func.return\n}\n", n),
                 0, SHLO_EPARSE, w);
  /* an unknown op's attribute, skipped as balanced brackets */
  expect_refused(nested_text("func.func @main() {\n  \"x.y\"() {a = #x.z<",
                             "(", "", ")", ">} : () -> ()\n  func.return\n}\n",
                             n),
                 0, SHLO_EPARSE, w);
}

/* At the limit they parse (a tuple that deep is a valid type). */
static void nested_types_at_the_limit(void **state) {
  (void)state;
  run_case c = run_small(
      nested_text("func.func @main() -> tensor<2xi32> attributes {x = ",
                  "{a = ", "1", "}",
                  "} {\n  %c = stablehlo.constant dense<[5, 6]> : "
                  "tensor<2xi32>\n  %d = stablehlo.add %c, %c : "
                  "tensor<2xi32>\n  func.return %d : tensor<2xi32>\n}\n",
                  SHLO_DEFAULT_MAX_DEPTH - 1),
      0);
  if (c.st) fail_msg("%s", c.message);
  shlo_module *m = NULL;
  shlo_diag d;
  char *t = nested_text("func.func @main(%a: ", "tuple<", "tensor<i32>", ">",
                        ") {\n  func.return\n}\n",
                        SHLO_DEFAULT_MAX_DEPTH - 1);
  assert_int_equal(shlo_parse_module(t, strlen(t), "t.mlir", &m, &d), SHLO_OK);
  shlo_module_free(m);
  free(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(call_chain_at_the_limit_runs),
      cmocka_unit_test(call_chain_past_the_limit_is_refused),
      cmocka_unit_test(refined_call_chain),
      cmocka_unit_test(calls_within_regions),
      cmocka_unit_test(composite_chain),
      cmocka_unit_test(nested_regions_at_and_past_the_limit),
      cmocka_unit_test(nested_pretty_forms),
      cmocka_unit_test(nested_pretty_forms_at_the_cap),
      cmocka_unit_test(shared_callees_compile_once),
      cmocka_unit_test(recursion_is_refused),
      cmocka_unit_test(nested_types_and_attributes),
      cmocka_unit_test(nested_types_at_the_limit),
  };
  /* SHLO_DEPTH_ONLY=name runs one test (with SHLO_DEPTH_STACK_KB, to
   * measure what each needs) */
  const char *only = getenv("SHLO_DEPTH_ONLY");
  if (only) cmocka_set_test_filter(only);
  return cmocka_run_group_tests(tests, NULL, NULL);
}
