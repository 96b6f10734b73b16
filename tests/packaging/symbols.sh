#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Every library `cmake --install` puts in a prefix defines only shlo_
# (public) and shlo__ (internal) global names: a static archive hides
# nothing, so any other global it defines (bc_free, client_call, ...) is a
# name a program linking it may not use.  Then a program that defines the
# names the archives once leaked (static_clash.c) links statically against
# the installed libshlo.a and libshlo-client.a -- as programs link, and with
# every archive member forced in -- and runs.  Names the archives only use
# (libc's, OpenBLAS's) are not theirs to define and are not checked.
# usage: symbols.sh CMAKE BUILD_DIR STATIC_CLASH_C CC
set -euo pipefail
cmake=$1 build=$2 clash=$3 cc=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix

"$cmake" --install "$build" --prefix "$prefix" >"$tmp/install.log" ||
  { cat "$tmp/install.log"; exit 1; }

status=0
# Each library file (links to them are the same file).
mapfile -t libs < <(find "$prefix" -type f \( -name '*.a' -o -name '*.so' \
                    -o -name '*.so.*' \) | sort)
want=(libshlo.a libshlo.so)
[ -e "$build/client/libshlo-client.a" ] && want+=(libshlo-client.a)
for w in "${want[@]}"; do
  found=0
  for l in "${libs[@]}"; do
    case $(basename "$l") in "$w" | "$w".*) found=1 ;; esac
  done
  [ $found = 1 ] || { echo "FAIL: $w is not installed"; status=1; }
done

# The names a library defines: nm -g --defined-only, and for a shared
# library its dynamic symbol table too (what other objects bind to), the
# symbol versions cut off.
defined() {
  { nm -g --defined-only "$1"
    case $1 in *.so | *.so.*) nm -D --defined-only "$1" ;; esac
  } | awk 'NF >= 3 { sub(/@.*/, "", $3); print $3 }' | sort -u
}
for l in "${libs[@]}"; do
  rel=${l#"$prefix"/}
  defined "$l" >"$tmp/names"
  n=$(wc -l <"$tmp/names")
  if [ "$n" = 0 ]; then
    echo "FAIL: nm lists no defined global in $rel"
    status=1
    continue
  fi
  bad=$(grep -v '^shlo_' "$tmp/names" || true)
  # The PJRT plugin's one export is the name the PJRT C API gives it.
  if [ "$(basename "$l")" = libshlo_pjrt.so ]; then
    bad=$(grep -vx 'GetPjrtApi' <<<"$bad" || true)
  fi
  if [ -n "$bad" ]; then
    echo "FAIL: $rel defines $(wc -l <<<"$bad") names without the shlo_ prefix:"
    sed 's/^/  /' <<<"$bad"
    status=1
  else
    echo "$rel: $n global names, all shlo_ or shlo__"
  fi
done

# The consumer, built from the installed headers and archives only.
pc=$(find "$prefix" -name libshlo.pc)
[ -n "$pc" ] || { echo "FAIL: no libshlo.pc installed"; exit 1; }
libdir=$(dirname "$(dirname "$pc")")
export PKG_CONFIG_PATH=$(dirname "$pc")${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
cflags=$(pkg-config --cflags libshlo)
deps=$(pkg-config --static --libs libshlo | sed 's/-lshlo\( \|$\)/ /')
archives=("$libdir/libshlo.a")
def=()
if [ -e "$libdir/libshlo-client.a" ]; then
  # The client's archive first: it calls into libshlo.a.
  archives=("$libdir/libshlo-client.a" "${archives[@]}")
  deps="$deps $(pkg-config --libs libcurl libcjson)"
else
  def=(-DSHLO_NO_CLIENT)
fi
cd "$tmp"
build_run() { # NAME LINK-ARGS...
  local name=$1
  shift
  if ! "$cc" -std=c11 -D_DEFAULT_SOURCE -Wall -Werror "${def[@]}" $cflags \
       "$clash" -o "$name" "$@" $deps 2>"$name.log"; then
    echo "FAIL: $name does not link:"
    sed 's/^/  /' "$name.log" | head -40
    status=1
    return
  fi
  if grep -q libshlo <<<"$(ldd "./$name")"; then
    echo "FAIL: $name needs a shared libshlo"
    status=1
  fi
  ./"$name" || { echo "FAIL: $name"; status=1; }
}
build_run clash_static "${archives[@]}"
build_run clash_whole -Wl,--whole-archive "${archives[@]}" -Wl,--no-whole-archive

[ $status = 0 ] && echo "symbols: ${#libs[@]} installed libraries define only shlo_ names; the clashing program linked both ways and ran"
exit $status
