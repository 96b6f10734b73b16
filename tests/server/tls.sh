#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# HTTPS (issue #14 item 5): a certificate made here with openssl, a server
# with --tls-cert/--tls-key, and curl --cacert against it: health, an
# execution, the /v2 routes; curl without the CA and plain HTTP fail; each
# bad TLS configuration refuses to start with a message naming it.
# SKIPPED (77) without openssl or curl.
# usage: tls.sh SHLO_SERVER
set -uo pipefail
server=$1
command -v openssl >/dev/null && command -v curl >/dev/null || {
  echo "SKIP: needs openssl and curl"; exit 77; }
dir=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$dir"; }
trap cleanup EXIT
status=0
fail() { echo "FAIL: $*"; status=1; }

cert() { # name CN: a self-signed certificate for 127.0.0.1 and localhost
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=$2" \
    -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" \
    -keyout "$dir/$1.key" -out "$dir/$1.pem" 2>/dev/null || {
    echo "FAIL: openssl req"; exit 1; }
}
cert good localhost
cert other other

# --port 0: the server picks a free port and says which in its log.
"$server" --port 0 --tls-cert "$dir/good.pem" --tls-key "$dir/good.key" \
  2>"$dir/log" &
pid=$!
port=
for _ in $(seq 250); do
  port=$(sed -n 's|.*listening on https://127.0.0.1:\([0-9]*\)/.*|\1|p' "$dir/log")
  [ -n "$port" ] && break
  kill -0 $pid 2>/dev/null || break
  sleep 0.02
done
[ -n "$port" ] || { cat "$dir/log"; echo "FAIL: no https listener"; exit 1; }
url=https://127.0.0.1:$port
c() { curl -sS --max-time 20 --cacert "$dir/good.pem" "$@"; }

got=$(c "$url/healthz") || fail "healthz over https"
[ "$got" = '{"status":"ok"}' ] || fail "healthz body: $got"
got=$(c "https://localhost:$port/v2/health/ready") || fail "v2 ready by name"
[ "$got" = '{"ready":true}' ] || fail "v2 ready body: $got"
prog='func.func @main(%x: tensor<2xi32>) -> tensor<2xi32> {\n  %r = stablehlo.add %x, %x : tensor<2xi32>\n  return %r : tensor<2xi32>\n}\n'
body="{\"program\":\"$prog\",\"inputs\":[{\"dtype\":\"i32\",\"shape\":[2],\"data\":[20,-4]}]}"
got=$(c -H 'Content-Type: application/json' -d "$body" "$url/execute")
case $got in
  '{"outputs":[{"dtype":"i32","shape":[2],"data":[40,-8]}]'*) ;;
  *) fail "execute over https: $got" ;;
esac
# A large body crosses many TLS records.
big=$(python3 -c 'import json; print(json.dumps({"program": "func.func @main(%x: tensor<50000xi32>) -> tensor<50000xi32> {\n  return %x : tensor<50000xi32>\n}\n", "inputs": [{"dtype": "i32", "shape": [50000], "data": list(range(50000))}]}))')
got=$(printf '%s' "$big" | c -H 'Content-Type: application/json' --data-binary @- "$url/execute" 2>/dev/null | head -c 60)
case $got in
  '{"outputs":[{"dtype":"i32","shape":[50000],"data":[0,1,2,3'*) ;;
  *) fail "large execute over https: $got" ;;
esac
curl -sS --max-time 10 "$url/healthz" >/dev/null 2>&1 &&
  fail "curl without --cacert trusted the self-signed certificate"
curl -sS --max-time 10 --cacert "$dir/other.pem" "$url/healthz" >/dev/null 2>&1 &&
  fail "curl trusted a certificate from another CA"
got=$(curl -s --max-time 3 "http://127.0.0.1:$port/healthz")
[ "$got" = '{"status":"ok"}' ] && fail "plain HTTP answered on the HTTPS port"
kill -TERM $pid
wait $pid
rc=$?
pid=
[ $rc = 0 ] || fail "SIGTERM: exit status $rc"

# Each bad configuration: no start, status 2, a message naming it.
refuse() { # expected-message args...
  local want=$1
  shift
  out=$(timeout 20 "$server" --port 0 "$@" 2>&1)
  rc=$?
  [ $rc = 2 ] || fail "with $*: rc $rc, not 2"
  grep -qF -- "$want" <<<"$out" || fail "with $*: no \"$want\" in: $out"
}
refuse "needs both --tls-cert and --tls-key" --tls-cert "$dir/good.pem"
refuse "needs both --tls-cert and --tls-key" --tls-key "$dir/good.key"
refuse "--tls-key $dir/none.key: No such file or directory" \
  --tls-cert "$dir/good.pem" --tls-key "$dir/none.key"
refuse "--tls-cert $dir/log: not a PEM file" \
  --tls-cert "$dir/log" --tls-key "$dir/good.key"
refuse "not a usable certificate and key" \
  --tls-cert "$dir/good.pem" --tls-key "$dir/other.key"
refuse "--binary-port has no TLS" --tls-cert "$dir/good.pem" \
  --tls-key "$dir/good.key" --binary-port 0 --binary-port 1

[ $status = 0 ] && echo "tls: ok"
exit $status
