/* SPDX-License-Identifier: Apache-2.0 */
/* The tokens-file line parser (server/src/auth.c, teams.h): old `name
 * token` lines, team= and scopes=, @TEAM quota lines, and hostile lines,
 * each refused with a reason and nothing half-filled in force.  And the
 * whole file (srv_auth_load, issue #30): missing, a directory, empty,
 * without a token -- each refused, with the tokens and quotas in force
 * untouched (a missing file once freed an unset pointer). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "server.h"
#include "teams.h"

static int parse(const char *line, srv_token_line *l, char *err) {
  return srv_token_line_parse(line, l, err, 160);
}

static void old_lines_stay_valid(void **state) {
  (void)state;
  srv_token_line l;
  char err[160];
  assert_int_equal(parse("alice s3cret\n", &l, err), 0);
  assert_int_equal(l.kind, SRV_LINE_TOKEN);
  assert_string_equal(l.name, "alice");
  assert_string_equal(l.token, "s3cret");
  assert_string_equal(l.team, "alice");
  assert_int_equal(l.scopes, SRV_SCOPE_EXECUTE | SRV_SCOPE_REGISTER);
  /* tabs, CRLF, a base64 token ending in '=' */
  assert_int_equal(parse("\tbob\tYWJjZA==\r\n", &l, err), 0);
  assert_string_equal(l.token, "YWJjZA==");
  assert_string_equal(l.team, "bob");
  assert_int_equal(parse("# a comment\n", &l, err), 0);
  assert_int_equal(l.kind, SRV_LINE_BLANK);
  assert_int_equal(parse("   \n", &l, err), 0);
  assert_int_equal(l.kind, SRV_LINE_BLANK);
  assert_int_equal(parse("", &l, err), 0);
  assert_int_equal(l.kind, SRV_LINE_BLANK);
}

static void team_and_scopes(void **state) {
  (void)state;
  srv_token_line l;
  char err[160];
  assert_int_equal(parse("ci 3f9a team=alpha scopes=execute", &l, err), 0);
  assert_string_equal(l.name, "ci");
  assert_string_equal(l.team, "alpha");
  assert_int_equal(l.scopes, SRV_SCOPE_EXECUTE);
  assert_int_equal(parse("root t scopes=admin,execute team=ops", &l, err), 0);
  assert_int_equal(l.scopes, SRV_SCOPE_ADMIN | SRV_SCOPE_EXECUTE);
  assert_string_equal(l.team, "ops");
  assert_int_equal(parse("r t scopes=register", &l, err), 0);
  assert_int_equal(l.scopes, SRV_SCOPE_REGISTER);
}

static void quota_lines(void **state) {
  (void)state;
  srv_token_line l;
  char err[160];
  assert_int_equal(parse("@beta running=2 queued=8 rate=20 burst=40 "
                         "cache-bytes=64m exec-memory=1g\n", &l, err), 0);
  assert_int_equal(l.kind, SRV_LINE_QUOTA);
  assert_string_equal(l.team, "beta");
  assert_int_equal(l.quota.v[SRV_QUOTA_RUNNING], 2);
  assert_int_equal(l.quota.v[SRV_QUOTA_QUEUED], 8);
  assert_int_equal(l.quota.v[SRV_QUOTA_RATE], 20);
  assert_int_equal(l.quota.v[SRV_QUOTA_BURST], 40);
  assert_int_equal(l.quota.v[SRV_QUOTA_CACHE_BYTES], 64 << 20);
  assert_int_equal(l.quota.v[SRV_QUOTA_EXEC_MEMORY], 1 << 30);
  assert_int_equal(parse("@alpha", &l, err), 0); /* no quota: defaults */
  assert_int_equal(l.quota.v[SRV_QUOTA_RUNNING], 0);
}

/* Each line is refused, and err says something. */
static void hostile_lines(void **state) {
  (void)state;
  static const char *const bad[] = {
      "alice\n",                           /* no token */
      "alice tok extra\n",                 /* a third field that is no attribute */
      "alice tok team=\n",                 /* empty team */
      "alice tok team=a/b\n",              /* a team that is no name */
      "alice tok team=../../etc\n",
      "alice tok scopes=\n",
      "alice tok scopes=root\n",           /* unknown scope */
      "alice tok scopes=execute,,admin\n", /* an empty one */
      "alice tok scopes=execute,\n",
      "al\"ice tok\n",                     /* quotes in a name */
      "al{ice} tok\n",                     /* a name that would break labels */
      "alice to\x01k\n",                   /* a control byte */
      "alice tok\x7f\n",                   /* DEL */
      "alice t\xc3\xa9k\n",                /* not ASCII */
      "alice tok\rbob tok2\n",             /* a bare carriage return */
      "alice tok\nbob tok2\n",             /* two lines in one */
      "@ running=1\n",                     /* no team */
      "@beta running\n",                   /* no value */
      "@beta running=-1\n",
      "@beta running=+1\n",
      "@beta running=1x\n",
      "@beta rate=99999999999999999999\n", /* overflow */
      "@beta cache-bytes=9999999999999g\n",
      "@beta colour=blue\n",               /* unknown quota */
      "@beta =3\n",
      "@be/ta running=1\n",
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    srv_token_line l;
    char err[160] = "";
    if (parse(bad[i], &l, err) != -1)
      fail_msg("accepted hostile line %zu: %s", i, bad[i]);
    assert_true(strlen(err) > 0);
  }
  /* a name of 63 bytes passes, 64 does not */
  char line[200];
  srv_token_line l;
  char err[160];
  memset(line, 'n', 63);
  strcpy(line + 63, " tok");
  assert_int_equal(parse(line, &l, err), 0);
  memset(line, 'n', 64);
  strcpy(line + 64, " tok");
  assert_int_equal(parse(line, &l, err), -1);
  /* a token of 513 bytes does not fit */
  char big[600];
  strcpy(big, "a ");
  memset(big + 2, 'x', 513);
  big[515] = 0;
  assert_int_equal(parse(big, &l, err), -1);
}

static void scope_lists(void **state) {
  (void)state;
  assert_int_equal(srv_scopes_parse("execute"), SRV_SCOPE_EXECUTE);
  assert_int_equal(srv_scopes_parse("admin,register,execute"), SRV_SCOPE_ALL);
  assert_int_equal(srv_scopes_parse(""), 0);
  assert_int_equal(srv_scopes_parse("Execute"), 0);
}

static void write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

static void whole_files(void **state) {
  (void)state;
  static srv_server s; /* zeroed, as main's */
  char dir[] = "/tmp/shlo-tokens-XXXXXX", path[64];
  assert_non_null(mkdtemp(dir));
  snprintf(path, sizeof path, "%s/tokens", dir);
  write_file(path, "alice a-token team=alpha\n@alpha running=3\n");
  assert_int_equal(srv_auth_load(&s, path), 0);
  assert_int_equal(s.n_tokens, 1);
  srv_team *alpha = srv_team_get(&s.teams, "alpha");
  assert_int_equal(alpha->own.v[SRV_QUOTA_RUNNING], 3);
  srv_token *kept = s.tokens;
  /* each refusal: -1, and what was in force stays as it was */
  const char *bad[] = {NULL, "", "@alpha running=9\n# no token\n",
                       "alice\n", "a t\nb t\n"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    unlink(path);
    if (bad[i]) write_file(path, bad[i]);
    srv_token *before = s.tokens;
    int n = s.n_tokens;
    s.tokens = NULL; /* as service.c's reload sets aside the old ones */
    s.n_tokens = 0;
    assert_int_equal(srv_auth_load(&s, path), -1);
    srv_auth_free(&s);
    s.tokens = before;
    s.n_tokens = n;
    assert_int_equal(alpha->own.v[SRV_QUOTA_RUNNING], 3);
  }
  /* a directory in the file's place opens, and is refused */
  unlink(path);
  assert_int_equal(mkdir(path, 0700), 0);
  s.tokens = NULL;
  s.n_tokens = 0;
  assert_int_equal(srv_auth_load(&s, path), -1);
  srv_auth_free(&s);
  s.tokens = kept;
  s.n_tokens = 1;
  srv_auth_free(&s);
  srv_teams_free(&s.teams);
  assert_int_equal(rmdir(path), 0);
  assert_int_equal(rmdir(dir), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(old_lines_stay_valid),
      cmocka_unit_test(team_and_scopes),
      cmocka_unit_test(quota_lines),
      cmocka_unit_test(hostile_lines),
      cmocka_unit_test(scope_lists),
      cmocka_unit_test(whole_files),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
