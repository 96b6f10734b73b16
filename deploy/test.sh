#!/usr/bin/env bash
# Build shlo and run every test: unit tests, the corpus round trip and the
# conformance regression check (see tests/CMakeLists.txt).
set -euo pipefail
cd "$(dirname "$0")/.."
bash deploy/bootstrap.sh
cd build
ctest --output-on-failure -j"$(nproc)"
