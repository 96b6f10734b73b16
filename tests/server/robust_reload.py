# SPDX-License-Identifier: Apache-2.0
"""Issue #10, item 6: SIGHUP reloads the configuration and the tokens file,
logs what changed (and what needs a restart), keeps the configuration in
force when the file has errors, and drops nothing in flight.

usage: robust_reload.py SHLO_SERVER"""
import os
import signal
import sys
import threading

sys.path.insert(0, os.path.dirname(__file__))
from srvtest import Server, check, finish, loop_program, wait_metrics

tmp = f"/tmp/shlo-reload-{os.getpid()}"
conf, tokens = tmp + ".conf", tmp + ".tokens"


def write(path, text):
    with open(path + ".new", "w") as f:
        f.write(text)
    os.rename(path + ".new", path)


# three workers: the long lane has two, so the small uncached execution
# below does not wait for the long one (PROTOCOL.md, "Lanes")
write(conf, "threads 3\nmax-body-bytes 1000\n")
write(tokens, "alice a-token scopes=admin\n")  # admin: /metrics
srv = Server(sys.argv[1], "--config", conf, "--tokens", tokens)
A = {"Authorization": "Bearer a-token"}
B = {"Authorization": "Bearer b-token"}
PAD = "// " + "x" * 1500 + "\n"
small = "func.func @main() -> tensor<i32> {\n  %c = stablehlo.constant " \
        "dense<3> : tensor<i32>\n  return %c : tensor<i32>\n}\n"
st, _, body = srv.request("POST", "/execute", PAD + small, A)
check(st == 413 and b"max-body-bytes" in body, f"before: 413: {st} {body!r}")

out = []
t = threading.Thread(target=lambda: out.append(srv.request(
    "POST", "/execute", loop_program(60_000_000), A, timeout=110)))
t.start()
# the execution is in flight (it runs for seconds) before the SIGHUP
dt, _ = wait_metrics(srv, lambda m: m["shlo_executions_running"] == 1, 30,
                     headers=A)
check(dt is not None, "the long execution started")
write(conf, "threads 4\nmax-body-bytes 4000\n")
write(tokens, "alice a-token scopes=admin\nbob b-token\n")
srv.proc.send_signal(signal.SIGHUP)


def reloads(ok, failed):
    """Wait until the loop has handled the SIGHUPs sent so far (it counts
    each at the end of its reload)."""
    dt, m = wait_metrics(srv, lambda m: (
        m['shlo_reloads_total{result="ok"}'],
        m['shlo_reloads_total{result="failed"}']) == (ok, failed), 30,
        step=0.01, headers=A)
    return dt is not None


check(reloads(1, 0), "the SIGHUP was handled")
check(srv.proc.poll() is None, "SIGHUP does not stop the server")
check(t.is_alive(), "the execution was still in flight after the reload")
st, _, body = srv.request("POST", "/execute", PAD + small, A, timeout=60)
check(st == 200, f"after: the larger body is taken: {st} {body!r}")
st, _, _ = srv.request("GET", "/v1/modules", None, B)
check(st == 200, f"the new token works: {st}")
t.join()
check(out and out[0][0] == 200 and b"60000000" in out[0][2],
      f"the execution in flight finished: {out}")
log = srv.log()
check("reload: max-body-bytes 1000 -> 4000" in log, "the change is logged")
check("reload: threads 3 -> 4 needs a restart; kept 3" in log,
      "a restart-only change is logged and kept")
check("reload: 2 bearer token(s)" in log, "the tokens reload is logged")

write(conf, "threads 4\nmax-body-bytes lots\n")
srv.proc.send_signal(signal.SIGHUP)
check(reloads(1, 1), "the second SIGHUP was handled, as a failure")
check("the configuration has errors; kept the one in force" in srv.log(),
      "a broken file is refused")
st, _, _ = srv.request("POST", "/execute", PAD + small, A)
check(st == 200, f"and the limits in force stay: {st}")
m = {}
_, _, body = srv.request("GET", "/metrics", None, A)
for line in body.decode().splitlines():
    if line.startswith("shlo_reloads_total"):
        k, v = line.split()
        m[k] = float(v)
check(m.get('shlo_reloads_total{result="ok"}') == 1 and
      m.get('shlo_reloads_total{result="failed"}') == 1, f"counted: {m}")
check(srv.stop() == 0, "stops cleanly")
for p in (conf, tokens):
    os.unlink(p)
finish("robust_reload")
