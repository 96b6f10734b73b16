#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs a test that reads the conformance corpus, or skips it when there is
# no corpus: exit status 77, which ctest reports as SKIPPED (SKIP_RETURN_CODE).
# A corpus folder that exists but lacks some of its parts still runs the test,
# so a broken corpus fails rather than hides.
# usage: need-corpus.sh CONFORMANCE_DIR [COMMAND [ARGS...]]
# Without a command: exit 0 when there is a corpus, else as above.
dir=$1
shift
for part in interpret jax verify vhlo; do
  if [ -d "$dir/$part" ]; then
    [ $# = 0 ] && exit 0
    exec "$@"
  fi
done
cat <<MSG
SKIPPED: no conformance corpus at $dir
  This test reads StableHLO's test programs (interpret/ jax/ verify/ vhlo/).
  Get them with network access:  bash tests/fetch-conformance.sh DIR
  (pinned revision: tests/conformance/SOURCE_REVISION), then configure with
  -DSHLO_CONFORMANCE_DIR=DIR (default: ../shared/conformance beside the repo).
MSG
exit 77
