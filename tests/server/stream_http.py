# SPDX-License-Identifier: Apache-2.0
"""Issue #13, streaming executions over HTTP: a program that loops on
infeed, keeps a running sum and outfeeds it each iteration, fed by a
chunked `curl` upload while `curl -N` drains its outfeed; every value is
checked, in order, against sums this script computes from its own inputs.
Then cancel, client disconnect, a full infeed queue and an unread outfeed
each end in the documented state within one second, with the worker free
again.  With --sanitized (shlo-server-asan) the server must also stop
cleanly (status 0, no sanitizer report).

usage: stream_http.py SHLO_SERVER [--sanitized]"""
import json
import os
import random
import shutil
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(__file__))
from srvtest import (Server, check, check_clean_stops, finish,
                     loop_program, raw_connect)

SANITIZED = "--sanitized" in sys.argv
CURL = shutil.which("curl")
if not CURL:
    print("stream_http: curl not found; skipped")
    sys.exit(77)

# Loops n times: v = infeed(); s += v; outfeed(s).  Returns s.
RUNNING_SUM = """func.func @main(%n: tensor<i64>) -> tensor<3xi64> {
  %t0 = "stablehlo.after_all"() : () -> !stablehlo.token
  %z = stablehlo.constant dense<0> : tensor<3xi64>
  %c0 = stablehlo.constant dense<0> : tensor<i64>
  %c1 = stablehlo.constant dense<1> : tensor<i64>
  %r:4 = stablehlo.while(%i = %c0, %s = %z, %t = %t0, %m = %n) : tensor<i64>, tensor<3xi64>, !stablehlo.token, tensor<i64>
    cond {
      %c = stablehlo.compare LT, %i, %m : (tensor<i64>, tensor<i64>) -> tensor<i1>
      stablehlo.return %c : tensor<i1>
    } do {
      %v:2 = "stablehlo.infeed"(%t) : (!stablehlo.token) -> (tensor<3xi64>, !stablehlo.token)
      %s2 = stablehlo.add %s, %v#0 : tensor<3xi64>
      %t2 = "stablehlo.outfeed"(%s2, %v#1) : (tensor<3xi64>, !stablehlo.token) -> !stablehlo.token
      %i2 = stablehlo.add %i, %c1 : tensor<i64>
      stablehlo.return %i2, %s2, %t2, %m : tensor<i64>, tensor<3xi64>, !stablehlo.token, tensor<i64>
    }
  return %r#1 : tensor<3xi64>
}
"""

IDLE_MS = 300
FLAGS = ["--threads", "3", "--short-lane-workers", "1",
         "--stream-queue-values", "4", "--execution-keep-s", "60"]
# The running sum on a server whose idle limit is far past any stall of a
# busy machine (curl may take a while to start); the endings on one with a
# short one.
srv = Server(sys.argv[1], *FLAGS, "--execution-idle-ms", "600000")
BASE = f"http://127.0.0.1:{srv.port}"
STOPS = []


def stop_server():
    STOPS.append((srv.stop(), srv.log()))


def start(program, n=None, timeout_ms=60000):
    body = {"program": program, "timeout_ms": timeout_ms}
    if n is not None:
        body["inputs"] = [{"dtype": "i64", "shape": [], "data": n}]
    st, ans = srv.post("/v1/executions", body)
    check(st == 202, f"POST /v1/executions answers 202: {st} {ans}")
    check(isinstance(ans, dict) and ans.get("state") in ("queued", "running"),
          f"a new execution is queued or running: {ans}")
    return ans["id"]


def state(xid, wait_ms=0):
    q = f"?wait_ms={wait_ms}" if wait_ms else ""
    st, _, data = srv.request("GET", f"/v1/executions/{xid}{q}", timeout=30)
    return st, json.loads(data) if data else {}


def wait_final(xid, limit_s):
    """The execution's final state object and how long it took, polling
    with ?wait_ms."""
    t0 = time.monotonic()
    while True:
        st, ans = state(xid, wait_ms=100)
        if ans.get("state") in ("succeeded", "failed", "canceled"):
            return ans, time.monotonic() - t0
        if time.monotonic() - t0 > limit_s:
            return ans, None


def worker_free():
    """No worker runs an execution and the server answers a quick one.
    The time the worker takes to let go is not what is tested (the ends'
    own 1 s bounds are): 10 s, for the sanitized build on a loaded
    machine."""
    def free(m):  # executions run on their own workers (issue #30)
        return m.get("shlo_executions_running") == 0 and \
            m.get('shlo_execution_workers{state="busy"}') == 0
    t0 = time.monotonic()
    while time.monotonic() - t0 < 10:
        if free(srv.metrics()):
            break
        time.sleep(0.01)
    st, ans = srv.post("/execute", {"program": loop_program(10)})
    return free(srv.metrics()) and st == 200


def drain(xid, query=""):
    return subprocess.Popen([CURL, "-sS", "-N", f"{BASE}/v1/executions/{xid}/outfeed{query}"],
                            stdout=subprocess.PIPE)


def upload(xid, query=""):
    return subprocess.Popen(
        [CURL, "-sS", "-X", "POST", "-T", "-", "-H",
         "Content-Type: application/x-ndjson",
         f"{BASE}/v1/executions/{xid}/infeed{query}"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE)


def open_reader(xid):
    """An outfeed reader on a raw socket, attached (its headers read) when
    this returns: unlike a curl started now, it counts from this moment."""
    s = raw_connect(srv.port)
    s.sendall(f"GET /v1/executions/{xid}/outfeed HTTP/1.1\r\nHost: x\r\n\r\n"
              .encode())
    s.settimeout(10)
    head = b""
    while b"\r\n\r\n" not in head:
        k = s.recv(1)
        if not k:
            break
        head += k
    check(head.startswith(b"HTTP/1.1 200"), f"the outfeed answers 200: {head[:40]!r}")
    return s


def read_rest(s):
    data = b""
    while True:
        try:
            k = s.recv(65536)
        except OSError:
            break
        if not k:
            break
        data += k
    s.close()
    return data


def line_of(v):
    return (json.dumps({"dtype": "i64", "shape": [3], "data": v}) + "\n").encode()


# ---- the running sum, fed and drained concurrently by curl ----
N = 300
rng = random.Random(13)
values = [[rng.randint(-10**12, 10**12) for _ in range(3)] for _ in range(N)]
sums, acc = [], [0, 0, 0]
for v in values:
    acc = [a + b for a, b in zip(acc, v)]
    sums.append(acc)
xid = start(RUNNING_SUM, N)
reader = drain(xid)
writer = upload(xid)
# The first 20 one at a time: each sum must come out before the next value
# goes in, so values stream while the program runs (not at its end).
got = []
for i in range(20):
    writer.stdin.write(line_of(values[i]))
    writer.stdin.flush()
    got.append(json.loads(reader.stdout.readline()))
for i in range(20, N):
    writer.stdin.write(line_of(values[i]))
writer.stdin.close()
for line in reader.stdout:
    got.append(json.loads(line))
reader.wait(10)
up = json.loads(writer.stdout.read() or b"{}")
writer.wait(10)
check(up == {"queued": N}, f"the upload's answer counts its values: {up}")
streamed = [g.get("data") for g in got[:-1]]
check(len(streamed) == N, f"{N} outfeed values streamed: {len(streamed)}")
bad = [i for i, (a, b) in enumerate(zip(streamed, sums)) if a != b]
check(not bad, f"every running sum in order (first bad index {bad[:1]})")
last = got[-1] if got else {}
check(last.get("state") == "succeeded",
      f"the last line is the final state: {last}")
check(last.get("outputs", [{}])[0].get("data") == sums[-1],
      "the final state carries the program's result")
ans, _ = wait_final(xid, 5)
check(ans.get("state") == "succeeded" and ans.get("bytes_in") == N * 24 and
      ans.get("bytes_out") == N * 24, f"GET shows the end and the bytes: {ans}")
print(f"running sum: {N} values streamed in and out, in order")
m = srv.metrics()
check(m.get('shlo_async_executions_ended_total{state="succeeded"}') == 1 and
      m.get('shlo_stream_bytes_total{direction="in"}') == N * 24 and
      m.get('shlo_stream_bytes_total{direction="out"}') == N * 24,
      "/metrics counts the execution and the bytes streamed")
stop_server()
srv = Server(sys.argv[1], *FLAGS, "--execution-idle-ms", str(IDLE_MS))
BASE = f"http://127.0.0.1:{srv.port}"

# ---- cancel: blocked in infeed, and spinning in a loop ----
for what, prog, n in (("blocked in infeed", RUNNING_SUM, 10**15),
                      ("spinning in a loop", loop_program(10**12), None)):
    xid = start(prog, n)
    reader = open_reader(xid)  # a client waits on it: it is not idle
    for _ in range(500):
        if state(xid)[1].get("state") == "running":
            break
        time.sleep(0.01)
    time.sleep(IDLE_MS / 1000 + 0.2)  # past the idle time: the reader counts
    t0 = time.monotonic()
    st, _, data = srv.request("DELETE", f"/v1/executions/{xid}")
    dt = time.monotonic() - t0
    ans = json.loads(data)
    print(f"cancel {what}: DELETE answered the final state in {dt * 1000:.1f} ms")
    check(st == 200 and ans.get("state") == "canceled" and
          ans.get("reason") == "delete", f"cancel {what}: {st} {ans}")
    check(dt < 1.0, f"cancel {what} within 1 s: {dt:.3f} s")
    tail = [l for l in read_rest(reader).split(b"\r\n") if l.startswith(b"{")]
    check(tail and json.loads(tail[-1]).get("state") == "canceled",
          f"cancel {what}: the reader's last line is the end: {tail[-1:]}")
    check(worker_free(), f"worker free after cancel {what}")

# ---- client disconnect: writer and reader killed mid-stream ----
xid = start(RUNNING_SUM, 10**15)
reader = drain(xid)
writer = upload(xid)
for i in range(5):
    writer.stdin.write(line_of(values[i]))
    writer.stdin.flush()
    reader.stdout.readline()
writer.kill()
reader.kill()
writer.wait()
reader.wait()
t0 = time.monotonic()
ans, dt = wait_final(xid, 3)
print(f"client disconnect: {ans.get('state')} ({ans.get('reason')}) "
      f"{(dt or -1) * 1000:.0f} ms after both clients left")
check(ans.get("state") == "canceled" and ans.get("reason") == "idle",
      f"disconnected clients: canceled as idle: {ans}")
check(dt is not None and dt < 1.0, f"disconnect ends within 1 s: {dt}")
check(worker_free(), "worker free after disconnect")

# ---- a full infeed queue: the program never reads it ----
xid = start(loop_program(10**12))
# A raw chunked upload, connected at once (a curl started now might come
# after the idle time), written by a thread: the server stops reading it.
w = raw_connect(srv.port)
w.sendall(f"POST /v1/executions/{xid}/infeed HTTP/1.1\r\nHost: x\r\n"
          "Content-Type: application/x-ndjson\r\n"
          "Transfer-Encoding: chunked\r\n\r\n".encode())


def write_chunks():
    try:
        for i in range(20000):  # far more than 4 values and the buffers
            line = line_of(values[i % N])
            w.sendall(b"%x\r\n%s\r\n" % (len(line), line))
        w.sendall(b"0\r\n\r\n")
    except OSError:
        pass


wt = threading.Thread(target=write_chunks, daemon=True)
t0 = time.monotonic()
wt.start()
ans, dt = wait_final(xid, 3)
dt = time.monotonic() - t0
w.settimeout(5)
try:
    up = w.recv(4096)
except OSError:
    up = b""
w.close()
print(f"full infeed: {ans.get('state')} ({ans.get('reason')}) after "
      f"{dt * 1000:.0f} ms, {ans.get('bytes_in')} bytes taken in; upload "
      f"answer {up[:80]!r}")
check(ans.get("state") == "canceled" and ans.get("reason") == "idle",
      f"full infeed: canceled as idle: {ans}")
check(ans.get("bytes_in") == 4 * 24,
      f"full infeed: exactly the queue's 4 values taken in: {ans.get('bytes_in')}")
check(dt < 1.0, f"full infeed ends within 1 s: {dt:.3f}")
check(b'"error"' in up and b"has ended" in up,
      f"the held upload is answered with the end: {up[:200]!r}")
check(worker_free(), "worker free after a full infeed")

# ---- an unread outfeed: no reader ever comes ----
xid = start(RUNNING_SUM, 10**15)
body = b"".join(line_of(values[i]) for i in range(12))
t0 = time.monotonic()
st, _, data = srv.request("POST", f"/v1/executions/{xid}/infeed", body,
                          {"Content-Type": "application/x-ndjson"})
ans, _ = wait_final(xid, 3)
dt = time.monotonic() - t0
print(f"unread outfeed: {ans.get('state')} ({ans.get('reason')}) after "
      f"{dt * 1000:.0f} ms; upload {st} {data[:60]!r}")
check(ans.get("state") == "canceled" and ans.get("reason") == "idle",
      f"unread outfeed: canceled as idle: {ans}")
check(dt < 1.0, f"unread outfeed ends within 1 s: {dt:.3f}")
# What was produced stays readable after the end, then the final state.
out = subprocess.run([CURL, "-sS", "-N", f"{BASE}/v1/executions/{xid}/outfeed"],
                     capture_output=True, timeout=10).stdout.splitlines()
vals = [json.loads(l) for l in out]
check(len(vals) == 5 and [v.get("data") for v in vals[:4]] == sums[:4] and
      vals[-1].get("state") == "canceled",
      f"the 4 queued sums, then the final state: {[v.get('data', v.get('state')) for v in vals]}")
check(worker_free(), "worker free after an unread outfeed")

# ---- the bounds and the table ----
st, _, data = srv.request("GET", "/v1/executions/ex-0000000000000000")
check(st == 404, f"an unknown execution is 404: {st}")
st, _, data = srv.request("POST", f"/v1/executions/{xid}/infeed?replica=1",
                          line_of([1, 2, 3]))
check(st in (400, 409), f"infeed to a process off the grid or ended: {st}")
m = srv.metrics()
check(m.get('shlo_async_executions_ended_total{state="canceled"}') == 5,
      "/metrics counts executions by final state")

stop_server()
if SANITIZED:
    check_clean_stops(STOPS)
finish("stream_http")
