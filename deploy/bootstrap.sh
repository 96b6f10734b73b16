#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the Debian packages shlo needs that are missing, then configures
# and builds it in build/.  Beyond the build: curl, libcurl, valgrind, nginx
# and python3 run tests (openssl makes test_server_tls its certificate); libgfortran-12-dev lets test_install link
# statically (OpenBLAS's static library needs libgfortran); Open MPI gives
# grids across ranks (shlo run/test --mpi) and their tests; clang builds
# the libFuzzer targets of fuzz/ (fuzz/run.sh, not part of the test run);
# chromium, chromium-driver and python3-selenium run the web console's
# browser test (tests/server/console_browser.py).  deploy/
# test-fresh.sh checks this list on a bare Debian 12.  Safe to run again: it installs nothing that is
# already there and rebuilds only what changed.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(build-essential cmake ninja-build pkg-config
          libopenblas-dev libcjson-dev libuv1-dev
          libmicrohttpd-dev libcmocka-dev libssl-dev libcurl4-openssl-dev curl
          valgrind nginx openssl
          python3 python3-numpy libgfortran-12-dev
          openmpi-bin libopenmpi-dev clang
          chromium chromium-driver python3-selenium)
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
fi

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)"
