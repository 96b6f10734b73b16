#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# deploy/shlo-server.service: systemd accepts it (systemd-analyze verify,
# with ExecStart pointed at this build's binary), it is Type=notify with a
# SIGHUP reload (what the server implements, see test_server_service), and
# every SHLO_* variable it sets is one shlo-server --help names.
# SKIPPED (77) where systemd-analyze is missing (a chroot, a container).
# usage: deploy_unit.sh SHLO_SERVER UNIT
set -euo pipefail
server=$(realpath "$1") unit=$2
command -v systemd-analyze >/dev/null || { echo "SKIP: no systemd-analyze"; exit 77; }
status=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sed -e "s|/usr/local/bin/shlo-server|$server|" -e "s|/usr/bin/shlo-server|$server|" "$unit" >"$tmp/shlo-server.service"
if ! out=$(systemd-analyze verify "$tmp/shlo-server.service" 2>&1) || [ -n "$out" ]; then
  echo "FAIL: systemd-analyze verify: $out"
  status=1
fi
grep -qx 'Type=notify' "$unit" || { echo "FAIL: not Type=notify"; status=1; }
grep -q '^ExecReload=.*-HUP' "$unit" || { echo "FAIL: no SIGHUP reload"; status=1; }
help=$("$server" --help)
for v in $(grep -o 'SHLO_[A-Z_]*' "$unit" | sort -u); do
  grep -q "\[$v\]" <<<"$help" || { echo "FAIL: $v is no option's variable"; status=1; }
done
[ $status = 0 ] && echo "$unit: verified; Type=notify, ExecReload SIGHUP, variables known"
exit $status
