# SPDX-License-Identifier: Apache-2.0
"""Issue #34 items 3 and 4: a model repository (--model-repository).

A folder of four models, team alpha's: "adder" with two versions (add,
multiply) and a config.json naming its tensors; "broken", whose one
version does not parse; "neg", a portable artifact (model.mlir.bc, made
by `shlo serialize`) whose JAX attributes name its tensors; "slow", a
long loop.  Explicit mode: nothing loads at start; an admin loads each
(broken is refused with its reason and does not stop the others);
/v2/repository/index lists every version's state; each version runs;
team beta sees none of it; a version added on disk appears after a load;
unloading slow while an inference of it runs leaves that inference to
finish with the right answer while new ones get 404.  Mode none loads
the folder at start and again on SIGHUP (a new version, a removed model);
mode poll finds a new version by itself.

usage: model_repository.py SHLO_SERVER SHLO_CLI"""
import json
import os
import shutil
import signal
import subprocess
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from srvtest import (Server, check, check_clean_stops,  # noqa: E402
                     finish, loop_program, wait_metrics, wait_until)

SERVER, CLI = sys.argv[1], sys.argv[2]
TMP = f"/tmp/shlo-repo-{os.getpid()}"
TOKENS = {"alice": "alpha-repo-3b9e0c", "bob": "beta-repo-7d1f42",
          "root": "admin-repo-c05a18"}
SLOW_STEPS = 250_000_000  # seconds of work: far longer than an unload

BINARY = """func.func @main(%x: tensor<2xf32>, %y: tensor<2xf32>) -> tensor<2xf32> {{
  %r = stablehlo.{op} %x, %y : tensor<2xf32>
  return %r : tensor<2xf32>
}}
"""
NEG = """func.func @main(%x: tensor<3xi32> {jax.arg_info = "x"}) -> (tensor<3xi32> {jax.result_info = "neg"}) {
  %r = stablehlo.negate %x : tensor<3xi32>
  return %r : tensor<3xi32>
}
"""


def write(path, text, mode="w"):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, mode) as f:
        f.write(text)


def make_repository(root):
    write(f"{root}/adder/1/model.mlir", BINARY.format(op="add"))
    write(f"{root}/adder/2/model.mlir", BINARY.format(op="multiply"))
    write(f"{root}/adder/config.json", json.dumps({
        "team": "alpha", "version_policy": {"all": {}},
        "input": [{"name": "a"}, {"name": "b"}],
        "output": [{"name": "out"}]}))
    write(f"{root}/broken/1/model.mlir", "func.func @main( this is no program")
    write(f"{root}/broken/config.json", '{"team": "alpha"}')
    write(f"{root}/neg/src.mlir", NEG)
    os.makedirs(f"{root}/neg/1")
    rc = subprocess.run([CLI, "serialize", f"{root}/neg/src.mlir", "-o",
                         f"{root}/neg/1/model.mlir.bc"], capture_output=True,
                        text=True)
    check(rc.returncode == 0, f"shlo serialize makes the artifact: {rc.stderr}")
    write(f"{root}/neg/config.json", '{"team": "alpha"}')
    write(f"{root}/slow/1/model.mlir", loop_program(SLOW_STEPS))
    write(f"{root}/slow/config.json", '{"team": "alpha"}')
    # configurations that cannot be served: each model alone fails
    for name, config in BAD_CONFIGS.items():
        write(f"{root}/{name}/1/model.mlir", BINARY.format(op="add"))
        write(f"{root}/{name}/config.json", config)


BAD_CONFIGS = {  # name: (config.json, what the reason says)
    "notjson": "{team: alpha",
    "noteam": '{"team": "gamma"}',
    "arity": '{"team": "alpha", "input": [{"name": "a"}]}',
    "policy": '{"team": "alpha", "version_policy": {"newest": 2}}',
    "entry": '{"team": "alpha", "entry_function": "absent"}',
}
BAD_REASONS = {"notjson": "JSON", "noteam": "gamma", "arity": "1 input",
               "policy": "version_policy", "entry": "absent"}


def call(srv, method, path, who, body=None, timeout=60):
    st, _, data = srv.request(method, path, body,
                              {"Authorization": "Bearer " + TOKENS[who]},
                              timeout)
    try:
        return st, json.loads(data)
    except ValueError:
        return st, data


def index(srv, who):
    st, j = call(srv, "POST", "/v2/repository/index", who, {})
    check(st == 200 and isinstance(j, list), f"index answers a list: {st} {j}")
    return {(r["name"], r.get("version")): r for r in j} if st == 200 else {}


def infer(srv, who, model, inputs):
    body = {"inputs": [{"name": n, "datatype": dt, "shape": [len(d)],
                        "data": d} for n, dt, d in inputs]}
    st, j = call(srv, "POST", f"/v2/models/{model}/infer", who, body)
    if st != 200:
        return st, j
    return st, {o["name"]: o["data"] for o in j["outputs"]}


def is_oip_error(j, *words):
    return isinstance(j, dict) and list(j) == ["error"] and \
        isinstance(j["error"], str) and all(w in j["error"] for w in words)


def run_adder(srv, version, want):
    path = "adder" if version is None else f"adder/versions/{version}"
    # the inputs by the config's names, in the other order
    st, out = infer(srv, "alice", path, [("b", "FP32", [3, 4]),
                                         ("a", "FP32", [10, 20])])
    check(st == 200 and out == {"out": want},
          f"adder {version or '(default)'} gives {want}: {st} {out}")


def stopped(srv):
    """Stop srv: it exits 0, and a sanitized build reports nothing (a
    version's reference left behind would be a leak)."""
    rc = srv.stop()
    check_clean_stops([(rc, srv.log())])


def explicit_mode(root, tokens):
    srv = Server(SERVER, "--tokens", tokens, "--model-repository", root,
                 "--model-control-mode", "explicit",
                 "--default-timeout-ms", "600000",
                 # a worker for the unload while the slow one runs, on any
                 # number of cores
                 "--threads", "3")
    try:
        idx = index(srv, "root")
        check(all(idx.get((m, None), {}).get("reason") == "unloaded"
                  for m in ("adder", "broken", "neg", "slow")),
              f"explicit: every model is listed unloaded at start: {idx}")
        check(index(srv, "alice") == {},
              "a team sees no model that was never loaded (it has no team "
              "yet)")
        st, j = call(srv, "POST", "/v2/repository/models/adder/load", "alice")
        check(st == 403 and is_oip_error(j), f"a team's token may not load "
              f"models: {st} {j}")
        for m in ("adder", "neg", "slow"):
            st, j = call(srv, "POST", f"/v2/repository/models/{m}/load",
                         "root")
            check(st == 200, f"admin loads {m}: {st} {j}")
        st, j = call(srv, "POST", "/v2/repository/models/broken/load", "root")
        check(st == 400 and is_oip_error(j, "broken", "parse"),
              f"loading broken fails with its reason: {st} {j}")
        for name, word in BAD_REASONS.items():
            st, j = call(srv, "POST", f"/v2/repository/models/{name}/load",
                         "root")
            check(st == 400 and is_oip_error(j, word),
                  f"{name} cannot load, and says why ({word}): {st} {j}")
        st, j = call(srv, "POST", "/v2/repository/models/..%2Fetc/load",
                     "root")
        check(st in (400, 404) and is_oip_error(j),
              f"a name that leaves the folder: {st} {j}")
        st, j = call(srv, "POST", "/v2/repository/models/nothere/load",
                     "root")
        check(st == 404 and is_oip_error(j), f"no such folder: {st} {j}")
        idx = {k: v for k, v in index(srv, "alice").items()
               if k[0] not in BAD_CONFIGS}
        want = {("adder", "1"): "READY", ("adder", "2"): "READY",
                ("broken", "1"): "UNAVAILABLE", ("neg", "1"): "READY",
                ("slow", "1"): "READY"}
        check({k: v["state"] for k, v in idx.items()} == want,
              f"index of team alpha: {idx}")
        check("parse" in idx.get(("broken", "1"), {}).get("reason", ""),
              f"the broken version's reason is its parse error: {idx}")
        check("event=repository_unavailable model=broken version=1"
              in srv.log(), "the failure is logged")
        st, j = call(srv, "POST", "/v2/repository/index", "alice",
                     {"ready": True})
        check(st == 200 and sorted((r["name"], r.get("version")) for r in j) ==
              [("adder", "1"), ("adder", "2"), ("neg", "1"), ("slow", "1")],
              f"index with ready: true lists the ready versions: {j}")
        run_adder(srv, 1, [13.0, 24.0])
        run_adder(srv, 2, [30.0, 80.0])
        run_adder(srv, None, [30.0, 80.0])  # the latest is the default
        st, out = infer(srv, "alice", "neg", [("x", "INT32", [1, -2, 3])])
        check(st == 200 and out == {"neg": [-1, 2, -3]},
              f"the artifact runs, its tensors named by JAX's attributes: "
              f"{st} {out}")
        st, j = call(srv, "GET", "/v2/models/adder", "alice")
        check(st == 200 and j.get("versions") == ["1", "2"] and
              [t["name"] for t in j["inputs"]] == ["a", "b"] and
              [t["name"] for t in j["outputs"]] == ["out"],
              f"adder's metadata: versions and the config's names: {j}")
        # team beta sees none of it
        check(index(srv, "bob") == {}, "team beta's index is empty")
        st, j = call(srv, "GET", "/v2/models/adder", "bob")
        check(st == 404 and is_oip_error(j), f"beta has no adder: {st} {j}")
        st, j = call(srv, "GET", "/v2/models", "bob")
        check(st == 200 and j == {"models": []}, f"beta lists nothing: {j}")
        # a version added on disk: there after a load, the default then
        write(f"{root}/adder/3/model.mlir", BINARY.format(op="subtract"))
        st, _ = call(srv, "GET", "/v2/models/adder/versions/3", "alice")
        check(st == 404, f"version 3 is unknown before the load: {st}")
        st, j = call(srv, "POST", "/v2/repository/models/adder/load", "root")
        check(st == 200, f"load again: {st} {j}")
        run_adder(srv, 3, [7.0, 16.0])
        run_adder(srv, None, [7.0, 16.0])
        run_adder(srv, 1, [13.0, 24.0])
        unload_in_flight(srv)
    finally:
        stopped(srv)


def unload_in_flight(srv):
    admin = {"Authorization": "Bearer " + TOKENS["root"]}
    got = {}

    def run():
        got["answer"] = infer(srv, "alice", "slow", [])

    t = threading.Thread(target=run)
    t.start()
    dt, _ = wait_metrics(srv, lambda m: m.get("shlo_executions_running") == 1,
                         60, headers=admin)
    check(dt is not None, "the slow inference runs")
    st, j = call(srv, "POST", "/v2/repository/models/slow/unload", "root")
    check(st == 200, f"unload slow while it runs: {st} {j}")
    running = srv.metrics(admin).get("shlo_executions_running")
    check(running == 1 and t.is_alive(),
          f"the inference still runs after the unload: {running}")
    st, j = call(srv, "POST", "/v2/models/slow/infer", "alice",
                 {"inputs": []})
    check(st == 404 and is_oip_error(j), f"a new inference of slow: 404 "
          f"{st} {j}")
    check(index(srv, "alice").get(("slow", None), {}).get("reason") ==
          "unloaded", "the index says slow is unloaded")
    t.join(600)
    st, out = got.get("answer", (None, None))
    check(st == 200 and out == {"output0": [SLOW_STEPS]},
          f"the inference in flight completes with the right answer: {st} "
          f"{out}")


def none_mode(root, tokens):
    srv = Server(SERVER, "--tokens", tokens, "--model-repository", root)
    try:
        idx = index(srv, "alice")
        check(idx.get(("adder", "3"), {}).get("state") == "READY" and
              idx.get(("neg", "1"), {}).get("state") == "READY" and
              idx.get(("broken", "1"), {}).get("state") == "UNAVAILABLE",
              f"mode none loads the folder at start: {idx}")
        st, j = call(srv, "POST", "/v2/repository/models/adder/load", "root")
        check(st == 400 and is_oip_error(j, "explicit"),
              f"no load in mode none: {st} {j}")
        write(f"{root}/adder/4/model.mlir", BINARY.format(op="maximum"))
        shutil.rmtree(f"{root}/broken")
        srv.proc.send_signal(signal.SIGHUP)
        check(wait_until(lambda: ("adder", "4") in index(srv, "alice"), 60),
              "SIGHUP loads the new version")
        check(wait_until(lambda: ("broken", "1") not in index(srv, "alice"),
                         60), "SIGHUP forgets the removed model")
        run_adder(srv, 4, [10.0, 20.0])
    finally:
        stopped(srv)


def evicted(root, tokens):
    """A cache too small to keep the versions: each is still served (the
    repository holds it) and the start summary counts every failure."""
    srv = Server(SERVER, "--tokens", tokens, "--model-repository", root,
                 "--cache-bytes", "100000")
    try:
        check(f"version(s) ready, {len(BAD_CONFIGS)} unavailable" in
              srv.log(), "the start counts each model or version that "
              "failed")
        for v in (1, 2, 4):
            run_adder(srv, v, {1: [13.0, 24.0], 2: [30.0, 80.0],
                               4: [10.0, 20.0]}[v])
    finally:
        stopped(srv)


def poll_mode(root, tokens):
    srv = Server(SERVER, "--tokens", tokens, "--model-repository", root,
                 "--model-control-mode", "poll", "--repository-poll-secs",
                 "1")
    try:
        check(("adder", "4") in index(srv, "alice"), "poll loads at start")
        write(f"{root}/adder/5/model.mlir", BINARY.format(op="minimum"))
        check(wait_until(lambda: ("adder", "5") in index(srv, "alice"), 60),
              "poll finds the new version")
        run_adder(srv, 5, [3.0, 4.0])
    finally:
        stopped(srv)


ROWS = """func.func @main(%x: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %r = stablehlo.negate %x : tensor<?x3xf32>
  return %r : tensor<?x3xf32>
}
"""


PBTXT = """name: "pb"
platform: "shlo"   # Triton's fields that this server does not need are read
parameters { key: "team" value { string_value: "alpha" } }
input [
  { name: "a" data_type: TYPE_FP32 dims: [ 2 ] },
  { name: "b" data_type: TYPE_FP32 dims: [ 2 ] }
]
output { name: "sum" data_type: TYPE_FP32 dims: [ 2 ] }
version_policy { all { } }
model_warmup [ { name: "z"
  inputs { key: "a" value { data_type: TYPE_FP32 dims: [ 2 ] zero_data: true } }
  inputs { key: "b" value { data_type: TYPE_FP32 dims: 2 random_data: true } }
} ]
"""


def warmup(tokens):
    """config.json's model_warmup (Triton's spelling) runs at load: the
    samples that fit run (count times each; zero_data, random_data, a
    file of warmup/, a batch of batch_size rows) and the log says how
    many ran; a sample that does not fit the program makes the version
    UNAVAILABLE with the reason, and the others still load."""
    root = TMP + "/warm"

    def sample(a, b=None, **extra):
        ins = {"a": a, "b": b or {"data_type": "TYPE_FP32", "dims": [2],
                                  "zero_data": True}}
        return dict(extra, inputs=ins)

    f32 = {"data_type": "TYPE_FP32", "dims": [2]}
    models = {
        "warm": [sample(dict(f32, zero_data=True), name="zeros", count=3),
                 sample(dict(f32, random_data=True)),
                 sample(dict(f32, input_data_file="a.bin"))],
        "coldshape": [sample(dict(f32, dims=[3], zero_data=True))],
        "coldtype": [sample(dict(f32, data_type="TYPE_INT32",
                                 zero_data=True))],
        "coldname": [{"inputs": {"c": dict(f32, zero_data=True)}}],
        "coldfile": [sample(dict(f32, input_data_file="../a.bin"))],
        "coldsize": [sample(dict(f32, input_data_file="short.bin"))],
        "colddata": [sample(f32)],
    }
    for name, samples in models.items():
        write(f"{root}/{name}/1/model.mlir", BINARY.format(op="add"))
        write(f"{root}/{name}/config.json", json.dumps({
            "team": "alpha", "input": [{"name": "a"}, {"name": "b"}],
            "model_warmup": samples}))
    write(f"{root}/warm/warmup/a.bin", b"\0\0\x80\x3f\0\0\0\x40", "wb")
    write(f"{root}/coldsize/warmup/short.bin", b"\0\0\x80\x3f", "wb")
    write(f"{root}/rows/1/model.mlir", ROWS)
    write(f"{root}/rows/config.json", json.dumps({
        "team": "alpha", "max_batch_size": 4, "model_warmup": [
            {"batch_size": 2, "inputs": {"input0": {
                "data_type": "TYPE_FP32", "dims": [3], "zero_data": True}}}]}))
    # Triton's config.pbtxt where there is no config.json
    write(f"{root}/pb/1/model.mlir", BINARY.format(op="add"))
    write(f"{root}/pb/config.pbtxt", PBTXT)
    write(f"{root}/pbbad/1/model.mlir", BINARY.format(op="add"))
    write(f"{root}/pbbad/config.pbtxt", 'name: "pbbad"\ninput [ { name: "a')
    srv = Server(SERVER, "--tokens", tokens, "--model-repository", root)
    try:
        idx = index(srv, "alice")
        state = {k[0]: v for k, v in idx.items()}
        check(state.get("pb", {}).get("state") == "READY" and
              'event=repository_warmed_up model=pb version=1 '
              'reason="1 run(s)"' in srv.log(),
              f"a config.pbtxt model loads, its warm-up run: {state}")
        run = infer(srv, "alice", "pb", [("b", "FP32", [1, 2]),
                                         ("a", "FP32", [3, 4])])
        check(run == (200, {"sum": [4.0, 6.0]}),
              f"config.pbtxt's tensor names serve /v2: {run}")
        # no team yet (its config did not parse): the admin's index has it
        r = index(srv, "root").get(("pbbad", None), {})
        check(r.get("state") == "UNAVAILABLE" and
              "config.pbtxt:2: a string without its closing quote" in
              r.get("reason", ""),
              f"a config.pbtxt that does not parse, with its line: {r}")
        check(state.get("warm", {}).get("state") == "READY" and
              state.get("rows", {}).get("state") == "READY",
              f"the versions whose warm-up runs are ready: {idx}")
        log = srv.log()
        check('event=repository_warmed_up model=warm version=1 '
              'reason="5 run(s)"' in log and
              'event=repository_warmed_up model=rows version=1 '
              'reason="1 run(s)"' in log,
              f"the log counts the warm-up runs: {log[-2000:]}")
        reasons = {"coldshape": "model_warmup 0", "coldtype": "i32",
                   "coldname": "\"c\" is no input",
                   "coldfile": "input_data_file",
                   "coldsize": "size", "colddata": "zero_data"}
        for name, word in reasons.items():
            r = state.get(name, {})
            check(r.get("state") == "UNAVAILABLE" and
                  "warm-up" in r.get("reason", "") and
                  word in r.get("reason", ""),
                  f"{name}: a warm-up that fails makes the version "
                  f"unavailable, with the reason ({word}): {r}")
        run = infer(srv, "alice", "warm", [("a", "FP32", [1, 2]),
                                           ("b", "FP32", [3, 4])])
        check(run == (200, {"output0": [4.0, 6.0]}),
              f"the warmed-up model answers: {run}")
        # a changed config.json is checked again on the unchanged version
        write(f"{root}/warm/config.json", json.dumps({
            "team": "alpha", "input": [{"name": "a"}, {"name": "b"}],
            "model_warmup": models["coldshape"]}))
        srv.proc.send_signal(signal.SIGHUP)

        def warm_state():
            return index(srv, "alice").get(("warm", "1"), {})
        check(wait_until(lambda: warm_state().get("state") == "UNAVAILABLE",
                         60) and "warm-up" in warm_state().get("reason", ""),
              f"after SIGHUP the new warm-up fails the version: "
              f"{warm_state()}")
        st, _ = infer(srv, "alice", "warm", [("a", "FP32", [1, 2]),
                                             ("b", "FP32", [3, 4])])
        check(st == 404, f"and it is no longer served: {st}")
    finally:
        stopped(srv)


def main():
    shutil.rmtree(TMP, ignore_errors=True)
    os.makedirs(TMP)
    root, tokens = TMP + "/models", TMP + "/tokens"
    write(tokens, f"alice {TOKENS['alice']} team=alpha\n"
                  f"bob {TOKENS['bob']} team=beta\n"
                  f"root {TOKENS['root']} scopes=admin\n")
    make_repository(root)
    try:
        explicit_mode(root, tokens)
        none_mode(root, tokens)
        evicted(root, tokens)
        poll_mode(root, tokens)
        warmup(tokens)
    finally:
        shutil.rmtree(TMP, ignore_errors=True)
    finish("model_repository")


main()
