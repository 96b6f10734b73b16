/* SPDX-License-Identifier: Apache-2.0 */
/* For the module cache's tests (test_cache.c, server/test_cache_owners.c):
 * a new unlinked entry for a one-function program whose text is tagged
 * (so it is unique) and padded with a comment to about `pad` bytes (the
 * byte estimate grows with it). */
#ifndef SHLO_CACHE_TEST_ENTRY_H
#define SHLO_CACHE_TEST_ENTRY_H

static cache_entry *make_padded_entry(int tag, size_t pad) {
  char text[4096];
  int n = snprintf(text, sizeof text, "// %d ", tag);
  while ((size_t)n < pad && n < (int)sizeof text - 64) text[n++] = 'x';
  n += snprintf(text + n, sizeof text - (size_t)n,
                "\nfunc.func @main() {\n  func.return\n}\n");
  shlo_module *m;
  shlo_diag d;
  assert_int_equal(shlo_parse_module(text, (size_t)n, "t", &m, &d), 0);
  uint8_t key[32];
  cache_key(text, (size_t)n, 0, 0, key);
  cache_entry *e = cache_entry_new(m, key, 0, 0, text, (size_t)n);
  assert_non_null(e);
  return e;
}

#endif
