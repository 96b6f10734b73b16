/* SPDX-License-Identifier: Apache-2.0 */
/* Per-step profiles: rows keyed by step, accumulated under one lock. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "compile/plan.h"
#include "core/context_int.h"
#include "runtime/profile_int.h"
#include "shlo/profile.h"
#include "shlo/trace.h"

typedef struct row {
  const shlo_step *step;
  uint64_t ns, calls;
} row;

struct shlo_profile {
  /* the context it was made in, whose allocator frees it in any scope */
  shlo_context *ctx;
  pthread_mutex_t lock;
  row *rows;
  int n, cap;
  struct shlo_trace *trace; /* set: steps become its spans, no rows */
};

shlo_profile *shlo_profile_new(void) {
  shlo_context *c = shlo__ctx_current();
  shlo_profile *p = shlo__ctx_calloc(c, 1, sizeof *p);
  if (!p) return NULL;
  p->ctx = c;
  pthread_mutex_init(&p->lock, NULL);
  return p;
}

shlo_profile *shlo__profile_new_for_trace(struct shlo_trace *t) {
  shlo_profile *p = shlo_profile_new();
  if (p) p->trace = t;
  return p;
}

void shlo__profile_step(shlo_profile *p, const shlo_plan *plan,
                        const shlo_step *s, uint64_t t0_ns) {
  uint64_t t1 = shlo_trace_now_ns();
  if (!p->trace) {
    shlo__profile_add(p, s, t1 - t0_ns);
    return;
  }
  /* region bodies run once per element: as spans they would be millions */
  if (plan->name && strcmp(plan->name, "<region>"))
    shlo__trace_step(p->trace, s, t0_ns, t1);
}

void shlo_profile_free(shlo_profile *p) {
  if (!p) return;
  pthread_mutex_destroy(&p->lock);
  shlo__ctx_free(p->ctx, p->rows);
  shlo__ctx_free(p->ctx, p);
}

void shlo__profile_add(shlo_profile *p, const shlo_step *s, uint64_t ns) {
  pthread_mutex_lock(&p->lock);
  row *r = NULL;
  for (int i = 0; i < p->n && !r; i++)
    if (p->rows[i].step == s) r = &p->rows[i];
  if (!r && p->n == p->cap) {
    int cap = p->cap ? p->cap * 2 : 64;
    row *w = shlo__ctx_realloc(p->ctx, p->rows, (size_t)cap * sizeof *w);
    if (w) {
      p->rows = w;
      p->cap = cap;
    }
  }
  if (!r && p->n < p->cap) {
    r = &p->rows[p->n++];
    r->step = s;
    r->ns = r->calls = 0;
  }
  if (r) {
    r->ns += ns;
    r->calls++;
  }
  pthread_mutex_unlock(&p->lock);
}

static int by_time(const void *a, const void *b) {
  const row *x = a, *y = b;
  return (x->ns < y->ns) - (x->ns > y->ns);
}

void shlo_profile_print(const shlo_profile *p, FILE *f, int top) {
  shlo_profile *q = (shlo_profile *)p;
  pthread_mutex_lock(&q->lock);
  qsort(q->rows, (size_t)q->n, sizeof *q->rows, by_time);
  uint64_t total = 0;
  for (int i = 0; i < q->n; i++) total += q->rows[i].ns;
  fprintf(f, "%-44s %6s %10s %12s %10s %6s\n", "step (regions count inside)",
          "line", "calls", "total ms", "mean us", "share");
  for (int i = 0; i < q->n && i < top; i++) {
    const row *r = &q->rows[i];
    const shlo_step *s = r->step;
    const char *name = s->label ? s->label : s->op ? s->op->name : "?";
    fprintf(f, "%-44.44s %6d %10llu %12.3f %10.2f %5.1f%%\n", name,
            s->op ? s->op->loc.line : 0, (unsigned long long)r->calls,
            (double)r->ns / 1e6, (double)r->ns / 1e3 / (double)r->calls,
            total ? 100.0 * (double)r->ns / (double)total : 0.0);
  }
  pthread_mutex_unlock(&q->lock);
}
