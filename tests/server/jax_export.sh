#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Issue #32: JAX's CPU exports.  `shlo test` passes every JSON case of
# jax-export/ locally and at a live server (binary and HTTP); the runner
# fails a wrong answer and passes one that differs by a unit factor per
# column; a failing shape_assertion ends the execution with JAX's message,
# over the CLI (exit 1) and over HTTP (400, kind "input").  SKIPPED (77)
# without the corpus.
# usage: jax_export.sh SHLO_SERVER SHLO_CLI CORPUS_DIR SOURCE_DIR
set -uo pipefail
server=$1 cli=$2 corpus=$3 src=$4
here=$(dirname "$0")
cases="$corpus/jax-export"
if [ ! -d "$cases" ]; then
  "$here/../need-corpus.sh" "$corpus" || exit $?
  echo "no jax-export/ in $corpus"; exit 1
fi
want_count=$(ls "$cases"/*.json | wc -l)
tmp=$(mktemp -d)
trap 'kill $pid 2>/dev/null; rm -rf "$tmp"' EXIT
fail=0
check_all_pass() { # label, output file
  local summary; summary=$(tail -1 "$2")
  if [ "$summary" = "$want_count passed, 0 failed, 0 skipped" ]; then
    echo "$1: $summary"
  else
    echo "$1: $summary (want all $want_count passed)"; grep -v '^PASS' "$2"
    fail=1
  fi
}
"$cli" test "$cases" > "$tmp/local.txt"
check_all_pass "local" "$tmp/local.txt"
# the runner is not vacuous
"$cli" test "$src/tests/jax/wrong_column.json" > "$tmp/neg.txt"
grep -q '^FAIL .*wrong_column.json:1: output 0 element 3' "$tmp/neg.txt" ||
  { echo "a wrong answer was not failed:"; cat "$tmp/neg.txt"; fail=1; }
"$cli" test "$src/tests/jax/flipped_column.json" > "$tmp/flip.txt"
grep -q '^PASS ' "$tmp/flip.txt" ||
  { echo "a column sign flip was not accepted:"; cat "$tmp/flip.txt"; fail=1; }
# shape_assertion over the CLI
sa="$src/tests/jax/shape_assertion.mlir"
msg="Expected value == 3 for dimension variable 'b'; obtained 'b' = 5."
"$cli" run "$sa" --args '[dense<3> : tensor<i32>]' > "$tmp/ok.txt" 2>&1
grep -q '{6}' "$tmp/ok.txt" ||
  { echo "a holding shape_assertion:"; cat "$tmp/ok.txt"; fail=1; }
"$cli" run "$sa" --args '[dense<5> : tensor<i32>]' > "$tmp/bad.txt" 2>&1
rc=$?
if [ $rc != 1 ] || ! grep -qF "$msg" "$tmp/bad.txt" || grep -q '{10}' "$tmp/bad.txt"; then
  echo "a failing shape_assertion over the CLI (exit $rc):"; cat "$tmp/bad.txt"
  fail=1
fi
server_flags=(--default-timeout-ms 60000)
. "$here/start_server.sh"
for url in "shlo://127.0.0.1:$bport" "http://127.0.0.1:$hport"; do
  "$cli" test --server "$url" "$cases" > "$tmp/remote.txt"
  check_all_pass "shlo test --server $url" "$tmp/remote.txt"
done
# shape_assertion over HTTP
python3 - "$sa" > "$tmp/req.json" <<'PY'
import json, sys
print(json.dumps({"program": open(sys.argv[1]).read(),
                  "inputs": [{"dtype": "i32", "shape": [], "data": [5]}]}))
PY
code=$(curl -s -o "$tmp/resp.json" -w '%{http_code}' -H 'Content-Type: application/json' \
  --data-binary @"$tmp/req.json" "http://127.0.0.1:$hport/execute")
if [ "$code" != 400 ] || ! grep -q '"kind": *"input"' "$tmp/resp.json" ||
   ! grep -qF "$msg" "$tmp/resp.json"; then
  echo "a failing shape_assertion over HTTP: $code"; cat "$tmp/resp.json"; fail=1
else
  echo "shape_assertion over HTTP: 400, kind input, JAX's message"
fi
kill -TERM $pid; wait $pid; rc=$?
[ $rc = 0 ] || { echo "server exit status $rc"; cat "$tmp/server.log"; fail=1; }
exit $fail
