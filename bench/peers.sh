#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# shlo against numpy, PyTorch, ONNX Runtime (CPU) and JAX's CPU backend
# (XLA:CPU, compiling the same StableHLO: bench/jax_peer.py) on the bench
# programs and on the model programs, side by side in one run, with each
# program's distance to what this machine can do at most.
#
#   bash bench/peers.sh [--rounds N] [--runs N] [--program NAME]...
#                       [--bench-dir DIR] [--no-limits] [--no-models]
#                       [--models-only] [--server URL]... [--serve-small]
#
# Programs: the ten of ../shared/bench/programs and the models of
# bench/models (transformer, transformer_bf16, bottleneck, lstm,
# linear_f32, int8_linear; written by bench/models/gen.py, their peers
# bench/model_peers.py).  For each round (3 by default) and each program,
# `shlo bench` and the peers run one after the other, so a slow spell of a
# shared machine hits all alike; the table gives the median over the
# rounds of each one's median time, and shlo's time over the fastest of
# numpy, PyTorch and ONNX Runtime (JAX is shown beside, not in that ratio).
# Each peer at its best (../shared/bench/README.md, "Peers"): every peer
# runs under both glibc allocator settings in each round (the default, and
# freed memory kept: $KEEP_FREED below) and the faster counts, and so
# does shlo (two draws each on a noisy machine, not two for the peers and
# one for shlo, as before 2026-12-07); where the
# CPU has AVX-512 and OPENBLAS_CORETYPE is unset, it is set to SkylakeX for
# everyone (Debian's OpenBLAS 0.3.21 falls back to an old core on CPUs
# newer than itself).  numpy, PyTorch and ONNX Runtime run in Debian's
# python3 without the user site (-s), so that a pip-installed numpy there
# (JAX's) cannot shadow the one Debian's torch is built against; JAX runs
# with it.  Every shlo result is checked against each peer's float64 sum
# and 2-norm (a mismatch is printed and makes the exit status 1; the bf16
# and int8 programs have looser bounds, named in the table's notes).  A
# mismatch whose peer is alone, the other peers of its round agreeing with
# shlo, says so: ONNX Runtime's ScatterND with reduction add races on
# duplicate indices with two threads (microsoft/onnxruntime#18048 and
# #23396), and gather_scatter's sum then moves from round to round.  A
# peer that cannot run a program shows "n/a" and the reason under the
# table; a program shlo refuses shows "refused" and shlo's error.
# limits.c (built here with
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
# Where a peer cannot be imported, the table says so ("n/a") and
# compares with the others.
#
# --server URL (http://host:port or shlo://host:port, token from
# $SHLO_TOKEN; may be given more than once) also runs each program through
# a running shlo-server with `shlo bench --server`, in the same rounds, and
# prints a second table: its median time beside the in-process one and the
# overhead (protocol, transfer of the inputs and results, queueing).
# --serve-small starts a shlo-server (HTTP and binary ports, loopback) and
# sends it a small cached program from 64 connections at once, one request
# in flight on each (build/client/shlo-loadgen rate), beside the same
# program run in-process (bench/small_inproc.c): requests/s and the server's cost
# per request, 1/rate - the in-process time of one run.
#
# PEERS_KEEP=DIR keeps the raw records there (one line per round, program
# and runner: median ms, sum, l2; the peers' errors; limits.c's output).
#
# A benchmark, not a test: the figures depend on the machine and its load
# (printed first).  Compare ratios within one run, never across runs.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
rounds=3
runs=20
bench_dir=${SHLO_BENCH_DIR:-../shared/bench}
build=${BUILD_DIR:-build}
limits=1
programs=()
servers=()
models=1
serve_small=0
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --program) programs+=("$2"); shift 2 ;;
    --bench-dir) bench_dir=$2; shift 2 ;;
    --no-limits) limits=0; shift ;;
    --server) servers+=("$2"); shift 2 ;;
    --no-models) models=0; shift ;;
    --models-only) models=2; shift ;;
    --serve-small) serve_small=1; shift ;;
    -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1' "$0"; exit 0 ;;
    *) echo "peers.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
model_list=(transformer transformer_bf16 bottleneck lstm linear_f32 int8_linear)
if [ ${#programs[@]} -eq 0 ]; then
  [ "$models" = 2 ] || programs=(mlp cnn gelu softmax attention layernorm
    while_loop gather_scatter sort reduce_window)
  [ "$models" = 0 ] || programs+=("${model_list[@]}")
fi
is_model() { [[ " ${model_list[*]} " == *" $1 "* ]]; }
mlir_of() { if is_model "$1"; then echo "bench/models/$1.mlir"; else echo "$bench_dir/programs/$1.mlir"; fi; }
# Debian's python3 (python3-numpy, python3-torch, python3-onnx); -s leaves
# the user site out: a pip-installed numpy 2 there breaks Debian's torch
pyd=/usr/bin/python3
[ -x "$pyd" ] || pyd=python3
py=("$pyd" -s)
pyjax=("$pyd") # JAX (pip, user site) with its own numpy
shlo=${SHLO_BIN:-$build/client/shlo} # SHLO_BIN: another build to measure
[ -x "$shlo" ] || { echo "peers.sh: build $shlo first" >&2; exit 2; }
# glibc keeping freed memory for reuse instead of unmapping it
KEEP_FREED=glibc.malloc.mmap_threshold=1073741824:glibc.malloc.trim_threshold=4294967295

tmp=$(mktemp -d)
# PEERS_KEEP=DIR: the raw records (and limits.c's output) are kept there
trap '[ -n "${PEERS_KEEP:-}" ] && cp -r "$tmp/." "$PEERS_KEEP/"; rm -rf "$tmp"' EXIT
records=$tmp/records # lines: round program who median_ms sum l2
errors=$tmp/errors   # lines: program who message

peer_list=(numpy)
if "${py[@]}" -c 'import torch' 2>/dev/null; then
  peer_list+=(torch)
  echo "torch: $("${py[@]}" -c 'import torch; print(torch.__version__)')"
else
  echo "torch: not available (apt-get install python3-torch)"
fi
if "${py[@]}" -c 'import onnxruntime, onnx, torch' 2>/dev/null; then
  peer_list+=(ort)
  echo "onnxruntime: $("${py[@]}" -c 'import onnxruntime; print(onnxruntime.__version__)')"
else
  echo "onnxruntime: not available (pip install onnxruntime; apt-get install python3-onnx python3-torch)"
fi
# JAX's CPU backend (XLA:CPU) compiling the same StableHLO (jax_peer.py)
if "${pyjax[@]}" -c 'import jax' 2>/dev/null; then
  peer_list+=(jax)
  echo "jax: $("${pyjax[@]}" -c 'import jax; print(jax.__version__)' 2>/dev/null)"
else
  echo "jax: not available (pip install jax jaxlib)"
fi
echo "numpy: $("${py[@]}" -c 'import numpy; print(numpy.__version__)')"

# The ORT models of the ten programs: ../shared/bench/ort/export.py, once
ort_models=$tmp/ort-models
ort_ready=0
ort_export() {
  [ "$ort_ready" = 1 ] && return 0
  mkdir -p "$ort_models"
  BENCH_DIR=$bench_dir "${py[@]}" "$bench_dir/ort/export.py" "$ort_models" >/dev/null 2>&1 &&
    ort_ready=1
}

# One JSON line of a peer for a program.  peers.py imports torch at the
# top; without it, numpy runs with a stand-in module that only absorbs
# those module-level calls.
peer_json() { # program peer
  local p=$1 peer=$2
  if is_model "$p" && [ "$peer" = jax ]; then
    "${pyjax[@]}" bench/jax_peer.py --program "$p" --mlir "$(mlir_of "$p")" \
      $(case "$p" in transformer*|lstm) echo --runs 10 --warmup 2 ;; esac)
  elif is_model "$p"; then
    "${py[@]}" bench/model_peers.py --program "$p" --peer "$peer"
  elif [ "$peer" = jax ]; then
    "${pyjax[@]}" bench/jax_peer.py --program "$p" --bench-dir "$bench_dir"
  elif [ "$peer" = ort ]; then
    ort_export || { echo "{\"program\": \"$p\", \"peer\": \"ort\", \"error\": \"export.py failed\"}"; return; }
    "${py[@]}" "$bench_dir/ort/bench.py" --program "$p" --models "$ort_models"
  elif [ "$peer" = torch ] || "${py[@]}" -c 'import torch' 2>/dev/null; then
    "${py[@]}" "$bench_dir/peers.py" --program "$p" --peer "$peer" --json
  else
    "${py[@]}" - "$bench_dir/peers.py" "$p" <<'PY'
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

# A peer at its best: under both allocator settings, the faster line.
run_peer() { # program peer
  { peer_json "$1" "$2"; GLIBC_TUNABLES=$KEEP_FREED peer_json "$1" "$2"; } 2>/dev/null |
    "${py[@]}" -c '
import json, sys
best = err = None
for line in sys.stdin:
    try:
        r = json.loads(line)
    except ValueError:
        continue
    if "median_ms" in r:
        if best is None or r["median_ms"] < best["median_ms"]:
            best = r
    elif "error" in r:
        err = r["error"]
if best:
    print(json.dumps(best))
else:
    print(json.dumps({"error": err or "no result"}))'
}

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
# The OpenBLAS core: shlo replaces OpenBLAS's pick when OpenBLAS does not
# know the CPU and falls back to an old core (core/blas_setup.h); the
# peers (numpy and torch call OpenBLAS too) and limits.c then run that
# core as well, so the table compares engines, not core detection.
# (PEERS_CORETYPE=NAME: another core for everyone)
if grep -qw avx512f /proc/cpuinfo || [ -n "${PEERS_CORETYPE:-}" ]; then
  [ -n "${OPENBLAS_CORETYPE:-}" ] && echo "(OPENBLAS_CORETYPE=$OPENBLAS_CORETYPE in the environment, replaced)"
  export OPENBLAS_CORETYPE=${PEERS_CORETYPE:-SkylakeX}
  echo "OPENBLAS_CORETYPE=$OPENBLAS_CORETYPE (the CPU has AVX-512) for shlo, limits.c and the peers"
fi
kernels=$("$shlo" bench "$(mlir_of "${programs[0]}")" --runs 1 \
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
    mlir=$(mlir_of "$p")
    w=3; n=$runs
    case "$p" in
    while_loop) w=1; n=3 ;;
    transformer*|lstm) w=2; n=$(( runs < 10 ? runs : 10 )) ;;
    esac
    # shlo under both allocator settings too, the faster counting, as for
    # every peer: the same two draws on a noisy machine for everyone
    rm -f "$tmp/shlo.kept"
    if "$shlo" bench "$mlir" --runs "$n" --warmup "$w" > "$tmp/shlo.out" 2>&1 &&
      GLIBC_TUNABLES=$KEEP_FREED "$shlo" bench "$mlir" --runs "$n" \
        --warmup "$w" > "$tmp/shlo.kept" 2>&1; then
      awk -v r="$r" -v p="$p" '
        /median/ { for (i = 1; i <= NF; i++) if ($i == "median") ms = $(i + 1) }
        /output 0:/ { if (best == "" || ms + 0 < best + 0) { best = ms; s = $4; l = $6 } }
        END { print r, p, "shlo", best, s, l }' "$tmp/shlo.out" "$tmp/shlo.kept" >> "$records"
    else # refused or failed: the table says so, with shlo's words
      out=$tmp/shlo.out; [ -f "$tmp/shlo.kept" ] && out=$tmp/shlo.kept
      echo "$p shlo $(grep -v '^ *$' "$out" | head -1 | cut -c1-200)" >> "$errors"
    fi
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
    mlp|cnn|attention|transformer|bottleneck|lstm|linear_f32)
      # per run: a step's total over the runs / runs (a step inside the
      # LSTM's while runs 100 times a run)
      pw=10; [ "$n" -lt 20 ] && pw=3
      for ((i = 0; i < 3; i++)); do
        SHLO_NO_FUSION=1 "$shlo" bench "$mlir" --runs "$n" --warmup "$pw" \
          --profile > "$tmp/profile.out"
        awk -v n="$n" '$1 == "stablehlo.dot_general" || $1 == "stablehlo.convolution" {
          ms += $(NF - 2) } END { print ms / n }' "$tmp/profile.out"
      done | sort -g | awk -v p="$p" '{ ms[NR] = $1 }
        END { print p, ms[int((NR + 1) / 2)] }' >> "$tmp/gemm_steps" ;;
    esac
    for peer in "${peer_list[@]}"; do
      if [ "$peer" = jax ] && [ "$p" = int8_linear ]; then # as jaxlib 0.10 says
        [ "$r" = 1 ] && echo "$p jax XLA:CPU: 'stablehlo.uniform_quantize' op can't be translated to XLA HLO" >> "$errors"
        continue
      fi
      run_peer "$p" "$peer" | "${py[@]}" -c '
import json, sys
r = json.loads(sys.stdin.readline())
rnd, prog, peer, records, errors = sys.argv[1:]
if "median_ms" in r:
    with open(records, "a") as f:
        print(rnd, prog, peer, r["median_ms"], repr(r["sum"]), repr(r["l2"]), file=f)
    with open(errors + ".versions", "a") as f:
        v = r.get("version") or r.get("ort_version") or ""
        name = {"ort": "onnxruntime"}.get(peer, peer)
        print(peer, v if v.startswith(name) else f"{name} {v}", file=f)
else:
    with open(errors, "a") as f:
        print(prog, peer, r["error"].replace("\n", " "), file=f)' "$r" "$p" "$peer" "$records" "$errors"
    done
  done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

touch "$tmp/gemm_steps" "$errors" "$errors.versions"
status=0
"${py[@]}" - "$records" "$tmp/limits.txt" "$rounds" "${peer_list[*]}" "$tmp/gemm_steps" "$errors" <<'PY' || status=$?
import re, statistics, sys
records, limits_path, rounds, peers = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4].split()
errors_path = sys.argv[6]
steps_runs = {}
for l in open(sys.argv[5]):
    if l.strip():
        steps_runs.setdefault(l.split()[0], []).append(float(l.split()[1]))
rates = []
# flops of the GEMM work, bytes every implementation must move at least.
MIB = 1 << 20
def encoder_work(wbytes, xbytes):
    B, S, D, H, M = 8, 128, 768, 12, 3072
    T, W = B * S, D * 3 * D + D * D + 2 * D * M
    return 2 * T * W + 2 * 2 * B * H * S * S * (D // H), wbytes * W + (xbytes + 4) * T * D
RN_POS = 8 * 56 * 56
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
    # the models (bench/models/gen.py's sizes); weights read once, the
    # activations in and out once; int8 MACs counted as flops at the sgemm rate
    "transformer": encoder_work(4, 4),
    "transformer_bf16": encoder_work(2, 2),
    "bottleneck": (2 * RN_POS * (256 * 64 + 9 * 64 * 64 + 64 * 256),
                   2 * 4 * RN_POS * 256 + 4 * (256 * 64 + 9 * 64 * 64 + 64 * 256)),
    "lstm": (2 * 2 * 100 * 32 * 512 * 2048, 4 * (100 * 32 * 512 + 2 * 512 * 2048)),
    "linear_f32": (2 * 64 * 1024 * 4096, 4 * (64 * 1024 + 1024 * 4096 + 64 * 4096)),
    "int8_linear": (2 * 64 * 1024 * 4096, 4 * 64 * 1024 + 1024 * 4096 + 4 * 64 * 4096),
}
GEMM = ("mlp", "cnn", "attention", "transformer", "transformer_bf16", "bottleneck", "lstm", "linear_f32")
# the bound of a result check where the peer's math is not the program's to
# f32 rounding: bf16 roundings at other places; torch's int8 output requantized
TOL = {("transformer_bf16", "numpy"): 1e-3, ("transformer_bf16", "torch"): 1e-3,
       ("transformer_bf16", "jax"): 1e-3, ("transformer_bf16", "ort"): 1e-3,
       ("int8_linear", "torch"): 1e-2}
rows = {}
for line in open(records):
    r, prog, who, ms, s, l2 = line.split()
    rows.setdefault(prog, {}).setdefault(who, []).append((float(ms), float(s), float(l2)))
errors = {}
for line in open(errors_path):
    prog, who, msg = (line.rstrip("\n").split(" ", 2) + [""])[:3]
    errors.setdefault((prog, who), msg)
    rows.setdefault(prog, {})
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

def close(a, b, tol):
    (_, s1, n1), (_, s2, n2) = a, b
    return abs(n1 - n2) <= tol * max(abs(n2), 1e-30) and abs(s1 - s2) <= tol * (abs(s2) + n2) + 1e-9

print(f"\nmedian of {rounds} rounds, each the median of its runs; shlo and each peer the faster of two "
      "allocator settings; load average in 'load' lines above\n")
hdr = ["program", "shlo ms", "numpy ms", "torch ms", "ORT ms", "jax ms", "shlo ÷ fastest",
       "shlo ÷ jax", "floor ms", "shlo ÷ floor", "check"]
print("| " + " | ".join(hdr) + " |")
print("|---|" + "---:|" * (len(hdr) - 2) + "---|")
bad = 0
med_of = {}
for prog, by in rows.items():
    med = {who: statistics.median(x[0] for x in v) for who, v in by.items()
           if not who.startswith("at:")}
    med_of[prog] = med
    # the ratio is to the fastest of numpy, PyTorch and ONNX Runtime
    peer_ms = [med[p] for p in ("numpy", "torch", "ort") if p in med]
    ratio = med["shlo"] / min(peer_ms) if peer_ms and "shlo" in med else float("nan")
    flops, nbytes = WORK.get(prog, (0, 0))
    floor = None
    if gflops and (flops or nbytes):
        floor = max(flops / (gflops * 1e6), nbytes / (gbs * 1e6))
    checks = []
    for p in peers:
        for i, (a, b) in enumerate(zip(by.get("shlo", []), by.get(p, []))):
            if not close(a, b, TOL.get((prog, p), 1e-4)):
                # whose result is the odd one: the other peers' of the
                # same round that agree with shlo, if p agrees with none
                agree = [q for q in peers if q != p and i < len(by.get(q, []))
                         and close(a, by[q][i], TOL.get((prog, q), 1e-4))]
                alone = agree and not any(close(b, by[q][i], TOL.get((prog, q), 1e-4))
                                          for q in agree)
                who = f"{p} alone (shlo, {', '.join(agree)} agree)" if alone else p
                checks.append(f"MISMATCH {who}: sum {a[1]:.9g} vs {b[1]:.9g}, l2 {a[2]:.9g} vs {b[2]:.9g}")
                bad += 1
                break
    cell = lambda who: f"{med[who]:.2f}" if who in med else ("refused" if who == "shlo" else "n/a")
    cells = [prog] + [cell(w) for w in ("shlo", "numpy", "torch", "ort", "jax")]
    cells += [f"{ratio:.2f}" if peer_ms and "shlo" in med else "n/a"]
    cells += [f"{med['shlo'] / med['jax']:.2f}" if "jax" in med and "shlo" in med else "n/a"]
    cells += [f"{floor:.2f}" if floor else "-",
              f"{med['shlo'] / floor:.1f}" if floor and "shlo" in med else "-",
              "; ".join(checks) or ("ok" if "shlo" in med else "-")]
    print("| " + " | ".join(cells) + " |")
if errors:
    print("\nno figure:")
    for (prog, who), msg in errors.items():
        print(f"  {prog} {who}: {msg}")
# "peer version" lines; peers.py prints no version (the bare name then)
versions = sorted({l.split(" ", 1)[1].strip() for l in open(errors_path + ".versions") if " " in l.strip()})
versions = [v for v in versions if " " in v]
if versions:
    print("\npeers:", "; ".join(versions))
low = [(lo, hi) for lo, hi in (("transformer_bf16", "transformer"), ("int8_linear", "linear_f32"))
       if "shlo" in med_of.get(lo, {}) and "shlo" in med_of.get(hi, {})]
if low:
    print("\nlow precision in shlo (time ÷ its f32 counterpart's):",
          ", ".join(f"{lo} ÷ {hi} {med_of[lo]['shlo'] / med_of[hi]['shlo']:.2f}" for lo, hi in low))
if gflops:
    share = lambda p, ms: f"{p} {WORK[p][0] / (gflops * 1e6) / ms * 100:.0f}%"
    print("\nGEMM share of the sgemm rate (flops ÷ rate ÷ shlo time):",
          ", ".join(share(p, statistics.median(x[0] for x in rows[p]['shlo']))
                    for p in GEMM if p in rows and "shlo" in rows[p]))
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
                if not close(a, b, 1e-4):
                    checks.append(f"MISMATCH {w[3:]}: sum {a[1]:.9g} vs {b[1]:.9g}")
                    bad += 1
                    break
        print("| " + " | ".join(cells + ["; ".join(checks) or "ok"]) + " |")
sys.exit(1 if bad else 0)
PY

# 64 concurrent small requests through a server beside the same program
# in-process (--serve-small): what the server costs per request
if [ "$serve_small" = 1 ]; then
  server=$build/server/shlo-server loadgen=$build/client/shlo-loadgen
  inproc=$build/bench/shlo-small-inproc
  if [ ! -x "$server" ] || [ ! -x "$loadgen" ] || [ ! -x "$inproc" ]; then
    echo "serve-small: build $server, $loadgen and $inproc first" \
      "(--target shlo-server shlo-loadgen shlo-small-inproc)"
  else
    secs=${SERVE_SECONDS:-5}
    hport=$(bench_free_port) bport=$(bench_free_port)
    "$server" --host 127.0.0.1 --port "$hport" --binary-port "$bport" --log off \
      --max-connections 4096 --max-queue 1024 2>/dev/null &
    spid=$!
    bench_wait_healthy "$hport"
    for ((r = 1; r <= rounds; r++)); do
      "$inproc" 200000 3 | awk '{ print "inproc", $2 }' # µs
      "$loadgen" rate "$bport" "$hport" 64 "$secs" |
        awk '/requests\/s/ { print $1, $2 }'
    done > "$tmp/serve.txt"
    kill "$spid" 2>/dev/null; wait "$spid" 2>/dev/null || true
    "${py[@]}" - "$tmp/serve.txt" "$rounds" "$secs" <<'PY'
import statistics, sys
by = {}
for line in open(sys.argv[1]):
    who, x = line.split()
    by.setdefault(who, []).append(float(x))
if "inproc" not in by:
    sys.exit(print("serve-small: no in-process figure"))
local_us = statistics.median(by["inproc"])
print(f"\n64 concurrent small requests (one cached 4-element add, 64 connections, one request "
      f"in flight each, {sys.argv[3]} s; median of {sys.argv[2]} rounds), beside the same program in-process:\n")
print("| path | requests/s | µs per request | server's cost µs per request |")
print("|---|---:|---:|---:|")
print(f"| in-process (shlo_execute, one thread) | {1e6 / local_us:.0f} | {local_us:.2f} | - |")
for who in ("binary", "json"):
    if who in by:
        rate = statistics.median(by[who])
        print(f"| {'HTTP (JSON)' if who == 'json' else 'binary protocol'} | {rate:.0f} | "
              f"{1e6 / rate:.2f} | {1e6 / rate - local_us:.2f} |")
PY
  fi
fi
exit "$status"
