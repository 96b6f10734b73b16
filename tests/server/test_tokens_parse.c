/* The tokens-file line parser (server/src/auth.c, teams.h): old `name
 * token` lines, team= and scopes=, @TEAM quota lines, and hostile lines,
 * each refused with a reason and nothing half-filled in force. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(old_lines_stay_valid),
      cmocka_unit_test(team_and_scopes),
      cmocka_unit_test(quota_lines),
      cmocka_unit_test(hostile_lines),
      cmocka_unit_test(scope_lists),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
