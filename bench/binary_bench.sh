#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The binary protocol beside the JSON route, on loopback, in one run (a
# script that prints figures; nothing here passes or fails on a timing):
#   (a) a 64 MiB f32 tensor through an identity program: GB/s each way
#       (target: binary >= 1.5 GB/s)
#   (b) a small cached program on one connection: p50, p99 latency
#       (target: binary <= half of JSON)
#   (c) the same program from 32 connections: requests/s
#       (target: binary >= JSON)
# One shlo-server serves both ports; bench/loadgen.c (built as
# build/client/shlo-loadgen) is the client of both.
# usage: bash bench/binary_bench.sh [BUILD_DIR]  (default: build)
# Environment: MIB (64), REPS (5), N (20000 latency samples), CONNS (32),
# DURATION (5 seconds per protocol at CONNS), THREADS (server workers; 0 = one per core),
# INLINE (the server's inline-max-work; unset = its default).
# The latency's two floors: a bare echo thread of the load generator, and a
# bare echo process (what a server in its own process stands on).
set -euo pipefail
build=${1:-build}
server=$build/server/shlo-server loadgen=$build/client/shlo-loadgen
. "$(dirname "$0")/lib.sh"
bench_need "$server" "$loadgen"
MIB=${MIB:-64} REPS=${REPS:-5} N=${N:-20000} CONNS=${CONNS:-32}
DURATION=${DURATION:-5} THREADS=${THREADS:-0} INLINE=${INLINE:-}
hport=$(bench_free_port) bport=$(bench_free_port)
# Room for the JSON route's base64 body of the big tensor (4/3 of it).
"$server" --host 127.0.0.1 --port "$hport" --binary-port "$bport" --log off \
  --threads "$THREADS" --max-body-bytes "$((MIB * 2 + 16))m" \
  --max-connections 4096 --max-queue 1024 \
  ${INLINE:+--inline-max-work "$INLINE"} 2>/dev/null &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null || true' EXIT
bench_wait_healthy "$hport"
echo "shlo-server pid $pid, HTTP :$hport, binary :$bport; $(nproc) cores;" \
     "load average $(cut -d' ' -f1-3 /proc/loadavg)"
"$loadgen" roundtrip "$bport" "$hport" "$MIB" "$REPS"
"$loadgen" latency "$bport" "$hport" "$N"
"$loadgen" rate "$bport" "$hport" "$CONNS" "$DURATION"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
