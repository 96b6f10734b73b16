/* SPDX-License-Identifier: Apache-2.0 */
/* What `shlo run` does with results (docs/cli.md): print them as text that
 * reads back to the same bits, or write them to .npy/.npz files named by
 * --output. */
#ifndef SHLO_CLI_OUTPUTS_H
#define SHLO_CLI_OUTPUTS_H

#include <stdbool.h>
#include <stdio.h>

#include "shlo/tensor.h"

/* A value as text in the interpreter's layout (`tensor<2xf32> {...}`),
 * every float as the shortest decimal that reads back (through --args or
 * --input) to the same bits, -0.0 with its sign, and NaN and infinities as
 * their bit pattern in hex (0x7FC00001), as MLIR spells them.  malloc'd;
 * NULL when out of memory. */
char *cli_value_text(const shlo_value *v);

/* Element i of tensor v as cli_value_text spells it, into buf (at least
 * 96 bytes). */
void cli_elem_text(const shlo_value *v, int64_t i, char *buf, size_t cap);

/* The --output options, in order. */
typedef struct cli_outputs {
  const char **specs; /* borrowed from argv */
  int n, cap;
} cli_outputs;

/* Take argv[*i] when it is --output=SPEC or --output SPEC: 1 taken, 0 not
 * ours, -1 after a message (exit status 2). */
int cli_outputs_option(cli_outputs *o, const char *cmd, int argc, char **argv,
                       int *i);
void cli_outputs_free(cli_outputs *o);

/* Deliver n results: with no --output, print each on stdout; else the
 * k-th --output takes the k-th result (`@f.npy` a file, `@f.npz` this and
 * every later result, `-` .npy on stdout, empty: drop it), and results
 * without one are dropped, as iree-run-module does.  0, or 1 after a
 * message. */
int cli_outputs_deliver(const cli_outputs *o, const char *cmd,
                        shlo_value *const *vals, int n);

/* Write bytes to path ("-": stdout); 0, or 1 after a message. */
int cli_write_bytes(const char *path, const void *bytes, size_t len);

#endif
