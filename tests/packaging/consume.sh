#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Both installed C libraries as another project uses them.  Installs this
# build tree into a temporary prefix, then builds, four ways each, the
# engine consumer (consumer.c: parse, compile, run) and the client
# consumer (client_consumer.c: execute on a running shlo-server over HTTP
# and the binary protocol):
#   pkg-config, shared:  cc ... $(pkg-config --cflags --libs libshlo-client)
#   pkg-config, static:  the installed .a files + pkg-config --static --libs
#   find_package(shlo), shared and static (SHLO_USE_STATIC_LIBS)
# and runs all eight, each checked to load the installed shared libraries
# or none.  The server is this build's, on a port the kernel picks.
# usage: consume.sh CMAKE GENERATOR BUILD_DIR SOURCE_DIR CC VERSION
set -euo pipefail
cmake=$1 generator=$2 build=$3 src=$4 cc=$5 version=$6
here=$src/tests/packaging
tmp=$(mktemp -d)
server_pid=
cleanup() {
  if [ -n "$server_pid" ]; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
prefix=$tmp/prefix
"$cmake" --install "$build" --prefix "$prefix" >"$tmp/install.log" ||
  { cat "$tmp/install.log"; exit 1; }
for pc in libshlo libshlo-client; do
  [ -n "$(find "$prefix" -name "$pc.pc")" ] || { echo "FAIL: no $pc.pc installed"; exit 1; }
done
pcdir=$(dirname "$(find "$prefix" -name libshlo.pc)")
libdir=$(dirname "$pcdir")
export PKG_CONFIG_PATH=$pcdir
[ "$(pkg-config --modversion libshlo-client)" = "$version" ] ||
  { echo "FAIL: libshlo-client.pc says $(pkg-config --modversion libshlo-client), not $version"; exit 1; }

# The server: HTTP on a port the kernel picks (read from its log), the
# binary protocol on a port picked free here; tried again on other ports
# when a test beside this one took it first.
start_server() {
  local bport try
  for try in 1 2 3 4 5; do
    bport=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    : >"$tmp/server.log"
    "$build/server/shlo-server" --port 0 --binary-port "$bport" --log stderr \
      2>"$tmp/server.log" &
    server_pid=$!
    for _ in $(seq 200); do
      http=$(sed -n 's|.*listening on \(http://[^/]*\)/ .*|\1|p' "$tmp/server.log" || true)
      [ -n "$http" ] && grep -q "binary protocol on" "$tmp/server.log" && break
      kill -0 "$server_pid" 2>/dev/null || break
      sleep 0.1
    done
    if [ -n "$http" ] && kill -0 "$server_pid" 2>/dev/null; then
      shlo_url=shlo://127.0.0.1:$bport
      return 0
    fi
    kill "$server_pid" 2>/dev/null; wait "$server_pid" 2>/dev/null || true
    server_pid=
    grep -q "cannot listen" "$tmp/server.log" || break
  done
  echo "FAIL: shlo-server did not start:"; cat "$tmp/server.log"; exit 1
}
start_server
echo "server: $http and $shlo_url"

status=0
# run NAME KIND PROGRAM ARGS...: KIND shared must load the prefix's
# libraries, static must load none of shlo's.
run() {
  local name=$1 kind=$2 loads
  shift 2
  loads=$(LD_LIBRARY_PATH=$libdir ldd "$1")
  if [ "$kind" = shared ]; then
    grep -q "=> $libdir/libshlo" <<<"$loads" ||
      { echo "FAIL: $name does not load the installed libraries:"; echo "$loads"; status=1; }
  elif grep -q libshlo <<<"$loads"; then
    echo "FAIL: $name (static) loads a shared libshlo"; status=1
  fi
  if LD_LIBRARY_PATH=$libdir "$@" >"$tmp/run.log" 2>&1; then
    echo "ok   $name"
  else
    echo "FAIL: $name:"; cat "$tmp/run.log"; status=1
  fi
}
cd "$tmp"

# pkg-config, shared and static.
for lib in libshlo libshlo-client; do
  prog=consumer args=$version
  [ $lib = libshlo-client ] && prog=client_consumer args="$http $shlo_url"
  "$cc" -std=c11 -Wall -Werror "$here/$prog.c" -o "pc_shared_$prog" \
    $(pkg-config --cflags --libs $lib)
  # Static: the installed archives by path, then what they need.
  archives=$libdir/libshlo.a
  [ $lib = libshlo-client ] && archives="$libdir/libshlo-client.a $archives"
  others=$(pkg-config --static --libs $lib | sed -E 's/(^| )-lshlo(-client)?( |$)/ /g')
  "$cc" -std=c11 -Wall -Werror "$here/$prog.c" -o "pc_static_$prog" \
    $(pkg-config --cflags $lib) $archives $others
  run "pkg-config shared $lib" shared "./pc_shared_$prog" $args
  run "pkg-config static $lib" static "./pc_static_$prog" $args
done

# find_package(shlo), shared and static.
for static in OFF ON; do
  kind=shared
  [ $static = ON ] && kind=static
  if ! "$cmake" -S "$here/find_package" -B "fp_$kind" -G "$generator" \
      -DCMAKE_C_COMPILER="$cc" -DCMAKE_PREFIX_PATH="$prefix" \
      -DSHLO_USE_STATIC_LIBS=$static -DCONSUMER_DIR="$here" \
      >"fp_$kind.log" 2>&1 ||
     ! "$cmake" --build "fp_$kind" >>"fp_$kind.log" 2>&1; then
    echo "FAIL: find_package(shlo) $kind did not build:"; cat "fp_$kind.log"
    status=1
    continue
  fi
  run "find_package $kind shlo::shlo" $kind "fp_$kind/consumer" "$version"
  run "find_package $kind shlo::client" $kind "fp_$kind/client_consumer" "$http" "$shlo_url"
done

[ $status = 0 ] && echo "consume: both libraries built and ran with pkg-config and find_package, shared and static"
exit $status
