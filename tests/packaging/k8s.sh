#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# deploy/k8s/shlo.yaml as Kubernetes would run it, on this machine with
# `podman kube play`: the Secret (tokens), the PersistentVolumeClaim (a
# podman volume for --store) and the Deployment's pod, from the image
# deploy/Dockerfile builds (its debian:12 base made with debootstrap, as
# deploy/test-container.sh does).  Then, through the pod's address: /readyz,
# /execute without the token (401) and with it (the answer), a module
# registered and found in the store volume.  `podman kube down` at the end.
# Debian 12's podman (4.3) publishes the containerPort on the host (so
# 127.0.0.1:8080 must be free: else skipped) and mounts a Secret's `data`
# still base64-encoded: the test decodes the mounted file in place, as any
# Kubernetes does, and lets the pod restart on it.
#   SHLO_K8S_WORK=DIR  keep podman's storage there (the base image and the
#                      build's layers) for the next run
# It runs where its tools are (root, podman, runc, catatonit,
# debootstrap) and exits 77 (skipped, with the reason) where they are
# not; SHLO_TEST_PACKAGES=0 skips it (minutes: an image build).
#   SHLO_ROOT_CACHE=FILE  the debootstrapped base image's root, kept
#                         between runs (as debian.sh)
# usage: k8s.sh SOURCE_DIR
set -euo pipefail
src=$(realpath "$1")
skip() { echo "skipped: $*"; exit 77; }
[ "${SHLO_TEST_PACKAGES:-1}" != 0 ] || skip "SHLO_TEST_PACKAGES=0"
[ "$(id -u)" = 0 ] || skip "needs root (podman's bridge network)"
for t in podman runc catatonit debootstrap curl; do
  command -v $t >/dev/null || skip "no $t (Debian: apt-get install $t)"
done

if (exec 3<>/dev/tcp/127.0.0.1/8080) 2>/dev/null; then
  skip "127.0.0.1:8080 is taken (podman 4.3 publishes the pod's port 8080 there)"
fi
keep=${SHLO_K8S_WORK:-}
work=${keep:-$(mktemp -d /var/tmp/shlo-k8s.XXXXXX)}
mkdir -p "$work"
manifest=$src/deploy/k8s/shlo.yaml
# Private storage, as test-container.sh: nothing of the machine's podman
# is touched.
# runc, as test-container.sh: crun refuses this machine's hybrid cgroups.
cat >"$work/containers.conf" <<'CONF'
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
CONF
driver=overlay
grep -qw overlay /proc/filesystems || driver=vfs
printf '[storage]\ndriver = "%s"\ngraphroot = "%s/storage"\nrunroot = "%s/run"\n' \
  "$driver" "$work" "$work" >"$work/storage.conf"
export CONTAINERS_CONF=$work/containers.conf
export CONTAINERS_STORAGE_CONF=$work/storage.conf
cleanup() {
  podman kube down "$manifest" >/dev/null 2>&1 || true
  podman volume rm -f shlo-store >/dev/null 2>&1 || true
  podman secret rm shlo-tokens >/dev/null 2>&1 || true
  if [ -z "$keep" ]; then
    podman rmi -a -f >/dev/null 2>&1 || true
    rm -rf "$work" 2>/dev/null || true
  fi
}
trap cleanup EXIT
why=$(bash "$src/deploy/mkroot.sh" --reachable) || skip "$why"
export SHLO_ROOT_CACHE=${SHLO_ROOT_CACHE-/var/cache/shlo-test/bookworm-minbase.tar}
t0=$(date +%s)
step() { echo "== [$(( $(date +%s) - t0 )) s] $*"; }
fail() { echo "FAIL: $*"; podman ps -a 2>/dev/null | sed 's/^/  /'; exit 1; }

step "image localhost/shlo:latest from deploy/Dockerfile"
if ! podman image exists docker.io/library/debian:12; then
  bash "$src/deploy/mkroot.sh" "$work/rootfs" >/dev/null
  tar -C "$work/rootfs" -c . | podman import -q - docker.io/library/debian:12 >/dev/null
  rm -rf "$work/rootfs"
fi
(cd "$src" && podman build --pull=never --format docker --network host \
   -f deploy/Dockerfile -t localhost/shlo:latest .) >"$work/build.log" 2>&1 ||
  { tail -30 "$work/build.log"; fail "the image did not build"; }

step "podman kube play deploy/k8s/shlo.yaml"
podman kube down "$manifest" >/dev/null 2>&1 || true
podman volume rm -f shlo-store shlo-tokens >/dev/null 2>&1 || true
podman secret rm shlo-tokens >/dev/null 2>&1 || true
podman kube play "$manifest" >"$work/play.log" 2>&1 ||
  { cat "$work/play.log"; fail "podman kube play"; }
grep -A1 -E '^(Pod|Volumes):' "$work/play.log" | sed 's/^/  /'
# The Secret's tokens as Kubernetes mounts them: decoded.
b64=$(sed -n 's/^  shlo_tokens: \([A-Za-z0-9+\/=]*\)$/\1/p' "$manifest")
mnt=$(podman volume inspect shlo-tokens --format '{{.Mountpoint}}' 2>/dev/null || true)
if [ -n "$mnt" ] && [ "$(cat "$mnt/shlo_tokens" 2>/dev/null)" = "$b64" ]; then
  base64 -d <<<"$b64" >"$mnt/shlo_tokens"
  echo "  (podman mounted the Secret's data base64-encoded: decoded in place)"
fi
ctr=$(podman ps -a --format '{{.Names}}' | grep -- '-shlo-server$' | head -1 || true)
[ -n "$ctr" ] || fail "no shlo-server container"
url=http://127.0.0.1:8080
for _ in $(seq 300); do
  curl -fsS -o /dev/null "$url/readyz" 2>/dev/null && break
  sleep 0.2
done
curl -fsS "$url/readyz" >/dev/null || { podman logs "$ctr" | tail -20; fail "no /readyz at $url"; }
echo "  the pod's container $ctr serves at $url (the pod's published port)"

step "/execute through the pod"
token=$(base64 -d <<<"$b64" | awk 'NR == 1 { print $2 }')  # the Secret's first token
prog='func.func @main() -> tensor<2xf32> {
  %0 = stablehlo.constant dense<[20.0, 1.0]> : tensor<2xf32>
  %1 = stablehlo.constant dense<[22.0, 2.0]> : tensor<2xf32>
  %2 = stablehlo.add %0, %1 : tensor<2xf32>
  return %2 : tensor<2xf32>
}'
st=$(curl -s -o /dev/null -w '%{http_code}' --data-binary "$prog" "$url/execute")
[ "$st" = 401 ] || fail "without the Secret's token: $st, not 401"
out=$(curl -sS -H "Authorization: Bearer $token" --data-binary "$prog" "$url/execute")
grep -q '"data":\[42.0,3.0\]' <<<"$out" || fail "/execute answered: $out"
echo "  401 without the token; with it: $out"
id=$(curl -sS -H "Authorization: Bearer $token" --data-binary "$prog" "$url/v1/modules" |
     sed -n 's/.*"id":"sha256:\([0-9a-f]*\)".*/\1/p')
podman exec "$ctr" test -s "/var/lib/shlo/$id.module" ||
  fail "the module is not in the store volume"
echo "  module $id kept in the PersistentVolumeClaim's volume"
echo "PASS: deploy/k8s/shlo.yaml runs under podman kube play; /execute answers ($(( $(date +%s) - t0 )) s)"
