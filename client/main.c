/* SPDX-License-Identifier: Apache-2.0 */
/* The `shlo` command: dispatch to its subcommands. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "shlo/artifact.h"
#include "shlo/context.h"
#include "shlo/version.h"

/* The engine reads no environment variable: the CLI maps the ones it has
 * always obeyed onto the default context's options before anything runs
 * (SHLO_THREADS: threads; SHLO_NO_FUSION, SHLO_CONV_GENERAL,
 * SHLO_FIXED_THREADS: set at all
 * means on; SHLO_MPI_PEER_TIMEOUT: seconds; OPENBLAS_CORETYPE set: keep
 * the BLAS core the user chose). */
static void engine_from_env(void) {
  shlo_context_options o;
  shlo_context_options_init(&o);
  const char *v = getenv("SHLO_THREADS");
  if (v && atoi(v) > 0) o.threads = atoi(v);
  o.no_fusion = getenv("SHLO_NO_FUSION") != NULL;
  o.conv_general = getenv("SHLO_CONV_GENERAL") != NULL;
  v = getenv("SHLO_MPI_PEER_TIMEOUT");
  if (v && atof(v) > 0) o.mpi_peer_timeout_s = atof(v);
  o.blas_keep_core = getenv("OPENBLAS_CORETYPE") != NULL;
  o.fixed_threads = getenv("SHLO_FIXED_THREADS") != NULL;
  /* nothing has used the engine yet, so this cannot fail */
  (void)shlo_default_context_configure(&o);
}

static void usage(FILE *f) {
  fprintf(f,
          "usage: shlo <command> [options]\n"
          "\n"
          "commands:\n"
          "  run FILE.mlir [--args \"[dense<...> : tensor<...>, ...]\"] "
          "[--entry NAME] [--explain]\n"
          "      [--replicas R] [--partitions P] [--infeed FILE] "
          "[--server URL]\n"
          "      run the entry function (@main, or the only function) and "
          "print its results\n"
          "      (on a process grid: each process's results and outfeed)\n"
          "  test [--timeout SECONDS] [--in-process] [--check-context] "
          "[--server URL] "
          "PATH...\n"
          "      run every case (split at '// -----') of the .mlir files "
          "under PATH and evaluate\n"
          "      their checks; prints PASS/FAIL/SKIP per case and a summary "
          "line;\n"
          "      a .json file is a case of a JAX export (program, inputs, "
          "expected_outputs; docs/jax-export.md);\n"
          "      --in-process runs cases without a child process each (for "
          "leak checkers)\n"
          "  verify [--expect-diagnostics] [--quiet] PATH...\n"
          "      verify every case of the .mlir files under PATH against the "
          "spec's constraints;\n"
          "      prints each diagnostic and a summary line; with "
          "--expect-diagnostics a case\n"
          "      passes when errors fall exactly on its expected-error "
          "lines\n"
          "  bench FILE.mlir [--runs N] [--warmup N] [--int-range N] "
          "[--profile | --server URL]\n"
          "      time the entry function on generated inputs (see "
          "../shared/bench/README.md)\n"
          "  --server URL (shlo://host:port or http://host:port; token from "
          "$SHLO_TOKEN)\n"
          "      runs at a shlo-server and prints what the local run "
          "prints\n"
          "  print [--lowered] FILE.mlir\n"
          "      parse FILE and print it back in generic form\n"
          "  serialize [--target VERSION] [--no-test-args] FILE.mlir -o "
          "FILE.mlir.bc\n"
          "      write FILE as a portable artifact (VHLO bytecode) for "
          "StableHLO VERSION\n"
          "      (1.0.0 up to the newest this build reads, the default), "
          "with its RUN line's\n"
          "      --args as the attribute shlo.test_args unless "
          "--no-test-args\n"
          "  --version\n"
          "      the shlo version, the StableHLO versions read and written, "
          "the bytecode formats\n"
          "`shlo COMMAND --help` lists a command's options; docs/cli.md has "
          "them all.\n");
}

/* shlo --version: what this build reads and writes (shlo-server
 * --version prints the same lines). */
static int version(void) {
  printf("shlo %s\n"
         "StableHLO read: text, and portable artifacts (VHLO) of StableHLO "
         "up to %s\n"
         "StableHLO written: portable artifacts for StableHLO %s through %s\n"
         "MLIR bytecode formats: read 0 through 6, written 6\n",
         shlo_version(), SHLO_ARTIFACT_MAX_VERSION,
         SHLO_ARTIFACT_MIN_WRITE_VERSION, SHLO_ARTIFACT_MAX_VERSION);
  return 0;
}

/* `shlo CMD --help` for the commands whose parsers do not take it. */
static bool wants_help(int argc, char **argv) {
  for (int i = 2; i < argc; i++)
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) return true;
  return false;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  const char *cmd = argv[1];
  if (!strcmp(cmd, "--version") || !strcmp(cmd, "version")) return version();
  if (wants_help(argc, argv) && cli_help(cmd)) return 0;
  engine_from_env();
  if (!strcmp(cmd, "run")) return cli_run(argc - 2, argv + 2);
  if (!strcmp(cmd, "test")) return cli_test(argc - 2, argv + 2);
  if (!strcmp(cmd, "verify")) return cli_verify(argc - 2, argv + 2);
  if (!strcmp(cmd, "print")) return cli_print(argc - 2, argv + 2);
  if (!strcmp(cmd, "bench")) return cli_bench(argc - 2, argv + 2);
  if (!strcmp(cmd, "serialize")) return cli_serialize(argc - 2, argv + 2);
  if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
    usage(stdout);
    return 0;
  }
  fprintf(stderr, "shlo: unknown command '%s'\n", cmd);
  usage(stderr);
  return 2;
}
