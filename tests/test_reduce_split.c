/* SPDX-License-Identifier: Apache-2.0 */
/* stablehlo.reduce with a native body split over the pool by result
 * elements (kernels/reduce_split.c): a spatial sum over NHWC's [1, 2],
 * column sums, reductions of the middle and of non-neighbouring
 * dimensions, none at all.  Each case runs on pools of 1, 2 and 3
 * threads, which must give the same bytes, and in each run the native
 * result must be, bit for bit, what the region path gives (the same body
 * written so that the native matcher does not take it: it applies the
 * body element by element in the spec's order).  The f32 inputs hold a
 * NaN, a +inf and a -inf at scattered places; widths off the vector
 * width (tails of 1-15 columns), dimensions of 1, and sizes that the pool
 * cuts into several chunks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "shlo/engine.h"
#include "harness.h"

typedef struct reduce_case {
  const char *shape;  /* input, e.g. "3x5x7x67" */
  long numel;
  const char *dims;   /* reduced dimensions, e.g. "1, 2" */
  const char *oshape; /* result; "" for a scalar */
  const char *op;     /* the body: add or maximum */
  const char *et;     /* f32 or i32 */
  bool plain;         /* f32 without the NaN and infinities */
} reduce_case;

/* A tensor<shape> named %x: irregular values from a flat iota (f32: the
 * sine of it, with NaN, +inf and -inf at three places; i32: a product
 * that wraps). */
static void input(char *t, size_t cap, const reduce_case *c) {
  long n = c->numel;
  harness_appendf(t, cap,
                  "  %%ii = stablehlo.iota dim = 0 : tensor<%ldxi32>\n", n);
  if (!strcmp(c->et, "i32")) {
    harness_appendf(t, cap,
                    "  %%k = stablehlo.constant dense<40503> : "
                    "tensor<%ldxi32>\n"
                    "  %%v3 = stablehlo.multiply %%ii, %%k : "
                    "tensor<%ldxi32>\n",
                    n, n);
  } else {
    harness_appendf(t, cap,
                    "  %%fi = stablehlo.convert %%ii : (tensor<%ldxi32>) -> "
                    "tensor<%ldxf32>\n"
                    "  %%sc = stablehlo.constant dense<0.37> : "
                    "tensor<%ldxf32>\n"
                    "  %%m = stablehlo.multiply %%fi, %%sc : tensor<%ldxf32>\n"
                    "  %%v0 = stablehlo.sine %%m : tensor<%ldxf32>\n",
                    n, n, n, n, n);
    static const char *special[3] = {"0x7FC00000", "0x7F800000",
                                     "0xFF800000"};
    for (int s = 0; s < 3; s++) {
      if (c->plain) {
        harness_appendf(t, cap, "  %%v%d = stablehlo.negate %%v%d : "
                        "tensor<%ldxf32>\n", s + 1, s, n);
        continue;
      }
      harness_appendf(
          t, cap,
          "  %%p%d = stablehlo.constant dense<%ld> : tensor<%ldxi32>\n"
          "  %%a%d = stablehlo.compare EQ, %%ii, %%p%d : (tensor<%ldxi32>, "
          "tensor<%ldxi32>) -> tensor<%ldxi1>\n"
          "  %%c%d = stablehlo.constant dense<%s> : tensor<%ldxf32>\n"
          "  %%v%d = stablehlo.select %%a%d, %%c%d, %%v%d : "
          "tensor<%ldxi1>, tensor<%ldxf32>\n",
          s, (n * (2 * s + 1)) / 7, n, s, s, n, n, n, s, special[s], n, s + 1,
          s, s, s, n, n);
    }
  }
  harness_appendf(t, cap,
                  "  %%x = stablehlo.reshape %%v3 : (tensor<%ldx%s>) -> "
                  "tensor<%sx%s>\n",
                  n, c->et, c->shape, c->et);
}

static void result_type(char *buf, size_t cap, const reduce_case *c) {
  snprintf(buf, cap, "tensor<%s%s%s>", c->oshape, *c->oshape ? "x" : "",
           c->et);
}

/* Appends %q, what c's reduce of %x from %z must give, in ops that do
 * not run the native loops under test.  Only an f32 sum's schedule
 * differs from the region path's one element at a time: for it, %x with
 * the reduced dimensions moved last (their order kept) and flattened to
 * [kept, reduced], each row summed by harness_tree_sum in runs of the
 * innermost reduced dimensions (dimensions of extent 1 left out). */
static void reference(char *t, size_t cap, const reduce_case *c,
                      const char *rt) {
  long ext[8];
  int rank = 0;
  for (const char *p = c->shape; *p; p += *p == 'x') ext[rank++] = strtol(p, (char **)&p, 10);
  bool red[8] = {0};
  for (const char *p = c->dims; *p;)
    if (*p >= '0' && *p <= '9') red[strtol(p, (char **)&p, 10)] = true;
    else p++;
  long P = 1, N = 1, L = 1;
  char perm[64] = "", tshape[64] = "";
  for (int pass = 0; pass < 2; pass++) /* kept, then reduced */
    for (int d = 0; d < rank; d++)
      if (red[d] == (pass == 1)) {
        harness_appendf(perm, sizeof perm, "%s%d", *perm ? ", " : "", d);
        harness_appendf(tshape, sizeof tshape, "%ldx", ext[d]);
        *(pass ? &N : &P) *= ext[d];
      }
  for (int d = rank - 1; d >= 0; d--) { /* the run */
    if (ext[d] == 1) continue;
    if (!red[d]) break;
    L *= ext[d];
  }
  harness_appendf(t, cap,
                  "  %%xt = stablehlo.transpose %%x, dims = [%s] : "
                  "(tensor<%sx%s>) -> tensor<%s%s>\n"
                  "  %%xf = stablehlo.reshape %%xt : (tensor<%s%s>) -> "
                  "tensor<%ldx%ldx%s>\n",
                  perm, c->shape, c->et, tshape, c->et, tshape, c->et, P, N,
                  c->et);
  harness_tree_sum(t, cap, "xf", P, N, L, "z", "q0");
  harness_appendf(t, cap,
                  "  %%q = stablehlo.reshape %%q0 : (tensor<%ldxf32>) -> %s\n",
                  P, rt);
}

/* @main returning the native reduce, after checking it against the
 * region path bit for bit (f32 through a bitcast to i32), or for f32
 * sums against their schedule (reference). */
static char *program(const reduce_case *c) {
  enum { CAP = 16384 };
  char *t = calloc(CAP, 1);
  assert_non_null(t);
  char rt[64];
  result_type(rt, sizeof rt, c);
  harness_appendf(t, CAP, "func.func @main() -> %s {\n", rt);
  input(t, CAP, c);
  harness_appendf(
      t, CAP,
      "  %%z = stablehlo.constant dense<%s> : tensor<%s>\n"
      "  %%r = stablehlo.reduce(%%x init: %%z) applies stablehlo.%s across "
      "dimensions = [%s] : (tensor<%sx%s>, tensor<%s>) -> %s\n",
      strcmp(c->et, "f32") ? "7" : "0.25", c->et, c->op, c->dims, c->shape,
      c->et, c->et, rt);
  if (!strcmp(c->et, "f32") && !strcmp(c->op, "add"))
    reference(t, CAP, c, rt);
  else
    harness_appendf(t, CAP,
      "  %%q = \"stablehlo.reduce\"(%%x, %%z) ({\n"
      "    ^bb0(%%a: tensor<%s>, %%b: tensor<%s>):\n"
      "      %%s = stablehlo.%s %%a, %%b : tensor<%s>\n"
      "      %%n = stablehlo.negate %%s : tensor<%s>\n"
      "      %%o = stablehlo.negate %%n : tensor<%s>\n"
      "      stablehlo.return %%o : tensor<%s>\n"
      "  }) {dimensions = array<i64%s%s>} : (tensor<%sx%s>, tensor<%s>) -> "
      "%s\n",
      c->et, c->et, c->op, c->et, c->et, c->et, c->et,
      *c->dims ? ": " : "", c->dims, c->shape, c->et, c->et, rt);
  if (!strcmp(c->et, "f32")) {
    char it[64];
    snprintf(it, sizeof it, "tensor<%s%si32>", c->oshape,
             *c->oshape ? "x" : "");
    harness_appendf(t, CAP,
                    "  %%rb = stablehlo.bitcast_convert %%r : (%s) -> %s\n"
                    "  %%qb = stablehlo.bitcast_convert %%q : (%s) -> %s\n"
                    "  check.expect_eq %%rb, %%qb : %s\n",
                    rt, it, rt, it, it);
  } else {
    harness_appendf(t, CAP, "  check.expect_eq %%r, %%q : %s\n", rt);
  }
  harness_appendf(t, CAP, "  func.return %%r : %s\n}\n", rt);
  return t;
}

static void check_cases(const reduce_case *cases, size_t n) {
  for (size_t i = 0; i < n; i++) {
    char *t = program(&cases[i]);
    print_message("reduce %s over [%s] (%s, %s)\n", cases[i].shape,
                  cases[i].dims, cases[i].op, cases[i].et);
    harness_same_on_pools(t);
    free(t);
  }
}

/* Small shapes: every way the merged shape can end. */
static void shapes_match_region_path(void **state) {
  (void)state;
  static const reduce_case cases[] = {
      /* NHWC spatial sum: 64 columns in registers + a tail of 3 */
      {"3x5x7x67", 3 * 5 * 7 * 67, "1, 2", "3x67", "add", "f32", false},
      /* column sums: the pool splits the last dimension */
      {"5x70", 5 * 70, "0", "70", "add", "f32", false},
      /* the last dimension reduced, but not only it */
      {"4x6x9", 4 * 6 * 9, "0, 2", "6", "add", "f32", false},
      /* the body's own grid loop (maximum), 16 + 1 columns */
      {"3x4x17", 3 * 4 * 17, "1", "3x17", "maximum", "f32", false},
      /* reduced, kept, reduced, kept: a walk over two outer dimensions */
      {"2x3x4x5", 2 * 3 * 4 * 5, "0, 2", "3x5", "add", "i32", false},
      {"2x3x4x5", 2 * 3 * 4 * 5, "0, 2", "3x5", "add", "f32", false},
      /* dimensions of 1 between the others */
      {"1x8x1x5", 8 * 5, "0, 2", "8x5", "add", "f32", false},
      /* nothing reduced: body(init, x) per element */
      {"5x7", 35, "", "5x7", "add", "f32", false},
      /* everything reduced: one result element, walked as before */
      {"3x4x5", 60, "0, 1, 2", "", "add", "f32", false},
      /* f32 sums' runs (sum_tree.h) through dimensions of extent 1: one
       * run of 600 (two vector spans, 5 blocks, 8 more); one of 160; 5
       * runs of 60; without the NaN, so every bit shows */
      {"3x4x50", 600, "0, 1, 2", "", "add", "f32", true},
      {"4x1x40", 160, "0, 2", "1", "add", "f32", true},
      {"5x3x1x20", 300, "1, 3", "5x1", "add", "f32", true},
  };
  check_cases(cases, sizeof cases / sizeof cases[0]);
}

/* Sizes the pool cuts into several chunks (about 64K inputs each). */
static void chunked_match_region_path(void **state) {
  (void)state;
  static const reduce_case cases[] = {
      {"7x33x9x70", 7L * 33 * 9 * 70, "1, 2", "7x70", "add", "f32", false},
      {"2000x150", 2000L * 150, "0", "150", "add", "f32", false},
      {"12x50x3x60", 12L * 50 * 3 * 60, "1, 3", "12x3", "add", "f32", false},
      {"9x40x40x33", 9L * 40 * 40 * 33, "1, 2", "9x33", "maximum", "f32", false},
  };
  check_cases(cases, sizeof cases / sizeof cases[0]);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(shapes_match_region_path),
      cmocka_unit_test(chunked_match_region_path),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
