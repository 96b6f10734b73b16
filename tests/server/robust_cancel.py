# SPDX-License-Identifier: Apache-2.0
"""Issue #10, cancellation on disconnect (HTTP): a client that hangs up while
its execution runs has it canceled within 100 ms (seen in /metrics: the
cancel counter and a free worker); one that hangs up while its execution
waits in the queue never has it run.

usage: robust_cancel.py SHLO_SERVER"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from srvtest import (Server, check, finish, loop_program, raw_connect,
                     wait_metrics as wait_metric)

LONG = loop_program(400_000_000)  # about 30 s: far past the test's bounds


def send_execute(port):
    body = json.dumps({"program": LONG, "timeout_ms": 120000}).encode()
    s = raw_connect(port)
    s.sendall(b"POST /execute HTTP/1.1\r\nHost: x\r\nContent-Type: "
              b"application/json\r\nContent-Length: %d\r\n\r\n" % len(body) +
              body)
    return s


GONE = 'shlo_executions_canceled_total{reason="client_gone"}'
srv = Server(sys.argv[1], "--threads", "2", "--short-lane-workers", "1")

# A running execution: hang up, and the worker is free within 100 ms.
a = send_execute(srv.port)
dt, m = wait_metric(srv, lambda m: m["shlo_executions_running"] == 1, 10)
check(dt is not None, "the execution started")
time.sleep(0.3)
# A second long one waits: the long lane has one worker of the two.
b = send_execute(srv.port)
dt, m = wait_metric(srv, lambda m: m["shlo_queue_depth"] == 1, 5)
check(dt is not None, f"the second execution waits in the queue: {m.get('shlo_queue_depth')}")
b.close()  # gone while queued
# It leaves the queue when the loop sees the hang-up, counted as canceled,
# while the first one still runs (not when a worker would reach it).
dt, m = wait_metric(srv, lambda m: m["shlo_queue_depth"] == 0 and
                    m[GONE] == 1, 5)
check(dt is not None and m["shlo_executions_running"] == 1,
      f"the queued one left the queue at its hang-up: queue "
      f"{m.get('shlo_queue_depth')}, canceled {m.get(GONE)}, running "
      f"{m.get('shlo_executions_running')}")
t0 = time.monotonic()
a.close()  # gone while running
dt, m = wait_metric(srv, lambda m: m[GONE] >= 2 and
                    m["shlo_executions_running"] == 0 and
                    m["shlo_queue_depth"] == 0, 5)
seen = time.monotonic() - t0 if dt is not None else None
lat = m.get("shlo_cancel_latency_max_seconds", -1)
print(f"hang-up to free worker: {seen * 1000 if seen else -1:.1f} ms seen by "
      f"the client through /metrics, {lat * 1000:.1f} ms measured by the server")
check(seen is not None and seen <= 0.100,
      f"the running execution was canceled within 100 ms: {seen}")
check(0 <= lat <= 0.100, f"server-side cancel latency {lat}")
check(m[GONE] == 2, f"both canceled: {m[GONE]}")
check(m["shlo_execution_seconds_count"] == 1,
      f"the queued one never ran: {m['shlo_execution_seconds_count']} ran")
check("event=canceled reason=client_gone" in srv.log(), "the log says so")
# ...and the server serves on.
st, out = srv.post("/execute", {"program": loop_program(10)})
check(st == 200 and out["outputs"][0]["data"] == [10], f"serves on: {st} {out}")
check(srv.stop() == 0, "stops cleanly")
finish("robust_cancel")
