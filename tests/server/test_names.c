/* SPDX-License-Identifier: Apache-2.0 */
/* Model names per team (server/src/names.c, issue #34) as a model
 * repository uses them: a version dropped alone leaves the others, its
 * number is never given again, a snapshot is one team's rows (or all)
 * sorted by team, name and version; and the cache's listing with keys
 * added per entry, an entry retained past its unlinking (cache.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cache.h"
#include "names.h"
#include "core/strbuf.h"
#include "../cache_test_entry.h"

static const char *const ID1 = "sha256:11", *const ID2 = "sha256:22";

static void drop_one_version(void **state) {
  (void)state;
  srv_names t;
  srv_names_init(&t);
  assert_int_equal(srv_names_put(&t, "alpha", "m", 1, ID1, 10), 1);
  assert_int_equal(srv_names_put(&t, "alpha", "m", 2, ID2, 20), 2);
  assert_int_equal(srv_names_put(&t, "beta", "m", 0, ID1, 30), 1);
  assert_true(srv_names_drop_version(&t, "alpha", "m", 2));
  assert_false(srv_names_drop_version(&t, "alpha", "m", 2)); /* gone */
  assert_false(srv_names_drop_version(&t, "alpha", "m", 0)); /* no "latest" */
  char id[SRV_ID_LEN];
  int found;
  assert_true(srv_names_find(&t, "alpha", "m", 0, id, &found));
  assert_int_equal(found, 1); /* the latest left */
  assert_string_equal(id, ID1);
  assert_true(srv_names_find(&t, "beta", "m", 0, id, &found));
  /* a registration after the drop: 3, never 2 again */
  assert_int_equal(srv_names_put(&t, "alpha", "m", 0, ID2, 40), 3);
  srv_names_free(&t);
}

static void snapshots(void **state) {
  (void)state;
  srv_names t;
  srv_names_init(&t);
  srv_name_row *rows;
  assert_int_equal(srv_names_snapshot(&t, NULL, &rows), 0);
  assert_null(rows); /* nothing to free */
  srv_names_put(&t, "beta", "z", 0, ID1, 1);
  srv_names_put(&t, "alpha", "b", 2, ID2, 2);
  srv_names_put(&t, "alpha", "a", 0, ID1, 3);
  srv_names_put(&t, "alpha", "b", 1, ID1, 4);
  int n = srv_names_snapshot(&t, "alpha", &rows);
  assert_int_equal(n, 3);
  assert_string_equal(rows[0].name, "a");
  assert_string_equal(rows[1].name, "b");
  assert_int_equal(rows[1].version, 1);
  assert_int_equal(rows[2].version, 2);
  free(rows);
  n = srv_names_snapshot(&t, NULL, &rows);
  assert_int_equal(n, 4);
  assert_string_equal(rows[0].team, "alpha");
  assert_string_equal(rows[3].team, "beta");
  free(rows);
  assert_int_equal(srv_names_snapshot(&t, "gamma", &rows), 0);
  assert_null(rows);
  srv_names_free(&t);
}

static void extra_keys(struct strbuf *b, const cache_entry *e, void *ctx) {
  (void)e;
  ++*(int *)ctx;
  shlo__sb_puts(b, ",\"x\":1");
}

static void listing_and_retain(void **state) {
  (void)state;
  srv_cache c;
  cache_init(&c, 1 << 30);
  bool too_big;
  cache_entry *e = cache_insert(&c, make_padded_entry(1, 0), &too_big);
  int calls = 0;
  char *json = cache_list_with(&c, NULL, extra_keys, &calls);
  assert_int_equal(calls, 1);
  assert_non_null(strstr(json, ",\"x\":1}]}"));
  free(json);
  json = cache_list_for(&c, NULL); /* without: the info as it is */
  assert_null(strstr(json, "\"x\""));
  free(json);
  /* a reference taken with cache_retain outlives the cache's own */
  cache_retain(&c, e);
  assert_true(cache_remove(&c, e->key));
  cache_release(&c, e);
  assert_non_null(e->m); /* still held: readable (ASan: no use after free) */
  cache_release(&c, e);
  cache_destroy(&c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(drop_one_version),
      cmocka_unit_test(snapshots),
      cmocka_unit_test(listing_and_retain),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
