#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Build shlo and run every test: unit tests, the corpus round trip and the
# conformance regression check (see tests/CMakeLists.txt).
set -euo pipefail
cd "$(dirname "$0")/.."
bash deploy/bootstrap.sh test

# The Debian packages and the Kubernetes pod (the tests labelled
# "packages", tests/packaging/) spend their minutes mostly waiting on the
# Debian archive and on builds of their own: they run one after the other
# beside the rest of the suite, outside ctest's slots, and are waited for
# at the end.  Each skips, with the reason, where its tools are missing.
pkg_log=$(mktemp)
(cd build && ctest --output-on-failure -L packages) >"$pkg_log" 2>&1 &
pkg=$!
packages_done() {
  local st=0
  wait "$pkg" || st=1
  echo "== the packaging tests (ctest -L packages), run beside the suite"
  cat "$pkg_log"
  rm -f "$pkg_log"
  return $st
}
# Each suite's ctest summary is kept and repeated last, after the
# packaging tests' log: a reader (or a CI parser) that takes the final
# summary must find the suites that ran, not the two packaging tests that
# may all have skipped.
summaries=$(mktemp)
run_suite() {  # NAME DIR [ENV...] -- ctest args
  local name=$1 dir=$2 log st=0
  shift 2
  log=$(mktemp)
  (cd "$dir" && "$@") 2>&1 | tee "$log" || st=1
  { echo "$name:"; grep -E '^[0-9]+% tests passed' "$log" || echo "(no summary)"; } >>"$summaries"
  rm -f "$log"
  return $st
}
finish() {
  local st=$1
  packages_done || st=1
  echo "== summary of the suites"
  cat "$summaries"
  rm -f "$summaries"
  exit "$st"
}
run_suite "plain tree" build ctest --output-on-failure -j"$(nproc)" -LE packages || finish 1

# The same suite built with AddressSanitizer and UBSan (SHLO_SANITIZE): a
# memory error, a leak or undefined behaviour anywhere fails it.  Tests
# that run under valgrind, and the packaging tests, are left to the plain
# build.  SHLO_TEST_ASAN=0 skips it.
if [ "${SHLO_TEST_ASAN:-1}" != 0 ]; then
  [ -f build/asan/build.ninja ] ||
    cmake -S . -B build/asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DSHLO_SANITIZE=ON >/dev/null
  cmake --build build/asan -j"$(nproc)"
  run_suite "ASan/UBSan tree" build/asan \
    env ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
    ctest --output-on-failure -j"$(nproc)" || finish 1
fi
finish 0
