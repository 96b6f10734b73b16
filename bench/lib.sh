# SPDX-License-Identifier: Apache-2.0
# What the bench scripts that start a server share: sourced, not run.
#   . "$(dirname "$0")/lib.sh"

# bench_need FILE...: stop with the build command when a binary is missing.
bench_need() {
  local f
  for f in "$@"; do
    [ -x "$f" ] || { echo "no $f: build first (ninja -C ${build:-build})" >&2; exit 1; }
  done
}

# A port nobody listens on now (the kernel's pick, released at once).
bench_free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# bench_wait_healthy PORT: wait up to 10 s for a server's /healthz; a
# server that never answers stops the script instead of timing nothing.
bench_wait_healthy() {
  local _
  for _ in $(seq 200); do
    curl -sf "http://127.0.0.1:$1/healthz" >/dev/null 2>&1 && return 0
    sleep 0.05
  done
  echo "no server answered on port $1 within 10 s" >&2
  exit 1
}
