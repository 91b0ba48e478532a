#!/usr/bin/env bash
# Build tern's libibverbs provider (providers/tern) inside rdma-core's source tree.
#
# Usage: scripts/build-provider.sh        (no arguments; prints the provider's path)
#
# Debian 12 ships libibverbs 44, but bookworm's rdma-core 44 orig tarball is gone from the
# archive; trixie's rdma-core (56.1 today, resolved at build time) has the same provider ABI
# (IBVERBS_PRIVATE_34, -rdmav34.so), so the provider is built in that tree and loads into
# Debian 12's libibverbs as long as it only uses interfaces both have (see
# Documentation/admin/provider.rst and tests/static/provider.t).
#
# The provider is built from exactly the rdma-core patch that scripts/upstream/generate.py
# makes (providers/tern with the device headers it needs, kernel-headers/rdma/tern-abi.h, the
# CMake lists that name them): rdma-core's own build, with no tern-specific variable.
# rdma-core's source is unpacked once into $TERN_CACHE/rdma-core-<version>-<hash>/ (<hash>
# covers patch_tree below), with Debian's patches, and committed to git there, so that its
# HEAD is the pristine tree the patch is made against; it is configured once. Every run
# regenerates the patch ($TERN_OUT/upstream/rdma-core/), copies the files it adds or changes
# into the tree (only those that differ) and runs `ninja tern-rdmav34` (the configured tree
# names no tern checkout, so checkouts and the package build of scripts/build-packages.sh
# share it without configuring it again).
#
# Output ($TERN_OUT, build/ by default):
#   provider/libtern-rdmav34.so   the provider
#   provider/tern.driver          "driver tern", for /etc/libibverbs.d/
# (scripts/build.sh puts them into the guests, from the ibverbs-provider-tern package by
# default: scripts/build-packages.sh)
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib/common.sh
. "$(dirname "$0")/lib/common.sh"
# git runs on rdma-core's tree below, never on a repository the environment names
unset GIT_DIR GIT_WORK_TREE

SUITE=trixie
PABI=34

# The source version of rdma-core in $SUITE, from apt's deb-src index (never hard-coded).
resolve_version() {
	apt-cache madison rdma-core 2>/dev/null |
		awk -F'|' -v s="$SUITE" '$3 ~ ("[[:space:]]" s "/") && $3 ~ /Sources/ \
			{ gsub(/[[:space:]]/, "", $2); print $2; exit }'
}

# Makes the unpacked rdma-core tree ($1) the pristine base of tern's patch. Its text is
# hashed into the cache directory's name: edit it and the next run starts from a fresh tree.
patch_tree() {
	local tree=$1 series
	# Debian's own patches, so that the tree is rdma-core as Debian ships it.
	series=$tree/debian/patches/series
	if [ -f "$series" ]; then
		grep -v '^[[:space:]]*\(#\|$\)' "$series" | while read -r p _; do
			patch -d "$tree" -p1 -s -N < "$tree/debian/patches/$p" ||
				die "Debian patch $p does not apply"
		done
	fi
	git -C "$tree" init -q || die "git init in $tree failed"
	# build/ is where the provider is built; .patched marks a finished tree.
	printf '/build/\n/.patched\n' >> "$tree/.git/info/exclude"
	git -C "$tree" add -A &&
		git -C "$tree" -c user.name=tern -c user.email=tern@localhost \
			commit -q -m "rdma-core as Debian ships it" ||
		die "cannot commit the pristine rdma-core tree"
}

# Copy $1 to $2 only when it differs, so that ninja rebuilds only what changed.
sync_file() {
	cmp -s "$1" "$2" 2>/dev/null && return 0
	mkdir -p "$(dirname "$2")"
	cp -f "$1" "$2"
}

ver=$(resolve_version)
[ -n "$ver" ] || die "no rdma-core source in $SUITE (run scripts/setup-host.sh: deb-src entries)"
upver=${ver#*:}
upver=${upver%-*}
hash=$(declare -f patch_tree | sha256sum | cut -c1-12)
tree=$TERN_CACHE/rdma-core-$upver-$hash
bdir=$tree/build

exec 9> "$TERN_CACHE/rdma-core.lock"
flock 9

if [ ! -f "$tree/.patched" ]; then
	log "provider: fetching rdma-core $ver source ($SUITE)"
	dl=$(mktemp -d "$TERN_CACHE/rdma-core-dl.XXXXXX")
	trap 'rm -rf "$dl"' EXIT
	# The .dsc may 404 while the tarballs are there: download, then check what arrived.
	(cd "$dl" && apt-get source -q --download-only "rdma-core=$ver" >/dev/null 2>&1) || true
	orig=$dl/rdma-core_$upver.orig.tar.gz
	[ -s "$orig" ] || die "rdma-core_$upver.orig.tar.gz did not download (apt-get update?)"
	rm -rf "$tree" "$tree.tmp"
	mkdir -p "$tree.tmp"
	tar -xzf "$orig" -C "$tree.tmp" --strip-components=1
	debs=("$dl"/rdma-core_"${ver#*:}".debian.tar.*)
	if [ -f "${debs[0]}" ]; then
		tar -xf "${debs[0]}" -C "$tree.tmp"
	else
		log "provider: no Debian tarball for $ver; building the upstream tree unpatched"
	fi
	patch_tree "$tree.tmp"
	touch "$tree.tmp/.patched"
	mv "$tree.tmp" "$tree"
	rm -rf "$dl"
	trap - EXIT
fi

# The rdma-core patch, every run, and the files it adds or changes into the tree.
gen=$TERN_OUT/upstream/rdma-core
python3 "$TERN_TOP/scripts/upstream/generate.py" rdma-core --tree "$tree" --out "$gen" >/dev/null ||
	die "scripts/upstream/generate.py rdma-core failed"
while IFS= read -r -d '' f; do
	sync_file "$f" "$tree/${f#"$gen/files/"}"
done < <(find "$gen/files" -type f -print0)
# providers/tern files the patch no longer has
for f in "$tree"/providers/tern/*; do
	[ -f "$gen/files/providers/tern/$(basename "$f")" ] || rm -f "$f"
done

if [ ! -f "$bdir/build.ninja" ]; then
	log "provider: configuring rdma-core $upver"
	mkdir -p "$bdir"
	(cd "$bdir" && nice cmake -GNinja -DNO_MAN_PAGES=1 -DNO_PYVERBS=1 \
		-DENABLE_RESOLVE_NEIGH=0 -DENABLE_VALGRIND=0 -DENABLE_STATIC=0 \
		-DCMAKE_SKIP_RPATH=ON .. >cmake.log 2>&1) ||
		{ tail -n 30 "$bdir/cmake.log" >&2; die "rdma-core configure failed ($bdir/cmake.log)"; }
fi

log "provider: ninja tern-rdmav$PABI"
nice ninja -C "$bdir" -j 2 "tern-rdmav$PABI" >&2 || die "provider build failed"

so=$(find "$bdir/lib" -name "libtern-rdmav$PABI.so" | head -n 1)
[ -n "$so" ] || die "ninja built no libtern-rdmav$PABI.so"
out=$TERN_OUT/provider
mkdir -p "$out"
sync_file "$so" "$out/libtern-rdmav$PABI.so"
echo "driver tern" > "$out/tern.driver.tmp"
sync_file "$out/tern.driver.tmp" "$out/tern.driver"
rm -f "$out/tern.driver.tmp"
# The rdma-core tree, for tests that compile against its headers.
echo "$tree" > "$out/rdma-core-tree"
echo "$out/libtern-rdmav$PABI.so"
