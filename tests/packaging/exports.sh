#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# libshlo.so must export exactly the functions (and objects) its public
# headers declare with SHLO_API: anything else in its dynamic symbol table is
# a leaked internal name that can clash with, or be interposed by, a name in
# the program that links it.
# usage: exports.sh LIBSHLO_SO HEADER_DIR...
set -euo pipefail
lib=$1
shift
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Public names: in each header, comments and preprocessor lines removed, the
# identifier that each SHLO_API declaration declares (before its `(`, `[`,
# `=` or `;`).
headers=()
for d in "$@"; do
  for h in "$d"/*.h; do [ -e "$h" ] && headers+=("$h"); done
done
if [ ${#headers[@]} = 0 ]; then
  echo "FAIL: no public headers in $*"
  exit 1
fi
perl -0777 -ne '
  s{/\*.*?\*/}{ }gs; s{//[^\n]*}{}g; s{^[ \t]*#[^\n]*(\\\n[^\n]*)*}{}mg;
  while (/\bSHLO_API\b([^;({\[=]*)/g) {
    my @ids = ($1 =~ /([A-Za-z_]\w*)/g);
    print "$ids[-1]\n" if @ids;
  }' "${headers[@]}" | sort -u >"$tmp/public"

nm -D --defined-only "$lib" | awk 'NF >= 3 { sub(/@.*/, "", $3); print $3 }' |
  sort -u >"$tmp/exported"

status=0
if [ ! -s "$tmp/public" ]; then
  echo "FAIL: found no SHLO_API declaration in ${headers[*]}"
  status=1
fi
if [ ! -s "$tmp/exported" ]; then
  echo "FAIL: nm -D --defined-only $lib lists no symbol"
  status=1
fi
leaked=$(comm -13 "$tmp/public" "$tmp/exported")
missing=$(comm -23 "$tmp/public" "$tmp/exported")
if [ -n "$leaked" ]; then
  echo "FAIL: $lib exports names no public header declares with SHLO_API:"
  echo "$leaked" | sed 's/^/  /'
  status=1
fi
if [ -n "$missing" ]; then
  echo "FAIL: public headers declare these with SHLO_API but $lib does not export them:"
  echo "$missing" | sed 's/^/  /'
  status=1
fi
echo "$(wc -l <"$tmp/exported") symbols exported, $(wc -l <"$tmp/public") declared public in ${#headers[@]} headers"
exit $status
