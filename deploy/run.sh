#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Build shlo, run the example program through `shlo run`, then start
# shlo-server in the foreground (Ctrl-C stops it cleanly).  Extra arguments
# go to shlo-server, e.g. `bash deploy/run.sh --port 9000 --threads 4`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash deploy/bootstrap.sh run
./build/client/shlo run examples/hello.mlir \
  --args "[dense<[1.0, 2.0, 3.0]> : tensor<3xf32>, dense<[0.5, 0.25, -1.0]> : tensor<3xf32>]"
exec ./build/server/shlo-server "$@"
