#!/usr/bin/env bash
# Installs the Debian packages shlo needs that are missing, then configures
# and builds it in build/.  Safe to run again: it installs nothing that is
# already there and rebuilds only what changed.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(build-essential cmake ninja-build pkg-config
          libopenblas-dev libcjson-dev libuv1-dev
          libmicrohttpd-dev libcmocka-dev libssl-dev libcurl4-openssl-dev curl
          valgrind python3 python3-numpy)
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
fi

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)"
