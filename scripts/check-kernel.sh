#!/usr/bin/env bash
# Static gates for tern's kernel code. Prints TAP (tests/static/kernel.t runs it under prove):
#   1  the modules build with W=1: no compiler, kernel-doc or modpost warning
#   2  sparse (C=2 CHECK=sparse) reports nothing
#   3  checkpatch.pl --no-tree --strict is clean on every kernel source and header we own
#      (drivers/**/*.[ch]: tern_core and tern_ib; include/tern/*.h; the uverbs ABI header
#      include/uapi/rdma/tern-abi.h)
# Gates 1 and 2 build every module the top-level Kbuild lists (drivers/net/ethernet/tern and
# drivers/infiniband/hw/tern), which compile the shared headers.
# The build runs on a scratch copy of the sources under $TERN_OUT/check-kernel, so every run
# compiles everything (W=1 only warns while compiling), in-place build outputs or concurrent
# builds in the checkout do not interfere, and nothing lands in the checkout.
# checkpatch.pl and its data files come from Debian's linux-source-6.1 tarball, extracted once
# into $TERN_CACHE/checkpatch-<package version>/.
# Exit status: 0 when every gate passes.
set -uo pipefail
. "$(dirname "$0")/lib/common.sh"

tarball=/usr/src/linux-source-6.1.tar.xz
work=$TERN_OUT/check-kernel
failed=0
n=0

ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=1; echo "not ok $n - $1"; }
# Print a file (or stdin) as TAP diagnostics.
diag() { sed 's/^/# /' "$@"; }

# Kernel sources and headers we own, relative to $TERN_TOP: files git knows about or would
# add (tracked or untracked, not ignored), so kbuild outputs such as *.mod.c never count.
owned_sources() {
	if git -C "$TERN_TOP" rev-parse --git-dir >/dev/null 2>&1; then
		git -C "$TERN_TOP" ls-files --cached --others --exclude-standard -- \
			'drivers/*.c' 'drivers/*.h' 'include/tern/*.h' \
			'include/uapi/rdma/tern-abi.h' |
			while read -r f; do [ -f "$TERN_TOP/$f" ] && echo "$f"; done
	else
		(cd "$TERN_TOP" && {
			find drivers include/tern -name '*.[ch]' ! -name '*.mod.c'
			ls include/uapi/rdma/tern-abi.h
		} | sort)
	fi
}

# Everything kbuild needs to build the modules, without any build output.
build_inputs() {
	if git -C "$TERN_TOP" rev-parse --git-dir >/dev/null 2>&1; then
		git -C "$TERN_TOP" ls-files --cached --others --exclude-standard -- \
			Kbuild Makefile scripts/lib/kver.sh 'drivers/*' 'include/*' |
			while read -r f; do [ -f "$TERN_TOP/$f" ] && echo "$f"; done
	else
		(cd "$TERN_TOP" && {
			echo Kbuild; echo Makefile; echo scripts/lib/kver.sh
			find drivers include -type f \( -name '*.[ch]' -o -name Kbuild \) ! -name '*.mod.c'
		})
	fi
}

checkpatch_dir() {
	local ver dir tmp
	ver=$(dpkg-query -W -f='${Version}' linux-source-6.1 2>/dev/null) ||
		ver=$(stat -c '%Y-%s' "$tarball" 2>/dev/null) || return 1
	dir=$TERN_CACHE/checkpatch-$ver
	if [ ! -f "$dir/checkpatch.pl" ]; then
		[ -f "$tarball" ] || return 1
		log "extracting checkpatch.pl from $tarball (once)"
		tmp=$(mktemp -d "$TERN_CACHE/checkpatch.XXXXXX") || return 1
		if ! tar -xJf "$tarball" -C "$tmp" --strip-components=2 \
			linux-source-6.1/scripts/checkpatch.pl \
			linux-source-6.1/scripts/spelling.txt \
			linux-source-6.1/scripts/const_structs.checkpatch; then
			rm -rf "$tmp"
			return 1
		fi
		rm -rf "$dir"
		mv "$tmp" "$dir" || { rm -rf "$tmp"; return 1; }
	fi
	echo "$dir"
}

# Extra checkpatch options for one file.
checkpatch_opts() {
	case $1 in
	include/tern/*.h)
		# These headers are shared with user space (rdma-core provider, device model):
		# BIT() does not exist there, and _Static_assert is the one static assertion both
		# sides have (checkpatch reads it as a CamelCase identifier).
		echo "--ignore BIT_MACRO,CAMELCASE"
		;;
	esac
}

kver=$("$TERN_TOP/scripts/lib/kver.sh")
kdir=/lib/modules/$kver/build
if [ -z "$kver" ] || [ ! -d "$kdir" ]; then
	printf '1..1\nnot ok 1 - kernel headers for %s (scripts/setup-host.sh installs them)\n' "$kver"
	exit 1
fi

echo "1..3"
log "check-kernel: building against $kver in $work"

# Scratch copy of the sources.
src=$work/src
rm -rf "$src"
mkdir -p "$src"
build_inputs | (cd "$TERN_TOP" && xargs -r cp --parents -t "$src") ||
	die "cannot copy the sources to $src"

# Gate 1: W=1 build.
if make -C "$kdir" M="$src" W=1 modules >"$work/build.log" 2>&1 &&
	! grep -Eiq '(warning|error):' "$work/build.log"; then
	ok "W=1 build against $kver"
else
	not_ok "W=1 build against $kver"
	grep -Ei '(warning|error)' "$work/build.log" | diag
	echo "# full log: $work/build.log"
fi

# Gate 2: sparse on every source file (C=2 checks without recompiling).
if ! command -v sparse >/dev/null; then
	not_ok "sparse # sparse is not installed"
elif make -C "$kdir" M="$src" C=2 CHECK=sparse modules >"$work/sparse.log" 2>&1 &&
	! grep -Eiq '(warning|error):' "$work/sparse.log"; then
	ok "sparse (C=2)"
else
	not_ok "sparse (C=2)"
	grep -Ei '(warning|error)' "$work/sparse.log" | diag
	echo "# full log: $work/sparse.log"
fi

# Gate 3: checkpatch. It runs outside the checkout (it would drop a CamelCase cache file in
# its working directory) with an empty --root, as it has no kernel tree to look at.
if ! cpdir=$(checkpatch_dir); then
	not_ok "checkpatch --strict # cannot extract checkpatch.pl from $tarball"
else
	cproot=$work/checkpatch-root
	mkdir -p "$cproot/include"
	bad=()
	: >"$work/checkpatch.log"
	while read -r f; do
		# shellcheck disable=SC2046 # word splitting of the options is intended
		if ! out=$(cd "$cproot" && env -u GIT_DIR perl "$cpdir/checkpatch.pl" --no-tree \
			--strict --root="$cproot" --quiet --show-types $(checkpatch_opts "$f") \
			-f "$TERN_TOP/$f" 2>&1) || [ -n "$out" ]; then
			bad+=("$f")
			printf '%s\n' "$out" >>"$work/checkpatch.log"
		fi
	done < <(owned_sources)
	if [ ${#bad[@]} -eq 0 ]; then
		ok "checkpatch --strict"
	else
		not_ok "checkpatch --strict (${#bad[@]} files: ${bad[*]})"
		diag "$work/checkpatch.log"
	fi
fi

exit $failed
