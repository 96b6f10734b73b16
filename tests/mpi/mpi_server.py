# SPDX-License-Identifier: Apache-2.0
"""shlo-server across MPI ranks (issue #18): `mpirun -n 4 shlo-server
--grid-backend mpi` answers grid executions with the outputs a
single-process server gives, keeps its ranks in step through concurrent
requests, a timed-out grid and grids small enough to stay on rank 0, and
stops cleanly on SIGTERM.

  mpi_server.py SHLO_SERVER HAVE_MPI
Exit 77 (skipped) without mpirun or in a build without MPI."""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "server"))
import srvtest  # noqa: E402
from srvtest import check, finish  # noqa: E402

server, have_mpi = sys.argv[1], sys.argv[2]
if not shutil.which("mpirun") or have_mpi != "ON":
    print("SKIPPED: no mpirun, or shlo built without MPI")
    sys.exit(77)
env = dict(os.environ)
if os.getuid() == 0:  # Open MPI refuses root unless told
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
os.environ.update(env)

ALL_REDUCE = """module @sum4 attributes {mhlo.num_replicas = 4 : i32} {
  func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %r = "stablehlo.all_reduce"(%x) ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %s = stablehlo.add %a, %b : tensor<f32>
        stablehlo.return %s : tensor<f32>
    }) {replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>}
       : (tensor<4xf32>) -> tensor<4xf32>
    return %r : tensor<4xf32>
  }
}
"""

# A 2 x 2 grid: partitions gather within a replica, then each partition
# swaps its gathered values between the two replicas.
GATHER_PERMUTE = """module @gp attributes {mhlo.num_replicas = 2 : i32,
                                  mhlo.num_partitions = 2 : i32} {
  func.func @main(%x: tensor<2xi64>) -> tensor<4xi64> {
    %g = "stablehlo.all_gather"(%x) {all_gather_dim = 0 : i64,
      replica_groups = dense<[[0, 1], [2, 3]]> : tensor<2x2xi64>,
      channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>,
      use_global_device_ids} : (tensor<2xi64>) -> tensor<4xi64>
    %p = "stablehlo.collective_permute"(%g) {
      source_target_pairs = dense<[[0, 1], [1, 0]]> : tensor<2x2xi64>}
      : (tensor<4xi64>) -> tensor<4xi64>
    return %p : tensor<4xi64>
  }
}
"""

# Replica 1 spins far past any deadline; the others wait for it.
SPIN = srvtest.loop_program(10**12).replace(
    "func.func @main() -> tensor<i64> {",
    "module @spin attributes {mhlo.num_replicas = 4 : i32} {\n"
    "func.func @main() -> tensor<i64> {") + "}\n"


def inputs_sum4(seed):
    return [[{"dtype": "f32", "shape": [4],
              "data": [seed + k + 1.0, 2.0 * k, 0.5, -k * seed]}]
            for k in range(4)]


def inputs_gp(seed):
    return [[{"dtype": "i64", "shape": [2], "data": [seed * 10 + k, -k]}]
            for k in range(4)]


def execute(srv, program, inputs, timeout_ms=None):
    body = {"program": program, "inputs": inputs}
    if timeout_ms:
        body["timeout_ms"] = timeout_ms
    return srv.post("/execute", body, timeout=60)


class MpiServer(srvtest.Server):
    """A server started as `mpirun -n 4 ... shlo-server`: the wrapper
    execs mpirun, so SIGTERM reaches mpirun, which forwards it."""

    def __init__(self, *flags, mpirun_flags=""):
        wrapper = tempfile.NamedTemporaryFile("w", suffix=".sh", delete=False)
        # In a sanitizer build LeakSanitizer would report Open MPI's own
        # allocations at exit (in components it dlopens and unloads, which
        # it cannot name) and fail every rank's status: leak checks are
        # off for these processes; ASan's other checks stay on.
        wrapper.write('#!/bin/sh\n'
                      'ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}'
                      'detect_leaks=0"\nexport ASAN_OPTIONS\n'
                      'exec mpirun -n 4 --oversubscribe '
                      f'{mpirun_flags} "{server}" "$@"\n')
        wrapper.close()
        os.chmod(wrapper.name, 0o755)
        self.wrapper = wrapper.name
        os.environ.setdefault("SHLO_TEST_START_S", "30")
        super().__init__(self.wrapper, "--grid-backend", "mpi", *flags)

    def rank_pid(self, rank):
        """The process of a rank (a child of mpirun), or None."""
        for pid in subprocess.run(["pgrep", "-P", str(self.proc.pid)],
                                  capture_output=True, text=True).stdout.split():
            try:
                with open(f"/proc/{pid}/environ", "rb") as f:
                    env = f.read().split(b"\0")
            except OSError:
                continue
            if f"OMPI_COMM_WORLD_RANK={rank}".encode() in env:
                return int(pid)
        return None

    def stop_rank0(self, timeout=30):
        """SIGTERM to rank 0 alone: it drains, releases the followers,
        and mpirun ends with every rank's status 0."""
        pid = self.rank_pid(0)
        check(pid is not None, "rank 0's process not found")
        if pid:
            os.kill(pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            check(False, f"mpirun did not end within {timeout} s of "
                         "SIGTERM to rank 0")
        return self.stop(timeout)


single = srvtest.Server(server)
spread = MpiServer("--threads", "2")
try:
    # The same outputs as one process, for several inputs and both grids.
    for seed in range(3):
        for prog, make in ((ALL_REDUCE, inputs_sum4), (GATHER_PERMUTE, inputs_gp)):
            st1, want = execute(single, prog, make(seed))
            st2, got = execute(spread, prog, make(seed))
            check(st1 == 200 and st2 == 200,
                  f"status {st1} / {st2}: {str(want)[:200]} / {str(got)[:200]}")
            if st1 == 200 and st2 == 200:
                check(got["outputs"] == want["outputs"],
                      f"outputs differ: {got['outputs']} vs {want['outputs']}")
    # Spot-check one answer against sums computed here.
    st, got = execute(spread, ALL_REDUCE, inputs_sum4(1))
    want_sum = [sum(1 + k + 1.0 for k in range(4)), 12.0, 2.0, -6.0]
    check(st == 200 and all(p[0]["data"] == want_sum for p in got["outputs"]),
          f"all_reduce across ranks: {got}")

    # Concurrent grids: one at a time crosses the ranks, all correct.
    answers = {}

    def one(i):
        answers[i] = execute(spread, GATHER_PERMUTE, inputs_gp(i))

    threads = [threading.Thread(target=one, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i in range(6):
        st1, want = execute(single, GATHER_PERMUTE, inputs_gp(i))
        st2, got = answers[i]
        check(st2 == 200 and got.get("outputs") == want.get("outputs"),
              f"concurrent grid {i}: {st2} {str(got)[:200]}")

    # A grid past its deadline fails with 504 on rank 0, in time, and the
    # ranks stay in step for the next one.
    t0 = time.time()
    st, got = execute(spread, SPIN, [], timeout_ms=500)
    took = time.time() - t0
    check(st == 504 and got.get("error", {}).get("kind") == "timeout",
          f"spinning grid: {st} {str(got)[:300]}")
    check(took < 5, f"the spinning grid took {took:.1f} s to fail")
    st, got = execute(spread, ALL_REDUCE, inputs_sum4(2))
    st1, want = execute(single, ALL_REDUCE, inputs_sum4(2))
    check(st == 200 and got["outputs"] == want["outputs"],
          f"grid after the timeout: {st} {str(got)[:200]}")

    # A grid below mpi-min-procs stays on rank 0 and still answers.
    m = spread.metrics()
    check(m.get("shlo_up", 1) == 1, "metrics readable")
finally:
    single.stop()
    t0 = time.time()
    rc = spread.stop_rank0(timeout=30)
    check(rc == 0, f"mpirun ended with {rc} after SIGTERM to rank 0:\n"
                   f"{spread.log()[-2000:]}")
    check(time.time() - t0 < 20, "the ranks took over 20 s to stop")
    check("shlo-server: stopped" in spread.log(), "rank 0 did not drain")
    os.unlink(spread.wrapper)

small = MpiServer("--mpi-min-procs", "8")
try:
    st, got = execute(small, ALL_REDUCE, inputs_sum4(0))
    check(st == 200 and got["outputs"][0][0]["data"] == [10.0, 0.0 + 2 + 4 + 6, 2.0, 0.0],
          f"grid below mpi-min-procs: {st} {str(got)[:200]}")
finally:
    # SIGTERM to mpirun: forwarded to every rank; rank 0 drains, and the
    # whole job ends (mpirun reports the signal in its own status).
    t0 = time.time()
    small.stop(timeout=30)
    check(time.time() - t0 < 20, "mpirun took over 20 s to stop")
    check("shlo-server: stopped" in small.log(), "rank 0 did not drain")
    os.unlink(small.wrapper)
# A rank killed in the middle of a grid: rank 0 answers a runtime error
# naming it within the deadline, and goes on serving what stays on rank 0.
os.environ["SHLO_MPI_PEER_TIMEOUT"] = "2"
lossy = MpiServer(mpirun_flags="--enable-recovery")
try:
    victim = lossy.rank_pid(2)
    answer = {}
    waiter = threading.Thread(target=lambda: answer.update(
        r=execute(lossy, SPIN, [], timeout_ms=20000)))
    t0 = time.time()
    waiter.start()
    # the grid is running (its thread sends it in its own time) before the
    # rank is killed
    dt, _ = srvtest.wait_metrics(
        lossy, lambda m: m["shlo_executions_running"] == 1, 15, step=0.02)
    check(dt is not None, "the spinning grid started")
    time.sleep(0.5)
    if check(victim is not None, "rank 2's process not found"):
        os.kill(victim, signal.SIGKILL)
    waiter.join(60)
    took = time.time() - t0
    st, got = answer.get("r", (None, {}))
    msg = got.get("error", {}).get("message", "") if isinstance(got, dict) else ""
    check(st == 500 and got["error"]["kind"] == "runtime"
          and "MPI rank 2" in msg, f"grid with a killed rank: {st} {got}")
    print(f"killed rank: {st} after {took:.1f} s: {msg}")
    check(took < 20, f"the killed rank was reported after {took:.1f} s "
                     "(deadline 20 s)")
    time.sleep(3)  # the other followers notice the loss meanwhile
    st, got = execute(lossy, "func.func @main() -> tensor<i32> {\n"
                      "  %c = stablehlo.constant dense<7> : tensor<i32>\n"
                      "  return %c : tensor<i32>\n}\n", [])
    check(st == 200 and got["outputs"][0]["data"] == [7],
          f"rank 0 after losing a rank: {st} {got}")
    st, got = execute(lossy, ALL_REDUCE, inputs_sum4(0))
    check(st == 500 and got["error"]["kind"] == "runtime",
          f"a grid after losing a rank: {st} {got}")
finally:
    lossy.stop(timeout=30)
    os.unlink(lossy.wrapper)
finish("mpi_server")
