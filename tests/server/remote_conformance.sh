#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `shlo test --server URL` and the Python client print what the local
# `shlo test` prints for the same corpus: the C client's whole output
# (PASS/FAIL/SKIP lines, what the cases' interpreter.print ops wrote, the
# summary) must be identical (binary and HTTP), the Python client's
# summary line the same.  SKIPPED (77) without a corpus.
# usage: remote_conformance.sh SHLO_SERVER SHLO_CLI CORPUS_DIR
set -uo pipefail
server=$1 cli=$2 corpus=$3
here=$(dirname "$0")
dirs=("$corpus/interpret" "$corpus/jax")
if [ ! -d "${dirs[0]}" ] || [ ! -d "${dirs[1]}" ]; then
  "$here/../need-corpus.sh" "$corpus" || exit $?
  echo "no interpret/ and jax/ in $corpus"; exit 1
fi
tmp=$(mktemp -d)
trap 'kill $pid 2>/dev/null; rm -rf "$tmp"' EXIT
server_flags=(--default-timeout-ms 60000)
. "$here/start_server.sh"
fail=0
"$cli" test "${dirs[@]}" > "$tmp/local.txt"
grep -q '^tensor<' "$tmp/local.txt" ||
  { echo "the corpus printed nothing: interpreter.print is not compared"; fail=1; }
for url in "shlo://127.0.0.1:$bport" "http://127.0.0.1:$hport"; do
  "$cli" test --server "$url" "${dirs[@]}" > "$tmp/remote.txt"
  if diff -q "$tmp/local.txt" "$tmp/remote.txt" >/dev/null; then
    echo "shlo test --server $url: identical ($(tail -1 "$tmp/remote.txt"))"
  else
    echo "shlo test --server $url differs from the local run:"
    diff "$tmp/local.txt" "$tmp/remote.txt" | head -20
    fail=1
  fi
done
py=python3
/usr/bin/python3 -c 'import numpy' 2>/dev/null && py=/usr/bin/python3
if ! $py -c 'import numpy' 2>/dev/null; then
  echo "numpy missing (Debian python3-numpy): the Python client cannot run"
  fail=1
else
  for url in "shlo://127.0.0.1:$bport" "http://127.0.0.1:$hport"; do
    got=$($py "$here/py_conformance.py" "$url" "${dirs[@]}" | tail -1)
    want=$(tail -1 "$tmp/local.txt")
    if [ "$got" = "$want" ]; then echo "python client $url: $got"
    else echo "python client $url: '$got', local: '$want'"; fail=1; fi
  done
fi
kill -TERM $pid; wait $pid; rc=$?
[ $rc = 0 ] || { echo "server exit status $rc"; cat "$tmp/server.log"; fail=1; }
exit $fail
