# SPDX-License-Identifier: Apache-2.0
"""Issue #30, item 1: every file the server reads or opens at start -- the
config file, the tokens file (also named by SHLO_TOKENS, as in the
container), tls-cert, tls-key, the store directory and its records, the
log and audit-log files -- missing, empty, unreadable or malformed.

At start each one must stop the server with exit status 2 (never a
signal, never 0 or 1) and one line on stderr naming the file.  Tests run
as root, where chmod 000 hides nothing, so "unreadable" is a directory in
the file's place (it opens, then reading fails with EISDIR) and
"malformed" includes a file of bytes that are not text.  Store records are
the exception by design (README, "--store"): a damaged record is skipped
with a log line naming it while the others load, and the server starts.

Then, with a server running, the same files broken before a SIGHUP: the
server logs why, keeps serving with what was in force (the old tokens
still accepted, the old limits still applied, the old log still written),
and takes a good file again at the next SIGHUP.

Item 8's byte-order mark too: a program starting with a UTF-8 BOM runs,
through /execute and through `shlo run` (with --cli).

With --sanitized (the ASan server) every start and stop must also be free
of sanitizer reports: the double free of a missing tokens file is caught.

usage: robust_ops.py SHLO_SERVER [--sanitized] [--cli SHLO]"""
import os
import re
import shutil
import signal
import ssl
import subprocess
import sys
import tempfile
import http.client

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from srvtest import Server, check, finish, wait_until  # noqa: E402

SERVER = sys.argv[1]
SANITIZED = "--sanitized" in sys.argv
CLI = sys.argv[sys.argv.index("--cli") + 1] if "--cli" in sys.argv else None
TMP = tempfile.mkdtemp(prefix="shlo-ops-")
GARBAGE = bytes(range(256)) * 4  # NULs, control bytes, invalid UTF-8
ADMIN, OTHER = "ops-admin-0c1d", "ops-other-77aa"
CONST = ("func.func @main() -> tensor<i32> {\n  %c = stablehlo.constant "
         "dense<7> : tensor<i32>\n  return %c : tensor<i32>\n}\n")


def path(name):
    return os.path.join(TMP, name)


def put(p, data):
    """Replace whatever is at p (file or directory) with data: bytes, a
    str, None (nothing there) or "DIR" (an empty directory)."""
    if os.path.isdir(p) and not os.path.islink(p):
        shutil.rmtree(p)
    elif os.path.lexists(p):
        os.unlink(p)
    if data is None:
        return
    if data == "DIR":
        os.mkdir(p)
        return
    with open(p + ".new", "wb") as f:
        f.write(data.encode() if isinstance(data, str) else data)
    os.rename(p + ".new", p)


def no_report(out, what):
    if SANITIZED:
        check("Sanitizer" not in out and "runtime error" not in out,
              f"{what}: no sanitizer report:\n{out[-3000:]}")


def refused(what, args, named, env=None):
    """The server started with args exits 2 with a line naming `named`."""
    e = dict(os.environ)
    e.update(env or {})
    try:
        p = subprocess.run([SERVER, "--port", "0", "--log", "stderr"] + args,
                           capture_output=True, timeout=60, env=e)
    except subprocess.TimeoutExpired:
        check(False, f"{what}: the server started (still running after 60 s)")
        return
    out = p.stderr.decode(errors="replace") + p.stdout.decode(errors="replace")
    check(p.returncode == 2,
          f"{what}: exit status 2, not {p.returncode}"
          f"{' (a signal)' if p.returncode < 0 else ''}:\n{out[-1500:]}")
    lines = [l for l in out.splitlines()
             if l.startswith("shlo-server") and named in l]
    check(lines, f"{what}: a line naming {named}:\n{out[-1500:]}")
    no_report(out, what)


def broken_versions(good_first_line=""):
    """(label, content): each way a file can be broken."""
    return [("missing", None), ("empty", b""), ("unreadable (a directory)",
                                                "DIR"),
            ("invalid bytes", GARBAGE)]


# ---- at start: each file, each failure ----

def start_config():
    conf = path("shlo.conf")
    for label, data in broken_versions():
        put(conf, data)
        refused(f"config {label}", ["--config", conf], conf)
        refused(f"SHLO_CONFIG {label}", [], conf, env={"SHLO_CONFIG": conf})
    for label, text in [("unknown option", "no-such-option 1\n"),
                        ("bad value", "port eighty\n"),
                        ("out of range", "threads 100000\n"),
                        ("a NUL byte", "# ok\n\0threads 2\n")]:
        put(conf, text)
        refused(f"config {label}", ["--config", conf], conf)
    put(conf, None)


def start_tokens():
    tok = path("tokens.txt")
    malformed = [("no token on the line", "alice\n"),
                 ("a bad scope", f"alice {ADMIN} scopes=everything\n"),
                 ("quotas only", "@alpha running=2\n# no token\n"),
                 ("one token twice", f"a {ADMIN}\nb {ADMIN}\n"),
                 ("a line of 5000 bytes", "a " + "x" * 5000 + "\n")]
    for label, data in broken_versions() + malformed:
        put(tok, data)
        refused(f"tokens {label}", ["--tokens", tok], tok)
        # the container: SHLO_TOKENS names a secret that was not mounted
        refused(f"SHLO_TOKENS {label}", [], tok, env={"SHLO_TOKENS": tok})
    put(tok, None)


def make_cert():
    """A self-signed certificate and key by openssl: (cert, key), or None."""
    if not shutil.which("openssl"):
        return None
    cert, key = path("good.pem"), path("good.key")
    r = subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048",
                        "-nodes", "-days", "2", "-subj", "/CN=localhost",
                        "-keyout", key, "-out", cert], capture_output=True)
    return (cert, key) if r.returncode == 0 else None


PEM_JUNK = ("-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n"
            "-----END CERTIFICATE-----\n")


def start_tls(good):
    cert, key = path("c.pem"), path("c.key")
    good_cert = open(good[0], "rb").read() if good else PEM_JUNK
    good_key = open(good[1], "rb").read() if good else PEM_JUNK
    for which, mine, other in (("tls-cert", cert, key), ("tls-key", key, cert)):
        put(other, good_key if other == key else good_cert)
        for label, data in broken_versions() + [("malformed PEM", PEM_JUNK)]:
            if label == "malformed PEM" and not good:
                continue  # both junk: the pair is refused, named below
            put(mine, data)
            refused(f"{which} {label}",
                    ["--tls-cert", cert, "--tls-key", key], mine)
    put(cert, PEM_JUNK)
    put(key, PEM_JUNK)
    refused("tls-cert and tls-key both malformed PEM",
            ["--tls-cert", cert, "--tls-key", key], cert)
    put(cert, None)
    put(key, None)


def start_endless():
    """A file with no end and no line break (/dev/zero) costs a bounded
    read, then the same refusal."""
    for args in (["--config"], ["--tokens"], ["--tls-key", path("k.pem"),
                                              "--tls-cert"]):
        if "--tls-key" in args:
            put(path("k.pem"), PEM_JUNK)
        refused(f"{args[-1]} /dev/zero", args + ["/dev/zero"], "/dev/zero")
    put(path("k.pem"), None)


def start_store():
    store = path("store")
    put(store, b"a file, not a directory\n")
    refused("store a file", ["--store", store], store)
    put(store, None)
    missing_parent = path("no-such-dir/store")
    refused("store under a missing directory", ["--store", missing_parent],
            missing_parent)


def start_logs():
    for opt in ("log", "audit-log"):
        p = path(opt + ".out")
        put(p, "DIR")
        refused(f"{opt} a directory", [f"--{opt}", p], p)
        put(p, None)
        q = path(f"no-such-dir/{opt}.out")
        refused(f"{opt} under a missing directory", [f"--{opt}", q], q)


def start_store_records():
    """Damaged records are skipped, each named in the log; the server
    starts and a good record still loads."""
    store = path("records")
    put(store, "DIR")
    a = Server(SERVER, "--store", store)
    st, body = a.post("/v1/modules", {"program": CONST})
    check(st == 200, f"register: {st} {body}")
    mid = body["id"] if isinstance(body, dict) else "sha256:" + "0" * 64
    check(a.stop() == 0, "the store server stops with 0")
    bad = {"e" * 64: b"", "d" * 64: GARBAGE,
           "c" * 64: b"shlo-module 1\nid nonsense\n\n"}
    for hexid, data in bad.items():
        put(os.path.join(store, hexid + ".module"), data)
    put(os.path.join(store, "b" * 64 + ".module"), "DIR")
    os.mkfifo(os.path.join(store, "a" * 64 + ".module"))  # no writer, ever
    b = Server(SERVER, "--store", store)
    log = b.log()
    for hexid in list(bad) + ["b" * 64, "a" * 64]:
        check(f"event=store_skipped file={hexid}.module" in log,
              f"a skipped record is named in the log: {hexid[:8]}...:\n"
              f"{log[-2000:]}")
    st, body = b.post(f"/v1/modules/{mid}/execute", {"inputs": []})
    check(st == 200 and body["outputs"][0]["data"] == [7],
          f"the good record still loads: {st} {body}")
    check(b.stop() == 0, "the server with damaged records stops with 0")
    no_report(b.log(), "damaged records")


# ---- on SIGHUP: the same files broken while serving ----

def reloads(metrics_text):
    """SIGHUPs handled so far, from /metrics' text (the counters count each
    at the end of its reload, on the loop thread)."""
    n = 0
    for line in metrics_text.splitlines():
        if line.startswith("shlo_reloads_total{"):
            n += int(float(line.split()[-1]))
    return n


def hup(srv, get_metrics):
    """Send SIGHUP and wait until the server has handled it."""
    before = reloads(get_metrics())
    srv.send_signal(signal.SIGHUP)
    check(wait_until(lambda: reloads(get_metrics()) > before, 30),
          "the SIGHUP was handled")


def status(srv, token, body=None):
    h = {"Authorization": "Bearer " + token} if token else {}
    if body is None:
        return srv.request("GET", "/v1/modules", None, h)[0]
    return srv.request("POST", "/execute", body, h)[0]


def reload_config_and_tokens():
    conf, tok = path("r.conf"), path("r.tokens")
    logf, audit = path("r.log"), path("r.audit")
    good_conf = f"max-body-bytes 1000\naudit-log {audit}\n"
    good_tok = f"root {ADMIN} scopes=admin\n@root running=3\n"
    put(conf, good_conf)
    put(tok, good_tok)
    srv = Server(SERVER, "--config", conf, "--tokens", tok, "--log", logf)
    pad = "// " + "x" * 1500 + "\n"
    check(status(srv, ADMIN) == 200, "before: the token is accepted")
    check(status(srv, ADMIN, pad + CONST) == 413, "before: max-body-bytes 1000")
    auth = {"Authorization": "Bearer " + ADMIN}

    def metrics():
        return srv.request("GET", "/metrics", None, auth)[2].decode()
    cases = broken_versions() + [("no token", "# none\n"),
                                 ("malformed", "alice\n")]
    for label, data in cases:
        put(tok, data)
        mark = len(srv.log())
        hup(srv.proc, metrics)
        new = srv.log()[mark:]
        check(f"tokens file {tok}" in new,
              f"reload, tokens {label}: a line names the file:\n{new}")
        check("kept the 1 token(s) in force" in new,
              f"reload, tokens {label}: the tokens are kept:\n{new}")
        check(status(srv, ADMIN) == 200,
              f"reload, tokens {label}: the old token is still accepted")
        check(status(srv, None) == 401,
              f"reload, tokens {label}: no token is still refused")
    # a good file again: a new token works, the old one is gone
    put(tok, f"root2 {OTHER} scopes=admin\n")
    srv.proc.send_signal(signal.SIGHUP)
    check(wait_until(lambda: status(srv, OTHER) == 200, 30),
          "a good tokens file is taken at the next SIGHUP")
    check(status(srv, ADMIN) == 401, "and the old token is revoked")
    put(tok, good_tok)
    srv.proc.send_signal(signal.SIGHUP)
    check(wait_until(lambda: status(srv, ADMIN) == 200, 30),
          "the first tokens file again")
    for label, data in broken_versions() + [("malformed",
                                             "max-body-bytes lots\n")]:
        put(conf, data)
        mark = len(srv.log())
        hup(srv.proc, metrics)
        new = srv.log()[mark:]
        check(f"config file {conf}" in new,
              f"reload, config {label}: a line names the file:\n{new}")
        check("kept the one in force" in new,
              f"reload, config {label}: the configuration is kept:\n{new}")
        check(status(srv, ADMIN, pad + CONST) == 413,
              f"reload, config {label}: max-body-bytes is still 1000")
        check(status(srv, ADMIN, CONST) == 200,
              f"reload, config {label}: a small execution still runs")
    put(conf, good_conf)
    # the log and the audit log: a directory in their place at reopening
    for p, what in ((logf, "log"), (audit, "audit log")):
        os.rename(p, p + ".rotated")
        put(p, "DIR")
        mark = len(srv.log())
        hup(srv.proc, metrics)
        new = srv.log()[mark:]
        check(p in new and "Is a directory" in new,
              f"reload, {what} a directory: a line names it:\n{new}")
        size = os.path.getsize(p + ".rotated")
        check(status(srv, ADMIN, CONST) == 200,
              f"reload, {what} a directory: executions still run")
        check(wait_until(lambda: os.path.getsize(p + ".rotated") > size, 10),
              f"the {what} in force is still written")
        put(p, None)
    check(srv.stop() == 0, "the reloaded server stops with 0")
    no_report(srv.log(), "reloads")


def reload_tls_and_store(good):
    """TLS files and the store are read at start only (restart options):
    broken while serving, a SIGHUP changes nothing and HTTPS still
    answers with the certificate in force."""
    if not good:
        print("robust_ops: no openssl: the HTTPS reload case is skipped")
        return
    cert, key = path("t.pem"), path("t.key")
    shutil.copy(good[0], cert)
    shutil.copy(good[1], key)
    tok = path("t.tokens")
    put(tok, f"root {ADMIN} scopes=admin\n")
    store = path("t.store")
    # Server's readiness probe speaks plain HTTP: start it with a log we
    # read ourselves
    logp = path("t.log")
    # --port 0: the server picks a free port and its log names it
    proc = subprocess.Popen([SERVER, "--port", "0", "--log", "stderr",
                             "--tls-cert", cert, "--tls-key", key,
                             "--tokens", tok, "--store", store],
                            stdout=open(logp, "w"), stderr=subprocess.STDOUT)

    def listening():
        m = re.search(r"listening on https://127\.0\.0\.1:(\d+)/",
                      open(logp, errors="replace").read())
        return int(m.group(1)) if m else None
    check(wait_until(listening, 60), "the HTTPS server listens")
    port = listening() or 1
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE

    def get(p="/healthz", method="GET", body=None):
        c = http.client.HTTPSConnection("127.0.0.1", port, timeout=10,
                                        context=ctx)
        try:
            c.request(method, p, body=body,
                      headers={"Authorization": "Bearer " + ADMIN})
            r = c.getresponse()
            return r.status, r.read()
        except OSError:
            return None, b""
        finally:
            c.close()

    check(wait_until(lambda: get()[0] == 200, 60),
          "the HTTPS server serves")
    st, body = get("/v1/modules", "POST", CONST)
    check(st == 200, f"register over HTTPS: {st} {body[:200]!r}")
    for label, data in broken_versions():
        put(cert, data)
        put(key, data)
        for rec in os.listdir(store):
            put(os.path.join(store, rec), data if data is not None else b"")
        hup(proc, lambda: get("/metrics")[1].decode(errors="replace"))
        check(get()[0] == 200, f"reload, TLS files {label}: HTTPS answers")
        st, body = get("/execute", "POST", CONST)
        check(st == 200, f"reload, TLS and store {label}: executes: {st}")
    proc.send_signal(signal.SIGTERM)
    try:
        rc = proc.wait(30)
    except subprocess.TimeoutExpired:
        proc.kill()
        rc = proc.wait()
    log = open(logp, errors="replace").read()
    check(rc == 0, f"the HTTPS server stops with 0, not {rc}:\n{log[-1500:]}")
    no_report(log, "HTTPS reloads")


# ---- item 8: a byte-order mark ----

def byte_order_mark():
    bom = "\ufeff" + CONST
    srv = Server(SERVER)
    st, _, body = srv.request("POST", "/execute", bom.encode())
    check(st == 200 and b'"data":[7]' in body,
          f"/execute of a program with a BOM: {st} {body[:300]!r}")
    st, _, body = srv.request("POST", "/v1/modules", bom.encode())
    check(st == 200, f"registering it: {st} {body[:300]!r}")
    if CLI:
        prog = path("bom.mlir")
        put(prog, bom)
        for extra in ([], ["--server", f"http://127.0.0.1:{srv.port}"]):
            r = subprocess.run([CLI, "run", prog] + extra,
                               capture_output=True, timeout=60)
            out = r.stdout.decode(errors="replace")
            check(r.returncode == 0 and "7" in out,
                  f"shlo run {' '.join(extra)} of a program with a BOM: "
                  f"{r.returncode} {out} {r.stderr[-500:]!r}")
    check(srv.stop() == 0, "the BOM server stops with 0")
    no_report(srv.log(), "BOM")


try:
    good = make_cert()
    start_config()
    start_tokens()
    start_tls(good)
    start_endless()
    start_store()
    start_logs()
    start_store_records()
    reload_config_and_tokens()
    reload_tls_and_store(good)
    byte_order_mark()
finally:
    shutil.rmtree(TMP, ignore_errors=True)
finish("robust_ops")
