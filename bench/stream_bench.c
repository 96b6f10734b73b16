/* SPDX-License-Identifier: Apache-2.0 */
/* The binary route of bench/stream_bench.sh: start a program that outfeeds
 * each value it takes from its infeed, feed it COUNT values of MIB MiB
 * (f32) from one thread while this one takes them back out, through
 * libshlo-client's streaming calls on one client.  Checks each value's
 * first and last element (value i is filled with i % 7) and prints MB/s
 * of tensor data through the program.  Not a test: no timing is asserted.
 *
 * With --ahead it prints the execution's id and reads a line from stdin
 * before its first shlo_execution_next, so a test can let the feeder fill
 * every queue first (tests/server/stream_binary.py).
 *
 * usage: shlo_stream_bench shlo://HOST:PORT COUNT MIB [--ahead] */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "shlo/client.h"

typedef struct feeder {
  shlo_execution *x;
  shlo_value *vals[7];
  long count;
  int failed;
  shlo_client_error err;
} feeder;

static void *feed_main(void *arg) {
  feeder *f = arg;
  for (long i = 0; i < f->count && !f->failed; i++)
    if (shlo_execution_feed(f->x, f->vals[i % 7], 0, 0, &f->err))
      f->failed = 1;
  if (!f->failed && shlo_execution_feed_flush(f->x, &f->err)) f->failed = 1;
  return NULL;
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* The program: COUNT times, v = infeed(); outfeed(v). */
static char *program(long n) {
  static const char *fmt =
      "func.func @main(%%k: tensor<i64>) -> tensor<i64> {\n"
      "  %%t0 = \"stablehlo.after_all\"() : () -> !stablehlo.token\n"
      "  %%c0 = stablehlo.constant dense<0> : tensor<i64>\n"
      "  %%c1 = stablehlo.constant dense<1> : tensor<i64>\n"
      "  %%r:3 = stablehlo.while(%%i = %%c0, %%t = %%t0, %%m = %%k) : "
      "tensor<i64>, !stablehlo.token, tensor<i64>\n"
      "    cond {\n"
      "      %%c = stablehlo.compare LT, %%i, %%m : (tensor<i64>, "
      "tensor<i64>) -> tensor<i1>\n"
      "      stablehlo.return %%c : tensor<i1>\n"
      "    } do {\n"
      "      %%v:2 = \"stablehlo.infeed\"(%%t) : (!stablehlo.token) -> "
      "(tensor<%ldxf32>, !stablehlo.token)\n"
      "      %%t2 = \"stablehlo.outfeed\"(%%v#0, %%v#1) : (tensor<%ldxf32>, "
      "!stablehlo.token) -> !stablehlo.token\n"
      "      %%i2 = stablehlo.add %%i, %%c1 : tensor<i64>\n"
      "      stablehlo.return %%i2, %%t2, %%m : tensor<i64>, "
      "!stablehlo.token, tensor<i64>\n"
      "    }\n"
      "  return %%r#0 : tensor<i64>\n"
      "}\n";
  size_t cap = strlen(fmt) + 64;
  char *p = malloc(cap);
  if (p) snprintf(p, cap, fmt, n, n);
  return p;
}

int main(int argc, char **argv) {
  bool ahead = argc == 5 && !strcmp(argv[4], "--ahead");
  if (argc != 4 && !ahead) {
    fprintf(stderr, "usage: %s shlo://HOST:PORT COUNT MIB [--ahead]\n",
            argv[0]);
    return 2;
  }
  long count = atol(argv[2]), n = atol(argv[3]) * 262144;
  shlo_client_error err;
  shlo_client *c = shlo_client_connect(argv[1], NULL, &err);
  if (!c) {
    fprintf(stderr, "connect: %s\n", err.message);
    return 1;
  }
  feeder f = {.count = count};
  int64_t dim = n, scalar_dims[1] = {0};
  for (int k = 0; k < 7; k++) {
    f.vals[k] = shlo_tensor_new(SHLO_F32, 1, &dim);
    if (!f.vals[k]) return 1;
    float *p = shlo_tensor_data(f.vals[k]);
    for (long e = 0; e < n; e++) p[e] = (float)k;
  }
  shlo_value *k_in = shlo_tensor_new(SHLO_SI64, 0, scalar_dims);
  char *prog = program(n);
  if (!k_in || !prog) return 1;
  *(int64_t *)shlo_tensor_data(k_in) = count;
  shlo_client_request rq = {.program = prog, .program_len = strlen(prog),
                            .inputs = &k_in, .n_inputs = 1,
                            .timeout_ms = 3600000};
  double t0 = now_s();
  f.x = shlo_client_start(c, &rq, &err);
  if (!f.x) {
    fprintf(stderr, "start: %s: %s\n", err.kind, err.message);
    return 1;
  }
  pthread_t th;
  if (pthread_create(&th, NULL, feed_main, &f)) return 1;
  if (ahead) {
    char line[16];
    printf("%s\n", shlo_execution_id(f.x));
    fflush(stdout);
    if (!fgets(line, sizeof line, stdin)) return 1;
  }
  long got = 0, bad = 0;
  shlo_value *v;
  int rc;
  while ((rc = shlo_execution_next(f.x, &v, &err)) == 1) {
    const float *d = shlo_tensor_data_const(v);
    if (shlo_tensor_nbytes(v) != (size_t)n * 4 || d[0] != (float)(got % 7) ||
        d[n - 1] != (float)(got % 7))
      bad++;
    got++;
    shlo_value_unref(v);
  }
  double dt = now_s() - t0;
  pthread_join(th, NULL);
  if (rc < 0) fprintf(stderr, "outfeed: %s: %s\n", err.kind, err.message);
  if (f.failed) fprintf(stderr, "feed: %s: %s\n", f.err.kind, f.err.message);
  char *state = NULL;
  int ok = shlo_execution_wait(f.x, &state, &err) == 0;
  double mb = (double)count * (double)n * 4 / 1e6;
  printf("%ld values of %ld MiB in and out over binary (libshlo-client): "
         "%.2f s, %.0f MB/s through the program (%s, %ld values checked, "
         "%ld wrong)\n", count, n / 262144, dt, mb / dt,
         ok ? "succeeded" : "failed", got, bad);
  free(state);
  shlo_execution_free(f.x);
  shlo_client_close(c);
  for (int k = 0; k < 7; k++) shlo_value_unref(f.vals[k]);
  shlo_value_unref(k_in);
  free(prog);
  return ok && got == count && !bad ? 0 : 1;
}
