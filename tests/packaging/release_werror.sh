#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The Release build -- what deploy/Dockerfile compiles -- has no warning
# under -Wall -Wextra: -O3 inlines more than the RelWithDebInfo build the
# other tests use, and its analyses (loop bounds, uninitialized reads)
# found undefined behaviour that -O2 did not.  -Werror makes any new
# warning fail this test.  The tree is kept in BINARY_DIR, so a later run
# rebuilds only what changed.
# usage: release_werror.sh CMAKE GENERATOR SOURCE_DIR BINARY_DIR
set -euo pipefail
cmake=$1 generator=$2 src=$3 bin=$4
t0=$(date +%s)
"$cmake" -S "$src" -B "$bin" -G "$generator" -DCMAKE_BUILD_TYPE=Release \
  -DSHLO_BUILD_TESTS=OFF -DCMAKE_C_FLAGS=-Werror >"$bin.configure.log" 2>&1 ||
  { cat "$bin.configure.log"; exit 1; }
if ! "$cmake" --build "$bin" --target shlo-server shlo-cli -j2 >"$bin.build.log" 2>&1; then
  grep -E -A6 'warning:|error:' "$bin.build.log" | head -60
  echo "FAIL: the Release build warns (or fails); full log: $bin.build.log"
  exit 1
fi
echo "Release build of shlo-server and shlo: no warning ($(( $(date +%s) - t0 )) s)"
