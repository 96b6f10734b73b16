# SPDX-License-Identifier: Apache-2.0
"""Issue #10, fairness: on a 2-worker server two long executions do not
delay a registration or a 100x100 reduce by more than 50 ms (the long
lane has one worker, the short lane the other); per-client caps answer
429; /metrics shows the queue wait by lane and the compile time.  With
--short-lane-workers 0 (one FIFO, as before the lanes) the same load's
delay is printed as a control (timing on a shared machine: not checked).

usage: robust_lanes.py SHLO_SERVER"""
import json
import os
import random
import statistics
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(__file__))
from srvtest import (REDUCE_100, Server, check, finish, jobs, loop_program,
                     wait_jobs)

LONG = loop_program(30_000_000)  # about a second
rnd = random.Random(7)
A = [[rnd.randint(-3, 3) for _ in range(100)] for _ in range(100)]
WANT = [float(sum(r)) for r in A]
serial = [0]


def reduce_once(srv, mid):
    t0 = time.monotonic()
    st, out = srv.post(f"/v1/modules/{mid}/execute", {
        "inputs": [{"dtype": "f32", "shape": [100, 100], "data": A}]})
    dt = time.monotonic() - t0
    check(st == 200 and out["outputs"][0]["data"] == WANT, f"reduce: {st}")
    return dt


def register_once(srv):
    serial[0] += 1
    prog = (f"func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {{\n"
            f"  %c = stablehlo.constant dense<{serial[0]}.0> : tensor<4xf32>\n"
            f"  %r = stablehlo.add %a, %c : tensor<4xf32>\n"
            f"  return %r : tensor<4xf32>\n}}\n")
    t0 = time.monotonic()
    st, out = srv.post("/v1/modules", {"program": prog})
    dt = time.monotonic() - t0
    check(st == 200 and out.get("cached") is False, f"register: {st} {out}")
    return dt


def measure(srv, mid, n=10):
    red = [reduce_once(srv, mid) for _ in range(n)]
    reg = [register_once(srv) for _ in range(n // 2)]
    return red, reg


def p90(xs):
    return sorted(xs)[int(0.9 * (len(xs) - 1))]


def run(short_workers, n_reduce, n_register):
    """Two long executions kept in flight (two clients loop over them)
    while reduces and registrations are timed one at a time; their delays
    against the same requests without the load."""
    srv = Server(sys.argv[1], "--threads", "2", "--short-lane-workers",
                 str(short_workers), "--log", "off")
    st, info = srv.post("/v1/modules", {"program": REDUCE_100})
    mid = info["id"]
    st, linfo = srv.post("/v1/modules", {"program": LONG})
    lid = linfo["id"]
    base_red = [reduce_once(srv, mid) for _ in range(10)]
    base_reg = [register_once(srv) for _ in range(6)]
    stop = threading.Event()
    done = []

    def long_client():
        while not stop.is_set():
            st, out = srv.post(f"/v1/modules/{lid}/execute",
                               {"timeout_ms": 60000}, timeout=120)
            done.append(st == 200 and out["outputs"][0]["data"] == [30_000_000])

    longs = [threading.Thread(target=long_client) for _ in range(2)]
    for t in longs:
        t.start()
    # the load is there before the first probe
    wait_jobs(srv, 2, "the two long executions started")
    load_red = [reduce_once(srv, mid) for _ in range(n_reduce)]
    load_reg = [register_once(srv) for _ in range(n_register)]
    still = jobs(srv.metrics())
    stop.set()
    for t in longs:
        t.join()
    check(done and all(done), f"the long executions finish right: {done}")
    # With the lanes the two long executions take turns on the long lane's
    # one worker, so one always waits while the other runs.  In the one-FIFO
    # control they run side by side and end together, and the probe that
    # queued behind them ends with them too: the sample may fall while both
    # clients send their next one.  There the probes' delays show the load.
    if short_workers > 0:
        check(still >= 1,
              f"the long executions were there throughout: {still}")
    m = srv.metrics()
    srv.stop()
    b_red, b_reg = statistics.median(base_red), statistics.median(base_reg)
    # the delay of the slow tail (90th percentile) under load against the
    # typical request without it: a single request's worst case on a
    # shared 2-core machine is the OS scheduler's, not the server's
    d_red, d_reg = p90(load_red) - b_red, p90(load_reg) - b_reg
    print(f"short-lane-workers {short_workers}: reduce median "
          f"{b_red * 1000:.1f} -> {statistics.median(load_red) * 1000:.1f} ms "
          f"(p90 {p90(load_red) * 1000:.1f}, max {max(load_red) * 1000:.1f}), "
          f"registration median {b_reg * 1000:.1f} -> "
          f"{statistics.median(load_reg) * 1000:.1f} ms (p90 "
          f"{p90(load_reg) * 1000:.1f}, max {max(load_reg) * 1000:.1f}): "
          f"delay at p90 {d_red * 1000:.1f} and {d_reg * 1000:.1f} ms, "
          f"worst {(max(load_red) - b_red) * 1000:.1f} and "
          f"{(max(load_reg) - b_reg) * 1000:.1f} ms", flush=True)
    return d_red, d_reg, m, max(load_red) - b_red, max(load_reg) - b_reg


d_red, d_reg, m, _, _ = run(1, 20, 10)
check(d_red <= 0.050, f"the reduce is delayed {d_red * 1000:.1f} ms > 50")
check(d_reg <= 0.050, f"a registration is delayed {d_reg * 1000:.1f} ms > 50")
check(m['shlo_queue_wait_seconds_count{lane="short"}'] >= 20,
      "short-lane waits are in /metrics")
check(m['shlo_queue_wait_seconds_count{lane="long"}'] >= 2,
      "long-lane waits are in /metrics")
check(m['shlo_compile_seconds_count{route="register"}'] >= 7,
      "compile times are in /metrics")
# The control: with one FIFO the same load should delay them (judged on
# the worst probe, which waits behind a long execution on a quiet
# machine).  Whether it does is a matter of timing on a shared machine, so
# it is reported, not checked: the lanes are checked above by their
# queue counts and a generous bound.
_, _, _, w_red, w_reg = run(0, 2, 1)
print(f"lanes: control with one FIFO: reduce delayed up to "
      f"{w_red * 1000:.1f} ms, registration up to {w_reg * 1000:.1f} ms"
      + ("" if w_red > 0.050 or w_reg > 0.050 else
         " (no delay seen this time: the machine let them through)"),
      flush=True)

# Per-client cap: the third job of a client capped at 2 gets 429.
srv = Server(sys.argv[1], "--threads", "2", "--max-client-jobs", "2",
             "--log", "off")
res = []


def one_long():
    res.append(srv.post("/execute", {"program": loop_program(30_000_000)},
                        timeout=60))


ts = [threading.Thread(target=one_long) for _ in range(2)]
for t in ts:
    t.start()
wait_jobs(srv, 2, "the client's first two jobs are in")
st, h, body = srv.request("POST", "/execute",
                          {"program": loop_program(30_000_000)})
check(st == 429 and h.get("retry-after") and b"max-client-jobs" in body and
      json.loads(body)["error"]["kind"] == "limit",
      f"third job of the client: 429: {st} {h} {body!r}")
st, _, _ = srv.request("GET", "/healthz")
check(st == 200, "health routes are not capped")
for t in ts:
    t.join()
check([r[0] for r in res] == [200, 200], f"the first two ran: {res}")
check(srv.metrics()['shlo_refused_total{limit="max-client-jobs"}'] == 1,
      "the 429 is counted")
srv.stop()

# Per-client running cap: client A (127.0.0.1) queues three long
# executions, then client B (127.0.0.2) one; with max-client-running 1, B's
# runs beside A's first instead of after all three.
import http.client  # noqa: E402

srv = Server(sys.argv[1], "--threads", "2", "--short-lane-workers", "0",
             "--max-client-running", "1", "--log", "off")
LONGISH = loop_program(20_000_000)  # about 0.5 s (7 s sanitized)
done_at = {}


def client(name, src, k):
    c = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=60,
                                   source_address=(src, 0))
    c.request("POST", "/execute", json.dumps({"program": LONGISH}),
              {"Content-Type": "application/json"})
    t1 = time.monotonic()
    r = c.getresponse()
    st, body = r.status, r.read()
    ran_s = json.loads(body)["timing"]["execute_ms"] / 1000 if st == 200 else 0
    # finished at, status, waited (its time at the server less its run)
    done_at[f"{name}{k}"] = (time.monotonic() - t0, st,
                             time.monotonic() - t1 - ran_s, ran_s)
    c.close()


t0 = time.monotonic()
ts = [threading.Thread(target=client, args=("A", "127.0.0.1", k))
      for k in range(3)]
# A's three reach the server in their order (A0 runs, A1 and A2 wait
# behind it), then B's
for k, t in enumerate(ts):
    t.start()
    wait_jobs(srv, k + 1, f"A{k} is in")
tb = threading.Thread(target=client, args=("B", "127.0.0.2", 0))
tb.start()
for t in ts + [tb]:
    t.join()
print("max-client-running 1: finished at " + ", ".join(
    f"{k} {v[0]:.2f} s (waited {v[2]:.2f} s)"
    for k, v in sorted(done_at.items(), key=lambda x: x[1])), flush=True)
check(all(v[1] == 200 for v in done_at.values()), f"all ran: {done_at}")
# B's waited for no worker: A's second was passed over for it (without the
# cap B would wait for one of A's to finish)
check(done_at["B0"][2] < 0.5 * done_at["A0"][3],
      f"B's execution did not wait for A's: waited {done_at['B0'][2]:.2f} s, "
      f"A's run {done_at['A0'][3]:.2f} s: {done_at}")
srv.stop()
finish("robust_lanes")
