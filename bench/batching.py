#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Dynamic batching, off against on (issue #34): a small batchable model
from many concurrent clients, throughput and latency of each, side by side.

The model takes tensor<?x8xf32> (one row per request) and runs a loop of
ITERATIONS steps of exact IEEE operations (abs, add, sqrt) on it: each
row's result depends only on that row, and an execution's cost is mostly
the loop's fixed per-step cost, which a batch pays once for all its rows.

Both runs start the same server (--threads CLIENTS, so that every client's
request can wait in a batch, and no per-client cap) and register the same
program; only its "batching" differs.  Each client keeps one keep-alive
connection and one request in flight, sending its own row, for SECONDS
after a warm-up.  The answers of both runs are compared bit for bit (b64
outputs): each client must get the same bytes with batching on as off.

usage: bench/batching.py [--server build/server/shlo-server] [--clients 64]
         [--seconds 5] [--iterations 4000] [--delay-us 2000]
         [--procs 4]"""
import argparse
import http.client
import json
import multiprocessing as mp
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "server"))
from srvtest import Server  # noqa: E402


def program(iterations):
    return f"""func.func @main(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {{
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %one = stablehlo.constant dense<1> : tensor<i32>
  %n = stablehlo.constant dense<{iterations}> : tensor<i32>
  %r:2 = stablehlo.while(%i = %c0, %v = %x) : tensor<i32>, tensor<?x8xf32>
    cond {{
      %lt = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    }} do {{
      %i2 = stablehlo.add %i, %one : tensor<i32>
      %a = stablehlo.abs %v : tensor<?x8xf32>
      %b = stablehlo.abs %x : tensor<?x8xf32>
      %s = stablehlo.add %a, %b : tensor<?x8xf32>
      %q = stablehlo.sqrt %s : tensor<?x8xf32>
      stablehlo.return %i2, %q : tensor<i32>, tensor<?x8xf32>
    }}
  return %r#1 : tensor<?x8xf32>
}}
"""


def body(client):
    row = [((client * 8 + k) % 29) / 3.0 - 4.0 for k in range(8)]
    return json.dumps({"inputs": [{"dtype": "f32", "shape": [1, 8],
                                   "data": row}],
                       "output_format": "b64"})


def client_proc(port, mid, clients, start_at, warm_until, stop_at, out):
    """clients threads in this process; puts (latencies in the measured
    window, {client: set of answers}, errors)."""
    import threading
    lat, answers, errors = [], {}, []
    lock = threading.Lock()

    def one(c):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        b = body(c)
        hdr = {"Content-Type": "application/json"}
        mine, seen = [], set()
        while time.time() < start_at:
            time.sleep(0.001)
        while True:
            t0 = time.time()
            if t0 >= stop_at:
                break
            try:
                conn.request("POST", f"/v1/modules/{mid}/execute", b, hdr)
                r = conn.getresponse()
                data = r.read()
            except (OSError, http.client.HTTPException) as e:
                with lock:
                    errors.append(repr(e))
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port,
                                                  timeout=60)
                continue
            t1 = time.time()
            if r.status != 200:
                with lock:
                    errors.append(f"{r.status} {data[:200]!r}")
                continue
            seen.add(json.dumps(json.loads(data)["outputs"]))
            if t0 >= warm_until:
                mine.append(t1 - t0)
        conn.close()
        with lock:
            lat.extend(mine)
            answers[c] = seen

    ids = [int(x) for x in clients.split(",")]
    ts = [threading.Thread(target=one, args=(c,)) for c in ids]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    out.put((lat, {c: sorted(s) for c, s in answers.items()}, errors))


def run(args, batching):
    srv = Server(args.server, "--threads", str(args.clients),
                 "--max-client-jobs", "0", "--max-queue", "1024",
                 "--log", "off")
    try:
        reg = {"program": program(args.iterations)}
        if batching:
            reg["batching"] = {"max_batch_size": args.clients,
                               "max_queue_delay_us": args.delay_us}
        st, j = srv.post("/v1/modules", reg)
        if st != 200:
            raise SystemExit(f"register: {st} {j}")
        mid = j["id"]
        now = time.time()
        start_at, warm_until = now + 1.0, now + 2.0
        stop_at = warm_until + args.seconds
        q = mp.Queue()
        procs = []
        for p in range(args.procs):
            mine = ",".join(str(c) for c in range(args.clients)
                            if c % args.procs == p)
            procs.append(mp.Process(target=client_proc, args=(
                srv.port, mid, mine, start_at, warm_until, stop_at, q)))
        for p in procs:
            p.start()
        lat, answers, errors = [], {}, []
        for _ in procs:
            l, a, e = q.get()
            lat += l
            answers.update(a)
            errors += e
        for p in procs:
            p.join()
        m = srv.metrics()
    finally:
        srv.stop()
    lat.sort()
    sizes = [(k, v) for k, v in m.items() if k.startswith("shlo_batch_size_")]
    execs = sum(v for k, v in sizes if k.startswith("shlo_batch_size_count"))
    reqs = sum(v for k, v in sizes if k.startswith("shlo_batch_size_sum"))
    pick = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))] * 1000
    return {"rps": len(lat) / args.seconds, "p50": pick(0.50),
            "p99": pick(0.99), "n": len(lat), "answers": answers,
            "errors": errors, "mean_batch": reqs / execs if execs else 1.0}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", default=os.path.join(
        HERE, "..", "build", "server", "shlo-server"))
    ap.add_argument("--clients", type=int, default=64)
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--iterations", type=int, default=4000)
    ap.add_argument("--delay-us", type=int, default=2000)
    ap.add_argument("--procs", type=int, default=4)
    args = ap.parse_args()
    off = run(args, False)
    on = run(args, True)
    print(f"{args.clients} clients, {args.seconds:g} s each, model: "
          f"{args.iterations}-step loop on tensor<?x8xf32>, "
          f"max_queue_delay_us {args.delay_us}, {os.cpu_count()} cores")
    print(f"{'':24}{'off':>12}{'on':>12}{'on/off':>10}")
    for key, name in (("rps", "throughput (req/s)"), ("p50", "p50 latency (ms)"),
                      ("p99", "p99 latency (ms)")):
        print(f"{name:24}{off[key]:12.1f}{on[key]:12.1f}"
              f"{on[key] / off[key]:10.2f}")
    print(f"{'requests per execution':24}{off['mean_batch']:12.1f}"
          f"{on['mean_batch']:12.1f}")
    same = off["answers"] == on["answers"] and \
        all(len(v) == 1 for v in on["answers"].values())
    print(f"answers bit-identical, batched vs unbatched: "
          f"{'yes' if same else 'NO'} ({len(on['answers'])} clients)")
    print(f"errors: off {len(off['errors'])}, on {len(on['errors'])}"
          + (f" (first: {(off['errors'] + on['errors'])[0]})"
             if off["errors"] or on["errors"] else ""))
    ok = on["rps"] >= 3 * off["rps"] and on["p99"] <= 2 * off["p99"]
    print(f"issue #34 target (throughput >= 3x, p99 <= 2x off): "
          f"{'met' if ok else 'NOT met'}")
    sys.exit(0 if same and not off["errors"] and not on["errors"] else 1)


if __name__ == "__main__":
    main()
