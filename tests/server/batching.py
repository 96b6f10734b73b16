# SPDX-License-Identifier: Apache-2.0
"""Issue #34 item 6: dynamic batching.

A module registered with "batching" and a dynamic leading dimension:
concurrent clients (gated to send together, over /v1 execute and /v2
infer, 1 to 3 rows each) get bit-for-bit the answers each request gets
alone, and /metrics shows that at least one execution stacked two or more
requests.  The batch of the gated clients forms by design, not by timing:
its leader waits up to 5 s, and dispatches as soon as every worker that
may take the module's jobs waits in it.  A full per-model queue answers
429 with Retry-After.  Batching a static program, or with a bad key, is
refused at registration.  With --sanitized, the server must stop with
status 0 and no report.

usage: batching.py SHLO_SERVER [--sanitized]"""
import base64
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from srvtest import Server, check, check_clean_stops, finish, \
    wait_metrics, wait_until  # noqa: E402

BIN = sys.argv[1]
SANITIZED = "--sanitized" in sys.argv[2:]
WORKERS = 8


def program(arg="x"):
    """Elementwise: every output row is its input row's alone."""
    return (f"func.func @main(%{arg}: tensor<?x3xf32>, %b: tensor<?x3xf32>)"
            f" -> (tensor<?x3xf32>, tensor<?x3xf32>) {{\n"
            f"  %p = stablehlo.multiply %{arg}, %{arg} : tensor<?x3xf32>\n"
            f"  %q = stablehlo.subtract %p, %b : tensor<?x3xf32>\n"
            f"  %r = stablehlo.divide %q, %b : tensor<?x3xf32>\n"
            f"  %m = stablehlo.maximum %{arg}, %b : tensor<?x3xf32>\n"
            f"  return %r, %m : tensor<?x3xf32>, tensor<?x3xf32>\n}}\n")


STATIC = ("func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {\n"
          "  return %x : tensor<2x3xf32>\n}\n")


def inputs(i):
    """Client i's two arguments: 1 to 3 rows of values that round."""
    rows = 1 + i % 3
    x = [((i * 7 + k) % 11) / 3.0 - 1.5 for k in range(rows * 3)]
    b = [((i * 5 + k) % 13) / 7.0 + 0.1 for k in range(rows * 3)]
    return rows, x, b


def execute_v1(srv, mid, i):
    """Each output's (shape, raw bytes) from /v1, or the status."""
    return execute_at(srv, f"/v1/modules/{mid}/execute", i)


def execute_at(srv, route, i):
    """Each output's (shape, raw bytes) from an execute route, or the
    status."""
    rows, x, b = inputs(i)
    st, j = srv.post(route, {
        "inputs": [{"dtype": "f32", "shape": [rows, 3], "data": x},
                   {"dtype": "f32", "shape": [rows, 3], "data": b}],
        "output_format": "b64"}, timeout=60)
    if st != 200:
        return st, j
    return [(o["shape"], base64.b64decode(o["b64"])) for o in j["outputs"]]


def infer_v2(srv, name, i):
    """Each output's (shape, raw bytes) from /v2 infer, or the status."""
    import struct
    rows, x, b = inputs(i)
    st, j = srv.post(f"/v2/models/{name}/infer", {"inputs": [
        {"name": "input0", "datatype": "FP32", "shape": [rows, 3], "data": x},
        {"name": "input1", "datatype": "FP32", "shape": [rows, 3],
         "data": b}]}, timeout=60)
    if st != 200:
        return st, j
    # JSON numbers of f32 values: packed back to f32, exactly the bits
    return [(o["shape"], struct.pack(f"<{len(o['data'])}f", *o["data"]))
            for o in j["outputs"]]


def binary_clients(srv, mid, alone):
    """The same gated clients over the binary protocol (the Python
    client, when numpy is there): the same bytes as alone."""
    try:
        import numpy as np
        sys.path.insert(0, os.path.join(os.path.dirname(
            os.path.abspath(__file__)), "..", "..", "client", "python"))
        import shlo_client
    except ImportError as e:
        print(f"binary protocol part skipped: {e}")
        return
    ex0 = batch_figures(srv, mid)
    mods = [shlo_client.Client(f"shlo://127.0.0.1:{srv.bport}").compile(
        program()) for _ in range(WORKERS)]
    gate = threading.Barrier(WORKERS)
    got = [None] * WORKERS

    def client(i):
        rows, x, b = inputs(i)
        args = [np.array(v, np.float32).reshape(rows, 3) for v in (x, b)]
        gate.wait()
        out = mods[i].execute(*args)
        got[i] = [(list(a.shape), a.tobytes()) for a in out]

    ts = [threading.Thread(target=client, args=(i,)) for i in range(WORKERS)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    for i, g in enumerate(got):
        want = [(sh, by) for sh, by in alone[i]]
        check(g == want, f"binary client {i}: the batched answer is the "
              f"one it got alone: {g} vs {want}")
    ex, single, _ = batch_figures(srv, mid)
    check(ex - ex0[0] > single - ex0[1],
          "the binary protocol's executions batched too")


def batch_figures(srv, mid):
    """(executions, those of one request, refused) of module mid."""
    m = srv.metrics()
    lab = f'team="anonymous",module="{mid}"'
    return (m.get(f"shlo_batch_size_count{{{lab}}}", 0),
            m.get(f'shlo_batch_size_bucket{{{lab},le="1"}}', 0),
            m.get(f"shlo_batch_refused_total{{{lab}}}", 0))


def concurrent(srv, mid, name, n):
    """n clients gated to send together; half over /v2.  Their answers."""
    gate = threading.Barrier(n)
    got = [None] * n

    def client(i):
        gate.wait()
        got[i] = infer_v2(srv, name, i) if i % 2 else execute_v1(srv, mid, i)

    ts = [threading.Thread(target=client, args=(i,)) for i in range(n)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return got


def same_answers(srv, mid, name):
    # unbatched: registered with batching off, one client at a time
    st, j = srv.post("/v1/modules", {"program": program(), "name": name,
                                     "batching": {"max_batch_size": 0}})
    check(st == 200 and "batching" not in j, f"register unbatched: {st} {j}")
    mid = j["id"]
    alone = [infer_v2(srv, name, i) if i % 2 else execute_v1(srv, mid, i)
             for i in range(WORKERS)]
    check(all(isinstance(a, list) for a in alone), f"alone: {alone}")
    check(batch_figures(srv, mid)[0] == 0, "nothing batched while off")
    # the same module again, batching on: the name keeps its version
    reg = {"program": program(), "name": name,
           "batching": {"max_batch_size": 64, "max_queue_delay_us": 5000000}}
    st, j = srv.post("/v1/modules", reg)
    check(st == 200 and j.get("batching", {}).get("max_batch_size") == 64 and
          j.get("version") == 1, f"turn batching on: {st} {j}")
    ex0, single0, _ = batch_figures(srv, mid)
    for rnd in range(3):
        got = concurrent(srv, mid, name, WORKERS)
        for i, g in enumerate(got):
            check(g == alone[i], f"round {rnd} client {i}: the batched "
                  f"answer is the one it got alone: {g} vs {alone[i]}")
    ex, single, _ = batch_figures(srv, mid)
    check(ex > ex0 and (ex - ex0) - (single - single0) >= 1,
          f"at least one execution stacked two or more requests: "
          f"{ex - ex0} executions, {single - single0} of one request")
    binary_clients(srv, mid, alone)
    return alone


def queue_limit(srv):
    reg = {"program": program("y"), "batching": {
        "max_batch_size": 4, "max_queue_delay_us": 4000000,
        "max_queue_size": 1}}
    st, j = srv.post("/v1/modules", reg)
    check(st == 200, f"register a module with max_queue_size 1: {st} {j}")
    mid = j["id"]
    first = []
    t = threading.Thread(target=lambda: first.append(
        execute_v1(srv, mid, 0)))
    t.start()
    lab = f'shlo_batch_queue_depth{{team="anonymous",module="{mid}"}}'
    dt, _ = wait_metrics(srv, lambda m: m.get(lab) == 1, 30, step=0.01)
    check(dt is not None, "the first request waits in the batch queue")
    rows, x, b = inputs(1)
    st, h, data = srv.request("POST", f"/v1/modules/{mid}/execute", {
        "inputs": [{"dtype": "f32", "shape": [rows, 3], "data": x},
                   {"dtype": "f32", "shape": [rows, 3], "data": b}]})
    check(st == 429 and "retry-after" in h and
          b"max_queue_size" in data,
          f"a second request to the full queue: 429 {st} {h} {data}")
    t.join()
    check(first and isinstance(first[0], list),
          f"the waiting request still runs: {first}")
    check(batch_figures(srv, mid)[2] == 1, "the refusal is counted")


def preferred_sizes(srv):
    """preferred_batch_sizes [2] with requests of one row each: no
    execution takes more than 2 of them, whenever they come."""
    reg = {"program": program("w"), "batching": {
        "max_batch_size": 8, "max_queue_delay_us": 300000,
        "preferred_batch_sizes": [2]}}
    st, j = srv.post("/v1/modules", reg)
    check(st == 200, f"register with preferred sizes: {st} {j}")
    mid = j["id"]
    gate = threading.Barrier(6)
    got = [None] * 6

    def client(i):
        gate.wait()
        got[i] = execute_v1(srv, mid, 3 * i)  # one row each

    ts = [threading.Thread(target=client, args=(i,)) for i in range(6)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    check(all(isinstance(g, list) for g in got), f"answers: {got}")
    m = srv.metrics()
    lab = f'team="anonymous",module="{mid}"'
    count = m.get(f"shlo_batch_size_count{{{lab}}}", 0)
    check(count >= 3 and m.get(f'shlo_batch_size_bucket{{{lab},le="2"}}')
          == count, f"6 one-row requests in batches of at most 2: {count}")


def two_teams():
    """A team's batching is its own: while alpha's request waits in its
    queue of one (max_queue_size 1), beta's execution of the same program
    (registered without batching) runs at once, and batches nothing."""
    tok = {"alice": "alpha-batch-2f81", "bob": "beta-batch-77c3",
           "root": "admin-batch-90d1"}
    path = f"/tmp/shlo-batching-{os.getpid()}.tokens"
    with open(path, "w") as f:
        f.write(f"alice {tok['alice']} team=alpha\nbob {tok['bob']} "
                f"team=beta\nroot {tok['root']} scopes=admin\n")
    srv = Server(BIN, "--tokens", path, "--threads", "4",
                 "--short-lane-workers", "0")
    try:
        def call(who, path, obj):
            st, _, data = srv.request("POST", path, obj, {
                "Authorization": "Bearer " + tok[who]}, 60)
            return st, json.loads(data)

        st, a = call("alice", "/v1/modules", {
            "program": program("t"), "batching": {
                "max_batch_size": 4, "max_queue_delay_us": 4000000,
                "max_queue_size": 1}})
        st2, b = call("bob", "/v1/modules", {"program": program("t")})
        check(st == 200 and st2 == 200 and a["id"] == b["id"] and
              "batching" in a and "batching" not in b,
              f"one program, batching for alpha only: {a} {b}")
        rows, x, y = inputs(0)
        req = {"inputs": [{"dtype": "f32", "shape": [rows, 3], "data": x},
                          {"dtype": "f32", "shape": [rows, 3], "data": y}]}
        first = []
        t = threading.Thread(target=lambda: first.append(
            call("alice", f"/v1/modules/{a['id']}/execute", req)))
        t.start()
        admin = {"Authorization": "Bearer " + tok["root"]}
        lab = f'shlo_batch_queue_depth{{team="alpha",module="{a["id"]}"}}'
        dt, _ = wait_metrics(srv, lambda m: m.get(lab) == 1, 30, step=0.01,
                             headers=admin)
        check(dt is not None, "alpha's request waits in its batch queue")
        st, j = call("bob", f"/v1/modules/{b['id']}/execute", req)
        check(st == 200, f"beta's execution is not in alpha's queue: {st} {j}")
        m = srv.metrics(admin)
        check(not any('team="beta"' in k for k in m if "shlo_batch" in k),
              "beta has no batch queue")
        t.join()
        check(first and first[0][0] == 200, f"alpha's request ran: {first}")
    finally:
        rc = srv.stop()
        os.unlink(path)
    if SANITIZED:
        check_clean_stops([(rc, srv.log())])


def refusals(srv):
    st, j = srv.post("/v1/modules", {"program": STATIC,
                                     "batching": {"max_batch_size": 8}})
    check(st == 400 and "leading dimension" in json.dumps(j),
          f"a static program cannot batch: {st} {j}")
    st, j = srv.post("/v1/modules", {"program": program("z"),
                                     "batching": {"max_batch": 8}})
    check(st == 400 and "unknown key" in json.dumps(j),
          f"an unknown key is refused: {st} {j}")
    st, j = srv.post("/v1/modules", {"program": program("z"),
                                     "batching": {"max_batch_size": 4,
                                                  "preferred_batch_sizes":
                                                  [8]}})
    check(st == 400 and "over" in json.dumps(j),
          f"a preferred size over the maximum is refused: {st} {j}")


def execute_by_name(srv, path, i):
    """Each output's (shape, raw bytes) from /v1/models/PATH/execute."""
    return execute_at(srv, f"/v1/models/{path}/execute", i)


def repository_batching(alone):
    """A repository model's config.json batches as Triton's does
    (max_batch_size, dynamic_batching with Triton's spellings): gated
    clients over /v2 infer and /v1/models/NAME/execute get the bytes
    each got alone (from the first server: the same program), and at
    least one execution stacks two or more.  A static program with a
    max_batch_size, and a dynamic_batching key this server does not
    take, are UNAVAILABLE with their reasons."""
    root = f"/tmp/shlo-batching-repo-{os.getpid()}"
    models = {
        "rowsrepo": (program(), {"max_batch_size": 64, "dynamic_batching": {
            # protobuf's JSON writes a uint64 as a string
            "max_queue_delay_microseconds": "5000000",
            "default_queue_policy": {"max_queue_size": 100},
            "preserve_ordering": True}}),
        "static": (STATIC, {"max_batch_size": 8,
                            "dynamic_batching": {}}),
        "priority": (program("p"), {"max_batch_size": 8, "dynamic_batching":
                                    {"priority_levels": 2}}),
    }
    for name, (text, config) in models.items():
        os.makedirs(f"{root}/{name}/1")
        with open(f"{root}/{name}/1/model.mlir", "w") as f:
            f.write(text)
        with open(f"{root}/{name}/config.json", "w") as f:
            json.dump(config, f)
    srv = Server(BIN, "--threads", str(WORKERS), "--short-lane-workers", "0",
                 "--max-client-jobs", "0", "--model-repository", root)
    try:
        st, j = srv.post("/v2/repository/index", {})
        idx = {r["name"]: r for r in j} if st == 200 else {}
        check(idx.get("rowsrepo", {}).get("state") == "READY",
              f"the batching model loads: {j}")
        reason = idx.get("static", {}).get("reason", "")
        check(idx.get("static", {}).get("state") == "UNAVAILABLE" and
              "max_batch_size 8" in reason and "leading dimension" in reason,
              f"a static program with max_batch_size is unavailable, and "
              f"says why: {idx.get('static')}")
        reason = idx.get("priority", {}).get("reason", "")
        check(idx.get("priority", {}).get("state") == "UNAVAILABLE" and
              "priority_levels" in reason,
              f"an unknown dynamic_batching key: {idx.get('priority')}")
        st, j = srv.post("/v1/modules", {"program": program()})
        check(st == 200 and j.get("batching") == {
            "max_batch_size": 64, "max_queue_delay_us": 5000000,
            "max_queue_size": 100, "preferred_batch_sizes": []},
              f"the module's id, and the config's batching in Triton's "
              f"words as the server keeps it: {st} {j}")
        mid = j.get("id")
        ex0, single0, _ = batch_figures(srv, mid)
        for rnd in range(2):
            gate = threading.Barrier(WORKERS)
            got = [None] * WORKERS

            def client(i):
                gate.wait()
                got[i] = (infer_v2(srv, "rowsrepo", i) if i % 2 else
                          execute_by_name(srv, "rowsrepo/versions/1", i))

            ts = [threading.Thread(target=client, args=(i,))
                  for i in range(WORKERS)]
            for t in ts:
                t.start()
            for t in ts:
                t.join()
            for i, g in enumerate(got):
                check(g == alone[i], f"repository round {rnd} client {i}: "
                      f"batched is bit-identical to alone: {g} vs {alone[i]}")
        ex, single, _ = batch_figures(srv, mid)
        check(ex > ex0 and (ex - ex0) - (single - single0) >= 1,
              f"a repository model's executions stacked: {ex - ex0} "
              f"executions, {single - single0} of one request")
        m = srv.metrics()
        check(m.get(f'shlo_batch_queue_depth{{team="anonymous",'
                    f'module="{mid}"}}') == 0, "its queue is empty after")
        # the model's folder goes: after SIGHUP its batching goes too
        shutil.rmtree(f"{root}/rowsrepo")
        srv.proc.send_signal(signal.SIGHUP)

        def batching_now():
            return srv.post("/v1/modules", {"program": program()})[1]
        check(wait_until(lambda: "batching" not in batching_now(), 60),
              f"an unloaded version's batching ends: {batching_now()}")
    finally:
        rc = srv.stop()
        shutil.rmtree(root, ignore_errors=True)
    if SANITIZED:
        check_clean_stops([(rc, srv.log())])


def store_restart():
    """A registration's batching is kept in the --store record with the
    module: after a restart, the module batches as registered (a
    registration without "batching" answers the configuration in force);
    turned off, a restart keeps it off.  The record's line is what the
    server wrote: its fields, and an older record's lack of one, load."""
    store = f"/tmp/shlo-batching-store-{os.getpid()}"
    cfg = {"max_batch_size": 16, "max_queue_delay_us": 4000000,
           "preferred_batch_sizes": [4, 2], "max_queue_size": 3}
    kept = dict(cfg, preferred_batch_sizes=[2, 4])

    def registered(batching=None):
        body = {"program": program("k"), "name": "kept"}
        if batching is not None:
            body["batching"] = batching
        srv = Server(BIN, "--store", store)
        try:
            st, j = srv.post("/v1/modules", body)
        finally:
            rc = srv.stop()
        if SANITIZED:
            check_clean_stops([(rc, srv.log())])
        check(st == 200, f"register into the store: {st} {j}")
        return j

    try:
        j = registered(cfg)
        check(j.get("batching") == kept, f"batching on: {j}")
        with open(f"{store}/{j['id'][7:]}.module", "rb") as f:
            head = f.read().split(b"\n\n")[0].decode()
        check("\nbatching anonymous 16 4000000 3 2,4 main\n" in head + "\n",
              f"the record has the batching line: {head}")
        j = registered()
        check(j.get("batching") == kept,
              f"after a restart the module batches as registered: {j}")
        j = registered({"max_batch_size": 0})
        check("batching" not in j, f"batching off: {j}")
        j = registered()
        check("batching" not in j, f"and off after a restart: {j}")
    finally:
        shutil.rmtree(store, ignore_errors=True)


def main():
    srv = Server(BIN, "--threads", str(WORKERS), "--short-lane-workers", "0",
                 "--max-client-jobs", "0", binary_port=True)
    try:
        alone = same_answers(srv, None, "rows")
        queue_limit(srv)
        preferred_sizes(srv)
        refusals(srv)
        text = srv.request("GET", "/metrics")[2].decode()
        check(re.search(r"# TYPE shlo_batch_size histogram", text) and
              re.search(r"# TYPE shlo_batch_queue_delay_seconds histogram",
                        text), "the batch figures are histograms")
        if shutil.which("promtool"):
            r = subprocess.run(["promtool", "check", "metrics"], input=text,
                               capture_output=True, text=True)
            check(r.returncode == 0, f"promtool accepts the figures: "
                  f"{r.stdout} {r.stderr}")
    finally:
        rc = srv.stop()
    two_teams()
    repository_batching(alone)
    store_restart()
    if SANITIZED:
        check_clean_stops([(rc, srv.log())])
    finish("batching")


main()
