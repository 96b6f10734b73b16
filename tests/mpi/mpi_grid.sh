#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Grids across MPI ranks (shlo run/test --mpi), when mpirun is there.
#   mpi_grid.sh SHLO HAVE_MPI CORPUS conformance
#     every grid case of CORPUS/interpret (the files that hold
#     interpreter.run_parallel) under `mpirun -n 2` and `-n 4
#     --oversubscribe` gives the thread backend's summary line.
#   mpi_grid.sh SHLO HAVE_MPI CORPUS remote-failure
#     a process on rank 1 fails while one on rank 0 waits for it
#     (tests/mpi/remote_failure.mlir): the run ends with the error the
#     thread backend gives, not a hang.
#   mpi_grid.sh SHLO HAVE_MPI CORPUS lost-rank
#     rank 1 is killed while rank 0 waits for it in an all_reduce
#     (tests/mpi/lost_rank.mlir): rank 0 reports a runtime error naming the
#     lost rank within seconds, and mpirun ends (no hang).
# Exit 77 (skipped) without mpirun or in a build without MPI.
set -uo pipefail
shlo=$1 have_mpi=$2 corpus=$3 what=$4
here=$(cd "$(dirname "$0")" && pwd)
if ! command -v mpirun >/dev/null || [ "$have_mpi" != ON ]; then
  echo "SKIPPED: no mpirun, or shlo built without MPI"
  exit 77
fi
if [ "$(id -u)" = 0 ]; then # Open MPI refuses root unless told
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

conformance() {
  [ -d "$corpus/interpret" ] || { echo "SKIPPED: no corpus"; exit 77; }
  mapfile -t files < <(grep -l 'interpreter.run_parallel' "$corpus"/interpret/*.mlir)
  [ ${#files[@]} -gt 0 ] || fail "no grid cases in $corpus/interpret"
  want=$("$shlo" test "${files[@]}" | tail -n 1)
  echo "thread backend: $want (${#files[@]} files)"
  case $want in *" 0 failed, 0 skipped") ;; *) fail "the thread backend: $want" ;; esac
  for ranks in "-n 2" "-n 4 --oversubscribe"; do
    # shellcheck disable=SC2086
    got=$(timeout 120 mpirun $ranks "$shlo" test --mpi --timeout 30 \
            "${files[@]}" 2>"$tmp/err" | tail -n 1)
    echo "mpirun $ranks: $got"
    [ "$got" = "$want" ] || { cat "$tmp/err"; fail "mpirun $ranks: '$got', want '$want'"; }
  done
}

remote_failure() {
  local want got
  "$shlo" run "$here/remote_failure.mlir" >/dev/null 2>"$tmp/want" &&
    fail "the thread backend ran a failing program"
  want=$(grep ': error: ' "$tmp/want")
  echo "thread backend: $want"
  [ -n "$want" ] || fail "no error from the thread backend"
  timeout 60 mpirun -n 2 "$shlo" run --mpi "$here/remote_failure.mlir" \
    >/dev/null 2>"$tmp/got"
  [ $? != 124 ] || fail "mpirun hung"
  got=$(grep ': error: ' "$tmp/got")
  echo "mpirun -n 2:    $got"
  [ "$got" = "$want" ] || fail "a different error across ranks"
}

lost_rank() {
  local start end
  start=$(date +%s%N)
  SHLO_MPI_PEER_TIMEOUT=2 timeout 60 mpirun -n 2 --enable-recovery \
    sh -c 'echo $$ > "$0/pid.$OMPI_COMM_WORLD_RANK"; exec "$1" run --mpi "$2"' \
    "$tmp" "$shlo" "$here/lost_rank.mlir" >"$tmp/out" 2>&1 &
  local mpirun_pid=$!
  # Rank 0's process prints its operand just before the all_reduce: then
  # both ranks are past MPI_Init and rank 0 is in the grid.
  for _ in $(seq 600); do
    [ -s "$tmp/pid.1" ] && grep -q 'tensor<2xf32>' "$tmp/out" && break
    sleep 0.1
  done
  grep -q 'tensor<2xf32>' "$tmp/out" || fail "rank 0 did not reach the grid"
  sleep 0.5
  kill -9 "$(cat "$tmp/pid.1")"
  local killed_at
  killed_at=$(date +%s%N)
  wait "$mpirun_pid"
  local rc=$?
  end=$(date +%s%N)
  cat "$tmp/out"
  [ $rc != 124 ] || fail "mpirun hung after rank 1 was killed"
  grep -q 'error: interpreter.run_parallel: MPI rank 1 stopped answering' \
    "$tmp/out" || fail "rank 0 did not report the lost rank"
  local secs=$(((end - killed_at) / 1000000000))
  echo "rank 0 reported the lost rank and mpirun ended $secs s after the kill"
  [ $secs -lt 15 ] || fail "took $secs s (peer timeout 2 s)"
  : "$start"
}

case $what in
  conformance) conformance ;;
  remote-failure) remote_failure ;;
  lost-rank) lost_rank ;;
  *) fail "unknown check '$what'" ;;
esac
echo PASS
