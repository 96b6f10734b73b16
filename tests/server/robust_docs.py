# SPDX-License-Identifier: Apache-2.0
"""Issue #10, item 7: what PROTOCOL.md says, checked against a live server,
one check per item of the issue's list:
- errors of the HTTP layer itself (bad Content-Length, 414, 431, 505, bad
  chunks): the status, and the connection closed;
- 401, 404, 405 leave the connection usable (also with a request body);
- a grid named by one dimension is 1 in the other: {"replicas": 2} and
  {"replicas": 2, "partitions": 1} are one module, id sha256(text \\0grid=2x1);
- a module remembers the entry it was posted with;
- complex data: pairs, and a bare number is [x, 0] as a scalar or among pairs;
- a cache hit counts once, also for an execution that goes to a worker;
- during shutdown a new connection gets /readyz's 503 (and /healthz 200).

usage: robust_docs.py SHLO_SERVER"""
import hashlib
import json
import os
import signal
import sys
import socket
import threading

sys.path.insert(0, os.path.dirname(__file__))
from srvtest import (Server, check, finish, is_json_error, loop_program,
                     raw_connect, read_http_answer, wait_metrics, wait_until)

BIN = sys.argv[1]


def closed(s):
    """The server closed s: EOF or a reset within 10 s (a timeout is a
    connection left open, not closed)."""
    s.settimeout(10)
    try:
        return s.recv(1) == b""
    except socket.timeout:
        return False
    except OSError:
        return True


# ---- errors the HTTP layer answers itself ----
srv = Server(BIN, "--log", "off")
cases = [
    ("bad Content-Length", b"POST /execute HTTP/1.1\r\nHost: x\r\n"
     b"Content-Length: 12abc\r\n\r\n", 400),
    ("505", b"GET /healthz HTTP/2.7\r\nHost: x\r\n\r\n", 505),
    ("414", b"GET /" + b"a" * 70000 + b" HTTP/1.1\r\nHost: x\r\n\r\n", 414),
    ("431", b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + b"b" * 70000 +
     b"\r\n\r\n", 431),
    ("bad chunk", b"POST /execute HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: "
     b"chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n", 400),
]
for name, raw, want in cases:
    s = raw_connect(srv.port)
    try:
        s.sendall(raw)
    except OSError:
        pass
    st, h, body = read_http_answer(s)
    check(st == want, f"{name}: status {st}, want {want}")
    check(closed(s), f"{name}: the connection is closed")
    s.close()

# ---- 404, 405 (and 401 below) keep the connection ----
s = raw_connect(srv.port)
for req, want in ((b"POST /nope HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n"
                   b"\r\nhello", 404),
                  (b"GET /nope HTTP/1.1\r\nHost: x\r\n\r\n", 404),
                  (b"PUT /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n"
                   b"\r\nabc", 405),
                  (b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", 200)):
    s.sendall(req)
    st, h, body = read_http_answer(s)
    check(st == want, f"{req[:20]!r}: {st}, want {want}")
    check(want == 200 or is_json_error(body), f"{want} is JSON: {body!r}")
s.close()

# ---- grid ids ----
PROG = ("func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
        "  return %a : tensor<2xf32>\n}\n")
grid_id = "sha256:" + hashlib.sha256(PROG.encode() + b"\0grid=2x1").hexdigest()
_, a = srv.post("/v1/modules", {"program": PROG, "replicas": 2})
_, b = srv.post("/v1/modules", {"program": PROG, "replicas": 2,
                                "partitions": 1})
check(a.get("id") == grid_id and b.get("id") == grid_id,
      f"grid ids {a.get('id')} {b.get('id')} want {grid_id}")
check(b.get("cached") is True, "the second is the same module")
_, c = srv.post("/v1/modules", {"program": PROG, "replicas": 1,
                                "partitions": 1})
check(c.get("id") == "sha256:" + hashlib.sha256(PROG.encode()).hexdigest(),
      "a 1 x 1 grid adds nothing to the id")

# ---- the entry a module was posted with ----
TWO = ("func.func @main() -> tensor<i32> {\n"
       "  %c = stablehlo.constant dense<1> : tensor<i32>\n"
       "  return %c : tensor<i32>\n}\n"
       "func.func @g() -> tensor<i32> {\n"
       "  %c = stablehlo.constant dense<7> : tensor<i32>\n"
       "  return %c : tensor<i32>\n}\n")
st, info = srv.post("/v1/modules", {"program": TWO, "entry": "g"})
check(st == 200 and info.get("entry") == "g", f"registered entry: {info}")
st, got = srv.post(f"/v1/modules/{info['id']}/execute", {})
check(st == 200 and got["outputs"][0]["data"] == [7],
      f"by id without entry runs @g: {st} {got}")
_, _, body = srv.request("GET", f"/v1/modules/{info['id']}")
check(json.loads(body).get("entry") == "g", "GET shows the entry")
st, got = srv.post(f"/v1/modules/{info['id']}/execute", {"entry": "main"})
check(st == 200 and got["outputs"][0]["data"] == [1], "entry still choosable")

# ---- complex data ----
CX = ("func.func @main(%a: tensor<NxCOMPLEX>) -> tensor<NxCOMPLEX> {\n"
      "  return %a : tensor<NxCOMPLEX>\n}\n")


def cx(shape, data):
    n = "x".join(str(d) for d in shape)
    prog = CX.replace("Nx", n + "x" if shape else "").replace(
        "COMPLEX", "complex<f32>")
    return srv.post("/execute", {"program": prog, "inputs": [
        {"dtype": "complex<f32>", "shape": shape, "data": data}]})


st, o = cx([], 5)
check(st == 200 and o["outputs"][0]["data"] == [[5.0, 0.0]],
      f"bare scalar: {st} {o}")
st, o = cx([2], [[1, 2], 3])
check(st == 200 and o["outputs"][0]["data"] == [[1.0, 2.0], [3.0, 0.0]],
      f"bare among pairs: {st} {o}")
st, o = cx([2], [[1, 2], [3, 4]])
check(st == 200 and o["outputs"][0]["data"] == [[1.0, 2.0], [3.0, 4.0]],
      f"pairs: {st} {o}")
st, o = cx([2], [1, [3, 4]])
check(st == 400 and o["error"]["kind"] == "input",
      f"a list whose first member is a number is one pair: {st} {o}")

# ---- cache hits count once ----
LOOP = loop_program(1000)  # a while: never answered on the loop thread


def hits():
    return srv.metrics()["shlo_cache_hits_total"]


srv.post("/execute", {"program": LOOP})
h0 = hits()
for _ in range(3):
    st, o = srv.post("/execute", {"program": LOOP})
    check(st == 200 and o["cached"] is True, f"cached run: {o}")
check(hits() - h0 == 3, f"3 cached executions count {hits() - h0} hits")
st, info = srv.post("/v1/modules", {"program": LOOP})
h0 = hits()
srv.post(f"/v1/modules/{info['id']}/execute", {})
check(hits() - h0 == 1, f"by id: {hits() - h0} hits for one execution")
check(srv.stop() == 0, "stops")

# ---- 401 keeps the connection ----
tokens = f"/tmp/shlo-docs-tokens-{os.getpid()}"
with open(tokens, "w") as f:
    f.write("alice s3cret scopes=admin\n")  # /metrics needs admin
srv = Server(BIN, "--tokens", tokens, "--log", "off")
s = raw_connect(srv.port)
s.sendall(b"POST /execute HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nfunc")
st, h, body = read_http_answer(s)
check(st == 401 and is_json_error(body, "auth") and "www-authenticate" in h,
      f"401: {st} {body!r}")
s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer s3cret"
          b"\r\n\r\n")
st, h, body = read_http_answer(s)
check(st == 200, f"the same connection after a 401: {st}")
s.close()
srv.stop()
os.unlink(tokens)

# ---- shutdown: /readyz says so on a new connection ----
# (a grace far past the execution's run, slow as it may be on a loaded
# machine or in the sanitized build: it is to finish, not be canceled)
srv = Server(BIN, "--threads", "1", "--log", "off",
             "--shutdown-grace-ms", "100000")
# Registered first, so that running it compiles nothing: SIGTERM stops
# compiles at once (the grace is for executions), and a sanitized build
# may still be compiling when /metrics first shows the job running.
st, info = srv.post("/v1/modules", {"program": loop_program(60_000_000)})
check(st == 200, f"the long program registers: {st} {info}")
out = []
t = threading.Thread(target=lambda: out.append(
    srv.post(f"/v1/modules/{info.get('id')}/execute", {}, timeout=110)))
t.start()
# the execution runs (for seconds) before the SIGTERM, and the loop has
# taken the signal (/readyz turns 503) before the checks
dt, _ = wait_metrics(srv, lambda m: m["shlo_executions_running"] == 1, 30)
check(dt is not None, "the long execution started")
srv.proc.send_signal(signal.SIGTERM)
check(wait_until(lambda: srv.request("GET", "/readyz")[0] == 503, 10),
      "/readyz turns 503 after SIGTERM")
check(t.is_alive(), "the execution was still running when the drain began")
st, _, body = srv.request("GET", "/readyz")
check(st == 503 and json.loads(body) == {"status": "draining"},
      f"/readyz while draining: {st} {body!r}")
st, _, body = srv.request("GET", "/healthz")
check(st == 200, f"/healthz while draining: {st}")
st, h, body = srv.request("POST", "/execute", {"program": loop_program(5)})
check(st == 503 and b"shutting down" in body and h.get("retry-after"),
      f"new work while draining: {st} {body!r}")
t.join()
check(out and out[0][0] == 200, f"the running execution finished: {out}")
srv.proc.wait(30)
check(srv.proc.returncode == 0, f"exit status {srv.proc.returncode}")
finish("robust_docs")
