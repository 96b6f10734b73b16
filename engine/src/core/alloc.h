/* SPDX-License-Identifier: Apache-2.0 */
/* Allocation through the context the calling thread works in
 * (core/context_int.h): what a compile builds (plans, their steps, fused
 * groups, refined-plan caches) comes from the context the compile runs in
 * and goes back to it.
 *
 * The rule that keeps this right: a block is freed in the same context
 * scope it was allocated in.  Compiles run in their context; an
 * executable is freed in its own (shlo_executable_free sets it); what an
 * execution allocates and frees meanwhile is in the executable's.  Memory
 * handed to callers with a "free it with free()" contract (shlo_execute's
 * results array, shlo_read_file's buffer) stays the C library's. */
#ifndef SHLO_ALLOC_H
#define SHLO_ALLOC_H

#include <stddef.h>

void *shlo__malloc(size_t n);
void *shlo__calloc(size_t n, size_t size);
void *shlo__realloc(void *p, size_t n);
void shlo__free(void *p);
/* n bytes aligned to 64 (scratch for vector kernels); free with
 * shlo__aligned_free. */
void *shlo__aligned_alloc(size_t n);
void shlo__aligned_free(void *p);

#endif
