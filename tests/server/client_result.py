# SPDX-License-Identifier: Apache-2.0
"""libshlo-client reads each RESULT from the socket straight into its
tensors (client/lib/client_bin.c).  A fake binary-protocol server (this
script) answers the `shlo` CLI's EXECUTE frames with RESULTs made here:

  - a well-formed one (an f32 tensor of 3, then one of 300000 elements,
    several socket reads long): `shlo run --server` prints its values;
  - in `shlo test --server` (one connection for the run), a RESULT whose
    value has an unknown dtype fails that case only, and the next case, on
    the same connection, passes;
  - a RESULT cut short by the server closing: the run fails, saying the
    connection was lost, and does not hang.

usage: client_result.py SHLO_CLI
"""
import os
import socket
import struct
import subprocess
import sys
import tempfile
import threading

MAGIC = 0x424C4853
HELLO, WELCOME, EXECUTE, RESULT = 1, 2, 5, 6
F32 = 27  # the wire code of f32 (binproto.c's table)


def frame(ftype, fid, payload):
    return struct.pack("<IHHIIQQ", MAGIC, 1, ftype, 0, 0, fid,
                       len(payload)) + payload


def read_exact(conn, n):
    buf = b""
    while len(buf) < n:
        chunk = conn.recv(n - len(buf))
        if not chunk:
            raise EOFError
        buf += chunk
    return buf


def read_frame(conn):
    _, _, ftype, _, _, fid, length = struct.unpack("<IHHIIQQ",
                                                   read_exact(conn, 32))
    return ftype, fid, read_exact(conn, length)


def tensor_f32(values, dtype=F32):
    data = struct.pack("<%df" % len(values), *values)
    pad = b"\0" * (-len(data) % 8)
    return struct.pack("<HBBIQ", dtype, 1, 0, 0, len(data)) + \
        struct.pack("<Q", len(values)) + data + pad


def result(values_payload, n_outputs=1):
    head = b"\0" * 32 + struct.pack("<IIIIdd", 0, 1, n_outputs, 0, 0.0, 0.0)
    return head + values_payload


def serve(listener, answers):
    """Answer HELLO, then each EXECUTE with the next of answers: bytes to
    send (a whole frame, or a cut one after which the connection closes)."""
    conn, _ = listener.accept()
    with conn:
        try:
            ftype, _, _ = read_frame(conn)
            assert ftype == HELLO
            welcome = struct.pack("<HHIQQQ", 1, 0, 0, 1 << 30, 1 << 30, 0)
            conn.sendall(frame(WELCOME, 0, welcome))
            for make in answers:
                ftype, fid, _ = read_frame(conn)
                assert ftype == EXECUTE, ftype
                data, close = make(fid)
                conn.sendall(data)
                if close:
                    return
            while conn.recv(4096):  # until the client hangs up
                pass
        except (EOFError, ConnectionError):
            pass


def run_cli(cli, args, answers):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    port = listener.getsockname()[1]
    t = threading.Thread(target=serve, args=(listener, answers), daemon=True)
    t.start()
    p = subprocess.run([cli] + args + ["--server", "shlo://127.0.0.1:%d" % port],
                       capture_output=True, text=True, timeout=60)
    t.join(10)
    listener.close()
    return p


PROG = """func.func @main() -> tensor<3xf32> {
  %0 = stablehlo.constant dense<[1.5, 2.5, -3.0]> : tensor<3xf32>
  return %0 : tensor<3xf32>
}
"""


def main():
    cli = sys.argv[1]
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        prog = os.path.join(tmp, "p.mlir")
        with open(prog, "w") as f:
            f.write(PROG)
        two = os.path.join(tmp, "two.mlir")
        with open(two, "w") as f:
            f.write(PROG + "\n// -----\n\n" + PROG)

        good = lambda fid: (frame(RESULT, fid,
                                  result(tensor_f32([1.5, 2.5, -3.0]))), False)
        p = run_cli(cli, ["run", prog], [good])
        if p.returncode != 0 or "1.5" not in p.stdout or "-3" not in p.stdout:
            failures.append("good RESULT: rc %d, out %r, err %r"
                            % (p.returncode, p.stdout[:300], p.stderr[:300]))

        big_n = 300000
        big = [float(i % 977) - 488.0 for i in range(big_n)]
        big_frame = lambda fid: (frame(RESULT, fid, result(tensor_f32(big))),
                                 False)
        p = run_cli(cli, ["run", prog], [big_frame])
        # first -488, later +488, last (299999 % 977 = 60) -428
        if p.returncode != 0 or "tensor<300000xf32>" not in p.stdout or \
                "[-488.0," not in p.stdout or \
                " 488.0," not in p.stdout or \
                "-428.0]" not in p.stdout:
            failures.append("big RESULT: rc %d, out %r, err %r"
                            % (p.returncode, p.stdout[:300], p.stderr[:300]))

        bad = lambda fid: (frame(RESULT, fid,
                                 result(tensor_f32([1.0], dtype=999))), False)
        p = run_cli(cli, ["test", two], [bad, good])
        lines = p.stdout.splitlines()
        if p.returncode == 0 or not any(l.startswith("FAIL") and
                                        "dtype" in l for l in lines) or \
                not any(l.startswith("PASS") for l in lines) or \
                "1 passed, 1 failed" not in p.stdout:
            failures.append("bad then good: rc %d, out %r, err %r"
                            % (p.returncode, p.stdout[:600], p.stderr[:300]))

        def cut(fid):
            whole = frame(RESULT, fid, result(tensor_f32(big)))
            return whole[:len(whole) // 2], True
        p = run_cli(cli, ["run", prog], [cut])
        if p.returncode == 0 or "connection" not in p.stderr:
            failures.append("cut RESULT: rc %d, out %r, err %r"
                            % (p.returncode, p.stdout[:300], p.stderr[:300]))

    for f in failures:
        print("FAIL", f)
    print("client_result: %d failure(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
