#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Issue #20: the web console in a real browser.  Starts shlo-server, drives
headless Chromium (python3-selenium + chromium-driver) through every page:
the overview's live figures, a program run in the playground (its rendered
values checked against sums computed here), a .npy input, a parse error's
marker on its line, a module registered (pasted and uploaded) and deleted,
a program full of markup rendered as text, the executions page's probe,
and a token-protected server's prompt.  Issue #35: after a workload the
overview's history charts (axes, past data from the server's ring), the
modules and recent errors (with request ids) tables, a non-admin token's
view of its own team only, and an execution's trace drawn as a timeline
with its step names on the playground and executions pages.  Every request must stay on the
server's origin and the browser log must hold no console error.  A
screenshot of each page goes to the artifact folder (argv[2]).

usage: console_browser.py SHLO_SERVER ARTIFACT_DIR [CONFORMANCE_DIR]
(with the corpus, a bytecode artifact from it is uploaded too)
Exit 77 (skipped) only when no chromium is installed."""
import hashlib
import json
import os
import re
import shutil
import struct
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from srvtest import Server, check, finish  # noqa: E402

SERVER, SHOTS = sys.argv[1], sys.argv[2]
ARTIFACT = os.path.join(sys.argv[3] if len(sys.argv) > 3 else "",
                        "vhlo", "vhlo_emit_version_api.1_1_0.mlir.bc")
PAGES = ["overview", "modules", "playground", "executions"]

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
if not CHROMIUM:
    print("SKIPPED: no chromium installed (deploy/bootstrap.sh installs it)")
    sys.exit(77)
try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
except ImportError:
    raise SystemExit("FAIL: chromium is here but python3-selenium is not "
                     "(deploy/bootstrap.sh installs it)")
DRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
if not os.path.exists(DRIVER):
    raise SystemExit("FAIL: chromium is here but chromium-driver is not")

# A program whose text, function name and error carry markup: it must show
# as these characters, never as elements.
HOSTILE_NAME = '<script>window.__pwned=1</script>"><img src=x onerror=window.__pwned=2>'
HOSTILE_FUNC = ('func.func @"%s"(%%a: tensor<2xf32>) -> tensor<2xf32> {\n'
                '  return %%a : tensor<2xf32>\n}\n') % HOSTILE_NAME.replace('"', '\\"')
# An op named with markup: the verifier's message (line 2) quotes it.
HOSTILE_OP = '"><img src=x onerror=window.__pwned=3> <script>window.__pwned=4</script>'
HOSTILE_PARSE = ('func.func @main() -> tensor<f32> {\n'
                 '  %%x = "%s"() : () -> tensor<f32>\n'
                 '  return %%x : tensor<f32>\n}\n') % HOSTILE_OP.replace('"', '\\"')
# A parse error on line 3 (the stray token after the op).
BAD_LINE3 = ('func.func @main(%a: tensor<2x2xf32>, %b: tensor<2x2xf32>) -> tensor<2x2xf32> {\n'
             '  %sum = stablehlo.add %a, %b : tensor<2x2xf32>\n'
             '  %oops = stablehlo.frobnicate ) %sum\n'
             '  return %sum : tensor<2x2xf32>\n}\n')
SCALE = ('func.func @main(%a: tensor<3xf32>) -> tensor<3xf32> {\n'
         '  %two = stablehlo.constant dense<2.0> : tensor<3xf32>\n'
         '  %r = stablehlo.multiply %a, %two : tensor<3xf32>\n'
         '  return %r : tensor<3xf32>\n}\n')


def npy_bytes(values, shape):
    """A version-1 .npy file of little-endian f32 values, written here
    byte by byte (no numpy needed)."""
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % (
        "".join("%d, " % d for d in shape) if len(shape) == 1
        else ", ".join(str(d) for d in shape))
    total = 10 + len(header) + 1
    header += " " * ((64 - total % 64) % 64) + "\n"
    return (b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) +
            header.encode("latin1") + struct.pack("<%df" % len(values), *values))


def browser(tmp):
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu",
              "--disable-dev-shm-usage", "--window-size=1400,1000",
              "--no-first-run", "--disable-background-networking",
              "--disable-component-update", "--disable-sync",
              "--disable-default-apps", "--user-data-dir=" + tmp):
        opts.add_argument(a)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL",
                                              "performance": "ALL"})
    return webdriver.Chrome(service=Service(DRIVER), options=opts)


def wait(d, what, cond, timeout=20):
    try:
        return WebDriverWait(d, timeout, poll_frequency=0.1).until(lambda _: cond())
    except Exception as e:  # TimeoutException, or the condition raised
        check(False, "%s (waited %ss: %s)" % (what, timeout, type(e).__name__))
        return None


def text(d, css):
    els = d.find_elements(By.CSS_SELECTOR, css)
    return els[0].text if els else ""


def set_value(d, css, value):
    """Type into a textarea the way a user's paste does (an input event)."""
    d.execute_script(
        "const t = document.querySelector(arguments[0]); t.value = arguments[1];"
        "t.dispatchEvent(new Event('input'));", css, value)


class Session:
    """One browser on one server: its log and network events are checked
    as it goes."""

    def __init__(self, srv, tag):
        self.srv, self.tag = srv, tag
        self.origin = "http://127.0.0.1:%d" % srv.port
        self.tmp = tempfile.mkdtemp(prefix="shlo-console-")
        self.d = browser(self.tmp)
        self.urls = set()
        self.allowed_errors = []  # (url part, status) the page is expected to meet

    def open(self, page):
        self.d.get(self.origin + "/console/%s.html" % page)
        wait(self.d, "%s: page %s loaded" % (self.tag, page),
             lambda: self.d.execute_script("return document.readyState") == "complete")

    def shot(self, name):
        os.makedirs(SHOTS, exist_ok=True)
        path = os.path.join(SHOTS, "console-%s.png" % name)
        check(self.d.save_screenshot(path), "%s: screenshot %s" % (self.tag, path))
        return path

    def expect_http_error(self, path_part, status):
        self.allowed_errors.append((path_part, status))

    def drain_logs(self):
        """Every request so far was to the server's origin; the browser log
        holds no console or script error (the only errors allowed are the
        HTTP answers this test provoked: 401 before the token, 404 from
        the executions probe, 4xx from a bad program)."""
        for e in self.d.get_log("performance"):
            msg = json.loads(e["message"])["message"]
            if msg.get("method") == "Network.requestWillBeSent":
                self.urls.add(msg["params"]["request"]["url"])
        for e in self.d.get_log("browser"):
            if e["level"] not in ("SEVERE", "WARNING"):
                continue
            m = re.search(r"(https?://\S+) - Failed to load resource: the server "
                          r"responded with a status of (\d+)", e["message"])
            ok = (e["source"] == "network" and m and
                  any(p in m.group(1) and int(m.group(2)) == s
                      for p, s in self.allowed_errors))
            check(ok, "%s: browser log: %s %s: %s" % (self.tag, e["level"],
                                                     e["source"], e["message"]))

    def check_origin(self):
        self.drain_logs()
        check(len(self.urls) > 0, "%s: the network log saw requests" % self.tag)
        # chrome:// and the like are the browser's own files (its new-tab
        # page); anything that goes over a network must be the server
        for u in sorted(self.urls):
            if re.match(r"^(https?|wss?|ftp)://", u) or u.startswith("//"):
                check(u.startswith(self.origin + "/"),
                      "%s: request left the server: %s" % (self.tag, u))
        # the pages' own record agrees
        for page in PAGES:
            self.open(page)
            names = self.d.execute_script(
                "return performance.getEntriesByType('navigation')"
                ".concat(performance.getEntriesByType('resource'))"
                ".map(e => e.name)")
            for n in names:
                check(n.startswith(self.origin + "/") or n.startswith("data:"),
                      "%s: %s loaded %s" % (self.tag, page, n))
        self.drain_logs()

    def close(self):
        self.d.quit()
        shutil.rmtree(self.tmp, ignore_errors=True)


def not_pwned(s, where):
    v = s.d.execute_script("return window.__pwned === undefined && "
                           "!document.querySelector('img[src=\"x\"]')")
    check(v, "%s: markup in data ran or became an element (%s)" % (s.tag, where))


def test_overview(s):
    s.open("overview")
    wait(s.d, "overview: health shows healthy", lambda: text(s.d, "#v-health") == "healthy")
    check("ready" in text(s.d, "#v-ready"), "overview: readiness shown: %r" % text(s.d, "#v-ready"))
    # two polls give a rate
    wait(s.d, "overview: requests/s computed",
         lambda: re.match(r"^\d+\.\d$", text(s.d, "#v-rps")))
    check(re.match(r"^\d+ / 2$", text(s.d, "#v-workers")),
          "overview: workers busy 'N / 2' for --threads 2: %r" % text(s.d, "#v-workers"))
    check("hit ratio" in text(s.d, "#v-hits"), "overview: cache hit ratio shown")
    s.shot("overview")


def ms_of(label):
    """'52 µs' / '1.23 ms' / '2.00 s' as milliseconds (None if not one)."""
    m = re.search(r"([\d.]+) (µs|ms|s)\b", label)
    if not m:
        return None
    return float(m.group(1)) * {"µs": 1e-3, "ms": 1, "s": 1e3}[m.group(2)]


def test_overview_live(s):
    """Executions while the overview polls: rates and percentiles appear,
    the percentiles within the slowest round trip seen here."""
    stop, worst = threading.Event(), [0.0]

    def load():
        while not stop.is_set():
            t0 = time.monotonic()
            st, _ = s.srv.post("/execute", {"program": SCALE, "inputs": [
                {"dtype": "f32", "shape": [3], "data": [1, 2, 3]}]})
            worst[0] = max(worst[0], (time.monotonic() - t0) * 1000)
            check(st == 200, "overview load: execute answered %d" % st)
            time.sleep(0.02)
    th = threading.Thread(target=load)
    th.start()
    try:
        s.open("overview")
        wait(s.d, "overview: latency percentiles under load",
             lambda: text(s.d, "#v-p50").startswith("p50"))
        wait(s.d, "overview: a request rate under load",
             lambda: float(text(s.d, "#v-rps") or 0) > 1)
        p50, pct = text(s.d, "#v-p50"), text(s.d, "#v-pct")
        # each chart's first series colour (overview.js) is on its canvas;
        # a line needs two snapshots with data, which a slow (sanitizer)
        # build may not have yet when the figures first appear.  inked()
        # reads a copy: polling the page's own canvas with getImageData
        # makes Chromium warn (willReadFrequently) once a loaded machine
        # needs more than a few polls, and a warning fails drain_logs
        for c, rgb in (("chart-rps", (0x24, 0x57, 0xc5)),
                       ("chart-latency", (0x1b, 0x7f, 0x3b))):
            wait(s.d, "overview: %s has a coloured line" % c,
                 lambda: inked(s, c, rgb) > 10)
        s.shot("overview-live")
    finally:
        stop.set()
        th.join()
    p99 = ms_of(pct.split("p99")[-1]) if "p99" in pct else None
    check(ms_of(p50) is not None and 0 < ms_of(p50) <= worst[0],
          "overview: p50 %r within (0, %.2f ms]" % (p50, worst[0]))
    check(p99 is not None and ms_of(p50) <= p99 <= worst[0],
          "overview: p50 <= p99 <= worst round trip: %r, %.2f ms" % (pct, worst[0]))


def inked(s, canvas, rgb, alpha=200):
    """Pixels of canvas in colour rgb (opaque ones: a chart's lines, not
    its faint legend swatches)."""
    # read from a copy: reading the page's canvas again and again makes
    # Chromium log a warning (willReadFrequently)
    return s.d.execute_script(
        "const [c, r, g, b, a] = arguments;"
        "const src = document.getElementById(c);"
        "const cv = document.createElement('canvas');"
        "cv.width = src.width; cv.height = src.height;"
        "const x = cv.getContext('2d', {willReadFrequently: true});"
        "x.drawImage(src, 0, 0);"
        "const d = x.getImageData(0, 0, cv.width, cv.height).data;"
        "let n = 0; for (let i = 0; i < d.length; i += 4)"
        "  if (d[i + 3] > a && Math.abs(d[i] - r) < 30 &&"
        "      Math.abs(d[i + 1] - g) < 30 && Math.abs(d[i + 2] - b) < 30) n++;"
        "return n;", canvas, *rgb, alpha)


def test_history(s):
    """Executions, then the overview opened after them: the history charts
    have axes and show that past; the recent errors name their request
    ids; the modules table has the module run."""
    for _ in range(5):
        st, _ = s.srv.post("/execute", {"program": SCALE, "inputs": [
            {"dtype": "f32", "shape": [3], "data": [1, 2, 3]}]})
        check(st == 200, "history load: execute answered %d" % st)
    st, _, _ = s.srv.request("POST", "/execute", {"program": "garbage",
                                                  "inputs": []},
                             headers={"X-Request-Id": "req-console-err-1"})
    check(st == 400, "history load: a bad program answers 400: %d" % st)
    s.expect_http_error("/execute", 400)
    time.sleep(1.3)  # the second's sample closes in the ring
    s.open("overview")
    wait(s.d, "history: the server's history shown",
         lambda: text(s.d, "#history-note").startswith("The server"))
    # lines (opaque #2457c5) from the samples of before the page opened,
    # and the axes (#9aa6b5) with their labels
    wait(s.d, "history: the requests chart has past data",
         lambda: inked(s, "hist-requests", (0x24, 0x57, 0xc5)) > 10)
    check(inked(s, "hist-requests", (0x9a, 0xa6, 0xb5)) > 100,
          "history: the requests chart has axes")
    check(s.d.execute_script(
        "return document.getElementById('hist-requests').clientHeight") >= 100,
          "history: the chart is drawn at its size")
    wait(s.d, "history: the recent errors name the request id",
         lambda: "req-console-err-1" in text(s.d, "#errors-body"))
    wait(s.d, "history: the modules table lists the module run",
         lambda: len(s.d.find_elements(By.CSS_SELECTOR,
                                       "#modules-stats-body tr")) >= 2)
    rows = s.d.find_elements(By.CSS_SELECTOR, "#modules-stats-body tr")
    check(any(int(r.find_elements(By.TAG_NAME, "td")[1].text) >= 5
              for r in rows if "other" not in r.text),
          "history: a module with the 5 requests: %s" % [r.text for r in rows])
    s.shot("overview-history")


def test_trace_timeline(s):
    """A traced run in the playground draws its timeline with the step
    names; the executions page draws the same trace from its id."""
    s.open("playground")
    from selenium.webdriver.support.ui import Select
    Select(s.d.find_element(By.ID, "example")).select_by_index(0)
    check(s.d.find_element(By.ID, "trace").is_selected(),
          "timeline: the playground traces by default")
    run_playground(s)
    wait(s.d, "timeline: the playground draws the trace",
         lambda: s.d.find_elements(By.CSS_SELECTOR, "#timeline .tl-step"))
    steps = [e.text for e in s.d.find_elements(By.CSS_SELECTOR, "#timeline .tl-step")]
    check(any("stablehlo.add" in t for t in steps),
          "timeline: a step span named stablehlo.add: %s" % steps)
    stages = [e.text for e in s.d.find_elements(By.CSS_SELECTOR, "#timeline .tl-server")]
    check(any("execute" in t for t in stages),
          "timeline: the execute stage drawn: %s" % stages)
    trace_id = text(s.d, "#timeline-title a")
    check(re.match(r"^[0-9a-f]{32}$", trace_id), "timeline: the trace id: %r" % trace_id)
    s.shot("playground-trace")
    s.d.get(s.origin + "/console/executions.html#trace=" + trace_id)
    wait(s.d, "timeline: the executions page draws the trace",
         lambda: any("stablehlo.add" in e.text for e in
                     s.d.find_elements(By.CSS_SELECTOR, "#timeline .tl-step")))
    check("spans over" in text(s.d, "#timeline-summary"),
          "timeline: the summary names the spans and time")
    s.shot("executions-trace")


def test_team_view(srv):
    """A token without admin sees its own team's history and errors, not
    the server's nor another team's."""
    for who, rid in (("secret-token-b", "req-team-b-err"),
                     ("secret-token-a", "req-team-a-err")):
        h = {"Authorization": "Bearer " + who}
        for _ in range(2):
            st, _, _ = srv.request("POST", "/execute", {"program": SCALE, "inputs": [
                {"dtype": "f32", "shape": [3], "data": [1, 2, 3]}]}, headers=h)
            check(st == 200, "team view load: %d" % st)
        h["X-Request-Id"] = rid
        st, _, _ = srv.request("POST", "/execute", {"program": "garbage", "inputs": []},
                               headers=h)
        check(st == 400, "team view load: a bad program: %d" % st)
    time.sleep(1.3)
    s = Session(srv, "team token")
    try:
        s.expect_http_error("/metrics", 401)
        s.expect_http_error("/v1/console/history", 401)
        s.expect_http_error("/metrics", 403)
        s.open("overview")
        wait(s.d, "team: the prompt appears",
             lambda: s.d.find_elements(By.CSS_SELECTOR, "dialog#token-dialog[open]"))
        s.d.find_element(By.ID, "token-input").send_keys("secret-token-b")
        s.d.find_element(By.ID, "token-submit").click()
        wait(s.d, "team: its own history shown",
             lambda: text(s.d, "#history-note").startswith("Team team-b"))
        wait(s.d, "team: its team's row",
             lambda: s.d.find_elements(By.CSS_SELECTOR, '#teams-body tr[data-team="team-b"]'))
        teams = [e.get_attribute("data-team") for e in
                 s.d.find_elements(By.CSS_SELECTOR, "#teams-body tr")]
        check(teams == ["team-b"], "team: only its own team: %s" % teams)
        row = s.d.find_element(By.CSS_SELECTOR, '#teams-body tr[data-team="team-b"]')
        cells = [c.text for c in row.find_elements(By.TAG_NAME, "td")]
        check(int(cells[1]) >= 3 and int(cells[2]) >= 1,
              "team: its requests and errors counted: %s" % cells)
        wait(s.d, "team: its error with its request id",
             lambda: "req-team-b-err" in text(s.d, "#errors-body"))
        check("req-team-a-err" not in text(s.d, "#errors-body"),
              "team: another team's error is not shown")
        check(not s.d.find_element(By.ID, "hist-requests").is_displayed(),
              "team: the server-wide charts are not shown")
        wait(s.d, "team: its chart has data",
             lambda: inked(s, "hist-team", (0x24, 0x57, 0xc5)) > 10)
        s.shot("overview-team")
        s.drain_logs()
    finally:
        s.close()


def run_playground(s):
    s.d.find_element(By.ID, "run").click()
    return wait(s.d, "playground: the run ended",
                lambda: text(s.d, "#run-status").startswith(("Done", "Failed")))


def output_values(s, k=0):
    tables = s.d.find_elements(By.CSS_SELECTOR, "#outputs table.tensor")
    if len(tables) <= k:
        return []
    return [float(td.text) for td in tables[k].find_elements(By.TAG_NAME, "td")]


def test_playground(s):
    s.open("playground")
    wait(s.d, "playground: example loaded",
         lambda: "stablehlo.add" in s.d.find_element(By.ID, "program").get_attribute("value"))
    lines = s.d.find_element(By.ID, "program").get_attribute("value").split("\n")
    check([g.text for g in s.d.find_elements(By.CSS_SELECTOR, "#gutter div")] ==
          [str(i + 1) for i in range(len(lines))],
          "playground: the gutter numbers the example's %d lines" % len(lines))
    run_playground(s)
    a, b = [1, 2, 3, 4], [10, 20, 30, 40]
    got = output_values(s)
    check(got == [x + y for x, y in zip(a, b)], "playground: add renders %s" % got)
    check(len(s.d.find_elements(By.CSS_SELECTOR, "#outputs canvas.heatmap")) == 1,
          "playground: a 2-D output gets a heatmap")
    for k in ("compile", "execute", "queue", "round"):
        check(s.d.find_elements(By.CSS_SELECTOR, '#timing tr[data-timing="%s"]' % k),
              "playground: timing row %s" % k)
    s.shot("playground-add")

    # the 16x16 example: no inputs, a heatmap of i*j
    from selenium.webdriver.support.ui import Select
    Select(s.d.find_element(By.ID, "example")).select_by_index(2)
    run_playground(s)
    got = output_values(s)
    check(got == [float(i * j) for i in range(16) for j in range(16)],
          "playground: the 16x16 example renders i*j (%d values)" % len(got))
    check(len(s.d.find_elements(By.CSS_SELECTOR, "#outputs canvas.heatmap")) == 1,
          "playground: the 16x16 output gets a heatmap")
    s.shot("playground")
    Select(s.d.find_element(By.ID, "example")).select_by_index(0)

    # an .npy input in place of the first JSON tensor
    path = os.path.join(s.tmp, "a.npy")
    with open(path, "wb") as f:
        f.write(npy_bytes([0.5, -1.0, 2.25, 100.0], (2, 2)))
    s.d.find_element(By.CSS_SELECTOR, "#inputs .input-row input[type=file]").send_keys(path)
    wait(s.d, "playground: .npy read", lambda: "f32[2×2]" in text(s.d, "#inputs .input-row .note"))
    run_playground(s)
    got = output_values(s)
    check(got == [0.5 + 10, -1.0 + 20, 2.25 + 30, 100.0 + 40],
          "playground: .npy input + JSON input renders %s" % got)

    # a parse error: the marker sits on line 3
    set_value(s.d, "#program", BAD_LINE3)
    s.expect_http_error("/execute", 400)
    run_playground(s)
    marker = wait(s.d, "playground: an error marker appears",
                  lambda: s.d.find_elements(By.ID, "error-marker"))
    if marker:
        m = marker[0]
        check(m.get_attribute("data-line") == "3",
              "playground: marker on line 3, not %s" % m.get_attribute("data-line"))
        msg = m.find_element(By.CSS_SELECTOR, ".message").text
        check(msg and msg in text(s.d, "#error-box"),
              "playground: marker message %r is the server's" % msg)
        check(m.is_displayed(), "playground: the marker is visible")
        gut = s.d.find_elements(By.CSS_SELECTOR, "#gutter div.error")
        check([g.text for g in gut] == ["3"], "playground: gutter marks line 3")
        check("line 3" in text(s.d, "#error-box"), "playground: error box names line 3")
    s.shot("playground-error")

    # markup in a program and in its error message stays text
    set_value(s.d, "#program", HOSTILE_PARSE)
    run_playground(s)
    s.expect_http_error("/execute", 422)
    wait(s.d, "playground: the hostile program's error shows as text",
         lambda: HOSTILE_OP in text(s.d, "#error-box"))
    m = s.d.find_elements(By.CSS_SELECTOR, "#error-marker")
    check(m and m[0].get_attribute("data-line") == "2" and
          HOSTILE_OP in m[0].find_element(By.CSS_SELECTOR, ".message").get_attribute("textContent"),
          "playground: the hostile message is beside line 2, as text")
    not_pwned(s, "playground error")
    check(s.d.find_element(By.ID, "program").get_attribute("value") == HOSTILE_PARSE,
          "playground: the program text is kept as typed")
    s.shot("playground-escaping")


def module_ids(s):
    return s.d.execute_script(
        "return [...document.querySelectorAll('#modules-body tr[data-id]')]"
        ".map(r => r.dataset.id)")


def test_modules(s):
    s.open("modules")
    # pasted: the hostile function name must render as text
    set_value(s.d, "#module-text", HOSTILE_FUNC)
    s.d.find_element(By.ID, "module-register").click()
    want = "sha256:" + hashlib.sha256(HOSTILE_FUNC.encode()).hexdigest()
    wait(s.d, "modules: pasted program registered",
         lambda: want in text(s.d, "#module-result"))
    wait(s.d, "modules: listed", lambda: want in module_ids(s))
    row = s.d.find_elements(By.CSS_SELECTOR, '#modules-body tr[data-id="%s"]' % want)
    if check(row, "modules: row of %s" % want):
        check(HOSTILE_NAME in row[0].text, "modules: function name shown as text: %r" % row[0].text)
        check("tensor<2xf32>" in row[0].text, "modules: signature shown")
    not_pwned(s, "module list")
    # uploaded file
    path = os.path.join(s.tmp, "scale.mlir")
    with open(path, "w") as f:
        f.write(SCALE)
    set_value(s.d, "#module-text", "")
    s.d.find_element(By.ID, "module-file").send_keys(path)
    s.d.find_element(By.ID, "module-register").click()
    up = "sha256:" + hashlib.sha256(SCALE.encode()).hexdigest()
    wait(s.d, "modules: uploaded file registered", lambda: up in module_ids(s))
    check(module_ids(s)[:1] == [up], "modules: most recently used first")
    set_value(s.d, "#module-text", "")
    # a bytecode artifact, sent as its bytes: its id is their SHA-256
    if os.path.exists(ARTIFACT):
        with open(ARTIFACT, "rb") as f:
            art = "sha256:" + hashlib.sha256(f.read()).hexdigest()
        s.d.find_element(By.ID, "module-file").send_keys(os.path.abspath(ARTIFACT))
        s.d.find_element(By.ID, "module-register").click()
        wait(s.d, "modules: artifact registered", lambda: art in module_ids(s))
        row = s.d.find_elements(By.CSS_SELECTOR, '#modules-body tr[data-id="%s"]' % art)
        check(row and "artifact, StableHLO 1.1.0" in row[0].text,
              "modules: the artifact's row names its version")
    else:
        print("note: no corpus artifact at %s; bytecode upload not tried" % ARTIFACT)
    s.shot("modules")
    # delete: two clicks
    btn = s.d.find_element(By.CSS_SELECTOR, '#modules-body tr[data-id="%s"] button[data-action=delete]' % want)
    btn.click()
    check(btn.text == "Confirm delete", "modules: delete asks for a second click")
    btn.click()
    wait(s.d, "modules: deleted row gone", lambda: want not in module_ids(s))
    st, _, _ = s.srv.request("GET", "/v1/modules/" + want)
    check(st == 404, "modules: the server forgot the deleted module (GET %d)" % st)
    st, _, _ = s.srv.request("GET", "/v1/modules/" + up)
    check(st == 200, "modules: the other module stays (GET %d)" % st)


def test_executions(s):
    st, _, _ = s.srv.request("GET", "/v1/executions")
    available = st != 404
    if not available:
        s.expect_http_error("/v1/executions", 404)
    s.open("executions")
    wait(s.d, "executions: probe answered",
         lambda: s.d.find_element(By.ID, "exec-status").get_attribute("data-available"))
    flag = s.d.find_element(By.ID, "exec-status").get_attribute("data-available")
    check(flag == ("yes" if available else "no"),
          "executions: page says available=%s, server's GET said %d" % (flag, st))
    if not available:
        check("not available" in text(s.d, "#exec-status"), "executions: says not available")
    s.shot("executions")


def test_headers(srv):
    st, h, body = srv.request("GET", "/console/overview.html")
    check(st == 200 and h.get("content-type", "").startswith("text/html"), "GET overview: %d" % st)
    csp = h.get("content-security-policy", "")
    check("default-src 'self'" in csp and "unsafe-inline" not in csp, "CSP: %r" % csp)
    check(h.get("x-content-type-options") == "nosniff", "nosniff")
    etag = h.get("etag", "")
    check(re.match(r'^"[0-9a-f]{32}"$', etag), "ETag: %r" % etag)
    st, _, b2 = srv.request("GET", "/console/overview.html", headers={"If-None-Match": etag})
    check(st == 304 and not b2, "If-None-Match -> 304: %d" % st)
    st, h, b1 = srv.request("HEAD", "/console/overview.html")
    check(st == 200 and not b1 and h.get("content-length") == str(len(body)),
          "HEAD: %d, length %s of %d" % (st, h.get("content-length"), len(body)))
    st, h, _ = srv.request("GET", "/console/common.js")
    check(st == 200 and h.get("content-type", "").startswith("text/javascript"), "GET common.js")
    st, h, _ = srv.request("GET", "/console/console.css")
    check(st == 200 and h.get("content-type", "").startswith("text/css"), "GET console.css")
    st, _, b3 = srv.request("GET", "/console/")
    check(st == 200 and b3 == body, "/console/ is the overview")
    st, h, _ = srv.request("POST", "/console/overview.html", body="x")
    check(st == 405 and h.get("allow") == "GET, HEAD", "POST to a page: %d" % st)
    st, _, _ = srv.request("GET", "/console/nothing.js")
    check(st == 404, "unknown console file: %d" % st)
    st, _, _ = srv.request("GET", "/consolex")
    check(st == 404, "/consolex is no console path: %d" % st)
    # no asset names any URL off the server, and no inline script or style
    for page in PAGES:
        _, _, html = srv.request("GET", "/console/%s.html" % page)
        html = html.decode()
        check(not re.search(r"<script>|<style|style=|\bon\w+=", html),
              "%s.html: inline script or style" % page)
        for ref in re.findall(r'(?:src|href)="([^"]+)"', html):
            check(ref.startswith("/console/") or ref == "data:,",
                  "%s.html refers to %s" % (page, ref))
            if ref.startswith("/console/"):
                _, _, asset = srv.request("GET", ref)
                check(not re.search(rb"https?://|//[a-z0-9.-]+\.[a-z]{2,}/|@import", asset),
                      "%s names an outside URL" % ref)


def stop(srv):
    """Stop a server: status 0, and no sanitizer report in its log (the
    suite also runs against an ASan+UBSan build)."""
    rc = srv.stop()
    log = srv.log()
    check(rc == 0 and "Sanitizer" not in log and "runtime error" not in log,
          "server exit status %s, log:\n%s" % (rc, log[-3000:]))


def test_token_server(tmpdir):
    tokens = os.path.join(tmpdir, "tokens")
    with open(tokens, "w") as f:
        # admin: the overview reads /metrics, which only admin tokens may
        f.write("team-a secret-token-a scopes=execute,register,admin\n"
                "team-b secret-token-b\n")
    srv = Server(SERVER, "--threads", "2", "--tokens", tokens)
    s = Session(srv, "token server")
    try:
        if srv.request("GET", "/v1/executions")[0] in (401, 404):
            s.expect_http_error("/v1/executions", 404)
        s.expect_http_error("/metrics", 401)
        s.expect_http_error("/v1/modules", 401)
        s.expect_http_error("/v1/console/history", 401)
        s.open("overview")
        wait(s.d, "token: the prompt appears",
             lambda: s.d.find_elements(By.CSS_SELECTOR, "dialog#token-dialog[open]"))
        s.shot("token-prompt")
        s.d.find_element(By.ID, "token-input").send_keys("wrong-token")
        s.d.find_element(By.ID, "token-submit").click()
        wait(s.d, "token: a refused token asks again",
             lambda: "refused" in text(s.d, "#token-reason"))
        s.d.find_element(By.ID, "token-input").send_keys("secret-token-a")
        s.d.find_element(By.ID, "token-submit").click()
        wait(s.d, "token: metrics shown after the token",
             lambda: text(s.d, "#overview-note").startswith("Live"))
        check(s.d.execute_script("return sessionStorage.getItem('shlo-console-token')")
              == "secret-token-a", "token: kept in sessionStorage")
        # the next page uses it without asking
        s.open("modules")
        wait(s.d, "token: modules listed with the kept token",
             lambda: "No modules yet" in text(s.d, "#modules-body"))
        check(not s.d.find_elements(By.CSS_SELECTOR, "dialog#token-dialog[open]"),
              "token: asked only once")
        s.shot("token-modules")
        # a state change without the header is refused (no cookie, no GET)
        st, _, _ = srv.request("POST", "/v1/modules", body=SCALE)
        check(st == 401, "token: POST without bearer refused: %d" % st)
        s.check_origin()
    finally:
        s.close()
    try:
        test_team_view(srv)
    finally:
        stop(srv)


def main():
    srv = Server(SERVER, "--threads", "2")
    try:
        test_headers(srv)
        s = Session(srv, "open server")
        try:
            test_overview(s)
            test_playground(s)
            test_modules(s)
            test_executions(s)
            test_trace_timeline(s)
            test_history(s)
            test_overview_live(s)
            s.check_origin()
        finally:
            s.close()
    finally:
        stop(srv)
    off = Server(SERVER, "--console", "0")
    try:
        st, _, _ = off.request("GET", "/console/overview.html")
        check(st == 404, "--console 0: the pages answer 404, got %d" % st)
    finally:
        stop(off)
    with tempfile.TemporaryDirectory() as tmp:
        test_token_server(tmp)
    finish("console_browser")


if __name__ == "__main__":
    main()
