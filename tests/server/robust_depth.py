# SPDX-License-Identifier: Apache-2.0
"""Issue #30, item 2: no recursion bounded only by the stack.  A sanitized
server (ASan: its frames are several times larger than a plain build's) is
sent a 100,000-deep chain of func.call, 100,000-deep nested regions and
100,000-deep nested types, attributes and literal brackets, each at
/v1/modules and at /execute: every one is answered 4xx with a message that
names the limit, the server stays up and answers /healthz, and a chain and
a nest at the limit (256 levels, the engine's default) still run and give
the right answer; --max-nesting-depth sets another limit.  SIGTERM then ends the server with status 0 and no
sanitizer report.  Given the CLI too, `shlo run` gives the same refusals
with exit status 1, and the answer at the limit.

usage: robust_depth.py SHLO_SERVER [SHLO_CLI]"""
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from srvtest import Server, check, check_clean_stops, finish  # noqa: E402

LIMIT = 256  # SHLO_DEFAULT_MAX_DEPTH (engine/include/shlo/limits.h)
DEEP = 100_000
T = "tensor<2xi32>"
HEAD = (f"func.func @main() -> {T} {{\n"
        f"  %c = stablehlo.constant dense<[5, 6]> : {T}\n")


def call_chain(n):
    """@main calls @f0, which calls @f1 ... @f{n-1}, which doubles its
    argument: n calls deep; the answer is [10, 12]."""
    out = [HEAD, f"  %r = func.call @f0(%c) : ({T}) -> {T}\n",
           f"  func.return %r : {T}\n}}\n"]
    for i in range(n):
        out.append(f"func.func private @f{i}(%a: {T}) -> {T} {{\n")
        if i + 1 < n:
            out.append(f"  %r = func.call @f{i + 1}(%a) : ({T}) -> {T}\n")
        else:
            out.append(f"  %r = stablehlo.add %a, %a : {T}\n")
        out.append(f"  func.return %r : {T}\n}}\n")
    return "".join(out)


def nested_regions(n):
    """n stablehlo.case ops, each in the last one's only branch (generic
    form); the innermost doubles [5, 6]."""
    out = [HEAD, "  %i = stablehlo.constant dense<0> : tensor<i32>\n"]
    out += [f'  %r{k} = "stablehlo.case"(%i) ({{\n' for k in range(n)]
    out.append(f"  %d = stablehlo.add %c, %c : {T}\n"
               f'  "stablehlo.return"(%d) : ({T}) -> ()\n')
    for k in range(n - 1, -1, -1):
        out.append(f"  }}) : (tensor<i32>) -> {T}\n")
        if k:
            out.append(f'  "stablehlo.return"(%r{k}) : ({T}) -> ()\n')
    out.append(f"  func.return %r0 : {T}\n}}\n")
    return "".join(out)


def nested(pre, open_, mid, close, post, n):
    return pre + open_ * n + mid + close * n + post


EMPTY = ") {\n  func.return\n}\n"
NESTS = {
    "tuple types": nested("func.func @main(%a: ", "tuple<", "tensor<i32>",
                          ">", EMPTY, DEEP),
    "complex types": nested("func.func @main(%a: tensor<", "complex<", "f32",
                            ">", ">" + EMPTY, DEEP),
    "dictionaries": nested("func.func @main() attributes {x = ", "{a = ",
                           "1", "}", "} {\n  func.return\n}\n", DEEP),
    "arrays": nested("func.func @main() attributes {x = ", "[", "1", "]",
                     "} {\n  func.return\n}\n", DEEP),
    "dense brackets": nested("func.func @main() {\n  %c = stablehlo.constant"
                             " dense<", "[", "1", "]",
                             "> : tensor<1xi32>\n  func.return\n}\n", DEEP),
}


def answer_text(body):
    return body.decode(errors="replace") if isinstance(body, bytes) \
        else str(body)


def refused(srv, what, path, program):
    """program at path is answered 4xx naming the limit; the server still
    answers /healthz."""
    if path == "/v1/modules":
        st, _, body = srv.request("POST", path, {"program": program},
                                  timeout=300)
    else:  # the program's text as the body: /execute with no inputs
        st, _, body = srv.request("POST", path, program.encode(),
                                  {"Content-Type": "text/plain"}, timeout=300)
    text = answer_text(body)
    check(400 <= st < 500, f"{what} at {path}: 4xx, got {st} {text[:300]}")
    check(f"deeper than {LIMIT} (the limit" in text,
          f"{what} at {path}: the answer names the limit: {text[:300]}")
    print(f"{what} at {path}: {st} {text[:160]}", flush=True)
    try:
        hst, _, _ = srv.request("GET", "/healthz", timeout=10)
    except OSError as e:
        hst = f"no answer ({e})"
    check(hst == 200, f"the server answers /healthz after {what}: {hst}")


def runs(srv, what, program):
    """program, registered and run, and run at /execute, gives [10, 12]."""
    st, _, body = srv.request("POST", "/execute", program.encode(),
                              {"Content-Type": "text/plain"}, timeout=300)
    text = answer_text(body)
    check(st == 200 and "[10,12]" in text.replace(" ", ""),
          f"{what} at /execute: 200 with [10, 12], got {st} {text[:300]}")
    st, info = srv.post("/v1/modules", {"program": program}, timeout=300)
    check(st == 200 and isinstance(info, dict) and "id" in info,
          f"{what} registered: {st} {str(info)[:300]}")
    if st == 200 and isinstance(info, dict) and "id" in info:
        st, _, body = srv.request("POST", f"/v1/modules/{info['id']}/execute",
                                  {}, timeout=300)
        text = answer_text(body)
        check(st == 200 and "[10,12]" in text.replace(" ", ""),
              f"{what} run as a module: 200 with [10, 12], got {st} "
              f"{text[:300]}")


def cli_run(cli, what, program, refusal):
    """`shlo run` on program: exit 1 with refusal on stderr, or (refusal
    None) exit 0 printing [10, 12]."""
    with tempfile.NamedTemporaryFile("w", suffix=".mlir") as f:
        f.write(program)
        f.flush()
        r = subprocess.run([cli, "run", f.name], capture_output=True,
                           text=True, timeout=300)
    if refusal is None:
        check(r.returncode == 0 and "[10, 12]" in r.stdout,
              f"shlo run, {what}: exit 0 with [10, 12], got {r.returncode} "
              f"{r.stdout[:200]} {r.stderr[:300]}")
    else:
        check(r.returncode == 1 and refusal in r.stderr,
              f"shlo run, {what}: exit 1 with '{refusal}', got "
              f"{r.returncode} {r.stderr[:300]}")
        print(f"shlo run, {what}: {r.returncode} {r.stderr.strip()[:160]}",
              flush=True)


if len(sys.argv) > 2:
    words = f"deeper than {LIMIT} (the limit"
    cli_run(sys.argv[2], f"a {LIMIT}-deep call chain", call_chain(LIMIT), None)
    cli_run(sys.argv[2], f"{LIMIT}-deep nested regions",
            nested_regions(LIMIT), None)
    cli_run(sys.argv[2], f"a {DEEP}-deep call chain", call_chain(DEEP),
            "call chain " + words)
    cli_run(sys.argv[2], f"{DEEP}-deep nested regions", nested_regions(DEEP),
            "regions nested " + words)
    cli_run(sys.argv[2], f"{DEEP}-deep tuple types", NESTS["tuple types"],
            words)

srv = Server(sys.argv[1], "--threads", "2", "--compile-timeout-ms", "300000",
             "--request-timeout-s", "300", env=dict(os.environ),
             log_path=f"/tmp/shlo-robust-depth-{os.getpid()}.log")
t0 = time.monotonic()
runs(srv, f"a {LIMIT}-deep call chain", call_chain(LIMIT))
runs(srv, f"{LIMIT}-deep nested regions", nested_regions(LIMIT))
for path in ("/v1/modules", "/execute"):
    refused(srv, f"a {DEEP}-deep call chain", path, call_chain(DEEP))
    refused(srv, f"{DEEP}-deep nested regions", path, nested_regions(DEEP))
    for what, program in NESTS.items():
        refused(srv, f"{DEEP}-deep {what}", path, program)
print(f"all answered in {time.monotonic() - t0:.1f} s", flush=True)
stops = [(srv.stop(), srv.log())]

# The operator's own bound: --max-nesting-depth.
srv = Server(sys.argv[1], "--max-nesting-depth", "16", env=dict(os.environ),
             log_path=f"/tmp/shlo-robust-depth-{os.getpid()}-16.log")
LIMIT = 16
runs(srv, "a 16-deep call chain under --max-nesting-depth 16",
     call_chain(16))
refused(srv, "a 17-deep call chain under --max-nesting-depth 16", "/execute",
        call_chain(17))
refused(srv, "17-deep nested regions under --max-nesting-depth 16",
        "/v1/modules", nested_regions(17))
stops.append((srv.stop(), srv.log()))
check_clean_stops(stops)
finish("robust_depth")
