/* SPDX-License-Identifier: Apache-2.0 */
/* shlo bench: time a program on generated inputs.
 *
 * Inputs follow ../shared/bench/README.md so results can be compared with
 * the numpy and PyTorch peers: argument k, element i comes from SplitMix64
 * with state 42 + k; floats are uniform on [-1, 1), integers uniform on
 * [0, range).  Prints min and median milliseconds over the timed runs and
 * the float64 sum and 2-norm of every output. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "inputs.h"
#include "core/value.h"
#include "remote.h"
#include "shlo/engine.h"
#include "shlo/profile.h"
#include "shlo/trace.h"

static uint64_t splitmix(uint64_t k, uint64_t i) {
  uint64_t z = (42 + k) + (i + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static shlo_value *make_input(const shlo_type *t, int k, int64_t range) {
  shlo_value *v = shlo_tensor_new_like(t);
  if (!v) return NULL;
  for (int64_t i = 0; i < v->numel; i++) {
    uint64_t z = splitmix((uint64_t)k, (uint64_t)i);
    if (shlo_elem_is_float(v->elem) || shlo_elem_is_complex(v->elem))
      shlo_tensor_set_f64(v, i, (double)(float)((double)(z >> 40) * 0x1p-23 - 1.0));
    else
      shlo_tensor_set_i64(v, i, (int64_t)((z >> 32) % (uint64_t)range));
  }
  return v;
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The command line of shlo bench. */
typedef struct bench_opts {
  const char *path;
  int runs, warmup;
  int64_t range; /* integers are drawn from [0, range) */
  shlo_profile *profile; /* --profile: time every step of the timed runs */
  const char *server;    /* --server URL: compile and run there */
  cli_inputs in;         /* --input / --args: instead of generated inputs */
  const char *trace_path; /* --trace FILE: every run's steps as a trace */
  shlo_trace *trace;
} bench_opts;

static int bench_usage(FILE *to, int rc) {
  fprintf(to,
    "usage: shlo bench FILE.mlir [--runs N] [--warmup N] [--int-range N]\n"
    "                  [--input=SPEC ... | --args=TEXT|@FILE]\n"
    "                  [--profile | --trace FILE | --server URL]\n"
    "  time the entry function (see ../shared/bench/README.md)\n"
    "  --runs N        timed runs (default 10); --warmup N untimed first (2)\n"
    "  --int-range N   generated integers are drawn from [0, N) (65536)\n"
    "  --input, --args the arguments, as `shlo run --help` describes them,\n"
    "                  instead of generated ones\n"
    "  --profile       time every step of the timed runs\n"
    "  --trace FILE    write every run's steps as a Chrome trace\n"
    "  --server URL    compile and run at a shlo-server\n");
  return rc;
}

/* Returns 0, or the exit status 2 after printing the usage. */
static int parse_bench_opts(int argc, char **argv, bench_opts *o) {
  *o = (bench_opts){.runs = 10, .warmup = 2, .range = 65536};
  bool bad = false;
  for (int i = 0; i < argc && !bad; i++) {
    int took = cli_inputs_option(&o->in, "shlo bench", argc, argv, &i);
    if (took) {
      bad = took < 0;
      continue;
    }
    if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
      cli_inputs_free(&o->in);
      shlo_profile_free(o->profile);
      o->profile = NULL;
      return bench_usage(stdout, 0) - 1; /* -1: stop, exit 0 */
    }
    if (!strcmp(argv[i], "--runs") && i + 1 < argc) o->runs = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--warmup") && i + 1 < argc)
      o->warmup = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--int-range") && i + 1 < argc)
      o->range = atoll(argv[++i]);
    else if (!strcmp(argv[i], "--profile") && !o->profile)
      bad = !(o->profile = shlo_profile_new());
    else if (!strcmp(argv[i], "--server") && i + 1 < argc)
      o->server = argv[++i];
    else if (!strcmp(argv[i], "--trace") && i + 1 < argc && !o->trace_path)
      o->trace_path = argv[++i];
    else if (argv[i][0] != '-' && !o->path) o->path = argv[i];
    else bad = true;
  }
  if (bad || !o->path || o->runs < 1 || o->warmup < 0 || o->range < 1 ||
      (o->server && o->profile) ||
      (o->trace_path && (o->server || o->profile))) {
    bench_usage(stderr, 2);
    cli_inputs_free(&o->in);
    shlo_profile_free(o->profile);
    o->profile = NULL;
    return 2;
  }
  if (o->trace_path && !(o->trace = shlo_trace_new(0))) {
    fprintf(stderr, "shlo bench: out of memory\n");
    return 1;
  }
  return 0;
}

/* The arguments: the user's (--input, --args), else generated from f's
 * types.  *args malloc'd, its *n values owned; false (reported) when one
 * cannot be had. */
static bool make_inputs(const bench_opts *o, const shlo_func *f,
                        shlo_value ***args, int *n) {
  if (cli_inputs_given(&o->in))
    return !cli_inputs_load("shlo bench", &o->in, f, 1, args, n);
  *n = 0;
  if (!(*args = calloc((size_t)f->n_args + 1, sizeof **args))) {
    fprintf(stderr, "shlo bench: out of memory\n");
    return false;
  }
  for (int k = 0; k < f->n_args; k++, ++*n)
    if (!((*args)[k] = make_input(f->arg_types[k], k, o->range))) {
      fprintf(stderr, "shlo bench: cannot make argument %d\n", k);
      return false;
    }
  return true;
}

/* Execute warmup + runs times, recording the timed runs' milliseconds in
 * times; the last run's results are left in *res. */
static bool time_runs(shlo_executable *e, shlo_value **args, int n_args,
                      const bench_opts *o, double *times, shlo_value ***res,
                      int *n_res, shlo_diag *d) {
  for (int r = 0; r < o->warmup + o->runs; r++) {
    double s = now_ms();
    uint64_t t0 = shlo_trace_now_ns();
    shlo_exec_opts eo = {.profile = r >= o->warmup ? o->profile : NULL};
    if (o->trace) eo.profile = shlo_trace_profile(o->trace);
    shlo_status st = shlo_execute(e, &eo, args, n_args, res, n_res, d);
    char name[32];
    snprintf(name, sizeof name, "%s %d", r < o->warmup ? "warmup" : "run",
             r < o->warmup ? r : r - o->warmup);
    shlo_trace_span(o->trace, name, "stage", t0, shlo_trace_now_ns(), NULL);
    if (st) {
      cli_print_diag(d);
      return false;
    }
    if (r >= o->warmup) times[r - o->warmup] = now_ms() - s;
    if (r + 1 < o->warmup + o->runs) {
      for (int i = 0; i < *n_res; i++) shlo_value_unref((*res)[i]);
      free(*res);
    }
  }
  return true;
}

/* Each output's float64 sum and 2-norm, for comparison with the peers;
 * releases the outputs. */
static void print_outputs(shlo_value **res, int n_res) {
  for (int i = 0; i < n_res; i++) {
    double sum = 0, sq = 0;
    for (int64_t j = 0; j < res[i]->numel; j++) {
      double x = shlo_tensor_get_f64(res[i], j);
      sum += x;
      sq += x * x;
    }
    printf("  output %d: sum %.17g l2 %.17g\n", i, sum, sqrt(sq));
    shlo_value_unref(res[i]);
  }
  free(res);
}

/* The timed runs at the server, by module id: each time is a whole round
 * trip (inputs out, outputs back), as a client sees it. */
static bool time_remote_runs(struct shlo_client *c, const remote_exec *rx,
                             const bench_opts *o, double *times,
                             shlo_value ***res, int *n_res) {
  for (int r = 0; r < o->warmup + o->runs; r++) {
    double s = now_ms();
    if (remote_execute(c, rx, res, n_res)) return false;
    if (r >= o->warmup) times[r - o->warmup] = now_ms() - s;
    if (r + 1 < o->warmup + o->runs) {
      for (int i = 0; i < *n_res; i++) shlo_value_unref((*res)[i]);
      free(*res);
    }
  }
  return true;
}

/* shlo bench --server: compile there (the time is the round trip), make
 * the inputs here from the entry's types, time the runs there, and print
 * what the local bench prints. */
static int bench_remote(const bench_opts *o, double *times) {
  size_t len;
  char *text = cli_read_file(o->path, &len);
  if (!text) return 1;
  int rc = 1, n_args = 0;
  char id[80];
  shlo_value **args = NULL;
  shlo_module *m = NULL;
  shlo_diag d;
  struct shlo_client *c = remote_connect(o->server);
  double t0 = now_ms();
  if (!c || remote_compile(c, o->path, text, len, id)) goto done;
  double compile_ms = now_ms() - t0;
  if (shlo_parse_module(text, len, o->path, &m, &d)) {
    cli_print_diag(&d);
    goto done;
  }
  const shlo_func *f = cli_default_entry(m);
  if (!f) goto done; /* the server compiled it: it has an entry */
  if (!make_inputs(o, f, &args, &n_args)) goto done;
  remote_exec rx = {.file = o->path, .module_id = id, .args = args,
                    .n_args = n_args};
  shlo_value **res = NULL;
  int n_res = 0;
  if (!time_remote_runs(c, &rx, o, times, &res, &n_res)) goto done;
  qsort(times, (size_t)o->runs, sizeof *times, cmp_double);
  printf("%s: compile %.2f ms, run min %.3f ms, median %.3f ms (%d runs, "
         "at %s)\n", o->path, compile_ms, times[0], times[o->runs / 2],
         o->runs, o->server);
  print_outputs(res, n_res);
  rc = 0;
done:
  for (int k = 0; k < n_args && args; k++) shlo_value_unref(args[k]);
  free(args);
  shlo_module_free(m);
  if (c) remote_close(c);
  free(text);
  return rc;
}

int cli_bench(int argc, char **argv) {
  bench_opts o;
  int rc = parse_bench_opts(argc, argv, &o);
  if (rc) return rc < 0 ? 0 : rc;
  if (o.server) {
    double *times = calloc((size_t)o.runs, sizeof *times);
    rc = times ? bench_remote(&o, times) : 1;
    free(times);
    cli_inputs_free(&o.in);
    return rc;
  }
  rc = 1;
  shlo_module *m = NULL;
  shlo_executable *e = NULL;
  shlo_value **args = NULL;
  double *times = calloc((size_t)o.runs, sizeof *times);
  shlo_diag d;
  shlo_diag_clear(&d);
  int n_args = 0;
  if (!times) goto done;
  double t0 = now_ms(); /* "compile": reading and parsing included */
  uint64_t load_ns = shlo_trace_now_ns();
  if (shlo_load_file(o.path, NULL, &m, &e, &d)) {
    cli_print_diag(&d);
    goto done;
  }
  shlo_trace_span(o.trace, "load (read, parse, verify, compile)", "stage",
                  load_ns, shlo_trace_now_ns(), NULL);
  double compile_ms = now_ms() - t0;
  const shlo_func *f = shlo_executable_entry(e);
  if (!make_inputs(&o, f, &args, &n_args)) goto done;
  shlo_value **res = NULL;
  int n_res = 0;
  if (!time_runs(e, args, n_args, &o, times, &res, &n_res, &d)) goto done;
  qsort(times, (size_t)o.runs, sizeof *times, cmp_double);
  printf("%s: compile %.2f ms, run min %.3f ms, median %.3f ms (%d runs)\n",
         o.path, compile_ms, times[0], times[o.runs / 2], o.runs);
  print_outputs(res, n_res);
  printf("  kernels: %s\n", shlo_kernels_info());
  if (o.profile) shlo_profile_print(o.profile, stdout, 15);
  rc = 0;
  if (o.trace && cli_trace_write(o.trace, o.trace_path, "shlo bench")) rc = 1;
done:
  shlo_trace_free(o.trace);
  shlo_profile_free(o.profile);
  cli_inputs_free(&o.in);
  for (int k = 0; k < n_args && args; k++) shlo_value_unref(args[k]);
  free(args);
  free(times);
  shlo_executable_free(e);
  shlo_module_free(m);
  return rc;
}
