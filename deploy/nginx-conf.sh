#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Write an nginx.conf for shlo-servers from deploy/nginx.conf.in.
# usage: nginx-conf.sh LISTEN RUNDIR SERVER... > nginx.conf
#   LISTEN  what nginx listens on (8080, 127.0.0.1:8080)
#   RUNDIR  a folder for its pid and temporary files (created)
#   SERVER  host:port of each shlo-server
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: nginx-conf.sh LISTEN RUNDIR SERVER..." >&2; exit 2; }
listen=$1 rundir=$2
shift 2
mkdir -p "$rundir"
servers=
for s in "$@"; do
  # max_fails=1: one refused connection takes a server out of the ring for
  # fail_timeout; nginx then tries it again.
  servers+="    server $s max_fails=1 fail_timeout=5s;\n"
done
template=$(dirname "$0")/nginx.conf.in
sed -e "s|@LISTEN@|$listen|g" -e "s|@RUNDIR@|$rundir|g" \
    -e "s|^@SERVERS@\$|${servers%\\n}|" "$template"
