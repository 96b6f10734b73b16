# SPDX-License-Identifier: Apache-2.0
"""Issue #13 over the binary protocol (PROTOCOL.md part 2, "Streaming
executions"): the running-sum program started, fed and drained through the
Python client's shlo:// transport, every sum checked in order against sums
computed here; an execution started over binary watched over HTTP and one
started over HTTP fed over binary; then cancel, client disconnect, a full
infeed queue and an unread outfeed each end in the documented state within
one second with the worker free again; then hostile streaming frames on a
raw socket, each answered with an ERROR frame, the connection kept or
closed as the spec says.  With --sanitized the server must also stop
cleanly (status 0, no sanitizer report).

With --c-client PATH (bench/stream_bench.c's program) the same server
also streams 1 MiB values through libshlo-client's streaming calls, every
value checked by that program.

usage: stream_binary.py SHLO_SERVER [--sanitized] [--c-client PATH]"""
import json
import os
import socket
import struct
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                "client", "python"))
try:
    import numpy as np
except ImportError:
    print("stream_binary: numpy not found; skipped")
    sys.exit(77)
from shlo_client import Client, ShloError
from srvtest import (Server, check, check_clean_stops, finish,
                     loop_program)

SANITIZED = "--sanitized" in sys.argv
C_CLIENT = (sys.argv[sys.argv.index("--c-client") + 1]
            if "--c-client" in sys.argv else None)
HERE = os.path.dirname(__file__)
with open(os.path.join(HERE, "stream_http.py")) as f:
    RUNNING_SUM = f.read().split('RUNNING_SUM = """')[1].split('"""')[0]

IDLE_MS = 300
FLAGS = ["--threads", "3", "--short-lane-workers", "1",
         "--stream-queue-values", "4", "--execution-keep-s", "60"]
STOPS = []


def serve(*more):
    srv = Server(sys.argv[1], *FLAGS, *more, binary_port=True)
    return srv, srv.bport


def http_state(srv, xid):
    st, _, data = srv.request("GET", f"/v1/executions/{xid}")
    return st, json.loads(data) if data else {}


def wait_final(srv, xid, limit_s):
    t0 = time.monotonic()
    while True:
        st, ans = http_state(srv, xid)
        if ans.get("state") in ("succeeded", "failed", "canceled"):
            return ans, time.monotonic() - t0
        if time.monotonic() - t0 > limit_s:
            return ans, None
        time.sleep(0.005)


def wait_bytes_in(srv, xid, n):
    """The execution's state once the server has taken n bytes of infeed
    (or after 10 s)."""
    for _ in range(1000):
        ans = http_state(srv, xid)[1]
        if ans.get("bytes_in") == n:
            break
        time.sleep(0.01)
    return ans


def worker_free(srv):
    def free(m):  # executions run on their own workers (issue #30)
        return m.get("shlo_executions_running") == 0 and \
            m.get('shlo_execution_workers{state="busy"}') == 0
    t0 = time.monotonic()
    while time.monotonic() - t0 < 2:
        if free(srv.metrics()):
            break
        time.sleep(0.01)
    st, ans = srv.post("/execute", {"program": loop_program(10)})
    return free(srv.metrics()) and st == 200


rng = np.random.default_rng(1313)
N = 300
values = [rng.integers(-10**12, 10**12, 3, dtype=np.int64) for _ in range(N)]
sums = np.cumsum(np.stack(values), axis=0)

# ---- the running sum, through the Python client over shlo:// ----
# An idle limit far past any stall of a loaded machine: this part checks
# the values, not the idle rule (once, with two suites and their ASan
# builds on two cores, the exchange stood still past the default 30 s and
# the execution was canceled as idle).
srv, bport = serve("--execution-idle-ms", "600000")
c = Client(f"shlo://127.0.0.1:{bport}")
ex = c.start(RUNNING_SUM, np.int64(N), timeout_ms=60000)
check(ex.id.startswith("ex-") and len(ex.id) == 19, f"an execution id: {ex.id}")
st, ans = http_state(srv, ex.id)
check(st == 200 and ans.get("state") in ("queued", "running"),
      f"the binary execution is watched over HTTP: {st} {ans}")
errors = []


def feed_all():
    try:
        for v in values:
            ex.feed(v)
    except Exception as e:  # reported by the main thread
        errors.append(e)


t = threading.Thread(target=feed_all)
t.start()
got = list(ex.outfeed())
t.join(30)
check(not errors, f"every INFEED queued: {errors[:1]}")
check(len(got) == N, f"{N} OUTFEED values: {len(got)}")
bad = [i for i, g in enumerate(got) if not np.array_equal(g, sums[i])]
check(not bad and all(g.dtype == np.int64 and g.shape == (3,) for g in got),
      f"every running sum in order (first bad {bad[:1]})")
check(ex.final and ex.final.get("state") == "succeeded" and
      ex.final.get("bytes_in") == N * 24 and ex.final.get("bytes_out") == N * 24,
      f"the subscription ends with the final STATE: {ex.final}")
out = ex.result()
check(len(out) == 1 and np.array_equal(out[0], sums[-1]),
      f"result(): the last sum: {out}")

# Feeding runs ahead of the reading: every queue full and the next INFEED
# held before the SUBSCRIBE is sent.  The server reads nothing more from a
# connection whose INFEED waits for room, so the client feeds on a second
# connection; on the one connection this SUBSCRIBE was never read, and the
# program, waiting on its full outfeed queue, ran to its deadline.
M = 12
ex = c.start(RUNNING_SUM, np.int64(M), timeout_ms=20000)
t = threading.Thread(target=lambda: [ex.feed(v) for v in values[:M]],
                     daemon=True)
t.start()
held = wait_bytes_in(srv, ex.id, 9 * 24)  # 4 in, 4 out, one held: 9 in
check(held.get("bytes_in") == 9 * 24, f"feeding ran ahead: {held}")
got = list(ex.outfeed())
t.join(10)
check(len(got) == M and all(np.array_equal(g, sums[i])
                            for i, g in enumerate(got)) and
      ex.final.get("state") == "succeeded",
      f"subscribed after the queues filled: {len(got)} sums, {ex.final}")

# An execution started over HTTP, fed and drained over binary.
st, ans = srv.post("/v1/executions", {
    "program": RUNNING_SUM, "timeout_ms": 60000,
    "inputs": [{"dtype": "i64", "shape": [], "data": 3}]})
check(st == 202, f"HTTP start: {st} {ans}")
hx = type(ex)(c._conn, ans["id"])
for v in values[:3]:
    hx.feed(v)
got = list(hx.outfeed())
check(len(got) == 3 and all(np.array_equal(g, sums[i]) for i, g in enumerate(got)),
      f"an HTTP-started execution fed and drained over binary: {got}")
check(hx.final.get("state") == "succeeded", f"its end: {hx.final}")
feeds = [ex._feed_conn, hx._feed_conn]
c.close()
check(all(f is not None and f.sock.fileno() == -1 for f in feeds),
      "closing the client closes its executions' feeding connections")

# libshlo-client: 40 values of 1 MiB in and out, each checked by the program
if C_CLIENT:
    p = subprocess.run([C_CLIENT, f"shlo://127.0.0.1:{bport}", "40", "1"],
                       capture_output=True, text=True, timeout=120)
    print(p.stdout.strip())
    check(p.returncode == 0 and "(succeeded, 40 values checked, 0 wrong)"
          in p.stdout, f"libshlo-client streams 40 MiB: {p.stdout} {p.stderr}")
    # Its feeder ahead of its reader, as the Python client's above: every
    # queue full (4 in, 4 out, one held by the program) and the next
    # INFEED held before the first shlo_execution_next subscribes.  On the
    # client's one connection that SUBSCRIBE was never read.
    p = subprocess.Popen([C_CLIENT, f"shlo://127.0.0.1:{bport}", "12", "1",
                          "--ahead"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    xid = p.stdout.readline().strip()
    held = wait_bytes_in(srv, xid, 9 << 20)
    check(held.get("bytes_in") == 9 << 20,
          f"libshlo-client's feeding ran ahead: {xid} {held}")
    try:
        out, err = p.communicate("go\n", timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
    check(p.returncode == 0 and "(succeeded, 12 values checked, 0 wrong)"
          in out, f"libshlo-client subscribed after the queues filled: "
          f"{out} {err}")
STOPS.append((srv.stop(), srv.log()))

# ---- endings, on a server with a short idle time ----
srv, bport = serve("--execution-idle-ms", str(IDLE_MS))


def running(xid):
    for _ in range(500):
        if http_state(srv, xid)[1].get("state") == "running":
            return True
        time.sleep(0.01)
    return False


# cancel: blocked in infeed, a reader waiting (so not idle)
c = Client(f"shlo://127.0.0.1:{bport}")
ex = c.start(RUNNING_SUM, np.int64(10**15), timeout_ms=60000)
ex.feed(values[0])
it = ex.outfeed()
first = next(it)
check(np.array_equal(first, values[0]), "the first sum streams at once")
time.sleep(IDLE_MS / 1000 + 0.2)  # past the idle time: the reader counts
t0 = time.monotonic()
ans = ex.cancel()
dt = time.monotonic() - t0
print(f"cancel: STOP answered the final state in {dt * 1000:.1f} ms")
check(ans.get("state") == "canceled" and ans.get("reason") == "delete",
      f"STOP: canceled (delete): {ans}")
check(dt < 1.0, f"cancel within 1 s: {dt:.3f} s")
rest = list(it)
check(rest == [] and ex.final.get("state") == "canceled",
      f"the subscription ends with the final STATE: {ex.final}")
try:
    ex.result()
    check(False, "result() of a canceled execution raises")
except ShloError as e:
    check(e.kind == "timeout", f"result() raises the cancel: {e}")
check(worker_free(srv), "worker free after cancel")

# client disconnect: the connection that started it goes away
c2 = Client(f"shlo://127.0.0.1:{bport}")
ex = c2.start(RUNNING_SUM, np.int64(10**15), timeout_ms=60000)
ex.feed(values[0])
check(running(ex.id), "running before the disconnect")
t0 = time.monotonic()
c2._conn.sock.shutdown(socket.SHUT_RDWR)
c2._conn.sock.close()
ans, dt = wait_final(srv, ex.id, 3)
dt = time.monotonic() - t0
print(f"client disconnect: {ans.get('state')} ({ans.get('reason')}) in "
      f"{dt * 1000:.0f} ms")
check(ans.get("state") == "canceled" and ans.get("reason") == "client_gone",
      f"disconnect: canceled (client_gone): {ans}")
check(dt < 1.0, f"disconnect ends within 1 s: {dt:.3f}")
check(worker_free(srv), "worker free after disconnect")

# a full infeed queue: the program never reads it; the feeder is paused
ex = c.start(loop_program(10**12), timeout_ms=60000)
check(running(ex.id), "the looping program runs")
feed_err = []


def feed_forever():
    try:
        for i in range(100):
            ex.feed(values[i])
    except ShloError as e:
        feed_err.append(e)


t0 = time.monotonic()
t = threading.Thread(target=feed_forever, daemon=True)
t.start()
ans, _ = wait_final(srv, ex.id, 3)
dt = time.monotonic() - t0
t.join(5)
print(f"full infeed: {ans.get('state')} ({ans.get('reason')}) after "
      f"{dt * 1000:.0f} ms, {ans.get('bytes_in')} bytes in; feeder got "
      f"{feed_err[:1]}")
check(ans.get("state") == "canceled" and ans.get("reason") == "idle",
      f"full infeed: canceled (idle): {ans}")
check(ans.get("bytes_in") == 4 * 24,
      f"full infeed: exactly the queue's 4 values taken in: {ans.get('bytes_in')}")
check(dt < 1.0, f"full infeed ends within 1 s: {dt:.3f}")
check(feed_err and feed_err[0].status == 409 and "has ended" in str(feed_err[0]),
      f"the held INFEED is answered with the end: {feed_err[:1]}")
check(worker_free(srv), "worker free after a full infeed")

# an unread outfeed: values fed, nobody subscribes
ex = c.start(RUNNING_SUM, np.int64(10**15), timeout_ms=60000)
for i in range(4):
    ex.feed(values[i])
t0 = time.monotonic()
ans, _ = wait_final(srv, ex.id, 3)
dt = time.monotonic() - t0
print(f"unread outfeed: {ans.get('state')} ({ans.get('reason')}) after "
      f"{dt * 1000:.0f} ms")
check(ans.get("state") == "canceled" and ans.get("reason") == "idle",
      f"unread outfeed: canceled (idle): {ans}")
check(dt < 1.0, f"unread outfeed ends within 1 s: {dt:.3f}")
got = list(ex.outfeed())
check(len(got) == 4 and all(np.array_equal(g, sums[i]) for i, g in enumerate(got))
      and ex.final.get("state") == "canceled",
      f"the queued sums stay readable, then the end: {len(got)} {ex.final}")
check(worker_free(srv), "worker free after an unread outfeed")
done_id = ex.id
c.close()

# ---- hostile streaming frames on a raw socket ----
HDR = struct.Struct("<IHHIIQQ")
MAGIC = 0x424C4853


def frame(typ, rid, payload=b"", version=2, flags=0):
    return HDR.pack(MAGIC, version, typ, flags, 0, rid, len(payload)) + payload


def recv_exact(s, n):
    b = b""
    while len(b) < n:
        k = s.recv(n - len(b))
        if not k:
            return None
        b += k
    return b


def read_frame(s):
    h = recv_exact(s, 32)
    if h is None:
        return None, None, None
    _, _, typ, _, _, rid, n = HDR.unpack(h)
    return typ, rid, recv_exact(s, n)


def connect(version=2):
    s = socket.create_connection(("127.0.0.1", bport), timeout=5)
    s.sendall(frame(1, 0, struct.pack("<HHIQ", 1, version, 0, 0), version=1))
    typ, _, pl = read_frame(s)
    check(typ == 2 and struct.unpack_from("<H", pl)[0] == version,
          f"HELLO 1..{version} is welcomed at version {version}")
    return s


def stream(eid, flags=0, replica=0, partition=0, reserved=0):
    return eid.encode().ljust(24, b"\0") + struct.pack(
        "<IIIIq", flags, replica, partition, reserved, 0)


def tensor(arr):
    b = arr.tobytes()
    return struct.pack("<HBBIQ", 7, arr.ndim, 0, 0, len(b)) + \
        struct.pack("<%dQ" % arr.ndim, *arr.shape) + b + b"\0" * (-len(b) % 8)


def error_of(s, rid, what):
    typ, got, pl = read_frame(s)
    ok = typ == 7 and got == rid
    kind, status = struct.unpack_from("<II", pl) if ok else (None, None)
    msg = pl[24:24 + struct.unpack_from("<I", pl, 20)[0]].decode() if ok else ""
    check(ok, f"{what}: an ERROR frame for request {rid}: {typ} {got}")
    return kind, status, msg


def still_open(s, what):
    s.sendall(frame(9, 99, b"12345678"))
    typ, rid, pl = read_frame(s)
    check(typ == 10 and rid == 99, f"{what}: the connection is kept (PONG)")


def closed(s, what):
    s.settimeout(5)
    try:
        typ, _, _ = read_frame(s)
    except OSError:
        typ = None
    check(typ is None, f"{what}: the connection is closed")


s = connect()
v = tensor(np.arange(3, dtype=np.int64))
s.sendall(frame(14, 1, stream("ex-0000000000000000") + v))
kind, status, msg = error_of(s, 1, "INFEED to an unknown id")
check(kind == 7 and status == 404, f"unknown id: not_found 404: {kind} {status} {msg}")
still_open(s, "unknown id")
s.sendall(frame(16, 2, stream("ex-ffffffffffffffff", replica=0xFFFFFFFF,
                                partition=0xFFFFFFFF)))
kind, status, _ = error_of(s, 2, "SUBSCRIBE to an unknown id")
check(kind == 7 and status == 404, f"SUBSCRIBE unknown id: not_found: {kind}")
still_open(s, "SUBSCRIBE unknown id")
# wrong shape: a header whose byte length does not match its dims
bad = struct.pack("<HBBIQ", 7, 1, 0, 0, 16) + struct.pack("<Q", 3) + b"\0" * 16
s.sendall(frame(14, 3, stream(done_id) + bad))
kind, status, msg = error_of(s, 3, "INFEED with a wrong shape")
check(kind == 2, f"wrong shape: input: {kind} {msg}")
still_open(s, "wrong shape")
s.sendall(frame(14, 4, stream(done_id) + v))
kind, status, msg = error_of(s, 4, "INFEED after the end")
check(kind == 2 and status == 409 and "has ended" in msg,
      f"feed after finish: input 409: {kind} {status} {msg}")
still_open(s, "feed after finish")
s.sendall(frame(19, 5, done_id.encode().ljust(24, b"\0") + struct.pack("<II", 0, 0)))
typ, rid, pl = read_frame(s)
check(typ == 18 and rid == 5 and struct.unpack_from("<I", pl, 24)[0] == 4,
      f"WAIT on an ended execution: STATE canceled: {typ} {rid}")
s.sendall(frame(14, 6, stream(done_id, reserved=1) + v))
kind, _, _ = error_of(s, 6, "INFEED with a reserved field set")
check(kind == 2, "reserved field: input")
closed(s, "reserved field")
s = connect()
s.sendall(frame(16, 7, stream(done_id, flags=0x80)))
kind, _, _ = error_of(s, 7, "SUBSCRIBE with a reserved flag")
closed(s, "reserved flag")
s = connect(version=1)
s.sendall(frame(14, 8, stream(done_id) + v, version=1))
kind, _, msg = error_of(s, 8, "INFEED on a version-1 connection")
check(kind == 2 and "version 2" in msg, f"version 1: refused: {msg}")
closed(s, "INFEED on version 1")
s.close()
check(worker_free(srv), "the server serves on after hostile frames")

m = srv.metrics()
check(m.get('shlo_binary_requests_total{type="infeed",kind="ok"}', 0) >= 8,
      "/metrics counts binary INFEEDs")
STOPS.append((srv.stop(), srv.log()))
if SANITIZED:
    check_clean_stops(STOPS)
finish("stream_binary")
