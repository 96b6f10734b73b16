/* SPDX-License-Identifier: Apache-2.0 */
/* `shlo test|run|bench --server URL`: the same cases and values, executed
 * by a shlo-server through libshlo-client, printed as the local runs
 * print them. */
#ifndef SHLO_CLI_REMOTE_H
#define SHLO_CLI_REMOTE_H

#include <stddef.h>

#include "shlo/tensor.h"

struct shlo_client;

/* Connect to URL (token from $SHLO_TOKEN); NULL after a message. */
struct shlo_client *remote_connect(const char *url);
void remote_close(struct shlo_client *c);

/* One test case run remotely: 'P', 'F' or 'S' as `shlo test` reports it
 * locally, the reason in msg ("file:line:col: error: ..." as the engine's
 * diagnostics read).  *printed: what the case's interpreter.print ops
 * wrote (malloc'd, the caller frees it), or NULL. */
int remote_case(struct shlo_client *c, const char *file, const char *text,
                size_t len, const char *args_text, double timeout, char *msg,
                size_t cap, char **printed);

/* One execution: the program's text (file names it in messages), or the
 * module id a remote_compile gave.  replicas, partitions 0 = the
 * module's grid. */
typedef struct remote_exec {
  const char *file;
  const char *text;
  size_t len;
  const char *module_id;
  const char *entry;
  shlo_value *const *args;
  int n_args;
  int replicas, partitions;
} remote_exec;

/* Execute; the outputs (process-major; the caller releases them) in
 * *outs, *n.  On failure prints the server's error on stderr as the
 * engine's diagnostic would read and returns 1.  interpreter.print's text
 * goes to stdout, as in a local run. */
int remote_execute(struct shlo_client *c, const remote_exec *rx,
                   shlo_value ***outs, int *n);

/* Compile text at the server; its module id ("sha256:...", at least 80
 * bytes) into id.  0, or 1 after printing the error as remote_execute. */
int remote_compile(struct shlo_client *c, const char *file, const char *text,
                   size_t len, char *id);

#endif
