/* SPDX-License-Identifier: Apache-2.0 */
/* The arguments of `shlo run` and `shlo bench` (docs/cli.md): repeatable
 * --input in iree-run-module's grammar, or --args with MLIR literals.
 *
 *   --input=2x3xf32=1,2,3,4,5,6    shape, element type, values (commas,
 *                                  spaces or brackets between them; one
 *                                  value fills the tensor)
 *   --input=f32=5                  a rank-0 tensor
 *   --input=4xi1=true,false,1,0    booleans
 *   --input=2xcomplex<f32>=(1,2),(3,-4)
 *   --input=f32=0x7FC00001         a float as its bit pattern (NaN payload)
 *   --input=2x3xf32=@x.bin         raw little-endian elements
 *   --input=@x.npy                 a NumPy array (npy.h's dtype mapping)
 *   --input=@all.npz               every array of the archive, in order
 *   --input=-                      an .npy (or .npz) read from stdin
 *   --args "[dense<...> : tensor<...>, ...]"   or --args=@FILE
 */
#ifndef SHLO_CLI_INPUTS_H
#define SHLO_CLI_INPUTS_H

#include <stdbool.h>

#include "shlo/ir.h"
#include "shlo/tensor.h"

typedef struct cli_inputs {
  const char **specs; /* --input values in order, borrowed from argv */
  int n, cap;
  const char *args;   /* --args TEXT or @FILE, or NULL */
} cli_inputs;

/* Take argv[*i] when it is --input or --args (either as `--opt VALUE` or
 * `--opt=VALUE`): 1 taken, 0 not ours, -1 after a message (exit 2). */
int cli_inputs_option(cli_inputs *in, const char *cmd, int argc, char **argv,
                      int *i);
void cli_inputs_free(cli_inputs *in);
static inline bool cli_inputs_given(const cli_inputs *in) {
  return in->n > 0 || in->args;
}

/* The argument values: *args (owned references, malloc'd array) and *n.
 * f, the function they are for, or NULL when unknown (a remote module the
 * CLI cannot read): with f, raw NumPy views become the types it takes and
 * the values are checked against its signature (procs: processes of the
 * grid, each given the same arguments or its own share).  0, or 1 after a
 * one-line message naming the argument, what the function takes and what
 * was given. */
int cli_inputs_load(const char *cmd, const cli_inputs *in, const shlo_func *f,
                    int procs, shlo_value ***args, int *n);

/* The entry function a run uses: the one named (NULL: @main or the only
 * one).  NULL after a message that lists the module's functions. */
const shlo_func *cli_find_entry(const char *cmd, const shlo_module *m,
                                const char *name);

#endif
