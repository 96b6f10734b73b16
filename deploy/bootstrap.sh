#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the Debian packages shlo needs that are missing, then configures
# and builds it in build/.
#   bash deploy/bootstrap.sh run    what building and running need: the
#                                   compiler, CMake, the libraries (zlib
#                                   for compressed .npz inputs), curl and
#                                   jq for the documented examples; builds
#                                   the two programs only (deploy/run.sh)
#   bash deploy/bootstrap.sh [test] that, and the test toolchain; builds
#                                   everything with the tests (deploy/test.sh)
# The test toolchain: cmocka; valgrind, nginx, python3 and its numpy,
# setuptools and venv run tests (openssl makes test_server_tls its
# certificate); libgfortran-12-dev lets test_install link statically
# (OpenBLAS's static library needs libgfortran); Open MPI gives grids across
# ranks (shlo run/test --mpi) and their tests; clang builds the libFuzzer
# targets of fuzz/ (fuzz/run.sh, not part of the test run); chromium,
# chromium-driver and python3-selenium run the web console's browser test
# (tests/server/console_browser.py); doxygen builds the C API reference
# (test_docs); prometheus gives promtool, which checks /metrics
# (tests/server/metrics_promtool.py).  deploy/test-fresh.sh checks these
# lists on a bare Debian 12.
# Safe to run again: it installs nothing that is already there and rebuilds
# only what changed.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-test}
case $mode in run | test) ;; *) echo "usage: bootstrap.sh [run|test]" >&2; exit 2 ;; esac

# Building and running: the engine, the shlo command, shlo-server and the
# C client (libcurl), and the tools the documented examples use.
packages=(build-essential cmake ninja-build pkg-config
          libopenblas-dev libcjson-dev libuv1-dev
          libmicrohttpd-dev libssl-dev libcurl4-openssl-dev zlib1g-dev
          curl jq)
if [ "$mode" = test ]; then
  packages+=(libcmocka-dev valgrind nginx openssl
             python3 python3-numpy python3-setuptools python3-wheel
             python3-venv libgfortran-12-dev
             openmpi-bin libopenmpi-dev clang
             chromium chromium-driver python3-selenium doxygen prometheus)
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
  # nginx is here for the three-server test, which starts its own; the
  # package would also start a web server on port 80 where systemd runs.
  if [[ " ${missing[*]} " == *" nginx "* ]] && [ -d /run/systemd/system ]; then
    systemctl disable --now nginx >/dev/null 2>&1 || true
    echo "nginx: installed for the tests; its system service is disabled"
  fi
  # prometheus is here for its promtool (test_server_metrics_promtool)
  if [[ " ${missing[*]} " == *" prometheus "* ]] && [ -d /run/systemd/system ]; then
    systemctl disable --now prometheus >/dev/null 2>&1 || true
  fi
fi

if [ "$mode" = run ]; then
  # No tests (nor cmocka, nor the fuzz replayers); MPI only if test mode
  # installed it before.  A tree configured for the tests stays so.
  tests=OFF
  grep -qs '^SHLO_BUILD_TESTS:BOOL=ON' build/CMakeCache.txt && tests=ON
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DSHLO_BUILD_TESTS=$tests >/dev/null
  cmake --build build -j"$(nproc)" --target shlo-cli shlo-server
else
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DSHLO_BUILD_TESTS=ON >/dev/null
  cmake --build build -j"$(nproc)"
fi
