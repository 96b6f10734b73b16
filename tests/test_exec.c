/* SPDX-License-Identifier: Apache-2.0 */
/* The compiler and executor: plans, liveness, arguments, control flow,
 * deadlines and cancellation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "core/value.h"
#include "harness.h"
#include "shlo/profile.h"

typedef struct compiled {
  shlo_module *m;
  shlo_executable *e;
} compiled;

static compiled compile_text(const char *text) {
  compiled c = {0};
  shlo_diag d;
  shlo_status st = shlo_parse_module(text, strlen(text), "t.mlir", &c.m, &d);
  if (st) fail_msg("parse: %s", d.message);
  st = shlo_compile(c.m, NULL, &c.e, &d);
  if (st) fail_msg("compile: %s", d.message);
  return c;
}

static void release(compiled *c) {
  shlo_executable_free(c->e);
  shlo_module_free(c->m);
}

static const char *chain =
    "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
    "  %0 = stablehlo.add %a, %a : tensor<4xf32>\n"
    "  %1 = stablehlo.multiply %0, %0 : tensor<4xf32>\n"
    "  %2 = stablehlo.negate %1 : tensor<4xf32>\n"
    "  func.return %2 : tensor<4xf32>\n}\n";

/* Each value is freed right after its last use: slot 1 (%0) dies at the
 * multiply, slot 2 (%1) at the negate; the result slot is never freed. */
static void plans_free_values_after_last_use(void **state) {
  (void)state;
  compiled c = compile_text(chain);
  char *text = harness_explain(c.e);
  assert_non_null(strstr(text, "plan main: 1 args, 4 slots, 3 steps, results [3]"));
  assert_non_null(strstr(text, "0: stablehlo.add (0, 0) -> (1) free [0]"));
  assert_non_null(strstr(text, "1: stablehlo.multiply (1, 1) -> (2) free [1]"));
  assert_non_null(strstr(text, "2: stablehlo.negate (2) -> (3) free [2]"));
  free(text);
  release(&c);
}

static void arguments_are_checked_and_results_returned(void **state) {
  (void)state;
  compiled c = compile_text(chain);
  shlo_diag d;
  shlo_value **res;
  int n;
  int64_t four = 4, three = 3;
  shlo_value *a = shlo_tensor_new(SHLO_F32, 1, &four);
  for (int i = 0; i < 4; i++) ((float *)a->data)[i] = (float)i;
  assert_int_equal(shlo_execute(c.e, NULL, &a, 1, &res, &n, &d), SHLO_OK);
  assert_int_equal(n, 1);
  assert_true(((float *)res[0]->data)[3] == -36.0f);
  /* The argument is borrowed: still ours, unchanged. */
  assert_true(((float *)a->data)[3] == 3.0f);
  shlo_value_unref(res[0]);
  free(res);
  assert_int_equal(shlo_execute(c.e, NULL, NULL, 0, &res, &n, &d), SHLO_EINPUT);
  assert_non_null(strstr(d.message, "takes 1 arguments"));
  shlo_value *wrong = shlo_tensor_new(SHLO_F32, 1, &three);
  assert_int_equal(shlo_execute(c.e, NULL, &wrong, 1, &res, &n, &d),
                   SHLO_EINPUT);
  assert_non_null(strstr(d.message, "tensor<4xf32>"));
  shlo_value_unref(wrong);
  shlo_value_unref(a);
  release(&c);
}

static void regions_capture_outer_values(void **state) {
  (void)state;
  assert_int_equal(
      harness_run(PROG(
          "  %k = stablehlo.constant dense<3> : tensor<i64>\n"
          "  %z = stablehlo.constant dense<0> : tensor<i64>\n"
          "  %r:2 = stablehlo.while(%i = %z, %s = %z) : tensor<i64>, "
          "tensor<i64>\n"
          "  cond {\n"
          "    %c = stablehlo.compare LT, %i, %k : (tensor<i64>, tensor<i64>) "
          "-> tensor<i1>\n"
          "    stablehlo.return %c : tensor<i1>\n"
          "  } do {\n"
          "    %one = stablehlo.constant dense<1> : tensor<i64>\n"
          "    %i2 = stablehlo.add %i, %one : tensor<i64>\n"
          "    %s2 = stablehlo.add %s, %k : tensor<i64>\n"
          "    stablehlo.return %i2, %s2 : tensor<i64>, tensor<i64>\n"
          "  }\n"
          "  %p = stablehlo.compare GT, %r#1, %k : (tensor<i64>, tensor<i64>) "
          "-> tensor<i1>\n"
          "  %x = \"stablehlo.if\"(%p) ({\n"
          "    stablehlo.return %r#1 : tensor<i64>\n"
          "  }, {\n"
          "    stablehlo.return %k : tensor<i64>\n"
          "  }) : (tensor<i1>) -> tensor<i64>\n"
          "  check.expect_eq_const %x, dense<9> : tensor<i64>\n"),
          false),
      SHLO_OK);
}

/* A loop of scalars runs in registers; its body returns arguments as
 * they are and in another order, its values are of different sizes, and
 * its cond and body read a value from outside. */
static void scalar_loops_swap_and_pass_arguments(void **state) {
  (void)state;
  assert_int_equal(
      harness_run(PROG(
          "  %n = stablehlo.constant dense<5> : tensor<i32>\n"
          "  %k = stablehlo.constant dense<0.25> : tensor<f64>\n"
          "  %i0 = stablehlo.constant dense<0> : tensor<i32>\n"
          "  %a0 = stablehlo.constant dense<1.5> : tensor<f32>\n"
          "  %b0 = stablehlo.constant dense<-2.0> : tensor<f32>\n"
          "  %f0 = stablehlo.constant dense<false> : tensor<i1>\n"
          "  %s0 = stablehlo.constant dense<1.0> : tensor<f64>\n"
          "  %c0 = stablehlo.constant dense<-7> : tensor<i8>\n"
          "  %r:6 = stablehlo.while(%i = %i0, %a = %a0, %b = %b0, %f = %f0, "
          "%s = %s0, %c = %c0) : tensor<i32>, tensor<f32>, tensor<f32>, "
          "tensor<i1>, tensor<f64>, tensor<i8>\n"
          "  cond {\n"
          "    %lt = stablehlo.compare LT, %i, %n : (tensor<i32>, "
          "tensor<i32>) -> tensor<i1>\n"
          "    stablehlo.return %lt : tensor<i1>\n"
          "  } do {\n"
          "    %one = stablehlo.constant dense<1> : tensor<i32>\n"
          "    %i2 = stablehlo.add %i, %one : tensor<i32>\n"
          "    %f2 = stablehlo.not %f : tensor<i1>\n"
          "    %s2 = stablehlo.add %s, %k : tensor<f64>\n"
          "    stablehlo.return %i2, %b, %a, %f2, %s2, %c : tensor<i32>, "
          "tensor<f32>, tensor<f32>, tensor<i1>, tensor<f64>, tensor<i8>\n"
          "  }\n"
          "  check.expect_eq_const %r#0, dense<5> : tensor<i32>\n"
          "  check.expect_eq_const %r#1, dense<-2.0> : tensor<f32>\n"
          "  check.expect_eq_const %r#2, dense<1.5> : tensor<f32>\n"
          "  check.expect_eq_const %r#3, dense<true> : tensor<i1>\n"
          "  check.expect_eq_const %r#4, dense<2.25> : tensor<f64>\n"
          "  check.expect_eq_const %r#5, dense<-7> : tensor<i8>\n"),
          false),
      SHLO_OK);
}

static void calls_run_callee_plans(void **state) {
  (void)state;
  const char *text =
      "func.func @twice(%a: tensor<2xi32>) -> tensor<2xi32> {\n"
      "  %0 = stablehlo.add %a, %a : tensor<2xi32>\n"
      "  func.return %0 : tensor<2xi32>\n}\n"
      "func.func @main() {\n"
      "  %c = stablehlo.constant dense<[1, -2]> : tensor<2xi32>\n"
      "  %0 = func.call @twice(%c) : (tensor<2xi32>) -> tensor<2xi32>\n"
      "  %1 = call @twice(%0) : (tensor<2xi32>) -> tensor<2xi32>\n"
      "  check.expect_eq_const %1, dense<[4, -8]> : tensor<2xi32>\n"
      "  func.return\n}\n";
  assert_int_equal(harness_run(text, false), SHLO_OK);
  const char *rec =
      "func.func @main() {\n"
      "  func.call @main() : () -> ()\n"
      "  func.return\n}\n";
  assert_int_equal(harness_run(rec, true), SHLO_EUNSUPPORTED);
}

static const char *endless =
    "func.func @main() -> tensor<i64> {\n"
    "  %z = stablehlo.constant dense<0> : tensor<i64>\n"
    "  %r = stablehlo.while(%i = %z) : tensor<i64>\n"
    "  cond {\n"
    "    %t = stablehlo.constant dense<true> : tensor<i1>\n"
    "    stablehlo.return %t : tensor<i1>\n"
    "  } do {\n"
    "    %one = stablehlo.constant dense<1> : tensor<i64>\n"
    "    %i2 = stablehlo.add %i, %one : tensor<i64>\n"
    "    stablehlo.return %i2 : tensor<i64>\n"
    "  }\n"
    "  func.return %r : tensor<i64>\n}\n";

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void a_deadline_stops_an_endless_loop(void **state) {
  (void)state;
  compiled c = compile_text(endless);
  shlo_exec_opts opts = {.timeout_s = 0.2};
  shlo_diag d;
  shlo_value **res;
  int n;
  double t0 = now();
  assert_int_equal(shlo_execute(c.e, &opts, NULL, 0, &res, &n, &d),
                   SHLO_ETIMEOUT);
  assert_true(now() - t0 < 2.0);
  assert_non_null(strstr(d.message, "stablehlo.while"));
  assert_int_equal(d.line, 3);
  release(&c);
}

static void a_set_cancel_flag_stops_execution(void **state) {
  (void)state;
  compiled c = compile_text(endless);
  shlo_cancel cancel;
  shlo_cancel_set(&cancel, 1);
  shlo_exec_opts opts = {.cancel = &cancel};
  shlo_diag d;
  shlo_value **res;
  int n;
  shlo_status st = shlo_execute(c.e, &opts, NULL, 0, &res, &n, &d);
  /* the loop's own check says why it stopped, not just that it did */
  assert_int_equal(st, SHLO_ECANCELED);
  release(&c);
}

static void unknown_ops_are_named_not_run(void **state) {
  (void)state;
  shlo_module *m;
  shlo_executable *e;
  shlo_diag d;
  const char *text =
      PROG("  %0 = \"mydialect.frobnicate\"() : () -> tensor<f32>\n");
  assert_int_equal(shlo_parse_module(text, strlen(text), "t.mlir", &m, &d), 0);
  assert_int_equal(shlo_compile(m, NULL, &e, &d), SHLO_EUNSUPPORTED);
  assert_non_null(strstr(d.message, "mydialect.frobnicate"));
  assert_int_equal(d.line, 2);
  shlo_module_free(m);
}

static void failed_checks_say_which_element(void **state) {
  (void)state;
  shlo_module *m;
  shlo_executable *e;
  shlo_diag d;
  shlo_value **res;
  int n;
  const char *text =
      PROG("  %0 = stablehlo.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>\n"
           "  check.expect_almost_eq_const %0, dense<[1.0, 2.0, 3.5]> : "
           "tensor<3xf32>\n");
  assert_int_equal(shlo_parse_module(text, strlen(text), "t.mlir", &m, &d), 0);
  assert_int_equal(shlo_compile(m, NULL, &e, &d), 0);
  assert_int_equal(shlo_execute(e, NULL, NULL, 0, &res, &n, &d), SHLO_ECHECK);
  assert_non_null(strstr(d.message, "element 2: got 3.0, expected 3.5"));
  shlo_executable_free(e);
  shlo_module_free(m);
}

/* Tensors alive at once are charged against max_bytes: a program whose
 * intermediates need 8 MB fails under a 4 MB limit with SHLO_ELIMIT and
 * runs under 64 MB; its results outlive the execution's budget. */
static void a_memory_limit_refuses_big_executions(void **state) {
  (void)state;
  compiled c = compile_text(
      "func.func @main() -> tensor<f32> {\n"
      "  %x = stablehlo.iota dim = 0 : tensor<1048576xf32>\n"
      "  %y = stablehlo.iota dim = 0 : tensor<1048576xf32>\n"
      "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %s = stablehlo.reduce(%x init: %z) applies stablehlo.add across "
      "dimensions = [0] : (tensor<1048576xf32>, tensor<f32>) -> tensor<f32>\n"
      "  %t = stablehlo.reduce(%y init: %z) applies stablehlo.add across "
      "dimensions = [0] : (tensor<1048576xf32>, tensor<f32>) -> tensor<f32>\n"
      "  %r = stablehlo.add %s, %t : tensor<f32>\n"
      "  func.return %r : tensor<f32>\n}\n");
  shlo_diag d;
  shlo_value **res;
  int n;
  shlo_exec_opts tight = {.max_bytes = 4 << 20};
  assert_int_equal(shlo_execute(c.e, &tight, NULL, 0, &res, &n, &d),
                   SHLO_ELIMIT);
  assert_non_null(strstr(d.message, "memory limit of 4194304 bytes"));
  assert_non_null(strstr(d.message, "stablehlo.iota"));
  shlo_exec_opts roomy = {.max_bytes = 64 << 20};
  assert_int_equal(shlo_execute(c.e, &roomy, NULL, 0, &res, &n, &d), SHLO_OK);
  assert_int_equal(n, 1);
  shlo_value_unref(res[0]); /* after the execution's budget is released */
  free(res);
  release(&c);
}

/* A profile counts each step's calls and time. */
static void profiles_count_every_step(void **state) {
  (void)state;
  compiled c = compile_text(chain);
  shlo_profile *prof = shlo_profile_new();
  assert_non_null(prof);
  shlo_exec_opts o = {.profile = prof};
  int64_t four = 4;
  shlo_value *a = shlo_tensor_new(SHLO_F32, 1, &four);
  for (int run = 0; run < 3; run++) {
    shlo_value **res;
    int n;
    shlo_diag d;
    assert_int_equal(shlo_execute(c.e, &o, &a, 1, &res, &n, &d), SHLO_OK);
    shlo_value_unref(res[0]);
    free(res);
  }
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  shlo_profile_print(prof, f, 10);
  fclose(f);
  assert_non_null(strstr(buf, "stablehlo.multiply"));
  assert_non_null(strstr(buf, "stablehlo.negate"));
  /* line 3 of the program, 3 calls */
  assert_non_null(strstr(buf, "3          3"));
  free(buf);
  shlo_profile_free(prof);
  shlo_value_unref(a);
  release(&c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(plans_free_values_after_last_use),
      cmocka_unit_test(arguments_are_checked_and_results_returned),
      cmocka_unit_test(regions_capture_outer_values),
      cmocka_unit_test(scalar_loops_swap_and_pass_arguments),
      cmocka_unit_test(calls_run_callee_plans),
      cmocka_unit_test(a_deadline_stops_an_endless_loop),
      cmocka_unit_test(a_set_cancel_flag_stops_execution),
      cmocka_unit_test(unknown_ops_are_named_not_run),
      cmocka_unit_test(failed_checks_say_which_element),
      cmocka_unit_test(a_memory_limit_refuses_big_executions),
      cmocka_unit_test(profiles_count_every_step),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
