/* SPDX-License-Identifier: Apache-2.0 */
/* "Did you mean ...?": the known name nearest to a misspelt one, by edit
 * distance, for the parser's and the verifier's errors about names that do
 * not exist (ops, enum values, keywords, types, functions). */
#ifndef SHLO_SUGGEST_H
#define SHLO_SUGGEST_H

#include <stdbool.h>
#include <stddef.h>

/* Edit distance (insert, delete, substitute one character, or swap two
 * adjacent ones) of a[0..an) and b[0..bn); names over 128 characters
 * count as far. */
int shlo__edit_distance(const char *a, size_t an, const char *b, size_t bn);

/* Whether a name of n characters at distance d from a candidate is near
 * enough to be a misspelling of it: 1 edit up to 4 characters, 2 up to 8,
 * 3 beyond (a shorter name is mostly its typo). */
bool shlo__near_enough(size_t n, int d);

/* The candidate nearest to s[0..n) (the first of equals) when near
 * enough, else NULL.  cands: n_cands strings, or NULL-terminated when
 * n_cands < 0. */
const char *shlo__suggest(const char *s, size_t n, const char *const *cands,
                          int n_cands);

#endif
