#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Build shlo and run every test: unit tests, the corpus round trip and the
# conformance regression check (see tests/CMakeLists.txt).
set -euo pipefail
cd "$(dirname "$0")/.."
bash deploy/bootstrap.sh test
(cd build && ctest --output-on-failure -j"$(nproc)")

# The same suite built with AddressSanitizer and UBSan (SHLO_SANITIZE): a
# memory error, a leak or undefined behaviour anywhere fails it.  Tests
# that run under valgrind, and the packaging tests, are left to the plain
# build.  SHLO_TEST_ASAN=0 skips it.
if [ "${SHLO_TEST_ASAN:-1}" != 0 ]; then
  [ -f build/asan/build.ninja ] ||
    cmake -S . -B build/asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DSHLO_SANITIZE=ON >/dev/null
  cmake --build build/asan -j"$(nproc)"
  (cd build/asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
     ctest --output-on-failure -j"$(nproc)")
fi
