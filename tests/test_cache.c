/* SPDX-License-Identifier: Apache-2.0 */
/* The server's module cache (server/src/cache.c): LRU order, the byte
 * bound and eviction, references that outlive eviction, and the invariants
 * under several threads inserting, looking up and removing at once. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cache.h"
#include "cache_test_entry.h"

static cache_entry *make_entry(int tag, size_t pad) {
  return make_padded_entry(tag, pad);
}

/* Link e, drop the caller's reference; returns e's key. */
static void insert(srv_cache *c, cache_entry *e, uint8_t key[32]) {
  bool too_big;
  memcpy(key, e->key, 32);
  cache_entry *got = cache_insert(c, e, &too_big);
  assert_false(too_big);
  cache_release(c, got);
}

/* The list is consistent and its bytes add up (lock held or quiescent). */
static void check_invariants(srv_cache *c) {
  size_t bytes = 0;
  int n = 0;
  const cache_entry *prev = NULL;
  for (const cache_entry *e = c->head; e; prev = e, e = e->next) {
    assert_ptr_equal(e->prev, prev);
    assert_true(e->linked);
    assert_true(e->refs >= 1);
    bytes += e->bytes;
    n++;
  }
  assert_ptr_equal(c->tail, prev);
  assert_int_equal(n, c->n);
  assert_int_equal(bytes, c->bytes);
  assert_true(c->bytes <= c->max_bytes);
}

static void lookups_move_entries_to_the_front(void **state) {
  (void)state;
  srv_cache c;
  cache_init(&c, 1 << 30);
  uint8_t ka[32], kb[32], kc[32];
  insert(&c, make_entry(1, 10), ka);
  insert(&c, make_entry(2, 10), kb);
  insert(&c, make_entry(3, 10), kc);
  assert_memory_equal(c.head->key, kc, 32); /* most recent first */
  assert_memory_equal(c.tail->key, ka, 32);
  cache_entry *a = cache_get(&c, ka, true);
  assert_non_null(a);
  cache_release(&c, a);
  assert_memory_equal(c.head->key, ka, 32);
  assert_memory_equal(c.head->next->key, kc, 32);
  assert_memory_equal(c.tail->key, kb, 32);
  assert_int_equal(c.hits, 1);
  uint8_t none[32] = {0};
  assert_null(cache_get(&c, none, true));
  assert_int_equal(c.misses, 1);
  /* The module list follows the same order. */
  char *list = cache_list_json(&c);
  char *pa = strstr(list, c.head->id), *pb = strstr(list, c.tail->id);
  assert_non_null(pa);
  assert_non_null(pb);
  assert_true(pa < pb);
  assert_int_equal(strncmp(list, "{\"modules\":[{\"id\":", 18), 0);
  free(list);
  check_invariants(&c);
  cache_destroy(&c);
}

static void the_byte_bound_evicts_least_recent(void **state) {
  (void)state;
  cache_entry *probe = make_entry(0, 1000);
  size_t one = probe->bytes;
  srv_cache c;
  cache_init(&c, 2 * one + one / 2); /* room for two */
  cache_release(&c, probe);
  uint8_t k1[32], k2[32], k3[32], k4[32];
  insert(&c, make_entry(1, 1000), k1);
  insert(&c, make_entry(2, 1000), k2);
  insert(&c, make_entry(3, 1000), k3);
  assert_int_equal(c.n, 2);
  assert_int_equal(c.evictions, 1);
  assert_null(cache_get(&c, k1, false)); /* the oldest went */
  cache_entry *e = cache_get(&c, k2, false); /* k2 is now the newest */
  cache_release(&c, e);
  insert(&c, make_entry(4, 1000), k4);
  assert_null(cache_get(&c, k3, false)); /* so k3 went, not k2 */
  e = cache_get(&c, k2, false);
  assert_non_null(e);
  cache_release(&c, e);
  check_invariants(&c);
  cache_destroy(&c);
}

static void held_entries_outlive_eviction(void **state) {
  (void)state;
  srv_cache c;
  cache_entry *big = make_entry(9, 3000);
  cache_init(&c, big->bytes - 1);
  /* Larger than the whole budget: not linked, still usable. */
  bool too_big;
  assert_ptr_equal(cache_insert(&c, big, &too_big), big);
  assert_true(too_big);
  assert_false(big->linked);
  assert_int_equal(c.n, 0);
  cache_release(&c, big);
  /* A referenced entry that is evicted stays alive until released. */
  uint8_t k1[32], k2[32];
  cache_entry *a = make_entry(1, 1500);
  bool tb;
  cache_entry *held = cache_insert(&c, a, &tb); /* our reference */
  memcpy(k1, held->key, 32);
  insert(&c, make_entry(2, 1500), k2);
  assert_false(held->linked);
  assert_non_null(shlo_module_entry(held->m));
  const shlo_executable *x;
  bool compiled;
  shlo_diag d;
  assert_int_equal(cache_entry_exe(&c, held, NULL, NULL, &x, &compiled, &d),
                   SHLO_OK);
  assert_true(compiled);
  cache_release(&c, held);
  /* The same key twice gives the entry already there. */
  cache_entry *dup = make_entry(2, 1500);
  cache_entry *got = cache_insert(&c, dup, &tb);
  assert_memory_equal(got->key, k2, 32);
  assert_true(got->linked);
  cache_release(&c, got);
  assert_true(cache_remove(&c, k2));
  assert_false(cache_remove(&c, k2));
  assert_int_equal(c.n, 0);
  check_invariants(&c);
  cache_destroy(&c);
}

/* ---- concurrency ---- */

#define N_THREADS 8
#define N_OPS 400
#define N_TAGS 24

typedef struct worker {
  srv_cache *c;
  unsigned seed;
  uint8_t keys[N_TAGS][32];
} worker;

static void *churn(void *arg) {
  worker *w = arg;
  for (int i = 0; i < N_OPS; i++) {
    int tag = (int)(rand_r(&w->seed) % N_TAGS);
    switch (rand_r(&w->seed) % 4) {
    case 0: { /* insert (or find it there already) */
      cache_entry *e = make_entry(tag, 200 + 50 * (size_t)tag);
      bool too_big;
      cache_entry *got = cache_insert(w->c, e, &too_big);
      cache_release(w->c, got);
      break;
    }
    case 1:
    case 2: { /* look up and use it while others evict */
      cache_entry *e = cache_get(w->c, w->keys[tag], true);
      if (e) {
        assert_memory_equal(e->key, w->keys[tag], 32);
        assert_non_null(shlo_module_entry(e->m));
        cache_release(w->c, e);
      }
      break;
    }
    default:
      cache_remove(w->c, w->keys[tag]);
    }
    if (i % 50 == 0) { /* the invariants hold at every quiet moment */
      pthread_mutex_lock(&w->c->lock);
      check_invariants(w->c);
      pthread_mutex_unlock(&w->c->lock);
    }
  }
  return NULL;
}

static void concurrent_use_keeps_the_invariants(void **state) {
  (void)state;
  srv_cache c;
  cache_entry *probe = make_entry(0, 600);
  cache_init(&c, 6 * probe->bytes); /* far fewer than N_TAGS fit */
  cache_release(&c, probe);
  static worker w[N_THREADS];
  for (int t = 0; t < N_THREADS; t++) {
    w[t].c = &c;
    w[t].seed = 1234u + (unsigned)t;
    for (int k = 0; k < N_TAGS; k++) {
      cache_entry *e = make_entry(k, 200 + 50 * (size_t)k);
      memcpy(w[t].keys[k], e->key, 32);
      cache_release(&c, e);
    }
  }
  pthread_t th[N_THREADS];
  for (int t = 0; t < N_THREADS; t++)
    assert_int_equal(pthread_create(&th[t], NULL, churn, &w[t]), 0);
  for (int t = 0; t < N_THREADS; t++) pthread_join(th[t], NULL);
  check_invariants(&c);
  assert_true(c.evictions > 0);
  for (const cache_entry *e = c.head; e; e = e->next)
    assert_int_equal(e->refs, 1); /* only the table's reference is left */
  cache_destroy(&c);
}

/* A compile shared by several requests stops only when all of them are
 * gone; a new waiter revives it; shutdown stops everything; work done for
 * one waiter alone stops with it. */
static void compiles_stop_when_no_one_waits(void **state) {
  (void)state;
  srv_cache c;
  cache_init(&c, 1 << 20);
  cache_entry *e = make_entry(1, 100);
  shlo_cancel gone_a = SHLO_CANCEL_INIT, gone_b = SHLO_CANCEL_INIT,
              gone_c = SHLO_CANCEL_INIT;
  cache_waiter a, b, w;
  cache_wait_begin(&c, &a, e, &gone_a);
  cache_wait_begin(&c, &b, e, &gone_b);
  assert_int_equal(shlo_cancel_reason(&e->compile_stop), 0);
  shlo_cancel_set(&gone_a, 1);
  cache_recheck_waits(&c);
  assert_int_equal(shlo_cancel_reason(&e->compile_stop), 0); /* b still waits */
  shlo_cancel_set(&gone_b, 1);
  cache_recheck_waits(&c);
  assert_int_equal(shlo_cancel_reason(&e->compile_stop), 1);
  cache_waiter late;
  cache_wait_begin(&c, &late, e, &gone_c); /* wants the result after all */
  assert_int_equal(shlo_cancel_reason(&e->compile_stop), 0);
  /* one waiter alone: its own flag, untouched by the entry's */
  shlo_cancel gone_w = SHLO_CANCEL_INIT;
  cache_wait_begin(&c, &w, NULL, &gone_w);
  assert_ptr_equal(w.stop, &w.own_stop);
  assert_int_equal(shlo_cancel_reason(&w.own_stop), 0);
  shlo_cancel_set(&gone_w, 1);
  cache_recheck_waits(&c);
  assert_int_equal(shlo_cancel_reason(&w.own_stop), 1);
  assert_int_equal(shlo_cancel_reason(&e->compile_stop), 0);
  cache_wait_end(&c, &w);
  assert_false(cache_stopping(&c));
  cache_stop_compiles(&c);
  assert_true(cache_stopping(&c));
  assert_int_equal(shlo_cancel_reason(&e->compile_stop), 1);
  cache_wait_end(&c, &a);
  cache_wait_end(&c, &b);
  cache_wait_end(&c, &late);
  assert_null(c.waiters);
  /* stopping: a compile refuses to start */
  const shlo_executable *x;
  bool compiled;
  shlo_diag d;
  assert_int_equal(cache_entry_exe(&c, e, NULL, NULL, &x, &compiled, &d),
                   SHLO_ECANCELED);
  assert_false(compiled);
  cache_release(&c, e);
  cache_destroy(&c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(lookups_move_entries_to_the_front),
      cmocka_unit_test(the_byte_bound_evicts_least_recent),
      cmocka_unit_test(held_entries_outlive_eviction),
      cmocka_unit_test(concurrent_use_keeps_the_invariants),
      cmocka_unit_test(compiles_stop_when_no_one_waits),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
