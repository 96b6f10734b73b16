#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Build deploy/Dockerfile with Debian's podman and run the image: it must
# become ready (/readyz, and its own HEALTHCHECK), execute a program over
# HTTP with a bearer token and refuse one without, run as a non-root user
# with every library it needs and no compiler, and exit 0 on SIGTERM.
# Not part of `deploy/test.sh` (minutes, and it needs root and the archive).
#
# usage (root, Debian 12): bash deploy/test-container.sh
#   SHLO_CT_WORK=DIR     scratch space (default /var/tmp/shlo-container-test)
#   SHLO_ROOT_CACHE=FILE reuse a debootstrapped base (see deploy/mkroot.sh)
#
# No image registry is reachable here, so the base image `debian:12` is made
# with debootstrap from the archive apt uses and imported into podman.
# Podman reads only the configuration this script writes (CONTAINERS_CONF,
# CONTAINERS_STORAGE_CONF, under the scratch folder), never the system's:
#  - runtime runc: crun refuses a host with cgroups v1 and v2 mixed
#    ("cgroups in hybrid mode not supported");
#  - explicit ulimits: root here may lack CAP_SYS_RESOURCE, and podman's
#    defaults then fail with "setrlimit RLIMIT_NOFILE: Operation not
#    permitted";
#  - host networking for the build and the run, so nothing depends on the
#    machine's bridge and firewall; the server gets a free port by SHLO_PORT.
set -euo pipefail
cd "$(dirname "$0")/.."
src=$PWD
work=${SHLO_CT_WORK:-/var/tmp/shlo-container-test}
image=localhost/shlo:test
name=shlo-ct-$$
t_start=$(date +%s)
step() { echo "== [$(( $(date +%s) - t_start )) s] $*"; }
fail() { echo "FAIL: $*"; exit 1; }

[ "$(id -u)" = 0 ] || fail "run as root"
need=()
for p in podman runc debootstrap curl; do
  command -v "$p" >/dev/null || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  step "installing ${need[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}"
fi

mkdir -p "$work"
cat >"$work/containers.conf" <<'EOF'
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
EOF
# overlay where the kernel allows it (much faster); vfs otherwise.
driver=overlay
grep -qw overlay /proc/filesystems || driver=vfs
cat >"$work/storage.conf" <<EOF
[storage]
driver = "$driver"
graphroot = "$work/storage"
runroot = "$work/run"
EOF
export CONTAINERS_CONF=$work/containers.conf
export CONTAINERS_STORAGE_CONF=$work/storage.conf
# Without systemd as init, podman cannot arm the health check's periodic
# timer and says so on every run; `podman healthcheck run` below runs the
# check itself, so those lines are noise here.
podman() {
  command podman "$@" 2> >(grep -v 'unable to get systemd connection' >&2)
}
podman version --format 'podman {{.Client.Version}}, storage '"$driver"', runtime runc'

cleanup() {
  podman rm -f "$name" >/dev/null 2>&1 || true
}
trap cleanup EXIT

step "base image debian:12 from debootstrap"
if ! podman image exists docker.io/library/debian:12; then
  bash deploy/mkroot.sh "$work/rootfs"
  tar -C "$work/rootfs" -c . | podman import -q - docker.io/library/debian:12
  rm -rf "$work/rootfs"
fi

step "podman build --pull=never --format docker -f deploy/Dockerfile"
t0=$(date +%s)
podman build --pull=never --format docker --network host \
  -f deploy/Dockerfile -t "$image" . >"$work/build.log" 2>&1 ||
  { tail -40 "$work/build.log"; fail "the image did not build"; }
build_s=$(( $(date +%s) - t0 ))
size=$(podman image inspect --format '{{.Size}}' "$image")
base_size=$(podman image inspect --format '{{.Size}}' docker.io/library/debian:12)
echo "built in ${build_s} s; image $image: $size bytes ($(( size / 1000000 )) MB;" \
     "the debian:12 base: $(( base_size / 1000000 )) MB)"

step "the image as built"
hc=$(podman image inspect --format '{{json .HealthCheck}}' "$image")
echo "healthcheck: $hc"
case "$hc" in *SHLO_PORT*readyz*) ;; *) fail "no /readyz health check on \$SHLO_PORT" ;; esac
user=$(podman image inspect --format '{{.User}}' "$image")
[ -n "$user" ] && [ "${user%%:*}" != 0 ] && [ "${user%%:*}" != root ] ||
  fail "the image runs as '$user'"
echo "user: $user"
ldd_out=$(podman run --rm --network host --entrypoint ldd "$image" \
            /usr/local/bin/shlo-server /usr/local/bin/shlo)
if grep -q "not found" <<<"$ldd_out"; then
  echo "$ldd_out"
  fail "a runtime library is missing"
fi
echo "every library of shlo-server and shlo resolves"
tools=$(podman run --rm --network host --entrypoint sh "$image" -c \
          'for t in cc gcc cmake ninja make; do command -v $t; done; true')
[ -z "$tools" ] || fail "build tools in the final image: $tools"
echo "no compiler or build tool in the final image"

step "run: tokens mounted, SHLO_PORT from the environment"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null ||
       echo $(( 20000 + RANDOM % 20000 )))
token=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
printf 'ci %s\n' "$token" >"$work/tokens"
chmod 0644 "$work/tokens"
podman run -d --name "$name" --network host -e SHLO_PORT="$port" \
  -v "$work/tokens:/run/secrets/shlo_tokens:ro" "$image" >/dev/null
base=http://127.0.0.1:$port
t0=$(date +%s%N)
for _ in $(seq 300); do
  curl -fsS -o /dev/null "$base/readyz" 2>/dev/null && break
  sleep 0.1
done
curl -fsS "$base/readyz" || { podman logs "$name"; fail "/readyz never answered"; }
echo " ready after $(( ($(date +%s%N) - t0) / 1000000 )) ms on port $port"
podman healthcheck run "$name" && echo "podman healthcheck run: healthy" ||
  fail "the image's own health check failed"
uid=$(podman exec "$name" id -u)
[ "$uid" != 0 ] || fail "shlo-server runs as root"
echo "shlo-server runs as uid $uid"

step "execute over HTTP"
prog='func.func @main() -> tensor<2xf32> {
  %0 = stablehlo.constant dense<[20.0, 1.0]> : tensor<2xf32>
  %1 = stablehlo.constant dense<[22.0, 2.0]> : tensor<2xf32>
  %2 = stablehlo.add %0, %1 : tensor<2xf32>
  return %2 : tensor<2xf32>
}'
code=$(curl -s -o /dev/null -w '%{http_code}' --data-binary "$prog" "$base/execute")
[ "$code" = 401 ] || fail "without a token: HTTP $code, want 401"
echo "without a token: 401"
out=$(curl -sS -H "Authorization: Bearer $token" --data-binary "$prog" "$base/execute")
echo "$out"
grep -q '"data":\[42.0,3.0\]' <<<"$out" || fail "wrong answer"
id=$(curl -sS -H "Authorization: Bearer $token" --data-binary @examples/hello.mlir \
       "$base/v1/modules" | sed -n 's/.*"id":"\(sha256:[0-9a-f]*\)".*/\1/p')
[ "$id" = "sha256:$(sha256sum examples/hello.mlir | cut -d' ' -f1)" ] ||
  fail "module id '$id' is not the SHA-256 of the text"
out=$(curl -sS -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
        "$base/v1/modules/$id/execute" -d '{"inputs": [
          {"dtype": "f32", "shape": [3], "data": [1, 2, 3]},
          {"dtype": "f32", "shape": [3], "data": [0.5, 0.25, -1]}]}')
echo "$out"
grep -q '"outputs"' <<<"$out" || fail "the registered module did not run"
echo "(binary protocol: not in this build yet; nothing to test)"

step "SIGTERM"
t0=$(date +%s%N)
podman stop -t 30 "$name" >/dev/null
stop_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
rc=$(podman inspect --format '{{.State.ExitCode}}' "$name")
podman logs "$name" 2>&1 | tail -3
[ "$rc" = 0 ] || fail "exit status $rc after SIGTERM"
podman logs "$name" 2>&1 | grep -q "shlo-server: stopped" ||
  fail "no clean stop in the log"
echo "exit 0 after SIGTERM in $stop_ms ms"

echo "PASS: image $image, $(( size / 1000000 )) MB, built in ${build_s} s, whole test $(( $(date +%s) - t_start )) s"
