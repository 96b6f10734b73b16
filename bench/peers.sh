#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# shlo against numpy, PyTorch and JAX's CPU backend (XLA:CPU, compiling the
# same StableHLO: bench/jax_peer.py) on the bench programs, side by side in
# one run, with each program's distance to what this machine can do at
# most.
#
#   bash bench/peers.sh [--rounds N] [--runs N] [--program NAME]...
#                       [--bench-dir DIR] [--no-limits] [--server URL]...
#
# For each round (3 by default) and each program, `shlo bench` and the two
# peers of ../shared/bench/peers.py run one after the other, so a slow
# spell of a shared machine hits all three alike; the table gives the
# median over the rounds of each one's median time.  Every shlo result is
# checked against each peer's float64 sum and 2-norm (a mismatch is
# printed and makes the exit status 1).  limits.c (built here with
# -march=native, it measures the machine, it is not shipped) gives the
# sgemm rate and the memory bandwidth of this run; each program's floor is
# max(flops / sgemm rate, bytes / bandwidth) and the table shows shlo's
# time over it.  limits.c runs once per round, and the best of its
# medians over the rounds counts: a slow spell only lowers a sample.
# The GEMM programs' GEMM steps (their dot_general and convolution steps,
# timed by --profile in the same round, the median of three profiles) are
# set against the sgemm rate of their own round: both then ran under the
# same load.  The median of those
# per-round shares is shown, then the best.
# Where PyTorch or JAX cannot be imported, the table says so ("n/a") and
# compares with the others.
#
# --server URL (http://host:port or shlo://host:port, token from
# $SHLO_TOKEN; may be given more than once) also runs each program through
# a running shlo-server with `shlo bench --server`, in the same rounds, and
# prints a second table: its median time beside the in-process one and the
# overhead (protocol, transfer of the inputs and results, queueing).
#
# A benchmark, not a test: the figures depend on the machine and its load
# (printed first).  Compare ratios within one run, never across runs.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=3
runs=20
bench_dir=${SHLO_BENCH_DIR:-../shared/bench}
build=${BUILD_DIR:-build}
limits=1
programs=()
servers=()
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --program) programs+=("$2"); shift 2 ;;
    --bench-dir) bench_dir=$2; shift 2 ;;
    --no-limits) limits=0; shift ;;
    --server) servers+=("$2"); shift 2 ;;
    -h|--help) sed -n '2,35p' "$0"; exit 0 ;;
    *) echo "peers.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ ${#programs[@]} -gt 0 ] || programs=(mlp cnn gelu softmax attention layernorm
  while_loop gather_scatter sort reduce_window)
py=/usr/bin/python3 # Debian's, with python3-numpy and python3-torch
[ -x "$py" ] || py=python3
shlo=${SHLO_BIN:-$build/client/shlo} # SHLO_BIN: another build to measure
[ -x "$shlo" ] || { echo "peers.sh: build $shlo first" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
records=$tmp/records # lines: round program who median_ms sum l2

peer_list=(numpy torch)
if ! "$py" -c 'import torch' 2>/dev/null; then
  peer_list=(numpy)
  echo "torch: not available"
fi
# JAX's CPU backend (XLA:CPU) compiling the same StableHLO (jax_peer.py)
if "$py" -c 'import jax' 2>/dev/null; then
  peer_list+=(jax)
  echo "jax: $("$py" -c 'import jax; print(jax.__version__)' 2>/dev/null)"
else
  echo "jax: not available (pip install jax jaxlib)"
fi

# peers.py imports torch at the top; without it, numpy runs with a stand-in
# module that only absorbs those module-level calls.
run_peer() { # program peer
  if [ "$2" = jax ]; then
    "$py" bench/jax_peer.py --program "$1" --bench-dir "$bench_dir"
  elif [ "$2" = torch ] || "$py" -c 'import torch' 2>/dev/null; then
    "$py" "$bench_dir/peers.py" --program "$1" --peer "$2" --json
  else
    "$py" - "$bench_dir/peers.py" "$1" <<'PY'
import runpy, sys, types
class Absorb(types.ModuleType):
    def __getattr__(self, name): return lambda *a, **k: None
for name in ("torch", "torch.nn", "torch.nn.functional"):
    sys.modules[name] = Absorb(name)
    parent, _, leaf = name.rpartition(".")
    if parent: # `import torch.nn.functional as F` reads it as an attribute
        setattr(sys.modules[parent], leaf, sys.modules[name])
sys.modules["torch"].__version__ = "none"
sys.argv = [sys.argv[1], "--program", sys.argv[2], "--peer", "numpy", "--json"]
runpy.run_path(sys.argv[0], run_name="__main__")
PY
  fi
}

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
# The OpenBLAS core: shlo replaces OpenBLAS's pick when OpenBLAS does not
# know the CPU and falls back to an old core (core/blas_setup.h); the
# peers (numpy and torch call OpenBLAS too) and limits.c then run that
# core as well, so the table compares engines, not core detection.
kernels=$("$shlo" bench "$bench_dir/programs/${programs[0]}.mlir" --runs 1 \
  --warmup 0 | sed -n 's/^  kernels: //p')
echo "shlo kernels: $kernels"
if [ -z "${OPENBLAS_CORETYPE:-}" ] && [[ "$kernels" == *"(OpenBLAS picked"* ]]; then
  OPENBLAS_CORETYPE=$(sed 's/.*blas \([A-Za-z0-9_]*\).*/\1/' <<< "$kernels")
  export OPENBLAS_CORETYPE
  echo "OPENBLAS_CORETYPE=$OPENBLAS_CORETYPE for limits.c and the peers too"
fi
if [ "$limits" = 1 ]; then
  cc -O3 -march=native "$bench_dir/limits.c" -lopenblas -lpthread -o "$tmp/limits"
fi

for ((r = 1; r <= rounds; r++)); do
  # the limits too, every round (see the top)
  [ "$limits" = 1 ] && "$tmp/limits" >> "$tmp/limits.txt"
  for p in "${programs[@]}"; do
    mlir=$bench_dir/programs/$p.mlir
    w=3; n=$runs
    [ "$p" = while_loop ] && { w=1; n=3; }
    "$shlo" bench "$mlir" --runs "$n" --warmup "$w" > "$tmp/shlo.out"
    awk -v r="$r" -v p="$p" '
      /median/ { for (i = 1; i <= NF; i++) if ($i == "median") ms = $(i + 1) }
      /output 0:/ { print r, p, "shlo", ms, $4, $6 }' "$tmp/shlo.out" >> "$records"
    for url in "${servers[@]}"; do
      "$shlo" bench "$mlir" --runs "$n" --warmup "$w" --server "$url" \
        > "$tmp/remote.out"
      awk -v r="$r" -v p="$p" -v who="at:$url" '
        /median/ { for (i = 1; i <= NF; i++) if ($i == "median") ms = $(i + 1) }
        /output 0:/ { print r, p, who, ms, $4, $6 }' "$tmp/remote.out" >> "$records"
    done
    # the GEMM programs again with --profile, in the same round: the time
    # of their GEMM steps alone (dot_general, convolution), unfused so
    # that no elementwise work joins their blocks.  A profile gives each
    # step's mean over its runs, which one slow run moves, so three
    # profiles and the median of them; each after 10 runs not counted
    # (the first few runs of a process are slower still)
    case "$p" in
    mlp|cnn|attention)
      for ((i = 0; i < 3; i++)); do
        SHLO_NO_FUSION=1 "$shlo" bench "$mlir" --runs "$n" --warmup 10 \
          --profile > "$tmp/profile.out"
        awk '$1 == "stablehlo.dot_general" || $1 == "stablehlo.convolution" {
          us += $(NF - 1) } END { print us / 1000 }' "$tmp/profile.out"
      done | sort -g | awk -v p="$p" '{ ms[NR] = $1 }
        END { print p, ms[int((NR + 1) / 2)] }' >> "$tmp/gemm_steps" ;;
    esac
    for peer in "${peer_list[@]}"; do
      run_peer "$p" "$peer" | "$py" -c '
import json, sys
r = json.loads(sys.stdin.readline())
print(sys.argv[1], r["program"], r["peer"], r["median_ms"], repr(r["sum"]), repr(r["l2"]))' "$r" >> "$records"
    done
  done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

touch "$tmp/gemm_steps"
"$py" - "$records" "$tmp/limits.txt" "$rounds" "${peer_list[*]}" "$tmp/gemm_steps" <<'PY'
import re, statistics, sys
records, limits_path, rounds, peers = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4].split()
steps_runs = {}
for l in open(sys.argv[5]):
    if l.strip():
        steps_runs.setdefault(l.split()[0], []).append(float(l.split()[1]))
rates = []
# flops of the GEMM work, bytes every implementation must move at least.
MIB = 1 << 20
WORK = {
    "mlp": (2 * 64 * (784 * 1024 + 1024 * 1024 + 1024 * 10), 4 * (784 + 1024 + 10) * 1024),
    "cnn": (2 * (16 * 32 * 32 * 32 * 27 + 16 * 16 * 16 * 64 * (288 + 576)), 16 * 32 * 32 * 3 * 4),
    "gelu": (0, 32 * MIB),
    "softmax": (0, 32 * MIB),
    "attention": (2 * 2 * 8 * 256 * 256 * 64, 4 * 3 * 8 * 256 * 64 + 4 * 8 * 256 * 64),
    "layernorm": (0, 16 * MIB),
    "while_loop": (0, 0),
    "gather_scatter": (0, 16 * MIB + 2 * 4 * MIB),
    "sort": (0, 8 * MIB),
    "reduce_window": (0, 40 * MIB),
}
rows = {}
for line in open(records):
    r, prog, who, ms, s, l2 = line.split()
    rows.setdefault(prog, {}).setdefault(who, []).append((float(ms), float(s), float(l2)))
gflops = gbs = None
try:
    text = open(limits_path).read()
    # each round's rate: the best median of its sizes and thread counts
    sgemm = r"sgemm .* median +[\d.]+ ms +([\d.]+) GFLOP/s"
    rates = [max(float(m) for m in re.findall(sgemm, part))
             for part in text.split("openblas_get_config")[1:]]
    gflops = max(rates)
    gbs = max(float(m) for m in re.findall(r"memory .* median +[\d.]+ ms +([\d.]+) GB/s", text))
    core = re.search(r"openblas_get_corename: (\S+)", text).group(1)
    print(f"limits: sgemm {gflops:.1f} GFLOP/s, bandwidth {gbs:.2f} GB/s "
          f"(best medians of limits.c over {rounds} rounds, OpenBLAS core {core})")
except (OSError, ValueError, AttributeError):
    print("limits: not measured")

def close(a, b):
    (_, s1, n1), (_, s2, n2) = a, b
    return abs(n1 - n2) <= 1e-4 * max(abs(n2), 1e-30) and abs(s1 - s2) <= 1e-4 * (abs(s2) + n2) + 1e-9

print(f"\nmedian of {rounds} rounds, each the median of its runs; load average in 'load' lines above\n")
hdr = ["program", "shlo ms", "numpy ms", "torch ms", "jax ms", "shlo ÷ jax", "shlo ÷ fastest peer", "floor ms", "shlo ÷ floor", "check"]
print("| " + " | ".join(hdr) + " |")
print("|---|" + "---:|" * (len(hdr) - 2) + "---|")
bad = 0
for prog, by in rows.items():
    med = {who: statistics.median(x[0] for x in v) for who, v in by.items()
           if not who.startswith("at:")}
    peer_ms = [med[p] for p in peers if p in med]
    ratio = med["shlo"] / min(peer_ms) if peer_ms and "shlo" in med else float("nan")
    flops, nbytes = WORK.get(prog, (0, 0))
    floor = None
    if gflops and (flops or nbytes):
        floor = max(flops / (gflops * 1e6), nbytes / (gbs * 1e6))
    checks = []
    for p in peers:
        for a, b in zip(by.get("shlo", []), by.get(p, [])):
            if not close(a, b):
                checks.append(f"MISMATCH {p}: sum {a[1]:.9g} vs {b[1]:.9g}, l2 {a[2]:.9g} vs {b[2]:.9g}")
                bad += 1
                break
    cells = [prog, f"{med.get('shlo', float('nan')):.2f}"]
    cells += [f"{med[p]:.2f}" if p in med else "n/a" for p in ("numpy", "torch", "jax")]
    cells += [f"{med['shlo'] / med['jax']:.2f}" if "jax" in med and "shlo" in med else "n/a"]
    cells += [f"{ratio:.2f}", f"{floor:.2f}" if floor else "-",
              f"{med['shlo'] / floor:.1f}" if floor else "-", "; ".join(checks) or "ok"]
    print("| " + " | ".join(cells) + " |")
if gflops:
    share = lambda p, ms: f"{p} {WORK[p][0] / (gflops * 1e6) / ms * 100:.0f}%"
    print("\nGEMM share of the sgemm rate (flops ÷ rate ÷ shlo time):",
          ", ".join(share(p, statistics.median(x[0] for x in rows[p]['shlo']))
                    for p in ("mlp", "cnn", "attention") if p in rows and "shlo" in rows[p]))
    # each round's GEMM steps against that round's sgemm rate (the rounds
    # in order in both files), so that both sides saw the same load
    cells = []
    for p, steps in steps_runs.items():
        if len(steps) != len(rates) or min(steps) <= 0:
            continue
        shares = [WORK[p][0] / (rate * 1e6) / ms * 100 for rate, ms in zip(rates, steps)]
        cells.append(f"{p} {statistics.median(shares):.0f}% (steps {statistics.median(steps):.2f} ms; "
                     f"rounds {', '.join(f'{x:.0f}' for x in shares)}%)")
    if cells:
        print("the same over the time of their GEMM steps alone (dot_general and "
              "convolution, unfused, the median of 3 --profile runs per round), each round's against "
              "that round's sgemm rate; the median of the rounds:", "; ".join(cells))
remote = sorted({who for by in rows.values() for who in by if who.startswith("at:")})
if remote:
    print("\nthrough a server (median of the rounds; overhead = its time - in-process time):\n")
    print("| program | in-process ms | " + " | ".join(f"{w[3:]} ms | overhead ms | ×" for w in remote) + " | check |")
    print("|---|---:|" + "---:|---:|---:|" * len(remote) + "---|")
    for prog, by in rows.items():
        if "shlo" not in by:
            continue
        local = statistics.median(x[0] for x in by["shlo"])
        cells, checks = [prog, f"{local:.2f}"], []
        for w in remote:
            if w not in by:
                cells += ["n/a"] * 3
                continue
            ms = statistics.median(x[0] for x in by[w])
            cells += [f"{ms:.2f}", f"{ms - local:.2f}", f"{ms / local:.2f}"]
            for a, b in zip(by[w], by["shlo"]):
                if not close(a, b):
                    checks.append(f"MISMATCH {w[3:]}: sum {a[1]:.9g} vs {b[1]:.9g}")
                    bad += 1
                    break
        print("| " + " | ".join(cells + ["; ".join(checks) or "ok"]) + " |")
sys.exit(1 if bad else 0)
PY
