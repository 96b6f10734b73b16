#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `shlo run --server URL` prints what the local `shlo run` prints, on
# stdout and stderr, with the same exit status, for shlo:// and http://:
# results of a program with arguments, a process grid, interpreter.print,
# and a parse, a verify and a runtime (failed check) error, each with its
# kind, message, line and column.  `shlo bench --server` prints its line and
# the same output sums as the local bench (the inputs are deterministic);
# `shlo test --server` prints interpreter.print's lines as the local
# `shlo test` does, also for a case whose check fails after its prints.
# usage: remote_run.sh SHLO_SERVER SHLO_CLI SOURCE_DIR
set -uo pipefail
server=$1 cli=$2 src=$3
tmp=$(mktemp -d)
trap 'kill $pid 2>/dev/null; rm -rf "$tmp"' EXIT
. "$src/tests/server/start_server.sh"
fail=0

cat > "$tmp/print.mlir" <<'MLIR'
func.func @main(%x: tensor<2xi32>) -> tensor<2xi32> {
  %0 = stablehlo.add %x, %x : tensor<2xi32>
  interpreter.print %0 : tensor<2xi32>
  %1 = stablehlo.multiply %0, %x : tensor<2xi32>
  interpreter.print %1 : tensor<2xi32>
  return %1 : tensor<2xi32>
}
MLIR
cat > "$tmp/parse.mlir" <<'MLIR'
func.func @main() -> tensor<2xf32> {
  %0 = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %1 = stablehlo.add %0, %0 tensor<2xf32>
  return %1 : tensor<2xf32>
}
MLIR
cat > "$tmp/verify.mlir" <<'MLIR'
func.func @main(%x: tensor<2xf32>, %y: tensor<3xf32>) -> tensor<2xf32> {
  %0 = stablehlo.add %x, %y : (tensor<2xf32>, tensor<3xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
MLIR
cat > "$tmp/check.mlir" <<'MLIR'
func.func @main() {
  %0 = stablehlo.constant dense<[1, 2, 3]> : tensor<3xi32>
  %1 = stablehlo.add %0, %0 : tensor<3xi32>
  check.expect_eq_const %1, dense<[2, 4, 7]> : tensor<3xi32>
  func.return
}
MLIR
cat > "$tmp/grid.mlir" <<'MLIR'
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %id = stablehlo.replica_id : tensor<ui32>
  %f = stablehlo.convert %id : (tensor<ui32>) -> tensor<f32>
  %b = stablehlo.broadcast_in_dim %f, dims = [] : (tensor<f32>) -> tensor<2xf32>
  %0 = stablehlo.add %x, %b : tensor<2xf32>
  return %0 : tensor<2xf32>
}
MLIR
# name | file | options
cases=(
  "hello|$src/examples/hello.mlir|--args|[dense<[1.0, 2.0, 3.0]> : tensor<3xf32>, dense<[0.5, 0.25, -1.0]> : tensor<3xf32>]"
  "print|$tmp/print.mlir|--args|[dense<[3, -4]> : tensor<2xi32>]"
  "grid|$tmp/grid.mlir|--args|[dense<[1.0, 2.0]> : tensor<2xf32>]|--replicas|2"
  "parse error|$tmp/parse.mlir"
  "verify error|$tmp/verify.mlir|--args|[dense<[1.0, 2.0]> : tensor<2xf32>, dense<[1.0, 2.0, 3.0]> : tensor<3xf32>]"
  "runtime error|$tmp/check.mlir"
)
for c in "${cases[@]}"; do
  IFS='|' read -r -a a <<< "$c"
  name=${a[0]} args=("${a[@]:1}")
  "$cli" run "${args[@]}" >"$tmp/l.out" 2>"$tmp/l.err"; lrc=$?
  if [ ! -s "$tmp/l.out" ] && [ ! -s "$tmp/l.err" ]; then
    echo "FAIL $name: the local run printed nothing"; fail=1; continue
  fi
  for url in "shlo://127.0.0.1:$bport" "http://127.0.0.1:$hport"; do
    "$cli" run "${args[@]}" --server "$url" >"$tmp/r.out" 2>"$tmp/r.err"; rrc=$?
    if [ $lrc != $rrc ] || ! cmp -s "$tmp/l.out" "$tmp/r.out" ||
       ! cmp -s "$tmp/l.err" "$tmp/r.err"; then
      echo "FAIL $name $url: status $lrc/$rrc"
      diff "$tmp/l.out" "$tmp/r.out" | head -10
      diff "$tmp/l.err" "$tmp/r.err" | head -10
      fail=1
    else
      echo "ok   $name $url: status $rrc, $(wc -l < "$tmp/r.out") lines out, $(head -c 100 "$tmp/r.err")"
    fi
  done
done

# shlo bench --server: its line, and the output sums of the local bench
# (which also names the kernels it ran, a line the remote run has not).
prog=$src/examples/hello.mlir
"$cli" bench "$prog" --runs 3 > "$tmp/lb.out" 2>&1 || { echo "FAIL local bench"; fail=1; }
for url in "shlo://127.0.0.1:$bport" "http://127.0.0.1:$hport"; do
  "$cli" bench "$prog" --runs 3 --server "$url" > "$tmp/rb.out" 2>&1
  rc=$?
  if [ $rc = 0 ] && head -1 "$tmp/rb.out" |
     grep -Eq "^$prog: compile [0-9.]+ ms, run min [0-9.]+ ms, median [0-9.]+ ms \(3 runs, at $url\)$" &&
     diff <(grep "^  output" "$tmp/lb.out") <(tail -n +2 "$tmp/rb.out") >/dev/null; then
    echo "ok   bench $url: $(head -1 "$tmp/rb.out" | cut -d: -f2-)"
  else
    echo "FAIL bench $url (status $rc):"; cat "$tmp/rb.out"; tail -n +2 "$tmp/lb.out"; fail=1
  fi
done

# shlo test --server: interpreter.print's lines as in the local run, for a
# passing case and for one whose check fails after it printed.
{ echo '// RUN: x --args="[dense<[3, -4]> : tensor<2xi32>]"'; cat "$tmp/print.mlir"
  echo '// -----'
  sed 's/check.expect_eq_const %1,/interpreter.print %1 : tensor<3xi32>\n  check.expect_eq_const %1,/' "$tmp/check.mlir"
} > "$tmp/printcase.mlir"
"$cli" test "$tmp/printcase.mlir" > "$tmp/lt.out"
for url in "shlo://127.0.0.1:$bport" "http://127.0.0.1:$hport"; do
  "$cli" test --server "$url" "$tmp/printcase.mlir" > "$tmp/rt.out"
  if cmp -s "$tmp/lt.out" "$tmp/rt.out" && grep -q '^PASS' "$tmp/rt.out" &&
     grep -q '^FAIL' "$tmp/rt.out" && [ "$(wc -l < "$tmp/rt.out")" -gt 10 ]; then
    echo "ok   shlo test --server $url prints what the cases printed ($(wc -l < "$tmp/rt.out") lines)"
  else
    echo "FAIL shlo test --server $url: output differs"; diff "$tmp/lt.out" "$tmp/rt.out"; fail=1
  fi
done

kill -TERM $pid; wait $pid; rc=$?
[ $rc = 0 ] || { echo "server exit status $rc"; cat "$tmp/server.log"; fail=1; }
exit $fail
