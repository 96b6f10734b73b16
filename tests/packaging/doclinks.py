#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The Markdown pages' links: every relative link of README.md,
CHANGELOG.md, docs/*.md and the other pages in the tree names a file or
folder that exists inside the repository, and a link with #anchor names a
heading of its target page (GitHub's anchors: lower case, punctuation
dropped, spaces as dashes).  Links in code (fenced blocks, `spans`) are
not links; http(s) and mailto links are not fetched (no network in the
suite).  Also: README.md is a front page of at most 150 lines.

PENDING lists the pages the docs index links that other branches add
(they arrive when those branches merge): a link to one of them that does
not exist yet is reported, not failed.  Once a page exists its links are
checked like any other; drop it from PENDING after the merge.

usage: doclinks.py REPO_ROOT"""
import os
import re
import sys

PENDING = set()
README_MAX_LINES = 150
SKIP_DIRS = {".git", "build", "Testing", "__pycache__", "node_modules"}

LINK = re.compile(r"!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def pages(root):
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if x not in SKIP_DIRS and
                         not x.startswith("build-") and
                         not x.startswith("obj-") and x != "debian")
        for f in sorted(files):
            if f.endswith(".md"):
                yield os.path.join(d, f)


def prose_lines(text):
    """(line number, text) of the lines outside fenced code, with inline
    code spans blanked."""
    fence = None
    for n, line in enumerate(text.split("\n"), 1):
        m = re.match(r"^\s*(```+|~~~+)", line)
        if m:
            if fence is None:
                fence = m.group(1)[:3]
            elif m.group(1).startswith(fence):
                fence = None
            continue
        if fence is None:
            yield n, re.sub(r"(`+)(?:(?!\1).)+\1", "", line)


def slug(heading):
    """GitHub's anchor of a heading's text."""
    text = re.sub(r"`|\*\*|__|\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path):
    seen, out = {}, set()
    with open(path, encoding="utf-8") as f:
        for _, line in prose_lines(f.read()):
            m = HEADING.match(line)
            if not m:
                continue
            s = slug(m.group(2))
            k = seen.get(s, 0)
            seen[s] = k + 1
            out.add(s if k == 0 else "%s-%d" % (s, k))
    explicit = re.compile(r"\{#([\w-]+)\}")
    with open(path, encoding="utf-8") as f:
        out.update(explicit.findall(f.read()))
    return out


def main(root):
    root = os.path.realpath(root)
    bad, pending, n_links = [], [], 0
    for page in pages(root):
        rel_page = os.path.relpath(page, root)
        with open(page, encoding="utf-8") as f:
            text = f.read()
        for lineno, line in prose_lines(text):
            for target in LINK.findall(line):
                if re.match(r"^[a-z][a-z0-9+.-]*:", target):
                    continue  # http:, https:, mailto:
                n_links += 1
                where = "%s:%d: %s" % (rel_page, lineno, target)
                path, _, anchor = target.partition("#")
                full = os.path.realpath(os.path.join(os.path.dirname(page),
                                                     path)) if path else page
                rel = os.path.relpath(full, root)
                if rel.startswith(".."):
                    bad.append(where + " (outside the repository)")
                    continue
                if not os.path.exists(full):
                    (pending if rel in PENDING else bad).append(
                        where + " (no such file)")
                    continue
                if anchor and full.endswith(".md") and \
                        anchor not in anchors(full):
                    bad.append(where + " (no heading #%s in %s)" % (anchor,
                                                                    rel))
    with open(os.path.join(root, "README.md"), encoding="utf-8") as f:
        lines = f.read().count("\n")
    if lines > README_MAX_LINES:
        bad.append("README.md: %d lines, more than %d for a front page"
                   % (lines, README_MAX_LINES))
    for p in pending:
        print("pending (arrives with another branch): " + p)
    for b in bad:
        print("FAIL: " + b)
    if bad:
        return 1
    print("doclinks: %d relative links checked, all resolve; README.md %d "
          "lines" % (n_links, lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
