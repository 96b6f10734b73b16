/* Exact 64-bit integers through cJSON.  cJSON reads every number as a
 * double, which holds integers exactly only up to 2^53: an i64 or ui64
 * element beyond that would be rounded silently.  Before parsing, integer
 * tokens (no fraction, no exponent) whose magnitude exceeds 2^53 are put
 * in quotes, so they reach the tensor decoder as decimal strings, which it
 * reads exactly (PROTOCOL.md lets integer data be strings).  Bodies without
 * such tokens -- nearly all -- are parsed in place, without a copy. */
#include <stdlib.h>
#include <string.h>

#include "shlo/protocol.h"

/* Past the string starting at s[i] == '"' (its closing quote included). */
static size_t skip_string(const char *s, size_t len, size_t i) {
  for (i++; i < len; i++) {
    if (s[i] == '\\') i++;
    else if (s[i] == '"') return i + 1;
  }
  return len;
}

/* The integer token at s[i..*end): true when it has no fraction or
 * exponent and its magnitude exceeds 2^53 (what a double may round). */
static bool big_integer(const char *s, size_t len, size_t i, size_t *end) {
  size_t j = i + (s[i] == '-');
  size_t d0 = j;
  while (j < len && s[j] >= '0' && s[j] <= '9') j++;
  size_t nd = j - d0;
  bool integral = !(j < len && (s[j] == '.' || s[j] == 'e' || s[j] == 'E'));
  while (j < len && (s[j] == '.' || s[j] == 'e' || s[j] == 'E' ||
                     s[j] == '+' || s[j] == '-' ||
                     (s[j] >= '0' && s[j] <= '9')))
    j++;
  *end = j;
  if (!integral || nd < 16) return false;
  if (nd > 16) return true;
  return memcmp(s + d0, "9007199254740992", 16) > 0;
}

/* Offsets of the big integer tokens; *n of them in a malloc'd array
 * (NULL when there are none).  Returns false on OOM. */
static bool find_big(const char *s, size_t len, size_t **at, size_t *n) {
  size_t cap = 0;
  *at = NULL;
  *n = 0;
  for (size_t i = 0; i < len;) {
    char c = s[i];
    if (c == '"') {
      i = skip_string(s, len, i);
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      size_t end;
      if (big_integer(s, len, i, &end)) {
        if (*n == cap) {
          cap = cap ? cap * 2 : 16;
          size_t *p = realloc(*at, cap * 2 * sizeof *p);
          if (!p) return false;
          *at = p;
        }
        (*at)[2 * *n] = i;
        (*at)[2 * *n + 1] = end;
        (*n)++;
      }
      i = end;
    } else {
      i++;
    }
  }
  return true;
}

cJSON *shlo_proto_json_parse(const char *text, size_t len, size_t *stop) {
  size_t *at, n;
  const char *end = NULL;
  cJSON *root = NULL;
  if (!find_big(text, len, &at, &n)) {
    free(at);
    if (stop) *stop = 0;
    return NULL;
  }
  if (n == 0) {
    root = cJSON_ParseWithLengthOpts(text, len, &end, false);
    if (stop)
      *stop = end && end >= text ? (size_t)(end - text) : 0;
    return root;
  }
  char *q = malloc(len + 2 * n + 1), *o = q;
  if (q) {
    size_t prev = 0;
    for (size_t k = 0; k < n; k++) {
      memcpy(o, text + prev, at[2 * k] - prev);
      o += at[2 * k] - prev;
      *o++ = '"';
      memcpy(o, text + at[2 * k], at[2 * k + 1] - at[2 * k]);
      o += at[2 * k + 1] - at[2 * k];
      *o++ = '"';
      prev = at[2 * k + 1];
    }
    memcpy(o, text + prev, len - prev);
    o += len - prev;
    *o = 0;
    root = cJSON_ParseWithLengthOpts(q, (size_t)(o - q), &end, false);
    if (stop) {
      /* Map the stop position back to the caller's text: two quotes were
       * added per token that starts before it. */
      size_t off = end && end >= q ? (size_t)(end - q) : 0, shift = 0;
      for (size_t k = 0; k < n && at[2 * k] + shift < off; k++) shift += 2;
      *stop = off >= shift ? off - shift : 0;
    }
  }
  free(q);
  free(at);
  return root;
}
