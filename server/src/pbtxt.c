/* SPDX-License-Identifier: Apache-2.0 */
/* config.pbtxt's subset of protobuf's text format as JSON (see pbtxt.h):
 * a recursive descent over the bytes, every field first collected as a
 * list of its values, then lists of one value unwrapped unless the field
 * repeats in Triton's schema. */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "pbtxt.h"

#define PBTXT_MAX_DEPTH 32
#define PBTXT_MAX_TOKEN 4096 /* bytes of one string or identifier */

typedef struct reader {
  const char *p, *end;
  int line;
  char *why;
  size_t cap;
  bool failed;
} reader;

static void fail(reader *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void fail(reader *r, const char *fmt, ...) {
  if (r->failed) return; /* the first error is the one to report */
  char msg[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  snprintf(r->why, r->cap, "config.pbtxt:%d: %s", r->line, msg);
  r->failed = true;
}

/* Past blanks, newlines and # comments. */
static void skip_space(reader *r) {
  while (r->p < r->end) {
    char c = *r->p;
    if (c == '\n') r->line++;
    if (c == '#') {
      while (r->p < r->end && *r->p != '\n') r->p++;
    } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r' ||
               c == '\f' || c == '\v') {
      r->p++;
    } else {
      return;
    }
  }
}

static bool is_ident_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_ident(char c) {
  return is_ident_start(c) || (c >= '0' && c <= '9');
}

/* An identifier into out (cap bytes); false (error set) when none. */
static bool identifier(reader *r, char *out, size_t cap) {
  size_t n = 0;
  if (r->p >= r->end || !is_ident_start(*r->p)) {
    fail(r, "expected a field name");
    return false;
  }
  while (r->p < r->end && is_ident(*r->p)) {
    if (n + 1 >= cap) {
      fail(r, "a name over %zu bytes", cap - 1);
      return false;
    }
    out[n++] = *r->p++;
  }
  out[n] = 0;
  return true;
}

/* A quoted string (the quote at r->p) as a JSON string. */
static cJSON *quoted(reader *r) {
  char q = *r->p++, *buf = malloc(PBTXT_MAX_TOKEN);
  size_t n = 0;
  if (!buf) {
    fail(r, "out of memory");
    return NULL;
  }
  for (;;) {
    if (r->p >= r->end || *r->p == '\n') {
      fail(r, "a string without its closing quote");
      break;
    }
    char c = *r->p++;
    if (c == q) {
      buf[n] = 0;
      cJSON *s = cJSON_CreateString(buf);
      free(buf);
      if (!s) fail(r, "out of memory");
      return s;
    }
    if (c == '\\') {
      if (r->p >= r->end) continue; /* reported as unclosed above */
      c = *r->p++;
      if (c == 'n') c = '\n';
      else if (c == 't') c = '\t';
      else if (c >= '0' && c <= '9') {
        fail(r, "octal escapes are not read");
        break;
      } else if (c == 'x' || c == 'u' || c == 'U') {
        fail(r, "hex and unicode escapes are not read");
        break;
      }
    }
    if (n + 1 >= PBTXT_MAX_TOKEN) {
      fail(r, "a string over %d bytes", PBTXT_MAX_TOKEN - 1);
      break;
    }
    buf[n++] = c;
  }
  free(buf);
  return NULL;
}

/* A number, an identifier or a string. */
static cJSON *scalar(reader *r) {
  if (r->p >= r->end) {
    fail(r, "a value is missing at the end");
    return NULL;
  }
  char c = *r->p, tok[128];
  if (c == '"' || c == '\'') return quoted(r);
  size_t n = 0;
  while (r->p < r->end && n + 1 < sizeof tok &&
         (is_ident(*r->p) || *r->p == '-' || *r->p == '+' || *r->p == '.'))
    tok[n++] = *r->p++;
  tok[n] = 0;
  if (!n) {
    fail(r, "unexpected '%c'", c);
    return NULL;
  }
  cJSON *v;
  char *stop;
  double d = strtod(tok, &stop);
  if (!strcmp(tok, "true") || !strcmp(tok, "false"))
    v = cJSON_CreateBool(tok[0] == 't');
  else if (is_ident_start(tok[0]))
    v = cJSON_CreateString(tok); /* an enum value */
  else if (*stop == 0 && stop != tok)
    v = cJSON_CreateNumber(d);
  else {
    fail(r, "not a number: %.40s", tok);
    return NULL;
  }
  if (!v) fail(r, "out of memory");
  return v;
}

static cJSON *message(reader *r, char close, int depth);

/* A message (its opening bracket at r->p) or a scalar. */
static cJSON *value(reader *r, int depth) {
  if (r->p < r->end && (*r->p == '{' || *r->p == '<')) {
    char close = *r->p++ == '{' ? '}' : '>';
    return message(r, close, depth + 1);
  }
  return scalar(r);
}

/* The values of `[a, b, ...]` appended to list. */
static bool list_values(reader *r, cJSON *list, int depth) {
  r->p++; /* '[' */
  skip_space(r);
  if (r->p < r->end && *r->p == ']') {
    r->p++;
    return true;
  }
  for (;;) {
    skip_space(r);
    cJSON *v = value(r, depth);
    if (!v) return false;
    cJSON_AddItemToArray(list, v);
    skip_space(r);
    if (r->p < r->end && *r->p == ',') {
      r->p++;
      continue;
    }
    if (r->p < r->end && *r->p == ']') {
      r->p++;
      return true;
    }
    fail(r, "expected ',' or ']' in a list");
    return false;
  }
}

/* Fields that Triton's model configuration repeats: lists even when one
 * value is given. */
static bool repeats(const char *key) {
  static const char *const names[] = {
      "input", "output", "dims", "model_warmup", "preferred_batch_size",
      "versions", "instance_group", "gpus", "reshape"};
  for (size_t i = 0; i < sizeof names / sizeof *names; i++)
    if (!strcmp(key, names[i])) return true;
  return false;
}

/* A map's entries [{key: K, value: V}...] as the object {K: V...}; NULL
 * when the list is no map. */
static cJSON *as_map(const cJSON *list) {
  cJSON *o = cJSON_CreateObject();
  for (const cJSON *e = list->child; o && e; e = e->next) {
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(e, "key");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, "value");
    cJSON *copy = v ? cJSON_Duplicate(v, true) : NULL;
    if (!cJSON_IsObject(e) || cJSON_GetArraySize(e) != 2 ||
        !cJSON_IsString(k) || !copy ||
        cJSON_GetObjectItemCaseSensitive(o, k->valuestring)) {
      cJSON_Delete(copy);
      cJSON_Delete(o);
      return NULL;
    }
    cJSON_AddItemToObject(o, k->valuestring, copy);
  }
  return o;
}

/* Each field's list of values in obj, in its JSON form (see the top),
 * into a new object; obj is consumed.  NULL with the error set. */
static cJSON *settle(reader *r, cJSON *obj) {
  cJSON *out = cJSON_CreateObject();
  for (cJSON *f = obj->child, *next; out && f; f = next) {
    char key[128];
    snprintf(key, sizeof key, "%s", f->string);
    next = f->next;
    cJSON *v;
    if (!strcmp(key, "inputs") || !strcmp(key, "parameters")) {
      if (!(v = as_map(f))) {
        fail(r, "\"%.64s\" is a map of {key: ... value: {...}} entries",
             key);
        break;
      }
    } else if (repeats(key) || cJSON_GetArraySize(f) != 1) {
      v = cJSON_DetachItemViaPointer(obj, f);
    } else {
      v = cJSON_DetachItemFromArray(f, 0);
    }
    if (!cJSON_AddItemToObject(out, key, v)) {
      cJSON_Delete(v);
      fail(r, "out of memory");
      break;
    }
  }
  if (!out) fail(r, "out of memory");
  cJSON_Delete(obj);
  if (!r->failed) return out;
  cJSON_Delete(out);
  return NULL;
}

/* One field `key: value`, `key {...}` or `key: [...]` into obj. */
static bool field(reader *r, cJSON *obj, int depth) {
  char key[128];
  if (!identifier(r, key, sizeof key)) return false;
  skip_space(r);
  bool colon = r->p < r->end && *r->p == ':';
  if (colon) {
    r->p++;
    skip_space(r);
  }
  cJSON *list = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!list && !(list = cJSON_AddArrayToObject(obj, key))) {
    fail(r, "out of memory");
    return false;
  }
  if (r->p < r->end && *r->p == '[') return list_values(r, list, depth);
  if (!colon && (r->p >= r->end || (*r->p != '{' && *r->p != '<'))) {
    fail(r, "expected ':' or '{' after %s", key);
    return false;
  }
  cJSON *v = value(r, depth);
  if (!v) return false;
  cJSON_AddItemToArray(list, v);
  return true;
}

/* Fields up to close (0: the end of the text). */
static cJSON *message(reader *r, char close, int depth) {
  if (depth > PBTXT_MAX_DEPTH) {
    fail(r, "nested deeper than %d", PBTXT_MAX_DEPTH);
    return NULL;
  }
  cJSON *obj = cJSON_CreateObject();
  if (!obj) fail(r, "out of memory");
  while (obj && !r->failed) {
    skip_space(r);
    if (r->p >= r->end) {
      if (close) fail(r, "a message without its closing '%c'", close);
      break;
    }
    if (close && *r->p == close) {
      r->p++;
      break;
    }
    if (!field(r, obj, depth)) break;
    skip_space(r);
    if (r->p < r->end && (*r->p == ',' || *r->p == ';')) r->p++;
  }
  if (r->failed) {
    cJSON_Delete(obj);
    return NULL;
  }
  return settle(r, obj);
}

cJSON *srv_pbtxt_parse(const char *text, size_t len, char *why, size_t cap) {
  reader r = {.p = text, .end = text + len, .line = 1, .why = why,
              .cap = cap};
  if (memchr(text, 0, len)) {
    snprintf(why, cap, "config.pbtxt: a NUL byte: not text");
    return NULL;
  }
  return message(&r, 0, 0);
}
