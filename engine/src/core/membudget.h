/* SPDX-License-Identifier: Apache-2.0 */
/* Per-execution memory budgets.
 *
 * An execution with a byte limit installs a budget as its thread's current
 * one; every tensor allocated on that thread is charged to it and holds a
 * reference to it, so the budget outlives the execution exactly as long as
 * one of its tensors does (results handed to the caller included).  A
 * charge that would pass the limit fails the allocation and marks the
 * budget exceeded, which the executor reports as SHLO_ELIMIT. */
#ifndef SHLO_MEMBUDGET_H
#define SHLO_MEMBUDGET_H

#include <stdbool.h>
#include <stdint.h>

typedef struct shlo_mem_budget shlo_mem_budget;

/* A budget of `limit` bytes with one reference (the caller's); NULL when
 * out of memory. */
shlo_mem_budget *shlo__budget_new(int64_t limit);
void shlo__budget_release(shlo_mem_budget *b);
/* Make b this thread's current budget (NULL: none); returns the previous. */
shlo_mem_budget *shlo__budget_swap(shlo_mem_budget *b);
shlo_mem_budget *shlo__budget_current(void);
bool shlo__budget_exceeded(const shlo_mem_budget *b);
int64_t shlo__budget_limit(const shlo_mem_budget *b);

/* For tensor.c: charge `bytes` to the current budget (if any) and take a
 * reference; false when over the limit.  *charged gets the budget charged
 * (or NULL). */
bool shlo__budget_charge(int64_t bytes, shlo_mem_budget **charged);
void shlo__budget_uncharge(shlo_mem_budget *b, int64_t bytes);

#endif
