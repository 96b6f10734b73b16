/* SPDX-License-Identifier: Apache-2.0 */
/* The module cache's owners (server/src/cache.c, issue #14): an entry is
 * seen only by the teams that adopted it; adopting says whether the team
 * had it; a team's share caps what it registers and protects its entries
 * from other teams' inserts; disowning leaves other teams' claims; the
 * per-owner charges always add up.  And the owners of a module's store
 * record (store.c, issue #30): every team is kept, one leaves alone, and
 * a record of the older one-team format still reads. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cache.h"
#include "store.h"
#include "../cache_test_entry.h"

static const char alpha[] = "alpha", beta[] = "beta"; /* two owners */

static cache_entry *make_entry(int tag) { return make_padded_entry(tag, 0); }

/* Insert for owner and adopt; returns the linked entry's key. */
static cache_adopt_result put(srv_cache *c, int tag, const void *owner,
                              bool evict_own, uint8_t key[32]) {
  cache_entry *e = make_entry(tag);
  int no_room;
  memcpy(key, e->key, 32);
  cache_entry *got = cache_insert_for(c, e, owner, &no_room);
  cache_adopt_result r = cache_adopt(c, got, owner, evict_own);
  cache_release(c, got);
  return r;
}

/* Each owner's charge is the sum of the linked entries it owns. */
static void check_charges(srv_cache *c) {
  for (int i = 0; i < c->n_uses; i++) {
    size_t sum = 0;
    for (const cache_entry *e = c->head; e; e = e->next)
      for (int k = 0; k < e->n_owners; k++)
        if (e->owners[k] == c->uses[i].owner) sum += e->bytes;
    assert_int_equal(sum, c->uses[i].bytes);
  }
  assert_true(c->bytes <= c->max_bytes);
}

static void visibility_and_adoption(void **state) {
  (void)state;
  srv_cache c;
  cache_init(&c, 1 << 20);
  uint8_t k[32];
  assert_int_equal(put(&c, 1, alpha, true, k), CACHE_ADOPTED);
  cache_entry *e = cache_get_for(&c, k, beta, true);
  assert_null(e); /* beta does not see it */
  e = cache_get_for(&c, k, alpha, true);
  assert_non_null(e);
  assert_true(cache_owns(&c, e, alpha));
  assert_false(cache_owns(&c, e, beta));
  assert_int_equal(cache_adopt(&c, e, alpha, false), CACHE_HAD);
  assert_int_equal(cache_adopt(&c, e, beta, false), CACHE_ADOPTED);
  assert_int_equal(cache_adopt(&c, e, beta, false), CACHE_HAD);
  cache_release(&c, e);
  char *list = cache_list_for(&c, beta);
  assert_non_null(strstr(list, "sha256:"));
  free(list);
  check_charges(&c);
  /* alpha lets go: beta keeps it; beta lets go: it leaves */
  assert_true(cache_disown(&c, k, alpha));
  assert_false(cache_disown(&c, k, alpha));
  assert_null(cache_get_for(&c, k, alpha, false));
  assert_int_equal(c.n, 1);
  assert_true(cache_disown(&c, k, beta));
  assert_int_equal(c.n, 0);
  check_charges(&c);
  list = cache_list_for(&c, NULL);
  assert_string_equal(list, "{\"modules\":[]}");
  free(list);
  cache_destroy(&c);
}

static void shares(void **state) {
  (void)state;
  srv_cache c;
  cache_entry *probe = make_entry(0);
  size_t one = probe->bytes; /* the entries below differ by a byte or two */
  cache_init(&c, 4 * one + one / 2);
  cache_release(&c, probe); /* unlinked, one reference: freed */
  assert_int_equal(cache_set_share(&c, alpha, 2 * one + one / 2), 0);
  assert_int_equal(cache_set_share(&c, beta, 2 * one + one / 2), 0);
  uint8_t a1[32], a2[32], k[32];
  assert_int_equal(put(&c, 10, alpha, false, a1), CACHE_ADOPTED);
  assert_int_equal(put(&c, 11, alpha, false, a2), CACHE_ADOPTED);
  /* a third would pass alpha's share: refused when it may not evict */
  assert_int_equal(put(&c, 12, alpha, false, k), CACHE_OVER_SHARE);
  check_charges(&c);
  /* beta runs many programs: it evicts its own, never alpha's */
  for (int i = 0; i < 20; i++) {
    put(&c, 100 + i, beta, true, k);
    check_charges(&c);
  }
  cache_entry *e = cache_get_for(&c, a1, alpha, false);
  assert_non_null(e);
  cache_release(&c, e);
  assert_non_null(e = cache_get_for(&c, a2, alpha, false));
  cache_release(&c, e);
  assert_true(cache_owner_bytes(&c, beta) <= 2 * one + one / 2);
  /* with evict_own, alpha's third pushes out alpha's least recent (a1:
   * a2 was touched last) */
  assert_int_equal(put(&c, 13, alpha, true, k), CACHE_ADOPTED);
  assert_null(cache_get_for(&c, a1, alpha, false));
  check_charges(&c);
  cache_destroy(&c);
}

static const char program[] =
    "func.func @main() -> tensor<i32> {\n  %c = stablehlo.constant "
    "dense<1> : tensor<i32>\n  return %c : tensor<i32>\n}\n";

/* The record of program in dir with teams, read back header only. */
static void write_teams(const char *dir, const char *const *teams, int n,
                        store_record *back) {
  uint8_t key[32];
  char why[512];
  store_record r = {.program = (char *)program,
                    .program_len = sizeof program - 1};
  cache_key(program, r.program_len, 0, 0, key);
  cache_key_to_id(key, r.id);
  for (int i = 0; i < n; i++)
    assert_int_equal(store_record_add_team(&r, teams[i]), 0);
  assert_int_equal(store_write(dir, &r, why, sizeof why), 0);
  free(r.teams);
  assert_int_equal(store_read(dir, r.id, true, back, why, sizeof why), 0);
}

static void store_record_teams(void **state) {
  (void)state;
  char dir[] = "/tmp/shlo-owners-XXXXXX", why[512], path[256];
  assert_non_null(mkdtemp(dir));
  const char *const two[] = {alpha, beta, alpha}; /* a repeat adds nothing */
  store_record r;
  write_teams(dir, two, 3, &r);
  assert_int_equal(r.n_teams, 2);
  assert_string_equal(r.teams[0], alpha);
  assert_string_equal(r.teams[1], beta);
  /* one team leaves; the other stays, and the record says so */
  assert_true(store_record_drop_team(&r, alpha));
  assert_false(store_record_drop_team(&r, alpha));
  assert_false(store_record_has_team(&r, alpha));
  assert_true(store_record_has_team(&r, beta));
  char id[SRV_ID_LEN];
  memcpy(id, r.id, sizeof id);
  store_record_free(&r);
  /* names per team and version, read back as written */
  {
    store_record n = {.program = (char *)program,
                      .program_len = sizeof program - 1,
                      .registered_ns = 9};
    memcpy(n.id, id, sizeof n.id);
    srv_name_row rows[2] = {{"alpha-team", "m", 3, "", 7},
                            {"beta-team", "m", 1, "", 8}};
    n.names = rows;
    n.n_names = 2;
    assert_int_equal(store_record_add_team(&n, "alpha-team"), 0);
    assert_int_equal(store_record_add_team(&n, "beta-team"), 0);
    assert_int_equal(store_write(dir, &n, why, sizeof why), 0);
    free(n.teams);
    assert_int_equal(store_read(dir, n.id, true, &r, why, sizeof why), 0);
    assert_int_equal(r.n_names, 2);
    assert_string_equal(r.names[0].team, "alpha-team");
    assert_int_equal(r.names[0].version, 3);
    assert_int_equal(r.names[0].registered_ns, 7);
    assert_string_equal(r.names[1].team, "beta-team");
    assert_string_equal(r.names[1].name, "m");
    assert_string_equal(r.names[1].id, n.id);
    store_record_free(&r);
  }
  /* the older format: one team line, as servers before wrote it */
  snprintf(path, sizeof path, "%s/%s.module", dir, id + 7);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fprintf(f, "shlo-module 1\nid %s\nteam gamma\nname old\nentry \n"
             "replicas 0\npartitions 0\nregistered 5\nprogram-bytes %zu"
             "\n\n%s", id, sizeof program - 1, program);
  fclose(f);
  assert_int_equal(store_read(dir, id, false, &r, why, sizeof why), 0);
  assert_int_equal(r.n_teams, 1);
  assert_string_equal(r.teams[0], "gamma");
  /* its name reads as the first team's version 1 */
  assert_int_equal(r.n_names, 1);
  assert_string_equal(r.names[0].team, "gamma");
  assert_string_equal(r.names[0].name, "old");
  assert_int_equal(r.names[0].version, 1);
  assert_string_equal(r.names[0].id, id);
  store_record_free(&r);
  /* a record with no team left is not written (DELETE removes it) */
  store_record none = {.program = (char *)program,
                       .program_len = sizeof program - 1};
  memcpy(none.id, id, sizeof none.id);
  assert_int_equal(store_write(dir, &none, why, sizeof why), -1);
  assert_int_equal(store_remove(dir, id), 0);
  assert_int_equal(rmdir(dir), 0);
}

/* A header line of a record of program into dir/<id>.module (the rest
 * as the server writes it); store_read's status back. */
static int read_with_line(const char *dir, const char *line,
                          store_record *r) {
  uint8_t key[32];
  char id[SRV_ID_LEN], path[256], why[512];
  cache_key(program, sizeof program - 1, 0, 0, key);
  cache_key_to_id(key, id);
  snprintf(path, sizeof path, "%s/%s.module", dir, id + 7);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fprintf(f, "shlo-module 2\nid %s\nteam gamma\n%s\nentry \nreplicas 0\n"
             "partitions 0\nregistered 5\nprogram-bytes %zu\n\n%s", id,
          line, sizeof program - 1, program);
  fclose(f);
  int rc = store_read(dir, id, true, r, why, sizeof why);
  unlink(path);
  return rc;
}

/* A team's batching of a module: written and read back as it was; a
 * line out of a registration's bounds makes the record untrusted. */
static void store_record_batching(void **state) {
  (void)state;
  char dir[] = "/tmp/shlo-owners-XXXXXX", why[512];
  assert_non_null(mkdtemp(dir));
  store_batching b[2] = {
      {"gamma", {.max_batch_size = 8, .max_queue_delay_us = 1500,
                 .preferred = {2, 8}, .n_preferred = 2,
                 .max_queue_size = 5}, "main"},
      {"delta", {.max_batch_size = 1}, "a b"}}; /* a quoted @"a b" */
  store_record w = {.program = (char *)program,
                    .program_len = sizeof program - 1, .batching = b,
                    .n_batching = 2};
  uint8_t key[32];
  cache_key(program, w.program_len, 0, 0, key);
  cache_key_to_id(key, w.id);
  assert_int_equal(store_record_add_team(&w, "gamma"), 0);
  assert_int_equal(store_write(dir, &w, why, sizeof why), 0);
  free(w.teams);
  store_record r;
  assert_int_equal(store_read(dir, w.id, false, &r, why, sizeof why), 0);
  assert_int_equal(r.n_batching, 2);
  assert_string_equal(r.batching[0].team, "gamma");
  assert_int_equal(r.batching[0].cfg.max_batch_size, 8);
  assert_int_equal(r.batching[0].cfg.max_queue_delay_us, 1500);
  assert_int_equal(r.batching[0].cfg.n_preferred, 2);
  assert_int_equal(r.batching[0].cfg.preferred[1], 8);
  assert_int_equal(r.batching[0].cfg.max_queue_size, 5);
  assert_string_equal(r.batching[0].entry, "main");
  assert_string_equal(r.batching[1].entry, "a b");
  assert_int_equal(r.batching[1].cfg.n_preferred, 0);
  store_record_free(&r);
  assert_int_equal(store_remove(dir, w.id), 0);
  /* a record without the line batches nothing */
  assert_int_equal(read_with_line(dir, "team gamma", &r), 0);
  assert_int_equal(r.n_batching, 0);
  store_record_free(&r);
  assert_int_equal(read_with_line(dir, "batching gamma 4 0 0 - main", &r),
                   0);
  assert_int_equal(r.n_batching, 1);
  store_record_free(&r);
  static const char *const bad[] = {
      "batching gamma 0 0 0 - main",       /* batching off is no line */
      "batching gamma 99999 0 0 - main",   /* over SRV_BATCH_MAX_SIZE */
      "batching gamma 4 -1 0 - main",      /* a negative delay */
      "batching gamma 4 0 0 8 main",       /* preferred over the max */
      "batching gamma 4 0 0 4,2 main",     /* not ascending */
      "batching gamma 4 0 0 2,,4 main",
      "batching gamma 4 0 0 -",            /* no entry */
      "batching ../x 4 0 0 - main",        /* not a team name */
      "batching gamma 4 0 x - main"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
    assert_int_equal(read_with_line(dir, bad[i], &r), -1);
  assert_int_equal(rmdir(dir), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(store_record_batching),
      cmocka_unit_test(visibility_and_adoption),
      cmocka_unit_test(shares),
      cmocka_unit_test(store_record_teams),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
