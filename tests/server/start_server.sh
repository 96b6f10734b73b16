# Sourced by the shell tests that need a live shlo-server: starts $server
# (the caller sets it, and $tmp) on free loopback HTTP and binary ports
# ($hport, $bport), its stderr in $tmp/server.log, and waits for /healthz.
# The caller's EXIT trap kills $pid.
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
hport=$(free_port) bport=$(free_port)
"$server" --port "$hport" --binary-port "$bport" --log off --threads 2 \
  2>"$tmp/server.log" &
pid=$!
for _ in $(seq 200); do
  curl -sf "http://127.0.0.1:$hport/healthz" >/dev/null && break
  sleep 0.05
done
