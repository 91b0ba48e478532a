#!/usr/bin/env bash
# The whole test suite (README's second command; .ci/run calls it). Builds what it needs, then
# runs every test through one TAP runner (prove), on two kernel flavours:
#   stock  Debian's kernel: tests/static tests/host tests/harness tests/guest tests/interop
#   debug  KASAN, lockdep, kmemleak, fault injection (scripts/build-debug-kernel.sh):
#          tests/guest and tests/kunit again, with TERN_KERNEL=debug
# tests/guest holds ethernet.t, faults.t (debug only), rdma.t, wire.t (stock only), cm.t
# (rdma_cm over the GSI QP), verbs.t (UD, SRQ, atomics, async events), dcb.t (dcb, devlink
# params, reload, PFC storm) and congestion.t (three guests through tern-switch; stock only):
# the others run on both kernels, the RDMA ones with fewer iterations on the debug kernel (the
# kernel's GSI, UD, SRQ, DCB and event paths get KASAN, lockdep and kmemleak coverage).
# tests/host also runs the switch model, tern-switch and the virtual-time incast (incast.t).
# Ends with each test file's wall time, slowest first, and the total against the budget
# (scripts/lib/test-times.py). Exits non-zero on any failure.
#   scripts/test.sh                          everything, both flavours
#   scripts/test.sh tests/host               only some test directories or files (stock)
#   TERN_KERNEL=debug scripts/test.sh tests/guest/faults.t    ... on the debug kernel
set -euo pipefail
. "$(dirname "$0")/lib/common.sh"
cd "$TERN_TOP"

t0=$SECONDS
if [ $# -gt 0 ]; then
	"$TERN_TOP/scripts/build.sh"
else
	"$TERN_TOP/scripts/build.sh" --all
fi
log "builds took $((SECONDS - t0)) s"

limit=${TERN_PROVE_TIMEOUT:-3600}	# seconds per prove run
summary=() logs=() failed=0
run() {	# run FLAVOUR DIR...: one prove run; guest tests keep their logs under build/runs/
	local flavour=$1 t1=$SECONDS rc=0
	shift
	log "tests on the $flavour kernel: $*"
	# prove's output is kept for the table of wall times at the end
	TERN_KERNEL=$flavour timeout -k 30 "$limit" prove --timer --recurse --verbose "$@" 2>&1 |
		tee "$TERN_OUT/prove-$flavour.log" || rc=$?
	logs+=("$flavour=$TERN_OUT/prove-$flavour.log")
	summary+=("$(printf '%-6s %-5s %5d s  %s' "$flavour" "$([ $rc = 0 ] && echo PASS ||
		echo "FAIL($rc)")" $((SECONDS - t1)) "$*")")
	[ $rc = 0 ] || failed=1
}

if [ $# -gt 0 ]; then
	flavour=stock
	[ "${TERN_KERNEL:-}" = debug ] && flavour=debug
	run "$flavour" "$@"
else
	run stock tests/static tests/host tests/harness tests/guest tests/interop
	debug_tests=(tests/guest)
	[ -d tests/kunit ] && debug_tests+=(tests/kunit)
	run debug "${debug_tests[@]}"
fi

python3 "$TERN_TOP/scripts/lib/test-times.py" $((SECONDS - t0)) "${logs[@]}" || true
echo "=== summary (logs of guest tests: $TERN_OUT/runs/) ==="
printf '%s\n' "${summary[@]}"
echo "total $((SECONDS - t0)) s: $([ $failed = 0 ] && echo PASS || echo FAIL)"
exit $failed
