# SPDX-License-Identifier: Apache-2.0
"""Issue #33: `shlo run` for real tensors.  Checks, with values computed here
(numpy), never with output of the code under test:

  - --input literals (2x2xf32=1,2,3,4, f32=5, i1, complex, hex bits, one
    value filling a tensor), raw SHAPExTYPE=@file.bin, @file.npy, @file.npz
    (all inputs), - (.npy on stdin), --args=@FILE;
  - --output=@y.npy, @all.npz, - (.npy on stdout), empty (dropped);
  - --help for every command, --version of shlo and shlo-server;
  - tensor.cast, func.call with attributes and generic region terminators
    (the forms producers emit around StableHLO) run;
  - every malformed --input is a one-line error naming the argument, and a
    wrong count, dtype or shape names what the function takes and what was
    given; --entry with an unknown name lists the functions;
  - printed f32/f64/bf16/f16 (and f8) results read back, through --args
    and through --input, to the same bits: random patterns with NaN
    payloads, subnormals, infinities and both zeros;
  - a 1000x1000 f32 matmul with --input=@a.npy --input=@b.npy
    --output=@c.npy gives the same bits locally, through `shlo run
    --server` (shlo:// and http://) and through the Python client.

usage: cli_io.py SHLO_CLI [SHLO_SERVER]   (exit 77 without numpy)"""
import atexit
import io
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zipfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "server"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                "client", "python"))
try:
    import numpy as np
except ImportError:
    print("cli_io: numpy not found; skipped")
    sys.exit(77)
from srvtest import check, finish

CLI = sys.argv[1]
SERVER = sys.argv[2] if len(sys.argv) > 2 else None
# The local runs and the server use the same number of threads, so that
# the matmul's bits cannot differ by how its work was split.
THREADS = os.environ.setdefault("SHLO_THREADS", "2")
TMP = tempfile.mkdtemp(prefix="shlo-cli-io-")
atexit.register(shutil.rmtree, TMP, True)


def path(name):
    return os.path.join(TMP, name)


def write(name, text):
    with open(path(name), "w") as f:
        f.write(text)
    return path(name)


def run(*args, stdin=None):
    return subprocess.run([CLI, "run", *args], input=stdin,
                          capture_output=True, timeout=300)


ADD = write("add.mlir", """func.func @main(%x: tensor<2x2xf32>, %y: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %0 = stablehlo.add %x, %y : tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}
""")
TWO = write("two.mlir", """func.func @main(%x: tensor<3xf32>, %b: tensor<3xi1>) -> (tensor<3xf32>, tensor<3xi1>) {
  %0 = stablehlo.negate %x : tensor<3xf32>
  %1 = stablehlo.not %b : tensor<3xi1>
  return %0, %1 : tensor<3xf32>, tensor<3xi1>
}
""")


def ident(elem, n):
    return write(f"id_{elem}_{n}.mlir", f"""func.func @main(%x: tensor<{n}x{elem}>) -> tensor<{n}x{elem}> {{
  return %x : tensor<{n}x{elem}>
}}
""")


def load_npy(name):
    return np.load(path(name))


def literals():
    """The literal and raw forms; results read back as .npy."""
    p = run(ADD, "--input=2x2xf32=1,2,3,4", "--input", "2x2xf32=[10 20][30 40]",
            "--output=@" + path("lit.npy"))
    check(p.returncode == 0, f"literal inputs: {p.stderr!r}")
    if p.returncode == 0:
        got = load_npy("lit.npy")
        check(got.dtype == np.float32 and got.shape == (2, 2) and
              got.tolist() == [[11, 22], [33, 44]], f"literal sum {got}")
    raw = np.array([[0.5, -1.5], [2.25, 1e-45]], np.float32)
    with open(path("x.bin"), "wb") as f:
        f.write(raw.astype("<f4").tobytes())
    p = run(ADD, f"--input=2x2xf32=@{path('x.bin')}", "--input=2x2xf32=0",
            "--output=@" + path("bin.npy"))
    check(p.returncode == 0, f"@file.bin input: {p.stderr!r}")
    if p.returncode == 0:
        check(load_npy("bin.npy").tobytes() == raw.tobytes(),
              "@file.bin + splat 0 gives the file's bits")
    # i1 words, hex bits, two outputs to one .npz, the printed text
    p = run(TWO, "--input=3xf32=0x7FC00001,-0.0,inf", "--input=3xi1=true,0,1",
            f"--output=@{path('two.npz')}")
    check(p.returncode == 0, f"i1/hex inputs: {p.stderr!r}")
    if p.returncode == 0:
        z = np.load(path("two.npz"))
        f = z["arr_0"].view(np.uint32).tolist()
        check(f == [0xFFC00001, 0x00000000, 0xFF800000],
              f"negate of nan payload, -0, inf: {[hex(x) for x in f]}")
        check(z["arr_1"].dtype == np.bool_ and
              z["arr_1"].tolist() == [False, True, False], "not of i1")
    p = run(TWO, "--input=3xf32=1.5,-0.0,0x7FC00001", "--input=3xi1=1,0,0")
    out = p.stdout.decode()
    check(p.returncode == 0 and "[-1.5, 0.0, 0xFFC00001]" in out and
          "[false, true, true]" in out, f"printed text: {out!r} {p.stderr!r}")


def complex_and_scalar():
    prog = write("cplx.mlir", """func.func @main(%x: tensor<2xcomplex<f32>>, %s: tensor<f64>) -> (tensor<2xcomplex<f32>>, tensor<f64>) {
  %0 = stablehlo.add %x, %x : tensor<2xcomplex<f32>>
  %1 = stablehlo.add %s, %s : tensor<f64>
  return %0, %1 : tensor<2xcomplex<f32>>, tensor<f64>
}
""")
    p = run(prog, "--input=2xcomplex<f32>=(1,2),(3.5,-4)", "--input=f64=5",
            "--output=@" + path("c.npy"), "--output=@" + path("s.npy"))
    check(p.returncode == 0, f"complex and rank-0 inputs: {p.stderr!r}")
    if p.returncode == 0:
        c, s = load_npy("c.npy"), load_npy("s.npy")
        check(c.dtype == np.complex64 and c.tolist() == [2 + 4j, 7 - 8j],
              f"complex sum {c}")
        check(s.dtype == np.float64 and s.shape == () and s == 10.0,
              f"scalar sum {s}")


def numpy_files():
    """@x.npy, @all.npz (stored and deflated), - on stdin and stdout."""
    rng = np.random.default_rng(33)
    x = rng.standard_normal((2, 2)).astype(np.float32)
    y = rng.standard_normal((2, 2)).astype(np.float32)
    want = (x + y).tobytes()
    np.save(path("x.npy"), x)
    np.save(path("y.npy"), y)
    np.savez(path("xy.npz"), x, y)
    np.savez_compressed(path("xyc.npz"), x, y)
    np.save(path("xf.npy"), np.asfortranarray(x.T).T.copy(order="F"))
    with open(path("xbe.npy"), "wb") as f:
        np.save(f, x.astype(">f4"))
    for name, args, stdin in [
            ("@x.npy @y.npy", ["--input=@" + path("x.npy"),
                               "--input=@" + path("y.npy")], None),
            ("@all.npz", ["--input=@" + path("xy.npz")], None),
            ("deflated .npz", ["--input=@" + path("xyc.npz")], None),
            ("fortran order", ["--input=@" + path("xf.npy"),
                               "--input=@" + path("y.npy")], None),
            ("big-endian", ["--input=@" + path("xbe.npy"),
                            "--input=@" + path("y.npy")], None),
            ("- on stdin", ["--input=-", "--input=@" + path("y.npy")],
             open(path("x.npy"), "rb").read())]:
        p = run(ADD, *args, "--output=-", stdin=stdin)
        ok = p.returncode == 0
        if ok:
            got = np.load(io.BytesIO(p.stdout))
            ok = got.dtype == np.float32 and got.tobytes() == want
        check(ok, f"{name} in, .npy on stdout: {p.stderr!r}")
    # --output= (empty) drops a result; later ones keep their order
    p = run(TWO, "--input=3xf32=1,2,3", "--input=3xi1=1,1,0", "--output=",
            "--output=@" + path("b.npy"))
    check(p.returncode == 0 and p.stdout == b"" and
          load_npy("b.npy").tolist() == [False, False, True],
          f"empty --output drops the first result: {p.stderr!r}")
    # --args=@FILE
    write("args.txt", "[dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>, "
          "dense<1.0> : tensor<2x2xf32>]")
    p = run(ADD, "--args=@" + path("args.txt"), "--output=@" + path("a.npy"))
    check(p.returncode == 0 and load_npy("a.npy").tolist() ==
          [[2, 3], [4, 5]], f"--args=@FILE: {p.stderr!r}")


MALFORMED = [
    "2x2xf32=1,2,3",           # too few values
    "2x2xf32=1,2,3,4,5",       # too many
    "2x2xf31=1,2,3,4",         # unknown type
    "2y2xf32=1,2,3,4",         # bad shape
    "2x2xf32",                 # no '='
    "2x2xf32=1,two,3,4",       # not a number
    "2x2xf32=0x1FFFFFFFF",     # hex wider than f32
    "2x2xi8=1,2,3,300",        # out of i8's range
    "2x2xui8=1,2,3,-1",        # negative unsigned
    "4xi1=true,false,maybe,1",  # not a boolean
    "2x2xf32=@/nonexistent/x.bin",
    "2x2xf32=@{x.bin}",        # 16 bytes, not 16 elements' worth? (wrong size)
    "@/nonexistent/x.npy",
    "@{garbage.npy}",
    "@{trunc.npy}",
    "@{struct.npy}",
    "@{trunc.npz}",
    "2xcomplex<f32>=(1,2),(3",
]


def malformed():
    with open(path("garbage.npy"), "wb") as f:
        f.write(b"not a numpy file at all")
    np.save(path("full.npy"), np.zeros((2, 2), np.float32))
    data = open(path("full.npy"), "rb").read()
    with open(path("trunc.npy"), "wb") as f:
        f.write(data[:-3])
    np.save(path("struct.npy"), np.zeros(2, dtype=[("a", "<f4"), ("b", "<i4")]))
    np.savez(path("full.npz"), np.zeros((2, 2), np.float32))
    data = open(path("full.npz"), "rb").read()
    with open(path("trunc.npz"), "wb") as f:
        f.write(data[:len(data) // 2])
    with open(path("x.bin"), "wb") as f:
        f.write(b"\0" * 12)
    for spec in MALFORMED:
        spec = spec.replace("{", TMP + "/").replace("}", "")
        p = run(ADD, "--input=" + spec, "--input=2x2xf32=1")
        err = p.stderr.decode()
        lines = err.strip().splitlines()
        check(p.returncode != 0 and p.stdout == b"" and len(lines) == 1 and
              spec[:40] in lines[0],
              f"malformed --input={spec}: rc {p.returncode}, {err!r}")


def hostile_files():
    """Truncated and corrupted .npy/.npz files: an error line or a run,
    never a crash (the readers check every length and offset)."""
    rng = np.random.default_rng(7)
    np.save(path("h.npy"), np.arange(4, dtype=np.float32).reshape(2, 2))
    np.savez(path("h.npz"), np.ones((2, 2), np.float32),
             np.ones((2, 2), np.float32))
    np.savez_compressed(path("hc.npz"), np.ones((2, 2), np.float32),
                        np.ones((2, 2), np.float32))
    for src in ("h.npy", "h.npz", "hc.npz"):
        good = open(path(src), "rb").read()
        for k in range(25):
            b = bytearray(good)
            if k % 3 == 0:
                b = b[:int(rng.integers(0, len(b)))]
            else:
                for _ in range(int(rng.integers(1, 6))):
                    b[int(rng.integers(0, len(b)))] = int(rng.integers(0, 256))
            with open(path("bad_" + src), "wb") as f:
                f.write(bytes(b))
            p = run(ADD, "--input=@" + path("bad_" + src),
                    "--input=2x2xf32=1")
            err = p.stderr.decode(errors="replace")
            check(p.returncode in (0, 1) and "Sanitizer" not in err and
                  (p.returncode == 0 or len(err.strip().splitlines()) == 1),
                  f"corrupt {src} #{k}: rc {p.returncode} {err[-300:]!r}")


def signature():
    np.save(path("f64.npy"), np.zeros((2, 2), np.float64))
    np.save(path("f32_23.npy"), np.zeros((2, 3), np.float32))
    cases = [
        (["--input=@" + path("f64.npy"), "--input=2x2xf32=1"],
         ["argument 0", "tensor<2x2xf32>", "tensor<2x2xf64>", "f64.npy"]),
        (["--input=2x2xf32=1", "--input=@" + path("f32_23.npy")],
         ["argument 1", "tensor<2x2xf32>", "tensor<2x3xf32>", "f32_23.npy"]),
        (["--input=2x2xf32=1"],
         ["takes 2 arguments", "tensor<2x2xf32>, tensor<2x2xf32>", "1 given"]),
        (["--input=2x2xf32=1"] * 3, ["takes 2 arguments", "3 given"]),
        (["--args=[dense<1.0> : tensor<2xf32>, dense<1.0> : tensor<2x2xf32>]"],
         ["argument 0", "tensor<2x2xf32>", "--args value 0", "tensor<2xf32>"]),
    ]
    for args, words in cases:
        p = run(ADD, *args)
        err = p.stderr.decode()
        check(p.returncode != 0 and len(err.strip().splitlines()) == 1 and
              all(w in err for w in words),
              f"{args}: expected {words} in {err!r}")
    multi = write("multi.mlir", """func.func @first(%x: tensor<f32>) -> tensor<f32> {
  return %x : tensor<f32>
}
func.func @second(%x: tensor<f32>) -> tensor<f32> {
  return %x : tensor<f32>
}
""")
    p = run(multi, "--entry", "secnd", "--input=f32=1")
    err = p.stderr.decode()
    check(p.returncode != 0 and "@first, @second" in err and
          "did you mean @second?" in err, f"--entry secnd: {err!r}")
    p = run(multi, "--input=f32=1")
    err = p.stderr.decode()
    check(p.returncode != 0 and "@first, @second" in err,
          f"no @main: the functions listed: {err!r}")


# (element type, numpy raw dtype, bit width) of the round-trip check
FLOATS = [("f32", np.uint32, 32), ("f64", np.uint64, 64),
          ("bf16", np.uint16, 16), ("f16", np.uint16, 16),
          ("f8E4M3FN", np.uint8, 8), ("f8E5M2", np.uint8, 8)]


def special_patterns(bits):
    """Both zeros, the smallest subnormals, infinities and NaNs with
    payloads, as bit patterns of an IEEE-like format of `bits` bits."""
    one = 1
    sign = one << (bits - 1)
    if bits == 64:
        exp_mask, quiet = 0x7FF0000000000000, 0x0008000000000000
    elif bits == 32:
        exp_mask, quiet = 0x7F800000, 0x00400000
    elif bits == 16:
        return [0, sign, 1, sign | 1, 0x03FF, 0x7C00, 0xFC00, 0x7E00,
                0x7E01, 0xFD55, 0x0400]
    else:
        return [0, sign, 1, sign | 1, 0x7F, 0xFF, 0x7C, 0x01]
    return [0, sign, 1, sign | 1, exp_mask - 1, exp_mask, sign | exp_mask,
            exp_mask | quiet, exp_mask | quiet | 1, sign | exp_mask | 5,
            exp_mask | quiet | 0x1234, exp_mask >> 1]


def printed_elements(text):
    """The element texts of a printed rank-1 tensor."""
    inner = text[text.index("[") + 1:text.rindex("]")]
    return [e.strip() for e in inner.split(",")]


def round_trip():
    rng = np.random.default_rng(3)
    for elem, raw, bits in FLOATS:
        n = 256
        pats = [int(x) for x in rng.integers(0, 1 << min(bits, 63), n,
                                             dtype=np.uint64)]
        if bits == 64:
            pats = [p | (int(rng.integers(0, 2)) << 63) for p in pats]
        pats += special_patterns(bits)
        if elem == "bf16":  # bf16's patterns are f32's top halves
            pats = pats[:n] + [0, 0x8000, 1, 0x8001, 0x7F80, 0xFF80, 0x7FC0,
                               0x7FC1, 0xFFA5, 0x007F, 0x0080]
        if elem == "f16":
            pats = [p & 0xFFFF for p in pats]
        arr = np.array(pats, dtype=np.uint64).astype(raw)
        if elem == "f8E4M3FN":  # 0x7F/0xFF are its NaNs: keep them
            pass
        n = len(arr)
        prog = ident(elem, n)
        if elem == "f16":
            np.save(path("rt.npy"), arr.view(np.float16))
        elif elem in ("f32", "f64"):
            np.save(path("rt.npy"), arr.view(np.float32 if bits == 32
                                             else np.float64))
        else:
            np.save(path("rt.npy"), arr)  # the raw view
        p = run(prog, "--input=@" + path("rt.npy"))
        if not check(p.returncode == 0, f"{elem}: print: {p.stderr!r}"):
            continue
        elems = printed_elements(p.stdout.decode())
        check(len(elems) == n, f"{elem}: {len(elems)} elements printed")
        text = f"[dense<[{', '.join(elems)}]> : tensor<{n}x{elem}>]"
        write("rt_args.txt", text)
        for how, args in [("--args", ["--args=@" + path("rt_args.txt")]),
                          ("--input", [f"--input={n}x{elem}=" +
                                       ",".join(elems)])]:
            p = run(prog, *args, "--output=@" + path("back.npy"))
            if not check(p.returncode == 0, f"{elem} via {how}: "
                         f"{p.stderr.decode()[:300]!r}"):
                continue
            back = load_npy("back.npy").view(raw)
            bad = [(hex(a), e, hex(b)) for a, e, b in
                   zip(arr.tolist(), elems, back.tolist()) if a != b]
            check(not bad, f"{elem} via {how}: {len(bad)} values do not "
                  f"read back, e.g. {bad[:3]}")


MATMUL = """func.func @main(%a: tensor<1000x1000xf32>, %b: tensor<1000x1000xf32>) -> tensor<1000x1000xf32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<1000x1000xf32>, tensor<1000x1000xf32>) -> tensor<1000x1000xf32>
  return %0 : tensor<1000x1000xf32>
}
"""


def matmul():
    prog = write("mm.mlir", MATMUL)
    rng = np.random.default_rng(1000)
    a = rng.standard_normal((1000, 1000)).astype(np.float32)
    b = rng.standard_normal((1000, 1000)).astype(np.float32)
    np.save(path("a.npy"), a)
    np.save(path("b.npy"), b)
    ins = ["--input=@" + path("a.npy"), "--input=@" + path("b.npy")]
    p = run(prog, *ins, "--output=@" + path("c.npy"))
    if not check(p.returncode == 0, f"matmul: {p.stderr!r}"):
        return
    c = load_npy("c.npy")
    check(c.dtype == np.float32 and c.shape == (1000, 1000), "c's type")
    # an independent check of the values (not of the bits: summation order)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    check(np.max(np.abs(c - ref)) < 1e-3 * np.max(np.abs(ref)),
          "c is a times b")
    if not SERVER:
        print("cli_io: no server given; the remote comparison skipped")
        return
    from srvtest import Server
    from shlo_client import Client
    srv = Server(SERVER, "--threads", THREADS, binary_port=True)
    try:
        for url in (f"shlo://127.0.0.1:{srv.bport}",
                    f"http://127.0.0.1:{srv.port}"):
            p = run(prog, *ins, "--server", url, "--output=@" + path("r.npy"))
            check(p.returncode == 0 and
                  load_npy("r.npy").tobytes() == c.tobytes(),
                  f"matmul at {url}: same bits as the local run "
                  f"{p.stderr!r}")
        with Client(f"shlo://127.0.0.1:{srv.bport}") as cl:
            (py,) = cl.execute(MATMUL, a, b)
        check(py.dtype == np.float32 and py.tobytes() == c.tobytes(),
              "matmul through the Python client: same bits")
    finally:
        srv.stop()


def help_and_version():
    """--help for every command; --version of shlo and shlo-server."""
    for cmd in ("run", "bench", "test", "verify", "print", "serialize"):
        p = subprocess.run([CLI, cmd, "--help"], capture_output=True,
                           text=True, timeout=30)
        check(p.returncode == 0 and
              p.stdout.startswith(f"usage: shlo {cmd} ") and
              p.stdout.count("\n") >= 3 and not p.stderr,
              f"shlo {cmd} --help: {p.returncode} {p.stdout!r} {p.stderr!r}")
    p = subprocess.run([CLI, "run", "--help"], capture_output=True, text=True)
    for flag in ("--input", "--args", "--output", "--entry", "--explain",
                 "--replicas", "--partitions", "--infeed", "--server",
                 "--mpi"):
        check(flag in p.stdout, f"shlo run --help names {flag}")
    versions = []
    for exe in [CLI] + ([SERVER] if SERVER else []):
        p = subprocess.run([exe, "--version"], capture_output=True,
                           text=True, timeout=30)
        lines = p.stdout.splitlines()
        ok = p.returncode == 0 and len(lines) == 4 and \
            lines[0].split()[0] == os.path.basename(exe) and \
            lines[1].startswith("StableHLO read: ") and \
            lines[2].startswith("StableHLO written: ") and \
            lines[3].startswith("MLIR bytecode formats: ")
        check(ok, f"{exe} --version: {p.returncode} {p.stdout!r}")
        versions.append([lines[0].split()[-1]] + lines[1:] if lines else [])
    check(len(set(map(tuple, versions))) == 1,
          f"shlo and shlo-server print the same versions: {versions}")


def producer_forms():
    """The MLIR forms producers emit around StableHLO run: tensor.cast
    (pretty and generic), func.call with attributes, region terminators in
    generic form."""
    prog = write("forms.mlir", """func.func private @twice(%x: tensor<?xf32>) -> tensor<?xf32> {
  %0 = "stablehlo.add"(%x, %x) : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  "func.return"(%0) : (tensor<?xf32>) -> ()
}
func.func @main(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<f32>) {
  %0 = tensor.cast %x : tensor<4xf32> to tensor<?xf32>
  %1 = func.call @twice(%0) {mhlo.sharding = "{replicated}"} : (tensor<?xf32>) -> tensor<?xf32>
  %2 = "tensor.cast"(%1) : (tensor<?xf32>) -> tensor<4xf32>
  %c = stablehlo.constant dense<0.0> : tensor<f32>
  %3 = "stablehlo.reduce"(%2, %c) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%s) : (tensor<f32>) -> ()
  }) {dimensions = array<i64: 0>} : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
  return %2, %3 : tensor<4xf32>, tensor<f32>
}
""")
    p = run(prog, "--input=4xf32=1,2,3,4.5", "--output=@" + path("f.npz"))
    ok = p.returncode == 0
    if ok:
        z = np.load(path("f.npz"))
        ok = z["arr_0"].tolist() == [2, 4, 6, 9] and float(z["arr_1"]) == 21
    check(ok, f"tensor.cast, func.call with attributes, generic "
          f"terminators: {p.stderr!r}")


help_and_version()
producer_forms()
literals()
complex_and_scalar()
numpy_files()
malformed()
hostile_files()
signature()
round_trip()
matmul()
finish("cli_io")
