# SPDX-License-Identifier: Apache-2.0
"""The Open Inference Protocol routes (issue #14 item 6) against a live
server: the protocol's own example requests (its JSON inference example
and its binary tensor data example) sent to a module shaped like the
examples' model, every answer checked field by field; metadata and
readiness; the datatype table; refusals in the protocol's error shape.

usage: oip_routes.py SHLO_SERVER"""
import json
import os
import struct
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from srvtest import Server, check, finish  # noqa: E402

SERVER = sys.argv[1]

# The examples' model: input0 UINT32 [2,2], input1 BOOL [3]; output0 FP32
# [3,2], output1 FP32 [2,2].  output0[i][j] = input1[i] + i + j/2,
# output1 = input0 as floats.
MODEL = """func.func @main(%a: tensor<2x2xui32>, %b: tensor<3xi1>) -> (tensor<3x2xf32>, tensor<2x2xf32>) {
  %bf = stablehlo.convert %b : (tensor<3xi1>) -> tensor<3xf32>
  %bb = stablehlo.broadcast_in_dim %bf, dims = [0] : (tensor<3xf32>) -> tensor<3x2xf32>
  %c = stablehlo.constant dense<[[0.0, 0.5], [1.0, 1.5], [2.0, 2.5]]> : tensor<3x2xf32>
  %o0 = stablehlo.add %bb, %c : tensor<3x2xf32>
  %o1 = stablehlo.convert %a : (tensor<2x2xui32>) -> tensor<2x2xf32>
  return %o0, %o1 : tensor<3x2xf32>, tensor<2x2xf32>
}
"""
# One input of each datatype of the table, and results of the others.
TYPES = """func.func @main(%a: tensor<i8>, %b: tensor<i16>, %c: tensor<i32>, %d: tensor<i64>, %e: tensor<ui8>, %f: tensor<ui16>, %g: tensor<ui64>, %h: tensor<f16>, %i: tensor<bf16>, %j: tensor<f64>) -> (tensor<f64>, tensor<bf16>, tensor<f16>, tensor<i64>) {
  return %j, %i, %h, %d : tensor<f64>, tensor<bf16>, tensor<f16>, tensor<i64>
}
"""
COMPLEX = """func.func @main(%x: tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>> {
  return %x : tensor<2xcomplex<f32>>
}
"""

# The protocol's JSON inference example, as its specification prints it
# (its input1 gives one value for a shape of 3), and the same with three.
SPEC_JSON = {
    "id": "42",
    "inputs": [
        {"name": "input0", "shape": [2, 2], "datatype": "UINT32",
         "data": [1, 2, 3, 4]},
        {"name": "input1", "shape": [3], "datatype": "BOOL", "data": [True]},
    ],
    "outputs": [{"name": "output0"}],
}
# The binary tensor data example: input0's 16 bytes after the JSON,
# output0 asked for as binary and output1 as JSON.
SPEC_BINARY = {
    "model_name": "mymodel",
    "inputs": [
        {"name": "input0", "shape": [2, 2], "datatype": "UINT32",
         "parameters": {"binary_data_size": 16}},
        {"name": "input1", "shape": [3], "datatype": "BOOL",
         "data": [True, False, True]},
    ],
    "outputs": [
        {"name": "output0", "parameters": {"binary_data": True}},
        {"name": "output1"},
    ],
}


def error_of(body):
    """The protocol's error: {"error": "<string>"} and nothing else."""
    try:
        j = json.loads(body)
    except ValueError:
        return None
    if isinstance(j, dict) and list(j) == ["error"] and isinstance(j["error"], str):
        return j["error"]
    return None


def get(srv, path, **kw):
    st, h, body = srv.request("GET", path, **kw)
    try:
        return st, h, json.loads(body)
    except ValueError:
        return st, h, body


def server_routes(srv):
    st, h, j = get(srv, "/v2")
    check(st == 200 and h["content-type"] == "application/json",
          f"/v2: {st} {h}")
    check(j.get("name") == "shlo" and isinstance(j.get("version"), str) and
          j.get("extensions") == ["binary_tensor_data"], f"/v2 body: {j}")
    check(get(srv, "/v2/health/live")[::2] == (200, {"live": True}), "live")
    check(get(srv, "/v2/health/ready")[::2] == (200, {"ready": True}), "ready")


def metadata(srv, mid):
    st, _, j = get(srv, "/v2/models/mymodel")
    check(st == 200, f"metadata: {st} {j}")
    check(j.get("name") == "mymodel", f"metadata name: {j}")
    check(j.get("platform") == "shlo_stablehlo", f"platform: {j}")
    check(j.get("inputs") == [
        {"name": "input0", "datatype": "UINT32", "shape": [2, 2]},
        {"name": "input1", "datatype": "BOOL", "shape": [3]}],
        f"metadata inputs: {j.get('inputs')}")
    check(j.get("outputs") == [
        {"name": "output0", "datatype": "FP32", "shape": [3, 2]},
        {"name": "output1", "datatype": "FP32", "shape": [2, 2]}],
        f"metadata outputs: {j.get('outputs')}")
    # served under its id as well, named so in the answer
    st, _, j = get(srv, f"/v2/models/{mid}")
    check(st == 200 and j.get("name") == mid, f"metadata by id: {st}")
    st, _, j = get(srv, "/v2/models/mymodel/ready")
    check((st, j) == (200, {"name": "mymodel", "ready": True}), f"ready: {j}")
    st, _, j = get(srv, "/v2/models/nosuch/ready")
    check(st == 404 and error_of(json.dumps(j)), f"unknown ready: {st} {j}")


def json_infer(srv):
    st, body = srv.post("/v2/models/mymodel/infer", SPEC_JSON)
    check(st == 400 and "input1" in (error_of(json.dumps(body)) or ""),
          f"the spec's example as printed (1 value for shape [3]): {st} {body}")
    req = json.loads(json.dumps(SPEC_JSON))
    req["inputs"][1]["data"] = [True, False, True]
    st, h, raw = srv.request("POST", "/v2/models/mymodel/infer", req)
    check(st == 200 and h["content-type"] == "application/json",
          f"json infer: {st} {raw[:300]}")
    j = json.loads(raw)
    check(set(j) == {"model_name", "model_version", "id", "outputs"},
          f"members: {list(j)}")
    check(j["model_name"] == "mymodel" and j["model_version"] == "1" and
          j["id"] == "42", f"names: {j}")
    check(len(j["outputs"]) == 1, "only the output asked for")
    o = j["outputs"][0]
    check(o["name"] == "output0" and o["datatype"] == "FP32" and
          o["shape"] == [3, 2], f"output0 head: {o}")
    check(o["data"] == [1.0, 1.5, 1.0, 1.5, 3.0, 3.5], f"output0 data: {o}")
    # Without "outputs", every output, in order; nested data is accepted.
    req = {"inputs": [
        {"name": "input1", "shape": [3], "datatype": "BOOL",
         "data": [False, True, False]},
        {"name": "input0", "shape": [2, 2], "datatype": "UINT32",
         "data": [[7, 8], [9, 4294967295]]}]}
    st, j = srv.post("/v2/models/mymodel/infer", req)
    check(st == 200 and [o["name"] for o in j["outputs"]] == ["output0", "output1"],
          f"all outputs: {st} {j}")
    if st == 200:
        check("id" not in j, "no id when the request has none")
        check(j["outputs"][0]["data"] == [0.0, 0.5, 2.0, 2.5, 2.0, 2.5],
              f"output0: {j['outputs'][0]}")
        # 2^32 - 1 rounds to the float 2^32, whose shortest text is
        # 4294967300 (the server's float writer)
        check(j["outputs"][1] == {"name": "output1", "datatype": "FP32",
                                  "shape": [2, 2],
                                  "data": [7.0, 8.0, 9.0, 4294967300.0]},
              f"output1: {j['outputs'][1]}")


def infer_bin(srv, obj, tail):
    """POST obj as the JSON part, tail as the binary part after it."""
    head = json.dumps(obj).encode()
    return srv.request("POST", "/v2/models/mymodel/infer", head + tail,
                       {"Inference-Header-Content-Length": str(len(head))})


def binary_infer(srv):
    head = json.dumps(SPEC_BINARY).encode()
    body = head + struct.pack("<4I", 1, 2, 3, 4)
    st, h, raw = srv.request("POST", "/v2/models/mymodel/infer", body, {
        "Content-Type": "application/octet-stream",
        "Inference-Header-Content-Length": str(len(head))})
    check(st == 200, f"binary infer: {st} {raw[:300]}")
    check(h.get("content-type") == "application/octet-stream",
          f"binary answer type: {h}")
    n = int(h.get("inference-header-content-length", "-1"))
    check(0 < n <= len(raw), f"Inference-Header-Content-Length {n} of {len(raw)}")
    j = json.loads(raw[:n])
    check(j.get("model_name") == "mymodel", f"model_name: {j}")
    o0, o1 = j["outputs"]
    check(o0 == {"name": "output0", "datatype": "FP32", "shape": [3, 2],
                 "parameters": {"binary_data_size": 24}}, f"output0: {o0}")
    check(o1 == {"name": "output1", "datatype": "FP32", "shape": [2, 2],
                 "data": [1.0, 2.0, 3.0, 4.0]}, f"output1: {o1}")
    check(len(raw) == n + 24, f"24 bytes of output0 follow: {len(raw) - n}")
    check(struct.unpack("<6f", raw[n:n + 24]) == (1.0, 1.5, 1.0, 1.5, 3.0, 3.5),
          "output0's bytes")
    # binary_data_output: every output in binary, in order.
    req = json.loads(json.dumps(SPEC_BINARY))
    req["parameters"] = {"binary_data_output": True}
    del req["outputs"]
    st, h, raw = infer_bin(srv, req, struct.pack("<4I", 5, 6, 7, 8))
    n = int(h.get("inference-header-content-length", "-1"))
    check(st == 200 and len(raw) == n + 24 + 16, f"all binary: {st} {len(raw)} {n}")
    if st == 200:
        check(struct.unpack("<4f", raw[n + 24:]) == (5.0, 6.0, 7.0, 8.0),
              "output1's bytes")
    # Refusals: sizes that disagree, a BOOL byte that is not 0 or 1.
    bad = json.loads(json.dumps(SPEC_BINARY))
    bad["inputs"][0]["parameters"]["binary_data_size"] = 12
    st, _, raw = infer_bin(srv, bad, b"\0" * 12)
    check(st == 400 and "binary_data_size" in (error_of(raw) or ""),
          f"short binary_data_size: {st} {raw}")
    for size in (1e300, -16, "16"):
        bad["inputs"][0]["parameters"]["binary_data_size"] = size
        st, _, raw = infer_bin(srv, bad, b"\0" * 16)
        check(st == 400 and "binary_data_size" in (error_of(raw) or ""),
              f"binary_data_size {size!r}: {st} {raw}")
    st, _, raw = infer_bin(srv, SPEC_BINARY, b"\0" * 20)
    head = json.dumps(SPEC_BINARY).encode()
    check(st == 400 and error_of(raw), f"extra binary bytes: {st} {raw}")
    st, _, raw = srv.request("POST", "/v2/models/mymodel/infer", head + b"\0" * 16)
    check(st == 400 and "Inference-Header-Content-Length" in (error_of(raw) or ""),
          f"binary without the header: {st} {raw}")
    st, _, raw = srv.request("POST", "/v2/models/mymodel/infer", head,
                             {"Inference-Header-Content-Length": "99999"})
    check(st == 400 and error_of(raw), f"header past the body: {st} {raw}")
    b2 = json.loads(json.dumps(SPEC_BINARY))
    b2["inputs"][1] = {"name": "input1", "shape": [3], "datatype": "BOOL",
                       "parameters": {"binary_data_size": 3}}
    st, _, raw = infer_bin(srv, b2, struct.pack("<4I", 1, 2, 3, 4) + b"\1\2\0")
    check(st == 400 and "BOOL" in (error_of(raw) or ""), f"BOOL byte 2: {st} {raw}")


def datatypes(srv):
    st, body = srv.post("/v1/modules", {"program": TYPES, "name": "types"})
    check(st == 200, f"register types: {st} {body}")
    st, _, j = get(srv, "/v2/models/types")
    want = ["INT8", "INT16", "INT32", "INT64", "UINT8", "UINT16", "UINT64",
            "FP16", "BF16", "FP64"]
    check(st == 200 and [t["datatype"] for t in j["inputs"]] == want,
          f"input datatypes: {j}")
    check(st == 200 and [t["datatype"] for t in j["outputs"]] ==
          ["FP64", "BF16", "FP16", "INT64"], f"output datatypes: {j}")
    check(st == 200 and j["inputs"][0]["shape"] == [], "a scalar's shape is []")
    vals = [-128, -32768, -2147483648, -9223372036854775808, 255, 65535,
            18446744073709551615, 0.5, 1.5, 0.1]
    req = {"inputs": [{"name": f"input{i}", "shape": [], "datatype": dt,
                       "data": [v]} for i, (dt, v) in enumerate(zip(want, vals))]}
    st, j = srv.post("/v2/models/types/infer", req)
    check(st == 200, f"types infer: {st} {j}")
    if st == 200:
        check([o["data"] for o in j["outputs"]] ==
              [[0.1], [1.5], [0.5], [-9223372036854775808]],
              f"types outputs: {j['outputs']}")
    req["inputs"][0]["datatype"] = "UINT8"
    st, j = srv.post("/v2/models/types/infer", req)
    check(st == 400 and "INT8" in (error_of(json.dumps(j)) or ""),
          f"wrong datatype: {st} {j}")
    st, body = srv.post("/v1/modules", {"program": COMPLEX, "name": "cplx"})
    check(st == 200, f"register complex: {st}")
    st, _, j = get(srv, "/v2/models/cplx")
    check(st == 400 and "complex<f32>" in (error_of(json.dumps(j)) or ""),
          f"complex refused by name: {st} {j}")


def refusals(srv):
    cases = [
        ("GET", "/v2/models/nosuch", None, 404),
        ("POST", "/v2/models/nosuch/infer", {"inputs": []}, 404),
        ("GET", "/v2/models/mymodel/versions/2", None, 404),
        ("DELETE", "/v2/models/mymodel", None, 405),
        ("POST", "/v2/models/mymodel/infer", b"{not json", 400),
        ("POST", "/v2/models/mymodel/infer", {"inputs": "x"}, 400),
        ("POST", "/v2/models/mymodel/infer",
         {"inputs": SPEC_JSON["inputs"] + [SPEC_JSON["inputs"][0]]}, 400),
        ("POST", "/v2/models/mymodel/infer",
         {"inputs": [SPEC_JSON["inputs"][0], SPEC_JSON["inputs"][0]]}, 400),
        ("POST", "/v2/models/mymodel/infer",
         {"inputs": [dict(SPEC_JSON["inputs"][0], shape=[4]),
                     dict(SPEC_JSON["inputs"][1], data=[1, 0, 1])]}, 400),
        ("POST", "/v2/models/mymodel/infer",
         {"inputs": [SPEC_JSON["inputs"][0],
                     dict(SPEC_JSON["inputs"][1], data=[True] * 3)],
          "outputs": [{"name": "output7"}]}, 400),
    ]
    for method, path, body, want in cases:
        st, _, raw = srv.request(method, path, body)
        check(st == want and error_of(raw),
              f"{method} {path} {str(body)[:60]}: {st} {raw[:200]}")


def auth(d):
    tokens = os.path.join(d, "tokens")
    with open(tokens, "w") as f:
        f.write("alice s3cret-token-a\n")
    s = Server(SERVER, "--tokens", tokens)
    check(get(s, "/v2/health/live")[0] == 200, "live needs no token")
    st, h, raw = s.request("GET", "/v2/models/x")
    check(st == 401 and error_of(raw), f"401 in the protocol's shape: {raw}")
    st, h, raw = s.request("GET", "/v2/models/x",
                           headers={"Authorization": "Bearer s3cret-token-a"})
    check(st == 404 and error_of(raw), f"with the token: {st} {raw}")
    check(s.stop() == 0, "auth server stopped cleanly")


def main():
    srv = Server(SERVER)
    st, body = srv.post("/v1/modules", {"program": MODEL, "name": "mymodel"})
    check(st == 200 and body.get("name") == "mymodel", f"register: {st} {body}")
    mid = body.get("id")
    server_routes(srv)
    metadata(srv, mid)
    json_infer(srv)
    binary_infer(srv)
    datatypes(srv)
    refusals(srv)
    check(srv.stop() == 0, "server stopped cleanly")
    with tempfile.TemporaryDirectory() as d:
        auth(d)
    finish("oip_routes")


main()
