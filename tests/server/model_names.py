# SPDX-License-Identifier: Apache-2.0
"""Issue #34 items 1 and 2: model names belong to teams and have versions.

Two teams register the same name with different programs: each runs its
own through the Open Inference Protocol; neither sees the other's in a
route, a listing or an error; an admin reaches both as TEAM/NAME and is
told to when a bare name is ambiguous.  Registering a name again with
another program makes version 2 (the default from then on), with the same
program changes nothing; /v2/models/NAME/versions/V reaches each version;
the metadata lists them.  With --store all of it survives a restart, a
team's DELETE drops only its own names, and a record of the older format
gives its name as version 1.

usage: model_names.py SHLO_SERVER"""
import hashlib
import json
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from srvtest import Server, check, finish  # noqa: E402

BIN = sys.argv[1]
TMP = f"/tmp/shlo-names-{os.getpid()}"
TOKENS = {"alice": "alpha-names-5e2c1a", "bob": "beta-names-8f0b3d",
          "root": "admin-names-1c9e77"}


def const_program(v):
    return (f"func.func @main() -> tensor<2xf32> {{\n"
            f"  %c = stablehlo.constant dense<[{v}.0, {v + 1}.0]> : "
            f"tensor<2xf32>\n  return %c : tensor<2xf32>\n}}\n")


def call(srv, method, path, who, body=None):
    st, _, data = srv.request(method, path, body,
                              {"Authorization": "Bearer " + TOKENS[who]}, 60)
    try:
        return st, json.loads(data)
    except ValueError:
        return st, None


def infer(srv, who, model):
    """The first output's data of an infer of model, or the status."""
    st, j = call(srv, "POST", f"/v2/models/{model}/infer", who,
                 {"inputs": []})
    if st != 200:
        return st, j
    return j["outputs"][0]["data"], j


def register(srv, who, program, name):
    st, j = call(srv, "POST", "/v1/modules", who,
                 {"program": program, "name": name})
    check(st == 200, f"{who} registers {name}: {st} {j}")
    return j


def two_teams(srv):
    a1 = register(srv, "alice", const_program(10), "hello")
    b1 = register(srv, "bob", const_program(20), "hello")
    check(a1["version"] == 1 and b1["version"] == 1,
          f"each team's hello is its version 1: {a1} {b1}")
    got, j = infer(srv, "alice", "hello")
    check(got == [10.0, 11.0] and j.get("model_version") == "1",
          f"alpha's hello is alpha's program: {got} {j}")
    got, _ = infer(srv, "bob", "hello")
    check(got == [20.0, 21.0], f"beta's hello is beta's program: {got}")
    # neither reaches the other's: not by TEAM/NAME, not by id
    st, j = call(srv, "GET", "/v2/models/beta/hello", "alice")
    check(st == 404 and "beta" not in json.dumps(j).replace("beta/hello", ""),
          f"alpha cannot address beta/hello: {st} {j}")
    st, _ = call(srv, "GET", f"/v2/models/{b1['id']}", "alice")
    check(st == 404, f"alpha cannot reach beta's module by id: {st}")
    st, j = call(srv, "GET", "/v1/modules", "alice")
    ids = [m["id"] for m in j["modules"]]
    check(st == 200 and a1["id"] in ids and b1["id"] not in ids,
          f"alpha's listing has its module only: {ids}")
    st, j = call(srv, "GET", "/v2/models/hello/versions/2", "alice")
    check(st == 404 and "version 2" in j["error"],
          f"no version 2 yet, and the error says so: {st} {j}")
    # an admin: a bare name two teams have is ambiguous; TEAM/NAME is not
    st, j = call(srv, "GET", "/v2/models/hello", "root")
    check(st == 404 and "TEAM/hello" in j["error"],
          f"the admin is told to say TEAM/NAME: {st} {j}")
    got, _ = infer(srv, "root", "alpha/hello")
    check(got == [10.0, 11.0], f"the admin runs alpha/hello: {got}")
    got, _ = infer(srv, "root", "beta/hello")
    check(got == [20.0, 21.0], f"the admin runs beta/hello: {got}")
    return a1, b1


def versions(srv, a1):
    a2 = register(srv, "alice", const_program(30), "hello")
    check(a2["version"] == 2, f"a new program under hello is version 2: {a2}")
    again = register(srv, "alice", const_program(30), "hello")
    check(again["version"] == 2, f"the same program again stays 2: {again}")
    got, j = infer(srv, "alice", "hello")
    check(got == [30.0, 31.0] and j.get("model_version") == "2",
          f"the default is the latest version: {got} {j}")
    got, _ = infer(srv, "alice", "hello/versions/1")
    check(got == [10.0, 11.0], f"version 1 still runs: {got}")
    got, _ = infer(srv, "alice", "hello/versions/2")
    check(got == [30.0, 31.0], f"version 2 by number: {got}")
    st, j = call(srv, "GET", "/v2/models/hello", "alice")
    check(st == 200 and j.get("versions") == ["1", "2"],
          f"the metadata lists both versions: {st} {j}")
    got, _ = infer(srv, "bob", "hello")
    check(got == [20.0, 21.0], f"beta's hello did not move: {got}")
    st, _ = call(srv, "GET", "/v2/models/hello/versions/x", "alice")
    check(st == 400, f"a malformed version is a 400: {st}")
    return a2


def run_v1(srv, who, path, body=None):
    """POST /v1/models/PATH/execute: the first output's data, or the
    status and answer."""
    st, j = call(srv, "POST", f"/v1/models/{path}/execute", who,
                 {"inputs": []} if body is None else body)
    if st != 200:
        return st, j
    return j["outputs"][0]["data"], j


def execute_by_name(srv, a1, b1):
    """/v1/models/NAME[/versions/V]/execute resolves as /v2 does."""
    got, _ = run_v1(srv, "alice", "hello")
    check(got == [30.0, 31.0], f"/v1 by name: the latest version: {got}")
    got, _ = run_v1(srv, "alice", "hello/versions/1")
    check(got == [10.0, 11.0], f"/v1 by name and version: {got}")
    got, _ = run_v1(srv, "bob", "hello")
    check(got == [20.0, 21.0], f"beta's own hello over /v1: {got}")
    got, _ = run_v1(srv, "alice", a1["id"])
    check(got == [10.0, 11.0], f"an id the team owns in the name's place: "
          f"{got}")
    for who, path, what in (
            ("alice", "beta/hello", "another team's TEAM/NAME"),
            ("alice", b1["id"], "another team's id"),
            ("alice", "hello/versions/9", "a version that is not"),
            ("alice", f"{a1['id']}/versions/1", "an id with a version"),
            ("alice", "nothing", "an unknown name"),
            ("root", "hello", "a bare name two teams have (admin)")):
        st, j = run_v1(srv, who, path)
        # the answer repeats what was asked, and names no team beside
        check(st == 404 and "beta" not in json.dumps(j).replace(path, ""),
              f"{what}: 404 without the other team's name: {st} {j}")
    st, j = run_v1(srv, "root", "hello")
    check("TEAM/hello" in json.dumps(j), f"the admin is told TEAM/NAME: {j}")
    got, _ = run_v1(srv, "root", "alpha/hello/versions/1")
    check(got == [10.0, 11.0], f"the admin runs alpha/hello v1: {got}")
    got, _ = run_v1(srv, "root", "beta/hello")
    check(got == [20.0, 21.0], f"the admin runs beta/hello: {got}")
    unknown = "sha256:" + "0" * 64
    for route in (f"/v1/models/{unknown}/execute", f"/v2/models/{unknown}"):
        st, j = call(srv, "POST" if "v1" in route else "GET", route, "alice",
                     {"inputs": []} if "v1" in route else None)
        check(st == 404 and f"no model {unknown}" in json.dumps(j),
              f"an unknown id says so (no stale message): {route} {st} {j}")
    st, _ = run_v1(srv, "alice", "hello/versions/x")
    check(st == 404, f"a malformed version: {st}")
    st, j = run_v1(srv, "alice", "hello", {"program": const_program(1)})
    check(st == 400, f"a program in the body is refused: {st} {j}")
    st, _ = call(srv, "GET", "/v1/models/hello/execute", "alice")
    check(st == 405, f"execute is a POST: {st}")


def restart_and_delete(flags, a1, a2, b1, store):
    srv = Server(BIN, *flags)
    got, _ = infer(srv, "alice", "hello")
    check(got == [30.0, 31.0], f"after a restart alpha's default is v2: {got}")
    got, _ = infer(srv, "alice", "hello/versions/1")
    check(got == [10.0, 11.0], f"after a restart v1 runs: {got}")
    got, _ = infer(srv, "bob", "hello")
    check(got == [20.0, 21.0], f"after a restart beta's hello: {got}")
    st, _ = call(srv, "DELETE", f"/v1/modules/{b1['id']}", "bob")
    check(st == 200, f"beta deletes its module: {st}")
    st, _ = call(srv, "GET", "/v2/models/hello", "bob")
    check(st == 404, f"beta's hello is gone: {st}")
    got, _ = infer(srv, "alice", "hello")
    check(got == [30.0, 31.0], f"alpha's hello is untouched: {got}")
    st, _ = call(srv, "DELETE", f"/v1/modules/{a2['id']}", "alice")
    got, j = infer(srv, "alice", "hello")
    check(st == 200 and got == [10.0, 11.0] and
          j.get("model_version") == "1",
          f"deleting v2's module leaves v1 the latest: {st} {got} {j}")
    a3 = register(srv, "alice", const_program(40), "hello")
    check(a3["version"] == 3, f"a version number is never reused: {a3}")
    check(srv.stop() == 0, "server stopped cleanly (no sanitizer report)")
    # a record of the older format names its first team's version 1
    q = const_program(50)
    qid = "sha256:" + hashlib.sha256(q.encode()).hexdigest()
    with open(os.path.join(store, qid[7:] + ".module"), "w") as f:
        f.write(f"shlo-module 1\nid {qid}\nteam beta\nname older\n"
                f"entry \nreplicas 0\npartitions 0\nregistered 1\n"
                f"program-bytes {len(q)}\n\n{q}")
    srv = Server(BIN, *flags)
    got, j = infer(srv, "bob", "older")
    check(got == [50.0, 51.0] and j.get("model_version") == "1",
          f"an old record's name is version 1: {got} {j}")
    st, _ = call(srv, "GET", "/v2/models/older", "alice")
    check(st == 404, f"... of its team only: {st}")
    check(srv.stop() == 0, "server stopped cleanly (no sanitizer report)")


def main():
    tokens, store = TMP + ".tokens", TMP + ".store"
    with open(tokens, "w") as f:
        f.write(f"alice {TOKENS['alice']} team=alpha\n"
                f"bob {TOKENS['bob']} team=beta\n"
                f"root {TOKENS['root']} scopes=admin\n")
    shutil.rmtree(store, ignore_errors=True)
    flags = ("--tokens", tokens, "--store", store)
    srv = Server(BIN, *flags)
    a1, b1 = two_teams(srv)
    a2 = versions(srv, a1)
    execute_by_name(srv, a1, b1)
    check(srv.stop() == 0, "server stopped cleanly (no sanitizer report)")
    restart_and_delete(flags, a1, a2, b1, store)
    shutil.rmtree(store, ignore_errors=True)
    os.unlink(tokens)
    finish("model_names")


if __name__ == "__main__":
    main()
