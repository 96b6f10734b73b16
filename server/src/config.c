/* SPDX-License-Identifier: Apache-2.0 */
/* The option table (Redis config.c style): every option, limit or not, is
 * one row; flags, the config file, --help and the startup dump all read it. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "shlo/artifact.h"
#include "shlo/limits.h"
#include "shlo/version.h"

/* OPT_RATIO: a decimal in [0, 1] ("0.05"), kept in parts per million */
typedef enum { OPT_INT, OPT_SIZE, OPT_STR, OPT_BOOL, OPT_RATIO } opt_type;

typedef struct opt {
  const char *name;
  opt_type type;
  size_t offset;
  int64_t min, max;
  const char *def;
  const char *help;
  bool restart; /* SIGHUP cannot change it: sockets, threads, the files
                   named at start */
} opt;

#define OFF(f) offsetof(srv_config, f)
#define KB 1024LL
#define MB (1024LL * KB)
#define GB (1024LL * MB)

static const opt options[] = {
    {"host", OPT_STR, OFF(host), 0, 0, "127.0.0.1",
     "address to listen on (loopback by default; any other address needs "
     "tokens, or insecure)", true},
    {"insecure", OPT_BOOL, OFF(insecure), 0, 1, "0",
     "serve an address beyond loopback without tokens (1; `--insecure` "
     "alone as a flag): anyone who reaches the port may run programs", true},
    {"port", OPT_INT, OFF(port), 0, 65535, "8080", "TCP port (0 = any free)",
     true},
    {"binary-port", OPT_INT, OFF(binary_port), 0, 65535, "0",
     "TCP port of the binary protocol (PROTOCOL.md part 2; 0 = off)", true},
    {"threads", OPT_INT, OFF(threads), 0, 1024, "0",
     "execution worker threads = concurrent executions (0 = one per core)",
     true},
    {"worker-spin-us", OPT_INT, OFF(worker_spin_us), 0, 100000, "0",
     "a worker that finished a job looks for the next one this long before "
     "it sleeps (saves wakeups when cores are spare; burns CPU when not)",
     true},
    {"config", OPT_STR, OFF(config_file), 0, 0, "",
     "config file: lines `name value`, # comments", true},
    {"tokens", OPT_STR, OFF(tokens_file), 0, 0, "",
     "bearer tokens file: lines `name token [team=T] [scopes=execute,"
     "register,admin]` and `@TEAM quota=value...`; empty = open server "
     "(loopback only unless insecure)", false},
    {"log", OPT_STR, OFF(log), 0, 0, "stderr",
     "request log: stderr, off, or a file path", false},
    {"audit-log", OPT_STR, OFF(audit_log), 0, 0, "off",
     "audit log, one JSON line per request (team, token name, route, "
     "status, times, bytes): off, stderr, or a file path (reopened on "
     "SIGHUP)", false},
    {"max-body-bytes", OPT_SIZE, OFF(max_body_bytes), 1, 64 * GB, "96m",
     "largest request body (413); the default carries a 64 MiB tensor as "
     "b64 (4/3 of its bytes) with room to spare", false},
    {"max-tensor-elements", OPT_INT, OFF(max_tensor_elements), 1,
     INT64_MAX, "67108864", "elements of one input tensor (413)", false},
    {"max-tensor-bytes", OPT_SIZE, OFF(max_tensor_bytes), 1, 64 * GB, "256m",
     "bytes of one input tensor (413)", false},
    {"max-inputs", OPT_INT, OFF(max_inputs), 0, 1 << 20, "1024",
     "inputs of one execution (413)", false},
    {"max-exec-memory", OPT_SIZE, OFF(max_exec_memory), 1, 1024 * GB, "1g",
     "memory of one execution: its inputs, results and every tensor alive "
     "at once while it runs (413)", false},
    {"default-timeout-ms", OPT_INT, OFF(default_timeout_ms), 1, 86400000,
     "30000", "deadline of an execution that names none (504)", false},
    {"max-timeout-ms", OPT_INT, OFF(max_timeout_ms), 1, 86400000, "300000",
     "largest deadline a request may ask for (longer ones are capped)", false},
    {"max-queue", OPT_INT, OFF(max_queue), 0, 1 << 20, "64",
     "executions waiting for a worker before 503 + Retry-After", false},
    {"cache-bytes", OPT_SIZE, OFF(cache_bytes), 0, 1024 * GB, "256m",
     "module cache budget (LRU; 413 for one module over it)", true},
    {"max-connections", OPT_INT, OFF(max_connections), 1, 1 << 20, "4096",
     "open HTTP connections; more get 503 + Retry-After (16 more are kept "
     "for /healthz, /readyz and /metrics)", false},
    {"max-connections-per-ip", OPT_INT, OFF(max_connections_per_ip), 0,
     1 << 20, "256", "open HTTP connections from one address; more get 503 "
     "+ Retry-After (0 = no cap)", false},
    {"max-pending-body-bytes", OPT_SIZE, OFF(max_pending_body_bytes), 1,
     1024 * GB, "256m", "bytes of request bodies and binary frames partly "
     "received, all connections together; past it the connections whose "
     "bodies waited longest for a byte are closed (503 / ERROR limit)",
     false},
    {"frame-timeout-s", OPT_INT, OFF(frame_timeout_s), 0, 86400, "30",
     "time one binary frame has to arrive whole from its first byte, not "
     "reset by each byte (ERROR timeout, closed; 0 = none)", false},
    {"max-json-answer-bytes", OPT_SIZE, OFF(max_json_answer_bytes), 0,
     1024 * GB, "256m", "largest execution answer written as JSON text, "
     "counted at the longest text of each output's element type (413: ask "
     "for output_format b64 or use the binary port; 0 = no limit)", false},
    {"request-timeout-s", OPT_INT, OFF(request_timeout_s), 0, 86400, "30",
     "time a connection has to deliver a request's headers and body, "
     "counted from its opening or its previous answer, not reset by each "
     "byte (408, closed; 0 = none)", false},
    {"connection-timeout-s", OPT_INT, OFF(connection_timeout_s), 0, 86400,
     "60", "a connection that sends or reads nothing this long is closed",
     true},
    {"max-client-jobs", OPT_INT, OFF(max_client_jobs), 0, 1 << 20, "32",
     "executions and registrations one client (bearer token, else address) "
     "may have running or queued; more get 429 + Retry-After (0 = no cap)", false},
    {"max-client-running", OPT_INT, OFF(max_client_running), 0, 1024, "0",
     "of those, how many run at once: its others wait while other clients' "
     "jobs run (0 = no cap; a shared server wants about half the threads)",
     false},
    {"short-lane-workers", OPT_INT, OFF(short_lane_workers), 0, 1024, "1",
     "workers kept for the short lane (registrations, quick executions): "
     "long executions never occupy more than threads minus this", false},
    {"inline-max-work", OPT_INT, OFF(inline_max_work), 0, 1 << 20, "4096",
     "a cached execution whose every step is elementwise or a reshape, "
     "writing at most this many elements in all (no loops, calls or "
     "reductions), runs on the server's loop thread instead of a worker: "
     "two thread hand-offs fewer for tiny programs (0 = always a worker)",
     false},
    /* Compiling: a program's text is parsed, verified and compiled within
     * these bounds (shlo_compile_limits), each refusal a 413 `limit`. */
    {"max-program-ops", OPT_INT, OFF(max_program_ops), 0, INT64_MAX,
     "1000000", "ops of one program, regions included (413; 0 = no limit)",
     true},
    {"compile-timeout-ms", OPT_INT, OFF(compile_timeout_ms), 0, 86400000,
     "10000", "time to parse and verify a program, and again to compile "
     "an entry function of it (413; 0 = no limit)", true},
    {"max-nesting-depth", OPT_INT, OFF(max_nesting_depth), 1,
     SHLO_MAX_DEPTH_CAP, "256", "deepest nesting of regions, calls and "
     "types in a program (deeper: 413 or 400)", true},
    {"store", OPT_STR, OFF(store), 0, 0, "",
     "module store directory: registered modules (and their names) are "
     "kept there and known again after a restart; empty = memory only",
     true},
    {"model-repository", OPT_STR, OFF(model_repository), 0, 0, "",
     "model repository directory, as Triton's: NAME/VERSION/model.mlir (or "
     "model.mlir.bc) and an optional NAME/config.json; empty = none",
     true},
    {"model-control-mode", OPT_STR, OFF(model_control_mode), 0, 0, "none",
     "none: load the repository at start (and on SIGHUP); poll: also rescan "
     "it every repository-poll-secs; explicit: POST "
     "/v2/repository/models/NAME/load|unload", true},
    {"repository-poll-secs", OPT_INT, OFF(repository_poll_secs), 1, 86400,
     "15", "seconds between two scans of the model repository in "
     "model-control-mode poll", true},
    {"tls-cert", OPT_STR, OFF(tls_cert), 0, 0, "",
     "PEM certificate (chain) file: with tls-key, HTTP becomes HTTPS", true},
    {"tls-key", OPT_STR, OFF(tls_key), 0, 0, "",
     "PEM private key file of tls-cert", true},
    /* Grids across machines: `mpirun -n K shlo-server --grid-backend mpi`
     * (README "Grids across machines"). */
    {"grid-backend", OPT_STR, OFF(grid_backend), 0, 0, "threads",
     "where grid executions run: threads (one process) or mpi (rank 0 "
     "serves, grids of mpi-min-procs processes or more spread over every "
     "rank of the mpirun job)", true},
    {"mpi-min-procs", OPT_INT, OFF(mpi_min_procs), 1, 1 << 20, "2",
     "with grid-backend mpi: the smallest grid (replicas x partitions) "
     "that runs across the ranks; smaller ones stay on rank 0", false},
    /* Per-team quotas: defaults for every team; a tokens-file line
     * `@TEAM running=2 rate=5` overrides them for one team. */
    {"team-max-running", OPT_INT, OFF(team_max_running), 0, 1 << 20, "0",
     "executions and registrations of one team running at once; more "
     "wait in the queue (0 = no cap)", false},
    {"team-max-queued", OPT_INT, OFF(team_max_queued), 0, 1 << 20, "0",
     "requests of one team waiting beyond team-max-running; more get 429 "
     "quota queued (needs team-max-running)", false},
    {"team-rate", OPT_INT, OFF(team_rate), 0, 1 << 20, "0",
     "requests per second of one team (a token bucket); more get 429 "
     "quota rate (0 = no cap)", false},
    {"team-burst", OPT_INT, OFF(team_burst), 0, 1 << 20, "0",
     "requests one team may send at once above team-rate (0 = one "
     "second's worth)", false},
    {"team-cache-bytes", OPT_SIZE, OFF(team_cache_bytes), 0, 1024 * GB, "0",
     "module cache bytes of one team: other teams cannot evict its modules "
     "below it, a registration past it gets 429 quota cache-bytes (0 = "
     "cache-bytes divided by the number of teams)", false},
    {"team-exec-memory", OPT_SIZE, OFF(team_exec_memory), 0, 1024 * GB, "0",
     "inputs and results of one team's executions at once; more get 429 "
     "quota exec-memory (0 = no cap)", false},
    /* Streaming executions (executions.c, PROTOCOL.md "Executions"). */
    {"max-executions", OPT_INT, OFF(max_executions), 0, 1 << 20, "64",
     "asynchronous executions running at once (429; 0 = none allowed)",
     false},
    {"max-client-executions", OPT_INT, OFF(max_client_executions), 0,
     1 << 20, "8", "of those, per client (bearer token, else address; 429)",
     false},
    {"execution-keep-s", OPT_INT, OFF(execution_keep_s), 0, 86400, "300",
     "a finished execution's state and outputs are kept this long, then "
     "its id answers 404", false},
    {"execution-idle-ms", OPT_INT, OFF(execution_idle_ms), 1, 86400000,
     "30000", "a running or queued execution with no infeed writer and no "
     "outfeed reader connected this long is canceled (state \"canceled\")",
     false},
    {"stream-queue-bytes", OPT_SIZE, OFF(stream_queue_bytes), 1, 64 * GB,
     "64m", "tensor bytes one infeed, outfeed or host channel queue holds; "
     "a full infeed stops reading the upload, a full outfeed pauses the "
     "program", false},
    {"stream-queue-values", OPT_INT, OFF(stream_queue_values), 1, 1 << 24,
     "1024", "values one such queue holds", false},
    {"execution-workers", OPT_INT, OFF(execution_workers), 1, 4096, "64",
     "threads that run asynchronous executions, apart from the workers of "
     "`threads`: an execution waiting for its infeed holds one of these, "
     "never a compile or execute worker", true},
    {"execution-start-timeout-s", OPT_INT, OFF(execution_start_timeout_s),
     1, 86400, "30", "an asynchronous execution that waits this long for "
     "an execution worker (more running than execution-workers) ends "
     "unstarted (state \"canceled\", reason \"start_timeout\")", false},
    {"stream-idle-timeout-s", OPT_INT, OFF(stream_idle_timeout_s), 0, 86400,
     "30", "an infeed or host channel upload (HTTP) is ended (408) when "
     "its client sends no value this long while the server could take "
     "one; request-timeout-s does not apply to its body (0 = none)",
     false},
    {"shutdown-grace-ms", OPT_INT, OFF(shutdown_grace_ms), 0, 3600000,
     "10000", "on SIGINT/SIGTERM, time running executions get before they "
     "are canceled", false},
    {"console", OPT_INT, OFF(console), 0, 1, "1",
     "serve the web console under /console/ (0 = off: those paths answer "
     "404)", false},
    {"engine-threads", OPT_INT, OFF(engine_threads), 0, 256, "0",
     "threads of the engine's pool, which every execution's parallel steps "
     "share (0 = one per core; environment SHLO_THREADS)", true},
    {"no-fusion", OPT_BOOL, OFF(no_fusion), 0, 1, "0",
     "compile every elementwise op as its own step (for bug hunts)", true},
    {"fixed-threads", OPT_BOOL, OFF(fixed_threads), 0, 1, "0",
     "run every execution's parallel steps on all the engine's threads; by "
     "default a program that only moves data is timed now and then on its "
     "executing thread alone, and runs so while that is clearly faster",
     true},
    {"conv-general", OPT_BOOL, OFF(conv_general), 0, 1, "0",
     "run every convolution on the general im2col path, never the "
     "channels-last one (for bug hunts)", true},
    {"mpi-peer-timeout", OPT_INT, OFF(mpi_peer_timeout), 1, 86400, "60",
     "seconds an MPI grid waits for a silent peer rank before it fails "
     "(grid-backend mpi)", true},
    /* Observability (docs/observability.md). */
    {"trace-sample-rate", OPT_RATIO, OFF(trace_sample_ppm), 0, 1000000, "0",
     "share of executions traced without asking (0 to 1; \"trace\": true "
     "or the binary trace flag always traces): GET /v1/traces/{id}",
     false},
    {"trace-keep", OPT_INT, OFF(trace_keep), 0, 1 << 20, "256",
     "traces kept for GET /v1/traces/{id}; the oldest goes first (0 = "
     "none kept)", false},
    {"trace-keep-bytes", OPT_SIZE, OFF(trace_keep_bytes), 0, 64 * GB, "64m",
     "bytes the kept traces hold (their spans), all together; the oldest "
     "goes first",
     false},
    {"trace-keep-s", OPT_INT, OFF(trace_keep_s), 1, 86400 * 7, "600",
     "a kept trace answers 404 after this long", false},
    {"trace-max-spans", OPT_INT, OFF(trace_max_spans), 16, 1 << 20, "4096",
     "spans of one execution's trace; more are counted, not kept", false},
    {"metrics-max-modules", OPT_INT, OFF(metrics_max_modules), 0, 1000, "20",
     "modules with series of their own in /metrics (the busiest by "
     "requests); the others are summed as module=\"other\"", true},
    {"otlp-endpoint", OPT_STR, OFF(otlp_endpoint), 0, 0, "",
     "also export every recorded trace as OTLP/JSON spans: file:PATH (one "
     "request a line) or http://HOST:PORT/PATH of an OTLP/HTTP collector "
     "(port 4318, path /v1/traces by default); empty = off", true},
    {"log-format", OPT_STR, OFF(log_format), 0, 0, "text",
     "request log lines: text (key=value) or json (one object a line)",
     false},
};
#define N_OPTIONS (sizeof options / sizeof *options)

static const opt *find_opt(const char *name, size_t len) {
  for (size_t i = 0; i < N_OPTIONS; i++)
    if (strlen(options[i].name) == len && !strncmp(options[i].name, name, len))
      return &options[i];
  /* underscores spell the same option */
  char tmp[64];
  if (len >= sizeof tmp) return NULL;
  for (size_t i = 0; i < len; i++) tmp[i] = name[i] == '_' ? '-' : name[i];
  for (size_t i = 0; i < N_OPTIONS; i++)
    if (strlen(options[i].name) == len && !strncmp(options[i].name, tmp, len))
      return &options[i];
  return NULL;
}

static int set_opt(srv_config *c, const opt *o, const char *val,
                   const char *where) {
  void *field = (char *)c + o->offset;
  if (o->type == OPT_STR) {
    char *s = strdup(val);
    if (!s) return -1;
    free(*(char **)field);
    *(char **)field = s;
    return 0;
  }
  if (o->type == OPT_BOOL) {
    if (strcmp(val, "0") && strcmp(val, "1")) goto bad;
    *(int64_t *)field = val[0] == '1';
    return 0;
  }
  if (o->type == OPT_RATIO) {
    char *rend;
    errno = 0;
    double r = strtod(val, &rend);
    if (rend == val || *rend || errno || !(r >= 0 && r <= 1)) goto bad;
    *(int64_t *)field = (int64_t)(r * 1e6 + 0.5);
    return 0;
  }
  errno = 0;
  char *end;
  long long v = strtoll(val, &end, 10);
  if (end == val || errno) goto bad;
  if (o->type == OPT_SIZE) {
    long long mul = 1;
    switch (*end) {
    case 'k': case 'K': mul = KB; end++; break;
    case 'm': case 'M': mul = MB; end++; break;
    case 'g': case 'G': mul = GB; end++; break;
    }
    if (*end == 'b' || *end == 'B') end++;
    if (v > INT64_MAX / mul) goto bad;
    v *= mul;
  }
  if (*end) goto bad;
  if (v < o->min || v > o->max) {
    fprintf(stderr, "shlo-server: %s: %s must be in [%lld, %lld], got %s\n",
            where, o->name, (long long)o->min, (long long)o->max, val);
    return -1;
  }
  *(int64_t *)field = v;
  return 0;
bad:
  fprintf(stderr, "shlo-server: %s: %s: bad value '%s'%s\n", where, o->name,
          val, o->type == OPT_SIZE   ? " (an integer, optional k/m/g)"
               : o->type == OPT_BOOL ? " (0 or 1)"
               : o->type == OPT_RATIO ? " (a number from 0 to 1)"
                                     : "");
  return -1;
}

void srv_config_defaults(srv_config *c) {
  memset(c, 0, sizeof *c);
  for (size_t i = 0; i < N_OPTIONS; i++) set_opt(c, &options[i], options[i].def, "defaults");
}

void srv_config_free(srv_config *c) {
  for (size_t i = 0; i < N_OPTIONS; i++)
    if (options[i].type == OPT_STR) {
      free(*(char **)((char *)c + options[i].offset));
      *(char **)((char *)c + options[i].offset) = NULL;
    }
}

#define CONFIG_LINE_MAX 4096

/* The next line of f into buf (CONFIG_LINE_MAX bytes; its newline kept,
 * NULs too): its length, 0 at the end of the file.  A longer line stops
 * at CONFIG_LINE_MAX bytes, so a file with no line breaks (/dev/zero)
 * costs no more memory than one line. */
static size_t next_line(FILE *f, char *buf) {
  size_t n = 0;
  int ch;
  while (n < CONFIG_LINE_MAX - 1 && (ch = getc(f)) != EOF) {
    buf[n++] = (char)ch;
    if (ch == '\n') break;
  }
  buf[n] = 0;
  return n;
}

/* Why a config-file line of len bytes (its newline included) cannot be
 * one, or NULL: a file of other bytes (a binary, a key) must not pass for
 * comments and blanks, nor put control bytes in the error message. */
static const char *bad_line(const char *line, size_t len, char *why,
                            size_t cap) {
  if (len >= CONFIG_LINE_MAX - 1 && line[len - 1] != '\n')
    return "a line longer than 4094 bytes";
  for (size_t i = 0; i < len; i++) {
    unsigned char b = (unsigned char)line[i];
    if ((b < 0x20 && b != '\t' && b != '\r' && b != '\n') || b == 0x7f) {
      snprintf(why, cap, "a control byte (0x%02x): not a config file", b);
      return why;
    }
  }
  return NULL;
}

/* One `name value` line (no control bytes) into c; -1 after a message. */
static int load_line(srv_config *c, char *line, const char *where) {
  char *p = line;
  while (*p == ' ' || *p == '\t') p++;
  if (*p == '#' || *p == '\n' || *p == '\r' || !*p) return 0;
  char *e = p + strcspn(p, " \t=\r\n");
  size_t klen = (size_t)(e - p);
  while (*e == ' ' || *e == '\t' || *e == '=') e++;
  char *v = e;
  v[strcspn(v, "\n")] = 0;
  for (char *t = v + strlen(v); t > v && (t[-1] == ' ' || t[-1] == '\t' || t[-1] == '\r');) *--t = 0;
  if (*v == '"' && strlen(v) >= 2 && v[strlen(v) - 1] == '"') {
    v[strlen(v) - 1] = 0;
    v++;
  }
  const opt *o = find_opt(p, klen);
  if (!o || !strcmp(o->name, "config")) {
    fprintf(stderr, "shlo-server: %s: unknown option '%.*s'\n", where,
            (int)(klen > 64 ? 64 : klen), p);
    return -1;
  }
  return set_opt(c, o, v, where);
}

/* The config file: every failure is one line on stderr naming the file
 * (main exits 2; a reload keeps the configuration in force).  A file of
 * no bytes at all is refused, as an unpopulated mount or a truncated copy
 * would be: one that means "defaults" holds at least a comment. */
static int load_file(srv_config *c, const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) {
    fprintf(stderr, "shlo-server: config file %s: %s\n", path,
            strerror(errno));
    return -1;
  }
  char line[CONFIG_LINE_MAX], where[4200], why[80];
  int n = 0, rc = 0;
  size_t len;
  while ((len = next_line(f, line)) > 0) {
    n++;
    snprintf(where, sizeof where, "config file %s:%d", path, n);
    const char *bad = bad_line(line, len, why, sizeof why);
    if (bad) fprintf(stderr, "shlo-server: %s: %s\n", where, bad);
    if (bad || load_line(c, line, where)) {
      rc = -1;
      break;
    }
  }
  /* a directory opens, then fails to read (EISDIR) */
  if (!rc && ferror(f)) {
    fprintf(stderr, "shlo-server: config file %s: cannot read: %s\n", path,
            strerror(errno));
    rc = -1;
  } else if (!rc && n == 0) {
    fprintf(stderr, "shlo-server: config file %s is empty (0 bytes); a "
                    "file that means the defaults holds a comment\n", path);
    rc = -1;
  }
  fclose(f);
  return rc;
}

/* The environment variable of an option: SHLO_ and the name in capitals
 * with '_' for '-' (SHLO_PORT, SHLO_MAX_BODY_BYTES), so a container or a
 * unit file configures the server without a file.  SHLO_THREADS has
 * always been the engine's pool size (the CLI's too), so it names the
 * option `engine-threads`, and the option `threads` takes
 * SHLO_SERVER_THREADS. */
static void env_name(const opt *o, char *out, size_t cap) {
  if (!strcmp(o->name, "engine-threads")) {
    snprintf(out, cap, "SHLO_THREADS");
    return;
  }
  const char *prefix = strcmp(o->name, "threads") ? "SHLO_" : "SHLO_SERVER_";
  size_t n = (size_t)snprintf(out, cap, "%s", prefix);
  for (const char *p = o->name; *p && n + 1 < cap; p++)
    out[n++] = *p == '-' ? '_' : (char)(*p >= 'a' && *p <= 'z' ? *p - 32 : *p);
  out[n] = 0;
}

/* Apply every option's environment variable that is set (the config file
 * is read before, flags after: flags > environment > file > defaults).
 * SHLO_CONFIG is read by srv_config_load itself, as --config is. */
static int load_env(srv_config *c) {
  char var[64], where[80];
  for (size_t i = 0; i < N_OPTIONS; i++) {
    if (!strcmp(options[i].name, "config")) continue;
    env_name(&options[i], var, sizeof var);
    const char *v = getenv(var);
    if (!v) continue;
    snprintf(where, sizeof where, "environment %s", var);
    if (set_opt(c, &options[i], v, where)) return -1;
  }
  return 0;
}

/* text as # comment lines of at most ~76 columns. */
static void print_comment(FILE *f, const char *text) {
  const char *p = text;
  while (*p) {
    size_t n = strlen(p);
    if (n > 74) {
      n = 74;
      while (n > 0 && p[n] != ' ') n--;
      if (n == 0) n = strcspn(p, " ");
    }
    fprintf(f, "# %.*s\n", (int)n, p);
    p += n;
    while (*p == ' ') p++;
  }
}

/* A size the way one would write it: 64m rather than 67108864. */
static void print_size(FILE *f, long long v) {
  static const struct { long long mul; char c; } units[] = {
      {GB, 'g'}, {MB, 'm'}, {KB, 'k'}};
  for (size_t i = 0; v && i < sizeof units / sizeof *units; i++)
    if (v % units[i].mul == 0) {
      fprintf(f, "%lld%c", v / units[i].mul, units[i].c);
      return;
    }
  fprintf(f, "%lld", v);
}

/* A config file holding every option with the value c gives it, each
 * under its help text: `shlo-server --print-config` writes
 * deploy/shlo.conf from the table itself, so that file cannot drift. */
static void print_config_file(const srv_config *c, FILE *f) {
  char var[64], text[512];
  fprintf(f, "# shlo-server configuration: `name value` per line, # comments.\n"
             "# Written by `shlo-server --print-config` (every option, with "
             "its default\n# unless flags or the environment changed it).  "
             "Precedence: flags >\n# environment (the variable named with "
             "each option) > this file > defaults.\n");
  for (size_t i = 0; i < N_OPTIONS; i++) {
    const opt *o = &options[i];
    const void *field = (const char *)c + o->offset;
    env_name(o, var, sizeof var);
    snprintf(text, sizeof text, "%s [%s]", o->help, var);
    fputc('\n', f);
    print_comment(f, text);
    if (!strcmp(o->name, "config")) {
      fprintf(f, "# (config names this file: a flag or %s only)\n", var);
    } else if (o->type == OPT_STR) {
      const char *v = *(char *const *)field ? *(char *const *)field : "";
      fprintf(f, *v ? "%s %s\n" : "%s \"%s\"\n", o->name, v);
    } else {
      fprintf(f, "%s ", o->name);
      if (o->type == OPT_SIZE) print_size(f, (long long)*(const int64_t *)field);
      else if (o->type == OPT_RATIO)
        fprintf(f, "%g", (double)*(const int64_t *)field / 1e6);
      else fprintf(f, "%lld", (long long)*(const int64_t *)field);
      fputc('\n', f);
    }
  }
}

static void usage(void) {
  char var[64];
  printf("usage: shlo-server [--NAME VALUE]... [--print-config] [--version]\n\n"
         "Every option is also a config-file key (`NAME VALUE`) and an\n"
         "environment variable (in brackets); flags > environment > file.\n"
         "--print-config writes the effective configuration as a file.\n\n");
  for (size_t i = 0; i < N_OPTIONS; i++) {
    env_name(&options[i], var, sizeof var);
    printf("  --%-22s %s (default: %s) [%s]\n", options[i].name,
           options[i].help, *options[i].def ? options[i].def : "none", var);
  }
  printf("\nExit status: 0 after a clean stop (SIGINT/SIGTERM); 2 when it "
         "cannot start\nas configured: a bad option, a file it reads "
         "(config, tokens, tls-cert,\ntls-key, store directory) or writes "
         "(log, audit-log) missing, empty,\nunreadable or malformed, or an "
         "address it cannot listen on -- one line on\nstderr names the "
         "file; 1 for a failure while serving (out of memory).\nSIGHUP "
         "reloads the config and tokens files; one with errors changes "
         "nothing\nand the reason is logged.\n");
}

/* --config FILE, else $SHLO_CONFIG: read it first so the environment and
 * flags override it. */
static int load_config_file(srv_config *c, int argc, char **argv) {
  const char *path = NULL;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--config") && i + 1 < argc) path = argv[++i];
    else if (!strncmp(argv[i], "--config=", 9)) path = argv[i] + 9;
  }
  if (!path && (path = getenv("SHLO_CONFIG")) && !*path) path = NULL;
  if (!path) return 0;
  if (set_opt(c, find_opt("config", 6), path, "--config")) return -1;
  return load_file(c, path);
}

int srv_config_load(srv_config *c, int argc, char **argv) {
  bool print = false;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      usage();
      return 1;
    }
    if (!strcmp(argv[i], "--version")) { /* the lines `shlo --version` prints */
      printf("shlo-server %s\n"
             "StableHLO read: text, and portable artifacts (VHLO) of "
             "StableHLO up to %s\n"
             "StableHLO written: portable artifacts for StableHLO %s through "
             "%s\n"
             "MLIR bytecode formats: read 0 through 6, written 6\n",
             shlo_version(), SHLO_ARTIFACT_MAX_VERSION,
             SHLO_ARTIFACT_MIN_WRITE_VERSION, SHLO_ARTIFACT_MAX_VERSION);
      return 1;
    }
  }
  if (load_config_file(c, argc, argv) || load_env(c)) return -1;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--print-config")) {
      print = true;
      continue;
    }
    if (strncmp(a, "--", 2)) {
      fprintf(stderr, "shlo-server: unexpected argument '%s' (see --help)\n", a);
      return -1;
    }
    a += 2;
    const char *eq = strchr(a, '=');
    size_t klen = eq ? (size_t)(eq - a) : strlen(a);
    const opt *o = find_opt(a, klen);
    if (!o) {
      fprintf(stderr, "shlo-server: unknown option '--%.*s' (see --help)\n",
              (int)klen, a);
      return -1;
    }
    const char *val = eq ? eq + 1 : NULL;
    if (!val && o->type == OPT_BOOL) val = "1"; /* `--insecure` */
    if (!val) {
      if (i + 1 >= argc) {
        fprintf(stderr, "shlo-server: --%s needs a value\n", o->name);
        return -1;
      }
      val = argv[++i];
    }
    if (!strcmp(o->name, "config")) continue; /* done above */
    if (set_opt(c, o, val, "command line")) return -1;
  }
  if (strcmp(c->log_format, "text") && strcmp(c->log_format, "json")) {
    fprintf(stderr, "shlo-server: log-format must be text or json, got "
                    "'%s'\n", c->log_format);
    return -1;
  }
  if (print) {
    print_config_file(c, stdout);
    return 1;
  }
  if (c->threads == 0) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    c->threads = n > 0 ? n : 1;
  }
  return 0;
}

void srv_config_print(const srv_config *c, void *file) {
  FILE *f = file;
  for (size_t i = 0; i < N_OPTIONS; i++) {
    const void *field = (const char *)c + options[i].offset;
    if (options[i].type == OPT_STR)
      fprintf(f, "%s%s=%s", i ? " " : "", options[i].name,
              *(char *const *)field ? *(char *const *)field : "");
    else if (options[i].type == OPT_RATIO)
      fprintf(f, " %s=%g", options[i].name,
              (double)*(const int64_t *)field / 1e6);
    else
      fprintf(f, "%s%s=%lld", i ? " " : "", options[i].name,
              (long long)*(const int64_t *)field);
  }
  fputc('\n', f);
}

/* An option's value as text, for the reload log. */
static void value_text(const srv_config *c, const opt *o, char *out,
                       size_t cap) {
  const void *field = (const char *)c + o->offset;
  if (o->type == OPT_STR) {
    const char *v = *(char *const *)field;
    snprintf(out, cap, "%s", v ? v : "");
  } else if (o->type == OPT_RATIO) {
    snprintf(out, cap, "%g", (double)*(const int64_t *)field / 1e6);
  } else {
    snprintf(out, cap, "%lld", (long long)*(const int64_t *)field);
  }
}

int srv_config_reload(srv_config *cur, const srv_config *next, void *log) {
  FILE *f = log;
  int changed = 0;
  char was[256], now[256];
  for (size_t i = 0; i < N_OPTIONS; i++) {
    const opt *o = &options[i];
    value_text(cur, o, was, sizeof was);
    value_text(next, o, now, sizeof now);
    /* threads 0 means one per core: compare what it resolved to */
    if (!strcmp(o->name, "threads") && next->threads == 0) continue;
    if (!strcmp(was, now)) continue;
    changed++;
    if (o->restart) {
      fprintf(f, "shlo-server: reload: %s %s -> %s needs a restart; kept %s\n",
              o->name, was, now, was);
      continue;
    }
    fprintf(f, "shlo-server: reload: %s %s -> %s\n", o->name, was, now);
    if (o->type == OPT_STR) set_opt(cur, o, now, "reload");
    else
      *(int64_t *)((char *)cur + o->offset) =
          *(const int64_t *)((const char *)next + o->offset);
  }
  return changed;
}
