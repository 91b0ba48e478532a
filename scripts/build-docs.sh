#!/usr/bin/env bash
# Build the manual (Documentation/, index.rst) into HTML with Debian's Sphinx (python3-sphinx):
#   scripts/build-docs.sh              -> $TERN_OUT/docs/html/index.html
# Warnings are errors (-W, --keep-going: every warning is reported before it fails) and so are
# broken cross-references (-n). The driver's interface pages take their text from the sources'
# kernel-doc comments through the kernel's scripts/kernel-doc, found in Debian's linux-source
# package (scripts/setup-host.sh installs it): an unpacked tree under $TERN_CACHE when there is
# one (scripts/build-debug-kernel.sh and scripts/check-kernel.sh leave one), else the script
# alone, taken once from /usr/src/linux-source-*.tar.xz into $TERN_CACHE/kernel-doc-<version>/.
# Extra arguments go to sphinx-build (e.g. -E to reread every page).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib/common.sh
. "$(dirname "$0")/lib/common.sh"

command -v sphinx-build >/dev/null ||
	die "sphinx-build not found: apt-get install python3-sphinx (scripts/setup-host.sh does)"

kernel_doc() {	# prints the path of scripts/kernel-doc, extracting it once if needed
	local tarball pkg ver dir tmp
	if [ -n "${TERN_KERNEL_DOC:-}" ]; then echo "$TERN_KERNEL_DOC"; return; fi
	tarball=${TERN_LINUX_SOURCE:-$(ls /usr/src/linux-source-*.tar.xz 2>/dev/null | sort -V | tail -n 1)}
	[ -r "$tarball" ] || die "no /usr/src/linux-source-*.tar.xz, whose scripts/kernel-doc the \
driver's API pages need: apt-get install linux-source-6.1 (scripts/setup-host.sh does)"
	pkg=$(basename "$tarball" .tar.xz)
	ver=$(dpkg-query -W -f='${Version}' "$pkg" 2>/dev/null) || ver=$(stat -c %Y "$tarball")
	if [ -f "$TERN_CACHE/linux-source-$ver/.complete" ]; then
		echo "$TERN_CACHE/linux-source-$ver/scripts/kernel-doc"
		return
	fi
	# scripts/check-kernel.sh's Kconfig extraction takes scripts/ too
	if [ -f "$TERN_CACHE/kconfig-$ver/scripts/kernel-doc" ]; then
		echo "$TERN_CACHE/kconfig-$ver/scripts/kernel-doc"
		return
	fi
	dir=$TERN_CACHE/kernel-doc-$ver
	if [ ! -f "$dir/scripts/kernel-doc" ]; then
		log "taking scripts/kernel-doc out of $tarball"
		tmp=$(mktemp -d "$dir.XXXXXX")	# another checkout may be doing the same
		tar -xJf "$tarball" -C "$tmp" --strip-components=1 --wildcards '*/scripts/kernel-doc'
		mv -T "$tmp" "$dir" 2>/dev/null || rm -rf "$tmp"	# the first one to finish wins
	fi
	echo "$dir/scripts/kernel-doc"
}

kd=$(kernel_doc)
[ -f "$kd" ] || die "kernel-doc not found at $kd"
out=$TERN_OUT/docs
mkdir -p "$out"
# -q: only warnings are printed; -d: the pickled environment beside the HTML, not in it
sphinx-build -b html -W --keep-going -n -q -d "$out/doctrees" \
	-D tern_kernel_doc="$kd" "$@" "$TERN_TOP/Documentation" "$out/html"
log "manual: $out/html/index.html"
