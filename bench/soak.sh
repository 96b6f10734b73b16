#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Soak: a shlo-server under mixed clients for N minutes, reporting figures
# (not a test: nothing is asserted, the script prints what happened).
#
#   bash bench/soak.sh [MINUTES] [THREADS] [SAMPLE_S]
#   (defaults: 30 minutes, 2 workers, a report every 30 s)
#
# Clients (bench/soak.py): valid ones (registrations, executions by id and
# by text, each answer checked against the value computed here), invalid
# ones (malformed JSON, parse and verify errors, wrong inputs, unknown
# routes and modules: each must get its 4xx kind), slow ones (headers or a
# body trickled a byte a second: the request deadline must close them),
# and abandoned ones (long executions whose client hangs up, connections
# that never send).  Every SAMPLE_S and at the end it prints throughput,
# answers by kind, wrong answers, unexpected 5xx and the server's RSS; at
# the end, whether the RSS stayed within 10% after the first fifth of the
# run (the warm-up).
set -euo pipefail
cd "$(dirname "$0")/.."
minutes=${1:-30}
threads=${2:-2}
sample=${3:-30}
build=${BUILD_DIR:-build}
[ -x "$build/server/shlo-server" ] || {
  echo "build first: cmake -S . -B $build -G Ninja && ninja -C $build" >&2
  exit 2
}
exec python3 bench/soak.py "$build/server/shlo-server" "$minutes" "$threads" \
  "$sample"
