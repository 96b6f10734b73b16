/* SPDX-License-Identifier: Apache-2.0 */
/* The small-window convolution's rows that touch the padding
 * (kernels/conv_small.c): summed from a padded copy of the lhs values
 * they read instead of through a pointer per window position (to zeros
 * on the padding).  The products and their order are the same, so the
 * bytes must be those of the pointers' path (shlo__conv_small_use_pad_copy
 * turns the copy off): cnn's first layer, rows whose length leaves
 * remainders of every group size (half, two thirds, overlapping), 16, 32,
 * 64 and 20 out-features, padding on one side only, wider than the
 * window and negative, strides, dilated windows, one and three spatial
 * dimensions, rows too long for the copy, and a column of infinite
 * inputs (NaN results). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/value.h"
#include "kernels/conv_small.h"
#include "shlo/engine.h"
#include "harness.h"

typedef struct pad_case {
  int ns;             /* spatial dimensions, 1 to 3 */
  int n, ci, co;
  int in[3], k[3], lo[3], hi[3], stride[3], dil[3];
  bool inf;           /* the lhs's last spatial column is +inf */
} pad_case;

static void dims_text(char *buf, size_t cap, int n, const int *sp, int ns,
                      int f) {
  buf[0] = 0;
  harness_appendf(buf, cap, "%d", n);
  for (int i = 0; i < ns; i++) harness_appendf(buf, cap, "x%d", sp[i]);
  harness_appendf(buf, cap, "x%d", f);
}

/* The program: %x (irregular values) convolved with %k. */
static char *program(const pad_case *c) {
  enum { CAP = 8192 };
  char *t = calloc(CAP, 1);
  assert_non_null(t);
  int out[3];
  long nl = (long)c->n * c->ci, nk = (long)c->ci * c->co;
  for (int i = 0; i < c->ns; i++) {
    int span = (c->k[i] - 1) * c->dil[i] + 1;
    out[i] = (c->in[i] + c->lo[i] + c->hi[i] - span) / c->stride[i] + 1;
    nl *= c->in[i];
    nk *= c->k[i];
  }
  char ls[64], ks[64], os[64], dn[64] = "", kn[64] = "";
  dims_text(ls, sizeof ls, c->n, c->in, c->ns, c->ci);
  dims_text(os, sizeof os, c->n, out, c->ns, c->co);
  ks[0] = 0;
  for (int i = 0; i < c->ns; i++) {
    harness_appendf(ks, sizeof ks, "%dx", c->k[i]);
    harness_appendf(dn, sizeof dn, "%d, ", i);
  }
  harness_appendf(ks, sizeof ks, "%dx%d", c->ci, c->co);
  memcpy(kn, dn, sizeof kn);
  harness_appendf(t, CAP, "func.func @main() -> tensor<%sxf32> {\n", os);
  harness_appendf(t, CAP,
                  "  %%xi = stablehlo.iota dim = 0 : tensor<%ldxf32>\n"
                  "  %%xs = stablehlo.constant dense<0.37> : tensor<%ldxf32>\n"
                  "  %%xm = stablehlo.multiply %%xi, %%xs : tensor<%ldxf32>\n"
                  "  %%xf = stablehlo.sine %%xm : tensor<%ldxf32>\n"
                  "  %%x0 = stablehlo.reshape %%xf : (tensor<%ldxf32>) -> "
                  "tensor<%sxf32>\n",
                  nl, nl, nl, nl, nl, ls);
  if (c->inf)
    harness_appendf(t, CAP,
                    "  %%pos = stablehlo.iota dim = %d : tensor<%sxi32>\n"
                    "  %%end = stablehlo.constant dense<%d> : tensor<%sxi32>\n"
                    "  %%at = stablehlo.compare EQ, %%pos, %%end : "
                    "(tensor<%sxi32>, tensor<%sxi32>) -> tensor<%sxi1>\n"
                    "  %%infs = stablehlo.constant dense<0x7F800000> : "
                    "tensor<%sxf32>\n"
                    "  %%x = stablehlo.select %%at, %%infs, %%x0 : "
                    "tensor<%sxi1>, tensor<%sxf32>\n",
                    c->ns, ls, c->in[c->ns - 1] - 1, ls, ls, ls, ls, ls, ls,
                    ls);
  else
    harness_appendf(t, CAP, "  %%x = stablehlo.add %%x0, %%x0 : "
                            "tensor<%sxf32>\n", ls);
  harness_appendf(t, CAP,
                  "  %%ki = stablehlo.iota dim = 0 : tensor<%ldxf32>\n"
                  "  %%ks = stablehlo.constant dense<0.61> : tensor<%ldxf32>\n"
                  "  %%km = stablehlo.multiply %%ki, %%ks : tensor<%ldxf32>\n"
                  "  %%kf = stablehlo.cosine %%km : tensor<%ldxf32>\n"
                  "  %%k = stablehlo.reshape %%kf : (tensor<%ldxf32>) -> "
                  "tensor<%sxf32>\n",
                  nk, nk, nk, nk, nk, ks);
  char st[64] = "", pd[128] = "", dl[64] = "";
  for (int i = 0; i < c->ns; i++) {
    harness_appendf(st, sizeof st, "%s%d", i ? ", " : "", c->stride[i]);
    harness_appendf(pd, sizeof pd, "%s[%d, %d]", i ? ", " : "", c->lo[i],
                    c->hi[i]);
    harness_appendf(dl, sizeof dl, "%s%d", i ? ", " : "", c->dil[i]);
  }
  harness_appendf(t, CAP,
                  "  %%y = stablehlo.convolution(%%x, %%k) dim_numbers = "
                  "[b, %sf]x[%si, o]->[b, %sf], window = {stride = [%s], "
                  "pad = [%s], rhs_dilate = [%s]} {batch_group_count = 1 : "
                  "i64, feature_group_count = 1 : i64} : (tensor<%sxf32>, "
                  "tensor<%sxf32>) -> tensor<%sxf32>\n"
                  "  func.return %%y : tensor<%sxf32>\n}\n",
                  dn, kn, dn, st, pd, dl, ls, ks, os, os);
  return t;
}

/* Run the case with the padded copy and without: the same bytes. */
static void check_case(const pad_case *c) {
  char *t = program(c);
  bool was = shlo__conv_small_use_pad_copy(true);
  harness_result with = harness_run_fused(t, true, NULL, 0);
  shlo__conv_small_use_pad_copy(false);
  harness_result without = harness_run_fused(t, true, NULL, 0);
  shlo__conv_small_use_pad_copy(was);
  assert_int_equal(with.n, 1);
  assert_int_equal(without.n, 1);
  assert_int_equal(with.v[0]->nbytes, without.v[0]->nbytes);
  if (memcmp(with.v[0]->data, without.v[0]->data, with.v[0]->nbytes)) {
    print_message("%s", t);
    fail_msg("the padded copy changed the result");
  }
  assert_non_null(strstr(with.plan, "small window"));
  harness_result_free(&with);
  harness_result_free(&without);
  free(t);
}

static void padded_rows_give_the_pointers_bytes(void **state) {
  (void)state;
  static const pad_case cases[] = {
      /* cnn's first layer: rows of 32 as 12, 12 and 8 */
      {2, 2, 3, 32, {32, 32}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, false},
      /* remainders: 1 (half), 5 (half), 8 (two thirds), 11 (whole) */
      {2, 1, 3, 32, {13, 13}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, true},
      {2, 1, 3, 32, {9, 17}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, false},
      {2, 1, 3, 32, {7, 20}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, false},
      {2, 1, 3, 32, {6, 23}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, true},
      /* 16, 64 and 20 (scalar sums) out-features */
      {2, 3, 2, 16, {31, 29}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, true},
      {2, 1, 3, 64, {10, 11}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, true},
      {2, 1, 3, 64, {7, 10}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, false},
      {2, 2, 3, 20, {11, 9}, {3, 3}, {1, 1}, {1, 1}, {2, 2}, {1, 1}, false},
      /* padding on one side, wider than the window, negative */
      {2, 1, 3, 32, {30, 14}, {3, 3}, {2, 0}, {0, 2}, {1, 1}, {1, 1}, true},
      {2, 1, 2, 32, {5, 26}, {3, 3}, {4, 1}, {4, 4}, {1, 1}, {1, 1}, false},
      {2, 1, 3, 32, {9, 28}, {3, 3}, {-1, 1}, {1, -1}, {1, 1}, {1, 1}, true},
      /* a dilated window, strides, a 1x5 window */
      {2, 1, 3, 32, {8, 27}, {3, 3}, {2, 2}, {2, 2}, {1, 2}, {2, 2}, false},
      {2, 2, 1, 32, {6, 40}, {1, 5}, {0, 2}, {0, 2}, {1, 1}, {1, 1}, true},
      /* rows too long for the copy (the pointers for both) */
      {2, 1, 3, 32, {3, 300}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, false},
      /* one and three spatial dimensions */
      {1, 3, 3, 32, {50}, {5}, {2}, {2}, {1}, {1}, true},
      {3, 2, 1, 16, {5, 6, 20}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1},
       {1, 1, 1}, true},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    check_case(&cases[i]);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(padded_rows_give_the_pointers_bytes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
