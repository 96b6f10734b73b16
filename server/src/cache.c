/* SPDX-License-Identifier: Apache-2.0 */
/* The module cache (see cache.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/evp.h>

#include "cache.h"
#include "core/arena.h"
#include "frontend/module.h"
#include "core/value.h"
#include "json_write.h"
#include "shlo/grid.h"

void cache_init(srv_cache *c, size_t max_bytes) {
  memset(c, 0, sizeof *c);
  pthread_mutex_init(&c->lock, NULL);
  c->max_bytes = max_bytes;
}

void cache_bounds_start(const cache_bounds *b, shlo_compile_limits *out) {
  *out = (shlo_compile_limits){.max_ops = b->max_ops, .cancel = b->cancel,
                               .max_depth = (int)b->max_depth};
  if (b->timeout_ms > 0)
    out->deadline_ns = shlo_monotonic_ns() + b->timeout_ms * 1000000;
}

void cache_bounds_explain(const cache_bounds *b, const shlo_compile_limits *l,
                          shlo_status st, shlo_diag *d) {
  if (st != SHLO_ELIMIT) return;
  /* The engine says which bound in words; the client wants the option. */
  bool late = l->deadline_ns > 0 && shlo_monotonic_ns() > l->deadline_ns;
  if (!late && !(b->max_ops > 0 && strstr(d->message, "ops, the most")))
    return; /* another limit (an entry-function count, say) */
  char msg[sizeof d->message];
  snprintf(msg, sizeof msg, "limit %s (%lld) exceeded: %.900s",
           late ? "compile-timeout-ms" : "max-program-ops",
           (long long)(late ? b->timeout_ms : b->max_ops), d->message);
  memcpy(d->message, msg, sizeof msg);
}

static void entry_free(cache_entry *e) {
  for (int i = 0; i < e->n_exes; i++) {
    shlo_executable_free(e->exes[i].e);
    free(e->exes[i].entry);
  }
  shlo_module_free(e->m);
  pthread_mutex_destroy(&e->lock);
  free(e->text);
  free(e->info);
  free(e->entry);
  free(e->owners);
  free(e);
}

static cache_use *use_of(srv_cache *c, const void *owner) {
  for (int i = 0; i < c->n_uses; i++)
    if (c->uses[i].owner == owner) return &c->uses[i];
  return NULL;
}

/* Charge (+1) or refund (-1) e's bytes to each of its owners. */
static void charge_owners(srv_cache *c, const cache_entry *e, int sign) {
  for (int i = 0; i < e->n_owners; i++) {
    cache_use *u = use_of(c, e->owners[i]);
    if (u) u->bytes = sign > 0 ? u->bytes + e->bytes : u->bytes - e->bytes;
  }
}

static void unlink_entry(srv_cache *c, cache_entry *e) {
  if (e->prev) e->prev->next = e->next;
  else c->head = e->next;
  if (e->next) e->next->prev = e->prev;
  else c->tail = e->prev;
  e->prev = e->next = NULL;
  e->linked = false;
  c->bytes -= e->bytes;
  c->n--;
  charge_owners(c, e, -1);
}

static void push_front(srv_cache *c, cache_entry *e) {
  e->prev = NULL;
  e->next = c->head;
  if (c->head) c->head->prev = e;
  c->head = e;
  if (!c->tail) c->tail = e;
}

void cache_destroy(srv_cache *c) {
  pthread_mutex_lock(&c->lock);
  while (c->head) {
    cache_entry *e = c->head;
    unlink_entry(c, e);
    if (--e->refs == 0) entry_free(e);
  }
  pthread_mutex_unlock(&c->lock);
  pthread_mutex_destroy(&c->lock);
  free(c->uses);
  c->uses = NULL;
  c->n_uses = 0;
}

/* The grid as the key sees it: 1 x 1 (or unset) adds nothing; a
 * dimension left out beside a named one is 1. */
static void key_grid(int *replicas, int *partitions) {
  if (!(*replicas > 1 || *partitions > 1)) {
    *replicas = *partitions = 0;
    return;
  }
  if (*replicas < 1) *replicas = 1;
  if (*partitions < 1) *partitions = 1;
}

void cache_key(const char *text, size_t len, int replicas, int partitions,
               uint8_t key[32]) {
  EVP_MD_CTX *ctx = EVP_MD_CTX_new();
  unsigned int n = 32;
  EVP_DigestInit_ex(ctx, EVP_sha256(), NULL);
  EVP_DigestUpdate(ctx, text, len);
  key_grid(&replicas, &partitions);
  if (replicas > 1 || partitions > 1) {
    char grid[64];
    int g = snprintf(grid, sizeof grid, "%cgrid=%dx%d", 0, replicas,
                     partitions);
    EVP_DigestUpdate(ctx, grid, (size_t)g);
  }
  EVP_DigestFinal_ex(ctx, key, &n);
  EVP_MD_CTX_free(ctx);
}


/* A cheap 64-bit hash (8 bytes a step, multiply-xorshift) of the text and
 * the key's grid: only to find candidates, which memcmp confirms. */
static uint64_t text_hash(const char *text, size_t len, int replicas,
                          int partitions) {
  key_grid(&replicas, &partitions);
  uint64_t h = 0x9e3779b97f4a7c15u ^ (len * 0xff51afd7ed558ccdu) ^
               ((uint64_t)(uint32_t)replicas << 32 | (uint32_t)partitions);
  size_t i = 0;
  for (; i + 8 <= len; i += 8) {
    uint64_t w;
    memcpy(&w, text + i, 8);
    h = (h ^ w) * 0xbf58476d1ce4e5b9u;
    h ^= h >> 31;
  }
  uint64_t w = 0;
  memcpy(&w, text + i, len - i);
  h = (h ^ w) * 0x94d049bb133111ebu;
  return h ^ (h >> 29);
}

void cache_key_to_id(const uint8_t key[32], char id[SRV_ID_LEN]) {
  static const char hex[] = "0123456789abcdef";
  memcpy(id, "sha256:", 7);
  for (int i = 0; i < 32; i++) {
    id[7 + 2 * i] = hex[key[i] >> 4];
    id[8 + 2 * i] = hex[key[i] & 15];
  }
  id[71] = 0;
}

bool cache_id_to_key(const char *id, uint8_t key[32]) {
  if (!strncmp(id, "sha256:", 7)) id += 7;
  if (strlen(id) != 64) return false;
  for (int i = 0; i < 64; i++) {
    char ch = id[i];
    int v = ch >= '0' && ch <= '9'   ? ch - '0'
            : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
            : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10
                                     : -1;
    if (v < 0) return false;
    if (i & 1) key[i / 2] |= (uint8_t)v;
    else key[i / 2] = (uint8_t)(v << 4);
  }
  return true;
}

static cache_entry *find(srv_cache *c, const uint8_t key[32]) {
  for (cache_entry *e = c->head; e; e = e->next)
    if (!memcmp(e->key, key, 32)) return e;
  return NULL;
}

/* Move a found entry to the front and reference it (lock held). */
static void touch(srv_cache *c, cache_entry *e) {
  e->refs++;
  e->hits++;
  if (e != c->head) {
    unlink_entry(c, e);
    push_front(c, e);
    e->linked = true;
    c->bytes += e->bytes;
    c->n++;
    charge_owners(c, e, +1);
  }
}

cache_entry *cache_find_text(srv_cache *c, const char *text, size_t len,
                             int replicas, int partitions, bool count_hit) {
  uint64_t h = text_hash(text, len, replicas, partitions);
  pthread_mutex_lock(&c->lock);
  cache_entry *e = c->head;
  for (; e; e = e->next)
    if (e->text_hash == h && e->text_len == len &&
        !memcmp(e->text, text, len))
      break;
  if (e) {
    touch(c, e);
    if (count_hit) c->hits++;
  }
  pthread_mutex_unlock(&c->lock);
  return e;
}

void cache_count_hit(srv_cache *c) {
  pthread_mutex_lock(&c->lock);
  c->hits++;
  pthread_mutex_unlock(&c->lock);
}

cache_entry *cache_get(srv_cache *c, const uint8_t key[32], bool count_stats) {
  return cache_get_for(c, key, NULL, count_stats); /* NULL: any owner */
}

/* What an entry costs: the engine has no size query for a plan, so this
 * estimates: its plans at ~8 bytes per byte of text, every dense constant
 * twice (in the IR and materialised in the plan), and the IR as its arena
 * holds it: in 64 KiB chunks, so a small module costs at least one.  (A
 * long soak showed it: with the IR counted as 8 bytes per byte of text, a
 * 4 MiB cache of small modules grew towards ~75 MiB of heap, the chunks'
 * untouched pages filling in as the heap was reused.) */
#define ARENA_CHUNK_BYTES ((size_t)64 << 10)

static size_t ir_bytes(const shlo_module *m) {
  size_t used = m->arena ? shlo__arena_used(m->arena) : 0;
  size_t chunks = (used + ARENA_CHUNK_BYTES - 1) / ARENA_CHUNK_BYTES;
  return (chunks ? chunks : 1) * ARENA_CHUNK_BYTES;
}

static size_t dense_bytes(const shlo_block *b) {
  size_t n = 0;
  if (!b) return 0;
  for (int i = 0; i < b->n_ops; i++) {
    const shlo_op *op = b->ops[i];
    for (int a = 0; a < op->n_attrs; a++) {
      const shlo_attr *at = op->attrs[a].value;
      if (at && at->kind == SHLO_ATTR_DENSE && at->dense)
        n += at->dense->nbytes;
    }
    for (int r = 0; r < op->n_regions; r++) n += dense_bytes(op->regions[r]);
  }
  return n;
}

/* ,"key":["tensor<2xf32>", ...] */
static void type_list(strbuf *b, const char *key, int n,
                      const shlo_type **types) {
  char buf[512];
  shlo__json_key(b, key, false);
  shlo__sb_putc(b, '[');
  for (int i = 0; i < n; i++) {
    if (i) shlo__sb_putc(b, ',');
    shlo_type_format(types[i], buf, sizeof buf);
    shlo__json_str(b, buf);
  }
  shlo__sb_putc(b, ']');
}

/* {"id","entry","functions":[{"name","visibility"?,"inputs","outputs"}],
 * "replicas","partitions","bytes","artifact"?:{"stablehlo_version",
 * "producer"}}, malloc'd (NULL on OOM). */
static char *build_info(const cache_entry *e) {
  strbuf b = {0};
  shlo__sb_putc(&b, '{');
  shlo__json_key(&b, "id", true);
  shlo__json_str(&b, e->id);
  const shlo_func *entry = shlo_module_entry(e->m);
  shlo__json_key(&b, "entry", false);
  if (e->entry) shlo__json_str(&b, e->entry);
  else if (entry) shlo__json_str(&b, entry->name);
  else shlo__sb_puts(&b, "null");
  shlo__json_key(&b, "functions", false);
  shlo__sb_putc(&b, '[');
  for (int i = 0; i < shlo_module_num_funcs(e->m); i++) {
    const shlo_func *f = shlo_module_func(e->m, i);
    if (i) shlo__sb_putc(&b, ',');
    shlo__sb_putc(&b, '{');
    shlo__json_key(&b, "name", true);
    shlo__json_str(&b, f->name);
    if (f->visibility) {
      shlo__json_key(&b, "visibility", false);
      shlo__json_str(&b, f->visibility);
    }
    type_list(&b, "inputs", f->n_args, f->arg_types);
    type_list(&b, "outputs", f->n_results, f->result_types);
    shlo__sb_putc(&b, '}');
  }
  shlo__sb_putc(&b, ']');
  shlo__json_key(&b, "replicas", false);
  shlo__json_num(&b, e->replicas);
  shlo__json_key(&b, "partitions", false);
  shlo__json_num(&b, e->partitions);
  shlo__json_key(&b, "bytes", false);
  shlo__json_num(&b, (double)e->bytes);
  if (shlo_module_producer(e->m)) { /* read from a portable artifact */
    shlo__json_key(&b, "artifact", false);
    shlo__sb_putc(&b, '{');
    shlo__json_key(&b, "stablehlo_version", true);
    shlo__json_str(&b, shlo_module_stablehlo_version(e->m));
    shlo__json_key(&b, "producer", false);
    shlo__json_str(&b, shlo_module_producer(e->m));
    shlo__sb_putc(&b, '}');
  }
  shlo__sb_putc(&b, '}');
  return shlo__sb_take(&b);
}

cache_entry *cache_entry_new(shlo_module *m, const uint8_t key[32],
                             int replicas, int partitions, const char *text,
                             size_t text_len) {
  cache_entry *e = calloc(1, sizeof *e);
  if (!e) return NULL;
  e->text = malloc(text_len + 1);
  if (!e->text) {
    free(e);
    return NULL;
  }
  memcpy(e->text, text, text_len);
  e->text[text_len] = 0;
  e->text_len = text_len;
  e->text_hash = text_hash(text, text_len, replicas, partitions);
  memcpy(e->key, key, 32);
  cache_key_to_id(key, e->id);
  e->m = m;
  int mr, mp;
  shlo_module_grid(m, &mr, &mp);
  e->replicas = replicas > 0 ? replicas : mr;
  e->partitions = partitions > 0 ? partitions : mp;
  e->refs = 1;
  atomic_init(&e->slow_us, -1);
  shlo_cancel_set(&e->compile_stop, 0);
  pthread_mutex_init(&e->lock, NULL);
  size_t dense = 0;
  for (int i = 0; i < shlo_module_num_funcs(m); i++)
    dense += dense_bytes(shlo_module_func(m, i)->body);
  e->bytes = sizeof *e + 8 * text_len + 2 * dense + ir_bytes(m);
  e->info = build_info(e);
  if (!e->info) {
    e->m = NULL;
    entry_free(e);
    return NULL;
  }
  return e;
}

int cache_entry_set_entry(cache_entry *e, const char *entry) {
  char *name = strdup(entry), *info;
  if (!name) return -1;
  char *old = e->entry;
  e->entry = name;
  if (!(info = build_info(e))) {
    e->entry = old;
    free(name);
    return -1;
  }
  free(old);
  free(e->info);
  e->info = info;
  return 0;
}

void cache_entry_ran(cache_entry *e, double seconds) {
  double us = seconds * 1e6;
  int v = us > 1e9 ? 1000000000 : (int)us;
  /* the slowest of the recent runs: a slow run shows at once, and fades
   * by a quarter a run */
  int old = atomic_load_explicit(&e->slow_us, memory_order_relaxed);
  int decayed = old < 0 ? 0 : old - old / 4;
  atomic_store_explicit(&e->slow_us, v > decayed ? v : decayed,
                        memory_order_relaxed);
}

/* May an insert by owner evict v?  When each of v's owners is owner
 * itself or holds more than its share (lock held). */
static bool evictable(srv_cache *c, const cache_entry *v, const void *owner) {
  for (int i = 0; i < v->n_owners; i++) {
    if (v->owners[i] == owner) continue;
    const cache_use *u = use_of(c, v->owners[i]);
    if (u && u->share && u->bytes <= u->share) return false;
  }
  return true;
}

/* Evict from the least recently used end until `need` more bytes fit;
 * false when the evictable entries were not enough.  (What it evicted on
 * the way was over its owners' shares, or ownerless: no loss to anyone.
 * Each eviction is judged when reached, since it lowers its owners'
 * charges.) */
static bool make_room(srv_cache *c, size_t need, const void *owner) {
  for (cache_entry *v = c->tail; v && c->bytes + need > c->max_bytes;) {
    cache_entry *prev = v->prev;
    if (evictable(c, v, owner)) {
      unlink_entry(c, v);
      c->evictions++;
      if (--v->refs == 0) entry_free(v);
    }
    v = prev;
  }
  return c->bytes + need <= c->max_bytes;
}

cache_entry *cache_insert_for(srv_cache *c, cache_entry *e, const void *owner,
                              int *no_room) {
  *no_room = CACHE_FITS;
  pthread_mutex_lock(&c->lock);
  cache_entry *old = find(c, e->key);
  if (old) {
    old->refs++;
    pthread_mutex_unlock(&c->lock);
    cache_release(c, e);
    return old;
  }
  if (e->bytes > c->max_bytes || !make_room(c, e->bytes, owner)) {
    *no_room = e->bytes > c->max_bytes ? CACHE_TOO_BIG : CACHE_NO_ROOM;
    pthread_mutex_unlock(&c->lock);
    return e;
  }
  e->refs++; /* the table's reference */
  push_front(c, e);
  e->linked = true;
  c->bytes += e->bytes;
  c->n++;
  pthread_mutex_unlock(&c->lock);
  return e;
}

cache_entry *cache_insert(srv_cache *c, cache_entry *e, bool *too_big) {
  int no_room;
  cache_entry *got = cache_insert_for(c, e, NULL, &no_room);
  *too_big = no_room != CACHE_FITS;
  return got;
}

void cache_retain(srv_cache *c, cache_entry *e) {
  pthread_mutex_lock(&c->lock);
  e->refs++;
  pthread_mutex_unlock(&c->lock);
}

void cache_release(srv_cache *c, cache_entry *e) {
  if (!e) return;
  pthread_mutex_lock(&c->lock);
  bool last = --e->refs == 0;
  pthread_mutex_unlock(&c->lock);
  if (last) entry_free(e);
}

bool cache_remove(srv_cache *c, const uint8_t key[32]) {
  pthread_mutex_lock(&c->lock);
  cache_entry *e = find(c, key);
  bool last = false;
  if (e) {
    unlink_entry(c, e);
    last = --e->refs == 0;
  }
  pthread_mutex_unlock(&c->lock);
  if (last) entry_free(e);
  return e != NULL;
}

const shlo_executable *cache_entry_peek(cache_entry *e, const char *entry) {
  if (!entry) entry = e->entry;
  const shlo_func *f = entry ? shlo_module_find_func(e->m, entry)
                             : shlo_module_entry(e->m);
  if (!f) return NULL;
  const shlo_executable *x = NULL;
  int n = atomic_load_explicit(&e->n_exes, memory_order_acquire);
  for (int i = 0; i < n && !x; i++)
    if (!strcmp(e->exes[i].entry, f->name)) x = e->exes[i].e;
  return x;
}

/* ---- who waits for a compile ---- */

/* Set the flag of w's work: the cache stops, or every waiter of the work
 * is gone (lock held).  Cleared again when a new waiter comes. */
static void recheck_locked(srv_cache *c, cache_waiter *w) {
  bool stop = atomic_load(&c->stopping);
  if (!stop) {
    stop = true;
    for (cache_waiter *o = c->waiters; o && stop; o = o->next)
      if (o->work == w->work && !(o->gone && shlo_cancel_reason(o->gone)))
        stop = false;
  }
  shlo_cancel_set(w->stop, stop);
}

void cache_wait_begin(srv_cache *c, cache_waiter *w, const void *work,
                      const shlo_cancel *gone) {
  const cache_entry *e = work;
  w->work = work ? work : w;
  w->gone = gone;
  shlo_cancel_set(&w->own_stop, 0);
  w->stop = work ? (shlo_cancel *)&e->compile_stop : &w->own_stop;
  pthread_mutex_lock(&c->lock);
  w->prev = NULL;
  w->next = c->waiters;
  if (c->waiters) c->waiters->prev = w;
  c->waiters = w;
  recheck_locked(c, w);
  pthread_mutex_unlock(&c->lock);
}

void cache_wait_end(srv_cache *c, cache_waiter *w) {
  pthread_mutex_lock(&c->lock);
  if (w->prev) w->prev->next = w->next;
  else c->waiters = w->next;
  if (w->next) w->next->prev = w->prev;
  w->prev = w->next = NULL;
  pthread_mutex_unlock(&c->lock);
}

void cache_recheck_waits(srv_cache *c) {
  pthread_mutex_lock(&c->lock);
  for (cache_waiter *w = c->waiters; w; w = w->next) recheck_locked(c, w);
  pthread_mutex_unlock(&c->lock);
}

void cache_stop_compiles(srv_cache *c) {
  atomic_store(&c->stopping, true);
  cache_recheck_waits(c);
}

bool cache_stopping(srv_cache *c) { return atomic_load(&c->stopping); }

/* Compile f of e within e's bounds, stopped by e->compile_stop. */
static shlo_status compile_one(srv_cache *c, cache_entry *e,
                               const shlo_func *f, cache_waiter *w,
                               shlo_executable **x, shlo_diag *diag) {
  /* The flag may be left set by a compile that stopped before: say again
   * whether anyone still waits (a new waiter clears it too). */
  pthread_mutex_lock(&c->lock);
  recheck_locked(c, w);
  pthread_mutex_unlock(&c->lock);
  /* the engine looks only every 256 ops */
  if (shlo_cancel_reason(&e->compile_stop))
    return shlo_diag_set(diag, SHLO_ECANCELED, NULL, 0, 0, "canceled");
  shlo_compile_limits lim;
  cache_bounds_start(&e->bounds, &lim);
  lim.cancel = &e->compile_stop;
  shlo_compile_opts co = {.entry = f->name, .verified = e->verified,
                          .limits = &lim};
  shlo_status st = shlo_compile(e->m, &co, x, diag);
  if (st) cache_bounds_explain(&e->bounds, &lim, st, diag);
  return st;
}

shlo_status cache_entry_exe(srv_cache *c, cache_entry *e, const char *entry,
                            const shlo_cancel *gone,
                            const shlo_executable **out, bool *compiled,
                            shlo_diag *diag) {
  *out = NULL;
  *compiled = false;
  /* Compiled already: no lock (the loop thread comes here for a tiny
   * binary execution, and must not wait for another entry's compile). */
  if ((*out = cache_entry_peek(e, entry))) return SHLO_OK;
  if (!entry) entry = e->entry;
  const shlo_func *f = entry ? shlo_module_find_func(e->m, entry)
                             : shlo_module_entry(e->m);
  if (!f) {
    if (entry)
      return shlo_diag_set(diag, SHLO_EINPUT, NULL, 0, 0,
                           "the module has no function @%s", entry);
    return shlo_diag_set(diag, SHLO_EINPUT, NULL, 0, 0,
                         "the module has no @main and more than one function; "
                         "name one with \"entry\"");
  }
  shlo_status st = SHLO_OK;
  /* Counted as waiting before the lock: a request blocked here while
   * another compiles keeps that compile alive. */
  cache_waiter w;
  cache_wait_begin(c, &w, e, gone);
  pthread_mutex_lock(&e->lock);
  for (int i = 0; i < e->n_exes; i++)
    if (!strcmp(e->exes[i].entry, f->name)) {
      *out = e->exes[i].e;
      goto done;
    }
  if (e->n_exes == SRV_MAX_EXES) {
    st = shlo_diag_set(diag, SHLO_ELIMIT, NULL, 0, 0,
                       "a module may be executed from at most %d different "
                       "entry functions", SRV_MAX_EXES);
    goto done;
  }
  /* gone while it waited for the lock */
  if (gone && shlo_cancel_reason(gone)) {
    st = shlo_diag_set(diag, SHLO_ECANCELED, NULL, 0, 0, "canceled");
    goto done;
  }
  /* An entry whose module passed the verifier in full is not verified
   * again (get_module sets e->verified). */
  shlo_executable *x = NULL;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  st = compile_one(c, e, f, &w, &x, diag);
  if (st) goto done;
  /* the compile joins what the module cost (under e->lock, the only
   * writer once it is shared): a module parsed from the store at start,
   * compiled on first use, costs what that took too */
  clock_gettime(CLOCK_MONOTONIC, &t1);
  atomic_store(&e->cost_ms, atomic_load(&e->cost_ms) +
                                (double)(t1.tv_sec - t0.tv_sec) * 1e3 +
                                (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
  char *name = strdup(f->name);
  if (!name) {
    shlo_executable_free(x);
    st = shlo_diag_set(diag, SHLO_ENOMEM, NULL, 0, 0, "out of memory");
    goto done;
  }
  int n = atomic_load_explicit(&e->n_exes, memory_order_relaxed);
  e->exes[n] = (srv_exe){name, x};
  atomic_store_explicit(&e->n_exes, n + 1, memory_order_release);
  *out = x;
  *compiled = true;
done:
  pthread_mutex_unlock(&e->lock);
  cache_wait_end(c, &w);
  return st;
}

char *cache_list_json(srv_cache *c) { return cache_list_for(c, NULL); }

/* ---- owners ---- */

/* The owner's record, created when missing (lock held); NULL on OOM. */
static cache_use *use_make(srv_cache *c, const void *owner) {
  cache_use *u = use_of(c, owner);
  if (u) return u;
  cache_use *g = realloc(c->uses, (size_t)(c->n_uses + 1) * sizeof *g);
  if (!g) return NULL;
  c->uses = g;
  g[c->n_uses] = (cache_use){owner, 0, 0};
  return &g[c->n_uses++];
}

int cache_set_share(srv_cache *c, const void *owner, size_t share) {
  pthread_mutex_lock(&c->lock);
  cache_use *u = use_make(c, owner);
  if (u) u->share = share;
  pthread_mutex_unlock(&c->lock);
  return u ? 0 : -1;
}

size_t cache_owner_bytes(srv_cache *c, const void *owner) {
  pthread_mutex_lock(&c->lock);
  const cache_use *u = use_of(c, owner);
  size_t n = u ? u->bytes : 0;
  pthread_mutex_unlock(&c->lock);
  return n;
}

static bool owned_by(const cache_entry *e, const void *owner) {
  if (!owner) return true;
  for (int i = 0; i < e->n_owners; i++)
    if (e->owners[i] == owner) return true;
  return false;
}

bool cache_owns(srv_cache *c, const cache_entry *e, const void *owner) {
  pthread_mutex_lock(&c->lock);
  bool yes = owned_by(e, owner);
  pthread_mutex_unlock(&c->lock);
  return yes;
}

cache_entry *cache_get_for(srv_cache *c, const uint8_t key[32],
                           const void *owner, bool count_stats) {
  pthread_mutex_lock(&c->lock);
  cache_entry *e = find(c, key);
  if (e && !owned_by(e, owner)) e = NULL;
  if (e) touch(c, e);
  if (count_stats) {
    if (e) c->hits++;
    else c->misses++;
  }
  pthread_mutex_unlock(&c->lock);
  return e;
}

/* Remove owner from e's owners; an entry nobody owns leaves the table.
 * Returns true when that dropped the table's reference to the last one
 * (the caller frees e after unlocking).  Lock held. */
static bool drop_owner(srv_cache *c, cache_entry *e, const void *owner) {
  cache_use *u = use_of(c, owner);
  for (int i = 0; i < e->n_owners; i++)
    if (e->owners[i] == owner) {
      e->owners[i] = e->owners[--e->n_owners];
      if (u && e->linked) u->bytes -= e->bytes;
      break;
    }
  if (e->n_owners || !e->linked) return false;
  unlink_entry(c, e);
  return --e->refs == 0;
}

/* Owner gives up its least recently used entries (not keep) until `need`
 * more bytes fit in its share (lock held); false if they cannot. */
static bool shrink_owner(srv_cache *c, cache_use *u, size_t need,
                         const cache_entry *keep) {
  for (cache_entry *v = c->tail; v && u->bytes + need > u->share;) {
    cache_entry *prev = v->prev;
    if (v != keep && owned_by(v, u->owner) && drop_owner(c, v, u->owner))
      entry_free(v); /* nobody held it: freeing under the lock is safe */
    v = prev;
  }
  return u->bytes + need <= u->share;
}

cache_adopt_result cache_adopt(srv_cache *c, cache_entry *e,
                               const void *owner, bool evict_own) {
  cache_adopt_result res = CACHE_ADOPTED;
  pthread_mutex_lock(&c->lock);
  cache_use *u = owner ? use_make(c, owner) : NULL;
  if (!owner || !e->linked) goto out;
  if (owned_by(e, owner)) {
    res = CACHE_HAD;
    goto out;
  }
  if (!u) goto out; /* out of memory: used, not remembered */
  if (u->share && u->bytes + e->bytes > u->share &&
      (!evict_own || !shrink_owner(c, u, e->bytes, e))) {
    res = CACHE_OVER_SHARE;
    goto out;
  }
  if (e->n_owners == e->cap_owners) {
    int cap = e->cap_owners ? 2 * e->cap_owners : 2;
    const void **g = realloc(e->owners, (size_t)cap * sizeof *g);
    if (!g) goto out;
    e->owners = g;
    e->cap_owners = cap;
  }
  e->owners[e->n_owners++] = owner;
  u->bytes += e->bytes;
out:
  pthread_mutex_unlock(&c->lock);
  return res;
}

bool cache_disown(srv_cache *c, const uint8_t key[32], const void *owner) {
  pthread_mutex_lock(&c->lock);
  cache_entry *e = find(c, key);
  bool found = e && owned_by(e, owner), last = false;
  if (found && !owner) {
    unlink_entry(c, e);
    last = --e->refs == 0;
  } else if (found) {
    last = drop_owner(c, e, owner);
  }
  pthread_mutex_unlock(&c->lock);
  if (last) entry_free(e);
  return found;
}

char *cache_list_for(srv_cache *c, const void *owner) {
  return cache_list_with(c, owner, NULL, NULL);
}

char *cache_list_with(srv_cache *c, const void *owner,
                      void (*more)(struct strbuf *b, const cache_entry *e,
                                   void *ctx),
                      void *ctx) {
  strbuf b = {0};
  shlo__sb_puts(&b, "{\"modules\":[");
  pthread_mutex_lock(&c->lock);
  bool first = true;
  for (cache_entry *e = c->head; e; e = e->next) {
    if (!owned_by(e, owner)) continue;
    if (!first) shlo__sb_putc(&b, ',');
    first = false;
    if (!more) {
      shlo__sb_puts(&b, e->info);
      continue;
    }
    shlo__sb_add(&b, e->info, strlen(e->info) - 1); /* without its '}' */
    more(&b, e, ctx);
    shlo__sb_putc(&b, '}');
  }
  pthread_mutex_unlock(&c->lock);
  shlo__sb_puts(&b, "]}");
  return shlo__sb_take(&b);
}
