#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Build the libFuzzer targets (fuzz_mlir, fuzz_json, fuzz_http,
# fuzz_artifact) with clang,
# ASan and UBSan into build/fuzz.  Not part of the default build.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${FUZZ_BUILD_DIR:-build/fuzz}
[ -f "$dir/build.ninja" ] ||
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER=clang -DSHLO_FUZZ=ON >/dev/null
ninja -C "$dir" -j"${JOBS:-2}" fuzz_mlir fuzz_json fuzz_http fuzz_artifact
