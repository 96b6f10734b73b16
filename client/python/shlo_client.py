# SPDX-License-Identifier: Apache-2.0
"""Python client of shlo-server: the binary protocol (shlo://host:port,
PROTOCOL.md part 2), HTTP/JSON (http://host:port or https://host:port,
part 1) and the Open Inference Protocol (/v2, part 3).

    from shlo_client import Client, ShloError
    with Client("shlo://127.0.0.1:9090", token=None) as c:
        out = c.execute(program_text, numpy.ones(4, numpy.float32))
        m = c.compile(program_text)     # Module: id, entry, signature
        out = m.execute(x, y, entry=None)

Over HTTP(S) also (docs/python.md):

    c = Client("https://shlo.example:8443", token=t, ca_file="ca.pem",
               retry=Retry(attempts=5, max_delay=10))
    m = c.compile(program_text, name="adder")   # named for /v2
    c.modules()                                 # [Module, ...]
    c.delete_module(m.id)
    c.infer("adder", [x, y])                    # {"output0": array}

Refusals for load (429, 503) are retried after the server's Retry-After
(Retry: bounded in attempts and in the longest wait; on by default for
calls that change nothing when repeated, off for the others unless
Retry(non_idempotent=True)).  Every error is a ShloError; its subclass
names the kind (ParseError, VerifyError, InputError, LimitError,
ExecutionError, DeadlineError, AuthError, NotFoundError, MethodError,
ShloConnectionError).

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
import email.utils
import http.client
import json
import queue
import socket
import ssl
import struct
import threading
import time
import urllib.parse
import weakref
from typing import (Any, Callable, Dict, Iterable, List, Mapping, Optional,
                    Sequence, Tuple, Union)

import numpy as np

__version__ = "0.2.0"

__all__ = ["Client", "Module", "Execution", "BinaryExecution", "Retry",
           "ShloError", "ParseError", "VerifyError", "InputError",
           "LimitError", "ExecutionError", "DeadlineError", "AuthError",
           "NotFoundError", "MethodError", "ShloConnectionError", "Raw",
           "RawArray"]

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
    """An error the server (or the connection) reported: kind as the JSON
    errors spell it, message, the place in the program (line, column; 0
    when none), the HTTP status (0 on the binary protocol but for limits),
    and for a refusal for load the seconds Retry-After asked to wait
    (retry_after, None when not said), the quota named (quota) and how
    many attempts the client made (attempts)."""

    def __init__(self, kind: str, message: str, line: int = 0,
                 column: int = 0, status: int = 0) -> None:
        super().__init__("%s: %s" % (kind, message))
        self.kind, self.message = kind, message
        self.line, self.column, self.status = line, column, status
        self.retry_after: Optional[float] = None
        self.quota: Optional[str] = None
        self.attempts = 1


class ParseError(ShloError):
    """The program's text does not parse (kind "parse")."""


class VerifyError(ShloError):
    """The program parses but is not valid StableHLO (kind "verify")."""


class InputError(ShloError):
    """A malformed request or inputs that do not fit (kind "input")."""


class LimitError(ShloError):
    """A limit or quota refused the request (kind "limit"): 413 for a
    size, 429 for a quota, 503 for a full queue (retry_after set)."""


class ExecutionError(ShloError):
    """The execution failed on the server (kind "runtime")."""


class DeadlineError(ShloError):
    """The execution passed its time limit or was canceled (kind
    "timeout")."""


class AuthError(ShloError):
    """No token, a wrong one, or one without the scope (kind "auth")."""


class NotFoundError(ShloError):
    """No such module, model, execution or route (kind "not_found")."""


class MethodError(ShloError):
    """The route does not take that method (kind "method")."""


class ShloConnectionError(ShloError, ConnectionError):
    """The server could not be reached (kind "connection")."""


_ERROR_CLASSES = {
    "parse": ParseError, "verify": VerifyError, "input": InputError,
    "limit": LimitError, "runtime": ExecutionError, "timeout": DeadlineError,
    "auth": AuthError, "not_found": NotFoundError, "method": MethodError,
    "connection": ShloConnectionError,
}


def _make_error(kind: str, message: str, line: int = 0, column: int = 0,
                status: int = 0) -> ShloError:
    """The ShloError subclass for kind (ShloError itself for a kind this
    client does not know, so a newer server's kinds still arrive)."""
    return _ERROR_CLASSES.get(kind, ShloError)(kind, message, line, column,
                                               status)


class Retry:
    """When and how long to wait before sending a request again that the
    server refused for load (HTTP 429 or 503).

    attempts: the most tries in all (1 = never retry).  A refusal with
    Retry-After waits exactly that long, never less: the server said when
    it can take the request.  One without waits backoff * 2**(try - 1)
    seconds.  max_delay bounds one wait: a refusal that asks for longer
    is given up at once (raised), as is the last try's.  non_idempotent:
    retry calls that a second delivery could repeat (starting an
    execution, feeding one) -- off by default.  on_retry(attempt, delay,
    error), when given, is called before each wait."""

    def __init__(self, attempts: int = 3, backoff: float = 0.25,
                 max_delay: float = 30.0,
                 statuses: Sequence[int] = (429, 503),
                 non_idempotent: bool = False,
                 on_retry: Optional[Callable[[int, float, ShloError],
                                             None]] = None) -> None:
        if attempts < 1 or backoff < 0 or max_delay < 0:
            raise ValueError("Retry: attempts >= 1, backoff and max_delay "
                             ">= 0")
        self.attempts, self.backoff, self.max_delay = attempts, backoff, \
            max_delay
        self.statuses = tuple(statuses)
        self.non_idempotent = non_idempotent
        self.on_retry = on_retry

    def delay(self, attempt: int, err: ShloError) -> Optional[float]:
        """Seconds to wait after try number attempt (from 1) failed with
        err, or None to give up."""
        if err.status not in self.statuses or attempt >= self.attempts:
            return None
        if err.retry_after is not None:
            wait = err.retry_after
        else:
            wait = self.backoff * 2 ** (attempt - 1)
        return wait if wait <= self.max_delay else None


NO_RETRY = Retry(attempts=1)


def _retry_after(value: Optional[str]) -> Optional[float]:
    """Retry-After's seconds: delta-seconds or an HTTP date; None when
    absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


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
    """A program compiled on the server: id ("sha256:<hex>"), entry,
    signature, name (None when unnamed) and, over HTTP, the server's info
    object (info: functions, cached, bytes, ...)."""

    def __init__(self, client: "Client", id: str, entry: str,
                 signature: str, program: Optional[str],
                 name: Optional[str] = None,
                 info: Optional[Dict[str, Any]] = None) -> None:
        self.client, self.id, self.entry = client, id, entry
        self.signature, self._program = signature, program
        self.name, self.info = name, info or {}

    def execute(self, *arrays: Any, entry: Optional[str] = None,
                timeout_ms: Optional[float] = None,
                inputs: Optional[Mapping[str, Any]] = None) -> Any:
        """Run the module on arrays: a list of numpy arrays.  With
        inputs={"x": array, ...} instead, the inputs go by the names the
        model gives them (its JAX export's, or a repository config's) in
        any order, through the Open Inference Protocol (HTTP only), and
        the answer is {output name: array}."""
        if inputs is not None:
            if arrays:
                raise ValueError("give arrays or inputs=, not both")
            return self.client.infer(self.name or self.id, inputs)
        return self.client._conn.execute(None, self.id, arrays,
                                         entry or self.entry, timeout_ms)

    def set_name(self, name: str) -> "Module":
        """Name it for the Open Inference Protocol (/v2/models/<name>):
        registers its program again with the name (HTTP only; needs the
        program's text, so not on a Module that Client.modules() listed).
        The newest registration under a name owns it."""
        if self._program is None:
            raise ValueError("Module.set_name needs the program's text: "
                             "use Client.compile(program, name=...)")
        m = self.client.compile(self._program, self.entry, name=name)
        self.name, self.info = m.name, m.info
        return self

    def delete(self) -> None:
        """Take the module from the caller's team (HTTP only)."""
        self.client.delete_module(self.id)

    def __repr__(self) -> str:
        named = " %r" % self.name if self.name else ""
        return "Module(%s%s, @%s %s)" % (self.id, named, self.entry,
                                         self.signature)


def _signature(info: Mapping[str, Any]) -> str:
    """"(inputs) -> outputs" of an info object's entry function."""
    f = [x for x in info.get("functions", []) if x["name"] == info["entry"]]
    if not f:
        return ""
    outs = f[0]["outputs"]
    return "(%s) -> %s" % (", ".join(f[0]["inputs"]),
                           outs[0] if len(outs) == 1
                           else "(%s)" % ", ".join(outs))


class Client:
    """A connection to shlo-server, by URL: shlo://host:port (binary),
    http://host:port or https://host:port (JSON).

    token: the bearer token (the binary protocol's HELLO carries it).
    timeout: seconds a socket operation may take.  ca_file: for https,
    the PEM file of the certificate authorities to trust (None: the
    system's).  retry: a Retry, or None never to retry (HTTP only; on the
    binary protocol a refusal is raised at once, as LimitError)."""

    def __init__(self, url: str, token: Optional[str] = None,
                 timeout: float = 300, *, ca_file: Optional[str] = None,
                 retry: Optional[Retry] = Retry()) -> None:
        u = urllib.parse.urlsplit(url)
        if u.scheme == "shlo":
            self._conn = _Binary(u.hostname, u.port or 9090, token, timeout)
        elif u.scheme in ("http", "https"):
            tls = None
            if u.scheme == "https":
                tls = ssl.create_default_context(cafile=ca_file)
            self._conn = _Http(u.hostname, u.port or (443 if tls else 80),
                               token, timeout, tls, retry or NO_RETRY)
        else:
            raise ValueError("URL must start with shlo://, http:// or "
                             "https://")

    def execute(self, program: str, *arrays: Any,
                entry: Optional[str] = None,
                timeout_ms: Optional[float] = None) -> List[Any]:
        """Run program's entry function on arrays; a list of arrays."""
        return self._conn.execute(program, None, arrays, entry, timeout_ms)

    def compile(self, program: str, entry: Optional[str] = None,
                name: Optional[str] = None,
                batching: Optional[Mapping[str, Any]] = None) -> Module:
        """Register program (parse, verify, compile once): a Module.
        name (HTTP only) names it for the Open Inference Protocol.
        batching (HTTP only): the team's dynamic batching of it, as
        {"max_batch_size": N, "max_queue_delay_us": US,
        "preferred_batch_sizes": [...], "max_queue_size": N}
        (max_batch_size 0 turns it off); Module.info["batching"] is the
        configuration in force."""
        if name is not None or batching is not None:
            doc = self._http("naming or batching a module").register(
                program, entry, name, batching)
            return self._module(doc, program)
        id, ent, sig = self._conn.compile(program, entry)
        return Module(self, id, ent, sig, program)

    def register(self, program: str, entry: Optional[str] = None, *,
                 name: Optional[str] = None,
                 batching: Optional[Mapping[str, Any]] = None) -> Module:
        """compile() by the server's word for it (POST /v1/modules)."""
        return self.compile(program, entry, name=name, batching=batching)

    def execute_model(self, name: str, *arrays: Any,
                      version: Optional[int] = None,
                      timeout_ms: Optional[float] = None) -> List[Any]:
        """Run the caller's team's model name (its latest version, or
        version) on arrays in argument order: POST /v1/models/{name}
        [/versions/{version}]/execute (HTTP only); a list of arrays.  An
        admin names another team's model as "team/name"."""
        return self._http("executing a model by name").execute_model(
            _model_path(name, version), arrays, timeout_ms)

    def modules(self) -> List[Module]:
        """The modules of the caller's team, most recently used first
        (GET /v1/modules; HTTP only)."""
        doc = self._http("listing modules").call("GET", "/v1/modules")
        return [self._module(info, None) for info in doc["modules"]]

    def module(self, id_: str) -> Module:
        """One module by id (GET /v1/modules/{id}; HTTP only)."""
        doc = self._http("looking a module up").call(
            "GET", "/v1/modules/" + urllib.parse.quote(id_, safe=":"))
        return self._module(doc, None)

    def delete_module(self, id_: str) -> None:
        """Take a module from the caller's team (DELETE /v1/modules/{id};
        HTTP only); NotFoundError when the team has no such module."""
        self._http("deleting a module").call(
            "DELETE", "/v1/modules/" + urllib.parse.quote(id_, safe=":"))

    def infer(self, model: str,
              inputs: Union[Sequence[Any], Mapping[str, Any]],
              outputs: Optional[Sequence[str]] = None,
              version: Optional[int] = None) -> Dict[str, Any]:
        """Run a registered module by name or id through the Open
        Inference Protocol (POST /v2/models/{model}[/versions/{version}]
        /infer; HTTP only).  inputs: arrays in argument order, or {name:
        array} by the model's input names (model_metadata lists them;
        "input<i>" always works); tensors travel as binary data.  outputs:
        the names to get back (default: all).  Returns {output name: numpy
        array} in the answer's order."""
        return self._http("/v2 inference").infer(
            _model_path(model, version), inputs, outputs)

    def model_metadata(self, model: str,
                       version: Optional[int] = None) -> Dict[str, Any]:
        """GET /v2/models/{model}[/versions/{version}]: name, versions,
        platform, inputs, outputs."""
        return self._http("/v2 metadata").call(
            "GET", "/v2/models/" + _model_path(model, version), v2=True)

    def models(self) -> List[Dict[str, Any]]:
        """GET /v2/models: the caller's team's models, each {"name",
        "platform", "versions"}."""
        return self._http("/v2 listing").call(
            "GET", "/v2/models", v2=True).get("models", [])

    def repository_index(self, ready: bool = False) -> List[Dict[str, Any]]:
        """POST /v2/repository/index: the model repository's models and
        versions, each {"name", "version", "state", "reason"}."""
        return self._http("/v2 repository").call(
            "POST", "/v2/repository/index", {"ready": ready}, v2=True)

    def load_model(self, name: str) -> None:
        """POST /v2/repository/models/{name}/load (--model-control-mode
        explicit): load it, or load its versions on disk again."""
        self._http("/v2 repository").call(
            "POST", "/v2/repository/models/%s/load"
            % urllib.parse.quote(name, safe=""), {}, idempotent=False, v2=True)

    def unload_model(self, name: str) -> None:
        """POST /v2/repository/models/{name}/unload: executions already
        running on it finish."""
        self._http("/v2 repository").call(
            "POST", "/v2/repository/models/%s/unload"
            % urllib.parse.quote(name, safe=""), {}, idempotent=False, v2=True)

    def ready(self) -> bool:
        """Whether the server takes work (GET /v2/health/ready)."""
        try:
            return bool(self._http("/v2 health").call(
                "GET", "/v2/health/ready", v2=True, retry=False).get("ready"))
        except LimitError:
            return False  # 503 while shutting down

    def start(self, program: str, *arrays: Any, entry: Optional[str] = None,
              timeout_ms: Optional[float] = None):
        """Run program asynchronously (POST /v1/executions, or an
        asynchronous EXECUTE): an Execution (HTTP) or BinaryExecution, with
        the same methods, to feed, drain, poll or cancel while it runs.
        Not retried unless Retry(non_idempotent=True): a second delivery
        would start a second execution."""
        if isinstance(self._conn, _Binary):
            return self._conn.start(program, arrays, entry, timeout_ms)
        body = self._conn.exec_body(program, arrays, entry, timeout_ms)
        doc = self._conn._post("/v1/executions", body, idempotent=False)
        return Execution(self._conn, doc["id"])

    def _http(self, what: str) -> "_Http":
        if not isinstance(self._conn, _Http):
            raise InputError("input", "%s needs an http:// or https:// "
                             "URL, not shlo://" % what)
        return self._conn

    def _module(self, info: Mapping[str, Any],
                program: Optional[str]) -> Module:
        name = info.get("name")
        names = info.get("names") or []  # GET /v1/modules: the team's names
        if name is None and names:
            name = names[-1].get("name")  # the latest registration's
        return Module(self, info["id"], info["entry"], _signature(info),
                      program, name, dict(info))

    def close(self) -> None:
        """Close the connection(s); the binary protocol's cancels the
        executions it started."""
        self._conn.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _model_path(model: str, version: Optional[int]) -> str:
    """{model} or {model}/versions/{version} of a /v2/models URL."""
    path = urllib.parse.quote(model, safe=":/")
    return path if version is None else "%s/versions/%d" % (path, version)


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


# The kind of a /v2 error (its body says only {"error": message}) and of
# an answer without a JSON error, by HTTP status.
_KIND_OF_STATUS = {400: "input", 401: "auth", 403: "auth", 404: "not_found",
                   405: "method", 408: "timeout", 413: "limit",
                   429: "limit", 503: "limit", 504: "timeout"}


def _http_error(status: int, headers: Any, data: bytes) -> ShloError:
    """The ShloError of an HTTP answer with status >= 400: the JSON error
    of part 1, the {"error": message} of /v2, or the status alone."""
    try:
        doc = json.loads(data)
    except ValueError:
        doc = None
    e = doc.get("error") if isinstance(doc, dict) else None
    if isinstance(e, dict):
        err = _make_error(e.get("kind", "runtime"), e.get("message", ""),
                          e.get("line", 0), e.get("column", 0), status)
        err.quota = e.get("quota")
    else:
        msg = e if isinstance(e, str) else "HTTP %d: %r" % (status,
                                                            data[:200])
        err = _make_error(_KIND_OF_STATUS.get(status, "runtime"), msg,
                          status=status)
    if headers is not None:
        err.retry_after = _retry_after(headers.get("Retry-After"))
    return err


def _raise_for(status: int, data: bytes, headers: Any = None) -> Any:
    """The JSON document of an answer; its ShloError when it failed."""
    if status >= 400:
        raise _http_error(status, headers, data)
    try:
        return json.loads(data)
    except ValueError:
        raise ExecutionError("runtime", "HTTP %d: not JSON: %r"
                             % (status, data[:200]), status=status)


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
            return _raise_for(r.status, r.read(), r.headers)
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
                _raise_for(r.status, r.read(), r.headers)
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
    same methods as Execution, as frames on the client's connection
    (PROTOCOL.md part 2, "Streaming executions").  Closing that connection
    cancels the executions it started.

    feed() sends its INFEED frames on a second connection of its own,
    opened at the first feed: while an INFEED waits for room in a full
    queue the server reads nothing more from its connection, so on the
    shared one a SUBSCRIBE sent after it (a feeding thread that ran ahead
    of the reading one) would never be read, and the program, waiting on
    an outfeed nobody drains, would never take the value."""

    def __init__(self, conn, id):
        self._conn, self.id = conn, id
        self.final = None
        self._feed_conn = None
        self._feed_lock = threading.Lock()

    def _feeder(self):
        with self._feed_lock:
            if self._feed_conn is None:
                self._feed_conn = self._conn.sibling()
            return self._feed_conn

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
        self._feeder()._call(T_INFEED, parts)

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
        """Close the feeding connection (the execution goes on)."""
        with self._feed_lock:
            if self._feed_conn is not None:
                self._feed_conn.close()
                self._feed_conn = None


def _outputs_of(doc):
    """An ended execution's state object: its outputs, or the ShloError
    of its failure or cancel."""
    if doc["state"] != "succeeded":
        e = doc.get("error", {})
        raise _make_error(e.get("kind", "runtime"),
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


# Open Inference Protocol datatypes (PROTOCOL.md part 3) of numpy dtypes,
# and back; BF16 travels as its uint16 bit pattern (Raw(a, "bf16")).
_OIP_OF_NUMPY = {np.dtype(np.bool_): "BOOL", np.dtype(np.uint8): "UINT8",
                 np.dtype(np.uint16): "UINT16", np.dtype(np.uint32): "UINT32",
                 np.dtype(np.uint64): "UINT64", np.dtype(np.int8): "INT8",
                 np.dtype(np.int16): "INT16", np.dtype(np.int32): "INT32",
                 np.dtype(np.int64): "INT64", np.dtype(np.float16): "FP16",
                 np.dtype(np.float32): "FP32", np.dtype(np.float64): "FP64"}
_NUMPY_OF_OIP = {v: k for k, v in _OIP_OF_NUMPY.items()}
_NUMPY_OF_OIP["BF16"] = np.dtype(np.uint16)


def _oip_input(a: Any) -> Tuple[str, np.ndarray]:
    """(datatype, contiguous little-endian array) of an input."""
    if isinstance(a, Raw):
        if a.stablehlo != "bf16":
            raise InputError("input", "the Open Inference Protocol has no "
                             "datatype for %s" % a.stablehlo)
        return "BF16", np.ascontiguousarray(
            a.array.astype("<u2", copy=False)).reshape(a.array.shape)
    arr = np.asarray(a)
    dt = _OIP_OF_NUMPY.get(arr.dtype.newbyteorder("="))
    if dt is None:
        raise InputError("input", "numpy dtype %s has no Open Inference "
                         "Protocol datatype" % arr.dtype)
    arr = arr.astype(arr.dtype.newbyteorder("<"), copy=False)
    return dt, np.ascontiguousarray(arr).reshape(arr.shape)


def _oip_output(t: Mapping[str, Any], blob: Optional[bytes]) -> Any:
    """An output of an inference answer as a numpy array (BF16: a
    RawArray of its bit patterns)."""
    dt = _NUMPY_OF_OIP.get(t.get("datatype"))
    if dt is None:
        raise ExecutionError("runtime", "unknown datatype in the answer: %r"
                             % t.get("datatype"))
    shape = tuple(t.get("shape", ()))
    if blob is not None:
        arr = np.frombuffer(blob, dtype=dt.newbyteorder("<")).astype(
            dt, copy=False).reshape(shape)
    else:
        arr = np.array(t.get("data", []), dtype=dt).reshape(shape)
    if t["datatype"] == "BF16":
        arr = arr.view(RawArray)
        arr.stablehlo = "bf16"
    return arr


class _Http:
    """HTTP/1.1 to the server, plain or TLS: one kept connection per
    thread, and the retry policy for refusals for load."""

    def __init__(self, host: str, port: int, token: Optional[str],
                 timeout: float, tls: Optional[ssl.SSLContext] = None,
                 retry: Retry = NO_RETRY) -> None:
        self.host, self.port, self.timeout = host, port, timeout
        self.tls, self.retry = tls, retry
        self.headers = {"Content-Type": "application/json"}
        if token:
            self.headers["Authorization"] = "Bearer " + token
        self.local = threading.local()  # one HTTP connection per thread

    def connection(self) -> http.client.HTTPConnection:
        """A new HTTP connection (a stream holds its own)."""
        if self.tls is not None:
            return http.client.HTTPSConnection(self.host, self.port,
                                               timeout=self.timeout,
                                               context=self.tls)
        return http.client.HTTPConnection(self.host, self.port,
                                          timeout=self.timeout)

    def _send(self, method: str, path: str, body: Optional[bytes],
              headers: Mapping[str, str]) -> Tuple[int, Any, bytes]:
        """One try on this thread's kept connection: (status, headers,
        body).  A transport failure drops the connection and raises
        ShloConnectionError."""
        c = getattr(self.local, "c", None)
        if c is None:
            c = self.local.c = self.connection()
        try:
            c.request(method, path, body, headers)
            r = c.getresponse()
            return r.status, r.headers, r.read()
        except (OSError, http.client.HTTPException) as e:
            self.local.c = None
            c.close()
            if isinstance(e, ssl.SSLError):
                raise ShloConnectionError("connection", "TLS: %s" % e) from e
            raise ShloConnectionError("connection", "%s:%d: %s"
                                      % (self.host, self.port, e)) from e

    def request(self, method: str, path: str, body: Optional[bytes] = None,
                headers: Optional[Mapping[str, str]] = None,
                idempotent: bool = True,
                retry: bool = True) -> Tuple[int, Any, bytes]:
        """Send until it is taken or the retry policy gives up: (status,
        headers, body) of a success; the ShloError of a failure, with
        .attempts."""
        h = dict(self.headers)
        h.update(headers or {})
        policy = self.retry if retry and (idempotent or
                                          self.retry.non_idempotent) \
            else NO_RETRY
        attempt = 1
        while True:
            status, hdrs, data = self._send(method, path, body, h)
            if status < 400:
                return status, hdrs, data
            err = _http_error(status, hdrs, data)
            wait = policy.delay(attempt, err)
            if wait is None:
                err.attempts = attempt
                raise err
            if policy.on_retry:
                policy.on_retry(attempt, wait, err)
            time.sleep(wait)
            attempt += 1

    def call(self, method: str, path: str, doc: Any = None,
             idempotent: bool = True, v2: bool = False,
             retry: bool = True) -> Any:
        """A JSON request (doc None: no body) and its JSON answer.  (v2:
        an Open Inference Protocol route, whose errors have the same
        shape to this client.)  retry False: never sent again (a health
        check answers what is true now)."""
        body = json.dumps(doc).encode() if doc is not None else None
        _, _, data = self.request(method, path, body, idempotent=idempotent,
                                  retry=retry)
        return _raise_for(200, data)

    def _post(self, path: str, body: Any, idempotent: bool = True) -> Any:
        return self.call("POST", path, body, idempotent)

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

    def execute(self, program, module_id, arrays, entry, timeout_ms):
        # Retried by default: an execution changes nothing on the server,
        # and a refused one (429, 503) did not run.
        body = self.exec_body(program, arrays, entry, timeout_ms)
        if program is not None:
            doc = self._post("/execute", body)
        else:
            doc = self._post("/v1/modules/%s/execute" % module_id, body)
        return [self._tensor(t) for t in doc["outputs"]]

    def _tensor(self, t):
        return _json_output(t)

    def register(self, program: str, entry: Optional[str],
                 name: Optional[str] = None,
                 batching: Optional[Mapping[str, Any]] = None
                 ) -> Dict[str, Any]:
        """POST /v1/modules: the info object.  Retried by default: the
        same text registers the same id (and the same batching)."""
        body: Dict[str, Any] = {"program": program}
        if entry:
            body["entry"] = entry
        if name is not None:
            body["name"] = name
        if batching is not None:
            body["batching"] = dict(batching)
        return self._post("/v1/modules", body)

    def execute_model(self, path, arrays, timeout_ms):
        body = self.exec_body(None, arrays, None, timeout_ms)
        doc = self._post("/v1/models/%s/execute" % path, body)
        return [self._tensor(t) for t in doc["outputs"]]

    def compile(self, program, entry):
        doc = self.register(program, entry)
        return doc["id"], doc["entry"], _signature(doc)

    def infer(self, model: str,
              inputs: Union[Sequence[Any], Mapping[str, Any]],
              outputs: Optional[Sequence[str]]) -> Dict[str, Any]:
        """POST /v2/models/{model}/infer with binary tensor data both ways.
        Retried by default, as an execution is."""
        named: Iterable[Tuple[str, Any]] = inputs.items() \
            if isinstance(inputs, Mapping) else \
            (("input%d" % i, a) for i, a in enumerate(inputs))
        heads, blobs = [], []
        for name, a in named:
            dt, arr = _oip_input(a)
            blob = arr.tobytes()
            heads.append({"name": name, "shape": list(arr.shape),
                          "datatype": dt,
                          "parameters": {"binary_data_size": len(blob)}})
            blobs.append(blob)
        req: Dict[str, Any] = {"inputs": heads,
                               "parameters": {"binary_data_output": True}}
        if outputs is not None:
            req["outputs"] = [{"name": n} for n in outputs]
        head = json.dumps(req).encode()
        path = "/v2/models/%s/infer" % model  # _model_path: quoted
        _, hdrs, data = self.request(
            "POST", path, head + b"".join(blobs),
            {"Content-Type": "application/octet-stream",
             "Inference-Header-Content-Length": str(len(head))})
        return self._infer_answer(hdrs, data)

    @staticmethod
    def _infer_answer(hdrs: Any, data: bytes) -> Dict[str, Any]:
        """{name: array} of an inference answer, its binary data after
        the JSON when Inference-Header-Content-Length says so."""
        n = hdrs.get("Inference-Header-Content-Length")
        n = int(n) if n is not None and n.isdigit() else len(data)
        if n > len(data):
            raise ExecutionError("runtime", "Inference-Header-Content-Length "
                                 "%d past the answer's %d bytes"
                                 % (n, len(data)))
        doc = _raise_for(200, data[:n])
        off, out = n, {}
        for t in doc.get("outputs", []):
            size = t.get("parameters", {}).get("binary_data_size")
            blob = None
            if size is not None:
                if off + size > len(data):
                    raise ExecutionError("runtime", "output %s: binary data "
                                         "past the answer's end" % t["name"])
                blob, off = data[off:off + size], off + size
            out[t["name"]] = _oip_output(t, blob)
        return out

    def close(self):
        c = getattr(self.local, "c", None)
        if c:
            c.close()
            self.local.c = None


class _Binary:
    """One TCP connection; a reader thread routes answers to requests."""

    def __init__(self, host, port, token, timeout):
        self._addr = (host, port, token, timeout)
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.wlock = threading.Lock()
        self.plock = threading.Lock()
        self.pending = {}  # id -> [event, (type, payload)]
        self.streams = {}  # SUBSCRIBE id -> queue of (type, payload)
        self.next_id = 1
        self.version = 1
        self.dead = None
        self.siblings = weakref.WeakSet()  # feeding connections (sibling)
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

    def sibling(self):
        """Another connection to the same server, with the same token,
        closed with this one."""
        sib = _Binary(*self._addr)
        with self.plock:
            self.siblings.add(sib)
        return sib

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
        return _make_error(KINDS[kind] if kind < len(KINDS) else "runtime",
                           msg, line, col, status)

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
        with self.plock:
            sibs, self.siblings = list(self.siblings), weakref.WeakSet()
        for sib in sibs:
            sib.close()
        try:
            self._send(T_GOODBYE, 0, [])
        except OSError:
            pass
        self.sock.close()
