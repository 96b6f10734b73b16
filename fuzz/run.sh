#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Build the fuzz targets, seed them from the conformance corpus and run
# each for SECONDS (default 600), one after another; libFuzzer's last
# status line (executions, cov, ft) and any crash go to /tmp/shlo-fuzz/.
#
#   bash fuzz/run.sh [SECONDS] [TARGET...]    (targets: mlir json http artifact)
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-600}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(mlir json http artifact)
corpus_src=${SHLO_CONFORMANCE_DIR:-../shared/conformance}
work=${FUZZ_WORK:-/tmp/shlo-fuzz}
bash fuzz/build.sh
[ -d "$work/seeds" ] || python3 fuzz/seed-corpus.py "$corpus_src" "$work/seeds"
for t in "${targets[@]}"; do
  mkdir -p "$work/corpus-$t" "$work/crashes-$t"
  nice -n 19 build/fuzz/fuzz/fuzz_$t -max_total_time="$secs" -timeout=60 \
    -rss_limit_mb=4096 -max_len=262144 -print_final_stats=1 \
    -artifact_prefix="$work/crashes-$t/" \
    "$work/corpus-$t" "$work/seeds/$t" > "$work/fuzz_$t.log" 2>&1 || true
  { grep -E "^#[0-9]+[[:space:]]+(DONE|pulse|NEW|REDUCE)" "$work/fuzz_$t.log" || true; } | tail -1
  grep -E "ERROR|SUMMARY|stat::" "$work/fuzz_$t.log" || true
done
