# SPDX-License-Identifier: Apache-2.0
"""Run conformance cases through the Python client (shlo_client) and print
the lines and summary `shlo test` prints.  usage: py_conformance.py URL PATH..."""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "../../client/python"))
import numpy as np  # noqa: E402
from shlo_client import Client, ShloError  # noqa: E402

SEP = re.compile(r"^\s*(//\s*)+-----\s*$")
NP = {"i1": np.bool_, "i8": np.int8, "i16": np.int16, "i32": np.int32,
      "i64": np.int64, "ui8": np.uint8, "ui16": np.uint16, "ui32": np.uint32,
      "ui64": np.uint64, "f16": np.float16, "f32": np.float32,
      "f64": np.float64}


def cases(text):
    """(index, text padded with newlines so line numbers stay the file's)."""
    lines, cur, first, k = text.split("\n"), [], 0, 1
    for i, line in enumerate(lines):
        if SEP.match(line):
            yield k, "\n" * first + "\n".join(cur)
            cur, first, k = [], i + 1, k + 1
        else:
            cur.append(line)
    yield k, "\n" * first + "\n".join(cur)


def run_args(text):
    """The RUN line's --args: dense<...> : tensor<...> values."""
    m = re.search(r'--args="\[(.*?)\]"', text)
    if not m:
        return []
    out = []
    for v, shape, t in re.findall(r"dense<([^>]*)>\s*:\s*tensor<((?:\d+x)*)(\w+)>",
                                  m.group(1)):
        dims = [int(d) for d in shape.split("x") if d]
        vals = np.array(eval(v.replace("true", "1").replace("false", "0")),
                        dtype=NP[t])
        out.append(np.broadcast_to(vals, dims).copy() if vals.ndim == 0
                   else vals.reshape(dims))
    return out


def files(paths):
    for p in paths:
        if os.path.isdir(p):
            for root, _, names in sorted(os.walk(p)):
                for n in sorted(names):
                    if n.endswith(".mlir"):
                        yield os.path.join(root, n)
        else:
            yield p


def main():
    url, paths = sys.argv[1], sys.argv[2:]
    c = Client(url)
    tally = {"PASS": 0, "FAIL": 0, "SKIP": 0}
    for f in sorted(files(paths)):
        text = open(f).read()
        args = run_args(text)
        for k, case in cases(text):
            try:
                c.execute(case, *args)
                verdict, why = "PASS", ""
            except ShloError as e:
                if e.kind == "verify" and "defines no function" in e.message:
                    verdict, why = "PASS", ""
                else:
                    skip = e.kind == "verify" and "not implemented" in e.message
                    verdict = "SKIP" if skip else "FAIL"
                    why = e.message
            tally[verdict] += 1
            print("%s %s:%d%s" % (verdict, f, k, ": " + why if why else ""))
    print("%d passed, %d failed, %d skipped"
          % (tally["PASS"], tally["FAIL"], tally["SKIP"]))
    c.close()
    return 1 if tally["FAIL"] else 0


if __name__ == "__main__":
    sys.exit(main())
