# SPDX-License-Identifier: Apache-2.0
"""The model bench programs (bench/models, issue #37) are programs shlo
runs, and runs right: every full-size program parses and verifies
(`shlo verify`), and every tiny one (bench/models/tiny, the same JAX
functions at toy sizes, written by gen.py --tiny) runs under `shlo bench`
on the bench inputs with output 0's sum and 2-norm equal to those of the
numpy peer of bench/model_peers.py (its own implementation of the math).
No timing is asserted.

  python3 tests/bench_models.py SHLO_CLI SOURCE_DIR

Exit 77 (skip) without numpy."""
import glob
import os
import re
import subprocess
import sys

try:
    import numpy as np
except ImportError:
    print("bench_models: numpy is not importable; skipped")
    sys.exit(77)

# f32: the GEMMs' summation orders differ; bf16: roundings of bf16 GEMM
# operands land on different sides where f32 sums differ in the last bit
TOL = {"transformer_bf16": 1e-3}


def shlo_output(cli, path):
    out = subprocess.run([cli, "bench", path, "--runs", "1", "--warmup", "0"],
                         capture_output=True, text=True, timeout=60)
    if out.returncode:
        raise AssertionError(f"{path}: shlo bench failed: {out.stdout}{out.stderr}")
    m = re.search(r"output 0: sum (\S+) l2 (\S+)", out.stdout)
    if not m:
        raise AssertionError(f"{path}: no output 0 in {out.stdout!r}")
    return float(m.group(1)), float(m.group(2))


def main():
    cli, src = sys.argv[1], sys.argv[2]
    sys.path.insert(0, os.path.join(src, "bench"))
    import model_peers
    full = sorted(glob.glob(os.path.join(src, "bench", "models", "*.mlir")))
    tiny = sorted(glob.glob(os.path.join(src, "bench", "models", "tiny", "*.mlir")))
    names = [os.path.basename(p) for p in full]
    assert names == [os.path.basename(p) for p in tiny] and len(names) == 6, (names, tiny)
    v = subprocess.run([cli, "verify", "--quiet"] + full, capture_output=True, text=True, timeout=120)
    assert v.returncode == 0, f"shlo verify: {v.stdout}{v.stderr}"
    bad = 0
    for path in tiny:
        name = os.path.basename(path)[:-5]
        text = open(path).read()
        run, _ = model_peers.numpy_peer(name, model_peers.make_args(text), text)
        r = np.asarray(run(), dtype=np.float64)
        want = (float(r.sum()), float(np.sqrt((r * r).sum())))
        got = shlo_output(cli, path)
        tol = TOL.get(name, 1e-5)
        ok = abs(got[1] - want[1]) <= tol * want[1] and abs(got[0] - want[0]) <= tol * (abs(want[0]) + want[1])
        print(f"{name}: shlo sum {got[0]:.9g} l2 {got[1]:.9g}, numpy sum {want[0]:.9g} l2 {want[1]:.9g}"
              f" {'ok' if ok else 'MISMATCH'}")
        bad += not ok
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
