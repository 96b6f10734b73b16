#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Throughput and latency of shlo-server for a small cached program, against
# a bare libmicrohttpd handler (server/bare_mhd.c) on the same machine.
#
#   bash bench/server_bench.sh [SECONDS] [CONNECTIONS] [ROUNDS]
#   (SHLO_BENCH_THREADS=N: shlo-server's workers)
#
# Both servers get the same POST (the program text and two 4-element f32
# inputs, JSON) from wrk with the same parameters (threads, connections,
# duration); both read the whole body and answer a JSON body of the same
# size (bare_mhd a fixed one).  shlo-server answers from its module cache,
# so the difference is JSON decoding, the cache lookup, the worker hand-off
# and the execution.  The two run alternately, ROUNDS times each (3 by
# default), so that a slow spell of a shared machine hits both; the table
# gives the median of each figure (and every round's requests/s), then
# the ratio of the medians.  A benchmark, not a test: the figures depend on
# the machine, and wrk shares its cores with the server.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-10}
conns=${2:-32}
rounds=${3:-3}
build=${BUILD_DIR:-build}

if ! command -v wrk >/dev/null; then
  echo "installing wrk (Debian package)..." >&2
  if [ "$(id -u)" = 0 ]; then apt-get install -y wrk >/dev/null || { apt-get update >/dev/null && apt-get install -y wrk >/dev/null; }
  else sudo apt-get install -y wrk >/dev/null; fi
fi
[ -f "$build/build.ninja" ] || cmake -S . -B "$build" -G Ninja >/dev/null
ninja -C "$build" shlo-server bare_mhd >/dev/null

. bench/lib.sh
tmp=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT

program='func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %a, %b : tensor<4xf32>
  %1 = stablehlo.multiply %0, %b : tensor<4xf32>
  return %1 : tensor<4xf32>
}'
body=$(python3 -c 'import json,sys; print(json.dumps({"program": sys.argv[1], "inputs": [
  {"dtype": "f32", "shape": [4], "data": [1, 2, 3, 4]},
  {"dtype": "f32", "shape": [4], "data": [0.5, 0.5, 0.5, 0.5]}]}))' "$program")
python3 - "$body" > "$tmp/post.lua" <<'PY'
import json, sys
print('wrk.method = "POST"')
print('wrk.headers["Content-Type"] = "application/json"')
print('wrk.body = ' + json.dumps(sys.argv[1]))
PY

sp=$(bench_free_port)
"$build/server/shlo-server" --port "$sp" --log off ${SHLO_BENCH_THREADS:+--threads $SHLO_BENCH_THREADS} 2>"$tmp/server.log" &
pids+=($!)
bp=$(bench_free_port)
"$build/server/bare_mhd" "$bp" &
pids+=($!)
bench_wait_healthy "$sp"
# warm the cache, and show the answer once
curl -sf -H 'Content-Type: application/json' --data-binary "$body" "http://127.0.0.1:$sp/execute" >/dev/null
curl -sf -H 'Content-Type: application/json' --data-binary "$body" "http://127.0.0.1:$sp/execute"; echo

threads=$(( $(nproc) < 4 ? $(nproc) : 4 ))
run() { # name url round
  wrk -t"$threads" -c"$conns" -d"${secs}s" --latency -s "$tmp/post.lua" "$2" > "$tmp/$1.$3.txt"
}
echo "wrk: $threads threads, $conns connections, ${secs}s each, $rounds rounds" \
     "alternating, on $(nproc) cores (load average $(cut -d' ' -f1-3 /proc/loadavg))" >&2
for i in $(seq "$rounds"); do
  if (( i % 2 )); then
    run shlo "http://127.0.0.1:$sp/execute" "$i"; run bare "http://127.0.0.1:$bp/execute" "$i"
  else
    run bare "http://127.0.0.1:$bp/execute" "$i"; run shlo "http://127.0.0.1:$sp/execute" "$i"
  fi
done

python3 - "$tmp" "$rounds" <<'PY'
import re, statistics, sys
tmp, rounds = sys.argv[1], int(sys.argv[2])
def ms(v):
    m = re.match(r'([\d.]+)(us|ms|s)', v)
    x = float(m.group(1))
    return x / 1000 if m.group(2) == 'us' else x * 1000 if m.group(2) == 's' else x
def parse(path):
    t = open(path).read()
    rps = float(re.search(r'Requests/sec:\s+([\d.]+)', t).group(1))
    p50 = ms(re.search(r'\s50%\s+(\S+)', t).group(1))
    p99 = ms(re.search(r'\s99%\s+(\S+)', t).group(1))
    errs = re.search(r'Non-2xx or 3xx responses: (\d+)', t)
    return rps, p50, p99, int(errs.group(1)) if errs else 0
def median(name):
    runs = [parse(f"{tmp}/{name}.{i}.txt") for i in range(1, rounds + 1)]
    med = [statistics.median(r[k] for r in runs) for k in range(3)]
    return med + [sum(r[3] for r in runs)], [r[0] for r in runs]
(s, s_all), (b, b_all) = median("shlo"), median("bare")
print(f"{'median of ' + str(rounds):14} {'req/s':>10} {'p50 ms':>8} {'p99 ms':>8} {'non-2xx':>8}   req/s of each round")
for name, r, a in (("shlo-server", s, s_all), ("bare_mhd", b, b_all)):
    print(f"{name:14} {r[0]:10.0f} {r[1]:8.3f} {r[2]:8.3f} {r[3]:8d}   "
          + " ".join(f"{x:.0f}" for x in a))
print(f"ratio shlo-server / bare_mhd: {s[0] / b[0]:.2f} of the requests/s, "
      f"p50 x{s[1] / b[1]:.2f}, p99 x{s[2] / b[2]:.2f}")
PY
