#!/usr/bin/env bash
# Fetch Debian's stock kernel for the guests without installing it on the host.
# Usage: scripts/guest-kernel.sh        prints the root dir ($TERN_CACHE/kernel/$KVER)
# The root holds boot/vmlinuz-$KVER and lib/modules/$KVER (depmod'ed). Cached: a second run
# only checks a stamp file.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib/common.sh
. "$(dirname "$0")/lib/common.sh"

kver=$(tern_kver)
[ -n "$kver" ] || die "cannot resolve the kernel ABI (apt-cache depends linux-image-amd64)"
root=$TERN_CACHE/kernel/$kver
stamp=$root/.complete

if [ ! -f "$stamp" ]; then
	exec 9> "$TERN_CACHE/kernel.lock"
	flock 9
fi
if [ ! -f "$stamp" ]; then
	log "fetching linux-image-$kver into $root"
	tmp=$(mktemp -d "$TERN_CACHE/kernel-dl.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	(cd "$tmp" && apt-get download -q "linux-image-$kver" >/dev/null) ||
		die "apt-get download linux-image-$kver failed (try: apt-get update)"
	deb=$(ls "$tmp"/linux-image-"$kver"_*.deb)
	rm -rf "$root"
	mkdir -p "$tmp/root"
	dpkg -x "$deb" "$tmp/root"
	[ -f "$tmp/root/boot/vmlinuz-$kver" ] || die "no boot/vmlinuz-$kver in $deb"
	depmod -b "$tmp/root" "$kver"
	basename "$deb" > "$tmp/root/.deb"
	mkdir -p "$(dirname "$root")"
	mv "$tmp/root" "$root"
	touch "$stamp"
	log "guest kernel ready"
fi
echo "$root"
