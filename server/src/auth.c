/* Bearer tokens: a file of `name token` lines (# comments).  Comparison
 * takes the same time whatever the bytes, and the token itself is never
 * logged, only its name. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server.h"

int srv_auth_load(srv_server *s, const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) {
    fprintf(stderr, "shlo-server: cannot open tokens file %s\n", path);
    return -1;
  }
  char line[1024];
  int n = 0, rc = 0;
  while (fgets(line, sizeof line, f)) {
    n++;
    char *save, *a = strtok_r(line, " \t\r\n", &save);
    if (!a || a[0] == '#') continue;
    char *b = strtok_r(NULL, " \t\r\n", &save);
    if (!b || strtok_r(NULL, " \t\r\n", &save)) {
      fprintf(stderr, "shlo-server: %s:%d: expected `name token`\n", path, n);
      rc = -1;
      break;
    }
    srv_token *t = realloc(s->tokens, (size_t)(s->n_tokens + 1) * sizeof *t);
    if (!t) {
      rc = -1;
      break;
    }
    s->tokens = t;
    t[s->n_tokens].name = strdup(a);
    t[s->n_tokens].token = strdup(b);
    s->n_tokens++;
  }
  fclose(f);
  if (!rc && s->n_tokens == 0) {
    fprintf(stderr, "shlo-server: %s holds no token\n", path);
    rc = -1;
  }
  return rc;
}

static bool same(const char *a, size_t an, const char *b) {
  size_t bn = strlen(b);
  unsigned char diff = an != bn;
  for (size_t i = 0; i < an; i++) diff |= (unsigned char)(a[i] ^ b[i % (bn ? bn : 1)]);
  return !diff;
}

const char *srv_auth_check(const srv_server *s, const char *authorization) {
  if (!authorization || strncasecmp(authorization, "Bearer ", 7)) return NULL;
  const char *tok = authorization + 7;
  while (*tok == ' ') tok++;
  size_t n = strlen(tok);
  while (n && (tok[n - 1] == ' ' || tok[n - 1] == '\t')) n--;
  const char *name = NULL;
  for (int i = 0; i < s->n_tokens; i++)
    if (same(tok, n, s->tokens[i].token)) name = s->tokens[i].name;
  return name;
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
