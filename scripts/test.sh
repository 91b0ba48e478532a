#!/usr/bin/env bash
# The whole test suite (README's second command; .ci/run calls it). Builds what it needs, then
# runs every test through one TAP runner (prove). Exits non-zero on any failure.
#   scripts/test.sh              everything
#   scripts/test.sh tests/host   only some test directories or files
set -euo pipefail
. "$(dirname "$0")/lib/common.sh"
cd "$TERN_TOP"

t0=$SECONDS
"$TERN_TOP/scripts/build.sh"
log "builds took $((SECONDS - t0)) s"

if [ $# -eq 0 ]; then
	set -- tests/static tests/host tests/harness tests/guest
fi
# Guest tests keep their logs (console, agent, pcap) under build/runs/ for inspection.
prove --timer --recurse --verbose "$@"
