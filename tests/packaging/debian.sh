#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The Debian packages, end to end: builds them from a copy of the tree with
# `dpkg-buildpackage -b -us -uc` (debian/), fails on a lintian error,
# installs them into a fresh Debian 12 root (deploy/mkroot.sh) with
# `apt-get install ./*.deb`, and there
#   - runs `shlo run` on examples/hello.mlir;
#   - starts shlo-server as the shlo user with the packaged
#     /etc/shlo/shlo.conf (its port and binary port given as flags), and a
#     second one with TLS; registers a module and finds its record in
#     /var/lib/shlo, owned by shlo;
#   - builds the engine and client consumers (consumer.c,
#     client_consumer.c) against the -dev packages with pkg-config and
#     with find_package(shlo), shared and static, and runs them;
#   - runs the installed python3-shlo against the servers over HTTP, HTTPS
#     and the binary protocol.
# It runs where its tools are (root, dpkg-dev, debhelper, debootstrap,
# the Debian archive) and exits 77 (skipped, with the reason) where they
# are not; SHLO_TEST_PACKAGES=0 skips it (minutes: a package build, a
# root, packages fetched into it).
# usage: debian.sh SOURCE_DIR
#   SHLO_ROOT_CACHE=FILE  the debootstrapped base, kept between runs
#                         (deploy/mkroot.sh; default
#                         /var/cache/shlo-test/bookworm-minbase.tar, empty:
#                         none)
set -euo pipefail
src=$(realpath "$1")
skip() { echo "skipped: $*"; exit 77; }
[ "${SHLO_TEST_PACKAGES:-1}" != 0 ] || skip "SHLO_TEST_PACKAGES=0"
[ "$(id -u)" = 0 ] || skip "needs root (chroot, mounts)"
for t in dpkg-buildpackage dh debootstrap chroot curl; do
  command -v $t >/dev/null || skip "no $t (Debian: dpkg-dev, debhelper, debootstrap)"
done

work=$(mktemp -d /var/tmp/shlo-debtest.XXXXXX)
root=$work/root
mounted=()
cleanup() {
  [ -n "${pids:-}" ] && kill $pids 2>/dev/null || true
  sleep 0.5
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
    umount -l "${mounted[$i]}" 2>/dev/null || true
  done
  rm -rf "$work"
}
trap cleanup EXIT
why=$(bash "$src/deploy/mkroot.sh" --reachable) || skip "$why"
export SHLO_ROOT_CACHE=${SHLO_ROOT_CACHE-/var/cache/shlo-test/bookworm-minbase.tar}
t0=$(date +%s)
step() { echo "== [$(( $(date +%s) - t0 )) s] $*"; }
fail() { echo "FAIL: $*"; exit 1; }

step "dpkg-buildpackage -b -us -uc in a copy of the tree"
mkdir -p "$work/build/shlo"
if git -C "$src" rev-parse 2>/dev/null; then
  (cd "$src" && git ls-files -co --exclude-standard -z) |
    tar -C "$src" --null -T - -cf - | tar -C "$work/build/shlo" -xf -
else
  tar -C "$src" --exclude='./build*' --exclude=./.git -cf - . |
    tar -C "$work/build/shlo" -xf -
fi
(cd "$work/build/shlo" && dpkg-buildpackage -b -us -uc -j"$(nproc)") \
  >"$work/build.log" 2>&1 || { tail -40 "$work/build.log"; fail "dpkg-buildpackage"; }
debs=$(cd "$work/build" && ls *.deb | grep -v dbgsym)
echo "$debs" | sed 's/^/  /'
for p in shlo shlo-server libshlo0 libshlo-dev libshlo-client0 libshlo-client-dev python3-shlo; do
  grep -q "^${p}_" <<<"$debs" || fail "no package $p"
done
if command -v lintian >/dev/null; then
  lintian "$work/build"/*.changes >"$work/lintian.log" 2>&1 || true
  if grep -q '^E: ' "$work/lintian.log"; then
    grep '^E: ' "$work/lintian.log"; fail "lintian reports errors"
  fi
  echo "  lintian: no error ($(grep -c '^W: ' "$work/lintian.log" || true) warnings)"
fi

step "a fresh Debian 12 root with the packages: apt-get install ./*.deb"
bash "$src/deploy/mkroot.sh" "$root" >/dev/null
for m in proc sys dev dev/pts; do
  mkdir -p "$root/$m"
  case $m in
    proc) mount -t proc proc "$root/proc" ;;
    sys) mount --rbind /sys "$root/sys" ;;
    *) mount --bind "/$m" "$root/$m" ;;
  esac
  mounted+=("$root/$m")
done
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"  # no service starts
chmod +x "$root/usr/sbin/policy-rc.d"
mkdir -p "$root/t"
cp "$work/build"/*.deb "$root/t/"
rm -f "$root/t/"*dbgsym*
cp "$src/examples/hello.mlir" "$src/tests/packaging/consumer.c" \
   "$src/tests/packaging/client_consumer.c" "$root/t/"
cp -r "$src/tests/packaging/find_package" "$root/t/"
in_root() {
  chroot "$root" /usr/bin/env -i HOME=/root TERM=dumb DEBIAN_FRONTEND=noninteractive \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin /bin/bash -c "$1"
}
in_root 'apt-get update -qq && cd /t && apt-get install -y -qq --no-install-recommends ./*.deb gcc libc6-dev cmake make pkg-config openssl curl libgfortran-12-dev' \
  >"$work/apt.log" 2>&1 || { tail -30 "$work/apt.log"; fail "apt-get install ./*.deb"; }
in_root 'dpkg-query -W shlo shlo-server libshlo0 libshlo-dev libshlo-client0 libshlo-client-dev python3-shlo' | sed 's/^/  /'
in_root 'getent passwd shlo >/dev/null' || fail "no shlo user"
in_root '[ "$(stat -c %U /var/lib/shlo)" = shlo ]' || fail "/var/lib/shlo is not shlo's"

step "shlo run"
out=$(in_root 'shlo run /t/hello.mlir --args "[dense<[1.0, 2.0, 3.0]> : tensor<3xf32>, dense<[0.5, 0.25, -1.0]> : tensor<3xf32>]"')
grep -qF '[2.25, 5.0625, 4.0]' <<<"$out" || fail "shlo run printed: $out"
echo "  ok"

step "shlo-server as shlo, with /etc/shlo/shlo.conf; and one with TLS"
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
bport=$(free_port)
in_root 'openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 -keyout /t/key.pem -out /t/cert.pem 2>/dev/null && chown shlo /t/key.pem'
# start_server LOG ARGS...: one server as shlo (its pid kept for cleanup);
# port_of LOG: its HTTP port once it serves.  The server's stdout goes to
# /dev/null: a command substitution would wait for it to close.
start_server() {
  local log=$1; shift
  chroot "$root" setpriv --reuid=shlo --regid=shlo --init-groups \
    /usr/bin/shlo-server --config /etc/shlo/shlo.conf --port 0 --log stderr "$@" \
    >/dev/null 2>"$work/$log" &
  pids="${pids:-} $!"
}
port_of() {
  local p
  for _ in $(seq 300); do
    p=$(sed -n 's|.*listening on https\?://127.0.0.1:\([0-9]*\)/.*|\1|p' "$work/$1")
    [ -n "$p" ] && { echo "$p"; return 0; }
    sleep 0.1
  done
  cat "$work/$1" >&2; return 1
}
start_server http.log --binary-port "$bport"
start_server https.log --tls-cert /t/cert.pem --tls-key /t/key.pem
hport=$(port_of http.log) || fail "the server did not start"
sport=$(port_of https.log) || fail "the TLS server did not start"
grep -q 'store /var/lib/shlo' "$work/http.log" || fail "the packaged config's store is not /var/lib/shlo"
id=$(in_root "curl -sf --data-binary @/t/hello.mlir http://127.0.0.1:$hport/v1/modules" | sed 's/.*"id":"sha256:\([0-9a-f]*\)".*/\1/')
in_root "[ \"\$(stat -c %U /var/lib/shlo/$id.module)\" = shlo ]" ||
  fail "no record of the module in /var/lib/shlo owned by shlo"
echo "  http :$hport, binary :$bport, https :$sport; module $id stored by shlo"

step "C consumers against the -dev packages: pkg-config and find_package, shared and static"
in_root "set -e; cd /t
  v=\$(pkg-config --modversion libshlo)
  for lib in libshlo libshlo-client; do
    prog=consumer; args=\$v
    [ \$lib = libshlo-client ] && prog=client_consumer args='http://127.0.0.1:$hport shlo://127.0.0.1:$bport'
    cc -std=c11 -Wall -Werror \$prog.c -o pc_shared_\$prog \$(pkg-config --cflags --libs \$lib)
    libdir=\$(pkg-config --variable=libdir libshlo)
    a=\$libdir/libshlo.a; [ \$lib = libshlo-client ] && a=\"\$libdir/libshlo-client.a \$a\"
    cc -std=c11 -Wall -Werror \$prog.c -o pc_static_\$prog \$(pkg-config --cflags \$lib) \$a \
      \$(pkg-config --static --libs \$lib | sed -E 's/(^| )-lshlo(-client)?( |\$)/ /g')
    ./pc_shared_\$prog \$args >/dev/null
    echo \"  ok   pkg-config shared \$lib\"
    if ldd ./pc_static_\$prog | grep -q libshlo; then
      echo \"pc_static_\$prog loads a shared libshlo\"; exit 1
    fi
    ./pc_static_\$prog \$args >/dev/null
    echo \"  ok   pkg-config static \$lib\"
  done
  for s in OFF ON; do
    cmake -S find_package -B fp_\$s -DSHLO_USE_STATIC_LIBS=\$s -DCONSUMER_DIR=/t >/dev/null
    cmake --build fp_\$s >/dev/null
    if [ \$s = ON ] && ldd fp_\$s/client_consumer | grep -q libshlo; then
      echo \"fp_ON/client_consumer loads a shared libshlo\"; exit 1
    fi
    fp_\$s/consumer \$v >/dev/null
    echo \"  ok   find_package shlo::shlo (static \$s)\"
    fp_\$s/client_consumer http://127.0.0.1:$hport shlo://127.0.0.1:$bport >/dev/null
    echo \"  ok   find_package shlo::client (static \$s)\"
  done" || fail "a C consumer did not build or run"

step "python3-shlo over HTTP, HTTPS and the binary protocol"
in_root "python3 - <<'PY'
import numpy as np, shlo_client
assert shlo_client.__file__.startswith('/usr/lib/python3/dist-packages/'), shlo_client.__file__
prog = open('/t/hello.mlir').read()
for url, kw in (('http://127.0.0.1:$hport', {}),
                ('https://127.0.0.1:$sport', {'ca_file': '/t/cert.pem'}),
                ('shlo://127.0.0.1:$bport', {})):
    with shlo_client.Client(url, **kw) as c:
        out = c.execute(prog, np.float32([1, 2, 3]), np.float32([4, 5, 6]))
        assert out[0].tolist() == [25.0, 49.0, 81.0], (url, out)
        print('  ok   ' + url)
PY" || fail "python3-shlo"

echo "PASS: the Debian packages built, installed in a fresh Debian 12 root and worked there ($(( $(date +%s) - t0 )) s)"
