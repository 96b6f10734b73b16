#!/usr/bin/env bash
# Runs `shlo test` over the conformance corpus and compares the cases that
# pass with the list kept in the repository:
#   - a listed case that no longer passes is a regression (fail);
#   - a passing case missing from the list means the list is stale (fail):
#     rerun with UPDATE=1 to rewrite it, and commit the new list.
# usage: conformance.sh SHLO_BINARY CONFORMANCE_DIR PASSING_LIST
set -uo pipefail
shlo=$(realpath "$1") dir=$2 list=$3
if [ ! -d "$dir/interpret" ] || [ ! -d "$dir/jax" ]; then
  echo "conformance corpus not found at $dir" >&2
  exit 1
fi
out=$(mktemp)
trap 'rm -f "$out" "$out.pass"' EXIT
(cd "$dir" && "$shlo" test --timeout 60 interpret jax) >"$out"
grep -E '^(FAIL|SKIP)' "$out" | cut -c1-300
grep -E '^[0-9]+ passed' "$out"
grep '^PASS ' "$out" | cut -d' ' -f2 | sort >"$out.pass"
if [ "${UPDATE:-0}" = 1 ]; then
  cp "$out.pass" "$list"
  echo "wrote $(wc -l <"$list") passing cases to $list"
  exit 0
fi
regressed=$(comm -23 <(sort "$list") "$out.pass")
stale=$(comm -13 <(sort "$list") "$out.pass")
status=0
if [ -n "$regressed" ]; then
  echo "REGRESSION: these cases passed before and do not pass now:"
  echo "$regressed"
  status=1
fi
if [ -n "$stale" ]; then
  echo "STALE LIST: these cases pass but are not in $list (rerun with UPDATE=1):"
  echo "$stale"
  status=1
fi
[ $status = 0 ] && echo "conformance: $(wc -l <"$out.pass") cases pass, as listed"
exit $status
