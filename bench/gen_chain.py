#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Write a StableHLO program of N chained adds to stdout:
%k = add(%k-1, %a), so every value but the last dies one step after it is
made (what liveness must find for each of N slots).

    python3 bench/gen_chain.py N [ELEMENTS]
"""
import sys

n = int(sys.argv[1])
elems = int(sys.argv[2]) if len(sys.argv) > 2 else 4
t = f"tensor<{elems}xf32>"
out = sys.stdout
out.write(f"func.func @main(%a: {t}) -> {t} {{\n")
prev = "%a"
lines = []
for k in range(n):
    lines.append(f"  %{k} = stablehlo.add {prev}, %a : {t}\n")
    prev = f"%{k}"
    if len(lines) == 4096:
        out.write("".join(lines))
        lines = []
out.write("".join(lines))
out.write(f"  return {prev} : {t}\n}}\n")
