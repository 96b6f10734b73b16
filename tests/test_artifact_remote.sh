#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Artifacts written by `shlo serialize`, sent to a shlo-server:
#   - `shlo run --server URL FILE.mlir.bc` over the binary protocol (its
#     COMPILE carries the artifact's bytes) and over HTTP prints what the
#     local run of the same artifact, and of its text, prints;
#   - the README's curl flow: the bytes as an application/octet-stream body
#     to /v1/modules, then /v1/modules/{id}/execute, gives the results, and
#     the module's id is the SHA-256 of the artifact's bytes.
# usage: test_artifact_remote.sh SHLO_SERVER SHLO_CLI SOURCE_DIR
set -uo pipefail
server=$1 cli=$2 src=$3
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; rm -rf "$tmp"' EXIT
. "$src/tests/server/start_server.sh"
fail=0
prog=$src/examples/hello.mlir
args='[dense<[1.0, 2.0, 3.0]> : tensor<3xf32>, dense<[0.5, 0.25, -1.0]> : tensor<3xf32>]'
for target in 1.20.0 1.0.0; do
  bc=$tmp/hello.$target.mlir.bc
  "$cli" serialize --target "$target" "$prog" -o "$bc" || { echo "FAIL serialize $target"; fail=1; continue; }
  "$cli" run "$prog" --args "$args" >"$tmp/text.out" 2>&1
  "$cli" run "$bc" --args "$args" >"$tmp/local.out" 2>&1
  if ! cmp -s "$tmp/text.out" "$tmp/local.out" || [ ! -s "$tmp/text.out" ]; then
    echo "FAIL $target: the artifact runs differently from its text"; fail=1
  fi
  for url in "shlo://127.0.0.1:$bport" "http://127.0.0.1:$hport"; do
    "$cli" run "$bc" --args "$args" --server "$url" >"$tmp/r.out" 2>&1
    if cmp -s "$tmp/local.out" "$tmp/r.out"; then
      echo "ok   $target $url: $(head -c 80 "$tmp/r.out" | tr '\n' ' ')"
    else
      echo "FAIL $target $url:"; diff "$tmp/local.out" "$tmp/r.out" | head; fail=1
    fi
  done
done

# A module that does not verify is refused, naming the constraint, and no
# artifact is written.
cat >"$tmp/bad.mlir" <<'MLIR'
func.func @main(%a: tensor<2xf32>, %b: tensor<3xf32>) -> tensor<2xf32> {
  %0 = stablehlo.add %a, %b : (tensor<2xf32>, tensor<3xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
MLIR
if "$cli" serialize "$tmp/bad.mlir" -o "$tmp/bad.mlir.bc" 2>"$tmp/bad.err" ||
   [ -e "$tmp/bad.mlir.bc" ] || ! grep -q "error" "$tmp/bad.err"; then
  echo "FAIL serialize of a module that does not verify:"; cat "$tmp/bad.err"
  fail=1
else
  echo "ok   serialize refuses: $(head -1 "$tmp/bad.err")"
fi

# The README's curl flow with an artifact shlo wrote.
bc=$tmp/hello.1.20.0.mlir.bc
sum=$(sha256sum "$bc" | cut -d' ' -f1)
reply=$(curl -s --data-binary @"$bc" -H 'Content-Type: application/octet-stream' \
  "http://127.0.0.1:$hport/v1/modules")
id=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["id"])' "$reply")
if [ "$id" != "sha256:$sum" ]; then
  echo "FAIL /v1/modules: id $id, not sha256:$sum ($reply)"; fail=1
fi
out=$(curl -s "http://127.0.0.1:$hport/v1/modules/$id/execute" \
  -H 'Content-Type: application/json' -d '{"inputs": [
    {"dtype": "f32", "shape": [3], "data": [1, 2, 3]},
    {"dtype": "f32", "shape": [3], "data": [0.5, 0.25, -1]}]}')
# (x + y)^2 = [2.25, 5.0625, 4]
if python3 -c '
import json, sys
o = json.loads(sys.argv[1])["outputs"]
assert o[0]["data"] == [2.25, 5.0625, 4.0], o[0]
assert o[1]["shape"] == [3, 2], o[1]
' "$out"; then
  echo "ok   curl octet-stream: $id"
else
  echo "FAIL curl execute: $out"; fail=1
fi
exit $fail
