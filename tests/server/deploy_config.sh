#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# deploy/shlo.conf is exactly what `shlo-server --print-config` writes from
# the option table with nothing set (so the shipped file cannot drift from
# the code), and it names every option `shlo-server --help` lists.
# usage: deploy_config.sh SHLO_SERVER DEPLOY_SHLO_CONF
set -euo pipefail
server=$1 conf=$2
status=0
# env -i: no SHLO_* variable of the caller's may change a default.
if ! diff -u "$conf" <(env -i "$server" --print-config); then
  echo "FAIL: $conf differs from the option table; regenerate it with"
  echo "  env -i build/server/shlo-server --print-config > deploy/shlo.conf"
  status=1
fi
n=0
for name in $("$server" --help | sed -n 's/^  --\([a-z0-9-]*\) .*/\1/p'); do
  n=$((n + 1))
  if [ "$name" = config ]; then
    grep -q '^# (config names this file' "$conf" || { echo "FAIL: config"; status=1; }
  elif ! grep -q "^$name " "$conf"; then
    echo "FAIL: option $name of --help is not in $conf"
    status=1
  fi
done
[ "$n" -ge 10 ] || { echo "FAIL: only $n options read from --help"; status=1; }
[ $status = 0 ] && echo "$conf: all $n options of --help, equal to --print-config"
exit $status
