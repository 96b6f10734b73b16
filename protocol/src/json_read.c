/* SPDX-License-Identifier: Apache-2.0 */
/* The JSON reader behind shlo_proto_json_parse: cJSON's tree, built by
 * our own parser for two reasons.
 *
 * Exact integers.  cJSON reads every number as a double, which holds
 * integers exactly only up to 2^53.  Integer tokens (no fraction, no
 * exponent) beyond that become decimal strings, which the tensor decoder
 * reads exactly (PROTOCOL.md lets integer data be strings).
 *
 * Memory.  A tree node per number costs ~64 bytes for a number written in
 * ~8, so a 60 MB body of data took gigabytes.  The value of a "data"
 * member that is an array, and of a "b64" member that is a string without
 * escapes, is not built: it becomes a span node (json_read.h) pointing
 * into the text, checked here to be well-formed JSON, and the tensor
 * decoder reads it straight into the tensor's buffer. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "json_read.h"

#define NESTING_LIMIT 1000 /* as cJSON's */

typedef struct reader {
  const char *p, *end;
  int depth;
} reader;

static void skip_ws(reader *R) {
  while (R->p < R->end && (*R->p == ' ' || *R->p == '\n' || *R->p == '\r' ||
                           *R->p == '\t'))
    R->p++;
}

static bool lit(reader *R, const char *word) {
  size_t n = strlen(word);
  if ((size_t)(R->end - R->p) < n || memcmp(R->p, word, n)) return false;
  R->p += n;
  return true;
}

static int hex4(const char *s) {
  int v = 0;
  for (int i = 0; i < 4; i++) {
    char c = s[i];
    v <<= 4;
    if (c >= '0' && c <= '9') v |= c - '0';
    else if (c >= 'a' && c <= 'f') v |= c - 'a' + 10;
    else if (c >= 'A' && c <= 'F') v |= c - 'A' + 10;
    else return -1;
  }
  return v;
}

/* Past the string at R->p == '"', checking it; *escaped when it has a
 * backslash.  False (R->p at the fault) when malformed.  The runs between
 * escapes are found with memchr, a vector at a time (a tensor's base64
 * is one 89 MB string); the next quote is looked for again only when an
 * escape took the one found, so the scan stays linear. */
static bool skip_string(reader *R, bool *escaped) {
  const char *p = R->p + 1, *end = R->end;
  const char *q = memchr(p, '"', (size_t)(end - p));
  *escaped = false;
  for (;;) {
    const char *stop = q ? q : end;
    const char *bs = memchr(p, '\\', (size_t)(stop - p));
    if (!bs) {
      R->p = q ? q + 1 : end;
      return q != NULL;
    }
    *escaped = true;
    p = bs + 1;
    if (p >= end) break;
    if (*p == 'u') {
      if (end - p < 5 || hex4(p + 1) < 0) break;
      p += 4;
    } else if (!*p || !strchr("\"\\/bfnrt", *p)) { /* not NUL */
      break;
    }
    p++;
    if (q && p > q) q = memchr(p, '"', (size_t)(end - p)); /* it was \" */
  }
  R->p = p;
  return false;
}

static void put_utf8(char **o, unsigned cp) {
  unsigned char *q = (unsigned char *)*o;
  if (cp < 0x80) {
    *q++ = (unsigned char)cp;
  } else if (cp < 0x800) {
    *q++ = (unsigned char)(0xC0 | cp >> 6);
    *q++ = (unsigned char)(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    *q++ = (unsigned char)(0xE0 | cp >> 12);
    *q++ = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
    *q++ = (unsigned char)(0x80 | (cp & 0x3F));
  } else {
    *q++ = (unsigned char)(0xF0 | cp >> 18);
    *q++ = (unsigned char)(0x80 | (cp >> 12 & 0x3F));
    *q++ = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
    *q++ = (unsigned char)(0x80 | (cp & 0x3F));
  }
  *o = (char *)q;
}

/* The unescaped text of the checked string s[0..n) (quotes excluded), as
 * a malloc'd NUL-terminated string; surrogate pairs are joined, a lone
 * surrogate becomes U+FFFD. */
static char *unescape(const char *s, size_t n) {
  char *out = malloc(n + 1), *o = out;
  if (!out) return NULL;
  for (size_t i = 0; i < n; i++) {
    if (s[i] != '\\') {
      *o++ = s[i];
      continue;
    }
    char e = s[++i];
    if (e != 'u') {
      static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
      *o++ = to[strchr(from, e) - from];
      continue;
    }
    unsigned cp = (unsigned)hex4(s + i + 1);
    i += 4;
    if (cp >= 0xD800 && cp < 0xDC00 && i + 6 < n && s[i + 1] == '\\' &&
        s[i + 2] == 'u') {
      int lo = hex4(s + i + 3);
      if (lo >= 0xDC00 && lo < 0xE000) {
        cp = 0x10000 + ((cp - 0xD800) << 10) + ((unsigned)lo - 0xDC00);
        i += 6;
      }
    }
    if (cp >= 0xD800 && cp < 0xE000) cp = 0xFFFD;
    put_utf8(&o, cp);
  }
  *o = 0;
  return out;
}

/* Past the number at R->p, checking JSON's grammar; *integral when it has
 * no fraction or exponent, *digits its count of integer digits. */
static bool skip_number(reader *R, bool *integral, size_t *digits) {
  const char *p = R->p, *e = R->end;
  if (p < e && *p == '-') p++;
  const char *d0 = p;
  if (p < e && *p == '0') p++;
  else if (p < e && *p >= '1' && *p <= '9')
    while (p < e && *p >= '0' && *p <= '9') p++;
  else return R->p = p, false;
  *digits = (size_t)(p - d0);
  *integral = true;
  if (p < e && *p == '.') {
    *integral = false;
    if (++p >= e || *p < '0' || *p > '9') return R->p = p, false;
    while (p < e && *p >= '0' && *p <= '9') p++;
  }
  if (p < e && (*p == 'e' || *p == 'E')) {
    *integral = false;
    if (++p < e && (*p == '+' || *p == '-')) p++;
    if (p >= e || *p < '0' || *p > '9') return R->p = p, false;
    while (p < e && *p >= '0' && *p <= '9') p++;
  }
  R->p = p;
  return true;
}

bool shlo__json_big_integer(const char *s, size_t n, bool integral,
                            size_t digits) {
  (void)n; /* digits and the sign say it all */
  if (!integral || digits < 16) return false;
  if (digits > 16) return true;
  return memcmp(s + (*s == '-'), "9007199254740992", 16) > 0;
}

/* Check the value at R->p and step past it, building nothing. */
static bool skip_value(reader *R) {
  skip_ws(R);
  if (R->p >= R->end) return false;
  bool escaped, integral;
  size_t digits;
  switch (*R->p) {
  case '"': return skip_string(R, &escaped);
  case 't': return lit(R, "true");
  case 'f': return lit(R, "false");
  case 'n': return lit(R, "null");
  case '[':
  case '{': {
    char close = *R->p == '[' ? ']' : '}';
    bool object = close == '}';
    if (++R->depth > NESTING_LIMIT) return false;
    R->p++;
    skip_ws(R);
    if (R->p < R->end && *R->p == close) {
      R->p++;
      R->depth--;
      return true;
    }
    for (;;) {
      if (object) {
        skip_ws(R);
        if (R->p >= R->end || *R->p != '"' || !skip_string(R, &escaped))
          return false;
        skip_ws(R);
        if (R->p >= R->end || *R->p != ':') return false;
        R->p++;
      }
      if (!skip_value(R)) return false;
      skip_ws(R);
      if (R->p >= R->end) return false;
      if (*R->p == close) break;
      if (*R->p != ',') return false;
      R->p++;
    }
    R->p++;
    R->depth--;
    return true;
  }
  default: return skip_number(R, &integral, &digits);
  }
}

static cJSON *read_value(reader *R, const char *key);

/* Link item (whose key, when any, is already set) as the last child of
 * parent, keeping cJSON's convention that child->prev is the last one. */
static void append(cJSON *parent, cJSON *item) {
  cJSON *first = parent->child;
  if (!first) {
    parent->child = item;
    item->prev = item;
    return;
  }
  cJSON *last = first->prev;
  last->next = item;
  item->prev = last;
  first->prev = item;
}

static cJSON *read_container(reader *R, bool object) {
  char close = object ? '}' : ']';
  cJSON *c = object ? cJSON_CreateObject() : cJSON_CreateArray();
  if (!c || ++R->depth > NESTING_LIMIT) goto fail;
  R->p++;
  skip_ws(R);
  if (R->p < R->end && *R->p == close) goto done;
  for (;;) {
    char *key = NULL;
    if (object) {
      skip_ws(R);
      const char *k0 = R->p;
      bool escaped;
      if (R->p >= R->end || *R->p != '"' || !skip_string(R, &escaped))
        goto fail;
      key = unescape(k0 + 1, (size_t)(R->p - k0 - 2));
      skip_ws(R);
      if (!key || R->p >= R->end || *R->p != ':') {
        free(key);
        goto fail;
      }
      R->p++;
    }
    cJSON *item = read_value(R, key);
    if (!item) {
      free(key);
      goto fail;
    }
    item->string = key;
    append(c, item);
    skip_ws(R);
    if (R->p >= R->end) goto fail;
    if (*R->p == close) break;
    if (*R->p != ',') goto fail;
    R->p++;
  }
done:
  R->p++;
  R->depth--;
  return c;
fail:
  cJSON_Delete(c);
  return NULL;
}

/* A span node for text[a, b), which the tree borrows. */
static cJSON *span_node(const char *a, const char *b) {
  cJSON *j = cJSON_CreateNull();
  if (!j) return NULL;
  j->type = cJSON_Raw | cJSON_IsReference;
  j->valuestring = (char *)a;
  j->valuedouble = (double)(b - a);
  return j;
}

static cJSON *read_string(reader *R, const char *key) {
  const char *s0 = R->p;
  bool escaped;
  if (!skip_string(R, &escaped)) return NULL;
  if (key && !escaped && !strcmp(key, "b64"))
    return span_node(s0 + 1, R->p - 1);
  char *v = unescape(s0 + 1, (size_t)(R->p - s0 - 2));
  cJSON *j = v ? cJSON_CreateNull() : NULL;
  if (!j) {
    free(v);
    return NULL;
  }
  j->type = cJSON_String;
  j->valuestring = v;
  return j;
}

static cJSON *read_number(reader *R) {
  const char *n0 = R->p;
  bool integral;
  size_t digits;
  if (!skip_number(R, &integral, &digits)) return NULL;
  size_t n = (size_t)(R->p - n0);
  char *text = malloc(n + 1);
  if (!text) return NULL;
  memcpy(text, n0, n);
  text[n] = 0;
  cJSON *j = NULL;
  if (shlo__json_big_integer(n0, n, integral, digits)) {
    j = cJSON_CreateNull();
    if (j) {
      j->type = cJSON_String;
      j->valuestring = text;
      return j;
    }
  } else {
    j = cJSON_CreateNumber(strtod(text, NULL));
  }
  free(text);
  return j;
}

static cJSON *read_value(reader *R, const char *key) {
  skip_ws(R);
  if (R->p >= R->end) return NULL;
  switch (*R->p) {
  case '{': return read_container(R, true);
  case '[':
    if (key && !strcmp(key, "data")) {
      const char *a = R->p;
      return skip_value(R) ? span_node(a, R->p) : NULL;
    }
    return read_container(R, false);
  case '"': return read_string(R, key);
  case 't': return lit(R, "true") ? cJSON_CreateTrue() : NULL;
  case 'f': return lit(R, "false") ? cJSON_CreateFalse() : NULL;
  case 'n': return lit(R, "null") ? cJSON_CreateNull() : NULL;
  default: return read_number(R);
  }
}

cJSON *shlo_proto_json_parse(const char *text, size_t len, size_t *stop) {
  reader R = {text, text + len, 0};
  cJSON *root = read_value(&R, NULL);
  if (stop) *stop = (size_t)(R.p - text);
  return root;
}

const char *shlo__json_skip_value(const char *p, const char *end) {
  reader R = {p, end, 0};
  return skip_value(&R) ? R.p : NULL;
}

bool shlo__json_is_span(const cJSON *j) {
  return j && (j->type & 0xFF) == cJSON_Raw && (j->type & cJSON_IsReference);
}

const char *shlo__json_span(const cJSON *j, size_t *len) {
  *len = (size_t)j->valuedouble;
  return j->valuestring;
}
