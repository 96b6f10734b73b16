# SPDX-License-Identifier: Apache-2.0
"""Issue #35: /metrics as a Prometheus user expects it.

After a mixed workload (executions that succeed, fail to parse, name a
missing module, run past a team's rate quota (429), a registered module
by name, a binary EXECUTE, a traced execution), Debian's `promtool check
metrics` accepts /metrics: a # HELP and # TYPE for every family, counters
ending in _total.  Per-team requests have every status class, 429s in
4xx; per-module series are labelled by registered name or short id; with
1,000 distinct modules the module label keeps metrics-max-modules + 1
values, and the module series still add up to every request.  SKIPPED
(77) without promtool (Debian package prometheus).

usage: metrics_promtool.py SHLO_SERVER"""
import http.client
import json
import os
import re
import shutil
import socket
import struct
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from srvtest import Server, check, finish  # noqa: E402

BIN = sys.argv[1]
TMP = f"/tmp/shlo-promtool-{os.getpid()}"
TOKENS = {"alice": "alpha-prom-secret-1", "bob": "beta-prom-secret-2",
          "root": "admin-prom-secret-3"}
MAX_MODULES = 5
H = struct.Struct("<IHHIIQQ")


def prog(k):
    return ("func.func @main() -> tensor<2xf32> {\n"
            f"  %c = stablehlo.constant dense<[1.0, {k}.0]> : tensor<2xf32>\n"
            "  return %c : tensor<2xf32>\n}")


def auth(name):
    return {"Authorization": "Bearer " + TOKENS[name],
            "Content-Type": "application/json"}


class Conn:
    """One keep-alive connection: many requests without a handshake each."""
    def __init__(self, port):
        self.c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)

    def send(self, method, path, body, who):
        self.c.request(method, path, body=json.dumps(body) if body is not None
                       else None, headers=auth(who))
        r = self.c.getresponse()
        return r.status, r.read()


def metrics_text(srv):
    st, _, data = srv.request("GET", "/metrics", headers=auth("root"))
    check(st == 200, f"/metrics for an admin: {st}")
    return data.decode()


def promtool(text, what):
    p = subprocess.run(["promtool", "check", "metrics"], input=text,
                       capture_output=True, text=True, timeout=60)
    check(p.returncode == 0,
          f"promtool check metrics {what}: {p.returncode} {p.stdout}{p.stderr}")


def samples(text, family):
    """[(labels dict, value)] of one family's samples."""
    out = []
    for m in re.finditer(rf"^{family}\{{([^}}]*)\}} (\S+)$", text, re.M):
        labels = dict(re.findall(r'(\w+)="([^"]*)"', m.group(1)))
        out.append((labels, float(m.group(2))))
    return out


def binary_execute(port):
    t = TOKENS["alice"].encode()
    hello = struct.pack("<HHIQ", 1, 1, len(t), 0) + t + bytes(-len(t) % 8)
    text = prog(7).encode()
    body = (bytes(32) + struct.pack("<IIQIIQII", 1, 0, len(text), 0, 0, 0, 0,
                                    0) + text + bytes(-len(text) % 8))
    s = socket.create_connection(("127.0.0.1", port))
    s.settimeout(20)
    s.sendall(H.pack(0x424C4853, 1, 1, 0, 0, 0, len(hello)) + hello +
              H.pack(0x424C4853, 1, 5, 0, 0, 9, len(body)) + body)
    got = b""
    while True:  # WELCOME, then the EXECUTE's answer
        while len(got) >= 32 and len(got) >= 32 + H.unpack_from(got)[6]:
            t = H.unpack_from(got)[2]
            if t in (6, 7):
                s.close()
                return t
            got = got[32 + H.unpack_from(got)[6]:]
        k = s.recv(65536)
        if not k:
            s.close()
            return 0
        got += k


def mixed_workload(srv):
    c = Conn(srv.port)
    st, body = c.send("POST", "/v1/modules", {"program": prog(1),
                                              "name": "mymodel"}, "alice")
    check(st == 200, f"register mymodel: {st}")
    ok = st == 200  # a registration is a 2xx request that names it
    mid = json.loads(body)["id"] if st == 200 else "x"
    for _ in range(3):
        st, _ = c.send("POST", f"/v1/modules/{mid}/execute", {"inputs": []},
                       "alice")
        ok += st == 200
    st, _ = c.send("POST", "/execute", {"program": prog(2), "inputs": [],
                                        "trace": True}, "alice")
    ok += st == 200
    st, _ = c.send("POST", "/execute", {"program": "not mlir",
                                        "inputs": []}, "alice")
    check(st == 400, f"a parse error: {st}")
    st, _ = c.send("POST", "/v1/modules/nosuch/execute", {"inputs": []},
                   "alice")
    check(st == 404, f"a missing module: {st}")
    statuses = [Conn(srv.port).send("POST", "/execute",
                                    {"program": prog(3), "inputs": []},
                                    "bob")[0] for _ in range(4)]
    check(429 in statuses, f"team beta's rate quota answers 429: {statuses}")
    check(binary_execute(srv.bport) == 6, "a binary EXECUTE: RESULT")
    return ok + statuses.count(200) + 1  # + the binary one


def check_teams(text):
    rows = samples(text, "shlo_team_requests_total")
    for team in ("alpha", "beta"):
        got = {lab["status"] for lab, _ in rows if lab["team"] == team}
        check(got == {"1xx", "2xx", "3xx", "4xx", "5xx"},
              f"team {team} has every status class: {sorted(got)}")
    four = sum(v for lab, v in rows if lab == {"team": "beta",
                                                "status": "4xx"})
    refused = sum(v for lab, v in samples(text, "shlo_team_refused_total")
                  if lab["team"] == "beta" and lab["quota"] == "rate")
    check(refused >= 1 and four >= refused,
          f"beta's 429s by quota ({refused}) are in its 4xx ({four})")
    check(re.search(r'^shlo_build_info\{version="[0-9.]+"\} 1$', text, re.M),
          "shlo_build_info{version=...} 1")


def check_modules(text, executed):
    rows = samples(text, "shlo_module_requests_total")
    names = {lab["module"] for lab, _ in rows}
    check("mymodel" in names, f"a registered module is labelled by its "
          f"name: {sorted(names)}")
    check(len(names) <= MAX_MODULES + 1 and "other" in names,
          f"at most {MAX_MODULES} modules and other: {len(names)}")
    ok = sum(v for lab, v in rows if lab["status"] == "2xx")
    check(ok == executed, f"the module series add up to every successful "
          f"request that named a module: {ok} of {executed}")
    hist = samples(text, "shlo_module_execution_seconds_count")
    check({lab["module"] for lab, _ in hist} == names,
          "an execution histogram per module label")
    errs = [lab for lab, v in samples(text, "shlo_module_errors_total")
            if v > 0]
    check(all(lab["kind"] for lab in errs), "errors are counted by kind")


def many_modules(srv, n):
    c = Conn(srv.port)
    ok = 0
    for k in range(100, 100 + n):
        st, _ = c.send("POST", "/execute", {"program": prog(k), "inputs": []},
                       "alice")
        ok += st == 200
    return ok


def main():
    if not shutil.which("promtool"):
        print("SKIP: promtool missing (Debian package prometheus)")
        sys.exit(77)
    os.makedirs(TMP, exist_ok=True)
    tokens = os.path.join(TMP, "tokens")
    with open(tokens, "w") as f:
        f.write(f"alice {TOKENS['alice']} team=alpha\n"
                f"bob {TOKENS['bob']} team=beta\n"
                f"root {TOKENS['root']} team=ops scopes=execute,admin\n"
                "@beta rate=1 burst=1\n")
    srv = Server(BIN, "--tokens", tokens, "--metrics-max-modules",
                 str(MAX_MODULES), "--cache-bytes", "16m", binary_port=True)
    try:
        executed = mixed_workload(srv)
        text = metrics_text(srv)
        promtool(text, "after a mixed workload")
        check_teams(text)
        check_modules(text, executed)
        executed += many_modules(srv, 1000)
        text = metrics_text(srv)
        promtool(text, "after 1,000 modules")
        check_modules(text, executed)
    finally:
        check(srv.stop() == 0, "the server stops with status 0")
        shutil.rmtree(TMP, ignore_errors=True)
    finish("metrics_promtool")


main()
