# SPDX-License-Identifier: Apache-2.0
# Sourced by the shell tests that need a live shlo-server: starts $server
# (the caller sets it, and $tmp; optionally an array server_flags of more
# flags) on free loopback HTTP and binary ports ($hport, $bport), its
# stderr in $tmp/server.log, and waits until it serves.  The caller's EXIT
# trap kills $pid.
#
# A port is only known free when it is picked: a test running beside this
# one may take it before the server binds it.  The server serves when
# /healthz answers and its own log says it listens on $hport (not another
# process that took the port) with no port it could not bind; a server
# that ends first is started again on other ports.  Up to 20 s each, for
# a sanitized build on a loaded machine.
# two distinct ports (both held until both are picked)
free_ports() {
  python3 -c 'import socket
a, b = socket.socket(), socket.socket()
a.bind(("127.0.0.1", 0)); b.bind(("127.0.0.1", 0))
print(a.getsockname()[1], b.getsockname()[1])'
}
serving() {
  curl -sf "http://127.0.0.1:$hport/healthz" >/dev/null &&
    grep -q ":$hport/ with " "$tmp/server.log" &&
    ! grep -q "cannot listen" "$tmp/server.log"
}
for _attempt in 1 2 3 4 5; do
  read -r hport bport < <(free_ports)
  "$server" --port "$hport" --binary-port "$bport" --log off --threads 2 \
    ${server_flags[@]+"${server_flags[@]}"} 2>"$tmp/server.log" &
  pid=$!
  for _ in $(seq 400); do
    serving && break 2
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.05
  done
  echo "shlo-server did not start on ports $hport, $bport; trying others" >&2
  kill "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
done
