# SPDX-License-Identifier: Apache-2.0
"""The module store (--store DIR, issue #14 item 4), against live servers:
a restart executes the module ids registered before it without
registering again; truncated, altered and foreign files are skipped with a
log line while the rest load; a second server on the same directory
serves what the first registered; DELETE removes the record; a module
evicted from a small cache still executes by id; names survive a
restart; a temporary file a crash left is removed at start.

usage: store_module.py SHLO_SERVER
       store_module.py SHLO_SERVER --artifact CORPUS_DIR
The second form stores a portable artifact (the corpus's
vhlo_emit_version_api.1_1_0.mlir.bc, bytes that are not text) and runs it
after a restart; SKIPPED (77) without the corpus."""
import json
import os
import re
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from srvtest import Server, check, finish  # noqa: E402

SERVER = sys.argv[1]

# Three programs with known answers: f(x) = x + 1, g(x) = x * 2 (with a
# second function, registered with "entry": "twice"), h(x) = -x.
ADD1 = """func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
  %c = stablehlo.constant dense<1.0> : tensor<3xf32>
  %r = stablehlo.add %x, %c : tensor<3xf32>
  return %r : tensor<3xf32>
}
"""
TWICE = """func.func @other(%x: tensor<3xf32>) -> tensor<3xf32> {
  return %x : tensor<3xf32>
}
func.func @twice(%x: tensor<3xf32>) -> tensor<3xf32> {
  %r = stablehlo.add %x, %x : tensor<3xf32>
  return %r : tensor<3xf32>
}
"""
NEG = """func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
  %r = stablehlo.negate %x : tensor<3xf32>
  return %r : tensor<3xf32>
}
"""
X = {"dtype": "f32", "shape": [3], "data": [1.0, 2.0, 3.0]}
# A module whose own attributes name a 2 x 1 grid (its id is the text's
# hash alone), answering each process's replica id.
OWN_GRID = """module @g attributes {mhlo.num_replicas = 2 : i64} {
func.func @main() -> tensor<ui32> {
  %r = stablehlo.replica_id : tensor<ui32>
  return %r : tensor<ui32>
}
}
"""


def register(srv, program, **extra):
    st, body = srv.post("/v1/modules", dict(program=program, **extra))
    check(st == 200, f"register: {st} {body}")
    return body.get("id") if isinstance(body, dict) else None


def run(srv, mid):
    """POST /v1/modules/{id}/execute with X: (status, data or body)."""
    st, body = srv.post(f"/v1/modules/{mid}/execute", {"inputs": [X]})
    if st == 200:
        return st, body["outputs"][0]["data"]
    return st, body


def record(d, mid):
    return os.path.join(d, mid.split(":", 1)[1] + ".module")


def restart_and_skips(d):
    a = Server(SERVER, "--store", d)
    ids = {"add1": register(a, ADD1, name="plus-one"),
           "twice": register(a, TWICE, entry="twice"),
           "neg": register(a, NEG),
           "trunc": register(a, NEG.replace("negate", "abs")),
           "alter": register(a, ADD1.replace("1.0", "5.0")),
           "owngrid": register(a, OWN_GRID),
           # the grid named by the request: in the id
           "reqgrid": register(a, OWN_GRID.replace("num_replicas = 2",
                                                   "num_replicas = 1"),
                               replicas=3)}
    check(run(a, ids["twice"]) == (200, [2.0, 4.0, 6.0]), "twice before")
    for mid in ids.values():
        check(os.path.isfile(record(d, mid)), f"no record file for {mid}")
    check(not [f for f in os.listdir(d) if ".tmp-" in f],
          "temporary files left in the store")
    check(a.stop() == 0, "first server stopped cleanly")

    # Damage two records and add files that are not records.
    p = record(d, ids["trunc"])
    with open(p, "rb") as f:
        data = f.read()
    with open(p, "wb") as f:
        f.write(data[: len(data) - 20])
    p = record(d, ids["alter"])
    with open(p, "rb") as f:
        data = f.read()
    with open(p, "wb") as f:  # same size, one byte of the program changed
        f.write(data.replace(b"5.0", b"6.0"))
    with open(os.path.join(d, "junk.module"), "w") as f:
        f.write("not a module")
    with open(os.path.join(d, "f" * 64 + ".module"), "wb") as f:
        f.write(b"\x00\xff" * 10)
    # a write a crash cut short: neither loaded nor counted
    with open(record(d, ids["neg"]) + ".tmp-1-0", "wb") as f:
        f.write(b"shlo-module 1\nid ")

    b = Server(SERVER, "--store", d)
    log = b.log()
    check(re.search(r"store .*: 5 module\(s\) loaded, 4 skipped", log),
          f"start summary: {log[:600]}")
    trunc = ids["trunc"].split(":")[1]
    check(re.search(rf"event=store_skipped file={trunc}\.module reason=\"\d+ "
                    r"bytes, the header says \d+\"", log),
          "truncated record: log line")
    alter = ids["alter"].split(":")[1]
    check(re.search(rf"event=store_skipped file={alter}\.module reason=\"the "
                    r"program does not hash to its id\"", log),
          "altered record: log line")
    check("file=junk.module reason=\"not a module file\"" in log,
          "foreign file: log line")
    check(".tmp-" not in log, "a temporary file is not mentioned")
    check(re.search(r"file=f{64}\.module reason=\"no shlo-module 2 \(or 1\) header\"",
                    log), "garbage record: log line")
    # Executed by the ids of before, with nothing registered again.
    check(run(b, ids["add1"]) == (200, [2.0, 3.0, 4.0]), "add1 after restart")
    check(run(b, ids["twice"]) == (200, [2.0, 4.0, 6.0]),
          "twice after restart (its entry function kept)")
    check(run(b, ids["neg"]) == (200, [-1.0, -2.0, -3.0]), "neg after restart")
    st, body = run(b, ids["trunc"])
    check(st == 404, f"truncated module: {st}")
    check(run(b, ids["alter"])[0] == 404, "altered module is not served")
    st, _, listing = b.request("GET", "/v1/modules")
    listed = {m["id"] for m in json.loads(listing)["modules"]}
    for key, n in (("owngrid", 2), ("reqgrid", 3)):
        st, body = b.post(f"/v1/modules/{ids[key]}/execute", {})
        check(st == 200 and [p[0]["data"] for p in body.get("outputs", [])]
              == [[i] for i in range(n)], f"{key} after restart: {st} {body}")
    check(listed == {ids[k] for k in ("add1", "twice", "neg", "owngrid",
                                      "reqgrid")},
          f"listing after restart: {listed}")
    # The name came back with its module.
    st, _, meta = b.request("GET", "/v2/models/plus-one")
    check(st == 200 and json.loads(meta)["name"] == "plus-one",
          f"name after restart: {st} {meta[:200]}")
    return b, ids


def second_server(d, b, ids):
    c = Server(SERVER, "--store", d)
    # Registered on b after c started: c reads the record on its miss.
    sq = register(b, NEG.replace("negate %x", "multiply %x, %x"),
                  name="square")
    check(run(c, sq) == (200, [1.0, 4.0, 9.0]), "c runs what b registered")
    st, _, meta = c.request("GET", "/v2/models/square/ready")
    check(st == 200 and json.loads(meta) == {"name": "square", "ready": True},
          f"c knows b's name: {st} {meta[:200]}")
    # DELETE removes the record: a server started later does not know it.
    st, _, _ = b.request("DELETE", f"/v1/modules/{ids['neg']}")
    check(st == 200, "delete")
    check(not os.path.exists(record(d, ids["neg"])), "delete removed the record")
    check(run(b, ids["neg"])[0] == 404, "deleted module is gone")
    check(c.stop() == 0, "third server stopped cleanly")
    e = Server(SERVER, "--store", d)
    check(run(e, ids["neg"])[0] == 404, "deleted module stays gone")
    check(run(e, sq) == (200, [1.0, 4.0, 9.0]), "square after restart")
    check(e.stop() == 0, "fourth server stopped cleanly")


def eviction(d):
    # A cache that holds one of these modules: the other is evicted, and
    # read back from the store when it is run by id.
    # (a small module costs about 66k: its IR's first 64 KiB arena chunk)
    s = Server(SERVER, "--store", d, "--cache-bytes", "100k")
    a = register(s, ADD1)
    n = register(s, NEG)
    _, _, listing = s.request("GET", "/v1/modules")
    check(len(json.loads(listing)["modules"]) == 1, "the small cache holds one")
    check(run(s, a) == (200, [2.0, 3.0, 4.0]), "evicted module runs by id")
    check(run(s, n) == (200, [-1.0, -2.0, -3.0]), "and the other one too")
    check(s.stop() == 0, "eviction server stopped cleanly")


def refusals(d):
    s = Server(SERVER, "--store", d)
    st, body = s.post("/v1/modules", {"program": ADD1, "name": "a/b"})
    check(st == 400 and "name" in body["error"]["message"],
          f"bad name refused: {st} {body}")
    st, body = s.post("/v1/modules", {"program": ADD1, "name": 7})
    check(st == 400, f"non-string name refused: {st}")
    check(s.stop() == 0, "refusals server stopped cleanly")
    # A store that is a file, not a directory: a clear refusal to start.
    f = os.path.join(d, "plain-file")
    open(f, "w").close()
    import subprocess
    p = subprocess.run([SERVER, "--port", "0", "--store", f],
                       capture_output=True, text=True, timeout=30)
    check(p.returncode != 0 and "--store" in p.stderr,
          f"--store on a file: rc {p.returncode} {p.stderr[-300:]}")


def artifact(corpus):
    path = os.path.join(corpus, "vhlo", "vhlo_emit_version_api.1_1_0.mlir.bc")
    if not os.path.isfile(path):
        print(f"SKIP: no {path}")
        sys.exit(77)
    with open(path, "rb") as f:
        art = f.read()
    d = tempfile.mkdtemp(prefix="shlo-store-art-")
    try:
        a = Server(SERVER, "--store", d)
        st, _, raw = a.request("POST", "/v1/modules", art,
                               {"Content-Type": "application/octet-stream"})
        body = json.loads(raw)
        check(st == 200 and "artifact" in body, f"register artifact: {st} {raw[:200]}")
        mid = body.get("id")
        check(a.stop() == 0, "artifact server stopped cleanly")
        with open(record(d, mid), "rb") as f:
            check(f.read().endswith(art), "the record ends with the artifact's bytes")
        b = Server(SERVER, "--store", d)
        st, body = b.post(f"/v1/modules/{mid}/execute",
                          {"inputs": [{"dtype": "f32", "shape": [], "data": [1.5]}]})
        check(st == 200 and body["outputs"][0]["data"] == [3.0],
              f"artifact after restart: {st} {body}")
        st, _, info = b.request("GET", f"/v1/modules/{mid}")
        check(st == 200 and json.loads(info)["artifact"]["stablehlo_version"] == "1.1.0",
              f"artifact info after restart: {info[:300]}")
        check(b.stop() == 0, "second artifact server stopped cleanly")
    finally:
        shutil.rmtree(d, ignore_errors=True)
    finish("store_module --artifact")


def stale_temporaries(d):
    """Issue #30 item 8: a temporary file a crash left (untouched for more
    than 10 minutes) is removed at start; a young one, perhaps another
    server's write in progress, stays; a valid record still loads."""
    os.makedirs(d, exist_ok=True)
    a = Server(SERVER, "--store", d)
    mid = register(a, NEG)
    check(a.stop() == 0, "the first server stopped cleanly")
    old = record(d, mid) + ".tmp-4242-0"
    young = record(d, mid) + ".tmp-4243-0"
    for p in (old, young):
        with open(p, "wb") as f:
            f.write(b"shlo-module 1\nid half-written")
    an_hour_ago = os.path.getmtime(young) - 3600
    os.utime(old, (an_hour_ago, an_hour_ago))
    b = Server(SERVER, "--store", d)
    check(not os.path.exists(old), "the stale temporary file is gone")
    check(os.path.exists(young), "a young temporary file stays")
    check(re.search(r"event=store_removed file=\S+\.tmp-4242-0", b.log()),
          f"the removal is logged: {b.log()[-1500:]}")
    check(run(b, mid) == (200, [-1.0, -2.0, -3.0]),
          f"the valid record still loads: {run(b, mid)}")
    check(b.stop() == 0, "the second server stopped cleanly")


def main():
    if len(sys.argv) > 3 and sys.argv[2] == "--artifact":
        artifact(sys.argv[3])
    d = tempfile.mkdtemp(prefix="shlo-store-")
    try:
        b, ids = restart_and_skips(os.path.join(d, "s1"))
        second_server(os.path.join(d, "s1"), b, ids)
        check(b.stop() == 0, "second server stopped cleanly")
        eviction(os.path.join(d, "s2"))
        refusals(d)
        stale_temporaries(os.path.join(d, "s3"))
    finally:
        shutil.rmtree(d, ignore_errors=True)
    finish("store_module")


main()
