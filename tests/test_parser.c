/* SPDX-License-Identifier: Apache-2.0 */
/* The parser on hostile and wrong input: every failure is a diagnostic
 * with file:line:col, never a crash or a hang; and the IR it builds for
 * valid text is what the text says. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/value.h"
#include "shlo/engine.h"
#include "shlo/ir.h"
#include "shlo/verify.h"

static shlo_status parse(const char *text, size_t len, shlo_diag *d) {
  shlo_module *m = NULL;
  shlo_diag_clear(d);
  shlo_status st = shlo_parse_module(text, len, "t.mlir", &m, d);
  if (st == SHLO_OK) {
    assert_non_null(m);
    shlo_module_free(m);
  } else {
    assert_null(m);
  }
  return st;
}

/* Parsing fails with a message containing `want` at line:col. */
static void expect_error(const char *text, int line, int col,
                         const char *want) {
  shlo_diag d;
  assert_int_equal(parse(text, strlen(text), &d), SHLO_EPARSE);
  if (!strstr(d.message, want))
    fail_msg("message '%s' lacks '%s'", d.message, want);
  assert_string_equal(d.file, "t.mlir");
  if (d.line != line || d.col != col)
    fail_msg("'%s' reported at %d:%d, expected %d:%d", d.message, d.line,
             d.col, line, col);
}

static void empty_and_comment_only_inputs_are_empty_modules(void **state) {
  (void)state;
  shlo_module *m;
  shlo_diag d;
  assert_int_equal(shlo_parse_module("", 0, "t.mlir", &m, &d), SHLO_OK);
  assert_int_equal(shlo_module_num_funcs(m), 0);
  shlo_module_free(m);
  const char *c = "// only a comment\n\n   // another\n";
  assert_int_equal(shlo_parse_module(c, strlen(c), "t.mlir", &m, &d), SHLO_OK);
  assert_int_equal(shlo_module_num_funcs(m), 0);
  shlo_module_free(m);
  assert_int_equal(shlo_parse_module(NULL, 0, "t.mlir", &m, &d), SHLO_OK);
  shlo_module_free(m);
}

static void errors_name_the_place(void **state) {
  (void)state;
  expect_error("func.func @f() {\n  %0 = stablehlo.add %x, %x : tensor<f32>\n"
               "  func.return\n}\n",
               2, 22, "undefined value '%x'");
  expect_error("func.func @f() {\n  func.return\n", 3, 1, "'}'");
  expect_error("func.func @f() {\n  %0 = \"x.y\"() {a = \"open} : () -> ()\n}\n",
               2, 21, "unterminated string");
  expect_error("func.func @f(%a: tensor<2xq32>) {\n  func.return\n}\n", 1, 27,
               "unknown element type 'q32'");
  expect_error("garbage\n", 1, 1, "expected 'func.func'");
  expect_error("func.func @f() {\n  %0 = stablehlo.constant dense<[1, 2, 3]> :"
               " tensor<2xi32>\n  func.return\n}\n",
               2, 32, "3 elements");
  expect_error("func.func @f() {\n  %0 = stablehlo.constant dense<1.5> : "
               "tensor<i32>\n  func.return\n}\n",
               2, 33, "integer literal");
  expect_error("func.func @f() {\n  %a, %b = \"x.y\"() : () -> tensor<f32>\n"
               "  func.return\n}\n",
               2, 3, "2 result names");
  expect_error("func.func @f() {}\nfunc.func @f() {}\n", 2, 11,
               "defined twice");
}

static void generic_op_types_must_match_operands(void **state) {
  (void)state;
  expect_error("func.func @f(%a: tensor<2xf32>) {\n"
               "  %0 = \"stablehlo.abs\"(%a) : (tensor<3xf32>) -> "
               "tensor<3xf32>\n  func.return\n}\n",
               2, 8, "operand 0");
}

static void deep_nesting_is_refused_not_overflowed(void **state) {
  (void)state;
  const char *head = "func.func @f() {\n  %0 = stablehlo.constant dense<";
  size_t n = 100u << 20; /* 100 MB of '[' */
  size_t hl = strlen(head);
  char *text = malloc(hl + n);
  assert_non_null(text);
  memcpy(text, head, hl);
  memset(text + hl, '[', n);
  shlo_diag d;
  assert_int_equal(parse(text, hl + n, &d), SHLO_EPARSE);
  assert_non_null(strstr(d.message, "nested deeper than 256 (the limit)"));
  /* The same bytes alone, and inside an attribute dictionary. */
  assert_int_equal(parse(text + hl, n, &d), SHLO_EPARSE);
  const char *attr = "func.func @f() attributes {a = ";
  memcpy(text + hl - strlen(attr), attr, strlen(attr));
  assert_int_equal(parse(text + hl - strlen(attr), strlen(attr) + n, &d),
                   SHLO_EPARSE);
  free(text);
}

static void nul_bytes_and_binary_garbage_are_errors(void **state) {
  (void)state;
  const char with_nul[] = "func.func @f() {\n  func.return\0\n}\n";
  shlo_diag d;
  assert_int_equal(parse(with_nul, sizeof with_nul - 1, &d), SHLO_EPARSE);
  srand(7);
  char buf[4096];
  for (int round = 0; round < 2000; round++) {
    size_t n = (size_t)(rand() % (int)sizeof buf);
    for (size_t i = 0; i < n; i++) buf[i] = (char)rand();
    shlo_status st = parse(buf, n, &d);
    assert_true(st == SHLO_OK || st == SHLO_EPARSE);
  }
}

/* Random single-byte mutations of a valid program: whatever comes out,
 * the parser returns OK or a located error. */
static void mutated_programs_never_crash(void **state) {
  (void)state;
  static const char prog[] =
      "module @m attributes {mhlo.num_replicas = 1 : i32} {\n"
      "func.func public @main(%a: tensor<2x3xf32> {jax.arg = \"x\"}) -> "
      "tensor<3x2xf32> {\n"
      "  %c = stablehlo.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : "
      "tensor<2x3xf32>\n"
      "  %0 = stablehlo.add %a, %c : tensor<2x3xf32>\n"
      "  %1 = stablehlo.transpose %0, dims = [1, 0] : (tensor<2x3xf32>) -> "
      "tensor<3x2xf32>\n"
      "  %2:2 = stablehlo.while(%i = %1, %j = %1) : tensor<3x2xf32>, "
      "tensor<3x2xf32>\n"
      "  cond {\n"
      "    %p = stablehlo.compare LT, %i, %j, FLOAT : (tensor<3x2xf32>, "
      "tensor<3x2xf32>) -> tensor<3x2xi1>\n"
      "    %q = stablehlo.reduce(%p init: %t) applies stablehlo.or across "
      "dimensions = [0, 1] : (tensor<3x2xi1>, tensor<i1>) -> tensor<i1>\n"
      "    stablehlo.return %q : tensor<i1>\n"
      "  } do {\n"
      "    stablehlo.return %i, %j : tensor<3x2xf32>, tensor<3x2xf32>\n"
      "  }\n"
      "  %3 = \"stablehlo.slice\"(%2#0) {start_indices = array<i64: 0, 0>, "
      "limit_indices = array<i64: 3, 2>, strides = array<i64: 1, 1>} : "
      "(tensor<3x2xf32>) -> tensor<3x2xf32>\n"
      "  func.return %3 : tensor<3x2xf32>\n"
      "}\n}\n";
  static const char alphabet[] = "%@#!<>()[]{},:=\"x0-.^ \nabf";
  char buf[sizeof prog];
  srand(11);
  shlo_diag d;
  for (int round = 0; round < 5000; round++) {
    memcpy(buf, prog, sizeof prog);
    int edits = 1 + rand() % 3;
    for (int e = 0; e < edits; e++)
      buf[rand() % (int)(sizeof prog - 1)] =
          alphabet[rand() % (int)(sizeof alphabet - 1)];
    size_t len = (size_t)(rand() % (int)sizeof prog);
    shlo_status st = parse(buf, len, &d);
    assert_true(st == SHLO_OK || st == SHLO_EPARSE);
    if (st) assert_true(d.line >= 1 && d.col >= 1);
  }
}

static void pretty_and_generic_forms_build_the_same_ir(void **state) {
  (void)state;
  const char *pretty =
      "func.func @f(%a: tensor<2x3xf32>) -> tensor<3x2xf32> {\n"
      "  %0 = stablehlo.transpose %a, dims = [1, 0] : (tensor<2x3xf32>) -> "
      "tensor<3x2xf32>\n"
      "  func.return %0 : tensor<3x2xf32>\n}\n";
  const char *generic =
      "func.func @f(%a: tensor<2x3xf32>) -> tensor<3x2xf32> {\n"
      "  %0 = \"stablehlo.transpose\"(%a) {permutation = array<i64: 1, 0>} : "
      "(tensor<2x3xf32>) -> tensor<3x2xf32>\n"
      "  \"func.return\"(%0) : (tensor<3x2xf32>) -> ()\n}\n";
  shlo_module *m1, *m2;
  shlo_diag d;
  assert_int_equal(shlo_parse_module(pretty, strlen(pretty), "p", &m1, &d), 0);
  assert_int_equal(shlo_parse_module(generic, strlen(generic), "g", &m2, &d), 0);
  char *p1 = shlo_module_print(m1), *p2 = shlo_module_print(m2);
  assert_string_equal(p1, p2);
  const shlo_op *op = shlo_module_func(m1, 0)->body->ops[0];
  int64_t perm[4];
  assert_int_equal(shlo_attr_i64s(shlo_op_attr(op, "permutation"), perm, 4), 2);
  assert_int_equal(perm[0], 1);
  assert_int_equal(perm[1], 0);
  free(p1);
  free(p2);
  shlo_module_free(m1);
  shlo_module_free(m2);
}

static void dense_literals_decode_per_type(void **state) {
  (void)state;
  const char *text =
      "func.func @f() {\n"
      "  %0 = stablehlo.constant dense<[0x7FC00000, -0.0, 1.5]> : "
      "tensor<3xf32>\n"
      "  %1 = stablehlo.constant dense<\"0x0100000002000000\"> : "
      "tensor<2xi32>\n"
      "  %2 = stablehlo.constant dense<(1.0, -2.0)> : tensor<2xcomplex<f64>>\n"
      "  %3 = stablehlo.constant dense<[true, false]> : tensor<2xi1>\n"
      "  %4 = stablehlo.constant dense<18446744073709551615> : tensor<ui64>\n"
      "  %5 = stablehlo.constant dense<-8> : tensor<i4>\n"
      "  func.return\n}\n";
  shlo_module *m;
  shlo_diag d;
  assert_int_equal(shlo_parse_module(text, strlen(text), "t", &m, &d), 0);
  const shlo_block *b = shlo_module_func(m, 0)->body;
  const shlo_value *v0 = shlo_op_attr(b->ops[0], "value")->dense;
  uint32_t bits;
  memcpy(&bits, v0->data, 4);
  assert_int_equal(bits, 0x7FC00000u);
  memcpy(&bits, (char *)v0->data + 4, 4);
  assert_int_equal(bits, 0x80000000u);
  const shlo_value *v1 = shlo_op_attr(b->ops[1], "value")->dense;
  assert_int_equal(shlo_tensor_get_i64(v1, 1), 2);
  const shlo_value *v2 = shlo_op_attr(b->ops[2], "value")->dense;
  double re, im;
  shlo_tensor_get_c128(v2, 1, &re, &im);
  assert_true(re == 1.0 && im == -2.0);
  const shlo_value *v3 = shlo_op_attr(b->ops[3], "value")->dense;
  assert_int_equal(shlo_tensor_get_i64(v3, 0), 1);
  assert_int_equal(shlo_tensor_get_i64(v3, 1), 0);
  const shlo_value *v4 = shlo_op_attr(b->ops[4], "value")->dense;
  assert_true((uint64_t)shlo_tensor_get_i64(v4, 0) == UINT64_MAX);
  const shlo_value *v5 = shlo_op_attr(b->ops[5], "value")->dense;
  assert_int_equal(shlo_tensor_get_i64(v5, 0), -8);
  shlo_module_free(m);
}

/* The first element of a one-constant program's literal, read as int64. */
static int64_t const_elem(const char *literal, int64_t i) {
  char text[512];
  snprintf(text, sizeof text,
           "func.func @f() {\n  %%0 = stablehlo.constant %s\n"
           "  func.return\n}\n", literal);
  shlo_module *m;
  shlo_diag d;
  if (shlo_parse_module(text, strlen(text), "t", &m, &d) != SHLO_OK)
    fail_msg("%s: %s", literal, d.message);
  const shlo_value *v =
      shlo_op_attr(shlo_module_func(m, 0)->body->ops[0], "value")->dense;
  int64_t x = shlo_tensor_get_i64(v, i);
  shlo_module_free(m);
  return x;
}

/* MLIR reads integer literals in decimal whatever their leading zeros
 * (`08` is eight: a C parser's octal reading made it 0, a silent wrong
 * answer), in hex after 0x, and refuses values outside the type. */
static void integer_literals_read_as_mlir_does(void **state) {
  (void)state;
  const char *grid = "dense<[[01, 02, 03, 04], [05, 06, 07, 08], "
                     "[09, 10, 11, 12]]> : tensor<3x4xi32>";
  for (int i = 0; i < 12; i++) assert_int_equal(const_elem(grid, i), i + 1);
  assert_int_equal(const_elem("dense<[-007, +010, 0x1F, -0x10]> : "
                              "tensor<4xi64>", 0), -7);
  assert_int_equal(const_elem("dense<[-007, +010, 0x1F, -0x10]> : "
                              "tensor<4xi64>", 1), 10);
  assert_int_equal(const_elem("dense<[-007, +010, 0x1F, -0x10]> : "
                              "tensor<4xi64>", 2), 31);
  assert_int_equal(const_elem("dense<[-007, +010, 0x1F, -0x10]> : "
                              "tensor<4xi64>", 3), -16);
  /* Signless i8 takes its bits either way: 255 is -1. */
  assert_int_equal(const_elem("dense<255> : tensor<i8>", 0), -1);
  assert_int_equal(const_elem("dense<-128> : tensor<i8>", 0), -128);
  assert_int_equal(const_elem("dense<255> : tensor<ui8>", 0), 255);
  assert_int_equal(const_elem("dense<[0, 1]> : tensor<2xi1>", 1), 1);
  assert_int_equal(const_elem("dense<09> : tensor<1xi32>", 0), 9);
  /* array<i64: ...> attributes use the same reader. */
  const char *slice =
      "func.func @f(%a: tensor<10xf32>) -> tensor<2xf32> {\n"
      "  %0 = stablehlo.slice %a [08:010] : (tensor<10xf32>) -> tensor<2xf32>\n"
      "  func.return %0 : tensor<2xf32>\n}\n";
  shlo_module *m;
  shlo_diag d;
  assert_int_equal(shlo_parse_module(slice, strlen(slice), "t", &m, &d),
                   SHLO_OK);
  const shlo_attr *start =
      shlo_op_attr(shlo_module_func(m, 0)->body->ops[0], "start_indices");
  assert_non_null(start);
  assert_int_equal(start->ints[0], 8);
  shlo_module_free(m);
}

static void integer_literals_out_of_range_are_errors(void **state) {
  (void)state;
  expect_error("func.func @f() {\n"
               "  %0 = stablehlo.constant dense<256> : tensor<i8>\n}\n",
               2, 33, "256 is out of range for i8");
  expect_error("func.func @f() {\n"
               "  %0 = stablehlo.constant dense<-129> : tensor<i8>\n}\n",
               2, 33, "-129 is out of range for i8");
  expect_error("func.func @f() {\n"
               "  %0 = stablehlo.constant dense<-1> : tensor<ui32>\n}\n",
               2, 33, "-1 is out of range for ui32");
  expect_error("func.func @f() {\n"
               "  %0 = stablehlo.constant dense<[0, 2]> : tensor<2xi1>\n}\n",
               2, 37, "2 is out of range for i1");
  expect_error("func.func @f() {\n"
               "  %0 = stablehlo.constant dense<16> : tensor<ui4>\n}\n",
               2, 33, "16 is out of range for ui4");
  expect_error("func.func @f() {\n"
               "  %0 = stablehlo.constant dense<99999999999999999999> : "
               "tensor<i64>\n}\n",
               2, 33, "does not fit in 64 bits");
}

static void values_parse_for_run_args(void **state) {
  (void)state;
  shlo_value **v;
  int n;
  shlo_diag d;
  const char *ok = "[dense<[1, 2]> : tensor<2xi32>, dense<2.5> : tensor<f64>]";
  assert_int_equal(shlo_parse_values(ok, strlen(ok), &v, &n, &d), SHLO_OK);
  assert_int_equal(n, 2);
  assert_int_equal(shlo_tensor_get_i64(v[0], 1), 2);
  assert_true(shlo_tensor_get_f64(v[1], 0) == 2.5);
  for (int i = 0; i < n; i++) shlo_value_unref(v[i]);
  free(v);
  const char *bad = "[4.0 : f32]";
  assert_int_equal(shlo_parse_values(bad, strlen(bad), &v, &n, &d),
                   SHLO_EPARSE);
  assert_non_null(strstr(d.message, "dense"));
}

/* Text that ends inside a dense literal, right after a comma, is an error
 * and reads nothing past its end (the text need not be NUL-terminated:
 * the copy here has no byte after it; fuzz_mlir found the overread). */
static void text_ending_in_a_literal_is_an_error(void **state) {
  (void)state;
  const char *src = "func.func @main() -> tensor<2xi64> {\n"
                    "  %0 = stablehlo.constant dense<[[0, ";
  size_t n = strlen(src);
  char *text = malloc(n);
  assert_non_null(text);
  memcpy(text, src, n);
  shlo_module *m = NULL;
  shlo_diag d;
  shlo_diag_clear(&d);
  assert_int_equal(shlo_parse_module(text, n, "t.mlir", &m, &d), SHLO_EPARSE);
  assert_null(m);
  free(text);
}

/* A parse within limits: more ops than max_ops is SHLO_ELIMIT, naming the
 * place; a canceled parse is SHLO_ECANCELED; no limits parse as before. */
static void parse_limits_refuse_big_programs(void **state) {
  (void)state;
  const char *src = "func.func @main(%a: tensor<f32>) -> tensor<f32> {\n"
                    "  %0 = stablehlo.add %a, %a : tensor<f32>\n"
                    "  %1 = stablehlo.add %0, %a : tensor<f32>\n"
                    "  %2 = stablehlo.add %1, %a : tensor<f32>\n"
                    "  return %2 : tensor<f32>\n}\n";
  shlo_module *m = NULL;
  shlo_diag d;
  shlo_compile_limits lim = {.max_ops = 3};
  shlo_diag_clear(&d);
  assert_int_equal(shlo_parse_module_limited(src, strlen(src), "t", &lim, &m,
                                             &d), SHLO_ELIMIT);
  assert_null(m);
  assert_int_equal(d.line, 5); /* the fourth op, the return */
  assert_non_null(strstr(d.message, "more than 3 ops"));
  lim.max_ops = 4;
  assert_int_equal(shlo_parse_module_limited(src, strlen(src), "t", &lim, &m,
                                             &d), SHLO_OK);
  /* The verifier and the compiler count the same ops. */
  shlo_compile_limits three = {.max_ops = 3};
  shlo_verify_opts vo = {.limits = &three};
  assert_int_equal(shlo_verify_module_first(m, &vo, &d), SHLO_ELIMIT);
  shlo_compile_opts co = {.verified = true, .limits = &three};
  shlo_executable *e = NULL;
  assert_int_equal(shlo_compile(m, &co, &e, &d), SHLO_ELIMIT);
  assert_null(e);
  co.limits = &lim;
  assert_int_equal(shlo_compile(m, &co, &e, &d), SHLO_OK);
  shlo_executable_free(e);
  shlo_module_free(m);
  /* Past the deadline or canceled: checked every SHLO_LIMITS_EVERY ops, so
   * a program of that many ops sees it. */
  char *big = malloc(64 * 300 + 200), *w = big;
  assert_non_null(big);
  w += sprintf(w, "func.func @main(%%a: tensor<f32>) -> tensor<f32> {\n");
  for (int i = 0; i < 300; i++)
    w += sprintf(w, "  %%%d = stablehlo.negate %%a : tensor<f32>\n", i);
  w += sprintf(w, "  return %%a : tensor<f32>\n}\n");
  shlo_compile_limits late = {.deadline_ns = shlo_monotonic_ns() - 1};
  assert_int_equal(shlo_parse_module_limited(big, strlen(big), "t", &late,
                                             &m, &d), SHLO_ELIMIT);
  assert_non_null(strstr(d.message, "deadline"));
  shlo_cancel cancel = {1};
  shlo_compile_limits stop = {.cancel = &cancel};
  assert_int_equal(shlo_parse_module_limited(big, strlen(big), "t", &stop,
                                             &m, &d), SHLO_ECANCELED);
  free(big);
}

/* String escapes decode as MLIR's do: \n, \t, \", \\ and two hex digits
 * (one byte, high digit first). */
static void string_escapes_decode(void **state) {
  (void)state;
  const char *text =
      "func.func @f() {\n"
      "  \"x.y\"() {s = \"a\\41\\7e\\n\\t\\\"\\\\\\0Az\"} : () -> ()\n"
      "  func.return\n}\n";
  shlo_module *m;
  shlo_diag d;
  assert_int_equal(shlo_parse_module(text, strlen(text), "t.mlir", &m, &d),
                   SHLO_OK);
  const char *got =
      shlo_attr_get_str(
          shlo_op_attr(shlo_module_func(m, 0)->body->ops[0], "s"));
  assert_non_null(got);
  assert_string_equal(got, "aA~\n\t\"\\\nz");
  shlo_module_free(m);
}

/* A dimension too large for int64 is an error at its first digit, not a
 * wrapped (negative or small) size. */
static void huge_dimensions_are_errors(void **state) {
  (void)state;
  expect_error("func.func @f(%a: tensor<99999999999999999999xf32>) {\n"
               "  func.return\n}\n", 1, 25, "dimension too large");
  expect_error("func.func @f(%a: tensor<2x9223372036854775808xf32>) {\n"
               "  func.return\n}\n", 1, 27, "dimension too large");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(empty_and_comment_only_inputs_are_empty_modules),
      cmocka_unit_test(errors_name_the_place),
      cmocka_unit_test(generic_op_types_must_match_operands),
      cmocka_unit_test(deep_nesting_is_refused_not_overflowed),
      cmocka_unit_test(nul_bytes_and_binary_garbage_are_errors),
      cmocka_unit_test(mutated_programs_never_crash),
      cmocka_unit_test(pretty_and_generic_forms_build_the_same_ir),
      cmocka_unit_test(dense_literals_decode_per_type),
      cmocka_unit_test(integer_literals_read_as_mlir_does),
      cmocka_unit_test(integer_literals_out_of_range_are_errors),
      cmocka_unit_test(values_parse_for_run_args),
      cmocka_unit_test(text_ending_in_a_literal_is_an_error),
      cmocka_unit_test(parse_limits_refuse_big_programs),
      cmocka_unit_test(string_escapes_decode),
      cmocka_unit_test(huge_dimensions_are_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
