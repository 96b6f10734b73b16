#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Streaming executions on loopback (a script that prints figures; nothing
# here passes or fails on a timing): COUNT values of MIB MiB (f32) go into
# a running program's infeed and come back out of its outfeed (the program
# outfeeds each value it takes), fed and drained at once.  Prints MB/s of
# tensor data through the program (each byte in and out once), for each
# route in one run:
#   binary  the binary protocol (PROTOCOL.md part 2, "Streaming
#           executions") through libshlo-client (bench/stream_bench.c:
#           raw tensor bytes, written with writev from the value's buffer);
#           issue #13's target is >= 500 MB/s here;
#   http    the HTTP route (NDJSON lines with b64 data, the Python client's
#           Execution.feed / outfeed), which pays for base64 and JSON both
#           ways.
# usage: bash bench/stream_bench.sh [BUILD_DIR] [binary|http|both]
#        (default: build, both -- binary first)
# Environment: COUNT (1000), MIB (1), THREADS (server workers; 0 = per core)
set -euo pipefail
build=${1:-build}
mode=${2:-both}
server=$build/server/shlo-server
bench=$build/client/shlo_stream_bench
. "$(dirname "$0")/lib.sh"
bench_need "$server"
py=python3
/usr/bin/python3 -c 'import numpy' 2>/dev/null && py=/usr/bin/python3
COUNT=${COUNT:-1000} MIB=${MIB:-1} THREADS=${THREADS:-0}
port=$(bench_free_port)
bport=$(bench_free_port)
"$server" --host 127.0.0.1 --port "$port" --binary-port "$bport" \
  --log off --threads "$THREADS" \
  --max-timeout-ms 3600000 --stream-queue-values 16 2>/dev/null &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null || true' EXIT
bench_wait_healthy "$port"
echo "load: $(uptime)"
if [ "$mode" != http ]; then
  bench_need "$bench"
  "$bench" "shlo://127.0.0.1:$bport" "$COUNT" "$MIB"
fi
[ "$mode" = binary ] && exit 0
root=$(cd "$(dirname "$0")/.." && pwd)
COUNT=$COUNT MIB=$MIB PORT=$port ROOT=$root $py - <<'PY'
import os, sys, threading, time
sys.path.insert(0, os.path.join(os.environ["ROOT"], "client", "python"))
import numpy as np
from shlo_client import Client
count, mib, port = int(os.environ["COUNT"]), int(os.environ["MIB"]), os.environ["PORT"]
n = mib * 262144  # f32 elements of MIB MiB
prog = f"""func.func @main(%k: tensor<i64>) -> tensor<i64> {{
  %t0 = "stablehlo.after_all"() : () -> !stablehlo.token
  %c0 = stablehlo.constant dense<0> : tensor<i64>
  %c1 = stablehlo.constant dense<1> : tensor<i64>
  %r:3 = stablehlo.while(%i = %c0, %t = %t0, %m = %k) : tensor<i64>, !stablehlo.token, tensor<i64>
    cond {{
      %c = stablehlo.compare LT, %i, %m : (tensor<i64>, tensor<i64>) -> tensor<i1>
      stablehlo.return %c : tensor<i1>
    }} do {{
      %v:2 = "stablehlo.infeed"(%t) : (!stablehlo.token) -> (tensor<{n}xf32>, !stablehlo.token)
      %t2 = "stablehlo.outfeed"(%v#0, %v#1) : (tensor<{n}xf32>, !stablehlo.token) -> !stablehlo.token
      %i2 = stablehlo.add %i, %c1 : tensor<i64>
      stablehlo.return %i2, %t2, %m : tensor<i64>, !stablehlo.token, tensor<i64>
    }}
  return %r#0 : tensor<i64>
}}
"""
c = Client(f"http://127.0.0.1:{port}")
vals = [np.full(n, float(i), np.float32) for i in range(4)]
ex = c.start(prog, np.int64(count), timeout_ms=3600000)
t0 = time.monotonic()
def feed():
    for i in range(count):
        ex.feed(vals[i % 4])
th = threading.Thread(target=feed)
th.start()
got = 0
for v in ex.outfeed():
    assert v.shape == (n,) and v[0] == float(got % 4)
    got += 1
th.join()
dt = time.monotonic() - t0
mb = count * mib * 1048576 / 1e6
print(f"{count} values of {mib} MiB in and out over HTTP (NDJSON, b64): "
      f"{dt:.2f} s, {mb / dt:.0f} MB/s through the program "
      f"(state {ex.final.get('state')}, {got} values checked)")
PY
