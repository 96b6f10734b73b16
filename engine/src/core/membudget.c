/* SPDX-License-Identifier: Apache-2.0 */
/* Per-execution memory budgets (see membudget.h). */
#include <stdatomic.h>
#include <stdlib.h>

#include "core/membudget.h"

#include "core/context_int.h"

struct shlo_mem_budget {
  /* The context current where it was made (an execution's): the last
   * reference may go in another scope or thread (a result tensor freed
   * later), so the free goes through this one.  Every tensor holding a
   * reference dies before its context does (shlo/context.h). */
  shlo_context *ctx;
  atomic_int_fast64_t used;
  int64_t limit;
  atomic_int refs;
  atomic_int exceeded;
};

static _Thread_local shlo_mem_budget *current;

shlo_mem_budget *shlo__budget_new(int64_t limit) {
  shlo_context *c = shlo__ctx_current();
  shlo_mem_budget *b = shlo__ctx_calloc(c, 1, sizeof *b);
  if (!b) return NULL;
  b->ctx = c;
  atomic_init(&b->used, 0);
  atomic_init(&b->refs, 1);
  atomic_init(&b->exceeded, 0);
  b->limit = limit;
  return b;
}

void shlo__budget_release(shlo_mem_budget *b) {
  if (b && atomic_fetch_sub(&b->refs, 1) == 1) shlo__ctx_free(b->ctx, b);
}

shlo_mem_budget *shlo__budget_swap(shlo_mem_budget *b) {
  shlo_mem_budget *prev = current;
  current = b;
  return prev;
}

shlo_mem_budget *shlo__budget_current(void) { return current; }

bool shlo__budget_exceeded(const shlo_mem_budget *b) {
  return b && atomic_load(&b->exceeded);
}

int64_t shlo__budget_limit(const shlo_mem_budget *b) { return b ? b->limit : 0; }

bool shlo__budget_charge(int64_t bytes, shlo_mem_budget **charged) {
  shlo_mem_budget *b = current;
  *charged = NULL;
  if (!b) return true;
  int64_t before = atomic_fetch_add(&b->used, bytes);
  if (before + bytes > b->limit) {
    atomic_fetch_sub(&b->used, bytes);
    atomic_store(&b->exceeded, 1);
    return false;
  }
  atomic_fetch_add(&b->refs, 1);
  *charged = b;
  return true;
}

void shlo__budget_uncharge(shlo_mem_budget *b, int64_t bytes) {
  if (!b) return;
  atomic_fetch_sub(&b->used, bytes);
  shlo__budget_release(b);
}
