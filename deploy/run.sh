#!/usr/bin/env bash
# Build shlo and run the example program through `shlo run`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash deploy/bootstrap.sh
./build/client/shlo run examples/hello.mlir \
  --args "[dense<[1.0, 2.0, 3.0]> : tensor<3xf32>, dense<[0.5, 0.25, -1.0]> : tensor<3xf32>]"
