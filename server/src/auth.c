/* SPDX-License-Identifier: Apache-2.0 */
/* Bearer tokens: the tokens file (teams.h describes its lines), read at
 * start and on SIGHUP.  Comparison takes the same time whatever the bytes,
 * and the token itself is never logged, only its name. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "server.h"

static int fail(char *err, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t cap, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, cap, fmt, ap);
  va_end(ap);
  return -1;
}

static bool name_ok(const char *p, size_t n) {
  if (n == 0 || n >= SRV_TEAM_NAME_LEN) return false;
  for (size_t i = 0; i < n; i++) {
    char c = p[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
          (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-'))
      return false;
  }
  return true;
}

/* The next field of *p (split on spaces and tabs): its start and length;
 * 0 at the end. */
static size_t next_field(const char **p, const char **start) {
  while (**p == ' ' || **p == '\t') (*p)++;
  *start = *p;
  while (**p && **p != ' ' && **p != '\t') (*p)++;
  return (size_t)(*p - *start);
}

/* A quota's value: a count, or bytes with k/m/g. */
static bool quota_value(const char *v, size_t n, int64_t *out) {
  char buf[32];
  if (n == 0 || n >= sizeof buf || v[0] == '-' || v[0] == '+') return false;
  memcpy(buf, v, n);
  buf[n] = 0;
  errno = 0;
  char *end;
  long long x = strtoll(buf, &end, 10);
  if (end == buf || errno) return false;
  long long mul = 1;
  switch (*end) {
  case 'k': case 'K': mul = 1LL << 10; end++; break;
  case 'm': case 'M': mul = 1LL << 20; end++; break;
  case 'g': case 'G': mul = 1LL << 30; end++; break;
  }
  if (*end || x > INT64_MAX / mul) return false;
  *out = x * mul;
  return true;
}

static int parse_quota_line(const char *p, srv_token_line *out, char *err,
                            size_t cap) {
  const char *f;
  size_t n = next_field(&p, &f);
  if (!name_ok(f + 1, n - 1))
    return fail(err, cap, "`@TEAM`: a team name is 1..63 of [A-Za-z0-9._-]");
  memcpy(out->team, f + 1, n - 1);
  out->team[n - 1] = 0;
  out->kind = SRV_LINE_QUOTA;
  while ((n = next_field(&p, &f))) {
    const char *eq = memchr(f, '=', n);
    int q = eq ? srv_quota_find(f, (size_t)(eq - f)) : -1;
    if (q < 0)
      return fail(err, cap, "unknown quota '%.*s' (running, queued, rate, "
                  "burst, cache-bytes, exec-memory)", (int)(n > 40 ? 40 : n), f);
    if (!quota_value(eq + 1, n - (size_t)(eq + 1 - f), &out->quota.v[q]))
      return fail(err, cap, "quota %s: expected a count (k/m/g for bytes)",
                  srv_quota_name(q));
  }
  return 0;
}

/* team=TEAM or scopes=LIST after a token. */
static int parse_attr(const char *f, size_t n, srv_token_line *out,
                      char *err, size_t cap) {
  if (n > 5 && !memcmp(f, "team=", 5)) {
    if (!name_ok(f + 5, n - 5))
      return fail(err, cap, "team=: a team name is 1..63 of [A-Za-z0-9._-]");
    memcpy(out->team, f + 5, n - 5);
    out->team[n - 5] = 0;
    return 0;
  }
  if (n > 7 && !memcmp(f, "scopes=", 7) && n - 7 < 64) {
    char list[64];
    memcpy(list, f + 7, n - 7);
    list[n - 7] = 0;
    if ((out->scopes = srv_scopes_parse(list))) return 0;
    return fail(err, cap, "scopes=: a comma-separated list of execute, "
                "register, admin");
  }
  return fail(err, cap, "expected team=TEAM or scopes=LIST after the token, "
              "got '%.*s'", (int)(n > 40 ? 40 : n), f);
}

int srv_token_line_parse(const char *line, srv_token_line *out, char *err,
                         size_t cap) {
  memset(out, 0, sizeof *out);
  size_t len = strcspn(line, "\r\n");
  const char *rest = line + len; /* "", "\n" or "\r\n" */
  if (*rest && strcmp(rest, "\n") && strcmp(rest, "\r\n"))
    return fail(err, cap, "a line break inside the line");
  for (size_t i = 0; i < len; i++)
    if ((unsigned char)line[i] < 0x20 && line[i] != '\t')
      return fail(err, cap, "a control byte (0x%02x) in the line",
                  (unsigned)(unsigned char)line[i]);
  char buf[1200];
  if (len >= sizeof buf) return fail(err, cap, "line longer than 1199 bytes");
  memcpy(buf, line, len);
  buf[len] = 0;
  const char *p = buf, *f;
  size_t n = next_field(&p, &f);
  if (n == 0 || f[0] == '#') return 0;
  if (f[0] == '@') return parse_quota_line(f, out, err, cap);
  if (!name_ok(f, n))
    return fail(err, cap, "a token's name is 1..63 of [A-Za-z0-9._-]");
  memcpy(out->name, f, n);
  out->name[n] = 0;
  n = next_field(&p, &f);
  if (n == 0) return fail(err, cap, "expected `name token`");
  if (n >= sizeof out->token)
    return fail(err, cap, "token longer than 512 bytes");
  for (size_t i = 0; i < n; i++)
    if ((unsigned char)f[i] >= 0x7f)
      return fail(err, cap, "a token is printable ASCII");
  memcpy(out->token, f, n);
  out->token[n] = 0;
  memcpy(out->team, out->name, sizeof out->team);
  out->scopes = SRV_SCOPE_DEFAULT;
  while ((n = next_field(&p, &f)))
    if (parse_attr(f, n, out, err, cap)) return -1;
  out->kind = SRV_LINE_TOKEN;
  return 0;
}

/* The parsed lines of a file; -1 after a one-line message naming the
 * file (and the line).  *out and *n_out are set on every return, so the
 * caller frees *out whatever happened. */
static int read_lines(const char *path, srv_token_line **out, int *n_out) {
  *out = NULL;
  *n_out = 0;
  FILE *f = fopen(path, "r");
  if (!f) {
    fprintf(stderr, "shlo-server: tokens file %s: %s\n", path,
            strerror(errno));
    return -1;
  }
  char line[1200], err[160];
  int n = 0, rc = 0, used = 0;
  srv_token_line *lines = NULL;
  while (fgets(line, sizeof line, f)) {
    n++;
    srv_token_line l;
    bool whole = strchr(line, '\n') || feof(f);
    if (!whole || srv_token_line_parse(line, &l, err, sizeof err)) {
      fprintf(stderr, "shlo-server: tokens file %s:%d: %s\n", path, n,
              whole ? err : "line longer than 1199 bytes");
      rc = -1;
      break;
    }
    if (l.kind == SRV_LINE_BLANK) continue;
    srv_token_line *g = realloc(lines, (size_t)(used + 1) * sizeof *g);
    if (!g) {
      fprintf(stderr, "shlo-server: tokens file %s: out of memory\n", path);
      rc = -1;
      break;
    }
    lines = g;
    lines[used++] = l;
  }
  /* a directory opens, then fails to read (EISDIR): not an empty file */
  if (!rc && ferror(f)) {
    fprintf(stderr, "shlo-server: tokens file %s: cannot read: %s\n", path,
            strerror(errno));
    rc = -1;
  }
  fclose(f);
  *out = lines;
  *n_out = used;
  return rc;
}

/* Two lines with one token would make its team a matter of order. */
static bool duplicate_token(const srv_token_line *l, int n, const char *path) {
  for (int i = 0; i < n; i++)
    for (int j = i + 1; l[i].kind == SRV_LINE_TOKEN && j < n; j++)
      if (l[j].kind == SRV_LINE_TOKEN && !strcmp(l[i].token, l[j].token)) {
        fprintf(stderr, "shlo-server: tokens file %s: tokens %s and %s are "
                        "the same token\n", path, l[i].name, l[j].name);
        return true;
      }
  return false;
}

/* Put parsed lines in force: quotas first (every team's own quotas are
 * those of this file), then the tokens. */
static int commit(srv_server *s, const srv_token_line *l, int n) {
  for (srv_team *t = s->teams.list; t; t = t->next)
    memset(&t->own, 0, sizeof t->own);
  for (int i = 0; i < n; i++) {
    srv_team *t = srv_team_get(&s->teams, l[i].team);
    if (!t) return -1;
    if (l[i].kind == SRV_LINE_QUOTA)
      for (int q = 0; q < SRV_N_QUOTAS; q++)
        if (l[i].quota.v[q]) t->own.v[q] = l[i].quota.v[q];
  }
  for (int i = 0; i < n; i++) {
    if (l[i].kind != SRV_LINE_TOKEN) continue;
    srv_token *t = realloc(s->tokens, (size_t)(s->n_tokens + 1) * sizeof *t);
    if (!t) return -1;
    s->tokens = t;
    t += s->n_tokens;
    t->name = strdup(l[i].name);
    t->token = strdup(l[i].token);
    t->team = srv_team_get(&s->teams, l[i].team);
    t->scopes = l[i].scopes;
    s->n_tokens++;
    if (!t->name || !t->token) return -1;
  }
  return 0;
}

/* Whether any line gives a token (a file of quotas and comments alone
 * would lock everyone out). */
static bool has_token(const srv_token_line *l, int n) {
  for (int i = 0; i < n; i++)
    if (l[i].kind == SRV_LINE_TOKEN) return true;
  return false;
}

int srv_auth_load(srv_server *s, const char *path) {
  srv_token_line *lines;
  int n;
  int rc = read_lines(path, &lines, &n);
  if (!rc && !has_token(lines, n)) {
    /* checked before commit: a reload that fails changes no quota */
    fprintf(stderr, "shlo-server: tokens file %s holds no token%s\n", path,
            n ? "" : " (it is empty)");
    rc = -1;
  }
  if (!rc && duplicate_token(lines, n, path)) rc = -1;
  if (!rc && commit(s, lines, n)) {
    fprintf(stderr, "shlo-server: tokens file %s: out of memory\n", path);
    rc = -1;
  }
  free(lines);
  return rc;
}

static bool same(const char *a, size_t an, const char *b) {
  size_t bn = strlen(b);
  unsigned char diff = an != bn;
  for (size_t i = 0; i < an; i++) diff |= (unsigned char)(a[i] ^ b[i % (bn ? bn : 1)]);
  return !diff;
}

const srv_token *srv_auth_find(const srv_server *s, const char *authorization) {
  if (!authorization || strncasecmp(authorization, "Bearer ", 7)) return NULL;
  const char *tok = authorization + 7;
  while (*tok == ' ') tok++;
  size_t n = strlen(tok);
  while (n && (tok[n - 1] == ' ' || tok[n - 1] == '\t')) n--;
  const srv_token *found = NULL;
  for (int i = 0; i < s->n_tokens; i++)
    if (same(tok, n, s->tokens[i].token)) found = &s->tokens[i];
  return found;
}

const char *srv_auth_check(const srv_server *s, const char *authorization) {
  const srv_token *t = srv_auth_find(s, authorization);
  return t ? t->name : NULL;
}

void srv_auth_free(srv_server *s) {
  for (int i = 0; i < s->n_tokens; i++) {
    free(s->tokens[i].name);
    free(s->tokens[i].token);
  }
  free(s->tokens);
  s->tokens = NULL;
  s->n_tokens = 0;
}
