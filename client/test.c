/* SPDX-License-Identifier: Apache-2.0 */
/* shlo test: run the cases of .mlir files and report PASS/FAIL/SKIP.
 *
 * Each case runs in a child process, so a crash or a hang in one case is
 * reported as that case's failure and the run goes on. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cases.h"
#include "cli.h"
#include "jaxcase.h"
#include "remote.h"
#include "shlo/context.h"
#include "shlo/engine.h"

typedef struct tally {
  int pass, fail, skip;
} tally;

/* ---- --check-context: each case in a context of its own ----
 *
 * For the engine's own tests: every case compiles and runs in a fresh
 * one-thread context whose allocator marks its blocks.  A block of the C
 * library's freed through it (or one of its freed through the C
 * library's, which glibc usually catches) aborts the case, and a byte not
 * back when the case has freed everything and destroyed the context fails
 * it: the check that the engine routes each object to the context it was
 * made in. */
static bool check_context;

#define CHECK_MAGIC 0x53484c4f43545831ULL /* "SHLOCTX1" */

typedef struct check_hdr {
  unsigned long long magic;
  size_t size;
} check_hdr;

static long long check_outstanding;

static void *check_alloc(void *user, size_t n) {
  (void)user;
  check_hdr *h = malloc(sizeof *h + n);
  if (!h) return NULL;
  h->magic = CHECK_MAGIC;
  h->size = n;
  check_outstanding += (long long)n; /* one thread: the context has 1 */
  return h + 1;
}

static check_hdr *check_hdr_of(void *p, const char *what) {
  check_hdr *h = (check_hdr *)p - 1;
  if (h->magic != CHECK_MAGIC) {
    fprintf(stderr, "shlo test --check-context: a block the context did not "
                    "allocate was %s through it\n", what);
    abort();
  }
  return h;
}

static void check_free(void *user, void *p) {
  (void)user;
  if (!p) return;
  check_hdr *h = check_hdr_of(p, "freed");
  h->magic = 0;
  check_outstanding -= (long long)h->size;
  free(h);
}

static void *check_realloc(void *user, void *p, size_t n) {
  if (!p) return check_alloc(user, n);
  size_t old = check_hdr_of(p, "reallocated")->size;
  void *q = check_alloc(user, n);
  if (!q) return NULL;
  memcpy(q, p, old < n ? old : n);
  check_free(user, p);
  return q;
}

static shlo_context *check_context_new(void) {
  shlo_context_options o;
  shlo_context_options_init(&o);
  o.threads = 1;
  o.allocator = (shlo_allocator){check_alloc, check_realloc, check_free, NULL};
  shlo_context *ctx = NULL;
  return shlo_context_create(&o, &ctx) == SHLO_OK ? ctx : NULL;
}

/* ---- one case, in the child ---- */

typedef enum { R_PASS = 'P', R_FAIL = 'F', R_SKIP = 'S' } result_kind;

static result_kind run_case(const char *file, const char *text, size_t len,
                            const char *args_text, double timeout, char *msg,
                            size_t cap) {
  shlo_module *m = NULL;
  shlo_executable *e = NULL;
  shlo_diag d;
  shlo_diag_clear(&d);
  result_kind r = R_FAIL;
  msg[0] = 0;
  shlo_context *ctx = NULL;
  if (check_context && !(ctx = check_context_new())) {
    snprintf(msg, cap, "cannot make a context");
    return R_FAIL;
  }
  shlo_compile_opts co = {.context = ctx};
  if (shlo_parse_module(text, len, file, &m, &d)) {
    shlo_diag_format(&d, msg, cap);
    goto done;
  }
  if (shlo_module_num_funcs(m) == 0) {
    r = R_PASS; /* nothing to run */
    goto done;
  }
  shlo_status st = shlo_compile(m, &co, &e, &d);
  if (st) {
    r = st == SHLO_EUNSUPPORTED ? R_SKIP : R_FAIL;
    shlo_diag_format(&d, msg, cap);
    goto done;
  }
  shlo_value **args = NULL;
  int n_args = 0;
  if (shlo_executable_entry(e)->n_args) {
    /* Arguments come from the file's RUN line, as for the reference
     * interpreter's --args, else from what an artifact carries. */
    if (!args_text) args_text = cases_module_args(m);
    if (!args_text) {
      snprintf(msg, cap, "entry function @%s takes arguments and the file "
               "gives none (--args in a RUN line, or the module attribute "
               CASES_TEST_ARGS_ATTR ")", shlo_executable_entry(e)->name);
      goto done;
    }
    if (shlo_parse_values(args_text, strlen(args_text), &args, &n_args, &d)) {
      shlo_diag_format(&d, msg, cap);
      goto done;
    }
  }
  shlo_exec_opts opts = {.timeout_s = timeout};
  shlo_value **res = NULL;
  int n = 0;
  st = shlo_execute(e, &opts, args, n_args, &res, &n, &d);
  for (int i = 0; i < n_args; i++) shlo_value_unref(args[i]);
  free(args);
  if (st) {
    r = st == SHLO_EUNSUPPORTED ? R_SKIP : R_FAIL;
    shlo_diag_format(&d, msg, cap);
    goto done;
  }
  for (int i = 0; i < n; i++) shlo_value_unref(res[i]);
  free(res);
  r = R_PASS;
done:
  shlo_executable_free(e);
  shlo_module_free(m);
  shlo_context_destroy(ctx);
  if (ctx && check_outstanding && r != R_FAIL) {
    snprintf(msg, cap, "--check-context: %lld bytes not returned to the "
             "context", check_outstanding);
    r = R_FAIL;
  }
  check_outstanding = 0;
  return r;
}

/* What a child runs: one case of a .mlir file, or a JSON case. */
typedef struct child_case {
  const char *file, *text, *args_text;
  size_t len;
  bool json;
} child_case;

static result_kind run_child_case(const child_case *cc, double timeout,
                                  char *msg, size_t cap) {
  if (cc->json)
    return (result_kind)jaxcase_run(cc->file, cc->text, cc->len, timeout,
                                    NULL, msg, cap);
  return run_case(cc->file, cc->text, cc->len, cc->args_text, timeout, msg,
                  cap);
}

/* Run a case in a child; the child writes "<kind><message>" to a pipe. */
static result_kind run_isolated_case(const child_case *cc, double timeout,
                                     char *msg, size_t cap) {
  int fds[2];
  if (pipe(fds) != 0) {
    snprintf(msg, cap, "cannot create a pipe");
    return R_FAIL;
  }
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    snprintf(msg, cap, "cannot fork");
    return R_FAIL;
  }
  if (pid == 0) {
    close(fds[0]);
    char buf[SHLO_DIAG_MAX + 512];
    buf[0] = (char)run_child_case(cc, timeout, buf + 1, sizeof buf - 1);
    fflush(stdout);
    size_t n = strlen(buf + 1) + 1;
    ssize_t w = write(fds[1], buf, n);
    _exit(w == (ssize_t)n ? 0 : 1);
  }
  close(fds[1]);
  char buf[SHLO_DIAG_MAX + 512];
  size_t got = 0;
  /* The child enforces its own deadline; this bound catches hangs outside
   * the executor (parsing, compiling). */
  int wait_ms = (int)(timeout * 1000) + 5000;
  struct timespec t0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  bool timed_out = false;
  for (;;) {
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    int left = wait_ms - (int)((t1.tv_sec - t0.tv_sec) * 1000 +
                               (t1.tv_nsec - t0.tv_nsec) / 1000000);
    if (left <= 0) {
      timed_out = true;
      break;
    }
    struct pollfd pfd = {fds[0], POLLIN, 0};
    int pr = poll(&pfd, 1, left);
    if (pr < 0 && errno == EINTR) continue;
    if (pr <= 0) {
      timed_out = pr == 0;
      break;
    }
    ssize_t r = read(fds[0], buf + got, sizeof buf - 1 - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += (size_t)r;
    if (got >= sizeof buf - 1) break;
  }
  close(fds[0]);
  if (timed_out) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  buf[got] = 0;
  if (timed_out) {
    snprintf(msg, cap, "timed out after %g s", timeout);
    return R_FAIL;
  }
  if (WIFSIGNALED(status)) {
    snprintf(msg, cap, "crashed with signal %d", WTERMSIG(status));
    return R_FAIL;
  }
  if (got < 1 || (buf[0] != R_PASS && buf[0] != R_FAIL && buf[0] != R_SKIP)) {
    snprintf(msg, cap, "the case ended without a result");
    return R_FAIL;
  }
  snprintf(msg, cap, "%s", buf + 1);
  return (result_kind)buf[0];
}

static result_kind run_isolated(const char *file, const char *text,
                                size_t len, const char *args_text,
                                double timeout, char *msg, size_t cap) {
  child_case cc = {file, text, args_text, len, false};
  return run_isolated_case(&cc, timeout, msg, cap);
}

/* --server: the inputs the case's module carries, when its file's RUN
 * line gives none (malloc'd, or NULL).  The server does not read them. */
static char *module_args(const char *file, const char *text, size_t len) {
  shlo_module *m = NULL;
  shlo_diag d;
  if (shlo_parse_module(text, len, file, &m, &d)) return NULL;
  const char *a = cases_module_args(m);
  char *copy = a ? strdup(a) : NULL;
  shlo_module_free(m);
  return copy;
}

typedef struct file_run {
  const char *file;
  const char *args_text;
  double timeout;
  bool in_process; /* no child per case: for leak checkers and debuggers */
  struct shlo_client *server; /* --server: run every case there */
  tally *t;
  bool mpi; /* --mpi: in process, grids over the MPI ranks */
} file_run;

static int test_one(void *ctx, const test_case *c) {
  file_run *fr = ctx;
  char msg[SHLO_DIAG_MAX + 512];
  char *printed = NULL; /* a remote case's interpreter.print output */
  char *carried = fr->server && !fr->args_text
                      ? module_args(fr->file, c->text, c->len)
                      : NULL;
  result_kind r =
      fr->server
          ? (result_kind)remote_case(fr->server, fr->file, c->text, c->len,
                                     carried ? carried : fr->args_text,
                                     fr->timeout, msg, sizeof msg, &printed)
      : fr->in_process || fr->mpi
          ? run_case(fr->file, c->text, c->len, fr->args_text, fr->timeout,
                     msg, sizeof msg)
          : run_isolated(fr->file, c->text, c->len, fr->args_text,
                         fr->timeout, msg, sizeof msg);
  free(carried);
  for (char *p = msg; *p; p++)
    if (*p == '\n') *p = ' ';
  /* Where a local case's child writes it: before the case's line. */
  if (printed) fputs(printed, stdout);
  free(printed);
  if (r == R_PASS) {
    printf("PASS %s:%d\n", fr->file, c->index);
    fr->t->pass++;
  } else {
    printf("%s %s:%d: %s\n", r == R_SKIP ? "SKIP" : "FAIL", fr->file,
           c->index, msg);
    if (r == R_SKIP) fr->t->skip++;
    else fr->t->fail++;
  }
  fflush(stdout);
  return 0;
}

/* A JSON case of a JAX export: one case per file. */
static void test_json(const char *file, const char *text, size_t len,
                      double timeout, bool in_process,
                      struct shlo_client *server, tally *t) {
  char msg[SHLO_DIAG_MAX + 512];
  child_case cc = {file, text, NULL, len, true};
  result_kind r =
      server ? (result_kind)jaxcase_run(file, text, len, timeout, server, msg,
                                        sizeof msg)
      : in_process ? run_child_case(&cc, timeout, msg, sizeof msg)
                   : run_isolated_case(&cc, timeout, msg, sizeof msg);
  for (char *p = msg; *p; p++)
    if (*p == '\n') *p = ' ';
  if (r == R_PASS) {
    printf("PASS %s:1\n", file);
    t->pass++;
  } else {
    printf("%s %s:1: %s\n", r == R_SKIP ? "SKIP" : "FAIL", file, msg);
    if (r == R_SKIP) t->skip++;
    else t->fail++;
  }
  fflush(stdout);
}

static void test_file(const char *file, double timeout, bool in_process,
                      struct shlo_client *server, tally *t, bool mpi) {
  size_t len;
  char *text = mpi ? cli_mpi_read_file(file, &len) : cli_read_file(file, &len);
  if (!text) {
    printf("FAIL %s:1: cannot read the file\n", file);
    t->fail++;
    return;
  }
  if (jaxcase_is_case(file)) {
    test_json(file, text, len, timeout, in_process || mpi, server, t);
    free(text);
    return;
  }
  char *args_text = cases_run_line_args(text, len);
  file_run fr = {file, args_text, timeout, in_process, server, t, mpi};
  if (cases_split(text, len, test_one, &fr) < 0) {
    printf("FAIL %s:1: out of memory\n", file);
    t->fail++;
  }
  free(args_text);
  free(text);
}

/* --mpi: every rank tests rank 0's list of files. */
static int share_files(file_list *files) {
  size_t len = 0;
  for (size_t i = 0; i < files->n; i++) len += strlen(files->v[i]) + 1;
  char *list = calloc(len + 1, 1), *at = list;
  for (size_t i = 0; list && i < files->n; i++)
    at += sprintf(at, "%s\n", files->v[i]);
  char *shared = cli_mpi_share_text(list);
  free(list);
  if (!shared) return -1;
  /* The names alone: the files need not exist on another host. */
  cases_free_files(files);
  int rc = 0;
  for (char *p = shared, *nl; !rc && (nl = strchr(p, '\n')); p = nl + 1) {
    *nl = 0;
    char **v = realloc(files->v, (files->n + 1) * sizeof *v);
    if (v) files->v = v;
    if (!v || !(files->v[files->n] = strdup(p))) rc = -1;
    else files->cap = ++files->n;
  }
  free(shared);
  return rc;
}

int cli_test(int argc, char **argv) {
  double timeout = 60;
  bool in_process = false, mpi = false;
  const char *url = NULL;
  file_list files = {0};
  int rc = 0;
  for (int i = 0; i < argc && !rc; i++) {
    if (!strcmp(argv[i], "--timeout") && i + 1 < argc) {
      char *end;
      timeout = strtod(argv[++i], &end);
      if (*end || timeout <= 0) {
        fprintf(stderr, "shlo test: --timeout needs a positive number\n");
        rc = 2;
      }
    } else if (!strcmp(argv[i], "--in-process")) {
      in_process = true;
    } else if (!strcmp(argv[i], "--check-context")) {
      check_context = true;
    } else if (!strcmp(argv[i], "--mpi")) {
      mpi = true;
    } else if (!strcmp(argv[i], "--server") && i + 1 < argc) {
      url = argv[++i];
    } else if (argv[i][0] == '-') {
      fprintf(stderr, "shlo test: unknown option '%s'\n", argv[i]);
      rc = 2;
    } else if (cases_collect_files(argv[i], &files)) {
      rc = 2;
    }
  }
  if (!rc && files.n == 0) {
    fprintf(stderr,
            "usage: shlo test [--timeout SECONDS] [--in-process] "
            "[--check-context] [--server URL] [--mpi] PATH...\n");
    rc = 2;
  }
  if (!rc && url && mpi) {
    fprintf(stderr, "shlo test: --server and --mpi do not go together\n");
    rc = 2;
  }
  struct shlo_client *server = NULL;
  if (!rc && url && !(server = remote_connect(url))) rc = 2;
  if (!rc && mpi && (cli_mpi_start() || share_files(&files))) rc = 1;
  tally t = {0};
  for (size_t i = 0; i < files.n && !rc; i++)
    test_file(files.v[i], timeout, in_process, server, &t, mpi);
  if (server) remote_close(server);
  cases_free_files(&files);
  if (!rc) {
    printf("%d passed, %d failed, %d skipped\n", t.pass, t.fail, t.skip);
    rc = t.fail ? 1 : 0;
  }
  return mpi ? cli_mpi_finish(rc) : rc;
}
