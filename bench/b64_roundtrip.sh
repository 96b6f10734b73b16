#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A 64 MiB f32 tensor's round trip as b64 through shlo-server with its
# default limits: curl POSTs {"program", "inputs": [{"b64": ...}],
# "output_format": "b64"} (an 89.5 MB body) to /execute on loopback and
# reads back the negated tensor (as long again).  Prints each run's wall
# time (curl's time_total), the median, and the server's CPU time per run
# (which a loaded machine does not inflate as it does wall time); then
# the floor: the same body echoed back by server/bare_mhd (HTTP and curl
# alone, no decoding, executing or encoding).
#
#   bash bench/b64_roundtrip.sh [RUNS]     (default 5)
# A benchmark, not a test: the figures depend on the machine.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
build=${BUILD_DIR:-build}
[ -f "$build/build.ninja" ] || cmake -S . -B "$build" -G Ninja >/dev/null
ninja -C "$build" shlo-server bare_mhd >/dev/null
tmp=$(mktemp -d /tmp/shlo-b64-bench.XXXXXX)
pid= bpid=
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null
  [ -n "$bpid" ] && kill "$bpid" 2>/dev/null
  wait 2>/dev/null; rm -rf "$tmp"
}
trap cleanup EXIT
. "$(dirname "$0")/lib.sh"
port=$(bench_free_port)
env -i "$build/server/shlo-server" --port "$port" --log off 2>"$tmp/server.log" &
pid=$!
bench_wait_healthy "$port"
python3 - "$tmp/req.json" <<'PY'
import base64, json, os, sys
n = 16 * 1024 * 1024                      # 64 MiB of f32
prog = (f"func.func @main(%x: tensor<{n}xf32>) -> tensor<{n}xf32> {{\n"
        f"  %0 = stablehlo.negate %x : tensor<{n}xf32>\n"
        f"  return %0 : tensor<{n}xf32>\n}}\n")
data = bytearray(os.urandom(4 * n))
for i in range(3, len(data), 4):          # finite floats: clear the top
    data[i] &= 0x3F                       # exponent bit
with open(sys.argv[1], "w") as f:
    json.dump({"program": prog, "output_format": "b64",
               "inputs": [{"dtype": "f32", "shape": [n],
                           "b64": base64.b64encode(data).decode()}]}, f)
PY
size=$(stat -c %s "$tmp/req.json")
post() { # [PORT]
  curl -s -o "$tmp/out.json" -w '%{http_code} %{time_total}\n' \
    -H 'Content-Type: application/json' --data-binary @"$tmp/req.json" \
    "localhost:${1:-$port}/execute"
}
# CPU seconds the server's threads have used (utime + stime).
cpu_s() {
  awk -v hz="$(getconf CLK_TCK)" '{t += $14 + $15} END {printf "%.3f", t / hz}' \
    /proc/"$1"/task/*/stat
}
median() {
  sort -n | awk '{a[NR]=$1} END {printf "%.3f", a[int((NR+1)/2)]}'
}
read -r code _ < <(post)          # compiles and caches the module
[ "$code" = 200 ] || { echo "first request: HTTP $code"; head -c 300 "$tmp/out.json"; exit 1; }
echo "request body $size bytes, response $(stat -c %s "$tmp/out.json") bytes"
echo "load average $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
times=() cpus=()
for i in $(seq "$runs"); do
  c0=$(cpu_s "$pid")
  read -r code t < <(post)
  c1=$(cpu_s "$pid")
  [ "$code" = 200 ] || { echo "run $i: HTTP $code"; exit 1; }
  c=$(awk -v a="$c0" -v b="$c1" 'BEGIN {printf "%.3f", b - a}')
  echo "run $i: ${t} s (server CPU ${c} s)"
  times+=("$t") cpus+=("$c")
done
echo "median of $runs: $(printf '%s\n' "${times[@]}" | median) s," \
     "server CPU $(printf '%s\n' "${cpus[@]}" | median) s"
bport=$(bench_free_port)
"$build/server/bare_mhd" "$bport" echo &
bpid=$!
for _ in $(seq 100); do curl -s -o /dev/null "localhost:$bport/" && break; sleep 0.05; done
floor=() fcpus=()
for i in $(seq "$runs"); do
  c0=$(cpu_s "$bpid")
  read -r code t < <(post "$bport")
  c1=$(cpu_s "$bpid")
  [ "$code" = 200 ] || { echo "floor run $i: HTTP $code"; exit 1; }
  floor+=("$t")
  fcpus+=("$(awk -v a="$c0" -v b="$c1" 'BEGIN {printf "%.3f", b - a}')")
done
echo "floor, the body echoed by bare_mhd: median of $runs" \
     "$(printf '%s\n' "${floor[@]}" | median) s," \
     "bare_mhd CPU $(printf '%s\n' "${fcpus[@]}" | median) s"
