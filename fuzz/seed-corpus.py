#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Seed corpora for the fuzz targets, from the conformance corpus.

    python3 fuzz/seed-corpus.py CONFORMANCE_DIR OUT_DIR

Writes OUT_DIR/mlir (each `// -----` case of every .mlir file, up to 64 KiB),
OUT_DIR/json (execution requests carrying those programs, with tensors of
every dtype as data and b64, and a few responses and errors) and
OUT_DIR/http (the same bodies behind fuzz_http's route byte) and
OUT_DIR/artifact (the portable artifacts, *.mlir.bc, as they are).
"""
import base64
import hashlib
import json
import os
import pathlib
import struct
import sys

src, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
for d in ("mlir", "json", "http", "artifact"):
    (out / d).mkdir(parents=True, exist_ok=True)


def put(kind, data):
    if isinstance(data, str):
        data = data.encode()
    name = hashlib.sha1(data).hexdigest()[:16]
    (out / kind / name).write_bytes(data)


cases = []
for f in sorted(src.rglob("*.mlir")):
    text = f.read_text(errors="replace")
    for case in text.split("// -----"):
        if 0 < len(case) <= 65536:
            cases.append(case)
for case in cases:
    put("mlir", case)

tensors = [
    {"dtype": "f32", "shape": [2], "data": [1.5, "NaN"]},
    {"dtype": "f64", "shape": [2, 2], "data": [[1, 2], [3, "-Infinity"]]},
    {"dtype": "i64", "shape": [3], "data": [1, "9223372036854775807", -3]},
    {"dtype": "ui8", "shape": [2], "data": [0, 255]},
    {"dtype": "i1", "shape": [2], "data": [True, 0]},
    {"dtype": "complex<f32>", "shape": [2], "data": [[1, 2], 3]},
    {"dtype": "bf16", "shape": [], "data": 2.5},
    {"dtype": "f32", "shape": [4], "b64": base64.b64encode(
        struct.pack("<4f", 1, 2, 3, 4)).decode()},
    {"dtype": "i4", "shape": [2], "b64": base64.b64encode(b"\x07\x08").decode()},
]
add = ("func.func @main(%a: tensor<2xf32>, %b: tensor<2xf32>) -> "
       "tensor<2xf32> {\n  %0 = stablehlo.add %a, %b : tensor<2xf32>\n"
       "  return %0 : tensor<2xf32>\n}\n")
bodies = [json.dumps({"program": add, "inputs": [tensors[0], tensors[0]],
                      "timeout_ms": 100, "output_format": "b64"})]
bodies += [json.dumps({"inputs": [t], "entry": "main"}) for t in tensors]
bodies += [json.dumps({"program": c, "inputs": [], "replicas": 1})
           for c in cases[::max(1, len(cases) // 400)]]
bodies.append(json.dumps({"outputs": tensors, "module": "sha256:00",
                          "cached": False}))
bodies.append(json.dumps({"error": {"kind": "parse", "message": "x",
                                    "line": 1, "column": 2}}))
for b in bodies:
    put("json", b)
for i, b in enumerate(bodies):
    put("http", bytes([4 | (i % 4)]) + b.encode())
for i, c in enumerate(cases[::max(1, len(cases) // 400)]):
    put("http", bytes([i % 4]) + c.encode())
put("http", bytes([1]) + add.encode())
put("http", bytes([4 | 3]) + bodies[1].encode())
for f in sorted(src.rglob("*.mlir.bc")):
    put("artifact", f.read_bytes())
print(f"{out}: {len(list((out / 'mlir').iterdir()))} mlir, "
      f"{len(list((out / 'json').iterdir()))} json, "
      f"{len(list((out / 'http').iterdir()))} http, "
      f"{len(list((out / 'artifact').iterdir()))} artifact seeds")
