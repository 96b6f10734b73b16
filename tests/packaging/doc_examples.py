#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The examples of README.md and docs/getting-started.md run as written,
from the repository root, against a live shlo-server: every ```sh block
(but the two commands themselves and `pip install`, which install), every
```python block, and the C program (built against this build installed
into a temporary prefix, with pkg-config).  The only edits: the server's
address (the docs say localhost:8080; the test's server has a port of
its own) and build/ (the docs' build folder) for this build's.  Each
must exit 0 and print the answer the docs give.

usage: doc_examples.py SOURCE_DIR BUILD_DIR CMAKE CC
Exits 77 (skipped) without curl, jq or pkg-config."""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

SRC, BUILD, CMAKE, CC = sys.argv[1:5]
PAGES = ["README.md", "docs/getting-started.md"]
# What each page's examples must print, all of it somewhere.
ANSWERS = {
    "README.md": ['[{"dtype":"f32","shape":[2],"data":[42,3]}]',
                  '[25,49,81]', 'array([25., 49., 81.]'],
    "docs/getting-started.md": ['"sha256:', '[3,4]', '[25. 49. 81.]',
                                '42\n'],
}
failures = []


def fail(what):
    failures.append(what)
    print("FAIL: " + what, flush=True)


def blocks(page):
    """(language, text) of each fenced block of a page."""
    text = open(os.path.join(SRC, page), encoding="utf-8").read()
    return re.findall(r"^```(\w*)\n(.*?)^```", text, re.S | re.M)


def start_server(tmp):
    log = os.path.join(tmp, "server.log")
    proc = subprocess.Popen([os.path.join(BUILD, "server", "shlo-server"),
                             "--port", "0", "--log", "stderr"],
                            stdout=subprocess.DEVNULL,
                            stderr=open(log, "w"))
    for _ in range(500):
        m = re.search(r"listening on http://127\.0\.0\.1:(\d+)/",
                      open(log).read())
        if m:
            return proc, int(m.group(1))
        if proc.poll() is not None:
            break
        time.sleep(0.02)
    sys.exit("shlo-server did not start: " + open(log).read())


def as_here(code, port):
    """The example with this test's server and build folder."""
    code = re.sub(r"(localhost|127\.0\.0\.1):8080", r"\g<1>:%d" % port, code)
    return re.sub(r"(?<![\w/.-])build/", BUILD.rstrip("/") + "/", code)


def run(what, argv, env=None):
    r = subprocess.run(argv, cwd=SRC, capture_output=True, text=True,
                       env=env, timeout=120)
    if r.returncode != 0:
        fail("%s exited %d:\n%s%s" % (what, r.returncode, r.stdout[-2000:],
                                      r.stderr[-2000:]))
    return r.stdout


def c_example(code, port, tmp):
    """Build the C example against this build installed in a prefix."""
    prefix = os.path.join(tmp, "prefix")
    r = subprocess.run([CMAKE, "--install", BUILD, "--prefix", prefix],
                       capture_output=True, text=True)
    if r.returncode != 0:
        fail("cmake --install: " + r.stderr[-1000:])
        return ""
    pcdir = os.path.dirname(subprocess.run(
        ["find", prefix, "-name", "libshlo-client.pc"], capture_output=True,
        text=True).stdout.split("\n")[0])
    env = dict(os.environ, PKG_CONFIG_PATH=pcdir)
    flags = subprocess.run(["pkg-config", "--cflags", "--libs",
                            "libshlo-client"], env=env, capture_output=True,
                           text=True).stdout.split()
    src = os.path.join(tmp, "app.c")
    open(src, "w").write(as_here(code, port))
    exe = os.path.join(tmp, "app")
    run("cc app.c", [CC, "-std=c11", "-Wall", "-Werror", src, "-o", exe] +
        flags)
    env["LD_LIBRARY_PATH"] = os.path.dirname(pcdir)
    return run("the C example", [exe], env)


def main():
    # The tools the examples use, which deploy/run.sh installs.
    missing = [t for t in ("curl", "jq", "pkg-config") if not shutil.which(t)]
    if missing:
        print("doc_examples: skipped: no %s (deploy/bootstrap.sh installs "
              "them)" % ", ".join(missing))
        sys.exit(77)
    tmp = tempfile.mkdtemp(prefix="shlo-docex-")
    proc, port = start_server(tmp)
    # Debian's python3 has numpy (python3-numpy) where another first on
    # PATH may not.
    py = next((p for p in ("/usr/bin/python3", shutil.which("python3"))
               if p and subprocess.run([p, "-c", "import numpy"],
                                       capture_output=True).returncode == 0),
              None)
    numpy = py is not None
    try:
        for page in PAGES:
            out = ""
            for n, (lang, code) in enumerate(blocks(page), 1):
                what = "%s, block %d (%s)" % (page, n, lang or "text")
                if lang == "sh":
                    if re.search(r"^(bash deploy/|pip install)", code, re.M):
                        continue  # they install: the suite's own commands
                    out += run(what, ["bash", "-euo", "pipefail", "-c",
                                      as_here(code, port)])
                elif lang == "python":
                    if not numpy:
                        print("skipped (no numpy): " + what)
                        ANSWERS[page] = [a for a in ANSWERS[page]
                                         if "." not in a]
                        continue
                    env = dict(os.environ, PYTHONPATH=os.path.join(
                        SRC, "client", "python"))
                    out += run(what, [py, "-c", as_here(code, port)],
                               env)
                elif lang == "c":
                    out += c_example(code, port, tmp)
                else:
                    continue
                print("ran " + what)
            for a in ANSWERS[page]:
                if a not in out:
                    fail("%s: the examples' output lacks %r:\n%s"
                         % (page, a, out[-3000:]))
    finally:
        proc.terminate()
        proc.wait(30)
        shutil.rmtree(tmp)
    if failures:
        sys.exit("doc_examples: %d failure(s)" % len(failures))
    print("doc_examples: every example of %s ran as written"
          % " and ".join(PAGES))


main()
