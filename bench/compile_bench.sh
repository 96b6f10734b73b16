#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Compile time against op count: chains of 10k, 100k, 300k and 1M adds
# (bench/gen_chain.py writes them to /tmp), parsed, verified and compiled
# by build/bench/shlo_compile_bench, one line per program.  Every stage
# should grow linearly (or n log n): 10x the ops, about 10x the time.
#
#   bash bench/compile_bench.sh [COUNTS...]      (default: 10000 100000 300000 1000000)
#   SHLO_BENCH_ELEMENTS=8192 ...                 tensors big enough to fuse
# A benchmark, not a test: the figures depend on the machine.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
counts=("$@")
[ ${#counts[@]} -gt 0 ] || counts=(10000 100000 300000 1000000)
elems=${SHLO_BENCH_ELEMENTS:-4}
[ -f "$build/build.ninja" ] || cmake -S . -B "$build" -G Ninja >/dev/null
ninja -C "$build" shlo_compile_bench >/dev/null
tmp=$(mktemp -d /tmp/shlo-compile-bench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
for n in "${counts[@]}"; do
  python3 bench/gen_chain.py "$n" "$elems" > "$tmp/chain_$n.mlir"
  "$build/bench/shlo_compile_bench" "$tmp/chain_$n.mlir"
  rm -f "$tmp/chain_$n.mlir"
done
