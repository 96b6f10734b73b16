#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Mutation check: does the test suite notice small deliberate bugs?

Each mutant in mutants.txt (see the comment at its top) replaces one exact
snippet of one source file.  This script copies the working tree to a
scratch folder (never the real tree), configures one scratch build there,
and for each mutant alone: applies it, rebuilds only the targets its tests
need (incrementally: the scratch build is kept across mutants and runs),
runs those tests through ctest, and puts the file back.  A mutant is

  KILLED          some named test failed (or timed out);
  SURVIVED        every named test passed: a test is missing;
  NOT COMPILED    the mutated tree did not build (not counted as killed:
                  fix the mutant, it tests nothing);
  NOT TESTED      every named test was SKIPPED (e.g. no mpirun here).

Before the mutants, the named tests must pass on the unmutated copy (else
every mutant would look killed).  Exit status: 0 when every mutant was
killed, 1 when one survived or did not compile, 2 on a usage or setup
error.

  tests/mutation/run.py [--scratch DIR] [--only SUBSTR] [--list] [-j N]
"""
import argparse
import hashlib
import os
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
FIELDS = ("file", "find", "repl", "tests", "build")


def parse_mutants(path):
    """The blocks of mutants.txt, in order.  A block starts with
    `@ description`; its fields are `key: value` lines; a value that goes on
    is continued by lines that start with `| ` (a newline between them)."""
    mutants, cur, key = [], None, None
    with open(path, encoding="utf-8") as f:
        for n, raw in enumerate(f, 1):
            line = raw.rstrip("\n")
            if line.startswith("#") or not line.strip():
                continue
            if line.startswith("@ "):
                cur = {"desc": line[2:].strip(), "line": n}
                mutants.append(cur)
                key = None
            elif line.startswith("| ") or line == "|":
                if cur is None or key not in ("find", "repl"):
                    sys.exit(f"{path}:{n}: a continuation outside find/repl")
                cur[key] += "\n" + line[2:]
            else:
                k, sep, v = line.partition(":")
                v = v[1:] if v.startswith(" ") else v
                if cur is None or not sep or k not in FIELDS:
                    sys.exit(f"{path}:{n}: expected `@ desc` or one of "
                             f"{', '.join(FIELDS)}")
                cur[k], key = v, k
    for m in mutants:
        missing = [k for k in FIELDS if k not in m and k != "repl"]
        if missing:
            sys.exit(f"{path}:{m['line']}: mutant lacks {', '.join(missing)}")
        m.setdefault("repl", "")
        if m["find"] == m["repl"]:
            sys.exit(f"{path}:{m['line']}: find and repl are the same")
    return mutants


def tree_files():
    """Tracked and untracked-but-not-ignored files of the working tree."""
    out = subprocess.run(
        ["git", "-C", ROOT, "ls-files", "-z", "-co", "--exclude-standard"],
        check=True, capture_output=True).stdout
    return [p for p in out.decode().split("\0") if p]


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha1(f.read()).digest()


def sync_tree(src_dir):
    """Copy the working tree into src_dir, touching only files whose bytes
    differ, so the scratch build stays incremental between runs."""
    want = set()
    for rel in tree_files():
        a, b = os.path.join(ROOT, rel), os.path.join(src_dir, rel)
        if not os.path.isfile(a) or os.path.islink(a):
            continue
        want.add(rel)
        if os.path.isfile(b) and digest(a) == digest(b):
            continue
        os.makedirs(os.path.dirname(b), exist_ok=True)
        # A fresh mtime, not the source's: an edit made while the scratch
        # build ran can be older than the objects built from the old copy.
        shutil.copyfile(a, b)
        shutil.copymode(a, b)
    for d, _, files in os.walk(src_dir):
        for name in files:
            rel = os.path.relpath(os.path.join(d, name), src_dir)
            if rel not in want:
                os.unlink(os.path.join(d, name))


def run(cmd, log, cwd=None, timeout=None):
    """Run cmd with its output appended to log; its exit status (124 on
    timeout)."""
    with open(log, "ab") as f:
        f.write(("\n$ " + " ".join(cmd) + "\n").encode())
        f.flush()
        try:
            return subprocess.run(cmd, cwd=cwd, stdout=f, stderr=subprocess.STDOUT,
                                  timeout=timeout).returncode
        except subprocess.TimeoutExpired:
            return 124


def build(bdir, targets, jobs, log):
    return run(["cmake", "--build", bdir, "-j", str(jobs), "--target"]
               + targets, log) == 0


def ctest(bdir, regex, log, jobs):
    """ctest's exit status, and whether any named test ran (ctest passes
    a run whose tests were all SKIPPED, e.g. the MPI ones without mpirun:
    that kills nothing and proves nothing)."""
    start = os.path.getsize(log)
    # --timeout: a mutant that loops forever is killed, not waited on.
    rc = run(["ctest", "--test-dir", bdir, "-R", regex, "-j", str(jobs),
              "--timeout", "300", "--output-on-failure"], log)
    with open(log, "rb") as f:
        f.seek(start)
        out = f.read().decode(errors="replace")
    ran = re.search(r"Test +#\d+: .*(Passed|\*\*\*Failed|Timeout|"
                    r"Exception|Not Run)", out) is not None
    return rc, ran


def apply_mutant(src_dir, m):
    """Mutate the scratch copy; the original text, or None when the snippet
    is not there exactly once (a stale mutant)."""
    path = os.path.join(src_dir, m["file"])
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if text.count(m["find"]) != 1:
        return None
    with open(path, "w", encoding="utf-8") as f:
        f.write(text.replace(m["find"], m["repl"]))
    return text


def restore(src_dir, m, text):
    with open(os.path.join(src_dir, m["file"]), "w", encoding="utf-8") as f:
        f.write(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scratch", default=os.environ.get(
        "SHLO_MUTATION_DIR", "/tmp/shlo-mutation"),
        help="scratch folder: src/ (the copy) and build/ (kept across runs)")
    ap.add_argument("--mutants", default=os.path.join(HERE, "mutants.txt"))
    ap.add_argument("--only", action="append", default=[],
                    help="run only mutants whose description contains this")
    ap.add_argument("--list", action="store_true", help="list and exit")
    ap.add_argument("--check", action="store_true",
                    help="check each snippet occurs exactly once, and exit")
    ap.add_argument("-j", "--jobs", type=int, default=2)
    a = ap.parse_args()

    mutants = parse_mutants(a.mutants)
    if a.only:
        mutants = [m for m in mutants if any(s in m["desc"] for s in a.only)]
    if a.check:
        bad = 0
        for m in mutants:
            with open(os.path.join(ROOT, m["file"]), encoding="utf-8") as f:
                n = f.read().count(m["find"])
            if n != 1:
                bad += 1
                print(f"{a.mutants}:{m['line']}: snippet found {n} times "
                      f"in {m['file']}")
        print(f"{len(mutants)} mutants, {bad} stale")
        return 1 if bad else 0
    if a.list or not mutants:
        for i, m in enumerate(mutants, 1):
            print(f"{i:3d}  {m['file']}: {m['desc']}  [{m['tests']}]")
        return 0 if mutants else 2

    src = os.path.join(a.scratch, "src")
    bdir = os.path.join(a.scratch, "build")
    log = os.path.join(a.scratch, "mutation.log")
    if os.path.realpath(src).startswith(os.path.realpath(ROOT) + os.sep) or \
            os.path.realpath(src) == os.path.realpath(ROOT):
        sys.exit("the scratch folder must lie outside the source tree")
    os.makedirs(src, exist_ok=True)
    open(log, "w").close()
    t0 = time.time()
    sync_tree(src)
    # The corpus tests find ../shared/conformance beside the project.
    shared = os.path.join(os.path.dirname(ROOT), "shared")
    link = os.path.join(a.scratch, "shared")
    if os.path.isdir(shared) and not os.path.exists(link):
        os.symlink(shared, link)
    if run(["cmake", "-S", src, "-B", bdir, "-G", "Ninja",
            "-DCMAKE_BUILD_TYPE=RelWithDebInfo"], log) != 0:
        print(f"configure failed: see {log}")
        return 2

    targets = sorted({t for m in mutants for t in m["build"].split()})
    union = "|".join(f"({m['tests']})" for m in mutants)
    print(f"baseline: building {len(targets)} targets, running the named "
          f"tests unmutated", flush=True)
    if not build(bdir, targets, a.jobs, log):
        print(f"the unmutated copy does not build: see {log}")
        return 2
    if ctest(bdir, union, log, a.jobs)[0] != 0:
        print(f"the named tests fail on the unmutated copy: see {log}")
        return 2
    print(f"baseline passes ({time.time() - t0:.0f} s)", flush=True)

    results = []
    for i, m in enumerate(mutants, 1):
        t1 = time.time()
        with open(log, "a") as f:
            f.write(f"\n==== mutant {i}: {m['desc']}\n")
        text = apply_mutant(src, m)
        if text is None:
            verdict = "STALE"
        else:
            try:
                if not build(bdir, m["build"].split(), a.jobs, log):
                    verdict = "NOT COMPILED"
                else:
                    rc, ran = ctest(bdir, m["tests"], log, a.jobs)
                    verdict = ("KILLED" if rc != 0 else
                               "SURVIVED" if ran else "NOT TESTED")
            finally:
                restore(src, m, text)
        results.append((verdict, m))
        print(f"{i:3d} {verdict:12s} {time.time() - t1:5.0f} s  "
              f"{m['file']}: {m['desc']}", flush=True)

    count = {v: sum(1 for r, _ in results if r == v)
             for v in ("KILLED", "SURVIVED", "NOT COMPILED", "STALE",
                       "NOT TESTED")}
    print(f"\n{len(results)} mutants: {count['KILLED']} killed, "
          f"{count['SURVIVED']} survived, {count['NOT COMPILED']} did not "
          f"compile" + (f", {count['STALE']} stale (snippet not found once)"
                        if count["STALE"] else "")
          + (f", {count['NOT TESTED']} not tested (every test SKIPPED)"
             if count["NOT TESTED"] else "")
          + f" ({time.time() - t0:.0f} s; log: {log})")
    for v, m in results:
        if v != "KILLED":
            print(f"  {v}: {m['file']}: {m['desc']}")
    return 0 if count["KILLED"] == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
