#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Doxygen input filter for shlo's public headers (docs/Doxyfile).

The headers document every declaration in plain C comments (STYLE.md),
which Doxygen ignores.  Rather than mark up every header, this filter
turns them into Doxygen's on the fly: a header's first comment (after
the SPDX line) becomes its @file text, a comment that opens a line
documents what follows it, and a comment after code on the same line
documents that member (/**< */).  Their text is escaped so that Doxygen
reads it as prose: backslashes, @, <, > and & are its markup.  The lines
stay where they were (but for the @file line), so Doxygen's line numbers
are near the header's.

usage: doxygen_filter.py HEADER (writes the filtered text to stdout)"""
import re
import sys


def escape(text):
    """Prose: Doxygen's command and HTML characters escaped."""
    for ch in "\\@<>&#%$":
        text = text.replace(ch, "\\" + ch)
    return text


def filter_header(src):
    out = []
    i, n = 0, len(src)
    seen_file_comment = False
    code_on_line = False
    while i < n:
        if src.startswith("/*", i):
            end = src.find("*/", i + 2)
            if end < 0:
                out.append(src[i:])
                break
            body = src[i + 2:end]
            if "SPDX-License-Identifier" in body:
                out.append(src[i:end + 2])
            elif not seen_file_comment:
                seen_file_comment = True
                # @file last: it takes the rest of its line as a file name
                out.append("/** " + escape(body.lstrip("*")) + "\n@file */")
            elif code_on_line:
                out.append("/**< " + escape(body.lstrip("*<")) + "*/")
            else:
                out.append("/** " + escape(body.lstrip("*")) + "*/")
            i = end + 2
            continue
        if src.startswith("//", i):
            end = src.find("\n", i)
            end = n if end < 0 else end
            out.append(src[i:end])
            i = end
            continue
        if src[i] == '"':  # a string literal: copied as it is
            m = re.compile(r'"(\\.|[^"\\\n])*"').match(src, i)
            j = m.end() if m else i + 1
            out.append(src[i:j])
            code_on_line = True
            i = j
            continue
        ch = src[i]
        out.append(ch)
        if ch == "\n":
            code_on_line = False
        elif not ch.isspace():
            code_on_line = True
        i += 1
    return "".join(out)


if __name__ == "__main__":
    with open(sys.argv[1], encoding="utf-8") as f:
        sys.stdout.write(filter_header(f.read()))
