/* SPDX-License-Identifier: Apache-2.0 */
/* shlo-small-inproc: the in-process side of bench/peers.sh --serve-small.
 * It runs the small program shlo-loadgen sends to a server (a 4-element
 * f32 add, compiled once) ROUNDS x RUNS times in this process and prints
 * the median over the rounds of the mean microseconds per execution: what
 * a request costs without a server.  `shlo bench` rounds its times to a
 * microsecond, too coarse for a program this small.
 *
 *   shlo-small-inproc [RUNS [ROUNDS]]     (100000, 5) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shlo/engine.h"
#include "shlo/tensor.h"

/* the same text as bench/loadgen.c's small_prog */
static const char small_prog[] =
    "func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
    "  %0 = stablehlo.add %x, %x : tensor<4xf32>\n"
    "  return %0 : tensor<4xf32>\n}\n";

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* runs executions of e on x; the mean microseconds of one, or -1 */
static double mean_us(const shlo_executable *e, shlo_value *x, long runs) {
  int64_t t0 = shlo_monotonic_ns();
  for (long i = 0; i < runs; i++) {
    shlo_value **res = NULL;
    int n = 0;
    shlo_diag d;
    shlo_diag_clear(&d);
    if (shlo_execute(e, NULL, &x, 1, &res, &n, &d)) {
      fprintf(stderr, "shlo-small-inproc: %s\n", d.message);
      return -1;
    }
    for (int k = 0; k < n; k++) shlo_value_release(res[k]); /* as a server drops them */
    free(res);
  }
  return (double)(shlo_monotonic_ns() - t0) / 1e3 / (double)runs;
}

int main(int argc, char **argv) {
  long runs = argc > 1 ? atol(argv[1]) : 100000;
  int rounds = argc > 2 ? atoi(argv[2]) : 5;
  if (runs < 1 || rounds < 1 || rounds > 99) {
    fprintf(stderr, "usage: shlo-small-inproc [RUNS [ROUNDS <= 99]]\n");
    return 2;
  }
  shlo_diag d;
  shlo_diag_clear(&d);
  shlo_module *m = NULL;
  shlo_executable *e = NULL;
  if (shlo_load(small_prog, strlen(small_prog), "small", NULL, &m, &e, &d)) {
    fprintf(stderr, "shlo-small-inproc: %s\n", d.message);
    return 1;
  }
  int64_t dims[1] = {4};
  shlo_value *x = shlo_tensor_new(SHLO_F32, 1, dims);
  int rc = 1;
  if (x) {
    float *p = shlo_tensor_data(x);
    for (int i = 0; i < 4; i++) p[i] = (float)(i + 1);
    double us[99];
    rc = mean_us(e, x, runs / 10 + 1) < 0; /* warm-up */
    for (int r = 0; !rc && r < rounds; r++) rc = (us[r] = mean_us(e, x, runs)) < 0;
    if (!rc) {
      qsort(us, (size_t)rounds, sizeof us[0], cmp_double);
      printf("inproc_us %.4f\n", us[rounds / 2]);
    }
    shlo_value_release(x);
  }
  shlo_executable_free(e);
  shlo_module_free(m);
  return rc;
}
