# SPDX-License-Identifier: Apache-2.0
"""XLA:CPU (JAX's CPU backend) as a peer on the bench programs.

JAX's own compiler runs the very program shlo runs: the StableHLO text of
../shared/bench/programs/NAME.mlir is compiled once by jaxlib's CPU client
(outside the timing) and executed on inputs made as ../shared/bench/README.md
says (SplitMix64 per argument), already on the device.  Each call's result
is dropped before the next one (as peers.py does, so that the allocator is
not handed fresh pages) and waited for; the median and minimum of the
timed runs after the warm-up are printed as one JSON line, with the
float64 sum and 2-norm of output 0, as peers.py prints its peers.

  python3 bench/jax_peer.py --program NAME [--bench-dir DIR] [--runs N]
                            [--warmup N] [--mlir FILE]

(--mlir: another program, e.g. bench/models/NAME.mlir; f32, bf16 and i32
arguments.)

Exit status 77 when jax cannot be imported (peers.sh then leaves it out).
"""
import argparse
import json
import os
import re
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from model_peers import splitmix  # noqa: E402  the same inputs as the peers

try:
    import jax
    from jax.extend import backend
    from jax._src.lib import xla_client
except ImportError as e:  # pip install jax jaxlib
    print(f"jax_peer: jax is not importable ({e})", file=sys.stderr)
    sys.exit(77)

RUNS = {"while_loop": (3, 1)}  # (runs, warm-up) where (20, 3) takes too long
DTYPES = {"f32": np.float32, "i32": np.int32}
FLOATS = ("f32", "bf16")


def arguments(text):
    """@main's argument types as (shape, dtype) from the program text."""
    m = re.search(r"func\.func\s+(?:public\s+)?@main\((.*?)\)\s*->", text, re.S)
    if not m:
        raise SystemExit("jax_peer: no @main in the program")
    args = []
    for dims, elem in re.findall(r"tensor<((?:\d+x)*)(f32|bf16|i32)>", m.group(1)):
        args.append((tuple(int(d) for d in dims.split("x") if d), elem))
    return args


def make_input(k, shape, elem, index_range):
    n = int(np.prod(shape, dtype=np.int64))
    z = splitmix(42 + k, n)
    if elem in FLOATS:  # bf16: the f32 value rounded to nearest even
        x = (z >> np.uint64(40)).astype(np.float64) * 2.0 ** -23 - 1.0
        x = x.astype(np.float32).reshape(shape)
        return x.astype(jax.numpy.bfloat16) if elem == "bf16" else x
    # integer arguments index the rows of argument 0 (gather_scatter's idx)
    return ((z >> np.uint64(32)) % np.uint64(index_range)).astype(
        DTYPES[elem]).reshape(shape)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--program", required=True)
    ap.add_argument("--bench-dir", default="../shared/bench")
    ap.add_argument("--runs", type=int)
    ap.add_argument("--warmup", type=int)
    ap.add_argument("--mlir", help="the program's file (default: BENCH_DIR/programs/NAME.mlir)")
    a = ap.parse_args()
    text = open(a.mlir or f"{a.bench_dir}/programs/{a.program}.mlir").read()
    args = arguments(text)
    rows = args[0][0][0] if args and args[0][0] else 1
    host = [make_input(k, s, e, rows) for k, (s, e) in enumerate(args)]
    device = jax.devices("cpu")[0]
    client = backend.get_backend("cpu")
    exe = client.compile_and_load(text, [device], xla_client.CompileOptions())
    bufs = [jax.device_put(x, device) for x in host]
    for b in bufs:
        b.block_until_ready()
    runs, warmup = RUNS.get(a.program, (20, 3))
    runs = a.runs or runs
    warmup = a.warmup if a.warmup is not None else warmup

    def call():
        outs = exe.execute(bufs)
        for o in outs:
            o.block_until_ready()
        return outs

    out = None
    for _ in range(warmup):
        out = None
        out = call()
    times = []
    for _ in range(runs):
        out = None
        t0 = time.perf_counter()
        out = call()
        times.append((time.perf_counter() - t0) * 1e3)
    r = np.asarray(out[0], dtype=np.float64)
    print(json.dumps({
        "program": a.program, "peer": "jax",
        "median_ms": round(statistics.median(times), 4),
        "min_ms": round(min(times), 4), "runs": runs, "warmup": warmup,
        "sum": float(r.sum()), "l2": float(np.sqrt((r * r).sum())),
        "version": jax.__version__}), flush=True)


if __name__ == "__main__":
    main()
