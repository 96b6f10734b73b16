/* SPDX-License-Identifier: Apache-2.0 */
/* Nearest-name suggestions (suggest.h). */
#include "core/suggest.h"

#include <string.h>

#define MAX_NAME 128

/* Optimal string alignment: Levenshtein plus the swap of two adjacent
 * characters as one edit ("tna" for "tan" is one typo), over three rows. */
int shlo__edit_distance(const char *a, size_t an, const char *b, size_t bn) {
  if (an > MAX_NAME || bn > MAX_NAME) return MAX_NAME;
  int rows[3][MAX_NAME + 1];
  int *two = rows[0], *prev = rows[1], *cur = rows[2];
  for (size_t j = 0; j <= bn; j++) prev[j] = (int)j;
  for (size_t i = 1; i <= an; i++) {
    cur[0] = (int)i;
    for (size_t j = 1; j <= bn; j++) {
      int best = prev[j - 1] + (a[i - 1] != b[j - 1]);
      if (prev[j] + 1 < best) best = prev[j] + 1;
      if (cur[j - 1] + 1 < best) best = cur[j - 1] + 1;
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
          two[j - 2] + 1 < best)
        best = two[j - 2] + 1;
      cur[j] = best;
    }
    int *t = two;
    two = prev;
    prev = cur;
    cur = t;
  }
  return prev[bn];
}

bool shlo__near_enough(size_t n, int d) {
  return d > 0 && d <= (n <= 4 ? 1 : n <= 8 ? 2 : 3);
}

const char *shlo__suggest(const char *s, size_t n, const char *const *cands,
                          int n_cands) {
  const char *best = NULL;
  int best_d = MAX_NAME + 1;
  for (int i = 0; n_cands < 0 ? cands[i] != NULL : i < n_cands; i++) {
    int d = shlo__edit_distance(s, n, cands[i], strlen(cands[i]));
    if (d < best_d) {
      best_d = d;
      best = cands[i];
    }
  }
  return best && shlo__near_enough(n, best_d) ? best : NULL;
}
