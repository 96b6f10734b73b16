/* SPDX-License-Identifier: Apache-2.0 */
/* What the fusion may ask of the indexing kernels (indexing.c). */
#ifndef SHLO_INDEXING_H
#define SHLO_INDEXING_H

#include <stdbool.h>

#include "compile/plan.h"

/* Make scatter step s (one input) start from its input's one element
 * everywhere instead of from the input itself: the caller then hands it
 * that element (a one-element tensor of the input's element type) as its
 * input, in place of a broadcast of it that only s read.  The scatter
 * fills its result itself, range by range just before its updates where
 * it splits by rows, while each range is still in cache.  False, having
 * changed nothing, for any other step. */
bool shlo__scatter_fill_from_scalar(shlo_step *s);

#endif
