#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Fetches the conformance corpus the tests read (see SHLO_CONFORMANCE_DIR in
# README.md) from StableHLO's repository, at the revision pinned in
# tests/conformance/SOURCE_REVISION, and lays it out as the tests expect:
#
#   corpus folder       upstream path (openxla/stablehlo at that revision)
#   interpret/...       stablehlo/tests/interpret/...   (op-by-op tests, chlo/)
#   jax/F               stablehlo/testdata/F            (JAX exports, a subset)
#   verify/F            stablehlo/tests/F               (ops_stablehlo*.mlir)
#   vhlo/F              stablehlo/tests/vhlo/F          (X.mlir + X.mlir.bc)
#   LICENSE.stablehlo   LICENSE
#
# tests/conformance/MANIFEST names every file of the corpus with its SHA-256
# (sha256sum's format): exactly those files are taken, and each is checked.
# A file that is not at its usual path is taken from wherever the one file
# of that name is in the revision.  Needs network access, git (or curl/wget and tar), sha256sum.
#
# usage: tests/fetch-conformance.sh [--tarball] [DEST]
#   DEST defaults to $SHLO_CONFORMANCE_DIR, else ../shared/conformance beside
#   the repository (where the build looks by default).  DEST must not exist
#   yet, or be empty.  Exit status 0 when every file was found and matches
#   the manifest; otherwise the files that were found stay in DEST and the
#   missing or differing ones are listed.
set -euo pipefail
repo_root=$(cd "$(dirname "$0")/.." && pwd)
manifest=$repo_root/tests/conformance/MANIFEST
# STABLEHLO_GIT_URL and STABLEHLO_REV may name a mirror and its revision.
rev=${STABLEHLO_REV:-$(tr -d ' \n' <"$repo_root/tests/conformance/SOURCE_REVISION")}
url=${STABLEHLO_GIT_URL:-https://github.com/openxla/stablehlo.git}

method=git
if [ "${1:-}" = --tarball ]; then method=tarball; shift; fi
dest=${1:-${SHLO_CONFORMANCE_DIR:-$repo_root/../shared/conformance}}
if [ -e "$dest" ] && [ -n "$(ls -A "$dest" 2>/dev/null)" ]; then
  echo "fetch-conformance: $dest exists and is not empty; give another DEST" >&2
  exit 2
fi
case $rev in
  [0-9a-f]*) [ ${#rev} = 40 ] || { echo "bad revision '$rev'" >&2; exit 2; } ;;
  *) echo "bad revision '$rev'" >&2; exit 2 ;;
esac

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
src=$work/stablehlo

# upstream path of a corpus file
upstream() {
  case $1 in
    LICENSE.stablehlo) echo LICENSE ;;
    interpret/*) echo "stablehlo/tests/$1" ;;
    jax/*) echo "stablehlo/testdata/${1#jax/}" ;;
    verify/*) echo "stablehlo/tests/${1#verify/}" ;;
    vhlo/*) echo "stablehlo/tests/$1" ;;
    *) echo "$1" ;;
  esac
}

paths=$(awk '{ print $2 }' "$manifest")
echo "fetching StableHLO $rev ($(echo "$paths" | wc -l) files) by $method"
if [ $method = git ]; then
  # A partial clone: the tree comes first, then only the blobs of the files
  # taken (a sparse checkout of them).
  git init -q "$src"
  git -C "$src" remote add origin "$url"
  git -C "$src" config extensions.partialClone origin
  git -C "$src" fetch -q --depth 1 --filter=blob:none origin "$rev"
  git -C "$src" ls-tree -r --name-only FETCH_HEAD >"$work/tree"
else
  tarball_url=${url%.git}/archive/$rev.tar.gz
  mkdir -p "$src"
  if command -v curl >/dev/null; then
    curl -fsSL "$tarball_url" | tar -xz -C "$src" --strip-components=1
  else
    wget -qO- "$tarball_url" | tar -xz -C "$src" --strip-components=1
  fi
  (cd "$src" && find . -type f | sed 's|^\./||') >"$work/tree"
fi

# Where each file is upstream: its usual path, else (moved) the one file of
# that name in the revision.
missing=()
: >"$work/map"
for p in $paths; do
  from=$(upstream "$p")
  if ! grep -qxF "$from" "$work/tree"; then
    from=$(awk -F/ -v name="$(basename "$p")" '$NF == name' "$work/tree")
    if [ -z "$from" ] || [ "$(echo "$from" | wc -l)" != 1 ]; then
      missing+=("$p")
      continue
    fi
  fi
  echo "$p $from" >>"$work/map"
done
if [ $method = git ]; then
  awk '{ print "/" $2 }' "$work/map" |
    git -C "$src" sparse-checkout set --no-cone --stdin
  git -C "$src" checkout -q FETCH_HEAD
fi

mkdir -p "$work/corpus"
while read -r p from; do
  mkdir -p "$work/corpus/$(dirname "$p")"
  cp "$src/$from" "$work/corpus/$p"
done <"$work/map"
echo "$rev" >"$work/corpus/SOURCE_REVISION"
cat >"$work/corpus/README.md" <<EOF
# Conformance corpus

Test programs from the StableHLO project (openxla/stablehlo at $rev,
Apache License 2.0, see LICENSE.stablehlo), laid out by shlo's
tests/fetch-conformance.sh: interpret/ (stablehlo/tests/interpret),
jax/ (stablehlo/testdata), verify/ (stablehlo/tests/ops_stablehlo*.mlir),
vhlo/ (stablehlo/tests/vhlo).
EOF

mkdir -p "$dest"
cp -R "$work/corpus/." "$dest/"

status=0
if [ ${#missing[@]} -gt 0 ]; then
  echo "fetch-conformance: not found at $rev:"
  printf '  %s\n' "${missing[@]}"
  status=1
fi
if ! differ=$(cd "$dest" && sha256sum --quiet -c "$manifest" 2>/dev/null); then
  differ=$(echo "$differ" | grep -v ': FAILED open or read' || true)
  if [ -n "$differ" ]; then
    echo "fetch-conformance: these files differ from tests/conformance/MANIFEST:"
    echo "$differ" | sed 's/^/  /'
    status=1
  fi
fi
[ $status = 0 ] &&
  echo "fetch-conformance: $(echo "$paths" | wc -l) files in $dest match the manifest"
exit $status
