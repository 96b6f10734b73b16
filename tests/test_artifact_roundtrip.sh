#!/usr/bin/env bash
# `shlo test` on the corpus's programs as portable artifacts gives what it
# gives on their texts: test_artifact_write writes every case of
# interpret/ and jax/ as an artifact at the newest version (one file per
# case; it fails itself if any does not read back to the same module), and
# the summary lines of both runs must be equal, but for the cases whose
# inputs come from their file's RUN line, which no artifact carries.  The artifacts' check.*
# ops travel as unregistered ops (shlo/artifact.h).
# usage: test_artifact_roundtrip.sh SHLO_BINARY TEST_ARTIFACT_WRITE CORPUS_DIR
set -uo pipefail
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
summary() { grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$1"; }
(cd "$dir" && "$shlo" test --timeout 60 interpret jax) >"$out/text.txt"
"$shlo" test --timeout 60 "$out/bc" >"$out/bc.txt"
text=$(summary "$out/text.txt") bc=$(summary "$out/bc.txt")
n=$(ls "$out/bc" | wc -l)
echo "texts:     $text"
echo "artifacts: $bc ($n files)"
# An artifact has no comments, so a case whose inputs come from its file's
# RUN line (--args="...") has none: it must fail saying so, and only it.
args_files=$(cd "$dir" && grep -l -- '--interpret --args="' interpret/*.mlir jax/*.mlir 2>/dev/null | wc -l)
read -r tp _ tf _ ts _ <<<"$text"
want="$((tp - args_files)) passed, $((tf + args_files)) failed, $ts skipped"
other=$(grep -E '^FAIL' "$out/bc.txt" | grep -v 'gives none (--args in a RUN line)')
echo "expected:  $want ($args_files case(s) take their inputs from a RUN line)"
if [ -z "$text" ] || [ "$bc" != "$want" ] || [ -n "$other" ]; then
  grep -E '^(FAIL|SKIP)' "$out/bc.txt" | head -20
  echo "the artifacts' summary differs from the texts'"
  exit 1
fi
