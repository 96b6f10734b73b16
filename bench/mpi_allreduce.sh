#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# all_reduce across 4 grid processes: the thread backend (one process, 4
# threads) against the MPI backend (mpirun -n 4, one grid process per
# rank) on this machine, for 1, 16 and 256 MiB of f32 per process.
#
# Each program makes its operand with iota, all_reduces it over the 4
# replicas and sums the result to a scalar (so nothing big is printed).
# A second program does the same without the all_reduce; the difference
# of the two wall times is the all_reduce's cost.  Best of RUNS runs.
#   bench/mpi_allreduce.sh [BUILD_DIR] [RUNS] [MiB...]
# Prints one line per size; figures, not a pass/fail.
set -euo pipefail
build=${1:-build}
runs=${2:-3}
shift $(( $# > 2 ? 2 : $# ))
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1 16 256)
shlo=$build/client/shlo
command -v mpirun >/dev/null || { echo "no mpirun (apt-get install openmpi-bin)"; exit 1; }
if [ "$(id -u)" = 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# program FILE N WITH_ALL_REDUCE(0|1)
program() {
  local n=$2 body
  if [ "$3" = 1 ]; then
    body="%s = \"stablehlo.all_reduce\"(%x) ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %c = stablehlo.add %a, %b : tensor<f32>
        stablehlo.return %c : tensor<f32>
    }) {replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>} : (tensor<${n}xf32>) -> tensor<${n}xf32>"
  else
    body="%s = stablehlo.reshape %x : (tensor<${n}xf32>) -> tensor<${n}xf32>"
  fi
  cat >"$1" <<MLIR
module @bench attributes {mhlo.num_replicas = 4 : i32} {
  func.func @main() -> tensor<f32> {
    %x = stablehlo.iota dim = 0 : tensor<${n}xf32>
    $body
    %z = stablehlo.constant dense<0.0> : tensor<f32>
    %r = stablehlo.reduce(%s init: %z) applies stablehlo.add across dimensions = [0] : (tensor<${n}xf32>, tensor<f32>) -> tensor<f32>
    return %r : tensor<f32>
  }
}
MLIR
}

# best wall seconds of $runs runs of the command
best() {
  local b="" t0 t1 s
  for _ in $(seq "$runs"); do
    t0=$(date +%s%N)
    "$@" >"$tmp/out" 2>&1 || { cat "$tmp/out"; exit 1; }
    t1=$(date +%s%N)
    s=$(( (t1 - t0) / 1000000 ))
    if [ -z "$b" ] || [ "$s" -lt "$b" ]; then b=$s; fi
  done
  echo "$b"
}

printf "%-8s %-22s %-22s %s\n" size "threads: total/reduce" "mpi -n 4: total/reduce" "mpi/threads (reduce)"
for mib in "${sizes[@]}"; do
  n=$((mib * 1024 * 1024 / 4))
  program "$tmp/ar.mlir" "$n" 1
  program "$tmp/base.mlir" "$n" 0
  tt=$(best "$shlo" run "$tmp/ar.mlir")
  tb=$(best "$shlo" run "$tmp/base.mlir")
  mt=$(best mpirun -n 4 --oversubscribe "$shlo" run --mpi "$tmp/ar.mlir")
  mb=$(best mpirun -n 4 --oversubscribe "$shlo" run --mpi "$tmp/base.mlir")
  tr=$((tt - tb)) mr=$((mt - mb))
  ratio=$(awk -v a="$mr" -v b="$tr" 'BEGIN { if (b > 0) printf "%.1fx", a / b; else print "-" }')
  printf "%-8s %-22s %-22s %s\n" "${mib}MiB" "${tt}/${tr} ms" "${mt}/${mr} ms" "$ratio"
done
echo "($(nproc) cores; mpirun -n 4 --oversubscribe on one machine, shared memory transport)"
