/* Nearest-name suggestions (suggest.h). */
#include "core/suggest.h"

#include <string.h>

#define MAX_NAME 128

int shlo__edit_distance(const char *a, size_t an, const char *b, size_t bn) {
  if (an > MAX_NAME || bn > MAX_NAME) return MAX_NAME;
  int row[MAX_NAME + 1];
  for (size_t j = 0; j <= bn; j++) row[j] = (int)j;
  for (size_t i = 1; i <= an; i++) {
    int diag = row[0]; /* row[i-1][j-1] */
    row[0] = (int)i;
    for (size_t j = 1; j <= bn; j++) {
      int up = row[j];
      int best = diag + (a[i - 1] != b[j - 1]);
      if (up + 1 < best) best = up + 1;
      if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
      row[j] = best;
      diag = up;
    }
  }
  return row[bn];
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
