# SPDX-License-Identifier: Apache-2.0
"""The Python client as a user installs it (tests/packaging/python.sh
runs this with the interpreter of a venv into which it pip-installed
./client/python): against real servers,

- retries: a 429 from a team's rate quota is retried after the server's
  Retry-After and the call succeeds; a refusal asking a longer wait than
  Retry.max_delay is given up at once; a quota that stays full is given
  up after Retry.attempts tries, each wait Retry-After long; a
  non-idempotent call (starting an execution) is not retried unless
  asked;
- modules: compile with a name, list, look up, /v2 infer by that name,
  delete, and the typed exceptions (ParseError, NotFoundError);
- https: a server with a self-signed certificate, trusted through
  ca_file, refused without it (skipped without openssl).

usage: py_client.py SHLO_SERVER EXPECTED_MODULE_DIR"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(__file__))
try:
    import numpy as np
except ImportError:
    print("py_client: numpy not found; skipped")
    sys.exit(77)
import shlo_client as sc
from srvtest import Server, check, finish, loop_program

BIN, WANT_DIR = sys.argv[1], os.path.realpath(sys.argv[2])
TMP = tempfile.mkdtemp(prefix="shlo-pyclient-")
HELLO = open(os.path.join(os.path.dirname(__file__), "..", "..", "examples",
                          "hello.mlir")).read()
X, Y = np.float32([1, 2, 3]), np.float32([4, 5, 6])
# A batch of rows (issue #34's dynamic batching): a dynamic leading dimension.
ROWS = """func.func @main(%x: tensor<?x2xf32>) -> tensor<?x2xf32> {
  %r = stablehlo.add %x, %x : tensor<?x2xf32>
  return %r : tensor<?x2xf32>
}
"""
# A JAX export's tensor names (jax.arg_info, jax.result_info), issue #34.
NAMED = """func.func @main(%a: tensor<3xf32> {{jax.arg_info = "x"}}, %b: tensor<3xf32> {{jax.arg_info = "y"}}) -> (tensor<3xf32> {{jax.result_info = "d"}}) {{
  %r = stablehlo.{op} %a, %b : tensor<3xf32>
  return %r : tensor<3xf32>
}}
"""

check(os.path.realpath(sc.__file__).startswith(WANT_DIR),
      f"shlo_client comes from the installed package in {WANT_DIR}, "
      f"not {sc.__file__}")


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def hello_ok(out, what):
    """hello.mlir's answer to X, Y: (x + y)^2 and [x; y] transposed."""
    check(len(out) == 2 and list(out[0]) == [25.0, 49.0, 81.0] and
          out[1].tolist() == [[1, 4], [2, 5], [3, 6]], f"{what}: {out}")


# ---- retries against a team's quotas ----
tokens = os.path.join(TMP, "tokens")
write(tokens, "rl tok-rl team=rl\nru tok-ru team=ru\nroot tok-root "
      "scopes=admin\n@rl rate=1 burst=1\n@ru running=1\n")
srv = Server(BIN, "--tokens", tokens, "--threads", "3",
             "--shutdown-grace-ms", "0")
url = f"http://127.0.0.1:{srv.port}"


def recorder():
    seen = []
    return seen, lambda attempt, delay, err: seen.append(
        (attempt, delay, err.status, err.quota))


# A refusal is retried after its Retry-After, and the call then succeeds.
# The burst is one request: of a few calls sent at once, one is refused
# (each call first spends what the bucket refilled).
seen, hook = recorder()
c = sc.Client(url, token="tok-rl",
              retry=sc.Retry(attempts=3, max_delay=5, on_retry=hook))
for _ in range(5):
    t0 = time.monotonic()
    mods = c.modules()
    waited = time.monotonic() - t0
    if seen:
        break
check(isinstance(mods, list), f"rate: the retried call succeeds: {mods}")
check(len(seen) == 1 and seen[0][0] == 1 and seen[0][2] == 429 and
      seen[0][3] == "rate" and seen[0][1] >= 1,
      f"rate: one retry of the 429, after Retry-After (>= 1 s): {seen}")
check(not seen or waited >= seen[0][1],
      f"rate: the client waited Retry-After ({seen}) before the retry: "
      f"{waited:.2f} s")

# Retry-After (1 s) past max_delay (0.5 s): given up at the first refusal.
seen, hook = recorder()
c = sc.Client(url, token="tok-rl",
              retry=sc.Retry(attempts=5, max_delay=0.5, on_retry=hook))
err = None
for _ in range(5):
    try:
        c.modules()
    except sc.LimitError as e:
        err = e
        break
check(err is not None and err.status == 429 and err.quota == "rate" and
      err.retry_after is not None and err.retry_after >= 1 and
      err.attempts == 1 and not seen,
      f"max_delay: a 429 asking a longer wait is raised at once: "
      f"{err!r} {getattr(err, 'attempts', None)} {seen}")

# Non-idempotent: POST /v1/executions is not retried by default, even
# with a wait the policy allows.
seen, hook = recorder()
c = sc.Client(url, token="tok-rl",
              retry=sc.Retry(attempts=5, max_delay=5, on_retry=hook))
err = None
for _ in range(5):
    try:
        c.start(HELLO, X, Y).result()
    except sc.LimitError as e:
        err = e
        break
check(err is not None and err.status == 429 and err.attempts == 1 and
      not seen, f"start() is not retried: {err!r} {seen}")

# A quota that stays full: team ru may run one job; while a long one runs
# every try is refused, and the client gives up after `attempts`.
long_done = {}
def run_long():
    try:
        sc.Client(url, token="tok-ru", retry=None).execute(
            loop_program(1_000_000_000))
    except sc.ShloError as e:  # the server is stopped under it
        long_done["err"] = e
bg = threading.Thread(target=run_long)
bg.start()
in_flight = False
for _ in range(1000):
    st, _, m = srv.request("GET", "/metrics",
                           headers={"Authorization": "Bearer tok-root"})
    if re.search(rb'shlo_team_in_flight\{team="ru"\} 1\b', m):
        in_flight = True
        break
    time.sleep(0.01)
check(in_flight, "running: the long job is in flight")
seen, hook = recorder()
c = sc.Client(url, token="tok-ru",
              retry=sc.Retry(attempts=2, max_delay=5, on_retry=hook))
t0 = time.monotonic()
err = None
try:
    c.execute(HELLO, X, Y)
except sc.LimitError as e:
    err = e
waited = time.monotonic() - t0
check(err is not None and err.status == 429 and err.quota == "running" and
      err.attempts == 2, f"attempts: given up after 2 tries: {err!r} "
      f"{getattr(err, 'attempts', None)}")
check(len(seen) == 1 and seen[0][1] >= 1 and waited >= seen[0][1],
      f"attempts: one wait of Retry-After between the tries: {seen}, "
      f"{waited:.2f} s in all")
srv.stop()
bg.join(60)

# ---- modules, /v2, typed errors ----
srv = Server(BIN)
url = f"http://127.0.0.1:{srv.port}"
with sc.Client(url) as c:
    m = c.compile(HELLO, name="hello")
    check(m.name == "hello" and m.id.startswith("sha256:") and
          m.entry == "main", f"compile with a name: {m!r}")
    hello_ok(m.execute(X, Y), "the named module runs")
    listed = {x.id: x for x in c.modules()}
    check(m.id in listed and listed[m.id].name == "hello",
          f"modules() gives each module its name: {listed}")
    check(m.id in listed and listed[m.id].entry == "main" and
          "tensor<3xf32>" in listed[m.id].signature,
          f"modules() lists it with its signature: {listed}")
    check(c.module(m.id).id == m.id, "module(id) finds it")
    meta = c.model_metadata("hello")
    check([i["datatype"] for i in meta["inputs"]] == ["FP32", "FP32"],
          f"/v2 metadata: {meta}")
    out = c.infer("hello", [X, Y])
    check(list(out) == ["output0", "output1"], f"/v2 infer: outputs {out}")
    hello_ok(list(out.values()), "/v2 infer by name")
    out = c.infer(m.id, {"input1": Y, "input0": X}, outputs=["output1"])
    check(list(out) == ["output1"] and
          out["output1"].tolist() == [[1, 4], [2, 5], [3, 6]],
          f"/v2 infer by id, named inputs, one output: {out}")
    check(c.ready(), "/v2/health/ready")
    # issue #34: the names a JAX export gives its tensors, two versions
    named = c.compile(NAMED.format(op="add"), name="named")
    c.compile(NAMED.format(op="subtract"), name="named")
    check(c.model_metadata("named", version=1)["inputs"][1]["name"] == "y",
          "model_metadata(version=1) names the tensors")
    check([(x["name"], x["versions"]) for x in c.models()] ==
          [("hello", ["1"]), ("named", ["1", "2"])],
          f"models() lists names and versions: {c.models()}")
    out = named.execute(inputs={"y": X, "x": Y})  # the latest: subtract
    check(list(out) == ["d"] and out["d"].tolist() == [3, 3, 3],
          f"execute(inputs=...) by the program's names: {out}")
    out = c.infer("named", {"y": X, "x": Y}, version=1)
    check(out["d"].tolist() == [5, 7, 9], f"infer(version=1): {out}")
    # issue #34: /v1/models/NAME[/versions/V]/execute, batching at
    # registration
    got = c.execute_model("named", X, Y)  # the latest: subtract
    check(len(got) == 1 and got[0].tolist() == [-3, -3, -3],
          f"execute_model by name: {got}")
    got = c.execute_model("named", X, Y, version=1)
    check(got[0].tolist() == [5, 7, 9], f"execute_model(version=1): {got}")
    rows = c.register(ROWS, name="rows", batching={
        "max_batch_size": 8, "max_queue_delay_us": 1000,
        "preferred_batch_sizes": [4, 2]})
    check(rows.name == "rows" and rows.info.get("batching") == {
        "max_batch_size": 8, "max_queue_delay_us": 1000,
        "preferred_batch_sizes": [2, 4], "max_queue_size": 0},
          f"register(batching=...) answers the batching in force: "
          f"{rows.info}")
    A = np.float32([[1, 2], [3, 4]])
    got = c.execute_model("rows", A)
    check(got[0].tolist() == [[2, 4], [6, 8]], f"a batching model runs: {got}")
    off = c.compile(ROWS, batching={"max_batch_size": 0})
    check("batching" not in off.info, f"batching turned off: {off.info}")
    try:
        c.register(HELLO, batching={"max_batch_size": 4})
        check(False, "a static program was given batching")
    except sc.InputError as e:
        check("leading dimension" in str(e), f"batching refused: {e!r}")
    try:
        c.execute_model("no-such-model", X)
        check(False, "execute_model of an unknown model answered")
    except sc.NotFoundError as e:
        check(e.status == 404, f"execute_model unknown: {e!r}")
    try:
        c.infer("no-such-model", [X, Y])
        check(False, "/v2 infer of an unknown model answered")
    except sc.NotFoundError as e:
        check(e.status == 404, f"/v2 unknown model: NotFoundError {e!r}")
    c.delete_module(m.id)
    check(m.id not in [x.id for x in c.modules()], "deleted: not listed")
    try:
        c.module(m.id)
        check(False, "a deleted module is found")
    except sc.NotFoundError as e:
        check(e.kind == "not_found" and e.status == 404,
              f"deleted: NotFoundError {e!r}")
    try:
        c.execute("func.func @main( {")
        check(False, "a program that does not parse ran")
    except sc.ParseError as e:
        check(isinstance(e, sc.ShloError) and e.kind == "parse" and
              e.line == 1, f"ParseError with its place: {e!r} {e.line}")
srv.stop()

# ---- https with a CA file ----
if not shutil.which("openssl"):
    print("py_client: no openssl: the https case is skipped")
    shutil.rmtree(TMP)
    finish("py_client")
cert, key = os.path.join(TMP, "cert.pem"), os.path.join(TMP, "key.pem")
r = subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048",
                    "-nodes", "-days", "2", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
                    "-keyout", key, "-out", cert], capture_output=True)
check(r.returncode == 0, f"openssl made a certificate: {r.stderr[-500:]}")
log = os.path.join(TMP, "tls.log")
with open(log, "w") as logf:
    proc = subprocess.Popen([BIN, "--port", "0", "--log", "stderr",
                             "--tls-cert", cert, "--tls-key", key],
                            stdout=logf, stderr=logf)
port = None
for _ in range(1000):
    found = re.search(r"listening on https://127\.0\.0\.1:(\d+)/",
                      open(log).read())
    if found or proc.poll() is not None:
        port = found and int(found.group(1))
        break
    time.sleep(0.02)
check(port, f"the TLS server started: {open(log).read()[-1000:]}")
if port:
    with sc.Client(f"https://127.0.0.1:{port}", ca_file=cert) as c:
        hello_ok(c.execute(HELLO, X, Y), "https with ca_file")
    try:
        sc.Client(f"https://127.0.0.1:{port}").execute(HELLO, X, Y)
        check(False, "https without the CA trusted a self-signed server")
    except sc.ShloConnectionError as e:
        check("certificate" in str(e).lower(),
              f"https without the CA: refused for the certificate: {e}")
proc.terminate()
proc.wait(30)
shutil.rmtree(TMP)
finish("py_client")
