#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The engine alone configures where pkg-config knows of OpenBLAS and nothing
# else (no cJSON, libuv, libmicrohttpd, cmocka, libcurl), and the full
# project does not (so the restriction is real).  Configure only: quick.
# usage: engine_only.sh CMAKE GENERATOR SOURCE_DIR
set -euo pipefail
cmake=$1 generator=$2 src=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/pc"
ln -s "$(pkg-config --variable=pcfiledir openblas)/openblas.pc" "$tmp/pc/"
export PKG_CONFIG_LIBDIR=$tmp/pc PKG_CONFIG_PATH=

status=0
if "$cmake" -S "$src" -B "$tmp/full" -G "$generator" >"$tmp/full.log" 2>&1; then
  echo "FAIL: the full project configured with only openblas.pc visible"
  status=1
fi
mkdir -p "$tmp/engine/.cmake/api/v1/query"
touch "$tmp/engine/.cmake/api/v1/query/codemodel-v2"
if "$cmake" -S "$src" -B "$tmp/engine" -G "$generator" -DSHLO_ENGINE_ONLY=ON \
     >"$tmp/engine.log" 2>&1; then
  grep -E 'shlo [0-9.]+: ' "$tmp/engine.log"
  # The libraries are there to build; the programs and tests are not.
  # Read from CMake's file API (one reply file per target, written at
  # configure time), not from the build tool: `--target help` may re-run
  # CMake first and once came back without shlo_shared in a CI run.
  has_target() {
    grep -qsE "\"name\" *: *\"$1\"" "$tmp/engine/.cmake/api/v1/reply"/target-*.json
  }
  for t in shlo shlo_shared; do
    has_target "$t" || { echo "FAIL: no target $t"; status=1; }
  done
  for t in shlo-server shlo-cli test_parser; do
    has_target "$t" && { echo "FAIL: engine-only has target $t"; status=1; }
  done
else
  echo "FAIL: engine-only configure needs more than OpenBLAS:"
  tail -20 "$tmp/engine.log"
  status=1
fi
[ $status = 0 ] && echo "engine-only configure needs only OpenBLAS"
exit $status
