# SPDX-License-Identifier: Apache-2.0
"""Issue #34 item 5: the Open Inference Protocol as its specification
describes it (KServe's "Open Inference Protocol (V2)": server metadata,
health, model metadata and readiness with and without a version, the
inference request and response objects, and the error object
{"error": $string}), plus what a Triton user also expects: GET
/v2/models lists the caller's models with their versions, a JAX export's
tensor names are the model's input and output names, and every /v2
answer that is an error has the protocol's shape, whatever the route.

Teams: alpha registers "mlp" twice (versions 1 and 2); beta sees nothing
of it; an admin sees it as alpha/mlp.

usage: oip_models.py SHLO_SERVER"""
import json
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from srvtest import Server, check, check_clean_stops, finish  # noqa: E402

SERVER = sys.argv[1]
TMP = f"/tmp/shlo-oipm-{os.getpid()}"
TOKENS = {"alice": "alpha-oip-6a0e13", "bob": "beta-oip-2c77d9",
          "root": "admin-oip-90b4f1"}

# y = x @ w + k: x [2,2] and w [2,2] FP32, y [2,2]; version 1 adds k = 0,
# version 2 k = 100.  JAX names its arguments and results this way.
MLP = """func.func @main(%x: tensor<2x2xf32> {{jax.arg_info = "x"}}, %w: tensor<2x2xf32> {{jax.arg_info = "w"}}) -> (tensor<2x2xf32> {{jax.result_info = "y"}}, tensor<2xf32> {{jax.result_info = "rowsum"}}) {{
  %m = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %k = stablehlo.constant dense<{k}.0> : tensor<2x2xf32>
  %y = stablehlo.add %m, %k : tensor<2x2xf32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %s = stablehlo.reduce(%y init: %z) applies stablehlo.add across dimensions = [1] : (tensor<2x2xf32>, tensor<f32>) -> tensor<2xf32>
  return %y, %s : tensor<2x2xf32>, tensor<2xf32>
}}
"""
X = [[1, 2], [3, 4]]
W = [[1, 0], [0, 2]]
Y1 = [1.0, 4.0, 3.0, 8.0]  # x @ w, row-major as the protocol sends it


def call(srv, method, path, who=None, body=None):
    h = {"Authorization": "Bearer " + TOKENS[who]} if who else {}
    st, hdrs, data = srv.request(method, path, body, h, 60)
    try:
        return st, json.loads(data), hdrs
    except ValueError:
        return st, data, hdrs


def is_error(j):
    """The specification's error object: {"error": $string}, no more."""
    return isinstance(j, dict) and list(j) == ["error"] and \
        isinstance(j["error"], str) and j["error"] != ""


def server_side(srv):
    st, j, h = call(srv, "GET", "/v2", "alice")
    check(st == 200 and isinstance(j.get("name"), str) and
          isinstance(j.get("version"), str) and
          isinstance(j.get("extensions"), list) and
          h.get("content-type") == "application/json",
          f"server metadata: name, version, extensions: {st} {j}")
    st, j, _ = call(srv, "GET", "/v2/health/live")
    check(st == 200 and j == {"live": True}, f"live: {st} {j}")
    st, j, _ = call(srv, "GET", "/v2/health/ready")
    check(st == 200 and j == {"ready": True}, f"ready: {st} {j}")


def metadata(srv):
    want_in = [{"name": "x", "datatype": "FP32", "shape": [2, 2]},
               {"name": "w", "datatype": "FP32", "shape": [2, 2]}]
    want_out = [{"name": "y", "datatype": "FP32", "shape": [2, 2]},
                {"name": "rowsum", "datatype": "FP32", "shape": [2]}]
    for path in ("/v2/models/mlp", "/v2/models/mlp/versions/1",
                 "/v2/models/mlp/versions/2"):
        st, j, _ = call(srv, "GET", path, "alice")
        check(st == 200 and j.get("name") == "mlp" and
              j.get("versions") == ["1", "2"] and
              isinstance(j.get("platform"), str) and
              j.get("inputs") == want_in and j.get("outputs") == want_out,
              f"model metadata {path}: {st} {j}")
    for path in ("/v2/models/mlp/ready", "/v2/models/mlp/versions/1/ready"):
        st, j, _ = call(srv, "GET", path, "alice")
        check(st == 200 and j == {"name": "mlp", "ready": True},
              f"model ready {path}: {st} {j}")


def inference(srv):
    # the specification's request object: an id, inputs by name (here in
    # the other order), parameters, and the outputs asked for
    req = {"id": "42", "parameters": {"priority": 1},
           "inputs": [{"name": "w", "shape": [2, 2], "datatype": "FP32",
                       "data": W},
                      {"name": "x", "shape": [2, 2], "datatype": "FP32",
                       "data": [1, 2, 3, 4]}],
           "outputs": [{"name": "y"}]}
    st, j, _ = call(srv, "POST", "/v2/models/mlp/versions/1/infer", "alice",
                    req)
    check(st == 200 and j == {"model_name": "mlp", "model_version": "1",
                              "id": "42", "outputs": [
                                  {"name": "y", "datatype": "FP32",
                                   "shape": [2, 2], "data": Y1}]},
          f"the inference response object, version 1: {st} {j}")
    del req["outputs"]
    st, j, _ = call(srv, "POST", "/v2/models/mlp/infer", "alice", req)
    outs = {o["name"]: o for o in j.get("outputs", [])} if st == 200 else {}
    check(st == 200 and j.get("model_version") == "2" and
          outs.get("y", {}).get("data") == [v + 100 for v in Y1] and
          outs.get("rowsum", {}).get("data") == [205.0, 211.0],
          f"no version: the latest (2), every output by name: {st} {j}")


def listings(srv):
    st, j, _ = call(srv, "GET", "/v2/models", "alice")
    check(st == 200 and j == {"models": [{"name": "mlp", "platform":
                                          "shlo_stablehlo",
                                          "versions": ["1", "2"]}]},
          f"alpha lists mlp with its versions: {st} {j}")
    st, j, _ = call(srv, "GET", "/v2/models", "bob")
    check(st == 200 and j == {"models": []}, f"beta lists nothing: {j}")
    st, j, _ = call(srv, "GET", "/v2/models", "root")
    check(st == 200 and [m["name"] for m in j["models"]] == ["alpha/mlp"],
          f"an admin lists every team's as TEAM/NAME: {j}")
    st, j, _ = call(srv, "GET", "/v1/modules", "alice")
    names = sorted(n["version"] for m in j["modules"] for n in m["names"]
                   if n["name"] == "mlp")
    check(st == 200 and names == [1, 2] and
          all("team" not in n for m in j["modules"] for n in m["names"]),
          f"/v1/modules gives each module its names and versions: {j}")
    st, j, _ = call(srv, "GET", "/v1/modules", "root")
    check(st == 200 and {(n["team"], n["version"]) for m in j["modules"]
                         for n in m["names"]} == {("alpha", 1), ("alpha", 2)},
          f"an admin's /v1/modules names each one's team: {j}")
    st, j, _ = call(srv, "GET", "/v1/modules", "bob")
    check(st == 200 and j == {"modules": []}, f"beta's /v1/modules: {j}")


BAD_INFER = [
    # (what, body): each a 400 of the protocol's shape
    ("an unknown input name", {"inputs": [
        {"name": "q", "shape": [2, 2], "datatype": "FP32", "data": X}]}),
    ("a missing input", {"inputs": [
        {"name": "x", "shape": [2, 2], "datatype": "FP32", "data": X}]}),
    ("an input twice", {"inputs": [
        {"name": "x", "shape": [2, 2], "datatype": "FP32", "data": X},
        {"name": "x", "shape": [2, 2], "datatype": "FP32", "data": X}]}),
    ("BYTES, which no StableHLO type is", {"inputs": [
        {"name": "x", "shape": [1], "datatype": "BYTES", "data": ["ab"]},
        {"name": "w", "shape": [2, 2], "datatype": "FP32", "data": W}]}),
    ("an unknown output", {"inputs": [
        {"name": "x", "shape": [2, 2], "datatype": "FP32", "data": X},
        {"name": "w", "shape": [2, 2], "datatype": "FP32", "data": W}],
        "outputs": [{"name": "z"}]}),
    ("a wrong shape", {"inputs": [
        {"name": "x", "shape": [4], "datatype": "FP32", "data": [1, 2, 3, 4]},
        {"name": "w", "shape": [2, 2], "datatype": "FP32", "data": W}]}),
]


def errors(srv):
    for what, body in BAD_INFER:
        st, j, _ = call(srv, "POST", "/v2/models/mlp/infer", "alice", body)
        check(st == 400 and is_error(j), f"{what}: 400 {st} {j}")
    st, j, _ = call(srv, "POST", "/v2/models/mlp/infer", "alice",
                    {"inputs": [{"name": "x", "shape": [2, 2],
                                 "datatype": "FP32", "data": X}]})
    check(is_error(j) and "w is missing" in j["error"],
          f"the missing input is named: {j}")
    cases = [  # (method, path, who, body, status)
        ("GET", "/v2/models/nope", "alice", None, 404),
        ("GET", "/v2/models/nope/ready", "alice", None, 404),
        ("POST", "/v2/models/nope/infer", "alice", {"inputs": []}, 404),
        ("GET", "/v2/models/mlp/versions/3", "alice", None, 404),
        ("GET", "/v2/models/mlp/versions/3/ready", "alice", None, 404),
        ("GET", "/v2/models/mlp/versions/x", "alice", None, 400),
        ("GET", "/v2/models/mlp", "bob", None, 404),
        ("GET", "/v2/models/alpha/mlp", "bob", None, 404),
        ("GET", "/v2/nothing", "alice", None, 404),
        ("GET", "/v2/models/mlp/nothing", "alice", None, 404),
        ("DELETE", "/v2/models", "alice", None, 405),
        ("POST", "/v2/models/mlp", "alice", {}, 405),
        ("GET", "/v2/models", None, None, 401),
        ("POST", "/v2/models/mlp/infer", "alice", b"{not json", 400),
        ("POST", "/v2/repository/models/mlp/load", "root", {}, 400),
    ]
    for method, path, who, body, want in cases:
        st, j, h = call(srv, method, path, who, body)
        check(st == want and is_error(j) and
              h.get("content-type") == "application/json",
              f"{method} {path} ({who}): {want} {{\"error\": ...}}: {st} {j}")
    st, j, _ = call(srv, "GET", "/v2/models/mlp", "bob")
    check("alpha" not in json.dumps(j), f"beta's 404 names no team: {j}")


def main():
    shutil.rmtree(TMP, ignore_errors=True)
    os.makedirs(TMP)
    tokens = TMP + "/tokens"
    with open(tokens, "w") as f:
        f.write(f"alice {TOKENS['alice']} team=alpha\n"
                f"bob {TOKENS['bob']} team=beta\n"
                f"root {TOKENS['root']} scopes=admin\n")
    srv = Server(SERVER, "--tokens", tokens)
    try:
        for k, v in ((0, 1), (100, 2)):
            st, j, _ = call(srv, "POST", "/v1/modules", "alice",
                            {"program": MLP.format(k=k), "name": "mlp"})
            check(st == 200 and j.get("version") == v,
                  f"alpha registers mlp version {v}: {st} {j}")
        server_side(srv)
        metadata(srv)
        inference(srv)
        listings(srv)
        errors(srv)
    finally:
        rc = srv.stop()
        check_clean_stops([(rc, srv.log())])
        shutil.rmtree(TMP, ignore_errors=True)
    finish("oip_models")


main()
