# SPDX-License-Identifier: Apache-2.0
"""Python client of shlo-server: the binary protocol (shlo://host:port,
PROTOCOL.md part 2) and HTTP/JSON (http://host:port, part 1).

    from shlo_client import Client, ShloError
    c = Client("shlo://127.0.0.1:9090", token=None)
    out = c.execute(program_text, numpy.ones(4, numpy.float32))
    m = c.compile(program_text)         # Module: id, entry, signature
    out = m.execute(x, y, entry=None)
    c.close()

Streaming (PROTOCOL.md "Executions", and part 2 "Streaming executions"):
start a program that loops on infeed / outfeed, feed it and drain it while
it runs; the same code over HTTP and over the binary protocol:

    c = Client("http://127.0.0.1:8080")   # or "shlo://127.0.0.1:9090"
    ex = c.start(program_text, numpy.int64(100))   # Execution
    threading.Thread(target=lambda: [ex.feed(a) for a in arrays]).start()
    for v in ex.outfeed():                         # numpy arrays, live
        ...
    ex.state()        # {"id", "state": "succeeded", "outputs": ...}
    ex.cancel()       # DELETE: answers once it has ended

Standard library and numpy only.  A Client may be used from many threads
(one lock per connection; binary requests carry ids, so answers may come
in any order).  Every failure the server reports raises ShloError with
kind, message, line and column, as in the JSON error shape.

dtype mapping (numpy <-> StableHLO):
  bool <-> i1; int8/16/32/64 <-> i8/i16/i32/i64; uint8/16/32/64 <->
  ui8/ui16/ui32/ui64; float16 <-> f16; float32 <-> f32; float64 <-> f64;
  complex64 <-> complex<f32>; complex128 <-> complex<f64>.
  numpy has no bf16 or narrow floats: they travel as raw unsigned views --
  bf16 as uint16 (the bit pattern), i2/i4/ui2/ui4 as int8/uint8 (one value
  per byte), f4E2M1FN, f6*, f8* as uint8 (the bit pattern in the low bits).
  Send them with Raw(array, "bf16"); outputs of those types come back as
  RawArray, a numpy array of the view type whose .stablehlo names the type.
"""

import base64
import http.client
import json
import queue
import socket
import struct
import threading
import urllib.parse

import numpy as np

__all__ = ["Client", "Module", "Execution", "BinaryExecution", "ShloError",
           "Raw", "RawArray"]

KINDS = ["parse", "verify", "input", "limit", "runtime", "timeout", "auth",
         "not_found", "method"]

# Wire dtype code (PROTOCOL.md) -> (StableHLO name, numpy dtype, raw view?)
DTYPES = {
    1: ("i1", np.bool_, False), 2: ("i2", np.int8, True),
    3: ("i4", np.int8, True), 4: ("i8", np.int8, False),
    5: ("i16", np.int16, False), 6: ("i32", np.int32, False),
    7: ("i64", np.int64, False), 8: ("ui2", np.uint8, True),
    9: ("ui4", np.uint8, True), 10: ("ui8", np.uint8, False),
    11: ("ui16", np.uint16, False), 12: ("ui32", np.uint32, False),
    13: ("ui64", np.uint64, False), 14: ("f4E2M1FN", np.uint8, True),
    15: ("f6E2M3FN", np.uint8, True), 16: ("f6E3M2FN", np.uint8, True),
    17: ("f8E3M4", np.uint8, True), 18: ("f8E4M3", np.uint8, True),
    19: ("f8E4M3FN", np.uint8, True), 20: ("f8E4M3FNUZ", np.uint8, True),
    21: ("f8E4M3B11FNUZ", np.uint8, True), 22: ("f8E5M2", np.uint8, True),
    23: ("f8E5M2FNUZ", np.uint8, True), 24: ("f8E8M0FNU", np.uint8, True),
    25: ("bf16", np.uint16, True), 26: ("f16", np.float16, False),
    27: ("f32", np.float32, False), 28: ("f64", np.float64, False),
    29: ("complex<f32>", np.complex64, False),
    30: ("complex<f64>", np.complex128, False),
}
CODE_OF_NAME = {v[0]: k for k, v in DTYPES.items()}
CODE_OF_NUMPY = {np.dtype(v[1]): k for k, v in DTYPES.items() if not v[2]}

MAGIC = 0x424C4853
HEADER = struct.Struct("<IHHIIQQ")
T_HELLO, T_WELCOME, T_COMPILE, T_MODULE, T_EXECUTE, T_RESULT, T_ERROR, \
    T_CANCEL, T_PING, T_PONG, T_GOODBYE = range(1, 12)
T_STARTED, T_INFEED, T_QUEUED, T_SUBSCRIBE, T_OUTFEED, T_STATE, T_WAIT, \
    T_STOP = range(13, 21)
EXEC_ASYNC = 4
STREAM_ALL = 0xFFFFFFFF


class ShloError(Exception):
    """An error the server (or the connection) reported."""

    def __init__(self, kind, message, line=0, column=0, status=0):
        super().__init__("%s: %s" % (kind, message))
        self.kind, self.message = kind, message
        self.line, self.column, self.status = line, column, status


class RawArray(np.ndarray):
    """An output of a type numpy lacks: the raw view, with .stablehlo."""
    stablehlo = None


class Raw:
    """An input of a type numpy lacks: a raw view and the StableHLO name."""

    def __init__(self, array, stablehlo):
        self.array, self.stablehlo = np.asarray(array), stablehlo


def _pad8(n):
    return (n + 7) & ~7


def _as_input(a):
    """(wire code, contiguous little-endian array) of an input."""
    if isinstance(a, Raw):
        code = CODE_OF_NAME[a.stablehlo]
        want = np.dtype(DTYPES[code][1])
        arr = a.array.astype(want, copy=False)
    else:
        arr = np.asarray(a)
        code = CODE_OF_NUMPY.get(arr.dtype.newbyteorder("="))
        if code is None:
            raise ShloError("input", "numpy dtype %s has no StableHLO type"
                            % arr.dtype)
        arr = arr.astype(arr.dtype.newbyteorder("<"), copy=False)
    # ascontiguousarray makes a 0-d array 1-d: keep the scalar's shape
    return code, np.ascontiguousarray(arr).reshape(arr.shape)


def _output(code, shape, data):
    name, dt, raw = DTYPES[code]
    arr = np.frombuffer(data, dtype=np.dtype(dt).newbyteorder("<"))
    arr = arr.reshape(shape).astype(np.dtype(dt), copy=False)
    if raw:
        arr = arr.view(RawArray)
        arr.stablehlo = name
    return arr


class Module:
    """A program compiled on the server: id, entry, signature."""

    def __init__(self, client, id, entry, signature, program):
        self.client, self.id, self.entry = client, id, entry
        self.signature, self._program = signature, program

    def execute(self, *arrays, entry=None, timeout_ms=None):
        return self.client._conn.execute(None, self.id, arrays,
                                         entry or self.entry, timeout_ms)

    def __repr__(self):
        return "Module(%s, @%s %s)" % (self.id, self.entry, self.signature)


class Client:
    """A connection to shlo-server, by URL: shlo://host:port (binary) or
    http://host:port (JSON)."""

    def __init__(self, url, token=None, timeout=300):
        u = urllib.parse.urlsplit(url)
        if u.scheme == "shlo":
            self._conn = _Binary(u.hostname, u.port or 9090, token, timeout)
        elif u.scheme == "http":
            self._conn = _Http(u.hostname, u.port or 80, token, timeout)
        else:
            raise ValueError("URL must start with shlo:// or http://")

    def execute(self, program, *arrays, entry=None, timeout_ms=None):
        """Run program's entry function on arrays; a list of arrays."""
        return self._conn.execute(program, None, arrays, entry, timeout_ms)

    def compile(self, program, entry=None):
        id, ent, sig = self._conn.compile(program, entry)
        return Module(self, id, ent, sig, program)

    def start(self, program, *arrays, entry=None, timeout_ms=None):
        """Run program asynchronously (POST /v1/executions, or an
        asynchronous EXECUTE): an Execution (HTTP) or BinaryExecution, with
        the same methods, to feed, drain, poll or cancel while it runs."""
        if isinstance(self._conn, _Binary):
            return self._conn.start(program, arrays, entry, timeout_ms)
        body = self._conn.exec_body(program, arrays, entry, timeout_ms)
        doc = self._conn._post("/v1/executions", body)
        return Execution(self._conn, doc["id"])

    def close(self):
        self._conn.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _json_tensor(a):
    """An input as the JSON tensor form with b64 data."""
    code, arr = _as_input(a)
    return {"dtype": DTYPES[code][0], "shape": list(arr.shape),
            "b64": base64.b64encode(arr.tobytes()).decode()}


def _json_output(t):
    if "tuple" in t:
        return [_json_output(x) for x in t["tuple"]]
    if "token" in t:
        return None
    return _output(CODE_OF_NAME[t["dtype"]], t["shape"],
                   base64.b64decode(t["b64"]))


def _raise_for(status, data):
    try:
        doc = json.loads(data)
    except ValueError:
        raise ShloError("runtime", "HTTP %d: %r" % (status, data[:200]),
                        status=status)
    if status >= 400 and isinstance(doc, dict) and "error" in doc:
        e = doc["error"]
        raise ShloError(e.get("kind", "runtime"), e.get("message", ""),
                        e.get("line", 0), e.get("column", 0), status)
    return doc


class Execution:
    """An asynchronous execution on the server (Client.start).  feed() and
    outfeed() may run in different threads at once; each uses its own HTTP
    connection.  The outfeed is one queue: with several readers each value
    goes to one of them."""

    def __init__(self, http_conn, id):
        self._http, self.id = http_conn, id
        self.final = None  # the final state object, once outfeed() ended
        self._feed_conn = None

    def _request(self, method, path, body=None, conn=None, headers=None):
        c = conn or self._http.connection()
        try:
            h = dict(self._http.headers)
            h.update(headers or {})
            c.request(method, path, body, h)
            r = c.getresponse()
            return _raise_for(r.status, r.read())
        finally:
            if conn is None:
                c.close()

    def state(self, wait_ms=0):
        """GET the state object; with wait_ms, long-poll for a change."""
        q = "?wait_ms=%d" % wait_ms if wait_ms else ""
        return self._request("GET", "/v1/executions/%s%s" % (self.id, q))

    def feed(self, array, replica=None, partition=None, channel=None):
        """Queue one value on the infeed (or host channel `channel`); blocks
        while the server's queue is full."""
        if self._feed_conn is None:
            self._feed_conn = self._http.connection()
        line = json.dumps(_json_tensor(array)) + "\n"
        try:
            return self._request("POST", self._path("infeed", replica,
                                                    partition, channel),
                                 line, self._feed_conn,
                                 {"Content-Type": "application/x-ndjson"})
        except (OSError, http.client.HTTPException):
            self._feed_conn.close()
            self._feed_conn = None
            raise

    def _path(self, what, replica, partition, channel):
        if channel is not None:
            what = "channels/%d" % channel
        q = ["b64=1"] if what != "infeed" else []
        if replica is not None:
            q.append("replica=%d" % replica)
        if partition is not None:
            q.append("partition=%d" % partition)
        return "/v1/executions/%s/%s%s" % (self.id, what,
                                           "?" + "&".join(q) if q else "")

    def outfeed(self, replica=None, partition=None, channel=None):
        """The values the program outfeeds (or sends on host channel
        `channel`), as they come; ends when the execution has ended (then
        self.final holds its final state)."""
        c = self._http.connection()
        try:
            c.request("GET", self._path("outfeed", replica, partition,
                                        channel), headers=self._http.headers)
            r = c.getresponse()
            if r.status != 200:
                _raise_for(r.status, r.read())
            for line in r:
                doc = json.loads(line)
                if "state" in doc:
                    self.final = doc
                    return
                yield _json_output(doc)
        finally:
            c.close()

    def result(self):
        """Wait for the end: the outputs, or ShloError for a failure."""
        while True:
            doc = self.state(wait_ms=10000)
            if doc["state"] in ("succeeded", "failed", "canceled"):
                return _outputs_of(doc)

    def cancel(self):
        """DELETE: stop it; answers its final state once it has ended."""
        return self._request("DELETE", "/v1/executions/%s" % self.id)

    def close(self):
        if self._feed_conn:
            self._feed_conn.close()
            self._feed_conn = None


class BinaryExecution:
    """An asynchronous execution started over the binary protocol: the
    same methods as Execution, as frames on the client's one connection
    (PROTOCOL.md part 2, "Streaming executions").  Closing that connection
    cancels the executions it started."""

    def __init__(self, conn, id):
        self._conn, self.id = conn, id
        self.final = None

    def _ref(self, flags=0):
        return [self.id.encode().ljust(24, b"\0"), struct.pack("<II", flags, 0)]

    @staticmethod
    def _stream(eid, flags, replica, partition, channel):
        if channel is not None:
            flags |= 1
        r = STREAM_ALL if replica is None else replica
        p = STREAM_ALL if partition is None else partition
        return [eid.encode().ljust(24, b"\0"),
                struct.pack("<IIIIq", flags, r, p, 0, channel or 0)]

    def state(self, wait_ms=0):
        """The state object, as HTTP's GET; with wait_ms, once it ended
        (the binary WAIT does not time out)."""
        _, pl = self._conn._call(T_WAIT, self._ref(1 if wait_ms else 0))
        return _state_doc(pl)

    def feed(self, array, replica=None, partition=None, channel=None,
             close=False):
        """Queue one value; returns once the server queued it (blocks
        while the queue is full)."""
        code, arr = _as_input(array)
        parts = self._stream(self.id, 2 if close else 0, replica or 0,
                             partition or 0, channel)
        parts += _value_parts(code, arr)
        self._conn._call(T_INFEED, parts)

    def outfeed(self, replica=None, partition=None, channel=None):
        """The values the program outfeeds (or sends on host channel
        `channel`), as they come; ends when the execution has ended (then
        self.final holds its final state)."""
        q = self._conn._subscribe(self._stream(self.id, 0, replica, partition,
                                               channel))
        while True:
            t, pl = q.get()
            if t == T_OUTFEED:
                v, _ = self._conn._value(pl, 16)
                yield v
            elif t == T_STATE:
                self.final = _state_doc(pl)
                return
            elif t == T_ERROR:
                raise self._conn._error(pl)
            else:
                raise ShloError("runtime", "connection lost: %s"
                                % self._conn.dead)

    def result(self):
        """Wait for the end: the outputs, or ShloError for a failure."""
        return _outputs_of(self.state(wait_ms=1))

    def cancel(self):
        """STOP: cancel it; answers its final state once it has ended."""
        _, pl = self._conn._call(T_STOP, self._ref())
        return _state_doc(pl)

    def close(self):
        pass


def _outputs_of(doc):
    """An ended execution's state object: its outputs, or the ShloError
    of its failure or cancel."""
    if doc["state"] != "succeeded":
        e = doc.get("error", {})
        raise ShloError(e.get("kind", "runtime"),
                        e.get("message", doc["state"]),
                        status=doc.get("status", 0))
    return [_json_output(t) for t in doc["outputs"]]


def _state_doc(pl):
    n = struct.unpack_from("<Q", pl, 48)[0]
    return json.loads(bytes(pl[56:56 + n]))


def _value_parts(code, arr):
    return [struct.pack("<HBBIQ", code, arr.ndim, 0, 0, arr.nbytes),
            struct.pack("<%dQ" % arr.ndim, *arr.shape),
            memoryview(arr.reshape(-1)).cast("B"),
            b"\0" * (_pad8(arr.nbytes) - arr.nbytes)]


class _Http:
    def __init__(self, host, port, token, timeout):
        self.host, self.port, self.timeout = host, port, timeout
        self.headers = {"Content-Type": "application/json"}
        if token:
            self.headers["Authorization"] = "Bearer " + token
        self.local = threading.local()  # one HTTP connection per thread

    def _post(self, path, body):
        c = getattr(self.local, "c", None)
        if c is None:
            c = self.local.c = http.client.HTTPConnection(
                self.host, self.port, timeout=self.timeout)
        try:
            c.request("POST", path, json.dumps(body), self.headers)
            r = c.getresponse()
            data = r.read()
        except (OSError, http.client.HTTPException):
            self.local.c = None
            c.close()
            raise
        doc = json.loads(data)
        if "error" in doc:
            e = doc["error"]
            raise ShloError(e.get("kind", "runtime"), e.get("message", ""),
                            e.get("line", 0), e.get("column", 0), r.status)
        return doc

    def exec_body(self, program, arrays, entry, timeout_ms):
        body = {"inputs": [_json_tensor(a) for a in arrays],
                "output_format": "b64"}
        if entry:
            body["entry"] = entry
        if timeout_ms:
            body["timeout_ms"] = timeout_ms
        if program is not None:
            body["program"] = program
        return body

    def connection(self):
        """A new HTTP connection (a stream holds its own)."""
        return http.client.HTTPConnection(self.host, self.port,
                                          timeout=self.timeout)

    def execute(self, program, module_id, arrays, entry, timeout_ms):
        body = self.exec_body(program, arrays, entry, timeout_ms)
        if program is not None:
            doc = self._post("/execute", body)
        else:
            doc = self._post("/v1/modules/%s/execute" % module_id, body)
        return [self._tensor(t) for t in doc["outputs"]]

    def _tensor(self, t):
        return _json_output(t)

    def compile(self, program, entry):
        body = {"program": program}
        if entry:
            body["entry"] = entry
        doc = self._post("/v1/modules", body)
        f = [x for x in doc["functions"] if x["name"] == doc["entry"]]
        sig = ""
        if f:
            outs = f[0]["outputs"]
            sig = "(%s) -> %s" % (", ".join(f[0]["inputs"]),
                                  outs[0] if len(outs) == 1
                                  else "(%s)" % ", ".join(outs))
        return doc["id"], doc["entry"], sig

    def close(self):
        c = getattr(self.local, "c", None)
        if c:
            c.close()


class _Binary:
    """One TCP connection; a reader thread routes answers to requests."""

    def __init__(self, host, port, token, timeout):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.wlock = threading.Lock()
        self.plock = threading.Lock()
        self.pending = {}  # id -> [event, (type, payload)]
        self.streams = {}  # SUBSCRIBE id -> queue of (type, payload)
        self.next_id = 1
        self.version = 1
        self.dead = None
        tok = (token or "").encode()
        pad = b"\0" * (-len(tok) % 8)  # payloads end on 8 bytes
        self._send(T_HELLO, 0,
                   [struct.pack("<HHIQ", 1, 2, len(tok), 0), tok, pad])
        t, _, payload = self._read_frame()
        if t == T_ERROR:
            raise self._error(payload)
        if t != T_WELCOME:
            raise ShloError("input", "the server did not answer HELLO")
        self.version = struct.unpack_from("<H", payload)[0]
        self.sock.settimeout(None)
        self.reader = threading.Thread(target=self._read_loop, daemon=True)
        self.reader.start()

    def _recv_exact(self, n):
        buf = bytearray(n)
        view, got = memoryview(buf), 0
        while got < n:
            k = self.sock.recv_into(view[got:], n - got)
            if k == 0:
                raise ConnectionError("the server closed the connection")
            got += k
        return buf

    def _read_frame(self):
        magic, ver, typ, flags, res, rid, length = HEADER.unpack(
            self._recv_exact(HEADER.size))
        if magic != MAGIC or flags or res or length % 8:
            raise ConnectionError("malformed frame from the server")
        return typ, rid, self._recv_exact(length)

    def _read_loop(self):
        try:
            while True:
                typ, rid, payload = self._read_frame()
                if typ == T_GOODBYE:
                    raise ConnectionError("the server said goodbye")
                with self.plock:
                    sq = self.streams.get(rid)
                    if sq is not None and typ != T_OUTFEED:
                        del self.streams[rid]  # STATE or ERROR ends it
                    slot = self.pending.pop(rid, None) if sq is None else None
                if sq is not None:
                    sq.put((typ, payload))
                    continue
                if slot is None and typ == T_ERROR and rid == 0:
                    raise self._error(payload)
                if slot:
                    slot[1] = (typ, payload)
                    slot[0].set()
        except Exception as e:  # the connection is over: fail every call
            with self.plock:
                self.dead = e
                for slot in self.pending.values():
                    slot[0].set()
                self.pending.clear()
                for sq in self.streams.values():
                    sq.put((None, None))
                self.streams.clear()

    def _send(self, typ, rid, parts):
        n = sum(len(p) for p in parts)
        head = HEADER.pack(MAGIC, self.version, typ, 0, 0, rid, n)
        with self.wlock:
            self.sock.sendall(head)
            for p in parts:
                if len(p):
                    self.sock.sendall(p)

    def _call(self, typ, parts):
        ev = threading.Event()
        with self.plock:
            if self.dead:
                raise ShloError("runtime", "connection lost: %s" % self.dead)
            rid = self.next_id
            self.next_id += 1
            slot = self.pending[rid] = [ev, None]
        try:
            self._send(typ, rid, parts)
        except OSError:
            # The server may have refused the frame (a limit) and closed:
            # its ERROR frame, if it came, says why.
            ev.wait(5)
        ev.wait()
        if slot[1] is None:
            raise ShloError("runtime", "connection lost: %s" % self.dead)
        t, payload = slot[1]
        if t == T_ERROR:
            raise self._error(payload)
        return t, payload

    def _subscribe(self, parts):
        """SUBSCRIBE: a queue that gets its OUTFEED frames, then its STATE
        or ERROR (or (None, None) when the connection is lost)."""
        sq = queue.Queue()
        with self.plock:
            if self.dead:
                raise ShloError("runtime", "connection lost: %s" % self.dead)
            rid = self.next_id
            self.next_id += 1
            self.streams[rid] = sq
        self._send(T_SUBSCRIBE, rid, parts)
        return sq

    def start(self, program, arrays, entry, timeout_ms):
        if self.version < 2:
            raise ShloError("input", "the server's binary protocol has no "
                            "streaming executions (version 1)")
        _, pl = self._call(T_EXECUTE, self._execute_parts(
            program, None, arrays, entry, timeout_ms, EXEC_ASYNC))
        eid = bytes(pl[:24]).rstrip(b"\0").decode()
        return BinaryExecution(self, eid)

    @staticmethod
    def _error(p):
        kind, status, line, col, _es, ml = struct.unpack_from("<IIIIiI", p)
        msg = bytes(p[24:24 + ml]).decode("utf-8", "replace")
        return ShloError(KINDS[kind] if kind < len(KINDS) else "runtime", msg,
                         line, col, status)

    @staticmethod
    def _str(s):
        b = s.encode() if s else b""
        return [b, b"\0" * (_pad8(len(b)) - len(b))]

    def compile(self, program, entry):
        p = program.encode()
        e = (entry or "").encode()
        parts = [struct.pack("<IIIIQ", 0, 0, len(e), 0, len(p))]
        parts += self._str(entry) + [p, b"\0" * (_pad8(len(p)) - len(p))]
        _, pl = self._call(T_COMPILE, parts)
        mid = bytes(pl[:32])
        _flags, _r, _p, el, sl, _res = struct.unpack_from("<6I", pl, 32)
        ent = bytes(pl[56:56 + el]).decode()
        off = 56 + _pad8(el)
        sig = bytes(pl[off:off + sl]).decode()
        return "sha256:" + mid.hex(), ent, sig

    def _execute_parts(self, program, module_id, arrays, entry, timeout_ms,
                       flags=0):
        mid = bytes(32)
        prog = b""
        if program is not None:
            prog, flags = program.encode(), flags | 1
        else:
            mid = bytes.fromhex(module_id.split(":")[-1])
        e = (entry or "").encode()
        parts = [mid, struct.pack("<IIQIIQII", flags, len(e), len(prog), 0, 0,
                                  int((timeout_ms or 0) * 1000),
                                  len(arrays), 0)]
        parts += self._str(entry)
        parts += [prog, b"\0" * (_pad8(len(prog)) - len(prog))]
        for a in arrays:
            parts += _value_parts(*_as_input(a))
        return parts

    def execute(self, program, module_id, arrays, entry, timeout_ms):
        _, pl = self._call(T_EXECUTE, self._execute_parts(
            program, module_id, arrays, entry, timeout_ms))
        _flags, n_procs, n_out, _r = struct.unpack_from("<4I", pl, 32)
        off, outs = 64, []
        for _ in range(n_procs * n_out):
            v, off = self._value(pl, off)
            outs.append(v)
        if n_procs > 1:
            return [outs[k * n_out:(k + 1) * n_out] for k in range(n_procs)]
        return outs

    def _value(self, pl, off):
        code, rank, kind, _r, length = struct.unpack_from("<HBBIQ", pl, off)
        off += 16
        if kind == 1:
            elems = []
            for _ in range(length):
                v, off = self._value(pl, off)
                elems.append(v)
            return elems, off
        if kind == 2:
            return None, off
        shape = struct.unpack_from("<%dQ" % rank, pl, off)
        off += 8 * rank
        arr = _output(code, shape, memoryview(pl)[off:off + length])
        return arr, off + _pad8(length)

    def close(self):
        try:
            self._send(T_GOODBYE, 0, [])
        except OSError:
            pass
        self.sock.close()
