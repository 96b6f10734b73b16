#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs this build tree into a temporary prefix (`cmake --install
# --prefix`), checks the files an installed shlo must have, then builds a
# program outside the project against the installed libshlo with pkg-config,
# linked to libshlo.so and to libshlo.a (`pkg-config --static`), and runs both.
# usage: install.sh CMAKE BUILD_DIR CONSUMER_C CC VERSION
set -euo pipefail
cmake=$1 build=$2 consumer=$3 cc=$4 version=$5
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix

"$cmake" --install "$build" --prefix "$prefix" >"$tmp/install.log" ||
  { cat "$tmp/install.log"; exit 1; }
echo "installed into $prefix:"
(cd "$prefix" && find . \( -type f -o -type l \) | sort | grep -v '^./include/shlo/.*\.h$')

status=0
need() { [ -e "$prefix/$1" ] || { echo "FAIL: missing $1"; status=1; }; }
pc=$(find "$prefix" -name libshlo.pc)
[ -n "$pc" ] || { echo "FAIL: no libshlo.pc installed"; exit 1; }
libdir=$(dirname "$(dirname "$pc")")
rel=${libdir#"$prefix"/}
for f in include/shlo/engine.h include/shlo/export.h include/shlo/version.h \
         "$rel/libshlo.a" "$rel/libshlo.so"; do
  need "$f"
done
# The SONAME's file is there, and the .so is a link to it.
soname=$(objdump -p "$libdir/libshlo.so" | awk '$1 == "SONAME" { print $2 }')
[ -n "$soname" ] && need "$rel/$soname" || { echo "FAIL: libshlo.so has no SONAME"; status=1; }
# Programs this build made are installed too.
[ -x "$build/client/shlo" ] && need bin/shlo
[ -x "$build/server/shlo-server" ] && need bin/shlo-server
[ -e "$build/pjrt/libshlo_pjrt.so" ] && need "$rel/shlo/libshlo_pjrt.so"

export PKG_CONFIG_PATH=$(dirname "$pc")${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
echo "pkg-config --cflags --libs libshlo: $(pkg-config --cflags --libs libshlo)"
echo "pkg-config --static --libs libshlo: $(pkg-config --static --libs libshlo)"
[ "$(pkg-config --modversion libshlo)" = "$version" ] ||
  { echo "FAIL: libshlo.pc says version $(pkg-config --modversion libshlo), not $version"; status=1; }

# Against libshlo.so: only the installed one can be found at run time.
cd "$tmp"
"$cc" -std=c11 -Wall -Werror "$consumer" -o consumer_shared \
  $(pkg-config --cflags --libs libshlo)
# ldd's output is taken whole first: under pipefail, `ldd | grep -q` fails
# whenever grep's early exit makes ldd die of SIGPIPE.
loads=$(LD_LIBRARY_PATH=$libdir ldd ./consumer_shared)
grep -q "=> $libdir/$soname" <<<"$loads" ||
  { echo "FAIL: consumer_shared does not load $libdir/$soname:"; echo "$loads"; status=1; }
LD_LIBRARY_PATH=$libdir ./consumer_shared "$version" || { echo "FAIL: consumer_shared"; status=1; }

# Against libshlo.a, with the private dependencies the .pc names.
libs=$(pkg-config --static --libs libshlo | sed 's/-lshlo\( \|$\)/ /')
"$cc" -std=c11 -Wall -Werror "$consumer" -o consumer_static \
  $(pkg-config --cflags libshlo) "$libdir/libshlo.a" $libs
if grep -q libshlo <<<"$(ldd ./consumer_static)"; then
  echo "FAIL: consumer_static needs a shared libshlo"; status=1
fi
./consumer_static "$version" || { echo "FAIL: consumer_static"; status=1; }

[ $status = 0 ] && echo "install: headers, libraries, libshlo.pc and programs in place; both consumers ran"
exit $status
