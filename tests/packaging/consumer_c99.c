/* SPDX-License-Identifier: Apache-2.0 */
/* A C99 program outside the project, built only from the installed
 * headers with `gcc -std=c99 -Wall -Werror -pedantic` and pkg-config (see
 * languages.sh): parses, verifies, compiles and runs a program through the
 * opaque value API, reads the result with the accessors, checks the op
 * codes and the cancel flag, and frees everything (valgrind checks that).
 * Its programs compile and run in a context of one thread whose allocator
 * counts: when the context is destroyed every byte has come back.
 * Its C++17 twin is consumer_cxx.cc. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <shlo/context.h>
#include <shlo/engine.h>
#include <shlo/ir.h>
#include <shlo/limits.h>
#include <shlo/tensor.h>
#include <shlo/verify.h>

static const char program[] =
    "func.func @main(%x: tensor<2x3xf32>, %y: tensor<3x2xf32>)"
    " -> tensor<2x2xf32> {\n"
    "  %d = stablehlo.dot_general %x, %y, contracting_dims = [1] x [0] :"
    " (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>\n"
    "  %t = stablehlo.transpose %d, dims = [1, 0] :"
    " (tensor<2x2xf32>) -> tensor<2x2xf32>\n"
    "  func.return %t : tensor<2x2xf32>\n"
    "}\n";

/* Runs until canceled: the cancel flag's check. */
static const char endless[] =
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

static int failures;
static shlo_context *ctx;

/* The context's allocator: each block carries its size in front, so the
 * bytes outstanding are known at every moment. */
static long long live_bytes, n_allocs;

static void *count_alloc(void *user, size_t n) {
  (void)user;
  size_t *p = (size_t *)malloc(sizeof(size_t) * 2 + n);
  if (!p) return NULL;
  p[0] = n;
  live_bytes += (long long)n;
  n_allocs++;
  return p + 2;
}

static void count_free(void *user, void *q) {
  (void)user;
  if (!q) return;
  size_t *p = (size_t *)q - 2;
  live_bytes -= (long long)p[0];
  free(p);
}

static void *count_realloc(void *user, void *q, size_t n) {
  if (!q) return count_alloc(user, n);
  size_t *p = (size_t *)q - 2;
  size_t old = p[0];
  size_t *g = (size_t *)realloc(p, sizeof(size_t) * 2 + n);
  if (!g) return NULL;
  g[0] = n;
  live_bytes += (long long)n - (long long)old;
  return g + 2;
}

static void check(int ok, const char *what) {
  if (!ok) {
    fprintf(stderr, "consumer_c99: FAIL: %s\n", what);
    failures++;
  }
}

static void print_diag(const char *what, const shlo_diag *d) {
  char buf[2048];
  shlo_diag_format(d, buf, sizeof buf);
  fprintf(stderr, "consumer_c99: %s: %s\n", what, buf);
  failures++;
}

/* A new f32 tensor holding 0, 1, 2, ... times scale, written through
 * shlo_tensor_data while this function holds its only reference. */
static shlo_value *iota(int64_t rows, int64_t cols, float scale) {
  int64_t dims[2];
  dims[0] = rows;
  dims[1] = cols;
  shlo_value *v = shlo_context_tensor_new(ctx, SHLO_F32, 2, dims);
  if (!v) return NULL;
  float *p = (float *)shlo_tensor_data(v);
  for (int64_t i = 0; i < shlo_tensor_numel(v); i++) p[i] = (float)i * scale;
  return v;
}

/* Every op of the entry function has the code its name gives. */
static void check_op_codes(const shlo_module *m) {
  const shlo_func *f = shlo_module_entry(m);
  check(f != NULL, "entry function");
  if (!f) return;
  for (int i = 0; i < f->body->n_ops; i++) {
    const shlo_op *op = f->body->ops[i];
    check(op->code != SHLO_OP_CODE_UNKNOWN, "op known");
    check(op->code == shlo_op_code_of(op->name), "op code by name");
    const char *name = shlo_op_code_name(op->code);
    check(name && !strcmp(name, op->name), "op name by code");
  }
  check(shlo_op_code_of("nosuch.op") == SHLO_OP_CODE_UNKNOWN, "unknown op");
  check(shlo_op_code_name(SHLO_OP_CODE_UNKNOWN) == NULL, "unknown code");
}

/* x (2x3, 0..5) . y (3x2, 0..5 * 0.5), transposed. */
static void check_result(shlo_value *r) {
  static const float want[4] = {5, 14, 6.5f, 20};
  check(shlo_value_kind(r) == SHLO_TYPE_TENSOR, "result is a tensor");
  check(shlo_tensor_elem(r) == SHLO_F32, "result is f32");
  check(shlo_tensor_rank(r) == 2, "result rank");
  const int64_t *dims = shlo_tensor_dims(r);
  check(dims[0] == 2 && dims[1] == 2, "result dims");
  check(shlo_tensor_nbytes(r) == 4 * sizeof(float), "result bytes");
  check(shlo_tensor_quant(r) == NULL, "result not quantized");
  const float *p = (const float *)shlo_tensor_data_const(r);
  for (int i = 0; i < 4; i++) check(p[i] == want[i], "result value");
}

/* A tuple owns what it is given; its elements are borrowed out. */
static void check_tuple(shlo_value *a, shlo_value *b) {
  shlo_value *elems[2];
  elems[0] = shlo_value_retain(a);
  elems[1] = shlo_value_retain(b);
  shlo_value *t = shlo_tuple_new(2, elems);
  check(t != NULL, "tuple");
  if (!t) return;
  check(shlo_value_kind(t) == SHLO_TYPE_TUPLE, "tuple kind");
  check(shlo_tuple_size(t) == 2, "tuple size");
  check(shlo_tuple_get(t, 1) == b, "tuple element");
  check(shlo_tuple_get(t, 2) == NULL, "tuple bounds");
  check(shlo_tensor_data(t) == NULL && shlo_tensor_rank(t) == 0,
        "a tuple has no tensor data");
  shlo_value_release(t);
  shlo_value *tok = shlo_token_new();
  check(tok && shlo_value_kind(tok) == SHLO_TYPE_TOKEN, "token kind");
  check(tok && shlo_tensor_numel(tok) == 0 && shlo_tuple_size(tok) == 0,
        "a token has no elements");
  shlo_value_release(tok);
}

static void run_program(void) {
  shlo_diag diag;
  shlo_diag_clear(&diag);
  shlo_module *m = NULL;
  if (shlo_parse_module(program, strlen(program), "c99.mlir", &m, &diag)) {
    print_diag("parse", &diag);
    return;
  }
  shlo_diag_list found;
  shlo_diag_list_init(&found);
  shlo_verify_opts vopts = {.require_entry = true};
  check(shlo_verify_module(m, &vopts, &found) == SHLO_OK && found.n == 0,
        "verify");
  shlo_diag_list_free(&found);
  check_op_codes(m);

  shlo_cancel never = SHLO_CANCEL_INIT;
  shlo_compile_limits limits = {.max_ops = 1000, .cancel = &never};
  shlo_compile_opts copts = {.verified = true, .limits = &limits,
                              .context = ctx};
  shlo_executable *e = NULL;
  if (shlo_compile(m, &copts, &e, &diag)) {
    print_diag("compile", &diag);
    shlo_module_free(m);
    return;
  }
  shlo_value *args[2];
  args[0] = iota(2, 3, 1.0f);
  args[1] = iota(3, 2, 0.5f);
  check(args[0] && args[1], "inputs");
  shlo_exec_opts eopts = {.timeout_s = 30, .cancel = &never};
  shlo_value **res = NULL;
  int n_res = 0;
  if (args[0] && args[1] &&
      shlo_execute(e, &eopts, args, 2, &res, &n_res, &diag) == SHLO_OK) {
    check(n_res == 1, "one result");
    if (n_res == 1) {
      check_result(res[0]);
      check_tuple(args[0], res[0]);
    }
  } else if (args[0] && args[1]) {
    print_diag("execute", &diag);
  }
  for (int i = 0; i < n_res; i++) shlo_value_release(res[i]);
  free(res);
  shlo_value_release(args[0]);
  shlo_value_release(args[1]);
  shlo_executable_free(e);
  shlo_module_free(m);
}

/* A flag set before the run stops an endless loop with SHLO_ECANCELED. */
static void run_canceled(void) {
  shlo_cancel stop = SHLO_CANCEL_INIT;
  check(shlo_cancel_reason(&stop) == 0, "a new flag is clear");
  check(shlo_cancel_set_first(&stop, 7), "the first reason sets");
  check(!shlo_cancel_set_first(&stop, 8), "a second reason does not");
  check(shlo_cancel_reason(&stop) == 7, "the first reason stays");
  shlo_cancel_set(&stop, 0);
  check(shlo_cancel_reason(&stop) == 0, "0 clears");
  shlo_cancel_set(&stop, 7);
  shlo_diag diag;
  shlo_module *m = NULL;
  shlo_executable *e = NULL;
  shlo_compile_opts copts = {.context = ctx};
  if (shlo_load(endless, strlen(endless), "endless.mlir", &copts, &m, &e,
                &diag)) {
    print_diag("load", &diag);
    return;
  }
  shlo_exec_opts eopts = {.timeout_s = 30, .cancel = &stop};
  shlo_value **res = NULL;
  int n_res = 0;
  check(shlo_execute(e, &eopts, NULL, 0, &res, &n_res, &diag) ==
            SHLO_ECANCELED,
        "canceled");
  shlo_executable_free(e);
  shlo_module_free(m);
}

int main(void) {
  shlo_context_options o;
  shlo_context_options_init(&o);
  o.threads = 1;
  o.allocator.alloc = count_alloc;
  o.allocator.realloc = count_realloc;
  o.allocator.free = count_free;
  if (shlo_context_create(&o, &ctx) != SHLO_OK) {
    fprintf(stderr, "consumer_c99: FAIL: context\n");
    return 1;
  }
  check(shlo_context_threads(ctx) == 1, "one thread");
  run_program();
  run_canceled();
  shlo_context_destroy(ctx);
  check(n_allocs > 0, "the context's allocator is used");
  check(live_bytes == 0, "every byte comes back to the allocator");
  if (live_bytes)
    fprintf(stderr, "consumer_c99: %lld bytes not returned\n", live_bytes);
  if (failures) return 1;
  printf("consumer_c99: ok\n");
  return 0;
}
