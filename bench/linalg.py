#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Cholesky, LU, QR, eigh and SVD of 512 x 512 f32 and f64 matrices: shlo
running the custom calls JAX's CPU export writes (lapack_?potrf_ffi, ...)
against numpy.linalg, on the same machine in the same run, side by side.

    /usr/bin/python3 -s bench/linalg.py [--shlo build/client/shlo] [--n 512]
                                        [--runs 4] [--rounds 5]
                                        [--threads-numpy 0] [--cases eigh,svd]

Both sides end in the same LAPACK: Debian's numpy (python3-numpy) links
liblapack.so.3, which the alternatives point at OpenBLAS's, the library
shlo calls.  `-s` keeps a numpy that pip put in the user's site-packages
(a wheel with its own OpenBLAS build) out of the comparison; the script
prints which numpy it measured and warns when it is not Debian's.  shlo
runs eigh, SVD and QR of a single large matrix with OpenBLAS threaded on
as many of its pool's threads (one per core) as CPUs are free at that
moment, Cholesky and LU on one thread (engine/src/kernels/
lapack_threads.c says why); numpy keeps OpenBLAS's default (one thread
per core) unless --threads-numpy N holds it to N (OPENBLAS_NUM_THREADS,
set before numpy loads).  The load average at the end is printed: on a
busy machine neither side gains from a second thread.  The two sides
take turns, --rounds times, each round timing --runs calls of each after a
warm-up, so that both see the same load on a shared machine; the times
are the minimum over all rounds.  shlo's come from `shlo bench`
(the engine's own timer around each execution, inputs generated as
../shared/bench/README.md says: uniform on [-1, 1)); numpy's from
time.perf_counter around each call on numpy's uniform inputs.

What each side computes:
  cholesky  shlo: A + n I (read in its lower triangle) through potrf, the
            result NaN-masked on info as JAX does; numpy:
            linalg.cholesky of A + n I made before the timer starts
  lu        shlo: getrf; numpy: linalg.det (getrf, then the diagonal's
            product: numpy has no LU of its own)
  qr        shlo: geqrf then orgqr, as jnp.linalg.qr; numpy: linalg.qr
  eigh      shlo: syevd with vectors; numpy: linalg.eigh
  svd       shlo: gesdd, full U and V^H; numpy: linalg.svd

Debian 12's numpy (1.24) computes a float32 matrix in float64 and rounds
the result (numpy.linalg._commonType), so its f32 rows are float64 work:
shlo's f32 rows, single precision as JAX's lapack_s*_ffi are, come out
faster.

Prints one line per case: shlo ms, numpy ms, and shlo / numpy.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
here = os.path.dirname(os.path.abspath(__file__))
ap.add_argument("--shlo", default=os.path.join(here, "..", "build", "client",
                                               "shlo"))
ap.add_argument("--n", type=int, default=512)
ap.add_argument("--runs", type=int, default=4)
ap.add_argument("--rounds", type=int, default=5)
ap.add_argument("--threads-numpy", type=int, default=0)
ap.add_argument("--cases", default="cholesky,lu,qr,eigh,svd",
                help="comma-separated subset of the five")
args = ap.parse_args()
if args.threads_numpy > 0:
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
        os.environ[var] = str(args.threads_numpy)
import numpy as np  # noqa: E402  (after the thread count is set)

N = args.n
CM = "dense<[0, 1]> : tensor<2xindex>"  # JAX's column-major layout
VEC = "dense<0> : tensor<1xindex>"
ONE = "dense<> : tensor<0xindex>"


def t(shape, e):
    return "tensor<" + "".join(f"{d}x" for d in shape) + e + ">"


def cholesky(e, x):
    m, i32, b = t([N, N], e), t([], "i32"), t([N, N], "i1")
    return f"""func.func @main(%a: {m}) -> {m} {{
  %n = stablehlo.constant dense<{N}.0> : {t([], e)}
  %z = stablehlo.constant dense<0.0> : {t([], e)}
  %r = stablehlo.iota dim = 0 : {t([N, N], "i32")}
  %c = stablehlo.iota dim = 1 : {t([N, N], "i32")}
  %d = stablehlo.compare EQ, %r, %c, SIGNED : ({t([N, N], "i32")}, {t([N, N], "i32")}) -> {b}
  %nb = stablehlo.broadcast_in_dim %n, dims = [] : ({t([], e)}) -> {m}
  %zb = stablehlo.broadcast_in_dim %z, dims = [] : ({t([], e)}) -> {m}
  %shift = stablehlo.select %d, %nb, %zb : {b}, {m}
  %s = stablehlo.add %a, %shift : {m}
  %0:2 = stablehlo.custom_call @lapack_{x}potrf_ffi(%s) {{mhlo.backend_config = {{uplo = 76 : ui8}}, operand_layouts = [{CM}], result_layouts = [{CM}, {ONE}]}} : ({m}) -> ({m}, {i32})
  %zero = stablehlo.constant dense<0> : {i32}
  %ok = stablehlo.compare EQ, %0#1, %zero, SIGNED : ({i32}, {i32}) -> {t([], "i1")}
  %okb = stablehlo.broadcast_in_dim %ok, dims = [] : ({t([], "i1")}) -> {b}
  %nan = stablehlo.constant dense<0x7FC00000> : {t([], "f32")}
  %nane = stablehlo.convert %nan : ({t([], "f32")}) -> {t([], e)}
  %nanb = stablehlo.broadcast_in_dim %nane, dims = [] : ({t([], e)}) -> {m}
  %out = stablehlo.select %okb, %0#0, %nanb : {b}, {m}
  return %out : {m}
}}
"""


def lu(e, x):
    m, p, i32 = t([N, N], e), t([N], "i32"), t([], "i32")
    return f"""func.func @main(%a: {m}) -> ({m}, {p}, {i32}) {{
  %0:3 = stablehlo.custom_call @lapack_{x}getrf_ffi(%a) {{mhlo.backend_config = {{}}, operand_layouts = [{CM}], result_layouts = [{CM}, {VEC}, {ONE}]}} : ({m}) -> ({m}, {p}, {i32})
  return %0#0, %0#1, %0#2 : {m}, {p}, {i32}
}}
"""


def qr(e, x):
    m, tau = t([N, N], e), t([N], e)
    return f"""func.func @main(%a: {m}) -> ({m}, {m}) {{
  %0:2 = stablehlo.custom_call @lapack_{x}geqrf_ffi(%a) {{mhlo.backend_config = {{}}, operand_layouts = [{CM}], result_layouts = [{CM}, {VEC}]}} : ({m}) -> ({m}, {tau})
  %1 = stablehlo.custom_call @lapack_{x}orgqr_ffi(%0#0, %0#1) {{mhlo.backend_config = {{}}, operand_layouts = [{CM}, {VEC}], result_layouts = [{CM}]}} : ({m}, {tau}) -> {m}
  return %1, %0#0 : {m}, {m}
}}
"""


def eigh(e, x):
    m, w, i32 = t([N, N], e), t([N], e), t([], "i32")
    return f"""func.func @main(%a: {m}) -> ({m}, {w}, {i32}) {{
  %0:3 = stablehlo.custom_call @lapack_{x}syevd_ffi(%a) {{mhlo.backend_config = {{mode = 86 : ui8, uplo = 76 : ui8}}, operand_layouts = [{CM}], result_layouts = [{CM}, {VEC}, {ONE}]}} : ({m}) -> ({m}, {w}, {i32})
  return %0#0, %0#1, %0#2 : {m}, {w}, {i32}
}}
"""


def svd(e, x):
    m, s, i32 = t([N, N], e), t([N], e), t([], "i32")
    return f"""func.func @main(%a: {m}) -> ({s}, {m}, {m}, {i32}) {{
  %0:5 = stablehlo.custom_call @lapack_{x}gesdd_ffi(%a) {{mhlo.backend_config = {{mode = 65 : ui8}}, operand_layouts = [{CM}], result_layouts = [{CM}, {VEC}, {CM}, {CM}, {ONE}]}} : ({m}) -> ({m}, {s}, {m}, {m}, {i32})
  return %0#1, %0#2, %0#3, %0#4 : {s}, {m}, {m}, {i32}
}}
"""


# (prepare, call): prepare runs outside the timer
NUMPY = {
    "cholesky": (lambda a: a + N * np.eye(N, dtype=a.dtype), np.linalg.cholesky),
    "lu": (None, np.linalg.det),
    "qr": (None, np.linalg.qr),
    "eigh": (None, np.linalg.eigh),
    "svd": (None, np.linalg.svd),
}
PROGRAMS = {"cholesky": cholesky, "lu": lu, "qr": qr, "eigh": eigh,
            "svd": svd}


def time_shlo(text):
    with tempfile.NamedTemporaryFile("w", suffix=".mlir", delete=False) as f:
        f.write(text)
    try:
        out = subprocess.run([args.shlo, "bench", f.name, "--runs",
                              str(args.runs), "--warmup", "1"],
                             capture_output=True, text=True, check=True)
    except subprocess.CalledProcessError as e:
        sys.exit(f"shlo bench failed: {e.stderr}")
    finally:
        os.unlink(f.name)
    m = re.search(r"run min ([0-9.]+) ms", out.stdout)
    if not m:
        sys.exit("cannot read shlo bench's output:\n" + out.stdout)
    return float(m.group(1))


def time_numpy(case, dtype):
    prepare, fn = case
    a = np.random.default_rng(42).uniform(-1, 1, (N, N)).astype(dtype)
    if prepare:
        a = prepare(a)
    fn(a)  # warm-up
    best = float("inf")
    for _ in range(args.runs):
        t0 = time.perf_counter()
        fn(a)
        best = min(best, (time.perf_counter() - t0) * 1e3)
    return best


if not np.__file__.startswith("/usr/lib/python3/dist-packages/"):
    print(f"warning: numpy {np.__version__} from {np.__file__} is not "
          "Debian's python3-numpy: it may bring its own LAPACK (run with "
          "/usr/bin/python3 -s)")
threads = "default threads" if args.threads_numpy <= 0 else \
    f"{args.threads_numpy} thread(s)"
print(f"{N}x{N}, min of {args.rounds} x {args.runs} runs each side, in "
      f"turns; numpy {np.__version__} on "
      f"{threads}; shlo threads eigh/svd/qr on free CPUs")
print(f"{'case':<14}{'shlo ms':>10}{'numpy ms':>10}{'shlo/numpy':>12}")
worst = 0.0
np.seterr(over="ignore")  # det of a random 512 x 512 f32 matrix overflows
for name, prog in PROGRAMS.items():
    if name not in args.cases.split(","):
        continue
    for e, x, dt in (("f32", "s", np.float32), ("f64", "d", np.float64)):
        text = prog(e, x)
        ms_shlo = ms_np = float("inf")
        for _ in range(args.rounds):  # the two sides in turn
            ms_shlo = min(ms_shlo, time_shlo(text))
            ms_np = min(ms_np, time_numpy(NUMPY[name], dt))
        ratio = ms_shlo / ms_np
        worst = max(worst, ratio)
        print(f"{name + ' ' + e:<14}{ms_shlo:>10.2f}{ms_np:>10.2f}"
              f"{ratio:>11.2f}x")
print(f"worst ratio {worst:.2f}x (target: within 1.2x)")
try:
    with open("/proc/loadavg") as f:
        print("load average at the end: " + " ".join(f.read().split()[:3]))
except OSError:
    pass
