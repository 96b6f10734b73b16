/* SPDX-License-Identifier: Apache-2.0 */
/* Warm-up runs of a repository model's version, from its config.json's
 * "model_warmup" as Triton spells it:
 *
 *   "model_warmup": [{"name": "zeros", "batch_size": 2, "count": 1,
 *                     "inputs": {"a": {"data_type": "TYPE_FP32",
 *                                      "dims": [3], "zero_data": true}}}]
 *
 * Each sample gives every input of the entry function by name (the
 * config's "input" names, or input0..N-1), a Triton data type, its dims
 * (after the batch dimension when max_batch_size is set: the tensor is
 * then [batch_size, dims...]) and its values: zero_data, random_data
 * (a fixed sequence: floats in [0, 1), small integers), or
 * input_data_file, a file of the model's warmup/ folder holding the
 * tensor's raw little-endian bytes.  A sample runs count times (default
 * 1).  Any error (a name, a type, a shape, a file, the execution) makes
 * the version unavailable with the reason, as in Triton. */
#ifndef SHLO_SRV_WARMUP_H
#define SHLO_SRV_WARMUP_H

#include <stdbool.h>
#include <stddef.h>

#include "shlo/engine.h"

struct cJSON;
struct srv_server;

#define SRV_WARMUP_NAME_LEN 128 /* an input's name, NUL included */
#define SRV_WARMUP_MAX_SAMPLES 64
#define SRV_WARMUP_MAX_COUNT 100

/* Whether j is a usable "model_warmup" (a list of at most
 * SRV_WARMUP_MAX_SAMPLES objects); false with why set. */
bool srv_warmup_check(const struct cJSON *j, char *why, size_t cap);

/* Run the samples of warmup (NULL: none) on x, whose inputs are named
 * names[0..n_names) (n_names 0: input<i> only); files are read from
 * model_dir/warmup/.  *runs gets the executions done.  False with why
 * set at the first failure. */
bool srv_warmup_run(struct srv_server *s, const struct cJSON *warmup,
                    const shlo_executable *x, const char *model_dir,
                    const char (*names)[SRV_WARMUP_NAME_LEN], int n_names,
                    long max_batch_size, int *runs, char *why, size_t cap);

#endif
