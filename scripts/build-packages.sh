#!/usr/bin/env bash
# Build tern's Debian packages with Debian's tooling (dpkg-buildpackage, debhelper, dh-dkms):
#   $TERN_OUT/packages/tern-dkms_<ver>_all.deb                tern_core.ko and tern_ib.ko for DKMS
#   $TERN_OUT/packages/ibverbs-provider-tern_<ver>_amd64.deb  libtern-rdmav34.so, tern.driver
#   (and ibverbs-provider-tern-dbgsym_<ver>_amd64.deb, the provider's debug symbols)
# The packaging is packaging/debian/; <ver> is dkms.conf's PACKAGE_VERSION, which
# packaging/debian/changelog must match (a native package: the packaging lives upstream).
# The deb paths are printed, one a line.
#
# --guest: also put what the packages install into the guests (scripts/build.sh does, unless
# TERN_GUEST_FROM_PACKAGES=0), as an admin's `apt install` would:
#   --guest-modules   the modules that DKMS builds from tern-dkms for the stock guest kernel
#                     (`dkms build -k <guest kernel>` in a private DKMS tree, so the host's own
#                     DKMS state is not touched), into $TERN_OUT/modules/
#   --guest-provider  the provider unpacked from ibverbs-provider-tern (dpkg -x), named in
#                     $TERN_OUT/initramfs.d/tern-provider.list at the paths the package
#                     installs (both kernel flavours' guests)
#   --guest           both
#
# The tree is copied (files git knows or would add) with packaging/debian as debian/ into
# $TERN_OUT/packages/work/tern-<ver>/ and built there; nothing is written into the checkout.
# Nothing is rebuilt when the inputs did not change (their contents and the tools' versions are
# hashed), so a second run takes about a second.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib/common.sh
. "$(dirname "$0")/lib/common.sh"

guest_modules=0 guest_provider=0
for arg in "$@"; do
	case "$arg" in
	--guest) guest_modules=1 guest_provider=1 ;;
	--guest-modules) guest_modules=1 ;;
	--guest-provider) guest_provider=1 ;;
	-h|--help) sed -n '2,24p' "$0"; exit 0 ;;
	*) die "unknown argument: $arg" ;;
	esac
done

cd "$TERN_TOP"
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' dkms.conf)
[ -n "$ver" ] || die "no PACKAGE_VERSION in dkms.conf"
chver=$(dpkg-parsechangelog -l packaging/debian/changelog -S Version)
[ "$chver" = "$ver" ] ||
	die "packaging/debian/changelog says $chver, dkms.conf says $ver: make them one version"
arch=$(dpkg --print-architecture)
pkgs=$TERN_OUT/packages
work=$pkgs/work
dkms_deb=$pkgs/tern-dkms_${ver}_all.deb
prov_deb=$pkgs/ibverbs-provider-tern_${ver}_$arch.deb

# The tree's files the packages are built from (not packaging/: it becomes debian/).
inputs() {
	local spec=(Makefile Kbuild dkms.conf scripts/lib/kver.sh scripts/lib/common.sh
		scripts/build-provider.sh scripts/upstream/generate.py 'drivers/*' 'include/*'
		'providers/tern/*')
	if git rev-parse --git-dir >/dev/null 2>&1; then
		git ls-files --cached --others --exclude-standard -- "${spec[@]}" |
			while read -r f; do [ -f "$f" ] && echo "$f"; done
	else
		find Makefile Kbuild dkms.conf scripts/lib/kver.sh scripts/lib/common.sh \
			scripts/build-provider.sh scripts/upstream/generate.py drivers include \
			providers/tern -type f \
			! -name '*.o' ! -name '*.ko' ! -name '*.mod*' ! -name '.*' \
			! -name Module.symvers ! -name modules.order
	fi | LC_ALL=C sort
}

mkdir -p "$pkgs"
exec 9> "$pkgs.lock"
timeout 900 flock 9 || die "timed out waiting for $pkgs.lock"

files=$(inputs)
key=$({
	echo "$files"
	# shellcheck disable=SC2086 # one file a line, no spaces in our paths
	cat $files
	find packaging/debian -type f | LC_ALL=C sort | xargs cat
	dpkg-query -W debhelper dh-dkms dpkg-dev libibverbs-dev
	# the rdma-core source the provider is built in (scripts/build-provider.sh)
	apt-cache madison rdma-core 2>/dev/null | grep Sources || true
} | sha256sum | cut -c1-32)

if [ "$(cat "$pkgs/packages.key" 2>/dev/null)" != "$key" ] || [ ! -f "$dkms_deb" ] ||
   [ ! -f "$prov_deb" ]; then
	log "packages: building tern $ver with dpkg-buildpackage"
	rm -rf "$work" "$pkgs"/*.deb "$pkgs/packages.key"
	src=$work/tern-$ver
	mkdir -p "$src"
	# shellcheck disable=SC2086
	printf '%s\n' $files | cpio -pdm --quiet "$src"
	cp -r packaging/debian "$src/debian"
	t0=$SECONDS
	(cd "$src" && nice dpkg-buildpackage -b -us -uc -j2 > "$work/build.log" 2>&1) ||
		{ tail -n 40 "$work/build.log" >&2; die "dpkg-buildpackage failed ($work/build.log)"; }
	mv "$work"/*.deb "$pkgs/"
	[ -f "$dkms_deb" ] && [ -f "$prov_deb" ] ||
		die "dpkg-buildpackage made no $(basename "$dkms_deb") or $(basename "$prov_deb")"
	echo "$key" > "$pkgs/packages.key"
	log "packages: built in $((SECONDS - t0)) s"
fi

# --- the stock guests' tern files, from the packages -----------------------------------------
# Copy $1 to $2 only when it differs (mkinitramfs.sh rebuilds when an input's mtime moves).
sync_file() {
	cmp -s "$1" "$2" 2>/dev/null && return 0
	mkdir -p "$(dirname "$2")"
	cp -f "$1" "$2"
}

g=$pkgs/guest

guest_modules() {
	local kver dkey tree mod ko
	kver=$(tern_kver)
	[ -n "$kver" ] || die "cannot resolve the guest kernel version (apt-get update?)"
	[ -d "/lib/modules/$kver/build" ] ||
		die "no headers for the guest kernel $kver (linux-headers-amd64: scripts/setup-host.sh)"
	dkey=$({ sha256sum "$dkms_deb"; echo "$kver"; dpkg-query -W dkms; } | sha256sum |
		cut -c1-32)
	tree=$g/dkms
	mod=$tree/tern/$ver/$kver/$(uname -m)/module
	if [ "$(cat "$g/dkms.key" 2>/dev/null)" != "$dkey" ] || [ ! -f "$mod/tern_ib.ko" ]; then
		log "packages: dkms build of tern-dkms for the guest kernel $kver"
		rm -rf "$g/dkms-root" "$tree" "$g/dkms.key"
		mkdir -p "$g/dkms-root" "$tree"
		dpkg -x "$dkms_deb" "$g/dkms-root"
		# A private DKMS tree: the host's /var/lib/dkms and /lib/modules stay as they are.
		dkms build -m tern -v "$ver" -k "$kver" --dkmstree "$tree" \
			--sourcetree "$g/dkms-root/usr/src" --installtree "$g/install" \
			> "$g/dkms.log" 2>&1 ||
			{ tail -n 40 "$g/dkms.log" >&2; cat "$tree/tern/$ver/build/make.log" >&2 || true
			  die "dkms build of tern $ver for $kver failed ($g/dkms.log)"; }
		[ -f "$mod/tern_core.ko" ] && [ -f "$mod/tern_ib.ko" ] ||
			die "dkms built no tern_core.ko and tern_ib.ko under $mod"
		echo "$dkey" > "$g/dkms.key"
	fi
	mkdir -p "$TERN_OUT/modules"
	for ko in "$TERN_OUT"/modules/*.ko; do
		[ -f "$mod/$(basename "$ko")" ] || rm -f "$ko"
	done
	for ko in "$mod"/*.ko; do
		sync_file "$ko" "$TERN_OUT/modules/$(basename "$ko")"
	done
}

guest_provider() {
	# The provider as the package installs it; the list names every file it ships but the
	# docs, at the same path (scripts/mkinitramfs.sh's list format).
	rm -rf "$g/provider-root.tmp"
	mkdir -p "$g/provider-root.tmp"
	dpkg -x "$prov_deb" "$g/provider-root.tmp"
	if diff -r "$g/provider-root.tmp" "$g/provider-root" >/dev/null 2>&1; then
		rm -rf "$g/provider-root.tmp"
	else
		rm -rf "$g/provider-root"
		mv "$g/provider-root.tmp" "$g/provider-root"
	fi
	mkdir -p "$TERN_OUT/initramfs.d"
	{
		echo "# Written by scripts/build-packages.sh --guest: the files of"
		echo "# $(basename "$prov_deb") (dpkg -x), where the package installs them."
		(cd "$g/provider-root" && find . -type f ! -path './usr/share/doc/*' | LC_ALL=C sort) |
			while read -r f; do echo "file $g/provider-root/${f#./} /${f#./}"; done
	} > "$g/tern-provider.list"
	sync_file "$g/tern-provider.list" "$TERN_OUT/initramfs.d/tern-provider.list"
}
[ $guest_modules = 0 ] || guest_modules
[ $guest_provider = 0 ] || guest_provider

ls "$pkgs"/*.deb
