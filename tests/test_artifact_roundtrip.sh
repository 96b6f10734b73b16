#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `shlo test` on the corpus's programs as portable artifacts gives what it
# gives on their texts.  test_artifact_write writes every case of interpret/
# and jax/ as an artifact at the newest version, and at 1.0.0 each case
# whose ops exist there (one file per case; it fails itself if any does not
# read back to the same module).  A file's RUN-line inputs (--args="...")
# travel in its artifacts as the module attribute shlo.test_args; the
# interpreter's check.* ops as unregistered ops (shlo/artifact.h).
# For each version, every artifact's result (PASS/FAIL/SKIP) must be its
# case's result on the text, and the summary line the one those results
# make: at the newest version, where every case is written, the texts'
# own summary line.
# usage: test_artifact_roundtrip.sh SHLO_BINARY TEST_ARTIFACT_WRITE CORPUS_DIR
set -uo pipefail
export LC_ALL=C # sort and join agree on the order
shlo=$(realpath "$1") writer=$(realpath "$2") dir=$3
"$(dirname "$0")/need-corpus.sh" "$dir" || exit $?
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
mkdir "$out/bc"
SHLO_ARTIFACT_OUT="$out/bc" "$writer" >"$out/writer.log" 2>&1 || {
  tail -20 "$out/writer.log"
  echo "test_artifact_write failed"
  exit 1
}
grep -E '^ +[0-9]+ cases:' "$out/writer.log"
summary() { grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$1"; }
# "PATH.mlir:CASE RESULT" per case (PATH from interpret/ or jax/), sorted.
text_results() {
  sed -nE 's#^(PASS|FAIL|SKIP) ((interpret|jax)/[^ :]+\.mlir):([0-9]+)(:.*)?$#\2:\4 \1#p' "$1" |
    sort
}
# The same from a run over DIR, whose DIR/PATH.NNN.mlir.bc is case NNN.
artifact_results() {
  sed -nE "s#^(PASS|FAIL|SKIP) $2/((interpret|jax)/[^ :]+)\.0*([0-9]+)\.mlir\.bc:1(:.*)?\$#\2.mlir:\4 \1#p" "$1" |
    sort
}
(cd "$dir" && "$shlo" test --timeout 60 interpret jax) >"$out/text.txt"
text=$(summary "$out/text.txt")
text_results "$out/text.txt" >"$out/text.res"
echo "texts:            $text"
[ -n "$text" ] || { echo "the texts' run printed no summary"; exit 1; }
fail=0
newest=
for vdir in "$out"/bc/*; do
  v=$(basename "$vdir")
  "$shlo" test --timeout 60 "$vdir" >"$out/$v.txt"
  got=$(summary "$out/$v.txt")
  artifact_results "$out/$v.txt" "$vdir" >"$out/$v.res"
  n=$(find "$vdir" -name '*.mlir.bc' | wc -l)
  # The texts' results over the cases written at v.
  cut -d' ' -f1 "$out/$v.res" >"$out/$v.cases"
  join "$out/$v.cases" "$out/text.res" >"$out/$v.want"
  want=$(awk '{c[$2]++} END {printf "%d passed, %d failed, %d skipped\n",
                c["PASS"], c["FAIL"], c["SKIP"]}' "$out/$v.want")
  echo "artifacts $v: $got ($n files)"
  echo "  their texts:    $want"
  if [ "$(wc -l <"$out/$v.res")" != "$n" ] || [ "$got" != "$want" ] ||
     ! cmp -s "$out/$v.res" "$out/$v.want"; then
    echo "  the artifacts' results differ from their texts':"
    diff "$out/$v.want" "$out/$v.res" | head -20
    grep -E '^(FAIL|SKIP)' "$out/$v.txt" | head -10
    fail=1
  fi
  [ "$v" = "$(ls "$out/bc" | sort -V | tail -1)" ] && newest=$got
done
# At the newest version every case is written: the very same summary line.
if [ "$newest" != "$text" ]; then
  echo "the newest version's summary ($newest) is not the texts' ($text)"
  fail=1
fi
[ "$(ls "$out/bc" | wc -l)" = 2 ] || { echo "expected two versions"; fail=1; }
exit $fail
