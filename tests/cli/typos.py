# SPDX-License-Identifier: Apache-2.0
"""Issue #33: 40 typos (op names, attribute keys, enum values, types,
function names, mismatched return types), each through `shlo run`, `shlo
test`, `shlo verify` and the server's /execute.  Each must be an error at
the typo's line:col -- the place `@@` marks in the text below, found here,
not by the code under test -- with `did you mean X?` where a near name
exists; none may be a SKIP or a PASS.

usage: typos.py SHLO_CLI SHLO_SERVER"""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "server"))
from srvtest import Server, check, finish

CLI, SERVER = sys.argv[1], sys.argv[2]

UNARY = """func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = {op} %x : tensor<3xf32>
  return %0 : tensor<3xf32>
}
"""
BINARY = """func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = {op} %x, %x : tensor<3xf32>
  return %0 : tensor<3xf32>
}
"""
COMPARE = """func.func @main(%x: tensor<3xf32>) -> tensor<3xi1> {{
  %0 = stablehlo.compare {dir}, %x, %x{ty} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
  return %0 : tensor<3xi1>
}}
"""
GENERIC_COMPARE = """func.func @main(%x: tensor<3xf32>) -> tensor<3xi1> {{
  %0 = "stablehlo.compare"(%x, %x) {{comparison_direction = {attr}}} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
  return %0 : tensor<3xi1>
}}
"""
TYPED = """func.func @main(%x: tensor<3x{t}>) -> tensor<3xf32> {{
  %0 = stablehlo.abs %x : tensor<3xf32>
  return %0 : tensor<3xf32>
}}
"""
CONV = """func.func @main(%x: tensor<1x4x4x1xf32>, %w: tensor<2x2x1x1xf32>) -> tensor<1x2x3x1xf32> {{
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {{{window}}} {{batch_group_count = 1 : i64, feature_group_count = 1 : i64}} : (tensor<1x4x4x1xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x3x1xf32>
  return %0 : tensor<1x2x3x1xf32>
}}
"""
CALL = """func.func @helper(%x: tensor<3xf32>) -> tensor<3xf32> {{
  return %x : tensor<3xf32>
}}
func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {{
  %0 = @@func.call @{callee}(%x) : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}}
"""
REDUCE = """func.func @main(%x: tensor<4xf32>) -> tensor<f32> {{
  %c = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.reduce(%x init: %c) applies @@{op} across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}}
"""
GATHER = """func.func @main(%x: tensor<3x4xf32>, %i: tensor<2x1xi32>) -> tensor<2x4xf32> {{
  %0 = "stablehlo.gather"(%x, %i) {{dimension_numbers = #stablehlo.gather<{dims}>, slice_sizes = array<i64: 1, 4>}} : (tensor<3x4xf32>, tensor<2x1xi32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}}
"""
DOT = """func.func @main(%x: tensor<2x3xf32>, %y: tensor<3x4xf32>) -> tensor<2x4xf32> {{
  %0 = stablehlo.dot_general %x, %y, {dims} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}}
"""
SHAPED = """func.func @main(%x: tensor<3x4xf32>) -> tensor<{rt}> {{
  %0 = {body}
  return %0 : tensor<{rt}>
}}
"""
RETURN = """func.func @main(%x: tensor<3xf32>) -> {sig} {{
  %0 = stablehlo.add %x, %x : tensor<3xf32>
  @@return {ret}
}}
"""
FFT = """func.func @main(%x: tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>> {{
  %0 = stablehlo.fft %x, type = @@{t}, length = [4] : (tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
  return %0 : tensor<4xcomplex<f32>>
}}
"""
CHLO = """func.func @main(%x: tensor<3xf32>) -> tensor<3xi1> {{
  %0 = chlo.broadcast_compare %x, %x {{comparison_direction = #chlo<comparison_direction @@{d}>}} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
  return %0 : tensor<3xi1>
}}
"""

# (name, program text with @@ before the typo, suggestion or None)
CASES = [
    # op names (13)
    ("op add", BINARY.replace("{op}", "@@stablehlo.ad"), "stablehlo.add"),
    ("op multiply", BINARY.replace("{op}", "@@stablehlo.multipy"),
     "stablehlo.multiply"),
    ("op subtract", BINARY.replace("{op}", "@@stablehlo.subtact"),
     "stablehlo.subtract"),
    ("op maximum", BINARY.replace("{op}", "@@stablehlo.maximun"),
     "stablehlo.maximum"),
    ("op exponential", UNARY.replace("{op}", "@@stablehlo.exponental"),
     "stablehlo.exponential"),
    ("op tanh", UNARY.replace("{op}", "@@stablehlo.tanhh"), "stablehlo.tanh"),
    ("key generic compare", GENERIC_COMPARE.format(
        attr="#stablehlo<comparison_direction EQ>").replace(
        '%0 = "stablehlo.compare"', '%0 = @@"stablehlo.compare"').replace(
        "{comparison_direction", "{comparison_directon"),
     "comparison_direction"),
    ("op sqrt", UNARY.replace("{op}", "@@stablehlo.sqr"), "stablehlo.sqrt"),
    ("op generic", BINARY.replace(
        "%0 = {op} %x, %x : tensor<3xf32>",
        '%0 = @@"stablehlo.ad"(%x, %x) : (tensor<3xf32>, tensor<3xf32>) -> '
        'tensor<3xf32>'), "stablehlo.add"),
    ("op dialect", BINARY.replace("{op}", "@@stablhlo.add"), "stablehlo.add"),
    ("op unknown", UNARY.replace("{op}", "@@stablehlo.frobnicate"), None),
    ("op chlo", UNARY.replace("{op}", "@@chlo.tna"), "chlo.tan"),
    ("op func.return", BINARY.replace("return %0", "@@func.retrun %0")
     .replace("{op}", "stablehlo.add"), "func.return"),
    ("op reduce applies", REDUCE.format(op="stablehlo.ad"), "stablehlo.add"),
    ("key generic transpose", SHAPED.format(
        rt="4x3xf32", body='@@"stablehlo.transpose"(%x) {permutaton = '
        'array<i64: 1, 0>} : (tensor<3x4xf32>) -> tensor<4x3xf32>'),
     "permutation"),
    # enum values and kinds (7)
    ("enum pretty", COMPARE.format(dir="@@EQQ", ty=""), "EQ"),
    ("enum pretty type", COMPARE.format(dir="LT", ty=",  @@FLAOT"), "FLOAT"),
    ("enum generic", GENERIC_COMPARE.format(
        attr="#stablehlo<comparison_direction @@GTE>"), "GE"),
    ("enum kind", GENERIC_COMPARE.format(
        attr="#stablehlo<@@comparision_direction GT>"), "comparison_direction"),
    ("enum fft", FFT.format(t="FTT"), "FFT"),
    ("enum chlo", CHLO.format(d="NEE"), "NE"),
    ("enum none near", COMPARE.format(dir="@@SAME", ty=""), None),
    # element types (5)
    ("type f3", TYPED.format(t="@@f3"), "f32"),
    ("type f33", TYPED.format(t="@@f33"), "f32"),
    ("type ui33", TYPED.format(t="@@ui33"), "ui32"),
    ("type f8", TYPED.format(t="@@f8E4M3FM"), "f8E4M3FN"),
    ("type far", TYPED.format(t="@@float"), None),
    # pretty-form, generic and attribute keys (10)
    ("key transpose dims", SHAPED.format(
        rt="4x3xf32", body="stablehlo.transpose %x, @@dimz = [1, 0] : "
        "(tensor<3x4xf32>) -> tensor<4x3xf32>"), "dims"),
    ("key iota dim", SHAPED.format(
        rt="4x3xf32", body="stablehlo.iota @@dimm = 0 : tensor<4x3xf32>"),
     "dim"),
    ("key window stride", CONV.format(window="@@stide = [2, 1]"), "stride"),
    ("key window lhs_dilate", CONV.format(window="@@lhs_dilation = [1, 1]"),
     "lhs_dilate"),
    ("key window far", CONV.format(window="@@zoom = [1, 1]"), None),
    ("key dot contracting", DOT.format(dims="@@contracting_dim = [1] x [0]"),
     "contracting_dims"),
    ("key gather struct", GATHER.format(
        dims="@@offset_dim = [1], collapsed_slice_dims = [0], "
        "start_index_map = [0], index_vector_dim = 1"), "offset_dims"),
    ("key gather struct 2", GATHER.format(
        dims="offset_dims = [1], collapsed_slice_dims = [0], "
        "@@start_index_maps = [0], index_vector_dim = 1"), "start_index_map"),
    # function names (2)
    ("func callee", CALL.format(callee="helpr"), "@helper"),
    ("func callee far", CALL.format(callee="nothing_like_it"), None),
    # mismatched return types (3)
    ("return elem", RETURN.format(sig="tensor<3xf64>",
                                  ret="%0 : tensor<3xf64>"), None),
    ("return shape", RETURN.format(sig="tensor<4xf32>",
                                   ret="%0 : tensor<4xf32>"), None),
    ("return count", RETURN.format(sig="(tensor<3xf32>, tensor<3xf32>)",
                                   ret="%0 : tensor<3xf32>"), None),
]


def locate(text):
    """(text without the marker, line, column) of the @@ marker."""
    i = text.index("@@")
    line = text.count("\n", 0, i) + 1
    col = i - (text.rfind("\n", 0, i) + 1) + 1
    return text.replace("@@", "", 1), line, col


def main():
    check(len(CASES) == 40, f"{len(CASES)} cases, not 40")
    tmp = tempfile.mkdtemp(prefix="shlo-typos-")
    srv = Server(SERVER)
    try:
        for name, marked, near in CASES:
            text, line, col = locate(marked)
            path = os.path.join(tmp, name.replace(" ", "_") + ".mlir")
            with open(path, "w") as f:
                f.write(text)
            where = f"{path}:{line}:{col}: error:"
            hint = f"did you mean {near}?" if near else None
            for cmd in (["run"], ["test"], ["verify"]):
                p = subprocess.run([CLI, *cmd, path], capture_output=True,
                                   text=True, timeout=60)
                out = p.stdout + p.stderr
                ok = p.returncode != 0 and where in out and \
                    (not hint or hint in out) and "Sanitizer" not in out
                if cmd != ["run"]:
                    ok = ok and "0 passed, 1 failed, 0 skipped" in out and \
                        "SKIP" not in out and "PASS" not in out
                check(ok, f"{name}: shlo {cmd[0]}: want {where!r} "
                      f"{hint!r}; got rc {p.returncode} {out[-400:]!r}")
            st, body = srv.post("/execute", {"program": text})
            err = body.get("error", {}) if isinstance(body, dict) else {}
            check(st >= 400 and err.get("kind") in ("parse", "verify") and
                  err.get("line") == line and err.get("column") == col and
                  (not hint or hint in err.get("message", "")),
                  f"{name}: /execute: want {line}:{col} {hint!r}, got "
                  f"{st} {body!r}")
    finally:
        srv.stop()
        for f in os.listdir(tmp):
            os.unlink(os.path.join(tmp, f))
        os.rmdir(tmp)


main()
finish("typos")
