#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Every source file of the project says its license in an SPDX line near its
# top (LICENSE: Apache-2.0), so a file copied out of the tree still says
# under what terms.  Lists the files that lack one and fails; with --fix
# adds the line instead (after a #! or <!doctype> first line), so a merge
# that brings new files needs one command, not hand edits.
# usage: spdx.sh SOURCE_DIR [--fix]
# Data files are not source and are left alone: the conformance lists, the
# .mlir examples (their line numbers appear in documented diagnostics) and
# deploy/shlo.conf (the server's --print-config output, compared by a test).
set -euo pipefail
root=$1
fix=${2:-}
tag='SPDX-License-Identifier: Apache-2.0'

# The comment that carries the tag in each kind of file.
comment_for() {
  case $1 in
    *.c | *.h | *.cc | *.js | *.css | *.h.in) echo "/* $tag */" ;;
    *.html) echo "<!-- $tag -->" ;;
    *) echo "# $tag" ;;
  esac
}

# Source files: code, build files, scripts and deployment files.
list_sources() {
  (cd "$root" && find . \( -name .git -o -name 'build' -o -name 'build-*' \
      -o -name Testing -o -name __pycache__ -o -name '*.egg-info' \
      -o -path ./debian/.debhelper -o -path ./obj-\* \) -prune -o -type f \( \
      -name '*.c' -o -name '*.h' -o -name '*.cc' -o -name '*.sh' \
      -o -name '*.py' -o -name '*.cmake' -o -name 'CMakeLists.txt' \
      -o -name '*.in' -o -name '*.js' -o -name '*.css' -o -name '*.html' \
      -o -name '*.yml' -o -name '*.yaml' -o -name '*.service' \
      -o -name 'Dockerfile' -o -name '*.Dockerfile' -o -name '*.toml' \
      -o -name 'Doxyfile' \) -print | sed 's|^\./||' | sort)
}

# The tag must be within the first three lines (after #!, <!doctype>, or a
# first line a format requires).
lacks_tag() { ! head -3 "$root/$1" | grep -qF "$tag"; }

add_tag() {
  local f=$root/$1 line first
  line=$(comment_for "$1")
  first=$(head -1 "$f")
  case $first in
    '#!'* | '<!'[dD][oO][cC]*)
      { printf '%s\n%s\n' "$first" "$line"; tail -n +2 "$f"; } >"$f.spdx" ;;
    *) { printf '%s\n' "$line"; cat "$f"; } >"$f.spdx" ;;
  esac
  chmod --reference="$f" "$f.spdx"
  mv "$f.spdx" "$f"
}

missing=0 total=0
while IFS= read -r f; do
  total=$((total + 1))
  lacks_tag "$f" || continue
  if [ "$fix" = --fix ]; then
    add_tag "$f"
    echo "added: $f"
  else
    echo "no SPDX line: $f"
    missing=$((missing + 1))
  fi
done < <(list_sources)

[ -f "$root/LICENSE" ] || { echo "FAIL: no LICENSE"; missing=$((missing + 1)); }
[ -f "$root/NOTICE" ] || { echo "FAIL: no NOTICE"; missing=$((missing + 1)); }
if [ $missing != 0 ]; then
  echo "FAIL: $missing of $total source files lack '$tag' (fix: bash $0 $root --fix)"
  exit 1
fi
echo "spdx: all $total source files carry '$tag'"
