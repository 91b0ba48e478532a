#!/usr/bin/env bash
# Build everything the guests need: QEMU with the tern device, the kernel modules, the guest
# kernel and the initramfs; --debug for the debug kernel flavour instead (TERN_KERNEL=debug),
# --all for both. Heavy parts are cached under $TERN_CACHE (see scripts/lib/common.sh).
# The stock guests' tern modules and provider come from tern's Debian packages, as an admin
# installs them (scripts/build-packages.sh; TERN_GUEST_FROM_PACKAGES=0: from the checkout).
set -euo pipefail
. "$(dirname "$0")/lib/common.sh"

step() {
	local name=$1 t0=$SECONDS
	shift
	log "build: $name"
	"$@" || die "build step '$name' failed"
	log "build: $name done in $((SECONDS - t0)) s"
}

modules() {
	local kver
	kver=$(tern_kver)
	[ -n "$kver" ] || die "cannot resolve the guest kernel version (apt-get update?)"
	make -s -C "$TERN_TOP" KVER="$kver" modules >&2 || return
	mkdir -p "$TERN_OUT/modules"
	find "$TERN_TOP/drivers" -name '*.ko' -exec cp -f {} "$TERN_OUT/modules/" \;
}

# Our modules against the debug kernel's build tree, from a copy of the sources (so that the
# stock build's objects in the checkout stay as they are).
debug_modules() {
	local kdir src=$TERN_OUT/debug/src
	kdir=$("$TERN_TOP/scripts/build-debug-kernel.sh")
	# Objects built against another debug kernel (debug.config changed) look up to date to
	# kbuild (same source tree, same relative paths) but have that kernel's struct layouts,
	# and without MODVERSIONS nothing refuses them at load: start over when the kernel moves.
	if [ "$(cat "$src.kdir" 2>/dev/null)" != "$kdir" ]; then
		rm -rf "$src"
	fi
	mkdir -p "$src" "$TERN_OUT/debug/modules"
	echo "$kdir" > "$src.kdir"
	# Not the stock build's generated *.mod.c: they carry the stock kernel's symbol CRCs,
	# and one copied over ours gave the debug modules __versions that the debug kernel
	# (no MODVERSIONS) and depmod do not expect (tern_core_test lost its dependency).
	# Only files whose content changed are copied, with a new mtime: kbuild then rebuilds what
	# depends on them. (Copying with the sources' mtimes, as cpio -m did, left objects built
	# after a checkout's older mtime looking up to date: a header changed by a merge kept an
	# object with the old struct layout.)
	(cd "$TERN_TOP" && find Kbuild drivers include -type f \( -name '*.[ch]' -o -name Kbuild \
		-o -name Makefile \) ! -name '*.mod.c' -print0) |
		while IFS= read -r -d '' f; do
			cmp -s "$TERN_TOP/$f" "$src/$f" && continue
			mkdir -p "$src/$(dirname "$f")" && cp "$TERN_TOP/$f" "$src/$f"
		done
	find "$src" \( -name '*.ko' -o -name '*.mod.[co]' -o -name Module.symvers \) -delete
	timeout 1200 make -s -C "$kdir/build" M="$src" modules >&2 || return
	rm -f "$TERN_OUT/debug/modules/"*.ko
	find "$src/drivers" -name '*.ko' -exec cp -f {} "$TERN_OUT/debug/modules/" \;
}

# cifs.ko and ksmbd.ko with SMB Direct for the storage image (scripts/build-smbdirect.sh,
# cached). Without them (no linux-source of the guest kernel's version) the image is built
# without, and tests/guest/storage.t skips SMB Direct.
smbdirect() {
	"$TERN_TOP/scripts/build-smbdirect.sh" >/dev/null && return
	log "build: no SMB Direct modules; the storage image has the stock cifs and ksmbd"
	rm -f "$TERN_OUT/initramfs.d/storage-stock/smbdirect.list"
}

# The provider where Debian's libibverbs looks for it in the guests, straight from
# scripts/build-provider.sh's output (TERN_GUEST_FROM_PACKAGES=0).
provider_list() {
	local out=$TERN_OUT/provider list=$TERN_OUT/initramfs.d/tern-provider.list
	mkdir -p "$TERN_OUT/initramfs.d"
	{
		echo "# Written by scripts/build.sh: tern's libibverbs provider in the guests."
		echo "file $out/libtern-rdmav34.so /usr/lib/x86_64-linux-gnu/libibverbs/libtern-rdmav34.so"
		echo "file $out/tern.driver /etc/libibverbs.d/tern.driver"
	} > "$list.tmp"
	if cmp -s "$list.tmp" "$list"; then rm -f "$list.tmp"; else mv "$list.tmp" "$list"; fi
}

# test_programs DIR LIST: build tests/DIR's programs into $TERN_OUT/DIR and write the list
# (relative to $TERN_OUT/initramfs.d) that puts them into /usr/bin of the guest images.
# tests/rdma (built against the host's libibverbs): rdma-tests.list, every image of both
# flavours; tests/apps (Debian's mpicc): apps/mpi-tests.list, the apps image only.
test_programs() {
	local p dir=$1 list=$TERN_OUT/initramfs.d/$2
	make -s -C "$TERN_TOP/tests/$dir" O="$TERN_OUT/$dir" >&2
	mkdir -p "$(dirname "$list")"
	for p in $(make -s -C "$TERN_TOP/tests/$dir" names); do
		printf 'file %s /usr/bin/%s\nlib %s\n' "$TERN_OUT/$dir/$p" "$p" "$TERN_OUT/$dir/$p"
	done > "$list"
}

# tern-switch (model/fabric/tern-switch.c + the switch model model/fabric/switch.c): the
# fabric process that joins three or more guests (scripts/harness/fabric.py). Optimized and
# without sanitizers: it runs in real time next to the guests.
tern_switch() {
	local d=$TERN_TOP/model/fabric out=$TERN_OUT/tern-switch
	local warn=(-Wall -Wextra -Werror -Wshadow=local -Wmissing-prototypes -Wstrict-prototypes
		-Wvla -Wundef -Wold-style-definition -Wimplicit-fallthrough=2 -Wformat-security
		-Wpointer-arith -Wcast-qual -Wredundant-decls)
	if [ ! -f "$d/switch.c" ]; then
		log "tern-switch: model/fabric/switch.c does not exist yet: skipped"
		return 0
	fi
	if [ -x "$out" ] && [ "$out" -nt "$d/tern-switch.c" ] && [ "$out" -nt "$d/switch.c" ] &&
		[ "$out" -nt "$d/switch.h" ] && [ "$out" -nt "$TERN_TOP/model/lib/frame.h" ]; then
		return 0
	fi
	gcc -std=gnu11 -O2 -g "${warn[@]}" -I "$TERN_TOP/include" -I "$TERN_TOP/model/include" \
		-I "$d" -I "$TERN_TOP/model/lib" -o "$out.tmp" "$d/tern-switch.c" "$d/switch.c" \
		-lm || return
	mv "$out.tmp" "$out"
}

flavours=stock
[ "${TERN_KERNEL:-}" = debug ] && flavours=debug
for arg in "$@"; do
	case "$arg" in
	--debug) flavours=debug ;;
	--all) flavours="stock debug" ;;
	-h|--help) echo "usage: $0 [--debug | --all]  (stock kernel by default)"; exit 0 ;;
	*) die "unknown argument: $arg" ;;
	esac
done

step "host packages" "$TERN_TOP/scripts/setup-host.sh"
step "qemu" "$TERN_TOP/scripts/build-qemu.sh" >/dev/null
step "rdma test programs" test_programs rdma rdma-tests.list
step "MPI test programs" test_programs apps apps/mpi-tests.list
step "tern-switch" tern_switch
# The stock guests get tern's modules and provider from tern's Debian packages
# (scripts/build-packages.sh: the modules DKMS builds from tern-dkms for the guest kernel, the
# files of ibverbs-provider-tern); TERN_GUEST_FROM_PACKAGES=0 takes them from the checkout's
# build instead (make, scripts/build-provider.sh). The debug guests' modules are always built
# from the checkout against the debug kernel's tree.
from_packages=${TERN_GUEST_FROM_PACKAGES:-1}
for f in $flavours; do
	if [ "$f" = stock ]; then
		if [ "$from_packages" = 0 ]; then
			step "kernel modules" modules
		else
			step "packages; kernel modules from tern-dkms" \
				"$TERN_TOP/scripts/build-packages.sh" --guest >/dev/null
		fi
		step "guest kernel" "$TERN_TOP/scripts/guest-kernel.sh" >/dev/null
		step "provider" "$TERN_TOP/scripts/build-provider.sh" >/dev/null
		[ "$from_packages" != 0 ] || step "provider list" provider_list
		step "initramfs" "$TERN_TOP/scripts/mkinitramfs.sh" >/dev/null
		step "SMB Direct modules" smbdirect
		step "initramfs (storage)" "$TERN_TOP/scripts/mkinitramfs.sh" --image storage >/dev/null
		step "initramfs (apps)" "$TERN_TOP/scripts/mkinitramfs.sh" --image apps >/dev/null
	else
		step "debug kernel" "$TERN_TOP/scripts/build-debug-kernel.sh" >/dev/null
		step "kernel modules (debug)" debug_modules
		step "provider" "$TERN_TOP/scripts/build-provider.sh" >/dev/null
		if [ "$from_packages" = 0 ]; then
			step "provider list" provider_list
		else
			step "packages; provider from ibverbs-provider-tern" \
				"$TERN_TOP/scripts/build-packages.sh" --guest-provider >/dev/null
		fi
		step "initramfs (debug)" "$TERN_TOP/scripts/mkinitramfs.sh" --debug >/dev/null
		step "initramfs (debug, storage)" "$TERN_TOP/scripts/mkinitramfs.sh" --debug \
			--image storage >/dev/null
		step "initramfs (debug, apps)" "$TERN_TOP/scripts/mkinitramfs.sh" --debug \
			--image apps >/dev/null
	fi
done
