/* The `shlo` command: dispatch to its subcommands. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: shlo <command> [options]\n"
          "\n"
          "commands:\n"
          "  run FILE.mlir [--args \"[dense<...> : tensor<...>, ...]\"] "
          "[--entry NAME] [--explain]\n"
          "      run the entry function (@main, or the only function) and "
          "print its results\n"
          "  test [--timeout SECONDS] PATH...\n"
          "      run every case (split at '// -----') of the .mlir files "
          "under PATH and evaluate\n"
          "      their checks; prints PASS/FAIL/SKIP per case and a summary "
          "line\n"
          "  print FILE.mlir\n"
          "      parse FILE and print it back in generic form\n");
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  const char *cmd = argv[1];
  if (!strcmp(cmd, "run")) return cli_run(argc - 2, argv + 2);
  if (!strcmp(cmd, "test")) return cli_test(argc - 2, argv + 2);
  if (!strcmp(cmd, "print")) return cli_print(argc - 2, argv + 2);
  if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
    usage(stdout);
    return 0;
  }
  fprintf(stderr, "shlo: unknown command '%s'\n", cmd);
  usage(stderr);
  return 2;
}
