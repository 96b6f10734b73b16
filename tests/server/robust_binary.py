# SPDX-License-Identifier: Apache-2.0
"""Issue #10 over the binary protocol: the same fairness as HTTP.  On a
2-worker server two long executions do not delay a 100x100 reduce or a
COMPILE by more than 50 ms (the short lane; with --short-lane-workers 0 the
same load's delay is printed as a control); max-client-jobs answers ERROR `limit` with
status 429; max-client-running lets another client's job run before a
capped client's queued ones; max-connections-per-ip counts binary and HTTP
connections of one address together; a dropped connection cancels its
execution within 100 ms and its compile at the next cancellation point.

usage: robust_binary.py SHLO_SERVER"""
import os
import socket
import statistics
import struct
import sys
import threading
import time

import numpy as np

HERE = os.path.dirname(__file__)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "client", "python"))
import shlo_client  # noqa: E402
from srvtest import (REDUCE_100, Server, chain_program, check,  # noqa: E402
                     finish, loop_program, ms_until_idle,
                     raw_connect, read_http_answer, wait_jobs, wait_metrics,
                     wait_until)

BIN = sys.argv[1]
LONG = loop_program(30_000_000)  # about a second
A = np.random.default_rng(7).integers(-3, 4, (100, 100)).astype(np.float32)
WANT = A.sum(axis=1)
serial = [0]


ORIG_CONNECT = socket.create_connection
connect_lock = threading.Lock()


def connect(srv, src="127.0.0.1"):
    """A binary client whose connection comes from address src (the
    client opens its socket with socket.create_connection: that is
    replaced for the call, one call at a time)."""
    def from_src(addr, timeout=None, source_address=None):
        return ORIG_CONNECT(addr, timeout, source_address=(src, 0))
    with connect_lock:
        shlo_client.socket.create_connection = from_src
        try:
            return shlo_client.Client(f"shlo://127.0.0.1:{srv.bport}")
        finally:
            shlo_client.socket.create_connection = ORIG_CONNECT


def drop(cl):
    """Close the connection as a crashed client would: no GOODBYE."""
    cl._conn.sock.shutdown(socket.SHUT_RDWR)
    cl._conn.sock.close()


def start(*flags):
    return Server(BIN, "--log", "off", *flags, binary_port=True)


def timed(f):
    t0 = time.monotonic()
    f()
    return time.monotonic() - t0


def reduce_once(mod):
    out = mod.execute(A)
    check(np.array_equal(out[0], WANT), "reduce answer")


def compile_once(cl):
    serial[0] += 1
    prog = (f"func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {{\n"
            f"  %c = stablehlo.constant dense<{serial[0]}.0> : tensor<4xf32>\n"
            f"  %r = stablehlo.add %a, %c : tensor<4xf32>\n"
            f"  return %r : tensor<4xf32>\n}}\n")
    cl.compile(prog)


def p90(xs):
    return sorted(xs)[int(0.9 * (len(xs) - 1))]


def lanes(short_workers, n_reduce, n_compile):
    srv = start("--threads", "2", "--short-lane-workers", str(short_workers))
    cl = connect(srv)
    red = cl.compile(REDUCE_100)
    lng = cl.compile(LONG)
    base_red = [timed(lambda: reduce_once(red)) for _ in range(10)]
    base_cmp = [timed(lambda: compile_once(cl)) for _ in range(6)]
    stop = threading.Event()
    done = []

    def long_client():
        c = connect(srv)
        m = c.compile(LONG)
        while not stop.is_set():
            done.append(int(m.execute(timeout_ms=60000)[0]) == 30_000_000)
        c.close()

    longs = [threading.Thread(target=long_client) for _ in range(2)]
    for t in longs:
        t.start()
    # the load is there before the first probe
    wait_jobs(srv, 2, "two long executions were running")
    load_red = [timed(lambda: reduce_once(red)) for _ in range(n_reduce)]
    load_cmp = [timed(lambda: compile_once(cl)) for _ in range(n_compile)]
    stop.set()
    for t in longs:
        t.join()
    check(done and all(done), f"the long executions finish right: {done}")
    m = srv.metrics()
    cl.close()
    srv.stop()
    b_red, b_cmp = statistics.median(base_red), statistics.median(base_cmp)
    print(f"binary, short-lane-workers {short_workers}: reduce median "
          f"{b_red * 1000:.1f} -> {statistics.median(load_red) * 1000:.1f} ms"
          f" (p90 {p90(load_red) * 1000:.1f}, max {max(load_red) * 1000:.1f})"
          f", COMPILE median {b_cmp * 1000:.1f} -> "
          f"{statistics.median(load_cmp) * 1000:.1f} ms (p90 "
          f"{p90(load_cmp) * 1000:.1f}, max {max(load_cmp) * 1000:.1f})",
          flush=True)
    return (p90(load_red) - b_red, p90(load_cmp) - b_cmp, m,
            max(load_red) - b_red, max(load_cmp) - b_cmp)


# 1. Lanes.
d_red, d_cmp, m, _, _ = lanes(1, 20, 10)
check(d_red <= 0.050, f"the reduce is delayed {d_red * 1000:.1f} ms > 50")
check(d_cmp <= 0.050, f"a COMPILE is delayed {d_cmp * 1000:.1f} ms > 50")
check(m['shlo_queue_wait_seconds_count{lane="short"}'] >= 20,
      "binary jobs wait in the short lane")
# The control: with one FIFO the same load should delay them.  Whether it
# does is a matter of timing on a shared machine (a loaded one can let the
# long executions finish between probes), so it is reported, not checked:
# the lanes' effect is checked above by what the code guarantees (the
# short lane's queue count) and a generous bound.
_, _, _, w_red, w_cmp = lanes(0, 2, 1)
print(f"binary: control with one FIFO: reduce delayed up to "
      f"{w_red * 1000:.1f} ms, COMPILE up to {w_cmp * 1000:.1f} ms"
      + ("" if w_red > 0.050 or w_cmp > 0.050 else
         " (no delay seen this time: the machine let them through)"),
      flush=True)

# 2. max-client-jobs: the third job of a client capped at 2.
srv = start("--threads", "2", "--max-client-jobs", "2")
cl = connect(srv)
mod = cl.compile(loop_program(30_000_000))  # 0.8 s: past the 3rd job
res = []


def one_long(c, m):
    try:
        res.append(int(m.execute(timeout_ms=60000)[0]))
    except shlo_client.ShloError as e:
        res.append(e)


ts = [threading.Thread(target=one_long, args=(cl, mod)) for _ in range(2)]
for t in ts:
    t.start()
wait_jobs(srv, 2, "the client's first two jobs are in")
try:
    mod.execute(timeout_ms=60000)
    check(False, "the third job of the client ran")
except shlo_client.ShloError as e:
    check(e.kind == "limit" and e.status == 429 and
          "max-client-jobs" in e.message, f"third job: {e.kind} {e.status} "
          f"{e.message}")
other = connect(srv, "127.0.0.2")  # another client is not capped by it
check(other.compile(REDUCE_100).execute(A)[0].shape == (100,),
      "another client's job runs")
for t in ts:
    t.join()
check(res == [30_000_000] * 2, f"the first two ran: {res}")
check(srv.metrics()['shlo_refused_total{limit="max-client-jobs"}'] == 1,
      "the refusal is counted")
cl.close()
other.close()
srv.stop()

# 3. max-client-running 1: client A queues three long executions, then
# client B one; B's runs beside A's first, not after A's queue.
srv = start("--threads", "2", "--short-lane-workers", "0",
            "--max-client-running", "1")
LONGISH = loop_program(20_000_000)  # about 0.5 s (7 s sanitized)
ca, cb = connect(srv, "127.0.0.1"), connect(srv, "127.0.0.2")
ma, mb = ca.compile(LONGISH), cb.compile(LONGISH)
t0 = time.monotonic()
done_at = {}


def run(name, m):
    m.execute(timeout_ms=60000)
    done_at[name] = time.monotonic() - t0


ts = []
# A's three reach the server in their order (A0 runs, A1 and A2 wait
# behind it), then B's
for k in range(3):
    ts.append(threading.Thread(target=run, args=(f"A{k}", ma)))
    ts[-1].start()
    wait_jobs(srv, k + 1, f"A{k} is in")
ts.append(threading.Thread(target=run, args=("B0", mb)))
ts[-1].start()
for t in ts:
    t.join()
order = sorted(done_at, key=done_at.get)
print("binary, max-client-running 1: finished at " +
      ", ".join(f"{k} {done_at[k]:.2f} s" for k in order), flush=True)
# Without the cap, A1 takes the second worker and A2 is queued ahead of
# B0: A2 starts first, when A0 and A1 end, and B0 after it.  With it, B0
# runs beside A0 (or, if its request came late, beside A1) and ends
# before A2, which waits for A1.  Only the order is asserted: on a loaded
# machine B0 shares its core with the tests running beside this one, so
# its finishing time says little about when it started.
check(done_at["B0"] < done_at["A2"],
      f"B's job did not run before A's queued ones: {order}")
# A1 ran after A0, not beside it: they end a run apart.  The yardstick is
# A2's run (it starts when A1 ends, alone on its worker), not A0's end:
# A0 shares the machine's cores with B0, and on a loaded (or sanitized)
# run takes longer than A1 alone.
check(done_at["A1"] - done_at["A0"] > 0.5 * (done_at["A2"] - done_at["A1"]),
      f"A's jobs ran side by side despite max-client-running 1: "
      f"{ {k: round(v, 2) for k, v in done_at.items()} }")
ca.close()
cb.close()
srv.stop()

# 4. max-connections-per-ip: binary and HTTP connections of one address
# count together; the one over the cap gets ERROR limit (503).
srv = start("--max-connections-per-ip", "2")
c1 = connect(srv, "127.0.0.3")
h1 = raw_connect(srv.port, "127.0.0.3")
# an answer on h1: the server has taken it in (it was not still in the
# HTTP listener's backlog when the binary connection below came)
h1.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
check(read_http_answer(h1)[0] == 200, "the HTTP connection is served")
try:
    connect(srv, "127.0.0.3")
    check(False, "a third connection from one address was admitted")
except shlo_client.ShloError as e:
    check(e.kind == "limit" and e.status == 503 and
          "max-connections-per-ip" in e.message,
          f"over the cap: {e.kind} {e.status} {e.message}")
h2 = raw_connect(srv.port, "127.0.0.3")
st, _, _ = read_http_answer(h2)
check(st == 503, f"HTTP over the cap with a binary connection open: {st}")
h2.close()
c4 = connect(srv, "127.0.0.4")  # another address is not affected
c1.close()
h1.close()
again = []


def admitted():
    """A connection from 127.0.0.3 is taken (the loop notices the closes
    above in its own time)."""
    try:
        again.append(connect(srv, "127.0.0.3"))
        return True
    except shlo_client.ShloError as e:
        if e.kind != "limit":
            raise
        return False


if not check(wait_until(admitted, 10, step=0.05),
             "the closed ones left the count"):
    finish("robust_binary")
c5 = again[0]
check(c5.compile(REDUCE_100).execute(A)[0].shape == (100,),
      "admitted again once the others closed")
c4.close()
c5.close()
srv.stop()

# 4b. One address fills the binary port: every connection over its cap is
# refused at accept (ERROR limit at once, then closed) and does not count
# toward max-connections, so other addresses still connect and execute.
srv = start("--max-connections-per-ip", "8", "--max-connections", "16")
watch = raw_connect(srv.port, "127.0.0.4")


def metrics_text():
    watch.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
    return read_http_answer(watch)[2]


# the start-up check's connection from 127.0.0.1 is gone from the counts
check(wait_until(lambda: b"\nshlo_http_connections 1\n" in metrics_text(),
                 10, step=0.02), "the server's other connections closed")
flood, refused = [], 0
for _ in range(40):  # from 127.0.0.1, none says HELLO
    s = raw_connect(srv.bport, "127.0.0.1")
    flood.append(s)
for s in flood:
    s.settimeout(1.0)
    try:
        head = s.recv(32, socket.MSG_WAITALL)
    except socket.timeout:
        continue  # admitted: the server waits for its HELLO
    if len(head) == 32 and struct.unpack("<IHHIIQQ", head)[2] == 7:
        body = s.recv(struct.unpack("<IHHIIQQ", head)[6], socket.MSG_WAITALL)
        refused += b"max-connections-per-ip" in body
check(refused == 32, f"40 connections from one address, cap 8: 32 refused "
      f"at accept with ERROR naming the cap, not {refused}")
check(b"\nshlo_binary_connections 8\n" in metrics_text(),
      "only the 8 admitted connections count")
for src in ("127.0.0.2", "127.0.0.3"):
    other = connect(srv, src)
    check(other.compile(REDUCE_100).execute(A)[0].shape == (100,),
          f"{src} connects and executes while 127.0.0.1 is full")
    other.close()
for src, want in (("127.0.0.1", 503), ("127.0.0.4", 200)):
    h = raw_connect(srv.port, src)
    h.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
    st = read_http_answer(h)[0]
    check(st == want, f"HTTP from {src} with 127.0.0.1's binary slots "
          f"full: {st}, not {want}")
    h.close()
for s in flood:
    s.close()
watch.close()
srv.stop()

# 5. A dropped connection cancels its execution (within 100 ms) and its
# compile.
srv = start("--threads", "2", "--compile-timeout-ms", "120000")


def started(limit_s):
    dt, _ = wait_metrics(srv, lambda m: m["shlo_executions_running"] == 1,
                         limit_s, step=0.001)
    return dt is not None


def ignore(f):
    try:
        f()
    except (shlo_client.ShloError, OSError):
        pass


def dropped_ms(work, limit_s):
    """Start work on a new connection in a thread, wait until it runs, drop
    the connection: the milliseconds until the worker is free."""
    cl = connect(srv)
    th = threading.Thread(target=ignore, args=(lambda: work(cl),))
    th.start()
    check(started(limit_s), "the work started")
    time.sleep(0.3)
    ms = ms_until_idle(srv, lambda: drop(cl))
    th.join()
    return ms


exec_ms = dropped_ms(lambda cl: cl.compile(loop_program(400_000_000)).execute(
    timeout_ms=120000), 10)
big = chain_program(300_000)
compile_ms = dropped_ms(lambda cl: cl.compile(big), 20)
print(f"binary drop to free worker: execution {exec_ms:.1f} ms, 300k-op "
      f"compile {compile_ms:.1f} ms (seen through /metrics)", flush=True)
check(0 <= exec_ms <= 100, f"execution canceled within 100 ms: {exec_ms}")
check(0 <= compile_ms <= 2000, f"compile canceled: {compile_ms}")
m = srv.metrics()
check(m["shlo_execution_seconds_count"] <= 1, "nothing else ran")
check(srv.stop() == 0, "stops cleanly")
finish("robust_binary")
