# SPDX-License-Identifier: Apache-2.0
"""The soak's clients and report (see bench/soak.sh)."""
import json
import os
import random
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests",
                                "server"))
from srvtest import REDUCE_100, Server, loop_program, raw_connect  # noqa

binary, minutes, threads = sys.argv[1], float(sys.argv[2]), sys.argv[3]
sample_s = float(sys.argv[4]) if len(sys.argv) > 4 else 30
# A small cache, so that registrations of new modules evict old ones and
# the run reaches a steady state; the clients share one address, so the
# per-client cap is off.
srv = Server(binary, "--threads", threads, "--log", "off",
             "--request-timeout-s", "10", "--max-client-jobs", "0",
             "--cache-bytes", "4m")
end = time.monotonic() + minutes * 60
lock = threading.Lock()
stats = {}  # "what: outcome" -> count


def count(key, n=1):
    with lock:
        stats[key] = stats.get(key, 0) + n


ADD = ("func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> "
       "tensor<4xf32> {\n  %r = stablehlo.add %a, %b : tensor<4xf32>\n"
       "  return %r : tensor<4xf32>\n}\n")


def valid_client(seed):
    rnd = random.Random(seed)
    _, info = srv.post("/v1/modules", {"program": REDUCE_100})
    rid = info["id"]
    while time.monotonic() < end:
        kind = rnd.choice(["reduce", "add", "register", "loop"])
        try:
            if kind == "reduce":
                a = [[rnd.randint(-9, 9) for _ in range(100)] for _ in range(100)]
                st, out = srv.post(f"/v1/modules/{rid}/execute", {"inputs": [
                    {"dtype": "f32", "shape": [100, 100], "data": a}]})
                good = st == 200 and out["outputs"][0]["data"] == \
                    [float(sum(r)) for r in a]
            elif kind == "add":
                a = [rnd.randint(-99, 99) for _ in range(4)]
                b = [rnd.randint(-99, 99) for _ in range(4)]
                st, out = srv.post("/execute", {"program": ADD, "inputs": [
                    {"dtype": "f32", "shape": [4], "data": a},
                    {"dtype": "f32", "shape": [4], "data": b}]})
                good = st == 200 and out["outputs"][0]["data"] == \
                    [float(x + y) for x, y in zip(a, b)]
            elif kind == "register":
                c = rnd.randint(0, 5000)  # new and known modules: churn
                prog = ADD.replace("%r = stablehlo.add %a, %b",
                                   f"%k = stablehlo.constant dense<{c}.0> : "
                                   "tensor<4xf32>\n  %s = stablehlo.add %a, %b"
                                   " : tensor<4xf32>\n  %r = stablehlo.add %s,"
                                   " %k")
                st, out = srv.post("/v1/modules", {"program": prog})
                good = st == 200 and out["id"].startswith("sha256:") and \
                    out["entry"] == "main"
            else:
                n = rnd.randint(1000, 200000)
                st, out = srv.post("/execute", {"program": loop_program(n)})
                good = st == 200 and out["outputs"][0]["data"] == [n]
        except (OSError, ValueError, KeyError, TypeError) as e:
            count(f"valid {kind}: client error {type(e).__name__}")
            continue
        if good:
            count(f"valid {kind}: ok")
        elif st >= 500:
            count(f"valid {kind}: unexpected {st}")
        else:
            count(f"valid {kind}: WRONG ({st})")


INVALID = [
    ("malformed json", "POST", "/execute", '{"program": "func', "input"),
    ("parse error", "POST", "/execute", {"program": "func.func @main( {"},
     "parse"),
    ("verify error", "POST", "/execute", {"program": ADD.replace(
        "%r = stablehlo.add %a, %b : tensor<4xf32>",
        "%r = stablehlo.add %a, %b : tensor<5xf32>")}, None),
    ("wrong inputs", "POST", "/execute", {"program": ADD, "inputs": [
        {"dtype": "f32", "shape": [3], "data": [1, 2, 3]}]}, "input"),
    ("no route", "GET", "/nope", None, "not_found"),
    ("no module", "POST", "/v1/modules/sha256:" + "0" * 64 + "/execute", {},
     "not_found"),
    ("bad method", "DELETE", "/execute", None, "method"),
]


def invalid_client(seed):
    rnd = random.Random(seed)
    while time.monotonic() < end:
        name, method, path, body, kind = rnd.choice(INVALID)
        try:
            st, _, data = srv.request(method, path, body)
            got = json.loads(data)["error"]["kind"]
        except (OSError, ValueError, KeyError, TypeError) as e:
            count(f"invalid {name}: client error {type(e).__name__}")
            continue
        if st >= 500:
            count(f"invalid {name}: unexpected {st}")
        elif 400 <= st < 500 and (kind is None or got == kind):
            count(f"invalid {name}: {st} {got}")
        else:
            count(f"invalid {name}: WRONG {st} {got}")
        time.sleep(0.01)


def slow_client(seed):
    rnd = random.Random(seed)
    while time.monotonic() < end:
        try:
            s = raw_connect(srv.port)
            if rnd.random() < 0.5:
                s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ")
            else:
                s.sendall(b"POST /execute HTTP/1.1\r\nHost: x\r\n"
                          b"Content-Length: 100000\r\n\r\n")
            t0 = time.monotonic()
            while True:
                s.settimeout(1.0)
                try:
                    if s.recv(4096) == b"":
                        break
                except socket.timeout:
                    pass
                except OSError:
                    break
                try:
                    s.send(b"a")
                except OSError:
                    break
                if time.monotonic() - t0 > 30:
                    count("slow: NOT closed within 30 s")
                    break
            count("slow: closed by the deadline"
                  if time.monotonic() - t0 <= 12 else "slow: closed late")
            s.close()
        except OSError as e:
            count(f"slow: client error {type(e).__name__}")
            time.sleep(1)


def abandoning_client(seed):
    rnd = random.Random(seed)
    while time.monotonic() < end:
        try:
            s = raw_connect(srv.port)
            if rnd.random() < 0.5:  # a long execution, abandoned
                body = json.dumps({"program": loop_program(
                    rnd.randint(10**7, 10**8))}).encode()
                s.sendall(b"POST /execute HTTP/1.1\r\nHost: x\r\nContent-Type:"
                          b" application/json\r\nContent-Length: %d\r\n\r\n"
                          % len(body) + body)
                time.sleep(rnd.uniform(0.05, 0.5))
                count("abandoned: execution")
            else:  # a connection that never sends
                time.sleep(rnd.uniform(0.5, 3))
                count("abandoned: idle connection")
            s.close()
        except OSError as e:
            count(f"abandoned: client error {type(e).__name__}")
            time.sleep(1)


def rss_kib():
    with open(f"/proc/{srv.proc.pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return -1


def heap_kib():
    """Resident KiB of the main heap and of the other malloc arenas (the
    anonymous mappings inside 64 MiB-aligned arena reservations), and the
    number of those arenas: what to look at when RSS grows."""
    main = arenas = 0
    seen = set()
    try:
        with open(f"/proc/{srv.proc.pid}/smaps") as f:
            cur = None
            for line in f:
                head = line.split()
                if "-" in head[0] and len(head) >= 5:
                    lo = int(head[0].split("-")[0], 16)
                    name = head[5] if len(head) > 5 else ""
                    cur = ("main" if name == "[heap]" else
                           "arena" if not name and lo % (64 << 20) == 0 else
                           None)
                    if cur == "arena":
                        seen.add(lo)
                elif head[0] == "Rss:" and cur:
                    if cur == "main":
                        main += int(head[1])
                    else:
                        arenas += int(head[1])
    except OSError:
        pass
    return main, arenas, len(seen)


workers = ([threading.Thread(target=valid_client, args=(i,)) for i in range(6)] +
           [threading.Thread(target=invalid_client, args=(100 + i,)) for i in range(3)] +
           [threading.Thread(target=slow_client, args=(200 + i,)) for i in range(8)] +
           [threading.Thread(target=abandoning_client, args=(300 + i,)) for i in range(2)])
t_start = time.monotonic()
for w in workers:
    w.start()
rss = []
last_total, last_t = 0, t_start


def report(final=False):
    global last_total, last_t
    now = time.monotonic()
    with lock:
        snap = dict(stats)
    answered = sum(v for k, v in snap.items()
                   if k.startswith(("valid", "invalid")) and "client error" not in k)
    rate = (answered - last_total) / max(now - last_t, 1e-9)
    last_total, last_t = answered, now
    r = rss_kib()
    rss.append((now - t_start, r))
    main, arenas, n_arenas = heap_kib()
    try:
        m = srv.metrics()
        cache = (f", cache {m['shlo_cache_modules']:g} modules "
                 f"{m['shlo_cache_bytes'] / 1024:.0f} KiB, "
                 f"{m.get('shlo_http_connections', 0):g} connections")
    except (OSError, KeyError, ValueError):
        cache = ""
    print(f"[{now - t_start:7.1f} s] {answered} answered ({rate:.0f}/s lately), "
          f"RSS {r} KiB (heap {main}, {n_arenas} arenas {arenas}){cache}",
          flush=True)
    if final:
        for k in sorted(snap):
            print(f"  {k}: {snap[k]}")


while time.monotonic() < end:
    time.sleep(min(sample_s, max(0.1, end - time.monotonic())))
    report()
for w in workers:
    w.join()
report(final=True)
m = srv.metrics()
for k in sorted(m):
    if k.startswith(("shlo_refused_total", "shlo_executions_canceled_total",
                     "shlo_connections_closed_total", "shlo_cache_",
                     "shlo_cancel_latency")):
        print(f"  {k} {m[k]:g}")
wrong = sum(v for k, v in stats.items() if "WRONG" in k)
unexpected = sum(v for k, v in stats.items() if "unexpected" in k)
warm = [r for t, r in rss if t >= (minutes * 60) / 5]
if warm:
    lo, hi = min(warm), max(warm)
    print(f"RSS after warm-up: {lo}..{hi} KiB ({100.0 * (hi - lo) / lo:.1f}% "
          f"spread; {'within' if hi <= 1.1 * lo else 'NOT within'} 10%)")
print(f"soak {minutes:g} min: {wrong} wrong answers, {unexpected} unexpected "
      f"5xx, {sum(stats.values())} outcomes in all")
print(f"server exit status after SIGTERM: {srv.stop(60)}")
