#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Make a Debian 12 (bookworm) minbase root in DIR with debootstrap, from the
# Debian archive this machine's apt already uses, with that apt's sources
# inside it and the official image's apt settings (no caches, no package
# lists kept, no translations).  Used by test-container.sh (the base image)
# and test-fresh.sh (the fresh machine).
#
# usage: bash deploy/mkroot.sh DIR
#        bash deploy/mkroot.sh --reachable   (exit 0: the archive answers)
#   SHLO_ROOT_CACHE=FILE  keep a tarball of the pristine root there and
#                         unpack it next time instead of running debootstrap
#                         again (debootstrap takes minutes on a slow link);
#                         a tarball older than a week is made again, so the
#                         base does not drift far from the archive
set -euo pipefail
dir=${1:?usage: mkroot.sh DIR}
cache=${SHLO_ROOT_CACHE:-}

# The first bookworm main archive apt knows (its sources may be deb822 or
# one-line; apt-cache policy lists both the same way).
mirror=$(apt-cache policy 2>/dev/null |
         awk '$3 == "bookworm/main" && $2 !~ /security/ { print $2; exit }')
mirror=${mirror:-http://deb.debian.org/debian}

# --reachable: only say whether that archive answers (tests that need it
# skip, rather than fail, on a machine that cannot reach it).
if [ "$dir" = --reachable ]; then
  curl -sfI --max-time 20 "$mirror/dists/bookworm/Release" >/dev/null ||
    { echo "the Debian archive $mirror does not answer"; exit 1; }
  exit 0
fi

rm -rf "$dir"
mkdir -p "$dir"
if [ -n "$cache" ] && [ -s "$cache" ] && [ -n "$(find "$cache" -mtime -7)" ]; then
  echo "mkroot: unpacking $cache"
  tar -C "$dir" -xf "$cache"
  exit 0
fi

command -v debootstrap >/dev/null || {
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap
}
echo "mkroot: debootstrap --variant=minbase bookworm from $mirror"
t0=$(date +%s)
debootstrap --variant=minbase bookworm "$dir" "$mirror" >"$dir.debootstrap.log" 2>&1 || {
  tail -20 "$dir.debootstrap.log"
  exit 1
}
echo "mkroot: debootstrap took $(( $(date +%s) - t0 )) s"

# apt inside uses the same archive as apt outside.
rm -f "$dir/etc/apt/sources.list"
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
         /etc/apt/sources.list.d/*.sources; do
  [ -f "$f" ] || continue
  mkdir -p "$dir$(dirname "$f")"
  cp "$f" "$dir$f"
done

# What Debian's official image sets, so sizes compare with it.
cat >"$dir/etc/apt/apt.conf.d/docker-clean" <<'EOF'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
EOF
echo 'Acquire::Languages "none";' >"$dir/etc/apt/apt.conf.d/docker-no-languages"
echo 'Acquire::GzipIndexes "true";' >"$dir/etc/apt/apt.conf.d/docker-gzip-indexes"
echo 'Apt::AutoRemove::SuggestsImportant "false";' \
  >"$dir/etc/apt/apt.conf.d/docker-autoremove-suggests"
rm -rf "$dir"/var/lib/apt/lists/* "$dir"/var/cache/apt/*.bin \
       "$dir"/var/cache/apt/archives/*.deb

# Written aside and renamed: two tests making roots at once never unpack
# a half-written tarball.
if [ -n "$cache" ]; then
  mkdir -p "$(dirname "$cache")"
  tar -C "$dir" -cf "$cache.$$" . && mv -f "$cache.$$" "$cache"
  echo "mkroot: cached the root in $cache"
fi
