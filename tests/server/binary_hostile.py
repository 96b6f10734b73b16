# SPDX-License-Identifier: Apache-2.0
"""Hostile peers against a live shlo-server's binary port: truncated,
oversized, reserved-bits-set, wrong-version and random frames, a half-open
peer and one that never reads its answers.  After each, a fresh client must
still be served; the server's RSS must stay bounded.  Then a session that
executes with interpreter.print kept (an OUTPUT frame before the RESULT),
cancels a long execution, and says goodbye.  SIGTERM must end the server
with status 0.  With --sanitized (a server built with AddressSanitizer),
its stderr must also hold no sanitizer report: no leak, no bad access.
usage: binary_hostile.py SHLO_SERVER [--sanitized]"""
import os, random, socket, struct, sys, time
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "../../client/python"))
sys.path.insert(0, os.path.dirname(__file__))
import numpy as np  # noqa: E402
from shlo_client import Client  # noqa: E402
from srvtest import Server  # noqa: E402

H = struct.Struct("<IHHIIQQ")
MAGIC = 0x424C4853
PROG = "func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n  %0 = stablehlo.add %x, %x : tensor<4xf32>\n  return %0 : tensor<4xf32>\n}"
fails = 0


def check(cond, what):
    global fails
    print(("ok   " if cond else "FAIL ") + what)
    fails += not cond


def hello():
    return H.pack(MAGIC, 1, 1, 0, 0, 0, 16) + struct.pack("<HHIQ", 1, 1, 0, 0)


def drain(s):
    """Everything s receives until the peer closes or goes quiet."""
    got = b""
    try:
        while True:
            k = s.recv(65536)
            if not k: break
            got += k
    except socket.timeout:
        pass
    return got


def raw(port, data, read=True):
    s = socket.create_connection(("127.0.0.1", port)); s.settimeout(5)
    s.sendall(data)
    got = drain(s) if read else b""
    s.close()
    return got


def served(port):
    with Client("shlo://127.0.0.1:%d" % port) as c:
        y = c.execute(PROG, np.arange(4, dtype=np.float32))[0]
        return (y == 2 * np.arange(4)).all()


LOOP = """func.func @main() -> tensor<i64> {
  %c0 = stablehlo.constant dense<0> : tensor<i64>
  %one = stablehlo.constant dense<1> : tensor<i64>
  %big = stablehlo.constant dense<1000000000000> : tensor<i64>
  %r = stablehlo.while(%i = %c0) : tensor<i64>
  cond {
    %p = stablehlo.compare LT, %i, %big : (tensor<i64>, tensor<i64>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %n = stablehlo.add %i, %one : tensor<i64>
    stablehlo.return %n : tensor<i64>
  }
  return %r : tensor<i64>
}"""
BIGPRINT = """func.func @main() -> tensor<i32> {
  %c = stablehlo.constant dense<7> : tensor<i32>
  %b = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<300000xi32>
  interpreter.print %b : tensor<300000xi32>
  return %c : tensor<i32>
}"""
PRINTS = """func.func @main() -> tensor<2xi32> {
  %0 = stablehlo.constant dense<[7, 8]> : tensor<2xi32>
  interpreter.print %0 : tensor<2xi32>
  return %0 : tensor<2xi32>
}"""


def execute_inline(rid, program, flags=1, timeout_us=0):
    """An EXECUTE frame of an inline program without inputs."""
    text = program.encode()
    body = (bytes(32) + struct.pack("<IIQIIQII", flags, 0, len(text), 0, 0, timeout_us, 0, 0)
            + text + bytes(-len(text) % 8))
    return H.pack(MAGIC, 1, 5, 0, 0, rid, len(body)) + body


def frames(s, want):
    """Read frames until one of type 6 or 7 (RESULT, ERROR) for each id in
    want; returns [(type, id, payload)]."""
    got, buf, done = [], b"", set()
    while done != want:
        k = s.recv(65536)
        if not k:
            break
        buf += k
        while len(buf) >= 32:
            _, _, t, _, _, rid, n = H.unpack_from(buf)
            if len(buf) < 32 + n:
                break
            got.append((t, rid, buf[32:32 + n])); buf = buf[32 + n:]
            if t in (6, 7) and rid in want:
                done.add(rid)
    return got


def session(port):
    """interpreter.print kept, a cancel, goodbye: the frames a client sees."""
    s = socket.create_connection(("127.0.0.1", port)); s.settimeout(20)
    s.sendall(hello() + execute_inline(1, PRINTS, flags=3) + execute_inline(2, PRINTS))
    got = frames(s, {1, 2})
    types = [(t, rid) for t, rid, _ in got if rid]
    out = [p for t, rid, p in got if t == 12 and rid == 1]
    text = out[0][16:16 + struct.unpack_from("<Q", out[0])[0]].decode() if out else ""
    check(types.index((12, 1)) < types.index((6, 1)) if (12, 1) in types and (6, 1) in types else False,
          "OUTPUT before RESULT when asked for")
    check(text == "tensor<2xi32> {\n  [7, 8]\n}\n", "OUTPUT holds the printed tensor: %r" % text)
    check((12, 2) not in types and (6, 2) in types, "no OUTPUT unless asked for")
    s.sendall(execute_inline(4, BIGPRINT, flags=3))  # prints ~900 KB
    out = [p for t, rid, p in frames(s, {4}) if t == 12 and rid == 4]
    n, fl = struct.unpack_from("<QI", out[0]) if out else (0, 0)
    check(n == 512 * 1024 and fl == 1, "OUTPUT kept to half of max-body-bytes, "
          "marked truncated (%d bytes, flags %d)" % (n, fl))
    s.sendall(execute_inline(3, LOOP, timeout_us=60 * 10**6))
    time.sleep(0.3)
    t0 = time.time()
    s.sendall(H.pack(MAGIC, 1, 8, 0, 0, 3, 0))
    got = frames(s, {3})
    kinds = [struct.unpack_from("<I", p)[0] for t, rid, p in got if t == 7 and rid == 3]
    check(kinds == [5] and time.time() - t0 < 10, "CANCEL: the long execution answers ERROR timeout")
    s.sendall(H.pack(MAGIC, 1, 11, 0, 0, 0, 0))
    rest = drain(s)
    check(len(rest) >= 32 and H.unpack_from(rest)[2] == 11, "GOODBYE answered with GOODBYE, then close")
    s.close()


def rss(pid):
    for line in open("/proc/%d/status" % pid):
        if line.startswith("VmRSS"):
            return int(line.split()[1]) // 1024


def main():
    sanitized = sys.argv[2:] == ["--sanitized"]
    # srvtest's Server: ports taken before the server binds them are
    # tried again; its stderr goes to srv.log()
    srv = Server(sys.argv[1], "--log", "off", "--threads", "2", "--max-body-bytes", "1m",
                 "--connection-timeout-s", "1", binary_port=True)
    bp = srv.bport
    check(served(bp), "served at start")
    def err(b):  # an ERROR frame among the answers (after any WELCOME)
        off = 0
        while off + 32 <= len(b):
            t, n = struct.unpack_from("<H", b, off + 6)[0], struct.unpack_from("<Q", b, off + 24)[0]
            if t == 7:
                return True
            off += 32 + n
        return False
    check(err(raw(bp, hello() + H.pack(MAGIC, 1, 5, 0, 0, 1, 1 << 40))), "oversized frame: error frame, close")
    check(err(raw(bp, hello() + H.pack(MAGIC, 1, 9, 4, 0, 1, 0))), "reserved flag: error frame")
    check(err(raw(bp, hello() + H.pack(MAGIC, 2, 9, 0, 0, 1, 0))), "wrong version: error frame")
    check(err(raw(bp, H.pack(MAGIC, 1, 9, 0, 0, 1, 0))), "no HELLO first: error frame")
    check(err(raw(bp, b"GET / HTTP/1.1\r\n\r\n" + bytes(14))), "HTTP on the binary port: error frame")
    t = time.time(); raw(bp, hello() + H.pack(MAGIC, 1, 5, 0, 0, 1, 4096) + bytes(100))
    check(time.time() - t < 4.5, "truncated frame: closed after the stall timeout")
    t = time.time(); raw(bp, b"SHL")
    check(time.time() - t < 4.5, "half-open peer without HELLO: timed out")
    rnd = random.Random(11)
    for i in range(200):
        raw(bp, hello() + bytes(rnd.randrange(256) for _ in range(rnd.randrange(1, 300))), read=False)
    for i in range(50):  # random bytes inside a valid header
        body = bytes(rnd.randrange(256) for _ in range(8 * rnd.randrange(1, 40)))
        raw(bp, hello() + H.pack(MAGIC, 1, rnd.choice([3, 5, 8, 9, 11]), 0, 0, 7, len(body)) + body, read=False)
    check(served(bp), "served after 250 random frames")
    # A peer that sends many executes and never reads its answers.
    c = Client("shlo://127.0.0.1:%d" % bp)
    m = c.compile(PROG.replace("4xf32", "65536xf32"))
    c.close()
    mid = bytes.fromhex(m.id.split(":")[1])
    x = np.ones(65536, np.float32).tobytes()
    ex = (mid + struct.pack("<IIQIIQII", 0, 0, 0, 0, 0, 0, 1, 0) +
          struct.pack("<HBBIQ", 27, 1, 0, 0, len(x)) + struct.pack("<Q", 65536) + x)
    s = socket.create_connection(("127.0.0.1", bp)); s.sendall(hello())
    s.settimeout(0.2)
    before = rss(srv.proc.pid)
    sent = 0
    try:
        for i in range(3000):
            s.sendall(H.pack(MAGIC, 1, 5, 0, 0, i + 1, len(ex)) + ex); sent += 1
    except (socket.timeout, OSError):
        pass
    time.sleep(1)
    after = rss(srv.proc.pid)
    check(served(bp), "served while a peer does not read (%d requests sent)" % sent)
    check(after - before < 400, "RSS bounded: %d MiB -> %d MiB" % (before, after))
    s.close()
    check(served(bp), "served after the non-reader left")
    session(bp)
    rc = srv.stop(timeout=60)
    if sanitized:
        report = srv.log()
        check("Sanitizer" not in report, "no sanitizer report" + ("" if "Sanitizer" not in report
                                                                else ":\n" + report[:6000]))
    check(rc == 0, "server exits 0 on SIGTERM")
    return 1 if fails else 0


sys.exit(main())
