# SPDX-License-Identifier: Apache-2.0
"""Issue #35: request identity and execution traces at a live server.

An X-Request-Id and a W3C traceparent sent over HTTP, and a request id
sent in a binary EXECUTE, come back in the answer and are found in the
request log line, the audit line and the execution's trace; an id that is
not sane is replaced by one the server makes.  "trace": true (or the
binary trace flag, or trace-sample-rate 1) answers a trace id, GET
/v1/traces/{id} returns the Chrome trace JSON with the step spans to the
team that ran it (and an admin) and 404 to another team; kept traces are
bounded by trace-keep.  An old binary client's RESULT is unchanged.

With --sanitized (an ASan server) every server must also stop with status
0 and no sanitizer report.

usage: observability.py SHLO_SERVER [--sanitized]"""
import json
import os
import re
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from srvtest import (Server, check, check_clean_stops, finish,  # noqa: E402
                     wait_until)

BIN = sys.argv[1]
SANITIZED = sys.argv[2:] == ["--sanitized"]
STOPS = []  # (exit status, log) of each server
# a fresh folder: one named by the pid alone outlived its run, and a
# later run given the same pid read that run's audit lines as its own
TMP = tempfile.mkdtemp(prefix="shlo-obs-")
TOKENS = {"alice": "alpha-obs-secret-1", "bob": "beta-obs-secret-2",
          "root": "admin-obs-secret-3"}
PROG = """func.func @main() -> tensor<2xf32> {
  %c = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %0 = stablehlo.add %c, %c : tensor<2xf32>
  return %0 : tensor<2xf32>
}"""
TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT = "00f067aa0ba902b7"
TRACEPARENT = f"00-{TRACE_ID}-{PARENT}-01"
HEX32 = re.compile(r"^[0-9a-f]{32}$")

H = struct.Struct("<IHHIIQQ")
MAGIC = 0x424C4853
EXEC_INLINE, EXEC_REQUEST_ID, EXEC_TRACE = 1, 8, 16
RESULT_IDENTITY = 2


def auth(name):
    return {"Authorization": "Bearer " + TOKENS[name]}


def execute(srv, who, body, headers=None):
    h = dict(auth(who))
    h.update(headers or {})
    st, hd, data = srv.request("POST", "/execute", body, headers=h)
    try:
        return st, hd, json.loads(data)
    except ValueError:
        return st, hd, data


def audit_lines(path):
    try:
        with open(path) as f:
            return [json.loads(line) for line in f if line.strip()]
    except FileNotFoundError:
        return []


def audit_of(path, request_id):
    """The audit record of request_id, waiting for it a while (the line
    is written when the request completes)."""
    found = []
    wait_until(lambda: found.extend(a for a in audit_lines(path)
                                    if a.get("request_id") == request_id)
               or found, 10)
    return found[0] if found else None


def get_trace(srv, key, who):
    st, _, data = srv.request("GET", f"/v1/traces/{key}", headers=auth(who))
    return st, (json.loads(data) if st == 200 else data)


def check_step_spans(doc, what):
    ev = doc.get("traceEvents", [])
    steps = [e for e in ev if e.get("cat") == "step"]
    names = {e["name"] for e in ev}
    check(any(e["args"].get("op") == "stablehlo.add" for e in steps),
          f"{what}: a step span names stablehlo.add: {sorted(names)}")
    check("execute" in names, f"{what}: an execute span")
    check(all(e["ph"] == "X" and e["dur"] >= 0 for e in ev),
          f"{what}: complete spans")


def http_identity(srv, audit):
    body = {"program": PROG, "inputs": [], "trace": True}
    st, hd, ans = execute(srv, "alice", body, {"X-Request-Id": "req-http-1",
                                               "traceparent": TRACEPARENT})
    if not check(st == 200, f"traced execute: {st} {ans}"):
        return
    check(hd.get("x-request-id") == "req-http-1",
          f"X-Request-Id echoed: {hd.get('x-request-id')}")
    key = ans.get("trace_id", "")
    check(HEX32.match(key), f"the answer carries a trace id: {ans}")
    check(hd.get("x-trace-id") == key, "X-Trace-Id is the answer's trace id")
    check(wait_until(lambda: "request_id=req-http-1 " in srv.log(), 10),
          "the request log line names the request id")
    a = audit_of(audit, "req-http-1")
    check(a and a["trace_id"] == key and a["protocol"] == "http",
          f"the audit line names the request and its trace: {a}")
    st, doc = get_trace(srv, key, "alice")
    if check(st == 200, f"GET /v1/traces/{{id}} by its team: {st} {doc}"):
        od = doc["otherData"]
        check(od.get("request_id") == "req-http-1", f"trace request id: {od}")
        check(od.get("w3c_trace_id") == TRACE_ID and
              od.get("w3c_parent_span_id") == PARENT,
              f"the trace joins the caller's W3C trace: {od}")
        check(od.get("team") == "alpha", f"the trace names the team: {od}")
        check_step_spans(doc, "HTTP trace")
    st, _ = get_trace(srv, key, "bob")
    check(st == 404, f"another team gets 404 for the trace: {st}")
    st, _ = get_trace(srv, key, "root")
    check(st == 200, f"an admin may read any team's trace: {st}")
    st, _ = get_trace(srv, "0" * 32, "alice")
    check(st == 404, f"an unknown trace id is 404: {st}")


def http_ids_made(srv):
    for sent in (None, "bad id with spaces", "x" * 129, 'quote"d'):
        h = {"X-Request-Id": sent} if sent else {}
        st, hd, ans = execute(srv, "alice", {"program": PROG, "inputs": []},
                              h)
        rid = hd.get("x-request-id", "")
        check(st == 200 and HEX32.match(rid) and rid != sent,
              f"request id {sent!r} is replaced by a made one: {rid!r}")
        check("trace_id" not in ans and "x-trace-id" not in hd,
              f"an execute that does not ask is not traced: {ans}")
    st, _, _ = execute(srv, "alice", {"program": PROG, "inputs": [],
                                      "trace": "yes"})
    check(st == 400, f'"trace": "yes" is refused: {st}')
    st, hd, ans = execute(srv, "alice", {"program": "not mlir", "inputs": [],
                                         "trace": True})
    key = ans.get("trace_id", "") if isinstance(ans, dict) else ""
    check(st == 400 and HEX32.match(key) and hd.get("x-trace-id") == key,
          f"a failed request's answer names its trace too: {st} {ans}")
    st, doc = get_trace(srv, key, "alice")
    names = [e["name"] for e in doc.get("traceEvents", [])] if st == 200 else []
    check(any(n.startswith("module (not found") for n in names) and
          "execute" not in names,
          f"...which shows where it failed: {st} {names}")
    st, hd, ans = execute(srv, "alice", {"program": PROG, "inputs": [],
                                         "trace": True},
                          {"traceparent": "00-zz-nothex-01"})
    if check(st == 200, f"a bad traceparent is ignored: {st}"):
        _, doc = get_trace(srv, ans["trace_id"], "alice")
        od = doc["otherData"] if isinstance(doc, dict) else {}
        check(HEX32.match(od.get("w3c_trace_id", "")) and
              "w3c_parent_span_id" not in od,
              f"...and the trace starts a W3C trace of its own: {od}")


def async_identity(srv):
    """An asynchronous execution carries its creating request's id: in
    its state object, and in its trace when it asked for one."""
    h = dict(auth("alice"))
    h["X-Request-Id"] = "req-async-1"
    st, hd, data = srv.request("POST", "/v1/executions",
                               {"program": PROG, "inputs": [], "trace": True},
                               headers=h)
    ans = json.loads(data) if st == 202 else {}
    if not check(st == 202 and ans.get("request_id") == "req-async-1" and
                 hd.get("x-request-id") == "req-async-1",
                 f"an asynchronous execution names its request: {st} {ans}"):
        return
    end = {}
    for _ in range(100):
        st, _, data = srv.request("GET", f"/v1/executions/{ans['id']}"
                                  "?wait_ms=200", headers=auth("alice"))
        end = json.loads(data) if st == 200 else {}
        if end.get("state") not in ("queued", "running"):
            break
    check(end.get("state") == "succeeded" and
          end.get("request_id") == "req-async-1",
          f"...to its end: {end}")
    key = end.get("trace_id", "")
    st, doc = get_trace(srv, key, "alice")
    check(st == 200 and doc["otherData"].get("request_id") == "req-async-1",
          f"its trace names the request: {st} {key}")


def bin_hello(token):
    t = token.encode()
    body = struct.pack("<HHIQ", 1, 2, len(t), 0) + t + bytes(-len(t) % 8)
    return H.pack(MAGIC, 1, 1, 0, 0, 0, len(body)) + body


def bin_execute(rid, flags, req_id=b"", id_len=None):
    text = PROG.encode()
    n = len(req_id) if id_len is None else id_len
    body = (bytes(32) + struct.pack("<IIQIIQII", flags, 0, len(text), 0, 0,
                                    0, 0, n)
            + text + bytes(-len(text) % 8) + req_id + bytes(-len(req_id) % 8))
    return H.pack(MAGIC, 2, 5, 0, 0, rid, len(body)) + body


def bin_answers(s, want):
    """{id: (type, payload)} for the ids in want (RESULT or ERROR)."""
    got, buf = {}, b""
    while set(got) != want:
        k = s.recv(65536)
        if not k:
            break
        buf += k
        while len(buf) >= 32:
            _, _, t, _, _, rid, n = H.unpack_from(buf)
            if len(buf) < 32 + n:
                break
            if t in (6, 7):
                got[rid] = (t, buf[32:32 + n])
            buf = buf[32 + n:]
    return got


def identity_of(payload):
    """(request id, trace id, the values' bytes) of a RESULT payload."""
    flags = struct.unpack_from("<I", payload, 32)[0]
    if not flags & RESULT_IDENTITY:
        return None, None, payload[64:]
    rl, tl, _ = struct.unpack_from("<IIQ", payload, 64)
    off = 80
    rid = payload[off:off + rl].decode()
    off += rl + (-rl % 8)
    tid = payload[off:off + tl].decode()
    off += tl + (-tl % 8)
    return rid, tid, payload[off:]


def binary_identity(srv, audit):
    s = socket.create_connection(("127.0.0.1", srv.bport))
    s.settimeout(20)
    s.sendall(bin_hello(TOKENS["alice"]) +
              bin_execute(1, EXEC_INLINE | EXEC_REQUEST_ID | EXEC_TRACE,
                          b"req-bin-7") +
              bin_execute(2, EXEC_INLINE) +
              bin_execute(3, EXEC_INLINE | EXEC_REQUEST_ID, b"bad id!"))
    got = bin_answers(s, {1, 2, 3})
    s.close()
    # a refused frame closes its connection: on one of its own
    s = socket.create_connection(("127.0.0.1", srv.bport))
    s.settimeout(20)
    s.sendall(bin_hello(TOKENS["alice"]) +
              bin_execute(4, EXEC_INLINE, b"", id_len=8))
    got.update(bin_answers(s, {4}))
    s.close()
    t, pl = got.get(1, (0, b""))
    if check(t == 6, f"binary EXECUTE with an id: RESULT ({t})"):
        rid, key, rest = identity_of(pl)
        check(rid == "req-bin-7", f"the RESULT echoes the request id: {rid}")
        check(key and HEX32.match(key), f"...and names its trace: {key!r}")
        _, _, plain = identity_of(got.get(2, (0, bytes(64)))[1])
        check(rest == plain, "the values follow the identity block")
        check(wait_until(lambda: "request_id=req-bin-7 " in srv.log(), 10),
              "the binary log line names the request id")
        a = audit_of(audit, "req-bin-7")
        check(a and a["protocol"] == "binary" and a["trace_id"] == key,
              f"the binary audit line names the request and trace: {a}")
        st, doc = get_trace(srv, key, "alice")
        if check(st == 200, f"the binary execution's trace: {st}"):
            check(doc["otherData"].get("request_id") == "req-bin-7",
                  f"trace request id: {doc['otherData']}")
            check_step_spans(doc, "binary trace")
        st, _ = get_trace(srv, key, "bob")
        check(st == 404, f"another team gets 404 for it: {st}")
    t, pl = got.get(2, (0, b""))
    check(t == 6 and not struct.unpack_from("<I", pl, 32)[0] & RESULT_IDENTITY
          and len(pl) == 64 + 16 + 8 + 8,  # header, dims, 2 x f32
          "an EXECUTE without the new flags gets the old RESULT")
    t, pl = got.get(3, (0, b""))
    rid = identity_of(pl)[0] if t == 6 else None
    check(rid and HEX32.match(rid), f"an id that is not sane is replaced: {rid}")
    t, _ = got.get(4, (0, b""))
    check(t == 7, f"a request id length without its flag is refused: {t}")


def bounded():
    srv = Server(BIN, "--trace-sample-rate", "1", "--trace-keep", "2")
    try:
        keys = []
        for _ in range(3):
            st, body = srv.post("/execute", {"program": PROG, "inputs": []})
            keys.append(body.get("trace_id") if st == 200 else None)
        check(all(keys), f"trace-sample-rate 1 traces every execution: {keys}")
        st = [srv.request("GET", f"/v1/traces/{k}")[0] for k in keys]
        check(st == [404, 200, 200], f"trace-keep 2 keeps the last two: {st}")
        m = srv.metrics()
        check(m.get("shlo_traces_kept") == 2 and
              m.get("shlo_traces_recorded_total") == 3,
              f"the trace figures: {m.get('shlo_traces_kept')}")
        # the next traces reuse the buffers of the dropped ones: each holds
        # its own spans only
        for k in range(3):
            st, hd, _ = srv.request("POST", "/execute",
                                    {"program": PROG, "inputs": []},
                                    headers={"X-Request-Id": f"req-reuse-{k}"})
            st, doc = get_trace(srv, hd.get("x-trace-id", "-"), "alice")
            ev = doc.get("traceEvents", []) if st == 200 else []
            roots = [e for e in ev if e["cat"] == "request"]
            check(st == 200 and len(roots) == 1 and
                  doc["otherData"]["request_id"] == f"req-reuse-{k}" and
                  len([e for e in ev if e["name"] == "execute"]) == 1,
                  f"a reused trace holds its own spans only: {st} "
                  f"{[e['name'] for e in ev]}")
    finally:
        STOPS.append((srv.stop(), srv.log()))


def json_log():
    """--log-format json: one object a line with the request's fields;
    bad values of the new options stop the server at start (exit 2)."""
    srv = Server(BIN, "--log-format", "json", "--trace-sample-rate", "1")
    try:
        st, hd, _ = srv.request("POST", "/execute",
                                {"program": PROG, "inputs": []},
                                headers={"X-Request-Id": "req-json-1"})
        check(st == 200, f"execute with a JSON log: {st}")
        found = []

        def line_seen():
            for line in srv.log().splitlines():
                if line.startswith("{") and '"req-json-1"' in line:
                    found.append(json.loads(line))
                    return True
            return False
        if check(wait_until(line_seen, 10), "a JSON log line for the request"):
            rec = found[0]
            for key in ("time", "level", "request_id", "team", "route",
                        "module", "status", "duration_ms", "trace_id"):
                check(key in rec, f"the JSON log line has {key}: {rec}")
            check(rec.get("level") == "info" and rec.get("status") == 200 and
                  rec.get("route") == "/execute" and
                  rec.get("module", "").startswith("sha256:"),
                  f"the JSON log line's values: {rec}")
            check(rec.get("trace_id") == hd.get("x-trace-id"),
                  "the log line names the sampled trace")
    finally:
        STOPS.append((srv.stop(), srv.log()))
    for flag, value in (("--log-format", "xml"), ("--trace-sample-rate", "2"),
                        ("--trace-sample-rate", "half")):
        p = subprocess.run([BIN, "--port", "0", flag, value],
                           capture_output=True, text=True, timeout=30)
        check(p.returncode == 2 and flag[2:] in p.stderr,
              f"{flag} {value} stops the server at start: {p.returncode} "
              f"{p.stderr!r}")


def collector():
    """A fake OTLP/HTTP collector on a free port: (port, bodies received,
    the server to shut down)."""
    import http.server
    bodies = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            n = int(self.headers.get("Content-Length", 0))
            bodies.append((self.path, self.headers.get("Content-Type"),
                           self.rfile.read(n)))
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"{}")

        def log_message(self, *args):
            pass
    httpd = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd.server_address[1], bodies, httpd


def check_otlp_request(req, what):
    """The ExportTraceServiceRequest of one traced execute with
    TRACEPARENT and request id req-otlp-1."""
    rs = req["resourceSpans"][0]
    names = {a["key"]: a["value"] for a in rs["resource"]["attributes"]}
    check(names.get("service.name") == {"stringValue": "shlo-server"},
          f"{what}: service.name: {names}")
    spans = rs["scopeSpans"][0]["spans"]
    roots = [s for s in spans if s["kind"] == 2]
    if not check(len(roots) == 1, f"{what}: one SERVER span: {len(roots)}"):
        return
    root = roots[0]
    attrs = {a["key"]: list(a["value"].values())[0] for a in root["attributes"]}
    check(root.get("parentSpanId") == PARENT and root["traceId"] == TRACE_ID,
          f"{what}: the root span is the caller's span's child: {root}")
    check(attrs.get("shlo.request_id") == "req-otlp-1" and
          attrs.get("shlo.team") == "anonymous",
          f"{what}: the root names the request and team: {attrs}")
    kids = [s for s in spans if s is not root]
    check(kids and all(s["traceId"] == TRACE_ID and
                       s.get("parentSpanId") == root["spanId"] for s in kids),
          f"{what}: the stages and steps are the root's children")
    ops = [a["value"]["stringValue"] for s in kids for a in s["attributes"]
           if a["key"] == "shlo.op"]
    check("stablehlo.add" in ops, f"{what}: a step span names its op: {ops}")
    now = time.time() * 1e9
    check(all(abs(int(s["startTimeUnixNano"]) - now) < 600e9 and
              int(s["endTimeUnixNano"]) >= int(s["startTimeUnixNano"])
              for s in spans), f"{what}: wall-clock times")


def otlp():
    """--otlp-endpoint: every trace also leaves as OTLP/JSON, POSTed to a
    collector or appended to a file."""
    port, bodies, httpd = collector()
    srv = Server(BIN, "--trace-sample-rate", "1", "--otlp-endpoint",
                 f"http://127.0.0.1:{port}/v1/traces")
    try:
        st, _, _ = srv.request("POST", "/execute",
                               {"program": PROG, "inputs": []},
                               headers={"X-Request-Id": "req-otlp-1",
                                        "traceparent": TRACEPARENT})
        check(st == 200, f"execute with an OTLP exporter: {st}")
        if check(wait_until(lambda: bodies, 10), "the collector got a POST"):
            path, ctype, body = bodies[0]
            check(path == "/v1/traces" and ctype == "application/json",
                  f"OTLP/HTTP JSON to the path: {path} {ctype}")
            check_otlp_request(json.loads(body), "OTLP/HTTP")
        check(wait_until(lambda: srv.metrics().get(
            'shlo_otlp_exports_total{result="sent"}') == 1, 10),
              "the export is counted as sent")
    finally:
        STOPS.append((srv.stop(), srv.log()))
        httpd.shutdown()
    path = os.path.join(TMP, "otlp.jsonl")
    srv = Server(BIN, "--trace-sample-rate", "1", "--otlp-endpoint",
                 f"file:{path}")
    try:
        srv.request("POST", "/execute", {"program": PROG, "inputs": []},
                    headers={"X-Request-Id": "req-otlp-1",
                             "traceparent": TRACEPARENT})
    finally:
        STOPS.append((srv.stop(), srv.log()))
    with open(path) as f:
        lines = [json.loads(line) for line in f if line.strip()]
    if check(len(lines) == 1, f"one OTLP request a line in the file: "
                              f"{len(lines)}"):
        check_otlp_request(lines[0], "OTLP file")
    p = subprocess.run([BIN, "--port", "0", "--otlp-endpoint", "ftp://x"],
                       capture_output=True, text=True, timeout=30)
    check(p.returncode == 2 and "otlp-endpoint" in p.stderr,
          f"a malformed --otlp-endpoint stops the server: {p.returncode}")


def main():
    tokens = os.path.join(TMP, "tokens")
    with open(tokens, "w") as f:
        f.write(f"alice {TOKENS['alice']} team=alpha\n"
                f"bob {TOKENS['bob']} team=beta\n"
                f"root {TOKENS['root']} team=ops scopes=execute,admin\n")
    audit = os.path.join(TMP, "audit.log")
    srv = Server(BIN, "--tokens", tokens, "--audit-log", audit,
                 binary_port=True)
    try:
        http_identity(srv, audit)
        http_ids_made(srv)
        async_identity(srv)
        binary_identity(srv, audit)
    finally:
        STOPS.append((srv.stop(), srv.log()))
    bounded()
    json_log()
    otlp()
    check(all(rc == 0 for rc, _ in STOPS), "every server stops with status 0")
    if SANITIZED:
        check_clean_stops(STOPS)
    finish("observability")


try:
    main()
finally:
    shutil.rmtree(TMP, ignore_errors=True)
