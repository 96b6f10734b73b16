#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The installed headers as C99 and C++17 programs see them.  Installs this
# build tree into a temporary prefix, then
#  - compiles each installed header alone, as C99 (gcc -std=c99 -pedantic)
#    and as C++17, warnings as errors: every header is self-contained and
#    parses in both languages;
#  - builds consumer_c99.c (-std=c99 -pedantic) and consumer_cxx.cc
#    (-std=c++17) with only `pkg-config --cflags --libs libshlo`, and runs
#    them under valgrind (when there is one): no error, no leak of any kind.
# usage: languages.sh CMAKE BUILD_DIR SOURCE_DIR CC CXX [VALGRIND]
# Exits 77 (skipped) without a C++ compiler.
set -euo pipefail
cmake=$1 build=$2 src=$3 cc=$4 cxx=$5 valgrind=${6:-}
[ -n "$cxx" ] && command -v "$cxx" >/dev/null ||
  { echo "no C++ compiler: skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
"$cmake" --install "$build" --prefix "$prefix" >"$tmp/install.log" ||
  { cat "$tmp/install.log"; exit 1; }
pc=$(find "$prefix" -name libshlo.pc)
[ -n "$pc" ] || { echo "FAIL: no libshlo.pc installed"; exit 1; }
libdir=$(dirname "$(dirname "$pc")")
export PKG_CONFIG_PATH=$(dirname "$pc")
cflags=$(pkg-config --cflags libshlo)
libs=$(pkg-config --libs libshlo)
warn="-Wall -Wextra -Werror -pedantic"

status=0
n=0
cd "$tmp"
for h in "$prefix"/include/shlo/*.h; do
  name=shlo/$(basename "$h")
  # The declaration after the #include keeps a header of macros alone
  # (export.h) from being an empty translation unit.
  printf '#include <%s>\ntypedef int header_check;\n' "$name" >one.c
  cp one.c one.cc
  "$cc" -std=c99 $warn $cflags -c one.c -o one_c.o 2>err.txt ||
    { echo "FAIL: $name alone as C99:"; cat err.txt; status=1; }
  "$cxx" -std=c++17 $warn $cflags -c one.cc -o one_cc.o 2>err.txt ||
    { echo "FAIL: $name alone as C++17:"; cat err.txt; status=1; }
  n=$((n + 1))
done
echo "$n installed headers compiled alone as C99 and as C++17"

"$cc" -std=c99 $warn "$src/consumer_c99.c" -o consumer_c99 $cflags $libs ||
  { echo "FAIL: consumer_c99 does not build"; exit 1; }
"$cxx" -std=c++17 $warn "$src/consumer_cxx.cc" -o consumer_cxx $cflags $libs ||
  { echo "FAIL: consumer_cxx does not build"; exit 1; }

run=()
if [ -n "$valgrind" ]; then
  # Every leak kind is an error, reachable blocks included: the program
  # frees everything it was given and the library keeps nothing.
  run=("$valgrind" --error-exitcode=99 --leak-check=full
       --show-leak-kinds=all --errors-for-leak-kinds=all
       --suppressions="$src/openblas.supp")
fi
for p in consumer_c99 consumer_cxx; do
  LD_LIBRARY_PATH=$libdir "${run[@]}" ./$p >out.txt 2>&1 ||
    { echo "FAIL: $p:"; cat out.txt; status=1; continue; }
  grep -h "ok$\|ERROR SUMMARY\|All heap blocks\|in use at exit" out.txt || true
done
[ $status = 0 ] &&
  echo "languages: headers and both consumers fine${valgrind:+ under valgrind}"
exit $status
