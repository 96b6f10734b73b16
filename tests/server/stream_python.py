# SPDX-License-Identifier: Apache-2.0
"""Issue #13 through the Python client: the running-sum program started
with Client.start, fed from one thread with Execution.feed while the main
thread iterates Execution.outfeed(); every sum is checked in order against
sums computed here; then the result, and a cancel.

usage: stream_python.py SHLO_SERVER"""
import os
import sys
import threading

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                "client", "python"))
try:
    import numpy as np
except ImportError:
    print("stream_python: numpy not found; skipped")
    sys.exit(77)
from shlo_client import Client, ShloError
from srvtest import Server, check, finish

HERE = os.path.dirname(__file__)
with open(os.path.join(HERE, "stream_http.py")) as f:
    RUNNING_SUM = f.read().split('RUNNING_SUM = """')[1].split('"""')[0]

srv = Server(sys.argv[1], "--threads", "3", "--short-lane-workers", "1",
             "--stream-queue-values", "8")
c = Client(f"http://127.0.0.1:{srv.port}")
N = 200
rng = np.random.default_rng(13)
values = [rng.integers(-10**12, 10**12, 3, dtype=np.int64) for _ in range(N)]
sums = np.cumsum(np.stack(values), axis=0)

ex = c.start(RUNNING_SUM, np.int64(N), timeout_ms=60000)
errors = []


def feed():
    try:
        for v in values:
            ex.feed(v)
    except Exception as e:  # reported by the main thread
        errors.append(e)


t = threading.Thread(target=feed)
t.start()
got = list(ex.outfeed())
t.join(30)
ex.close()
check(not errors, f"every feed accepted: {errors[:1]}")
check(len(got) == N, f"{N} values came out: {len(got)}")
bad = [i for i, g in enumerate(got) if not np.array_equal(g, sums[i])]
check(not bad and all(g.dtype == np.int64 for g in got),
      f"every running sum in order (first bad {bad[:1]})")
check(ex.final and ex.final.get("state") == "succeeded",
      f"the stream ends with the final state: {ex.final}")
out = ex.result()
check(np.array_equal(out[0], sums[-1]), f"result(): the last sum: {out}")

# cancel: blocked in infeed; result() then raises the cancel
ex = c.start(RUNNING_SUM, np.int64(10**15), timeout_ms=60000)
ex.feed(values[0])
first = next(iter(ex.outfeed()))
check(np.array_equal(first, values[0]), "the first sum streams at once")
st = ex.cancel()
check(st.get("state") == "canceled", f"cancel() answers the end: {st}")
try:
    ex.result()
    check(False, "result() of a canceled execution raises")
except ShloError as e:
    check("DELETE" in str(e) or e.kind == "timeout", f"the cancel: {e}")
c.close()
srv.stop()
finish("stream_python")
