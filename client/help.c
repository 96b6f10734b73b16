/* SPDX-License-Identifier: Apache-2.0 */
/* `shlo CMD --help` for test, verify and print, whose option parsers stop
 * at the first unknown option (run, bench and serialize print their own;
 * docs/cli.md has every option of every command). */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const struct {
  const char *cmd, *text;
} helps[] = {
  {"test",
   "usage: shlo test [--timeout SECONDS] [--in-process] [--check-context]\n"
   "                 [--mpi | --server URL] PATH...\n"
   "  run every case (split at '// -----') of the .mlir and .mlir.bc files\n"
   "  under PATH and evaluate its checks; one PASS/FAIL/SKIP line per case\n"
   "  and a summary line; exit 1 when any case fails\n"
   "  --timeout SECONDS  per case (default 60)\n"
   "  --in-process       no child process per case (for leak checkers)\n"
   "  --check-context    each case in a context of its own that fails a case\n"
   "                     leaving memory behind\n"
   "  --mpi              under mpirun: grids spread over the ranks\n"
   "  --server URL       run the cases at a shlo-server (shlo:// or http://)\n"
   "  SKIP is for what exists in StableHLO and this build refuses on purpose\n"
   "  (the line names it); a misspelt op, enum value, type or keyword is a\n"
   "  parse error, so a FAIL.\n"},
  {"verify",
   "usage: shlo verify [--expect-diagnostics] [--quiet] PATH...\n"
   "  parse and verify every case of the .mlir files under PATH against the\n"
   "  spec's constraints; prints each diagnostic and a summary line\n"
   "  --expect-diagnostics  a case passes when errors fall exactly on its\n"
   "                        `// expected-error` lines (MLIR's\n"
   "                        -verify-diagnostics)\n"
   "  --quiet, -q           only the summary line\n"},
  {"print",
   "usage: shlo print [--lowered] FILE.mlir|FILE.mlir.bc\n"
   "  parse FILE (text or portable artifact) and print it in generic form\n"
   "  --lowered  an artifact's StableHLO text as its VHLO lowers, before\n"
   "             parsing (what to look at when one does not read back)\n"},
};

bool cli_help(const char *cmd) {
  for (size_t i = 0; i < sizeof helps / sizeof helps[0]; i++)
    if (!strcmp(cmd, helps[i].cmd)) {
      fputs(helps[i].text, stdout);
      return true;
    }
  return false;
}
