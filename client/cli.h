/* SPDX-License-Identifier: Apache-2.0 */
/* Subcommands of the `shlo` command; each returns the process exit code. */
#ifndef SHLO_CLI_H
#define SHLO_CLI_H

#include <stdbool.h>
#include <stddef.h>

int cli_run(int argc, char **argv);
int cli_test(int argc, char **argv);
int cli_print(int argc, char **argv);
int cli_bench(int argc, char **argv);
int cli_verify(int argc, char **argv);
int cli_serialize(int argc, char **argv);
/* Print `shlo cmd --help` for test, verify and print; false for the
 * commands that print their own. */
bool cli_help(const char *cmd);

/* Read a whole file into a malloc'd buffer (NUL-terminated); NULL and a
 * message on stderr on failure. */
char *cli_read_file(const char *path, size_t *len);
/* The function run by default (as the engine and the server choose it):
 * @main, else the only one; NULL when there is none. */
struct shlo_module;
const struct shlo_func *cli_default_entry(const struct shlo_module *m);
/* A diagnostic as "file:line:col: error: message" on stderr. */
struct shlo_diag;
void cli_print_diag(const struct shlo_diag *d);

/* --mpi (mpi_cli.c).  Start MPI; on ranks other than 0, stdout and stderr
 * go to /dev/null.  0, or the exit status 1 after a message. */
int cli_mpi_start(void);
/* Rank 0 reads the file, every rank gets its bytes (as cli_read_file). */
char *cli_mpi_read_file(const char *path, size_t *len);
/* Rank 0's text (a string, or NULL) to every rank: a malloc'd copy, or
 * NULL when rank 0 had none or sharing failed. */
char *cli_mpi_share_text(const char *text);
/* Stop MPI (aborting the job when a rank was lost); returns rc. */
int cli_mpi_finish(int rc);

/* --trace FILE (trace_out.c): write t's Chrome trace JSON to path, with
 * the command's name in its otherData; 0, or 1 after a message. */
struct shlo_trace;
int cli_trace_write(struct shlo_trace *t, const char *path,
                    const char *command);

#endif
