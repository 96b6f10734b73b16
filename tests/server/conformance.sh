#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Post every conformance program (text) to a live shlo-server's /execute and
# compare with what `shlo test` says of the same file, run here and now:
#   PASS -> 200;  SKIP (an op or type this build lacks) -> 422 verify;
#   FAIL -> an error answer (runtime, usually a failed check).
# Fails when `shlo test` exits non-zero or when no program was compared;
# without a corpus (DIR missing) it reports SKIPPED: exit status 77.
# usage: conformance.sh SHLO_SERVER SHLO_CLI DIR
set -uo pipefail
server=$1 cli=$2 dir=$3
if [ ! -e "$dir" ]; then
  "$(dirname "$0")/../need-corpus.sh" "$(dirname "$dir")" || exit $?
  echo "no folder $dir in the conformance corpus"
  exit 1
fi
tmp=$(mktemp -d)
trap 'kill $pid 2>/dev/null; rm -rf "$tmp"' EXIT
server_flags=(--default-timeout-ms 60000)
. "$(dirname "$0")/start_server.sh"
port=$hport

"$cli" test "$dir" > "$tmp/expected.txt"
cli_rc=$?
pass=0 fail=0 n=0
while read -r verdict loc _; do
  case $verdict in PASS|FAIL|SKIP) ;; *) continue ;; esac
  file=${loc%%:*}
  # one case per file in this corpus; a file with several is posted whole
  [ "${loc#*:}" = 1 ] || [ "${loc#*:}" = "1:" ] || continue
  n=$((n + 1))
  code=$(curl -s -o "$tmp/out.json" -w '%{http_code}' --data-binary @"$file" \
         "http://127.0.0.1:$port/execute")
  case $verdict in
    PASS) want=200 ;;
    SKIP) want=422 ;;
    FAIL) want=error ;;
  esac
  ok=0
  if [ "$want" = error ]; then [ "$code" -ge 400 ] && ok=1
  else [ "$code" = "$want" ] && ok=1; fi
  if [ $ok = 1 ]; then pass=$((pass + 1))
  else fail=$((fail + 1)); echo "MISMATCH $file: shlo test $verdict, server $code $(head -c 300 "$tmp/out.json")"; fi
done < "$tmp/expected.txt"
curl -sf "http://127.0.0.1:$port/healthz" >/dev/null || { echo "server unhealthy after the run"; fail=$((fail + 1)); }
kill -TERM $pid; wait $pid; rc=$?
[ $rc = 0 ] || { echo "server exit status $rc"; fail=$((fail + 1)); }
echo "server conformance: $n programs, $pass agree with shlo test, $fail differ ($(grep -c ^PASS "$tmp/expected.txt") PASS, $(grep -c ^SKIP "$tmp/expected.txt") SKIP, $(grep -c ^FAIL "$tmp/expected.txt") FAIL under shlo test)"
if [ $cli_rc != 0 ]; then
  echo "shlo test $dir exited with status $cli_rc: $(tail -1 "$tmp/expected.txt")"
  fail=$((fail + 1))
fi
if [ $n = 0 ]; then
  echo "no program was compared: shlo test listed no case of $dir"
  fail=$((fail + 1))
fi
[ $fail = 0 ]
