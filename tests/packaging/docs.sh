#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The C API reference builds with no Doxygen warning (docs/Doxyfile fails
# on any), from every public header through docs/doxygen_filter.py, and
# carries the headers' comments: a declaration's text from tensor.h and
# from client.h must be in the pages.  Exits 77 (skipped) without doxygen.
# usage: docs.sh SOURCE_DIR OUT_DIR VERSION
set -euo pipefail
src=$1 out=$2 version=$3
command -v doxygen >/dev/null ||
  { echo "doxygen not found (Debian: apt-get install doxygen): skipped"; exit 77; }
command -v python3 >/dev/null ||
  { echo "python3 not found (the header filter is Python): skipped"; exit 77; }
cd "$src"
# Doxygen does not fail when its filter does: check the filter first.
for h in engine/include/shlo/*.h engine/include/shlo/*.h.in client/include/shlo/*.h; do
  python3 docs/doxygen_filter.py "$h" >/dev/null || { echo "FAIL: the filter failed on $h"; exit 1; }
done
rm -rf "$out"
mkdir -p "$out"
if ! SHLO_DOXYGEN_OUT=$out SHLO_VERSION=$version doxygen docs/Doxyfile >"$out/doxygen.log" 2>&1; then
  echo "FAIL: doxygen warned or failed:"; cat "$out/doxygen.log"; exit 1
fi
if [ -s "$out/doxygen.log" ]; then
  echo "FAIL: doxygen printed:"; cat "$out/doxygen.log"; exit 1
fi
status=0
want() {  # PAGE TEXT: the page has the header comment's text
  grep -qF "$2" "$out/html/$1" || { echo "FAIL: $1 lacks \"$2\""; status=1; }
}
want tensor_8h.html "New zero-filled tensor of the given element type"
want client_8h.html "Connect (the binary protocol says HELLO here"
want index.html "libshlo-client"
n=$(ls "$out/html" | grep -c '_8h\.html$' || true)
[ $status = 0 ] && echo "docs: the C API reference built without a warning: $n header pages in $out/html"
exit $status
