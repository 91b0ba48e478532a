#!/usr/bin/env bash
# The whole test suite (README's second command; .ci/run calls it). Builds what it needs, then
# runs every test through one TAP runner (prove), on two kernel flavours:
#   stock  Debian's kernel: tests/static tests/host tests/harness tests/guest tests/interop
#   debug  KASAN, lockdep, kmemleak, fault injection (scripts/build-debug-kernel.sh):
#          tests/guest and tests/kunit again, with TERN_KERNEL=debug
# tests/guest holds ethernet.t, faults.t (debug only), rdma.t, wire.t (stock only), cm.t
# (rdma_cm over the GSI QP), verbs.t (UD, SRQ, atomics, async events), dcb.t (dcb, devlink
# params, reload, PFC storm), storage.t (NVMe-oF, NFS, iSER and SMB Direct over RDMA), apps.t
# (UCX, Open MPI, libfabric, rsockets, qperf; the debug kernel runs MPI only) and
# congestion.t (three guests through tern-switch; stock only):
# the others run on both kernels, the RDMA ones with fewer iterations on the debug kernel (the
# kernel's GSI, UD, SRQ, DCB and event paths get KASAN, lockdep and kmemleak coverage).
# tests/host also runs the switch model, tern-switch and the virtual-time incast (incast.t).
# The two halves run side by side: the stock half in the foreground, the debug half (its kernel
# build, then its tests) in the background, its output shown when the stock half is done. A
# guest cluster keeps about 1.3 of the 2 cores busy (one guest often waits for the other), so
# the halves overlap in the idle time. The stock half runs its files one at a time; the
# debug half its files slowest first, one at a time beside the stock half, two after it.
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
	"$TERN_TOP/scripts/build.sh"	# the flavour of $TERN_KERNEL
else
	TERN_KERNEL=stock "$TERN_TOP/scripts/build.sh"	# the debug half builds its own
fi
log "builds took $((SECONDS - t0)) s"

# Every prove run ends by the suite's deadline, 85 min after the start by default, so that a
# run that is too slow still reports (its table, the failing half) before CI's 90-minute limit
# stops everything. TERN_PROVE_TIMEOUT, when set, bounds each prove run instead.
deadline=$((t0 + ${TERN_SUITE_LIMIT:-5100}))
half() {	# half FLAVOUR DIR...: one prove run; guest tests keep their logs under build/runs/
	local flavour=$1 t1=$SECONDS rc=0 limit
	shift
	limit=${TERN_PROVE_TIMEOUT:-$((deadline - SECONDS))}
	[ "$limit" -ge 60 ] || limit=60
	log "tests on the $flavour kernel: $* (at most $limit s)"
	# prove's output is kept for the table of wall times at the end
	TERN_KERNEL=$flavour timeout -k 30 "$limit" prove --timer --recurse --verbose "$@" 2>&1 |
		tee "$TERN_OUT/prove-$flavour.log" || rc=$?
	# rc, wall seconds, what ran: read back by summarize
	echo "$rc $((SECONDS - t1)) $*" > "$TERN_OUT/half-$flavour"
}

# The debug half's files, slowest first as measured (Documentation/testing.rst, "Test files
# and what they cost"), so that the last ones to finish are short; files not named here run
# after these, in name order.
DEBUG_ORDER=(tests/guest/rdma.t tests/guest/faults.t tests/guest/ethernet.t tests/guest/storage.t
	tests/guest/verbs.t tests/guest/dcb.t tests/guest/cm.t tests/kunit/kunit.t)
pool() {	# pool FLAVOUR WHAT FILE...: one prove run per file, one file at a time while the
	# stock half runs ($TERN_OUT/stock-running exists), two at a time once it is done (a
	# cluster of two guests keeps about 1.3 of the 2 cores busy). Each file's output is
	# printed whole when it ends; prove-FLAVOUR.log holds them all, in the order they ended.
	local flavour=$1 what=$2 t1=$SECONDS rc=0 dir=$TERN_OUT/prove-$1.d i=0 f n width
	shift 2
	rm -rf "$dir" && mkdir -p "$dir"
	: > "$TERN_OUT/prove-$flavour.log"
	log "tests on the $flavour kernel, slowest first, two at a time once the stock half is done: $*"
	for f in "$@"; do
		i=$((i + 1))
		while :; do
			n=$(jobs -rp | wc -l)
			width=1
			[ -e "$TERN_OUT/stock-running" ] || width=2
			[ "$n" -lt "$width" ] && break
			sleep 2
		done
		n=$((deadline - SECONDS))
		[ "$n" -ge 60 ] || n=60
		(
			r=0
			TERN_KERNEL=$flavour timeout -k 30 "${TERN_PROVE_TIMEOUT:-$n}" \
				prove --timer --verbose "$f" > "$dir/$i.log" 2>&1 || r=$?
			echo "$r" > "$dir/$i.rc"
			# shellcheck disable=SC2016 # the inner shell expands them
			flock "$dir" sh -c 'cat "$1" >> "$2"; cat "$1"' sh "$dir/$i.log" \
				"$TERN_OUT/prove-$flavour.log"
		) &
	done
	wait
	for f in "$dir"/*.rc; do
		[ "$(cat "$f")" = 0 ] || rc=1
	done
	echo "$rc $((SECONDS - t1)) $what" > "$TERN_OUT/half-$flavour"
}

summary=() logs=() failed=0
summarize() {	# summarize FLAVOUR
	local rc=1 secs=0 what="(did not run)"
	[ -s "$TERN_OUT/half-$1" ] && read -r rc secs what < "$TERN_OUT/half-$1"
	logs+=("$1=$TERN_OUT/prove-$1.log@$secs")
	summary+=("$(printf '%-6s %-5s %5d s  %s' "$1" "$([ "$rc" = 0 ] && echo PASS ||
		echo "FAIL($rc)")" "$secs" "$what")")
	[ "$rc" = 0 ] || failed=1
}

rm -f "$TERN_OUT"/half-*
if [ $# -gt 0 ]; then
	flavour=stock
	[ "${TERN_KERNEL:-}" = debug ] && flavour=debug
	half "$flavour" "$@"
	summarize "$flavour"
else
	debug_dirs=(tests/guest)
	[ -d tests/kunit ] && debug_dirs+=(tests/kunit)
	mapfile -t found < <(find "${debug_dirs[@]}" -name '*.t' | sort)
	debug_tests=()
	for f in "${DEBUG_ORDER[@]}" "${found[@]}"; do
		case " ${found[*]} " in *" $f "*) ;; *) continue ;; esac
		case " ${debug_tests[*]} " in *" $f "*) continue ;; esac
		debug_tests+=("$f")
	done
	debug_out=$TERN_OUT/debug-half.log
	# Stopped (CI's limit, ^C): take the background half and its guests down too.
	trap 'trap - INT TERM; kill -TERM 0' INT TERM
	touch "$TERN_OUT/stock-running"
	(
		t1=$SECONDS
		# niced: a build has no deadline, the stock half's guests have timeouts
		if nice -n 10 "$TERN_TOP/scripts/build.sh" --debug; then
			log "builds for the debug half took $((SECONDS - t1)) s"
			pool debug "${debug_dirs[*]}" "${debug_tests[@]}"
		else
			echo "1 $((SECONDS - t1)) the debug kernel's build" > "$TERN_OUT/half-debug"
		fi
	) > "$debug_out" 2>&1 < /dev/null &
	debug_pid=$!
	log "the debug half (kernel build, then tests) runs beside the stock half: $debug_out"
	half stock tests/static tests/host tests/harness tests/guest tests/interop
	rm -f "$TERN_OUT/stock-running"
	log "stock half done; the debug half so far, then as it goes:"
	tail -n +1 --pid="$debug_pid" -f "$debug_out"
	wait "$debug_pid" || true
	summarize stock
	summarize debug
fi

python3 "$TERN_TOP/scripts/lib/test-times.py" $((SECONDS - t0)) "${logs[@]}" || true
echo "=== summary (logs of guest tests: $TERN_OUT/runs/) ==="
printf '%s\n' "${summary[@]}"
echo "total $((SECONDS - t0)) s: $([ $failed = 0 ] && echo PASS || echo FAIL)"
exit $failed
