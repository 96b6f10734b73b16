#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The engine's stages depend one way (engine/CMakeLists.txt, SHLO_STAGES):
#  1. each stage's target builds alone, in a fresh engine-only tree, with
#     nothing built before it: it needs no other stage's build outputs;
#  2. through a stage's view of src/, every header of an earlier stage (and
#     its own) is found, and a header of a later stage is not, so an
#     include that reaches forward fails to build.
# The tree is configured without optimisation: the point is what compiles,
# not how fast it runs.
# usage: stages.sh CMAKE GENERATOR SOURCE_DIR C_COMPILER
set -euo pipefail
cmake=$1 generator=$2 src=$3 cc=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
stages=(core ops frontend verify compile runtime kernels)

if ! "$cmake" -S "$src" -B "$tmp/b" -G "$generator" -DSHLO_ENGINE_ONLY=ON \
     -DCMAKE_BUILD_TYPE= >"$tmp/configure.log" 2>&1; then
  echo "FAIL: engine-only configure"; tail -20 "$tmp/configure.log"; exit 1
fi
# The stage list the build uses must be this one, in this order.
order=$(sed -n 's/^set(SHLO_STAGES \(.*\))$/\1/p' "$src/engine/CMakeLists.txt")
if [ "$order" != "${stages[*]}" ]; then
  echo "FAIL: engine/CMakeLists.txt orders the stages '$order'," \
       "this test '${stages[*]}'"
  exit 1
fi

status=0
for s in "${stages[@]}"; do
  n_src=$(ls "$src/engine/src/$s"/*.c | wc -l)
  if ! "$cmake" --build "$tmp/b" --target "shlo_stage_$s" -j2 \
       >"$tmp/$s.log" 2>&1; then
    echo "FAIL: stage $s does not build alone with only its views:"
    grep -E 'error|No such file' "$tmp/$s.log" | head -20
    status=1
    continue
  fi
  n_obj=$(find "$tmp/b/engine/CMakeFiles/shlo_stage_$s.dir" -name '*.o' | wc -l)
  # built: its own sources' objects (runtime builds one of its two MPI
  # backends), and no other stage's (each stage's are deleted once counted)
  others=0
  for t in "${stages[@]}"; do
    [ "$t" = "$s" ] && continue
    [ -d "$tmp/b/engine/CMakeFiles/shlo_stage_$t.dir" ] || continue
    k=$(find "$tmp/b/engine/CMakeFiles/shlo_stage_$t.dir" -name '*.o' | wc -l)
    others=$((others + k))
  done
  echo "stage $s: built alone, $n_obj objects from $n_src sources"
  [ "$n_obj" -ge $((n_src - 1)) ] || { echo "FAIL: stage $s built $n_obj objects"; status=1; }
  [ "$others" = 0 ] || { echo "FAIL: building stage $s built $others objects of other stages"; status=1; }
  # gone before the next stage builds, so that it starts from nothing
  find "$tmp/b/engine/CMakeFiles/shlo_stage_$s.dir" -name '*.o' -delete
done

# 2: one header of each stage, included through each stage's view.
declare -A header=([core]=core/alloc.h [ops]=ops/ops.h
  [frontend]=frontend/parser_int.h [verify]=verify/verify_int.h
  [compile]=compile/compiler.h [runtime]=runtime/exec.h
  [kernels]=kernels/kernel.h)
incs=(-I "$src/engine/include" -I "$tmp/b/engine/include"
      $(pkg-config --cflags-only-I openblas))
for ((i = 0; i < ${#stages[@]}; i++)); do
  s=${stages[$i]}
  view=$tmp/b/engine/stage-view/$s
  for ((j = 0; j < ${#stages[@]}; j++)); do
    t=${stages[$j]}
    printf '#include "%s"\n' "${header[$t]}" >"$tmp/probe.c"
    if "$cc" -std=c11 -fsyntax-only "${incs[@]}" -I "$view" "$tmp/probe.c" \
         >"$tmp/probe.log" 2>&1; then
      seen=yes
    else
      seen=no
    fi
    if [ $j -le $i ] && [ $seen = no ]; then
      echo "FAIL: stage $s cannot include ${header[$t]} (stage $t is before it):"
      head -5 "$tmp/probe.log"
      status=1
    elif [ $j -gt $i ] && [ $seen = yes ]; then
      echo "FAIL: stage $s can include ${header[$t]} (stage $t is after it)"
      status=1
    fi
  done
done
[ $status = 0 ] && echo "every stage builds alone and sees only the stages before it"
exit $status
