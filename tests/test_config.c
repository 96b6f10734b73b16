/* SPDX-License-Identifier: Apache-2.0 */
/* The server's option table (server/src/config.c): every option parses
 * from flags and from a config file, bounds are enforced, bad values are
 * refused with a message naming the option, the defaults are the ones
 * --help documents, the environment sits between file and flags, and
 * --print-config writes a file that reads back the same. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "config.h"

/* Run srv_config_load on the arguments with fd (1 or 2) captured; returns
 * its result and leaves what it printed in out. */
static int load_captured(srv_config *c, int fd, char *out, size_t cap,
                         int argc, char **argv) {
  fflush(NULL);
  FILE *tmp = tmpfile();
  assert_non_null(tmp);
  int saved = dup(fd);
  dup2(fileno(tmp), fd);
  int rc = srv_config_load(c, argc, argv);
  fflush(NULL);
  dup2(saved, fd);
  close(saved);
  rewind(tmp);
  size_t n = fread(out, 1, cap - 1, tmp);
  out[n] = 0;
  fclose(tmp);
  return rc;
}

/* srv_config_load on defaults with one "--name=value" flag. */
static int load_one(srv_config *c, const char *flag, char *err, size_t cap) {
  srv_config_defaults(c);
  char *argv[] = {"shlo-server", (char *)flag, NULL};
  return load_captured(c, 2, err, cap, 2, argv);
}

static void every_option_parses(void **state) {
  (void)state;
  static const struct {
    const char *flag;
    size_t off;
    int64_t want;
  } ints[] = {
      {"--port=9000", offsetof(srv_config, port), 9000},
      {"--threads=3", offsetof(srv_config, threads), 3},
      {"--worker-spin-us=50", offsetof(srv_config, worker_spin_us), 50},
      {"--inline-max-work=0", offsetof(srv_config, inline_max_work), 0},
      {"--max-body-bytes=2k", offsetof(srv_config, max_body_bytes), 2048},
      {"--max-tensor-elements=7", offsetof(srv_config, max_tensor_elements), 7},
      {"--max-tensor-bytes=3MB", offsetof(srv_config, max_tensor_bytes),
       3 << 20},
      {"--max-inputs=0", offsetof(srv_config, max_inputs), 0},
      {"--max-exec-memory=2g", offsetof(srv_config, max_exec_memory),
       2LL << 30},
      {"--default-timeout-ms=5", offsetof(srv_config, default_timeout_ms), 5},
      {"--max-timeout-ms=6", offsetof(srv_config, max_timeout_ms), 6},
      {"--max-queue=8", offsetof(srv_config, max_queue), 8},
      {"--cache-bytes=0", offsetof(srv_config, cache_bytes), 0},
      {"--max-connections=9", offsetof(srv_config, max_connections), 9},
      {"--connection-timeout-s=10", offsetof(srv_config, connection_timeout_s),
       10},
      {"--shutdown-grace-ms=11", offsetof(srv_config, shutdown_grace_ms), 11},
      {"--max_queue=12", offsetof(srv_config, max_queue), 12}, /* '_' = '-' */
  };
  char err[512];
  for (size_t i = 0; i < sizeof ints / sizeof *ints; i++) {
    srv_config c;
    if (load_one(&c, ints[i].flag, err, sizeof err))
      fail_msg("%s refused: %s", ints[i].flag, err);
    assert_int_equal(*(int64_t *)((char *)&c + ints[i].off), ints[i].want);
    srv_config_free(&c);
  }
  srv_config c;
  srv_config_defaults(&c);
  char *argv[] = {"shlo-server", "--host", "0.0.0.0", "--tokens=t.txt",
                  "--log", "off", NULL};
  assert_int_equal(load_captured(&c, 2, err, sizeof err, 6, argv), 0);
  assert_string_equal(c.host, "0.0.0.0");
  assert_string_equal(c.tokens_file, "t.txt");
  assert_string_equal(c.log, "off");
  srv_config_free(&c);
}

static void expect_refused(const char *flag, const char *needle) {
  srv_config c;
  char err[512];
  assert_int_equal(load_one(&c, flag, err, sizeof err), -1);
  if (!strstr(err, needle)) fail_msg("%s: \"%s\" lacks \"%s\"", flag, err, needle);
  srv_config_free(&c);
}

static void bounds_are_enforced(void **state) {
  (void)state;
  expect_refused("--port=65536", "port must be in [0, 65535], got 65536");
  expect_refused("--port=-1", "port must be in [0, 65535]");
  expect_refused("--threads=1025", "threads must be in [0, 1024]");
  expect_refused("--max-body-bytes=0", "max-body-bytes must be in [1, ");
  expect_refused("--max-tensor-bytes=65g", "max-tensor-bytes must be in");
  expect_refused("--default-timeout-ms=0", "default-timeout-ms must be in");
  /* the bounds themselves are accepted */
  srv_config c;
  char err[512];
  assert_int_equal(load_one(&c, "--port=65535", err, sizeof err), 0);
  assert_int_equal(c.port, 65535);
  srv_config_free(&c);
  assert_int_equal(load_one(&c, "--max-tensor-bytes=64g", err, sizeof err), 0);
  assert_int_equal(c.max_tensor_bytes, 64LL << 30);
  srv_config_free(&c);
}

static void bad_values_name_the_option(void **state) {
  (void)state;
  expect_refused("--port=abc", "port: bad value 'abc'");
  expect_refused("--port=80x", "port: bad value '80x'");
  expect_refused("--cache-bytes=12q", "cache-bytes: bad value '12q' (an "
                 "integer, optional k/m/g)");
  expect_refused("--cache-bytes=99999999999999999g", "cache-bytes: bad value");
  expect_refused("--max-queue=", "max-queue: bad value ''");
  expect_refused("--no-such=1", "unknown option '--no-such'");
  expect_refused("--port", "--port needs a value");
  expect_refused("port=1", "unexpected argument 'port=1'");
}

static void config_files_parse_and_flags_win(void **state) {
  (void)state;
  char path[] = "/tmp/shlo-test-config-XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  const char *text = "# comment\n\n  port 9100\nmax_queue = 5\n"
                     "host \"::1\"\ncache-bytes 1k\n";
  assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
  close(fd);
  srv_config c;
  srv_config_defaults(&c);
  char err[512];
  char *argv[] = {"shlo-server", "--max-queue=6", "--config", path, NULL};
  assert_int_equal(load_captured(&c, 2, err, sizeof err, 4, argv), 0);
  assert_int_equal(c.port, 9100);
  assert_int_equal(c.max_queue, 6); /* the flag overrides the file */
  assert_string_equal(c.host, "::1");
  assert_int_equal(c.cache_bytes, 1024);
  srv_config_free(&c);
  /* An unknown key or a bad value names the file and line. */
  FILE *f = fopen(path, "w");
  fputs("port 1\nmax-queue lots\n", f);
  fclose(f);
  srv_config_defaults(&c);
  char *argv2[] = {"shlo-server", "--config", path, NULL};
  assert_int_equal(load_captured(&c, 2, err, sizeof err, 3, argv2), -1);
  char want[128];
  snprintf(want, sizeof want, "%s:2: max-queue: bad value 'lots'", path);
  assert_non_null(strstr(err, want));
  srv_config_free(&c);
  unlink(path);
}

/* Every "--NAME ... (default: X)" line of --help, applied as a flag, must
 * leave the defaults as they are; and the documented values are these. */
static void defaults_are_as_documented(void **state) {
  (void)state;
  srv_config c;
  srv_config_defaults(&c);
  static char help[16384]; /* --help grows with the table */
  char *argv[] = {"shlo-server", "--help", NULL};
  assert_int_equal(load_captured(&c, 1, help, sizeof help, 2, argv), 1);
  int n = 0;
  for (char *line = strtok(help, "\n"); line; line = strtok(NULL, "\n")) {
    char name[64], *d = strstr(line, "(default: ");
    if (sscanf(line, " --%63s", name) != 1 || !d) continue;
    n++;
    char val[64];
    assert_int_equal(sscanf(d, "(default: %63[^)])", val), 1);
    if (!strcmp(val, "none")) val[0] = 0;
    if (!strcmp(name, "config")) continue; /* names a file to read */
    char flag[160];
    snprintf(flag, sizeof flag, "--%s=%s", name, val);
    srv_config d2;
    char err[256];
    if (load_one(&d2, flag, err, sizeof err)) fail_msg("%s: %s", flag, err);
    srv_config base;
    load_one(&base, "--max-queue=64", err, sizeof err); /* the default */
    assert_memory_equal((char *)&d2 + offsetof(srv_config, max_body_bytes),
                        (char *)&base + offsetof(srv_config, max_body_bytes),
                        sizeof d2 - offsetof(srv_config, max_body_bytes));
    assert_int_equal(d2.port, base.port);
    assert_int_equal(d2.binary_port, base.binary_port);
    srv_config_free(&d2);
    srv_config_free(&base);
  }
  assert_int_equal(n, 71); /* binary-port, issue #10's caps, compile bounds,
                            issue #14: insecure, audit-log, six team-*,
                            store, tls-cert, tls-key,
                            issue #18: grid-backend, mpi-min-procs,
                            issue #13: executions and stream queues (6),
                            issue #20: console,
                            issue #11: inline-max-work,
                            issue #30: max-pending-body-bytes,
                            frame-timeout-s, max-json-answer-bytes,
                            execution-workers, execution-start-timeout-s,
                            stream-idle-timeout-s,
                            max-nesting-depth,

                            issue #31: engine-threads, no-fusion,
                            conv-general, mpi-peer-timeout,
                            issue #35: trace-sample-rate, trace-keep,
                            trace-keep-bytes, trace-keep-s,
                            trace-max-spans, metrics-max-modules,
                            otlp-endpoint, log-format,
                            issue #34: model-repository,
                            model-control-mode, repository-poll-secs,
                            issue #37: fixed-threads */
  srv_config_free(&c);
  srv_config_defaults(&c);
  assert_string_equal(c.host, "127.0.0.1");
  assert_int_equal(c.port, 8080);
  assert_int_equal(c.max_body_bytes, 96 << 20); /* a 64 MiB tensor as b64 */
  assert_int_equal(c.max_tensor_elements, 67108864);
  assert_int_equal(c.max_tensor_bytes, 256 << 20);
  assert_int_equal(c.max_inputs, 1024);
  assert_int_equal(c.max_exec_memory, 1 << 30);
  assert_int_equal(c.default_timeout_ms, 30000);
  assert_int_equal(c.max_timeout_ms, 300000);
  assert_int_equal(c.max_queue, 64);
  assert_int_equal(c.cache_bytes, 256 << 20);
  assert_int_equal(c.connection_timeout_s, 60);
  assert_int_equal(c.max_connections, 4096);
  assert_int_equal(c.max_connections_per_ip, 256);
  assert_int_equal(c.request_timeout_s, 30);
  assert_int_equal(c.max_client_jobs, 32);
  assert_int_equal(c.short_lane_workers, 1);
  assert_int_equal(c.max_client_running, 0);
  assert_int_equal(c.max_program_ops, 1000000);
  assert_int_equal(c.compile_timeout_ms, 10000);
  assert_int_equal(c.max_nesting_depth, 256); /* SHLO_DEFAULT_MAX_DEPTH */
  assert_int_equal(c.console, 1); /* the web console is on by default */
  srv_config_free(&c);
}

/* A temporary file holding text; its path in path (char[32]). */
static void write_temp(char *path, const char *text) {
  strcpy(path, "/tmp/shlo-test-config-XXXXXX");
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
  close(fd);
}

/* Each option's SHLO_... variable sits between the file and the flags;
 * SHLO_CONFIG names the file when no --config does; SHLO_THREADS stays the
 * engine's (option engine-threads) and SHLO_SERVER_THREADS is the server's;
 * a bad value names the
 * variable. */
static void environment_between_file_and_flags(void **state) {
  (void)state;
  char path[32], err[512];
  write_temp(path, "port 1\nmax-queue 5\ncache-bytes 2k\n");
  setenv("SHLO_CONFIG", path, 1);
  setenv("SHLO_PORT", "2", 1);
  setenv("SHLO_CACHE_BYTES", "1m", 1);
  setenv("SHLO_TOKENS", "/etc/t", 1);
  setenv("SHLO_THREADS", "7", 1);
  setenv("SHLO_SERVER_THREADS", "3", 1);
  srv_config c;
  srv_config_defaults(&c);
  char *argv[] = {"shlo-server", "--port=3", NULL};
  assert_int_equal(load_captured(&c, 2, err, sizeof err, 2, argv), 0);
  assert_int_equal(c.port, 3);              /* flag over environment */
  assert_int_equal(c.cache_bytes, 1 << 20); /* environment over file */
  assert_int_equal(c.max_queue, 5);         /* the file SHLO_CONFIG named */
  assert_string_equal(c.tokens_file, "/etc/t");
  assert_int_equal(c.threads, 3);
  assert_int_equal(c.engine_threads, 7); /* the engine's, via its option */
  srv_config_free(&c);
  setenv("SHLO_MAX_QUEUE", "many", 1);
  srv_config_defaults(&c);
  assert_int_equal(load_captured(&c, 2, err, sizeof err, 1, argv), -1);
  assert_non_null(strstr(err, "environment SHLO_MAX_QUEUE: max-queue: bad "
                              "value 'many'"));
  srv_config_free(&c);
  const char *vars[] = {"SHLO_CONFIG", "SHLO_PORT", "SHLO_CACHE_BYTES",
                        "SHLO_TOKENS", "SHLO_THREADS", "SHLO_SERVER_THREADS",
                        "SHLO_MAX_QUEUE"};
  for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) unsetenv(vars[i]);
  unlink(path);
}

/* --print-config writes a config file that, read back, gives the same
 * configuration (every option, strings and sizes included). */
static void print_config_round_trips(void **state) {
  (void)state;
  static char text[16384];
  char err[512], path[32];
  srv_config a, b;
  srv_config_defaults(&a);
  char *argv[] = {"shlo-server", "--port=1234", "--tokens=/x y",
                  "--max-body-bytes=3k", "--cache-bytes=1000",
                  "--log=off", "--print-config", NULL};
  assert_int_equal(load_captured(&a, 1, text, sizeof text, 7, argv), 1);
  assert_non_null(strstr(text, "\nmax-body-bytes 3k\n"));
  assert_non_null(strstr(text, "\ncache-bytes 1000\n"));
  write_temp(path, text);
  srv_config_defaults(&b);
  char *argv2[] = {"shlo-server", "--config", path, NULL};
  assert_int_equal(load_captured(&b, 2, err, sizeof err, 3, argv2), 0);
  assert_int_equal(b.port, 1234);
  assert_string_equal(b.tokens_file, "/x y");
  assert_string_equal(b.log, "off");
  assert_string_equal(b.host, a.host);
  assert_memory_equal((char *)&a + offsetof(srv_config, max_body_bytes),
                      (char *)&b + offsetof(srv_config, max_body_bytes),
                      sizeof a - offsetof(srv_config, max_body_bytes));
  srv_config_free(&a);
  srv_config_free(&b);
  unlink(path);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_option_parses),
      cmocka_unit_test(bounds_are_enforced),
      cmocka_unit_test(bad_values_name_the_option),
      cmocka_unit_test(config_files_parse_and_flags_win),
      cmocka_unit_test(defaults_are_as_documented),
      cmocka_unit_test(environment_between_file_and_flags),
      cmocka_unit_test(print_config_round_trips),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
