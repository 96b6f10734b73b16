/* SPDX-License-Identifier: Apache-2.0 */
/* Refined plans cached per argument-shape signature (refine_cache.h). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/module.h"
#include "core/alloc.h"
#include "compile/refine.h"
#include "compile/refine_cache.h"
#include "core/value.h"
#include "shlo/verify.h"

/* One signature's refined module and its executable.  The cache holds one
 * reference; each execution using it holds another. */
typedef struct refined_entry {
  atomic_int refs;
  int64_t *sig; /* per argument: rank, then its dims */
  size_t sig_len;
  shlo_refined *r;
  shlo_executable *x;
  uint64_t last_use;
} refined_entry;

struct shlo_refine_cache {
  pthread_mutex_t mu;
  const shlo_module *m;
  const shlo_func *entry;
  bool no_fusion;
  struct shlo_context *ctx;
  refined_entry *v[SHLO_REFINE_CACHE_CAP];
  int n;
  uint64_t tick;
  atomic_llong compiles;
};

shlo_refine_cache *shlo__refine_cache_new(const shlo_module *m,
                                          const shlo_func *entry,
                                          bool no_fusion,
                                          struct shlo_context *ctx) {
  shlo_refine_cache *c = shlo__calloc(1, sizeof *c);
  if (!c) return NULL;
  if (pthread_mutex_init(&c->mu, NULL)) {
    shlo__free(c);
    return NULL;
  }
  c->m = m;
  c->entry = entry;
  c->no_fusion = no_fusion;
  c->ctx = ctx;
  return c;
}

static void entry_unref(refined_entry *e) {
  if (!e || atomic_fetch_sub(&e->refs, 1) != 1) return;
  shlo_executable_free(e->x);
  shlo__refined_free(e->r);
  shlo__free(e->sig);
  shlo__free(e);
}

void shlo__refine_cache_free(shlo_refine_cache *c) {
  if (!c) return;
  for (int i = 0; i < c->n; i++) entry_unref(c->v[i]);
  pthread_mutex_destroy(&c->mu);
  shlo__free(c);
}

int64_t shlo__refine_cache_compiles(const shlo_refine_cache *c) {
  return atomic_load(&((shlo_refine_cache *)c)->compiles);
}

/* The signature of static argument types: per tensor its rank and dims
 * (element types are fixed by the declared types). */
static int64_t *signature(const shlo_type *const *types, int n, size_t *len) {
  int64_t *s = shlo__malloc(((size_t)n * (SHLO_MAX_RANK + 1) + 1) * sizeof *s);
  if (!s) return NULL;
  size_t k = 0;
  for (int i = 0; i < n; i++) {
    bool tensor = types[i]->kind == SHLO_TYPE_TENSOR;
    s[k++] = tensor ? types[i]->rank : -2;
    for (int d = 0; tensor && d < types[i]->rank; d++)
      s[k++] = types[i]->dims[d];
  }
  *len = k;
  return s;
}

/* The cached entry for sig, with a reference for the caller; NULL if none.
 * Called with c->mu held. */
static refined_entry *lookup(shlo_refine_cache *c, const int64_t *sig,
                             size_t len) {
  for (int i = 0; i < c->n; i++) {
    refined_entry *e = c->v[i];
    if (e->sig_len == len && !memcmp(e->sig, sig, len * sizeof *sig)) {
      e->last_use = ++c->tick;
      atomic_fetch_add(&e->refs, 1);
      return e;
    }
  }
  return NULL;
}

/* Keep e (taking a reference for the cache), evicting the least recently
 * used entry when full.  Called with c->mu held. */
static void insert(shlo_refine_cache *c, refined_entry *e) {
  if (c->n == SHLO_REFINE_CACHE_CAP) {
    int old = 0;
    for (int i = 1; i < c->n; i++)
      if (c->v[i]->last_use < c->v[old]->last_use) old = i;
    entry_unref(c->v[old]);
    c->v[old] = c->v[--c->n];
  }
  e->last_use = ++c->tick;
  atomic_fetch_add(&e->refs, 1);
  c->v[c->n++] = e;
}

/* Refine, verify and compile for types: a new entry (one reference). */
static shlo_status build(shlo_refine_cache *c, const shlo_type *const *types,
                         int n, int64_t *sig, size_t len,
                         refined_entry **out, shlo_diag *diag) {
  refined_entry *e = shlo__calloc(1, sizeof *e);
  if (!e) {
    shlo__free(sig);
    return shlo_diag_set(diag, SHLO_ENOMEM, c->m->filename, 0, 0,
                         "out of memory");
  }
  atomic_init(&e->refs, 1);
  e->sig = sig;
  e->sig_len = len;
  shlo_status st = shlo__refine(c->m, c->entry, types, n, &e->r, diag);
  if (!st) {
    /* The refined copy is checked as any program is: operands whose
     * refined shapes disagree are the arguments' fault. */
    st = shlo_verify_module_first(shlo__refined_module(e->r), NULL, diag);
    if (st == SHLO_EVERIFY && diag) {
      char msg[SHLO_DIAG_MAX];
      memcpy(msg, diag->message, sizeof msg);
      msg[sizeof msg - 1] = 0;
      shlo_diag_set(diag, SHLO_EINPUT, diag->file, diag->line, diag->col,
                    "the argument shapes do not refine: %.900s", msg);
      st = SHLO_EINPUT;
    } else if (st == SHLO_EVERIFY) {
      st = SHLO_EINPUT;
    }
  }
  if (!st) {
    shlo_compile_opts o = {.entry = c->entry->name,
                           .no_fusion = c->no_fusion,
                           .context = c->ctx,
                           .verified = true};
    st = shlo_compile(shlo__refined_module(e->r), &o, &e->x, diag);
  }
  atomic_fetch_add(&c->compiles, 1);
  if (st) {
    entry_unref(e);
    return st;
  }
  *out = e;
  return SHLO_OK;
}

/* The entry for types, built when missing; the caller holds a reference. */
static shlo_status get(shlo_refine_cache *c, const shlo_type *const *types,
                       int n, refined_entry **out, shlo_diag *diag) {
  size_t len;
  int64_t *sig = signature(types, n, &len);
  if (!sig)
    return shlo_diag_set(diag, SHLO_ENOMEM, c->m->filename, 0, 0,
                         "out of memory");
  pthread_mutex_lock(&c->mu);
  *out = lookup(c, sig, len);
  pthread_mutex_unlock(&c->mu);
  if (*out) {
    shlo__free(sig);
    return SHLO_OK;
  }
  /* Compile outside the lock: other signatures need not wait.  Two
   * threads missing on one signature both compile; the second keeps the
   * first's entry. */
  refined_entry *e;
  shlo_status st = build(c, types, n, sig, len, &e, diag);
  if (st) return st;
  pthread_mutex_lock(&c->mu);
  *out = lookup(c, e->sig, e->sig_len);
  if (!*out) {
    insert(c, e);
    *out = e;
    e = NULL;
  }
  pthread_mutex_unlock(&c->mu);
  entry_unref(e);
  return SHLO_OK;
}

shlo_status shlo__refine_cache_prepare(shlo_refine_cache *c,
                                       const shlo_type *const *types, int n,
                                       shlo_diag *diag) {
  refined_entry *e;
  shlo_status st = get(c, types, n, &e, diag);
  if (!st) entry_unref(e);
  return st;
}

/* The static type of argument value v for declared type d: d with v's
 * shape (keeping d's element type and quantization). */
static bool arg_type(const shlo_value *v, const shlo_type *d, shlo_type *out) {
  if (v->kind != d->kind) return false;
  if (d->kind != SHLO_TYPE_TENSOR) {
    *out = *d;
    return shlo_value_has_type(v, d);
  }
  if (v->elem != d->elem || (d->rank >= 0 && v->rank != d->rank))
    return false;
  *out = *d;
  out->encoding = NULL;
  out->rank = v->rank;
  for (int i = 0; i < v->rank; i++) out->dims[i] = v->dims[i];
  return true;
}

shlo_status shlo__refine_cache_execute(shlo_refine_cache *c,
                                       const shlo_exec_opts *opts,
                                       shlo_value *const *args, int n_args,
                                       shlo_value ***results, int *n_results,
                                       shlo_diag *diag) {
  *results = NULL;
  *n_results = 0;
  const shlo_func *f = c->entry;
  if (n_args != f->n_args)
    return shlo_diag_set(diag, SHLO_EINPUT, c->m->filename, f->loc.line,
                         f->loc.col, "@%s takes %d arguments but %d were given",
                         f->name, f->n_args, n_args);
  shlo_type *ts = shlo__calloc((size_t)n_args + 1, sizeof *ts);
  const shlo_type **tp = shlo__calloc((size_t)n_args + 1, sizeof *tp);
  shlo_status st = SHLO_OK;
  if (!ts || !tp)
    st = shlo_diag_set(diag, SHLO_ENOMEM, c->m->filename, 0, 0,
                       "out of memory");
  for (int i = 0; !st && i < n_args; i++) {
    tp[i] = &ts[i];
    if (!arg_type(args[i], f->arg_types[i], &ts[i])) {
      char want[256];
      shlo_type_format(f->arg_types[i], want, sizeof want);
      st = shlo_diag_set(diag, SHLO_EINPUT, c->m->filename, f->loc.line,
                         f->loc.col, "argument %d of @%s must be %s", i,
                         f->name, want);
    }
  }
  refined_entry *e = NULL;
  if (!st) st = get(c, tp, n_args, &e, diag);
  shlo__free(ts);
  shlo__free(tp);
  if (st) return st;
  st = shlo_execute(e->x, opts, args, n_args, results, n_results, diag);
  entry_unref(e);
  return st;
}
