#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The README's two commands on a machine that has nothing installed: a
# Debian 12 minbase root made with debootstrap (deploy/mkroot.sh), the
# project copied in with the shared folder beside it (../shared, as CI lays
# it out), and inside it, as root, exactly
#     bash deploy/test.sh     -- must exit 0
#     bash deploy/run.sh      -- must bring shlo-server up on 127.0.0.1:8080
# The second is checked from outside the chroot with curl (a chroot shares
# the machine's network), then stopped with SIGTERM, which must exit 0.
# Not part of `deploy/test.sh`: it installs every package and runs the whole
# build and suite inside the root (many minutes).
#
# usage (root, Debian 12): bash deploy/test-fresh.sh
#   SHLO_FRESH_WORK=DIR  scratch space (default /var/tmp/shlo-fresh-test)
#   SHLO_ROOT_CACHE=FILE reuse a debootstrapped base (see deploy/mkroot.sh)
#   SHLO_SHARED=DIR      the shared folder (default: ../shared of the repo)
#   SHLO_FRESH_ONLY=run  only run.sh, first, on the fresh root: how long a
#                        new user waits for a server (installs, build, serve)
#
# Port 8080 must be free: run.sh serves there, as the README says.
set -euo pipefail
cd "$(dirname "$0")/.."
src=$PWD
shared=${SHLO_SHARED:-$src/../shared}
work=${SHLO_FRESH_WORK:-/var/tmp/shlo-fresh-test}
root=$work/root
t_start=$(date +%s)
step() { echo "== [$(( $(date +%s) - t_start )) s] $*"; }
fail() { echo "FAIL: $*"; exit 1; }

[ "$(id -u)" = 0 ] || fail "run as root"
command -v curl >/dev/null || fail "curl is needed outside the root"
if (exec 3<>/dev/tcp/127.0.0.1/8080) 2>/dev/null; then
  fail "something listens on 127.0.0.1:8080 already; run.sh needs that port"
fi

mounted=()
server_pid=
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
    umount -l "${mounted[$i]}" 2>/dev/null || true
  done
}
trap cleanup EXIT

step "a Debian 12 minbase root"
mkdir -p "$work"
bash deploy/mkroot.sh "$root"
echo "packages in the root: $(chroot "$root" dpkg-query -W | wc -l) (no compiler:" \
     "$(chroot "$root" sh -c 'command -v cc gcc cmake || echo none'))"

step "the project (git's files, as a clean clone has them) and ../shared"
mkdir -p "$root/work/shlo"
git ls-files -co --exclude-standard -z |
  tar -C "$src" --null -T - -cf - | tar -C "$root/work/shlo" -xf -
[ -d "$shared" ] || fail "no shared folder at $shared (set SHLO_SHARED)"
cp -a "$(realpath "$shared")" "$root/work/shared"
du -sh "$root/work/shlo" "$root/work/shared" | sed 's/^/  /'

# What a machine has that a bare root lacks: /proc, /sys, /dev, DNS.
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
# debootstrap writes no /etc/hosts (Debian's installer, cloud images and
# Docker do), and without it "localhost" does not resolve: chromedriver's
# client (the console test) connects to localhost:PORT.
[ -e "$root/etc/hosts" ] ||
  printf '127.0.0.1\tlocalhost\n::1\t\tlocalhost ip6-localhost ip6-loopback\n' \
    >"$root/etc/hosts"
# A chroot is not a booted machine: packages must not start services in it
# (nginx would listen on the host's port 80).  Standard for chroots.
printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
chmod +x "$root/usr/sbin/policy-rc.d"

# A login-like clean environment; exec, so that in a background subshell
# $! ends up the pid of what the command execs (run.sh: shlo-server).
in_root() { exec chroot "$root" /usr/bin/env -i HOME=/root TERM=dumb \
              PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
              /bin/bash -c "$1"; }

if [ "${SHLO_FRESH_ONLY:-}" = run ]; then
  echo "SHLO_FRESH_ONLY=run: deploy/test.sh not run"
else
step "inside: cd /work/shlo && bash deploy/test.sh"
t0=$(date +%s)
set +e
(in_root 'cd /work/shlo && bash deploy/test.sh') >"$work/test.log" 2>&1
rc=$?
set -e
test_s=$(( $(date +%s) - t0 ))
grep -E '^installing:|tests passed|tests failed|Total Test time|\*\*\*|Failed|SKIPPED|Not Run' \
  "$work/test.log" | tail -30
[ $rc = 0 ] || { tail -60 "$work/test.log"; fail "deploy/test.sh exited $rc (log: $work/test.log)"; }
echo "deploy/test.sh passed in ${test_s} s"
fi

step "inside: cd /work/shlo && bash deploy/run.sh"
t0=$(date +%s)
(in_root 'cd /work/shlo && exec bash deploy/run.sh') >"$work/run.log" 2>&1 &
server_pid=$!
for _ in $(seq 1200); do
  curl -fsS -o /dev/null http://127.0.0.1:8080/readyz 2>/dev/null && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$work/run.log"; fail "run.sh ended"; }
  sleep 0.5
done
curl -fsS http://127.0.0.1:8080/readyz || { tail -30 "$work/run.log"; fail "no server on :8080"; }
run_s=$(( $(date +%s) - t0 ))
echo "  up after ${run_s} s; shlo run printed:"
grep -A3 '^tensor' "$work/run.log" | head -4 | sed 's/^/    /'
prog=$(sed -n '/^func.func/,/^}/p' "$src/README.md" | head -6)
echo "  outside the root: curl --data-binary <README's program> localhost:8080/execute"
out=$(curl -sS --data-binary "$prog" http://127.0.0.1:8080/execute)
echo "    $out"
grep -q '"data":\[42.0,3.0\]' <<<"$out" || fail "wrong answer from the server"

step "SIGTERM to the server run.sh exec'd"
kill -TERM "$server_pid"
wait "$server_pid" && rc=0 || rc=$?
server_pid=
tail -2 "$work/run.log" | sed 's/^/  /'
[ $rc = 0 ] || fail "shlo-server exited $rc after SIGTERM"

echo "PASS: fresh Debian 12 root: test.sh ${test_s:-not run} s, run.sh serving after ${run_s} s; whole run $(( $(date +%s) - t_start )) s"
