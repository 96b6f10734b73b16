# SPDX-License-Identifier: Apache-2.0
"""Issue #30, items 3 and 7: streaming executions that do not starve the
server.

1. Starvation: 8 clients (tokens; half of them over the binary protocol
   when the Python client can run, i.e. with numpy) start 64 executions
   that wait for an infeed nobody feeds, each holding a 1 MiB input.  They
   sleep on the executions' own workers (execution-workers), so with all
   64 waiting a fresh program compiles and runs within 1 s, a long
   synchronous execution starts within 1 s (its wait in the long lane, from
   /metrics), and a long asynchronous one of a ninth client runs within
   1 s.  The bound holds by construction: none of these needs a worker
   that an abandoned execution can hold.  Then the 64 end by themselves
   (canceled, reason idle) and the server's memory comes back.
2. Queued executions: with one execution worker, one that waits for it
   and that nobody feeds or drains ends "canceled" (idle) after
   execution-idle-ms, one whose reader waits ends "canceled"
   (start_timeout) after execution-start-timeout-s.
3. Uploads: with --request-timeout-s 3, a chunked infeed of one value a
   second, consumed while its outfeed is drained, runs for 10 s (more
   than 3 times the request timeout) and is answered 200; an upload that
   stops sending gets 408 after stream-idle-timeout-s (3 s); an upload to an
   ended execution gets its 409 before it sends its body.

With --sanitized (shlo-server-asan) every server must also stop cleanly
(status 0, no sanitizer report): parked, withdrawn and idle executions
leak nothing.  The 1 s bounds are the same there: none of them waits for
the abandoned executions.

usage: robust_streams.py SHLO_SERVER [--sanitized] [uploads|queued|starvation]"""
import base64
import http.client
import json
import os
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                "client", "python"))
from srvtest import (Server, check, check_clean_stops, finish,
                     loop_program, raw_connect,
                     read_http_answer, wait_until)
try:
    import numpy as np
    from shlo_client import Client
except ImportError:
    np = None

BIN = sys.argv[1]
SANITIZED = "--sanitized" in sys.argv
STOPS = []
HERE = os.path.dirname(__file__)
with open(os.path.join(HERE, "stream_http.py")) as f:
    RUNNING_SUM = f.read().split('RUNNING_SUM = """')[1].split('"""')[0]
PAD = 1 << 18  # f32 elements of the input each abandoned execution holds
# The running sum with a 1 MiB input it never reads: what an abandoned
# execution holds until it ends.
ABANDONED = RUNNING_SUM.replace(
    "@main(%n: tensor<i64>)", f"@main(%n: tensor<i64>, %pad: tensor<{PAD}xf32>)")
PAD_B64 = base64.b64encode(bytes(4 * PAD)).decode()
TMP = f"/tmp/shlo-robust-streams-{os.getpid()}"


def rss_mib(srv):
    with open(f"/proc/{srv.proc.pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return -1


def auth(token):
    return {"Authorization": f"Bearer {token}"} if token else {}


def post(srv, path, body, token=None, timeout=30):
    st, _, data = srv.request("POST", path, body, headers=auth(token),
                              timeout=timeout)
    try:
        return st, json.loads(data)
    except ValueError:
        return st, data


def state(srv, xid, token=None, wait_ms=0):
    q = f"?wait_ms={wait_ms}" if wait_ms else ""
    st, _, data = srv.request("GET", f"/v1/executions/{xid}{q}",
                              headers=auth(token), timeout=30 + wait_ms / 1e3)
    return json.loads(data) if st == 200 else {"status": st}


def start_http(srv, program, inputs, token=None):
    st, ans = post(srv, "/v1/executions", {"program": program,
                                           "inputs": inputs,
                                           "timeout_ms": 120000}, token)
    check(st == 202, f"POST /v1/executions answers 202: {st} {ans}")
    return ans.get("id") if isinstance(ans, dict) else None


def wait_final(srv, xid, limit_s, token=None):
    """The state object once xid has ended (or the last one after
    limit_s), and the seconds that took."""
    t0 = time.monotonic()
    doc = state(srv, xid, token)
    while doc.get("state") in ("queued", "running") and \
            time.monotonic() - t0 < limit_s:
        doc = state(srv, xid, token, wait_ms=200)
    return doc, time.monotonic() - t0


def workers(srv, what):
    return srv.metrics().get(f'shlo_execution_workers{{state="{what}"}}', -1)


def stop(srv):
    rc = srv.stop()
    STOPS.append((rc, srv.log()))
    check(rc == 0, f"the server stops cleanly: {rc}")


# ---- 1. 64 abandoned executions from 8 clients ----

def starvation():
    names = [f"c{k}" for k in range(8)] + ["fresh"]
    tokens = {n: f"{n}-secret-{os.getpid()}-{k}" for k, n in enumerate(names)}
    with open(TMP + ".tokens", "w") as f:
        for n in names:
            f.write(f"{n} {tokens[n]} team=team-{n}\n")
    idle_ms = 8000
    srv = Server(BIN, "--tokens", TMP + ".tokens", "--max-executions", "72",
                 "--execution-workers", "72", "--execution-idle-ms",
                 str(idle_ms), binary_port=np is not None)
    rss_idle = rss_mib(srv)
    inputs = [{"dtype": "i64", "shape": [], "data": 1},
              {"dtype": "f32", "shape": [PAD], "b64": PAD_B64}]
    http_ids, bin_execs, clients = [], [], []
    for k in range(8):
        tok = tokens[f"c{k}"]
        if np is not None and k >= 4:  # the binary protocol's half
            c = Client(f"shlo://127.0.0.1:{srv.bport}", token=tok)
            clients.append(c)
            for _ in range(8):
                bin_execs.append((tok, c.start(
                    ABANDONED, np.int64(1), np.zeros(PAD, np.float32),
                    timeout_ms=120000)))
        else:
            for _ in range(8):
                http_ids.append((tok, start_http(srv, ABANDONED, inputs, tok)))
    check(len(http_ids) + len(bin_execs) == 64, "64 executions started")
    # Beyond max-client-executions (8): a clear 429, not a hang.
    st, ans = post(srv, "/v1/executions", {"program": ABANDONED,
                                           "inputs": inputs}, tokens["c0"])
    check(st == 429 and "max-client-executions" in json.dumps(ans),
          f"a ninth execution of one client: 429 max-client-executions: "
          f"{st} {ans}")
    def all_running():  # (/metrics would need an admin token)
        n = sum(state(srv, x, t).get("state") == "running"
                for t, x in http_ids)
        n += sum(e.state().get("state") == "running" for _, e in bin_execs)
        return n == 64
    check(wait_until(all_running, 60, step=0.2),
          "the 64 abandoned executions run (each waits in its infeed)")
    rss_held = rss_mib(srv)
    cpu0, t0 = srv.cpu_s(), time.monotonic()
    time.sleep(2)
    cpu_share = (srv.cpu_s() - cpu0) / (time.monotonic() - t0)
    print(f"starvation: the server's CPU with 64 executions waiting: "
          f"{cpu_share * 100:.1f}% of one core")

    # A fresh program (never compiled) compiles and runs.
    prog = (f"func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {{\n"
            f"  %c = stablehlo.constant dense<{os.getpid()}.5> : "
            f"tensor<4xf32>\n  %r = stablehlo.add %a, %c : tensor<4xf32>\n"
            f"  return %r : tensor<4xf32>\n}}\n")
    t0 = time.monotonic()
    st, ans = post(srv, "/execute", {"program": prog, "inputs": [
        {"dtype": "f32", "shape": [4], "data": [1, 2, 3, 4]}]},
        tokens["fresh"])
    fresh_s = time.monotonic() - t0
    check(st == 200 and ans.get("cached") is False,
          f"a fresh program compiles and runs: {st} {ans}")
    check(fresh_s < 1.0, f"... within 1 s: {fresh_s:.3f} s")
    # A long asynchronous execution of a ninth client starts (runs).
    t0 = time.monotonic()
    xid = start_http(srv, loop_program(10**13), [], tokens["fresh"])
    st0 = {}
    while time.monotonic() - t0 < 10:
        st0 = state(srv, xid, tokens["fresh"], wait_ms=100)
        if st0.get("state") != "queued":
            break
    async_s = time.monotonic() - t0
    check(st0.get("state") == "running",
          f"a long asynchronous execution runs: {st0}")
    check(async_s < 1.0, f"... within 1 s of its POST: {async_s:.3f} s")
    st, _, _ = srv.request("DELETE", f"/v1/executions/{xid}",
                           headers=auth(tokens["fresh"]))
    check(st == 200, f"DELETE of the long one: {st}")
    # A long synchronous execution starts: it waits nothing in the long
    # lane (the program runs about 30 ms per million steps here).
    t0 = time.monotonic()
    st, ans = post(srv, "/execute", {"program": loop_program(20_000_000)},
                   tokens["fresh"], timeout=120)
    long_s = time.monotonic() - t0
    run_ms = ans.get("timing", {}).get("execute_ms", -1) \
        if isinstance(ans, dict) else -1
    check(st == 200, f"a long synchronous execution: {st} {ans}")
    wait_s = long_s - run_ms / 1000
    check(wait_s < 1.0, f"... starts within 1 s: {long_s:.3f} s in all, "
          f"{run_ms:.0f} ms of it running")
    print(f"starvation: with 64 abandoned executions (8 clients, "
          f"{'4 over binary' if bin_execs else 'all over HTTP'}): fresh "
          f"program {fresh_s * 1000:.1f} ms, long async running after "
          f"{async_s * 1000:.1f} ms, long sync {long_s * 1000:.1f} ms "
          f"({run_ms:.0f} ms executing, {wait_s * 1000:.1f} ms before)")

    # They end by themselves, idle, and let go of their inputs.
    def ended():
        docs = [state(srv, x, t) for t, x in http_ids]
        docs += [e.state() for _, e in bin_execs]
        return all(d.get("state") == "canceled" and d.get("reason") == "idle"
                   for d in docs)
    t0 = time.monotonic()
    ok = wait_until(ended, idle_ms / 1000 + 30, step=0.25)
    check(ok, "the 64 abandoned executions end canceled, reason idle")
    end_s = time.monotonic() - t0
    rss_end = rss_mib(srv)
    print(f"starvation: all 64 ended (idle) {end_s:.1f} s after the "
          f"measures (execution-idle-ms {idle_ms}); RSS idle "
          f"{rss_idle:.0f} MiB, with them {rss_held:.0f} MiB, after "
          f"{rss_end:.0f} MiB")
    # (ASan's allocator keeps freed memory in quarantine: not there)
    check(SANITIZED or rss_end - rss_idle < (rss_held - rss_idle) / 2,
          f"RSS comes back after they end: {rss_idle:.0f} -> "
          f"{rss_held:.0f} -> {rss_end:.0f} MiB")
    for c in clients:
        c.close()
    stop(srv)
    os.unlink(TMP + ".tokens")


# ---- 2. queued executions: idle, start deadline ----

class Reader(threading.Thread):
    """GET .../outfeed, its lines as they come."""
    def __init__(self, port, xid):
        super().__init__(daemon=True)
        self.port, self.xid, self.lines = port, xid, []
        self.start()

    def run(self):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        try:
            c.request("GET", f"/v1/executions/{self.xid}/outfeed")
            r = c.getresponse()
            while True:
                line = r.readline()
                if not line:
                    break
                self.lines.append(json.loads(line))
        except (OSError, ValueError, http.client.HTTPException):
            pass
        finally:
            c.close()


def queued():
    srv = Server(BIN, "--execution-workers", "1", "--max-executions", "3",
                 "--max-client-executions", "3", "--execution-idle-ms",
                 "1000", "--execution-start-timeout-s", "3")
    n1 = [{"dtype": "i64", "shape": [], "data": 1}]
    a = start_http(srv, RUNNING_SUM, n1)
    ra = Reader(srv.port, a)  # keeps a alive: a reader waits on it
    check(wait_until(lambda: state(srv, a).get("state") == "running", 30),
          "the first execution runs on the one execution worker")
    # DELETE takes a queued one out of the queue at once (it used to wait
    # for a worker to reach it, then answer "queued" after 5 s).
    d = start_http(srv, RUNNING_SUM, n1)
    t0 = time.monotonic()
    st, _, data = srv.request("DELETE", f"/v1/executions/{d}")
    td = time.monotonic() - t0
    sd = json.loads(data) if st == 200 else {}
    check(sd.get("state") == "canceled" and sd.get("reason") == "delete",
          f"DELETE of a queued execution: canceled, delete: {st} {sd}")
    check(td < 4, f"... answered before DELETE's 5 s wait: {td:.2f} s")
    b = start_http(srv, RUNNING_SUM, n1)  # nobody: idle while queued
    c = start_http(srv, RUNNING_SUM, n1)
    rc = Reader(srv.port, c)  # waits for it: not idle, but never starts
    sb, tb = wait_final(srv, b, 20)
    check(sb.get("state") == "canceled" and sb.get("reason") == "idle",
          f"a queued execution nobody feeds ends idle: {sb}")
    check(0.5 < tb < 10, f"... after execution-idle-ms (1 s): {tb:.2f} s")
    sc, tc = wait_final(srv, c, 20)
    tc += tb
    check(sc.get("state") == "canceled" and
          sc.get("reason") == "start_timeout" and
          "execution-start-timeout-s" in json.dumps(sc.get("error")),
          f"a queued execution whose reader waits ends start_timeout: {sc}")
    check(2 < tc < 15, f"... after execution-start-timeout-s (3 s): "
          f"{tc:.2f} s")
    rc.join(10)
    check(rc.lines and rc.lines[-1].get("reason") == "start_timeout",
          f"its reader's last line is its end: {rc.lines}")
    check(state(srv, a).get("state") == "running",
          "the running one runs on meanwhile")
    m = srv.metrics()
    check(m.get("shlo_execution_start_timeouts_total") == 1,
          "/metrics counts one start timeout")
    st, _, _ = srv.request("DELETE", f"/v1/executions/{a}")
    ra.join(10)
    check(st == 200 and wait_until(lambda: workers(srv, "busy") == 0, 10),
          "the execution worker is free after DELETE")
    print(f"queued: DELETE answered in {td * 1000:.1f} ms, idle end "
          f"{tb:.2f} s, start_timeout end {tc:.2f} s")
    stop(srv)


# ---- 3. uploads timed by the gap between values ----

def chunk(data):
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


def upload_head(port, xid):
    s = raw_connect(port)
    s.sendall(f"POST /v1/executions/{xid}/infeed HTTP/1.1\r\n"
              f"Host: x\r\nContent-Type: application/x-ndjson\r\n"
              f"Transfer-Encoding: chunked\r\n\r\n".encode())
    return s


def value(k):
    return (json.dumps({"dtype": "i64", "shape": [3],
                        "data": [k, 2 * k, 3 * k]}) + "\n").encode()


def uploads():
    # a value a second against a 3 s gap: 2 s of margin for a loaded machine
    srv = Server(BIN, "--request-timeout-s", "3", "--stream-idle-timeout-s",
                 "3", "--execution-idle-ms", "20000")
    n = 10
    xid = start_http(srv, RUNNING_SUM, [{"dtype": "i64", "shape": [],
                                          "data": n}])
    rd = Reader(srv.port, xid)
    s = upload_head(srv.port, xid)
    t0 = time.monotonic()
    for k in range(1, n + 1):
        s.sendall(chunk(value(k)))
        time.sleep(1.0)
    s.sendall(b"0\r\n\r\n")
    st, _, body = read_http_answer(s, timeout=30)
    s.close()
    fed_s = time.monotonic() - t0
    check(st == 200 and json.loads(body or b"{}").get("queued") == n,
          f"a chunked infeed of 1 value/s for {fed_s:.0f} s (request-"
          f"timeout-s 3): 200 {{queued: {n}}}: {st} {body[:200]}")
    rd.join(30)
    want, sums = [0, 0, 0], []
    for k in range(1, n + 1):
        want = [want[0] + k, want[1] + 2 * k, want[2] + 3 * k]
        sums.append(want)
    got = [ln.get("data") for ln in rd.lines[:-1]]
    check(got == sums, f"its outfeed, drained meanwhile, has every sum: "
          f"{got}")
    check(rd.lines and rd.lines[-1].get("state") == "succeeded",
          f"... and ends with the state succeeded: {rd.lines[-1:]}")

    # An upload that stops sending: 408 after stream-idle-timeout-s.
    x2 = start_http(srv, RUNNING_SUM, [{"dtype": "i64", "shape": [],
                                         "data": 5}])
    s = upload_head(srv.port, x2)
    s.sendall(chunk(value(1)))
    t0 = time.monotonic()
    st, _, body = read_http_answer(s, timeout=30)
    gap_s = time.monotonic() - t0
    s.close()
    check(st == 408 and b"stream-idle-timeout-s" in body,
          f"an upload that stops sending gets 408 stream-idle-timeout-s: "
          f"{st} {body[:200]}")
    check(2.5 < gap_s < 15, f"... after about 3 s: {gap_s:.2f} s")
    srv.request("DELETE", f"/v1/executions/{x2}")

    # Feeding an ended execution: 409 from the headers alone.
    s = upload_head(srv.port, xid)
    t0 = time.monotonic()
    st, _, body = read_http_answer(s, timeout=10)
    early_s = time.monotonic() - t0
    check(st == 409 and b"has ended" in body,
          f"an upload to an ended execution: 409 before its body: "
          f"{st} {body[:200]}")
    try:  # the body the client meant to send finds the connection closed
        for _ in range(64):
            s.sendall(chunk(b"x" * 65536))
    except OSError:
        pass
    s.close()
    print(f"uploads: 1 value/s for {fed_s:.1f} s with request-timeout-s 3: "
          f"200; an upload stopped: 408 after {gap_s:.2f} s; 409 to an ended "
          f"execution {early_s * 1000:.1f} ms after its headers")
    stop(srv)


if __name__ == "__main__":
    parts = [a for a in sys.argv[2:] if not a.startswith("--")]
    only = parts[0] if parts else "all"
    if only in ("all", "uploads"):
        uploads()
    if only in ("all", "queued"):
        queued()
    if only in ("all", "starvation"):
        starvation()
    if SANITIZED:
        check_clean_stops(STOPS)
    finish("robust_streams")
