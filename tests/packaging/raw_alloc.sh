#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Every allocation in engine/src goes through the context's allocator
# (core/alloc.h, core/context_int.h) so that an embedding program's
# allocator sees every byte.  A raw C library call (malloc, calloc, realloc,
# free, strdup, strndup, posix_memalign, aligned_alloc) is allowed only in
# a file that raw_alloc_allow.txt names, and only as many times as it says,
# each file with the reason its calls stay raw.  A new raw call fails here;
# a routed one fails too until the list's count comes down, so the list
# never claims more than is there.
# usage: raw_alloc.sh ENGINE_SRC_DIR ALLOW_LIST
set -euo pipefail
src=$1
allow=$2
re='\b(malloc|calloc|realloc|free|strdup|strndup|posix_memalign|aligned_alloc)\('

declare -A want
while read -r path count _reason; do
  case "$path" in '' | '#'*) continue ;; esac
  want[$path]=$count
done <"$allow"

bad=0
declare -A seen
while IFS= read -r f; do
  rel=${f#"$src"/}
  n=$(grep -cE "$re" "$f" || true)
  [ "$n" = 0 ] && continue
  seen[$rel]=1
  w=${want[$rel]:-0}
  if [ "$n" != "$w" ]; then
    echo "FAIL $rel: $n raw allocation calls, the allow-list says $w:"
    grep -nE "$re" "$f" | sed 's/^/  /'
    bad=1
  fi
done < <(find "$src" -name '*.[ch]' | sort)
for rel in "${!want[@]}"; do
  if [ -z "${seen[$rel]:-}" ]; then
    echo "FAIL $rel: listed with ${want[$rel]} raw calls, has none (remove it)"
    bad=1
  fi
done
if [ $bad = 0 ]; then
  echo "raw allocation calls: only the ${#want[@]} allow-listed files, as counted"
else
  echo "route new allocations through shlo__malloc/shlo__free (core/alloc.h)"
  echo "or, with a reason, list them in $allow"
fi
exit $bad
