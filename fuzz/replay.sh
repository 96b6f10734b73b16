#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The fuzz targets' seed corpora (fuzz/seed-corpus.py, from the conformance
# corpus) replayed through the targets built with fuzz/replay.c: run by the
# sanitizer build's suite, where any ASan or UBSan report on a seed fails.
# usage: replay.sh CONFORMANCE_DIR REPLAY_BIN_DIR
set -euo pipefail
corpus=$1 bin=$2
seeds=$(mktemp -d)
trap 'rm -rf "$seeds"' EXIT
python3 "$(dirname "$0")/seed-corpus.py" "$corpus" "$seeds"
for t in mlir json http artifact; do
  "$bin/replay_fuzz_$t" "$seeds/$t"
done
