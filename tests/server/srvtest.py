# SPDX-License-Identifier: Apache-2.0
"""Helpers for the Python end-to-end tests of shlo-server: start a server
on a free loopback port, talk HTTP over raw sockets or http.client, read
/metrics, stop it.  Each test script imports this module; a failed check
prints FAIL and the script exits 1 at the end."""
import http.client
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time

FAILURES = []


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what, file=sys.stderr, flush=True)
    return cond


def check_clean_stops(stops):
    """Each (exit status, log) of a sanitized server: it stopped with
    status 0 and reported nothing."""
    for rc, log in stops:
        check(rc == 0, f"the sanitized server stops with status 0: {rc}")
        check("ERROR: AddressSanitizer" not in log and
              "ERROR: LeakSanitizer" not in log and
              "runtime error" not in log,
              "no sanitizer report: " + log[-2000:])


def finish(name):
    if FAILURES:
        print(f"{name}: {len(FAILURES)} failure(s)", file=sys.stderr)
        sys.exit(1)
    print(f"{name}: ok")
    sys.exit(0)


def free_ports(n):
    """n distinct loopback ports free now (each held open until all are
    picked: one closed at once could be picked again)."""
    held = []
    for _ in range(n):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        held.append(s)
    ports = [s.getsockname()[1] for s in held]
    for s in held:
        s.close()
    return ports


def free_port():
    return free_ports(1)[0]


def loop_program(n):
    """A program that counts to n in a while loop: its run time grows with
    n (about 20 ms per million steps on the 2026 development machine; a
    faster one may take half that, a sanitized build several times more)
    and its work is unknown to the server before it ran.  A test that acts
    on one while it runs needs n large enough by a wide margin."""
    return f"""func.func @main() -> tensor<i64> {{
  %c0 = stablehlo.constant dense<0> : tensor<i64>
  %c1 = stablehlo.constant dense<1> : tensor<i64>
  %cn = stablehlo.constant dense<{n}> : tensor<i64>
  %r = stablehlo.while(%i = %c0) : tensor<i64>
    cond {{
      %t = stablehlo.compare LT, %i, %cn : (tensor<i64>, tensor<i64>) -> tensor<i1>
      stablehlo.return %t : tensor<i1>
    }} do {{
      %n = stablehlo.add %i, %c1 : tensor<i64>
      stablehlo.return %n : tensor<i64>
    }}
  return %r : tensor<i64>
}}
"""


def chain_program(n, name="main"):
    """@name: n chained adds over tensor<4xf32> (%k = %k-1 + %a, so it
    returns (n + 1) * a): every compile pass walks it op by op."""
    t = "tensor<4xf32>"
    lines = [f"func.func @{name}(%a: {t}) -> {t} {{\n",
             f"  %0 = stablehlo.add %a, %a : {t}\n"]
    lines += [f"  %{k} = stablehlo.add %{k - 1}, %a : {t}\n"
              for k in range(1, n)]
    lines.append(f"  return %{n - 1} : {t}\n}}\n")
    return "".join(lines)


REDUCE_100 = """func.func @main(%a: tensor<100x100xf32>) -> tensor<100xf32> {
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %r = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [1] : (tensor<100x100xf32>, tensor<f32>) -> tensor<100xf32>
  return %r : tensor<100xf32>
}
"""


class Server:
    """A shlo-server on free loopback ports (binary_port: the binary
    protocol's too, in self.bport).  A port is only known free when it is
    picked: a test running beside this one may take it before the server
    binds it, so a start that fails with "cannot listen" is tried again on
    other ports."""
    def __init__(self, binary, *flags, log_path=None, env=None,
                 max_files=None, binary_port=False):
        for attempt in range(5):
            self.port, self.bport = free_ports(2) if binary_port else \
                (free_port(), None)
            self.log_path = log_path or \
                f"/tmp/shlo-pytest-{os.getpid()}-{self.port}.log"
            if self._start(binary, flags, env, max_files):
                return
            if "cannot listen" not in self.log():
                break
            print(f"port {self.port}/{self.bport} was taken before the "
                  f"server bound it: again on others", file=sys.stderr)
        raise SystemExit(f"shlo-server did not start: {self.log()}")

    def _start(self, binary, flags, env, max_files):
        """Start it and wait until it serves: True, or False once it
        ended.  It serves when /healthz answers 200 and its log says it
        listens on its port (another server that took the port would
        answer /healthz too) with no port it could not bind (a server
        whose binary port was taken answers /healthz until it exits)."""
        self.logf = open(self.log_path, "w")
        args = [binary, "--port", str(self.port), "--log", "stderr"]
        if self.bport:
            args += ["--binary-port", str(self.bport)]
        args += list(flags)
        def limit_files():  # max_files: the server's hard RLIMIT_NOFILE
            import resource
            resource.setrlimit(resource.RLIMIT_NOFILE, (max_files, max_files))

        self.proc = subprocess.Popen(args, stdout=self.logf, stderr=self.logf,
                                     env=env,
                                     preexec_fn=limit_files if max_files else None)
        # SHLO_TEST_START_S: more time to start, as under valgrind; 20 s
        # by default, for a sanitized build on a loaded machine (a start
        # that goes well returns as soon as /healthz answers)
        for _ in range(int(50 * float(os.environ.get("SHLO_TEST_START_S", 20)))):
            time.sleep(0.02)
            try:
                st, _, _ = self.request("GET", "/healthz", timeout=2)
                log = self.log()
                if st == 200 and f":{self.port}/ with " in log and \
                        "cannot listen" not in log:
                    return True
            except OSError:
                pass
            if self.proc.poll() is not None:
                break
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self.logf.close()
        return False

    def log(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def request(self, method, path, body=None, headers=None, timeout=10):
        """One request on a new connection: (status, headers dict, body)."""
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            h = dict(headers or {})
            if isinstance(body, (dict, list)):
                body = json.dumps(body)
                h.setdefault("Content-Type", "application/json")
            c.request(method, path, body=body, headers=h)
            r = c.getresponse()
            data = r.read()
            return r.status, {k.lower(): v for k, v in r.getheaders()}, data
        finally:
            c.close()

    def post(self, path, obj, timeout=30):
        st, _, data = self.request("POST", path, obj, timeout=timeout)
        try:
            return st, json.loads(data)
        except ValueError:
            return st, data

    def cpu_s(self):
        """The server's CPU time so far (user + system), seconds."""
        with open(f"/proc/{self.proc.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def metrics(self, headers=None):
        """/metrics as {name: value} (headers: a token, where one is
        needed)."""
        _, _, data = self.request("GET", "/metrics", headers=headers)
        out = {}
        for line in data.decode().splitlines():
            if line.startswith("#") or not line.strip():
                continue
            m = re.match(r"^(\S+) (\S+)$", line)
            if m:
                out[m.group(1)] = float(m.group(2))
        return out

    def stop(self, timeout=30):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                check(False, "server did not stop within %ss" % timeout)
        self.logf.close()
        return self.proc.returncode


def wait_metrics(srv, pred, limit_s, step=0.002, headers=None):
    """Poll /metrics until pred(metrics) holds: (seconds waited, metrics),
    or (None, the last metrics) after limit_s."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit_s:
        m = srv.metrics(headers)
        if pred(m):
            return time.monotonic() - t0, m
        time.sleep(step)
    return None, srv.metrics(headers)


def jobs(m):
    """Jobs at the server in metrics m: running, or waiting for a worker."""
    return m["shlo_executions_running"] + m["shlo_queue_depth"]


def wait_jobs(srv, n, what, limit_s=30):
    """Wait until n jobs are at the server (clients' threads send them in
    their own time): a check named what."""
    dt, m = wait_metrics(srv, lambda m: jobs(m) == n, limit_s, step=0.005)
    return check(dt is not None, f"{what}: {jobs(m)} jobs at the server, "
                 f"not {n}")


def wait_until(cond, limit_s, step=0.01):
    """Poll cond() until it holds: True, or False after limit_s.  For
    what another thread or process does in its own time (a log line, a
    closed connection): how long it takes is not what is tested."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit_s:
        if cond():
            return True
        time.sleep(step)
    return bool(cond())


def ms_until_idle(srv, hang_up, limit_s=10):
    """Call hang_up(), then wait until no job runs: the milliseconds that
    took as the client sees it through /metrics, or -1 past limit_s."""
    t0 = time.monotonic()
    hang_up()
    dt, _ = wait_metrics(srv, lambda m: m["shlo_executions_running"] == 0,
                         limit_s, step=0.001)
    return (time.monotonic() - t0) * 1000 if dt is not None else -1


def raw_connect(port, src="127.0.0.1"):
    s = socket.socket()
    s.bind((src, 0))
    s.connect(("127.0.0.1", port))
    return s


def read_http_answer(s, timeout=5):
    """(status, headers dict, body) of one answer read off socket s, or
    (None, {}, b'') when the connection closed first."""
    s.settimeout(timeout)
    buf = b""
    while b"\r\n\r\n" not in buf:
        try:
            k = s.recv(65536)
        except (ConnectionResetError, socket.timeout):
            k = b""
        if not k:
            return None, {}, buf
        buf += k
    head, rest = buf.split(b"\r\n\r\n", 1)
    lines = head.decode(errors="replace").split("\r\n")
    status = int(lines[0].split()[1])
    hdrs = {}
    for l in lines[1:]:
        k, _, v = l.partition(":")
        hdrs[k.strip().lower()] = v.strip()
    n = int(hdrs.get("content-length", "0"))
    while len(rest) < n:
        try:
            k = s.recv(65536)
        except (ConnectionResetError, socket.timeout):
            break
        if not k:
            break
        rest += k
    return status, hdrs, rest[:n]


def is_json_error(body, kind=None):
    try:
        e = json.loads(body)["error"]
    except (ValueError, KeyError, TypeError):
        return False
    return kind is None or e.get("kind") == kind
