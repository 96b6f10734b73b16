#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs `shlo test` over the conformance corpus and compares the cases that
# pass with the list kept in the repository:
#   - a listed case that no longer passes is a regression (fail);
#   - a passing case missing from the list means the list is stale (fail):
#     rerun with UPDATE=1 to rewrite it, and commit the new list.
# usage: conformance.sh SHLO_BINARY CONFORMANCE_DIR PASSING_LIST [FLAG]
# FLAG goes to `shlo test` (--check-context: each case in a context of its
# own whose allocator checks that everything comes back to it).
set -uo pipefail
shlo=$(realpath "$1") dir=$2 list=$3 flag=${4:-}
# No corpus at all: SKIPPED (77), saying how to get one.  A corpus without
# these two folders is broken: that fails.
"$(dirname "$0")/need-corpus.sh" "$dir" || exit $?
if [ ! -d "$dir/interpret" ] || [ ! -d "$dir/jax" ]; then
  echo "conformance corpus at $dir lacks interpret/ or jax/" >&2
  exit 1
fi
out=$(mktemp)
trap 'rm -f "$out" "$out.pass"' EXIT
(cd "$dir" && "$shlo" test --timeout 60 $flag interpret jax) >"$out"
rc=$?
grep -E '^(FAIL|SKIP)' "$out" | cut -c1-300
# `shlo test` exits 0 when no case failed, 1 when some did (the comparison
# below says whether they were expected to); anything else (a usage error, a
# crash) or a missing summary line means the run itself went wrong.
summary=$(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$out")
if [ -z "$summary" ] || { [ $rc != 0 ] && [ $rc != 1 ]; }; then
  echo "shlo test did not finish (exit status $rc); its last lines:"
  tail -5 "$out"
  exit 1
fi
echo "$summary"
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
