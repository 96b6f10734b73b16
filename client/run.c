/* SPDX-License-Identifier: Apache-2.0 */
/* shlo run and shlo print. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "remote.h"
#include "shlo/artifact.h"
#include "shlo/engine.h"
#include "shlo/grid.h"

char *cli_read_file(const char *path, size_t *len) {
  shlo_diag d;
  shlo_diag_clear(&d);
  char *text = shlo_read_file(path, len, &d);
  if (!text) fprintf(stderr, "shlo: %s\n", d.message);
  return text;
}

void cli_print_diag(const shlo_diag *d) {
  char msg[SHLO_DIAG_MAX + 256];
  shlo_diag_format(d, msg, sizeof msg);
  fprintf(stderr, "%s\n", msg);
}

const shlo_func *cli_default_entry(const shlo_module *m) {
  for (int i = 0; i < m->n_funcs; i++)
    if (!strcmp(m->funcs[i]->name, "main")) return m->funcs[i];
  return m->n_funcs == 1 ? m->funcs[0] : NULL;
}

/* A positive process count for --replicas / --partitions. */
static int grid_count(const char *opt, const char *s) {
  char *end;
  long v = strtol(s, &end, 10);
  if (*end || v < 1 || v > 4096) {
    fprintf(stderr, "shlo run: %s needs a count from 1 to 4096\n", opt);
    return -1;
  }
  return (int)v;
}

static int print_value(const char *prefix, shlo_value *v) {
  char *s = shlo_value_to_string(v);
  if (!s) {
    fprintf(stderr, "shlo: out of memory\n");
    return 1;
  }
  printf("%s%s\n", prefix, s);
  free(s);
  return 0;
}

/* The arguments of every process, process-major: token arguments are
 * made here, the others come from args, given to every process (when
 * there are per of them) or dealt in order.  NULL when out of memory. */
static shlo_value **deal_args(const shlo_func *f, shlo_value *token,
                              shlo_value **args, int n_args, int per, int n) {
  shlo_value **dealt = calloc((size_t)(f->n_args * n) + 1, sizeof *dealt);
  if (!dealt) return NULL;
  for (int k = 0, next = 0; k < n; k++) {
    if (n_args == per) next = 0;
    for (int i = 0; i < f->n_args; i++)
      dealt[k * f->n_args + i] =
          f->arg_types[i]->kind == SHLO_TYPE_TOKEN ? token : args[next++];
  }
  return dealt;
}

/* The values of the --infeed file; returns nonzero (reported) on error. */
static int read_infeed(const char *path, shlo_value ***vals, int *n,
                       shlo_diag *d) {
  size_t len;
  char *text = cli_read_file(path, &len);
  if (!text) return 1;
  shlo_status st = shlo_parse_values(text, len, vals, n, d);
  free(text);
  if (st) {
    fprintf(stderr, "shlo run: --infeed: ");
    cli_print_diag(d);
    return 1;
  }
  return 0;
}

/* Give each of n processes an infeed queue holding the n_in values (then
 * closed) and an empty outfeed queue.  False when out of memory. */
static bool make_feeds(shlo_feed **inq, shlo_feed **outq, int n,
                       shlo_value **in_vals, int n_in) {
  for (int k = 0; k < n; k++) {
    if (!(inq[k] = shlo_feed_new()) || !(outq[k] = shlo_feed_new()))
      return false;
    for (int i = 0; i < n_in; i++)
      if (shlo_feed_push(inq[k], in_vals[i])) return false;
    shlo_feed_close(inq[k]);
  }
  return true;
}

/* Each process's results, then its outfeed (outq NULL: none), under a
 * "process (r, p):" header when there is more than one process. */
static int print_grid_results(int R, int P, shlo_value **results,
                              int n_results, shlo_feed **outq) {
  int n = R * P, rc = 0;
  for (int k = 0; k < n && !rc; k++) {
    if (n > 1) printf("process (%d, %d):\n", k / P, k % P);
    for (int i = 0; i < n_results && !rc; i++)
      rc = print_value("", results[k * n_results + i]);
    shlo_value *v;
    while (!rc && outq && shlo_feed_pop(outq[k], 0, &v) == SHLO_OK) {
      rc = print_value("outfeed: ", v);
      shlo_value_unref(v);
    }
  }
  return rc;
}

/* Run on a grid of R x P processes: args are given to every process (when
 * there are as many as the entry takes) or dealt to the processes in order;
 * the --infeed file's values go into every process's infeed queue.  Prints
 * each process's results and then its outfeed. */
static int run_grid(shlo_executable *e, int R, int P, shlo_value **args,
                    int n_args, const char *infeed_path) {
  int n = R * P, rc = 1, n_results = 0, n_in = 0;
  const shlo_func *f = shlo_executable_entry(e);
  int per = 0; /* arguments per process that --args supplies */
  for (int i = 0; i < f->n_args; i++)
    per += f->arg_types[i]->kind != SHLO_TYPE_TOKEN;
  shlo_value *token = shlo_token_new();
  shlo_value **dealt = NULL, **results = NULL, **in_vals = NULL;
  shlo_feed **inq = calloc((size_t)n, sizeof *inq);
  shlo_feed **outq = calloc((size_t)n, sizeof *outq);
  shlo_diag d;
  shlo_diag_clear(&d);
  if (!inq || !outq || !token) goto oom;
  if (n_args != per && n_args != per * n) {
    fprintf(stderr,
            "shlo run: --args gives %d values; the entry takes %d per "
            "process (%d processes)\n",
            n_args, per, n);
    goto done;
  }
  if (!(dealt = deal_args(f, token, args, n_args, per, n))) goto oom;
  if (infeed_path && read_infeed(infeed_path, &in_vals, &n_in, &d)) goto done;
  if (!make_feeds(inq, outq, n, in_vals, n_in)) goto oom;
  shlo_grid_opts go = {.num_replicas = R, .num_partitions = P,
                       .infeed = inq, .outfeed = outq};
  if (shlo_execute_grid(e, &go, dealt, f->n_args, &results, &n_results,
                        &d)) {
    cli_print_diag(&d);
    goto done;
  }
  rc = print_grid_results(R, P, results, n_results, outq);
  goto done;
oom:
  fprintf(stderr, "shlo: out of memory\n");
done:
  for (int i = 0; results && i < n * n_results; i++)
    shlo_value_unref(results[i]);
  free(results);
  for (int i = 0; i < n_in; i++) shlo_value_unref(in_vals[i]);
  free(in_vals);
  for (int k = 0; k < n; k++) {
    if (inq) shlo_feed_free(inq[k]);
    if (outq) shlo_feed_free(outq[k]);
  }
  free(inq);
  free(outq);
  free(dealt);
  shlo_value_unref(token);
  return rc;
}

/* The command line of shlo run. */
typedef struct run_opts {
  const char *path, *args_text, *entry, *infeed_path;
  const char *server; /* --server URL: run there */
  int replicas, partitions; /* 0: the module's */
  bool explain;
  bool mpi; /* under mpirun: grids spread over the ranks */
} run_opts;

/* Returns 0, or the exit status 2 after saying what is wrong. */
static int parse_run_opts(int argc, char **argv, run_opts *o) {
  memset(o, 0, sizeof *o);
  for (int i = 0; i < argc; i++) {
    if (!strcmp(argv[i], "--args") && i + 1 < argc) o->args_text = argv[++i];
    else if (!strcmp(argv[i], "--entry") && i + 1 < argc) o->entry = argv[++i];
    else if (!strcmp(argv[i], "--explain")) o->explain = true;
    else if (!strcmp(argv[i], "--server") && i + 1 < argc)
      o->server = argv[++i];
    else if (!strcmp(argv[i], "--mpi")) o->mpi = true;
    else if (!strcmp(argv[i], "--infeed") && i + 1 < argc)
      o->infeed_path = argv[++i];
    else if (!strcmp(argv[i], "--replicas") && i + 1 < argc) {
      if ((o->replicas = grid_count("--replicas", argv[++i])) < 0) return 2;
    } else if (!strcmp(argv[i], "--partitions") && i + 1 < argc) {
      if ((o->partitions = grid_count("--partitions", argv[++i])) < 0)
        return 2;
    }
    else if (argv[i][0] == '-' && argv[i][1]) {
      fprintf(stderr, "shlo run: unknown option '%s'\n", argv[i]);
      return 2;
    } else if (!o->path) o->path = argv[i];
    else {
      fprintf(stderr, "shlo run: one program file at a time\n");
      return 2;
    }
  }
  if (!o->path) {
    fprintf(stderr, "usage: shlo run FILE.mlir [--args \"[...]\"] [--entry "
                    "NAME] [--explain] [--replicas R] [--partitions P] "
                    "[--infeed FILE] [--server URL | --mpi]\n");
    return 2;
  }
  if (o->server && (o->explain || o->infeed_path || o->mpi)) {
    fprintf(stderr, "shlo run: --explain, --infeed and --mpi are local only "
                    "(not with --server)\n");
    return 2;
  }
  return 0;
}

/* --mpi: rank 0 reads the program, every rank compiles the same bytes. */
static shlo_status load_shared(const char *path, const shlo_compile_opts *co,
                               shlo_module **m, shlo_executable **e,
                               shlo_diag *d) {
  size_t len;
  char *text = cli_mpi_read_file(path, &len);
  if (!text)
    return shlo_diag_set(d, SHLO_EINPUT, path, 0, 0, "cannot read %s", path);
  shlo_status st = shlo_load(text, len, path, co, m, e, d);
  free(text);
  return st;
}

/* Run on one process and print the results. */
static int run_single(shlo_executable *e, shlo_value **args, int n_args,
                      shlo_diag *d) {
  shlo_value **results = NULL;
  int n_results = 0, rc = 1;
  if (shlo_execute(e, NULL, args, n_args, &results, &n_results, d)) {
    cli_print_diag(d);
  } else {
    rc = 0;
    for (int i = 0; i < n_results && !rc; i++)
      rc = print_value("", results[i]);
  }
  for (int i = 0; i < n_results; i++) shlo_value_unref(results[i]);
  free(results);
  return rc;
}

/* The process grid the server will use: the options', else the module's
 * (read here from the text; a text that does not parse is the server's
 * to report). */
static int grid_size(const run_opts *o, const char *text, size_t len,
                     int *R, int *P) {
  int mr = 1, mp = 1;
  shlo_module *m = NULL;
  shlo_diag d;
  if (!shlo_parse_module(text, len, o->path, &m, &d)) {
    shlo_module_grid(m, &mr, &mp);
    shlo_module_free(m);
  }
  *R = o->replicas ? o->replicas : mr;
  *P = o->partitions ? o->partitions : mp;
  return *R * *P;
}

/* shlo run --server: the program and --args go to the server, its results
 * (or its error) are printed as the local run prints the engine's. */
static int run_remote(const run_opts *o) {
  size_t len;
  char *text = cli_read_file(o->path, &len);
  if (!text) return 1;
  int rc = 1, n_args = 0, n_outs = 0, R, P;
  shlo_value **args = NULL, **outs = NULL;
  struct shlo_client *c = NULL;
  shlo_diag d;
  shlo_diag_clear(&d);
  if (o->args_text && shlo_parse_values(o->args_text, strlen(o->args_text),
                                        &args, &n_args, &d)) {
    fprintf(stderr, "shlo run: --args: ");
    cli_print_diag(&d);
    goto done;
  }
  int n = grid_size(o, text, len, &R, &P);
  if (!(c = remote_connect(o->server))) goto done;
  remote_exec rx = {.file = o->path, .text = text, .len = len,
                    .entry = o->entry, .args = args, .n_args = n_args,
                    .replicas = o->replicas, .partitions = o->partitions};
  if (remote_execute(c, &rx, &outs, &n_outs)) goto done;
  if (n > 1) {
    rc = print_grid_results(R, P, outs, n_outs / n, NULL);
  } else {
    rc = 0;
    for (int i = 0; i < n_outs && !rc; i++) rc = print_value("", outs[i]);
  }
done:
  for (int i = 0; i < n_outs; i++) shlo_value_unref(outs[i]);
  free(outs);
  for (int i = 0; i < n_args; i++) shlo_value_unref(args[i]);
  free(args);
  if (c) remote_close(c);
  free(text);
  return rc;
}

int cli_run(int argc, char **argv) {
  run_opts o;
  int rc = parse_run_opts(argc, argv, &o);
  if (rc) return rc;
  if (o.server) return run_remote(&o);
  rc = 1;
  shlo_module *m = NULL;
  shlo_executable *e = NULL;
  shlo_value **args = NULL;
  int n_args = 0;
  shlo_diag d;
  shlo_diag_clear(&d);
  shlo_compile_opts co = {.entry = o.entry};
  if (o.mpi && cli_mpi_start()) return 1;
  if (o.mpi ? load_shared(o.path, &co, &m, &e, &d)
            : shlo_load_file(o.path, &co, &m, &e, &d)) {
    cli_print_diag(&d);
    goto done;
  }
  if (o.args_text && shlo_parse_values(o.args_text, strlen(o.args_text),
                                       &args, &n_args, &d)) {
    fprintf(stderr, "shlo run: --args: ");
    cli_print_diag(&d);
    goto done;
  }
  if (o.explain) {
    shlo_executable_explain(e, stdout);
    rc = 0;
    goto done;
  }
  int mr, mp;
  shlo_module_grid(m, &mr, &mp);
  if (o.replicas || o.partitions || o.infeed_path || mr * mp > 1)
    rc = run_grid(e, o.replicas ? o.replicas : mr,
                  o.partitions ? o.partitions : mp, args, n_args,
                  o.infeed_path);
  else
    rc = run_single(e, args, n_args, &d);
done:
  for (int i = 0; i < n_args; i++) shlo_value_unref(args[i]);
  free(args);
  shlo_executable_free(e);
  shlo_module_free(m);
  return o.mpi ? cli_mpi_finish(rc) : rc;
}

/* An artifact's StableHLO text as its VHLO lowers, before parsing: what
 * `shlo print --lowered` shows when an artifact does not read back. */
static int print_lowered(const char *path, const char *bytes, size_t len) {
  shlo_diag d;
  shlo_diag_clear(&d);
  char *text = shlo_artifact_to_text(bytes, len, path, NULL, &d);
  if (!text) {
    cli_print_diag(&d);
    return 1;
  }
  fputs(text, stdout);
  free(text);
  return 0;
}

int cli_print(int argc, char **argv) {
  bool lowered = argc == 2 && !strcmp(argv[0], "--lowered");
  if (argc != 1 && !lowered) {
    fprintf(stderr, "usage: shlo print [--lowered] FILE.mlir|FILE.mlir.bc\n");
    return 2;
  }
  const char *path = argv[argc - 1];
  size_t len;
  char *text = cli_read_file(path, &len);
  if (!text) return 1;
  if (lowered) {
    int rc = print_lowered(path, text, len);
    free(text);
    return rc;
  }
  shlo_module *m;
  shlo_diag d;
  int rc = 1;
  if (shlo_parse_module(text, len, path, &m, &d)) {
    cli_print_diag(&d);
  } else {
    char *out = shlo_module_print(m);
    if (out) {
      fputs(out, stdout);
      rc = 0;
    }
    free(out);
    shlo_module_free(m);
  }
  free(text);
  return rc;
}
