# SPDX-License-Identifier: Apache-2.0
"""Issue #35: `shlo run --trace FILE` and `shlo bench --trace FILE` write
Chrome trace-event JSON.  The attention benchmark's trace must account for
at least 95% of the run: the union of its stage spans (read, parse,
verify, compile, argument parsing, execute, printing) over the span of the
whole command; every step span lies inside the execute span, names its op
and carries a thread id.  SKIPPED (77) without the bench programs.

usage: trace_cli.py SHLO_CLI PROGRAM.mlir"""
import json
import os
import subprocess
import sys
import tempfile

CLI, PROGRAM = sys.argv[1], sys.argv[2]
FAILURES = []


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what, file=sys.stderr, flush=True)
    return cond


def union_us(spans):
    """Microseconds covered by at least one of the (start, end) spans."""
    total, end = 0.0, None
    for a, b in sorted(spans):
        if end is None or a > end:
            total += b - a
            end = b
        elif b > end:
            total += b - end
            end = b
    return total


def load(path):
    with open(path) as f:
        return json.load(f)


def check_run(tmp):
    path = os.path.join(tmp, "t.json")
    a = "dense<0.5> : tensor<8x256x64xf32>"
    p = subprocess.run([CLI, "run", "--trace", path, "--args",
                        f"[{a}, {a}, {a}]", PROGRAM],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       timeout=120)
    if not check(p.returncode == 0, f"shlo run --trace: {p.stderr!r}"):
        return
    doc = load(path)
    ev = doc["traceEvents"]
    check(all(e["ph"] == "X" and e["dur"] >= 0 and "tid" in e for e in ev),
          "every event is a complete span with a duration and a thread")
    root = [e for e in ev if e["cat"] == "command"]
    stages = [e for e in ev if e["cat"] == "stage"]
    steps = [e for e in ev if e["cat"] == "step"]
    if not check(len(root) == 1, f"one command span: {root}"):
        return
    r0, r1 = root[0]["ts"], root[0]["ts"] + root[0]["dur"]
    names = {e["name"] for e in stages}
    for want in ("parse", "verify", "compile", "execute"):
        check(want in names, f"a {want} span: {sorted(names)}")
    cover = union_us([(max(e["ts"], r0), min(e["ts"] + e["dur"], r1))
                      for e in stages])
    share = cover / root[0]["dur"] if root[0]["dur"] else 0
    print(f"stage spans cover {100 * share:.2f}% of {root[0]['dur']:.0f} us")
    check(share >= 0.95, f"stage spans cover >= 95% of the run: {share:.4f}")
    ex = [e for e in stages if e["name"] == "execute"][0]
    x0, x1 = ex["ts"], ex["ts"] + ex["dur"]
    check(steps, "step spans")
    check(any("dot_general" in e["args"]["op"] for e in steps),
          "a step names stablehlo.dot_general")
    check(all(x0 - 1 <= e["ts"] and e["ts"] + e["dur"] <= x1 + 1
              for e in steps), "every step lies inside the execute span")
    check(doc["otherData"].get("spans_dropped") == 0, "no span dropped")


LOOP = """func.func @main() -> tensor<64xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<i64>
  %c1 = stablehlo.constant dense<1> : tensor<i64>
  %cn = stablehlo.constant dense<500> : tensor<i64>
  %x0 = stablehlo.constant dense<1.0> : tensor<64xf32>
  %r:2 = stablehlo.while(%i = %c0, %x = %x0) : tensor<i64>, tensor<64xf32>
    cond {
      %t = stablehlo.compare LT, %i, %cn : (tensor<i64>, tensor<i64>) -> tensor<i1>
      stablehlo.return %t : tensor<i1>
    } do {
      %n = stablehlo.add %i, %c1 : tensor<i64>
      %y = stablehlo.multiply %x, %x : tensor<64xf32>
      %z = stablehlo.sine %y : tensor<64xf32>
      stablehlo.return %n, %z : tensor<i64>, tensor<64xf32>
    }
  return %r#1 : tensor<64xf32>
}
"""


def check_regions(tmp):
    """A loop of 500 iterations is one span: its body's steps (tensor ops,
    so that the body runs as a plan, not as a scalar program) run inside
    the while step, once per iteration, and are not spans of their own."""
    prog, path = os.path.join(tmp, "loop.mlir"), os.path.join(tmp, "l.json")
    with open(prog, "w") as f:
        f.write(LOOP)
    p = subprocess.run([CLI, "run", "--trace", path, prog],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       timeout=120)
    if not check(p.returncode == 0, f"shlo run --trace (loop): {p.stderr!r}"):
        return
    steps = [e for e in load(path)["traceEvents"] if e["cat"] == "step"]
    ops = sorted(e["args"]["op"] for e in steps)
    check(len(steps) <= 5 and "stablehlo.while" in ops,
          f"the loop's steps, not its body's: {len(steps)} {ops[:8]}")


def check_bench(tmp):
    path = os.path.join(tmp, "b.json")
    p = subprocess.run([CLI, "bench", "--trace", path, "--runs", "2",
                        "--warmup", "1", PROGRAM], stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, timeout=120)
    if not check(p.returncode == 0, f"shlo bench --trace: {p.stderr!r}"):
        return
    ev = load(path)["traceEvents"]
    runs = [e for e in ev if e["cat"] == "stage" and e["name"].startswith("run ")]
    check(len(runs) == 2, f"one span per timed run: {[e['name'] for e in runs]}")
    steps = [e for e in ev if e["cat"] == "step"]
    # the same steps each run: warmup + 2 runs
    check(steps and len(steps) % 3 == 0, f"steps of 3 runs: {len(steps)}")
    p = subprocess.run([CLI, "bench", "--trace", path, "--profile", PROGRAM],
                       capture_output=True, timeout=60)
    check(p.returncode == 2, "--trace with --profile is refused (usage)")


def main():
    if not os.path.exists(PROGRAM):
        print(f"SKIP: {PROGRAM} missing (../shared/bench)")
        sys.exit(77)
    with tempfile.TemporaryDirectory() as tmp:
        check_run(tmp)
        check_regions(tmp)
        check_bench(tmp)
    if FAILURES:
        sys.exit(1)
    print("trace_cli: ok")


main()
