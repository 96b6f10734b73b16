#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What tracing every execution costs (issue #35): the small cached program
# of binary_bench.sh's `rate` (shlo-loadgen), over the binary protocol and
# the JSON route, against two shlo-servers side by side, one with
# trace-sample-rate 0 and one with 1 (every execution traced, rendered as
# Chrome trace JSON and kept).  The two are measured alternately, ROUNDS
# times each, so that a slow spell of a shared machine hits both; the
# table gives each round and the medians, then traced / untraced, and the
# server's CPU time per request (from /proc: on a machine shared with
# other work, throughput swings with the neighbours' load, CPU time per
# request much less).  A benchmark, not a test: it prints figures and
# judges none.
#
#   bash bench/trace_cost.sh [BUILD_DIR]   (CONNS=8 RUN_S=3 ROUNDS=5)
# (RUN_S, not SECONDS: bash keeps its own SECONDS, the shell's age)
set -euo pipefail
build=${1:-build}
server=$build/server/shlo-server loadgen=$build/client/shlo-loadgen
. "$(dirname "$0")/lib.sh"
bench_need "$server" "$loadgen"
CONNS=${CONNS:-8} SECONDS_EACH=${RUN_S:-3} ROUNDS=${ROUNDS:-5}
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true' EXIT
declare -A hport bport pid
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
for rate in 0 1; do
  hport[$rate]=$(bench_free_port) bport[$rate]=$(bench_free_port)
  "$server" --port "${hport[$rate]}" --binary-port "${bport[$rate]}" \
    --log off --max-queue 1024 --trace-sample-rate "$rate" 2>/dev/null &
  pids+=($!)
  pid[$rate]=$!
  bench_wait_healthy "${hport[$rate]}"
done
echo "$(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg);" \
     "$CONNS connections, ${SECONDS_EACH} s per run"
declare -A runs
hz=$(getconf CLK_TCK)
for round in $(seq "$ROUNDS"); do
  for rate in 0 1; do
    c0=$(cpu_ticks "${pid[$rate]}")
    out=$("$loadgen" rate "${bport[$rate]}" "${hport[$rate]}" "$CONNS" \
          "$SECONDS_EACH")
    c1=$(cpu_ticks "${pid[$rate]}")
    b=$(awk '/binary/ {print $2}' <<<"$out") j=$(awk '/json/ {print $2}' <<<"$out")
    us=$(awk -v c="$((c1 - c0))" -v hz="$hz" -v b="$b" -v j="$j" -v s="$SECONDS_EACH" \
         'BEGIN {printf "%.2f", c / hz * 1e6 / ((b + j) * s)}')
    runs[$rate,binary]+="$b " runs[$rate,json]+="$j " runs[$rate,cpu]+="$us "
    echo "round $round, trace-sample-rate $rate: binary $b/s, json $j/s," \
         "server CPU $us us/request"
  done
done
median() { tr ' ' '\n' <<<"$1" | sed '/^$/d' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for face in json binary; do
  m0=$(median "${runs[0,$face]}") m1=$(median "${runs[1,$face]}")
  awk -v f="$face" -v a="$m0" -v b="$m1" 'BEGIN {
    printf "%-6s median: untraced %d/s, every execution traced %d/s: %.1f%% of the untraced throughput (cost %.1f%%)\n",
           f, a, b, 100 * b / a, 100 - 100 * b / a }'
done
c0=$(median "${runs[0,cpu]}") c1=$(median "${runs[1,cpu]}")
awk -v a="$c0" -v b="$c1" 'BEGIN {
  printf "server CPU per request, median: untraced %.2f us, traced %.2f us (+%.1f%%)\n",
         a, b, 100 * b / a - 100 }'
