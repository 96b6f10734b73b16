#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The Python client as a package: `pip install --no-build-isolation
# --no-index` of a copy of client/python into a fresh venv (offline, with
# the system's setuptools and numpy: --system-site-packages), then
# tests/server/py_client.py run by that venv's interpreter against this
# build's shlo-server, importing the installed module.
# usage: python.sh SOURCE_DIR SHLO_SERVER
# Exits 77 (skipped) without numpy, setuptools or venv for /usr/bin/python3.
set -euo pipefail
src=$1 server=$2
py=/usr/bin/python3
[ -x $py ] || py=$(command -v python3)
"$py" -c 'import numpy, setuptools, venv' 2>/dev/null ||
  { echo "python.sh: $py lacks numpy, setuptools or venv: skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -r "$src/client/python" "$tmp/pkg"  # the build leaves files beside it
"$py" -m venv --system-site-packages "$tmp/venv"
"$tmp/venv/bin/pip" install --no-build-isolation --no-index "$tmp/pkg" \
  >"$tmp/pip.log" 2>&1 || { cat "$tmp/pip.log"; exit 1; }
site=$("$tmp/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
echo "installed: $(grep -o 'Successfully installed.*' "$tmp/pip.log") in $site"
cd "$tmp"  # not the source tree: the import must find the installed one
"$tmp/venv/bin/python" "$src/tests/server/py_client.py" "$server" "$site"
