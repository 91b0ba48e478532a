#!/usr/bin/env bash
# Static gates for tern's kernel code. Prints TAP (tests/static/kernel.t runs it under prove):
#   1  the modules build with W=1: no compiler, kernel-doc or modpost warning
#   2  sparse (C=2 CHECK=sparse) reports nothing
#   3  checkpatch.pl --no-tree --strict is clean on every kernel source and header we own
#      (drivers/**/*.[ch] and the Kconfig files: tern_core and tern_ib; include/linux/tern/*.h;
#      the uverbs ABI header include/uapi/rdma/tern-abi.h)
#   4  the driver folders drop into a kernel source tree as they are: with their Kconfig files
#      sourced from drivers/net/ethernet/Kconfig and drivers/infiniband/Kconfig, Debian's own
#      configuration plus TERN_CORE=m, INFINIBAND_TERN=m resolves (kconfig's conf from
#      linux-kbuild-6.1, olddefconfig) to both modules; without rdma_cm's address
#      translation, or without tern_core, to no tern_ib: the dependencies are the code's
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
			'drivers/*.c' 'drivers/*.h' 'drivers/*/Kconfig' 'include/linux/tern/*.h' \
			'include/uapi/rdma/tern-abi.h' |
			while read -r f; do [ -f "$TERN_TOP/$f" ] && echo "$f"; done
	else
		(cd "$TERN_TOP" && {
			find drivers include/linux/tern \( -name '*.[ch]' -o -name Kconfig \) ! -name '*.mod.c'
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

# Files from Debian's linux-source-6.1 tarball, extracted once into
# $TERN_CACHE/<name>-<package version>/ and kept there; prints that directory.
#   $1 name, $2 a file whose presence marks a finished extraction, $3 what it is (for the
#   log), then tar's arguments: --strip-components and the members
source_extract() {
	local name=$1 marker=$2 what=$3 ver dir tmp
	shift 3
	ver=$(dpkg-query -W -f='${Version}' linux-source-6.1 2>/dev/null) ||
		ver=$(stat -c '%Y-%s' "$tarball" 2>/dev/null) || return 1
	dir=$TERN_CACHE/$name-$ver
	if [ ! -f "$dir/$marker" ]; then
		[ -f "$tarball" ] || return 1
		log "extracting $what from $tarball (once)"
		tmp=$(mktemp -d "$TERN_CACHE/$name.XXXXXX") || return 1
		if ! tar -xJf "$tarball" -C "$tmp" "$@"; then
			rm -rf "$tmp"
			return 1
		fi
		rm -rf "$dir"
		mv "$tmp" "$dir" || { rm -rf "$tmp"; return 1; }
	fi
	echo "$dir"
}

checkpatch_dir() {
	source_extract checkpatch checkpatch.pl checkpatch.pl --strip-components=2 \
		linux-source-6.1/scripts/checkpatch.pl \
		linux-source-6.1/scripts/spelling.txt \
		linux-source-6.1/scripts/const_structs.checkpatch
}

# The kernel's Kconfig files and the scripts they call (about 12 s to extract).
kconfig_dir() {
	source_extract kconfig Kconfig "the Kconfig files" --strip-components=1 --wildcards \
		'linux-source-6.1/*Kconfig*' 'linux-source-6.1/scripts/*'
}

# Run kconfig's olddefconfig in kernel tree $1 on config file $2.
kconfig_resolve() {
	(cd "$1" && env srctree=. SRCARCH=x86 ARCH=x86_64 CC=gcc LD=ld HOSTCC=gcc \
		KERNELVERSION="$kver" KCONFIG_CONFIG="$2" "$conf" --olddefconfig Kconfig) \
		>>"$work/kconfig.log" 2>&1
}

# Extra checkpatch options for one file.
checkpatch_opts() {
	case $1 in
	include/linux/tern/*.h)
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

echo "1..4"
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
# its working directory) with an empty --root, as it has no kernel tree to look at. The files
# are named by their path in a kernel tree (links to ours), as in a patch: checkpatch's
# subsystem rules go by that path (drivers/net/ and net/ have their own comment style).
if ! cpdir=$(checkpatch_dir); then
	not_ok "checkpatch --strict # cannot extract checkpatch.pl from $tarball"
else
	cproot=$work/checkpatch-root
	rm -rf "$cproot"
	mkdir -p "$cproot/include/uapi" "$cproot/include/linux"
	ln -sfn "$TERN_TOP/drivers" "$cproot/drivers"
	ln -sfn "$TERN_TOP/include/linux/tern" "$cproot/include/linux/tern"
	ln -sfn "$TERN_TOP/include/uapi/rdma" "$cproot/include/uapi/rdma"
	bad=()
	: >"$work/checkpatch.log"
	while read -r f; do
		# shellcheck disable=SC2046 # word splitting of the options is intended
		if ! out=$(cd "$cproot" && env -u GIT_DIR perl "$cpdir/checkpatch.pl" --no-tree \
			--strict --root="$cproot" --quiet --show-types $(checkpatch_opts "$f") \
			-f "$f" 2>&1) || [ -n "$out" ]; then
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

# Gate 4: Kconfig, in a scratch kernel tree made of the kernel's Kconfig files and ours.
conf=/usr/lib/linux-kbuild-6.1/scripts/kconfig/conf
tree=$work/kconfig
if [ ! -x "$conf" ]; then
	not_ok "Kconfig # $conf is missing (linux-kbuild-6.1, installed with the headers)"
elif ! kcdir=$(kconfig_dir); then
	not_ok "Kconfig # cannot extract the Kconfig files from $tarball"
else
	rm -rf "$tree" && cp -a "$kcdir" "$tree" && : >"$work/kconfig.log"
	(cd "$TERN_TOP" && cp --parents -t "$tree" drivers/net/ethernet/tern/Kconfig \
		drivers/infiniband/hw/tern/Kconfig)
	sed -i 's|^endif # ETHERNET|source "drivers/net/ethernet/tern/Kconfig"\n&|' \
		"$tree/drivers/net/ethernet/Kconfig"
	sed -i '0,/^source "drivers\/infiniband\/hw\//s||source "drivers/infiniband/hw/tern/Kconfig"\n&|' \
		"$tree/drivers/infiniband/Kconfig"
	{ cat "$kdir/.config"; printf 'CONFIG_TERN_CORE=m\nCONFIG_INFINIBAND_TERN=m\n'; } \
		>"$tree/both.config"
	# without rdma_cm's address translation, and without tern_core: no tern_ib
	{ grep -v '^CONFIG_INFINIBAND_ADDR_TRANS=' "$tree/both.config"
	  echo '# CONFIG_INFINIBAND_ADDR_TRANS is not set'; } >"$tree/no-cm.config"
	{ grep -v '^CONFIG_TERN_CORE=' "$tree/both.config"
	  echo '# CONFIG_TERN_CORE is not set'; } >"$tree/no-core.config"
	want() { grep -qx "$1" "$tree/$2" || echo "$2: no $1"; }
	never() { ! grep -q "^$1=" "$tree/$2" || echo "$2: $1 all the same"; }
	if ! kconfig_resolve "$tree" both.config || ! kconfig_resolve "$tree" no-cm.config ||
		! kconfig_resolve "$tree" no-core.config; then
		not_ok "Kconfig: conf --olddefconfig failed"
		diag "$work/kconfig.log"
	elif why=$(want CONFIG_NET_VENDOR_TERN=y both.config
		   want CONFIG_TERN_CORE=m both.config
		   want CONFIG_INFINIBAND_TERN=m both.config
		   want CONFIG_TERN_CORE=m no-cm.config
		   never CONFIG_INFINIBAND_TERN no-cm.config
		   never CONFIG_INFINIBAND_TERN no-core.config
		   grep -i 'warning' "$work/kconfig.log"
		   true) && [ -z "$why" ]; then
		ok "Kconfig: TERN_CORE and INFINIBAND_TERN in Debian's $kver configuration"
	else
		not_ok "Kconfig: TERN_CORE and INFINIBAND_TERN in Debian's $kver configuration"
		printf '%s\n' "$why" | diag
	fi
fi

exit $failed
