/* SPDX-License-Identifier: Apache-2.0 */
/* shlo run and shlo print. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "inputs.h"
#include "outputs.h"
#include "remote.h"
#include "shlo/artifact.h"
#include "shlo/engine.h"
#include "shlo/trace.h"
#include "shlo/verify.h"
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
  return shlo_module_entry(m);
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
  char *s = cli_value_text(v);
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

/* A traced run's stages as one timeline without gaps: each stage's span
 * starts where the one before it ended (the glue between two stages counts
 * with the later one), so the stages cover the command's time whatever the
 * scheduler does between them.  trace NULL: nothing is recorded. */
typedef struct stages {
  shlo_trace *trace;
  uint64_t mark; /* where the next stage starts */
} stages;

static void stage_done(stages *sg, const char *name, const char *args) {
  if (!sg->trace) return;
  uint64_t now = shlo_trace_now_ns();
  shlo_trace_span(sg->trace, name, "stage", sg->mark, now, args);
  sg->mark = now;
}

static shlo_profile *stages_profile(const stages *sg) {
  return sg->trace ? shlo_trace_profile(sg->trace) : NULL;
}

/* Run on a grid of R x P processes: args are given to every process (when
 * there are as many as the entry takes) or dealt to the processes in order;
 * the --infeed file's values go into every process's infeed queue.  Prints
 * each process's results and then its outfeed. */
static int run_grid(shlo_executable *e, int R, int P, shlo_value **args,
                    int n_args, const char *infeed_path, stages *sg) {
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
  if (n_args != per && n_args != per * n) { /* cli_inputs_load said why */
    fprintf(stderr,
            "shlo run: %d arguments given; the entry takes %d per "
            "process (%d processes)\n",
            n_args, per, n);
    goto done;
  }
  if (!(dealt = deal_args(f, token, args, n_args, per, n))) goto oom;
  if (infeed_path && read_infeed(infeed_path, &in_vals, &n_in, &d)) goto done;
  if (!make_feeds(inq, outq, n, in_vals, n_in)) goto oom;
  shlo_grid_opts go = {.num_replicas = R, .num_partitions = P,
                       .infeed = inq, .outfeed = outq,
                       .exec = {.profile = stages_profile(sg)}};
  shlo_status st =
      shlo_execute_grid(e, &go, dealt, f->n_args, &results, &n_results, &d);
  stage_done(sg, "execute", NULL);
  if (st) {
    cli_print_diag(&d);
    goto done;
  }
  rc = print_grid_results(R, P, results, n_results, outq);
  stage_done(sg, "print results", NULL);
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
  const char *path, *entry, *infeed_path;
  cli_inputs in;   /* --input / --args */
  cli_outputs out; /* --output */
  const char *server; /* --server URL: run there */
  const char *trace_path; /* --trace FILE: write a Chrome trace there */
  int replicas, partitions; /* 0: the module's */
  bool explain;
  bool mpi; /* under mpirun: grids spread over the ranks */
} run_opts;

/* Returns 0, or the exit status 2 after saying what is wrong. */
static int run_usage(FILE *to, int rc) {
  fprintf(to,
    "usage: shlo run FILE.mlir [options]\n"
    "  run the entry function and print its results (docs/cli.md)\n"
    "  --input=SPEC        one argument, repeatable, in order:\n"
    "                        2x3xf32=1,2,3,4,5,6   f32=5   4xi1=true,false,1,0\n"
    "                        2xcomplex<f32>=(1,2),(3,4)   f32=0x7FC00001 (bits)\n"
    "                        2x3xf32=@x.bin (raw little-endian)   @x.npy\n"
    "                        @all.npz (every array)   - (.npy on stdin)\n"
    "  --args=\"[dense<...> : tensor<...>, ...]\" | --args=@FILE\n"
    "                      the arguments as MLIR literals (not with --input)\n"
    "  --output=SPEC       where the next result goes, repeatable: @y.npy,\n"
    "                      @all.npz (this and every later result), - (.npy\n"
    "                      on stdout), or empty (drop it); with any --output\n"
    "                      only the results named are delivered\n"
    "  --entry NAME        the function to run (default @main, or the only one)\n"
    "  --explain           print the execution plan instead of running\n"
    "  --replicas R, --partitions P   the process grid (default: the module's)\n"
    "  --infeed FILE       values for every process's infeed queue\n"
    "  --trace FILE        write where the run's time went, as a Chrome trace\n"
    "  --server URL        run at a shlo-server (shlo://host:port binary,\n"
    "                      http://host:port JSON; token from $SHLO_TOKEN)\n"
    "  --mpi               under mpirun: spread the grid over the ranks\n"
    "  Results print as text that reads back to the same bits (-0.0 signed,\n"
    "  NaN and infinities as their bit pattern, e.g. 0x7FC00001).\n");
  return rc;
}

static int parse_run_opts(int argc, char **argv, run_opts *o) {
  memset(o, 0, sizeof *o);
  for (int i = 0; i < argc; i++) {
    int took = cli_inputs_option(&o->in, "shlo run", argc, argv, &i);
    if (!took) took = cli_outputs_option(&o->out, "shlo run", argc, argv, &i);
    if (took < 0) return 2;
    if (took) continue;
    if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
      return run_usage(stdout, 0) - 1; /* -1: stop, exit 0 */
    else if (!strcmp(argv[i], "--entry") && i + 1 < argc) o->entry = argv[++i];
    else if (!strcmp(argv[i], "--explain")) o->explain = true;
    else if (!strcmp(argv[i], "--server") && i + 1 < argc)
      o->server = argv[++i];
    else if (!strcmp(argv[i], "--mpi")) o->mpi = true;
    else if (!strcmp(argv[i], "--trace") && i + 1 < argc)
      o->trace_path = argv[++i];
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
  if (!o->path) return run_usage(stderr, 2);
  if (o->server && (o->explain || o->infeed_path || o->mpi || o->trace_path)) {
    fprintf(stderr, "shlo run: --explain, --infeed, --trace and --mpi are "
                    "local only (not with --server)\n");
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

/* shlo_load_file stage by stage, each stage a span of sg's trace. */
static shlo_status load_traced(const char *path, const shlo_compile_opts *co,
                               stages *sg, shlo_module **m,
                               shlo_executable **e, shlo_diag *d) {
  size_t len;
  char *text = shlo_read_file(path, &len, d);
  if (!text) return d->code ? d->code : SHLO_EINPUT;
  char args[64];
  snprintf(args, sizeof args, "{\"bytes\":%zu}", len);
  stage_done(sg, "read", args);
  shlo_status st = shlo_parse_module(text, len, path, m, d);
  free(text);
  stage_done(sg, "parse", NULL);
  if (st) return st;
  /* dynamic shapes the verifier cannot judge are the compiler's to check */
  st = shlo_verify_module_first(*m, NULL, d);
  stage_done(sg, "verify", NULL);
  if (st && st != SHLO_EUNSUPPORTED) return st;
  shlo_compile_opts c = *co;
  c.verified = st == SHLO_OK;
  shlo_diag_clear(d);
  st = shlo_compile(*m, &c, e, d);
  stage_done(sg, "compile", NULL);
  return st;
}

/* Run on one process and deliver the results (--output, else print). */
static int run_single(shlo_executable *e, shlo_value **args, int n_args,
                      const cli_outputs *out, stages *sg, shlo_diag *d) {
  shlo_value **results = NULL;
  int n_results = 0, rc = 1;
  shlo_exec_opts eo = {.profile = stages_profile(sg)};
  shlo_status st = shlo_execute(e, &eo, args, n_args, &results, &n_results, d);
  stage_done(sg, "execute", NULL);
  if (st) {
    cli_print_diag(d);
  } else {
    rc = cli_outputs_deliver(out, "shlo run", results, n_results);
    stage_done(sg, "print results", NULL);
  }
  for (int i = 0; i < n_results; i++) shlo_value_unref(results[i]);
  free(results);
  return rc;
}

/* The module as the server will read it (parsed here from the text; a
 * text that does not parse is the server's to report: NULL), and the
 * process grid it will use: the options', else the module's. */
static shlo_module *remote_module(const run_opts *o, const char *text,
                                  size_t len, int *R, int *P) {
  int mr = 1, mp = 1;
  shlo_module *m = NULL;
  shlo_diag d;
  if (shlo_parse_module(text, len, o->path, &m, &d)) m = NULL;
  else shlo_module_grid(m, &mr, &mp);
  *R = o->replicas ? o->replicas : mr;
  *P = o->partitions ? o->partitions : mp;
  return m;
}

/* shlo run --server: the program and the arguments go to the server, its
 * results (or its error) are delivered as the local run delivers the
 * engine's.  Arguments are checked here against the entry's signature
 * when the text parses here. */
static int run_remote(const run_opts *o) {
  size_t len;
  char *text = cli_read_file(o->path, &len);
  if (!text) return 1;
  int rc = 1, n_args = 0, n_outs = 0, R, P;
  shlo_value **args = NULL, **outs = NULL;
  struct shlo_client *c = NULL;
  shlo_module *m = remote_module(o, text, len, &R, &P);
  const shlo_func *f = NULL;
  int n = R * P;
  if (m && !(f = cli_find_entry("shlo run", m, o->entry)) && o->entry)
    goto done; /* listed the module's functions */
  if (cli_inputs_load("shlo run", &o->in, f, n, &args, &n_args)) goto done;
  if (n > 1 && o->out.n) {
    fprintf(stderr, "shlo run: --output is for one process (this grid has "
                    "%d)\n", n);
    goto done;
  }
  if (!(c = remote_connect(o->server))) goto done;
  remote_exec rx = {.file = o->path, .text = text, .len = len,
                    .entry = o->entry, .args = args, .n_args = n_args,
                    .replicas = o->replicas, .partitions = o->partitions};
  if (remote_execute(c, &rx, &outs, &n_outs)) goto done;
  if (n > 1) rc = print_grid_results(R, P, outs, n_outs / n, NULL);
  else rc = cli_outputs_deliver(&o->out, "shlo run", outs, n_outs);
done:
  for (int i = 0; i < n_outs; i++) shlo_value_unref(outs[i]);
  free(outs);
  for (int i = 0; i < n_args; i++) shlo_value_unref(args[i]);
  free(args);
  if (c) remote_close(c);
  shlo_module_free(m);
  free(text);
  return rc;
}

/* The engine could not load the program: when the entry (--entry NAME, or
 * the default) is what is missing and the text
 * parses, name the functions it has instead of the engine's words.  True
 * when that was said. */
static bool explain_entry(const run_opts *o) {
  size_t len;
  shlo_diag d;
  shlo_diag_clear(&d);
  char *text = shlo_read_file(o->path, &len, &d);
  shlo_module *m = NULL;
  bool said = false;
  if (text && !shlo_parse_module(text, len, o->path, &m, &d))
    said = !cli_find_entry("shlo run", m, o->entry);
  shlo_module_free(m);
  free(text);
  return said;
}

/* The local run once the program is compiled. */
static int run_loaded(const run_opts *o, shlo_module *m, shlo_executable *e,
                      stages *sg) {
  shlo_value **args = NULL;
  int n_args = 0, mr, mp, rc = 1;
  shlo_diag d;
  shlo_diag_clear(&d);
  shlo_module_grid(m, &mr, &mp);
  int R = o->replicas ? o->replicas : mr, P = o->partitions ? o->partitions : mp;
  bool grid = o->replicas || o->partitions || o->infeed_path || mr * mp > 1;
  if (o->explain) {
    shlo_executable_explain(e, stdout);
    return 0;
  }
  if (grid && o->out.n) {
    fprintf(stderr, "shlo run: --output is for one process (this run is a "
                    "grid of %d)\n", R * P);
    return 1;
  }
  if (cli_inputs_load("shlo run", &o->in, shlo_executable_entry(e),
                      grid ? R * P : 1, &args, &n_args))
    return 1;
  stage_done(sg, "load inputs", NULL);
  if (grid) rc = run_grid(e, R, P, args, n_args, o->infeed_path, sg);
  else rc = run_single(e, args, n_args, &o->out, sg, &d);
  for (int i = 0; i < n_args; i++) shlo_value_unref(args[i]);
  free(args);
  return rc;
}

int cli_run(int argc, char **argv) {
  run_opts o;
  uint64_t start_ns = shlo_trace_now_ns();
  int rc = parse_run_opts(argc, argv, &o);
  if (rc) goto out;
  if (o.server) {
    rc = run_remote(&o);
    goto out;
  }
  rc = 1;
  shlo_trace *trace = NULL;
  if (o.trace_path && !(trace = shlo_trace_new(0))) {
    fprintf(stderr, "shlo: out of memory\n");
    goto out;
  }
  shlo_module *m = NULL;
  shlo_executable *e = NULL;
  shlo_diag d;
  shlo_diag_clear(&d);
  shlo_compile_opts co = {.entry = o.entry};
  stages sg = {.trace = trace, .mark = start_ns};
  if (o.mpi && cli_mpi_start()) goto done;
  if (o.mpi    ? load_shared(o.path, &co, &m, &e, &d)
      : trace ? load_traced(o.path, &co, &sg, &m, &e, &d)
              : shlo_load_file(o.path, &co, &m, &e, &d)) {
    if (!explain_entry(&o)) cli_print_diag(&d);
  } else {
    rc = run_loaded(&o, m, e, &sg);
  }
done:
  if (trace) { /* steps name themselves from e: written before it goes */
    /* the command: from its start to its last stage's end (what follows
     * is writing this trace and freeing) */
    shlo_trace_span(trace, "shlo run", "command", start_ns, sg.mark, NULL);
    if (cli_trace_write(trace, o.trace_path, "shlo run") && !rc) rc = 1;
    shlo_trace_free(trace);
  }
  shlo_executable_free(e);
  shlo_module_free(m);
  if (o.mpi) rc = cli_mpi_finish(rc);
out:
  cli_inputs_free(&o.in);
  cli_outputs_free(&o.out);
  return rc < 0 ? 0 : rc;
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
