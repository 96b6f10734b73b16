/* SPDX-License-Identifier: Apache-2.0 */
/* Scopes of loop-invariant values and their packs (see pack_scope.h). */
#include <pthread.h>

#include "core/alloc.h"
#include "core/value.h"
#include "kernels/pack_scope.h"
#include "runtime/exec_packs.h"

/* One packed form of a held value: a value may feed products that read
 * it in different shapes (transposed or not). */
typedef struct pack_entry {
  struct pack_entry *next;
  bool tb;
  int64_t k, n, ldb;
  shlo__sgemm_packed *pb;
} pack_entry;

struct shlo__pack_scope {
  shlo__pack_scope *next; /* the scope entered before, by any thread */
  pthread_t owner;
  int n;
  shlo_value **values; /* n, each a reference the scope holds */
  pack_entry **packs;  /* n lists */
};

/* Guards every execution's list of scopes: entered and left by their
 * owners, read by lookups from any thread (a short walk). */
static pthread_mutex_t scopes_lock = PTHREAD_MUTEX_INITIALIZER;

shlo__pack_scope *shlo__pack_scope_enter(shlo_exec *ex,
                                         shlo_value *const *values, int n) {
  if (n <= 0) return NULL;
  shlo__pack_scope *s = shlo__calloc(1, sizeof *s);
  if (!s) return NULL;
  s->values = shlo__calloc((size_t)n, sizeof *s->values);
  s->packs = shlo__calloc((size_t)n, sizeof *s->packs);
  if (!s->values || !s->packs) {
    shlo__free(s->values);
    shlo__free(s->packs);
    shlo__free(s);
    return NULL;
  }
  s->owner = pthread_self();
  s->n = n;
  for (int i = 0; i < n; i++) s->values[i] = shlo_value_ref(values[i]);
  struct shlo__pack_scope **top = shlo__exec_packs(ex);
  pthread_mutex_lock(&scopes_lock);
  s->next = *top;
  *top = s;
  pthread_mutex_unlock(&scopes_lock);
  return s;
}

void shlo__pack_scope_leave(shlo_exec *ex, shlo__pack_scope *scope) {
  if (!scope) return;
  /* unlinked wherever it is: another thread's scope may lie above it */
  pthread_mutex_lock(&scopes_lock);
  for (struct shlo__pack_scope **at = shlo__exec_packs(ex); *at;
       at = &(*at)->next)
    if (*at == scope) {
      *at = scope->next;
      break;
    }
  pthread_mutex_unlock(&scopes_lock);
  for (int i = 0; i < scope->n; i++) {
    for (pack_entry *e = scope->packs[i], *next; e; e = next) {
      next = e->next;
      shlo__sgemm_packed_free(e->pb);
      shlo__free(e);
    }
    shlo_value_unref(scope->values[i]);
  }
  shlo__free(scope->values);
  shlo__free(scope->packs);
  shlo__free(scope);
}

/* The outermost scope of this thread holding v, and v's index in it: a
 * loop nested in one that carries the same value unchanged reuses the
 * outer loop's pack in each of its runs instead of packing again. */
static shlo__pack_scope *holder(shlo_exec *ex, const shlo_value *v, int *at) {
  pthread_t self = pthread_self();
  shlo__pack_scope *found = NULL;
  pthread_mutex_lock(&scopes_lock);
  for (shlo__pack_scope *s = *shlo__exec_packs(ex); s; s = s->next)
    if (pthread_equal(s->owner, self))
      for (int i = 0; i < s->n; i++)
        if (s->values[i] == v) {
          found = s;
          *at = i;
          break;
        }
  pthread_mutex_unlock(&scopes_lock);
  return found;
}

const shlo__sgemm_packed *shlo__pack_scope_find(shlo_exec *ex,
                                                const shlo_value *v, bool tb,
                                                int64_t k, int64_t n,
                                                int64_t ldb) {
  int i = 0;
  shlo__pack_scope *s = holder(ex, v, &i);
  if (!s) return NULL;
  /* only the owner (this thread) touches the scope's lists */
  for (pack_entry *e = s->packs[i]; e; e = e->next)
    if (e->tb == tb && e->k == k && e->n == n && e->ldb == ldb) return e->pb;
  pack_entry *e = shlo__calloc(1, sizeof *e);
  if (!e) return NULL;
  /* NULL (the panels do not take it, or no memory) is kept too: the
   * next iterations do not try again */
  e->pb = shlo__sgemm_pack(tb, k, n, v->data, ldb);
  e->tb = tb, e->k = k, e->n = n, e->ldb = ldb;
  e->next = s->packs[i];
  s->packs[i] = e;
  return e->pb;
}
